"""NEXT_TIME as a calendar date function: windows at fixed times of the day, week or month.

DBMS_AQADM.SCHEDULE_PROPAGATION's NEXT_TIME is "a date function to compute the start of
the next propagation window from the end of the current window", evaluated with SYSDATE
the end of the window.  ``SYSDATE [+ days]`` is a fixed period (schedules.next_time_offset);
this module takes the calendar forms, which a period cannot say — ``TRUNC(SYSDATE) + 1 +
2/24`` (02:00 every day), ``NEXT_DAY(TRUNC(SYSDATE), 'SUNDAY')`` (every Sunday at
midnight), ``ADD_MONTHS(TRUNC(SYSDATE, 'MM'), 1)`` (the first of every month):

    date  := SYSDATE | SYSTIMESTAMP | TRUNC(date [, 'fmt']) | NEXT_DAY(date, 'day')
           | ADD_MONTHS(date, number) | LAST_DAY(date)
    value := date [+|- days]            days: an arithmetic of numbers

SYSDATE is this process's local time (Oracle's: the database host's clock), to the second.
"""

from __future__ import annotations

import ast
import calendar as _calendar
import math
import operator
import re
from datetime import datetime, timedelta
from typing import Callable

Calendar = Callable[[float], float]

_DAYS_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def days_of(text: str) -> float | None:
    """The value of an arithmetic of numbers (None: not one, or a zero divisor)."""
    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -value(node.operand) if isinstance(node.op, ast.USub) else value(node.operand)
        if isinstance(node, ast.BinOp) and type(node.op) in _DAYS_OPERATORS:
            return _DAYS_OPERATORS[type(node.op)](value(node.left), value(node.right))
        raise ValueError(ast.dump(node))
    try:
        return value(ast.parse(text.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError, MemoryError):
        return None


def _trunc_day(d: datetime) -> datetime:
    return d.replace(hour=0, minute=0, second=0, microsecond=0)


# TRUNC(date, 'fmt') -- Oracle's format models of the units a window repeats in
_TRUNC: dict[str, Callable[[datetime], datetime]] = {
    **dict.fromkeys(("DD", "DDD", "J"), _trunc_day),
    **dict.fromkeys(("HH", "HH12", "HH24"), lambda d: d.replace(minute=0, second=0, microsecond=0)),
    "MI": lambda d: d.replace(second=0, microsecond=0),
    "IW": lambda d: _trunc_day(d) - timedelta(days=d.weekday()),          # the ISO week's Monday
    **dict.fromkeys(("MM", "MON", "MONTH", "RM"), lambda d: _trunc_day(d).replace(day=1)),
    "Q": lambda d: _trunc_day(d).replace(month=(d.month - 1) // 3 * 3 + 1, day=1),
    **dict.fromkeys(("YYYY", "SYYYY", "YEAR", "SYEAR", "YYY", "YY", "Y"),
                    lambda d: _trunc_day(d).replace(month=1, day=1)),
}
_DAY_NAMES = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


def _weekday(name: str) -> int:
    n = name.strip().upper()
    for i, full in enumerate(_DAY_NAMES):
        if n in (full, full[:3]):
            return i
    raise ValueError(f"not a day of the week: {name!r}")


def _next_day(d: datetime, weekday: int) -> datetime:
    """NEXT_DAY: the first such weekday later than ``d`` (its time of day kept)."""
    return d + timedelta(days=(weekday - d.weekday() - 1) % 7 + 1)


def _last_day(d: datetime) -> datetime:
    return d.replace(day=_calendar.monthrange(d.year, d.month)[1])


def _add_months(d: datetime, months: int) -> datetime:
    """ADD_MONTHS: the same day ``months`` later; the last day of a month, or a day the
    other month lacks, gives that month's last day."""
    y, m = divmod(d.month - 1 + months, 12)
    year, month = d.year + y, m + 1
    last = _calendar.monthrange(year, month)[1]
    day = last if d.day == _calendar.monthrange(d.year, d.month)[1] or d.day > last else d.day
    return d.replace(year=year, month=month, day=day)


_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_]\w*)|(?P<text>'(?:[^']|'')*')|(?P<punct>[(),]))")


