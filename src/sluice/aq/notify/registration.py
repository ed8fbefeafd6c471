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
import uuid
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Callable

from ... import constants as C
from ...errors import dpy
from ...names import split_qualified

if TYPE_CHECKING:
    from ...connection import Connection

PROCESS = ""


def _draw_process() -> None:
    """This process's token (host, pid, random) stamped on its CALLBACK registrations.
    Drawn again in a forked child: with its parent's, the child's registrations would look
    like the parent's — alive while the parent is, dispatched by neither."""
    global PROCESS
    PROCESS = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


_draw_process()
os.register_at_fork(after_in_child=_draw_process)
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
        self.active = True       # until unsubscribed (then again: DPY-1007)

    def registerquery(self, statement: str, args: Any = None) -> None:
        """python-oracledb's query registration (continuous query notification): none on
        an AQ subscription, the only kind Sluice has (DPY-2071)."""
        raise dpy(2071)


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


def drop_registration(store, reg: Registration) -> None:
    store.drop_catalog_object("REGISTRATION", reg.queue, reg.id)
    store.drop_registration_notifications(reg.id)
    with _callbacks_lock:
        CALLBACKS.pop(reg.id, None)


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


