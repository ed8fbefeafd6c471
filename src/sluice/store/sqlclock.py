"""Oracle's date arithmetic on the clock words of a user's SQL (:mod:`.sqloracle`).

``SYSDATE - 1``, ``SYSDATE + 5/1440``, ``SYSTIMESTAMP - INTERVAL '1' HOUR``: the clock is
read once per statement, so the clock word with literal days or a literal interval added
or taken away is itself a literal, worked out here as Oracle works it out:

* a number of days (:func:`days_term`: numbers, binds whose values the caller reads,
  ``* / + -`` and parentheses) makes a DATE — a timestamp loses its fraction first, the
  sum is rounded to the second; a NULL bind makes the whole NULL (:data:`NULL`);
* an ``INTERVAL`` literal (:func:`interval`: one field or ``lead TO trail``) keeps the
  type; months that land on a day the month has not are ORA-01839.

``TRUNC(date [, 'fmt'])`` is a DATE at the start of its day (:func:`trunc_unit` reads the
format, :func:`truncate` applies it), used for the clock and for the views' dates.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Callable, Sequence, Union

from ..errors import not_supported, ora

__all__ = ["NULL", "add_days", "add_interval", "days_term", "interval", "trunc_unit", "truncate"]

_UNITS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")
_SECONDS = {"DAY": 86400, "HOUR": 3600, "MINUTE": 60, "SECOND": 1}


class _Null:
    """SQL's NULL among the days: whatever it meets is NULL."""

    def __repr__(self) -> str:
        return "NULL"


NULL = _Null()
Days = Union[Fraction, _Null]


def days_term(toks: Sequence, k: int, bind: Callable[[int], Days] | None = None) -> tuple[int, Days] | None:
    """The literal operand of ``+`` / ``-`` starting at token ``k`` (``1``, ``1/24``,
    ``(1 + 1/24)``, ``2 * 3``, ``:n / 24``): (its last token, its value), or None when it
    is not all literal numbers (``1 * col`` is none: the product binds first).  A bind
    token's value is ``bind(its index)`` (no ``bind``: not literal)."""
    p = _Days(toks, k, bind)
    value = p.term()
    return None if value is None else (p.k - 1, value)


def _arithmetic(op: str, a: Days, b: Days) -> Days:
    if op == "/" and b == 0:
        raise ora(1476)
    return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b


class _Days:
    def __init__(self, toks: Sequence, k: int, bind: Callable[[int], Days] | None) -> None:
        self.toks, self.k, self.bind = toks, k, bind

    def _peek(self) -> str:
        return self.toks[self.k].text if self.k < len(self.toks) else ""

    def additive(self) -> Days | None:
        return self._chain(("+", "-"), self.term)

    def term(self) -> Days | None:
        return self._chain(("*", "/"), self.factor)

    def _chain(self, ops: tuple[str, str], operand: Callable[[], Days | None]) -> Days | None:
        """``operand (op operand)*``, left to right; None when a part is no number."""
        value = operand()
        while value is not None and self._peek() in ops:
            op = self._peek()
            self.k += 1
            other = operand()
            if other is None:
                return None
            value = NULL if value is NULL or other is NULL else _arithmetic(op, value, other)
        return value

    def factor(self) -> Days | None:
        sign = 1
        while self._peek() in ("+", "-"):
            sign = -sign if self._peek() == "-" else sign
            self.k += 1
        if self.k >= len(self.toks):
            return None
        t = self.toks[self.k]
        if t.kind == "num":
            self.k += 1
            return sign * Fraction(t.text)
        if t.kind == "bind" and self.bind is not None:
            value = self.bind(self.k)
            self.k += 1
            return value if value is NULL else sign * value
        if t.text == "(":
            self.k += 1
            value = self.additive()
            if value is None or self._peek() != ")":
                return None
            self.k += 1
            return value if value is NULL else sign * value
        return None


