"""IDAP request documents → Python requests (seed 004 Tables 17-1 to 17-3).

Input is a normalised, validated :class:`~.schema.Envelope`; the schema has checked
structure and simple types already, so what is left is meaning: enumerations to
python-oracledb constants, hex message ids to bytes, counts that must agree.
Message payloads stay XML elements here: how one becomes a value depends on the
destination queue's payload type, which only the operation knows (:mod:`.payload`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from .. import constants as C
from ..aq.queue import MAX_DEQUEUE_BATCH
from ..errors import ora
from .schema import _CANONICAL_TAGS, AQ_NS, Envelope

_Q = f"{{{AQ_NS}}}"

VISIBILITY = {"ON_COMMIT": (C.ENQ_ON_COMMIT, C.DEQ_ON_COMMIT),
              "IMMEDIATE": (C.ENQ_IMMEDIATE, C.DEQ_IMMEDIATE)}
DEQUEUE_MODES = {"BROWSE": C.DEQ_BROWSE, "LOCKED": C.DEQ_LOCKED, "REMOVE": C.DEQ_REMOVE,
                 "REMOVE_NODATA": C.DEQ_REMOVE_NODATA}
NAVIGATION = {"FIRST_MESSAGE": C.DEQ_FIRST_MSG, "NEXT_MESSAGE": C.DEQ_NEXT_MSG,
              "NEXT_TRANSACTION": C.DEQ_NEXT_TRANSACTION}


@dataclass(frozen=True)
class Destination:
    """``<destination lookup_type="DATABASE|LDAP">schema.queue</destination>``."""

    name: str
    lookup_type: str = "DATABASE"


@dataclass(frozen=True)
class AgentRef:
    """sender_id, recipient, reply_to: (agent_name, address, protocol) or an LDAP alias."""

    name: str | None = None
    address: str | None = None
    protocol: int | None = None
    alias: str | None = None


@dataclass
class MessageHeader:
    message_id: str | None = None
    correlation: str | None = None
    delay: int | None = None
    expiration: int | None = None
    priority: int | None = None
    delivery_count: int | None = None
    sender_id: AgentRef | None = None
    recipient_list: list[AgentRef] | None = None
    message_state: str | None = None
    exception_queue: str | None = None


@dataclass
class Message:
    number: int | None
    header: MessageHeader
    payload: etree._Element | None      # the one element inside <message_payload>


@dataclass
class SendRequest:
    """AQXmlSend (single-consumer queue) or AQXmlPublish (multi-consumer queue/topic)."""

    method: str
    destination: Destination
    messages: list[Message]
    visibility: str = "ON_COMMIT"
    transformation: str | None = None
    commit: bool = False

    @property
    def publish(self) -> bool:
        return self.method == "AQXmlPublish"


@dataclass
class Selector:
    correlation: str | None = None
    message_id: bytes | None = None
    condition: str | None = None


@dataclass
class ReceiveRequest:
    destination: Destination
    consumer_name: str | None = None
    wait_time: int | None = None          # None: DBMS_AQ's default, wait forever
    selector: Selector = field(default_factory=Selector)
    batch_size: int = 1
    visibility: str = "ON_COMMIT"
    dequeue_mode: str = "REMOVE"
    navigation_mode: str = "NEXT_MESSAGE"
    transformation: str | None = None
    commit: bool = False
    method: str = "AQXmlReceive"


@dataclass
class RegisterRequest:
    destination: Destination
    notify_url: str
    consumer_name: str | None = None
    commit: bool = False
    method: str = "AQXmlRegister"


@dataclass
class EndTransaction:
    """AQXmlCommit or AQXmlRollback on their own."""

    method: str

    @property
    def commit(self) -> bool:
        return self.method == "AQXmlCommit"


Request = SendRequest | ReceiveRequest | RegisterRequest | EndTransaction


# -- helpers -------------------------------------------------------------------
# After normalising, every IDAP element carries the schema's qualified name (the
# schema declares all of them globally): the local name is one dictionary lookup.
_LOCAL_NAME = _CANONICAL_TAGS.get


def _kids(el: etree._Element) -> dict[str, etree._Element]:
    """The IDAP children of a normalised element by local name (the first of each)."""
    out: dict[str, etree._Element] = {}
    for c in el:
        name = _LOCAL_NAME(c.tag)
        if name is not None and name not in out:
            out[name] = c
    return out


def text(el: etree._Element | None) -> str | None:
    """The element's text, stripped; None for a missing element."""
    if el is None:
        return None
    value = el.text
    return value.strip() if value else ""


def _int_of(el: etree._Element | None, name: str) -> int | None:
    if el is None:
        return None
    value = text(el)
    try:
        return int(value)
    except ValueError:
        raise ora(1722, f"{name} {value!r}") from None


def msgid_bytes(text_value: str) -> bytes:
    """A message id as the responses print it (hex) back to bytes.  :raises: ORA-01465."""
    digits = "".join(text_value.split())
    try:
        return bytes.fromhex(digits)
    except ValueError:
        raise ora(1465) from None


