"""Oracle's sequences at a cursor, on both stores (store/sequences.py): CREATE / ALTER / DROP
SEQUENCE, ``seq.NEXTVAL`` / ``seq.CURRVAL`` in queries, INSERT VALUES (executemany: a value per
row), UPDATE SET and PL/SQL, with Oracle's rules — no value given back by a rollback, one
increment per row however often the row names it, ORA-08002 / 08004 / 02289 / 00955 and the
parameter errors — and USER_SEQUENCES / ALL_SEQUENCES."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid

import pytest

import sluice
from tests import conftest
from tests.sqlhelpers import create_table, query_code, query_headed, query_rows, raised_code


def run(conn, sql, binds=None):
    cur = conn.cursor()
    cur.execute(sql, binds) if binds is not None else cur.execute(sql)
    return cur


def nextval(conn, name="s"):
    return query_rows(conn, f"SELECT {name}.NEXTVAL FROM DUAL")[0][0]


# -- CREATE SEQUENCE and NEXTVAL ----------------------------------------------------------

def test_a_new_sequence_counts_from_one(conn):
    run(conn, "CREATE SEQUENCE s")
    assert query_headed(conn, "SELECT s.NEXTVAL FROM DUAL") == (["NEXTVAL"], [(1,)])
    assert [nextval(conn) for _ in range(3)] == [2, 3, 4]
    assert query_headed(conn, "select s.currval from dual") == (["CURRVAL"], [(4,)])
    assert query_headed(conn, "SELECT s.nextval AS id FROM dual") == (["ID"], [(5,)])


def test_start_with_increment_by_and_descending(conn):
    run(conn, "CREATE SEQUENCE up START WITH 100 INCREMENT BY 10 NOCACHE")
    run(conn, "create sequence down increment by -2")
    assert [nextval(conn, "up") for _ in range(3)] == [100, 110, 120]
    assert [nextval(conn, "down") for _ in range(3)] == [-1, -3, -5]


def test_schema_qualified_sequence(conn):
    run(conn, "CREATE SEQUENCE sluice.q START WITH 7")
    assert query_rows(conn, "SELECT sluice.q.NEXTVAL, q.CURRVAL FROM DUAL") == [(7, 7)]


def test_create_sequence_of_a_name_used_is_ora_00955(conn):
    run(conn, "CREATE SEQUENCE s")
    assert raised_code(run, conn, "CREATE SEQUENCE s START WITH 5") == "ORA-00955"
    assert nextval(conn) == 1           # the first one unchanged


def test_an_unknown_sequence_is_ora_02289(conn):
    assert query_code(conn, "SELECT nope.NEXTVAL FROM DUAL") == "ORA-02289"
    assert query_code(conn, "SELECT nope.CURRVAL FROM DUAL") == "ORA-02289"
    assert raised_code(run, conn, "DROP SEQUENCE nope") == "ORA-02289"
    assert raised_code(run, conn, "ALTER SEQUENCE nope INCREMENT BY 2") == "ORA-02289"


def test_drop_sequence(conn):
    run(conn, "CREATE SEQUENCE s")
    assert nextval(conn) == 1
    run(conn, "DROP SEQUENCE s")
    assert query_code(conn, "SELECT s.NEXTVAL FROM DUAL") == "ORA-02289"
    run(conn, "CREATE SEQUENCE s START WITH 50")       # the name is free again, a new counter
    assert nextval(conn) == 50


# -- CURRVAL -------------------------------------------------------------------------------

def test_currval_before_the_sessions_first_nextval_is_ora_08002(conn, conn2):
    run(conn, "CREATE SEQUENCE s")
    assert query_code(conn, "SELECT s.CURRVAL FROM DUAL") == "ORA-08002"
    assert nextval(conn) == 1
    assert query_rows(conn, "SELECT s.CURRVAL FROM DUAL") == [(1,)]
    assert query_code(conn2, "SELECT s.CURRVAL FROM DUAL") == "ORA-08002"    # the session's own
    assert nextval(conn2) == 2          # (one instance's cache: handed out in order)
    assert query_rows(conn, "SELECT s.CURRVAL FROM DUAL") == [(1,)]


# -- not transactional, once per row --------------------------------------------------------

def test_a_rollback_gives_no_value_back(conn, dsn):
    create_table(dsn, "CREATE TABLE t (id INTEGER, v VARCHAR(20))")
    run(conn, "CREATE SEQUENCE s")
    run(conn, "INSERT INTO t VALUES (s.NEXTVAL, 'a')")
    conn.rollback()
    run(conn, "INSERT INTO t VALUES (s.NEXTVAL, 'b')")
    conn.commit()
    assert query_rows(conn, "SELECT id, v FROM t") == [(2, "b")]


def test_nextval_named_twice_in_a_row_is_one_value(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER, b INTEGER, c INTEGER)")
    run(conn, "CREATE SEQUENCE s")
    assert query_rows(conn, "SELECT s.NEXTVAL, s.NEXTVAL, s.CURRVAL FROM DUAL") == [(1, 1, 1)]
    run(conn, "INSERT INTO t VALUES (s.CURRVAL, s.NEXTVAL, s.NEXTVAL + 100)")
    assert query_rows(conn, "SELECT a, b, c FROM t") == [(2, 2, 102)]
    run(conn, "INSERT INTO t SELECT s.NEXTVAL, s.NEXTVAL, 0 FROM t")
    run(conn, "INSERT INTO t SELECT s.NEXTVAL, s.CURRVAL, 0 FROM t")
    assert sorted(query_rows(conn, "SELECT a, b FROM t")) == [(2, 2), (3, 3), (4, 4), (5, 5)]


def test_update_set_nextval_one_value_per_row(conn, dsn):
    create_table(dsn, "CREATE TABLE t (k INTEGER, a INTEGER, b INTEGER)")
    conn.cursor().executemany("INSERT INTO t (k) VALUES (:1)", [(1,), (2,), (3,)])
    run(conn, "CREATE SEQUENCE s START WITH 10")
    assert run(conn, "UPDATE t SET a = s.NEXTVAL, b = s.NEXTVAL").rowcount == 3
    rows = query_rows(conn, "SELECT a, b FROM t ORDER BY a")
    assert rows == [(10, 10), (11, 11), (12, 12)]


def test_executemany_insert_takes_a_value_per_row(conn, dsn):
    """A python-oracledb script: create the sequence, insert with it, read back, CURRVAL, drop."""
    create_table(dsn, "CREATE TABLE orders (id INTEGER, item VARCHAR(20))")
    cur = conn.cursor()
    cur.execute("create sequence order_seq start with 1000 increment by 1 nocache")
    cur.executemany("insert into orders (id, item) values (order_seq.nextval, :1)",
                    [("apple",), ("pear",), ("plum",)])
    assert cur.rowcount == 3
    conn.commit()
    cur.execute("select id, item from orders order by id")
    assert cur.fetchall() == [(1000, "apple"), (1001, "pear"), (1002, "plum")]
    cur.execute("select order_seq.currval from dual")
    assert cur.fetchone() == (1002,)
    cur.execute("drop sequence order_seq")
    assert query_code(conn, "select order_seq.nextval from dual") == "ORA-02289"


# -- bounds and cycles ---------------------------------------------------------------------

def test_past_maxvalue_nocycle_is_ora_08004(conn):
    run(conn, "CREATE SEQUENCE s MAXVALUE 3 NOCACHE")
    assert [nextval(conn) for _ in range(3)] == [1, 2, 3]
    assert query_code(conn, "SELECT s.NEXTVAL FROM DUAL") == "ORA-08004"
    run(conn, "CREATE SEQUENCE d INCREMENT BY -1 MINVALUE -3 NOCACHE")
    assert [nextval(conn, "d") for _ in range(3)] == [-1, -2, -3]
    assert query_code(conn, "SELECT d.NEXTVAL FROM DUAL") == "ORA-08004"


def test_cycle_wraps_to_minvalue(conn):
    run(conn, "CREATE SEQUENCE s START WITH 2 MINVALUE 1 MAXVALUE 3 CYCLE NOCACHE")
    assert [nextval(conn) for _ in range(5)] == [2, 3, 1, 2, 3]


def test_a_block_of_cache_values_stops_at_maxvalue(conn):
    run(conn, "CREATE SEQUENCE s MAXVALUE 30 CACHE 20")
    assert [nextval(conn) for _ in range(30)] == list(range(1, 31))
    assert query_code(conn, "SELECT s.NEXTVAL FROM DUAL") == "ORA-08004"


@pytest.mark.parametrize("ddl, code", [
    ("CREATE SEQUENCE s START WITH 0", "ORA-04006"),
    ("CREATE SEQUENCE s MAXVALUE 10 START WITH 11 NOCACHE", "ORA-04008"),
    ("CREATE SEQUENCE s INCREMENT BY 0", "ORA-04002"),
    ("CREATE SEQUENCE s MINVALUE 5 MAXVALUE 5", "ORA-04004"),
    ("CREATE SEQUENCE s MINVALUE 1 MAXVALUE 5 INCREMENT BY 10 NOCACHE", "ORA-04005"),
    ("CREATE SEQUENCE s CACHE 1", "ORA-04010"),
    ("CREATE SEQUENCE s MAXVALUE 10", "ORA-04013"),
    ("CREATE SEQUENCE s CYCLE", "ORA-04015"),
    ("CREATE SEQUENCE s INCREMENT BY -1 CYCLE", "ORA-04014"),
    ("CREATE SEQUENCE s INCREMENT BY 1.5", "ORA-04001"),
    ("CREATE SEQUENCE s MAXVALUE 99999999999999999999999999999", "ORA-04003"),
    ("CREATE SEQUENCE s FASTER", "ORA-00922"),
    ("CREATE SEQUENCE s CACHE 5 NOCACHE", "ORA-00922"),
])
def test_bad_parameters_are_oracles_errors_and_create_nothing(conn, ddl, code):
    assert raised_code(run, conn, ddl) == code
    assert query_code(conn, "SELECT s.NEXTVAL FROM DUAL") == "ORA-02289"


# -- ALTER SEQUENCE ------------------------------------------------------------------------

def test_alter_sequence_increment_maxvalue_cycle_restart(conn):
    run(conn, "CREATE SEQUENCE s NOCACHE")
    assert [nextval(conn) for _ in range(3)] == [1, 2, 3]
    run(conn, "ALTER SEQUENCE s INCREMENT BY 10")
    assert nextval(conn) == 13
    assert raised_code(run, conn, "ALTER SEQUENCE s MAXVALUE 12") == "ORA-04009"
    assert raised_code(run, conn, "ALTER SEQUENCE s MINVALUE 20") == "ORA-04007"
    assert raised_code(run, conn, "ALTER SEQUENCE s START WITH 5") == "ORA-02283"
    assert raised_code(run, conn, "ALTER SEQUENCE s") == "ORA-02286"
    run(conn, "ALTER SEQUENCE s MAXVALUE 33 CYCLE")
    assert [nextval(conn) for _ in range(3)] == [23, 33, 1]
    run(conn, "ALTER SEQUENCE s RESTART START WITH 5")
    assert nextval(conn) == 5
    run(conn, "ALTER SEQUENCE s RESTART")
    assert nextval(conn) == 1


def test_sequence_ddl_commits_the_open_transaction(conn, dsn):
    create_table(dsn, "CREATE TABLE t (id INTEGER)")
    run(conn, "INSERT INTO t VALUES (9)")
    assert raised_code(run, conn, "CREATE SEQUENCE s INCREMENT BY 0") == "ORA-04002"   # read first: no commit
    assert raised_code(run, conn, "ALTER SEQUENCE s") == "ORA-02286"
    conn.rollback()
    assert query_rows(conn, "SELECT id FROM t") == []
    run(conn, "INSERT INTO t VALUES (1)")
    run(conn, "CREATE SEQUENCE s")
    conn.rollback()
    assert query_rows(conn, "SELECT id FROM t") == [(1,)]
    run(conn, "INSERT INTO t VALUES (0)")
    assert raised_code(run, conn, "CREATE SEQUENCE s") == "ORA-00955"       # (as Oracle: after the commit)
    conn.rollback()
    assert query_rows(conn, "SELECT id FROM t ORDER BY id") == [(0,), (1,)]
    run(conn, "DELETE FROM t WHERE id = 0")
    conn.commit()
    run(conn, "INSERT INTO t VALUES (2)")
    run(conn, "DROP SEQUENCE s")
    conn.rollback()
    assert query_rows(conn, "SELECT id FROM t ORDER BY id") == [(1,), (2,)]


# -- across sessions and processes ---------------------------------------------------------

def test_sessions_never_get_the_same_value(conn, conn2):
    run(conn, "CREATE SEQUENCE s")
    got = [nextval(c) for _ in range(30) for c in (conn, conn2)]
    assert len(set(got)) == 60


def test_values_survive_the_store_being_closed(dsn):
    with sluice.connect(dsn) as c:
        run(c, "CREATE SEQUENCE s CACHE 5")
        first = [nextval(c) for _ in range(3)]
    with sluice.connect(dsn) as c:
        later = nextval(c)
    assert first == [1, 2, 3] and later > 3


def test_another_process_draws_other_values(conn, dsn):
    run(conn, "CREATE SEQUENCE s")
    script = textwrap.dedent(f"""
        import sluice
        with sluice.connect({dsn!r}) as c:
            cur = c.cursor()
            print(" ".join(str(cur.execute("SELECT s.NEXTVAL FROM DUAL").fetchone()[0]) for _ in range(25)))
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    mine = [nextval(conn) for _ in range(25)]
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0
    theirs = [int(v) for v in out.split()]
    assert len(set(mine + theirs)) == 50


