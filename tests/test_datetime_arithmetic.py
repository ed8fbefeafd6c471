"""Oracle's datetime arithmetic through a cursor that Sluice refused or answered otherwise.

Oracle's matrix of datetime arithmetic (SQL Language Reference, "Datetime/Interval
Arithmetic"): DATE - DATE is a NUMBER of days; a TIMESTAMP minus a TIMESTAMP or a DATE
(either way) an INTERVAL DAY TO SECOND, fetched by python-oracledb as a ``timedelta``; an
INTERVAL times or divided by a NUMBER an INTERVAL; a TIMESTAMP plus an INTERVAL DAY TO
SECOND a TIMESTAMP; an INTERVAL compared with a NUMBER ORA-00932.  Sluice refused
``SYSTIMESTAMP - SYSTIMESTAMP``, ``SYSDATE - ADD_MONTHS(SYSDATE, 1)``, ``DATE 'x' - DATE
'y'`` and a view's TIMESTAMP plus an interval on SQLite (SLU-00001), and on SQLite gave an
interval times a number as its days.
"""

from __future__ import annotations

import datetime as dt

import sluice
from tests.sqlhelpers import create_table, query_rows, raised_code
from tests.test_interval_arithmetic import KNOWN, _enqueued_at, _typed


def test_a_date_minus_a_date_the_statement_knows(conn):
    rows, types = _typed(conn, "SELECT DATE '2026-01-31' - DATE '2026-01-01', "
                               "DATE '2026-03-31' - LAST_DAY(DATE '2026-02-03'), "
                               "ADD_MONTHS(DATE '2026-01-31', 1) - DATE '2026-01-31', "
                               "DATE '2026-01-01' - TO_DATE('2026-01-02 12', 'YYYY-MM-DD HH24') FROM dual")
    assert rows == [(30, 31, 28, -1.5)] and types == [sluice.DB_TYPE_NUMBER] * 4
    (back,), = query_rows(conn, "SELECT SYSDATE - ADD_MONTHS(SYSDATE, 1) FROM dual")
    assert -31 <= back <= -28 and back == int(back)
    assert raised_code(lambda: query_rows(conn, "SELECT DATE '2026-01-31' + DATE '2026-01-01' FROM dual")) == "ORA-00975"


def test_a_timestamp_minus_a_datetime_the_statement_knows_is_an_interval(conn):
    rows, types = _typed(conn, "SELECT SYSTIMESTAMP - SYSTIMESTAMP, "
                               "TIMESTAMP '2026-01-31 10:00:00.5' - DATE '2026-01-01', "
                               "DATE '2026-01-01' - TIMESTAMP '2026-01-01 06:00:00', "
                               "SYSDATE - SYSTIMESTAMP(0) FROM dual")
    assert rows == [(dt.timedelta(0), dt.timedelta(days=30, hours=10, microseconds=500000),
                     dt.timedelta(hours=-6), dt.timedelta(0))]
    assert types == [sluice.DB_TYPE_INTERVAL_DS] * 4


def test_an_interval_times_or_by_a_number_is_an_interval(conn):
    _enqueued_at(conn, KNOWN)
    rows, types = _typed(conn, "SELECT NUMTODSINTERVAL(1, 'HOUR') * 2, NUMTODSINTERVAL(1, 'HOUR') / 2, "
                               "3 * INTERVAL '1' MINUTE, (TIMESTAMP '2026-06-01 12:00:00' - enq_timestamp) * 2 "
                               "FROM aq$q_qt")
    assert rows == [(dt.timedelta(hours=2), dt.timedelta(minutes=30), dt.timedelta(minutes=3),
                     dt.timedelta(hours=3, minutes=59, seconds=58, microseconds=500000))]
    assert types == [sluice.DB_TYPE_INTERVAL_DS] * 4
    (hours,), = query_rows(conn, "SELECT (SYSDATE - enq_timestamp) * 24 FROM aq$q_qt")
    assert type(hours) is dt.timedelta          # (DATE - TIMESTAMP: an INTERVAL, times 24)


def test_an_interval_compared_with_a_number_is_refused_as_oracle_refuses_it(conn):
    _enqueued_at(conn, KNOWN)
    assert raised_code(lambda: query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE SYSDATE - enq_timestamp < 1")) \
        == "ORA-00932"
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE SYSDATE - enq_timestamp > INTERVAL '1' DAY") == [(1,)]


def test_a_views_timestamp_plus_an_interval_is_a_timestamp(conn):
    _enqueued_at(conn, KNOWN)
    rows, types = _typed(conn, "SELECT enq_timestamp + INTERVAL '1' HOUR, "
                               "enq_timestamp + NUMTODSINTERVAL(5, 'MINUTE') - INTERVAL '1' SECOND x, "
                               "enq_timestamp - INTERVAL '1' DAY FROM aq$q_qt")
    assert rows == [(KNOWN + dt.timedelta(hours=1), KNOWN + dt.timedelta(minutes=5, seconds=-1),
                     KNOWN - dt.timedelta(days=1))]
    assert types == [sluice.DB_TYPE_TIMESTAMP] * 3
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_timestamp + INTERVAL '1' HOUR "
                       "> TIMESTAMP '2026-06-01 10:30:00'") == [(1,)]


