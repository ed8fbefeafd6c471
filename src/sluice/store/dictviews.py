"""The data dictionary's views of a user's schema objects, in a user's query: USER_ / ALL_ /
DBA_ TABLES, TAB_COLUMNS, VIEWS, OBJECTS, CONSTRAINTS, CONS_COLUMNS, INDEXES and IND_COLUMNS.

What they list lives in no one table of the store's SQL -- the catalog's records (tables
made at a cursor, views, types, stored PL/SQL units), the queue tables and queues, the
sequences (SQLite: a file beside the store), the columns in the database's own catalog --
so, as USER_SEQUENCES (:mod:`.seqviews`), each name of these views in a statement becomes
a subquery of their rows (:func:`as_subqueries`), read when the statement runs: no schema
change, every store version answers.  The USER_ views list the session user's objects,
the ALL_ and DBA_ views everyone's (with OWNER; ALL_ checks no privilege).

Columns, Oracle's names, for what Sluice can fill (the others NULL or Oracle's constant):
TABLES: TABLE_NAME, TABLESPACE_NAME, STATUS, NUM_ROWS, BLOCKS, AVG_ROW_LEN, LAST_ANALYZED,
LOGGING, PARTITIONED, IOT_TYPE, TEMPORARY (Y for a global temporary table), DURATION
(SYS$TRANSACTION / SYS$SESSION), NESTED, READ_ONLY, DROPPED -- a user's tables made at a
cursor and the queue tables.  TAB_COLUMNS: TABLE_NAME, COLUMN_NAME, DATA_TYPE,
DATA_LENGTH, DATA_PRECISION, DATA_SCALE, NULLABLE, COLUMN_ID, DATA_DEFAULT (the database's
text of it), CHAR_LENGTH -- of those tables (not the queue tables: their columns are
Sluice's) and of the compiled views.  VIEWS: VIEW_NAME, TEXT_LENGTH, TEXT (Oracle's text,
as typed), READ_ONLY.  OBJECTS: OBJECT_NAME, SUBOBJECT_NAME, OBJECT_TYPE (TABLE, VIEW, INDEX,
SEQUENCE, TYPE, QUEUE, PROCEDURE, FUNCTION), CREATED, LAST_DDL_TIME (where recorded),
STATUS (a view without its compiled form INVALID), TEMPORARY, GENERATED, SECONDARY.
CONSTRAINTS: CONSTRAINT_NAME, CONSTRAINT_TYPE (P, U, R, C; NOT NULL ones are not listed),
TABLE_NAME, SEARCH_CONDITION (the database's text), R_OWNER, R_CONSTRAINT_NAME, DELETE_RULE,
STATUS, DEFERRABLE, DEFERRED, VALIDATED; CONS_COLUMNS: CONSTRAINT_NAME, TABLE_NAME,
COLUMN_NAME, POSITION.  INDEXES: INDEX_NAME, INDEX_TYPE, TABLE_OWNER, TABLE_NAME, TABLE_TYPE,
UNIQUENESS, STATUS, TEMPORARY, GENERATED; IND_COLUMNS (INDEX_OWNER in ALL_ / DBA_):
INDEX_NAME, TABLE_NAME, COLUMN_NAME, COLUMN_POSITION, DESCEND.  An unnamed constraint, and
the index of a key, is named as PostgreSQL names it (``EMP_PKEY``, ``EMP_NAME_KEY``,
``EMP_DEPT_FKEY``, ``EMP_SAL_CHECK``) on both stores: Oracle's SYS_Cn are arbitrary too.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Collection, Sequence

from ..errors import DatabaseError
from .sequences import listing
from .sqloracle import tokens
from .tabledefs import Constraint, read_stored_table
from .usercolumns import view_types

__all__ = ["NUMBER", "REWRITTEN", "TEXT", "as_subqueries", "dictionary_views", "literal_rows", "oracle_type"]

_KINDS = ("TABLES", "TAB_COLUMNS", "VIEWS", "OBJECTS", "CONSTRAINTS", "CONS_COLUMNS", "INDEXES", "IND_COLUMNS")
_VIEWS = frozenset(f"{scope}_{kind}" for scope in ("USER", "ALL", "DBA") for kind in _KINDS)
# every dictionary view a statement gets as a subquery of its rows (these, and the sequences')
REWRITTEN = _VIEWS | {"USER_SEQUENCES", "ALL_SEQUENCES", "DBA_SEQUENCES"}
# words after a FROM item that are no alias of it
_NOT_ALIAS = frozenset({"WHERE", "GROUP", "ORDER", "HAVING", "UNION", "INTERSECT", "MINUS", "EXCEPT", "JOIN",
                        "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "CONNECT", "START",
                        "FETCH", "OFFSET", "FOR", "WITH"})
# whether a statement may name one of them (one search of its text: every query is tested)
_NAMED = re.compile(r"(?:USER|ALL|DBA)_(?:" + "|".join(_KINDS) + r")\b", re.I)
TEXT, NUMBER, DATE = "VARCHAR(4000)", "NUMERIC", "DATE"

# each view's columns (name, type) after the OWNER of the ALL_ / DBA_ ones
_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "TABLES": [("TABLE_NAME", TEXT), ("TABLESPACE_NAME", TEXT), ("STATUS", TEXT), ("NUM_ROWS", NUMBER),
               ("BLOCKS", NUMBER), ("AVG_ROW_LEN", NUMBER), ("LAST_ANALYZED", DATE), ("LOGGING", TEXT),
               ("PARTITIONED", TEXT), ("IOT_TYPE", TEXT), ("TEMPORARY", TEXT), ("DURATION", TEXT),
               ("NESTED", TEXT), ("READ_ONLY", TEXT), ("DROPPED", TEXT)],
    "TAB_COLUMNS": [("TABLE_NAME", TEXT), ("COLUMN_NAME", TEXT), ("DATA_TYPE", TEXT), ("DATA_LENGTH", NUMBER),
                    ("DATA_PRECISION", NUMBER), ("DATA_SCALE", NUMBER), ("NULLABLE", TEXT), ("COLUMN_ID", NUMBER),
                    ("DATA_DEFAULT", TEXT), ("CHAR_LENGTH", NUMBER)],
    "VIEWS": [("VIEW_NAME", TEXT), ("TEXT_LENGTH", NUMBER), ("TEXT", TEXT), ("READ_ONLY", TEXT)],
    "OBJECTS": [("OBJECT_NAME", TEXT), ("SUBOBJECT_NAME", TEXT), ("OBJECT_TYPE", TEXT), ("CREATED", DATE),
                ("LAST_DDL_TIME", DATE), ("STATUS", TEXT), ("TEMPORARY", TEXT), ("GENERATED", TEXT),
                ("SECONDARY", TEXT)],
    "CONSTRAINTS": [("CONSTRAINT_NAME", TEXT), ("CONSTRAINT_TYPE", TEXT), ("TABLE_NAME", TEXT),
                    ("SEARCH_CONDITION", TEXT), ("R_OWNER", TEXT), ("R_CONSTRAINT_NAME", TEXT),
                    ("DELETE_RULE", TEXT), ("STATUS", TEXT), ("DEFERRABLE", TEXT), ("DEFERRED", TEXT),
                    ("VALIDATED", TEXT)],
    "CONS_COLUMNS": [("CONSTRAINT_NAME", TEXT), ("TABLE_NAME", TEXT), ("COLUMN_NAME", TEXT), ("POSITION", NUMBER)],
    "INDEXES": [("INDEX_NAME", TEXT), ("INDEX_TYPE", TEXT), ("TABLE_OWNER", TEXT), ("TABLE_NAME", TEXT),
                ("TABLE_TYPE", TEXT), ("UNIQUENESS", TEXT), ("STATUS", TEXT), ("TEMPORARY", TEXT),
                ("GENERATED", TEXT)],
    "IND_COLUMNS": [("INDEX_NAME", TEXT), ("TABLE_NAME", TEXT), ("COLUMN_NAME", TEXT), ("COLUMN_POSITION", NUMBER),
                    ("DESCEND", TEXT)],
}
# the owner's column of the ALL_ / DBA_ views (Oracle's *_IND_COLUMNS name the index's owner so)
_OWNER = {"IND_COLUMNS": "INDEX_OWNER"}
_TYPES = {"PRIMARY KEY": "P", "UNIQUE": "U", "FOREIGN KEY": "R", "CHECK": "C", "p": "P", "u": "U", "f": "R", "c": "C"}
_PG_DELETE = {"c": "CASCADE", "n": "SET NULL"}
_PG_CHECK = re.compile(r"^CHECK \((.*)\)$", re.S)


def dictionary_views(store: Any, session: Any, user: str, sql: str) -> str:
    """``sql`` with each of the views above it names made a subquery of its rows."""
    if not _NAMED.search(sql):
        return sql
    objects = _Objects(store, session)
    return as_subqueries(sql, _VIEWS, lambda view: _select(view, objects, user))


def as_subqueries(sql: str, views: Collection[str], select: Callable[[str], str]) -> str:
    """``sql`` with each name of ``views`` it names (alone or as SYS.'s or PUBLIC's) made the
    subquery ``select(view)``, under the view's name as its alias when the statement gave
    it none."""
    toks = tokens(sql)

    def view_of(word: str) -> str:
        owner, _, name = word.rpartition(".")
        return name.strip() if name.strip() in views and owner.strip() in ("", "SYS", "PUBLIC") else ""

    hits = [i for i, t in enumerate(toks) if t.kind == "id" and view_of(t.word)
            and not (i + 1 < len(toks) and toks[i + 1].text in ("(", "."))]
    for i in reversed(hits):
        t, view = toks[i], view_of(toks[i].word)
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        aliased = nxt is not None and (nxt.kind == "qid" or nxt.kind == "id" and nxt.word not in _NOT_ALIAS)
        sub = "(" + select(view) + ")" + ("" if aliased else f" {view}")
        sql = sql[:t.start] + sub + sql[t.end:]
    return sql


def literal_rows(columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> str:
    """A SELECT of ``rows`` (text, numbers, ISO dates, None) as ``columns`` (name, type);
    none: the columns typed, no row."""
    columns = [(_label(name), kind) for name, kind in columns]
    if not rows:
        return "SELECT " + ", ".join(f"CAST(NULL AS {kind}) AS {name}" for name, kind in columns) + " WHERE 1 = 0"

    def value(v: Any, kind: str) -> str:
        if v is None:
            return "NULL"
        if kind == DATE:
            return f"TO_DATE('{v}', 'YYYY-MM-DD HH24:MI:SS')"
        if kind == NUMBER:
            return str(int(v))
        return "'" + str(v).replace("'", "''") + "'"
    first = ", ".join(f"{value(v, k) if v is not None else f'CAST(NULL AS {k})'} AS {n}"
                      for v, (n, k) in zip(rows[0], columns))
    rest = [", ".join(value(v, k) for v, (_, k) in zip(row, columns)) for row in rows[1:]]
    return " UNION ALL ".join(["SELECT " + first] + ["SELECT " + r for r in rest])


def _label(name: str) -> str:
    """A column's alias quoted as the database folds the unquoted name (SQLite takes
    DEFERRABLE, a keyword of its, only quoted; PostgreSQL folds to lower case)."""
    return '"' + name.lower() + '"'


def _select(view: str, objects: "_Objects", user: str) -> str:
    scope, _, kind = view.partition("_")
    owned = scope != "USER"
    rows = [(row[0],) * owned + tuple(row[1:]) for row in objects.rows(kind) if owned or row[0] == user]
    return literal_rows([(_OWNER.get(kind, "OWNER"), TEXT)] * owned + _COLUMNS[kind], rows)


class _Objects:
    """What one statement's dictionary views list, read once for it (each kind when named)."""

    def __init__(self, store: Any, session: Any) -> None:
        self.store, self.session = store, session
        self.pg = getattr(store, "target", None) is not None
        self._read: dict[str, list[tuple]] = {}
        self._catalog: dict[str, list[tuple[str, str, dict]]] | None = None

    def rows(self, kind: str) -> list[tuple]:
        if kind not in self._read:
            self._read[kind] = sorted(getattr(self, "_" + kind.lower())(), key=lambda r: tuple(map(str, r[:3])))
        return self._read[kind]

    def catalog(self) -> dict[str, list[tuple[str, str, dict]]]:
        if self._catalog is None:
            self._catalog = self.store.catalog_objects_of(("USER_TABLE", "VIEW", "TYPE", "PROCEDURE", "FUNCTION"))
        return self._catalog

    def tables(self) -> list[tuple[str, str, dict]]:
        """(owner, Oracle's name, spec) of the user's tables made at a cursor."""
        return [(o, _oracle_name(n), spec) for o, n, spec in self.catalog()["USER_TABLE"]]

    def _tables(self) -> list[tuple]:
        out = []
        for owner, name, spec in self.tables():
            temporary = spec.get("temporary")
            duration = {"DELETE": "SYS$TRANSACTION", "PRESERVE": "SYS$SESSION"}.get(temporary)
            out.append((owner, name, None, "VALID", None, None, None, None, "NO" if temporary else "YES", "NO", None,
                        "Y" if temporary else "N", duration, "NO", "NO", "NO"))
        for qt in self.store.queue_tables():
            out.append((qt.owner, qt.name, None, "VALID", None, None, None, None, "YES", "NO", None, "N", None,
                        "NO", "NO", "NO"))
        return out

    def _tab_columns(self) -> list[tuple]:
        named = [(o, n) for o, n, _ in self.tables()] + [(o, n) for o, n, _ in self.catalog()["VIEW"]]
        by_physical: dict[str, list[tuple[str, str]]] = {}
        for owner, name in named:
            by_physical.setdefault(_physical(name), []).append((owner, name))
        out = []
        for physical, column, declared, not_null, default, position in self._columns(list(by_physical)):
            data_type, length, precision, scale, chars = oracle_type(declared)
            for owner, name in by_physical.get(physical, ()):
                out.append((owner, name, _oracle_name(column), data_type, length, precision, scale,
                            "N" if not_null else "Y", position, default, chars))
        return out

    def _columns(self, physicals: list[str]) -> list[tuple]:
        """(physical table, column, declared type, NOT NULL, default, position) of each."""
        if not physicals:
            return []
        names = ", ".join(_literal(p) for p in physicals)
        if self.pg:
            return self.session.run_own(
                "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, "
                "pg_get_expr(d.adbin, d.adrelid), a.attnum FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
                f"WHERE c.relnamespace = {_literal(self.store.target.schema)}::regnamespace "
                f"AND c.relname IN ({names}) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY c.relname, a.attnum")
        rows = self.session.run_own(
            "SELECT m.name, p.name, p.type, p.\"notnull\" OR p.pk > 0, p.dflt_value, p.cid + 1, "
            "CASE WHEN m.type = 'view' THEN m.sql END FROM sqlite_master m JOIN pragma_table_info(m.name) p "
            f"WHERE m.type IN ('table', 'view') AND m.name IN ({names}) ORDER BY m.name, p.cid")
        out = []
        for table, column, declared, not_null, default, position, view in rows:
            typed = view_types(view)     # (a view's expression: the type its text keeps)
            out.append((table, column, declared or (typed[position - 1] if position <= len(typed) else ""),
                        not_null, default, position))
        return out

    def _views(self) -> list[tuple]:
        return [(o, n, len(spec["text"]), spec["text"], "Y" if spec.get("read_only") else "N")
                for o, n, spec in self.catalog()["VIEW"]]

    def _compiled_views(self) -> set[str]:
        if self.pg:
            rows = self.session.run_own("SELECT relname FROM pg_class WHERE relkind = 'v' AND relnamespace = "
                                        f"{_literal(self.store.target.schema)}::regnamespace")
        else:
            rows = self.session.run_own("SELECT name FROM sqlite_master WHERE type = 'view'")
        return {r[0] for r in rows}

    def _objects(self) -> list[tuple]:
        catalog = self.catalog()
        compiled = self._compiled_views() if catalog["VIEW"] else set()

        def row(owner: str, name: str, kind: str, spec: dict | None = None, status: str = "VALID",
                temporary: str = "N") -> tuple:
            created = ((spec or {}).get("created") or "")[:19] or None      # (whole seconds: a DATE)
            return owner, name, None, kind, created, created, status, temporary, "N", "N"
        out = [row(o, n, "TABLE", spec, temporary="Y" if spec.get("temporary") else "N")
               for o, n, spec in self.tables()]
        out += [row(qt.owner, qt.name, "TABLE") for qt in self.store.queue_tables()]
        out += [row(o, n, "VIEW", spec, "VALID" if _physical(n) in compiled else "INVALID")
                for o, n, spec in catalog["VIEW"]]
        out += [row(o, n, "SEQUENCE") for o, n, _, _ in listing(self.store)]
        out += [row(o, n, "TYPE", spec) for o, n, spec in catalog["TYPE"]]
        out += [row(q.owner, q.name, "QUEUE") for q in self.store.queues()]
        out += [row(o, index, "INDEX") for o, _, index, _, _ in self._index_list()]
        for kind in ("PROCEDURE", "FUNCTION"):      # stored PL/SQL units (catalog kinds of their own)
            out += [row(o, n, kind, spec, "INVALID" if spec.get("status") == "INVALID" else "VALID")
                    for o, n, spec in catalog[kind]]
        return out


    def _constraints(self) -> list[tuple]:
        out = []
        for owner, table, name, kind, columns, check, ref_name, on_delete in self._keys():
            ref_owner = owner if ref_name else None
            out.append((owner, name, kind, table, check, ref_owner, ref_name,
                        (on_delete or "NO ACTION") if kind == "R" else None, "ENABLED", "NOT DEFERRABLE",
                        "IMMEDIATE", "VALIDATED"))
        return out

    def _cons_columns(self) -> list[tuple]:
        return [(owner, name, table, column, position if kind in "PRU" else None)
                for owner, table, name, kind, columns, _, _, _ in self._keys()
                for position, column in enumerate(columns, 1)]

    def _indexes(self) -> list[tuple]:
        return [(owner, index, "NORMAL", owner, table, "TABLE", "UNIQUE" if unique else "NONUNIQUE", "VALID",
                 "N", "N") for owner, table, index, unique, _ in self._index_list()]

    def _ind_columns(self) -> list[tuple]:
        return [(owner, index, table, column, position, "DESC" if descending else "ASC")
                for owner, table, index, _, columns in self._index_list()
                for position, (column, descending) in enumerate(columns, 1)]

    def _index_list(self) -> list[tuple]:
        """(owner, table, index, unique, [(column, descending)]) of the user's tables' indexes
        (those of their keys named as the key: PostgreSQL's own, SQLite's autoindexes)."""
        if "indexes" in self._read:
            return self._read["indexes"]
        owners = {_physical(n): o for o, n, _ in self.tables()}
        found: list[tuple] = []
        if owners and self.pg:
            rows = self.session.run_own(
                "SELECT t.relname, i.relname, x.indisunique, ARRAY(SELECT a.attname FROM unnest(x.indkey) "
                "WITH ORDINALITY u(num, n) JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = u.num "
                "ORDER BY u.n), ARRAY(SELECT (o & 1) = 1 FROM unnest(x.indoption::int2[]) WITH ORDINALITY "
                "v(o, n) ORDER BY v.n) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
                "JOIN pg_class t ON t.oid = x.indrelid "
                f"WHERE t.relnamespace = {_literal(self.store.target.schema)}::regnamespace "
                f"AND t.relname IN ({', '.join(_literal(p) for p in owners)})")
            for table, index, unique, columns, descending in rows:
                found.append((owners[table], _oracle_name(table), _oracle_name(index), bool(unique),
                              [(_oracle_name(c), bool(d)) for c, d in zip(columns, descending)]))
        elif owners:
            keys = {(t.upper(), tuple(cols)): name for _, t, name, kind, cols, _, _, _ in self._keys() if kind in "PU"}
            names = ", ".join(_literal(p) for p in owners)
            rows = self.session.run_own(
                "SELECT m.name, l.name, l.\"unique\", l.origin, x.name, x.\"desc\" FROM sqlite_master m "
                "JOIN pragma_index_list(m.name) l JOIN pragma_index_xinfo(l.name) x "
                f"WHERE m.type = 'table' AND m.name IN ({names}) AND x.key = 1 ORDER BY m.name, l.name, x.seqno")
            indexes: dict[tuple[str, str], tuple[bool, str, list]] = {}
            for table, index, unique, origin, column, descending in rows:
                entry = indexes.setdefault((table, index), (bool(unique), origin, []))
                entry[2].append((_oracle_name(column), bool(descending)))
            for (table, index), (unique, origin, columns) in indexes.items():
                name = keys.get((table.upper(), tuple(c for c, _ in columns))) if origin != "c" else None
                found.append((owners[table], _oracle_name(table), name or _oracle_name(index), unique, columns))
        self._read["indexes"] = found
        return found

    def _keys(self) -> list[tuple]:
        """(owner, table, constraint, P / U / R / C, columns, condition, referenced constraint,
        DELETE_RULE) of the user's tables' PRIMARY KEY, UNIQUE, FOREIGN KEY and CHECK
        constraints (NOT NULL ones are not listed); an unnamed one named as PostgreSQL names
        it (``EMP_PKEY``, ``EMP_DEPT_FKEY`` …; Oracle's SYS_Cn are arbitrary too)."""
        if "keys" in self._read:
            return self._read["keys"]
        owners = {_physical(n): o for o, n, _ in self.tables()}
        found: list[tuple] = []
        if owners and self.pg:
            rows = self.session.run_own(
                "SELECT c.relname, k.conname, k.contype::text, pg_get_constraintdef(k.oid), "
                "ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(num, n) JOIN pg_attribute a "
                "ON a.attrelid = k.conrelid AND a.attnum = u.num ORDER BY u.n), rk.conname, k.confdeltype::text "
                "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid LEFT JOIN pg_constraint rk "
                "ON k.contype = 'f' AND rk.conrelid = k.confrelid AND rk.conindid = k.conindid "
                "AND rk.contype IN ('p', 'u') "
                f"WHERE c.relnamespace = {_literal(self.store.target.schema)}::regnamespace "
                f"AND c.relname IN ({', '.join(_literal(p) for p in owners)}) AND k.contype IN ('p', 'u', 'f', 'c')")
            for table, name, kind, text, columns, ref, deleted in rows:
                check = _PG_CHECK.match(text)
                found.append((owners[table], _oracle_name(table), _oracle_name(name), _TYPES[kind],
                              [_oracle_name(c) for c in columns], check.group(1) if check and kind == "c" else None,
                              _oracle_name(ref) if ref else None, _PG_DELETE.get(deleted)))
        elif owners:
            found = self._sqlite_keys(owners)
        self._read["keys"] = found
        return found

    def _sqlite_keys(self, owners: dict[str, str]) -> list[tuple]:
        stored = self.session.run_own("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ("
                                      + ", ".join(_literal(p) for p in owners) + ")")
        tables: dict[str, list[tuple[Constraint, str | None]]] = {}
        for physical, sql in stored:
            try:
                t = read_stored_table(sql)
            except DatabaseError:
                continue        # (a definition Sluice cannot read: its constraints unlisted)
            known = {c.name.upper() for c in t.columns}
            keys = t.constraints + [k for c in t.columns for k in c.constraints]
            tables[physical.upper()] = [_checked_columns(k, known) for k in keys]
        named = {table: [(k, _key_name(table, k, single)) for k, single in keys] for table, keys in tables.items()}
        found = []
        for physical, owner in owners.items():
            for k, name in named.get(physical.upper(), ()):
                ref = None
                if k.kind == "FOREIGN KEY":
                    wanted = [c.upper() for c in k.ref_columns]
                    ref = next((n for r, n in named.get(_physical(k.ref[1]).upper(), ())
                                if r.kind in ("PRIMARY KEY", "UNIQUE")
                                and ([c.upper() for c in r.columns] == wanted
                                     or not wanted and r.kind == "PRIMARY KEY")),
                               None)
                found.append((owner, _oracle_name(physical), name, _TYPES[k.kind], [c.upper() for c in k.columns],
                              k.check, ref, k.on_delete or None))
        return found


