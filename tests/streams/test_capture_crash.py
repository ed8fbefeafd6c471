"""kill -9 of the capture process, over and over, with a checker (issue 13 §5, DESIGN §7
"Exactly once"): every committed source transaction reaches the queue exactly once, whole,
in commit order (tests/streams/capturecrash.py)."""

from __future__ import annotations

import os
import random

import pytest

from tests.streams import capturecrash
from tests.streams.capturekit import env  # noqa: F401  (fixture)

SECONDS = float(os.environ.get("SLUICE_CAPTURE_CRASH_SECONDS", "7"))   # per staging and backend


@pytest.mark.parametrize("staging", ["", "capture-spill", "buffered", "apply", "apply-spill"])
def test_kill_9_during_capture_exactly_once(env, tmp_path, staging):
    """Persistent staging (the default), and buffered staging with its consumer in the
    worker (forwarding every LCR into a persistent queue, which is checked): an application
    (``buffered``) or an apply process whose rule enqueues each LCR there (``apply``; with
    ``apply-spill`` it spills every transaction of more than two LCRs); with
    ``capture-spill`` the capture itself spills every transaction of more than two changes."""
    seed = int(os.environ.get("SLUICE_CRASH_SEED", random.randrange(10**6)))
    rep = capturecrash.run(env, str(tmp_path), SECONDS, seed, staging=staging)
    print(f"seed {seed}: {rep.committed} transactions committed, {rep.captured} captured, "
          f"{rep.kills} kills")
    assert rep.ok, (f"seed {seed}: lost {rep.lost[:5]} duplicated {rep.duplicated[:5]} torn {rep.torn[:3]} "
                    f"out of order {rep.out_of_order[:5]} phantom {rep.phantom[:5]} {rep.failures}")
    assert rep.kills >= SECONDS / 1.5 and rep.committed > 10 * SECONDS
    assert rep.captured == rep.committed


class _LCR:
    """What check() reads of an LCR."""

    def __init__(self, xid: str, cmd: str, ident: int, scn: int) -> None:
        self.xid, self.cmd, self.ident, self.scn = xid, cmd, ident, scn

    def get_command_type(self):
        return self.cmd

    def get_value(self, which, column):
        return type("V", (), {"access_number": lambda _: self.ident})()

    def get_transaction_id(self):
        return self.xid

    def get_commit_scn(self):
        return self.scn


def _queue(log, upto, part=None):
    """The LCRs of ``log``'s first ``upto`` transactions, then ``part`` changes of the next."""
    lcrs = [_LCR(xid, c, i, n) for n, (xid, ops) in enumerate(log[:upto]) for c, i in ops]
    if part:
        xid, ops = log[upto]
        lcrs += [_LCR(xid, c, i, upto) for c, i in ops[:part]]
    return lcrs


LOG = [("1", [("INSERT", 1)]), ("2", [("INSERT", 2), ("INSERT", 3), ("INSERT", 4)]),
       ("3", [("UPDATE", 1)]), ("4", [("DELETE", 2)])]


def test_a_worker_stopped_before_it_caught_up_is_reported_as_that_not_as_loss():
    """The buffered fleet's last worker, stopped at the run's deadline while it still caught
    up (CI 2026-11-30: ``lost [...] torn [('157358', [('INSERT', 3893)], [3 INSERTs])]``):
    the queue holds a cut-off prefix of the commits, the last transaction in part — the run
    fails saying the capture did not catch up, not that it lost or tore transactions."""
    rep = capturecrash.check(LOG, _queue(LOG, 1, part=1))
    assert rep.lost == ["3", "4"] and rep.torn
    capturecrash.not_caught_up(rep, LOG, "the capture worker did not stop")
    assert not rep.ok and not rep.lost and not rep.torn
    assert "did not catch up" in rep.failures[0] and "first 2 of 4" in rep.failures[0]


def test_a_gap_or_a_tear_before_the_cut_stays_a_loss_or_a_tear():
    lost_in_between = _queue(LOG, 1) + _queue(LOG, 3)[4:]         # transaction 2 missing
    rep = capturecrash.check(LOG, lost_in_between)
    capturecrash.not_caught_up(rep, LOG, "the capture worker did not stop")
    assert rep.lost == ["2", "4"] and "more than a cut-off prefix" in rep.failures[0]
    torn_then_more = _queue(LOG, 1, part=2) + _queue(LOG, 3)[4:]  # 2 in part, then 3
    rep = capturecrash.check(LOG, torn_then_more)
    capturecrash.not_caught_up(rep, LOG, "the capture worker did not stop")
    assert rep.torn and "more than a cut-off prefix" in rep.failures[0]
