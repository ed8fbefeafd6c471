"""Large messages over HTTP propagation (seed 004 "Using HTTP and HTTPS for Oracle Streams
AQ Propagation"; seed 003 "Propagation failures").  The sender sizes each request by the
servlet's limit (``sluice serve --max-batch-bytes``, advertised in every answer), so a
batch larger than it goes in several requests, in order and once; a message no request
can carry is marked UNDELIVERABLE with ORA-12899 and the messages behind it go on.
Before, one message over about 1 MB encoded stopped the schedule for good: every run was
answered 413 (ORA-03113) until the schedule was disabled."""

from __future__ import annotations

import pytest

from sluice.streams.propagation import sites as sites_module
from sluice.streams.propagation.runner import PropagationRunner
from sluice.streams.propagation.wire import Batch, Propagated, from_json, split, to_wire, wire_size

from .propkit import drain, multi_queue, rows
from .test_propagation_http import http_link, served_site, sites  # noqa: F401  (sites: the fixture)

SMALL = 64 * 1024


def _sent(monkeypatch) -> list[int]:
    """The size of each request the sender writes from now on."""
    sizes: list[int] = []
    real = sites_module.to_wire

    def spy(batch):
        body = real(batch)
        sizes.append(len(body))
        return body
    monkeypatch.setattr(sites_module, "to_wire", spy)
    return sizes


def _source(sites, server, q2q=False):
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server)
    a.propagation_adm.create_propagation("p", "src", "strm.dst", "dbs2", queue_to_queue=q2q)
    return a


def _enqueue_each(a, payloads):
    q = a.queue("SRC")
    for p in payloads:          # a transaction each: the sender may cut between any two
        q.enqone(a.msgproperties(payload=p))
        a.commit()


def _schedule(a):
    [row] = rows(a, "SELECT TOTAL_NUMBER, FAILURES, SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES")
    return row


