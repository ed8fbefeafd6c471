"""What the process host tests share: a process kind of the test's own (no source database
needed, its faults injected at will), waiting for a condition with a deadline, and
``sluice run`` as a child process."""

from __future__ import annotations

import threading
import time
from typing import Callable

from sluice.streams.hosting import ProcessKind


def wait_for(what: Callable[[], object], timeout: float, step: float = 0.02) -> float:
    """Seconds until ``what()`` is true; AssertionError after ``timeout``."""
    start = time.monotonic()
    while not what():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout} s: {getattr(what, '__doc__', None) or what}")
        time.sleep(step)
    return time.monotonic() - start


class TestKind:
    """A process kind whose catalog is ``self.enabled`` and whose processes wait for their
    stop event; each run is recorded (who ran it, when), and ``self.concurrent`` tracks how
    many copies of each process run at once across every host using the kind."""

    __test__ = False

    def __init__(self, name: str = "TESTPROC", crashes: int = 0, abort: bool = False) -> None:
        self.enabled: set[str] = set()
        self.crashes = crashes             # the first runs of each process raise
        self.abort = abort                 # a failing run disables its process first
        self.runs: list[tuple[str, float, int]] = []     # (process, monotonic start, host conn id)
        self.now: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self._lock = threading.Lock()
        self.aborted: list[tuple[str, Exception]] = []   # what the host's abort recorded
        self.kind = ProcessKind(name, "sluice.test", self._enabled, self._run, self._abort)

    def _abort(self, conn, name: str, error: Exception) -> None:
        with self._lock:
            self.aborted.append((name, error))
            self.enabled.discard(name)

    def enable(self, *names: str) -> None:
        with self._lock:
            self.enabled |= set(names)

    def disable(self, *names: str) -> None:
        with self._lock:
            self.enabled -= set(names)

    def _enabled(self, conn) -> list[str]:
        with self._lock:
            return sorted(self.enabled)

    def _run(self, conn, name: str, stop: threading.Event) -> None:
        with self._lock:
            self.runs.append((name, time.monotonic(), id(conn)))
            failing = sum(1 for n, _, _ in self.runs if n == name) <= self.crashes
            self.now[name] = self.now.get(name, 0) + 1
            self.most[name] = max(self.most.get(name, 0), self.now[name])
            if failing and self.abort:   # as a process that records its own failure (ABORTED)
                self.enabled.discard(name)
        try:
            if failing:
                raise RuntimeError(f"injected failure of {name}")
            while not stop.wait(0.01):
                if name not in self.enabled:      # as a process that sees the catalog change
                    return
        finally:
            with self._lock:
                self.now[name] -= 1

    def run_count(self, name: str) -> int:
        return sum(1 for n, _, _ in self.runs if n == name)


def spawn_host(dsn: str | None, log_path: str, *args: str):
    """``sluice [ARGS] run DSN`` in a child process, its log in ``log_path``: forked from the
    preloaded parent (tests/forkserver.py; a ``Popen``'s poll/wait/send_signal/kill/pid)."""
    from tests import forkserver
    return forkserver.shared(*forkserver.FLEETS).spawn("tests.forkserver:cli", [*args, "run", *([dsn] if dsn else [])],
                                                       log_path)


def hosted(conn) -> list[dict]:
    cols, rows = conn.query("SELECT * FROM V$STREAMS_HOSTED", None)
    conn.commit()
    return [dict(zip(cols, r)) for r in rows]
