"""A query's result as python-oracledb fetches it: its numbers and its ``cursor.description``.

python-oracledb fetches a NUMBER as an ``int`` when its value is whole and its column
has no scale (an unconstrained NUMBER, as every computed column is), else as a
``float`` — and as a ``decimal.Decimal`` when ``oracledb.defaults.fetch_decimals`` is
set.  Its ``cursor.description`` holds one 7-tuple a column: ``(name, DB_TYPE_…,
display_size, internal_size, precision, scale, null_ok)``.

:class:`Headings` is what a store's ``query(…, oracle_sql=True)`` returns as its column
names: the names, and that description of them.  PostgreSQL's numbers are loaded as
such by :mod:`.pgfetch` from the result's column types; SQLite has no column types, so
:func:`sqlite_result` reads a column's type from its first value that is not NULL and
only the columns of REALs (whole ones become ints) are gone through — or, to fetch
decimals, every numeric column.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from ..objtypes import DB_TYPE_JSON
from ..objtypes import (DB_TYPE_BOOLEAN, DB_TYPE_CHAR, DB_TYPE_DATE, DB_TYPE_INTERVAL_DS, DB_TYPE_NUMBER,
                        DB_TYPE_RAW, DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_TZ, DB_TYPE_VARCHAR, DbType)
from .sqlitedays import MICROSECONDS_A_DAY
from .usercolumns import Lookup, date_kind, table_names

__all__ = ["Headings", "clock_type", "column", "sqlite_result", "whole_dates"]


class Headings(list):
    """A query's column names, and python-oracledb's ``cursor.description`` of them."""

    __slots__ = ("description",)

    def __init__(self, names: list[str], description: list[tuple]) -> None:
        super().__init__(names)
        self.description = description


def column(name: str, dbtype: DbType | None, size: int | None = None, precision: int | None = None,
           scale: int | None = None) -> tuple:
    """One column's description as python-oracledb gives it (``null_ok`` is not known:
    True).  A NUMBER without precision is Oracle's unconstrained NUMBER: 127, None, 0, -127."""
    if dbtype is DB_TYPE_NUMBER:
        if not precision:
            return (name, dbtype, 127, None, 0, -127, True)
        shown = precision + 1 + (scale + 1 if scale and scale > 0 else 0)
        return (name, dbtype, shown, None, precision, scale or 0, True)
    if dbtype is DB_TYPE_DATE:
        return (name, dbtype, 23, None, None, None, True)
    if dbtype is DB_TYPE_TIMESTAMP or dbtype is DB_TYPE_TIMESTAMP_TZ:
        return (name, dbtype, 23, None, 0, 6, True)
    if dbtype in (DB_TYPE_VARCHAR, DB_TYPE_CHAR, DB_TYPE_RAW):
        return (name, dbtype, size, size, None, None, True)
    return (name, dbtype, None, None, None, None, True)


# a SQLite value's type -> its column's type
_SQLITE_TYPES: dict[type, DbType] = {
    int: DB_TYPE_NUMBER, float: DB_TYPE_NUMBER, str: DB_TYPE_VARCHAR, bytes: DB_TYPE_RAW,
    bool: DB_TYPE_BOOLEAN, dt.datetime: DB_TYPE_TIMESTAMP, dt.date: DB_TYPE_DATE,
    dt.timedelta: DB_TYPE_INTERVAL_DS,
}


_DATE_TYPES = (DB_TYPE_DATE, DB_TYPE_TIMESTAMP)


def clock_type(dbtype: DbType | None, oracle_type: DbType | None) -> DbType | None:
    """A timestamp column's type as Oracle has it (``oracle_type``: SYSDATE's DATE, …)."""
    return oracle_type if oracle_type is not None and dbtype is DB_TYPE_TIMESTAMP else dbtype


