"""LISTAGG as Oracle answers it, in each store's SQL: what :mod:`.sqllimits` writes for the
``LISTAGG`` it reads.

``LISTAGG([DISTINCT] x [, delimiter] [ON OVERFLOW ERROR | ON OVERFLOW TRUNCATE ['indicator']
[WITH | WITHOUT COUNT]]) [WITHIN GROUP (ORDER BY …)] [OVER ([PARTITION BY …])]``, as the SQL
Language Reference has it:

* the values (NULLs left out) in the ORDER BY's order, each as Oracle's text (a number as
  TO_CHAR writes it), joined by the delimiter (NULL: none);
* DISTINCT: each value once, where it first comes in that order;
* the result is a VARCHAR2: longer than :data:`..sqlfunctions.VARCHAR2_MAX` (Oracle's 4000
  bytes of MAX_STRING_SIZE = STANDARD; characters here) it is ORA-01489 (ON OVERFLOW ERROR,
  the default), or with ON OVERFLOW TRUNCATE the first values that fit, then the
  delimiter, the indicator (``'...'`` by default) and, WITH COUNT (the default), the number
  of values left out in parentheses: ``a,b,...(3)`` — all of it within the limit;
* ``OVER (PARTITION BY …)``: the analytic form, each row given its partition's list.

**SQLite** (3.40: no ORDER BY in an aggregate): the aggregate and window function
``sluice_listagg(value, delimiter, spec, key…)`` (:func:`register_listagg`), sorting by the
keys in Oracle's order (NULLs last ascending, first descending).  **PostgreSQL**:
``string_agg`` of the values' text (ORDER BY inside it, or the window's ORDER BY over the
whole partition for OVER); DISTINCT and TRUNCATE as a subquery over ``unnest(array_agg(…))``
in order (an aggregate of the outer query: PostgreSQL evaluates it there), refused with OVER
(a window function cannot be the outer query's there); ORA-01489 raised by a failing cast of
its message (:func:`.pgconn.translate` reads the ORA error out of it).
"""

from __future__ import annotations

import sqlite3
from decimal import Decimal

from ..errors import ora
from ..sqlfunctions import VARCHAR2_MAX, number_text
from .sqlitecalls import keep_error

__all__ = ["pg_listagg", "register_listagg", "sqlite_spec"]

_OVERFLOW = "ORA-01489: result of string concatenation is too long"
# PostgreSQL: a LISTAGG's value as Oracle's text, a number as TO_CHAR writes it (no trailing
# zeros, '.5'), evaluated once (a subquery of one row: the type is known only as it runs)
_PG_TEXT = ("(SELECT CASE WHEN pg_typeof(v) IN ('numeric'::regtype, 'integer'::regtype, 'bigint'::regtype, "
            "'smallint'::regtype, 'double precision'::regtype, 'real'::regtype) "
            "THEN regexp_replace(CAST(trim_scale(CAST(CAST(v AS TEXT) AS NUMERIC)) AS TEXT), '^(-?)0[.]', '\\1.') "
            "ELSE CAST(v AS TEXT) END FROM (SELECT {} AS v) sluice_v)")
_WHOLE = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"


def sqlite_spec(keys: list[tuple[bool, str]], distinct: bool, truncate: tuple[str, bool] | None) -> str:
    """The ``spec`` argument (SQL) of ``sluice_listagg``: per ORDER BY key (descending,
    NULLS FIRST | LAST) A or D then F or L; then ``|`` flags (U: DISTINCT, T1 / T0:
    TRUNCATE with / without the count) ``|`` the indicator."""
    spec = "'" + ",".join(("D" if desc else "A") + nulls[0] for desc, nulls in keys)
    if not distinct and truncate is None:
        return spec + "'"
    flags = ("U" if distinct else "") + ("" if truncate is None else "T1" if truncate[1] else "T0")
    return f"{spec}|{flags}|'" + ("" if truncate is None else f" || COALESCE({truncate[0]}, '')")


