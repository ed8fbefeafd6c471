"""One connection's transaction on the PostgreSQL store.

A session owns one PostgreSQL connection and, while the application works, one
real database transaction on it:

* an ON_COMMIT enqueue INSERTs in it, so the session sees its own uncommitted
  messages natively and nobody else does.  Commit-time queue tables are the
  exception: their messages are inserted at commit, numbered by the commit SCN
  (seeds 001/002), so before that nobody — not even the session — sees them (a
  transaction may have them written earlier, numbered with the SCN it draws then and
  keeps: :meth:`PgSession.write_commit_time_enqueues`);
* a REMOVE or LOCKED dequeue locks its rows with ``SELECT … FOR UPDATE SKIP
  LOCKED``: concurrent dequeuers skip them, never wait, and no row is handed to
  two transactions.  REMOVE dequeues are deleted (or kept PROCESSED for the
  retention time) at commit;
* IMMEDIATE operations run as their own transaction on a pooled connection, so
  they neither see nor wait for the session's uncommitted work.

Rollback keeps Oracle's retry accounting exact.  A plain ROLLBACK would release
the rows before a second transaction could count the failed attempts, and in
between another session could take a message with its old retry count and
without its retry delay.  So when REMOVE dequeues are rolled back, the session
undoes its own work *inside* the transaction — it deletes what it enqueued and
counts each attempt (:func:`.sqlops.failed_attempt`: RETRY_COUNT, max_retries,
retry_delay) while it still holds the row locks — and then commits.  A session
whose process dies mid-transaction is rolled back by the server instead: its
rows come back unchanged, the attempt not counted (seed 003).

A lost connection raises ORA-03113 and ends the transaction (the server rolled
it back); the session reconnects on its next call.
"""

from __future__ import annotations

import dataclasses
import json
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import psycopg
from psycopg.pq import TransactionStatus

from .. import constants as C
from ..errors import DatabaseError, ora, rolled_back
from . import sqlops
from .base import (HELD_ELSEWHERE, HELD_HERE, new_txn_id, DequeueInfo, MessageRecord, QueueInfo,
                   QueueTableInfo, Selector, StoreSession)
from .pgfetch import declared_dates, description, fetch_cursor, scaled_floats
from .pgconn import LaterCopy, PgConnection, is_disconnect, read_results, send_command, translate
from .pgarrays import int8_array
from .pgpipeline import InsertPipeline
from .pgprepared import prepared_reads
from .dialect import POSTGRESQL
from .constraintddl import oracle_name
from .forupdate import RowLocking
from .sqlmemory import memory_views
from .sqlmerge import compound_dml, compound_postgres
from .tableddl import table_owner, user_table_names
from .sqlnames import has_binds, physical_names, rewrite, to_pyformat
from .objpaths import store_object_paths
from .sqlfetch import whole_dates
from .lobcolumns import lob_described
from .sqlheadings import oracle_headings
from .sessionnls import DEFAULT_NLS
from .sessionzone import SessionZone, default_zone
from .sqloracle import Translated, oracle_words
from .coldesc import Details, described, pg_details
from .usercolumns import Columns, KeptColumns, pg_columns
from .sessions import pg_session_key
from .sqlschema import table_name
from .stats import FOLD_SQL, QueueCounts, counted

if TYPE_CHECKING:
    from .postgres import PgStore


