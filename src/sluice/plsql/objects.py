"""Reading and writing the parts of values a block holds: attributes of objects
(the connection's option records, constructed types), elements of collections, and the
records a cursor's row (or a ``%ROWTYPE`` variable) is."""

from __future__ import annotations

import abc

from typing import Any

from ..errors import InterfaceError, ora
from ..objtypes import contents
from .errs import semantic_error
from .values import to_number

COLLECTION_METHODS = ("COUNT", "FIRST", "LAST", "LIMIT", "EXISTS", "EXTEND", "TRIM", "DELETE",
                      "NEXT", "PRIOR")


class Subscripted(abc.ABC):
    """A collection that answers ``v(i)``, ``v(i) := x`` and its methods itself: those of
    the types a block declares (``composites.py`` implements each)."""

    @abc.abstractmethod
    def get(self, index: Any) -> Any:
        """The element at ``index`` (ORA-06533 / ORA-01403 … where there is none)."""

    @abc.abstractmethod
    def put(self, index: Any, value: Any, tok: Any = None) -> None:
        """``v(index) := value``."""

    def target(self, index: Any) -> Any:
        """The element ``v(i).field := x`` changes in place."""
        return self.get(index)

    @abc.abstractmethod
    def method(self, name: str, args: list, tok: Any = None) -> Any:
        """A collection method's answer (COUNT, EXTEND, DELETE …)."""


def collection_method(value: list | tuple | dict, name: str, args: list) -> Any:
    """Oracle's collection methods.  VARRAYs and nested tables are Python lists
    (index 1 is ``[0]``); associative arrays are dicts.  EXTEND, TRIM and DELETE
    change a list in place (the variable holds the same list)."""
    if isinstance(value, Subscripted):
        return value.method(name, args)
    if name in ("NEXT", "PRIOR"):
        keys = sorted(value) if isinstance(value, dict) else list(range(1, len(value) + 1))
        at = args[0] if args else None
        found = [k for k in keys if at is not None and (k > at if name == "NEXT" else k < at)]
        return (found[0] if name == "NEXT" else found[-1]) if found else None
    if isinstance(value, dict):
        keys = sorted(value)
        reads = {"COUNT": len(value), "FIRST": keys[0] if keys else None,
                 "LAST": keys[-1] if keys else None, "LIMIT": None}
    else:
        reads = {"COUNT": len(value), "FIRST": 1 if value else None,
                 "LAST": len(value) or None, "LIMIT": None}
    if name in reads:
        return reads[name]
    if name == "EXISTS":
        key = args[0] if args else None
        return key in value if isinstance(value, dict) else \
            isinstance(key, int) and 1 <= key <= len(value)
    if isinstance(value, tuple):
        raise ora(6502, f"{name} on a collection that cannot change")
    count = int(to_number(args[0])) if args else 1
    if name == "EXTEND" and isinstance(value, list):
        value.extend([None] * count)
    elif name == "TRIM" and isinstance(value, list):
        if count > len(value):
            raise ora(6533)
        del value[len(value) - count:]
    elif name == "DELETE":
        if args and isinstance(value, dict):
            value.pop(args[0], None)
        else:
            value.clear()
    return None


def set_element(collection: Any, index: Any, value: Any) -> Any:
    """``v(i) := value``; returns the collection to keep in the variable.

    A NULL or list variable takes dense indexes (1, 2, … — the next one appends),
    which is how the AQ examples fill a recipient list; a dict takes any key."""
    if isinstance(collection, Subscripted):
        collection.put(index, value)
        return collection
    if isinstance(collection, dict):
        collection[index] = value
        return collection
    items = list(collection) if collection is not None else []
    i = to_number(index)
    if not isinstance(i, int) or not 1 <= i <= len(items) + 1:
        raise ora(6533)
    if i == len(items) + 1:
        items.append(value)
    else:
        items[i - 1] = value
    if isinstance(collection, list):
        collection[:] = items                 # keep the identity other holders see
        return collection
    return items


def lookup(value: Any, seg) -> tuple[bool, Any]:
    """Attribute ``seg`` of ``value``: lower-case name first, then as written."""
    candidates = dict.fromkeys((seg.name.lower(), seg.text, seg.name))
    if isinstance(value, (list, tuple, str, bytes, Subscripted)):
        return False, None                    # never Python's own methods (list.index …)
    if isinstance(value, dict):
        for key in candidates:
            if key in value:
                return True, value[key]
        return False, None
    for key in candidates:
        if hasattr(value, key):
            return True, contents(getattr(value, key))     # (a LOB attribute: its contents)
    return False, None


def element(collection: Any, index: Any) -> Any:
    """``v(i)``: 1-based element of a VARRAY / nested table, or an associative array key."""
    if isinstance(collection, Subscripted):
        return collection.get(index)
    if isinstance(collection, dict):
        return collection.get(index)
    if collection is None:
        raise ora(6531)
    i = to_number(index)
    if not isinstance(i, int) or not 1 <= i <= len(collection):
        raise ora(6533)
    return collection[i - 1]


def set_member(obj: Any, seg, value: Any) -> None:
    """``obj.attr := value``: lower-case attribute first, then the name as written."""
    if obj is None:
        raise ora(6530)
    if isinstance(obj, dict):
        key = next((k for k in (seg.name.lower(), seg.text, seg.name) if k in obj),
                   seg.name.lower())
        obj[key] = value
        return
    # (an object type's attributes are upper-case: seg.name, as lookup() reads them)
    for key in dict.fromkeys((seg.name.lower(), seg.text, seg.name)):
        if hasattr(obj, key):
            try:
                setattr(obj, key, value)
            except (InterfaceError, TypeError, ValueError, AttributeError) as exc:
                raise ora(6502, f"cannot set {seg.name}: {exc}") from exc
            return
    raise semantic_error(seg.tok.line, seg.tok.col,
                         f"PLS-00302: component '{seg.name}' must be declared")


def record_values(value: Any) -> list | None:
    """A record's field values in order (None for any other value)."""
    if not isinstance(value, Record):
        return None
    fields = object.__getattribute__(value, "_fields")
    return [] if fields is None else list(fields.values())


class Record:
    """A row as PL/SQL's record: fields by column name (``r.id`` reads column ``ID``).  One
    made without names (a ``%ROWTYPE`` variable before a FETCH fills it) is *open*: a field
    not assigned yet reads NULL, and assigning one adds it."""

    def __init__(self, names: list[str] | None = None, values: tuple = ()) -> None:
        object.__setattr__(self, "_fields", None if names is None else dict(zip(names, values)))
        object.__setattr__(self, "_open", names is None)

    def _key(self, name: str) -> str | None:
        fields = object.__getattribute__(self, "_fields")
        if fields is None:
            return name.upper()
        found = next((k for k in (name, name.upper()) if k in fields), None)
        return name.upper() if found is None and object.__getattribute__(self, "_open") else found

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        key = self._key(name)
        if key is None:
            raise AttributeError(name)
        fields = object.__getattribute__(self, "_fields")
        return None if fields is None else fields.get(key)

    def __setattr__(self, name: str, value: Any) -> None:
        key = self._key(name)
        if key is None:
            raise AttributeError(name)
        if object.__getattribute__(self, "_fields") is None:
            object.__setattr__(self, "_fields", {})
        object.__getattribute__(self, "_fields")[key] = value

    def __repr__(self) -> str:
        return f"Record({object.__getattribute__(self, '_fields')!r})"
