"""One schema's object namespace: whether ``owner.name`` is already used by an object that
shares it (Oracle's "Database Object Namespaces": tables, views, sequences, private synonyms,
stand-alone procedures and functions, packages, materialized views and user-defined types
share one namespace per schema; indexes, constraints, triggers and AQ queues have their
own).  Of those Sluice keeps a user's tables (made at a cursor, recorded with their owner,
or made in the database itself: whoever names it), queue tables (tables), views (recorded
with their owner, :mod:`.viewddl`), sequences, object types, stored procedures and functions
and packages (a package body's name is not in it: it is its spec's).

CREATE TABLE, CREATE VIEW, CREATE SEQUENCE, CREATE TYPE, CREATE PROCEDURE / FUNCTION and
DBMS_AQADM.CREATE_QUEUE_TABLE ask
:func:`check` where each checked its own kind before: ORA-00955 "name is already used by an
existing object" (each keeps its own code for its own kind: ORA-24001 for a queue table).
A queue's name is in the queue namespace (ORA-24006 among queues only)."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import ora

__all__ = ["TABLE", "QUEUE_TABLE", "SEQUENCE", "TYPE", "VIEW", "PROCEDURE", "FUNCTION", "PACKAGE",
           "PACKAGE_BODY", "check",
           "sequences_beside", "used"]

TABLE, QUEUE_TABLE, SEQUENCE, TYPE, VIEW = "TABLE", "QUEUE TABLE", "SEQUENCE", "TYPE", "VIEW"
PROCEDURE, FUNCTION = "PROCEDURE", "FUNCTION"
PACKAGE, PACKAGE_BODY = "PACKAGE", "PACKAGE BODY"      # (a body: not in the namespace)
# the kinds kept as objects of the generic catalog (SLUICE_CATALOG's KIND); a view's record
# too (one made FORCE has no view in the database)
_CATALOG_KINDS = (TYPE, VIEW, PROCEDURE, FUNCTION, PACKAGE)
_SLUICES = ("SLUICE_", "AQ_QUEUE", "SQLITE_", "AQ$")      # the store's own relations: not a user's


def check(store: Any, owner: str, name: str, skip: tuple[str, ...] = (), c: Any = None) -> None:
    """ORA-00955 when ``owner.name`` is used in the schema's namespace by an object of a kind
    not in ``skip`` (the statement's own kind, checked with its own code).  ``c``: the
    store's connection of the statement's transaction (else a read of its own)."""
    if used(store, owner, name, skip, c) is not None:
        raise ora(955)


def used(store: Any, owner: str, name: str, skip: tuple[str, ...] = (), c: Any = None) -> str | None:
    """The kind (:data:`TABLE`, :data:`QUEUE_TABLE`, :data:`SEQUENCE`, :data:`TYPE`, :data:`VIEW`,
    :data:`PROCEDURE`, :data:`FUNCTION`, :data:`PACKAGE`) of the object of the schema ``owner`` named ``name``,
    None when there is none."""
    pg = getattr(store, "target", None) is not None
    found = _read(store, c, lambda conn: _stored(conn, store, pg, owner, name, skip))
    if found is None and SEQUENCE not in skip and not pg:
        found = SEQUENCE if _beside[0](store, owner, name) else None    # (the counters' own file)
    return found


def sequences_beside(exists: Callable[[Any, str, str], bool]) -> None:
    """SQLite: ``exists(store, owner, name)`` says whether a sequence is (its counters are in
    a file beside the store: :mod:`.sequences`, which imports this module, registers it)."""
    _beside[0] = exists


def _no_sequences(store: Any, owner: str, name: str) -> bool:
    return False


_beside: list[Callable[[Any, str, str], bool]] = [_no_sequences]


def _read(store: Any, c: Any, work: Callable[[Any], Any]) -> Any:
    if c is not None:
        return work(c)
    if getattr(store, "target", None) is not None:
        return store.pool.run(work, transaction=False)
    with store._svc_lock:
        return work(store._svc)


def _rows(c: Any, sql: str, params: tuple) -> list:
    return c.execute(sql, params).fetchall()


def _physical(name: str) -> str:
    """The database's spelling of an Oracle name (``EMP`` -> ``emp``, as table DDL spells it)."""
    return name.lower() if name == name.upper() else name


def _stored(c: Any, store: Any, pg: bool, owner: str, name: str, skip: tuple[str, ...]) -> str | None:
    if QUEUE_TABLE not in skip and _rows(c, "SELECT 1 FROM AQ_QUEUE_TABLES WHERE OWNER = ? AND NAME = ?",
                                         (owner, name)):
        return QUEUE_TABLE
    kinds = [k for k in _CATALOG_KINDS if k not in skip]
    found = kinds and _rows(c, f"SELECT KIND FROM SLUICE_CATALOG WHERE KIND IN ({', '.join('?' * len(kinds))})"
                               " AND OWNER = ? AND NAME = ?", (*kinds, owner, name))
    if found:
        return found[0][0]
    if SEQUENCE not in skip and pg:
        from .seqwords import pg_name
        if _rows(c, "SELECT to_regclass(?)::text", (pg_name(owner, name),))[0][0] is not None:
            return SEQUENCE
    if TABLE not in skip and _table(c, store, pg, owner, name):
        return TABLE
    return None


def _table(c: Any, store: Any, pg: bool, owner: str, name: str) -> bool:
    """Whether ``owner`` has a table or view ``name``: one of the store's schema recorded as
    the owner's or not recorded at all (a table made in the database itself is whoever
    names it), or on PostgreSQL one of the owner's own schema."""
    physical = _physical(name)
    if physical.upper().startswith(_SLUICES):
        return False
    if pg:
        home, own = store.target.schema, _physical(owner)
        found = _rows(c, "SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "WHERE n.nspname IN (?, ?) AND c.relname = ? AND c.relkind IN ('r', 'p', 'v', 'm', 'f')",
                      (home, own, physical))
        schemas = {r[0] for r in found}
        if own in schemas and own != home:
            return True
        if home not in schemas:
            return False
    elif not _rows(c, "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND upper(name) = upper(?)",
                   (physical,)):
        return False
    owners = {o for o, n in _rows(c, "SELECT OWNER, NAME FROM SLUICE_CATALOG WHERE KIND IN ('USER_TABLE', 'VIEW')",
                                  ())
              if (_physical(n) == physical if pg else n.lower() == physical.lower())}   # (a view's: Oracle's name)
    return not owners or owner in owners
