"""Seed 003 "Waiting for Messages": blocking dequeue without busy polling."""

import threading
import time

import sluice
from tests.conftest import make_queue


def _count_attempts(conn):
    calls = []
    real = conn._session.dequeue

    def counting(*a, **k):
        calls.append(time.monotonic())
        return real(*a, **k)
    conn._session.dequeue = counting
    return calls


def test_blocked_dequeue_wakes_on_commit_without_polling(conn, conn2):
    make_queue(conn)
    q = conn2.queue("Q")
    q.deqoptions.wait = 10
    calls = _count_attempts(conn2)
    got = {}

    def consumer():
        got["msg"] = q.deqone()
        got["at"] = time.monotonic()

    t = threading.Thread(target=consumer)
    t.start()
    time.sleep(0.5)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"wake"))
    committed = time.monotonic()
    conn.commit()
    t.join(5)
    assert got["msg"].payload == b"wake"
    assert got["at"] - committed < 0.5
    assert len(calls) <= 4            # woken by the commit, not by polling


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
