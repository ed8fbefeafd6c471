"""A Python client of the AQ servlet: IDAP documents over HTTP (seed 004), for programs
that reach queues through ``sluice serve`` (or Oracle's own servlet) instead of a
database connection.

::

    from sluice.idap import Client

    with Client("http://127.0.0.1:8080", agent="john", password="welcome") as aq:
        ids = aq.send("AQUSER.RAW_MSGQ", [b"hello"], correlation="greeting")
        aq.commit()
        for m in aq.receive("AQUSER.RAW_MSGQ", wait_time=5, commit=True):
            print(m.message_id, m.raw)

One Client is one HTTP session (the servlet's cookie): its requests share one database
transaction until :meth:`commit` or :meth:`rollback` (or ``commit=True`` on a request,
the piggy-backed ``<AQXmlCommit/>``).  Every SOAP Fault is raised as the Sluice error of
its ORA code, so client code catches the same exceptions as with a connection.
Requests are written in the schema's element order, so a validating servlet takes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import httpx
from lxml import etree

from ..errors import DatabaseError, InterfaceError, ora, remote_error
from ..model import Agent
from .schema import AQ_NS, SOAP_NS, parse_xml
from .serialise import _BAD_CHARS

DEFAULT_SERVLET = "/aqserv/servlet/AQServlet"
_A = f"{{{AQ_NS}}}"
_S = f"{{{SOAP_NS}}}"


@dataclass(frozen=True)
class ReceivedMessage:
    """One message of an AQXmlReceiveResponse: its header and payload element."""

    message_id: str                       # RAW(16) in hexadecimal, as the servlet writes it
    correlation: str | None
    priority: int | None
    delay: int | None
    expiration: int | None
    delivery_count: int | None
    sender_id: Agent | None
    message_state: int | None             # MSG_READY 0 … MSG_EXPIRED 3
    exception_queue: str | None
    payload: etree._Element | None        # the payload element (<raw>, <EMP_TYP>, <jms_text_message> …)

    @property
    def raw(self) -> bytes | None:
        """The payload of a RAW queue as bytes (None for other payloads)."""
        if self.payload is None or etree.QName(self.payload).localname.lower() != "raw":
            return None
        return bytes.fromhex("".join((self.payload.text or "").split()))


class Client:
    """An HTTP session with the AQ servlet at ``url`` (``http://host:port``; ``servlet``
    is the path).  ``agent``/``password``: HTTP Basic credentials of an AQ agent
    (DBMS_AQADM.CREATE_AQ_AGENT with enable_http)."""

    def __init__(self, url: str, agent: str, password: str, servlet: str = DEFAULT_SERVLET,
                 timeout: float = 60.0) -> None:
        for name, value in (("url", url), ("agent", agent), ("password", password), ("servlet", servlet)):
            if not isinstance(value, str):
                raise InterfaceError(f"{name} must be a string, not {type(value).__name__}")
        if ":" in agent:   # HTTP Basic cannot carry it: the servlet would read another agent
            raise InterfaceError(f"agent {agent!r}: an agent name cannot hold ':'")
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not timeout > 0):
            raise InterfaceError(f"timeout must be a positive number of seconds or None, not {timeout!r}")
        try:   # an address the client cannot reach at all is refused here, not at each request
            address = httpx.URL(url).join(servlet)
        except httpx.InvalidURL as e:
            raise ora(12154, f"the AQ servlet at {url!r} {servlet!r} ({e})") from None
        if address.scheme not in ("http", "https") or not address.host:
            raise ora(12154, f"the AQ servlet at {url!r} {servlet!r} (an http:// or https:// URL with a host)")
        self.servlet = servlet
        self._http = httpx.Client(base_url=url, auth=(agent, password), timeout=timeout)

    # -- requests -----------------------------------------------------------------
    def send(self, destination: str, payloads: Sequence[bytes | str | etree._Element], *, correlation: str | None = None,
             priority: int | None = None, delay: int | None = None, expiration: int | None = None,
             sender_id: Agent | str | None = None, recipients: Iterable[Agent | str] = (),
             exception_queue: str | None = None, visibility: str | None = None,
             transformation: str | None = None, commit: bool = False, method: str = "AQXmlSend") -> list[str]:
        """AQXmlSend: enqueue ``payloads`` (one message each, the same header) and return
        their message ids.  A payload is ``bytes`` (a RAW queue), an lxml element or the
        XML text of one (an object type as ``<EMP_TYP>…</EMP_TYP>``, a JMS message as
        ``<jms_text_message>…``, an XMLTYPE document)."""
        if method not in ("AQXmlSend", "AQXmlPublish"):
            raise InterfaceError(f"method must be 'AQXmlSend' or 'AQXmlPublish', not {method!r}")
        if isinstance(payloads, (str, bytes, bytearray, memoryview, etree._Element)) \
                or not isinstance(payloads, Sequence):
            raise InterfaceError(f"payloads must be a list of payloads, not {type(payloads).__name__}")
        if not payloads:
            raise InterfaceError("send needs at least one payload")
        _texts(destination=destination, correlation=correlation, exception_queue=exception_queue,
               visibility=visibility, transformation=transformation)
        _numbers(priority=priority, delay=delay, expiration=expiration)
        sender_id = _as_agent("sender_id", sender_id)
        if isinstance(recipients, (str, bytes, Agent)) or not isinstance(recipients, Iterable):
            raise InterfaceError(f"recipients must be a list of agents, not {type(recipients).__name__}")
        listed = [_as_agent("a recipient", r) for r in recipients]
        request = etree.Element(_A + method, nsmap={None: AQ_NS})
        options = _sub(request, "producer_options")
        _sub(options, "destination", destination)
        _sub(options, "visibility", visibility)
        _sub(options, "transformation", transformation)
        mset = _sub(request, "message_set")
        _sub(mset, "message_count", len(payloads))
        for number, payload in enumerate(payloads, 1):
            message = _sub(mset, "message")
            _sub(message, "message_number", number)
            header = _sub(message, "message_header")
            for name, value in (("correlation", correlation), ("delay", delay),
                                ("expiration", expiration), ("priority", priority)):
                _sub(header, name, value)
            _agent(_sub(header, "sender_id"), sender_id)
            if listed:
                rlist = _sub(header, "recipient_list")
                for r in listed:
                    _agent(_sub(rlist, "recipient"), r)
            _sub(header, "exception_queue", exception_queue)
            _sub(message, "message_payload").append(_payload_element(payload))
        result = self._call(request, commit)
        return [e.text for e in result.iter(_A + "message_id")]

    def publish(self, destination: str, payloads: Sequence[bytes | str | etree._Element], **options) -> list[str]:
        """AQXmlPublish: :meth:`send` to a multi-consumer queue (a topic); ``recipients``
        overrides its subscribers."""
        return self.send(destination, payloads, method="AQXmlPublish", **options)

    def receive(self, destination: str, *, consumer_name: str | None = None, wait_time: int | None = 0,
                correlation: str | None = None, message_id: str | None = None, condition: str | None = None,
                batch_size: int | None = None, visibility: str | None = None,
                dequeue_mode: str | None = None, navigation_mode: str | None = None,
                transformation: str | None = None, commit: bool = False) -> list[ReceivedMessage]:
        """AQXmlReceive: dequeue up to ``batch_size`` messages (one by default), waiting
        ``wait_time`` seconds (None: until one arrives); an empty list when none came."""
        _texts(destination=destination, consumer_name=consumer_name, correlation=correlation,
               message_id=message_id, condition=condition, visibility=visibility, dequeue_mode=dequeue_mode,
               navigation_mode=navigation_mode, transformation=transformation)
        _numbers(wait_time=wait_time, batch_size=batch_size)
        request = etree.Element(_A + "AQXmlReceive", nsmap={None: AQ_NS})
        options = _sub(request, "consumer_options")
        _sub(options, "destination", destination)
        _sub(options, "consumer_name", consumer_name)
        _sub(options, "wait_time", wait_time)
        if correlation is not None or message_id is not None or condition is not None:
            selector = _sub(options, "selector")
            _sub(selector, "correlation", correlation)
            _sub(selector, "message_id", message_id)
            _sub(selector, "condition", condition)
        for name, value in (("batch_size", batch_size), ("visibility", visibility),
                            ("dequeue_mode", dequeue_mode), ("navigation_mode", navigation_mode),
                            ("transformation", transformation)):
            _sub(options, name, value)
        result = self._call(request, commit)
        return [_message(m) for m in result.iter(_A + "message")]

    def register(self, destination: str, notify_url: str, consumer_name: str | None = None,
                 commit: bool = False) -> None:
        """AQXmlRegister: notifications of messages for ``consumer_name`` (multi-consumer
        queues) POSTed to an ``http://`` URL, mailed to ``mailto:``, or a ``plsql://``
        procedure called."""
        _texts(destination=destination, notify_url=notify_url, consumer_name=consumer_name)
        request = etree.Element(_A + "AQXmlRegister", nsmap={None: AQ_NS})
        options = _sub(request, "register_options")
        _sub(options, "destination", destination)
        _sub(options, "consumer_name", consumer_name)
        _sub(options, "notify_url", notify_url)
        self._call(request, commit)

    def commit(self) -> None:
        """AQXmlCommit: commit the HTTP session's transaction."""
        self._call(etree.Element(_A + "AQXmlCommit", nsmap={None: AQ_NS}), False)

    def rollback(self) -> None:
        """AQXmlRollback: undo the HTTP session's transaction."""
        self._call(etree.Element(_A + "AQXmlRollback", nsmap={None: AQ_NS}), False)

    # -- plumbing ------------------------------------------------------------------
    def _call(self, request: etree._Element, commit: bool) -> etree._Element:
        """POST ``request`` in a SOAP envelope; the response element, or the Fault raised."""
        if commit:
            _sub(request, "AQXmlCommit")
        envelope = etree.Element(_S + "Envelope", nsmap={"SOAP-ENV": SOAP_NS})
        etree.SubElement(envelope, _S + "Body").append(request)
        body = etree.tostring(envelope, xml_declaration=True, encoding="UTF-8")
        try:
            r = self._http.post(self.servlet, content=body, headers={"Content-Type": "text/xml"})
        except httpx.HTTPError as e:
            raise ora(12541, f"the AQ servlet at {self._http.base_url} ({e})") from e
        if r.status_code == 401:
            raise ora(1017)
        if r.status_code not in (200, 500) or not r.headers.get("content-type", "").startswith("text/xml"):
            raise DatabaseError(f"the AQ servlet answered HTTP {r.status_code}: {r.text[:200]}")
        root = parse_xml(r.content)
        response = root.find(_S + "Body")
        fault = response.find(_S + "Fault") if response is not None else None
        if fault is not None:
            status = fault.find(f"detail/{_A}status_response")
            code = status.findtext(_A + "error_code") if status is not None else None
            message = (status.findtext(_A + "error_message") if status is not None else None) \
                or fault.findtext("faultstring") or "SOAP Fault"
            raise remote_error(int(code) if code and code.isdigit() else None, message)
        if response is None or len(response) == 0:
            raise DatabaseError("the AQ servlet's answer has no response element")
        return response[0]

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _sub(parent: etree._Element, name: str, value: object = "") -> etree._Element | None:
    """Append ``<name>value</name>``; nothing for a None value (an omitted option)."""
    if value is None:
        return None
    el = etree.SubElement(parent, _A + name)
    if value != "":
        el.text = str(value)
    return el


