"""Streams on Spark (issue 16 §2), in one run, on the same staged LCRs:

    PYTHONPATH=src .venv/bin/python bench/bench_pipeline.py [--lcrs 200000] [--dsn sqlite:///…]
                                                             [--master local[2]] [--batch 50000]

The workload: ``--lcrs`` row LCRs (70 % INSERT, 30 % UPDATE) in transactions of 1-100
rows over 10 tables, staged in a commit-time ANYDATA queue (SET_UP_QUEUE) for two
consumers; 100 table rules + 10 subset rules (row migration) in the positive rule set, 3
declarative transformations (RENAME_SCHEMA, RENAME_COLUMN, ADD_COLUMN).  Then, one after
the other, over the same messages:

(a) floor: the queue's records read in commit order with plain SQL (nothing decoded);
(b) Python path: records read, LCRs decoded, evaluate_rule_sets (Table 6-1),
    rowmigration.migrate, streams.transform -- what the Python Streams clients do per LCR;
(c) Spark: ``sluice`` source -> rule sets compiled to Columns -> row migration and
    declarative transformations as Columns -> Parquet warehouse, micro-batches of
    ``--batch`` messages, acknowledged after each commit (Trigger.AvailableNow).

LCRs/s of each, (c)/(b), and the driver's peak RSS (this process; Spark's local JVM is a
child: its peak is read from /proc when it is still there).

``--apply``: the apply comparison instead, on INSERT-only LCRs over 100 tables (updates of
random keys would only fill the error queue): (d) floor, ``executemany`` of the same rows
into a target of the same kind; (e) the Python apply process (``ApplyProcess.drain``);
(f) Spark, the same apply process's definition run by ``PipelineRun`` with the apply sink.
Each applies into a target of its own (SQLite files beside the store; a PostgreSQL target,
as issue 16 §2 asks, is in ``--p5``).

``--p5``: issue 16's P5 (:func:`p5_bench`, PostgreSQL store and targets; ``--group N`` sets both
applies' GROUPTRANSOPS, ``--tasks N`` the apply sink's tasks).  ``--lag --rate R --seconds S``:
end-to-end lag with the apply sink running (:func:`lag_bench`).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import resource
import shutil
import sys
import tempfile
import threading
import time
from typing import Any

import sluice
from sluice import RowLCR
from sluice.aq.payload import PayloadCodec
from sluice.pipeline import queueio
from sluice.pipeline.queueio import QueueRef
from sluice.pipeline.runner import PipelineRun, spark_session
from sluice.pipeline.stages import PipelineSpec
from sluice.rules.engine.ruleset import STREAMS_CONTEXT
from sluice.rules.engine.types import NVList
from sluice.streams import evaluate_rule_sets
from sluice.streams.rowmigration import ROW_SUBSET, migrate
from sluice.streams.transform import transform
from sluice.streams.transform.adm import declarative_transformations

TABLES = [f"T{i}" for i in range(10)]


def stage(conn, n: int) -> int:
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    for consumer in ("PY", "SPARK"):
        conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(consumer))
    p5_rules(conn)
    rnd = random.Random(16)
    q = conn.queue("STRM_Q")
    done, t = 0, 0
    while done < n:
        size = min(rnd.randint(1, 100), n - done)
        txn = []
        for i in range(size):
            k = done + i
            owner, table = f"U{rnd.randrange(10)}", rnd.choice(TABLES)
            if rnd.random() < 0.7:
                txn.append(RowLCR("DBS1.NET", "INSERT", owner, table, None, f"{t}.0.1", k, None,
                                  {"ID": k, "NAME": f"n{k}", "AMOUNT": k % 1000}))
            else:
                txn.append(RowLCR("DBS1.NET", "UPDATE", owner, table, None, f"{t}.0.1", k,
                                  {"ID": rnd.randrange(10 ** 6), "NAME": "old"}, {"NAME": f"n{k}"}))
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
        done += size
        t += 1
    return t


def floor(dsn: str) -> tuple[int, float]:
    ref = QueueRef.resolve(dsn, "STRM_Q", "PY")
    start = time.perf_counter()
    with queueio.open_raw(dsn) as raw:
        n = sum(1 for _ in queueio.records(raw, ref, 0, queueio.latest_position(raw, ref, 0)))
    return n, time.perf_counter() - start


def python_path(conn, dsn: str) -> tuple[int, int, float]:
    ref = QueueRef.resolve(dsn, "STRM_Q", "PY")
    by_rule = declarative_transformations(conn.context.store)
    codec = PayloadCodec("SYS.ANYDATA", None, lambda name: None)   # how a dequeue decodes it
    kept = 0
    start = time.perf_counter()
    with queueio.open_raw(dsn) as raw:
        n = 0
        for record in queueio.records(raw, ref, 0, queueio.latest_position(raw, ref, 0)):
            lcr = codec.decode(record[-1])
            verdict = evaluate_rule_sets(conn, lcr, "POS")
            n += 1
            if verdict.perform:
                lcr = migrate(lcr, verdict.rule)
                transform(lcr, by_rule.get(verdict.rule.rule_name, ()))
                lcr.get_values("NEW")   # what apply reads: the values, decoded
                kept += 1
    return n, kept, time.perf_counter() - start


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def spark_path(conn, dsn: str, master: str, batch: int, work: str) -> tuple[int, float, float | None]:
    spark = spark_session(master, dsn, ui=False)
    jvm_pid = None
    try:
        jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
    except Exception:  # noqa: BLE001  (the figure is optional)
        pass
    spec = PipelineSpec("bench", dsn, "STRM_Q", "SPARK", "POS", max_messages_per_batch=batch)
    run = PipelineRun(spark, spec, conn, conn.context.store, "warehouse", os.path.join(work, "ck"),
                      path=os.path.join(work, "wh"), trigger={"availableNow": True})
    start = time.perf_counter()
    run.start()
    run.wait()
    seconds = time.perf_counter() - start
    for p in run.query.recentProgress:
        print(f"    batch {p.batchId}: {p.numInputRows} rows, {dict(p.durationMs)}")
    n = spark.read.parquet(os.path.join(work, "wh")).count()
    jvm = _rss_mb(jvm_pid) if jvm_pid else None
    spark.stop()
    return n, seconds, jvm


def stage_inserts(conn, n: int) -> None:
    rnd = random.Random(16)
    q = conn.queue("STRM_Q")
    done, t = 0, 0
    while done < n:
        size = min(rnd.randint(1, 100), n - done)
        q.enqmany([conn.msgproperties(payload=RowLCR(
            "DBS1.NET", "INSERT", f"U{(done + i) % 10}", f"T{(done + i) // 10 % 10}", None, f"{t}.0.1", done + i,
            None, {"ID": done + i, "NAME": f"n{done + i}", "AMOUNT": (done + i) % 1000}, commit_scn=t + 1))
            for i in range(size)])
        conn.commit()
        done += size
        t += 1


def make_target(work: str, name: str) -> tuple[str, Any]:
    """An SQLite target database with the 100 tables: (its DSN, a connection to it)."""
    import sqlite3
    path = os.path.join(work, f"target_{name}.db")
    c = sqlite3.connect(path, isolation_level=None)
    for o in range(10):
        for t in range(10):
            c.execute(f'CREATE TABLE "U{o}.T{t}" (id integer PRIMARY KEY, name varchar(40), amount integer)')
    return f"sqlite:///{path}", c


def apply_bench(a: Any, work: str) -> None:
    from sluice.streams.apply import ApplyProcess

    dsn = a.dsn or f"sqlite:///{os.path.join(work, 'site.db')}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    targets = {}
    for name in ("APY", "APS"):
        target, targets[name] = make_target(work, name)
        conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=name, apply_database_link=target,
                                    apply_captured=True)   # the LCRs carry commit SCNs, as captured ones do
        for o in range(10):
            conn.apply_adm.set_schema_instantiation_scn(f"U{o}", "DBS1.NET", 0, apply_database_link=target)
        conn.apply_adm.set_parameter(name, "disable_on_error", "N")
        try:
            conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(name))
        except sluice.DatabaseError:
            pass   # CREATE_APPLY made it a subscriber
    t0 = time.perf_counter()
    stage_inserts(conn, a.lcrs)
    print(f"staged {a.lcrs} INSERT LCRs over 100 tables in {time.perf_counter() - t0:.1f} s "
          f"({platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    # (d) floor: the same rows by executemany into a third target, one transaction
    _dsn, floor_db = make_target(work, "FLOOR")
    ref = QueueRef.resolve(dsn, "STRM_Q", "APY")
    codec = PayloadCodec("SYS.ANYDATA", None, lambda name: None)
    with queueio.open_raw(dsn) as raw:
        lcrs = [codec.decode(r[-1]) for r in queueio.records(raw, ref, 0, queueio.latest_position(raw, ref, 0))]
    start = time.perf_counter()
    by_table: dict = {}
    for lcr in lcrs:
        v = {u.column_name: u.data.value for u in lcr.get_values("NEW")}
        by_table.setdefault(f'"{lcr.get_object_owner()}.{lcr.get_object_name()}"', []).append(
            (v["ID"], v["NAME"], v["AMOUNT"]))
    floor_db.execute("BEGIN")
    for table, values in by_table.items():
        floor_db.executemany(f"INSERT INTO {table} VALUES (?, ?, ?)", values)
    floor_db.execute("COMMIT")
    s = time.perf_counter() - start
    print(f"(d) floor, executemany:      {len(lcrs):>9} in {s:6.2f} s = {len(lcrs) / s:>10,.0f} rows/s")
    proc = ApplyProcess.from_catalog(sluice.connect(dsn), "APY", batch=5000)
    start = time.perf_counter()
    n = proc.drain(3600)
    s = time.perf_counter() - start
    proc.stop()
    py = n / s
    print(f"(e) Python apply process:    {n:>9} in {s:6.2f} s = {py:>10,.0f} rows/s")
    spark = spark_session(a.master, dsn, ui=False)
    spec = PipelineSpec("aps", dsn, "STRM_Q", "APS", max_messages_per_batch=a.batch)
    run = PipelineRun(spark, spec, conn, conn.context.store, "apply", os.path.join(work, "ck"),
                      connect=sluice.connect, apply_name="APS", trigger={"availableNow": True})
    start = time.perf_counter()
    run.start()
    run.wait()
    s = time.perf_counter() - start
    spark.stop()
    print(f"(f) Spark {a.master} apply:  {a.lcrs:>9} in {s:6.2f} s = {a.lcrs / s:>10,.0f} rows/s  "
          f"(f)/(e) = {a.lcrs / s / py:.2f}; load after {os.getloadavg()[0]:.1f}")
    for name, c in targets.items():
        rows = sum(c.execute(f'SELECT COUNT(*) FROM "U{o}.T{t}"').fetchone()[0] for o in range(10) for t in range(10))
        print(f"    rows in {name}'s target: {rows}")
    conn.close()


PG_SERVER = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432")


def p5_rules(conn) -> None:
    """P5's rule set POS: 100 table rules (10 owners x 10 tables, as ADD_TABLE_RULES writes
    them), 10 subset rules (U9's
    UPDATEs whose new ID crosses 500000), 3 declarative transformations."""
    adm = conn.rule_adm
    adm.create_rule_set("POS", STREAMS_CONTEXT)
    for i in range(100):
        adm.create_rule(f"R{i}", f"((:dml.get_object_owner() = 'U{i // 10}' and :dml.get_object_name() = "
                                 f"'T{i % 10}')) and :dml.is_null_tag() = 'Y' and "
                                 f":dml.get_source_database_name() = 'DBS1.NET'", STREAMS_CONTEXT)
        adm.add_rule(f"R{i}", "POS")
    for i in range(10):
        for op, test in (("INSERT", "<"), ("DELETE", ">=")):
            name = f"S{i}_{op[0]}"
            adm.create_rule(name, f":dml.get_object_owner() = 'U9' and :dml.get_object_name() = 'T{i}' and "
                                  f":dml.get_command_type() = 'UPDATE' and "
                                  f":dml.get_value('NEW', 'ID').AccessNumber() {test} 500000", STREAMS_CONTEXT,
                            NVList({ROW_SUBSET: op}))
            adm.add_rule(name, "POS")
    conn.streams_adm.rename_schema("r0", "u0", "hr")                   # U0.T0 -> HR.T0
    conn.streams_adm.rename_column("r1", "u0.t1", "name", "title")     # U0.T1: NAME -> TITLE
    conn.streams_adm.add_column("r2", "u0.t2", "origin", "DBS1")       # U0.T2: + ORIGIN


def p5_tables(dsn: str) -> None:
    """The target tables, as the transformations shape the rows."""
    import psycopg
    with psycopg.connect(dsn, autocommit=True) as c:
        for owner in [f"u{o}" for o in range(10)] + ["hr"]:
            c.execute(f"CREATE SCHEMA {owner}")
            for t in range(10):
                cols = {("u0", 1): "title text", ("u0", 2): "name text, origin text"}.get((owner, t), "name text")
                c.execute(f"CREATE TABLE {owner}.t{t} (id bigint PRIMARY KEY, {cols}, amount integer)")


def p5_target_of(owner: str, table: str) -> tuple[str, str]:
    return ("hr", "t0") if (owner, table) == ("U0", "T0") else (owner.lower(), table.lower())


def p5_stage(conn, n: int, captured: bool = False) -> tuple[int, dict]:
    """``n`` row LCRs as captured (commit SCNs), transactions of 1-100 rows: 70 % INSERT,
    30 % UPDATE of a row an earlier transaction inserted (its NAME: old and new values);
    the rows as they must end up, per target table.

    ``captured``: the same changes in the form a PostgreSQL capture process stores them
    (``DecodedRowLCR.raw_text_document``: the LCR's attributes and wal2json's row text,
    made by the capture's own decoder from wal2json format-2 rows of tables ``uN.tM`` (id
    bigint key, name text, amount integer); an UPDATE carries every column as new values
    and the key as old ones, as wal2json logs it with the default replica identity)."""
    rnd = random.Random(16)
    q = conn.queue("STRM_Q")
    live: dict[tuple, list] = {}     # (owner, table) -> [ids]
    final: dict[tuple, dict] = {}    # (owner, table) -> {id: [name, amount]}
    done, t = 0, 0
    capture = _P5Capture() if captured else None
    while done < n:
        size = min(rnd.randint(1, 100), n - done)
        txn = []
        for i in range(size):
            k = done + i
            ot = (f"U{rnd.randrange(10)}", rnd.choice(TABLES))
            rows = final.setdefault(ot, {})
            if rnd.random() < 0.7 or not live.get(ot) or t == 0:
                txn.append(RowLCR("DBS1.NET", "INSERT", *ot, None, f"{t}.0.1", k, None,
                                  {"ID": k, "NAME": f"n{k}", "AMOUNT": k % 1000}, commit_scn=t + 1)
                           if capture is None else capture.change("I", ot, k, f"n{k}", k % 1000))
                rows[k] = [f"n{k}", k % 1000]
                live.setdefault(ot, []).append(k)
            else:
                key = rnd.choice(live[ot])
                txn.append(RowLCR("DBS1.NET", "UPDATE", *ot, None, f"{t}.0.1", k,
                                  {"ID": key, "NAME": rows[key][0]}, {"NAME": f"u{k}"}, commit_scn=t + 1)
                           if capture is None else capture.change("U", ot, key, f"u{k}", rows[key][1]))
                rows[key][0] = f"u{k}"
        for ot in {(lcr.get_object_owner(), lcr.get_object_name()) for lcr in txn} if capture is None else \
                {(c[1], c[2]) for c in capture.pending}:
            live.setdefault(ot, [])      # rows of this transaction: updatable from the next one on
        if capture is not None:
            txn = capture.commit(t)
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
        done += size
        t += 1
    return t, final


class _P5Capture:
    """P5's changes as a PostgreSQL capture stores them: wal2json format-2 rows (what
    ``pgsource.WAL2JSON_OPTIONS`` asks for) through the capture's decoder."""

    def __init__(self) -> None:
        from sluice.streams.capture.decode import Decoder
        self.decoder = Decoder("DBS1.NET", "sluice_store")
        self.pending: list[tuple] = []
        self.lsn = 0x1000000

    def change(self, action: str, ot: tuple, key: int, name: str, amount: int) -> None:
        self.pending.append((action, *ot, key, name, amount))

    def commit(self, t: int) -> list:
        from sluice.streams.capture.decode import transactions
        xid = 1000 + t
        rows = [f'{{"action":"B","xid":{xid}}}']
        for action, owner, table, key, name, amount in self.pending:
            self.lsn += 1
            rows.append(f'{{"action":"{action}","xid":{xid},"timestamp":"2026-11-29 01:00:00.123456+00",'
                        f'"lsn":"0/{self.lsn:X}","schema":"{owner.lower()}","table":"{table.lower()}",'
                        f'"columns":[{{"name":"id","type":"bigint","value":{key}}},'
                        f'{{"name":"name","type":"text","value":"{name}"}},'
                        f'{{"name":"amount","type":"integer","value":{amount}}}]'
                        + (f',"identity":[{{"name":"id","type":"bigint","value":{key}}}]}}' if action == "U" else "}"))
        self.lsn += 1
        rows.append(f'{{"action":"C","xid":{xid},"timestamp":"2026-11-29 01:00:{t % 60:02d}.5+00",'
                    f'"lsn":"0/{self.lsn:X}","nextlsn":"0/{self.lsn + 1:X}"}}')
        self.pending = []
        return [lcr for txn in transactions(rows, self.decoder.kinds) for lcr in self.decoder.lcrs(txn)]


