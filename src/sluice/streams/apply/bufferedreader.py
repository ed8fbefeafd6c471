"""The apply process's reader of the buffered queue: captured LCRs a capture process of
this process stages there (``STAGING`` = ``BUFFERED``, :mod:`sluice.streams.capture.staging`).

Seed 001 "Persistent Queues and Buffered Queues": "LCRs that were captured by a capture
process are always stored in a buffered queue … Apply processes can dequeue and process
captured LCRs in a buffered queue" (apply_captured TRUE).  Sluice's buffered messages are
this process's memory (and what it spilled to the queue table), so only an apply process
running in the capture's process reads them — a host (``sluice run``) runs both so, or a
test in-process.

**Order and whole transactions.**  The LCRs come in the queue's order across memory and the
spilled ones (:meth:`sluice.aq.bufferedendpoint.Endpoint.take`), which is the capture's
stream order.  The reader looks at the next LCR (BROWSE) before it takes it (REMOVE_NODATA,
by message id), so a batch ends only where a source transaction ends: past ``limit`` LCRs
it stops before the first LCR of another transaction, and when memory runs dry it waits
until the capture has staged the rest of the last transaction
(:meth:`~sluice.streams.capture.staging.BufferedStaging.transaction_complete`; asked after
a look that found nothing, a yes is checked by one more look: the rest may have been staged
between the two).

**txn_lcr_spill_threshold** (:mod:`.spill`).  Once it has taken more than the threshold of
one transaction's LCRs the reader stops (not whole): the apply process spills them in the
commit that also records how far it consumed, so neither the reader nor the capture's book
holds them any longer (the pool let each go when it was taken).  The next reads go on with
that transaction (``pending``): its rest comes first, in stream order, and when none is
left in the queue the transaction is whole once its capture has staged all of it
(:meth:`~sluice.streams.capture.staging.BufferedStaging.staged_through`).

**Exactly once.**  A take is the staging's to hear of: the apply's store commit (with its
progress, error rows, counters) also writes how far it consumed (SLUICE_CAPTURE_CONSUMED)
and only then may the capture confirm its slot past those LCRs — so the slot, the
capture's restart position (REQUIRED_CHECKPOINT_SCN) and DBA_CAPTURE.APPLIED_SCN never pass
what the apply has not applied and committed.  A crash loses the memory; the capture stages
again from its slot — leaving out, for this apply, what it consumed: a spilled part too, so
the apply goes on with its spill table — and SLUICE_APPLY_DONE skips a transaction the
target had committed.  A rollback of the apply's batch (disable_on_error) makes the capture
stage again from its confirmed position (``BufferedStaging.replay_wanted``): the LCRs come
back in order.
"""

from __future__ import annotations

import time
from typing import Any

from ... import constants as C
from ...aq.buffered import existing_pool
from ..lcr import DDLLCR, RowLCR

__all__ = ["BufferedReader", "consumed_marks", "consumed_ahead"]

_COMPLETE_PATIENCE = 30.0     # seconds to wait for the capture to stage a transaction's rest


