"""cursor.description names a user's query's columns as Oracle does, on both backends:
aliases and column names upper-cased unless quoted, a qualified column by its own name,
any other expression by its text upper-cased without white space (PostgreSQL's
``?column?`` and ``count``, SQLite's text as typed, are not Oracle's); the columns of a
``*`` upper-cased; SYSDATE is a DATE and SYSTIMESTAMP a TIMESTAMP WITH TIME ZONE."""

from __future__ import annotations

import sluice
from tests.sqlhelpers import create_table, query_names


def test_unaliased_expressions_are_named_by_their_text(conn):
    assert query_names(conn, "SELECT 2.5 FROM dual") == ["2.5"]
    assert query_names(conn, "SELECT 'x' FROM dual") == ["'X'"]
    assert query_names(conn, "select count(*), 1 + 2 FROM dual") == ["COUNT(*)", "1+2"]


def test_aliases_are_upper_cased_unless_quoted(conn):
    assert query_names(conn, 'SELECT 1 AS n, 2 m, 3 AS "Id", 4 AS "id" FROM dual') == ["N", "M", "Id", "id"]
    # a quoted alias with a dot in it is an alias all the same
    assert query_names(conn, 'SELECT 1 "A.b", 2 AS "x.y" FROM dual') == ["A.b", "x.y"]


def test_columns_of_a_users_table(conn, dsn):
    create_table(dsn, "CREATE TABLE dept (dept_id INTEGER, dept_name TEXT)")
    cur = conn.cursor()
    cur.execute("INSERT INTO dept (dept_id, dept_name) VALUES (1, 'a')")
    assert query_names(conn, "SELECT * FROM dept") == ["DEPT_ID", "DEPT_NAME"]
    assert query_names(conn, "select dept_id from dept") == ["DEPT_ID"]
    assert query_names(conn, "SELECT d.dept_id, upper(d.dept_name), Dept_id + 1 AS next, d.* FROM dept d "
                        "WHERE dept_id IN (SELECT 1 AS x FROM dual)") == [
        "DEPT_ID", "UPPER(D.DEPT_NAME)", "NEXT", "DEPT_ID", "DEPT_NAME"]
    # a compound query: the first select list's
    assert query_names(conn, "SELECT dept_id AS a, 'x' FROM dept UNION ALL SELECT 2, 'y' FROM dual") == ["A", "'X'"]


def test_columns_of_the_views(conn):
    assert query_names(conn, "select queue_table, owner from dba_queue_tables") == ["QUEUE_TABLE", "OWNER"]
    cur = conn.cursor()
    cur.execute("SELECT * FROM dba_queue_tables")
    assert all(d[0] == d[0].upper() for d in cur.description)


def test_clock_types_are_oracles(conn):
    cur = conn.cursor()
    cur.execute("SELECT SYSDATE, SYSDATE - 1 AS yesterday, SYSTIMESTAMP, LOCALTIMESTAMP FROM dual")
    assert [d[:2] for d in cur.description] == [
        ("SYSDATE", sluice.DB_TYPE_DATE), ("YESTERDAY", sluice.DB_TYPE_DATE),
        ("SYSTIMESTAMP", sluice.DB_TYPE_TIMESTAMP_TZ), ("LOCALTIMESTAMP", sluice.DB_TYPE_TIMESTAMP)]


def test_a_bind_is_headed_by_its_name(conn):
    """Oracle heads ``SELECT :t`` ``:T``; the cursor numbers the binds before the store
    sees them (plsql/binds.py), which headed it ``:1``."""
    cur = conn.cursor()
    cur.execute("SELECT :t, :t + 1 AS n, :x || ':1', SYSDATE - :days FROM dual", {"t": 1, "x": "a", "days": 1})
    assert [d[0] for d in cur.description] == [":T", "N", ":X||':1'", "SYSDATE-:DAYS"]
    assert cur.fetchall()[0][:3] == (1, 2, "a:1")
    cur.execute("SELECT :a, :a, :1 FROM dual", [1, 2, 3])         # by position: each occurrence a value
    assert [d[0] for d in cur.description] == [":A", ":A", ":1"] and cur.fetchall() == [(1, 2, 3)]
