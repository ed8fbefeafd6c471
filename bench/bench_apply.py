"""Apply into PostgreSQL (issue 15 §2), serial, with the floor measured in the same run:

    .venv/bin/python bench/bench_apply.py [--rows 200000] [--tables 10] [--rounds 3]
                                          [--parallelism 4] [--process ROWS] [--profile]

The workload: ``--rows`` row LCRs over ``--tables`` tables (id bigint key, three more
columns), in source transactions of 1-100 rows (uniform), 70 % inserts, 20 % updates of a
live row (old key and the old value of one column, new values of two), 10 % deletes —
built in memory once, the same for every method.  Each method applies the whole workload
into fresh empty tables of the database ``sluice_apply_bench``, one target transaction per
source transaction, in order:

(a) floor, pipelined: psycopg pipeline mode, one statement per row (the same INSERT /
    UPDATE ... WHERE key AND old value / DELETE Sluice sends), a commit per source
    transaction;
(b) floor, executemany: ``cursor.executemany`` per run of same-shape rows, a commit per
    source transaction;
(c) Sluice: :class:`sluice.streams.apply.ApplyEngine` — statements from the LCRs (names,
    keys and types from the target's dictionary), conflict detection (every statement must
    touch one row), the low-watermark written in each transaction (exactly once), the
    apply tag;
(e) Sluice with ``--parallelism`` apply servers (``--serialization`` FULL or NONE) (:class:`~sluice.streams.apply.parallel.ParallelApply`,
    batches of 500 transactions, row dependencies by key, commits in source order);
(d) with ``--process ROWS``: the first ROWS rows enqueued as captured LCRs into a
    PostgreSQL store's commit-time queue, then an apply process dequeues and applies them
    (queue, transactions, rules path without rule sets): end to end rows/s.

(a), (c) and (e) run ``--rounds`` times, alternating, so each ratio compares runs made
minutes apart on a machine whose load moves; (b) runs once.  Rows/s of each, the medians,
(c)/(a) per round.  Targets (issue 15 §2): (c) >= 10,000 rows/s; (e) >= 1.5 x (c).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import random
import statistics
import sys
import time
import uuid
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import psycopg  # noqa: E402

import sluice  # noqa: E402
from sluice.streams import RowLCR  # noqa: E402
from sluice.streams.apply import ApplyDefinition, ApplyProcess, Item, SourceTxn, engine_for  # noqa: E402
from sluice.streams.apply.procedures import ApplyProcedures  # noqa: E402

SERVER = os.environ.get("BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
DB = "sluice_apply_bench"
SOURCE = "BENCH.SRC"


def workload(rows: int, tables: int, owner: str, seed: int = 15) -> list[list[RowLCR]]:
    rng = random.Random(seed)
    live: list[dict[int, int]] = [dict() for _ in range(tables)]   # id -> a
    next_id = [1] * tables
    txns, made, scn = [], 0, 1000
    while made < rows:
        n = min(rng.randint(1, 100), rows - made)
        scn += 1
        txn_id = f"1.{scn}.0"
        lcrs = []
        for _ in range(n):
            t = rng.randrange(tables)
            name = f"T{t}"
            op = rng.random()
            rows_t = live[t]
            if op < 0.7 or len(rows_t) < 10:
                i = next_id[t]
                next_id[t] += 1
                a = rng.randrange(10**6)
                rows_t[i] = a
                lcrs.append(RowLCR(SOURCE, "INSERT", owner, name, None, txn_id, scn,
                                   None, {"ID": i, "A": a, "B": f"b{i}", "C": rng.randrange(10**4)},
                                   commit_scn=scn))
            elif op < 0.9:
                i = rng.choice(list(rows_t))
                a = rng.randrange(10**6)
                lcrs.append(RowLCR(SOURCE, "UPDATE", owner, name, None, txn_id, scn,
                                   {"ID": i, "A": rows_t[i]}, {"A": a, "B": f"u{a}"}, commit_scn=scn))
                rows_t[i] = a
            else:
                i = rng.choice(list(rows_t))
                del rows_t[i]
                lcrs.append(RowLCR(SOURCE, "DELETE", owner, name, None, txn_id, scn, {"ID": i}, None,
                                   commit_scn=scn))
        txns.append(lcrs)
        made += n
    return txns


def fresh_schema(conninfo: str, tables: int) -> str:
    schema = "b_" + uuid.uuid4().hex[:8]
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute(f"CREATE SCHEMA {schema}")
        for t in range(tables):
            c.execute(f"CREATE TABLE {schema}.t{t} (id bigint PRIMARY KEY, a integer, b text, c numeric)")
    return schema


def drop_schema(conninfo: str, schema: str) -> None:
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute(f"DROP SCHEMA {schema} CASCADE")


def statement(schema: str, lcr: RowLCR) -> tuple[str, tuple]:
    """The SQL a hand-written replicator sends for this LCR."""
    table = f"{schema}.{lcr.get_object_name().lower()}"
    cmd = lcr.get_command_type()
    if cmd == "INSERT":
        v = {u.column_name: u.data.value for u in lcr.get_values("NEW")}
        return (f"INSERT INTO {table} (id, a, b, c) VALUES (%s, %s, %s, %s)", (v["ID"], v["A"], v["B"], v["C"]))
    old = {u.column_name: u.data.value for u in lcr.get_values("OLD")}
    if cmd == "UPDATE":
        new = {u.column_name: u.data.value for u in lcr.get_values("NEW", "N")}
        return (f"UPDATE {table} SET a = %s, b = %s WHERE id = %s AND a = %s",
                (new["A"], new["B"], old["ID"], old["A"]))
    return (f"DELETE FROM {table} WHERE id = %s", (old["ID"],))


def _pipelined(c: psycopg.Connection, prepared: list) -> float:
    """Apply transactions of prepared statements, pipelined, a commit each; seconds."""
    t0 = time.perf_counter()
    for stmts in prepared:
        with c.pipeline():
            for sql, params in stmts:
                c.execute(sql, params)
        c.commit()
    return time.perf_counter() - t0


def floor_pipeline(conninfo: str, schema: str, txns: list) -> float:
    prepared = [[statement(schema, x) for x in lcrs] for lcrs in txns]   # not timed
    with psycopg.connect(conninfo) as c:
        return _pipelined(c, prepared)


def _bare_connection(conninfo: str, work: list, barrier: Any, out: Any) -> None:
    """One bare psycopg connection (a process of its own: no GIL shared with the others)
    applying ``work`` as :func:`floor_pipeline` does."""
    with psycopg.connect(conninfo) as c:
        barrier.wait()
        out.put(_pipelined(c, work))


def floor_connections(conninfo: str, schema: str, txns: list, n: int) -> float:
    """The physical floor of parallel apply: ``n`` bare connections, each in a process of
    its own, the rows split by key (table, id) so no connection waits for another's lock;
    each connection commits its part of every source transaction (n = 1: the whole
    transaction, as the pipeline floor).  Seconds from the moment all are connected until
    the last has committed."""
    import multiprocessing as mp
    parts: list[list] = [[] for _ in range(n)]
    for lcrs in txns:
        split: list[list] = [[] for _ in range(n)]
        for lcr in lcrs:
            ident = (lcr.get_value("NEW" if lcr.get_command_type() == "INSERT" else "OLD", "ID").value)
            split[(int(lcr.get_object_name()[1:]) * 1_000_003 + ident) % n].append(statement(schema, lcr))
        for part, stmts in zip(parts, split):
            if stmts:
                part.append(stmts)
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(n + 1), ctx.Queue()
    procs = [ctx.Process(target=_bare_connection, args=(conninfo, part, barrier, out)) for part in parts]
    for p in procs:
        p.start()
    barrier.wait()
    t0 = time.perf_counter()
    for _ in procs:
        while True:
            try:
                out.get(timeout=5)
                break
            except Exception:      # queue.Empty: a connection that died reports nothing
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise SystemExit("a bare connection failed (see above)") from None
    secs = time.perf_counter() - t0
    for p in procs:
        p.join()
    return secs


def floor_executemany(conninfo: str, schema: str, txns: list) -> float:
    prepared = [[statement(schema, x) for x in lcrs] for lcrs in txns]
    with psycopg.connect(conninfo) as c:
        cur = c.cursor()
        t0 = time.perf_counter()
        for stmts in prepared:
            i = 0
            while i < len(stmts):
                j = i
                while j < len(stmts) and stmts[j][0] == stmts[i][0]:
                    j += 1
                cur.executemany(stmts[i][0], [p for _, p in stmts[i:j]])
                i = j
            c.commit()
        return time.perf_counter() - t0


def sluice_engine(conn: sluice.Connection, conninfo: str, schema: str, txns: list, profile: bool) -> float:
    link = f"{conninfo}?schema={schema}"
    ApplyProcedures(conn).set_schema_instantiation_scn(schema.upper(), SOURCE, 0, apply_database_link=link)
    engine = engine_for(conn, "BENCH_APPLY", link, b"\x00")
    work = [SourceTxn([Item(x) for x in lcrs], "CAPTURED", SOURCE, lcrs[0].get_commit_scn(),
                      lcrs[0].get_transaction_id()) for lcrs in txns]
    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    for txn in work:
        engine.apply(txn)
    if prof:
        prof.disable()
    elapsed = time.perf_counter() - t0
    engine.target.close()
    if prof:
        pstats.Stats(prof).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(25)
    return elapsed


def sluice_parallel(conn: sluice.Connection, conninfo: str, schema: str, txns: list, parallelism: int,
                    ordered: bool = True, servers: str = "processes") -> float:
    from sluice.streams.apply.parallel import ParallelApply
    from sluice.streams.apply.servers import ServerProcesses
    link = f"{conninfo}?schema={schema}"
    ApplyProcedures(conn).set_schema_instantiation_scn(schema.upper(), SOURCE, 0, apply_database_link=link)
    if servers == "processes":      # what an apply process with parallelism > 1 runs (servers.py)
        par: Any = ServerProcesses(engine_for(conn, "BENCH_APPLY", link, b"\x00"), parallelism, ordered)
    else:                           # apply servers as threads of one process
        par = ParallelApply(lambda i: engine_for(conn, "BENCH_APPLY", link, b"\x00", server_id=i), parallelism,
                            ordered=ordered)
    work = [SourceTxn([Item(x) for x in lcrs], "CAPTURED", SOURCE, lcrs[0].get_commit_scn(),
                      lcrs[0].get_transaction_id()) for lcrs in txns]
    t0 = time.perf_counter()
    for i in range(0, len(work), 500):
        for o in par.apply_all(work[i:i + 500]):
            if o is not True:
                raise RuntimeError(f"parallel apply: {o!r}")
    elapsed = time.perf_counter() - t0
    par.close()
    return elapsed


def sluice_process(conninfo: str, tables: int, txns: list, parallelism: int = 1) -> tuple[float, float]:
    """(enqueue seconds, apply seconds) through a PostgreSQL store's queue."""
    schema = fresh_schema(conninfo, tables)
    store = f"{conninfo}?schema=s_{schema}"
    conn = sluice.connect(store)
    conn.streams_adm.set_up_queue(queue_table="BQT", queue_name="BQ")
    conn.aqadm.add_subscriber(queue_name="BQ", subscriber=sluice.Agent("BENCH_APPLY"))
    owner = schema.upper()
    relabel = [[RowLCR(SOURCE, x.get_command_type(), owner, x.get_object_name(), None,
                       x.get_transaction_id(), x.get_scn(), {u.column_name: u.data for u in x.get_values("OLD")},
                       {u.column_name: u.data for u in x.get_values("NEW", "N")}, commit_scn=x.get_commit_scn())
                for x in lcrs] for lcrs in txns]
    q = conn.queue("BQ")
    t0 = time.perf_counter()
    for lcrs in relabel:
        q.enqmany([conn.msgproperties(payload=x) for x in lcrs])
        conn.commit()
    enq = time.perf_counter() - t0
    link = f"{conninfo}?schema={schema}"
    ApplyProcedures(conn).set_schema_instantiation_scn(owner, SOURCE, 0, apply_database_link=link)
    proc = ApplyProcess(sluice.connect(store), ApplyDefinition("BENCH_APPLY", conn.username, "BQ",
                                                               apply_database_link=link,
                                                               parameters={"PARALLELISM": str(parallelism)}),
                        batch=5000)
    t0 = time.perf_counter()
    proc.drain(timeout=3600)
    applied = time.perf_counter() - t0
    proc.stop()
    proc.conn.close()
    conn.close()
    drop_schema(conninfo, schema)
    with psycopg.connect(conninfo, autocommit=True) as c:
        c.execute(f"DROP SCHEMA s_{schema} CASCADE")
    return enq, applied


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--parallelism", type=int, default=4)
    ap.add_argument("--serialization", choices=("FULL", "NONE"), default="FULL",
                    help="commit_serialization of the parallel runs")
    ap.add_argument("--servers", choices=("processes", "threads"), default="processes",
                    help="(e)'s apply servers: processes (what the apply process runs) or threads")
    ap.add_argument("--process", type=int, default=0, help="rows for the end-to-end apply process run")
    ap.add_argument("--process-parallelism", type=int, default=1, help="the apply process's parallelism in (d)")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--floor-connections", type=int, default=4,
                    help="(f): the parallel floor, this many bare connections (processes) vs one (0: skip)")
    ap.add_argument("--only-floors", action="store_true", help="run (f) only (no Sluice runs)")
    a = ap.parse_args()
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DB,)).fetchone():
            c.execute(f"CREATE DATABASE {DB}")
    conninfo = f"{SERVER}/{DB}"
    print(f"{platform.node()} {os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; "
          f"{a.rows} rows over {a.tables} tables, {a.rounds} rounds", flush=True)
    t0 = time.perf_counter()
    owner_schema = "b_" + uuid.uuid4().hex[:8]
    txns = workload(a.rows, a.tables, owner_schema.upper())
    print(f"workload: {len(txns)} transactions built in {time.perf_counter() - t0:.1f} s", flush=True)
    labels = {"pipe": "(a) floor: pipeline, statement per row", "many": "(b) floor: executemany per row",
              "sluice": "(c) Sluice ApplyEngine, serial",
              "parallel": f"(e) Sluice, parallelism {a.parallelism} {a.serialization} ({a.servers})"}
    results: dict[str, list[float]] = {k: [] for k in labels}
    n = a.floor_connections
    labels["bare1"] = "(f1) floor: 1 bare connection (process)"
    labels["bareN"] = f"(f{n}) floor: {n} bare connections (processes), rows by key"
    results.update(bare1=[], bareN=[])
    runs = ("pipe", "sluice", "parallel") if not a.only_floors else ()
    runs += ("bare1", "bareN") if n else ()
    plan = [run for r in range(a.rounds) for run in runs]
    if not a.only_floors:
        plan.insert(1, "many")
    for run in plan:
        schema = fresh_schema(conninfo, a.tables)
        try:
            if run == "pipe":
                secs = floor_pipeline(conninfo, schema, txns)
            elif run == "many":
                secs = floor_executemany(conninfo, schema, txns)
            elif run in ("bare1", "bareN"):
                secs = floor_connections(conninfo, schema, txns, 1 if run == "bare1" else n)
            else:
                with psycopg.connect(conninfo, autocommit=True) as c:   # the LCRs name owner_schema
                    c.execute(f"ALTER SCHEMA {schema} RENAME TO {owner_schema}")
                schema = owner_schema
                store = sluice.connect(f"{conninfo}?schema=s_{owner_schema}")
                if run == "sluice":
                    secs = sluice_engine(store, conninfo, schema, txns, a.profile)
                else:
                    secs = sluice_parallel(store, conninfo, schema, txns, a.parallelism,
                                           a.serialization == "FULL", a.servers)
                store.close()
                with psycopg.connect(conninfo, autocommit=True) as c:
                    c.execute(f"DROP SCHEMA s_{owner_schema} CASCADE")
        finally:
            drop_schema(conninfo, schema)
        results[run].append(a.rows / secs)
        print(f"{labels[run]:45s} {a.rows / secs:10,.0f} rows/s  ({secs:.1f} s, load {os.getloadavg()[0]:.1f})",
              flush=True)
    med = {k: statistics.median(v) for k, v in results.items() if v}
    print("medians: " + ", ".join(f"{labels[k].split(' ')[0]} {v:,.0f}" for k, v in med.items()))
    if n:
        print(f"(f{n})/(f1) per round: {', '.join(f'{p / s:.2f}' for p, s in zip(results['bareN'], results['bare1']))}"
              f" — the physical parallel floor: {n} connections >= 1.5 x one "
              f"{'is reached' if med['bareN'] >= 1.5 * med['bare1'] else 'is NOT reached'} on this machine "
              f"even by bare connections (medians)", flush=True)
    if a.only_floors:
        return
    ratios = [s / p for s, p in zip(results["sluice"], results["pipe"])]
    print(f"(c)/(a) per round: {', '.join(f'{r:.2f}' for r in ratios)}; "
          f"(e)/(c) per round: {', '.join(f'{p / s:.2f}' for p, s in zip(results['parallel'], results['sluice']))}")
    print(f"target (c) >= 10,000 rows/s: {'met' if med['sluice'] >= 10_000 else 'NOT met'} (median); "
          f"(e) >= 1.5 x (c): {'met' if med['parallel'] >= 1.5 * med['sluice'] else 'NOT met'} (medians)")
    if a.process:
        enq, secs = sluice_process(conninfo, a.tables, txns_prefix(txns, a.process), a.process_parallelism)
        print(f"(d) apply process (parallelism {a.process_parallelism}) from a PostgreSQL store's queue: "
              f"{a.process / secs:,.0f} rows/s "
              f"({secs:.1f} s; enqueueing them took {enq:.1f} s)")


def txns_prefix(txns: list, rows: int) -> list:
    out, n = [], 0
    for lcrs in txns:
        if n >= rows:
            break
        out.append(lcrs)
        n += len(lcrs)
    return out


if __name__ == "__main__":
    main()
