"""Seeds 001/002 "Commit-Time Queues": order by approximate commit SCN."""

import time

import sluice
from tests.conftest import make_queue, nowait


def _browse(conn, name, limit=100):
    q = nowait(conn.queue(name), mode=sluice.DEQ_BROWSE, navigation=sluice.DEQ_FIRST_MSG)
    return [m.payload for m in q.deqmany(limit)]


def _scenario(conn, conn2, name):
    """Seed 001 Figure 3-1: e1 and e3 in one transaction, e2 in a concurrent one that
    commits first."""
    t1, t2 = conn.queue(name), conn2.queue(name)
    t1.enqone(conn.msgproperties(payload=b"e1"))
    t2.enqone(conn2.msgproperties(payload=b"e2"))
    t1.enqone(conn.msgproperties(payload=b"e3"))
    conn2.commit()
    conn.commit()


def test_commit_time_queue_orders_by_commit(conn, conn2):
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    _scenario(conn, conn2, "CT")
    assert _browse(conn, "CT") == [b"e2", b"e1", b"e3"]   # the dependency-preserving order


def test_enq_time_queue_orders_by_enqueue_time(conn, conn2):
    make_queue(conn, "ET", sort_list="ENQ_TIME")
    _scenario(conn, conn2, "ET")
    assert _browse(conn, "ET") == [b"e1", b"e2", b"e3"]   # seed 001: e3 may precede e2's commit


def test_uncommitted_transaction_invisible_and_browses_consistent(conn, conn2):
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    conn.queue("CT").enqone(conn.msgproperties(payload=b"a"))
    conn.commit()
    conn2.queue("CT").enqone(conn2.msgproperties(payload=b"pending"))
    first = _browse(conn, "CT")
    second = _browse(conn, "CT")
    assert first == second == [b"a"]
    conn2.commit()
    assert _browse(conn, "CT") == [b"a", b"pending"]


def test_commit_scn_recorded_and_increasing(conn, conn2):
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    for c in (conn, conn2, conn):
        c.queue("CT").enqone(c.msgproperties(payload=b"x"))
        c.commit()
    scns = [r[0] for r in conn.query("SELECT CSCN FROM AQ$CT_QT ORDER BY LOCAL_ORDER_NO", None)[1]]
    assert scns == sorted(scns) and len(set(scns)) == 3


def test_priority_commit_time(conn, conn2):
    make_queue(conn, "PCT", sort_list="PRIORITY,COMMIT_TIME")
    conn.queue("PCT").enqone(conn.msgproperties(payload=b"low", priority=5))
    conn2.queue("PCT").enqone(conn2.msgproperties(payload=b"high-late", priority=1))
    conn.commit()
    conn2.commit()
    conn.queue("PCT").enqone(conn.msgproperties(payload=b"low-2", priority=5))
    conn.commit()
    assert _browse(conn, "PCT") == [b"high-late", b"low", b"low-2"]


def test_concurrent_transactions_browse_consistently(dsn):
    """Seeds 001/002: with concurrent writers, every browse of a commit-time queue is a
    prefix of every later one (nothing committed later sorts before what was already
    seen), and a transaction's messages appear together, side by side."""
    import random
    import threading

    with sluice.connect(dsn) as admin:
        make_queue(admin, "CT", sort_list="COMMIT_TIME")
    done = threading.Event()
    failures = []

    def writer(w):
        rng = random.Random(w)
        try:
            with sluice.connect(dsn) as c:
                q = c.queue("CT")
                for t in range(25):
                    for part in "ab":
                        q.enqone(c.msgproperties(payload=f"{w}.{t}.{part}".encode()))
                        time.sleep(rng.random() / 1000)
                    c.commit()
        except BaseException as e:
            failures.append(e)

    snapshots = []

    def reader():
        with sluice.connect(dsn) as c:
            while not done.is_set():
                snapshots.append(_browse(c, "CT", 1000))
            snapshots.append(_browse(c, "CT", 1000))

    writers = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    r = threading.Thread(target=reader)
    r.start()
    for t in writers:
        t.start()
    for t in writers:
        t.join(60)
    done.set()
    r.join(60)
    assert not failures
    final = snapshots[-1]
    assert len(final) == 200 and len(snapshots) > 2
    for snap in snapshots:
        assert snap == final[:len(snap)]
        assert len(snap) % 2 == 0
    for i in range(0, 200, 2):
        assert final[i].endswith(b".a") and final[i + 1] == final[i][:-1] + b"b"
