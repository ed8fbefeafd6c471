"""A user's table's constraints typed at a cursor: ``ALTER TABLE t ADD [CONSTRAINT name]
PRIMARY KEY (…) | UNIQUE (…) | CHECK (…) | FOREIGN KEY (…) REFERENCES …``, ``ALTER TABLE t
DROP CONSTRAINT name [CASCADE]`` / ``DROP PRIMARY KEY [CASCADE]``, a foreign key's parent
checked (CREATE TABLE's too), and the constraints' text in the store's SQL — on both stores
with Oracle's answers (:mod:`.tableddl` reads the statement and runs it in one transaction).

**Rows first.**  A constraint added is checked against the table's rows before it is made,
by the same queries on either store, so that both refuse as Oracle does: ORA-01449 for a
primary key over NULLs, ORA-02437 / ORA-02299 for duplicate keys, ORA-02293 for a row the
CHECK condition makes false, ORA-02298 for a child row without its parent.  ORA-02260 for
a second primary key, ORA-02264 for a constraint name the table uses, ORA-02443 /
ORA-02441 for dropping one that is not there, ORA-02273 for dropping a key another table's
foreign key references (CASCADE drops those foreign keys too), ORA-02270 / ORA-02268 /
ORA-02256 for a foreign key whose parent columns are no primary or unique key.

**Names.**  A constraint is named in errors ``OWNER.NAME``.  One made without a name has
the name PostgreSQL gives it (``T_PKEY``, ``T_A_KEY``, ``T_A_FKEY``, ``T_CHECK``) on both
stores -- Oracle's would be ``SYS_Cnnnnnn``, a number of its dictionary -- so that DROP
CONSTRAINT finds it by the same name on both.

**SQLite** keeps a table's constraints in its stored CREATE TABLE only: adding or dropping
one makes the table again (:func:`.sqlitetables.rebuild`); a primary key's columns are
made NOT NULL as well (SQLite's own primary keys take NULLs, Oracle's do not).  Its foreign
keys hold (``PRAGMA foreign_keys`` on every store connection, :meth:`.SqliteStore.connect`);
their violations, which SQLite reports without a name, are named here as Oracle names them
(:func:`sqlite_violation`, :func:`sqlite_deferred_violation` for a COMMIT).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import DatabaseError, not_supported, ora
from .sqlitetables import Edit, rebuild, stored_table
from .tabledefs import Constraint, physical_name, quoted

__all__ = ["Listed", "add_constraint", "constraint_sql", "drop_constraint", "drop_references", "listed",
           "oracle_name", "references", "sqlite_deferred_violation", "sqlite_foreign_keys", "sqlite_violation"]


@dataclass
class Listed:
    """A constraint a table has: its name (made up when it has none, as PostgreSQL makes it),
    kind, columns (upper-cased), the parent table of a foreign key (physical) and its key,
    and (SQLite) where it is in the stored CREATE TABLE."""

    name: str
    kind: str
    columns: list[str]
    parent: str | None = None
    parent_columns: tuple[str, ...] = ()
    span: tuple[int, int] | None = None
    inline: bool = False


def oracle_name(owner: str, name: str) -> str:
    """``OWNER.NAME`` as Oracle's errors name a constraint."""
    return f"{owner}.{name.upper() if name == name.lower() else name}"


def default_name(table: str, kind: str, columns: list[str]) -> str:
    """The name PostgreSQL gives a constraint made without one (without its numbering of clashes)."""
    cols = "_".join(c.lower() for c in columns)
    suffix = {"PRIMARY KEY": "pkey", "UNIQUE": "key", "CHECK": "check", "FOREIGN KEY": "fkey"}[kind]
    if kind == "PRIMARY KEY" or not cols:
        return f"{table.lower()}_{suffix}"
    return f"{table.lower()}_{cols}_{suffix}"


def constraint_sql(db: Any, k: Constraint, owner: str, inline: bool = False) -> str:
    """A constraint as a table's (``inline``: as its column's, which SQLite's ADD COLUMN takes)."""
    head = f"CONSTRAINT {quoted(physical_name(k.name))} " if k.name else ""
    cols = "" if inline else " (" + ", ".join(quoted(physical_name(c)) for c in k.columns) + ")"
    if k.kind == "CHECK":
        return f"{head}CHECK ({k.check})"
    if k.kind != "FOREIGN KEY":
        return f"{head}{k.kind}{cols}"
    ref_owner, ref_name = db.names.owned(k.ref)
    refs = f" ({', '.join(quoted(physical_name(c)) for c in k.ref_columns)})" if k.ref_columns else ""
    return (f"{head}{'' if inline else 'FOREIGN KEY' + cols + ' '}REFERENCES {db.table(ref_owner, ref_name)}{refs}"
            + (f" ON DELETE {k.on_delete}" if k.on_delete else "")
            + (" DEFERRABLE INITIALLY DEFERRED" if k.deferred else " DEFERRABLE" if k.deferrable else ""))


