"""Roles of one's own: ``CREATE ROLE`` / ``DROP ROLE``, ``GRANT … TO role``, ``GRANT role TO
user`` and their REVOKEs (Oracle SQL Language Reference, CREATE ROLE / GRANT).

A user holds what was granted to it, to its roles, to theirs and so on: a role granted (or
a privilege granted to a role it holds) counts from the next call; revoked, or the role
dropped, it no longer does.  An object privilege is not granted to a role WITH GRANT OPTION
(ORA-01926); a role is not granted to itself, even through others (ORA-01934).  DBA_ROLES
lists the roles (the predefined ones too), DBA_ROLE_PRIVS / USER_ROLE_PRIVS who holds which,
DBA_SYS_PRIVS / DBA_TAB_PRIVS what was granted to a role.
"""

from __future__ import annotations

from tests.sqlhelpers import query_rows

from .conftest import code_of, create_user, login


def test_a_role_gives_its_holders_what_was_granted_to_it(admin, dsn):
    cur = admin.cursor()
    create_user(admin, "aqadm")
    create_user(admin, "clerk")
    cur.execute("CREATE ROLE queue_admins")
    cur.execute("GRANT EXECUTE ON DBMS_AQADM, MANAGE ANY QUEUE TO queue_admins")
    clerk = login(dsn, "clerk")
    try:
        def create_queue_table():
            clerk.aqadm.create_queue_table("aqadm.qt", "RAW")
        assert code_of(create_queue_table) == 1031
        cur.execute("GRANT queue_admins TO clerk")
        create_queue_table()                                     # MANAGE ANY QUEUE through the role
        cur.execute("REVOKE queue_admins FROM clerk")
        assert code_of(lambda: clerk.aqadm.create_queue_table("aqadm.qt2", "RAW")) == 1031
        # a role within a role, and a privilege taken from the role
        cur.execute("CREATE ROLE staff")
        cur.execute("GRANT queue_admins TO staff")
        cur.execute("GRANT staff TO clerk")
        clerk.aqadm.create_queue_table("aqadm.qt2", "RAW")
        cur.execute("REVOKE MANAGE ANY QUEUE FROM queue_admins")
        assert code_of(lambda: clerk.aqadm.create_queue_table("aqadm.qt3", "RAW")) == 1031
        assert query_rows(admin, "SELECT GRANTEE, PRIVILEGE FROM DBA_TAB_PRIVS WHERE GRANTEE = 'QUEUE_ADMINS'") == [
            ("QUEUE_ADMINS", "EXECUTE")]
        assert sorted(query_rows(admin, "SELECT GRANTEE, GRANTED_ROLE, ADMIN_OPTION FROM DBA_ROLE_PRIVS "
                                  "WHERE GRANTED_ROLE IN ('STAFF', 'QUEUE_ADMINS')")) == [
            ("CLERK", "STAFF", "NO"), ("SLUICE", "QUEUE_ADMINS", "YES"), ("SLUICE", "STAFF", "YES"),   # the creator
            ("STAFF", "QUEUE_ADMINS", "NO")]
        assert query_rows(clerk, "SELECT USERNAME, GRANTED_ROLE FROM USER_ROLE_PRIVS") == [("CLERK", "STAFF")]
        # dropping a role takes its grants, and it from its holders
        cur.execute("GRANT MANAGE ANY QUEUE TO queue_admins")
        clerk.aqadm.create_queue_table("aqadm.qt3", "RAW")
        cur.execute("DROP ROLE queue_admins")
        assert code_of(lambda: clerk.aqadm.create_queue_table("aqadm.qt4", "RAW")) == 1031
        assert query_rows(admin, "SELECT GRANTEE, GRANTED_ROLE FROM DBA_ROLE_PRIVS WHERE GRANTED_ROLE = 'QUEUE_ADMINS' "
                           "OR GRANTEE = 'QUEUE_ADMINS'") == []
        assert query_rows(admin, "SELECT COUNT(*) FROM DBA_SYS_PRIVS WHERE GRANTEE = 'QUEUE_ADMINS'") == [(0,)]
    finally:
        clerk.close()


