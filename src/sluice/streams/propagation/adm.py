"""``DBMS_PROPAGATION_ADM`` and the propagation procedures of ``DBMS_AQADM``.

``conn.propagation_adm.create_propagation(propagation_name=…, source_queue=…,
destination_queue=…, destination_dblink=…)`` is ``DBMS_PROPAGATION_ADM.CREATE_PROPAGATION
(…)``.  The procedures change catalog state only; a runner (:mod:`.runner`, hosted by
:mod:`sluice.streams.host`) obeys.  Creating a propagation (seed 001 "Propagation Jobs")
makes its source queue's subscriber for the destination and, when none exists, its
schedule: its own for a queue-to-queue propagation, else the one shared by the
queue-to-dblink propagations of the source queue over that link — with Oracle's default
for a Streams propagation: from now, no end, latency 3 s.  Seed 001 "Secure Queues": no
secure-queue set-up is needed for a propagation.  The subscriber takes buffered and
persistent messages (DBA_QUEUE_SUBSCRIBERS DELIVERY_MODE PERSISTENT_OR_BUFFERED): seed 001,
"a single propagation can propagate messages in both … portion[s] of a queue".

:func:`propagation_for_rules` is what DBMS_STREAMS_ADM.ADD_*_PROPAGATION_RULES call.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ... import constants as C
from ...aq.admin import AqAdm
from ...aq.sharded import check_propagation
from ...errors import InterfaceError, not_supported, ora
from ...model import Agent
from ...names import canonical, split_qualified
from ..clientspec import streams_name
from . import schedules as sched
from . import spec as specs
from .links import link_name, resolve_link

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["DbmsAqadm", "PropagationAdm", "propagation_for_rules"]


def _propagation_name(name: Any) -> str:
    return streams_name(name, "propagation_name")


def _flag(name: str, value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise InterfaceError(f"{name} must be TRUE or FALSE")


def split_destination(destination_queue: str, dblink: str | None) -> tuple[str, str | None]:
    """``'strmadmin.q@dbs2.net'`` -> ``('strmadmin.q', 'DBS2.NET')`` (a link given both
    ways must agree).  :raises: ORA-06502 for a value that is not text."""
    if not isinstance(destination_queue, str):
        raise ora(6502, f"destination queue name must be a string, not {type(destination_queue).__name__}")
    queue, at, link = destination_queue.partition("@")
    if at:
        if dblink is not None and link_name(dblink) != link_name(link):
            raise ora(26667, f"destination_queue {destination_queue!r} and destination_dblink {dblink!r}")
        return queue, link_name(link)
    return queue, link_name(dblink) if dblink else None


class PropagationAdm:
    """The DBMS_PROPAGATION_ADM package for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn
        self._session_ctx = conn.context

    # -- checks --------------------------------------------------------------------
    def _rule_set(self, name: Any) -> tuple[str | None, str | None]:
        if name is None:
            return None, None
        owner, rs = split_qualified(name, self._session_ctx.username, "rule set name")
        if not any(o == owner and n == rs for o, n, _ in self._session_ctx.store.catalog_objects("RULE_SET")):
            raise ora(24141, owner, rs)
        return owner, rs

    def _load(self, name: Any) -> specs.PropagationSpec:
        return specs.load(self._session_ctx.store, _propagation_name(name))

    def _schedule_of(self, spec: specs.PropagationSpec) -> tuple[str, str, str]:
        dq = f"{spec.destination_queue_owner}.{spec.destination_queue_name}"
        key, _, _ = sched.schedule_key(spec.source_queue_owner, spec.source_queue_name,
                                       spec.destination_dblink, dq if spec.queue_to_queue else None,
                                       self._session_ctx.username)
        return key

    def _set_schedule_enabled(self, spec: specs.PropagationSpec, enabled: bool) -> None:
        """START/STOP act on the propagation's schedule (Oracle's STOP_PROPAGATION disables
        its propagation job), so on every propagation that schedule serves: a queue-to-dblink
        propagation shares it with the others from its source queue over its link — "any
        change to the propagation schedule affects all" of them (seed 001) — and DBA_PROPAGATION
        shows them all with the state their job is in."""
        ctx = self._session_ctx
        s = sched.find(ctx.session, self._schedule_of(spec))
        if s is None:
            return
        if enabled and s.disabled:
            s.enable(time.time())
            columns: tuple[str, ...] = sched.ENABLE_RESETS
        elif not enabled and not s.disabled:
            s.disabled, columns = 1, ("disabled",)
        else:
            columns = ()
        if columns:
            ctx.session.add_commit_work(sched.update_work(s, columns))
            ctx.session.commit()
        sched.propagations_follow(ctx.store, s, specs.ENABLED if enabled else specs.DISABLED)

    # -- the procedures ---------------------------------------------------------------
    def create_propagation(self, propagation_name: str, source_queue: str, destination_queue: str,
                           destination_dblink: str | None = None, rule_set_name: str | None = None,
                           negative_rule_set_name: str | None = None, queue_to_queue: bool | None = None,
                           original_propagation_name: str | None = None,
                           auto_merge_threshold: int | None = None) -> None:
        """Create a propagation (ENABLED) from ``source_queue`` to ``destination_queue``
        at ``destination_dblink`` (None: this site).

        A single-consumer sharded queue is a source too (seed 003: "For sharded queues, you
        can propagate between single-consumer and multi-consumer sharded queues"), queue to
        queue, as DBMS_AQADM.SCHEDULE_PROPAGATION takes it: the propagation is the queue's
        consumer (no subscriber is added — the queue can have none) and its own schedule
        sends every message to the destination queue.
        :raises: ORA-23600 (exists), ORA-24010 (no source queue, or no local destination
        queue), ORA-24039 (a classic single-consumer source, or a sharded one with
        ``queue_to_queue`` FALSE: a queue-to-dblink propagation routes by its source
        queue's subscribers), ORA-24141 (no rule set), ORA-24034 (a propagation between
        these queues exists)."""
        ctx = self._session_ctx
        ctx.authz.check_aq_administrator()
        name = _propagation_name(propagation_name)
        if specs.find(ctx.store, name) is not None:
            raise ora(23600, name)
        src = ctx.catalog.queue(source_queue)
        q2q = _flag("queue_to_queue", queue_to_queue)
        # the propagation is the source's consumer instead of one of its subscribers
        consumer = not src.table.multiple_consumers
        if src.is_exception_queue or (consumer and not (src.table.sharded and q2q)):
            raise ora(24039, src.qualified)
        dq_text, link = split_destination(destination_queue, destination_dblink)
        d_owner, d_name = split_qualified(dq_text, ctx.username, "destination queue name")
        if link is None:
            check_propagation(src, ctx.catalog.queue_by_key((d_owner, d_name)))   # ORA-24010 when missing
            if (d_owner, d_name) == (src.owner, src.name):
                raise ora(26667, "destination_queue: a queue cannot propagate to itself")
        positive = self._rule_set(rule_set_name)
        negative = self._rule_set(negative_rule_set_name)
        spec = specs.PropagationSpec(
            name=name, source_queue_owner=src.owner, source_queue_name=src.name,
            destination_queue_owner=d_owner, destination_queue_name=d_name, destination_dblink=link,
            queue_to_queue=q2q, rule_set_owner=positive[0], rule_set_name=positive[1],
            negative_rule_set_owner=negative[0], negative_rule_set_name=negative[1],
            original_propagation_name=(canonical(original_propagation_name, "propagation name")
                                       if original_propagation_name else None),
            source_database=ctx.store.global_name(), created_by=ctx.username, created=time.time())
        aqadm = DbmsAqadm(self._conn)
        if not consumer:
            # seed 001: one propagation moves the buffered and the persistent messages alike
            aqadm.add_subscriber(queue_name=src.qualified, subscriber=Agent(None, spec.address),
                                 queue_to_queue=q2q, delivery_mode=C.MSG_PERSISTENT_OR_BUFFERED)
        try:
            specs.save(ctx.store, spec, replace=False)
            key = self._schedule_of(spec)
            if sched.find(ctx.session, key) is None:
                aqadm.schedule_propagation(queue_name=src.qualified, destination=link,
                                           latency=sched.STREAMS_LATENCY,
                                           destination_queue=f"{d_owner}.{d_name}" if q2q else None)
            else:
                self._set_schedule_enabled(spec, True)
        except BaseException:
            specs.drop(ctx.store, name)
            if not consumer:
                aqadm.remove_subscriber(queue_name=src.qualified, subscriber=Agent(None, spec.address))
            raise

    def start_propagation(self, propagation_name: str) -> None:
        ctx = self._session_ctx
        ctx.authz.check_aq_administrator()
        spec = self._load(propagation_name)
        ctx.ddl_commit()
        if spec.status != specs.ENABLED:
            specs.save(ctx.store, spec.with_status(specs.ENABLED))
        self._set_schedule_enabled(spec, True)

    def stop_propagation(self, propagation_name: str, force: bool = False) -> None:
        """Disable the propagation and its schedule (a queue-to-dblink one's is shared:
        the others on it stop too).  A batch in flight finishes: ``force`` changes nothing
        here, the runner reads the state before each batch."""
        ctx = self._session_ctx
        ctx.authz.check_aq_administrator()
        spec = self._load(propagation_name)
        ctx.ddl_commit()
        if spec.status != specs.DISABLED:
            specs.save(ctx.store, spec.with_status(specs.DISABLED))
        self._set_schedule_enabled(spec.with_status(specs.DISABLED), False)

    def alter_propagation(self, propagation_name: str, rule_set_name: str | None = None,
                          remove_rule_set: bool = False, negative_rule_set_name: str | None = None,
                          remove_negative_rule_set: bool = False) -> None:
        """Set or remove the positive and negative rule sets."""
        ctx = self._session_ctx
        ctx.authz.check_aq_administrator()
        spec = self._load(propagation_name)
        if rule_set_name is not None and _flag("remove_rule_set", remove_rule_set):
            raise ora(26667, "rule_set_name together with remove_rule_set")
        if negative_rule_set_name is not None and _flag("remove_negative_rule_set", remove_negative_rule_set):
            raise ora(26667, "negative_rule_set_name together with remove_negative_rule_set")
        positive = self._rule_set(rule_set_name)
        negative = self._rule_set(negative_rule_set_name)
        if rule_set_name is not None:
            spec.rule_set_owner, spec.rule_set_name = positive
        elif _flag("remove_rule_set", remove_rule_set):
            spec.rule_set_owner = spec.rule_set_name = None
        if negative_rule_set_name is not None:
            spec.negative_rule_set_owner, spec.negative_rule_set_name = negative
        elif _flag("remove_negative_rule_set", remove_negative_rule_set):
            spec.negative_rule_set_owner = spec.negative_rule_set_name = None
        ctx.ddl_commit()
        specs.save(ctx.store, spec)

    def drop_propagation(self, propagation_name: str, drop_unused_rule_sets: bool = False) -> None:
        """Drop the propagation, its subscriber (with the records still waiting for it)
        and its schedule when no other propagation shares it; with
        ``drop_unused_rule_sets`` its rule sets when nothing else uses them."""
        ctx = self._session_ctx
        ctx.authz.check_aq_administrator()
        spec = self._load(propagation_name)
        ctx.ddl_commit()
        key = self._schedule_of(spec)
        specs.drop(ctx.store, spec.name)
        aqadm = DbmsAqadm(self._conn)
        src = ctx.catalog.find_queue(spec.source_queue_owner, spec.source_queue_name)
        if src is not None and any(s.address == spec.address and s.name is None
                                   for s in ctx.catalog.subscribers(src)):
            aqadm.remove_subscriber(queue_name=src.qualified, subscriber=Agent(None, spec.address))
        others = specs.all_specs(ctx.store)
        if not any(self._schedule_of(p) == key for p in others) and sched.find(ctx.session, key) is not None:
            ctx.session.add_commit_work(sched.delete_work(key))
            ctx.session.commit()
        if _flag("drop_unused_rule_sets", drop_unused_rule_sets):
            used = {(p.rule_set_owner, p.rule_set_name) for p in others} | \
                   {(p.negative_rule_set_owner, p.negative_rule_set_name) for p in others}
            for owner, rs in ((spec.rule_set_owner, spec.rule_set_name),
                              (spec.negative_rule_set_owner, spec.negative_rule_set_name)):
                if rs is not None and (owner, rs) not in used:
                    self._conn.rule_adm.drop_rule_set(rule_set_name=f'"{owner}"."{rs}"', delete_rules=True)


