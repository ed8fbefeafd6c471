"""Exactly once across a kill -9 of the Spark driver (issue 16 §3), and a clean SIGTERM
stop.  A pipeline enqueuing from one queue into another (propagation on Spark) is killed
mid-run -- driver, JVM and Python workers, its whole process group -- then restarted from
its checkpoint; every source message must be in the destination exactly once, in commit
order per source transaction.  The convergence checker compares what arrived with what
was sent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import sluice
from sluice import RowLCR
from sluice.pipeline import queueio
from sluice.pipeline.queueio import QueueRef

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _arrived(dsn: str) -> int:
    ref = QueueRef.resolve(dsn, "DEST_Q", "READER")
    with queueio.open_raw(dsn) as raw:
        return raw.execute(f"SELECT COUNT(*) FROM {ref.table} WHERE CONSUMER_NAME = 'READER'").fetchone()[0]


def test_kill9_of_the_driver_then_restart_delivers_each_message_once(tmp_path):
    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("FWD"))
    conn.streams_adm.set_up_queue(queue_table="DEST_QT", queue_name="DEST_Q")
    conn.aqadm.add_subscriber(queue_name="DEST_Q", subscriber=sluice.Agent("READER"))
    q = conn.queue("STRM_Q")
    sent = []
    for t in range(600):
        txn = [RowLCR("DBS1.NET", "INSERT", "HR", "T", None, f"{t}.0.1", t * 10 + i, None, {"ID": t * 10 + i})
               for i in range(1 + t % 9)]
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
        sent += [(lcr.get_transaction_id(), lcr.get_scn()) for lcr in txn]
    args = [sys.executable, "-m", "sluice.cli", "--dsn", dsn, "pipeline", "run", "--queue", "STRM_Q",
            "--consumer", "FWD", "--name", "fwd", "--to-queue", "DEST_Q", "--checkpoint-dir", str(tmp_path / "ck"),
            "--max-messages-per-batch", "150", "--master", "local[2]", "--conf", "spark.ui.enabled=false"]
    env = dict(os.environ, PYTHONPATH=SRC, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    log = open(tmp_path / "first.log", "w")
    first = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while _arrived(dsn) < len(sent) // 4 and time.monotonic() < deadline and first.poll() is None:
            time.sleep(0.2)
        assert 0 < _arrived(dsn) < len(sent), (tmp_path / "first.log").read_text()[-2000:]
    finally:
        os.killpg(first.pid, signal.SIGKILL)   # the driver's own process group: driver, JVM, workers
        first.wait()
        log.close()
    killed_at = _arrived(dsn)
    second = subprocess.run(args + ["--once"], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]

    dest = conn.queue("DEST_Q")
    dest.deqoptions.consumername = "READER"
    dest.deqoptions.wait = sluice.DEQ_NO_WAIT
    received = []
    while True:
        dest.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION
        try:
            batch = dest.deqmany(100000)
        except sluice.DatabaseError:
            break
        if not batch:
            break
        received += [(m.payload.get_transaction_id(), m.payload.get_scn()) for m in batch]
    conn.commit()
    counts = Counter(received)
    assert killed_at < len(sent)
    assert [k for k, n in counts.items() if n > 1] == []          # none twice
    assert set(counts) == set(sent)                                # none lost
    assert received == sorted(received, key=lambda k: (int(k[0].split(".")[0]), k[1]))   # commit order
    cols, rows = queueio.progress_rows(dsn, "fwd")
    assert dict(zip(cols, rows[0]))["TOTAL_MESSAGES"] == len(sent)
    conn.close()


def test_sigterm_stops_the_pipeline_cleanly(tmp_path):
    """``sluice pipeline run`` ends on SIGTERM: the batch in flight is finished (or left to
    the checkpoint), the process exits 0, the status says STOPPED, nothing is lost."""
    import pyarrow.parquet as pq

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("WH"))
    q = conn.queue("STRM_Q")
    for t in range(100):
        q.enqmany([conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "HR", "T", None, f"{t}.0.1",
                                                      t * 10 + i, None, {"ID": t * 10 + i})) for i in range(5)])
        conn.commit()
    env = dict(os.environ, PYTHONPATH=SRC, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    proc = subprocess.Popen([sys.executable, "-m", "sluice.cli", "--dsn", dsn, "pipeline", "run", "--queue", "STRM_Q",
                             "--consumer", "WH", "--name", "wh", "--warehouse", str(tmp_path / "wh"),
                             "--checkpoint-dir", str(tmp_path / "ck"), "--master", "local[2]",
                             "--conf", "spark.ui.enabled=false"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            cols, rows = queueio.progress_rows(dsn, "wh")
            if rows and dict(zip(cols, rows[0]))["TOTAL_MESSAGES"] == 500:
                break
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, out[-2000:]
    cols, rows = queueio.progress_rows(dsn, "wh")
    status = dict(zip(cols, rows[0]))
    assert (status["STATE"], status["TOTAL_MESSAGES"], status["LAST_ERROR"]) == ("STOPPED", 500, None)
    assert len(pq.read_table(str(tmp_path / "wh"))) == 500
    conn.close()
