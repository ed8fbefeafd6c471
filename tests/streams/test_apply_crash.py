"""kill -9 of the apply host (`sluice run`), over and over, mid-transaction (issue 15 §3, DESIGN §7
"Exactly once"): the replica converges on the source (0 lost) and a trigger's audit at the
replica counts each source change exactly once (0 applied twice).  The store runs on both
backends, the replica is a PostgreSQL database or an SQLite file
(tests/streams/applycrash.py)."""

from __future__ import annotations

import os
import random

import pytest

from tests.streams import applycrash
from tests.streams.applykit import replica  # noqa: F401  (fixture)
from tests.streams.capturekit import env  # noqa: F401  (fixture)

SECONDS = float(os.environ.get("SLUICE_APPLY_CRASH_SECONDS", "10"))


def test_kill_9_during_apply_exactly_once(env, replica, tmp_path):
    seed = int(os.environ.get("SLUICE_CRASH_SEED", random.randrange(10**6)))
    rep = applycrash.run(env, replica, str(tmp_path), SECONDS, seed)
    print(f"seed {seed}: {rep.changes} source changes, {rep.audited} applied, {rep.kills} kills "
          f"with {rep.at_kills} applied when they came")
    assert rep.ok, (f"seed {seed}: differences {rep.differences[:5]} errors {rep.errors[:3]} "
                    f"failures {rep.failures} changes {rep.changes} applied {rep.audited}")
    assert rep.kills >= 2                  # run(min_kills=2): past its seconds if need be
    assert any(0 < n < rep.changes for n in rep.at_kills)     # kills came while it was applying


@pytest.mark.parametrize("replica", ["postgresql"], indirect=True)
@pytest.mark.parametrize("combined", [True, "remote"], ids=["local", "across-sites"])
def test_kill_9_during_combined_capture_and_apply_exactly_once(env, replica, tmp_path, combined):
    """The host runs the capture and the apply of one queue, combined (seed 001): the capture
    applies through the apply's code in its own batches; kills anywhere in them lose nothing
    and apply nothing twice, and nothing is staged in the queue.  ``across-sites``: the apply
    is at DBS2 (one propagation to its queue) and the host at DBS1 runs its capture, which
    runs DBS2's apply process — kills between the target's commits, DBS2's store commit and
    the capture's."""
    seed = int(os.environ.get("SLUICE_CRASH_SEED", random.randrange(10**6)))
    rep = applycrash.run(env, replica, str(tmp_path), SECONDS, seed, combined=combined)
    print(f"seed {seed}: {rep.changes} source changes, {rep.audited} applied, {rep.kills} kills "
          f"with {rep.at_kills} applied when they came")
    assert rep.ok, (f"seed {seed}: differences {rep.differences[:5]} errors {rep.errors[:3]} "
                    f"failures {rep.failures} changes {rep.changes} applied {rep.audited}")
    assert rep.kills >= 2
    assert any(0 < n < rep.changes for n in rep.at_kills)

