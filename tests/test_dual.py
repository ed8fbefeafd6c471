"""What Oracle users type against DUAL through a cursor answers as Oracle does, on both
backends: USER and SYS_CONTEXT('USERENV', …) are Sluice's session user; SYSDATE,
SYSTIMESTAMP and CURRENT_TIMESTAMP are datetimes as python-oracledb fetches them, with
Oracle's date arithmetic (SYSDATE - 1/24, SYSTIMESTAMP - INTERVAL '1' HOUR, SYSDATE -
enq_time) also against the AQ$ views' dates; 7/2 is 3.5 and 1/0 is ORA-01476; a failing
query leaves the open transaction as it was (Oracle's statement-level atomicity)."""

from __future__ import annotations

import datetime as dt
import os
import time

import pytest

import sluice
from tests.conftest import make_queue
from tests.security.conftest import PASSWORD, create_user, login
from tests.sqlhelpers import create_table, query_names, query_rows, raised_code


# -- the session user ----------------------------------------------------------------

def test_user_is_the_session_user(conn):
    assert query_rows(conn, "SELECT USER FROM DUAL") == [("SLUICE",)]
    assert query_rows(conn, "select user from dual") == [("SLUICE",)]
    assert query_names(conn, "select user from dual") == ["USER"]       # Oracle's heading
    assert query_rows(conn, "SELECT USER AS WHO FROM DUAL") == [("SLUICE",)]
    assert query_names(conn, "SELECT USER AS WHO FROM DUAL") == ["WHO"]


def test_user_is_the_user_the_connection_authenticated_as(conn, dsn):
    create_user(conn, "scott")
    conn.commit()
    with login(dsn, "scott") as scott:
        assert query_rows(scott, "SELECT USER FROM DUAL") == [("SCOTT",)]
        assert query_rows(scott, "SELECT SYS_CONTEXT('USERENV', 'SESSION_USER') FROM DUAL") == [("SCOTT",)]
    assert query_rows(conn, "SELECT username FROM dba_users WHERE username <> USER") == [("SCOTT",)]
    cur = conn.cursor()
    cur.execute(f"CONNECT scott/{PASSWORD}")                       # SQL*Plus CONNECT
    assert query_rows(conn, "SELECT USER FROM DUAL") == [("SCOTT",)]


def test_sys_context_userenv(conn):
    sql = ("SELECT SYS_CONTEXT('USERENV', 'SESSION_USER'), sys_context('userenv','current_user'), "
           "SYS_CONTEXT ( 'USERENV' , 'CURRENT_SCHEMA' ) FROM DUAL")
    assert query_rows(conn, sql) == [("SLUICE", "SLUICE", "SLUICE")]
    assert query_names(conn, sql)[0] == "SYS_CONTEXT('USERENV','SESSION_USER')"


def test_user_in_a_where_clause_and_in_expressions(conn):
    assert query_rows(conn, "SELECT 1 FROM DUAL WHERE USER = 'SLUICE'") == [(1,)]
    assert query_rows(conn, "SELECT 1 FROM DUAL WHERE user <> 'SLUICE'") == []
    assert query_rows(conn, "SELECT 'I am ' || USER FROM DUAL") == [("I am SLUICE",)]
    assert query_rows(conn, "SELECT COUNT(*) FROM (SELECT USER FROM DUAL) t WHERE 1 = 1") == [(1,)]


def test_user_in_literals_quoted_names_and_comments_is_left_alone(conn):
    assert query_rows(conn, "SELECT 'USER' /* USER */ FROM DUAL -- USER") == [("USER",)]
    assert query_rows(conn, 'SELECT dummy AS "USER" FROM DUAL') == [("X",)]


def test_user_in_dml(conn, dsn):
    create_table(dsn, "CREATE TABLE audit_log (who VARCHAR(30))")
    conn.cursor().execute("INSERT INTO audit_log (who) VALUES (USER)")
    assert query_rows(conn, "SELECT who FROM audit_log WHERE who = USER") == [("SLUICE",)]


def test_sluice_sql_answers_user_and_1_by_0(dsn):
    from tests.test_cli import _run
    r = _run(dsn, "sql", "SELECT USER FROM DUAL;\nSELECT SYSDATE FROM DUAL;")
    assert r.exit_code == 0, r.output
    assert r.output.split("\n")[:2] == ["USER", "------"] and "SLUICE" in r.output and "SYSDATE" in r.output
    r = _run(dsn, "sql", "SELECT 1/0 FROM DUAL")
    assert r.exit_code == 1 and "ORA-01476" in r.output


