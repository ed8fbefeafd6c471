"""python-oracledb's own asyncio AQ tests (its tests/aq/test_1100_dbobject_async.py,
test_1300_bulk_async.py, test_1500_raw_async.py, test_1700_json_async.py), retold in our
words against Sluice's asyncio API (``sluice.connect_async``, AsyncQueue): the schema of
tests/aq/oracledb_suite.py, both backends.

The three queue files check the same things of a RAW, a JSON and an object queue, so a
test here runs for each kind python-oracledb checks it on ("raw", "json", "object") and
names the python-oracledb tests it retells, in that order.
"""

import asyncio
import datetime
import decimal

import pytest

import sluice as oracledb
from tests.aq.oracledb_suite import MSG_PROPERTY_VALUES, check_options, round_trips, suite_dsn  # noqa: F401

BOOKS = [
    ("Things Fall Apart", "Chinua Achebe", decimal.Decimal("12.25")),
    ("The Hobbit", "J.R.R. Tolkien", decimal.Decimal("9.50")),
    ("Dune", "Frank Herbert", decimal.Decimal("20.75")),
]
RAWS = [f"sample raw data {i}".encode() for i in range(1, 4)]
DOCUMENTS = [
    [3.5, False, "Harbour Road", b"a few bytes", {"first": 2.0, "Second": "Perth"},
     datetime.datetime(2023, 3, 9, 0, 0)],
    {"who": "Alan", "years": 41, "town": "Manchester"},
    [0, 1, 26.75, -8888888888888888888, decimal.Decimal("428549061343529401.384607")],
]


class Kind:
    """How python-oracledb's tests use one kind of queue: its name and table, the
    payload_type to open it with, sample payloads and how to compare them."""

    def __init__(self, queue, table, type_name, samples):
        self.queue, self.table, self.type_name, self.samples = queue, table, type_name, samples

    async def open(self, conn):
        payload_type = self.type_name
        if payload_type not in (None, "JSON"):
            payload_type = await conn.gettype(payload_type)
        return conn.queue(self.queue, payload_type)

    async def open_other(self, other_conn):
        """The queue in another session, as python-oracledb's tests open it there: first
        message, no wait."""
        queue = await self.open(other_conn)
        queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        return queue

    def payload(self, queue, i=0):
        sample = self.samples[i]
        if self.type_name == "UDT_BOOK":
            book = queue.payload_type.newobject()
            book.TITLE, book.AUTHORS, book.PRICE = sample
            return book
        return sample

    def value(self, payload):
        """A payload as comparable data."""
        if payload is None:
            return None
        if self.type_name == "UDT_BOOK":
            return (payload.TITLE, payload.AUTHORS, payload.PRICE)
        return payload


KINDS = {
    "raw": Kind("TEST_RAW_QUEUE", "RAW_QUEUE_TAB", None, RAWS),
    "json": Kind("TEST_JSON_QUEUE", "JSON_QUEUE_TAB", "JSON", DOCUMENTS),
    "object": Kind("TEST_BOOK_QUEUE", "BOOK_QUEUE_TAB", "UDT_BOOK", BOOKS),
}


def k_sample(kind, i=0):
    return KINDS[kind].samples[i]


def run(dsn, body):
    """Run ``body(conn)`` with an asyncio connection to ``dsn``; its result."""
    async def main():
        async with oracledb.connect_async(dsn) as conn:
            return await body(conn)
    return asyncio.run(main())


async def _drain(queue):
    found = []
    while (props := await queue.deqone()) is not None:
        found.append(props)
    return found


