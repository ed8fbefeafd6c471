"""V$BUFFERED_SUBSCRIBERS' columns of what a subscriber browsed and dequeued (Oracle Database
Reference, "V$BUFFERED_SUBSCRIBERS"): LAST_BROWSED_SEQ / _NUM, LAST_DEQUEUED_SEQ / _NUM,
CURRENT_ENQ_SEQ, MESSAGE_LAG, ELAPSED_DEQUEUE_TIME, DEQUEUE_CPU_TIME (hundredths of a
second), AVG_MSG_AGE, OLDEST_MSGID.  A subscriber's messages are numbered 1, 2 … as they are
enqueued for it (SEQ); a message's NUM is its number in the queue, whoever it is for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

import sluice
from sluice.aq import bufferedendpoint

from ..conftest import nowait
from .kit import buffered_queue, spill_all

SEQ_COLUMNS = ("LAST_BROWSED_SEQ", "LAST_BROWSED_NUM", "LAST_DEQUEUED_SEQ", "LAST_DEQUEUED_NUM",
               "CURRENT_ENQ_SEQ", "MESSAGE_LAG")


def _reader(conn, consumer: str, mode=sluice.DEQ_REMOVE, navigation=sluice.DEQ_FIRST_MSG):
    q = nowait(conn.queue("BQ"), mode, navigation)
    q.deqoptions.consumername = consumer
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    return q


def _row(conn, consumer: str, columns=SEQ_COLUMNS) -> tuple:
    cur = conn.cursor()
    cur.execute(f"SELECT {', '.join(columns)} FROM V$BUFFERED_SUBSCRIBERS "
                "WHERE QUEUE_NAME = 'BQ' AND SUBSCRIBER_NAME = :1", [consumer])
    return cur.fetchone()


def test_the_columns_are_oracle_s_in_oracle_s_order(conn):
    buffered_queue(conn)
    cur = conn.cursor()
    cur.execute("SELECT * FROM V$BUFFERED_SUBSCRIBERS")
    assert [d[0] for d in cur.description] == [
        "QUEUE_ID", "QUEUE_SCHEMA", "QUEUE_NAME", "SUBSCRIBER_NAME", "SUBSCRIBER_ADDRESS", "PROTOCOL",
        "SUBSCRIBER_TYPE", "STARTUP_TIME", "LAST_BROWSED_SEQ", "LAST_BROWSED_NUM", "LAST_DEQUEUED_SEQ",
        "LAST_DEQUEUED_NUM", "CURRENT_ENQ_SEQ", "NUM_MSGS", "CNUM_MSGS", "TOTAL_DEQUEUED_MSG",
        "TOTAL_SPILLED_MSG", "EXPIRED_MSGS", "MESSAGE_LAG", "ELAPSED_DEQUEUE_TIME", "DEQUEUE_CPU_TIME",
        "AVG_MSG_AGE", "LAST_DEQUEUE_TIME", "OLDEST_MSGID", "OLDEST_MSG_ENQTM"]


def test_sequence_and_number_of_what_each_subscriber_browsed_and_dequeued(conn):
    """SEQ counts a subscriber's own messages, NUM the queue's: message 4 is B2's alone, so
    B1's fourth message is the queue's fifth."""
    q = buffered_queue(conn)
    assert _row(conn, "B1") == (0, 0, 0, 0, 0, 0)
    for i in range(3):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    q.enqone(conn.msgproperties(payload=b"b2 only", recipients=[sluice.Agent("B2")]))
    q.enqone(conn.msgproperties(payload=b"m4"))
    assert _row(conn, "B1") == (0, 0, 0, 0, 4, 4)
    assert _row(conn, "B2") == (0, 0, 0, 0, 5, 5)
    b1 = _reader(conn, "B1")
    assert [b1.deqone().payload for _ in range(2)] == [b"m0", b"m1"]
    assert _row(conn, "B1") == (0, 0, 2, 2, 4, 2)                   # lag: 2 came after m1
    browse = _reader(conn, "B1", sluice.DEQ_BROWSE, sluice.DEQ_FIRST_MSG)
    assert browse.deqone().payload == b"m2"
    assert _row(conn, "B1") == (3, 3, 2, 2, 4, 2)
    browse.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert browse.deqone().payload == b"m4"
    assert _row(conn, "B1") == (4, 5, 2, 2, 4, 2)
    b2 = _reader(conn, "B2")
    assert [b2.deqone().payload for _ in range(4)] == [b"m0", b"m1", b"m2", b"b2 only"]
    assert _row(conn, "B2") == (0, 0, 4, 4, 5, 1)
    assert _row(conn, "B1") == (4, 5, 2, 2, 4, 2)                   # B2's dequeues are not B1's
    # a LOCKED dequeue reads without taking: a browse
    locked = _reader(conn, "B2", sluice.DEQ_LOCKED)
    assert locked.deqone().payload == b"m4"
    assert _row(conn, "B2") == (5, 5, 4, 4, 5, 1)
    conn.commit()


def test_spilled_messages_keep_their_numbers(conn):
    """A message this process spilled is browsed and dequeued from the queue table with the
    numbers it had in memory."""
    q = buffered_queue(conn)
    q.enqone(conn.msgproperties(payload=b"b2 only", recipients=[sluice.Agent("B2")]))
    for i in range(3):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    spill_all(conn)
    assert _row(conn, "B1", ("TOTAL_SPILLED_MSG", "CURRENT_ENQ_SEQ")) == (3, 3)
    browse = _reader(conn, "B1", sluice.DEQ_BROWSE, sluice.DEQ_FIRST_MSG)
    assert browse.deqone().payload == b"m0"
    assert _row(conn, "B1") == (1, 2, 0, 0, 3, 3)
    b1 = _reader(conn, "B1")
    assert [b1.deqone().payload for _ in range(2)] == [b"m0", b"m1"]
    assert _row(conn, "B1") == (1, 2, 2, 3, 3, 1)
    q.enqone(conn.msgproperties(payload=b"m3"))                     # in memory, after the spilled m2
    assert [b1.deqone().payload for _ in range(2)] == [b"m2", b"m3"]
    assert _row(conn, "B1") == (1, 2, 4, 5, 4, 0)


def test_elapsed_and_cpu_time_of_dequeues_in_hundredths_of_a_second(conn, monkeypatch):
    """Every buffered dequeue call of the subscriber counts, one that finds nothing too; a
    browse is a dequeue call (mode BROWSE).  (The first call of a Queue reads its CPU time:
    the CPU share of B1's calls is 10 in 25.)"""
    q = buffered_queue(conn)
    for i in range(2):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    wall, cpu = iter(range(0, 10_000, 25)), iter(range(0, 10_000, 10))    # hundredths a call
    monkeypatch.setattr(bufferedendpoint, "perf_counter", lambda: next(wall) / 100)
    monkeypatch.setattr(bufferedendpoint, "thread_time", lambda: next(cpu) / 100)
    b1 = _reader(conn, "B1")
    assert b1.deqone() is not None and b1.deqone() is not None
    assert b1.deqone() is None                                      # nothing left: a call all the same
    _reader(conn, "B2", sluice.DEQ_BROWSE).deqone()
    monkeypatch.undo()
    columns = ("ELAPSED_DEQUEUE_TIME", "DEQUEUE_CPU_TIME", "TOTAL_DEQUEUED_MSG")
    assert _row(conn, "B1", columns) == (75, 30, 2)
    assert _row(conn, "B2", columns) == (25, 10, 0)


def test_cpu_time_is_the_elapsed_time_at_the_cpu_share_of_the_calls_it_was_read_in(conn, monkeypatch):
    """Reading a thread's CPU time is a system call: one dequeue call in CPU_SAMPLE reads it,
    and DEQUEUE_CPU_TIME is ELAPSED_DEQUEUE_TIME at the CPU share of those calls."""
    q = buffered_queue(conn)
    for i in range(8):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    wall = iter(range(0, 10_000, 25))
    cpu = iter([0, 10, 10, 30])           # read in calls 1 and 5: 10 and 20 hundredths
    monkeypatch.setattr(bufferedendpoint, "CPU_SAMPLE", 4)
    monkeypatch.setattr(bufferedendpoint, "perf_counter", lambda: next(wall) / 100)
    monkeypatch.setattr(bufferedendpoint, "thread_time", lambda: next(cpu) / 100)
    b1 = _reader(conn, "B1")
    assert all(b1.deqone() is not None for _ in range(8))
    monkeypatch.undo()
    # 8 calls of 25: 200 elapsed; the read ones spent 30 of their 50 on the CPU
    assert _row(conn, "B1", ("ELAPSED_DEQUEUE_TIME", "DEQUEUE_CPU_TIME")) == (200, 120)


def test_elapsed_time_covers_cpu_time(conn):
    q = buffered_queue(conn)
    b1 = _reader(conn, "B1")
    for i in range(300):
        q.enqone(conn.msgproperties(payload=b"m"))
        assert b1.deqone() is not None
    elapsed, cpu = _row(conn, "B1", ("ELAPSED_DEQUEUE_TIME", "DEQUEUE_CPU_TIME"))
    assert elapsed >= cpu >= 0


def test_average_age_and_oldest_message_of_each_subscriber(conn):
    q = buffered_queue(conn)
    columns = ("AVG_MSG_AGE", "OLDEST_MSGID")
    assert _row(conn, "B1", columns) == (0, None)
    enqueued = {}     # message -> (time before its enqueue, time after)

    def enqueue(payload):
        m = conn.msgproperties(payload=payload)
        start = time.time()
        q.enqone(m)
        enqueued[m.msgid] = (start, time.time())
        return m
    first = enqueue(b"m0")
    time.sleep(0.3)
    second = enqueue(b"m1")

    def check(consumer, messages, oldest):
        """AVG_MSG_AGE: seconds since the mean enqueue time, as far as the clock tells."""
        earliest = sum(enqueued[m.msgid][0] for m in messages) / len(messages)
        latest = sum(enqueued[m.msgid][1] for m in messages) / len(messages)
        before = time.time()
        age, msgid = _row(conn, consumer, columns)
        after = time.time()
        assert before - latest - 0.01 <= age <= after - earliest + 0.01
        assert msgid == oldest.msgid
    check("B1", [first, second], first)
    assert _reader(conn, "B1").deqone().payload == b"m0"
    check("B1", [second], second)
    check("B2", [first, second], first)
    spill_all(conn)                                                # the oldest now in the table
    check("B2", [first, second], first)
    check("B1", [second], second)


_CHILD = textwrap.dedent("""
    import sys, sluice
    conn = sluice.connect(sys.argv[1])
    cur = conn.cursor()
    cur.execute("SELECT SUBSCRIBER_NAME, OLDEST_MSGID, NUM_MSGS, LAST_DEQUEUED_SEQ FROM V$BUFFERED_SUBSCRIBERS "
                "WHERE QUEUE_NAME = 'BQ' ORDER BY SUBSCRIBER_NAME")
    for name, msgid, n, seq in cur.fetchall():
        print(name, msgid.hex() if msgid else None, n, seq)
    conn.close()
""")


def test_another_process_sees_the_oldest_spilled_message_not_this_one_s_counts(conn, dsn):
    q = buffered_queue(conn)
    first = conn.msgproperties(payload=b"m0")
    q.enqone(first)
    q.enqone(conn.msgproperties(payload=b"m1"))
    assert _reader(conn, "B1").deqone().payload == b"m0"
    spill_all(conn)
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.abspath(sluice.__file__)))   # this process's Sluice
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", _CHILD, dsn], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    second = _reader(conn, "B1", sluice.DEQ_BROWSE).deqone()
    assert out.stdout.split("\n")[:2] == [f"B1 {second.msgid.hex()} 1 0", f"B2 {first.msgid.hex()} 2 0"]


def test_a_dequeue_that_cannot_read_its_message_keeps_its_numbers(conn):
    """A REMOVE whose dequeue transformation raises takes nothing: the message goes back
    into memory with the numbers it had, which its later dequeue shows."""
    q = buffered_queue(conn)
    sluice.register_function("sluice.failing_buffered", lambda payload: 1 / 0)
    conn.transform.create_transformation(schema="sluice", name="failing", from_schema="sys",
                                         from_type="RAW", to_schema="sys", to_type="RAW",
                                         transformation="sluice.failing_buffered(source.user_data)")
    q.enqone(conn.msgproperties(payload=b"m0"))
    b1 = _reader(conn, "B1")
    b1.deqoptions.transformation = "failing"
    with pytest.raises(sluice.DatabaseError):
        b1.deqone()
    assert _row(conn, "B1") == (0, 0, 0, 0, 1, 1)
    b1.deqoptions.transformation = None
    assert b1.deqone().payload == b"m0"
    assert _row(conn, "B1") == (0, 0, 1, 1, 1, 0)