# -- division by zero ------------------------------------------------------------------

@pytest.mark.parametrize("sql", ["SELECT 1/0 FROM DUAL", "SELECT 1 / 0.0 FROM DUAL",
                                 "SELECT 10 / (3 - 3) FROM DUAL", "SELECT 1 FROM DUAL WHERE 2/0 > 1",
                                 "SELECT 5 / -0 FROM DUAL", "SELECT 1/'0' FROM DUAL"])
def test_division_by_zero_is_ora_01476(conn, sql):
    assert raised_code(lambda: query_rows(conn, sql)) == "ORA-01476"


def test_division_otherwise_answers_as_before(conn):
    row, = query_rows(conn, "SELECT 6/2, 1/NULL, 8 / 2 / 2, (4 + 2) / (1 + 2) * 2, '1/0' FROM DUAL")
    assert row == (3, None, 2, 4, "1/0")
    assert [type(v) for v in row] == [int, type(None), int, int, str]
    # Oracle's heading (the database's would be ?COLUMN? on PostgreSQL, the divisor's on SQLite)
    assert query_names(conn, "SELECT 6/2 FROM DUAL") == ["6/2"]
    assert query_names(conn, "SELECT 6/2 AS HALF FROM DUAL") == ["HALF"]


def test_division_of_integers_is_exact_as_oracle_number_division(conn):
    """Both databases divide integers in whole numbers (7/2 = 3); Oracle's NUMBER does not.
    A quotient comes back as python-oracledb fetches a NUMBER: an int when whole, else a
    float (PostgreSQL's numeric would be a Decimal)."""
    row, = query_rows(conn, "SELECT 7/2, 1/3, -7/2, 7.0/2, 1.5/0.5, 2/'4', ROUND(7/2), 12/4 FROM dual")
    assert row == (3.5, 1 / 3, -3.5, 3.5, 3, 0.5, 4, 3)
    assert [type(v) for v in row] == [float, float, float, float, int, float, int, int]
    assert query_rows(conn, "SELECT COUNT(*) FROM dual WHERE 7/2 > 3") == [(1,)]
    (value,), = query_rows(conn, "SELECT x FROM (SELECT 7/2 AS x FROM dual) t")
    assert value == 3.5
    assert query_rows(conn, "SELECT 'a', 7/2 FROM dual UNION ALL SELECT 'b', 8/2 FROM dual ORDER BY 1") \
        == [("a", 3.5), ("b", 4)]


def test_division_of_integers_in_dml_is_exact(conn, dsn):
    create_table(dsn, "CREATE TABLE halves (n NUMERIC)")
    cur = conn.cursor()
    cur.execute("INSERT INTO halves (n) VALUES (7/2)")
    assert query_rows(conn, "SELECT COUNT(*) FROM halves WHERE n = 3.5") == [(1,)]


def test_division_by_zero_in_dml_changes_nothing(conn, dsn):
    create_table(dsn, "CREATE TABLE nums (n INTEGER)")
    cur = conn.cursor()
    cur.execute("INSERT INTO nums (n) VALUES (1)")
    assert raised_code(lambda: cur.execute("UPDATE nums SET n = n / 0")) == "ORA-01476"
    assert query_rows(conn, "SELECT n FROM nums") == [(1,)]


# -- the clock ---------------------------------------------------------------------------

def test_sysdate_systimestamp_and_current_timestamp_are_datetimes(conn):
    before = dt.datetime.now()
    (sysdate, systimestamp, current, localts, current_date), = query_rows(
        conn, "SELECT SYSDATE, SYSTIMESTAMP, current_timestamp, LOCALTIMESTAMP, CURRENT_DATE FROM dual")
    after = dt.datetime.now()
    for value in (sysdate, systimestamp, current, localts, current_date):
        # python-oracledb fetches DATE and TIMESTAMP [WITH TIME ZONE] as naive datetimes
        assert type(value) is dt.datetime and value.tzinfo is None
        assert before.replace(microsecond=0) <= value <= after
    assert sysdate.microsecond == 0 and current_date.microsecond == 0     # a DATE has seconds
    assert systimestamp == current == localts                             # one clock per statement
    assert sysdate == systimestamp.replace(microsecond=0)
    assert query_names(conn, "SELECT sysdate, current_timestamp FROM dual") == ["SYSDATE", "CURRENT_TIMESTAMP"]