async def _raises(awaitable):
    """The sluice.Error ``awaitable`` raises (the test fails when it raises none)."""
    with pytest.raises(oracledb.Error) as e:
        await awaitable
    return e.value


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_empty_queue_gives_none(suite_dsn, kind):
    """python-oracledb 1500, 1700, 1100."""
    async def body(conn):
        queue = await KINDS[kind].open(conn)
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        return await queue.deqone()
    assert run(suite_dsn, body) is None


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_messages_come_back_in_order(suite_dsn, kind):
    """python-oracledb 1501, 1701, 1101: one MessageProperties, given each sample before its
    enqueue; the samples dequeue in order."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        props = conn.msgproperties()
        for i in range(len(k.samples)):
            props.payload = k.payload(queue, i)
            await queue.enqone(props)
        await conn.commit()
        queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        got = [k.value(m.payload) for m in await _drain(queue)]
        await conn.commit()
        return got
    assert run(suite_dsn, body) == list(KINDS[kind].samples)


@pytest.mark.parametrize("kind, expected", [("raw", b""), ("json", None), ("object", (None, None, None))])
def test_remove_nodata(suite_dsn, kind, expected):
    """python-oracledb 1502, 1702 (skipped there for an Oracle bug), 1102: DEQ_REMOVE_NODATA
    takes the message and gives an empty RAW, no JSON document, a book of nulls."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        await queue.enqone(conn.msgproperties(payload=k.payload(queue, 1)))
        queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        queue.deqoptions.mode = oracledb.DEQ_REMOVE_NODATA
        return k.value((await queue.deqone()).payload)
    assert run(suite_dsn, body) == expected


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_options_and_message_properties(suite_dsn, kind):
    """python-oracledb 1503/1504/1506/1518, 1703/1705/1706/1715, 1103/1104/1106/1119: the
    options read back what they were set to, deliverymode is write-only, and a new
    MessageProperties is READY, unattempted, without delivery mode."""
    async def body(conn):
        check_options(await KINDS[kind].open(conn))
        props = conn.msgproperties()
        for name, value in MSG_PROPERTY_VALUES:
            round_trips(props, name, value)
        return props.attempts, props.state, props.deliverymode
    assert run(suite_dsn, body) == (0, oracledb.MSG_READY, 0)


@pytest.mark.parametrize("kind", ["raw", "object"])
def test_enqueue_of_a_bare_payload_is_a_type_error(suite_dsn, kind):
    """python-oracledb 1505, 1105: enqone of a payload, not a MessageProperties."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        with pytest.raises(TypeError):
            await queue.enqone(k.payload(queue))
    run(suite_dsn, body)


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_on_commit_enqueue_is_unseen_until_commit(suite_dsn, kind):
    """python-oracledb 1507, 1707, 1107."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        queue.enqoptions.visibility = oracledb.ENQ_ON_COMMIT
        await queue.enqone(conn.msgproperties(payload=k.payload(queue)))
        async with oracledb.connect_async(suite_dsn) as other_conn:
            other = await k.open_other(other_conn)
            before = await other.deqone()
            await conn.commit()
            after = await other.deqone()
            await other_conn.commit()
        return before, k.value(after.payload)
    assert run(suite_dsn, body) == (None, k_sample(kind))


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_immediate_enqueue_is_seen_at_once(suite_dsn, kind):
    """python-oracledb 1508, 1708, 1108."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
        await queue.enqone(conn.msgproperties(payload=k.payload(queue)))
        async with oracledb.connect_async(suite_dsn) as other_conn:
            other = await k.open_other(other_conn)
            other.deqoptions.visibility = oracledb.DEQ_ON_COMMIT
            got = await other.deqone()
            await other_conn.commit()
        return k.value(got.payload)
    assert run(suite_dsn, body) == k_sample(kind)


@pytest.mark.parametrize("kind, enq_mode, deq_mode, found_mode", [
    ("raw", oracledb.MSG_BUFFERED, oracledb.MSG_BUFFERED, oracledb.MSG_BUFFERED),              # 1509
    ("raw", oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT),        # 1510
    ("raw", oracledb.MSG_PERSISTENT_OR_BUFFERED, oracledb.MSG_PERSISTENT_OR_BUFFERED,
     oracledb.MSG_PERSISTENT),                                                                # 1511
    ("raw", oracledb.MSG_BUFFERED, oracledb.MSG_PERSISTENT, None),                             # 1512
    ("json", oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT),       # 1709
    ("object", oracledb.MSG_BUFFERED, oracledb.MSG_BUFFERED, oracledb.MSG_BUFFERED),           # 1109
    ("object", oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT, oracledb.MSG_PERSISTENT),     # 1110
    ("object", oracledb.MSG_PERSISTENT_OR_BUFFERED, oracledb.MSG_PERSISTENT_OR_BUFFERED,
     oracledb.MSG_PERSISTENT),                                                                # 1111
    ("object", oracledb.MSG_BUFFERED, oracledb.MSG_PERSISTENT, None),                          # 1112
], ids=["raw-buffered", "raw-persistent", "raw-either", "raw-different", "json-persistent",
        "object-buffered", "object-persistent", "object-either", "object-different"])
def test_delivery_modes(suite_dsn, kind, enq_mode, deq_mode, found_mode):
    """python-oracledb 1509-1512, 1709, 1109-1112: an immediate enqueue in one delivery
    mode, another session's dequeue asking for one: found when they agree, with the
    message's mode; nothing when they differ."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        queue.enqoptions.deliverymode = enq_mode
        queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
        await queue.enqone(conn.msgproperties(payload=k.payload(queue)))
        async with oracledb.connect_async(suite_dsn) as other_conn:
            other = await k.open_other(other_conn)
            other.deqoptions.deliverymode = deq_mode
            other.deqoptions.visibility = oracledb.DEQ_IMMEDIATE
            got = await other.deqone()
            await other_conn.commit()
        return None if got is None else (got.deliverymode, k.value(got.payload))
    expected = None if found_mode is None else (found_mode, k_sample(kind))
    assert run(suite_dsn, body) == expected


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_a_message_without_payload_is_refused(suite_dsn, kind):
    """python-oracledb 1513, 1710, 1113: DPY-2000."""
    async def body(conn):
        queue = await KINDS[kind].open(conn)
        return (await _raises(queue.enqone(conn.msgproperties()))).full_code
    assert run(suite_dsn, body) == "DPY-2000"


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_msgid_is_the_queue_tables_msgid(suite_dsn, kind):
    """python-oracledb 1514, 1711, 1114: msgid None before the enqueue, then the queue
    table's MSGID for the message, also on the dequeued message."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        props = conn.msgproperties(payload=k.payload(queue))
        before = props.msgid
        await queue.enqone(props)
        if suite_dsn.startswith("sqlite"):
            await conn.commit()   # Sluice's SQLite store: enqueues are in the table once committed
        cursor = conn.cursor()
        await cursor.execute(f"select msgid from {k.table}")
        (stored,) = await cursor.fetchone()
        got = await queue.deqone()
        return before, props.msgid == stored, got.msgid == stored
    assert run(suite_dsn, body) == (None, True, True)


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_enqtime_is_the_enqueue_second(suite_dsn, kind):
    """python-oracledb 1515, 1712, 1115 (the clock read with ``select current_timestamp
    from dual``, as there)."""
    k = KINDS[kind]

    async def now(cursor):
        await cursor.execute("select current_timestamp from dual")
        (value,) = await cursor.fetchone()
        return value.replace(microsecond=0)

    async def body(conn):
        queue = await k.open(conn)
        cursor = conn.cursor()
        start = await now(cursor)
        await queue.enqone(conn.msgproperties(payload=k.payload(queue)))
        got = await queue.deqone()
        end = await now(cursor)
        return start <= got.enqtime <= end
    assert run(suite_dsn, body)


@pytest.mark.parametrize("kind", ["raw", "json", "object"])
def test_declared_properties(suite_dsn, kind):
    """python-oracledb 1516, 1713 (through the queue), 1116 (before any enqueue)."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        payload = k.payload(queue)
        declared = {"payload": payload, "correlation": "TEST_CORRELATION", "delay": 0,
                    "exceptionq": "PYTHONTEST.TEST_EXCEPTIONQ", "expiration": 15, "priority": 1}
        props = conn.msgproperties(**declared)
        read = [{name: getattr(props, name) for name in declared}]
        if kind != "object":
            await queue.enqone(props)
            await conn.commit()
            got = await queue.deqone()
            read.append({name: getattr(got, name) for name in declared})
        return declared, read
    declared, read = run(suite_dsn, body)
    assert all(r == declared for r in read)


