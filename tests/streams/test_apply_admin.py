"""DBMS_APPLY_ADM end to end (issue 15 §1): CREATE_APPLY with an apply_database_link,
SET_PARAMETER, START_APPLY — a process host runs the apply process within a second — and
STOP_APPLY; disable_on_error aborting it with DBA_APPLY showing the error; the PL/SQL
forms; subset replication with ADD_SUBSET_RULES at the apply process (seed 000 "Row
Migration and Subset Rules": the replica holds exactly the subset after random updates
moving rows in and out).  The store runs on both backends."""

from __future__ import annotations

import random

import pytest

import sluice
from sluice.streams import RowLCR
from sluice.streams.apply import ApplyProcess
from sluice.streams.apply.compare import compare
from sluice.streams.apply.definition import load
from sluice.streams.apply.targetdsn import open_target
from sluice.streams.capture.context import CaptureContext
from sluice.streams.host import Host
from tests.conftest import PG_BASE
from tests.streams.applykit import SOURCE_DB, replica, target  # noqa: F401  (fixtures)
from tests.streams.capturekit import CONSUMER, env  # noqa: F401  (fixture)
from tests.streams.hostkit import wait_for


def view(conn, sql):
    cols, rows = conn.query(sql, None)
    return [dict(zip(cols, r)) for r in rows]


def test_started_apply_runs_in_a_host(conn, dsn, target):
    """START_APPLY: the host runs the apply process; what is enqueued reaches the target;
    STOP_APPLY stops it; with disable_on_error = Y an error leaves it ABORTED with the error
    in DBA_APPLY and the transaction in DBA_APPLY_ERROR."""
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40))")
    conn.streams_adm.set_up_queue(queue_table="APPLY_QT", queue_name="APPLY_Q")
    adm = conn.apply_adm
    cur = conn.cursor()
    cur.execute(f"CREATE DATABASE LINK dbs2.net USING '{target.link}'")    # the replica's site
    adm.create_apply(queue_name="APPLY_Q", apply_name="APP", apply_database_link="dbs2.net")
    adm.create_apply(queue_name="APPLY_Q", apply_name="APP2", apply_database_link="dbs3.net")
    with pytest.raises(sluice.DatabaseError) as bad:     # a link nobody made: when it is used
        ApplyProcess.from_catalog(conn, "APP2")
    assert bad.value.code == 2019
    adm.drop_apply("APP2")
    # the PL/SQL form
    cur.execute("BEGIN DBMS_APPLY_ADM.SET_PARAMETER(apply_name => 'app', parameter => 'disable_on_error', "
                "value => 'N'); END;")
    with pytest.raises(sluice.DatabaseError) as bad:
        adm.set_parameter("APP", "disable_on_error", "maybe")
    assert bad.value.code == 23605
    adm.set_parameter("APP", "txn_lcr_spill_threshold", "infinite")     # never spill
    assert load(CaptureContext(conn), "APP").parameter("TXN_LCR_SPILL_THRESHOLD") == "INFINITE"
    with pytest.raises(sluice.DatabaseError) as bad:
        adm.set_parameter("APP", "txn_lcr_spill_threshold", "0")
    assert bad.value.code == 23605
    adm.set_parameter("APP", "txn_lcr_spill_threshold", None)          # the default: 10000
    # digits int() refuses (the process failed at every start), and more apply servers than
    # one apply process starts (10**6 forked processes until the target refused connections)
    for parameter, value in (("parallelism", "\u00b2"), ("grouptransops", "\u0661"),
                             ("maximum_scn", "\u00b9"), ("parallelism", "65"), ("parallelism", 10**6)):
        with pytest.raises(sluice.DatabaseError) as bad:
            adm.set_parameter("APP", parameter, value)
        assert bad.value.code == 23605, (parameter, value)
    adm.set_parameter("APP", "parallelism", 64)
    assert load(CaptureContext(conn), "APP").parameter("PARALLELISM") == "64"
    adm.set_parameter("APP", "parallelism", None)
    cur.execute("BEGIN DBMS_APPLY_ADM.START_APPLY(apply_name => 'app'); END;")
    assert view(conn, "SELECT STATUS, APPLY_DATABASE_LINK FROM DBA_APPLY")[0] == \
        {"STATUS": "ENABLED", "APPLY_DATABASE_LINK": "DBS2.NET"}
    q = conn.queue("APPLY_Q")

    def lcr(cmd, old=None, new=None):
        return RowLCR.construct(SOURCE_DB, cmd, target.owner, "EMP", None, None, None, old, new)
    with Host(lambda: sluice.connect(dsn), poll=0.05) as host:
        q.enqone(conn.msgproperties(payload=lcr("INSERT", new={"ID": 1, "NAME": "a"})))
        conn.commit()
        wait_for(lambda: target.rows("emp") == [(1, "a")], 30)
        assert ("APPLY", "APP") in host.running()
        q.enqone(conn.msgproperties(payload=lcr("DELETE", old={"ID": 5})))   # fails: no such row
        conn.commit()
        q.enqone(conn.msgproperties(payload=lcr("INSERT", new={"ID": 2, "NAME": "b"})))
        conn.commit()
        # the target's commit is visible before the store's (the error row) when both
        # transactions were one batch: wait for both
        wait_for(lambda: len(target.rows("emp")) == 2 and view(conn, "SELECT * FROM DBA_APPLY_ERROR"), 30)
        assert [e["ERROR_NUMBER"] for e in view(conn, "SELECT * FROM DBA_APPLY_ERROR")] == [26787]
        adm.set_parameter("APP", "disable_on_error", None)                 # the default: Y
        adm.stop_apply("APP")
        wait_for(lambda: ("APPLY", "APP") not in host.running(), 30)
        adm.start_apply("APP")
        q.enqone(conn.msgproperties(payload=lcr("UPDATE", old={"ID": 9}, new={"NAME": "x"})))
        conn.commit()
        wait_for(lambda: view(conn, "SELECT STATUS FROM DBA_APPLY")[0]["STATUS"] == "ABORTED", 30)
    row = view(conn, "SELECT STATUS, ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY")[0]
    assert row["ERROR_NUMBER"] == 26787 and "does not exist" in row["ERROR_MESSAGE"]
    assert len(view(conn, "SELECT * FROM DBA_APPLY_ERROR")) == 2


