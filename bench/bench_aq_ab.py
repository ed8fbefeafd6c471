"""A/B of the one-message AQ path between two commits of Sluice, same machine, same minutes.

What a change on the enqueue / dequeue path costs: each tree runs the same workload in a
process of its own (``PYTHONPATH=<tree>/src``), alternating, several rounds, and the peer
of the same run is a bare ``sqlite3`` loop doing the same durable work (insert a row and
commit per 100, then select + delete one row at a time, commit per 100).

    python bench/bench_aq_ab.py --old 6d6376e [--rounds 3] [--n 10000] [--pg] [--subscribers 2]

``--pg``: the store is a fresh schema of PostgreSQL's ``test`` database on 127.0.0.1 (dropped
afterwards), and wall time per message is printed beside the CPU (a PostgreSQL dequeue waits
on round trips more than it computes); beside the bare ``sqlite3`` loop a bare ``psycopg``
floor does the same durable work on PostgreSQL as an application of its own would: one
INSERT per message (psycopg prepares it), commit per 100; ``SELECT … FOR UPDATE SKIP
LOCKED`` + DELETE per message, commit per 100 — each statement waiting for its answer.

``--subscribers N``: the queue is a multi-consumer one with N subscribers (each message is a
record per subscriber; the dequeues are the first subscriber's), and both floors insert N
rows per message (each waiting for its answer) and dequeue one.

``--grouping``: the queue table groups messages by transaction (TRANSACTIONAL: each commit of
100 enqueues is a group, dequeued with NEXT_MSG, then NEXT_TRANSACTION at its end);
``--group-size N`` (with ``--grouping``): each commit of N enqueues is a group, and the
dequeues know it — N - 1 NEXT_MSG, then NEXT_TRANSACTION to the next group's first message,
no probe of the group's end (``--group-size 1``: every dequeue starts a new group);
``--condition TEXT``: every dequeue has this dequeue condition (``"priority = 1"`` takes every
message).  The floors do not do either: compare old with new.  ``--commit-every N``: a
commit per N enqones and per N deqones instead of 100 (1: each message a transaction of its
own — what a transaction's first statement costs; the floors then do not run).

The old tree is checked out with ``git worktree add`` under /tmp and removed afterwards.
Per-message figures are CPU time of the measuring process (``time.process_time``), which a
busy neighbour disturbs less than wall time.  Each phase starts after a full garbage
collection: without it, whether one of the interpreter's full collections (~30 ms over the
~60k objects an imported Sluice holds) fell inside the 10,000-message ``enqmany`` moved its
figure by 3 µs/msg between two trees whose enqueue code was the same (2026-11-30: a merge of
two fast commits was "slower"; ``gc.freeze()`` after import made both 14.5).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


PG_DB = "postgresql://postgres@127.0.0.1:5432/test"


def workload(n: int, pg: bool = False, subscribers: int = 0, grouping: bool = False,
             condition: str | None = None, group_size: int | None = None,
             commit_every: int = 100) -> dict[str, float]:
    """enqone × n (commit per 100), deqone × n (commit per 100), one enqmany of n
    (``commit_every``: per that many instead of 100)."""
    import sluice
    with tempfile.TemporaryDirectory() as d:
        schema = f"ab_{os.getpid()}_{int(time.time())}"
        conn = sluice.connect(f"{PG_DB}?schema={schema}" if pg else f"sqlite:///{d}/ab.db")
        conn.aqadm.create_queue_table(queue_table="qt", queue_payload_type="RAW",
                                      multiple_consumers=subscribers > 0,
                                      message_grouping=1 if grouping else 0)
        conn.aqadm.create_queue(queue_name="q", queue_table="qt")
        conn.aqadm.start_queue("q")
        for i in range(subscribers):
            conn.aqadm.add_subscriber(queue_name="q", subscriber=sluice.Agent(f"S{i}"))
        q = conn.queue("q")
        payload = b"x" * 100
        out = {}
        gc.collect()       # each phase starts without the garbage of the one before (see below)
        t, w = time.process_time(), time.perf_counter()
        for i in range(n):
            q.enqone(conn.msgproperties(payload=payload, priority=1, correlation="c"))
            if i % (group_size or commit_every) == (group_size or commit_every) - 1:
                conn.commit()
        conn.commit()
        out["enqone"] = (time.process_time() - t) / n * 1e6
        out["enqone_wall"] = (time.perf_counter() - w) / n * 1e6
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        if subscribers:
            q.deqoptions.consumername = "S0"
        if condition:
            q.deqoptions.condition = condition
        if grouping:
            q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
        gc.collect()
        t, w = time.process_time(), time.perf_counter()
        for i in range(n):
            if group_size:      # the group's first message, then the rest of it
                q.deqoptions.navigation = sluice.DEQ_NEXT_MSG if i % group_size else sluice.DEQ_NEXT_TRANSACTION
                q.deqone()
            elif grouping:
                try:
                    q.deqone()
                except sluice.DatabaseError:     # ORA-25235: the group's end
                    q.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION
                    q.deqone()
                    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
            else:
                q.deqone()
            if i % commit_every == commit_every - 1:
                conn.commit()
        conn.commit()
        out["deqone"] = (time.process_time() - t) / n * 1e6
        out["deqone_wall"] = (time.perf_counter() - w) / n * 1e6
        gc.collect()
        t = time.process_time()
        q.enqmany([conn.msgproperties(payload=payload) for _ in range(n)])
        conn.commit()
        out["enqmany"] = (time.process_time() - t) / n * 1e6
        conn.close()
        if pg:
            import psycopg
            with psycopg.connect(PG_DB, autocommit=True) as c:
                c.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return out


def floor(n: int, rows: int = 1) -> dict[str, float]:
    """The same durable work in bare sqlite3 (WAL, synchronous=NORMAL as the store uses)."""
    with tempfile.TemporaryDirectory() as d:
        db = sqlite3.connect(f"{d}/floor.db", isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, prio INT, corr TEXT, enq REAL, data BLOB)")
        db.execute("CREATE INDEX m_order ON m (prio, enq, id)")   # the dequeue order, as a queue table has
        payload = b"x" * 100
        out = {}
        t = time.process_time()
        db.execute("BEGIN")
        for i in range(n):
            for _ in range(rows):
                db.execute("INSERT INTO m (prio, corr, enq, data) VALUES (1, 'c', ?, ?)", (time.time(), payload))
            if i % 100 == 99:
                db.execute("COMMIT")
                db.execute("BEGIN")
        db.execute("COMMIT")
        out["enqone"] = (time.process_time() - t) / n * 1e6
        t = time.process_time()
        db.execute("BEGIN")
        for i in range(n):
            row = db.execute("SELECT id, data FROM m ORDER BY prio, enq, id LIMIT 1").fetchone()
            db.execute("DELETE FROM m WHERE id = ?", (row[0],))
            if i % 100 == 99:
                db.execute("COMMIT")
                db.execute("BEGIN")
        db.execute("COMMIT")
        out["deqone"] = (time.process_time() - t) / n * 1e6
        db.close()
    return out


def pg_floor(n: int, rows: int = 1) -> dict[str, float]:
    """The same durable work in bare psycopg on a table shaped like a queue table (identity
    key, the dequeue order's index, a message id index)."""
    import psycopg
    schema = f"ab_floor_{os.getpid()}_{int(time.time())}"
    payload = b"x" * 100
    out = {}
    with psycopg.connect(PG_DB, autocommit=True) as admin:
        admin.execute(f'CREATE SCHEMA "{schema}"')
        admin.execute(f'CREATE TABLE "{schema}".m (seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, '
                      "q TEXT NOT NULL, msgid BYTEA NOT NULL, corr TEXT, prio BIGINT NOT NULL, "
                      "state BIGINT NOT NULL, enq DOUBLE PRECISION NOT NULL, tid TEXT, data BYTEA)")
        admin.execute(f'CREATE INDEX ON "{schema}".m (q, state, prio, enq, seq)')
        admin.execute(f'CREATE INDEX ON "{schema}".m (msgid)')
    try:
        with psycopg.connect(PG_DB) as db:
            insert = f'INSERT INTO "{schema}".m (q, msgid, corr, prio, state, enq, tid, data) ' \
                     "VALUES ('Q', %b, %b, %b, %b, %b, %b, %b)"
            t, w = time.process_time(), time.perf_counter()
            for i in range(n):
                msgid = os.urandom(16)
                for _ in range(rows):
                    db.execute(insert, (msgid, "c", 1, 0, time.time(), "T", payload), binary=True)
                if i % 100 == 99:
                    db.commit()
            db.commit()
            out["enqone"] = (time.process_time() - t) / n * 1e6
            out["enqone_wall"] = (time.perf_counter() - w) / n * 1e6
            take = f'SELECT seq, data FROM "{schema}".m WHERE q = \'Q\' AND state = 0 ' \
                   "ORDER BY prio, enq, seq LIMIT 1 FOR UPDATE SKIP LOCKED"
            delete = f'DELETE FROM "{schema}".m WHERE seq = %b'
            t, w = time.process_time(), time.perf_counter()
            for i in range(n):
                row = db.execute(take, binary=True).fetchone()
                db.execute(delete, (row[0],), binary=True)
                if i % 100 == 99:
                    db.commit()
            db.commit()
            out["deqone"] = (time.process_time() - t) / n * 1e6
            out["deqone_wall"] = (time.perf_counter() - w) / n * 1e6
    finally:
        with psycopg.connect(PG_DB, autocommit=True) as admin:
            admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    return out


def _run(tree: str, n: int, pg: bool, subscribers: int, extra: list[str]) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.path.join(tree, "src"))
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(n), *(["--pg"] if pg else []),
                          "--subscribers", str(subscribers), *extra],
                         env=env, cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", help="the commit to compare HEAD's working tree with")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--pg", action="store_true", help="a PostgreSQL store (schema of the test database)")
    ap.add_argument("--subscribers", type=int, default=0,
                    help="a multi-consumer queue with this many subscribers (0: single-consumer)")
    ap.add_argument("--grouping", action="store_true", help="a TRANSACTIONAL grouping queue table")
    ap.add_argument("--group-size", type=int, help="with --grouping: messages per group, known to the dequeues")
    ap.add_argument("--condition", help="every dequeue's dequeue condition")
    ap.add_argument("--commit-every", type=int, default=100,
                    help="a commit per this many enqones / deqones (1: each a transaction of its own)")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(workload(a.child, a.pg, a.subscribers, a.grouping, a.condition,
                                  a.group_size if a.grouping else None, a.commit_every)))
        return
    extra = (["--grouping"] if a.grouping else []) + (["--condition", a.condition] if a.condition else []) + \
        (["--group-size", str(a.group_size)] if a.group_size else []) + \
        (["--commit-every", str(a.commit_every)] if a.commit_every != 100 else [])
    if not a.old:
        ap.error("--old is required")
    old_tree = tempfile.mkdtemp(prefix="ab-old-")
    os.rmdir(old_tree)
    subprocess.run(["git", "-C", REPO, "worktree", "add", "-q", "--detach", old_tree, a.old], check=True)
    try:
        rows = []
        for r in range(a.rounds):
            for label, tree in (("old", old_tree), ("new", REPO)):
                rows.append((label, r, _run(tree, a.n, a.pg, a.subscribers, extra)))
            if extra:       # (the floors neither group nor test a condition, and commit per 100)
                continue
            rows.append(("sqlite3 floor", r, floor(a.n, max(1, a.subscribers))))
            if a.pg:
                rows.append(("psycopg floor", r, pg_floor(a.n, max(1, a.subscribers))))
        print("| tree | round | enqone CPU µs/msg | deqone CPU µs/msg | enqmany CPU µs/msg | enqone wall | deqone wall |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        nan = float("nan")
        for label, r, o in rows:
            print(f"| {label} | {r + 1} | {o['enqone']:.2f} | {o['deqone']:.2f} | {o.get('enqmany', nan):.2f} | "
                  f"{o.get('enqone_wall', nan):.1f} | {o.get('deqone_wall', nan):.1f} |")
    finally:
        subprocess.run(["git", "-C", REPO, "worktree", "remove", "--force", old_tree], check=False)


if __name__ == "__main__":
    main()