class PeakRss:
    """Peak RSS (VmHWM) of the Spark JVM and of its Python workers, sampled while running."""

    def __init__(self, jvm: int | None) -> None:
        import threading
        self.jvm, self.workers, self.stop = jvm, {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.5):
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmd = f.read()
                except OSError:
                    continue
                if b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd:
                    mb = _rss_mb(int(pid))
                    if mb:
                        self.workers[pid] = max(self.workers.get(pid, 0), mb)

    def report(self) -> str:
        self.stop.set()
        jvm = _rss_mb(self.jvm) if self.jvm else None
        w = self.workers.values()
        return (f"Spark JVM (driver + local executor) {f'{jvm:.0f} MB' if jvm else 'not read'}, "
                f"Python workers max {max(w, default=0):.0f} MB each ({len(w)} seen)")


def tree_cpu() -> float:
    """CPU seconds of this process and its descendants (the Spark JVM, its Python workers;
    reaped children included): the figure that holds on a shared machine."""
    tick = os.sysconf("SC_CLK_TCK")
    procs: dict[int, tuple[int, float]] = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            procs[int(p)] = (int(f[1]), sum(int(x) for x in f[11:15]) / tick)
    total, todo, seen = 0.0, [os.getpid()], set()
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            total += procs.get(pid, (0, 0.0))[1]
            todo += [c for c, (parent, _) in procs.items() if parent == pid]
    return total


