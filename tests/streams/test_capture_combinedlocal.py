"""Combined capture and apply at one database (seed 001 "Combined Capture and Apply
Requirements": the capture and the apply use the same queue, the capture its single
publisher, the apply its single consumer; issue 15 §1 "local, or one propagation to it").
The capture hands its LCRs to the apply -- nothing is staged in the queue --, OPTIMIZATION is
1 in V$STREAMS_CAPTURE and the apply reader's PROXY_SID names the capture; exactly once
across a crash between the apply's target commit and the capture's commit; an apply that
aborts on an error gets the rest of the batch staged and the capture stages from then on;
STOP_APPLY makes the capture stage too.  Both store backends (capturekit's ``env``), the
target an SQLite file.  (Two databases through a propagation: test_capture_combined.py.)"""

from __future__ import annotations

import sqlite3


import sluice
from sluice.streams.apply import ApplyProcess
from sluice.streams.apply.compare import compare
from sluice.streams.apply.targetdsn import open_target
from sluice.streams.capture.combinedlocal import LocalCombined
from tests.conftest import PG_BASE
from tests.streams.capturekit import CONSUMER, crash_at_commit, env  # noqa: F401  (fixture)


def optimization(conn):
    return conn.query("SELECT OPTIMIZATION FROM V$STREAMS_CAPTURE WHERE CAPTURE_NAME = 'CAP'", None)[1]


def staged(conn):
    return conn.query("SELECT COUNT(*) FROM AQ$STRM_QT WHERE MSG_STATE = 'READY'", None)[1][0][0]


def setup(env, tmp_path, **apply_kw):
    """orders at the source, its replica in an SQLite file, APPLY_LOCAL on the capture's queue
    as its single consumer, the capture started (not yet running)."""
    s, owner, conn = env.src, env.owner, env.conn
    env.sql(f"CREATE TABLE {s}.orders (id int PRIMARY KEY, customer text)")
    replica = f"sqlite:///{tmp_path / 'replica.db'}"
    with sqlite3.connect(replica[len("sqlite:///"):]) as c:
        c.execute(f'CREATE TABLE "{owner}.ORDERS" (id int PRIMARY KEY, customer text)')
    conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="APPLY_LOCAL",
                                apply_database_link=replica, apply_captured=True, **apply_kw)
    conn.apply_adm.set_schema_instantiation_scn(owner, env.pg.info.dbname.upper(), 0,
                                                apply_database_link=replica)
    conn.apply_adm.start_apply(apply_name="APPLY_LOCAL")
    env.create_capture(rule_set_name=env.table_rule_set("CAP_RS", "orders"))
    conn.capture_adm.start_capture(capture_name="CAP")
    return replica


def replica_rows(replica, owner):
    with sqlite3.connect(replica[len("sqlite:///"):]) as c:
        return sorted(c.execute(f'SELECT id, customer FROM "{owner}.ORDERS"').fetchall())


def converged(env, replica, rows):
    src, dst = open_target(PG_BASE, "", None, None), open_target(replica, "", None, None)
    try:
        result = compare(src, env.owner, "ORDERS", dst, env.owner, "ORDERS")
    finally:
        src.close()
        dst.close()
    assert result.consistent and result.source_rows == rows, result.differences[:5]


