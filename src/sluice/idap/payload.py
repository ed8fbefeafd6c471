"""Message payloads as IDAP writes them, both ways (seed 004 "IDAP Documents").

=========================  ============================================================
queue payload type         the one element inside ``<message_payload>``
=========================  ============================================================
RAW                        ``<raw>`` (``<RAW>`` in the seed's samples): hexadecimal;
                           an odd number of digits gets a leading zero (HEXTORAW)
object type ``T``          ``<T>`` with one child per non-NULL attribute, named as
                           the attribute; nested objects nest; a collection
                           attribute ``A`` holds ``<A_ITEM>`` elements (Example 17-1)
SYS.AQ$_JMS_TEXT_MESSAGE   ``<jms_text_message>``: oracle_jms_properties,
                           user_properties, text_data (Examples 17-3, 17-19)
SYS.AQ$_JMS_MAP_MESSAGE    ``<jms_map_message>``: …, map_data of typed items (17-4)
SYS.AQ$_JMS_BYTES_MESSAGE  ``<jms_bytes_message>``: …, bytes_data in hexadecimal
XMLTYPE                    the XML document itself
JSON (Sluice)              ``<JSON>`` holding the JSON text
SYS.ANYDATA                any of the above; the element says which
=========================  ============================================================

Object-type scalars: numbers as written (``100.12`` is an exact decimal), DATE and
TIMESTAMP as ``YYYY-MM-DD H:M:S`` (Oracle's XML format, ``1996-01-01 0:0:0``) or ISO
8601, RAW/BLOB in hexadecimal, BOOLEAN ``true``/``false``.  Element names match the
attributes without regard to case; a missing or empty element is NULL.

JMS properties keep their Java type (int_value, short_value …) in the user
property's ``JAVA_TYPE``.  A map message body is JSON (see sluice.objtypes.builtin), so map
items come back as int_value (long_value beyond 32 bits), double_value, boolean_value
or string_value.  ``timestamp`` is the enqueue date, ``recv_timestamp`` the
dequeue date, and ``userid`` the enqueuing database user unless the sender set it.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from lxml import etree

from .. import objtypes as ot
from ..aq.payload import ANYDATA, display_json
from ..errors import not_supported, ora
from ..model import Agent
from ..objtypes import (JAVA_BOOLEAN, JAVA_BYTE, JAVA_DOUBLE, JAVA_FLOAT, JAVA_INT,
                        JAVA_LONG, JAVA_SHORT, JAVA_STRING, JMS_PROPERTY_NUMBER,
                        JMS_PROPERTY_STRING)
from ..sqlfunctions import hextoraw
from .schema import AQ_NS, parse_xml

_Q = f"{{{AQ_NS}}}"
JMS_TEXT, JMS_MAP, JMS_BYTES = ("SYS.AQ$_JMS_TEXT_MESSAGE", "SYS.AQ$_JMS_MAP_MESSAGE",
                                "SYS.AQ$_JMS_BYTES_MESSAGE")
_JMS_ELEMENT = {"jms_text_message": JMS_TEXT, "jms_map_message": JMS_MAP,
                "jms_bytes_message": JMS_BYTES}
_ELEMENT_OF = {v: k for k, v in _JMS_ELEMENT.items()}
# typed value elements of user properties and map items -> (Java type, Python type)
_TYPED = {"int_value": (JAVA_INT, int), "string_value": (JAVA_STRING, str),
          "long_value": (JAVA_LONG, int), "double_value": (JAVA_DOUBLE, float),
          "boolean_value": (JAVA_BOOLEAN, bool), "float_value": (JAVA_FLOAT, float),
          "short_value": (JAVA_SHORT, int), "byte_value": (JAVA_BYTE, int)}
_VALUE_ELEMENT = {java: name for name, (java, _) in _TYPED.items()}
_INT_RANGE = {JAVA_BYTE: 8, JAVA_SHORT: 16, JAVA_INT: 32, JAVA_LONG: 64}
_DATETIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d+)?)?)?"
                       r"(Z|[+-]\d{2}:?\d{2})?")


def _local(el: etree._Element) -> str:
    """An element's local name (``etree.QName(el).localname``, without the QName)."""
    tag = el.tag
    return tag[tag.index("}") + 1:] if tag[:1] == "{" else tag


