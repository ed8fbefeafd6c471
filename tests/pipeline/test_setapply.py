"""The apply sink's set-form path (:mod:`sluice.pipeline.setapply`), below Spark: the same
rows through the sink's partition function with and without it give identical target
tables, SLUICE_APPLY_DONE records and error queue (the differential contract), grouped or
not, and a replay changes nothing."""

from __future__ import annotations

import os
import uuid

import pytest
from pyspark.sql import Row

import sluice
from sluice.pipeline import rows as rowmod
from sluice.pipeline import setapply, sinks
from sluice.rules.compile.typed.lcrschema import lcr_row
from tests.conftest import PG_BASE, drop_schema, pg_admin
from tests.streams.applykit import lcr

APPLY = "APX"


@pytest.fixture
def site(tmp_path):
    """(store DSN, a connection to it, the target's schema): an SQLite store whose apply
    process APX applies into a PostgreSQL schema of the test database."""
    schema = "sa_" + uuid.uuid4().hex[:10]
    pg_admin().execute(f"CREATE SCHEMA {schema}")
    link = f"{PG_BASE}?schema={schema}"
    dsn = f"sqlite:///{tmp_path / 'store.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=APPLY, apply_database_link=link,
                                apply_captured=True)
    conn.apply_adm.set_schema_instantiation_scn(schema.upper(), "DBS1.NET", 0, apply_database_link=link)
    conn.apply_adm.set_parameter(APPLY, "disable_on_error", "N")
    with pg_admin() as c:
        c.execute(f"CREATE TABLE {schema}.t1 (id bigint PRIMARY KEY, name varchar(20), amount numeric(10,2))")
        c.execute(f"CREATE TABLE {schema}.t2 (id bigint PRIMARY KEY, name text)")
        c.execute(f"CREATE TABLE {schema}.nokey (id bigint, name text)")
    yield dsn, conn, schema
    conn.close()
    drop_schema(schema)


def _rows(txns: list[list]) -> list[Row]:
    """The rows the sink's tasks get for these transactions (decided, in commit order)."""
    out = []
    seq = 0
    for lcrs in txns:
        for m in lcrs:
            seq += 1
            d = dict.fromkeys(rowmod.FIELDS)
            d.update(lcr_row(m))
            d.update(msgid=os.urandom(16), seq=seq, cscn=m.get_commit_scn(), payload_type=m.oracle_type,
                     queue="STRMADMIN.STRM_Q")
            d["rule"] = None
            d["tx"] = f"C|{m.get_source_database_name()}|{m.get_transaction_id()}|{m.get_commit_scn()}"
            out.append(Row(**d))
    return out


def _workload(owner: str) -> list[list]:
    """Transactions meeting every case: plain inserts over two tables, updates and deletes
    by key (one row changed twice in a transaction, a key changed), a NULL old value, an
    update of a missing row (conflict: the error queue), a duplicate insert (ORA-00001), a
    table without a primary key (the engine's path), a row skipped by instantiation."""
    t, scn = [], 10

    def txn(*ms):
        nonlocal scn
        scn += 1
        t.append([lcr(cmd, owner, table, scn, old, new, txn=f"{scn}.0.1") for cmd, table, old, new in ms])

    txn(*[("INSERT", "T1", None, {"ID": i, "NAME": f"n{i}", "AMOUNT": i * 1.5}) for i in range(20)])
    txn(*[("INSERT", "T2", None, {"ID": i, "NAME": None if i % 3 == 0 else f"m{i}"}) for i in range(10)],
        ("INSERT", "T1", None, {"ID": 100, "NAME": "x", "AMOUNT": 1}))
    txn(("UPDATE", "T1", {"ID": 1, "NAME": "n1"}, {"NAME": "u1"}),
        ("UPDATE", "T1", {"ID": 1, "NAME": "u1"}, {"NAME": "v1"}),
        ("UPDATE", "T2", {"ID": 3, "NAME": None}, {"NAME": "was null"}),
        ("UPDATE", "T1", {"ID": 2}, {"ID": 200}),
        ("DELETE", "T1", {"ID": 3, "NAME": "n3", "AMOUNT": 4.5}, None),
        ("INSERT", "T1", None, {"ID": 3, "NAME": "again", "AMOUNT": 0}))
    txn(("UPDATE", "T1", {"ID": 4, "NAME": "wrong"}, {"NAME": "conflict"}))      # ORA-26786
    txn(("UPDATE", "T1", {"ID": 999, "NAME": "n"}, {"NAME": "missing"}))          # ORA-26787
    txn(("INSERT", "T2", None, {"ID": 1, "NAME": "dup"}))                          # ORA-00001
    txn(("INSERT", "NOKEY", None, {"ID": 1, "NAME": "no key"}),
        ("INSERT", "T2", None, {"ID": 50, "NAME": "with nokey"}))
    txn(*[("UPDATE", "T1", {"ID": i, "NAME": f"n{i}"}, {"NAME": f"w{i}"}) for i in range(5, 15)],
        ("DELETE", "T2", {"ID": 2, "NAME": "m2"}, None))
    txn(("INSERT", "T1", None, {"ID": 300, "NAME": "this name is longer than twenty", "AMOUNT": 1}))
    return t


