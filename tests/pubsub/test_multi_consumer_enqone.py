"""A multi-consumer queue's ``enqone`` in a transaction — a record per subscriber, one
message id — on both backends: the session sees its own records before the commit and no
other session does, a rollback takes every record back, a consumer waiting in another
session wakes at the commit, and a registration is notified only of committed messages.
(On PostgreSQL these records are sent as pipelined rows: tests/store/test_pg_pipelined_enqueue.py.)"""

from __future__ import annotations

import threading
import time

import sluice
from tests.conftest import make_queue, nowait, wait_until


def _two_subscribers(conn, name="T"):
    make_queue(conn, name, multiple_consumers=True)
    for s in ("A", "B"):
        conn.aqadm.add_subscriber(queue_name=name, subscriber=sluice.Agent(s))


def _enq(conn, n, q="T"):
    queue = conn.queue(q)
    for i in range(n):
        queue.enqone(conn.msgproperties(payload=b"m%d" % i))


def _consumer(conn, name, q="T"):
    queue = nowait(conn.queue(q), navigation=sluice.DEQ_FIRST_MSG)
    queue.deqoptions.consumername = name
    return queue


def test_the_session_sees_its_own_records_for_each_subscriber_and_no_other_session_does(conn, conn2):
    _two_subscribers(conn)
    _enq(conn, 3)
    assert _consumer(conn, "A").deqone().payload == b"m0"
    assert _consumer(conn2, "A").deqone() is None
    assert _consumer(conn2, "B").deqone() is None
    conn.commit()
    assert [m.payload for m in _consumer(conn2, "B").deqmany(10)] == [b"m0", b"m1", b"m2"]
    assert [m.payload for m in _consumer(conn2, "A").deqmany(10)] == [b"m1", b"m2"]
    conn2.commit()


def test_a_rollback_takes_back_every_subscribers_record(conn, conn2):
    _two_subscribers(conn)
    _enq(conn, 3)
    conn.rollback()
    for c in (conn, conn2):
        for name in ("A", "B"):
            assert _consumer(c, name).deqone() is None
    _enq(conn, 2)
    conn.commit()
    for name in ("A", "B"):
        assert [m.payload for m in _consumer(conn2, name).deqmany(10)] == [b"m0", b"m1"]


def test_a_consumer_waiting_in_another_session_wakes_at_the_commit(conn, conn2):
    _two_subscribers(conn)
    got = []
    queue = conn2.queue("T")
    queue.deqoptions.consumername = "B"
    queue.deqoptions.wait = 10

    def wait():
        got.append((queue.deqone(), time.monotonic()))
    waiter = threading.Thread(target=wait)
    waiter.start()
    try:
        time.sleep(0.2)
        _enq(conn, 3)
        time.sleep(0.3)
        assert got == []                 # not before the commit
        committed = time.monotonic()
        conn.commit()
        waiter.join(10)
    finally:
        waiter.join(10)
    assert got and got[0][0].payload == b"m0"
    assert got[0][1] - committed < 5     # woken, not its wait's end


def test_a_registration_hears_only_of_committed_messages(conn):
    _two_subscribers(conn)
    heard = []
    conn.subscribe(name="T:A", callback=heard.append)
    _enq(conn, 2)
    conn.rollback()
    time.sleep(0.3)
    assert heard == []
    _enq(conn, 2)
    conn.commit()
    assert wait_until(lambda: len(heard) == 2)
    assert {n.consumer_name for n in heard} == {"A"}
