"""A query that died only because Spark's Python worker was late is started again from its
checkpoint (pipeline/restart.py); any other failure ends the run at once.  The logic with
stand-in queries here; tests/pipeline/test_cli_pipeline.py makes a real worker late."""

from __future__ import annotations

import pytest

from sluice.pipeline import restart

LATE = ("org.apache.spark.SparkException: Python worker failed to connect back. "
        "Caused by: java.net.SocketTimeoutException: Timed out while waiting for the Python worker to connect back")


class Query:
    """Ends at once, with ``error`` (None: well)."""

    def __init__(self, error: str | None) -> None:
        self.error = error

    isActive = False

    def awaitTermination(self, timeout: float | None = None) -> bool | None:
        if self.error is not None:
            raise RuntimeError(self.error)   # as pyspark's does
        return True if timeout is not None else None

    def exception(self) -> str | None:
        return self.error


def starts(*outcomes):
    """A start function: each call takes the next outcome — an exception is raised, a text
    or None is the query's end."""
    calls: list = []

    def start():
        outcome = outcomes[len(calls)]
        calls.append(outcome)
        if isinstance(outcome, Exception):
            raise outcome
        return Query(outcome)
    return start, calls


def test_only_a_late_worker_counts_as_late():
    assert restart.worker_was_late(RuntimeError(LATE))
    assert restart.worker_was_late("Timed out while waiting for the Python worker to connect back after 10000 ms")
    assert not restart.worker_was_late(None)
    assert not restart.worker_was_late(RuntimeError("ORA-00942: table or view does not exist"))


def test_a_query_that_died_of_a_late_worker_runs_again_to_its_end():
    said: list[str] = []
    start, calls = starts(LATE, None)
    query = restart.to_the_end(start, timeout=5, said=said.append)
    assert query.exception() is None and len(calls) == 2
    assert len(said) == 1 and "restart 1 of 3" in said[0] and "checkpoint" in said[0]


def test_a_start_that_raises_for_a_late_worker_is_tried_again():
    start, calls = starts(RuntimeError(LATE), RuntimeError(LATE), None)
    assert restart.to_the_end(start, timeout=5).exception() is None and len(calls) == 3


def test_other_failures_end_the_run_at_once():
    start, calls = starts(RuntimeError("boom"))
    with pytest.raises(RuntimeError, match="boom"):
        restart.to_the_end(start, timeout=5)
    start, calls = starts("ORA-26714: user error")
    assert restart.to_the_end(start, timeout=5).exception() == "ORA-26714: user error" and len(calls) == 1


def test_the_restarts_are_bounded():
    start, calls = starts(*[LATE] * 10)
    query = restart.to_the_end(start, timeout=5)
    assert restart.worker_was_late(query.exception()) and len(calls) == restart.ATTEMPTS
    start, calls = starts(*[RuntimeError(LATE)] * 10)
    with pytest.raises(RuntimeError, match="connect back"):
        restart.to_the_end(start, timeout=5)
    assert len(calls) == restart.ATTEMPTS


def test_a_query_still_running_at_the_timeout_is_returned_running():
    class Running(Query):
        isActive = True

        def awaitTermination(self, timeout=None):
            return False
    assert isinstance(restart.to_the_end(lambda: Running(None), timeout=0.01), Running)


def test_sluice_pipeline_run_goes_on_after_a_late_python_worker(tmp_path):
    """The real thing: `sluice pipeline run` whose Python (PYSPARK_PYTHON) is slow to start
    the streaming source's offset runner the first time -- past Spark's 10-s wait, as on a
    loaded machine.  The query dies of it, the run starts it again from its checkpoint, and
    the warehouse holds every message once."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import pyarrow.parquet as pq

    import sluice

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("WH"))
    q = conn.queue("STRM_Q")
    for t in range(20):
        q.enqmany([conn.msgproperties(payload={"t": t, "i": i}) for i in range(5)])
        conn.commit()
    conn.close()
    python = tmp_path / "late-python"
    python.write_text(f"""#!/bin/sh
case "$*" in
  *python_streaming_source_runner*)
    if [ ! -e "{tmp_path}/was-late" ]; then touch "{tmp_path}/was-late"; sleep 13; fi ;;
esac
exec "{sys.executable}" "$@"
""")
    python.chmod(0o755)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = dict(os.environ, PYTHONPATH=src, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(python))
    result = subprocess.run(
        [sys.executable, "-m", "sluice.cli", "--dsn", dsn, "pipeline", "run", "--queue", "STRM_Q",
         "--consumer", "WH", "--name", "wh", "--warehouse", str(tmp_path / "wh"),
         "--checkpoint-dir", str(tmp_path / "ck"), "--once", "--master", "local[1]",
         "--conf", "spark.ui.enabled=false"],
        env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "was-late").exists()
    assert "starting again from the checkpoint (restart 1 of 3)" in result.stdout, result.stdout
    table = pq.read_table(str(tmp_path / "wh")).to_pydict()
    assert len(table["msgid"]) == 100 and len(set(table["msgid"])) == 100
