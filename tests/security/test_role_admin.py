"""Who may grant, revoke and drop a role, and roles granted to PUBLIC (Oracle SQL Language
Reference, CREATE ROLE / GRANT / REVOKE / DROP ROLE).

CREATE ROLE needs the CREATE ROLE system privilege, and "the role is granted to you with the
ADMIN OPTION"; to grant or revoke a role "you must have been granted the role with the
ADMIN OPTION or … the GRANT ANY ROLE system privilege" (else ORA-01932, ADMIN option not
granted for role); to drop one, the ADMIN OPTION or DROP ANY ROLE (else ORA-01031).  A
role granted to PUBLIC is every user's ("all users can immediately enable the role").
Until now only a superuser made, granted or dropped a role, and PUBLIC was ORA-01917.
"""

from __future__ import annotations

import pytest

from tests.sqlhelpers import query_rows

from .conftest import code_of, create_user, login

ROLE_ROWS = "SELECT grantee, granted_role, admin_option FROM DBA_ROLE_PRIVS WHERE granted_role = 'CLERKS' ORDER BY 1"


def _catalog(admin) -> list:
    store = admin.context.store
    return [sorted(store.catalog_objects(k)) for k in ("ROLEDEF", "ROLE", "SYSPRIV")]


def test_the_creator_of_a_role_holds_it_with_admin_option(admin, dsn):
    """LEAD (CREATE ROLE) makes CLERKS, holds it WITH ADMIN OPTION, grants it on -- to
    MEMBER, WITH ADMIN OPTION to DEPUTY, who grants it on in turn (granted again without the
    option, DEPUTY keeps it: only a revoke takes it) -- revokes it and drops it;
    MEMBER, holding it without the option, may do none of that (ORA-01932 / ORA-01031) and
    nothing changes.  Without CREATE ROLE, CREATE ROLE is ORA-01031."""
    for user in ("lead", "deputy", "member", "other"):
        create_user(admin, user)
    admin.cursor().execute("GRANT CREATE ROLE TO lead")
    with login(dsn, "lead") as lead, login(dsn, "member") as member, login(dsn, "deputy") as deputy:
        lcur, mcur = lead.cursor(), member.cursor()
        assert code_of(lambda: mcur.execute("CREATE ROLE mine")) == 1031
        lcur.execute("CREATE ROLE clerks")
        assert query_rows(admin, ROLE_ROWS) == [("LEAD", "CLERKS", "YES")]
        assert query_rows(lead, "SELECT username, granted_role, admin_option FROM USER_ROLE_PRIVS") == [
            ("LEAD", "CLERKS", "YES")]
        assert query_rows(lead, "SELECT role FROM SESSION_ROLES") == [("CLERKS",)]
        lcur.execute("GRANT clerks TO member")
        lcur.execute("GRANT clerks TO deputy WITH ADMIN OPTION")
        deputy.cursor().execute("GRANT clerks TO other")
        lcur.execute("GRANT clerks TO deputy")                          # again: DEPUTY keeps its option
        assert query_rows(admin, ROLE_ROWS) == [("DEPUTY", "CLERKS", "YES"), ("LEAD", "CLERKS", "YES"),
                                          ("MEMBER", "CLERKS", "NO"), ("OTHER", "CLERKS", "NO")]
        before = _catalog(admin)
        for statement, code in (("GRANT clerks TO other", 1932), ("REVOKE clerks FROM other", 1932),
                                ("GRANT clerks TO PUBLIC", 1932), ("DROP ROLE clerks", 1031)):
            assert code_of(lambda: mcur.execute(statement)) == code, statement
        assert _catalog(admin) == before
        deputy.cursor().execute("REVOKE clerks FROM other")
        lcur.execute("REVOKE clerks FROM member")
        assert query_rows(admin, ROLE_ROWS) == [("DEPUTY", "CLERKS", "YES"), ("LEAD", "CLERKS", "YES")]
        lcur.execute("DROP ROLE clerks")
        assert query_rows(admin, "SELECT COUNT(*) FROM DBA_ROLES WHERE role = 'CLERKS'") == [(0,)]
        assert query_rows(admin, ROLE_ROWS) == []


def test_grant_any_role_and_drop_any_role(admin, dsn):
    """GRANT ANY ROLE grants and revokes any role (a predefined one too) without holding it;
    dropping one needs DROP ANY ROLE (or the ADMIN OPTION); a predefined role is never
    dropped (ORA-01031)."""
    for user in ("security_admin", "member"):
        create_user(admin, user)
    cur = admin.cursor()
    cur.execute("CREATE ROLE clerks")
    cur.execute("GRANT GRANT ANY ROLE TO security_admin")
    assert query_rows(admin, "SELECT privilege FROM DBA_SYS_PRIVS WHERE grantee = 'SECURITY_ADMIN' ORDER BY 1") == [
        ("CREATE SESSION",), ("GRANT ANY ROLE",)]
    with login(dsn, "security_admin") as sec:
        scur = sec.cursor()
        scur.execute("GRANT clerks, aq_user_role TO member")
        assert query_rows(admin, "SELECT granted_role FROM DBA_ROLE_PRIVS WHERE grantee = 'MEMBER' ORDER BY 1") == [
            ("AQ_USER_ROLE",), ("CLERKS",)]
        scur.execute("REVOKE aq_user_role FROM member")
        assert code_of(lambda: scur.execute("DROP ROLE clerks")) == 1031
        cur.execute("GRANT DROP ANY ROLE TO security_admin")
        assert code_of(lambda: scur.execute("DROP ROLE aq_user_role")) == 1031
        scur.execute("DROP ROLE clerks")
        assert query_rows(admin, "SELECT granted_role FROM DBA_ROLE_PRIVS WHERE grantee = 'MEMBER'") == []


