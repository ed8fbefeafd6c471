"""python-oracledb's output type handlers: ``cursor.var(...)`` and the values a query fetches into it.

An ``outputtypehandler`` (set on the connection or on the cursor, the cursor's first) is
called once per column of a query before its rows are fetched, with python-oracledb
2.x/3.x's ``(cursor, metadata)`` — :class:`FetchInfo` — or the older ``(cursor, name,
default_type, size, precision, scale)`` (a handler of two parameters gets the first
form, as python-oracledb decides).  It returns None (the column is fetched as it would
be) or a :class:`Var` from ``cursor.var(type, size, arraysize, outconverter=…)``: the
column's values are then fetched as ``type`` — ``str`` (a NUMBER as Oracle writes it:
``3.5``, ``0.1``, ``2``; a DATE in Oracle's default ``DD-MON-RR``), ``int``, ``float``,
``decimal.Decimal`` (exact), ``bytes``, ``datetime``, ``bool`` or a ``DB_TYPE_*`` — and
``outconverter`` is called on each value (not on NULL unless ``convert_nulls``).  A
value that cannot be so fetched is ORA-00932 or, for text that is no number, ORA-01722,
as Oracle's conversion answers.

A column ``cursor.description`` types ``DB_TYPE_CLOB``, ``DB_TYPE_NCLOB`` or ``DB_TYPE_BLOB``
(:mod:`sluice.store.lobcolumns`) is fetched as a :class:`sluice.lobs.LOB` under
``defaults.fetch_lobs`` (python-oracledb's default) or ``execute(…, fetch_lobs=True)``, as
``str`` / ``bytes`` otherwise — and so is a var of a LOB type (``cursor.var(DB_TYPE_CLOB)``
gives LOBs whatever ``fetch_lobs`` says; ``DB_TYPE_LONG`` / ``DB_TYPE_LONG_RAW``, ``str`` /
``bytes``: the contents, python-oracledb's idiom).  An async cursor's are ``AsyncLOB`` objects
(:func:`lob_rows`, ``cursor._async_lobs``).

The numbers reach this module exact (the store fetches them as ``Decimal`` while a
handler is in use): :func:`default_number` turns them into what python-oracledb gives
without one — an ``int`` when whole and the column has no scale, else a ``float``, or
the ``Decimal`` itself under ``defaults.fetch_decimals``.
"""

from __future__ import annotations

import datetime as dt
import inspect
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Sequence

from .defaults import defaults
from .errors import dpy, ora
from .lobs import LOB, AsyncLOB, fetched_lob
from .plsql.binds import BindVariable
from .objtypes import (DB_TYPE_BINARY_DOUBLE, DB_TYPE_BINARY_FLOAT, DB_TYPE_BLOB, DB_TYPE_BOOLEAN,
                       DB_TYPE_CHAR, DB_TYPE_CLOB, DB_TYPE_DATE, DB_TYPE_LONG, DB_TYPE_LONG_NVARCHAR,
                       DB_TYPE_LONG_RAW, DB_TYPE_NCHAR, DB_TYPE_NCLOB, DB_TYPE_NUMBER, DB_TYPE_NVARCHAR,
                       DB_TYPE_RAW, DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_LTZ, DB_TYPE_TIMESTAMP_TZ,
                       DB_TYPE_VARCHAR, DbObjectType, DbType, RecordType, contents)
from .objtypes import DB_TYPE_JSON
from .jsonvalues import json_object, json_text

__all__ = ["FetchInfo", "Var", "default_number", "fetch_converters", "fetched", "json_rows", "lob_rows"]

