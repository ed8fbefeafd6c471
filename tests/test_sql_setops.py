"""MINUS and the set operators' order, the CONNECT BY row generator and UTL_RAW / DBMS_LOB
calls typed at a cursor answer as Oracle answers them, on both stores
(:mod:`sluice.store.sqlsetops`); any other CONNECT BY without PRIOR is SLU-00001 (with PRIOR:
tests/test_sql_hierarchy.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import make_queue
from tests.sqlhelpers import create_table, query_code, query_headed


@pytest.fixture
def table(conn, dsn):
    create_table(dsn, "CREATE TABLE T (n INTEGER, s TEXT)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO T (n, s) VALUES (:1, :2)", [(1, "a"), (2, "b"), (2, "b"), (3, "c")])
    conn.commit()
    return conn


# -- MINUS and the set operators' order -------------------------------------------------
@pytest.mark.parametrize("sql, headings, rows", [
    ("SELECT a FROM (SELECT 1 a FROM DUAL UNION ALL SELECT 2 FROM DUAL) MINUS SELECT 2 FROM DUAL",
     ["A"], [(1,)]),
    # MINUS is a set operation: distinct rows
    ("SELECT n FROM T MINUS SELECT 3 FROM DUAL ORDER BY n", ["N"], [(1,), (2,)]),
    ("SELECT n, s FROM T minus SELECT n, s FROM T WHERE n = 1 ORDER BY 1", ["N", "S"], [(2, "b"), (3, "c")]),
    ("SELECT n FROM T INTERSECT SELECT 2 FROM DUAL", ["N"], [(2,)]),
    ("SELECT n FROM T UNION SELECT 4 FROM DUAL ORDER BY n DESC", ["N"], [(4,), (3,), (2,), (1,)]),
    # Oracle reads the set operators left to right (PostgreSQL's INTERSECT binds tighter)
    ("SELECT 1 FROM DUAL UNION SELECT 2 FROM DUAL INTERSECT SELECT 2 FROM DUAL", ["1"], [(2,)]),
    ("SELECT n FROM T UNION SELECT 5 FROM DUAL INTERSECT SELECT n FROM T WHERE n > 1 ORDER BY 1",
     ["N"], [(2,), (3,)]),
    ("SELECT 1 x FROM DUAL UNION SELECT 2 FROM DUAL MINUS SELECT 1 FROM DUAL UNION SELECT 3 FROM DUAL "
     "ORDER BY 1 DESC", ["X"], [(3,), (2,)]),
    ("SELECT n FROM T MINUS SELECT 1 FROM DUAL INTERSECT SELECT 3 FROM DUAL", ["N"], [(3,)]),
    ("SELECT COUNT(*) FROM (SELECT n FROM T MINUS SELECT 1 FROM DUAL)", ["COUNT(*)"], [(2,)]),
    ("WITH x AS (SELECT n FROM T) SELECT n FROM x UNION SELECT 9 FROM DUAL INTERSECT SELECT 9 FROM DUAL",
     ["N"], [(9,)]),
    # a quoted name and a literal are not the operator
    ("SELECT 'MINUS' \"MINUS\" FROM DUAL", ["MINUS"], [("MINUS",)]),
])
def test_set_operators_as_oracle(table, sql, headings, rows):
    assert query_headed(table, sql) == (headings, rows)


# -- CONNECT BY LEVEL <= n ------------------------------------------------------------------
@pytest.mark.parametrize("sql, binds, headings, rows", [
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= 3", None, ["LEVEL"], [(1,), (2,), (3,)]),
    ("SELECT 1 FROM DUAL CONNECT BY LEVEL <= 2", None, ["1"], [(1,), (1,)]),
    ("SELECT level n FROM dual connect by level < 3", None, ["N"], [(1,), (2,)]),
    ("SELECT LEVEL FROM DUAL CONNECT BY 3 >= LEVEL", None, ["LEVEL"], [(1,), (2,), (3,)]),
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= :n", {"n": 4}, ["LEVEL"], [(1,), (2,), (3,), (4,)]),
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= :1", [2.5], ["LEVEL"], [(1,), (2,)]),
    # the root row is always there
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= 0", None, ["LEVEL"], [(1,)]),
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= :n", {"n": None}, ["LEVEL"], [(1,)]),
    ("SELECT ROWNUM, LEVEL FROM DUAL CONNECT BY ROWNUM <= 3", None, ["ROWNUM", "LEVEL"],
     [(1, 1), (2, 2), (3, 3)]),
    ("SELECT d.dummy, LEVEL FROM DUAL d CONNECT BY LEVEL <= 2", None, ["DUMMY", "LEVEL"], [("X", 1), ("X", 2)]),
    ("SELECT LEVEL FROM DUAL WHERE MOD(LEVEL, 2) = 0 CONNECT BY LEVEL <= 6", None, ["LEVEL"],
     [(2,), (4,), (6,)]),
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= (SELECT COUNT(*) FROM T) ORDER BY LEVEL DESC", None,
     ["LEVEL"], [(4,), (3,), (2,), (1,)]),
    ("SELECT COUNT(*), SUM(LEVEL) FROM DUAL CONNECT BY LEVEL <= 1000", None, ["COUNT(*)", "SUM(LEVEL)"],
     [(1000, 500500)]),
    ("SELECT t.n, g.l FROM T t JOIN (SELECT LEVEL l FROM DUAL CONNECT BY LEVEL <= 2) g ON g.l = t.n "
     "ORDER BY 1, 2", None, ["N", "L"], [(1, 1), (2, 2), (2, 2)]),
])
def test_connect_by_level_generates_rows(table, sql, binds, headings, rows):
    assert query_headed(table, sql, binds) == (headings, rows)


def test_sysdate_minus_level_is_a_date_each_day_before(conn):
    headings, rows = query_headed(conn, "SELECT SYSDATE - LEVEL FROM DUAL CONNECT BY LEVEL <= 7")
    assert headings == ["SYSDATE-LEVEL"]
    days = [r[0] for r in rows]
    assert len(days) == 7 and all(type(d) is dt.datetime for d in days)
    assert all(a - b == dt.timedelta(days=1) for a, b in zip(days, days[1:]))
    now = dt.datetime.now()
    assert abs(days[0] - (now - dt.timedelta(days=1))) < dt.timedelta(hours=15)


@pytest.mark.parametrize("sql, code", [
    ("SELECT LEVEL FROM T CONNECT BY LEVEL <= 3", "SLU-00001"),
    # a hierarchy (tests/test_sql_hierarchy.py): DUAL's row is its own child, a loop
    ("SELECT LEVEL FROM DUAL CONNECT BY PRIOR DUMMY = DUMMY AND LEVEL <= 3", "ORA-01436"),
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= LEVEL", "SLU-00001"),
    ("SELECT LEVEL FROM DUAL CONNECT BY LEVEL = 3", "SLU-00001"),
    ("SELECT DBMS_LOB.GETLENGTH('a', 'b') FROM DUAL", "ORA-00909"),
    ("SELECT UTL_RAW.CAST_TO_VARCHAR2() FROM DUAL", "ORA-00909"),
])
def test_what_sluice_does_not_answer_is_refused(table, sql, code):
    assert query_code(table, sql) == code


# -- UTL_RAW and DBMS_LOB ---------------------------------------------------------------------
@pytest.fixture
def raw_queue(conn):
    make_queue(conn, "Q", table="QT", payload="RAW")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"hello", correlation="c1"))
    conn.commit()
    return conn


@pytest.mark.parametrize("sql, headings, rows", [
    ("SELECT UTL_RAW.CAST_TO_VARCHAR2(USER_DATA) FROM AQ$QT", ["UTL_RAW.CAST_TO_VARCHAR2(USER_DATA)"],
     [("hello",)]),
    ("SELECT utl_raw.cast_to_varchar2(q.user_data) txt FROM AQ$QT q WHERE q.CORR_ID = 'c1'", ["TXT"],
     [("hello",)]),
    ("SELECT UTL_RAW.LENGTH(USER_DATA), DBMS_LOB.GETLENGTH(USER_DATA) FROM AQ$QT",
     ["UTL_RAW.LENGTH(USER_DATA)", "DBMS_LOB.GETLENGTH(USER_DATA)"], [(5, 5)]),
    ("SELECT DBMS_LOB.SUBSTR(USER_DATA, 3, 2) FROM AQ$QT", ["DBMS_LOB.SUBSTR(USER_DATA,3,2)"], [(b"ell",)]),
    ("SELECT UTL_RAW.CAST_TO_VARCHAR2(DBMS_LOB.SUBSTR(USER_DATA, 2)) FROM AQ$QT",
     ["UTL_RAW.CAST_TO_VARCHAR2(DBMS_LOB.SUBSTR(USER_DATA,2))"], [("he",)]),
    ("SELECT COUNT(*) FROM AQ$QT WHERE UTL_RAW.CAST_TO_VARCHAR2(USER_DATA) LIKE 'hel%'", ["COUNT(*)"], [(1,)]),
    ("SELECT UTL_RAW.CAST_TO_RAW('hi'), UTL_RAW.LENGTH(UTL_RAW.CAST_TO_RAW('hi')) FROM DUAL",
     ["UTL_RAW.CAST_TO_RAW('HI')", "UTL_RAW.LENGTH(UTL_RAW.CAST_TO_RAW('HI'))"], [(b"hi", 2)]),
    ("SELECT DBMS_LOB.SUBSTR('abcdef', 2, 3), DBMS_LOB.SUBSTR('abcdef', 3), DBMS_LOB.SUBSTR('abcdef') FROM DUAL",
     ["DBMS_LOB.SUBSTR('ABCDEF',2,3)", "DBMS_LOB.SUBSTR('ABCDEF',3)", "DBMS_LOB.SUBSTR('ABCDEF')"],
     [("cd", "abc", "abcdef")]),
    ("SELECT DBMS_LOB.SUBSTR('abc', 0, 1), DBMS_LOB.SUBSTR('abc', 1, 0), DBMS_LOB.GETLENGTH('') FROM DUAL",
     ["DBMS_LOB.SUBSTR('ABC',0,1)", "DBMS_LOB.SUBSTR('ABC',1,0)", "DBMS_LOB.GETLENGTH('')"],
     [(None, None, None)]),
    ("SELECT DBMS_LOB.INSTR('abcabc', 'b'), DBMS_LOB.INSTR('abcabc', 'b', 1, 2), DBMS_LOB.GETLENGTH('abc') "
     "FROM DUAL", ["DBMS_LOB.INSTR('ABCABC','B')", "DBMS_LOB.INSTR('ABCABC','B',1,2)", "DBMS_LOB.GETLENGTH('ABC')"],
     [(2, 5, 3)]),
    ("SELECT 'UTL_RAW.LENGTH(x)' FROM DUAL", ["'UTL_RAW.LENGTH(X)'"], [("UTL_RAW.LENGTH(x)",)]),
])
def test_raw_and_lob_calls(raw_queue, sql, headings, rows):
    assert query_headed(raw_queue, sql) == (headings, rows)



# -- JSON payloads: JSON_VALUE (the stores'), JSON_QUERY, JSON_EXISTS ---------------------------
@pytest.fixture
def json_queue(conn):
    make_queue(conn, "JQ", table="JT", payload="JSON")
    conn.queue("JQ", "JSON").enqone(conn.msgproperties(payload={"a": 1, "b": {"z": "x y", "c": [1, 2]}}))
    conn.commit()
    return conn


@pytest.mark.parametrize("sql, rows", [
    ("SELECT JSON_VALUE(USER_DATA, '$.a'), JSON_VALUE(USER_DATA, '$.b.z') FROM AQ$JT", [("1", "x y")]),
    ("SELECT JSON_QUERY(USER_DATA, '$.b'), JSON_QUERY(USER_DATA, '$.b.c'), JSON_QUERY(USER_DATA, '$.a') "
     "FROM AQ$JT", [('{"z":"x y","c":[1,2]}', "[1,2]", None)]),
    ("SELECT JSON_QUERY(USER_DATA, '$.b.c[1]'), JSON_QUERY(USER_DATA, '$.nothing') FROM AQ$JT", [(None, None)]),
    ("SELECT JSON_QUERY('[{\"a\": [3, {\"k\": \"v\"}]}]', '$[0].a') FROM DUAL", [('[3,{"k":"v"}]',)]),
    ("SELECT COUNT(*) FROM AQ$JT WHERE JSON_EXISTS(USER_DATA, '$.b.c') AND NOT JSON_EXISTS(USER_DATA, '$.q')",
     [(1,)]),
    ("SELECT COUNT(*) FROM DUAL WHERE JSON_EXISTS('{\"a\": null}', '$.a')", [(1,)]),
    # a document that is no JSON: NULL / false (Oracle's NULL ON ERROR; PostgreSQL's cast raised)
    ("SELECT JSON_QUERY('nope', '$.a'), JSON_QUERY('{\"a\":', '$'), JSON_VALUE('[1,', '$[0]'), "
     "JSON_QUERY('{\"a\": [1]}', '$') FROM DUAL", [(None, None, None, '{"a":[1]}')]),
    ("SELECT COUNT(*) FROM DUAL WHERE NOT JSON_EXISTS('{bad', '$.a')", [(1,)]),
    ("SELECT JSON_QUERY(x, '$.a') FROM (SELECT '1, 1' x FROM DUAL UNION ALL SELECT '{\"a\": {\"b\": 1}}' "
     "FROM DUAL) t", [(None,), ('{"b":1}',)]),
])
def test_json_payload_calls(json_queue, sql, rows):
    assert query_headed(json_queue, sql)[1] == rows


@pytest.mark.parametrize("sql", [
    "SELECT JSON_QUERY(USER_DATA, '$.b' WITH WRAPPER) FROM AQ$JT",
    "SELECT JSON_QUERY(USER_DATA, '$.b[*]') FROM AQ$JT",
    "SELECT COUNT(*) FROM AQ$JT WHERE JSON_EXISTS(USER_DATA, '$.b?(@.z == \"x\")')",
])
def test_json_paths_sluice_does_not_follow_are_refused(json_queue, sql):
    assert query_code(json_queue, sql) == "SLU-00001"


def test_start_with_after_the_generator_is_refused(conn):
    assert query_code(conn, "SELECT LEVEL FROM DUAL CONNECT BY LEVEL <= 3 START WITH 1 = 1") == "SLU-00001"
