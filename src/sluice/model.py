"""The value objects of the AQ API: agents, message properties, enqueue and
dequeue options — with python-oracledb's attribute names and defaults.

``Agent`` is ``SYS.AQ$_AGENT``.  ``MessageProperties`` is both what the
application fills in before ``enqone`` and what ``deqone`` hands back (then
with the read-only attributes ``msgid``, ``enqtime``, ``attempts`` and
``state`` set), exactly like ``oracledb.MessageProperties``.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from . import constants as C
from .charset import fits
from .errors import InterfaceError, dpy, ora


@dataclass(frozen=True, slots=True)
class Agent:
    """``SYS.AQ$_AGENT(name, address, protocol)``: a producer or consumer."""

    name: str | None = None
    address: str | None = None
    protocol: int = 0

    def __post_init__(self) -> None:
        if self.name is not None and not isinstance(self.name, str):
            raise InterfaceError("Agent.name must be a string or None")
        if self.address is not None and not isinstance(self.address, str):
            raise InterfaceError("Agent.address must be a string or None")
        if not isinstance(self.protocol, int):
            raise InterfaceError("Agent.protocol must be an integer")
        check_int64("Agent.protocol", self.protocol)    # the stores' 64-bit column


def _check_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InterfaceError(f"{name} must be an integer, not {type(value).__name__}")
    return value


# DELAY and EXPIRATION are BINARY_INTEGERs in Oracle (python-oracledb keeps them in an int32_t):
# beyond that range they overflow, as in PL/SQL (ORA-01426).  PRIORITY "can be any number,
# including negative numbers" (seed 004): any integer the stores' 64-bit column holds.
# (A propagated batch is held to the same limits: streams.propagation.wire.)
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


def _check_int32(name: str, value: Any) -> int:
    _check_int(name, value)
    if not INT32_MIN <= value <= INT32_MAX:
        raise ora(1426, f"{name} {value} is outside {INT32_MIN}..{INT32_MAX}")
    return value


def check_int64(name: str, value: int) -> int:
    """``value`` (an int) if the stores' 64-bit columns hold it, else ORA-01426."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ora(1426, f"{name} {value} is outside {INT64_MIN}..{INT64_MAX}")
    return value


def check_flag(name: str, value: Any) -> bool:
    """A BOOLEAN argument of a package procedure: TRUE, FALSE (or 1, 0) or NULL (FALSE).
    :raises: InterfaceError for anything else (a string is no flag, however it reads)."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise InterfaceError(f"{name} must be TRUE or FALSE")


def check_priority(value: Any) -> int:
    return check_int64("priority", _check_int("priority", value))


# message_properties_t.correlation and dequeue_options_t.correlation are VARCHAR2(128),
# checked where a message or a dequeue reaches the database (python-oracledb's setters
# take any string)
CORRELATION_BYTES = 128


def checked_correlation(value: Any) -> Any:
    """A correlation where a message or a dequeue reaches the database (the queue table's
    CORRID, message_properties_t / dequeue_options_t.correlation: VARCHAR2(128) in bytes):
    itself, or ORA-06502 "character string buffer too small"."""
    return fits(value, CORRELATION_BYTES, "correlation") if type(value) is str else value


def _check_str(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InterfaceError(f"{name} must be a string, not {type(value).__name__}")
    return value


# The longest values python-oracledb (Thin) sends for these, in UTF-8 bytes; one more is
# DPY-2075 and leaves the attribute as it was.
CORRELATION_MAX, EXCEPTIONQ_MAX, AGENT_NAME_MAX, TRANSFORMATION_MAX = 128, 51, 30, 61


def _check_length(value: Any, limit: int) -> None:
    # len() first: a str of at most limit/4 characters cannot exceed limit bytes
    if type(value) is str and len(value) * 4 > limit and len(value.encode("utf-8", "surrogatepass")) > limit:
        raise dpy(2075, "value", limit)


def _checked_text(name: str, value: Any, limit: int) -> str | None:
    _check_str(name, value)
    _check_length(value, limit)
    return value


class _LimitedText:
    """An option python-oracledb limits to ``limit`` UTF-8 bytes (DPY-2075), kept in the
    slot ``_<name>``; ``quoted``: a quoted name's double quotes do not count."""

    def __init__(self, limit: int, quoted: bool = False) -> None:
        self.limit, self.quoted = limit, quoted

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj, self.slot)

    def __set__(self, obj: Any, value: str | None) -> None:
        bare = value
        if self.quoted and type(value) is str and len(value) > 1 and value[0] == value[-1] == '"':
            bare = value[1:-1]
        _check_length(bare, self.limit)
        setattr(obj, self.slot, value)