def test_trunc_sysdate_minus_level_is_a_date_a_row(conn):
    today = dt.datetime.now().replace(hour=0, minute=0, second=0, microsecond=0)
    rows, types = _typed(conn, "SELECT TRUNC(SYSDATE) - LEVEL FROM dual CONNECT BY LEVEL <= 3")
    assert rows == [(today - dt.timedelta(days=n),) for n in (1, 2, 3)] and types == [sluice.DB_TYPE_DATE]


def test_round_of_a_date_by_oracles_rules(conn):
    """ROUND(date [, fmt]): the day at noon, the hour at 30 minutes, the minute at 30
    seconds, the month on the 16th, the quarter on the 16th of its second month, the year
    on July 1st (Oracle's "ROUND and TRUNC Date Functions"); a DATE.  SQLite gave the
    year of the date's text, PostgreSQL ORA-00904."""
    rows, types = _typed(conn, "SELECT ROUND(DATE '2026-01-16', 'MM'), ROUND(DATE '2026-01-15', 'MM'), "
                               "ROUND(TIMESTAMP '2026-02-16 00:00:00', 'Q'), ROUND(DATE '2026-02-15', 'Q'), "
                               "ROUND(DATE '2026-07-01', 'YYYY'), ROUND(DATE '2026-06-30', 'YEAR'), "
                               "ROUND(TIMESTAMP '2026-01-01 11:59:59'), ROUND(TIMESTAMP '2026-01-01 12:00:00', 'DD'), "
                               "ROUND(TIMESTAMP '2026-01-01 10:30:00', 'HH24'), "
                               "ROUND(TIMESTAMP '2026-01-01 10:29:30', 'MI') FROM dual")
    d = dt.datetime
    assert rows == [(d(2026, 2, 1), d(2026, 1, 1), d(2026, 4, 1), d(2026, 1, 1), d(2027, 1, 1), d(2026, 1, 1),
                     d(2026, 1, 1), d(2026, 1, 2), d(2026, 1, 1, 11), d(2026, 1, 1, 10, 30))]
    assert types == [sluice.DB_TYPE_DATE] * 10
    now = dt.datetime.now()
    (today,), = query_rows(conn, "SELECT ROUND(SYSDATE) FROM dual")
    assert today.time() == dt.time(0) and abs(today - now) <= dt.timedelta(hours=12, seconds=5)
    assert raised_code(lambda: query_rows(conn, "SELECT ROUND(SYSDATE, 'XX') FROM dual")) == "ORA-01899"
    assert raised_code(lambda: query_rows(conn, "SELECT ROUND(SYSDATE, 'IW') FROM dual")) == "SLU-00001"


def test_round_of_a_views_date_column(conn):
    _enqueued_at(conn, dt.datetime(2026, 8, 16, 12, 29, 30, 600000))
    rows, types = _typed(conn, "SELECT ROUND(enq_time, 'YYYY'), ROUND(enq_time, 'Q'), ROUND(enq_time, 'MM'), "
                               "ROUND(enq_time), ROUND(enq_time, 'HH'), ROUND(enq_timestamp, 'MI') FROM aq$q_qt")
    d = dt.datetime
    assert rows == [(d(2027, 1, 1), d(2026, 10, 1), d(2026, 9, 1), d(2026, 8, 17), d(2026, 8, 16, 12),
                     d(2026, 8, 16, 12, 30))]
    assert types == [sluice.DB_TYPE_DATE] * 6


