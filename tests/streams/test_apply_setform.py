"""The apply engine's set form (sluice.streams.apply.setform) against its per-LCR path: the
same LCR stream applied both ways into PostgreSQL leaves the same rows, the same errors
(what the apply process puts in the error queue: code, message number, text) and the same
low-watermark; conflicts inside a set-form transaction are found and resolved as the
per-LCR path does; a replay changes nothing."""

from __future__ import annotations

import datetime
import uuid
from decimal import Decimal

import pytest

import sluice.streams.apply.engine as engine_module
from sluice.streams.apply.definition import engine_for
from sluice.streams.apply.engine import ApplyError, Item, SourceTxn
from sluice.streams.apply.setform import Ineligible, TableShape, array_literal, python_literal, set_statements
from tests.conftest import PG_BASE, drop_schema, pg_admin
from tests.streams.applykit import SOURCE_DB, TargetDb, lcr, procedures

PER_ROW, SET_FORM = 10**9, 1      # SET_FORM_MIN for each way


@pytest.fixture
def target():
    schema = "tgt_set15_" + uuid.uuid4().hex[:8]
    pg_admin().execute(f"CREATE SCHEMA {schema}")
    yield TargetDb("postgresql", f"{PG_BASE}?schema={schema}", schema.upper())
    drop_schema(schema)


def _tables(target):
    target.sql(f"DROP TABLE IF EXISTS {target.table('emp')}, {target.table('acct')}, {target.table('ev')}",
               f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(12), "
               f"sal numeric(10,2), version integer)",
               f"CREATE TABLE {target.table('acct')} (code text PRIMARY KEY, bal bigint, note text, version integer)",
               f"CREATE TABLE {target.table('ev')} (id bigint PRIMARY KEY, at timestamp, day date, "
               f"ratio double precision, amount numeric)")


def txn(scn, *lcrs_):
    return SourceTxn([Item(x) for x in lcrs_], "CAPTURED", SOURCE_DB, scn, f"1.1.{scn}")


def stream(o):
    """Source transactions covering what the set form must get right (comments: why)."""
    def ins(scn, i, name, sal=1, version=1):
        return lcr("INSERT", o, "emp", scn, new={"ID": i, "NAME": name, "SAL": sal, "VERSION": version},
                   txn=f"1.1.{scn}")

    def upd(scn, old, new, table="emp"):
        return lcr("UPDATE", o, table, scn, old=old, new=new, txn=f"1.1.{scn}")

    def dele(scn, old, table="emp"):
        return lcr("DELETE", o, table, scn, old=old, txn=f"1.1.{scn}")

    def acct(scn, code, bal, version):
        return lcr("INSERT", o, "acct", scn, new={"CODE": code, "BAL": bal, "NOTE": None, "VERSION": version},
                   txn=f"1.1.{scn}")

    return [
        # rows inserted, then updated / deleted / deleted and inserted again in the same transaction
        txn(10, *[ins(10, i, f"n{i}", Decimal(i) / 4) for i in range(1, 11)],
            upd(10, {"ID": 3, "NAME": "n3"}, {"NAME": "m3", "VERSION": 2}),
            upd(10, {"ID": 3, "NAME": "m3", "VERSION": 2}, {"VERSION": 3}),
            dele(10, {"ID": 4}), ins(10, 4, "again", 7),
            upd(10, {"ID": 7}, {"ID": 70}),                          # a key changed
            ins(10, 7, "seven"),                                       # … and the old key used again
            *[acct(10, f"a{i}", i * 10, 1) for i in range(5)],
            lcr("INSERT", o, "ev", 10, new={"ID": 1, "AT": datetime.datetime(2026, 11, 28, 18, 1, 2, 345678),
                                            "DAY": datetime.date(2026, 1, 31), "RATIO": 0.1 + 0.2,
                                            "AMOUNT": Decimal("1E+2")}, txn="1.1.10"),
            lcr("INSERT", o, "ev", 10, new={"ID": 2, "AT": None, "DAY": None, "RATIO": float("inf"),
                                            "AMOUNT": 12345678901234567890}, txn="1.1.10")),
        # a row missing (ORA-26787) after others that went fine
        txn(11, ins(11, 20, "x"), upd(11, {"ID": 99, "NAME": "x"}, {"NAME": "y"}), ins(11, 21, "y")),
        # a row changed (ORA-26786): no handler on EMP
        txn(12, ins(12, 22, "x"), upd(12, {"ID": 1, "NAME": "nope"}, {"NAME": "z"})),
        # a duplicate key (ORA-00001)
        txn(13, ins(13, 23, "x"), ins(13, 2, "dup")),
        # a delete of a row that is not there
        txn(14, ins(14, 24, "x"), dele(14, {"ID": 500})),
        # update conflict handler MAXIMUM on ACCT.VERSION: the LCR's version is higher (wins)
        # for a0, lower (loses) for a1; a2 has no conflict
        txn(15, upd(15, {"CODE": "a0", "BAL": 999, "VERSION": 1}, {"BAL": 1, "VERSION": 5}, "acct"),
            upd(15, {"CODE": "a1", "BAL": 999, "VERSION": 1}, {"BAL": 2, "VERSION": 0}, "acct"),
            upd(15, {"CODE": "a2", "BAL": 20, "VERSION": 1}, {"BAL": 3, "VERSION": 2}, "acct")),
        # old value NULL compared as NULL; a value too long for varchar(12)
        txn(16, upd(16, {"CODE": "a3", "NOTE": None}, {"NOTE": "noted"}, "acct"), ins(16, 25, "short")),
        txn(17, ins(17, 26, "much too long a name"), ins(17, 27, "fine")),
        # an update of a row inserted by an earlier transaction, then its delete, in one
        txn(18, upd(18, {"ID": 1, "NAME": "n1"}, {"SAL": 100}), dele(18, {"ID": 1, "SAL": 100}),
            dele(18, {"ID": 2}), ins(18, 2, "back", 2)),
    ]