def test_a_message_over_a_megabyte_between_small_ones_arrives(sites):
    """Default limits on both sides: a 1.2 MB RAW message between two small ones goes in
    one run; before, every run was refused 413 ("the limit is 1048576 bytes")."""
    b, server = served_site(sites, "dbs2")
    a = _source(sites, server)
    big = bytes(range(256)) * (1_200_000 // 256)
    sent = [b"before", big, b"after"]
    _enqueue_each(a, sent)
    assert PropagationRunner(a).run_once(force=True) == 3
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == sent
    assert _schedule(a) == (3, 0, "N")


@pytest.mark.parametrize("learnt, batch_size", [("asked", 60), ("from-a-413", 15), ("from-a-413-unpipelined", 15)])
def test_many_medium_messages_over_the_limit_go_in_several_requests_in_order_once(sites, monkeypatch, learnt,
                                                                                   batch_size):
    """80 messages of 20 KB (1.6 MB) to a servlet that takes 256 KB a request, three
    batches in flight: every request stays under the limit, and each message arrives
    once, in order, in one run.  A first batch over 1 MB (60 messages) makes the sender
    ask the servlet's limit first; smaller ones (15) go as they are, by the 32 MB default:
    the first is refused 413 (the batches behind it in flight go back), the sender learns
    the limit from that answer and sends the batch again in parts, in the same run.  Sent
    one batch at a time (not pipelined: HttpSite.deliver), the part refused 413 and those
    after it are cut again by the limit learnt and sent on."""
    limit = 256 * 1024
    b, server = served_site(sites, "dbs2", "DST", "--max-batch-bytes", str(limit))
    a = _source(sites, server)
    sent = [b"%03d" % i + bytes([i]) * 20_000 for i in range(80)]
    _enqueue_each(a, sent)
    if learnt.endswith("unpipelined"):
        monkeypatch.setattr(sites_module.HttpSite, "pipelined", False)
    sizes = _sent(monkeypatch)
    assert PropagationRunner(a, batch_size=batch_size).run_once(force=True) == 80
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == sent
    assert _schedule(a) == (80, 0, "N")
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    first_fit = next(i for i, n in enumerate(sizes) if n <= limit)
    if learnt == "asked":           # the empty batch that asked, then parts that fit
        assert sizes[0] < 200 and first_fit == 0, sizes
    else:                           # the batches written before the 413 was read
        assert 1 <= first_fit <= (1 if learnt.endswith("unpipelined") else 3), sizes
    fitting = sizes[first_fit:]
    assert all(n <= limit for n in fitting) and len(fitting) >= 8 and sum(fitting) > 1_600_000, sizes


@pytest.mark.parametrize("q2q, big", [(False, 1_100_000), (True, 1_100_000), (False, 100_000)],
                         ids=["queue-to-dblink", "queue-to-queue", "queue-to-dblink-413"])
def test_a_message_over_the_configured_limit_is_undeliverable_and_the_rest_arrive(sites, monkeypatch, caplog,
                                                                                  q2q, big):
    """A servlet taking 64 KB a request: a larger message between small ones is marked
    UNDELIVERABLE at the source with ORA-12899 in the alert log (its size and the limit),
    the others arrive once and in order, and the schedule records no failure — in either
    kind of schedule.  A first batch over 1 MB makes the sender ask the limit: the message
    is never sent; a smaller one is sent, refused 413, the sender learns the limit and the
    batch is sifted as for a refusal.  Another such message later is refused before it is
    sent: no request over the limit."""
    b, server = served_site(sites, "dbs2", "DST", "--max-batch-bytes", str(SMALL))
    a = _source(sites, server, q2q)
    big = b"B" * big
    _enqueue_each(a, [b"m0", b"m1", big, b"m3", b"m4"])
    sizes = _sent(monkeypatch)
    runner = PropagationRunner(a, batch_size=10)
    with caplog.at_level("ERROR", logger="sluice.alert"):
        assert runner.run_once(force=True) == 4
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == [b"m0", b"m1", b"m3", b"m4"]
    assert _schedule(a) == (4, 0, "N")
    assert rows(a, "SELECT MSG_STATE, USER_DATA FROM AQ$SRC_QT") == [("UNDELIVERABLE", big)]
    [logged] = [r.getMessage() for r in caplog.records if r.name == "sluice.alert"]
    assert "marked UNDELIVERABLE" in logged and "ORA-12899" in logged and f"maximum: {SMALL}" in logged, logged
    assert (max(sizes) <= SMALL) == (len(big) > 1 << 20), sizes
    caplog.clear()
    del sizes[:]
    _enqueue_each(a, [b"m5", big + b"2", b"m7"])
    with caplog.at_level("ERROR", logger="sluice.alert"):
        assert runner.run_once(force=True) == 2
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == [b"m5", b"m7"]
    assert _schedule(a) == (6, 0, "N")
    assert sorted(rows(a, "SELECT USER_DATA FROM AQ$SRC_QT WHERE MSG_STATE = 'UNDELIVERABLE'")) == [
        (big,), (big + b"2",)]
    assert len([r for r in caplog.records if r.name == "sluice.alert"]) == 1
    assert sizes and max(sizes) <= SMALL, sizes
    assert runner.run_once(force=True) == 0


# -- how a batch is cut (wire.split) -------------------------------------------------
def _message(i, data, **kw):
    return Propagated("STRM.DST", i.to_bytes(16, "big"), i.to_bytes(16, "big"), "RAW", data, **kw)


def test_split_keeps_each_request_under_the_limit_in_order():
    """Every part of a cut batch encodes to at most the limit, whatever the payloads (RAW,
    text whose characters JSON escapes as 12 bytes, long metadata) — but a message larger
    than the limit, alone; the parts hold the
    messages in order, each once; the acknowledgements ride the first parts, also cut
    when more than one request holds."""
    astral = "\U0001F600"
    msgs = [_message(i, bytes(3000 * (i % 5))) for i in range(30)]
    msgs += [_message(100 + i, astral * (300 * i) + '"\\\x01', correlation=astral * 20,
                      recipients=["R" * 30] * 3, group="tx%d" % (i // 3)) for i in range(12)]
    msgs += [_message(200 + i, "x" * 9000) for i in range(5)]
    acked = [("STRM.DST", (1000 + i).to_bytes(16, "big")) for i in range(400)]
    batch = Batch("DBS1", "STRM.SRC", msgs, acked=acked)
    for limit in (8_000, 20_000, 70_000, 1 << 20):
        parts = split(batch, limit)
        bodies = [to_wire(p) for p in parts]
        # (a message larger than the limit alone goes alone)
        alone = [len(p.messages) == 1 and len(to_wire(Batch("DBS1", "STRM.SRC", p.messages))) > limit
                 for p in parts]
        assert all(len(b) <= limit or big for b, big in zip(bodies, alone)), (limit, [len(b) for b in bodies])
        back = [from_json(b) for b in bodies]
        assert [m.source_msgid for p in back for m in p.messages] == [m.source_msgid for m in msgs]
        assert [m.user_data for p in back for m in p.messages] == [m.user_data for m in msgs]
        assert [a for p in back for a in p.acked] == acked
        assert all(p.acked == [] for p in back[next(i for i, p in enumerate(back) if p.messages):][1:])
    assert len(split(batch, 1 << 20)) == 1
    for m in msgs:
        assert wire_size(m) >= len(to_wire(Batch("D", "Q", [m]))) - len(to_wire(Batch("D", "Q", [])))


def test_a_message_larger_than_the_limit_goes_alone():
    """What no request can carry is not merged with others (the sender checks it and marks
    it UNDELIVERABLE before sending: :meth:`HttpSite.oversized`)."""
    msgs = [_message(0, b"a"), _message(1, b"b" * 5000), _message(2, b"c")]
    parts = split(Batch("DBS1", "STRM.SRC", msgs), 2000)
    assert [[m.user_data[:1] for m in p.messages] for p in parts] == [[b"a"], [b"b"], [b"c"]]