def _children(el: etree._Element) -> list[etree._Element]:
    return [c for c in el if isinstance(c.tag, str)]


def _text(el: etree._Element | None) -> str | None:
    return None if el is None else (el.text or "").strip()


# -- XML -> value (enqueue) ---------------------------------------------------------
def value_from_xml(el: etree._Element | None, payload_type: str, registry: Any, db_user: str) -> Any:
    """The payload a ``<message_payload>`` element stands for in a queue of ``payload_type``.

    ``registry`` finds object types (the connection's catalog: ``get_type``).
    :raises DatabaseError: ORA-25215 when the element does not fit the queue's type,
        and the per-attribute errors of object types (ORA-12899, ORA-01722 …).
    """
    if el is None:
        return None
    name = _local(el)
    lower = name.lower()
    if payload_type == "RAW" or (payload_type == ANYDATA and lower == "raw"):
        if lower != "raw":
            raise ora(25215, f"a RAW queue takes <raw>, not <{name}>")
        return _hex(el.text) or b""
    if payload_type == "JSON" or (payload_type == ANYDATA and lower == "json"):
        if lower != "json":
            raise ora(25215, f"a JSON queue takes <JSON>, not <{name}>")
        try:
            return json.loads(el.text or "null")
        except ValueError as e:
            raise ora(25215, f"<JSON> does not hold JSON text ({e})") from None
        except RecursionError:
            raise ora(25215, "<JSON> holds JSON text nested too deeply") from None
    if payload_type == "XMLTYPE":
        return _xml_document(el)
    if lower == "jms_object_message":
        raise not_supported("JMS object messages (serialised Java objects)")
    if payload_type == ANYDATA:
        objtype = registry.get_type(_JMS_ELEMENT.get(lower) or name.upper())
        if objtype is None:
            raise ora(25215, f"<{name}> names no object type")
    else:
        objtype = registry.get_type(payload_type)
    qualified = objtype.qualified_name
    if qualified in _ELEMENT_OF:
        if lower != _ELEMENT_OF[qualified]:
            raise ora(25215, f"a {qualified} queue takes <{_ELEMENT_OF[qualified]}>, not <{name}>")
        return _jms_from_xml(el, objtype, registry, db_user)
    if name.upper() not in (objtype.name, qualified):
        raise ora(25215, f"the queue holds {qualified}, the payload is <{name}>")
    return _object_from_xml(objtype, el)


def _hex(text: str | None) -> bytes | None:
    digits = "".join((text or "").split())
    return hextoraw(digits) if digits else None


def _xml_document(el: etree._Element) -> str:
    """An XML payload as a standalone document: elements that are in the IDAP
    namespace only because they inherited its default declaration leave it."""
    doc = copy.deepcopy(el)
    for e in doc.iter(etree.Element):
        if e.tag.startswith(_Q):
            e.tag = e.tag[len(_Q):]
    etree.cleanup_namespaces(doc)
    return etree.tostring(doc, encoding="unicode")


def _object_from_xml(objtype: "ot.DbObjectType", el: etree._Element) -> "ot.DbObject":
    obj = objtype.newobject()
    attrs = {a.name.upper(): a for a in objtype.attributes}
    seen: set[str] = set()
    for child in _children(el):
        name = _local(child)
        attr = attrs.get(name.upper())
        if attr is None:
            raise ora(904, f"{objtype.qualified_name}.{name}")
        if attr.name in seen:
            raise ora(19202, f"{objtype.qualified_name}.{attr.name} is given twice")
        seen.add(attr.name)
        setattr(obj, attr.name, _value_of(attr.type, child))
    return obj