def test_local_combined_capture_and_apply(env, tmp_path):
    s, conn = env.src, env.conn
    replica = setup(env, tmp_path)
    cap = env.process()
    cap.start()
    assert isinstance(cap.combined, LocalCombined)
    assert optimization(conn) == [(1,)]
    for t in range(5):
        env.sql(*(f"INSERT INTO {s}.orders VALUES ({t * 10 + k}, 'c{t}')" for k in range(3)))
    env.sql(f"UPDATE {s}.orders SET customer = 'changed' WHERE id < 20")
    env.sql(f"DELETE FROM {s}.orders WHERE id = 41")
    cap.catch_up()
    assert staged(conn) == 0                          # nothing staged in the queue …
    converged(env, replica, 14)                       # … and the replica has it all
    reader = env.view("SELECT APPLY_NAME, PROXY_SID, TOTAL_MESSAGES_DEQUEUED FROM V$STREAMS_APPLY_READER")
    assert reader == [{"APPLY_NAME": "APPLY_LOCAL", "PROXY_SID": f"CAP@{conn.context.store.global_name()}",
                       "TOTAL_MESSAGES_DEQUEUED": 22}]
    progress = env.view("SELECT APPLY_NAME, APPLIED_MESSAGE_NUMBER FROM DBA_APPLY_PROGRESS")
    assert progress[0]["APPLIED_MESSAGE_NUMBER"] == cap.captured_scn
    # the apply process itself (a host runs it) finds nothing to do
    apply = ApplyProcess.from_catalog(sluice.connect(env.dsn), "APPLY_LOCAL")
    env.procs.append(apply)
    assert apply.drain() == 0

    # a crash after the apply's target commit, before the capture's commit: the restarted
    # capture hands the batch over again and SLUICE_APPLY_DONE keeps it once
    env.sql(f"INSERT INTO {s}.orders VALUES (100, 'once')")
    again = crash_at_commit(env, cap)
    assert (100, "once") in replica_rows(replica, env.owner)      # the target had committed
    assert isinstance(again.combined, LocalCombined)
    again.catch_up()
    assert env.view("SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR") == [{"N": 0}]   # no ORA-00001
    converged(env, replica, 15)

    # STOP_APPLY: the topology no longer qualifies, the capture stages; the apply, started
    # again, dequeues what was staged
    conn.apply_adm.stop_apply(apply_name="APPLY_LOCAL")
    env.sql(f"INSERT INTO {s}.orders VALUES (200, 'staged')")
    again.catch_up()
    assert again.combined is None and optimization(conn) == [(0,)]
    assert staged(conn) == 1
    assert env.view("SELECT STATE, PROXY_SID FROM V$STREAMS_APPLY_READER") == \
        [{"STATE": "DEQUEUE MESSAGES", "PROXY_SID": None}]     # IDLE: the capture handed it back
    conn.apply_adm.start_apply(apply_name="APPLY_LOCAL")
    assert apply.drain() == 1
    converged(env, replica, 16)


def test_aborting_apply_gets_the_rest_of_the_batch_staged(env, tmp_path):
    """disable_on_error (Oracle's default Y): the failing transaction goes whole to the error
    queue, the apply is ABORTED, the batch's later transactions are staged in the capture's
    commit (none lost, none applied ahead of the failed one) and the capture stages from then
    on; EXECUTE_ERROR after the fix and START_APPLY converge the replica."""
    s, conn, owner = env.src, env.conn, env.owner
    replica = setup(env, tmp_path)
    with sqlite3.connect(replica[len("sqlite:///"):]) as c:
        c.execute(f'INSERT INTO "{owner}.ORDERS" VALUES (2, \'in the way\')')
    cap = env.process()
    cap.start()
    assert isinstance(cap.combined, LocalCombined)
    env.sql(f"INSERT INTO {s}.orders VALUES (1, 'a')")
    env.sql(f"INSERT INTO {s}.orders VALUES (2, 'b')")          # ORA-00001 at the replica
    env.sql(f"INSERT INTO {s}.orders VALUES (3, 'c')", f"INSERT INTO {s}.orders VALUES (4, 'd')")
    env.sql(f"UPDATE {s}.orders SET customer = 'e' WHERE id = 1")
    cap.catch_up()
    status = env.view("SELECT STATUS, ERROR_NUMBER FROM DBA_APPLY WHERE APPLY_NAME = 'APPLY_LOCAL'")
    assert status == [{"STATUS": "ABORTED", "ERROR_NUMBER": 1}]
    errors = env.view("SELECT MESSAGE_COUNT, ERROR_NUMBER FROM DBA_APPLY_ERROR")
    assert errors == [{"MESSAGE_COUNT": 1, "ERROR_NUMBER": 1}]
    assert replica_rows(replica, owner) == [(1, "a"), (2, "in the way")]   # nothing after the error
    assert staged(conn) == 3                                  # the two transactions after it
    assert cap.combined is None and optimization(conn) == [(0,)]
    env.sql(f"INSERT INTO {s}.orders VALUES (5, 'f')")         # staged too
    cap.catch_up()
    assert staged(conn) == 4

    with sqlite3.connect(replica[len("sqlite:///"):]) as c:
        c.execute(f'DELETE FROM "{owner}.ORDERS" WHERE id = 2')
    err = env.view("SELECT LOCAL_TRANSACTION_ID FROM DBA_APPLY_ERROR")[0]
    conn.apply_adm.execute_error(local_transaction_id=err["LOCAL_TRANSACTION_ID"])
    conn.apply_adm.start_apply(apply_name="APPLY_LOCAL")
    apply = ApplyProcess.from_catalog(sluice.connect(env.dsn), "APPLY_LOCAL")
    env.procs.append(apply)
    assert apply.drain() == 4
    assert env.view("SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR") == [{"N": 0}]
    converged(env, replica, 5)