def run(conn, target, monkeypatch, way, apply_name, drive, fewest=1):
    """Apply :func:`stream` into fresh tables one way; (rows, errors, applied, set-form
    batches, replay); ``fewest``: SET_FORM_FEWEST (1: every set in unnest())."""
    monkeypatch.setattr(engine_module, "SET_FORM_MIN", way)
    monkeypatch.setattr(engine_module, "SET_FORM_FEWEST", fewest)
    monkeypatch.setattr(engine_module, "SET_FORM_AVERAGE", 1)
    _tables(target)
    o = target.owner
    p = procedures(conn)
    p.set_schema_instantiation_scn(o, SOURCE_DB, 0, apply_database_link=target.link)
    p.set_update_conflict_handler(f"{o}.ACCT", "MAXIMUM", "VERSION", "bal,note,version",
                                  apply_database_link=target.link)
    engine = engine_for(conn, apply_name, target.link, b"\x00")
    try:
        errors = drive(engine, stream(o))
        engine.settle()
        failed = {e[0] for e in errors}
        replay = [engine.apply(t) for k, t in enumerate(stream(o)) if k not in failed]   # changes nothing
        rows = {t: target.rows(t) for t in ("emp", "acct", "ev")}
        return rows, errors, dict(engine.applied), engine.set_form_batches, replay
    finally:
        engine.target.close()


def one_by_one(engine, txns):
    """As the apply process's serial path drives it (commit_later, the next one built ahead)."""
    errors = []
    for k, t in enumerate(txns):
        try:
            engine.apply(t, commit_later=True, upcoming=txns[k + 1] if k + 1 < len(txns) else None)
        except ApplyError as e:
            errors.append((k, e.error.code, e.index, str(e.error)))
    return errors


def grouped(engine, txns):
    """GROUPTRANSOPS: groups of three, one by one where a group does not go through."""
    errors = []
    for start in range(0, len(txns), 3):
        group = txns[start:start + 3]
        if engine.apply_group(group):
            continue
        for k, t in enumerate(group, start):
            try:
                engine.apply(t)
            except ApplyError as e:
                errors.append((k, e.error.code, e.index, str(e.error)))
    return errors


