"""Buffered staging of captured LCRs (DBMS_CAPTURE_ADM.SET_PARAMETER 'STAGING' = 'BUFFERED').

Seed 001 "Persistent Queues and Buffered Queues": a capture process stages its LCRs in
the buffered queue (memory, spilling to the queue table) and, after a failure, Oracle
"automatically recovers" them by mining the redo again from the capture's checkpoint.
Here the redo is the replication slot: LCRs go into the queue's buffered part (this
process's :class:`sluice.aq.buffered.BufferedPool`) with no store transaction, and the
slot is confirmed past a batch only once every record of it (one per consumer) was taken
by a consumer **whose transaction then committed**.  A crash anywhere loses nothing: what
was not consumed is still after the slot's confirmed position and is captured again.

**No duplicates.**  A consumer's commit also writes, in that same transaction, how far it
got (``SLUICE_CAPTURE_CONSUMED``: commit SCN and SCN of the last LCR it took, stream
order).  A capture that starts again leaves out, per consumer, what that consumer had
consumed (the replay is addressed to the others by recipient list); so between the
consumer's commit and the slot's advance nothing can be delivered twice.  Consumers take
LCRs in stream order (one capture per queue, dequeued in queue order) — the position is
a high-water mark.

**Apply processes** (seed 001 "Persistent Queues and Buffered Queues": an apply process
whose apply_captured is TRUE dequeues captured LCRs from the buffered queue) of the
capture's queue get a copy of each LCR whatever delivery mode their subscription names
(:meth:`BufferedStaging.appliers`); an apply process running in this process reads them
(:mod:`sluice.streams.apply.bufferedreader`), whole transactions at a time
(:meth:`BufferedStaging.transaction_complete`).

**Failure behaviour** (docs/DESIGN-NOTES.md "Staging"): a killed process loses its memory
and the slot still holds everything not consumed; a consumer that takes LCRs and rolls
back (an apply process whose transaction failed) makes the capture stage again from its
confirmed position, as Oracle re-mines the redo from its checkpoint
(:attr:`BufferedStaging.replay_wanted`; buffered dequeues themselves are not
transactional, seed 003): only a committed take moves the slot; spilled LCRs do
not move the slot either (a restarting capture discards its spilled ones and stages them
again from the slot, so order is kept); consumers must run in the capture's process (buffered
messages are per process) and commit — a consumer that never commits holds the slot, and
the capture stops reading (``PAUSED FOR FLOW CONTROL``) once its unconsumed backlog passes
``backlog_limit`` decoded rows.  Within a batch (a large transaction) the buffered queue's
flow control holds it: past ``flow_control_threshold`` of its messages in memory an enqueue
is refused (ORA-25307) and the capture pauses and tries again (:meth:`BufferedStaging._enqueue`)
until its consumers take some — it does not abort.
"""

from __future__ import annotations

import collections
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

from ... import constants as C
from ...errors import DatabaseError
from ...model import Agent
from ...aq.buffered import existing_pool, pool_for
from ...aq.subscribers import BUFFERED as TAKES_BUFFERED, PERSISTENT_OR_BUFFERED
from . import spec as specs

__all__ = ["BufferedStaging", "PERSISTENT", "BUFFERED", "STAGINGS", "discard_earlier"]

PERSISTENT, BUFFERED = "PERSISTENT", "BUFFERED"
_runs: "weakref.WeakValueDictionary[tuple, BufferedStaging]" = weakref.WeakValueDictionary()
STAGINGS = (PERSISTENT, BUFFERED)

_ACK = """INSERT INTO SLUICE_CAPTURE_CONSUMED (OWNER, NAME, CONSUMER, COMMIT_SCN, SCN)
  VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (OWNER, NAME, CONSUMER) DO UPDATE SET COMMIT_SCN = excluded.COMMIT_SCN, SCN = excluded.SCN
  WHERE excluded.COMMIT_SCN > SLUICE_CAPTURE_CONSUMED.COMMIT_SCN
     OR (excluded.COMMIT_SCN = SLUICE_CAPTURE_CONSUMED.COMMIT_SCN AND excluded.SCN > SLUICE_CAPTURE_CONSUMED.SCN)"""


