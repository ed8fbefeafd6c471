"""Seed 003 "Dequeue Features": modes, methods, navigation, ordering."""

import time

import pytest

import sluice
from tests.conftest import make_queue, nowait, table_rows


def _fill(conn, q, payloads, **props):
    for p in payloads:
        q.enqone(conn.msgproperties(payload=p, **props))
    conn.commit()


def test_browse_leaves_messages_and_walks_with_next_message(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"a", b"b", b"c"])
    nowait(q, mode=sluice.DEQ_BROWSE)
    seen = [q.deqone().payload for _ in range(3)]
    assert seen == [b"a", b"b", b"c"]
    assert q.deqone() is None                      # end of queue (NO_WAIT)
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().payload == b"a"              # FIRST_MESSAGE resets the position
    assert len(table_rows(conn, "Q_QT")) == 3


def test_remove_nodata_returns_properties_without_payload(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"secret"], correlation="C1")
    m = nowait(q, mode=sluice.DEQ_REMOVE_NODATA).deqone()
    # python-oracledb (Thin) hands back an empty RAW (an object queue: an object of nulls)
    assert m.payload == b"" and m.correlation == "C1" and m.msgid
    conn.commit()
    assert table_rows(conn, "Q_QT") == []


def test_dequeue_by_msgid(conn):
    make_queue(conn)
    q = conn.queue("Q")
    msgs = [conn.msgproperties(payload=p) for p in (b"1", b"2", b"3")]
    q.enqmany(msgs)
    conn.commit()
    nowait(q).deqoptions.msgid = msgs[1].msgid
    assert q.deqone().payload == b"2"


def test_dequeue_by_unknown_msgid_raises_25263(conn):
    make_queue(conn)
    q = nowait(conn.queue("Q"))
    _fill(conn, q, [b"1"])
    q.deqoptions.msgid = b"\x00" * 16
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert e.value.full_code == "ORA-25263"
    assert len(table_rows(conn, "Q_QT")) == 1


def test_dequeue_by_correlation_with_like_patterns(conn):
    make_queue(conn)
    q = conn.queue("Q")
    for corr in ("ORDER-1", "ORDER-22", "INVOICE-1", "order-3"):
        q.enqone(conn.msgproperties(payload=corr.encode(), correlation=corr))
    conn.commit()
    nowait(q, navigation=sluice.DEQ_FIRST_MSG)
    q.deqoptions.correlation = "ORDER-_"
    assert [m.payload for m in q.deqmany(10)] == [b"ORDER-1"]
    q.deqoptions.correlation = "ORDER%"
    assert [m.payload for m in q.deqmany(10)] == [b"ORDER-22"]   # case-sensitive, like Oracle
    q.deqoptions.correlation = "%-1"
    assert [m.payload for m in q.deqmany(10)] == [b"INVOICE-1"]


def test_changing_correlation_under_next_message_raises_25241(conn):
    make_queue(conn)
    q = conn.queue("Q")
    for corr in ("A", "A", "B"):
        q.enqone(conn.msgproperties(payload=b"x", correlation=corr))
    conn.commit()
    nowait(q, mode=sluice.DEQ_BROWSE)
    q.deqoptions.correlation = "A"
    assert q.deqone().correlation == "A"
    q.deqoptions.correlation = "B"
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert e.value.full_code == "ORA-25241"
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().correlation == "B"


def test_priority_reorders_only_with_a_priority_sort_list(conn):
    make_queue(conn, "FIFO")
    make_queue(conn, "PRIO", sort_list="PRIORITY,ENQ_TIME")
    for name in ("FIFO", "PRIO"):
        q = conn.queue(name)
        for p in (5, 1, 9, 1):
            q.enqone(conn.msgproperties(payload=str(p).encode(), priority=p))
    conn.commit()
    fifo = [int(m.payload) for m in nowait(conn.queue("FIFO")).deqmany(10)]
    prio = [int(m.payload) for m in nowait(conn.queue("PRIO")).deqmany(10)]
    assert fifo == [5, 1, 9, 1]
    assert prio == [1, 1, 5, 9]          # smaller number = higher priority


