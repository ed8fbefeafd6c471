"""Oracle's global temporary tables: ``CREATE GLOBAL TEMPORARY TABLE t (…) ON COMMIT DELETE
ROWS | PRESERVE ROWS`` (read and made by :mod:`.tableddl`).

**What Sluice promises**, as Oracle: the definition is permanent and shared -- one table
of the schema's namespace, its owner recorded (its USER_TABLE record says ``temporary``:
DELETE or PRESERVE), in USER_TABLES (TEMPORARY Y, DURATION) and USER_TAB_COLUMNS -- and the
rows are the session's own: no other session sees them, a commit ends them (DELETE ROWS)
or the session's end does (PRESERVE ROWS), a rollback takes back the transaction's.

**How.**  The definition is a real, empty table of the store's schema made by the DDL.  A
session's rows are in a temporary table of the database of the same name, which the
database's name lookup finds first (SQLite's ``temp`` schema of the session's connection;
PostgreSQL's ``pg_temp`` schema of the session's connection): before a statement naming a
global temporary table runs, :func:`temporary_in_use` makes the session's one when it has
none yet (``CREATE TEMP TABLE IF NOT EXISTS``: SQLite from the definition's own CREATE TABLE,
PostgreSQL ``LIKE`` the definition, with its ``ON COMMIT DELETE ROWS``).  The session's
table lives as long as its connection: a Sluice session holds one connection for its life
(a pooled Sluice connection keeps its session, so its PRESERVE rows, as Oracle's pooled
sessions do; a PostgreSQL session whose connection was lost lost its rows, as a session
does).  SQLite has no ON COMMIT: :func:`committed` deletes a DELETE ROWS table's rows after
each commit of the session.

A session's table of a definition dropped, or dropped and made again, since is dropped by its
next statement naming it (Oracle refuses that DDL while a session has rows: ORA-14452).
Left: an ALTER of the definition does not reach a session's existing table until the session
ends (Oracle: ORA-14450 while in use); SQLite's
session table has no VARCHAR2 / NUMBER(p, s) size triggers; TRUNCATE empties only the
definition.
"""

from __future__ import annotations

import re
import weakref
from typing import Any

from .viewddl import named_in

__all__ = ["committed", "temporary_in_use"]

_CREATE = re.compile(r"^\s*CREATE\s+TABLE\s+", re.I)


def temporary_in_use(store: Any, session: Any, sql: str) -> None:
    """Before ``sql`` runs: the session's own table of each global temporary table it names
    (and no more one of a table dropped, or dropped and made again, since the session made
    its own).  Costs a look at the catalog's version unless such tables exist and ``sql``
    names one."""
    known = _known(store)
    mine = _made.get(session)
    if mine:
        for name in named_in(sql, mine):
            if known.get(name, ("", "", None))[2] != mine[name][1]:
                schema = "temp" if getattr(store, "target", None) is None else "pg_temp"
                session.run_own(f'DROP TABLE IF EXISTS {schema}."{mine.pop(name)[0]}"')
    for name in named_in(sql, known):
        session.run_own(_session_table(store, session, name, known[name]))
        _made.setdefault(session, {})[name] = (known[name][0], known[name][2])


def committed(store: Any, session: Any) -> None:
    """After a commit of ``session``: SQLite's ON COMMIT DELETE ROWS (PostgreSQL's tables do it)."""
    if getattr(store, "target", None) is not None:
        return
    known = _known(store)
    if not known or not any(kept == "DELETE" for _, kept, _ in known.values()):
        return
    present = {r[0] for r in session.run_own("SELECT name FROM temp.sqlite_master WHERE type = 'table'")}
    for physical, kept, _ in known.values():
        if kept == "DELETE" and physical in present:
            session.run_own(f'DELETE FROM temp."{physical}"')


def _known(store: Any) -> dict[str, tuple[str, str, str | None]]:
    """Oracle's name -> (physical name, DELETE / PRESERVE, when it was made) of each global
    temporary table, kept until the catalog changes."""
    version = store.catalog_version()
    kept = getattr(store, "temporary_kept", None)
    if kept is None or kept[0] != version:
        found = {(n.upper() if n == n.lower() else n): (n, spec["temporary"], spec.get("created"))
                 for _, n, spec in store.catalog_objects("USER_TABLE") if spec.get("temporary")}
        kept = store.temporary_kept = (version, found)
    return kept[1]


# each session's own tables: Oracle's name -> (physical name, when its definition was made, to
# the microsecond: a definition made again is another)
_made: "weakref.WeakKeyDictionary[Any, dict[str, tuple[str, str | None]]]" = weakref.WeakKeyDictionary()


def _session_table(store: Any, session: Any, name: str, known: tuple[str, str, str | None]) -> str:
    physical, kept, _ = known
    quoted = '"' + physical.replace('"', '""') + '"'
    if getattr(store, "target", None) is not None:
        return (f'CREATE TEMP TABLE IF NOT EXISTS {quoted} (LIKE "{store.target.schema}".{quoted} INCLUDING DEFAULTS '
                f"INCLUDING IDENTITY INCLUDING CONSTRAINTS INCLUDING INDEXES) ON COMMIT {kept} ROWS")
    literal = physical.replace("'", "''")
    found = session.run_own(f"SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = '{literal}'")
    if not found:
        return "SELECT 1"
    return _CREATE.sub("CREATE TEMP TABLE IF NOT EXISTS ", found[0][0], count=1)
