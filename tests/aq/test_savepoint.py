"""The connection's savepoint (``sluice.connection.savepoint`` / ``rollback_to_savepoint``),
with which the IDAP servlet gives back what a receive whose client has gone had taken:
the work since the mark is undone, the work before stays, the messages given back are
as they were (no attempt counted) and come next again."""

import pytest

import sluice
from sluice.connection import rollback_to_savepoint, savepoint
from tests.conftest import make_queue, nowait


def _three(conn):
    make_queue(conn)
    q = conn.queue("Q")
    for p in (b"m1", b"m2", b"m3"):
        q.enqone(conn.msgproperties(payload=p))
    conn.commit()


def _payloads(conn, n=10):
    q = nowait(conn.queue("Q"))
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    return [m.payload for m in q.deqmany(n)]


def test_a_dequeue_since_the_mark_is_given_back_the_earlier_one_kept(conn, conn2):
    _three(conn)
    q2 = nowait(conn2.queue("Q"))
    assert q2.deqone().payload == b"m1"
    mark = savepoint(conn2)
    assert q2.deqone().payload == b"m2"
    rollback_to_savepoint(conn2, mark)
    assert conn2.transaction_in_progress          # m1 is still held
    other = nowait(conn.queue("Q")).deqone()      # m1 is not free, m2 is, as it was
    assert (other.payload, other.attempts) == (b"m2", 0)
    conn.rollback()
    assert q2.deqone().payload == b"m2"           # the position went back too (NEXT_MESSAGE)
    conn2.commit()
    assert _payloads(conn) == [b"m3"]


def test_a_mark_outside_a_transaction_ends_the_one_begun_since(conn, conn2):
    _three(conn)
    mark = savepoint(conn2)
    got = nowait(conn2.queue("Q")).deqmany(2)
    assert [m.payload for m in got] == [b"m1", b"m2"]
    rollback_to_savepoint(conn2, mark)
    assert not conn2.transaction_in_progress
    assert _payloads(conn) == [b"m1", b"m2", b"m3"]


@pytest.mark.parametrize("mode", [sluice.DEQ_LOCKED, sluice.DEQ_REMOVE_NODATA, sluice.DEQ_BROWSE])
def test_other_dequeue_modes(conn, conn2, mode):
    _three(conn)
    q2 = nowait(conn2.queue("Q"), mode=sluice.DEQ_LOCKED)
    assert q2.deqone().payload == b"m1"
    mark = savepoint(conn2)
    q2.deqoptions.mode = mode
    q2.deqone()
    rollback_to_savepoint(conn2, mark)
    q2.deqoptions.mode = sluice.DEQ_REMOVE
    assert q2.deqone().payload == b"m2"           # nothing moved past m2
    conn2.rollback()


def test_a_message_locked_before_and_taken_again_since_stays_locked(conn, conn2):
    _three(conn)
    q2 = nowait(conn2.queue("Q"), mode=sluice.DEQ_LOCKED)
    first = q2.deqone()
    mark = savepoint(conn2)
    q2.deqoptions.mode = sluice.DEQ_REMOVE
    q2.deqoptions.msgid = first.msgid
    assert q2.deqone().payload == b"m1"
    rollback_to_savepoint(conn2, mark)
    assert nowait(conn.queue("Q")).deqone().payload == b"m2"   # m1: still conn2's lock
    conn.rollback()
    conn2.rollback()


def test_enqueues_since_the_mark_are_discarded(conn, conn2):
    make_queue(conn)
    q2 = conn2.queue("Q")
    q2.enqone(conn2.msgproperties(payload=b"before"))
    mark = savepoint(conn2)
    q2.enqone(conn2.msgproperties(payload=b"since"))
    rollback_to_savepoint(conn2, mark)
    conn2.commit()
    assert _payloads(conn) == [b"before"]


def test_an_own_uncommitted_message_dequeued_since_comes_back(conn, conn2):
    make_queue(conn)
    q2 = conn2.queue("Q")
    q2.enqone(conn2.msgproperties(payload=b"mine"))
    mark = savepoint(conn2)
    assert nowait(q2).deqone().payload == b"mine"
    rollback_to_savepoint(conn2, mark)
    conn2.commit()
    assert _payloads(conn) == [b"mine"]


def test_a_group_taken_since_the_mark_is_free_again(conn, conn2):
    make_queue(conn)
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"q"))
    conn.queue("G").enqmany([conn.msgproperties(payload=p) for p in (b"g1", b"g2")])
    conn.commit()
    assert nowait(conn2.queue("Q")).deqone().payload == b"q"      # the transaction is open
    mark = savepoint(conn2)
    assert nowait(conn2.queue("G")).deqone().payload == b"g1"     # the group is conn2's
    rollback_to_savepoint(conn2, mark)
    assert nowait(conn.queue("G")).deqone().payload == b"g1"      # not any more
    conn.rollback()
    conn2.rollback()


def test_a_mark_is_gone_with_its_transaction(conn, conn2):
    _three(conn)
    q2 = nowait(conn2.queue("Q"))
    q2.deqone()
    mark = savepoint(conn2)
    conn2.commit()
    with pytest.raises(sluice.DatabaseError) as e:
        rollback_to_savepoint(conn2, mark)
    assert e.value.code == 1086


def test_commit_work_added_since_the_mark_is_discarded(conn):
    """``StoreSession.add_commit_work`` (a capture's position) is part of the transaction:
    the work added after the mark goes with the rollback to it, the work before runs at
    commit, with the enqueue before the mark."""
    make_queue(conn)
    ran = []
    session = conn.context.session
    conn.queue("Q").enqone(conn.msgproperties(payload=b"m1"))
    session.add_commit_work(lambda c: ran.append("before"))
    mark = savepoint(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"m2"))
    session.add_commit_work(lambda c: ran.append("after"))
    rollback_to_savepoint(conn, mark)
    assert conn.transaction_in_progress
    conn.commit()
    assert ran == ["before"]
    assert _payloads(conn) == [b"m1"]
