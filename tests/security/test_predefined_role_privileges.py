"""What the predefined roles give is in the dictionary, GRANTEE the role, as Oracle's lists it:
DBA_SYS_PRIVS (AQ_ADMINISTRATOR_ROLE's ENQUEUE / DEQUEUE / MANAGE ANY QUEUE and the rules
engine's CREATE privileges WITH ADMIN OPTION, CONNECT's CREATE SESSION …), DBA_TAB_PRIVS
(EXECUTE on DBMS_AQ, DBMS_AQADM … granted by SYS), and so the ROLE_SYS_PRIVS / ROLE_TAB_PRIVS
of a session holding the role.  They are no catalog rows (sluice.store.sqlschema.ROLE_GRANTS):
a GRANT that stores the same privilege shows once, as stored.
"""

from __future__ import annotations

from tests.sqlhelpers import query_rows

from .conftest import create_user, login

AQ_ADMIN_SYS = [("CREATE EVALUATION CONTEXT", "YES"), ("CREATE RULE", "YES"), ("CREATE RULE SET", "YES"),
                ("DEQUEUE ANY QUEUE", "NO"), ("ENQUEUE ANY QUEUE", "NO"), ("MANAGE ANY QUEUE", "NO")]
AQ_ADMIN_PACKAGES = ["DBMS_AQ", "DBMS_AQADM", "DBMS_AQELM", "DBMS_AQIN", "DBMS_AQJMS"]


def test_dba_sys_privs_and_dba_tab_privs_list_the_predefined_roles_privileges(admin):
    assert query_rows(admin, "SELECT PRIVILEGE, ADMIN_OPTION FROM DBA_SYS_PRIVS WHERE GRANTEE = 'AQ_ADMINISTRATOR_ROLE' "
                       "ORDER BY PRIVILEGE") == AQ_ADMIN_SYS
    assert query_rows(admin, "SELECT GRANTEE, PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE IN "
                       "('CONNECT', 'SELECT_CATALOG_ROLE') ORDER BY GRANTEE") == [
        ("CONNECT", "CREATE SESSION"), ("SELECT_CATALOG_ROLE", "MONITOR")]
    assert query_rows(admin, "SELECT OWNER, TABLE_NAME, GRANTOR, PRIVILEGE, GRANTABLE, HIERARCHY, TYPE FROM DBA_TAB_PRIVS "
                       "WHERE GRANTEE = 'AQ_ADMINISTRATOR_ROLE' ORDER BY TABLE_NAME") == [
        ("SYS", p, "SYS", "EXECUTE", "NO", "NO", "PACKAGE") for p in AQ_ADMIN_PACKAGES]
    assert query_rows(admin, "SELECT TABLE_NAME FROM DBA_TAB_PRIVS WHERE GRANTEE = 'AQ_USER_ROLE' ORDER BY 1") == [
        ("DBMS_AQ",), ("DBMS_AQIN",), ("DBMS_AQJMS",)]
    # listed, not stored
    store = admin.context.store
    assert [r for k in ("SYSPRIV", "EXECPRIV") for r in store.catalog_objects(k)] == []


def test_a_stored_grant_of_the_same_privilege_shows_once(admin):
    cur = admin.cursor()
    cur.execute("GRANT CREATE SESSION TO connect")
    cur.execute("GRANT EXECUTE ON DBMS_AQ TO aq_user_role")
    assert query_rows(admin, "SELECT PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE = 'CONNECT'") == [("CREATE SESSION",)]
    assert query_rows(admin, "SELECT TABLE_NAME, GRANTOR FROM DBA_TAB_PRIVS WHERE GRANTEE = 'AQ_USER_ROLE' ORDER BY 1") == [
        ("DBMS_AQ", "SLUICE"), ("DBMS_AQIN", "SYS"), ("DBMS_AQJMS", "SYS")]
    cur.execute("REVOKE EXECUTE ON DBMS_AQ FROM aq_user_role")     # the role still gives it
    assert query_rows(admin, "SELECT GRANTOR FROM DBA_TAB_PRIVS WHERE GRANTEE = 'AQ_USER_ROLE' "
                       "AND TABLE_NAME = 'DBMS_AQ'") == [("SYS",)]


def test_a_session_holding_a_predefined_role_sees_what_it_gives(admin, dsn):
    create_user(admin, "qadmin")
    admin.cursor().execute("CREATE ROLE ops")
    admin.cursor().execute("GRANT aq_administrator_role TO ops")      # through a role of one's own
    admin.cursor().execute("GRANT ops TO qadmin")
    with login(dsn, "qadmin") as qadmin:
        assert query_rows(qadmin, "SELECT PRIVILEGE, ADMIN_OPTION FROM ROLE_SYS_PRIVS WHERE ROLE = 'AQ_ADMINISTRATOR_ROLE' "
                            "ORDER BY PRIVILEGE") == AQ_ADMIN_SYS
        assert query_rows(qadmin, "SELECT OWNER, TABLE_NAME, PRIVILEGE FROM ROLE_TAB_PRIVS ORDER BY TABLE_NAME") == [
            ("SYS", p, "EXECUTE") for p in AQ_ADMIN_PACKAGES]
        # USER_SYS_PRIVS is the user's own grants only
        assert query_rows(qadmin, "SELECT PRIVILEGE FROM USER_SYS_PRIVS") == [("CREATE SESSION",)]


def test_an_older_store_lists_the_predefined_roles_privileges(dsn):
    """Schema 19's DBA_SYS_PRIVS / DBA_TAB_PRIVS listed catalog rows only: the upgrade to 20
    makes them again (SQLite keeps an old view: both are RESHAPED_VIEWS)."""
    import sluice
    from sluice.store.sqlschema import SCHEMA_VERSION
    from tests.streams.test_propagation import _raw

    sluice.connect(dsn).close()
    sys_columns = ", ".join(f"CAST(NULL AS TEXT) AS {c}" for c in ("GRANTEE", "PRIVILEGE", "ADMIN_OPTION"))
    tab_columns = ", ".join(f"CAST(NULL AS TEXT) AS {c}" for c in
                            ("GRANTEE", "OWNER", "TABLE_NAME", "GRANTOR", "PRIVILEGE", "GRANTABLE", "HIERARCHY", "TYPE"))
    cascade = "" if dsn.startswith("sqlite:") else " CASCADE"     # PostgreSQL's USER_ views read them
    _raw(dsn, [f"DROP VIEW DBA_SYS_PRIVS{cascade}", f"DROP VIEW DBA_TAB_PRIVS{cascade}",
               f"CREATE VIEW DBA_SYS_PRIVS AS SELECT {sys_columns} WHERE 1 = 0",
               f"CREATE VIEW DBA_TAB_PRIVS AS SELECT {tab_columns} WHERE 1 = 0",
               "UPDATE SLUICE_META SET VALUE = '19' WHERE KEY = 'schema_version'"])
    with sluice.connect(dsn) as conn:
        assert query_rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        assert query_rows(conn, "SELECT PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE = 'CONNECT'") == [("CREATE SESSION",)]
        assert query_rows(conn, "SELECT COUNT(*) FROM DBA_TAB_PRIVS WHERE GRANTEE = 'AQ_ADMINISTRATOR_ROLE'") == [
            (len(AQ_ADMIN_PACKAGES),)]
        assert query_rows(conn, "SELECT COUNT(*) FROM USER_TAB_PRIVS") == [(0,)]
