"""The apply engine's set form against its per-LCR statements (issue 15 §2, set15):

    .venv/bin/python bench/bench_setform.py [--rows 20000] [--tables 10] [--txn-rows 0] [--pairs 2]

bench_apply's workload (``--tables`` tables, 70 % inserts, 20 % updates, 10 % deletes) in
source transactions of 1-100 rows (``--txn-rows 0``) or of exactly ``--txn-rows`` rows,
applied by one :class:`~sluice.streams.apply.ApplyEngine` as the apply process's serial path
drives it (``commit_later``, the next transaction built ahead) into fresh tables of the
database ``sluice_apply_bench``, ``--pairs`` times each way, alternating: per-LCR statements
only (SET_FORM_MIN out of reach) and the engine's defaults (the set form where its
thresholds take it).  Per run: rows/s, the apply's Python CPU per row (process time) and
its PostgreSQL backend's CPU per row (/proc of the backend: same machine only), and how
many transactions went in the set form.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))

import psycopg  # noqa: E402

import bench_apply as base  # noqa: E402
import sluice  # noqa: E402
import sluice.streams.apply.engine as engine_module  # noqa: E402
from sluice.streams import RowLCR  # noqa: E402
from sluice.streams.apply import Item, SourceTxn, engine_for  # noqa: E402
from sluice.streams.apply.procedures import ApplyProcedures  # noqa: E402


def backend_cpu(pid: int) -> float:
    """Seconds of CPU the PostgreSQL backend ``pid`` used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def transactions(rows: int, tables: int, owner: str, size: int) -> list[list[RowLCR]]:
    """bench_apply's workload, regrouped into transactions of ``size`` rows (0: as made)."""
    made = base.workload(rows, tables, owner)
    if not size:
        return made
    flat = [x for lcrs in made for x in lcrs]
    out = []
    for start in range(0, len(flat), size):
        scn = 1000 + start
        out.append([RowLCR(base.SOURCE, x.get_command_type(), x.get_object_owner(), x.get_object_name(), None,
                           f"1.{scn}.0", scn, {u.column_name: u.data.value for u in x.get_values("OLD")} or None,
                           {u.column_name: u.data.value for u in x.get_values("NEW", "N")} or None, commit_scn=scn)
                    for x in flat[start:start + size]])
    return out


def run(store: sluice.Connection, conninfo: str, a: argparse.Namespace, per_lcr: bool) -> tuple:
    schema = base.fresh_schema(conninfo, a.tables)
    saved = engine_module.SET_FORM_MIN
    if per_lcr:
        engine_module.SET_FORM_MIN = 10**9
    try:
        link = f"{conninfo}?schema={schema}"
        ApplyProcedures(store).set_schema_instantiation_scn(schema.upper(), base.SOURCE, 0, apply_database_link=link)
        engine = engine_for(store, "BENCH_SETFORM", link, b"\x00")
        work = [SourceTxn([Item(x) for x in lcrs], "CAPTURED", base.SOURCE, lcrs[0].get_commit_scn(),
                          lcrs[0].get_transaction_id())
                for lcrs in transactions(a.rows, a.tables, schema.upper(), a.txn_rows)]
        pid = engine.target.conn.info.backend_pid
        server, python, t0 = backend_cpu(pid), time.process_time(), time.perf_counter()
        for k, txn in enumerate(work):
            engine.apply(txn, commit_later=True, upcoming=work[k + 1] if k + 1 < len(work) else None)
        engine.settle()
        wall = time.perf_counter() - t0
        python, server = time.process_time() - python, backend_cpu(pid) - server
        n = sum(len(t.items) for t in work)
        used = engine.set_form_batches
        engine.target.close()
        return n / wall, python / n * 1e6, server / n * 1e6, used, len(work)
    finally:
        engine_module.SET_FORM_MIN = saved
        base.drop_schema(conninfo, schema)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--tables", type=int, default=10)
    ap.add_argument("--txn-rows", type=int, default=0, help="rows per transaction (0: 1-100, as bench_apply)")
    ap.add_argument("--pairs", type=int, default=2)
    a = ap.parse_args()
    with psycopg.connect(f"{base.SERVER}/postgres", autocommit=True) as c:
        if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (base.DB,)).fetchone():
            c.execute(f"CREATE DATABASE {base.DB}")
    conninfo = f"{base.SERVER}/{base.DB}"
    store_schema = "s_setform_bench"
    store = sluice.connect(f"{conninfo}?schema={store_schema}")
    print(f"load {os.getloadavg()[0]:.1f}; {a.rows} rows over {a.tables} tables, transactions of "
          f"{a.txn_rows or '1-100'} rows", flush=True)
    try:
        for _ in range(a.pairs):
            for per_lcr in (True, False):
                rate, python, server, used, txns = run(store, conninfo, a, per_lcr)
                print(f"{'per-LCR ' if per_lcr else 'defaults'}: {rate:8,.0f} rows/s  Python {python:5.1f} µs/row  "
                      f"PostgreSQL {server:5.1f} µs/row  set form {used}/{txns} transactions "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        store.close()
        with psycopg.connect(conninfo, autocommit=True) as c:
            c.execute(f"DROP SCHEMA IF EXISTS {store_schema} CASCADE")


if __name__ == "__main__":
    main()
