"""Hierarchical queries typed at a cursor (CONNECT BY PRIOR … START WITH …) answer as Oracle
answers them, on both stores (:mod:`sluice.store.sqlhierarchy`): the rows depth first, LEVEL,
SYS_CONNECT_BY_PATH, CONNECT_BY_ROOT, CONNECT_BY_ISLEAF, ORDER SIBLINGS BY, NOCYCLE and
CONNECT_BY_ISCYCLE, ORA-01436 for a loop."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import filled_table
from tests.sqlhelpers import query_code, query_headed

# KING ─┬─ JONES ─┬─ SCOTT ── ADAMS
#       │         └─ FORD
#       └─ BLAKE ─── ALLEN
_EMP = [(1, "KING", None), (2, "JONES", 1), (3, "BLAKE", 1), (4, "SCOTT", 2), (5, "ADAMS", 4),
        (6, "ALLEN", 3), (7, "FORD", 2)]


@pytest.fixture
def emp(conn, dsn):
    return filled_table(conn, dsn, "CREATE TABLE emp (empno INTEGER, ename VARCHAR(20), mgr INTEGER)",
                        "INSERT INTO emp (empno, ename, mgr) VALUES (:1, :2, :3)", _EMP)


@pytest.mark.parametrize("sql, headings, rows", [
    # depth first: a row, then its children's subtrees (siblings in the table's order)
    ("SELECT ename, LEVEL FROM emp START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr", ["ENAME", "LEVEL"],
     [("KING", 1), ("JONES", 2), ("SCOTT", 3), ("ADAMS", 4), ("FORD", 3), ("BLAKE", 2), ("ALLEN", 3)]),
    # ORDER SIBLINGS BY, the clauses the other way round, PRIOR on the right
    ("SELECT ename FROM emp CONNECT BY mgr = PRIOR empno START WITH empno = 1 ORDER SIBLINGS BY ename",
     ["ENAME"], [("KING",), ("BLAKE",), ("ALLEN",), ("JONES",), ("FORD",), ("SCOTT",), ("ADAMS",)]),
    ("SELECT SYS_CONNECT_BY_PATH(e.ename, '/'), CONNECT_BY_ROOT ename, CONNECT_BY_ISLEAF leaf FROM emp e "
     "START WITH e.ename = 'JONES' CONNECT BY PRIOR e.empno = e.mgr ORDER SIBLINGS BY e.ename DESC",
     ["SYS_CONNECT_BY_PATH(E.ENAME,'/')", "CONNECT_BY_ROOTENAME", "LEAF"],
     [("/JONES", "JONES", 0), ("/JONES/SCOTT", "JONES", 0), ("/JONES/SCOTT/ADAMS", "JONES", 1),
      ("/JONES/FORD", "JONES", 1)]),
    # WHERE filters the hierarchy's rows after it is built; LEVEL in CONNECT BY bounds it
    ("SELECT ename, LEVEL - 1 depth FROM emp WHERE ename <> 'SCOTT' START WITH mgr IS NULL "
     "CONNECT BY PRIOR empno = mgr AND LEVEL <= 3", ["ENAME", "DEPTH"],
     [("KING", 0), ("JONES", 1), ("FORD", 2), ("BLAKE", 1), ("ALLEN", 2)]),
    # no START WITH: every row is a root
    ("SELECT count(*) FROM emp CONNECT BY PRIOR empno = mgr", ["COUNT(*)"], [(18,)]),
    # GROUP BY LEVEL, ORDER BY overrides the hierarchy's order
    ("SELECT LEVEL, count(*) n FROM emp START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr "
     "GROUP BY LEVEL ORDER BY LEVEL DESC", ["LEVEL", "N"], [(4, 1), (3, 3), (2, 2), (1, 1)]),
    ("SELECT ename FROM emp START WITH mgr = 1 CONNECT BY PRIOR empno = mgr ORDER BY ename",
     ["ENAME"], [("ADAMS",), ("ALLEN",), ("BLAKE",), ("FORD",), ("JONES",), ("SCOTT",)]),
    # in a subquery, over a subquery, after the statement's own WITH
    ("SELECT x FROM (SELECT ename x, LEVEL l FROM emp START WITH empno = 2 CONNECT BY PRIOR empno = mgr) "
     "WHERE l = 2 ORDER BY x", ["X"], [("FORD",), ("SCOTT",)]),
    ("SELECT ename FROM (SELECT * FROM emp WHERE empno <> 4) e START WITH mgr IS NULL "
     "CONNECT BY PRIOR empno = mgr", ["ENAME"], [("KING",), ("JONES",), ("FORD",), ("BLAKE",), ("ALLEN",)]),
    ("WITH b AS (SELECT empno, ename, mgr FROM emp) SELECT ename FROM b START WITH empno = 3 "
     "CONNECT BY PRIOR empno = mgr", ["ENAME"], [("BLAKE",), ("ALLEN",)]),
    # ROWNUM numbers the rows depth first (before ORDER BY, as Oracle's); a member of UNION ALL
    ("SELECT ROWNUM, ename FROM emp START WITH empno = 2 CONNECT BY PRIOR empno = mgr ORDER BY ename",
     ["ROWNUM", "ENAME"], [(3, "ADAMS"), (4, "FORD"), (1, "JONES"), (2, "SCOTT")]),
    ("SELECT 'x' FROM DUAL UNION ALL SELECT ename FROM emp START WITH empno = 3 CONNECT BY PRIOR empno = mgr",
     ["'X'"], [("x",), ("BLAKE",), ("ALLEN",)]),
    # * is the table's columns
    ("SELECT * FROM emp START WITH empno = 3 CONNECT BY PRIOR empno = mgr", ["EMPNO", "ENAME", "MGR"],
     [(3, "BLAKE", 1), (6, "ALLEN", 3)]),
    ("SELECT LEVEL, e.* FROM emp e START WITH empno = 3 CONNECT BY PRIOR empno = mgr",
     ["LEVEL", "EMPNO", "ENAME", "MGR"], [(1, 3, "BLAKE", 1), (2, 6, "ALLEN", 3)]),
])
def test_hierarchies_as_oracle(emp, sql, headings, rows):
    assert query_headed(emp, sql) == (headings, rows)


def test_a_loop_is_ora_01436_or_with_nocycle_cut(emp):
    cur = emp.cursor()
    cur.execute("UPDATE emp SET mgr = 5 WHERE empno = 1")     # ADAMS manages KING: a loop
    emp.commit()
    sql = "SELECT ename FROM emp START WITH empno = 1 CONNECT BY PRIOR empno = mgr"
    assert query_code(emp, sql) == "ORA-01436"
    # whatever the WHERE keeps
    assert query_code(emp, "SELECT ename FROM emp WHERE ename = 'nobody' START WITH empno = 1 "
                      "CONNECT BY PRIOR empno = mgr") == "ORA-01436"
    assert query_headed(emp, "SELECT ename, CONNECT_BY_ISCYCLE, LEVEL FROM emp START WITH empno = 1 "
                      "CONNECT BY NOCYCLE PRIOR empno = mgr") == (
        ["ENAME", "CONNECT_BY_ISCYCLE", "LEVEL"],
        [("KING", 0, 1), ("JONES", 0, 2), ("SCOTT", 0, 3), ("ADAMS", 1, 4), ("FORD", 0, 3), ("BLAKE", 0, 2),
         ("ALLEN", 0, 3)])
    # a loop the START WITH rows never reach is none
    assert query_headed(emp, "SELECT ename FROM emp START WITH empno = 3 CONNECT BY PRIOR empno = mgr")[1] == [
        ("BLAKE",), ("ALLEN",)]
    assert query_code(emp, "SELECT ename, CONNECT_BY_ISCYCLE FROM emp START WITH empno = 1 "
                      "CONNECT BY PRIOR empno = mgr") == "ORA-30930"


@pytest.mark.parametrize("sql", [
    # * over a subquery: its columns are not known
    "SELECT * FROM (SELECT * FROM emp) e START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr",
    "SELECT PRIOR ename FROM emp START WITH mgr IS NULL CONNECT BY PRIOR empno = mgr",
    # a join of a subquery (its columns are not known: tests/test_cursor_leftovers.py joins tables)
    "SELECT a.ename FROM (SELECT * FROM emp) a, emp b START WITH a.mgr IS NULL CONNECT BY PRIOR a.empno = a.mgr",
])
def test_what_sluice_does_not_answer_is_refused(emp, sql):
    assert query_code(emp, sql) == "SLU-00001"
