"""Seed 001's replication end to end (issue 15 §2, second item): capture at DBS1 →
propagation → apply at DBS2, each site run by its own ``sluice run`` host process:

    .venv/bin/python bench/bench_replication.py [--rows 200000] [--rate 2000] [--seconds 20]

Sites, all on the local PostgreSQL server: the source tables (10, ``id`` key, ``n``, ``v``,
``created``) and DBS1's store (capture process, its queue, the propagation; a schema the
capture leaves out) in the database ``sluice_repl_bench``; DBS2's store (its queue, the
apply process) and the replica in the database ``sluice_repl_bench_replica`` (the same
tables with a column ``applied`` defaulting to ``clock_timestamp()``, which the LCRs do not
set).  ``--dbs2-in-source``: DBS2's store in the source database instead (before
2026-11-28 06:00: the capture then decodes every enqueue and dequeue of DBS2's queue too).

1. Sustained throughput: ``--rows`` row changes (transactions of 1-100 rows, 70 % inserts /
   30 % updates, written by a server-side procedure) wait in the source's log; then the two
   hosts start and the clock runs until the replica equals the source (row count and the
   sum of ``n``): rows/s end to end, host start-up included.
2. Lag: with the hosts running, a writer inserts at ``--rate`` rows/s (transactions of 10)
   for ``--seconds``; each replica row's ``applied - created`` is its lag: p50 / p99.

Targets (issue 15 §2): >= 10,000 rows/s sustained, lag p50 < 1 s.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import statistics
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

SRC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
sys.path.insert(0, SRC_DIR)

import psycopg  # noqa: E402

import sluice  # noqa: E402

SERVER = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
# BENCH_REPL_DB: another pair of databases (two benches at once must not share them:
# each drops the replica's apply schema when done)
DB = os.environ.get("BENCH_REPL_DB", "sluice_repl_bench")
REPLICA_DB = f"{DB}_replica"
TABLES = 10

GEN = """
CREATE PROCEDURE {src}.gen(total int, seed float8, most int) LANGUAGE plpgsql AS $$
DECLARE done int := 0; n int; k int; nextid bigint := 0; id bigint;
BEGIN
  PERFORM setseed(seed);
  WHILE done < total LOOP
    n := least(1 + floor(random() * most)::int, total - done);
    FOR k IN 1..n LOOP
      IF nextid > 1000 AND random() < 0.3 THEN
        id := floor(random() * nextid)::bigint;
        EXECUTE format('UPDATE {src}.t%s SET n = n + 1 WHERE id = $1', id % {tables}) USING id;
      ELSE
        EXECUTE format('INSERT INTO {src}.t%s (id, n, v) VALUES ($1, 0, $2)', nextid % {tables})
          USING nextid, md5(nextid::text);
        nextid := nextid + 1;
      END IF;
    END LOOP;
    done := done + n;
    COMMIT;
  END LOOP;
END $$"""


def admin(db: str) -> psycopg.Connection:
    return psycopg.connect(f"{SERVER}/{db}", autocommit=True)


def totals(db: str, schema: str) -> tuple[int, int]:
    with admin(db) as c:
        rows = c.execute(" UNION ALL ".join(f"SELECT count(*), coalesce(sum(n), 0) FROM {schema}.t{i}"
                                            for i in range(TABLES))).fetchall()
    return sum(r[0] for r in rows), sum(r[1] for r in rows)


def host(dsn: str, log: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=SRC_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = open(log, "wb")
    return subprocess.Popen([sys.executable, "-m", "sluice.cli", "--dsn", dsn, "run"], stdout=out,
                            stderr=out, stdin=subprocess.DEVNULL, env=env)


def server_cpu() -> dict[int, float]:
    """CPU seconds (user + system) of each PostgreSQL backend connected to the bench's two
    databases, read from /proc (the server runs on this machine)."""
    with admin("postgres") as c:
        pids = [r[0] for r in c.execute("SELECT pid FROM pg_stat_activity WHERE datname IN (%s, %s) "
                                        "AND pid <> pg_backend_pid()", (DB, REPLICA_DB)).fetchall()]
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[pid] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError):
            pass
    return out


def profiled(label: str, fn: Any, rows: int, top: int) -> None:
    """Run ``fn`` (under cProfile unless ``top`` is 0); its rate, the CPU it took in this
    process and in the PostgreSQL backends of the bench's databases, where its time went."""
    prof = cProfile.Profile()
    before = server_cpu()
    cpu0, t0 = time.process_time(), time.perf_counter()
    if top:
        prof.enable()
    fn()
    prof.disable()
    secs, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    after = server_cpu()
    server = sum(v - before.get(pid, 0.0) for pid, v in after.items())
    print(f"{label}: {rows / secs:,.0f} rows/s{' under cProfile' if top else ''} ({rows} rows in "
          f"{secs:.1f} s; CPU per row: {cpu / rows * 1e6:.0f} us Python + {server / rows * 1e6:.0f} us "
          f"PostgreSQL backends; load {os.getloadavg()[0]:.1f})", flush=True)
    if top:
        stats = pstats.Stats(prof)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats("sluice", top)


