"""Seed 003 "Enqueue Features" (visibility ON_COMMIT / IMMEDIATE) for a transaction of
several one-message enqueues.  On PostgreSQL the second and later of them are sent without
waiting for the server's answer (store/pgpipeline.py); what the application sees is the
same as for one enqueue per transaction (tests/aq/test_enqueue.py) on every backend."""

import time

import sluice
from tests.aq.test_processes import _kill, spawn
from tests.conftest import make_queue, nowait, table_rows

PAYLOADS = [b"m%d" % i for i in range(5)]


def _enqueue_all(conn, q="Q"):
    queue = conn.queue(q)
    for p in PAYLOADS:
        queue.enqone(conn.msgproperties(payload=p))


def test_several_enqueues_are_the_sessions_own_until_commit(conn, conn2):
    make_queue(conn)
    _enqueue_all(conn)
    assert nowait(conn2.queue("Q")).deqone() is None
    assert table_rows(conn2, "Q_QT") == []
    browse = nowait(conn.queue("Q"), mode=sluice.DEQ_BROWSE)
    assert [m.payload for m in browse.deqmany(10)] == PAYLOADS
    q = nowait(conn.queue("Q"), mode=sluice.DEQ_REMOVE, navigation=sluice.DEQ_FIRST_MSG)
    assert q.deqone().payload == b"m0"                          # and to dequeue
    conn.commit()
    assert [m.payload for m in nowait(conn2.queue("Q")).deqmany(10)] == PAYLOADS[1:]


def test_rollback_discards_every_enqueue_of_the_transaction(conn, conn2):
    make_queue(conn)
    _enqueue_all(conn)
    conn.rollback()
    assert not conn.transaction_in_progress
    assert nowait(conn2.queue("Q")).deqone() is None
    assert nowait(conn.queue("Q")).deqone() is None
    _enqueue_all(conn)                                          # the next transaction
    conn.commit()
    assert [m.payload for m in nowait(conn2.queue("Q")).deqmany(10)] == PAYLOADS


def test_an_immediate_enqueue_among_them_commits_on_its_own(conn, conn2):
    make_queue(conn)
    _enqueue_all(conn)
    q = conn.queue("Q")
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.enqone(conn.msgproperties(payload=b"now"))
    q.enqoptions.visibility = sluice.ENQ_ON_COMMIT
    q.enqone(conn.msgproperties(payload=b"later"))
    other = nowait(conn2.queue("Q"))
    assert other.deqone().payload == b"now"
    assert other.deqone() is None
    conn2.commit()
    conn.rollback()
    assert nowait(conn.queue("Q")).deqone() is None


def test_a_dequeuer_waiting_in_another_process_wakes_at_the_commit(conn, dsn):
    make_queue(conn)
    child = spawn("waiter", dsn, "1")
    try:
        assert child.stdout.readline().strip() == "waiting"
        time.sleep(0.3)
        _enqueue_all(conn)
        committing = time.time()
        conn.commit()
        line = child.stdout.readline().strip()
        assert line != "timeout"
        assert float(line) - committing < 1.0
    finally:
        _kill(child)
    assert [m.payload for m in nowait(conn.queue("Q")).deqmany(10)] == PAYLOADS[1:]
