"""A user's query on PostgreSQL fetched as python-oracledb fetches it (see :mod:`.sqlfetch`).

:func:`fetch_cursor` is a cursor of the connection whose numbers load as Oracle's NUMBER:
``numeric`` (SUM, AVG, literals like 2.5, exact quotients) and ``float8`` as an int when
whole, else a float — ``int2/4/8`` are ints already — or, to fetch decimals, every one
of them as a ``Decimal`` (without trailing zeros, as Oracle's NUMBER); a ``date`` as a
``datetime`` (python-oracledb's DATE); a ``jsonb`` (a JSON column) as its text, described
DB_TYPE_JSON.  The loaders are the cursor's own: the connection's other statements (the
queue operations among them) load as before.  :func:`description` maps
the result's column types to python-oracledb's ``DB_TYPE_*``; :func:`scaled_floats` makes
the whole values of a ``numeric(p, s > 0)`` column floats (python-oracledb's NUMBER(p, s)).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import psycopg
from psycopg.adapt import Loader

from ..errors import ora
from ..objtypes import (DB_TYPE_BOOLEAN, DB_TYPE_CHAR, DB_TYPE_DATE, DB_TYPE_INTERVAL_DS, DB_TYPE_NUMBER,
                        DB_TYPE_RAW, DB_TYPE_TIMESTAMP, DB_TYPE_TIMESTAMP_TZ, DB_TYPE_VARCHAR, DbType)
from ..objtypes import DB_TYPE_JSON
from .sqlfetch import Headings, clock_type, column
from .sqlheadings import declared_types
from .usercolumns import Lookup, maybe_user_tables

__all__ = ["declared_dates", "description", "fetch_cursor", "scaled_floats"]

_INTS = (20, 21, 23, 26)            # int8, int2, int4, oid
_FLOATS = (700, 701)                # float4, float8
_NUMERIC = 1700
_DATE = 1082
_TIMESTAMP = 1114
_JSONB = 3802                       # a JSON column of tableddl's (its text: sluice.jsonvalues reads it)
_TYPES = {16: DB_TYPE_BOOLEAN, 17: DB_TYPE_RAW, 1042: DB_TYPE_CHAR, 1082: DB_TYPE_DATE,
          1114: DB_TYPE_TIMESTAMP, 1184: DB_TYPE_TIMESTAMP_TZ, 1186: DB_TYPE_INTERVAL_DS, _JSONB: DB_TYPE_JSON,
          **{oid: DB_TYPE_NUMBER for oid in (*_INTS, *_FLOATS, _NUMERIC)}}


class _NumericLoader(Loader):
    """``numeric``'s text: an int when whole ("4", "4.000"), else a float."""

    def load(self, data):
        text = bytes(data)
        whole, point, fraction = text.partition(b".")
        if point:
            return float(text) if fraction.strip(b"0") else int(whole)
        try:
            return int(text)
        except ValueError:          # NaN, Infinity
            return float(text)


class _FloatLoader(Loader):
    """``float8``'s text (SYSDATE - column): an int when whole, else a float."""

    def load(self, data):
        value = float(bytes(data))
        return int(value) if value.is_integer() else value


class _DateLoader(Loader):
    """``date``'s text as the ``datetime`` python-oracledb fetches for a DATE (midnight)."""

    def load(self, data):
        text = bytes(data).decode()
        try:
            return datetime.fromisoformat(text)
        except ValueError:      # infinity, BC dates: Oracle has none
            raise ora(1841) from None


class _DecimalLoader(Loader):
    """Any number's text as a ``Decimal``, as Oracle's NUMBER has it: without trailing
    zeros ("3.5000" is 3.5, "4.0" is 4)."""

    def load(self, data):
        text = bytes(data)
        if b"." in text and b"e" not in text:
            text = text.rstrip(b"0").rstrip(b".")
        return Decimal(text.decode())


class _TextLoader(Loader):
    """``jsonb``'s text as it is: the cursor reads it as Oracle's JSON type (numbers exact)."""

    def load(self, data):
        return bytes(data).decode()


def fetch_cursor(raw: psycopg.Connection, decimals: bool) -> psycopg.Cursor:
    """A new cursor of ``raw`` loading numbers as python-oracledb fetches them."""
    cur = raw.cursor()
    adapters = cur.adapters
    adapters.register_loader(_DATE, _DateLoader)
    adapters.register_loader(_JSONB, _TextLoader)
    if decimals:
        for oid in (*_INTS, *_FLOATS, _NUMERIC):
            adapters.register_loader(oid, _DecimalLoader)
    else:
        adapters.register_loader(_NUMERIC, _NumericLoader)
        for oid in _FLOATS:
            adapters.register_loader(oid, _FloatLoader)
    return cur


def scaled_floats(cur: psycopg.Cursor, rows: list[tuple]) -> list[tuple]:
    """``rows`` with the whole values of a ``numeric(p, s > 0)`` column as floats, as
    python-oracledb fetches a NUMBER(p, s) with a scale (the loader, per value, made them ints)."""
    columns = [i for i, d in enumerate(cur.description or ()) if d.type_code == _NUMERIC and d.scale]
    if not columns or not rows:
        return rows
    out = []
    for row in rows:
        row = list(row)
        for i in columns:
            if type(row[i]) is int:
                row[i] = float(row[i])
        out.append(tuple(row))
    return out


def declared_dates(sql: str, cur: psycopg.Cursor, lookup: Lookup) -> dict[int, DbType]:
    """The result's ``timestamp`` columns that are a user's table's column declared DATE as it
    is (:mod:`.tableddl`'s ``date_time`` domain: Oracle's DATE has a time of day, PostgreSQL's
    ``date`` none): DB_TYPE_DATE, as python-oracledb describes it (looked up only then)."""
    stamps = [i for i, d in enumerate(cur.description or ()) if d.type_code == _TIMESTAMP]
    if not stamps or not maybe_user_tables(sql):
        return {}
    dates, _ = declared_types(sql, [d.name for d in cur.description], lookup)
    return {i: DB_TYPE_DATE for i in stamps if dates.get(i) is DB_TYPE_DATE}


def description(cur: psycopg.Cursor, names: list[str], types: dict[int, DbType] | None = None) -> Headings:
    """``names`` (the headings of ``cur``'s result) with python-oracledb's description;
    ``types``: the timestamp columns Oracle types otherwise (:func:`.sqlfetch.clock_type`)."""
    out = []
    types = types or {}
    for i, (name, d) in enumerate(zip(names, cur.description or ())):
        dbtype = clock_type(_TYPES.get(d.type_code, DB_TYPE_VARCHAR), types.get(i))
        if d.type_code == _NUMERIC:
            out.append(column(name, dbtype, precision=d.precision, scale=d.scale))
        else:
            out.append(column(name, dbtype, d.display_size))
    return Headings(names, out)
