"""txn_lcr_spill_threshold on the buffered queue: an apply process reading a BUFFERED
capture's LCRs (:mod:`sluice.streams.apply.bufferedreader`) holds at most about the threshold
of one source transaction's LCRs; the rest of a larger transaction goes to the spill table
(DBA_APPLY_SPILL_TXN) in the store commit that tells the capture how far the apply consumed,
and the transaction is applied once, whole, in source order, when its last LCR has been read.
A restart of the capture and the apply mid-spill neither loses an LCR nor applies one twice:
the capture stages again from its slot (which never passes the spilled transaction) leaving
out what the apply consumed, and the apply goes on with its spill.  Both store backends; the
source is PostgreSQL, the apply target an SQLite file."""

from __future__ import annotations

import contextlib
import sqlite3
import threading

import sluice
from sluice.aq.buffered import pool_for
from sluice.aq.queue import Queue
from tests.streams.capturekit import CONSUMER, env  # noqa: F401  (fixture)
from tests.streams.hostkit import wait_for
from tests.streams.test_apply_buffered import apply_process, applied_scn, errors, rows, world  # noqa: F401
from tests.streams.test_capture_staging import confirmed

SPILL = "SELECT APPLY_NAME, XIDSQN, MESSAGE_COUNT FROM DBA_APPLY_SPILL_TXN"


def spilling(env, threshold: str = "5") -> None:
    env.conn.apply_adm.set_parameter(CONSUMER, "txn_lcr_spill_threshold", threshold)


def large_transaction(env, first: int, updates: int) -> None:
    """One source transaction: an INSERT of row ``first`` and ``updates`` UPDATEs of it, each
    setting v to its number (applied out of order or twice, the row would end otherwise)."""
    env.sql(f"INSERT INTO {env.src}.t VALUES ({first}, '0')",
            *(f"UPDATE {env.src}.t SET v = '{k}' WHERE id = {first}" for k in range(1, updates + 1)))


def recording(app) -> list:
    """(commit SCN, how many LCRs, whether they came from the spill table) of each
    transaction ``app`` applies."""
    seen: list = []
    real = app.engine.apply

    def apply(txn, *a, **k):
        seen.append((txn.commit_scn, len(txn.items), type(txn.items).__name__ == "SpilledItems"))
        return real(txn, *a, **k)
    app.engine.apply = apply
    return seen


def in_memory(app) -> int:
    return pool_for(app.conn.context.store).count(app.ctx.queue(app.d.queue_owner, app.d.queue_name))



def applied_whole_from_spill(env, app, seen, lcrs: int, row: tuple) -> None:
    """The next batch finds nothing more: the transaction was applied once, whole (``lcrs``
    LCRs, read from the spill table), its row is the target's only one, the spill is gone."""
    assert app.run_batch(wait=0) == 0
    assert [(n, from_spill) for _, n, from_spill in seen] == [(lcrs, True)]
    assert rows(env) == [row] and env.view(SPILL) == [] and errors(env) == 0


def test_a_large_buffered_transaction_spills_and_is_applied_once_whole(world):
    """Threshold 5: the apply takes the small transaction before and six LCRs of the
    12-LCR one — those go to the spill table (DBA_APPLY_SPILL_TXN lists them, the target has
    none) and out of the capture's book; the next batch takes and spills the other six; the
    one after meets the next transaction, so the spilled one is complete and is applied from
    the spill table, whole and in order, before the next; then the spill is gone and the
    capture's slot moves past everything."""
    env = world
    spilling(env)
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')", f"INSERT INTO {env.src}.t VALUES (2, 'a')")
    large_transaction(env, 10, 11)                        # 12 LCRs
    env.sql(f"INSERT INTO {env.src}.t VALUES (3, 'c')", f"INSERT INTO {env.src}.t VALUES (4, 'c')")
    cap = env.process()
    cap.catch_up()
    before = confirmed(env)
    app = apply_process(env)
    seen = recording(app)
    assert app.run_batch(wait=0) == 2 + 6
    spilled = env.view(SPILL)
    assert [(s["APPLY_NAME"], s["MESSAGE_COUNT"]) for s in spilled] == [(CONSUMER, 6)]
    xid = spilled[0]["XIDSQN"]
    assert rows(env) == [(1, "a"), (2, "a")]
    assert in_memory(app) == 6 + 2                        # the spilled ones are out of memory …
    assert cap.staging.unconsumed() == 6 + 2              # … and consumed: the capture's book lets them go
    assert app.run_batch(wait=0) == 6
    assert env.view(SPILL) == [{"APPLY_NAME": CONSUMER, "XIDSQN": xid, "MESSAGE_COUNT": 12}]
    assert rows(env) == [(1, "a"), (2, "a")]
    cap.run_batch()
    assert confirmed(env) == before                       # the slot does not pass a spilled transaction
    assert app.run_batch(wait=0) == 2
    assert [(n, from_spill) for _, n, from_spill in seen] == [(2, False), (12, True), (2, False)]
    assert rows(env) == [(1, "a"), (2, "a"), (3, "c"), (4, "c"), (10, "11")]
    assert env.view(SPILL) == [] and errors(env) == 0
    assert app.run_batch(wait=0) == 0
    cap.run_batch()
    assert confirmed(env) > before
    assert applied_scn(env) >= env.view("SELECT LAST_ENQUEUED_SCN FROM DBA_CAPTURE")[0]["LAST_ENQUEUED_SCN"]