# -- what a table has ----------------------------------------------------------------------
def listed(db: Any, owner: str, physical: str) -> list[Listed]:
    """The table's constraints (NOT NULL aside)."""
    if db.pg:
        rows = db.rows(
            "SELECT k.conname, k.contype::text, ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i) "
            "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i)::text[], "
            "p.relname::text, ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i) "
            "JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i)::text[] "
            "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace s ON s.oid = c.relnamespace "
            "LEFT JOIN pg_class p ON p.oid = k.confrelid "
            "WHERE s.nspname = ? AND c.relname = ? AND k.contype IN ('p', 'u', 'c', 'f') ORDER BY k.oid",
            (db.schema(owner), physical))
        kinds = {"p": "PRIMARY KEY", "u": "UNIQUE", "c": "CHECK", "f": "FOREIGN KEY"}
        return [Listed(name, kinds[kind], [c.upper() for c in cols or ()], parent,
                       tuple(c.upper() for c in parent_cols or ()))
                for name, kind, cols, parent, parent_cols in rows]
    return [x for _, x in _sqlite_listed(db.conn, physical)]


def _sqlite_listed(conn: Any, physical: str) -> list[tuple[Constraint, Listed]]:
    stored = stored_table(conn, physical)
    out = []
    for inline, k in [(False, k) for k in stored.constraints] + \
            [(True, k) for c in stored.columns for k in c.constraints]:
        cols = [c.upper() for c in k.columns]
        parent = physical_name(k.ref[1]) if k.ref else None
        if parent is not None and k.ref_columns:
            parent_cols = tuple(c.upper() for c in k.ref_columns)
        else:
            parent_cols = _primary_key(conn, parent) if parent else ()
        out.append((k, Listed(k.name or default_name(physical, k.kind, cols), k.kind, cols, parent, parent_cols,
                              k.span, inline)))
    return out


def _primary_key(conn: Any, physical: str) -> tuple[str, ...]:
    rows = conn.execute("SELECT name, pk FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", (physical,)).fetchall()
    return tuple(r[0].upper() for r in rows)


def _unique_keys(db: Any, owner: str, physical: str) -> tuple[tuple[str, ...], list[frozenset[str]]]:
    """(the primary key's columns, the column sets of every unique key) of a table."""
    if db.pg:
        rows = db.rows("SELECT i.indisprimary, ARRAY(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY u(n, o) "
                       "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = u.n ORDER BY u.o)::text[] "
                       "FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace s "
                       "ON s.oid = c.relnamespace WHERE s.nspname = ? AND c.relname = ? AND i.indisunique",
                       (db.schema(owner), physical))
        keys = [(primary, tuple(c.upper() for c in cols)) for primary, cols in rows]
        return next((cols for primary, cols in keys if primary), ()), [frozenset(cols) for _, cols in keys]
    primary = _primary_key(db.conn, physical)
    keys = [frozenset((r[0] or "").upper() for r in db.conn.execute("SELECT name FROM pragma_index_info(?)", (index,)))
            for _, index, unique, *_ in db.conn.execute("SELECT * FROM pragma_index_list(?)", (physical,))
            if unique]
    return primary, keys + ([frozenset(primary)] if primary else [])


def references(db: Any, k: Constraint, owner: str) -> None:
    """A foreign key's parent: a table of the user's (ORA-00942), its columns (ORA-00904), a
    primary or unique key of it (ORA-02268 / 02270; SQLite's foreign keys would fail every
    later DML of the child instead), as many as the child's (ORA-02256)."""
    ref_owner, ref_name = db.names.owned(k.ref)
    physical = db.user_table(ref_owner, ref_name)
    known = db.columns(ref_owner, ref_name)
    for c in k.ref_columns:
        if db.key(c) not in known:
            raise ora(904, c)
    primary, keys = _unique_keys(db, ref_owner, physical)
    wanted = tuple(c.upper() for c in k.ref_columns) or primary
    if not wanted:
        raise ora(2268)
    if len(wanted) != len(k.columns):
        raise ora(2256)
    if frozenset(wanted) not in keys:
        raise ora(2270)


