"""Parallel apply with apply servers as processes (Oracle's apply servers are processes too).

With SET_PARAMETER parallelism > 1 on a PostgreSQL target the apply process is the
*coordinator*: it keeps what :class:`~.parallel.ParallelApply` keeps — the row dependencies
of a batch (:func:`~.parallel.transaction_keys`, :func:`~.parallel.dependencies`), the commit
order (commit_serialization FULL: source commit order; NONE: as soon as what a transaction
depends on has committed) — and hands each transaction, when its dependencies have
committed, to one of ``parallelism`` apply server processes.  Each server has a target
connection of its own and an :class:`~.engine.ApplyEngine` whose first statement for a
transaction is its SLUICE_APPLY_DONE record, exactly as serially; with FULL it commits
only once the coordinator has said it is the transaction's turn — said as soon as every
earlier transaction has committed, even before this one is applied, so a server waits for
no message it could have had already.  A server holds up to two transactions (the next one
waits in its pipe while the first commits).  The Python work of building and sending the
statements (the apply's CPU) runs in the servers, beside one another, not under the
coordinator's GIL (on 2 cores shared with PostgreSQL this does not make it faster:
bench/RESULTS.md).

**Processes.**  Started as a fresh interpreter (``python -m sluice.streams.apply.serverproc``:
never a fork of a process that has threads and open connections, and unlike multiprocessing's
``spawn`` it does not import the parent's ``__main__`` again, which a script without a
``__main__`` guard would not survive), talking over a socket pair with multiprocessing's
:class:`~multiprocessing.connection.Connection`; children of the apply process: they stop with it
(:meth:`ServerProcesses.close`; a server whose coordinator dies reads the end of its pipe
and exits, its open target transaction rolled back by PostgreSQL).  A server that dies makes
the batch fail: the coordinator ends the other servers (their transactions not yet committed
roll back) and raises, so the apply process's store transaction — the batch's dequeue — rolls
back, and the host starts the process again: what a server committed is recognised by its
SLUICE_APPLY_DONE record and skipped, what it had not committed is applied again — nothing
lost, nothing twice.

**What the servers apply.**  Transactions of row LCRs only, without DML handlers or error
handlers on their tables (the engine's pipelined path; its statement-by-statement path for
conflicts and the update conflict handlers too, since those are settings, not code).
A transaction the coordinator's engine must apply itself — DDL, user messages, a table with
a DML or error handler, an LCR with ``APPLY$_EXECUTE = NO`` — is already a barrier for the
dependencies (every earlier transaction commits before it, every later one waits for it):
the coordinator applies it in its own process, where the handlers registered by name at run
time resolve.  A Python callable cannot be shipped to a spawned process (the servers import
only the package), so an apply process with a *precommit* handler, which runs for every
transaction, uses in-process servers (threads, :class:`~.parallel.ParallelApply`).

**Wire form.**  A transaction goes as plain tuples (its identity and per LCR the common
attributes and the ``(column, ANYDATA type, value)`` lists; pickled, values as Python
values) — not pickled LCR objects; the server rebuilds row LCRs without checking them again,
as the queue's decoder does (:mod:`sluice.streams.lcrcodec`).  The per-table settings
(key columns, instantiation SCNs, conflict columns, DML handlers' names) go to each server
when the catalog changes.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as mp_wait
from typing import Any

from ...errors import DatabaseError, ora
from ..lcr import AnyData, RowLCR, RowUnit
from .engine import ApplyEngine, ApplyError, Handlers, Item, SourceTxn
from .parallel import EVERYTHING, LOCK_WAIT, Skipped, dependencies, transaction_keys
from .settings import Settings

__all__ = ["ServerProcesses", "txn_to_wire", "txn_from_wire"]

START_TIMEOUT = 300.0     # seconds for a server to start (import, connect) on a busy machine
PIPELINE = 2              # transactions handed to a server at a time (the next waits in its pipe)


# -- the wire form ------------------------------------------------------------------------------
def _units(units: Any) -> tuple:
    return tuple((u.column_name, u.data.get_type_name(), u.data.value) for u in units)


def txn_to_wire(txn: SourceTxn) -> tuple:
    """``txn`` (row LCRs only) as tuples of plain values."""
    lcrs = []
    for item in txn.items:
        m: RowLCR = item.message
        if type(m) is RowLCR:        # its own lists (a subclass may read them lazily: the API)
            old, new = m._old.values(), m._new.values()
        else:
            old, new = m.get_values("OLD", "N"), m.get_values("NEW", "N")
        lcrs.append((m.get_source_database_name(), m.get_command_type(), m.get_object_owner(),
                     m.get_object_name(), m.get_transaction_id(), m.get_scn(), m.get_commit_scn(),
                     _units(old), _units(new)))
    return (txn.kind, txn.source_database, txn.commit_scn, txn.transaction_id, txn.ident,
            list(txn.forget), lcrs)


def _units_in(items: tuple) -> dict[str, RowUnit]:
    return {name: RowUnit(name, AnyData(tn, value)) for name, tn, value in items}


def txn_from_wire(wire: tuple) -> SourceTxn:
    kind, db, cscn, txn_id, ident, forget, lcrs = wire
    items = []
    for src, cmd, owner, name, tid, scn, commit_scn, old, new in lcrs:
        lcr = RowLCR._trusted(src, cmd, owner, name, None, tid, scn, commit_scn, None)
        lcr._old, lcr._new = _units_in(old), _units_in(new)
        items.append(Item(lcr))
    return SourceTxn(items, kind, db, cscn, txn_id, ident, forget)


def settings_snapshot(s: Settings) -> tuple:
    return (s._version, s.key_columns, s.instantiation, s.conflict_groups, s.dml_handlers)


class ShippedSettings(Settings):
    """A server's copy of the coordinator's :class:`Settings` (it reads no catalog)."""

    def __init__(self, snapshot: tuple) -> None:     # noqa: super().__init__ reads the catalog
        self.load(snapshot)

    def load(self, snapshot: tuple) -> None:
        (self._version, self.key_columns, self.instantiation, self.conflict_groups,
         self.dml_handlers) = snapshot

    def _refresh(self) -> None:
        return None        # the coordinator sends a new snapshot when the catalog changes


# -- a server ---------------------------------------------------------------------------------------
class _Abandoned(Exception):
    """The coordinator went away while the transaction waited for its turn."""


def serve(pipe: Any, server_id: int, target_args: tuple, apply_name: str, tag: bytes | None,
          require_instantiation: bool, snapshot: tuple) -> None:
    """An apply server process's life: apply what the coordinator sends until told to stop
    or until the coordinator is gone."""
    from .pgtarget import PgTarget
    try:
        target = PgTarget(*target_args)
        target.limit_lock_wait(LOCK_WAIT)
        settings = ShippedSettings(snapshot)
        engine = ApplyEngine(target, settings, apply_name, tag=tag, handlers=Handlers(),
                             require_instantiation=require_instantiation, server_id=server_id)
    except BaseException as e:           # noqa: BLE001 -- reported to the coordinator
        pipe.send(("failed", _error(e)))
        return
    pipe.send(("up", os.getpid()))
    pending: list[tuple] = []            # messages read while a transaction waited for its turn
    granted: set[int] = set()            # transactions the coordinator said may commit
    skipped: set[int] = set()            # … said may not (an earlier one failed: disable_on_error)

    def handle(msg: tuple) -> bool:
        """A control message; False: stop."""
        op = msg[0]
        if op == "stop":
            return False
        if op == "settings":
            settings.load(msg[1])
        elif op == "tag":
            engine.tag = msg[1]
        elif op == "commit":
            granted.add(msg[1])
        elif op == "skip":
            skipped.add(msg[1])
        return True

    try:
        while True:
            if pending:
                msg = pending.pop(0)
            else:
                try:
                    msg = pipe.recv()
                except (EOFError, OSError):
                    return               # the coordinator is gone
            if msg[0] != "txn":
                if not handle(msg):
                    return
                continue
            _, i, wire, ordered = msg
            if i in skipped:
                skipped.discard(i)
                pipe.send(("done", i, None))
                continue

            def turn(i: int = i) -> None:
                # the coordinator sends ("commit", i) once every earlier transaction has
                # committed (maybe before this one is applied), ("skip", i) when an earlier one
                # failed and the apply stops; other messages wait
                while i not in granted and i not in skipped:
                    try:
                        reply = pipe.recv()
                    except (EOFError, OSError):
                        raise _Abandoned() from None
                    if reply[0] == "txn":
                        pending.append(reply)
                    elif reply[0] == "stop":
                        raise _Abandoned()
                    elif reply[0] == "commit":
                        granted.add(reply[1])
                    elif reply[0] == "skip":
                        skipped.add(reply[1])
                    else:
                        pending.append(reply)
                granted.discard(i)
                if i in skipped:
                    skipped.discard(i)
                    raise Skipped()
            try:
                result: Any = engine.apply(txn_from_wire(wire), before_commit=turn if ordered else None)
            except ApplyError as failure:
                result = ("error", failure.error, failure.index)
            except Skipped:
                result = None            # rolled back: not attempted, as the coordinator said
            except _Abandoned:
                return
            except BaseException as e:   # noqa: BLE001 -- the target lost: this server ends
                pipe.send(("lost", _error(e)))
                return
            granted.discard(i)
            pipe.send(("done", i, result))
    finally:
        try:
            target.close()
        except Exception:                # noqa: BLE001 -- a lost connection is closed already
            pass


def _error(e: BaseException) -> DatabaseError:
    return e if isinstance(e, DatabaseError) else ora(26714, f"{type(e).__name__}: {e}")


class _Child:
    """An apply server's process (what the coordinator needs of it)."""

    def __init__(self, popen: subprocess.Popen) -> None:
        self.popen = popen
        self.pid = popen.pid

    def is_alive(self) -> bool:
        return self.popen.poll() is None

    @property
    def exitcode(self) -> int | None:
        return self.popen.poll()

    def join(self, timeout: float | None = None) -> None:
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            pass

    def terminate(self) -> None:
        if self.is_alive():
            self.popen.kill()


