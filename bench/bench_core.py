"""AQ core throughput on the embedded backend, side by side with litequeue and persist-queue.

Run by hand (not part of the test suite):

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/bench_core.py [--n 2000] [--batch-n 100000] [--sync NORMAL]

Each peer runs on its own fresh SQLite file in WAL mode with the same
``synchronous`` setting (NORMAL by default: durable across application crashes,
the last commits may be lost on power failure; FULL: fsync at every commit).
Payloads are 100 bytes.  Two measurements:

* the floor (issue 11 item 4): a minimal queue written directly on ``sqlite3`` with the
  same durability -- one table, INSERT + COMMIT, then in ``BEGIN IMMEDIATE`` SELECT the
  oldest + DELETE + COMMIT.  Sluice's round trip is printed as a ratio of it;

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


def floor_round_trip(d: str, n: int, sync: str) -> float:
    """The physical floor: the same durable work as a queue, with nothing above SQLite."""
    db = sqlite3.connect(os.path.join(d, "floor.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {sync}")
    db.execute("CREATE TABLE q (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
    t0 = time.perf_counter()
    for _ in range(n):
        db.execute("BEGIN")
        db.execute("INSERT INTO q (payload) VALUES (?)", (PAYLOAD,))
        db.execute("COMMIT")
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT id, payload FROM q ORDER BY id LIMIT 1").fetchone()
        db.execute("DELETE FROM q WHERE id = ?", (row[0],))
        db.execute("COMMIT")
    dt = time.perf_counter() - t0
    db.close()
    return n / dt


def sluice_sql_ceiling(d: str, n: int, sync: str) -> float:
    """Sluice's own SQL with no Python above it: the queue table and indexes exactly as a
    Sluice store creates them (read back from ``sqlite_master``), the three statements a
    Sluice round trip runs (INSERT at commit; SELECT the first candidates in queue order;
    DELETE the consumed row), each a single autocommit statement as Sluice runs them (the
    message lock that makes the read-then-delete safe is a record lock outside SQLite).
    No layer above SQLite can be faster than this with today's storage format."""
    conn, _ = _sluice_conn(os.path.join(d, "ddl.db"), sync)
    conn.close()
    src = sqlite3.connect(os.path.join(d, "ddl.db"))
    ddl = [sql for (sql,) in src.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = 'SLUICE.BENCH_QT' AND type IN ('table', 'index') "
        "AND sql IS NOT NULL ORDER BY type DESC")]
    cols = [r[1] for r in src.execute('PRAGMA table_info("SLUICE.BENCH_QT")')]
    src.close()
    db = sqlite3.connect(os.path.join(d, "ceiling.db"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(f"PRAGMA synchronous = {sync}")
    for sql in ddl:
        db.execute(sql)
    table = '"SLUICE.BENCH_QT"'
    ins = (f"INSERT INTO {table} (Q_NAME, ENQ_UID, SEQ, MSGID, PRIORITY, STATE, ENQ_TIME, ENQ_TID, "
           f"USER_DATA) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    sel = (f"SELECT {', '.join(cols)} FROM {table} WHERE Q_NAME = ? AND STATE = 0 AND "
           f"(EXPIRE_AT IS NULL OR EXPIRE_AT > ? OR STATE = 3) AND DELIVERY_MODE = 1 AND "
           f"(ENQ_TIME, SEQ) > (?, ?) ORDER BY ENQ_TIME, SEQ LIMIT 16")
    seq_at, time_at = cols.index("SEQ"), cols.index("ENQ_TIME")
    last = (0.0, 0)
    t0 = time.perf_counter()
    for i in range(n):
        now = time.time()
        db.execute(ins, ("BENCH_Q", "SLUICE", i + 1, os.urandom(16), 0, 0, now, "A.B.C", PAYLOAD))
        row = db.execute(sel, ("BENCH_Q", now, *last)).fetchall()[0]
        db.execute(f"DELETE FROM {table} WHERE SEQ = ?", (row[seq_at],))
        last = (row[time_at], row[seq_at])
    dt = time.perf_counter() - t0
    db.close()
    return n / dt


def sluice_profile(d: str, n: int, sync: str, top: int = 25) -> None:
    """Where a Sluice round trip's microseconds go: cProfile of ``n`` round trips, the
    time inside SQLite's own calls (``execute``/``commit``/``fetch*``) set apart from
    the Python above it."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    sluice_round_trip(d, n, sync, name="prof.db")
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())     # tottime over all functions
    in_sqlite = sum(v[2] for (file, _, fn), v in stats.stats.items()     # C calls into sqlite3
                    if file == "~" and any(w in fn for w in ("execute", "fetch", "commit")))
    print(f"# profile of {n} round trips: {total / n * 1e6:.1f} us each (under the profiler), "
          f"{in_sqlite / n * 1e6:.1f} us in sqlite3 calls, {(total - in_sqlite) / n * 1e6:.1f} us "
          f"in Python above them")
    stats.sort_stats("tottime").print_stats(top)


def sluice_round_trip(d: str, n: int, sync: str, name: str = "s.db") -> float:
    conn, q = _sluice_conn(os.path.join(d, name), sync)
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
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also profile N Sluice round trips and print where the time goes")
    args = ap.parse_args()
    d = tempfile.mkdtemp(prefix="sluice-bench-")
    try:
        floor = floor_round_trip(d, args.n, args.sync)
        ceiling = sluice_sql_ceiling(d, args.n, args.sync)
        sluice_rt = sluice_round_trip(d, args.n, args.sync)
        rows = [
            ("round trip, 1 at a time", "floor: bare sqlite3 queue", floor),
            ("round trip, 1 at a time", "Sluice's own SQL, no Python", ceiling),
            ("round trip, 1 at a time", "sluice", sluice_rt),
            ("round trip, 1 at a time", "litequeue 0.9", litequeue_round_trip(d, args.n, args.sync)),
            ("round trip, 1 at a time", "persist-queue (SQLiteAckQueue)", persist_round_trip(d, args.n, args.sync)),
            ("array path, batches of 100", "sluice", sluice_batch(d, args.batch_n, args.sync)),
            ("array path, batches of 100", "litequeue 0.9", litequeue_batch(d, args.peer_batch_n, args.sync)),
            ("array path, batches of 100", "persist-queue (SQLiteAckQueue)",
             persist_batch(d, args.peer_batch_n, args.sync)),
        ]
        if args.profile:
            sluice_profile(d, args.profile, args.sync)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"# {time.strftime('%Y-%m-%d')}  {platform.machine()} {os.cpu_count()} cores  "
          f"Python {platform.python_version()}  SQLite {sqlite3.sqlite_version}  "
          f"synchronous={args.sync}")
    print(f"{'measurement':<28} {'system':<32} {'messages/s':>12}")
    for what, who, rate in rows:
        print(f"{what:<28} {who:<32} {rate:>12,.0f}")
    print(f"sluice round trip / floor = {sluice_rt / floor:.2f}  (issue 11 item 4 target: >= 0.6); "
          f"Sluice's own SQL / floor = {ceiling / floor:.2f}")


if __name__ == "__main__":
    main()
