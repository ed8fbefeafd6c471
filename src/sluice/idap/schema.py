"""Reading an IDAP request safely: hardened XML parsing, the tolerance Oracle's own
samples need, and validation against the SOAP and IDAP schemas of seed 004.

The schemas ship as files under ``xsd/`` (the seed's text with its printing errors
corrected; each file lists the corrections).  A request goes through three steps:

1. :func:`parse_xml` — lxml with no DTD, no entity expansion, no network and no
   huge-tree mode; a document that declares a DOCTYPE is refused outright, so XXE and
   entity-expansion ("billion laughs") documents never reach a resolver;
2. :func:`normalise` — the envelope may use the SOAP 1.1 namespace or Oracle's older
   ``http://ns.oracle.com/AQ/schemas/envelope``; IDAP element names are matched
   without regard to case (the seed's own samples write ``<RAW>`` for ``raw``) and
   IDAP elements written without a namespace are put into the IDAP namespace;
3. :func:`validate` — against the schemas, with message payloads that are object
   types or XML documents set aside (they are application data: their element
   names may collide with IDAP's, and :mod:`.payload` checks them against the
   queue's type instead).  A document the schemas refuse is judged once more without
   the whitespace a hand-written layout puts where they have no room for it (see
   :func:`_drop_layout_whitespace`).

Whitespace. Oracle's own IDAP samples are written by hand — indented, with newlines
inside empty elements (``<AQXmlCommit>⏎ </AQXmlCommit>``) and spaces or tabs around
values — and Oracle's servlet takes them. XML Schema allows whitespace-only text in
element-only content, and integer, date and boolean values collapse their whitespace,
but it refuses any character in an element declared empty (AQXmlCommit, AQXmlRollback,
acknowledge) and compares enumerations (visibility, dequeue_mode, navigation_mode,
lookup_type, mustUnderstand) character for character. The choice made here is to
*normalise, then validate*, not to loosen the schemas: those elements lose
whitespace-only text and enumerated values their surrounding whitespace, and the
schemas then judge the document as strictly as before (an empty element holding
anything else, an element out of place, a value outside its type are still ORA-31154).
A valid document has no such whitespace, so the normalising runs only when a first
validation fails: documents written by programs (the common case) pay nothing for it.
Application data is never touched: object-type and XML payloads are set aside first,
and text values (text_data, string_value, VARCHAR2 attributes) keep every character;
hexadecimal (raw, bytes_data, message ids) and numbers are read ignoring whitespace
around and, for hexadecimal, inside them. A document may also start with whitespace
before its XML declaration (XML allows none there; a file pasted into a request often
has a newline first).

Every failure is a :class:`~sluice.errors.DatabaseError` with Oracle's XML codes:
ORA-31011 (not well-formed, refused construct), ORA-31154 (not valid), ORA-19202
(a well-formed, valid document that is not an IDAP request).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from importlib import resources

from lxml import etree

from ..errors import ora

SOAP_NS = "http://schemas.xmlsoap.org/soap/envelope/"
OLD_ENVELOPE_NS = "http://ns.oracle.com/AQ/schemas/envelope"   # IDAP's envelope before SOAP 1.1
AQ_NS = "http://ns.oracle.com/AQ/schemas/access"
ENVELOPE_NAMESPACES = (SOAP_NS, OLD_ENVELOPE_NS)

REQUESTS = ("AQXmlSend", "AQXmlPublish", "AQXmlReceive", "AQXmlRegister", "AQXmlCommit",
            "AQXmlRollback")
# payload elements that are IDAP vocabulary (validated); anything else in a
# message_payload is an object type or an XML document (application data)
IDAP_PAYLOADS = ("raw", "jms_text_message", "jms_map_message", "jms_bytes_message",
                 "jms_object_message")

_XSD = "http://www.w3.org/2001/XMLSchema"
_ENVELOPE_PARTS = {"envelope": "Envelope", "header": "Header", "body": "Body", "fault": "Fault"}


def _xsd_path(name: str):
    return resources.files(__package__).joinpath("xsd", name)


def xsd_text(name: str) -> bytes:
    """The bytes of a shipped schema file (``soap_env.xsd`` or ``aq_access.xsd``)."""
    if name not in ("soap_env.xsd", "aq_access.xsd"):
        raise KeyError(name)
    return _xsd_path(name).read_bytes()


def _idap_names() -> dict[str, str]:
    """lower-case name -> the schema's spelling, for every global IDAP element."""
    doc = etree.fromstring(xsd_text("aq_access.xsd"))
    names = {e.get("name") for e in doc.iterchildren(f"{{{_XSD}}}element")}
    return {n.lower(): n for n in names}


