"""Oracle's ``NUMTODSINTERVAL(n, 'unit')`` and ``NUMTOYMINTERVAL(n, 'unit')`` in a user's SQL.

:mod:`.sqloracle` folds one of literal arguments into the clock's arithmetic as it folds an
``INTERVAL`` literal (:func:`num_interval`: months and seconds, as
:func:`.sqlclock.interval` gives them): ``SYSTIMESTAMP - NUMTODSINTERVAL(1, 'HOUR')``,
``SYSDATE - NUMTOYMINTERVAL(1, 'MONTH')`` (months by the calendar, ORA-01839 on a day the
month has not).  Standing alone, ``NUMTODSINTERVAL`` is an INTERVAL DAY TO SECOND, fetched
as a ``timedelta`` (:func:`ds_interval_pieces`: PostgreSQL's interval; on SQLite its days, a
REAL, as ``sluice_interval`` gives a TIMESTAMP minus a date, :mod:`.sqlitedays`).  A
``NUMTOYMINTERVAL`` standing alone would be fetched as python-oracledb's ``IntervalYM``,
which Sluice has not: SLU-00001.  A unit that is not a literal is SLU-00001 too; one that
is none of Oracle's ORA-01760 (illegal argument for function), as Oracle's.
"""

from __future__ import annotations

from fractions import Fraction
from datetime import datetime, timedelta
from typing import Callable, Collection, Sequence

from ..errors import not_supported, ora
from .oraclecalls import arguments
from .sqlclock import NULL

__all__ = ["NUM_INTERVALS", "check_extracts", "ds_interval_pieces", "ds_micros", "interval_literal", "num_interval",
           "scaled_intervals", "unit_of"]

