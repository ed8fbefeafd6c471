"""Child processes of the multi-process tests (run as ``python procworker.py ROLE DSN …``).

hold DSN                 dequeue one message of Q, print its payload, then sleep mid-transaction
hold-commit DSN          dequeue one message of Q, print its payload, read a line, commit — and
                         stop between the store's COMMIT and what follows it (SQLite: the
                         shared consume counter's bump, the locks' release), print
                         "committed" and sleep there (killed by the test)
waiter DSN ROUNDS        ROUNDS times: print "waiting", block in deqone (wait 10 s), print the
                         time.time() it returned at
produce DSN P COUNT TXN  enqueue "P:i" for i < COUNT into Q, committing every TXN messages
consume DSN SEED ROLLBACK [FINISHED]
                         dequeue batches of up to 10 from Q and commit, or roll back with
                         probability ROLLBACK; stop once the file FINISHED exists and a
                         dequeue waiting 1 s finds nothing; print a JSON report
"""

from __future__ import annotations

import json
import os
import random
import sys
import time

import sluice


def hold(dsn: str) -> None:
    conn = sluice.connect(dsn)
    q = conn.queue("Q")
    q.deqoptions.wait = 5
    m = q.deqone()
    print(m.payload.decode(), flush=True)
    time.sleep(60)          # killed here, mid-transaction


def hold_commit(dsn: str) -> None:
    from sluice.store.locks import MessageLocks

    def stop_here(self, *args) -> None:
        print("committed", flush=True)
        time.sleep(60)              # killed here: committed, not yet announced
    MessageLocks.end_consume = stop_here
    conn = sluice.connect(dsn)
    q = conn.queue("Q")
    q.deqoptions.wait = 5
    print(q.deqone().payload.decode(), flush=True)
    sys.stdin.readline()
    conn.commit()


def waiter(dsn: str, rounds: str) -> None:
    conn = sluice.connect(dsn)
    q = conn.queue("Q")
    q.deqoptions.wait = 10
    for _ in range(int(rounds)):
        print("waiting", flush=True)
        m = q.deqone()
        at = time.time()
        conn.commit()
        print(repr(at) if m is not None else "timeout", flush=True)


def produce(dsn: str, producer: str, count: str, per_txn: str) -> None:
    conn = sluice.connect(dsn)
    q = conn.queue("Q")
    n, k = int(count), int(per_txn)
    for i in range(n):
        q.enqone(conn.msgproperties(payload=f"{producer}:{i}".encode()))
        if (i + 1) % k == 0 or i == n - 1:
            conn.commit()
    conn.close()


def consume(dsn: str, seed: str, rollback: str, finished: str) -> None:
    rng = random.Random(int(seed))
    p_rollback = float(rollback)
    conn = sluice.connect(dsn)
    q = conn.queue("Q")
    q.deqoptions.wait = 1
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG   # always the first messages in queue order
    delivered: list[list] = []      # [payload, attempts] of every committed dequeue, in order
    rolled_back: list[str] = []     # payload of every rolled-back dequeue
    while True:
        msgs = q.deqmany(10)
        if not msgs:
            if os.path.exists(finished):
                break
            continue
        if rng.random() < p_rollback:
            conn.rollback()
            rolled_back += [m.payload.decode() for m in msgs]
        else:
            conn.commit()
            delivered += [[m.payload.decode(), m.attempts] for m in msgs]
    conn.close()
    print(json.dumps({"delivered": delivered, "rolled_back": rolled_back}), flush=True)


if __name__ == "__main__":
    role, *args = sys.argv[1:]
    {"hold": hold, "hold-commit": hold_commit, "waiter": waiter, "produce": produce, "consume": consume}[role](*args)
