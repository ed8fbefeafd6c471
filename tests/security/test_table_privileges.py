"""Object privileges on tables made at a cursor (SQL Language Reference GRANT / REVOKE; the
SELECT / INSERT / UPDATE / DELETE prerequisites; Reference SQL92_SECURITY): another user's
table needs the privilege, its owner, a superuser or an ANY TABLE system privilege need none;
ORA-00942 when the user holds no privilege at all on the table, ORA-01031 when it holds some
other one (security/objectaccess.py, Authorizer.check_object)."""

from __future__ import annotations

import pytest

from sluice.security.objectaccess import needs
from tests.sqlhelpers import query_code, query_rows, run_committed as run

from .conftest import create_user, login


@pytest.fixture
def world(admin, dsn):
    """SCOTT's table T (rows 1, 2); ALICE and BOB may only log on."""
    create_user(admin, "scott", "CREATE TABLE")
    create_user(admin, "alice")
    create_user(admin, "bob")
    with login(dsn, "scott") as scott:
        run(scott, "create table t (a number)", "insert into t values (1)", "insert into t values (2)")
    return admin


def codes(conn) -> dict[str, str]:
    """What each kind of statement on SCOTT.T answers: 'ok' or its error."""
    out = {}
    for what, sql in (("select", "select a from scott.t"), ("insert", "insert into scott.t values (9)"),
                      ("update", "update scott.t set a = a"), ("update where", "update scott.t set a = 5 where a = 9"),
                      ("delete where", "delete from scott.t where a = 9")):
        try:
            query_rows(conn, sql) if what == "select" else conn.cursor().execute(sql)
            out[what] = "ok"
        except Exception as e:      # noqa: BLE001 - the code is what is compared
            out[what] = e.full_code
        conn.rollback()
    return out


def test_another_users_table_is_not_there_without_a_privilege(world, dsn):
    with login(dsn, "alice") as alice:
        assert set(codes(alice).values()) == {"ORA-00942"}
        assert query_code(alice, "select count(*) from t") == "ORA-00942"    # SCOTT's by its bare name
        assert query_code(alice, "select x.a from dual d join scott.t x on 1 = 1") == "ORA-00942"
        assert query_code(alice, "select 1 from dual where exists (select 1 from scott.t)") == "ORA-00942"


def test_each_privilege_allows_its_statement_and_ora_01031_for_the_others(world, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "GRANT SELECT ON t TO alice")
    with login(dsn, "alice") as alice:
        assert query_rows(alice, "select a from scott.t order by a") == [(1,), (2,)]
        assert codes(alice) == {"select": "ok", "insert": "ORA-01031", "update": "ORA-01031",
                                "update where": "ORA-01031", "delete where": "ORA-01031"}
        with login(dsn, "scott") as scott:
            run(scott, "GRANT INSERT, UPDATE ON scott.t TO alice", "REVOKE SELECT ON t FROM alice")
        # SQL92_SECURITY: an UPDATE's WHERE reads the columns: SELECT too
        assert codes(alice) == {"select": "ORA-01031", "insert": "ok", "update": "ok",
                                "update where": "ORA-01031", "delete where": "ORA-01031"}
        with login(dsn, "scott") as scott:
            run(scott, "GRANT ALL PRIVILEGES ON t TO alice")
        assert set(codes(alice).values()) == {"ok"}
        with login(dsn, "scott") as scott:
            run(scott, "REVOKE ALL ON t FROM alice")
        assert set(codes(alice).values()) == {"ORA-00942"}


def test_dml_and_a_block_write_with_the_privilege(world, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "GRANT SELECT, INSERT, DELETE ON t TO alice")
    with login(dsn, "alice") as alice:
        run(alice, "insert into scott.t select a + 10 from scott.t", "delete from scott.t where a = 1",
            "begin insert into scott.t values (7); end;")
        assert query_rows(alice, "select a from scott.t order by a") == [(2,), (7,), (11,), (12,)]
    with login(dsn, "bob") as bob:
        assert query_code(bob, "begin insert into scott.t values (8); end;") == "ORA-00942"
        assert query_code(bob, "insert into scott.t select * from scott.t") == "ORA-00942"


