"""Notifications of different registrations are delivered independently; one
registration's in order, one at a time.

Seed 003 "Asynchronous Notifications": each registration (``conn.subscribe`` /
DBMS_AQ.REGISTER) is notified of its queue's messages.  Oracle delivers them through the
EMON's several slaves, so a slow client of one registration does not hold up another's;
python-oracledb calls one subscription's callback for its messages one at a time, in
order.  Sluice: one lane per registration, a bounded pool of delivery threads
(``sluice.aq.notify.lanes``).
"""

import threading
import time

import sluice
from sluice.aq.notify.lanes import WORKERS
from tests.conftest import make_queue, wait_until
from tests.pubsub.notify_sinks import HttpSink

RELEASE = 10.0   # a blocked callback gives up after this: a failing test never hangs


def _enqueue(conn, queue, n=1):
    q = conn.queue(queue)
    ids = []
    for i in range(n):   # one transaction each: one notification each
        m = conn.msgproperties(payload=f"{queue}{i}".encode())
        q.enqone(m)
        conn.commit()
        ids.append(m.msgid)
    return ids


def _notify_threads(before):
    return [t for t in threading.enumerate() if t.name.startswith("sluice-notif") and t not in before]


def test_a_blocked_callback_does_not_hold_up_another_registration(conn):
    """A slow callback on queue A; queue B's callback still hears of its message while A's
    is blocked (A is let go only after the check, RELEASE s at most; B's bound leaves room for
    a loaded CI machine).  Failed before: one dispatcher thread delivered everything, in turn."""
    make_queue(conn, "QA")
    make_queue(conn, "QB")
    gate, inside, got_b = threading.Event(), threading.Event(), []

    def slow(message):
        inside.set()
        gate.wait(RELEASE)
    conn.subscribe(name="QA", callback=slow)
    conn.subscribe(name="QB", callback=got_b.append)
    try:
        _enqueue(conn, "QA")
        assert inside.wait(5)
        ids = _enqueue(conn, "QB")
        assert wait_until(lambda: len(got_b) == 1, timeout=5.0)
        assert [m.msgid for m in got_b] == ids
    finally:
        gate.set()


def test_one_registrations_notifications_in_order_one_at_a_time(conn):
    """Three registrations on one queue, each notified of 12 messages: each callback sees
    them in enqueue order and never runs twice at once, while the others run beside it."""
    make_queue(conn)
    seen = {k: [] for k in range(3)}
    running = {k: 0 for k in range(3)}
    overlap = []
    lock = threading.Lock()

    def callback_for(k):
        def callback(message):
            with lock:
                running[k] += 1
                if running[k] > 1:
                    overlap.append(k)
            time.sleep(0.01)      # long enough for a second call to overlap, were there one
            seen[k].append(message.msgid)
            with lock:
                running[k] -= 1
        return callback
    for k in range(3):
        conn.subscribe(name="Q", callback=callback_for(k))
    ids = _enqueue(conn, "Q", 12)
    assert wait_until(lambda: all(len(s) == 12 for s in seen.values()), timeout=10)
    assert all(s == ids for s in seen.values())
    assert overlap == []


def test_a_failed_delivery_keeps_its_place_in_the_registrations_order(conn):
    """Three notifications owed to one HTTP registration; the first POST fails.  It is
    offered again after its back-off, and the two after it wait for it rather than
    overtake it.  Failed before: the second and third went out while the first waited."""
    make_queue(conn)
    sink = HttpSink()
    try:
        sink.fail = 1
        conn.subscribe(name="Q", protocol=sluice.SUBSCR_PROTO_HTTP, location=sink.url)
        q = conn.queue("Q")
        msgs = [conn.msgproperties(payload=f"m{i}".encode()) for i in range(3)]
        q.enqmany(msgs)    # one commit: leased together, delivered in turn
        conn.commit()
        assert wait_until(lambda: len(sink.bodies) == 3, timeout=15)
        order = [next(i for i, m in enumerate(msgs) if m.msgid.hex().upper() in body) for body in sink.bodies]
        assert order == [0, 1, 2]
    finally:
        sink.close()


def test_the_delivery_threads_are_bounded(conn):
    """More blocked registrations than delivery threads: WORKERS callbacks run at once, the
    rest wait their turn, and every one is notified once the others return."""
    make_queue(conn)
    gate, lock = threading.Event(), threading.Lock()
    inside, done = [0], []
    n = WORKERS + 3

    def blocked(message):
        with lock:
            inside[0] += 1
        gate.wait(RELEASE)
        with lock:
            inside[0] -= 1
            done.append(message.subscription.id)
    subs = [conn.subscribe(name="Q", callback=blocked) for _ in range(n)]
    try:
        _enqueue(conn, "Q")
        assert wait_until(lambda: inside[0] == WORKERS, timeout=5)
        time.sleep(0.3)
        assert inside[0] == WORKERS
    finally:
        gate.set()
    assert wait_until(lambda: len(done) == n, timeout=5)
    assert sorted(done) == sorted(s.id for s in subs)


def test_closing_while_a_callback_is_blocked_ends_cleanly(dsn):
    """The delivery threads belong to the store: closing its last connection while a
    callback is blocked returns, and once the callback returns no thread is left."""
    before = set(threading.enumerate())
    conn = sluice.connect(dsn)
    make_queue(conn)
    gate, inside = threading.Event(), threading.Event()

    def slow(message):
        inside.set()
        gate.wait(RELEASE)
    conn.subscribe(name="Q", callback=slow)
    try:
        _enqueue(conn, "Q")
        assert inside.wait(5)
        started = time.monotonic()
        conn.close()
        assert time.monotonic() - started < 5
    finally:
        gate.set()
    assert wait_until(lambda: not _notify_threads(before), timeout=5), _notify_threads(before)