def _texts(**values: object) -> None:
    """Text options: a str or None, and only characters an XML 1.0 document can carry.
    Refused rather than escaped: a correlation, a destination or a condition is data the
    servlet matches, so a stand-in for the character would send another value.
    :raises: InterfaceError (not a string), ORA-31011 (what the servlet's parser would say)."""
    for name, value in values.items():
        if value is None:
            continue
        if not isinstance(value, str):
            raise InterfaceError(f"{name} must be a string, not {type(value).__name__}")
        bad = _BAD_CHARS.search(value)
        if bad:
            raise ora(31011, f"{name} holds a character XML 1.0 cannot carry ({ascii(bad.group())} "
                             f"at position {bad.start()})")


def _numbers(**values: object) -> None:
    for name, value in values.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InterfaceError(f"{name} must be an integer, not {type(value).__name__}")


def _as_agent(what: str, agent: object) -> Agent | None:
    """An agent given as Agent or its name, checked as :func:`_texts` checks text."""
    if agent is None:
        return None
    if isinstance(agent, str):
        agent = Agent(agent)
    if not isinstance(agent, Agent):
        raise InterfaceError(f"{what} must be an Agent or an agent name, not {type(agent).__name__}")
    _texts(**{f"{what} name": agent.name, f"{what} address": agent.address})
    return agent