class BufferedReader:
    """Reads the buffered LCRs of ``consumer`` (the apply process) in queue
    ``owner``.``name`` (canonical names)."""

    def __init__(self, conn: Any, owner: str, name: str, consumer: str) -> None:
        self.conn = conn
        self.qualified = f"{owner}.{name}"      # (QueueInfo.qualified: the pool's key)
        self._look = self._queue(conn, f'"{owner}"."{name}"', consumer, C.DEQ_BROWSE)
        self._take = self._queue(conn, f'"{owner}"."{name}"', consumer, C.DEQ_REMOVE_NODATA)
        self.taken: set[bytes] = set()       # message ids of the batch read last

    @staticmethod
    def _queue(conn: Any, name: str, consumer: str, mode: int) -> Any:
        q = conn.queue(name)
        opts = q.deqoptions
        opts.consumername = consumer
        opts.deliverymode = C.MSG_BUFFERED      # seed 003: IMMEDIATE, one at a time
        opts.visibility = C.DEQ_IMMEDIATE
        opts.navigation = C.DEQ_FIRST_MSG       # what is taken is gone: the first is the next
        opts.mode = mode
        opts.wait = C.DEQ_NO_WAIT
        return q

    def staged(self) -> bool:
        """Whether a capture process of this process stages LCRs into the queue now."""
        pool = existing_pool(self.conn.context.store)
        if pool is None or not pool.listeners:
            return False
        return any(key[0] == self.qualified for key in list(pool.listeners))

    def read(self, limit: int, wait: float, spill_at: int | None = None,
             pending: tuple | None = None) -> tuple[list[Any], bool]:
        """Whole source transactions of LCRs, at least ``limit`` LCRs unless fewer are
        staged; waits up to ``wait`` seconds for the first.  Returns them and whether the
        last one read is whole: False when more than ``spill_at`` LCRs of one transaction
        were read (txn_lcr_spill_threshold: the caller spills them and reads on).
        ``pending`` is the key of a transaction the caller spilled before: the first LCRs
        read may be its rest, and with none read it is whole only once the capture has
        staged all of it.  ([], whole) when a transaction's rest will not come (its capture
        stopped, or started again, meanwhile): what was taken is given back (rolled back:
        the capture stages it again)."""
        self.taken = set()
        if not self.staged():
            return [], pending is None
        try:
            return self._read(limit, wait, spill_at, pending)
        except BaseException:
            self._give_back()    # nothing taken stays in a transaction nobody ends
            raise

    def _give_back(self) -> None:
        self.conn.rollback()
        self.taken = set()

    def _read(self, limit: int, wait: float, spill_at: int | None,
              pending: tuple | None) -> tuple[list[Any], bool]:
        msgs: list[Any] = []
        last_key, run = pending, 0      # the transaction read last; its LCRs in this read
        patience = None
        while True:
            self._look.deqoptions.wait = C.DEQ_NO_WAIT if msgs or wait <= 0 else max(1, int(round(wait)))
            head = self._look.deqone()
            if head is None:
                complete = self._complete(msgs[-1]) if msgs else self._staged_through(pending)
                if complete and (msgs or pending is not None):
                    # asked after the look: what was staged between the two is in the
                    # queue now (the capture files an LCR before it says it staged it)
                    self._look.deqoptions.wait = C.DEQ_NO_WAIT
                    head = self._look.deqone()
            if head is None:
                if complete:
                    return msgs, True
                if not msgs:
                    return msgs, False    # the spilled transaction's rest is not staged yet
                if patience is None:
                    patience = time.monotonic() + _COMPLETE_PATIENCE
                if complete is None or time.monotonic() > patience:
                    self._give_back()
                    return [], pending is None
                time.sleep(0.002)     # the capture is staging the rest of this transaction
                continue
            key = _key(head.payload)
            if msgs and len(msgs) >= limit and key != last_key:
                return msgs, True         # a transaction ends here
            self._take.deqoptions.msgid = head.msgid
            if self._take.deqone() is None:
                continue              # gone meanwhile (its capture started again): look again
            self.taken.add(head.msgid)
            msgs.append(head)
            run = run + 1 if key == last_key else 1
            last_key = key
            patience = None
            if spill_at is not None and key is not None and run > spill_at:
                return msgs, False    # more of it than the threshold: the caller spills them

    def _complete(self, m: Any) -> bool | None:
        """Whether the staging capture has staged every LCR of ``m``'s transaction (None:
        it does not know ``m``: give it back).  Anything but a captured LCR is a message of
        its own."""
        if _key(m.payload) is None:
            return True
        pool = existing_pool(self.conn.context.store)
        sender = m.sender_id.name if m.sender_id is not None else None
        staging = pool.listeners.get((self.qualified, sender)) if pool is not None else None
        if staging is None:
            return None      # its capture stopped: it stages the transaction again when it starts
        return staging.transaction_complete(m.msgid, self._look.deqoptions.consumername)

    def _staged_through(self, pending: tuple | None) -> bool | None:
        """Whether the spilled transaction ``pending`` (source database, transaction id,
        commit SCN) is staged whole (True without one): its capture — the one staging into
        the queue for its source database — says so (None: no such capture runs)."""
        if pending is None:
            return True
        pool = existing_pool(self.conn.context.store)
        for (queue, _), staging in list(pool.listeners.items()) if pool is not None else ():
            if queue == self.qualified and staging.proc.spec.source_database == pending[0]:
                return staging.staged_through(pending[2])
        return None


def _key(payload: Any) -> tuple | None:
    """The source transaction of a captured LCR (None for anything else)."""
    if isinstance(payload, (RowLCR, DDLLCR)) and payload.get_commit_scn() is not None:
        return (payload.get_source_database_name(), payload.get_transaction_id(), payload.get_commit_scn())
    return None


def consumed_marks(ctx: Any, consumer: str) -> dict[str, tuple[int, int]]:
    """How far ``consumer`` took each capture's buffered LCRs (capture name: (commit SCN,
    SCN) of the last, SLUICE_CAPTURE_CONSUMED, stream order).  A capture switched to
    PERSISTENT staging (SET_PARAMETER 'STAGING', docs/DESIGN-NOTES.md "A switch to
    PERSISTENT staging") captures again from its stored position, which the slot's guard
    keeps at or before that mark: what it enqueues up to the mark the consumer had, and lets
    go (:meth:`ApplyProcess._transactions`)."""
    rows = ctx.query("SELECT NAME, COMMIT_SCN, SCN FROM SLUICE_CAPTURE_CONSUMED WHERE CONSUMER = :c",
                     {"c": consumer})
    return {name: (commit_scn, scn) for name, commit_scn, scn in rows}


def consumed_ahead(ctx: Any, capture: str, consumer: str) -> bool:
    """Whether ``consumer`` (an apply process) took buffered LCRs of ``capture`` that the
    capture will capture again (its CAPTURED_SCN is behind them), or holds a spilled part of
    a transaction: a capture switched to PERSISTENT staging must then stage, not hand its
    LCRs to the apply (combined capture and apply would apply them whole, again)."""
    spilled = ctx.query("SELECT COUNT(*) FROM SLUICE_APPLY_SPILL WHERE APPLY_NAME = :a", {"a": consumer})
    if spilled[0][0]:
        return True
    rows = ctx.query("SELECT X.COMMIT_SCN, P.CAPTURED_SCN FROM SLUICE_CAPTURE_CONSUMED X "
                     "LEFT JOIN SLUICE_CAPTURE_PROGRESS P ON P.OWNER = X.OWNER AND P.NAME = X.NAME "
                     "WHERE X.NAME = :n AND X.CONSUMER = :c", {"n": capture, "c": consumer})
    return any(captured is None or captured < commit_scn for commit_scn, captured in rows)
