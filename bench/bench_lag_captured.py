"""Issue 16 §2's end-to-end lag measured from the SOURCE commit: rows committed into
PostgreSQL tables at ``--rate`` rows/s are captured (a capture process run by a ``sluice
run`` host of their own, wal2json) into the store's queue and applied into a second
PostgreSQL database by the Spark apply sink (P5's rule set and transformations, as
``bench_pipeline.py --lag``, which enqueues the LCRs itself and so measures from the
queue's commit).

    PYTHONPATH=src .venv/bin/python bench/bench_lag_captured.py [--rate 5000] [--seconds 60] [--group 10000]

The source tables live in the store's database (a site captures its own database, DESIGN.md
§7), schemas U0..U9, tables T0..T9; the store is renamed DBS1.NET (what P5's rules test).
The producer (a process of its own) commits transactions of 1-100 INSERTs and records each
one's commit time (``time.time()`` once COMMIT returned); every target table has an extra
column ``applied`` (``clock_timestamp()`` when the apply inserts the row, inside its target
transaction).  Lag of a source transaction = its rows' latest ``applied`` - its commit time.
Start-up is excluded as in ``--lag``: a warm-up transaction with a row in every table is
applied before the clock starts.
"""

from __future__ import annotations

import argparse
import bisect
import logging
import multiprocessing
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from typing import Any

import psycopg

import sluice
from bench_pipeline import (PG_SERVER, TABLES, drop_databases, lag_percentiles, make_databases, p5_site,
                            p5_target_of)
from sluice.pipeline.runner import PipelineRun, spark_session
from sluice.pipeline.stages import PipelineSpec

SRC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
OWNERS = [f"U{o}" for o in range(10)]