class DbmsAqadm(AqAdm, sched.ScheduleAdm):
    """DBMS_AQADM with its propagation schedule procedures (``conn.aqadm``)."""

    def __init__(self, conn: "Connection") -> None:
        super().__init__(conn)
        self._conn = conn

    # DROP_QUEUE: "All the queue data is deleted as part of the drop operation" -- its
    # propagation schedules too (DBA_QUEUE_SCHEDULES shows only existing queues' schedules)
    def drop_queue(self, queue_name: str, auto_commit: bool = True) -> None:
        q = self._session_ctx.catalog.queue(queue_name)
        super().drop_queue(queue_name, auto_commit)
        self._unschedule_queues([(q.owner, q.name)])

    def drop_queue_table(self, queue_table: str, force: bool = False, auto_commit: bool = True) -> None:
        catalog = self._session_ctx.catalog
        queues = [(q.owner, q.name) for q in catalog.queues_of(catalog.queue_table(queue_table))]
        super().drop_queue_table(queue_table, force, auto_commit)
        self._unschedule_queues(queues)

    def drop_sharded_queue(self, queue_name: str, force: bool = False) -> None:
        """(DROP_TRANSACTIONAL_EVENT_QUEUE too.)  Its schedules go with it, as DROP_QUEUE's."""
        catalog = self._session_ctx.catalog
        queues = [(q.owner, q.name) for q in catalog.queues_of(catalog.queue(queue_name).table)]
        super().drop_sharded_queue(queue_name, force)
        self._unschedule_queues(queues)

    def verify_queue_types(self, src_queue_name: str, dest_queue_name: str,
                           destination: str | None = None, transformation: str | None = None) -> int:
        """1 if messages of the source queue can be enqueued into the destination queue
        (at the site of the link ``destination``: a session there as the link's user),
        else 0.  :raises: ORA-02019 (no such link), ORA-24010 (no such queue there)."""
        if destination is None:
            return super().verify_queue_types(src_queue_name, dest_queue_name, None, transformation)
        src = self._session_ctx.catalog.queue(src_queue_name)
        wanted = (self._session_ctx.catalog.transformation(transformation)["to_type"]
                  if transformation is not None else src.table.payload_type)
        link = resolve_link(self._session_ctx.store, self._session_ctx.username, destination)
        if link.is_http:
            raise not_supported("VERIFY_QUEUE_TYPES over an HTTP link (the servlet checks each batch)")
        with type(self._conn)(link.endpoint, user=link.username, password=link.password) as remote:
            owner, name = split_qualified(dest_queue_name, remote.username, "queue name")
            dst = remote.context.catalog.queue_by_key((owner, name))
            return int(dst.table.payload_type == wanted)


