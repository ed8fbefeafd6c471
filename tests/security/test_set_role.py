"""SET ROLE (Oracle SQL Language Reference): "enable and disable roles for your current
session" -- ``SET ROLE role [, role]`` enables those (and the roles granted to them) and
disables the others, ``SET ROLE ALL [EXCEPT role, …]`` every role granted to the user (but
those), ``SET ROLE NONE`` none.  SESSION_ROLES lists the enabled ones; what a disabled role
gives stops counting for the session's own calls, what was granted to the user itself
does not.  A role the user was not granted is ORA-01924 and changes nothing.  Another
session of the user keeps its own roles.  Sluice had no SET ROLE (ORA-00900).
"""

from __future__ import annotations

from tests.sqlhelpers import query_rows

from .conftest import code_of, create_user, login


def _world(admin) -> None:
    """CLERK holds ADMINS (MANAGE ANY QUEUE, EXECUTE ON DBMS_AQADM through AQADM_USERS,
    granted to it) and READERS; PUBLIC holds EVERYONE."""
    cur = admin.cursor()
    create_user(admin, "clerk")
    create_user(admin, "other")
    for statement in ("CREATE ROLE admins", "CREATE ROLE aqadm_users", "CREATE ROLE readers", "CREATE ROLE everyone",
                      "GRANT MANAGE ANY QUEUE TO admins", "GRANT EXECUTE ON DBMS_AQADM TO aqadm_users",
                      "GRANT aqadm_users TO admins", "GRANT admins, readers TO clerk", "GRANT everyone TO PUBLIC"):
        cur.execute(statement)


def _roles(conn) -> list[str]:
    return sorted(r for (r,) in query_rows(conn, "SELECT role FROM SESSION_ROLES"))


def test_set_role_enables_the_roles_named_and_disables_the_others(admin, dsn):
    _world(admin)
    with login(dsn, "clerk") as clerk, login(dsn, "clerk") as second:
        cur = clerk.cursor()

        def may_administer(name: str) -> bool:
            try:
                clerk.aqadm.create_queue_table(f"other.{name}", "RAW")
            except Exception as e:      # noqa: BLE001 -- the code is what is asserted
                assert getattr(e, "code", None) == 1031, e
                return False
            return True
        assert _roles(clerk) == ["ADMINS", "AQADM_USERS", "EVERYONE", "READERS"]
        cur.execute("SET ROLE readers")
        assert _roles(clerk) == ["READERS"]
        assert not may_administer("qt1")                               # ADMINS is disabled
        assert _roles(second) == ["ADMINS", "AQADM_USERS", "EVERYONE", "READERS"]   # its own session
        second.aqadm.create_queue_table("other.qt0", "RAW")
        cur.execute("SET ROLE admins, everyone")                       # and what ADMINS holds
        assert _roles(clerk) == ["ADMINS", "AQADM_USERS", "EVERYONE"]
        assert may_administer("qt2")
        cur.execute("SET ROLE NONE")
        assert _roles(clerk) == []
        assert not may_administer("qt3")
        assert query_rows(clerk, "SELECT COUNT(*) FROM ROLE_SYS_PRIVS") == [(0,)]
        cur.execute("SET ROLE ALL EXCEPT admins")                      # AQADM_USERS is ADMINS'
        assert _roles(clerk) == ["EVERYONE", "READERS"]
        assert not may_administer("qt4")
        cur.execute("SET ROLE ALL")
        assert may_administer("qt5")


def test_a_role_not_granted_is_refused_and_the_roles_stay(admin, dsn):
    _world(admin)
    admin.cursor().execute("CREATE ROLE outsiders")
    with login(dsn, "clerk") as clerk:
        cur = clerk.cursor()
        cur.execute("SET ROLE readers")
        for statement, code in (("SET ROLE outsiders", 1924), ("SET ROLE readers, nosuch", 1924),
                                ("SET ROLE ALL EXCEPT outsiders", 1924), ("SET ROLE dba", 1924),
                                ("SET ROLE", 922), ("SET ROLE readers IDENTIFIED BY x", 922)):
            assert code_of(lambda: cur.execute(statement)) == code, statement
            assert _roles(clerk) == ["READERS"], statement
        cur.execute("SET ROLE aqadm_users")            # granted through ADMINS: it may be named
        assert _roles(clerk) == ["AQADM_USERS"]


def test_own_grants_count_whatever_is_set_and_set_role_survives_a_rollback(admin, dsn):
    """SET ROLE NONE leaves what was granted to the user itself; DBA enabled makes a
    superuser, disabled does not.  SET ROLE is no DDL: it does not end the transaction, and
    a rollback does not undo it."""
    _world(admin)
    cur = admin.cursor()
    cur.execute("GRANT EXECUTE ON DBMS_AQADM, EXECUTE ON DBMS_AQ TO clerk")
    cur.execute("GRANT DBA TO other")
    admin.aqadm.create_queue_table("clerk.qt", "RAW")
    with login(dsn, "clerk") as clerk, login(dsn, "other") as other:
        clerk.cursor().execute("SET ROLE NONE")
        clerk.aqadm.create_queue("clerk.q", "clerk.qt")              # its own schema, its own EXECUTE
        ocur = other.cursor()
        ocur.execute("SET ROLE NONE")
        assert code_of(lambda: ocur.execute("CREATE USER third IDENTIFIED BY \"Pw-x-1\"")) == 1031
        ocur.execute("SET ROLE dba")
        ocur.execute("CREATE USER third IDENTIFIED BY \"Pw-x-1\"")
        ccur = clerk.cursor()
        ccur.execute("SET ROLE ALL")
        q = clerk.queue("clerk.q")
        clerk.aqadm.start_queue("clerk.q")
        q.enqone(clerk.msgproperties(payload=b"kept"))                # a transaction is open
        ccur.execute("SET ROLE readers")
        clerk.rollback()
        assert _roles(clerk) == ["READERS"]
        assert code_of(lambda: clerk.aqadm.create_queue_table("other.qt", "RAW")) == 1031
