"""Queue privileges granted to PUBLIC (DBMS_AQADM.GRANT_QUEUE_PRIVILEGE / REVOKE_QUEUE_PRIVILEGE,
"grantee: the grantee(s); can be a user, a role, or the PUBLIC role").

Seed 003 "Queue-Level Access Control": the owner grants "minimal access privileges to
applications that run outside the queue schema"; a grant to PUBLIC is every user's — those
created after it too — until it is revoked.  DBA_TAB_PRIVS shows it (GRANTEE 'PUBLIC').
"""

from __future__ import annotations

import pytest

from sluice.errors import DatabaseError

from tests.sqlhelpers import query_rows

from .conftest import code_of, create_user, login


@pytest.fixture
def owner(admin, dsn):
    create_user(admin, "qowner", "EXECUTE ON DBMS_AQ", "EXECUTE ON DBMS_AQADM")
    create_user(admin, "clerk", "EXECUTE ON DBMS_AQ", "EXECUTE ON DBMS_AQADM")
    c = login(dsn, "qowner")
    c.aqadm.create_queue_table("qt", "RAW")
    c.aqadm.create_queue("q", "qt")
    c.aqadm.start_queue("q")
    yield c
    c.close()


def _enqueue(conn) -> None:
    conn.queue("qowner.q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()


def _dequeue(conn) -> None:
    import sluice
    q = conn.queue("qowner.q")
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    q.deqone()
    conn.rollback()


def _public_rows(admin) -> list[tuple]:
    return sorted(query_rows(admin, "SELECT GRANTEE, OWNER, TABLE_NAME, GRANTOR, PRIVILEGE, GRANTABLE, TYPE "
                              "FROM DBA_TAB_PRIVS WHERE GRANTEE = 'PUBLIC'"))


def test_a_queue_privilege_granted_to_public_is_every_users_until_revoked(admin, dsn, owner):
    clerk = login(dsn, "clerk")
    try:
        assert code_of(lambda: _enqueue(clerk)) == 1031
        owner.cursor().execute("BEGIN DBMS_AQADM.GRANT_QUEUE_PRIVILEGE(privilege => 'ENQUEUE', "
                               "queue_name => 'q', grantee => 'PUBLIC'); END;")
        _enqueue(clerk)
        assert code_of(lambda: _dequeue(clerk)) == 1031             # ENQUEUE only
        create_user(admin, "latecomer", "EXECUTE ON DBMS_AQ")       # created after the grant
        with login(dsn, "latecomer") as late:
            _enqueue(late)
        assert _public_rows(admin) == [("PUBLIC", "QOWNER", "Q", "QOWNER", "ENQUEUE", "NO", "QUEUE")]
        # a user's own grant is its own: revoking it leaves PUBLIC's
        owner.aqadm.grant_queue_privilege("ALL", "q", "clerk")
        owner.aqadm.revoke_queue_privilege("ALL", "q", "clerk")
        _enqueue(clerk)
        owner.cursor().execute("BEGIN DBMS_AQADM.REVOKE_QUEUE_PRIVILEGE(privilege => 'ENQUEUE', "
                               "queue_name => 'q', grantee => 'public'); END;")
        assert code_of(lambda: _enqueue(clerk)) == 1031
        assert _public_rows(admin) == []
        assert code_of(lambda: owner.aqadm.revoke_queue_privilege("ENQUEUE", "q", "PUBLIC")) == 1927
    finally:
        clerk.close()


def test_public_with_grant_option_lets_every_user_grant_it_on(admin, dsn, owner):
    create_user(admin, "third", "EXECUTE ON DBMS_AQ")
    clerk, third = login(dsn, "clerk"), login(dsn, "third")
    try:
        owner.aqadm.grant_queue_privilege("DEQUEUE", "q", "PUBLIC")
        assert code_of(lambda: clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third")) == 1031
        owner.aqadm.grant_queue_privilege("DEQUEUE", "q", "PUBLIC", grant_option=True)
        clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third")
        assert sorted(query_rows(admin, "SELECT GRANTEE, GRANTOR, PRIVILEGE, GRANTABLE FROM DBA_TAB_PRIVS "
                                  "WHERE TYPE = 'QUEUE'")) == [
            ("PUBLIC", "QOWNER", "DEQUEUE", "YES"), ("THIRD", "CLERK", "DEQUEUE", "NO")]
        # only the owner (or PUBLIC's grantor) takes PUBLIC's grant back
        assert code_of(lambda: clerk.aqadm.revoke_queue_privilege("DEQUEUE", "qowner.q", "PUBLIC")) == 1927
        owner.aqadm.revoke_queue_privilege("DEQUEUE", "q", "PUBLIC")
        _dequeue(third)                                              # its own grant stays
        assert code_of(lambda: _dequeue(clerk)) == 1031
    finally:
        clerk.close()
        third.close()


def test_a_bad_public_grant_changes_nothing(admin, dsn, owner):
    store = admin.context.store
    before = sorted(store.catalog_objects("QUEUEPRIV"))
    for grantee, code in (("PUBLICS", 1917), ("", None)):
        if code is None:
            with pytest.raises(DatabaseError):
                owner.aqadm.grant_queue_privilege("ENQUEUE", "q", grantee)
        else:
            assert code_of(lambda: owner.aqadm.grant_queue_privilege("ENQUEUE", "q", grantee)) == code
    assert code_of(lambda: owner.aqadm.grant_queue_privilege("BROWSE", "q", "PUBLIC")) == 990
    with login(dsn, "clerk") as clerk:          # neither owner nor grantee WITH GRANT OPTION
        assert code_of(lambda: clerk.aqadm.grant_queue_privilege("ENQUEUE", "qowner.q", "PUBLIC")) == 1031
    assert sorted(store.catalog_objects("QUEUEPRIV")) == before


def test_queue_privileges_shows_each_session_the_grants_it_made_received_or_owns(admin, dsn, owner):
    """QUEUE_PRIVILEGES: "queues for which the user is the grantor, or grantee, or owner, or
    an enabled role or the queue is granted to PUBLIC" (1 if granted, 0 if not)."""
    create_user(admin, "third")
    create_user(admin, "fourth")
    admin.cursor().execute("CREATE ROLE senders")
    admin.cursor().execute("GRANT senders TO third")
    owner.aqadm.grant_queue_privilege("ENQUEUE", "q", "PUBLIC")
    owner.aqadm.grant_queue_privilege("ALL", "q", "clerk", grant_option=True)
    owner.aqadm.grant_queue_privilege("ENQUEUE", "q", "senders")
    with login(dsn, "clerk") as clerk:
        clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third")
        cur = clerk.cursor()
        cur.execute("SELECT * FROM QUEUE_PRIVILEGES")
        assert [d[0] for d in cur.description] == ["GRANTEE", "OWNER", "NAME", "GRANTOR", "ENQUEUE_PRIVILEGE",
                                                   "DEQUEUE_PRIVILEGE"]
        assert sorted(cur.fetchall()) == [("CLERK", "QOWNER", "Q", "QOWNER", 1, 1),
                                          ("PUBLIC", "QOWNER", "Q", "QOWNER", 1, 0),
                                          ("THIRD", "QOWNER", "Q", "CLERK", 0, 1)]
    seen = {}
    for user in ("qowner", "third", "fourth"):
        with login(dsn, user) as c:
            seen[user] = sorted(r[0] for r in query_rows(c, "SELECT GRANTEE FROM QUEUE_PRIVILEGES"))
    assert seen == {"qowner": ["CLERK", "PUBLIC", "SENDERS", "THIRD"],      # the queue's owner
                    "third": ["PUBLIC", "SENDERS", "THIRD"],                # itself, its role, PUBLIC
                    "fourth": ["PUBLIC"]}
