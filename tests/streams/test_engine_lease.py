"""One engine at a time per Streams process (DESIGN §7: "each exactly once across hosts
(leases)"; "the same catalog definition runs in the Python host or on Spark"): a pipeline
takes the host's lease of the process it runs (sluice.pipeline.lease) before its query
starts, a host skips a process whose lease a pipeline holds, and the one that comes second
is refused with ORA-26666 naming who runs it.  Below Spark: the refusal comes before the
JVM starts (the Spark run's side: tests/pipeline/test_spark_pipeline.py)."""

from __future__ import annotations

import functools
import time

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.pipeline import runner
from sluice.pipeline.lease import SPARK_STATE, ProcessLease, propagation_process
from sluice.streams.host import Host
from sluice.streams.hosting import kinds
from sluice.streams.propagation import spec as propagation_specs
from sluice.streams.propagation.runner import hosted_schedules

from .hostkit import TestKind, wait_for
from .propkit import multi_queue, sites  # noqa: F401  (sites: a fixture)


def hosted(conn, name):
    return conn.query("SELECT HOST_ID, STATE FROM V$STREAMS_HOSTED WHERE PROCESS_NAME = :1", [name])[1]


def test_a_pipeline_is_refused_a_process_a_host_runs(dsn, tmp_path, monkeypatch):
    """``sluice pipeline run --apply A1`` while a host runs A1: ORA-26666 naming the host,
    before Spark starts (nothing of the run is recorded)."""
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="A1", apply_database_link=f"sqlite:///{tmp_path}/t.db",
                                apply_captured=True)
    tk = TestKind("APPLY")            # the host's run of A1: the test's own, no target needed
    tk.enable("A1")

    def no_spark(*args, **kwargs):
        raise AssertionError("the JVM was started")
    monkeypatch.setattr(runner, "spark_session", no_spark)
    with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind]) as host:
        # running: launched, and its thread inside the process (past its connect: tk.most)
        wait_for(lambda: host.running() == [("APPLY", "A1")] and tk.most, 10)
        result = CliRunner().invoke(main, ["--dsn", dsn, "pipeline", "run", "--apply", "A1", "--once",
                                           "--checkpoint-dir", str(tmp_path / "ck")])
        assert result.exit_code != 0
        assert "ORA-26666" in result.output and "process host" in result.output and str(host.pid) in result.output
        assert not (tmp_path / "ck").exists()
        with pytest.raises(sluice.DatabaseError, match=f"ORA-26666.*apply process \"A1\".*{host.host_id[:8]}"):
            ProcessLease(conn.context.store, dsn, "OTHER", ("APPLY", "A1")).acquire()
        assert tk.most == {"A1": 1} and hosted(conn, "A1") == [(host.host_id, "RUNNING")]
    assert conn.query("SELECT COUNT(*) FROM SLUICE_PIPELINE_PROGRESS", None)[1] == [(0,)]
    conn.close()


def test_a_host_skips_a_process_a_pipeline_runs_and_takes_it_after(dsn):
    """While a pipeline holds A1's lease the host runs A2 and not A1 (V$STREAMS_HOSTED shows
    A1 on Spark); once the pipeline lets it go, the host takes A1 over.  A pipeline's row
    for a process the catalog does not enable (A3: a Spark-run apply is not START_APPLY'd)
    is not tidied away by the host while the pipeline runs."""
    conn = sluice.connect(dsn)
    lease = ProcessLease(conn.context.store, dsn, "A1", ("APPLY", "A1")).acquire()
    disabled = ProcessLease(conn.context.store, dsn, "A3", ("APPLY", "A3")).acquire()
    tk = TestKind("APPLY")
    tk.enable("A1", "A2")
    try:
        with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], takeover=0.1) as host:
            # A2 runs: the pass that launched it found A1's lease held (sorted: A1 first)
            wait_for(lambda: host.running() == [("APPLY", "A2")], 10)
            assert hosted(conn, "A1") == [("pipeline A1", SPARK_STATE)]
            assert "A1" not in tk.most
            lease.release()
            assert hosted(conn, "A1") == []
            wait_for(lambda: host.running() == [("APPLY", "A1"), ("APPLY", "A2")], 10)
            assert hosted(conn, "A1") == [(host.host_id, "RUNNING")]
            assert hosted(conn, "A3") == [("pipeline A3", SPARK_STATE)]   # passes before that one tidied
        assert tk.most == {"A1": 1, "A2": 1}
    finally:
        lease.release()
        disabled.release()
        conn.close()


def test_two_pipelines_on_one_process_or_one_name_exclude_each_other(dsn):
    """Two runs of one apply (other pipeline names), or of one pipeline name (one
    low-watermark): the second is refused naming the first; free again once it ends."""
    conn = sluice.connect(dsn)
    store = conn.context.store
    first = ProcessLease(store, dsn, "P1", ("APPLY", "A1")).acquire()
    try:
        with pytest.raises(sluice.DatabaseError, match='ORA-26666.*"A1": it runs on Spark as pipeline P1'):
            ProcessLease(store, dsn, "P2", ("APPLY", "A1")).acquire()
        with pytest.raises(sluice.DatabaseError, match='ORA-26666.*pipeline "P1".*another sluice pipeline run'):
            ProcessLease(store, dsn, "P1", None).acquire()
        assert ProcessLease(store, dsn, "P3", ("APPLY", "A3")).acquire().alive()   # others are free
        assert hosted(conn, "A1") == [("pipeline P1", SPARK_STATE)]
        first.release()
        second = ProcessLease(store, dsn, "P2", ("APPLY", "A1")).acquire()
        assert hosted(conn, "A1") == [("pipeline P2", SPARK_STATE)]
        second.release()
    finally:
        first.release()
        conn.close()