def test_a_role_granted_to_public_is_every_users(admin, dsn):
    """GRANT clerks TO PUBLIC: a user holds what CLERKS gives (one made afterwards too), sees
    it in SESSION_ROLES and (as PUBLIC's) in USER_ROLE_PRIVS; REVOKE clerks FROM PUBLIC
    takes it back; revoking it again is ORA-01951.  PUBLIC's ADMIN OPTION on a role lets
    every user grant it on."""
    cur = admin.cursor()
    create_user(admin, "clerk")
    cur.execute("CREATE ROLE clerks")
    cur.execute("GRANT EXECUTE ON DBMS_AQADM, MANAGE ANY QUEUE TO clerks")
    cur.execute("GRANT clerks TO PUBLIC")
    create_user(admin, "late")
    with login(dsn, "clerk") as clerk, login(dsn, "late") as late:
        clerk.aqadm.create_queue_table("late.qt", "RAW")             # MANAGE ANY QUEUE through PUBLIC's role
        late.aqadm.create_queue_table("clerk.qt", "RAW")
        assert query_rows(late, "SELECT role FROM SESSION_ROLES") == [("CLERKS",)]
        assert query_rows(late, "SELECT username, granted_role, admin_option FROM USER_ROLE_PRIVS") == [
            ("PUBLIC", "CLERKS", "NO")]
        assert ("PUBLIC", "CLERKS", "NO") in query_rows(admin, ROLE_ROWS)
        cur.execute("REVOKE clerks FROM PUBLIC")
        assert code_of(lambda: clerk.aqadm.create_queue_table("late.qt2", "RAW")) == 1031
        assert query_rows(late, "SELECT COUNT(*) FROM SESSION_ROLES") == [(0,)]
        assert code_of(lambda: cur.execute("REVOKE clerks FROM PUBLIC")) == 1951
        cur.execute("GRANT clerks TO PUBLIC WITH ADMIN OPTION")
        clerk.cursor().execute("GRANT clerks TO late")
        assert ("LATE", "CLERKS", "NO") in query_rows(admin, ROLE_ROWS)
        cur.execute("DROP ROLE clerks")                                # its grants go, PUBLIC's too
        assert query_rows(admin, ROLE_ROWS) == []
    assert code_of(lambda: cur.execute("GRANT CREATE SESSION TO PUBLIC")) == 1917   # no system privilege of PUBLIC's


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)
def test_an_older_store_shows_the_roles_granted_to_public(dsn):
    """Schema 21's SESSION_ROLES and USER_ROLE_PRIVS (PostgreSQL keeps them in the store;
    SQLite makes them per connection) knew only the user's own grants: the upgrade to 22
    makes them again, showing PUBLIC's roles."""
    import sluice
    from sluice.store.sqlschema import SCHEMA_VERSION
    from tests.streams.test_propagation import _raw

    with sluice.connect(dsn) as conn:
        create_user(conn, "clerk")
        conn.cursor().execute("CREATE ROLE everyone")
        conn.cursor().execute("GRANT everyone TO PUBLIC")
    user = "current_setting('sluice.user', true)"
    _raw(dsn, [f"CREATE OR REPLACE VIEW USER_ROLE_PRIVS AS SELECT GRANTEE AS USERNAME, GRANTED_ROLE, ADMIN_OPTION, "
               f"DEFAULT_ROLE FROM DBA_ROLE_PRIVS WHERE GRANTEE = {user}",
               f"CREATE OR REPLACE VIEW SESSION_ROLES AS WITH RECURSIVE R (ROLE) AS (SELECT NAME FROM SLUICE_CATALOG "
               f"WHERE KIND = 'ROLE' AND OWNER = {user} UNION SELECT C.NAME FROM SLUICE_CATALOG C JOIN R "
               f"ON C.KIND = 'ROLE' AND C.OWNER = R.ROLE) SELECT ROLE FROM R",
               "UPDATE SLUICE_META SET VALUE = '21' WHERE KEY = 'schema_version'"])
    with login(dsn, "clerk") as clerk:
        assert query_rows(clerk, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        assert query_rows(clerk, "SELECT role FROM SESSION_ROLES") == [("EVERYONE",)]
        assert query_rows(clerk, "SELECT username, granted_role FROM USER_ROLE_PRIVS") == [("PUBLIC", "EVERYONE")]
