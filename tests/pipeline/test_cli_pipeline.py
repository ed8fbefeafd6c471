"""``sluice pipeline`` refusals and status, without starting Spark (the Spark runs are
tests/pipeline/test_spark_pipeline.py's, through the same PipelineRun)."""

from __future__ import annotations

import os

import click
import pytest
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


def test_directories_the_run_cannot_write_or_the_report_cannot_read_are_refused_before_spark(tmp_path):
    """A warehouse or checkpoint directory that cannot be made, or a report's warehouse that
    is not there: one ORA line before the JVM starts (they were ORA-00600 with Spark's Java
    stack trace, once the query started); nothing is made."""
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.close()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    runner = CliRunner()
    for args, text in [
            (["pipeline", "run", "--queue", "STRM_Q", "--warehouse", str(blocker / "wh"),
              "--checkpoint-dir", str(tmp_path / "ck")],
             f"ORA-29283: invalid file operation: cannot make the warehouse directory {blocker / 'wh'}"),
            (["pipeline", "run", "--queue", "STRM_Q", "--warehouse", str(tmp_path / "wh"),
              "--checkpoint-dir", f"file://{blocker}/ck"],
             f"ORA-29283: invalid file operation: cannot make the checkpoint directory file://{blocker}/ck"),
            (["pipeline", "report", str(tmp_path / "none"), "volume"],
             f"ORA-29280: invalid directory path: the warehouse {tmp_path / 'none'} is not a directory")]:
        result = runner.invoke(main, ["--dsn", dsn, *args])
        assert result.exit_code == 1 and text in result.output, (args, result.output)
        assert "Traceback" not in result.output and "ORA-00600" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("s.db")) == ["a-file"]
    if os.geteuid() != 0:     # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        result = runner.invoke(main, ["--dsn", dsn, "pipeline", "run", "--queue", "STRM_Q", "--warehouse",
                                      str(locked), "--checkpoint-dir", str(tmp_path / "ck")])
        assert result.exit_code == 1 and f"the warehouse directory {locked} is not writable" in result.output, \
            result.output


def test_a_directory_whose_nearest_existing_ancestor_is_not_writable_is_refused(tmp_path, monkeypatch):
    """The permission branch of ``paths.check_directory`` (CI runs as root, who may write
    anywhere: the access check is what the test replaces); other file systems are Spark's."""
    from sluice.pipeline import paths

    denied = {str(tmp_path / "ro")}
    real = os.access
    monkeypatch.setattr(paths.os, "access", lambda p, mode: p not in denied and real(p, mode))
    (tmp_path / "ro").mkdir()
    with pytest.raises(sluice.DatabaseError, match=r"^ORA-29283: invalid file operation: the warehouse directory "
                                                   r".*/ro is not writable$"):
        paths.check_directory(str(tmp_path / "ro"), "warehouse")
    with pytest.raises(sluice.DatabaseError, match=r"cannot make the checkpoint directory .*/ro/a/b: .*/ro is "
                                                   r"not writable$"):
        paths.check_directory(str(tmp_path / "ro" / "a" / "b"), "checkpoint")
    assert not (tmp_path / "ro" / "a").exists()
    paths.check_directory(str(tmp_path / "new" / "wh"), "warehouse")      # makeable: fine, and not made
    assert not (tmp_path / "new").exists()
    paths.check_directory("hdfs://nn:8020/wh", "warehouse")
    paths.check_directory("s3a://bucket/ck", "checkpoint")
    assert paths.local_path("file:///x/y") == "/x/y" and paths.local_path("file:/x") == "/x"
    assert paths.local_path("rel/wh") == "rel/wh" and paths.local_path("hdfs://nn/wh") is None


def test_an_empty_warehouse_reports_no_rows(tmp_path):
    """A warehouse a run has made but not written a file into yet: the reports read it as
    the columns they use, no rows (Spark cannot infer a schema from no files: ORA-00600)."""
    from sluice.pipeline.paths import has_parquet_files

    (tmp_path / "wh" / "_spark_metadata").mkdir(parents=True)
    assert not has_parquet_files(str(tmp_path / "wh"))
    (tmp_path / "wh" / "queue=Q" / "day=2026-11-29").mkdir(parents=True)
    (tmp_path / "wh" / "queue=Q" / "day=2026-11-29" / "part-0.snappy.parquet").write_bytes(b"")
    assert has_parquet_files(str(tmp_path / "wh")) and has_parquet_files("hdfs://nn/wh")


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


