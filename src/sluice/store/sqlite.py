"""The embedded backend: one SQLite file in WAL mode.

Transactions.  SQLite allows one writer at a time, so a Sluice transaction
does not hold a SQLite write transaction while the application works: its
ON_COMMIT enqueues wait in the session (:mod:`.sqlitesession`) and are inserted,
together with the removal of the messages it dequeued, in one short ``BEGIN
IMMEDIATE`` … COMMIT at commit — atomic and durable as one unit.  Dequeued
messages are held by :class:`~sluice.store.locks.MessageLocks` meanwhile, so
other sessions (threads or processes) skip them.

Waiting.  Sessions of this process are woken through a condition variable the
moment a commit makes messages available; commits by other processes are
noticed by bounded polling (SQLite has no cross-process notification).
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Collection, Iterable, Iterator

from ..errors import DatabaseError, ProgrammingError, ora
from . import namespace, numberscale, sequences, sqlcatalog, sqliteimage, sqlnotify, sqlops
from .base import RELEASE_RECHECK, QueueInfo, QueueTableInfo, Store, TimeEvents
from .dialect import SQLITE
from .locks import TRIGGER_SEQ_BASE, MessageLocks
from .sessionnls import DEFAULT_NLS
from .sessionzone import default_zone, register as register_view_clock
from .sessions import FileSessions, OpenSession
from ..sqlfunctions import hextoraw
from .sqlitefns import register_sqlite_functions
from .sqlitecalls import oracle_call
from .sqlnames import json_value
from .sqlschema import (LEGACY_RECEIVED, RESHAPED_VIEWS, SCHEMA_VERSION, UTC_VIEWS_MARK, catalog_ddl,
                        legacy_received_ddl, quote, table_name, upgrade_queue_table_ddl, view_name)
from .timemgr import TimeManagerThread

if TYPE_CHECKING:
    from .sqlitesession import SqliteSession

# how long a waiting dequeuer may go without looking at the change counter that other
# processes' commits bump: backing off from 2 ms to 50 ms while another process has the
# database open; alone, it sleeps on the condition variable (every RELEASE_RECHECK it
# returns anyway: a process that opened the database meanwhile, or a killed one's messages)
CROSS_PROCESS_POLL = (0.002, 0.05)


# SQLite's primary result codes for what the disk refused, and its read errors among them
_SQLITE_IOERR, _SQLITE_FULL = 10, 13
_SQLITE_READ_ERRORS = (266, 522)       # SQLITE_IOERR_READ, SQLITE_IOERR_SHORT_READ
_DISK_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EIO)


def disk_error(e: BaseException, path: str) -> DatabaseError | None:
    """The Oracle error for a full disk or a failing device under the store's files —
    ORA-01114 (writing; SQLITE_FULL, ENOSPC, EFBIG …) or ORA-01115 (reading) — or None
    when ``e`` is something else."""
    if isinstance(e, sqlite3.Error):
        code = getattr(e, "sqlite_errorcode", None)
        if code is None or code & 0xFF not in (_SQLITE_IOERR, _SQLITE_FULL):
            return None
        return ora(1115 if code in _SQLITE_READ_ERRORS else 1114, path, str(e))
    if isinstance(e, OSError) and e.errno in _DISK_ERRNOS:
        return ora(1114, path, e.strerror)
    return None


_SQLITE_BUSY = 5


def begin_immediate(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``: the file's write lock, waited for up to the connection's busy
    timeout.  :raises: ORA-00054 when another process held it all that time — sqlite3's
    bare "database is locked" reached commits and propagation runs as a Python error."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as e:
        if getattr(e, "sqlite_errorcode", None) != _SQLITE_BUSY:
            raise
        raise ora(54) from None


class _Connection(sqlite3.Connection):
    """A sqlite3 connection that tells the shared SQL (sqlops, sqlcatalog) its dialect, and
    raises a full disk or a failing device as the ORA error :func:`disk_error` gives."""

    dialect = SQLITE
    path = ""
    nls = DEFAULT_NLS       # its session's NLS settings (ALTER SESSION; sqlitefns' functions read them)

    def execute(self, sql: str, params=()) -> sqlite3.Cursor:
        try:
            return super().execute(sql, params)
        except sqlite3.DatabaseError as e:
            raise disk_error(e, self.path) or e from None

    def executemany(self, sql: str, rows) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, rows)
        except sqlite3.DatabaseError as e:
            raise disk_error(e, self.path) or e from None


def _rawtohex(value: str | bytes) -> str:
    """RAWTOHEX of a RAW, or of text (the views' MSG_ID is its hex): Oracle converts text
    to a RAW first (HEXTORAW: ORA-01465 for text that is no hex)."""
    return (hextoraw(value) if isinstance(value, str) else bytes(value)).hex().upper()


def _set_wal(conn: sqlite3.Connection, patience: float = 30.0) -> None:
    """WAL mode.  Connections turning an empty file (a store not yet made) to WAL at once can be
    told "database is locked" at once, without SQLite's busy handler (it would deadlock on the
    lock upgrade): wait and try again, as the busy handler would (seen with three processes
    opening one empty file: tests/store/test_store_image.py)."""
    deadline = time.monotonic() + patience
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _register_functions(conn: sqlite3.Connection) -> None:
    """A few Oracle functions, so the seeds' queries on the views run as printed."""
    conn.create_function("RAWTOHEX", 1, oracle_call(_rawtohex), deterministic=True)
    conn.create_function("HEXTORAW", 1, lambda s: None if s is None else bytes.fromhex(s),
                         deterministic=True)
    conn.create_function("NVL", 2, lambda a, b: b if a is None else a, deterministic=True)
    conn.create_function("JSON_VALUE", 2, json_value, deterministic=True)


