"""``TABLE(sys.odcinumberlist(…))`` / ``TABLE(sys.odcivarchar2list(…))`` typed at a cursor:
the elements as rows of COLUMN_VALUE, on both stores (:mod:`sluice.store.odcilists`)."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import create_table, query_headed


@pytest.mark.parametrize("sql, binds, headings, rows", [
    ("SELECT * FROM TABLE(sys.odcinumberlist(3, 1, 2))", None, ["COLUMN_VALUE"], [(3,), (1,), (2,)]),
    ("SELECT column_value FROM TABLE(SYS.ODCIVARCHAR2LIST('b', 'a', NULL))", None, ["COLUMN_VALUE"],
     [("b",), ("a",), (None,)]),
    ("SELECT t.column_value * 2 AS d FROM TABLE(odcinumberlist(:1, :2)) t ORDER BY 1", [4, 1.5], ["D"],
     [(3,), (8,)]),
    ("SELECT COUNT(*) FROM TABLE(sys.odcinumberlist())", None, ["COUNT(*)"], [(0,)]),
])
def test_collection_rows(conn, sql, binds, headings, rows):
    assert query_headed(conn, sql, binds) == (headings, rows)


def test_ids_in_a_list(conn, dsn):
    create_table(dsn, "CREATE TABLE IDS (id INTEGER, name VARCHAR(5))")
    conn.cursor().executemany("INSERT INTO IDS VALUES (:1, :2)", [(1, "a"), (2, "b"), (3, "c")])
    conn.commit()
    assert query_headed(conn, "SELECT name FROM ids WHERE id IN (SELECT column_value FROM "
                              "TABLE(sys.odcinumberlist(1, 3))) ORDER BY name") == (["NAME"], [("a",), ("c",)])
    assert query_headed(conn, "SELECT i.id FROM ids i JOIN TABLE(sys.odcivarchar2list('b', 'c')) l "
                              "ON l.column_value = i.name ORDER BY 1") == (["ID"], [(2,), (3,)])
