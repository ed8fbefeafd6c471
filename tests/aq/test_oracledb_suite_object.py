"""python-oracledb's own tests of object-type queues (its tests/aq/test_1000_dbobject.py),
retold in our words against Sluice: ``import sluice as oracledb``, the schema of
tests/aq/oracledb_suite.py (UDT_BOOK, TEST_BOOK_QUEUE, BOOK_QUEUE_MULTI), both backends.
Each test names the python-oracledb test it retells.

Left out: 1014 and 1015 (dequeue and enqueue transformations) run in python-oracledb's
Thick mode only; Thin mode, which we follow, has no transformations (Sluice's own are
tested in tests/aq/test_admin.py).  1020 (a notification's attributes) runs on a sharded
queue (Transactional Event Queues) there; its classic-queue twin is below.
"""

import decimal
import threading

import pytest

import sluice as oracledb
from tests.aq.oracledb_suite import (DELIVERY_MODE_IDS, DELIVERY_MODES, check_condition_on_priority,  # noqa: F401
                                     check_declared_properties, check_delivery_modes, check_options, check_enqtime, check_immediate_enqueue,
                                     check_msgid_is_stored, check_new_message_properties,
                                     check_on_commit_enqueue, check_waiting_dequeue, conn, drain,
                                     other_conn, other_queue, suite_dsn)

BOOKS = [
    ("Things Fall Apart", "Chinua Achebe", decimal.Decimal("12.25")),
    ("The Hobbit", "J.R.R. Tolkien", decimal.Decimal("9.50")),
    ("Dune", "Frank Herbert", decimal.Decimal("20.75")),
]


def _book(book_type, data=BOOKS[0]):
    book = book_type.newobject()
    book.TITLE, book.AUTHORS, book.PRICE = data
    return book


def _fields(book):
    return (book.TITLE, book.AUTHORS, book.PRICE)


@pytest.fixture
def book_type(conn):  # noqa: F811
    return conn.gettype("UDT_BOOK")


@pytest.fixture
def queue(conn, book_type):  # noqa: F811
    return conn.queue("TEST_BOOK_QUEUE", book_type)


def _open_in(session):
    return session.queue("TEST_BOOK_QUEUE", session.gettype("UDT_BOOK"))


def test_empty_queue_gives_none(queue):
    """python-oracledb tests/aq/test_1000_dbobject.py 1000."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert queue.deqone() is None


def test_books_come_back_in_order(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1001: one MessageProperties given a
    new book before each enqueue; the books dequeue in order, uncommitted, in the same
    session."""
    props = conn.msgproperties()
    for data in BOOKS:
        props.payload = _book(queue.payload_type, data)
        queue.enqone(props)
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert [_fields(book) for book in drain(queue)] == BOOKS
    conn.commit()


