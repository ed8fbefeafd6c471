"""Propagation from a single-consumer sharded queue / Transactional Event Queue.

Seed 003 "Propagation Features": "For sharded queues, you can propagate between
single-consumuer and multi-consumer sharded queues" (both ways; for non-sharded queues
"Propagation from a single-consumer queue to a multi-consumer non-sharrded queue is not
possible"), and "A message is marked as processed in the source queue immediately after the
message has been propagated".  The guarantees are the existing propagation's (seed 001
"Ensured Message Delivery"): the source gives a message up only once the destination has
committed it, and a batch sent again is kept once there.
"""

from __future__ import annotations

import time

import pytest

import sluice
from sluice.streams.propagation.runner import PropagationRunner

from ..conftest import make_queue
from ..streams.propkit import Sites, drain, lose_first_commit, raises_ora, rows


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def _sharded(conn, name, multi=False, **kw):
    conn.aqadm.create_sharded_queue(queue_name=name, multiple_consumers=multi, queue_payload_type="RAW", **kw)
    conn.aqadm.start_queue(name)


def _enqueue(conn, queue, payloads):
    conn.queue(queue).enqmany([conn.msgproperties(payload=p) for p in payloads])
    conn.commit()


def _payloads(msgs):
    return [m.payload for m in msgs]


def _schedule(conn):
    return rows(conn, "SELECT DESTINATION, TOTAL_NUMBER, FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES "
                      "ORDER BY DESTINATION")


def test_single_consumer_sharded_to_single_and_multi_consumer_sharded(conn):
    """Queue-to-queue schedules from a single-consumer TxEventQ: each message goes to one
    destination (the propagation is the source's consumer) and is PROCESSED at the source,
    kept there for the queue's retention."""
    _sharded(conn, "SRC", queue_properties={"retention_time": 3600})
    _sharded(conn, "ONE")
    _sharded(conn, "MANY", multi=True)
    conn.aqadm.add_subscriber("MANY", sluice.Agent("READER"))
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="ONE")
    _enqueue(conn, "SRC", [b"1", b"2"])
    assert PropagationRunner(conn).run_once(force=True) == 2
    assert _payloads(drain(conn, "ONE")) == [b"1", b"2"]
    assert rows(conn, "SELECT MSG_STATE, CONSUMER_NAME FROM AQ$SRC ORDER BY ENQ_TIME") == [
        ("PROCESSED", None), ("PROCESSED", None)]
    conn.aqadm.unschedule_propagation(queue_name="SRC", destination_queue="ONE")
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="MANY")
    _enqueue(conn, "SRC", [b"3"])
    assert PropagationRunner(conn).run_once(force=True) == 1
    assert _payloads(drain(conn, "MANY", "READER")) == [b"3"]
    assert _schedule(conn) == [('"SLUICE"."MANY"', 1, 0, None)]


def test_the_source_gives_a_message_up_only_once_delivered(conn):
    """A destination that refuses (not enabled for enqueue, ORA-25207) leaves the messages
    at the source as they were — no attempt counted, so no exception queue or purge — and
    the schedule records the failure; once the destination takes them they go, once."""
    _sharded(conn, "SRC", max_retries=0)
    conn.aqadm.create_sharded_queue(queue_name="DST", queue_payload_type="RAW")
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="DST")
    _enqueue(conn, "SRC", [b"a", b"b"])
    assert PropagationRunner(conn).run_once(force=True) == 0
    assert _schedule(conn)[0][2] == 1 and _schedule(conn)[0][3].startswith("ORA-25207")
    assert rows(conn, "SELECT MSG_STATE, RETRY_COUNT FROM AQ$SRC") == [("READY", 0), ("READY", 0)]
    conn.aqadm.start_queue("DST")
    assert PropagationRunner(conn, clock=lambda: time.time() + 31).run_once(force=True) == 2
    assert _payloads(drain(conn, "DST")) == [b"a", b"b"]
    assert rows(conn, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]


def test_a_lost_answer_does_not_duplicate(sites, monkeypatch):
    """Across a database link: the destination committed, the source's commit failed; the
    next run sends the batch again and the destination keeps each message once."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    _sharded(a, "SRC")
    _sharded(b, "DST", multi=True)
    b.aqadm.add_subscriber("DST", sluice.Agent("READER"))
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.aqadm.schedule_propagation(queue_name="SRC", destination="dbs2", destination_queue="DST")
    _enqueue(a, "SRC", [b"once-%d" % i for i in range(5)])
    restore = lose_first_commit(monkeypatch, a.context.session)
    PropagationRunner(a).run_once(force=True)
    restore()
    assert rows(b, "SELECT COUNT(*) FROM AQ$DST") == [(5,)]              # committed there
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC") == [(5,)]              # back at the source
    assert PropagationRunner(a, clock=lambda: time.time() + 31).run_once(force=True) == 5
    assert _payloads(drain(b, "DST", "READER")) == [b"once-%d" % i for i in range(5)]
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]


def test_what_a_single_consumer_source_still_refuses(conn):
    """A classic single-consumer queue is no source (seed 003), nor is a sharded one without
    a destination queue: its messages name no recipient to route by (ORA-24039); a sharded
    source still cannot reach a classic queue (ORA-24205)."""
    _sharded(conn, "SRC")
    make_queue(conn, "CL_SRC")
    make_queue(conn, "CL_DST")
    _sharded(conn, "DST")
    aq = conn.aqadm
    raises_ora(24039, aq.schedule_propagation, queue_name="CL_SRC", destination_queue="CL_DST")
    raises_ora(24039, aq.schedule_propagation, queue_name="SRC", destination="dbs2")
    raises_ora(24039, aq.schedule_propagation, queue_name="SRC")
    raises_ora(24205, aq.schedule_propagation, queue_name="SRC", destination_queue="CL_DST")
    assert _schedule(conn) == []
