"""Binds read as days in the clock's arithmetic of a user's SQL (:mod:`.sqloracle`).

``enq_time < SYSDATE - :days`` folds the bind's value into the clock's literal
(:mod:`.sqlclock`), so the statement the database runs no longer names that bind:
:meth:`ClockBinds.remaining` gives the binds for the statement as rewritten — values
bound by position without the ones taken (the others keep their order: the n-th
placeholder left takes the n-th value left), values bound by name without the names
the statement no longer uses.  Positions are placeholder occurrences in order, as
python-oracledb binds a list in SQL (``:x, :x`` takes two values).

A value read as days is a number (``int``, ``float``, ``Decimal``) or text Oracle
converts to one (``'1.5'``); other text and booleans are ORA-01722, a placeholder
without a value ORA-01008, a NULL makes the clock's value NULL, and a datetime or
interval multiplied or divided is refused (SLU-00001) rather than answered wrongly, a
datetime among the days is ORA-00932 as in Oracle.  (A datetime bind standing alone,
and an interval added or taken away, are the clock's own operands: :mod:`.sqloracle`.)
"""

from __future__ import annotations

import datetime as dt
import math
import re
from decimal import Decimal
from fractions import Fraction
from typing import Sequence

from ..errors import Error, not_supported, ora
from .sqlclock import NULL, Days

__all__ = ["ClockBinds"]

_NUMBER = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")


class ClockBinds:
    """The binds of one statement (``binds`` as the caller gives them to the database;
    ``toks`` the statement's tokens, bind placeholders of kind ``"bind"``)."""

    def __init__(self, toks: Sequence, binds: dict | Sequence | None) -> None:
        self.toks, self.binds = toks, binds
        self.used: set[int] = set()                 # placeholder tokens taken
        self._places: dict[int, int] | None = None  # token -> its position

    def days(self, i: int) -> Days:
        """The value of the placeholder at token ``i`` as a number of days (taken)."""
        return _days(self.take(i))

    def take(self, i: int) -> object:
        """The value of the placeholder at token ``i``, taken out of the statement's binds."""
        value = self._value(i)
        self.used.add(i)
        return value

    def peek(self, i: int) -> object:
        """The value of the placeholder at token ``i`` (None when it has none: the
        database says so when it runs the statement)."""
        try:
            return self._value(i)
        except Error:
            return None

    def _value(self, i: int) -> object:
        binds, text = self.binds, self.toks[i].text
        if isinstance(binds, dict):
            name = text[1:].upper() if text.startswith(":") else None
            for key, value in binds.items():
                if _bare(key) == name:
                    return value
            raise ora(1008)
        at = self._positions().get(i)
        if binds is None or at is None or at >= len(binds):
            raise ora(1008)
        return binds[at]

    def _positions(self) -> dict[int, int]:
        if self._places is None:
            self._places = {i: n for n, i in enumerate(i for i, t in enumerate(self.toks) if t.kind == "bind")}
        return self._places

    def remaining(self) -> dict | list | Sequence | None:
        """The binds for the statement without the placeholders taken."""
        binds, used = self.binds, self.used
        if not used or binds is None:
            return binds
        if isinstance(binds, dict):
            left = {t.text[1:].upper() for i, t in enumerate(self.toks) if t.kind == "bind" and i not in used}
            taken = {self.toks[i].text[1:].upper() for i in used} - left
            return {k: v for k, v in binds.items() if _bare(k) not in taken}
        gone = {self._positions()[i] for i in used}
        return [v for n, v in enumerate(binds) if n not in gone]


def _bare(key: object) -> str:
    """A bind dict's key as the name it binds (python-oracledb: any case, ``:`` allowed)."""
    name = str(key)
    return (name[1:] if name.startswith(":") else name).upper()


def _days(value: object) -> Days:
    """A bind's value as Oracle reads it for a number of days."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        raise ora(1722, repr(value))
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, (float, Decimal)):
        if not (value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)):
            raise ora(1722, str(value))
        return Fraction(value)
    if isinstance(value, str):
        if not _NUMBER.fullmatch(value):
            raise ora(1722, repr(value))
        return Fraction(value.strip())
    if isinstance(value, dt.date):          # (a datetime is a date): ``SYSDATE - :h / 24``
        raise ora(932, "NUMBER", "DATE")
    if isinstance(value, dt.timedelta):
        raise not_supported("an interval bind multiplied or divided in date arithmetic in SQL "
                            "(Sluice adds or takes away an interval bind)")
    raise ora(1722, repr(value))
