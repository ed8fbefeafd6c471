"""Combined capture and apply at one database (seed 001 "Combined Capture and Apply
Requirements", the first list): the capture process and the apply process use the same
queue, the capture is its single publisher and the apply its single consumer.  The capture
then hands its LCRs straight to the apply -- nothing is staged in the queue -- by running the
apply process's own code on them (:meth:`ApplyProcess.apply_handed`): the apply's rule sets,
transformations, handlers, conflict handlers and error queue, each source transaction one
target transaction in commit order, exactly as the apply process would after dequeuing them.
The capture is the apply's reader: V$STREAMS_APPLY_READER.PROXY_SID names it,
V$STREAMS_CAPTURE.OPTIMIZATION is 1.  (:mod:`.combined` is the case of a capture and an apply at
two databases, through one propagation.)

**When** (checked when the capture starts, :func:`route_for`): the queue's only subscriber is
an apply process of this queue that is ENABLED and applies captured LCRs; no other capture
and no propagation publishes into the queue; nothing staged waits in it (it goes first, through
the apply process); and no Spark pipeline runs the apply: the capture takes the apply's reader
lease (:mod:`sluice.streams.apply.readerlease`) and holds it while it is combined.

**Exactly once.**  The apply's target commits (each with its SLUICE_APPLY_DONE record) come
first; its store work (progress, counters, error queue rows) then commits in the capture's
own transaction with the capture's position.  Killed in between, the capture reads the batch
again from the slot and the target's records skip what was applied.  The records are deleted
(in a later target transaction) only after that commit (:meth:`LocalCombined.acknowledge`).

**Falling back.**  A catalog change after which the topology no longer qualifies (STOP_APPLY,
a second subscriber, a propagation …) makes the capture stage from its next batch; the apply
process then dequeues as usual.  An apply that aborts on an error (disable_on_error) puts the
failed transaction into the error queue and ABORTED into DBA_APPLY at once; the batch's
transactions after it are staged in the queue in the capture's commit, and the capture stages
from then on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import DatabaseError
from ..propagation import spec as pspecs
from . import spec as cspecs
from .context import CaptureContext

__all__ = ["LocalCombined", "route_for", "backlog", "show_proxy"]


@dataclass
class LocalCombined:
    """The route of a capture that hands its LCRs to the apply process of its own queue."""

    conn: Any
    capture: str
    queue: tuple[str, str]          # (owner, name) of the capture's and the apply's queue
    apply: Any                      # the ApplyProcess the capture runs as the apply's reader
    site: str
    lease: Any = None               # the apply's ReaderLease, held while the capture is its reader
    _held: list[tuple] | None = None     # keys of the last batch's transactions not applied
    _done: list[str] | None = None       # its SLUICE_APPLY_DONE records (forgotten after the commit)

    def target(self) -> tuple[str, str, str | None]:
        """(queue owner, queue name, destination) as SLUICE_CAPTURE_COMBINED records them."""
        return (*self.queue, None)

    def still_qualifies(self, ctx: CaptureContext, spec: cspecs.CaptureSpec) -> bool:
        name = _apply_of(self.conn, ctx, spec)
        return name is not None and name == self.apply.d.name and self.apply.state != "ABORTED"

    def batch(self, lcrs: list[Any]) -> list[Any]:
        return lcrs

    def send(self, lcrs: list[Any], elapsed: float) -> None:
        """Apply ``lcrs`` (whole source transactions): the target committed, the apply's
        store work left in the capture's transaction.  With the reader lease lost nothing
        is applied: the capture stages the batch (another engine may run the apply now)."""
        if self.lease is not None and not self.lease.alive():
            self._held = list(dict.fromkeys((x.get_source_database_name(), x.get_transaction_id(),
                                             x.get_commit_scn()) for x in lcrs))
            self._done = None
            return
        self._held, self._done = self.apply.apply_handed(lcrs)

    def held_back(self, lcrs: list[Any]) -> list[Any]:
        """The LCRs of ``lcrs`` the apply did not take (it aborted): the capture stages them."""
        if not self._held:
            return []
        keys = set(self._held)
        return [x for x in lcrs if (x.get_source_database_name(), x.get_transaction_id(), x.get_commit_scn())
                in keys]

    def acknowledge(self, lcrs: list[Any]) -> None:
        """The capture's commit is done: the batch's SLUICE_APPLY_DONE records may go."""
        if self._done:
            self.apply.forget(self._done)
        self._done = None

    def proxy(self, on: bool) -> None:
        """Show (``on``) or stop showing the capture as the apply reader's PROXY_SID."""
        show_proxy(self.conn, self.queue, f"{self.capture}@{self.site}" if on else None)

    def close(self) -> None:
        """Stop being the apply's reader: the proxy goes, the apply's state row says IDLE (it
        is the apply process's, which may run in a host: not removed), its target is let go."""
        try:
            if self.conn.transaction_in_progress:
                self.conn.rollback()
            self.apply.hand_back()
            self.proxy(False)
        except DatabaseError:
            pass                   # the store may be what failed; the next start rewrites it
        finally:
            self.apply.release()
            if self.lease is not None:
                self.lease.close()


