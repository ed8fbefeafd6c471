"""datetime, date and timedelta binds at a cursor answer as python-oracledb and Oracle
answer them, on both stores: python-oracledb binds a date or datetime as an Oracle DATE
(whole seconds, the fraction dropped) and a timedelta as an INTERVAL DAY TO SECOND, so
``:t + 1`` is a day later, ``SYSDATE - :t`` the days between (a NUMBER), ``SYSDATE - :d``
an interval earlier, ``enq_time > :since`` compares dates (also against the AQ$ views,
whose dates are the session zone's, off UTC), ``SELECT :t`` fetches a datetime typed DB_TYPE_DATE, and
``DATE + DATE`` is ORA-00975."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue
from tests.test_dual import india  # noqa: F401  (india: a fixture)
from tests.sqlhelpers import create_table, query_rows, raised_code

T = dt.datetime(2026, 1, 2, 3, 4, 5, 678901)
WHOLE = T.replace(microsecond=0)


def test_a_datetime_bind_is_a_date(conn):
    cur = conn.cursor()
    cur.execute("SELECT :t, :t + 1, :d, 1 + :t, :t - 1/24 FROM dual", {"t": T, "d": dt.date(2026, 5, 6)})
    assert cur.fetchall() == [(WHOLE, WHOLE + dt.timedelta(days=1), dt.datetime(2026, 5, 6),
                               WHOLE + dt.timedelta(days=1), WHOLE - dt.timedelta(hours=1))]
    assert [d[1:] for d in cur.description] == [(sluice.DB_TYPE_DATE, 23, None, None, None, True)] * 5
    # by position, among other binds that keep their places
    assert query_rows(conn, "SELECT :1, :2 + 2, :3 FROM dual", ["a", T, 3]) == [("a", WHOLE + dt.timedelta(days=2), 3)]


def test_a_date_minus_a_date_is_days(conn):
    (sysdate, days, back), = query_rows(conn, "SELECT SYSDATE, SYSDATE - :t, :t - :u FROM dual",
                                        {"t": T, "u": T - dt.timedelta(days=1, hours=12)})
    assert days == pytest.approx((sysdate - WHOLE) / dt.timedelta(days=1))
    assert back == 1.5 and type(back) is float
    assert query_rows(conn, "SELECT (:t - :u) * 24 FROM dual", {"t": T, "u": T - dt.timedelta(days=2)}) == [(48,)]


def test_a_timedelta_bind_is_an_interval(conn):
    (sysdate, earlier, later, shifted), = query_rows(
        conn, "SELECT SYSDATE, SYSDATE - :d, :d + SYSDATE, :t + :d FROM dual",
        {"d": dt.timedelta(hours=1, minutes=30), "t": T})
    assert earlier == sysdate - dt.timedelta(hours=1, minutes=30)
    assert later == sysdate + dt.timedelta(hours=1, minutes=30)
    assert shifted == WHOLE + dt.timedelta(hours=1, minutes=30)


def test_date_plus_date_is_ora_00975(conn):
    assert raised_code(lambda: query_rows(conn, "SELECT SYSDATE + :t FROM dual", [T])) == "ORA-00975"
    assert raised_code(lambda: query_rows(conn, "SELECT :t + :t FROM dual", {"t": T})) == "ORA-00975"
    assert raised_code(lambda: query_rows(conn, "SELECT SYSDATE - :t * 2 FROM dual", [T])) == "ORA-00932"


def test_a_datetime_bind_against_a_column(conn, dsn):
    create_table(dsn, "CREATE TABLE stamps (n INTEGER, at TIMESTAMP)")
    cur = conn.cursor()
    for n in (1, 2, 3):
        cur.execute("INSERT INTO stamps (n, at) VALUES (:n, :at)", {"n": n, "at": T + dt.timedelta(days=n)})
    assert query_rows(conn, "SELECT at FROM stamps WHERE n = 1") in ([(WHOLE + dt.timedelta(days=1),)],
                                                              [(str(WHOLE + dt.timedelta(days=1)),)])
    assert query_rows(conn, "SELECT n FROM stamps WHERE at > :since ORDER BY n", {"since": T + dt.timedelta(days=2)}) \
        == [(3,)]
    assert query_rows(conn, "SELECT n FROM stamps WHERE at BETWEEN :a AND :b ORDER BY n",
                      [T + dt.timedelta(days=1), T + dt.timedelta(days=2)]) == [(1,), (2,)]
    # a TIMESTAMP minus a DATE (a datetime bind is one): Oracle's INTERVAL DAY TO SECOND
    assert query_rows(conn, "SELECT n, at - :t FROM stamps ORDER BY n", {"t": WHOLE}) == \
        [(n, dt.timedelta(days=n)) for n in (1, 2, 3)]
    cur.execute("DELETE FROM stamps WHERE at < :t + 2", {"t": T})
    assert cur.rowcount == 1


def test_a_datetime_bind_against_an_aq_view(india, conn):  # noqa: F811
    """The AQ$ views' dates are the session zone's wall clock, here the host's (5:30 ahead
    of UTC at logon): a datetime bind of the host's wall clock compares with them as it is."""
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    now = dt.datetime.now()
    hour = dt.timedelta(hours=1)
    sql = "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time > :since"
    assert [query_rows(conn, sql, {"since": t}) for t in (now - hour, now + hour)] == [[(1,)], [(0,)]]
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time > SYSDATE - :d", {"d": hour}) == [(1,)]


