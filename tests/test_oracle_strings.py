"""Oracle has no empty string: ``''`` (typed or bound) is NULL, ``||`` and CONCAT skip NULL
operands (NULL only of two NULLs), and a function leaving nothing gives NULL — on both
stores (:mod:`sluice.store.oraclestrings`).  Oracle SQL Reference, "Concatenation Operator":
"concatenating a zero-length character string with another operand always results in the
other operand, so null can result only from the concatenation of two null strings."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import filled_table, query_headed, query_rows

_EMP = [(1, "KING", None, None), (2, "JONES", 1, "lead"), (3, "SCOTT", 2, "x"), (4, "FORD", 2, None)]


@pytest.fixture
def emp(conn, dsn):
    return filled_table(conn, dsn, "CREATE TABLE emp (empno INTEGER, ename VARCHAR(20), mgr INTEGER, "
                                   "note VARCHAR(20))",
                        "INSERT INTO emp (empno, ename, mgr, note) VALUES (:1, :2, :3, :4)", _EMP)


@pytest.mark.parametrize("sql, row", [
    ("SELECT NULL || 'a', 'a' || NULL || 'b', NULL || NULL, 'a' || '' FROM DUAL", ("a", "ab", None, "a")),
    ("SELECT CONCAT('a', NULL), CONCAT(NULL, NULL), CONCAT('', 'b'), CONCAT('a', 'b') FROM DUAL",
     ("a", None, "b", "ab")),
    # numbers and dates are written as the store wrote them before
    ("SELECT 1 || 'a', 1.5 || 'a', NULL || 7, 'd' || DATE '2026-01-02' FROM DUAL",
     ("1a", "1.5a", "7", "d2026-01-02 00:00:00")),
    # Oracle's precedence: * and / before ||; +, - and || from the left
    ("SELECT 2 * 3 || 'a', 2 + 3 || 'a', 'x' || 2 * 3 || 'y', - 1 || 'a' FROM DUAL", ("6a", "5a", "x6y", "-1a")),
    ("SELECT LPAD(' ', 2 * (1 - 1)) || 'KING', 'n=' || (SELECT NULL FROM DUAL) || '!' FROM DUAL", ("KING", "n=!")),
    ("SELECT CASE WHEN 1 = 1 THEN NULL || 'b' END, UPPER(NULL || 'c'), CONCAT(NULL, NULL || 'd') FROM DUAL",
     ("b", "C", "d")),
    # '' is NULL
    ("SELECT '', NVL('', 'x'), LENGTH(''), COALESCE('', 'z'), DECODE('', NULL, 'n', 'v') FROM DUAL",
     (None, "x", None, "z", "n")),
    ("SELECT COUNT(*) FROM DUAL WHERE '' IS NULL", (1,)),
    ("SELECT COUNT(*) FROM DUAL WHERE 'a' <> '' OR '' = ''", (0,)),
    ("SELECT 'it''s' || '', '''' || NULL FROM DUAL", ("it's", "'")),
    # functions that leave nothing: NULL
    ("SELECT SUBSTR('abc', 5), TRIM('  '), LPAD('x', 0), LTRIM('  '), RTRIM('xx', 'x'), LOWER('') FROM DUAL",
     (None, None, None, None, None, None)),
    # REPLACE: a NULL (or no) replacement removes, a NULL search leaves the text
    ("SELECT REPLACE('abc', 'b', ''), REPLACE('abc', 'b'), REPLACE('abc', NULL, 'x'), REPLACE('a', 'a'), "
     "REPLACE(NULL, 'a', 'b') FROM DUAL", ("ac", "ac", "abc", None, None)),
])
def test_empty_string_is_null_on_both_stores(conn, sql, row):
    assert query_rows(conn, sql) == [row]


def test_headings_stay_oracles(conn):
    headings, rows = query_headed(conn, "SELECT NULL || 'a', '' FROM DUAL")
    assert headings == ["NULL||'A'", "''"] and rows == [("a", None)]
    # a subquery's item read by *: named as Oracle names it, not as rewritten
    headings, rows = query_headed(conn, "SELECT * FROM (SELECT 'a' || NULL, CONCAT('b', '') FROM DUAL)")
    assert headings == ["'A'||NULL", "CONCAT('B','')"] and rows == [("a", "b")]


def test_concatenation_of_columns(emp):
    assert query_rows(emp, "SELECT ename || ' (' || note || ')' FROM emp ORDER BY empno") == [
        ("KING ()",), ("JONES (lead)",), ("SCOTT (x)",), ("FORD ()",)]
    assert query_rows(emp, "SELECT ename FROM emp WHERE ename || note = 'SCOTTx'") == [("SCOTT",)]
    assert query_rows(emp, "SELECT empno || '-' || empno * 2 FROM emp WHERE note IS NULL ORDER BY 1") == [
        ("1-2",), ("4-8",)]


def test_the_hierarchy_idiom(emp):
    rows = query_rows(emp, "SELECT LPAD(' ', 2 * (LEVEL - 1)) || ename tree FROM emp "
                           "START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr")
    assert rows == [("KING",), ("  JONES",), ("    SCOTT",), ("    FORD",)]


def test_empty_values_bound_or_typed_are_stored_null(emp):
    cur = emp.cursor()
    cur.execute("INSERT INTO emp (empno, ename, note) VALUES (5, 'ADAMS', '')")
    cur.execute("INSERT INTO emp (empno, ename, note) VALUES (:1, :2, :3)", [6, "BLAKE", ""])
    cur.execute("INSERT INTO emp (empno, ename, note) VALUES (:n, :e, :c)", {"n": 7, "e": "ALLEN", "c": ""})
    cur.executemany("INSERT INTO emp (empno, ename, note) VALUES (:1, :2, :3)", [(8, "CLARK", "")])
    assert query_rows(emp, "SELECT empno FROM emp WHERE empno > 4 AND note IS NULL ORDER BY empno") == [
        (5,), (6,), (7,), (8,)]
    assert query_rows(emp, "SELECT COUNT(*) FROM emp WHERE note = :c", {"c": ""}) == [(0,)]
    assert query_rows(emp, "SELECT NVL(:c, 'y'), :c || 'x' FROM DUAL", {"c": ""}) == [("y", "x")]
    cur.execute("UPDATE emp SET note = note || '+' WHERE empno IN (1, 3)")
    assert query_rows(emp, "SELECT note FROM emp WHERE empno IN (1, 3) ORDER BY empno") == [("+",), ("x+",)]