# ADD_SUBSET_RULES reads the table's columns in the store's own database (rulegen's
# dictionary): an SQLite store does not hold the PostgreSQL table
@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)
def test_subset_replication_at_apply(env, replica):
    """Seed 000's regions example at the apply process: ADD_SUBSET_RULES(region_id = 2); rows
    move in and out of the subset by random updates (row migration turns them into inserts
    and deletes); the replica holds exactly the source's rows with region_id = 2."""
    s = env.src
    env.sql(f"CREATE TABLE {s}.regions (region_id int PRIMARY KEY, region_name text, zone int)",
            f"ALTER TABLE {s}.regions REPLICA IDENTITY FULL")   # "Subset Rules and Supplemental Logging"
    if replica.kind == "postgresql":
        replica.sql(f"CREATE SCHEMA {s}")
    replica.sql(f"CREATE TABLE {replica.table(env.owner, 'REGIONS')} (region_id int PRIMARY KEY, "
                f"region_name text, zone int)")
    conn = env.conn
    env.create_capture(rule_set_name=env.table_rule_set("CAP_RS", "regions"))
    conn.capture_adm.start_capture(capture_name="CAP")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=CONSUMER, apply_database_link=replica.link,
                                apply_captured=True)
    conn.streams_adm.add_subset_rules(table_name=f"{env.owner}.REGIONS", dml_condition="zone = 2",
                                      streams_type="apply", streams_name=CONSUMER, queue_name="STRM_Q")
    conn.apply_adm.set_schema_instantiation_scn(env.owner, env.pg.info.dbname, 0,
                                                apply_database_link=replica.link)
    rng = random.Random(6)
    env.sql(*(f"INSERT INTO {s}.regions VALUES ({i}, 'r{i}', {rng.randint(1, 3)})" for i in range(1, 41)))
    for _ in range(60):
        i = rng.randint(1, 45)
        op = rng.random()
        if op < 0.7:
            env.sql(f"UPDATE {s}.regions SET zone = {rng.randint(1, 3)}, region_name = 'u{rng.randint(0, 99)}' "
                    f"WHERE region_id = {i}")
        elif op < 0.85:
            env.sql(f"DELETE FROM {s}.regions WHERE region_id = {i}")
        else:
            env.sql(f"INSERT INTO {s}.regions VALUES ({i}, 'n{i}', {rng.randint(1, 3)}) ON CONFLICT DO NOTHING")
    env.process().catch_up()
    proc = ApplyProcess.from_catalog(sluice.connect(env.dsn), CONSUMER)
    env.procs.append(proc)
    proc.drain()
    assert view(conn, "SELECT * FROM DBA_APPLY_ERROR") == []
    src, dst = open_target(PG_BASE, "", None, None), open_target(replica.link, "", None, None)
    try:
        result = compare(src, env.owner, "REGIONS", dst, env.owner, "REGIONS", where="zone = 2")
    finally:
        src.close()
        dst.close()
    assert result.consistent, result.differences[:5]
    assert 0 < result.source_rows < 45