def test_enq_time_then_priority_sort_list(conn):
    make_queue(conn, "EP", sort_list="ENQ_TIME,PRIORITY")
    q = conn.queue("EP")
    msgs = [conn.msgproperties(payload=str(p).encode(), priority=p) for p in (3, 1, 2)]
    q.enqmany(msgs)  # same enqueue time: priority breaks the tie
    conn.commit()
    assert [int(m.payload) for m in nowait(q).deqmany(10)] == [1, 2, 3]


def test_priority_can_be_any_integer(conn):
    make_queue(conn, "P", sort_list="PRIORITY")
    q = conn.queue("P")
    for p in (2**31, -5, 0):
        q.enqone(conn.msgproperties(payload=str(p).encode(), priority=p))
    conn.commit()
    assert [int(m.payload) for m in nowait(q).deqmany(10)] == [-5, 0, 2**31]


def test_dequeue_from_queue_stopped_for_dequeue_raises_25226(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1"])
    conn.aqadm.stop_queue(queue_name="Q", enqueue=False, dequeue=True)
    with pytest.raises(sluice.DatabaseError) as e:
        nowait(q).deqone()
    assert e.value.full_code == "ORA-25226"
    q.enqone(conn.msgproperties(payload=b"still allowed"))   # enqueue stays enabled
    conn.commit()
    conn.aqadm.start_queue(queue_name="Q")
    assert len(q.deqmany(10)) == 2


def test_enqueue_into_queue_stopped_for_enqueue_raises_25207(conn):
    make_queue(conn)
    conn.aqadm.stop_queue(queue_name="Q", enqueue=True, dequeue=False)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.queue("Q").enqone(conn.msgproperties(payload=b"1"))
    assert e.value.full_code == "ORA-25207"
    assert table_rows(conn, "Q_QT") == []


def test_created_queue_is_not_started(conn):
    make_queue(conn, start=False)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.queue("Q").enqone(conn.msgproperties(payload=b"1"))
    assert e.value.full_code == "ORA-25207"


def test_locked_mode_holds_message_until_commit(conn, conn2):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1", b"2"])
    m = nowait(q, mode=sluice.DEQ_LOCKED).deqone()
    assert m.payload == b"1"
    other = nowait(conn2.queue("Q"), mode=sluice.DEQ_BROWSE)
    assert [x.payload for x in other.deqmany(10)] == [b"1", b"2"]   # browse still sees it
    other.deqoptions.mode = sluice.DEQ_REMOVE
    other.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert other.deqone().payload == b"2"                            # skipped, locked
    conn2.commit()
    # the lock holder can remove what it locked
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.msgid = m.msgid
    assert q.deqone().payload == b"1"
    conn.commit()
    assert table_rows(conn, "Q_QT") == []


@pytest.mark.parametrize("mode", [sluice.DEQ_REMOVE, sluice.DEQ_REMOVE_NODATA], ids=["remove", "remove-nodata"])
def test_the_lock_holder_removes_what_it_locked_by_msgid(conn, mode):
    """Seed 003 "Dequeue Modes": "To prevent a viewed message from being dequeued by a
    concurrent user, you should view the message in the locked mode" — then the session
    removes it by its message id, in the same transaction."""
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1", b"2"])
    m = nowait(q, mode=sluice.DEQ_LOCKED).deqone()
    q.deqoptions.mode, q.deqoptions.msgid = mode, m.msgid
    assert q.deqone().msgid == m.msgid
    conn.commit()
    assert [r[0] for r in table_rows(conn, "Q_QT", "USER_DATA")] == [b"2"]


def _locked_then_immediate(conn, wait):
    """Q with 1 and 2; the session holds 1 LOCKED; its queue object set to remove with
    IMMEDIATE visibility and ``wait``."""
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1", b"2"])
    m = nowait(q, mode=sluice.DEQ_LOCKED).deqone()
    q.deqoptions.mode, q.deqoptions.visibility = sluice.DEQ_REMOVE, sluice.DEQ_IMMEDIATE
    q.deqoptions.wait, q.deqoptions.navigation = wait, sluice.DEQ_FIRST_MSG
    return q, m


def test_an_immediate_remove_is_a_transaction_of_its_own_and_skips_what_the_session_locked(conn, conn2):
    """Seed 003 "Optional Transaction Protection": an IMMEDIATE request "is a transaction by
    itself".  The message the session's transaction holds LOCKED is held from it as from
    any other transaction: without a message id it takes the next one, by the locked
    one's message id it finds nothing (NO_WAIT: None) — on both backends, and the locked
    message stays the session's until its transaction ends."""
    q, m = _locked_then_immediate(conn, sluice.DEQ_NO_WAIT)
    assert q.deqone().payload == b"2"
    q.deqoptions.msgid = m.msgid
    assert q.deqone() is None
    assert nowait(conn2.queue("Q")).deqone() is None             # still locked by the session
    conn.rollback()
    assert q.deqone().payload == b"1"                             # released: taken now
    assert table_rows(conn, "Q_QT") == []


def test_an_immediate_remove_that_would_wait_for_its_own_sessions_lock_is_ora_00060(conn):
    """Waiting for the session's own transaction, which cannot end while the session
    waits, is Oracle's self-deadlock of a transaction of its own (ORA-00060 "deadlock
    detected while waiting for resource") — at once, not after the wait, changing nothing."""
    q, m = _locked_then_immediate(conn, 30)
    q.deqoptions.msgid = m.msgid
    began = time.monotonic()
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert e.value.full_code == "ORA-00060" and time.monotonic() - began < 5
    conn.commit()                                              # the LOCKED dequeue ends
    assert len(table_rows(conn, "Q_QT")) == 2


def test_concurrent_dequeuers_skip_each_others_messages(conn, conn2):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1", b"2", b"3"])
    a = nowait(q).deqone()
    b = nowait(conn2.queue("Q")).deqone()
    assert {a.payload, b.payload} == {b"1", b"2"}
    conn.rollback()            # releases 1: available again
    c = conn2.queue("Q").deqone()
    assert c.payload in (b"1", b"3")
    conn2.commit()


def test_rollback_returns_message_and_counts_attempt(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"retry me"])
    nowait(q, navigation=sluice.DEQ_FIRST_MSG)
    assert q.deqone().attempts == 0
    conn.rollback()
    m = q.deqone()
    assert m.payload == b"retry me" and m.attempts == 1
    conn.commit()


