"""Capture from PostgreSQL (issue 13 §4, with the project's corrections), in one run:

    .venv/bin/python bench/bench_capture.py [--rows 1000000] [--max-changes 5000]
                                            [--commit-each] [--rate 1000] [--seconds 20]
                                            [--profile]

The workload — ``--rows`` single-row inserts and updates (70/30) in transactions of 1-100
rows, over 100 tables — is written first by a server-side procedure; then three readers
drain the same log, one after the other, each through its own replication slot with
wal2json's options of the capture (format 2, xids, LSNs, times, types; the store's schema
filtered out), ``--max-changes`` decoded rows per read:

(a) raw drain: ``pg_logical_slot_get_changes`` and nothing else (rows fetched, counted);
(b) staging floor: peek, parse each row's JSON, COPY the changes into a table of the same
    database, commit, advance the slot — the least any exactly-once capture does, under
    the capture's commit policy (one commit per read of several whole source transactions,
    or one per source transaction with ``--commit-each``);
(c) Sluice capture: a capture process with 100 table rules (as ADD_TABLE_RULES writes them)
    into its ANYDATA queue.

Changes/s of each and (c)/(b) (target >= 0.6).  Then the two stagings side by side
(issue 13 §2 "Staging"), each with its own capture and a consumer thread in the same
process, timed until the consumer has every LCR:

(d) PERSISTENT staging (the default): LCRs and position committed together; the consumer
    dequeues arrays of persistent LCRs and commits each;
(e) BUFFERED staging (SET_PARAMETER 'STAGING'): LCRs into the queue's memory one by one,
    the consumer takes them one by one (buffered dequeues have array size one) and commits
    every 500, which lets the capture confirm the slot.

Then latency: pgbench commits single-row transactions at ``--rate`` per second for
``--seconds`` while the capture runs; the time from each source commit (its commit
timestamp) to the return of the enqueue that holds its LCR (the queue commit when
persistent): p50 / p99 (targets 100 ms / 500 ms), for each staging (``--staging``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import psycopg  # noqa: E402

import sluice  # noqa: E402
from sluice.streams.capture import CaptureProcess  # noqa: E402
from sluice.streams.capture.pgsource import Source, int_to_lsn, lsn_to_int  # noqa: E402

SERVER = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
DB = "sluice_capture_bench"
TABLES = 100

GEN = """
CREATE PROCEDURE {src}.gen(total int, seed float8) LANGUAGE plpgsql AS $$
DECLARE done int := 0; n int; k int; nextid bigint := 0; id bigint;
BEGIN
  PERFORM setseed(seed);
  WHILE done < total LOOP
    n := least(1 + floor(random() * 100)::int, total - done);
    FOR k IN 1..n LOOP
      IF nextid > 1000 AND random() < 0.3 THEN
        id := floor(random() * nextid)::bigint;
        EXECUTE format('UPDATE {src}.t%s SET n = n + 1 WHERE id = $1', lpad((id % {tables})::text, 3, '0'))
          USING id;
      ELSE
        EXECUTE format('INSERT INTO {src}.t%s (id, n, v) VALUES ($1, 0, $2)',
                       lpad((nextid % {tables})::text, 3, '0'))
          USING nextid, md5(nextid::text);
        nextid := nextid + 1;
      END IF;
    END LOOP;
    done := done + n;
    COMMIT;
  END LOOP;
