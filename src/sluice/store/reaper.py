"""Closing what the garbage collector finds.

A finaliser (``__del__``, a weakref callback) runs wherever the collector happens to run:
possibly in a thread that holds the store registry's lock, a store's write lock or a
connection pool's lock — and closing a connection needs exactly those.  So a finaliser
never closes anything itself: it hands the close to :func:`post`, whose
``queue.SimpleQueue.put`` is reentrant (documented as safe in ``__del__``) and takes no
lock that ordinary code holds.  The reaper thread then runs the close as ordinary code.

The thread belongs to the open stores: the store registry starts it with the first open
store and it ends once no store is open and nothing is left to close, so a process that
closes (or drops) every connection ends with the threads it started with.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Callable

log = logging.getLogger(__name__)

_posted: "queue.SimpleQueue[Callable[[], None] | None]" = queue.SimpleQueue()


def post(close: Callable[[], None]) -> None:
    """Have ``close()`` run soon in the reaper thread (safe inside a finaliser)."""
    _posted.put(close)


def wake() -> None:
    """Let the reaper look whether it may end (the last store was closed)."""
    _posted.put(None)


def run_posted() -> None:
    """Run what is posted so far in this thread.  Called by ``connect()``, ordinary code
    holding no Sluice lock: a program dropping connections faster than one thread closes
    them (several threads, a PostgreSQL store's three server connections) helps, so dropped
    but unclosed connections stay as few as the threads in flight."""
    closes, woken = [], False
    while True:
        try:
            close = _posted.get_nowait()
        except queue.Empty:
            break
        if close is None:
            woken = True
        else:
            closes.append(close)
    if woken:
        wake()   # the reaper's, not ours
    for close in closes:
        _run(close)


def _run(close: Callable[[], None]) -> None:
    try:
        close()
    except Exception:   # a finaliser's close has nobody to report to
        log.exception("closing a dropped connection failed")


class Reaper:
    """The thread that runs posted closes.  ``may_end()`` is called under ``lock`` (the
    registry's) and says whether no store is open; :meth:`ensure_running` must be called
    under that lock too, so a store is never opened while the thread decides to end."""

    def __init__(self, lock: threading.Lock, may_end: Callable[[], bool]) -> None:
        self._lock = lock
        self._may_end = may_end
        self._thread: threading.Thread | None = None

    def ensure_running(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="sluice-reaper", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            close = _posted.get()
            if close is not None:
                _run(close)
                del close           # drop the resurrected object before possibly waiting again
            with self._lock:
                if self._may_end() and _posted.empty():
                    self._thread = None
                    return
