"""The views' date columns fetched through a cursor as python-oracledb fetches a DATE or
TIMESTAMP: a naive datetime, described DB_TYPE_DATE (whole seconds) or DB_TYPE_TIMESTAMP as
Oracle's views type them (viewdates.VIEW_TIMESTAMPS) — also on SQLite, whose views hold the dates as text (it gave '2026-…' described VARCHAR) —
through ``*``, a subquery and an alias there, MAX / MIN, with a column of NULLs described so too; the date
arithmetic on them stays a DATE."""

from __future__ import annotations

import datetime as dt

import sluice
from tests.conftest import make_queue
from tests.sqlhelpers import query_rows, raised_code


def _enqueued(conn) -> dt.datetime:
    """Enqueue one message on Q; the wall-clock time about then (the views' dates are the
    session zone's, by default the host's)."""
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    return dt.datetime.now()


def _near(value, now) -> bool:
    return type(value) is dt.datetime and value.tzinfo is None and abs(value - now) < dt.timedelta(minutes=1)


def test_a_views_date_columns_fetch_as_datetimes(conn):
    now = _enqueued(conn)
    cur = conn.cursor()
    cur.execute("SELECT enq_time, q.deq_time, enq_timestamp AS ts, msg_state FROM aq$q_qt q")
    (enq, deq, ts, state), = cur.fetchall()
    assert _near(enq, now) and ts.replace(microsecond=0) == enq and deq is None and state == "READY"
    assert enq.microsecond == 0         # an Oracle DATE: whole seconds (the TIMESTAMP beside it has them)
    assert [d[:2] for d in cur.description] == [
        ("ENQ_TIME", sluice.DB_TYPE_DATE), ("DEQ_TIME", sluice.DB_TYPE_DATE),   # DEQ_TIME: NULLs only
        ("TS", sluice.DB_TYPE_TIMESTAMP), ("MSG_STATE", sluice.DB_TYPE_VARCHAR)]
    assert cur.description[0][1:] == (sluice.DB_TYPE_DATE, 23, None, None, None, True)
    assert cur.description[2][1:] == (sluice.DB_TYPE_TIMESTAMP, 23, None, 0, 6, True)


def test_a_star_a_subquery_and_max_keep_the_dates(conn):
    now = _enqueued(conn)
    cur = conn.cursor()
    cur.execute("SELECT * FROM aq$q_qt")
    row, = cur.fetchall()
    types = {d[0]: d[1] for d in cur.description}
    named = dict(zip(types, row))
    assert _near(named["ENQ_TIME"], now) and named["DEQ_TIME"] is None
    assert types["ENQ_TIME"] is types["DEQ_TIME"] is types["DELAY"] is sluice.DB_TYPE_DATE
    assert types["ENQ_TIMESTAMP"] is types["DELAY_TIMESTAMP"] is sluice.DB_TYPE_TIMESTAMP
    assert types["MSG_STATE"] is sluice.DB_TYPE_VARCHAR
    (inner,), = query_rows(conn, "SELECT x.enq_time FROM (SELECT * FROM aq$q_qt) x")
    (most, least, later), = query_rows(conn, "SELECT MAX(x.enq_time), MIN(enq_time), MAX(enq_time + 1) "
                                        "FROM (SELECT * FROM aq$q_qt) x")
    assert inner == most == least == named["ENQ_TIME"]
    cur.execute("WITH w AS (SELECT q.enq_time AS at, msg_state FROM aq$q_qt q ORDER BY enq_time DESC) "
                "SELECT at, msg_state FROM w")                  # an alias of a view's date
    assert cur.fetchall() == [(inner, "READY")] and cur.description[0][1] is sluice.DB_TYPE_DATE
    assert later.microsecond == 0 and abs(later - inner - dt.timedelta(days=1)) < dt.timedelta(seconds=1)   # a DATE


def test_fetched_view_dates_compare_with_binds_and_the_clock(conn):
    """The datetimes fetched are the views' dates: a bind of one finds its row."""
    _enqueued(conn)
    (enq,), = query_rows(conn, "SELECT enq_time FROM aq$q_qt")
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time >= :t", {"t": enq.replace(microsecond=0)}) \
        == [(1,)]
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time > SYSDATE - 1/24") == [(1,)]


def test_v_session_logon_time_is_a_date(conn):
    cur = conn.cursor()
    cur.execute("SELECT logon_time FROM v$session WHERE username = USER")
    (logon,), *_ = cur.fetchall()
    assert _near(logon, dt.datetime.now()) and logon.microsecond == 0
    assert cur.description[0][1] is sluice.DB_TYPE_DATE


