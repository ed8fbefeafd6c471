"""The composite values of the types a block declares itself (``TYPE … IS …``, see
``localtypes.py``): nested tables, VARRAYs, associative arrays and records, with Oracle's
collection methods and errors (PL/SQL Language Reference, "PL/SQL Collections and Records").

As Oracle's PL/SQL does:

* a nested table or VARRAY variable without a value is *atomically null* (``v IS NULL``):
  every method but EXISTS, and every element reference, is ORA-06531
  (COLLECTION_IS_NULL); its constructor ``t(…)`` / ``t()`` makes it a collection;
* its elements are numbered from 1: a subscript below 1 (or above a VARRAY's limit) is
  ORA-06532 (SUBSCRIPT_OUTSIDE_LIMIT), one past the last ORA-06533 (SUBSCRIPT_BEYOND_COUNT),
  a NULL one ORA-06502; EXTEND adds elements (past a VARRAY's limit: ORA-06532), TRIM
  takes them from the end (more than there are: ORA-06533);
* ``DELETE(i)`` leaves a nested table sparse: the placeholder stays (reading it is ORA-01403,
  NO_DATA_FOUND; assigning it fills it again), COUNT no longer counts it, FIRST / LAST /
  NEXT / PRIOR skip it, TRIM counts it;
* an associative array is never null and has only the keys assigned, kept in key order
  (numbers, or strings in binary order): reading a missing key is ORA-01403;
* assignment copies: ``v2 := v1``, ``v(i) := r`` take a copy of a collection or a record,
  not a reference to it.

Records are ``objects.Record`` with their declared fields (:class:`TypedRecord`); a row a
query gives (``SELECT … INTO r``, ``BULK COLLECT``) fills a declared record by position.
"""

from __future__ import annotations

import bisect
import copy
import math
import re
from typing import Any, Callable

from ..errors import ora
from .errs import semantic_error
from .objects import Record, Subscripted
from .values import to_number, to_text

_DELETED = object()     # a nested table's placeholder for an element DELETE(i) removed
_PLAIN_NAME = re.compile(r"[A-Z][A-Z0-9_$#]*")     # a column name SQL needs no quotes for


def _wrong_type(tok: Any, what: str) -> Exception:
    line, col = (tok.line, tok.col) if tok is not None else (1, 1)
    return semantic_error(line, col, f"PLS-00382: expression is of wrong type ({what})")


def _not_applicable(name: str, tok: Any) -> Exception:
    line, col = (tok.line, tok.col) if tok is not None else (1, 1)
    return semantic_error(line, col, "PLS-00306: wrong number or types of arguments in call "
                          f"to '{name}'")


def copied(value: Any) -> Any:
    """``value`` as an assignment gives it: a composite value's own copy."""
    if isinstance(value, (Collection, AssocArray)):
        return value.copy()
    if isinstance(value, Record):                # (the same kind of record: open, typed …)
        fields = object.__getattribute__(value, "_fields")
        twin = copy.copy(value)
        object.__setattr__(twin, "_fields", None if fields is None else
                           {name: copied(v) for name, v in fields.items()})
        return twin
    return value


def is_null(value: Any) -> bool:
    """``value IS NULL``: NULL, or an atomically null collection."""
    return value is None or (isinstance(value, Collection) and value.slots is None)


def declared_type(value: Any) -> Any:
    """The block-declared type ``value`` is of (None for any other value)."""
    if isinstance(value, (Collection, AssocArray)):
        return value.ctype
    if isinstance(value, TypedRecord):
        return object.__getattribute__(value, "_type")
    return None


# ---------------------------------------------------------------------- types
class ScalarType:
    """An element or field of any other datatype: a scalar, a schema type, ``x%TYPE``
    (which may be a record's or a collection's type: its values are copied)."""

    def __init__(self, not_null: bool = False) -> None:
        self.not_null = not_null

    def initial(self) -> Any:
        return None

    def accept(self, value: Any, tok: Any = None) -> Any:
        if self.not_null and value is None:
            raise ora(6502, "NULL value for a NOT NULL element")
        return copied(value)


