"""AQ's queue monitor for one store in this process: a thread that sleeps until the
next time event (a delay end, an expiration, a retention end) and runs
``store.run_time_manager``.

It is woken early by :meth:`TimeManagerThread.hint` when a commit creates an
earlier event (the store calls it for its own commits and, on PostgreSQL, for
other processes' commits announced by NOTIFY), and re-checks every
``idle_recheck`` seconds for events nobody announced.  Every change a pass makes
is guarded by the record's state and by the message lock, so several processes
may run their time managers on one database at once.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class _TimedStore(Protocol):
    def run_time_manager(self, now: float): ...


class TimeManagerThread(threading.Thread):
    """The time manager of one store."""

    def __init__(self, store: _TimedStore, transient: tuple[type[BaseException], ...],
                 idle_recheck: float = 1.0) -> None:
        super().__init__(name="sluice-time-manager", daemon=True)
        self.store = store
        self.transient = transient          # errors after which a pass is simply retried
        self.idle_recheck = idle_recheck
        self._wake = threading.Condition()
        self._stopped = False
        self._next: float | None = None

    def hint(self, when: float) -> None:
        """An event is due at ``when``: run no later than that."""
        with self._wake:
            if self._next is None or when < self._next:
                self._next = when
                self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        if self is not threading.current_thread():
            self.join(timeout=5)

    def run(self) -> None:
        while True:
            with self._wake:
                self._next = None      # hints arriving during the pass are kept for the next
            try:
                nxt = self.store.run_time_manager(time.time()).next_due
            except self.transient:
                nxt = None  # e.g. a table dropped mid-pass, a lost connection: try again shortly
            with self._wake:
                if self._stopped:
                    return
                if nxt is not None and (self._next is None or nxt < self._next):
                    self._next = nxt
                while not self._stopped:
                    now = time.time()
                    target = min(self._next if self._next is not None else now + self.idle_recheck,
                                 now + self.idle_recheck)
                    if target <= now:
                        break
                    self._wake.wait(target - now)
                    if self._next is not None and self._next <= time.time():
                        break
                    if time.time() >= target:
                        break
                if self._stopped:
                    return
