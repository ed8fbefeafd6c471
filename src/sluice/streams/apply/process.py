"""The apply process: from its queue, under its rule sets, into the target, exactly once.

A host (``sluice run``, or a test in-process) runs it::

    proc = ApplyProcess(conn, ApplyDefinition(name="APPLY1", queue_owner=…, queue_name=…))
    while not stopping:
        proc.run_batch()          # waits up to ``wait`` seconds for messages
    proc.stop()

**One batch.**  Dequeue (as the consumer named like the apply process) whole queue
transactions: the first call navigates with NEXT_TRANSACTION, then NEXT_MESSAGE finishes
the last group (seed 003 "Navigation of Messages in Dequeuing").  Each message goes
through the rule sets (:func:`sluice.streams.evaluate_rule_sets`, Table 6-1); the TRUE
rule migrates a row of a subset rule, performs its declarative transformations
(RENAME_SCHEMA …, :mod:`sluice.streams.transform`) and its action context may transform it
(``STREAMS$_TRANSFORM_FUNCTION``), enqueue it
elsewhere (``APPLY$_ENQUEUE``, SET_ENQUEUE_DESTINATION: in the dequeue's own store
transaction) and keep it from being executed (``APPLY$_EXECUTE`` = ``NO``, SET_EXECUTE).

The messages then form transactions (seed 001 Table 3-1): captured LCRs (they carry a
commit SCN) keep their source transaction — consecutive LCRs with the same source
database, transaction id and commit SCN — in a transactional queue or not; user-enqueued
messages form one transaction per queue transaction in a transactional queue, one per
message in a nontransactional one.  Each is applied by :class:`~.engine.ApplyEngine` as one
target transaction, in queue order (= source commit order in a commit-time queue), with
its low-watermark.  A transaction that fails goes, whole, to the error queue — also one
whose target COMMIT is refused (a deferred constraint: ORA-02091, :mod:`.engine`), found
when the next transaction is applied (its statements, sent behind that COMMIT, never ran:
it is applied again) or when the batch settles; the dequeue, the error rows and the
store's copy of the low-watermark commit together.

**Exactly once.**  Killed after a target commit but before the store commit, the process
gets the same messages again; the target's record of each transaction (SLUICE_APPLY_DONE)
says it was applied and it is skipped.  The records of a batch are deleted in the next
target transaction once the batch's dequeue has committed.

**apply_captured** (DBA_APPLY): a process that applies captured LCRs lets user-enqueued
messages go, and one that applies user-enqueued messages lets captured LCRs (those with a
commit SCN) go — in Oracle the other kind never reaches it.

**Buffered queue** (seed 001: a capture process stages captured LCRs in the buffered queue
and an apply process with apply_captured dequeues them there): when a capture of this
process stages into the apply's queue (STAGING = BUFFERED), a batch that finds nothing
persistent reads the buffered LCRs (:mod:`.bufferedreader`: memory and what spilled, in
order, whole source transactions); its commit tells the capture how far the apply got, and
the capture's slot moves only past that.  txn_lcr_spill_threshold holds there too: past it
a transaction's LCRs go to the spill table in that commit (:mod:`.spill`).

**disable_on_error** (SET_PARAMETER, default ``Y`` as in Oracle): the first transaction that
fails goes to the error queue and the process stops, ABORTED, with the error; the
transactions after it in the batch stay in the queue.  With ``N`` it goes on.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from ... import constants as C
from ...aq.payload import ANYDATA, PayloadCodec
from ...errors import DatabaseError, Error, ora
from ...names import qualified
from ...routines import registered_function
from ..lcr import DDLLCR, RowLCR
from ..rowmigration import migrate
from ..rulesets import evaluate_rule_sets
from ..transform import transform
from ..transform.adm import declarative_transformations
from ..capture.context import CaptureContext
from ..clientrights import check_apply_user, check_rule_sets
from . import errorqueue, spill
from .definition import ApplyDefinition, engine_for, find_definition, handlers_for, load
from .bufferedreader import BufferedReader, consumed_marks
from .engine import ApplyError, CommitFailed, Item, SourceTxn
from .parallel import ParallelApply
from .servers import ServerProcesses

__all__ = ["ApplyProcess", "custom_transformation", "rule_actions"]

_STATE = """INSERT INTO SLUICE_APPLY_STATE (APPLY_NAME, STATE, STARTUP_TIME, PARALLELISM,
    TOTAL_MESSAGES_DEQUEUED, TOTAL_RECEIVED, TOTAL_APPLIED, TOTAL_ERRORS, TOTAL_MESSAGES_APPLIED,
    DEQUEUE_TIME, DEQUEUED_MESSAGE_NUMBER, HWM_MESSAGE_NUMBER, HWM_TIME, APPLY_TIME)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (APPLY_NAME) DO UPDATE SET STATE = excluded.STATE, STARTUP_TIME = excluded.STARTUP_TIME,
    PARALLELISM = excluded.PARALLELISM, TOTAL_MESSAGES_DEQUEUED = excluded.TOTAL_MESSAGES_DEQUEUED,
    TOTAL_RECEIVED = excluded.TOTAL_RECEIVED, TOTAL_APPLIED = excluded.TOTAL_APPLIED,
    TOTAL_ERRORS = excluded.TOTAL_ERRORS, TOTAL_MESSAGES_APPLIED = excluded.TOTAL_MESSAGES_APPLIED,
    DEQUEUE_TIME = excluded.DEQUEUE_TIME, DEQUEUED_MESSAGE_NUMBER = excluded.DEQUEUED_MESSAGE_NUMBER,
    HWM_MESSAGE_NUMBER = excluded.HWM_MESSAGE_NUMBER, HWM_TIME = excluded.HWM_TIME,
    APPLY_TIME = excluded.APPLY_TIME"""
_PROGRESS = """INSERT INTO SLUICE_APPLY_PROGRESS (APPLY_NAME, SOURCE_DATABASE, APPLIED_MESSAGE_NUMBER,
    SOURCE_TRANSACTION_ID, APPLY_TIME, APPLIED_MESSAGE_CREATE_TIME) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (APPLY_NAME, SOURCE_DATABASE) DO UPDATE SET
    APPLIED_MESSAGE_NUMBER = excluded.APPLIED_MESSAGE_NUMBER,
    SOURCE_TRANSACTION_ID = excluded.SOURCE_TRANSACTION_ID, APPLY_TIME = excluded.APPLY_TIME,
    APPLIED_MESSAGE_CREATE_TIME = excluded.APPLIED_MESSAGE_CREATE_TIME"""


class ApplyProcess:
    """One apply process on a session of its own (``conn``)."""

    def __init__(self, conn: Any, definition: ApplyDefinition, *, batch: int = 2000,
                 wait: float = 1.0) -> None:
        self.conn = conn
        self.ctx = CaptureContext(conn)
        self.d = definition
        self.batch, self.wait = batch, wait
        self.engine = engine_for(conn, definition.name, definition.apply_database_link,
                                 definition.apply_tag, definition)
        parallelism = int(definition.parameter("PARALLELISM"))
        self.parallel = None
        if parallelism > 1 and self.engine.target.dialect == "sqlite":
            parallelism = 1     # SQLite has one writer at a time: servers would only queue up
        ordered = definition.parameter("COMMIT_SERIALIZATION") == "FULL"
        if parallelism > 1 and definition.precommit_handler is None:
            # apply servers as processes (servers.py); the coordinator applies what needs handlers
            self.parallel = ServerProcesses(self.engine, parallelism, ordered)
        elif parallelism > 1:   # a precommit handler (a callable) runs for every transaction: threads
            # server 0 is self.engine; the others have connections of their own
            self.parallel = ParallelApply(lambda i: self.engine if i == 0 else engine_for(
                conn, definition.name, definition.apply_database_link, definition.apply_tag, definition,
                server_id=i), parallelism, ordered=ordered)
        self.queue = conn.queue(f'"{definition.queue_owner}"."{definition.queue_name}"')
        self._buffered = BufferedReader(conn, definition.queue_owner, definition.queue_name, definition.name)
        self._staged_before = False     # a capture staged buffered LCRs at the last read
        # what it took of each capture's buffered LCRs: let go when they come again persistent
        self._marks = consumed_marks(self.ctx, definition.name) if definition.apply_captured else {}
        info = self.ctx.queue(definition.queue_owner, definition.queue_name)
        self.transactional = info.table.message_grouping == "TRANSACTIONAL"
        self._encode = errorqueue.codec_encoder(self.ctx, definition.queue_owner, definition.queue_name)
        self._decode = errorqueue.codec_decoder(self.ctx, definition.queue_owner, definition.queue_name)
        self._spill = spill.load(self.ctx, definition.name)   # a large transaction being read
        self._errored = errorqueue.errored_transactions(self.ctx, definition.name)
        self._forget: list[str] = []
        self._first = True
        self._catalog_version: int | None = None     # set when it follows DBA_APPLY
        self._apply_user_checked = -1                # the catalog version the apply user was checked at
        self._declared: dict[str, list] = {}
        self._declared_version = -1
        self.state = "IDLE"
        self.error: DatabaseError | None = None
        self.total_errors = 0
        self.startup_time = time.time()
        self.counters = {"dequeued": 0, "received": 0, "applied": 0, "messages_applied": 0,
                         "dequeue_time": None, "dequeued_scn": None, "hwm": None, "hwm_time": None,
                         "apply_time": None}
        self._stop = threading.Event()

    @classmethod
    def from_catalog(cls, conn: Any, apply_name: str, **kw: Any) -> "ApplyProcess":
        """The apply process as DBA_APPLY defines it; it follows ALTER_APPLY and
        SET_PARAMETER while it runs (its next batch).  :raises: ORA-26701."""
        ctx = CaptureContext(conn)
        version = ctx.catalog_version()
        proc = cls(conn, load(ctx, apply_name), **kw)
        proc._catalog_version = version
        return proc

    def _follow_catalog(self) -> None:
        """Re-read the definition after a catalog change: rule sets, handlers, apply tag,
        parameters (all but parallelism, which takes a restart: START_APPLY after STOP_APPLY)."""
        version = self.ctx.catalog_version()
        if version == self._catalog_version:
            return
        self._catalog_version = version
        d = find_definition(self.ctx, self.d.name)
        if d is None:
            return             # dropped: the host stops it
        self.d = d
        if isinstance(self.parallel, ServerProcesses):
            self.parallel.follow(handlers_for(d, self.ctx), d.apply_tag)
            return
        for engine in (self.parallel.engines if self.parallel is not None else [self.engine]):
            engine.handlers = handlers_for(d, self.ctx)
            engine.tag = d.apply_tag

    def _check_apply_user(self) -> None:
        """Seed 001 "Secure Queues and Oracle Streams Clients": the apply_user runs the apply
        process, which dequeues as the AQ agent named like it — checked before the first
        batch and again after every catalog change, so that a REVOKE of DEQUEUE or a
        DISABLE_DB_ACCESS stops a running process (ABORTED, with the error) before it takes
        another message, and a new apply_user (ALTER_APPLY) is the one checked.  (The host
        runs every process on its own session; this is where the apply user's rights count.)"""
        user = self.d.apply_user
        version = self.ctx.catalog_version()
        if user is None or version == self._apply_user_checked:
            return
        check_apply_user(self.ctx, self.d.name, user, self.d.queue_owner, self.d.queue_name)
        # it evaluates the apply's rule sets and calls its rules' custom transformations,
        # resolved as custom_transformation resolves them
        check_rule_sets(self.conn, user, self.d.rule_set, self.d.negative_rule_set,
                        lambda name: qualified(name, self.ctx.username, "function name"))
        self._apply_user_checked = version

    # -- life cycle ------------------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()
        try:
            if self.conn.transaction_in_progress:
                self.conn.rollback()
            self.state = None      # V$STREAMS_APPLY_* no longer show it
            self.ctx.add_commit_work(self._state_work())
            self.conn.commit()
        except DatabaseError:
            pass                   # the store may be what failed
        finally:
            self.release()

    def release(self) -> None:
        """Let the target go (its sessions, or the apply servers')."""
        if self.parallel is not None:
            self.parallel.close()
        else:
            self.engine.target.close()

    def _state_work(self) -> Any:
        c = self.counters
        row = (self.d.name, self.state, self.startup_time, int(self.d.parameter("PARALLELISM")),
               c["dequeued"], c["received"], c["applied"], self.total_errors, c["messages_applied"],
               c["dequeue_time"], c["dequeued_scn"], c["hwm"], c["hwm_time"], c["apply_time"])
        return lambda conn: conn.execute(_STATE, row)

    def run(self, stop: threading.Event | None = None) -> None:
        """Apply until ``stop`` is set or the process aborts (disable_on_error: DBA_APPLY then
        shows it ABORTED with the error, which is raised)."""
        try:
            while not self._stop.is_set() and not (stop is not None and stop.is_set()):
                self.run_batch()
                if self.state == "ABORTED":
                    self._record_abort()
                    raise self.error
        finally:
            self.stop()

    def _record_abort(self) -> None:
        from .definition import find_spec, set_status
        if find_spec(self.ctx, self.d.name) is not None:
            set_status(self.ctx, self.d.name, "ABORTED", self.error)

    def drain(self, timeout: float = 60.0) -> int:
        """Apply everything in the queue now (tests); the number of messages taken."""
        total, end = 0, time.monotonic() + timeout
        while time.monotonic() < end:
            n = self.run_batch(wait=0)
            total += n
            if not n or self.state == "ABORTED":
                return total
        raise ora(26714, f"apply process {self.d.name} did not drain its queue within {timeout} s")

    # -- one batch ----------------------------------------------------------------------------
    def _dequeue(self, wait: float, limit: int | None) -> tuple[list[Any], bool]:
        """The next messages, ending with a whole queue transaction — unless a captured one
        has more than ``limit`` (txn_lcr_spill_threshold) messages: reading stops there
        (False: the last transaction goes on in the queue; :mod:`.spill`).  While a buffered
        transaction is spilled only the buffered queue is read, its rest first: ([], False)
        until that is staged."""
        q = self.queue
        opts = q.deqoptions
        opts.consumername = self.d.name
        staged = self.d.apply_captured and self._buffered.staged()
        if self._staged_before and not staged:     # its capture stopped: (perhaps) switched
            self._marks = consumed_marks(self.ctx, self.d.name)
        self._staged_before = staged
        buffered_wait = wait
        self._buffered.taken = set()
        sp = self._spill
        through = None
        if sp is not None and sp.buffered:
            # the rest of a buffered transaction being spilled comes staged, before anything
            # else of its capture; nothing persistent may come between (it would end it) --
            # unless that capture stages PERSISTENT now: then the rest comes in the queue
            if staged:
                self._first = True
                return self._buffered.read(self.batch, buffered_wait, limit, sp.key)
            through = spill.captured_through(self.ctx, self.d.queue_owner, self.d.queue_name, sp)
            if through is None:
                self._stop.wait(max(0.0, wait))    # its capture is not running: wait for it
                return [], False
        if staged:      # a capture of this process stages buffered LCRs: the persistent
            wait = 0    # part is looked at (what is left from before), the buffered one waited on
        opts.wait = C.DEQ_NO_WAIT if wait <= 0 else max(1, int(round(wait)))
        opts.navigation = C.DEQ_FIRST_MSG if self._first else C.DEQ_NEXT_TRANSACTION
        chunk = self.batch if limit is None else max(1, min(self.batch, limit))
        msgs = q.deqmany(chunk)
        self._first = False
        if not msgs and staged:
            self._first = True    # (the buffered reads move the session's position)
            return self._buffered.read(self.batch, buffered_wait, limit)
        if not msgs:    # (a switched buffered spill is whole only once its capture passed it)
            return msgs, through is not False
        if not self.transactional:
            return msgs, True
        opts.wait = C.DEQ_NO_WAIT
        opts.navigation = C.DEQ_NEXT_MSG
        while True:     # the rest of the last queue transaction
            if limit is not None and self.d.apply_captured and self._over(msgs, limit):
                return msgs, False
            try:
                more = q.deqmany(chunk)
            except DatabaseError as e:
                if e.code == 25235:     # end of the transaction group
                    break
                raise
            if not more:
                break
            msgs += more
        return msgs, True

    @staticmethod
    def _over(msgs: list[Any], limit: int) -> bool:
        """Whether the last queue transaction read holds more than ``limit`` captured LCRs."""
        last = msgs[-1]
        payload = last.payload
        if not (isinstance(payload, (RowLCR, DDLLCR)) and payload.get_commit_scn() is not None):
            return False
        if len(msgs) <= limit:
            return False
        group = last.transaction_group
        return all(m.transaction_group == group for m in msgs[-limit - 1:])

    def run_batch(self, wait: float | None = None) -> int:
        """Dequeue and apply one batch; the number of messages taken off the queue."""
        if self.state == "ABORTED":
            return 0
        if self._catalog_version is not None:
            self._follow_catalog()
        try:
            self._check_apply_user()
        except DatabaseError as e:
            self.error, self.state = e, "ABORTED"
            return 0
        limit = spill.threshold(self.d.parameter("TXN_LCR_SPILL_THRESHOLD"))
        try:
            msgs, whole = self._dequeue(self.wait if wait is None else wait, limit)
        except DatabaseError:
            self._first = True
            raise
        if not whole:
            self._first = True     # the rest of the last transaction is next (not the next one)
        if not msgs and (self._spill is None or not whole):    # (a spill's rest not staged yet)
            if self.state != "IDLE":
                self.state = "IDLE"
                self.ctx.add_commit_work(self._state_work())
                self.conn.commit()
            return 0
        self.state = "APPLYING"
        c = self.counters
        c["dequeued"] += len(msgs)
        c["dequeue_time"] = time.time()
        try:
            txns = self._transactions(msgs)
        except TransformationFailed as disabled:
            self.conn.rollback()          # the batch goes back to the queue, untouched
            self._first = True
            self.error, self.state = disabled.error, "ABORTED"
            return 0
        spilled = self._spill_step(txns, whole)
        if spilled is None and not txns:          # all of it spilled: read on next time
            self.ctx.add_commit_work(self._state_work())
            self.conn.commit()
            return len(msgs)
        c["received"] += len(txns) + (spilled is not None)
        last = msgs[-1].payload if msgs else None
        c["dequeued_scn"] = last.get_scn() if isinstance(last, (RowLCR, DDLLCR)) else c["dequeued_scn"]
        self._apply(txns, spilled)
        return len(msgs)

    def apply_handed(self, lcrs: list[Any]) -> tuple[list[tuple], list[str]]:
        """Combined capture and apply at one database (seed 001; :mod:`..capture.combinedlocal`):
        apply captured LCRs the capture hands over in memory -- whole source transactions in
        commit order, as a dequeue would give them -- leaving this process's store work
        (progress, counters, error queue rows) in the session's transaction for the
        capture to commit with its position.  Returns the keys (source database,
        transaction id, commit SCN) of the transactions it did not apply because it
        aborted (disable_on_error: the capture stages them for the apply's restart) and the
        SLUICE_APPLY_DONE records to forget once that commit is done (:meth:`forget`)."""
        if self.state == "ABORTED":
            raise ora(26714, f"apply process {self.d.name} is aborted")
        if self._catalog_version is not None:
            self._follow_catalog()
        try:     # handed over, not dequeued: still the apply user's to take (clientrights)
            self._check_apply_user()
        except DatabaseError as e:
            self.error, self.state = e, "ABORTED"
            self._record_abort()
            keys = dict.fromkeys((x.get_source_database_name(), x.get_transaction_id(),
                                  x.get_commit_scn()) for x in lcrs)
            return list(keys), []
        self.state = "APPLYING"
        c = self.counters
        c["dequeued"] += len(lcrs)
        c["dequeue_time"] = time.time()
        try:
            txns = self._transactions([_Handed(lcr) for lcr in lcrs])
        except TransformationFailed as disabled:     # the capture stops with it, staging nothing past it
            raise disabled.error from None
        c["received"] += len(txns)
        if lcrs:
            c["dequeued_scn"] = lcrs[-1].get_scn()
        rest, done = self._apply(txns, None, commit=False)
        return [(t.source_database, t.transaction_id, t.commit_scn) for t in rest], done

    def hand_back(self) -> None:
        """The capture stops handing LCRs over: V$STREAMS_APPLY_* show the apply idle (its
        state row is the apply process's; commit work)."""
        self.state = "IDLE"
        self.ctx.add_commit_work(self._state_work())

    def forget(self, done: list[str]) -> None:
        """The records of transactions whose store commit is done: deleted in the next
        target transaction."""
        self._forget += done

    def _apply(self, txns: list[SourceTxn], spilled: SourceTxn | None, *,
               commit: bool = True) -> tuple[list[SourceTxn], list[str]]:
        """Apply ``txns`` (after ``spilled``) and commit the store's side with ``commit``.
        Returns the transactions left unapplied because the process aborted, and the
        SLUICE_APPLY_DONE records of this batch (forgotten here after the commit, or by the
        caller that commits)."""
        c = self.counters
        progress: dict[str, tuple] = {}
        done_now: list[str] = []      # SLUICE_APPLY_DONE records: forgotten once this batch commits
        todo = [t for t in txns if not self._is_errored(t)]
        if spilled is not None and not self._is_errored(spilled):
            todo.insert(0, spilled)
        if todo:
            todo[0].forget, self._forget = self._forget, []
        for txn, result in self._outcomes(todo):
            if isinstance(result, ApplyError):
                failure = result
                self._forget = txn.forget + self._forget
                self.total_errors += 1
                self.error = failure.error
                if self.d.parameter("DISABLE_ON_ERROR") == "Y":
                    self._settle()
                    self.conn.rollback()           # this batch goes back to the queue …
                    self._consume(txn)             # … but the failed one, which the error queue takes
                    errorqueue.record(self.ctx, self.d.name, (self.d.queue_owner, self.d.queue_name),
                                      txn, failure, self._encode, self.d.apply_database_link,
                                      self.d.apply_tag)
                    if isinstance(txn.items, spill.SpilledItems):
                        spill.discard(self.ctx, self.d.name)
                    if commit:
                        self.conn.commit()         # … except what just failed, now an error
                        self._spill = spill.load(self.ctx, self.d.name)
                    else:
                        # handed over: the error and ABORTED commit now; a crash before the
                        # capture's commit replays the batch, staged (the apply no longer
                        # qualifies), where the error queue and SLUICE_APPLY_DONE skip it
                        self._record_abort()
                    self._note_errored(txn)
                    self._forget = []
                    self.state = "ABORTED"
                    self._first = True
                    # by identity: list.index compares transactions by value, reading
                    # every LCR's values (the failed one's may be what cannot be read)
                    at = next(i for i, t in enumerate(todo) if t is txn)
                    return todo[at + 1:], []
                errorqueue.record(self.ctx, self.d.name, (self.d.queue_owner, self.d.queue_name),
                                  txn, failure, self._encode, self.d.apply_database_link, self.d.apply_tag)
                self._note_errored(txn)
                continue
            ident = self.engine.ident(txn)
            if ident is not None:
                done_now.append(ident)
            c["applied"] += 1
            c["messages_applied"] += len(txn.items)
            c["apply_time"] = time.time()
            if txn.commit_scn is not None:
                c["hwm"], c["hwm_time"] = txn.commit_scn, c["apply_time"]
            if txn.kind == "CAPTURED" and txn.commit_scn is not None:
                first = txn.items[0].message if txn.items else None
                progress[txn.source_database] = (self.d.name, txn.source_database, txn.commit_scn,
                                                 txn.transaction_id, time.time(),
                                                 _epoch(first.get_source_time()) if first is not None else None)
        self._settle()     # every target commit done before the dequeue commits
        rows = list(progress.values())
        if rows:
            self.ctx.add_commit_work(lambda conn: [conn.execute(_PROGRESS, r) for r in rows])
        self.ctx.add_commit_work(self._state_work())
        if not commit:
            return [], done_now
        self.conn.commit()
        self._forget += done_now
        return [], []

    def _consume(self, txn: SourceTxn) -> None:
        """Take ``txn``'s messages off the queue (by message id) in the transaction that puts
        it in the error queue: as in Oracle, it is then only there — a restart does not meet it
        again, even after EXECUTE_ERROR has applied it and deleted its error row."""
        opts = self.queue.deqoptions
        saved = opts.msgid, opts.wait
        opts.wait = C.DEQ_NO_WAIT
        try:
            for msgid in txn.msgids:
                if msgid in self._buffered.taken:
                    continue               # a buffered LCR: out of memory already
                opts.msgid = msgid
                self.queue.deqone()        # (None: gone already, another copy took it)
        finally:
            opts.msgid, opts.wait = saved

    def _settle(self) -> None:
        """The serial engine's last target commit (``commit_later``) known to have succeeded
        (else its DatabaseError: the batch is not committed, its messages come again and
        SLUICE_APPLY_DONE skips what the target has)."""
        if self.parallel is None:
            self.engine.settle()

    def _spill_step(self, txns: list[SourceTxn], whole: bool) -> SourceTxn | None:
        """txn_lcr_spill_threshold (:mod:`.spill`): the leading part of ``txns`` that continues
        the spilled transaction joins it; a last transaction read only in part spills (both
        taken out of ``txns``).  The spilled transaction once it is complete (else None)."""
        sp, ready = self._spill, None
        if sp is not None:
            tail = txns.pop(0).items if txns and txns[0].kind == "CAPTURED" and \
                (txns[0].source_database, txns[0].transaction_id, txns[0].commit_scn) == sp.key else []
            if txns or whole:
                ready = sp.transaction(self.ctx, self._decode, tail)
                sp.discard(self.ctx)
                self._spill = None
            else:
                sp.add(self.ctx, tail, self._encode)
        if not whole and txns and self._spill is None:
            last = txns.pop()
            self._spill = spill.Spill(self.d.name, last.source_database, last.transaction_id, last.commit_scn,
                                      buffered=bool(self._buffered.taken))
            self._spill.add(self.ctx, last.items, self._encode)
        return ready

    def _outcomes(self, txns: list[SourceTxn]) -> Any:
        """``(transaction, True / False / ApplyError)`` in order; serially, each is applied
        when it is asked for (so a stop after an error leaves the rest untouched).  A spilled
        transaction (first, if any) is applied serially: its LCRs come from the store."""
        stop = self.d.parameter("DISABLE_ON_ERROR") == "Y"
        if txns and isinstance(txns[0].items, spill.SpilledItems):
            try:
                yield txns[0], self.engine.apply(txns[0])
            except ApplyError as failure:
                yield txns[0], failure
                if stop:
                    return
            txns = txns[1:]
        if self.parallel is not None:
            for txn, result in zip(txns, self.parallel.apply_all(txns, stop_on_error=stop)):
                if result is not None:
                    yield txn, result
            return
        engine, i = self.engine, 0
        group_rows = int(self.d.parameter("GROUPTRANSOPS"))
        held: SourceTxn | None = None    # applied with commit_later: its COMMIT's outcome not read
        while i < len(txns):
            # with GROUPTRANSOPS > 1, consecutive plain transactions share a target transaction
            # (ApplyEngine.apply_group); if that does not go through cleanly they are applied
            # one at a time below
            j, rows = i, 0
            while j < len(txns) and rows + len(txns[j].items) <= group_rows and engine.groupable(txns[j]):
                rows += len(txns[j].items)
                j += 1
            if j - i >= 2:
                yield from self._settled(held)
                held = None
                if engine.apply_group(txns[i:j]):
                    for txn in txns[i:j]:
                        yield txn, True
                    i = j
                    continue
            k, end = i, max(j, i + 1)
            while k < end:
                txn = txns[k]
                try:
                    # its target commit goes on while the next one is read and built (built
                    # while the target runs this one's statements): it is reported once the
                    # next apply (or _settled) has read that COMMIT's outcome
                    result = engine.apply(txn, commit_later=True,
                                          upcoming=txns[k + 1] if k + 1 < len(txns) else None)
                except CommitFailed as refused:    # the held one's COMMIT: its error
                    held = None
                    yield refused.txn, refused.failure
                    continue        # txn's statements rode behind that COMMIT, never ran: again
                except ApplyError as failure:
                    if held is not None:       # (the target answered: the held COMMIT went through)
                        yield held, True
                    held = None
                    yield txn, failure
                    k += 1
                    continue
                if held is not None:
                    yield held, True
                held = txn if result else None
                if not result:
                    yield txn, False
                k += 1
            i = end
        yield from self._settled(held)

    def _settled(self, held: SourceTxn | None) -> Any:
        """``(held, True)`` once the serial engine's last COMMIT (``commit_later``) is known to
        have succeeded, ``(held, its ApplyError)`` when the target refused it."""
        if held is None:
            return
        try:
            self.engine.settle()
        except CommitFailed as refused:
            yield refused.txn, refused.failure
            return
        yield held, True

    def _declarative(self, rule: str) -> list:
        """The declarative transformations of ``rule`` (DBMS_STREAMS_ADM.RENAME_SCHEMA …),
        read again when the catalog changes."""
        version = self.ctx.catalog_version()
        if version != self._declared_version:
            self._declared = declarative_transformations(self.ctx.store)
            self._declared_version = version
        return self._declared.get(rule, [])

    def _is_errored(self, txn: SourceTxn) -> bool:
        if not self._errored:
            return False
        if txn.kind == "CAPTURED":
            return (txn.source_database, txn.commit_scn) in self._errored
        return ("IDENT", txn.ident) in self._errored

    def _note_errored(self, txn: SourceTxn) -> None:
        if txn.kind == "CAPTURED":
            self._errored.add((txn.source_database, txn.commit_scn))
        elif txn.ident:
            self._errored.add(("IDENT", txn.ident))

    # -- messages into transactions --------------------------------------------------------------
    def _transactions(self, msgs: list[Any]) -> list[SourceTxn]:
        out: list[SourceTxn] = []
        current: SourceTxn | None = None
        current_key: Any = None
        d = self.d
        for m in msgs:
            message = m.payload
            captured = isinstance(message, (RowLCR, DDLLCR)) and message.get_commit_scn() is not None
            if captured != d.apply_captured:
                # DBA_APPLY.APPLY_CAPTURED: an apply process applies captured LCRs or
                # user-enqueued messages, not both; the other kind is another apply
                # process's (each subscriber has its own copy: this one's is let go)
                self.counters["ignored"] = self.counters.get("ignored", 0) + 1
                continue
            if captured and self._marks and m.sender_id is not None and m.sender_id.name in self._marks:
                if (message.get_commit_scn(), message.get_scn()) <= self._marks[m.sender_id.name]:
                    continue      # taken from the buffered queue before its capture's switch
                del self._marks[m.sender_id.name]     # its capture's stream is past that now
            if captured:
                key = ("C", message.get_source_database_name(), message.get_transaction_id(),
                       message.get_commit_scn())
            elif self.transactional:
                key = ("U", m.transaction_group)
            else:
                key = ("M", m.msgid)
            if key != current_key or current is None:
                if captured:
                    current = SourceTxn([], "CAPTURED", key[1], key[3], key[2])
                else:
                    current = SourceTxn([], "USER", ident=m.msgid.hex())
                out.append(current)
                current_key = key
            if m.msgid is not None:
                current.msgids.append(m.msgid)
            item = self._item(message, d)
            if item is not None:
                current.items.append(item)
        return [t for t in out if t.items or t.kind == "CAPTURED"]

    def _item(self, message: Any, d: ApplyDefinition) -> Item | None:
        """The message as its rule leaves it (None: the rule sets discard it)."""
        if d.rule_set is None and d.negative_rule_set is None:
            return Item(message)
        verdict = evaluate_rule_sets(self.conn, message, d.rule_set, d.negative_rule_set)
        if not verdict.perform:
            return None
        message = migrate(message, verdict.rule)      # a subset rule's row migration (seed 000)
        if verdict.rule is not None:                  # declarative transformations come first,
            declared = self._declarative(verdict.rule.rule_name)    # then a custom one (seed 000)
            if declared:
                message = transform(message, declared)
        actx = verdict.rule.rule_action_context if verdict.rule is not None else None
        return rule_actions(message, actx, self.ctx.username,
                            lambda queue, m: self.conn.queue(queue).enqone(self.conn.msgproperties(payload=m)))


class TransformationFailed(Exception):
    """A custom rule-based transformation failed (``error``): the apply stops, ABORTED
    with that error, as Oracle disables it; the messages stay in the queue (they are
    neither applied untransformed nor put in the error queue, whose EXECUTE_ERROR would
    apply them untransformed), so START_APPLY, once the function is mended, applies them.
    The Python apply process and the Spark apply sink both stop so."""

    def __init__(self, error: DatabaseError) -> None:
        super().__init__(str(error))
        self.error = error


# what a transformation may return besides an LCR: a value some ANYDATA queue can hold
_ANYDATA = PayloadCodec(ANYDATA, None, lambda _name: None)


def custom_transformation(message: Any, actx: Any, username: str) -> Any:
    """``message`` after the TRUE rule's custom rule-based transformation
    (``STREAMS$_TRANSFORM_FUNCTION`` in its action context ``actx``: a function registered
    by name, resolved in ``username``'s schema); None: it discards the message.
    :raises: ORA-00904 when the name is not registered; the function's own sluice.Error;
        ORA-26714 for any other exception it raises or for a result no queue can hold."""
    custom = actx.get_value("STREAMS$_TRANSFORM_FUNCTION") if actx is not None else None
    if custom is None or not custom.value:
        return message
    name = str(custom.value)
    function = registered_function(name, username)
    try:
        result = function(message)
    except Error:
        raise
    except Exception as e:      # noqa: BLE001 (a user's function: any failure is its error)
        raise ora(26714, f"custom rule-based transformation {name} failed: {type(e).__name__}: {e}") from None
    if result is not None and not isinstance(result, (RowLCR, DDLLCR)):
        try:
            _ANYDATA.encode(result)
        except Error:
            raise ora(26714, f"custom rule-based transformation {name} returned a "
                             f"{type(result).__name__} no queue can hold") from None
    return result


def rule_actions(message: Any, actx: Any, username: str, enqueue: Callable[[str, Any], Any]) -> Item | None:
    """What the TRUE apply rule's action context ``actx`` does to ``message`` after its
    declarative transformations (seed 000 "Purposes of Action Contexts in Streams"): its
    custom rule-based transformation (``STREAMS$_TRANSFORM_FUNCTION``, a function
    registered by name, resolved in ``username``'s schema; None: the message is
    discarded), then SET_ENQUEUE_DESTINATION (``APPLY$_ENQUEUE``: ``enqueue(queue,
    message)``) and SET_EXECUTE (``APPLY$_EXECUTE`` = ``NO``: the item is not executed).
    The Python apply process and the Spark apply sink both call it.
    :raises: TransformationFailed around what :func:`custom_transformation` raises; what
        ``enqueue`` raises (the message then goes to the error queue)."""
    if actx is None:
        return Item(message)
    try:
        message = custom_transformation(message, actx, username)
    except DatabaseError as e:
        raise TransformationFailed(e) from None
    if message is None:
        return None
    destination = actx.get_value("APPLY$_ENQUEUE")
    if destination is not None and destination.value:
        enqueue(str(destination.value), message)
    directive = actx.get_value("APPLY$_EXECUTE")
    execute = not (directive is not None and str(directive.value).upper() == "NO")
    return Item(message, execute)


class _Handed:
    """An LCR handed over by the capture, in the shape of a dequeued message."""

    __slots__ = ("payload",)
    transaction_group = msgid = sender_id = None

    def __init__(self, payload: Any) -> None:
        self.payload = payload


def _epoch(when: Any) -> float | None:
    return when.timestamp() if when is not None and hasattr(when, "timestamp") else None