@pytest.mark.parametrize("fewest", [1, 3])
@pytest.mark.parametrize("drive", [one_by_one, grouped])
def test_set_form_applies_what_the_per_lcr_path_applies(conn, target, monkeypatch, drive, fewest):
    rows, errors, applied, batches, replay = run(conn, target, monkeypatch, PER_ROW, "APP_ROW", drive)
    assert batches == 0
    set_rows, set_errors, set_applied, set_batches, set_replay = run(conn, target, monkeypatch, SET_FORM,
                                                                     "APP_SET", drive, fewest)
    assert set_batches == 3                      # 10, 16 and 18: the others fall back and fail
    assert set_rows == rows and set_errors == errors and set_applied == applied
    assert replay == set_replay == [False] * len(replay)
    assert [e[1] for e in errors] == [26787, 26786, 1, 26787, 26714]
    emp = {r[0]: r for r in rows["emp"]}
    assert emp[3][1:] == ("m3", Decimal("0.75"), 3) and emp[4][1] == "again" and emp[70][1] == "n7"
    assert emp[7][1] == "seven" and 1 not in emp and emp[2][1] == "back"
    acct = {r[0]: r for r in rows["acct"]}
    assert acct["a0"][1:] == (1, None, 5) and acct["a1"][1:] == (10, None, 1) and acct["a2"][1:] == (3, None, 2)
    assert acct["a3"][2] == "noted"
    ev = {r[0]: r for r in rows["ev"]}
    assert ev[1][3] == 0.1 + 0.2 and ev[1][4] == 100 and ev[2][3] == float("inf")


def _engine(conn, target, monkeypatch, apply_name, average):
    """An engine on fresh tables with SET_FORM_MIN 5, SET_FORM_FEWEST 1 and ``average``."""
    monkeypatch.setattr(engine_module, "SET_FORM_MIN", 5)
    monkeypatch.setattr(engine_module, "SET_FORM_FEWEST", 1)
    monkeypatch.setattr(engine_module, "SET_FORM_AVERAGE", average)
    _tables(target)
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0, apply_database_link=target.link)
    return engine_for(conn, apply_name, target.link, b"\x00"), target.owner


def test_set_form_used_only_where_it_pays(conn, target, monkeypatch):
    """Below SET_FORM_MIN LCRs, or SET_FORM_AVERAGE per table and operation, a transaction keeps
    the per-LCR statements; at them, the set form."""
    engine, o = _engine(conn, target, monkeypatch, "APP_MIN", average=2)
    try:
        small = txn(30, *[lcr("INSERT", o, "emp", 30, new={"ID": i}, txn="1.1.30") for i in range(4)])
        big = txn(31, *[lcr("INSERT", o, "emp", 31, new={"ID": i}, txn="1.1.31") for i in range(4, 9)])
        assert engine.apply(small) and engine.set_form_batches == 0
        assert engine.apply(big) and engine.set_form_batches == 1
        # 6 LCRs over 4 tables and operations: 1.5 per set on average, below 2
        mixed = txn(32, *[lcr("INSERT", o, "emp", 32, new={"ID": i}, txn="1.1.32") for i in range(9, 12)],
                    lcr("DELETE", o, "emp", 32, old={"ID": 0}, txn="1.1.32"),
                    lcr("INSERT", o, "acct", 32, new={"CODE": "x"}, txn="1.1.32"),
                    lcr("INSERT", o, "ev", 32, new={"ID": 1}, txn="1.1.32"))
        assert engine.apply(mixed) and engine.set_form_batches == 1
        assert [r[0] for r in target.rows("emp")] == list(range(1, 12))
    finally:
        engine.target.close()


def test_values_the_set_form_leaves_to_the_per_lcr_path():
    """Values whose text cast to the column's type could differ from what binding them
    gives: a float into numeric (15 digits against all), an int into text (text = bigint is
    an error per LCR), a key of '05' and '5' (one bigint row, two Python values), a time
    zone into a timestamp without one."""
    shape = TableShape("t", {"ID": "bigint", "N": "numeric(10,2)", "T": "text", "AT": "timestamp without time zone",
                             "S": "character varying(10)"}, ["ID"], str)
    assert python_literal(shape, "N", [Decimal("1.5"), 2, None]) == "{1.5,2,NULL}"
    python_literal(shape, "T", ["x", None])
    python_literal(shape, "ID", [1, 2])
    for column, values in [("N", [0.1]), ("T", [5]), ("ID", ["05"]), ("ID", [True]), ("S", [b"x"]),
                           ("AT", [datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)])]:
        with pytest.raises(Ineligible):
            python_literal(shape, column, values)
    assert array_literal(["a\"b\\c", None, "", 5]) == '{"a\\"b\\\\c",NULL,"","5"}'
    # a column that is an array: its values' text in a text[] does not cast to integer[][]
    arrays = TableShape("t", {"ID": "bigint", "ARR": "integer[]", "N": "integer"}, ["ID"], str)
    for change in [("O", "T", "INSERT", {}, {"ID": 1, "ARR": "{1,2}"}, None),
                   ("O", "T", "UPDATE", {"ID": 1}, {"ARR": "{3}"}, None),
                   ("O", "T", "DELETE", {"ID": 1, "ARR": "{3}"}, {}, None)]:
        with pytest.raises(Ineligible):
            set_statements([change], lambda owner, name: arrays)
    assert set_statements([("O", "T", "UPDATE", {"ID": 1}, {"N": 3}, None)], lambda owner, name: arrays)


