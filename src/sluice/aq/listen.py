"""``DBMS_AQ.LISTEN``: wait for a message on any of several queues (seed 003
"Waiting for Messages", "Publish/Subscribe").

The agent list names queues (``address``) and, for multi-consumer queues, the
consumer (``name``).  LISTEN returns the first agent of the list with a READY
message — it does not dequeue it — so an application that rotates the list
keeps one busy agent from starving the others.  It waits up to ``wait`` seconds
(FOREVER by default) without polling inside a process, then raises ORA-25254.
``listen_delivery_mode`` says which messages count: persistent ones (the default),
buffered ones (this process's in memory and any spilled to the queue table), or both;
the delivery mode of the message found is returned with the agent.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .. import constants as C
from ..errors import InterfaceError, ora
from ..model import Agent
from ..names import canonical
from ..store.base import DequeueInfo, QueueInfo, Selector
from .buffered import pool_for

if TYPE_CHECKING:
    from ..connection import Connection


def listen(conn: "Connection", agent_list: list[Agent], wait: int | None = None,
           delivery_mode: int = C.MSG_PERSISTENT) -> tuple[Agent, int]:
    """The first agent of ``agent_list`` with a message of ``delivery_mode``, and that
    message's delivery mode.  :raises: ORA-25254 on timeout."""
    ctx = conn.context
    ctx.check_open()
    if delivery_mode not in (C.MSG_PERSISTENT, C.MSG_BUFFERED, C.MSG_PERSISTENT_OR_BUFFERED):
        raise InterfaceError(f"invalid listen delivery mode {delivery_mode!r}")
    if not agent_list:
        raise InterfaceError("agent_list must name at least one agent")
    targets: list[tuple[Agent, QueueInfo, str | None]] = []
    for agent in agent_list:
        if not isinstance(agent, Agent) or not agent.address:
            raise ora(25216)
        q = ctx.catalog.queue(agent.address.split("@")[0])
        consumer = canonical(agent.name, "agent name") if agent.name else None
        if q.table.multiple_consumers and consumer is None and not q.is_exception_queue:
            raise ora(25231)
        if not q.dequeue_enabled:
            raise ora(25226, q.qualified)
        ctx.authz.check_dequeue(q, consumer)
        targets.append((Agent(consumer, q.qualified, agent.protocol or 0), q, consumer))
    forever = wait is None or wait < 0 or wait == C.DEQ_WAIT_FOREVER
    deadline = None if forever else time.monotonic() + wait
    pool = pool_for(ctx.store) if delivery_mode != C.MSG_PERSISTENT else None
    if pool is None or wait == 0:
        with ctx.waiting():      # Connection.cancel() ends the wait
            return _listen(conn, targets, deadline, delivery_mode, pool)
    with ctx.waiting(), pool.watching():    # a buffered enqueue wakes this wait
        return _listen(conn, targets, deadline, delivery_mode, pool)


def _listen(conn: "Connection", targets: list, deadline: float | None, delivery_mode: int,
            pool) -> tuple[Agent, int]:
    ctx = conn.context
    info = DequeueInfo(user=ctx.username)
    store, session = ctx.store, ctx.session
    # in the queue table: persistent messages, spilled buffered ones, or both
    table_mode = None if delivery_mode == C.MSG_PERSISTENT_OR_BUFFERED else delivery_mode
    while True:
        since = store.change_counter()
        ready = None      # when the first delayed buffered message (sharded queues) is due
        for agent, q, consumer in targets:
            states = (C.MSG_EXPIRED,) if q.is_exception_queue else (C.MSG_READY,)
            sel = Selector(states=states, consumer_name=consumer, multi=q.table.multiple_consumers,
                           delivery_mode=table_mode)
            if pool is not None and not q.is_exception_queue:
                if pool.first_key(q, sel, None, ctx) is not None:
                    return agent, C.MSG_BUFFERED
                due = pool.next_ready(q, sel) if q.table.sharded else None
                if due is not None and (ready is None or due < ready):
                    ready = due
            found = session.dequeue(q, sel, C.DEQ_BROWSE, False, 1, info)
            if found:
                return agent, found[0].delivery_mode
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise ora(25254)
        if ready is not None:    # nothing enqueues when a delay ends: the wait ends then
            remaining = max(0.0, min(ready - time.time(), 3600.0 if remaining is None else remaining))
        ctx.wait_for_messages(since, 3600.0 if remaining is None else remaining)
