"""LISTAGG's analytic form, DISTINCT and ON OVERFLOW typed at a cursor answer as Oracle
answers them, on both stores (:mod:`sluice.store.listaggs`; the plain aggregate:
tests/test_rownum.py)."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import create_table, query_code, query_headed


@pytest.fixture
def emp(conn, dsn):
    create_table(dsn, "CREATE TABLE EMP (id INTEGER, dept VARCHAR(5), name VARCHAR(10), sal INTEGER)")
    conn.cursor().executemany("INSERT INTO EMP VALUES (:1, :2, :3, :4)", [
        (1, "x", "ann", 10), (2, "x", "bob", 20), (3, "x", "ann", 10), (4, "y", "cid", 5), (5, "y", None, 7)])
    conn.commit()
    return conn


@pytest.fixture
def long_names(conn, dsn):
    """Names that make a list of 4 003 characters: ten of 400 (joined by ',' 4 009)."""
    create_table(dsn, "CREATE TABLE LN (k INTEGER, s VARCHAR(500))")
    conn.cursor().executemany("INSERT INTO LN VALUES (:1, :2)", [(k, chr(ord("a") + k) * 400) for k in range(10)])
    conn.commit()
    return conn


@pytest.mark.parametrize("sql, rows", [
    # the analytic form: each row its partition's list, in the WITHIN GROUP order
    ("SELECT id, LISTAGG(name, ',') WITHIN GROUP (ORDER BY id DESC) OVER (PARTITION BY dept) FROM emp ORDER BY id",
     [(1, "ann,bob,ann"), (2, "ann,bob,ann"), (3, "ann,bob,ann"),
      (4, "cid"), (5, "cid")]),
    ("SELECT id, LISTAGG(sal, ';') WITHIN GROUP (ORDER BY sal) OVER () l FROM emp WHERE dept = 'y' ORDER BY id",
     [(4, "5;7"), (5, "5;7")]),
    # DISTINCT: each value once, where it first comes
    ("SELECT dept, LISTAGG(DISTINCT name, ',') WITHIN GROUP (ORDER BY name DESC) FROM emp GROUP BY dept "
     "ORDER BY dept", [("x", "bob,ann"), ("y", "cid")]),
    ("SELECT LISTAGG(DISTINCT sal, '+') WITHIN GROUP (ORDER BY sal) FROM emp", [("5+7+10+20",)]),
    ("SELECT LISTAGG(DISTINCT name, ',') WITHIN GROUP (ORDER BY id DESC) FROM emp", [("cid,ann,bob",)]),
    # ON OVERFLOW on a list that fits changes nothing
    ("SELECT LISTAGG(name, ',' ON OVERFLOW TRUNCATE) WITHIN GROUP (ORDER BY id) FROM emp", [("ann,bob,ann,cid",)]),
    ("SELECT LISTAGG(name, ',' ON OVERFLOW ERROR) WITHIN GROUP (ORDER BY id) FROM emp", [("ann,bob,ann,cid",)]),
])
def test_listagg_as_oracle(emp, sql, rows):
    assert query_headed(emp, sql)[1] == rows


@pytest.mark.parametrize("clause, end", [
    ("ON OVERFLOW TRUNCATE", ",...(1)"),
    ("ON OVERFLOW TRUNCATE '~' WITHOUT COUNT", ",~"),
    ("ON OVERFLOW TRUNCATE WITH COUNT", ",...(1)"),
])
def test_overflow_truncated(long_names, clause, end):
    value = query_headed(long_names, f"SELECT LISTAGG(s, ',' {clause}) WITHIN GROUP (ORDER BY k) FROM ln")[1][0][0]
    assert value == ",".join(chr(ord("a") + k) * 400 for k in range(9)) + end
    assert len(value) <= 4000


@pytest.mark.parametrize("sql", [
    "SELECT LISTAGG(s, ',') WITHIN GROUP (ORDER BY k) FROM ln",
    "SELECT LISTAGG(s, ',' ON OVERFLOW ERROR) WITHIN GROUP (ORDER BY k) FROM ln",
])
def test_overflow_error(long_names, sql):
    assert query_code(long_names, sql) == "ORA-01489"


def test_order_in_over_refused(emp):
    assert query_code(emp, "SELECT LISTAGG(name, ',') WITHIN GROUP (ORDER BY id) OVER (ORDER BY id) FROM emp") \
        == "ORA-30487"


def test_analytic_distinct(emp, dsn):
    """SQLite's window function answers it; PostgreSQL's window cannot be the outer query's
    aggregate its DISTINCT is written with (SLU-00001)."""
    sql = "SELECT id, LISTAGG(DISTINCT name, ',') WITHIN GROUP (ORDER BY name) OVER (PARTITION BY dept) FROM emp " \
          "WHERE dept = 'x' ORDER BY id"
    if dsn.startswith("sqlite"):
        assert query_headed(emp, sql)[1] == [(1, "ann,bob"), (2, "ann,bob"), (3, "ann,bob")]
    else:
        assert query_code(emp, sql) == "SLU-00001"
