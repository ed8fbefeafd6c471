"""The IDAP operations on one database session: what the AQ servlet does once it has
chosen the database user (seed 004 "Oracle Streams AQ Servlet Processes a Request").

Each function runs in a worker thread on the HTTP session's connection, through the
python-oracledb AQ API (``conn.queue()``, ``enqmany``, ``deqmany``, ``commit``,
``cancel``), so the AQ layer's rules and its privilege checks apply unchanged.  A piggy-backed
``<AQXmlCommit/>`` commits after the operation succeeded; a failed operation undoes
only itself (enqmany is all-or-nothing), the transaction stays open, as a failed
statement leaves an Oracle transaction open.

A receive whose HTTP client has gone (:class:`ClientWatch`) has no effect: its wait
ends (``Connection.cancel()``), and what it took before that was noticed is given back
— the connection's savepoint taken before it is rolled back to: the messages are
released as they were, the session's position put back, its earlier work kept — and
its piggy-backed commit is not done.

Publish/subscribe goes through the same calls: AQXmlPublish to a multi-consumer queue
reaches its subscribers or the message's recipient_list, AQXmlReceive with a
consumer_name dequeues as that consumer, and AQXmlRegister is ``DBMS_AQ.REGISTER``
(:func:`sluice.aq.notify.registration.register_plsql`), whose notifications the
AQ layer's dispatcher POSTs or mails as AQXmlNotification documents.
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .. import constants as C
from ..aq.notify.register import register_plsql
from ..aq.notify.registration import RegInfo
from ..aq.payload import ANYDATA
from ..connection import rollback_to_savepoint, savepoint
from ..errors import DatabaseError, not_supported
from ..model import Agent, MessageProperties, checked_correlation
from ..store.base import QueueInfo
from . import serialise
from .parse import (DEQUEUE_MODES, NAVIGATION, VISIBILITY, AgentRef, EndTransaction,
                    ReceiveRequest, RegisterRequest, Request, SendRequest, msgid_bytes)
from .payload import value_from_xml

if TYPE_CHECKING:
    from ..aq.queue import Queue
    from ..connection import Connection

WAIT_SLICE = 1               # seconds: a long wait is cut so shutdown and expiry stop it


@dataclass
class Context:
    """What an operation needs besides its request and connection."""

    queue: QueueInfo | None          # the destination, resolved by the agent policy
    envelope_ns: str
    propagation: bool = False        # posted to AQPropServlet (HTTP propagation)
    stylesheet: tuple[str, str] | None = None
    stopping: Callable[[], bool] = lambda: False
    client: "ClientWatch | None" = None      # tells when the HTTP client has gone


class ClientLeft(Exception):
    """The HTTP client of a receive went away: the receive was undone, nobody to answer."""


class ClientWatch:
    """Whether the HTTP client of a request is still there.  The event loop calls
    :meth:`left` when the client disconnects; a waiting receive on the connection
    :meth:`attach`-ed meanwhile is cancelled at once (``Connection.cancel()``)."""

    def __init__(self, catch_up: Callable[[], None] = lambda: None) -> None:
        self._gone = False
        self._conn: "Connection | None" = None
        self._lock = threading.Lock()
        # blocks until the event loop has handled what the network already told it (so a
        # disconnect that came before now is known): a receive that took messages asks
        self.catch_up = catch_up

    def __call__(self) -> bool:
        return self._gone

    def left(self) -> None:
        with self._lock:        # held: once attach(None) returned, no cancel reaches a later call
            self._gone = True
            if self._conn is not None:
                self._conn.cancel()

    def attach(self, conn: "Connection | None") -> None:
        with self._lock:
            self._conn = conn


class _Types:
    """Object types as the session's user sees them (the payload registry)."""

    def __init__(self, conn: "Connection") -> None:
        self.conn = conn

    def get_type(self, name: str):
        try:
            return self.conn.gettype(name)
        except DatabaseError as e:
            if e.code == 4043:
                return None
            raise


_queues: "weakref.WeakKeyDictionary[Connection, dict[str, Queue]]" = weakref.WeakKeyDictionary()


def _queue(conn: "Connection", qualified: str) -> "Queue":
    """The connection's Queue object for ``qualified`` (kept: every option is set anew by
    each operation, and creating one resolves its name again)."""
    per_conn = _queues.get(conn)
    if per_conn is None:
        per_conn = _queues[conn] = {}
    q = per_conn.get(qualified)
    if q is None:
        q = per_conn[qualified] = conn.queue(qualified)
    return q


def execute(conn: "Connection | None", request: Request, ctx: Context) -> bytes:
    """Run ``request`` on ``conn`` and return the response document.

    ``conn`` is None only for AQXmlCommit/AQXmlRollback in a session that has not
    connected yet: there is nothing to end.
    :raises Error: whatever the AQ layer raises; the caller turns it into a Fault.
    """
    if isinstance(request, EndTransaction):
        if conn is not None:
            conn.commit() if request.commit else conn.rollback()
        return serialise.status_response(f"{request.method}Response", ctx.envelope_ns, ctx.stylesheet)
    assert conn is not None and ctx.queue is not None
    if isinstance(request, SendRequest):
        body = _send(conn, request, ctx)
    elif isinstance(request, ReceiveRequest):
        body = _receive(conn, request, ctx) if ctx.client is None else _watched_receive(conn, request, ctx)
    else:
        body = _register(conn, request, ctx)
    if request.commit:
        conn.commit()
    return body


