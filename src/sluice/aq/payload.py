"""Payloads: what an application may enqueue into a queue table, and how it is stored.

=================  ==========================  =============================
queue payload      Python value                stored as (USER_DATA)
=================  ==========================  =============================
RAW                bytes (str is UTF-8 encoded) BLOB
JSON               dict, list, str, numbers …   JSON text
XMLTYPE            str holding an XML document  text
object type        DbObject of that type        JSON text of its attributes
SYS.ANYDATA        any of the above             JSON text, tagged with the type
=================  ==========================  =============================

A value that does not fit raises ORA-25215 (user_data type and queue type do
not match) before anything is stored.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re
import threading
from typing import Any, Callable
from xml.etree import ElementTree

from ..charset import CONVERSION_FAILED, convertible
from ..errors import ora
from .. import objtypes as ot

ANYDATA = "SYS.ANYDATA"
SIMPLE_TYPES = ("RAW", "JSON", "XMLTYPE", ANYDATA)

# Oracle's own types an ANYDATA payload can hold whose Python classes live above this
# layer (LCR$_ROW_RECORD / LCR$_DDL_RECORD, :mod:`sluice.streams.lcrcodec`): their
# ``oracle_type`` -> (to a JSON-able document or its JSON text, from that document),
# registered by the module that defines them
ANYDATA_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}
_COMPACT = json.JSONEncoder(separators=(",", ":")).encode
# json's C scanner, called at an offset: an LCR's envelope is read without building the
# envelope's dict or going through json.loads's layers (an apply process reads thousands)
_SCAN = json.JSONDecoder().scan_once
_ENVELOPE = '{"$type":"'
_VALUE = '","value":'
# a registered type's reader of its envelope's text as ``_anydata`` wrote it: (stored text,
# offset of the value) -> the value, or None when the text is not in the form it reads
# (the envelope is then scanned as JSON).  A captured row LCR's is pattern-matched into
# the LCR without the document's dict (:mod:`sluice.streams.capture.decode`)
ANYDATA_TEXT_READERS: dict[str, Callable[[str, int], Any]] = {}


# JSON payloads are stored as JSON text.  Values JSON has no type for are written as
# one-key objects tagged "$timestamp", "$date", "$number", "$raw" or "$interval" (an
# INTERVAL DAY TO SECOND, python-oracledb's timedelta) (:func:`_json_default`).
# So that a user's own object can never be taken for a tag, every key of a user's object
# that begins with "$" is stored with one more "$" ("$date" -> "$$date") and read back
# without it: a stored key beginning with a single "$" is only ever a tag.
#
# Data stored before keys were escaped (user keys kept as they were): a one-key object
# whose key is a tag and whose value is in the exact form the tag is written in (a
# date's isoformat() …) is still read as that value -- it cannot be told from one; any
# other object with "$" keys, e.g. {"$date": "bad"}, comes back as it was stored (it
# used to make every read raise); a key beginning "$$" now loses one "$".

class _Made(threading.local):
    n = 0      # tags :func:`_json_default` wrote during this thread's current encode


_made = _Made()


def _json_default(value: Any) -> Any:
    _made.n += 1
    if isinstance(value, dt.datetime):
        return {"$timestamp": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, decimal.Decimal):
        return {"$number": str(value)}
    if isinstance(value, (bytes, bytearray)):
        return {"$raw": bytes(value).hex().upper()}
    if isinstance(value, dt.timedelta):
        return {"$interval": _interval_text(value)}
    _made.n -= 1
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _interval_text(value: dt.timedelta) -> str:
    return f"P{value.days}DT{value.seconds}.{value.microseconds:06d}S"


def _interval(text: str) -> dt.timedelta:
    match = re.fullmatch(r"P(-?\d+)DT(\d+)\.(\d{6})S", text)
    if match is None:
        raise ValueError(text)
    days, seconds, microseconds = map(int, match.groups())
    return dt.timedelta(days=days, seconds=seconds, microseconds=microseconds)


def _canonical(parse: Callable[[str], Any], write: Callable[[Any], str]) -> Callable[[Any], Any]:
    """A tag's reader: the value when the text is exactly the form the tag is written in,
    else None (the object is then a user's, stored before keys were escaped)."""
    def read(text: Any) -> Any:
        if type(text) is not str:
            return None
        try:
            value = parse(text)
        except (ValueError, ArithmeticError):
            return None
        return value if write(value) == text else None
    return read


_TAG_READERS = {
    "$timestamp": _canonical(dt.datetime.fromisoformat, dt.datetime.isoformat),
    "$date": _canonical(dt.date.fromisoformat, dt.date.isoformat),
    "$number": _canonical(decimal.Decimal, str),
    "$raw": _canonical(bytes.fromhex, lambda b: b.hex().upper()),
    "$interval": _canonical(_interval, _interval_text),
}


def _json_hook(obj: dict) -> Any:
    if len(obj) == 1:
        (k, v), = obj.items()
        reader = _TAG_READERS.get(k)
        if reader is not None:
            value = reader(v)
            if value is not None:
                return value
    if any(k[:2] == "$$" for k in obj):
        return {k[1:] if k[:2] == "$$" else k: v for k, v in obj.items()}
    return obj


def _escaped(value: Any) -> Any:
    """``value`` with every "$" key of its objects given one more "$"."""
    if isinstance(value, dict):
        return {("$" + k if isinstance(k, str) and k[:1] == "$" else k): _escaped(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


_ENCODE = json.JSONEncoder(default=_json_default, separators=(",", ":"), allow_nan=False).encode
_DECODE = json.JSONDecoder().decode
_DECODE_TAGGED = json.JSONDecoder(object_hook=_json_hook).decode
# a "$" key in compact JSON text: a string opening after "{" or "," and closed by ":"
# (inside a string a quote is written \", so these can only be the text's own)
_DOLLAR_KEY = re.compile(r'[{,]"\$[^"\\]*(?:\\.[^"\\]*)*":')


def dumps_json(value: Any) -> str:
    """The stored form of a JSON value (see above)."""
    _made.n = 0
    text = _ENCODE(value)
    # the usual payload has no "$" key: a substring search decides it; each tag written
    # adds one '"$', so when that is all there is there are no "$" keys either
    made = _made.n
    if text.count('"$') == made or len(_DOLLAR_KEY.findall(text)) == made:
        return text
    return _ENCODE(_escaped(value))


def loads_json(text: str) -> Any:
    """A JSON value from its stored form; never raises on text :func:`dumps_json` (or an
    earlier version of it) wrote."""
    if type(text) is not str:
        return json.loads(text, object_hook=_json_hook)
    if '"$' not in text:
        return _DECODE(text)     # neither tags nor "$" keys: no hook to call per object
    return _DECODE_TAGGED(text)


def display_json(value: Any) -> str:
    """A JSON value as JSON text for people and IDAP clients: a user's keys as they are
    (nothing here is read back by :func:`loads_json`)."""
    return _ENCODE(value)


class PayloadCodec:
    """Validates, encodes and decodes the payloads of one queue table."""

    def __init__(self, payload_type: str, objtype: "ot.DbObjectType | None",
                 find_type: Callable[[str], "ot.DbObjectType | None"]) -> None:
        self.payload_type = payload_type
        self.objtype = objtype
        self._find_type = find_type

    # -- encode -------------------------------------------------------------
    def encode(self, value: Any) -> Any:
        pt = self.payload_type
        if pt == "RAW":
            if type(value) is bytes:   # the usual case first: immutable, kept as it is
                return value
            if isinstance(value, str):
                if not convertible(value):
                    raise ora(25215, f"RAW queue needs bytes; the str given is not UTF-8 text ({CONVERSION_FAILED})")
                return value.encode("utf-8")
            if isinstance(value, (bytes, bytearray, memoryview)):
                return bytes(value)
            raise ora(25215, f"RAW queue needs bytes, not {type(value).__name__}")
        if pt == "JSON":
            if isinstance(value, ot.DbObject):
                raise ora(25215, "JSON queue needs a JSON value, not an object type instance")
            try:
                return dumps_json(value)
            except (TypeError, ValueError) as e:
                raise ora(25215, f"payload is not a JSON value: {e}") from None
            except RecursionError:     # Python's stack, about 1,000 levels less the caller's
                raise ora(25215, "payload is not a JSON value: nested too deeply") from None
        if pt == "XMLTYPE":
            return self._xml(value)
        if pt == ANYDATA:
            return self._anydata(value)
        return self._object(value, self.objtype)

    def no_data(self) -> Any:
        """The payload of a message dequeued with DEQ_REMOVE_NODATA, as python-oracledb
        (Thin) hands it back: empty bytes for RAW, an instance of the object type with
        every attribute null, None for the other types."""
        if self.payload_type == "RAW":
            return b""
        if self.objtype is not None and self.payload_type not in SIMPLE_TYPES:
            return self.objtype.newobject()
        return None

    def driver_accepts(self, value: Any) -> bool:
        """Whether python-oracledb sends ``value`` to a queue of this type at all (its
        enqueue refuses others with DPY-2062 before the database sees them): str or bytes
        for RAW, a dict or list for JSON, an instance of the very type for an object type.
        The other payload types are the database's to check (ORA-25215)."""
        pt = self.payload_type
        if pt == "RAW":
            return isinstance(value, (str, bytes))
        if pt == "JSON":
            return isinstance(value, (dict, list))
        if pt in SIMPLE_TYPES or self.objtype is None:
            return True
        return isinstance(value, ot.DbObject) and value.type == self.objtype

    def _xml(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ora(25215, f"XMLTYPE queue needs an XML document string, not {type(value).__name__}")
        if not convertible(value):
            raise ora(25215, f"payload is not an XML document in the database character set ({CONVERSION_FAILED})")
        try:
            ElementTree.fromstring(value)
        except ElementTree.ParseError as e:
            raise ora(25215, f"payload is not well-formed XML ({e})") from None
        return value

    def _object(self, value: Any, objtype: "ot.DbObjectType | None") -> str:
        if not isinstance(value, ot.DbObject) or objtype is None or value.type != objtype:
            want = objtype.qualified_name if objtype is not None else self.payload_type
            got = value.type.qualified_name if isinstance(value, ot.DbObject) else type(value).__name__
            raise ora(25215, f"expected {want}, got {got}")
        return json.dumps(ot.to_storage(value), separators=(",", ":"))

    def _anydata(self, value: Any) -> str:
        # the envelope is plain JSON; a JSON value inside is kept as its own text so
        # its markers ($raw, $date …) cannot be confused with an object's storage form
        if isinstance(value, ot.DbObject):
            doc = {"$type": value.type.qualified_name, "value": ot.to_storage(value)}
            return json.dumps(doc, separators=(",", ":"))
        if isinstance(value, (bytes, bytearray)):
            return json.dumps({"$type": "RAW", "value": bytes(value).hex().upper()})
        codec = ANYDATA_CODECS.get(getattr(value, "oracle_type", None))   # an LCR
        if codec is not None:
            doc = codec[0](value)     # a document, or already its JSON text
            if isinstance(doc, str):
                return f'{{"$type":"{value.oracle_type}","value":{doc}}}'
            return _COMPACT({"$type": value.oracle_type, "value": doc})
        try:
            return json.dumps({"$type": "JSON", "value": dumps_json(value)})
        except (TypeError, ValueError) as e:
            raise ora(25215, f"ANYDATA payload cannot hold {type(value).__name__}: {e}") from None
        except RecursionError:
            raise ora(25215, "ANYDATA payload cannot hold a JSON value nested so deeply") from None

    # -- decode -------------------------------------------------------------
    def decode(self, stored: Any) -> Any:
        if stored is None:
            return None
        pt = self.payload_type
        if pt == "RAW":
            return bytes(stored)
        if pt == "JSON":
            return loads_json(stored)
        if pt == "XMLTYPE":
            return stored
        if pt == ANYDATA:
            if type(stored) is str and stored.startswith(_ENVELOPE):
                found = self._registered(stored)
                if found is not None:
                    return found
            doc = json.loads(stored)
            kind, value = doc["$type"], doc["value"]
            if kind == "RAW":
                return bytes.fromhex(value)
            if kind == "JSON":
                return loads_json(value)
            codec = ANYDATA_CODECS.get(kind)
            if codec is not None:
                return codec[1](value)
            objtype = self._find_type(kind)
            if objtype is None:
                raise ora(24181, kind)
            return ot.from_storage(objtype, value)
        return ot.from_storage(self.objtype, json.loads(stored))

    def check_stored(self, stored: Any) -> None:
        """That ``stored``, a stored form made elsewhere (a propagated batch), is one this
        queue's consumers can read: they would otherwise fail at every dequeue of it.

        :raises DatabaseError: ORA-25215 when it is not.
        """
        if stored is None or self.payload_type == "RAW":
            return
        if self.payload_type == "XMLTYPE":
            self._xml(stored)       # (decode hands the text over as it is)
            return
        try:
            self.decode(stored)
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError) as e:
            raise ora(25215, f"stored payload is not {self.payload_type}: {type(e).__name__}") from None

    @staticmethod
    def _registered(stored: str) -> Any:
        """A registered type's value (an LCR) from its envelope as :meth:`_anydata` writes it,
        ``{"$type":"<type>","value":<document>}``; None when it is not one (json.loads then
        reads the envelope)."""
        start = len(_ENVELOPE)
        end = stored.find('"', start)
        kind = stored[start:end]
        codec = ANYDATA_CODECS.get(kind)
        if codec is None or not stored.startswith(_VALUE, end):
            return None
        reader = ANYDATA_TEXT_READERS.get(kind)
        if reader is not None:
            found = reader(stored, end + len(_VALUE))
            if found is not None:
                return found
        try:
            value, stop = _SCAN(stored, end + len(_VALUE))
        except StopIteration:
            return None
        if stop != len(stored) - 1 or stored[stop] != "}":
            return None
        return codec[1](value)

    def decode_attribute_source(self, stored: Any) -> Any:
        """The payload as conditions see it (``tab.user_data``)."""
        return self.decode(stored)


def to_text(value: Any) -> str:
    """A printable form of a decoded payload (CLI, demo)."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return "0x" + value.hex().upper()
    if isinstance(value, ot.DbObject):
        return json.dumps(ot.to_storage(value))
    if isinstance(value, str):
        return value
    return display_json(value)


__all__ = ["PayloadCodec", "display_json", "dumps_json", "loads_json", "to_text", "base64"]
