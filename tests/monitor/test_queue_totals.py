"""Enqueue / dequeue totals are the store's, whatever process moved the messages
(V$PERSISTENT_QUEUES, the monitoring snapshot, /metrics), and V$AQ counts messages as
Oracle does: a multi-consumer message once, not once per recipient."""

from __future__ import annotations

import time

import psycopg
import pytest

import sluice
from sluice.connection import rollback_to_savepoint, savepoint
from sluice.monitor import snapshot

from ..conftest import PG_BASE, make_queue, nowait
from ..streams.propkit import multi_queue
from .kit import buffered_queue, mover_process, spill_all


def _persistent(conn, name: str = "Q") -> tuple | None:
    cur = conn.cursor()
    cur.execute("SELECT ENQUEUED_MSGS, DEQUEUED_MSGS FROM V$PERSISTENT_QUEUES WHERE QUEUE_NAME = :1",
                [name])
    return cur.fetchone()


def _vaq(conn, name: str) -> tuple:
    cur = conn.cursor()
    cur.execute("SELECT A.WAITING, A.READY, A.EXPIRED FROM V$AQ A JOIN DBA_QUEUES Q ON Q.QID = A.QID "
                "WHERE Q.NAME = :1", [name])
    return cur.fetchone()


def _enqueue_then_dequeue(conn, enqueue: int, dequeue: int) -> None:
    """``enqueue`` messages into Q, committed, then ``dequeue`` of Q's taken, committed."""
    q = conn.queue("Q")
    q.enqmany([conn.msgproperties(payload=b"own") for _ in range(enqueue)])
    conn.commit()
    nowait(q)
    assert len(q.deqmany(dequeue)) == dequeue
    conn.commit()


def test_totals_are_every_process_s_enqueues_and_dequeues(conn, dsn):
    make_queue(conn)
    conn.commit()
    children = [mover_process(dsn, 7, 3), mover_process(dsn, 5, 2)]
    outs = [c.communicate(timeout=120)[0] for c in children]
    assert [c.returncode for c in children] == [0, 0]
    assert sorted(int(o) for o in outs) == [2, 3]
    # this process moved nothing: what it reads is the two others' work, summed
    assert _persistent(conn) == (12, 5)
    qs = snapshot.take(conn).queue("SLUICE.Q")
    assert (qs.enqueued, qs.dequeued, qs.ready) == (12, 5, 7)
    # and its own work adds to theirs
    _enqueue_then_dequeue(conn, 1, 3)
    assert _persistent(conn) == (13, 8)


def test_a_rollback_counts_nothing_and_a_savepoint_takes_back_its_part(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"a"))
    conn.rollback()
    assert _persistent(conn) is None          # no activity yet: no row, as Oracle's view
    q.enqone(conn.msgproperties(payload=b"b"))
    mark = savepoint(conn)
    q.enqmany([conn.msgproperties(payload=b"c"), conn.msgproperties(payload=b"d")])
    rollback_to_savepoint(conn, mark)
    conn.commit()
    assert _persistent(conn) == (1, 0)
    nowait(q)
    assert q.deqone().payload == b"b"
    conn.rollback()
    assert _persistent(conn) == (1, 0)


def test_immediate_enqueues_and_dequeues_count_at_once(conn, conn2):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.enqmany([conn.msgproperties(payload=b"x") for _ in range(3)])
    assert _persistent(conn2) == (3, 0)        # another session sees them: committed
    nowait(q)
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert len(q.deqmany(2)) == 2
    assert _persistent(conn2) == (3, 2)


def test_the_view_has_oracle_s_columns_and_a_dropped_queue_leaves_it(conn):
    make_queue(conn)
    _enqueue_then_dequeue(conn, 1, 1)
    cur = conn.cursor()
    cur.execute("SELECT P.QUEUE_ID, P.QUEUE_TABLE_ID, P.QUEUE_SCHEMA, P.QUEUE_NAME, P.FIRST_ACTIVITY_TIME, "
                "P.LAST_ENQUEUE_TIME, P.LAST_DEQUEUE_TIME, Q.QID FROM V$PERSISTENT_QUEUES P "
                "JOIN DBA_QUEUES Q ON Q.QID = P.QUEUE_ID")
    (qid, qt_id, schema, name, first, last_enq, last_deq, dba_qid), = cur.fetchall()
    assert (qid, schema, name) == (dba_qid, "SLUICE", "Q") and qt_id is not None
    assert first is not None and first <= last_enq <= last_deq
    cur.execute("SELECT COUNT(*) FROM GV$PERSISTENT_QUEUES WHERE INST_ID = 1")
    assert cur.fetchone()[0] == 1
    conn.aqadm.stop_queue("Q")
    conn.aqadm.drop_queue("Q")
    make_queue(conn, "Q", table="Q2_QT")    # the same name again: a new queue, nothing moved yet
    assert _persistent(conn) is None