def test_the_dashboards_error_queue_shows_the_creation_time_as_before(conn):
    """dashboard/errorqueue read DBA_APPLY_ERROR's ERROR_CREATION_TIME as text on SQLite
    (str() of it); now a datetime on both stores, shown to the millisecond as SQLite's text was
    — an Oracle DATE, so whole seconds (the store keeps the fraction)."""
    from sluice.dashboard.errorqueue import read_errors
    conn.cursor().execute("ALTER SESSION SET TIME_ZONE = '+00:00'")     # (the views' dates are the session's)
    conn.cursor().execute(
        "INSERT INTO SLUICE_APPLY_ERROR (LOCAL_TRANSACTION_ID, APPLY_NAME, QUEUE_OWNER, QUEUE_NAME, MESSAGE_NUMBER, "
        "ERROR_NUMBER, ERROR_MESSAGE, MESSAGE_COUNT, ERROR_CREATION_TIME, KIND, MESSAGES) VALUES ('7.7.7', 'A1', "
        "'SLUICE', 'Q', 1, 1, 'ORA-00001: unique constraint', 1, 86400.25, 'USER', '[]')")
    count, (entry,) = read_errors(conn)
    assert count == 1 and entry["created"] == "1970-01-02 00:00:00.000"



def test_trunc_of_a_date_is_a_date(conn):
    """``TRUNC(date [, 'fmt'])`` of a view's date, the clock or a datetime bind: a DATE at
    the start of its day (month, quarter, year, hour, minute).  SQLite answered NULL (its
    TRUNC is of numbers), PostgreSQL ORA-00904 (it has no trunc of a timestamp)."""
    _enqueued(conn)
    cur = conn.cursor()
    cur.execute("SELECT enq_time, TRUNC(enq_time), TRUNC(q.enq_time, 'MM') AS m, TRUNC(SYSDATE), "
                "TRUNC(:t, 'Q'), TRUNC(:t, 'yyyy'), TRUNC(:t, 'HH24') + 1/24, TRUNC(:t, 'MI'), TRUNC(2.5) "
                "FROM aq$q_qt q", {"t": dt.datetime(2026, 8, 9, 10, 11, 12, 13)})
    (enq, day, month, today, quarter, year, hour, minute, number), = cur.fetchall()
    assert day == enq.replace(hour=0, minute=0, second=0, microsecond=0) and month == day.replace(day=1)
    assert today == dt.datetime.now().replace(hour=0, minute=0, second=0, microsecond=0) or \
        today == dt.datetime.now().replace(hour=0, minute=0, second=0, microsecond=0) - dt.timedelta(days=1)
    assert (quarter, year, hour, minute) == (dt.datetime(2026, 7, 1), dt.datetime(2026, 1, 1),
                                             dt.datetime(2026, 8, 9, 11), dt.datetime(2026, 8, 9, 10, 11))
    assert number == 2
    assert [d[:2] for d in cur.description][1:4] == [("TRUNC(ENQ_TIME)", sluice.DB_TYPE_DATE),
                                                     ("M", sluice.DB_TYPE_DATE), ("TRUNC(SYSDATE)", sluice.DB_TYPE_DATE)]
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE TRUNC(enq_time) >= TRUNC(SYSDATE) - 1") == [(1,)]
    assert raised_code(lambda: query_rows(conn, "SELECT TRUNC(SYSDATE, 'XX') FROM dual")) == "ORA-01899"
    assert raised_code(lambda: query_rows(conn, "SELECT TRUNC(SYSDATE, 'IW') FROM dual")) == "SLU-00001"
    assert raised_code(lambda: query_rows(conn, "SELECT TRUNC(enq_time) + 1 FROM aq$q_qt")) == "SLU-00001"


def test_a_views_date_under_nvl_coalesce_case_or_cast_is_a_date(conn):
    """A view's date as NVL's or COALESCE's argument, a CASE's value or CAST to DATE or
    TIMESTAMP: a datetime when every branch is a date or NULL (SQLite gave its text, and
    a number -- the year -- for a CAST; PostgreSQL a datetime.date for CAST AS DATE)."""
    now = _enqueued(conn)
    cur = conn.cursor()
    cur.execute("SELECT NVL(deq_time, enq_time), COALESCE(deq_time, NULL, q.enq_time) AS c, "
                "CASE WHEN msg_state = 'READY' THEN enq_time ELSE NULL END, "
                "CASE msg_state WHEN 'X' THEN deq_time ELSE CASE WHEN 1 = 1 THEN enq_time END END AS k, "
                "CAST(enq_time AS DATE), CAST(q.enq_time AS TIMESTAMP) AS t, "
                "NVL(enq_time, SYSDATE - 1), NVL(CAST(deq_time AS DATE), enq_time) "
                "FROM aq$q_qt q")
    row, = cur.fetchall()
    assert all(_near(v, now) for v in row), row
    assert len(set(row)) == 1 and row[0].microsecond == 0     # the same DATE, whole seconds
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_DATE] * 5 + [sluice.DB_TYPE_TIMESTAMP] + \
        [sluice.DB_TYPE_DATE] * 2          # (a DATE CAST AS TIMESTAMP: a TIMESTAMP of whole seconds)
    (most,), = query_rows(conn, "SELECT NVL(MAX(deq_time), MIN(enq_time)) FROM aq$q_qt")
    assert most == row[0]
    cur.execute("SELECT NVL(msg_state, 'none'), CASE WHEN 1 = 1 THEN msg_state ELSE NULL END, "
                "COALESCE(NULL, NULL) FROM aq$q_qt")     # a branch that is no date: as it was
    assert cur.fetchall() == [("READY", "READY", None)]
