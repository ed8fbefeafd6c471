"""The DATE columns of Sluice's views, and Oracle's DATE arithmetic on them in each store's SQL.

A user's ``enq_time + 1`` on an AQ$ view is a day after the message was enqueued in
Oracle; neither database reads it so (PostgreSQL has no ``timestamp + integer``, SQLite
adds 1 to the year of its text).  :mod:`.sqloracle` knows the column is a date when the
statement is on Sluice's views and the column is one of :data:`VIEW_DATES` (a DATE in
every view that has it: ``tests/store/test_viewdates.py`` checks the list against the
views' own types), and writes the arithmetic with :func:`plus_days` and
:func:`days_between` — which also serve ``SYSDATE + column`` and (PostgreSQL's)
``SYSDATE - column``.  :mod:`.sqlheadings` types them so that SQLite, whose views hold
their dates as text, fetches them as datetimes.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["VIEW_DATES", "VIEW_TIMESTAMPS", "days_between", "plus_days", "plus_interval", "truncated", "view_kind",
           "whole_seconds"]

VIEW_DATES = frozenset({
    "APPLIED_MESSAGE_CREATE_TIME", "APPLY_TIME", "CAPTURE_MESSAGE_CREATE_TIME", "CAPTURE_TIME", "CREATED",
    "CURRENT_START_DATE", "DELAY", "DELAY_TIMESTAMP", "DEQUEUE_TIME", "DEQ_TIME", "DEQ_TIMESTAMP",
    "ENQUEUE_MESSAGE_CREATE_TIME", "ENQUEUE_TIME", "ENQ_TIME", "ENQ_TIMESTAMP", "ERROR_CREATION_TIME",
    "ERROR_DATE", "FIRST_MESSAGE_CREATE_TIME", "HWM_TIME", "LAST_ERROR_DATE", "LAST_MSG_ENQUEUE_TIME",
    "LAST_RECEIVED_MSG_TIME", "LAST_RUN_DATE", "NEXT_RUN_DATE", "OLDEST_MSG_ENQTM", "REG_TIME",
    "SPILL_CREATION_TIME", "STARTUP_TIME", "START_DATE", "STATE_CHANGED_TIME", "STATUS_CHANGE_TIME",
    "LOGON_TIME",       # V$SESSION's, rows given per statement (instanceviews.py)
    "FIRST_ACTIVITY_TIME", "LAST_ENQUEUE_TIME", "LAST_DEQUEUE_TIME",   # V$PERSISTENT_QUEUES'
})
# those of them that are Oracle TIMESTAMPs (fractional seconds; a difference with one is an
# INTERVAL DAY TO SECOND): the AQ$ views' ENQ_/DEQ_/DELAY_TIMESTAMP, V$PERSISTENT_QUEUES'
# TIMESTAMP(6) activity times and oldest message, DBA_SUBSCR_REGISTRATIONS' REG_TIME (WITH
# TIME ZONE).  The others are DATEs: whole seconds (:func:`whole_seconds`), the fraction the
# store keeps dropped as ``CAST(… AS DATE)`` drops it (DESIGN-NOTES "DATE and TIMESTAMP
# columns of the views").
VIEW_TIMESTAMPS = frozenset({
    "ENQ_TIMESTAMP", "DEQ_TIMESTAMP", "DELAY_TIMESTAMP", "FIRST_ACTIVITY_TIME", "LAST_ENQUEUE_TIME",
    "LAST_DEQUEUE_TIME", "OLDEST_MSG_ENQTM", "REG_TIME",
})


def view_kind(column: str) -> str | None:
    """``DATE`` or ``TIMESTAMP`` for a date column of the views (upper-cased name), else None."""
    if column not in VIEW_DATES:
        return None
    return "TIMESTAMP" if column in VIEW_TIMESTAMPS else "DATE"


def whole_seconds(sqlite: bool, date: str) -> str:
    """SQL for the view's DATE column ``date`` as Oracle's DATE: its fraction dropped (the
    stores keep the enqueue time to the microsecond for the TIMESTAMP beside it)."""
    if sqlite:
        return f"sluice_cast_date({date}, 'DATE')"
    return f"date_trunc('second', {date})"


def plus_days(sqlite: bool, date: str, days: str) -> str:
    """SQL for the DATE ``date`` plus ``days`` (SQL text both), rounded to the second as
    Oracle's DATE (a timestamp's fraction dropped first, as :func:`.sqlclock.add_days`): SQLite by ``sluice_add_days`` (:mod:`.sqlitedays`), PostgreSQL as an
    interval of days (a date where the days are is no DOUBLE PRECISION: ORA-00932)."""
    if sqlite:
        return f"sluice_add_days({date}, {days})"
    return (f"date_trunc('second', date_trunc('second', CAST(({date}) AS TIMESTAMP))"   # (the fraction dropped first)
            f" + CAST(({days}) AS DOUBLE PRECISION) * INTERVAL '1 day' + INTERVAL '0.5 second')")


def plus_interval(stamp: str, seconds: Fraction, more: str = "") -> str:
    """SQLite's SQL for the TIMESTAMP ``stamp`` (SQL text) plus an INTERVAL DAY TO SECOND of
    ``seconds`` (and ``more``: SQL adding or taking run-time microseconds): a TIMESTAMP, its
    fraction kept (``sluice_add_interval``, :mod:`.sqlitedays`; PostgreSQL adds its own
    intervals)."""
    return f"sluice_add_interval({stamp}, {round(seconds * 10**6)}{more})"


def days_between(sqlite: bool, a: str, b: str) -> str:
    """SQL for the DATE ``a`` minus the DATE ``b``: Oracle's number of days between."""
    if sqlite:
        return f"(julianday({a}) - julianday({b}))"
    return f"CAST(EXTRACT(EPOCH FROM (({a}) - ({b}))) / 86400 AS DOUBLE PRECISION)"


def interval_between(sqlite: bool, a: str, b: str) -> str:
    """SQL for ``a`` minus ``b``, a TIMESTAMP among them: Oracle's INTERVAL DAY TO SECOND —
    on SQLite its days by ``sluice_interval`` (:mod:`.sqlitedays`; fetched as a
    ``timedelta``, the item typed so by :mod:`.sqlheadings`), PostgreSQL's interval."""
    if sqlite:
        return f"sluice_interval({a}, {b})"
    return f"(CAST({a} AS TIMESTAMP) - CAST({b} AS TIMESTAMP))"


def truncated(sqlite: bool, date: str, unit: str) -> str:
    """SQL for ``TRUNC(date, fmt)`` of a DATE column, ``unit`` the format's
    (:func:`.sqlclock.trunc_unit`): SQLite by ``sluice_trunc_date`` (:mod:`.sqlitedays`),
    PostgreSQL by ``date_trunc``."""
    if sqlite:
        return f"sluice_trunc_date({date}, '{unit}')"
    return f"date_trunc('{unit}', {date})"
