"""python-oracledb's AQ sample programs, ported by changing the connect line only.

The programs below retell, in our own words, python-oracledb's samples raw_aq.py,
bulk_aq.py, object_aq.py, multi_consumer_aq.py and aq_notification.py, and the JSON
queue and bulk dequeue of its AQ user guide.  They are written against python-oracledb
(``oracledb.DEQ_NO_WAIT``, ``connection.msgproperties(...)``, ``message.queue_name`` …)
with ``import sluice as oracledb``; the one change is the connect line, whose ``dsn``
names a Sluice store.  The schema they expect (python-oracledb makes it with
``samples/sql/create_schema.sql``) is made here by the same statements, with classic
queues.  Every program runs on both backends.
"""

import datetime
import decimal
import threading

import pytest

import sluice as oracledb

MAIN_USER, MAIN_PASSWORD = "pythondemo", "Welcome-to-AQ-1"

SCHEMA = [
    "CREATE TYPE udt_Book AS OBJECT (Title VARCHAR2(100), Authors VARCHAR2(100), Price NUMBER(5,2))",
    """BEGIN
         dbms_aqadm.create_queue_table('DEMO_RAW_QUEUE_TAB', 'RAW');
         dbms_aqadm.create_queue('DEMO_RAW_QUEUE', 'DEMO_RAW_QUEUE_TAB');
         dbms_aqadm.start_queue('DEMO_RAW_QUEUE');
         dbms_aqadm.create_queue_table('DEMO_BOOK_QUEUE_TAB', 'UDT_BOOK');
         dbms_aqadm.create_queue('DEMO_BOOK_QUEUE', 'DEMO_BOOK_QUEUE_TAB');
         dbms_aqadm.start_queue('DEMO_BOOK_QUEUE');
         dbms_aqadm.create_queue_table('DEMO_RAW_QUEUE_MULTI_TAB', 'RAW', multiple_consumers => TRUE);
         dbms_aqadm.create_queue('DEMO_RAW_QUEUE_MULTI', 'DEMO_RAW_QUEUE_MULTI_TAB');
         dbms_aqadm.start_queue('DEMO_RAW_QUEUE_MULTI');
         dbms_aqadm.add_subscriber('DEMO_RAW_QUEUE_MULTI', sys.aq$_agent('SUBSCRIBER_A', NULL, NULL));
         dbms_aqadm.add_subscriber('DEMO_RAW_QUEUE_MULTI', sys.aq$_agent('SUBSCRIBER_B', NULL, NULL));
         dbms_aqadm.create_queue_table('DEMO_JSON_QUEUE_TAB', 'JSON');
         dbms_aqadm.create_queue('DEMO_JSON_QUEUE', 'DEMO_JSON_QUEUE_TAB');
         dbms_aqadm.start_queue('DEMO_JSON_QUEUE');
       END;""",
]

MESSAGES = ["The first message", "The second message", "The third message",
            "The fourth and final message"]


@pytest.fixture
def demo_dsn(dsn):
    """The samples' schema, owned by the samples' user (who logs on with a password)."""
    with oracledb.connect(dsn) as admin:
        cursor = admin.cursor()
        cursor.execute(f'CREATE USER {MAIN_USER} IDENTIFIED BY "{MAIN_PASSWORD}"')
        for grant in ("CREATE SESSION", "AQ_ADMINISTRATOR_ROLE", "EXECUTE ON DBMS_AQ"):
            cursor.execute(f"GRANT {grant} TO {MAIN_USER}")
    with oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=dsn) as owner:
        for statement in SCHEMA:
            owner.cursor().execute(statement)
    return dsn


def test_raw_queue_sample(demo_dsn):
    out = []
    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    queue = connection.queue("DEMO_RAW_QUEUE")
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    while queue.deqone():          # start from an empty queue
        pass
    for text in MESSAGES:          # strings go into a RAW queue as their UTF-8 bytes
        queue.enqone(connection.msgproperties(payload=text))
    connection.commit()
    while True:
        props = queue.deqone()
        if not props:
            break
        out.append(props.payload.decode())
    connection.commit()
    connection.close()
    assert out == MESSAGES


def test_bulk_sample_enqmany_and_deqmany_with_first_message(demo_dsn):
    data = [f"Message number {i}" for i in range(1, 13)]
    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    queue = connection.queue("DEMO_RAW_QUEUE")
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    while queue.deqone():
        pass
    pending = data
    while pending:                 # enqueue in batches of six
        batch, pending = pending[:6], pending[6:]
        queue.enqmany([connection.msgproperties(payload=d) for d in batch])
    connection.commit()
    # browsing twice with FIRST_MESSAGE starts from the head of the queue both times
    queue.deqoptions.mode = oracledb.DEQ_BROWSE
    first = [m.payload.decode() for m in queue.deqmany(5)]
    again = [m.payload.decode() for m in queue.deqmany(5)]
    assert first == again == data[:5]
    queue.deqoptions.mode = oracledb.DEQ_REMOVE
    got, sizes = [], []
    while True:                    # then take them all, eight at a time
        messages = queue.deqmany(8)
        if not messages:
            break
        sizes.append(len(messages))
        got.extend(props.payload.decode() for props in messages)
        assert all(isinstance(props, oracledb.MessageProperties) for props in messages)
    connection.commit()
    connection.close()
    assert got == data and sizes == [8, 4]