_NUMBER = "number"          # the column's own NUMBER conversion (DB_TYPE_NUMBER)
_OBJECT = "object"          # a var of an object type (cursor.var(conn.gettype(...)))
_LOB = "lob"                # a LOB of the column's (the var's) type: sluice.lobs.LOB
_JSON = "json"              # Oracle's JSON type: dicts, lists, Decimals (sluice.jsonvalues)
_LOB_TYPES = (DB_TYPE_CLOB, DB_TYPE_NCLOB, DB_TYPE_BLOB)
# a LOB column's type in the description when fetched as str / bytes (python-oracledb's)
_LONG_TYPES = {DB_TYPE_CLOB: DB_TYPE_LONG, DB_TYPE_NCLOB: DB_TYPE_LONG_NVARCHAR, DB_TYPE_BLOB: DB_TYPE_LONG_RAW}
# a var's type -> the Python type its values are fetched as
_DB_TYPES: dict[DbType, Any] = {
    **{t: str for t in (DB_TYPE_VARCHAR, DB_TYPE_NVARCHAR, DB_TYPE_CHAR, DB_TYPE_NCHAR, DB_TYPE_LONG,
                        DB_TYPE_LONG_NVARCHAR)},
    **{t: _LOB for t in _LOB_TYPES},
    DB_TYPE_NUMBER: _NUMBER, DB_TYPE_BINARY_DOUBLE: float, DB_TYPE_BINARY_FLOAT: float,
    DB_TYPE_RAW: bytes, DB_TYPE_LONG_RAW: bytes, DB_TYPE_BOOLEAN: bool, DB_TYPE_JSON: _JSON,
    **{t: dt.datetime for t in (DB_TYPE_DATE, DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_TZ, DB_TYPE_TIMESTAMP_LTZ)},
}
_PY_TYPES = (str, int, float, Decimal, bytes, bool, dt.datetime, dt.date, dt.timedelta)
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")


class Var(BindVariable):
    """python-oracledb's ``Var``, as ``cursor.var()`` / ``cursor.arrayvar()`` make it: what an
    output type handler returns to have a column fetched as its type, and a bind that gets
    a value back from a PL/SQL block (an OUT argument, ``:v := …``): :meth:`getvalue`
    gives that value as python-oracledb would (a RAW as ``bytes``, a NUMBER in an ``int``
    var as an ``int``, through ``outconverter``)."""

    def __init__(self, typ: Any, size: int = 0, arraysize: int = 1, inconverter: Callable | None = None,
                 outconverter: Callable | None = None, typename: str | None = None,
                 encoding_errors: str | None = None, bypass_decode: bool = False,
                 convert_nulls: bool = False, is_array: bool = False) -> None:
        if isinstance(typ, DbType):
            fetched = _DB_TYPES.get(typ)
        elif isinstance(typ, type) and typ in _PY_TYPES:
            fetched = typ
        elif isinstance(typ, DbObjectType):     # an object type: its objects, as they are
            fetched = _OBJECT
        else:
            fetched = None
        if fetched is None:
            raise dpy(3003, getattr(typ, "__name__", typ))
        self.type = typ
        self.size, self.arraysize = size, arraysize
        self.inconverter, self.outconverter = inconverter, outconverter
        self.typename, self.encoding_errors = typename, encoding_errors
        self.bypass_decode, self.convert_nulls = bypass_decode, convert_nulls
        self._fetched = fetched
        self._is_array = is_array
        self._values: list = [] if is_array else [None] * max(arraysize, 1)

    @property
    def num_elements(self) -> int:
        return self.arraysize

    @property
    def actual_elements(self) -> int:
        """The elements a PL/SQL table (``arrayvar``) holds; else :attr:`num_elements`."""
        return len(self._values) if self._is_array else self.arraysize

    @property
    def values(self) -> list:
        return list(self._values)

    def getvalue(self, pos: int = 0) -> Any:
        """The value at ``pos``; an array variable's whole list."""
        if self._is_array:
            return list(self._values)
        return self._values[pos]

    def setvalue(self, pos: int, value: Any) -> None:
        """Set the value at ``pos`` (through ``inconverter``); an array variable takes a
        list at position 0 (DPY-2028 otherwise, as python-oracledb)."""
        if self.inconverter is not None:
            value = self.inconverter(value)
        if self._is_array:
            if not isinstance(value, list):
                raise dpy(2028)
            if len(value) > self.arraysize:
                raise dpy(2016, self.arraysize, len(value))
            self._values = list(value)
        else:
            self._values[pos] = value

    # -- as a DML RETURNING INTO variable (sluice.dmlreturning): a list per execution
    def check_returned(self, pos: int) -> None:
        """That execution ``pos`` fits (DPY-2016 otherwise: ``cursor.var(…, arraysize=n)``
        for ``executemany`` of n rows, as python-oracledb asks)."""
        if self._is_array:
            raise dpy(3001, "a PL/SQL table variable", "DML RETURNING INTO an arrayvar")
        if pos >= len(self._values):
            raise dpy(2016, len(self._values), pos + 1)

    def returned_values(self, values: list) -> list:
        """The returned column's ``values`` converted to this variable's type."""
        return [self._out(v) for v in values]

    def set_returned(self, pos: int, values: list) -> None:
        self._values[pos] = values

    # -- as a bind of a PL/SQL block (sluice.plsql.binds.BindVariable)
    def bind_value(self) -> Any:
        value = contents(self.getvalue())       # (a LOB var's LOB: its contents)
        return json_text(value) if self._fetched is _JSON and value is not None else value

    def assign_out(self, value: Any) -> None:
        """A value the block gives back, converted to this variable's type."""
        if self._is_array:
            values = list(value.values()) if isinstance(value, dict) else list(value or [])
            if len(values) > self.arraysize:      # more than the variable has room for
                raise ora(6513)
            self._values = [self._out(v) for v in values]
        else:
            self._values[0] = self._out(value)

    def _out(self, value: Any) -> Any:
        if value is not None:
            column = (None, self.type if isinstance(self.type, DbType) else None, None, None, None, None, True)
            if self._fetched is _OBJECT:
                value = self._object(value)
            elif self._fetched is _LOB:     # (python-oracledb: a LOB var's value is a LOB)
                value = _lob(self.type, value, column)
            else:
                value = _as(self._fetched, value, column)
        if self.outconverter is not None and (value is not None or self.convert_nulls):
            value = self.outconverter(value)
        return value

    def _object(self, value: Any) -> Any:
        """``value`` in a variable of an object type: an object of that type (ORA-00932);
        a package's record (DBMS_AQ.DEQUEUE's message properties) as its record type's object."""
        if isinstance(self.type, RecordType):
            value = self.type.object_of(value)
        kind = getattr(value, "type", None)
        if not isinstance(kind, DbObjectType) or kind.qualified_name != self.type.qualified_name:
            got = kind.qualified_name if isinstance(kind, DbObjectType) else type(value).__name__.upper()
            raise ora(932, self.type.qualified_name, got)
        return value

    def __repr__(self) -> str:
        name = getattr(self.type, "name", None) or self.type.__name__
        value = self.getvalue() if self._is_array or len(self._values) != 1 else self._values[0]
        return f"<sluice.Var of type {name} with value {value!r}>"


