"""txn_lcr_spill_threshold: a large transaction's LCRs spill from memory to a table.

Oracle's apply reader spills a transaction's messages "from memory to hard disk" once more
than ``txn_lcr_spill_threshold`` of them are in memory (SET_PARAMETER; default 10,000;
``INFINITE``: never), and DBA_APPLY_SPILL_TXN lists the spilled transactions.

Here the apply process reads at most the threshold's number of messages of one source
transaction before it stops reading (:meth:`ApplyProcess._dequeue`).  The transaction's
messages so far — as the apply rules left them — then go into ``SLUICE_APPLY_SPILL`` in the
same store transaction that takes them off the queue, so each is in the queue or spilled,
never both, never neither; the process holds none of them any more.  Later batches add the
rest of the transaction the same way.  The transaction is complete when a message of another
transaction follows it (or nothing does: capture enqueues a transaction in one queue
transaction).  It is then applied, one target transaction as always, reading its LCRs back
in chunks (:class:`SpilledItems`), before anything after it; its rows go in the store
transaction that commits the batch.  A crash leaves the rows: a restarted process goes on
with them (:func:`load`), and the target's SLUICE_APPLY_DONE record keeps a transaction
applied before the crash from being applied again.

From the buffered queue (a BUFFERED capture of this process, :mod:`.bufferedreader`) the
same, with the capture's slot as the guard instead of the queue: the commit that writes the
spill rows also writes how far the apply consumed (SLUICE_CAPTURE_CONSUMED), the slot never
passes an unfinished transaction, and a capture that stages again leaves out, for this
apply, what it consumed — so the rest comes, and only the rest.  Such a spill (``buffered``)
is complete when the rest has been read: another transaction follows, or the capture has
staged all of it; until then nothing persistent is read (it would end it) -- unless its
capture was switched to PERSISTENT staging meanwhile: the rest then comes through the queue
(:func:`captured_through`), the part consumed already let go by the apply.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterator

from ..capture.context import CaptureContext
from .engine import Item, SourceTxn

__all__ = ["Spill", "SpilledItems", "load", "discard", "threshold", "captured_through"]

_INSERT = """INSERT INTO SLUICE_APPLY_SPILL (APPLY_NAME, SEQ, SOURCE_DATABASE, SOURCE_TRANSACTION_ID,
    SOURCE_COMMIT_SCN, MESSAGE_SCN, EXECUTE, MESSAGE_CREATE_TIME, SPILL_TIME, MESSAGE)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_CHUNK = 1000       # LCRs read back per query


def threshold(parameter: str) -> int | None:
    """The SET_PARAMETER value as a count (None: INFINITE)."""
    return None if parameter == "INFINITE" else int(parameter)


@dataclass
class Spill:
    """The spilled part of the transaction being read: its key and how many LCRs are stored."""

    apply_name: str
    source_database: str
    transaction_id: str
    commit_scn: int
    stored: int = 0
    buffered: bool = False      # read from the buffered queue (its rest comes staged)

    @property
    def key(self) -> tuple:
        return (self.source_database, self.transaction_id, self.commit_scn)

    def add(self, ctx: CaptureContext, items: list[Item], encode: Any) -> None:
        """Spill ``items`` with the store transaction now open (their dequeue)."""
        if not items:
            return
        now = time.time()
        rows = []
        for item in items:
            m = item.message
            when = m.get_source_time()
            self.stored += 1
            rows.append((self.apply_name, self.stored, self.source_database, self.transaction_id,
                         self.commit_scn, m.get_scn(), int(item.execute),
                         when.timestamp() if when is not None else None, now, encode(m)))
        ctx.add_commit_work(lambda c: c.executemany(_INSERT, rows))

    def transaction(self, ctx: CaptureContext, decode: Any, tail: list[Item]) -> SourceTxn:
        """The complete transaction: the stored LCRs, then ``tail`` (read in this batch)."""
        return SourceTxn(SpilledItems(ctx, self.apply_name, decode, self.stored, tail), "CAPTURED",
                         self.source_database, self.commit_scn, self.transaction_id)

    def discard(self, ctx: CaptureContext) -> None:
        discard(ctx, self.apply_name)


