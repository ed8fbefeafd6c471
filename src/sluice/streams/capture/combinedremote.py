"""Combined capture and apply across two databases, nothing staged (seed 001 "Combined
Capture and Apply Optimization": the capture sends its LCRs straight to the apply process at
the destination).  The capture runs the **destination's** apply process -- its definition read
from the destination store through the propagation's database link,
:meth:`ApplyProcess.from_catalog` on a session there -- on the LCRs the propagation's rule sets
let through (row migration, declarative and custom transformations, as the propagation job
does: :meth:`.combined.Combined.passed`).  Nothing is enqueued at either site: no queue
transaction, no de-duplication rows, no dequeue.  (:mod:`.combinedlocal` is the same thing at
one database; :mod:`.combined` decides which route a capture takes, and keeps the staged
route -- LCRs delivered into the destination queue -- for a destination apply that is not
ENABLED or does not apply captured LCRs.)

**When** (:func:`.combined.route_for`): the propagation qualifies for combined capture and
apply through a link to another Sluice store (not an HTTP servlet), the destination queue's
single consumer is an apply process that is ENABLED and applies captured LCRs, nothing is
staged in the destination queue (it goes first, through the apply process), and the capture
takes the apply's reader lease at the destination (none while a Spark pipeline runs the apply
there: :mod:`sluice.streams.apply.readerlease`; the capture is then not combined and
stages in its own queue), held until it leaves the route.

**Exactly once**, in this order per capture batch: (1) the apply's target transactions
commit, each with its SLUICE_APPLY_DONE record; (2) the apply's store work (DBA_APPLY_PROGRESS,
V$STREAMS_APPLY_* counters, DBA_APPLY_ERROR rows, ABORTED) commits at the destination store;
(3) the capture commits its position at the source; (4) the batch's DONE records are forgotten
(deleted in a later target transaction).  A crash between two steps replays the batch from the
source's log: the DONE records skip what the target has, the error queue what it holds.

**Views**: V$STREAMS_CAPTURE.OPTIMIZATION and V$PROPAGATION_SENDER.OPTIMIZATION 1, the
schedule's statistics count the LCRs sent to the apply (TOTAL_BYTES nothing: no message is
encoded or sent), the destination's V$STREAMS_APPLY_READER.PROXY_SID names the
capture; DBA_APPLY_PROGRESS and DBA_APPLY_ERROR are the apply process's own.

**Falling back**: a catalog change at the source (propagation stopped, a subscriber added …)
is seen as for the staged route; one at the destination (STOP_APPLY, another subscriber …) is
seen before each batch.  The batch is then staged in the capture's queue and the capture
stages from then on.  An apply that aborts on an error (disable_on_error) commits the error
and ABORTED at once; the batch's transactions after it are staged in the capture's commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import DatabaseError
from . import spec as cspecs
from .context import CaptureContext

__all__ = ["RemoteCombined", "qualifies"]


@dataclass
class RemoteCombined:
    """The route of a capture that runs its destination's apply process on its LCRs."""

    route: Any                    # the .combined.Combined it replaces (propagation, schedule, rules)
    dest_conn: Any                # a session at the destination store (the apply's store work)
    apply: Any                    # the destination's ApplyProcess, on dest_conn
    lease: Any = None             # its ReaderLease at the destination, held while the route lasts
    _sent: list[Any] | None = None       # the last batch: originals of the messages applied
    _held: list[tuple] | None = None     # keys of its transactions not applied
    _done: list[str] | None = None       # its SLUICE_APPLY_DONE records (forgotten after the commit)
    _version: int | None = None          # the destination catalog's version last checked

    def target(self) -> tuple[str, str, str | None]:
        return self.route.target()

    def still_qualifies(self, ctx: CaptureContext, spec: cspecs.CaptureSpec) -> bool:
        return self.apply.state != "ABORTED" and self.route.still_qualifies(ctx, spec)

    def batch(self, lcrs: list[Any]) -> list[tuple[Any, Any]]:
        """(original, message) of the LCRs the propagation's rule sets let through."""
        return self.route.passed(lcrs)

    def send(self, batch: list[tuple[Any, Any]], elapsed: float) -> None:
        """Apply the batch at the destination and commit its store work there (steps 1 and
        2); the schedule's statistics go with the capture's commit (step 3)."""
        self._sent = [orig for orig, _ in batch]
        if not self._destination_qualifies():
            self._held, self._done = None, []       # none of it: stage the whole batch
            return
        messages = [m for _, m in batch]
        self._held, self._done = self.apply.apply_handed(messages)
        self.dest_conn.commit()
        # no message is encoded or sent: the LCRs count, their bytes do not (0)
        self.route.record_sent(len(messages), 0, elapsed)

    def held_back(self, lcrs: list[Any]) -> list[Any]:
        """The LCRs of ``lcrs`` the apply did not take (it aborted, or the destination no
        longer qualifies): the capture stages them."""
        if self._held is None:
            return list(lcrs)
        if not self._held:
            return []
        keys = set(self._held)
        return [x for x in (self._sent or ()) if (x.get_source_database_name(), x.get_transaction_id(),
                                                  x.get_commit_scn()) in keys]

    def acknowledge(self, batch: Any) -> None:
        """The capture's commit is done: the batch's SLUICE_APPLY_DONE records may go."""
        if self._done:
            self.apply.forget(self._done)
        self._done = None

    def _destination_qualifies(self) -> bool:
        """Seed 001's conditions at the destination, asked again after a catalog change
        there (STOP_APPLY, another subscriber, the apply dropped), and whether the apply's
        reader lease is still held (lost with its session, another engine may run it now)."""
        if self.lease is not None and not self.lease.alive():
            return False
        version = self.apply.ctx.catalog_version()
        if version == self._version:
            return self.apply.state != "ABORTED"
        self._version = version
        p = self.route.propagation
        return qualifies(self.dest_conn, p.destination_queue_owner, p.destination_queue_name, self.apply.d.name)

    def close(self) -> None:
        """Stop running the apply: the destination shows it IDLE, no longer the proxy
        (best effort: a destination that is down keeps showing it until a capture starts
        combined there again); its target and the session are let go."""
        try:
            if self.dest_conn.transaction_in_progress:
                self.dest_conn.rollback()
            self.apply.hand_back()
            self.route.proxy(self.dest_conn, False)
        except DatabaseError:
            pass
        finally:
            self.apply.release()
            if self.lease is not None:
                self.lease.close()
            try:
                self.dest_conn.close()
            except DatabaseError:
                pass


def qualifies(dest_conn: Any, owner: str, name: str, apply: str) -> bool:
    """Whether the apply process ``apply``, the single consumer of the destination queue,
    is ENABLED, applies captured LCRs and nothing staged waits in its queue."""
    from ..apply import spec as aspecs
    from .combinedlocal import backlog
    found = aspecs.find(CaptureContext(dest_conn), apply)
    if found is None or found.status != aspecs.ENABLED or not found.apply_captured:
        return False
    catalog = dest_conn.context.catalog
    q = catalog.queue_by_key((owner, name))
    subs = catalog.subscribers(q)
    if [(s.name, s.address) for s in subs] != [(apply, None)]:
        return False
    return not backlog(dest_conn, q)
