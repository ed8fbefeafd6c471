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
    import sys

    import pyarrow.parquet as pq

    import sluice

    from . import drivers

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
    result = drivers.run(drivers.command(dsn, "--queue", "STRM_Q", "--consumer", "WH", "--name", "wh",
                                         "--warehouse", str(tmp_path / "wh"), "--checkpoint-dir", str(tmp_path / "ck"),
                                         "--once", "--master", "local[1]"),
                         tmp_path / "driver.log", drivers.env(PYSPARK_PYTHON=str(python)))
    assert result.proc.returncode == 0, result.tail()
    assert (tmp_path / "was-late").exists()
    assert "starting again from the checkpoint (restart 1 of 3)" in result.tail(100000), result.tail()
    table = pq.read_table(str(tmp_path / "wh")).to_pydict()
    assert len(table["msgid"]) == 100 and len(set(table["msgid"])) == 100


LOST = ("pyspark.errors.exceptions.captured.StreamingQueryException: [STREAM_FAILED] Query terminated with "
        "exception: An exception was raised by the Python Proxy. Return Message: Traceback ... "
        "sluice.errors.OperationalError: ORA-03113: end-of-file on communication channel")


def test_what_counts_as_a_lost_database():
    assert restart.database_was_lost(RuntimeError(LOST))
    for text in ("ORA-01033: ORACLE initialization or shutdown in progress", "ORA-12541: TNS:no listener: x",
                 "psycopg.OperationalError: consuming input failed: server closed the connection unexpectedly",
                 "FATAL:  terminating connection due to administrator command",
                 "FATAL:  the database system is starting up", "psycopg.OperationalError: the connection is closed",
                 "FATAL:  the database system is not yet accepting connections",
                 'connection failed: connection to server at "127.0.0.1", port 5432 failed: Connection refused'):
        assert restart.database_was_lost(text), text
    for text in (None, "ORA-00942: table or view does not exist", "ORA-26714: user error", "ORA-031130",
                 "ORA-12514: TNS:listener does not currently know of service requested", LATE):
        assert not restart.database_was_lost(text), text


def test_a_lost_database_restarts_after_a_pause_that_doubles_and_ends_the_run_after_16_in_a_row():
    paused: list[float] = []
    said: list[str] = []
    r = restart.Restarts(said=said.append, pause=paused.append)
    assert all(r.again(LOST) for _ in range(restart.LOST_IN_A_ROW - 1))
    assert not r.again(LOST)                                   # the 16th in a row ends the run
    assert paused == [1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60, 60, 60, 60, 60]
    assert "ORA-03113" in said[0] and "in 1 s" in said[0] and "failure 1 in a row of at most 16" in said[0]
    r.progressed()                                             # a micro-batch completed: from none again
    assert r.again(LOST) and paused[-1] == 1


def test_lost_databases_do_not_use_up_the_late_workers_restarts(monkeypatch):
    monkeypatch.setattr(restart, "PAUSE_FIRST", 0.0)
    start, calls = starts(LOST, LOST, LATE, LOST, LATE, LATE, None)
    assert restart.to_the_end(start, timeout=5).exception() is None and len(calls) == 7


def test_a_stop_during_the_pause_ends_the_run():
    r = restart.Restarts(pause=lambda _s: True)                # Event.wait: True once the stop is asked
    assert not r.again(LOST)


def test_a_start_that_raises_for_a_lost_database_is_tried_again():
    start, calls = starts(RuntimeError(LOST), None)
    r = restart.Restarts(pause=lambda _s: None)
    assert r.launch(start).exception() is None and len(calls) == 2


