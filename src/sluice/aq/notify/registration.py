"""Registrations: who is notified of what, and how.

A registration names a queue (``SCHEMA.QUEUE``) or, for a multi-consumer queue, a
consumer of it (``SCHEMA.QUEUE:CONSUMER``) and a way to deliver: a Python callback
of this process (python-oracledb's ``SUBSCR_PROTO_CALLBACK``), ``http://…`` (an
AQXmlNotification POSTed there), ``mailto://…`` or ``plsql://schema.proc``.  Options
(seed 003): a timeout after which the registration is purged with a final
notification, purge on the first notification, payload delivery (RAW queues), and
grouping by time (interval, start time, repeat count; SUMMARY lists every message id,
LAST the last one and the count).  Registrations are catalog facts (kind
``REGISTRATION``), so they outlive the process that made them — except a callback's,
which dies with its process.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable

from ... import constants as C
from ...errors import InterfaceError, ora
from ...names import canonical, split_qualified

if TYPE_CHECKING:
    from ...connection import Connection

PROCESS = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
# callbacks of this process, by registration id
CALLBACKS: dict[str, "Subscription"] = {}
_callbacks_lock = threading.Lock()


@dataclass
class Registration:
    """One registration (a row of DBA_SUBSCR_REGISTRATIONS)."""

    id: str
    name: str                      # SCHEMA.QUEUE or SCHEMA.QUEUE:CONSUMER
    queue: str
    consumer: str | None
    protocol: str                  # CALLBACK | HTTP | MAIL | PLSQL
    location: str | None = None    # URL, mail address or procedure
    purge_on_notify: bool = False
    payload: bool = False
    timeout: int = 0
    created: float = 0.0
    grouping_class: int = 0
    grouping_value: int = 0
    grouping_type: int = C.SUBSCR_GROUPING_TYPE_SUMMARY
    grouping_start: float | None = None
    grouping_repeat: int = -1      # -1: forever
    presentation: str = "XML"
    context: Any = None
    user: str | None = None
    process: str | None = None     # CALLBACK: the process that can call it
    qos: int = 0

    @property
    def expires_at(self) -> float | None:
        return self.created + self.timeout if self.timeout else None

    def spec(self) -> dict:
        return asdict(self)


class Subscription:
    """python-oracledb's ``Subscription`` (what ``conn.subscribe`` returns)."""

    def __init__(self, conn: "Connection", reg: Registration, callback: Callable | None,
                 namespace: int, protocol: int, operations: int, port: int, ip_address: str | None) -> None:
        self.connection = conn
        self.callback = callback
        self.id = reg.id
        self.name = reg.name
        self.namespace = namespace
        self.protocol = protocol
        self.qos = reg.qos
        self.timeout = reg.timeout
        self.operations = operations
        self.port = port
        self.ip_address = self.ipAddress = ip_address
        self.grouping_class = reg.grouping_class
        self.grouping_value = reg.grouping_value
        self.grouping_type = reg.grouping_type
        self.registration = reg


class NotificationMessage:
    """python-oracledb's ``Message`` handed to a notification callback."""

    def __init__(self, sub: Subscription | None, reg: Registration, type_: int,
                 msgid: bytes | None, consumer: str | None, msgids: list[bytes] | None = None,
                 count: int = 1, deliverymode: int = C.MSG_PERSISTENT) -> None:
        self.subscription = sub
        self.type = type_
        # as Oracle's notification descriptor names it: '"SCHEMA"."QUEUE"' (python-oracledb's
        # tests check this form); the consumer as the registration names it
        schema, _, queue = reg.queue.partition(".")
        self.queue_name = f'"{schema}"."{queue}"'
        self.consumer_name = consumer
        self.msgid = msgid
        self.msgids = msgids or ([msgid] if msgid else [])   # grouping SUMMARY
        self.count = count                                   # grouping LAST
        # seed 003 "Buffered Message Notification": the message's delivery mode (MSG_PERSISTENT
        # or MSG_BUFFERED), a Sluice attribute — python-oracledb's Message has none
        self.deliverymode = deliverymode
        self.dbname = "SLUICE"
        self.registered = type_ != C.EVENT_DEREG
        self.txid = None
        self.queries: list = []
        self.tables: list = []

    # python-oracledb's deprecated camelCase spellings
    @property
    def queueName(self) -> str:  # noqa: N802
        return self.queue_name

    @property
    def consumerName(self) -> str | None:  # noqa: N802
        return self.consumer_name