def test_the_clock_in_a_subquery_and_a_condition(conn):
    (value,), = query_rows(conn, "SELECT d FROM (SELECT SYSTIMESTAMP AS d FROM DUAL) t")
    assert type(value) is dt.datetime
    assert query_rows(conn, "SELECT 1 FROM DUAL WHERE SYSDATE <= SYSTIMESTAMP") == [(1,)]
    assert query_rows(conn, "SELECT 'SYSDATE' FROM DUAL") == [("SYSDATE",)]


def test_date_arithmetic_on_the_clock(conn):
    """SYSDATE ± days is a DATE (a timestamp loses its fraction, the sum is rounded to the
    second), ± an INTERVAL keeps the type; SQLite would have taken 1 from the text's year,
    PostgreSQL refused a timestamp minus a number."""
    row, = query_rows(conn, "SELECT SYSDATE, SYSTIMESTAMP, SYSDATE - 1, SYSDATE + 1/24, sysdate + 5/1440, "
                       "1 + SYSDATE, SYSDATE - (1 + 1/2), SYSTIMESTAMP + 1, "
                       "SYSTIMESTAMP - INTERVAL '1' HOUR, SYSDATE - INTERVAL '90' MINUTE(3), "
                       "SYSTIMESTAMP + INTERVAL '1 02:03:04.5' DAY TO SECOND, SYSDATE - 1/24 + INTERVAL '1' HOUR "
                       "FROM dual")
    sysdate, systimestamp, *values = row
    assert all(type(v) is dt.datetime and v.tzinfo is None for v in values)
    day, hour = dt.timedelta(days=1), dt.timedelta(hours=1)
    assert values[:7] == [sysdate - day, sysdate + hour, sysdate + dt.timedelta(minutes=5), sysdate + day,
                          sysdate - 1.5 * day, systimestamp.replace(microsecond=0) + day, systimestamp - hour]
    assert values[7:] == [sysdate - dt.timedelta(minutes=90),
                          systimestamp + dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5), sysdate]
    assert query_names(conn, "SELECT SYSDATE - 1 FROM dual") == ["SYSDATE-1"]
    assert query_rows(conn, "SELECT 1 FROM DUAL WHERE SYSDATE + 1/24 > SYSDATE AND SYSDATE - 1 < SYSDATE") == [(1,)]


def test_a_date_minus_a_column_is_days(conn, dsn):
    """A DATE minus a DATE column is days (a NUMBER); minus a TIMESTAMP column Oracle's
    INTERVAL DAY TO SECOND, a ``timedelta``."""
    create_table(dsn, "CREATE TABLE stamps (at TIMESTAMP, d DATE)")
    conn.cursor().execute("INSERT INTO stamps (at, d) VALUES (SYSDATE - 2, TRUNC(SYSDATE) - 2)")
    (ago, ahead, days, back), = query_rows(conn, "SELECT SYSDATE - at, at - SYSDATE AS ahead, TRUNC(SYSDATE) - d, "
                                            "d - TRUNC(SYSDATE) FROM stamps")
    assert dt.timedelta(days=2) <= ago < dt.timedelta(days=2.01) and ahead == -ago
    # a NUMBER as python-oracledb fetches one: whole is an int
    assert (days, back) == (2, -2) and type(days) is int
    assert query_rows(conn, "SELECT COUNT(*) FROM stamps WHERE TRUNC(SYSDATE) - d > 1.5") == [(1,)]
    assert query_rows(conn, "SELECT COUNT(*) FROM stamps WHERE at > SYSDATE - 1") == [(0,)]


@pytest.mark.parametrize("sql", ["SELECT SYSDATE * 2 FROM DUAL",
                                 "SELECT SYSDATE + :n * dummy FROM DUAL", "SELECT 2 - SYSDATE FROM DUAL",
                                 "SELECT SYSDATE - 1 * dummy FROM DUAL", "SELECT SYSDATE - dummy * 2 FROM DUAL",
                                 "SELECT 1 FROM DUAL WHERE SYSTIMESTAMP - dummy > 0"])
