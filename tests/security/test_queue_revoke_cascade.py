"""DBMS_AQADM.REVOKE_QUEUE_PRIVILEGE takes back what the revokee granted on from the privilege
WITH GRANT OPTION, and what those grantees granted on, and so on: Oracle's revoke of an object
privilege cascades (SQL Language Reference, REVOKE: "If you revoke an object privilege from a
user who has granted the privilege to other users or roles, then Oracle Database also revokes
the privilege from the grantees").  A grant someone else made stays; the privilege the revoke
does not name stays.
"""

from __future__ import annotations

import pytest

import sluice

from tests.sqlhelpers import query_rows

from .conftest import code_of, create_user, login


@pytest.fixture
def owner(admin, dsn):
    for user in ("qowner", "clerk", "third", "fourth", "fifth"):
        create_user(admin, user, "EXECUTE ON DBMS_AQ", "EXECUTE ON DBMS_AQADM")
    c = login(dsn, "qowner")
    c.aqadm.create_queue_table("qt", "RAW")
    c.aqadm.create_queue("q", "qt")
    c.aqadm.start_queue("q")
    c.queue("q").enqone(c.msgproperties(payload=b"x"))
    c.commit()
    yield c
    c.close()


def _dequeues(dsn, user: str) -> bool:
    with login(dsn, user) as conn:
        q = conn.queue("qowner.q")
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        try:
            q.deqone()
        except sluice.DatabaseError as e:
            assert e.code == 1031
            return False
        finally:
            conn.rollback()
        return True


def _grants(admin) -> list[tuple]:
    return sorted(query_rows(admin, "SELECT GRANTEE, GRANTOR, PRIVILEGE, GRANTABLE FROM DBA_TAB_PRIVS "
                              "WHERE TYPE = 'QUEUE'"))


def test_revoking_a_queue_privilege_takes_the_grants_made_from_it(admin, dsn, owner):
    owner.aqadm.grant_queue_privilege("ALL", "q", "clerk", grant_option=True)
    owner.aqadm.grant_queue_privilege("DEQUEUE", "q", "fifth")          # the owner's own grant
    with login(dsn, "clerk") as clerk:
        clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third", grant_option=True)
        clerk.aqadm.grant_queue_privilege("ENQUEUE", "qowner.q", "fourth")
        clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "PUBLIC")
    with login(dsn, "third") as third:
        third.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "fourth")
    assert _dequeues(dsn, "fourth")
    owner.aqadm.revoke_queue_privilege("DEQUEUE", "q", "clerk")
    # CLERK's DEQUEUE and every grant descending from it go (THIRD's, FOURTH's through THIRD,
    # PUBLIC's); its ENQUEUE and the grant it made of that stay, and so does FIFTH's
    assert _grants(admin) == [("CLERK", "QOWNER", "ENQUEUE", "YES"), ("FIFTH", "QOWNER", "DEQUEUE", "NO"),
                              ("FOURTH", "CLERK", "ENQUEUE", "NO")]
    assert [_dequeues(dsn, u) for u in ("clerk", "third", "fourth", "fifth")] == [False, False, False, True]
    with login(dsn, "clerk") as clerk:                      # no grant option on DEQUEUE left
        assert code_of(lambda: clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third")) == 1031


def test_a_circle_of_grants_ends_and_a_refused_revoke_changes_nothing(admin, dsn, owner):
    owner.aqadm.grant_queue_privilege("DEQUEUE", "q", "clerk", grant_option=True)
    with login(dsn, "clerk") as clerk:
        clerk.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "third", grant_option=True)
    with login(dsn, "third") as third:    # granted back: CLERK's grant now names THIRD its grantor
        third.aqadm.grant_queue_privilege("DEQUEUE", "qowner.q", "clerk", grant_option=True)
    before = _grants(admin)
    with login(dsn, "fourth") as fourth:  # neither the owner nor the grantor
        assert code_of(lambda: fourth.aqadm.revoke_queue_privilege("DEQUEUE", "qowner.q", "third")) == 1927
    assert _grants(admin) == before
    owner.aqadm.revoke_queue_privilege("DEQUEUE", "q", "third")
    assert _grants(admin) == []
    assert not _dequeues(dsn, "clerk")
