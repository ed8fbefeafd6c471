"""``SYS.ANYDATA``: a value that carries its own datatype.

Rule conditions meet ANYDATA where Oracle hands out self-describing values:
``:dml.get_value('NEW', '"REGION_ID"')`` returns one, and the subset rules of
seed 000 read it with ``.AccessNumber()``; action-context name-value pairs hold
them too.  Oracle's member names map to snake case (``AccessNumber`` ->
:meth:`AnyData.access_number`, ``GetTypeName`` -> :meth:`AnyData.get_type_name`);
the rule compiler finds either spelling.

An ``Access<Type>`` call on a value of another type family is ORA-22626, as in
Oracle.  A NULL of a known type (``ANYDATA.ConvertNumber(NULL)``) is a non-NULL
ANYDATA whose ``AccessNumber()`` is NULL; ``AnyData.of(None)`` is an untyped
NULL whose every ``Access`` call is NULL.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ...errors import ora

__all__ = ["AnyData", "ANYDATA_TYPES"]

# Oracle's type names, grouped by the family an Access<Type> call accepts.
_FAMILY = {
    "SYS.NUMBER": "NUMBER", "SYS.BINARY_FLOAT": "NUMBER", "SYS.BINARY_DOUBLE": "NUMBER",
    "SYS.VARCHAR2": "CHAR", "SYS.CHAR": "CHAR", "SYS.NVARCHAR2": "CHAR", "SYS.NCHAR": "CHAR",
    "SYS.CLOB": "CHAR", "SYS.DATE": "DATE", "SYS.TIMESTAMP": "DATE", "SYS.RAW": "BINARY",
    "SYS.BLOB": "BINARY",
}
ANYDATA_TYPES = frozenset(_FAMILY)


class AnyData:
    """An immutable (type name, value) pair with Oracle's ANYDATA members."""

    __slots__ = ("_type_name", "_value")

    oracle_type = "SYS.ANYDATA"

    def __init__(self, type_name: str | None, value: Any) -> None:
        object.__setattr__(self, "_type_name", type_name)
        object.__setattr__(self, "_value", value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("AnyData is immutable")

    # -- construction (ANYDATA.Convert<Type>) --------------------------------
    @classmethod
    def of(cls, value: Any) -> "AnyData":
        """Wrap a Python value, inferring the Oracle type (an AnyData is returned as is)."""
        if isinstance(value, AnyData):
            return value
        if value is None:
            return cls(None, None)
        if isinstance(value, bool):
            raise ora(22626)  # PL/SQL BOOLEAN has no SQL type ANYDATA could carry
        if isinstance(value, (int, float, Decimal)):
            return cls("SYS.NUMBER", value)
        if isinstance(value, str):
            return cls("SYS.VARCHAR2", value or None)  # '' is NULL in Oracle
        if isinstance(value, datetime):
            return cls("SYS.TIMESTAMP" if value.microsecond else "SYS.DATE", value)
        if isinstance(value, date):
            return cls("SYS.DATE", datetime(value.year, value.month, value.day))
        if isinstance(value, (bytes, bytearray)):
            return cls("SYS.RAW", bytes(value) or None)
        objtype = getattr(value, "type", None)
        if getattr(objtype, "qualified_name", None):
            return cls(objtype.qualified_name, value)  # an object type instance
        oracle_type = getattr(value, "oracle_type", None)
        if isinstance(oracle_type, str):
            return cls(oracle_type, value)  # an LCR
        raise ora(22626)

    @classmethod
    def convert_number(cls, num: Any) -> "AnyData":
        return cls("SYS.NUMBER", _checked(num, (int, float, Decimal)))

    @classmethod
    def convert_varchar2(cls, c: Any) -> "AnyData":
        return cls("SYS.VARCHAR2", _checked(c, (str,)) or None)

    @classmethod
    def convert_char(cls, c: Any) -> "AnyData":
        return cls("SYS.CHAR", _checked(c, (str,)) or None)

    @classmethod
    def convert_date(cls, dat: Any) -> "AnyData":
        return cls("SYS.DATE", _as_datetime(_checked(dat, (date,))))

    @classmethod
    def convert_timestamp(cls, ts: Any) -> "AnyData":
        return cls("SYS.TIMESTAMP", _as_datetime(_checked(ts, (date,))))

    @classmethod
    def convert_raw(cls, r: Any) -> "AnyData":
        value = _checked(r, (bytes, bytearray))
        return cls("SYS.RAW", bytes(value) if value else None)

    @classmethod
    def convert_bfloat(cls, fl: Any) -> "AnyData":
        return cls("SYS.BINARY_FLOAT", None if fl is None else float(_checked(fl, (int, float, Decimal))))

    @classmethod
    def convert_bdouble(cls, dbl: Any) -> "AnyData":
        return cls("SYS.BINARY_DOUBLE", None if dbl is None else float(_checked(dbl, (int, float, Decimal))))

    @classmethod
    def convert_object(cls, obj: Any) -> "AnyData":
        return cls.of(obj) if obj is not None else cls(None, None)

    # -- members ---------------------------------------------------------------
    def get_type_name(self) -> str | None:
        """``'SYS.NUMBER'``, ``'SYS.VARCHAR2'``, …, or ``'SCHEMA.TYPE'`` for an object."""
        return self._type_name

    def _access(self, family: str) -> Any:
        if self._type_name is None:
            return None
        if _FAMILY.get(self._type_name) != family:
            raise ora(22626)
        return self._value

    def access_number(self) -> Any:
        return self._access("NUMBER")

    def access_varchar2(self) -> str | None:
        return self._access("CHAR")

    access_char = access_nvarchar2 = access_nchar = access_clob = access_varchar2

    def access_date(self) -> datetime | None:
        return self._access("DATE")

    access_timestamp = access_date

    def access_raw(self) -> bytes | None:
        return self._access("BINARY")

    access_blob = access_raw

    def access_bfloat(self) -> float | None:
        return self._access("NUMBER")

    access_bdouble = access_bfloat

    def access_object(self) -> Any:
        """The object (or LCR) inside; ORA-22626 for a scalar."""
        if self._type_name is not None and self._type_name in _FAMILY:
            raise ora(22626)
        return self._value

    @property
    def value(self) -> Any:
        """The Python value inside, whatever its type (Sluice)."""
        return self._value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, AnyData):
            return (self._type_name, self._value) == (other._type_name, other._value)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._type_name, repr(self._value)))

    def __repr__(self) -> str:
        return f"AnyData({self._type_name!r}, {self._value!r})"


# Oracle's member names as they are spelled (AccessVarchar2, GetTypeName), lower-cased, so
# that a PL/SQL block finds them the way it finds any member (sluice.plsql.objects.lookup)
for _name in [n for n in vars(AnyData) if n.startswith(("access_", "get_type_name"))]:
    setattr(AnyData, _name.replace("_", ""), getattr(AnyData, _name))
del _name


def _checked(value: Any, types: tuple[type, ...]) -> Any:
    if value is not None and (isinstance(value, bool) or not isinstance(value, types)):
        raise ora(22626)
    return value


def _as_datetime(value: date | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    return datetime(value.year, value.month, value.day)


_new_anydata = AnyData.__new__
_set_type_name = AnyData._type_name.__set__     # type: ignore[attr-defined]
_set_value = AnyData._value.__set__             # type: ignore[attr-defined]


def stored_anydata(type_name: str | None, value: Any) -> AnyData:
    """An AnyData for a (type name, value) pair read back from storage, where it was made
    canonical when it was written: filled through its slots with no inference or checks
    (an apply process reads millions; ``AnyData.of`` is for values from users)."""
    data = _new_anydata(AnyData)
    _set_type_name(data, type_name)
    _set_value(data, value)
    return data