def source_tables(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as c:
        for owner in OWNERS:
            c.execute(f"CREATE SCHEMA {owner.lower()}")
            for t in TABLES:
                c.execute(f"CREATE TABLE {owner.lower()}.{t.lower()} (id bigint PRIMARY KEY, name text, amount integer)")


def commit_rows(c: psycopg.Connection, rnd: random.Random, first: int, size: int,
                tables: list[tuple[str, str]] | None = None) -> None:
    """One source transaction of ``size`` INSERTs (ids from ``first``), one statement per table."""
    by_table: dict[tuple[str, str], list[int]] = {}
    for i in range(size):
        ot = tables[i] if tables else (rnd.choice(OWNERS), rnd.choice(TABLES))
        by_table.setdefault(ot, []).append(first + i)
    with c.pipeline():   # the statements sent without waiting for each answer: one round trip
        for (owner, table), ids in by_table.items():
            c.execute(f"INSERT INTO {owner.lower()}.{table.lower()} (id, name, amount) "
                      "SELECT i, 'n' || i, i %% 1000 FROM unnest(%s::bigint[]) AS i", (ids,))
    c.commit()


def produce(dsn: str, rate: int, seconds: int, first: int, out: Any) -> None:
    """Commit transactions of 1-100 rows at ``rate`` rows/s for ``seconds``; send back the
    transactions as (first id, size, commit time)."""
    rnd = random.Random(16)
    txns: list[tuple[int, int, float]] = []
    with psycopg.connect(dsn) as c:
        start = time.time()
        k = first
        while time.time() - start < seconds:
            size = rnd.randint(1, 100)
            commit_rows(c, rnd, k, size)
            txns.append((k, size, time.time()))
            k += size
            ahead = (k - first) / rate - (time.time() - start)
            if ahead > 0:
                time.sleep(ahead)
        produced = time.time() - start
    out.send((txns, produced))


def applied_times(dsn: str, since: int) -> dict[int, float]:
    """id -> when the apply inserted it, over every target table."""
    out: dict[int, float] = {}
    with psycopg.connect(dsn) as c:
        for owner in OWNERS:
            for t in TABLES:
                schema, table = p5_target_of(owner, t)
                out.update(c.execute(f"SELECT id, extract(epoch FROM applied)::float8 FROM {schema}.{table} "
                                     "WHERE id >= %s", (since,)).fetchall())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--group", type=int, default=10000, help="the apply's GROUPTRANSOPS")
    ap.add_argument("--tasks", type=int, default=1, help="the apply sink's tasks")
    ap.add_argument("--master", default="local[2]")
    a = ap.parse_args()
    logging.basicConfig(format="    %(message)s")
    work = tempfile.mkdtemp(prefix="bench-lag-captured-")
    dbs, dsn = make_databases("lagcap", ("store", "aps"))
    host = None
    conn = None
    try:
        print(f"captured lag {platform.node()}, {os.cpu_count()} cores; start {time.strftime('%H:%M:%S')}, "
              f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {a.rate} rows/s for {a.seconds} s", flush=True)
        source_tables(dsn["store"])
        conn = p5_site(dsn, ("APS",), a.group)
        with psycopg.connect(dsn["aps"], autocommit=True) as c:   # when the apply inserted each row
            for owner in OWNERS:
                for t in TABLES:
                    c.execute("ALTER TABLE {}.{} ADD COLUMN applied timestamptz DEFAULT clock_timestamp()"
                              .format(*p5_target_of(owner, t)))
        conn.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO DBS1.NET")
        for owner in OWNERS:
            conn.streams_adm.add_schema_rules(schema_name=owner, streams_type="capture", streams_name="CAP",
                                              queue_name="STRM_Q", include_dml=True)
        conn.capture_adm.start_capture(capture_name="CAP")
        env = dict(os.environ, PYTHONPATH=SRC_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        host = subprocess.Popen([sys.executable, "-m", "sluice.cli", "--dsn", dsn["store"], "run"],
                                stdout=open(os.path.join(work, "host.log"), "wb"), stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env)
        spark = spark_session(a.master, dsn["store"], ui=False)
        spec = PipelineSpec("aps", dsn["store"], "STRM_Q", "APS", "POS", apply_tasks=a.tasks)
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", os.path.join(work, "ck"),
                          connect=sluice.connect, apply_name="APS")
        every = [(o, t) for o in OWNERS for t in TABLES]
        with psycopg.connect(dsn["store"]) as c:   # the warm-up: a row in every table
            commit_rows(c, random.Random(0), 0, len(every), every)
        run.start()
        warm = time.time()
        while len(applied_times(dsn["aps"], 0)) < len(every):
            if not run.query.isActive or host.poll() is not None:
                raise RuntimeError(f"stopped before the warm-up was applied: {run.query.exception()}, "
                                   f"host {host.poll()} (see {work}/host.log)")
            time.sleep(0.2)
        print(f"    warm-up captured and applied {time.time() - warm:.1f} s after the start", flush=True)
        first = 10 ** 6
        mine, theirs = multiprocessing.get_context("spawn").Pipe()
        child = multiprocessing.get_context("spawn").Process(
            target=produce, args=(dsn["store"], a.rate, a.seconds, first, theirs))
        child.start()
        txns, produced = mine.recv()
        child.join()
        rows = sum(n for _f, n, _t in txns)
        print(f"    produced {rows} rows in {len(txns)} transactions in {produced:.1f} s = {rows / produced:,.0f} rows/s",
              flush=True)
        deadline = time.time() + max(60.0, 4 * a.seconds)
        done = applied_times(dsn["aps"], first)
        while len(done) < rows and time.time() < deadline:
            time.sleep(1)
            done = applied_times(dsn["aps"], first)
        for p in run.query.recentProgress:
            print(f"    batch {p.batchId}: {p.numInputRows} rows, trigger {p.durationMs.get('triggerExecution')} ms")
        run.stop()
        spark.stop()
        starts = [f for f, _n, _t in txns]
        latest: dict[int, float] = {}
        for i, when in done.items():
            j = bisect.bisect_right(starts, i) - 1
            latest[j] = max(latest.get(j, 0.0), when)
        complete = [j for j in latest
                    if all(i in done for i in range(txns[j][0], txns[j][0] + txns[j][1]))]
        lags = sorted(latest[j] - txns[j][2] for j in complete)
        print(f"lag source commit -> target commit over {len(lags)} transactions: {lag_percentiles(lags)}; "
              f"transactions not wholly applied by the deadline: {len(txns) - len(complete)}; "
              f"end {time.strftime('%H:%M:%S')}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    finally:
        if host is not None:
            host.terminate()
            try:
                host.wait(60)
            except subprocess.TimeoutExpired:
                host.kill()
        if conn is not None:
            try:
                conn.capture_adm.stop_capture(capture_name="CAP")
                conn.capture_adm.drop_capture(capture_name="CAP")   # its replication slot
            except sluice.Error as e:
                print(f"(dropping the capture: {e})")
            conn.close()
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as c:   # a slot left by a failed run
            for (slot,) in c.execute("SELECT slot_name FROM pg_replication_slots WHERE NOT active AND database = %s",
                                     (dbs["store"],)).fetchall():
                c.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        drop_databases(dbs)


if __name__ == "__main__":
    main()
