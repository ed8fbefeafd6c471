"""The embedded backend: one SQLite file in WAL mode.

Transactions.  SQLite allows one writer at a time, so a Sluice transaction
does not hold a SQLite write transaction while the application works: its
ON_COMMIT enqueues wait in the session and are inserted, together with the
removal of the messages it dequeued, in one short ``BEGIN IMMEDIATE`` … COMMIT
at :meth:`SqliteSession.commit` — atomic and durable as one unit.  Dequeued
messages are held by :class:`~sluice.store.locks.MessageLocks` meanwhile, so
other sessions (threads or processes) skip them.

Waiting.  Sessions of this process are woken through a condition variable the
moment a commit makes messages available; commits by other processes are
noticed by bounded polling (SQLite has no cross-process notification).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

from .. import constants as C
from ..errors import ProgrammingError, ora
from . import sqlops
from .base import (new_txn_id, DequeueInfo, MessageRecord, QueueInfo, QueueTableInfo, Selector, Store,
                   StoreSession, TimeEvents)
from .locks import MessageLocks
from ..rules.pycompile import like_regex
from .sqlnames import rewrite
from .sqlschema import (CATALOG_DDL, USER_VIEWS, drop_queue_table_ddl, quote, queue_table_ddl,
                        table_name, view_name)

# how long a waiting dequeuer may go without looking at the change counter that other
# processes' commits bump: backing off from 2 ms to 50 ms while another process has the
# database open; alone, every second (to notice a process that opens it later)
CROSS_PROCESS_POLL = (0.002, 0.05)
# temporary sequence numbers of a session's uncommitted enqueues (above any real one)
_PENDING_SEQ = 1 << 62
ALONE_RECHECK = 1.0
_EPOCH_TO_TEXT = "strftime('%Y-%m-%d %H:%M:%f', {x}, 'unixepoch')"


def _register_functions(conn: sqlite3.Connection) -> None:
    """A few Oracle functions, so the seeds' queries on the views run as printed."""
    conn.create_function("RAWTOHEX", 1, lambda b: None if b is None else bytes(b).hex().upper(),
                         deterministic=True)
    conn.create_function("HEXTORAW", 1, lambda s: None if s is None else bytes.fromhex(s),
                         deterministic=True)
    conn.create_function("NVL", 2, lambda a, b: b if a is None else a, deterministic=True)


