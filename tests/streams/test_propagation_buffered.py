"""Issue 14 / seed 003 "Propagating Buffered Messages", seed 001 "a single propagation can
propagate messages in both the buffered queue portion and persistent queue portion of a
queue": buffered messages still in the enqueuing process's memory go with the schedule
that moves the persistent ones, into the destination queue's buffered part; best effort
(no de-duplication rows), but none lost while the processes live — a failed batch puts
them back into memory."""

from __future__ import annotations

import threading
import time

import pytest

import sluice
from sluice.streams.propagation.runner import PropagationRunner
from sluice.streams.propagation.wire import Batch, Propagated, from_json, to_json

from ..conftest import wait_until
from .propkit import Sites, multi_queue, rows

B = sluice.MSG_BUFFERED


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def _enqueue_buffered(conn, queue, payloads):
    q = conn.queue(queue)
    q.enqoptions.deliverymode = B
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    for p in payloads:
        q.enqone(conn.msgproperties(payload=p))


def _dequeue(conn, queue, consumer, mode):
    q = conn.queue(queue)
    q.deqoptions.consumername = consumer
    q.deqoptions.deliverymode = mode
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    got = []
    while (m := q.deqone()) is not None:
        got.append((m.payload, m.deliverymode))
    conn.commit()
    return got


def _two_sites(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    multi_queue(b, "DST")
    b.aqadm.add_subscriber("dst", sluice.Agent("APP"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    return a, b


def test_buffered_and_persistent_messages_go_with_one_schedule(sites):
    a, b = _two_sites(sites)
    _enqueue_buffered(a, "SRC", [b"b1", b"b2", b"b3"])
    q = a.queue("SRC")
    q.enqone(a.msgproperties(payload=b"p1"))
    a.commit()
    assert rows(a, "SELECT MSG_STATE FROM AQ$SRC_QT ORDER BY MSG_STATE") == [
        ("IN-MEMORY",)] * 3 + [("READY",)]
    assert PropagationRunner(a).run_once(force=True) == 4              # one batch
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]          # gone from memory too
    # buffered at the destination stays buffered; the persistent one persistent
    assert _dequeue(b, "DST", "APP", B) == [(b"b1", B), (b"b2", B), (b"b3", B)]
    assert _dequeue(b, "DST", "APP", sluice.MSG_PERSISTENT) == [(b"p1", sluice.MSG_PERSISTENT)]
    # best effort: a de-duplication row (the last batch's, in doubt) only for the persistent one
    assert rows(b, "SELECT SUM(MSG_COUNT) FROM SLUICE_PROPAGATION_INDOUBT") == [(1,)]
    assert rows(a, "SELECT TOTAL_NUMBER FROM DBA_QUEUE_SCHEDULES") == [(4,)]


def test_a_failed_batch_puts_buffered_messages_back_in_memory(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    # no DST there yet; queue-to-queue: the batch fails (queue-to-dblink would drop the
    # buffered messages for that application error, see the test below)
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2", queue_to_queue=True)
    _enqueue_buffered(a, "SRC", [b"x", b"y"])
    now = [time.time()]
    runner = PropagationRunner(a, clock=lambda: now[0])
    assert runner.run_once(force=True) == 0
    [(failures, error)] = rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
    assert failures == 1 and error.startswith("ORA-24010")
    assert rows(a, "SELECT MSG_STATE FROM AQ$SRC_QT") == [("IN-MEMORY",)] * 2     # not lost
    multi_queue(b, "DST")
    b.aqadm.add_subscriber("dst", sluice.Agent("APP"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    now[0] += 31                                                          # past the first back-off
    assert runner.run_once() == 2
    assert _dequeue(b, "DST", "APP", B) == [(b"x", B), (b"y", B)]


def test_buffered_messages_a_queue_to_dblink_propagation_cannot_deliver_are_dropped(sites, caplog):
    """Seed 003 "Propagation failures": persistent messages are marked UNDELIVERABLE; a
    buffered one has no record to mark (best effort): it is dropped, said in the alert
    log, and does not block the schedule (every run failed, the messages went back to
    memory and came again)."""
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    sites.open("dbs2")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")        # no DST there
    _enqueue_buffered(a, "SRC", [b"x", b"y"])
    with caplog.at_level("ERROR", logger="sluice.alert"):
        assert PropagationRunner(a).run_once(force=True) == 0
    assert rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES") == [(0, None)]
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    logged = [r.getMessage() for r in caplog.records if r.name == "sluice.alert"]
    assert len(logged) == 2 and all("buffered, dropped" in m and "ORA-24010" in m for m in logged), logged


def test_local_propagation_of_buffered_messages(sites):
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    multi_queue(a, "DST")
    a.aqadm.add_subscriber("dst", sluice.Agent("APP"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    a.propagation_adm.create_propagation("p", "src", "dst")
    _enqueue_buffered(a, "SRC", [b"here"])
    assert PropagationRunner(a).run_once(force=True) == 1
    assert _dequeue(a, "DST", "APP", B) == [(b"here", B)]


def test_a_running_propagation_wakes_for_a_buffered_enqueue(sites):
    a, b = _two_sites(sites)
    a.aqadm.alter_propagation_schedule(queue_name="src", destination="dbs2", latency=0)
    stop = threading.Event()
    runner = PropagationRunner(sluice.connect(sites.dsn_of("dbs1")))
    thread = threading.Thread(target=runner.run, args=(stop, 30.0), daemon=True)
    thread.start()
    try:
        assert wait_until(lambda: runner.last_results, timeout=15)     # its first pass is over
        _enqueue_buffered(a, "SRC", [b"wake"])
        got = []
        # idle is 30 s: only the enqueue's wake-up brings it within the wait
        wait_until(lambda: got.extend(_dequeue(b, "DST", "APP", B)) or got, timeout=15)
        assert got == [(b"wake", B)]
    finally:
        stop.set()
        thread.join(30)
        runner.close()
        runner.conn.close()


def test_the_wire_keeps_the_delivery_mode():
    batch = Batch("S", "O.Q", [Propagated("O.D", b"1" * 16, b"1" * 16, "RAW", b"x", buffered=True),
                               Propagated("O.D", b"2" * 16, b"2" * 16, "RAW", b"y")])
    assert [m.buffered for m in from_json(to_json(batch)).messages] == [True, False]


def test_propagated_buffered_messages_are_notified_at_the_destination(sites):
    """Seed 003 "Buffered Message Notification": registrations apply to buffered and
    persistent messages alike.  A buffered message that a propagation put into the
    destination queue's buffered part was not notified; the persistent one was."""
    a, b = _two_sites(sites)
    got = []
    b.subscribe(name="DST:APP", callback=got.append)
    _enqueue_buffered(a, "SRC", [b"b1"])
    q = a.queue("SRC")
    q.enqone(a.msgproperties(payload=b"p1"))
    a.commit()
    assert PropagationRunner(a).run_once(force=True) == 2
    assert wait_until(lambda: len(got) == 2), [m.deliverymode for m in got]
    assert sorted(m.deliverymode for m in got) == [sluice.MSG_PERSISTENT, B]
    assert all(m.consumer_name == "APP" for m in got)
    assert sorted(_dequeue(b, "DST", "APP", sluice.MSG_PERSISTENT_OR_BUFFERED)) == [
        (b"b1", B), (b"p1", sluice.MSG_PERSISTENT)]