def test_an_apply_whose_target_session_is_ended_goes_on_from_the_checkpoint(spark, tmp_path):
    """The real thing: the Spark apply sink's target session is ended by the server in the
    middle of a micro-batch -- a trigger on the target table terminates its own backend
    the first time it sees row 25, as an administrator's pg_terminate_backend or a server
    restart would.  The query dies with ORA-03113; the run starts it again from its
    checkpoint after its pause, and every source transaction is applied once."""
    import io
    import uuid

    import sluice
    from sluice import RowLCR
    from sluice.pipeline.runner import PipelineRun
    from sluice.pipeline.source import register
    from sluice.pipeline.stages import PipelineSpec
    from tests.conftest import PG_BASE, drop_schema, pg_admin

    schema = "rs_" + uuid.uuid4().hex[:10]
    link = f"{PG_BASE}?schema={schema}"
    with pg_admin() as c:
        c.execute(f"CREATE SCHEMA {schema}")
        c.execute(f"CREATE TABLE {schema}.t (id bigint PRIMARY KEY, n integer)")
        c.execute(f"CREATE SEQUENCE {schema}.seen")   # not rolled back with the transaction it ends
        c.execute(f"""CREATE FUNCTION {schema}.end_once() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.id = 25 AND nextval('{schema}.seen') = 1 THEN
                PERFORM pg_terminate_backend(pg_backend_pid());
              END IF;
              RETURN NEW;
            END $$""")
        c.execute(f"CREATE TRIGGER end_once BEFORE INSERT ON {schema}.t FOR EACH ROW EXECUTE FUNCTION "
                  f"{schema}.end_once()")
    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    try:
        conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
        conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="APR", apply_database_link=link,
                                    apply_captured=True)
        conn.apply_adm.set_schema_instantiation_scn(schema.upper(), "DBS1.NET", 0, apply_database_link=link)
        q = conn.queue("STRM_Q")
        for k in range(40):
            q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", schema.upper(), "T", None, f"{k}.0.1",
                                                       k * 10, None, {"ID": k, "N": k}, commit_scn=k * 10 + 9)))
            conn.commit()
        register(spark)
        out = io.StringIO()
        spec = PipelineSpec("apr", dsn, "STRM_Q", "APR", None, max_messages_per_batch=10)
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                          connect=sluice.connect, apply_name="APR", trigger={"availableNow": True}, out=out)
        run.start()
        run.wait(timeout=300)
        assert "a database was lost (ORA-03113)" in out.getvalue(), out.getvalue()
        assert "failure 1 in a row" in out.getvalue() and "failure 2" not in out.getvalue()
        assert run.query.exception() is None
        with pg_admin() as c:
            assert c.execute(f"SELECT id, n FROM {schema}.t ORDER BY id").fetchall() == [(k, k) for k in range(40)]
            assert c.execute(f"SELECT last_value FROM {schema}.seen").fetchone()[0] >= 2   # 25 came again
        assert conn.query("SELECT COUNT(*) FROM SLUICE_APPLY_ERROR", None)[1][0][0] == 0
    finally:
        conn.close()
        drop_schema(schema)


def test_an_apply_goes_on_across_a_restart_of_its_store(spark, tmp_path):
    """The store's server (a private one: tests/store/pgserver.py) goes down while a Spark
    apply reads its queue in micro-batches, and comes back once the run has met it
    (wherever: the source's offsets or read, the sink's store session, the
    acknowledgement): the run starts the query again from its checkpoint and every
    transaction reaches the SQLite target once.  (A restart alone can fall between two
    batches' store sessions and go unseen: CI 08:14.)"""
    import io
    import sqlite3
    import threading
    import time

    import sluice
    from sluice import RowLCR
    from sluice.pipeline.runner import PipelineRun
    from sluice.pipeline.source import register
    from sluice.pipeline.stages import PipelineSpec
    from tests.store.pgserver import PrivateServer

    target = str(tmp_path / "target.db")
    with sqlite3.connect(target) as t:
        t.execute('CREATE TABLE "TGT.T" (id integer PRIMARY KEY, n integer)')
    link = f"sqlite:///{target}"

    def applied() -> int:
        with sqlite3.connect(target) as t:
            return t.execute('SELECT COUNT(*) FROM "TGT.T"').fetchone()[0]

    with PrivateServer() as server:
        dsn = server.dsn + "?schema=site"
        conn = sluice.connect(dsn)
        conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
        conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="APR", apply_database_link=link,
                                    apply_captured=True)
        conn.apply_adm.set_schema_instantiation_scn("TGT", "DBS1.NET", 0, apply_database_link=link)
        q = conn.queue("STRM_Q")
        for k in range(40):
            q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", "T", None, f"{k}.0.1", k * 10,
                                                       None, {"ID": k, "N": k}, commit_scn=k * 10 + 9)))
            conn.commit()
        conn.close()
        conn = sluice.connect(dsn)
        register(spark)
        out = io.StringIO()
        spec = PipelineSpec("apr", dsn, "STRM_Q", "APR", None, max_messages_per_batch=10)
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                          connect=sluice.connect, apply_name="APR", trigger={"availableNow": True}, out=out)
        restarted: list[float] = []

        def restart_once() -> None:   # once the run is under way, in the middle of its batches
            end = time.monotonic() + 120
            while applied() < 10 and time.monotonic() < end:
                time.sleep(0.02)
            server.shut_down()
            restarted.append(applied())
            while "a database was lost" not in out.getvalue() and time.monotonic() < end:
                time.sleep(0.05)
            server.start_again()
        restarter = threading.Thread(target=restart_once, daemon=True)
        restarter.start()
        try:
            run.start()
            run.wait(timeout=300)
        finally:
            restarter.join(120)
            conn.close()
        assert restarted and restarted[0] < 40, restarted       # the server restarted mid-run
        assert "a database was lost" in out.getvalue(), out.getvalue()
        assert run.query.exception() is None
        with sqlite3.connect(target) as t:
            assert t.execute('SELECT id, n FROM "TGT.T" ORDER BY id').fetchall() == [(k, k) for k in range(40)]
        with sluice.connect(dsn) as check:
            assert check.query("SELECT COUNT(*) FROM SLUICE_APPLY_ERROR", None)[1][0][0] == 0