def _checked_columns(k: Constraint, known: set[str]) -> tuple[Constraint, str | None]:
    """A CHECK constraint with the columns its condition names (as PostgreSQL keeps them),
    each once, and the one column it names if it names one once (PostgreSQL's part of an
    unnamed CHECK's name); any other constraint as it is."""
    if k.kind != "CHECK":
        return k, None
    named = [t.word for t in tokens(k.check or "") if t.kind == "id" and t.word in known]
    single = named[0] if len(named) == 1 else None
    return (k if k.columns else Constraint(k.kind, k.name, list(dict.fromkeys(named)), k.check)), single


def _key_name(table: str, k: Constraint, single: str | None) -> str:
    """A constraint's name: its own, or as PostgreSQL names an unnamed one."""
    if k.name:
        return _oracle_name(k.name)
    cols = "_".join(c.upper() for c in k.columns) if k.kind != "CHECK" else (single or "")
    suffix = {"PRIMARY KEY": "PKEY", "UNIQUE": "KEY", "FOREIGN KEY": "FKEY", "CHECK": "CHECK"}[k.kind]
    return f"{table}_PKEY" if k.kind == "PRIMARY KEY" else f"{table}_{cols}_{suffix}" if cols else f"{table}_{suffix}"


def _physical(name: str) -> str:
    return name.lower() if name == name.upper() else name