def test_the_apply_user_s_rights_count_when_the_capture_hands_over(env, tmp_path):
    """Handed over, not dequeued, the LCRs are still the apply user's to take (seed 001
    "Secure Queues and Oracle Streams Clients": the apply_user runs the apply process):
    once its agent's DISABLE_DB_ACCESS is done the apply aborts (ORA-24093 in DBA_APPLY)
    without applying the batch, which the capture stages; given back its access, the
    restarted apply dequeues it.  It used to go on applying as the capture's session."""
    from tests.security.conftest import create_user
    s, conn, owner = env.src, env.conn, env.owner
    create_user(conn, "APUSER")
    replica = setup(env, tmp_path, apply_user="APUSER")
    cap = env.process()
    cap.start()
    assert isinstance(cap.combined, LocalCombined)
    env.sql(f"INSERT INTO {s}.orders VALUES (1, 'a')")
    cap.catch_up()
    assert replica_rows(replica, owner) == [(1, "a")]
    conn.aqadm.disable_db_access(agent_name="APPLY_LOCAL", db_username="APUSER")
    env.sql(f"INSERT INTO {s}.orders VALUES (2, 'b')")
    cap.catch_up()
    status = env.view("SELECT STATUS, ERROR_NUMBER FROM DBA_APPLY WHERE APPLY_NAME = 'APPLY_LOCAL'")
    assert status == [{"STATUS": "ABORTED", "ERROR_NUMBER": 24093}]
    assert replica_rows(replica, owner) == [(1, "a")]
    assert staged(conn) == 1 and cap.combined is None
    assert env.view("SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR") == [{"N": 0}]
    conn.aqadm.enable_db_access(agent_name="APPLY_LOCAL", db_username="APUSER")
    conn.apply_adm.start_apply(apply_name="APPLY_LOCAL")
    apply = ApplyProcess.from_catalog(sluice.connect(env.dsn), "APPLY_LOCAL")
    env.procs.append(apply)
    assert apply.drain() == 1
    converged(env, replica, 2)


def test_a_second_consumer_or_a_backlog_means_staging(env, tmp_path):
    """Seed 001's conditions: a queue with another consumer, or with staged messages
    waiting, is not combined."""
    conn = env.conn
    setup(env, tmp_path)
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("OTHER"))
    cap = env.process()
    cap.start()
    assert cap.combined is None and optimization(conn) == [(0,)]
    env.sql(f"INSERT INTO {env.src}.orders VALUES (1, 'a')")
    cap.catch_up()
    cap.stop()
    conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("OTHER"))
    assert staged(conn) == 1                       # the apply's copy waits: it goes first
    conn.capture_adm.start_capture(capture_name="CAP")
    again = env.process()
    again.start()
    assert again.combined is None
