"""``DATE ± column`` on SQLite: Oracle's date arithmetic, the column's type read per row.

:mod:`.sqloracle` folds ``SYSDATE + n`` into a literal when ``n`` is known; when it is a
column (``SYSDATE + retention_days``) SQLite, which has no column types, gets
``sluice_add_days('<the date>', column)``: the column's value as a number of days
(Oracle's DATE arithmetic, :func:`.sqlclock.add_days`: rounded to the second), text
Oracle would convert to a number read as one; a date in the column is ORA-00932 (a DATE
where a NUMBER is expected, as PostgreSQL's cast answers for a timestamp column), other
text ORA-01722.  The result is the text SQLite's dates have, fetched back as a datetime
(the item is typed DATE, :mod:`.sqlheadings`).  SQLite reports only that the function
raised: each is registered through :func:`.sqlitecalls.oracle_call`, which keeps the Oracle error
for the session (and answers NULL for a NULL or ``''`` argument).

``SYSDATE - column`` is ``sluice_date_minus('<the date>', column)``: the days between for
a date in the column, the date so many days before for a number (SQLite tells them
apart, PostgreSQL's typed columns cannot be: there the column is taken for a date);
``column - SYSDATE`` the days between, a number in the column ORA-00932.

``timestamp - date`` (a TIMESTAMP among them) is ``sluice_interval(a, b)``: Oracle's
INTERVAL DAY TO SECOND as its days (a REAL exact to the microsecond for a century; the
item is typed INTERVAL DAY TO SECOND and fetched as a ``timedelta``); a number
ORA-00932.  Compared with a number it is days (Oracle: ORA-00932, PostgreSQL's interval
too).

``timestamp ± INTERVAL …`` (an INTERVAL DAY TO SECOND) is ``sluice_add_interval(ts,
microseconds)``: the TIMESTAMP's text, its fraction kept (the item typed TIMESTAMP).

``EXTRACT(unit FROM x)`` is ``sluice_extract('unit', x)``: a field of a date's text, or of
an INTERVAL DAY TO SECOND's days (SQLite has no EXTRACT).

``TRUNC(column [, 'fmt'])`` of a view's date is ``sluice_trunc_date(column, unit)``, ``ROUND``
``sluice_round_date`` (:mod:`.dateround`).

``CAST(x AS DATE | TIMESTAMP)`` is ``sluice_cast_date(x, 'DATE' | 'TIMESTAMP')``: SQLite's
own CAST reads a date's text as a number (its year).  Text that is a date (ISO 8601, as
SQLite holds dates and Sluice binds them) is that date — a DATE whole seconds (the
fraction dropped), a time zone dropped as Oracle's CAST of a TIMESTAMP WITH TIME ZONE
drops it — other text ORA-01861 (literal does not match format string), a number
ORA-00932 (Oracle has no CAST of a NUMBER to a DATE).
"""

from __future__ import annotations

import math
import sqlite3
from datetime import datetime, timedelta
from fractions import Fraction

from ..errors import ora
from .dateround import round_date_text
from .sqlclock import add_days, truncate
from .sqlitecalls import oracle_call

__all__ = ["MICROSECONDS_A_DAY", "register_add_days"]

MICROSECONDS_A_DAY = 86_400_000_000


def _add_days(date: str, days: object) -> str:
    return add_days(datetime.fromisoformat(date), _days(days)).isoformat(" ")


def _date_minus(a: object, b: object) -> object:
    left, right = _date_or_days(a), _date_or_days(b)
    if not isinstance(left, datetime):
        raise ora(932, "NUMBER", "DATE")
    if isinstance(right, datetime):
        return (left - right) / timedelta(days=1)
    return add_days(left, -right).isoformat(" ")


def _interval(a: object, b: object) -> float:
    left, right = _date_or_days(a), _date_or_days(b)
    if not isinstance(left, datetime) or not isinstance(right, datetime):
        raise ora(932, "DATE", "NUMBER")
    return (left - right) // timedelta(microseconds=1) / MICROSECONDS_A_DAY


def _add_interval(stamp: object, micros: int) -> str:
    """A TIMESTAMP's text plus an INTERVAL DAY TO SECOND (its microseconds): the TIMESTAMP's
    text, its fraction kept."""
    left = _date_or_days(stamp)
    if not isinstance(left, datetime):
        raise ora(932, "DATE", "NUMBER")
    return (left + timedelta(microseconds=micros)).isoformat(" ", "microseconds")


def _date_or_days(value: object) -> datetime | Fraction:
    """A value of SQLite's: date text as a datetime, else a number of days."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.strip())
        except ValueError:
            pass
    return _days(value)


def _days(value: object) -> Fraction:
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ora(1722, repr(value))
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except ValueError:
            pass
        try:
            datetime.fromisoformat(value.strip())
        except ValueError:
            raise ora(1722, repr(value)) from None
        raise ora(932, "NUMBER", "DATE")
    raise ora(932, "NUMBER", "BINARY")


def _date_text(text: str) -> datetime:
    """A date's text (ISO 8601) as the datetime (ORA-01861 for other text)."""
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        raise ora(1861) from None


def _cast_date(value: object, to: str) -> str:
    if not isinstance(value, str):
        raise ora(932, "DATE", "NUMBER" if isinstance(value, (int, float)) else "BINARY")
    date = _date_text(value).replace(tzinfo=None)
    if to == "DATE":
        return date.replace(microsecond=0).isoformat(" ")
    return date.isoformat(" ", "microseconds")


def _extract(unit: str, value: object) -> object:
    """``EXTRACT(unit FROM value)`` on SQLite (which has no EXTRACT): of a date's text its
    field; of an INTERVAL DAY TO SECOND's days (``sluice_interval``) its DAY, HOUR, MINUTE
    or SECOND (with the fraction), negative for a negative interval, as Oracle's."""
    if isinstance(value, str):
        date = _date_text(value)
        if unit == "SECOND":
            return date.second + date.microsecond / 1e6
        return getattr(date, unit.lower())
    if not isinstance(value, (int, float)) or unit in ("YEAR", "MONTH"):
        raise ora(30076)
    micros = round(value * MICROSECONDS_A_DAY)
    sign, micros = (-1 if micros < 0 else 1), abs(micros)
    days, micros = divmod(micros, MICROSECONDS_A_DAY)
    hours, micros = divmod(micros, 3_600_000_000)
    minutes, micros = divmod(micros, 60_000_000)
    field = {"DAY": days, "HOUR": hours, "MINUTE": minutes, "SECOND": micros / 1e6}[unit]
    return sign * field


def _trunc_date(date: str, unit: str) -> str:
    """``TRUNC(date, fmt)`` of a view's date (text), ``unit`` the format's: the text of a DATE."""
    return truncate(datetime.fromisoformat(date), unit).isoformat(" ")


def register_add_days(conn: sqlite3.Connection) -> None:
    """Register the functions, each through :func:`.sqlitecalls.oracle_call`: a NULL (or '')
    argument is NULL without running, an Oracle error is kept for the session to raise."""
    for name, impl in (("sluice_add_days", _add_days), ("sluice_date_minus", _date_minus),
                       ("sluice_interval", _interval), ("sluice_add_interval", _add_interval),
                       ("sluice_trunc_date", _trunc_date), ("sluice_round_date", round_date_text),
                       ("sluice_cast_date", _cast_date), ("sluice_extract", _extract)):
        conn.create_function(name, 2, oracle_call(impl), deterministic=True)