def propagation_for_rules(conn: "Connection", propagation_name: str, source_queue_name: str,
                          destination_queue_name: str, source_database: str | None = None,
                          queue_to_queue: bool | None = None) -> specs.PropagationSpec:
    """For DBMS_STREAMS_ADM.ADD_*_PROPAGATION_RULES: the propagation ``propagation_name``,
    created (ENABLED, without rule sets) from ``source_queue_name`` to
    ``destination_queue_name`` (``'owner.q@dblink'``) when it does not exist, as Oracle
    does.  The caller then creates the rule set and attaches it with
    ``conn.propagation_adm.alter_propagation(propagation_name, rule_set_name=…)``.
    ``source_database`` is the site whose changes the rules are about; it is not where
    the propagation runs.  :raises: ORA-26667 when it exists between other queues."""
    ctx = conn.context
    name = _propagation_name(propagation_name)
    found = specs.find(ctx.store, name)
    if found is None:
        PropagationAdm(conn).create_propagation(
            propagation_name=f'"{name}"', source_queue=source_queue_name,
            destination_queue=destination_queue_name,
            queue_to_queue=True if queue_to_queue is None else queue_to_queue)
        return specs.load(ctx.store, name)
    s_owner, s_name = split_qualified(source_queue_name, ctx.username, "queue name")
    dq, link = split_destination(destination_queue_name, None)
    d_owner, d_name = split_qualified(dq, ctx.username, "destination queue name")
    if (s_owner, s_name, d_owner, d_name, link) != (
            found.source_queue_owner, found.source_queue_name, found.destination_queue_owner,
            found.destination_queue_name, found.destination_dblink):
        raise ora(26667, f"propagation {name} propagates from {found.source_queue} to {found.address}")
    return found