class SqliteStore(Store):
    """One SQLite database file, shared by every connection of this process."""

    dialect = "sqlite"

    def __init__(self, path: str, synchronous: str = "NORMAL", temporary: bool = False) -> None:
        self.path = path
        self.synchronous = synchronous.upper()
        self._temporary = temporary
        self.write_lock = threading.RLock()
        self.locks = MessageLocks(path)
        self._cond = threading.Condition()
        self._svc_lock = threading.RLock()
        self._svc = self.connect()
        self._catalog_cache: tuple[int, dict, dict] | None = None
        self._catalog_dirty = False
        self._last_db_catalog = -1
        self._tm: _TimeManagerThread | None = None
        self._tm_token = object()
        with self.transaction(self._svc):
            for stmt in CATALOG_DDL:
                self._svc.execute(stmt)
        self.check_catalog()

    # -- connections and transactions ---------------------------------------
    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                               timeout=60.0, cached_statements=512)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self.synchronous}")
        conn.execute("PRAGMA case_sensitive_like=ON")  # Oracle LIKE is case-sensitive
        _register_functions(conn)
        return conn

    @contextmanager
    def transaction(self, conn: sqlite3.Connection) -> Iterator[None]:
        """One write transaction; threads of this process queue on a mutex rather
        than on SQLite's sleeping busy handler."""
        with self.write_lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                conn.execute("ROLLBACK")
                self._catalog_dirty = False
                raise
            conn.execute("COMMIT")
            if self._catalog_dirty:
                self._catalog_dirty = False
                self.locks.bump_catalog_version()

    def begin(self, conn: sqlite3.Connection) -> None:
        """Start a write transaction (the hot path's form of :meth:`transaction`)."""
        self.write_lock.acquire()
        try:
            conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.write_lock.release()
            raise

    def end(self, conn: sqlite3.Connection, ok: bool) -> None:
        """COMMIT (``ok``) or ROLLBACK the transaction :meth:`begin` started."""
        try:
            conn.execute("COMMIT" if ok else "ROLLBACK")
        finally:
            self.write_lock.release()

    def session(self, user: str) -> "SqliteSession":
        return SqliteSession(self, user)

    def close(self) -> None:
        if self._tm is not None:
            self._tm.stop()
            self._tm = None
        with self._svc_lock:
            self._svc.close()
        self.locks.close()
        if self._temporary:
            for suffix in ("", "-wal", "-shm", ".lck"):
                try:
                    os.unlink(self.path + suffix)
                except FileNotFoundError:
                    pass

    # -- change notification ------------------------------------------------
    def notify(self) -> None:
        with self._cond:
            self.locks.bump_change_count()
            self._cond.notify_all()

    def change_counter(self) -> int:
        return self.locks.change_count()

    def wait_for_messages(self, since: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        if not self.locks.others_present():
            with self._cond:
                if self.locks.change_count() == since:
                    self._cond.wait(min(timeout, ALONE_RECHECK))
            return
        step, cap = CROSS_PROCESS_POLL
        with self._cond:
            while self.locks.change_count() == since:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                self._cond.wait(min(remaining, step))
                step = min(step * 2, cap)

    def time_event_hint(self, when: float | None) -> None:
        """A commit created a time event at ``when``: wake the time manager if it is earlier
        than what the time manager is sleeping towards."""
        if when is not None and self._tm is not None:
            self._tm.hint(when)

    # -- catalog ------------------------------------------------------------
    def _bump_catalog(self) -> None:
        """Called inside a DDL transaction; the shared counter is bumped once it commits."""
        self._svc.execute("UPDATE SLUICE_META SET VALUE = CAST(VALUE AS INTEGER) + 1 "
                          "WHERE KEY = 'catalog_version'")
        self._catalog_dirty = True

    def _db_catalog_version(self) -> int:
        with self._svc_lock:
            return int(self._svc.execute(
                "SELECT VALUE FROM SLUICE_META WHERE KEY = 'catalog_version'").fetchone()[0])

    def catalog_version(self) -> int:
        # the shared-memory counter, not a query: this is read on every enqueue and dequeue
        return self.locks.catalog_version()

    def check_catalog(self) -> None:
        """Backstop for a process that died between a DDL commit and its counter bump:
        if the catalog in the database moved without the counter, bump it."""
        v = self._db_catalog_version()
        if v != self._last_db_catalog:
            self._last_db_catalog = v
            self.locks.bump_catalog_version()

    def create_queue_table(self, table: QueueTableInfo, exception_queue: QueueInfo) -> QueueTableInfo:
        payload_sql = "BLOB" if table.payload_type == "RAW" else "TEXT"
        with self._svc_lock, self.transaction(self._svc):
            c = self._svc
            if c.execute("SELECT 1 FROM AQ_QUEUE_TABLES WHERE OWNER = ? AND NAME = ?",
                         (table.owner, table.name)).fetchone():
                raise ora(24001, table.qualified)
            cur = c.execute(
                "INSERT INTO AQ_QUEUE_TABLES (OWNER, NAME, PAYLOAD_TYPE, SORT_LIST, MULTIPLE_CONSUMERS,"
                " MESSAGE_GROUPING, USER_COMMENT, COMPATIBLE, SECURE, PRIMARY_INSTANCE,"
                " SECONDARY_INSTANCE, CREATED) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (table.owner, table.name, table.payload_type, ",".join(table.sort_list),
                 int(table.multiple_consumers), table.message_grouping, table.comment,
                 table.compatible, int(table.secure), table.primary_instance,
                 table.secondary_instance, time.time()))
            table.qt_id = cur.lastrowid
            for stmt in queue_table_ddl(table, payload_sql, _EPOCH_TO_TEXT):
                c.execute(stmt)
            exception_queue.table = table
            self._insert_queue(exception_queue)
            self._bump_catalog()
        return table

    def drop_queue_table(self, owner: str, name: str) -> None:
        with self._svc_lock, self.transaction(self._svc):
            qt = self._queue_table_row(owner, name)
            for stmt in drop_queue_table_ddl(qt):
                self._svc.execute(stmt)
            self._svc.execute("DELETE FROM AQ_QUEUES WHERE QT_ID = ?", (qt.qt_id,))
            self._svc.execute("DELETE FROM AQ_QUEUE_TABLES WHERE QT_ID = ?", (qt.qt_id,))
            self._bump_catalog()

    def update_queue_table(self, table: QueueTableInfo) -> None:
        with self._svc_lock, self.transaction(self._svc):
            self._svc.execute(
                "UPDATE AQ_QUEUE_TABLES SET USER_COMMENT = ?, PRIMARY_INSTANCE = ?, "
                "SECONDARY_INSTANCE = ? WHERE QT_ID = ?",
                (table.comment, table.primary_instance, table.secondary_instance, table.qt_id))
            self._bump_catalog()

    def _queue_table_row(self, owner: str, name: str) -> QueueTableInfo:
        for qt in self.queue_tables():
            if qt.owner == owner and qt.name == name:
                return qt
        raise ora(24002, f"{owner}.{name}")

    def queue_tables(self) -> list[QueueTableInfo]:
        with self._svc_lock:
            rows = self._svc.execute(
                "SELECT OWNER, NAME, PAYLOAD_TYPE, SORT_LIST, MULTIPLE_CONSUMERS, MESSAGE_GROUPING,"
                " USER_COMMENT, COMPATIBLE, SECURE, PRIMARY_INSTANCE, SECONDARY_INSTANCE, QT_ID"
                " FROM AQ_QUEUE_TABLES ORDER BY QT_ID").fetchall()
        return [QueueTableInfo(r[0], r[1], r[2], tuple(r[3].split(",")), bool(r[4]), r[5], r[6], r[7],
                               bool(r[8]), r[9] or 0, r[10] or 0, r[11]) for r in rows]

    def _insert_queue(self, q: QueueInfo) -> None:
        if self._svc.execute("SELECT 1 FROM AQ_QUEUES WHERE OWNER = ? AND NAME = ?",
                             (q.owner, q.name)).fetchone():
            raise ora(24006, q.qualified)
        cur = self._svc.execute(
            "INSERT INTO AQ_QUEUES (OWNER, NAME, QT_ID, QUEUE_TYPE, MAX_RETRIES, RETRY_DELAY,"
            " RETENTION_TIME, ENQUEUE_ENABLED, DEQUEUE_ENABLED, USER_COMMENT, CREATED)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (q.owner, q.name, q.table.qt_id, q.queue_type, q.max_retries, q.retry_delay,
             q.retention_time, int(q.enqueue_enabled), int(q.dequeue_enabled), q.comment, time.time()))
        q.qid = cur.lastrowid

    def create_queue(self, queue: QueueInfo) -> QueueInfo:
        with self._svc_lock, self.transaction(self._svc):
            self._insert_queue(queue)
            self._bump_catalog()
        return queue

    def update_queue(self, queue: QueueInfo) -> None:
        with self._svc_lock, self.transaction(self._svc):
            self._svc.execute(
                "UPDATE AQ_QUEUES SET MAX_RETRIES = ?, RETRY_DELAY = ?, RETENTION_TIME = ?,"
                " ENQUEUE_ENABLED = ?, DEQUEUE_ENABLED = ?, USER_COMMENT = ? WHERE QID = ?",
                (queue.max_retries, queue.retry_delay, queue.retention_time,
                 int(queue.enqueue_enabled), int(queue.dequeue_enabled), queue.comment, queue.qid))
            self._bump_catalog()

    def drop_queue(self, owner: str, name: str) -> None:
        with self._svc_lock, self.transaction(self._svc):
            q = self.find_queue(owner, name)
            if q is None:
                raise ora(24010, f"{owner}.{name}")
            self._svc.execute(f"DELETE FROM {table_name(q.table)} WHERE Q_NAME = ?", (q.name,))
            self._svc.execute("DELETE FROM AQ_QUEUES WHERE QID = ?", (q.qid,))
            self._bump_catalog()

    def queues(self) -> list[QueueInfo]:
        tables = {qt.qt_id: qt for qt in self.queue_tables()}
        with self._svc_lock:
            rows = self._svc.execute(
                "SELECT OWNER, NAME, QT_ID, QUEUE_TYPE, MAX_RETRIES, RETRY_DELAY, RETENTION_TIME,"
                " ENQUEUE_ENABLED, DEQUEUE_ENABLED, USER_COMMENT, QID FROM AQ_QUEUES ORDER BY QID"
            ).fetchall()
        return [QueueInfo(r[0], r[1], tables[r[2]], r[3], r[4], r[5], r[6], bool(r[7]), bool(r[8]),
                          r[9], r[10]) for r in rows]

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
        with self._svc_lock, self.transaction(self._svc):
            exists = self._svc.execute("SELECT 1 FROM SLUICE_CATALOG WHERE KIND = ? AND OWNER = ? "
                                       "AND NAME = ?", (kind, owner, name)).fetchone()
            if exists and not replace:
                raise ora(955)
            self._svc.execute("INSERT OR REPLACE INTO SLUICE_CATALOG (KIND, OWNER, NAME, SPEC) "
                              "VALUES (?,?,?,?)", (kind, owner, name, json.dumps(spec)))
            self._bump_catalog()

    def drop_catalog_object(self, kind: str, owner: str, name: str) -> bool:
        with self._svc_lock, self.transaction(self._svc):
            cur = self._svc.execute("DELETE FROM SLUICE_CATALOG WHERE KIND = ? AND OWNER = ? AND NAME = ?",
                                    (kind, owner, name))
            self._bump_catalog()
            return cur.rowcount > 0

    def catalog_objects(self, kind: str) -> list[tuple[str, str, dict]]:
        with self._svc_lock:
            rows = self._svc.execute("SELECT OWNER, NAME, SPEC FROM SLUICE_CATALOG WHERE KIND = ? "
                                     "ORDER BY ROWID", (kind,)).fetchall()
        return [(r[0], r[1], json.loads(r[2])) for r in rows]

    # -- messages outside sessions ------------------------------------------
    def count_messages(self, queue: QueueInfo, states: Iterable[int] | None = None) -> int:
        with self._svc_lock:
            return sqlops.count(self._svc, queue, states)

    def purge_messages(self, table: QueueTableInfo, condition: str | None) -> int:
        where = f"WHERE {condition}" if condition and condition.strip() else ""
        sql = f"SELECT qtview.LOCAL_ORDER_NO FROM {view_name(table)} qtview {where}"
        token = self._tm_token
        held: list[tuple[int, int]] = []
        purged = 0
        try:
            with self._svc_lock, self.transaction(self._svc):
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
            self.locks.bump_consume_count()
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
                        with self.transaction(c):
                            self._time_events(c, qt, due, queues, now, ev, held)
                        self.locks.bump_consume_count()
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
        for seq, state, q_name in due:
            q = queues.get((q_name, qt.qt_id))
            if state == C.MSG_WAITING:
                ev.promoted += sqlops.promote(c, qt, seq)
            elif state == C.MSG_PROCESSED:
                ev.purged += sqlops.purge(c, qt, seq, now)
            elif state == C.MSG_READY and q is not None:
                # lock it so no dequeuer takes it while it moves
                if not self.locks.try_lock(qt.qt_id, seq, self._tm_token):
                    ev.next_due = min(ev.next_due or now + 0.5, now + 0.5)
                    continue
                held.append((qt.qt_id, seq))
                ev.expired += sqlops.move_to_exception_queue(c, q, [seq], "TIME_EXPIRATION",
                                                            self.find_queue)
            else:  # a stale marker (e.g. on an EXPIRED message): clear it
                c.execute(f"UPDATE {table_name(qt)} SET TIME_MANAGER_INFO = NULL WHERE SEQ = ?", (seq,))

    def start_time_manager(self) -> None:
        with self._svc_lock:
            if self._tm is None:
                self._tm = _TimeManagerThread(self)
                self._tm.start()