def test_other_date_arithmetic_on_the_clock_is_refused_not_answered_wrongly(conn, sql):
    assert raised_code(lambda: query_rows(conn, sql, {"n": 1} if ":n" in sql else None)) == "SLU-00001"


# -- binds as days ----------------------------------------------------------------------

def _stamps(conn, dsn):
    """Rows 1, 2 and 3 stamped 1, 2 and 3 days ago (a DATE: whole seconds)."""
    create_table(dsn, "CREATE TABLE stamps (n INTEGER, at TIMESTAMP)")
    for n in (1, 2, 3):
        conn.cursor().execute(f"INSERT INTO stamps (n, at) VALUES ({n}, SYSDATE - {n} + 1/1440)")


def test_a_bind_as_days_by_name_and_by_position(conn, dsn):
    """The monitoring query (``enq_time < SYSDATE - :days``) as python-oracledb code runs it:
    the bind's value is folded into the clock's literal, by name and by position."""
    _stamps(conn, dsn)
    assert query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :days ORDER BY n", {"days": 2}) == [(3,)]
    assert query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :days ORDER BY n", {"DAYS": 1}) == [(2,), (3,)]
    assert query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :1 ORDER BY n", [2]) == [(3,)]
    # a whole expression of days, a bind before the clock, text Oracle reads as a number
    assert query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :h/24 ORDER BY n", {"h": 36}) == [(2,), (3,)]
    assert query_rows(conn, "SELECT n FROM stamps WHERE at > :d + SYSDATE ORDER BY n", {"d": " -1.5"}) == [(1,)]
    (sysdate, ago), = query_rows(conn, "SELECT SYSDATE, SYSDATE - :d FROM dual", [1.5])
    assert ago == sysdate - dt.timedelta(days=1.5)
    # Connection.query with values by position (no numbering by the cursor)
    assert conn.query("SELECT n FROM stamps WHERE at < SYSDATE - :1 ORDER BY n", [2])[1] == [(3,)]


def test_binds_around_a_bind_as_days_still_line_up(conn, dsn):
    """A bind taken into the clock leaves the statement: the others keep their values,
    by position (in order) and by name; one name used twice is read twice."""
    _stamps(conn, dsn)
    sql = "SELECT n FROM stamps WHERE n >= :lo AND at < SYSDATE - :days AND n <= :hi ORDER BY n"
    assert query_rows(conn, sql, {"hi": 3, "days": 1, "lo": 3}) == [(3,)]
    assert query_rows(conn, sql, [2, 1, 2]) == [(2,)]
    assert query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :1 AND n > :2 ORDER BY n", [1, 2]) == [(3,)]
    assert conn.query("SELECT n FROM stamps WHERE n >= :1 AND at < SYSDATE - :2 AND n <= :3 ORDER BY n",
                      [2, 1, 2])[1] == [(2,)]
    twice = "SELECT n FROM stamps WHERE at < SYSDATE - :d AND at > SYSDATE - :d - 2 ORDER BY n"
    assert query_rows(conn, twice, {"d": 1}) == [(2,), (3,)]
    assert query_rows(conn, twice, [2, 1]) == [(3,)]                 # by position each use is one value
    # a name both days and a value elsewhere keeps its value there
    assert query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :n AND n > :n ORDER BY n", {"n": 2}) == [(3,)]


def test_a_bind_as_days_in_dml(conn, dsn):
    _stamps(conn, dsn)
    cur = conn.cursor()
    cur.execute("DELETE FROM stamps WHERE n > :lo AND at < SYSDATE - :days", {"lo": 2, "days": 1})
    assert cur.rowcount == 1
    cur.execute("UPDATE stamps SET at = SYSDATE + :1 WHERE n = :2", [1, 1])
    assert query_rows(conn, "SELECT n FROM stamps WHERE at > SYSDATE ORDER BY n") == [(1,)]


@pytest.mark.parametrize("value, code", [("abc", "ORA-01722"), (True, "ORA-01722"), ("1/2", "ORA-01722")])
def test_a_bind_as_days_that_is_no_number_is_refused(conn, dsn, value, code):
    _stamps(conn, dsn)
    assert raised_code(lambda: query_rows(conn, "SELECT n FROM stamps WHERE at < SYSDATE - :d", {"d": value})) == code
    assert raised_code(lambda: conn.cursor().execute("DELETE FROM stamps WHERE at < SYSDATE - :d", [value])) == code
    conn.commit()
    assert query_rows(conn, "SELECT COUNT(*) FROM stamps") == [(3,)]             # nothing changed


