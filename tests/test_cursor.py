"""Cursor as python-oracledb's: fetchmany's size and arraysize, DPY-1003 when the
statement returns no rows, callproc's and executescript's argument checks, and
executemany (rows of binds in the session's transaction, batcherrors, array DML row
counts), on both backends."""

from __future__ import annotations

import pytest

import sluice
from tests.conftest import make_queue
from tests.sqlhelpers import create_table, query_rows, raised_code

THREE_ROWS = "SELECT 1 FROM DUAL UNION ALL SELECT 2 FROM DUAL UNION ALL SELECT 3 FROM DUAL"


# -- fetching -----------------------------------------------------------------------

def test_fetchmany_sizes_as_python_oracledb(conn):
    cur = conn.cursor()
    cur.execute(THREE_ROWS)
    assert cur.fetchmany(0) == [] and cur.fetchmany(-1) == []     # nothing, nothing consumed
    assert cur.fetchmany(2) == [(1,), (2,)]
    assert cur.fetchmany() == [(3,)]
    cur.execute(THREE_ROWS)
    with pytest.raises(TypeError):
        cur.fetchmany("2")
    cur.arraysize = 2
    assert (cur.arraysize, cur.fetchmany(None), cur.fetchall()) == (2, [(1,), (2,)], [(3,)])


@pytest.mark.parametrize("value", [None, "x", 1.5, 0, -3, True])
def test_arraysize_must_be_a_positive_integer(conn, value):
    cur = conn.cursor()
    assert raised_code(lambda: setattr(cur, "arraysize", value)) == "DPY-2045"
    assert cur.arraysize == 100
    cur.execute(THREE_ROWS)
    assert cur.fetchmany() == [(1,), (2,), (3,)]


@pytest.mark.parametrize("statement", ["BEGIN NULL; END;", "COMMIT", None])
def test_fetching_without_rows_is_dpy_1003(conn, statement):
    cur = conn.cursor()
    if statement:
        cur.execute(THREE_ROWS)        # the rows of the query before are gone too
        cur.execute(statement)
    for fetch in (cur.fetchone, cur.fetchall, cur.fetchmany, lambda: list(cur)):
        assert raised_code(fetch) == "DPY-1003"


def test_an_error_met_while_reading_the_rows_is_an_oracle_error(conn):
    """SQLite computes a query's rows as they are read: an error in a later row (here
    malformed JSON) escaped as sqlite3.OperationalError, with its traceback, not as
    the ORA error an error met by execute() is."""
    sql = "SELECT json(v) FROM (SELECT '1' AS v FROM DUAL UNION ALL SELECT 'x{' AS v FROM DUAL) t"
    assert raised_code(lambda: query_rows(conn, sql)).startswith("ORA-")
    assert raised_code(lambda: conn.query(sql, None)).startswith("ORA-")


def test_fetching_after_dml_is_dpy_1003(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER)")
    cur = conn.cursor()
    cur.execute("INSERT INTO t (a) VALUES (1)")
    assert cur.rowcount == 1 and raised_code(cur.fetchall) == "DPY-1003"


# -- callproc and executescript --------------------------------------------------------

@pytest.mark.parametrize("args, code", [
    ((None,), None), ((5,), None),
    (("dbms_aqadm.start_queue", None, 5), "DPY-2013"),
    (("dbms_aqadm.start_queue", None, ["Q"]), "DPY-2013"),
    (("dbms_aqadm.start_queue", "Q"), "DPY-2012"),
    (("dbms_aqadm.start_queue", {"queue_name": "Q"}), "DPY-2012"),
    (("dbms_aqadm.start_queue", None, {1: "Q"}), "ORA-06550"),
])
def test_callproc_checks_its_arguments(conn, args, code):
    make_queue(conn, start=False)
    conn.aqadm.stop_queue(queue_name="Q")
    with pytest.raises(sluice.Error) as e:
        conn.cursor().callproc(*args)
    assert e.value.full_code == (code or "")
    if code is None:
        assert isinstance(e.value, sluice.InterfaceError)
    assert query_rows(conn, "SELECT enqueue_enabled FROM user_queues WHERE name = 'Q'") == [("NO",)]


def test_callproc_as_before(conn):
    make_queue(conn, start=False)
    cur = conn.cursor()
    assert cur.callproc("dbms_aqadm.start_queue", ("Q",)) == ["Q"]
    cur.callproc("dbms_aqadm.stop_queue", keyword_parameters={"QUEUE_NAME": "Q"})
    assert query_rows(conn, "SELECT enqueue_enabled FROM user_queues WHERE name = 'Q'") == [("NO",)]


