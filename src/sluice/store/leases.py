"""Leases: which host runs a Streams process, exactly one across hosts and machines.

A lease is an exclusive lock named by ``(kind, process name)`` that lives exactly as long
as the host holding it: one :class:`Leases` per host, acquired without waiting
(:meth:`Leases.acquire`), released by the host or by its death.

* PostgreSQL: a **session-level advisory lock** (``pg_try_advisory_lock``) taken on a
  connection of the host's own, used for nothing else.  A host killed with ``kill -9``
  closes its sockets with it; the server ends the session and its advisory locks at
  once, so another host acquires the lease at its next attempt.  A machine that dies
  or drops off the network (nobody left to close its sockets) loses it within about ten
  seconds: TCP keepalives and a user timeout on that session, at both ends.  Several
  machines share one PostgreSQL store, hence one lock space: the key is a 64-bit digest
  of the store's schema, the kind and the name.
* SQLite: an **open-file-description lock** (``F_OFD_SETLK``) on one byte of
  ``<db>.leases`` beside the database, at an offset that digests the kind and the name.
  Unlike the POSIX record locks of :mod:`.locks` (owned by the *process*, so two hosts in
  one process would both hold them) an OFD lock belongs to the descriptor, so two hosts
  of one process exclude each other too; the kernel drops it when the descriptor goes,
  i.e. when the host closes or its process dies.  An SQLite store is a local file, so its
  hosts share one machine (as its other processes do: the message locks beside it too).
"""

from __future__ import annotations

import abc
import fcntl
import os
import threading
from typing import Any

import psycopg

from ..errors import DatabaseError, not_supported, ora
from .lockfiles import digest, ofd_lock
from .pgconn import PgTarget, is_disconnect, translate

__all__ = ["Leases", "open_leases"]

_OFFSET_BITS = 62


class Leases(abc.ABC):
    """The leases of one host: :meth:`acquire`, :meth:`release`, :meth:`alive`, :meth:`close`."""

    @abc.abstractmethod
    def acquire(self, kind: str, name: str) -> bool:
        """Take the lease of process ``name`` of ``kind`` if nobody holds it (no waiting)."""

    @abc.abstractmethod
    def release(self, kind: str, name: str) -> None:
        """Give the lease up (a no-op unless held)."""

    def alive(self) -> bool:
        """False once the leases may have been lost (PostgreSQL: the lease connection is
        gone); the host must then stop what it runs and :meth:`reopen`."""
        return True

    def reopen(self) -> None:
        """Start again with no lease held (after :meth:`alive` said False); only leases
        that can be lost while their host lives need it."""

    @abc.abstractmethod
    def close(self) -> None:
        """Give every lease up."""


# A host whose machine dies (no process left to close its sockets) or whose network goes:
# the server ends its lease session once the peer stops answering keepalives (5 + 3 x 2 s)
# or acknowledging what it sends (10 s), and the host itself finds the session dead within
# the same bound instead of TCP's default minutes.
_SERVER_KEEPALIVE = ("SET tcp_keepalives_idle = 5", "SET tcp_keepalives_interval = 2",
                     "SET tcp_keepalives_count = 3", "SET tcp_user_timeout = 10000")
_CLIENT_KEEPALIVE = {"keepalives": 1, "keepalives_idle": 5, "keepalives_interval": 2,
                     "keepalives_count": 3, "tcp_user_timeout": 10000}


class PgLeases(Leases):
    """Advisory locks on a dedicated PostgreSQL session."""

    def __init__(self, target: PgTarget) -> None:
        self.target = target
        self._mutex = threading.Lock()
        self._conn: psycopg.Connection | None = self._open()
        self._held: set[tuple[str, str]] = set()

    def _open(self) -> psycopg.Connection:
        try:
            conn = psycopg.connect(self.target.conninfo, autocommit=True, **_CLIENT_KEEPALIVE)
        except psycopg.Error as e:
            raise translate(e, self.target) from None
        try:
            for setting in _SERVER_KEEPALIVE:
                conn.execute(setting)
        except psycopg.Error as e:
            conn.close()
            raise translate(e, self.target) from None
        return conn

    def _key(self, kind: str, name: str) -> int:
        return digest("sluice-lease", self.target.schema, kind, name) - (1 << 63)   # a signed bigint

    def _run(self, sql: str, key: int) -> Any:
        with self._mutex:
            if self._conn is None:
                raise ora(3113, "the host's lease session is closed")
            try:
                return self._conn.execute(sql, (key,)).fetchone()[0]
            except psycopg.Error as e:
                raise translate(e, self.target) from None

    def acquire(self, kind: str, name: str) -> bool:
        if (kind, name) in self._held:   # advisory locks stack: one release must free it
            return True
        got = bool(self._run("SELECT pg_try_advisory_lock(%s)", self._key(kind, name)))
        if got:
            self._held.add((kind, name))
        return got

    def release(self, kind: str, name: str) -> None:
        if (kind, name) in self._held:
            self._held.discard((kind, name))
            try:
                self._run("SELECT pg_advisory_unlock(%s)", self._key(kind, name))
            except DatabaseError:
                pass   # the session is gone, and the lock with it

    def alive(self) -> bool:
        with self._mutex:
            if self._conn is None:
                return False
            try:
                self._conn.execute("SELECT 1")
                return True
            except psycopg.Error as e:
                if not is_disconnect(e):
                    raise translate(e, self.target) from None
                return False

    def reopen(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
            self._conn = None
            self._held.clear()
            self._conn = self._open()

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()     # ends the session: every lease it held goes with it
                self._conn = None
            self._held.clear()


class FileLeases(Leases):
    """OFD locks on one byte each of ``<db>.leases``."""

    def __init__(self, path: str) -> None:
        if not hasattr(fcntl, "F_OFD_SETLK"):
            raise not_supported("Streams process leases on SQLite without open-file-description "
                                "locks (F_OFD_SETLK: Linux)")
        self.path = path + ".leases"
        self._fd: int | None = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        self._mutex = threading.Lock()
        self._held: set[tuple[str, str]] = set()

    @staticmethod
    def _offset(kind: str, name: str) -> int:
        return digest("sluice-lease", kind, name) >> (64 - _OFFSET_BITS)

    def _lock(self, kind: str, name: str, lock_type: int) -> bool:
        with self._mutex:
            return self._fd is not None and ofd_lock(self._fd, self._offset(kind, name), lock_type)

    def acquire(self, kind: str, name: str) -> bool:
        got = self._lock(kind, name, fcntl.F_WRLCK)
        if got:
            self._held.add((kind, name))
        return got

    def release(self, kind: str, name: str) -> None:
        if (kind, name) in self._held:
            self._held.discard((kind, name))
            self._lock(kind, name, fcntl.F_UNLCK)

    def close(self) -> None:
        with self._mutex:
            if self._fd is not None:
                os.close(self._fd)       # the kernel drops every lock of the descriptor
                self._fd = None
            self._held.clear()


def open_leases(store: Any) -> Leases:
    """The leases of a new host on ``store`` (a :class:`~.base.Store`)."""
    if store.dialect == "postgresql":
        return PgLeases(store.target)
    return FileLeases(store.path)
