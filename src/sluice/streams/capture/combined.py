"""Combined capture and apply (seed 001 "Combined Capture and Apply Optimization").

When the capture's queue only feeds one apply process through one propagation, the capture
process acts as the propagation sender instead of staging its LCRs in its own queue for the
propagation job to dequeue, encode and send again.  :func:`route_for` picks the route:

* the apply process at the destination is ENABLED, applies captured LCRs and nothing waits in
  its queue, the link leads to a Sluice store, no Spark pipeline runs the apply (the capture
  takes its reader lease there, :mod:`sluice.streams.apply.readerlease`): the capture runs that
  apply process on its LCRs (:mod:`.combinedremote`, nothing staged at either site — seed
  001's "sends LCRs directly to the apply process"); while a Spark pipeline runs that apply
  (the capture cannot take its reader lease) the capture is not combined at all (None:
  OPTIMIZATION 0, it stages in its own queue, the propagation job carries the LCRs to the
  queue the pipeline reads);
* otherwise (the apply is disabled or aborted, applies user messages, or the destination is
  this database): :class:`Combined`, the LCRs sent straight into the
  destination queue (the propagation receiver enqueues them there, the apply dequeues them
  when it runs) — the *staged* route;
* the capture and the apply on one queue: :mod:`.combinedlocal`.

**When** (checked when the capture starts, :func:`route_for`; seed 001's requirements for
a capture and apply at different databases, and at one database with a local propagation):

* the capture's queue has a single publisher, the capture (no other capture uses it);
* its single consumer is one propagation (one subscriber, the propagation's address), with
  no other propagation from the queue — no directed network, no other consumer;
* the propagation is ENABLED and scheduled (a schedule not disabled);
* its destination queue has a single consumer, an apply process (asked of the destination
  store through the propagation's database link; a link to an HTTP servlet does not
  qualify) and no staged messages are waiting in the capture's queue (they go first).

Synchronous capture never qualifies (seed 001).  V$STREAMS_CAPTURE.OPTIMIZATION and
V$PROPAGATION_SENDER.OPTIMIZATION are then 1 (``SLUICE_CAPTURE_COMBINED``), 0 otherwise, and
the destination's V$STREAMS_APPLY_READER.PROXY_SID names the capture (``CAPTURE@SITE``,
``SLUICE_APPLY_PROXY`` there).

**Sending**, the staged route (:meth:`Combined.send`): the propagation's rule sets decide
each LCR (with row migration, declarative and custom rule-based transformations, as the
propagation job does), the LCRs of one capture batch go as one batch, one queue transaction
at the destination.
Each message id is derived from the capture, the LCR's commit SCN and position, so a batch
sent again after a crash (the capture's position was not committed yet) is recognised by the
receiver's de-duplication: exactly once, as staged propagation is.  The capture commits its
position after the destination has committed, then lets the batch go (the receiver prunes
its de-duplication rows).  The propagation's schedule records the messages
(V$PROPAGATION_SENDER, DBA_QUEUE_SCHEDULES' totals).

**Falling back**: when the configuration no longer qualifies (a catalog change the capture
sees: a propagation stopped or dropped, a subscriber added, the schedule disabled …) the
capture stages again, from its next batch; a configuration that starts to qualify is used
only after the capture is restarted (STOP_CAPTURE / START_CAPTURE), as seed 001 says.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from ...errors import DatabaseError
from ..propagation import schedules as sched
from ..propagation import spec as pspecs
from ..propagation.job import DISCARD, JobEnv, ruled
from ..propagation.links import resolve_link
from ..propagation.sites import StoreSite, ThisSite
from ..propagation.wire import Batch, Propagated
from . import combinedlocal, combinedremote
from . import spec as cspecs
from .combinedlocal import LocalCombined
from .combinedremote import RemoteCombined
from .context import CaptureContext

__all__ = ["Combined", "route_for", "record"]

_RECORD = """INSERT INTO SLUICE_CAPTURE_COMBINED (OWNER, NAME, OPTIMIZATION, QSCHEMA, QNAME, DESTINATION)
  VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (OWNER, NAME) DO UPDATE SET OPTIMIZATION = excluded.OPTIMIZATION,
    QSCHEMA = excluded.QSCHEMA, QNAME = excluded.QNAME, DESTINATION = excluded.DESTINATION"""


@dataclass
class Combined:
    """The route of a capture that sends straight to its apply's queue."""

    conn: Any
    capture: str
    propagation: pspecs.PropagationSpec
    schedule: sched.Schedule
    destination: Any          # a propagation Destination (StoreSite) or ThisSite
    site: str

    def target(self) -> tuple[str, str, str | None]:
        """(queue owner, queue name, destination) as SLUICE_CAPTURE_COMBINED records them."""
        s = self.schedule
        return s.qschema, s.qname, s.destination

    def still_qualifies(self, ctx: CaptureContext, spec: cspecs.CaptureSpec) -> bool:
        found = route_for(self.conn, ctx, spec, connect=None, check_destination=False)
        return isinstance(found, Combined) and found.propagation.name == self.propagation.name

    def held_back(self, lcrs: list[Any]) -> list[Any]:
        """What the route did not take of ``lcrs`` (a batch is delivered whole: nothing)."""
        return []

    def acknowledge(self, batch: Batch) -> None:
        """The capture's commit is done: the receiver may prune the batch's de-duplication rows."""
        self.destination.acknowledge(batch)

    def passed(self, lcrs: list[Any]) -> list[tuple[Any, Any]]:
        """(LCR, message) for each of ``lcrs`` the propagation's rule sets let through, the
        message as they leave it (row migration, transformations)."""
        p = self.propagation
        if p.rule_set_name is None and p.negative_rule_set_name is None:
            return [(lcr, lcr) for lcr in lcrs]
        env = JobEnv(self.conn, time.time, self.site, lambda s: self.destination)
        out = []
        for lcr in lcrs:
            message = ruled(env, p, lcr)
            if message is not DISCARD:
                out.append((lcr, message))
        return out

    def batch(self, lcrs: list[Any]) -> Batch:
        """The batch the propagation would send for ``lcrs`` (its rule sets applied)."""
        ctx = self.conn.context
        q = ctx.catalog.queue_by_key((self.propagation.source_queue_owner, self.propagation.source_queue_name))
        codec = ctx.catalog.codec(q.table)
        p = self.propagation
        env = JobEnv(self.conn, time.time, self.site, lambda s: self.destination)
        rules = p.rule_set_name is not None or p.negative_rule_set_name is not None
        dest_queue = f"{p.destination_queue_owner}.{p.destination_queue_name}"
        batch = Batch(self.site, q.qualified)
        now = time.time()
        group = None
        # what every message of the batch shares, and the per-message work inlined: this
        # loop runs once per captured change
        payload_type, sender, original_queue = q.table.payload_type, (self.capture, None, 0), (q.owner, q.name)
        capture, encode, blake2b, append = self.capture, codec.encode, hashlib.blake2b, batch.messages.append
        for i, lcr in enumerate(lcrs):
            commit_scn = lcr.get_commit_scn()
            ident = blake2b(f"{capture}|{commit_scn}|{lcr.get_scn()}|{i}".encode(), digest_size=16).digest()
            group = group or f"CCA:{capture}:{commit_scn}"
            message = lcr
            if rules:
                message = ruled(env, p, message)
                if message is DISCARD:
                    continue
            # Propagated's fields in order: dest_queue, source_msgid, original_msgid,
            # payload_type, user_data, priority, delay, expiration, correlation, sender,
            # recipients, group, original_queue, enq_time
            append(Propagated(dest_queue, ident, ident, payload_type, encode(message), 1, None, None, None,
                              sender, None, group, original_queue, now))
        return batch

    def send(self, batch: Batch, elapsed: float) -> None:
        """Deliver ``batch`` (committed at a remote destination; in the capture's transaction
        at a local one) and record it in the schedule's statistics (commit work)."""
        if batch.messages:
            self.destination.deliver(batch)
        self.record_sent(len(batch.messages), sum(m.size for m in batch.messages), elapsed)

    def record_sent(self, number: int, nbytes: int, elapsed: float) -> None:
        """The schedule's statistics (V$PROPAGATION_SENDER, DBA_QUEUE_SCHEDULES' totals): in
        the capture's commit."""
        s = self.schedule
        s.record_success(time.time(), number, nbytes, elapsed)
        self.conn.context.session.add_commit_work(sched.runtime_work(s))

    def proxy(self, dest_conn: Any, on: bool) -> None:
        """Show (``on``) or stop showing the capture as the PROXY_SID of the destination
        queue's apply reader (V$STREAMS_APPLY_READER at the destination)."""
        p = self.propagation
        combinedlocal.show_proxy(dest_conn, (p.destination_queue_owner, p.destination_queue_name),
                                 f"{self.capture}@{self.site}" if on else None)

    def close(self) -> None:
        """Stop: the destination no longer shows the proxy (best effort: a destination that
        is down keeps showing it until a capture starts combined there again)."""
        if isinstance(self.destination, ThisSite):
            self.proxy(self.conn, False)
            return
        self.destination.close()
        link = self.destination.link
        try:
            dest_conn = type(self.conn)(link.endpoint, user=link.username, password=link.password)
        except DatabaseError:
            return
        try:
            self.proxy(dest_conn, False)
        except DatabaseError:
            pass
        finally:
            dest_conn.close()


