"""Seed 001's replication end to end (issue 15 §3): changes captured at a PostgreSQL source
(capture process → commit-time queue) applied by an apply process into a replica — a
second PostgreSQL database, or an SQLite file — checked by the convergence checker
(:func:`sluice.streams.apply.compare.compare`, also ``sluice compare``): the replica equals
the source row by row.  DDL reaches a PostgreSQL replica; the apply's tag keeps a capture at
the replica from capturing the applied changes again (no cycles).

The store runs on both backends (capturekit's ``env``)."""

from __future__ import annotations

import random
import sqlite3

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main as cli
from sluice.streams.apply import ApplyDefinition, ApplyProcess
from sluice.streams.apply.compare import compare
from sluice.streams.apply.targetdsn import open_target
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


def start(env, replica, ddl=False, apply_tag=b"\x00", rule_set=None):
    env.create_capture(rule_set_name=rule_set or env.table_rule_set("CAP_RS", *TABLES, ddl=ddl))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    source_db = env.pg.info.dbname.upper()
    procedures(env.conn).set_schema_instantiation_scn(env.owner, source_db, 0, apply_database_link=replica.link)
    cap = env.process()
    d = ApplyDefinition(CONSUMER, env.conn.username, "STRM_Q", apply_database_link=replica.link,
                        apply_tag=apply_tag)
    app = ApplyProcess(sluice.connect(env.dsn), d)
    env.procs.append(app)
    return cap, app


def schema_rule_set(env) -> str:
    """A rule set capturing every change of the source schema (DML and DDL), whatever its
    tables' names."""
    adm = env.conn.rule_adm
    adm.create_rule_set(rule_set_name="CAP_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="SRC", condition=f":dml.get_object_owner() = '{env.owner}' or "
                                               f":ddl.get_object_owner() = '{env.owner}'")
    adm.add_rule(rule_name="SRC", rule_set_name="CAP_RS")
    return "CAP_RS"


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


@pytest.mark.parametrize("replica", ["postgresql"], indirect=True)   # DDL LCRs and capture need a PostgreSQL replica
def test_ddl_and_no_cycles(env, replica):
    """DDL LCRs are applied on a PostgreSQL replica; a capture at the replica does not
    capture what the apply applied (its tag), but does capture a local change."""
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


@pytest.mark.parametrize("replica", ["sqlite"], indirect=True)   # PostgreSQL: test_ddl_and_no_cycles
def test_ddl_on_sqlite_replica(env, replica):
    """DDL LCRs captured from PostgreSQL are applied on an SQLite replica where SQLite can say
    them: CREATE TABLE (serial, ::casts, now(), storage clauses), ALTER TABLE ADD / RENAME
    COLUMN, CREATE INDEX (named by PostgreSQL), with the rows before and after each in
    order; ALTER COLUMN … TYPE, which SQLite's ALTER TABLE cannot do, puts its transaction
    in the error queue with ORA-26714 naming the clause, and the replica is left as it was."""
    cap, app = start(env, replica, ddl=True)
    src = env.src
    env.sql(f"CREATE TABLE {src}.emp (id serial PRIMARY KEY, name varchar(40) DEFAULT 'x'::text, "
            f"hired timestamptz DEFAULT now()) WITH (fillfactor = 90)")
    env.sql(f"INSERT INTO {src}.emp (id, name, hired) VALUES (1, 'King', '2020-01-02 03:04:05+00')")
    env.sql(f"ALTER TABLE {src}.emp ADD COLUMN note text, ADD COLUMN grade int DEFAULT 1")
    env.sql(f"ALTER TABLE {src}.emp RENAME COLUMN name TO ename")
    env.sql(f"CREATE UNIQUE INDEX ON {src}.emp USING btree (ename)")
    env.sql(f"INSERT INTO {src}.emp (id, ename, note) VALUES (2, 'Blake', 'after the DDL')",
            f"UPDATE {src}.emp SET note = 'changed' WHERE id = 1")
    cap.catch_up()
    app.drain()
    assert env.conn.query("SELECT COUNT(*) FROM DBA_APPLY_ERROR", None)[1] == [(0,)]
    table = replica.table(env.owner, "EMP")
    with sqlite3.connect(replica.link[len("sqlite:///"):]) as c:
        got = c.execute(f"SELECT id, ename, note, grade FROM {table} ORDER BY id").fetchall()
    assert got == [(1, "King", "changed", 1), (2, "Blake", "after the DDL", 1)]
    assert replica.scalar(f"SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = "
                          f"'{env.owner}.EMP' AND name = '{env.owner}.EMP_ENAME_IDX'") == 1
    env.sql(f"ALTER TABLE {src}.emp ALTER COLUMN note TYPE varchar(200)")
    cap.catch_up()
    app.drain()
    cols, rows = env.conn.query("SELECT ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY_ERROR", None)
    assert len(rows) == 1 and rows[0][0] == 26714 and "ALTER COLUMN" in rows[0][1] \
        and "SQLite" in rows[0][1], rows
    assert replica.scalar(f"SELECT count(*) FROM {table}") == 2


