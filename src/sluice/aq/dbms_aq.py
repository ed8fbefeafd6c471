"""``DBMS_AQ``: the PL/SQL form of enqueue and dequeue, with its records and constants.

``DBMS_AQ.ENQUEUE(queue_name, enqueue_options, message_properties, payload, msgid OUT)``
and ``DBMS_AQ.DEQUEUE(queue_name, dequeue_options, message_properties OUT,
payload OUT, msgid OUT)`` run through the same :class:`~sluice.aq.queue.Queue`
as the python-oracledb API; the PL/SQL records (``ENQUEUE_OPTIONS_T``,
``DEQUEUE_OPTIONS_T``, ``MESSAGE_PROPERTIES_T``) keep PL/SQL's field names.
Unlike ``deqone`` (which returns None), a PL/SQL dequeue that times out raises
ORA-25228, as in Oracle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .. import constants as C
from ..errors import InterfaceError, ora
from ..model import Agent, MessageProperties, checked_correlation
from .sharded import QueuePropsT

if TYPE_CHECKING:
    from ..connection import Connection


def _out(*names: str):
    """Mark OUT parameters for the statement interpreter (see sluice.plsql.out_params)."""
    def mark(fn):
        fn.__plsql_out__ = names
        return fn
    return mark


@dataclass
class EnqueueOptionsT:
    """``DBMS_AQ.ENQUEUE_OPTIONS_T``."""

    visibility: int = C.ENQ_ON_COMMIT
    relative_msgid: bytes | None = None
    sequence_deviation: int | None = None
    transformation: str | None = None
    delivery_mode: int = C.MSG_PERSISTENT


@dataclass
class DequeueOptionsT:
    """``DBMS_AQ.DEQUEUE_OPTIONS_T``."""

    consumer_name: str | None = None
    dequeue_mode: int = C.DEQ_REMOVE
    navigation: int = C.DEQ_NEXT_MSG
    visibility: int = C.DEQ_ON_COMMIT
    wait: int = -1                      # DBMS_AQ.FOREVER
    msgid: bytes | None = None
    correlation: str | None = None
    deq_condition: str | None = None
    signature: Any = None
    transformation: str | None = None
    delivery_mode: int = C.MSG_PERSISTENT


@dataclass
class MessagePropertiesT:
    """``DBMS_AQ.MESSAGE_PROPERTIES_T``."""

    priority: int = 1
    delay: int = C.MSG_NO_DELAY
    expiration: int = C.MSG_NO_EXPIRATION
    correlation: str | None = None
    attempts: int = 0
    recipient_list: list = field(default_factory=list)
    exception_queue: str | None = None
    enqueue_time: Any = None
    state: int = C.MSG_READY
    sender_id: Agent | None = None
    original_msgid: bytes | None = None
    signature: Any = None
    transaction_group: str | None = None
    user_property: Any = None
    delivery_mode: int = C.MSG_PERSISTENT


_RECORDS = {
    "DBMS_AQ.ENQUEUE_OPTIONS_T": EnqueueOptionsT,
    "DBMS_AQ.DEQUEUE_OPTIONS_T": DequeueOptionsT,
    "DBMS_AQ.MESSAGE_PROPERTIES_T": MessagePropertiesT,
    "DBMS_AQADM.QUEUE_PROPS_T": QueuePropsT,
}


def _typed(value: Any, cls: type, name: str) -> Any:
    """``value`` if it is NULL or a ``cls`` record.  :raises: InterfaceError otherwise (a
    Python caller's slip: PL/SQL's own variables always have the record's type)."""
    if value is not None and not isinstance(value, cls):
        oracle_name = next(k for k, v in _RECORDS.items() if v is cls)
        raise InterfaceError(f"{name} must be a {oracle_name}, not {type(value).__name__}")
    return value


def _sequence(value: Any, name: str) -> list:
    if isinstance(value, (str, bytes, bytearray, Mapping)) or not isinstance(value, Iterable):
        raise InterfaceError(f"{name} must be a list, not {type(value).__name__}")
    return list(value)


def _count(value: Any, name: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise InterfaceError(f"{name} must be a non-negative integer, not {value!r}")
    return value


def plsql_record(type_name: str) -> Any:
    """Initial value of a variable of ``type_name`` (None for scalars and objects)."""
    cls = _RECORDS.get(type_name.upper().removeprefix("SYS."))
    return cls() if cls else None


def _reg_infos(reg_list: list, count: int | None) -> list:
    """The first ``count`` entries of DBMS_AQ.REGISTER's / UNREGISTER's ``reg_list``."""
    from .notify.registration import RegInfo
    infos = _sequence(reg_list, "reg_list")[:_count(count, "count")]
    if not all(isinstance(info, RegInfo) for info in infos):
        raise InterfaceError("reg_list must hold SYS.AQ$_REG_INFO values")
    return infos


class DbmsAq:
    """The DBMS_AQ package for one connection."""

    BROWSE, LOCKED, REMOVE, REMOVE_NODATA = C.DEQ_BROWSE, C.DEQ_LOCKED, C.DEQ_REMOVE, C.DEQ_REMOVE_NODATA
    FIRST_MESSAGE, NEXT_TRANSACTION, NEXT_MESSAGE = C.DEQ_FIRST_MSG, C.DEQ_NEXT_TRANSACTION, C.DEQ_NEXT_MSG
    IMMEDIATE, ON_COMMIT = C.ENQ_IMMEDIATE, C.ENQ_ON_COMMIT
    FOREVER, NO_WAIT = -1, 0
    NO_DELAY, NEVER = 0, -1
    READY, WAITING, PROCESSED, EXPIRED = C.MSG_READY, C.MSG_WAITING, C.MSG_PROCESSED, C.MSG_EXPIRED
    PERSISTENT, BUFFERED, PERSISTENT_OR_BUFFERED = C.MSG_PERSISTENT, C.MSG_BUFFERED, \
        C.MSG_PERSISTENT_OR_BUFFERED

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn

    def _queue(self, queue_name: str):
        return self._conn.queue(queue_name)

    @_out("msgid")
    def enqueue(self, queue_name: str, enqueue_options: EnqueueOptionsT | None,
                message_properties: MessagePropertiesT | None, payload: Any) -> bytes:
        _typed(enqueue_options, EnqueueOptionsT, "enqueue_options")
        _typed(message_properties, MessagePropertiesT, "message_properties")
        q = self._queue(queue_name)
        self._apply_enq_options(q, enqueue_options)
        m = self._message(message_properties, payload)
        q._enqueue([m])   # not enqone: NULL is a payload here (python-oracledb refuses it)
        return m.msgid

    @_out("msgid_array")
    def enqueue_array(self, queue_name: str, enqueue_options: EnqueueOptionsT | None, array_size: int,
                      message_properties_array: list, payload_array: list) -> list[bytes]:
        _typed(enqueue_options, EnqueueOptionsT, "enqueue_options")
        array_size = _count(array_size, "array_size") or 0
        payload_array = _sequence(payload_array, "payload_array")
        message_properties_array = _sequence(message_properties_array, "message_properties_array")
        if array_size > len(payload_array) or array_size > len(message_properties_array):
            raise InterfaceError("array_size is larger than the arrays")
        for p in message_properties_array[:array_size]:
            _typed(p, MessagePropertiesT, "message_properties_array's elements")
        q = self._queue(queue_name)
        self._apply_enq_options(q, enqueue_options)
        msgs = [self._message(p, v) for p, v in
                zip(message_properties_array[:array_size], payload_array[:array_size])]
        q._enqueue(msgs, array=True)
        return [m.msgid for m in msgs]

    @_out("message_properties", "payload", "msgid")
    def dequeue(self, queue_name: str, dequeue_options: DequeueOptionsT | None) -> tuple:
        _typed(dequeue_options, DequeueOptionsT, "dequeue_options")
        q = self._queue(queue_name)
        self._apply_deq_options(q, dequeue_options)
        m = q.deqone()
        if m is None:
            raise ora(25228, q.name.upper())
        return self._record(m), m.payload, m.msgid

    @_out("message_properties_array", "payload_array", "msgid_array")
    def dequeue_array(self, queue_name: str, dequeue_options: DequeueOptionsT | None,
                      array_size: int) -> tuple:
        _typed(dequeue_options, DequeueOptionsT, "dequeue_options")
        _count(array_size, "array_size")
        q = self._queue(queue_name)
        self._apply_deq_options(q, dequeue_options)
        ms = q.deqmany(array_size)
        if not ms:
            raise ora(25228, q.name.upper())
        return [self._record(m) for m in ms], [m.payload for m in ms], [m.msgid for m in ms]

    # SYS.AQ$_JMS_MESSAGE.MESSAGE_TYPE (Oracle's "DBMS_AQ Package Constants" for JMS types)
    JMS_TEXT_MESSAGE, JMS_BYTES_MESSAGE, JMS_STREAM_MESSAGE, JMS_MAP_MESSAGE, JMS_OBJECT_MESSAGE = range(5)

    # notifications (seed 003 "Asynchronous Notifications")
    NAMESPACE_AQ, NAMESPACE_ANONYMOUS = 0, 1
    NTFN_QOS_RELIABLE, NTFN_QOS_PAYLOAD, NTFN_QOS_PURGE_ON_NTFN = 1, 2, 4
    NTFN_GROUPING_CLASS_TIME = 1
    NTFN_GROUPING_TYPE_SUMMARY, NTFN_GROUPING_TYPE_LAST = 1, 2
    NTFN_GROUPING_FOREVER = -1

    def register(self, reg_list: list, count: int | None = None) -> None:
        """DBMS_AQ.REGISTER: ``reg_list`` of SYS.AQ$_REG_INFO (callback ``plsql://…``,
        ``mailto://…`` or ``http://…``)."""
        from .notify.register import plsql_registration, store_registration
        # every entry checked before any is stored: a refused one registers nothing
        regs = [plsql_registration(self._conn, info) for info in _reg_infos(reg_list, count)]
        for reg in regs:
            store_registration(self._conn, reg)

    def unregister(self, reg_list: list, count: int | None = None) -> None:
        from .notify.register import unregister_plsql
        unregister_plsql(self._conn, _reg_infos(reg_list, count))

    @_out("agent", "message_delivery_mode")
    def listen(self, agent_list: list, wait: int = -1, listen_delivery_mode: int = C.MSG_PERSISTENT) -> tuple:
        """DBMS_AQ.LISTEN: the first agent of ``agent_list`` with a message, and its
        delivery mode.  :raises: ORA-25254 when ``wait`` seconds pass first."""
        from .listen import listen
        return listen(self._conn, _sequence(agent_list, "agent_list"), wait, listen_delivery_mode)

    # -- conversions between PL/SQL records and python-oracledb objects -------
    @staticmethod
    def _apply_enq_options(q, o: EnqueueOptionsT | None) -> None:
        o = o or EnqueueOptionsT()
        q.enqoptions.visibility = o.visibility
        q.enqoptions.deliverymode = o.delivery_mode
        q.enqoptions.transformation = o.transformation

    @staticmethod
    def _apply_deq_options(q, o: DequeueOptionsT | None) -> None:
        o = o or DequeueOptionsT()
        d = q.deqoptions
        d.consumername = o.consumer_name
        d.mode = o.dequeue_mode
        d.navigation = o.navigation
        d.visibility = o.visibility
        wait = o.wait
        if wait is not None and (isinstance(wait, bool) or not isinstance(wait, (int, float, Decimal))
                                 or wait != wait):      # (NaN)
            # a BINARY_INTEGER field (PL/SQL refuses 'abc' there when it is assigned)
            raise ora(6502, f"dequeue_options.wait must be a number, not {type(wait).__name__}")
        d.wait = C.DEQ_WAIT_FOREVER if wait is None or wait < 0 else int(wait)
        d.msgid = o.msgid
        # a VARCHAR2(128) field: PL/SQL refuses a longer text when it is assigned (ORA-06502),
        # before python-oracledb's own limit (DPY-2075) could
        d.correlation = checked_correlation(o.correlation)
        d.condition = o.deq_condition
        d.transformation = o.transformation
        d.deliverymode = o.delivery_mode

    @staticmethod
    def _message(p: MessagePropertiesT | None, payload: Any) -> MessageProperties:
        p = p or MessagePropertiesT()
        return MessageProperties(payload=payload, correlation=checked_correlation(p.correlation), delay=p.delay or 0,
                                 exceptionq=p.exception_queue,
                                 expiration=-1 if p.expiration is None else p.expiration,
                                 priority=1 if p.priority is None else p.priority,
                                 recipients=p.recipient_list, sender_id=p.sender_id,
                                 original_msgid=p.original_msgid)

    @staticmethod
    def _record(m: MessageProperties) -> MessagePropertiesT:
        return MessagePropertiesT(priority=m.priority, delay=m.delay, expiration=m.expiration,
                                  correlation=m.correlation, attempts=m.attempts,
                                  recipient_list=list(m.recipients), exception_queue=m.exceptionq,
                                  enqueue_time=m.enqtime, state=m.state, sender_id=m.sender_id,
                                  original_msgid=m.original_msgid,
                                  transaction_group=m.transaction_group,
                                  delivery_mode=m.deliverymode)


# DBMS_AQ's collection types, called as constructors in PL/SQL:
# ``DBMS_AQ.AQ$_AGENT_LIST_T(SYS.AQ$_AGENT(...), ...)`` and ``DBMS_AQ.AQ$_RECIPIENT_LIST_T(...)``
def _agent_list(self: DbmsAq, *agents: Agent) -> list:
    return list(agents)


setattr(DbmsAq, "aq$_agent_list_t", _agent_list)
setattr(DbmsAq, "aq$_recipient_list_t", _agent_list)

