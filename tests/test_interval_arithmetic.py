"""Oracle's TIMESTAMP / DATE arithmetic on the views' dates through a cursor, on both stores.

In Oracle the AQ$ views' ENQ_TIME / DEQ_TIME / DELAY are DATEs (whole seconds) and
ENQ_TIMESTAMP / DEQ_TIMESTAMP / DELAY_TIMESTAMP TIMESTAMPs: a TIMESTAMP minus a date (or
SYSTIMESTAMP minus either) is an INTERVAL DAY TO SECOND, which python-oracledb fetches as a
``timedelta``; a DATE minus a DATE is a number of days.  Sluice refused ``SYSTIMESTAMP -
enq_timestamp`` (SLU-00001), answered ``enq_timestamp - enq_timestamp`` with 0, gave
ENQ_TIME and ``CAST(… AS DATE)`` fractional seconds (so ``(SYSDATE - enq_time) * 86400`` was
negative right after an enqueue), knew no NUMTODSINTERVAL / NUMTOYMINTERVAL, and PostgreSQL
refused ``ROUND((CAST(SYSTIMESTAMP AS DATE) - enq_time) * 24 * 60)`` (ORA-00904).

The message's enqueue time is set (the queue table's ENQ_TIME, POSIX seconds) to a known
wall-clock time of the session's zone (by default the host's, as the views show it).
"""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue
from tests.sqlhelpers import query_rows, raised_code

KNOWN = dt.datetime(2026, 6, 1, 10, 0, 0, 750000)       # ENQ_TIMESTAMP; ENQ_TIME is 10:00:00


def _enqueued_at(conn, when: dt.datetime) -> None:
    """One message on Q whose enqueue time is the host's wall-clock time ``when``."""
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    conn.cursor().execute(f"UPDATE Q_QT SET ENQ_TIME = {when.timestamp()!r}")
    conn.commit()


def _typed(conn, sql, binds=None):
    cur = conn.cursor()
    cur.execute(sql, binds)
    return cur.fetchall(), [d[1] for d in cur.description]


def test_a_views_dates_are_whole_seconds_and_its_timestamps_are_not(conn):
    _enqueued_at(conn, KNOWN)
    rows, types = _typed(conn, "SELECT enq_time, enq_timestamp, CAST(enq_timestamp AS DATE), "
                               "CAST(enq_time AS TIMESTAMP), CAST(enq_time AS DATE) FROM aq$q_qt")
    assert rows == [(KNOWN.replace(microsecond=0), KNOWN, KNOWN.replace(microsecond=0),
                     KNOWN.replace(microsecond=0), KNOWN.replace(microsecond=0))]
    assert types == [sluice.DB_TYPE_DATE, sluice.DB_TYPE_TIMESTAMP, sluice.DB_TYPE_DATE, sluice.DB_TYPE_TIMESTAMP,
                     sluice.DB_TYPE_DATE]
    (star,), = query_rows(conn, "SELECT x.enq_time FROM (SELECT * FROM aq$q_qt) x")
    assert star == KNOWN.replace(microsecond=0)
    # DATE minus DATE: the days between, of whole seconds
    assert query_rows(conn, "SELECT (DATE '2026-06-02' - enq_time) * 24, (enq_time - DATE '2026-06-01') * 24 * 60 "
                       "FROM aq$q_qt") == [(14, 600)]
    assert query_rows(conn, "SELECT COUNT(*) FROM aq$q_qt WHERE enq_time = :t", {"t": KNOWN}) == [(1,)]


def test_sysdate_minus_enq_time_right_after_an_enqueue_is_not_negative(conn):
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    (seconds, whole), = query_rows(conn, "SELECT (SYSDATE - enq_time) * 86400, "
                                    "(CAST(SYSTIMESTAMP AS DATE) - enq_time) * 86400 FROM aq$q_qt")
    assert 0 <= seconds < 60 and 0 <= whole < 60
    assert round(seconds * 1e6) % 10**6 == 0       # whole seconds between two DATEs