class MessageProperties:
    """Properties of one message (python-oracledb ``MessageProperties``)."""

    __slots__ = (
        "payload", "_priority", "_correlation", "_delay", "_expiration", "_exceptionq",
        "_recipients", "_sender_id", "_original_msgid",
        # read-only, filled in by enqueue/dequeue
        "_msgid", "_enqtime", "_attempts", "_state", "_deliverymode", "_transaction_group",
        "_consumer_name",
    )

    def __init__(self, payload: Any = None, correlation: str | None = None, delay: int = 0,
                 exceptionq: str | None = None, expiration: int = -1, priority: int = 0,
                 recipients: list | None = None, sender_id: Agent | None = None,
                 original_msgid: bytes | None = None) -> None:
        # the setters' checks, inline: this runs once per message on the hot path
        self.payload = payload
        if correlation is not None and (type(correlation) is not str or len(correlation) > 32):
            _checked_text("correlation", correlation, CORRELATION_MAX)
        self._correlation = correlation
        # (the ranges as literals: constants load faster than globals, once per message)
        self._delay = delay if type(delay) is int and -2147483648 <= delay <= 2147483647 else \
            _check_int32("delay", 0 if delay is None else delay)
        if exceptionq is not None and (type(exceptionq) is not str or len(exceptionq) > 12):
            _checked_text("exceptionq", exceptionq, EXCEPTIONQ_MAX)
        self._exceptionq = exceptionq
        self._expiration = expiration if type(expiration) is int and -2147483648 <= expiration <= 2147483647 \
            else _check_int32("expiration", -1 if expiration is None else expiration)
        self._priority = priority if type(priority) is int and \
            -9223372036854775808 <= priority <= 9223372036854775807 else \
            check_priority(0 if priority is None else priority)
        if recipients:
            self.recipients = recipients
        else:
            self._recipients = []
        if sender_id is not None:
            self.sender_id = sender_id
        else:
            self._sender_id = None
        if original_msgid is not None:
            self.original_msgid = original_msgid
        else:
            self._original_msgid = None
        self._msgid: bytes | None = None
        self._enqtime: _dt.datetime | None = None
        self._attempts = 0
        self._state = C.MSG_READY
        self._deliverymode = 0        # python-oracledb: no delivery mode until a dequeue sets one
        self._transaction_group: str | None = None
        self._consumer_name: str | None = None

    # -- settable ---------------------------------------------------------
    @property
    def priority(self) -> int:
        return self._priority

    @priority.setter
    def priority(self, value: int) -> None:
        self._priority = check_priority(0 if value is None else value)

    @property
    def correlation(self) -> str | None:
        return self._correlation

    @correlation.setter
    def correlation(self, value: str | None) -> None:
        self._correlation = _checked_text("correlation", value, CORRELATION_MAX)

    @property
    def delay(self) -> int:
        return self._delay

    @delay.setter
    def delay(self, value: int) -> None:
        self._delay = _check_int32("delay", 0 if value is None else value)

    @property
    def expiration(self) -> int:
        return self._expiration

    @expiration.setter
    def expiration(self, value: int) -> None:
        self._expiration = _check_int32("expiration", -1 if value is None else value)

    @property
    def exceptionq(self) -> str | None:
        return self._exceptionq

    @exceptionq.setter
    def exceptionq(self, value: str | None) -> None:
        self._exceptionq = _checked_text("exceptionq", value, EXCEPTIONQ_MAX)

    @property
    def recipients(self) -> list:
        return self._recipients

    @recipients.setter
    def recipients(self, value: list) -> None:
        if value is None:
            value = []
        if not isinstance(value, (list, tuple)):
            raise InterfaceError("recipients must be a list")
        for recipient in value:
            _check_length(recipient.name if isinstance(recipient, Agent) else recipient, AGENT_NAME_MAX)
        self._recipients = list(value)

    @property
    def sender_id(self) -> Agent | None:
        return self._sender_id

    @sender_id.setter
    def sender_id(self, value: Agent | None) -> None:
        if value is not None and not isinstance(value, Agent):
            raise InterfaceError("sender_id must be a sluice.Agent")
        self._sender_id = value

    @property
    def original_msgid(self) -> bytes | None:
        return self._original_msgid

    @original_msgid.setter
    def original_msgid(self, value: bytes | None) -> None:
        if value is not None and not isinstance(value, (bytes, bytearray)):
            raise InterfaceError("original_msgid must be bytes")
        self._original_msgid = None if value is None else bytes(value)

    # -- read-only --------------------------------------------------------
    @property
    def msgid(self) -> bytes | None:
        return self._msgid

    @property
    def enqtime(self) -> _dt.datetime | None:
        t = self._enqtime
        if isinstance(t, float):  # kept as POSIX seconds until somebody asks
            # message_properties_t.enqueue_time is a DATE: whole seconds, as python-oracledb
            # reads it (the queue table's ENQ_TIME keeps the fraction)
            t = self._enqtime = _dt.datetime.fromtimestamp(int(t))
        return t

    @property
    def attempts(self) -> int:
        return self._attempts

    @property
    def state(self) -> int:
        return self._state

    @property
    def deliverymode(self) -> int:
        return self._deliverymode

    @property
    def transaction_group(self) -> str | None:
        """The enqueuing transaction, for TRANSACTIONAL queue tables."""
        return self._transaction_group

    @property
    def consumer_name(self) -> str | None:
        return self._consumer_name

    def __repr__(self) -> str:
        mid = self._msgid.hex().upper() if self._msgid else None
        return (f"<MessageProperties msgid={mid} priority={self._priority} "
                f"correlation={self._correlation!r} state={self._state} attempts={self._attempts}>")


