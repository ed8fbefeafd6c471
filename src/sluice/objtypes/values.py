"""Building object values from Python data: Oracle's default constructor
(:func:`construct`) and :func:`from_dict`, the inverse of ``DbObject.asdict``.

Re-exported by :mod:`sluice.objtypes`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ora
from ..names import canonical
from .checks import _describe
from .dbobject import DbObject, DbObjectAttr, DbObjectType


def construct(objtype: DbObjectType, *args: Any, **by_name: Any) -> DbObject:
    """Oracle's default constructor: ``BOOK_T('Dune', 9.99)`` or by attribute name.

    Every attribute must be given once, as in Oracle; a collection
    constructor takes its elements positionally.

    :raises DatabaseError: ORA-06550 / PLS-00306 on a wrong argument list.
    """
    def wrong() -> Exception:
        return ora(6550, 1, 1, "PLS-00306: wrong number or types of arguments in call to "
                               f"'{objtype.name}'")

    obj = objtype.newobject()
    if objtype.iscollection:
        if by_name:
            raise wrong()
        obj.extend(args)
        return obj
    attrs = objtype._attrs
    if len(args) > len(attrs):
        raise wrong()
    given = dict(zip((a.name for a in attrs), args, strict=False))
    for key, value in by_name.items():
        name = key if key in objtype._attrs_by_name else canonical(key)
        if name not in objtype._attrs_by_name or name in given:
            raise wrong()
        given[name] = value
    if len(given) != len(attrs):
        raise wrong()
    for name, value in given.items():
        setattr(obj, name, value)
    return obj


def from_dict(objtype: DbObjectType, value: Any) -> DbObject | None:
    """The inverse of :meth:`DbObject.asdict` for objects: build a value of
    ``objtype`` from dicts (objects) and lists (collections) of Python values.
    Missing attributes are NULL; keys match exactly or case-insensitively.

    :raises DatabaseError: ORA-00904 for an unknown attribute, ORA-00932 for a
        value of the wrong shape, and the usual per-attribute errors.
    """
    if value is None or isinstance(value, DbObject):
        return value
    obj = objtype.newobject()
    if objtype.iscollection:
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise ora(932, objtype.qualified_name, _describe(value))
        element = objtype._element
        obj.extend(_nested(element, v) for v in value)
        return obj
    if not isinstance(value, Mapping):
        raise ora(932, objtype.qualified_name, _describe(value))
    for key, v in value.items():
        name = key if key in objtype._attrs_by_name else canonical(str(key))
        attr = objtype._attrs_by_name.get(name)
        if attr is None:
            raise ora(904, f"{objtype.qualified_name}.{key}")
        setattr(obj, name, _nested(attr, v))
    return obj


def _nested(attr: DbObjectAttr, value: Any) -> Any:
    if attr._objtype is not None and isinstance(value, (Mapping, list, tuple)):
        return from_dict(attr._objtype, value)
    return value
