"""Backends.  :func:`open_store` turns a DSN into the process's one Store for it."""

from __future__ import annotations

import os
import re
import tempfile
import threading
from urllib.parse import parse_qs

from ..errors import InterfaceError, ora
from . import reaper
from .base import Store

_stores: dict[str, tuple[Store, int]] = {}
_lock = threading.Lock()
_reaper = reaper.Reaper(_lock, lambda: not _stores)


def _sqlite_path(dsn: str) -> tuple[str | None, dict[str, str]]:
    rest = dsn[len("sqlite://"):]
    path, _, query = rest.partition("?")
    params = {k: v[-1] for k, v in parse_qs(query).items()}
    if path.startswith("/"):
        path = path[1:]          # sqlite:///rel.db -> rel.db ; sqlite:////abs.db -> /abs.db
    if path in ("", ":memory:"):
        return None, params
    return os.path.abspath(path), params


def sqlite_file(dsn: str) -> str | None:
    """The absolute path of a ``sqlite:`` DSN's database file (None: a temporary one), for
    readers that open the file themselves (the Spark engine's executors)."""
    return _sqlite_path(dsn)[0]


def check_store_exists(dsn: str) -> None:
    """For commands that only read a store (or use its queues): refuse a DSN where no store
    is, rather than make an empty one as :func:`open_store` does.
    :raises: ORA-27041 for a missing SQLite file; ORA-12154 for a PostgreSQL schema that is
        not there; ORA-12541 when the server is not reachable."""
    if not isinstance(dsn, str) or "\x00" in dsn:
        return                          # open_store says what is wrong with it
    if dsn.startswith("sqlite:"):
        path = _sqlite_path(dsn)[0]
        if path is not None and not os.path.exists(path):
            raise ora(27041, path, "No such file or directory (sluice init makes a store)")
    elif dsn.startswith(("postgresql:", "postgres:")):
        from .pgconn import parse_dsn
        target = parse_dsn(dsn)
        with target.connect() as raw:   # the schema is not made here: only its presence read
            found = raw.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (target.schema,)).fetchone()
        if found is None:
            raise ora(12154, f"{target.display}?schema={target.schema}: no Sluice store in that schema "
                             f"(sluice init makes one)")


def open_store(dsn: str) -> Store:
    """The shared Store for ``dsn`` (reference counted; release with :func:`release_store`).

    ``sqlite:///file.db`` (relative), ``sqlite:////abs/file.db``, ``sqlite://``
    (a temporary database removed when the last connection closes).  Query
    parameter ``synchronous`` (NORMAL, FULL, OFF) sets SQLite's durability.

    ``postgresql://user@host:port/database?schema=name``: a schema (default
    ``sluice``) of a PostgreSQL database, created on first use; other query
    parameters go to libpq.  An unreachable server raises ORA-12541.
    """
    if not isinstance(dsn, str):
        raise InterfaceError("dsn must be a string")
    if "\x00" in dsn:   # no file name or connect string holds one (os, libpq: ValueError)
        raise ora(12154, f"{_shown(dsn)!r}: a DSN holds no NUL character")
    if dsn.startswith("sqlite:"):
        path, params = _sqlite_path(dsn)
        with _lock:
            if path is not None and path in _stores:
                store, n = _stores[path]
                _stores[path] = (store, n + 1)
                return store
            from .sqlite import open_sqlite_store
            temporary = path is None
            if temporary:
                fd, path = tempfile.mkstemp(prefix="sluice-", suffix=".db")
                os.close(fd)
                os.unlink(path)
            store = open_sqlite_store(path, synchronous=params.get("synchronous", "NORMAL"),
                                      temporary=temporary)
            _stores[path] = (store, 1)
            _reaper.ensure_running()
            return store
    if dsn.startswith(("postgresql:", "postgres:")):
        from .pgconn import parse_dsn
        target = parse_dsn(dsn)
        key = f"{target.conninfo}#{target.schema}"
        with _lock:
            if key in _stores:
                store, n = _stores[key]
                _stores[key] = (store, n + 1)
                return store
            from .postgres import PgStore
            store = PgStore(target)
            _stores[key] = (store, 1)
            _reaper.ensure_running()
            return store
    raise ora(12154, f"{_shown(dsn)} (a Sluice DSN is sqlite:///file.db or postgresql://…)")


def _shown(dsn: str) -> str:
    return re.sub(r"(//[^/:@]*):[^@/]*@", r"\1@", dsn)   # no password in the message


def release_store(store: Store) -> None:
    """One user of ``store`` is done; the last one closes it (and its threads).
    Never call this from a finaliser: post the close to :mod:`.reaper` instead."""
    with _lock:
        for key, (s, n) in list(_stores.items()):
            if s is store:
                if n > 1:
                    _stores[key] = (s, n - 1)
                    return
                del _stores[key]
                break
        last = not _stores
    try:
        store.close()
    finally:
        if last:
            reaper.wake()   # the reaper thread may end now
