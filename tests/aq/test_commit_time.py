"""Seeds 001/002 "Commit-Time Queues": order by approximate commit SCN."""

import sluice
from tests.conftest import make_queue, nowait


def _browse(conn, name):
    q = nowait(conn.queue(name), mode=sluice.DEQ_BROWSE, navigation=sluice.DEQ_FIRST_MSG)
    return [m.payload for m in q.deqmany(100)]


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