def test_remove_nodata_gives_an_empty_book(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1002: DEQ_REMOVE_NODATA hands back a
    book whose attributes are null."""
    queue.enqone(conn.msgproperties(payload=_book(queue.payload_type, BOOKS[1])))
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.mode = oracledb.DEQ_REMOVE_NODATA
    props = queue.deqone()
    assert props is not None and props.payload.TITLE is None


def test_options_of_an_object_queue(queue):
    """python-oracledb tests/aq/test_1000_dbobject.py 1003, 1005, 1026: the dequeue options
    and the enqueue visibility read back what they were set to; deliverymode is write-only."""
    check_options(queue)


def test_a_waiting_dequeue_gets_a_later_commit(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1004."""
    got = check_waiting_dequeue(suite_dsn, _open_in, conn, queue, _book(queue.payload_type))
    assert [_fields(book) for book in got] == [BOOKS[0]]


def test_enqueue_of_a_bare_object_is_a_type_error(queue):
    """python-oracledb tests/aq/test_1000_dbobject.py 1006: enqone wants a
    MessageProperties; a book alone is a TypeError."""
    with pytest.raises(TypeError):
        queue.enqone(queue.payload_type.newobject())


def test_new_message_properties(conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1007."""
    check_new_message_properties(conn.msgproperties())


def test_on_commit_enqueue_is_unseen_until_commit(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1008."""
    other = other_queue(other_conn, "TEST_BOOK_QUEUE", other_conn.gettype("UDT_BOOK"))
    check_on_commit_enqueue(conn, queue, other, _book(queue.payload_type))
    other_conn.commit()


def test_immediate_enqueue_is_seen_at_once(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1009."""
    other = other_queue(other_conn, "TEST_BOOK_QUEUE", other_conn.gettype("UDT_BOOK"))
    assert _fields(check_immediate_enqueue(conn, queue, other, _book(queue.payload_type))) == BOOKS[0]


@pytest.mark.parametrize("enq_mode, deq_mode, found_mode", DELIVERY_MODES, ids=DELIVERY_MODE_IDS)
def test_delivery_modes(queue, conn, other_conn, enq_mode, deq_mode, found_mode):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1010-1013: an immediate enqueue in one
    delivery mode, a dequeue from another session asking for one: found when they agree,
    with the message's mode ("persistent or buffered" enqueues persistent); nothing when
    they differ."""
    other = other_queue(other_conn, "TEST_BOOK_QUEUE", other_conn.gettype("UDT_BOOK"))
    got = check_delivery_modes(conn, queue, other, _book(queue.payload_type), enq_mode, deq_mode, found_mode)
    assert (got if got is None else _fields(got)) == (None if found_mode is None else BOOKS[0])


def test_payload_type_and_its_deprecated_name(queue, conn, book_type):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1016, 1031: payload_type (and
    payloadType) is the type the queue was opened with; naming both payload_type and
    payloadType is DPY-2014."""
    assert queue.payload_type == book_type and queue.payloadType == book_type
    assert conn.queue(queue.name, conn.gettype("UDT_BOOK")).payload_type == book_type
    with pytest.raises(oracledb.Error) as e:
        conn.queue(queue.name, book_type, payloadType=book_type)
    assert e.value.full_code == "DPY-2014"


def test_a_message_without_payload_is_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1017: DPY-2000."""
    with pytest.raises(oracledb.Error) as e:
        queue.enqone(conn.msgproperties())
    assert e.value.full_code == "DPY-2000"


def test_msgid_is_the_queue_tables_msgid(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1018."""
    check_msgid_is_stored(suite_dsn, conn, queue, "book_queue_tab", _book(queue.payload_type))


def test_recipients_name_the_consumers(conn, book_type):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1019: a message to the recipients
    sub2 and sub3 of the multi-consumer queue reaches sub3; the queue's subscriber Sub1,
    not among them, finds nothing."""
    queue = conn.queue("BOOK_QUEUE_MULTI", book_type)
    props = conn.msgproperties(payload=_book(book_type), recipients=["sub2", "sub3"])
    assert props.recipients == ["sub2", "sub3"]
    queue.enqone(props)
    conn.commit()
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    queue.deqoptions.consumername = "sub3"
    assert _fields(queue.deqone().payload) == BOOKS[0]
    queue.deqoptions.consumername = "sub1"
    assert queue.deqone() is None


def test_notification_of_an_enqueue(conn, suite_dsn, book_type):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1020, on the classic TEST_BOOK_QUEUE
    (there: a sharded queue): a subscription in the AQ namespace hears of a committed
    enqueue; the message it is given names the message (its msgid is the queue's ready
    message's), no consumer, the queue as '"OWNER"."QUEUE"', and is of type EVENT_AQ."""
    queue = conn.queue("TEST_BOOK_QUEUE", book_type)
    heard, seen = threading.Event(), []

    def callback(message):
        seen.append((message.msgid, message.consumer_name, message.queue_name, message.type))
        heard.set()

    listener = oracledb.connect(suite_dsn, events=True)
    sub = listener.subscribe(namespace=oracledb.SUBSCR_NAMESPACE_AQ, name=queue.name, timeout=300,
                             callback=callback, client_initiated=True)
    props = conn.msgproperties(payload=_book(book_type))
    queue.enqone(props)
    conn.commit()
    assert heard.wait(5)
    listener.unsubscribe(sub)
    listener.close()
    owner = conn.username.upper()
    assert seen == [(props.msgid, None, f'"{owner}"."TEST_BOOK_QUEUE"', oracledb.EVENT_AQ)]


def test_enqtime_is_the_enqueue_second(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1021 (an empty book)."""
    check_enqtime(queue, conn.msgproperties(payload=queue.payload_type.newobject()))


def test_declared_properties(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1022: read back before any enqueue."""
    check_declared_properties(conn, queue, queue.payload_type.newobject(), enqueue=False,
                              correlation="TEST_CORRELATION", delay=7, exceptionq="TEST_EXCEPTIONQ",
                              expiration=10, priority=1)


def test_a_payload_type_that_is_no_type_is_a_type_error(conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1023: payload_type=4 is a TypeError."""
    with pytest.raises(TypeError):
        conn.queue("THE QUEUE", payload_type=4)


def test_bytes_as_payload(conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1024."""
    props = conn.msgproperties()
    props.payload = b"Hello there"
    assert props.payload == b"Hello there"


def test_queue_name_and_connection(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1025."""
    assert conn.queue(queue.name, queue.payload_type).name == queue.name
    assert queue.connection is conn


def test_correlation_and_first_message(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1027: three books correlated Math,
    three Programming; a correlation Math takes its three; changing the correlation with
    NEXT_MESSAGE navigation is ORA-25241; with FIRST_MESSAGE the other three come."""
    book = _book(queue.payload_type)
    queue.enqmany([conn.msgproperties(payload=book, correlation=c)
                   for c in ("Math", "Programming") for _ in range(3)])
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.correlation = "Math"
    assert len(queue.deqmany(4)) == 3
    queue.deqoptions.correlation = "Programming"
    with pytest.raises(oracledb.Error) as e:
        queue.deqone()
    assert e.value.full_code == "ORA-25241"
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    assert len(queue.deqmany(4)) == 3


def test_correlation_with_wildcards(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1028: a correlation with % and _
    matches as LIKE does ("%Calculus-%ath_" both "PreCalculus-math1" and "Calculus-Math2")."""
    book = _book(queue.payload_type)
    for correlation in ("PreCalculus-math1", "Calculus-Math2"):
        queue.enqone(conn.msgproperties(payload=book, correlation=correlation))
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.correlation = "%Calculus-%ath_"
    assert len(queue.deqmany(5)) == 2


def test_condition_picks_by_priority(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1029: two books of priorities 5 and
    10; "priority = 9" takes none, "priority = 5" and "priority = 10" one each, the right one."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    for priority, data in zip((5, 10), BOOKS):
        queue.enqone(conn.msgproperties(payload=_book(queue.payload_type, data), priority=priority))
    queue.deqoptions.condition = "priority = 9"
    assert queue.deqmany(3) == []
    for priority, data in zip((5, 10), BOOKS):
        queue.deqoptions.condition = f"priority = {priority}"
        messages = queue.deqmany(3)
        assert [_fields(m.payload) for m in messages] == [data]


def test_condition_on_priority(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1400_raw.py 1419's check on this queue's payload."""
    check_condition_on_priority(conn, queue, _book(queue.payload_type))


def test_remove_nodata_many(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1030: deqmany with DEQ_REMOVE_NODATA
    takes the three books and hands back books with every attribute null."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.mode = oracledb.DEQ_REMOVE_NODATA
    book = queue.payload_type.newobject()
    for data in BOOKS:
        book.TITLE, book.AUTHORS, book.PRICE = data
        queue.enqone(conn.msgproperties(payload=book))
    messages = queue.deqmany(5)
    assert [_fields(m.payload) for m in messages] == [(None, None, None)] * 3


def test_deprecated_names(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1032, 1033."""
    assert queue.enqOptions == queue.enqoptions and queue.deqOptions == queue.deqoptions
    queue.enqOne(conn.msgproperties(_book(queue.payload_type)))
    assert _fields(queue.deqOne().payload) == BOOKS[0]


def test_a_string_payload_is_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1000_dbobject.py 1034: DPY-2062."""
    with pytest.raises(oracledb.Error) as e:
        queue.enqone(conn.msgproperties(payload="A string"))
    assert e.value.full_code == "DPY-2062"
