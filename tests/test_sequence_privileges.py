"""Another user's sequence, on both stores: NEXTVAL / CURRVAL need SELECT on it (ORA-02289 --
Oracle's "sequence does not exist" -- when the user holds no privilege on it, ORA-01031 when it
holds ALTER only), ALTER SEQUENCE needs ALTER, ALL_SEQUENCES lists what the user may use;
GRANT … ON a sequence takes SELECT and ALTER only (ORA-02205).  Quoted names in NEXTVAL
(``"S".NEXTVAL``), and ``DEFAULT seq.NEXTVAL`` in CREATE TABLE."""

from __future__ import annotations

import pytest

from tests.security.conftest import create_user, login
from tests.sqlhelpers import query_code, query_rows, run_committed as run


@pytest.fixture
def admin(conn):
    """SCOTT's sequence S; ALICE may only log on."""
    create_user(conn, "scott", "CREATE TABLE")
    create_user(conn, "alice")
    return conn


def test_another_users_sequence_needs_select(admin, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "CREATE SEQUENCE s NOCACHE")     # (each value from the file: the ALTER's step next)
        assert query_rows(scott, "SELECT s.NEXTVAL FROM DUAL") == [(1,)]
        with login(dsn, "alice") as alice:
            assert query_code(alice, "SELECT scott.s.NEXTVAL FROM DUAL") == "ORA-02289"
            assert query_code(alice, "ALTER SEQUENCE scott.s INCREMENT BY 5") == "ORA-02289"
            run(scott, "GRANT ALTER ON s TO alice")
            assert query_code(alice, "SELECT scott.s.NEXTVAL FROM DUAL") == "ORA-01031"
            run(alice, "ALTER SEQUENCE scott.s INCREMENT BY 5")
            run(scott, "GRANT SELECT ON scott.s TO alice")
            assert query_rows(alice, "SELECT scott.s.NEXTVAL, scott.s.CURRVAL FROM DUAL") == [(6, 6)]
            run(scott, "REVOKE ALL ON s FROM alice")
            assert query_code(alice, "SELECT scott.s.NEXTVAL FROM DUAL") == "ORA-02289"
            run(admin, "GRANT SELECT ANY SEQUENCE TO alice")
            assert query_rows(alice, "SELECT scott.s.NEXTVAL FROM DUAL") == [(11,)]


def test_all_sequences_lists_what_the_user_may_use(admin, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "CREATE SEQUENCE s", "CREATE SEQUENCE hidden")
        with login(dsn, "alice") as alice:
            run(alice, "CREATE SEQUENCE mine")
            seen = "SELECT SEQUENCE_OWNER, SEQUENCE_NAME FROM ALL_SEQUENCES ORDER BY 1, 2"
            assert query_rows(alice, seen) == [("ALICE", "MINE")]
            run(scott, "GRANT SELECT ON s TO PUBLIC")
            assert query_rows(alice, seen) == [("ALICE", "MINE"), ("SCOTT", "S")]
            assert query_rows(alice, "SELECT SEQUENCE_NAME FROM USER_SEQUENCES") == [("MINE",)]
            assert query_rows(admin, "SELECT COUNT(*) FROM ALL_SEQUENCES") == [(3,)]    # a superuser: all


def test_a_grant_on_a_sequence_takes_select_and_alter_only(admin, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "CREATE SEQUENCE s")
        assert query_code(scott, "GRANT INSERT ON s TO alice") == "ORA-02205"
        run(scott, "GRANT ALL ON s TO alice")
    assert query_rows(admin, "SELECT COUNT(*) FROM DBA_TAB_PRIVS WHERE OWNER = 'SCOTT' AND TABLE_NAME = 'S'") == [(1,)]
    with login(dsn, "alice") as alice:
        assert query_rows(alice, "SELECT scott.s.NEXTVAL FROM DUAL") == [(1,)]


def test_a_dropped_sequences_grants_go_with_it(admin, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "CREATE SEQUENCE s", "GRANT SELECT ON s TO alice", "DROP SEQUENCE s", "CREATE SEQUENCE s")
    with login(dsn, "alice") as alice:
        assert query_code(alice, "SELECT scott.s.NEXTVAL FROM DUAL") == "ORA-02289"


def test_a_default_of_another_users_sequence_needs_select(admin, dsn):
    run(admin, "GRANT CREATE TABLE TO alice")
    with login(dsn, "scott") as scott, login(dsn, "alice") as alice:
        run(scott, "CREATE SEQUENCE s")
        assert query_code(alice, "CREATE TABLE a (id NUMBER DEFAULT scott.s.NEXTVAL)") == "ORA-02289"
        run(scott, "GRANT SELECT ON s TO alice")
        run(alice, "CREATE TABLE a (id NUMBER DEFAULT scott.s.NEXTVAL, b NUMBER)", "INSERT INTO a (b) VALUES (1)")
        assert query_rows(alice, "SELECT id FROM a") == [(1,)]


def test_quoted_names_in_nextval(conn):
    run(conn, 'CREATE SEQUENCE "S"')
    assert query_rows(conn, 'SELECT "S".NEXTVAL FROM DUAL') == [(1,)]
    assert query_rows(conn, 'SELECT sluice."S".nextval, "SLUICE"."S".CURRVAL, s.currval FROM DUAL') == [(2, 2, 2)]
    assert query_rows(conn, """SELECT '"S".NEXTVAL' FROM DUAL""") == [('"S".NEXTVAL',)]


def test_default_nextval_numbers_the_rows(conn):
    run(conn, "CREATE SEQUENCE ids START WITH 10",
        "CREATE TABLE t (id NUMBER DEFAULT ids.NEXTVAL, name VARCHAR2(10))",
        'CREATE TABLE q (id NUMBER DEFAULT sluice."IDS".nextval, name VARCHAR2(10))')
    cur = conn.cursor()
    cur.execute("INSERT INTO t (name) VALUES ('a')")
    cur.executemany("INSERT INTO t (name) VALUES (:1)", [("b",), ("c",)])
    cur.execute("INSERT INTO t (id, name) VALUES (99, 'd')")
    conn.commit()
    assert query_rows(conn, "SELECT id, name FROM t ORDER BY name") == [(10, "a"), (11, "b"), (12, "c"), (99, "d")]
    run(conn, "INSERT INTO q (name) VALUES ('e')")
    assert query_rows(conn, "SELECT id FROM q") == [(13,)]
    assert query_code(conn, "CREATE TABLE u (id NUMBER DEFAULT nope.NEXTVAL)") == "ORA-02289"
    assert query_code(conn, "SELECT * FROM u") == "ORA-00942"
