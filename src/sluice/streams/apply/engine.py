"""Applying one source transaction: row LCRs become DML, DDL LCRs DDL, in one target
transaction together with the apply's low-watermark.

**Statements.**  An INSERT inserts the LCR's new values; an UPDATE sets the new values it
carries and a DELETE deletes, both finding the row by its key (SET_KEY_COLUMNS, else the
table's primary key, else every old value the LCR has) and comparing the other old values
the LCR carries (Oracle compares old values to detect conflicts).  Values are bound
parameters, made to fit the target column's type (:meth:`Target.converter`).

**Two paths.**  A transaction without handlers, DDL or conflicts is sent as one pipelined
batch; every statement must touch exactly one row.  If one does not (or fails), the
transaction is rolled back and applied again statement by statement, each under a
savepoint, finding out what the conflict is:

* an UPDATE or DELETE whose row is not there: ORA-26787 (Oracle before 11.2: ORA-01403);
* a row whose values differ from the LCR's old values: ORA-26786 naming the columns,
  unless update conflict handlers (:mod:`.conflicts`) resolve it;
* an INSERT of a key that exists: ORA-00001;
* an UPDATE or DELETE whose key more than one row has (a table without a key holding
  duplicate rows): ORA-01422, as Oracle's apply fails on them.

An error a DML error handler does not handle stops the transaction: the caller rolls the
target back and moves the whole transaction to the error queue (:mod:`.errorqueue`).

**A COMMIT the target refuses** (a deferred constraint: :class:`~.target.RolledBack`) is the
transaction's error too, as in Oracle: ORA-02091 "transaction rolled back" with the cause
on the next line (ORA-02291 / ORA-02292 / ORA-00001 …), at MESSAGE_NUMBER = the last message
(the commit follows it).  With ``commit_later`` that outcome is known only when the target
is next used: the apply of the next transaction raises :class:`CommitFailed` for the earlier
one — the next one's statements, sent behind that COMMIT, never ran: it is to be applied
again — and ``applied`` / the counters move only once a COMMIT is known to have succeeded.

**Exactly once.**  The transaction's commit SCN, per source database, goes into
``SLUICE_APPLY_PROGRESS`` in the same target transaction (:mod:`.target`); a transaction
at or below it is skipped, so a replay after a crash changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable

from ...errors import DatabaseError, not_supported, ora
from ..lcr import LCR_EXECUTOR, DDLLCR, RowLCR
from .conflicts import resolve_update
from .setform import SET_FORM_AVERAGE, SET_FORM_FEWEST, SET_FORM_MIN, Ineligible, Undescribed, lcr_statements
from .settings import Settings
from .sqliteddl import sqlite_statements
from .target import VIOLATIONS, RolledBack, Target, TargetError

__all__ = ["ApplyEngine", "SourceTxn", "Item", "ApplyError", "CommitFailed", "Handlers"]


class ApplyError(Exception):
    """An error that stops a transaction: ``error`` (ORA-coded) at message ``index``."""

    def __init__(self, error: DatabaseError, index: int) -> None:
        super().__init__(str(error))
        self.error, self.index = error, index


class CommitFailed(DatabaseError):
    """The target refused the COMMIT of ``txn``, applied earlier with ``commit_later``;
    ``failure`` is its :class:`ApplyError` (for the error queue).  Raised by the next
    :meth:`ApplyEngine.apply` (the transaction that call was given is not applied: the
    target is rolled back, its statements never ran — apply it again), by
    :meth:`~ApplyEngine.settle` and :meth:`~ApplyEngine.apply_group`."""

    def __init__(self, txn: "SourceTxn", failure: ApplyError) -> None:
        super().__init__(str(failure.error), failure.error.code)
        self.txn, self.failure = txn, failure


@dataclass(slots=True)
class Item:
    """One message of a transaction and what its rule's action context says."""

    message: Any
    execute: bool = True


@dataclass(slots=True)
class SourceTxn:
    """What one target transaction applies.  ``kind``: 'CAPTURED' (a source transaction,
    exactly once by its commit SCN), 'USER' (a queue transaction of user-enqueued messages,
    by ``ident``), 'ERROR' (EXECUTE_ERROR of an error transaction, by ``ident``)."""

    items: list[Item]
    kind: str = "CAPTURED"
    source_database: str | None = None
    commit_scn: int | None = None
    transaction_id: str | None = None
    ident: str | None = None
    forget: list[str] = field(default_factory=list)   # USER idents whose dequeue has committed
    msgids: list[bytes] = field(default_factory=list)  # its messages in the apply's queue


@dataclass(slots=True)
class Handlers:
    """The apply process's handlers, already resolved to callables (None: none)."""

    ddl: Callable[[Any], Any] | None = None
    message: Callable[[Any], Any] | None = None
    precommit: Callable[[Any], Any] | None = None
    resolve: Callable[[str], Callable[..., Any]] | None = None   # a DML handler's name -> callable


_CHUNK = 5000     # statements per pipelined batch


class _Retry(Exception):
    """The fast path met a conflict or failure: apply statement by statement."""


class _AlreadyApplied(Exception):
    """Another copy of the process applied this transaction meanwhile."""


