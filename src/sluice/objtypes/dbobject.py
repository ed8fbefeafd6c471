"""Oracle object types (ADTs) as python-oracledb exposes them.

``CREATE TYPE book_t AS OBJECT (title VARCHAR2(100), price NUMBER(7,2))`` becomes
a :class:`DbObjectType`; ``book_t.newobject()`` a :class:`DbObject` whose
attributes are read and written as Python attributes (``book.TITLE = "x"``).
Names, methods and accepted Python values follow python-oracledb's
``DbObjectType`` / ``DbObjectAttr`` / ``DbObject``.  Errors are Oracle's: every
assignment is checked at once, because Sluice has no server to refuse the
value later (ORA-12899 too long, ORA-01438 too many digits, ORA-00932 wrong
type, ORA-06532 VARRAY overflow).

Sluice also does the database's part of storing a value: ``''`` becomes NULL,
``CHAR(n)`` is blank-padded and ``NUMBER(p,s)`` is rounded to ``s`` digits at
assignment time, so what is read back after an enqueue/dequeue equals what is
read before it.

This module holds the types (:class:`DbObjectAttr`, :class:`DbObjectType`, the
builders :func:`build_object_type` / :func:`build_collection_type`) and
:class:`DbObject`; :mod:`sluice.objtypes` is the package's public face.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from ..errors import ora
from ..names import canonical
from .checks import ObjectValue, _check_value, _elements, _index
from .datatypes import _MAX_VARRAY, _NUMBER_KINDS, _STRING_KINDS, AttrType, DbType, parse_datatype

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------


class DbObjectAttr:
    """One attribute of an object type (python-oracledb ``DbObjectAttr``)."""

    __slots__ = ("_name", "_datatype", "_objtype")

    def __init__(self, name: str, datatype: AttrType, objtype: DbObjectType | None = None) -> None:
        self._name = name
        self._datatype = datatype
        self._objtype = objtype

    name = property(lambda self: self._name, doc="The attribute name (canonical case).")
    datatype = property(lambda self: self._datatype, doc="The parsed :class:`AttrType` (Sluice).")

    @property
    def type(self) -> DbObjectType | DbType:
        """The object type for object attributes, else a ``DB_TYPE_*`` constant."""
        return self._objtype if self._objtype is not None else self._datatype.dbtype

    @property
    def max_size(self) -> int | None:
        """Declared length of CHAR/VARCHAR2/NCHAR/NVARCHAR2/RAW attributes."""
        dt = self._datatype
        return dt.length if dt.kind in _STRING_KINDS or dt.kind == "RAW" else None

    @property
    def precision(self) -> int | None:
        """NUMBER(p,s) precision; 38 for INTEGER and NUMBER(*,s); None for NUMBER."""
        dt = self._datatype
        if dt.kind not in _NUMBER_KINDS or (dt.precision is None and dt.scale is None):
            return None
        return dt.precision or 38

    @property
    def scale(self) -> int | None:
        dt = self._datatype
        return dt.scale if dt.kind == "NUMBER" else None

    def __repr__(self) -> str:
        return f"<sluice.DbObjectAttr {self._name}>"


class DbObjectType:
    """An object or collection type (python-oracledb ``DbObjectType``).

    Built by :func:`build_object_type` / :func:`build_collection_type`; never
    changes afterwards.  Two types are equal when their qualified names are.
    """

    __slots__ = ("_schema", "_name", "_kind", "_attrs", "_attrs_by_name", "_element",
                 "_max_elements", "_package")

    def __init__(self, schema: str, name: str, kind: str, attrs: Iterable[DbObjectAttr] = (),
                 element: DbObjectAttr | None = None, max_elements: int | None = None,
                 package: str | None = None) -> None:
        self._schema = schema
        self._name = name
        self._package = package
        self._kind = kind
        self._attrs = tuple(attrs)
        self._attrs_by_name = {a.name: a for a in self._attrs}
        self._element = element
        self._max_elements = max_elements

    schema = property(lambda self: self._schema, doc="The owning schema.")
    name = property(lambda self: self._name, doc="The type name.")
    package_name = property(lambda self: self._package,
                            doc="A PL/SQL type's package (objtypes.records), else None.")
    kind = property(lambda self: self._kind, doc="'OBJECT', 'VARRAY' or 'TABLE' (Sluice).")
    iscollection = property(lambda self: self._kind != "OBJECT")
    max_elements = property(lambda self: self._max_elements,
                            doc="The VARRAY limit; None for objects and nested tables (Sluice).")

    @property
    def attributes(self) -> list[DbObjectAttr]:
        return list(self._attrs)

    @property
    def element_type(self) -> DbObjectType | DbType | None:
        return self._element.type if self._element is not None else None

    @property
    def qualified_name(self) -> str:
        if self._package is not None:
            return f"{self._schema}.{self._package}.{self._name}"
        return f"{self._schema}.{self._name}"

    def _get_full_name(self) -> str:  # python-oracledb's spelling
        return self.qualified_name

    def newobject(self, value: Iterable[Any] | None = None) -> DbObject:
        """A new object, all attributes NULL; a collection filled from ``value``."""
        obj = DbObject(self)
        if value is not None:
            obj.extend(value)
        return obj

    __call__ = newobject

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DbObjectType):
            return self.qualified_name == other.qualified_name
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.qualified_name)

    def __repr__(self) -> str:
        return f"<sluice.DbObjectType {self.qualified_name}>"


class TypeRegistry(Protocol):
    """Where named types are looked up: ``get_type("SCOTT.ADDRESS_T")``."""

    def get_type(self, qualified_name: str) -> DbObjectType | None: ...


def _resolve(dt: AttrType, default_schema: str, registry: TypeRegistry,
             building: str | None = None) -> DbObjectType:
    """Find the type a named datatype refers to.

    Unqualified names are looked up in the owner's schema first, then in SYS
    (which is where Oracle's public synonyms for AQ/JMS types point).
    """
    names = ([f"{dt.type_schema}.{dt.type_name}"] if dt.type_schema
             else [f"{default_schema}.{dt.type_name}", f"SYS.{dt.type_name}"])
    if building in names:
        raise ora(902, f"{dt.text} (a type cannot contain itself)")
    for name in names:
        found = registry.get_type(name)
        if found is not None:
            return found
    raise ora(902, f"{dt.text} (no such type {names[0]})")


def _make_attr(name: str, dt: AttrType, schema: str, registry: TypeRegistry,
               building: str) -> DbObjectAttr:
    if dt.kind != "OBJECT":
        return DbObjectAttr(name, dt)
    target = _resolve(dt, schema, registry, building)
    # keep the reference fully qualified so type specs re-resolve exactly
    qualified = AttrType("OBJECT", type_schema=target.schema, type_name=target.name)
    return DbObjectAttr(name, qualified, target)


def _build_object(schema: str, name: str, attributes: Iterable[tuple[str, str | AttrType]],
                  registry: TypeRegistry, names_canonical: bool) -> DbObjectType:
    building = f"{schema}.{name}"
    attrs: list[DbObjectAttr] = []
    for attr_name, datatype in attributes:
        an = attr_name if names_canonical else canonical(attr_name, "attribute name")
        if any(a.name == an for a in attrs):
            raise ora(957, an)
        dt = datatype if isinstance(datatype, AttrType) else parse_datatype(datatype)
        attrs.append(_make_attr(an, dt, schema, registry, building))
    if not attrs:
        raise ora(902, f"{building} (an object type needs at least one attribute)")
    return DbObjectType(schema, name, "OBJECT", attrs)


def build_object_type(schema: str, name: str, attributes: Iterable[tuple[str, str]],
                      registry: TypeRegistry) -> DbObjectType:
    """``CREATE TYPE schema.name AS OBJECT (attr datatype, …)``.

    ``attributes`` holds (name as written, datatype text) pairs; unquoted names
    are upper-cased.  Named datatypes are resolved through ``registry``.

    :raises DatabaseError: ORA-00902 bad or unknown datatype, ORA-00957
        duplicate attribute name, ORA-00904/00972 bad identifier.
    """
    return _build_object(canonical(schema, "schema"), canonical(name, "type name"),
                         attributes, registry, names_canonical=False)


def build_collection_type(schema: str, name: str, kind: str, element_type_text: str,
                          max_size: int | None, registry: TypeRegistry) -> DbObjectType:
    """``CREATE TYPE schema.name AS VARRAY(max_size) OF t`` or ``… AS TABLE OF t``.

    :raises DatabaseError: ORA-00902 for a bad kind, limit or element type.
    """
    schema, name = canonical(schema, "schema"), canonical(name, "type name")
    kind_u = kind.upper().strip() if isinstance(kind, str) else ""
    kind_u = "VARRAY" if kind_u in ("VARRAY", "VARYING ARRAY") else kind_u
    if kind_u not in ("VARRAY", "TABLE"):
        raise ora(902, f"{kind!r} (a collection is a VARRAY or a TABLE)")
    if kind_u == "VARRAY":
        if isinstance(max_size, bool) or not isinstance(max_size, int) or not 1 <= max_size <= _MAX_VARRAY:
            raise ora(902, f"VARRAY({max_size}) (the limit must be between 1 and {_MAX_VARRAY})")
    elif max_size:
        raise ora(902, f"TABLE OF {element_type_text} (a nested table has no limit)")
    else:
        max_size = None
    dt = element_type_text if isinstance(element_type_text, AttrType) else parse_datatype(element_type_text)
    element = _make_attr("COLUMN_VALUE", dt, schema, registry, f"{schema}.{name}")
    return DbObjectType(schema, name, kind_u, element=element, max_elements=max_size)


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


class _HoleType:
    """Marks a deleted nested-table element (pickles as the one instance)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<deleted>"

    def __reduce__(self) -> str:
        return "_HOLE"


_HOLE = _HoleType()
_LOB_KINDS = frozenset({"CLOB", "NCLOB", "BLOB"})
# what a CLOB / NCLOB / BLOB attribute is read as: (object, name, DB_TYPE_*) -> a LOB over
# the attribute's value, given by sluice.lobs (a layer above: set_attribute_lob)
_LOB_VIEW: list = []


def set_attribute_lob(view: Any) -> None:
    """Have a LOB attribute read as ``view(obj, name, dbtype)`` (sluice.lobs' LOB)."""
    _LOB_VIEW[:] = [view]


class DbObject(ObjectValue):
    """An instance of an object or collection type (python-oracledb ``DbObject``).

    Object attributes are Python attributes named as declared (``obj.TITLE``).
    Collections use python-oracledb's methods; indexes start at 0 and a
    deleted nested-table element leaves a hole.
    """

    __slots__ = ("_type", "_data")

    def __init__(self, objtype: DbObjectType) -> None:
        object.__setattr__(self, "_type", objtype)
        data: Any = [] if objtype.iscollection else dict.fromkeys(objtype._attrs_by_name)
        object.__setattr__(self, "_data", data)

    @property
    def type(self) -> DbObjectType:
        return self._type

    # -- object attributes ----------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # only reached when normal lookup fails, i.e. for declared attributes
        try:
            data = object.__getattribute__(self, "_data")
        except AttributeError:  # not initialised (e.g. during unpickling)
            raise AttributeError(name) from None
        if isinstance(data, dict) and name in data:
            value = data[name]
            if value is not None and _LOB_VIEW and self._type._attrs_by_name[name]._datatype.kind in _LOB_KINDS:
                # (python-oracledb: a LOB attribute is a LOB; sluice.lobs gives it)
                return _LOB_VIEW[0](self, name, self._type._attrs_by_name[name].type)
            return value
        raise self._no_attribute(name)

    def __setattr__(self, name: str, value: Any) -> None:
        attr = None if self._type.iscollection else self._type._attrs_by_name.get(name)
        if attr is None:
            raise self._no_attribute(name)
        self._data[name] = _check_value(attr, value, self._type)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete attribute {name!r} of {self._type.qualified_name}")

    def _no_attribute(self, name: str) -> AttributeError:
        typ = self._type
        hint = ""
        for declared in typ._attrs_by_name:
            if declared.upper() == name.upper():
                hint = f" (attribute names are case-sensitive: did you mean {declared!r}?)"
        return AttributeError(f"{typ.qualified_name} has no attribute {name!r}{hint}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._type._attrs_by_name))

    # -- whole-object operations ---------------------------------------------

    def copy(self) -> DbObject:
        """A deep copy: nested objects and collections are copied too."""
        new = DbObject(self._type)
        if isinstance(self._data, list):
            new._data.extend(v.copy() if isinstance(v, DbObject) else v for v in self._data)
        else:
            new._data.update({k: v.copy() if isinstance(v, DbObject) else v
                              for k, v in self._data.items()})
        return new

    __copy__ = copy

    def __deepcopy__(self, memo: dict) -> DbObject:
        return self.copy()

    def asdict(self) -> dict:
        """Collections: ``{index: element}`` (python-oracledb).  Objects (a Sluice
        extension): ``{attribute: value}`` with nested objects as dicts and
        collections as lists."""
        if isinstance(self._data, list):
            return {i: v for i, v in enumerate(self._data) if v is not _HOLE}
        return {k: _plain(v) for k, v in self._data.items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DbObject):
            return NotImplemented
        return self._type == other._type and self._data == other._data

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        if isinstance(self._data, list):
            inner = "[" + ", ".join(_short(v) for v in self.aslist()) + "]"
        else:
            inner = ", ".join(f"{k}={_short(v)}" for k, v in self._data.items())
        return f"<sluice.DbObject {self._type.qualified_name}({inner})>"

    def __getstate__(self) -> tuple:
        return (self._type, self._data)

    def __setstate__(self, state: tuple) -> None:
        object.__setattr__(self, "_type", state[0])
        object.__setattr__(self, "_data", state[1])

    # -- collections ----------------------------------------------------------

    def _items(self) -> list:
        if not isinstance(self._data, list):
            raise ora(932, "a collection", self._type.qualified_name)
        return self._data

    def _check_element(self, value: Any) -> Any:
        return _check_value(self._type._element, value, self._type)

    def __iter__(self) -> Iterator[Any]:
        return (v for v in self._items() if v is not _HOLE)

    def append(self, element: Any) -> None:
        """Add ``element`` after the highest index; ORA-06532 past a VARRAY's limit."""
        self.extend((element,))

    def extend(self, sequence: Iterable[Any]) -> None:
        """Append every element (all-or-nothing: nothing is added on error)."""
        items = self._items()
        values = [self._check_element(v) for v in _elements(sequence)]
        limit = self._type._max_elements
        if limit is not None and len(items) + len(values) > limit:
            raise ora(6532)
        items.extend(values)

    def aslist(self) -> list:
        return list(self)

    def size(self) -> int:
        return sum(1 for v in self._items() if v is not _HOLE)

    def exists(self, index: int) -> bool:
        items, i = self._items(), _index(index)
        return 0 <= i < len(items) and items[i] is not _HOLE

    def getelement(self, index: int) -> Any:
        if not self.exists(index):
            raise ora(22160, index)
        return self._data[index]

    def setelement(self, index: int, value: Any) -> None:
        """Replace element ``index`` (or refill a deleted one); it must be below ``last()+1``."""
        items, i = self._items(), _index(index)
        if not 0 <= i < len(items):
            limit = self._type._max_elements
            if limit is not None and i >= limit:
                raise ora(6532)
            raise ora(22165, i, 0, len(items) - 1)
        items[i] = self._check_element(value)

    def delete(self, index: int) -> None:
        """Delete element ``index``, leaving a hole (nested tables only)."""
        self._items()
        if self._type.kind == "VARRAY":
            raise ora(22164)
        if not self.exists(index):
            raise ora(22160, index)
        self._data[index] = _HOLE

    def trim(self, num: int) -> None:
        """Remove ``num`` elements (deleted ones included) from the end."""
        items, n = self._items(), _index(num)
        if not 0 <= n <= len(items):
            raise ora(22167, n, len(items))
        del items[len(items) - n:]

    def first(self) -> int | None:
        return self._scan(range(len(self._items())))

    def last(self) -> int | None:
        return self._scan(range(len(self._items()) - 1, -1, -1))

    def next(self, index: int) -> int | None:
        i = _index(index)
        return self._scan(range(max(i + 1, 0), len(self._items())))

    def prev(self, index: int) -> int | None:
        i = _index(index)
        return self._scan(range(min(i, len(self._items())) - 1, -1, -1))

    def _scan(self, indexes: Iterable[int]) -> int | None:
        return next((i for i in indexes if self._data[i] is not _HOLE), None)


def _plain(value: Any) -> Any:
    """Nested objects → dicts, collections → lists (for :meth:`DbObject.asdict`)."""
    if isinstance(value, DbObject):
        if value.type.iscollection:
            return [_plain(v) for v in value]
        return value.asdict()
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."

