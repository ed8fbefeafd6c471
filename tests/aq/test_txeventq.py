"""Sharded queues / Transactional Event Queues (TxEventQ): DBMS_AQADM.CREATE_SHARDED_QUEUE,
CREATE_TRANSACTIONAL_EVENT_QUEUE and their DROP_ / ALTER_ procedures, the queue parameters,
and what a sharded queue refuses.

References: python-oracledb's AQ user guide (doc/src/user_guide/aq.rst: the RAW_SHQ example;
"TxEventQ use the same Python API calls as classic queues"; no EnqOptions.transformation,
DeqOptions.transformation or recipient lists; no array enqueue / dequeue of JSON payloads);
seed 003 ("a list of recipients … into a non-sharded queue", "You cannot propagate between
sharded and non-sharded queues", "Sharded queues only support PL/SQL notification"); Oracle's
DBMS_AQADM reference (CREATE_SHARDED_QUEUE's parameters, ORA-24205 "feature … not supported
for sharded queues", ORA-24216 payload type, ORA-24228 purge by condition) and DBA_QUEUES
(SHARDED 'TRUE' / 'FALSE').
"""

from __future__ import annotations

import pytest

import sluice
from sluice.plsql import execute

from ..conftest import make_queue, wait_until
from ..streams.propkit import raises_ora, rows
from ..streams.test_propagation import _raw

USER_GUIDE = """
begin
    dbms_aqadm.create_sharded_queue('RAW_SHQ', queue_payload_type=>'RAW');
    dbms_aqadm.start_queue('RAW_SHQ');
end;"""


def _nowait(q, consumer=None):
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG     # (a rollback or another consumer: from the start)
    if consumer is not None:
        q.deqoptions.consumername = consumer
    return q


def _register_plsql(conn, queue, location):
    """DBMS_AQ.REGISTER of the PL/SQL-style ``location`` (plsql://, mailto:// …) for ``queue``."""
    conn.cursor().execute(f"""BEGIN
        DBMS_AQ.REGISTER(SYS.AQ$_REG_INFO_LIST(
          SYS.AQ$_REG_INFO('{queue}', DBMS_AQ.NAMESPACE_AQ, '{location}', NULL)), 1);
    END;""")


def _buffered(q):
    q.enqoptions.deliverymode = q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    return q


def _queues(conn, like="%"):
    return rows(conn, "SELECT NAME, QUEUE_TABLE, QUEUE_TYPE, SHARDED FROM USER_QUEUES "
                      "WHERE NAME LIKE :n ORDER BY NAME", {"n": like})


# -- what must work ------------------------------------------------------------------------
def test_the_user_guide_example_runs_verbatim(conn, conn2):
    """aq.rst: the block creates and starts a sharded RAW queue; enqone / deqone / enqmany /
    deqmany then work as on a classic queue, a commit publishing to other sessions."""
    conn.cursor().execute(USER_GUIDE)
    # no exception queue until CREATE_EXCEPTION_QUEUE (test_txeventq_exceptions.py)
    assert _queues(conn) == [("RAW_SHQ", "RAW_SHQ", "NORMAL_QUEUE", "TRUE")]
    queue = conn.queue("RAW_SHQ")
    queue.enqone(conn.msgproperties(payload=b"single"))
    queue.enqmany([conn.msgproperties(payload=f"bulk {i}".encode()) for i in range(3)])
    q2 = _nowait(conn2.queue("RAW_SHQ"))
    assert q2.deqone() is None                        # not committed yet
    conn.commit()
    assert q2.deqone().payload == b"single"
    assert [m.payload for m in q2.deqmany(10)] == [b"bulk 0", b"bulk 1", b"bulk 2"]
    conn2.commit()
    assert _nowait(conn.queue("RAW_SHQ")).deqone() is None


def test_object_payloads_in_a_transactional_event_queue(conn):
    conn.cursor().execute("CREATE TYPE udt_Book AS OBJECT (Title VARCHAR2(100), Price NUMBER(5,2))")
    conn.cursor().execute("""BEGIN
        DBMS_AQADM.CREATE_TRANSACTIONAL_EVENT_QUEUE(queue_name => 'BOOK_TEQ',
                                                    queue_payload_type => 'UDT_BOOK');
        DBMS_AQADM.START_QUEUE(queue_name => 'BOOK_TEQ');
    END;""")
    book_type = conn.gettype("UDT_BOOK")
    queue = conn.queue("BOOK_TEQ", book_type)

    def book(title, price):
        b = book_type.newobject()
        b.TITLE, b.PRICE = title, price
        return b
    queue.enqone(conn.msgproperties(payload=book("Ulysses", 12)))
    queue.enqmany([conn.msgproperties(payload=book(t, 7)) for t in ("Emma", "Dubliners")])
    conn.commit()
    _nowait(queue)
    assert queue.deqone().payload.TITLE == "Ulysses"
    assert [m.payload.TITLE for m in queue.deqmany(5)] == ["Emma", "Dubliners"]
    conn.commit()


