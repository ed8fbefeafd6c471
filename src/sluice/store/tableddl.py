"""Oracle's table DDL typed at a cursor, made in the store's own database.

``cur.execute("create table emp (id number(10) primary key, name varchar2(40) not null,
hired date, notes clob)")`` makes a table that cursor SQL then uses exactly as one made in
the database itself (:mod:`.usercolumns`, tests/sqlhelpers.create_table): where such a table
lives, how its columns are named and typed.

**Where.**  A name without a schema is a table of the store's own schema, as cursor SQL
reads it: the SQLite file, PostgreSQL's store schema (every session's search path).  With a
schema: on SQLite the same table of the file (it is one schema; synchronous capture and an
apply target read ``HR.EMP`` as the file's ``emp``); on PostgreSQL the schema of that name
(``hr``, made when missing), as cursor SQL, capture and apply read ``hr.emp`` -- unless
the store schema's table of that name is that owner's.  Names as capture's mapping spells
them: an unquoted (upper-case) name lower case, a quoted one as it is.

**Owners.**  A table of the store's schema made here is recorded with its owner (a
USER_TABLE catalog object, in the statement's transaction): a name without a schema is
the recorded owner's table, else the session user's (one made in the database itself has
no record: whoever names it owns it, as before); ``OTHER.NAME`` is not a table recorded as
someone else's.  The privileges are checked against that owner.

**Types.**  SQLite keeps the Oracle type as the column's declared type (``NUMBER(10,2)``,
``VARCHAR2(40)``, ``DATE``): its affinity follows from it and the fetch reads it
(:mod:`.usercolumns`).  PostgreSQL: NUMBER ``numeric(p, s)``, VARCHAR2 ``varchar(n)``,
CHAR ``char(n)``, TIMESTAMP ``timestamp(f)``, RAW ``bytea``, BINARY_DOUBLE ``double
precision``; DATE, CLOB, NCLOB and BLOB are domains of the table's schema (``date_time``
over ``timestamp(0)`` -- Oracle's DATE has a time of day, PostgreSQL's none -- and
``clob``, ``nclob`` over ``text``, ``blob`` over ``bytea``) so that the declared type
stays readable (``format_type``) where PostgreSQL's base type alone would not tell it.

**Rules** as Oracle's: the statement is read and checked first (ORA-00900 / 00902 / 00904 /
00903 …, nothing done, the transaction left open), then the session's transaction is
committed (``commit``), then it runs as one transaction of the store's database — a
statement that fails there changes nothing.  ORA-00955 for a name in use, ORA-00942 for a
table that is not there, ORA-01430 for a column added twice, ORA-01031 without the system
privilege (own schema: CREATE TABLE; another's: CREATE / ALTER / DROP ANY TABLE, CREATE /
DROP ANY INDEX, COMMENT ANY TABLE).  Sluice's own tables (queue tables, ``SLUICE_…``,
``AQ_…``) are not a user's: ORA-24005 for a queue table, ORA-00942 for the others.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Callable, Sequence

from ..errors import DatabaseError, not_supported, ora
from . import namespace, sequences, sqlcatalog
from .constraintddl import add_constraint, constraint_sql, drop_constraint, drop_references, listed, references
from .jsonchecks import json_checked
from .sqlitetables import rebuild, splice, stored_table, triggers_set_aside
from .tabledefs import (PG_DOMAINS, RESERVED, Column, OracleType, Reader, Table, check_table, physical_name,
                        quoted, read_column, read_constraint, read_table_body)

__all__ = ["TABLE_DDL", "USER_TABLE", "before_table_change", "is_table_ddl", "on_commit", "schema_table",
           "table_ddl", "table_owner", "user_table_names"]

# the statements (``_kind_words`` of the statement interpreter) this module runs
TABLE_DDL = frozenset({"CREATE TABLE", "DROP TABLE", "TRUNCATE TABLE", "ALTER TABLE", "CREATE INDEX",
                       "CREATE UNIQUE INDEX", "DROP INDEX", "COMMENT", "CREATE GLOBAL TEMPORARY TABLE"})

_PROTECTED = ("SLUICE_", "AQ_QUEUE", "SQLITE_")
_SIZED = re.compile(r"(?:N?VARCHAR2?|N?CHAR|RAW)\s*\(\s*(\d+)", re.I)
_PRECISION = re.compile(r"NUMBER\s*\(\s*(\d+)\s*(?:,\s*(-?\d+)\s*)?\)", re.I)
_BUSY_MS = 5000             # SQLite: how long a DDL waits for another session's open transaction
USER_TABLE = "USER_TABLE"   # the catalog's record of a table's owner (:class:`_Names`)
_LITERAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|'(?:[^']|'')*'|NULL", re.I)


def user_table_names(store: Any) -> dict[tuple[str, str], str]:
    """``(OWNER, NAME) -> physical name`` of the tables of the store's schema made at a cursor
    (their USER_TABLE records) and of the views (:mod:`.viewddl`, recorded by Oracle's name),
    for cursor SQL's :func:`.sqlnames.rewrite`: ``hr.emp`` is
    the table HR made (SQLite has no schema ``hr``; PostgreSQL's schema ``hr`` is not the
    store's).  Kept until the catalog changes: read with every statement."""
    version = store.catalog_version()
    kept = getattr(store, "user_tables_kept", None)
    if kept is None or kept[0] != version:
        found = store.catalog_objects_of((USER_TABLE, namespace.VIEW))
        names = {(owner, _oracle_name(name)): _quote(_physical(name))
                 for kind in found.values() for owner, name, _ in kind}
        kept = store.user_tables_kept = (version, names)
    return kept[1]


def schema_table(store: Any, owner: str, name: str) -> bool:
    """Whether PostgreSQL's own schema of ``owner`` holds the table (or view) ``name``: one made
    there (``create table hr.emp``) has no USER_TABLE record, its schema is its owner.  False on
    SQLite, whose one schema's tables are all recorded."""
    if getattr(store, "target", None) is None:
        return False
    return bool(store.pool.run(lambda c: c.execute(
        "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? "
        "AND c.relname = ? AND c.relkind IN ('r', 'p', 'v', 'm')", (_physical(owner), _physical(name))).fetchall(),
        transaction=False))


def before_table_change(hook: Callable[[Any, str], None]) -> None:
    """``hook(db, physical)`` runs in the DDL's transaction before a user's table is dropped
    or altered (:mod:`.viewddl`, which imports this module, registers the invalidation of
    the views over it)."""
    _changing[0] = hook


def _unchanged(db: Any, physical: str) -> None:
    return None


_changing: list[Callable[[Any, str], None]] = [_unchanged]


def on_commit(r: Reader) -> str:
    """A global temporary table's ``ON COMMIT DELETE ROWS | PRESERVE ROWS`` (Oracle's
    default DELETE): whose rows a commit ends (:mod:`.temptables`)."""
    if not r.accept("ON", "COMMIT"):
        return "DELETE"
    kept = "PRESERVE" if r.accept("PRESERVE") else "DELETE" if r.accept("DELETE") else None
    if kept is None:
        raise ora(905)
    r.expect("ROWS")
    return kept


def table_owner(store: Any, physical: str, default: str) -> str:
    """The owner recorded for the store schema's table ``physical`` (``default``: none is)."""
    wanted = _quote(physical).lower()
    return next((owner for (owner, _), name in user_table_names(store).items() if name.lower() == wanted), default)


def is_table_ddl(kind: str) -> bool:
    """Whether the statement of ``kind`` (``CREATE TABLE``, ``COMMENT`` …) is this module's."""
    return kind in TABLE_DDL


# -- the store's side --------------------------------------------------------------------
_quote, _physical = quoted, physical_name


class _Db:
    """The store's database for one statement: its dialect, the schema a name is in, the
    catalog lookups, statements run in the one transaction."""

    def __init__(self, store: Any, names: "_Names", conn: Any) -> None:
        self.store, self.names, self.conn = store, names, conn
        target = getattr(store, "target", None)
        self.pg = target is not None
        self.home = target.schema if self.pg else ""

    def schema(self, owner: str) -> str:
        """Where ``owner``'s tables of the statement are: the store's schema (the file), or
        on PostgreSQL another owner's own schema (:meth:`_Names.owned`)."""
        return self.home if not self.pg or owner in self.names.homes else _physical(owner)

    def record(self, owner: str, name: str, dropped: bool = False, spec: dict | None = None) -> None:
        """The owner of a table of the store's schema (the file), and ``spec`` (``always``:
        its GENERATED ALWAYS identity columns), or its record gone."""
        if self.schema(owner) != self.home:
            return
        for o, n, _ in sqlcatalog.objects(self.conn, USER_TABLE):    # (also one left by a table
            if n.lower() == _physical(name).lower() and (o == owner or not dropped):  # dropped behind Sluice's back)
                sqlcatalog.drop_object(self.conn, USER_TABLE, o, n)
        key = self.names.key(_physical(name))
        self.names.owners.pop(key, None)
        if not dropped:
            spec = {"created": dt.datetime.now().isoformat(sep=" ", timespec="microseconds"), **(spec or {})}
            sqlcatalog.put_object(self.conn, USER_TABLE, owner, _physical(name), spec, True)
            self.names.owners[key] = owner

    def spec(self, owner: str, physical: str) -> dict:
        """The record of the store schema's table ``physical`` of ``owner`` (empty: none)."""
        return next((spec for o, n, spec in sqlcatalog.objects(self.conn, USER_TABLE)
                     if o == owner and n.lower() == physical.lower()), {})

    def user_table(self, owner: str, name: str) -> str:
        """The physical name of the user's table ``owner.name`` (:func:`_user_table`)."""
        return _user_table(self, self.store, owner, name)

    def table(self, owner: str, name: str) -> str:
        """The quoted name of ``owner.name`` in statements."""
        q = _quote(_physical(name))
        return f"{_quote(self.schema(owner))}.{q}" if self.pg else q

    def rows(self, sql: str, params: Sequence = ()) -> list:
        if self.pg:
            return self.conn.execute(sql, list(params)).fetchall() if params else \
                self.conn.execute(sql).fetchall()
        return self.conn.execute(sql, params).fetchall()

    def run(self, sql: str) -> None:
        self.conn.execute(sql)

    def relation(self, owner: str, name: str) -> tuple[str, str] | None:
        """(physical name, kind: ``table`` / ``view`` / ``index`` …) of the object named so."""
        if self.pg:
            found = self.rows("SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n "
                              "ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ?",
                              (self.schema(owner), _physical(name)))
            kinds = {"r": "table", "p": "table", "v": "view", "m": "view", "i": "index", "S": "sequence"}
            return (found[0][0], kinds.get(found[0][1], "other")) if found else None
        found = self.rows("SELECT name, type FROM sqlite_master WHERE upper(name) = upper(?)", (_physical(name),))
        return (found[0][0], found[0][1]) if found else None

    def columns(self, owner: str, name: str) -> dict[str, tuple[str, bool]]:
        """Oracle column name -> (declared type, NOT NULL) of a table, in order."""
        if self.pg:
            got = self.rows("SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull "
                            "FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n "
                            "ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relname = ? AND a.attnum > 0 "
                            "AND NOT a.attisdropped ORDER BY a.attnum", (self.schema(owner), _physical(name)))
        else:
            got = [(r[1], r[2], bool(r[3])) for r in
                   self.rows("SELECT * FROM pragma_table_info(?)", (_physical(name),))]
        return {self.key(_oracle_name(c)): (t or "", bool(nn)) for c, t, nn in got}

    def key(self, name: str) -> str:
        """A column's name as :meth:`columns` keys it (SQLite's names ignore case)."""
        return name if self.pg else name.upper()

    def ensure_domains(self, columns: Sequence[Column], schema: str) -> None:
        """PostgreSQL: the domains of Oracle's DATE, CLOB, NCLOB and BLOB in ``schema``."""
        wanted = {PG_DOMAINS[c.type.base] for c in columns if c.type is not None and c.type.base in PG_DOMAINS}
        for name, base in sorted(wanted):
            if not self.rows("SELECT 1 FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                             "WHERE n.nspname = ? AND t.typname = ?", (schema, name)):
                self.run(f"CREATE DOMAIN {_quote(schema)}.{name} AS {base}")


def _oracle_name(physical: str) -> str:
    return physical.upper() if physical == physical.lower() else physical


def _protected(physical: str) -> bool:
    return physical.upper().startswith(_PROTECTED) or "." in physical


class _Names:
    """Whose a name is.  A table of the store's schema (the SQLite file, PostgreSQL's
    search path) made here is recorded with its owner (catalog objects of kind
    USER_TABLE): a name without a schema is that owner's table (else the session
    user's), and one qualified with another owner is not that table.  A table made in
    the database itself has no record: whoever names it owns it, as before."""

    def __init__(self, store: Any, user: str) -> None:
        self.user = user
        self.pg = getattr(store, "target", None) is not None
        self.owners = {self.key(n): o for o, n, _ in store.catalog_objects(USER_TABLE)}
        self.homes: set[str] = set()     # owners whose tables of the statement are the store schema's
        self.quiet: int | None = None    # the ORA code IF [NOT] EXISTS makes no error

    def key(self, physical: str) -> str:
        return physical if self.pg else physical.lower()

    def recorded(self, name: str) -> str | None:
        return self.owners.get(self.key(_physical(name)))

    def owned(self, qualified: tuple[str | None, str], creating: bool = False) -> tuple[str, str]:
        """(owner, name) of ``[schema.]name``; a table being made without a schema is the
        session user's, whatever a record says of the name (the statement finds it taken)."""
        schema, name = qualified
        found = self.recorded(name)
        if schema is None:
            schema = self.user if creating else found or self.user
            self.homes.add(schema)
        elif found == schema:
            self.homes.add(schema)
        return schema, name

    def foreign(self, owner: str, name: str) -> bool:
        """Whether the store schema's table ``name`` is recorded as another owner's."""
        found = self.recorded(name)
        return found is not None and found != owner


# -- running a statement -------------------------------------------------------------------
def table_ddl(text: str, user: str, store: Any, may: Callable[[str], bool], commit: Callable[[], None],
              query: Callable[[str], tuple[list, list]]) -> int:
    """Run the table DDL ``text`` as ``user`` on ``store``: ``may(privilege)`` says whether the
    user holds a system privilege (``CREATE_TABLE`` …), ``commit()`` commits the session's
    transaction (DDL's implicit commit), ``query(sql)`` runs a query as cursor SQL (its
    headings with their description, and its rows: CREATE TABLE … AS SELECT).  Returns 0."""
    r = Reader(text)
    verb = r.word()
    r.i += 1
    user = _Names(store, user)      # (the functions below take the statement's names as ``user``)
    if verb == "CREATE":
        unique = r.accept("UNIQUE")
        if r.accept("INDEX"):
            return _create_index(r, unique, user, store, may, commit)
        temporary = r.accept("GLOBAL", "TEMPORARY")       # (its rows: .temptables)
        r.expect("TABLE")
        user.quiet = 955 if r.accept("IF", "NOT", "EXISTS") else None     # (Oracle 23's)
        return _create_table(r, user, store, may, commit, query, temporary)
    if verb == "COMMENT":
        return _comment(r, user, store, may, commit)
    if verb == "DROP" and r.accept("INDEX"):
        user.quiet = 1418 if r.accept("IF", "EXISTS") else None
        owner, name = user.owned(r.qualified())
        r.end()
        _may(may, user, owner, None, "DROP_ANY_INDEX")
        commit()

        def drop_index(db: _Db) -> None:
            found = db.relation(owner, name)
            if found is None or found[1] != "index" or _protected(found[0]):
                raise ora(1418)
            db.run(f"DROP INDEX {db.table(owner, name)}")
        return _ddl(store, user, drop_index)
    r.expect("TABLE")
    user.quiet = 942 if verb != "TRUNCATE" and r.accept("IF", "EXISTS") else None
    owner, name = user.owned(r.qualified(942))
    if verb == "DROP":
        cascade = r.accept("CASCADE", "CONSTRAINTS")
        r.accept("PURGE")
        r.end()
        _may(may, user, owner, None, "DROP_ANY_TABLE")
        commit()
        return _ddl(store, user, lambda db: _drop_table(db, store, owner, name, cascade))
    if verb == "TRUNCATE":
        r.accept("DROP", "STORAGE") or r.accept("REUSE", "STORAGE")
        r.end()
        _may(may, user, owner, None, "DROP_ANY_TABLE")
        commit()

        def truncate(db: _Db) -> None:
            physical = _user_table(db, store, owner, name)
            if _referenced(db, owner, physical):
                raise ora(2266)
            if db.pg:
                db.run(f"TRUNCATE TABLE {db.table(owner, name)}")
                return
            with triggers_set_aside(db.conn, physical):     # (DDL: no DML trigger fires)
                db.run(f"DELETE FROM {db.table(owner, name)}")
        return _ddl(store, user, truncate)
    return _alter(r, owner, name, user, store, may, commit)


def _may(may: Callable[[str], bool], names: _Names, owner: str, own: str | None, any_: str) -> None:
    """ORA-01031 unless the user may: in its own schema ``own`` (None: nothing needed) or
    ``any_``, in another's ``any_``."""
    if owner == names.user and (own is None or may(own)):
        return
    if not may(any_):
        raise ora(1031)


def _ddl(store: Any, user: _Names, work: Callable[[_Db], None]) -> int:
    """``work`` in one transaction of the store's database, a catalog change (every process
    reads the user's tables' types anew); IF [NOT] EXISTS: its error (``user.quiet``) is
    none, the statement done without a change."""
    try:
        return _transaction(store, user, work)
    except DatabaseError as e:
        if e.code != user.quiet:
            raise
    return 0


def _transaction(store: Any, user: _Names, work: Callable[[_Db], None]) -> int:
    if getattr(store, "target", None) is not None:
        store._ddl(lambda c: work(_Db(store, user, c)))
        return 0
    import sqlite3
    with store._svc_lock:       # (re-entered by _ddl) a busy file: ORA-00054 after PostgreSQL's 5 s
        svc = store._svc
        waits = svc.execute("PRAGMA busy_timeout").fetchone()[0]
        svc.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
        # foreign keys off for the DDL (outside its transaction, where SQLite takes it): a
        # DROP TABLE would delete the table's rows first, running their ON DELETE actions
        # (a table made again, :mod:`.sqlitetables`; a parent dropped with CASCADE CONSTRAINTS)
        svc.execute("PRAGMA foreign_keys = OFF")
        try:
            with store._ddl() as c:
                work(_Db(store, user, c))
        except sqlite3.Error as e:
            raise _sqlite_error(e) from None
        finally:
            svc.execute("PRAGMA foreign_keys = ON")
            svc.execute(f"PRAGMA busy_timeout = {int(waits)}")
    return 0


def _sqlite_error(e: Exception) -> DatabaseError:
    msg = str(e)
    if "no such column" in msg:
        return ora(904, msg.rsplit(":", 1)[-1].strip().upper())
    if "NOT NULL constraint failed" in msg:
        return ora(2296, msg.rsplit(":", 1)[-1].strip().upper())
    if "UNIQUE constraint failed" in msg or "could not create unique index" in msg:
        return ora(1452)
    if "database is locked" in msg:
        return ora(54)
    return not_supported(f"this table DDL on SQLite ({msg})")


def _user_table(db: _Db, store: Any, owner: str, name: str) -> str:
    """The physical name of the user's table ``owner.name``: ORA-00942 when there is none,
    ORA-24005 for a queue table."""
    if any(qt.owner == owner and qt.name == name for qt in store.queue_tables()):
        raise ora(24005, f"{owner}.{name}")
    found = db.relation(owner, name)
    if found is None or found[1] != "table" or _protected(found[0]) or \
            db.schema(owner) == db.home and db.names.foreign(owner, name):
        raise ora(942, f"{owner}.{name}")
    return found[0]


def _free(db: _Db, store: Any, owner: str, name: str) -> None:
    """ORA-00955 when ``owner.name`` is taken (a table, view, queue table, Sluice's name, or
    another object of the owner's namespace: a sequence, a type)."""
    if db.relation(owner, name) is not None or _protected(name) or \
            any(qt.owner == owner and qt.name == name for qt in store.queue_tables()):
        raise ora(955)
    namespace.check(store, owner, name, (namespace.TABLE, namespace.QUEUE_TABLE), db.conn)


def _create_table(r: Reader, user: _Names, store: Any, may: Callable[[str], bool], commit: Callable[[], None],
                  query: Callable[[str], tuple[list, list]], temporary: bool = False) -> int:
    owner, name = user.owned(r.qualified(), creating=True)
    names: list[str] | None = None
    table: Table | None = None
    if r.word() == "(":
        save = r.i
        r.i += 1
        simple = r.peek() is not None and r.word(1) in (",", ")")
        r.i = save
        if simple:                       # CREATE TABLE t (a, b) AS SELECT …
            names = r.columns()
        else:
            table = read_table_body(r)
            check_table(table)
    duration = on_commit(r) if temporary else None
    select = None
    if r.accept("AS"):
        if temporary:
            raise not_supported("CREATE GLOBAL TEMPORARY TABLE … AS SELECT")
        if table is not None:
            raise ora(1773)
        select = r.rest()
        if not select:
            raise ora(936)
    elif table is None:
        raise ora(906)
    else:
        r.end()
    _may(may, user, owner, "CREATE_TABLE", "CREATE_ANY_TABLE")
    for c in table.columns if table else ():
        if c.identity and c.type is not None and c.type.base != "NUMBER":
            raise ora(30675)
        c.default = sequences.column_default(store, owner, c.default)     # DEFAULT seq.NEXTVAL
    commit()
    rows: list = []
    if select is not None:
        headings, rows = query(select)
        table = Table(_selected_columns(headings, names), [])
        check_table(table)

    def create(db: _Db) -> None:
        _free(db, store, owner, name)
        for k in table.constraints + [k for c in table.columns for k in c.constraints]:
            if k.kind == "FOREIGN KEY":
                references(db, k, owner)
        schema = db.schema(owner)
        if db.pg:
            db.run(f"CREATE SCHEMA IF NOT EXISTS {_quote(schema)}")
            db.ensure_domains(table.columns, schema)
        db.run(_create_sql(db, owner, name, table))
        always = [_physical(c.name) for c in table.columns if c.identity == "ALWAYS"]
        db.record(owner, name, spec={**({"always": always} if always else {}),
                                     **({"temporary": duration} if duration else {})})
        _sqlite_sizes(db, owner, name)
        if rows:
            marks = ", ".join("CAST(? AS jsonb)" if db.pg and c.type is not None and c.type.base == "JSON"
                              else "?" for c in table.columns)     # (a JSON column's text, sent as text)
            insert = f"INSERT INTO {db.table(owner, name)} VALUES ({marks})"
            data = [tuple(_stored(v, db.pg) for v in row) for row in rows]
            db.conn.executemany(insert, data)
    return _ddl(store, user, create)


def _selected_columns(headings: Any, names: list[str] | None) -> list[Column]:
    """CREATE TABLE … AS SELECT: a column of each select item, typed by its description."""
    description = getattr(headings, "description", None) or [(h, None, None, None, None, None) for h in headings]
    if names is not None and len(names) != len(description):
        raise ora(1730)
    out = []
    for i, d in enumerate(description):
        name = names[i] if names else str(d[0])
        if not names and not _plain_name(name):
            raise ora(998)
        out.append(Column(name, _described_type(d)))
    return out


def _plain_name(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_$#]*", name)) and name.upper() not in RESERVED


def _described_type(d: tuple) -> OracleType:
    kind = getattr(d[1], "name", "")
    if kind == "DB_TYPE_NUMBER":
        precision, scale = d[4], d[5]
        if not precision:
            return OracleType("NUMBER")
        return OracleType("NUMBER", precision, scale or 0)
    if kind in ("DB_TYPE_BINARY_DOUBLE", "DB_TYPE_BINARY_FLOAT"):
        return OracleType(kind[8:])
    if kind == "DB_TYPE_DATE":
        return OracleType("DATE")
    if kind in ("DB_TYPE_TIMESTAMP", "DB_TYPE_TIMESTAMP_TZ", "DB_TYPE_TIMESTAMP_LTZ"):
        zone = {"DB_TYPE_TIMESTAMP_TZ": " WITH TIME ZONE", "DB_TYPE_TIMESTAMP_LTZ": " WITH LOCAL TIME ZONE"}
        return OracleType("TIMESTAMP", d[5] or 0, zone=zone.get(kind, ""))     # (TIMESTAMP(0): scale None)
    if kind in ("DB_TYPE_CHAR", "DB_TYPE_NCHAR"):
        return OracleType("CHAR", size=d[3] or d[2] or 1)
    if kind == "DB_TYPE_RAW":
        return OracleType("RAW", size=d[3] or 2000)
    if kind in ("DB_TYPE_CLOB", "DB_TYPE_NCLOB", "DB_TYPE_BLOB", "DB_TYPE_JSON"):
        return OracleType(kind[8:])
    return OracleType("VARCHAR2", size=min(max(d[3] or d[2] or 32767, 1), 32767))     # (size unknown: the most)


def _stored(value: Any, pg: bool) -> Any:
    """A fetched value as the store's database takes it (SQLite: dates as their ISO text)."""
    if hasattr(value, "read"):         # a LOB, as the fetch may give one
        value = value.read()
    if pg:
        return value
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat() + " 00:00:00"
    if not isinstance(value, (int, float, str, bytes, type(None))):
        return str(value)
    return value


def _create_sql(db: _Db, owner: str, name: str, table: Table) -> str:
    schema = db.schema(owner)
    constraints = [json_checked(k, table.columns, db.pg)     # (CHECK (doc IS JSON): the store's test)
                   for k in table.constraints + [k for c in table.columns for k in c.constraints]]
    keys = [k.columns for k in constraints if k.kind == "PRIMARY KEY"]
    parts = []
    for c in table.columns:
        if c.identity and not db.pg and keys != [[c.name]]:
            raise not_supported("an identity column that is not the whole primary key on SQLite")
        parts.append(_column_sql(db, c, schema, key=any(c.name in k for k in keys)))
    parts.extend(constraint_sql(db, k, owner) for k in constraints)
    return f"CREATE TABLE {db.table(owner, name)} ({', '.join(parts)})"


def _column_sql(db: _Db, c: Column, schema: str, key: bool = False) -> str:
    """A column's definition; an identity column PostgreSQL's ``bigint GENERATED … AS
    IDENTITY``, SQLite's ``INTEGER`` primary key (its rowid: numbered when not given).
    SQLite: a CHAR column compares blank-padded (its RTRIM collation, as PostgreSQL's
    ``char(n)`` compares), a primary ``key``'s column is NOT NULL (as Oracle's, and
    PostgreSQL's; SQLite's own keys take NULLs)."""
    if c.identity:
        kind = f"bigint GENERATED {c.identity} AS IDENTITY" if db.pg else "INTEGER"
    else:
        kind = c.type_text if c.type is None else c.type.pg(schema) if db.pg else c.type.sqlite
    out = f"{_quote(_physical(c.name))} {kind}{_collation(db, c.type)}"
    if not db.pg and c.type is not None and c.type.base == "BOOLEAN":
        # SQLite keeps TRUE / FALSE as 1 / 0 (read back as bools, store/coltypes.py):
        # anything else would be read back as itself
        out += f" CHECK ({_quote(_physical(c.name))} IN (0, 1))"
    if c.default is not None:
        out += f" DEFAULT {_default(c.default, db.pg)}"
    if c.nullable is False or key and not db.pg and not c.identity:
        out += " NOT NULL"
    if c.type is not None and c.type.base == "JSON" and not db.pg:    # (jsonb parses what it is given)
        name = _quote(_physical(c.name))      # (SQLite 3.40's json_valid(NULL) is 0)
        out += f" CHECK (json_valid({name}) OR {name} IS NULL)"    # ORA-40441 (sqlitesession)
    return out


def _collation(db: _Db, kind: OracleType | None) -> str:
    """SQLite: Oracle's blank-padded comparison of a CHAR / NCHAR column (``'ab' = 'ab   '``)."""
    return " COLLATE RTRIM" if not db.pg and kind is not None and kind.base in ("CHAR", "NCHAR") else ""


def _default(expr: str, pg: bool) -> str:
    """A DEFAULT: Oracle's clock words as the database's (they are read at each insert, where
    the translation of a statement folds them into a literal once)."""
    word = expr.strip().upper()
    if word in ("SYSDATE", "CURRENT_DATE"):
        return "LOCALTIMESTAMP(0)" if pg else "(strftime('%Y-%m-%d %H:%M:%S', 'now', 'localtime'))"
    if word in ("SYSTIMESTAMP", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP"):
        return "LOCALTIMESTAMP" if pg else "(strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime'))"
    if pg or _LITERAL.fullmatch(expr.strip()):
        return expr
    return f"({expr})"     # (SQLite takes an expression in parentheses, a literal as it is)


def _drop_table(db: _Db, store: Any, owner: str, name: str, cascade: bool) -> None:
    physical = _user_table(db, store, owner, name)
    _changing[0](db, physical)
    if not cascade and _referenced(db, owner, physical):
        raise ora(2449)
    if db.pg:
        db.run(f"DROP TABLE {db.table(owner, name)}" + (" CASCADE" if cascade else ""))
    else:
        if cascade:
            drop_references(db, physical)
        db.run(f"DROP TABLE {_quote(physical)}")
    db.record(owner, name, dropped=True)
    sqlcatalog.drop_grants(db.conn, f"{owner}.{name}")


def _referenced(db: _Db, owner: str, physical: str) -> bool:
    """Whether another table's foreign key names the table."""
    if db.pg:
        return bool(db.rows("SELECT 1 FROM pg_constraint k WHERE k.contype = 'f' AND k.confrelid = "
                            "(SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                            "WHERE n.nspname = ? AND c.relname = ?) AND k.conrelid <> k.confrelid",
                            (db.schema(owner), physical)))
    return any(r[2].upper() == physical.upper()
               for (t,) in db.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name <> ?", (physical,))
               for r in db.rows("SELECT * FROM pragma_foreign_key_list(?)", (t,)))


def _create_index(r: Reader, unique: bool, user: _Names, store: Any, may: Callable[[str], bool],
                  commit: Callable[[], None]) -> int:
    user.quiet = 955 if r.accept("IF", "NOT", "EXISTS") else None
    index_owner, index = r.qualified(904)
    r.expect("ON")
    owner, name = user.owned(r.qualified(942))
    index_owner = index_owner or owner
    r.expect("(")
    keys: list[tuple[str, str]] = []
    while True:
        col = r.column()
        order = "DESC" if r.accept("DESC") else ("ASC" if r.accept("ASC") else "")
        keys.append((col, order))
        if not r.accept(","):
            break
    r.expect(")")
    r.end()
    _may(may, user, owner if index_owner == owner else index_owner, None, "CREATE_ANY_INDEX")
    commit()

    def create(db: _Db) -> None:
        _user_table(db, store, owner, name)
        known = db.columns(owner, name)
        for col, _ in keys:
            if db.key(col) not in known:
                raise ora(904, col)
        if db.relation(owner, index) is not None:
            raise ora(955)
        cols = ", ".join(f"{_quote(_physical(c))}{' ' + o if o else ''}" for c, o in keys)
        target = db.table(owner, name)
        if unique:       # (rows whose keys are all NULL are not duplicates, as in Oracle)
            named = [_quote(_physical(c)) for c, _ in keys]
            some = " OR ".join(f"{c} IS NOT NULL" for c in named)
            if db.rows(f"SELECT 1 FROM {target} WHERE {some} GROUP BY {', '.join(named)} "
                       f"HAVING COUNT(*) > 1 LIMIT 1"):
                raise ora(1452)
        db.run(f"CREATE {'UNIQUE ' if unique else ''}INDEX {_quote(_physical(index))} ON {target} ({cols})")
    return _ddl(store, user, create)


def _comment(r: Reader, user: _Names, store: Any, may: Callable[[str], bool], commit: Callable[[], None]) -> int:
    r.expect("ON")
    if r.accept("TABLE"):
        owner, name = user.owned(r.qualified(942))
        column = None
    elif r.accept("COLUMN"):
        parts = r.parts(904)
        if len(parts) not in (2, 3):
            raise ora(904, ".".join(parts))
        owner, name = user.owned((parts[0], parts[1]) if len(parts) == 3 else (None, parts[0]))
        column = parts[-1]
    else:
        raise ora(905)
    r.expect("IS")
    t = r.peek()
    if t is None or t.kind != "str":
        raise ora(1780)
    r.i += 1
    r.end()
    _may(may, user, owner, None, "COMMENT_ANY_TABLE")
    commit()

    def comment(db: _Db) -> None:
        _user_table(db, store, owner, name)
        if column is not None and db.key(column) not in db.columns(owner, name):
            raise ora(904, column)
        if db.pg:
            what = db.table(owner, name) + (f".{_quote(_physical(column))}" if column else "")
            db.run(f"COMMENT ON {'COLUMN' if column else 'TABLE'} {what} IS {t.text}")
    return _ddl(store, user, comment)


# -- ALTER TABLE ---------------------------------------------------------------------------
def _alter(r: Reader, owner: str, name: str, user: _Names, store: Any, may: Callable[[str], bool],
           commit: Callable[[], None]) -> int:
    renamed = name             # (the table's name after the statement)
    if r.accept("ADD"):
        words = ("CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN")
        enclosed = r.word() == "(" and r.word(1) in words      # ADD (CONSTRAINT … )
        r.i += enclosed
        if r.word() in words:
            cname = r.column() if r.accept("CONSTRAINT") else None
            constraint = read_constraint(r, cname, None)
            if enclosed:
                r.expect(")")
            r.end()
            change: Callable[[_Db], None] = lambda db: add_constraint(db, owner, name, constraint)
        else:
            added = _column_list(r, need_type=True)
            for c in added:
                if c.identity:
                    raise not_supported("adding an identity column")
            r.end()
            change = lambda db: _add_columns(db, store, owner, name, added)
    elif r.word() == "DROP" and r.word(1) in ("CONSTRAINT", "PRIMARY", "UNIQUE"):
        r.i += 1
        cname = r.column() if r.accept("CONSTRAINT") else None
        unique = r.columns() if cname is None and r.accept("UNIQUE") else None
        if cname is None and unique is None:
            r.expect("PRIMARY", "KEY")
        cascade = r.accept("CASCADE")
        r.end()
        change = lambda db: drop_constraint(db, owner, name, cname, cascade, unique)
    elif r.accept("DROP"):
        if r.accept("COLUMN"):
            dropped = [r.column()]
        else:
            dropped = r.columns()
        cascade = r.accept("CASCADE", "CONSTRAINTS")
        r.end()
        change = lambda db: _drop_columns(db, store, owner, name, dropped, cascade)
    elif r.accept("MODIFY"):
        modified = _column_list(r, need_type=False)
        r.end()
        change = lambda db: _modify_columns(db, store, owner, name, modified)
    elif r.accept("RENAME", "COLUMN"):
        old = r.column()
        r.expect("TO")
        new = r.column()
        r.end()
        change = lambda db: _rename_column(db, store, owner, name, old, new)
    elif r.accept("RENAME", "TO"):
        new_owner, new = r.qualified()
        new_owner = new_owner or owner
        r.end()
        if new_owner != owner:
            raise ora(14047)
        renamed = new
        change = lambda db: _rename_table(db, store, owner, name, new)
    else:
        raise ora(1735, r.word())
    _may(may, user, owner, None, "ALTER_ANY_TABLE")
    commit()

    def altered(db: _Db) -> None:
        _changing[0](db, _user_table(db, store, owner, name))
        if not db.pg:          # (SQLite refuses to drop a column a trigger names)
            _sqlite_sizes(db, owner, name, make=False)
        change(db)
        _sqlite_sizes(db, owner, renamed)
    return _ddl(store, user, altered)


def _sqlite_sizes(db: _Db, owner: str, name: str, make: bool = True) -> None:
    """SQLite: the triggers that refuse what Oracle's table would -- a value longer than its
    VARCHAR2 / CHAR / RAW column (ORA-12899), a number past its NUMBER(p, s) precision
    (ORA-01438), a value given to a GENERATED ALWAYS identity column (ORA-32795 / 32796)
    -- as PostgreSQL's column types refuse them; made again after each change of the table
    (``make`` False: only dropped)."""
    if db.pg:
        return
    physical = _user_table(db, db.store, owner, name)
    for event in ("insert", "update", "identity"):
        db.run(f"DROP TRIGGER IF EXISTS {_quote(physical + '$size_' + event)}")
    table = f'"{owner}"."{_oracle_name(physical)}"'
    checks: list[tuple[str, str]] = []      # (column, the statement refusing its value)
    for r in db.rows("SELECT * FROM pragma_table_info(?)", (physical,)):
        col, declared = _quote(r[1]), r[2] or ""
        if m := _SIZED.match(declared):
            n = int(m.group(1))
            message = f'ORA-12899: value too large for column {table}."{_oracle_name(r[1])}" (maximum: {n})'
            checks.append((col, f"SELECT RAISE(ABORT, {_literal(message)}) WHERE length(NEW.{col}) > {n}; "))
        elif (m := _PRECISION.match(declared)) and int(m.group(2) or 0) >= 0:
            p, scale = int(m.group(1)), int(m.group(2) or 0)
            message = "ORA-01438: value larger than specified precision allowed for this column"
            checks.append((col, f"SELECT RAISE(ABORT, {_literal(message)}) WHERE typeof(NEW.{col}) IN "
                                f"('integer', 'real') AND abs(round(NEW.{col}, {scale})) >= 1e{p - scale}; "))
    always = [_quote(c) for c in db.spec(owner, physical).get("always", ())]
    if not make:
        return
    given = "".join(f"SELECT RAISE(ABORT, 'ORA-32795: cannot insert into a generated always identity column') "
                    f"WHERE NEW.{c} IS NOT NULL AND NEW.{c} <> -1; " for c in always)   # (-1: SQLite's rowid to come)
    body = "".join(check for _, check in checks)
    for event, when, statements in (
            ("insert", "INSERT", given + body),
            ("update", f"UPDATE OF {', '.join(col for col, _ in checks)}", body),
            ("identity", f"UPDATE OF {', '.join(always)}",
             "SELECT RAISE(ABORT, 'ORA-32796: cannot update a generated always identity column'); ")):
        if statements and (event != "identity" or always):
            db.run(f"CREATE TRIGGER {_quote(physical + '$size_' + event)} BEFORE {when} ON {_quote(physical)} "
                   f"BEGIN {statements}END")


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _column_list(r: Reader, need_type: bool) -> list[Column]:
    if r.accept("COLUMN"):
        return [read_column(r, need_type)]
    if r.word() != "(":
        return [read_column(r, need_type)]
    r.expect("(")
    out = [read_column(r, need_type)]
    while r.accept(","):
        out.append(read_column(r, need_type))
    r.expect(")")
    return out


def _add_columns(db: _Db, store: Any, owner: str, name: str, added: list[Column]) -> None:
    physical = _user_table(db, store, owner, name)
    known = db.columns(owner, name)
    for c in added:
        if db.key(c.name) in known:
            raise ora(1430)
        for k in c.constraints:
            if k.kind == "FOREIGN KEY":
                references(db, k, owner)
        known[db.key(c.name)] = ("", False)
    filled = bool(db.rows(f"SELECT 1 FROM {db.table(owner, name)} LIMIT 1"))
    schema = db.schema(owner)
    if db.pg:
        db.ensure_domains(added, schema)
    for c in added:
        key = any(k.kind == "PRIMARY KEY" for k in c.constraints)
        if (c.nullable is False or key) and c.default is None and filled:
            raise ora(1758)
        if key and any(k.kind == "PRIMARY KEY" for k in listed(db, owner, physical)):
            raise ora(2260)
        inline = "".join(f" {constraint_sql(db, k, owner, inline=True)}" for k in c.constraints)
        if not db.pg and (key or any(k.kind == "UNIQUE" for k in c.constraints)):
            # (SQLite's ADD COLUMN takes no key: the table made again with the column)
            end = stored_table(db.conn, physical).last_column_end
            rebuild(db.conn, physical, [(end, end, ", " + _column_sql(db, c, schema, key=key) + inline)])
        elif not db.pg and c.nullable is False and c.default is None:
            splice(db.conn, physical, lambda t, sql: sql[:t.last_column_end] + ", "
                   + _column_sql(db, c, schema) + sql[t.last_column_end:])
        else:
            db.run(f"ALTER TABLE {db.table(owner, name)} ADD COLUMN {_column_sql(db, c, schema)}" + inline)


def _drop_columns(db: _Db, store: Any, owner: str, name: str, dropped: list[str], cascade: bool) -> None:
    _user_table(db, store, owner, name)
    known = db.columns(owner, name)
    for c in dropped:
        if db.key(c) not in known:
            raise ora(904, c)
    if len(set(dropped)) >= len(known):
        raise ora(12983)
    for c in dropped:
        db.run(f"ALTER TABLE {db.table(owner, name)} DROP COLUMN {_quote(_physical(c))}"
               + (" CASCADE" if cascade and db.pg else ""))


def _rename_column(db: _Db, store: Any, owner: str, name: str, old: str, new: str) -> None:
    _user_table(db, store, owner, name)
    known = db.columns(owner, name)
    if db.key(old) not in known:
        raise ora(904, old)
    if db.key(new) in known:
        raise ora(957, new)
    db.run(f"ALTER TABLE {db.table(owner, name)} RENAME COLUMN {_quote(_physical(old))} TO {_quote(_physical(new))}")


def _rename_table(db: _Db, store: Any, owner: str, name: str, new: str) -> None:
    _user_table(db, store, owner, name)
    _free(db, store, owner, new)
    spec = db.spec(owner, _physical(name))
    db.run(f"ALTER TABLE {db.table(owner, name)} RENAME TO {_quote(_physical(new))}")
    db.record(owner, name, dropped=True)
    db.record(owner, new, spec=spec)


def _modify_columns(db: _Db, store: Any, owner: str, name: str, modified: list[Column]) -> None:
    physical = _user_table(db, store, owner, name)
    known = db.columns(owner, name)
    target = db.table(owner, name)
    stored = stored_table(db.conn, physical) if not db.pg else None
    schema = db.schema(owner)
    if db.pg:
        db.ensure_domains(modified, schema)
    for c in modified:
        if db.key(c.name) not in known:
            raise ora(904, c.name)
        if c.constraints or c.identity:
            raise not_supported("constraints or identity in MODIFY")
        col = _quote(_physical(c.name))
        declared, not_null = known[db.key(c.name)]
        if c.nullable is False and not_null:
            raise ora(1442)
        if c.nullable is True and not not_null:
            raise ora(1451)
        if c.nullable is False and db.rows(f"SELECT 1 FROM {target} WHERE {col} IS NULL LIMIT 1"):
            raise ora(2296, f"{owner}.{c.name}")
        if c.type is not None:
            old = _declared_family(declared)
            if old != c.type.family and db.rows(f"SELECT 1 FROM {target} WHERE {col} IS NOT NULL LIMIT 1"):
                raise ora(1439)
        if db.pg:
            if c.type is not None:
                kind = c.type.pg(schema)
                db.run(f"ALTER TABLE {target} ALTER COLUMN {col} TYPE {kind} USING {col}::{kind}")
            if c.default is not None:
                db.run(f"ALTER TABLE {target} ALTER COLUMN {col} SET DEFAULT {_default(c.default, True)}")
            if c.nullable is not None:
                db.run(f"ALTER TABLE {target} ALTER COLUMN {col} {'DROP' if c.nullable else 'SET'} NOT NULL")
            continue
        old = next(d for d in stored.columns if d.name.upper() == c.name.upper())
        if old.constraints or old.identity:
            raise not_supported("MODIFY of an SQLite column with inline constraints")
        text = f"{_quote(_physical(c.name))} {c.type.sqlite if c.type is not None else old.type_text or ''}".rstrip()
        text += _collation(db, c.type) if c.type is not None else f" COLLATE {old.collation}" if old.collation else ""
        default = _default(c.default, False) if c.default is not None else old.default
        if default is not None:
            text += f" DEFAULT {default}"
        if (old.nullable if c.nullable is None else c.nullable) is False:
            text += " NOT NULL"
        splice(db.conn, physical, lambda t, sql, d=old, new=text: sql[:d.span[0]] + new + sql[d.span[1]:])
        stored = stored_table(db.conn, physical)


def _declared_family(declared: str) -> str:
    """The MODIFY family of a declared type (either store's spelling)."""
    d = declared.upper()
    for words, family in (("DATE_TIME", "DATE"), ("TIMESTAMP", "TIMESTAMP"), ("DATE", "DATE"),
                          ("NCLOB", "CLOB"), ("CLOB", "CLOB"), ("BLOB", "BLOB"), ("TEXT", "CLOB"),
                          ("NVARCHAR2", "VARCHAR2"), ("VARCHAR", "VARCHAR2"), ("CHARACTER VARYING", "VARCHAR2"),
                          ("NCHAR", "CHAR"), ("CHAR", "CHAR"), ("RAW", "RAW"), ("BYTEA", "RAW"),
                          ("BINARY_DOUBLE", "BINARY_DOUBLE"), ("DOUBLE", "BINARY_DOUBLE"),
                          ("BINARY_FLOAT", "BINARY_FLOAT"), ("REAL", "BINARY_FLOAT")):
        if words in d:
            return family
    return "NUMBER"
