"""``cursor.description`` of a user's table's columns as python-oracledb gives it: what the
table declares, not only what the result's values say.

python-oracledb's 7-tuple is ``(name, type, display_size, internal_size, precision, scale,
null_ok)``; ``null_ok`` is False for a column declared NOT NULL (a PRIMARY KEY column is
one), and a VARCHAR2(n) / CHAR(n) / RAW(n) column has n as its display and internal size.
The stores' descriptions (:mod:`.sqlfetch`, :mod:`.pgfetch`) come from the result: every
column ``null_ok`` True, and on SQLite (no column types) no sizes and CHAR described as
VARCHAR.  :func:`described` corrects the result columns that are a column of a user's table
itself (:func:`.sqlheadings.plain_columns`: a name, qualified or aliased, one of a ``*`` —
not an expression, not its MAX) with the table's declaration, looked up in the store's
catalog (:func:`sqlite_details`, :func:`pg_details`; kept as :class:`.usercolumns.KeptColumns`
keeps the declared types), after :func:`.lobcolumns.lob_described` typed its LOB columns (a CLOB
NOT NULL is both).  A name two of the statement's tables have is left as it is.

The declaration also types what the result's values cannot (:mod:`.coltypes`): on SQLite a
column without a value to read its type from (a query without rows, a column of NULLs) is
described as declared — NUMBER(p, s), DATE, TIMESTAMP —, not VARCHAR; a TIMESTAMP(n) has n
as its scale, a TIMESTAMP WITH (LOCAL) TIME ZONE is DB_TYPE_TIMESTAMP_TZ (_LTZ) and fetched
as python-oracledb fetches it (a datetime without its zone), a BINARY_DOUBLE / BINARY_FLOAT
is DB_TYPE_BINARY_DOUBLE / _FLOAT fetched as a float (whole ones too), and a CHAR(n)'s values
are blank-padded to n (SQLite keeps what was inserted)."""

from __future__ import annotations

import re
import sqlite3
from typing import Any, Callable, Sequence

from ..objtypes import DB_TYPE_CHAR, DB_TYPE_RAW, DB_TYPE_VARCHAR
from .coltypes import Declared, declared_type, fetched
from .sqlheadings import plain_columns
from .usercolumns import pg_declarations, sqlite_declarations

__all__ = ["Details", "described", "pg_details", "sqlite_details"]

# column (upper-cased) -> (declared type, NOT NULL); None: two of the statement's tables have it
Details = dict[str, "tuple[str, bool] | None"]
_SIZED = re.compile(r"^(VARCHAR2?|CHAR|CHARACTER|RAW|CHARACTER VARYING)\s*\(\s*(\d+)", re.I)
_TYPES = {"VARCHAR2": DB_TYPE_VARCHAR, "VARCHAR": DB_TYPE_VARCHAR, "CHARACTER VARYING": DB_TYPE_VARCHAR,
          "CHAR": DB_TYPE_CHAR, "CHARACTER": DB_TYPE_CHAR, "RAW": DB_TYPE_RAW}


def described(headings: Any, rows: list[tuple], sql: str, names: list[str],
              lookup: Callable[[Sequence[str]], Details], sized: bool) -> tuple[Any, list[tuple]]:
    """``headings`` (a :class:`.sqlfetch.Headings`) with the description of the result's
    columns that are a user's table's column as the table declares them: ``null_ok`` False
    when NOT NULL, and (``sized``: SQLite, whose results have no sizes nor types) a VARCHAR2(n) /
    CHAR(n) / RAW(n) column's type and size; the types the values cannot tell
    (:mod:`.coltypes`), and ``rows`` with those columns' values as python-oracledb fetches
    them.  ``names``: the database's names of the result's columns."""
    description = getattr(headings, "description", None)
    if not description:
        return headings, rows
    tables, columns = plain_columns(sql, names)
    if not columns:
        return headings, rows
    details = lookup(tables)
    converts: list[tuple[int, Declared]] = []
    for i, column in columns.items():
        found = details.get(column)
        if found is None or i >= len(description):
            continue
        decl, not_null = found
        d = list(description[i])
        if not_null:
            d[6] = False
        m = _SIZED.match(decl) if sized else None
        if m and d[1] in (DB_TYPE_VARCHAR, DB_TYPE_CHAR, DB_TYPE_RAW):
            d[1] = _TYPES[m.group(1).upper()]
            d[2] = d[3] = int(m.group(2))
        typed = declared_type(decl, sized)
        if typed is not None and (typed.always or d[1] is DB_TYPE_VARCHAR and d[2] is None
                                  and not any(row[i] is not None for row in rows)):
            d[1:6] = typed.description
            if typed.convert is not None:
                converts.append((i, typed))
        description[i] = tuple(d)
    return headings, fetched(rows, converts) if converts and rows else rows


def _merge(found: Details, column: str, decl: str, not_null: bool) -> None:
    found[column] = None if column in found else (decl, not_null)


def sqlite_details(conn: sqlite3.Connection, tables: Sequence[str]) -> Details:
    """The columns of ``tables`` in SQLite's schema: declared type, NOT NULL (or a PRIMARY
    KEY's: Oracle's key columns are NOT NULL)."""
    found: Details = {}
    for column, decl, not_null in sqlite_declarations(conn, tables):
        _merge(found, column, decl, not_null)
    return found


def pg_details(execute: Callable, tables: Sequence[str]) -> Details:
    """The columns of ``tables`` in the session's schema on PostgreSQL (``execute(sql,
    params)`` returns the rows): type (``format_type``), NOT NULL (a key's column is)."""
    found: Details = {}
    for column, decl, not_null in pg_declarations(execute, tables):
        _merge(found, column, decl, not_null)
    return found
