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
from sluice.aq.buffered import BufferedLimits, configure, pool_for
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


def test_a_delayed_message_goes_with_the_rest_of_its_delay(conn):
    """Seed 003: "Oracle Database Advanced Queuing accounts for any delay in propagation by
    adjusting the delay and expiration parameters accordingly" — from a single-consumer
    source too."""
    _sharded(conn, "SRC")
    _sharded(conn, "DST")
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="DST")
    conn.queue("SRC").enqone(conn.msgproperties(payload=b"later", delay=600, expiration=60))
    conn.commit()
    assert PropagationRunner(conn).run_once(force=True) == 1
    assert rows(conn, "SELECT MSG_STATE, EXPIRATION FROM AQ$DST") == [("WAITING", 60)]
    assert rows(conn, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]


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


def test_two_propagations_from_a_single_consumer_source_share_its_messages(conn):
    """Seed 003: a single-consumer queue is point to point, "Each message is consumed by only
    one receiver", and "When there are multiple processes dequeuing from a single-consumer
    queue ... different processes skip the messages that are being worked on by a
    concurrent process".  Two propagations from it (a schedule and a CREATE_PROPAGATION,
    each queue to queue) are two such consumers: Oracle documents no error for the second
    (ORA-24041 is for the same queue and destination twice), so each message goes to one
    of the destinations — all of them, none twice, each destination's in the source's
    order."""
    _sharded(conn, "SRC")
    _sharded(conn, "DST1")
    _sharded(conn, "DST2")
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="DST1")
    raises_ora(24041, conn.aqadm.schedule_propagation, queue_name="SRC", destination_queue="DST1")
    conn.propagation_adm.create_propagation("P2", "SRC", "DST2", queue_to_queue=True)
    sent = [b"m%d" % i for i in range(6)]
    _enqueue(conn, "SRC", sent)
    _buffered(conn.queue("SRC")).enqone(conn.msgproperties(payload=b"buffered"))
    assert PropagationRunner(conn).run_once(force=True) == 7
    one, two = (_payloads(drain(conn, name)) + [m.payload for m in _buffered(conn.queue(name)).deqmany(9)]
                for name in ("DST1", "DST2"))
    assert sorted(one + two) == sorted(sent + [b"buffered"])
    for got in (one, two):
        persistent = [p for p in got if p != b"buffered"]
        assert persistent == sorted(persistent, key=sent.index)
    assert rows(conn, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]


def _buffered(q):
    q.enqoptions.deliverymode = q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    return q


def test_buffered_messages_of_a_single_consumer_source(conn):
    """Seed 003 "Propagating Buffered Messages" (one schedule serves both kinds) from a
    single-consumer TxEventQ: its buffered messages go with the persistent ones and arrive
    buffered.  While the destination refuses (not enabled for enqueue) they stay in the
    source's memory, as they were; once it takes them they go, once."""
    _sharded(conn, "SRC")
    conn.aqadm.create_sharded_queue(queue_name="DST", queue_payload_type="RAW")   # not started yet
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="DST")
    _buffered(conn.queue("SRC")).enqmany([conn.msgproperties(payload=p) for p in (b"b1", b"b2")])
    _enqueue(conn, "SRC", [b"p1"])
    assert PropagationRunner(conn).run_once(force=True) == 0
    assert _schedule(conn)[0][3].startswith("ORA-25207")
    assert sorted(rows(conn, "SELECT MSG_STATE FROM AQ$SRC")) == [("IN-MEMORY",), ("IN-MEMORY",), ("READY",)]
    conn.aqadm.start_queue("DST")
    assert PropagationRunner(conn, clock=lambda: time.time() + 31).run_once(force=True) == 3
    assert rows(conn, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]
    got = _buffered(conn.queue("DST")).deqmany(5)
    assert [(m.payload, m.deliverymode) for m in got] == [(b"b1", sluice.MSG_BUFFERED), (b"b2", sluice.MSG_BUFFERED)]
    assert _payloads(drain(conn, "DST")) == [b"p1"]
    assert PropagationRunner(conn).run_once(force=True) == 0