def agent_ref(el: etree._Element | None) -> AgentRef | None:
    if el is None:
        return None
    k = _kids(el)
    return AgentRef(text(k.get("agent_name")) or None, text(k.get("address")) or None,
                    _int_of(k.get("protocol"), "protocol"), text(k.get("agent_alias")) or None)


def _destination(d: etree._Element) -> Destination:
    return Destination(text(d) or "", (d.get("lookup_type") or "DATABASE").strip().upper())


# -- requests --------------------------------------------------------------------
def parse_request(env: Envelope) -> Request:
    """The request of a normalised, validated envelope.

    :raises DatabaseError: ORA-19202 when the document's parts disagree (a
        message_count that is not the number of messages), ORA-01722 / ORA-01465
        for numbers and message ids that are not.
    """
    el, method = env.request, env.method
    k = _kids(el)
    commit = "AQXmlCommit" in k
    if method in ("AQXmlSend", "AQXmlPublish"):
        return _send(k, method, commit)
    if method == "AQXmlReceive":
        return _receive(_kids(k["consumer_options"]), commit)
    if method == "AQXmlRegister":
        o = _kids(k["register_options"])
        return RegisterRequest(_destination(o["destination"]), text(o.get("notify_url")) or "",
                               text(o.get("consumer_name")) or None, commit)
    return EndTransaction(method)


def _send(k: dict[str, etree._Element], method: str, commit: bool) -> SendRequest:
    o = _kids(k["producer_options"])
    messages, count_el = [], None
    for c in k["message_set"]:
        name = _LOCAL_NAME(c.tag)
        if name == "message":
            messages.append(_message(c))
        elif name == "message_count" and count_el is None:
            count_el = c
    count = _int_of(count_el, "message_count")
    if count is not None and count != len(messages):
        raise ora(19202, f"message_count is {count} but the message_set holds {len(messages)} messages")
    if not messages:
        raise ora(19202, f"{method}: the message_set holds no message")
    if len(messages) > 1:
        numbers = [m.number for m in messages if m.number is not None]
        if len(set(numbers)) != len(numbers):
            raise ora(19202, f"{method}: message_number repeats within the message_set")
    visibility, transformation = o.get("visibility"), o.get("transformation")
    return SendRequest(method, _destination(o["destination"]), messages,
                       "ON_COMMIT" if visibility is None else text(visibility) or "ON_COMMIT",
                       None if transformation is None else text(transformation) or None, commit)


# message_header children -> how their text is read (absent ones keep the default None)
_HEADER_TEXT = ("message_id", "correlation", "exception_queue")       # empty: None
_HEADER_INT = ("delay", "expiration", "priority", "delivery_count")


def _message(m: etree._Element) -> Message:
    k = _kids(m)
    header = MessageHeader()
    for name, el in _kids(k["message_header"]).items():
        if name in _HEADER_TEXT:
            setattr(header, name, text(el) or None)
        elif name in _HEADER_INT:
            setattr(header, name, _int_of(el, name))
        elif name == "sender_id":
            header.sender_id = agent_ref(el)
        elif name == "recipient_list":
            header.recipient_list = [agent_ref(r) for r in el.iterchildren(_Q + "recipient")]
        elif name == "message_state":
            header.message_state = text(el)
    payload_el = k.get("message_payload")
    payload = None
    if payload_el is not None:
        elements = [c for c in payload_el if isinstance(c.tag, str)]
        if len(elements) > 1:
            raise ora(19202, "a message_payload holds one element")
        payload = elements[0] if elements else None
    return Message(_int_of(k.get("message_number"), "message_number"), header, payload)


def _receive(o: dict[str, etree._Element], commit: bool) -> ReceiveRequest:
    selector = Selector()
    if "selector" in o:
        sel = _kids(o["selector"])
        mid = text(sel.get("message_id"))
        selector = Selector(text(sel.get("correlation")), msgid_bytes(mid) if mid is not None else None,
                            text(sel.get("condition")))
    batch = _int_of(o.get("batch_size"), "batch_size")
    if batch is not None and not 1 <= batch <= MAX_DEQUEUE_BATCH:
        raise ora(19202, f"batch_size must be between 1 and {MAX_DEQUEUE_BATCH}, not {batch}")
    wait = _int_of(o.get("wait_time"), "wait_time")
    if wait is not None and wait < 0:
        wait = None   # a negative wait is DBMS_AQ.FOREVER (-1)
    return ReceiveRequest(
        _destination(o["destination"]), consumer_name=text(o.get("consumer_name")) or None,
        wait_time=wait, selector=selector, batch_size=batch or 1,
        visibility=text(o.get("visibility")) or "ON_COMMIT",
        dequeue_mode=text(o.get("dequeue_mode")) or "REMOVE",
        navigation_mode=text(o.get("navigation_mode")) or "NEXT_MESSAGE",
        transformation=text(o.get("transformation")) or None, commit=commit)
