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

**Where the lag goes** (printed after the totals, percentiles per stage over the transactions):
a thread polls the queue table every 0.2 s for the captured LCRs that came meanwhile (one
enqueuer, the capture: SEQ grows in commit order; the sink consumes a batch a second or more
after its enqueue, so none is missed; the queue itself is as in the plain bench) —
``capture`` = their ENQ_TIME (the capture enqueued them; its commit follows within the batch)
- the source commit; ``sink wait`` = the start of the micro-batch that read them (Spark's
progress: trigger start, its end offset a queue commit SCN) - ENQ_TIME; ``sink batch`` = the
rows' ``applied`` - that start.  With it the warm batches' durations (Spark's parts, the apply
sink's laps) and the CPU each process took over the run (``/proc``, sampled every second: the
capture host, the producer, the Spark JVM, its Python workers, the driver, this run's
PostgreSQL backends, the rest of the machine).
"""

from __future__ import annotations

import argparse
import bisect
import json
import logging
import multiprocessing
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
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


class CpuSampler:
    """CPU seconds (user + system) per process class over a
    window, from /proc every second; a process that started meanwhile counts from zero."""

    def __init__(self, classify: Any) -> None:
        self.classify = classify        # (pid, ppid, cmdline) -> class name or None
        self.first: dict[int, float] = {}
        self.last: dict[int, tuple[str, float]] = {}
        self.stop = threading.Event()
        self.tick = os.sysconf("SC_CLK_TCK")
        self.machine = [self._machine(), 0.0]
        self.started = time.time()
        self._sample(first=True)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _machine(self) -> float:
        with open("/proc/stat") as f:
            fields = f.readline().split()[1:]
        return (sum(int(x) for x in fields) - int(fields[3]) - int(fields[4])) / self.tick   # busy

    def _sample(self, first: bool = False) -> None:
        procs = {}
        for p in os.listdir("/proc"):
            if not p.isdigit():
                continue
            try:
                with open(f"/proc/{p}/stat") as f:
                    stat = f.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            # own user + system time: a reaped child's whole life would land in its parent's
            # cutime at once (a process that ends meanwhile keeps its last sample)
            procs[int(p)] = (int(stat[1]), cmd, (int(stat[11]) + int(stat[12])) / self.tick)
        for pid, (ppid, cmd, cpu) in procs.items():
            kind = self.classify(pid, ppid, cmd, procs)
            if first:
                self.first[pid] = cpu
            elif pid not in self.first:
                self.first[pid] = 0.0
            self.last[pid] = (kind, cpu)

    def _run(self) -> None:
        while not self.stop.wait(1.0):
            self._sample()

    def report(self, rows: int) -> str:
        self.stop.set()
        self.thread.join()
        self._sample()
        seconds = time.time() - self.started
        busy = self._machine() - self.machine[0]
        by: dict[str, float] = {}
        for pid, (kind, cpu) in self.last.items():
            by[kind] = by.get(kind, 0.0) + cpu - self.first.get(pid, 0.0)
        parts = ", ".join(f"{k} {v:.1f} s ({v / seconds:.2f} core, {v / rows * 1e6:.0f} us/row)"
                          for k, v in sorted(by.items(), key=lambda kv: -kv[1]) if v >= 0.05)
        return (f"CPU over {seconds:.0f} s (machine busy {busy:.0f} s = {busy / seconds:.2f} of "
                f"{os.cpu_count()} cores): {parts}")


def pct_line(values: list[float]) -> str:
    v = sorted(values)
    if not v:
        return "none"
    return " / ".join(f"{v[min(len(v) - 1, int(p * len(v)))]:.2f}" for p in (0.1, 0.5, 0.9, 0.99)) + " s"


class QueueTimes:
    """Polls the queue table (every ``every`` s, a thread) for its captured LCRs: per source
    transaction (its first row's id) when the capture enqueued it and the queue commit SCN."""

    def __init__(self, dsn: str, every: float = 0.2) -> None:
        from sluice.pipeline.queueio import QueueRef
        from sluice.store.pgconn import parse_dsn, search_path_option
        ref = QueueRef.resolve(dsn, "STRM_Q", browse=True)
        target = parse_dsn(dsn)
        self.c = psycopg.connect(target.conninfo, options=search_path_option(target.schema), autocommit=True)
        self.sql = (f"SELECT max(SEQ), min(ENQ_TIME), min(CSCN), min(substring(USER_DATA from "
                    f"'\\\\\"value\\\\\":([0-9]+)')::bigint) FROM {ref.table} WHERE SEQ > %s "
                    f"GROUP BY substring(USER_DATA from '\"txn\":\"([0-9]+)\"')")
        self.seq, self.every = 0, every
        self.out: dict[int, tuple[float, int]] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            for seq, enq, cscn, ident in self.c.execute(self.sql, (self.seq,)).fetchall():
                self.seq = max(self.seq, seq)
                if ident is not None:
                    self.out.setdefault(ident, (float(enq), int(cscn)))

    def result(self) -> dict[int, tuple[float, int]]:
        self.stop.set()
        self.thread.join()
        self.c.close()
        return self.out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--group", type=int, default=10000, help="the apply's GROUPTRANSOPS")
    ap.add_argument("--tasks", type=int, default=1, help="the apply sink's tasks")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--prefix", default="lagcap", help="the scratch databases' name prefix")
    ap.add_argument("--trigger", type=float, default=None, help="the sink's trigger interval, s (default: the sink's)")
    a = ap.parse_args()
    logging.basicConfig(format="    %(message)s")
    work = tempfile.mkdtemp(prefix="bench-lag-captured-")
    dbs, dsn = make_databases(a.prefix, ("store", "aps"))
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
        spark = spark_session(a.master, dsn["store"], ui=False,
                              conf={"spark.sql.streaming.numRecentProgressUpdates": "10000"})
        laps: list[tuple] = []

        class Laps(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.msg.startswith("apply %s batch %s: entered"):
                    laps.append(record.args)
        logging.getLogger("sluice.pipeline").addHandler(Laps())
        logging.getLogger("sluice.pipeline").setLevel(logging.INFO)
        logging.getLogger("sluice.pipeline").propagate = False
        spec = PipelineSpec("aps", dsn["store"], "STRM_Q", "APS", "POS", apply_tasks=a.tasks)
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", os.path.join(work, "ck"),
                          connect=sluice.connect, apply_name="APS",
                          trigger=None if a.trigger is None else {"processingTime": f"{int(a.trigger * 1000)} milliseconds"})
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
        try:
            jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
        except Exception:  # noqa: BLE001
            jvm_pid = -1
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as c:
            pg_ours = {r[0] for r in c.execute("SELECT pid FROM pg_stat_activity WHERE datname = ANY(%s)",
                                               (list(dbs.values()),)).fetchall()}
        me = os.getpid()

        def classify(pid: int, ppid: int, cmd: str, procs: dict) -> str:
            if pid == me:
                return "driver (bench + Spark driver Python)"
            if pid == jvm_pid:
                return "Spark JVM"
            chain, p = [], pid
            while p > 1 and len(chain) < 20:
                chain.append(p)
                p = procs.get(p, (0,))[0]
            if jvm_pid in chain:
                return "Python workers"
            if host.pid in chain:
                return "capture host"
            if child.pid in chain:
                return "producer"
            if pid in pg_ours:
                return "PostgreSQL, this run's backends"
            if cmd.startswith("postgres:") and "walsender" in cmd and pid not in pg_ours:
                return "PostgreSQL, other"
            if cmd.startswith("postgres") or "/postgres" in cmd:
                return "PostgreSQL, other"
            return "rest of the machine"
        child.start()
        with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as c:   # the walsender, the producer's backend
            time.sleep(0.5)
            pg_ours |= {r[0] for r in c.execute("SELECT pid FROM pg_stat_activity WHERE datname = ANY(%s)",
                                                (list(dbs.values()),)).fetchall()}
        cpu = CpuSampler(classify)
        queued = QueueTimes(dsn["store"])
        txns, produced = mine.recv()
        child.join()
        rows = sum(n for _f, n, _t in txns)
        print(f"    produced {rows} rows in {len(txns)} transactions in {produced:.1f} s = {rows / produced:,.0f} rows/s",
              flush=True)
        if rows / produced < 0.9 * a.rate:   # the machine could not commit what was asked
            print(f"    NOTE: below 90 % of the {a.rate:,} rows/s asked: this run's lag is not a figure at that rate",
                  flush=True)
        deadline = time.time() + max(60.0, 4 * a.seconds)
        done = applied_times(dsn["aps"], first)
        while len(done) < rows and time.time() < deadline:
            time.sleep(1)
            done = applied_times(dsn["aps"], first)
        print("    " + cpu.report(rows), flush=True)
        progress = list(run.query.recentProgress)
        for p in progress[-8:]:
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
        # HotSpot's C2 still compiles Spark's planner and codegen paths for minutes (0.3+ core
        # 45-90 s in): the lag of the transactions committed after the first quarter is the
        # sustained figure, the whole run's includes the JVM's warm-up
        settled = sorted(latest[j] - txns[j][2] for j in complete if txns[j][2] >= txns[0][2] + produced / 4)
        print(f"    the same after the first quarter of the run ({len(settled)} transactions): "
              f"{lag_percentiles(settled)}", flush=True)
        breakdown(txns, complete, latest, queued.result(), progress, laps)
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


def breakdown(txns: list, complete: list, latest: dict, queued: dict, progress: list, laps: list) -> None:
    """Where the lag went, per stage (p10 / p50 / p90 / p99 over the transactions)."""
    from datetime import datetime
    batches = []    # (end position, trigger start, rows, duration ms)
    for p in progress:
        src = p.sources[0] if p.sources else None
        if src is None or not src.endOffset or not p.numInputRows:
            continue
        end = json.loads(src.endOffset)["position"]
        began = datetime.fromisoformat(p.timestamp.replace("Z", "+00:00")).timestamp()
        batches.append((end, began, p.numInputRows, dict(p.durationMs)))
    batches.sort()
    ends = [b[0] for b in batches]
    stages: dict[str, list[float]] = {k: [] for k in ("capture: source commit -> queue enqueue",
                                                      "sink wait: enqueue -> micro-batch start",
                                                      "sink batch: micro-batch start -> target row")}
    for j in complete:
        f, _n, committed = txns[j]
        q = queued.get(f)
        if q is None:
            continue
        enq, cscn = q
        k = bisect.bisect_left(ends, cscn)
        if k == len(batches):
            continue
        began = batches[k][1]
        stages["capture: source commit -> queue enqueue"].append(enq - committed)
        stages["sink wait: enqueue -> micro-batch start"].append(began - enq)
        stages["sink batch: micro-batch start -> target row"].append(latest[j] - began)
    print(f"where the lag went ({len(stages['sink batch: micro-batch start -> target row'])} transactions found "
          f"in the queue and a batch; p10 / p50 / p90 / p99):")
    for k, v in stages.items():
        print(f"    {k}: {pct_line(v)}")
    warm = batches[len(batches) // 4:]      # the JVM warms up over the first batches
    if warm:
        print(f"    micro-batches after the first quarter ({len(warm)}): rows {pct_line([b[2] / 1000 for b in warm])[:-2]} k; "
              + "; ".join(f"{part} {pct_line([b[3].get(part, 0) / 1000 for b in warm])}"
                          for part in ("triggerExecution", "latestOffset", "queryPlanning", "addBatch",
                                       "walCommit", "commitOffsets")))
    got: dict[str, list[float]] = {}
    for args in laps[len(laps) // 4:]:
        for item in args:
            if isinstance(item, list):
                for entry in item:
                    if isinstance(entry, tuple) and entry and isinstance(entry[-1], dict):
                        for label, secs in entry[-1].items():
                            got.setdefault(label, []).append(secs)
        if len(args) > 5 and isinstance(args[5], float):
            got.setdefault("set up", []).append(args[5])
        if len(args) > 4 and isinstance(args[4], float):
            got.setdefault("foreachBatch", []).append(args[4])
    if got:
        print("    the sink's laps, same batches (p10 / p50 / p90 / p99): "
              + "; ".join(f"{label} {pct_line(v)}" for label, v in got.items()))


if __name__ == "__main__":
    main()
