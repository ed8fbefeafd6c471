"""The PostgreSQL rendering of rule conditions (see :mod:`compiler`).

psycopg 3 placeholders (``%s``, so no other ``%`` appears in the text).
NUMBER is ``numeric``, DATE ``timestamp``, RAW ``bytea``; text ordering uses
``COLLATE "C"`` (code point order, as Python).  No user functions: every
conversion that could raise is guarded (a regex before a cast, NULLIF before a
division), because a raised error would abort the whole query.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ....sqlfunctions import VARCHAR2_MAX
from ..typed.dates import oracle_to_pg_format
from ..typed.ir import Const, Node, NotCompilable, Op
from .base import Frag, SqlRenderer, join, sql

__all__ = ["PostgresRenderer"]

# Python's to_number accepts exactly this (functions._NUMBER_TEXT); \s and \d spelled out in ASCII
_NUMBER_RE = r"^[ \t\n\r\f\v]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,4})?[ \t\n\r\f\v]*$"
_HEX_RE = "^[0-9A-Fa-f]*$"
_INT = 2147483647

_PG_TYPES = {"NUMBER": "numeric", "CHAR": "text", "DATE": "timestamp", "RAW": "bytea", "BOOL": "boolean"}


class PostgresRenderer(SqlRenderer):
    target = "PostgreSQL"
    mark = "%s"

    def const(self, node: Const) -> Frag:
        if node.value is None:
            return ("NULL::" + _PG_TYPES[node.kind]) if node.kind in _PG_TYPES else "NULL", ()
        if node.kind == "BOOL":
            return ("TRUE" if node.value else "FALSE"), ()
        value = node.value
        if isinstance(value, float):
            value = Decimal(repr(value))
        return self.param(value)[0] + "::" + _PG_TYPES[node.kind], (value,)

    def op_cmp(self, n: Op) -> Frag:
        a, b = self.args(n)
        if n.args[0].kind == "CHAR" and n.extra[0] not in ("=", "<>"):
            return sql("({} " + n.extra[0] + ' {} COLLATE "C")', a, b)  # code point order
        return sql("({} " + n.extra[0] + " {})", a, b)

    def op_nullif_empty(self, n: Op) -> Frag:
        return sql("NULLIF({}, " + ("''" if n.kind == "CHAR" else "''::bytea") + ")", self.r(n.args[0]))

    def op_div(self, n: Op) -> Frag:
        return sql("(CAST({} AS numeric) / NULLIF({}, 0))", *self.args(n))

    def op_like(self, n: Op) -> Frag:
        pattern, escape = n.extra
        return sql("({} LIKE {} ESCAPE {})", self.r(n.args[0]), self.param(pattern), self.param(escape or ""))

    def op_like_dyn(self, n: Op) -> Frag:
        value, pattern = self.args(n)[:2]
        if len(n.args) == 2:
            return sql("({} LIKE {} ESCAPE '')", value, pattern)
        # a pattern Oracle refuses would make PostgreSQL raise: give it NULL instead
        safe = sql("CASE WHEN {} THEN NULL ELSE {} END", self.op_like_bad(n, n.args[1:]), pattern)
        return sql("({} LIKE {} ESCAPE {})", value, safe, self.r(n.args[2]))

    def op_like_bad(self, n: Op, args: tuple[Node, ...] | None = None) -> Frag:
        pattern, escape = args or n.args
        if not isinstance(escape, Const):
            raise NotCompilable("LIKE with a run-time ESCAPE character")
        e = re.escape(escape.value)  # a backslash escape works in and out of brackets in AREs
        valid = f"^([^{e}]|{e}[%_{e}])*$"
        return sql("({} !~ {})", self.r(pattern), self.param(valid))

    def op_num_of_char(self, n: Op) -> Frag:
        a = self.r(n.args[0])
        return sql("CASE WHEN {} ~ {} THEN CAST({} AS numeric) END", a, self.param(_NUMBER_RE), a)

    def op_num_bad(self, n: Op) -> Frag:
        return sql("({} !~ {})", self.r(n.args[0]), self.param(_NUMBER_RE))

    def op_char_of_num(self, n: Op) -> Frag:
        # Oracle's TO_CHAR(n): trim_scale drops trailing zeros, and '0.5' is written '.5'
        return sql("regexp_replace(CAST(trim_scale(CAST({} AS numeric)) AS text), {}, {})",
                   self.r(n.args[0]), self.param(r"^(-?)0\."), self.param(r"\1."))

    def op_char_of_date(self, n: Op) -> Frag:
        return sql("to_char({}, {})", self.r(n.args[0]), self.param("DD-MON-YY"))

    def op_char_of_raw(self, n: Op) -> Frag:
        return sql("upper(encode({}, 'hex'))", self.r(n.args[0]))

    def op_raw_of_char(self, n: Op) -> Frag:
        a = self.r(n.args[0])
        even = sql("CASE WHEN mod(length({}), 2) = 1 THEN '0' || {} ELSE {} END", a, a, a)
        return sql("CASE WHEN {} ~ {} THEN decode({}, 'hex') END", a, self.param(_HEX_RE), even)

    def op_raw_bad(self, n: Op) -> Frag:
        return sql("({} !~ {})", self.r(n.args[0]), self.param(_HEX_RE))

    def op_date_of_iso(self, n: Op) -> Frag:
        return sql("CAST({} AS timestamp)", self.r(n.args[0]))

    def op_date_add(self, n: Op) -> Frag:
        # A result outside 0001..9999 is ORA-01841 (the error flag says so, lower.py), but
        # PostgreSQL must not compute it: past its own range (4713 BC) it aborts the query, and
        # Python skips what the flag does not (NULL <= d - 3000000 never reaches the date).  So
        # the date is NULL outside 0001..9999; and the planner folds a constant day count into
        # an interval before any CASE applies, so only counts of at most 3,660,000 days get there.
        d, days = self.args(n)
        inside = sql("EXTRACT(EPOCH FROM {}) + {} * 86400 BETWEEN -62135596800 AND 253402300799.999999", d, days)
        interval = sql("CAST(CASE WHEN abs({}) <= 3660000 THEN {} END AS double precision) * interval '1 day'",
                       days, days)
        return sql("CASE WHEN {} THEN {} + {} END", inside, d, interval)

    def op_date_diff(self, n: Op) -> Frag:
        return sql("(EXTRACT(EPOCH FROM ({} - {})) / 86400)", *self.args(n))

    def op_now(self, n: Op) -> Frag:
        return sql("CAST({} AS timestamp)", super().op_now(n))

    def op_map_get(self, n: Op) -> Frag:
        return sql("(CAST({} AS jsonb) ->> {})", self.r(n.args[0]), self.param(n.extra[0]))

    def op_map_has(self, n: Op) -> Frag:
        return sql("COALESCE(jsonb_exists(CAST({} AS jsonb), {}), FALSE)", self.r(n.args[0]),
                   self.param(n.extra[0]))

    def op_json_get(self, n: Op) -> Frag:
        return sql("(CAST({} AS jsonb) #>> CAST({} AS text[]))", self.r(n.args[0]), self.param(list(n.extra[0])))

    # --- Oracle built-ins ------------------------------------------------------------

    def _int(self, node: Node, most: Frag = (str(_INT), ())) -> Frag:
        """A position / length argument: Oracle truncates it; clamp into integer range (and to ``most``).

        PostgreSQL's GREATEST and LEAST skip NULLs, so a NULL argument is kept NULL by hand
        (ROUND(n, NULL) is NULL, not ROUND(n, -2147483647))."""
        x = self.r(node)
        clamped = f"LEAST(GREATEST(trunc({{}}), -{_INT}), {_INT}, {{}})"
        return sql(f"CASE WHEN {{}} IS NOT NULL THEN CAST({clamped} AS integer) END", x, x, most)

    def _call(self, name: str, n: Op) -> Frag:
        return sql(name + "({})", join(", ", self.args(n)))

    def fn_UPPER(self, n: Op) -> Frag:
        return self._call("upper", n)

    def fn_LOWER(self, n: Op) -> Frag:
        return self._call("lower", n)

    def fn_INITCAP(self, n: Op) -> Frag:
        return self._call("initcap", n)

    def fn_LENGTH(self, n: Op) -> Frag:
        return self._call("char_length", n)

    def fn_TRIM(self, n: Op) -> Frag:
        return sql("btrim({}, ' ')", self.r(n.args[0]))

    def fn_LTRIM(self, n: Op) -> Frag:
        return self._call("ltrim", n)

    def fn_RTRIM(self, n: Op) -> Frag:
        return self._call("rtrim", n)

    def fn_REPLACE(self, n: Op) -> Frag:
        return self._call("replace", n)

    def fn_SUBSTR(self, n: Op) -> Frag:
        s, pos = self.r(n.args[0]), self.r(n.args[1])
        length = sql("char_length({})", s)
        p = sql("trunc({})", pos)
        start = sql("(CASE WHEN {} > 0 THEN {} - 1 WHEN {} < 0 THEN {} + {} ELSE 0 END)", p, p, p, length, p)
        out_of_range = sql("{} IS NULL OR {} < 0 OR {} >= {}", p, start, start, length)  # strict
        # clamped: out of range it is never used, but a constant one is cast when planning
        first = sql(f"CAST(LEAST(GREATEST({{}}, -1), {_INT - 1}) + 1 AS integer)", start)
        if len(n.args) == 2:
            return sql("CASE WHEN {} THEN NULL ELSE substr({}, {}) END", out_of_range, s, first)
        count = sql("trunc({})", self.r(n.args[2]))
        return sql("CASE WHEN {} OR {} IS NULL OR {} < 1 THEN NULL ELSE substr({}, {}, {}) END",
                   out_of_range, count, count, s, first, self._int(n.args[2]))

    def fn_INSTR(self, n: Op) -> Frag:
        s, sub, *rest = n.args
        start = rest[0].value if rest and isinstance(rest[0], Const) else None
        once = len(rest) < 2 or (isinstance(rest[1], Const) and int(rest[1].value) == 1)
        if rest and (start is None or start < 1) or not once:
            raise NotCompilable("INSTR with a start before 1 or an occurrence other than 1")
        start = min(int(start or 1), _INT)  # past any text: 0, as from 2147483647
        if start == 1:
            return sql("strpos({}, {})", self.r(s), self.r(sub))
        found = sql("strpos(substr({}, " + str(start) + "), {})", self.r(s), self.r(sub))
        return sql("CASE WHEN {} > 0 THEN {} + " + str(start - 1) + " WHEN {} = 0 THEN 0 END", found, found, found)

    # LPAD / RPAD results are cut at VARCHAR2_MAX, padding only as far as the cut (sqlfunctions._pad):
    # lpad(s, 2147483647) would fail the query with 'requested length too large'

    def fn_LPAD(self, n: Op) -> Frag:
        s, fill = self.r(n.args[0]), self.r(n.args[2])
        most = sql(f"{VARCHAR2_MAX} + char_length({{}})", s)
        return sql(f"left(lpad({{}}, {{}}, {{}}), {VARCHAR2_MAX})", s, self._int(n.args[1], most), fill)

    def fn_RPAD(self, n: Op) -> Frag:
        s, fill = self.r(n.args[0]), self.r(n.args[2])
        return sql("rpad({}, {}, {})", s, self._int(n.args[1], (str(VARCHAR2_MAX), ())), fill)

    def fn_ABS(self, n: Op) -> Frag:
        return self._call("abs", n)

    def fn_FLOOR(self, n: Op) -> Frag:
        return self._call("floor", n)

    def fn_CEIL(self, n: Op) -> Frag:
        return self._call("ceil", n)

    def fn_SIGN(self, n: Op) -> Frag:
        return self._call("sign", n)

    def fn_MOD(self, n: Op) -> Frag:
        m, d = self.args(n)
        return sql("CASE WHEN {} = 0 THEN {} ELSE mod(CAST({} AS numeric), {}) END", d, m, m, d)

    def fn_ROUND(self, n: Op) -> Frag:
        return sql("round(CAST({} AS numeric), {})", self.r(n.args[0]), self._int(n.args[1]))

    def fn_TRUNC(self, n: Op) -> Frag:
        if n.kind == "DATE":
            return sql("date_trunc('day', {})", self.r(n.args[0]))
        return sql("trunc(CAST({} AS numeric), {})", self.r(n.args[0]), self._int(n.args[1]))

    def _extreme(self, name: str, n: Op) -> Frag:
        collate = ' COLLATE "C"' if n.kind == "CHAR" else ""
        return sql(name + "({})", join(", ", [sql("{}" + collate, a) for a in self.args(n)]))

    def fn_GREATEST(self, n: Op) -> Frag:
        return self._extreme("GREATEST", n)

    def fn_LEAST(self, n: Op) -> Frag:
        return self._extreme("LEAST", n)

    def fn_TO_CHAR(self, n: Op) -> Frag:
        value, fmt = n.args
        if value.kind != "DATE" or not isinstance(fmt, Const):
            raise NotCompilable("TO_CHAR with a number format model")
        return sql("to_char({}, {})", self.r(value), self.param(oracle_to_pg_format(fmt.value)))