def test_a_session_does_not_see_again_what_it_removed(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1", b"2"])
    nowait(q, navigation=sluice.DEQ_FIRST_MSG)
    assert q.deqone().payload == b"1"
    assert q.deqone().payload == b"2"
    assert q.deqone() is None
    conn.commit()


def test_immediate_dequeue_is_not_undone_by_rollback(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [b"1", b"2"])
    nowait(q).deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert q.deqone().payload == b"1"
    conn.rollback()
    assert [r[2] for r in table_rows(conn, "Q_QT")] == [None]
    q.deqoptions.visibility = sluice.DEQ_ON_COMMIT
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().payload == b"2"


def test_deqmany_takes_what_is_there(conn):
    make_queue(conn)
    q = conn.queue("Q")
    _fill(conn, q, [str(i).encode() for i in range(5)])
    assert len(nowait(q).deqmany(3)) == 3
    assert len(q.deqmany(3)) == 2


def test_a_consumed_message_number_is_never_given_again(conn, dsn, tmp_path):
    """Locks are keyed by the message's number (LOCAL_ORDER_NO): a session still holding
    a just-consumed message's lock must never make another dequeuer skip a new message,
    so numbers are not reused — not even the last one's, which SQLite's rowid would
    hand to the next insert — and not after the database is opened again."""
    make_queue(conn)
    q = conn.queue("Q")
    nowait(q)

    def number_of_only_message() -> int:
        rows = conn.query("SELECT LOCAL_ORDER_NO FROM AQ$Q_QT", None)[1]
        assert len(rows) == 1
        return rows[0][0]

    q.enqone(conn.msgproperties(payload=b"1"))
    conn.commit()
    first = number_of_only_message()
    assert q.deqone().payload == b"1"
    conn.commit()
    q.enqone(conn.msgproperties(payload=b"2"))
    conn.commit()
    second = number_of_only_message()
    assert second > first
    if dsn.startswith("sqlite"):
        # reopened, even without the side file that keeps the counter, numbers go on upward
        conn.close()
        import os
        os.remove(dsn[len("sqlite:///"):] + ".lck")
        conn = sluice.connect(dsn)
        q = conn.queue("Q")
        q.enqone(conn.msgproperties(payload=b"3"))
        conn.commit()
        numbers = [r[0] for r in conn.query("SELECT LOCAL_ORDER_NO FROM AQ$Q_QT", None)[1]]
        assert sorted(numbers)[-1] > second
        conn.close()


def test_a_dequeue_that_cannot_read_its_message_takes_nothing(conn):
    """A dequeue whose payload cannot be read (its object type dropped since the enqueue, a
    dequeue transformation that raises) raised its error but had taken the message in the
    open transaction: the next commit lost it.  It now fails whole, as an Oracle call does:
    the message stays READY, and the position where it was (the next dequeue finds it)."""
    conn.create_type("TMP_MSG", "OBJECT", [("REGION", "VARCHAR2(100)")], None, None, False)
    conn.streams_adm.set_up_queue(queue_table="AQT", queue_name="AQ")
    conn.aqadm.add_subscriber(queue_name="AQ", subscriber=sluice.Agent("S1"))
    q = conn.queue("AQ")
    t = conn.gettype("TMP_MSG").newobject()
    t.REGION = "EUROPE"
    q.enqone(conn.msgproperties(payload=t))
    q.enqone(conn.msgproperties(payload=b"after"))
    conn.commit()
    conn.cursor().execute("DROP TYPE tmp_msg FORCE")
    q.deqoptions.consumername, q.deqoptions.wait = "S1", sluice.DEQ_NO_WAIT
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    for _ in range(2):
        with pytest.raises(sluice.DatabaseError, match="ORA-24181"):
            q.deqone()
        conn.commit()
    assert table_rows(conn, "AQT", "MSG_STATE") == [("READY",), ("READY",)]
    # a dequeue transformation that raises: the message stays too
    make_queue(conn, payload="RAW")
    sluice.register_function("sluice.failing_transform", lambda payload: 1 / 0)
    conn.transform.create_transformation(schema="sluice", name="failing", from_schema="sys",
                                         from_type="RAW", to_schema="sys", to_type="RAW",
                                         transformation="sluice.failing_transform(source.user_data)")
    r = conn.queue("Q")
    r.enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    r.deqoptions.wait, r.deqoptions.transformation = sluice.DEQ_NO_WAIT, "failing"
    with pytest.raises(sluice.Error):
        r.deqone()
    conn.commit()
    r.deqoptions.transformation = None
    assert r.deqone().payload == b"kept"


def test_an_immediate_dequeue_that_cannot_read_its_message_takes_nothing(conn):
    """An IMMEDIATE REMOVE commits on its own, past the savepoint that undoes a failed
    read in the session's transaction: a dequeue transformation that raised left the
    message consumed for good.  It is read before that COMMIT now: nothing is taken."""
    make_queue(conn)
    sluice.register_function("sluice.failing_immediate", lambda payload: 1 / 0)
    conn.transform.create_transformation(schema="sluice", name="failing", from_schema="sys",
                                         from_type="RAW", to_schema="sys", to_type="RAW",
                                         transformation="sluice.failing_immediate(source.user_data)")
    q = nowait(conn.queue("Q"))
    q.enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    q.deqoptions.visibility, q.deqoptions.transformation = sluice.DEQ_IMMEDIATE, "failing"
    with pytest.raises(sluice.DatabaseError, match="ORA-25229"):
        q.deqone()
    conn.rollback()
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("READY",)]
    q.deqoptions.transformation = None
    assert q.deqone().payload == b"kept" and q.deqone() is None
