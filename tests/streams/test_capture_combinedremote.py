"""Combined capture and apply across two databases, nothing staged (seed 001 "Combined
Capture and Apply Optimization"; issue 15 §2): the capture at DBS1 runs DBS2's apply process
(ENABLED, the destination queue's single consumer) on the LCRs its propagation lets through —
nothing is enqueued at either site —, V$STREAMS_CAPTURE / V$PROPAGATION_SENDER show
OPTIMIZATION 1 and the LCRs sent, DBS2's V$STREAMS_APPLY_READER.PROXY_SID names the capture,
DBA_APPLY_PROGRESS and DBA_APPLY_ERROR are DBS2's; exactly once across a crash between the
target's commits and DBS2's store commit, and between that and the capture's commit (no row
lost, none applied twice, no error row twice); STOP_APPLY at DBS2 makes the capture stage.
Both store backends, the target an SQLite file.  (The staged route, into the destination
queue: test_capture_combined.py.)"""

from __future__ import annotations

import sqlite3

import sluice
from sluice.streams.apply import ApplyProcess
from sluice.streams.capture.combined import Combined
from sluice.streams.capture.combinedremote import RemoteCombined
from sluice.streams.propagation.runner import PropagationRunner
from tests.streams.capturekit import CONSUMER, crash_at_commit, env  # noqa: F401  (fixture)
from tests.streams.propkit import Sites


def optimization(conn):
    return (conn.query("SELECT OPTIMIZATION FROM V$STREAMS_CAPTURE WHERE CAPTURE_NAME = 'CAP'", None)[1],
            conn.query("SELECT OPTIMIZATION, TOTAL_MSGS FROM V$PROPAGATION_SENDER", None)[1])


def queued(conn, table):
    return conn.query(f"SELECT COUNT(*) FROM AQ${table}", None)[1][0][0]


def view(conn, sql):
    cols, rows = conn.query(sql, None)
    return [dict(zip(cols, r)) for r in rows]


def topology(env, tmp_path, sites, in_the_way=(), replica_dir="", **apply_kw):
    """orders at the source and in an SQLite replica (holding rows ``in_the_way``: the source's
    inserts of those keys fail there); DBS2's apply (started) the single
    consumer of its queue; DBS1's capture queue feeding only the propagation to it; the
    capture started (not yet running).  Returns (dbs2, replica path)."""
    s, owner, dbs1 = env.src, env.owner, env.conn
    env.sql(f"CREATE TABLE {s}.orders (id int PRIMARY KEY, customer text)")
    (tmp_path / replica_dir).mkdir(exist_ok=True)
    replica = tmp_path / replica_dir / "replica.db"
    with sqlite3.connect(replica) as c:
        c.execute(f'CREATE TABLE "{owner}.ORDERS" (id int PRIMARY KEY, customer text)')
        c.executemany(f'INSERT INTO "{owner}.ORDERS" VALUES (?, \'in the way\')', [(i,) for i in in_the_way])
    dbs2 = sites.open("dbs2")
    dbs2.streams_adm.set_up_queue(queue_table="STREAMS_QUEUE_TABLE", queue_name="STREAMS_QUEUE")
    dbs2.apply_adm.create_apply(queue_name="STREAMS_QUEUE", apply_name="APPLY_DBS2",
                                apply_database_link=f"sqlite:///{replica}", apply_captured=True)
    dbs2.apply_adm.set_schema_instantiation_scn(owner, env.pg.info.dbname.upper(), 0,
                                                apply_database_link=f"sqlite:///{replica}")
    for name, value in apply_kw.items():
        dbs2.apply_adm.set_parameter("APPLY_DBS2", name, value)
    dbs2.apply_adm.start_apply(apply_name="APPLY_DBS2")
    dbs1.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
    dbs1.cursor().execute(f"CREATE DATABASE LINK dbs2.net USING '{sites.dsn_of('dbs2')}'")
    dbs1.propagation_adm.create_propagation(propagation_name="DBS1_TO_DBS2", source_queue="STRM_Q",
                                            destination_queue="STREAMS_QUEUE", destination_dblink="dbs2.net")
    env.create_capture(rule_set_name=env.table_rule_set("CAP_RS", "orders"))
    dbs1.capture_adm.start_capture(capture_name="CAP")
    return dbs2, replica


def rows(replica, owner):
    with sqlite3.connect(replica) as c:
        return sorted(c.execute(f'SELECT id, customer FROM "{owner}.ORDERS"').fetchall())


def propagate(dbs1):
    runner = PropagationRunner(dbs1)
    try:
        return runner.run_once(force=True)
    finally:
        runner.close()