def test_json_single_messages(conn):
    conn.aqadm.create_transactional_event_queue(queue_name="JSON_TEQ", queue_payload_type="JSON")
    conn.aqadm.start_queue("JSON_TEQ")
    queue = conn.queue("JSON_TEQ", "JSON")
    queue.enqone(conn.msgproperties(payload={"id": 1, "tags": ["a", "b"]}))
    conn.commit()
    assert _nowait(queue).deqone().payload == {"id": 1, "tags": ["a", "b"]}
    conn.commit()


def test_commit_and_rollback_as_on_a_classic_queue(conn, conn2):
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW", max_retries=1)
    conn.aqadm.create_exception_queue(sharded_queue_name="TQ")
    conn.aqadm.start_queue("TQ")
    q = _nowait(conn.queue("TQ"))
    q.enqone(conn.msgproperties(payload=b"gone"))
    conn.rollback()
    assert q.deqone() is None
    q.enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    assert q.deqone().payload == b"kept"
    conn.rollback()                                   # the dequeue undone: one attempt used
    m = q.deqone()
    assert (m.payload, m.attempts) == (b"kept", 1)
    conn.rollback()                                   # out of retries: to the exception queue
    assert q.deqone() is None
    conn.aqadm.start_queue("AQ$_TQ_E", enqueue=False)
    exc = _nowait(conn2.queue("AQ$_TQ_E"))
    assert exc.deqone().payload == b"kept"
    conn2.commit()
    # ENQ_IMMEDIATE commits on its own, as on a classic queue
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.enqone(conn.msgproperties(payload=b"now"))
    conn.rollback()
    assert _nowait(conn2.queue("TQ")).deqone().payload == b"now"


def test_a_multi_consumer_queue_with_subscribers(conn):
    conn.cursor().execute("""BEGIN
        DBMS_AQADM.CREATE_SHARDED_QUEUE(queue_name => 'TOPIC', multiple_consumers => TRUE,
                                        queue_payload_type => 'RAW');
        DBMS_AQADM.ADD_SUBSCRIBER('TOPIC', SYS.AQ$_AGENT('SUB_A', NULL, NULL));
        DBMS_AQADM.START_QUEUE('TOPIC');
    END;""")
    conn.aqadm.add_subscriber(queue_name="TOPIC", subscriber=sluice.Agent("SUB_B"))
    q = conn.queue("TOPIC")
    q.enqmany([conn.msgproperties(payload=p) for p in (b"one", b"two")])
    conn.commit()
    for name in ("SUB_A", "SUB_B"):
        got = _nowait(conn.queue("TOPIC"), name).deqmany(5)
        assert [m.payload for m in got] == [b"one", b"two"]
    conn.commit()
    with pytest.raises(sluice.DatabaseError, match="ORA-25231"):     # a consumer is needed
        _nowait(conn.queue("TOPIC")).deqone()


def test_the_default_payload_is_the_generic_jms_message(conn):
    """CREATE_SHARDED_QUEUE's queue_payload_type defaults to DBMS_AQADM.JMS_TYPE, the generic
    SYS.AQ$_JMS_MESSAGE; a python-oracledb user enqueues and dequeues it as an object."""
    conn.cursor().execute("BEGIN DBMS_AQADM.CREATE_SHARDED_QUEUE('JMS_SHQ'); DBMS_AQADM.START_QUEUE('JMS_SHQ'); END;")
    assert rows(conn, "SELECT TYPE, OBJECT_TYPE FROM USER_QUEUE_TABLES WHERE QUEUE_TABLE = 'JMS_SHQ'") == [
        ("OBJECT", "SYS.AQ$_JMS_MESSAGE")]
    jms_type = conn.gettype("SYS.AQ$_JMS_MESSAGE")
    queue = conn.queue("JMS_SHQ", jms_type)
    msg = jms_type.newobject()
    msg.MESSAGE_TYPE, msg.TEXT_LEN, msg.TEXT_VC = conn.aq.JMS_TEXT_MESSAGE, 5, "hello"
    msg.HEADER = conn.gettype("SYS.AQ$_JMS_HEADER").newobject()
    msg.HEADER.TYPE = "greeting"
    queue.enqone(conn.msgproperties(payload=msg))
    queue.enqone(conn.msgproperties(payload=sluice.objtypes.jms_message(
        conn.context.catalog, sluice.objtypes.JMS_MAP_MESSAGE, {"k": 1})))
    conn.commit()
    got = [m.payload for m in _nowait(queue).deqmany(5)]
    assert [(p.MESSAGE_TYPE, p.TEXT_VC, p.HEADER.TYPE) for p in got[:1]] == [(0, "hello", "greeting")]
    assert sluice.objtypes.jms_map_of(got[1]) == {"k": 1}
    raises_ora(25215, conn.queue("JMS_SHQ", "RAW").enqone, conn.msgproperties(payload=b"raw"))