class FetchInfo:
    """A column's metadata as python-oracledb 2.x gives an output type handler; also the
    7 items of ``cursor.description`` by index."""

    __slots__ = ("name", "type_code", "display_size", "internal_size", "precision", "scale", "null_ok")

    def __init__(self, column: Sequence) -> None:
        (self.name, self.type_code, self.display_size, self.internal_size, self.precision, self.scale,
         self.null_ok) = column

    @property
    def type(self) -> DbType:
        return self.type_code

    is_json = is_oson = False

    def _items(self) -> tuple:
        return (self.name, self.type_code, self.display_size, self.internal_size, self.precision,
                self.scale, self.null_ok)

    def __getitem__(self, i):
        return self._items()[i]

    def __len__(self) -> int:
        return 7

    def __eq__(self, other: object) -> bool:
        return self._items() == (other._items() if isinstance(other, FetchInfo) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FetchInfo{self._items()!r}"


def default_number(value: Decimal, column: Sequence) -> Any:
    """An exact NUMBER as python-oracledb fetches it without a handler: a ``Decimal``
    under ``defaults.fetch_decimals``, a ``float`` for a column with a scale
    (NUMBER(p, s > 0)) or a value not whole, else an ``int``."""
    if defaults.fetch_decimals:
        return value
    precision, scale = column[4], column[5]
    if precision and scale and scale > 0 or value != value.to_integral_value():
        return float(value)
    return int(value)


def fetched(cursor: Any, handler: Callable | None, description: list, rows: list[tuple], fetch_lobs: bool
            ) -> tuple[list, list[tuple]]:
    """A query's description and rows (as the store fetched them; numbers exact when
    ``handler`` is given) as the cursor gives them: each column as ``handler`` asks, a
    LOB column it leaves (or every one, without a handler) a LOB under ``fetch_lobs``;
    without ``fetch_lobs`` such a column is described as python-oracledb describes it
    then: ``DB_TYPE_LONG`` / ``DB_TYPE_LONG_NVARCHAR`` / ``DB_TYPE_LONG_RAW``."""
    if any(c[1] is DB_TYPE_JSON for c in description):
        rows = json_rows(description, rows)
    if handler is None:
        handled = [False] * len(description)
        if fetch_lobs:
            rows = lob_rows(cursor, description, rows)
    else:
        converters, handled = fetch_converters(cursor, handler, description, fetch_lobs)
        rows = [tuple(f(v) for f, v in zip(converters, row)) for row in rows]
    if not fetch_lobs and any(c[1] in _LOB_TYPES for c in description):
        description = [(c[0], _LONG_TYPES[c[1]], *c[2:]) if c[1] in _LOB_TYPES and not var else c
                       for c, var in zip(description, handled)]
    return description, rows


def fetch_converters(cursor: Any, handler: Callable, description: Sequence[Sequence], fetch_lobs: bool
                     ) -> tuple[list[Callable[[Any], Any]], list[bool]]:
    """For each column of ``description``: the function from the value the store fetched
    (numbers exact) to the value the cursor gives, as ``handler`` asks (a LOB column it
    returns None for: a LOB under ``fetch_lobs``); and whether it returned a var for it."""
    modern = _takes_metadata(handler)
    wrap = _lob_maker(cursor)
    out, handled = [], []
    for column in description:
        if modern:
            var = handler(cursor, FetchInfo(column))
        else:
            var = handler(cursor, column[0], column[1], column[2] or column[3] or 0, column[4] or 0,
                          column[5] or 0)
        if var is not None and not isinstance(var, Var):
            raise dpy(2015, type(var).__name__)
        out.append(_converter(var, column, fetch_lobs, wrap))
        handled.append(var is not None)
    return out, handled


def json_rows(description: Sequence[Sequence], rows: list[tuple]) -> list[tuple]:
    """``rows`` with the values of the columns ``description`` types DB_TYPE_JSON (the store's
    JSON text) as python-oracledb fetches Oracle's JSON type: dicts, lists, Decimals."""
    columns = [i for i, c in enumerate(description) if c[1] is DB_TYPE_JSON]
    out = []
    for row in rows:
        row = list(row)
        for i in columns:
            if row[i] is not None:
                row[i] = json_object(row[i])
        out.append(tuple(row))
    return out


def lob_rows(cursor: Any, description: Sequence[Sequence], rows: list[tuple]) -> list[tuple]:
    """``rows`` with the values of the columns ``description`` types CLOB, NCLOB or BLOB
    as LOBs (``AsyncLOB`` objects for an async cursor): python-oracledb's ``fetch_lobs``."""
    columns = [(i, c[1]) for i, c in enumerate(description) if c[1] in _LOB_TYPES]
    if not columns or not rows:
        return rows
    wrap = _lob_maker(cursor)
    out = []
    for row in rows:
        row = list(row)
        for i, dbtype in columns:
            if row[i] is not None:
                row[i] = wrap(_lob(dbtype, row[i], description[i]))
        out.append(tuple(row))
    return out


def _lob_maker(cursor: Any) -> Callable[[LOB], Any]:
    """What a fetched LOB is given as: itself, or an ``AsyncLOB`` over it for a cursor of
    an async connection (python-oracledb's ``AsyncLOB``: its methods awaited)."""
    return AsyncLOB if getattr(cursor, "_async_lobs", False) else _itself


def _itself(lob: LOB) -> LOB:
    return lob


def _lob(dbtype: DbType, value: Any, column: Sequence) -> LOB:
    """``value`` (as the store fetched it) as a LOB of ``dbtype``."""
    if isinstance(value, (LOB, AsyncLOB)):
        return value
    if not isinstance(value, (str, bytes, bytearray)):
        value = _as(bytes if dbtype is DB_TYPE_BLOB else str, value, column)
    return fetched_lob(dbtype, value)


def _takes_metadata(handler: Callable) -> bool:
    """python-oracledb's test: a handler of two parameters takes (cursor, metadata)."""
    try:
        return len(inspect.signature(handler).parameters) == 2
    except (TypeError, ValueError):
        return False


def _converter(var: Var | None, column: Sequence, fetch_lobs: bool, wrap: Callable[[LOB], Any]
               ) -> Callable[[Any], Any]:
    if var is None:
        fetched = _LOB if fetch_lobs and column[1] in _LOB_TYPES else _NUMBER
        lob_type = column[1]
    else:
        fetched, lob_type = var._fetched, var.type

    def convert(value: Any) -> Any:
        if value is None and (var is None or not var.convert_nulls):
            return None
        if value is not None:
            value = wrap(_lob(lob_type, value, column)) if fetched is _LOB else _as(fetched, value, column)
        return value if var is None or var.outconverter is None else var.outconverter(value)
    return convert


def _as(fetched: Any, value: Any, column: Sequence) -> Any:
    """``value`` (as the store fetched it) fetched as ``fetched``."""
    if fetched is _JSON:
        return json_object(value)
    if isinstance(value, Decimal):
        if fetched is _NUMBER:
            return default_number(value, column)
        if fetched is int:      # python-oracledb's int var: a value not whole stays a float
            return int(value) if value == value.to_integral_value() else float(value)
        if fetched is float:
            return float(value)
        if fetched is Decimal:
            return value
        if fetched is str:
            return _number_text(value)
        if fetched is bool:
            return value != 0
        raise ora(932, _name(fetched), "NUMBER")
    if isinstance(value, str):
        if fetched is str or fetched is _NUMBER:
            return value
        if fetched in (int, float, Decimal):
            return _as(fetched, _text_number(value), column)
        raise ora(932, _name(fetched), "CHAR")
    if isinstance(value, dt.datetime):
        if fetched in (dt.datetime, dt.date, _NUMBER):     # (python-oracledb's DATE var fetches datetimes)
            return value
        if fetched is str:
            return _date_text(value, column[1])
        raise ora(932, _name(fetched), "DATE")
    if isinstance(value, bytes):
        if fetched is bytes or fetched is _NUMBER:
            return value
        if fetched is str:
            return value.hex().upper()              # RAW to text is its hex, as Oracle's RAWTOHEX
        raise ora(932, _name(fetched), "RAW")
    if isinstance(value, (int, float)) and not isinstance(value, bool):   # (not exact: a store's own)
        return _as(fetched, Decimal(repr(value)) if isinstance(value, float) else Decimal(value), column)
    if fetched is _NUMBER or isinstance(value, fetched if isinstance(fetched, type) else ()):
        return value
    if fetched is str:
        return str(value)
    raise ora(932, _name(fetched), type(value).__name__.upper())


def _number_text(value: Decimal) -> str:
    """A NUMBER as Oracle writes it: no exponent, no trailing zeros (``3.5``, ``0.1``, ``2``)."""
    text = format(value, "f")           # (not normalize(): it rounds to the context's 28 digits)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "0", "") else text


def _text_number(text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ora(1722, repr(text)) from None
    if not value.is_finite():
        raise ora(1722, repr(text))
    return value


def _date_text(value: dt.datetime, dbtype: Any) -> str:
    """A date as Oracle writes it in its default NLS formats: DATE ``DD-MON-RR``,
    TIMESTAMP ``DD-MON-RR HH.MI.SSXFF AM``."""
    day = f"{value.day:02d}-{_MONTHS[value.month - 1]}-{value.year % 100:02d}"
    if dbtype is DB_TYPE_DATE:
        return day
    hour = value.hour % 12 or 12
    return f"{day} {hour:02d}.{value.minute:02d}.{value.second:02d}.{value.microsecond:06d} " \
           f"{'AM' if value.hour < 12 else 'PM'}"


def _name(fetched: Any) -> str:
    return {str: "CHAR", int: "NUMBER", float: "BINARY_DOUBLE", Decimal: "NUMBER", bytes: "BINARY",
            bool: "BOOLEAN", dt.datetime: "DATE", dt.date: "DATE", dt.timedelta: "INTERVAL DAY TO SECOND",
            _NUMBER: "NUMBER"}.get(fetched, str(fetched))