IDAP_NAMES = _idap_names()


class _Validator(threading.local):
    """One compiled schema per thread: lxml validators keep per-call state."""

    def __init__(self) -> None:
        with resources.as_file(_xsd_path("aq_access.xsd")) as path:
            # the schema imports soap_env.xsd beside it: a local file we ship
            self.schema = etree.XMLSchema(etree.parse(str(path)))


_validator: _Validator | None = None


def _schema() -> etree.XMLSchema:
    global _validator
    if _validator is None:
        _validator = _Validator()
    return _validator.schema


def parser() -> etree.XMLParser:
    """The hardened parser every request document goes through."""
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           dtd_validation=False, huge_tree=False, remove_comments=True,
                           collect_ids=False)


_PARSER = threading.local()


def parse_xml(data: bytes) -> etree._Element:
    """Parse one request document (whitespace before its XML declaration is let pass).

    :raises DatabaseError: ORA-31011 when it is not well-formed XML or declares a DTD.
    """
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ora(31011, "a DOCTYPE or ENTITY declaration is not accepted")
    if data[:1].isspace():
        stripped = data.lstrip(b" \t\r\n")
        if stripped[:5] == b"<?xml":
            data = stripped
    p = getattr(_PARSER, "p", None)
    if p is None:
        p = _PARSER.p = parser()
    try:
        root = etree.fromstring(data, p)
    except etree.XMLSyntaxError as e:
        raise ora(31011, _one_line(str(e))) from None
    except ValueError as e:   # e.g. a str with an encoding declaration
        raise ora(31011, _one_line(str(e))) from None
    if root is None:
        raise ora(31011, "the document is empty")
    if root.getroottree().docinfo.doctype:
        raise ora(31011, "a DOCTYPE declaration is not accepted")
    return root


def _one_line(text: str) -> str:
    return " ".join(text.split())[:500]


@dataclass
class Envelope:
    """A normalised SOAP envelope: its namespace, header entries and IDAP request."""

    namespace: str
    headers: list[etree._Element]
    request: etree._Element
    method: str
    # object-type / XML payloads set aside during validation: (parent, child)
    set_aside: list[tuple[etree._Element, etree._Element]] = field(default_factory=list)


def _split(tag: str) -> tuple[str | None, str]:
    """``{ns}name`` -> (ns, name); ``name`` -> (None, name).  (Faster than etree.QName.)"""
    if tag[:1] == "{":
        i = tag.index("}")
        return tag[1:i], tag[i + 1:]
    return None, tag


def _local(el: etree._Element) -> tuple[str | None, str]:
    return _split(el.tag)


# qualified tag as the schema spells it -> its local name: the common case costs one lookup
_CANONICAL_TAGS = {f"{{{AQ_NS}}}{name}": name for name in IDAP_NAMES.values()}
_PAYLOAD_TAG = f"{{{AQ_NS}}}message_payload"
_IDAP_PAYLOAD_TAGS = frozenset(f"{{{AQ_NS}}}{name}" for name in IDAP_PAYLOADS)


