"""Seed 003 "Multiconsumer Dequeuing", "Queue Subscribers", "Message Recipients",
"Publish/Subscribe", "Third-Party Support" — issue 6, persistent messaging."""

import time

import pytest

import sluice
from tests.conftest import nowait, table_rows, wait_until
from tests.sqlhelpers import raised_code

A = sluice.Agent


@pytest.fixture
def topic(conn):
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT", max_retries=1)
    conn.aqadm.start_queue(queue_name="T")
    return conn.queue("T")


def _take(conn, consumer, **opts):
    q = nowait(conn.queue("T"), navigation=sluice.DEQ_FIRST_MSG)
    q.deqoptions.consumername = consumer
    for k, v in opts.items():
        setattr(q.deqoptions, k, v)
    got = [m.payload for m in q.deqmany(100)]
    conn.commit()
    return got


def test_seed_003_publish_subscribe_example(conn, topic):
    """Figure 1-8: B subscribes with "priority = 1", C with "priority > 1", D with
    "priority = 3"; messages of priorities 1, 2, 3: B gets one, C two, D one."""
    for name, rule in (("B", "priority = 1"), ("C", "priority > 1"), ("D", "priority = 3")):
        conn.aqadm.add_subscriber(queue_name="T", subscriber=A(name), rule=rule)
    for p in (1, 2, 3):
        topic.enqone(conn.msgproperties(payload=f"p{p}".encode(), priority=p))
    conn.commit()
    assert _take(conn, "B") == [b"p1"]
    assert _take(conn, "C") == [b"p2", b"p3"]
    assert _take(conn, "D") == [b"p3"]


def test_recipient_list_overrides_subscribers(conn, topic):
    """Figure 1-4: an explicit recipient that is not a subscriber gets the message;
    the subscribers do not."""
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("B"))
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("C"))
    topic.enqone(conn.msgproperties(payload=b"letter", recipients=[A("D")]))
    topic.enqone(conn.msgproperties(payload=b"magazine"))
    conn.commit()
    assert _take(conn, "D") == [b"letter"]
    assert _take(conn, "B") == [b"magazine"]
    assert _take(conn, "C") == [b"magazine"]


def test_python_oracledb_style_recipient_names(conn, topic):
    topic.enqone(conn.msgproperties(payload=b"x", recipients=["app1", "app2"]))
    conn.commit()
    assert _take(conn, "APP1") == [b"x"]
    assert _take(conn, "app2") == [b"x"]


def test_subscriber_sees_only_messages_enqueued_after_it_subscribed(conn, topic):
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("EARLY"))
    topic.enqone(conn.msgproperties(payload=b"before"))
    conn.commit()
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("LATE"))
    topic.enqone(conn.msgproperties(payload=b"after"))
    conn.commit()
    assert _take(conn, "EARLY") == [b"before", b"after"]
    assert _take(conn, "LATE") == [b"after"]


def test_message_processed_only_when_every_consumer_dequeued_it(conn, topic):
    topic.enqone(conn.msgproperties(payload=b"m", recipients=[A("X"), A("Y")]))
    conn.commit()
    conn.aqadm.alter_queue(queue_name="T", retention_time=3600)
    assert _take(conn, "X") == [b"m"]
    rows = table_rows(conn, "T_QT", "CONSUMER_NAME, MSG_STATE")
    assert sorted(rows) == [("X", "PROCESSED"), ("Y", "READY")]
    assert _take(conn, "X") == []
    assert _take(conn, "Y") == [b"m"]
    assert sorted(table_rows(conn, "T_QT", "CONSUMER_NAME, MSG_STATE")) == [
        ("X", "PROCESSED"), ("Y", "PROCESSED")]


def test_errors(conn, topic):
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("B"), rule="priority = 5")
    assert raised_code(lambda: conn.aqadm.add_subscriber(queue_name="T", subscriber=A("b"))) == "ORA-24034"
    assert raised_code(lambda: conn.aqadm.remove_subscriber(queue_name="T", subscriber=A("NOPE"))) == "ORA-24035"
    conn.aqadm.create_queue_table(queue_table="S_QT", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="S", queue_table="S_QT")
    assert raised_code(lambda: conn.aqadm.add_subscriber(queue_name="S", subscriber=A("B"))) == "ORA-24039"
    assert raised_code(lambda: conn.aqadm.add_subscriber(queue_name="AQ$_T_QT_E", subscriber=A("B"))) == "ORA-24039"
    assert raised_code(lambda: conn.aqadm.add_subscriber(queue_name="T", subscriber=A("C"),
                                                   rule="no_such_column = 1")) == "ORA-00904"
    assert raised_code(lambda: topic.enqone(conn.msgproperties(payload=b"x", priority=1))) == "ORA-24033"
    assert raised_code(lambda: topic.enqone(conn.msgproperties(payload=b"x", recipients=[A("R"), A("r")]))) \
        == "ORA-25232"
    assert raised_code(lambda: topic.enqone(conn.msgproperties(payload=b"x", recipients=[A("bad name")]))) \
        == "ORA-24047"
    assert raised_code(lambda: topic.enqone(conn.msgproperties(payload=b"x", recipients=[A(None, None)]))) \
        == "ORA-25216"
    assert raised_code(lambda: nowait(conn.queue("T")).deqone()) == "ORA-25231"
    conn.commit()
    assert table_rows(conn, "T_QT") == []
    assert [a.name for a in conn.aqadm.queue_subscribers("T")] == ["B"]


