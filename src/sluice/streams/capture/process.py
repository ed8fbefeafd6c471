"""The capture process: from a replication slot into its ANYDATA queue, exactly once.

A host (``sluice run``, or a test in-process) runs it::

    proc = CaptureProcess(conn, "STRM01_CAPTURE")   # conn: a connection as the capture user
    proc.start()
    while not stopping:
        if not proc.run_batch():
            proc.wait_for_redo()      # nothing to capture: wait a little (Event-based)
    proc.stop()

**Exactly once** (DESIGN §7).  One batch:

1. peek whole source transactions after the slot's confirmed position
   (the slot's stream, :mod:`.slotstream`: nothing is consumed);
2. skip every transaction whose commit SCN is at or below the position stored in the
   store (CAPTURED_SCN) — a batch committed just before a crash, whose slot was not
   advanced yet — or below the capture's START_SCN;
3. turn the rest into LCRs, keep those the rule sets accept (seed 000, Table 6-1:
   negative rule set first, then positive; :func:`sluice.streams.evaluate_rule_sets`,
   the rules engine's indexed path) and enqueue them, in commit order, into the capture's
   queue — one queue transaction for several whole source transactions, each LCR
   keeping its source transaction id and commit SCN;
4. write the new position (and counters) **in that same store transaction**
   (``StoreSession.add_commit_work``) and commit;
5. only then advance the slot (a status update on the stream).

A process killed anywhere restarts from the stored position: before 4 nothing was
enqueued and the slot still holds the changes; between 4 and 5 the changes come again
and step 2 skips them.  Batches with no change (other sessions' empty transactions, the
capture's own commits, which the decoder never shows: the store's schema is filtered out)
only advance the slot.

**Large transactions.**  A source transaction of more rows than TXN_LCR_SPILL_THRESHOLD
(SET_PARAMETER; 10,000 by default) is not held in memory: its LCRs spill to the store as
they come and are enqueued at its commit row, in that batch's one store transaction, with
the position (:mod:`.spill`) — written to the queue table a chunk at a time, numbered with
the commit SCN drawn at the first, so the session holds none of them whole; the slot moves
only after that.

**Staging.**  Oracle stages captured LCRs as buffered messages and, after a failure,
re-mines the redo from its checkpoint (seed 001 "Persistent Queues and Buffered
Queues").  Sluice stages them persistently by default: the queue transaction *is* the
checkpoint, so a restart never re-reads more than one batch and consumers see LCRs that
survive any crash.  (Unlike Oracle's captured LCRs, they can therefore be dequeued by
applications too.)  ``SET_PARAMETER(capture, 'STAGING', 'BUFFERED')`` stages them as
buffered messages instead and confirms the slot only past what consumers took and
committed (:mod:`.staging`): steps 4 and 5 then happen when the consumers commit.

**No subscribers.**  Seed 001 "Secure Queues and the SET_UP_QUEUE Procedure": "a
message cannot be enqueued unless a subscriber who can dequeue the message is
configured".  While the queue has no subscriber at all the capture does not read
(state ``WAITING FOR INACTIVE DEQUEUERS``): the slot keeps every change until a consumer
subscribes, so nobody who subscribes later misses what happened meanwhile.  A change that
no existing subscriber's rule accepts (ORA-24033 for that message) is discarded like a
change the capture's own rules reject.

**Faults.**  An error ends the process with its capture ABORTED, ERROR_NUMBER and
ERROR_MESSAGE set (DBA_CAPTURE): a dropped slot (ORA-01291 — never a silent new one), a
lost source (ORA-03113), an UPDATE or DELETE the decoder could not give because the
table lost its replica identity (ORA-26744, naming the transaction: the change is not in
the log in a form anyone can capture; ``ALTER_CAPTURE(start_scn => …)`` past it is the
administrator's explicit decision).  START_CAPTURE restarts it from its position.
A change to a table with a column type capture does not support is not captured and the
table is listed in DBA_STREAMS_UNSUPPORTED (when the capture's rules would have wanted
it); the capture carries on.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

from ...errors import DatabaseError, ora
from ...model import Agent
from ...names import canonical
from ..clientrights import check_capture_user, check_rule_sets
from ...store.pgconn import parse_dsn
from ..lcr import DDLLCR, RowLCR
from ..rowmigration import migrate
from ..rulesets import evaluate_rule_sets
from . import combined
from . import spec as specs
from .context import CaptureContext
from .decode import Decoder, SourceTransaction, Unsupported, oracle_name, transactions
from .pgsource import Source
from .prefilter import Prefilter
from . import spill as spills
from .pgsource import lsn_to_int
from .staging import BUFFERED, BufferedStaging, discard_earlier

__all__ = ["CaptureProcess", "source_for"]

_PROGRESS = """INSERT INTO SLUICE_CAPTURE_PROGRESS (OWNER, NAME, POSITION_LSN, CAPTURED_SCN,
    LAST_ENQUEUED_SCN, TOTAL_MESSAGES_CAPTURED, TOTAL_MESSAGES_ENQUEUED, TOTAL_TRANSACTIONS,
    CAPTURE_MESSAGE_NUMBER, CAPTURE_MESSAGE_CREATE_TIME, CAPTURE_TIME, ENQUEUE_MESSAGE_NUMBER,
    ENQUEUE_MESSAGE_CREATE_TIME, ENQUEUE_TIME, STATE, STATE_CHANGED_TIME)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'CAPTURING CHANGES', ?)
  ON CONFLICT (OWNER, NAME) DO UPDATE SET POSITION_LSN = excluded.POSITION_LSN,
    CAPTURED_SCN = excluded.CAPTURED_SCN,
    LAST_ENQUEUED_SCN = COALESCE(excluded.LAST_ENQUEUED_SCN, SLUICE_CAPTURE_PROGRESS.LAST_ENQUEUED_SCN),
    TOTAL_MESSAGES_CAPTURED = SLUICE_CAPTURE_PROGRESS.TOTAL_MESSAGES_CAPTURED + excluded.TOTAL_MESSAGES_CAPTURED,
    TOTAL_MESSAGES_ENQUEUED = SLUICE_CAPTURE_PROGRESS.TOTAL_MESSAGES_ENQUEUED + excluded.TOTAL_MESSAGES_ENQUEUED,
    TOTAL_TRANSACTIONS = SLUICE_CAPTURE_PROGRESS.TOTAL_TRANSACTIONS + excluded.TOTAL_TRANSACTIONS,
    CAPTURE_MESSAGE_NUMBER = excluded.CAPTURE_MESSAGE_NUMBER,
    CAPTURE_MESSAGE_CREATE_TIME = excluded.CAPTURE_MESSAGE_CREATE_TIME,
    CAPTURE_TIME = excluded.CAPTURE_TIME,
    ENQUEUE_MESSAGE_NUMBER = COALESCE(excluded.ENQUEUE_MESSAGE_NUMBER, SLUICE_CAPTURE_PROGRESS.ENQUEUE_MESSAGE_NUMBER),
    ENQUEUE_MESSAGE_CREATE_TIME = COALESCE(excluded.ENQUEUE_MESSAGE_CREATE_TIME,
                                           SLUICE_CAPTURE_PROGRESS.ENQUEUE_MESSAGE_CREATE_TIME),
    ENQUEUE_TIME = COALESCE(excluded.ENQUEUE_TIME, SLUICE_CAPTURE_PROGRESS.ENQUEUE_TIME),
    STATE = excluded.STATE,
    STATE_CHANGED_TIME = CASE WHEN SLUICE_CAPTURE_PROGRESS.STATE = excluded.STATE
                              THEN SLUICE_CAPTURE_PROGRESS.STATE_CHANGED_TIME
                              ELSE excluded.STATE_CHANGED_TIME END
  WHERE COALESCE(SLUICE_CAPTURE_PROGRESS.CAPTURED_SCN, 0) = ?"""
_STATE = """INSERT INTO SLUICE_CAPTURE_PROGRESS (OWNER, NAME, STATE, STATE_CHANGED_TIME)
  VALUES (?, ?, ?, ?)
  ON CONFLICT (OWNER, NAME) DO UPDATE SET STATE = excluded.STATE,
    STATE_CHANGED_TIME = excluded.STATE_CHANGED_TIME"""
_STARTUP = """INSERT INTO SLUICE_CAPTURE_PROGRESS (OWNER, NAME, STATE, STATE_CHANGED_TIME, STARTUP_TIME)
  VALUES (?, ?, 'INITIALIZING', ?, ?)
  ON CONFLICT (OWNER, NAME) DO UPDATE SET STATE = 'INITIALIZING',
    STATE_CHANGED_TIME = excluded.STATE_CHANGED_TIME, STARTUP_TIME = excluded.STARTUP_TIME,
    TOTAL_MESSAGES_CAPTURED = 0, TOTAL_MESSAGES_ENQUEUED = 0, TOTAL_TRANSACTIONS = 0"""
_UNSUPPORTED = """INSERT INTO SLUICE_STREAMS_UNSUPPORTED (OWNER, TABLE_NAME, REASON, AUTO_FILTERED,
    CAPTURE_OWNER, CAPTURE_NAME, SCN, NOTED) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (OWNER, TABLE_NAME, REASON) DO NOTHING"""
# wal2json's warning names the table as "schema"."table", each name as it is (a quote in a
# name is not doubled): the whole of it is taken, and split where the names end (_split)
_NO_IDENTITY = re.compile(r'no tuple identifier for (\w+) in table "(.*)"$', re.DOTALL)
_SLOT_BUSY_PATIENCE = 30.0   # seconds a slot may stay in use by a dying predecessor


def source_for(ctx: CaptureContext, spec: specs.CaptureSpec | None = None,
               source_dsn: str | None = None, process: str = "") -> Source:
    """The source database of a capture: ``source_dsn`` (a ``postgresql://`` DSN), else
    the PostgreSQL database the store lives in (its schema never captured).
    :raises: SLU-00001 for an SQLite store without a PostgreSQL source."""
    dsn = spec.source_dsn if spec is not None else source_dsn
    if dsn:
        target = parse_dsn(dsn)
        return Source(target.conninfo, target.display, target.schema, process)
    pg = ctx.pg_target()
    if pg is None:
        from ...errors import not_supported
        raise not_supported("a capture process on an SQLite store without a PostgreSQL source "
                            "(give source_dsn => 'postgresql://…'; SQLite tables are captured "
                            "synchronously)")
    conninfo, schema = pg
    return Source(conninfo, "the store's database", schema, process)


class CaptureProcess:
    """One capture process, run by a host: :meth:`start`, :meth:`run_batch` …, :meth:`stop`.

    ``max_changes``: decoded rows per batch (whole transactions: a larger transaction
    is one batch); ``commit_each_transaction``: one queue transaction per source
    transaction instead of several whole ones per commit."""

    def __init__(self, conn: Any, capture_name: str, *, max_changes: int = 5000,
                 commit_each_transaction: bool = False, idle_wait: float = 0.05) -> None:
        self.ctx = CaptureContext(conn)
        self.conn = conn
        self.name = canonical(capture_name, "capture name")
        self.max_changes = max_changes
        self.commit_each_transaction = commit_each_transaction
        self.idle_wait = idle_wait
        self.spec: specs.CaptureSpec | None = None
        self.source: Source | None = None
        self.decoder: Decoder | None = None
        self.captured_scn = 0          # commit SCN of the last transaction in the queue
        self._stored_scn = 0           # CAPTURED_SCN as this process last read or wrote it
        self._superseded: DatabaseError | None = None
        self.confirmed = 0             # where the slot is (as far as this process knows)
        self.state: str | None = None
        self._queue: Any = None
        self._agent: Agent | None = None
        self._catalog_version = -1
        self._single: int | bool = False   # narrowing a decoder warning down to its
        #                                    transaction: one at a time up to this LSN
        self._busy_since: float | None = None
        self._hit: Any = None          # the positive rule of the last full evaluation
        self.combined: Any = None   # combined capture and apply (seed 001): combined.route_for
        self._stop = threading.Event()
        self._run_stop: threading.Event | None = None     # run()'s
        self.staging: BufferedStaging | None = None   # BUFFERED staging's book
        self._staged_lsn = 0           # BUFFERED: end of the last batch staged
        self._unwritten = [0, 0, 0, None, None]   # BUFFERED: counters since the last position write
        self._spill: spills.CaptureSpill | None = None   # the large transaction being spilled

    # -- life cycle ------------------------------------------------------------------
    def start(self) -> None:
        """Load the definition, open the source, check the slot; ORA-26666 unless the
        capture is ENABLED (START_CAPTURE), ORA-01291 without its slot."""
        spec = specs.load(self.ctx, self.name)
        if spec.status != specs.ENABLED:
            raise ora(26666, self.name, f": it is {spec.status} (START_CAPTURE enables it)")
        self._adopt(spec)
        self._write_now(_STARTUP, (specs.OWNER, self.name, time.time(), time.time()))
        self.state = "INITIALIZING"
        try:
            self._check_capture_user(spec)
            self.source = source_for(self.ctx, spec, process=self.name).connect()
            self.source.check_logical()
            slot = self.source.slot(spec.slot)
            if slot is None:
                from .pgsource import slot_missing
                raise slot_missing(f'replication slot "{spec.slot}" of capture {self.name} '
                                   f'does not exist')
            self.confirmed = slot[1]
            self._partitions()
            rows = self.ctx.query("SELECT CAPTURED_SCN FROM SLUICE_CAPTURE_PROGRESS "
                                  "WHERE OWNER = :o AND NAME = :n", {"o": specs.OWNER, "n": self.name})
            self.captured_scn = self._stored_scn = (rows[0][0] if rows and rows[0][0] is not None else 0)
            self._spill = spills.load(self.ctx, specs.OWNER, self.name)
            if spec.staging == BUFFERED:
                if self._spill is not None:      # (left by a PERSISTENT run: the slot has it all)
                    self._spill.discard(self.ctx)
                    self.conn.commit()
                    self._spill = None
                self.staging = BufferedStaging(self)
                self.staging.open(self._queue_info())
                self._staged_lsn = self.confirmed
            else:          # a BUFFERED run's leftovers (before a switch): staged again, persistent
                discard_earlier(self, self._queue_info())
        except DatabaseError as e:
            self._abort(e)
            raise
        # combined capture and apply is decided when the capture starts (seed 001); BUFFERED
        # staging keeps its own book of what consumers took (staging.py): it stages
        try:
            # (a spilled transaction is staged: its LCRs are in this store already)
            self.combined = None if self.staging is not None or self._spill is not None \
                else combined.route_for(self.conn, self.ctx, spec)
        except DatabaseError:       # a link or destination that cannot be asked: stage
            if self.conn.transaction_in_progress:
                self.conn.rollback()
            self.combined = None
        combined.record(self.ctx, self.name, self.combined)
        self.conn.commit()
        self._set_state("CAPTURING CHANGES")

    def _adopt(self, spec: specs.CaptureSpec) -> None:
        self.spec = spec
        self._catalog_version = self.ctx.catalog_version()
        roots = self.decoder.roots if self.decoder is not None else {}
        self.decoder = Decoder(spec.source_database, self._excluded(spec))
        self.decoder.roots = roots
        self._queue = self.conn.queue(spec.queue)
        self._agent = Agent(spec.name)
        rules = [rule for owner, name in ((spec.rule_set_owner, spec.rule_set_name),
                                          (spec.negative_rule_set_owner, spec.negative_rule_set_name))
                 if name is not None for rule in self.ctx.rule_set_rules(owner, name)]
        self._verdict = Prefilter(rules, self._evaluate)

    def _excluded(self, spec: specs.CaptureSpec) -> str | None:
        if spec.source_dsn:
            return parse_dsn(spec.source_dsn).schema
        pg = self.ctx.pg_target()
        return pg[1] if pg else None

    def stop(self) -> None:
        """Leave the source; V$STREAMS_CAPTURE no longer shows the process."""
        self._stop.set()
        if self.conn.transaction_in_progress:
            self.conn.rollback()
        self._leave_combined()
        self._close_staging()
        if self.source is not None:
            self.source.close()
            self.source = None
        if self.state is not None:
            try:
                self._write_now(_STATE, (specs.OWNER, self.name, None, time.time()))
            except DatabaseError:
                pass
            self.state = None

    def wait_for_redo(self, timeout: float | None = None) -> bool:
        """Sleep ``idle_wait`` (or ``timeout``) seconds unless :meth:`stop` is called;
        True when stopped."""
        return self._stop.wait(self.idle_wait if timeout is None else timeout)

    def run(self, stop: threading.Event | None = None) -> None:
        """Run until ``stop`` is set, :meth:`stop` is called or the capture is disabled
        or aborts (the error is raised then, the capture left ABORTED)."""
        self.start()
        self._run_stop = stop
        try:
            while not (stop is not None and stop.is_set()) and not self._stop.is_set():
                if not self.run_batch():
                    if self.spec is None:
                        return      # disabled meanwhile
                    if stop is not None:
                        if stop.wait(self.idle_wait):
                            return
                    else:
                        self.wait_for_redo()
        finally:
            self.stop()

    def stopping(self) -> bool:
        """Whether :meth:`stop` was called or ``run``'s stop event set (a wait inside a
        batch — flow control — ends then)."""
        return self._stop.is_set() or (self._run_stop is not None and self._run_stop.is_set())

    def catch_up(self, timeout: float = 60.0) -> int:
        """Capture everything committed before this call (tests, benchmarks); returns the
        number of source transactions read."""
        if self.source is None:
            self.start()
        target = self.source.current_lsn()
        end = time.monotonic() + timeout
        total = 0
        while True:
            n = self.run_batch(upto_lsn=target)
            total += n
            if not n and self._busy_since is None and not self._single \
                    and self.state != "PAUSED FOR FLOW CONTROL":   # (consumers drain meanwhile)
                if self.source is not None:
                    self.source.release()     # caught up: the slot is free for others now
                return total
            if time.monotonic() > end:
                raise ora(26744, f'"{self.name}"', "catching up", f"not done within {timeout} s")
            if not n:
                self.wait_for_redo(0.05)

    # -- one batch ---------------------------------------------------------------------
    def run_batch(self, upto_lsn: int | None = None) -> int:
        """Capture one batch; returns how many source transactions it consumed (0:
        nothing to do now).  :raises DatabaseError: the capture is ABORTED."""
        if self.source is None:
            self.start()
        if not self._definition_current():
            return 0
        spec = self.spec
        if not self.ctx.has_subscribers(self._queue_info()):
            self._set_state("WAITING FOR INACTIVE DEQUEUERS")
            return 0
        staging = self.staging
        backlog = 0
        if staging is not None:
            if staging.replay_wanted:
                self._replay()
            self._confirm()
            backlog = staging.backlog_rows
            if backlog >= 4 * self.max_changes:     # consumers behind: stop reading
                self._set_state("PAUSED FOR FLOW CONTROL")
                return 0
        try:
            # BUFFERED: the slot still holds what was staged and not consumed; a peek
            # re-reads it (``backlog`` rows) before the new changes
            rows, notices = self.source.peek(spec.slot, backlog + (1 if self._single else self.max_changes),
                                             upto_lsn, self._hold())
        except DatabaseError as e:
            if e.code == 54:          # another process still holds the slot (a killed one dying)
                return self._slot_busy(e)
            self._abort(e)
            raise
        self._busy_since = None
        # the catalog may have changed while the peek waited for changes (ALTER_CAPTURE's new
        # rule set, a rule added): changes committed after that are decided by the definition
        # as it is now. The peek moved nothing; the rows are decided after the re-read
        if rows and not self._definition_current():
            return 0
        if self.source.partial:
            return self._spill_part(rows, notices)
        txns = transactions(rows, self.decoder.kinds)
        if staging is not None:
            txns = [t for t in txns if t.end_lsn > self._staged_lsn]
        if any(t.ddl for t in txns):
            try:
                self._partitions()      # a partition may have come (or gone) with the DDL
            except DatabaseError as e:
                self._abort(e)
                raise
        if notices and self._relevant(notices, txns):
            if not self._single and len(txns) > 1:
                self._single = txns[-1].end_lsn   # find the transaction: one at a time up to here
                return 0
            error = self._no_identity_error(notices, txns)
            self._abort(error)
            raise error
        if self._single and txns and txns[-1].end_lsn >= self._single:
            self._single = False   # past the transactions the warning came from
        if not txns:
            if not rows:
                self._set_state("WAITING FOR REDO")
            return 0
        try:
            if staging is not None:
                self._stage(txns)
            elif self.commit_each_transaction:   # a queue commit each, the slot advanced once
                for i, txn in enumerate(txns):
                    self._capture([txn], advance=i == len(txns) - 1)
            else:
                self._capture(txns)
        except DatabaseError as e:
            self._failed(e)
            raise
        return len(txns)

    def _partitions(self) -> None:
        """Read which tables of the source are partitions, and of which table: PostgreSQL
        logs a change to a partitioned table under the partition holding the row, Oracle's
        LCR names the table (so do the rules ADD_TABLE_RULES makes for it).  Read when the
        process starts and after a batch with DDL, from the source's catalog as it is then
        (a partition created and dropped before the capture reads its changes is named as
        itself)."""
        self.decoder.roots = self.source.partition_roots()

    def _failed(self, e: DatabaseError) -> None:
        """A batch failed: roll back; ABORTED unless another copy superseded this one."""
        if self.conn.transaction_in_progress:
            self.conn.rollback()
        if e is not self._superseded:
            self._abort(e)

    def _queue_info(self) -> Any:
        return self.ctx.queue(self.spec.queue_owner, self.spec.queue_name)

    def _decode(self, fresh: list[SourceTransaction]) -> tuple[list, list, int, Any]:
        """The LCRs of ``fresh`` the rule sets accept (row migration done), the rows of
        DBA_STREAMS_UNSUPPORTED they call for, how many changes were captured and the last."""
        decoder = self.decoder
        lcrs: list[Any] = []
        unsupported: list[tuple] = []
        captured = 0
        last_captured = None
        for txn in fresh:
            for item in decoder.lcrs(txn):
                captured += 1
                if isinstance(item, Unsupported):
                    if self._verdict(item.lcr):
                        lcr = item.lcr
                        unsupported.append((lcr.get_object_owner(), lcr.get_object_name(),
                                            item.reason, "YES", specs.OWNER, self.name, lcr.get_scn(),
                                            time.time()))
                    continue
                last_captured = item
                self._hit = None
                if self._verdict(item):
                    # a subset rule's UPDATE moving a row in or out becomes an INSERT / DELETE
                    # (seed 000 "Row Migration During Capture"); a remembered verdict (the
                    # prefilter's) only exists for rules that read no values: no subset rules
                    hit = self._hit
                    lcrs.append(item if hit is None else migrate(item, hit))
        return lcrs, unsupported, captured, last_captured

    def _capture(self, txns: list[SourceTransaction], advance: bool = True) -> None:
        """Capture whole transactions in one queue transaction, then (``advance``) move the
        slot past them — advancing re-reads the log from the slot's restart point, so it is
        done once per read, not per transaction."""
        spec, ctx = self.spec, self.ctx
        fresh = [t for t in txns if t.commit_scn > self.captured_scn and t.commit_scn >= spec.start_scn]
        end_lsn = txns[-1].end_lsn
        spill = self._spill
        if spill is not None:
            if fresh and fresh[0].xid == spill.xid:     # the spilled transaction's end came
                self._capture_spilled(fresh[0])
                txns = [t for t in txns if t.end_lsn > fresh[0].end_lsn]
                fresh = fresh[1:]
                if not txns:
                    if advance:
                        self._advance(end_lsn)
                    return
            elif fresh or any(t.xid == spill.xid for t in txns):
                # left over: its transaction captured already (the slot had not moved past
                # it) or left out (ALTER_CAPTURE start_scn); any other comes after it
                spill.discard(ctx)
                if self.conn.transaction_in_progress:
                    self.conn.commit()
                self._spill = None
        lcrs, unsupported, captured, last_captured = self._decode(fresh)
        if not fresh or (not lcrs and not unsupported and not captured):
            if advance:                # nothing of these transactions reaches the store
                self._advance(end_lsn)
            if fresh:
                self.captured_scn = max(self.captured_scn, fresh[-1].commit_scn)
            return
        batch = None
        held: list[Any] = []
        if self.combined is not None:
            try:
                started = time.time()
                batch = self.combined.batch(lcrs)
                self.combined.send(batch, time.time() - started)
                enqueued = lcrs
                held = self.combined.held_back(lcrs)   # the local apply aborted: these stage
                if held:
                    self._enqueue(held)
            except DatabaseError:
                # the destination failed: stage from now on (the propagation job retries
                # and backs off; the apply's record of each transaction keeps it once)
                batch = None
                if self.conn.transaction_in_progress:
                    self.conn.rollback()
                self._leave_combined()
        if batch is None:
            enqueued = self._enqueue(lcrs)
        last = fresh[-1]
        self._write_position(last.end_lsn, last.commit_scn, captured, len(enqueued),
                             enqueued[-1] if enqueued else None, len(fresh), last_captured, unsupported)
        if batch is not None:
            self.combined.acknowledge(batch)    # let go: the receiver may prune
            if held:
                self._leave_combined()
        self.captured_scn = last.commit_scn
        if advance:
            self._advance(end_lsn)

    def _write_position(self, end_lsn: int, commit_scn: int, captured: int, enqueued: int,
                        last_enq: Any, txns: int, last_captured: Any, unsupported: list,
                        applied: bool = False) -> None:
        """Commit the position (CAPTURED_SCN = ``commit_scn``, and APPLIED_SCN with
        ``applied``) and counters (``enqueued`` LCRs, the last ``last_enq``) — with the
        batch's enqueues when there are some; fenced (see :meth:`_superseded_error`)."""
        now = time.time()
        params = (specs.OWNER, self.name, end_lsn, commit_scn,
                  last_enq.get_commit_scn() if last_enq else None, captured, enqueued, txns,
                  last_captured.get_scn() if last_captured else None,
                  _epoch(last_captured.get_source_time()) if last_captured else None, now,
                  last_enq.get_scn() if last_enq else None,
                  _epoch(last_enq.get_source_time()) if last_enq else None,
                  now if last_enq else None, now)

        def write(c: Any) -> None:
            if c.execute(_PROGRESS, (*params, self._stored_scn)).rowcount == 0:
                raise self._superseded_error()
            if applied:
                c.execute("UPDATE SLUICE_CAPTURE_PROGRESS SET APPLIED_SCN = ? WHERE OWNER = ? AND NAME = ?",
                          (commit_scn, specs.OWNER, self.name))
            for row in unsupported:
                c.execute(_UNSUPPORTED, row)
        self.ctx.add_commit_work(write)
        self.conn.commit()
        self.state = "CAPTURING CHANGES"
        self._stored_scn = commit_scn

    # -- TXN_LCR_SPILL_THRESHOLD (spill.py) ----------------------------------------------
    def _hold(self) -> int | None:
        """How many rows of one transaction a peek may hold (None: all of it).  BUFFERED
        staging and combined capture and apply take whole transactions from memory."""
        if self.staging is not None or self.combined is not None:
            return None
        return spills.threshold(self.spec.txn_lcr_spill_threshold)

    def _spill_part(self, rows: list[str], notices: list[str]) -> int:
        """The first part of a large transaction (``rows``, its begin row first): its LCRs
        the rules accept into the spill, one store commit; the stream then forgets them."""
        txn = transactions(rows, self.decoder.kinds, part=True)[0]
        try:
            if txn.ddl:
                self._partitions()
            if notices and self._relevant(notices, []):
                raise self._no_identity_error(notices, [])
            sp = self._spill
            if sp is not None and sp.xid != txn.xid:      # left over (see spill.py)
                sp.discard(self.ctx)
                sp = None
            if sp is None:
                sp = spills.CaptureSpill(specs.OWNER, self.name, txn.xid)
            # a stream opened again (a restart, an idle release) sends it from its first row:
            # what is spilled already is left out, by LSN (a part ends between two LSNs)
            txn.changes = [c for c in txn.changes if lsn_to_int(c["lsn"]) > sp.last_lsn]
            if txn.changes:
                txn.tag = sp.tag
                lcrs, unsupported, captured, last_captured = self._decode([txn])
                sp.add(self.ctx, lcrs, lsn_to_int(txn.changes[-1]["lsn"]), txn.tag, captured,
                       last_captured.get_scn() if last_captured is not None else None)
                if unsupported:
                    self.ctx.add_commit_work(lambda c: [c.execute(_UNSUPPORTED, row) for row in unsupported])
            if self.conn.transaction_in_progress:
                self.conn.commit()          # (nothing to write: nothing the rules accepted)
            self._spill = sp
        except DatabaseError as e:
            self._failed(e)
            raise
        self.source.spilled(len(rows))
        self._set_state("CAPTURING CHANGES")
        return 1

    def _capture_spilled(self, txn: SourceTransaction) -> None:
        """The end of the spilled transaction came (``txn``: its rows after the spilled
        part): the spilled LCRs, read back in chunks, then the rest, enqueued in order with
        its commit SCN in one store transaction with the position; the spill goes with it.
        Each chunk's queue records go to the queue table before the next chunk is read
        (StoreSession.write_commit_time_enqueues): memory is a chunk's, not the
        transaction's."""
        sp = self._spill
        txn.changes = [c for c in txn.changes if lsn_to_int(c["lsn"]) > sp.last_lsn]
        txn.tag = sp.tag
        lcrs, unsupported, captured, last_captured = self._decode([txn])
        enqueued, last_enq, last_spilled = 0, None, None
        for chunk in sp.lcrs(self.ctx, txn.commit_scn, txn.commit_time):
            kept = self._enqueue(chunk)
            enqueued += len(kept)
            last_enq = kept[-1] if kept else last_enq
            last_spilled = chunk[-1] if chunk else last_spilled
            # into the queue table now, numbered with the commit SCN drawn at the first
            # chunk: the session does not hold the transaction's records until the commit
            self.ctx.write_commit_time_enqueues()
        kept = self._enqueue(lcrs)
        enqueued += len(kept)
        last_enq = kept[-1] if kept else last_enq
        sp.discard(self.ctx)
        self._write_position(txn.end_lsn, txn.commit_scn, sp.captured + captured, enqueued, last_enq, 1,
                             last_captured or last_spilled, unsupported)
        self._spill = None
        self.captured_scn = txn.commit_scn

    # -- BUFFERED staging (staging.py) ---------------------------------------------------
    def _stage(self, txns: list[SourceTransaction]) -> None:
        """Stage whole transactions as buffered messages (no store transaction); the slot
        and the stored position move later, in :meth:`_confirm`, once consumers committed."""
        spec = self.spec
        fresh = [t for t in txns if t.commit_scn > self.captured_scn and t.commit_scn >= spec.start_scn]
        lcrs, unsupported, captured, last_captured = self._decode(fresh)
        if unsupported:
            self.ctx.add_commit_work(lambda c: [c.execute(_UNSUPPORTED, row) for row in unsupported])
            self.conn.commit()
        rows = sum(len(t.changes) + 2 for t in txns)      # B and C rows too: what a peek counts
        enqueued = self.staging.stage(lcrs, txns[-1].end_lsn, txns[-1].commit_scn, rows)
        self._staged_lsn = txns[-1].end_lsn
        if fresh:
            self.captured_scn = max(self.captured_scn, fresh[-1].commit_scn)
        u = self._unwritten
        u[0] += captured
        u[1] += len(enqueued)
        u[2] += len(fresh)
        u[3] = last_captured or u[3]
        u[4] = enqueued[-1] if enqueued else u[4]
        self._set_state("CAPTURING CHANGES")

    def _confirm(self) -> None:
        """Move the stored position, then the slot, past the batches consumers took and
        committed (DBA_CAPTURE.APPLIED_SCN is that position)."""
        batch = self.staging.confirmable()
        if batch is None:
            return
        u = self._unwritten
        if not u[0]:          # no change since the last write: only the slot moves (a write
            self._advance(batch.end_lsn)   # would be a transaction for the next peek to read)
            return
        commit_scn = max(batch.commit_scn, self._stored_scn)
        try:
            self._write_position(batch.end_lsn, commit_scn, u[0], u[1], u[4], u[2], u[3], [],
                                 applied=True)
        except DatabaseError as e:
            self._failed(e)
            raise
        self._unwritten = [0, 0, 0, None, None]
        self._advance(batch.end_lsn)

    def _replay(self) -> None:
        """A consumer rolled back LCRs it had taken out of memory (an apply process whose
        batch failed): stage again from the slot's confirmed position, as a restart would
        (seed 001: Oracle re-captures from the capture's checkpoint) — this run's memory and
        spilled LCRs go, each consumer gets again what it had not committed."""
        try:
            self.staging.open(self._queue_info())
        except DatabaseError as e:
            self._failed(e)
            raise
        self._staged_lsn = self.confirmed
        self.captured_scn = self._stored_scn

    def _close_staging(self) -> None:
        if self.staging is not None:
            self.staging.close()
            self.staging = None

    def _enqueue(self, lcrs: list[Any]) -> list[Any]:
        """Enqueue the LCRs (ON_COMMIT: part of the batch's transaction); returns those
        enqueued — a message no subscriber's rule accepts (ORA-24033) is discarded."""
        if not lcrs:
            return []
        conn, agent = self.conn, self._agent
        try:
            self._queue.enqmany([conn.msgproperties(payload=lcr, sender_id=agent) for lcr in lcrs])
            return lcrs
        except DatabaseError as e:
            if e.code != 24033:
                raise
        kept = []
        for lcr in lcrs:
            try:
                self._queue.enqone(conn.msgproperties(payload=lcr, sender_id=agent))
                kept.append(lcr)
            except DatabaseError as e:
                if e.code != 24033:
                    raise
        return kept

    def _evaluate(self, lcr: RowLCR | DDLLCR) -> bool:
        spec = self.spec
        verdict = evaluate_rule_sets(self.conn, lcr, spec.rule_set, spec.negative_rule_set)
        self._hit = verdict.rule        # the positive rule that was TRUE: row migration reads it
        return verdict.perform

    def _advance(self, lsn: int) -> None:
        if lsn > self.confirmed:
            try:
                self.source.advance(self.spec.slot, lsn)
            except DatabaseError as e:
                if e.code != 54:    # a slot in use: the next batch advances it
                    self._abort(e)
                    raise
                return
            self.confirmed = lsn

    # -- catalog changes, state, faults ------------------------------------------------
    def _definition_current(self) -> bool:
        """Re-read the definition if the catalog changed since; False when no longer enabled."""
        return self.ctx.catalog_version() == self._catalog_version or self._refresh()

    def _refresh(self) -> bool:
        """Re-read the definition after a catalog change; False when no longer enabled."""
        spec = specs.find(self.ctx, self.name)
        if spec is None or spec.status != specs.ENABLED:
            self.stop()
            self.spec = None
            return False
        self._adopt(spec)
        try:
            self._check_capture_user(spec)
        except DatabaseError as e:
            self._abort(e)
            raise
        if self.combined is not None and not self.combined.still_qualifies(self.ctx, spec):
            self._leave_combined()   # the topology no longer qualifies: stage (seed 001)
        return True

    def _check_capture_user(self, spec: specs.CaptureSpec) -> None:
        """Seed 001 "Secure Queues and Oracle Streams Clients": the capture_user runs the
        capture process, which enqueues as the AQ agent named like it — checked when the
        process starts and after every catalog change (with the definition), so that a
        REVOKE of ENQUEUE or a DISABLE_DB_ACCESS aborts a running capture before it enqueues
        again, and a new capture_user (ALTER_CAPTURE) is the one checked.  (The host runs
        every process on its own session; this is where the capture user's rights count.)"""
        check_capture_user(self.ctx, spec.name, spec.capture_user, spec.queue_owner, spec.queue_name)
        # and it evaluates the capture's rule sets: EXECUTE on them (Sluice's capture runs
        # no custom rule-based transformation)
        check_rule_sets(self.conn, spec.capture_user, spec.rule_set, spec.negative_rule_set)

    def _leave_combined(self) -> None:
        """Leave combined capture and apply: enqueue into the capture's queue from now on."""
        if self.combined is None:
            return
        self.combined.close()
        self.combined = None
        try:
            combined.record(self.ctx, self.name, None)
            self.conn.commit()
        except DatabaseError:
            pass        # the store may be what failed; the next start records it

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self._write_now(_STATE, (specs.OWNER, self.name, state, time.time()))
            self.state = state

    def _write_now(self, sql: str, params: tuple) -> None:
        """A write of its own (an otherwise empty transaction of the process's session)."""
        self.ctx.add_commit_work(lambda c: c.execute(sql, params))
        self.conn.commit()

    def _superseded_error(self) -> DatabaseError:
        """The fence of exactly once across hosts: the position is written only if it is
        still what this process read, so of two copies of one capture (a host that lost its
        lease and has not stopped its copy yet, beside the host that took over) only one
        commits a batch; the other's batch is rolled back and this error ends that copy,
        leaving the capture ENABLED for the one that goes on."""
        self._superseded = ora(26666, f'"{self.name}"', ": another copy of it committed a batch "
                                                         "meanwhile; this copy stops")
        return self._superseded

    def _slot_busy(self, e: DatabaseError) -> int:
        now = time.monotonic()
        if self._busy_since is None:
            self._busy_since = now
        elif now - self._busy_since > _SLOT_BUSY_PATIENCE:
            self._abort(e)
            raise e
        return 0

    def _abort(self, error: Exception) -> None:
        """ABORTED with the error in DBA_CAPTURE; the process is done."""
        try:
            if self.conn.transaction_in_progress:
                self.conn.rollback()
            spec = specs.find(self.ctx, self.name)
            if spec is not None:
                specs.save(self.ctx, spec.with_status(specs.ABORTED, error))
            self._write_now(_STATE, (specs.OWNER, self.name, None, time.time()))
        except DatabaseError:
            pass   # the store itself may be what failed: the error is raised anyway
        finally:
            self.state = None
            self._close_staging()
            if self.source is not None:
                self.source.close()
                self.source = None
            self.spec = None
            self._stop.set()

    def _relevant(self, notices: list[str], txns: list[SourceTransaction]) -> list[tuple]:
        """The decoder's warnings about changes it could not give (no replica identity)
        for tables this capture's rules would capture, in transactions not yet captured."""
        fresh = [t for t in txns if t.commit_scn > self.captured_scn and t.commit_scn >= self.spec.start_scn]
        if txns and not fresh:
            return []
        hits = []
        for text in notices:
            m = _NO_IDENTITY.search(text)
            if m is None:
                continue
            schema, table = self._split(m.group(2))
            if schema == self.decoder.exclude_schema:
                continue
            schema, table = self.decoder.root(schema, table)
            probe = RowLCR(self.spec.source_database, m.group(1).upper(), oracle_name(schema),
                           oracle_name(table))
            if self._verdict(probe):
                hits.append((m.group(1).upper(), oracle_name(schema), oracle_name(table)))
        return hits

    def _split(self, names: str) -> tuple[str, str]:
        """``schema"."table`` of a wal2json warning -> (schema, table).  A name holding
        ``"."`` makes several splits possible: the one naming a table of the source."""
        splits = [(names[:i], names[i + 3:]) for i in range(len(names)) if names.startswith('"."', i)]
        if len(splits) > 1 and self.source is not None:
            for schema, table in splits:
                if self.source.table_columns(schema, table) is not None:
                    return schema, table
        return splits[0] if splits else ("", names)

    def _no_identity_error(self, notices: list[str], txns: list[SourceTransaction]) -> DatabaseError:
        cmd, owner, table = self._relevant(notices, txns)[0]
        where = (f" in transaction {txns[0].xid} committed at SCN {txns[0].commit_scn}; "
                 f"ALTER_CAPTURE(start_scn => {txns[0].commit_scn + 1}) goes past it") if txns else ""
        args = (f'"{self.name}"', f'"{owner}"."{table}"',
                f"PostgreSQL logged {'an' if cmd[0] in 'AEIOU' else 'a'} {cmd} without the old key "
                f"(the table has no primary key and no REPLICA IDENTITY FULL), so the change "
                f"cannot be captured{where}")
        try:
            self.ctx.add_commit_work(lambda c: c.execute(_UNSUPPORTED, (
                owner, table, "no replica identity: UPDATE and DELETE cannot be "
                "captured", "NO", specs.OWNER, self.name, txns[0].commit_scn if txns else None,
                time.time())))
            self.conn.commit()
        except DatabaseError:
            pass
        return ora(26744, *args)


def _epoch(when: Any) -> float | None:
    return when.timestamp() if when is not None and hasattr(when, "timestamp") else None
