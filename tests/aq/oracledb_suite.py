"""What python-oracledb's own AQ tests (its tests/aq/test_1000 … test_1700) stand on,
for our retelling of them in tests/aq/test_oracledb_suite_*.py.

python-oracledb's test schema (its tests/sql/create_schema.sql and create_schema_21.sql)
makes an object type UDT_BOOK (title, authors, price), a RAW queue TEST_RAW_QUEUE in
RAW_QUEUE_TAB, an object queue TEST_BOOK_QUEUE in BOOK_QUEUE_TAB, a JSON queue
TEST_JSON_QUEUE in JSON_QUEUE_TAB and a multi-consumer object queue BOOK_QUEUE_MULTI
(in BOOK_QUEUE_MULTI_TAB) with one subscriber, Sub1.  Its sharded queues (Transactional
Event Queues) and its transformations (used only by Thick-mode tests) are left out.
The statements below make the same objects the way an Oracle script would, through
``import sluice as oracledb``; each test gets a fresh store, so the queues start empty
(python-oracledb empties them before each test).
"""

import threading

import pytest

import sluice as oracledb

SCHEMA = [
    "CREATE TYPE udt_Book AS OBJECT (Title VARCHAR2(100), Authors VARCHAR2(100), Price NUMBER(5,2))",
    """BEGIN
         dbms_aqadm.create_queue_table('BOOK_QUEUE_TAB', 'UDT_BOOK');
         dbms_aqadm.create_queue('TEST_BOOK_QUEUE', 'BOOK_QUEUE_TAB');
         dbms_aqadm.start_queue('TEST_BOOK_QUEUE');
         dbms_aqadm.create_queue_table('RAW_QUEUE_TAB', 'RAW');
         dbms_aqadm.create_queue('TEST_RAW_QUEUE', 'RAW_QUEUE_TAB');
         dbms_aqadm.start_queue('TEST_RAW_QUEUE');
         dbms_aqadm.create_queue_table('BOOK_QUEUE_MULTI_TAB', 'UDT_BOOK', multiple_consumers => TRUE);
         dbms_aqadm.create_queue('BOOK_QUEUE_MULTI', 'BOOK_QUEUE_MULTI_TAB');
         dbms_aqadm.start_queue('BOOK_QUEUE_MULTI');
         dbms_aqadm.add_subscriber('BOOK_QUEUE_MULTI', sys.aq$_agent('Sub1', NULL, NULL));
         dbms_aqadm.create_queue_table('JSON_QUEUE_TAB', 'JSON');
         dbms_aqadm.create_queue('TEST_JSON_QUEUE', 'JSON_QUEUE_TAB');
         dbms_aqadm.start_queue('TEST_JSON_QUEUE');
       END;""",
]


@pytest.fixture
def suite_dsn(dsn):
    """A store holding python-oracledb's AQ test schema."""
    with oracledb.connect(dsn) as maker:
        cursor = maker.cursor()
        for statement in SCHEMA:
            cursor.execute(statement)
    return dsn


@pytest.fixture
def conn(suite_dsn):
    """The session a test works in (python-oracledb's ``conn`` fixture)."""
    with oracledb.connect(suite_dsn) as connection:
        yield connection


@pytest.fixture
def other_conn(suite_dsn):
    """A second session on the same store (python-oracledb's ``test_env.get_connection()``)."""
    with oracledb.connect(suite_dsn) as connection:
        yield connection


def round_trips(obj, name, value):
    """Setting attribute ``name`` of ``obj`` to ``value`` reads back the same value."""
    setattr(obj, name, value)
    assert getattr(obj, name) == value


# The read-write dequeue options and a value for each (python-oracledb reads back what it
# was given; "visibility" given an ENQ_ constant: the DEQ_ one has the same value).
DEQ_OPTION_VALUES = [
    ("condition", "TEST_CONDITION"),
    ("consumername", "TEST_CONSUMERNAME"),
    ("correlation", "TEST_CORRELATION"),
    ("mode", oracledb.DEQ_LOCKED),
    ("navigation", oracledb.DEQ_NEXT_TRANSACTION),
    ("transformation", "TEST_TRANSFORMATION"),
    ("visibility", oracledb.ENQ_IMMEDIATE),
    ("wait", 1287),
    ("msgid", b"mID"),
]

