"""Synchronous capture and a writer killed with SIGKILL: the LCRs are written in the writer's
transaction, so a transaction that did not commit leaves neither rows nor LCRs, and every
committed row has exactly one LCR, in commit order."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from tests.streams.synckit import senv  # noqa: F401  (fixture)

_WRITER = textwrap.dedent("""
    import sys, time
    kind, target, table = sys.argv[1:4]
    if kind == "sqlite":
        import sqlite3
        w = sqlite3.connect(target, isolation_level=None, timeout=30)
    else:
        import psycopg
        w = psycopg.connect(target, autocommit=True)
    mode = sys.argv[4]
    i = 0
    while True:
        w.execute("BEGIN")
        for _ in range(5):
            w.execute(f"INSERT INTO {table} VALUES ({i}, 'x', 1)")
            i += 1
        if mode == "hang":              # the transaction stays open until the kill
            print("open", flush=True)
            time.sleep(60)
        w.execute("COMMIT")
        print(i, flush=True)
""")


def _writer(senv, mode: str) -> subprocess.Popen:
    from tests.conftest import PG_BASE
    target = senv.path if senv.sqlite else PG_BASE
    return subprocess.Popen([sys.executable, "-c", _WRITER, "sqlite" if senv.sqlite else "pg", target,
                             senv.table("emp"), mode], stdout=subprocess.PIPE, text=True)


def _setup(senv) -> None:
    senv.create_table("emp")
    rs = senv.rule_set("C_RS", "emp")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="C", rule_set_name=rs)


def test_writer_killed_inside_a_transaction_leaves_nothing(senv):
    _setup(senv)
    proc = _writer(senv, "hang")
    try:
        assert proc.stdout.readline().strip() == "open"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert senv.dequeue_all() == []
    assert senv.writer.execute(f"SELECT COUNT(*) FROM {senv.table('emp')}").fetchone()[0] == 0
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1000, 'after', 1)")   # the capture still works
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1000]


def test_writer_killed_at_any_point_every_committed_row_once(senv):
    _setup(senv)
    proc = _writer(senv, "loop")
    try:
        deadline = time.monotonic() + 120        # a slow machine: later, never too early
        while (written := int(proc.stdout.readline() or 0)) < 200 and time.monotonic() < deadline:
            assert proc.poll() is None, "the writer died before 200 rows"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert written >= 200, f"the writer wrote {written} rows before the 120 s deadline (too slow a machine?)"
    rows = [r[0] for r in senv.writer.execute(f"SELECT id FROM {senv.table('emp')} ORDER BY id").fetchall()]
    captured = [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()]
    assert len(rows) >= 200 and len(rows) % 5 == 0
    assert captured == rows             # none lost, none twice, in commit order