def test_a_multi_consumer_message_counts_once_in_v_aq_and_the_totals(conn, conn2):
    multi_queue(conn, "MQ")
    for name in ("S1", "S2", "S3"):
        conn.aqadm.add_subscriber("MQ", sluice.Agent(name))
    q = conn.queue("MQ")
    q.enqone(conn.msgproperties(payload=b"one"))
    q.enqone(conn.msgproperties(payload=b"two", delay=3600))
    q.enqone(conn.msgproperties(payload=b"three", recipients=["S1", "S2"]))
    conn.commit()
    # Oracle's V$AQ counts messages: 2 READY (not 5 records), 1 WAITING (not 3)
    assert _vaq(conn2, "MQ") == (1, 2, 0)
    assert _persistent(conn2, "MQ") == (3, 0)
    qs = snapshot.take(conn2).queue("SLUICE.MQ")
    assert (qs.ready, qs.waiting, qs.enqueued) == (2, 1, 3)
    assert [(c.name, c.ready) for c in qs.consumers] == [("S1", 2), ("S2", 2), ("S3", 1)]
    # one recipient's dequeue leaves the message READY for the others: still counted once
    q2 = conn2.queue("MQ")
    nowait(q2)
    q2.deqoptions.consumername = "S1"
    assert len(q2.deqmany(10)) == 2
    conn2.commit()
    assert _vaq(conn2, "MQ") == (1, 2, 0)
    assert _persistent(conn2, "MQ") == (3, 2)   # a dequeue is one recipient's
    for name in ("S2", "S3"):
        q2.deqoptions.consumername = name
        q2.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        q2.deqmany(10)
    conn2.commit()
    assert _vaq(conn2, "MQ") == (1, 0, 0)
    cur = conn2.cursor()
    cur.execute("SELECT TOTAL_WAIT, AVERAGE_WAIT FROM V$AQ A JOIN DBA_QUEUES Q ON Q.QID = A.QID "
                "WHERE Q.NAME = 'MQ'")
    assert cur.fetchone() == (0, 0)


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)
def test_postgresql_counts_a_row_per_server_process_folded_when_it_ends(conn, dsn):
    """No row every committing session waits on: each server process adds to its own; the
    rows of ended ones are folded into one when a session closes."""
    make_queue(conn)
    others = [sluice.connect(dsn) for _ in range(3)]
    for c in others:
        c.queue("Q").enqone(c.msgproperties(payload=b"x"))
        c.commit()
    cur = conn.cursor()
    cur.execute("SELECT COUNT(*) FROM SLUICE_QUEUE_STATS")
    assert cur.fetchone()[0] == 3
    pids = [c.context.session.sid for c in others]
    for c in others:
        c.close()
    with psycopg.connect(PG_BASE, autocommit=True) as admin:    # the server ends them a moment later
        deadline = time.monotonic() + 30
        while admin.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = ANY(%s)",
                            (pids,)).fetchone()[0] and time.monotonic() < deadline:
            time.sleep(0.05)
    last = sluice.connect(dsn)
    last.close()        # its close folds the ended ones' rows
    cur.execute("SELECT SID, ENQUEUED_MSGS FROM SLUICE_QUEUE_STATS")
    assert cur.fetchall() == [(0, 3)]
    assert _persistent(conn) == (3, 0)