# -- PL/SQL and the views ------------------------------------------------------------------

def test_nextval_in_a_plsql_block(conn):
    run(conn, "CREATE SEQUENCE s START WITH 3")
    cur = conn.cursor()
    v, w = cur.var(int), cur.var(int)
    cur.execute("DECLARE x NUMBER; BEGIN x := s.NEXTVAL; :v := x; :w := sluice.s.CURRVAL + 1; END;", v=v, w=w)
    assert (v.getvalue(), w.getvalue()) == (3, 4)


def test_select_nextval_into_in_a_plsql_block(conn):
    """SELECT s.NEXTVAL INTO v FROM dual (the pre-11g idiom) through the block's static SQL."""
    run(conn, "CREATE SEQUENCE s START WITH 10")
    cur = conn.cursor()
    v, w = cur.var(int), cur.var(int)
    cur.execute("DECLARE x NUMBER; BEGIN SELECT s.NEXTVAL INTO x FROM dual; :v := x; "
                "SELECT s.CURRVAL INTO :w FROM dual; END;", v=v, w=w)
    assert (v.getvalue(), w.getvalue()) == (10, 10)


def test_user_sequences_and_all_sequences(conn, dsn):
    run(conn, "CREATE SEQUENCE s START WITH 5 INCREMENT BY 5 MAXVALUE 1000 CYCLE CACHE 10")
    run(conn, "CREATE SEQUENCE t NOCACHE ORDER")
    nextval(conn)
    headings, rows = query_headed(conn, "SELECT sequence_name, min_value, max_value, increment_by, cycle_flag, "
                                        "order_flag, cache_size, last_number FROM user_sequences ORDER BY 1")
    assert headings == ["SEQUENCE_NAME", "MIN_VALUE", "MAX_VALUE", "INCREMENT_BY", "CYCLE_FLAG", "ORDER_FLAG",
                        "CACHE_SIZE", "LAST_NUMBER"]
    # LAST_NUMBER: on SQLite past the block this process cached, on PostgreSQL (no cache) the next value
    assert rows[0] == ("S", 1, 1000, 5, "Y", "N", 10, 55 if dsn.startswith("sqlite") else 10)
    assert rows[1][:2] == ("T", 1) and rows[1][3:] == (1, "N", "Y", 0, 1)
    assert rows[1][2] > 9.99e27                                      # NOMAXVALUE: 10^28 - 1
    assert query_rows(conn, "SELECT s.sequence_owner, s.sequence_name FROM all_sequences s "
                            "WHERE s.sequence_name = 'T'") == [("SLUICE", "T")]
    run(conn, "DROP SEQUENCE s")
    run(conn, "DROP SEQUENCE t")
    assert query_rows(conn, "SELECT COUNT(*) FROM user_sequences") == [(0,)]


