"""A delay on buffered messages: Transactional Event Queues only.

Seed 003 "Buffered Messaging Restrictions": "The following Oracle Database Advanced Queuing
features are only supported for buffered messaging on sharded queues: Message delay, Array
enqueue, Array dequeue, PL/SQL Notification"; "Enqueuing Buffered Messages": "You cannot
specify delay when enqueuing buffered messages" (a classic queue: Oracle's ORA-25297
"Enqueue of buffered message failed, attempted to enqueue buffered message with delay").
"Delay" (seed 003 "Enqueue Features"): the message is not available for dequeue until the
delay has passed.  A delayed buffered message waits in memory; one that spills keeps its
delay in the queue table (WAITING), as a persistent one's.
"""

from __future__ import annotations

import time

import pytest

import sluice
from sluice.aq.buffered import BufferedLimits, configure, pool_for

from ..conftest import make_queue
from ..streams.propkit import raises_ora, rows

_DELAY = 1      # seconds: what a test waits out


@pytest.fixture
def waits(conn, monkeypatch):
    """How long each wait of ``conn``'s session for messages was allowed to last."""
    seen = []
    real_wait = type(conn.context).wait_for_messages

    def wait(ctx, since, timeout):
        if ctx is conn.context:
            seen.append(timeout)
        return real_wait(ctx, since, timeout)
    monkeypatch.setattr(type(conn.context), "wait_for_messages", wait)
    return seen


def _sharded(conn, name="TQ", multi=False):
    conn.aqadm.create_sharded_queue(queue_name=name, multiple_consumers=multi, queue_payload_type="RAW")
    conn.aqadm.start_queue(name)


def _buffered(q, wait=sluice.DEQ_NO_WAIT, consumer=None):
    q.enqoptions.deliverymode = q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = wait
    if consumer is not None:
        q.deqoptions.consumername = consumer
    return q


def _in_memory(conn, queue="TQ"):
    return pool_for(conn.context.store).count(conn.context.catalog.queue(queue))


def _states(conn, table="TQ"):
    return rows(conn, f"SELECT CORR_ID, MSG_STATE, DELIVERY_MODE FROM AQ${table} ORDER BY ENQ_TIME")


def test_a_delayed_buffered_message_waits_in_memory_for_its_delay(conn, waits):
    """Enqueued with a delay it stays in memory, not dequeueable (the plain dequeue, a
    dequeue by correlation: neither takes it early; the message enqueued after it without
    one goes first); a dequeue waiting for it gets it once the delay has passed — its wait
    ends then, no enqueue wakes it —, READY and still saying its delay."""
    _sharded(conn)
    q = _buffered(conn.queue("TQ"))
    enqueued = time.monotonic()
    q.enqone(conn.msgproperties(payload=b"later", delay=_DELAY, correlation="later"))
    q.enqone(conn.msgproperties(payload=b"now", correlation="now"))
    assert _in_memory(conn) == 2
    assert rows(conn, "SELECT CORR_ID, MSG_STATE FROM AQ$TQ ORDER BY ENQ_TIME") == [
        ("later", "IN-MEMORY"), ("now", "IN-MEMORY")]
    assert q.deqone().payload == b"now"
    assert q.deqone() is None
    q.deqoptions.correlation = "later"
    assert q.deqone() is None
    q.deqoptions.correlation = None
    q.deqoptions.wait = 30
    m = q.deqone()
    waited = time.monotonic() - enqueued
    assert m is not None and m.payload == b"later"
    assert _DELAY - 0.05 <= waited < 10
    assert 0 < waits[0] <= _DELAY        # to the end of the delay, not the store's recheck
    assert (m.delay, m.state, m.deliverymode) == (_DELAY, sluice.MSG_READY, sluice.MSG_BUFFERED)
    assert _in_memory(conn) == 0


def test_a_delayed_buffered_message_by_its_msgid(conn):
    """By its message id, a delayed message in memory is WAITING, not missing (no
    ORA-25263): a dequeue that does not wait finds nothing, one that waits gets it."""
    _sharded(conn)
    q = _buffered(conn.queue("TQ"))
    m = conn.msgproperties(payload=b"later", delay=_DELAY)
    q.enqone(m)
    q.deqoptions.msgid = m.msgid
    assert q.deqone() is None
    q.deqoptions.wait = 30
    assert q.deqone().payload == b"later"
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    raises_ora(25263, q.deqone)                                    # gone now


