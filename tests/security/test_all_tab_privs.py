"""ALL_TAB_PRIVS (Oracle Database Reference): "object grants for which the current user is the
object owner, grantor, or grantee" and "object grants for which an enabled role or PUBLIC is
the grantee" — every role a session holds is enabled in Sluice.  Oracle's columns GRANTOR,
GRANTEE, TABLE_SCHEMA, TABLE_NAME, PRIVILEGE, GRANTABLE, HIERARCHY, COMMON, TYPE, INHERITED
(COMMON / INHERITED 'NO': no containers).
"""

from __future__ import annotations

from tests.sqlhelpers import query_rows

from .conftest import create_user, login

COLUMNS = ["GRANTOR", "GRANTEE", "TABLE_SCHEMA", "TABLE_NAME", "PRIVILEGE", "GRANTABLE", "HIERARCHY", "COMMON",
           "TYPE", "INHERITED"]


def _world(admin, dsn) -> None:
    """QOWNER's queue Q: DEQUEUE to CLERK WITH GRANT OPTION, which CLERK grants THIRD; ENQUEUE to
    PUBLIC and to the role SENDERS (held by THIRD); HR's table EMPLOYEES: SELECT to FOURTH only."""
    for user in ("qowner", "clerk", "third", "fourth"):
        create_user(admin, user, "EXECUTE ON DBMS_AQ", "EXECUTE ON DBMS_AQADM")
    cur = admin.cursor()
    cur.execute("CREATE ROLE senders")
    cur.execute("GRANT senders TO third")
    cur.execute("GRANT SELECT ON hr.employees TO fourth")
    with login(dsn, "qowner") as owner:
        owner.aqadm.create_queue_table("qt", "RAW")
        owner.aqadm.create_queue("q", "qt")
        owner.aqadm.grant_queue_privilege("DEQUEUE", "q", "clerk", grant_option=True)
        owner.aqadm.grant_queue_privilege("ENQUEUE", "q", "PUBLIC")
        owner.aqadm.grant_queue_privilege("ENQUEUE", "q", "senders")
    with login(dsn, "clerk") as clerk:
        clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third")


def _seen(dsn, user: str, where: str = "TYPE <> 'PACKAGE'") -> list[tuple]:
    """What ``user`` sees (by default not the EXECUTE on DBMS_AQ … each user here was granted)."""
    with login(dsn, user) as conn:
        return sorted(query_rows(conn, "SELECT GRANTOR, GRANTEE, TABLE_SCHEMA, TABLE_NAME, PRIVILEGE FROM ALL_TAB_PRIVS "
                                 f"WHERE {where}"))


def test_all_tab_privs_shows_the_grants_the_user_owns_made_or_received(admin, dsn):
    _world(admin, dsn)
    public = ("QOWNER", "PUBLIC", "QOWNER", "Q", "ENQUEUE")
    with login(dsn, "clerk") as clerk:
        cur = clerk.cursor()
        cur.execute("SELECT * FROM ALL_TAB_PRIVS WHERE TYPE = 'QUEUE' ORDER BY GRANTEE")
        assert [d[0] for d in cur.description] == COLUMNS
        assert cur.fetchall() == [
            ("QOWNER", "CLERK", "QOWNER", "Q", "DEQUEUE", "YES", "NO", "NO", "QUEUE", "NO"),    # received
            ("QOWNER", "PUBLIC", "QOWNER", "Q", "ENQUEUE", "NO", "NO", "NO", "QUEUE", "NO"),    # PUBLIC's
            ("CLERK", "THIRD", "QOWNER", "Q", "DEQUEUE", "NO", "NO", "NO", "QUEUE", "NO")]      # made
    assert _seen(dsn, "qowner") == sorted([                     # the owner sees every grant on Q
        ("QOWNER", "CLERK", "QOWNER", "Q", "DEQUEUE"), public, ("QOWNER", "SENDERS", "QOWNER", "Q", "ENQUEUE"),
        ("CLERK", "THIRD", "QOWNER", "Q", "DEQUEUE")])
    assert _seen(dsn, "third") == sorted([                      # itself, its role, PUBLIC
        ("CLERK", "THIRD", "QOWNER", "Q", "DEQUEUE"), public, ("QOWNER", "SENDERS", "QOWNER", "Q", "ENQUEUE")])
    assert _seen(dsn, "fourth") == sorted([("SLUICE", "FOURTH", "HR", "EMPLOYEES", "SELECT"), public])
    assert _seen(dsn, "fourth", "TYPE = 'PACKAGE'") == [
        ("SLUICE", "FOURTH", "SYS", p, "EXECUTE") for p in ("DBMS_AQ", "DBMS_AQADM")]


def test_a_predefined_role_held_shows_what_it_gives(admin, dsn):
    _world(admin, dsn)
    admin.cursor().execute("GRANT aq_user_role TO fourth")
    assert _seen(dsn, "fourth", "GRANTEE = 'AQ_USER_ROLE'") == [
        ("SYS", "AQ_USER_ROLE", "SYS", p, "EXECUTE") for p in ("DBMS_AQ", "DBMS_AQIN", "DBMS_AQJMS")]
    assert _seen(dsn, "third", "GRANTEE = 'AQ_USER_ROLE'") == []
