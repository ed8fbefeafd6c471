"""What Oracle users type against DUAL through a cursor answers as Oracle does, on both
backends: USER and SYS_CONTEXT('USERENV', …) are Sluice's session user; SYSDATE,
SYSTIMESTAMP and CURRENT_TIMESTAMP are datetimes as python-oracledb fetches them;
1/0 is ORA-01476; a failing query leaves the open transaction as it was (Oracle's
statement-level atomicity)."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue
from tests.security.conftest import PASSWORD, create_user, login
from tests.test_binds import _create_table


def _rows(conn, sql, binds=None):
    cur = conn.cursor()
    cur.execute(sql, binds)
    return cur.fetchall()


def _names(conn, sql):
    cur = conn.cursor()
    cur.execute(sql)
    return [d[0] for d in cur.description]


def _code(fn):
    with pytest.raises(sluice.Error) as e:
        fn()
    return e.value.full_code


# -- the session user ----------------------------------------------------------------

def test_user_is_the_session_user(conn):
    assert _rows(conn, "SELECT USER FROM DUAL") == [("SLUICE",)]
    assert _rows(conn, "select user from dual") == [("SLUICE",)]
    assert _names(conn, "select user from dual") == ["USER"]       # Oracle's heading
    assert _rows(conn, "SELECT USER AS WHO FROM DUAL") == [("SLUICE",)]
    assert _names(conn, "SELECT USER AS WHO FROM DUAL") == ["WHO"]


def test_user_is_the_user_the_connection_authenticated_as(conn, dsn):
    create_user(conn, "scott")
    conn.commit()
    with login(dsn, "scott") as scott:
        assert _rows(scott, "SELECT USER FROM DUAL") == [("SCOTT",)]
        assert _rows(scott, "SELECT SYS_CONTEXT('USERENV', 'SESSION_USER') FROM DUAL") == [("SCOTT",)]
    assert _rows(conn, "SELECT username FROM dba_users WHERE username <> USER") == [("SCOTT",)]
    cur = conn.cursor()
    cur.execute(f"CONNECT scott/{PASSWORD}")                       # SQL*Plus CONNECT
    assert _rows(conn, "SELECT USER FROM DUAL") == [("SCOTT",)]


def test_sys_context_userenv(conn):
    sql = ("SELECT SYS_CONTEXT('USERENV', 'SESSION_USER'), sys_context('userenv','current_user'), "
           "SYS_CONTEXT ( 'USERENV' , 'CURRENT_SCHEMA' ) FROM DUAL")
    assert _rows(conn, sql) == [("SLUICE", "SLUICE", "SLUICE")]
    assert _names(conn, sql)[0] == "SYS_CONTEXT('USERENV','SESSION_USER')"


def test_user_in_a_where_clause_and_in_expressions(conn):
    assert _rows(conn, "SELECT 1 FROM DUAL WHERE USER = 'SLUICE'") == [(1,)]
    assert _rows(conn, "SELECT 1 FROM DUAL WHERE user <> 'SLUICE'") == []
    assert _rows(conn, "SELECT 'I am ' || USER FROM DUAL") == [("I am SLUICE",)]
    assert _rows(conn, "SELECT COUNT(*) FROM (SELECT USER FROM DUAL) t WHERE 1 = 1") == [(1,)]


def test_user_in_literals_quoted_names_and_comments_is_left_alone(conn):
    assert _rows(conn, "SELECT 'USER' /* USER */ FROM DUAL -- USER") == [("USER",)]
    assert _rows(conn, 'SELECT dummy AS "USER" FROM DUAL') == [("X",)]


def test_user_in_dml(conn, dsn):
    _create_table(dsn, "CREATE TABLE audit_log (who VARCHAR(30))")
    conn.cursor().execute("INSERT INTO audit_log (who) VALUES (USER)")
    assert _rows(conn, "SELECT who FROM audit_log WHERE who = USER") == [("SLUICE",)]


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
    assert _code(lambda: _rows(conn, sql)) == "ORA-01476"


def test_division_otherwise_answers_as_before(conn):
    assert _rows(conn, "SELECT 6/2, 1/NULL, 8 / 2 / 2, (4 + 2) / (1 + 2) * 2, '1/0' FROM DUAL") \
        == [(3, None, 2, 4, "1/0")]
    # the database's heading as before (SQLite's is the text; Sluice's divisor check stays out)
    assert _names(conn, "SELECT 6/2 FROM DUAL") in (["6/2"], ["?COLUMN?"])
    assert _names(conn, "SELECT 6/2 AS HALF FROM DUAL") == ["HALF"]


def test_division_by_zero_in_dml_changes_nothing(conn, dsn):
    _create_table(dsn, "CREATE TABLE nums (n INTEGER)")
    cur = conn.cursor()
    cur.execute("INSERT INTO nums (n) VALUES (1)")
    assert _code(lambda: cur.execute("UPDATE nums SET n = n / 0")) == "ORA-01476"
    assert _rows(conn, "SELECT n FROM nums") == [(1,)]


# -- the clock ---------------------------------------------------------------------------

def test_sysdate_systimestamp_and_current_timestamp_are_datetimes(conn):
    before = dt.datetime.now()
    (sysdate, systimestamp, current, localts, current_date), = _rows(
        conn, "SELECT SYSDATE, SYSTIMESTAMP, current_timestamp, LOCALTIMESTAMP, CURRENT_DATE FROM dual")
    after = dt.datetime.now()
    for value in (sysdate, systimestamp, current, localts, current_date):
        # python-oracledb fetches DATE and TIMESTAMP [WITH TIME ZONE] as naive datetimes
        assert type(value) is dt.datetime and value.tzinfo is None
        assert before.replace(microsecond=0) <= value <= after
    assert sysdate.microsecond == 0 and current_date.microsecond == 0     # a DATE has seconds
    assert systimestamp == current == localts                             # one clock per statement
    assert sysdate == systimestamp.replace(microsecond=0)
    assert _names(conn, "SELECT sysdate, current_timestamp FROM dual") == ["SYSDATE", "CURRENT_TIMESTAMP"]


def test_the_clock_in_a_subquery_and_a_condition(conn):
    (value,), = _rows(conn, "SELECT d FROM (SELECT SYSTIMESTAMP AS d FROM DUAL) t")
    assert type(value) is dt.datetime
    assert _rows(conn, "SELECT 1 FROM DUAL WHERE SYSDATE <= SYSTIMESTAMP") == [(1,)]
    assert _rows(conn, "SELECT 'SYSDATE' FROM DUAL") == [("SYSDATE",)]


@pytest.mark.parametrize("sql", ["SELECT SYSDATE - 1 FROM DUAL", "SELECT 1 FROM DUAL WHERE SYSDATE + 1/24 > SYSDATE",
                                 "SELECT enq_time FROM dual WHERE 1 + SYSTIMESTAMP(3) > 0"])
def test_date_arithmetic_on_the_clock_is_refused_not_answered_wrongly(conn, sql):
    """SQLite would have answered SYSDATE - 1 with the year before (text less one)."""
    assert _code(lambda: _rows(conn, sql)) == "SLU-00001"


def test_the_clock_in_dml(conn, dsn):
    _create_table(dsn, "CREATE TABLE stamps (at TIMESTAMP)")
    conn.cursor().execute("INSERT INTO stamps (at) VALUES (SYSTIMESTAMP)")
    (value,), = _rows(conn, "SELECT COUNT(*) FROM stamps WHERE at <= SYSTIMESTAMP")
    assert value == 1


# -- statement-level atomicity -------------------------------------------------------

@pytest.mark.parametrize("with_dml", [False, True])
def test_a_failing_query_leaves_the_transaction_open(conn, conn2, dsn, with_dml):
    """Oracle undoes a failing statement alone: the transaction goes on and commits
    what it did before (the enqueue, the DML) and after."""
    _create_table(dsn, "CREATE TABLE done (n INTEGER)")
    make_queue(conn, "Q")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"kept"))
    if with_dml:
        conn.cursor().execute("INSERT INTO done (n) VALUES (1)")
    assert _code(lambda: _rows(conn, "SELECT no_such_column FROM DUAL")) == "ORA-00904"
    assert _code(lambda: _rows(conn, "SELECT 1/0 FROM DUAL")) == "ORA-01476"
    assert _rows(conn, "SELECT USER FROM DUAL") == [("SLUICE",)]
    conn.cursor().execute("INSERT INTO done (n) VALUES (2)")
    conn.commit()
    q = conn2.queue("Q")
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert q.deqone().payload == b"kept"
    assert sorted(_rows(conn2, "SELECT n FROM done")) == ([(1,), (2,)] if with_dml else [(2,)])