def _to_a_reader_at_dbs2(sites):
    """Sites dbs1 (single-consumer SRC, a link to dbs2) and dbs2 (multi-consumer DST whose
    subscriber READER takes both kinds of message); returns (dbs1, READER's buffered DST)."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    _sharded(a, "SRC")
    _sharded(b, "DST", multi=True)
    b.aqadm.add_subscriber("DST", sluice.Agent("READER"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    q = _buffered(b.queue("DST"))
    q.deqoptions.consumername = "READER"
    return a, q


def test_buffered_messages_of_a_single_consumer_source_across_a_link(sites):
    a, q = _to_a_reader_at_dbs2(sites)
    a.propagation_adm.create_propagation("P1", "SRC", "DST", "dbs2", queue_to_queue=True)
    _buffered(a.queue("SRC")).enqmany([a.msgproperties(payload=p) for p in (b"b1", b"b2", b"b3")])
    assert PropagationRunner(a).run_once(force=True) == 3
    assert [m.payload for m in q.deqmany(5)] == [b"b1", b"b2", b"b3"]


def test_a_delayed_buffered_message_goes_with_the_rest_of_its_delay(conn):
    """A delayed buffered message (sharded queues only: seed 003 "Buffered Messaging
    Restrictions") propagates as a delayed persistent one does: into the destination's
    memory, still waiting out what is left of its delay there."""
    _sharded(conn, "SRC")
    _sharded(conn, "DST")
    conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="DST")
    _buffered(conn.queue("SRC")).enqone(conn.msgproperties(payload=b"later", delay=600, expiration=60))
    assert PropagationRunner(conn).run_once(force=True) == 1
    assert rows(conn, "SELECT MSG_STATE, EXPIRATION, DELIVERY_MODE FROM AQ$DST") == [("IN-MEMORY", 60, "BUFFERED")]
    assert _buffered(conn.queue("DST")).deqone() is None
    [(record, *_)] = [v for k, v in pool_for(conn.context.store).in_memory().items() if k.endswith(".DST")]
    assert 590 < record.delay - time.time() <= 600


def _spill_then_keep(conn, queue, spilled, kept):
    """Buffered enqueues into ``queue``: ``spilled`` past a memory limit of nothing (to the
    queue table, SPILLED), then ``kept`` in memory (IN-MEMORY)."""
    q = _buffered(conn.queue(queue))
    limits = configure(conn, memory_limit=0)
    try:
        for p in spilled:
            q.enqone(conn.msgproperties(payload=p))
    finally:
        limits.memory_limit = BufferedLimits().memory_limit
    for p in kept:
        q.enqone(conn.msgproperties(payload=p))


@pytest.mark.parametrize("how", ["schedule_propagation", "create_propagation"])
def test_spilled_buffered_messages_of_a_single_consumer_source(conn, how):
    """Seed 003: buffered messages spill to disk ("older messages are spilled to disk and
    removed from the pool") and "A single propagation schedule serves both persistent and
    buffered messages": those a single-consumer TxEventQ spilled go from its queue table with
    those still in memory, once and in their order, and arrive buffered.  While the
    destination refuses, the spilled ones stay SPILLED and the others IN-MEMORY."""
    _sharded(conn, "SRC")
    conn.aqadm.create_sharded_queue(queue_name="DST", queue_payload_type="RAW")   # not started yet
    if how == "schedule_propagation":
        conn.aqadm.schedule_propagation(queue_name="SRC", destination_queue="DST")
    else:
        conn.propagation_adm.create_propagation("P1", "SRC", "DST", queue_to_queue=True)
    _spill_then_keep(conn, "SRC", [b"s1", b"s2", b"s3"], [b"m1", b"m2"])
    states = "SELECT MSG_STATE, DELIVERY_MODE FROM AQ$SRC ORDER BY ENQ_TIME"
    before = [("SPILLED", "BUFFERED")] * 3 + [("IN-MEMORY", "BUFFERED")] * 2
    assert rows(conn, states) == before
    assert PropagationRunner(conn).run_once(force=True) == 0
    assert _schedule(conn)[0][3].startswith("ORA-25207")
    assert rows(conn, states) == before
    conn.aqadm.start_queue("DST")
    assert PropagationRunner(conn, clock=lambda: time.time() + 31).run_once(force=True) == 5
    assert rows(conn, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]
    got = _buffered(conn.queue("DST")).deqmany(10)
    assert [(m.payload, m.deliverymode) for m in got] == [
        (p, sluice.MSG_BUFFERED) for p in (b"s1", b"s2", b"s3", b"m1", b"m2")]
    assert drain(conn, "DST") == []
    assert PropagationRunner(conn, clock=lambda: time.time() + 62).run_once(force=True) == 0


def test_spilled_buffered_messages_of_a_single_consumer_source_across_a_link(sites):
    """The same through a database link, to a multi-consumer TxEventQ."""
    a, q = _to_a_reader_at_dbs2(sites)
    a.aqadm.schedule_propagation(queue_name="SRC", destination="dbs2", destination_queue="DST")
    _spill_then_keep(a, "SRC", [b"s1", b"s2"], [b"m1"])
    assert PropagationRunner(a).run_once(force=True) == 3
    assert [m.payload for m in q.deqmany(5)] == [b"s1", b"s2", b"m1"]
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC") == [(0,)]
    assert PropagationRunner(a, clock=lambda: time.time() + 31).run_once(force=True) == 0


def _propagations(conn):
    return rows(conn, "SELECT PROPAGATION_NAME, DESTINATION_QUEUE_NAME, DESTINATION_DBLINK, QUEUE_TO_QUEUE, "
                      "STATUS FROM DBA_PROPAGATION ORDER BY PROPAGATION_NAME")


def test_create_propagation_from_a_single_consumer_sharded_queue(conn):
    """DBMS_PROPAGATION_ADM.CREATE_PROPAGATION takes a single-consumer TxEventQ as its
    source, queue to queue as SCHEDULE_PROPAGATION does: the propagation is the queue's
    consumer (no subscriber: the queue can have none), its schedule sends each message to
    the destination queue, PROCESSED at the source; STOP_ / START_ / DROP_PROPAGATION act
    on its schedule."""
    _sharded(conn, "SRC", queue_properties={"retention_time": 3600})
    _sharded(conn, "DST", multi=True)
    conn.aqadm.add_subscriber("DST", sluice.Agent("READER"))
    conn.propagation_adm.create_propagation("P1", "SRC", "DST", queue_to_queue=True)
    assert _propagations(conn) == [("P1", "DST", None, "TRUE", "ENABLED")]
    assert rows(conn, "SELECT COUNT(*) FROM DBA_QUEUE_SUBSCRIBERS WHERE QUEUE_NAME = 'SRC'") == [(0,)]
    _enqueue(conn, "SRC", [b"1", b"2"])
    assert PropagationRunner(conn).run_once(force=True) == 2
    assert _payloads(drain(conn, "DST", "READER")) == [b"1", b"2"]
    assert rows(conn, "SELECT MSG_STATE FROM AQ$SRC") == [("PROCESSED",), ("PROCESSED",)]
    conn.propagation_adm.stop_propagation("P1")
    _enqueue(conn, "SRC", [b"3"])
    assert PropagationRunner(conn).run_once(force=True) == 0
    conn.propagation_adm.start_propagation("P1")
    assert PropagationRunner(conn).run_once(force=True) == 1
    assert _payloads(drain(conn, "DST", "READER")) == [b"3"]
    conn.propagation_adm.drop_propagation("P1")
    assert _propagations(conn) == [] and _schedule(conn) == []
    conn.aqadm.drop_transactional_event_queue("SRC", force=True)     # nothing propagates from it


def test_create_propagation_from_a_single_consumer_sharded_queue_across_a_link(sites):
    """The same through a database link."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    _sharded(a, "SRC")
    _sharded(b, "DST")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("P1", "SRC", "DST", "dbs2", queue_to_queue=True)
    _enqueue(a, "SRC", [b"x", b"y"])
    assert PropagationRunner(a).run_once(force=True) == 2
    assert _payloads(drain(b, "DST")) == [b"x", b"y"]
    assert _schedule(a) == [('"SLUICE"."DST"@DBS2', 2, 0, None)]


def test_create_propagation_refuses_what_a_single_consumer_source_cannot_do(conn):
    """A queue-to-dblink propagation (queue_to_queue FALSE, the default) routes by its
    source queue's subscribers, which a single-consumer queue cannot have: ORA-24039, as
    SCHEDULE_PROPAGATION without a destination queue; a classic single-consumer queue is
    no source at all (seed 003); a classic destination stays ORA-24205.  Nothing is left."""
    _sharded(conn, "SRC")
    _sharded(conn, "DST")
    make_queue(conn, "CL_SRC")
    make_queue(conn, "CL_DST")
    padm = conn.propagation_adm
    raises_ora(24039, padm.create_propagation, "P1", "SRC", "DST")
    raises_ora(24039, padm.create_propagation, "P1", "SRC", "DST", queue_to_queue=False)
    raises_ora(24039, padm.create_propagation, "P1", "CL_SRC", "CL_DST", queue_to_queue=True)
    raises_ora(24205, padm.create_propagation, "P1", "SRC", "CL_DST", queue_to_queue=True)
    assert _propagations(conn) == [] and _schedule(conn) == []


# -- a destination at another site: its kind is known when the propagation reaches it ---
@pytest.mark.parametrize("source_sharded", [True, False], ids=["sharded-to-classic", "classic-to-sharded"])
def test_a_remote_destination_of_the_other_kind_fails_the_schedule(sites, source_sharded):
    """Seed 003: "You cannot propagate between sharded and non-sharded queues".  At
    SCHEDULE_PROPAGATION a queue at a link is unknown (seed 003: the link is validated "when
    the schedule runs, but not when the schedule is created"); the destination refuses the
    batch (ORA-24205), so the schedule fails and the messages stay at the source."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    if source_sharded:
        _sharded(a, "SRC", multi=True)
        make_queue(b, "DST", table="DST")
    else:
        make_queue(a, "SRC", table="SRC", multiple_consumers=True)
        _sharded(b, "DST")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.aqadm.schedule_propagation(queue_name="SRC", destination="dbs2", destination_queue="DST")
    a.aqadm.add_subscriber("SRC", sluice.Agent(None, "DST@DBS2"))
    _enqueue(a, "SRC", [b"x"])
    assert PropagationRunner(a).run_once(force=True) == 0
    (_, total, failures, error), = _schedule(a)
    assert (total, failures) == (0, 1) and error.startswith("ORA-24205")
    assert rows(a, "SELECT MSG_STATE FROM AQ$SRC") == [("READY",)]
    assert rows(b, "SELECT COUNT(*) FROM AQ$DST") == [(0,)]


def test_a_remote_classic_queue_behind_a_sharded_source_in_a_queue_to_dblink_schedule(sites, caplog):
    """Seed 003 "Propagation failures": in a queue-to-dblink schedule ORA-24205 is an
    application error like a missing queue — the records for the classic queue there are
    marked UNDELIVERABLE (and said in the alert log), those for the sharded queue go, and
    the schedule does not fail (a queue-to-queue one stops instead: the test above)."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    _sharded(a, "SRC", multi=True)
    _sharded(b, "SHQ", multi=True)
    b.aqadm.add_subscriber("SHQ", sluice.Agent("G"))
    make_queue(b, "CLQ", table="CLQ", multiple_consumers=True)
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.aqadm.add_subscriber("SRC", sluice.Agent("G", "SHQ@DBS2"))
    a.aqadm.add_subscriber("SRC", sluice.Agent("B", "CLQ@DBS2"))
    a.aqadm.schedule_propagation(queue_name="SRC", destination="dbs2")
    _enqueue(a, "SRC", [b"m1", b"m2"])
    with caplog.at_level("ERROR", logger="sluice.alert"):
        assert PropagationRunner(a).run_once(force=True) == 2
    assert _payloads(drain(b, "SHQ", "G")) == [b"m1", b"m2"]
    assert rows(b, "SELECT COUNT(*) FROM AQ$CLQ") == [(0,)]
    assert _schedule(a) == [("DBS2", 2, 0, None)]
    assert rows(a, "SELECT CONSUMER_NAME, MSG_STATE FROM AQ$SRC ORDER BY ENQ_TIME, CONSUMER_NAME") == [
        ("B", "UNDELIVERABLE"), ("B", "UNDELIVERABLE")]
    logged = [r.getMessage() for r in caplog.records if r.name == "sluice.alert"]
    assert len(logged) == 2 and all("ORA-24205" in m for m in logged), logged
    assert PropagationRunner(a).run_once(force=True) == 0


def test_the_batch_says_whether_its_source_is_sharded():
    """Both encodings carry the source's kind; a batch from an older sender (no entry) is
    not checked."""
    from sluice.streams.propagation.wire import Batch, from_json, to_json, to_wire
    for sharded in (True, False, None):
        batch = Batch("DBS1", "SLUICE.SRC", source_sharded=sharded)
        assert from_json(to_wire(batch)).source_sharded is sharded
        assert from_json(to_json(batch)).source_sharded is sharded
    assert from_json(b'{"source_site":"DBS1","source_queue":"SLUICE.SRC","messages":[]}').source_sharded is None
    with pytest.raises(sluice.DatabaseError, match="ORA-00600"):
        from_json(b'{"source_site":"DBS1","source_queue":"SLUICE.SRC","sharded":"yes","messages":[]}')
