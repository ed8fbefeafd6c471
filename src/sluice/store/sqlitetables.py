"""SQLite: a user's table's stored definition (its ``CREATE TABLE`` text in ``sqlite_master``)
read and changed, for the table DDL typed at a cursor (:mod:`.tableddl`, :mod:`.constraintddl`).

SQLite's ALTER TABLE adds, drops and renames columns and nothing else.  Two ways change
the rest, both SQLite's documented ones ("Making Other Kinds Of Table Schema Changes"):

* :func:`splice`: the stored text edited in place (``writable_schema``) -- for what leaves
  the stored rows and their indexes as they are (a column's default, NOT NULL);
* :func:`rebuild`: a new table of the edited text, the rows copied, the old table dropped
  and the new one renamed to its name, its indexes and triggers (the size checks of
  :mod:`.tableddl`, a synchronous capture's) made again -- for what needs SQLite's own
  index (a PRIMARY KEY or UNIQUE constraint added or dropped) or a constraint of another
  kind added or dropped.

Both run inside the DDL's one transaction, with ``PRAGMA foreign_keys`` off on its
connection (:func:`.tableddl._transaction`): SQLite would otherwise run the dropped
table's ON DELETE actions, as the implicit DELETE of a DROP TABLE does.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from ..errors import DatabaseError, not_supported
from .tabledefs import Table, quoted, read_stored_table

__all__ = ["Stored", "rebuild", "splice", "stored_table", "triggers_set_aside"]

Edit = tuple[int, int, str]      # (start, end, replacement) of the stored text


@dataclass
class Stored(Table):
    sql: str = ""


def stored_table(conn, physical: str) -> Stored:
    """The stored CREATE TABLE of an SQLite table, read (its columns' and constraints' spans
    in its text)."""
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (physical,)).fetchone()[0]
    try:
        t = read_stored_table(sql)
    except DatabaseError:
        raise not_supported(f"ALTER TABLE of the SQLite table {physical} (its definition is not read)") from None
    return Stored(t.columns, t.constraints, t.last_column_end, t.body, sql)


def edited(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with each ``(start, end, replacement)`` made (spans that do not overlap)."""
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def splice(conn, physical: str, change: Callable[[Stored, str], str]) -> None:
    """A column's definition changed in the table's stored CREATE TABLE, which SQLite reads
    as the table's definition (the stored rows stay as they are)."""
    stored = stored_table(conn, physical)
    new_sql = change(stored, stored.sql)
    version = conn.execute("PRAGMA schema_version").fetchone()[0]
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (new_sql, physical))
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    problems = conn.execute(f"PRAGMA quick_check({_literal(physical)})").fetchall()
    if problems != [("ok",)]:
        raise not_supported(f"this change of the SQLite table {physical}: {problems[0][0]}")


def rebuild(conn, physical: str, edits: Sequence[Edit]) -> None:
    """The table made again from its stored text with ``edits``, its rows, indexes and
    triggers kept (SQLite's twelve steps, in the caller's transaction)."""
    stored = stored_table(conn, physical)
    body = edited(stored.sql, edits)[stored.body[0]:]
    columns = ", ".join(quoted(r[1]) for r in conn.execute("SELECT * FROM pragma_table_info(?)", (physical,)))
    kept = _dependents(conn, physical, ("index", "trigger"))
    new = physical + "$rebuilt"
    conn.execute(f"CREATE TABLE {quoted(new)} {body}")
    conn.execute(f"INSERT INTO {quoted(new)} ({columns}) SELECT {columns} FROM {quoted(physical)}")
    conn.execute(f"DROP TABLE {quoted(physical)}")
    # (legacy: the rename leaves the views and triggers naming the table as they are -- they
    # name it again once it is renamed -- where SQLite would check each against a schema
    # without it)
    conn.execute("PRAGMA legacy_alter_table = ON")
    try:
        conn.execute(f"ALTER TABLE {quoted(new)} RENAME TO {quoted(physical)}")
    finally:
        conn.execute("PRAGMA legacy_alter_table = OFF")
    for sql in kept:
        conn.execute(sql)


@contextmanager
def triggers_set_aside(conn, physical: str) -> Iterator[None]:
    """The table's triggers dropped for the block and made again after it: a TRUNCATE is
    DDL in Oracle and fires no DML trigger (a synchronous capture's sees no deletes)."""
    kept = _dependents(conn, physical, ("trigger",))
    for name in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                             (physical,)).fetchall():
        conn.execute(f"DROP TRIGGER {quoted(name[0])}")
    yield
    for sql in kept:
        conn.execute(sql)


def _dependents(conn, physical: str, types: tuple[str, ...]) -> list[str]:
    """The statements making the table's own indexes / triggers (not SQLite's automatic
    indexes: its constraints make those)."""
    marks = ", ".join("?" * len(types))
    return [sql for (sql,) in conn.execute(
        f"SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ({marks}) AND sql IS NOT NULL "
        "ORDER BY rowid", (physical, *types))]


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