def test_consumer_changed_without_first_message_raises_25242(conn, topic):
    topic.enqmany([conn.msgproperties(payload=b"1", recipients=["A1", "A2"]),
                   conn.msgproperties(payload=b"2", recipients=["A1", "A2"])])
    conn.commit()
    q = nowait(conn.queue("T"), mode=sluice.DEQ_BROWSE)
    q.deqoptions.consumername = "A1"
    assert q.deqone().payload == b"1"
    q.deqoptions.consumername = "A2"
    assert raised_code(q.deqone) == "ORA-25242"
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().payload == b"1"


def test_a_record_out_of_retries_moves_once_the_others_are_consumed(conn, topic):
    """X's record gives up (max_retries 1) while Y's is READY: nothing moves yet; once Y
    dequeues and commits, X's record is all that is left of the message and it goes to the
    exception queue, once (the check a consumer's commit makes, batch of two messages)."""
    for payload in (b"a", b"b"):
        topic.enqone(conn.msgproperties(payload=payload, recipients=["X", "Y"]))
    conn.commit()
    q = nowait(conn.queue("T"), navigation=sluice.DEQ_FIRST_MSG)
    q.deqoptions.consumername = "X"
    for _ in (0, 1):
        assert len(q.deqmany(10)) == 2
        conn.rollback()
    assert q.deqone() is None
    q.deqoptions.consumername = "Y"
    assert sorted(table_rows(conn, "T_QT", "QUEUE, CONSUMER_NAME, MSG_STATE")) == [
        ("T", "X", "EXPIRED"), ("T", "X", "EXPIRED"), ("T", "Y", "READY"), ("T", "Y", "READY")]
    assert [m.payload for m in q.deqmany(10)] == [b"a", b"b"]
    conn.commit()
    assert table_rows(conn, "T_QT", "QUEUE, CONSUMER_NAME, MSG_STATE, EXPIRATION_REASON") == [
        ("AQ$_T_QT_E", None, "EXPIRED", "MAX_RETRY_EXCEEDED")] * 2


def test_retries_are_counted_per_recipient(conn, topic):
    """max_retries 1: X fails twice (its record gives up), Y still gets the message; the
    exception queue gets it only when no recipient can dequeue it any more."""
    topic.enqone(conn.msgproperties(payload=b"m", recipients=["X", "Y"]))
    conn.commit()
    q = nowait(conn.queue("T"), navigation=sluice.DEQ_FIRST_MSG)
    q.deqoptions.consumername = "X"
    for attempt in (0, 1):
        assert q.deqone().attempts == attempt
        conn.rollback()
    assert q.deqone() is None
    assert sorted(table_rows(conn, "T_QT", "QUEUE, CONSUMER_NAME, MSG_STATE")) == [
        ("T", "X", "EXPIRED"), ("T", "Y", "READY")]
    q.deqoptions.consumername = "Y"
    assert q.deqone().attempts == 0          # Y's own count
    conn.rollback()
    assert q.deqone().attempts == 1
    conn.rollback()                          # Y gives up too: now the message moves, once
    assert table_rows(conn, "T_QT", "QUEUE, CONSUMER_NAME, MSG_STATE, EXPIRATION_REASON") == [
        ("AQ$_T_QT_E", None, "EXPIRED", "MAX_RETRY_EXCEEDED")]


def test_expired_message_goes_to_exception_queue_once_with_null_consumer(conn, topic):
    topic.enqone(conn.msgproperties(payload=b"m", recipients=["X", "Y", "Z"], expiration=1))
    conn.commit()
    assert _take(conn, "X") == [b"m"]
    assert wait_until(lambda: table_rows(conn, "T_QT", "QUEUE") == [("AQ$_T_QT_E",)])
    assert _take(conn, "Y") == []            # intended recipients cannot dequeue it any more
    conn.aqadm.start_queue(queue_name="AQ$_T_QT_E", enqueue=False)
    eq = nowait(conn.queue("AQ$_T_QT_E"))
    got = eq.deqmany(10)                     # NULL consumer name, exactly once
    assert [m.payload for m in got] == [b"m"] and got[0].state == sluice.MSG_EXPIRED
    conn.commit()
    assert eq.deqmany(10) == []