def test_a_propagation_run_on_spark_takes_its_schedules_lease(sites):
    """``--propagation P`` takes the lease of the schedule the host runs for P (queue-to-dblink
    and queue-to-queue alike), so a host running that schedule refuses the pipeline."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    multi_queue(b, "DST")
    multi_queue(b, "DST2")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    a.propagation_adm.create_propagation("q", "src", "dst2", "dbs2", queue_to_queue=True)
    store = a.context.store
    names = {propagation_process(propagation_specs.load(store, p)) for p in ("P", "Q")}
    assert names == {("PROPAGATION", s) for s in hosted_schedules(a)} and len(names) == 2
    kind = [k for k in kinds() if k.name == "PROPAGATION"]
    with Host(functools.partial(sluice.connect, sites.dsn_of("dbs1")), kinds=kind) as host:
        wait_for(lambda: len(host.running()) == 2, 10)
        for p in ("P", "Q"):
            with pytest.raises(sluice.DatabaseError, match="ORA-26666.*propagation schedule.*process host"):
                ProcessLease(store, sites.dsn_of("dbs1"), p, propagation_process(propagation_specs.load(store, p))
                             ).acquire()


class Query:
    """A stand-in for the Spark query of a run (no JVM): running until stopped, or ended
    well at once (``running=False``)."""

    def __init__(self, log: list, running: bool = True) -> None:
        self.log, self.isActive, self.recentProgress = log, running, []
        log.append(("started", self))

    def stop(self) -> None:
        self.isActive = False
        self.log.append(("stopped", self))

    def awaitTermination(self, timeout=None):
        if self.isActive:
            time.sleep(min(timeout or 0.05, 0.05))
        return not self.isActive

    def exception(self):
        return None


@pytest.mark.parametrize("taken_meanwhile,lost_for_good", [(False, False), (True, False), (False, True)])
def test_pg_pipeline_whose_lease_session_is_lost_stops_its_query_first(tmp_path, monkeypatch, taken_meanwhile,
                                                                       lost_for_good):
    """PostgreSQL (where a lease can be lost while its holder lives): the run's lease
    session ended, the run stops its query before it takes the lease again, as a host stops
    its processes -- then goes on, or, when another engine took the process meanwhile, ends
    with ORA-26666 (never two engines at once), or, lost more often in a row than it may
    be, ends with ORA-03113.  `pipeline status` shows that error as LAST_ERROR (it showed
    ORA-00600 around ORA-03113, and nothing at all for ORA-26666)."""
    import uuid

    from sluice.pipeline import restart
    from sluice.pipeline.runner import PipelineRun
    from sluice.pipeline.stages import PipelineSpec
    from tests.conftest import PG_BASE, drop_schema, pg_admin

    monkeypatch.setattr(restart, "PAUSE_FIRST", 0.0)
    dsn = f"{PG_BASE}?schema=t_{uuid.uuid4().hex[:12]}"
    conn = sluice.connect(dsn)
    other = None
    try:
        conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
        conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="A1",
                                    apply_database_link=f"sqlite:///{tmp_path}/t.db", apply_captured=True)
        run = PipelineRun(None, PipelineSpec("A1", dsn, "STRM_Q", "A1", None), conn, conn.context.store, "apply",
                          str(tmp_path / "ck"), connect=sluice.connect, apply_name="A1")
        log: list = []

        def start():          # the run's own start, without Spark: the lease, then the query
            run.lease.acquire()
            return Query(log, running=False)
        monkeypatch.setattr(run, "_start", start)
        recorded: list = []
        monkeypatch.setattr(runner.queueio, "record_figures", lambda *a, **values: recorded.append(values))
        if lost_for_good:
            monkeypatch.setattr(restart, "LOST_IN_A_ROW", 1)
        run.lease.acquire()
        run.query = first = Query(log)
        with pg_admin() as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (run.lease._leases._conn.info.backend_pid,))  # noqa: SLF001
        if taken_meanwhile:
            other = ProcessLease(conn.context.store, dsn, "OTHER", ("APPLY", "A1"))

            def taken():
                """the server ended the run's lease session: another engine takes A1"""
                try:
                    return other.acquire() is other
                except sluice.DatabaseError:
                    return False
            wait_for(taken, 10, step=0.1)
            with pytest.raises(sluice.DatabaseError, match="ORA-26666.*A1.*runs on Spark as pipeline OTHER"):
                run.wait(timeout=60)   # (ends well before: the timeout only bounds a failure)
            assert log == [("started", first), ("stopped", first)]
            assert recorded[-1]["state"] == "FAILED"
            assert recorded[-1]["last_error"].startswith("ORA-26666: cannot alter STREAMS process")
        elif lost_for_good:
            with pytest.raises(sluice.OperationalError, match="ORA-03113"):
                run.wait(timeout=60)   # (ends well before: the timeout only bounds a failure)
            assert [e for e, _ in log] == ["started", "stopped", "stopped"]   # not started again
            assert recorded == [{"state": "FAILED", "last_error": "ORA-03113: end-of-file on communication channel: "
                                 "pipeline A1: the session holding its leases was lost"}]
        else:
            run.wait(timeout=60)   # (ends well before: the timeout only bounds a failure)
            assert [e for e, _ in log] == ["started", "stopped", "started", "stopped"] and log[1][1] is first
            assert not run.lease.alive()              # let go at the end of the run
        assert not first.isActive
    finally:
        if other is not None:
            other.release()
        conn.close()
        drop_schema(dsn.rpartition("schema=")[2])
