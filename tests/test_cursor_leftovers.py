"""Cursor SQL the earlier sessions left (docs/STATUS.md "Known gaps"), answered as Oracle answers
on both stores: a string in arithmetic is a number (ORA-01722 when it is none; ``'a' || 1 + 2``
is ``('a' || 1) + 2``), TO_NUMBER of a column by a literal model on PostgreSQL, an interval
through a CASE or a subquery's alias on SQLite, a TIMESTAMP plus NUMTODSINTERVAL of a column on
SQLite, date arithmetic on an object's DATE attribute, TO_CHAR with a bound number model on
PostgreSQL, a hierarchical query over a join."""

from __future__ import annotations

import datetime as dt
import re

import pytest

import sluice
from sluice.numformat import read_number
from tests.sqlhelpers import filled_table, query_code, query_headed, query_rows

D = dt.datetime


# -- a string in arithmetic is a number (store/oraclestrings.py) --------------------------------
@pytest.mark.parametrize("sql", [
    "SELECT 'a' || 1 + 2 FROM DUAL",          # || and + alike, from the left: ('a' || 1) + 2
    "SELECT 'x' + 1 FROM DUAL",
    "SELECT 1 - 'x' FROM DUAL",
    "SELECT 2 * 'x' FROM DUAL",
    "SELECT ('a' || 'b') - 1 FROM DUAL",
    "SELECT 1 + 'x' || 'y' FROM DUAL",        # (1 + 'x') || 'y'
])
def test_a_string_that_is_no_number_in_arithmetic_is_ora_01722(conn, sql):
    assert query_code(conn, sql) == "ORA-01722"


def test_a_string_that_is_a_number_in_arithmetic(conn):
    assert query_rows(conn, "SELECT '1' || 2 + 3, '1.5' + 1, 2 * '3', - '4' + 10, ('1' || '2') + 1, "
                            "' 7 ' - 2, 'a' || 1, 1 + 2 || 'a' FROM DUAL") == [
        (15, 2.5, 6, 6, 13, 5, "a1", "3a")]


def test_a_concatenation_of_columns_in_arithmetic(conn, dsn):
    filled_table(conn, dsn, "CREATE TABLE parts (id INTEGER, a VARCHAR(10), b VARCHAR(10))",
                 "INSERT INTO parts (id, a, b) VALUES (:1, :2, :3)", [(1, "1", "2"), (2, "x", "2")])
    assert query_rows(conn, "SELECT a || b + 1 FROM parts WHERE id = 1") == [(13,)]
    assert query_code(conn, "SELECT a || b + 1 FROM parts WHERE id = 2") == "ORA-01722"
    # a text column an operand of arithmetic itself (SQLite added its leading digits, PostgreSQL
    # had no varchar + integer): a number
    assert query_rows(conn, "SELECT b + 1, a - b, 1 + b || 'x' FROM parts WHERE id = 1") == [(3, -1, "3x")]
    assert query_code(conn, "SELECT a + 1 FROM parts WHERE id = 2") == "ORA-01722"
    assert query_rows(conn, "SELECT a || '.5' + b FROM parts WHERE id = 1") == [(3.5,)]


# -- TO_NUMBER of a column by a literal model (numformat.pg_read_number) --------------------------
def test_to_number_of_a_column_with_a_model(conn, dsn):
    filled_table(conn, dsn, "CREATE TABLE amounts (id INTEGER, txt VARCHAR(20))",
                 "INSERT INTO amounts (id, txt) VALUES (:1, :2)",
                 [(1, "1,234.50"), (2, " 12,345.68"), (3, "1234"), (4, None), (5, "-7"), (6, "5.")])
    assert query_rows(conn, "SELECT id, TO_NUMBER(txt, '99G999D99') FROM amounts WHERE id IN (1, 2, 4, 5, 6) "
                            "ORDER BY id") == [(1, 1234.5), (2, 12345.68), (4, None), (5, -7), (6, 5)]
    assert query_rows(conn, "SELECT TO_NUMBER(txt, '9999') + 1 FROM amounts WHERE id = 3") == [(1235,)]
    # a group separator where the model has none there, more decimals than the model's
    assert query_code(conn, "SELECT TO_NUMBER(txt, '99G999D99') FROM amounts WHERE id = 3") == "ORA-01722"
    assert query_code(conn, "SELECT TO_NUMBER(txt, '9G999D9') FROM amounts WHERE id = 1") == "ORA-01722"
    assert query_code(conn, "SELECT TO_NUMBER(txt, 'xyz') FROM amounts") == "ORA-01481"


_TEXTS = ["1", "12", "123", "1234", "1,234", "12,34", ",123", "1.5", "1.55", "1.555", ".5", ".", "1.", "-1",
          "+1", "1-", "1+", "<1>", "<1", "$1", "-$1", "$-1", " 12 ", "1 2", "", "x", "1,234.5", "12,345.67",
          "0", "00", "9,999,999"]