# The read-write message properties and a value for each, before any enqueue.
MSG_PROPERTY_VALUES = [
    ("correlation", "TEST_CORRELATION"),
    ("delay", 60),
    ("exceptionq", "TEST_EXCEPTIONQ"),
    ("expiration", 30),
    ("priority", 1),
]


def check_new_message_properties(props):
    """What a new MessageProperties holds and lets change (python-oracledb's 1007, 1406,
    1506, 1606, 1706 alike): nothing attempted, READY, no delivery mode yet, no enqueue time."""
    for name, value in MSG_PROPERTY_VALUES:
        round_trips(props, name, value)
    assert props.attempts == 0
    assert props.state == oracledb.MSG_READY
    assert props.deliverymode == 0
    assert props.enqtime is None


def drain(queue):
    """Dequeue until the queue gives nothing; the payloads in order."""
    payloads = []
    while (props := queue.deqone()) is not None:
        payloads.append(props.payload)
    return payloads


def check_one_props_many_payloads(conn, queue, payloads):
    """One MessageProperties, its payload changed before each enqueue: the messages dequeue
    (FIRST_MESSAGE, no wait) equal to the payloads, in enqueue order (1401, 1601)."""
    props = conn.msgproperties()
    for payload in payloads:
        props.payload = payload
        queue.enqone(props)
    conn.commit()
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert drain(queue) == payloads
    conn.commit()


def check_enqtime(queue, props):
    """Enqueue ``props`` and dequeue it: its enqtime is the second of the enqueue
    (python-oracledb's 1021, 1115, 1415, 1515, 1612, 1712), the clock read as
    python-oracledb reads it: ``select current_timestamp from dual``, a naive datetime."""
    cursor = queue.connection.cursor()
    cursor.execute("select current_timestamp from dual")
    (start,) = cursor.fetchone()
    queue.enqone(props)
    got = queue.deqone()
    cursor.execute("select current_timestamp from dual")
    (end,) = cursor.fetchone()
    assert start.replace(microsecond=0) <= got.enqtime <= end.replace(microsecond=0)


# -- what python-oracledb's RAW, JSON and object queue tests each check, for any payload --

def other_queue(session, name, payload_type=None):
    """``name`` in another session, as python-oracledb's tests open it there: first
    message, no wait."""
    q = session.queue(name, payload_type)
    q.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    q.deqoptions.wait = oracledb.DEQ_NO_WAIT
    return q


def check_waiting_dequeue(dsn, open_queue, conn, queue, payload):
    """A session in another thread waits up to 10 s in deqone; what this session then
    enqueues and commits reaches it.  ``open_queue(session)`` opens the queue there.
    The waiter's payloads."""
    got = []

    def wait_for_one():
        with oracledb.connect(dsn) as other:
            q = open_queue(other)
            q.deqoptions.wait = 10
            props = q.deqone()
            if props is not None:
                got.append(props.payload)
            other.commit()

    waiter = threading.Thread(target=wait_for_one)
    waiter.start()
    queue.enqone(conn.msgproperties(payload=payload))
    conn.commit()
    waiter.join()
    return got


def check_on_commit_enqueue(conn, queue, other, payload):
    """An ENQ_ON_COMMIT message is not there for another session (its queue ``other``)
    until the enqueuer commits."""
    queue.enqoptions.visibility = oracledb.ENQ_ON_COMMIT
    queue.enqone(conn.msgproperties(payload=payload))
    assert other.deqone() is None
    conn.commit()
    assert other.deqone() is not None


def check_immediate_enqueue(conn, queue, other, payload):
    """An ENQ_IMMEDIATE message is there for another session dequeuing ON_COMMIT without
    the enqueuer's commit; the payload it gets."""
    queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
    queue.enqone(conn.msgproperties(payload=payload))
    other.deqoptions.visibility = oracledb.DEQ_ON_COMMIT
    got = other.deqone().payload
    other.connection.commit()
    return got


