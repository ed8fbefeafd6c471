"""The SQLite rendering of rule conditions (see :mod:`compiler`).

NUMBER is INTEGER/REAL, DATE INTEGER microseconds since 1970, RAW a BLOB.
LIKE with a constant pattern becomes GLOB (case-sensitive whatever
``PRAGMA case_sensitive_like`` says); everything Oracle-specific -- built-in
functions, text/number conversions, run-time LIKE patterns -- calls the user
functions of :mod:`sluice.store.sqlitefns`, i.e. the Python compiler's own implementations.
"""

from __future__ import annotations

from ....store.sqlitefns import to_sqlite
from ..typed.ir import Const, NotCompilable, Op
from .base import Frag, SqlRenderer, join, sql

__all__ = ["SqliteRenderer"]


def _glob(pattern: str, escape: str | None) -> str:
    """An Oracle LIKE pattern (already validated) as a SQLite GLOB pattern."""
    out, chars = [], iter(pattern)
    for ch in chars:
        if ch == escape:
            ch = next(chars)
        elif ch in "%_":
            out.append("*" if ch == "%" else "?")
            continue
        out.append("[" + ch + "]" if ch in "*?[" else ch)
    return "".join(out)


_KIND_CODES = {"NUMBER": "N", "CHAR": "C", "DATE": "D", "RAW": "R", "NULL": "C"}


class SqliteRenderer(SqlRenderer):
    target = "SQLite"

    def const(self, node: Const) -> Frag:
        if node.kind == "BOOL" or node.value is None:
            return {True: "1", False: "0"}.get(node.value, "NULL"), ()
        return self.param(to_sqlite(node.value))

    def op_nullif_empty(self, n: Op) -> Frag:
        return sql("NULLIF({}, " + ("''" if n.kind == "CHAR" else "X''") + ")", self.r(n.args[0]))

    def op_div(self, n: Op) -> Frag:
        return sql("(CAST({} AS REAL) / NULLIF({}, 0))", *self.args(n))

    def op_like(self, n: Op) -> Frag:
        return sql("({} GLOB {})", self.r(n.args[0]), self.param(_glob(*n.extra)))

    def op_like_dyn(self, n: Op) -> Frag:
        return sql("sluice_like({})", join(", ", self.args(n)))

    def op_like_bad(self, n: Op) -> Frag:
        return sql("(sluice_like_bad({}, {}) = 1)", *self.args(n))

    def op_num_of_char(self, n: Op) -> Frag:
        return sql("sluice_num({})", self.r(n.args[0]))

    def op_num_bad(self, n: Op) -> Frag:
        return sql("(sluice_num({}) IS NULL)", self.r(n.args[0]))

    def op_char_of_num(self, n: Op) -> Frag:
        return sql("sluice_num_text({})", self.r(n.args[0]))

    def op_char_of_date(self, n: Op) -> Frag:
        return sql("sluice_fn('TO_CHAR', 'D', {})", self.r(n.args[0]))

    def op_char_of_raw(self, n: Op) -> Frag:
        return sql("NULLIF(hex({}), '')", self.r(n.args[0]))  # hex(NULL) is ''

    def op_raw_of_char(self, n: Op) -> Frag:
        return sql("sluice_hextoraw({})", self.r(n.args[0]))

    def op_raw_bad(self, n: Op) -> Frag:
        return sql("(sluice_hextoraw({}) IS NULL)", self.r(n.args[0]))

    def op_date_of_char(self, n: Op) -> Frag:
        fmt = [self.param(n.extra[0])] if n.extra else []
        return sql("sluice_to_date({})", join(", ", [self.r(n.args[0])] + fmt))

    def op_date_bad(self, n: Op) -> Frag:
        return sql("({} IS NULL)", self.op_date_of_char(n))

    def op_date_of_iso(self, n: Op) -> Frag:
        return sql("sluice_to_date({})", self.r(n.args[0]))

    def op_date_add(self, n: Op) -> Frag:
        return sql("sluice_date_add({}, {})", *self.args(n))

    def op_date_diff(self, n: Op) -> Frag:
        return sql("(({} - {}) / 86400000000.0)", *self.args(n))

    def op_fn(self, n: Op) -> Frag:
        kinds = "".join(_KIND_CODES[a.kind] for a in n.args)
        return sql("sluice_fn({}, {}, {})", self.param(n.extra[0]), self.param(kinds),
                   join(", ", self.args(n)))

    def op_map_get(self, n: Op) -> Frag:
        return sql("CAST(json_extract({}, {}) AS TEXT)", self.r(n.args[0]), self.param(_json_key(n.extra[0])))

    def op_map_has(self, n: Op) -> Frag:
        return sql("(json_type({}, {}) IS NOT NULL)", self.r(n.args[0]), self.param(_json_key(n.extra[0])))

    def op_json_get(self, n: Op) -> Frag:
        path = "$" + "".join("." + _json_key(k)[2:] for k in n.extra[0])
        return sql("CAST(json_extract({}, {}) AS TEXT)", self.r(n.args[0]), self.param(path))


def _json_key(key: str) -> str:
    if '"' in key or "\\" in key:
        raise NotCompilable(f"JSON key {key!r}")
    return '$."' + key + '"'