def test_removing_a_subscriber_removes_its_pending_messages(conn, topic):
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("KEEP"))
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("GONE"))
    topic.enqmany([conn.msgproperties(payload=b"1"), conn.msgproperties(payload=b"2")])
    conn.commit()
    conn.aqadm.remove_subscriber(queue_name="T", subscriber=A("GONE"))
    assert {r[0] for r in table_rows(conn, "T_QT", "CONSUMER_NAME")} == {"KEEP"}
    assert _take(conn, "GONE") == []
    assert _take(conn, "KEEP") == [b"1", b"2"]


def test_third_party_protocol_recipients(conn, topic):
    """Protocols 128-255: dequeued by the reserved consumer AQ$_P<n>, with the recipient list."""
    topic.enqone(conn.msgproperties(payload=b"mq", recipients=[A("M1", "queue.manager.1", 128),
                                                                A("M2", "queue.manager.2", 128)]))
    conn.commit()
    q = nowait(conn.queue("T"))
    q.deqoptions.consumername = "AQ$_P128"
    m = q.deqone()
    assert m.payload == b"mq"
    assert m.recipients == [A("M1", "queue.manager.1", 128), A("M2", "queue.manager.2", 128)]
    conn.commit()


def test_remote_recipients_are_kept_for_propagation(conn, topic):
    topic.enqone(conn.msgproperties(payload=b"far", recipients=[A("R1", "inbox_q@site2"),
                                                                 A(None, "other_q")]))
    conn.commit()
    rows = sorted(table_rows(conn, "T_QT", "CONSUMER_NAME, ADDRESS, PROTOCOL"), key=str)
    assert rows == sorted([("R1", "SLUICE.INBOX_Q@SITE2", None), (None, "SLUICE.OTHER_Q", None)], key=str)
    assert _take(conn, "R1") == []           # not a local consumer


def test_subscriber_transformation_applies_at_dequeue(conn, topic):
    sluice.register_function("sluice.shout", lambda raw: raw.upper())
    conn.transform.create_transformation(schema="sluice", name="shouting", from_schema="sys",
                                         from_type="RAW", to_schema="sys", to_type="RAW",
                                         transformation="sluice.shout(source.user_data)")
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("LOUD"), transformation="shouting")
    conn.aqadm.add_subscriber(queue_name="T", subscriber=A("QUIET"))
    topic.enqone(conn.msgproperties(payload=b"hello"))
    conn.commit()
    assert _take(conn, "LOUD") == [b"HELLO"]
    assert _take(conn, "QUIET") == [b"hello"]


def test_rule_on_payload_content(conn):
    conn.aqadm.create_queue_table(queue_table="J_QT", queue_payload_type="JSON", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="J", queue_table="J_QT")
    conn.aqadm.start_queue(queue_name="J")
    conn.aqadm.add_subscriber(queue_name="J", subscriber=A("BIG"), rule="tab.user_data.amount > 1000")
    conn.aqadm.add_subscriber(queue_name="J", subscriber=A("ALL"))
    q = conn.queue("J", "JSON")
    q.enqmany([conn.msgproperties(payload={"amount": a}) for a in (10, 5000)])
    conn.commit()
    q = nowait(conn.queue("J", "JSON"))
    q.deqoptions.consumername = "BIG"
    assert [m.payload["amount"] for m in q.deqmany(10)] == [5000]
    q.deqoptions.consumername = "ALL"
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert [m.payload["amount"] for m in q.deqmany(10)] == [10, 5000]
    conn.commit()


def test_concurrent_dequeuers_of_one_consumer_skip_each_other(conn, conn2, topic):
    topic.enqmany([conn.msgproperties(payload=str(i).encode(), recipients=["W"]) for i in range(4)])
    conn.commit()
    a = nowait(conn.queue("T"))
    a.deqoptions.consumername = "W"
    b = nowait(conn2.queue("T"))
    b.deqoptions.consumername = "W"
    got_a = [m.payload for m in a.deqmany(2)]
    got_b = [m.payload for m in b.deqmany(10)]
    assert sorted(got_a + got_b) == [b"0", b"1", b"2", b"3"] and not set(got_a) & set(got_b)
    conn.commit()
    conn2.commit()