def test_an_older_store_gets_the_totals_and_v_aq_counting_messages_after_the_upgrade(conn, dsn):
    """Schema 23's SLUICE_QUEUE_DEPTH had no MESSAGES column and its V$AQ summed records;
    SLUICE_QUEUE_STATS and V$PERSISTENT_QUEUES did not exist.  Opening the store makes them
    (SQLite keeps an old view: V$AQ and SLUICE_QUEUE_DEPTH are reshaped ones)."""
    from sluice.store.dialect import POSTGRESQL, SQLITE
    from sluice.store.sqlschema import QUEUE_DEPTH_VIEW, monitoring_ddl, queue_depth_ddl
    from tests.streams.test_propagation import _raw
    multi_queue(conn, "MQ")
    for name in ("S1", "S2"):
        conn.aqadm.add_subscriber("MQ", sluice.Agent(name))
    conn.queue("MQ").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    tables = conn.context.store.queue_tables()
    conn.close()
    sqlite = dsn.startswith("sqlite:")
    d = SQLITE if sqlite else POSTGRESQL
    # what schema 23 had: the depth view without the two new columns, V$AQ summing records
    body = queue_depth_ddl(tables, d)[-1].split(" AS ", 1)[1]
    old_depth = (f"CREATE VIEW {QUEUE_DEPTH_VIEW} AS SELECT QT_ID, OWNER, QUEUE_NAME, CONSUMER_NAME, "
                 f"ADDRESS, STATE, DELIVERY_MODE, MSGS, OLDEST_ENQ_TIME, SUM_ENQ_TIME FROM ({body}) X")
    vaq = next(s for s in monitoring_ddl(d) if " V$AQ AS" in s)
    old_vaq = vaq.replace("D.MESSAGES", "D.MSGS").replace("D.MSG_SUM_ENQ_TIME", "D.SUM_ENQ_TIME")
    # (V$BUFFERED_QUEUES had no STARTUP_TIME, CNUM_MSGS, CSPILL_MSGS: its old columns)
    old_buffered = ("CREATE VIEW V$BUFFERED_QUEUES AS SELECT 1 AS QUEUE_ID, 'S' AS QUEUE_SCHEMA, "
                    "'Q' AS QUEUE_NAME, 0 AS NUM_MSGS, 0 AS SPILL_MSGS, 0 AS EXPIRED_MSGS, "
                    "NULL AS OLDEST_MSG_ENQTM, 'NORMAL' AS QUEUE_STATE")
    _raw(dsn, (["DROP VIEW V$AQ", f"DROP VIEW {QUEUE_DEPTH_VIEW}", "DROP VIEW V$BUFFERED_QUEUES"] if sqlite
               else [f"DROP VIEW {QUEUE_DEPTH_VIEW} CASCADE"])
         + [old_depth, old_vaq, old_buffered, "DROP VIEW GV$PERSISTENT_QUEUES", "DROP VIEW V$PERSISTENT_QUEUES",
            "DROP TABLE SLUICE_QUEUE_STATS", "UPDATE SLUICE_META SET VALUE = '23' WHERE KEY = 'schema_version'"])
    with sluice.connect(dsn) as old:
        assert _vaq(old, "MQ") == (0, 1, 0)
        assert _persistent(old, "MQ") is None      # what moved before the upgrade was not counted
        q = old.queue("MQ")
        q.enqone(old.msgproperties(payload=b"y"))
        old.commit()
        assert _vaq(old, "MQ") == (0, 2, 0) and _persistent(old, "MQ") == (1, 0)
        cur = old.cursor()
        cur.execute("SELECT QUEUE_NAME, NUM_MSGS, CNUM_MSGS, CSPILL_MSGS FROM V$BUFFERED_QUEUES")
        assert cur.fetchall() == [("MQ", 0, 0, 0)]