def test_buffered_messaging_on_a_sharded_queue(conn):
    """Seed 003 "Buffered Messaging Restrictions": array enqueue, array dequeue and PL/SQL
    notification of buffered messages are supported on sharded queues only (a classic queue
    still refuses the arrays)."""
    calls = []
    sluice.register_function("sluice.teq_buffered_notified",
                             lambda context, reginfo, descr, payload, payloadl: calls.append(descr))
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    conn.aqadm.start_queue("TQ")
    _register_plsql(conn, "TQ", "plsql://sluice.teq_buffered_notified")
    q = _nowait(_buffered(conn.queue("TQ")))
    q.enqmany([conn.msgproperties(payload=p) for p in (b"b1", b"b2", b"b3")])
    assert wait_until(lambda: len(calls) == 3)
    got = q.deqmany(2)
    assert [(m.payload, m.deliverymode) for m in got] == [(b"b1", sluice.MSG_BUFFERED), (b"b2", sluice.MSG_BUFFERED)]
    assert [m.payload for m in q.deqmany(5)] == [b"b3"]
    assert q.deqmany(5) == []
    make_queue(conn, "CQ")
    c = _buffered(conn.queue("CQ"))
    with pytest.raises(sluice.NotSupportedError, match="array enqueue of buffered"):
        c.enqmany([conn.msgproperties(payload=b"x"), conn.msgproperties(payload=b"y")])


# -- what a sharded queue refuses, changing nothing ---------------------------------------
def test_a_recipient_list_is_refused(conn):
    """Seed 003: a recipient list is submitted "at the time a message is enqueued into a
    non-sharded queue"; aq.rst: TxEventQ do not support recipient lists."""
    conn.aqadm.create_sharded_queue(queue_name="TOPIC", multiple_consumers=True, queue_payload_type="RAW")
    conn.aqadm.start_queue("TOPIC")
    conn.aqadm.add_subscriber(queue_name="TOPIC", subscriber=sluice.Agent("SUB"))
    q = conn.queue("TOPIC")
    e = raises_ora(24205, q.enqone, conn.msgproperties(payload=b"x", recipients=[sluice.Agent("R")]))
    assert "recipient list" in str(e)
    raises_ora(24205, q.enqmany, [conn.msgproperties(payload=b"y"),
                                  conn.msgproperties(payload=b"x", recipients=[sluice.Agent("R")])])
    conn.commit()
    assert rows(conn, "SELECT COUNT(*) FROM AQ$TOPIC") == [(0,)]