# -- days in a column ----------------------------------------------------------------------

def _days_table(conn, dsn):
    create_table(dsn, "CREATE TABLE plans (n INTEGER, days NUMERIC(6,3), note VARCHAR(20), at TIMESTAMP)")
    cur = conn.cursor()
    for n, days, note in ((1, 1, "2"), (2, 0.5, "x"), (3, None, "1.5")):
        cur.execute("INSERT INTO plans (n, days, note, at) VALUES (:1, :2, :3, :4)", [n, days, note, T])


def test_a_date_plus_a_column_of_days(conn, dsn):
    """``SYSDATE + column`` (and ``column + :t``) adds the column's days, a DATE typed so
    and rounded to the second, NULL for a NULL; text Oracle reads as a number is one."""
    _days_table(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT n, SYSDATE, SYSDATE + days, days + :t AS later FROM plans ORDER BY n", {"t": T})
    rows = cur.fetchall()
    assert [d[1] for d in cur.description[2:]] == [sluice.DB_TYPE_DATE] * 2
    assert [d[0] for d in cur.description[2:]] == ["SYSDATE+DAYS", "LATER"]
    day = dt.timedelta(days=1)
    sysdate = rows[0][1]
    assert [r[2:] for r in rows] == [(sysdate + day, WHOLE + day), (sysdate + day / 2, WHOLE + day / 2),
                                     (None, None)]
    assert query_rows(conn, "SELECT :t + note FROM plans WHERE n IN (1, 3) ORDER BY n", {"t": T}) == \
        [(WHOLE + 2 * day,), (WHOLE + 1.5 * day,)]
    assert query_rows(conn, "SELECT n FROM plans WHERE :t + days > :t + 0.75 ORDER BY n", {"t": T}) == [(1,)]


def test_a_date_plus_a_column_that_is_no_number_is_refused(conn, dsn):
    _days_table(conn, dsn)
    assert raised_code(lambda: query_rows(conn, "SELECT SYSDATE + at FROM plans")) == "ORA-00932"       # DATE + DATE
    assert raised_code(lambda: query_rows(conn, "SELECT SYSDATE + note FROM plans")) == "ORA-01722"     # 'x'


# -- the views' DATE columns ---------------------------------------------------------------

def test_date_arithmetic_on_a_views_date_column(conn):
    """``enq_time + 1`` is a DATE a day later (PostgreSQL had no timestamp + integer,
    SQLite added 1 to the text's year), ``enq_time - enq_time`` days; the views' dates are the session zone's (the host's)."""
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    now = dt.datetime.now()
    cur = conn.cursor()
    cur.execute("SELECT enq_time + 1/24, q.enq_time - :d AS back, enq_time - enq_time FROM aq$q_qt q", {"d": 2})
    (later, back, zero), = cur.fetchall()
    assert type(later) is dt.datetime and later.microsecond == 0
    assert abs(later - (now + dt.timedelta(hours=1))) < dt.timedelta(minutes=1)
    assert abs(back - (now - dt.timedelta(days=2))) < dt.timedelta(minutes=1)
    assert zero == 0 and type(zero) is int
    assert [d[:2] for d in cur.description] == [("ENQ_TIME+1/24", sluice.DB_TYPE_DATE), ("BACK", sluice.DB_TYPE_DATE),
                                                ("ENQ_TIME-ENQ_TIME", sluice.DB_TYPE_NUMBER)]
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time + 1 > SYSDATE AND enq_time - 1 < SYSDATE") \
        == [(1,)]
    assert raised_code(lambda: query_rows(conn, "SELECT enq_time + enq_time FROM aq$q_qt")) == "ORA-00975"


def test_sqlite_tells_a_column_of_days_after_sysdate_minus(conn, dsn):
    """``SYSDATE - column`` is the time between for a date in the column (a TIMESTAMP
    column's: an INTERVAL DAY TO SECOND); SQLite's values carry their type, so a number
    there is days back, a DATE (was: julianday of the number, a wrong number of days).
    PostgreSQL's typed column is taken for a date."""
    _days_table(conn, dsn)
    (sysdate, age), = query_rows(conn, "SELECT SYSDATE, SYSDATE - at FROM plans WHERE n = 1")
    assert age == sysdate - WHOLE
    assert query_rows(conn, "SELECT COUNT(*) FROM plans WHERE at < SYSDATE") == [(3,)]
    if dsn.startswith("sqlite"):
        cur = conn.cursor()
        cur.execute("SELECT SYSDATE, SYSDATE - days FROM plans ORDER BY n")
        rows = cur.fetchall()
        assert [r[1] for r in rows] == [rows[0][0] - dt.timedelta(days=1), rows[0][0] - dt.timedelta(hours=12),
                                        None]
        assert cur.description[1][1] is sluice.DB_TYPE_DATE
        assert raised_code(lambda: query_rows(conn, "SELECT days - SYSDATE FROM plans")) == "ORA-00932"


def test_a_cast_of_the_clock_or_a_datetime_bind_is_oracles(conn):
    """CAST(SYSDATE | SYSTIMESTAMP | CURRENT_TIMESTAMP | a datetime bind AS DATE | TIMESTAMP)
    answers a naive datetime, CAST to DATE without the fraction of a second (SQLite's CAST
    read the clock's text as its year; PostgreSQL's DATE dropped the time of day)."""
    cur = conn.cursor()
    cur.execute("SELECT SYSTIMESTAMP, CAST(SYSDATE AS TIMESTAMP), CAST(SYSTIMESTAMP AS DATE), "
                "CAST(CURRENT_TIMESTAMP AS TIMESTAMP), CAST(SYSDATE - 1 AS DATE), CAST(:t AS TIMESTAMP), "
                "CAST(:t + 1/24 AS DATE) AS h FROM dual", {"t": T})
    now, sysdate, whole, stamp, yesterday, bound, hour = cur.fetchone()
    assert all(type(v) is dt.datetime for v in (sysdate, whole, stamp, yesterday)), (sysdate, whole, stamp)
    assert sysdate == now.replace(microsecond=0) == whole and stamp == now
    assert yesterday == sysdate - dt.timedelta(days=1)
    assert (bound, hour) == (WHOLE, WHOLE + dt.timedelta(hours=1))
    assert [d[:2] for d in cur.description][1:] == [
        ("CAST(SYSDATEASTIMESTAMP)", sluice.DB_TYPE_TIMESTAMP), ("CAST(SYSTIMESTAMPASDATE)", sluice.DB_TYPE_DATE),
        ("CAST(CURRENT_TIMESTAMPASTIMESTAMP)", sluice.DB_TYPE_TIMESTAMP), ("CAST(SYSDATE-1ASDATE)", sluice.DB_TYPE_DATE),
        ("CAST(:TASTIMESTAMP)", sluice.DB_TYPE_TIMESTAMP), ("H", sluice.DB_TYPE_DATE)]
    # in a WHERE clause too, and a CAST of anything else is the database's
    assert query_rows(conn, "SELECT COUNT(*) FROM dual WHERE CAST(:t AS DATE) < CAST(SYSDATE AS TIMESTAMP)",
                      {"t": T}) == [(1,)]
    assert query_rows(conn, "SELECT CAST('7' AS INTEGER) FROM dual") == [(7,)]


def test_a_cast_to_date_keeps_the_time_of_day(conn, dsn):
    """PostgreSQL's DATE is a day; Oracle's keeps the time to the second: CAST(x AS DATE) of
    a user's timestamp column is that time without its fraction (it was a datetime.date)."""
    create_table(dsn, "CREATE TABLE stamps (n INTEGER, at TIMESTAMP)")
    conn.cursor().execute("INSERT INTO stamps (n, at) VALUES (1, :at)", {"at": T})
    conn.cursor().execute("INSERT INTO stamps (n, at) VALUES (2, :at)", {"at": T + dt.timedelta(hours=1)})
    assert query_rows(conn, "SELECT n FROM stamps WHERE at >= CAST(:t + 1/24 AS DATE)", {"t": T}) == [(2,)]
    if dsn.startswith("postgresql"):        # (SQLite's column is the text it was given)
        cur = conn.cursor()
        cur.execute("SELECT CAST(at AS DATE), CAST(at AS TIMESTAMP) FROM stamps WHERE n = 1")
        assert cur.fetchall() == [(WHOLE, WHOLE)]
        assert [d[:2] for d in cur.description] == [("CAST(ATASDATE)", sluice.DB_TYPE_DATE),
                                                    ("CAST(ATASTIMESTAMP)", sluice.DB_TYPE_TIMESTAMP)]
