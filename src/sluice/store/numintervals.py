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
from typing import Callable, Sequence

from ..errors import not_supported, ora
from .oraclecalls import arguments

__all__ = ["NUM_INTERVALS", "ds_interval_pieces", "num_interval", "unit_of"]

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


def num_interval(toks: Sequence, k: int, bind: Callable[[int], object] | None = None
                 ) -> tuple[int, int, Fraction] | None:
    """``NUMTODSINTERVAL(n, 'unit')`` / ``NUMTOYMINTERVAL(n, 'unit')`` of a literal number (or
    a bind whose value ``bind(its index)`` reads as a number, taking it; a NULL one is not
    folded) at token ``k``: (its last token, months, seconds), or None when it is not one."""
    if not (k + 1 < len(toks) and toks[k].word in NUM_INTERVALS and toks[k + 1].text == "("):
        return None
    found = unit_of(toks, k)
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


def ds_interval_pieces(sqlite: bool, unit: str) -> tuple[str, str]:
    """The SQL before and after ``n`` for ``NUMTODSINTERVAL(n, unit)``: on SQLite its days (a
    REAL, the item typed INTERVAL DAY TO SECOND), on PostgreSQL an interval."""
    if sqlite:
        return "((", f") * {_DS_SECONDS[unit]} / 86400.0)"
    return "(CAST((", f") AS DOUBLE PRECISION) * INTERVAL '1 {unit.lower()}')"