def test_a_transaction_built_ahead_into_a_table_not_described_yet(conn, target, monkeypatch):
    """The apply process builds the next transaction while the target runs the current one
    (``upcoming``), without asking the target's dictionary; a set-form transaction into a
    table the set form has not described yet is then left for its own turn, which takes it
    in the set form (not built ahead as per-LCR statements, then never described)."""
    engine, o = _engine(conn, target, monkeypatch, "APP_AHEAD", average=5)
    try:
        small = txn(40, lcr("INSERT", o, "emp", 40, new={"ID": 0}, txn="1.1.40"))
        big = [txn(41 + k, *[lcr("INSERT", o, "emp", 41 + k, new={"ID": 100 * (k + 1) + i}, txn=f"1.1.{41 + k}")
                             for i in range(6)]) for k in range(3)]
        work = [small, *big]
        for k, t in enumerate(work):
            assert engine.apply(t, commit_later=True, upcoming=work[k + 1] if k + 1 < len(work) else None)
        engine.settle()
        assert engine.set_form_batches == 3 and len(target.rows("emp")) == 19
    finally:
        engine.target.close()


@pytest.mark.parametrize("drive", [one_by_one, grouped])
def test_generated_and_identity_columns_in_the_set_form(conn, target, monkeypatch, drive):
    """Into a table with an identity key GENERATED ALWAYS and a generated column the set
    form inserts the key's value (OVERRIDING SYSTEM VALUE), neither writes nor compares the
    generated column and finds rows by the key, as the per-LCR path does; an UPDATE that
    would change the identity value falls back to the per-LCR path, which refuses it."""
    engine, o = _engine(conn, target, monkeypatch, f"APP_GEN_{drive.__name__}".upper(), average=1)
    target.sql(f"CREATE TABLE {target.table('gen')} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
               f"a integer, b integer GENERATED ALWAYS AS (a * 2) STORED)")

    def t(scn, *ms):
        return txn(scn, *[lcr(cmd, o, "gen", scn, old=old, new=new, txn=f"1.1.{scn}") for cmd, old, new in ms])
    work = [t(50, *[("INSERT", None, {"ID": 100 + i, "A": i, "B": -1}) for i in range(10)]),
            t(51, *[("UPDATE", {"ID": 100 + i, "A": i, "B": -1}, {"ID": 100 + i, "A": i + 10, "B": -1})
                    for i in range(5)]),
            t(52, *[("DELETE", {"ID": 100 + i, "A": i + 10, "B": -1}, None) for i in range(5)]),
            # the last one changes its identity value
            t(53, *[("UPDATE", {"ID": 100 + i}, {"ID": 100 + i + (i == 9), "A": 0}) for i in range(5, 10)])]
    try:
        errors = drive(engine, work)
        engine.settle()
        assert engine.set_form_batches == (3 if drive is one_by_one else 1)
        assert [e[:3] for e in errors] == [(3, 26714, 4)] and '"ID" is GENERATED ALWAYS AS IDENTITY' in errors[0][3]
        assert target.rows("gen") == [(100 + i, i, 2 * i) for i in range(5, 10)]
    finally:
        engine.target.close()