def test_a_users_timestamp_and_date_columns(conn, dsn):
    """A user's own TIMESTAMP plus an interval is a TIMESTAMP, its difference with SYSDATE an
    interval (times a number too), ROUND of its DATE Oracle's; an interval of a number column
    times a number an interval."""
    create_table(dsn, "CREATE TABLE ut (ts TIMESTAMP, d DATE, n NUMERIC)")
    create_table(dsn, "INSERT INTO ut VALUES ('2026-06-01 10:00:00.5', '2026-06-16 00:00:00', 2)")
    rows, types = _typed(conn, "SELECT ts + INTERVAL '1' HOUR, ts + NUMTODSINTERVAL(5, 'MINUTE'), ROUND(d, 'MM'), "
                               "ROUND(ts, 'HH'), (ts - d) * 2, NUMTODSINTERVAL(n, 'HOUR') * 2 FROM ut")
    ts = dt.datetime(2026, 6, 1, 10, 0, 0, 500000)
    assert rows == [(ts + dt.timedelta(hours=1), ts + dt.timedelta(minutes=5), dt.datetime(2026, 7, 1),
                     dt.datetime(2026, 6, 1, 10), (ts - dt.datetime(2026, 6, 16)) * 2, dt.timedelta(hours=4))]
    assert types == [sluice.DB_TYPE_TIMESTAMP] * 2 + [sluice.DB_TYPE_DATE] * 2 + [sluice.DB_TYPE_INTERVAL_DS] * 2
    (since,), = query_rows(conn, "SELECT (SYSDATE - ts) * 24 FROM ut")
    assert type(since) is dt.timedelta and since > dt.timedelta(days=24 * 100)
    assert raised_code(lambda: query_rows(conn, "SELECT COUNT(*) FROM ut WHERE SYSDATE - ts > 1")) == "ORA-00932"


def test_a_difference_with_a_time_zone_takes_its_instant(conn):
    """Beside a TIMESTAMP WITH TIME ZONE (SYSTIMESTAMP, CURRENT_TIMESTAMP) a datetime without
    one is the session zone's, so in a session five hours ahead of the host SYSTIMESTAMP -
    SYSDATE is about five hours in Oracle; two without a zone differ by their wall clocks."""
    conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+05:00'")
    host = dt.datetime.now().astimezone().utcoffset()
    (zoned, naive, same, local), = query_rows(conn, "SELECT SYSTIMESTAMP - SYSDATE, SYSDATE - LOCALTIMESTAMP, "
                                               "SYSTIMESTAMP - LOCALTIMESTAMP, CURRENT_TIMESTAMP - LOCALTIMESTAMP "
                                               "FROM dual")
    ahead = dt.timedelta(hours=5) - host          # the session's wall clock ahead of the host's
    assert ahead <= zoned < ahead + dt.timedelta(seconds=1)
    assert -ahead - dt.timedelta(seconds=1) < naive <= -ahead
    assert same == local == dt.timedelta(0)


def test_a_views_date_plus_an_interval_bind(conn):
    """A timedelta bind (python-oracledb's INTERVAL DAY TO SECOND) or NUMTODSINTERVAL of a
    bind after a view's date: a TIMESTAMP stays a TIMESTAMP, a DATE a DATE.  SQLite answered
    ``enq_timestamp + NUMTODSINTERVAL(:n, 'MINUTE')`` with the text's year plus days (2026.003)
    and could not bind the timedelta; PostgreSQL typed ``enq_time + :iv`` a TIMESTAMP."""
    _enqueued_at(conn, KNOWN)
    hour = dt.timedelta(hours=1)
    rows, types = _typed(conn, "SELECT enq_timestamp + NUMTODSINTERVAL(:n, 'MINUTE'), enq_timestamp - :iv, "
                               "enq_time + :iv FROM aq$q_qt", {"n": 5, "iv": hour})
    assert rows == [(KNOWN + dt.timedelta(minutes=5), KNOWN - hour, KNOWN.replace(microsecond=0) + hour)]
    assert types == [sluice.DB_TYPE_TIMESTAMP] * 2 + [sluice.DB_TYPE_DATE]


def test_a_timestamp_plus_an_interval_of_a_column(conn, dsn):
    """NUMTODSINTERVAL of a column added to a TIMESTAMP: a TIMESTAMP, its fraction kept, on both
    stores (SQLite: its microseconds computed in SQL for ``sluice_add_interval``; it was refused)."""
    create_table(dsn, "CREATE TABLE ut (ts TIMESTAMP, n NUMERIC)")
    create_table(dsn, "INSERT INTO ut VALUES ('2026-06-01 10:00:00.5', 2)")
    sql = "SELECT ts + NUMTODSINTERVAL(n, 'MINUTE') FROM ut"
    assert query_rows(conn, sql) == [(dt.datetime(2026, 6, 1, 10, 2, 0, 500000),)]


