"""Seed 001's replication end to end (issue 15 §3): changes captured at a PostgreSQL source
(capture process → commit-time queue) applied by an apply process into a replica — a
second PostgreSQL database, or an SQLite file — checked by the convergence checker
(:func:`sluice.streams.apply.compare.compare`, also ``sluice compare``): the replica equals
the source row by row.  DDL reaches a PostgreSQL replica; the apply's tag keeps a capture at
the replica from capturing the applied changes again (no cycles).

The store runs on both backends (capturekit's ``env``)."""

from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main as cli
from sluice.streams.apply import ApplyDefinition, ApplyProcess
from sluice.streams.apply.compare import compare
from sluice.streams.apply.target import open_target
from tests.conftest import PG_BASE
from tests.streams.applykit import procedures, replica  # noqa: F401
from tests.streams.capturekit import CONSUMER, env  # noqa: F401

TABLES = {"emp": "id integer PRIMARY KEY, name text, sal numeric(10,2), hired date, active boolean",
          "dept": "id integer PRIMARY KEY, dname varchar(30), budget bigint"}


def make_tables(env, replica):
    env.sql(*(f"CREATE TABLE {env.src}.{t} ({cols})" for t, cols in TABLES.items()))
    if replica.kind == "postgresql":
        replica.sql(f"CREATE SCHEMA {env.src}")
    replica.sql(*(f"CREATE TABLE {replica.table(env.owner, t)} ({cols})" for t, cols in TABLES.items()))


def start(env, replica, ddl=False):
    env.create_capture(rule_set_name=env.table_rule_set("CAP_RS", *TABLES, ddl=ddl))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    source_db = env.pg.info.dbname.upper()
    procedures(env.conn).set_schema_instantiation_scn(env.owner, source_db, 0, apply_database_link=replica.link)
    cap = env.process()
    d = ApplyDefinition(CONSUMER, env.conn.username, "STRM_Q", apply_database_link=replica.link)
    app = ApplyProcess(sluice.connect(env.dsn), d)
    env.procs.append(app)
    return cap, app


def workload(env, rnd: random.Random, transactions: int) -> None:
    live: dict[str, set[int]] = {t: set() for t in TABLES}
    next_id = 1
    for _ in range(transactions):
        stmts = []
        for _ in range(rnd.randint(1, 8)):
            table = rnd.choice(list(TABLES))
            ids = live[table]
            op = rnd.random()
            if op < 0.5 or not ids:
                i, next_id = next_id, next_id + 1
                ids.add(i)
                if table == "emp":
                    stmts.append(f"INSERT INTO {env.src}.emp VALUES ({i}, 'n{i}', {rnd.randint(1, 9999)}.{rnd.randint(0, 99)}, "
                                 f"'2020-01-{rnd.randint(1, 28):02d}', {rnd.choice(['true', 'false', 'null'])})")
                else:
                    stmts.append(f"INSERT INTO {env.src}.dept VALUES ({i}, 'd{i}', {rnd.randint(0, 10**12)})")
            elif op < 0.8:
                i = rnd.choice(sorted(ids))
                col = "name = 'u" if table == "emp" else "dname = 'u"
                stmts.append(f"UPDATE {env.src}.{table} SET {col}{rnd.randint(0, 999)}' WHERE id = {i}")
            else:
                i = rnd.choice(sorted(ids))
                ids.discard(i)
                stmts.append(f"DELETE FROM {env.src}.{table} WHERE id = {i}")
        env.sql(*stmts)


def check(env, replica) -> None:
    src = open_target(PG_BASE, "", None, None)
    dst = open_target(replica.link, "", None, None)
    try:
        for t in TABLES:
            result = compare(src, env.owner, t.upper(), dst, env.owner, t.upper())
            assert result.consistent, result.differences[:5]
            assert result.source_rows == result.target_rows > 0
    finally:
        src.close()
        dst.close()


def drain_queue(conn, queue, consumer):
    q = conn.queue(queue)
    q.deqoptions.consumername = consumer
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    got = [m.payload for m in q.deqmany(10_000)]
    conn.commit()
    return got


def test_capture_to_apply_converges(env, replica):
    """Random inserts, updates and deletes in many source transactions reach the replica
    exactly: the checker finds no differing row; the apply's progress view shows the last
    applied commit SCN; ``sluice compare`` agrees, and reports a row changed behind
    the apply's back."""
    make_tables(env, replica)
    cap, app = start(env, replica)
    workload(env, random.Random(15), 40)
    cap.catch_up()
    app.drain()
    check(env, replica)
    cols, rows = env.conn.query("SELECT APPLY_NAME, SOURCE_DATABASE, APPLIED_MESSAGE_NUMBER "
                                "FROM DBA_APPLY_PROGRESS", None)
    assert rows and rows[0][:2] == (CONSUMER, env.pg.info.dbname.upper()) and rows[0][2] > 0
    assert env.conn.query("SELECT COUNT(*) FROM DBA_APPLY_ERROR", None)[1] == [(0,)]
    runner = CliRunner()
    args = ["compare", f"{env.owner}.EMP", "--source", PG_BASE, "--target", replica.link]
    ok = runner.invoke(cli, args)
    assert ok.exit_code == 0 and "0 differing" in ok.output, ok.output
    env.sql(f"UPDATE {env.src}.emp SET name = 'drift' WHERE id = (SELECT min(id) FROM {env.src}.emp)")
    drift = runner.invoke(cli, args)
    assert drift.exit_code == 2 and "DIFFERENT" in drift.output and "NAME" in drift.output, drift.output


def test_ddl_and_no_cycles(env, replica):
    """DDL LCRs are applied on a PostgreSQL replica; a capture at the replica does not
    capture what the apply applied (its tag), but does capture a local change."""
    if replica.kind != "postgresql":
        pytest.skip("DDL LCRs and capture need a PostgreSQL replica")
    make_tables(env, replica)
    cap, app = start(env, replica, ddl=True)
    env.sql(f"INSERT INTO {env.src}.emp (id, name) VALUES (1, 'King')")
    env.sql(f"ALTER TABLE {env.src}.emp ADD COLUMN note text")
    env.sql(f"INSERT INTO {env.src}.emp (id, name, note) VALUES (2, 'Blake', 'after the DDL')")
    cap.catch_up()
    # a capture at the replica, into a queue of its own, with the default rules (null tags only)
    conn = env.conn
    conn.streams_adm.set_up_queue(queue_table="BACK_QT", queue_name="BACK_Q")
    conn.aqadm.add_subscriber(queue_name="BACK_Q", subscriber=sluice.Agent("BACK_APPLY"))
    conn.capture_adm.create_capture(queue_name="BACK_Q", capture_name="BACK",
                                    rule_set_name=env.table_rule_set("BACK_RS", *TABLES),
                                    source_dsn=replica.link.split("?")[0])
    conn.capture_adm.start_capture(capture_name="BACK")
    back = env.process("BACK")
    back.start()
    app.drain()
    with replica.pg() as c:
        assert c.execute(f"SELECT id, name, note FROM {env.src}.emp ORDER BY id").fetchall() == [
            (1, "King", None), (2, "Blake", "after the DDL")]
    back.catch_up()
    assert drain_queue(conn, "BACK_Q", "BACK_APPLY") == []    # the applied changes came back tagged
    with replica.pg() as c:
        c.execute(f"UPDATE {env.src}.emp SET name = 'local' WHERE id = 1")
    back.catch_up()
    got = drain_queue(conn, "BACK_Q", "BACK_APPLY")
    assert [(x.get_command_type(), x.is_null_tag()) for x in got] == [("UPDATE", "Y")]