# -- ADD CONSTRAINT --------------------------------------------------------------------------
def add_constraint(db: Any, owner: str, name: str, k: Constraint) -> None:
    physical = db.user_table(owner, name)
    known = db.columns(owner, name)
    for c in k.columns:
        if db.key(c) not in known:
            raise ora(904, c)
    has = listed(db, owner, physical)
    if k.name and any(x.name == physical_name(k.name) for x in has):
        raise ora(2264)
    if k.kind == "PRIMARY KEY" and any(x.kind == "PRIMARY KEY" for x in has):
        raise ora(2260)
    if k.kind == "FOREIGN KEY":
        references(db, k, owner)
    _check_rows(db, owner, name, k)
    if db.pg:
        db.run(f"ALTER TABLE {db.table(owner, name)} ADD {constraint_sql(db, k, owner)}")
        return
    stored = stored_table(db.conn, physical)
    edits: list[Edit] = [(stored.body[1], stored.body[1], ", " + constraint_sql(db, k, owner))]
    if k.kind == "PRIMARY KEY":      # (Oracle's key columns are NOT NULL; SQLite's take NULLs)
        for c in stored.columns:
            if c.name.upper() in {x.upper() for x in k.columns} and c.nullable is not False:
                edits.append((c.span[1], c.span[1], " NOT NULL"))
    rebuild(db.conn, physical, edits)


def _check_rows(db: Any, owner: str, name: str, k: Constraint) -> None:
    """The table's rows against the constraint about to be made (Oracle validates it)."""
    target = db.table(owner, name)
    cols = [quoted(physical_name(c)) for c in k.columns]
    named = oracle_name(owner, k.name or default_name(physical_name(name), k.kind, k.columns))
    if k.kind in ("PRIMARY KEY", "UNIQUE"):
        if k.kind == "PRIMARY KEY" and db.rows(f"SELECT 1 FROM {target} WHERE "
                                               + " OR ".join(f"{c} IS NULL" for c in cols) + " LIMIT 1"):
            raise ora(1449)
        some = " OR ".join(f"{c} IS NOT NULL" for c in cols)
        if db.rows(f"SELECT 1 FROM {target} WHERE {some} GROUP BY {', '.join(cols)} HAVING COUNT(*) > 1 LIMIT 1"):
            raise ora(2437 if k.kind == "PRIMARY KEY" else 2299, named)
    elif k.kind == "CHECK":
        if db.rows(f"SELECT 1 FROM {target} WHERE NOT ({k.check}) LIMIT 1"):
            raise ora(2293, named)
    else:
        ref_owner, ref_name = db.names.owned(k.ref)
        parent_cols = [physical_name(c) for c in k.ref_columns] or \
            [c.lower() for c in _unique_keys(db, ref_owner, db.user_table(ref_owner, ref_name))[0]]
        present = " AND ".join(f"c.{c} IS NOT NULL" for c in cols)
        match = " AND ".join(f"p.{quoted(pc)} = c.{c}" for pc, c in zip(parent_cols, cols))
        if db.rows(f"SELECT 1 FROM {target} c WHERE {present} AND NOT EXISTS "
                   f"(SELECT 1 FROM {db.table(ref_owner, ref_name)} p WHERE {match}) LIMIT 1"):
            raise ora(2298, named)


# -- DROP CONSTRAINT -------------------------------------------------------------------------
def drop_constraint(db: Any, owner: str, name: str, cname: str | None, cascade: bool,
                    unique: list[str] | None = None) -> None:
    """``DROP CONSTRAINT cname`` / ``DROP UNIQUE (unique)`` / ``DROP PRIMARY KEY`` [CASCADE]: a
    key other tables' foreign keys reference goes only with them (CASCADE), else ORA-02273."""
    physical = db.user_table(owner, name)
    has = listed(db, owner, physical)
    if cname is not None:
        found = next((x for x in has if x.name == physical_name(cname) or x.name.upper() == cname.upper()), None)
    elif unique is not None:
        found = next((x for x in has if x.kind == "UNIQUE" and x.columns == [c.upper() for c in unique]), None)
    else:
        found = next((x for x in has if x.kind == "PRIMARY KEY"), None)
    if found is None:
        raise ora(2443 if cname is not None or unique is not None else 2441)
    children = _referencing(db, owner, physical, found) if found.kind in ("PRIMARY KEY", "UNIQUE") else []
    if children and not cascade:
        raise ora(2273)
    if db.pg:
        db.run(f"ALTER TABLE {db.table(owner, name)} DROP CONSTRAINT {quoted(found.name)}"
               + (" CASCADE" if cascade else ""))
        return
    if found.kind == "PRIMARY KEY" and len(found.columns) == 1 and any(
            r[1].upper() == found.columns[0] and (r[2] or "").upper() == "INTEGER"
            for r in db.conn.execute("SELECT * FROM pragma_table_info(?)", (physical,))):
        raise not_supported("dropping the primary key of an identity column on SQLite")
    for child in {c for c, _ in children if c != physical}:
        _sqlite_drop(db.conn, child, [x for c, x in children if c == child])
    _sqlite_drop(db.conn, physical, [found] + [x for c, x in children if c == physical])


