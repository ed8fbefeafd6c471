"""AQ core throughput on the embedded backend, side by side with litequeue and persist-queue.

Run by hand (not part of the test suite):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/bench_core.py [--n 2000] [--batch-n 100000] [--sync NORMAL]

Each peer runs on its own fresh SQLite file in WAL mode with the same
``synchronous`` setting (NORMAL by default: durable across application crashes,
the last commits may be lost on power failure; FULL: fsync at every commit).
Payloads are 100 bytes.  Two measurements:

* round trip, one message at a time: enqueue + commit, then dequeue + commit;
* array path: batches of 100 (``enqmany`` + commit, ``deqmany`` + commit).  The
  peers have no array dequeue; they get their best batch form (one transaction
  around 100 puts) and single-message gets.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sqlite3
import tempfile
import time

PAYLOAD = b"x" * 100


def _sluice_conn(path: str, sync: str):
    import sluice
    conn = sluice.connect(f"sqlite:///{path}?synchronous={sync}")
    conn.aqadm.create_queue_table(queue_table="bench_qt", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="bench_q", queue_table="bench_qt")
    conn.aqadm.start_queue(queue_name="bench_q")
    q = conn.queue("bench_q")
    import sluice as s
    q.deqoptions.wait = s.DEQ_NO_WAIT
    return conn, q


def sluice_round_trip(d: str, n: int, sync: str) -> float:
    conn, q = _sluice_conn(os.path.join(d, "s.db"), sync)
    props = conn.msgproperties
    t0 = time.perf_counter()
    for _ in range(n):
        q.enqone(props(payload=PAYLOAD))
        conn.commit()
        m = q.deqone()
        conn.commit()
        assert m is not None
    dt = time.perf_counter() - t0
    conn.close()
    return n / dt


def sluice_batch(d: str, n: int, sync: str, batch: int = 100) -> float:
    conn, q = _sluice_conn(os.path.join(d, "sb.db"), sync)
    props = conn.msgproperties
    t0 = time.perf_counter()
    got = 0
    for _ in range(n // batch):
        q.enqmany([props(payload=PAYLOAD) for _ in range(batch)])
        conn.commit()
        got += len(q.deqmany(batch))
        conn.commit()
    dt = time.perf_counter() - t0
    assert got == n // batch * batch, got
    conn.close()
    return got / dt


def _litequeue(path: str, sync: str):
    from litequeue import LiteQueue
    q = LiteQueue(path)
    q.conn.execute(f"PRAGMA synchronous = {sync}")
    return q


def litequeue_round_trip(d: str, n: int, sync: str) -> float:
    q = _litequeue(os.path.join(d, "lq.db"), sync)
    data = PAYLOAD.decode()
    t0 = time.perf_counter()
    for _ in range(n):
        q.put(data)
        m = q.pop()
        q.done(m.message_id)
    dt = time.perf_counter() - t0
    q.conn.close()
    return n / dt


def litequeue_batch(d: str, n: int, sync: str, batch: int = 100) -> float:
    q = _litequeue(os.path.join(d, "lqb.db"), sync)
    data = PAYLOAD.decode()
    t0 = time.perf_counter()
    for _ in range(n // batch):
        with q.transaction():
            for _ in range(batch):
                q.put(data)
        for _ in range(batch):
            m = q.pop()
            q.done(m.message_id)
    dt = time.perf_counter() - t0
    q.conn.close()
    return (n // batch * batch) / dt


def _persist(path: str, sync: str):
    from persistqueue import SQLiteAckQueue
    q = SQLiteAckQueue(path, multithreading=False, auto_commit=True)
    for c in {id(q._conn): q._conn, id(q._putter): q._putter}.values():
        c.execute(f"PRAGMA synchronous = {sync}")
    return q


def persist_round_trip(d: str, n: int, sync: str) -> float:
    q = _persist(os.path.join(d, "pq"), sync)
    t0 = time.perf_counter()
    for _ in range(n):
        q.put(PAYLOAD)
        item = q.get(block=False)
        q.ack(item)
    dt = time.perf_counter() - t0
    return n / dt


def persist_batch(d: str, n: int, sync: str, batch: int = 100) -> float:
    q = _persist(os.path.join(d, "pqb"), sync)
    t0 = time.perf_counter()
    for _ in range(n // batch):
        for _ in range(batch):          # persist-queue's ack queue commits every put
            q.put(PAYLOAD)
        for _ in range(batch):
            q.ack(q.get(block=False))
    dt = time.perf_counter() - t0
    return (n // batch * batch) / dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="messages for the one-at-a-time round trip")
    ap.add_argument("--batch-n", type=int, default=100_000, help="messages for the array path (Sluice)")
    ap.add_argument("--peer-batch-n", type=int, default=20_000, help="messages for the peers' batch path")
    ap.add_argument("--sync", default="NORMAL", choices=["OFF", "NORMAL", "FULL"])
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="sluice-bench-")
    try:
        rows = [
            ("round trip, 1 at a time", "sluice", sluice_round_trip(d, args.n, args.sync)),
            ("round trip, 1 at a time", "litequeue 0.9", litequeue_round_trip(d, args.n, args.sync)),
            ("round trip, 1 at a time", "persist-queue (SQLiteAckQueue)", persist_round_trip(d, args.n, args.sync)),
            ("array path, batches of 100", "sluice", sluice_batch(d, args.batch_n, args.sync)),
            ("array path, batches of 100", "litequeue 0.9", litequeue_batch(d, args.peer_batch_n, args.sync)),
            ("array path, batches of 100", "persist-queue (SQLiteAckQueue)",
             persist_batch(d, args.peer_batch_n, args.sync)),
        ]
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"# {time.strftime('%Y-%m-%d')}  {platform.machine()} {os.cpu_count()} cores  "
          f"Python {platform.python_version()}  SQLite {sqlite3.sqlite_version}  "
          f"synchronous={args.sync}")
    print(f"{'measurement':<28} {'system':<32} {'messages/s':>12}")
    for what, who, rate in rows:
        print(f"{what:<28} {who:<32} {rate:>12,.0f}")


if __name__ == "__main__":
    main()