@pytest.mark.parametrize("replica", ["postgresql"], indirect=True)   # capture at both sites
def test_two_way_replication_without_cycles(env, replica):
    """Two-way replication (issue 15 §3): both databases capture and both apply what the
    other captured.  Each site changes its own rows; after the rounds both sides hold the
    same rows, and a further round moves nothing: the apply processes' tags keep the
    captures from sending applied changes back (no cycles)."""
    make_tables(env, replica)
    conn = env.conn
    cap_a, apply_ab = start(env, replica)           # site A (the test database) -> site B
    conn.streams_adm.set_up_queue(queue_table="BACK_QT", queue_name="BACK_Q")
    conn.aqadm.add_subscriber(queue_name="BACK_Q", subscriber=sluice.Agent("APPLY_BA"))
    site_b = replica.link.split("?")[0]
    conn.capture_adm.create_capture(queue_name="BACK_Q", capture_name="CAP_B",
                                    rule_set_name=env.table_rule_set("CAP_B_RS", *TABLES), source_dsn=site_b)
    conn.capture_adm.start_capture(capture_name="CAP_B")
    cap_b = env.process("CAP_B")
    site_a = f"{PG_BASE}?schema={env.src}"   # site A; the apply's watermark tables go in its schema
    procedures(conn).set_schema_instantiation_scn(env.owner, replica.database.upper(), 0,
                                                  apply_database_link=site_a)
    apply_ba = ApplyProcess(sluice.connect(env.dsn), ApplyDefinition("APPLY_BA", conn.username, "BACK_Q",
                                                                     apply_database_link=site_a))
    env.procs.append(apply_ba)
    rnd = random.Random(2)
    with replica.pg() as b:
        for rnd_no in range(4):
            for k in range(5):
                i, j = rnd_no * 10 + k, 1000 + rnd_no * 10 + k         # A's rows, B's rows
                env.sql(f"INSERT INTO {env.src}.dept VALUES ({i}, 'a{i}', {rnd.randint(0, 999)})")
                b.execute(f"INSERT INTO {env.src}.dept VALUES ({j}, 'b{j}', {rnd.randint(0, 999)})")
            env.sql(f"UPDATE {env.src}.dept SET dname = 'A changed' WHERE id = {rnd_no * 10}")
            b.execute(f"UPDATE {env.src}.dept SET dname = 'B changed' WHERE id = {1000 + rnd_no * 10}")
            for _ in range(2):
                cap_a.catch_up()
                cap_b.catch_up()
                apply_ab.drain()
                apply_ba.drain()
    src, dst = open_target(PG_BASE, "", None, None), open_target(replica.link, "", None, None)
    try:
        result = compare(src, env.owner, "DEPT", dst, env.owner, "DEPT")
    finally:
        src.close()
        dst.close()
    assert result.consistent, result.differences[:5]
    assert result.source_rows == 40
    cap_a.catch_up()      # nothing comes back: what each side applied was tagged
    cap_b.catch_up()
    assert apply_ab.drain() == 0 and apply_ba.drain() == 0
    assert conn.query("SELECT COUNT(*) FROM DBA_APPLY_ERROR", None)[1] == [(0,)]


