"""How many messages this process enqueued into and dequeued from each queue.

Counted by the store sessions as the operations happen (an enqueue or a removing dequeue,
IMMEDIATE or not; a rollback does not take them back) and kept in memory per store and
process, as Oracle keeps V$PERSISTENT_QUEUES' ENQUEUED_MSGS / DEQUEUED_MSGS per instance:
nothing is written, so counting costs the data path a dictionary update.  Prometheus
counters are per process by design (a scrape of each process; ``rate()`` copes with a
restart).  What every process together holds now is the depth (SLUICE_QUEUE_DEPTH).
"""

from __future__ import annotations

import threading
import time


class QueueStats:
    """Running totals of one store in this process, by queue (``OWNER.NAME``)."""

    __slots__ = ("_lock", "_enqueued", "_dequeued", "started")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._enqueued: dict[str, int] = {}
        self._dequeued: dict[str, int] = {}
        self.started = time.time()

    def enqueued(self, queue: str, n: int) -> None:
        with self._lock:
            self._enqueued[queue] = self._enqueued.get(queue, 0) + n

    def dequeued(self, queue: str, n: int) -> None:
        if n:
            with self._lock:
                self._dequeued[queue] = self._dequeued.get(queue, 0) + n

    def totals(self) -> dict[str, tuple[int, int]]:
        """``{OWNER.NAME: (enqueued, dequeued)}`` so far."""
        with self._lock:
            return {q: (self._enqueued.get(q, 0), self._dequeued.get(q, 0))
                    for q in self._enqueued.keys() | self._dequeued.keys()}