def test_a_null_bind_as_days_is_null(conn):
    assert query_rows(conn, "SELECT SYSDATE - :d FROM dual", {"d": None}) == [(None,)]
    assert query_rows(conn, "SELECT 1 FROM dual WHERE SYSDATE > SYSDATE - :d", [None]) == []


def _aq_view_counts(conn):
    """A monitoring query on an AQ$ view, and the clock's own values in it."""
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    counts = query_rows(conn, "SELECT COUNT(CASE WHEN enq_time > SYSDATE - 1/24 THEN 1 END), "
                         "COUNT(CASE WHEN enq_time > SYSTIMESTAMP - INTERVAL '1' MINUTE THEN 1 END), "
                         "COUNT(CASE WHEN enq_time > SYSDATE + 5/1440 THEN 1 END), "
                         "COUNT(CASE WHEN enq_time < SYSDATE - 1 THEN 1 END) FROM aq$q_qt")
    (age, sysdate, later), = query_rows(conn, "SELECT SYSDATE - enq_time, SYSDATE, SYSDATE + 1 FROM aq$q_qt")
    return counts, age, sysdate, later


def test_the_clock_against_an_aq_view(conn):
    before = dt.datetime.now().replace(microsecond=0)
    counts, age, sysdate, later = _aq_view_counts(conn)
    assert counts == [(1, 1, 0, 0)]
    assert -1 / 86400 <= age < 0.01        # SYSDATE has whole seconds, enq_time fractions
    assert before <= sysdate <= dt.datetime.now() and later == sysdate + dt.timedelta(days=1)


@pytest.fixture
def india():
    """The host's clock 5:30 ahead of UTC (a POSIX zone: no tz database needed)."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "IST-5:30"
    time.tzset()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
        time.tzset()


def test_the_clock_against_an_aq_view_off_utc(india, conn):
    """A session that logs on with the host's clock 5:30 ahead of UTC is in that zone: the
    AQ$ views show their dates in it, SYSDATE is the host's wall clock, so comparisons and
    differences hold."""
    assert dt.datetime.now().astimezone().utcoffset() == dt.timedelta(hours=5, minutes=30)
    before = dt.datetime.now().replace(microsecond=0)
    counts, age, sysdate, later = _aq_view_counts(conn)
    assert counts == [(1, 1, 0, 0)]
    assert -1 / 86400 <= age < 0.01        # SYSDATE has whole seconds, enq_time fractions
    assert before <= sysdate <= dt.datetime.now() and later == sysdate + dt.timedelta(days=1)


def test_the_clock_in_dml(conn, dsn):
    create_table(dsn, "CREATE TABLE stamps (at TIMESTAMP)")
    conn.cursor().execute("INSERT INTO stamps (at) VALUES (SYSTIMESTAMP)")
    (value,), = query_rows(conn, "SELECT COUNT(*) FROM stamps WHERE at <= SYSTIMESTAMP")
    assert value == 1


# -- statement-level atomicity -------------------------------------------------------

@pytest.mark.parametrize("with_dml", [False, True])
def test_a_failing_query_leaves_the_transaction_open(conn, conn2, dsn, with_dml):
    """Oracle undoes a failing statement alone: the transaction goes on and commits
    what it did before (the enqueue, the DML) and after."""
    create_table(dsn, "CREATE TABLE done (n INTEGER)")
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"kept"))
    if with_dml:
        conn.cursor().execute("INSERT INTO done (n) VALUES (1)")
    assert raised_code(lambda: query_rows(conn, "SELECT no_such_column FROM DUAL")) == "ORA-00904"
    assert raised_code(lambda: query_rows(conn, "SELECT 1/0 FROM DUAL")) == "ORA-01476"
    assert query_rows(conn, "SELECT USER FROM DUAL") == [("SLUICE",)]
    conn.cursor().execute("INSERT INTO done (n) VALUES (2)")
    conn.commit()
    q = conn2.queue("Q")
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert q.deqone().payload == b"kept"
    assert sorted(query_rows(conn2, "SELECT n FROM done")) == ([(1,), (2,)] if with_dml else [(2,)])
