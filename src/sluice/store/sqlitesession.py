"""The embedded backend's sessions: a transaction kept in the session until commit.

A session's ON_COMMIT enqueues wait here and are inserted, together with the removal
of the messages it dequeued, in one short write transaction at :meth:`SqliteSession.
commit` (see :mod:`.sqlite`).  Until then the messages it dequeued are held by the
store's :class:`~.locks.MessageLocks`; other sessions skip them.  A transaction may have
its commit-time enqueues written earlier (:meth:`SqliteSession.write_commit_time_enqueues`):
it then holds the write transaction, as DML does, until it ends.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

from .. import constants as C
from ..errors import DatabaseError, OperationalError, ProgrammingError, dpy, not_supported, ora, raised_by_sluice_sql, rolled_back
from ..objtypes import DB_TYPE_VARCHAR
from ..sqlfunctions import like_regex
from . import sqlops
from .base import (HELD_ELSEWHERE, HELD_HERE, new_txn_id, remote_match, DequeueInfo, MessageRecord,
                   QueueInfo, QueueTableInfo, Selector, StoreSession)
from .dialect import SQLITE
from .forupdate import RowLocking
from .locks import GROUP_LOCK_SPACE, group_key
from .sqlitecalls import kept_error
from .sqlitefns import divided_by_zero
from .constraintddl import sqlite_deferred_violation, sqlite_violation
from .numberscale import ScaledDml
from .sqlmemory import memory_views
from .sqlmerge import compound_dml, compound_sqlite
from .tableddl import table_owner, user_table_names
from .sqlnames import physical_names, rewrite
from .objpaths import store_object_paths
from .coldesc import described, sqlite_details
from .sqlfetch import returned_dates, sqlite_result
from .sessionnls import SessionNls
from .sessionzone import SessionZone
from .lobcolumns import lob_described
from .sqlheadings import declared_types, oracle_headings
from .sqloracle import Translated, oracle_words, tokens
from .sqlschema import SYNC_SESSION_DDL, user_view_ddl
from .stats import SQLITE_UPSERT, QueueCounts, counted
from .usercolumns import KeptColumns, SqliteColumns, table_names

if TYPE_CHECKING:
    from .sqlite import SqliteStore

# temporary sequence numbers of a session's uncommitted enqueues (above any real one)
_PENDING_SEQ = 1 << 62
DISK_ERRORS = (1114, 1115)     # ORA codes of a full disk or a failing device (sqlite.disk_error)
log = logging.getLogger(__name__)


class SqliteSession(StoreSession):
    """One connection's transaction on the SQLite store."""

    def __init__(self, store: SqliteStore, user: str) -> None:
        self.store = store
        self.user = user
        self.conn = store.connect()
        self.local_zone = self.conn.view_clock.zone
        self._columns = SqliteColumns(self.conn)     # the user's tables' declared types
        self._scaled = ScaledDml(self.conn)          # DML's values rounded to NUMBER(p, s)
        self._details = KeptColumns(lambda tables: sqlite_details(self.conn, tables),   # (description)
                                    lambda: self.conn.execute("PRAGMA schema_version").fetchone()[0])
        for stmt in user_view_ddl(_literal(user)):
            self.conn.execute(stmt)
        self.txn_id: str | None = None
        self._inserts: dict[int, tuple[QueueInfo, list[MessageRecord]]] = {}
        # write_commit_time_enqueues: the commit SCN drawn for the transaction, in the write
        # transaction it opened (as DML's, held until the end)
        self._cscn: int | None = None
        self._removes: list[tuple[QueueInfo, list[MessageRecord], DequeueInfo]] = []
        self._held: list[tuple[int, int]] = []
        self._held_set: set[tuple[int, int]] = set()   # the group locks among _held
        self._removed: set[tuple[int, int]] = set()  # consumed by this transaction: invisible to it
        self._pending_seq = 0
        self._works: list = []     # add_commit_work: run in the commit's write transaction
        self._counts = QueueCounts()   # what the transaction moved, written with it (stats.py)
        self._epoch = 0          # transactions ended: a savepoint is valid within its own
        # DML (execute_dml) opens the write transaction at once and holds it until the end:
        # SQLite has one writer, so the session's changes lock the database as Oracle's row
        # locks would lock their rows; the commit's writes then go into that transaction
        self._dml = False
        self._dml_savepoints = 0
        try:
            self.sid = store.sessions.register(user)    # listed in V$SESSION until closed
        except BaseException:
            self.conn.close()
            raise

    @property
    def in_transaction(self) -> bool:
        return bool(self._inserts or self._removes or self._held or self._works or self._dml)

    def add_commit_work(self, work) -> None:
        self._works.append(work)

    def undeliverable(self, queue: QueueInfo, records: list[MessageRecord]) -> None:
        self._removes = sqlops.kept_back(self._removes, queue, records)
        seqs, now = sorted(r.seq for r in records), time.time()
        self._works.append(lambda c: sqlops.mark_undeliverable(c, queue, seqs, now))

    def new_transaction_id(self) -> str:
        if self.txn_id is None:
            self.txn_id = new_txn_id()
        return self.txn_id

    # -- DML on the store's database -----------------------------------------
    def execute_dml(self, sql: str, binds: dict | Sequence | None, tag: bytes | None,
                    returned: list | None = None) -> int:
        sql = store_object_paths(sql, self.user, True, self.store)
        columns = self._columns.lookup()
        oracle = oracle_words(sql, self.user, sqlite=True, binds=binds,       # its errors change nothing
                              columns=columns, zone=self.time_zone, nls=self.nls)
        conn = self.conn
        self._begin_write()
        conn.execute("SAVEPOINT sluice_dml")
        try:
            # what a synchronous capture's triggers read as the writer's tag and transaction
            conn.execute("DELETE FROM SLUICE_SYNC_SESSION")
            conn.execute("INSERT INTO SLUICE_SYNC_SESSION (TXN, TAG) VALUES (?, ?)",
                         (self.new_transaction_id(), tag or None))
            text = rewrite(oracle.text, physical_names(self.store.queue_tables(), user_table_names(self.store)), self.user)
            if compound_dml(text):      # MERGE, INSERT ALL / FIRST: several statements (sqlmerge)
                count = compound_sqlite(conn, text, oracle.binds)
            else:
                cur = conn.execute(self._scaled(text, columns, self.store.catalog_version()),  # (NUMBER(p, s) rounded)
                                   oracle.binds or ())
                # a RETURNING clause's rows: read to the end (SQLite changes the rows as they are read)
                rows = cur.fetchall() if cur.description else []
                if returned is not None:
                    returned.extend(returned_dates(tokens(oracle.text), [d[0] for d in cur.description or ()],
                                                   oracle.convert(rows), columns))
                count = cur.rowcount
        except (sqlite3.Error, OverflowError, DatabaseError) as e:
            conn.execute("ROLLBACK TO sluice_dml")     # the statement alone is undone
            conn.execute("RELEASE sluice_dml")
            if _foreign_key_failed(e):
                toks = tokens(oracle.text)
                tables = table_names(toks)
                raise sqlite_violation(conn, toks[0].word if toks else "", tables[0] if tables else None,
                                       self._owner_of) from None
            raise (e if isinstance(e, DatabaseError) else _sql_error(e)) from None
        conn.execute("RELEASE sluice_dml")
        return count

    def _begin_write(self, busy_as_ora: bool = False) -> None:
        """Open the write transaction DML (and :meth:`write_commit_time_enqueues`) hold
        until the transaction ends, if it is not.  ``busy_as_ora``: a store another process
        kept locked all the busy timeout raises ORA-00054 (as a commit's write does)."""
        if not self._dml:
            # SQLite's own write lock, not the process's mutex (store.begin): the transaction
            # may end in another thread (a connection shared by threads, a dropped one closed
            # by the reaper); other writers wait in SQLite's busy handler
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as e:   # (sqlite.begin_immediate's, without its import circle)
                if not busy_as_ora or "database is locked" not in str(e):
                    raise
                raise ora(54) from None
            self._dml = True
            try:
                self.conn.execute(SYNC_SESSION_DDL)
            except BaseException:
                self._end_dml(commit=False)
                raise

    @contextmanager
    def row_locks(self, locking: RowLocking) -> Iterator[str | None]:
        """SQLite's nearest to row locks: the store's write transaction, held to the end."""
        took = not self._dml
        if took and not self._take_write_lock(locking):
            yield None
            return
        try:
            yield locking.plain
        except BaseException:
            if took:           # a statement that failed holds no lock (nor did anything else)
                self._end_dml(commit=False)
            raise

    def _take_write_lock(self, locking: RowLocking) -> bool:
        """:meth:`_begin_write` for FOR UPDATE, waiting for another session's as the clause
        says: ORA-00054 after the busy timeout or NOWAIT, ORA-30006 after WAIT n; False
        (not taken, nothing waited) for SKIP LOCKED."""
        wait = 0.0 if locking.skip_locked else locking.wait
        conn = self.conn
        busy = None if wait is None else conn.execute("PRAGMA busy_timeout").fetchone()[0]
        if busy is not None:
            conn.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
        try:
            self._begin_write(busy_as_ora=True)
        except DatabaseError as e:
            if e.code != 54 or wait is None:
                raise
            if locking.skip_locked:
                return False
            if wait:
                raise ora(30006) from None
            raise
        finally:
            if busy is not None:
                conn.execute(f"PRAGMA busy_timeout = {busy}")
        return True

    def write_commit_time_enqueues(self) -> None:
        written = [(k, queue) for k, (queue, _) in self._inserts.items() if queue.table.commit_time]
        if not written:
            return
        self._begin_write(busy_as_ora=True)
        for k, queue in written:
            recs = self._inserts.pop(k)[1]
            try:
                self._insert(queue.table, recs, in_transaction=True)
            except BaseException:
                # the write transaction and what it held are gone: so is the transaction
                # (as a killed session's: its dequeues come back, no attempt counted)
                self._end_dml(commit=False)
                self._end()
                raise

    def _no_immediate_under_dml(self) -> None:
        """An IMMEDIATE operation is a transaction of its own, which SQLite's one writer —
        this session's open DML transaction — would keep waiting."""
        if self._dml:
            raise not_supported("IMMEDIATE visibility while this session's DML holds the SQLite "
                                "store's write transaction (commit or roll back first)")

    def _end_dml(self, commit: bool) -> None:
        """End the transaction DML opened (the session's row goes with a COMMIT)."""
        self._dml = False
        self._cscn = None
        conn = self.conn
        try:
            if commit:
                conn.execute("DELETE FROM SLUICE_SYNC_SESSION")
                conn.execute("COMMIT")
                return
        except sqlite3.IntegrityError as e:
            if not _foreign_key_failed(e):
                _rollback_quietly(conn)
                raise
            # a deferred foreign key: the transaction, still open, tells which; then it goes
            cause = sqlite_deferred_violation(conn, self._owner_of)
            _rollback_quietly(conn)
            raise rolled_back(cause) from None
        except BaseException:
            _rollback_quietly(conn)
            raise
        _rollback_quietly(conn)

    def _owner_of(self, physical: str) -> str:
        return table_owner(self.store, physical, self.user)

    # -- enqueue ------------------------------------------------------------
    def enqueue(self, queue: QueueInfo, records: list[MessageRecord], immediate: bool) -> None:
        if immediate:
            self._no_immediate_under_dml()
            self.store.begin(self.conn)
            ok = False
            try:
                self._insert(queue.table, records)
                self.conn.executemany(SQLITE_UPSERT, counted(queue, records, True).sqlite_rows(time.time()))
                ok = True
            finally:
                self.store.end(self.conn, ok)
            self._after_insert(records)
            return
        self._counts.enqueued(queue, records)
        for r in records:  # ordered after every committed message until the commit numbers them
            self._pending_seq += 1
            r.seq = _PENDING_SEQ + self._pending_seq
        entry = self._inserts.get(queue.table.qt_id)
        if entry is None:
            self._inserts[queue.table.qt_id] = (queue, list(records))
        else:
            entry[1].extend(records)

    def _insert(self, qt: QueueTableInfo, records: list[MessageRecord], in_transaction: bool = False) -> None:
        """Insert ``records`` in the write transaction open; ``in_transaction``: the
        session's (a commit-time table's records take the SCN it drew, once), else one of
        their own."""
        cscn = None
        if qt.commit_time:
            cscn = self._cscn if in_transaction else None
            if cscn is None:
                cscn = sqlops.next_scn(self.conn)
                if in_transaction:
                    self._cscn = cscn
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
            self._no_immediate_under_dml()
            store = self.store
            recs: list[MessageRecord] = []
            try:
                store.begin(self.conn)
                ok = False
                try:
                    # an IMMEDIATE dequeue is its own transaction: it cannot see this
                    # session's uncommitted enqueues, nor take what its transaction holds
                    recs = self._select(queue, selector, limit, lock=True, include_own=False,
                                        group_locks=False, exclude=set(self._held))
                    sqlops.consume(self.conn, queue, recs, info.user, info.agent_name,
                                   info.consumer_name, new_txn_id(), time.time())
                    self.conn.executemany(SQLITE_UPSERT, counted(queue, recs, False).sqlite_rows(time.time()))
                    if recs:
                        store.locks.begin_consume()
                        if info.check is not None:
                            info.check(recs)   # raises: rolled back, nothing taken
                    ok = True
                finally:
                    store.end(self.conn, ok)
            finally:
                if recs:
                    store.locks.end_consume()   # also when the COMMIT failed (see begin_consume)
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
                self._counts.dequeued(queue, recs)
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
                include_own: bool = True, group_locks: bool = True,
                exclude: set[tuple[int, int]] | frozenset = frozenset()) -> list[MessageRecord]:
        """Walk the queue in order from ``sel.after``, skipping what the predicate rejects,
        what other sessions hold and ``exclude``, until ``limit`` messages are taken."""
        qt_id = queue.table.qt_id
        locks = self.store.locks
        grouped = queue.table.message_grouping == "TRANSACTIONAL"
        in_python = sel.predicate if sel.sql_condition is None else None   # else SQL tested it
        # room for what the predicate rejects, or (locking) for rows other sessions hold —
        # not twice the rows when nothing filters: each is read and built for nothing.  A
        # locking read starts with ``limit`` rows and doubles while others' locks leave it
        # short (up to ``limit`` + 16, or + a quarter): a lone dequeuer reads one row per
        # message, not 17 (two thirds of a single-message dequeue's CPU was building the 16
        # it never took)
        most = max(16, limit * 2) if in_python else limit + max(16, limit // 4) if lock else limit
        chunk = limit if lock and not in_python else most
        after = sel.after
        taken: list[MessageRecord] = []
        now = time.time()
        gated = lock and grouped and group_locks
        refused: set[str] = set()     # groups other sessions hold: left out of the next reads
        walk = sel
        while len(taken) < limit:
            epoch = locks.consume_count()
            if refused:
                walk = sqlops.skipping_groups(walk, refused)
            cands = sqlops.select_candidates(self.conn, queue, walk, now, after, chunk)
            if not cands:
                break
            got: list[MessageRecord] = []
            examined = 0
            for rec in cands:
                examined += 1
                if (qt_id, rec.seq) in self._removed or (qt_id, rec.seq) in exclude:
                    continue
                if sel.group is None and sel.skip_groups and rec.enq_tid in sel.skip_groups:
                    continue
                if in_python is not None and not in_python(rec):
                    continue
                if gated and rec.enq_tid in refused:
                    continue
                if lock and not locks.try_lock(qt_id, rec.seq, self):
                    continue
                if gated and rec.enq_tid and not self._lock_group(qt_id, rec):
                    refused.add(rec.enq_tid)
                    continue
                got.append(rec)
                if len(taken) + len(got) >= limit:
                    break
            if lock and got and locks.consumed_since(epoch):
                # a session consumed messages between our read and our lock: check ours
                # (and re-read them: a rolled-back attempt may have changed their retry count)
                fresh = sqlops.still_available(self.conn, queue, got, sel.states)
                for r in got:
                    if r.seq not in fresh:
                        if (qt_id, r.seq) not in self._held:
                            locks.unlock(qt_id, r.seq, self)
                got = [fresh[r.seq] for r in got if r.seq in fresh]
            taken.extend(got)
            if examined == len(cands) and len(cands) < chunk:
                break  # the end of the queue
            chunk = min(chunk * 2, most)
            # go on after the last candidate looked at — not after the chunk's last: when
            # the re-check dropped a message, the ones not yet looked at come next
            after = sqlops.order_key(queue.table, cands[examined - 1])
        own = self._own_uncommitted(queue, sel, now) if include_own else []
        if own:  # a session sees its own uncommitted enqueues, in queue order
            merged = sorted(taken + own, key=lambda r: sqlops.order_key(queue.table, r))
            taken, extra = merged[:limit], merged[limit:]
            if lock:
                for r in extra:
                    if r.seq < _PENDING_SEQ and (qt_id, r.seq) not in self._held:
                        locks.unlock(qt_id, r.seq, self)
        return taken

    def _lock_group(self, qt_id: int, rec: MessageRecord) -> bool:
        """Seed 003 "Message Grouping": one session at a time consumes a group.  The group
        is locked like a message, in a lock space of its own, until the transaction ends."""
        key = (qt_id | GROUP_LOCK_SPACE, group_key(rec.enq_tid))
        if (key[0], key[1]) in self._held_set or self.store.locks.try_lock(key[0], key[1], self):
            if key not in self._held_set:
                self._held.append(key)
                self._held_set.add(key)
            return True
        if (qt_id, rec.seq) not in self._held:
            self.store.locks.unlock(qt_id, rec.seq, self)   # its message lock, just taken
        return False

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
            if sel.multi and (not remote_match(sel.remote, r.address) if sel.remote is not None
                              else r.consumer_name != sel.consumer_name or r.address is not None):
                continue
            if sel.delivery_mode is not None and r.delivery_mode != sel.delivery_mode:
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

    def message_status(self, queue: QueueInfo, msgid: bytes,
                       consumer: str | None = None) -> tuple[int, bool] | None:
        st = sqlops.message_status(self.conn, queue, msgid, consumer)
        if st is None:
            return None
        state, seq = st
        if (queue.table.qt_id, seq) in self._held:
            return state, HELD_HERE
        elsewhere = self.store.locks.is_locked_by_other(queue.table.qt_id, seq, self)
        return state, HELD_ELSEWHERE if elsewhere else None

    # -- transaction end ----------------------------------------------------
    def commit(self) -> None:
        inserts, removes, dml = self._inserts, self._removes, self._dml
        if inserts or removes or self._works or dml:
            now = time.time()
            store = self.store
            # the consume count is bumped before the locks go (see MessageLocks.begin_consume)
            written = self._cscn is not None    # enqueues in the write transaction held
            with store.locks.consuming(bool(removes)):
                try:
                    self._write_commit(inserts, removes, now)
                except BaseException as e:
                    # they went with its rollback (ORA-02091: a deferred foreign key rolled back
                    # all of it): so does the transaction
                    if written or getattr(e, "code", None) == 2091:
                        self._end()
                        raise
                    # nothing was written (a full disk …): the transaction is still open,
                    # to be committed again or rolled back
                    self._cscn = None
                    self._renumber_pending()
                    raise
        self._end()
        if inserts:
            self._after_insert([r for _, recs in inserts.values() for r in recs])
        elif dml:      # triggers may have enqueued (a synchronous capture's LCRs)
            self.store.notify()
        for queue, recs, _ in removes:
            self._notify_retention(queue, recs)

    def _write_commit(self, inserts: dict, removes: list, now: float) -> None:
        store = self.store
        if self._dml or self._works or any(q.table.commit_time for q, _ in inserts.values()) or \
                any(q.table.multiple_consumers for q, _, _ in removes):
            dml = self._dml
            if not dml:
                store.begin(self.conn)
            ok = False
            try:
                for queue, recs in inserts.values():
                    self._insert(queue.table, recs, in_transaction=True)
                self._consume_all(self.conn, removes, now)
                for queue, recs, _ in sqlops.coalesced(removes):
                    sqlops.settle_failed(self.conn, queue, recs, store.find_queue)
                for work in self._works:
                    work(self.conn)
                if self._counts.by_qid:
                    self.conn.executemany(SQLITE_UPSERT, self._counts.sqlite_rows(now))
                ok = True
            finally:
                if dml:         # a failed commit ends the DML's transaction too: rolled back
                    self._end_dml(ok)
                else:
                    store.end(self.conn, ok)
        else:
            # the writes are known up front: record them, then run them as one
            # transaction — or as a single autocommit statement when there is one
            plan = _Statements(store.locks.allocate_seqs)
            for queue, recs in inserts.values():
                sqlops.insert_records(plan, queue.table, recs, None)
            self._consume_all(plan, removes, now)
            if self._counts.by_qid:
                plan.executemany(SQLITE_UPSERT, self._counts.sqlite_rows(now))
            plan.run(store, self.conn)

    def _renumber_pending(self) -> None:
        """After a failed commit: the enqueues it numbered are pending again."""
        for _, recs in self._inserts.values():
            for r in recs:
                self._pending_seq += 1
                r.seq = _PENDING_SEQ + self._pending_seq
                r.cscn = None

    def _consume_all(self, conn, removes: list, now: float) -> None:
        for queue, recs, info in sqlops.coalesced(removes):
            sqlops.consume(conn, queue, recs, info.user, info.agent_name, info.consumer_name,
                           self.txn_id, now)

    def rollback(self) -> None:
        if self._dml:
            self._end_dml(commit=False)
        removes = self._removes
        if removes:
            now = time.time()
            try:
                with self.store.locks.consuming(), self.store.transaction(self.conn):
                    for queue, recs, _ in removes:
                        for r in recs:
                            sqlops.failed_attempt(self.conn, queue, r.seq, now, self.store.find_queue)
            except OperationalError as e:
                if e.code not in DISK_ERRORS:
                    raise
                # the rollback still ends the transaction: the messages come back with the
                # attempt not counted, as from a killed session
                log.warning("rollback could not count the failed dequeue attempts: %s", e)
            if any(q.retry_delay > 0 for q, _, _ in removes):
                self.store.time_event_hint(now + min(q.retry_delay for q, _, _ in removes))
        had_locks = bool(self._held)
        self._end()
        if had_locks:
            self.store.notify()  # released messages are available again

    # -- savepoints ---------------------------------------------------------
    def savepoint(self, pipelined: bool = False) -> "_Mark":
        # nothing of the transaction is in the database before commit but its DML: a mark is
        # its state, and an SQL savepoint once DML has opened the write transaction
        name = None
        if self._dml:
            self._dml_savepoints += 1
            name = f"sluice_sp{self._dml_savepoints}"
            self.conn.execute(f"SAVEPOINT {name}")
        return _Mark(self._epoch, name, self.txn_id, {k: (q, list(recs)) for k, (q, recs) in self._inserts.items()},
                     self._cscn, len(self._removes), len(self._held), set(self._held_set), set(self._removed),
                     len(self._works), self._counts.saved())

    def release_savepoint(self, mark: "_Mark") -> None:
        if mark.name is not None and mark.epoch == self._epoch and self._dml:
            self.conn.execute(f"RELEASE {mark.name}")

    def rollback_to_savepoint(self, mark: "_Mark") -> None:
        if mark.epoch != self._epoch:
            raise ora(1086, "SLUICE_SAVEPOINT")
        if mark.name is not None:       # the DML since goes, its transaction stays open
            self.conn.execute(f"ROLLBACK TO {mark.name}")
            self.conn.execute(f"RELEASE {mark.name}")
            self._cscn = mark.cscn      # (with the enqueues written since; one drawn since went)
        elif self._dml:                 # the DML began after the mark: all of it goes
            self._end_dml(commit=False)
        kept = self._held[:mark.held]
        earlier = set(kept)     # a lock taken again since is still the earlier work's
        taken = [k for k in self._held[mark.held:] if k not in earlier]
        if taken:
            self.store.locks.unlock_many(taken, self)
        self._held = kept
        self._held_set = set(mark.held_set)
        self._removed = set(mark.removed)
        del self._removes[mark.removes:]
        # own uncommitted messages dequeued since come back too: the lists are the mark's
        self._inserts = {k: (q, list(recs)) for k, (q, recs) in mark.inserts.items()}
        del self._works[mark.works:]
        self._counts.restore(mark.counts)
        self.txn_id = mark.txn_id
        if taken:
            self.store.notify()  # released messages are available again

    def _end(self) -> None:
        self._epoch += 1
        if self._held:
            self.store.locks.unlock_many(self._held, self)
        self._inserts = {}
        self._cscn = None
        self._removes = []
        self._held = []
        self._held_set = set()
        self._removed = set()
        self._works = []
        self._counts.clear()
        self.txn_id = None

    def query(self, sql: str, binds: dict | Sequence | None,
              in_memory: Sequence[tuple[QueueTableInfo, list[MessageRecord]]] = (),
              oracle_names: bool = True, oracle_sql: bool = False,
              decimals: bool = False) -> tuple[list[str], list[tuple]]:
        known = physical_names(self.store.queue_tables(), user_table_names(self.store)) if oracle_names or in_memory else {}
        columns = self._columns.lookup()
        if oracle_sql:
            sql = store_object_paths(sql, self.user, True, self.store)
        oracle = (oracle_words(sql, self.user, sqlite=True, binds=binds, columns=columns, zone=self.time_zone, nls=self.nls)
                  if oracle_sql
                  else Translated(sql, binds=binds))
        try:
            if in_memory:
                memory_views(self.conn.execute, self.conn.executemany, SQLITE, in_memory, known, sql, self.user)
            cur = self.conn.execute(rewrite(oracle.text, known, self.user), oracle.binds or ())
            # (SQLite computes the rows as they are read: an error can come from a later row)
            rows = cur.fetchall()
        except (sqlite3.OperationalError, sqlite3.ProgrammingError, OverflowError) as e:
            raise _sql_error(e) from None
        cols = [d[0] for d in cur.description] if cur.description else []
        if oracle_sql:      # a user's statement: as python-oracledb fetches it
            names = cols
            cols, types = oracle_headings(sql, oracle, cols, sqlite=True, lookup=columns)
            declared, numbers = declared_types(sql, names, columns)
            text = [i for i, dbtype in types.items() if dbtype is DB_TYPE_VARCHAR]
            cols, rows = sqlite_result(cols, oracle.convert(rows, text), decimals, {**declared, **types}, numbers)
            cols = lob_described(cols, sql, names, columns, known)
            return described(cols, rows, sql, names, self._details.lookup(), sized=True)
        return cols, oracle.convert(rows)

    def store_sql(self, sql: str) -> tuple[str, Translated]:
        """A user's Oracle query as this store's SQL, translated once (a view's definition:
        :mod:`.viewddl`), and its translation (what it folded)."""
        sql = store_object_paths(sql, self.user, True, self.store)
        oracle = oracle_words(sql, self.user, sqlite=True, columns=self._columns.lookup(), zone=self.time_zone)
        known = physical_names(self.store.queue_tables(), user_table_names(self.store))
        return rewrite(oracle.text, known, self.user), oracle

    def run_own(self, sql: str) -> list:
        """A statement of Sluice's on this session's own connection, in its transaction (a
        view compiled on use, the session's rows of a global temporary table)."""
        try:
            return self.conn.execute(sql).fetchall()
        except sqlite3.Error as e:
            raise _sql_error(e) from None

    @property
    def time_zone(self) -> SessionZone:
        return self.conn.view_clock.zone

    def set_time_zone(self, zone: SessionZone) -> None:
        self.conn.view_clock.zone = zone

    @property
    def nls(self) -> SessionNls:
        return self.conn.nls        # (the connection's: its ORACLE_TO_CHAR & co read it)

    @nls.setter
    def nls(self, nls: SessionNls) -> None:
        self.conn.nls = nls

    def set_roles(self, mode: str, roles: tuple[str, ...]) -> None:
        self.conn.execute("DROP VIEW IF EXISTS temp.SESSION_ROLES")
        for stmt in user_view_ddl(_literal(self.user), "SESSION_ROLES", mode, roles):
            self.conn.execute(stmt)

    def close(self) -> None:
        try:
            if self.in_transaction:
                self.rollback()
        finally:
            self.store.sessions.unregister(self.sid)
            self.conn.close()


class _Statements:
    """Write statements collected for one commit, run atomically."""

    __slots__ = ("items", "allocate_seqs")
    dialect = SQLITE

    def __init__(self, allocate_seqs) -> None:
        self.items: list[tuple[bool, str, object]] = []
        self.allocate_seqs = allocate_seqs

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


@dataclass
class _Mark:
    """A savepoint: the session's transaction state when it was taken."""

    epoch: int
    name: str | None          # the SQL savepoint, when DML had opened the transaction
    txn_id: str | None
    inserts: dict
    cscn: int | None          # the commit SCN drawn (write_commit_time_enqueues)
    removes: int
    held: int
    held_set: set
    removed: set
    works: int
    counts: dict


def _rollback_quietly(conn: sqlite3.Connection) -> None:
    """ROLLBACK what is open (nothing is, when SQLite already rolled it back)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _sql_error(e: sqlite3.Error | OverflowError) -> Exception:
    """SQLite's complaint about a user's statement, as Oracle would word it."""
    msg = str(e)
    if isinstance(e, OverflowError):    # a bound integer beyond SQLite's 64 bits
        return ora(1426, msg)
    raised = raised_by_sluice_sql(msg)
    if raised is not None:
        return raised
    if divided_by_zero() and "user-defined function raised exception" in msg:
        return ora(1476)
    days_error = kept_error()
    if days_error is not None and ("user-defined function raised exception" in msg
                                   or "user-defined aggregate's" in msg):     # (LISTAGG's ORA-01489)
        return days_error
    if "no such table" in msg:
        return ora(942)
    if "because it is a view" in msg:     # "cannot modify v because it is a view" (.viewddl)
        return ora(1732)
    if "no such column" in msg:
        return ora(904, msg.split(":", 1)[-1].strip().upper())
    if isinstance(e, sqlite3.IntegrityError):   # "UNIQUE constraint failed: t.id" …
        what = msg.split(":", 1)[-1].strip()
        if _JSON_CHECK.fullmatch(what):      # a JSON column's own check (tableddl): text that is no JSON
            return ora(40441)
        for word, code in (("UNIQUE", 1), ("PRIMARY KEY", 1), ("NOT NULL", 1400), ("FOREIGN KEY", 2291)):
            if word in msg:
                return ora(code, what)
        return ora(2290, what)
    if "database is locked" in msg:
        return ora(54)
    if isinstance(e, sqlite3.ProgrammingError):    # the binds (see Cursor.execute)
        unsupported = re.search(r"binding parameter .*: type '([^']+)' is not supported", msg)
        if unsupported:
            return dpy(3002, unsupported.group(1))
        if "bindings supplied" in msg or "supply a value for binding" in msg:
            return ora(1008)
    return ProgrammingError(f"ORA-00900: invalid SQL statement: {msg}", 900)


# the CHECK tableddl gives a JSON column on SQLite (its text as SQLite reports it failing)
_JSON_CHECK = re.compile(r'json_valid\(("(?:[^"]|"")*")\) OR \1 IS NULL')


def _foreign_key_failed(e: BaseException) -> bool:
    return isinstance(e, sqlite3.IntegrityError) and "FOREIGN KEY constraint failed" in str(e)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


__all__ = ["SqliteSession"]