class SpilledItems:
    """A spilled transaction's items, read back from the store in chunks each time they are
    iterated (the engine goes through them once or twice); never all in memory."""

    def __init__(self, ctx: CaptureContext, apply_name: str, decode: Any, stored: int,
                 tail: list[Item]) -> None:
        self.ctx, self.apply_name, self.decode = ctx, apply_name, decode
        self.stored, self.tail = stored, tail

    def __len__(self) -> int:
        return self.stored + len(self.tail)

    def __iter__(self) -> Iterator[Item]:
        for low in range(0, self.stored, _CHUNK):
            rows = self.ctx.query("SELECT MESSAGE, EXECUTE FROM SLUICE_APPLY_SPILL WHERE APPLY_NAME = :a "
                                  "AND SEQ > :lo AND SEQ <= :hi ORDER BY SEQ",
                                  {"a": self.apply_name, "lo": low, "hi": low + _CHUNK})
            for message, execute in rows:
                yield Item(self.decode(message), bool(execute))
        yield from self.tail

    def __getitem__(self, index: int) -> Item:
        if index < 0:
            index += len(self)
        if index >= self.stored:
            return self.tail[index - self.stored]
        rows = self.ctx.query("SELECT MESSAGE, EXECUTE FROM SLUICE_APPLY_SPILL WHERE APPLY_NAME = :a "
                              "AND SEQ = :s", {"a": self.apply_name, "s": index + 1})
        return Item(self.decode(rows[0][0]), bool(rows[0][1]))


def discard(ctx: CaptureContext, apply_name: str) -> None:
    """The spilled rows go with the batch that applied their transaction (or put it in the
    error queue)."""
    ctx.add_commit_work(lambda c: c.execute("DELETE FROM SLUICE_APPLY_SPILL WHERE APPLY_NAME = ?",
                                            (apply_name,)))


def load(ctx: CaptureContext, apply_name: str) -> Spill | None:
    """The spill a previous run of the process left (None: none)."""
    rows = ctx.query("SELECT SOURCE_DATABASE, SOURCE_TRANSACTION_ID, SOURCE_COMMIT_SCN, MAX(SEQ) "
                     "FROM SLUICE_APPLY_SPILL WHERE APPLY_NAME = :a "
                     "GROUP BY SOURCE_DATABASE, SOURCE_TRANSACTION_ID, SOURCE_COMMIT_SCN", {"a": apply_name})
    if not rows:
        return None
    db, txn_id, scn, stored = rows[0]
    # its LCRs came from the buffered queue if the process told a capture it consumed LCRs
    # of this very transaction (a buffered take's commit writes that, with the spill rows)
    consumed = ctx.query("SELECT COUNT(*) FROM SLUICE_CAPTURE_CONSUMED WHERE CONSUMER = :a "
                         "AND COMMIT_SCN = :c", {"a": apply_name, "c": scn})
    return Spill(apply_name, db, txn_id, scn, stored, buffered=bool(consumed[0][0]))


def captured_through(ctx: CaptureContext, owner: str, name: str, sp: Spill) -> bool | None:
    """A buffered spill ``sp`` while no capture stages buffered LCRs into queue ``owner``.``name``:
    None while the capture of its source database into that queue stages BUFFERED (the rest
    comes staged when it runs again).  A capture switched to PERSISTENT staging captures the
    transaction again into the queue, whole, unless its stored position (CAPTURED_SCN) had
    passed it -- which the slot's guard allows only once every LCR of it was consumed.  So:
    whether that position has passed it now (True: the rest, if any, is in the queue already;
    False: it is to come).  Asked before the queue is read."""
    from ..capture import spec as cspecs
    for c in cspecs.all_specs(ctx):
        if (c.queue_owner, c.queue_name) == (owner, name) and c.source_database == sp.source_database:
            if c.staging != "PERSISTENT":
                return None
            rows = ctx.query("SELECT CAPTURED_SCN FROM SLUICE_CAPTURE_PROGRESS WHERE OWNER = :o AND NAME = :n",
                             {"o": cspecs.OWNER, "n": c.name})
            return bool(rows and rows[0][0] is not None and rows[0][0] >= sp.commit_scn)
    return None