def test_a_timestamp_minus_a_date_is_an_interval(conn):
    _enqueued_at(conn, KNOWN)
    rows, types = _typed(conn, "SELECT enq_timestamp - enq_timestamp, enq_timestamp - enq_time, "
                               "enq_time - enq_time, TIMESTAMP '2026-06-01 12:00:00.5' - enq_timestamp, "
                               "TIMESTAMP '2026-06-01 12:00:00.5' - enq_time FROM aq$q_qt")
    assert rows == [(dt.timedelta(0), dt.timedelta(seconds=0.75), 0, dt.timedelta(seconds=7199.75),
                     dt.timedelta(seconds=7200.5))]
    assert types == [sluice.DB_TYPE_INTERVAL_DS] * 2 + [sluice.DB_TYPE_NUMBER] + [sluice.DB_TYPE_INTERVAL_DS] * 2
    assert _typed(conn, "SELECT MAX(enq_time) - MIN(enq_time), MAX(enq_timestamp) - MIN(enq_time) FROM aq$q_qt") \
        == ([(0, dt.timedelta(seconds=0.75))], [sluice.DB_TYPE_NUMBER, sluice.DB_TYPE_INTERVAL_DS])


def test_systimestamp_minus_a_views_date(conn):
    ago = dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5)
    enq = (dt.datetime.now() - ago).replace(microsecond=250000)
    _enqueued_at(conn, enq)
    before = dt.datetime.now()
    rows, types = _typed(conn, "SELECT SYSTIMESTAMP - enq_timestamp, SYSTIMESTAMP - enq_time, "
                               "enq_timestamp - SYSTIMESTAMP, SYSDATE - enq_timestamp FROM aq$q_qt")
    after = dt.datetime.now()
    (ts, date, back, from_date), = rows
    assert before - enq <= ts <= after - enq
    assert before - enq.replace(microsecond=0) <= date <= after - enq.replace(microsecond=0)
    assert enq - after <= back <= enq - before
    assert before.replace(microsecond=0) - enq - dt.timedelta(seconds=1) <= from_date <= after - enq
    assert types == [sluice.DB_TYPE_INTERVAL_DS] * 4
    (days, hours, minutes, seconds), = query_rows(
        conn, "SELECT EXTRACT(DAY FROM (SYSTIMESTAMP - enq_timestamp)), EXTRACT(HOUR FROM (SYSTIMESTAMP - "
              "enq_timestamp)), EXTRACT(MINUTE FROM (SYSTIMESTAMP - enq_timestamp)), "
              "EXTRACT(SECOND FROM (SYSTIMESTAMP - enq_timestamp)) FROM aq$q_qt")
    assert (days, hours, minutes) == (1, 2, 3) and 4.25 <= seconds < 10
    where = "SELECT COUNT(*) FROM aq$q_qt WHERE SYSTIMESTAMP - enq_timestamp > "
    assert [query_rows(conn, where + bound) for bound in ("INTERVAL '5' MINUTE", "INTERVAL '2' DAY",
                                                          "NUMTODSINTERVAL(1, 'DAY')", "NUMTODSINTERVAL(25, 'HOUR')")] \
        == [[(1,)], [(0,)], [(1,)], [(1,)]] or pytest.fail("the intervals compared")
    rows, types = _typed(conn, "SELECT x FROM (SELECT SYSTIMESTAMP - enq_timestamp x FROM aq$q_qt) t")
    assert type(rows[0][0]) is dt.timedelta and before - enq <= rows[0][0] and types == [sluice.DB_TYPE_INTERVAL_DS]


