"""A user's table's column's Oracle type, read from its declared type, as ``cursor.description``
gives it and python-oracledb fetches it (:mod:`.coldesc` applies it to a result's columns).

The declared type is SQLite's (Oracle's spelling, :mod:`.tableddl`, or whatever a table made
in the database itself says) or PostgreSQL's ``format_type`` (upper-cased).
python-oracledb's FetchInfo: a DATE / TIMESTAMP's display size is 23, its precision and
scale Oracle's describe (a TIMESTAMP(n) precision 0 and scale n — both None when both are
0, TIMESTAMP(0)); a BINARY_DOUBLE / BINARY_FLOAT, without precision, has display size 127.

* ``always``: the result's own type is wrong whatever its values — TIMESTAMP(n) (the
  stores say 6), TIMESTAMP WITH TIME ZONE / WITH LOCAL TIME ZONE (SQLite says TIMESTAMP;
  PostgreSQL's ``timestamp with time zone`` is both: DB_TYPE_TIMESTAMP_TZ), BINARY_DOUBLE /
  BINARY_FLOAT (PostgreSQL's ``double precision`` / ``real``, a NUMBER to the stores) and,
  on SQLite, CHAR(n) (its values padded) and BOOLEAN (its 1 / 0 True / False).
* otherwise (SQLite only): the type a column without values is given — NUMBER(p, s) and
  the other numbers, DATE, a DATETIME's TIMESTAMP — where the values would have told it.
* JSON (SQLite's declared name, PostgreSQL's ``jsonb``): DB_TYPE_JSON, its text read as
  Python objects by ``sluice.fetchvars``.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from functools import lru_cache
from typing import Callable, NamedTuple

from ..objtypes import (DB_TYPE_BINARY_DOUBLE, DB_TYPE_BINARY_FLOAT, DB_TYPE_BOOLEAN, DB_TYPE_CHAR, DB_TYPE_DATE, DB_TYPE_NUMBER,
                        DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_LTZ, DB_TYPE_TIMESTAMP_TZ)
from .usercolumns import number_scale
from ..objtypes import DB_TYPE_JSON

__all__ = ["Declared", "declared_type", "fetched"]


class Declared(NamedTuple):
    """A column's description from its declaration: (type, display_size, internal_size,
    precision, scale); whether it replaces the result's; how its values are fetched."""

    description: tuple
    always: bool
    convert: Callable[[object], object] | None = None


_STAMP = re.compile(r"TIMESTAMP\s*(?:\(\s*(\d+)\s*\))?\s*(WITH\s+LOCAL\s+TIME\s+ZONE|WITH\s+TIME\s+ZONE)?")
_CHAR = re.compile(r"(?:CHAR|CHARACTER)\s*\(\s*(\d+)")
_FLOATS = {"BINARY_DOUBLE": DB_TYPE_BINARY_DOUBLE, "BINARY_FLOAT": DB_TYPE_BINARY_FLOAT}
_PG_FLOATS = {"DOUBLE PRECISION": DB_TYPE_BINARY_DOUBLE, "REAL": DB_TYPE_BINARY_FLOAT}
_NUMBERS = ("NUMBER", "NUMERIC", "DECIMAL", "DEC", "INT", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT", "REAL",
            "DOUBLE", "FLOAT")


def _float(v: object) -> object:
    """A BINARY_DOUBLE's value as python-oracledb fetches it: a float, whole or not."""
    return float(v) if type(v) is int or type(v) is Decimal else v


def _zoneless(v: object) -> object:
    """A TIMESTAMP WITH (LOCAL) TIME ZONE's value as python-oracledb fetches it: its wall time."""
    return v.replace(tzinfo=None) if type(v) is dt.datetime and v.tzinfo is not None else v


def _boolean(v: object) -> object:
    """An SQLite BOOLEAN's 1 / 0 as python-oracledb fetches Oracle 23's BOOLEAN: True / False."""
    return bool(v) if type(v) is int else v


def _padding(size: int) -> Callable[[object], object]:
    def pad(v: object) -> object:
        return v.ljust(size) if type(v) is str and len(v) < size else v
    return pad


def _rounding(digits: int) -> Callable[[object], object]:
    """A TIMESTAMP(digits)'s value as Oracle keeps it: its fraction rounded to ``digits``
    (SQLite keeps the microseconds it was given; half up, as Oracle rounds)."""
    step = 10 ** (6 - digits)

    def rounded(v: object) -> object:
        if type(v) is not dt.datetime or not v.microsecond % step:
            return v
        us = (v.microsecond + step // 2) // step * step
        return v.replace(microsecond=0) + dt.timedelta(microseconds=us)
    return rounded


@lru_cache(maxsize=512)
def declared_type(decl: str, sized: bool) -> Declared | None:
    """The description of a column declared ``decl`` (upper-cased) where the store's result
    does not give it (``sized``: SQLite, whose results have neither types nor sizes), None
    where the result's own is right."""
    m = _STAMP.match(decl)
    if m:
        digits = 6 if m.group(1) is None else min(int(m.group(1)), 9)
        zone = (m.group(2) or "").split()
        dbtype = (DB_TYPE_TIMESTAMP if not zone else DB_TYPE_TIMESTAMP_LTZ if zone[1] == "LOCAL"
                  else DB_TYPE_TIMESTAMP_TZ)
        description = (dbtype, 23, None, 0, digits) if digits else (dbtype, 23, None, None, None)
        convert = _zoneless if zone else _rounding(digits) if sized and digits < 6 else None
        return Declared(description, True, convert)
    if decl in ("JSON", "JSONB"):       # Oracle's JSON type (tableddl: SQLite's JSON text, PostgreSQL's jsonb)
        return Declared((DB_TYPE_JSON, None, None, None, None), True)
    dbtype = _FLOATS.get(decl) or (None if sized else _PG_FLOATS.get(decl))
    if dbtype is not None:
        return Declared((dbtype, 127, None, None, None), True, _float)
    if not sized:
        return None
    m = _CHAR.match(decl)
    if m:
        size = int(m.group(1))
        return Declared((DB_TYPE_CHAR, size, size, None, None), True, _padding(size))
    if decl == "BOOLEAN":
        return Declared((DB_TYPE_BOOLEAN, None, None, None, None), True, _boolean)
    if decl.startswith("DATETIME"):
        return Declared((DB_TYPE_TIMESTAMP, 23, None, 0, 6), False)
    if decl.startswith("DATE"):
        return Declared((DB_TYPE_DATE, 23, None, None, None), False)
    if decl.startswith(_NUMBERS):
        ps = number_scale(decl)
        if ps is None or ps[0] is None:
            return Declared((DB_TYPE_NUMBER, 127, None, 0, -127), False)
        precision, scale = ps
        shown = precision + 1 + (scale + 1 if scale > 0 else 0)
        return Declared((DB_TYPE_NUMBER, shown, None, precision, scale), False)
    return None


def fetched(rows: list[tuple], converts: list[tuple[int, Declared]]) -> list[tuple]:
    """``rows`` with the values of the columns ``converts`` names as python-oracledb fetches them."""
    out = []
    for row in rows:
        row = list(row)
        for i, typed in converts:
            row[i] = typed.convert(row[i])
        out.append(tuple(row))
    return out