class RowType:
    """``x%ROWTYPE``: a record whose fields are a table's or a cursor's columns."""
    not_null = False

    def initial(self) -> Any:
        return Record()

    def accept(self, value: Any, tok: Any = None) -> Any:
        if not isinstance(value, Record):
            raise _wrong_type(tok, "a record is expected")
        return copied(value)


class RecordType:
    """``TYPE r IS RECORD (f type [NOT NULL] [:= default], …)``: ``fields`` are (name,
    its type, a callable giving its default or None)."""
    not_null = False

    def __init__(self, name: str, fields: list[tuple[str, Any, Callable[[], Any] | None]]) -> None:
        self.name, self.fields = name, fields

    def initial(self) -> "TypedRecord":
        return TypedRecord(self, [name for name, _, _ in self.fields],
                           tuple(ftype.accept(default()) if default is not None else ftype.initial()
                                 for _, ftype, default in self.fields))

    def accept(self, value: Any, tok: Any = None) -> "TypedRecord":
        if declared_type(value) is self:
            return copied(value)
        if isinstance(value, tuple):                 # a row (RETURNING … INTO rec)
            return self.from_row(value)
        if not isinstance(value, Record):
            raise _wrong_type(tok, f"a value of record type {self.name} is expected")
        fields = object.__getattribute__(value, "_fields")
        values = list(fields.values()) if fields is not None else [None] * len(self.fields)
        return self.from_row(values)

    def from_row(self, row: Any) -> "TypedRecord":
        """A query's row as this record: its columns fill the fields in order (too many
        columns ORA-00913, too few ORA-00947, as Oracle's INTO does)."""
        row = tuple(row)
        if len(row) > len(self.fields):
            raise ora(913)
        if len(row) < len(self.fields):
            raise ora(947)
        return TypedRecord(self, [name for name, _, _ in self.fields],
                           tuple(ftype.accept(v) for (_, ftype, _), v in zip(self.fields, row)))


class CollectionType:
    """``TABLE OF element`` (kind 'TABLE'), ``VARRAY(limit) OF element`` ('VARRAY'),
    ``TABLE OF element INDEX BY key`` ('ASSOC', ``numeric_keys`` for PLS_INTEGER & co)."""
    not_null = False

    def __init__(self, name: str, kind: str, element: Any, limit: int | None = None,
                 numeric_keys: bool = True) -> None:
        self.name, self.kind, self.element = name, kind, element
        self.limit, self.numeric_keys = limit, numeric_keys

    def initial(self) -> "Collection | AssocArray":
        """A variable's value before any assignment: empty (an associative array), else
        atomically null."""
        return AssocArray(self) if self.kind == "ASSOC" else Collection(self, None)

    def construct(self, args: list) -> "Collection":
        """``t(a, b, …)``: a collection of these elements (past a VARRAY's limit ORA-06532)."""
        return self.filled(list(args))

    def filled(self, values: list) -> "Collection | AssocArray":
        """A collection holding ``values`` (indexes from 1): a constructor's, a BULK COLLECT's
        rows, a bound python-oracledb ``arrayvar``'s list."""
        items = [self.element.accept(v) for v in values]
        if self.kind == "ASSOC":
            return AssocArray(self, dict(enumerate(items, 1)))
        if self.limit is not None and len(items) > self.limit:
            raise ora(6532)
        return Collection(self, items)

    def accept(self, value: Any, tok: Any = None) -> "Collection | AssocArray":
        if declared_type(value) is self:
            return value.copy()
        if value is None and self.kind != "ASSOC":
            return Collection(self, None)
        if isinstance(value, dict) and self.kind == "ASSOC":     # a bound PL/SQL table
            array = AssocArray(self)
            for key, item in value.items():
                array.put(key, item)
            return array
        if isinstance(value, (list, tuple)):                   # cursor.arrayvar()'s list
            return self.filled(list(value))
        raise _wrong_type(tok, f"a value of collection type {self.name} is expected")


def integer(value: Any) -> int:
    """A number as PLS_INTEGER takes it: rounded to the nearest integer, halves away from 0."""
    number = to_number(value)
    if isinstance(number, int):
        return number
    rounded = math.floor(abs(number) + 0.5)
    return int(rounded if number >= 0 else -rounded)