def event_log_conf(a: Any) -> dict[str, str]:
    """``--event-log DIR``: Spark's event log there (see :func:`event_log_breakdown`)."""
    if not a.event_log:
        return {}
    os.makedirs(a.event_log, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": a.event_log, "spark.eventLog.compress": "false"}


def event_log_breakdown(path: str) -> None:
    """Where each micro-batch's time went, from a Spark event log: per Spark job (in the
    batch's foreachBatch) its wall time, stages and the stages' summed task run/CPU time."""
    import json

    jobs: dict[int, dict] = {}
    stages: dict[int, dict] = {}
    files = [os.path.join(path, f) for f in sorted(os.listdir(path))] if os.path.isdir(path) else [path]
    files = [f for f in files if not os.path.basename(f).startswith((".", "appstatus"))]
    for line in (line for f in files for line in open(f)):
        e = json.loads(line)
        kind = e["Event"]
        if kind == "SparkListenerJobStart":
            props = e.get("Properties") or {}
            jobs[e["Job ID"]] = {"start": e["Submission Time"], "stages": e["Stage IDs"],
                                 "batch": props.get("streaming.sql.batchId"),
                                 "what": (props.get("callSite.short") or "")[:50]}
        elif kind == "SparkListenerJobEnd":
            jobs[e["Job ID"]]["end"] = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            st = stages.setdefault(info["Stage ID"], {"run": 0, "cpu": 0})
            st.update(name=info["Stage Name"][:40], tasks=info["Number of Tasks"],
                      wall=info.get("Completion Time", 0) - info.get("Submission Time", 0))
        elif kind == "SparkListenerTaskEnd":
            m = e.get("Task Metrics") or {}
            st = stages.setdefault(e["Stage ID"], {"name": "", "tasks": 0, "wall": 0, "run": 0, "cpu": 0})
            st["run"] += m.get("Executor Run Time", 0)
            st["cpu"] += m.get("Executor CPU Time", 0) // 1_000_000
    for j, job in sorted(jobs.items()):
        parts = "; ".join(f"{stages[s]['name']} x{stages[s]['tasks']} wall {stages[s]['wall']} ms run "
                          f"{stages[s]['run']} cpu {stages[s]['cpu']}" for s in job["stages"] if s in stages)
        print(f"    job {j} (batch {job['batch']}) {job.get('end', 0) - job['start']} ms "
              f"[{job['what']}]: {parts}")


def make_databases(prefix: str, keys: tuple[str, ...]) -> tuple[dict, dict]:
    """Scratch PostgreSQL databases of this run (names, DSNs by key); drop_databases drops them."""
    import uuid

    import psycopg
    run_id = uuid.uuid4().hex[:8]
    dbs = {k: f"{prefix}_{k}_{run_id}" for k in keys}
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as c:
        for db in dbs.values():
            c.execute(f"CREATE DATABASE {db}")
    return dbs, {k: f"{PG_SERVER}/{db}" for k, db in dbs.items()}


def drop_databases(dbs: dict) -> None:
    import psycopg
    with psycopg.connect(f"{PG_SERVER}/postgres", autocommit=True) as c:
        for db in dbs.values():
            c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def p5_site(dsn: dict, applies: tuple[str, ...], group: int) -> Any:
    """The store's queue and P5's rule set, and per apply process (its target ``dsn[name]``,
    lower case) the target's tables and its definition (GROUPTRANSOPS ``group``)."""
    conn = sluice.connect(dsn["store"])
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    p5_rules(conn)
    for name in applies:
        target = dsn[name.lower()]
        p5_tables(target)
        conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=name, rule_set_name="POS",
                                    apply_database_link=target, apply_captured=True)
        for o in [f"U{o}" for o in range(10)] + ["HR"]:
            conn.apply_adm.set_schema_instantiation_scn(o, "DBS1.NET", 0, apply_database_link=target)
        conn.apply_adm.set_parameter(name, "disable_on_error", "N")
        conn.apply_adm.set_parameter(name, "grouptransops", str(group))
        try:
            conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(name))
        except sluice.DatabaseError:
            pass   # CREATE_APPLY made it a subscriber
    return conn


