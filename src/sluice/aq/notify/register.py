"""Making and dropping registrations: python-oracledb's ``conn.subscribe`` /
``conn.unsubscribe`` and PL/SQL's ``DBMS_AQ.REGISTER`` / ``UNREGISTER`` (seed 003
"Asynchronous Notifications").

Each checks the queue and the user's right to dequeue from it, stores the registration
as a catalog fact (:mod:`.registration`) and wakes the store's dispatcher
(:mod:`.dispatcher`), which delivers what the outbox owes it.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable

from ... import constants as C
from ...errors import ArgumentError, Error, InterfaceError, dpy, ora
from ...names import canonical
from ..sharded import check_notification
from .dispatcher import dispatcher_for
from . import registration
from .registration import (CALLBACKS, Registration, RegInfo, Subscription, _callbacks_lock,
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
    """The protocol of a PL/SQL callback location: http://, mailto://, plsql://, and what
    the dispatcher needs of it (the URL, the address, the procedure).
    :raises: ORA-24971 for another scheme, nothing after the scheme, or control
    characters (a mail header or a URL cannot carry them)."""
    if not isinstance(location, str):
        raise InterfaceError(f"location must be a string, not {type(location).__name__}")
    stripped = location.strip()
    lower = stripped.lower()
    if lower.startswith(("http://", "https://")):
        kind, rest = "HTTP", stripped
    elif lower.startswith("mailto:"):
        kind, rest = "MAIL", stripped[7:].lstrip("/")
    elif lower.startswith("plsql:"):
        kind, rest = "PLSQL", stripped[6:].lstrip("/").split("?")[0]
    else:
        kind, rest = None, ""
    if kind is None or not _usable(kind, rest):
        raise ora(24971, repr(location))
    return kind, rest


def _usable(kind: str, rest: str) -> bool:
    """Whether a location's part after its scheme says where to deliver."""
    if not rest or any(ord(ch) < 32 or ord(ch) == 127 or ch.isspace() for ch in rest):
        return False
    if kind == "HTTP":
        from urllib.parse import urlsplit
        try:
            url = urlsplit(rest)
            url.port   # noqa: B018 (a port that is not a number, or past 65535, raises)
        except ValueError:
            return False
        return bool(url.hostname)
    return True


def _subscribe_location(kind: str, location: Any) -> str | None:
    """``location=`` of ``conn.subscribe`` for ``kind``: an http(s) URL for HTTP, an address
    (``mailto:`` optional) for MAIL, a procedure (``plsql://`` optional) for PL/SQL; none
    for a callback.  :raises: InterfaceError (missing, not a string, given to a callback),
    ORA-24971 (unusable, or another protocol's scheme)."""
    if kind == "CALLBACK":
        if location is not None:
            raise InterfaceError("location= is for SUBSCR_PROTO_HTTP, SUBSCR_PROTO_MAIL and "
                                 "SUBSCR_PROTO_PLSQL subscriptions, not a callback")
        return None
    if location is None or location == "":
        raise InterfaceError(f"a {kind} subscription needs location=")
    if not isinstance(location, str):
        raise InterfaceError(f"location must be a string, not {type(location).__name__}")
    prefix = {"MAIL": "mailto:", "PLSQL": "plsql://"}.get(kind, "")
    given = location.strip()
    if prefix and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", given):   # the scheme may be left out
        given = prefix + given
    try:
        found, rest = location_protocol(given)
    except Error:
        found = None
    if found != kind:
        raise ora(24971, repr(location))
    return rest