END $$"""


def admin(db: str = DB) -> psycopg.Connection:
    return psycopg.connect(f"{SERVER}/{db}", autocommit=True)


def ensure_db() -> None:
    with admin("postgres") as a:
        if not a.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB,)).fetchone():
            a.execute(f"CREATE DATABASE {DB}")


def changes_in(rows: list) -> int:
    return sum(1 for (d,) in rows if d[11] in "IUD")   # {"action":"I"…


def raw_drain(source: Source, slot: str, target: int, batch: int) -> tuple[int, float]:
    opts = source.options()
    ph = ", ".join(["%s"] * len(opts))
    sql = f"SELECT data FROM pg_logical_slot_get_changes(%s, %s::pg_lsn, %s, {ph})"
    n, t0 = 0, time.perf_counter()
    while True:
        rows = source.raw.execute(sql, (slot, int_to_lsn(target), batch, *opts)).fetchall()
        if not rows:
            return n, time.perf_counter() - t0
        n += changes_in(rows)


def staging_floor(source: Source, slot: str, target: int, batch: int, table: str,
                  commit_each: bool) -> tuple[int, float]:
    """Peek, parse, COPY into ``table``, commit, advance: what exactly-once staging costs."""
    from decimal import Decimal
    conn = psycopg.connect(source.conninfo)
    n, t0 = 0, time.perf_counter()
    while True:
        rows, _ = source.peek(slot, batch, target)
        if not rows:
            conn.close()
            return n, time.perf_counter() - t0
        txns: list[list[tuple]] = []
        cur_rows: list[tuple] = []
        end = 0
        for text in rows:
            r = json.loads(text, parse_float=Decimal)
            a = r["action"]
            if a == "B":
                cur_rows = []
            elif a == "C":
                commit = lsn_to_int(r["lsn"])
                end = lsn_to_int(r["nextlsn"])
                txns.append([(x[0], x[1], commit, x[2], x[3], x[4], x[5]) for x in cur_rows])
            elif a != "M":
                cur_rows.append((r["xid"], lsn_to_int(r["lsn"]), r["schema"], r["table"], a,
                                 json.dumps(r.get("columns") or r.get("identity"), default=str)))
        groups = [[t] for t in txns] if commit_each else [txns]
        for group in groups:
            with conn.cursor().copy(f"COPY {table} (xid, lsn, commit_lsn, sch, tbl, action, data) "
                                    f"FROM STDIN") as copy:
                for t in group:
                    for row in t:
                        copy.write_row(row)
                        n += 1
            conn.commit()
        source.advance(slot, end)


class Timed(CaptureProcess):
    """The capture, noting when each queue commit returned and the source commit times
    it held (for the latency percentiles)."""

    lags: list[float]

    def _capture(self, txns, advance=True):
        super()._capture(txns, advance)
        self._lag(txns)

    def _stage(self, txns):
        super()._stage(txns)
        self._lag(txns)

    def _lag(self, txns):
        now = time.time()
        self.lags.extend(now - t.commit_time.timestamp() for t in txns if t.changes)


def capture(dsn: str, target: int, batch: int, commit_each: bool, profile: bool) -> tuple[int, float]:
    proc = CaptureProcess(sluice.connect(dsn), "BENCH_CAP", max_changes=batch,
                          commit_each_transaction=commit_each)
    proc.start()
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    while proc.run_batch(upto_lsn=target):
        pass
    elapsed = time.perf_counter() - t0
    if prof:
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(35)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    n = proc.conn.query("SELECT TOTAL_MESSAGES_ENQUEUED FROM V$STREAMS_CAPTURE", None)[1][0][0]
    proc.stop()
    proc.conn.close()
    return n, elapsed


class Consumer(threading.Thread):
    """APPLY1 taking the capture's LCRs (buffered: one by one, commit every 500)."""

    def __init__(self, dsn: str, queue: str, buffered: bool) -> None:
        super().__init__(daemon=True)
        self.conn = sluice.connect(dsn)
        self.q = self.conn.queue(queue)
        self.q.deqoptions.consumername = "APPLY1"
        self.q.deqoptions.wait = sluice.DEQ_NO_WAIT
        self.q.deqoptions.navigation = sluice.DEQ_FIRST_MSG   # (whole transaction groups)
        if buffered:
            self.q.deqoptions.deliverymode = sluice.MSG_BUFFERED
            self.q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
        self.buffered = buffered
        self.taken = 0
        self.done = threading.Event()      # set by the capture's side: nothing more will come
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            idle = False
            while True:
                if self.buffered:
                    got = 0
                    while got < 500 and self.q.deqone() is not None:
                        got += 1
                else:
                    got = len(self.q.deqmany(1000))
                self.conn.commit()
                self.taken += got
                if not got:
                    if self.done.is_set() and idle:
                        return
                    idle = self.done.is_set()
                    time.sleep(0.002)
        except BaseException as e:   # noqa: BLE001 — reported by the bench
            self.error = e