def test_capture_runs_the_destination_apply(env, tmp_path):
    s, owner, dbs1 = env.src, env.owner, env.conn
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs2, replica = topology(env, tmp_path, sites)
        cap = env.process()
        cap.start()
        assert isinstance(cap.combined, RemoteCombined)
        assert optimization(dbs1) == ([(1,)], [(1, 0)])
        for t in range(5):
            env.sql(*(f"INSERT INTO {s}.orders VALUES ({t * 10 + k}, 'c{t}')" for k in range(3)))
        env.sql(f"UPDATE {s}.orders SET customer = 'changed' WHERE id < 20")
        cap.catch_up()
        # nothing staged at either site, nothing for the propagation job; the replica has it all
        assert queued(dbs1, "STRM_QT") == 0 and queued(dbs2, "STREAMS_QUEUE_TABLE") == 0
        assert propagate(dbs1) == 0
        assert len(rows(replica, owner)) == 15 and rows(replica, owner)[0] == (0, "changed")
        sender = view(dbs1, "SELECT OPTIMIZATION, TOTAL_MSGS, TOTAL_BYTES FROM V$PROPAGATION_SENDER")
        assert sender[0]["OPTIMIZATION"] == 1 and sender[0]["TOTAL_MSGS"] == 21 and sender[0]["TOTAL_BYTES"] == 0
        reader = view(dbs2, "SELECT APPLY_NAME, PROXY_SID, TOTAL_MESSAGES_DEQUEUED FROM V$STREAMS_APPLY_READER")
        assert reader == [{"APPLY_NAME": "APPLY_DBS2", "PROXY_SID": f"CAP@{dbs1.context.store.global_name()}",
                           "TOTAL_MESSAGES_DEQUEUED": 21}]
        # (on PostgreSQL the capture's position may be past the last LCR: DBS2's store is a
        # schema of the source database, its transactions are read and left out)
        progress = view(dbs2, "SELECT APPLY_NAME, APPLIED_MESSAGE_NUMBER AS N FROM DBA_APPLY_PROGRESS")
        assert len(progress) == 1 and progress[0]["APPLY_NAME"] == "APPLY_DBS2"
        assert 0 < progress[0]["N"] <= cap.captured_scn
        apply = ApplyProcess.from_catalog(sluice.connect(sites.dsn_of("dbs2")), "APPLY_DBS2")
        env.procs.append(apply)
        assert apply.drain() == 0                   # the apply process (a host's) has nothing to do

        # STOP_APPLY at DBS2: the capture sees it before its next batch and stages it
        dbs2.apply_adm.stop_apply(apply_name="APPLY_DBS2")
        env.sql(f"INSERT INTO {s}.orders VALUES (200, 'staged')")
        cap.catch_up()
        assert cap.combined is None and optimization(dbs1)[0] == [(0,)]
        assert view(dbs2, "SELECT PROXY_SID FROM V$STREAMS_APPLY_READER") == [{"PROXY_SID": None}]
        assert queued(dbs1, "STRM_QT") == 1
        assert propagate(dbs1) == 1
        dbs2.apply_adm.start_apply(apply_name="APPLY_DBS2")
        assert apply.drain() == 1
        assert (200, "staged") in rows(replica, owner) and len(rows(replica, owner)) == 16
    finally:
        sites.close()


class Crash(Exception):
    """The capture's process dies here (not a DatabaseError: nothing falls back)."""


def restarted(env, cap):
    """``cap``'s process died: its sessions' uncommitted work is gone; a new one starts."""
    cap.conn.rollback()
    cap.combined.dest_conn.rollback()
    cap.stop()
    env.conn.capture_adm.start_capture(capture_name=cap.name)
    again = env.process(cap.name)
    again.start()
    assert isinstance(again.combined, RemoteCombined)
    return again