class _TimeManagerThread(threading.Thread):
    """AQ's queue monitor for this process: sleeps until the next time event."""

    IDLE_RECHECK = 1.0  # other processes may create time events we are not told about

    def __init__(self, store: SqliteStore) -> None:
        super().__init__(name="sluice-time-manager", daemon=True)
        self.store = store
        self._wake = threading.Condition()
        self._stopped = False
        self._next: float | None = None

    def hint(self, when: float) -> None:
        with self._wake:
            if self._next is None or when < self._next:
                self._next = when
                self._wake.notify()

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
        self.join(timeout=5)

    def run(self) -> None:
        while True:
            try:
                ev = self.store.run_time_manager(time.time())
                nxt = ev.next_due
            except (sqlite3.Error, ProgrammingError):
                nxt = None  # e.g. a table dropped mid-pass; try again shortly
            with self._wake:
                if self._stopped:
                    return
                self._next = nxt
                while not self._stopped:
                    now = time.time()
                    target = min(self._next if self._next is not None else now + self.IDLE_RECHECK,
                                 now + self.IDLE_RECHECK)
                    if target <= now:
                        break
                    self._wake.wait(target - now)
                    if self._next is not None and self._next <= time.time():
                        break
                    if time.time() >= target:
                        break
                if self._stopped:
                    return


