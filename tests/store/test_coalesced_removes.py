"""A session's pending REMOVE dequeues are consumed at commit in runs, not one per dequeue
call (sqlops.coalesced): a commit of 100 single-message dequeues sent 100 DELETEs — on
PostgreSQL 100 round trips before the COMMIT."""

from types import SimpleNamespace

from sluice.store import sqlops


def _queue(name="Q", qt_id=1, retention=0):
    return SimpleNamespace(name=name, table=SimpleNamespace(qt_id=qt_id), retention_time=retention)


def _info(consumer=None, user="U", agent=None):
    return SimpleNamespace(user=user, agent_name=agent, consumer_name=consumer)


def test_neighbours_of_one_queue_and_dequeuer_are_one_run_in_order():
    q, i = _queue(), _info()
    removes = [(q, ["r1"], i), (q, ["r2", "r3"], i), (q, [], i), (q, ["r4"], i)]
    assert sqlops.coalesced(removes) == [(q, ["r1", "r2", "r3", "r4"], i)]
    assert removes[0][1] == ["r1"]          # the session's own entries are left as they were


def test_another_queue_consumer_or_retention_starts_a_new_run():
    a, b, a_kept = _queue("A"), _queue("B"), _queue("A", retention=60)
    x, y = _info("X"), _info("Y")
    removes = [(a, [1], x), (a, [2], y), (b, [3], y), (a, [4], y), (a_kept, [5], y), (a, [6], x)]
    assert [(q.name, q.retention_time, recs, i.consumer_name) for q, recs, i in sqlops.coalesced(removes)] == [
        ("A", 0, [1], "X"), ("A", 0, [2], "Y"), ("B", 0, [3], "Y"), ("A", 0, [4], "Y"),
        ("A", 60, [5], "Y"), ("A", 0, [6], "X")]


def test_a_commit_of_single_message_dequeues_deletes_once(conn):
    """End to end on both backends: 50 deqone then one commit leave the queue empty and each
    message taken once (the joined DELETE removes exactly the dequeued records)."""
    import sluice
    conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="Q", queue_table="QT")
    conn.aqadm.start_queue("Q")
    q = conn.queue("Q")
    q.enqmany([conn.msgproperties(payload=bytes([i])) for i in range(60)])
    conn.commit()
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    taken = [q.deqone().payload for _ in range(50)]
    conn.commit()
    assert taken == [bytes([i]) for i in range(50)]
    assert [m.payload for m in q.deqmany(100)] == [bytes([i]) for i in range(50, 60)]
    conn.commit()
    assert q.deqone() is None
