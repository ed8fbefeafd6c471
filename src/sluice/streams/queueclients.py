"""The Streams clients that use a queue, and what that means for dropping it.

Seed 001 "Queues and Oracle Streams Clients": each capture process, synchronous capture,
apply process and messaging client is associated with one queue, and a propagation's job
propagates from its source queue ("Propagation Jobs").  So a queue goes only after the
clients that use it: DBMS_AQADM.DROP_QUEUE, DROP_QUEUE_TABLE and DROP_SHARDED_QUEUE refuse
it while one of them exists, with ORA-26668 ("STREAMS process … exists": "An attempt to
remove the component failed because it is associated with the STREAMS process.  Either
remove the process manually or specify the cascade option in dbms_streams_adm.remove_queue"
-- Oracle's error for exactly this), before anything changes; so DBA_PROPAGATION,
DBA_CAPTURE, DBA_SYNC_CAPTURE, DBA_APPLY and DBA_STREAMS_MESSAGE_CONSUMERS never name a
queue that does not exist.  DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade => TRUE) and DROP USER …
CASCADE drop the clients first (:func:`drop_clients`), each through its own DROP procedure.

A propagation whose DESTINATION is the queue does not use it in this sense: the destination
may be another database's queue, and when it is missing the propagation's schedule reports
ORA-24010 at run time (seed 003 "Propagation Error Handling"), as it does for a remote one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..aq.admin import QUEUE_DROP_CHECKS
from ..errors import ora
from .apply import spec as apply_specs
from .capture import spec as capture_specs
from .capture import sync
from .propagation import spec as propagation_specs
from .rulegen.clients import MESSAGE_CONSUMER, drop_messaging_client

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["QueueClient", "check_queue_drop", "clients_of", "drop_clients"]

PROPAGATION, SYNC_CAPTURE, CAPTURE, APPLY, MESSAGING_CLIENT = (
    "propagation", "synchronous capture", "capture process", "apply process", "messaging client")


@dataclass(frozen=True)
class QueueClient:
    kind: str                    # PROPAGATION, SYNC_CAPTURE, …
    name: str
    queue: tuple[str, str]       # (owner, name) of the queue it uses


def clients_of(store: Any, queues: set[tuple[str, str]] | list[tuple[str, str]]) -> list[QueueClient]:
    """The Streams clients using one of ``queues`` ((owner, name) pairs), in the order they
    are dropped: propagations (their jobs read the queue), synchronous captures (their
    triggers write into it), capture processes, apply processes, messaging clients."""
    wanted = set(queues)
    found: list[QueueClient] = []

    def add(kind: str, name: str, queue: tuple[Any, Any]) -> None:
        if queue in wanted:
            found.append(QueueClient(kind, name, queue))

    for p in propagation_specs.all_specs(store):
        add(PROPAGATION, p.name, (p.source_queue_owner, p.source_queue_name))
    for kind, catalog_kind, owner in ((SYNC_CAPTURE, sync.KIND, sync.OWNER),
                                      (CAPTURE, capture_specs.KIND, capture_specs.OWNER),
                                      (APPLY, apply_specs.KIND, apply_specs.OWNER),
                                      (MESSAGING_CLIENT, MESSAGE_CONSUMER, "SYS")):
        for o, name, spec in store.catalog_objects(catalog_kind):
            if o == owner:
                add(kind, name, (spec.get("queue_owner"), spec.get("queue_name")))
    return found


def check_queue_drop(session_ctx: Any, queues: list[tuple[str, str]]) -> None:
    """Before DBMS_AQADM drops ``queues``: no Streams client uses one.  :raises: ORA-26668."""
    for c in clients_of(session_ctx.store, queues):
        raise ora(26668, c.name, f" ({c.kind} using queue {c.queue[0]}.{c.queue[1]}: drop it "
                                 "first, or DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade => TRUE))")


def drop_clients(conn: "Connection", clients: list[QueueClient]) -> None:
    """Drop ``clients`` (from :func:`clients_of`), each through its own DROP procedure; a
    running capture or apply process is stopped first."""
    for c in clients:
        quoted = f'"{c.name}"'
        if c.kind == PROPAGATION:
            conn.propagation_adm.drop_propagation(quoted)
        elif c.kind == SYNC_CAPTURE:
            conn.capture_adm.drop_capture(quoted)
        elif c.kind == CAPTURE:
            conn.capture_adm.stop_capture(quoted)
            conn.capture_adm.drop_capture(quoted)
        elif c.kind == APPLY:
            conn.apply_adm.stop_apply(quoted)
            conn.apply_adm.drop_apply(quoted)
        else:
            drop_messaging_client(conn, c.name)


if check_queue_drop not in QUEUE_DROP_CHECKS:
    QUEUE_DROP_CHECKS.append(check_queue_drop)