class SqliteSession(StoreSession):
    """One connection's transaction on the SQLite store."""

    def __init__(self, store: SqliteStore, user: str) -> None:
        self.store = store
        self.user = user
        self.conn = store.connect()
        for name, body in USER_VIEWS:
            self.conn.execute(f"CREATE TEMP VIEW {name} AS " + body.format(user=_literal(user)))
        self.txn_id: str | None = None
        self._inserts: dict[int, tuple[QueueInfo, list[MessageRecord]]] = {}
        self._removes: list[tuple[QueueInfo, list[MessageRecord], DequeueInfo]] = []
        self._held: list[tuple[int, int]] = []
        self._removed: set[tuple[int, int]] = set()  # consumed by this transaction: invisible to it
        self._pending_seq = 0

    @property
    def in_transaction(self) -> bool:
        return bool(self._inserts or self._removes or self._held)

    def new_transaction_id(self) -> str:
        if self.txn_id is None:
            self.txn_id = new_txn_id()
        return self.txn_id

    # -- enqueue ------------------------------------------------------------
    def enqueue(self, queue: QueueInfo, records: list[MessageRecord], immediate: bool) -> None:
        if immediate:
            self.store.begin(self.conn)
            ok = False
            try:
                self._insert(queue.table, records)
                ok = True
            finally:
                self.store.end(self.conn, ok)
            self._after_insert(records)
            return
        for r in records:  # ordered after every committed message until the commit numbers them
            self._pending_seq += 1
            r.seq = _PENDING_SEQ + self._pending_seq
        entry = self._inserts.get(queue.table.qt_id)
        if entry is None:
            self._inserts[queue.table.qt_id] = (queue, list(records))
        else:
            entry[1].extend(records)

    def _insert(self, qt: QueueTableInfo, records: list[MessageRecord]) -> None:
        cscn = None
        if qt.commit_time:
            cscn = self.conn.execute("UPDATE SLUICE_SCN SET SCN = SCN + 1 WHERE ID = 1 "
                                     "RETURNING SCN").fetchone()[0]
        sqlops.insert_records(self.conn, qt, records, cscn)

    def _after_insert(self, records: list[MessageRecord]) -> None:
        events = [r.time_manager_info for r in records if r.time_manager_info is not None]
        if events:
            self.store.time_event_hint(min(events))
        self.store.notify()

    # -- dequeue ------------------------------------------------------------
    def dequeue(self, queue: QueueInfo, selector: Selector, mode: int, immediate: bool,
                limit: int, info: DequeueInfo) -> list[MessageRecord]:
        if mode == C.DEQ_BROWSE:
            return self._select(queue, selector, limit, lock=False)
        removing = mode in (C.DEQ_REMOVE, C.DEQ_REMOVE_NODATA)
        if immediate and removing:
            store = self.store
            recs: list[MessageRecord] = []
            try:
                store.begin(self.conn)
                ok = False
                try:
                    # an IMMEDIATE dequeue is its own transaction: it cannot see this
                    # session's uncommitted enqueues
                    recs = self._select(queue, selector, limit, lock=True, include_own=False)
                    sqlops.consume(self.conn, queue, recs, info.user, info.agent_name,
                                   info.consumer_name, new_txn_id(), time.time())
                    ok = True
                finally:
                    store.end(self.conn, ok)
                if recs:
                    store.locks.bump_consume_count()
            finally:
                store.locks.unlock_many([(queue.table.qt_id, r.seq) for r in recs
                                         if (queue.table.qt_id, r.seq) not in self._held], self)
            self._notify_retention(queue, recs)
            return recs
        recs = self._select(queue, selector, limit, lock=True)
        if recs:
            self.new_transaction_id()
            stored = [r for r in recs if r.seq < _PENDING_SEQ]
            own = [r for r in recs if r.seq >= _PENDING_SEQ]
            self._held.extend((queue.table.qt_id, r.seq) for r in stored)
            if removing:
                if stored:
                    self._removes.append((queue, stored, info))
                    self._removed.update((queue.table.qt_id, r.seq) for r in stored)
                if own:  # consuming its own uncommitted message: it is simply never inserted
                    ids = {id(r) for r in own}
                    entry = self._inserts[queue.table.qt_id]
                    entry[1][:] = [r for r in entry[1] if id(r) not in ids]
        return recs

    def _notify_retention(self, queue: QueueInfo, recs: list[MessageRecord]) -> None:
        if recs and queue.retention_time > 0:
            self.store.time_event_hint(time.time() + queue.retention_time)

    def _select(self, queue: QueueInfo, sel: Selector, limit: int, lock: bool,
                include_own: bool = True) -> list[MessageRecord]:
        """Walk the queue in order from ``sel.after``, skipping what the predicate rejects
        and what other sessions hold, until ``limit`` messages are taken."""
        qt_id = queue.table.qt_id
        locks = self.store.locks
        chunk = max(16, limit * 2) if (sel.predicate or lock) else limit
        after = sel.after
        taken: list[MessageRecord] = []
        now = time.time()
        while len(taken) < limit:
            epoch = locks.consume_count()
            cands = sqlops.select_candidates(self.conn, queue, sel, now, after, chunk)
            if not cands:
                break
            got: list[MessageRecord] = []
            for rec in cands:
                if (qt_id, rec.seq) in self._removed:
                    continue
                if sel.group is None and sel.skip_groups and rec.enq_tid in sel.skip_groups:
                    continue
                if sel.predicate is not None and not sel.predicate(rec):
                    continue
                if lock and not locks.try_lock(qt_id, rec.seq, self):
                    continue
                got.append(rec)
                if len(taken) + len(got) >= limit:
                    break
            if lock and got and locks.consume_count() != epoch:
                # a session consumed messages between our read and our lock: check ours
                alive = sqlops.still_available(self.conn, queue, [r.seq for r in got], sel.states)
                for r in got:
                    if r.seq not in alive:
                        if (qt_id, r.seq) not in self._held:
                            locks.unlock(qt_id, r.seq, self)
                got = [r for r in got if r.seq in alive]
            taken.extend(got)
            if len(cands) < chunk:
                break
            after = sqlops.order_key(queue.table, cands[-1])
        own = self._own_uncommitted(queue, sel, now) if include_own else []
        if own:  # a session sees its own uncommitted enqueues, in queue order
            merged = sorted(taken + own, key=lambda r: sqlops.order_key(queue.table, r))
            taken, extra = merged[:limit], merged[limit:]
            if lock:
                for r in extra:
                    if r.seq < _PENDING_SEQ and (qt_id, r.seq) not in self._held:
                        locks.unlock(qt_id, r.seq, self)
        return taken

    def _own_uncommitted(self, queue: QueueInfo, sel: Selector, now: float) -> list[MessageRecord]:
        """This session's pending enqueues into ``queue`` that ``sel`` would take.
        Commit-time queues show none: their order is fixed only at commit (seed 001)."""
        entry = self._inserts.get(queue.table.qt_id)
        if entry is None or queue.table.commit_time:
            return []
        corr = like_regex(sel.correlation, None) if sel.correlation is not None else None
        out = []
        for r in entry[1]:
            if r.q_name != queue.name or r.state not in sel.states:
                continue
            if (r.expire_at is not None and r.expire_at <= now) or \
                    (sel.msgid is not None and r.msgid != sel.msgid):
                continue
            if corr is not None and (r.corrid is None or not corr.fullmatch(r.corrid)):
                continue
            if sel.group is not None and r.enq_tid != sel.group:
                continue
            if sel.group is None and sel.skip_groups and r.enq_tid in sel.skip_groups:
                continue
            if sel.after is not None and sqlops.order_key(queue.table, r) <= sel.after:
                continue
            if sel.predicate is not None and not sel.predicate(r):
                continue
            out.append(r)
        return out

    def message_status(self, queue: QueueInfo, msgid: bytes) -> tuple[int, bool] | None:
        st = sqlops.message_status(self.conn, queue, msgid)
        if st is None:
            return None
        state, seq = st
        return state, self.store.locks.is_locked_by_other(queue.table.qt_id, seq, self)

    # -- transaction end ----------------------------------------------------
    def commit(self) -> None:
        inserts, removes = self._inserts, self._removes
        if inserts or removes:
            now = time.time()
            store = self.store
            if any(q.table.commit_time for q, _ in inserts.values()):
                store.begin(self.conn)
                ok = False
                try:
                    for queue, recs in inserts.values():
                        self._insert(queue.table, recs)
                    self._consume_all(self.conn, removes, now)
                    ok = True
                finally:
                    store.end(self.conn, ok)
            else:
                # the writes are known up front: record them, then run them as one
                # transaction — or as a single autocommit statement when there is one
                plan = _Statements()
                for queue, recs in inserts.values():
                    sqlops.insert_records(plan, queue.table, recs, None)
                self._consume_all(plan, removes, now)
                plan.run(store, self.conn)
            if removes:
                store.locks.bump_consume_count()  # before the locks go (see MessageLocks)
        self._end()
        if inserts:
            self._after_insert([r for _, recs in inserts.values() for r in recs])
        for queue, recs, _ in removes:
            self._notify_retention(queue, recs)

    def _consume_all(self, conn, removes: list, now: float) -> None:
        for queue, recs, info in removes:
            sqlops.consume(conn, queue, recs, info.user, info.agent_name, info.consumer_name,
                           self.txn_id, now)

    def rollback(self) -> None:
        removes = self._removes
        if removes:
            now = time.time()
            with self.store.transaction(self.conn):
                for queue, recs, _ in removes:
                    for r in recs:
                        sqlops.failed_attempt(self.conn, queue, r.seq, now, self.store.find_queue)
            self.store.locks.bump_consume_count()
            if any(q.retry_delay > 0 for q, _, _ in removes):
                self.store.time_event_hint(now + min(q.retry_delay for q, _, _ in removes))
        had_locks = bool(self._held)
        self._end()
        if had_locks:
            self.store.notify()  # released messages are available again

    def _end(self) -> None:
        if self._held:
            self.store.locks.unlock_many(self._held, self)
        self._inserts = {}
        self._removes = []
        self._held = []
        self._removed = set()
        self.txn_id = None

    def query(self, sql: str, binds: dict | Sequence | None) -> tuple[list[str], list[tuple]]:
        known: dict[tuple[str, str], str] = {}
        for qt in self.store.queue_tables():
            known[(qt.owner, qt.name)] = table_name(qt)
            known[(qt.owner, "AQ$" + qt.name)] = view_name(qt)
        sql = rewrite(sql, known, self.user)
        try:
            cur = self.conn.execute(sql, binds or ())
        except sqlite3.OperationalError as e:
            msg = str(e)
            if "no such table" in msg:
                raise ora(942) from None
            if "no such column" in msg:
                raise ora(904, msg.split(":", 1)[-1].strip().upper()) from None
            raise ProgrammingError(f"ORA-00900: invalid SQL statement: {msg}", 900) from None
        cols = [d[0] for d in cur.description] if cur.description else []
        return cols, cur.fetchall()

    def close(self) -> None:
        try:
            if self.in_transaction:
                self.rollback()
        finally:
            self.conn.close()


class _Statements:
    """Write statements collected for one commit, run atomically."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[bool, str, object]] = []

    def execute(self, sql: str, params=()) -> None:
        self.items.append((False, sql, params))

    def executemany(self, sql: str, rows) -> None:
        self.items.append((True, sql, rows))

    def run(self, store: SqliteStore, conn: sqlite3.Connection) -> None:
        if len(self.items) == 1 and not self.items[0][0]:
            _, sql, params = self.items[0]
            with store.write_lock:  # one statement is its own (autocommit) transaction
                conn.execute(sql, params)
            return
        store.begin(conn)
        ok = False
        try:
            for many, sql, params in self.items:
                (conn.executemany if many else conn.execute)(sql, params)
            ok = True
        finally:
            store.end(conn, ok)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


__all__ = ["SqliteStore", "SqliteSession", "quote"]
