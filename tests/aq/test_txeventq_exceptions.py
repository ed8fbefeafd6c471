"""Exception queues of sharded queues / Transactional Event Queues.

References: Oracle's DBMS_AQADM reference — CREATE_SHARDED_QUEUE (12.2) ``max_retries``:
"After the retry limit has been exceeded, the message will be purged from the queue";
CREATE_EXCEPTION_QUEUE (18c) "creates an exception queue for a sharded queue"
(``sharded_queue_name``, ``exception_queue_name DEFAULT NULL``; 21c adds
``multiple_consumers``, ``storage_clause``, ``sort_list``, ``comment``).  A classic queue
table keeps its default exception queue ``AQ$_<queue_table>_E`` (seed 003 "Exception
Queues"), and a store whose sharded queues were made with one keeps using it.
"""

from __future__ import annotations

import sluice

from ..conftest import make_queue, table_rows, wait_until
from ..streams.propkit import raises_ora, rows
from ..streams.test_propagation import _raw


def _nowait(q, consumer=None):
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    if consumer is not None:
        q.deqoptions.consumername = consumer
    return q


def _fail_twice(conn, q, consumer=None):
    """Two dequeues rolled back: with max_retries 1 the message is out of retries."""
    _nowait(q, consumer)
    for _ in range(2):
        assert q.deqone().payload == b"poison"
        conn.rollback()


def _queues(conn):
    return rows(conn, "SELECT NAME, QUEUE_TABLE, QUEUE_TYPE, SHARDED FROM USER_QUEUES ORDER BY NAME")


def test_without_an_exception_queue_a_message_past_its_retries_is_purged(conn):
    """12.2: "After the retry limit has been exceeded, the message will be purged from the
    queue" — a sharded queue has no exception queue of its own."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW", max_retries=1)
    conn.aqadm.start_queue("TQ")
    assert _queues(conn) == [("TQ", "TQ", "NORMAL_QUEUE", "TRUE")]
    q = conn.queue("TQ")
    q.enqone(conn.msgproperties(payload=b"poison"))
    conn.commit()
    _fail_twice(conn, q)
    assert q.deqone() is None
    assert table_rows(conn, "TQ") == []                       # gone, not moved anywhere


def test_without_an_exception_queue_an_expired_message_is_purged(conn):
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.add_subscriber("TQ", sluice.Agent("A"))
    conn.aqadm.add_subscriber("TQ", sluice.Agent("B"))
    conn.aqadm.start_queue("TQ")
    conn.queue("TQ").enqone(conn.msgproperties(payload=b"stale", expiration=1))
    conn.commit()
    assert wait_until(lambda: table_rows(conn, "TQ") == [])
    assert _nowait(conn.queue("TQ"), "A").deqone() is None


def test_without_an_exception_queue_a_multi_consumer_message_is_purged_once_settled(conn):
    """A recipient out of retries: the message waits for the other recipient, then goes
    where a classic queue's would go to its exception queue — nowhere, here."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW", multiple_consumers=True,
                                    max_retries=1)
    for name in ("A", "B"):
        conn.aqadm.add_subscriber("TQ", sluice.Agent(name))
    conn.aqadm.start_queue("TQ")
    conn.queue("TQ").enqone(conn.msgproperties(payload=b"poison"))
    conn.commit()
    _fail_twice(conn, conn.queue("TQ"), "A")
    assert _nowait(conn.queue("TQ"), "A").deqone() is None
    assert _nowait(conn.queue("TQ"), "B").deqone().payload == b"poison"
    conn.commit()
    assert wait_until(lambda: table_rows(conn, "TQ") == [])


def test_create_exception_queue(conn, conn2):
    """CREATE_EXCEPTION_QUEUE: named, or AQ$_<queue>_E; DBA_QUEUES shows it as an
    EXCEPTION_QUEUE of the sharded queue, SHARDED; messages past max_retries go there."""
    conn.cursor().execute("""BEGIN
        DBMS_AQADM.CREATE_SHARDED_QUEUE(queue_name => 'TQ', queue_payload_type => 'RAW', max_retries => 1);
        DBMS_AQADM.CREATE_EXCEPTION_QUEUE(sharded_queue_name => 'TQ', exception_queue_name => 'TQ_EXC');
        DBMS_AQADM.START_QUEUE('TQ');
        DBMS_AQADM.START_QUEUE(queue_name => 'TQ_EXC', enqueue => FALSE);
    END;""")
    assert _queues(conn) == [("TQ", "TQ", "NORMAL_QUEUE", "TRUE"), ("TQ_EXC", "TQ", "EXCEPTION_QUEUE", "TRUE")]
    assert rows(conn, "SELECT ENQUEUE_ENABLED, DEQUEUE_ENABLED, USER_COMMENT FROM DBA_QUEUES "
                      "WHERE NAME = 'TQ_EXC'") == [("NO", "YES", "exception queue")]
    q = conn.queue("TQ")
    q.enqone(conn.msgproperties(payload=b"poison"))
    conn.commit()
    _fail_twice(conn, q)
    assert q.deqone() is None
    got = _nowait(conn2.queue("TQ_EXC")).deqone()
    assert (got.payload, got.state) == (b"poison", sluice.MSG_EXPIRED)
    conn2.commit()
    # the default name, on another sharded queue (multi-consumer: its exception queue too)
    conn.aqadm.create_transactional_event_queue(queue_name="MQ", queue_payload_type="RAW",
                                                multiple_consumers=True)
    conn.aqadm.create_exception_queue("MQ", comment="dead letters")
    assert rows(conn, "SELECT NAME, QUEUE_TYPE, SHARDED, USER_COMMENT, RECIPIENTS_MULTIPLE FROM DBA_QUEUES "
                      "WHERE QUEUE_TABLE = 'MQ' ORDER BY NAME") == [
        ("AQ$_MQ_E", "EXCEPTION_QUEUE", "TRUE", "dead letters", 1), ("MQ", "NORMAL_QUEUE", "TRUE", None, 1)]
    # dropped with its sharded queue
    conn.aqadm.drop_sharded_queue("TQ", force=True)
    assert [n for n, *_ in _queues(conn)] == ["AQ$_MQ_E", "MQ"]