def test_object_queue_sample(demo_dsn):
    books = [("The Fellowship of the Ring", "Tolkien, J.R.R.", decimal.Decimal("10.99")),
             ("Harry Potter and the Philosopher's Stone", "Rowling, J.K.", decimal.Decimal("7.99"))]
    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    books_type = connection.gettype("UDT_BOOK")
    queue = connection.queue("DEMO_BOOK_QUEUE", payload_type=books_type)
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    while queue.deqone():
        pass
    for title, authors, price in books:
        book = books_type.newobject()
        book.TITLE, book.AUTHORS, book.PRICE = title, authors, price
        queue.enqone(connection.msgproperties(payload=book))
    connection.commit()
    got = []
    while True:
        props = queue.deqone()
        if not props:
            break
        got.append((props.payload.TITLE, props.payload.AUTHORS, props.payload.PRICE))
    connection.commit()
    connection.close()
    # python-oracledb hands NUMBER attributes back as float (defaults.fetch_decimals False)
    assert got == [(title, authors, float(price)) for title, authors, price in books]


def test_multi_consumer_sample(demo_dsn):
    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    queue = connection.queue("DEMO_RAW_QUEUE_MULTI")
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
    for text in MESSAGES:
        queue.enqone(connection.msgproperties(payload=text))
    connection.commit()
    seen = {}
    for consumer in ("SUBSCRIBER_A", "SUBSCRIBER_B"):   # each subscriber gets every message
        queue.deqoptions.consumername = consumer
        seen[consumer] = []
        while True:
            props = queue.deqone()
            if not props:
                break
            seen[consumer].append(props.payload.decode())
        connection.commit()
    connection.close()
    assert seen == {"SUBSCRIBER_A": MESSAGES, "SUBSCRIBER_B": MESSAGES}


def test_json_queue_sample(demo_dsn):
    json_data = [
        [2.75, True, "Ocean Beach", b"Some bytes", {"keyA": 1.0, "KeyB": "Melbourne"},
         datetime.datetime(2022, 8, 1, 0, 0)],
        dict(name="John", age=30, city="New York"),
    ]
    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    queue = connection.queue("DEMO_JSON_QUEUE", "JSON")
    for data in json_data:
        queue.enqone(connection.msgproperties(payload=data))
    connection.commit()
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    got = [m.payload for m in queue.deqmany(10)]
    connection.commit()
    connection.close()
    assert got == json_data


def test_notification_sample_with_events(demo_dsn):
    """aq_notification.py: python-oracledb asks for events=True to subscribe."""
    heard, done = [], threading.Event()

    def process_messages(message):
        heard.append((message.type, message.queue_name, message.consumer_name, message.msgid))
        done.set()

    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn, events=True)
    sub = connection.subscribe(namespace=oracledb.SUBSCR_NAMESPACE_AQ, name="DEMO_BOOK_QUEUE",
                               callback=process_messages, timeout=300, client_initiated=True)
    assert sub.connection is connection and sub.callback is process_messages
    assert (sub.namespace, sub.protocol, sub.timeout) == \
        (oracledb.SUBSCR_NAMESPACE_AQ, oracledb.SUBSCR_PROTO_CALLBACK, 300)

    # another program enqueues a book
    producer = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    books_type = producer.gettype("UDT_BOOK")
    book = books_type.newobject()
    book.TITLE, book.AUTHORS, book.PRICE = "Quick Brown Fox", "The Dog", 123
    props = producer.msgproperties(payload=book)
    producer.queue("DEMO_BOOK_QUEUE", books_type).enqone(props)
    producer.commit()

    assert done.wait(10)
    # what python-oracledb's notification Message holds: the queue as '"SCHEMA"."QUEUE"',
    # no consumer for a single-consumer queue, the message id as 16 bytes
    assert heard == [(oracledb.EVENT_AQ, f'"{MAIN_USER.upper()}"."DEMO_BOOK_QUEUE"', None, props.msgid)]
    assert isinstance(props.msgid, bytes) and len(props.msgid) == 16
    connection.unsubscribe(sub)
    producer.close()
    connection.close()


def test_msgid_is_bytes_and_names_the_stored_message(demo_dsn):
    """python-oracledb: msgid is None before the enqueue, then 16 bytes naming the
    message the queue table holds; the dequeued message has the same."""
    connection = oracledb.connect(user=MAIN_USER, password=MAIN_PASSWORD, dsn=demo_dsn)
    queue = connection.queue("DEMO_RAW_QUEUE")
    props = connection.msgproperties(payload=b"one")
    assert props.msgid is None
    queue.enqone(props)
    connection.commit()   # Sluice's SQLite store shows a session's enqueues in SQL once committed
    cursor = connection.cursor()
    cursor.execute("SELECT msg_id FROM aq$demo_raw_queue_tab")
    (shown,) = cursor.fetchone()   # Sluice's AQ$ views show RAW ids in hexadecimal
    assert isinstance(props.msgid, bytes) and len(props.msgid) == 16 and props.msgid.hex().upper() == shown
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert queue.deqone().msgid == props.msgid
    with pytest.raises(oracledb.ProgrammingError) as e:   # python-oracledb's DPY-2000
        queue.enqone(connection.msgproperties())
    assert e.value.full_code == "DPY-2000"
    connection.close()
