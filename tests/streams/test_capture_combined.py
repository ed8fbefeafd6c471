"""Combined capture and apply (seed 001 "Combined Capture and Apply Optimization";
issue 15 §1): a capture whose queue's single consumer is one propagation to a queue whose
single consumer is an apply process sends its LCRs straight to that queue — nothing is
staged in its own queue, the propagation job has nothing to move, OPTIMIZATION is 1 in
V$STREAMS_CAPTURE and V$PROPAGATION_SENDER, the apply reader's PROXY_SID names the
capture — exactly once across a crash between the
delivery and the capture's commit; when the topology stops qualifying (another consumer
subscribes) the capture stages again and the propagation carries on.  Both store backends."""

from __future__ import annotations


import sluice
from sluice.streams.apply import ApplyProcess
from sluice.streams.apply.compare import compare
from sluice.streams.apply.targetdsn import open_target
from sluice.streams.propagation.runner import PropagationRunner
from tests.conftest import PG_BASE
from tests.streams.capturekit import CONSUMER, crash_at_commit, env  # noqa: F401  (fixture)
from tests.streams.propkit import Sites


def optimization(conn):
    return (conn.query("SELECT OPTIMIZATION FROM V$STREAMS_CAPTURE WHERE CAPTURE_NAME = 'CAP'", None)[1],
            conn.query("SELECT OPTIMIZATION, TOTAL_MSGS FROM V$PROPAGATION_SENDER", None)[1])


def staged(conn):
    return conn.query("SELECT COUNT(*) FROM AQ$STRM_QT WHERE MSG_STATE = 'READY'", None)[1][0][0]


def test_combined_capture_and_apply(env, tmp_path):
    s, owner = env.src, env.owner
    env.sql(f"CREATE TABLE {s}.orders (id int PRIMARY KEY, customer text)")
    replica = f"sqlite:///{tmp_path / 'replica.db'}"
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs1, dbs2 = env.conn, sites.open("dbs2")
        dbs2.streams_adm.set_up_queue(queue_table="STREAMS_QUEUE_TABLE", queue_name="STREAMS_QUEUE")
        dbs2.apply_adm.create_apply(queue_name="STREAMS_QUEUE", apply_name="APPLY_DBS2",
                                    apply_database_link=replica, apply_captured=True)
        dbs2.apply_adm.set_schema_instantiation_scn(owner, env.pg.info.dbname.upper(), 0,
                                                    apply_database_link=replica)
        import sqlite3
        with sqlite3.connect(replica[len("sqlite:///"):]) as c:
            c.execute(f'CREATE TABLE "{owner}.ORDERS" (id int PRIMARY KEY, customer text)')
        # DBS1: the propagation is the capture queue's single consumer
        dbs1.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
        dbs1.cursor().execute(f"CREATE DATABASE LINK dbs2.net USING '{sites.dsn_of('dbs2')}'")
        dbs1.propagation_adm.create_propagation(propagation_name="DBS1_TO_DBS2", source_queue="STRM_Q",
                                                destination_queue="STREAMS_QUEUE",
                                                destination_dblink="dbs2.net")
        env.create_capture(rule_set_name=env.table_rule_set("CAP_RS", "orders"))
        dbs1.capture_adm.start_capture(capture_name="CAP")
        cap = env.process()
        cap.start()
        assert cap.combined is not None
        assert optimization(dbs1) == ([(1,)], [(1, 0)])
        apply = ApplyProcess.from_catalog(sluice.connect(sites.dsn_of("dbs2")), "APPLY_DBS2")
        env.procs.append(apply)

        for t in range(5):
            env.sql(*(f"INSERT INTO {s}.orders VALUES ({t * 10 + k}, 'c{t}')" for k in range(3)))
        env.sql(f"UPDATE {s}.orders SET customer = 'changed' WHERE id < 20")
        cap.catch_up()
        assert staged(dbs1) == 0                        # nothing staged at DBS1 …
        runner = PropagationRunner(dbs1)
        try:
            assert runner.run_once(force=True) == 0     # … nothing for the propagation job
        finally:
            runner.close()
        assert optimization(dbs1)[1] == [(1, 21)]       # 15 inserts + 6 updates sent
        assert apply.drain() == 21
        # the apply side (seed 001): its reader's PROXY_SID names the capture
        proxy = dbs2.query("SELECT PROXY_SID FROM V$STREAMS_APPLY_READER", None)[1]
        assert proxy == [(f"CAP@{dbs1.context.store.global_name()}",)]

        # a crash after the destination committed, before the capture's position did: the
        # restarted capture sends the batch again and the receiver keeps it once
        env.sql(f"INSERT INTO {s}.orders VALUES (100, 'once')")
        again = crash_at_commit(env, cap)
        assert again.combined is not None
        again.catch_up()
        assert apply.drain() == 1                        # delivered twice, received once

        # another consumer subscribes: the capture stages from its next batch on
        dbs1.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("OTHER"))
        env.sql(f"INSERT INTO {s}.orders VALUES (200, 'staged')")
        again.catch_up()
        assert again.combined is None and optimization(dbs1)[0] == [(0,)]
        assert dbs2.query("SELECT PROXY_SID FROM V$STREAMS_APPLY_READER", None)[1] == [(None,)]
        assert staged(dbs1) == 2                         # one record per consumer
        runner = PropagationRunner(dbs1)
        try:
            assert runner.run_once(force=True) == 1
        finally:
            runner.close()
        assert apply.drain() == 1
        assert dbs2.query("SELECT COUNT(*) FROM DBA_APPLY_ERROR", None)[1] == [(0,)]
        src, dst = open_target(PG_BASE, "", None, None), open_target(replica, "", None, None)
        try:
            result = compare(src, owner, "ORDERS", dst, owner, "ORDERS")
        finally:
            src.close()
            dst.close()
        assert result.consistent and result.source_rows == 17, result.differences[:5]
    finally:
        sites.close()