def _index(value: Any) -> int:
    """A subscript: an integer (NULL is ORA-06502)."""
    if value is None:
        raise ora(6502, "NULL index table key value")
    return integer(value)


def _count_arg(args: list, default: int = 1) -> int | None:
    if not args:
        return default
    return None if args[0] is None else _index(args[0])


# ----------------------------------------------------- nested tables, VARRAYs
class Collection(Subscripted):
    """A nested table's or VARRAY's value: ``slots`` from index 1 (``_DELETED`` where
    ``DELETE(i)`` left a placeholder), None while the collection is atomically null;
    ``holes`` counts the placeholders (none: COUNT, FIRST, NEXT … need no pass over it)."""

    def __init__(self, ctype: CollectionType, slots: list | None) -> None:
        self.ctype, self.slots, self.holes = ctype, slots, 0
        self._existing_cache: list[int] | None = None     # a sparse one's indexes (NEXT …)

    def copy(self) -> "Collection":
        twin = Collection(self.ctype, None if self.slots is None else
                          [s if s is _DELETED else copied(s) for s in self.slots])
        twin.holes = self.holes
        return twin

    def _live(self) -> list:
        if self.slots is None:
            raise ora(6531)
        return self.slots

    def _existing(self) -> list[int] | range:
        slots = self._live()
        if not self.holes:
            return range(1, len(slots) + 1)
        if self._existing_cache is None:
            self._existing_cache = [i for i, s in enumerate(slots, 1) if s is not _DELETED]
        return self._existing_cache

    def _checked(self, index: Any) -> int:
        slots = self._live()
        i = _index(index)
        limit = self.ctype.limit
        if i < 1 or (limit is not None and i > limit):
            raise ora(6532)
        if i > len(slots):
            raise ora(6533)
        return i

    def get(self, index: Any) -> Any:
        i = self._checked(index)
        value = self.slots[i - 1]
        if value is _DELETED:
            raise ora(1403)
        return value

    def put(self, index: Any, value: Any, tok: Any = None) -> None:
        i = self._checked(index)
        value = self.ctype.element.accept(value, tok)
        if self.slots[i - 1] is _DELETED:
            self.holes, self._existing_cache = self.holes - 1, None
        self.slots[i - 1] = value

    def exists(self, index: Any) -> bool:
        if self.slots is None or index is None:
            return False
        i = _index(index)
        return 1 <= i <= len(self.slots) and self.slots[i - 1] is not _DELETED

    def indexes(self) -> list[int]:
        """The existing elements' indexes, in order (INDICES OF)."""
        return list(self._existing())

    def __iter__(self):
        return (s for s in self.slots or () if s is not _DELETED)

    def __len__(self) -> int:
        return len(self.slots or ()) - self.holes

    def method(self, name: str, args: list, tok: Any = None) -> Any:
        if name == "EXISTS":
            return self.exists(args[0] if args else None)
        slots = self._live()
        if name in ("EXTEND", "TRIM", "DELETE"):
            self._existing_cache = None          # (they change which indexes exist)
        if name == "COUNT":
            return len(self)
        if name == "LIMIT":
            return self.ctype.limit
        if name in ("FIRST", "LAST"):
            existing = self._existing()
            return (existing[0] if name == "FIRST" else existing[-1]) if existing else None
        if name in ("NEXT", "PRIOR"):
            key = args[0] if args else None
            return _neighbour(self._existing(), [None if key is None else to_number(key)], name)
        if name == "EXTEND":
            self._extend(slots, args)
        elif name == "TRIM":
            count = _count_arg(args)
            if count is not None:
                if count > len(slots) or count < 0:
                    raise ora(6533)
                self.holes -= sum(1 for s in slots[len(slots) - count:] if s is _DELETED)
                del slots[len(slots) - count:]
        elif name == "DELETE":
            self._delete(slots, args, tok)
        else:
            raise _not_applicable(name, tok)
        return None

    def _extend(self, slots: list, args: list) -> None:
        count = _count_arg(args)
        if count is None:
            return
        limit = self.ctype.limit
        if limit is not None and len(slots) + count > limit:
            raise ora(6532)
        if len(args) > 1:                        # EXTEND(n, i): n copies of element i
            source = self.get(args[1])
            slots.extend(copied(source) for _ in range(count))
        else:
            slots.extend(self.ctype.element.initial() for _ in range(count))

    def _delete(self, slots: list, args: list, tok: Any) -> None:
        if not args:
            slots.clear()
            self.holes = 0
            return
        if self.ctype.kind == "VARRAY":          # VARRAYs stay dense
            raise _not_applicable("DELETE", tok)
        low, high = args[0], args[-1]
        if low is None or high is None:
            return
        for i in range(max(_index(low), 1), min(_index(high), len(slots)) + 1):
            if slots[i - 1] is not _DELETED:
                slots[i - 1] = _DELETED
                self.holes += 1


