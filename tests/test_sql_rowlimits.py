"""``FETCH FIRST n PERCENT ROWS`` and ``FETCH … WITH TIES`` typed at a cursor take the rows
Oracle takes, on both stores (:mod:`sluice.store.fetchrows`; the other row limits:
tests/test_rownum.py)."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import create_table, query_code, query_headed


@pytest.fixture
def scores(conn, dsn):
    create_table(dsn, "CREATE TABLE SCORES (id INTEGER, grp VARCHAR(5), pts INTEGER)")
    conn.cursor().executemany("INSERT INTO SCORES VALUES (:1, :2, :3)", [
        (1, "a", 90), (2, "a", 80), (3, "b", 80), (4, "b", 70), (5, "c", 60), (6, "c", 60), (7, "c", 50)])
    conn.commit()
    return conn


@pytest.mark.parametrize("sql, binds, rows", [
    # CEIL(percent × rows): 7 × 30 % = 2.1 → 3
    ("SELECT id FROM scores ORDER BY id FETCH FIRST 30 PERCENT ROWS ONLY", None, [(1,), (2,), (3,)]),
    ("SELECT id FROM scores ORDER BY id FETCH NEXT 14.2 PERCENT ROW ONLY", None, [(1,)]),
    ("SELECT id FROM scores ORDER BY id FETCH FIRST 100 PERCENT ROWS ONLY", None, [(k,) for k in range(1, 8)]),
    ("SELECT id FROM scores ORDER BY id FETCH FIRST 0 PERCENT ROWS ONLY", None, []),
    ("SELECT id FROM scores ORDER BY id FETCH FIRST :p PERCENT ROWS ONLY", {"p": 50}, [(1,), (2,), (3,), (4,)]),
    # the percent of all the rows, taken after the offset
    ("SELECT id FROM scores ORDER BY id OFFSET 5 ROWS FETCH FIRST 30 PERCENT ROWS ONLY", None, [(6,), (7,)]),
    # of the rows the block selects: after WHERE and GROUP BY
    ("SELECT id FROM scores WHERE pts < 85 ORDER BY id FETCH FIRST 50 PERCENT ROWS ONLY", None,
     [(2,), (3,), (4,)]),
    ("SELECT grp, COUNT(*) FROM scores GROUP BY grp ORDER BY grp FETCH FIRST 34 PERCENT ROWS ONLY", None,
     [("a", 2), ("b", 2)]),
    # WITH TIES: the rows tied with the last one too
    ("SELECT id, pts FROM scores ORDER BY pts DESC FETCH FIRST 2 ROWS WITH TIES", None,
     [(1, 90), (2, 80), (3, 80)]),
    ("SELECT id FROM scores ORDER BY pts DESC, id FETCH FIRST 2 ROWS WITH TIES", None, [(1,), (2,)]),
    ("SELECT pts FROM scores ORDER BY pts OFFSET 1 ROWS FETCH NEXT 1 ROW WITH TIES", None, [(60,), (60,)]),
    ("SELECT pts FROM scores ORDER BY pts FETCH FIRST :n ROWS WITH TIES", [2], [(50,), (60,), (60,)]),
    ("SELECT grp, MAX(pts) m FROM scores GROUP BY grp ORDER BY MAX(pts) FETCH FIRST 1 ROW WITH TIES", None,
     [("c", 60)]),
    ("SELECT id FROM scores ORDER BY pts FETCH FIRST 20 PERCENT ROWS WITH TIES", None, [(7,), (5,), (6,)]),
])
def test_fetch_as_oracle(scores, sql, binds, rows):
    got = query_headed(scores, sql, binds)[1]
    if "WITH TIES" in sql and "id, pts" not in sql and "pts DESC, id" not in sql:
        got, rows = sorted(got, key=repr), sorted(rows, key=repr)     # (ties in any order, as Oracle's)
    assert got == rows


def test_ties_by_alias_refused_on_sqlite(scores, dsn):
    """SQLite's count ranks the block's rows by the ORDER BY keys, which cannot name a select
    item's alias; PostgreSQL's WITH TIES is its own."""
    sql = "SELECT id, pts p FROM scores ORDER BY p FETCH FIRST 1 ROW WITH TIES"
    if dsn.startswith("sqlite"):
        assert query_code(scores, sql) == "SLU-00001"
    else:
        assert query_headed(scores, sql)[1] == [(7, 50)]


def test_percent_of_a_compound_refused(scores):
    assert query_code(scores, "SELECT id FROM scores UNION SELECT 9 FROM dual ORDER BY 1 "
                              "FETCH FIRST 10 PERCENT ROWS ONLY") == "SLU-00001"


@pytest.mark.parametrize("sql, rows", [
    # each member of a compound numbers its own rows
    ("SELECT id FROM scores WHERE ROWNUM <= 2 UNION ALL SELECT id FROM scores WHERE pts = 50 AND ROWNUM = 1",
     [(1,), (2,), (7,)]),
    ("SELECT grp FROM scores WHERE ROWNUM <= 3 UNION SELECT grp FROM scores WHERE ROWNUM < 2 ORDER BY 1",
     [("a",), ("b",)]),
    ("SELECT id FROM scores MINUS SELECT id FROM scores WHERE ROWNUM <= 5 ORDER BY id", [(6,), (7,)]),
])
def test_rownum_in_compound_members(scores, sql, rows):
    assert query_headed(scores, sql)[1] == rows


@pytest.mark.parametrize("sql, binds, left", [
    # the first rows meeting the other conditions change (a batch purge)
    ("DELETE FROM scores WHERE ROWNUM <= 2", None, [3, 4, 5, 6, 7]),
    ("DELETE FROM scores WHERE pts < 85 AND ROWNUM <= :n", {"n": 3}, [1, 5, 6, 7]),
    ("DELETE FROM scores WHERE grp = 'c' AND ROWNUM = 1", None, [1, 2, 3, 4, 6, 7]),
    ("DELETE FROM scores WHERE ROWNUM > 1", None, [1, 2, 3, 4, 5, 6, 7]),
    ("DELETE FROM scores WHERE ROWNUM >= 1 AND grp = 'a'", None, [3, 4, 5, 6, 7]),
])
def test_rownum_in_delete(scores, sql, binds, left):
    cur = scores.cursor()
    cur.execute(sql, binds) if binds else cur.execute(sql)
    assert cur.rowcount == 7 - len(left)
    assert [r[0] for r in query_headed(scores, "SELECT id FROM scores ORDER BY id")[1]] == left


def test_rownum_in_update(scores):
    cur = scores.cursor()
    cur.execute("UPDATE scores SET pts = 0 WHERE grp <> 'a' AND ROWNUM < 3")
    assert cur.rowcount == 2
    assert query_headed(scores, "SELECT id FROM scores WHERE pts = 0 ORDER BY id")[1] == [(3,), (4,)]