def _state(conn, schema: str) -> tuple:
    with pg_admin() as c:
        tables = [c.execute(f"SELECT * FROM {schema}.{t} ORDER BY 1, 2").fetchall() for t in ("t1", "t2", "nokey")]
        done = c.execute(f"SELECT apply_name, kind, id FROM {schema}.sluice_apply_done ORDER BY 3").fetchall()
        progress = c.execute(f"SELECT source_database, max(applied_scn) FROM {schema}.sluice_apply_progress "
                             "GROUP BY 1").fetchall()
    errors = conn.query("SELECT APPLY_NAME, SOURCE_DATABASE, SOURCE_COMMIT_SCN, ERROR_NUMBER, ERROR_MESSAGE, "
                        "MESSAGE_COUNT FROM DBA_APPLY_ERROR ORDER BY SOURCE_COMMIT_SCN", None)[1]
    return tables, done, progress, [tuple(e) for e in errors]


def _reset(conn, schema: str) -> None:
    """The target and the error queue as before the workload ran: its transactions come
    again as new (so DELETE_ERROR's notes of them go too: a replay would skip them)."""
    from sluice.streams.apply import errorqueue

    conn.apply_adm.delete_all_errors(APPLY)
    conn.context.session.add_commit_work(lambda c: c.execute(errorqueue.FORGET_DELETED, (APPLY, float("inf"))))
    conn.commit()
    with pg_admin() as c:
        for t in ("t1", "t2", "nokey", "sluice_apply_done", "sluice_apply_progress"):
            c.execute(f"DELETE FROM {schema}.{t}")


def _run(dsn: str, rows: list) -> list:
    counted = _Counter()
    sinks._apply_partition(sluice.connect, dsn, {}, APPLY, {}, 0, iter(rows), counted=counted)
    return counted.value


class _Counter:
    def __init__(self) -> None:
        self.value: list = []

    def add(self, v: list) -> None:
        self.value += v


@pytest.mark.parametrize("group", [1, 25, 10_000])
def test_set_form_equals_the_engine_path(site, monkeypatch, group):
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", str(group))   # the set form groups as it says
    rows = _rows(_workload(schema.upper()))
    with monkeypatch.context() as m:
        m.setattr(setapply.SetApplier, "eligible", lambda self, rows: False)
        assert _run(dsn, rows) == [(0, 0, 0)]
    engine_path = _state(conn, schema)
    assert len(engine_path[3]) == 4 and engine_path[0][0]    # the errors and rows of the workload
    _reset(conn, schema)
    (groups, fallbacks, statements), = _run(dsn, rows)
    # every group of 10,000 holds a failing transaction: all of them go back to the engine
    assert (groups > 0 and statements > 0) if group < 10_000 else (groups, fallbacks) == (0, 2)
    # the four failing transactions go back to the engine (grouped: each group holding one)
    assert fallbacks == 4 if group == 1 else 1 <= fallbacks <= 4

    assert _state(conn, schema) == engine_path
    assert _run(dsn, rows)[0][0] == 0       # a replay: nothing applied again
    assert _state(conn, schema) == engine_path


def test_keys_computed_in_the_jvm_are_the_engines(site, spark):
    """The apply sink's plan keys (:func:`sinks._keys_frame`, in the JVM) make the same
    transactions share a row as the Python parallel apply's ``transaction_keys`` of the
    same LCRs; a table without a primary key makes its transaction depend on everything."""
    from decimal import Decimal

    from sluice.pipeline.rows import spark_schema
    from sluice.streams.apply import Item, SourceTxn, engine_for
    from sluice.streams.apply.definition import load
    from sluice.streams.apply.parallel import EVERYTHING, transaction_keys
    from sluice.streams.capture.context import CaptureContext

    dsn, conn, schema = site
    txns = _workload(schema.upper())
    rows = _rows(txns)
    types = spark_schema()
    frame_schema = types.add("rule", "string").add("tx", "string")
    decimal = {f.name for f in types.fields if f.dataType.typeName() == "decimal"}
    data = [tuple(Decimal(r[f]) if f in decimal and r[f] is not None else r[f] for f in frame_schema.names)
            for r in rows]
    frame = spark.createDataFrame(data, frame_schema)
    key_columns, acting, captured = sinks._batch_facts(frame, sluice.connect, dsn, {}, APPLY, {})
    assert (schema.upper(), "NOKEY") not in key_columns and captured and not acting
    jvm = {r["tx"]: (r["e"], set(r["h"])) for r in sinks._keys_frame(frame, key_columns, acting, captured).collect()}
    ctx = CaptureContext(conn)
    d = load(ctx, APPLY)
    engine = engine_for(conn, d.name, d.apply_database_link, d.apply_tag, d)
    try:
        python = [transaction_keys(engine, SourceTxn([Item(m) for m in lcrs])) for lcrs in txns]
    finally:
        engine.target.close()
    txs = [f"C|DBS1.NET|{lcrs[0].get_transaction_id()}|{lcrs[0].get_commit_scn()}" for lcrs in txns]
    nokey = [any(m.get_object_name() == "NOKEY" for m in lcrs) for lcrs in txns]
    assert [jvm[tx][0] for tx in txs] == [int(n) for n in nokey]
    assert not any(EVERYTHING in k for k in python)
    for i in range(len(txns)):
        for j in range(i):
            if not (nokey[i] or nokey[j]):
                assert bool(jvm[txs[i]][1] & jvm[txs[j]][1]) == bool(python[i] & python[j]), (i, j)