def connect_plain(path: str, timeout: float = 30.0) -> sqlite3.Connection:
    """A sqlite3 connection to the store file ``path`` outside any session (a pipeline's
    reader on a Spark executor) on which the catalog views read as on the store's own
    connections: the Oracle functions they call, and their dates in the process's default
    session zone (the views call ``sluice_zone_shift`` / ``sluice_view_date``, which a
    connection without them refuses: "no such function")."""
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, factory=_Connection)
    conn.path = path
    _register_functions(conn)
    register_view_clock(conn, default_zone())
    register_sqlite_functions(conn)
    return conn


def open_sqlite_store(path: str, synchronous: str = "NORMAL", temporary: bool = False) -> "SqliteStore":
    """A :class:`SqliteStore` on ``path``, with what the operating system or SQLite
    refuses turned into Oracle's file errors: ORA-27041 (the file cannot be opened or
    created: missing directory, no permission, a directory, read-only), ORA-01157 (the
    file is there but is not an SQLite database).  A half-opened store lets go of what
    it had opened (its lock file, its service connection)."""
    if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
        raise ora(12154, f"sqlite:///{path}?synchronous={synchronous}: synchronous is OFF, NORMAL, "
                         f"FULL or EXTRA")
    check_sqlite_file(path)
    store = SqliteStore.__new__(SqliteStore)
    try:
        store.__init__(path, synchronous=synchronous, temporary=temporary)
        return store
    except (OSError, sqlite3.Error) as e:
        for name in ("_svc", "locks", "sessions"):
            part = store.__dict__.get(name)
            if part is not None:
                try:
                    part.close()
                except Exception:
                    pass
        if isinstance(e, OSError):
            raise ora(27041, path, e.strerror or str(e)) from None
        if "not a database" in str(e) or "malformed" in str(e):
            raise ora(1157, path, f"not an SQLite database ({e})") from None
        raise ora(27041, path, str(e)) from None


def check_sqlite_file(path: str) -> None:
    """Refuse, before anything is created beside it, a path that is a directory or a
    file that is not an SQLite database."""
    if os.path.isdir(path):
        raise ora(27041, path, "Is a directory")
    try:
        with open(path, "rb") as f:
            header = f.read(16)
    except OSError:
        return   # absent (to be created) or unreadable: opening it says why
    if header and header != b"SQLite format 3\x00":
        raise ora(1157, path, "not an SQLite database")


