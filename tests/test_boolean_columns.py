"""Oracle 23's SQL BOOLEAN in a table made at the cursor, on both stores: CREATE TABLE with
BOOLEAN (and its synonym BOOL), TRUE / FALSE literals and Python bools bound, read back
as True / False and described DB_TYPE_BOOLEAN (the version Sluice reports is 23), in WHERE
as a condition, NOT NULL kept.  SQLite keeps them as 1 / 0 and refuses anything else."""

from __future__ import annotations

import sluice
from tests.sqlhelpers import raised_code


def _table(conn):
    cur = conn.cursor()
    cur.execute("create table flags (id number primary key, active boolean, seen bool not null)")
    cur.execute("insert into flags values (1, true, false)")
    cur.executemany("insert into flags values (:1, :2, :3)", [(2, False, True), (3, None, True)])
    conn.commit()
    return cur


def test_booleans_come_back_as_python_bools(conn):
    cur = _table(conn)
    cur.execute("select id, active, seen from flags order by id")
    assert cur.fetchall() == [(1, True, False), (2, False, True), (3, None, True)]
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_NUMBER, sluice.DB_TYPE_BOOLEAN,
                                                sluice.DB_TYPE_BOOLEAN]


def test_a_query_without_rows_is_still_described_boolean(conn):
    cur = _table(conn)
    cur.execute("select active from flags where 1 = 0")
    assert cur.description[0][1] is sluice.DB_TYPE_BOOLEAN and cur.fetchall() == []


def test_a_boolean_column_is_a_condition(conn):
    cur = _table(conn)
    assert cur.execute("select id from flags where active").fetchall() == [(1,)]
    assert cur.execute("select id from flags where not active").fetchall() == [(2,)]
    assert cur.execute("select id from flags where seen = :1 order by id", [True]).fetchall() == [(2,), (3,)]


def test_not_null_is_kept(conn):
    cur = _table(conn)
    assert raised_code(cur.execute, "insert into flags (id, active) values (4, true)") == "ORA-01400"
    assert cur.execute("select count(*) from flags").fetchone() == (3,)


def test_a_number_is_refused_and_nothing_is_written(conn, dsn):
    """Oracle 23 reads a number as a boolean (0 FALSE, else TRUE); Sluice does not (a gap,
    docs/DESIGN-NOTES.md): the insert fails and changes nothing, on SQLite by the column's
    CHECK (ORA-02290), on PostgreSQL by its type check."""
    cur = _table(conn)
    code = raised_code(cur.execute, "insert into flags values (4, 2, true)")
    assert code == ("ORA-02290" if dsn.startswith("sqlite") else "ORA-00900")
    assert cur.execute("select count(*) from flags").fetchone() == (3,)