# what `sluice pipeline run --transform R_HR=probe_tx:boom` died of (shortened: the Java
# stack and the logical plan run to 20 kB)
TRANSFORM_FAILED = """[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/work/src/sluice/pipeline/transform.py", line 148, in run
    out = transformed(fn, row[rule_column], rows.lcr_from_row(plain_record(row)))
sluice.errors.DataError: ORA-25229: error on transformation of message by SLUICE.R_HR: probe_tx:boom failed: ValueError: odd id
 SQLSTATE: 38000
=== Streaming Query ===
Identifier: [id = ad2c7c24-6977-463d-95cb-f5de6a961d3e, runId = d75f6fea-5a33-46fb-89e7-159a25842814]
Current Committed Offsets: {}
Logical Plan:
~WriteToMicroBatchDataSourceV1 FileSink[file:/tmp/wh], ad2c7c24, Append
+- ~MapInPandas run(queue#0, seq#1L, msgid#2, corrid#3, priority#4, state#5)"""


def test_what_a_run_died_of_is_one_sluice_error_line():
    """A pipeline whose transformation failed ended `sluice pipeline run` with "error:
    ORA-00600: internal error code, arguments: [StreamingQueryException: …20 kB…]" and
    `pipeline status` showed the Java stack and the plan in LAST_ERROR.  The run now ends
    with the sluice error a task raised (one line), or ORA-00600 naming the Python
    exception, and that is what LAST_ERROR records."""
    import sluice

    e = restart.run_error(RuntimeError(TRANSFORM_FAILED))
    assert isinstance(e, sluice.DataError) and e.code == 25229 and "\n" not in str(e)
    assert str(e) == ("ORA-25229: error on transformation of message by SLUICE.R_HR: "
                      "probe_tx:boom failed: ValueError: odd id")
    assert restart.run_error(LOST).code == 3113
    plain = TRANSFORM_FAILED.replace("sluice.errors.DataError: ORA-25229: error on transformation of message "
                                     "by SLUICE.R_HR: probe_tx:boom failed: ", "")
    e = restart.run_error(plain)
    assert e.code == 600 and str(e) == "ORA-00600: internal error code, arguments: [ValueError: odd id]"
    e = restart.run_error("[STREAM_FAILED] Query terminated\nwith a Java error only")
    assert str(e) == "ORA-00600: internal error code, arguments: [[STREAM_FAILED] Query terminated]"
    assert restart.run_error("sluice.errors.NotSupportedError: SLU-00001: not supported: x").full_code == "SLU-00001"


def test_a_sluice_error_a_run_ended_with_is_recorded_as_itself():
    """A run that ended with a sluice error of its own (the lease session lost: ORA-03113;
    its process taken meanwhile: ORA-26666) recorded LAST_ERROR as "ORA-00600: internal
    error code, arguments: [ORA-03113: …]".  A sluice error -- or the one line it prints
    as -- is that error; only what is no sluice error becomes ORA-00600."""
    import sluice
    from sluice.errors import ora

    lost = ora(3113, "pipeline P: the session holding its leases was lost")
    assert restart.run_error(lost) is lost
    for e in (lost, ora(26666, 'apply process "A1"', ": it runs on Spark as pipeline OTHER")):
        again = restart.run_error(str(e))
        assert (type(again), again.full_code, str(again)) == (type(e), e.full_code, str(e))
    assert isinstance(restart.run_error(str(lost)), sluice.OperationalError)
    assert restart.run_error(ValueError("ORA-03113 in a user's words")).code == 600
