"""Seed 003 "Enqueue Features" and "Optional Transaction Protection"."""

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue, nowait, table_rows, wait_until


def test_on_commit_enqueue_is_invisible_to_another_session_until_commit(conn, conn2):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"m1"))
    other = nowait(conn2.queue("Q"))
    assert other.deqone() is None
    assert table_rows(conn2, "Q_QT") == []
    conn.commit()
    m = other.deqone()
    assert m is not None and m.payload == b"m1"


def test_rollback_discards_on_commit_enqueue(conn, conn2):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"gone"))
    conn.rollback()
    assert nowait(conn2.queue("Q")).deqone() is None


def test_immediate_enqueue_is_its_own_transaction(conn, conn2):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.enqone(conn.msgproperties(payload=b"now"))
    conn.rollback()  # does not undo an IMMEDIATE enqueue
    m = nowait(conn2.queue("Q")).deqone()
    assert m.payload == b"now"


def test_enqueue_sets_msgid_enqtime_and_state(conn):
    make_queue(conn)
    m = conn.msgproperties(payload=b"x")
    assert m.msgid is None
    before = dt.datetime.now() - dt.timedelta(seconds=1)
    conn.queue("Q").enqone(m)
    assert isinstance(m.msgid, bytes) and len(m.msgid) == 16
    assert m.enqtime >= before
    assert m.state == sluice.MSG_READY


def test_enqmany_and_deqmany_round_trip_in_order(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqmany([conn.msgproperties(payload=f"m{i}".encode()) for i in range(10)])
    conn.commit()
    got = nowait(q).deqmany(4) + q.deqmany(100)
    assert [m.payload for m in got] == [f"m{i}".encode() for i in range(10)]
    conn.commit()
    assert q.deqmany(5) == []


def test_message_properties_survive_the_round_trip(conn):
    make_queue(conn)
    q = conn.queue("Q")
    sender = sluice.Agent("APP_A", "orders@site", 0)
    orig = b"\x01" * 16
    q.enqone(conn.msgproperties(payload=b"p", priority=7, correlation="ORDER-1", expiration=600,
                                sender_id=sender, original_msgid=orig))
    conn.commit()
    m = nowait(q).deqone()
    assert (m.priority, m.correlation, m.expiration) == (7, "ORDER-1", 600)
    assert m.sender_id == sender and m.original_msgid == orig
    assert m.attempts == 0 and m.delay == 0


def test_str_payload_on_raw_queue_is_utf8_bytes(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload="héllo"))
    conn.commit()
    assert nowait(q).deqone().payload == "héllo".encode()


def test_history_for_non_repudiation(conn):
    """Seed 003 "Non-repudiation": agent, user, time and transaction of enqueue and dequeue."""
    make_queue(conn, retention_time=3600)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"h", sender_id=sluice.Agent("CLERK")))
    conn.commit()
    nowait(q).deqone()
    conn.commit()
    rows = table_rows(conn, "Q_QT", "MSG_STATE, ENQ_USER_ID, ENQ_TXN_ID, ENQ_TIME, SENDER_NAME, "
                                    "DEQ_USER_ID, DEQ_TXN_ID, DEQ_TIME")
    (state, enq_user, enq_txn, enq_time, sender, deq_user, deq_txn, deq_time), = rows
    assert state == "PROCESSED"
    assert enq_user == deq_user == "SLUICE" and sender == "CLERK"
    assert enq_txn and deq_txn and enq_txn != deq_txn
    assert enq_time and deq_time and deq_time >= enq_time


def test_exception_queue_property_need_not_exist_at_enqueue(conn):
    """DBMS_AQ MESSAGE_PROPERTIES_T.exception_queue: Oracle takes any name at enqueue (python-
    oracledb's tests enqueue with one never created); a message whose exception queue does not
    exist when it is moved goes to the queue table's default exception queue."""
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x", exceptionq="NO_SUCH_Q", expiration=0))
    conn.commit()
    assert wait_until(lambda: table_rows(conn, "Q_QT", "QUEUE, MSG_STATE") == [("AQ$_Q_QT_E", "EXPIRED")])


def test_a_session_sees_its_own_uncommitted_enqueues(conn, conn2):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"committed"))
    conn.commit()
    q.enqone(conn.msgproperties(payload=b"mine"))
    nowait(q, mode=sluice.DEQ_BROWSE)
    assert [m.payload for m in q.deqmany(10)] == [b"committed", b"mine"]
    assert [m.payload for m in nowait(conn2.queue("Q"), mode=sluice.DEQ_BROWSE).deqmany(10)] == [b"committed"]
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert [m.payload for m in q.deqmany(10)] == [b"committed", b"mine"]
    conn.commit()
    assert table_rows(conn, "Q_QT") == []          # consumed before it was ever committed


def test_own_uncommitted_enqueue_vanishes_on_rollback_and_is_invisible_to_immediate(conn):
    make_queue(conn)
    q = nowait(conn.queue("Q"))
    q.enqone(conn.msgproperties(payload=b"pending"))
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert q.deqone() is None                      # an autonomous transaction cannot see it
    q.deqoptions.visibility = sluice.DEQ_ON_COMMIT
    q.deqoptions.mode = sluice.DEQ_BROWSE
    assert q.deqone().payload == b"pending"
    conn.rollback()
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone() is None


def test_commit_time_queue_hides_own_uncommitted_messages(conn):
    make_queue(conn, sort_list="COMMIT_TIME")
    q = nowait(conn.queue("Q"), mode=sluice.DEQ_BROWSE)
    q.enqone(conn.msgproperties(payload=b"unordered yet"))
    assert q.deqone() is None
    conn.commit()
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().payload == b"unordered yet"


def test_a_queue_table_made_again_with_another_payload_type_takes_batches(conn):
    """The bulk insert's statement was cached by the queue table's name: after Q_QT was
    dropped and made again for JSON, PostgreSQL's COPY still wrote the payload as RAW's
    bytea (TypeError: bytes or buffer expected, got str)."""
    for payload, values in (("RAW", [b"a", b"b"]), ("JSON", [{"a": 1}, [2]]), ("RAW", [b"c", b"d"])):
        make_queue(conn, payload=payload)
        q = conn.queue("Q", payload if payload == "JSON" else None)
        q.enqmany([conn.msgproperties(payload=v) for v in values])
        conn.commit()
        assert [m.payload for m in nowait(q).deqmany(10)] == values
        conn.commit()
        conn.aqadm.stop_queue(queue_name="Q")
        conn.aqadm.drop_queue(queue_name="Q")
        conn.aqadm.drop_queue_table(queue_table="Q_QT")
