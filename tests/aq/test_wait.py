"""Seed 003 "Waiting for Messages": blocking dequeue without busy polling."""

import threading
import time

import pytest

import sluice
from sluice.store import postgres, sqlite
from tests.conftest import make_queue, nowait, wait_until


def _count_attempts(conn):
    calls = []
    real = conn.context.session.dequeue

    def counting(*a, **k):
        calls.append(time.monotonic())
        return real(*a, **k)
    conn.context.session.dequeue = counting
    return calls


def test_blocked_dequeue_wakes_on_commit_without_polling(conn, conn2, monkeypatch):
    """A dequeue blocked waiting is woken by another session's commit. Each step waits for
    its event (bounded), not a guessed time: a 0.5-s sleep before the enqueue and a 0.5-s
    bound on the wake-up failed under load (10-25 on 2 cores). The waiters' periodic re-check
    is pushed out of the way, so only the commit can wake the waiter in time."""
    for module in (postgres, sqlite):
        monkeypatch.setattr(module, "RELEASE_RECHECK", 120.0)
    make_queue(conn)
    store = conn2.context.store
    q = conn2.queue("Q")
    q.deqoptions.wait = 120
    qt_id = q._info().table.qt_id
    calls = _count_attempts(conn2)
    got = {}

    def consumer():
        got["msg"] = q.deqone()
        got["at"] = time.monotonic()

    t = threading.Thread(target=consumer)
    t.start()
    # the consumer is blocked waiting (on PostgreSQL: and the listener listens to the queue
    # table's channel, which wakes every waiter once to re-check)
    assert wait_until(lambda: store._waiting and _listening(store, qt_id), timeout=60)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"wake"))
    committed = time.monotonic()
    conn.commit()
    t.join(60)
    assert got["msg"].payload == b"wake"
    assert got["at"] - committed < 30     # woken by the commit: the re-check is 120 s away
    assert len(calls) <= 4            # woken by the commit (and the listening), not by polling


def _listening(store, qt_id: int) -> bool:
    """Whether the store's waiters hear commits to queue table ``qt_id`` from every process (the
    store listens to a table's channel once a session found it empty)."""
    listener = getattr(store, "listener", None)
    if listener is None:
        return True
    channel = store.target.table_channel(qt_id)
    return channel in listener._channels and not listener._pending


def test_wait_times_out_with_none(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.deqoptions.wait = 1
    calls = _count_attempts(conn)
    t0 = time.monotonic()
    assert q.deqone() is None
    assert 0.9 < time.monotonic() - t0 < 2.0
    assert len(calls) <= 6            # a handful of wake-ups, not a busy loop


def test_wait_forever_is_the_default(conn):
    assert conn.queue("X").deqoptions.wait == sluice.DEQ_WAIT_FOREVER
    assert conn.queue("X").deqoptions.navigation == sluice.DEQ_NEXT_MSG
    assert conn.queue("X").deqoptions.mode == sluice.DEQ_REMOVE
    assert conn.queue("X").deqoptions.visibility == sluice.DEQ_ON_COMMIT
    assert conn.queue("X").enqoptions.visibility == sluice.ENQ_ON_COMMIT


def test_next_message_with_wait_restarts_at_the_beginning(conn):
    """Seed 003: at the end of the queue, a nonzero wait moves the position to the start."""
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"only"))
    conn.commit()
    q.deqoptions.mode = sluice.DEQ_BROWSE
    q.deqoptions.wait = 1
    assert q.deqone().payload == b"only"
    assert q.deqone().payload == b"only"   # browsed again after wrapping


def test_a_wait_in_vain_leaves_the_position_at_the_beginning_of_a_priority_queue(conn, conn2):
    """Seed 003: a NEXT_MESSAGE dequeue that waits and reaches the end of the queue moves
    the position to the beginning — so the next dequeue, even without waiting, finds a
    message committed meanwhile ahead of the last one taken (issue 11, item 3)."""
    make_queue(conn, "P", sort_list="PRIORITY,ENQ_TIME")
    conn.queue("P").enqone(conn.msgproperties(payload=b"low", priority=5))
    conn.commit()
    q = conn2.queue("P")
    assert nowait(q).deqone().payload == b"low"
    conn2.commit()
    q.deqoptions.wait = 1
    assert q.deqone() is None                      # waited in vain: end of the queue
    conn.queue("P").enqone(conn.msgproperties(payload=b"high", priority=1))
    conn.commit()
    assert nowait(q).deqone().payload == b"high"   # ahead of "low": found from the beginning


