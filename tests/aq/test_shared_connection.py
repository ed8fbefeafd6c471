"""Threads sharing one connection take turns, as python-oracledb serialises a connection's
calls: enqueues, dequeues, statements and commits from several threads lose nothing and
give no message twice.  Before, their transaction bookkeeping interleaved: on SQLite 3 of
2,000 enqueued messages were lost and 264 dequeued twice; on PostgreSQL the threads
deadlocked in the session's BEGIN."""

from __future__ import annotations

import threading
import time

import sluice

from ..conftest import make_queue

THREADS, EACH = 4, 300


def _run_all(target, *args) -> list[str]:
    errors: list[str] = []

    def guarded(i):
        try:
            target(i, *args)
        except Exception as e:      # noqa: BLE001 (reported below)
            errors.append(repr(e))

    threads = [threading.Thread(target=guarded, args=(i,), daemon=True) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "threads sharing a connection hung"
    return errors


def test_threads_sharing_a_connection_lose_nothing_and_take_nothing_twice(conn, conn2):
    make_queue(conn)

    def enqueue(i, q):
        for j in range(EACH):
            if j % 3 == 2:      # a PL/SQL enqueue through a cursor of the same connection
                conn.cursor().execute("""DECLARE eo DBMS_AQ.ENQUEUE_OPTIONS_T;
                    mp DBMS_AQ.MESSAGE_PROPERTIES_T; h RAW(16);
                  BEGIN DBMS_AQ.ENQUEUE('Q', eo, mp, UTL_RAW.CAST_TO_RAW(:p), h); END;""", [f"{i}-{j}"])
            else:
                q.enqone(conn.msgproperties(payload=f"{i}-{j}".encode()))
            if j % 25 == 0:
                conn.commit()

    assert _run_all(enqueue, conn.queue("Q")) == []
    conn.commit()
    expected = {f"{i}-{j}".encode() for i in range(THREADS) for j in range(EACH)}
    cur = conn2.cursor()
    cur.execute("SELECT COUNT(*) FROM AQ$Q_QT")
    assert cur.fetchone() == (THREADS * EACH,)

    taken: list[bytes] = []

    def dequeue(i, q):
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        while (m := q.deqone()) is not None:
            taken.append(m.payload)
            if len(taken) % 20 == 0:
                conn.commit()

    assert _run_all(dequeue, conn.queue("Q")) == []
    conn.commit()
    assert len(taken) == len(expected) and set(taken) == expected
    cur.execute("SELECT COUNT(*) FROM AQ$Q_QT WHERE MSG_STATE = 'READY'")
    assert cur.fetchone() == (0,)


def test_closing_a_connection_ends_another_threads_waiting_dequeue(conn, conn2):
    """A dequeue waiting for ever holds the connection (its calls take turns); close() from
    another thread must not wait for it: the wait ends with DPY-1001 and close returns."""
    make_queue(conn2)
    got: list = []

    def wait_forever():
        q = conn.queue("Q")
        q.deqoptions.wait = sluice.DEQ_WAIT_FOREVER
        try:
            got.append(q.deqone())
        except sluice.Error as e:
            got.append(e.full_code)

    t = threading.Thread(target=wait_forever, daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while not conn.context._waits and time.monotonic() < deadline:   # the wait has begun
        time.sleep(0.01)
    closer = threading.Thread(target=conn.close, daemon=True)    # (a hang fails the test)
    closer.start()
    closer.join(5)
    t.join(5)
    assert not closer.is_alive(), "close() waited for the other thread's dequeue"
    assert not t.is_alive() and got == ["DPY-1001"]