def normalise(root: etree._Element) -> Envelope:
    """Bring a parsed request to the schemas' spelling (see the module docstring).

    :raises DatabaseError: ORA-19202 when the document is no SOAP envelope holding
        exactly one IDAP request.
    """
    ns, name = _local(root)
    if ns not in ENVELOPE_NAMESPACES or name.lower() != "envelope":
        raise ora(19202, f"the document element is {{{ns or ''}}}{name}, not a SOAP 1.1 Envelope")
    root.tag = f"{{{SOAP_NS}}}Envelope"
    body = header = None
    for el in root:
        if not isinstance(el.tag, str):
            continue
        e_ns, e_name = _local(el)
        part = _ENVELOPE_PARTS.get(e_name.lower()) if e_ns in ENVELOPE_NAMESPACES else None
        if part in ("Header", "Body"):
            el.tag = f"{{{SOAP_NS}}}{part}"
            if part == "Body" and body is None:
                body = el
            elif part == "Header" and header is None:
                header = el
    if body is None:
        raise ora(19202, "the Envelope has no Body")
    entries = [c for c in body if isinstance(c.tag, str)]
    if len(entries) != 1:
        raise ora(19202, f"the Body holds {len(entries)} elements; an IDAP request is one")
    request = entries[0]
    r_ns, r_name = _local(request)
    method = IDAP_NAMES.get(r_name.lower()) if r_ns in (AQ_NS, None) else None
    if method not in REQUESTS:
        raise ora(19202, f"{{{r_ns or ''}}}{r_name} is not an IDAP request "
                         f"(expected one of {', '.join(REQUESTS)})")
    env = Envelope(ns, [c for c in header if isinstance(c.tag, str)] if header is not None else [],
                   request, method)
    if not _spelled_as_the_schema(request):
        _normalise_idap(request, env)
    return env


def _spelled_as_the_schema(request: etree._Element) -> bool:
    """Whether the request needs no normalising: every element in it an IDAP element
    spelled as the schema spells it, every payload IDAP vocabulary (RAW, JMS) — the
    common case, checked in one pass over the tree (:func:`_normalise_idap` walks it
    element by element)."""
    canonical = _CANONICAL_TAGS
    for el in request.iter():
        tag = el.tag
        if tag not in canonical:      # also comments and processing instructions
            return False
        if tag == _PAYLOAD_TAG:
            for child in el:
                if child.tag not in _IDAP_PAYLOAD_TAGS:
                    return False
    return True


def _normalise_idap(el: etree._Element, env: Envelope) -> None:
    """Rename IDAP elements to the schema's spelling, down to message payloads."""
    canonical = _CANONICAL_TAGS.get(el.tag)
    if canonical is None:
        ns, name = _split(el.tag)
        if ns not in (AQ_NS, None):
            return
        canonical = IDAP_NAMES.get(name.lower())
        if canonical is None:
            return
        el.tag = f"{{{AQ_NS}}}{canonical}"
    if canonical == "message_payload":
        for child in el:
            if not isinstance(child.tag, str):
                continue
            c_ns, c_name = _split(child.tag)
            if c_ns in (AQ_NS, None) and c_name.lower() in IDAP_PAYLOADS:
                _normalise_idap(child, env)
            else:
                env.set_aside.append((el, child))
        return
    for child in el:
        if isinstance(child.tag, str):
            _normalise_idap(child, env)