def _check_int(name: str, value: Any, low: int = 0, high: int = 2 ** 32 - 1) -> None:
    """python-oracledb keeps these in C unsigned ints: a number, in range."""
    if not isinstance(value, int):
        raise InterfaceError(f"{name} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        raise InterfaceError(f"{name} must be between {low} and {high}, not {value}")


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
              grouping_start: Any = None, grouping_repeat: int = -1, **unknown: Any) -> Subscription:
    """python-oracledb's ``Connection.subscribe`` for the AQ namespace.  Every argument is
    checked before anything is registered."""
    if unknown:   # python-oracledb's subscribe() has no **kwargs: a TypeError there
        raise ArgumentError(f"subscribe() got an unexpected keyword argument {next(iter(unknown))!r}")
    for arg, value in (("namespace", namespace), ("protocol", protocol), ("operations", operations),
                       ("qos", qos)):
        _check_int(arg, value)
    _check_int("port", port, 0, 65535)
    if ip_address is not None and not isinstance(ip_address, str):
        raise InterfaceError(f"ip_address must be a string, not {type(ip_address).__name__}")
    if namespace != C.SUBSCR_NAMESPACE_AQ:
        from ...errors import not_supported
        raise not_supported("continuous query notification (SUBSCR_NAMESPACE_DBCHANGE)")
    kind = {C.SUBSCR_PROTO_CALLBACK: "CALLBACK", C.SUBSCR_PROTO_MAIL: "MAIL",
            C.SUBSCR_PROTO_PLSQL: "PLSQL", C.SUBSCR_PROTO_HTTP: "HTTP"}.get(protocol)
    if kind is None:
        raise InterfaceError(f"invalid subscription protocol {protocol!r}")
    if kind == "CALLBACK" and not callable(callback):
        raise InterfaceError("a callback subscription needs a callable callback")
    location = _subscribe_location(kind, location)
    queue, consumer = parse_name(conn, name)
    reg = _new(conn, queue, consumer, kind, location, qos, timeout, grouping_class, grouping_value,
               grouping_type, grouping_start, grouping_repeat, payload=False, context=None)
    reg.purge_on_notify = bool(qos & C.SUBSCR_QOS_DEREG_NFY)
    if kind == "CALLBACK":
        reg.process = registration.PROCESS
    sub = Subscription(conn, reg, callback, namespace, protocol, operations, port, ip_address)
    sub.name = name      # as given, as python-oracledb's Subscription.name (reg.name is qualified)
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
    _check_int("grouping_value", grouping_value)   # a number even when nothing is grouped
    if grouping_class and grouping_value <= 0:
        raise InterfaceError("time grouping needs a positive grouping_value (seconds)")
    if grouping_type not in (C.SUBSCR_GROUPING_TYPE_SUMMARY, C.SUBSCR_GROUPING_TYPE_LAST):
        raise InterfaceError("grouping_type must be SUMMARY or LAST")
    if not isinstance(timeout, int) or timeout < 0:
        raise InterfaceError("timeout must be a non-negative number of seconds")
    _check_int("timeout", timeout)   # python-oracledb's uint32
    _check_int("qos", qos)
    _check_int("grouping_repeat", grouping_repeat, -1, 2 ** 31 - 1)   # -1: NTFN_GROUPING_FOREVER
    grouping_start = _epoch(grouping_start)
    check_notification(conn.context.catalog.queue(queue), kind)
    name = queue if consumer is None else f"{queue}:{consumer}"
    return Registration(id=uuid.uuid4().hex[:16].upper(), name=name, queue=queue, consumer=consumer,
                        protocol=kind, location=location, payload=payload, timeout=timeout,
                        created=time.time(), grouping_class=grouping_class,
                        grouping_value=grouping_value, grouping_type=grouping_type,
                        grouping_start=grouping_start, grouping_repeat=grouping_repeat,
                        context=context, user=conn.username, qos=qos)


def unsubscribe(conn: "Connection", sub: Subscription) -> None:
    if not isinstance(sub, Subscription):   # python-oracledb: a TypeError
        raise ArgumentError("unsubscribe needs a Subscription")
    if not sub.active:
        raise dpy(1007)
    sub.active = False
    ctx = conn.context
    ctx.ddl_commit()
    drop_registration(ctx.store, sub.registration)
    ctx.catalog.refresh(force=True)


# seconds since the epoch a datetime can hold (years 1 to 9999): the registration keeps the
# start as JSON, and DBA_SUBSCR_REGISTRATIONS shows it — infinity is not JSON at all
_EPOCH_RANGE = (-62135596800.0, 253402300799.0)


def _epoch(value: Any) -> float | None:
    """A grouping start time: a datetime, or seconds since the epoch."""
    if value is None:
        return None
    if hasattr(value, "timestamp") and callable(value.timestamp):
        return value.timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool) \
            and _EPOCH_RANGE[0] <= value <= _EPOCH_RANGE[1]:   # (NaN fails both)
        return float(value)
    raise InterfaceError(f"grouping_start must be a datetime or seconds since the epoch, not {value!r}")


def register_plsql(conn: "Connection", info: RegInfo) -> Registration:
    """DBMS_AQ.REGISTER of one SYS.AQ$_REG_INFO."""
    reg = plsql_registration(conn, info)
    store_registration(conn, reg)
    return reg


def plsql_registration(conn: "Connection", info: RegInfo) -> Registration:
    """The registration ``info`` asks for, checked, not yet stored (a list is checked whole
    before any of it is stored: a refused entry registers nothing)."""
    if not info.callback:     # NULL ('' is NULL in PL/SQL; IDAP's empty notify_url)
        raise ora(24971, repr(info.callback))
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
    return reg


def _registered(conn: "Connection", queue: str, consumer: str | None, location: str) -> list[Registration]:
    """The registrations of ``queue[:consumer]`` at ``location`` (DBMS_AQ.REGISTER's)."""
    ctx = conn.context
    ctx.catalog.refresh(force=True)
    return [Registration(**spec) for _, _, spec in ctx.store.catalog_objects("REGISTRATION")
            if spec["queue"] == queue and spec["consumer"] == consumer and spec["location"] == location
            and spec["protocol"] != "CALLBACK"]


def unregister_plsql(conn: "Connection", infos: list[RegInfo]) -> None:
    """DBMS_AQ.UNREGISTER of SYS.AQ$_REG_INFOs: every one must be registered (ORA-24950)
    before any is dropped."""
    found = []
    for info in infos:
        queue, consumer = parse_name(conn, info.name)
        _, location = location_protocol(info.callback or "")
        regs = _registered(conn, queue, consumer, location)
        if not regs:
            raise ora(24950, info.name)
        found.extend(regs)
    ctx = conn.context
    ctx.ddl_commit()
    for reg in found:
        drop_registration(ctx.store, reg)
    ctx.catalog.refresh(force=True)
