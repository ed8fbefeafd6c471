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