def test_buffered_messages_spilling_are_not_persistent_enqueues_or_dequeues(conn):
    """V$PERSISTENT_QUEUES counts persistent messages: a buffered one spilled to the queue
    table (and dequeued from there) is not one."""
    from sluice.aq import buffered
    make_queue(conn)
    buffered.configure(conn, memory_limit=5 * 300)
    try:
        q = conn.queue("Q")
        q.enqoptions.deliverymode = sluice.MSG_BUFFERED
        q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
        for i in range(15):
            q.enqone(conn.msgproperties(payload=b"b%d" % i))
        assert conn.context.session.query("SELECT COUNT(*) FROM SLUICE.Q_QT", None)[1][0][0] > 0  # some spilled
        q.enqoptions.deliverymode = sluice.MSG_PERSISTENT
        q.enqoptions.visibility = sluice.ENQ_ON_COMMIT
        q.enqone(conn.msgproperties(payload=b"p"))
        conn.commit()
        assert _persistent(conn) == (1, 0)
        nowait(q)
        q.deqoptions.deliverymode = sluice.MSG_PERSISTENT_OR_BUFFERED
        q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
        got = [q.deqone() for _ in range(16)]
        assert all(got) and q.deqone() is None
        assert _persistent(conn) == (1, 1)
    finally:
        buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_v_buffered_queues_counts_messages_and_what_this_process_enqueued_and_spilled(conn):
    """Oracle's V$BUFFERED_QUEUES: NUM_MSGS / SPILL_MSGS count messages (a multi-consumer
    one once), CNUM_MSGS / CSPILL_MSGS what the instance — here the process, whose buffered
    pool it is — enqueued and spilled since STARTUP_TIME."""
    q = buffered_queue(conn)
    cols = "NUM_MSGS, SPILL_MSGS, CNUM_MSGS, CSPILL_MSGS"

    def row():
        cur = conn.cursor()
        cur.execute(f"SELECT {cols}, STARTUP_TIME FROM V$BUFFERED_QUEUES WHERE QUEUE_NAME = 'BQ'")
        *counts, started = cur.fetchone()
        return tuple(counts), started
    assert row() == ((0, 0, 0, 0), None)
    for i in range(3):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    counts, started = row()
    assert counts == (3, 0, 3, 0) and started is not None      # 3 messages, 6 records
    cur = conn.cursor()
    cur.execute("SELECT SUBSCRIBER_NAME, NUM_MSGS FROM V$BUFFERED_SUBSCRIBERS WHERE QUEUE_NAME = 'BQ' "
                "ORDER BY SUBSCRIBER_NAME")
    assert cur.fetchall() == [("B1", 3), ("B2", 3)]
    spill_all(conn)
    assert row()[0] == (3, 3, 3, 3)
    q.enqone(conn.msgproperties(payload=b"later"))
    assert row()[0] == (4, 3, 4, 3)


def test_v_buffered_subscribers_cumulative_counts_of_each_subscriber(conn, conn2):
    """Oracle's V$BUFFERED_SUBSCRIBERS: CNUM_MSGS (messages enqueued for the subscriber),
    TOTAL_DEQUEUED_MSG (its dequeues), LAST_DEQUEUE_TIME, since STARTUP_TIME — here this
    process's buffered pool's; a dequeue of a spilled message counts as one from memory."""
    q = buffered_queue(conn)
    cols = "SUBSCRIBER_NAME, NUM_MSGS, CNUM_MSGS, TOTAL_DEQUEUED_MSG"

    def rows(c=conn):
        cur = c.cursor()
        cur.execute(f"SELECT {cols}, STARTUP_TIME, LAST_DEQUEUE_TIME FROM V$BUFFERED_SUBSCRIBERS "
                    "WHERE QUEUE_NAME = 'BQ' ORDER BY SUBSCRIBER_NAME")
        return cur.fetchall()
    assert rows() == [("B1", 0, 0, 0, None, None), ("B2", 0, 0, 0, None, None)]
    for i in range(3):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    b1, b2 = rows()
    assert b1[:4] == ("B1", 3, 3, 0) and b2[:4] == ("B2", 3, 3, 0)
    assert b1[4] is not None and b1[5] is None
    q.deqoptions.consumername = "B1"
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    nowait(q)
    assert q.deqone() is not None                               # from memory
    spill_all(conn)                                             # the rest spilled, then one dequeued
    assert q.deqone() is not None
    q.deqoptions.mode = sluice.DEQ_BROWSE
    assert q.deqone() is not None                               # browsing takes nothing
    b1, b2 = rows()
    assert b1[:4] == ("B1", 1, 3, 2) and b2[:4] == ("B2", 3, 3, 0)
    assert b1[5] is not None and b2[5] is None
    # the counts are the process's: every session of it reads the same
    assert [r[:4] for r in rows(conn2)] == [("B1", 1, 3, 2), ("B2", 3, 3, 0)]