def _utc_catalog_views(c: sqlite3.Connection) -> list[str]:
    """The catalog's views an older Sluice made with UTC dates (UTC_VIEWS_MARK), which
    catalog_ddl makes again in the session's zone; a user's own views are left alone."""
    ours = {m.group(1) for stmt in catalog_ddl(SQLITE)
            for m in [re.match(r"\s*CREATE VIEW IF NOT EXISTS\s+(\S+)\s+AS\b", stmt)] if m}
    dates, zoned = UTC_VIEWS_MARK
    return [name for name, in c.execute("SELECT name FROM sqlite_master WHERE type = 'view' AND instr(sql, ?) > 0 "
                                         "AND instr(sql, ?) = 0", (dates, zoned)).fetchall() if name in ours]


class SqliteStore(Store):
    """One SQLite database file, shared by every connection of this process."""

    dialect = "sqlite"
    changes_complete = True     # the change count is in the lock file every process bumps

    def __init__(self, path: str, synchronous: str = "NORMAL", temporary: bool = False) -> None:
        default_zone()      # a bad ORA_SDTZ refuses the logon (ORA-01882) before anything is open
        self.path = path
        self.synchronous = synchronous.upper()
        self._temporary = temporary
        self.write_lock = threading.RLock()
        try:
            self.locks = MessageLocks(path)
            self.sessions = FileSessions(path)      # which sessions are open (V$SESSION)
        except OSError as e:
            err = disk_error(e, e.filename or path + ".lck")
            if err is None:
                raise
            raise err from None
        # waiters for the change counter; notify_all only when someone waits (every
        # buffered enqueue signals)
        self._cond_lock = threading.Lock()
        self._cond = threading.Condition(self._cond_lock)
        self._waiting = 0
        self._svc_lock = threading.RLock()
        # a new file is written whole from the catalog's image (sqliteimage); one that exists,
        # or came to meanwhile, is sent the DDL below when it lacks the catalog
        sqliteimage.create(path, durable=self.synchronous != "OFF")
        self._svc = self.connect()
        self._catalog_cache: tuple[int, dict, dict] | None = None
        # the catalog version a DDL transaction commits, announced once it has (transaction)
        self._catalog_dirty: int | None = None
        self._tm: TimeManagerThread | None = None
        self._tm_token = object()
        with self.transaction(self._svc):
            # A store at this schema version has the whole catalog (catalog_ddl and the
            # version row commit together): its ~100 CREATE … IF NOT EXISTS statements,
            # each compiled afresh on this new connection, are not run again
            # (as PgStore._ensure_schema).  A catalog change bumps SCHEMA_VERSION.
            version = self._schema_version()
            if version != SCHEMA_VERSION:
                for stmt in catalog_ddl(SQLITE):
                    self._svc.execute(stmt)
                if version is not None:     # (an empty file's catalog is the current one)
                    self._upgrade(version)
            self.locks.raise_seq_floor(max(
                (self._svc.execute(f"SELECT COALESCE(MAX(SEQ), 0) FROM {table_name(qt)} WHERE SEQ < ?",
                                  (TRIGGER_SEQ_BASE,)).fetchone()[0]
                 for qt in sqlcatalog.queue_tables(self._svc)), default=0))
        self.check_catalog()

    def _schema_version(self) -> int | None:
        """The store's schema version (None: a new file, no catalog yet)."""
        c = self._svc
        if c.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'SLUICE_META'"
                     ).fetchone() is None:
            return None
        row = c.execute("SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'").fetchone()
        return None if row is None else int(row[0])

    def _upgrade(self, version: int) -> None:
        """Bring a store made by an older Sluice (its schema ``version``) to the current
        schema version."""
        c = self._svc
        if version >= SCHEMA_VERSION:
            return
        for view in RESHAPED_VIEWS:   # made again by catalog_ddl's CREATE VIEW IF NOT EXISTS
            c.execute(f"DROP VIEW IF EXISTS {view}")
        for view in _utc_catalog_views(c):   # (schema version 24)
            c.execute(f"DROP VIEW {quote(view)}")
        for stmt in catalog_ddl(SQLITE):
            c.execute(stmt)
        for qt in sqlcatalog.queue_tables(c):
            cols = {r[1].upper() for r in c.execute(f"PRAGMA table_info({table_name(qt)})")}
            for stmt in upgrade_queue_table_ddl(qt, cols, SQLITE):
                c.execute(stmt)
        sqlcatalog.refresh_queue_depth(c)   # schema version 8: the queue tables were not in it
        if c.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                     (LEGACY_RECEIVED,)).fetchone() is not None:
            for stmt in legacy_received_ddl():
                c.execute(stmt)
        c.execute("UPDATE SLUICE_META SET VALUE = ? WHERE KEY = 'schema_version'", (str(SCHEMA_VERSION),))

    # -- connections and transactions ---------------------------------------
    def connect(self) -> sqlite3.Connection:
        zone = default_zone()     # (ORA-01882 for a bad ORA_SDTZ, before anything is opened)
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=60.0, cached_statements=512, factory=_Connection)
        _set_wal(conn)
        conn.execute(f"PRAGMA synchronous={self.synchronous}")
        conn.execute("PRAGMA case_sensitive_like=ON")  # Oracle LIKE is case-sensitive
        # a user's foreign keys hold, as Oracle's (the catalog's one, AQ_QUEUES -> AQ_QUEUE_TABLES,
        # holds already: its shared SQL runs on PostgreSQL, which enforces it); table DDL turns
        # them off for its transaction (tableddl._transaction)
        conn.execute("PRAGMA foreign_keys=ON")
        _register_functions(conn)
        register_view_clock(conn, zone)   # the views' dates in the session's zone
        register_sqlite_functions(conn)   # what compiled dequeue conditions call
        sequences.register(conn, self)    # a user's SEQ.NEXTVAL / SEQ.CURRVAL
        numberscale.register(conn)        # a NUMBER(p, s) column's values rounded (DML)
        conn.allocate_seqs = self.locks.allocate_seqs   # see Dialect.seq_from_store
        conn.path = self.path
        return conn

    @contextmanager
    def transaction(self, conn: sqlite3.Connection) -> Iterator[None]:
        """One write transaction; threads of this process queue on a mutex rather
        than on SQLite's sleeping busy handler."""
        with self.write_lock:
            begin_immediate(conn)
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                self._catalog_dirty = None
                raise
            if self._catalog_dirty is not None:
                version, self._catalog_dirty = self._catalog_dirty, None
                self.locks.bump_catalog_version(version)

    def begin(self, conn: sqlite3.Connection) -> None:
        """Start a write transaction (the hot path's form of :meth:`transaction`)."""
        self.write_lock.acquire()
        try:
            begin_immediate(conn)
        except BaseException:
            self.write_lock.release()
            raise

    def end(self, conn: sqlite3.Connection, ok: bool) -> None:
        """COMMIT (``ok``) or ROLLBACK the transaction :meth:`begin` started."""
        try:
            if ok:
                try:
                    conn.execute("COMMIT")
                except BaseException:
                    _rollback(conn)      # a COMMIT that failed may leave it open
                    raise
            else:
                _rollback(conn)
        finally:
            self.write_lock.release()

    def session(self, user: str) -> "SqliteSession":
        from .sqlitesession import SqliteSession
        return SqliteSession(self, user)

    def open_sessions(self, users: Collection[str]) -> list[OpenSession]:
        return self.sessions.open_sessions(users)

    def close(self) -> None:
        self._run_close_hooks()
        if self._tm is not None:
            self._tm.stop()
            self._tm = None
        with self._svc_lock:
            self._svc.close()
        self.locks.close()
        self.sessions.close()
        if self._temporary:
            for suffix in ("", "-wal", "-shm", ".lck", ".leases", ".sessions", *sequences.SIDE_FILES):
                try:
                    os.unlink(self.path + suffix)
                except FileNotFoundError:
                    pass

    # -- change notification ------------------------------------------------
    def notify(self) -> None:
        with self._cond_lock:
            self.locks.bump_change_count()
            if self._waiting:
                self._cond.notify_all()

    def wake_waiters(self) -> None:
        self.notify()

    def change_counter(self) -> int:
        return self.locks.change_count()

    def wait_for_messages(self, since: int, timeout: float) -> None:
        timeout = min(timeout, RELEASE_RECHECK)
        deadline = time.monotonic() + timeout
        if not self.locks.others_present():
            with self._cond:
                if self.locks.change_count() == since:
                    self._wait(timeout)
            return
        step, cap = CROSS_PROCESS_POLL
        with self._cond:
            while self.locks.change_count() == since:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._wait(min(remaining, step))
                step = min(step * 2, cap)

    def _wait(self, timeout: float) -> None:
        self._waiting += 1
        try:
            self._cond.wait(timeout)
        finally:
            self._waiting -= 1

    def time_event_hint(self, when: float | None) -> None:
        """A commit created a time event at ``when``: wake the time manager if it is earlier
        than what the time manager is sleeping towards."""
        if when is not None and self._tm is not None:
            self._tm.hint(when)

    # -- catalog ------------------------------------------------------------
    def _bump_catalog(self) -> None:
        """Called inside a DDL transaction; the shared counter is bumped once it commits."""
        sqlcatalog.bump_version(self._svc)
        self._catalog_dirty = sqlcatalog.version(self._svc)

    def _db_catalog_version(self) -> int:
        with self._svc_lock:
            return sqlcatalog.version(self._svc)

    def default_global_name(self) -> str:
        """The file's name without its extension (``dbs1.db`` -> ``DBS1``)."""
        return os.path.splitext(os.path.basename(self.path))[0].upper()

    def catalog_version(self) -> int:
        # the shared-memory counter, not a query: this is read on every enqueue and dequeue
        return self.locks.catalog_version()

    def check_catalog(self) -> None:
        """Backstop for a process that died between a DDL commit and its counter bump
        (run on opening and by each time manager pass): the catalog in the database is at
        a version no bump announced — bump the counter for it.  A change its process
        announced, this one's or another's, is not announced again: each bump makes every
        process's caches reload, and a pipelined propagation read its next batch from the
        queue's start (job._hint: the routes may have changed).  Two announcements racing
        (a commit's and this, or two commits') at worst cost one bump more."""
        v = self._db_catalog_version()
        if v != self.locks.catalog_announced():
            self.locks.bump_catalog_version(v)

    @contextmanager
    def _ddl(self) -> Iterator[sqlite3.Connection]:
        """One catalog change: its own write transaction, committed on return."""
        with self._svc_lock, self.transaction(self._svc):
            yield self._svc
            self._bump_catalog()

    def create_queue_table(self, table: QueueTableInfo, exception_queue: QueueInfo | None,
                           queues: tuple[QueueInfo, ...] = ()) -> QueueTableInfo:
        with self._ddl() as c:
            namespace.check(self, table.owner, table.name, (namespace.QUEUE_TABLE,), c)   # (a table …)
            return sqlcatalog.create_queue_table(c, table, exception_queue, queues)

    def drop_queue_table(self, owner: str, name: str) -> None:
        table = self._queue_table_row(owner, name)
        # a session holding one of its messages (dequeued, not yet committed) could then
        # neither commit, roll back nor close: refused as PostgreSQL's table lock refuses it
        if self.locks.table_in_use(table.qt_id):
            raise ora(54)
        with self._ddl() as c:
            sqlcatalog.drop_queue_table(c, table)

    def queue_table_in_use(self, owner: str, name: str) -> bool:
        return self.locks.table_in_use(self._queue_table_row(owner, name).qt_id)

    def update_queue_table(self, table: QueueTableInfo) -> None:
        with self._ddl() as c:
            sqlcatalog.update_queue_table(c, table)

    def _queue_table_row(self, owner: str, name: str) -> QueueTableInfo:
        for qt in self.queue_tables():
            if qt.owner == owner and qt.name == name:
                return qt
        raise ora(24002, f"{owner}.{name}")

    def queue_tables(self) -> list[QueueTableInfo]:
        with self._svc_lock:
            return sqlcatalog.queue_tables(self._svc)

    def create_queue(self, queue: QueueInfo, noting: tuple[str, str, str, dict] | None = None) -> QueueInfo:
        with self._ddl() as c:
            if noting is None:
                sqlcatalog.insert_queue(c, queue)
            else:
                sqlcatalog.insert_queue_noting(c, queue, *noting)
        return queue

    def update_queue(self, queue: QueueInfo) -> None:
        with self._ddl() as c:
            sqlcatalog.update_queue(c, queue)

    def drop_queue(self, owner: str, name: str) -> None:
        # refused while a session holds one of its messages, as PostgreSQL's row locks
        # refuse the DELETE (the session's commit would consume a message no longer there)
        if self.queue_in_use(owner, name):
            raise ora(54)
        with self._ddl() as c:
            q = self.find_queue(owner, name)
            if q is None:
                raise ora(24010, f"{owner}.{name}")
            sqlcatalog.drop_queue(c, q)

    def queue_in_use(self, owner: str, name: str) -> bool:
        q = self.find_queue(owner, name)
        if q is None:
            raise ora(24010, f"{owner}.{name}")
        qt_id = q.table.qt_id
        with self._svc_lock:
            seqs = [r[0] for r in self._svc.execute(
                f"SELECT SEQ FROM {table_name(q.table)} WHERE Q_NAME = ?", (q.name,))]
        return any(self.locks.is_locked_by_other(qt_id, seq, None) for seq in seqs)

    def queues(self) -> list[QueueInfo]:
        with self._svc_lock:
            return sqlcatalog.queues(self._svc, {qt.qt_id: qt for qt in sqlcatalog.queue_tables(self._svc)})

    def find_queue(self, owner: str, name: str) -> QueueInfo | None:
        """Catalog lookup cached by catalog version (used by the message SQL)."""
        version = self.catalog_version()
        cache = self._catalog_cache
        if cache is None or cache[0] != version:
            qs = self.queues()
            cache = (version, {(q.owner, q.name): q for q in qs}, {})
            self._catalog_cache = cache
        return cache[1].get((owner, name))

    def put_catalog_object(self, kind: str, owner: str, name: str, spec: dict, replace: bool) -> None:
        with self._ddl() as c:
            sqlcatalog.put_object(c, kind, owner, name, spec, replace)

    def merge_catalog_object(self, kind: str, owner: str, name: str, change, create: bool) -> dict | None:
        with self._ddl() as c:
            return sqlcatalog.merge_object(c, kind, owner, name, change, create)

    def drop_catalog_object(self, kind: str, owner: str, name: str) -> bool:
        with self._ddl() as c:
            return sqlcatalog.drop_object(c, kind, owner, name)

    def catalog_objects(self, kind: str) -> list[tuple[str, str, dict]]:
        with self._svc_lock:
            return sqlcatalog.objects(self._svc, kind)

    def catalog_objects_of(self, kinds: tuple[str, ...]) -> dict[str, list[tuple[str, str, dict]]]:
        with self._svc_lock:
            return sqlcatalog.objects_of(self._svc, kinds)

    # -- messages outside sessions ------------------------------------------
    def count_messages(self, queue: QueueInfo, states: Iterable[int] | None = None) -> int:
        with self._svc_lock:
            return sqlops.count(self._svc, queue, states)

    def write_notifications(self, queue: str, records: list) -> None:
        with self._svc_lock, self.transaction(self._svc):
            sqlnotify.write(self._svc, queue, records)

    def claim_notifications(self, reg_ids: list[str], lease: float, limit: int) -> list[tuple]:
        with self._svc_lock, self.transaction(self._svc):
            return sqlnotify.claim(self._svc, reg_ids, time.time(), lease, limit)

    def finish_notifications(self, ids: list[int]) -> None:
        with self._svc_lock, self.transaction(self._svc):
            sqlnotify.finish(self._svc, ids)

    def release_notifications(self, ids: list[int], at: float) -> None:
        with self._svc_lock, self.transaction(self._svc):
            sqlnotify.release(self._svc, ids, at)

    def drop_registration_notifications(self, reg_id: str) -> None:
        with self._svc_lock, self.transaction(self._svc):
            sqlnotify.drop_registration(self._svc, reg_id)

    def drop_consumer_messages(self, queue: QueueInfo, name: str | None, address: str | None,
                               protocol: int) -> int:
        with self.locks.consuming(), self._svc_lock, self.transaction(self._svc):
            return sqlops.drop_consumer_messages(self._svc, queue, name, address, protocol)

    def purge_messages(self, table: QueueTableInfo, condition: str | None) -> int:
        where = f"WHERE {condition}" if condition and condition.strip() else ""
        sql = f"SELECT qtview.LOCAL_ORDER_NO FROM {view_name(table)} qtview {where}"
        token = self._tm_token
        held: list[tuple[int, int]] = []
        purged = 0
        try:
            with self.locks.consuming(), self._svc_lock, self.transaction(self._svc):
                try:
                    seqs = [r[0] for r in self._svc.execute(sql)]
                except sqlite3.OperationalError as e:
                    raise ProgrammingError(f"ORA-00904: invalid purge condition: {e}", 904) from None
                for seq in seqs:
                    if not self.locks.try_lock(table.qt_id, seq, token):
                        continue  # held by a session: not purged
                    held.append((table.qt_id, seq))
                    purged += self._svc.execute(f"DELETE FROM {table_name(table)} WHERE SEQ = ?",
                                                (seq,)).rowcount
        finally:
            # released only after the commit, so no dequeuer can take a purged message
            self.locks.unlock_many(held, token)
        return purged

    def run_time_manager(self, now: float) -> TimeEvents:
        self.check_catalog()
        ev = TimeEvents()
        token = self._tm_token
        with self._svc_lock:
            c = self._svc
            queues = {(q.name, q.table.qt_id): q for q in self.queues()}
            for qt in self.queue_tables():
                due = sqlops.due_records(c, qt, now)
                if due:
                    held: list[tuple[int, int]] = []
                    try:
                        with self.locks.consuming(), self.transaction(c):
                            self._time_events(c, qt, due, queues, now, ev, held)
                    finally:
                        # expired messages stay locked until their move is committed
                        self.locks.unlock_many(held, token)
                nd = sqlops.next_due(c, qt)
                if nd is not None and nd <= now:
                    nd = now + 0.5  # locked or over the batch limit: look again soon
                if nd is not None and (ev.next_due is None or nd < ev.next_due):
                    ev.next_due = nd
        if ev.promoted or ev.expired:
            self.notify()
        return ev

    def _time_events(self, c, qt: QueueTableInfo, due: list, queues: dict, now: float,
                     ev: TimeEvents, held: list) -> None:
        def try_lock(seq: int) -> bool:  # expired messages stay locked until their move commits
            if not self.locks.try_lock(qt.qt_id, seq, self._tm_token):
                return False
            held.append((qt.qt_id, seq))
            return True
        sqlops.apply_time_events(c, qt, due, queues, now, ev, try_lock, self.find_queue)

    def start_time_manager(self) -> None:
        with self._svc_lock:
            if self._tm is None:
                self._tm = TimeManagerThread(self, (sqlite3.Error, DatabaseError))
                self._tm.start()


def _rollback(conn: sqlite3.Connection) -> None:
    """End a failed write transaction, keeping the error that made it fail.  SQLite may
    have rolled it back already (a full disk, an I/O error), or not (a COMMIT that failed
    leaves it open, holding the write lock)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except (sqlite3.Error, DatabaseError):
            pass       # rolled back by SQLite meanwhile; the error in flight is the one to see


__all__ = ["SqliteStore", "connect_plain", "quote"]