def test_numtodsinterval_and_numtoyminterval(conn):
    _enqueued_at(conn, KNOWN)
    rows, types = _typed(conn, "SELECT NUMTODSINTERVAL(90, 'MINUTE'), NUMTODSINTERVAL(1.5, 'day'), "
                               "NUMTODSINTERVAL(0.25, 'SECOND'), enq_time + NUMTODSINTERVAL(1, 'DAY'), "
                               "enq_time - INTERVAL '1' HOUR, DATE '2026-03-31' - NUMTOYMINTERVAL(1, 'YEAR'), "
                               "TIMESTAMP '2026-01-31 10:00:00.5' + NUMTODSINTERVAL(2, 'HOUR') FROM aq$q_qt")
    assert rows == [(dt.timedelta(minutes=90), dt.timedelta(hours=36), dt.timedelta(seconds=0.25),
                     dt.datetime(2026, 6, 2, 10), dt.datetime(2026, 6, 1, 9), dt.datetime(2025, 3, 31),
                     dt.datetime(2026, 1, 31, 12, 0, 0, 500000))]
    assert types[:5] == [sluice.DB_TYPE_INTERVAL_DS] * 3 + [sluice.DB_TYPE_DATE] * 2
    before = dt.datetime.now().replace(microsecond=0)
    (hour_ago, month_ago), = query_rows(conn, "SELECT SYSTIMESTAMP - NUMTODSINTERVAL(1, 'HOUR'), "
                                         "SYSDATE - NUMTOYMINTERVAL(2, 'MONTH') FROM dual")
    assert before - dt.timedelta(hours=1) <= hour_ago <= dt.datetime.now() - dt.timedelta(hours=1)
    assert month_ago.microsecond == 0 and 55 <= (before - month_ago).days <= 62
    (two_ago, alone), = query_rows(conn, "SELECT SYSTIMESTAMP - NUMTODSINTERVAL(:n, 'HOUR'), NUMTODSINTERVAL(:n, "
                                    "'SECOND') FROM dual", {"n": 2})      # (a bind: folded, or bound)
    assert before - dt.timedelta(hours=2) <= two_ago <= dt.datetime.now() - dt.timedelta(hours=2)
    assert alone == dt.timedelta(seconds=2)
    assert raised_code(lambda: query_rows(conn, "SELECT DATE '2026-01-31' + NUMTOYMINTERVAL(1, 'MONTH') FROM dual")) \
        == "ORA-01839"           # (February 31st, as Oracle)
    assert raised_code(lambda: query_rows(conn, "SELECT NUMTOYMINTERVAL(1, 'YEAR') FROM dual")) == "SLU-00001"
    assert raised_code(lambda: query_rows(conn, "SELECT NUMTODSINTERVAL(1, 'WEEK') FROM dual")) == "ORA-01760"


def test_round_and_trunc_of_numbers(conn):
    enq = (dt.datetime.now() - dt.timedelta(minutes=90)).replace(microsecond=0)
    _enqueued_at(conn, enq)
    assert query_rows(conn, "SELECT ROUND((CAST(SYSTIMESTAMP AS DATE) - enq_time) * 24 * 60), "
                       "TRUNC((SYSDATE - enq_time) * 24) FROM aq$q_qt") == [(90, 1)]
    assert query_rows(conn, "SELECT ROUND(2.567, 1), TRUNC(2.567, 1), ROUND(2.5), ROUND(-2.5), TRUNC(-2.5), "
                       "TRUNC(1234.5, -2), ROUND(1234.5, -2), ROUND(7 / 3, 3), TRUNC(7 / 3, 3) FROM dual") \
        == [(2.6, 2.5, 3, -3, -2, 1200, 1200, 2.333, 2.333)]


def test_round_and_trunc_of_days_between(conn):
    _enqueued_at(conn, KNOWN)
    assert query_rows(conn, "SELECT ROUND(DATE '2026-06-02' - MAX(enq_time), 4), "
                       "TRUNC((DATE '2026-06-02' - MIN(enq_time)) * 24, 1) FROM aq$q_qt") == [(0.5833, 14)]


def test_a_views_date_compared_is_whole_seconds(conn):
    """A DATE bind (whole seconds) equals the view's DATE of that second, either side."""
    _enqueued_at(conn, KNOWN)
    t = {"t": KNOWN.replace(microsecond=0)}
    assert [query_rows(conn, f"SELECT COUNT(*) FROM aq$q_qt q WHERE {cond}", t) for cond in (
        "enq_time = :t", ":t = enq_time", "q.enq_time <= :t", "enq_time BETWEEN :t AND :t",
        "enq_timestamp > :t")] == [[(1,)]] * 5


def test_a_subquerys_alias_of_text_stays_text(conn):
    """SQLite gave a datetime for text that read like the statement's clock literal when a
    subquery or WITH clause aliased it (as it gives text at the top level)."""
    for sql in ("SELECT x, y FROM (SELECT TO_CHAR(SYSDATE, 'YYYY-MM-DD HH24:MI:SS') x, '2026-01-01 00:00:00' y "
                "FROM dual) t",
                "WITH w AS (SELECT TO_CHAR(SYSDATE, 'YYYY-MM-DD HH24:MI:SS') AS x, SYSDATE AS y FROM dual) "
                "SELECT x, y FROM w"):
        (x, y), = query_rows(conn, sql)
        assert type(x) is str and len(x) == 19, sql
    assert type(y) is dt.datetime and x == y.isoformat(" ")       # (the date itself stays a date)