def test_crash_between_the_commits_exactly_once(env, tmp_path):
    """DISABLE_ON_ERROR N: a conflicting row sends its transaction to DBS2's error queue and
    the rest is applied.  Killed after the target's commits, before DBS2's store commit (the
    error row lost with it), and after DBS2's store commit, before the capture's: the
    replayed batch leaves every row applied once and one error row per failed transaction."""
    s, owner, dbs1 = env.src, env.owner, env.conn
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs2, replica = topology(env, tmp_path, sites, in_the_way=(2, 6), disable_on_error="N")
        cap = env.process()
        cap.start()
        assert isinstance(cap.combined, RemoteCombined)

        # 1 → 2: the target committed, DBS2's store did not
        for i in (1, 2, 3):
            env.sql(f"INSERT INTO {s}.orders VALUES ({i}, 'first')")
        env.sql(f"UPDATE {s}.orders SET customer = 'again' WHERE id = 1")
        dest = cap.combined.dest_conn

        def dies():
            raise Crash()
        dest.commit = dies
        try:
            cap.catch_up()
        except Crash:
            pass
        else:
            raise AssertionError("DBS2's store commit was not reached")
        first = [(1, "again"), (2, "in the way"), (3, "first"), (6, "in the way")]
        assert rows(replica, owner) == first
        del dest.commit
        assert view(dbs2, "SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR") == [{"N": 0}]   # not committed
        again = restarted(env, cap)
        again.catch_up()
        assert rows(replica, owner) == first
        errors = view(dbs2, "SELECT ERROR_NUMBER, MESSAGE_COUNT FROM DBA_APPLY_ERROR")
        assert errors == [{"ERROR_NUMBER": 1, "MESSAGE_COUNT": 1}]     # transaction 2, once: no ORA-00001 for 1 or 3

        before = view(dbs2, "SELECT APPLIED_MESSAGE_NUMBER AS N FROM DBA_APPLY_PROGRESS")[0]["N"]

        # 2 → 3: DBS2 committed (an error row among it), the capture's position did not
        for i in (5, 6, 7):
            env.sql(f"INSERT INTO {s}.orders VALUES ({i}, 'second')")
        env.sql(f"DELETE FROM {s}.orders WHERE id = 3")
        third = crash_at_commit(env, again)
        assert isinstance(third.combined, RemoteCombined)
        assert view(dbs2, "SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR") == [{"N": 2}]
        third.catch_up()
        assert view(dbs2, "SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR") == [{"N": 2}]   # not a third
        assert rows(replica, owner) == [(1, "again"), (2, "in the way"), (5, "second"), (6, "in the way"),
                                        (7, "second")]
        progress = view(dbs2, "SELECT APPLIED_MESSAGE_NUMBER AS N FROM DBA_APPLY_PROGRESS")
        assert len(progress) == 1 and before < progress[0]["N"] <= third.captured_scn
        assert queued(dbs1, "STRM_QT") == 0 and queued(dbs2, "STREAMS_QUEUE_TABLE") == 0
    finally:
        sites.close()


def test_aborting_apply_gets_the_rest_of_the_batch_staged(env, tmp_path):
    """disable_on_error Y (the default): the failing transaction goes to DBS2's error queue,
    the apply is ABORTED there, the batch's later transactions are staged at DBS1 and the
    capture stages from then on; the propagation carries them and the apply, started again
    after EXECUTE_ERROR, converges the replica."""
    s, owner, dbs1 = env.src, env.owner, env.conn
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs2, replica = topology(env, tmp_path, sites, in_the_way=(2,))
        cap = env.process()
        cap.start()
        assert isinstance(cap.combined, RemoteCombined)
        for keys in ((1,), (2,), (3, 4)):                                # 2: ORA-00001 at the replica
            env.sql(*(f"INSERT INTO {s}.orders VALUES ({i}, '{'abcd'[i - 1]}')" for i in keys))
        cap.catch_up()
        status = view(dbs2, "SELECT STATUS, ERROR_NUMBER FROM DBA_APPLY WHERE APPLY_NAME = 'APPLY_DBS2'")
        assert status == [{"STATUS": "ABORTED", "ERROR_NUMBER": 1}]
        assert rows(replica, owner) == [(1, "a"), (2, "in the way")]
        assert queued(dbs1, "STRM_QT") == 2                             # the transaction after it
        assert cap.combined is None and optimization(dbs1)[0] == [(0,)]

        with sqlite3.connect(replica) as c:
            c.execute(f'DELETE FROM "{owner}.ORDERS" WHERE id = 2')
        err = view(dbs2, "SELECT LOCAL_TRANSACTION_ID FROM DBA_APPLY_ERROR")[0]
        dbs2.apply_adm.execute_error(local_transaction_id=err["LOCAL_TRANSACTION_ID"])
        assert propagate(dbs1) == 2
        dbs2.apply_adm.start_apply(apply_name="APPLY_DBS2")
        apply = ApplyProcess.from_catalog(sluice.connect(sites.dsn_of("dbs2")), "APPLY_DBS2")
        env.procs.append(apply)
        assert apply.drain() == 2
        assert rows(replica, owner) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    finally:
        sites.close()


def test_a_target_out_of_the_capture_reach_means_the_staged_route(env, tmp_path):
    """DBS2's apply cannot open its target from the capture's process: the capture sends into
    DBS2's queue instead (the staged combined route), where the apply finds the LCRs."""
    s = env.src
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs2, replica = topology(env, tmp_path, sites, replica_dir="moved")
        (tmp_path / "moved").rename(tmp_path / "elsewhere")      # the link's file is not there
        cap = env.process()
        cap.start()
        assert type(cap.combined) is Combined
        env.sql(f"INSERT INTO {s}.orders VALUES (1, 'a')")
        cap.catch_up()
        assert queued(env.conn, "STRM_QT") == 0 and queued(dbs2, "STREAMS_QUEUE_TABLE") == 1
    finally:
        sites.close()