NUM_INTERVALS = frozenset({"NUMTODSINTERVAL", "NUMTOYMINTERVAL"})
_DS_SECONDS = {"DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}
_YM_MONTHS = {"YEAR": 12, "MONTH": 1}


def unit_of(toks: Sequence, i: int) -> tuple[list[tuple[int, int]], int, str] | None:
    """For the call at token ``i``: its arguments, its ``)`` and its unit upper-cased, or
    None when it is not a call of two arguments."""
    args, close = arguments(toks, i + 1)
    if close < 0 or len(args) != 2:
        return None
    first, last = args[1]
    if first != last or toks[first].kind != "str":
        raise not_supported(f"{toks[i].word} of a unit that is not a literal")
    unit = toks[first].text[1:-1].strip().upper()
    if unit not in (_DS_SECONDS if toks[i].word == "NUMTODSINTERVAL" else _YM_MONTHS):
        raise ora(1760)
    return args, close, unit


def _call(toks: Sequence, k: int, names: Collection[str]) -> tuple[list[tuple[int, int]], int, str] | None:
    """:func:`unit_of` of a call at token ``k`` of one of ``names``, else None."""
    if not (k + 1 < len(toks) and toks[k].word in names and toks[k + 1].text == "("):
        return None
    return unit_of(toks, k)


def num_interval(toks: Sequence, k: int, bind: Callable[[int], object] | None = None
                 ) -> tuple[int, int, Fraction] | None:
    """``NUMTODSINTERVAL(n, 'unit')`` / ``NUMTOYMINTERVAL(n, 'unit')`` of a literal number (or
    a bind whose value ``bind(its index)`` reads as a number, taking it; a NULL one is not
    folded) at token ``k``: (its last token, months, seconds), or None when it is not one."""
    found = _call(toks, k, NUM_INTERVALS)
    if found is None:
        return None
    args, close, unit = found
    first, last = args[0]
    sign = -1 if last == first + 1 and toks[first].text == "-" else 1
    if not (first == last or sign < 0) or toks[last].kind not in ("num", "bind"):
        return None
    if toks[last].kind == "bind":
        value = bind(last) if bind is not None else None
        if not isinstance(value, Fraction):
            return None
        n = sign * value
    else:
        n = sign * Fraction(toks[last].text)
    if toks[k].word == "NUMTOYMINTERVAL":
        months = n * _YM_MONTHS[unit]
        if months.denominator != 1:     # (Oracle keeps whole months of a fraction of a year)
            months = Fraction(int(months))
        return close, int(months), Fraction(0)
    return close, 0, n * _DS_SECONDS[unit]


# words that are no run-time value of a column's (the clock: its own arithmetic)
_NOT_VALUES = frozenset({"SYSDATE", "SYSTIMESTAMP", "CURRENT_DATE", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "USER",
                         "LEVEL", "ROWNUM", "PRIOR", "NULL"})


def ds_micros(toks: Sequence, k: int, sql: str) -> tuple[int, str] | None:
    """``NUMTODSINTERVAL(x, 'unit')`` at token ``k`` of a run-time ``x`` (a column, arithmetic
    of columns, numbers and binds — no call, no division, which SQLite's integers would truncate):
    (its ``)``, SQLite's SQL of its microseconds, an integer), for ``sluice_add_interval`` (a TIMESTAMP plus it); None for any other."""
    found = _call(toks, k, ("NUMTODSINTERVAL",))
    if found is None:
        return None
    args, close, unit = found
    first, last = args[0]
    for m in range(first, last + 1):
        t = toks[m]
        if t.kind not in ("id", "qid", "num", "bind", "op") or t.word in _NOT_VALUES or t.text == "/" or (
                t.kind == "id" and m + 1 <= last and toks[m + 1].text == "("):
            return None
    return close, f"CAST(ROUND(({sql[toks[first].start:toks[last].end]}) * {_DS_SECONDS[unit] * 10**6}) AS INTEGER)"


def ds_interval_pieces(sqlite: bool, unit: str) -> tuple[str, str]:
    """The SQL before and after ``n`` for ``NUMTODSINTERVAL(n, unit)``: on SQLite its days (a
    REAL, the item typed INTERVAL DAY TO SECOND), on PostgreSQL an interval."""
    if sqlite:
        return "((", f") * {_DS_SECONDS[unit]} / 86400.0)"
    return "(CAST((", f") AS DOUBLE PRECISION) * INTERVAL '1 {unit.lower()}')"


def interval_literal(sqlite: bool, a: datetime, b: datetime) -> str:
    """SQL for ``a - b`` of two datetimes the statement knows (SYSTIMESTAMP - SYSTIMESTAMP,
    a TIMESTAMP literal minus a DATE …; either may be NULL), a TIMESTAMP among them: Oracle's
    INTERVAL DAY TO SECOND — on SQLite its days (a REAL, the item typed INTERVAL DAY TO
    SECOND as ``sluice_interval``'s), on PostgreSQL an interval of the microseconds."""
    if a is NULL or b is NULL:
        return "NULL" if sqlite else "CAST(NULL AS INTERVAL)"
    micros = (a - b) // timedelta(microseconds=1)
    if sqlite:
        return f"({micros / 86_400_000_000!r})"
    return f"(INTERVAL '1 microsecond' * {micros})"


_COMPARE = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})


