"""Which partition applies which source transaction (the Spark apply sink; no Spark here).

A micro-batch is applied by several tasks at once, each with an apply engine of its own,
each taking its transactions in source commit order.  Transactions that depend on one
another -- those changing a row with the same key, found by the Python parallel apply's
own rules (:func:`sluice.streams.apply.parallel.dependencies`) -- must be applied in
commit order: a transaction goes where the ones it depends on went, or, when they are on
several tasks, waits for their records in the target (SLUICE_APPLY_DONE) or the error
queue before it begins (:func:`plan`).  A transaction that is not only row LCRs depends on
every earlier one and every later one on it: a batch holding one is applied by one task.

Only the keys' hashes and the transactions' sizes reach the driver, never LCR data.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

from ..streams.apply.parallel import EVERYTHING, dependencies

__all__ = ["key_hash", "plan"]


def key_hash(key: tuple) -> int:
    """A stable 63-bit hash of a row's key (the same in every Python worker, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "big") >> 1


def plan(transactions: Iterable[tuple[str, str | None, tuple, int, list[int] | None]],
         tasks: int) -> tuple[dict[str, int], dict[str, list[str]]]:
    """``transactions``: (id, what the target records it by (:meth:`ApplyEngine.ident`),
    commit order, rows, key hashes or None for "everything") in any order.  The task (0 ..
    ``tasks`` - 1) that applies each, and for a transaction that depends on transactions
    of other tasks, their records to wait for.

    A transaction goes to the task of the transactions it depends on when that is one
    task, else to the least loaded one.  Every task takes its transactions in commit order
    and waits before one for the records of its dependencies on other tasks: the earliest
    transaction not yet applied never waits, so the tasks never wait for one another in a
    circle, and each waits holding no row lock (before its transaction begins)."""
    txns = sorted(transactions, key=lambda t: t[2])
    keys = [{EVERYTHING} if t[4] is None else set(t[4]) for t in txns]
    if any(EVERYTHING in k for k in keys):   # DDL, handlers, user messages: one task, serially
        return {t[0]: 0 for t in txns}, {}
    task_of: list[int] = []
    load = [0] * max(tasks, 1)
    waits: dict[str, list[str]] = {}
    # not "ordered": tasks do not commit in turn, so a barrier waits for every earlier one
    for i, deps in enumerate(dependencies(keys, ordered=False)):
        on = {task_of[j] for j in deps}
        k = on.pop() if len(on) == 1 else min(range(len(load)), key=load.__getitem__)
        task_of.append(k)
        load[k] += txns[i][3]
        other = [txns[j][1] for j in deps if task_of[j] != k and txns[j][1] is not None]
        if other:
            waits[txns[i][1]] = other
    return {t[0]: task_of[i] for i, t in enumerate(txns)}, waits
