"""TXN_LCR_SPILL_THRESHOLD of a capture process (streams/capture/spill.py): a source
transaction larger than the threshold is not held in the capture's memory; its LCRs spill
to SLUICE_CAPTURE_SPILL as they come and are staged at its commit, whole, in order, with
one commit SCN, exactly once across crashes."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from sluice.errors import DatabaseError
from tests.streams.capturekit import env  # noqa: F401  (fixture)


def _setup(env, threshold: str | None = "50") -> None:
    env.sql(f"CREATE TABLE {env.src}.big (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "big"))
    if threshold is not None:
        env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", threshold)
    env.conn.capture_adm.start_capture(capture_name="CAP")


def _big(env, first: int, n: int) -> None:
    env.sql(f"INSERT INTO {env.src}.big SELECT g, 'v' || g FROM generate_series({first}, {first + n - 1}) g")


def _spilled(env) -> int:
    return env.conn.query("SELECT COUNT(*) FROM SLUICE_CAPTURE_SPILL WHERE SEQ > 0", None)[1][0][0]


def _until_spilled(env, proc) -> list:
    """Batches until the first part of the large transaction is spilled (the source's
    transactions before it come first: the table's DDL …); what they staged."""
    staged = []
    for _ in range(20):
        proc.run_batch()
        staged += env.dequeue_all()
        if _spilled(env):
            return staged
    raise AssertionError("nothing spilled")


def _check_whole(lcrs: list, expected: list[list[int]]) -> None:
    """``lcrs`` are the transactions ``expected`` (ids per transaction), each once, whole,
    in order, each with one transaction id and one commit SCN, the SCNs increasing."""
    groups: list[tuple[str, list, set]] = []
    for lcr in lcrs:
        key = lcr.get_transaction_id()
        if not groups or groups[-1][0] != key:
            groups.append((key, [], set()))
        groups[-1][1].append(lcr.get_value("NEW", "id").access_number())
        groups[-1][2].add(lcr.get_commit_scn())
    assert [g[1] for g in groups] == expected
    assert all(len(g[2]) == 1 for g in groups)
    scns = [next(iter(g[2])) for g in groups]
    assert scns == sorted(scns) and len(set(scns)) == len(scns)


def test_a_transaction_past_the_threshold_spills_and_arrives_whole_in_order(env):
    _setup(env, "50")
    env.sql(f"INSERT INTO {env.src}.big VALUES (0, 'small')")
    _big(env, 1, 500)
    env.sql(f"INSERT INTO {env.src}.big VALUES (1000, 'after')")
    proc = env.process()
    proc.start()
    # the small one before it staged, the large one's first part spilled, not staged
    assert [lcr.get_value("NEW", "id").access_number() for lcr in _until_spilled(env, proc)] == [0]
    assert 0 < _spilled(env) <= 51 and env.dequeue_all() == []
    proc.run_batch()
    assert _spilled(env) > 51 and env.dequeue_all() == []
    proc.catch_up()
    _check_whole(env.dequeue_all(), [list(range(1, 501)), [1000]])
    assert env.conn.query("SELECT COUNT(*) FROM SLUICE_CAPTURE_SPILL", None)[1][0][0] == 0
    row = env.view("SELECT TOTAL_MESSAGES_CAPTURED, TOTAL_MESSAGES_ENQUEUED FROM V$STREAMS_CAPTURE "
                   "WHERE CAPTURE_NAME = 'CAP'")[0]
    # (captured: also what the rules rejected, the DDL before the rows)
    assert row["TOTAL_MESSAGES_ENQUEUED"] == 502 and 502 <= row["TOTAL_MESSAGES_CAPTURED"] <= 504


def test_the_tag_and_rules_of_a_spilled_transaction_hold_across_its_parts(env):
    """A Streams tag set half-way (DBMS_STREAMS.SET_TAG's message) tags the changes after
    it, also in a later part; the rules (is_null_tag() = 'Y') leave those out."""
    from sluice.streams.capture.pgsource import emit_tag
    _setup(env, "20")
    with env.pg.transaction():
        env.pg.execute(f"INSERT INTO {env.src}.big SELECT g, 'x' FROM generate_series(1, 60) g")
        emit_tag(env.pg, b"\x11")
        env.pg.execute(f"INSERT INTO {env.src}.big SELECT g, 'x' FROM generate_series(61, 120) g")
        emit_tag(env.pg, None)
        env.pg.execute(f"INSERT INTO {env.src}.big SELECT g, 'x' FROM generate_series(121, 150) g")
    proc = env.process()
    proc.start()
    assert _until_spilled(env, proc) == []
    proc.catch_up()
    _check_whole(env.dequeue_all(), [list(range(1, 61)) + list(range(121, 151))])


def test_a_crash_mid_spill_then_a_restart_stages_it_once(env):
    """The process dies (its sessions gone, nothing stopped) after spilling parts: the next
    one goes on with the spill — the stream sends the transaction again from its start and
    what was spilled is left out — and stages it once."""
    _setup(env, "40")
    _big(env, 1, 400)
    _big(env, 1000, 3)
    first = env.process()
    first.start()
    assert _until_spilled(env, first) == []
    first.run_batch()
    spilled = _spilled(env)
    assert spilled >= 40
    first.source.close()                  # dies: its slot and sessions let go, no stop()
    first.conn.close()
    env.procs.remove(first)
    again = env.process()
    again.start()
    assert again._spill is not None and again._spill.stored == spilled
    again.catch_up()
    _check_whole(env.dequeue_all(), [list(range(1, 401)), [1000, 1001, 1002]])
    assert env.conn.query("SELECT COUNT(*) FROM SLUICE_CAPTURE_SPILL", None)[1][0][0] == 0


def test_a_crash_after_its_commit_before_the_slot_moved_stages_it_once(env):
    """Staged and committed, the slot not yet confirmed: the transaction comes again, is
    spilled again, and at its commit (at or below CAPTURED_SCN) the spill is discarded."""
    _setup(env, "30")
    _big(env, 1, 200)
    first = env.process()
    first.start()
    staged = first._capture_spilled

    class Died(Exception):
        pass

    def capture_spilled(txn):
        staged(txn)
        first._advance = die

    def die(lsn):
        raise Died                        # right after the store commit
    first._capture_spilled = capture_spilled
    with pytest.raises(Died):
        first.catch_up()
    assert len(env.dequeue_all()) == 200
    first.source.close()
    first.conn.close()
    env.procs.remove(first)
    _big(env, 500, 2)
    again = env.process()
    again.start()
    assert _until_spilled(env, again) == []   # spilled again, not knowing yet it was staged
    again.catch_up()
    _check_whole(env.dequeue_all(), [[500, 501]])
    assert env.conn.query("SELECT COUNT(*) FROM SLUICE_CAPTURE_SPILL", None)[1][0][0] == 0


def _peaks(env, threshold: str, rows: int, base: int) -> tuple[int, int]:
    """The capture's peak memory (tracemalloc) catching up with one transaction of
    ``rows`` rows: while it spills the transaction (from its first part to its commit row)
    and in all."""
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", threshold)
    env.conn.capture_adm.start_capture(capture_name="CAP")
    _big(env, base, rows)
    proc = env.process()
    proc.start()
    reading = []
    staged, part = proc._capture_spilled, proc._spill_part

    def spill_part(rows, notices):
        if not reading:      # from the transaction's first part on (other sessions'
            reading.append(0)    # transactions of the shared database come before it)
            tracemalloc.reset_peak()
        return part(rows, notices)

    def capture_spilled(txn):
        reading.append(tracemalloc.get_traced_memory()[1])
        staged(txn)
    proc._spill_part, proc._capture_spilled = spill_part, capture_spilled
    gc.collect()
    tracemalloc.start()
    try:
        proc.catch_up(timeout=300)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    proc.stop()
    assert len(env.dequeue_all()) == rows
    assert (threshold == "INFINITE") == (not reading)
    return (reading[-1] if reading else peak), peak


def test_the_capture_memory_of_a_large_transaction_is_bounded(env):
    """One transaction of 10,000, then 20,000 rows, threshold 1,000: the capture's peak
    memory while it reads the transaction does not grow with it; against INFINITE, the
    peak in all is a fraction.  (Staging it at its commit row is bounded too: the
    next test.)"""
    _setup(env, None)
    _peaks(env, "1000", 3_000, 100_000)   # what the first spill loads once (modules, statements)
    small_reading, _ = _peaks(env, "1000", 10_000, 1_000_000)
    reading, spilled = _peaks(env, "1000", 20_000, 2_000_000)
    _, infinite = _peaks(env, "INFINITE", 20_000, 3_000_000)
    print(f"peak reading 10,000 / 20,000 rows: {small_reading / 1e6:.1f} / {reading / 1e6:.1f} MB; "
          f"in all, 20,000 rows: threshold 1,000 {spilled / 1e6:.1f} MB, INFINITE {infinite / 1e6:.1f} MB")
    assert reading < 1.3 * small_reading
    assert reading < infinite / 4
    # (staging at the commit row writes a chunk at a time: 4 MB against 52-57; it was
    # 33-35 MB when the session held the whole transaction's queue records)
    assert spilled < infinite / 5


@pytest.mark.parametrize("value", ["0", "-1", "ten", "1.5", "²"])
def test_bad_threshold_values_are_refused(env, value):
    env.create_capture()
    with pytest.raises(DatabaseError) as e:
        env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", value)
    assert e.value.full_code == "ORA-23605"
    spec = env.view("SELECT CAPTURE_NAME FROM DBA_CAPTURE")
    assert spec and _threshold(env) == "10000"


def _threshold(env) -> str:
    from sluice.streams.capture import spec as specs
    from sluice.streams.capture.context import CaptureContext
    return specs.load(CaptureContext(env.conn), "CAP").txn_lcr_spill_threshold


def test_the_threshold_is_set_while_the_capture_is_stopped(env):
    env.create_capture()
    env.conn.capture_adm.set_parameter("CAP", "TXN_LCR_SPILL_THRESHOLD", "infinite")
    assert _threshold(env) == "INFINITE"
    env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", None)
    assert _threshold(env) == "10000"
    env.conn.cursor().execute("BEGIN DBMS_CAPTURE_ADM.SET_PARAMETER(capture_name => 'CAP', "
                              "parameter => 'txn_lcr_spill_threshold', value => '500'); END;")
    assert _threshold(env) == "500"
    env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", "10000")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    with pytest.raises(DatabaseError) as e:
        env.conn.capture_adm.set_parameter("CAP", "txn_lcr_spill_threshold", "5")
    assert e.value.full_code == "ORA-26666" and _threshold(env) == "10000"


def _staging_peak(env, rows: int, base: int) -> int:
    """The peak of what the capture allocates (tracemalloc, started there) while it stages
    one spilled transaction of ``rows`` rows at its commit row: reading the spill back,
    enqueueing, the store commit with the position."""
    _big(env, base, rows)
    proc = env.process()
    proc.start()
    staged = proc._capture_spilled
    peaks = []

    def capture_spilled(txn):
        gc.collect()
        tracemalloc.start()
        try:
            staged(txn)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    proc._capture_spilled = capture_spilled
    proc.catch_up(timeout=300)
    proc.stop()
    got = env.dequeue_all()
    assert len(peaks) == 1
    _check_whole(got, [list(range(base, base + rows))])
    return peaks[0]


def test_staging_a_spilled_transaction_takes_bounded_memory(env):
    """The spilled transaction's LCRs are enqueued a chunk at a time and written to the
    queue table as they go, numbered with the commit SCN drawn for them: what staging
    them holds does not grow with the transaction (it did ~0.9 KB per LCR, the queue
    records held until the commit numbered them)."""
    _setup(env, "200")
    _staging_peak(env, 1_000, 100_000)      # what the first staging loads once
    small = _staging_peak(env, 3_000, 1_000_000)
    large = _staging_peak(env, 12_000, 2_000_000)
    print(f"staging peak 3,000 / 12,000 rows: {small / 1e6:.2f} / {large / 1e6:.2f} MB")
    # held whole, the 9,000 more LCRs would add ~8 MB
    assert large - small < 9_000 * 100
