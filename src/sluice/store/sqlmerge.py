"""Oracle's MERGE typed at a cursor (or run by a block), on either store; and the one door of
the compound DML statements — MERGE, INSERT ALL / INSERT FIRST (:mod:`.multiinsert`) — that
the store sessions' ``execute_dml`` opens when :func:`compound_dml` says the statement is one.

``MERGE INTO target [alias] USING table | (subquery) [alias] ON (condition)`` with ``WHEN
MATCHED THEN UPDATE SET col = expr, … [WHERE c] [DELETE WHERE c]`` and / or ``WHEN NOT
MATCHED THEN INSERT [(cols)] VALUES (…) [WHERE c]`` (either, in either order), as Oracle's
SQL Language Reference has it:

* the source is joined to the target on the condition as both were when the statement
  began: a source row with no target row inserts (if the INSERT's WHERE holds), one
  with a target row updates it (if the UPDATE's WHERE holds, evaluated on the row before
  the update); rows inserted are not matched by later source rows;
* ``DELETE WHERE`` deletes only rows the statement updated, its condition evaluated on
  the *updated* values (a target column the SET changes stands for its new value);
* a target row two source rows would update is ORA-30926 (unable to get a stable set of
  rows); a column the ON condition names cannot be SET (ORA-38104), nor can the INSERT's
  VALUES or WHERE name the target's columns (ORA-38101 / 38102), told when it is read;
* the rows merged (``cursor.rowcount``, ``SQL%ROWCOUNT``) are the rows updated plus the
  rows inserted — a row updated and then deleted counts once, as Oracle counts it
  ("1 row merged" for a row its DELETE WHERE removed);
* the statement is atomic (the session's ``sluice_dml`` savepoint): an error anywhere,
  ORA-00001 from an insert too, changes nothing.

**PostgreSQL** (15) has MERGE: the statement becomes PostgreSQL's — the SET's and the
INSERT list's columns unqualified, a subquery source aliased (``sluice_src``), the actions'
WHEREs as ``WHEN [NOT] MATCHED AND …`` — and DELETE WHERE a ``WHEN MATCHED AND <update's
WHERE> AND <delete condition on the new values> THEN DELETE`` before the update (the row is
deleted, not updated first: a synchronous capture there sees the DELETE of the row as it
was).  Its "MERGE command cannot affect row a second time" is ORA-30926
(:func:`.pgconn.translate`).

**SQLite** has none: one SELECT of the source joined to the target (``LEFT JOIN`` when
there is an INSERT) reads, per pair, the target's ``rowid``, the UPDATE's and DELETE's and
INSERT's conditions as 0 / 1 and the new values (each SET expression only for a matched
pair the UPDATE's WHERE takes, each VALUES expression only for an unmatched one the INSERT's
WHERE takes: a value Oracle would not compute raises nothing); then the updates by rowid
and the inserts run as an ``executemany`` each (with DELETE WHERE each row is updated and
then deleted by the rowid the update returns) — so triggers (a synchronous capture's) see
each row's UPDATE, DELETE and INSERT as Oracle fires them.  Everything is read before anything
changes: the statement sees the tables as they were, as Oracle's does.  Binds bound by
name reach every statement; binds bound by position are numbered first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

from ..errors import ora
from .dmlclauses import Clauses, column_name
from .multiinsert import is_multitable, multitable_postgres, multitable_sqlite
from .sqlnames import number_binds

__all__ = ["compound_dml", "compound_postgres", "compound_sqlite"]

_MERGE = re.compile(r"\s*MERGE\b", re.I)


def compound_dml(text: str) -> bool:
    """Whether ``text`` is a MERGE or a multitable INSERT, told by its first words: the cheap
    test every statement of ``execute_dml`` meets (only these read their tokens)."""
    return _MERGE.match(text) is not None or is_multitable(text)


def compound_sqlite(conn: Any, text: str, binds: dict | Sequence | None) -> int:
    """Run the compound statement ``text`` on the SQLite connection ``conn`` (inside the
    session's savepoint); the rows merged or inserted."""
    text, binds = _named(text, binds)
    if is_multitable(text):
        return multitable_sqlite(conn, text, binds)
    return _sqlite_merge(conn, read_merge(text), binds)


def compound_postgres(text: str, binds: dict | Sequence | None) -> tuple[str, dict | None, bool]:
    """PostgreSQL's statement for the compound statement ``text``, its binds, and whether
    its count is the one value it returns (else the statement's row count)."""
    text, binds = _named(text, binds)
    if is_multitable(text):
        return multitable_postgres(text), binds, True
    return _postgres_merge(read_merge(text)), binds, False


def _named(text: str, binds: dict | Sequence | None) -> tuple[str, dict | None]:
    """Binds by name (the statements made repeat and reorder the placeholders)."""
    if binds is None or isinstance(binds, dict):
        return text, binds
    return number_binds(text), {str(i): v for i, v in enumerate(binds, 1)}


# ---------------------------------------------------------------------------- reading
@dataclass
class Merge:
    target: str                   # the target table as written
    alias: str | None
    source: str                   # a table as written, or ``(subquery)``
    source_alias: str | None
    on: str                       # ``(condition)`` as written
    sets: list[tuple[str, str]] = field(default_factory=list)   # (column, expression) of the UPDATE
    update_where: str | None = None
    delete_where: str | None = None    # on the updated values (:func:`_updated`)
    columns: list[str] | None = None   # the INSERT's list (None: all the target's columns)
    values: list[str] | None = None    # None: no INSERT
    insert_where: str | None = None

    @property
    def qualifier(self) -> str:
        """The target's name in the statement's conditions (its alias, else its own name)."""
        return _key(self.alias or re.split(r"\s*\.\s*", self.target)[-1])


@lru_cache(maxsize=64)
def read_merge(text: str) -> Merge:
    """The MERGE statement ``text`` read (ORA-009xx for a malformed one, ORA-38104 for an
    ON column the UPDATE sets); kept per text (``executemany`` runs one text per row)."""
    r = Clauses(text)
    r.expect("MERGE", 900)
    r.expect("INTO", 925)
    target = r.table()
    alias = r.alias("USING")
    r.expect("USING", 905)
    source = r.span(*r.group()) if r.at("(") else r.table()
    source_alias = r.alias("ON")
    r.expect("ON", 969)
    on = r.group() if r.at("(") else r.until(_action)
    m = Merge(target, alias, source, source_alias, r.span(*on))
    delete = None
    while r.take("WHEN"):
        if r.take("MATCHED") and not m.sets:
            r.expect("THEN", 905)
            r.expect("UPDATE", 905)
            r.expect("SET", 905)
            m.sets = _assignments(r)
            if r.take("WHERE"):
                m.update_where = r.span(*r.until(_after_update_where))
            if r.at("DELETE") and r.word(1) == "WHERE":
                r.i += 2
                delete = r.until(_action)
        elif r.take("NOT") and r.take("MATCHED") and m.values is None:
            r.expect("THEN", 905)
            r.expect("INSERT", 905)
            if r.at("("):
                m.columns = [column_name(c) for c in r.items(*r.inside())]
            r.expect("VALUES", 926 if m.columns is None else 905)
            values = r.inside()
            m.values = r.items(*values)
            if m.columns is not None and len(m.columns) != len(m.values):
                raise ora(913 if len(m.values) > len(m.columns) else 947)
            _check_insert(r, values, m, 38101)
            if r.take("WHERE"):
                where = r.until(_action)
                m.insert_where = r.span(*where)
                _check_insert(r, where, m, 38102)
        else:
            raise ora(905)
    if not r.done():
        raise ora(933)
    if not m.sets and m.values is None:
        raise ora(905)
    _check_on(r, on, m)
    if delete is not None:
        m.delete_where = _updated(r, delete, m)
    return m


def _assignments(r: Clauses) -> list[tuple[str, str]]:
    sets = []
    while True:
        column = column_name(r.table())
        r.expect("=", 905)
        first, last = r.until(_after_expression)
        sets.append((column, r.span(first, last)))
        if not r.take(","):
            return sets


def _action(r: Clauses) -> bool:
    """A ``WHEN [NOT] MATCHED`` clause starts at the position."""
    return r.at("WHEN") and (r.word(1) == "MATCHED" or r.word(1) == "NOT" and r.word(2) == "MATCHED")


def _after_update_where(r: Clauses) -> bool:
    return _action(r) or r.at("DELETE") and r.word(1) == "WHERE"


def _after_expression(r: Clauses) -> bool:
    return r.at(",", "WHERE") or _after_update_where(r)


def _key(name: str) -> str:
    """A name to compare: without quotes, upper-cased (the rewritten target is the store's
    quoted physical name, ``"mt"``, where the statement's conditions say ``mt``)."""
    return name.strip('"').upper()


def _references(r: Clauses, first: int, last: int, m: Merge) -> list[tuple[int, str]]:
    """(token index, column) of each name of tokens ``first`` .. ``last`` that is a
    target column the UPDATE sets: ``col`` alone or ``<target>.col`` (Oracle refuses a
    name the source and the target both have, so a name alone that the target's SET
    names is the target's)."""
    set_columns = {_key(c) for c, _ in m.sets}
    found = []
    for j in range(first, last + 1):
        parts = _name(r, j)
        if parts and parts[-1] in set_columns and (len(parts) == 1 or parts[:-1] == [m.qualifier]):
            found.append((j, parts[-1]))
    return found


def _name(r: Clauses, j: int) -> list[str] | None:
    """The parts of the column name at token ``j`` (``T``, ``V`` of ``t.v``), or None."""
    t = r.toks[j]
    if t.kind != "id" or j + 1 < len(r.toks) and r.toks[j + 1].text == "(":
        return None
    return [_key(p) for p in re.split(r"\s*\.\s*", t.text)]


def _check_insert(r: Clauses, where: tuple[int, int], m: Merge, code: int) -> None:
    """ORA-38101 / 38102: the INSERT's VALUES / WHERE name a target column (a row not
    matched has none)."""
    for j in range(where[0], where[1] + 1):
        parts = _name(r, j)
        if parts and len(parts) > 1 and parts[:-1] == [m.qualifier]:
            raise ora(code, f'"{m.qualifier}"."{parts[-1]}"')


def _check_on(r: Clauses, on: tuple[int, int], m: Merge) -> None:
    """ORA-38104: a column of the ON condition the UPDATE sets."""
    refs = _references(r, *on, m)
    if refs:
        raise ora(38104, f'"{m.qualifier}"."{refs[0][1]}"')


def _updated(r: Clauses, where: tuple[int, int], m: Merge) -> str:
    """DELETE WHERE's condition with each target column the SET changes as its new value."""
    new = {_key(c): e for c, e in m.sets}
    first, last = where
    out, at = [], r.toks[first].start
    for j, column in _references(r, first, last, m):
        t = r.toks[j]
        out += [r.text[at:t.start], f"({new[column]})"]
        at = t.end
    out.append(r.text[at:r.toks[last].end])
    return "".join(out)


# ------------------------------------------------------------------------- PostgreSQL
def _postgres_merge(m: Merge) -> str:
    source_alias = m.source_alias or ("sluice_src" if m.source.startswith("(") else "")
    parts = [f"MERGE INTO {m.target} {m.alias or ''} USING {m.source} {source_alias} ON {m.on}"]
    if m.sets:
        guard = f" AND ({m.update_where})" if m.update_where else ""
        if m.delete_where is not None:
            parts.append(f"WHEN MATCHED{guard} AND ({m.delete_where}) THEN DELETE")
        parts.append(f"WHEN MATCHED{guard} THEN UPDATE SET " + ", ".join(f"{c} = {e}" for c, e in m.sets))
    if m.values is not None:
        guard = f" AND ({m.insert_where})" if m.insert_where else ""
        columns = f"({', '.join(m.columns)})" if m.columns is not None else ""
        parts.append(f"WHEN NOT MATCHED{guard} THEN INSERT {columns} VALUES ({', '.join(m.values)})")
    return "\n".join(parts)


# ----------------------------------------------------------------------------- SQLite
def _flag(condition: str | None) -> str:
    return "1" if condition is None else f"CASE WHEN ({condition}) THEN 1 ELSE 0 END"


def _sqlite_merge(conn: Any, m: Merge, binds: dict | None) -> int:
    rid = f"{m.alias or m.target}.rowid"
    items = [rid]
    if m.sets:
        updates = f"{rid} IS NOT NULL" + (f" AND ({m.update_where})" if m.update_where else "")
        deleted = "0" if m.delete_where is None else f"CASE WHEN {updates} THEN {_flag(m.delete_where)} ELSE 0 END"
        items += [_flag(m.update_where), deleted]
        items += [f"CASE WHEN {updates} THEN ({e}) END" for _, e in m.sets]
    if m.values is not None:
        inserts = f"{rid} IS NULL" + (f" AND ({m.insert_where})" if m.insert_where else "")
        items.append(_flag(m.insert_where))
        items += [f"CASE WHEN {inserts} THEN ({v}) END" for v in m.values]
    join = "LEFT JOIN" if m.values is not None else "JOIN"
    only_unmatched = "" if m.sets else f" WHERE {rid} IS NULL"
    select = (f"SELECT {', '.join(items)} FROM {m.source} {m.source_alias or ''} "
              f"{join} {m.target} {m.alias or ''} ON {m.on}{only_unmatched}")
    updates, inserts, updated, deletes = [], [], set(), set()
    width = 3 + len(m.sets) if m.sets else 1      # where the INSERT's items start
    for row in conn.execute(select, binds or ()).fetchall():
        if row[0] is None:
            if m.values is not None and row[width]:
                inserts.append(row[width + 1:])
        elif m.sets and row[1]:
            if row[0] in updated:        # a second source row for a row updated already
                raise ora(30926)
            updated.add(row[0])
            updates.append((*row[3:width], row[0]))
            if row[2]:
                deletes.add(row[0])
    update = f"UPDATE {m.target} SET {', '.join(f'{c} = ?' for c, _ in m.sets)} WHERE rowid = ?"
    if m.delete_where is None:
        if updates:
            conn.executemany(update, updates)
    else:   # each row updated, then deleted by its rowid after the update (a SET of the table's
        for values in updates:          # INTEGER PRIMARY KEY moves it); triggers see both
            rowid = conn.execute(update + " RETURNING rowid", values).fetchone()[0]
            if values[-1] in deletes:
                conn.execute(f"DELETE FROM {m.target} WHERE rowid = ?", (rowid,))
    if inserts:
        columns = f"({', '.join(m.columns)})" if m.columns is not None else ""
        conn.executemany(f"INSERT INTO {m.target} {columns} VALUES ({', '.join('?' for _ in inserts[0])})",
                         inserts)
    return len(updates) + len(inserts)