class _Parser:
    """``value`` of the module's grammar, as a function of SYSDATE."""

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def _token(self) -> tuple[str, str]:
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            raise ValueError(f"unexpected {self.text[self.pos:self.pos + 10]!r}")
        self.pos = m.end()
        kind = m.lastgroup or ""
        return kind, m.group(kind)

    def _expect(self, punct: str) -> None:
        if self._token() != ("punct", punct):
            raise ValueError(f"{punct!r} expected")

    def _argument_text(self) -> str:
        """The text of a number argument, up to the call's closing parenthesis."""
        depth, start = 0, self.pos
        for i in range(self.pos, len(self.text)):
            c = self.text[i]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    self.pos = i
                    return self.text[start:i]
                depth -= 1
        raise ValueError("')' expected")

    def date(self) -> Callable[[datetime], datetime]:
        kind, word = self._token()
        name = word.upper() if kind == "name" else ""
        if name in ("SYSDATE", "SYSTIMESTAMP"):
            return lambda d: d
        if name not in ("TRUNC", "NEXT_DAY", "ADD_MONTHS", "LAST_DAY"):
            raise ValueError(f"not a date: {word!r}")
        self._expect("(")
        inner = self.date()
        if name == "LAST_DAY":
            self._expect(")")
            return lambda d: _last_day(inner(d))
        if name == "TRUNC":
            kind, word = self._token()
            if (kind, word) == ("punct", ")"):
                return lambda d: _trunc_day(inner(d))
            if (kind, word) != ("punct", ","):
                raise ValueError("',' expected")
            unit = _TRUNC.get(self._text().upper())
            if unit is None:
                raise ValueError("not a TRUNC format of a date")
            self._expect(")")
            return lambda d: unit(inner(d))
        self._expect(",")
        if name == "NEXT_DAY":
            weekday = _weekday(self._text())
            self._expect(")")
            return lambda d: _next_day(inner(d), weekday)
        months = days_of(self._argument_text())
        if months is None or not math.isfinite(months) or abs(months) > 12 * 10000:
            raise ValueError("ADD_MONTHS needs a number of months")
        self._expect(")")
        whole = int(months)       # Oracle: the integer part
        return lambda d: _add_months(inner(d), whole)

    def _text(self) -> str:
        kind, word = self._token()
        if kind != "text":
            raise ValueError("a quoted text expected")
        return word[1:-1].replace("''", "'")


def calendar_function(text: str) -> Calendar | None:
    """``text`` as a function from the end of a window to the start of the next (POSIX
    seconds), or None when it is not a calendar form (``SYSDATE [+ days]`` is a period).
    :raises ValueError: for a calendar form that is wrong (a bad format, day name, number)."""
    head = text.lstrip().upper()
    if not head.startswith(("TRUNC", "NEXT_DAY", "ADD_MONTHS", "LAST_DAY")):
        return None
    p = _Parser(text)
    try:
        date = p.date()
    except RecursionError:
        raise ValueError("nested too deep") from None
    tail = text[p.pos:].strip()
    days = 0.0
    if tail:
        if tail[0] not in "+-":
            raise ValueError(f"unexpected {tail[:10]!r}")
        days = days_of("0" + tail)
        if days is None or not math.isfinite(days):
            raise ValueError("days must be an arithmetic of numbers")
    offset = timedelta(days=days)

    def next_start(end: float) -> float:
        now = datetime.fromtimestamp(math.floor(end))      # SYSDATE: whole seconds
        return (date(now) + offset).timestamp()
    return next_start


__all__ = ["Calendar", "calendar_function", "days_of"]
