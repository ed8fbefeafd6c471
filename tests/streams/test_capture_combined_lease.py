"""Combined capture and apply vs an apply run on Spark (sluice.streams.apply.readerlease):
``sluice pipeline run --apply A`` holds A's lease, and with it A's reader lease; a capture
that would hand its LCRs to A directly (seed 001 "Combined Capture and Apply Optimization")
then is not combined (OPTIMIZATION 0) and stages them in its own queue -- read there by the
pipeline at one database, carried into A's queue by the propagation job across two --
instead of applying them beside Spark.  Once the pipeline has let go, the capture's next start is combined again
(seed 001: a configuration that starts to qualify is used after a restart), and holds the
reader lease: a pipeline on A is then refused with ORA-26666 naming the capture, until the
capture stops.  The pipeline's lease is taken with the API the pipeline uses (no JVM).  Both
store backends; a lost lease session (PostgreSQL) makes the capture stage its next batch."""

from __future__ import annotations

import uuid

import pytest

import sluice
from sluice.pipeline.lease import ProcessLease
from sluice.streams.capture.combinedlocal import LocalCombined
from sluice.streams.capture.combinedremote import RemoteCombined
from tests.conftest import PG_BASE, drop_schema, pg_admin
from tests.streams.capturekit import dequeue_all, drop_env, env, make_env  # noqa: F401  (env: a fixture)
from tests.streams.propkit import Sites
from tests.streams.test_capture_combinedlocal import optimization, replica_rows, setup, staged
from tests.streams.test_capture_combinedremote import optimization as remote_optimization
from tests.streams.test_capture_combinedremote import propagate, queued, rows, topology


def spark(conn, dsn, apply):
    """The leases a ``sluice pipeline run --apply`` of ``apply`` takes (not yet taken)."""
    return ProcessLease(conn.context.store, dsn, f"SPARK_{apply}", ("APPLY", apply))


def ids(lcrs):
    return sorted(lcr.get_value("NEW", "ID").access_number() for lcr in lcrs)


def test_local_capture_stages_while_spark_runs_its_apply(env, tmp_path):
    s, conn, owner = env.src, env.conn, env.owner
    replica = setup(env, tmp_path)                  # APPLY_LOCAL ENABLED: qualifies for combined
    pipeline = spark(conn, env.dsn, "APPLY_LOCAL").acquire()
    try:
        cap = env.process()
        cap.start()
        assert cap.combined is None and optimization(conn) == [(0,)]
        env.sql(f"INSERT INTO {s}.orders VALUES (1, 'a')", f"INSERT INTO {s}.orders VALUES (2, 'b')")
        env.sql(f"INSERT INTO {s}.orders VALUES (3, 'c')")
        cap.catch_up()
        assert replica_rows(replica, owner) == []   # the capture applied nothing itself …
        assert staged(conn) == 3                    # … it staged them for the pipeline to read
        assert ids(dequeue_all(conn, "APPLY_LOCAL")) == [1, 2, 3]
        cap.stop()
    finally:
        pipeline.release()

    # the pipeline gone, the capture's next start is combined and holds the reader lease
    again = env.process()
    again.start()
    assert isinstance(again.combined, LocalCombined) and optimization(conn) == [(1,)]
    site = conn.context.store.global_name()
    with pytest.raises(sluice.DatabaseError,
                       match=f'ORA-26666.*apply process "APPLY_LOCAL": capture CAP@{site} hands it LCRs directly'):
        spark(conn, env.dsn, "APPLY_LOCAL").acquire()
    env.sql(f"INSERT INTO {s}.orders VALUES (4, 'd')")
    again.catch_up()
    assert staged(conn) == 0 and replica_rows(replica, owner) == [(4, "d")]
    again.stop()
    spark(conn, env.dsn, "APPLY_LOCAL").acquire().release()     # free once the capture stopped


def test_remote_capture_is_not_combined_while_spark_runs_its_apply(env, tmp_path):
    """Across two databases the capture is then not combined at all, as in Oracle: OPTIMIZATION
    0 in V$STREAMS_CAPTURE and V$PROPAGATION_SENDER, no PROXY_SID at the destination; it stages
    the LCRs in its own queue and the propagation carries them into the queue the pipeline
    reads, none applied by the capture."""
    s, owner, dbs1 = env.src, env.owner, env.conn
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs2, replica = topology(env, tmp_path, sites)
        dsn2 = sites.dsn_of("dbs2")
        pipeline = spark(dbs2, dsn2, "APPLY_DBS2").acquire()
        try:
            cap = env.process()
            cap.start()
            assert remote_optimization(dbs1) == ([(0,)], [(0, 0)]) and cap.combined is None
            assert dbs2.query("SELECT COUNT(*) FROM V$STREAMS_APPLY_READER WHERE PROXY_SID IS NOT NULL",
                              None)[1] == [(0,)]
            env.sql(f"INSERT INTO {s}.orders VALUES (1, 'a')", f"INSERT INTO {s}.orders VALUES (2, 'b')")
            cap.catch_up()
            assert rows(replica, owner) == []
            assert queued(dbs1, "STRM_QT") == 2 and queued(dbs2, "STREAMS_QUEUE_TABLE") == 0
            assert propagate(dbs1) == 2                  # the propagation job, not the capture
            assert remote_optimization(dbs1) == ([(0,)], [(0, 2)])
            assert queued(dbs1, "STRM_QT") == 0 and queued(dbs2, "STREAMS_QUEUE_TABLE") == 2
            assert ids(dequeue_all(dbs2, "APPLY_DBS2", queue="STREAMS_QUEUE")) == [1, 2]
            cap.stop()
        finally:
            pipeline.release()

        again = env.process()
        again.start()
        assert isinstance(again.combined, RemoteCombined) and remote_optimization(dbs1)[0] == [(1,)]
        with pytest.raises(sluice.DatabaseError, match='ORA-26666.*apply process "APPLY_DBS2": capture CAP@'):
            spark(dbs2, dsn2, "APPLY_DBS2").acquire()
        env.sql(f"INSERT INTO {s}.orders VALUES (3, 'c')")
        again.catch_up()
        assert rows(replica, owner) == [(3, "c")] and queued(dbs2, "STREAMS_QUEUE_TABLE") == 0
        again.stop()
        spark(dbs2, dsn2, "APPLY_DBS2").acquire().release()
    finally:
        sites.close()


@pytest.fixture
def pg_env():
    schema = "t_" + uuid.uuid4().hex[:12]
    pg_admin().close()
    e = make_env(f"{PG_BASE}?schema={schema}")
    yield e
    drop_env(e)
    drop_schema(schema)


def test_pg_capture_whose_reader_lease_session_is_lost_stages(pg_env, tmp_path):
    """PostgreSQL, where a lease lives in a session: that session ended, another engine may
    take the apply, so the capture stages its next batch and leaves the combined route."""
    env = pg_env
    s, conn, owner = env.src, env.conn, env.owner
    replica = setup(env, tmp_path)
    cap = env.process()
    cap.start()
    assert isinstance(cap.combined, LocalCombined)
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)",
                      (cap.combined.lease._leases._conn.info.backend_pid,))  # noqa: SLF001
    env.sql(f"INSERT INTO {s}.orders VALUES (1, 'a')")
    cap.catch_up()
    assert cap.combined is None and optimization(conn) == [(0,)]
    assert replica_rows(replica, owner) == [] and staged(conn) == 1
    pipeline = spark(conn, env.dsn, "APPLY_LOCAL").acquire()    # the apply is free for Spark
    pipeline.release()