def _value_of(kind: Any, el: etree._Element) -> Any:
    """The value of one attribute or collection element of type ``kind``
    (a DbObjectType or a DB_TYPE_* constant)."""
    children = _children(el)
    if isinstance(kind, ot.DbObjectType):
        if not children and not (el.text or "").strip():
            return None
        if kind.iscollection:
            return kind.newobject([_value_of(kind.element_type, item) for item in children])
        return _object_from_xml(kind, el)
    if children:
        raise ora(932, kind.name.replace("DB_TYPE_", ""), "an XML element")
    return scalar_from_text(kind, el.text)


def scalar_from_text(kind: "ot.DbType", text: str | None) -> Any:
    """A scalar attribute value from its XML text (``''`` is NULL)."""
    if text is None or not text.strip():
        return None
    name = kind.name
    if name in ("DB_TYPE_NUMBER",):
        value = text.strip()
        try:
            return int(value) if re.fullmatch(r"[+-]?\d+", value) else Decimal(value)
        except InvalidOperation:
            raise ora(1722, value) from None
    if name in ("DB_TYPE_BINARY_FLOAT", "DB_TYPE_BINARY_DOUBLE"):
        try:
            return float(text.strip())
        except ValueError:
            raise ora(1722, text.strip()) from None
    if name in ("DB_TYPE_DATE", "DB_TYPE_TIMESTAMP", "DB_TYPE_TIMESTAMP_TZ", "DB_TYPE_TIMESTAMP_LTZ"):
        return _datetime(text.strip())
    if name in ("DB_TYPE_RAW", "DB_TYPE_BLOB"):
        return _hex(text)
    if name == "DB_TYPE_BOOLEAN":
        word = text.strip().lower()
        if word not in ("true", "false", "1", "0"):
            raise ora(6502, f"{text.strip()!r} is not a BOOLEAN")
        return word in ("true", "1")
    return text


def _datetime(text: str) -> dt.datetime:
    m = _DATETIME.fullmatch(text)
    if not m:
        raise ora(1861)
    y, mo, d, h, mi, s, frac, zone = m.groups()
    tz = None
    if zone:
        if zone == "Z":
            tz = dt.timezone.utc
        else:
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            tz = dt.timezone(sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    try:
        return dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0),
                           int(round(float(frac) * 1_000_000)) if frac else 0, tzinfo=tz)
    except ValueError:
        raise ora(1861) from None


def _agent_from_xml(el: etree._Element | None) -> Agent | None:
    if el is None:
        return None
    if el.find(_Q + "agent_alias") is not None:
        raise not_supported("agent_alias (LDAP agent aliases: Sluice has no directory server)")
    protocol = _text(el.find(_Q + "protocol"))
    return Agent(_text(el.find(_Q + "agent_name")) or None, _text(el.find(_Q + "address")) or None,
                 int(protocol) if protocol else 0)


def typed_value(el: etree._Element) -> tuple[str, int, Any]:
    """``<property>`` / ``<item>``: (name, Java type, Python value)."""
    name = _text(el.find(_Q + "name")) or ""
    for child in _children(el):
        local = _local(child)
        if local in _TYPED:
            java, pytype = _TYPED[local]
            raw = child.text or ""
            if pytype is str:
                return name, java, raw
            if pytype is bool:
                return name, java, raw.strip().lower() in ("true", "1")
            try:
                value = float(raw.strip()) if pytype is float else int(raw.strip())
            except ValueError:
                raise ora(1722, raw.strip()) from None
            if pytype is float:
                return name, java, value
            bits = _INT_RANGE[java]
            if not -2 ** (bits - 1) <= value < 2 ** (bits - 1):
                raise ora(1426)
            return name, java, value
    raise ora(19202, f"{_local(el)} {name!r} has no value")