def test_interval_algebra(conn):
    """An interval plus or minus an interval, negated, or summed is an interval (SQLite gave
    its days, a number); an interval plus a number is an error on both stores."""
    _enqueued_at(conn, KNOWN)
    rows, types = _typed(conn, "SELECT NUMTODSINTERVAL(1, 'HOUR') + NUMTODSINTERVAL(30, 'MINUTE'), "
                               "INTERVAL '1' HOUR - INTERVAL '1' MINUTE, -NUMTODSINTERVAL(1, 'HOUR'), "
                               "(TIMESTAMP '2026-06-01 12:00:00' - enq_timestamp) + INTERVAL '1' HOUR "
                               "FROM aq$q_qt")
    two = dt.timedelta(hours=1, minutes=59, seconds=59, microseconds=250000)
    assert rows == [(dt.timedelta(minutes=90), dt.timedelta(minutes=59), -dt.timedelta(hours=1),
                     two + dt.timedelta(hours=1))]
    assert types == [sluice.DB_TYPE_INTERVAL_DS] * 4
    assert _typed(conn, "SELECT SUM(TIMESTAMP '2026-06-01 12:00:00' - enq_timestamp) FROM aq$q_qt") \
        == ([(two,)], [sluice.DB_TYPE_INTERVAL_DS])
    assert raised_code(lambda: query_rows(conn, "SELECT NUMTODSINTERVAL(1, 'HOUR') + 1 FROM dual")) == "ORA-00932"


def test_the_clock_minus_trunc_or_round_of_it(conn):
    """``SYSDATE - TRUNC(SYSDATE)`` (the day's fraction gone by) and its kin: Oracle's days,
    or an interval beside SYSTIMESTAMP (all SLU-00001 before)."""
    before = dt.datetime.now().replace(microsecond=0)
    (gone, month, stamp, whole), = query_rows(conn, "SELECT SYSDATE - TRUNC(SYSDATE), TRUNC(SYSDATE) - TRUNC(SYSDATE, "
                                               "'MM'), SYSTIMESTAMP - TRUNC(SYSDATE), ROUND(SYSDATE) - TRUNC(SYSDATE) "
                                               "FROM dual")
    midnight = before.replace(hour=0, minute=0, second=0)
    assert (before - midnight) / dt.timedelta(days=1) - 1e-9 <= gone < 1
    assert month == before.day - 1 and whole in (0, 1)
    assert type(stamp) is dt.timedelta and before - midnight <= stamp < dt.timedelta(days=1)
    assert query_rows(conn, "SELECT TRUNC(DATE '2026-03-15', 'MM') - TRUNC(DATE '2026-03-15', 'YYYY'), "
                       "ROUND(DATE '2026-03-16', 'MM') - DATE '2026-03-16' FROM dual") == [(59, 16)]


def test_extract_of_a_field_an_interval_has_not(conn):
    """EXTRACT(YEAR | MONTH FROM an INTERVAL DAY TO SECOND) is ORA-30076 in Oracle; SQLite's
    sluice_extract raised it from a code the error catalogue had not (ORA-00900 came back),
    PostgreSQL answered 0."""
    _enqueued_at(conn, KNOWN)
    for sql in ("SELECT EXTRACT(YEAR FROM (SYSTIMESTAMP - enq_timestamp)) FROM aq$q_qt",
                "SELECT EXTRACT(MONTH FROM NUMTODSINTERVAL(40, 'DAY')) FROM dual"):
        assert raised_code(lambda: query_rows(conn, sql)) == "ORA-30076", sql
    assert query_rows(conn, "SELECT EXTRACT(DAY FROM NUMTODSINTERVAL(40, 'DAY')), EXTRACT(YEAR FROM enq_time) "
                       "FROM aq$q_qt") == [(40, 2026)]


def test_a_timedelta_bind_standing_alone(conn):
    """A timedelta bind (INTERVAL DAY TO SECOND) alone, times a number, or compared with an
    interval: SQLite could not bind it (DPY-3002); now its days, fetched as a timedelta."""
    _enqueued_at(conn, KNOWN)
    hour = {"iv": dt.timedelta(hours=1)}
    rows, types = _typed(conn, "SELECT :iv * 2, :iv FROM dual", hour)
    assert rows == [(dt.timedelta(hours=2), dt.timedelta(hours=1))] and types == [sluice.DB_TYPE_INTERVAL_DS] * 2
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE TIMESTAMP '2026-06-01 12:00:00' - enq_timestamp > :iv",
                 hour) == [(1,)]


def test_trunc_or_round_of_date_arithmetic_is_refused_not_null(conn):
    """TRUNC / ROUND of a date plus or minus days (a date): SQLite answered NULL, PostgreSQL
    ORA-00932 (expected NUMBER); refused alike now.  Of a difference of dates it is a number's."""
    _enqueued_at(conn, KNOWN)
    for sql in ("SELECT TRUNC(SYSDATE + 1) FROM dual", "SELECT ROUND(enq_time - 1) FROM aq$q_qt"):
        assert raised_code(lambda: query_rows(conn, sql)) == "SLU-00001", sql
    assert query_rows(conn, "SELECT TRUNC(DATE '2026-06-02' - enq_time), ROUND(DATE '2026-06-02' - "
                            "TRUNC(DATE '2026-05-01', 'MM'), 1) FROM aq$q_qt") == [(0, 32)]