def test_a_wait_in_vain_leaves_the_position_at_the_beginning_of_a_topic(conn, conn2, dsn):
    """The same with a rule-based subscriber of a multi-consumer queue, and a message whose
    enqueue time is earlier than that of the message taken before: its transaction began
    first and committed last."""
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT")
    conn.aqadm.start_queue(queue_name="T")
    conn.aqadm.add_subscriber(queue_name="T", subscriber=sluice.Agent("S"), rule="priority < 5")
    with sluice.connect(dsn) as producer:
        producer.queue("T").enqone(producer.msgproperties(payload=b"first begun"))   # open
        conn.queue("T").enqone(conn.msgproperties(payload=b"first committed"))
        conn.commit()
        q = conn2.queue("T")
        q.deqoptions.consumername = "S"
        assert nowait(q).deqone().payload == b"first committed"
        conn2.commit()
        q.deqoptions.wait = 1
        assert q.deqone() is None
        producer.commit()
    assert nowait(q).deqone().payload == b"first begun"
    conn2.commit()
    q.deqoptions.wait = 1
    assert q.deqone() is None


def _wait_in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except Exception as e:
            out["error"] = e
        out["at"] = time.monotonic()
    t = threading.Thread(target=run)
    t.start()
    return t, out


def test_cancel_ends_an_endless_wait_with_ora_01013_taking_nothing(conn, conn2):
    """python-oracledb's Connection.cancel() from another thread (the IDAP servlet's hook
    when an HTTP client gives up): the wait ends at once, nothing is taken later."""
    make_queue(conn)
    q = conn2.queue("Q")
    t, out = _wait_in_thread(q.deqone)          # DEQ_WAIT_FOREVER
    time.sleep(0.5)
    cancelled = time.monotonic()
    conn2.cancel()
    t.join(5)
    assert not t.is_alive()
    assert isinstance(out["error"], sluice.OperationalError) and out["error"].code == 1013
    assert out["at"] - cancelled < 1.0
    assert not conn2.transaction_in_progress
    conn.queue("Q").enqone(conn.msgproperties(payload=b"later"))
    conn.commit()
    assert nowait(conn2.queue("Q")).deqone().payload == b"later"   # it was not taken
    conn2.rollback()


def test_cancel_without_a_waiting_call_does_nothing(conn, conn2):
    make_queue(conn)
    conn2.cancel()                              # nothing waits: forgotten
    q = conn2.queue("Q")
    q.deqoptions.wait = 5
    t, out = _wait_in_thread(q.deqone)
    time.sleep(0.3)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    t.join(6)
    assert out["value"].payload == b"x"
    conn2.commit()


def test_cancel_ends_a_listen(conn, conn2):
    make_queue(conn)
    agent = sluice.Agent(None, "Q", 0)
    t, out = _wait_in_thread(lambda: conn2.aq.listen([agent], wait=30))
    time.sleep(0.5)
    conn2.cancel()
    t.join(5)
    assert not t.is_alive() and out["error"].code == 1013


@pytest.mark.parametrize("delivery", ["persistent", "buffered"])
def test_a_waiting_dequeue_takes_nothing_from_a_queue_stopped_for_dequeue(conn, conn2, delivery):
    """STOP_QUEUE(dequeue => TRUE) disables dequeuing: a dequeue that was already waiting
    went on waiting and took the next message enqueued (the queue still enabled for
    enqueue) as if the queue were open.  It now ends with ORA-25226, as a dequeue begun
    after the stop does; a queue dropped meanwhile ends it too."""
    make_queue(conn)
    buffered = delivery == "buffered"

    def waiter():
        q = conn2.queue("Q")
        q.deqoptions.wait = 10
        if buffered:
            q.deqoptions.deliverymode, q.deqoptions.visibility = sluice.MSG_BUFFERED, sluice.DEQ_IMMEDIATE
        result = {}

        def run():
            try:
                result["message"] = q.deqone()
            except sluice.Error as e:
                result["code"] = e.full_code
        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.3)
        return t, result
    t, result = waiter()
    conn.aqadm.stop_queue(queue_name="Q", enqueue=False, dequeue=True)
    q = conn.queue("Q")
    if buffered:
        q.enqoptions.deliverymode, q.enqoptions.visibility = sluice.MSG_BUFFERED, sluice.ENQ_IMMEDIATE
    q.enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    t.join(5)
    assert not t.is_alive() and result == {"code": "ORA-25226"}
    conn.aqadm.start_queue(queue_name="Q")
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    if buffered:
        q.deqoptions.deliverymode, q.deqoptions.visibility = sluice.MSG_BUFFERED, sluice.DEQ_IMMEDIATE
    assert q.deqone().payload == b"kept" and q.deqone() is None
    conn.commit()
    t, result = waiter()
    conn.aqadm.stop_queue(queue_name="Q")
    conn.aqadm.drop_queue_table(queue_table="Q_QT", force=True)
    t.join(5)
    assert not t.is_alive() and result.get("code") in ("ORA-25226", "ORA-24010")