def test_create_exception_queue_refuses(conn):
    """What CREATE_EXCEPTION_QUEUE refuses, changing nothing: no sharded queue of that name
    (a classic queue, an exception queue: ORA-24010), a second exception queue or a name in
    use (ORA-24006), another schema (ORA-24037), a sort list a sharded queue cannot have
    (ORA-24036)."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    make_queue(conn, "CQ")
    aq = conn.aqadm
    raises_ora(24010, aq.create_exception_queue, "CQ")
    raises_ora(24010, aq.create_exception_queue, "NO_SUCH_QUEUE")
    raises_ora(24006, aq.create_exception_queue, "TQ", "CQ")
    raises_ora(24037, aq.create_exception_queue, "TQ", "OTHER.TQ_E")
    raises_ora(24036, aq.create_exception_queue, "TQ", sort_list="COMMIT_TIME")
    assert _queues(conn) == [("AQ$_CQ_QT_E", "CQ_QT", "EXCEPTION_QUEUE", "FALSE"),
                             ("CQ", "CQ_QT", "NORMAL_QUEUE", "FALSE"), ("TQ", "TQ", "NORMAL_QUEUE", "TRUE")]
    aq.create_exception_queue("TQ")
    raises_ora(24006, aq.create_exception_queue, "TQ", "TQ_OTHER")
    raises_ora(24010, aq.create_exception_queue, "AQ$_TQ_E")
    # queue parameters leave the exception queue in place
    aq.set_queue_parameter("TQ", "SHARD_NUM", 2)
    assert conn.context.catalog.queue("TQ").table.sharded_exception_queue == "AQ$_TQ_E"


def test_classic_queues_keep_their_default_exception_queue(conn):
    make_queue(conn, max_retries=1)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"poison"))
    conn.commit()
    _fail_twice(conn, q)
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE") == [("AQ$_Q_QT_E", "EXPIRED")]


def test_a_sharded_queue_made_before_keeps_its_exception_queue(dsn):
    """A store whose sharded queues were each made with AQ$_<name>_E (its SHARDED_QUEUE row
    has no exception_queue entry) keeps moving their messages there."""
    conn = sluice.connect(dsn)
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW", max_retries=1)
    conn.aqadm.create_exception_queue("TQ")
    conn.aqadm.start_queue("TQ")
    conn.close()
    _raw(dsn, ["""UPDATE SLUICE_CATALOG SET SPEC = '{"parameters": {}}' WHERE KIND = 'SHARDED_QUEUE'"""])
    conn = sluice.connect(dsn)
    try:
        assert conn.context.catalog.queue("TQ").table.sharded_exception_queue == "AQ$_TQ_E"
        q = conn.queue("TQ")
        q.enqone(conn.msgproperties(payload=b"poison"))
        conn.commit()
        _fail_twice(conn, q)
        assert table_rows(conn, "TQ", "QUEUE, MSG_STATE") == [("AQ$_TQ_E", "EXPIRED")]
        raises_ora(24006, conn.aqadm.create_exception_queue, "TQ")
    finally:
        conn.close()


def test_create_exception_queue_is_one_transaction(conn, monkeypatch):
    """The exception queue and the sharded queue's catalog entry naming it are written
    together: when the second write fails the first is undone — no exception queue that
    nothing moves messages to, and CREATE_EXCEPTION_QUEUE can simply be called again."""
    from sluice.store import sqlcatalog
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    real = sqlcatalog.put_object

    def failing(c, kind, *args, **kw):
        if kind == "SHARDED_QUEUE":
            raise sluice.DatabaseError("ORA-01653: unable to extend table")
        return real(c, kind, *args, **kw)

    monkeypatch.setattr(sqlcatalog, "put_object", failing)
    try:
        conn.aqadm.create_exception_queue("TQ")
    except sluice.DatabaseError as e:
        assert "ORA-01653" in str(e)
    else:
        raise AssertionError("the failing catalog write did not fail CREATE_EXCEPTION_QUEUE")
    monkeypatch.setattr(sqlcatalog, "put_object", real)
    conn.context.catalog.refresh(force=True)
    assert _queues(conn) == [("TQ", "TQ", "NORMAL_QUEUE", "TRUE")]
    assert conn.context.catalog.queue("TQ").table.sharded_exception_queue is None
    conn.aqadm.create_exception_queue("TQ")
    assert _queues(conn) == [("AQ$_TQ_E", "TQ", "EXCEPTION_QUEUE", "TRUE"), ("TQ", "TQ", "NORMAL_QUEUE", "TRUE")]