def test_a_payload_type_that_is_no_type_is_a_type_error(suite_dsn):
    """python-oracledb 1117."""
    async def body(conn):
        with pytest.raises(TypeError):
            conn.queue("THE QUEUE", payload_type=4)
    run(suite_dsn, body)


@pytest.mark.parametrize("kind, payload_type", [("raw", None), ("json", "JSON"), ("object", "type")])
def test_queue_attributes(suite_dsn, kind, payload_type):
    """python-oracledb 1517/1522/1523, 1714/1719/1720, 1118/1124: name, connection,
    payload_type (None, "JSON", the object type) and the deprecated option names."""
    async def body(conn):
        queue = await KINDS[kind].open(conn)
        want = await conn.gettype("UDT_BOOK") if payload_type == "type" else payload_type
        assert queue.name == KINDS[kind].queue and queue.connection is conn
        assert queue.payload_type == want
        assert queue.enqOptions is queue.enqoptions and queue.deqOptions is queue.deqoptions
    run(suite_dsn, body)


@pytest.mark.parametrize("kind", ["raw", "json"])
def test_condition_correlation_and_msgid(suite_dsn, kind):
    """python-oracledb 1519/1520/1521, 1716/1717/1718: "priority = 9" takes the three of
    priority 9 of nine; a correlation the two that carry it exactly; a msgid its message."""
    k = KINDS[kind]

    async def body(conn):
        queue = await k.open(conn)
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        payload = k.payload(queue)
        for priority in (5, 5, 5, 5, 10, 9, 9, 10, 9):
            await queue.enqone(conn.msgproperties(payload=payload, priority=priority))
        queue.deqoptions.condition = "priority = 9"
        by_priority = len(await _drain(queue))
        await conn.commit()
        queue.deqoptions.condition = None
        for correlation in ("sample", "sample correlation", "sample", "sample", "sample correlation"):
            await queue.enqone(conn.msgproperties(payload=payload, correlation=correlation))
        await conn.commit()
        queue.deqoptions.correlation = "sample correlation"
        by_correlation = len(await _drain(queue))
        await conn.commit()
        queue.deqoptions.correlation = None
        props = conn.msgproperties(payload=payload)
        await queue.enqone(props)
        await queue.enqone(props)
        await conn.commit()
        second = props.msgid
        await queue.enqone(props)
        await conn.commit()
        queue.deqoptions.msgid = second
        by_msgid = (await queue.deqone()).msgid == second
        await conn.commit()
        return by_priority, by_correlation, by_msgid
    assert run(suite_dsn, body) == (3, 2, True)