def test_public_roles_and_any_table_privileges(world, dsn):
    admin = world
    run(admin, "CREATE ROLE readers", "GRANT readers TO alice", "GRANT SELECT ON scott.t TO readers")
    with login(dsn, "alice") as alice:
        assert query_rows(alice, "select count(*) from scott.t") == [(2,)]
    with login(dsn, "bob") as bob:
        assert query_code(bob, "select count(*) from scott.t") == "ORA-00942"
        run(admin, "GRANT DELETE ON scott.t TO PUBLIC")
        bob.cursor().execute("delete from scott.t")     # no WHERE: DELETE alone
        bob.rollback()
        assert query_code(bob, "select count(*) from scott.t") == "ORA-01031"
        run(admin, "REVOKE DELETE ON scott.t FROM PUBLIC", "GRANT SELECT ANY TABLE TO bob")
        assert query_rows(bob, "select count(*) from scott.t") == [(2,)]
        assert query_code(bob, "insert into scott.t values (3)") == "ORA-01031"   # it sees the table
        run(admin, "GRANT INSERT ANY TABLE TO bob")
        run(bob, "insert into scott.t values (3)")
    with login(dsn, "scott") as scott:          # the owner needs nothing
        assert query_rows(scott, "select count(*) from t") == [(3,)]


def test_grant_option_and_the_revoke_cascade(world, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "GRANT SELECT ON t TO alice WITH GRANT OPTION", "GRANT INSERT ON t TO alice")
    with login(dsn, "alice") as alice:
        assert query_code(alice, "GRANT INSERT ON scott.t TO bob") == "ORA-01031"   # no grant option
        run(alice, "GRANT SELECT ON scott.t TO bob")
    with login(dsn, "bob") as bob:
        assert query_rows(bob, "select count(*) from scott.t") == [(2,)]
        with login(dsn, "scott") as scott:
            run(scott, "REVOKE SELECT ON t FROM alice")
        assert query_code(bob, "select count(*) from scott.t") == "ORA-00942"


def test_grant_and_revoke_errors_change_nothing(world, dsn):
    with login(dsn, "scott") as scott:
        assert query_code(scott, "GRANT SELECT, SELECT ON t TO alice") == "ORA-01711"
        assert query_code(scott, "GRANT SELECT ON t TO alice WITH ADMIN OPTION") == "ORA-00993"
        assert query_code(scott, "GRANT FLY ON t TO alice") == "ORA-00990"
        assert query_code(scott, "GRANT UPDATE (a) ON t TO alice") == "SLU-00001"
        assert query_code(scott, "GRANT SELECT, INSERT TO alice") == "ORA-00969"
        assert query_code(scott, "REVOKE INSERT ON t FROM alice") == "ORA-01927"
        run(scott, "GRANT SELECT ON t TO alice")
        assert query_code(scott, "REVOKE SELECT, INSERT ON t FROM alice") == "ORA-01927"
    with login(dsn, "alice") as alice:
        assert query_rows(alice, "select count(*) from scott.t") == [(2,)]
        assert query_code(alice, "GRANT SELECT ON scott.t TO bob") == "ORA-01031"
    run(world, "GRANT EXECUTE ON DBMS_AQ, INSERT, DELETE ON scott.t TO bob")   # a list of both kinds
    with login(dsn, "bob") as bob:
        run(bob, "insert into scott.t values (3)", "delete from scott.t")


