"""Parallel apply (SET_PARAMETER parallelism > 1): several apply servers, one result.

The dependency rules (:func:`transaction_keys`, :func:`dependencies`) both kinds of apply
servers share, and :class:`ParallelApply`, the servers as threads of the apply process —
what an apply process with a precommit handler (a Python callable, run for every
transaction) uses; otherwise the servers are processes (:mod:`.servers`), which do not
share one GIL.  Each apply server is an :class:`~.engine.ApplyEngine` with a target connection of its own.
The transactions of a batch are handed out in source commit order; a transaction waits,
before it starts, for the earlier transactions it depends on — those that change a row with
the same key (the key columns the engine finds the row by; an UPDATE of a key depends on the
old and the new key) — to be committed, so rows change in the same order as serially.  A
transaction that is not only row LCRs (DDL, user messages, handlers) waits for every earlier
one and every later one waits for it.

commit_serialization = FULL (Oracle's default): the servers commit in source commit order,
each waiting for its turn after it has applied its transaction; the work of later
transactions overlaps the round trips of earlier ones.  NONE (Oracle's
DEPENDENT_TRANSACTIONS too): a transaction commits as soon as it is applied, after the ones
it depends on.  Either way each transaction is applied exactly once: its record in
SLUICE_APPLY_DONE is its first statement (:mod:`.engine`), whatever the commit order.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ..lcr import RowLCR
from .engine import ApplyEngine, ApplyError, SourceTxn

__all__ = ["ParallelApply", "transaction_keys", "dependencies", "EVERYTHING", "Skipped"]

EVERYTHING = ("*",)        # the key a transaction that is not only row LCRs touches
LOCK_WAIT = 10.0           # seconds a parallel apply server waits for a row lock


class Skipped(Exception):
    """Raised at a transaction's turn to commit (commit_serialization FULL) when an earlier
    one failed and the apply stops on errors (disable_on_error): it is rolled back, not
    committed, so nothing after the failed transaction is applied — as serially."""


def transaction_keys(engine: ApplyEngine, txn: SourceTxn) -> set[tuple]:
    """The rows ``txn`` changes, as (owner, table, key values) -- the key columns the engine
    finds the row by; an UPDATE or DELETE also its old key -- or {EVERYTHING} when it is not
    only row LCRs the engine's batch path takes (DDL, user messages, handlers)."""
    if not engine._plain(txn):
        return {EVERYTHING}
    keys: set[tuple] = set()
    for item in txn.items:
        lcr: RowLCR = item.message
        owner, name = lcr.get_object_owner(), lcr.get_object_name()
        try:
            columns = engine._key(lcr, 0)
        except Exception:       # the engine reports it when it applies the transaction
            return {EVERYTHING}
        cmd = lcr.get_command_type()
        # the values get_value("OLD" / "NEW", c) gives (NEW of an UPDATE: the old value of
        # a column it does not change), read once per LCR
        new = {u.column_name: u.data for u in lcr.get_values("NEW", "N")} if cmd != "DELETE" else {}
        if cmd == "INSERT":
            rows = (new,)
        else:
            old = {u.column_name: u.data for u in lcr.get_values("OLD", "N")}
            rows = (old, {**old, **new}) if cmd == "UPDATE" else (old, new)
        for row in rows:
            values = [row.get(c) for c in columns]
            if all(v is not None for v in values):
                keys.add((owner, name, tuple(v.value for v in values)))
    return keys