def parse_name(conn: "Connection", name: str) -> tuple[str, str | None]:
    """``queue`` or ``queue:consumer`` -> ('SCHEMA.QUEUE', 'CONSUMER' or None), checked:
    the queue exists and the user may dequeue from it."""
    if not isinstance(name, str) or not name.strip():
        raise InterfaceError("a registration needs the queue name (name=)")
    queue, _, consumer = name.partition(":")
    q = conn._catalog.queue(queue.strip())
    cons = canonical(consumer.strip(), "consumer name") if consumer.strip() else None
    if q.table.multiple_consumers and cons is None and not q.is_exception_queue:
        raise ora(25231)
    if not q.table.multiple_consumers and cons is not None:
        raise ora(24039, q.qualified)
    conn._authz.check_dequeue(q, cons)
    return q.qualified, cons


def location_protocol(location: str) -> tuple[str, str]:
    """The protocol of a PL/SQL callback location: http://, mailto://, plsql://."""
    lower = location.strip().lower()
    if lower.startswith(("http://", "https://")):
        return "HTTP", location.strip()
    if lower.startswith("mailto:"):
        return "MAIL", location.strip()[7:].lstrip("/")
    if lower.startswith("plsql:"):
        return "PLSQL", location.strip()[6:].lstrip("/").split("?")[0]
    raise ora(24971, location)


def store_registration(conn: "Connection", reg: Registration) -> None:
    conn._ddl_commit()
    conn._store.put_catalog_object("REGISTRATION", reg.queue, reg.id, reg.spec(), replace=True)
    conn._catalog.refresh(force=True)
    from .dispatcher import dispatcher_for
    dispatcher_for(conn._store).wake()


def drop_registration(store, reg: Registration) -> None:
    store.drop_catalog_object("REGISTRATION", reg.queue, reg.id)
    store.drop_registration_notifications(reg.id)
    with _callbacks_lock:
        CALLBACKS.pop(reg.id, None)


def subscribe(conn: "Connection", namespace: int = C.SUBSCR_NAMESPACE_AQ,
              protocol: int = C.SUBSCR_PROTO_CALLBACK, callback: Callable | None = None,
              timeout: int = 0, operations: int = 0, port: int = 0, qos: int = 0,
              ip_address: str | None = None, grouping_class: int = 0, grouping_value: int = 0,
              grouping_type: int = C.SUBSCR_GROUPING_TYPE_SUMMARY, name: str | None = None,
              client_initiated: bool = False, location: str | None = None,
              grouping_start: float | None = None, grouping_repeat: int = -1) -> Subscription:
    """python-oracledb's ``Connection.subscribe`` for the AQ namespace."""
    if namespace != C.SUBSCR_NAMESPACE_AQ:
        from ...errors import not_supported
        raise not_supported("continuous query notification (SUBSCR_NAMESPACE_DBCHANGE)")
    queue, consumer = parse_name(conn, name)
    kind = {C.SUBSCR_PROTO_CALLBACK: "CALLBACK", C.SUBSCR_PROTO_MAIL: "MAIL",
            C.SUBSCR_PROTO_PLSQL: "PLSQL", C.SUBSCR_PROTO_HTTP: "HTTP"}.get(protocol)
    if kind is None:
        raise InterfaceError(f"invalid subscription protocol {protocol!r}")
    if kind == "CALLBACK" and not callable(callback):
        raise InterfaceError("a callback subscription needs a callable callback")
    if kind != "CALLBACK" and not location:
        raise InterfaceError(f"a {kind} subscription needs location=")
    reg = _new(conn, queue, consumer, kind, location, qos, timeout, grouping_class, grouping_value,
               grouping_type, grouping_start, grouping_repeat, payload=False, context=None)
    reg.purge_on_notify = bool(qos & C.SUBSCR_QOS_DEREG_NFY)
    if kind == "CALLBACK":
        reg.process = PROCESS
    sub = Subscription(conn, reg, callback, namespace, protocol, operations, port, ip_address)
    if kind == "CALLBACK":
        with _callbacks_lock:
            CALLBACKS[reg.id] = sub
    store_registration(conn, reg)
    return sub


