"""SESSION_ROLES, ROLE_SYS_PRIVS, ROLE_TAB_PRIVS and ROLE_ROLE_PRIVS (Oracle Database Reference):
the roles the session holds — granted to its user or PUBLIC, to those roles, and so on; all
of them unless SET ROLE chose (test_set_role.py) — and what was granted to them, "only about roles to which the user has
access".  Oracle's columns; COMMON and INHERITED are 'NO' (no containers here).
"""

from __future__ import annotations

from tests.sqlhelpers import query_rows

from .conftest import create_user, login


def _columns(conn, view: str) -> list[str]:
    cur = conn.cursor()
    cur.execute(f"SELECT * FROM {view}")
    return [d[0] for d in cur.description]


def _roles_world(admin) -> None:
    """CLERK holds STAFF, which holds QUEUE_ADMINS; OUTSIDERS is held by BYSTANDER only."""
    cur = admin.cursor()
    create_user(admin, "qowner")
    create_user(admin, "clerk")
    create_user(admin, "bystander")
    admin.aqadm.create_queue_table("qowner.qt", "RAW")
    admin.aqadm.create_queue("qowner.q", "qowner.qt")
    for statement in ("CREATE ROLE queue_admins", "CREATE ROLE staff", "CREATE ROLE outsiders",
                      "GRANT MANAGE ANY QUEUE TO queue_admins WITH ADMIN OPTION",
                      "GRANT EXECUTE ON DBMS_AQADM TO queue_admins",
                      "GRANT queue_admins TO staff", "GRANT SELECT ON hr.employees TO staff",
                      "GRANT staff TO clerk", "GRANT CREATE SESSION TO outsiders",
                      "GRANT outsiders TO bystander"):
        cur.execute(statement)
    admin.aqadm.grant_queue_privilege("ENQUEUE", "qowner.q", "staff")
    admin.rule_adm.create_rule_set("qowner.rs")
    admin.rule_adm.grant_object_privilege(admin.rule_adm.EXECUTE_ON_RULE_SET, "qowner.rs", "staff")


def test_the_session_sees_its_roles_and_what_was_granted_to_them(admin, dsn):
    _roles_world(admin)
    with login(dsn, "clerk") as clerk:
        assert _columns(clerk, "SESSION_ROLES") == ["ROLE"]
        assert _columns(clerk, "ROLE_SYS_PRIVS") == ["ROLE", "PRIVILEGE", "ADMIN_OPTION", "COMMON", "INHERITED"]
        assert _columns(clerk, "ROLE_TAB_PRIVS") == ["ROLE", "OWNER", "TABLE_NAME", "COLUMN_NAME", "PRIVILEGE",
                                                     "GRANTABLE", "COMMON", "INHERITED"]
        assert _columns(clerk, "ROLE_ROLE_PRIVS") == ["ROLE", "GRANTED_ROLE", "ADMIN_OPTION", "COMMON",
                                                      "INHERITED"]
        assert sorted(query_rows(clerk, "SELECT ROLE FROM SESSION_ROLES")) == [("QUEUE_ADMINS",), ("STAFF",)]
        assert query_rows(clerk, "SELECT * FROM ROLE_SYS_PRIVS") == [
            ("QUEUE_ADMINS", "MANAGE ANY QUEUE", "YES", "NO", "NO")]
        assert sorted(query_rows(clerk, "SELECT * FROM ROLE_TAB_PRIVS")) == [
            ("QUEUE_ADMINS", "SYS", "DBMS_AQADM", None, "EXECUTE", "NO", "NO", "NO"),
            ("STAFF", "HR", "EMPLOYEES", None, "SELECT", "NO", "NO", "NO"),
            ("STAFF", "QOWNER", "Q", None, "ENQUEUE", "NO", "NO", "NO"),
            ("STAFF", "QOWNER", "RS", None, "EXECUTE", "NO", "NO", "NO")]
        assert query_rows(clerk, "SELECT * FROM ROLE_ROLE_PRIVS") == [("STAFF", "QUEUE_ADMINS", "NO", "NO", "NO")]
    with login(dsn, "bystander") as bystander:        # another session: its own roles only
        assert query_rows(bystander, "SELECT ROLE FROM SESSION_ROLES") == [("OUTSIDERS",)]
        assert query_rows(bystander, "SELECT ROLE, PRIVILEGE FROM ROLE_SYS_PRIVS") == [("OUTSIDERS", "CREATE SESSION")]
        assert query_rows(bystander, "SELECT COUNT(*) FROM ROLE_TAB_PRIVS") == [(0,)]


def test_a_role_revoked_or_dropped_leaves_the_views(admin, dsn):
    _roles_world(admin)
    cur = admin.cursor()
    with login(dsn, "clerk") as clerk:
        cur.execute("REVOKE queue_admins FROM staff")
        assert query_rows(clerk, "SELECT ROLE FROM SESSION_ROLES") == [("STAFF",)]
        assert query_rows(clerk, "SELECT COUNT(*) FROM ROLE_SYS_PRIVS") == [(0,)]
        assert sorted(r[0] for r in query_rows(clerk, "SELECT ROLE FROM ROLE_TAB_PRIVS")) == ["STAFF"] * 3
        cur.execute("GRANT AQ_USER_ROLE TO clerk")     # a predefined role is a session role too
        assert sorted(query_rows(clerk, "SELECT ROLE FROM SESSION_ROLES")) == [("AQ_USER_ROLE",), ("STAFF",)]
        cur.execute("DROP ROLE staff")
        assert query_rows(clerk, "SELECT ROLE FROM SESSION_ROLES") == [("AQ_USER_ROLE",)]
        # what the predefined role gives (EXECUTE on SYS's packages) is all that is left
        assert sorted(query_rows(clerk, "SELECT ROLE, OWNER, TABLE_NAME FROM ROLE_TAB_PRIVS")) == [
            ("AQ_USER_ROLE", "SYS", p) for p in ("DBMS_AQ", "DBMS_AQIN", "DBMS_AQJMS")]
        assert query_rows(clerk, "SELECT COUNT(*) FROM ROLE_ROLE_PRIVS") == [(0,)]


def test_an_older_store_gains_the_session_role_views(dsn):
    """Schema 18 had none: the upgrade to 19 makes them (SQLite makes its per connection)."""
    import sluice
    from sluice.store.sqlschema import SCHEMA_VERSION
    from tests.streams.test_propagation import _raw

    conn = sluice.connect(dsn)
    create_user(conn, "clerk")
    conn.cursor().execute("CREATE ROLE staff")
    conn.cursor().execute("GRANT staff TO clerk")
    conn.close()
    if not dsn.startswith("sqlite:"):
        _raw(dsn, [f"DROP VIEW {v}" for v in ("ROLE_ROLE_PRIVS", "ROLE_TAB_PRIVS", "ROLE_SYS_PRIVS", "QUEUE_PRIVILEGES",
                                         "ALL_TAB_PRIVS", "SESSION_ROLES")])    # ALL_TAB_PRIVS: schema 20's
    _raw(dsn, ["UPDATE SLUICE_META SET VALUE = '18' WHERE KEY = 'schema_version'"])
    with sluice.connect(dsn) as conn:
        assert query_rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    with login(dsn, "clerk") as clerk:
        assert query_rows(clerk, "SELECT ROLE FROM SESSION_ROLES") == [("STAFF",)]
        assert query_rows(clerk, "SELECT COUNT(*) FROM ROLE_SYS_PRIVS") == [(0,)]
