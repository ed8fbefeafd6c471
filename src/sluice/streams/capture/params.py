"""The checks DBMS_CAPTURE_ADM's procedures share, for capture processes and synchronous
captures alike: the Streams client's name, its queue, rule set and user, and the secure
queue user Oracle configures for it (seed 001 "Secure Queues and Oracle Streams
Clients")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ora
from ..clientspec import streams_name
from ..clientchecks import client_queue, client_rule_set, client_user
from ..securequeue import secure_queue_user as shared_secure_queue_user
from .context import CaptureContext

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["capture_name", "capture_queue", "rule_set", "capture_user", "secure_queue_user"]

_ANYDATA = "SYS.ANYDATA"


def capture_name(name: Any) -> str:
    """A capture's name (one namespace for capture processes and synchronous captures,
    without a schema).  :raises: ORA-26667."""
    return streams_name(name, "capture_name")


def capture_queue(ctx: CaptureContext, queue_name: Any) -> tuple[str, str]:
    """The capture's queue: a multi-consumer ANYDATA queue, not an exception queue.
    :raises: ORA-24010, ORA-24039, ORA-25215."""
    q = client_queue(ctx, queue_name)
    if q.table.payload_type != _ANYDATA:
        raise ora(25215, f"a capture enqueues LCRs into an ANYDATA queue; "
                         f"{q.owner}.{q.name} holds {q.table.payload_type}")
    return q.owner, q.name


def rule_set(ctx: CaptureContext, name: Any) -> tuple[str | None, str | None]:
    """``(owner, name)`` of an existing rule set, ``(None, None)`` for none.  :raises: ORA-24141."""
    return client_rule_set(ctx, name)


def capture_user(ctx: CaptureContext, name: Any) -> str:
    """The capture user (default: the caller).  :raises: ORA-01918."""
    return client_user(ctx, name, "capture user")


def secure_queue_user(conn: "Connection", ctx: CaptureContext, capture: str, user: str,
                      queue: tuple[str, str]) -> None:
    """Seed 001: an AQ agent named like the capture, mapped to the capture user, who may
    enqueue into the queue."""
    shared_secure_queue_user(conn, capture, user, queue, "ENQUEUE")