def test_a_table_an_administrator_made_in_a_users_schema_is_that_users(world, dsn):
    """(PostgreSQL makes it in the schema scott, SQLite in its one schema, recorded as SCOTT's.)"""
    run(world, "create table scott.made (a number)", "insert into scott.made values (1)")
    with login(dsn, "alice") as alice:
        assert query_code(alice, "select a from scott.made") == "ORA-00942"
        run(world, "GRANT SELECT ON scott.made TO alice")
        assert query_rows(alice, "select a from scott.made") == [(1,)]
    with login(dsn, "scott") as scott:
        assert query_rows(scott, "select a from scott.made") == [(1,)]


def test_a_dropped_tables_grants_go_with_it(world, dsn):
    with login(dsn, "scott") as scott:
        run(scott, "GRANT SELECT ON t TO alice", "drop table t", "create table t (a number)")
    with login(dsn, "alice") as alice:
        assert query_code(alice, "select count(*) from scott.t") == "ORA-00942"


def test_the_grants_show_in_dba_tab_privs(world, dsn):
    """DBA_TAB_PRIVS lists the SELECT grants (the view's other privileges need a catalog change)."""
    with login(dsn, "scott") as scott:
        run(scott, "GRANT SELECT, INSERT ON t TO alice")
    assert query_rows(world, "SELECT GRANTEE, OWNER, TABLE_NAME, GRANTOR, PRIVILEGE FROM DBA_TAB_PRIVS "
                             "WHERE OWNER = 'SCOTT'") == [("ALICE", "SCOTT", "T", "SCOTT", "SELECT")]


# -- what a statement needs (no store) -------------------------------------------------------

TABLES = {("SCOTT", "T"): '"t"', ("SCOTT", "U"): '"u"', ("ALICE", "MINE"): '"mine"'}


@pytest.mark.parametrize("sql, wanted", [
    ("select * from mine where a = 1", ()),
    ("select * from scott.t", (("SCOTT.T", "SELECT", "TABLE"),)),
    ("select * from mine m, scott.t x, u where 1 = 1", (("SCOTT.T", "SELECT", "TABLE"), ("SCOTT.U", "SELECT", "TABLE"))),
    ("select t.a, u.b from mine t, mine u", ()),             # aliases are no tables
    ("insert into scott.t (a) select a from scott.u", (("SCOTT.U", "SELECT", "TABLE"), ("SCOTT.T", "INSERT", "TABLE"))),
    ("insert into scott.t values (1) returning a into :x", (("SCOTT.T", "INSERT", "TABLE"), ("SCOTT.T", "SELECT", "TABLE"))),
    ("update scott.t set a = 1", (("SCOTT.T", "UPDATE", "TABLE"),)),
    ("update scott.t set a = 1 where a = 2", (("SCOTT.T", "UPDATE", "TABLE"), ("SCOTT.T", "SELECT", "TABLE"))),
    ("delete scott.t", (("SCOTT.T", "DELETE", "TABLE"),)),
    ("delete from t where a = (select max(a) from scott.u)",
     (("SCOTT.U", "SELECT", "TABLE"), ("SCOTT.T", "DELETE", "TABLE"), ("SCOTT.T", "SELECT", "TABLE"))),
    ("insert all into scott.t values (1) into scott.u values (2) select * from dual",
     (("SCOTT.T", "INSERT", "TABLE"), ("SCOTT.U", "INSERT", "TABLE"))),
    ("merge into scott.t d using scott.u s on (d.a = s.a) when matched then update set d.a = s.a "
     "when not matched then insert (a) values (s.a)",
     (("SCOTT.U", "SELECT", "TABLE"), ("SCOTT.T", "UPDATE", "TABLE"), ("SCOTT.T", "INSERT", "TABLE"))),
    ("select scott.s.nextval, s.currval from dual", (("SCOTT.S", "SELECT", "SEQUENCE"),)),
    ("select 'scott.t' from dual", ()),
])
def test_what_a_statement_needs(sql, wanted):
    assert needs(sql, "ALICE", TABLES) == wanted