def pg_listagg(value: str, delimiter: str, by: str, distinct: bool, truncate: tuple[str, bool] | None,
               over: str | None) -> str:
    """PostgreSQL's LISTAGG of ``value`` (see the module): ``by`` the ORDER BY's keys with
    their directions and NULLS, ``over`` the OVER clause's PARTITION BY (None: an aggregate)."""
    text, sep = _PG_TEXT.format(value), f"COALESCE(CAST({delimiter} AS TEXT), '')"
    if over is not None:
        order = f" ORDER BY {by} {_WHOLE}" if by else ""
        return _checked(f"string_agg({text}, {sep}) OVER ({over}{order})")
    if not distinct and truncate is None:
        return _checked(f"string_agg({text}, {sep}{' ORDER BY ' + by if by else ''})")
    values = (f"unnest(array_agg({text}{' ORDER BY ' + by if by else ''})) WITH ORDINALITY sluice_u(t, o) "
              "WHERE t IS NOT NULL")
    rows = f"(SELECT t, min(o) AS o FROM {values} GROUP BY t)" if distinct else f"(SELECT t, o FROM {values})"
    if truncate is None:
        return _checked(f"(SELECT string_agg(t, {sep} ORDER BY o) FROM {rows} sluice_l)")
    indicator, counted = truncate

    def suffix(left: str) -> str:
        return f"{sep} || COALESCE({indicator}, '')" + (f" || '(' || ({left}) || ')'" if counted else "")
    fits = f"sluice_len + char_length({suffix('sluice_n - sluice_rn')}) <= {VARCHAR2_MAX}"
    return (f"(SELECT CASE WHEN max(sluice_all) <= {VARCHAR2_MAX} THEN string_agg(t, {sep} ORDER BY o) "
            f"ELSE COALESCE(string_agg(t, {sep} ORDER BY o) FILTER (WHERE {fits}), '') || "
            f"{suffix(f'max(sluice_n) - count(*) FILTER (WHERE {fits})')} END "
            f"FROM (SELECT t, o, sum(char_length(t)) OVER w + char_length({sep}) * (row_number() OVER w - 1) "
            "AS sluice_len, row_number() OVER w AS sluice_rn, count(*) OVER () AS sluice_n, "
            f"sum(char_length(t)) OVER () + char_length({sep}) * (count(*) OVER () - 1) AS sluice_all "
            f"FROM {rows} sluice_b WINDOW w AS (ORDER BY o ROWS UNBOUNDED PRECEDING)) sluice_l)")


def _checked(listagg: str) -> str:
    """``listagg`` (PostgreSQL), ORA-01489 when longer than a VARCHAR2 (not a constant: the
    cast is evaluated only for a result)."""
    return (f"CASE WHEN CAST(CASE WHEN char_length({listagg}) > {VARCHAR2_MAX} THEN '{_OVERFLOW}' ELSE '0' END "
            f"AS INTEGER) = 0 THEN {listagg} END")


# -- SQLite's LISTAGG ------------------------------------------------------------------
class _ListAgg:
    """``sluice_listagg(value, delimiter, spec, key…)``: the values (NULLs left out) in the
    order of the keys, as text joined by the delimiter (see :func:`sqlite_spec`); an
    aggregate and a window function (each row of the frame given the list)."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.delimiter = None
        self.spec = ""

    def step(self, value, delimiter, spec, *keys) -> None:
        self.delimiter, self.spec = delimiter, spec or ""
        if value is not None:
            self.rows.append((keys, value))

    def inverse(self, value, delimiter, spec, *keys) -> None:
        if value is not None:
            self.rows.remove((keys, value))

    def value(self):
        if not self.rows:
            return None
        order, flags, indicator = (self.spec.split("|", 2) + ["", ""])[:3]
        specs = [s for s in order.split(",") if s]
        rows = self.rows
        for n in reversed(range(len(specs))):       # stable sorts, last key first
            desc, nulls_first = specs[n][0] == "D", specs[n][1] == "F"
            present = [r for r in rows if r[0][n] is not None]
            absent = [r for r in rows if r[0][n] is None]
            present.sort(key=lambda r: _order(r[0][n]), reverse=desc)
            rows = absent + present if nulls_first else present + absent
        texts = [_text(v) for _, v in rows]
        if "U" in flags:
            texts = list(dict.fromkeys(texts))
        delimiter = "" if self.delimiter is None else str(self.delimiter)
        joined = delimiter.join(texts)
        if len(joined) <= VARCHAR2_MAX:
            return joined
        if "T" not in flags:
            error = ora(1489)
            keep_error(error)
            raise error
        return _truncated(texts, delimiter, indicator, "T1" in flags)

    finalize = value


def _truncated(texts: list[str], delimiter: str, indicator: str, counted: bool) -> str:
    """ON OVERFLOW TRUNCATE: the first values that fit with what ends the list."""
    size, kept = 0, 0
    for k, text in enumerate(texts, 1):
        size += len(text) + (len(delimiter) if k > 1 else 0)
        if size + len(_end(delimiter, indicator, counted, len(texts) - k)) > VARCHAR2_MAX:
            break
        kept = k
    return delimiter.join(texts[:kept]) + _end(delimiter, indicator, counted, len(texts) - kept)


def _end(delimiter: str, indicator: str, counted: bool, left: int) -> str:
    return delimiter + indicator + (f"({left})" if counted else "")


def _order(value):
    """SQLite's order of values: numbers before text before blobs."""
    if isinstance(value, (int, float)):
        return (0, value, b"")
    if isinstance(value, str):
        return (1, 0, value.encode())
    return (2, 0, bytes(value))


def _text(value) -> str:
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return number_text(value)
    if isinstance(value, bytes):
        return value.hex().upper()
    return str(value)


def register_listagg(conn: sqlite3.Connection) -> None:
    """Give ``conn`` the aggregate and window function ``sluice_listagg`` (LISTAGG, see the module)."""
    conn.create_window_function("sluice_listagg", -1, _ListAgg)