def _start(server_id: int, args: tuple) -> tuple[_Child, Connection]:
    """A server process: a fresh interpreter importing this package from where this process
    does, given ``args`` (for :func:`serve`) as its first message."""
    mine, theirs = socket.socketpair()
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(sys.modules["sluice"].__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    try:
        popen = subprocess.Popen([sys.executable, "-m", "sluice.streams.apply.serverproc", str(theirs.fileno())],
                                 pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL,
                                 start_new_session=False)
    finally:
        theirs.close()
    pipe = Connection(mine.detach())
    pipe.send(args)
    return _Child(popen), pipe


def server_main(fd: int) -> None:
    """An apply server process's entry (``python -m sluice.streams.apply.serverproc FD``)."""
    pipe = Connection(fd)
    args = pipe.recv()
    serve(pipe, *args)


class _Server:
    __slots__ = ("server_id", "process", "pipe")

    def __init__(self, server_id: int, process: Any, pipe: Any) -> None:
        self.server_id, self.process, self.pipe = server_id, process, pipe


# -- the coordinator ---------------------------------------------------------------------------------
class ServerProcesses:
    """``parallelism`` apply server processes applying for the coordinator's ``engine`` (whose
    target must be PostgreSQL); the coordinator's engine applies the barrier transactions."""

    def __init__(self, engine: ApplyEngine, parallelism: int, ordered: bool = True) -> None:
        target = engine.target
        if target.dialect != "postgresql":
            raise ora(26714, "apply server processes need a PostgreSQL target")
        self.engine, self.parallelism, self.ordered = engine, parallelism, ordered
        self.engine.target.limit_lock_wait(LOCK_WAIT)
        self._applied: dict[str, int] = {}
        self._sequence = 0
        self._shipped = engine.settings.current()._version
        snapshot = settings_snapshot(engine.settings)
        self.servers: list[_Server] = []
        self.broken: DatabaseError | None = None
        try:
            for k in range(parallelism):
                child, pipe = _start(k + 1, (k + 1, (target.conninfo, target.schema, target.display),
                                             engine.apply_name, engine.tag, engine.require_instantiation,
                                             snapshot))
                self.servers.append(_Server(k + 1, child, pipe))
            for s in self.servers:
                if not s.pipe.poll(START_TIMEOUT):
                    raise ora(26714, f"apply server {s.server_id} did not start within {START_TIMEOUT} s")
                msg = s.pipe.recv()
                if msg[0] != "up":
                    raise msg[1]
        except BaseException:
            self.close()
            raise

    # -- life cycle -------------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the servers (a transaction one has open rolls back)."""
        for s in self.servers:
            try:
                s.pipe.send(("stop",))
            except (OSError, ValueError):
                pass
        for s in self.servers:
            s.process.join(5)
            if s.process.is_alive():
                s.process.terminate()
                s.process.join(5)
            s.pipe.close()
        self.servers = []
        self.engine.target.close()

    def _end(self, why: DatabaseError) -> DatabaseError:
        """A server died: end them all (what they have not committed rolls back)."""
        self.broken = why
        for s in self.servers:
            if s.process.is_alive():
                s.process.terminate()
        for s in self.servers:
            s.process.join(5)
        return why

    def follow(self, handlers: Handlers, tag: bytes | None) -> None:
        """ALTER_APPLY / handlers changed: the coordinator's engine takes the handlers, every
        server the tag."""
        self.engine.handlers = handlers
        if tag != self.engine.tag:
            self.engine.tag = tag
            self._broadcast(("tag", tag))

    def _broadcast(self, msg: tuple) -> None:
        for s in self.servers:
            try:
                s.pipe.send(msg)
            except OSError as e:
                raise self._end(ora(26714, f"apply server {s.server_id} is gone: {e}")) from None

    @property
    def applied(self) -> dict[str, int]:
        out = dict(self._applied)
        for db, scn in self.engine.applied.items():
            out[db] = max(out.get(db, -1), scn)
        return out

    # -- applying ---------------------------------------------------------------------------------
    def apply_all(self, txns: list[SourceTxn], stop_on_error: bool = False) -> list[Any]:
        """As :meth:`ParallelApply.apply_all`: for each transaction True (applied), False
        (applied before), an :class:`ApplyError`, or None (not attempted: an earlier one
        failed and ``stop_on_error``).  :raises DatabaseError: a server died (the batch is
        to be rolled back and delivered again)."""
        if self.broken is not None:
            raise self.broken
        n = len(txns)
        if n == 0:
            return []
        settings = self.engine.settings.current()
        if settings._version != self._shipped:
            self._broadcast(("settings", settings_snapshot(settings)))
            self._shipped = settings._version
        keys = [transaction_keys(self.engine, t) for t in txns]
        deps = dependencies(keys, self.ordered)
        outcome: list[Any] = [None] * n
        done = [False] * n
        next_commit = take = 0
        stop = False
        base = self._sequence            # transactions go by a number unique over batches
        self._sequence += n
        held: dict[int, _Server] = {}    # transaction handed out, not done -> its server
        load = {s.server_id: 0 for s in self.servers}
        granted = -1                     # the last transaction told it may commit
        skipping: set[int] = set()       # transactions told not to (stop_on_error)
        ordered = self.ordered

        def finish(i: int) -> None:
            nonlocal next_commit
            done[i] = True
            while next_commit < n and done[next_commit]:
                next_commit += 1

        def send(s: _Server, msg: tuple) -> None:
            try:
                s.pipe.send(msg)
            except OSError as e:
                raise self._end(ora(26714, f"apply server {s.server_id} is gone: {e}")) from None

        while True:
            while take < n and not stop:              # hand out what may start
                i = take
                if not all(done[j] for j in deps[i]):
                    break
                if EVERYTHING in keys[i]:             # the coordinator applies a barrier itself
                    if held:
                        break
                    take += 1
                    try:
                        outcome[i] = self.engine.apply(txns[i])
                    except ApplyError as failure:
                        outcome[i] = failure
                        stop = stop_on_error
                    finish(i)
                    continue
                # the least loaded server; up to PIPELINE transactions each, so that the next
                # is there when one commits
                s = min(self.servers, key=lambda x: load[x.server_id])
                if load[s.server_id] >= PIPELINE:
                    break
                send(s, ("txn", base + i, txn_to_wire(txns[i]), ordered))
                held[i] = s
                load[s.server_id] += 1
                take += 1
            if stop and ordered:                  # an earlier one failed: the rest roll back
                for j in held:
                    if j > granted and j not in skipping:
                        skipping.add(j)
                        send(held[j], ("skip", base + j))
            elif ordered and next_commit < n and next_commit in held and granted < next_commit:
                granted = next_commit             # every earlier one has committed: its turn
                send(held[next_commit], ("commit", base + next_commit))
            if not held:
                if take >= n or stop:
                    break
                continue
            pipes = {s.pipe: s for s in held.values()}
            for pipe in mp_wait(list(pipes)):     # a dead server's end reads EOF
                s = pipes[pipe]
                try:
                    while pipe.poll():
                        msg = pipe.recv()
                        if msg[0] != "done":          # "lost": its target failed
                            raise self._end(msg[1])
                        i, result = msg[1] - base, msg[2]
                        if isinstance(result, tuple):
                            outcome[i] = ApplyError(result[1], result[2])
                            stop = stop or stop_on_error
                        else:
                            outcome[i] = result
                            t = txns[i]
                            if result and t.kind == "CAPTURED" and t.commit_scn is not None:
                                self._applied[t.source_database] = max(
                                    self._applied.get(t.source_database, -1), t.commit_scn)
                        del held[i]
                        load[s.server_id] -= 1
                        finish(i)
                except (EOFError, OSError):       # its end closed: it died
                    s.process.join(5)
                    raise self._end(ora(26714, f"apply server {s.server_id} (pid {s.process.pid}) died "
                                               f"applying a transaction (exit code {s.process.exitcode})")) from None
        return outcome