def sqlite_result(names: list[str], rows: list[tuple], decimals: bool,
                  types: dict[int, DbType] | None = None,
                  numbers: dict[int, tuple[int | None, int]] | None = None) -> tuple[Headings, list[tuple]]:
    """``names`` with their description, and ``rows`` with numbers as python-oracledb's: a
    column whose first value is a REAL has its whole REALs as ints (SQLite's 7/2.0 and
    2.0); with ``decimals``, a numeric column's values are ``Decimal``s.  ``types``: the
    columns Oracle types as dates (:func:`clock_type`); such a column of text (dates SQLite
    computed, the views' dates) has datetimes, one of NULLs only is described so too, a
    column typed INTERVAL DAY TO SECOND of days timedeltas;
    ``numbers``: the columns declared NUMBER(p, s) (:func:`.sqlheadings.declared_types`),
    described with their precision and scale, and with a scale floats even when whole
    (SQLite's NUMERIC affinity keeps 12.00 as the integer 12)."""
    kinds: list[type | None] = [None] * len(names)
    missing = len(names)
    for row in rows:
        for i, v in enumerate(row):
            if kinds[i] is None and v is not None:
                kinds[i] = type(v)
                missing -= 1
        if not missing:
            break
    types = types or {}
    dates = [i for i, k in enumerate(kinds) if k is str and types.get(i) in _DATE_TYPES]
    if dates:       # a date SQLite computed per row (SYSDATE + column), or a view's: its text
        rows = [_converted(row, dates, _date) for row in rows]
        for i in dates:
            kinds[i] = dt.datetime
    rows = whole_dates(rows, types)
    intervals = [i for i, k in enumerate(kinds) if k in (int, float) and types.get(i) is DB_TYPE_INTERVAL_DS]
    if intervals:   # a TIMESTAMP minus a date: its days (sluice_interval, .sqlitedays)
        rows = [_converted(row, intervals, _interval) for row in rows]
        for i in intervals:
            kinds[i] = dt.timedelta
    booleans = [i for i, k in enumerate(kinds) if k is int and types.get(i) is DB_TYPE_BOOLEAN]
    if booleans:    # REGEXP_LIKE … as a select item: Oracle 23ai's BOOLEAN (.sqlheadings)
        rows = [_converted(row, booleans, bool) for row in rows]
        for i in booleans:
            kinds[i] = bool
    numbers = {i: ps for i, ps in (numbers or {}).items() if kinds[i] in (int, float, None)}
    described = [column(name, clock_type(_SQLITE_TYPES.get(kind, DB_TYPE_VARCHAR), types.get(i))
                        if (kind is not None or i not in types) and types.get(i) is not DB_TYPE_JSON else types[i],
                        None, *numbers.get(i, ()))
                 for i, (name, kind) in enumerate(zip(names, kinds))]     # (no sizes: SQLite has none)
    if decimals:
        numeric = [i for i, k in enumerate(kinds) if k is int or k is float]
        convert = _decimal
    else:
        scaled = [i for i, (_, scale) in numbers.items() if scale > 0 and kinds[i] is not None]
        numeric = [i for i, k in enumerate(kinds) if k is float and i not in scaled]
        convert = _whole
        if scaled and rows:
            rows = [_converted(row, scaled, _scaled) for row in rows]
    if numeric and rows:
        rows = [_converted(row, numeric, convert) for row in rows]
    return Headings(names, described), rows


def whole_dates(rows: list[tuple], types: dict[int, DbType] | None) -> list[tuple]:
    """``rows`` with the datetimes of the columns Oracle types DATE (``types``: a view's
    DATE column, a CAST to DATE) to the whole second, as an Oracle DATE is: the stores keep
    the views' dates to the microsecond (DESIGN-NOTES "DATE and TIMESTAMP columns of the views")."""
    columns = [i for i, dbtype in (types or {}).items() if dbtype is DB_TYPE_DATE]
    if not columns or not rows:
        return rows
    return [_converted(row, columns, _whole_second) for row in rows]


def _whole_second(v: object) -> object:
    return v.replace(microsecond=0) if type(v) is dt.datetime and v.microsecond else v


def returned_dates(toks: list, names: list[str], rows: list[tuple], lookup: Lookup) -> list[tuple]:
    """The rows of a DML statement's ``RETURNING`` clause (``toks`` its tokens, ``names``
    the returned columns') with the values of a column its table declares DATE or
    TIMESTAMP as datetimes: SQLite gives their text, a query gives datetimes."""
    if not rows:
        return rows
    columns = lookup(table_names(toks))
    dates = [i for i, name in enumerate(names) if date_kind(columns.get(name.upper()))]
    return [_converted(row, dates, _date) for row in rows] if dates else rows


def _converted(row: tuple, columns: list[int], convert) -> tuple:
    row = list(row)
    for c in columns:
        row[c] = convert(row[c])
    return tuple(row)


def _date(v: object) -> object:
    """SQLite's text of a date as the datetime python-oracledb fetches (other text as it is)."""
    if type(v) is str:
        try:
            return dt.datetime.fromisoformat(v)
        except ValueError:
            pass
    return v


def _interval(v: object) -> object:
    """An INTERVAL DAY TO SECOND's days as python-oracledb fetches it: a timedelta."""
    return dt.timedelta(microseconds=round(v * MICROSECONDS_A_DAY)) if type(v) in (int, float) else v


def _whole(v: object) -> object:
    """A REAL as python-oracledb fetches a NUMBER: an int when whole."""
    return int(v) if type(v) is float and v.is_integer() else v


def _scaled(v: object) -> object:
    """A NUMBER(p, s > 0)'s value as python-oracledb fetches it: a float even when whole."""
    return float(v) if type(v) is int else v


def _decimal(v: object) -> object:
    if type(v) is int:
        return Decimal(v)
    if type(v) is float:        # the shortest text of the REAL: 0.1 is Decimal('0.1'), 2.0 is 2
        return Decimal(int(v)) if v.is_integer() else Decimal(repr(v))
    return v