def test_dba_roles_lists_the_predefined_roles_and_ones_own(admin):
    admin.cursor().execute("CREATE ROLE rule_admins NOT IDENTIFIED")
    assert query_rows(admin, "SELECT ROLE, PASSWORD_REQUIRED, AUTHENTICATION_TYPE FROM DBA_ROLES ORDER BY ROLE") == [
        ("AQ_ADMINISTRATOR_ROLE", "NO", "NONE"), ("AQ_USER_ROLE", "NO", "NONE"), ("CONNECT", "NO", "NONE"),
        ("DBA", "NO", "NONE"), ("RESOURCE", "NO", "NONE"), ("RULE_ADMINS", "NO", "NONE"),
        ("SELECT_CATALOG_ROLE", "NO", "NONE")]


def test_bad_role_statements_are_refused_and_change_nothing(admin, dsn):
    cur = admin.cursor()
    create_user(admin, "hr")
    cur.execute("CREATE ROLE r1")
    cur.execute("CREATE ROLE r2")
    cur.execute("GRANT r1 TO r2")
    admin.aqadm.create_queue_table("hr.qt", "RAW")
    admin.aqadm.create_queue("hr.q", "hr.qt")
    store = admin.context.store
    before = [sorted(store.catalog_objects(k)) for k in ("ROLEDEF", "ROLE", "SYSPRIV", "TABPRIV", "USER",
                                                         "QUEUEPRIV")]
    hr = login(dsn, "hr")
    try:
        for statement, code in (("CREATE ROLE hr", 1921),              # a user's name
                                ("CREATE ROLE r1", 1921),
                                ("CREATE ROLE connect", 1921),         # a predefined role's
                                ("CREATE USER r1 IDENTIFIED BY \"Pw-x-1\"", 1920),
                                ("DROP ROLE nosuch", 1919),
                                ("DROP ROLE dba", 1031),
                                ("GRANT r2 TO r1", 1934),              # r1 is in r2 already
                                ("GRANT r1 TO r1", 1934),
                                ("REVOKE r1 FROM hr", 1951),
                                ("GRANT SELECT ON hr.employees TO r1 WITH GRANT OPTION", 1926),
                                ("GRANT nosuch TO hr", 1919),          # no privilege: a role's name
                                ("GRANT r1, R1 TO hr", 1711),          # one privilege twice
                                ("GRANT ENQUEUE ANY QUEUE, r1 TO hr, HR", 1700),   # one grantee twice
                                ("REVOKE r1 FROM r2, r2", 1700)):      # (it was revoked, then not found)
            assert code_of(lambda: cur.execute(statement)) == code, statement
        assert code_of(lambda: hr.cursor().execute("CREATE ROLE mine")) == 1031       # a superuser's
        assert code_of(lambda: hr.cursor().execute("GRANT r1 TO hr")) == 1932        # no ADMIN OPTION
        assert code_of(lambda: hr.cursor().execute("REVOKE r1 FROM r2")) == 1932
        assert code_of(lambda: hr.cursor().execute("DROP ROLE r1")) == 1031
        assert code_of(lambda: admin.aqadm.grant_queue_privilege("ENQUEUE", "hr.q", "r1", True)) == 1926
        assert [sorted(store.catalog_objects(k)) for k in ("ROLEDEF", "ROLE", "SYSPRIV", "TABPRIV", "USER",
                                                           "QUEUEPRIV")] == before
    finally:
        hr.close()