class PgSession(StoreSession):
    """The store side of one ``sluice.Connection`` on PostgreSQL."""

    def __init__(self, store: PgStore, user: str) -> None:
        self.store = store
        self.user = user
        self.local_zone = self.time_zone = default_zone()    # as the connection's (zone_option)
        self._zone_set = False              # ALTER SESSION SET TIME_ZONE: a setting to send again
        self.nls = DEFAULT_NLS              # ALTER SESSION SET NLS_… (the statements' translation reads it)
        self._raw: psycopg.Connection | None = store.target.connect(user)
        self.txn_id: str | None = None
        self._open = False                  # a database transaction is open on the connection
        self._inserted: dict[int, tuple[QueueTableInfo, list[bytes]]] = {}
        self._deferred: dict[int, tuple[QueueInfo, list[MessageRecord]]] = {}
        # write_commit_time_enqueues: the commit SCN drawn for the transaction (the counter
        # row locked until it ends) and the commit-time queue tables written with it
        self._cscn: int | None = None
        self._written: dict[int, QueueTableInfo] = {}
        self._removes: list[tuple[QueueInfo, list[MessageRecord], DequeueInfo]] = []
        self._held: set[tuple[int, int]] = set()       # rows this transaction locked
        # message groups whose advisory lock this transaction holds (see _walk): known, so
        # not asked of the server again for each message of the group
        self._groups: set[str] = set()
        self._removed: set[tuple[int, int]] = set()    # consumed at commit: gone for this transaction
        self._events: list[float] = []                 # time events this transaction creates
        self._works: list = []                         # add_commit_work: run inside the COMMIT
        self._counts = QueueCounts()     # what the transaction moved, written with it (stats.py)
        self._epoch = 0                     # transactions ended: a savepoint is valid within its own
        self._savepoints = 0
        # savepoints released (release_savepoint) whose RELEASE goes with the next SAVEPOINT
        # or ROLLBACK TO: a statement's implicit savepoint costs no round trip of its own
        self._releases: list[str] = []
        self._later: list[LaterCopy] | None = None   # defer_bulk_inserts: the COPY kept for the COMMIT
        self._sent: tuple[set[int], list[float]] | None = None   # send_commit: not read yet
        # one-row enqueues sent without waiting (see pgpipeline): read before any other use
        self._pipe: InsertPipeline | None = None
        self._roles: tuple[str, str] | None = None    # SET ROLE's settings (mode, JSON names)
        self._roles_resend = False     # set in a transaction, which may have rolled them back
        # the user's tables' declared types, kept (checked when a statement using them fails)
        self._user_columns = KeptColumns(self._columns, store.catalog_version)
        self._details = KeptColumns(self._column_details, store.catalog_version)    # (description)

    @property
    def in_transaction(self) -> bool:
        return self._open or bool(self._deferred) or bool(self._works)

    def healthy(self) -> bool:
        """False when the transaction's connection is lost (its next call is ORA-03113);
        a lost connection without a transaction is replaced at the next call."""
        raw = self._raw
        return not (self._open and (raw is None or raw.closed))

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

    # -- the connection -----------------------------------------------------------
    def _conn(self, deferring: bool = False) -> PgConnection:
        """The session's connection; ``deferring``: a bulk insert may be kept for the COMMIT
        (:meth:`defer_bulk_inserts`) — any other use first sends the one kept, so the
        transaction sees its own rows."""
        if self._sent is not None:
            raise ora(600, "PgSession: a commit was sent and its outcome not read (await_commit)")
        if self._pipe is not None and self._pipe.sending:
            self._drain()
        raw = self._raw
        if raw is None or raw.closed:
            if self._open:   # never carry on a transaction on a new connection: it is gone
                self._raw = None
                self._reset()
                raise ora(3113)
            self._raw = raw = self.store.target.connect(self.user)   # after a lost connection
            self._roles_resend = self._has_settings
        if self._roles_resend and not self._open:
            self._roles_resend = False
            self._send_roles(raw)
        # (the statements on queue tables as prepared statements of the session's own)
        reads = prepared_reads(raw)
        later = self._later
        if later is None:
            return PgConnection(raw, None, reads)
        if later and not deferring:
            later.pop().run(raw)
        return PgConnection(raw, later if deferring else None, reads)

    def _drain(self) -> None:
        """Read the answers of the enqueues sent without waiting: the first that failed is
        raised here (with its Oracle code; the transaction is rolled back)."""
        try:
            self._pipe.drain()
        except psycopg.Error as e:
            err = translate(e, self.store.target)
            self._abandon()
            raise err from None

    def _pipeline(self) -> InsertPipeline | None:
        """The pipeline of the session's live connection (None: no live connection)."""
        raw = self._raw
        if raw is None or raw.closed:
            return None
        pipe = self._pipe
        if pipe is None or pipe.raw is not raw:   # its prepared statements died with the old one
            pipe = self._pipe = InsertPipeline(raw)
        return pipe

    def _begin(self, c: PgConnection, with_next: bool = False) -> bool:
        """Open the transaction if it is not; True when this call opened it.  ``with_next``:
        the BEGIN is sent with the next statement on ``c`` (``PgConnection.begin``), in its
        round trip — the caller sees to it that it is sent, or that the transaction is not
        open, before it returns (no other call meets a BEGIN pending)."""
        if self._open:
            return False
        if with_next:
            c.begin = True
        else:
            c.command("BEGIN")
        self._open = True
        return True

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """Statements of the session's transaction: a database error ends the transaction
        (PostgreSQL cannot go on with it) and is raised with its Oracle code."""
        try:
            yield
        except psycopg.Error as e:
            err = translate(e, self.store.target)
            self._abandon()
            raise err from None

    def _abandon(self) -> None:
        """Roll back whatever is left of the transaction, or drop a broken connection."""
        if self._pipe is not None and self._pipe.sending:
            self._pipe.discard()
        raw = self._raw
        if raw is not None and not raw.closed and raw.info.transaction_status != TransactionStatus.IDLE:
            released = {qt_id for qt_id, _ in self._held}   # wake the other processes' waiters
            try:
                PgConnection(raw).command("; ".join(["ROLLBACK"] + self.store.notices(released)))
            except psycopg.Error:
                raw.close()
        if raw is not None and raw.closed:
            self._raw = None
        had_locks = bool(self._held)
        self._reset()
        if had_locks:
            self.store.local_change()

    def _reset(self) -> None:
        self._roles_resend = self._roles_resend or (self._open and self._has_settings)
        self._epoch += 1
        self._open = False
        self._releases = []
        self.txn_id = None
        self._inserted = {}
        self._deferred = {}
        self._cscn = None
        self._written = {}
        self._removes = []
        self._held = set()
        self._groups = set()
        self._removed = set()
        self._events = []
        self._works = []
        self._counts.clear()
        self._later = None

    # -- enqueue ----------------------------------------------------------------
    def enqueue(self, queue: QueueInfo, records: list[MessageRecord], immediate: bool) -> None:
        qt = queue.table
        events = [r.time_manager_info for r in records if r.time_manager_info is not None]
        if immediate:
            store = self.store
            counts = counted(queue, records, True).pg_sql(time.time())

            def insert(c: PgConnection) -> None:
                sqlops.insert_records(c, qt, records, sqlops.next_scn(c) if qt.commit_time else None)
            store.pool.run(insert, then=store.notices([qt.qt_id], min(events) if events else None),
                           last=[counts] if counts else None)
            store.local_change(min(events) if events else None)
            return
        self._counts.enqueued(queue, records)
        self.new_transaction_id()
        if qt.commit_time:   # numbered and inserted at commit
            entry = self._deferred.setdefault(qt.qt_id, (queue, []))
            entry[1].extend(records)
            self._events.extend(events)
            return
        with self._guard():
            # one message — one row, or a multi-consumer queue's row per recipient: through
            # the session's pipeline (see pgpipeline), the BEGIN with it
            if self._later is None and self._sent is None:
                sent = pipe = None
                if len(records) == 1:
                    if records[0].notices is None:
                        pipe = self._pipeline()
                        sent = pipe is not None and pipe.send(
                            *sqlops.one_row_insert(POSTGRESQL, qt, records[0]), begin=not self._open)
                elif _one_message(records):
                    pipe = self._pipeline()
                    sent = pipe is not None and pipe.send_rows(
                        [sqlops.one_row_insert(POSTGRESQL, qt, r) for r in records], begin=not self._open)
                if sent:
                    self._open = True
                    if qt.qt_id not in self._inserted:
                        # the table's first rows of the transaction: answered before the
                        # enqueue returns (its lock then keeps the table as it is for the
                        # rows sent after them without waiting)
                        pipe.drain()
                    self._inserted.setdefault(qt.qt_id, (qt, []))[1].extend([r.msgid for r in records])
                    self._events.extend(events)
                    return
            c = self._conn(deferring=True)
            self._begin(c)
            sqlops.insert_records(c, qt, records, None)
        self._inserted.setdefault(qt.qt_id, (qt, []))[1].extend(r.msgid for r in records)
        self._events.extend(events)

    def write_commit_time_enqueues(self) -> None:
        if not self._deferred:
            return
        with self._guard():
            c = self._conn()
            self._begin(c)
            if self._cscn is None:
                self._cscn = sqlops.next_scn(c)   # locked until COMMIT: commit order still
            for qt_id, (queue, recs) in self._deferred.items():
                sqlops.insert_records(c, queue.table, recs, self._cscn)
                self._written[qt_id] = queue.table
        self._deferred = {}

    # -- dequeue ----------------------------------------------------------------
    def dequeue(self, queue: QueueInfo, selector: Selector, mode: int, immediate: bool,
                limit: int, info: DequeueInfo) -> list[MessageRecord]:
        if mode == C.DEQ_BROWSE:
            with self._guard():
                recs = self._walk(self._conn(), queue, selector, limit, False, self._removed)
            if not recs:
                self.store.interest(queue.table.qt_id)   # the caller may wait for it
            return recs
        removing = mode in (C.DEQ_REMOVE, C.DEQ_REMOVE_NODATA)
        if immediate and removing:
            recs = self._dequeue_immediate(queue, selector, limit, info)
            if not recs:
                self.store.interest(queue.table.qt_id)
            return recs
        with self._guard():
            c = self._conn()
            began = self._begin(c, with_next=True)    # (the BEGIN with the walk's first statement)
            try:
                recs = self._walk(c, queue, selector, limit, True, self._removed, self._groups)
            finally:
                if c.begin:   # no statement was sent (or an error came first): nothing began
                    c.begin = self._open = False
            if not recs and began:   # do not keep an empty transaction open while waiting
                if self._open:
                    c.command("ROLLBACK")
                self._open = False
                self._groups = set()   # (a group's lock it took went with it)
        if not recs:
            self.store.interest(queue.table.qt_id)
        if recs:
            self.new_transaction_id()
            keys = [(queue.table.qt_id, r.seq) for r in recs]
            self._held.update(keys)
            if removing:
                self._counts.dequeued(queue, recs)
                self._removes.append((queue, recs, info))
                self._removed.update(keys)
        return recs

    def _dequeue_immediate(self, queue: QueueInfo, sel: Selector, limit: int,
                           info: DequeueInfo) -> list[MessageRecord]:
        """REMOVE as its own transaction: it cannot see this session's uncommitted work, and
        skips what this session holds like anyone else's lock."""
        store = self.store
        now = time.time()
        purge_at = now + queue.retention_time if queue.retention_time > 0 else None

        def take(c: PgConnection) -> list[MessageRecord]:
            last.clear()    # (a second attempt, after a lost connection, starts anew)
            recs = self._walk(c, queue, sel, limit, True, frozenset())
            if recs:
                sqlops.consume(c, queue, recs, info.user, info.agent_name, info.consumer_name,
                               new_txn_id(), now)
                if info.check is not None:
                    info.check(recs)   # raises: rolled back, nothing taken
                if purge_at is not None:
                    then[:] = store.notices(when=purge_at)
                counts = counted(queue, recs, False).pg_sql(now)
                last[:] = [counts] if counts else []
            return recs
        then: list[str] = []
        last: list[str] = []
        recs = store.pool.run(take, then=then, last=last)
        if recs and purge_at is not None:
            store.local_change(purge_at)
        return recs

    def _walk(self, c: PgConnection, queue: QueueInfo, sel: Selector, limit: int, lock: bool,
              exclude: set | frozenset, groups: set[str] | None = None) -> list[MessageRecord]:
        """Up to ``limit`` messages in queue order from ``sel.after``, leaving out ``exclude``
        (what this transaction already consumed).  With ``lock`` they are locked and rows
        other transactions hold are skipped.  A dequeue condition is tested in Python on
        unlocked candidates first, so only the messages taken get locked.  ``groups``: the
        message groups whose lock the transaction on ``c`` holds (added to as it takes one)."""
        qt_id = queue.table.qt_id
        now = time.time()
        after = sel.after
        taken: list[MessageRecord] = []
        if sel.sql_condition is not None and sel.predicate is not None:
            sel = dataclasses.replace(sel, predicate=None)   # SQL tests the condition
        # candidates read per query: twice what is wanted when a dequeue condition is tested
        # in Python (it may turn many down), else what is wanted, doubling (up to 16 more)
        # while the group gate's refusals or this transaction's own messages leave it short:
        # every candidate read brings its payload (a grouped deqone read 16 to take one)
        most = max(16, limit * 2) if sel.predicate is not None else limit + max(16, limit // 4)
        chunk = most if sel.predicate is not None else limit
        if lock and queue.table.message_grouping == "TRANSACTIONAL":
            # seed 003 "Message Grouping": a group is consumed by one session at a time — a
            # transaction-scoped advisory lock per group (held until COMMIT/ROLLBACK) keeps
            # the others out of it
            groups = set() if groups is None else groups
            if sel.group is not None:
                # NEXT_MSG in the session's group: once its lock is this transaction's, no
                # other dequeuer takes its messages — they are locked and read as a plain
                # queue's, in the order of the group alone (not tested one by one)
                if not _try_group(c, qt_id, sel.group, groups):
                    return []
            elif limit == 1 and sel.predicate is None:
                # a new group's first message: one statement finds it, takes its group and
                # locks it (was three round trips: the unlocked read, the lock, lock_records)
                rec = _first_of_a_group(c, queue, sel, now, exclude, groups)
                if rec is not _LOST:
                    return [] if rec is None else [rec]
                # (another transaction changed the row in between: its group is this
                # transaction's now, and the walk below reads on)
                sel = dataclasses.replace(sel, predicate=_GroupGate(c, qt_id, None, groups))
            else:   # any group: tested like a dequeue condition, before rows are locked
                sel = dataclasses.replace(sel, predicate=_GroupGate(c, qt_id, sel.predicate, groups))
        # the session's connection: the dequeue's query as a prepared statement of its own
        # (a dequeue condition's parameters keep psycopg's choice of their types)
        typed = sel.sql_condition is not None

        def candidates(after: tuple | None, n: int, lock: bool) -> list[MessageRecord]:
            sql, params = sqlops.candidates_query(POSTGRESQL, queue, sel, now, after, n, lock)
            cands = c.rows(qt_id, sql, params, _record, typed)
            if cands is None:    # a pooled connection, a value the statement does not take
                cands = [MessageRecord(*row) for row in c.execute(sql, params).fetchall()]
            return cands
        if sel.predicate is None:
            while True:
                want = limit - len(taken)
                cands = candidates(after, want, lock)
                taken.extend(r for r in cands if (qt_id, r.seq) not in exclude)
                if len(cands) < want or len(taken) >= limit:
                    return taken
                after = sqlops.order_key(queue.table, cands[-1])
        gate = sel.predicate if isinstance(sel.predicate, _GroupGate) else None
        while len(taken) < limit:
            if gate is not None:    # (``candidates`` reads the selector rebound here)
                sel = sqlops.skipping_groups(sel, gate.refused)
            cands = candidates(after, chunk, False)
            got: list[MessageRecord] = []
            examined = 0
            for r in cands:
                examined += 1
                if (qt_id, r.seq) not in exclude and sel.predicate(r):
                    got.append(r)
                    if len(taken) + len(got) >= limit:
                        break
            if lock and got:   # others may have taken some meanwhile: those are skipped
                got = [r for r in sqlops.lock_records(c, queue, got, sel.states)
                       if sel.predicate(r)]
            taken.extend(got)
            if examined == len(cands) and len(cands) < chunk:
                break  # the end of the queue
            chunk = min(chunk * 2, most)
            after = sqlops.order_key(queue.table, cands[examined - 1])   # the last one looked at
        return taken

    def message_status(self, queue: QueueInfo, msgid: bytes,
                       consumer: str | None = None) -> tuple[int, bool] | None:
        with self._guard():
            st = sqlops.message_status(self._conn(), queue, msgid, consumer)
        if st is None:
            return None
        state, seq = st
        if (queue.table.qt_id, seq) in self._held:
            return state, HELD_HERE
        # an autocommit probe: the lock it takes ends with the statement (a dequeuer
        # scanning that row in that instant skips it once; this runs only when a dequeue
        # by message id found nothing)
        probe = f"SELECT SEQ FROM {table_name(queue.table)} WHERE SEQ = ? FOR UPDATE SKIP LOCKED"
        free = self.store.pool.run(lambda c: c.execute(probe, (seq,)).fetchone(), transaction=False)
        return state, HELD_ELSEWHERE if free is None else None

    # -- transaction end ---------------------------------------------------------
    def commit(self) -> None:
        if not self.in_transaction:
            self._reset()
            return
        with self._guard():
            c, final, available, events = self._before_commit()
            if self._later:
                self._later.pop().run(c.raw)
            try:
                c.command(final)
            except psycopg.IntegrityError as e:     # a deferred constraint: ORA-02091, all rolled back
                self._abandon()
                raise rolled_back(self._violation(e)) from None
        self._reset()
        if available or events:
            self.store.local_change(min(events) if events else None)

    def _before_commit(self) -> tuple[PgConnection, str, set[int], list[float]]:
        """Everything of :meth:`commit` but its last round trip: ``(connection, the COMMIT
        with its NOTIFYs, the queue tables given messages, the time events)``."""
        store = self.store
        now = time.time()
        available = set(self._inserted) | set(self._deferred) | set(self._written)
        events = list(self._events)
        events += [now + q.retention_time for q, _, _ in self._removes if q.retention_time > 0]
        c = self._conn(deferring=True)
        self._begin(c)
        if self._deferred:
            # the counter row stays locked until COMMIT: commit order (drawn already when
            # some were written before: write_commit_time_enqueues)
            scn = sqlops.next_scn(c) if self._cscn is None else self._cscn
            for queue, recs in self._deferred.values():
                sqlops.insert_records(c, queue.table, recs, scn)
        for queue, recs, info in sqlops.coalesced(self._removes):
            sqlops.consume(c, queue, recs, info.user, info.agent_name, info.consumer_name,
                           self.txn_id, now)
            sqlops.settle_failed(c, queue, recs, store.find_queue)
        for work in self._works:
            work(c)
        # the counts just before the COMMIT, the NOTIFYs after it, in the same round trip
        # (see PgStore.notices)
        counts = self._counts.pg_sql(now)
        return c, "; ".join(([counts] if counts else []) + ["COMMIT"]
                            + store.notices(available, min(events) if events else None)), \
            available, events

    # -- a commit whose outcome is read later (a propagation destination's batches) ------
    sends_commit = True

    def defer_bulk_inserts(self) -> None:
        """This transaction's bulk inserts (binary COPY) may wait for the commit: the last
        one is sent with the COMMIT by :meth:`send_commit`, in one message.  For a
        transaction that does not read back what it enqueued — the commit work runs before
        those rows are in (any other use of the session sends them first)."""
        self._later = []

    def send_commit(self) -> None:
        """:meth:`commit`, except that its last message — the kept bulk insert, the COMMIT
        and its NOTIFYs — is sent without waiting for the server: :meth:`await_commit`
        reads the outcome, and until then the session takes nothing else.  Meanwhile the
        server inserts and commits while this process does other work (a propagation
        dequeues its next batch at the source): the client's and the server's CPU overlap,
        which a thread of this process would not give (the GIL)."""
        if not self.in_transaction:
            self._reset()
            return
        with self._guard():
            c, final, available, events = self._before_commit()
            if self._later:
                self._later.pop().send(c.raw, final)
            else:
                send_command(c.raw, final)
        self._reset()
        self._sent = (available, events)

    def await_commit(self) -> None:
        """The outcome of :meth:`send_commit`: returns once the transaction is committed.
        :raises: its error (the transaction is rolled back; ORA-03113 when the connection
        was lost, the outcome then unknown)."""
        sent, self._sent = self._sent, None
        if sent is None:
            return
        available, events = sent
        try:
            read_results(self._raw)
        except psycopg.Error as e:
            err = translate(e, self.store.target)
            self._abandon()
            raise err from None
        if available or events:
            self.store.local_change(min(events) if events else None)

    def rollback(self) -> None:
        self._later = None     # a bulk insert kept for the commit: never sent, nothing to undo
        if not self._open:
            self._reset()   # commit-time enqueues and commit work were never run
            return
        if self._pipe is not None and self._pipe.sending and not self._pipe.discard():
            # an enqueue sent without waiting failed (the server or the connection: see
            # pgpipeline): the transaction is lost, as when a session dies — the server's
            # rollback, attempts not counted
            self._abandon()
            return
        own = {m for _, msgids in self._inserted.values() for m in msgids}
        failed = [(q, [r for r in recs if r.msgid not in own]) for q, recs, _ in self._removes]
        failed = [(q, recs) for q, recs in failed if recs]
        had_locks = bool(self._held)
        released = {qt_id for qt_id, _ in self._held}   # tables whose messages come back
        store = self.store
        now = time.time()
        delays = [q.retry_delay for q, _ in failed if q.retry_delay > 0]
        if self._raw is None or self._raw.closed:   # the server already rolled it back
            self._raw = None
            self._reset()
            return
        try:
            c = self._conn()
            if failed:   # undo own work, count the attempts while the rows are still locked
                for qt, msgids in self._inserted.values():
                    sqlops.delete_by_msgid(c, qt, msgids)
                for qt in self._written.values():    # numbered with its own SCN: only its
                    c.execute(f"DELETE FROM {table_name(qt)} WHERE CSCN = ?", (self._cscn,))
                for queue, recs in failed:
                    for r in recs:
                        sqlops.failed_attempt(c, queue, r.seq, now, store.find_queue)
                c.command("; ".join(["COMMIT"] + store.notices(released,
                                                                 now + min(delays) if delays else None)))
            else:   # and the released rows wake the other processes' waiters
                c.command("; ".join(["ROLLBACK"] + store.notices(released)))
        except psycopg.Error as e:
            if not is_disconnect(e):
                err = translate(e, store.target)
                self._abandon()
                raise err from None
            # the server rolled the transaction back when the connection went: nothing is
            # left to undo, and (like a killed session) the attempts are not counted
            self._raw = None
        self._reset()
        if had_locks:
            store.local_change(now + min(delays) if delays else None)

    # -- savepoints --------------------------------------------------------------------
    def savepoint(self, pipelined: bool = False) -> "_Mark":
        """A PostgreSQL SAVEPOINT when the transaction is open (a subtransaction: it gets
        an xid of its own only if it locks or writes something), else only the state."""
        name = None
        if self._open:
            self._savepoints += 1
            name = f"sluice_sp{self._savepoints}"
            commands = [f"RELEASE SAVEPOINT {n}" for n in self._releases] + [f"SAVEPOINT {name}"]
            self._releases = []
            if pipelined and self._pipe is not None and self._pipe.sending:   # with the enqueues sent
                self._pipe.send_commands([c.encode() for c in commands])
            else:
                with self._guard():
                    self._conn().command("; ".join(commands))
        return _Mark(self._epoch, name, self.txn_id,
                     {k: (qt, list(ids)) for k, (qt, ids) in self._inserted.items()},
                     {k: (q, list(recs)) for k, (q, recs) in self._deferred.items()},
                     self._cscn, dict(self._written), len(self._removes), set(self._held),
                     set(self._removed), len(self._events), len(self._works), set(self._groups),
                     self._counts.saved())

    def release_savepoint(self, mark: "_Mark") -> None:
        if mark.name is not None and mark.epoch == self._epoch and self._open:
            self._releases.append(mark.name)     # sent with the next SAVEPOINT, if any

    def rollback_to_savepoint(self, mark: "_Mark") -> None:
        if mark.epoch != self._epoch or (mark.name is not None and not self._open):
            raise ora(1086, mark.name or "SLUICE_SAVEPOINT")
        store = self.store
        released = {qt_id for qt_id, _ in self._held - mark.held}   # tables whose rows come back
        self._releases = []     # (savepoints taken since the mark: they go with it)
        if self._open:
            with self._guard():
                c = self._conn()
                if mark.name is not None:   # row and advisory locks taken since go with it
                    c.command(f"ROLLBACK TO SAVEPOINT {mark.name}; RELEASE SAVEPOINT {mark.name}")
                else:                       # the transaction began after the mark
                    c.command("; ".join(["ROLLBACK"] + store.notices(released)))
                    self._open = False
                    released = set()
        self.txn_id = mark.txn_id
        self._inserted = {k: (qt, list(ids)) for k, (qt, ids) in mark.inserted.items()}
        self._deferred = {k: (q, list(recs)) for k, (q, recs) in mark.deferred.items()}
        # (rows written since, and the SCN when drawn since, went with the SQL rollback)
        self._cscn, self._written = mark.cscn, dict(mark.written)
        del self._removes[mark.removes:]
        had_locks = self._held != mark.held
        self._held = set(mark.held)
        self._groups = set(mark.groups)     # (a group's lock taken since went with the savepoint)
        self._removed = set(mark.removed)
        del self._events[mark.events:]
        del self._works[mark.works:]
        self._counts.restore(mark.counts)
        if released:    # the other processes' waiters: a NOTIFY outside the open transaction
            store.pool.run(lambda c: c.command("; ".join(store.notices(released))), transaction=False)
        if had_locks:
            store.local_change()

    # -- SQL on the views -------------------------------------------------------------
    def query(self, sql: str, binds: dict | Sequence | None,
              in_memory: Sequence[tuple[QueueTableInfo, list[MessageRecord]]] = (),
              oracle_names: bool = True, oracle_sql: bool = False,
              decimals: bool = False) -> tuple[list[str], list[tuple]]:
        return self._again(lambda columns: self._query(sql, binds, in_memory, oracle_names, oracle_sql, decimals,
                                                       columns))

    def _again(self, run):
        """``run(columns)`` with the user's tables' kept types; run once more with them
        looked up again when it fails and they changed (:class:`.usercolumns.KeptColumns`:
        a user's DDL nobody announced)."""
        columns = self._user_columns.lookup()
        try:
            return run(columns)
        except DatabaseError as e:
            raw = self._raw
            if not columns.reused or raw is None or raw.closed:
                raise
            try:
                changed = columns.stale()
            except DatabaseError:
                raise e from None
            if not changed:
                raise
        return run(self._user_columns.lookup())

    def _query(self, sql: str, binds: dict | Sequence | None,
               in_memory: Sequence[tuple[QueueTableInfo, list[MessageRecord]]],
               oracle_names: bool, oracle_sql: bool, decimals: bool, columns: KeptColumns.Statement) -> tuple[list[str], list[tuple]]:
        known = physical_names(self.store.queue_tables(), user_table_names(self.store)) if oracle_names or in_memory else {}
        if oracle_sql:
            sql = store_object_paths(sql, self.user, False, self.store)
        oracle = (oracle_words(sql, self.user, sqlite=False, binds=binds, columns=columns,
                               zone=self.time_zone, nls=self.nls) if oracle_sql
                  else Translated(sql, binds=binds))
        text, binds = oracle.text, oracle.binds
        c = self._conn()
        raw = c.raw
        # a user's statement: its numbers as python-oracledb's (the cursor's own loaders)
        reader = fetch_cursor(raw, decimals) if oracle_sql else raw

        def run():
            drops = []
            if in_memory:    # temporary objects of this connection (see sqlmemory)
                drops = memory_views(c.execute, c.executemany, POSTGRESQL, in_memory, known, sql, self.user)
            ok = False
            try:
                cur = reader.execute(*_with_params(rewrite(text, known, self.user), binds))
                rows = cur.fetchall() if cur.description else []
                ok = True
            finally:
                # they must not outlive the query: they would hold the queue tables (see
                # memory_views).  A failed query in the open transaction: the rollback to
                # its savepoint drops them.
                if ok or not self._open:
                    for drop in drops:
                        c.execute(drop, ())
            return cur, rows

        try:
            if self._open:   # in a savepoint, so a bad query does not end the transaction
                raw.execute("SAVEPOINT sluice_query")
                try:
                    cur, rows = run()
                except psycopg.Error as e:
                    if not is_disconnect(e):
                        raw.execute("ROLLBACK TO SAVEPOINT sluice_query")
                    raise
                raw.execute("RELEASE SAVEPOINT sluice_query")
            else:
                cur, rows = run()
        except psycopg.Error as e:
            err = translate(e, self.store.target)
            if is_disconnect(e):
                self._abandon()
            raise err from None
        if oracle_sql:      # a user's statement: as python-oracledb fetches it
            names = [d.name for d in cur.description or ()]
            cols, types = oracle_headings(sql, oracle, names, sqlite=False, lookup=columns)
            types = {**declared_dates(sql, cur, columns), **types}     # a DATE column of tableddl's
            if not decimals:
                rows = scaled_floats(cur, rows)
            headings = lob_described(description(cur, cols, types), sql, names, columns, known)
            return described(headings, whole_dates(oracle.convert(rows), types), sql, names,
                             self._details.lookup(), sized=False)
        cols = [d.name.upper() if d.name == d.name.lower() else d.name for d in cur.description or ()]
        return cols, oracle.convert(rows)

    def store_sql(self, sql: str) -> tuple[str, Translated]:
        """A user's Oracle query as this store's SQL, translated once (a view's definition:
        :mod:`.viewddl`), and its translation (what it folded)."""
        sql = store_object_paths(sql, self.user, False, self.store)
        oracle = oracle_words(sql, self.user, sqlite=False, columns=self._user_columns.lookup(),
                              zone=self.time_zone)
        known = physical_names(self.store.queue_tables(), user_table_names(self.store))
        return rewrite(oracle.text, known, self.user), oracle

    def run_own(self, sql: str) -> list:
        """A statement of Sluice's on this session's own connection, in its transaction (the
        session's rows of a global temporary table), in a savepoint when one is open."""
        c = self._conn()
        raw = c.raw
        try:
            if not self._open:
                cur = c.execute(sql)
                return cur.fetchall() if cur.description else []
            c.send_begin()
            raw.execute("SAVEPOINT sluice_own")
            try:
                cur = raw.execute(sql)
                rows = cur.fetchall() if cur.description else []
            except psycopg.Error as e:
                if not is_disconnect(e):
                    raw.execute("ROLLBACK TO SAVEPOINT sluice_own")
                raise
            raw.execute("RELEASE SAVEPOINT sluice_own")
            return rows
        except psycopg.Error as e:
            err = translate(e, self.store.target)
            if is_disconnect(e):
                self._abandon()
            raise err from None

    def _columns(self, tables: Sequence[str]) -> Columns:
        """The types of the columns of the user's ``tables`` (:mod:`.usercolumns`)."""
        return self._catalog(pg_columns, tables)

    def _column_details(self, tables: Sequence[str]) -> Details:
        """The declared types and NOT NULLs of the user's ``tables`` (:mod:`.coldesc`)."""
        return self._catalog(pg_details, tables)

    def _catalog(self, fetch: Callable, tables: Sequence[str]) -> Any:
        raw = self._conn().raw
        try:
            return fetch(lambda sql, params: raw.execute(sql, params).fetchall(), tables)
        except psycopg.Error as e:
            raise translate(e, self.store.target) from None

    def execute_dml(self, sql: str, binds: dict | Sequence | None, tag: bytes | None,
                    returned: list | None = None) -> int:
        return self._again(lambda columns: self._execute_dml(sql, binds, tag, columns, returned))

    def _execute_dml(self, sql: str, binds: dict | Sequence | None, tag: bytes | None,
                     columns: KeptColumns.Statement, returned: list | None) -> int:
        sql = store_object_paths(sql, self.user, False, self.store)
        oracle = oracle_words(sql, self.user, sqlite=False, binds=binds, columns=columns, zone=self.time_zone, nls=self.nls)
        text, binds = rewrite(oracle.text, physical_names(self.store.queue_tables(), user_table_names(self.store)), self.user), \
            oracle.binds
        counted = False     # MERGE, INSERT ALL / FIRST as PostgreSQL's (sqlmerge); counted: the count is its value
        if compound_dml(text):
            text, binds, counted = compound_postgres(text, binds)
        text, params = _with_params(text, binds)
        c = self._conn()
        raw = c.raw
        with self._guard():
            self._begin(c, with_next=True)
            self.new_transaction_id()
            c.command("SAVEPOINT sluice_dml")     # (with the BEGIN, in one round trip)
        try:
            raw.execute("SELECT set_config('sluice.tag', %s, true)", (tag.hex() if tag else "",))
            cur = raw.execute(text, params)
            count = cur.fetchone()[0] if counted else cur.rowcount
            if returned is not None:
                returned.extend(oracle.convert(cur.fetchall()))
        except psycopg.Error as e:
            err = self._violation(e)
            if is_disconnect(e):
                self._abandon()
            else:       # the statement alone is undone; the transaction goes on
                with self._guard():
                    raw.execute("ROLLBACK TO SAVEPOINT sluice_dml")
            raise err from None
        with self._guard():
            raw.execute("RELEASE SAVEPOINT sluice_dml")
        return count

    @contextmanager
    def row_locks(self, locking: RowLocking) -> Iterator[str | None]:
        """FOR UPDATE's row locks belong to the transaction: it is opened first; WAIT n is
        the statement's ``lock_timeout`` (ORA-30006 when it runs out)."""
        c = self._conn()
        timeout = bool(locking.wait)          # (WAIT 0 is NOWAIT: postgresql() says so)
        with self._guard():
            if self._begin(c):
                self.new_transaction_id()
            if timeout:
                c.command(f"SET LOCAL lock_timeout = '{int(locking.wait * 1000)}ms'")
        try:
            yield locking.postgresql()
        except DatabaseError as e:
            if e.code == 54 and timeout:
                raise ora(30006) from None
            raise
        finally:
            if timeout and self._open:
                with self._guard():
                    c.command("SET LOCAL lock_timeout TO DEFAULT")

    def _violation(self, e: psycopg.Error) -> DatabaseError:
        """The Oracle error of ``e``; a foreign key's named ``OWNER.NAME`` as Oracle names it
        (the owner of a table of the store's schema: the one recorded, :func:`.tableddl.table_owner`)."""
        err = translate(e, self.store.target)
        diag = getattr(e, "diag", None)
        if err.code in (2291, 2292) and diag is not None and diag.constraint_name:
            schema = diag.schema_name or ""
            owner = table_owner(self.store, diag.table_name or "", self.user) \
                if schema == self.store.target.schema else schema.upper()
            return ora(err.code, oracle_name(owner, diag.constraint_name))
        return err

    def set_roles(self, mode: str, roles: tuple[str, ...]) -> None:
        self._roles = (mode, json.dumps(list(roles)))
        self._send_roles(self._conn().raw)

    def set_time_zone(self, zone: SessionZone) -> None:
        self.time_zone, self._zone_set = zone, True
        self._send_roles(self._conn().raw)      # (sent again if the open transaction rolls back)

    @property
    def _has_settings(self) -> bool:
        return self._roles is not None or self._zone_set

    def _send_roles(self, raw: psycopg.Connection) -> None:
        """The session settings SESSION_ROLES reads (sqlschema.PG_SESSION_SETTINGS), and
        the views' time zone (sessionzone).  Set in an open transaction, they are sent
        again once it ends (a rollback would take them back; Oracle's SET ROLE and ALTER
        SESSION stay), and on a new connection after a lost one."""
        settings = {"sluice.time_zone": self.time_zone.postgres} if self._zone_set else {}
        if self._roles is not None:
            settings["sluice.role_mode"], settings["sluice.set_roles"] = self._roles
        raw.execute("SELECT " + ", ".join("set_config(%s, %s, false)" for _ in settings),
                    [v for pair in settings.items() for v in pair])

    @property
    def sid(self) -> int:
        """The session's SID in V$SESSION: its server process (0 while it has none)."""
        raw = self._raw
        return raw.info.backend_pid if raw is not None and not raw.closed else 0

    def close(self) -> None:
        self._sent = None      # a commit sent and not read: its outcome goes with the connection
        try:
            if self.in_transaction:
                self.rollback()
        finally:
            if self._raw is not None:
                self._unregister(self._raw)
                self._raw.close()
                self._raw = None

    def _unregister(self, raw: psycopg.Connection) -> None:
        """Leave V$SESSION now: the server ends a closed connection's backend, and gives up
        its locks, only a moment after the client has gone (see :mod:`.sessions`).  In the
        same round trip the queue counts of ended server processes are folded (stats.py)."""
        if raw.closed or raw.info.transaction_status != TransactionStatus.IDLE:
            return
        try:
            key = int(pg_session_key(self.store.target.schema, self.user))
            # (the unlock first: a session-level lock goes even if the fold then fails)
            PgConnection(raw).command(f"SELECT pg_advisory_unlock_shared({key}); {FOLD_SQL}")
        except psycopg.Error:
            pass    # the connection is gone, and the lock with it


@dataclasses.dataclass
class _Mark:
    """A savepoint: its PostgreSQL name (None: the transaction was not open) and the
    session's transaction state when it was taken."""

    epoch: int
    name: str | None
    txn_id: str | None
    inserted: dict
    deferred: dict
    cscn: int | None     # the commit SCN drawn (write_commit_time_enqueues)
    written: dict        # the commit-time queue tables written with it
    removes: int
    held: set
    removed: set
    events: int
    works: int
    groups: set      # the message groups whose lock the transaction held
    counts: dict     # QueueCounts.saved()


# a message's records sent as pipelined rows at most (one per recipient); more go by COPY
PIPELINED_RECIPIENTS = 16


def _record(values: list) -> MessageRecord:
    return MessageRecord(*values)


def _one_message(records: list[MessageRecord]) -> bool:
    """``records`` (more than one) are one message's rows per recipient (one message id),
    few enough for the pipeline, none owing a notification row."""
    if not 1 < len(records) <= PIPELINED_RECIPIENTS:
        return False
    msgid = records[0].msgid
    return all(r.msgid == msgid and r.notices is None for r in records)


_GROUP_LOCK = "SELECT pg_try_advisory_xact_lock(CAST(? AS INTEGER), hashtext(?))"


def _try_group(c: PgConnection, qt_id: int, group: str, held: set[str]) -> bool:
    """Take the lock of message group ``group`` for the transaction on ``c`` unless it is
    among the groups ``held`` already (then no round trip); False: another has it."""
    if group in held:
        return True
    # (the key's int4 spelled out: the cursor sent the table's id as int2, the session's
    # prepared statement sends int8 — the same lock either way)
    if c.query_table(qt_id, _GROUP_LOCK, (qt_id, group))[0][0]:
        held.add(group)
        return True
    return False


_NONE_TAKEN = int8_array([])
_LOST = object()     # _first_of_a_group: the group was taken, its row went in between


def _first_of_a_group(c: PgConnection, queue: QueueInfo, sel: Selector, now: float,
                      exclude: set | frozenset, held: set[str]) -> MessageRecord | object | None:
    """The first message of a message group no other transaction holds, taken — its group's
    lock and its row's — in one round trip (:func:`.sqlops.first_of_a_group_query`), the
    group added to ``held``; None: no group is free; ``_LOST``: the group was taken but
    its row changed or went before it was locked (another transaction's commit between
    the statement's snapshot and its row lock)."""
    qt_id = queue.table.qt_id
    excluded = int8_array([seq for t, seq in exclude if t == qt_id]) if exclude else _NONE_TAKEN
    sql, params = sqlops.first_of_a_group_query(POSTGRESQL, queue, sel, now, sel.after, excluded)
    rows = c.rows(qt_id, sql, params, _group_and_record, sel.sql_condition is not None)
    if rows is None:    # a pooled connection, a value the statement does not take
        rows = [_group_and_record(list(row)) for row in c.execute(sql, params).fetchall()]
    if not rows:
        return None
    group, rec = rows[0]
    if group is not None:
        held.add(group)
    if rec is None or rec.q_name != queue.name or rec.state not in sel.states:
        return _LOST
    return rec


def _group_and_record(values: list) -> tuple[str | None, MessageRecord | None]:
    return values[0], (None if values[1] is None else MessageRecord(*values[1:]))


class _GroupGate:
    """A predicate admitting only messages whose group this transaction holds (or can take).
    A group refused is asked of the server once per walk (one held elsewhere stays so
    meanwhile, near enough: a group it misses now is taken by the next dequeue), and kept in
    ``refused`` for the walk to leave out of what it reads next."""

    __slots__ = ("c", "qt_id", "inner", "held", "refused")

    def __init__(self, c: PgConnection, qt_id: int, inner, held: set[str]) -> None:
        self.c, self.qt_id, self.inner, self.held = c, qt_id, inner, held
        self.refused: set[str] = set()

    def __call__(self, r: MessageRecord) -> bool:
        if self.inner is not None and not self.inner(r):
            return False
        tid = r.enq_tid
        if tid is None:
            return True
        if tid in self.refused:
            return False
        if _try_group(self.c, self.qt_id, tid, self.held):
            return True
        self.refused.add(tid)
        return False


def _with_params(text: str, binds: dict | Sequence | None) -> tuple[str, Any]:
    """A user's statement with Oracle-style binds as psycopg's placeholders and parameters.
    Binds named but none given still convert: psycopg then reports the missing one (ORA-01008)."""
    if not binds and not has_binds(text):
        return text, None
    binds = binds or {}
    named = isinstance(binds, dict)
    return to_pyformat(text, positional=not named), (binds if named else list(binds))