def _neighbour(keys: list, args: list, name: str) -> Any:
    """NEXT(k) / PRIOR(k) in the sorted ``keys`` (NULL when there is none, or for NULL)."""
    if not args or args[0] is None:
        return None
    key = args[0]
    try:
        if name == "NEXT":
            at = bisect.bisect_right(keys, key)
            return keys[at] if at < len(keys) else None
        at = bisect.bisect_left(keys, key)
        return keys[at - 1] if at > 0 else None
    except TypeError:
        raise ora(6502, f"{name} of a key of the wrong type") from None


# ---------------------------------------------------------- associative arrays
class AssocArray(Subscripted):
    """An associative array (index-by table): its keys in key order."""

    def __init__(self, ctype: CollectionType, items: dict | None = None) -> None:
        self.ctype, self.items = ctype, dict(items or {})
        self._order: list | None = None

    def copy(self) -> "AssocArray":
        return AssocArray(self.ctype, {k: copied(v) for k, v in self.items.items()})

    def key(self, value: Any) -> Any:
        if value is None:
            raise ora(6502, "NULL index table key value")
        return _index(value) if self.ctype.numeric_keys else to_text(value)

    def keys(self) -> list:
        if self._order is None:
            self._order = sorted(self.items)
        return self._order

    def get(self, index: Any) -> Any:
        key = self.key(index)
        if key not in self.items:
            raise ora(1403)
        return self.items[key]

    def put(self, index: Any, value: Any, tok: Any = None) -> None:
        key = self.key(index)
        if key not in self.items:
            self._order = None
        self.items[key] = self.ctype.element.accept(value, tok)

    def target(self, index: Any) -> Any:
        """``a(k).f := x`` on a missing key makes the element (a record with NULL fields)."""
        key = self.key(index)
        if key not in self.items:
            self.put(key, self.ctype.element.initial())
        return self.items[key]

    def exists(self, index: Any) -> bool:
        return index is not None and self.key(index) in self.items

    def indexes(self) -> list:
        return list(self.keys())

    def __iter__(self):
        return (self.items[k] for k in self.keys())

    def __len__(self) -> int:
        return len(self.items)

    def method(self, name: str, args: list, tok: Any = None) -> Any:
        if name == "EXISTS":
            return self.exists(args[0] if args else None)
        if name == "COUNT":
            return len(self.items)
        if name == "LIMIT":
            return None
        keys = self.keys() if name in ("FIRST", "LAST", "NEXT", "PRIOR") else []
        if name in ("FIRST", "LAST"):
            return (keys[0] if name == "FIRST" else keys[-1]) if keys else None
        if name in ("NEXT", "PRIOR"):
            key = args[0] if args else None
            return _neighbour(keys, [None if key is None else self.key(key)], name)
        if name == "DELETE":
            self._delete(args)
            return None
        raise _not_applicable(name, tok)          # EXTEND, TRIM: not for index-by tables

    def _delete(self, args: list) -> None:
        if not args:
            self.items.clear()
        elif any(a is None for a in args):
            return
        elif len(args) == 1:
            self.items.pop(self.key(args[0]), None)
        else:
            low, high = self.key(args[0]), self.key(args[1])
            for key in [k for k in self.keys() if low <= k <= high]:
                del self.items[key]
        self._order = None


