"""The declared types of a user's own tables' columns, as a statement typed at a cursor needs them.

Oracle knows each column's type when it compiles a statement; the translation of a
user's SQL (:mod:`.sqloracle`) works on its text.  For what depends on the type —
``column ± n`` is a DATE n days on for a DATE column and a number for a NUMBER one, a
DATE column is fetched as a ``datetime`` (SQLite holds it as text), a NUMBER(p, s) with a
scale as a float even when whole (SQLite keeps no scale) — the tables the statement
names (after FROM, JOIN, UPDATE, INTO, MERGE's USING and a FROM list's commas: :func:`table_names`) are
looked up in the store's catalog, in one query, only when a statement needs it:
:func:`sqlite_columns` and :func:`pg_columns` give ``{COLUMN: TYPE}`` (upper-cased) for
them.  A name two of those tables declare with different types maps to None (the
statement's text cannot tell which one it means).  Sluice's views (``AQ$…``,
``DBA_…``) and its own tables are not looked up: their dates are known by name
(:mod:`.viewdates`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Callable, Sequence

__all__ = ["AMBIGUOUS_DATE", "VIEW_TYPES", "Columns", "KeptColumns", "Lookup", "SqliteColumns", "date_kind",
           "is_number", "is_text", "view_types",
           "maybe_user_tables",
           "number_scale", "pg_columns", "sqlite_columns", "table_names"]

# name -> declared type (None: declared differently by two tables of the statement)
Columns = dict[str, "str | None"]
# a lookup the store gives the translation: the statement's table names -> their columns
Lookup = Callable[[Sequence[str]], Columns]

AMBIGUOUS_DATE = "?"      # a column two of the statement's tables declare differently, one as a date
_FROM_LIST = frozenset({"FROM"})
_BEFORE_TABLE = frozenset({"FROM", "JOIN", "UPDATE", "INTO", "USING"})   # (JOIN … USING (col) names none)
_ENDS_FROM = frozenset({"WHERE", "GROUP", "ORDER", "HAVING", "UNION", "INTERSECT", "EXCEPT", "MINUS",
                        "SELECT", "SET", "VALUES", "LIMIT", "FETCH", "CONNECT", "START",
                        "WINDOW"})
# Sluice's own objects: views whose dates are known by name, its catalog tables
_SLUICE = ("AQ$", "DBA_", "ALL_", "USER_", "V$", "GV$", "SLUICE", "DUAL")
_SCALE = re.compile(r"^(?:NUMBER|NUMERIC|DECIMAL|DEC)\s*\(\s*(\d+|\*)\s*(?:,\s*(-?\d+)\s*)?\)", re.I)


# a table named after FROM / JOIN / UPDATE / INTO / USING that is none of Sluice's
_USER_TABLE = re.compile(r"""\b(?:FROM|JOIN|UPDATE|INTO|USING)\s+(?!(?:"?\w+"?\s*\.\s*)?"?(?:AQ\$|DBA_|ALL_|USER_|G?V\$|"""
                         r"""SLUICE|DUAL\b))[\w"]""", re.I)
_FROM_COMMA = re.compile(r"\bFROM\b.*,", re.I | re.S)


def maybe_user_tables(sql: str) -> bool:
    """Whether ``sql`` may name a user's table (:func:`table_names`), told from its text
    without its tokens: a name after FROM / JOIN / UPDATE / INTO / USING not Sluice's, or a comma
    after a FROM."""
    return bool(_USER_TABLE.search(sql) or _FROM_COMMA.search(sql))


def table_names(toks: Sequence) -> list[str]:
    """The user's tables (or views) a statement's tokens (:func:`.sqloracle.tokens`) name,
    upper-cased without a schema, Sluice's own left out."""
    names: list[str] = []
    in_from: dict[int, bool] = {}
    depth = 0
    prev = ""
    for t in toks:
        text = t.text
        if text == "(":
            depth += 1
            in_from[depth] = False
        elif text == ")":
            depth -= 1
        elif t.kind in ("id", "qid"):
            word = t.text.upper() if t.kind == "id" else t.text[1:-1].upper()
            if word in _FROM_LIST:
                in_from[depth] = True
            elif word in _ENDS_FROM:
                in_from[depth] = False
            if prev in _BEFORE_TABLE or prev == "," and in_from.get(depth):
                name = re.sub(r"\s+", "", word).rpartition(".")[2]
                if name and not name.startswith(_SLUICE) and name not in names:
                    names.append(name)
        prev = text if t.kind == "op" else (t.text.upper() if t.kind == "id" else "")
    return names


