"""The kill schedule of the kill -9 harnesses (tests/crashharness.py, tests/streams/
capturecrash.py; DESIGN-NOTES "Test suite time"): counted in the fleet's progress, not on
the wall clock alone.  A timer started with the processes kills them while they are still
starting on a loaded machine (a producer fleet killed every 0.5-2 s committed nothing in a
run beside two Spark JVMs): a slow machine must make a run longer, never emptier, and a
fleet that never gets going must fail the test saying so, not pass it with nothing tested.

So the number of kills is drawn up front (as many intervals as fit in the run's seconds),
the first interval starts once the fleet has shown progress, and each kill waits, after
its interval, for progress since the previous kill, up to the run's deadline."""

from __future__ import annotations

import random
import time
from typing import Callable


class Stalled(Exception):
    """The fleet made no progress by the run's deadline."""


def intervals(rng: random.Random, seconds: float, every: tuple[float, float]) -> tuple[list[float], float]:
    """The pauses before each kill of a run of ``seconds`` and the pause after the last:
    as many kills as intervals drawn from ``every`` fit in ``seconds``."""
    pauses: list[float] = []
    while True:
        pause = rng.uniform(*every)
        if sum(pauses) + pause >= seconds:
            return pauses, max(0.0, seconds - sum(pauses))
        pauses.append(pause)


def await_progress(progressed: Callable[[], bool], give_up: float, what: str,
                   state: Callable[[], str], tick: Callable[[], None] | None = None,
                   step: float = 0.05) -> None:
    """Return once ``progressed()``; ``tick()`` first on every look (a harness restarts a
    worker that died by itself there).  :raises Stalled: ``give_up`` (a monotonic time)
    passed first; the message says ``what`` was awaited and the fleet's ``state()``."""
    while True:
        if tick is not None:
            tick()
        if progressed():
            return
        if time.monotonic() > give_up:
            raise Stalled(f"the fleet made no progress {what} by the run's deadline (a machine "
                          f"too slow or workers stuck): {state()}")
        time.sleep(step)