@pytest.mark.parametrize("kind, wrong", [("raw", "object"), ("json", "A string"), ("object", "A string")])
def test_wrong_payload_type(suite_dsn, kind, wrong):
    """python-oracledb 1524 (a book into RAW), 1721, 1125 (a str into JSON, into a book
    queue): DPY-2062."""
    async def body(conn):
        queue = await KINDS[kind].open(conn)
        payload = (await conn.gettype("UDT_BOOK")).newobject() if wrong == "object" else wrong
        return (await _raises(queue.enqone(conn.msgproperties(payload=payload)))).full_code
    assert run(suite_dsn, body) == "DPY-2062"


def test_correlation_finds_a_buffered_message(suite_dsn):
    """python-oracledb 1525."""
    async def body(conn):
        queue = conn.queue("TEST_RAW_QUEUE")
        queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
        queue.enqoptions.deliverymode = oracledb.MSG_BUFFERED
        await queue.enqone(conn.msgproperties(payload=RAWS[0], correlation="sample"))
        await conn.commit()
        queue.deqoptions.visibility = oracledb.DEQ_IMMEDIATE
        queue.deqoptions.deliverymode = oracledb.MSG_BUFFERED
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        queue.deqoptions.correlation = "sample"
        got = await queue.deqone()
        await conn.commit()
        return got.payload
    assert run(suite_dsn, body) == RAWS[0]


@pytest.mark.parametrize("msgid", [b"invalid_msgid_123456789", b"short_msgid"], ids=["long", "short"])
def test_a_msgid_of_the_wrong_length_finds_nothing(suite_dsn, msgid):
    """python-oracledb 1526, 1527: ORA-25263."""
    async def body(conn):
        queue = conn.queue("TEST_RAW_QUEUE")
        queue.deqoptions.msgid = msgid
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        return (await _raises(queue.deqone())).full_code
    assert run(suite_dsn, body) == "ORA-25263"


def test_a_waiting_dequeue_in_a_task(suite_dsn):
    """python-oracledb 1704: a task waits up to 10 s on another connection; the document
    this connection then enqueues and commits reaches it."""
    async def body(conn):
        async def wait_for_one():
            async with oracledb.connect_async(suite_dsn) as other:
                q = other.queue("TEST_JSON_QUEUE", "JSON")
                q.deqoptions.wait = 10
                props = await q.deqone()
                await other.commit()
                return None if props is None else props.payload
        waiter = asyncio.create_task(wait_for_one())
        await asyncio.sleep(0.1)
        queue = conn.queue("TEST_JSON_QUEUE", "JSON")
        await queue.enqone(conn.msgproperties(payload=DOCUMENTS[0]))
        await conn.commit()
        return await waiter
    assert run(suite_dsn, body) == DOCUMENTS[0]


def test_object_correlations(suite_dsn):
    """python-oracledb 1120, 1121: a correlation takes its three books; another correlation
    without FIRST_MESSAGE is ORA-25241, with it the other three; % and _ match as in LIKE."""
    async def body(conn):
        queue = await KINDS["object"].open(conn)
        book = KINDS["object"].payload(queue)
        await queue.enqmany([conn.msgproperties(payload=book, correlation=c)
                             for c in ("Math", "Programming") for _ in range(3)])
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        queue.deqoptions.correlation = "Math"
        first = len(await queue.deqmany(4))
        queue.deqoptions.correlation = "Programming"
        code = (await _raises(queue.deqone())).full_code
        queue.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
        second = len(await queue.deqmany(4))
        for correlation in ("PreCalculus-math1", "Calculus-Math2"):
            await queue.enqone(conn.msgproperties(payload=book, correlation=correlation))
        queue.deqoptions.correlation = "%Calculus-%ath_"
        wild = len(await queue.deqmany(5))
        return first, code, second, wild
    assert run(suite_dsn, body) == (3, "ORA-25241", 3, 2)


