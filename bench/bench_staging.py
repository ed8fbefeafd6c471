"""The Spark apply sink's staged path, its target side alone (issue 16 §2, no Spark):

    PYTHONPATH=src .venv/bin/python bench/bench_staging.py [--rows 50000] [--group 10000] [--runs 3]

Two batches of ``--rows`` row LCRs as the staging job COPYs them (the staging table's
columns, CSV), P5's shape: transactions of 1-100 rows over 90 tables, 70 % INSERT, 30 %
UPDATE of a row inserted earlier (its NAME: old and new values; rows of the same batch
too, so some rows change twice in a group).  Per run, into a fresh target (P5's tables,
an apply APS of GROUPTRANSOPS ``--group`` in a PostgreSQL store): batch 0 then batch 1,
each COPYed into the staging table (one connection, as an executor does) and applied by
``stagedsink._apply`` -- the sink's own code after its Spark job --, the target's final
rows checked against the workload's.  Printed per batch: the sink's laps (``COPY`` in place
of the Spark job) and the CPU of the target's backends (the COPY's; the apply's per
:class:`StagedApplier` step), read from /proc (PostgreSQL on this machine).

A/B against another tree: run this file with that tree's ``src`` on PYTHONPATH (it uses
only ``stagedsink._apply`` and :class:`StagedApplier`'s steps).
"""

from __future__ import annotations

import argparse
import io
import os
import random
import time
from typing import Any

import psycopg

import sluice
from bench_pipeline import drop_databases, make_databases, p5_site
from sluice.pipeline import sinks, stagedsink, staging
from sluice.pipeline.setapply import SetApplier

OWNERS = [f"U{o}" for o in range(1, 10)]   # U0's tables differ in P5 (the transformations)
TABLES = [f"T{t}" for t in range(10)]
STEPS = ("transactions", "staged", "apply_group")


def workload(n: int, batches: int = 2) -> tuple[list[bytes], dict]:
    """``batches`` CSV texts of ``n`` staged row LCRs each, and the rows as they must end
    up ((owner, table) -> {id: name})."""
    rnd = random.Random(16)
    final: dict[tuple[str, str], dict[int, str]] = {}
    live: list[tuple[str, str, int]] = []
    out = []
    scn, seq, key = 100, 0, 0
    sep = staging.SIDE_SEP
    insert_shape = staging.FIELD_SEP.join(["AMOUNT", "ID", "NAME"]) + sep
    update_shape = "NAME" + sep + staging.FIELD_SEP.join(["ID", "NAME"])
    for _b in range(batches):
        buf = io.StringIO()
        done = 0
        while done < n:
            scn += 1
            size = min(rnd.randint(1, 100), n - done)
            tx = f"C|DBS1.NET|{scn}.0.1|{scn}"
            for _i in range(size):
                seq += 1
                if live and rnd.random() < 0.3:
                    owner, table, k = live[rnd.randrange(len(live))]
                    old, new = final[(owner, table)][k], f"u{seq}"
                    final[(owner, table)][k] = new
                    cmd, shape = "UPDATE", update_shape
                    values = f'"{{""ID"": ""{k}"", ""NAME"": ""{old}""}}","{{""NAME"": ""{new}""}}"'
                else:
                    owner, table = rnd.choice(OWNERS), rnd.choice(TABLES)
                    key += 1
                    k, name = key, f"n{key}"
                    final.setdefault((owner, table), {})[k] = name
                    live.append((owner, table, k))
                    cmd, shape = "INSERT", insert_shape
                    values = f',"{{""ID"": ""{k}"", ""NAME"": ""{name}"", ""AMOUNT"": ""{k % 1000}""}}"'
                buf.write(f"{tx},t,ROW,DBS1.NET,{scn},{scn}.0.1,,{scn},{seq},{k},{owner},{table},{cmd},"
                          f"{shape},{values}\n")
            done += size
        out.append(buf.getvalue().encode())
    return out, final


def cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Rows:   # what _apply asks of the batch's frame when nothing goes to the engine path
    sparkSession = None


def run_batch(dsn: dict, data: bytes, group: int) -> dict[str, Any]:
    """Stage ``data`` and apply it as the sink does after its Spark job; laps and CPU."""
    measured: dict[str, Any] = {}

    def stage(rows, facts, conninfo, table, lap=lambda _label: None):
        lap("plan")
        with psycopg.connect(conninfo) as c:
            with c.cursor().copy(f"COPY {table} ({', '.join(staging.COLUMNS)}) FROM STDIN (FORMAT csv)") as cp:
                cp.write(data)
            c.commit()
            measured["COPY cpu"] = cpu(c.info.backend_pid)
        lap("COPY")
        return 0

    def timed(name: str, step: Any) -> Any:
        def run(self, *a, **k):
            pid = self.target.conn.info.backend_pid
            before = cpu(pid)
            try:
                return step(self, *a, **k)
            finally:
                measured[f"{name} cpu"] = measured.get(f"{name} cpu", 0.0) + cpu(pid) - before
        return run

    def engine_path(*_a):
        raise AssertionError("the staged path hands a group back: the workload is the set form's")

    saved = stagedsink._stage, {s: getattr(staging.StagedApplier, s) for s in STEPS}
    stagedsink._stage = stage
    for s in STEPS:
        setattr(staging.StagedApplier, s, timed(s, saved[1][s]))
    try:
        with sinks._apply_engine(sluice.connect, dsn["store"], {}, "APS") as (_c, ctx, d, engine):
            has = sinks._has_actions(ctx)
            form = SetApplier(engine, has)
            facts = stagedsink.TableFacts()
            facts.refresh(engine)
            facts.prelearn(engine, form)
            counted: list = []
            start = time.monotonic()
            assert stagedsink._apply(_Rows(), engine, ctx, d, has, facts, group, engine_path, counted, form)
            measured["wall"] = time.monotonic() - start
    finally:
        stagedsink._stage = saved[0]
        for s in STEPS:
            setattr(staging.StagedApplier, s, saved[1][s])
    groups, fallbacks, statements, _segments, laps = counted[0]
    assert fallbacks == 0
    return {"groups": groups, "statements": statements, "laps": laps, **measured}


def contents(dsn: str) -> dict:
    with psycopg.connect(dsn) as c:
        return {(o, t): dict(c.execute(f"SELECT id, name FROM {o.lower()}.{t.lower()}").fetchall())
                for o in OWNERS for t in TABLES}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--group", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    batches, final = workload(a.rows)
    expected = {k: final.get(k, {}) for k in ((o, t) for o in OWNERS for t in TABLES)}
    print(f"staged path, target side: 2 batches of {a.rows} row LCRs, GROUPTRANSOPS {a.group}; start "
          f"{time.strftime('%H:%M:%S')}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    for r in range(a.runs):
        dbs, dsn = make_databases("stg", ("store", "aps"))
        try:
            p5_site(dsn, ("APS",), a.group).close()
            for b, data in enumerate(batches):
                m = run_batch(dsn, data, a.group)
                steps = ", ".join(f"{s} {m[f'{s} cpu']:.2f}" for s in STEPS)
                print(f"run {r} batch {b}: {m['wall']:.2f} s, {m['groups']} groups, {m['statements']} statements; "
                      f"laps {m['laps']}; target CPU: COPY {m['COPY cpu']:.2f}, {steps} s", flush=True)
            assert contents(dsn["aps"]) == expected, "the target's rows are not the workload's"
        finally:
            drop_databases(dbs)
    print(f"end {time.strftime('%H:%M:%S')}, load {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