def staged(dsn: str, name: str, queue: str, target: int, batch: int, buffered: bool) -> tuple[int, float]:
    """Capture to ``target`` with a consumer in this process; LCRs consumed and seconds."""
    proc = CaptureProcess(sluice.connect(dsn), name, max_changes=batch)
    proc.start()
    consumer = Consumer(dsn, queue, buffered)
    t0 = time.perf_counter()
    consumer.start()
    while proc.run_batch(upto_lsn=target) or proc.state == "PAUSED FOR FLOW CONTROL":
        if consumer.error is not None:
            break
    consumer.done.set()
    consumer.join()
    elapsed = time.perf_counter() - t0
    if consumer.error is not None:
        raise consumer.error
    proc.run_batch(upto_lsn=target)         # (buffered: the slot confirmed past the last)
    proc.stop()
    proc.conn.close()
    consumer.conn.close()
    return consumer.taken, elapsed


def latency(dsn: str, src: str, rate: int, seconds: int, batch: int, name: str = "BENCH_CAP",
            queue: str | None = None) -> list[float]:
    """(``queue``: a consumer takes the LCRs meanwhile — buffered staging needs one.)"""
    script = tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False)
    script.write(f"INSERT INTO {src}.t000 (id, n, v) VALUES (nextval('{src}.lat'), 0, 'latency');\n")
    script.close()
    proc = Timed(sluice.connect(dsn), name, max_changes=batch)
    proc.lags = []
    proc.start()
    consumer = None
    if queue is not None:
        consumer = Consumer(dsn, queue, proc.staging is not None)
        consumer.start()
    while proc.run_batch():
        pass
    proc.lags.clear()
    bench = subprocess.Popen(["pgbench", "-n", "-R", str(rate), "-T", str(seconds), "-c", "4", "-j", "2",
                              "-f", script.name, f"{SERVER}/{DB}"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    while bench.poll() is None:
        if not proc.run_batch():
            proc.wait_for_redo(0.005)
    end = time.monotonic() + 10
    while time.monotonic() < end and proc.run_batch():
        pass
    if consumer is not None:
        consumer.done.set()
        consumer.join()
        consumer.conn.close()
    proc.stop()
    proc.conn.close()
    os.unlink(script.name)
    if bench.returncode:
        raise SystemExit(f"pgbench failed: {bench.stderr.read().decode()}")
    return proc.lags


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--max-changes", type=int, default=5000)
    ap.add_argument("--commit-each", action="store_true", help="one queue commit per source transaction")
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--skip-staging", action="store_true", help="no (d)/(e) staging comparison")
    args = ap.parse_args()
    ensure_db()
    tag = uuid.uuid4().hex[:8]
    src, store = f"bsrc_{tag}", f"bstore_{tag}"
    dsn = f"{SERVER}/{DB}?schema={store}"
    raw_slot, stage_slot = f"sluice_bench_raw_{tag}", f"sluice_bench_stage_{tag}"
    stagings: list = []
    a = admin()
    conn = sluice.connect(dsn)
    source = Source(f"{SERVER}/{DB}", DB, store).connect()
    print(f"# bench_capture {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()} {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.2f}; rows {args.rows}, max changes {args.max_changes}, "
          f"{'a commit per source transaction' if args.commit_each else 'several whole transactions per commit'}")
    try:
        a.execute(f"CREATE SCHEMA {src}")
        for i in range(TABLES):
            a.execute(f"CREATE TABLE {src}.t{i:03d} (id bigint PRIMARY KEY, n int, v text)")
        a.execute(f"CREATE SEQUENCE {src}.lat START 1000000000000")
        a.execute(GEN.format(src=src, tables=TABLES))
        conn.streams_adm.set_up_queue(queue_table="BQT", queue_name="BQ")
        conn.aqadm.add_subscriber(queue_name="BQ", subscriber=sluice.Agent("APPLY1"))
        rs = conn.rule_adm
        rs.create_rule_set(rule_set_name="BRS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
        for i in range(TABLES):   # ADD_TABLE_RULES's condition (seed 000, "Table Rules")
            rs.create_rule(rule_name=f"T{i:03d}_DML", condition=(
                f"(((:dml.get_object_owner() = '{src.upper()}' and :dml.get_object_name() = 'T{i:03d}')) "
                f"and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = '{DB.upper()}' )"))
            rs.add_rule(rule_name=f"T{i:03d}_DML", rule_set_name="BRS")
        conn.capture_adm.create_capture(queue_name="BQ", capture_name="BENCH_CAP", rule_set_name="BRS")
        conn.capture_adm.start_capture(capture_name="BENCH_CAP")
        stagings = [] if args.skip_staging else [("BENCH_CAP_P", "BQP", False), ("BENCH_CAP_B", "BQB", True)]
        for name, queue, buffered in stagings:   # (d), (e): slots made before the workload
            conn.streams_adm.set_up_queue(queue_table=f"{queue}T", queue_name=queue)
            conn.aqadm.add_subscriber(queue_name=queue, subscriber=sluice.Agent("APPLY1"),
                                      delivery_mode=conn.aqadm.PERSISTENT_OR_BUFFERED)
            conn.capture_adm.create_capture(queue_name=queue, capture_name=name, rule_set_name="BRS")
            if buffered:
                conn.capture_adm.set_parameter(capture_name=name, parameter="STAGING", value="BUFFERED")
            conn.capture_adm.start_capture(capture_name=name)
        source.create_slot(raw_slot)
        source.create_slot(stage_slot)
        a.execute(f"CREATE TABLE {store}.staging (xid bigint, lsn bigint, commit_lsn bigint, sch text, "
                  f"tbl text, action text, data jsonb)")
        t0 = time.perf_counter()
        a.execute(f"CALL {src}.gen(%s, 0.42)", (args.rows,))
        target = lsn_to_int(a.execute("SELECT pg_current_wal_lsn()::text").fetchone()[0])
        print(f"workload written in {time.perf_counter() - t0:.1f} s")
        n_raw, t_raw = raw_drain(source, raw_slot, target, args.max_changes)
        print(f"(a) raw slot drain      {n_raw:>9,} changes {t_raw:7.2f} s {n_raw / t_raw:>10,.0f} changes/s")
        n_st, t_st = staging_floor(source, stage_slot, target, args.max_changes, f"{store}.staging",
                                   args.commit_each)
        print(f"(b) staging floor       {n_st:>9,} changes {t_st:7.2f} s {n_st / t_st:>10,.0f} changes/s")
        n_cap, t_cap = capture(dsn, target, args.max_changes, args.commit_each, args.profile)
        print(f"(c) Sluice capture      {n_cap:>9,} LCRs    {t_cap:7.2f} s {n_cap / t_cap:>10,.0f} LCRs/s")
        print(f"capture / staging floor = {(n_cap / t_cap) / (n_st / t_st):.2f} (target >= 0.6); "
              f"capture / raw drain = {(n_cap / t_cap) / (n_raw / t_raw):.2f}; load {os.getloadavg()[0]:.2f}")
        for (name, queue, buffered), label in zip(stagings, ("(d) PERSISTENT staging", "(e) BUFFERED staging  ")):
            n, t = staged(dsn, name, queue, target, args.max_changes, buffered)
            print(f"{label}  {n:>9,} LCRs consumed {t:7.2f} s {n / t:>10,.0f} LCRs/s "
                  f"(capture + consumer in one process); load {os.getloadavg()[0]:.2f}")
        if not args.skip_latency:
            runs = [("persistent", "BENCH_CAP", None)] + [
                ("buffered, consumer taking", name, queue) for name, queue, b in stagings if b]
            for label, name, queue in runs:
                lags = sorted(latency(dsn, src, args.rate, args.seconds, args.max_changes, name, queue))
                q = statistics.quantiles(lags, n=100)
                print(f"latency ({label}) at {args.rate} transactions/s over {args.seconds} s "
                      f"({len(lags)} transactions): p50 {q[49] * 1000:.0f} ms, p99 {q[98] * 1000:.0f} ms, "
                      f"max {lags[-1] * 1000:.0f} ms (targets 100 / 500 ms); load {os.getloadavg()[0]:.2f}")
    finally:
        for slot in (raw_slot, stage_slot):
            source.drop_slot(slot)
        for name in ["BENCH_CAP"] + [s[0] for s in stagings]:
            try:
                conn.capture_adm.stop_capture(capture_name=name)
                conn.capture_adm.drop_capture(capture_name=name)
            except sluice.Error as e:
                print(f"drop_capture {name}: {e}")
        conn.close()
        source.close()
        a.execute(f"DROP SCHEMA IF EXISTS {src} CASCADE")
        a.execute(f"DROP SCHEMA IF EXISTS {store} CASCADE")
        a.close()


if __name__ == "__main__":
    main()