_MODELS = ["9", "999", "9,999", "99G999D99", "9.99", "99.", ".99", "S999", "999S", "999MI", "999PR",
           "$9,999", "FM999.9", "0000", "9,999,999"]


@pytest.mark.parametrize("model", _MODELS)
def test_the_postgresql_pattern_reads_what_read_number_reads(model):
    from sluice.numformat import number_pattern
    pattern = re.compile(number_pattern(model))
    for text in _TEXTS:
        try:
            read_number(text, model)
            ok = True
        except sluice.Error:
            ok = False
        assert (pattern.search(text) is not None) == ok, (text, model)


# -- intervals through a CASE or a subquery's alias (SQLite: typed, so fetched as timedelta) --------
@pytest.fixture
def slots(conn, dsn):
    return filled_table(conn, dsn, "CREATE TABLE slots (id INTEGER, a TIMESTAMP, b TIMESTAMP, mins INTEGER)",
                        "INSERT INTO slots (id, a, b, mins) VALUES (:1, :2, :3, :4)",
                        [(1, D(2026, 1, 1, 10), D(2026, 1, 1, 12, 30), 90), (2, D(2026, 1, 2), None, None)])


def test_an_interval_through_a_case_or_a_subquerys_alias(slots):
    iv = dt.timedelta(hours=2, minutes=30)
    assert query_rows(slots, "SELECT CASE WHEN id = 1 THEN b - a END, NVL(b - a, NUMTODSINTERVAL(1, 'HOUR')) "
                             "FROM slots ORDER BY id") == [(iv, iv), (None, dt.timedelta(hours=1))]
    assert query_rows(slots, "SELECT x, y, z FROM (SELECT CASE WHEN id = 1 THEN b - a ELSE NULL END x, "
                             "(b - a) * 2 y, CASE id WHEN 1 THEN NUMTODSINTERVAL(mins, 'MINUTE') END z "
                             "FROM slots WHERE id = 1)") == [(iv, 2 * iv, dt.timedelta(minutes=90))]
    assert query_rows(slots, "SELECT w FROM (SELECT x w FROM (SELECT b - a x FROM slots WHERE id = 1))") == [(iv,)]


# -- a TIMESTAMP plus NUMTODSINTERVAL of a column (SQLite: sluice_add_interval) ----------------------
def test_a_timestamp_plus_numtodsinterval_of_a_column(slots):
    headings, rows = query_headed(slots, "SELECT a + NUMTODSINTERVAL(mins, 'MINUTE'), "
                                         "a - NUMTODSINTERVAL(mins * 2, 'SECOND') + NUMTODSINTERVAL(1, 'DAY') "
                                         "FROM slots ORDER BY id")
    assert rows == [(D(2026, 1, 1, 11, 30), D(2026, 1, 2, 9, 57)), (None, None)]
    assert query_rows(slots, "SELECT id FROM slots WHERE a + NUMTODSINTERVAL(mins, 'MINUTE') < b") == [(1,)]


# -- date arithmetic on an object's DATE attribute (store/castdates.py) -----------------------------
@pytest.fixture
def tasks(conn):
    cur = conn.cursor()
    cur.execute("CREATE TYPE task_t AS OBJECT (title VARCHAR2(40), due_date DATE, created DATE)")
    conn.aqadm.create_queue_table(queue_table="TASK_QT", queue_payload_type="TASK_T")
    conn.aqadm.create_queue(queue_name="TASKS", queue_table="TASK_QT")
    conn.aqadm.start_queue(queue_name="TASKS")
    task = conn.gettype("TASK_T")
    t = task.newobject()
    t.TITLE, t.DUE_DATE, t.CREATED = "file", D(2026, 1, 31, 9, 30), D(2026, 1, 29, 21, 30)
    conn.queue("TASKS", task).enqone(conn.msgproperties(payload=t))
    conn.commit()
    return conn


def test_date_arithmetic_on_a_date_attribute(tasks):
    rows = query_rows(tasks, "SELECT q.user_data.due_date + 1, q.user_data.due_date - 1/24, "
                             "SYSDATE - q.user_data.due_date, DATE '2026-02-01' - q.user_data.due_date "
                             "FROM AQ$TASK_QT q")
    (later, earlier, age, before), = rows
    assert later == D(2026, 2, 1, 9, 30) and earlier == D(2026, 1, 31, 8, 30)
    assert abs(age - (D.now() - D(2026, 1, 31, 9, 30)) / dt.timedelta(days=1)) < 0.01
    assert abs(before - 14.5 / 24) < 1e-9
    assert query_rows(tasks, "SELECT q.user_data.title FROM AQ$TASK_QT q "
                             "WHERE q.user_data.due_date + 1 > DATE '2026-02-01'") == [("file",)]
    (iv,), = query_rows(tasks, "SELECT SYSTIMESTAMP - q.user_data.due_date FROM AQ$TASK_QT q")
    assert type(iv) is dt.timedelta
    # one attribute minus another: the days between
    assert query_rows(tasks, "SELECT q.user_data.due_date - q.user_data.created FROM AQ$TASK_QT q") == [(1.5,)]


