"""Per-datatype checks of values assigned to object attributes.

:func:`_check_value` returns what the database would store for an attribute
(``''`` as NULL, ``CHAR(n)`` blank-padded, ``NUMBER(p,s)`` rounded) or raises
the error Oracle would (ORA-12899, ORA-01438, ORA-00932 …).  Used by
:class:`~sluice.objtypes.dbobject.DbObject`, which derives from :class:`ObjectValue`
so that these checks recognise an object value without importing its module.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import struct
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Iterator

from ..charset import checked, utf8
from ..errors import ArgumentError, dpy, ora
from .datatypes import _DATETIME_KINDS, _NUMBER_KINDS, _STRING_KINDS, AttrType

if TYPE_CHECKING:
    from .dbobject import DbObjectAttr, DbObjectType

_NUM_CTX = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_UP, Emax=10**6, Emin=-10**6)
_NUMBER_LIMIT = Decimal("1E126")   # Oracle NUMBER overflows at 10^126


class ObjectValue:
    """The base of :class:`~sluice.objtypes.dbobject.DbObject` (an object or collection
    value), defined here so that the checks know one when they see it."""

    __slots__ = ()


class LobValue:
    """The base of :class:`sluice.lobs.LOB` and ``AsyncLOB`` (python-oracledb's LOB objects),
    defined here so that the checks, and Sluice's own readers of an object's attributes,
    know one when they see it."""

    __slots__ = ()

    def lob_contents(self) -> Any:      # (its text or bytes)
        raise NotImplementedError


def contents(value: Any) -> Any:
    """``value``, or a LOB's contents (text or bytes): what Sluice's own code reads of an
    object's LOB attribute (a dequeue condition, a rule, a PL/SQL block, an IDAP payload)."""
    return value.lob_contents() if isinstance(value, LobValue) else value


def _describe(value: Any) -> str:
    """Oracle's name for the type of a Python value, for ORA-00932 messages."""
    if isinstance(value, ObjectValue):
        return value.type.qualified_name
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, (int, float, Decimal)):
        return "NUMBER"
    if isinstance(value, str):
        return "CHAR"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "BINARY"
    if isinstance(value, _dt.datetime):
        return "TIMESTAMP"
    if isinstance(value, _dt.date):
        return "DATE"
    return f"Python {type(value).__name__}"


def _column(owner: DbObjectType, attr: DbObjectAttr) -> str:
    return f'"{owner.schema}"."{owner.name}"."{attr.name}"'


def _check_value(attr: DbObjectAttr, value: Any, owner: DbObjectType) -> Any:
    """The value to store for ``attr``, or the ORA error Oracle would raise."""
    if value is None:
        return None
    dt = attr._datatype
    kind = dt.kind
    if kind in _STRING_KINDS:
        return _check_string(dt, value, attr, owner)
    if kind in _NUMBER_KINDS:
        return _check_number(dt, value)
    if kind in ("BINARY_FLOAT", "BINARY_DOUBLE"):
        return _check_binary(dt, value)
    if kind in ("CLOB", "NCLOB", "BLOB"):
        value = _lob_contents(value, dt)
    if kind in _DATETIME_KINDS:
        if isinstance(value, _dt.date):
            return value
    elif kind in ("RAW", "BLOB"):
        return _check_bytes(dt, value, attr, owner)
    elif kind in ("CLOB", "NCLOB"):
        # no length limit; '' is NULL as for every character type
        text = _as_text(value, dt)
        return text or None
    elif kind == "BOOLEAN":
        if isinstance(value, int):  # bool is an int; python-oracledb takes 0/1 too
            return bool(value)
    elif kind == "OBJECT":
        if isinstance(value, ObjectValue) and value._type == attr._objtype:
            return value
        raise ora(932, attr._objtype.qualified_name if attr._objtype else dt.text, _describe(value))
    raise ora(932, dt.text, _describe(value))


