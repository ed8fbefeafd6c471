"""Restarting a query that died of a passing failure: a late Python worker, a lost database.

**A late Python worker.** Spark 4.3 starts a fresh Python process for each of a Python
data source's planning steps (its schema, its reader) and for a streaming source's offset
runner, and waits a fixed 10 s for it to connect back
(``PythonWorkerFactory.createSimpleWorker``; no setting changes it).  On a loaded machine
the interpreter's start-up alone can take longer, and then ``load()`` raises, or the
streaming query dies, with "Python worker failed to connect back" / "Timed out while
waiting for the Python worker to connect back".  Restarted at once, a bounded number of
times (:data:`ATTEMPTS`).

**A lost database.** The store or the apply's target restarted, or an administrator
ended the pipeline's sessions: the batch in flight fails with ORA-03113 (or the server is
not back yet: ORA-01033, ORA-12541).  Restarted after a pause that doubles from
:data:`PAUSE_FIRST` up to :data:`PAUSE_MOST` seconds, and given up after
:data:`LOST_IN_A_ROW` such failures with no micro-batch completed between them -- the
process host's rule for a crashed Streams process (as Oracle disables a propagation
schedule after 16 failures in a row).

Either way nothing of the batch in flight is committed, and every sink of the pipeline
is exactly once from its checkpoint (the target's applied low-watermark and delivery
records, the destination's de-duplication records, the warehouse's batch files), so the
remedy is what a user would do by hand: start the same query again from its checkpoint.
Any other error ends the run at once.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Callable

from ..errors import Error, ora, remote_error

__all__ = ["ATTEMPTS", "PAUSE_FIRST", "PAUSE_MOST", "LOST_IN_A_ROW", "worker_was_late", "database_was_lost",
           "Restarts", "to_the_end", "await_end", "run_error"]

ATTEMPTS = 4            # starts of one query for late workers: the first and three restarts
PAUSE_FIRST = 1.0       # seconds before the first restart after a lost database, doubling ...
PAUSE_MOST = 60.0       # ... up to this
LOST_IN_A_ROW = 16      # lost databases with no micro-batch completed between them: the run ends
_LATE = "to connect back"
# Sluice's errors for a connection that broke or a server that is not there (yet), and
# libpq's own words where an error reaches Spark untranslated
_LOST = re.compile(r"ORA-0(?:3113|3114|3135|1033|1089)\b|ORA-12541\b|server closed the connection unexpectedly|"
                   r"terminating connection due to administrator command|the connection is (?:closed|lost)|"
                   r"the database system is (?:starting up|shutting down|in recovery mode|not yet accepting)|"
                   r"connection to server .* failed: Connection refused")
log = logging.getLogger("sluice.pipeline")


# the line a Python traceback ends with: a sluice error's class and message, or any exception's
_SLUICE_RAISED = re.compile(r"\bsluice\.errors\.\w+: ((ORA|SLU)-(\d{5}): .*)$", re.M)
_RAISED = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)): (.*)$", re.M)
# a sluice error's own line (str() of one: what a run recorded of the error it ended with)
_SLUICE_LINE = re.compile(r"\A((ORA|SLU)-(\d{5}): .*)$", re.M)


def run_error(error: object) -> Error:
    """What a query died of (``error``: the exception, or its text), as one sluice error
    with a one-line message: the first sluice error a Spark task or batch function raised
    (``ORA-25229: error on transformation …``), else ORA-00600 naming the last exception
    of the traceback (or the first line of what Spark says).  Spark's own text -- the
    Java stack, the logical plan -- is kilobytes, and ``pipeline status`` shows the error
    in a table cell.  A sluice error (or its line: the run's own ORA-03113 for a lost lease
    session, ORA-26666 for its process taken meanwhile) is itself, not ORA-00600 around it."""
    if isinstance(error, Error):
        return error
    text = str(error)
    raised = _SLUICE_RAISED.search(text) or _SLUICE_LINE.search(text.strip())
    if raised is not None:
        message, prefix, code = raised.groups()
        if prefix == "SLU":
            return Error(message, int(code), prefix="SLU")
        return remote_error(int(code), message)
    found = _RAISED.findall(text)
    summary = f"{found[-1][0].rpartition('.')[2]}: {found[-1][1]}" if found else text.strip().split("\n")[0]
    return ora(600, summary.strip()[:1000])


def worker_was_late(error: object) -> bool:
    """True when ``error`` (an exception, or the text a query died with) is Spark's
    missed 10-s wait for a Python worker it started."""
    return error is not None and _LATE in str(error)


def database_was_lost(error: object) -> bool:
    """True when ``error`` (an exception, or the text a query died with) says a database
    connection broke or its server is down or starting (not: an error a database gave)."""
    return error is not None and _LOST.search(str(error)) is not None


class Restarts:
    """One query's budget of starts: ``attempts`` in all for late workers (shared by
    failed starts and restarts after it died), and :data:`LOST_IN_A_ROW` lost databases
    in a row (:meth:`progressed` starts that count again), each after a pause (``pause``:
    a function given the seconds that returns True when the run is to stop instead, as
    ``threading.Event.wait`` does); ``said`` gets a line for the run's output at each
    restart."""

    def __init__(self, attempts: int = ATTEMPTS, said: Callable[[str], None] | None = None,
                 pause: Callable[[float], bool | None] = time.sleep) -> None:
        self.attempts, self.said, self.pause = attempts, said, pause
        self.late = 0     # restarts for late workers so far
        self.lost = 0     # lost databases since a micro-batch last completed

    def launch(self, start: Callable[[], Any]) -> Any:
        """``start()``'s result, called again while it raises only because a Python
        worker was late or a database was lost, as :meth:`again` allows."""
        while True:
            try:
                return start()
            except Exception as e:   # py4j / pyspark wrap the JVM's SparkException
                if not self.again(e):
                    raise

    def progressed(self) -> None:
        """A micro-batch completed: lost databases count from none again."""
        self.lost = 0

    def again(self, error: object) -> bool:
        """Whether a query that ended with ``error`` (None: it ended well) is to be
        started again: a late Python worker while starts are left, a lost database
        (after its pause) while the failures in a row are fewer than :data:`LOST_IN_A_ROW`."""
        if worker_was_late(error) and self.late < self.attempts - 1:
            self.late += 1
            self._say(f"Spark's Python worker did not connect back within its 10 s (a loaded machine); "
                      f"starting again from the checkpoint (restart {self.late} of {self.attempts - 1})")
            return True
        lost = _LOST.search(str(error)) if error is not None else None
        if lost is None or self.lost >= LOST_IN_A_ROW - 1:
            return False
        self.lost += 1
        seconds = min(PAUSE_FIRST * 2 ** (self.lost - 1), PAUSE_MOST)
        self._say(f"a database was lost ({lost.group(0)}); starting again from the checkpoint in "
                  f"{seconds:g} s (failure {self.lost} in a row of at most {LOST_IN_A_ROW})")
        return not self.pause(seconds)

    def _say(self, text: str) -> None:
        log.warning(text)
        if self.said is not None:
            self.said(text + "\n")


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
    was late or a database was lost (:class:`Restarts`).  Returns the last query started
    (its ``exception()`` says how it ended; still running when ``timeout`` seconds have
    passed)."""
    end = None if timeout is None else time.monotonic() + timeout
    restarts = Restarts(attempts, said)
    query = restarts.launch(start)
    while True:
        if not await_end(query, None if end is None else end - time.monotonic()):
            return query
        if not restarts.again(query.exception()):
            return query
        query = restarts.launch(start)