@pytest.mark.parametrize("sql", [
    "SELECT 1 FROM DUAL WHERE s.NEXTVAL > 0",
    "SELECT DISTINCT s.NEXTVAL FROM DUAL",
    "SELECT s.NEXTVAL FROM DUAL ORDER BY 1",
    "SELECT (SELECT s.NEXTVAL FROM DUAL) FROM DUAL",
    "SELECT s.NEXTVAL FROM DUAL UNION ALL SELECT 1 FROM DUAL",
])
def test_a_sequence_where_oracle_takes_none_is_ora_02287(conn, sql):
    run(conn, "CREATE SEQUENCE s")
    assert query_code(conn, sql) == "ORA-02287"
    assert nextval(conn) == 1           # nothing drawn


def test_drop_user_cascade_drops_the_users_sequences(conn):
    run(conn, 'CREATE USER scott IDENTIFIED BY "Pw-for-tests-1"')
    run(conn, "CREATE SEQUENCE scott.s START WITH 3")
    assert nextval(conn, "scott.s") == 3
    assert raised_code(run, conn, "DROP USER scott") == "ORA-01922"
    run(conn, "DROP USER scott CASCADE")
    assert query_code(conn, "SELECT scott.s.NEXTVAL FROM DUAL") == "ORA-02289"


