"""python-oracledb's own tests of RAW queues (its tests/aq/test_1400_raw.py), retold in our
words against Sluice: ``import sluice as oracledb``, the schema of tests/aq/oracledb_suite.py,
both backends.  Each test names the python-oracledb test it retells."""

import pytest

import sluice as oracledb
from tests.aq.oracledb_suite import (DELIVERY_MODE_IDS, DELIVERY_MODES, DEQ_OPTION_VALUES,  # noqa: F401
                                     check_one_props_many_payloads, check_condition_on_priority, check_delivery_modes,
                                     check_correlation_option, check_declared_properties, check_enqtime,
                                     check_immediate_enqueue, check_msgid_is_stored, check_msgid_option,
                                     check_new_message_properties, check_on_commit_enqueue,
                                     check_waiting_dequeue, conn, other_conn, other_queue,
                                     round_trips, suite_dsn)

SAMPLES = [f"sample raw data {i}".encode() for i in range(1, 7)]


@pytest.fixture
def queue(conn):  # noqa: F811
    return conn.queue("TEST_RAW_QUEUE")


def test_empty_queue_gives_none(queue):
    """python-oracledb tests/aq/test_1400_raw.py 1400: a no-wait dequeue of an empty RAW
    queue returns None."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert queue.deqone() is None


def test_messages_come_back_in_order(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1401: one MessageProperties, its payload
    changed before each enqueue, gives six messages that dequeue in enqueue order."""
    check_one_props_many_payloads(conn, queue, SAMPLES)