def agent_of(ref: AgentRef | None) -> Agent | None:
    """The sluice.Agent of a sender_id or recipient (None for an empty one)."""
    if ref is None:
        return None
    if ref.alias is not None:
        raise not_supported("agent_alias (LDAP agent aliases: Sluice has no directory server)")
    if ref.name is None and ref.address is None:
        return None
    return Agent(ref.name, ref.address, ref.protocol or 0)


def _send(conn: "Connection", req: SendRequest, ctx: Context) -> bytes:
    q_info = ctx.queue
    q = _queue(conn, q_info.qualified)
    q.enqoptions.visibility = VISIBILITY[req.visibility][0]
    q.enqoptions.transformation = req.transformation
    # with a transformation the payload is of the transformation's source type,
    # which its element names; without, it must be the queue's type
    payload_type = ANYDATA if req.transformation else q_info.table.payload_type
    types = _Types(conn)
    props = []
    for m in req.messages:
        h = m.header
        if h.recipient_list:   # a single-consumer queue: the AQ layer says ORA-24039
            recipients = [agent_of(r) for r in h.recipient_list]
        else:
            recipients = None
        original = msgid_bytes(h.message_id) if ctx.propagation and h.message_id else None
        props.append(conn.msgproperties(
            payload=value_from_xml(m.payload, payload_type, types, conn.username),
            correlation=checked_correlation(h.correlation), delay=h.delay, exceptionq=h.exception_queue,
            expiration=h.expiration, priority=h.priority, recipients=recipients,
            sender_id=agent_of(h.sender_id), original_msgid=original))
    q.driver_checks = False      # IDAP is not python-oracledb: any value the queue holds
    q.enqmany(props)
    return serialise.send_response(f"{req.method}Response", req.destination.name,
                                   [p.msgid for p in props], ctx.envelope_ns, ctx.stylesheet)


def _receive(conn: "Connection", req: ReceiveRequest, ctx: Context) -> bytes:
    q_info = ctx.queue
    q = _queue(conn, q_info.qualified)
    o = q.deqoptions
    o.visibility = VISIBILITY[req.visibility][1]
    o.mode = DEQUEUE_MODES[req.dequeue_mode]
    o.navigation = NAVIGATION[req.navigation_mode]
    o.transformation = req.transformation
    o.consumername = req.consumer_name
    o.correlation = checked_correlation(req.selector.correlation)
    o.msgid = req.selector.message_id
    o.condition = req.selector.condition
    messages = _take(q, req, ctx)
    if o.mode == C.DEQ_REMOVE_NODATA:   # no message_payload (python-oracledb's empty RAW is its own)
        for m in messages:
            m.payload = None
    if messages and ctx.client is not None:
        ctx.client.catch_up()      # then _watched_receive knows whether to give them back
    payload_type = ANYDATA if req.transformation else q_info.table.payload_type
    return serialise.receive_response(req.destination.name, messages, payload_type,
                                      ctx.envelope_ns, ctx.stylesheet)


def _watched_receive(conn: "Connection", req: ReceiveRequest, ctx: Context) -> bytes:
    """A receive whose client may go meanwhile: then it is undone (the module docstring).
    :raises ClientLeft: the client went away."""
    client = ctx.client
    assert client is not None
    # a PostgreSQL SAVEPOINT only when the transaction is open (an earlier request's work)
    mark = savepoint(conn)
    client.attach(conn)
    try:
        body = _receive(conn, req, ctx)
    finally:
        client.attach(None)
    if client():
        rollback_to_savepoint(conn, mark)
        raise ClientLeft
    return body


def _take(q, req: ReceiveRequest, ctx: Context) -> list[MessageProperties]:
    """deqmany with the request's wait, in slices of WAIT_SLICE seconds: each slice is
    a real blocking wait (woken by commits), the slicing only lets a shutting-down
    server or an expiring session stop a long or endless wait.  A client that goes
    away cancels the wait at once (ORA-01013 from ``Connection.cancel()``)."""
    gone = ctx.client or (lambda: False)
    deadline = None if req.wait_time is None else time.monotonic() + req.wait_time
    while True:
        if gone():
            return []
        if deadline is None:
            q.deqoptions.wait = WAIT_SLICE
        else:
            remaining = deadline - time.monotonic()
            q.deqoptions.wait = max(0, min(WAIT_SLICE, int(remaining + 0.999)))
        try:
            messages = q.deqmany(req.batch_size)
        except DatabaseError as e:
            if e.code == 1013 and gone():
                return []
            raise
        if messages or q.deqoptions.wait == C.DEQ_NO_WAIT or ctx.stopping():
            return messages
        if deadline is not None and time.monotonic() >= deadline:
            return messages


def _register(conn: "Connection", req: RegisterRequest, ctx: Context) -> bytes:
    """AQXmlRegister: DBMS_AQ.REGISTER of ``queue[:consumer]`` with the notify_url as
    the location (http://…, mailto:… or plsql://…, Table 17-3); the AQ layer checks the
    URL, the consumer and the privileges.  Registering the same destination, consumer
    and URL again keeps one registration."""
    q_info = ctx.queue
    name = q_info.qualified if not req.consumer_name else f"{q_info.qualified}:{req.consumer_name}"
    register_plsql(conn, RegInfo(name=name, namespace=C.SUBSCR_NAMESPACE_AQ, callback=req.notify_url.strip()))
    return serialise.status_response("AQXmlRegisterResponse", ctx.envelope_ns, ctx.stylesheet)


class Stopper:
    """A flag a server sets when it shuts down; long receives look at it."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        self._event.set()

    def __call__(self) -> bool:
        return self._event.is_set()