def stages(a: argparse.Namespace, dbs1_dsn: str, dbs2_dsn: str, src: str, want: tuple[int, int]) -> None:
    """Each stage alone, in this process, one after the other: the capture drains the backlog
    (with combined capture and apply: into DBS2's queue, or — DBS2's apply ENABLED, as here —
    straight into the replica through DBS2's apply process, capture/combinedremote.py), then
    the apply empties DBS2's queue into the replica (nothing left for it in the latter case)."""
    from sluice.streams.apply import ApplyProcess
    from sluice.streams.capture.process import CaptureProcess
    cap_conn, app_conn = sluice.connect(dbs1_dsn), sluice.connect(dbs2_dsn)
    try:
        cap = CaptureProcess(cap_conn, "CAPTURE_DBS1")
        cap.start()
        print(f"   combined capture and apply: {type(cap.combined).__name__ if cap.combined else None}", flush=True)
        release = getattr(cap.source, "release", None)
        if release is not None:     # keep the decoding session (walsender) until its CPU is read
            cap.source.release = lambda: None
        profiled("capture (→ DBS2's queue, or its apply)", lambda: cap.catch_up(timeout=3600), a.rows, a.top)
        if release is not None:
            release()
        cap.stop()
        app = ApplyProcess.from_catalog(app_conn, "APPLY_DBS2")

        def drain() -> None:
            while app.run_batch(wait=0):
                pass
        profiled("apply (DBS2's queue → replica)", drain, a.rows, a.top)
        app.stop()
        got = totals(REPLICA_DB, src)
        print(f"replica {'equals' if got == want else 'DIFFERS from'} the source: {got} vs {want}", flush=True)
    finally:
        cap_conn.close()
        app_conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--parallelism", type=int, default=1, help="the apply process's (SET_PARAMETER)")
    ap.add_argument("--grouptransops", type=int, default=1,
                    help="the apply process's GROUPTRANSOPS (SET_PARAMETER; 1, the default: a target "
                         "transaction per source transaction)")
    ap.add_argument("--stages", action="store_true",
                    help="each stage alone in this process under cProfile (no hosts, no lag run)")
    ap.add_argument("--top", type=int, default=25, help="--stages: functions listed per stage")
    ap.add_argument("--txn-rows", type=int, default=100, help="the backlog's transactions: 1 to this many rows")
    ap.add_argument("--dbs2-in-source", action="store_true",
                    help="DBS2's store as a schema of the source database (the capture decodes its queue's "
                         "traffic too), not of the replica's")
    a = ap.parse_args()
    with admin("postgres") as c:
        for db in (DB, REPLICA_DB):
            if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (db,)).fetchone():
                c.execute(f"CREATE DATABASE {db}")
    tag = uuid.uuid4().hex[:8]
    src, s1, s2 = f"src_{tag}", f"s1_{tag}", f"s2_{tag}"
    dbs2_db = DB if a.dbs2_in_source else REPLICA_DB
    dbs1_dsn, dbs2_dsn = f"{SERVER}/{DB}?schema={s1}", f"{SERVER}/{dbs2_db}?schema={s2}"
    replica_dsn = f"{SERVER}/{REPLICA_DB}?schema=sluice_apply"
    print(f"{platform.node()} {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; {a.rows} rows, "
          f"then {a.rate} rows/s for {a.seconds:.0f} s; apply parallelism {a.parallelism}, "
          f"grouptransops {a.grouptransops}; DBS2's store in {dbs2_db}", flush=True)
    cols = "id bigint PRIMARY KEY, n integer NOT NULL, v text, created timestamptz DEFAULT clock_timestamp()"
    with admin(DB) as c:
        c.execute(f"CREATE SCHEMA {src}")
        for i in range(TABLES):
            c.execute(f"CREATE TABLE {src}.t{i} ({cols})")
        c.execute(GEN.format(src=src, tables=TABLES))
    with admin(REPLICA_DB) as c:
        c.execute(f"CREATE SCHEMA {src}")
        for i in range(TABLES):
            c.execute(f"CREATE TABLE {src}.t{i} ({cols}, applied timestamptz DEFAULT clock_timestamp())")
    procs: list[subprocess.Popen] = []
    dbs1 = sluice.connect(dbs1_dsn)
    dbs2 = sluice.connect(dbs2_dsn)
    try:
        owner = src.upper()
        dbs2.streams_adm.set_up_queue(queue_table="STREAMS_QUEUE_TABLE", queue_name="STREAMS_QUEUE")
        dbs2.cursor().execute(f"CREATE DATABASE LINK replica.net USING '{replica_dsn}'")
        dbs2.apply_adm.create_apply(queue_name="STREAMS_QUEUE", apply_name="APPLY_DBS2",
                                    apply_database_link="replica.net", apply_captured=True)
        dbs2.apply_adm.set_schema_instantiation_scn(owner, DB.upper(), 0, apply_database_link="replica.net")
        if a.parallelism > 1:
            dbs2.apply_adm.set_parameter("APPLY_DBS2", "parallelism", str(a.parallelism))
        if a.grouptransops > 1:
            dbs2.apply_adm.set_parameter("APPLY_DBS2", "grouptransops", str(a.grouptransops))
        dbs2.apply_adm.start_apply("APPLY_DBS2")
        dbs1.streams_adm.set_up_queue(queue_table="STREAMS_QUEUE_TABLE", queue_name="STREAMS_QUEUE")
        dbs1.cursor().execute(f"CREATE DATABASE LINK dbs2.net USING '{dbs2_dsn}'")
        dbs1.propagation_adm.create_propagation(propagation_name="DBS1_TO_DBS2", source_queue="STREAMS_QUEUE",
                                                destination_queue="STREAMS_QUEUE", destination_dblink="dbs2.net")
        dbs1.streams_adm.add_schema_rules(schema_name=owner, streams_type="capture", streams_name="CAPTURE_DBS1",
                                          queue_name="STREAMS_QUEUE", include_dml=True)
        dbs1.capture_adm.start_capture(capture_name="CAPTURE_DBS1")

        # 1. sustained throughput from a backlog
        t0 = time.perf_counter()
        with admin(DB) as c:
            c.execute(f"CALL {src}.gen(%s, 0.15, %s)", (a.rows, a.txn_rows))
        print(f"backlog of {a.rows} row changes written in {time.perf_counter() - t0:.1f} s", flush=True)
        want = totals(DB, src)
        if a.stages:
            stages(a, dbs1_dsn, dbs2_dsn, src, want)
            return
        t0 = time.perf_counter()
        procs += [host(dbs1_dsn, f"/tmp/bench_repl_dbs1_{tag}.log"), host(dbs2_dsn, f"/tmp/bench_repl_dbs2_{tag}.log")]
        last_report = time.perf_counter()
        while totals(REPLICA_DB, src) != want:
            if any(p.poll() is not None for p in procs):
                raise SystemExit(f"a host died: see /tmp/bench_repl_*_{tag}.log")
            time.sleep(0.5)
            if os.environ.get("BENCH_VERBOSE") and time.perf_counter() - last_report > 2:
                last_report = time.perf_counter()
                q1 = dbs1.query("SELECT COUNT(*) FROM AQ$STREAMS_QUEUE_TABLE", None)[1][0][0]
                q2 = dbs2.query("SELECT COUNT(*) FROM AQ$STREAMS_QUEUE_TABLE", None)[1][0][0]
                print(f"  {last_report - t0:5.1f} s: DBS1 queue {q1}, DBS2 queue {q2}, replica "
                      f"{totals(REPLICA_DB, src)[0]} rows", flush=True)
        secs = time.perf_counter() - t0
        cca = dbs1.query("SELECT OPTIMIZATION FROM V$STREAMS_CAPTURE", None)[1]
        print(f"   combined capture and apply (V$STREAMS_CAPTURE.OPTIMIZATION): {cca}", flush=True)
        print(f"1. end to end: {a.rows / secs:,.0f} rows/s ({a.rows} rows in {secs:.1f} s, host start-up "
              f"included; load {os.getloadavg()[0]:.1f})", flush=True)
        # the same changes between the first and the last row the apply inserted (``applied``
        # is the replica's clock_timestamp()): the rate once both hosts are up and LCRs flow
        with admin(REPLICA_DB) as c:
            first, last = c.execute(" UNION ALL ".join(
                f"SELECT min(applied), max(applied) FROM {src}.t{i}" for i in range(TABLES))
                .join(("SELECT extract(epoch FROM min(f))::float8, extract(epoch FROM max(l))::float8 FROM (", ") s(f, l)"))
            ).fetchone()
        print(f"   steady: {a.rows / (last - first):,.0f} rows/s between the first and the last row the apply "
              f"inserted ({last - first:.1f} s; start-up and the first LCR's way excluded)", flush=True)

        # 2. lag at a steady rate
        stop = threading.Event()
        start_id = 10 ** 9

        def writer() -> None:
            with psycopg.connect(f"{SERVER}/{DB}") as w:
                i, began = start_id, time.perf_counter()
                while not stop.is_set():
                    for _ in range(10):
                        w.execute(f"INSERT INTO {src}.t{i % TABLES} (id, n, v) VALUES (%s, 0, 'lag')", (i,))
                        i += 1
                    w.commit()
                    ahead = (i - start_id) / a.rate - (time.perf_counter() - began)
                    if ahead > 0:
                        time.sleep(ahead)
        th = threading.Thread(target=writer, daemon=True)
        th.start()
        time.sleep(a.seconds)
        stop.set()
        th.join()
        want = totals(DB, src)
        deadline = time.monotonic() + 300
        while totals(REPLICA_DB, src) != want and time.monotonic() < deadline:
            time.sleep(0.5)
        with admin(REPLICA_DB) as c:
            lags = [r[0] for r in c.execute(" UNION ALL ".join(
                f"SELECT extract(epoch FROM applied - created)::float8 FROM {src}.t{i} WHERE id >= {start_id}"
                for i in range(TABLES))).fetchall()]
        lags.sort()
        p99 = lags[int(len(lags) * 0.99) - 1] if lags else float("nan")
        print(f"2. lag at {a.rate} rows/s: p50 {statistics.median(lags):.3f} s, p99 {p99:.3f} s over {len(lags)} "
              f"rows (load {os.getloadavg()[0]:.1f})", flush=True)
        print(f"targets: >= 10,000 rows/s {'met' if a.rows / secs >= 10_000 else 'NOT met'}; "
              f"lag p50 < 1 s {'met' if statistics.median(lags) < 1 else 'NOT met'}")
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
        try:
            dbs1.capture_adm.stop_capture(capture_name="CAPTURE_DBS1")
            dbs1.capture_adm.drop_capture(capture_name="CAPTURE_DBS1")
        except sluice.Error as e:
            print(f"(dropping the capture: {e})")
        dbs1.close()
        dbs2.close()
        with admin(DB) as c:
            for schema in (src, s1, s2):
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        with admin(REPLICA_DB) as c:
            for schema in (src, s2):
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            c.execute("DROP SCHEMA IF EXISTS sluice_apply CASCADE")


if __name__ == "__main__":
    main()