@dataclass(eq=False)
class _Batch:
    """One read of the slot: where the slot may go once it is consumed."""

    end_lsn: int
    commit_scn: int                 # of its last transaction
    rows: int                       # decoded rows it spans (what a peek re-reads)
    outstanding: set = field(default_factory=set)   # (msgid, consumer) not consumed yet
    sealed: bool = False            # every LCR of it is staged
    broken: bool = False            # staging it failed part way: never complete, never confirmed


def discard_earlier(proc: Any, queue_info: Any, run: "BufferedStaging | None" = None) -> None:
    """What an earlier run of the capture ``proc`` left in this process's buffered queue goes:
    its LCRs in memory and those spilled -- the slot still holds them, so they are staged
    again, in order: buffered by the new ``run`` (:meth:`BufferedStaging.open`), or
    persistent by a capture switched to PERSISTENT staging (which would otherwise leave them
    beside their persistent copies, for a consumer of buffered messages to take twice)."""
    store = proc.conn.context.store
    pool = pool_for(store) if run is not None else existing_pool(store)
    if pool is not None:
        key = (id(pool), (queue_info.qualified, proc.name))
        before = _runs.get(key)
        if before is not None:     # an earlier run of this capture in this process (crashed,
            before.settle()        # stopped): its consumers' open takes end first, so their
        if run is not None:        # positions count in what is replayed
            _runs[key] = run
        pool.discard(queue_info, proc.name)

    def text(v: str) -> str:
        return "'" + v.replace("'", "''") + "'"
    proc.ctx.context.store.purge_messages(queue_info.table, (
        f"qtview.QUEUE = {text(queue_info.name)} AND qtview.SENDER_NAME = {text(proc.name)} "
        f"AND qtview.DELIVERY_MODE = 'BUFFERED'"))


