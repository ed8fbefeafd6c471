"""Oracle's sequences on both stores: CREATE / ALTER / DROP SEQUENCE at a cursor, and
``[schema.]seq.NEXTVAL`` / ``.CURRVAL`` in a user's SQL (and PL/SQL: :class:`Routines`).

Oracle's rules kept: NEXTVAL is no part of the transaction (a rollback gives no value back);
a statement increments a sequence once per row, however often the row names its NEXTVAL (and
its CURRVAL then is that value: the first of the row's references is the NEXTVAL, the others
its CURRVAL, :mod:`.seqwords`); CURRVAL before the session's first NEXTVAL is ORA-08002; past
MAXVALUE (below MINVALUE) without CYCLE ORA-08004; ORA-02289 for a sequence that does not
exist, ORA-00955 for a name already used; the DDL commits the open transaction first.

* PostgreSQL: a native sequence (non-transactional as Oracle's) in the store's schema, named
  ``SEQ$OWNER.NAME``; its Oracle attributes (:mod:`.seqspec`) are its comment, its bounds
  PostgreSQL's BIGINT's at most.  Its own CACHE is 1 whatever the CACHE said: PostgreSQL caches
  per session, so two sessions would draw out of order, where one Oracle instance hands its
  cache out in order to all its sessions (nextval stays cheap: the server logs 32 values at once).
* SQLite: the store's one writer is held by a session's DML until its transaction ends, so a
  sequence's counter cannot live in the store's file: it lives in a small database beside it
  (``<store>.sequences``, table SEQUENCES: the spec and LAST_NUMBER, Oracle's "last number
  written to disk"), written by a connection of its own under ``BEGIN IMMEDIATE`` (one writer
  across processes).  Each process takes blocks of CACHE values (one value for NOCACHE or
  ORDER), as an Oracle instance caches them in its SGA; a block is dropped when the sequence
  is altered, dropped or made again (its generation, GEN, changed).  The statements call
  ``sluice_nextval`` / ``sluice_currval`` (:func:`register`); CURRVAL is the connection's.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import weakref
from typing import Any, Callable

from ..errors import DatabaseError, ora
from ..names import split_qualified
from . import namespace
from .seqspec import alter_options, altered, created, parse
from .seqwords import is_sequence_word, named, plain_names
from .seqwords import pg_name as _pg_name
from .sqlitecalls import oracle_call

__all__ = ["Routines", "SIDE_FILES", "column_default", "drop", "exists", "listing", "register", "routines",
           "statement"]

SIDE_FILES = (".sequences", ".sequences-wal", ".sequences-shm")
_BIGINT = (-2**63, 2**63 - 1)


# -- CREATE / ALTER / DROP SEQUENCE -----------------------------------------------------
def statement(ctx: Any, kind: str, text: str) -> int:
    """Run ``CREATE | ALTER | DROP SEQUENCE`` (``kind``) for the session ``ctx``: checked, then
    the open transaction committed (Oracle's DDL), then done on the store."""
    verb = kind.split()[0]
    st = parse(verb, text)
    owner, name = split_qualified(st.name, ctx.username, "sequence name")
    if verb == "ALTER":     # the owner's, or a holder of ALTER on it or ALTER ANY SEQUENCE
        ctx.authz.check_object(f"{owner}.{name}", "ALTER", "SEQUENCE")
    elif owner != ctx.username and not ctx.authz.is_superuser():
        raise ora(1031)
    spec = created(st.options) if verb == "CREATE" else None
    if verb == "ALTER":
        alter_options(st.options)
    ctx.ddl_commit()
    store = ctx.store
    if store.dialect == "sqlite":
        side = _sqlite(store)
        if verb == "CREATE":
            namespace.check(store, owner, name, (namespace.SEQUENCE,))
            side.create(owner, name, spec)
        elif verb == "ALTER":
            side.alter(owner, name, st.options)
    elif verb == "CREATE":
        def create(c: Any) -> None:
            namespace.check(store, owner, name, (namespace.SEQUENCE,), c)    # (a table, a type …)
            c.command(_pg_create(owner, name, spec))
        _pg(store, create)
    elif verb == "ALTER":
        _pg(store, lambda c: _pg_alter(c, owner, name, st.options))
    if verb == "DROP":
        drop(store, owner, name)
        for grantee, obj, _ in store.catalog_objects("TABPRIV"):   # its grants go with it
            if obj == f"{owner}.{name}":
                store.drop_catalog_object("TABPRIV", grantee, obj)
    return 0


def drop(store: Any, owner: str, name: str) -> None:
    """Drop the sequence ``owner.name`` (ORA-02289 when there is none): DROP SEQUENCE, and
    DROP USER … CASCADE (:mod:`sluice.streams.schemadrop`)."""
    if store.dialect == "sqlite":
        _sqlite(store).drop(owner, name)
    else:
        _pg(store, lambda c: c.command(f"DROP SEQUENCE {_pg_name(owner, name)}"))


# -- PostgreSQL -------------------------------------------------------------------------
def _pg(store: Any, work: Callable[[Any], Any]) -> Any:
    import psycopg
    from .pgconn import translate
    try:
        return store.pool.run(work)
    except psycopg.Error as e:
        raise translate(e, store.target) from None


def _pg_create(owner: str, name: str, spec: dict, verb: str = "CREATE", restart: int | None = None) -> str:
    lo, hi = max(spec["min"], _BIGINT[0]), min(spec["max"], _BIGINT[1])
    start = min(max(spec["start"], lo), hi)
    seq = _pg_name(owner, name)
    again = "" if restart is None else f" RESTART WITH {restart}"
    comment = json.dumps({**spec, "owner": owner, "name": name}).replace("'", "''")
    return (f"{verb} SEQUENCE {seq}{' AS BIGINT' if verb == 'CREATE' else ''} INCREMENT BY {spec['increment']} "
            f"MINVALUE {lo} MAXVALUE {hi} START WITH {start}{again} CACHE 1 "
            f"{'' if spec['cycle'] else 'NO '}CYCLE; COMMENT ON SEQUENCE {seq} IS '{comment}'")


def _pg_state(c: Any, owner: str, name: str) -> tuple[dict, int, bool]:
    """(spec, last_value, is_called) of a sequence; ORA-02289 when there is none."""
    seq = _pg_name(owner, name)
    row = c.execute("SELECT obj_description(to_regclass(?), 'pg_class')", (seq,)).fetchone()
    if row is None or row[0] is None:
        raise ora(2289)
    last, called = c.execute(f"SELECT last_value, is_called FROM {seq}").fetchone()
    return json.loads(row[0]), last, called


def _pg_alter(c: Any, owner: str, name: str, options: dict) -> None:
    spec, last, called = _pg_state(c, owner, name)
    new = altered(spec, options, last if called else None)
    c.command(_pg_create(owner, name, new, "ALTER", new["start"] if "restart" in options else None))


# -- SQLite: the counters beside the store ----------------------------------------------
_SIDE: "weakref.WeakKeyDictionary[Any, _Side]" = weakref.WeakKeyDictionary()
_SIDE_LOCK = threading.Lock()


def _sqlite(store: Any) -> "_Side":
    with _SIDE_LOCK:
        side = _SIDE.get(store)
        if side is None:
            side = _SIDE[store] = _Side(store.path, store.synchronous)
            store.on_close(side.close)
        return side


class _Side:
    """The sequences of one SQLite store (its ``.sequences`` file) as this process sees them."""

    def __init__(self, store_path: str, synchronous: str) -> None:
        self.store_path, self.path, self.synchronous = store_path, store_path + SIDE_FILES[0], synchronous
        self._c: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._blocks: dict[tuple[str, str], list] = {}     # (owner, name) -> [gen, next, left, increment]

    def _conn(self, create: bool = True) -> sqlite3.Connection | None:
        """The file's connection (None when it is not there and ``create`` is false: a store
        that never had a sequence has no file beside it)."""
        if self._c is None:
            if not create and not os.path.exists(self.path):
                return None
            c = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=60.0)
            try:
                c.execute("PRAGMA journal_mode=WAL")
                c.execute(f"PRAGMA synchronous={self.synchronous}")
                c.execute("CREATE TABLE IF NOT EXISTS SEQUENCES (OWNER TEXT NOT NULL, NAME TEXT NOT NULL, "
                          "SPEC TEXT NOT NULL, LAST_NUMBER TEXT NOT NULL, USED INTEGER NOT NULL, "
                          "GEN INTEGER NOT NULL, PRIMARY KEY (OWNER, NAME))")
                c.execute("CREATE TABLE IF NOT EXISTS SEQUENCES_OF (STORE_ID TEXT)")
                c.execute("BEGIN IMMEDIATE")
                self._same_store(c)
                c.execute("COMMIT")
            except BaseException:
                c.close()
                raise
            self._c = c
        return self._c

    def _store_id(self, make: bool = False) -> str | None:
        """The store's sequences id (SLUICE_META ``sequences_id``), written first when ``make``
        (the store's first CREATE SEQUENCE: the file beside it is then the store's own)."""
        main = sqlite3.connect(self.store_path, isolation_level=None, timeout=60.0)
        try:
            if make:
                main.execute("INSERT INTO SLUICE_META (KEY, VALUE) VALUES ('sequences_id', ?) ON CONFLICT DO NOTHING",
                             (secrets.token_hex(16),))
            row = main.execute("SELECT VALUE FROM SLUICE_META WHERE KEY = 'sequences_id'").fetchone()
        finally:
            main.close()
        return None if row is None else row[0]

    def _same_store(self, c: sqlite3.Connection) -> None:
        """Inside the file's write transaction: its sequences are the store's only when it names
        the store's id — a file left behind by a store deleted and made again holds none of the
        new store's (its rows are dropped)."""
        row = c.execute("SELECT STORE_ID FROM SEQUENCES_OF").fetchone()
        store_id = self._store_id()
        if row is None or row[0] != store_id:
            c.execute("DELETE FROM SEQUENCES")
            c.execute("DELETE FROM SEQUENCES_OF")
            c.execute("INSERT INTO SEQUENCES_OF VALUES (?)", (store_id,))
            self._blocks.clear()

    def close(self) -> None:
        with self._lock:
            if self._c is not None:
                self._c.close()
                self._c = None

    def _write(self, work: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            c = self._conn()
            assert c is not None
            c.execute("BEGIN IMMEDIATE")
            try:
                result = work(c)
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")
            return result

    @staticmethod
    def _row(c: sqlite3.Connection, owner: str, name: str) -> tuple[dict, int, bool, int]:
        row = c.execute("SELECT SPEC, LAST_NUMBER, USED, GEN FROM SEQUENCES WHERE OWNER = ? AND NAME = ?",
                        (owner, name)).fetchone()
        if row is None:
            raise ora(2289)
        return json.loads(row[0]), int(row[1]), bool(row[2]), row[3]

    def create(self, owner: str, name: str, spec: dict) -> None:
        self._store_id(make=True)     # (before the file's lock: a session's DML holds the store's)

        def work(c):
            self._same_store(c)
            if c.execute("SELECT 1 FROM SEQUENCES WHERE OWNER = ? AND NAME = ?", (owner, name)).fetchone():
                raise ora(955)
            c.execute("INSERT INTO SEQUENCES VALUES (?, ?, ?, ?, 0, ?)",
                      (owner, name, json.dumps(spec), str(spec["start"]), secrets.randbits(62)))
        self._write(work)

    def drop(self, owner: str, name: str) -> None:
        self.generation(owner, name)      # (ORA-02289 without making the file)

        def work(c):
            if not c.execute("DELETE FROM SEQUENCES WHERE OWNER = ? AND NAME = ? RETURNING 1",
                             (owner, name)).fetchall():
                raise ora(2289)
        self._write(work)
        self._blocks.pop((owner, name), None)

    def alter(self, owner: str, name: str, options: dict) -> None:
        self.generation(owner, name)

        def work(c):
            spec, last, used, _ = self._row(c, owner, name)
            current = last - spec["increment"] if used else None
            new = altered(spec, options, current)
            if "restart" in options:
                last, used = new["start"], False
            elif used:
                last = current + new["increment"]
            c.execute("UPDATE SEQUENCES SET SPEC = ?, LAST_NUMBER = ?, USED = ?, GEN = ? WHERE OWNER = ? AND NAME = ?",
                      (json.dumps(new), str(last), int(used), secrets.randbits(62), owner, name))
        self._write(work)
        self._blocks.pop((owner, name), None)

    def generation(self, owner: str, name: str) -> int:
        """The sequence's generation (ORA-02289 when there is none)."""
        with self._lock:
            c = self._conn(create=False)
            row = None if c is None else c.execute("SELECT GEN FROM SEQUENCES WHERE OWNER = ? AND NAME = ?",
                                                   (owner, name)).fetchone()
        if row is None:
            raise ora(2289)
        return row[0]

    def next_value(self, owner: str, name: str) -> tuple[int, int]:
        """(the sequence's next value, its generation): from this process's block, or a new
        block written to the file first."""
        gen = self.generation(owner, name)
        key = (owner, name)
        with self._lock:
            block = self._blocks.get(key)
            if block is not None and block[0] == gen and block[2] > 0:
                value = block[1]
                block[1] += block[3]
                block[2] -= 1
                return value, gen
        first, count, increment, gen = self._write(lambda c: self._allocate(c, owner, name))
        with self._lock:
            self._blocks[key] = [gen, first + increment, count - 1, increment]
        return first, gen

    @staticmethod
    def _allocate(c: sqlite3.Connection, owner: str, name: str) -> tuple[int, int, int, int]:
        spec, value, _, gen = _Side._row(c, owner, name)
        increment, lo, hi = spec["increment"], spec["min"], spec["max"]
        if (increment > 0 and value > hi) or (increment < 0 and value < lo):
            if not spec["cycle"]:
                raise ora(8004, name, "exceeds MAXVALUE" if increment > 0 else "goes below MINVALUE")
            value = lo if increment > 0 else hi
        room = (hi - value) // increment + 1 if increment > 0 else (value - lo) // -increment + 1
        count = min(room, 1 if spec["order"] or not spec["cache"] else spec["cache"])
        c.execute("UPDATE SEQUENCES SET LAST_NUMBER = ?, USED = 1 WHERE OWNER = ? AND NAME = ?",
                  (str(value + count * increment), owner, name))
        return value, count, increment, gen

    def rows(self) -> list[tuple[str, str, dict, int]]:
        """(owner, name, spec, LAST_NUMBER) of every sequence."""
        with self._lock:
            c = self._conn(create=False)
            return [] if c is None else [(o, n, json.loads(s), int(last)) for o, n, s, last in c.execute(
                "SELECT OWNER, NAME, SPEC, LAST_NUMBER FROM SEQUENCES ORDER BY OWNER, NAME")]


def register(conn: sqlite3.Connection, store: Any) -> None:
    """``sluice_nextval('OWNER.NAME')`` and ``sluice_currval(…)`` on a connection of the SQLite
    ``store`` (its session's CURRVAL: the last NEXTVAL it drew of each sequence)."""
    current: dict[tuple[str, str], tuple[int, int]] = {}
    of = weakref.ref(store)     # (the store's own connections hold these functions: no cycle)

    def side() -> _Side:
        held = of()
        if held is None:
            raise ora(3113)
        return _sqlite(held)

    def nextval(key: str) -> int:
        owner, name = key.split(".", 1)
        value, gen = side().next_value(owner, name)
        if not _BIGINT[0] <= value <= _BIGINT[1]:
            raise ora(1426, f"{key}.NEXTVAL")
        current[(owner, name)] = (gen, value)
        return value

    def currval(key: str) -> int:
        owner, name = key.split(".", 1)
        gen = side().generation(owner, name)
        got = current.get((owner, name))
        if got is None or got[0] != gen:
            raise ora(8002, name)
        return got[1]

    conn.create_function("sluice_nextval", 1, oracle_call(nextval))
    conn.create_function("sluice_currval", 1, oracle_call(currval))


# -- DEFAULT seq.NEXTVAL ------------------------------------------------------------------
def column_default(store: Any, owner: str, expr: str | None) -> str | None:
    """A column's DEFAULT of CREATE TABLE as the store's database takes it: ``[schema.]seq.NEXTVAL``
    (or CURRVAL; an unqualified sequence the table ``owner``'s) the call a statement's NEXTVAL
    is (:mod:`.seqwords`), run by the database at each insert that gives the column no value;
    any other expression as it is.  :raises: ORA-02289 no such sequence."""
    if expr is None or not is_sequence_word(word := plain_names(expr).strip().upper()):
        return expr
    seq_owner, name, which = named(word, owner)
    if not exists(store, seq_owner, name):
        raise ora(2289)
    if store.dialect == "sqlite":
        return f"sluice_{which.lower()}('{seq_owner}.{name}')"
    return f"{which.lower()}('{_pg_name(seq_owner, name)}')"


# -- PL/SQL: seq.NEXTVAL in an expression -----------------------------------------------
class Routines:
    """A sequence as the PL/SQL interpreter reaches a package: ``v := seq.NEXTVAL`` calls
    :meth:`nextval`, a query of the store (``query(sql) -> (columns, rows)``)."""

    def __init__(self, query: Callable[[str], Any], name: str) -> None:
        self._query, self._name = query, name

    def nextval(self) -> int:
        return self._query(f"SELECT {self._name}.NEXTVAL FROM DUAL")[1][0][0]

    def currval(self) -> int:
        return self._query(f"SELECT {self._name}.CURRVAL FROM DUAL")[1][0][0]


def routines(store: Any, user: str, name: str, query: Callable[[str], Any]) -> Routines | None:
    """:class:`Routines` of the sequence ``name`` (``[schema.]seq``), or None when there is none."""
    try:
        owner, seq = split_qualified(name, user, "sequence name")
    except DatabaseError:
        return None
    if not exists(store, owner, seq):
        return None
    return Routines(query, f"{owner}.{seq}")


def listing(store: Any) -> list[tuple[str, str, dict, int]]:
    """(owner, name, spec, LAST_NUMBER) of every sequence of ``store``, by owner and name."""
    if store.dialect == "sqlite":
        return _sqlite(store).rows()

    def work(c):
        found = []
        for spec, in c.execute("SELECT obj_description(c.oid, 'pg_class') FROM pg_class c "
                               "WHERE c.relkind = 'S' AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()) "
                               "AND c.relname LIKE 'SEQ$%'").fetchall():
            if spec is None:
                continue
            spec = json.loads(spec)
            owner, name = spec.pop("owner"), spec.pop("name")
            last, called = c.execute(f"SELECT last_value, is_called FROM {_pg_name(owner, name)}").fetchone()
            found.append((owner, name, spec, last + spec["increment"] if called else last))   # (no cache)
        return sorted(found, key=lambda r: r[:2])
    return _pg(store, work)


def exists(store: Any, owner: str, name: str) -> bool:
    if store.dialect == "sqlite":
        try:
            _sqlite(store).generation(owner, name)
        except DatabaseError:
            return False
        return True
    return _pg(store, lambda c: c.execute("SELECT to_regclass(?)::text", (_pg_name(owner, name),)).fetchone()[0]) \
        is not None


namespace.sequences_beside(exists)