def test_transformations_are_refused(conn):
    """aq.rst: TxEventQ do not support EnqOptions.transformation / DeqOptions.transformation."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    conn.aqadm.start_queue("TQ")
    q = conn.queue("TQ")
    q.enqoptions.transformation = "ANY_TRANSFORMATION"
    raises_ora(24205, q.enqone, conn.msgproperties(payload=b"x"))
    conn.aqadm.create_sharded_queue(queue_name="TOPIC", multiple_consumers=True, queue_payload_type="RAW")
    raises_ora(24205, conn.aqadm.add_subscriber, "TOPIC", sluice.Agent("S"), transformation="ANY_TRANSFORMATION")
    q.enqoptions.transformation = None
    q.enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    _nowait(q).deqoptions.transformation = "ANY_TRANSFORMATION"
    raises_ora(24205, q.deqone)
    q.deqoptions.transformation = None
    assert q.deqone().payload == b"kept"             # the refused dequeue took nothing


def test_json_array_enqueue_and_dequeue_are_refused(conn):
    """aq.rst: array enqueue / dequeue of JSON payloads is not supported on TxEventQ."""
    conn.aqadm.create_transactional_event_queue(queue_name="JSON_TEQ", queue_payload_type="JSON")
    conn.aqadm.start_queue("JSON_TEQ")
    q = _nowait(conn.queue("JSON_TEQ", "JSON"))
    raises_ora(24205, q.enqmany, [conn.msgproperties(payload={"n": 1})])
    conn.commit()
    assert rows(conn, "SELECT COUNT(*) FROM AQ$JSON_TEQ") == [(0,)]
    q.enqone(conn.msgproperties(payload={"n": 2}))
    conn.commit()
    raises_ora(24205, q.deqmany, 5)
    assert q.deqone().payload == {"n": 2}
    # the same through DBMS_AQ's array procedures
    raises_ora(24205, conn.aq.dequeue_array, "JSON_TEQ", None, 5)


def test_propagation_between_sharded_and_classic_queues_is_refused(conn):
    """Seed 003: "You cannot propagate between sharded and non-sharded queues"; sharded to
    sharded can (here a multi-consumer one to a single-consumer one)."""
    conn.aqadm.create_sharded_queue(queue_name="SH_SRC", multiple_consumers=True, queue_payload_type="RAW")
    conn.aqadm.create_sharded_queue(queue_name="SH_DST", queue_payload_type="RAW")
    make_queue(conn, "CL_SRC", payload="RAW", multiple_consumers=True)
    make_queue(conn, "CL_DST", payload="RAW")
    aq = conn.aqadm
    raises_ora(24205, aq.schedule_propagation, queue_name="SH_SRC", destination_queue="CL_DST")
    raises_ora(24205, aq.schedule_propagation, queue_name="CL_SRC", destination_queue="SH_DST")
    raises_ora(24205, conn.propagation_adm.create_propagation, "p1", "SH_SRC", "CL_DST")
    raises_ora(24205, conn.propagation_adm.create_propagation, "p2", "CL_SRC", "SH_DST")
    # a subscriber whose address is a queue of this site is a propagation too
    raises_ora(24205, aq.add_subscriber, "SH_SRC", sluice.Agent("REMOTE", "CL_DST"))
    raises_ora(24205, aq.add_subscriber, "CL_SRC", sluice.Agent("REMOTE", "SH_DST"))
    assert rows(conn, "SELECT COUNT(*) FROM DBA_QUEUE_SCHEDULES") == [(0,)]
    assert rows(conn, "SELECT COUNT(*) FROM DBA_PROPAGATION") == [(0,)]
    assert aq.queue_subscribers("SH_SRC") == [] and aq.queue_subscribers("CL_SRC") == []
    aq.add_subscriber("SH_SRC", sluice.Agent("REMOTE", "SH_DST"))
    aq.add_subscriber("SH_SRC", sluice.Agent("FAR", "CL_DST@DBS2"))   # another site's: its own business
    aq.schedule_propagation(queue_name="SH_SRC", destination_queue="SH_DST")
    aq.schedule_propagation(queue_name="CL_SRC", destination_queue="CL_DST")
    assert rows(conn, "SELECT QNAME FROM DBA_QUEUE_SCHEDULES ORDER BY QNAME") == [("CL_SRC",), ("SH_SRC",)]


def test_propagation_between_sharded_queues(conn):
    """Seed 003: sharded queues propagate to sharded queues, multi-consumer to single- and
    multi-consumer ones."""
    from sluice.streams.propagation.runner import PropagationRunner
    for name, multi in (("SH_SRC", True), ("SH_ONE", False), ("SH_MANY", True)):
        conn.aqadm.create_sharded_queue(queue_name=name, multiple_consumers=multi, queue_payload_type="RAW")
        conn.aqadm.start_queue(name)
    conn.aqadm.add_subscriber("SH_MANY", sluice.Agent("READER"))
    conn.propagation_adm.create_propagation("to_one", "SH_SRC", "SH_ONE")
    conn.propagation_adm.create_propagation("to_many", "SH_SRC", "SH_MANY")
    conn.queue("SH_SRC").enqmany([conn.msgproperties(payload=p) for p in (b"1", b"2")])
    conn.commit()
    assert PropagationRunner(conn).run_once(force=True) == 4
    assert [m.payload for m in _nowait(conn.queue("SH_ONE")).deqmany(5)] == [b"1", b"2"]
    assert [m.payload for m in _nowait(conn.queue("SH_MANY"), "READER").deqmany(5)] == [b"1", b"2"]
    # dropping the source drops its schedules, as DROP_QUEUE does, once no Streams
    # propagation propagates from it (ORA-26668 before)
    conn.aqadm.schedule_propagation(queue_name="SH_SRC", destination="dbs2")
    raises_ora(26668, conn.aqadm.drop_transactional_event_queue, "SH_SRC", force=True)
    for name in ("to_one", "to_many"):
        conn.propagation_adm.drop_propagation(name)
    conn.aqadm.drop_transactional_event_queue("SH_SRC", force=True)
    assert rows(conn, "SELECT COUNT(*) FROM DBA_QUEUE_SCHEDULES") == [(0,)]


def test_only_plsql_notifications(conn):
    """Seed 003: "Sharded queues only support PL/SQL notification"."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    raises_ora(24205, conn.subscribe, name="TQ", callback=lambda message: None)
    raises_ora(24205, _register_plsql, conn, "TQ", "mailto://ops@sluice.example")
    raises_ora(24205, _register_plsql, conn, "TQ", "http://127.0.0.1:9/notify")
    assert rows(conn, "SELECT COUNT(*) FROM DBA_SUBSCR_REGISTRATIONS") == [(0,)]
    _register_plsql(conn, "TQ", "plsql://sluice.teq_notified")
    assert rows(conn, "SELECT PROTOCOL FROM DBA_SUBSCR_REGISTRATIONS") == [("PLSQL",)]