def _apply_of(conn: Any, ctx: CaptureContext, spec: cspecs.CaptureSpec) -> str | None:
    """The apply process the capture's queue feeds alone (seed 001's conditions), or None."""
    from ..apply import spec as aspecs
    key = (spec.queue_owner, spec.queue_name)
    if any(c.name != spec.name and (c.queue_owner, c.queue_name) == key for c in cspecs.all_specs(ctx)):
        return None                                   # another publisher: a capture
    if any(p.destination_dblink is None and (p.destination_queue_owner, p.destination_queue_name) == key
           for p in pspecs.all_specs(ctx.store)):
        return None                                   # another publisher: a propagation
    q = conn.context.catalog.queue_by_key(key)
    subs = conn.context.catalog.subscribers(q)
    if len(subs) != 1 or subs[0].name is None or subs[0].address is not None:
        return None                                   # not a single local consumer
    found = next((a for a in aspecs.all_specs(ctx) if a.name == subs[0].name), None)
    if found is None or (found.queue_owner, found.queue_name) != key:
        return None                                   # the consumer is no apply process of it
    if found.status != aspecs.ENABLED or not found.apply_captured:
        return None
    return found.name


def route_for(conn: Any, ctx: CaptureContext, spec: cspecs.CaptureSpec) -> LocalCombined | None:
    """The local combined route of the capture ``spec`` (None: it does not qualify)."""
    from ..apply.process import ApplyProcess
    from ..apply.bufferedreader import consumed_ahead
    from ..apply.readerlease import ReaderLease
    name = _apply_of(conn, ctx, spec)
    if name is None:
        return None
    q = conn.context.catalog.queue_by_key((spec.queue_owner, spec.queue_name))
    if backlog(conn, q) or consumed_ahead(ctx, spec.name, name):
        return None                                   # staged messages, or a spill, go first
    lease = ReaderLease.take(conn.context.store, name)
    if lease is None:
        return None                                   # a Spark pipeline runs the apply: stage
    try:
        apply = ApplyProcess.from_catalog(conn, name)
    except BaseException:
        lease.close()
        raise
    found = LocalCombined(conn, spec.name, (q.owner, q.name), apply, conn.context.store.global_name(), lease)
    try:
        found.proxy(True)
    except BaseException:
        found.apply.release()
        lease.close()
        raise
    return found


def backlog(conn: Any, q: Any) -> bool:
    """Whether staged messages wait in the capture's queue (they must go first)."""
    _, rows = conn.query(f'SELECT COUNT(*) FROM {q.table.owner}.AQ${q.table.name} '
                         f"WHERE QUEUE = :q AND MSG_STATE IN ('READY', 'WAITING')", {"q": q.name})
    return bool(rows and rows[0][0])


def show_proxy(conn: Any, queue: tuple[str, str], proxy_sid: str | None) -> None:
    """V$STREAMS_APPLY_READER.PROXY_SID of the apply reading ``queue`` at ``conn``'s site:
    the capture that hands its LCRs over (``CAPTURE@SITE``), or None; committed."""
    session = conn.context.session
    session.add_commit_work(lambda c: c.execute(
        "DELETE FROM SLUICE_APPLY_PROXY WHERE QUEUE_OWNER = ? AND QUEUE_NAME = ?", queue))
    if proxy_sid is not None:
        row = (*queue, proxy_sid)
        session.add_commit_work(lambda c: c.execute(
            "INSERT INTO SLUICE_APPLY_PROXY (QUEUE_OWNER, QUEUE_NAME, PROXY_SID) VALUES (?, ?, ?)", row))
    conn.commit()
