"""Which partition applies which source transaction (the Spark apply sink; no Spark here).

A micro-batch is applied by several tasks at once, each with an apply engine of its own,
each taking its transactions in source commit order.  Transactions that depend on one
another -- those changing a row with the same key, found by the Python parallel apply's
own rules (:func:`sluice.streams.apply.parallel.dependencies`) -- must be applied in
commit order, so they go to the same partition: the partitions are the connected
components of the dependency graph, packed onto the tasks largest first.  A transaction
that is not only row LCRs depends on every earlier one and every later one on it, so a
batch holding one is applied by one task, serially, as the Python apply process does.

Only the keys' hashes and the transactions' sizes reach the driver, never LCR data.
"""

from __future__ import annotations

import hashlib
import heapq
from typing import Iterable

from ..streams.apply.parallel import EVERYTHING, dependencies

__all__ = ["key_hash", "plan"]


def key_hash(key: tuple) -> int:
    """A stable 63-bit hash of a row's key (the same in every Python worker, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "big") >> 1


def plan(transactions: Iterable[tuple[str, tuple, int, list[int] | None]], tasks: int) -> dict[str, int]:
    """``transactions``: (id, commit order, rows, key hashes or None for "everything") in
    any order; the task (0 .. ``tasks`` - 1) that applies each."""
    txns = sorted(transactions, key=lambda t: t[1])
    keys = [{EVERYTHING} if t[3] is None else set(t[3]) for t in txns]
    parent = list(range(len(txns)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # not "ordered": tasks do not commit in turn, so a barrier waits for every earlier one
    for i, waits in enumerate(dependencies(keys, ordered=False)):
        for j in waits:
            parent[root(i)] = root(j)
    weight: dict[int, int] = {}
    for i, t in enumerate(txns):
        r = root(i)
        weight[r] = weight.get(r, 0) + t[2]
    load = [(0, k) for k in range(max(tasks, 1))]
    task_of: dict[int, int] = {}
    for r in sorted(weight, key=lambda r: -weight[r]):
        used, k = heapq.heappop(load)
        task_of[r] = k
        heapq.heappush(load, (used + weight[r], k))
    return {t[0]: task_of[root(i)] for i, t in enumerate(txns)}