def check_condition_on_priority(conn, queue, payload):
    """Of nine messages, the three of priority 9 answer the condition "priority = 9"."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    for priority in (5, 5, 5, 5, 10, 9, 9, 10, 9):
        queue.enqone(conn.msgproperties(payload=payload, priority=priority))
    queue.deqoptions.condition = "priority = 9"
    assert len(drain(queue)) == 3
    conn.commit()


def check_correlation_option(conn, queue, payload):
    """A correlation picks the two messages that carry it exactly (not those whose
    correlation is a prefix of it)."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    for correlation in ("sample", "sample correlation", "sample", "sample", "sample correlation"):
        queue.enqone(conn.msgproperties(payload=payload, correlation=correlation))
    conn.commit()
    queue.deqoptions.correlation = "sample correlation"
    assert len(drain(queue)) == 2
    conn.commit()


def check_msgid_option(conn, queue, payload):
    """One MessageProperties enqueued three times; its msgid after the second enqueue
    picks that message."""
    props = conn.msgproperties(payload=payload)
    queue.enqone(props)
    queue.enqone(props)
    conn.commit()
    second = props.msgid
    queue.enqone(props)
    conn.commit()
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.msgid = second
    assert queue.deqone().msgid == second
    conn.commit()


def check_msgid_is_stored(dsn, conn, queue, table, payload):
    """msgid is None before the enqueue, then the MSGID the queue table holds for the
    message; the dequeued message has it too."""
    props = conn.msgproperties(payload=payload)
    assert props.msgid is None
    queue.enqone(props)
    if dsn.startswith("sqlite"):
        # Sluice's SQLite store keeps a session's uncommitted enqueues out of the table until
        # commit (docs/DESIGN-NOTES.md); Oracle and the PostgreSQL store show them at once
        conn.commit()
    cursor = conn.cursor()
    cursor.execute(f"select msgid from {table}")
    (stored,) = cursor.fetchone()
    assert props.msgid == stored
    assert queue.deqone().msgid == stored


def check_declared_properties(conn, queue, payload, enqueue=True, **declared):
    """The payload and properties given to msgproperties() read back, before the enqueue
    and (``enqueue``) on the dequeued message."""
    declared["payload"] = payload
    props = conn.msgproperties(**declared)
    assert {name: getattr(props, name) for name in declared} == declared
    if enqueue:
        queue.enqone(props)
        conn.commit()
        got = queue.deqone()
        assert {name: getattr(got, name) for name in declared} == declared


def check_options(queue):
    """The dequeue options and the enqueue visibility read back what they were set to;
    deliverymode is write-only on both."""
    for name, value in DEQ_OPTION_VALUES:
        round_trips(queue.deqoptions, name, value)
    round_trips(queue.enqoptions, "visibility", oracledb.ENQ_IMMEDIATE)
    for options in (queue.enqoptions, queue.deqoptions):
        with pytest.raises(AttributeError):
            options.deliverymode


# (enqueue delivery mode, dequeue delivery mode, the dequeued message's or None: nothing)
DELIVERY_MODES = [
    (oracledb.MSG_BUFFERED, oracledb.MSG_BUFFERED, oracledb.MSG_BUFFERED),
    (oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT),
    # "persistent or buffered" enqueues a persistent message
    (oracledb.MSG_PERSISTENT_OR_BUFFERED, oracledb.MSG_PERSISTENT_OR_BUFFERED, oracledb.MSG_PERSISTENT),
    (oracledb.MSG_BUFFERED, oracledb.MSG_PERSISTENT, None),
]
DELIVERY_MODE_IDS = ["buffered", "persistent", "either", "different"]


def check_delivery_modes(conn, queue, other, payload, enq_mode, deq_mode, found_mode):
    """An immediate enqueue in one delivery mode, a dequeue from another session (its queue
    ``other``) asking for one: found when they agree, with the message's mode; nothing when
    they differ.  The payload found, or None."""
    queue.enqoptions.deliverymode = enq_mode
    queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
    queue.enqone(conn.msgproperties(payload=payload))
    other.deqoptions.deliverymode = deq_mode
    other.deqoptions.visibility = oracledb.DEQ_IMMEDIATE
    props = other.deqone()
    other.connection.commit()
    if found_mode is None:
        assert props is None
        return None
    assert props.deliverymode == found_mode
    return props.payload
