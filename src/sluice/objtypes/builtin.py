"""The object types Oracle ships in SYS for AQ agents and JMS messages, and
helpers to build and read JMS payloads.

Attribute lists follow Oracle's *PL/SQL Packages and Types Reference* ("JMS
Types"), with ``SYS.AQ$_AGENT.NAME`` widened to VARCHAR2(512) as in current
releases.  User properties use Oracle's encoding: ``TYPE`` 100 for a string
(``STR_VALUE``) and 200 for a number (``NUM_VALUE``), ``JAVA_TYPE`` naming the
Java type (20 boolean … 27 String), exactly what ``aq$_jms_header``'s
``set_*_property`` procedures store.

Deliberate difference: Oracle keeps a JMS map message body as a serialised Java
Hashtable; Sluice keeps it as UTF-8 JSON in ``BYTES_RAW`` (≤ 2000 bytes) or
``BYTES_LOB``, readable from any language.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from ..charset import utf8
from ..errors import ora
from .dbobject import DbObject, DbObjectType, TypeRegistry, build_collection_type, build_object_type
from .values import construct

_HEADER_ATTRS = [("REPLYTO", "SYS.AQ$_AGENT"), ("TYPE", "VARCHAR2(100)"),
                 ("USERID", "VARCHAR2(100)"), ("APPID", "VARCHAR2(100)"),
                 ("GROUPID", "VARCHAR2(100)"), ("GROUPSEQ", "INT"),
                 ("PROPERTIES", "SYS.AQ$_JMS_USERPROPARRAY")]
_BYTES_BODY = [("HEADER", "SYS.AQ$_JMS_HEADER"), ("BYTES_LEN", "INT"),
               ("BYTES_RAW", "RAW(2000)"), ("BYTES_LOB", "BLOB")]

# (name, attributes) for objects, (name, kind, element, limit) for collections,
# in dependency order.
_SYS_TYPES: list[tuple] = [
    ("AQ$_AGENT", [("NAME", "VARCHAR2(512)"), ("ADDRESS", "VARCHAR2(1024)"),
                   ("PROTOCOL", "NUMBER")]),
    ("AQ$_JMS_USERPROPERTY", [("NAME", "VARCHAR2(100)"), ("TYPE", "INT"),
                              ("STR_VALUE", "VARCHAR2(2000)"), ("NUM_VALUE", "NUMBER"),
                              ("JAVA_TYPE", "INT")]),
    ("AQ$_JMS_USERPROPARRAY", "VARRAY", "SYS.AQ$_JMS_USERPROPERTY", 100),
    ("AQ$_JMS_HEADER", _HEADER_ATTRS),
    ("AQ$_JMS_TEXT_MESSAGE", [("HEADER", "SYS.AQ$_JMS_HEADER"), ("TEXT_LEN", "INT"),
                              ("TEXT_VC", "VARCHAR2(4000)"), ("TEXT_LOB", "CLOB")]),
    ("AQ$_JMS_BYTES_MESSAGE", _BYTES_BODY),
    ("AQ$_JMS_MAP_MESSAGE", _BYTES_BODY),
    # the generic JMS message (any of the five kinds: MESSAGE_TYPE), a sharded queue's
    # default payload (DBMS_AQADM.JMS_TYPE); Oracle's attribute order
    ("AQ$_JMS_MESSAGE", [("HEADER", "SYS.AQ$_JMS_HEADER"), ("SENDERID", "VARCHAR2(100)"),
                         ("MESSAGE_TYPE", "INT"), ("TEXT_LEN", "INT"), ("BYTES_LEN", "INT"),
                         ("TEXT_VC", "VARCHAR2(4000)"), ("BYTES_RAW", "RAW(2000)"),
                         ("TEXT_LOB", "CLOB"), ("BYTES_LOB", "BLOB")]),
]

# SYS.AQ$_JMS_MESSAGE.MESSAGE_TYPE (DBMS_AQ.JMS_TEXT_MESSAGE …)
JMS_TEXT_MESSAGE, JMS_BYTES_MESSAGE, JMS_STREAM_MESSAGE, JMS_MAP_MESSAGE, JMS_OBJECT_MESSAGE = range(5)

# aq$_jms_userproperty encoding
JMS_PROPERTY_STRING = 100
JMS_PROPERTY_NUMBER = 200
JAVA_BOOLEAN, JAVA_BYTE, JAVA_SHORT, JAVA_INT, JAVA_LONG = 20, 21, 22, 23, 24
JAVA_FLOAT, JAVA_DOUBLE, JAVA_STRING = 25, 26, 27

_TEXT_VC_MAX = 4000     # bytes; longer text goes to TEXT_LOB
_BYTES_RAW_MAX = 2000   # bytes; longer bodies go to BYTES_LOB


class _Built(dict):
    """The SYS types built so far, by qualified name: the registry that resolves the
    references between them while they are built (a :class:`TypeRegistry`)."""

    def get_type(self, qualified_name: str) -> DbObjectType | None:
        return self.get(qualified_name)


@lru_cache(maxsize=1)
def _builtin_tuple() -> tuple[DbObjectType, ...]:
    built = _Built()
    for entry in _SYS_TYPES:
        if len(entry) == 2:
            t = build_object_type("SYS", entry[0], entry[1], built)
        else:
            t = build_collection_type("SYS", *entry, built)
        built[t.qualified_name] = t
    return tuple(built.values())


def builtin_types() -> dict[str, DbObjectType]:
    """``{"SYS.AQ$_AGENT": DbObjectType, …}`` in dependency order.

    Types never change once built, so every caller shares the same instances.
    """
    return {t.qualified_name: t for t in _builtin_tuple()}


def _type(registry: TypeRegistry, name: str) -> DbObjectType:
    found = registry.get_type(name)
    if found is None:
        raise ora(4043, name)
    return found


def _expect(obj: Any, *names: str) -> DbObject:
    if not isinstance(obj, DbObject) or obj.type.qualified_name not in names:
        got = obj.type.qualified_name if isinstance(obj, DbObject) else type(obj).__name__
        raise ora(932, " or ".join(names), got)
    return obj


# -- agents ------------------------------------------------------------------


def agent_to_object(registry: TypeRegistry, agent: Any) -> DbObject | None:
    """``SYS.AQ$_AGENT`` from a :class:`sluice.Agent` (or anything with ``name``,
    ``address``, ``protocol``), an agent name, or an AQ$_AGENT object."""
    if agent is None or isinstance(agent, DbObject):
        return agent
    agent_type = _type(registry, "SYS.AQ$_AGENT")
    if isinstance(agent, str):
        return construct(agent_type, agent, None, 0)
    return construct(agent_type, getattr(agent, "name", None), getattr(agent, "address", None),
                     getattr(agent, "protocol", 0))


def agent_from_object(obj: DbObject | None) -> Any:
    """A :class:`sluice.Agent` from a ``SYS.AQ$_AGENT`` object."""
    from ..model import Agent

    if obj is None:
        return None
    _expect(obj, "SYS.AQ$_AGENT")
    protocol = obj.PROTOCOL
    return Agent(obj.NAME, obj.ADDRESS, int(protocol) if protocol is not None else 0)


# -- JMS headers and properties ------------------------------------------------


def _property(prop_type: DbObjectType, name: str, value: Any) -> DbObject:
    if not isinstance(name, str) or not name:
        raise ora(6502, "JMS property names must be non-empty strings")
    if isinstance(value, bool):
        return construct(prop_type, name, JMS_PROPERTY_NUMBER, None, int(value), JAVA_BOOLEAN)
    if isinstance(value, int):
        if -2**31 <= value < 2**31:
            java = JAVA_INT
        elif -2**63 <= value < 2**63:
            java = JAVA_LONG
        else:
            raise ora(6502, f"JMS property {name} is out of the range of a Java long")
        return construct(prop_type, name, JMS_PROPERTY_NUMBER, None, value, java)
    if isinstance(value, float):
        return construct(prop_type, name, JMS_PROPERTY_NUMBER, None, value, JAVA_DOUBLE)
    if isinstance(value, str):
        return construct(prop_type, name, JMS_PROPERTY_STRING, value, None, JAVA_STRING)
    raise ora(6502, f"JMS property {name} must be a str, bool, int or float, "
                    f"not {type(value).__name__}")


def jms_header(registry: TypeRegistry, *, replyto: Any = None, type: str | None = None,
               userid: str | None = None, appid: str | None = None, groupid: str | None = None,
               groupseq: int | None = None,
               properties: Mapping[str, Any] | None = None) -> DbObject:
    """A ``SYS.AQ$_JMS_HEADER``; ``properties`` maps names to str/bool/int/float."""
    header = _type(registry, "SYS.AQ$_JMS_HEADER").newobject()
    header.REPLYTO = agent_to_object(registry, replyto)
    header.TYPE, header.USERID, header.APPID = type, userid, appid
    header.GROUPID, header.GROUPSEQ = groupid, groupseq
    if properties:
        prop_type = _type(registry, "SYS.AQ$_JMS_USERPROPERTY")
        array = _type(registry, "SYS.AQ$_JMS_USERPROPARRAY")
        header.PROPERTIES = array.newobject(_property(prop_type, n, v) for n, v in properties.items())
    return header


def jms_properties_of(obj: DbObject) -> dict[str, Any]:
    """User properties of a JMS message or header as ``{name: value}``."""
    header = _expect(obj, *_MESSAGE_TYPES, "SYS.AQ$_JMS_HEADER")
    if header.type.name != "AQ$_JMS_HEADER":
        header = header.HEADER
    if header is None or header.PROPERTIES is None:
        return {}
    result: dict[str, Any] = {}
    for prop in header.PROPERTIES:
        java, num = prop.JAVA_TYPE, prop.NUM_VALUE
        if java == JAVA_BOOLEAN:
            value: Any = None if num is None else bool(num)
        elif java in (JAVA_BYTE, JAVA_SHORT, JAVA_INT, JAVA_LONG):
            value = None if num is None else int(num)
        elif java in (JAVA_FLOAT, JAVA_DOUBLE):
            value = None if num is None else float(num)
        else:
            value = prop.STR_VALUE if prop.TYPE == JMS_PROPERTY_STRING else num
        result[prop.NAME] = value
    return result


_GENERIC = "SYS.AQ$_JMS_MESSAGE"
_MESSAGE_TYPES = ("SYS.AQ$_JMS_TEXT_MESSAGE", "SYS.AQ$_JMS_BYTES_MESSAGE",
                  "SYS.AQ$_JMS_MAP_MESSAGE", _GENERIC)


# -- message bodies ------------------------------------------------------------


def jms_text_message(registry: TypeRegistry, text: str | None, **header: Any) -> DbObject:
    """A ``SYS.AQ$_JMS_TEXT_MESSAGE``; the text goes to ``TEXT_VC`` up to 4000
    bytes, else to ``TEXT_LOB`` (as ``set_text`` does).  ``header`` takes the
    keyword arguments of :func:`jms_header`."""
    msg = _type(registry, "SYS.AQ$_JMS_TEXT_MESSAGE").newobject()
    msg.HEADER = jms_header(registry, **header)
    if text is not None and not isinstance(text, str):
        raise ora(932, "VARCHAR2 or CLOB", type(text).__name__)
    text = text or None
    msg.TEXT_LEN = len(text) if text else 0
    if text is not None and len(utf8(text)) <= _TEXT_VC_MAX:
        msg.TEXT_VC = text
    else:
        msg.TEXT_LOB = text
    return msg


def jms_text_of(obj: DbObject) -> str | None:
    """The text of a ``SYS.AQ$_JMS_TEXT_MESSAGE`` (or of a generic text message)."""
    msg = _expect_kind(obj, "SYS.AQ$_JMS_TEXT_MESSAGE", JMS_TEXT_MESSAGE)
    return msg.TEXT_VC if msg.TEXT_VC is not None else msg._data["TEXT_LOB"]    # (its text, not a LOB)


def _expect_kind(obj: Any, specific: str, *kinds: int) -> DbObject:
    """``obj`` as the ``specific`` JMS type, or a ``SYS.AQ$_JMS_MESSAGE`` of one of ``kinds``.
    :raises: ORA-00932 for any other object or kind."""
    msg = _expect(obj, specific, _GENERIC)
    if msg.type.qualified_name == _GENERIC and msg.MESSAGE_TYPE not in kinds:
        raise ora(932, specific, f"{_GENERIC} of MESSAGE_TYPE {msg.MESSAGE_TYPE}")
    return msg


def _bytes_body(msg: DbObject, data: bytes | None) -> DbObject:
    msg.BYTES_LEN = len(data) if data else 0
    if data and len(data) <= _BYTES_RAW_MAX:
        msg.BYTES_RAW = data
    else:
        msg.BYTES_LOB = data
    return msg


def jms_bytes_message(registry: TypeRegistry, data: bytes | None, **header: Any) -> DbObject:
    """A ``SYS.AQ$_JMS_BYTES_MESSAGE`` (body in ``BYTES_RAW`` up to 2000 bytes)."""
    if data is not None and not isinstance(data, (bytes, bytearray)):
        raise ora(932, "RAW or BLOB", type(data).__name__)
    msg = _type(registry, "SYS.AQ$_JMS_BYTES_MESSAGE").newobject()
    msg.HEADER = jms_header(registry, **header)
    return _bytes_body(msg, bytes(data) if data is not None else None)


def jms_bytes_of(obj: DbObject) -> bytes | None:
    """The body of a JMS bytes (or map) message."""
    if isinstance(obj, DbObject) and obj.type.qualified_name == "SYS.AQ$_JMS_MAP_MESSAGE":
        msg = obj
    else:
        msg = _expect_kind(obj, "SYS.AQ$_JMS_BYTES_MESSAGE", JMS_BYTES_MESSAGE, JMS_STREAM_MESSAGE,
                           JMS_MAP_MESSAGE, JMS_OBJECT_MESSAGE)
    return msg.BYTES_RAW if msg.BYTES_RAW is not None else msg._data["BYTES_LOB"]


def jms_map_message(registry: TypeRegistry, mapping: Mapping[str, Any], **header: Any) -> DbObject:
    """A ``SYS.AQ$_JMS_MAP_MESSAGE`` whose body is ``mapping`` as UTF-8 JSON."""
    if not isinstance(mapping, Mapping) or not all(isinstance(k, str) for k in mapping):
        raise ora(6502, "a JMS map message needs a mapping with string keys")
    try:
        body = json.dumps(dict(mapping), ensure_ascii=False, separators=(",", ":"),
                          allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ora(6502, f"JMS map values must be JSON values ({exc})") from None
    msg = _type(registry, "SYS.AQ$_JMS_MAP_MESSAGE").newobject()
    msg.HEADER = jms_header(registry, **header)
    return _bytes_body(msg, body)


def jms_map_of(obj: DbObject) -> dict[str, Any]:
    """The mapping of a ``SYS.AQ$_JMS_MAP_MESSAGE`` or a generic map message (``{}`` for an
    empty body)."""
    _expect_kind(obj, "SYS.AQ$_JMS_MAP_MESSAGE", JMS_MAP_MESSAGE)
    body = jms_bytes_of(obj)
    if not body:
        return {}
    try:
        mapping = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ora(6502, "the JMS map message body is not JSON") from None
    if not isinstance(mapping, dict):
        raise ora(6502, "the JMS map message body is not a JSON object")
    return mapping


def jms_message(registry: TypeRegistry, message_type: int, body: Any = None, **header: Any) -> DbObject:
    """A generic ``SYS.AQ$_JMS_MESSAGE`` of ``message_type`` (JMS_TEXT_MESSAGE …): ``body`` is
    the text of a text message, the mapping of a map message (UTF-8 JSON, as
    :func:`jms_map_message`), the bytes of a bytes, stream or object message (their Java
    encodings are the sender's).  ``header`` takes the keyword arguments of :func:`jms_header`."""
    if isinstance(message_type, bool) or message_type not in range(5):
        raise ora(6502, f"MESSAGE_TYPE must be DBMS_AQ.JMS_TEXT_MESSAGE .. JMS_OBJECT_MESSAGE, not {message_type!r}")
    if message_type == JMS_TEXT_MESSAGE:
        specific = jms_text_message(registry, body, **header)
    elif message_type == JMS_MAP_MESSAGE:
        specific = jms_map_message(registry, {} if body is None else body, **header)
    else:
        specific = jms_bytes_message(registry, body, **header)
    msg = _type(registry, _GENERIC).newobject()
    msg.HEADER, msg.MESSAGE_TYPE = specific.HEADER, message_type
    if message_type == JMS_TEXT_MESSAGE:
        msg.TEXT_LEN, msg.TEXT_VC, msg.TEXT_LOB = specific.TEXT_LEN, specific.TEXT_VC, specific.TEXT_LOB
    else:
        msg.BYTES_LEN, msg.BYTES_RAW, msg.BYTES_LOB = specific.BYTES_LEN, specific.BYTES_RAW, specific.BYTES_LOB
    return msg