# -- TO_CHAR with a bound number model (PostgreSQL: written as a literal one) -----------------------
def test_to_char_with_a_bound_number_model(conn, dsn):
    assert query_rows(conn, "SELECT TO_CHAR(1234.5, :f), TO_CHAR(:n, :g), TO_CHAR(-12, :h) FROM DUAL",
                      {"f": "9G999D99", "n": 12345, "g": "999", "h": "$99"}) == [(" 1,234.50", "####", "-$12")]
    assert query_code(conn, "SELECT TO_CHAR(5, :f) FROM DUAL", {"f": "xyz"}) == "ORA-01481"
    filled_table(conn, dsn, "CREATE TABLE prices (n NUMERIC)", "INSERT INTO prices (n) VALUES (:1)", [(12,)])
    assert query_rows(conn, "SELECT TO_CHAR(n, :f) FROM prices", ["FM0000"]) == [("0012",)]
    assert query_rows(conn, "SELECT TO_CHAR(DATE '2026-01-02', :f) FROM DUAL", ["YYYY-MM-DD"]) == [("2026-01-02",)]


# -- a hierarchical query over a join (store/hierarchyjoins.py) -------------------------------------
@pytest.fixture
def staff(conn, dsn):
    filled_table(conn, dsn, "CREATE TABLE dept (deptno INTEGER, dname VARCHAR(20))",
                 "INSERT INTO dept (deptno, dname) VALUES (:1, :2)", [(10, "ACCOUNTING"), (20, "RESEARCH"),
                                                                       (30, "SALES")])
    return filled_table(conn, dsn, "CREATE TABLE staff (empno INTEGER, ename VARCHAR(20), mgr INTEGER, "
                                   "deptno INTEGER)", "INSERT INTO staff (empno, ename, mgr, deptno) "
                                                      "VALUES (:1, :2, :3, :4)",
                        [(1, "KING", None, 10), (2, "JONES", 1, 20), (3, "BLAKE", 1, 30), (4, "SCOTT", 2, 20),
                         (5, "ADAMS", 4, None)])


def test_a_hierarchy_over_a_join_joins_first(staff):
    # the join first (ADAMS, in no department, is not joined), then the hierarchy
    assert query_headed(staff, "SELECT e.ename, d.dname, LEVEL FROM staff e JOIN dept d ON d.deptno = e.deptno "
                               "START WITH e.mgr IS NULL CONNECT BY PRIOR e.empno = e.mgr") == (
        ["ENAME", "DNAME", "LEVEL"],
        [("KING", "ACCOUNTING", 1), ("JONES", "RESEARCH", 2), ("SCOTT", "RESEARCH", 3), ("BLAKE", "SALES", 2)])
    # an outer join keeps him; bare names of one table, USING, WHERE after the hierarchy
    assert query_headed(staff, "SELECT ename, dname, SYS_CONNECT_BY_PATH(ename, '/') path FROM staff "
                               "LEFT JOIN dept USING (deptno) WHERE dname IS NULL OR LEVEL < 3 "
                               "START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr ORDER SIBLINGS BY ename") == (
        ["ENAME", "DNAME", "PATH"],
        [("KING", "ACCOUNTING", "/KING"), ("BLAKE", "SALES", "/KING/BLAKE"), ("JONES", "RESEARCH", "/KING/JONES"),
         ("ADAMS", None, "/KING/JONES/SCOTT/ADAMS")])


def test_a_hierarchy_over_a_comma_join_takes_its_join_predicates_first(staff):
    # the WHERE's join predicate before the hierarchy (ADAMS is not joined), LEVEL <= 2 after it
    assert query_headed(staff, "SELECT e.ename, d.dname, LEVEL FROM staff e, dept d "
                               "WHERE LEVEL <= 2 AND d.deptno = e.deptno "
                               "START WITH e.mgr IS NULL CONNECT BY PRIOR e.empno = e.mgr") == (
        ["ENAME", "DNAME", "LEVEL"], [("KING", "ACCOUNTING", 1), ("JONES", "RESEARCH", 2), ("BLAKE", "SALES", 2)])
    # only join predicates: no WHERE left after the hierarchy
    assert query_headed(staff, "SELECT ename FROM staff, dept WHERE dept.deptno = staff.deptno "
                               "START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr")[1] == [
        ("KING",), ("JONES",), ("SCOTT",), ("BLAKE",)]
