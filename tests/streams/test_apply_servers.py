"""Apply servers as processes (issue 15 §1 "parallel apply"; :mod:`sluice.streams.apply.servers`):
the same target as a serial apply on a workload where most transactions depend on earlier
ones (the same keys inserted, updated — keys too — deleted and inserted again), with
commit_serialization FULL and NONE; and a server killed mid-batch: the apply process fails,
its dequeue rolls back, and the restarted process leaves nothing lost and nothing applied
twice."""

from __future__ import annotations

import os
import random
import signal
import uuid

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.streams import RowLCR
from sluice.streams.apply import ApplyDefinition, ApplyProcess, Item, SourceTxn, engine_for
from sluice.streams.apply import servers
from sluice.streams.apply.servers import ServerProcesses, txn_from_wire, txn_to_wire
from tests.conftest import PG_BASE, drop_schema, pg_admin
from tests.streams.applykit import SOURCE_DB, procedures, target  # noqa: F401

APPLY = "APPLY1"


def workload(owner: str, tables: tuple[str, ...], count: int, seed: int = 15):
    """``count`` source transactions of 1-4 changes over 8 keys per table, each change valid
    only after the earlier ones (an UPDATE or DELETE carries the row's current value as its
    old value): (transactions as lists of row LCRs, the rows each table must end with)."""
    rng = random.Random(seed)
    state = {t: {} for t in tables}
    txns = []
    scn = 1000
    for n in range(count):
        scn += 1
        lcrs = []
        for _ in range(rng.randint(1, 4)):
            table = rng.choice(tables)
            rows = state[table]
            k = rng.randrange(8)
            if k not in rows:
                rows[k] = f"i{n}"
                lcrs.append(("INSERT", table, None, {"ID": k, "NAME": rows[k]}))
            elif rng.random() < 0.2:
                lcrs.append(("DELETE", table, {"ID": k, "NAME": rows.pop(k)}, None))
            else:
                free = [j for j in range(8, 12) if j not in rows]
                new_id = rng.choice(free) if free and rng.random() < 0.2 else k
                old = {"ID": k, "NAME": rows.pop(k)}
                rows[new_id] = f"u{n}"
                lcrs.append(("UPDATE", table, old, {"ID": new_id, "NAME": rows[new_id]}))
        txns.append([RowLCR.construct(SOURCE_DB, cmd, owner, table, None, f"t{n}", scn, old, new, commit_scn=scn)
                     for cmd, table, old, new in lcrs])
    return txns, {t: sorted(rows.items()) for t, rows in state.items()}


def source_txns(txns):
    return [SourceTxn([Item(x) for x in lcrs], "CAPTURED", SOURCE_DB, lcrs[0].get_commit_scn(),
                      lcrs[0].get_transaction_id()) for lcrs in txns]


def pg_rows(schema: str, table: str):
    with pg_admin() as c:
        return [tuple(r) for r in c.execute(f"SELECT id, name FROM {schema}.{table} ORDER BY id")]


def test_wire_form_round_trip():
    """What a server gets is the transaction the coordinator had."""
    txns, _ = workload("O", ("EMP",), 20)
    for t in source_txns(txns):
        back = txn_from_wire(txn_to_wire(t))
        assert (back.kind, back.source_database, back.commit_scn, back.transaction_id) == \
            (t.kind, t.source_database, t.commit_scn, t.transaction_id)
        assert [i.message for i in back.items] == [i.message for i in t.items]


@pytest.fixture
def two_schemas():
    names = ["srv_" + uuid.uuid4().hex[:10] for _ in range(2)]
    with pg_admin() as c:
        for s in names:
            c.execute(f"CREATE SCHEMA {s}")
            for t in ("emp", "dept"):
                c.execute(f"CREATE TABLE {s}.{t} (id integer PRIMARY KEY, name varchar(40))")
    yield names
    for s in names:
        drop_schema(s)


@pytest.mark.parametrize("serialization", ["FULL", "NONE"])
def test_server_processes_give_the_serial_result(conn, two_schemas, serialization):
    """200 dependent transactions over two tables: four server processes leave both tables
    as one serial engine does (and as the workload says); the servers did apply (their rows
    in SLUICE_APPLY_PROGRESS); applied again, every transaction is recognised (False)."""
    serial_schema, parallel_schema = two_schemas
    link = f"{PG_BASE}?schema={serial_schema}"
    serial_txns, expected = workload(serial_schema.upper(), ("EMP", "DEPT"), 200)
    parallel_txns, _ = workload(parallel_schema.upper(), ("EMP", "DEPT"), 200)
    for s in two_schemas:
        procedures(conn).set_schema_instantiation_scn(s.upper(), SOURCE_DB, 0, apply_database_link=link)
    serial = engine_for(conn, "SERIAL_T", link, b"\x00")
    try:
        assert all(serial.apply(t) for t in source_txns(serial_txns))
    finally:
        serial.target.close()
    par = ServerProcesses(engine_for(conn, "PARALLEL_T", link, b"\x00"), 4, ordered=serialization == "FULL")
    try:
        work = source_txns(parallel_txns)
        outcome = []
        for i in range(0, len(work), 40):
            outcome += par.apply_all(work[i:i + 40])
        assert outcome == [True] * len(work)
        assert par.applied == {SOURCE_DB: work[-1].commit_scn}
        assert par.apply_all(work[:40]) == [False] * 40
    finally:
        par.close()
    for table in ("emp", "dept"):
        assert pg_rows(parallel_schema, table) == pg_rows(serial_schema, table) == expected[table.upper()]
    with pg_admin() as c:
        ids = {r[0] for r in c.execute(f"SELECT SERVER_ID FROM {serial_schema}.SLUICE_APPLY_PROGRESS "
                                       f"WHERE APPLY_NAME = 'PARALLEL_T'")}
    assert len(ids - {0}) >= 2 and ids <= {0, 1, 2, 3, 4}


