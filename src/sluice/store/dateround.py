"""Oracle's ``ROUND(date [, 'fmt'])`` in a user's SQL: the date rounded to a unit, a DATE.

Oracle's rules (SQL Language Reference, "ROUND and TRUNC Date Functions"): to the day (no
format, ``DD``) a time of noon or later rounds up, to the hour at 30 minutes, to the minute
at 30 seconds; to the month (``MM``, ``MON`` …) on the sixteenth day; to the quarter (``Q``)
on the sixteenth day of the quarter's second month; to the year (``YYYY`` …) on July 1st.
The formats are TRUNC's (:func:`.sqlclock.trunc_unit`: weeks and centuries SLU-00001, a
format that is none of Oracle's ORA-01899).  :mod:`.sqloracle` folds ROUND of the clock, a
datetime bind or a literal with :func:`rounded`; of a view's or a user's date column it
writes :func:`round_sql` — SQLite's ``sluice_round_date`` (registered by
:mod:`.sqlitedays`), PostgreSQL's ``date_trunc`` of the date moved on by half a unit (or a
CASE, months being of unequal length).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .sqlclock import truncate

__all__ = ["round_sql", "rounded"]

# the units rounded up at half of them: what is added before truncating
_HALF = {"day": timedelta(hours=12), "hour": timedelta(minutes=30), "minute": timedelta(seconds=30)}
_PG_HALF = {"day": "12 hours", "hour": "30 minutes", "minute": "30 seconds"}


def rounded(value: datetime, unit: str) -> datetime:
    """``ROUND(value, fmt)``, ``unit`` the format's (:func:`.sqlclock.trunc_unit`): a DATE."""
    value = value.replace(microsecond=0)
    if unit in _HALF:
        return truncate(value + _HALF[unit], unit)
    start = truncate(value, unit)
    if unit == "month":
        up = value.day >= 16
        return _months_on(start, 1) if up else start
    if unit == "quarter":
        up = (value.month - start.month, value.day) >= (1, 16)
        return _months_on(start, 3) if up else start
    return start.replace(year=start.year + 1) if value.month >= 7 else start       # the year


def round_sql(sqlite: bool, date: str, unit: str) -> str:
    """SQL for ``ROUND(date, fmt)`` of a date column (SQL text ``date``; on PostgreSQL a
    timestamp), ``unit`` the format's."""
    if sqlite:
        return f"sluice_round_date({date}, '{unit}')"
    whole = f"date_trunc('second', {date})"
    if unit in _PG_HALF:
        return f"date_trunc('{unit}', {whole} + INTERVAL '{_PG_HALF[unit]}')"
    start = f"date_trunc('{unit}', {whole})"
    up = {"month": (f"EXTRACT(DAY FROM {whole}) >= 16", "1 month"),
          "quarter": (f"{whole} >= {start} + INTERVAL '1 month 15 days'", "3 months"),
          "year": (f"EXTRACT(MONTH FROM {whole}) >= 7", "1 year")}
    test, step = up[unit]
    return f"({start} + CASE WHEN {test} THEN INTERVAL '{step}' ELSE INTERVAL '0 seconds' END)"


def round_date_text(date: str | None, unit: str) -> str | None:
    """SQLite's ``sluice_round_date``: ROUND of a date's text, the text of a DATE."""
    if date is None:
        return None
    return rounded(datetime.fromisoformat(date), unit).isoformat(" ")


def _months_on(start: datetime, months: int) -> datetime:
    """The first of the month ``months`` after ``start`` (a first of a month)."""
    month = start.month - 1 + months
    return start.replace(year=start.year + month // 12, month=month % 12 + 1)