@pytest.mark.parametrize("replica", ["postgresql"], indirect=True)   # B must be a database a capture reads
def test_apply_forwarding(env, replica, tmp_path):
    """Seed 001 "Queue Forwarding and Apply Forwarding": the intermediate database B applies
    A's changes with a NULL apply tag, so its own capture recaptures them — B is now their
    source database — and they reach C (an SQLite file) through B's capture and C's apply."""
    make_tables(env, replica)
    conn = env.conn
    cap_a, apply_ab = start(env, replica, apply_tag=None)      # no tag: B's capture takes them
    conn.streams_adm.set_up_queue(queue_table="FWD_QT", queue_name="FWD_Q")
    conn.aqadm.add_subscriber(queue_name="FWD_Q", subscriber=sluice.Agent("APPLY_BC"))
    conn.capture_adm.create_capture(queue_name="FWD_Q", capture_name="CAP_B",
                                    rule_set_name=env.table_rule_set("CAP_B_RS", *TABLES),
                                    source_dsn=replica.link.split("?")[0])
    conn.capture_adm.start_capture(capture_name="CAP_B")
    cap_b = env.process("CAP_B")
    site_c = f"sqlite:///{tmp_path / 'site_c.db'}"
    import sqlite3
    with sqlite3.connect(site_c[len("sqlite:///"):]) as c:
        for t, cols in TABLES.items():
            c.execute(f'CREATE TABLE "{env.owner}.{t.upper()}" ({cols})')
    site_b = replica.database.upper()
    procedures(conn).set_schema_instantiation_scn(env.owner, site_b, 0, apply_database_link=site_c)
    apply_bc = ApplyProcess(sluice.connect(env.dsn), ApplyDefinition("APPLY_BC", conn.username, "FWD_Q",
                                                                     apply_database_link=site_c))
    env.procs.append(apply_bc)
    workload(env, random.Random(9), 15)
    cap_a.catch_up()
    apply_ab.drain()
    cap_b.catch_up()
    assert apply_bc.drain() > 0
    progress = conn.query("SELECT APPLY_NAME, SOURCE_DATABASE FROM DBA_APPLY_PROGRESS ORDER BY 1", None)[1]
    assert progress == [(CONSUMER, env.pg.info.dbname.upper()), ("APPLY_BC", site_b)]
    src, dst = open_target(PG_BASE, "", None, None), open_target(site_c, "", None, None)
    try:
        for t in TABLES:
            result = compare(src, env.owner, t.upper(), dst, env.owner, t.upper())
            assert result.consistent, result.differences[:5]
    finally:
        src.close()
        dst.close()