def drop_references(db: Any, physical: str) -> None:
    """SQLite, DROP TABLE … CASCADE CONSTRAINTS: the other tables' foreign keys naming the
    table dropped with it (PostgreSQL's DROP TABLE … CASCADE drops them)."""
    children: dict[str, list[Listed]] = {}
    for child, x in sqlite_foreign_keys(db.conn, physical, referencing=True):
        if child != physical:
            children.setdefault(child, []).append(x)
    for child, keys in children.items():
        _sqlite_drop(db.conn, child, keys)


def _referencing(db: Any, owner: str, physical: str, key: Listed) -> list[tuple[str, Listed]]:
    """(child table, foreign key) of the foreign keys referencing ``key`` of the table."""
    if db.pg:
        return [(child, Listed(fk, "FOREIGN KEY", [])) for child, fk in db.rows(
            "SELECT c.relname::text, f.conname::text FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid "
            "JOIN pg_namespace s ON s.oid = t.relnamespace JOIN pg_constraint f ON f.contype = 'f' "
            "AND f.confrelid = k.conrelid AND f.conindid = k.conindid JOIN pg_class c ON c.oid = f.conrelid "
            "WHERE s.nspname = ? AND t.relname = ? AND k.conname = ?", (db.schema(owner), physical, key.name))]
    return [(child, x) for child, x in sqlite_foreign_keys(db.conn, physical, referencing=True)
            if frozenset(x.parent_columns) == frozenset(key.columns)]


def sqlite_foreign_keys(conn: Any, physical: str, referencing: bool) -> list[tuple[str, Listed]]:
    """SQLite: (child table, foreign key) of the table's own foreign keys, or (``referencing``)
    of every table's naming it as their parent."""
    if not referencing:
        return [(physical, x) for _, x in _sqlite_listed(conn, physical) if x.kind == "FOREIGN KEY"]
    children = [t for (t,) in conn.execute(
        "SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND EXISTS "
        "(SELECT 1 FROM pragma_foreign_key_list(m.name) f WHERE upper(f.\"table\") = upper(?))", (physical,))]
    return [(child, x) for child in children for _, x in _sqlite_listed(conn, child)
            if x.kind == "FOREIGN KEY" and (x.parent or "").upper() == physical.upper()]


def _sqlite_drop(conn: Any, physical: str, gone: list[Listed]) -> None:
    """The table made again without the constraints ``gone`` (their text cut from its definition)."""
    stored = stored_table(conn, physical)
    edits: list[Edit] = []
    for x in gone:
        start, end = x.span
        if not x.inline:           # (with the comma before it, or after it when it is first)
            comma = stored.sql.rfind(",", stored.body[0], start)
            if comma < 0:
                end = stored.sql.index(",", end) + 1
            else:
                start = comma
        edits.append((start, end, ""))
    rebuild(conn, physical, edits)


# -- SQLite: a foreign key a DML statement or a COMMIT violated ------------------------------
def sqlite_violation(conn: Any, verb: str, table: str | None, owner_of: Any) -> Any:
    """ORA-02291 (a child without its parent: INSERT, UPDATE of the child) or ORA-02292 (a
    parent with children: DELETE, UPDATE of a table that is only a parent) for SQLite's
    bare "FOREIGN KEY constraint failed", naming the foreign keys of the statement's
    ``table`` it may be (SQLite does not say which; ``owner_of(physical)`` gives a table's
    owner)."""
    found = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND upper(name) = upper(?)",
                         (table or "",)).fetchone()
    try:
        own = sqlite_foreign_keys(conn, found[0], referencing=False) if found else []
        children = sqlite_foreign_keys(conn, found[0], referencing=True) if found else []
    except DatabaseError:       # (a definition made in the database this reader does not read)
        own, children = [], []
    parent_side = verb == "DELETE" or verb == "UPDATE" and bool(children) and not own
    named = ", ".join(oracle_name(owner_of(t), x.name) for t, x in (children if parent_side else own))
    return ora(2292 if parent_side else 2291, named or "FOREIGN KEY")


def sqlite_deferred_violation(conn: Any, owner_of: Any) -> Any:
    """ORA-02291 naming the deferred foreign key a failed COMMIT found violated (its
    transaction still open: ``PRAGMA foreign_key_check`` tells the row's table and key)."""
    for table, _, parent, fkid in conn.execute("PRAGMA foreign_key_check").fetchall():
        cols = frozenset(r[0].upper() for r in conn.execute(
            'SELECT "from" FROM pragma_foreign_key_list(?) WHERE id = ?', (table, fkid)))
        try:
            keys = sqlite_foreign_keys(conn, table, referencing=False)
        except DatabaseError:
            keys = []
        for _, x in keys:
            if frozenset(x.columns) == cols and (x.parent or "").upper() == parent.upper():
                return ora(2291, oracle_name(owner_of(table), x.name))
    return ora(2291, "FOREIGN KEY")