def test_plsql_forms(conn):
    """DBMS_APPLY_ADM's procedures as a PL/SQL block calls them (Oracle's own examples:
    a DBMS_UTILITY.NAME_ARRAY column list, a comma-delimited one)."""
    cur = conn.cursor()
    cur.execute("""DECLARE
                     cols DBMS_UTILITY.NAME_ARRAY;
                   BEGIN
                     cols(1) := 'salary';
                     cols(2) := 'commission_pct';
                     DBMS_APPLY_ADM.SET_UPDATE_CONFLICT_HANDLER(
                       object_name => 'hr.employees', method_name => 'MAXIMUM',
                       resolution_column => 'salary', column_list => cols);
                     DBMS_APPLY_ADM.SET_KEY_COLUMNS(object_name => 'hr.jobs', column_list => 'job_id,job_title');
                     DBMS_APPLY_ADM.SET_TABLE_INSTANTIATION_SCN(source_object_name => 'hr.employees',
                       source_database_name => 'dbs1.net', instantiation_scn => 4242);
                     DBMS_APPLY_ADM.SET_SCHEMA_INSTANTIATION_SCN(source_schema_name => 'hr',
                       source_database_name => 'dbs1.net', instantiation_scn => 4000);
                     DBMS_APPLY_ADM.SET_DML_HANDLER(object_name => 'hr.employees', object_type => 'TABLE',
                       operation_name => 'UPDATE', error_handler => TRUE,
                       user_procedure => 'strmadmin.errors_pkg.regions_pkg');
                   END;""")
    assert view(conn, "SELECT METHOD_NAME, RESOLUTION_COLUMN, COLUMN_NAME FROM DBA_APPLY_CONFLICT_COLUMNS "
                      "ORDER BY COLUMN_NAME") == [
        {"METHOD_NAME": "MAXIMUM", "RESOLUTION_COLUMN": "SALARY", "COLUMN_NAME": c}
        for c in ("COMMISSION_PCT", "SALARY")]
    assert [r["COLUMN_NAME"] for r in view(conn, "SELECT COLUMN_NAME FROM DBA_APPLY_KEY_COLUMNS "
                                                 "ORDER BY COLUMN_NAME")] == ["JOB_ID", "JOB_TITLE"]
    assert view(conn, "SELECT SOURCE_DATABASE, SOURCE_OBJECT_NAME, INSTANTIATION_SCN "
                      "FROM DBA_APPLY_INSTANTIATED_OBJECTS") == [
        {"SOURCE_DATABASE": "DBS1.NET", "SOURCE_OBJECT_NAME": "EMPLOYEES", "INSTANTIATION_SCN": 4242}]
    assert view(conn, "SELECT SOURCE_SCHEMA, INSTANTIATION_SCN FROM DBA_APPLY_INSTANTIATED_SCHEMAS") == [
        {"SOURCE_SCHEMA": "HR", "INSTANTIATION_SCN": 4000}]
    assert view(conn, "SELECT OPERATION_NAME, ERROR_HANDLER, USER_PROCEDURE FROM DBA_APPLY_DML_HANDLERS") == [
        {"OPERATION_NAME": "UPDATE", "ERROR_HANDLER": "Y", "USER_PROCEDURE": "strmadmin.errors_pkg.regions_pkg"}]
    with pytest.raises(sluice.DatabaseError) as e:
        cur.execute("BEGIN DBMS_APPLY_ADM.EXECUTE_ERROR(local_transaction_id => '1.2.3'); END;")
    assert e.value.code == 26673


def test_running_apply_follows_alter_apply(conn, target):
    """ALTER_APPLY and SET_PARAMETER reach a running apply process at its next batch: a
    message handler set while it runs gets the next user message."""
    conn.streams_adm.set_up_queue(queue_table="APPLY_QT", queue_name="APPLY_Q")
    adm = conn.apply_adm
    adm.create_apply(queue_name="APPLY_Q", apply_name="APP", apply_database_link=target.link)
    adm.set_parameter("APP", "disable_on_error", "N")
    proc = ApplyProcess.from_catalog(sluice.connect(conn.dsn), "APP")
    try:
        q = conn.queue("APPLY_Q")
        q.enqone(conn.msgproperties(payload={"n": 1}))
        conn.commit()
        proc.drain()
        (err,) = view(conn, "SELECT ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY_ERROR")
        assert err["ERROR_NUMBER"] == 26714 and "message handler" in err["ERROR_MESSAGE"]
        got = []
        sluice.register_function("apply_test.follow", got.append)
        adm.alter_apply(apply_name="APP", message_handler="apply_test.follow")
        q.enqone(conn.msgproperties(payload={"n": 2}))
        conn.commit()
        proc.drain()
        assert got == [{"n": 2}]
    finally:
        proc.stop()
        proc.conn.close()
