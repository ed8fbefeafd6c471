"""``DROP USER … CASCADE``: the user's queue tables and the Streams clients that use them.

DROP USER CASCADE drops "all objects in the user's schema" (SQL Reference, DROP USER) --
its queue tables among them, as DBMS_AQADM.DROP_QUEUE_TABLE(force => TRUE) drops them:
queues, messages, subscribers, buffered messages, propagation schedules.  A queue a Streams
client uses is a dependency of that client (seed 001 "Queues and Oracle Streams Clients":
each client is associated with one queue; a propagation's job reads its source queue), and
DBMS_AQADM refuses to drop it under a propagation or a synchronous capture (ORA-26667).
CASCADE drops the dependents instead, as DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade => TRUE)
does: every propagation propagating from one of the queues, every capture process,
synchronous capture, apply process and messaging client using one, each through its own
DROP procedure (a running capture or apply process is stopped first), so DBA_PROPAGATION,
DBA_CAPTURE, DBA_SYNC_CAPTURE, DBA_APPLY, DBA_STREAMS_MESSAGE_CONSUMERS and
DBA_QUEUE_SCHEDULES list nothing of a dropped queue.  Rule sets stay (they are objects of
their own owners, and another client may evaluate them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .apply import spec as apply_specs
from .capture import spec as capture_specs
from .capture import sync
from .capture.context import CaptureContext
from .propagation import spec as propagation_specs
from .rulegen.clients import MESSAGE_CONSUMER, drop_messaging_client

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["drop_schema_queues"]


def drop_schema_queues(conn: "Connection", owner: str) -> None:
    """Drop ``owner``'s queue tables with the Streams clients that use their queues (the
    caller, DROP USER … CASCADE, checked the privilege and the user)."""
    ctx = CaptureContext(conn)
    catalog = ctx.context.catalog
    tables = [qt for qt in ctx.store.queue_tables() if qt.owner == owner]
    queues = {qt.qt_id: catalog.queues_of(qt) for qt in tables}
    _drop_clients(conn, ctx, {(q.owner, q.name) for qs in queues.values() for q in qs})
    for qt in tables:
        if qt.sharded:     # dropped through its one queue
            conn.aqadm.drop_sharded_queue(_quoted(owner, queues[qt.qt_id][0].name), force=True)
        else:
            conn.aqadm.drop_queue_table(_quoted(owner, qt.name), force=True)


def _quoted(owner: str, name: str) -> str:
    return f'"{owner}"."{name}"'


def _drop_clients(conn: "Connection", ctx: CaptureContext, queues: set[tuple[str, str]]) -> None:
    for p in propagation_specs.all_specs(ctx.store):
        if (p.source_queue_owner, p.source_queue_name) in queues:
            conn.propagation_adm.drop_propagation(f'"{p.name}"')
    for _, name, spec in ctx.objects(sync.KIND):
        if (spec.get("queue_owner"), spec.get("queue_name")) in queues:
            conn.capture_adm.drop_capture(f'"{name}"')
    for c in capture_specs.all_specs(ctx):
        if (c.queue_owner, c.queue_name) in queues:
            conn.capture_adm.stop_capture(f'"{c.name}"')
            conn.capture_adm.drop_capture(f'"{c.name}"')
    for a in apply_specs.all_specs(ctx):
        if (a.queue_owner, a.queue_name) in queues:
            conn.apply_adm.stop_apply(f'"{a.name}"')
            conn.apply_adm.drop_apply(f'"{a.name}"')
    for _, name, spec in ctx.objects(MESSAGE_CONSUMER):
        if (spec.get("queue_owner"), spec.get("queue_name")) in queues:
            drop_messaging_client(conn, name)