def test_a_transform_that_does_not_load_is_a_usage_error_before_the_store_or_spark(tmp_path, monkeypatch):
    """--transform naming a module that is not there (was ORA-00600 [ModuleNotFoundError]),
    a function the module lacks (ORA-00600 [AttributeError]) or a module that fails as it
    loads: a usage error naming it, before the store is opened or Spark starts."""
    from sluice.pipeline import runner

    def no_spark(*a, **k):
        raise AssertionError("Spark started")
    monkeypatch.setattr(runner, "spark_session", no_spark)
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "door16_broken.py").write_text("raise RuntimeError('no config file')\n")
    (tmp_path / "mods" / "door16_needs.py").write_text("import door16_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    for spec, text in [("R=nosuchmod:f", "no module named 'nosuchmod'"),
                       ("R=json.nope:f", "no module named 'json.nope'"),
                       ("R=json:nosuchfn", "module json has no function 'nosuchfn'"),
                       ("R=json:__name__", "module json has no function '__name__'"),
                       ("R=door16_broken:f", "importing door16_broken failed: RuntimeError: no config file"),
                       ("R=door16_needs:f", "importing door16_needs failed: No module named 'door16_not_installed'")]:
        result = CliRunner().invoke(main, ["--dsn", dsn, "pipeline", "run", "--queue", "SLUICE.Q", "--warehouse",
                                           str(tmp_path / "wh"), "--once", "--transform", spec])
        assert result.exit_code == 2 and f"--transform {spec!r}: {text}" in result.output, (spec, result.output)
        assert "ORA-00600" not in result.output and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mods"]      # no store, no warehouse


def test_a_transform_names_a_rule_of_the_connected_user_that_exists(tmp_path, monkeypatch):
    """--transform NAME=module:function: NAME was qualified with SLUICE whoever connected
    (the rule sets resolve in the connected user's schema, so a user's own rule never got
    its transformation), and a rule that does not exist was accepted -- its transformation
    silently never ran.  Now NAME resolves in the user's schema and an unknown rule is
    ORA-24147, an unknown rule set ORA-24141, before Spark starts."""
    from sluice.pipeline import runner

    def no_spark(*a, **k):
        raise AssertionError("Spark started")
    monkeypatch.setattr(runner, "spark_session", no_spark)
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    admin = sluice.connect(dsn)
    admin.cursor().execute('CREATE USER strmadmin IDENTIFIED BY "Pw-1"')
    admin.cursor().execute("GRANT DBA TO strmadmin")
    admin.close()
    conn = sluice.connect(dsn, user="strmadmin", password="Pw-1")
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    ec = "SYS.STREAMS$_EVALUATION_CONTEXT"
    conn.rule_adm.create_rule_set("pos", ec)
    conn.rule_adm.create_rule("r_hr", ":dml.get_object_owner() = 'HR'", ec)
    conn.rule_adm.add_rule("r_hr", "pos")
    conn.close()

    def run(rule):
        return CliRunner().invoke(main, ["--dsn", dsn, "--user", "strmadmin", "--password", "Pw-1", "pipeline",
                                         "run", "--queue", "STRMADMIN.STRM_Q", "--positive-rule-set", "pos",
                                         "--warehouse", str(tmp_path / "wh"), "--once", "--transform",
                                         f"{rule}=json:dumps"])
    for rule, owner in (("r_hrr", "STRMADMIN"), ("sluice.r_hr", "SLUICE")):
        result = run(rule)
        assert result.exit_code == 1 and f"ORA-24147: rule {owner}.{rule.split('.')[-1].upper()} does not exist" \
            in result.output, result.output
    for rule in ("r_hr", "strmadmin.R_HR"):   # found: the run goes on to start Spark
        assert "Spark started" in run(rule).output
    # a rule set that does not exist: ORA-24141 before Spark starts too (was after the JVM's ~10 s)
    for option in ("--positive-rule-set", "--negative-rule-set"):
        result = CliRunner().invoke(main, ["--dsn", dsn, "--user", "strmadmin", "--password", "Pw-1", "pipeline",
                                           "run", "--queue", "STRMADMIN.STRM_Q", option, "nope", "--warehouse",
                                           str(tmp_path / "wh"), "--once"])
        assert result.exit_code == 1 and "ORA-24141: rule set STRMADMIN.NOPE does not exist" in result.output, \
            result.output


def test_a_conf_key_given_again_takes_the_later_value(tmp_path, monkeypatch):
    """``--conf K=1 --conf K=2``: the later wins, as with spark-submit (it was refused as
    "--conf takes KEY=VALUE", a text that did not name the fault); an entry without ``=`` is
    refused by name, before the store's lease or Spark."""
    from sluice.pipeline import runner

    seen = {}

    def spark_session(master, dsn, conf=None, **kwargs):
        seen.update(conf or {})
        raise click.ClickException("stopped before Spark")
    monkeypatch.setattr(runner, "spark_session", spark_session)
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    with sluice.connect(dsn) as conn:
        conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    run = ["--dsn", dsn, "pipeline", "run", "--queue", "STRM_Q", "--consumer", "WH", "--warehouse",
           str(tmp_path / "wh"), "--checkpoint-dir", str(tmp_path / "cp"), "--once"]
    result = CliRunner().invoke(main, [*run, "--conf", "spark.ui.enabled=true", "--conf", "spark.ui.enabled=false",
                                       "--conf", "spark.x=a=b"])
    assert "stopped before Spark" in result.output, result.output
    assert seen == {"spark.ui.enabled": "false", "spark.x": "a=b"}
    seen.clear()
    result = CliRunner().invoke(main, [*run, "--conf", "spark.ui.enabled"])
    assert result.exit_code == 2 and "--conf takes KEY=VALUE, not 'spark.ui.enabled'" in result.output, result.output
    assert not seen