def test_classic_procedures_on_a_sharded_queue(conn):
    """The queue table of a sharded queue holds that one queue: CREATE_QUEUE into it,
    ALTER_QUEUE_TABLE, DROP_QUEUE_TABLE and DROP_QUEUE refuse it (ORA-24205),
    PURGE_QUEUE_TABLE by condition too (ORA-24228); the sharded procedures refuse a classic
    queue (ORA-24010: no sharded queue of that name)."""
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW", comment="teq")
    conn.aqadm.create_exception_queue(sharded_queue_name="TQ")
    make_queue(conn, "CQ")
    aq = conn.aqadm
    raises_ora(24205, aq.create_queue, queue_name="OTHER", queue_table="TQ")
    raises_ora(24205, aq.alter_queue_table, queue_table="TQ", comment="changed")
    raises_ora(24205, aq.drop_queue_table, queue_table="TQ", force=True)
    raises_ora(24205, aq.drop_queue, queue_name="TQ")
    raises_ora(24228, aq.purge_queue_table, queue_table="TQ", purge_condition="qtview.priority = 1")
    raises_ora(24010, aq.drop_sharded_queue, queue_name="CQ")
    raises_ora(24010, aq.drop_transactional_event_queue, queue_name="AQ$_TQ_E")
    raises_ora(24010, aq.alter_sharded_queue, queue_name="CQ", max_retries=3)
    raises_ora(24010, aq.set_queue_parameter, queue_name="CQ", param_name="SHARD_NUM", param_value=2)
    assert _queues(conn, "%TQ%") == [("AQ$_TQ_E", "TQ", "EXCEPTION_QUEUE", "TRUE"),
                                     ("TQ", "TQ", "NORMAL_QUEUE", "TRUE")]
    assert rows(conn, "SELECT USER_COMMENT FROM USER_QUEUE_TABLES WHERE QUEUE_TABLE = 'TQ'") == [("teq",)]
    aq.purge_queue_table(queue_table="TQ", purge_condition=None)        # all of it: allowed


def test_payload_types_a_sharded_queue_takes(conn):
    """ORA-24216 for a payload type TxEventQ do not take (XMLTYPE, ANYDATA); an unknown one is
    ORA-04043 as for CREATE_QUEUE_TABLE; a queue or queue table of the name: ORA-24006 / 24001."""
    raises_ora(24216, conn.aqadm.create_sharded_queue, queue_name="XQ", queue_payload_type="XMLTYPE")
    raises_ora(24216, conn.aqadm.create_sharded_queue, queue_name="AQ", queue_payload_type="SYS.ANYDATA")
    raises_ora(4043, conn.aqadm.create_sharded_queue, queue_name="NQ", queue_payload_type="NO_SUCH_TYPE")
    make_queue(conn, "CQ", table="CQT")
    raises_ora(24006, conn.aqadm.create_sharded_queue, queue_name="CQ", queue_payload_type="RAW")
    raises_ora(24001, conn.aqadm.create_sharded_queue, queue_name="CQT", queue_payload_type="RAW")
    assert rows(conn, "SELECT COUNT(*) FROM USER_QUEUE_TABLES") == [(1,)]