def test_remove_nodata_gives_an_empty_raw_payload(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1402: DEQ_REMOVE_NODATA takes the message
    and hands back an empty bytes payload."""
    queue.enqone(conn.msgproperties(payload=SAMPLES[1]))
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.mode = oracledb.DEQ_REMOVE_NODATA
    props = queue.deqone()
    assert props is not None and props.payload == b""


def test_dequeue_options_read_back(queue):
    """python-oracledb tests/aq/test_1400_raw.py 1403: every read-write dequeue option reads
    back the value it was set to."""
    for name, value in DEQ_OPTION_VALUES:
        round_trips(queue.deqoptions, name, value)


def test_enqueue_visibility_reads_back(queue):
    """python-oracledb tests/aq/test_1400_raw.py 1404."""
    round_trips(queue.enqoptions, "visibility", oracledb.ENQ_IMMEDIATE)


def test_a_waiting_dequeue_gets_a_later_commit(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1405: a session in another thread waits up
    to 10 s in deqone; the message this session then enqueues and commits reaches it."""
    assert check_waiting_dequeue(suite_dsn, lambda other: other.queue("TEST_RAW_QUEUE"),
                                 conn, queue, SAMPLES[0]) == [SAMPLES[0]]


def test_new_message_properties(conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1406: a new MessageProperties lets its
    properties be set and read; attempts 0, state MSG_READY, deliverymode 0, enqtime None."""
    check_new_message_properties(conn.msgproperties())


def test_on_commit_enqueue_is_unseen_until_commit(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1407: an ENQ_ON_COMMIT message is not there
    for another session until the enqueuer commits."""
    check_on_commit_enqueue(conn, queue, other_queue(other_conn, "TEST_RAW_QUEUE"), SAMPLES[0])


def test_immediate_enqueue_is_seen_at_once(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1408: an ENQ_IMMEDIATE message is there for
    another session (dequeuing ON_COMMIT) without the enqueuer's commit."""
    other = other_queue(other_conn, "TEST_RAW_QUEUE")
    assert check_immediate_enqueue(conn, queue, other, SAMPLES[0]) == SAMPLES[0]


@pytest.mark.parametrize("enq_mode, deq_mode, found_mode", DELIVERY_MODES, ids=DELIVERY_MODE_IDS)
def test_delivery_modes(queue, conn, other_conn, enq_mode, deq_mode, found_mode):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1409-1412: an immediate enqueue in one
    delivery mode, a dequeue from another session asking for a delivery mode: found when
    they agree, with the message's mode; nothing when they differ."""
    other = other_queue(other_conn, "TEST_RAW_QUEUE")
    got = check_delivery_modes(conn, queue, other, SAMPLES[0], enq_mode, deq_mode, found_mode)
    assert got == (None if found_mode is None else SAMPLES[0])


def test_a_message_without_payload_is_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1413: DPY-2000."""
    with pytest.raises(oracledb.Error) as e:
        queue.enqone(conn.msgproperties())
    assert e.value.full_code == "DPY-2000"


def test_msgid_is_the_queue_tables_msgid(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1414: msgid is None before the enqueue,
    then the MSGID the queue table holds for the message; the dequeued message has it too."""
    check_msgid_is_stored(suite_dsn, conn, queue, "RAW_QUEUE_TAB", SAMPLES[0])


def test_enqtime_is_the_enqueue_second(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1415: a dequeued message's enqtime lies
    between the clock before and after, each cut to the second (the enqueue time is a DATE:
    whole seconds)."""
    check_enqtime(queue, conn.msgproperties(payload=SAMPLES[0]))


def test_declared_properties_survive_the_queue(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1416: payload, correlation, delay,
    exceptionq (a schema-qualified name), expiration and priority given to msgproperties()
    read back, before the enqueue and on the dequeued message."""
    check_declared_properties(conn, queue, SAMPLES[0], correlation="TEST_CORRELATION", delay=0,
                              exceptionq="PYTHONTEST.TEST_EXCEPTIONQ", expiration=15, priority=1)


def test_queue_name_and_connection(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1417."""
    assert queue.name == "TEST_RAW_QUEUE"
    assert queue.connection is conn


@pytest.mark.parametrize("options", ["enqoptions", "deqoptions"])
def test_deliverymode_is_write_only(queue, options):
    """python-oracledb tests/aq/test_1400_raw.py 1418: reading deliverymode of the enqueue or
    dequeue options raises AttributeError."""
    with pytest.raises(AttributeError):
        getattr(queue, options).deliverymode


def test_condition_on_priority(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1419: of nine messages, the three of
    priority 9 answer the condition "priority = 9"."""
    check_condition_on_priority(conn, queue, SAMPLES[0])


def test_correlation_option(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1420: a correlation picks the two messages
    that carry it exactly (not those whose correlation is a prefix of it)."""
    check_correlation_option(conn, queue, SAMPLES[0])


def test_msgid_option(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1421: one MessageProperties enqueued three
    times; its msgid after the second enqueue picks that message."""
    check_msgid_option(conn, queue, SAMPLES[0])


def test_payload_type_of_a_raw_queue_is_none(queue):
    """python-oracledb tests/aq/test_1400_raw.py 1422."""
    assert queue.payload_type is None


def test_deprecated_option_names(queue):
    """python-oracledb tests/aq/test_1400_raw.py 1423: enqOptions and deqOptions are the
    very objects enqoptions and deqoptions."""
    assert queue.enqOptions is queue.enqoptions
    assert queue.deqOptions is queue.deqoptions


def test_deprecated_method_names(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1424: enqOne and deqOne; msgproperties()
    takes the payload as its first positional argument."""
    queue.enqOne(conn.msgproperties(b"Test 7823"))
    assert queue.deqOne().payload == b"Test 7823"


def test_an_object_payload_is_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1425: a UDT_BOOK object into a RAW queue is
    DPY-2062 (the payload does not match the queue's payload type)."""
    book = conn.gettype("UDT_BOOK").newobject()
    with pytest.raises(oracledb.Error) as e:
        queue.enqone(conn.msgproperties(payload=book))
    assert e.value.full_code == "DPY-2062"


@pytest.mark.parametrize("name", ["condition", "consumername", "correlation", "msgid", "transformation"])
def test_dequeue_options_take_none(queue, name):
    """python-oracledb tests/aq/test_1400_raw.py 1426: each of these dequeue options, set,
    can be set back to None."""
    value = b"test - 7826" if name == "msgid" else "test - 7826"
    round_trips(queue.deqoptions, name, value)
    round_trips(queue.deqoptions, name, None)


def test_enqueue_transformation_takes_none(queue):
    """python-oracledb tests/aq/test_1400_raw.py 1427."""
    round_trips(queue.enqoptions, "transformation", "test - 7827")
    round_trips(queue.enqoptions, "transformation", None)


@pytest.mark.parametrize("name", ["correlation", "exceptionq"])
def test_message_properties_take_none(conn, name):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1428."""
    props = conn.msgproperties()
    round_trips(props, name, "test - 7828")
    round_trips(props, name, None)


def test_correlation_finds_a_buffered_message(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1429: a buffered message is found by its
    correlation."""
    queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
    queue.enqoptions.deliverymode = oracledb.MSG_BUFFERED
    queue.enqone(conn.msgproperties(payload=SAMPLES[0], correlation="sample"))
    conn.commit()
    queue.deqoptions.visibility = oracledb.DEQ_IMMEDIATE
    queue.deqoptions.deliverymode = oracledb.MSG_BUFFERED
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.correlation = "sample"
    assert queue.deqone().payload == SAMPLES[0]
    conn.commit()


@pytest.mark.parametrize("msgid", [b"invalid_msgid_123456789", b"short_msgid"], ids=["long", "short"])
def test_a_msgid_of_the_wrong_length_finds_nothing(queue, msgid):
    """python-oracledb tests/aq/test_1400_raw.py 1430, 1431: a msgid longer or shorter than
    16 bytes names no message: ORA-25263."""
    queue.deqoptions.msgid = msgid
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    with pytest.raises(oracledb.Error) as e:
        queue.deqone()
    assert e.value.full_code == "ORA-25263"


# (object, attribute, the longest value taken): UTF-8 bytes count, "€" is three of them
OPTION_LIMITS = [
    ("deqoptions", "consumername", "€" * 10),              # 30 bytes
    ("deqoptions", "correlation", "€" * 42 + "XX"),        # 128 bytes
    ("deqoptions", "transformation", "€" * 20 + "X"),      # 61 bytes
    ("enqoptions", "transformation", "€" * 20 + "X"),
]


@pytest.mark.parametrize("options, name, longest", OPTION_LIMITS,
                         ids=[f"{o}.{n}" for o, n, _ in OPTION_LIMITS])
def test_option_length_limits(queue, options, name, longest):
    """python-oracledb tests/aq/test_1400_raw.py 1432: consumer name up to 30 bytes,
    correlation up to 128, transformation up to 61 (UTF-8); one character more is DPY-2075
    and leaves the option as it was."""
    target = getattr(queue, options)
    setattr(target, name, longest)
    with pytest.raises(oracledb.Error) as e:
        setattr(target, name, longest + "X")
    assert e.value.full_code == "DPY-2075"
    assert getattr(target, name) == longest


PROPERTY_LIMITS = [("correlation", "€" * 42 + "XX"),   # 128 bytes
                   ("exceptionq", "€" * 17)]           # 51 bytes


@pytest.mark.parametrize("name, longest", PROPERTY_LIMITS, ids=[n for n, _ in PROPERTY_LIMITS])
def test_message_property_length_limits(conn, name, longest):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1433: correlation up to 128 bytes,
    exceptionq up to 51; one character more is DPY-2075."""
    props = conn.msgproperties()
    setattr(props, name, longest)
    with pytest.raises(oracledb.Error) as e:
        setattr(props, name, longest + "X")
    assert e.value.full_code == "DPY-2075"
    assert getattr(props, name) == longest


def test_recipient_length_limit(conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1433: a recipient name up to 30 bytes; one
    character more is DPY-2075."""
    props = conn.msgproperties()
    props.recipients = ["€" * 10]
    with pytest.raises(oracledb.Error) as e:
        props.recipients = ["€" * 10 + "X"]
    assert e.value.full_code == "DPY-2075"
    assert props.recipients == ["€" * 10]