def scaled_intervals(toks: Sequence, spans: Collection[tuple[int, int]]) -> set[tuple[int, int]]:
    """On SQLite, where an INTERVAL DAY TO SECOND is its days (a REAL): ``spans`` (start, end
    in the text of each such interval) widened over what keeps it an interval in Oracle's
    datetime arithmetic — the parentheses around it, the numbers it is multiplied or divided
    by (``NUMTODSINTERVAL(1, 'HOUR') * 2``, ``2 * (SYSDATE - enq_timestamp)``), another
    interval added or taken (``INTERVAL '1' HOUR - INTERVAL '1' MINUTE``), a unary minus,
    SUM / AVG / MIN / MAX of it — so that the item is typed and fetched as one.  Such an
    interval compared with a number, or plus or minus one, is ORA-00932 as on PostgreSQL
    (SQLite would compute on the days)."""
    starts = {t.start: i for i, t in enumerate(toks)}
    ends = {t.end: i for i, t in enumerate(toks)}
    known = [(starts[a], ends[b]) for a, b in spans if a in starts and b in ends]
    begins = dict(known)            # an interval's first token -> its last
    out = {span for span in spans if span[0] not in starts or span[1] not in ends}
    for i, j in known:
        while True:
            after = _operand_after(toks, j + 2) if j + 2 < len(toks) else None
            if (i > 0 and j + 1 < len(toks) and toks[i - 1].text == "(" and toks[j + 1].text == ")"
                    and not (i > 1 and toks[i - 2].kind in ("id", "qid") and toks[i - 2].word not in _NOT_CALLS)):
                i, j = i - 1, j + 1
            elif (i > 1 and j + 1 < len(toks) and toks[i - 1].text == "(" and toks[j + 1].text == ")"
                  and toks[i - 2].word in _AGGREGATES):
                i, j = i - 2, j + 1
            elif j + 1 < len(toks) and toks[j + 1].text in ("*", "/") and after is not None:
                j = after
            elif i > 1 and toks[i - 1].text == "*" and _operand_before(toks, i - 2) is not None:
                i = _operand_before(toks, i - 2)
            elif j + 1 < len(toks) and toks[j + 1].text in ("+", "-") and (
                    j + 2 in begins or after is not None and toks[j + 2].text == "(" and begins.get(j + 3) == after - 1):
                j = begins[j + 2] if j + 2 in begins else after     # another interval added or taken
            elif i > 0 and toks[i - 1].text == "-" and (i == 1 or toks[i - 2].word in _NOT_CALLS or (
                    toks[i - 2].kind == "op" and toks[i - 2].text != ")")):
                i -= 1                  # a unary minus
            else:
                break
        if (j + 2 < len(toks) and toks[j + 1].text in _COMPARE and toks[j + 2].kind == "num"
                or i > 1 and toks[i - 1].text in _COMPARE and toks[i - 2].kind == "num"):
            raise ora(932, "INTERVAL DAY TO SECOND", "NUMBER")
        if (j + 2 < len(toks) and toks[j + 1].text in ("+", "-") and toks[j + 2].kind == "num"
                or i > 1 and toks[i - 1].text in ("+", "-") and toks[i - 2].kind == "num"):
            raise ora(932, "NUMBER", "INTERVAL DAY TO SECOND")
        out.add((toks[i].start, toks[j].end))
    return out


# an aggregate of intervals is an interval (SUM and AVG since Oracle 21c)
_AGGREGATES = frozenset({"SUM", "AVG", "MIN", "MAX"})
# words before a parenthesis that make it no call's
_NOT_CALLS = frozenset({"SELECT", "FROM", "WHERE", "AND", "OR", "NOT", "WHEN", "THEN", "ELSE", "ON", "BY",
                        "HAVING", "CASE", "AS"})


def _operand_after(toks: Sequence, k: int) -> int | None:
    """The last token of a number, bind, name or parenthesised operand at token ``k``."""
    if k >= len(toks):
        return None
    if toks[k].text == "(":
        close = arguments(toks, k)[1]
        return close if close > 0 else None
    if toks[k].kind in ("num", "bind") or toks[k].kind in ("id", "qid") and not (
            k + 1 < len(toks) and toks[k + 1].text == "("):
        return k
    return None


def _operand_before(toks: Sequence, k: int) -> int | None:
    """The first token of a number, bind, name or parenthesised operand ending at token ``k``."""
    if k < 0:
        return None
    if toks[k].text == ")":
        depth = 0
        for m in range(k, -1, -1):
            depth += (toks[m].text == ")") - (toks[m].text == "(")
            if depth == 0:
                return m if not (m > 0 and toks[m - 1].kind in ("id", "qid")
                                 and toks[m - 1].word not in _NOT_CALLS) else None
        return None
    if toks[k].kind in ("num", "bind", "id", "qid") and toks[k].word not in _NOT_CALLS:
        return k
    return None


def check_extracts(toks: Sequence, spans: Collection[tuple[int, int]]) -> None:
    """ORA-30076 (invalid extract field for extract source) for ``EXTRACT(YEAR | MONTH FROM
    x)`` of an INTERVAL DAY TO SECOND ``x`` (one of ``spans``, maybe in parentheses), as
    Oracle's: PostgreSQL would answer 0 (SQLite's ``sluice_extract`` raises it per row)."""
    for i, t in enumerate(toks):
        if not (t.word == "EXTRACT" and i + 3 < len(toks) and toks[i + 1].text == "("
                and toks[i + 2].word in ("YEAR", "MONTH") and toks[i + 3].word == "FROM"):
            continue
        close = arguments(toks, i + 1)[1]
        first, last = i + 4, close - 1
        while first < last and toks[first].text == "(" and arguments(toks, first)[1] == last:
            first, last = first + 1, last - 1
        if close > 0 and first <= last and (toks[first].start, toks[last].end) in spans:
            raise ora(30076)
