"""``SELECT … FOR UPDATE [OF col] [NOWAIT | WAIT n | SKIP LOCKED]`` typed at a cursor, on both
stores, with what each promises (store/forupdate.py): the rows locked by the session until
its transaction ends — PostgreSQL's row locks; on SQLite the store's one writer lock —
ORA-00054 for NOWAIT, ORA-30006 when WAIT n runs out, SKIP LOCKED, readers never blocked."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import filled_table, query_code, query_rows


@pytest.fixture
def locker(conn, dsn):
    """``conn``, whose table T holds ann, bob and cy (ids 1 to 3)."""
    return filled_table(conn, dsn, "CREATE TABLE t (id INTEGER, name VARCHAR(20))",
                        "INSERT INTO t (id, name) VALUES (:1, :2)",
                        [(1, "ann"), (2, "bob"), (3, "cy")])


@pytest.fixture
def other(dsn):
    """A second session on the same store."""
    with sluice.connect(dsn) as c:
        yield c


def test_the_rows_stay_locked_until_the_transaction_ends(locker, other):
    assert query_rows(locker, "SELECT id, name FROM t WHERE id = 1 FOR UPDATE") == [(1, "ann")]
    assert locker.transaction_in_progress
    assert query_code(other, "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT") == "ORA-00054"
    assert query_rows(other, "SELECT name FROM t WHERE id = 1") == [("ann",)]    # readers go on
    locker.commit()
    assert not locker.transaction_in_progress
    assert query_rows(other, "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT") == [(1,)]
    other.rollback()
    assert query_rows(locker, "select id from t where id = 2 for update of t.name nowait") == [(2,)]
    locker.rollback()
    assert query_rows(other, "SELECT id FROM t ORDER BY id FOR UPDATE OF name NOWAIT") == [(1,), (2,), (3,)]


def test_wait_n_runs_out_with_ora_30006(locker, other):
    query_rows(locker, "SELECT id FROM t WHERE id = 2 FOR UPDATE")
    assert query_code(other, "SELECT id FROM t WHERE id = 2 FOR UPDATE WAIT 1") == "ORA-30006"
    assert query_code(other, "SELECT id FROM t t1 WHERE id = 2 FOR UPDATE OF t1.id WAIT 1") == "ORA-30006"
    other.rollback()
    locker.rollback()
    assert query_rows(other, "SELECT id FROM t WHERE id = 2 FOR UPDATE WAIT 1") == [(2,)]


def test_skip_locked_skips_the_rows_another_session_holds(locker, other, dsn):
    query_rows(locker, "SELECT id FROM t WHERE id = 1 FOR UPDATE")
    skipped = query_rows(other, "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED")
    # PostgreSQL locks the row; SQLite's lock is the whole store's: every row is locked
    assert skipped == ([] if dsn.startswith("sqlite") else [(2,), (3,)])
    locker.rollback()
    other.rollback()
    assert query_rows(other, "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED") == [(1,), (2,), (3,)]


def test_a_block_cursor_for_update_holds_the_rows_after_the_block(locker, other):
    cur = locker.cursor()
    cur.execute("""
        declare
          cursor c is select id from t where id = 3 for update;
          n integer;
        begin
          open c;
          fetch c into n;
          close c;
        end;""")
    assert query_code(other, "SELECT id FROM t WHERE id = 3 FOR UPDATE NOWAIT") == "ORA-00054"
    locker.commit()
    assert query_rows(other, "SELECT id FROM t WHERE id = 3 FOR UPDATE NOWAIT") == [(3,)]


@pytest.mark.parametrize("sql, code", [
    ("SELECT id FROM t FOR UPDATE WAIT", "ORA-30005"),
    ("SELECT id FROM t FOR UPDATE NOWAIT ORDER BY id", "ORA-00933"),
    ("SELECT id FROM t FOR UPDATE OF 3", "ORA-00904"),
])
def test_a_bad_clause_locks_nothing(locker, other, sql, code):
    assert query_code(locker, sql) == code
    assert not locker.transaction_in_progress
    assert query_rows(other, "SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT") == [(1,)]