@pytest.mark.parametrize("target", ["postgresql"], indirect=True)   # SQLite targets apply serially
def test_killed_server_loses_nothing_and_applies_nothing_twice(conn, target, monkeypatch):
    """kill -9 of one apply server process in the middle of a batch: the batch fails (its
    dequeue rolls back), the process is started again and applies the rest — the target
    holds exactly the workload's rows, no transaction reached the error queue (one applied
    twice would: its INSERT a duplicate, its UPDATE's old value stale)."""
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40))")
    conn.streams_adm.set_up_queue(queue_table="APPLY_QT", queue_name="APPLY_Q")
    conn.aqadm.add_subscriber(queue_name="APPLY_Q", subscriber=sluice.Agent(APPLY))
    txns, expected = workload(target.owner, ("EMP",), 150, seed=7)
    q = conn.queue("APPLY_Q")
    for lcrs in txns:
        q.enqmany([conn.msgproperties(payload=x) for x in lcrs])
        conn.commit()
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0, apply_database_link=target.link)
    d = ApplyDefinition(APPLY, conn.username, "APPLY_Q", apply_database_link=target.link,
                        parameters={"PARALLELISM": "3"})
    proc = ApplyProcess(sluice.connect(conn.dsn), d)
    assert isinstance(proc.parallel, ServerProcesses)
    victim = proc.parallel.servers[1].process
    handed, real = [0], servers.txn_to_wire

    def handing(txn):
        handed[0] += 1
        if handed[0] == 40:             # by now transactions are committed, others in flight
            os.kill(victim.pid, signal.SIGKILL)
            victim.join(10)
        return real(txn)
    monkeypatch.setattr(servers, "txn_to_wire", handing)
    with pytest.raises(DatabaseError, match="apply server"):
        proc.drain()
    proc.stop()                          # as the host does: the dequeue rolls back
    proc.conn.close()
    assert not victim.is_alive()
    assert 0 < len(target.rows("emp")) and handed[0] >= 40
    monkeypatch.undo()
    again = ApplyProcess(sluice.connect(conn.dsn), d)
    try:
        again.drain()
        assert again.state != "ABORTED", again.error
    finally:
        again.stop()
        again.conn.close()
    _, rows = conn.query("SELECT COUNT(*) FROM DBA_APPLY_ERROR", None)
    assert rows == [(0,)]
    assert target.rows("emp") == expected["EMP"]


def test_handler_registered_at_run_time_with_server_processes(conn, two_schemas):
    """A DML handler is a Python callable registered in this process, which a server process
    cannot load: the transactions touching its table are applied by the coordinator (in
    the apply process, where the name resolves), the others by the servers, in one order."""
    schema, _ = two_schemas
    owner = schema.upper()
    link = f"{PG_BASE}?schema={schema}"
    procedures(conn).set_schema_instantiation_scn(owner, SOURCE_DB, 0, apply_database_link=link)
    called = []

    def audited(row):                  # later UPDATEs carry the LCRs' old values: keep them
        called.append(row.get_value("NEW", "ID").value)
        row.execute(True)
    sluice.register_function("apply_servers_test.audited", audited)
    procedures(conn).set_dml_handler(f"{owner}.DEPT", "TABLE", "INSERT", False,
                                     "apply_servers_test.audited", apply_database_link=link)
    txns, expected = workload(owner, ("EMP", "DEPT"), 60, seed=3)
    par = ServerProcesses(engine_for(conn, "HANDLED_T", link, b"\x00"), 3)    # the apply process's handlers
    try:
        work = source_txns(txns)
        assert par.apply_all(work) == [True] * len(work)
    finally:
        par.close()
    dept_inserts = [x.get_value("NEW", "ID").value for t in txns for x in t
                    if x.get_object_name() == "DEPT" and x.get_command_type() == "INSERT"]
    assert called == dept_inserts and called
    for table in ("emp", "dept"):
        assert pg_rows(schema, table) == expected[table.upper()]
    with pg_admin() as c:             # the servers applied the others
        ids = {r[0] for r in c.execute(f"SELECT SERVER_ID FROM {schema}.SLUICE_APPLY_PROGRESS "
                                       f"WHERE APPLY_NAME = 'HANDLED_T'")}
    assert 0 in ids and ids - {0}
