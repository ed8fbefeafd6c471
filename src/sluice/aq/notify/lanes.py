"""Delivery lanes: each registration's notifications in order, registrations side by side.

Oracle's EMON delivers through several slaves, so a slow client of one registration
does not hold up another's, while python-oracledb calls one subscription's callback for
its messages one at a time, in order.  So: one lane per registration (a FIFO of
deliveries that at most one thread works at a time) and at most ``WORKERS`` threads
that take the lanes with work in turn, one delivery each, so that a lane with a backlog
does not starve the others.  With every thread busy a lane waits its turn.

Threads start when there is work and no idle thread, end after ``IDLE`` seconds without
any, and stop with the dispatcher (its store): :meth:`Lanes.stop` hands back what was
never started and waits a moment for deliveries under way.  A callback still running
then keeps its thread until it returns; the thread takes nothing more.  The lock is
never held while a delivery runs, so stopping (from a close hook, a reaper, a callback
closing its own connection) waits on no application code.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Callable

log = logging.getLogger("sluice.notify")

WORKERS = 4      # delivery threads per store and process
IDLE = 5.0       # an idle delivery thread ends after this many seconds


class Delivery:
    """One job of a lane: ``run()`` delivers; ``ids`` are the outbox rows it stands for
    (handed back, undelivered, when the lanes stop before it started)."""

    def __init__(self, run: Callable[[], None], ids: list[int]) -> None:
        self.run, self.ids = run, ids


class Lanes:
    def __init__(self, name: str, on_idle: Callable[[str], None] = lambda key: None) -> None:
        self._name = name
        self._on_idle = on_idle                       # a lane ran dry (called unlocked)
        self._cond = threading.Condition()
        self._lanes: dict[str, deque[Delivery]] = {}  # busy lanes: queued or at work
        self._ready: deque[str] = deque()             # lanes with work and no thread at it
        self._threads: set[threading.Thread] = set()
        self._idle = 0                                # threads free to take a lane
        self._stopping = False
        self._count = 0

    def busy(self, key: str) -> bool:
        """Does lane ``key`` have deliveries queued or under way?"""
        with self._cond:
            return key in self._lanes

    def submit(self, key: str, delivery: Delivery) -> bool:
        """Queue ``delivery`` on lane ``key``, after the lane's earlier ones.  False once
        stopped (nothing queued)."""
        with self._cond:
            if self._stopping:
                return False
            lane = self._lanes.get(key)
            if lane is not None:   # queued or at work: its thread (or turn) takes this too
                lane.append(delivery)
                return True
            self._lanes[key] = deque([delivery])
            self._ready.append(key)
            if len(self._ready) > self._idle and len(self._threads) < WORKERS:
                self._start_thread()
            self._cond.notify()
            return True

    def stop(self, timeout: float) -> list[Delivery]:
        """Stop taking work; wait up to ``timeout`` s for deliveries under way (never for the
        calling thread's own).  Returns the deliveries that never started."""
        with self._cond:
            self._stopping = True
            left = [d for lane in self._lanes.values() for d in lane]
            for lane in self._lanes.values():
                lane.clear()
            self._ready.clear()
            threads = list(self._threads)
            self._cond.notify_all()
        end = time.monotonic() + timeout
        for t in threads:
            if t is not threading.current_thread():
                t.join(max(0.0, end - time.monotonic()))
        return left

    # -- the threads ------------------------------------------------------------
    def _start_thread(self) -> None:   # under the lock
        self._count += 1
        t = threading.Thread(target=self._work, name=f"{self._name}-{self._count}", daemon=True)
        self._threads.add(t)
        self._idle += 1
        t.start()

    def _take(self) -> tuple[str, Delivery] | None:   # under the lock; None: end the thread
        while not self._ready and not self._stopping:
            if not self._cond.wait(IDLE) and not self._ready:
                break
        if self._stopping or not self._ready:
            return None
        key = self._ready.popleft()
        self._idle -= 1
        return key, self._lanes[key].popleft()

    def _work(self) -> None:
        me = threading.current_thread()
        while True:
            with self._cond:
                job = self._take()
                if job is None:
                    self._idle -= 1
                    self._threads.discard(me)
                    return
            key, delivery = job
            try:
                delivery.run()
            except Exception:   # noqa: BLE001 — a delivery reports its own failures; never kill a thread
                # stopping: the store may be closed under a callback that just returned
                (log.info if self._stopping else log.error)("notification delivery failed", exc_info=True)
            with self._cond:
                self._idle += 1
                lane = self._lanes[key]
                dry = not lane
                wake = dry and not self._stopping
                if dry:
                    del self._lanes[key]
                else:   # to the back: one delivery per turn
                    self._ready.append(key)
            if wake:
                try:
                    self._on_idle(key)
                except Exception:   # noqa: BLE001
                    log.exception("notification lane hook failed")