def test_an_older_store_gains_the_role_views_and_shows_table_grants(dsn):
    """Schema 17 had no DBA_ROLES / DBA_ROLE_PRIVS / *_EVALUATION_CONTEXT_TABLES and its
    DBA_TAB_PRIVS no table rows;
    the upgrade to 18 makes them (SQLite keeps an old view: DBA_TAB_PRIVS is a reshaped one)."""
    import sluice
    from sluice.store.sqlschema import SCHEMA_VERSION
    from tests.streams.test_propagation import _raw

    conn = sluice.connect(dsn)
    create_user(conn, "hr")
    conn.cursor().execute("CREATE ROLE readers")
    conn.cursor().execute("GRANT SELECT ON hr.employees TO readers")
    conn.close()
    columns = ", ".join(f"CAST(NULL AS TEXT) AS {c}" for c in
                        ("GRANTEE", "OWNER", "TABLE_NAME", "GRANTOR", "PRIVILEGE", "GRANTABLE", "HIERARCHY", "TYPE"))
    old = [f"CREATE VIEW DBA_TAB_PRIVS AS SELECT {columns} WHERE 1 = 0"]   # showing nothing of TABPRIV
    drop = ["DROP VIEW DBA_ROLE_PRIVS", "DROP VIEW DBA_ROLES", "DROP VIEW ALL_EVALUATION_CONTEXT_TABLES",
            "DROP VIEW DBA_EVALUATION_CONTEXT_TABLES"]
    if dsn.startswith("sqlite:"):
        _raw(dsn, [*drop, "DROP VIEW DBA_TAB_PRIVS", *old])
    else:       # USER_ views read DBA_ ones (SQLite makes them per connection)
        _raw(dsn, ["DROP VIEW ROLE_ROLE_PRIVS", "DROP VIEW ROLE_TAB_PRIVS", "DROP VIEW ROLE_SYS_PRIVS",  # schema 19's
                   "DROP VIEW QUEUE_PRIVILEGES", "DROP VIEW ALL_TAB_PRIVS", "DROP VIEW SESSION_ROLES",  # and 20's
                   "DROP VIEW USER_ROLE_PRIVS", "DROP VIEW USER_TAB_PRIVS", "DROP VIEW USER_EVALUATION_CONTEXT_TABLES",
                   *drop, "DROP VIEW DBA_TAB_PRIVS", *old])
    _raw(dsn, ["UPDATE SLUICE_META SET VALUE = '17' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert query_rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        assert query_rows(conn, "SELECT GRANTEE, TABLE_NAME, TYPE FROM DBA_TAB_PRIVS WHERE TYPE = 'TABLE'") == [
            ("READERS", "EMPLOYEES", "TABLE")]
        assert query_rows(conn, "SELECT ROLE FROM DBA_ROLES WHERE ROLE = 'READERS'") == [("READERS",)]
        assert query_rows(conn, "SELECT COUNT(*) FROM ALL_EVALUATION_CONTEXT_TABLES") == [(0,)]
        conn.cursor().execute("GRANT readers TO hr")
        assert query_rows(conn, "SELECT GRANTEE, GRANTED_ROLE FROM DBA_ROLE_PRIVS WHERE GRANTEE = 'HR'") == [("HR", "READERS")]
    finally:
        conn.close()


def test_a_queue_privilege_granted_to_a_role_counts_and_stays_the_roles(admin, dsn):
    """DBMS_AQADM.GRANT_QUEUE_PRIVILEGE: "grantee: the user, role or PUBLIC".  A privilege
    the user then gets itself is its own row: revoking it leaves the role's."""
    create_user(admin, "hr", "EXECUTE ON DBMS_AQ")
    admin.aqadm.create_queue_table("sluice.qt", "RAW")
    admin.aqadm.create_queue("sluice.q", "sluice.qt")
    admin.aqadm.start_queue("sluice.q")
    cur = admin.cursor()
    cur.execute("CREATE ROLE senders")
    cur.execute("GRANT senders TO hr")
    hr = login(dsn, "hr")
    try:
        def enqueue():
            hr.queue("sluice.q").enqone(hr.msgproperties(payload=b"x"))
            hr.commit()
        assert code_of(enqueue) == 1031
        admin.aqadm.grant_queue_privilege("ENQUEUE", "sluice.q", "senders")
        enqueue()
        admin.aqadm.grant_queue_privilege("ENQUEUE", "sluice.q", "hr")
        assert sorted(query_rows(admin, "SELECT GRANTEE, PRIVILEGE FROM DBA_TAB_PRIVS WHERE TYPE = 'QUEUE'")) == [
            ("HR", "ENQUEUE"), ("SENDERS", "ENQUEUE")]
        admin.aqadm.revoke_queue_privilege("ENQUEUE", "sluice.q", "hr")
        enqueue()                                                  # the role's grant is still there
        admin.aqadm.revoke_queue_privilege("ENQUEUE", "sluice.q", "senders")
        assert code_of(enqueue) == 1031
        assert code_of(lambda: admin.aqadm.revoke_queue_privilege("ENQUEUE", "sluice.q", "hr")) == 1927
    finally:
        hr.close()


def test_a_holder_with_admin_option_grants_in_sql_as_through_the_packages(admin, dsn):
    """A system privilege or a role held WITH ADMIN OPTION may be granted and revoked by its
    holder (SQL Language Reference, GRANT: "you must have been granted the system privilege
    with the ADMIN OPTION … the role with the ADMIN OPTION"), in SQL as through
    DBMS_AQADM.GRANT_SYSTEM_PRIVILEGE, which always let it, and EXECUTE on a routine by its
    owner; SQL refused everything but a table to anyone but a superuser (ORA-01031).
    Without the option: ORA-01031 (ORA-01932 for a role), nothing changes."""
    cur = admin.cursor()
    create_user(admin, "lead")
    create_user(admin, "member")
    cur.execute("CREATE ROLE queue_users")
    cur.execute("GRANT ENQUEUE ANY QUEUE, queue_users TO lead WITH ADMIN OPTION")
    cur.execute("GRANT DEQUEUE ANY QUEUE TO lead")
    lead = login(dsn, "lead")
    try:
        lead.aqadm.grant_system_privilege("ENQUEUE_ANY", "member")        # the package: as before
        lead.aqadm.revoke_system_privilege("ENQUEUE_ANY", "member")
        lcur = lead.cursor()
        lcur.execute("GRANT ENQUEUE ANY QUEUE TO member")
        lcur.execute("GRANT queue_users TO member")
        lcur.execute("GRANT EXECUTE ON on_message TO member")         # its own routine, LEAD.ON_MESSAGE
        held = ("SELECT 'SYS', privilege FROM DBA_SYS_PRIVS WHERE grantee = 'MEMBER' AND privilege <> 'CREATE SESSION' "
                "UNION ALL SELECT 'ROLE', granted_role FROM DBA_ROLE_PRIVS WHERE grantee = 'MEMBER' "
                "UNION ALL SELECT owner, table_name FROM DBA_TAB_PRIVS WHERE grantee = 'MEMBER' ORDER BY 1")
        mine = [("LEAD", "ON_MESSAGE"), ("ROLE", "QUEUE_USERS"), ("SYS", "ENQUEUE ANY QUEUE")]
        assert query_rows(admin, held) == mine
        for refused, code in (("GRANT DEQUEUE ANY QUEUE TO member", 1031), ("GRANT MANAGE ANY QUEUE TO member", 1031),
                              ("GRANT EXECUTE ON DBMS_AQ TO member", 1031), ("GRANT connect TO member", 1932),
                              ("GRANT EXECUTE ON member.on_message TO member", 1031)):
            assert code_of(lambda: lcur.execute(refused)) == code, refused
        assert query_rows(admin, held) == mine
        lcur.execute("REVOKE ENQUEUE ANY QUEUE, queue_users, EXECUTE ON on_message FROM member")
        assert query_rows(admin, held) == []
    finally:
        lead.close()


def test_granting_a_role_that_does_not_exist(admin):
    """A name that is no privilege names a role: one that does not exist is ORA-01919 (it
    was ORA-00990, missing or invalid privilege), for an unquoted name given in another
    case than a quoted role's too."""
    create_user(admin, "clerk")
    cur = admin.cursor()
    cur.execute('CREATE ROLE "MixedCase"')
    assert code_of(lambda: cur.execute("GRANT no_such_role TO clerk")) == 1919
    assert code_of(lambda: cur.execute("GRANT MixedCase TO clerk")) == 1919
    assert code_of(lambda: cur.execute("REVOKE no_such_role FROM clerk")) == 1919
    cur.execute('GRANT "MixedCase" TO clerk')
    assert query_rows(admin, "SELECT granted_role FROM DBA_ROLE_PRIVS WHERE grantee = 'CLERK'") == [("MixedCase",)]


def test_a_name_that_spells_an_object_word(admin):
    """The word after ROLE or USER is the name, whatever it spells: CREATE ROLE public is
    ORA-01921 (PUBLIC is every user), a user may be called SESSION or LINK, DROP USER system
    is ORA-01918 when there is none.  The statement's kind swallowed such a word ('CREATE
    ROLE PUBLIC'), and all of these were ORA-00900, invalid SQL statement."""
    cur = admin.cursor()
    assert code_of(lambda: cur.execute("CREATE ROLE public")) == 1921
    assert code_of(lambda: cur.execute("DROP USER system")) == 1918
    assert code_of(lambda: cur.execute("DROP ROLE profile")) == 1919
    cur.execute('CREATE USER session IDENTIFIED BY "Pw-for-tests-1"')
    cur.execute("CREATE ROLE link")
    cur.execute("GRANT link TO session")
    assert query_rows(admin, "SELECT grantee, granted_role FROM DBA_ROLE_PRIVS WHERE grantee = 'SESSION'") == [
        ("SESSION", "LINK")]
    cur.execute("DROP ROLE link")
    cur.execute("DROP USER session")
    assert query_rows(admin, "SELECT COUNT(*) FROM DBA_USERS WHERE username = 'SESSION'") == [(0,)]
