"""PL/SQL record types of a package, as python-oracledb shows them: a :class:`DbObjectType`
(``package_name`` set, ``iscollection`` False) whose attributes are the record's fields,
upper-case, and whose ``newobject()`` is a :class:`DbObject` like any other.

``conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T")`` is one.  The package itself keeps the
record as a Python dataclass with the fields in lower case (``sluice.aq.dbms_aq``), so a
:class:`RecordType` converts both ways: :meth:`RecordType.record_of` when a bound object
reaches the package, :meth:`RecordType.object_of` when the package's record goes back to
a ``cursor.var(record_type)``.

A field left NULL in the object takes the record's declared default on the way in
(``priority`` 1, ``visibility`` ON_COMMIT …): ``newobject()`` starts all NULL, as
python-oracledb's does, and a block sees the defaults a declared record has.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .builtin import agent_from_object, agent_to_object, builtin_types
from .dbobject import DbObject, DbObjectAttr, DbObjectType, build_collection_type, build_object_type

_AGENT = "SYS.AQ$_AGENT"


class _Registry(dict):
    """The types a record's fields may name: the SYS types and the package's own."""

    def get_type(self, qualified_name: str) -> DbObjectType | None:
        return self.get(qualified_name)


class RecordType(DbObjectType):
    """A package's record type, tied to the dataclass the package uses for it."""

    __slots__ = ("_record_class",)

    def __init__(self, base: DbObjectType, package: str, record_class: type) -> None:
        super().__init__(base.schema, base.name, "OBJECT", base.attributes, package=package)
        self._record_class = record_class

    @property
    def record_class(self) -> type:
        return self._record_class

    def record_of(self, obj: DbObject) -> Any:
        """The package's record for ``obj`` (an object of this type); NULL fields take the
        record's defaults."""
        given = {}
        for attr in self.attributes:
            value = getattr(obj, attr.name)
            if value is not None:
                given[attr.name.lower()] = _python_value(attr, value)
        return self._record_class(**given)

    def object_of(self, record: Any) -> DbObject:
        """An object of this type holding ``record``'s fields (a record of
        :attr:`record_class`, or an object of this type, returned as it is)."""
        if isinstance(record, DbObject) or not isinstance(record, self._record_class):
            return record
        obj = self.newobject()
        for attr in self.attributes:
            setattr(obj, attr.name, _db_value(attr, getattr(record, attr.name.lower())))
        return obj


def _python_value(attr: DbObjectAttr, value: Any) -> Any:
    """A field's value as the package's record holds it: agents as ``sluice.Agent``,
    collections as lists."""
    if not isinstance(value, DbObject):
        return value
    if value.type.iscollection:
        return [agent_from_object(v) if _is_agent(v) else v for v in value]
    return agent_from_object(value) if _is_agent(value) else value


def _db_value(attr: DbObjectAttr, value: Any) -> Any:
    """A record field's value as the object's attribute takes it."""
    target = attr.type
    if value is None or isinstance(value, DbObject) or not isinstance(target, DbObjectType):
        return value
    registry = _Registry(builtin_types())
    if target.iscollection:
        if not value:               # no recipients: NULL, as a dequeue gives it (not returned)
            return None
        agents = target.element_type == registry.get(_AGENT)
        return target.newobject([agent_to_object(registry, v) if agents else v for v in value])
    return agent_to_object(registry, value) if target.qualified_name == _AGENT else value


def _is_agent(value: Any) -> bool:
    return isinstance(value, DbObject) and value.type.qualified_name == _AGENT


def build_record_type(schema: str, package: str, name: str, fields: list[tuple[str, str]],
                      record_class: type, collections: list[tuple[str, str, str]] = ()) -> RecordType:
    """The record ``schema.package.name`` with ``fields`` (name, datatype text), kept as
    ``record_class`` (a dataclass with those fields in lower case).  ``collections`` are the
    package's own collection types the fields name: (name, kind, element datatype), each
    named ``schema.package.name`` in a field's datatype."""
    registry = _Registry(builtin_types())
    for cname, kind, element in collections:
        base = build_collection_type(schema, cname, kind, element, None, registry)
        full = DbObjectType(schema, cname, base.kind, element=base._element, package=package)
        registry[f"{schema}.{package}.{cname}"] = full
        registry[f"{schema}.{cname}"] = full      # how a field's datatype text names it
    fields_known = {f.name for f in dataclasses.fields(record_class)}
    unknown = [f for f, _ in fields if f.lower() not in fields_known]
    if unknown:
        raise TypeError(f"{record_class.__name__} has no fields {unknown}")
    base = build_object_type(schema, name, fields, registry)
    return RecordType(base, package, record_class)
