"""Seed 003 "Message Grouping" and NEXT_TRANSACTION navigation."""

import pytest

import sluice
from tests.conftest import make_queue, nowait


def _groups(conn, conn2):
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    q = conn.queue("G")
    for p in (b"h1", b"d1", b"t1"):
        q.enqone(conn.msgproperties(payload=p, priority=3 if p == b"h1" else 9))
    conn.commit()
    q2 = conn2.queue("G")
    for p in (b"h2", b"t2"):
        q2.enqone(conn2.msgproperties(payload=p))
    conn2.commit()


def _to_the_next_group(q):
    """NEXT_MSG finds the end of the session's group (ORA-25235); the queue's dequeues then
    move on with NEXT_TRANSACTION."""
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert e.value.full_code == "ORA-25235"
    q.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION


def test_group_properties_come_from_the_first_message(conn, conn2):
    _groups(conn, conn2)
    q = nowait(conn.queue("G"), mode=sluice.DEQ_BROWSE)
    first = q.deqmany(3)
    assert [m.priority for m in first] == [3, 3, 3]
    assert len({m.transaction_group for m in first}) == 1


def test_next_message_stays_in_group_and_next_transaction_moves_on(conn, conn2):
    _groups(conn, conn2)
    q = nowait(conn.queue("G"))
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().payload == b"h1"
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert q.deqone().payload == b"d1"
    assert q.deqone().payload == b"t1"
    _to_the_next_group(q)                # the group is exhausted
    assert q.deqone().payload == b"h2"
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert q.deqone().payload == b"t2"
    conn.commit()


def test_next_transaction_skips_the_rest_of_a_group(conn, conn2):
    _groups(conn, conn2)
    q = nowait(conn.queue("G"), mode=sluice.DEQ_BROWSE)
    assert q.deqone().payload == b"h1"
    q.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION
    assert q.deqone().payload == b"h2"


def test_array_dequeue_of_a_whole_transaction(conn, conn2):
    _groups(conn, conn2)
    q = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    first = q.deqone()
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    rest = q.deqmany(100)
    assert [first.payload] + [m.payload for m in rest] == [b"h1", b"d1", b"t1"]


def test_a_group_is_consumed_by_one_session_at_a_time(conn, conn2):
    """Seed 003: a group "can only be consumed by one user at a time"."""
    _groups(conn, conn2)
    a = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert a.deqone().payload == b"h1"                 # session A is in the first group
    b = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert b.deqone().payload == b"h2"                 # B skips all of it, not just h1
    b.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert b.deqone().payload == b"t2"
    conn2.commit()
    a.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert [m.payload for m in a.deqmany(10)] == [b"d1", b"t1"]
    conn.rollback()                                    # the group comes free again
    b.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert b.deqone().payload == b"h1"
    conn2.commit()


def test_rest_of_a_group_in_a_commit_time_queue_behind_a_backlog(conn, conn2, dsn):
    """A commit-time queue with transaction grouping: the rest of a group is read up to its
    last message whatever waits behind it (other transactions, one of them committed in
    between with higher enqueue numbers), then ORA-25235; on PostgreSQL the statement that
    reads it also filters by the group's CSCN, so its index scan ends with the group instead
    of reading the backlog behind it (store/sqlops.py ``_group_by_cscn``)."""
    from sluice.store import sqlops

    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL, sort_list="COMMIT_TIME")
    q, q2 = conn.queue("G"), conn2.queue("G")
    q.enqone(conn.msgproperties(payload=b"a1"))
    q2.enqone(conn2.msgproperties(payload=b"b1"))
    q.enqone(conn.msgproperties(payload=b"a2"))
    q2.enqone(conn2.msgproperties(payload=b"b2"))
    conn2.commit()      # b commits first: its group leads in commit order
    conn.commit()
    for i in range(50):
        q2.enqone(conn2.msgproperties(payload=b"c%d" % i))
        conn2.commit()
    r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert r.deqone().payload == b"b1"
    r.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert [m.payload for m in r.deqmany(100)] == [b"b2"]
    _to_the_next_group(r)
    assert r.deqone().payload == b"a1"
    r.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert [m.payload for m in r.deqmany(100)] == [b"a2"]
    conn.commit()
    pg = dsn.startswith("postgresql")
    group_sql = [sql for shape, sql in sqlops._SELECT_SQL_CACHE.items()   # by group, after a position
                 if shape[0] == ("postgresql" if pg else "sqlite") and shape[3] == "G_QT"
                 and "COMMIT_TIME" in shape[5] and shape[10] and shape[12]]
    assert group_sql
    assert all(("CSCN = ?" in sql) == pg for sql in group_sql)


def _records_read(monkeypatch) -> list[int]:
    """Counts the message records the store builds — one per row it reads from a queue
    table — into the list's single element."""
    from sluice.store.base import MessageRecord

    read = [0]
    init = MessageRecord.__init__

    def counted(self, *args, **kwargs):
        read[0] += 1
        init(self, *args, **kwargs)
    monkeypatch.setattr(MessageRecord, "__init__", counted)
    return read