def _new(conn: "Connection", queue: str, consumer: str | None, kind: str, location: str | None,
         qos: int, timeout: int, grouping_class: int, grouping_value: int, grouping_type: int,
         grouping_start: float | None, grouping_repeat: int, payload: bool, context: Any) -> Registration:
    if grouping_class not in (0, C.SUBSCR_GROUPING_CLASS_TIME):
        raise InterfaceError("grouping_class must be none or time")
    if grouping_class and (not isinstance(grouping_value, int) or grouping_value <= 0):
        raise InterfaceError("time grouping needs a positive grouping_value (seconds)")
    if grouping_type not in (C.SUBSCR_GROUPING_TYPE_SUMMARY, C.SUBSCR_GROUPING_TYPE_LAST):
        raise InterfaceError("grouping_type must be SUMMARY or LAST")
    if not isinstance(timeout, int) or timeout < 0:
        raise InterfaceError("timeout must be a non-negative number of seconds")
    name = queue if consumer is None else f"{queue}:{consumer}"
    return Registration(id=uuid.uuid4().hex[:16].upper(), name=name, queue=queue, consumer=consumer,
                        protocol=kind, location=location, payload=payload, timeout=timeout,
                        created=time.time(), grouping_class=grouping_class,
                        grouping_value=grouping_value, grouping_type=grouping_type,
                        grouping_start=grouping_start, grouping_repeat=grouping_repeat,
                        context=context, user=conn.username, qos=qos)


def unsubscribe(conn: "Connection", sub: Subscription) -> None:
    if not isinstance(sub, Subscription):
        raise InterfaceError("unsubscribe needs a Subscription")
    conn._ddl_commit()
    drop_registration(conn._store, sub.registration)
    conn._catalog.refresh(force=True)


def registrations(store, catalog_objects: list[tuple[str, str, dict]]) -> list[Registration]:
    return [Registration(**spec) for _, _, spec in catalog_objects]


def split_name(name: str, default: str) -> tuple[str, str]:
    return split_qualified(name, default, "queue name")


@dataclass
class RegInfo:
    """``SYS.AQ$_REG_INFO``: one registration of DBMS_AQ.REGISTER."""

    name: str
    namespace: int = 0
    callback: str | None = None
    context: Any = None
    qosflags: int = 0
    timeout: int = 0
    ntfn_grouping_class: int = 0
    ntfn_grouping_value: int = 600
    ntfn_grouping_type: int = C.SUBSCR_GROUPING_TYPE_SUMMARY
    ntfn_grouping_start_time: Any = None
    ntfn_grouping_repeat_count: int = -1


def _epoch(value: Any) -> float | None:
    if value is None:
        return None
    if hasattr(value, "timestamp"):
        return value.timestamp()
    return float(value)


def register_plsql(conn: "Connection", info: RegInfo) -> Registration:
    if not info.callback:
        raise InterfaceError("SYS.AQ$_REG_INFO needs a callback location")
    queue, consumer = parse_name(conn, info.name)
    kind, location = location_protocol(info.callback)
    qos = info.qosflags or 0
    context = info.context.hex() if isinstance(info.context, (bytes, bytearray)) else info.context
    reg = _new(conn, queue, consumer, kind, location, qos, info.timeout or 0,
               info.ntfn_grouping_class or 0, info.ntfn_grouping_value or 0,
               info.ntfn_grouping_type or C.SUBSCR_GROUPING_TYPE_SUMMARY,
               _epoch(info.ntfn_grouping_start_time),
               -1 if info.ntfn_grouping_repeat_count is None else info.ntfn_grouping_repeat_count,
               payload=bool(qos & 2), context=context)
    reg.purge_on_notify = bool(qos & 4)
    reg.location = location
    # registering the same queue, consumer and location again replaces the registration
    # (its options may change) rather than doubling every notification
    same = _registered(conn, queue, consumer, location)
    if same:
        reg.id = same[0].id
    store_registration(conn, reg)
    return reg


def _registered(conn: "Connection", queue: str, consumer: str | None, location: str) -> list[Registration]:
    """The registrations of ``queue[:consumer]`` at ``location`` (DBMS_AQ.REGISTER's)."""
    conn._catalog.refresh(force=True)
    return [Registration(**spec) for _, _, spec in conn._store.catalog_objects("REGISTRATION")
            if spec["queue"] == queue and spec["consumer"] == consumer and spec["location"] == location
            and spec["protocol"] != "CALLBACK"]


def unregister_plsql(conn: "Connection", info: RegInfo) -> None:
    queue, consumer = parse_name(conn, info.name)
    _, location = location_protocol(info.callback or "")
    found = _registered(conn, queue, consumer, location)
    if not found:
        raise ora(24950, info.name)
    conn._ddl_commit()
    for reg in found:
        drop_registration(conn._store, reg)
    conn._catalog.refresh(force=True)