def _jms_header(el: etree._Element, registry: Any, db_user: str) -> "ot.DbObject":
    header = registry.get_type("SYS.AQ$_JMS_HEADER").newobject()
    props = el.find(_Q + "oracle_jms_properties")
    get = (lambda n: _text(props.find(_Q + n)) or None) if props is not None else (lambda n: None)
    if props is not None:
        header.REPLYTO = ot.agent_to_object(registry, _agent_from_xml(props.find(_Q + "reply_to")))
    header.TYPE, header.APPID, header.GROUPID = get("type"), get("appid"), get("groupid")
    header.USERID = get("userid") or db_user     # JMSXUserID: who sent it
    seq = get("group_sequence")
    header.GROUPSEQ = int(seq) if seq else None
    user = el.find(_Q + "user_properties")
    if user is not None:
        ptype = registry.get_type("SYS.AQ$_JMS_USERPROPERTY")
        items = []
        for prop in user.iterchildren(_Q + "property"):
            name, java, value = typed_value(prop)
            if java == JAVA_STRING:
                items.append(ot.construct(ptype, name, JMS_PROPERTY_STRING, value, None, java))
            else:
                items.append(ot.construct(ptype, name, JMS_PROPERTY_NUMBER, None,
                                          int(value) if java == JAVA_BOOLEAN else value, java))
        header.PROPERTIES = registry.get_type("SYS.AQ$_JMS_USERPROPARRAY").newobject(items)
    return header


def _jms_from_xml(el: etree._Element, objtype: "ot.DbObjectType", registry: Any,
                  db_user: str) -> "ot.DbObject":
    name = objtype.qualified_name
    if name == JMS_TEXT:
        msg = ot.jms_text_message(registry, el.find(_Q + "text_data").text or "")
    elif name == JMS_BYTES:
        msg = ot.jms_bytes_message(registry, _hex(el.find(_Q + "bytes_data").text))
    else:
        items = {}
        for item in el.find(_Q + "map_data").iterchildren(_Q + "item"):
            key, _, value = typed_value(item)
            items[key] = value
        msg = ot.jms_map_message(registry, items)
    msg.HEADER = _jms_header(el, registry, db_user)
    return msg


# -- value -> XML (dequeue) ---------------------------------------------------------
def _sub(parent: etree._Element, name: str, text: Any = None) -> etree._Element:
    child = etree.SubElement(parent, _Q + name)
    if text is not None:
        child.text = str(text)
    return child


def xml_from_value(parent: etree._Element, value: Any, payload_type: str,
                   enqtime: dt.datetime | None) -> None:
    """Append the element for a dequeued payload of a ``payload_type`` queue to
    ``<message_payload>`` ``parent`` (nothing for a REMOVE_NODATA dequeue's None).

    :raises DatabaseError: ORA-31011 when a stored XMLTYPE payload (enqueued by
        another front door) declares a DTD or is not well-formed.
    """
    if value is None:
        return
    if payload_type == "XMLTYPE":
        parent.append(parse_xml(value.encode("utf-8")))
    elif isinstance(value, (bytes, bytearray)):
        _sub(parent, "raw", bytes(value).hex().upper())
    elif isinstance(value, ot.DbObject):
        if value.type.qualified_name in _ELEMENT_OF:
            _jms_to_xml(parent, value, enqtime)
        else:
            parent.append(_object_to_xml(value.type.name, value))
    else:   # JSON, or a JSON value in an ANYDATA queue
        _sub(parent, "JSON", display_json(value))