def _merge(found: Columns, column: str, decl: str) -> None:
    """``column`` declared ``decl`` by one more table: None when two tables declare it
    differently, :data:`AMBIGUOUS_DATE` when one of them as a date."""
    if column not in found:
        found[column] = decl
    elif found[column] != decl:
        old = found[column]
        found[column] = AMBIGUOUS_DATE if old == AMBIGUOUS_DATE or date_kind(old) or date_kind(decl) else None


class SqliteColumns:
    """The declared types of the user's tables of a session's SQLite connection, kept
    until the schema changes (``PRAGMA schema_version``, which any connection's DDL
    bumps): a statement's lookup costs one read of that version, not the catalog's."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.version: int | None = None
        self.known: dict[tuple[str, ...], Columns] = {}

    def lookup(self) -> Lookup:
        """The lookup for one statement (the schema's version read at most once)."""
        checked = False

        def columns(tables: Sequence[str]) -> Columns:
            nonlocal checked
            if not tables:
                return {}
            if not checked:
                version = self.conn.execute("PRAGMA schema_version").fetchone()[0]
                if version != self.version:
                    self.version, self.known = version, {}
                checked = True
            key = tuple(tables)
            found = self.known.get(key)
            if found is None:
                found = self.known[key] = sqlite_columns(self.conn, tables)
            return found
        return columns


class KeptColumns:
    """The declared types of the user's tables a server store's session looked up, kept
    without asking the catalog again (PostgreSQL: a statement's lookup was a round trip
    each time it ran).  A user's DDL runs behind Sluice's back and nothing announces it,
    so a kept lookup is checked when a statement that used it fails: :meth:`Statement.stale`
    looks the tables up again, and the statement runs once more when their types changed
    (a statement translated for types its tables no longer have fails on PostgreSQL, which
    types every operator).  Everything kept is dropped when the store's catalog version
    moves (``version()``: Sluice's own DDL, a reconnection)."""

    def __init__(self, fetch: Callable[[Sequence[str]], Columns], version: Callable[[], int]) -> None:
        self.fetch, self.version = fetch, version
        self.at: int | None = None
        self.known: dict[tuple[str, ...], Columns] = {}

    def lookup(self) -> "Statement":
        """The lookup for one statement (a new one for each run of it)."""
        return KeptColumns.Statement(self)

    class Statement:
        """One statement's lookup: remembers which tables it was given from what was kept."""

        def __init__(self, kept: "KeptColumns") -> None:
            self.kept = kept
            self.reused: list[tuple[str, ...]] = []

        def __call__(self, tables: Sequence[str]) -> Columns:
            if not tables:
                return {}
            kept = self.kept
            version = kept.version()
            if version != kept.at:
                kept.at, kept.known = version, {}
            key = tuple(tables)
            found = kept.known.get(key)
            if found is None:
                found = kept.known[key] = kept.fetch(tables)
            else:
                self.reused.append(key)
            return found

        def stale(self) -> bool:
            """Whether the types this statement was given from what was kept changed since
            (looked up again, kept anew)."""
            kept, changed = self.kept, False
            for key in self.reused:
                found = kept.fetch(key)
                changed = changed or found != kept.known.get(key)
                kept.known[key] = found
            self.reused = []
            return changed


def sqlite_declarations(conn: sqlite3.Connection, tables: Sequence[str]) -> list[tuple[str, str, bool]]:
    """``(COLUMN, DECLARED TYPE, NOT NULL)`` of ``tables`` in SQLite's schema, each table's in
    its order (a PRIMARY KEY's column counts as NOT NULL: Oracle's key columns are); the one
    read of the declarations that the types (here) and the description (:mod:`.coldesc`) share."""
    if not tables:
        return []
    marks = ", ".join("?" * len(tables))
    named = conn.execute("SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') "
                         f"AND upper(name) IN ({marks})", list(tables)).fetchall()
    out = []
    for name, kind, sql in named:
        typed = view_types(sql) if kind == "view" else []
        for i, (column, decl, not_null, key) in enumerate(conn.execute(
                'SELECT name, type, "notnull", pk FROM pragma_table_info(?)', (name,))):
            decl = decl or (typed[i] if i < len(typed) else "")
            out.append((column.upper(), (decl or "").upper(), bool(not_null or key)))
    return out


# SQLite: a view's column that is an expression has no declared type; a view made at a
# cursor (:mod:`.viewddl`) keeps its columns' Oracle types in a comment of its text
VIEW_TYPES = "/* sluice:types "
_VIEW_TYPES = re.compile(re.escape(VIEW_TYPES) + r"(\[.*?\]) \*/")


def view_types(sql: str | None) -> list[str]:
    """The Oracle types a view's text keeps for its columns (``[]``: none kept)."""
    m = _VIEW_TYPES.search(sql or "")
    return json.loads(m.group(1)) if m else []


def sqlite_columns(conn: sqlite3.Connection, tables: Sequence[str]) -> Columns:
    """The columns of ``tables`` in SQLite's schema, by their declared types."""
    found: Columns = {}
    for column, decl, _ in sqlite_declarations(conn, tables):
        _merge(found, column, decl)
    return found


def pg_declarations(execute: Callable, tables: Sequence[str]) -> list[tuple[str, str, bool]]:
    """``(COLUMN, TYPE, NOT NULL)`` of ``tables`` in the session's schema on PostgreSQL, each
    table's in its order (as ``SELECT *`` gives them), the type as ``format_type`` spells it
    (``timestamp without time zone``, ``numeric(8,2)``); ``execute(sql, params)`` returns the
    rows.  Shared by the types (here) and the description (:mod:`.coldesc`)."""
    if not tables:
        return []
    rows = execute("SELECT upper(a.attname), upper(format_type(a.atttypid, a.atttypmod)), a.attnotnull "
                   "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                   "WHERE c.relnamespace = current_schema()::regnamespace AND upper(c.relname) = ANY(%s) "
                   "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY c.relname, a.attnum", [list(tables)])
    return [(column, decl, bool(not_null)) for column, decl, not_null in rows]


def pg_columns(execute: Callable, tables: Sequence[str]) -> Columns:
    """The columns of ``tables`` in the session's schema on PostgreSQL, by their types."""
    found: Columns = {}
    for column, decl, _ in pg_declarations(execute, tables):
        _merge(found, column, decl)
    return found


def date_kind(decl: str | None) -> str | None:
    """``DATE`` or ``TIMESTAMP`` for a declared type that is one (SQLite's DATETIME a
    TIMESTAMP), else None."""
    if not decl:
        return None
    if decl.startswith("TIMESTAMP") or decl.startswith("DATETIME"):
        return "TIMESTAMP"
    if decl.startswith("DATE"):
        return "DATE"
    return None


_NUMBERS = ("NUMBER", "NUMERIC", "DECIMAL", "DEC", "INT", "BIGINT", "SMALLINT", "TINYINT", "MEDIUMINT", "REAL",
            "DOUBLE", "FLOAT", "BINARY_FLOAT", "BINARY_DOUBLE")


def is_number(decl: str | None) -> bool:
    """Whether a declared type is a number's (SQLite's and PostgreSQL's names, Oracle's)."""
    return bool(decl) and decl != AMBIGUOUS_DATE and decl.startswith(_NUMBERS)


_TEXTS = ("VARCHAR", "NVARCHAR", "CHAR", "NCHAR", "TEXT", "CLOB", "NCLOB", "CHARACTER", "STRING")


def is_text(decl: str | None) -> bool:
    """Whether a declared type is character data's (SQLite's and PostgreSQL's names, Oracle's)."""
    return bool(decl) and decl != AMBIGUOUS_DATE and decl.startswith(_TEXTS)


def number_scale(decl: str | None) -> tuple[int | None, int] | None:
    """(precision, scale) of a declared ``NUMBER(p[, s])`` / ``NUMERIC`` / ``DECIMAL``
    (``NUMBER(*, s)``: no precision), None for any other type."""
    m = _SCALE.match(decl or "")
    if not m:
        return None
    precision = None if m.group(1) == "*" else int(m.group(1))
    return precision, int(m.group(2) or 0)