def test_insert_returning_the_nextval_into_a_variable(conn, dsn):
    create_table(dsn, "CREATE TABLE t (id INTEGER, v VARCHAR(20))")
    run(conn, "CREATE SEQUENCE s START WITH 40")
    cur = conn.cursor()
    new_id = cur.var(int)
    cur.execute("INSERT INTO t (id, v) VALUES (s.NEXTVAL, :v) RETURNING id INTO :new_id", v="x", new_id=new_id)
    assert new_id.getvalue() == [40]
    assert query_rows(conn, "SELECT s.CURRVAL FROM DUAL") == [(40,)]


def test_a_deleted_sqlite_stores_sequences_are_not_the_next_stores(tmp_path):
    """SQLite keeps the counters in ``<store>.sequences``: a store deleted without that file and
    made again at its path has none of the old store's sequences."""
    path = tmp_path / "s.db"
    with sluice.connect(f"sqlite:///{path}") as c:
        run(c, "CREATE SEQUENCE s START WITH 10")
        assert nextval(c) == 10
    for suffix in ("", "-wal", "-shm"):
        (tmp_path / f"s.db{suffix}").unlink(missing_ok=True)
    assert (tmp_path / "s.db.sequences").exists()
    with sluice.connect(f"sqlite:///{path}") as c:
        assert query_code(c, "SELECT s.NEXTVAL FROM DUAL") == "ORA-02289"
        run(c, "CREATE SEQUENCE s")
        assert nextval(c) == 1