@pytest.mark.parametrize("group", [1, 25])
def test_refused_commit_goes_to_the_error_queue(site, group):
    """A group whose target COMMIT is refused (a deferred foreign key one transaction breaks)
    goes back to the engine: that transaction alone in the error queue (ORA-02091 with
    ORA-02291 as the cause), the others applied; a replay changes nothing."""
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", str(group))
    with pg_admin() as c:
        c.execute(f"CREATE TABLE {schema}.child (id bigint PRIMARY KEY, parent bigint REFERENCES {schema}.t2 (id) "
                  f"DEFERRABLE INITIALLY DEFERRED)")
    o = schema.upper()
    txns = [[lcr("INSERT", o, "T2", 11, None, {"ID": 1, "NAME": "p"}, txn="11.0.1")],
            [lcr("INSERT", o, "CHILD", 12, None, {"ID": 1, "PARENT": 99}, txn="12.0.1")],   # refused
            [lcr("INSERT", o, "CHILD", 13, None, {"ID": 2, "PARENT": 1}, txn="13.0.1")]]
    (groups, fallbacks, _), = _run(dsn, _rows(txns))
    assert fallbacks == 1                 # the set form's COMMIT refused: the engine took it
    with pg_admin() as c:
        assert c.execute(f"SELECT id, parent FROM {schema}.child").fetchall() == [(2, 1)]
        assert c.execute(f"SELECT id FROM {schema}.t2").fetchall() == [(1,)]
    (err,) = conn.query("SELECT SOURCE_COMMIT_SCN, ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY_ERROR", None)[1]
    assert (err[0], err[1]) == (12, 2091) and "ORA-02291" in err[2]
    _run(dsn, _rows(txns))
    assert len(conn.query("SELECT 1 FROM DBA_APPLY_ERROR", None)[1]) == 1


def generated_table(schema: str) -> None:
    """GEN, made again: an identity key GENERATED ALWAYS and a column the target computes."""
    with pg_admin() as c:
        c.execute(f"DROP TABLE IF EXISTS {schema}.gen")
        c.execute(f"CREATE TABLE {schema}.gen (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, a integer, "
                  f"b integer GENERATED ALWAYS AS (a * 2) STORED)")


def generated_workload(owner: str) -> list[list]:
    """Transactions into GEN as captured from a source table defined as it is (the source's
    values of B given, here not the target's): inserts, updates and deletes by the key,
    then an update changing the identity value."""
    def t(scn, *ms):
        return [lcr(cmd, owner, "GEN", scn, old, new, txn=f"{scn}.0.1") for cmd, old, new in ms]
    return [t(11, *[("INSERT", None, {"ID": 100 + i, "A": i, "B": -1}) for i in range(10)]),
            t(12, *[("UPDATE", {"ID": 100 + i, "A": i, "B": -1}, {"ID": 100 + i, "A": i + 10, "B": -1})
                    for i in range(5)]),
            t(13, *[("DELETE", {"ID": 100 + i, "A": i + 10, "B": -1}, None) for i in range(3)]),
            t(14, ("UPDATE", {"ID": 109}, {"ID": 110, "A": 0}))]


@pytest.mark.parametrize("group", [1, 18])    # 18: the first three transactions in one group
def test_generated_and_identity_columns(site, monkeypatch, group):
    """Into a table with an identity key GENERATED ALWAYS and a generated column (captured
    with their values) the sink's set form applies what the engine applies: the key's
    value inserted, the generated column computed by the target (neither written nor
    compared), rows found by the key; an UPDATE changing the identity value goes to the
    error queue (ORA-26714), as the engine puts it there."""
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", str(group))
    txns = generated_workload(schema.upper())

    def state():
        with pg_admin() as c:
            rows = c.execute(f"SELECT * FROM {schema}.gen ORDER BY 1").fetchall()
        errors = conn.query("SELECT SOURCE_COMMIT_SCN, ERROR_NUMBER FROM DBA_APPLY_ERROR", None)[1]
        return rows, [tuple(e) for e in errors]

    ways = []
    for eligible in (False, True):
        generated_table(schema)
        if ways:
            _reset(conn, schema)
        with monkeypatch.context() as m:
            if not eligible:
                m.setattr(setapply.SetApplier, "eligible", lambda self, rows: False)
            (groups, _fallbacks, _), = _run(dsn, _rows(txns))
        assert (groups > 0) == eligible
        ways.append(state())
    assert ways[0] == ways[1]
    rows, errors = ways[1]
    assert rows == [(103, 13, 26), (104, 14, 28)] + [(100 + i, i, 2 * i) for i in range(5, 10)]
    assert errors == [(14, 26714)]
