"""python-oracledb's own tests of array enqueue and dequeue (its tests/aq/test_1200_bulk.py),
retold in our words against Sluice: ``import sluice as oracledb``, the schema of
tests/aq/oracledb_suite.py, both backends.  Each test names the python-oracledb test it
retells.  (1202 and 1204 run in python-oracledb's Thick mode only; what they check is
plain AQ, which Sluice does whatever the mode, so they are retold too.)"""

import datetime
import threading

import pytest

import sluice as oracledb
from tests.aq.oracledb_suite import conn, other_conn, suite_dsn  # noqa: F401

TEXTS = [f"Message number {n} of twelve" for n in range(1, 13)]
DOCUMENTS = [
    [3.5, False, "Harbour Road", b"a few bytes", {"first": 2.0, "Second": "Perth"},
     datetime.datetime(2023, 3, 9, 0, 0)],
    {"who": "Alan", "years": 41, "town": "Manchester"},
]


@pytest.fixture
def queue(conn):  # noqa: F811
    return conn.queue("TEST_RAW_QUEUE")


@pytest.fixture
def json_queue(conn):  # noqa: F811
    return conn.queue("TEST_JSON_QUEUE", "JSON")


def _texts(messages):
    return [m.payload.decode() for m in messages]


def test_enqmany_then_deqmany(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1200: twelve texts enqueued at once (a
    RAW queue takes str as UTF-8) come back at once, in order."""
    queue.enqmany([conn.msgproperties(payload=text) for text in TEXTS])
    assert _texts(queue.deqmany(len(TEXTS))) == TEXTS
    conn.commit()


def test_deqmany_of_an_empty_queue(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1201: an empty list."""
    queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert queue.deqmany(5) == []
    conn.commit()


def test_a_waiting_deqmany_gets_an_immediate_enqmany(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1202: another thread's session takes
    batches of up to five, waiting up to 10 s for each; twelve messages enqueued at once
    with ENQ_IMMEDIATE all reach it, in order."""
    got = []

    def take_in_batches():
        with oracledb.connect(suite_dsn) as other:
            q = other.queue("TEST_RAW_QUEUE")
            q.deqoptions.wait = 10
            q.deqoptions.navigation = oracledb.DEQ_FIRST_MSG
            while len(got) < len(TEXTS):
                batch = q.deqmany(5)
                if not batch:
                    break
                got.extend(_texts(batch))
            other.commit()

    taker = threading.Thread(target=take_in_batches)
    taker.start()
    queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
    queue.enqmany([conn.msgproperties(payload=text) for text in TEXTS])
    taker.join()
    assert got == TEXTS


def test_several_enqmany_and_deqmany(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1203: batches of 2, 6 and 4 in, of up to
    3, 5 and 10 out: all twelve, in order."""
    pending = TEXTS
    for size in (2, 6, 4):
        queue.enqmany([conn.msgproperties(payload=text) for text in pending[:size]])
        pending = pending[size:]
    conn.commit()
    got = []
    for size in (3, 5, 10):
        got.extend(_texts(queue.deqmany(size)))
    conn.commit()
    assert got == TEXTS


def test_visibility_of_enqmany_and_deqmany(queue, conn, other_conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1204: an ENQ_ON_COMMIT enqmany is unseen by
    another session until the commit; that session's ON_COMMIT deqmany is undone by its
    rollback.  Then an ENQ_IMMEDIATE enqmany is seen at once, and an IMMEDIATE deqmany is
    not undone by a rollback."""
    first, second = conn.msgproperties(payload="A first message"), conn.msgproperties(payload="A second message")
    queue.enqoptions.visibility = oracledb.ENQ_ON_COMMIT
    queue.enqmany([first, second])
    other = other_conn.queue("TEST_RAW_QUEUE")
    other.deqoptions.wait = oracledb.DEQ_NO_WAIT
    other.deqoptions.visibility = oracledb.DEQ_ON_COMMIT
    assert len(other.deqmany(5)) == 0
    conn.commit()
    assert len(other.deqmany(5)) == 2
    other_conn.rollback()
    queue.enqoptions.visibility = oracledb.ENQ_IMMEDIATE
    other.deqoptions.visibility = oracledb.DEQ_IMMEDIATE
    queue.enqmany([first, second])
    assert len(other.deqmany(5)) == 4
    other_conn.rollback()
    assert len(other.deqmany(5)) == 0


def test_messages_without_payload_are_refused(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1205: DPY-2000."""
    with pytest.raises(oracledb.Error) as e:
        queue.enqmany([conn.msgproperties() for _ in TEXTS])
    assert e.value.full_code == "DPY-2000"


def test_msgids_are_the_queue_tables(queue, conn, suite_dsn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1206: after enqmany every message has the
    MSGID the queue table holds for it; the dequeued ones have the same."""
    messages = [conn.msgproperties(payload=text) for text in TEXTS]
    queue.enqmany(messages)
    if suite_dsn.startswith("sqlite"):
        conn.commit()   # Sluice's SQLite store: a session's enqueues are in the table once committed
    cursor = conn.cursor()
    cursor.execute("select msgid from raw_queue_tab")
    stored = {msgid for (msgid,) in cursor}
    assert {m.msgid for m in messages} == stored
    assert {m.msgid for m in queue.deqmany(len(TEXTS))} == stored


def test_json_documents_in_bulk(json_queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1207: JSON documents enqueued at once come
    back at once, equal."""
    json_queue.enqmany([conn.msgproperties(payload=document) for document in DOCUMENTS])
    conn.commit()
    json_queue.deqoptions.wait = oracledb.DEQ_NO_WAIT
    assert [m.payload for m in json_queue.deqmany(5)] == DOCUMENTS


def test_a_json_queue_refuses_strings_in_bulk(json_queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1208: DPY-2062."""
    props = conn.msgproperties(payload="string message")
    with pytest.raises(oracledb.Error) as e:
        json_queue.enqmany([props, props])
    assert e.value.full_code == "DPY-2062"


@pytest.mark.parametrize("call", ["enqmany of one message", "enqmany of strings", "deqmany of a string"])
def test_wrong_kinds_are_type_errors(json_queue, conn, call):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1209: enqmany of a message that is not in
    a list, enqmany of strings, deqmany of a string count: TypeError."""
    attempts = {
        "enqmany of one message": lambda: json_queue.enqmany(conn.msgproperties(payload="string message")),
        "enqmany of strings": lambda: json_queue.enqmany(["Not", "msgproperties"]),
        "deqmany of a string": lambda: json_queue.deqmany("5"),
    }
    with pytest.raises(TypeError):
        attempts[call]()


def test_deprecated_bulk_names(queue, conn):  # noqa: F811
    """python-oracledb tests/aq/test_1200_bulk.py 1210: enqMany and deqMany."""
    data = [b"labrador", b"schnauzer", b"shih tzu"]
    queue.enqMany([conn.msgproperties(d) for d in data])
    assert [m.payload for m in queue.deqMany(len(data) + 1)] == data