# -- drop, alter, catalog, parameters, reopening, upgrade ----------------------------------
def test_alter_and_drop(conn):
    conn.cursor().execute("""BEGIN
        DBMS_AQADM.CREATE_SHARDED_QUEUE(queue_name => 'TQ', queue_payload_type => 'RAW');
        DBMS_AQADM.ALTER_SHARDED_QUEUE(queue_name => 'TQ', max_retries => 9, comment => 'orders');
        DBMS_AQADM.START_QUEUE('TQ');
    END;""")
    assert rows(conn, "SELECT MAX_RETRIES, USER_COMMENT, ENQUEUE_ENABLED FROM USER_QUEUES WHERE NAME = 'TQ'") == [
        (9, "orders", "YES")]
    conn.aqadm.alter_transactional_event_queue(queue_name="TQ", queue_properties={"retention_time": 60})
    assert rows(conn, "SELECT MAX_RETRIES, RETENTION FROM USER_QUEUES WHERE NAME = 'TQ'") == [(9, "60")]
    conn.queue("TQ").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    raises_ora(24011, conn.aqadm.drop_sharded_queue, queue_name="TQ")     # started: stop it first
    conn.cursor().execute("BEGIN DBMS_AQADM.DROP_SHARDED_QUEUE(queue_name => 'TQ', force => TRUE); END;")
    assert _queues(conn) == []
    assert rows(conn, "SELECT COUNT(*) FROM USER_QUEUE_TABLES") == [(0,)]
    # the name is free again, for a classic queue table too
    make_queue(conn, "TQ", table="TQ")
    assert _queues(conn, "TQ") == [("TQ", "TQ", "NORMAL_QUEUE", "FALSE")]


def test_catalog_views(conn):
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    make_queue(conn, "CQ")
    assert rows(conn, "SELECT NAME, SHARDED FROM DBA_QUEUES WHERE QUEUE_TYPE = 'NORMAL_QUEUE' "
                      "ORDER BY NAME") == [("CQ", "FALSE"), ("TQ", "TRUE")]
    assert rows(conn, "SELECT NAME, SHARDED FROM ALL_QUEUES WHERE NAME = 'TQ'") == [("TQ", "TRUE")]


def test_queue_parameters(conn):
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    aq = conn.aqadm
    assert aq.get_queue_parameter(queue_name="TQ", param_name="SHARD_NUM") is None
    conn.cursor().execute("BEGIN DBMS_AQADM.SET_QUEUE_PARAMETER('TQ', 'SHARD_NUM', 4); END;")
    aq.set_queue_parameter(queue_name="TQ", param_name="sticky_dequeue", param_value=1)
    assert aq.get_queue_parameter("TQ", "SHARD_NUM") == 4
    assert aq.get_queue_parameter("TQ", "STICKY_DEQUEUE") == 1
    raises_ora(24205, aq.set_queue_parameter, "TQ", "NO_SUCH_PARAMETER", 1)
    raises_ora(24205, aq.get_queue_parameter, "TQ", "NO_SUCH_PARAMETER")
    raises_ora(6502, aq.set_queue_parameter, "TQ", "SHARD_NUM", 0)
    raises_ora(6502, aq.set_queue_parameter, "TQ", "STICKY_DEQUEUE", 2)
    raises_ora(6502, aq.set_queue_parameter, "TQ", "SHARD_NUM", 1.5)
    for no_number in (float("nan"), float("inf"), float("-inf")):   # were ValueError / OverflowError
        raises_ora(6502, aq.set_queue_parameter, "TQ", "SHARD_NUM", no_number)
    assert aq.get_queue_parameter("TQ", "SHARD_NUM") == 4          # the refused calls changed nothing
    aq.unset_queue_parameter("TQ", "SHARD_NUM")
    assert aq.get_queue_parameter("TQ", "SHARD_NUM") is None
    assert aq.get_queue_parameter("TQ", "STICKY_DEQUEUE") == 1
    # the PL/SQL form returns the value in its OUT parameter
    out = execute(conn, """DECLARE n NUMBER; BEGIN
        DBMS_AQADM.GET_QUEUE_PARAMETER('TQ', 'STICKY_DEQUEUE', n);
        DBMS_OUTPUT.PUT_LINE('sticky ' || n); END;""").output
    assert out == ["sticky 1"]


def test_database_level_queue_parameters(conn):
    """DBMS_AQADM reference: "For database level the queue_name should be NULL. Note that queue
    overrides database level parameter values." """
    conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
    aq = conn.aqadm
    conn.cursor().execute("BEGIN DBMS_AQADM.SET_QUEUE_PARAMETER(NULL, 'SHARD_NUM', 8); END;")
    assert aq.get_queue_parameter(None, "SHARD_NUM") == 8
    assert aq.get_queue_parameter("TQ", "SHARD_NUM") == 8          # the database's
    aq.set_queue_parameter("TQ", "SHARD_NUM", 2)
    assert (aq.get_queue_parameter("TQ", "SHARD_NUM"), aq.get_queue_parameter(None, "SHARD_NUM")) == (2, 8)
    aq.unset_queue_parameter("TQ", "SHARD_NUM")
    assert aq.get_queue_parameter("TQ", "SHARD_NUM") == 8
    aq.unset_queue_parameter(None, "SHARD_NUM")
    assert aq.get_queue_parameter("TQ", "SHARD_NUM") is None


