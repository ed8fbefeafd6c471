"""A user's query's CLOB / NCLOB / BLOB columns, described as Oracle describes them.

python-oracledb fetches a column ``cursor.description`` types ``DB_TYPE_CLOB``,
``DB_TYPE_NCLOB`` or ``DB_TYPE_BLOB`` as a LOB object (``sluice.fetchvars``); a RAW,
VARCHAR2 or computed text column stays bytes / str.  The stores' databases have no such
types: a user's table keeps a CLOB as text and a BLOB as bytes, and only its declared type
says which it is — SQLite keeps the declared name (``CLOB``, ``NCLOB``, ``BLOB``),
PostgreSQL the type's name (a domain ``clob`` over ``text``, ``blob`` over ``bytea``).
:func:`lob_described` gives those columns — a user's table's column as it is, as
:func:`.sqlheadings.declared_columns` finds them, also through ``*`` — their LOB type.
A RAW queue's ``USER_DATA`` is a BLOB (Oracle's queue table column), fetched as one from the
queue table and its ``AQ$`` view; the views' other RAW columns (MSG_ID …) stay RAW.
An expression of one (``UPPER(doc)``, ``doc || 'x'``) is text, as the database computed
it; Oracle would say CLOB for some of them (a gap).  Sluice's own views and tables are not
looked up (:mod:`.usercolumns`).
"""

from __future__ import annotations

import re
from typing import Iterable

from ..objtypes import DB_TYPE_BLOB, DB_TYPE_CLOB, DB_TYPE_NCLOB, DB_TYPE_RAW, DbType
from .sqlfetch import Headings, column
from .sqlheadings import declared_columns
from .usercolumns import Lookup, maybe_user_tables

__all__ = ["lob_described", "lob_type"]

_LOB_TYPES = {"CLOB": DB_TYPE_CLOB, "NCLOB": DB_TYPE_NCLOB, "BLOB": DB_TYPE_BLOB}
_WORD = re.compile(r"[A-Z_][\w$#]*")


def lob_type(decl: str | None) -> DbType | None:
    """The LOB type a declared column type names (``CLOB``, ``NCLOB``, ``BLOB``; a
    PostgreSQL domain of that name, maybe of another schema: ``hr.clob``), else None."""
    return _LOB_TYPES.get((decl or "").strip().upper().rpartition(".")[2].strip('"'))


def lob_described(headings: Headings, sql: str, names: list[str], lookup: Lookup,
                  queue_objects: Iterable[tuple[str, str]]) -> Headings:
    """``headings`` (a user's query's result: Oracle's names and description) with the
    columns its tables declare CLOB, NCLOB or BLOB described so, and a RAW queue's
    ``USER_DATA`` a BLOB (seed 003 "Propagation of Messages with LOBs": "In RAW queues the
    message payload is stored as a BLOB") when the statement names a queue table or its
    ``AQ$`` view (``queue_objects``: their (schema, name)s); ``names`` the database's names
    of the columns."""
    lobs: dict[int, DbType] = {}
    if maybe_user_tables(sql):
        for i, decl, _ in declared_columns(sql, names, lookup):
            dbtype = lob_type(decl)
            if dbtype is not None:
                lobs[i] = dbtype
    raw = [i for i, d in enumerate(headings.description) if d[0] == "USER_DATA" and d[1] is DB_TYPE_RAW]
    if raw and _names_queue_objects(sql, queue_objects):
        lobs.update(dict.fromkeys(raw, DB_TYPE_BLOB))
    if not lobs:
        return headings
    description = list(headings.description)
    for i, dbtype in lobs.items():
        description[i] = column(description[i][0], dbtype)
    return Headings(list(headings), description)


def _names_queue_objects(sql: str, queue_objects: Iterable[tuple[str, str]]) -> bool:
    """Whether ``sql`` names one of the queue tables or their views (a word of its text)."""
    words = set(_WORD.findall(sql.upper()))
    return any(name in words for _, name in queue_objects)