def test_a_grouped_dequeue_reads_only_the_message_it_takes(conn, monkeypatch):
    """A single-message dequeue from a grouped queue reads one row: the next of the group
    the session is in, or the first of a new group (was: 16 candidates on PostgreSQL,
    each with its payload, to take one)."""
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    q = conn.queue("G")
    for g in (b"a", b"b"):
        for i in range(5):
            q.enqone(conn.msgproperties(payload=g + b"%d" % i))
        conn.commit()
    read = _records_read(monkeypatch)
    r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    taken, reads = [], []
    for navigation in (sluice.DEQ_FIRST_MSG, sluice.DEQ_NEXT_TRANSACTION):
        r.deqoptions.navigation = navigation
        for i in range(5):
            read[0] = 0
            taken.append(r.deqone().payload)
            reads.append(read[0])
            r.deqoptions.navigation = sluice.DEQ_NEXT_MSG
            if i == 2:
                conn.commit()            # the rest of the group in a new transaction too
        with pytest.raises(sluice.DatabaseError) as e:
            r.deqone()                   # the group's end
        assert e.value.full_code == "ORA-25235"
    conn.commit()
    assert taken == [b"a0", b"a1", b"a2", b"a3", b"a4", b"b0", b"b1", b"b2", b"b3", b"b4"]
    assert reads == [1] * 10


def test_the_rest_of_a_group_is_not_taken_once_another_session_holds_it(conn, conn2):
    """A group's lock ends with the transaction: the session that took its first message
    and committed finds the group's end (ORA-25235) while another session holds the group,
    and a group lock given back with a savepoint is not the session's any more either."""
    from sluice.connection import rollback_to_savepoint, savepoint

    make_queue(conn, "Q")
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    conn.queue("G").enqmany([conn.msgproperties(payload=p) for p in (b"g1", b"g2", b"g3", b"g4")])
    conn.queue("Q").enqone(conn.msgproperties(payload=b"q"))
    conn.commit()
    a = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert a.deqone().payload == b"g1"
    conn.commit()                                       # the group is free
    b = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert b.deqone().payload == b"g2"                  # and conn2's now
    a.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    with pytest.raises(sluice.DatabaseError) as e:
        a.deqone()
    assert e.value.full_code == "ORA-25235"
    conn2.rollback()
    assert nowait(conn.queue("Q")).deqone().payload == b"q"     # conn's transaction is open
    mark = savepoint(conn)
    assert a.deqone().payload == b"g2"                  # the group is conn's again
    rollback_to_savepoint(conn, mark)                   # and not any more
    b.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert b.deqone().payload == b"g2"
    with pytest.raises(sluice.DatabaseError) as e:
        a.deqone()
    assert e.value.full_code == "ORA-25235"
    conn2.commit()
    conn.rollback()


def test_a_new_group_is_found_without_reading_the_group_another_session_holds(conn, conn2, monkeypatch):
    """A dequeue that looks for a group (FIRST_MSG) behind one another session holds leaves
    that group out of what it reads once its lock is refused: a message or two of it are
    read, not all 40 (they were, in chunks of 16)."""
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    q = conn.queue("G")
    q.enqmany([conn.msgproperties(payload=b"a%d" % i) for i in range(40)])
    conn.commit()
    q.enqmany([conn.msgproperties(payload=b"b%d" % i) for i in range(2)])
    conn.commit()
    assert nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG).deqone().payload == b"a0"
    read = _records_read(monkeypatch)
    r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert r.deqone().payload == b"b0"
    assert read[0] <= 6
    r.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert r.deqone().payload == b"b1"
    conn.commit()
    conn2.rollback()
    assert [m.payload for m in nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG).deqmany(50)] == \
        [b"a%d" % i for i in range(40)]
    conn.commit()


def test_a_new_group_is_the_first_free_one_in_the_sort_order(conn, conn2):
    """A new group's first message follows the queue table's sort order (priority first)
    past a group another session holds; FIRST_MSG in the same transaction finds neither
    what the session consumed already nor the held group — nothing."""
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL, sort_list="PRIORITY,ENQ_TIME")
    q = conn.queue("G")
    for name, priority in (("l", 5), ("u", 1), ("m", 3)):
        for i in range(2 if name != "m" else 1):
            q.enqone(conn.msgproperties(payload=b"%s%d" % (name.encode(), i), priority=priority))
        conn.commit()
    b = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert b.deqone().payload == b"u0"
    a = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert a.deqone().payload == b"m0"
    _to_the_next_group(a)
    assert a.deqone().payload == b"l0"
    a.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert a.deqone().payload == b"l1"
    a.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert a.deqone() is None
    b.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert b.deqone().payload == b"u1"
    conn.commit()
    conn2.commit()
    assert nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG).deqone() is None


def test_a_dequeue_by_message_id_takes_the_messages_group(conn, conn2):
    """By message id: a message of a group another session holds is not taken (nothing,
    no wait); one of a free group is, and its group is the session's from then on."""
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    q = conn.queue("G")
    ids = {}
    for name, n in (("a", 2), ("b", 2)):
        for i in range(n):
            m = conn.msgproperties(payload=b"%s%d" % (name.encode(), i))
            q.enqone(m)
            ids[m.payload] = m.msgid
        conn.commit()
    b = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    assert b.deqone().payload == b"a0"
    r = nowait(conn.queue("G"))
    r.deqoptions.msgid = ids[b"a1"]
    assert r.deqone() is None
    r.deqoptions.msgid = ids[b"b1"]
    assert r.deqone().payload == b"b1"
    b.deqoptions.msgid = ids[b"b0"]
    assert b.deqone() is None
    conn.commit()
    assert b.deqone().payload == b"b0"
    conn2.commit()
