"""The checks DBMS_CAPTURE_ADM's procedures share, for capture processes and synchronous
captures alike: the Streams client's name, its queue, rule set and user, and the secure
queue user Oracle configures for it (seed 001 "Secure Queues and Oracle Streams
Clients")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import ora
from ...names import canonical, split_qualified
from .context import CaptureContext

if TYPE_CHECKING:
    from ...connection import Connection

__all__ = ["capture_name", "capture_queue", "rule_set", "capture_user", "secure_queue_user"]

_ANYDATA = "SYS.ANYDATA"


def capture_name(name: Any) -> str:
    """A capture's name (one namespace for capture processes and synchronous captures,
    without a schema).  :raises: ORA-26667."""
    if not isinstance(name, str) or not name.strip():
        raise ora(26667, f"capture_name {name!r}")
    stripped = name.strip()
    if "." in (stripped if not stripped.startswith('"') else ""):
        raise ora(26667, f"capture_name {name!r}: a Streams process name has no schema")
    return canonical(stripped, "capture name")


def capture_queue(ctx: CaptureContext, queue_name: Any) -> tuple[str, str]:
    """The capture's queue: a multi-consumer ANYDATA queue, not an exception queue.
    :raises: ORA-24010, ORA-25215, ORA-24039, ORA-25207."""
    owner, name = split_qualified(queue_name, ctx.username, "queue name")
    q = ctx.find_queue(owner, name)
    if q is None:
        raise ora(24010, f"{owner}.{name}")
    if q.table.payload_type != _ANYDATA:
        raise ora(25215, f"a capture enqueues LCRs into an ANYDATA queue; "
                         f"{owner}.{name} holds {q.table.payload_type}")
    if not q.table.multiple_consumers:
        raise ora(24039, f"{owner}.{name}")
    if q.is_exception_queue:
        raise ora(25207, f"{owner}.{name}")
    return owner, name


def rule_set(ctx: CaptureContext, name: Any) -> tuple[str | None, str | None]:
    """``(owner, name)`` of an existing rule set, ``(None, None)`` for none.  :raises: ORA-24141."""
    if name is None:
        return None, None
    owner, rs = split_qualified(name, ctx.username, "rule set name")
    if not ctx.rule_set_exists(owner, rs):
        raise ora(24141, owner, rs)
    return owner, rs


def capture_user(ctx: CaptureContext, name: Any) -> str:
    """The capture user (default: the caller).  :raises: ORA-01918."""
    user = canonical(name, "capture user") if name is not None else ctx.username
    if not ctx.user_exists(user):
        raise ora(1918, user)
    return user


def secure_queue_user(conn: "Connection", ctx: CaptureContext, capture: str, user: str,
                      queue: tuple[str, str]) -> None:
    """Seed 001: an AQ agent named like the capture, mapped to the capture user, who may
    enqueue into the queue."""
    aqadm = conn.aqadm
    users = ctx.agent_users(capture)
    if users is None:
        aqadm.create_aq_agent(agent_name=f'"{capture}"')
        users = []
    if user not in users:
        aqadm.enable_db_access(agent_name=f'"{capture}"', db_username=f'"{user}"')
    if user != queue[0]:
        aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name=f'"{queue[0]}"."{queue[1]}"',
                                    grantee=f'"{user}"')
