"""Checks every Streams client's administration procedures make of their arguments (a
capture process's, an apply process's): its queue, its rule sets, its user."""

from __future__ import annotations

from typing import Any

from ..errors import ora
from ..names import canonical, split_qualified


def client_queue(ctx: Any, queue_name: Any) -> Any:
    """The queue a Streams client uses: it exists (ORA-24010), has several consumers and is
    not an exception queue (ORA-24039)."""
    owner, name = split_qualified(queue_name, ctx.username, "queue name")
    q = ctx.find_queue(owner, name)
    if q is None:
        raise ora(24010, f"{owner}.{name}")
    if not q.table.multiple_consumers or q.is_exception_queue:
        raise ora(24039, f"{owner}.{name}")
    return q


def client_rule_set(ctx: Any, name: Any) -> tuple[str | None, str | None]:
    """(owner, name) of a rule set that exists (ORA-24141), (None, None) for NULL."""
    if name is None:
        return None, None
    owner, rs = split_qualified(name, ctx.username, "rule set name")
    if not ctx.rule_set_exists(owner, rs):
        raise ora(24141, owner, rs)
    return owner, rs


def client_user(ctx: Any, name: Any, what: str) -> str:
    """The user a client runs as: the caller when NULL; ORA-01918 when there is none."""
    user = canonical(name, what) if name is not None else ctx.username
    if not ctx.user_exists(user):
        raise ora(1918, user)
    return user
