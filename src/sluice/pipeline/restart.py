"""Restarting a query that died only because Spark gave up waiting for a Python worker.

Spark 4.3 starts a fresh Python process for each of a Python data source's planning
steps (its schema, its reader) and for a streaming source's offset runner, and waits a
fixed 10 s for it to connect back (``PythonWorkerFactory.createSimpleWorker``; no
setting changes it).  On a loaded machine the interpreter's start-up alone can take
longer, and then ``load()`` raises, or the streaming query dies, with "Python worker
failed to connect back" / "Timed out while waiting for the Python worker to connect
back".  Nothing of the batch in flight is committed by then, and every sink of the
pipeline is exactly once from its checkpoint (the target's applied low-watermark, the
destination's de-duplication records, the warehouse's batch files), so the remedy is
what a user would do by hand: start the same query again from its checkpoint.  Only
that failure is retried, a bounded number of times; any other error ends the run.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable

__all__ = ["ATTEMPTS", "worker_was_late", "Restarts", "to_the_end", "await_end"]

ATTEMPTS = 4            # starts of one query in all: the first and three restarts
_LATE = "to connect back"
log = logging.getLogger("sluice.pipeline")


def worker_was_late(error: object) -> bool:
    """True when ``error`` (an exception, or the text a query died with) is Spark's
    missed 10-s wait for a Python worker it started."""
    return error is not None and _LATE in str(error)


class Restarts:
    """One query's budget of starts (``attempts`` in all, shared by failed starts and
    restarts after it died); ``said`` gets a line for the run's output at each restart."""

    def __init__(self, attempts: int = ATTEMPTS, said: Callable[[str], None] | None = None) -> None:
        self.attempts, self.said, self.starts = attempts, said, 0

    def launch(self, start: Callable[[], Any]) -> Any:
        """``start()``'s result, called again while it raises only because a Python
        worker was late and starts are left."""
        while True:
            self.starts += 1
            try:
                return start()
            except Exception as e:   # py4j / pyspark wrap the JVM's SparkException
                if not self.again(e):
                    raise

    def again(self, error: object) -> bool:
        """Whether a query that ended with ``error`` (None: it ended well) is to be
        started again: only a late Python worker, while starts are left."""
        if not worker_was_late(error) or self.starts >= self.attempts:
            return False
        text = (f"Spark's Python worker did not connect back within its 10 s (a loaded machine); "
                f"starting again from the checkpoint (restart {self.starts} of {self.attempts - 1})")
        log.warning(text)
        if self.said is not None:
            self.said(text + "\n")
        return True


def await_end(query: Any, timeout: float | None) -> bool:
    """Whether ``query`` ended within ``timeout`` seconds (None: waits for its end).
    Unlike ``awaitTermination`` it does not raise the error a query died with: that is
    ``query.exception()``'s to tell."""
    try:
        if timeout is None:
            query.awaitTermination()
            return True
        return bool(query.awaitTermination(max(0.001, timeout)))
    except Exception:
        if query.isActive:
            raise
        return True


def to_the_end(start: Callable[[], Any], timeout: float | None = None, attempts: int = ATTEMPTS,
               said: Callable[[str], None] | None = None) -> Any:
    """Start a query that ends by itself (``availableNow`` / ``once``) and wait for its
    end, starting it again from its checkpoint when it died only because a Python worker
    was late.  Returns the last query started (its ``exception()`` says how it ended;
    still running when ``timeout`` seconds have passed)."""
    end = None if timeout is None else time.monotonic() + timeout
    restarts = Restarts(attempts, said)
    query = restarts.launch(start)
    while True:
        if not await_end(query, None if end is None else end - time.monotonic()):
            return query
        if not restarts.again(query.exception()):
            return query
        query = restarts.launch(start)