def test_object_conditions_and_remove_nodata(suite_dsn):
    """python-oracledb 1122, 1123: "priority = 9" takes none of priorities 5 and 10, each of
    "priority = 5" and "= 10" its book; a REMOVE_NODATA deqmany gives books of nulls."""
    async def body(conn):
        k = KINDS["object"]
        queue = await k.open(conn)
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        for priority, i in ((5, 0), (10, 1)):
            await queue.enqone(conn.msgproperties(payload=k.payload(queue, i), priority=priority))
        queue.deqoptions.condition = "priority = 9"
        found = [len(await queue.deqmany(3))]
        for priority in (5, 10):
            queue.deqoptions.condition = f"priority = {priority}"
            found.append([k.value(m.payload) for m in await queue.deqmany(3)])
        queue.deqoptions.condition = None
        queue.deqoptions.mode = oracledb.DEQ_REMOVE_NODATA
        for i in range(3):
            await queue.enqone(conn.msgproperties(payload=k.payload(queue, i)))
        found.append([k.value(m.payload) for m in await queue.deqmany(5)])
        return found
    assert run(suite_dsn, body) == [0, [BOOKS[0]], [BOOKS[1]], [(None, None, None)] * 3]


TEXTS = [f"Message number {n} of twelve" for n in range(1, 13)]


def test_bulk_round_trips(suite_dsn):
    """python-oracledb tests/aq/test_1300_bulk_async.py 1300, 1301, 1302: twelve texts
    enqueued at once come back at once in order; an empty queue gives []; batches of 2, 6,
    4 in and up to 3, 5, 10 out give all twelve in order."""
    async def body(conn):
        queue = conn.queue("TEST_RAW_QUEUE")
        await queue.enqmany([conn.msgproperties(payload=t) for t in TEXTS])
        at_once = [m.payload.decode() for m in await queue.deqmany(len(TEXTS))]
        await conn.commit()
        queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        empty = await queue.deqmany(5)
        pending = TEXTS
        for size in (2, 6, 4):
            await queue.enqmany([conn.msgproperties(payload=t) for t in pending[:size]])
            pending = pending[size:]
        await conn.commit()
        batches = []
        for size in (3, 5, 10):
            batches.extend(m.payload.decode() for m in await queue.deqmany(size))
        await conn.commit()
        return at_once, empty, batches
    assert run(suite_dsn, body) == (TEXTS, [], TEXTS)


def test_bulk_checks(suite_dsn):
    """python-oracledb tests/aq/test_1300_bulk_async.py 1303, 1304, 1305, 1306, 1307:
    messages without payload DPY-2000; after enqmany each msgid is the queue table's and
    the dequeued ones have them; JSON documents in bulk come back equal; strings into the
    JSON queue DPY-2062; enqmany of a lone message or of strings, deqmany of a string:
    TypeError."""
    async def body(conn):
        queue = conn.queue("TEST_RAW_QUEUE")
        no_payload = (await _raises(queue.enqmany([conn.msgproperties() for _ in TEXTS]))).full_code
        messages = [conn.msgproperties(payload=t) for t in TEXTS]
        await queue.enqmany(messages)
        await conn.commit()   # (Sluice's SQLite store: enqueues are in the table once committed)
        cursor = conn.cursor()
        await cursor.execute("select msgid from raw_queue_tab")
        stored = {m for (m,) in await cursor.fetchall()}
        ids_match = {m.msgid for m in messages} == stored == {
            m.msgid for m in await queue.deqmany(len(TEXTS))}
        json_queue = conn.queue("TEST_JSON_QUEUE", "JSON")
        await json_queue.enqmany([conn.msgproperties(payload=d) for d in DOCUMENTS])
        await conn.commit()
        json_queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
        documents = [m.payload for m in await json_queue.deqmany(5)]
        text = conn.msgproperties(payload="string message")
        strings = (await _raises(json_queue.enqmany([text, text]))).full_code
        for attempt in (json_queue.enqmany(text), json_queue.enqmany(["Not", "msgproperties"]),
                        json_queue.deqmany("5")):
            with pytest.raises(TypeError):
                await attempt
        return no_payload, ids_match, documents, strings
    assert run(suite_dsn, body) == ("DPY-2000", True, DOCUMENTS, "DPY-2062")