class EnqOptions:
    """Enqueue options (python-oracledb ``EnqOptions``)."""

    __slots__ = ("_visibility", "_deliverymode", "_transformation")

    def __init__(self) -> None:
        self._visibility = C.ENQ_ON_COMMIT
        self._deliverymode = C.MSG_PERSISTENT
        self._transformation: str | None = None

    transformation = _LimitedText(TRANSFORMATION_MAX)

    @property
    def visibility(self) -> int:
        return self._visibility

    @visibility.setter
    def visibility(self, value: int) -> None:
        if value not in (C.ENQ_IMMEDIATE, C.ENQ_ON_COMMIT):
            raise InterfaceError(f"invalid enqueue visibility {value!r}")
        self._visibility = value

    @property
    def deliverymode(self) -> int:
        # write-only in python-oracledb: reading it is an AttributeError there too
        raise AttributeError("deliverymode can only be written")

    @deliverymode.setter
    def deliverymode(self, value: int) -> None:
        if value not in (C.MSG_PERSISTENT, C.MSG_BUFFERED, C.MSG_PERSISTENT_OR_BUFFERED):
            raise InterfaceError(f"invalid enqueue delivery mode {value!r}")
        # Oracle enqueues "persistent or buffered" as a persistent message
        self._deliverymode = C.MSG_PERSISTENT if value == C.MSG_PERSISTENT_OR_BUFFERED else value


class DeqOptions:
    """Dequeue options (python-oracledb ``DeqOptions``)."""

    __slots__ = ("condition", "_consumername", "_correlation", "_deliverymode", "_mode", "msgid",
                 "_navigation", "_transformation", "_visibility", "_wait")

    def __init__(self) -> None:
        self.condition: str | None = None
        self._consumername: str | None = None
        self._correlation: str | None = None
        self._deliverymode = C.MSG_PERSISTENT
        self._mode = C.DEQ_REMOVE
        self.msgid: bytes | None = None
        self._navigation = C.DEQ_NEXT_MSG
        self._transformation: str | None = None
        self._visibility = C.DEQ_ON_COMMIT
        self._wait = C.DEQ_WAIT_FOREVER

    consumername = _LimitedText(AGENT_NAME_MAX, quoted=True)
    correlation = _LimitedText(CORRELATION_MAX)
    transformation = _LimitedText(TRANSFORMATION_MAX)

    @property
    def mode(self) -> int:
        return self._mode

    @mode.setter
    def mode(self, value: int) -> None:
        if value not in (C.DEQ_BROWSE, C.DEQ_LOCKED, C.DEQ_REMOVE, C.DEQ_REMOVE_NODATA):
            raise InterfaceError(f"invalid dequeue mode {value!r}")
        self._mode = value

    @property
    def navigation(self) -> int:
        return self._navigation

    @navigation.setter
    def navigation(self, value: int) -> None:
        if value not in (C.DEQ_FIRST_MSG, C.DEQ_NEXT_MSG, C.DEQ_NEXT_TRANSACTION):
            raise InterfaceError(f"invalid dequeue navigation {value!r}")
        self._navigation = value

    @property
    def visibility(self) -> int:
        return self._visibility

    @visibility.setter
    def visibility(self, value: int) -> None:
        if value not in (C.DEQ_IMMEDIATE, C.DEQ_ON_COMMIT):
            raise InterfaceError(f"invalid dequeue visibility {value!r}")
        self._visibility = value

    @property
    def wait(self) -> int:
        return self._wait

    @wait.setter
    def wait(self, value: int) -> None:
        value = _check_int("wait", value)
        if not 0 <= value <= C.DEQ_WAIT_FOREVER:     # (python-oracledb: a uint32_t)
            raise InterfaceError("wait must be DEQ_NO_WAIT, a number of seconds or DEQ_WAIT_FOREVER")
        self._wait = value

    @property
    def deliverymode(self) -> int:
        raise AttributeError("deliverymode can only be written")   # as EnqOptions.deliverymode

    @deliverymode.setter
    def deliverymode(self, value: int) -> None:
        if value not in (C.MSG_PERSISTENT, C.MSG_BUFFERED, C.MSG_PERSISTENT_OR_BUFFERED):
            raise InterfaceError(f"invalid dequeue delivery mode {value!r}")
        self._deliverymode = value