def record(ctx: CaptureContext, name: str, combined: "Combined | LocalCombined | RemoteCombined | None") -> None:
    """V$STREAMS_CAPTURE.OPTIMIZATION (commit work)."""
    if combined is None:
        row = (cspecs.OWNER, name, 0, None, None, None)
    else:
        row = (cspecs.OWNER, name, 1, *combined.target())
    ctx.add_commit_work(lambda c: c.execute(_RECORD, row))


def route_for(conn: Any, ctx: CaptureContext, spec: cspecs.CaptureSpec, connect: Any = None,
              check_destination: bool = True) -> "Combined | LocalCombined | RemoteCombined | None":
    """The combined route of the capture ``spec`` (None: it stages, see the module's
    docstring): to the apply of its own queue (:mod:`.combinedlocal`), to the apply at its
    propagation's destination (:mod:`.combinedremote`) or into that apply's queue."""
    if check_destination:
        local = combinedlocal.route_for(conn, ctx, spec)
        if local is not None:
            return local
    catalog = conn.context.catalog
    q = catalog.queue_by_key((spec.queue_owner, spec.queue_name))
    if any(c.name != spec.name and (c.queue_owner, c.queue_name) == (spec.queue_owner, spec.queue_name)
           for c in cspecs.all_specs(ctx)):
        return None                                   # another publisher
    subs = catalog.subscribers(q)
    props = [p for p in pspecs.all_specs(ctx.store)
             if (p.source_queue_owner, p.source_queue_name) == (q.owner, q.name)]
    if len(subs) != 1 or len(props) != 1:
        return None
    p, sub = props[0], subs[0]
    if sub.name is not None or sub.address != p.address or p.status != pspecs.ENABLED:
        return None                                   # the single consumer is not the propagation
    schedule = next((s for s in sched.load_all(conn.context.session)
                     if (s.qschema, s.qname) == (q.owner, q.name) and sched.serves(s, p) and not s.disabled),
                    None)
    if schedule is None:
        return None
    if not check_destination:
        return Combined(conn, spec.name, p, schedule, None, "")
    if combinedlocal.backlog(conn, q):
        return None
    site = conn.context.store.global_name()
    if p.destination_dblink is None:
        destination: Any = ThisSite(conn.context, q.owner)
        dest_conn = conn
    else:
        link = resolve_link(conn.context.store, q.owner, p.destination_dblink)
        if link.is_http:
            return None
        opener = connect or (lambda dsn, user, password: type(conn)(dsn, user=user, password=password))
        destination = StoreSite(link, opener)
        try:
            dest_conn = opener(link.endpoint, link.username, link.password)
        except DatabaseError:
            return None
    keep = False
    try:
        apply = _single_apply(dest_conn, p.destination_queue_owner, p.destination_queue_name)
        if apply is None:
            return None
        found: Any = Combined(conn, spec.name, p, schedule, destination, site)
        lease = None
        if dest_conn is not conn and combinedremote.qualifies(
                dest_conn, p.destination_queue_owner, p.destination_queue_name, apply):
            # the apply takes the LCRs from the capture: nothing staged at the destination --
            # unless a Spark pipeline runs it there (it holds the apply's reader lease): then
            # the capture is not combined (OPTIMIZATION 0, no PROXY_SID), it stages in its own
            # queue and the propagation carries the LCRs to the queue Spark reads
            from ..apply.readerlease import ReaderLease
            lease = ReaderLease.take(dest_conn.context.store, apply)
            if lease is None:
                return None
        try:
            found.proxy(dest_conn, True)
        except BaseException:
            if lease is not None:
                lease.close()
            raise
        if lease is not None:
            from ..apply.process import ApplyProcess
            try:
                process = ApplyProcess.from_catalog(dest_conn, apply)
            except DatabaseError:        # its target is out of the capture's reach: staged route
                lease.close()
                return found
            destination.close()
            found.destination = None
            found = RemoteCombined(found, dest_conn, process, lease)
            dest_conn.commit()
            keep = True
        return found
    finally:
        if dest_conn is not conn and not keep:
            dest_conn.close()


def _single_apply(conn: Any, owner: str, name: str) -> str | None:
    """The apply process that is the queue's single consumer there, or None."""
    from ..apply.definition import find_definition
    try:
        q = conn.context.catalog.queue_by_key((owner, name))
    except DatabaseError:
        return None
    subs = conn.context.catalog.subscribers(q)
    if len(subs) != 1 or subs[0].name is None or subs[0].address is not None:
        return None
    found = find_definition(CaptureContext(conn), subs[0].name)
    return found.name if found is not None and (found.queue_owner, found.queue_name) == (owner, name) else None