# -------------------------------------------------------------------- records
class TypedRecord(Record):
    """A record of a declared RECORD type: exactly its fields (another is PLS-00302)."""

    def __init__(self, rtype: RecordType, names: list[str], values: tuple) -> None:
        super().__init__(names, values)
        object.__setattr__(self, "_type", rtype)


COLLECTIONS = (Collection, AssocArray)


def record_elements(value: Any) -> bool:
    """Is ``value`` a declared collection whose elements are records (a row fills one)?"""
    return isinstance(value, COLLECTIONS) and isinstance(value.ctype.element, (RecordType, RowType))


# ------------------------------------------- nested tables in conditions (SQL's multiset ones)
def _nested_table(value: Any, what: str) -> "Collection | None":
    """``value`` as a nested table's condition takes it (None: NULL); anything else is
    PLS-00306, as Oracle compares no VARRAY, index-by table or scalar so."""
    if value is None or (isinstance(value, Collection) and value.ctype.kind == "TABLE"):
        return None if is_null(value) else value
    raise _not_applicable(what, None)


def cardinality(value: Any) -> int | None:
    """``CARDINALITY(nt)``: its elements; NULL for an empty or a null nested table."""
    table = _nested_table(value, "CARDINALITY")
    return len(table) or None if table is not None else None


def is_empty(value: Any) -> bool | None:
    """``nt IS EMPTY``: NULL for a null nested table."""
    table = _nested_table(value, "IS EMPTY")
    return None if table is None else len(table) == 0


def member_of(value: Any, collection: Any, compare: Callable[[str, Any, Any], Any]) -> bool | None:
    """``x MEMBER OF nt``: NULL when ``x`` is NULL or the table null or empty, else as IN
    compares (``compare`` is the interpreter's ``=``)."""
    table = _nested_table(collection, "MEMBER OF")
    if value is None or table is None or not len(table):
        return None
    result: bool | None = False
    for item in table:
        hit = compare("=", value, item)
        if hit:
            return True
        if hit is None:
            result = None
    return result


def equal_tables(a: Any, b: Any, compare: Callable[[str, Any, Any], Any]) -> bool | None:
    """``nt1 = nt2``: the same elements, in any order (NULL when either is null)."""
    left, right = _nested_table(a, "="), _nested_table(b, "=")
    if left is None or right is None:
        return None
    rest = list(right)
    for item in left:
        at = next((i for i, other in enumerate(rest) if compare("=", item, other)), None)
        if at is None:
            return False
        del rest[at]
    return not rest


def python_value(value: Any) -> Any:
    """A declared collection as Python code (a package, a bind, an attribute of a package's
    object) takes one: a nested table or VARRAY the list of its elements (NULL: None), an
    associative array a dict in key order; anything else as it is."""
    if isinstance(value, Collection):
        return None if value.slots is None else [python_value(v) for v in value]
    if isinstance(value, AssocArray):
        return {key: python_value(value.items[key]) for key in value.keys()}
    return value


def row_columns(value: Any) -> list[str] | None:
    """For ``INSERT … VALUES rec``: the columns an open ``%ROWTYPE`` record's fields name, in
    SQL (its fields are in the order they were assigned).  A record a row filled, or one of a
    declared RECORD type, has its fields in order: None (they go by position, as in Oracle)."""
    if not isinstance(value, Record) or not object.__getattribute__(value, "_open"):
        return None
    fields = object.__getattribute__(value, "_fields") or {}
    return [name if _PLAIN_NAME.fullmatch(name) else '"' + name.replace('"', '""') + '"'
            for name in fields]


def positional_records(value: Any, bulk: bool) -> bool:
    """Is ``value`` a record of a declared RECORD type (``bulk``: a collection of them), which a
    row fills by position?"""
    if bulk:
        return isinstance(value, COLLECTIONS) and isinstance(value.ctype.element, RecordType)
    return isinstance(declared_type(value), RecordType)


def assigned(current: Any, value: Any, tok: Any = None) -> Any:
    """What a variable holding ``current`` takes when ``value`` is assigned to it: a
    declared type's variable converts it; any variable takes a copy of a collection or a
    record, not the value another variable holds."""
    kind = declared_type(current)
    return kind.accept(value, tok) if kind is not None else copied(value)