class BufferedStaging:
    """The consumption book of one running capture process in BUFFERED staging: the
    pool's listener for the capture's (queue, sender) and the slot position it may confirm."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc
        self.name = proc.name
        self.pool = pool_for(proc.conn.context.store)
        self._lock = threading.Lock()
        self._batches: collections.deque[_Batch] = collections.deque()
        self._current: _Batch | None = None
        self._sealed_scn = -1           # commit SCN of the last batch this run staged whole
        self._where: dict[tuple, tuple[_Batch, int, int]] = {}   # key -> (batch, commit SCN, SCN)
        self.backlog_rows = 0          # rows of batches staged and not yet confirmed
        self.consumed: dict[str, tuple[int, int]] = {}   # consumer -> (commit SCN, SCN) committed
        self._key: tuple | None = None
        self._queue_info: Any = None
        self._staging: tuple[int, int] = (0, 0)   # (commit SCN, SCN) of the LCR being enqueued
        self._takes: dict[int, _Takes] = {}   # id(consumer session) -> its transaction's takes
        # a consumer rolled back what it took: the capture stages again from the slot's
        # confirmed position (CaptureProcess._replay) — those LCRs are gone from memory
        self.replay_wanted = False
        self._appliers: tuple[int, frozenset] = (-1, frozenset())   # (catalog version, names)

    # -- life cycle ------------------------------------------------------------------
    def open(self, queue_info: Any) -> None:
        """Start afresh: what this capture left in memory or spilled goes (the slot still
        holds it: it is staged again, in order), the consumers' positions are read."""
        self.close()
        self._queue_info = queue_info
        self._key = (queue_info.qualified, self.name)
        discard_earlier(self.proc, queue_info, self)
        ctx = self.proc.ctx
        rows = ctx.query("SELECT CONSUMER, COMMIT_SCN, SCN FROM SLUICE_CAPTURE_CONSUMED "
                         "WHERE OWNER = :o AND NAME = :n", {"o": specs.OWNER, "n": self.name})
        self.consumed = {r[0]: (r[1], r[2]) for r in rows}
        self.replay_wanted = False
        self.pool.listeners[self._key] = self

    def settle(self, timeout: float = 5.0) -> None:
        """Wait (a while) until no consumer transaction holds an uncommitted take of ours."""
        end = time.monotonic() + timeout
        while self._takes and time.monotonic() < end:
            time.sleep(0.01)

    def close(self) -> None:
        if self._key is not None and self.pool.listeners.get(self._key) is self:
            del self.pool.listeners[self._key]
        self._key = None
        with self._lock:
            self._batches.clear()
            self._where.clear()
            self._current = None
            self._sealed_scn = -1
            self.backlog_rows = 0

    # -- the capture's side ----------------------------------------------------------
    def stage(self, lcrs: list[Any], end_lsn: int, commit_scn: int, rows: int) -> list[Any]:
        """Enqueue ``lcrs`` (one batch, in stream order) as buffered messages; returns those
        enqueued (a message no subscriber wants, ORA-24033, is left out)."""
        proc = self.proc
        batch = _Batch(end_lsn, commit_scn, rows)
        with self._lock:
            self._batches.append(batch)
            self._current = batch
            self.backlog_rows += rows
        queue, agent, conn = proc._queue, proc._agent, proc.conn
        queue.enqoptions.deliverymode = C.MSG_BUFFERED
        queue.enqoptions.visibility = C.ENQ_IMMEDIATE
        queue.stages_captured_lcrs = True
        queue.buffered_consumers = self.appliers()
        done = self._replayed_to() if self.consumed else None
        kept = []
        staged = False
        try:
            for lcr in lcrs:
                self._staging = (lcr.get_commit_scn(), lcr.get_scn())
                recipients = None
                if done is not None:
                    recipients = [c for c in done if self._staging > self.consumed.get(c, (-1, -1))]
                    if not recipients:
                        continue
                    if len(recipients) == len(done):
                        recipients = None          # nobody had it: the subscribers' rules decide
                m = conn.msgproperties(payload=lcr, sender_id=agent)
                if recipients is not None:
                    m.recipients = [Agent(c) for c in recipients]
                try:
                    if not self._enqueue(queue, m):
                        return kept       # stopped while paused: the batch stays unsealed
                    kept.append(lcr)
                except DatabaseError as e:
                    if e.code != 24033:
                        raise
            staged = True
        finally:
            with self._lock:
                batch.sealed, batch.broken = staged, not staged
                if staged:
                    self._sealed_scn = max(self._sealed_scn, batch.commit_scn)
                self._current = None
        return kept

    def _enqueue(self, queue: Any, m: Any) -> bool:
        """Enqueue ``m``; False if the process was stopped meanwhile.  Flow control: while
        ``flow_control_threshold`` of the capture's messages are in memory, not taken, the
        enqueue waits and then gets ORA-25307 — the capture does not abort then but pauses
        (V$STREAMS_CAPTURE ``PAUSED FOR FLOW CONTROL``, as Oracle's does when "apply
        processes are consuming messages slower than the capture process is creating them")
        and tries again until its consumers take some (an apply process reading a large
        transaction spills and takes on) or it is stopped."""
        proc, paused = self.proc, False
        while True:
            try:
                queue.enqone(m)
                break
            except DatabaseError as e:
                if e.code != 25307:
                    raise
                if proc.stopping():
                    return False
                if not paused:
                    proc._set_state("PAUSED FOR FLOW CONTROL")
                    paused = True
        if paused:
            proc._set_state("CAPTURING CHANGES")
        return True

    def appliers(self) -> frozenset:
        """The apply processes that apply this capture's LCRs (DBA_APPLY: the capture's
        queue, APPLY_CAPTURED, its source database or any): they take captured LCRs from the
        buffered queue (seed 001), so each gets a buffered copy even when its subscription
        names PERSISTENT (CREATE_APPLY's).  Read again when the catalog changes."""
        ctx = self.proc.ctx
        version = ctx.catalog_version()
        if self._appliers[0] != version:
            spec = self.proc.spec
            rows = ctx.query("SELECT APPLY_NAME FROM DBA_APPLY WHERE QUEUE_OWNER = :o AND QUEUE_NAME = :n "
                             "AND APPLY_CAPTURED = 'YES' AND (SOURCE_DATABASE IS NULL OR SOURCE_DATABASE = :s)",
                             {"o": spec.queue_owner, "n": spec.queue_name, "s": spec.source_database})
            self._appliers = (version, frozenset(r[0] for r in rows))
        return self._appliers[1]

    def transaction_complete(self, msgid: bytes, consumer: str | None) -> bool | None:
        """Whether every LCR of the source transaction of the record (``msgid``,
        ``consumer``), taken and not yet committed, is staged: its batch is, or the capture
        is staging a later transaction (batches hold whole transactions, staged in commit
        order).  None: not a record of this run's book (an earlier run's, or this run is
        staging again) — the consumer should give it back: it comes again, whole."""
        with self._lock:
            where = self._where.get((msgid, consumer))
            if where is None:
                return None
            batch, commit_scn, _ = where
            if batch.broken:
                return None     # the capture failed staging it: it stages it again when it starts
            return batch.sealed or (self._current is batch and self._staging[0] > commit_scn)

    def staged_through(self, commit_scn: int) -> bool:
        """Whether this run has staged every LCR of the source transaction committed at
        ``commit_scn``: a batch up to it is sealed, or the capture is staging a later one.
        An apply process spilling a large transaction asks when it has taken all it found
        of it (its earlier takes committed: :meth:`transaction_complete` no longer knows
        them); asked before it looks again, a True means the look sees the rest."""
        with self._lock:
            return self._sealed_scn >= commit_scn or (
                self._current is not None and self._staging[0] > commit_scn)

    def _replayed_to(self) -> list[str] | None:
        """The queue's local subscribers when some consumer's position is ahead of what
        is being staged (a replay after a restart), else None (nothing to leave out): those
        that take buffered messages, and the capture's apply processes."""
        appliers = self.appliers()
        subscribers = [s.name for s in self.proc.conn.context.catalog.subscribers(self._queue_info)
                       if s.address is None and (s.delivery_mode in (TAKES_BUFFERED, PERSISTENT_OR_BUFFERED)
                                                 or s.name in appliers)]
        return subscribers or None

    def confirmable(self) -> _Batch | None:
        """The last batch up to which everything was consumed (popped), or None."""
        last = None
        with self._lock:
            while self._batches and self._batches[0].sealed and not self._batches[0].outstanding:
                last = self._batches.popleft()
                self.backlog_rows -= last.rows
        if last is not None and self.consumed:
            self.consumed = {c: p for c, p in self.consumed.items() if p[0] > last.commit_scn}
        return last

    def unconsumed(self) -> int:
        """Records staged and not yet taken by a committed consumer."""
        with self._lock:
            return sum(len(b.outstanding) for b in self._batches)

    # -- the pool's listener -------------------------------------------------------------
    def staged(self, records: list[Any]) -> None:
        with self._lock:
            batch = self._current
            if batch is None:
                return
            commit_scn, scn = self._staging
            for r in records:
                key = (r.msgid, r.consumer_name)
                batch.outstanding.add(key)
                self._where[key] = (batch, commit_scn, scn)

    def taken(self, owner: Any, record: Any) -> None:
        """A consumer's session took one of our records: its commit records the position
        (with its work, one row per consumer however many it took) and then lets the slot
        move; a rollback forgets the take (the LCR comes again after a restart)."""
        key = (record.msgid, record.consumer_name)
        with self._lock:
            where = self._where.get(key)
            if where is None:
                return      # staged by an earlier run of the capture: it comes again from the slot
            txn = self._takes.get(id(owner))
            fresh = txn is None
            if fresh:
                txn = self._takes[id(owner)] = _Takes()
            txn.keys.append(key)
            consumer = record.consumer_name or ""
            txn.positions[consumer] = max(txn.positions.get(consumer, (-1, -1)), where[1:])
        if fresh:
            owner.session.add_commit_work(lambda c: [c.execute(_ACK, (specs.OWNER, self.name, name, *pos))
                                                     for name, pos in txn.positions.items()])
            self.pool.at_transaction_end(owner, lambda committed: self._ended(owner, txn, committed))

    def _ended(self, owner: Any, txn: "_Takes", committed: bool) -> None:
        with self._lock:
            if self._takes.get(id(owner)) is txn:
                del self._takes[id(owner)]
            if committed:
                for key in txn.keys:
                    where = self._where.pop(key, None)
                    if where is not None:
                        where[0].outstanding.discard(key)
            elif any(key in self._where for key in txn.keys):
                self.replay_wanted = True    # taken out of memory and not consumed: stage again


@dataclass(eq=False)
class _Takes:
    """What one consumer transaction took: the records, and each consumer's position."""

    keys: list = field(default_factory=list)
    positions: dict = field(default_factory=dict)