def scalar_text(value: Any) -> str:
    """The XML text of a scalar attribute value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        text = f"{value:%Y-%m-%d} {value.hour}:{value.minute}:{value.second}"
        if value.microsecond:
            text += f".{value.microsecond:06d}".rstrip("0")
        if value.tzinfo is not None:
            text += value.strftime("%z")
        return text
    if isinstance(value, dt.date):
        return f"{value:%Y-%m-%d} 0:0:0"
    return str(value)


def _object_to_xml(tag: str, obj: "ot.DbObject") -> etree._Element:
    el = etree.Element(_Q + tag)
    if obj.type.iscollection:
        for item in obj:
            el.append(_item_to_xml(f"{tag}_ITEM", item))
        return el
    for attr in obj.type.attributes:
        value = ot.contents(getattr(obj, attr.name))     # (a LOB attribute: its contents)
        if value is not None:
            el.append(_item_to_xml(attr.name, value))
    return el


def _item_to_xml(tag: str, value: Any) -> etree._Element:
    if isinstance(value, ot.DbObject):
        return _object_to_xml(tag, value)
    el = etree.Element(_Q + tag)
    if value is not None:
        el.text = scalar_text(value)
    return el


def _agent_to_xml(parent: etree._Element, name: str, agent: "ot.DbObject | None") -> None:
    if agent is None:
        return
    el = _sub(parent, name)
    _sub(el, "agent_name", agent.NAME or "")
    if agent.ADDRESS:
        _sub(el, "address", agent.ADDRESS)
    if agent.PROTOCOL:
        _sub(el, "protocol", int(agent.PROTOCOL))


def _jms_to_xml(parent: etree._Element, msg: "ot.DbObject", enqtime: dt.datetime | None) -> None:
    qualified = msg.type.qualified_name
    el = _sub(parent, _ELEMENT_OF[qualified])
    header = msg.HEADER
    props = _sub(el, "oracle_jms_properties")
    if header is not None:
        if header.TYPE:
            _sub(props, "type", header.TYPE)
        _agent_to_xml(props, "reply_to", header.REPLYTO)
        for name, value in (("userid", header.USERID), ("appid", header.APPID),
                            ("groupid", header.GROUPID), ("group_sequence", header.GROUPSEQ)):
            if value is not None:
                _sub(props, name, value)
    _sub(props, "timestamp", (enqtime or dt.datetime.now()).date().isoformat())
    _sub(props, "recv_timestamp", dt.date.today().isoformat())
    if header is not None and header.PROPERTIES is not None and header.PROPERTIES.size():
        user = _sub(el, "user_properties")
        for p in header.PROPERTIES:
            prop = _sub(user, "property")
            _sub(prop, "name", p.NAME)
            java = p.JAVA_TYPE if p.JAVA_TYPE in _VALUE_ELEMENT else (
                JAVA_STRING if p.TYPE == JMS_PROPERTY_STRING else JAVA_DOUBLE)
            _typed_to_xml(prop, java, p.STR_VALUE if java == JAVA_STRING else p.NUM_VALUE)
    if qualified == JMS_TEXT:
        _sub(el, "text_data", ot.jms_text_of(msg) or "")
    elif qualified == JMS_BYTES:
        _sub(el, "bytes_data", (ot.jms_bytes_of(msg) or b"").hex().upper())
    else:
        data = _sub(el, "map_data")
        for key, value in ot.jms_map_of(msg).items():
            item = _sub(data, "item")
            _sub(item, "name", key)
            _typed_to_xml(item, _java_type_of(value), value)


def _java_type_of(value: Any) -> int:
    if isinstance(value, bool):
        return JAVA_BOOLEAN
    if isinstance(value, int):
        return JAVA_INT if -2**31 <= value < 2**31 else JAVA_LONG
    if isinstance(value, float):
        return JAVA_DOUBLE
    return JAVA_STRING


def _typed_to_xml(parent: etree._Element, java: int, value: Any) -> None:
    name = _VALUE_ELEMENT[java]
    if value is None:
        _sub(parent, name)
    elif java == JAVA_BOOLEAN:
        _sub(parent, name, "true" if value else "false")
    elif java in _INT_RANGE:
        _sub(parent, name, int(value))
    elif java in (JAVA_FLOAT, JAVA_DOUBLE):
        _sub(parent, name, repr(float(value)))
    else:
        _sub(parent, name, value)
