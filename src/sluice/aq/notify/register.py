"""Making and dropping registrations: python-oracledb's ``conn.subscribe`` /
``conn.unsubscribe`` and PL/SQL's ``DBMS_AQ.REGISTER`` / ``UNREGISTER`` (seed 003
"Asynchronous Notifications").

Each checks the queue and the user's right to dequeue from it, stores the registration
as a catalog fact (:mod:`.registration`) and wakes the store's dispatcher
(:mod:`.dispatcher`), which delivers what the outbox owes it.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any, Callable

from ... import constants as C
from ...errors import InterfaceError, ora
from ...names import canonical
from .dispatcher import dispatcher_for
from .registration import (CALLBACKS, PROCESS, Registration, RegInfo, Subscription, _callbacks_lock,
                           drop_registration)

if TYPE_CHECKING:
    from ...connection import Connection


def parse_name(conn: "Connection", name: str) -> tuple[str, str | None]:
    """``queue`` or ``queue:consumer`` -> ('SCHEMA.QUEUE', 'CONSUMER' or None), checked:
    the queue exists and the user may dequeue from it."""
    if not isinstance(name, str) or not name.strip():
        raise InterfaceError("a registration needs the queue name (name=)")
    queue, _, consumer = name.partition(":")
    ctx = conn.context
    q = ctx.catalog.queue(queue.strip())
    cons = canonical(consumer.strip(), "consumer name") if consumer.strip() else None
    if q.table.multiple_consumers and cons is None and not q.is_exception_queue:
        raise ora(25231)
    if not q.table.multiple_consumers and cons is not None:
        raise ora(24039, q.qualified)
    ctx.authz.check_dequeue(q, cons)
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
    ctx = conn.context
    ctx.ddl_commit()
    ctx.store.put_catalog_object("REGISTRATION", reg.queue, reg.id, reg.spec(), replace=True)
    ctx.catalog.refresh(force=True)
    dispatcher_for(ctx.store).wake()


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
    ctx = conn.context
    ctx.ddl_commit()
    drop_registration(ctx.store, sub.registration)
    ctx.catalog.refresh(force=True)


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
    ctx = conn.context
    ctx.catalog.refresh(force=True)
    return [Registration(**spec) for _, _, spec in ctx.store.catalog_objects("REGISTRATION")
            if spec["queue"] == queue and spec["consumer"] == consumer and spec["location"] == location
            and spec["protocol"] != "CALLBACK"]


def unregister_plsql(conn: "Connection", info: RegInfo) -> None:
    queue, consumer = parse_name(conn, info.name)
    _, location = location_protocol(info.callback or "")
    found = _registered(conn, queue, consumer, location)
    if not found:
        raise ora(24950, info.name)
    ctx = conn.context
    ctx.ddl_commit()
    for reg in found:
        drop_registration(ctx.store, reg)
    ctx.catalog.refresh(force=True)