@pytest.mark.parametrize("script", [5, b"BEGIN NULL; END;\n/\n", None])
def test_executescript_takes_text_only(conn, script):
    with pytest.raises(sluice.InterfaceError):
        conn.cursor().executescript(script)


# -- executemany ----------------------------------------------------------------------

def test_executemany_rows_by_position_and_by_name(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO t (a, b) VALUES (:1, :2)", [(1, "a"), [2, "b"]])
    assert cur.rowcount == 2
    cur.executemany("INSERT INTO t (a, b) VALUES (:a, :b)", [{"a": 3, "b": "c"}, {"A": 4, "b": "d"}])
    cur.executemany("UPDATE t SET b = 'z' WHERE a <= :1", [(1,), (3,)], arraydmlrowcounts=True)
    assert (cur.getarraydmlrowcounts(), cur.rowcount) == ([1, 3], 4)
    cur.executemany("INSERT INTO t (a, b) VALUES (:1, :2)", [])
    assert cur.rowcount == 0
    conn.rollback()                                    # in the session's transaction
    assert query_rows(conn, "SELECT COUNT(*) FROM t") == [(0,)]


def test_executemany_stops_at_the_first_failing_row(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER PRIMARY KEY)")
    cur = conn.cursor()
    with pytest.raises(sluice.IntegrityError) as e:
        cur.executemany("INSERT INTO t (a) VALUES (:1)", [(1,), (2,), (1,), (3,)])
    assert (e.value.full_code, e.value.args[0].offset) == ("ORA-00001", 2)
    # as in Oracle the rows before it stay done, in the open transaction
    assert query_rows(conn, "SELECT a FROM t ORDER BY a") == [(1,), (2,)]
    conn.commit()
    assert query_rows(conn, "SELECT a FROM t ORDER BY a") == [(1,), (2,)]


def test_executemany_batcherrors(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER PRIMARY KEY)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO t (a) VALUES (:a)", [{"a": 1}, {"a": 1}, {"a": 2}, {"a": 2}, {"a": 3}],
                    batcherrors=True, arraydmlrowcounts=True)
    errors = cur.getbatcherrors()
    assert [(err.offset, err.full_code, err.code) for err in errors] == [(1, "ORA-00001", 1),
                                                                         (3, "ORA-00001", 1)]
    assert errors[0].message.startswith("ORA-00001")
    assert cur.getarraydmlrowcounts() == [1, 0, 1, 0, 1] and cur.rowcount == 3
    conn.commit()
    assert query_rows(conn, "SELECT a FROM t ORDER BY a") == [(1,), (2,), (3,)]
    cur.execute("SELECT 1 FROM DUAL")                  # the next statement forgets them
    assert cur.getbatcherrors() == [] and raised_code(cur.getarraydmlrowcounts) == "DPY-4006"


def test_executemany_plsql_blocks_and_iterations(conn):
    make_queue(conn, start=False)
    cur = conn.cursor()
    cur.executemany("BEGIN DBMS_OUTPUT.PUT_LINE(:1); END;", [("a",), ("b",)])
    assert cur.output == ["a", "b"]
    cur.executemany("BEGIN DBMS_OUTPUT.PUT_LINE('x'); END;", 3)
    assert cur.output == ["x", "x", "x"]
    cur.executemany("BEGIN DBMS_AQADM.START_QUEUE(:q); END;", [{"q": "Q"}])
    assert query_rows(conn, "SELECT enqueue_enabled FROM user_queues WHERE name = 'Q'") == [("YES",)]
    assert raised_code(lambda: cur.executemany("BEGIN NULL; END;", 1, batcherrors=True)) == "DPY-2040"
    assert raised_code(lambda: cur.executemany("BEGIN NULL; END;", 1, arraydmlrowcounts=True)) == "DPY-2040"


@pytest.mark.parametrize("parameters, code", [
    (((1,), (2,)), "DPY-2004"), ("ab", "DPY-2004"), (None, "DPY-2004"), (-1, "DPY-2004"),
    ([(1,), "2"], "DPY-2004"), ([(1,), 5], "DPY-2004"), ([(1,), {"a": 2}], "DPY-2006"),
])
def test_executemany_refuses_wrong_parameters_and_runs_nothing(conn, dsn, parameters, code):
    create_table(dsn, "CREATE TABLE t (a INTEGER)")
    cur = conn.cursor()
    assert raised_code(lambda: cur.executemany("INSERT INTO t (a) VALUES (:a)", parameters)) == code
    assert query_rows(conn, "SELECT COUNT(*) FROM t") == [(0,)]
    assert raised_code(lambda: cur.executemany(5, [])) == ""
