"""Seed 003 message states, the time manager, retries, exception queues, retention."""

import time

import pytest

import sluice
from tests.conftest import make_queue, nowait, table_rows, wait_until


def test_delay_keeps_message_waiting_until_due(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"later", delay=1))
    conn.commit()
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("WAITING",)]
    assert nowait(q).deqone() is None
    q.deqoptions.wait = 5
    t0 = time.monotonic()
    m = q.deqone()
    waited = time.monotonic() - t0
    assert m.payload == b"later" and m.delay == 1
    assert 0.5 < waited < 3.0


def test_delayed_message_becomes_ready_in_the_view(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x", delay=1))
    conn.commit()
    assert wait_until(lambda: table_rows(conn, "Q_QT", "MSG_STATE") == [("READY",)])


def test_expired_message_moves_to_the_exception_queue_as_expired(conn):
    make_queue(conn)
    q = conn.queue("Q")
    m = conn.msgproperties(payload=b"stale", expiration=1, correlation="E")
    q.enqone(m)
    conn.commit()
    assert wait_until(lambda: table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, EXPIRATION_REASON")
                       == [("AQ$_Q_QT_E", "EXPIRED", "TIME_EXPIRATION")])
    assert nowait(q).deqone() is None
    # exception queues are started for dequeue only, then give the message exactly once
    conn.aqadm.start_queue(queue_name="AQ$_Q_QT_E", enqueue=False, dequeue=True)
    eq = nowait(conn.queue("AQ$_Q_QT_E"))
    got = eq.deqone()
    assert got.payload == b"stale" and got.msgid == m.msgid and got.state == sluice.MSG_EXPIRED
    conn.commit()
    assert eq.deqone() is None


def test_expiration_counts_from_the_end_of_the_delay(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"x", delay=1, expiration=2))
    conn.commit()
    time.sleep(1.3)   # ready now; expires at about t=3
    q.deqoptions.wait = 2
    assert q.deqone().payload == b"x"


def test_unexpired_message_never_dequeued_after_expiry_even_before_time_manager(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"x", expiration=0))
    conn.commit()
    assert nowait(q).deqone() is None   # expiration 0: never dequeued


def test_message_moves_to_exception_queue_after_max_retries(conn):
    make_queue(conn, max_retries=2)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"poison"))
    conn.commit()
    nowait(q, navigation=sluice.DEQ_FIRST_MSG)
    for attempt in range(3):       # attempts 1..3 fail; the 3rd exceeds max_retries=2
        m = q.deqone()
        assert m is not None and m.attempts == attempt
        conn.rollback()
    assert q.deqone() is None
    rows = table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, RETRY_COUNT, EXPIRATION_REASON, ORIGINAL_QUEUE_NAME")
    assert rows == [("AQ$_Q_QT_E", "EXPIRED", 3, "MAX_RETRY_EXCEEDED", "Q")]


def test_default_max_retries_is_five(conn):
    make_queue(conn)
    q = nowait(conn.queue("Q"), navigation=sluice.DEQ_FIRST_MSG)
    q.enqone(conn.msgproperties(payload=b"p"))
    conn.commit()
    for _ in range(6):
        assert q.deqone() is not None
        conn.rollback()
    assert q.deqone() is None
    assert table_rows(conn, "Q_QT", "QUEUE")[0][0] == "AQ$_Q_QT_E"


def test_user_exception_queue_receives_failed_message(conn):
    make_queue(conn, max_retries=0)
    conn.aqadm.create_queue(queue_name="MY_EXC", queue_table="Q_QT",
                            queue_type=conn.aqadm.EXCEPTION_QUEUE)
    q = nowait(conn.queue("Q"), navigation=sluice.DEQ_FIRST_MSG)
    q.enqone(conn.msgproperties(payload=b"p", exceptionq="MY_EXC"))
    conn.commit()
    q.deqone()
    conn.rollback()
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE") == [("MY_EXC", "EXPIRED")]


def test_retry_delay_hides_rolled_back_message(conn):
    make_queue(conn, retry_delay=1)
    q = nowait(conn.queue("Q"), navigation=sluice.DEQ_FIRST_MSG)
    q.enqone(conn.msgproperties(payload=b"p"))
    conn.commit()
    q.deqone()
    conn.rollback()
    assert table_rows(conn, "Q_QT", "MSG_STATE, RETRY_COUNT") == [("WAITING", 1)]
    assert q.deqone() is None
    q.deqoptions.wait = 5
    m = q.deqone()
    assert m.payload == b"p" and m.attempts == 1


def test_retention_keeps_processed_messages_then_purges(conn):
    make_queue(conn, retention_time=1)
    q = nowait(conn.queue("Q"))
    q.enqone(conn.msgproperties(payload=b"p"))
    conn.commit()
    q.deqone()
    conn.commit()
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("PROCESSED",)]
    assert q.deqone() is None     # processed messages are not dequeued again
    assert wait_until(lambda: table_rows(conn, "Q_QT") == [], timeout=5)


def test_retention_forever(conn):
    make_queue(conn, retention_time=conn.aqadm.INFINITE)
    q = nowait(conn.queue("Q"))
    q.enqone(conn.msgproperties(payload=b"p"))
    conn.commit()
    q.deqone()
    conn.commit()
    assert conn.query("SELECT RETENTION FROM USER_QUEUES WHERE NAME = 'Q'", None)[1] == [("FOREVER",)]
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("PROCESSED",)]


def test_applications_cannot_enqueue_into_exception_queues(conn):
    make_queue(conn)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.start_queue(queue_name="AQ$_Q_QT_E", enqueue=True, dequeue=False)
    assert e.value.full_code == "ORA-24017"
    conn.aqadm.start_queue(queue_name="AQ$_Q_QT_E")   # enables dequeue only
    with pytest.raises(sluice.DatabaseError) as e:
        conn.queue("AQ$_Q_QT_E").enqone(conn.msgproperties(payload=b"x"))
    assert e.value.full_code == "ORA-25207"
