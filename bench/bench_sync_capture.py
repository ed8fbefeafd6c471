"""Synchronous capture overhead (issue 13 §4), in one run, on both backends:

    .venv/bin/python bench/bench_sync_capture.py [--rows 20000] [--txn 1,10,100]
                                                 [--backends sqlite,postgresql] [--subscribers 1]

For each backend and transaction size, a plain writer (``sqlite3`` on the store's file,
psycopg on the store's database — not Sluice) inserts ``--rows`` rows into two tables of
the same shape, one after the other, each twice (alternating, best of two):

(a) ``plain``: a table no capture names — the floor;
(b) ``captured``: a table a synchronous capture captures with one table rule (as
    ADD_TABLE_RULES writes it), its triggers enqueueing each row LCR into the capture's
    commit-time queue (``--subscribers`` records each) in the writer's transaction.

Rows/s of each and the ratio captured/plain.  Then an UPDATE of every captured row in
transactions of 100, the same way.  The queue is drained between runs (not timed).
SQLite runs with the store's settings (WAL, ``synchronous=NORMAL`` as Sluice opens it).
"""

from __future__ import annotations

import argparse
import os
import platform
import sqlite3
import sys
import tempfile
import time
import uuid

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import sluice  # noqa: E402

PG_BASE = os.environ.get("SLUICE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
COLUMNS = "id INTEGER PRIMARY KEY, name TEXT, dept INTEGER, salary NUMERIC"


class Site:
    """A store with a Streams queue, a synchronous capture of table ``cap`` and a plain writer."""

    def __init__(self, backend: str, subscribers: int) -> None:
        self.backend = backend
        if backend == "sqlite":
            self.tmp = tempfile.mkdtemp(prefix="sluice-syncbench-")
            self.dsn = f"sqlite:///{self.tmp}/bench.db"
            self.schema = None
        else:
            self.store_schema = "b_" + uuid.uuid4().hex[:10]
            self.schema = "hrb_" + uuid.uuid4().hex[:8]
            self.dsn = f"{PG_BASE}?schema={self.store_schema}"
        self.conn = sluice.connect(self.dsn)
        self.conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
        for i in range(subscribers):
            self.conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(f"APPLY{i}"))
        if backend == "sqlite":
            self.writer = sqlite3.connect(f"{self.tmp}/bench.db", isolation_level=None, timeout=60)
            self.writer.execute("PRAGMA synchronous=NORMAL")
            owner, db = "HR", "BENCH"
        else:
            self.writer = psycopg.connect(PG_BASE, autocommit=True)
            self.writer.execute(f"CREATE SCHEMA {self.schema}")
            owner, db = self.schema.upper(), PG_BASE.rsplit("/", 1)[-1].upper()
        for t in ("plain", "cap"):
            self.writer.execute(f"CREATE TABLE {self.table(t)} ({COLUMNS})")
        adm = self.conn.rule_adm
        adm.create_rule_set(rule_set_name="B_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
        adm.create_rule(rule_name="B_R", condition=(
            f"(((:dml.get_object_owner() = '{owner}' and :dml.get_object_name() = 'CAP')) "
            f"and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = '{db}' )"))
        adm.add_rule(rule_name="B_R", rule_set_name="B_RS")
        self.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="B", rule_set_name="B_RS")

    def table(self, name: str) -> str:
        return name if self.schema is None else f"{self.schema}.{name}"

    def insert(self, table: str, rows: int, per_txn: int, start: int) -> float:
        """Rows/s of ``rows`` single-row INSERTs in transactions of ``per_txn``."""
        w = self.writer
        sql = f"INSERT INTO {self.table(table)} VALUES ({'?' if self.schema is None else '%s'}, 'name', 10, 1234.5)"
        t0 = time.perf_counter()
        for first in range(start, start + rows, per_txn):
            w.execute("BEGIN")
            for i in range(first, min(first + per_txn, start + rows)):
                w.execute(sql, (i,))
            w.execute("COMMIT")
        return rows / (time.perf_counter() - t0)

    def update_all(self, table: str, per_txn: int, rows: int) -> float:
        w = self.writer
        mark = "?" if self.schema is None else "%s"
        sql = f"UPDATE {self.table(table)} SET salary = salary + 1 WHERE id = {mark}"
        ids = [r[0] for r in w.execute(f"SELECT id FROM {self.table(table)} ORDER BY id LIMIT {rows}").fetchall()]
        t0 = time.perf_counter()
        for first in range(0, len(ids), per_txn):
            w.execute("BEGIN")
            for i in ids[first:first + per_txn]:
                w.execute(sql, (i,))
            w.execute("COMMIT")
        return len(ids) / (time.perf_counter() - t0)

    def drain(self) -> int:
        """Empty the queue (untimed): the captured rows must not make the next run slower."""
        n = self.writer.execute("SELECT COUNT(*) FROM " + (
            '"SLUICE.STRM_QT"' if self.schema is None else f'{self.store_schema}."SLUICE.STRM_QT"')).fetchone()[0]
        self.writer.execute("DELETE FROM " + (
            '"SLUICE.STRM_QT"' if self.schema is None else f'{self.store_schema}."SLUICE.STRM_QT"'))
        return n

    def close(self) -> None:
        self.conn.capture_adm.drop_capture(capture_name="B")
        self.conn.close()
        if self.schema is not None:
            self.writer.execute(f"DROP SCHEMA {self.schema} CASCADE")
            self.writer.execute(f"DROP SCHEMA {self.store_schema} CASCADE")
        self.writer.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--txn", default="1,10,100")
    ap.add_argument("--backends", default="sqlite,postgresql")
    ap.add_argument("--subscribers", type=int, default=1)
    args = ap.parse_args()
    print(f"# {platform.node()} {platform.machine()} cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f} "
          f"python {platform.python_version()} sqlite {sqlite3.sqlite_version}; rows={args.rows} "
          f"subscribers={args.subscribers}")
    print(f"{'backend':<11}{'op':<8}{'rows/txn':>9}{'plain rows/s':>14}{'captured rows/s':>17}{'ratio':>8}"
          f"{'LCRs':>8}")
    for backend in args.backends.split(","):
        site = Site(backend, args.subscribers)
        try:
            start = 0
            for per_txn in (int(x) for x in args.txn.split(",")):
                rows = args.rows if per_txn > 1 else max(1, args.rows // 4)   # 1-row txns are slow
                best = {"plain": 0.0, "cap": 0.0}
                lcrs = 0
                for _ in range(2):
                    for table in ("plain", "cap"):
                        best[table] = max(best[table], site.insert(table, rows, per_txn, start))
                        lcrs += site.drain() if table == "cap" else 0
                    start += rows
                print(f"{backend:<11}{'insert':<8}{per_txn:>9}{best['plain']:>14,.0f}{best['cap']:>17,.0f}"
                      f"{best['cap'] / best['plain']:>8.2f}{lcrs:>8}")
            best = {t: max(site.update_all(t, 100, args.rows) for _ in range(2)) for t in ("plain", "cap")}
            lcrs = site.drain()
            print(f"{backend:<11}{'update':<8}{100:>9}{best['plain']:>14,.0f}{best['cap']:>17,.0f}"
                  f"{best['cap'] / best['plain']:>8.2f}{lcrs:>8}")
        finally:
            site.close()


if __name__ == "__main__":
    main()