def interval(toks: Sequence, k: int) -> tuple[int, int, Fraction] | None:
    """``INTERVAL 'text' UNIT[(p)] [TO UNIT[(p)]]`` at token ``k``: (its last token,
    months, seconds), or None when it is not one this module reads."""
    if not (k + 2 < len(toks) and toks[k].word == "INTERVAL" and toks[k + 1].kind == "str"
            and toks[k + 2].word in _UNITS):
        return None
    lead = trail = toks[k + 2].word
    last = _precision(toks, k + 2)
    if last + 2 < len(toks) and toks[last + 1].word == "TO" and toks[last + 2].word in _UNITS:
        trail = toks[last + 2].word
        last = _precision(toks, last + 2)
    units = _UNITS[_UNITS.index(lead):_UNITS.index(trail) + 1]
    text = toks[k + 1].text[1:-1].strip()
    sign = -1 if text.startswith("-") else 1
    text = text.lstrip("+-").strip()
    parts = re.split(r"-" if units[0] == "YEAR" else r"[ :]+", text) if text else []
    if not units or len(parts) != len(units) or (lead in ("YEAR", "MONTH")) != (trail in ("YEAR", "MONTH")):
        return None
    try:
        values = [Fraction(p) for p in parts]
    except ValueError:
        return None
    if any(v < 0 for v in values) or any(v.denominator != 1 for v in values[:-1]) \
            or (values[-1].denominator != 1 and units[-1] != "SECOND"):
        return None
    if units[0] in ("YEAR", "MONTH"):
        months = sum(int(v) * (12 if u == "YEAR" else 1) for v, u in zip(values, units))
        return last, sign * months, Fraction(0)
    return last, 0, sign * sum(v * _SECONDS[u] for v, u in zip(values, units))


def _precision(toks: Sequence, j: int) -> int:
    """The last token of the unit at ``j`` with its ``(p[, s])``."""
    if j + 1 < len(toks) and toks[j + 1].text == "(":
        for m in range(j + 1, min(j + 6, len(toks))):
            if toks[m].text == ")":
                return m
    return j


def add_days(value: datetime, days: Fraction) -> datetime:
    """``value + days`` as Oracle's DATE arithmetic: a DATE (the timestamp's fraction
    dropped first), rounded to the second."""
    micros = round(days * 86400 * 10**6)
    try:
        value = value.replace(microsecond=0) + timedelta(microseconds=micros)
    except OverflowError:
        raise ora(1841) from None
    return value.replace(microsecond=0) + timedelta(seconds=value.microsecond >= 500000)


def add_interval(value: datetime, months: int, seconds: Fraction) -> datetime:
    """``value + INTERVAL …``: months by the calendar (ORA-01839 on the 31st of a shorter
    month, as Oracle), seconds exactly to the microsecond."""
    try:
        if months:
            year, month = divmod(value.month - 1 + months, 12)
            try:
                value = value.replace(year=value.year + year, month=month + 1)
            except ValueError:
                if not 1 <= value.year + year <= 9999:
                    raise OverflowError from None
                raise ora(1839) from None
        return value + timedelta(microseconds=round(seconds * 10**6))
    except OverflowError:
        raise ora(1841) from None


# TRUNC(date, fmt)'s format models -> the unit truncated to
_TRUNC_UNITS = {**dict.fromkeys(("DD", "DDD", "J"), "day"),
                **dict.fromkeys(("MM", "MON", "MONTH", "RM"), "month"),
                **dict.fromkeys(("YYYY", "SYYYY", "YYY", "YY", "Y", "YEAR", "SYEAR"), "year"),
                **dict.fromkeys(("HH", "HH12", "HH24"), "hour"), "MI": "minute", "Q": "quarter"}


def trunc_unit(fmt: str | None) -> str:
    """The unit of ``TRUNC(date, fmt)`` (``fmt`` the format's text, None for none: the day).
    Oracle's week formats (IW, WW, W, D, DAY) and centuries are not Sluice's (SLU-00001);
    a format that is none of Oracle's is ORA-01899 (bad precision specifier) as Oracle's."""
    if fmt is None:
        return "day"
    key = fmt.strip().upper()
    if key in _TRUNC_UNITS:
        return _TRUNC_UNITS[key]
    if key in ("IW", "WW", "W", "D", "DAY", "DY", "CC", "SCC", "I", "IY", "IYY", "IYYY"):
        raise not_supported(f"TRUNC of a date to '{fmt}' (Sluice truncates to DD, MM, Q, YYYY, HH and MI)")
    raise ora(1899)


def truncate(value: datetime, unit: str) -> datetime:
    """``value`` truncated to the start of its ``unit`` (:func:`trunc_unit`): a DATE."""
    value = value.replace(microsecond=0, second=0)
    if unit == "minute":
        return value
    value = value.replace(minute=0)
    if unit == "hour":
        return value
    value = value.replace(hour=0)
    if unit == "day":
        return value
    if unit == "year":
        return value.replace(month=1, day=1)
    month = (value.month - 1) // 3 * 3 + 1 if unit == "quarter" else value.month
    return value.replace(month=month, day=1)
