"""StoreSession.write_commit_time_enqueues: a transaction's enqueues into a commit-time
queue written to its table before the commit (what a capture process staging a large
spilled transaction does after each chunk), numbered with the commit SCN drawn then —
still one SCN for the transaction, still in commit order, still all or nothing."""

import threading

import sluice
from tests.conftest import make_queue, nowait


def _browse(conn, name, limit=100):
    q = nowait(conn.queue(name), mode=sluice.DEQ_BROWSE, navigation=sluice.DEQ_FIRST_MSG)
    return [m.payload for m in q.deqmany(limit)]


def _scns(conn):
    return [r[0] for r in conn.query("SELECT CSCN FROM AQ$CT_QT ORDER BY LOCAL_ORDER_NO", None)[1]]


def _enq(conn, *payloads):
    q = conn.queue("CT")
    for p in payloads:
        q.enqone(conn.msgproperties(payload=p))


def test_written_enqueues_are_one_transaction_with_one_commit_scn(conn, conn2):
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    session = conn.context.session
    _enq(conn, b"a1", b"a2")
    session.write_commit_time_enqueues()
    # the session holds none of them now (PostgreSQL's deferred records, SQLite's inserts)
    assert not (getattr(session, "_deferred", None) or getattr(session, "_inserts", None))
    _enq(conn, b"a3")
    session.write_commit_time_enqueues()
    _enq(conn, b"a4")                       # (held until the commit, as before)
    assert _browse(conn2, "CT") == []       # nobody sees them before the commit
    conn.commit()
    assert _browse(conn2, "CT") == [b"a1", b"a2", b"a3", b"a4"]
    scns = _scns(conn2)
    assert len(scns) == 4 and len(set(scns)) == 1


def test_a_transaction_committing_meanwhile_comes_after(conn, conn2):
    """Its SCN drawn at the first write, the transaction keeps the counter until it ends:
    another transaction committing meanwhile waits, and is numbered after it (commit order)."""
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    _enq(conn, b"first")
    conn.context.session.write_commit_time_enqueues()
    _enq(conn2, b"other")
    done = threading.Event()
    errors = []

    def commit_other():
        try:
            conn2.commit()
        except Exception as e:      # noqa: BLE001  (reported below)
            errors.append(e)
        done.set()
    t = threading.Thread(target=commit_other)
    t.start()
    assert not done.wait(0.5)               # waits for the SCN counter (SQLite: the writer)
    _enq(conn, b"second")
    conn.commit()
    t.join(30)
    assert done.is_set() and not errors
    assert _browse(conn, "CT") == [b"first", b"second", b"other"]
    scns = _scns(conn)
    assert scns[0] == scns[1] < scns[2]


def test_a_rollback_discards_what_was_written(conn, conn2):
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    _enq(conn, b"gone")
    conn.context.session.write_commit_time_enqueues()
    conn.rollback()
    _enq(conn, b"kept")
    conn.commit()
    assert _browse(conn2, "CT") == [b"kept"]


def test_a_rollback_with_failed_dequeues_undoes_what_was_written(conn, conn2):
    """A rollback of REMOVE dequeues counts the attempts inside the transaction and then
    commits (PostgreSQL): what was written goes before that commit."""
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    make_queue(conn, "SRC", max_retries=5)
    conn.queue("SRC").enqone(conn.msgproperties(payload=b"m"))
    conn.commit()
    assert nowait(conn.queue("SRC")).deqone().payload == b"m"
    _enq(conn, b"gone")
    conn.context.session.write_commit_time_enqueues()
    conn.rollback()
    assert _browse(conn2, "CT") == []
    again = nowait(conn2.queue("SRC")).deqone()
    assert again.payload == b"m" and again.attempts == 1
    conn2.commit()


def test_a_savepoint_before_the_write_takes_it_back(conn, conn2):
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    session = conn.context.session
    _enq(conn, b"a")
    session.write_commit_time_enqueues()
    mark = session.savepoint()
    _enq(conn, b"b")
    session.write_commit_time_enqueues()
    session.rollback_to_savepoint(mark)
    _enq(conn, b"c")
    session.write_commit_time_enqueues()
    conn.commit()
    assert _browse(conn2, "CT") == [b"a", b"c"]
    scns = _scns(conn2)
    assert len(set(scns)) == 1


def test_a_savepoint_before_the_scn_was_drawn_gives_it_back(conn, conn2):
    """Taken back to a mark before the first write, the SCN drawn since goes too (on
    PostgreSQL with the subtransaction: the transaction was open, by an enqueue into a
    queue that is not commit-time ordered): another transaction is not kept waiting, and
    the next write draws again."""
    make_queue(conn, "CT", sort_list="COMMIT_TIME")
    make_queue(conn, "ET", sort_list="ENQ_TIME")
    session = conn.context.session
    conn.queue("ET").enqone(conn.msgproperties(payload=b"et"))
    _enq(conn, b"held")
    mark = session.savepoint()
    _enq(conn, b"b")
    session.write_commit_time_enqueues()
    session.rollback_to_savepoint(mark)
    _enq(conn2, b"other")
    t = threading.Thread(target=conn2.commit)
    t.start()
    t.join(10)
    assert not t.is_alive()                 # not kept waiting
    session.write_commit_time_enqueues()    # "held" (from before the mark), numbered now
    conn.commit()
    assert _browse(conn2, "CT") == [b"other", b"held"]
    assert _browse(conn2, "ET") == [b"et"]