def p5_bench(a: Any, work: str) -> None:
    import psycopg
    from sluice.streams.apply import ApplyProcess

    import logging
    logging.basicConfig(format="    %(message)s")
    logging.getLogger("sluice.pipeline").setLevel(logging.INFO)   # the apply sink's phases per batch
    dbs, dsn = make_databases("p5", ("store", "apy", "aps", "floor"))
    try:
        print(f"P5 {platform.node()}, {os.cpu_count()} cores; start {time.strftime('%H:%M:%S')}, "
              f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
        conn = p5_site(dsn, ("APY", "APS"), a.group)
        t0 = time.perf_counter()
        txns, final = p5_stage(conn, a.lcrs, not a.plain)
        print(f"staged {a.lcrs} row LCRs ({'plain documents' if a.plain else 'as a PostgreSQL capture stores them'}) "
              f"in {txns} transactions (PostgreSQL store) in "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
        # floor: COPY of the same rows (as they end up) straight into the target's tables
        p5_tables(dsn["floor"])
        n_rows = sum(len(r) for r in final.values())
        start = time.perf_counter()
        with psycopg.connect(dsn["floor"]) as c:
            for (owner, table), rows in final.items():
                schema, name = p5_target_of(owner, table)
                cols = {("u0", "t1"): "id, title, amount",
                        ("u0", "t2"): "id, name, amount, origin"}.get((schema, name), "id, name, amount")
                extra = ("DBS1",) if (schema, name) == ("u0", "t2") else ()
                with c.cursor().copy(f"COPY {schema}.{name} ({cols}) FROM STDIN") as cp:
                    for k, (nm, amount) in rows.items():
                        cp.write_row((k, nm, amount) + extra)
        s = time.perf_counter() - start
        print(f"(g) floor, COPY:             {n_rows:>9} rows in {s:6.2f} s = {n_rows / s:>10,.0f} rows/s", flush=True)
        apy_conn = sluice.connect(dsn["store"])
        proc = ApplyProcess.from_catalog(apy_conn, "APY", batch=5000)
        start = time.perf_counter()
        n = proc.drain(7200)
        s = time.perf_counter() - start
        proc.stop()
        apy_conn.close()   # its pool would try to reconnect once the databases are dropped
        py = n / s
        print(f"(e) Python apply process:    {n:>9} LCRs in {s:6.2f} s = {py:>10,.0f} rows/s "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
        spark = spark_session(a.master, dsn["store"], ui=False, conf=event_log_conf(a))
        try:
            jvm_pid = int(spark.sparkContext._jvm.ProcessHandle.current().pid())
        except Exception:  # noqa: BLE001  (the figure is optional)
            jvm_pid = None
        rss = PeakRss(jvm_pid)
        spec = PipelineSpec("aps", dsn["store"], "STRM_Q", "APS", "POS", max_messages_per_batch=a.batch,
                            apply_tasks=a.tasks, decode_in_jvm=a.jvm_decode)
        print(f"    apply sink: tasks={a.tasks or 'default parallelism'}, GROUPTRANSOPS={a.group} (both applies: "
              f"{'one target transaction per source transaction' if a.group <= 1 else 'whole source transactions grouped into target transactions of at most that many LCRs'})",
              flush=True)
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", os.path.join(work, "ck"),
                          connect=sluice.connect, apply_name="APS", trigger={"availableNow": True})
        start, cpu = time.perf_counter(), tree_cpu()
        run.start()
        run.wait()
        s, cpu = time.perf_counter() - start, tree_cpu() - cpu
        for p in run.query.recentProgress:
            print(f"    batch {p.batchId}: began {p.timestamp}, {p.numInputRows} rows, {dict(p.durationMs)}")
        memory = rss.report()
        spark.stop()
        print(f"(f) Spark {a.master} apply:  {a.lcrs:>9} LCRs in {s:6.2f} s = {a.lcrs / s:>10,.0f} rows/s  "
              f"(f)/(e) = {a.lcrs / s / py:.2f}; CPU of the driver + JVM + workers {cpu:.1f} s = "
              f"{cpu / a.lcrs * 1e6:.0f} us/row", flush=True)
        driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS: driver (Python) {driver:.0f} MB; {memory}")

        def contents(d: str) -> list:
            with psycopg.connect(d) as c:
                return [c.execute(f"SELECT count(*), coalesce(sum(hashtext(t::text)), 0) FROM {o}.t{i} t").fetchone()
                        for o in [f"u{o}" for o in range(10)] + ["hr"] for i in range(10)]
        aps, apy, floor_rows = contents(dsn["aps"]), contents(dsn["apy"]), contents(dsn["floor"])
        same = f"Spark = Python apply: {aps == apy}, = COPY floor: {aps == floor_rows}"
        def bookkeeping(d: str) -> tuple:
            """(the applied low-watermark per source database, the delivery records left): the
            Spark sink forgets the records of all but its last batches (sinks.forget_delivered)"""
            with psycopg.connect(d) as c:
                where = c.execute("SELECT table_schema FROM information_schema.tables "
                                  "WHERE table_name = 'sluice_apply_done'").fetchone()[0]
                marks = c.execute(f"SELECT source_database, max(applied_scn) FROM {where}.sluice_apply_progress "
                                  "GROUP BY 1 ORDER BY 1").fetchall()
                return marks, c.execute(f"SELECT count(*) FROM {where}.sluice_apply_done").fetchone()[0]
        (marks, left), (py_marks, _) = bookkeeping(dsn["aps"]), bookkeeping(dsn["apy"])
        errors = conn.query("SELECT APPLY_NAME, ERROR_NUMBER, COUNT(*) FROM SLUICE_APPLY_ERROR "
                            "GROUP BY APPLY_NAME, ERROR_NUMBER", None)[1]
        print(f"targets equal: {same}; applied low-watermark Spark = Python apply: {marks == py_marks} {marks}; "
              f"Spark's delivery records left: {left} (of {txns} source transactions); error transactions: {errors}; "
              f"end {time.strftime('%H:%M:%S')}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        conn.close()
    finally:
        drop_databases(dbs)


def lag_commit(conn: Any, q: Any, rnd: random.Random, scn: list, k: list, committed: dict, size: int,
               tables: list[tuple[str, str]] | None = None) -> None:
    """The lag bench's producer: one source transaction of ``size`` INSERT row LCRs (of
    ``tables``, else random owners and tables), its commit time recorded in ``committed``."""
    scn[0] += 1
    txn = []
    for i in range(size):
        owner, table = tables[i] if tables else (f"U{rnd.randrange(10)}", rnd.choice(TABLES))
        txn.append(RowLCR("DBS1.NET", "INSERT", owner, table, None,
                          f"{scn[0]}.0.1", k[0], None, {"ID": k[0], "NAME": f"n{k[0]}", "AMOUNT": k[0] % 1000},
                          commit_scn=scn[0]))
        k[0] += 1
    q.enqmany([conn.msgproperties(payload=p) for p in txn])
    conn.commit()
    committed[f"DBS1.NET|{scn[0]}"] = time.time()


def lag_percentiles(lags: list[float]) -> str:
    """p50, p90, p99 and max of the sorted ``lags``, as the lag benches print them."""
    def pct(p: float) -> float:
        return lags[min(len(lags) - 1, int(p * len(lags)))] if lags else float("nan")
    return (f"p50 {pct(0.5):.2f} s, p90 {pct(0.9):.2f} s, p99 {pct(0.99):.2f} s, "
            f"max {lags[-1] if lags else float('nan'):.2f} s")


def lag_produce(store: str, rate: int, seconds: int, scn: list, k: list, out: Any = None) -> tuple[dict, int, float]:
    """Commit transactions of 1-100 rows at ``rate`` rows/s for ``seconds`` (in a process of
    its own unless --same-process: the source is another application, and a producer thread
    in the driver's Python would hold the GIL the foreachBatch's py4j calls wait for)."""
    conn = sluice.connect(store)
    q = conn.queue("STRM_Q")
    rnd = random.Random(16)
    committed: dict[str, float] = {}
    start = time.time()
    sent = 0
    while time.time() - start < seconds:
        size = rnd.randint(1, 100)
        lag_commit(conn, q, rnd, scn, k, committed, size)
        sent += size
        ahead = sent / rate - (time.time() - start)
        if ahead > 0:
            time.sleep(ahead)
    produced = time.time() - start
    conn.close()
    if out is not None:
        out.send((committed, sent, produced))
    return committed, sent, produced


def lag_bench(a: Any, work: str) -> None:
    """End-to-end lag (issue 16 §2): P5's rule set and transformations, the Spark apply sink
    running (micro-batches every second), a producer committing INSERT transactions of 1-100
    row LCRs at ``--rate`` rows/s for ``--seconds`` (:func:`lag_produce`, a process of its
    own unless ``--same-process``); lag = the target's SLUICE_APPLY_DONE time
    of a source transaction (written in its target transaction) - the time its source
    transaction committed.  Spark's start-up and first meeting of each table are excluded (the
    lag asked for is the sustained one): a transaction with one row for every owner and table
    the producer writes is applied before it starts -- a new table changes the plan's facts,
    its generated code and the staged path's second look, once in a pipeline's life."""
    import multiprocessing

    import psycopg

    import logging
    logging.basicConfig(format="    %(message)s")
    logging.getLogger("sluice.pipeline").setLevel(logging.INFO)   # the apply sink's phases per batch
    dbs, dsn = make_databases("lag", ("store", "aps"))
    try:
        print(f"lag {platform.node()}, {os.cpu_count()} cores; start {time.strftime('%H:%M:%S')}, "
              f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {a.rate} rows/s for {a.seconds} s; "
              f"producer {'in the driver process' if a.same_process else 'a process of its own'}", flush=True)
        conn = p5_site(dsn, ("APS",), a.group)
        scn, k = [0], [0]

        def applied() -> list:
            with psycopg.connect(dsn["aps"]) as c:
                where = c.execute("SELECT table_schema FROM information_schema.tables "
                                  "WHERE table_name = 'sluice_apply_done'").fetchone()
                return c.execute(f"SELECT id, done FROM {where[0]}.sluice_apply_done").fetchall() if where else []

        spark = spark_session(a.master, dsn["store"], ui=False, conf=event_log_conf(a))
        spec = PipelineSpec("aps", dsn["store"], "STRM_Q", "APS", "POS", apply_tasks=a.tasks)
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", os.path.join(work, "ck"),
                          connect=sluice.connect, apply_name="APS")
        print(f"    apply sink: tasks={a.tasks or 'default parallelism'}, GROUPTRANSOPS={a.group}", flush=True)
        every = [(f"U{o}", t) for o in range(10) for t in TABLES]
        lag_commit(conn, conn.queue("STRM_Q"), random.Random(0), scn, k, {}, len(every), every)   # the warm-up
        run.start()
        warm = time.time()
        while not applied():
            if not run.query.isActive:   # the query died (a worker that could not connect back, …)
                raise RuntimeError(f"the pipeline stopped before applying anything: {run.query.exception()}")
            time.sleep(0.2)
        print(f"    first transaction applied {time.time() - warm:.1f} s after the start", flush=True)
        seen: dict = {}
        polled = threading.Event()

        def poll() -> None:   # the sink forgets a delivery record a minute and two batches on: keep each
            while not polled.wait(5.0):
                seen.update(applied())
        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        start = time.time()
        if a.same_process:
            committed, sent, produced = lag_produce(dsn["store"], a.rate, a.seconds, scn, k)
        else:
            ctx = multiprocessing.get_context("spawn")   # not a fork of a process with a JVM gateway's threads
            mine, theirs = ctx.Pipe()
            child = ctx.Process(target=lag_produce, args=(dsn["store"], a.rate, a.seconds, scn, k, theirs))
            child.start()
            committed, sent, produced = mine.recv()
            child.join()
        print(f"    produced {sent} rows in {len(committed)} transactions in {produced:.1f} s "
              f"= {sent / produced:,.0f} rows/s", flush=True)
        deadline = time.time() + max(60.0, 4 * a.seconds)
        seen.update(applied())
        while len(seen) < len(committed) + 1 and time.time() < deadline:
            time.sleep(1)
            seen.update(applied())
        ended = time.time()
        polled.set()
        poller.join()
        done = list(seen.items())
        for p in run.query.recentProgress:   # Spark's phases per trigger (queryPlanning, addBatch, walCommit, …)
            print(f"    batch {p.batchId}: began {p.timestamp}, {p.numInputRows} rows, {dict(p.durationMs)}")
        run.stop()
        spark.stop()
        lags = sorted(t - committed[i] for i, t in done if i in committed)
        missing = len(committed) + 1 - len(done)

        print(f"lag over {len(lags)} transactions: {lag_percentiles(lags)}; not applied by the deadline: {missing}; "
              f"applied all within {ended - start:.1f} s of the producer's start; end {time.strftime('%H:%M:%S')}, "
              f"load {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
        conn.close()
    finally:
        drop_databases(dbs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lcrs", type=int, default=200_000)
    ap.add_argument("--dsn", default=None)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--apply", action="store_true", help="the apply comparison (see the docstring)")
    ap.add_argument("--p5", action="store_true", help="issue 16's P5, PostgreSQL to PostgreSQL (see p5_bench)")
    ap.add_argument("--jvm-decode", action="store_true",
                    help="--p5: plain row LCRs decoded in the JVM (PipelineSpec.decode_in_jvm)")
    ap.add_argument("--plain", action="store_true",
                    help="--p5: stage plain row-LCR documents instead of the captured form (the default)")
    ap.add_argument("--tasks", type=int, default=None, help="--p5: the apply sink's tasks (default: Spark's)")
    ap.add_argument("--group", type=int, default=1,
                    help="--p5/--lag: the applies' GROUPTRANSOPS (1: a target transaction per source one)")
    ap.add_argument("--lag", action="store_true", help="end-to-end lag at --rate rows/s (see lag_bench)")
    ap.add_argument("--rate", type=int, default=5000)
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--same-process", action="store_true",
                    help="--lag: the producer in the driver's process (a thread holding the GIL the sink waits for)")
    ap.add_argument("--event-log", default=None, help="--p5/--lag: Spark's event log into this directory, "
                    "each job's time printed at the end")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench-pipeline-")
    mode = lag_bench if a.lag else p5_bench if a.p5 else apply_bench if a.apply else None
    if mode is not None:
        try:
            mode(a, work)
            if a.event_log:
                for name in sorted(os.listdir(a.event_log)):
                    print(f"event log {name}:")
                    event_log_breakdown(os.path.join(a.event_log, name))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return
    dsn = a.dsn or f"sqlite:///{os.path.join(work, 'site.db')}"
    conn = sluice.connect(dsn)
    t0 = time.perf_counter()
    txns = stage(conn, a.lcrs)
    print(f"staged {a.lcrs} LCRs in {txns} transactions in {time.perf_counter() - t0:.1f} s "
          f"({dsn.split(':')[0]}; {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})")
    n, s = floor(dsn)
    print(f"(a) floor, records read:    {n:>9} in {s:6.2f} s = {n / s:>10,.0f} /s")
    n, kept, s = python_path(conn, dsn)
    py = n / s
    print(f"(b) Python path:            {n:>9} in {s:6.2f} s = {py:>10,.0f} LCRs/s ({kept} kept)")
    n, s, jvm = spark_path(conn, dsn, a.master, a.batch, work)
    sp = a.lcrs / s
    print(f"(c) Spark {a.master}:       {a.lcrs:>9} in {s:6.2f} s = {sp:>10,.0f} LCRs/s ({n} kept)  "
          f"(c)/(b) = {sp / py:.2f}")
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: driver (Python) {driver:.0f} MB, Spark JVM "
          f"{f'{jvm:.0f} MB' if jvm else 'not read'}; load after {os.getloadavg()[0]:.1f}")
    conn.close()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