def _layout_sets() -> tuple[frozenset[str], frozenset[str], dict[str, frozenset[str]]]:
    """From the shipped schemas: the tags of elements declared empty, of elements whose
    value is an enumeration, and the enumerated attributes by the tag of the element
    that carries them ("*" for global attributes, which any header entry may carry)."""
    empty, enumerated, attributes = set(), set(), {}
    for name in ("aq_access.xsd", "soap_env.xsd"):
        doc = etree.fromstring(xsd_text(name))
        ns = doc.get("targetNamespace")
        enum_types = {t.get("name") for t in doc.iterchildren(f"{{{_XSD}}}simpleType")
                      if t.find(f".//{{{_XSD}}}enumeration") is not None}
        for attr in doc.iterchildren(f"{{{_XSD}}}attribute"):
            if attr.get("type", "").rpartition(":")[2] in enum_types:
                attributes.setdefault("*", set()).add(f"{{{ns}}}{attr.get('name')}")
        for el in doc.iterchildren(f"{{{_XSD}}}element"):
            tag = f"{{{ns}}}{el.get('name')}"
            complex_type = el.find(f"{{{_XSD}}}complexType")
            if complex_type is None:
                if el.find(f"{{{_XSD}}}simpleType//{{{_XSD}}}enumeration") is not None:
                    enumerated.add(tag)
                continue
            if complex_type.get("mixed") != "true" and len(complex_type) == 0:
                empty.add(tag)
            for attr in complex_type.iter(f"{{{_XSD}}}attribute"):   # local: unqualified
                if attr.get("type", "").rpartition(":")[2] in enum_types:
                    attributes.setdefault(tag, set()).add(attr.get("name"))
    return frozenset(empty), frozenset(enumerated), {k: frozenset(v) for k, v in attributes.items()}


_EMPTY_TAGS, _ENUMERATED_TAGS, _ENUMERATED_ATTRIBUTES = _layout_sets()
_GLOBAL_ATTRIBUTES = _ENUMERATED_ATTRIBUTES.pop("*", frozenset())
_LAYOUT_TAGS = tuple(_EMPTY_TAGS | _ENUMERATED_TAGS | set(_ENUMERATED_ATTRIBUTES))


def _strip_attributes(el: etree._Element, names: frozenset[str]) -> bool:
    changed = False
    for name, value in el.items():
        if name in names and value != value.strip():
            el.set(name, value.strip())
            changed = True
    return changed


def _drop_layout_whitespace(root: etree._Element, headers: list[etree._Element]) -> bool:
    """Drop the whitespace of a hand-written layout where the schemas have no room for it
    (see the module docstring): whitespace-only text of elements declared empty, the
    whitespace around enumerated values (elements and attributes); True when there was
    some.  Only whitespace goes: an empty element with other content, a value outside
    its enumeration stay invalid."""
    changed = False
    for el in root.iter(*_LAYOUT_TAGS):
        value = el.text
        if value is not None and value != value.strip() and (
                el.tag in _ENUMERATED_TAGS or (el.tag in _EMPTY_TAGS and not value.strip())):
            el.text = value.strip() or None
            changed = True
        names = _ENUMERATED_ATTRIBUTES.get(el.tag)
        if names is not None and el.attrib:
            changed = _strip_attributes(el, names) or changed
    for entry in headers:
        if entry.attrib:
            changed = _strip_attributes(entry, _GLOBAL_ATTRIBUTES) or changed
    return changed


def validate(root: etree._Element, env: Envelope) -> None:
    """Validate the normalised document against the SOAP and IDAP schemas; a document
    they refuse is judged again once the whitespace of a hand-written layout is
    dropped (:func:`_drop_layout_whitespace`; the tree keeps that change).

    :raises DatabaseError: ORA-31154 with the first violation.
    """
    for parent, child in env.set_aside:
        parent.remove(child)     # keeps child's tail with it; put back below
    try:
        schema = _schema()
        ok = schema.validate(root)
        if not ok and _drop_layout_whitespace(root, env.headers):
            ok = schema.validate(root)
        error = None if ok else schema.error_log.last_error
    finally:
        for parent, child in env.set_aside:
            parent.append(child)
    if error is not None:
        raise ora(31154, f"line {error.line}: {_one_line(error.message)}")


def read_request(data: bytes) -> Envelope:
    """:func:`parse_xml`, :func:`normalise` and :func:`validate` in one call."""
    root = parse_xml(data)
    env = normalise(root)
    validate(root, env)
    return env