def test_a_captured_year_past_what_an_lcr_holds_is_the_transactions_error(env, replica):
    """A source date before year 1 or after 9999 (PostgreSQL has them, an LCR's DATE and
    TIMESTAMP do not) is captured; the apply process that reads it puts its transaction in
    the error queue with ORA-01841 and, DISABLE_ON_ERROR being Y, aborts with that error —
    it raised a ValueError before and applied nothing more; the transaction before it is
    applied."""
    env.sql(f"CREATE TABLE {env.src}.ev (id integer PRIMARY KEY, at timestamp)")
    if replica.kind == "postgresql":
        replica.sql(f"CREATE SCHEMA {env.src}")
    replica.sql(f"CREATE TABLE {replica.table(env.owner, 'ev')} (id integer PRIMARY KEY, at timestamp)")
    cap, app = start(env, replica, rule_set=env.table_rule_set("CAP_RS", "ev"))
    env.sql(f"INSERT INTO {env.src}.ev VALUES (1, '2020-01-02 03:04:05')")
    env.sql(f"INSERT INTO {env.src}.ev VALUES (2, '0044-03-15 BC')")
    env.sql(f"INSERT INTO {env.src}.ev VALUES (3, '2021-01-01')")
    cap.catch_up()
    app.drain()
    assert (app.state, app.error.code) == ("ABORTED", 1841)
    cols, rows = env.conn.query("SELECT ERROR_NUMBER, ERROR_MESSAGE, MESSAGE_COUNT FROM DBA_APPLY_ERROR", None)
    assert len(rows) == 1 and rows[0][0] == 1841 and "0044-03-15 00:00:00 BC" in rows[0][1] and rows[0][2] == 1
    assert replica.scalar(f"SELECT count(*) FROM {replica.table(env.owner, 'ev')}") == 1


@pytest.mark.parametrize("replica", ["postgresql"], indirect=True)
def test_a_name_upper_case_does_not_give_back_reaches_its_own_table(env, replica):
    """A lower-case PostgreSQL name whose upper case does not lower back to it (``straße``:
    ``STRASSE``) keeps its spelling in the LCR, as a quoted name: the apply writes into
    ``straße`` at the replica.  Folded, the LCR named STRASSE, i.e. the table ``strasse``,
    and the apply failed (no such table)."""
    env.sql(f"CREATE TABLE {env.src}.straße (id integer PRIMARY KEY, v text)")
    replica.sql(f"CREATE SCHEMA {env.src}", f"CREATE TABLE {env.src}.straße (id integer PRIMARY KEY, v text)")
    cap, app = start(env, replica, rule_set=schema_rule_set(env))
    env.sql(f"INSERT INTO {env.src}.straße VALUES (1, 'a')", f"UPDATE {env.src}.straße SET v = 'b'")
    cap.catch_up()
    app.drain()
    assert env.conn.query("SELECT ERROR_MESSAGE FROM DBA_APPLY_ERROR", None)[1] == []
    with replica.pg() as c:
        assert c.execute(f"SELECT id, v FROM {env.src}.straße").fetchall() == [(1, "b")]


@pytest.mark.parametrize("replica", ["postgresql"], indirect=True)   # the DDL text runs on PostgreSQL
def test_truncate_of_a_table_named_with_quotes(env, replica):
    """TRUNCATE, which PostgreSQL logs as a change, is captured as a TRUNCATE TABLE DDL LCR
    whose text names the table quoted, a quote in the name doubled: the replica's table of
    that name is truncated and nothing else runs.  Before, the name was put between quotes
    as it was: the table ``t"; CREATE TABLE pwned (i int); --`` made the replica truncate
    ``t`` and create ``pwned``."""
    name = 't"; CREATE TABLE pwned (i int); --'
    table = f'{env.src}."{name.replace(chr(34), chr(34) * 2)}"'
    env.sql(f"CREATE TABLE {table} (id int PRIMARY KEY)")
    replica.sql(f"CREATE SCHEMA {env.src}", f"CREATE TABLE {table} (id int PRIMARY KEY)",
                f"CREATE TABLE {env.src}.t (id int)", f"INSERT INTO {env.src}.t VALUES (1)")
    cap, app = start(env, replica, rule_set=schema_rule_set(env))
    env.sql(f"INSERT INTO {table} VALUES (1), (2)")
    env.sql(f"TRUNCATE {table}")
    cap.catch_up()
    app.drain()
    assert env.conn.query("SELECT ERROR_MESSAGE FROM DBA_APPLY_ERROR", None)[1] == []
    with replica.pg() as c:
        assert c.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
        assert c.execute(f"SELECT count(*) FROM {env.src}.t").fetchone()[0] == 1
        assert c.execute(f"SELECT relname FROM pg_class WHERE relname = 'pwned'").fetchall() == []
