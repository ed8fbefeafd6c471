"""IDAP responses and SOAP Faults (seed 004 Tables 17-4 to 17-6, Examples 17-16 to 17-21).

Responses are laid out as the seed prints them: ``<Envelope>`` and ``<Body>`` in the
SOAP namespace as the default namespace, the response element declaring the IDAP
namespace, ``status_response`` first (``status_code`` 0), then the result.

A Fault follows SOAP 1.1 §4.4 where Example 17-21 cannot be followed literally: its
``faultcode``/``faultstring``/``detail`` inherit the envelope namespace, which its own
SOAP schema (unqualified local elements) rejects and which SOAP clients do not read,
and its ``faultcode`` 100 is no QName.  So: ``faultcode`` is ``SOAP-ENV:Client`` or
``SOAP-ENV:Server`` (``VersionMismatch``, ``MustUnderstand`` where SOAP says so),
``faultstring`` says "Client Fault" or "Server Fault" as in the example, followed by
the error's first line, and ``detail`` holds the IDAP ``status_response`` of Table
17-6: ``status_code`` -1, ``error_code`` (the ORA number) and ``error_message`` (the
full ``ORA-NNNNN: …`` text, then any explanation on further lines, as Oracle stacks
messages).
"""

from __future__ import annotations

from typing import Any, Iterable

import re
from xml.sax.saxutils import escape

from lxml import etree

from ..errors import Error
from ..model import MessageProperties
from .payload import xml_from_value
from .schema import AQ_NS, SOAP_NS

_Q = f"{{{AQ_NS}}}"
FAULT_PREFIX = "SOAP-ENV"
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _document(root: etree._Element, stylesheet: tuple[str, str] | None) -> bytes:
    if stylesheet is not None:   # setStyleSheet(type, href) of seed 004
        pi = etree.ProcessingInstruction("xml-stylesheet",
                                         f'type="{stylesheet[0]}" href="{stylesheet[1]}"')
        root.addprevious(pi)
    return etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8")


def _sub(parent: etree._Element, name: str, text: Any = None) -> etree._Element:
    child = etree.SubElement(parent, _Q + name)
    if text is not None:
        child.text = str(text)
    return child


def _envelope(envelope_ns: str, method: str, prefixed: bool = False) -> tuple[etree._Element, etree._Element]:
    """Envelope, Body and the response element.  ``prefixed``: bind the namespaces to
    prefixes instead of making them the default — needed when an XML payload with
    elements in no namespace goes inside (lxml cannot undeclare a default namespace)."""
    env = etree.Element(f"{{{envelope_ns}}}Envelope",
                        nsmap={FAULT_PREFIX if prefixed else None: envelope_ns})
    body = etree.SubElement(env, f"{{{envelope_ns}}}Body")
    response = etree.SubElement(body, _Q + method, nsmap={"aq" if prefixed else None: AQ_NS})
    status = _sub(response, "status_response")
    _sub(status, "status_code", 0)
    return env, response


# The send, publish and status responses are the hot path (one per enqueue): they are
# written from templates, with the text escaped as lxml would; the layout is _envelope's.
_HEAD = ("<?xml version='1.0' encoding='UTF-8'?>\n<Envelope xmlns=\"{env}\"><Body><{method} xmlns=\""
         + AQ_NS + "\"><status_response><status_code>0</status_code></status_response>")
_TAIL = "</{method}></Body></Envelope>"


_FRAMES: dict[tuple[str, str], tuple[str, str]] = {}    # (envelope_ns, method) -> head, tail


def _templated(envelope_ns: str, method: str, result: str, stylesheet: tuple[str, str] | None) -> bytes:
    if stylesheet is not None:
        env, _ = _envelope(envelope_ns, method)
        return _document(env, stylesheet).replace(
            b"</status_response>", b"</status_response>" + result.encode("utf-8"), 1)
    frame = _FRAMES.get((envelope_ns, method))
    if frame is None:     # a few: the two envelope namespaces times the response methods
        frame = (_HEAD.format(env=escape(envelope_ns, {'"': "&quot;"}), method=method),
                 _TAIL.format(method=method))
        if len(_FRAMES) < 64:
            _FRAMES[(envelope_ns, method)] = frame
    return (frame[0] + result + frame[1]).encode("utf-8")


def status_response(method: str, envelope_ns: str = SOAP_NS,
                    stylesheet: tuple[str, str] | None = None) -> bytes:
    """AQXmlCommitResponse, AQXmlRollbackResponse, AQXmlRegisterResponse (Example 17-20)."""
    return _templated(envelope_ns, method, "", stylesheet)