def test_a_sqlite_store_without_sequences_has_no_file_beside_it(tmp_path):
    with sluice.connect(f"sqlite:///{tmp_path / 's.db'}") as c:
        assert query_rows(c, "SELECT COUNT(*) FROM user_sequences") == [(0,)]
        assert query_code(c, "SELECT s.NEXTVAL FROM DUAL") == "ORA-02289"
        assert raised_code(run, c, "DROP SEQUENCE s") == "ORA-02289"
        assert raised_code(run, c, "ALTER SEQUENCE s CYCLE") == "ORA-02289"
    assert not (tmp_path / "s.db.sequences").exists()


def test_a_batch_of_values_with_connect_by_level(conn):
    """python-oracledb's idiom for drawing many keys in one round trip."""
    run(conn, "CREATE SEQUENCE s")
    assert query_rows(conn, "SELECT s.NEXTVAL FROM DUAL CONNECT BY LEVEL <= :n", {"n": 5}) == [(1,), (2,), (3,), (4,), (5,)]


def test_user_sequences_of_a_postgresql_store_in_a_mixed_case_schema():
    schema = "Seq_" + uuid.uuid4().hex[:8]
    try:
        with sluice.connect(f"{conftest.PG_BASE}?schema={schema}") as c:
            run(c, "CREATE SEQUENCE s")
            assert query_rows(c, "SELECT sequence_name FROM user_sequences") == [("S",)]
    finally:
        conftest.drop_schema(schema)


def test_to_char_and_decode_of_nextval_draw_once(conn):
    """A rewrite that writes its operand twice (TO_CHAR's number model on PostgreSQL, DECODE's NULL
    search) writes the sequence's CURRVAL the second time: one value per row."""
    run(conn, "CREATE SEQUENCE s")
    assert query_rows(conn, "SELECT 'INV' || TO_CHAR(s.NEXTVAL, 'FM000000') FROM DUAL") == [("INV000001",)]
    assert query_rows(conn, "SELECT DECODE(s.NEXTVAL, NULL, 'none', 2, 'two', 'other') FROM DUAL") == [("two",)]
    assert nextval(conn) == 3
