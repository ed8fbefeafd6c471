"""python-oracledb's own tests of JSON queues (its tests/aq/test_1600_json.py), retold in
our words against Sluice: ``import sluice as oracledb``, the schema of
tests/aq/oracledb_suite.py, both backends.  Each test names the python-oracledb test it
retells."""

import datetime
import decimal

import pytest

import sluice as oracledb
from tests.aq.oracledb_suite import (check_condition_on_priority, check_options,  # noqa: F401
                                     check_one_props_many_payloads, check_correlation_option, check_declared_properties, check_enqtime,
                                     check_immediate_enqueue, check_msgid_is_stored, check_msgid_option,
                                     check_new_message_properties, check_on_commit_enqueue,
                                     check_waiting_dequeue, conn, other_conn, other_queue, suite_dsn)

# JSON documents of every kind python-oracledb's JSON (OSON) carries: numbers, booleans,
# strings, bytes, dates and times, intervals, decimals, nested objects and arrays
DOCUMENTS = [
    [3.5, False, "Harbour Road", b"a few bytes", {"first": 2.0, "Second": "Perth"},
     datetime.datetime(2023, 3, 9, 0, 0)],
    [False, True, "Text", b"More Bytes", {}, {"nothing": None}, {"who": "Ada"}, {"years": 41},
     {"active": False},
     {"person": {"who": "Ada", "years": 41, "town": "Leeds", "active": True}},
     {"people": ["Ada", "Grace", "Alan"]},
     {"people": [{"p1": {"who": "Ada", "town": "Leeds"}}, {"p2": {"who": "Grace", "town": "York"}}]}],
    [datetime.datetime.today(), datetime.datetime(2005, 3, 2, 4, 5, 6),
     datetime.datetime(2021, 11, 3, 14, 30, 15), datetime.timedelta(days=7.25),
     datetime.datetime(2003, 1, 14, 10, 37, 0), oracledb.Timestamp(2003, 1, 14, 10, 37, 0),
     datetime.datetime(2003, 1, 14)],
    {"who": "Alan", "years": 41, "town": "Manchester"},
    [0, 1, 26.75, 7099454355, -8888888888888888888, decimal.Decimal("0.75"),
     decimal.Decimal("11.75"), decimal.Decimal("428549061343529401.384607")],
]
ONE = DOCUMENTS[0]


@pytest.fixture
def queue(conn):  # noqa: F811
    return conn.queue("TEST_JSON_QUEUE", "JSON")


def test_empty_queue_gives_none(queue):
    """python-oracledb tests/aq/test_1600_json.py 1600."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert queue.deqone() is None


def test_documents_come_back_as_enqueued(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1601: documents holding every JSON kind
    dequeue equal to what was enqueued, in order."""
    check_one_props_many_payloads(conn, queue, DOCUMENTS)


def test_remove_nodata_gives_no_document(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1602 (skipped there for an Oracle bug;
    what it expects): DEQ_REMOVE_NODATA takes the message and hands back no payload."""
    queue.enqone(conn.msgproperties(payload=DOCUMENTS[1]))
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.mode = oracledb.DEQ_REMOVE_NODATA
    props = queue.deqone()
    assert props is not None and props.payload is None


def test_options_of_a_json_queue(queue):
    """python-oracledb tests/aq/test_1600_json.py 1603, 1605, 1615: the dequeue options and
    the enqueue visibility read back what they were set to; deliverymode is write-only."""
    check_options(queue)


def test_a_waiting_dequeue_gets_a_later_commit(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1604."""
    assert check_waiting_dequeue(suite_dsn, lambda other: other.queue("TEST_JSON_QUEUE", "JSON"),
                                 conn, queue, ONE) == [ONE]


def test_new_message_properties(conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1606."""
    check_new_message_properties(conn.msgproperties())


def test_on_commit_enqueue_is_unseen_until_commit(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1607."""
    check_on_commit_enqueue(conn, queue, other_queue(other_conn, "TEST_JSON_QUEUE", "JSON"), ONE)


def test_immediate_enqueue_is_seen_at_once(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1608."""
    other = other_queue(other_conn, "TEST_JSON_QUEUE", "JSON")
    assert check_immediate_enqueue(conn, queue, other, ONE) == ONE


def test_persistent_both_ways(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1609: a persistent immediate enqueue is
    found by another session's persistent immediate dequeue (JSON queues take no buffered
    messages)."""
    queue.enqoptions.deliverymode = oracledb.MSG_PERSISTENT
    queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
    queue.enqone(conn.msgproperties(payload=ONE))
    other = other_queue(other_conn, "TEST_JSON_QUEUE", "JSON")
    other.deqoptions.deliverymode = oracledb.MSG_PERSISTENT
    other.deqoptions.visibility = oracledb.DEQ_IMMEDIATE
    assert other.deqone().payload == ONE
    other_conn.commit()


def test_a_message_without_payload_is_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1610: DPY-2000."""
    with pytest.raises(oracledb.Error) as e:
        queue.enqone(conn.msgproperties())
    assert e.value.full_code == "DPY-2000"


def test_msgid_is_the_queue_tables_msgid(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1611."""
    check_msgid_is_stored(suite_dsn, conn, queue, "JSON_QUEUE_TAB", ONE)


def test_enqtime_is_the_enqueue_second(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1612."""
    check_enqtime(queue, conn.msgproperties(payload=ONE))


def test_declared_properties_survive_the_queue(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1613."""
    check_declared_properties(conn, queue, ONE, correlation="TEST_CORRELATION", delay=0,
                              exceptionq="PYTHONTEST.TEST_EXCEPTIONQ", expiration=15, priority=1)


def test_queue_name_connection_and_payload_type(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1614, 1619: a JSON queue's payload_type
    is the string "JSON"."""
    assert queue.name == "TEST_JSON_QUEUE"
    assert queue.connection is conn
    assert queue.payload_type == "JSON"


def test_condition_on_priority(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1616."""
    check_condition_on_priority(conn, queue, ONE)


def test_correlation_option(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1617."""
    check_correlation_option(conn, queue, ONE)


def test_msgid_option(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1618."""
    check_msgid_option(conn, queue, ONE)


def test_deprecated_names(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1620, 1621."""
    assert queue.enqOptions is queue.enqoptions and queue.deqOptions is queue.deqoptions
    queue.enqOne(conn.msgproperties(payload=ONE))
    assert queue.deqOne().payload == ONE


def test_a_string_payload_is_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1600_json.py 1622: a JSON queue takes a dict or a
    list; a str is DPY-2062."""
    with pytest.raises(oracledb.Error) as e:
        queue.enqone(conn.msgproperties(payload="A string"))
    assert e.value.full_code == "DPY-2062"
