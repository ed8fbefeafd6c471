"""Issue 17 §1: the monitoring views on both backends — Oracle's columns, and a value that
moves with traffic, read through ``cursor.execute`` and through ``sluice sql``."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.monitor import snapshot
from sluice.streams.apply import ApplyProcess
from sluice.streams.propagation.runner import PropagationRunner

from ..conftest import make_queue, wait_until
from .kit import two_sites
from .test_prometheus import exposition, value
from ..streams.capturekit import CONSUMER, env  # noqa: F401
from ..streams.propkit import enqueue, multi_queue


def view(conn, dsn, sql, columns):
    """Rows of ``sql`` as dicts, through a cursor; the same query through ``sluice sql``
    (a new process's session: buffered messages in this one's memory are not there) prints
    every one of ``columns``, Oracle's names.  Returns the cursor's rows."""
    cur = conn.cursor()
    cur.execute(sql)
    names = [d[0] for d in cur.description]
    assert set(columns) <= set(names), set(columns) - set(names)
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    out = CliRunner().invoke(main, ["--dsn", dsn, "sql", sql], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert all(c in out.output for c in columns), out.output
    return rows


def one(rows, **match):
    (row,) = [r for r in rows if all(r[k] == v for k, v in match.items())]
    return row


AQ_COLUMNS = ["QUEUE", "MSG_ID", "CORR_ID", "MSG_PRIORITY", "MSG_STATE", "DELAY", "EXPIRATION",
              "ENQ_TIME", "ENQ_USER_ID", "ENQ_TXN_ID", "DEQ_TIME", "DEQ_USER_ID", "DEQ_TXN_ID",
              "RETRY_COUNT", "EXCEPTION_QUEUE_OWNER", "EXCEPTION_QUEUE", "USER_DATA",
              "ORIGINAL_MSGID", "CONSUMER_NAME", "ADDRESS", "PROTOCOL", "DELIVERY_MODE"]


@pytest.fixture
def dsn_conn(dsn):
    c = sluice.connect(dsn)
    yield dsn, c
    c.close()


def test_dba_queue_tables_and_dba_queues(dsn_conn):
    dsn, conn = dsn_conn
    make_queue(conn, "VQ")
    qt = view(conn, dsn, "SELECT * FROM DBA_QUEUE_TABLES", [
        "OWNER", "QUEUE_TABLE", "TYPE", "OBJECT_TYPE", "SORT_ORDER", "RECIPIENTS", "MESSAGE_GROUPING",
        "COMPATIBLE", "PRIMARY_INSTANCE", "SECONDARY_INSTANCE", "OWNER_INSTANCE", "USER_COMMENT", "SECURE"])
    assert one(qt, QUEUE_TABLE="VQ_QT")["RECIPIENTS"] == "SINGLE"
    cols = ["OWNER", "NAME", "QUEUE_TABLE", "QID", "QUEUE_TYPE", "MAX_RETRIES", "RETRY_DELAY",
            "ENQUEUE_ENABLED", "DEQUEUE_ENABLED", "RETENTION", "USER_COMMENT", "NETWORK_NAME"]
    assert one(view(conn, dsn, "SELECT * FROM DBA_QUEUES", cols), NAME="VQ")["ENQUEUE_ENABLED"] == "YES"
    conn.aqadm.stop_queue("VQ")
    assert one(view(conn, dsn, "SELECT * FROM DBA_QUEUES", cols), NAME="VQ")["ENQUEUE_ENABLED"] == "NO"


def test_aq_queue_table_view_and_v_aq(dsn_conn):
    dsn, conn = dsn_conn
    make_queue(conn, "VQ")
    qid = conn.cursor().execute("SELECT QID FROM DBA_QUEUES WHERE NAME = 'VQ'").fetchone()[0]
    v_aq = ["QID", "WAITING", "READY", "EXPIRED", "TOTAL_WAIT", "AVERAGE_WAIT"]

    def counts():
        r = one(view(conn, dsn, "SELECT * FROM V$AQ", v_aq), QID=qid)
        return r["WAITING"], r["READY"], r["EXPIRED"]
    assert counts() == (0, 0, 0)
    q = conn.queue("VQ")
    q.enqmany([conn.msgproperties(payload=b"a", expiration=1), conn.msgproperties(payload=b"b")])
    q.enqone(conn.msgproperties(payload=b"c", delay=3600))
    conn.commit()
    assert counts() == (1, 2, 0)
    r = one(view(conn, dsn, "SELECT * FROM V$AQ", v_aq), QID=qid)
    assert r["TOTAL_WAIT"] >= 0 and r["AVERAGE_WAIT"] == pytest.approx(r["TOTAL_WAIT"] / 2, rel=1e-3)
    gv = view(conn, dsn, "SELECT * FROM GV$AQ", ["INST_ID"] + v_aq)
    assert (one(gv, QID=qid)["INST_ID"], one(gv, QID=qid)["READY"]) == (1, 2)
    rows = view(conn, dsn, "SELECT * FROM AQ$VQ_QT", AQ_COLUMNS)
    assert sorted(r["MSG_STATE"] for r in rows) == ["READY", "READY", "WAITING"]
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert len(q.deqmany(5)) == 2
    conn.commit()
    assert counts() == (1, 0, 0)
    q.enqone(conn.msgproperties(payload=b"d", expiration=1))     # the time manager expires it
    conn.commit()
    exc = conn.cursor().execute("SELECT QID FROM DBA_QUEUES WHERE NAME = 'AQ$_VQ_QT_E'").fetchone()[0]
    assert wait_until(lambda: conn.query("SELECT EXPIRED FROM V$AQ WHERE QID = :q", {"q": exc})[1] == [(1,)], 10)
    assert one(view(conn, dsn, "SELECT * FROM V$AQ", v_aq), QID=exc)["EXPIRED"] == 1


def test_subscriber_views(dsn_conn):
    dsn, conn = dsn_conn
    multi_queue(conn, "MQ")
    s_cols = ["QUEUE", "NAME", "ADDRESS", "PROTOCOL", "TRANSFORMATION"]
    assert view(conn, dsn, "SELECT * FROM AQ$MQ_QT_S", s_cols) == []
    conn.aqadm.add_subscriber("MQ", sluice.Agent("S1"))
    conn.aqadm.add_subscriber("MQ", sluice.Agent("S2"), rule="priority > 2")
    assert [r["NAME"] for r in view(conn, dsn, "SELECT * FROM AQ$MQ_QT_S ORDER BY NAME", s_cols)] == ["S1", "S2"]
    r_rows = view(conn, dsn, "SELECT * FROM AQ$MQ_QT_R",
                  ["QUEUE", "NAME", "ADDRESS", "PROTOCOL", "RULE", "RULE_SET", "TRANSFORMATION"])
    assert [(r["QUEUE"], r["NAME"], r["RULE"]) for r in r_rows] == [("MQ", "S2", "priority > 2")]
    cols = ["OWNER", "QUEUE_NAME", "QUEUE_TABLE", "CONSUMER_NAME", "ADDRESS", "PROTOCOL",
            "TRANSFORMATION", "DELIVERY_MODE", "QUEUE_TO_QUEUE"]
    rows = view(conn, dsn, "SELECT * FROM DBA_QUEUE_SUBSCRIBERS", cols)
    assert sorted((r["QUEUE_NAME"], r["CONSUMER_NAME"], r["DELIVERY_MODE"]) for r in rows) == [
        ("MQ", "S1", "PERSISTENT"), ("MQ", "S2", "PERSISTENT")]
    conn.aqadm.remove_subscriber("MQ", sluice.Agent("S1"))
    assert [r["CONSUMER_NAME"] for r in view(conn, dsn, "SELECT * FROM DBA_QUEUE_SUBSCRIBERS", cols)] == ["S2"]


def test_buffered_views_count_memory_and_spilled_messages(dsn_conn):
    dsn, conn = dsn_conn
    multi_queue(conn, "BQ")
    conn.aqadm.add_subscriber("BQ", sluice.Agent("B1"), delivery_mode=sluice.MSG_BUFFERED)
    q_cols = ["QUEUE_ID", "QUEUE_SCHEMA", "QUEUE_NAME", "NUM_MSGS", "SPILL_MSGS", "EXPIRED_MSGS"]
    s_cols = ["QUEUE_ID", "QUEUE_SCHEMA", "QUEUE_NAME", "SUBSCRIBER_NAME", "SUBSCRIBER_ADDRESS",
              "PROTOCOL", "SUBSCRIBER_TYPE", "NUM_MSGS", "TOTAL_SPILLED_MSG"]
    assert one(view(conn, dsn, "SELECT * FROM V$BUFFERED_QUEUES", q_cols), QUEUE_NAME="BQ")["NUM_MSGS"] == 0
    q = conn.queue("BQ")
    q.enqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    for i in range(3):
        q.enqone(conn.msgproperties(payload=b"m%d" % i))
    r = one(view(conn, dsn, "SELECT * FROM V$BUFFERED_QUEUES", q_cols), QUEUE_NAME="BQ")
    assert (r["NUM_MSGS"], r["SPILL_MSGS"]) == (3, 0)             # in this process's memory
    s = one(view(conn, dsn, "SELECT * FROM V$BUFFERED_SUBSCRIBERS", s_cols), SUBSCRIBER_NAME="B1")
    assert (s["NUM_MSGS"], s["SUBSCRIBER_TYPE"]) == (3, "SUBSCRIBER")
    sluice.aq.buffered.configure(conn, spill_after=0)            # spill them all
    time_manager_spill(conn)
    r = one(view(conn, dsn, "SELECT * FROM V$BUFFERED_QUEUES", q_cols), QUEUE_NAME="BQ")
    assert (r["NUM_MSGS"], r["SPILL_MSGS"]) == (3, 3)


def time_manager_spill(conn):
    """Spill what has been in memory longer than ``spill_after`` now."""
    from sluice.aq.buffered import existing_pool
    pool = existing_pool(conn.context.store)
    info = conn.context.catalog.find_queue("SLUICE", "BQ")
    endpoint = conn.queue("BQ")._buffered_endpoint()
    pool.spill_old(info, endpoint.spill)


def test_propagation_views(sites):
    a, b = two_sites(sites)
    da, db = sites.dsn_of("dbs1"), sites.dsn_of("dbs2")
    p = one(view(a, da, "SELECT * FROM DBA_PROPAGATION", [
        "PROPAGATION_NAME", "SOURCE_QUEUE_OWNER", "SOURCE_QUEUE_NAME", "DESTINATION_QUEUE_OWNER",
        "DESTINATION_QUEUE_NAME", "DESTINATION_DBLINK", "RULE_SET_OWNER", "RULE_SET_NAME",
        "QUEUE_TO_QUEUE", "STATUS", "ERROR_MESSAGE", "ERROR_DATE"]), PROPAGATION_NAME="P1")
    assert (p["SOURCE_QUEUE_NAME"], p["DESTINATION_DBLINK"], p["STATUS"]) == ("SRC", "DBS2", "ENABLED")
    sched_cols = ["SCHEMA", "QNAME", "DESTINATION", "START_DATE", "START_TIME", "PROPAGATION_WINDOW",
                  "NEXT_TIME", "LATENCY", "SCHEDULE_DISABLED", "TOTAL_TIME", "TOTAL_NUMBER",
                  "TOTAL_BYTES", "MAX_NUMBER", "MAX_BYTES", "AVG_NUMBER", "AVG_SIZE", "AVG_TIME",
                  "FAILURES", "LAST_ERROR_DATE", "LAST_ERROR_TIME", "LAST_ERROR_MSG"]
    sender_cols = ["QUEUE_SCHEMA", "QUEUE_NAME", "DBLINK", "DST_QUEUE_NAME", "TOTAL_MSGS",
                   "TOTAL_BYTES", "ELAPSED_DEQUEUE_TIME", "ELAPSED_PICKLE_TIME", "STATE"]
    receiver_cols = ["SRC_QUEUE_NAME", "SRC_DBNAME", "DST_QUEUE_NAME", "TOTAL_MSGS"]
    assert one(view(a, da, "SELECT * FROM DBA_QUEUE_SCHEDULES", sched_cols), QNAME="SRC")["TOTAL_NUMBER"] == 0
    assert view(b, db, "SELECT * FROM V$PROPAGATION_RECEIVER", receiver_cols) == []
    enqueue(a, "SRC", [b"1", b"2", b"3", b"4"])
    assert PropagationRunner(a).run_once(force=True) == 4
    assert one(view(a, da, "SELECT * FROM DBA_QUEUE_SCHEDULES", sched_cols), QNAME="SRC")["TOTAL_NUMBER"] == 4
    sender = one(view(a, da, "SELECT * FROM V$PROPAGATION_SENDER", sender_cols), QUEUE_NAME="SRC")
    assert (sender["TOTAL_MSGS"], sender["STATE"]) == (4, "ENABLED")
    (rec,) = view(b, db, "SELECT * FROM V$PROPAGATION_RECEIVER", receiver_cols)
    assert (rec["SRC_DBNAME"], rec["TOTAL_MSGS"]) == ("DBS1", 4)


def test_capture_and_apply_views(env, tmp_path):
    """Capture from PostgreSQL into the store (either backend), apply into an SQLite target:
    DBA_CAPTURE, V$STREAMS_CAPTURE, DBA_APPLY, V$STREAMS_APPLY_READER / _COORDINATOR /
    _SERVER and DBA_APPLY_ERROR move as LCRs flow; so does the snapshot."""
    s, conn = env.src, env.conn
    target = tmp_path / "target.db"
    with sqlite3.connect(target) as t:
        t.execute("CREATE TABLE EMP (ID INTEGER PRIMARY KEY, NAME TEXT)")
        t.execute("INSERT INTO EMP VALUES (2, 'already there')")     # the second insert fails
    env.sql(f"CREATE TABLE {s}.emp (id int PRIMARY KEY, name text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "emp"))
    conn.capture_adm.start_capture(capture_name="CAP")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=CONSUMER, apply_captured=True,
                                apply_database_link=f"sqlite:///{target}")
    cap_cols = ["CAPTURE_NAME", "QUEUE_NAME", "QUEUE_OWNER", "RULE_SET_NAME", "CAPTURE_USER",
                "START_SCN", "STATUS", "CAPTURED_SCN", "APPLIED_SCN", "FIRST_SCN", "SOURCE_DATABASE",
                "STATUS_CHANGE_TIME", "ERROR_NUMBER", "ERROR_MESSAGE", "CAPTURE_TYPE"]
    v_cols = ["CAPTURE_NAME", "STARTUP_TIME", "STATE", "TOTAL_MESSAGES_CAPTURED",
              "TOTAL_MESSAGES_ENQUEUED", "CAPTURE_TIME", "CAPTURE_MESSAGE_NUMBER",
              "CAPTURE_MESSAGE_CREATE_TIME", "ENQUEUE_TIME", "ENQUEUE_MESSAGE_NUMBER"]
    assert one(view(conn, env.dsn, "SELECT * FROM DBA_CAPTURE", cap_cols), CAPTURE_NAME="CAP")["STATUS"] == "ENABLED"
    env.sql(f"INSERT INTO {s}.emp VALUES (1, 'a')")
    env.sql(f"INSERT INTO {s}.emp VALUES (2, 'b')")
    proc = env.process()
    assert proc.catch_up() >= 2
    v = one(view(conn, env.dsn, "SELECT * FROM V$STREAMS_CAPTURE", v_cols), CAPTURE_NAME="CAP")
    # captured: every change of the source database it read (other tests' too); enqueued: ours
    assert v["TOTAL_MESSAGES_CAPTURED"] >= 2 and v["TOTAL_MESSAGES_ENQUEUED"] == 2
    assert one(view(conn, env.dsn, "SELECT * FROM DBA_CAPTURE", cap_cols), CAPTURE_NAME="CAP")["CAPTURED_SCN"]
    apply_cols = ["APPLY_NAME", "QUEUE_NAME", "QUEUE_OWNER", "APPLY_CAPTURED", "RULE_SET_NAME",
                  "APPLY_USER", "APPLY_DATABASE_LINK", "STATUS", "ERROR_NUMBER", "ERROR_MESSAGE"]
    assert one(view(conn, env.dsn, "SELECT * FROM DBA_APPLY", apply_cols),
               APPLY_NAME=CONSUMER)["STATUS"] == "DISABLED"
    shot = snapshot.take(conn)
    (app,) = shot.applies
    assert (app.backlog, shot.captures[0].enqueued) == (2, 2) and shot.captures[0].captured >= 2
    before = exposition(conn)
    a_labels = {"apply": CONSUMER, "queue": "SLUICE.STRM_Q"}
    c_labels = {"capture": "CAP", "queue": "SLUICE.STRM_Q"}
    assert value(before, "sluice_capture_lcrs_enqueued_total", **c_labels) == 2
    assert value(before, "sluice_capture_lcrs_captured_total", **c_labels) >= 2
    assert value(before, "sluice_capture_transactions_total", **c_labels) >= 2
    assert value(before, "sluice_apply_backlog_messages", **a_labels) == 2
    assert value(before, "sluice_apply_lag_seconds", **a_labels) > 0
    assert value(before, "sluice_apply_lcrs_applied_total", **a_labels) == 0
    conn.apply_adm.set_parameter(apply_name=CONSUMER, parameter="DISABLE_ON_ERROR", value="N")
    source_db = conn.query("SELECT SOURCE_DATABASE FROM DBA_CAPTURE", None)[1][0][0]
    conn.apply_adm.set_table_instantiation_scn(f"{env.owner}.EMP", source_db, 0,
                                               apply_database_link=f"sqlite:///{target}")
    conn.apply_adm.start_apply(apply_name=CONSUMER)
    applier = ApplyProcess.from_catalog(sluice.connect(env.dsn), CONSUMER)
    env.procs.append(applier)
    assert applier.drain() == 2
    reader = one(view(conn, env.dsn, "SELECT * FROM V$STREAMS_APPLY_READER", [
        "APPLY_NAME", "STATE", "TOTAL_MESSAGES_DEQUEUED", "DEQUEUE_TIME", "DEQUEUED_MESSAGE_NUMBER"]),
        APPLY_NAME=CONSUMER)
    assert reader["TOTAL_MESSAGES_DEQUEUED"] == 2
    coord = one(view(conn, env.dsn, "SELECT * FROM V$STREAMS_APPLY_COORDINATOR", [
        "APPLY_NAME", "STATE", "TOTAL_RECEIVED", "TOTAL_APPLIED", "TOTAL_ERRORS",
        "HWM_MESSAGE_NUMBER", "HWM_TIME"]), APPLY_NAME=CONSUMER)
    assert (coord["TOTAL_RECEIVED"], coord["TOTAL_APPLIED"], coord["TOTAL_ERRORS"]) == (2, 1, 1)
    server = one(view(conn, env.dsn, "SELECT * FROM V$STREAMS_APPLY_SERVER", [
        "APPLY_NAME", "SERVER_ID", "STATE", "TOTAL_ASSIGNED", "TOTAL_MESSAGES_APPLIED", "APPLY_TIME"]),
        APPLY_NAME=CONSUMER)
    assert server["TOTAL_MESSAGES_APPLIED"] == 1
    (err,) = view(conn, env.dsn, "SELECT * FROM DBA_APPLY_ERROR", [
        "APPLY_NAME", "QUEUE_NAME", "QUEUE_OWNER", "LOCAL_TRANSACTION_ID", "SOURCE_DATABASE",
        "SOURCE_TRANSACTION_ID", "SOURCE_COMMIT_SCN", "MESSAGE_NUMBER", "ERROR_NUMBER",
        "ERROR_MESSAGE", "RECIPIENT_ID", "RECIPIENT_NAME", "MESSAGE_COUNT", "ERROR_CREATION_TIME"])
    assert (err["APPLY_NAME"], err["ERROR_NUMBER"], err["MESSAGE_COUNT"]) == (CONSUMER, 1, 1)
    shot = snapshot.take(conn)
    (app,) = shot.applies
    assert (app.status, app.applied, app.transactions, app.errors, app.error_queue, app.backlog) == (
        "ENABLED", 1, 1, 1, 1, 0)
    after = exposition(conn)
    assert value(after, "sluice_apply_messages_dequeued_total", **a_labels) == 2
    assert value(after, "sluice_apply_lcrs_applied_total", **a_labels) == 1
    assert value(after, "sluice_apply_transactions_total", **a_labels) == 1
    assert value(after, "sluice_apply_errors_total", **a_labels) == 1
    assert value(after, "sluice_apply_error_queue_transactions", **a_labels) == 1
    assert value(after, "sluice_apply_backlog_messages", **a_labels) == 0
    assert value(after, "sluice_apply_latency_seconds", **a_labels) >= 0
    assert value(after, "sluice_streams_process_status", kind="apply", name=CONSUMER,
                 sluice_streams_process_status="ENABLED") == 1
    assert value(after, "sluice_capture_lag_seconds", **c_labels) >= 0
    kinds = {(k.kind, k.source, k.target) for k in shot.links}
    assert ("capture", "capture:CAP", f"queue:SLUICE.STRM_Q@{shot.site}") in kinds
    assert ("apply", f"queue:SLUICE.STRM_Q@{shot.site}", f"apply:{CONSUMER}") in kinds