def _oracle_name(physical: str) -> str:
    return physical.upper() if physical == physical.lower() else physical


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


_SIZE = re.compile(r"\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)")


def oracle_type(declared: str | None) -> tuple[str, int | None, int | None, int | None, int | None]:
    """(DATA_TYPE, DATA_LENGTH, DATA_PRECISION, DATA_SCALE, CHAR_LENGTH) of a column's declared
    type, as either store spells it (SQLite: Oracle's spelling; PostgreSQL: ``format_type``'s,
    Sluice's domains for DATE, CLOB, NCLOB, BLOB)."""
    d = (declared or "").upper().strip()
    base = d.rpartition(".")[2].strip('"') if "." in d.split("(")[0] else d
    m = _SIZE.search(base)
    first = int(m.group(1)) if m else None
    second = int(m.group(2)) if m and m.group(2) is not None else None
    if base.startswith("TIMESTAMP"):
        f = 6 if first is None else first
        zone = " WITH LOCAL TIME ZONE" if "LOCAL" in base else " WITH TIME ZONE" if "WITH TIME ZONE" in base else ""
        return f"TIMESTAMP({f}){zone}", 13 if zone == " WITH TIME ZONE" else 11, None, f, 0
    for words, kind in ((("NVARCHAR2",), "NVARCHAR2"), (("VARCHAR2", "VARCHAR", "CHARACTER VARYING"), "VARCHAR2"),
                        (("NCHAR",), "NCHAR"), (("CHAR", "CHARACTER"), "CHAR"), (("RAW",), "RAW")):
        if base.startswith(words) and (kind != "CHAR" or not base.startswith(("CHARACTER VARYING",))):
            size = first or (2000 if kind == "RAW" else 1)
            return kind, size, None, None, 0 if kind == "RAW" else size
    if base.startswith(("NUMBER", "NUMERIC", "DECIMAL")):
        if first is None:
            return "NUMBER", 22, None, None, 0
        return "NUMBER", 22, first, second or 0, 0
    if base in ("INTEGER", "INT", "BIGINT", "SMALLINT"):
        return "NUMBER", 22, None, 0, 0
    if base.startswith("FLOAT"):
        return "FLOAT", 22, first or 126, None, 0
    if base.startswith("DATE"):       # (PostgreSQL: the date_time domain)
        return "DATE", 7, None, None, 0
    for names, kind, length in ((("BINARY_DOUBLE", "DOUBLE PRECISION"), "BINARY_DOUBLE", 8),
                                (("BINARY_FLOAT", "REAL"), "BINARY_FLOAT", 4), (("NCLOB",), "NCLOB", 4000),
                                (("CLOB", "TEXT", "LONG"), "CLOB", 4000), (("BLOB",), "BLOB", 4000),
                                (("BYTEA",), "RAW", 2000)):
        if base.startswith(names):
            return kind, length, None, None, 0
    return d or "VARCHAR2", None, None, None, 0