def test_queue_properties(conn):
    """QUEUE_PROPS_T: retry delay and retention are the queue's; "Sharded queues can be sorted by
    ENQ_TIME or PRIORITY, ENQ_TIME" (another sort list: ORA-24036, nothing created)."""
    aq = conn.aqadm
    aq.create_sharded_queue(queue_name="PQ", queue_payload_type="RAW",
                            queue_properties={"sort_list": "PRIORITY, ENQ_TIME", "retry_delay": 5,
                                              "retention_time": -1, "cache_hint": 0})
    assert rows(conn, "SELECT RETRY_DELAY, RETENTION FROM USER_QUEUES WHERE NAME = 'PQ'") == [(5.0, "FOREVER")]
    assert rows(conn, "SELECT SORT_ORDER FROM USER_QUEUE_TABLES WHERE QUEUE_TABLE = 'PQ'") == [("PRIORITY,ENQ_TIME",)]
    aq.start_queue("PQ")
    q = conn.queue("PQ")
    q.enqmany([conn.msgproperties(payload=b"low", priority=9), conn.msgproperties(payload=b"high", priority=1)])
    conn.commit()
    assert [m.payload for m in _nowait(q).deqmany(5)] == [b"high", b"low"]
    raises_ora(24036, aq.create_sharded_queue, queue_name="CQ", queue_payload_type="RAW",
               queue_properties={"sort_list": "COMMIT_TIME"})
    raises_ora(24036, aq.create_sharded_queue, queue_name="CQ", queue_payload_type="RAW",
               queue_properties={"sort_list": "ENQ_TIME, PRIORITY"})
    raises_ora(24013, aq.create_sharded_queue, queue_name="CQ", queue_payload_type="RAW",
               queue_properties={"retry_delay": -1})
    with pytest.raises(sluice.InterfaceError, match="QUEUE_PROPS_T has no field colour"):
        aq.create_sharded_queue(queue_name="CQ", queue_payload_type="RAW", queue_properties={"colour": 1})
    raises_ora(24205, aq.alter_sharded_queue, queue_name="PQ", queue_properties={"sort_list": "ENQ_TIME"})
    assert _queues(conn, "CQ") == []


def test_queue_props_t_in_a_plsql_block(conn):
    """A PL/SQL block declares a DBMS_AQADM.QUEUE_PROPS_T, sets its fields and passes it
    to CREATE_ / ALTER_TRANSACTIONAL_EVENT_QUEUE; its fields start at the record's
    defaults (NORMAL_QUEUE, no retry delay, no retention); a field it does not have is
    PLS-00302 (shards are a queue parameter, SET_QUEUE_PARAMETER, not a property)."""
    cur = conn.cursor()
    cur.execute("""DECLARE
        qp DBMS_AQADM.QUEUE_PROPS_T;
    BEGIN
        IF qp.queue_type = DBMS_AQADM.NORMAL_QUEUE AND qp.retry_delay = 0 AND qp.sort_list IS NULL THEN
            qp.sort_list := 'PRIORITY, ENQ_TIME';
        END IF;
        qp.retry_delay := 2.5;
        qp.retention_time := 60;
        DBMS_AQADM.CREATE_TRANSACTIONAL_EVENT_QUEUE(queue_name => 'PQ', queue_payload_type => 'RAW',
                                                    queue_properties => qp);
        DBMS_AQADM.SET_QUEUE_PARAMETER('PQ', 'SHARD_NUM', 4);
    END;""")
    assert rows(conn, "SELECT RETRY_DELAY, RETENTION FROM USER_QUEUES WHERE NAME = 'PQ'") == [(2.5, "60")]
    assert rows(conn, "SELECT SORT_ORDER FROM USER_QUEUE_TABLES WHERE QUEUE_TABLE = 'PQ'") == [("PRIORITY,ENQ_TIME",)]
    # ALTER: a field set to NULL leaves the queue's value as it is
    cur.execute("""DECLARE qp DBMS_AQADM.QUEUE_PROPS_T;
    BEGIN
        qp.retry_delay := NULL;
        qp.retention_time := 120;
        DBMS_AQADM.ALTER_TRANSACTIONAL_EVENT_QUEUE(queue_name => 'PQ', queue_properties => qp);
    END;""")
    assert rows(conn, "SELECT RETRY_DELAY, RETENTION FROM USER_QUEUES WHERE NAME = 'PQ'") == [(2.5, "120")]
    # the record's values are checked as the procedure's (nothing created)
    with pytest.raises(sluice.DatabaseError, match="ORA-24036"):
        cur.execute("""DECLARE qp DBMS_AQADM.QUEUE_PROPS_T; BEGIN
            qp.sort_list := 'COMMIT_TIME';
            DBMS_AQADM.CREATE_SHARDED_QUEUE(queue_name => 'CQ', queue_payload_type => 'RAW', queue_properties => qp);
        END;""")
    with pytest.raises(sluice.DatabaseError, match="PLS-00302: component 'SHARD_NUM'"):
        cur.execute("DECLARE qp DBMS_AQADM.QUEUE_PROPS_T; BEGIN qp.shard_num := 4; END;")
    assert _queues(conn, "CQ") == []
    # Python: the same record
    conn.aqadm.create_sharded_queue(queue_name="CQ", queue_payload_type="RAW",
                                    queue_properties=conn.aqadm.QUEUE_PROPS_T(retention_time=-1))
    assert rows(conn, "SELECT RETENTION FROM USER_QUEUES WHERE NAME = 'CQ'") == [("FOREVER",)]


