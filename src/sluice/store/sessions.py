"""Which sessions are open on a store, seen from every process: V$SESSION, and what
refuses ``DROP USER`` of a connected user (ORA-01940).

A session is registered while it is open and is gone once it closes -- or once its
process dies without closing it (``kill -9``), with nothing left behind to clean up.
Both backends reuse what the Streams process leases (:mod:`.leases`) rely on: a lock
that lives exactly as long as its holder.

* PostgreSQL: every session has a server connection of its own (``PgSession``), which
  holds a **shared session-level advisory lock** keyed by the store's schema and the
  session's user.  It is taken in the statement that already sets ``sluice.user`` on the
  new connection (:meth:`~.pgconn.PgTarget.connect`: no extra round trip) and given up
  when the session closes (one statement: the server ends a closed connection's backend,
  and its locks, only a moment after the client has gone) or, for a process killed, when
  the server ends the backend.  ``pg_locks`` lists the holders, ``pg_stat_activity`` their
  backend start and application name; the SID is the backend's process id.  A lock key
  is a digest, so the reader names the users it asks about (:func:`pg_open_sessions`).
* SQLite: ``<db>.sessions`` beside the database, in fixed-size slots.  A session takes the
  first slot nobody holds with an open-file-description lock on its first byte (the kind
  FileLeases takes: the kernel drops it with the descriptor, i.e. with the process) and
  writes its user, program, process id and logon time into it; closing blanks the slot
  and unlocks it.  A slot is a session only while someone holds its lock, whatever it
  holds.  The SID is the slot's number + 1.  No database write: opening a session
  commits nothing.

A forked child shares its parent's descriptor, hence its locks: sessions of a parent
killed stay listed while a child forked after they opened lives on.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import socket
import sys
import threading
import time
from typing import Collection

from .lockfiles import digest, ofd_lock, ofd_locked

__all__ = ["OpenSession", "FileSessions", "PROGRAM", "pg_open_sessions", "pg_session_key"]


@dataclasses.dataclass(frozen=True)
class OpenSession:
    """One row of V$SESSION."""

    sid: int
    username: str
    program: str
    logon_time: float      # seconds since the epoch
    active: bool = False   # running a statement now (PostgreSQL's view; SQLite cannot tell)


def _program() -> str:
    """Oracle's V$SESSION.PROGRAM: the client program and its machine."""
    argv0 = sys.argv[0] if getattr(sys, "argv", None) else ""
    name = os.path.basename(argv0) if argv0 and argv0 != "-c" else os.path.basename(sys.executable)
    return f"{name or 'python'}@{socket.gethostname()}"


PROGRAM = _program()


# -- PostgreSQL ---------------------------------------------------------------------

def pg_session_key(schema: str, user: str) -> int:
    """The advisory lock key (a signed bigint) a session of ``user`` holds shared."""
    return digest("sluice-session", schema, user) - (1 << 63)


# a bigint advisory lock shows in pg_locks as its high (classid) and low (objid) halves
_PG_SESSIONS = """
    SELECT k.pid, k.key, a.application_name, extract(epoch FROM a.backend_start), a.state = 'active'
    FROM (SELECT l.pid, ((l.classid::bigint << 32) | l.objid::bigint) AS key FROM pg_locks l
          WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())) k
    LEFT JOIN pg_stat_activity a ON a.pid = k.pid
    WHERE k.key = ANY(%s::bigint[])
    ORDER BY k.pid"""


def pg_open_sessions(raw, schema: str, users: Collection[str]) -> list[OpenSession]:
    """The sessions of ``users`` open on the store in ``schema``, read through the psycopg
    connection ``raw`` (any of the store's)."""
    by_key = {pg_session_key(schema, u): u for u in users}
    if not by_key:
        return []
    rows = raw.execute(_PG_SESSIONS, (list(by_key),)).fetchall()
    return [OpenSession(pid, by_key[key], app or "", float(start or 0.0), bool(active))
            for pid, key, app, start, active in rows]


# -- SQLite ---------------------------------------------------------------------------

_SLOT = 2048   # a user name of 128 characters written as JSON escapes, and the program
_MAGIC = b"SLUICESN"


class FileSessions:
    """The sessions of one SQLite store in ``<db>.sessions`` (this process's: one descriptor
    for all, opened with the store)."""

    def __init__(self, path: str) -> None:
        self.path = path + ".sessions"
        self._mutex = threading.Lock()
        self._mine: set[int] = set()      # the slots this process's sessions hold
        self._fd: int | None = None
        if hasattr(fcntl, "F_OFD_SETLK"):  # Linux; elsewhere no session is listed
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)

    def register(self, user: str) -> int:
        """A new session of ``user``: its SID (0 when sessions are not kept)."""
        record = _MAGIC + json.dumps({"user": user, "program": PROGRAM[:100], "pid": os.getpid(),
                                      "logon": time.time()}).encode()
        record += b"\0"        # the end of the record (JSON holds none): what follows is stale
        with self._mutex:
            if self._fd is None:
                return 0
            slot = 0
            while slot in self._mine or not ofd_lock(self._fd, slot * _SLOT, fcntl.F_WRLCK):
                slot += 1
            try:
                os.pwrite(self._fd, record, slot * _SLOT)
            except BaseException:
                ofd_lock(self._fd, slot * _SLOT, fcntl.F_UNLCK)
                raise
            self._mine.add(slot)
        return slot + 1

    def unregister(self, sid: int) -> None:
        """The session ``sid`` (from :meth:`register`) closed."""
        slot = sid - 1
        with self._mutex:
            if self._fd is None or slot not in self._mine:
                return
            os.pwrite(self._fd, b"\0" * len(_MAGIC), slot * _SLOT)
            ofd_lock(self._fd, slot * _SLOT, fcntl.F_UNLCK)
            self._mine.discard(slot)

    def open_sessions(self, users: Collection[str] | None = None) -> list[OpenSession]:
        """The sessions open now, of every process (of ``users`` only, when given)."""
        if self._fd is None:
            return []
        # a descriptor of its own: its lock tests see every other descriptor's locks,
        # those of this process's sessions too
        fd = os.open(self.path, os.O_RDWR)
        try:
            data = os.pread(fd, os.fstat(fd).st_size, 0)
            out = []
            for slot in range(-(-len(data) // _SLOT)):     # the last slot may be short
                record = data[slot * _SLOT:(slot + 1) * _SLOT]
                if not record.startswith(_MAGIC) or not ofd_locked(fd, slot * _SLOT):
                    continue    # a free slot (blanked, or left by a process that died)
                try:
                    info = json.loads(record[len(_MAGIC):].split(b"\0", 1)[0])
                except ValueError:
                    continue    # being written this very moment
                if users is None or info["user"] in users:
                    out.append(OpenSession(slot + 1, info["user"], info["program"], info["logon"]))
            return out
        finally:
            os.close(fd)

    def close(self) -> None:
        """Every session of this process is gone (the store closes)."""
        with self._mutex:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._mine.clear()
