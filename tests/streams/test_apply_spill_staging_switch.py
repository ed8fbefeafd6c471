"""A capture switched from BUFFERED to PERSISTENT staging (SET_PARAMETER 'STAGING') captures
again from its stored position, which the slot's guard keeps behind what its apply process
had not finished: a transaction the apply had spilled in part (txn_lcr_spill_threshold,
:mod:`sluice.streams.apply.spill`), and transactions it had applied that the capture had not
confirmed yet.  The apply goes on with its spill through the persistent queue, lets go what
it had taken from the buffered queue already, and applies each transaction once, whole, in
order; the capture stages (no combined capture and apply while the apply is ahead of it), and
what the BUFFERED run left in memory goes.  Both store backends; the source is PostgreSQL,
the apply target an SQLite file."""

from __future__ import annotations

from tests.streams.capturekit import CONSUMER, env  # noqa: F401  (fixture)
from tests.streams.test_apply_buffered import apply_process, errors, rows, world  # noqa: F401
from tests.streams.test_apply_buffered_spill import SPILL, large_transaction, recording, spilling


def switch_to_persistent(env, *procs):
    for p in procs:
        p.stop()
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    env.conn.capture_adm.set_parameter(capture_name="CAP", parameter="STAGING", value="PERSISTENT")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.conn.apply_adm.start_apply(apply_name=CONSUMER)


def queued(env):
    """What the queue holds, in memory or not: the BUFFERED run's leftovers are gone."""
    return env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT")[0]["N"]


def test_a_pending_buffered_spill_finishes_after_a_switch_to_persistent_staging(world):
    env = world
    spilling(env)
    large_transaction(env, 10, 11)                        # 12 LCRs
    env.sql(f"INSERT INTO {env.src}.t VALUES (3, 'c')")
    cap = env.process()
    cap.catch_up()
    app = apply_process(env)
    assert app.run_batch(wait=0) == 6                     # six LCRs of it spilled
    assert [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [6]
    switch_to_persistent(env, app, cap)
    again = apply_process(env)
    seen = recording(again)
    cap = env.process()
    cap.start()
    assert cap.combined is None                           # the apply's spill goes first: staged
    assert again.run_batch(wait=0) == 0                   # not captured again yet: the rest is to come
    assert seen == [] and [s["MESSAGE_COUNT"] for s in env.view(SPILL)] == [6]
    cap.catch_up()
    assert queued(env) == 12 + 1                          # the whole transaction again, and the next
    again.drain(timeout=20)
    assert [(n, from_spill) for _, n, from_spill in seen] == [(12, True), (1, False)]
    assert rows(env) == [(3, "c"), (10, "11")]
    assert env.view(SPILL) == [] and errors(env) == 0 and queued(env) == 0


def test_transactions_applied_before_the_switch_are_not_applied_again(world):
    """The apply applied two transactions from the buffered queue (the first one's record in
    the target gone with the second) and the capture stopped before it confirmed them: the
    PERSISTENT capture enqueues both again, and the apply lets them go."""
    env = world
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    env.sql(f"INSERT INTO {env.src}.t VALUES (2, 'b')")
    cap = env.process()
    cap.catch_up()
    app = apply_process(env, batch=1)
    assert app.run_batch(wait=0) == 1 and app.run_batch(wait=0) == 1
    assert rows(env) == [(1, "a"), (2, "b")]
    switch_to_persistent(env, app, cap)
    cap = env.process()
    cap.start()
    assert cap.combined is None
    env.sql(f"INSERT INTO {env.src}.t VALUES (3, 'c')")
    cap.catch_up()
    assert queued(env) == 3                               # captured again from its stored position
    again = apply_process(env)
    seen = recording(again)
    again.drain(timeout=20)
    assert [n for _, n, _ in seen] == [1]                 # only the new one
    assert rows(env) == [(1, "a"), (2, "b"), (3, "c")] and errors(env) == 0 and queued(env) == 0