def test_the_queue_survives_reopening_the_store(dsn):
    conn = sluice.connect(dsn)
    conn.cursor().execute(USER_GUIDE)
    conn.aqadm.set_queue_parameter("RAW_SHQ", "SHARD_NUM", 3)
    conn.queue("RAW_SHQ").enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    conn.close()
    conn = sluice.connect(dsn)
    try:
        assert _queues(conn, "RAW_SHQ") == [("RAW_SHQ", "RAW_SHQ", "NORMAL_QUEUE", "TRUE")]
        assert conn.aqadm.get_queue_parameter("RAW_SHQ", "SHARD_NUM") == 3
        assert _nowait(conn.queue("RAW_SHQ")).deqone().payload == b"kept"
        raises_ora(24205, conn.aqadm.drop_queue_table, "RAW_SHQ")
    finally:
        conn.close()


def test_an_older_store_shows_sharded_false(dsn):
    """Schema 16 showed DBA_QUEUES.SHARDED as 'NO'; the upgrade to 17 shows Oracle's
    'TRUE' / 'FALSE'."""
    from sluice.store.sqlschema import SCHEMA_VERSION
    conn = sluice.connect(dsn)
    make_queue(conn, "CQ")
    conn.close()
    old = ("SELECT Q.OWNER, Q.NAME, T.NAME AS QUEUE_TABLE, Q.QID, Q.QUEUE_TYPE, Q.MAX_RETRIES, "
           "Q.RETRY_DELAY, 'YES' AS ENQUEUE_ENABLED, 'YES' AS DEQUEUE_ENABLED, '0' AS RETENTION, "
           "Q.USER_COMMENT, CAST(NULL AS TEXT) AS NETWORK_NAME, 'NO' AS SHARDED, "
           "'PERSISTENT' AS QUEUE_CATEGORY, T.MULTIPLE_CONSUMERS AS RECIPIENTS_MULTIPLE "
           "FROM AQ_QUEUES Q JOIN AQ_QUEUE_TABLES T ON T.QT_ID = Q.QT_ID")
    old_user = ("SELECT NAME, QUEUE_TABLE, QID, QUEUE_TYPE, MAX_RETRIES, RETRY_DELAY, ENQUEUE_ENABLED, "
                "DEQUEUE_ENABLED, RETENTION, USER_COMMENT, NETWORK_NAME FROM DBA_QUEUES "
                "WHERE OWNER = current_setting('sluice.user', true)")
    replace = ["DROP VIEW DBA_QUEUES", f"CREATE VIEW DBA_QUEUES AS {old}"] if dsn.startswith("sqlite:") \
        else ["DROP VIEW USER_QUEUES", f"CREATE OR REPLACE VIEW DBA_QUEUES AS {old}",
              f"CREATE VIEW USER_QUEUES AS {old_user}"]   # (SQLite makes USER_ views per connection)
    _raw(dsn, [*replace, "UPDATE SLUICE_META SET VALUE = '16' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert rows(conn, "SELECT NAME, SHARDED FROM DBA_QUEUES WHERE NAME = 'CQ'") == [("CQ", "FALSE")]
        assert rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
        conn.aqadm.create_sharded_queue(queue_name="TQ", queue_payload_type="RAW")
        assert rows(conn, "SELECT SHARDED FROM USER_QUEUES WHERE NAME = 'TQ'") == [("TRUE",)]
    finally:
        conn.close()