def test_a_table_altered_behind_the_apply_in_the_set_form(conn, target, monkeypatch):
    """A table the set form described, made again with a generated column in the target:
    the transaction that meets it is applied (the per-LCR path describes the table again)
    and the next one takes the set form with the new description."""
    engine, o = _engine(conn, target, monkeypatch, "APP_ALTERED", average=1)
    g = target.table("alt")
    target.sql(f"CREATE TABLE {g} (id bigint PRIMARY KEY, a integer, b integer)")

    def t(scn, first):
        return txn(scn, *[lcr("INSERT", o, "alt", scn, new={"ID": i, "A": i, "B": -1}, txn=f"1.1.{scn}")
                          for i in range(first, first + 6)])
    try:
        assert engine.apply(t(60, 0)) and engine.set_form_batches == 1
        target.sql(f"DROP TABLE {g}",
                   f"CREATE TABLE {g} (id bigint PRIMARY KEY, a integer, b integer GENERATED ALWAYS AS (a * 2) STORED)")
        assert engine.apply(t(61, 10)) and engine.set_form_batches == 1
        assert engine.apply(t(62, 20)) and engine.set_form_batches == 2
        assert target.rows("alt") == [(i, i, 2 * i) for k in (10, 20) for i in range(k, k + 6)]
    finally:
        engine.target.close()


@pytest.mark.parametrize("way", [PER_ROW, SET_FORM])
def test_columns_of_domains(conn, target, monkeypatch, way):
    """A column of a domain is described by the domain's base type, as capture gives its
    values: a boolean domain (a domain over it too) takes capture's NUMBER 1/0 as the
    boolean column does and compares it as an old value (ORA-26714 "column is of type flag
    but expression is of type smallint" / "operator does not exist: flag = smallint"
    before); a domain's CHECK is ORA-02290.  The set form (booleans are not its) takes a
    table of domains over integer, its arrays cast to the base type."""
    engine, o = _engine(conn, target, monkeypatch, f"APP_DOM_{way}", average=1)
    monkeypatch.setattr(engine_module, "SET_FORM_MIN", way)
    s = o.lower()
    target.sql(f"CREATE DOMAIN {s}.flag AS boolean", f"CREATE DOMAIN {s}.flag2 AS {s}.flag",
               f"CREATE DOMAIN {s}.posint AS integer CHECK (VALUE > 0)",
               f"CREATE TABLE {target.table('dom')} (id {s}.posint PRIMARY KEY, f {s}.flag, g {s}.flag2, "
               f"n {s}.posint)")

    def t(scn, cmd, rows):
        return txn(scn, *[lcr(cmd, o, "dom", scn, old=old, new=new, txn=f"1.1.{scn}") for old, new in rows])
    try:
        assert engine.apply(t(70, "INSERT", [(None, {"ID": i, "F": i % 2, "G": 1, "N": i}) for i in range(1, 7)]))
        assert engine.apply(t(71, "UPDATE", [({"ID": i, "F": i % 2}, {"F": 1 - i % 2, "N": 10 * i})
                                             for i in range(1, 7)]))
        assert engine.apply(t(72, "DELETE", [({"ID": i, "F": 1 - i % 2, "G": 1}, None) for i in range(1, 4)]))
        with pytest.raises(ApplyError) as e:
            engine.apply(t(73, "INSERT", [(None, {"ID": 9, "N": -1})]))
        assert e.value.error.code == 2290 and "posint_check" in str(e.value.error)
        assert target.rows("dom") == [(i, i % 2 == 0, True, 10 * i) for i in range(4, 7)]
        assert engine.set_form_batches == 0
        target.sql(f"CREATE TABLE {target.table('dom2')} (id {s}.posint PRIMARY KEY, n {s}.posint)")
        assert engine.apply(txn(74, *[lcr("INSERT", o, "dom2", 74, new={"ID": i, "N": i}, txn="1.1.74")
                                      for i in range(1, 7)]))
        with pytest.raises(ApplyError) as e:
            engine.apply(txn(75, *[lcr("UPDATE", o, "dom2", 75, old={"ID": i, "N": i}, new={"N": 6 - i},
                                       txn="1.1.75") for i in range(3, 7)]))
        assert (e.value.error.code, e.value.index) == (2290, 3)
        assert target.rows("dom2") == [(i, i) for i in range(1, 7)]
        assert engine.set_form_batches == (0 if way == PER_ROW else 1)
    finally:
        engine.target.close()
