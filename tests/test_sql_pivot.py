"""PIVOT and UNPIVOT typed at a cursor answer as Oracle answers them, on both stores
(:mod:`sluice.store.sqlpivot`): the implicit GROUP BY of the other columns, the columns'
names and order, INCLUDE / EXCLUDE NULLS."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import create_table, query_code, query_headed


@pytest.fixture
def sales(conn, dsn):
    create_table(dsn, "CREATE TABLE SALES (id INTEGER, region VARCHAR(10), prod VARCHAR(10), qty INTEGER)")
    conn.cursor().executemany("INSERT INTO SALES VALUES (:1, :2, :3, :4)", [
        (1, "N", "A", 10), (2, "N", "B", 5), (3, "S", "A", 7), (4, "N", "A", 1), (5, "S", "C", None)])
    conn.commit()
    return conn


@pytest.fixture
def wide(conn, dsn):
    create_table(dsn, "CREATE TABLE Q (id INTEGER, q1 INTEGER, q2 INTEGER, q3 INTEGER)")
    conn.cursor().executemany("INSERT INTO Q VALUES (:1, :2, :3, :4)", [(1, 10, None, 30), (2, None, None, None)])
    conn.commit()
    return conn


@pytest.mark.parametrize("sql, headings, rows", [
    # the probe: a subquery's other column is the group
    ("select * from (select id, prod v from sales) pivot (count(*) for v in ('Z' as z)) order by id",
     ["ID", "Z"], [(1, 0), (2, 0), (3, 0), (4, 0), (5, 0)]),
    # the table's columns neither aggregated nor pivoted (REGION) are the implicit GROUP BY
    ("SELECT * FROM (SELECT region, prod, qty FROM sales) PIVOT (SUM(qty) FOR prod IN ('A' AS a, 'B' AS b)) "
     "ORDER BY region", ["REGION", "A", "B"], [("N", 11, 5), ("S", 7, None)]),
    # several aggregates: each value's columns, the aggregate's alias appended
    ("SELECT * FROM (SELECT region, prod, qty FROM sales) PIVOT (SUM(qty) AS s, COUNT(*) cnt "
     "FOR prod IN ('A' AS a, 'C' c)) ORDER BY region",
     ["REGION", "A_S", "A_CNT", "C_S", "C_CNT"], [("N", 11, 2, None, 0), ("S", 7, 1, None, 1)]),
    # no alias: the value's text
    ("SELECT * FROM (SELECT region, prod FROM sales) PIVOT (COUNT(*) FOR prod IN ('A', 'B')) ORDER BY 1",
     ["REGION", "'A'", "'B'"], [("N", 2, 1), ("S", 1, 0)]),
    ("SELECT * FROM (SELECT region, qty FROM sales) PIVOT (COUNT(*) FOR qty IN (10, 7)) ORDER BY 1",
     ["REGION", "10", "7"], [("N", 1, 0), ("S", 0, 1)]),
    # a table as the source: every other column groups (ID here: one row each)
    ("SELECT id, a_q FROM sales PIVOT (MAX(qty) AS q FOR prod IN ('A' AS a)) WHERE region = 'N' ORDER BY id",
     ["ID", "A_Q"], [(1, 10), (2, None), (4, 1)]),
    # nothing left to group by: one row; an alias of the pivoted table
    ("SELECT p.n, p.s FROM (SELECT region, qty FROM sales) PIVOT (SUM(qty) FOR region IN ('N' n, 'S' s)) p",
     ["N", "S"], [(16, 7)]),
    # several FOR columns
    ("SELECT * FROM (SELECT region, prod, qty FROM sales) "
     "PIVOT (SUM(qty) FOR (region, prod) IN (('N', 'A') AS na, ('S', 'A') AS sa))",
     ["NA", "SA"], [(11, 7)]),
    # a WITH clause's query as the source
    ("WITH s AS (SELECT region, prod FROM sales WHERE qty > 1) "
     "SELECT * FROM s PIVOT (COUNT(*) FOR prod IN ('A' AS a, 'B' AS b)) ORDER BY region",
     ["REGION", "A", "B"], [("N", 1, 1), ("S", 1, 0)]),
    # DISTINCT in the aggregate
    ("SELECT * FROM (SELECT prod, region FROM sales) PIVOT (COUNT(DISTINCT region) FOR prod IN ('A' AS a))",
     ["A"], [(2,)]),
])
def test_pivot_as_oracle(sales, sql, headings, rows):
    assert query_headed(sales, sql) == (headings, rows)


@pytest.mark.parametrize("sql, headings, rows", [
    # EXCLUDE NULLS by default: a source row's entries together, in the IN list's order
    ("SELECT * FROM q UNPIVOT (val FOR quarter IN (q1 AS 'Q1', q2 AS 'Q2', q3 AS 'Q3'))",
     ["ID", "QUARTER", "VAL"], [(1, "Q1", 10), (1, "Q3", 30)]),
    ("SELECT * FROM q UNPIVOT INCLUDE NULLS (val FOR quarter IN (q1 AS 'Q1', q2 AS 'Q2')) ORDER BY id, quarter",
     # (Q3, in no entry, is one of the other columns)
     ["ID", "Q3", "QUARTER", "VAL"], [(1, 30, "Q1", 10), (1, 30, "Q2", None), (2, None, "Q1", None),
                                      (2, None, "Q2", None)]),
    # no AS: the column's name
    ("SELECT id, c, v FROM q UNPIVOT EXCLUDE NULLS (v FOR c IN (q1, q3)) WHERE v > 15",
     ["ID", "C", "V"], [(1, "Q3", 30)]),
    # several value columns: a row left out only when all are NULL
    ("SELECT * FROM q UNPIVOT ((a, b) FOR half IN ((q1, q2) AS 'H1', (q3, q2) AS 'H2')) ORDER BY half",
     ["ID", "HALF", "A", "B"], [(1, "H1", 10, None), (1, "H2", 30, None)]),
    # a subquery source with an alias
    ("SELECT u.id, u.v FROM (SELECT id, q1 x, q3 y FROM q) UNPIVOT (v FOR k IN (x, y)) u ORDER BY u.v DESC",
     ["ID", "V"], [(1, 30), (1, 10)]),
])
def test_unpivot_as_oracle(wide, sql, headings, rows):
    assert query_headed(wide, sql) == (headings, rows)


@pytest.mark.parametrize("sql, code", [
    # two columns of one name
    ("SELECT * FROM sales PIVOT (SUM(qty), COUNT(*) FOR prod IN ('A'))", "ORA-00918"),
    ("SELECT * FROM sales PIVOT (qty FOR prod IN ('A'))", "ORA-56902"),
    ("SELECT * FROM sales PIVOT (SUM(qty) prod IN ('A'))", "ORA-00905"),
    ("SELECT * FROM sales PIVOT (SUM(qty) FOR prod IN (('A', 'B')))", "ORA-00913"),
    ("SELECT * FROM nosuch PIVOT (SUM(qty) FOR prod IN ('A'))", "ORA-00942"),
    ("SELECT * FROM sales PIVOT XML (SUM(qty) FOR prod IN (ANY))", "SLU-00001"),
    ("SELECT * FROM (SELECT qty + 1, prod FROM sales) PIVOT (COUNT(*) FOR prod IN ('A'))", "SLU-00001"),
])
def test_pivot_refused(sales, sql, code):
    assert query_code(sales, sql) == code


def test_words_not_clauses(conn, dsn):
    """A column named PIVOT and the word in a literal are no clause."""
    create_table(dsn, "CREATE TABLE W (pivot INTEGER, unpivot INTEGER)")
    conn.cursor().execute("INSERT INTO W VALUES (1, 2)")
    assert query_headed(conn, "SELECT pivot, unpivot, 'PIVOT (' x FROM w") == (
        ["PIVOT", "UNPIVOT", "X"], [(1, 2, "PIVOT (")])