def _both(first: Callable | None, second: Callable | None) -> Callable | None:
    """One LCR check of two (None: no check)."""
    if first is None or second is None:
        return first or second

    def check(lcr: RowLCR, index: int, new_vals: tuple, old_vals: tuple) -> None:
        first(lcr, index, new_vals, old_vals)
        second(lcr, index, new_vals, old_vals)
    return check


def same(a: Any, b: Any) -> bool:
    """Equal as column values (a DATE read back as ``date`` equals a midnight ``datetime``)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) != isinstance(b, str) and isinstance(b if isinstance(a, str) else a, date):
        text, when = (a, b) if isinstance(a, str) else (b, a)
        try:                           # a DATE or TIMESTAMP SQLite keeps as ISO text
            return same(datetime.fromisoformat(text), when)
        except ValueError:
            return False
    if isinstance(a, datetime) != isinstance(b, datetime) and isinstance(a, date) and isinstance(b, date):
        a = a.date() if isinstance(a, datetime) else a
        b = b.date() if isinstance(b, datetime) else b
    if isinstance(a, str) != isinstance(b, str):
        return str(a) == str(b)
    if isinstance(a, float) != isinstance(b, float) and isinstance(a, (int, float, Decimal)) \
            and isinstance(b, (int, float, Decimal)):
        return float(a) == float(b)      # a NUMBER kept as REAL by SQLite
    return a == b


class ApplyEngine:
    """Applies transactions to one target for one apply process."""

    def __init__(self, target: Target, settings: Settings, apply_name: str, *,
                 tag: bytes | None = b"\x00", handlers: Handlers | None = None,
                 require_instantiation: bool = True, server_id: int = 0) -> None:
        self.target, self.settings, self.apply_name = target, settings, apply_name
        self.server_id = server_id
        self.tag = tag
        self.handlers = handlers or Handlers()
        self.require_instantiation = require_instantiation
        target.ensure_bookkeeping()
        self.applied = target.applied_scns(apply_name)
        self._shapes: dict[tuple, tuple[str, list[str], list[Callable | None]]] = {}
        self._settings_version = -1
        self._built: tuple[SourceTxn, list, list | None] | None = None   # (transaction, statements, counts) by _ahead
        self._unsettled: SourceTxn | None = None   # applied with commit_later, its COMMIT not known yet
        self.messages_applied = 0
        self.transactions_applied = 0
        self.set_form_batches = 0     # transactions (or groups) whose rows went in the set form

    # -- one transaction ---------------------------------------------------------------
    @staticmethod
    def ident(txn: SourceTxn) -> str | None:
        """What SLUICE_APPLY_DONE records for ``txn``: a captured transaction by its source
        database and commit SCN, the others by their ``ident``."""
        if txn.kind == "CAPTURED" and txn.commit_scn is not None:
            return f"{txn.source_database}|{txn.commit_scn}"
        return txn.ident

    def already_applied(self, txn: SourceTxn) -> bool:
        """Whether the target records ``txn`` as applied (a query: :meth:`apply` needs none,
        its first statement finds out)."""
        ident = self.ident(txn)
        return ident is not None and self.target.done(self.apply_name, txn.kind, ident)

    def apply(self, txn: SourceTxn, before_commit: Callable[[], None] | None = None,
              commit_later: bool = False, upcoming: SourceTxn | None = None) -> bool:
        """Apply ``txn`` as one target transaction; False when it was applied before.
        ``before_commit``: called just before the commit (parallel apply waits there for
        its turn).  ``commit_later``: the target's commit may still be on its way when this
        returns (``Target.commit_later``): the caller calls :meth:`settle` before it acts on
        it.  ``upcoming``: the transaction the caller applies next, if it knows it — its
        statements are built while the target runs this one's (:meth:`_ahead`).
        :raises ApplyError: an error stopped it, its COMMIT refused too (the target is
        rolled back).  :raises CommitFailed: the COMMIT of the transaction applied before
        with ``commit_later`` was refused; ``txn`` is not applied (to be applied again)."""
        settings = self.settings.current()
        if settings._version != self._settings_version:
            self._shapes.clear()
            self._settings_version = settings._version
            self._built = None
        target = self.target
        earlier, self._unsettled = self._unsettled, None
        sent = False              # whether a refused COMMIT is this transaction's, not the earlier one's
        try:
            if self._plain(txn):
                try:
                    self._fast(txn, upcoming)
                except _Retry:
                    target.rollback()
                    self._slow(txn)
            else:
                # the previous transaction's commit (commit_later) known first: below, handlers'
                # errors become this transaction's (ApplyError), never a failed commit's
                target.settle()
                self._slow(txn)
            target.settle()       # (known by now whenever a statement ran: a no-op then)
            self._confirm(earlier)
            earlier = None
            if self.handlers.precommit is not None:
                self._call(self.handlers.precommit, txn.commit_scn, index=len(txn.items) - 1)
            if before_commit is not None:
                before_commit()
            sent = True
            if commit_later:
                target.commit_later()
            else:
                target.commit()
        except _AlreadyApplied:
            target.rollback()
            self._confirm(earlier)
            return False
        except BaseException as e:     # an ApplyError, a refused COMMIT, a lost target: rolled back
            failure = self._failure(txn, earlier, sent, e)
            if failure is e:
                raise
            raise failure from None
        if commit_later:
            self._unsettled = txn     # counted once its COMMIT is known (settle, the next apply)
        else:
            self._confirm(txn)
        return True

    def _failure(self, txn: SourceTxn, earlier: SourceTxn | None, sent: bool,
                 e: BaseException) -> BaseException:
        """What :meth:`apply` raises after ``e``, the target rolled back: a refused COMMIT
        (raised, or found by the rollback) before ``txn``'s own was ``sent`` is ``earlier``'s
        (CommitFailed), after it ``txn``'s (ApplyError); an ApplyError means the target
        answered, so ``earlier``'s COMMIT went through."""
        try:
            self.target.rollback()
        except RolledBack as found:
            e = found
        if isinstance(e, RolledBack):
            if not sent and earlier is not None:
                return CommitFailed(earlier, self._refused(earlier, e))
            return self._refused(txn, e)
        if isinstance(e, ApplyError):
            self._confirm(earlier)
        return e

    @staticmethod
    def _refused(txn: SourceTxn, e: RolledBack) -> ApplyError:
        """A refused COMMIT as ``txn``'s error: at its last message (the commit follows it)."""
        return ApplyError(e, max(len(txn.items) - 1, 0))

    def _confirm(self, txn: SourceTxn | None) -> None:
        """``txn``'s COMMIT succeeded: counted as applied."""
        if txn is None:
            return
        if txn.kind == "CAPTURED" and txn.commit_scn is not None:
            self.applied[txn.source_database] = max(self.applied.get(txn.source_database, -1), txn.commit_scn)
        self.transactions_applied += 1
        self.messages_applied += len(txn.items)

    def settle(self) -> None:
        """The outcome of the last :meth:`apply` with ``commit_later``: known.
        :raises CommitFailed: the target refused it; DatabaseError: the target was lost."""
        earlier, self._unsettled = self._unsettled, None
        try:
            self.target.settle()
        except RolledBack as e:
            self.target.rollback()
            if earlier is None:
                raise
            raise CommitFailed(earlier, self._refused(earlier, e)) from None
        self._confirm(earlier)

    def groupable(self, txn: SourceTxn) -> bool:
        """Whether ``txn`` may share a target transaction with its neighbours
        (:meth:`apply_group`): row LCRs only, no handler of any kind, in memory (not spilled),
        a SLUICE_APPLY_DONE record of its own."""
        return (self.handlers.precommit is None and type(txn.items) is list
                and self.ident(txn) is not None and self._plain(txn))

    def apply_group(self, txns: list[SourceTxn]) -> bool:
        """Apply several source transactions, in source order, as one target transaction
        (GoldenGate's GROUPTRANSOPS; one commit and one round trip for them all instead of
        two each): each stays whole (all of them commit or none), each has its own
        SLUICE_APPLY_DONE record in that transaction, so exactly once holds as for
        :meth:`apply`; readers of the target see the state after some source transaction,
        never part of one.  False, with nothing of it left in the target, when one of them
        is not plain sailing — a conflict, an error, one applied before, the group's COMMIT
        refused (a deferred constraint one of them breaks): the caller then applies them one
        at a time (:meth:`apply`), which finds out which and why.
        :raises CommitFailed: the COMMIT of an earlier ``commit_later`` was refused."""
        settings = self.settings.current()
        if settings._version != self._settings_version:
            self._shapes.clear()
            self._settings_version = settings._version
        target = self.target
        self.settle()                    # a failed commit is not this group's to turn down
        statements: list[tuple[str, tuple]] = []
        ones: list[int] = []             # statements that must touch exactly one row
        progress: dict[Any, tuple[str, tuple]] = {}
        forget: list[tuple[str, tuple]] = []
        try:
            target.begin(self.tag)
            for txn in txns:
                claim = self._claim(txn)
                ones.append(len(statements))
                statements.append(claim[0])
                if len(claim) > 1:       # the low-watermark: the last one per source database
                    progress[txn.source_database] = claim[1]
                forget += self._forget(txn)
            rows, expected = [], None
            if sum(len(txn.items) for txn in txns) >= SET_FORM_MIN and target.dialect == "postgresql":
                rows, expected = self._set_form(txns)
            set_form = expected is not None
            if not set_form:
                for txn in txns:
                    for i, item in enumerate(txn.items):
                        lcr = item.message
                        if not self._skipped(lcr, i):
                            rows.append(self._statement(lcr, i))
                expected = [1] * len(rows)
            first = len(statements)
            counts = target.execute_batch(statements + rows + list(progress.values()) + forget)
            if any(counts[i] != 1 for i in ones) or counts[first:first + len(rows)] != expected:
                target.rollback()
                return False
            target.commit()
            if set_form:
                self.set_form_batches += 1
        except (ApplyError, TargetError, DatabaseError):
            target.rollback()
            return False
        for txn in txns:
            self._confirm(txn)
        return True

    def _claim(self, txn: SourceTxn) -> list[tuple[str, tuple]]:
        """The transaction's first statements.  First its record in SLUICE_APPLY_DONE, which
        inserts nothing when the transaction was applied already — by this process before a
        crash, or by a second copy of it: that copy's uncommitted record holds this one until
        it ends, so a transaction is never applied twice, whatever order copies or parallel
        servers commit in.  Then, for a captured transaction, the low-watermark (the highest
        commit SCN applied, per apply server: DBA_APPLY_PROGRESS's figure in the target)."""
        t = self.target
        ident = self.ident(txn)
        if ident is None:
            return []
        out = [t.done_statement(self.apply_name, txn.kind, ident)]
        if txn.kind == "CAPTURED":
            out.append(t.progress_statement(self.apply_name, txn.source_database, txn.commit_scn,
                                            txn.transaction_id, self.server_id))
        return out

    def _forget(self, txn: SourceTxn) -> list[tuple[str, tuple]]:
        """Drop the records of transactions whose messages have left the queue (their
        dequeue committed): nothing can deliver them again."""
        if not txn.forget:
            return []
        return [self.target.forget_done_statement(self.apply_name, txn.forget)]

    def _plain(self, txn: SourceTxn) -> bool:
        """Only row LCRs without handlers: the batch path may take it."""
        s = self.settings
        for item in txn.items:
            m = item.message
            if not isinstance(m, RowLCR) or not item.execute:
                return False
            if s.dml_handlers and (s.dml_handler(m.get_object_owner(), m.get_object_name(),
                                                 m.get_command_type(), False)
                                   or s.dml_handler(m.get_object_owner(), m.get_object_name(),
                                                    m.get_command_type(), True)):
                return False
        return True

    def _fast(self, txn: SourceTxn, upcoming: SourceTxn | None = None) -> None:
        """The statements pipelined, in chunks (a spilled transaction is never all in memory),
        or, for a transaction of at least ``SET_FORM_MIN`` LCRs the set form takes, a few
        statements per table and operation (:mod:`.setform`).  With ``upcoming``, while the
        target runs this transaction's statements the next transaction's are built (the
        apply's Python and the target's work overlap)."""
        head = self._claim(txn)
        self.target.begin(self.tag)
        built, self._built = self._built, None
        if built is not None and built[0] is txn:
            statements, expected = built[1], built[2]
        else:
            statements, expected = self._set_form([txn]) if self._settable(txn) else ([], None)
            if expected is None:
                for i, item in enumerate(txn.items):
                    lcr = item.message
                    if self._skipped(lcr, i):
                        continue
                    statements.append(self._statement(lcr, i))
                    if len(statements) >= _CHUNK:
                        self._batch(head, statements, [])
                        head, statements = [], []
        tail = self._forget(txn)
        try:
            sent = upcoming is not None and self.target.send_batch(head + statements + tail)
        except TargetError:         # (a value it cannot send: statement by statement finds which)
            raise _Retry() from None
        if not sent:
            self._batch(head, statements, tail, expected)
        else:
            self._ahead(upcoming)       # the target works on this one meanwhile
            try:
                counts = self.target.finish_batch()
            except TargetError:
                raise _Retry() from None
            self._counted(head, statements, counts, expected)
        if expected is not None:
            self.set_form_batches += 1

    def _settable(self, txn: SourceTxn) -> bool:
        """Whether the set form may pay for ``txn`` (a plain transaction in memory, big
        enough, into PostgreSQL); :meth:`_set_form` finds out whether it takes it."""
        return (type(txn.items) is list and len(txn.items) >= SET_FORM_MIN
                and self.target.dialect == "postgresql")

    def _set_form(self, txns: list[SourceTxn], known_only: bool = False) -> tuple[list[tuple[str, tuple]],
                                                                                list[int] | None]:
        """``txns``' row LCRs as set-form statements and the row count each must report;
        ``([], None)`` when the set form does not take them (the per-LCR statements then
        find out why, or apply them).  ``known_only``: as :meth:`_statement`'s."""
        try:
            made = lcr_statements(self, txns, SET_FORM_FEWEST, known_only, SET_FORM_AVERAGE)
        except (RolledBack, Undescribed):
            # an earlier commit_later's COMMIT refused: raised as itself; an undescribed
            # table (_ahead): its own turn describes it and decides
            raise
        except (Ineligible, ApplyError, DatabaseError, TargetError, _Retry):
            return [], None
        return [(sql, params) for sql, params, _ in made], [n for _, _, n in made]

    def _ahead(self, txn: SourceTxn) -> None:
        """Build ``txn``'s statements now, for its :meth:`_fast`, if that takes nothing but
        Python: a plain transaction in memory whose tables' statements are known already
        (no dictionary query: the target is busy).  Anything else — an LCR to be turned
        down, a statement not known yet — is left for its own turn, which finds it again."""
        if type(txn.items) is not list or len(txn.items) >= _CHUNK or not self._plain(txn):
            return
        if self._settable(txn):
            try:
                statements, expected = self._set_form([txn], known_only=True)
            except Undescribed:
                return
            if expected is not None:
                self._built = (txn, statements, expected)
                return
        statements: list[tuple[str, tuple]] = []
        try:
            for i, item in enumerate(txn.items):
                lcr = item.message
                if not self._skipped(lcr, i):
                    statements.append(self._statement(lcr, i, known_only=True))
        except Exception:        # (ApplyError, _Retry …) its own turn raises it, as always
            return
        self._built = (txn, statements, None)

    def _batch(self, head: list, statements: list, tail: list, expected: list[int] | None = None) -> None:
        try:
            counts = self.target.execute_batch(head + statements + tail)
        except TargetError:
            raise _Retry() from None
        self._counted(head, statements, counts, expected)

    @staticmethod
    def _counted(head: list, statements: list, counts: list[int], expected: list[int] | None = None) -> None:
        """Every statement touched its rows (one each, or ``expected``: the set form's)."""
        if head and counts[0] != 1:
            raise _AlreadyApplied()
        got = counts[len(head):len(head) + len(statements)]
        if expected is not None:
            if got != expected:
                raise _Retry()
        elif any(c != 1 for c in got):
            raise _Retry()

    def _slow(self, txn: SourceTxn) -> None:
        self.target.begin(self.tag)
        claim = self._claim(txn)
        if claim and self.target.execute(*claim[0]) != 1:
            raise _AlreadyApplied()
        for sql, params in claim[1:]:
            self.target.execute(sql, params)
        for i, item in enumerate(txn.items):
            if item.execute:
                self._one(item.message, i)
        for sql, params in self._forget(txn):
            self.target.execute(sql, params)

    # -- one message ----------------------------------------------------------------------
    def _skipped(self, lcr: Any, index: int) -> bool:
        """An LCR at or below its object's instantiation SCN is not applied (seed 001)."""
        owner = lcr.get_object_owner()
        name = lcr.get_object_name()
        if isinstance(lcr, DDLLCR) and lcr.get_base_table_name():
            owner, name = lcr.get_base_table_owner() or owner, lcr.get_base_table_name()
        db = lcr.get_source_database_name()
        scn = self.settings.instantiation_scn(db, owner, name)
        if scn is None:
            if self.require_instantiation and lcr.get_commit_scn() is not None:
                raise ApplyError(ora(26687, f'"{owner}"."{name}"', db), index)
            return False
        position = lcr.get_commit_scn() if lcr.get_commit_scn() is not None else lcr.get_scn()
        return position is not None and position <= scn

    def _one(self, message: Any, index: int) -> None:
        if isinstance(message, RowLCR):
            if self._skipped(message, index):
                return
            handler = self.settings.dml_handler(message.get_object_owner(), message.get_object_name(),
                                                message.get_command_type(), False)
            if handler is not None:
                self._call(self._resolve(handler), message, index=index)
            else:
                self._row(message, index, True)
        elif isinstance(message, DDLLCR):
            if self._skipped(message, index):
                return
            if self.handlers.ddl is not None:
                self._call(self.handlers.ddl, message, index=index)
            else:
                self._ddl(message, index)
        elif self.handlers.message is not None:
            self._call(self.handlers.message, message, index=index)
        else:
            raise ApplyError(ora(26714, "a user message reached an apply process without a message "
                                        "handler"), index)

    def _resolve(self, name: str) -> Callable[..., Any]:
        """The DML or error handler ``name``, resolved when called (inside :meth:`_call`,
        so a name that is not registered fails the transaction with ORA-00904)."""
        resolve = self.handlers.resolve

        def run(*args: Any) -> Any:
            if resolve is None:
                raise ora(904, name)
            return resolve(name)(*args)
        return run

    def _call(self, fn: Callable[..., Any], *args: Any, index: int) -> Any:
        """Run a handler with LCR.EXECUTE() pointing at this transaction; what it raises
        stops the transaction (ORA-26714 around anything that is not an Oracle error)."""
        token = LCR_EXECUTOR.set(lambda lcr, resolve: self._row(lcr, index, resolve)
                                 if isinstance(lcr, RowLCR) else self._ddl(lcr, index))
        try:
            return fn(*args)
        except ApplyError:
            raise
        except DatabaseError as e:
            raise ApplyError(e, index) from None
        except Exception as e:
            raise ApplyError(ora(26714, f"{type(e).__name__}: {e}"), index) from None
        finally:
            LCR_EXECUTOR.reset(token)

    def _row(self, lcr: RowLCR, index: int, resolve: bool) -> None:
        """One row LCR under a savepoint; its conflicts resolved or raised; a DML error
        handler called with the error."""
        t = self.target
        t.savepoint("sluice_lcr")
        try:
            self._row_now(lcr, index, resolve)
        except ApplyError as failure:
            handler = self.settings.dml_handler(lcr.get_object_owner(), lcr.get_object_name(),
                                                lcr.get_command_type(), True)
            if handler is None:
                raise
            t.rollback_to("sluice_lcr")
            e = failure.error
            self._call(self._resolve(handler), lcr, 1, [e.code], [str(e)], index=index)

    def _row_now(self, lcr: RowLCR, index: int, resolve: bool, again: bool = True) -> None:
        t = self.target
        sql, params = self._statement(lcr, index)
        try:
            count = t.execute(sql, params)
        except TargetError as e:
            t.rollback_to("sluice_lcr")
            if again and e.kind == "other" and self._altered(lcr.get_object_owner(), lcr.get_object_name()):
                # the table was altered since it was described: the LCR again, as it is now
                return self._row_now(lcr, index, resolve, False)
            raise ApplyError(self._error(lcr, e), index) from None
        if count == 1 or lcr.get_command_type() == "INSERT":
            return
        t.rollback_to("sluice_lcr")
        self._conflict(lcr, index, resolve)

    def _error(self, lcr: RowLCR, e: TargetError) -> DatabaseError:
        """A statement's failure as Oracle's apply reports it: a constraint violated as
        its own error (what DBA_APPLY_ERROR shows: ORA-00001, ORA-02290, ORA-01400 / ORA-01407,
        ORA-02291 / ORA-02292), anything else ORA-26714 with the target's text."""
        cmd = lcr.get_command_type()
        if e.kind == "notnull" and cmd == "UPDATE":
            return ora(1407, str(e))
        if e.kind == "foreign":        # (SQLite does not say which side)
            return ora(2292 if cmd == "DELETE" else 2291, str(e))
        if e.kind in VIOLATIONS:
            return ora(VIOLATIONS[e.kind], str(e))
        return ora(26714, f"{cmd} on {self._display(lcr)}: {e}")

    def _altered(self, owner: str, name: str) -> bool:
        """Whether the table is not as described (:meth:`Target.redescribe`); the statements
        made from the former description are forgotten."""
        if not self.target.redescribe(owner, name):
            return False
        self._shapes.clear()
        return True

    @staticmethod
    def _display(lcr: Any) -> str:
        return f'"{lcr.get_object_owner()}"."{lcr.get_object_name()}"'

    def _conflict(self, lcr: RowLCR, index: int, resolve: bool) -> None:
        """An UPDATE or DELETE found no row with its key and old values: why, and (an
        UPDATE) resolve it with the table's update conflict handlers."""
        t = self.target
        owner, name = lcr.get_object_owner(), lcr.get_object_name()
        columns, types, _ = t.describe(owner, name)
        key = self._key(lcr, index)
        old = {u.column_name: u.data.value for u in lcr.get_values("OLD", "N")}
        new = {u.column_name: u.data.value for u in lcr.get_values("NEW", "N")}
        wanted = list(dict.fromkeys([c for c in (*old, *new) if c in types]))
        where, params = self._where(owner, name, key, old)
        rows = t.query(f"SELECT {', '.join(t.column(c) for c in wanted)} FROM {t.table(owner, name)} "
                       f"WHERE {where} LIMIT 2", params)
        # (each value cut short: a key of all the old values may hold 10 KB texts)
        key_text = "(" + ", ".join(f"{c}={_bounded(old.get(c))}" for c in key) + ")"
        if not rows:
            raise ApplyError(ora(26787, key_text, self._display(lcr)), index)
        if len(rows) > 1:
            # rows the key does not tell apart (a table without a key holding duplicate rows,
            # or SET_KEY_COLUMNS that are not unique): Oracle's apply fails with ORA-01422
            # rather than change more rows, or some row, than the source changed
            raise ApplyError(ora(1422, f"more than one row of {self._display(lcr)} has the key {key_text}"),
                             index)
        current = dict(zip(wanted, rows[0]))
        conv = self._converters(owner, name)
        special = t.special(owner, name)
        differing = [c for c in old if c not in key and c in current and c not in special.generated
                     and not same(current[c], _conv(conv, c, old[c]))]
        if lcr.get_command_type() != "UPDATE" or not resolve:
            raise ApplyError(ora(26786, key_text, ", ".join(differing), self._display(lcr)), index)
        groups = self.settings.conflict_groups.get((owner, name), [])
        outcome = resolve_update(differing, groups, current, new, old)
        if outcome is None:
            raise ApplyError(ora(26786, key_text, ", ".join(differing), self._display(lcr)), index)
        # (what the target computes, or an identity GENERATED ALWAYS unchanged, is not set)
        outcome = {c: v for c, v in outcome.items() if c not in special.generated
                   and not (c in special.identity and same(current.get(c), _conv(conv, c, v)))}
        if not outcome:
            return     # every new value discarded: the row stays as it is
        sets = ", ".join(f"{t.column(c)} = {t.placeholder}" for c in outcome)
        values = [_conv(conv, c, outcome[c]) for c in outcome]
        try:
            t.execute(f"UPDATE {t.table(owner, name)} SET {sets} WHERE {where}", values + params)
        except TargetError as e:
            # the resolved UPDATE refused (a CHECK constraint …): this LCR's error, as the
            # statement's own would be (a TargetError escaped the apply before)
            t.rollback_to("sluice_lcr")
            raise ApplyError(self._error(lcr, e), index) from None

    # -- statements -------------------------------------------------------------------------
    def _converters(self, owner: str, name: str) -> dict[str, Callable | None]:
        key = ("conv", owner, name)
        found = self._shapes.get(key)
        if found is None:
            _, types, _ = self.target.describe(owner, name)
            found = self._shapes[key] = {c: self.target.converter(ty) for c, ty in types.items()}
        return found

    def _key(self, lcr: RowLCR, index: int) -> list[str]:
        owner, name = lcr.get_object_owner(), lcr.get_object_name()
        key = self.settings.key_columns.get((owner, name))
        if key is None:
            key = self.target.describe(owner, name)[2]
        if not key:   # no key: every old value identifies the row (Oracle, without a key)
            key = [u.column_name for u in lcr.get_values("OLD", "N")]
            generated = self.target.special(owner, name).generated
            if generated:   # but those the target computes (from the others)
                key = [c for c in key if c not in generated] or key
        return key

    def _where(self, owner: str, name: str, key: list[str], values: dict[str, Any]) -> tuple[str, list]:
        t = self.target
        conv = self._converters(owner, name)
        parts, params = [], []
        for c in key:
            v = values.get(c)
            if v is None:
                parts.append(f"{t.column(c)} IS NULL")
            else:
                parts.append(f"{t.column(c)} = {t.placeholder}")
                params.append(_conv(conv, c, v))
        return " AND ".join(parts), params

    def _statement(self, lcr: RowLCR, index: int, known_only: bool = False) -> tuple[str, tuple]:
        """The DML for a row LCR (statement text cached per table, command, columns and
        which old values are NULL).  Per LCR only tuples are made: the columns' names and
        values (zip), the parameters picked from the values by position (itemgetter).
        ``known_only``: a statement whose text is not cached yet raises _Retry (making it
        may query the target)."""
        owner, name, cmd = lcr.get_object_owner(), lcr.get_object_name(), lcr.get_command_type()
        try:
            old, new = lcr.plain_values()   # (name, value) pairs: no AnyData made for them
        except DatabaseError as e:          # a value the LCR cannot give (a captured year past
            raise ApplyError(e, index) from None   # 9999): this transaction's error, not the apply's
        if cmd == "INSERT" or not old:
            old_cols = old_vals = ()
        else:
            old_cols, old_vals = zip(*old)
        if cmd == "DELETE" or not new:
            new_cols = new_vals = ()
        else:
            new_cols, new_vals = zip(*new)
        # the old values that are NULL change the WHERE clause (IS NULL): their positions
        nulls = tuple(i for i, v in enumerate(old_vals) if v is None) if None in old_vals else ()
        shape_key = (owner, name, cmd, new_cols, old_cols, nulls)
        shape = self._shapes.get(shape_key)
        if shape is None:
            if known_only:
                raise _Retry()
            shape = self._shapes[shape_key] = self._shape(lcr, index, new_cols, old_cols, nulls)
        sql, pick, convs, check = shape
        if check is not None:
            check(lcr, index, new_vals, old_vals)
        values = new_vals + old_vals if old_vals else new_vals
        params = values if pick is None else pick(values)
        if convs is not None:
            params = tuple(v if f is None else f(v) for v, f in zip(params, convs))
        return sql, params

    def _shape(self, lcr: RowLCR, index: int, new_cols: tuple, old_cols: tuple,
               nulls: tuple) -> tuple[str, Callable[[tuple], tuple] | None, tuple | None, Callable | None]:
        """``(sql, pick, converters, check)``: ``pick`` takes the parameters out of the new
        values followed by the old ones (None: they are all of them, in order);
        ``converters`` None when no parameter needs one; ``check(lcr, index, new values,
        old values)`` (None: none) refuses an LCR the statement cannot apply.

        The target's generated columns are not written, nor compared unless they are the
        key; its identity columns GENERATED ALWAYS are inserted with the source's value and
        left out of an UPDATE's SET (:class:`~.target.Special`)."""
        t = self.target
        owner, name, cmd = lcr.get_object_owner(), lcr.get_object_name(), lcr.get_command_type()
        old_nulls = tuple(i in nulls for i in range(len(old_cols)))
        t.settle()      # a failed commit_later raises as itself, not as this LCR's ORA-00942
        for again in (True, False):
            try:
                columns, types, primary_key = t.describe(owner, name)
            except DatabaseError as e:
                raise ApplyError(ora(942) if e.code == 942 else e, index) from None
            missing = next((c for c in (*new_cols, *old_cols) if c not in types), None)
            # (a column the description lacks may have been added since: described again)
            if missing is None or not (again and self._altered(owner, name)):
                break
        if missing is not None:
            raise ApplyError(ora(26788, f'"{missing}"', self._display(lcr)), index)
        conv = self._converters(owner, name)
        special = t.special(owner, name)
        generated, identity = special.generated, special.identity
        check = None
        table, p = t.table(owner, name), t.placeholder
        if cmd == "INSERT":
            written = [c for c in new_cols if c not in generated]
            overriding = " OVERRIDING SYSTEM VALUE" if identity.intersection(written) else ""
            if written:
                sql = (f"INSERT INTO {table} ({', '.join(t.column(c) for c in written)}){overriding} "
                       f"VALUES ({', '.join([p] * len(written))})")
            else:
                sql = f"INSERT INTO {table} DEFAULT VALUES"
            order = [("N", c) for c in written]
            check = self._null_key_check(cmd, t, new_cols, written, primary_key)
        elif cmd in ("UPDATE", "DELETE"):
            key = self._key(lcr, index)
            for c in key:
                if c not in old_cols:
                    raise ApplyError(ora(26688, f'key column "{c}" of {self._display(lcr)} has no old value'),
                                     index)
            nulls = dict(zip(old_cols, old_nulls))
            conds, order = [], []
            for c in (*key, *(c for c in old_cols if c not in key and c not in generated)):
                if nulls[c]:
                    conds.append(f"{t.column(c)} IS NULL")
                else:
                    conds.append(f"{t.column(c)} = {p}")
                    order.append(("O", c))
            where = " AND ".join(conds)
            if cmd == "UPDATE":
                fixed = [(i, c) for i, c in enumerate(new_cols) if c in identity]
                if fixed:
                    check = self._identity_check(fixed, old_cols)
                written = [c for c in new_cols if c not in generated and c not in identity]
                if not written:      # nothing to set: the row is still found (and locked)
                    same_col = next((c for c in columns if c not in generated and c not in identity), key[0])
                    sets, set_order = f"{t.column(same_col)} = {t.column(same_col)}", []
                else:
                    sets = ", ".join(f"{t.column(c)} = {p}" for c in written)
                    set_order = [("N", c) for c in written]
                sql = f"UPDATE {table} SET {sets} WHERE {where}"
                order = set_order + order
                check = _both(check, self._null_key_check(cmd, t, new_cols, written, primary_key))
            else:
                sql = f"DELETE FROM {table} WHERE {where}"
        else:
            raise ApplyError(not_supported(f"applying {cmd} LCRs"), index)
        position = {("N", c): i for i, c in enumerate(new_cols)}
        position.update({("O", c): len(new_cols) + i for i, c in enumerate(old_cols)})
        picks = [position[k] for k in order]
        convs = tuple(conv.get(c) for _, c in order)
        if picks == list(range(len(new_cols) + len(old_cols))):
            pick = None
        elif len(picks) == 1:
            only = picks[0]
            pick = lambda values: (values[only],)      # noqa: E731  (itemgetter gives no tuple)
        else:
            pick = itemgetter(*picks) if picks else (lambda values: ())
        return sql, pick, convs if any(f is not None for f in convs) else None, check

    def _null_key_check(self, cmd: str, t: Target, new_cols: tuple, written: list[str],
                        primary_key: list[str]) -> Callable | None:
        """SQLite lets a NULL into a primary key column -- an ``INTEGER PRIMARY KEY`` (the
        rowid) takes the next rowid for it, another PRIMARY KEY column keeps the NULL -- where
        a key column is NOT NULL in Oracle: the check of an INSERT or UPDATE writing NULL into
        one, refused as Oracle refuses it (ORA-01400 / ORA-01407; PostgreSQL's not-null
        violation says the same through :meth:`_error`).  None for PostgreSQL, or no key
        column written."""
        if t.dialect != "sqlite":
            return None
        keyed = [(i, c) for i, c in enumerate(new_cols) if c in primary_key and c in written]
        if not keyed:
            return None
        code = 1400 if cmd == "INSERT" else 1407

        def check(lcr: RowLCR, index: int, new_vals: tuple, old_vals: tuple) -> None:
            for i, c in keyed:
                if new_vals[i] is None:
                    raise ApplyError(ora(code, f'{self._display(lcr)}."{c}"'), index)
        return check

    def _identity_check(self, fixed: list[tuple[int, str]], old_cols: tuple) -> Callable | None:
        """The check of an UPDATE carrying new values of identity columns GENERATED ALWAYS
        (left out of its SET): a value that changes the column cannot be applied
        (PostgreSQL sets such a column only to DEFAULT, a value of the target's own
        sequence, not the source's); ORA-26714 saying so.  Without the column's old value
        nothing tells a change: the value is left out."""
        at = {c: i for i, c in enumerate(old_cols)}
        pairs = [(i, at[c], c) for i, c in fixed if c in at]
        if not pairs:
            return None

        def check(lcr: RowLCR, index: int, new_vals: tuple, old_vals: tuple) -> None:
            for i, j, c in pairs:
                if not same(new_vals[i], old_vals[j]):
                    raise ApplyError(ora(26714, f'UPDATE on {self._display(lcr)}: column "{c}" is GENERATED '
                                                f'ALWAYS AS IDENTITY in the target, which cannot take the '
                                                f'new value {_bounded(new_vals[i])} (only DEFAULT)'), index)
        return check

    def _ddl(self, lcr: DDLLCR, index: int) -> None:
        t = self.target
        text = lcr.get_ddl_text()
        if not text:
            return
        try:
            if t.dialect == "postgresql":
                schema = lcr.get_current_schema() or lcr.get_object_owner()
                if schema:
                    from ..capture.decode import pg_name
                    t.execute("SELECT set_config('search_path', %s, true)", (t.quote(pg_name(schema)),))
                t.savepoint("sluice_ddl")
                t.execute(text)
            elif lcr.get_command_type() == "TRUNCATE TABLE":
                t.execute(f"DELETE FROM {t.table(lcr.get_object_owner(), lcr.get_object_name())}")
            else:      # the PostgreSQL statement said in SQLite, or ORA-26714 (:mod:`.sqliteddl`)
                try:
                    statements = sqlite_statements(lcr.get_command_type(), text,
                                                   lcr.get_current_schema() or lcr.get_object_owner(),
                                                   lcr.get_object_name(), t.table, t.quote)
                except DatabaseError as e:
                    raise ApplyError(e, index) from None
                for sql in statements:
                    t.execute(sql)
                    t.forget()      # a RENAME or DROP changes what the next name maps to
        except TargetError as e:
            raise ApplyError(ora(26714, f"{lcr.get_command_type()}: {e}"), index) from None
        finally:
            t.forget()
            self._shapes.clear()


def _bounded(value: Any, most: int = 60) -> str:
    """A value's repr for an error message, cut to ``most`` characters."""
    text = repr(value)
    return text if len(text) <= most else text[:most] + "..."


def _conv(conv: dict[str, Callable | None], column: str, value: Any) -> Any:
    f = conv.get(column)
    return value if f is None or value is None else f(value)