def send_response(method: str, destination: str, msgids: Iterable[bytes], envelope_ns: str = SOAP_NS,
                  stylesheet: tuple[str, str] | None = None) -> bytes:
    """AQXmlSendResponse / AQXmlPublishResponse (Examples 17-16, 17-17): the destination
    as the request named it and one message_id per message sent, in order."""
    tag = "publish_result" if method == "AQXmlPublishResponse" else "send_result"
    ids = "".join(f"<message_id>{m.hex().upper()}</message_id>" for m in msgids)
    result = f"<{tag}><destination>{_text(destination)}</destination>{ids}</{tag}>"
    return _templated(envelope_ns, method, result, stylesheet)


def _text(value: str) -> str:
    """Character data as XML 1.0 allows it (lxml refuses what it cannot write; so do we)."""
    if _BAD_CHARS.search(value):
        raise ValueError("text holds characters XML 1.0 cannot carry")
    return escape(value)


def receive_response(destination: str, messages: list[MessageProperties], payload_type: str,
                     envelope_ns: str = SOAP_NS, stylesheet: tuple[str, str] | None = None) -> bytes:
    """AQXmlReceiveResponse (Examples 17-18, 17-19): the messages dequeued, numbered from 1;
    an empty message_set (message_count 0) when none was available in time."""
    env, response = _envelope(envelope_ns, "AQXmlReceiveResponse", prefixed=payload_type == "XMLTYPE")
    result = _sub(response, "receive_result")
    _sub(result, "destination", destination)
    mset = _sub(result, "message_set")
    _sub(mset, "message_count", len(messages))
    for number, m in enumerate(messages, 1):
        message = _sub(mset, "message")
        _sub(message, "message_number", number)
        _header(_sub(message, "message_header"), m)
        payload = _sub(message, "message_payload")
        xml_from_value(payload, m.payload, payload_type, m.enqtime)
    return _document(env, stylesheet)


def _header(h: etree._Element, m: MessageProperties) -> None:
    """message_header in the schema's order (Example 17-19 prints message_state before
    sender_id, which the schema's sequence does not allow)."""
    _sub(h, "message_id", m.msgid.hex().upper())
    if m.correlation is not None:
        _sub(h, "correlation", m.correlation)
    _sub(h, "delay", m.delay)
    if m.expiration != -1:
        _sub(h, "expiration", m.expiration)
    _sub(h, "priority", m.priority)
    _sub(h, "delivery_count", m.attempts)
    sender = _sub(h, "sender_id")
    if m.sender_id is not None:
        if m.sender_id.name is not None:
            _sub(sender, "agent_name", m.sender_id.name)
        if m.sender_id.address is not None:
            _sub(sender, "address", m.sender_id.address)
        if m.sender_id.protocol:
            _sub(sender, "protocol", m.sender_id.protocol)
    _sub(h, "message_state", m.state)
    if m.exceptionq:
        _sub(h, "exception_queue", m.exceptionq)


def error_parts(error: BaseException, explanation: str | None = None) -> tuple[str | None, str]:
    """(error_code, error_message) for a fault's status_response."""
    if isinstance(error, Error) and error.code:
        message = str(error)
        return str(error.code), message + (f"\n{explanation}" if explanation else "")
    return None, explanation or str(error)


def fault(faultcode: str, error_code: str | None, error_message: str,
          envelope_ns: str = SOAP_NS) -> bytes:
    """A SOAP 1.1 Fault.  ``faultcode``: Client, Server, VersionMismatch or MustUnderstand.
    A character XML 1.0 cannot carry (an error may quote a name a propagated batch gave as
    JSON text) is written as its escape, ``\\x00``."""
    error_message = _BAD_CHARS.sub(lambda c: repr(c.group())[1:-1], error_message)
    env = etree.Element(f"{{{envelope_ns}}}Envelope", nsmap={FAULT_PREFIX: envelope_ns})
    body = etree.SubElement(env, f"{{{envelope_ns}}}Body")
    f = etree.SubElement(body, f"{{{envelope_ns}}}Fault")
    etree.SubElement(f, "faultcode").text = f"{FAULT_PREFIX}:{faultcode}"
    kind = "Server" if faultcode == "Server" else "Client"
    first = error_message.splitlines()[0] if error_message else ""
    etree.SubElement(f, "faultstring").text = f"{kind} Fault: {first}" if first else f"{kind} Fault"
    detail = etree.SubElement(f, "detail")
    status = etree.SubElement(detail, _Q + "status_response", nsmap={None: AQ_NS})
    _sub(status, "status_code", -1)
    if error_code is not None:
        _sub(status, "error_code", error_code)
    _sub(status, "error_message", error_message)
    return etree.tostring(env, xml_declaration=True, encoding="UTF-8")


