"""``sluice pipeline`` refusals and status, without starting Spark (the Spark runs are
tests/pipeline/test_spark_pipeline.py's, through the same PipelineRun)."""

from __future__ import annotations

from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.pipeline import queueio
from sluice.pipeline.queueio import QueueRef


def test_refusals_are_one_clear_line(tmp_path):
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    sluice.connect(dsn).close()
    runner = CliRunner()
    for args, text in [
            (["pipeline", "run", "--queue", "Q", "--warehouse", "wh", "--master", "spark://127.0.0.1:7077"],
             "an SQLite store cannot be used with master spark://127.0.0.1:7077"),
            (["pipeline", "run", "--apply", "A1", "--warehouse", "wh"], "ORA-26701"),
            (["pipeline", "run", "--capture", "NOPE", "--warehouse", "wh"], "ORA-26701"),
            (["pipeline", "run", "--propagation", "NOPE", "--warehouse", "wh"], "ORA-26701"),
            (["pipeline", "run", "--queue", "NOPE", "--warehouse", "wh", "--master", "local[1]"], "ORA-24010")]:
        result = runner.invoke(main, ["--dsn", dsn, *args])
        assert result.exit_code != 0 and text in result.output, (args, result.output)
        assert "Traceback" not in result.output


def test_status_shows_the_low_watermark_and_figures(tmp_path):
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("WH"))
    conn.queue("STRM_Q").enqone(conn.msgproperties(payload={"a": 1}))
    conn.commit()
    ref = QueueRef.resolve(dsn, "STRM_Q", "WH")
    with queueio.open_raw(dsn) as raw:
        assert queueio.acknowledge(raw, ref, "p", queueio.latest_position(raw, ref, 0)) == 1
    queueio.record_figures(dsn, "p", ref, state="STOPPED", messages_per_second=12.345, lag_seconds=0.5)
    result = CliRunner().invoke(main, ["--dsn", dsn, "pipeline", "status"])
    assert result.exit_code == 0, result.output
    header, _, row = result.output.splitlines()[:3]
    assert header.split()[:7] == ["NAME", "QUEUE", "CONSUMER_NAME", "STATE", "POSITION", "BATCHES", "TOTAL_MESSAGES"]
    assert row.split()[:7] == ["p", "SLUICE.STRM_Q", "WH", "STOPPED", "1", "1", "1"] and "12.35" in row
    conn.close()