def _agent(el: etree._Element, agent: Agent | None) -> None:
    if agent is None:
        return
    _sub(el, "agent_name", agent.name)
    _sub(el, "address", agent.address)
    if agent.protocol:
        _sub(el, "protocol", agent.protocol)


def _payload_element(payload) -> etree._Element:
    if isinstance(payload, (bytes, bytearray, memoryview)):
        el = etree.Element(_A + "raw")
        el.text = bytes(payload).hex().upper()
        return el
    if isinstance(payload, str):
        payload = parse_xml(payload.encode())
    if not isinstance(payload, etree._Element):
        raise InterfaceError(f"a payload is bytes, XML text or an lxml element, not {type(payload).__name__}")
    el = etree.fromstring(etree.tostring(payload))     # a copy: the caller's tree stays as it is
    if etree.QName(el).namespace is None:               # payload elements are in the IDAP namespace
        for node in el.iter():
            if isinstance(node.tag, str) and etree.QName(node).namespace is None:
                node.tag = _A + node.tag
    return el


def _message(m: etree._Element) -> ReceivedMessage:
    h = m.find(_A + "message_header")

    def number(name: str) -> int | None:
        text = h.findtext(_A + name) if h is not None else None
        return int(text) if text not in (None, "") else None

    sender = h.find(_A + "sender_id") if h is not None else None
    agent = None
    if sender is not None and len(sender):
        agent = Agent(sender.findtext(_A + "agent_name"), sender.findtext(_A + "address"),
                      int(sender.findtext(_A + "protocol") or 0))
    payload = m.find(_A + "message_payload")
    return ReceivedMessage(
        message_id=h.findtext(_A + "message_id"), correlation=h.findtext(_A + "correlation"),
        priority=number("priority"), delay=number("delay"), expiration=number("expiration"),
        delivery_count=number("delivery_count"), sender_id=agent, message_state=number("message_state"),
        exception_queue=h.findtext(_A + "exception_queue"),
        payload=payload[0] if payload is not None and len(payload) else None)