def dependencies(keys: list[set], ordered: bool = True) -> list[list[int]]:
    """For each transaction (their :func:`transaction_keys`, in source commit order), the
    earlier ones it must wait for: per key it changes, the last earlier one changing that
    key (which waited for its own predecessors in turn).  A transaction whose keys are
    {EVERYTHING} waits for the one before it (``ordered``: commits in source order) or every
    earlier one, and every later one waits for it."""
    last: dict[tuple, int] = {}
    barrier = -1
    deps: list[list[int]] = []
    for i, ks in enumerate(keys):
        if EVERYTHING in ks:
            deps.append(list(range(max(barrier, 0), i)) if not ordered else [i - 1] if i else [])
            barrier = i
            last.clear()
            continue
        waits = {last[k] for k in ks if k in last}
        if barrier >= 0:
            waits.add(barrier)
        deps.append(sorted(waits))
        for k in ks:
            last[k] = i
    return deps


class ParallelApply:
    """``parallelism`` apply servers made by ``make_engine(server_id)``."""

    def __init__(self, make_engine: Callable[[int], ApplyEngine], parallelism: int,
                 ordered: bool = True) -> None:
        self.engines = [make_engine(i) for i in range(parallelism)]
        self.ordered = ordered
        for e in self.engines:
            # a transaction waiting for its turn keeps its row locks; one that needs them (a
            # dependency the keys do not show: another unique constraint) must not wait for
            # ever, since the holder waits for it: it fails after a while instead (error queue)
            e.target.limit_lock_wait(LOCK_WAIT)

    @property
    def parallelism(self) -> int:
        return len(self.engines)

    def close(self) -> None:
        for e in self.engines:
            e.target.close()

    @property
    def applied(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for e in self.engines:
            for db, scn in e.applied.items():
                out[db] = max(out.get(db, -1), scn)
        return out

    def _dependencies(self, txns: list[SourceTxn]) -> list[list[int]]:
        return dependencies([transaction_keys(self.engines[0], t) for t in txns], self.ordered)

    # -- applying ------------------------------------------------------------------------------
    def apply_all(self, txns: list[SourceTxn], stop_on_error: bool = False) -> list[Any]:
        """Apply ``txns``; for each, True (applied), False (applied before), an
        :class:`ApplyError`, or None (not attempted: an earlier one failed and
        ``stop_on_error``)."""
        n = len(txns)
        if n == 0:
            return []
        deps = self._dependencies(txns)
        outcome: list[Any] = [None] * n
        done = [False] * n
        state = {"next_commit": 0, "next_take": 0, "stop": False}
        cond = threading.Condition()

        def finish(i: int) -> None:
            with cond:
                done[i] = True
                while state["next_commit"] < n and done[state["next_commit"]]:
                    state["next_commit"] += 1
                cond.notify_all()

        def wait_turn(i: int) -> None:
            with cond:
                cond.wait_for(lambda: state["next_commit"] >= i)

        def commit_turn(i: int) -> None:
            wait_turn(i)
            if state["stop"]:            # an earlier one failed: this one is not committed
                raise Skipped()

        def server(engine: ApplyEngine) -> None:
            while True:
                with cond:
                    i = state["next_take"]
                    if i >= n or state["stop"]:
                        return
                    state["next_take"] += 1
                    waits = deps[i]
                    cond.wait_for(lambda: all(done[j] for j in waits) or state["stop"])
                    skip = state["stop"]
                if skip:                     # not attempted: an earlier one failed
                    finish(i)
                    continue
                try:
                    outcome[i] = engine.apply(txns[i], before_commit=(lambda: commit_turn(i)) if self.ordered
                                              else None)
                except Skipped:
                    outcome[i] = None            # not applied (rolled back)
                except ApplyError as failure:
                    wait_turn(i)             # report in order
                    outcome[i] = failure
                    if stop_on_error:
                        with cond:
                            state["stop"] = True
                except BaseException as e:   # a lost target: the batch stops here
                    outcome[i] = e
                    with cond:
                        state["stop"] = True
                finally:
                    finish(i)

        threads = [threading.Thread(target=server, args=(e,), name=f"sluice-apply-server-{k}", daemon=True)
                   for k, e in enumerate(self.engines)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for o in outcome:
            if isinstance(o, BaseException) and not isinstance(o, ApplyError):
                raise o
        return outcome