def test_listen_hears_a_delayed_buffered_message_when_its_delay_ends(conn, waits):
    """DBMS_AQ.LISTEN: a delayed message is not there yet (ORA-25254 without waiting); a
    LISTEN that waits answers once the delay has passed, its wait ending then."""
    _sharded(conn)
    _buffered(conn.queue("TQ")).enqone(conn.msgproperties(payload=b"later", delay=_DELAY))
    agents = [sluice.Agent(None, "TQ")]
    raises_ora(25254, conn.aq.listen, agents, 0, sluice.MSG_BUFFERED)
    assert conn.aq.listen(agents, 30, sluice.MSG_BUFFERED) == (sluice.Agent(None, "SLUICE.TQ"),
                                                                sluice.MSG_BUFFERED)
    assert 0 < waits[-1] <= _DELAY


def test_delayed_buffered_messages_of_a_multi_consumer_queue_and_an_array(conn):
    """Each subscriber's copy waits out the delay; an array enqueue (sharded queues: seed 003)
    gives each message its own delay."""
    _sharded(conn, multi=True)
    conn.aqadm.add_subscriber("TQ", sluice.Agent("A"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    conn.aqadm.add_subscriber("TQ", sluice.Agent("B"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    q = _buffered(conn.queue("TQ"))
    q.enqmany([conn.msgproperties(payload=b"later", delay=_DELAY), conn.msgproperties(payload=b"now")])
    for name in ("A", "B"):
        d = _buffered(conn.queue("TQ"), consumer=name)
        assert [m.payload for m in d.deqmany(5)] == [b"now"]
    time.sleep(_DELAY)
    for name in ("A", "B"):
        d = _buffered(conn.queue("TQ"), consumer=name)
        assert [m.payload for m in d.deqmany(5)] == [b"later"]


def test_a_delayed_buffered_message_keeps_its_delay_when_it_spills(conn):
    """Spilled (the memory limit passed) before its delay is over, it is WAITING in the queue
    table (AQ$: MSG_STATE WAITING, spilled) and dequeued only after the delay, as a
    persistent message would be; one whose delay passed in memory spills READY."""
    _sharded(conn)
    q = _buffered(conn.queue("TQ"))
    q.enqone(conn.msgproperties(payload=b"was delayed", delay=_DELAY, correlation="past"))
    time.sleep(_DELAY)
    limits = configure(conn, memory_limit=0)
    try:
        q.enqone(conn.msgproperties(payload=b"later", delay=_DELAY, correlation="later"))
    finally:
        limits.memory_limit = BufferedLimits().memory_limit
    assert _in_memory(conn) == 0
    assert rows(conn, "SELECT CORR_ID, MSG_STATE, MSG_MEMORY_STATE, DELIVERY_MODE FROM AQ$TQ "
                      "ORDER BY ENQ_TIME") == [("past", "SPILLED", "SPILLED", "BUFFERED"),
                                                ("later", "WAITING", "SPILLED", "BUFFERED")]
    assert q.deqone().payload == b"was delayed"
    assert q.deqone() is None
    q.deqoptions.wait = 30
    m = q.deqone()
    assert m is not None and (m.payload, m.delay) == (b"later", _DELAY)


@pytest.mark.parametrize("multi", [False, True], ids=["single", "multi"])
def test_a_classic_queue_refuses_a_delayed_buffered_message(conn, multi):
    """Seed 003: "You cannot specify delay when enqueuing buffered messages" — ORA-25297,
    nothing kept; a persistent delayed message and a buffered one without delay still go."""
    make_queue(conn, "CQ", multiple_consumers=multi)
    if multi:
        conn.aqadm.add_subscriber("CQ", sluice.Agent("A"), delivery_mode=sluice.MSG_PERSISTENT_OR_BUFFERED)
    q = _buffered(conn.queue("CQ"))
    raises_ora(25297, q.enqone, conn.msgproperties(payload=b"x", delay=5))
    assert _in_memory(conn, "CQ") == 0
    assert rows(conn, "SELECT COUNT(*) FROM AQ$CQ_QT") == [(0,)]
    q.enqone(conn.msgproperties(payload=b"y"))
    p = conn.queue("CQ")
    p.enqone(conn.msgproperties(payload=b"z", delay=5))
    conn.commit()
    assert sorted(rows(conn, "SELECT MSG_STATE FROM AQ$CQ_QT")) == [("IN-MEMORY",), ("WAITING",)]
