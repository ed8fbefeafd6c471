"""ROWNUM, FETCH FIRST / OFFSET, subqueries in FROM without an alias and LISTAGG typed at
a cursor answer as Oracle answers them, on both stores (:mod:`sluice.store.sqllimits`):
ROWNUM numbers the rows as they pass the WHERE clause, before ORDER BY and grouping, and
a condition no first row meets keeps none; what Sluice cannot answer so is SLU-00001."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue
from tests.sqlhelpers import create_table, filled_table, query_code, query_headed, query_rows

# the rows in the order they were inserted (the order both stores scan a fresh table in)
ROWS = [(3, "c", "y"), (1, "a", "y"), (5, None, "y"), (2, "b", "x"), (4, "d", "x")]


@pytest.fixture
def table(conn, dsn):
    return filled_table(conn, dsn, "CREATE TABLE T (n INTEGER, s TEXT, g TEXT)",
                        "INSERT INTO T (n, s, g) VALUES (:1, :2, :3)", ROWS)


@pytest.mark.parametrize("sql, binds, rows", [
    ("SELECT COUNT(*) FROM T WHERE ROWNUM <= 3", None, [(3,)]),
    ("SELECT COUNT(*), MAX(n) FROM T WHERE ROWNUM <= 3", None, [(3, 5)]),
    ("SELECT n FROM T WHERE ROWNUM <= 3", None, [(3,), (1,), (5,)]),
    ("SELECT n FROM T WHERE ROWNUM < 3", None, [(3,), (1,)]),
    ("SELECT n FROM T WHERE ROWNUM = 1", None, [(3,)]),
    ("SELECT n FROM T WHERE ROWNUM > 1", None, []),
    ("SELECT n FROM T WHERE ROWNUM = 2", None, []),
    ("SELECT n FROM T WHERE ROWNUM >= 1 AND ROWNUM > 0", None, [(3,), (1,), (5,), (2,), (4,)]),
    ("SELECT n FROM T WHERE 2 >= ROWNUM", None, [(3,), (1,)]),
    ("SELECT n FROM T WHERE ROWNUM <= 2.5", None, [(3,), (1,)]),
    ("SELECT n FROM T WHERE ROWNUM BETWEEN 1 AND 2", None, [(3,), (1,)]),
    ("SELECT n FROM T WHERE ROWNUM BETWEEN 2 AND 4", None, []),
    ("SELECT n FROM T WHERE ROWNUM <= 0", None, []),
    # the limit is taken before the ORDER BY: three arbitrary rows (the first scanned), sorted
    ("SELECT n FROM T WHERE ROWNUM <= 3 ORDER BY n", None, [(1,), (3,), (5,)]),
    ("SELECT t.n FROM T t WHERE t.n > 1 AND ROWNUM <= 2 ORDER BY t.n DESC", None, [(5,), (3,)]),
    ("SELECT g, COUNT(*) FROM T WHERE ROWNUM <= 3 GROUP BY g", None, [("y", 3)]),
    ("SELECT n FROM T WHERE n > 1 AND ROWNUM <= :n", {"n": 2}, [(3,), (5,)]),
    ("SELECT n FROM T WHERE ROWNUM <= :n", {"n": None}, []),
    # a bind by position taken out: the next placeholder takes the next value
    ("SELECT n FROM T WHERE ROWNUM <= :1 AND n > :2", [2, 1], [(3,), (5,)]),
    ("SELECT n FROM T WHERE n > :1 AND ROWNUM < :2", [1, 3], [(3,), (5,)]),
    ("SELECT n FROM T WHERE n IN (SELECT n FROM T WHERE ROWNUM <= 2) ORDER BY n", None, [(1,), (3,)]),
    # correlated subqueries keep seeing the outer row
    ("SELECT a.n FROM T a WHERE EXISTS (SELECT 1 FROM T b WHERE b.n = a.n + 1 AND ROWNUM = 1) ORDER BY a.n",
     None, [(1,), (2,), (3,), (4,)]),
    ("SELECT a.n, (SELECT b.s FROM T b WHERE b.n = a.n AND ROWNUM = 1) FROM T a WHERE ROWNUM <= 2", None,
     [(3, "c"), (1, "a")]),
    ("SELECT COUNT(*) OVER (), n FROM T WHERE ROWNUM <= 2", None, [(2, 3), (2, 1)]),
])
def test_rownum_in_where_keeps_the_rows_oracle_keeps(table, sql, binds, rows):
    assert query_headed(table, sql, binds)[1] == rows


@pytest.mark.parametrize("sql, headings, rows", [
    ("SELECT n, ROWNUM FROM T", ["N", "ROWNUM"], [(3, 1), (1, 2), (5, 3), (2, 4), (4, 5)]),
    ("SELECT n, ROWNUM rn FROM T WHERE n > 2", ["N", "RN"], [(3, 1), (5, 2), (4, 3)]),
    # numbered before the ORDER BY
    ("SELECT n, ROWNUM FROM T WHERE ROWNUM <= 3 ORDER BY n", ["N", "ROWNUM"], [(1, 2), (3, 1), (5, 3)]),
    ("SELECT * FROM (SELECT n, ROWNUM rn FROM T) WHERE rn = 2", ["N", "RN"], [(1, 2)]),
    ("SELECT * FROM (SELECT n, ROWNUM FROM T) WHERE ROWNUM <= 2", ["N", "ROWNUM"], [(3, 1), (1, 2)]),
    # top-N: the subquery sorts, the ROWNUM outside takes the first
    ("SELECT * FROM (SELECT n, s FROM T ORDER BY n DESC) WHERE ROWNUM <= 2", ["N", "S"], [(5, None), (4, "d")]),
    ("SELECT n FROM (SELECT n FROM T ORDER BY n DESC) WHERE ROWNUM <= 2 ORDER BY n", ["N"], [(4,), (5,)]),
    # the classic page: rows 3 and 4 in the order of n
    ("SELECT * FROM (SELECT a.*, ROWNUM rn FROM (SELECT n FROM T ORDER BY n) a WHERE ROWNUM <= 4) "
     "WHERE rn > 2", ["N", "RN"], [(3, 3), (4, 4)]),
])
def test_rownum_as_a_value(table, sql, headings, rows):
    assert query_headed(table, sql) == (headings, rows)


def test_rownum_on_a_queue_tables_view(conn):
    make_queue(conn, "Q", "QT")
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    assert query_headed(conn, "SELECT COUNT(*) FROM AQ$QT WHERE ROWNUM <= 5") == (["COUNT(*)"], [(1,)])
    headings, rows = query_headed(conn, "SELECT MSG_ID, ROWNUM rn FROM AQ$QT")
    assert headings == ["MSG_ID", "RN"] and [r[1] for r in rows] == [1]
    assert query_headed(conn, "SELECT COUNT(*) FROM (SELECT MSG_ID, ROWNUM rn FROM AQ$QT) WHERE rn = 1")[1] == [(1,)]
    assert query_rows(conn, "SELECT COUNT(*) FROM (SELECT * FROM AQ$QT ORDER BY ENQ_TIME) WHERE ROWNUM <= 10") == [(1,)]
    assert query_rows(conn, "SELECT COUNT(*) FROM AQ$QT q WHERE q.QUEUE = 'Q' AND ROWNUM <= :n", {"n": 1}) == [(1,)]


def test_rownum_on_a_join_without_order(table):
    rows = query_headed(table, "SELECT a.n, b.s FROM T a, T b WHERE a.n = b.n AND ROWNUM <= 2")[1]
    assert len(rows) == 2 and set(rows) <= {(n, s) for n, s, _ in ROWS}


@pytest.mark.parametrize("sql", [
    "SELECT n FROM T WHERE ROWNUM <= 2 OR n = 1",
    "SELECT n FROM T WHERE NOT ROWNUM > 2",
    "SELECT n FROM T WHERE ROWNUM + 1 <= 3",
    "SELECT n FROM T WHERE ROWNUM <= n",
    "SELECT n FROM T WHERE (ROWNUM <= 2)",
    "SELECT a.n FROM T a, T b WHERE a.n = b.n AND ROWNUM <= 2 ORDER BY a.n",
    "SELECT g, ROWNUM FROM T GROUP BY g",
    "SELECT a.n FROM T a, T b WHERE ROWNUM <= 1 UNION ALL SELECT n FROM T",
])
def test_rownum_sluice_cannot_answer_is_refused(table, sql):
    assert query_code(table, sql) == "SLU-00001"


@pytest.mark.parametrize("sql", [
    "UPDATE T SET n = ROWNUM",
    "DELETE FROM T WHERE ROWNUM <= 1 OR n = 2",
])
def test_rownum_in_dml_is_refused_and_changes_nothing(table, sql):
    """(ROWNUM ANDed in a DELETE's or UPDATE's WHERE: tests/test_sql_rowlimits.py.)"""
    cur = table.cursor()
    with pytest.raises(sluice.Error) as e:
        cur.execute(sql)
    assert e.value.full_code == "SLU-00001"
    assert query_headed(table, "SELECT COUNT(*) FROM T WHERE n IS NOT NULL")[1] == [(5,)]


@pytest.mark.parametrize("sql, binds, rows", [
    ("SELECT n FROM T ORDER BY n FETCH FIRST 2 ROWS ONLY", None, [(1,), (2,)]),
    ("SELECT n FROM T ORDER BY n FETCH FIRST ROW ONLY", None, [(1,)]),
    ("SELECT n FROM T ORDER BY n FETCH NEXT 1 ROW ONLY", None, [(1,)]),
    ("SELECT n FROM T ORDER BY n OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY", None, [(2,), (3,)]),
    ("SELECT n FROM T ORDER BY n OFFSET 3 ROWS", None, [(4,), (5,)]),
    ("SELECT n FROM T ORDER BY n OFFSET 9 ROWS FETCH NEXT 2 ROWS ONLY", None, []),
    ("SELECT n FROM T ORDER BY n OFFSET :o ROWS FETCH NEXT :c ROWS ONLY", [3, 1], [(4,)]),
    ("SELECT n FROM T WHERE n > :lo ORDER BY n FETCH FIRST :k ROWS ONLY", {"lo": 1, "k": 2}, [(2,), (3,)]),
    ("SELECT * FROM (SELECT n FROM T ORDER BY n DESC FETCH FIRST 2 ROWS ONLY) ORDER BY n", None, [(4,), (5,)]),
    ("SELECT n FROM T WHERE n < 3 UNION ALL SELECT n FROM T WHERE n > 3 ORDER BY 1 FETCH FIRST 3 ROWS ONLY",
     None, [(1,), (2,), (4,)]),
    # Oracle's reading of the numbers: a fraction truncated, a negative 0, a NULL no rows
    ("SELECT n FROM T ORDER BY n OFFSET 1.9 ROWS FETCH FIRST 1.9 ROWS ONLY", None, [(2,)]),
    ("SELECT n FROM T ORDER BY n OFFSET -1 ROWS FETCH FIRST 2 ROWS ONLY", None, [(1,), (2,)]),
    ("SELECT n FROM T ORDER BY n FETCH FIRST -2 ROWS ONLY", None, []),
    ("SELECT n FROM T ORDER BY n FETCH FIRST :k ROWS ONLY", {"k": None}, []),
    ("SELECT n FROM T ORDER BY n OFFSET :o ROWS", {"o": None}, []),
])
def test_fetch_first_and_offset(table, sql, binds, rows):
    assert query_headed(table, sql, binds)[1] == rows


@pytest.mark.parametrize("sql, rows", [
    ("SELECT x FROM (SELECT n AS x FROM T WHERE n < 3) ORDER BY x", [(1,), (2,)]),
    ("SELECT COUNT(*) FROM (SELECT n FROM T), (SELECT s FROM T)", [(25,)]),
    ("SELECT COUNT(*) FROM (SELECT n FROM T) JOIN (SELECT n AS m FROM T) ON n = m", [(5,)]),
    ("SELECT COUNT(*) FROM (SELECT n FROM T) WHERE n IN (SELECT n FROM (SELECT n FROM T WHERE n > 3))", [(2,)]),
])
def test_subqueries_in_from_need_no_alias(table, sql, rows):
    assert query_headed(table, sql)[1] == rows


def test_a_views_subquery_needs_no_alias(conn):
    make_queue(conn, "Q", "QT")
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    headings, rows = query_headed(conn, "SELECT x FROM (SELECT ENQ_TIME AS x FROM AQ$QT)")
    assert headings == ["X"] and len(rows) == 1 and isinstance(rows[0][0], dt.datetime)


@pytest.mark.parametrize("sql, rows", [
    ("SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY n) FROM T", [("1,2,3,4,5",)]),
    ("SELECT LISTAGG(s, '-') WITHIN GROUP (ORDER BY n DESC) FROM T", [("d-c-b-a",)]),
    ("SELECT LISTAGG(s) WITHIN GROUP (ORDER BY s) FROM T", [("abcd",)]),
    ("SELECT LISTAGG(s, NULL) WITHIN GROUP (ORDER BY s DESC) FROM T", [("dcba",)]),
    # NULL keys: last ascending, first descending, as asked otherwise
    ("SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY s) FROM T", [("1,2,3,4,5",)]),
    ("SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY s DESC) FROM T", [("5,4,3,2,1",)]),
    ("SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY s NULLS FIRST) FROM T", [("5,1,2,3,4",)]),
    ("SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY g DESC, n) FROM T", [("1,3,5,2,4",)]),
    ("SELECT g, LISTAGG(n, ';') WITHIN GROUP (ORDER BY n DESC) AS ns FROM T GROUP BY g ORDER BY g",
     [("x", "4;2"), ("y", "5;3;1")]),
    ("SELECT LISTAGG(n, ', ') FROM T WHERE n < 2", [("1",)]),
    # WITHIN GROUP is no GROUP BY: the three rows ROWNUM keeps, grouped
    ("SELECT g, LISTAGG(n, ',') WITHIN GROUP (ORDER BY n) FROM T WHERE ROWNUM <= 3 GROUP BY g", [("y", "1,3,5")]),
    # numbers as Oracle writes them
    ("SELECT LISTAGG(n / 2, ';') WITHIN GROUP (ORDER BY n) FROM T WHERE n <= 3", [(".5;1;1.5",)]),
    ("SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY n) FROM T WHERE n > 9", [(None,)]),
])
def test_listagg(table, sql, rows):
    assert query_headed(table, sql)[1] == rows


def test_listagg_of_a_decimal_column(conn, dsn):
    create_table(dsn, "CREATE TABLE P (p NUMERIC(10, 2))")
    cur = conn.cursor()
    cur.executemany("INSERT INTO P (p) VALUES (:1)", [[2], [1.5], [-0.25]])
    conn.commit()
    assert query_headed(conn, "SELECT LISTAGG(p, ',') WITHIN GROUP (ORDER BY p) FROM P")[1] == [("-.25,1.5,2",)]


def test_listagg_headings(table):
    assert query_headed(table, "SELECT LISTAGG(n, ',') WITHIN GROUP (ORDER BY n) FROM T")[0] == [
        "LISTAGG(N,',')WITHINGROUP(ORDERBYN)"]