def _lob_contents(value: Any, dt: AttrType) -> Any:
    """A LOB given to a LOB attribute: its contents (python-oracledb takes a LOB of the
    attribute's type, DPY-3014 for another); any other value as it is."""
    if not isinstance(value, LobValue):
        return value
    if value.type is not dt.dbtype:
        raise dpy(3014, value.type.name, dt.dbtype.name)
    return value.lob_contents()


def _as_text(value: Any, dt: AttrType) -> str:
    if isinstance(value, str):
        return checked(value)
    if isinstance(value, (bytes, bytearray)):  # python-oracledb decodes bytes for text
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ora(6502, "character string conversion failed (bytes are not UTF-8)") from None
    raise ora(932, dt.text, _describe(value))


def _check_string(dt: AttrType, value: Any, attr: DbObjectAttr, owner: DbObjectType) -> str | None:
    text = _as_text(value, dt)
    if text == "":
        return None  # Oracle stores '' as NULL
    if dt.char_semantics:
        size = len(text)
    else:
        size = len(text.encode("utf-8"))   # (_as_text checked it converts)
    assert dt.length is not None
    if size > dt.length:
        raise ora(12899, _column(owner, attr), size, dt.length)
    if dt.kind in ("CHAR", "NCHAR") and size < dt.length:
        text += " " * (dt.length - size)  # CHAR is blank-padded to its length
    return text


def _check_number(dt: AttrType, value: Any) -> int | float | Decimal:
    if isinstance(value, bool):
        value = int(value)
    elif not isinstance(value, (int, float, Decimal)):
        raise ora(932, dt.text, _describe(value))
    if isinstance(value, float) and not math.isfinite(value) or \
            isinstance(value, Decimal) and not value.is_finite():
        raise ora(1722, str(value))
    if abs(value) >= _NUMBER_LIMIT:
        raise ora(1426)
    if dt.kind == "FLOAT" or (dt.precision is None and dt.scale is None):
        return value
    # NUMBER(p,s): round to s decimals as the database does, then check p
    scale = dt.scale or 0
    exact = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    rounded = exact.quantize(Decimal(1).scaleb(-scale, _NUM_CTX), context=_NUM_CTX)
    if abs(rounded) >= Decimal(1).scaleb((dt.precision or 38) - scale, _NUM_CTX):
        raise ora(1438)
    if rounded == exact:
        return value
    if isinstance(value, int):
        return int(rounded)
    return float(rounded) if isinstance(value, float) else rounded


def _check_binary(dt: AttrType, value: Any) -> float:
    if not isinstance(value, (int, float, Decimal)):
        raise ora(932, dt.text, _describe(value))
    number = float(value)
    if dt.kind == "BINARY_FLOAT" and math.isfinite(number):
        try:  # single precision, as stored
            number = struct.unpack("f", struct.pack("f", number))[0]
        except OverflowError:
            number = math.inf
        if math.isinf(number):
            raise ora(1426)
    return number


def _check_bytes(dt: AttrType, value: Any, attr: DbObjectAttr, owner: DbObjectType) -> bytes | None:
    if isinstance(value, str):  # python-oracledb encodes str for RAW
        value = utf8(value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
    else:
        raise ora(932, dt.text, _describe(value))
    if not value:
        return None  # an empty RAW is NULL
    if dt.length is not None and len(value) > dt.length:
        raise ora(12899, _column(owner, attr), len(value), dt.length)
    return value


def _index(index: Any) -> int:
    # python-oracledb raises TypeError here: ArgumentError is one, and a sluice.Error
    if isinstance(index, bool) or not isinstance(index, int):
        raise ArgumentError(f"collection index must be an integer, not {type(index).__name__}")
    return index


def _elements(sequence: Any) -> Iterator[Any]:
    """An iterator over the elements given to extend a collection with."""
    try:
        return iter(sequence)
    except TypeError:     # python-oracledb's TypeError: ArgumentError is one too
        raise ArgumentError(f"a collection is extended with an iterable, not {type(sequence).__name__}") from None