def test_a_spilled_transaction_read_to_its_end_is_applied_with_nothing_after_it(world):
    """The last LCR of a transaction can be the one that passes the threshold: the apply
    spills it not knowing it was the last; its next batch finds nothing more in memory, asks
    the capture (it has staged the whole transaction) and applies the spilled transaction —
    not waiting for another transaction to follow."""
    env = world
    spilling(env)
    large_transaction(env, 10, 5)                         # 6 LCRs: one over the threshold
    cap = env.process()
    cap.catch_up()
    app = apply_process(env)
    seen = recording(app)
    assert app.run_batch(wait=0) == 6
    assert [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [6] and rows(env) == []
    applied_whole_from_spill(env, app, seen, 6, (10, "5"))


def test_a_restart_mid_spill_loses_nothing_and_applies_nothing_twice(world):
    """The apply has spilled six LCRs of a 12-LCR transaction (and committed that: the
    capture knows it consumed them) when both processes stop.  The capture starts again from
    its slot — before the spilled transaction — and stages the rest for the apply, leaving
    out what it had consumed; the apply process that starts goes on with its spill table —
    applying nothing of it before the capture has staged the rest — and applies the
    transaction once, whole, in order, then the next."""
    env = world
    spilling(env)
    large_transaction(env, 10, 11)
    env.sql(f"INSERT INTO {env.src}.t VALUES (3, 'c')")
    cap = env.process()
    cap.catch_up()
    before = confirmed(env)
    app = apply_process(env)
    assert app.run_batch(wait=0) == 6
    assert [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [6]
    app.stop()
    cap.stop()
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.conn.apply_adm.start_apply(apply_name=CONSUMER)
    again = apply_process(env)
    seen = recording(again)
    assert again.run_batch(wait=0) == 0                   # no capture: the rest is to come
    cap = env.process()
    cap.start()
    assert again.run_batch(wait=0) == 0                   # nothing staged again yet
    assert rows(env) == [] and [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [6]
    cap.catch_up()
    assert confirmed(env) == before
    again.drain()
    assert [(n, from_spill) for _, n, from_spill in seen] == [(12, True), (1, False)]
    assert rows(env) == [(3, "c"), (10, "11")]
    assert env.view(SPILL) == [] and errors(env) == 0
    cap.run_batch()
    assert confirmed(env) > before
    assert env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT")[0]["N"] == 0


def test_a_spill_waits_for_the_rest_the_capture_has_not_staged(world, monkeypatch):
    """The capture has staged four LCRs of an 8-LCR transaction when the apply (threshold 3)
    reads: the apply spills those four, and its next batch applies nothing (the spilled part
    is not a transaction of its own: the capture is still staging it); once the rest is
    staged the apply spills it too and applies the transaction whole."""
    env = world
    spilling(env, "3")
    large_transaction(env, 10, 7)                         # 8 LCRs
    app = apply_process(env)
    seen = recording(app)
    staged, got = [], []
    real = Queue.enqone

    def enqone(self, m):
        out = real(self, m)
        if self.stages_captured_lcrs:
            staged.append(m)
            if len(staged) == 4:                          # the apply reads now, twice
                got.extend([app.run_batch(wait=0), app.run_batch(wait=0)])
        return out
    monkeypatch.setattr(Queue, "enqone", enqone)
    cap = env.process()
    cap.catch_up()
    assert got == [4, 0] and seen == []
    assert [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [4] and rows(env) == []
    assert app.run_batch(wait=0) == 4
    assert [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [8] and rows(env) == []
    applied_whole_from_spill(env, app, seen, 8, (10, "7"))


def test_a_spilled_transaction_that_fails_goes_to_the_error_queue_whole(world):
    """disable_on_error: the spilled transaction fails when it is applied (the target has
    its row): it goes, all 12 LCRs, to the error queue and the process stops; the spill is
    gone; the batch's other LCRs, given back, are staged again and the restarted apply
    applies them — never the failed transaction, nor a part of it."""
    env = world
    spilling(env)
    with sqlite3.connect(env.target) as c:
        c.execute(f'INSERT INTO "{env.owner}.T" VALUES (10, \'there\')')
    large_transaction(env, 10, 11)
    env.sql(f"INSERT INTO {env.src}.t VALUES (3, 'c')")
    cap = env.process()
    cap.catch_up()
    before = confirmed(env)
    app = apply_process(env)
    app.drain()
    assert app.state == "ABORTED"
    failed = env.view("SELECT MESSAGE_COUNT FROM DBA_APPLY_ERROR")
    assert failed == [{"MESSAGE_COUNT": 12}] and env.view(SPILL) == []
    assert rows(env) == [(10, "there")]
    cap.run_batch()                                       # stages again what the apply gave back
    env.conn.apply_adm.start_apply(apply_name=CONSUMER)
    again = apply_process(env)
    again.drain()
    assert again.state != "ABORTED"
    assert rows(env) == [(3, "c"), (10, "there")] and errors(env) == 1 and env.view(SPILL) == []
    cap.run_batch()
    assert confirmed(env) > before
    assert env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT")[0]["N"] == 0


@contextlib.contextmanager
def paused_capture(env):
    """A 12-LCR transaction, a flow-control threshold of 4 messages and the capture running
    in a thread until it is PAUSED FOR FLOW CONTROL (nobody takes its LCRs yet); yields the
    process and the list its failures go to; stops it at the end."""
    spilling(env, "3")
    large_transaction(env, 10, 11)
    cap = env.process()
    limits = sluice.aq.buffered.configure(cap.conn, flow_control_threshold=4, flow_control_timeout=0.1)
    stop, failures = threading.Event(), []

    def capture() -> None:
        try:
            cap.run(stop)
        except Exception as e:   # noqa: BLE001 (reported by the tests)
            failures.append(e)
    runner = threading.Thread(target=capture)
    runner.start()
    try:
        wait_for(lambda: cap.state == "PAUSED FOR FLOW CONTROL" or failures, 30)
        yield cap, failures
    finally:
        stop.set()
        runner.join(30)
        limits.flow_control_threshold, limits.flow_control_timeout = 10_000, 5.0
    assert not runner.is_alive()


def test_the_capture_pauses_for_flow_control_until_the_apply_takes_the_large_transaction(world):
    """A flow-control threshold of 4 messages and a 12-LCR transaction: with no apply
    reading, the capture's enqueue is held and refused (ORA-25307) — the capture pauses
    (PAUSED FOR FLOW CONTROL, 4 LCRs in memory), it does not abort.  An apply process that
    starts then takes and spills the LCRs (threshold 3), the capture stages the rest, and the
    transaction is applied whole; the capture's slot follows."""
    env = world
    with paused_capture(env) as (cap, failures):
        assert not failures
        app = apply_process(env)
        assert in_memory(app) == 4
        wait_for(lambda: app.run_batch(wait=0) >= 0 and rows(env) == [(10, "11")] or failures, 60)
        last = env.view("SELECT APPLIED_MESSAGE_NUMBER FROM DBA_APPLY_PROGRESS")[0]["APPLIED_MESSAGE_NUMBER"]
        wait_for(lambda: (applied_scn(env) or 0) >= last or failures, 30)     # the slot moved past it
    assert not failures and rows(env) == [(10, "11")] and errors(env) == 0
    assert env.view("SELECT STATUS FROM DBA_CAPTURE") == [{"STATUS": "ENABLED"}]


def test_a_capture_paused_for_flow_control_stops_cleanly_and_loses_nothing(world):
    """Stopped while paused for flow control (nobody takes its LCRs), the capture ends
    without an error — not ABORTED — and what it had staged of the transaction comes again
    from its slot when it starts again: the apply then applies the transaction whole."""
    env = world
    with paused_capture(env) as (cap, failures):
        assert cap.state == "PAUSED FOR FLOW CONTROL"
    assert not failures
    assert env.view("SELECT STATUS FROM DBA_CAPTURE") == [{"STATUS": "ENABLED"}]
    again = env.process()
    again.catch_up()
    app = apply_process(env)
    app.drain()
    assert rows(env) == [(10, "11")] and errors(env) == 0 and env.view(SPILL) == []
