"""Object values and types as JSON-compatible data, for stores to persist.

:func:`to_storage` / :func:`from_storage` (and the ``*_json`` variants) round
trip a :class:`~sluice.objtypes.DbObject` exactly; :func:`type_spec` /
:func:`type_from_spec` do the same for a type.  Re-exported by
:mod:`sluice.objtypes`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from ..errors import ora
from .checks import _column, _describe
from .datatypes import _DATETIME_KINDS, _NUMBER_KINDS, parse_datatype
from .dbobject import (DbObject, DbObjectAttr, DbObjectType, TypeRegistry, _build_object,
                       _make_attr)


def to_storage(obj: DbObject | None) -> Any:
    """A JSON-compatible image of ``obj`` that :func:`from_storage` restores exactly.

    Objects become JSON objects keyed by attribute name and collections JSON
    arrays, so stores can query payloads (``$.PRICE``).  Numbers stay JSON
    numbers unless a float would lose digits (then ``{"$num": "…"}``); dates
    and timestamps are ISO-8601 strings; RAW/BLOB are ``{"$raw": "HEX"}``.
    Deleted nested-table elements are compacted away, as when Oracle stores a
    nested table.
    """
    if obj is None:
        return None
    if not isinstance(obj, DbObject):
        raise ora(932, "an object type", _describe(obj))
    if obj.type.iscollection:
        element = obj.type._element
        return [_encode(element, v) for v in obj]
    attrs = obj.type._attrs_by_name
    return {name: _encode(attrs[name], v) for name, v in obj._data.items()}


def _encode(attr: DbObjectAttr, value: Any) -> Any:
    if value is None:
        return None
    kind = attr._datatype.kind
    if kind == "OBJECT":
        return to_storage(value)
    if kind in _NUMBER_KINDS:
        return _encode_decimal(value) if isinstance(value, Decimal) else value
    if kind in ("BINARY_FLOAT", "BINARY_DOUBLE"):
        return value if math.isfinite(value) else {"$num": repr(value)}
    if kind in _DATETIME_KINDS:
        return value.isoformat()
    if kind in ("RAW", "BLOB"):
        return {"$raw": value.hex().upper()}
    return value  # strings, CLOBs, booleans


def _encode_decimal(value: Decimal) -> int | float | dict:
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    if Decimal(repr(as_float)) == value:
        return as_float
    return {"$num": str(value)}


def from_storage(objtype: DbObjectType, data: Any) -> DbObject | None:
    """Rebuild the value :func:`to_storage` produced, typed by ``objtype``.

    :raises DatabaseError: ORA-00932 when ``data`` does not have the type's shape.
    """
    if data is None:
        return None
    obj = DbObject(objtype)
    if objtype.iscollection:
        if not isinstance(data, list):
            raise ora(932, objtype.qualified_name, f"JSON {type(data).__name__}")
        element = objtype._element
        obj._data.extend(_decode(element, v, objtype) for v in data)
        return obj
    if not isinstance(data, dict):
        raise ora(932, objtype.qualified_name, f"JSON {type(data).__name__}")
    attrs = objtype._attrs_by_name
    for name, v in data.items():
        if name not in attrs:
            raise ora(904, f"{objtype.qualified_name}.{name}")
        obj._data[name] = _decode(attrs[name], v, objtype)
    return obj


def _decode(attr: DbObjectAttr, data: Any, owner: DbObjectType) -> Any:
    if data is None:
        return None
    dt = attr._datatype
    kind = dt.kind
    try:
        if kind == "OBJECT":
            return from_storage(attr._objtype, data)  # type: ignore[arg-type]
        if kind in _NUMBER_KINDS:
            if isinstance(data, dict):
                return Decimal(data["$num"])
            if isinstance(data, (int, float)) and not isinstance(data, bool):
                return data
        elif kind in ("BINARY_FLOAT", "BINARY_DOUBLE"):
            if isinstance(data, dict):
                return float(data["$num"])
            if isinstance(data, (int, float)) and not isinstance(data, bool):
                return float(data)
        elif kind in _DATETIME_KINDS:
            if isinstance(data, str):
                if len(data) == 10:  # a datetime.date was stored
                    return _dt.date.fromisoformat(data)
                return _dt.datetime.fromisoformat(data)
        elif kind in ("RAW", "BLOB"):
            if isinstance(data, dict):
                return bytes.fromhex(data["$raw"])
        elif kind == "BOOLEAN":
            if isinstance(data, bool):
                return data
        elif isinstance(data, str):
            return data
    except (KeyError, ValueError, TypeError, ArithmeticError):
        pass
    raise ora(932, f"{dt.text} for {_column(owner, attr)}", f"stored {data!r:.60}")


def to_json(obj: DbObject | None) -> str:
    """:func:`to_storage` as JSON text."""
    return json.dumps(to_storage(obj), ensure_ascii=False, separators=(",", ":"))


def from_json(objtype: DbObjectType, text: str) -> DbObject | None:
    """The inverse of :func:`to_json`."""
    return from_storage(objtype, json.loads(text))


def type_spec(objtype: DbObjectType) -> dict:
    """A JSON-compatible description of ``objtype`` for stores to persist.

    ``depends_on`` lists the types it refers to, which must be registered
    before :func:`type_from_spec` rebuilds it.
    """
    def refs(attrs: Iterable[DbObjectAttr]) -> list[str]:
        return list(dict.fromkeys(a._objtype.qualified_name for a in attrs if a._objtype))

    spec: dict[str, Any] = {"schema": objtype.schema, "name": objtype.name, "kind": objtype.kind}
    if objtype.iscollection:
        element = objtype._element
        assert element is not None
        spec["element_type"] = element.datatype.text
        spec["max_size"] = objtype.max_elements
        spec["depends_on"] = refs([element])
    else:
        spec["attributes"] = [[a.name, a.datatype.text] for a in objtype._attrs]
        spec["depends_on"] = refs(objtype._attrs)
    return spec


def type_from_spec(spec: Mapping[str, Any], registry: TypeRegistry) -> DbObjectType:
    """Rebuild a type from :func:`type_spec` output (names are already canonical)."""
    schema, name, kind = spec["schema"], spec["name"], spec["kind"]
    if kind == "OBJECT":
        return _build_object(schema, name, [(n, t) for n, t in spec["attributes"]], registry,
                             names_canonical=True)
    element = parse_datatype(spec["element_type"])
    attr = _make_attr("COLUMN_VALUE", element, schema, registry, f"{schema}.{name}")
    return DbObjectType(schema, name, kind, element=attr, max_elements=spec.get("max_size"))
