"""Seed 003 "Buffered Messaging", "Flow Control", buffered restrictions; seeds 001/002
buffered queues and spill (issue 6)."""

import threading
import time

import pytest

import sluice
from sluice.aq import buffered
from tests.conftest import make_queue, table_rows, wait_until

B = sluice.MSG_BUFFERED


def _bq(conn, name="Q"):
    q = conn.queue(name)
    q.enqoptions.deliverymode = B
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.deqoptions.deliverymode = B
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    return q


def _code(fn):
    with pytest.raises(sluice.Error) as e:
        fn()
    return e.value.full_code


def test_buffered_round_trip_stays_in_memory(conn):
    make_queue(conn)
    q = _bq(conn)
    m = conn.msgproperties(payload=b"fast", correlation="C1", priority=2)
    q.enqone(m)
    assert m.msgid and m.deliverymode == B
    assert table_rows(conn, "Q_QT") == []            # not in the queue table
    got = q.deqone()
    assert (got.payload, got.correlation, got.deliverymode, got.msgid) == (b"fast", "C1", B, m.msgid)
    assert q.deqone() is None


def test_buffered_and_persistent_are_separate_unless_asked_for_both(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"persistent"))
    conn.commit()
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"buffered"))
    assert [m.payload for m in [q.deqone()]] == [b"buffered"]
    assert q.deqone() is None                          # buffered only
    q.enqone(conn.msgproperties(payload=b"buffered 2"))
    p = conn.queue("Q")
    p.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert p.deqone().payload == b"persistent"           # persistent only (the default)
    p.deqoptions.deliverymode = sluice.MSG_PERSISTENT_OR_BUFFERED
    p.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert p.deqone().payload == b"buffered 2"
    conn.commit()


def test_restrictions(conn):
    make_queue(conn)
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    q = _bq(conn)
    q.enqoptions.visibility = sluice.ENQ_ON_COMMIT
    assert _code(lambda: q.enqone(conn.msgproperties(payload=b"x"))) == "ORA-25236"
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    assert _code(lambda: q.enqone(conn.msgproperties(payload=b"x", delay=5))) == "SLU-00001"
    assert _code(lambda: q.enqmany([conn.msgproperties(payload=b"x")] * 2)) == "SLU-00001"
    assert _code(lambda: _bq(conn, "G").enqone(conn.msgproperties(payload=b"x"))) == "SLU-00001"
    q.deqoptions.visibility = sluice.DEQ_ON_COMMIT
    assert _code(q.deqone) == "ORA-25236"
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert _code(lambda: q.deqmany(5)) == "SLU-00001"
    assert buffered.pool_for(conn._store).count(conn._catalog.queue("Q")) == 0


def test_blocked_dequeue_wakes_on_a_buffered_enqueue(conn, conn2):
    make_queue(conn)
    waiter = _bq(conn2)
    waiter.deqoptions.wait = 5
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("m", waiter.deqone()))
    t.start()
    time.sleep(0.3)
    _bq(conn).enqone(conn.msgproperties(payload=b"ping"))
    t.join(5)
    assert got["m"].payload == b"ping"


def test_spill_past_the_memory_limit_keeps_every_message(conn):
    make_queue(conn)
    buffered.configure(conn, memory_limit=10 * 300)    # ten small messages fit
    q = _bq(conn)
    for i in range(25):
        q.enqone(conn.msgproperties(payload=f"m{i:02d}".encode()))
    rows = table_rows(conn, "Q_QT", "MSG_STATE, DELIVERY_MODE")
    assert rows and set(rows) == {("SPILLED", "BUFFERED")}
    assert buffered.pool_for(conn._store).count(conn._catalog.queue("Q")) + len(rows) == 25
    got = [q.deqone().payload for _ in range(25)]
    assert sorted(got) == [f"m{i:02d}".encode() for i in range(25)]
    assert q.deqone() is None and table_rows(conn, "Q_QT") == []
    buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_slow_subscriber_backlog_spills_fast_one_goes_on(conn):
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT")
    conn.aqadm.start_queue(queue_name="T")
    for name in ("FAST", "SLOW"):
        conn.aqadm.add_subscriber(queue_name="T", subscriber=sluice.Agent(name),
                                  delivery_mode=conn.aqadm.BUFFERED)
    buffered.configure(conn, memory_limit=20 * 300)
    q = _bq(conn, "T")
    fast = _bq(conn, "T")
    fast.deqoptions.consumername = "FAST"
    for i in range(40):
        q.enqone(conn.msgproperties(payload=f"{i}".encode()))
        assert fast.deqone().payload == f"{i}".encode()
    spilled = table_rows(conn, "T_QT", "CONSUMER_NAME, MSG_STATE")
    assert spilled and {r for r in spilled} == {("SLOW", "SPILLED")}
    slow = _bq(conn, "T")
    slow.deqoptions.consumername = "SLOW"
    assert sorted(int(slow.deqone().payload) for _ in range(40)) == list(range(40))
    buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_flow_control_holds_one_sender_not_the_others(conn):
    make_queue(conn)
    buffered.configure(conn, flow_control_threshold=3, flow_control_timeout=0.5)
    q = _bq(conn)
    a, b = sluice.Agent("SENDER_A"), sluice.Agent("SENDER_B")
    for _ in range(3):
        q.enqone(conn.msgproperties(payload=b"a", sender_id=a))
    t0 = time.monotonic()
    assert _code(lambda: q.enqone(conn.msgproperties(payload=b"a", sender_id=a))) == "ORA-25307"
    assert time.monotonic() - t0 >= 0.4
    q.enqone(conn.msgproperties(payload=b"b", sender_id=b))     # another sender is not held
    q.deqone()                                                  # resolve: dequeue one of A's
    q.enqone(conn.msgproperties(payload=b"a", sender_id=a))
    buffered.configure(conn, flow_control_threshold=10_000, flow_control_timeout=5.0)


def test_expired_buffered_message_becomes_a_persistent_exception(conn):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"old", expiration=0))
    assert q.deqone() is None
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, DELIVERY_MODE") == [
        ("AQ$_Q_QT_E", "EXPIRED", "PERSISTENT")]


def test_locked_buffered_message_is_skipped_by_others_until_commit(conn, conn2):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"1"))
    q.enqone(conn.msgproperties(payload=b"2"))
    q.deqoptions.mode = sluice.DEQ_LOCKED
    assert q.deqone().payload == b"1"
    other = _bq(conn2)
    assert other.deqone().payload == b"2"
    assert other.deqone() is None
    conn.commit()
    assert other.deqone().payload == b"1"
