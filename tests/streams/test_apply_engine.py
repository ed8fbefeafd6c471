"""The apply engine (issue 15 §1 "Applying", §3 conflicts): row LCRs become DML on
PostgreSQL and SQLite targets, one target transaction per source transaction with the
low-watermark in it (a replay changes nothing), instantiation SCNs, key columns,
conflicts and update conflict handlers, DML handlers and LCR.EXECUTE().

Spec: seed 001 "Queues and Apply Processes"; Oracle's DBMS_APPLY_ADM for the procedures.
Every test runs with the store on both backends and the target on both databases."""

from __future__ import annotations

from decimal import Decimal

import pytest

import sluice
from sluice.streams.apply.engine import ApplyError, Item, SourceTxn
from sluice.streams.apply.definition import engine_for
from tests.conftest import pg_admin
from tests.streams.applykit import SOURCE_DB, lcr, procedures, target  # noqa: F401


def make_emp(target):
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40), "
               f"sal numeric(10,2), version integer)")


def txn(*lcrs_):
    first = lcrs_[0]
    return SourceTxn([Item(x) for x in lcrs_], "CAPTURED", SOURCE_DB, first.get_commit_scn(),
                     first.get_transaction_id())


@pytest.fixture
def engine(conn, target):
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0,
                                                  apply_database_link=target.link)
    e = engine_for(conn, "APP1", target.link, b"\x00")
    yield e
    e.target.close()


def test_dml_in_source_transactions_and_replay(engine, target, conn):
    """INSERT, UPDATE and DELETE LCRs are applied as DML with their values; each source
    transaction is one target transaction; delivering a transaction again changes nothing
    (the low-watermark is in the target, written with the changes)."""
    make_emp(target)
    o = target.owner
    t1 = txn(lcr("INSERT", o, "emp", 10, new={"ID": 1, "NAME": "King", "SAL": Decimal("5000.50"), "VERSION": 1}),
             lcr("INSERT", o, "emp", 10, new={"ID": 2, "NAME": "Blake", "SAL": 2850, "VERSION": 1}),
             lcr("INSERT", o, "emp", 10, new={"ID": 3, "NAME": None, "SAL": 1, "VERSION": 1}))
    t2 = txn(lcr("UPDATE", o, "emp", 20, old={"ID": 1}, new={"SAL": 6000, "VERSION": 2}, txn="1.1.2"),
             lcr("DELETE", o, "emp", 20, old={"ID": 2}, txn="1.1.2"))
    assert engine.apply(t1) and engine.apply(t2)
    assert target.rows("emp") == [(1, "King", Decimal("6000.00") if target.kind == "postgresql" else 6000, 2),
                                  (3, None, 1, 1)]
    assert engine.apply(t1) is False and engine.apply(t2) is False      # a replay
    assert len(target.rows("emp")) == 2
    fresh = engine_for(conn, "APP1", target.link, b"\x00")              # after a restart too
    try:
        assert fresh.apply(t2) is False
        assert fresh.applied == {SOURCE_DB: 20}
    finally:
        fresh.target.close()


def test_instantiation_scn_skips_older_lcrs(engine, target, conn):
    """SET_TABLE_INSTANTIATION_SCN: LCRs at or below the SCN are not applied; the view
    shows it; without any instantiation SCN a captured LCR is an error (ORA-26687)."""
    make_emp(target)
    o = target.owner
    procedures(conn).set_table_instantiation_scn(f"{o}.EMP", SOURCE_DB, 15, apply_database_link=target.link)
    engine.apply(txn(lcr("INSERT", o, "emp", 15, new={"ID": 1, "NAME": "old"})))
    engine.apply(txn(lcr("INSERT", o, "emp", 16, new={"ID": 2, "NAME": "new"})))
    assert [r[0] for r in target.rows("emp")] == [2]
    cols, rows = conn.query("SELECT SOURCE_DATABASE, SOURCE_OBJECT_OWNER, SOURCE_OBJECT_NAME, "
                            "INSTANTIATION_SCN FROM DBA_APPLY_INSTANTIATED_OBJECTS", None)
    assert rows == [(SOURCE_DB, o, "EMP", 15)]
    procedures(conn).set_schema_instantiation_scn(o, SOURCE_DB, None, apply_database_link=target.link)
    procedures(conn).set_table_instantiation_scn(f"{o}.EMP", SOURCE_DB, None, apply_database_link=target.link)
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(lcr("INSERT", o, "emp", 30, new={"ID": 3})))
    assert e.value.error.code == 26687


def test_key_columns_for_a_table_without_primary_key(engine, target, conn):
    """SET_KEY_COLUMNS: the columns that find the row when the table has no primary key."""
    target.sql(f"CREATE TABLE {target.table('nokey')} (code varchar(10), val integer)")
    o = target.owner
    procedures(conn).set_key_columns(f"{o}.NOKEY", "code", apply_database_link=target.link)
    assert conn.query("SELECT OBJECT_NAME, COLUMN_NAME FROM DBA_APPLY_KEY_COLUMNS", None)[1] == [("NOKEY", "CODE")]
    engine.apply(txn(lcr("INSERT", o, "nokey", 5, new={"CODE": "a", "VAL": 1}),
                     lcr("INSERT", o, "nokey", 5, new={"CODE": "b", "VAL": 1})))
    engine.apply(txn(lcr("UPDATE", o, "nokey", 6, old={"CODE": "a"}, new={"VAL": 7})))
    assert target.rows("nokey") == [("a", 7), ("b", 1)]


def test_conflicts_reported_as_oracle_does(engine, target):
    """A missing row (ORA-26787), a row whose values differ from the LCR's old values
    (ORA-26786 naming the columns), a duplicate key (ORA-00001); nothing of the failing
    transaction stays in the target."""
    make_emp(target)
    o = target.owner
    engine.apply(txn(lcr("INSERT", o, "emp", 5, new={"ID": 1, "NAME": "King", "SAL": 10, "VERSION": 1})))
    cases = [
        (lcr("UPDATE", o, "emp", 6, old={"ID": 9, "NAME": "x"}, new={"NAME": "y"}), 26787),
        (lcr("DELETE", o, "emp", 6, old={"ID": 9}), 26787),
        (lcr("UPDATE", o, "emp", 6, old={"ID": 1, "NAME": "Kong"}, new={"NAME": "y"}), 26786),
        (lcr("DELETE", o, "emp", 6, old={"ID": 1, "SAL": 11}), 26786),
        (lcr("INSERT", o, "emp", 6, new={"ID": 1, "NAME": "dup"}), 1),
    ]
    for bad, code in cases:
        good = lcr("INSERT", o, "emp", 6, new={"ID": 50, "NAME": "before"})
        with pytest.raises(ApplyError) as e:
            engine.apply(txn(good, bad))
        assert e.value.error.code == code and e.value.index == 1
        if code == 26786:
            assert "NAME" in str(e.value.error) or "SAL" in str(e.value.error)
        assert [r[0] for r in target.rows("emp")] == [1]
    assert engine.applied == {SOURCE_DB: 5}


def test_constraint_violations_reported_as_oracle_does(engine, target):
    """A target constraint an LCR violates is its transaction's error as Oracle's apply
    reports it (what the error queue shows), not ORA-26714 around the target's text: a CHECK
    constraint ORA-02290, a NOT NULL column ORA-01400 (an UPDATE: ORA-01407), a foreign key
    ORA-02291 (no parent) / ORA-02292 (children left); a trigger's own error stays ORA-26714
    with its text; a DEFAULT fills a column the LCR lacks."""
    o = target.owner
    pg = target.kind == "postgresql"
    target.sql(f"CREATE TABLE {target.table('ck')} (id integer PRIMARY KEY, a integer DEFAULT 7 "
               f"CONSTRAINT ck_a CHECK (a > 0), c integer NOT NULL DEFAULT 1, d integer NOT NULL)",
               f"CREATE TABLE {target.table('par')} (id integer PRIMARY KEY)",
               f"CREATE TABLE {target.table('kid')} (id integer PRIMARY KEY, pid integer "
               f"CONSTRAINT kid_fk REFERENCES {target.table('par')} (id))",
               f"INSERT INTO {target.table('par')} VALUES (1)", f"INSERT INTO {target.table('kid')} VALUES (1, 1)",
               f"INSERT INTO {target.table('ck')} (id, d) VALUES (1, 1)")
    if pg:
        target.sql(f"CREATE FUNCTION {o.lower()}.boom() RETURNS trigger LANGUAGE plpgsql AS "
                   f"$$ BEGIN RAISE EXCEPTION 'boom %', NEW.id; END $$",
                   f"CREATE TRIGGER boom BEFORE INSERT ON {target.table('par')} FOR EACH ROW "
                   f"EXECUTE FUNCTION {o.lower()}.boom()")
    else:
        target.sql(f"CREATE TRIGGER boom BEFORE INSERT ON {target.table('par')} BEGIN SELECT RAISE(ABORT, 'boom'); END")
    cases = [(lcr("INSERT", o, "ck", 6, new={"ID": 2, "A": -1, "D": 1}), 2290, "ck_a"),
             (lcr("UPDATE", o, "ck", 6, old={"ID": 1}, new={"A": 0}), 2290, "ck_a"),
             (lcr("INSERT", o, "ck", 6, new={"ID": 2}), 1400, f'"{o}"."CK"."D"' if pg else ".d"),
             (lcr("UPDATE", o, "ck", 6, old={"ID": 1}, new={"C": None}), 1407, f'"{o}"."CK"."C"' if pg else ".c"),
             (lcr("INSERT", o, "kid", 6, new={"ID": 2, "PID": 9}), 2291, "kid_fk" if pg else "FOREIGN KEY"),
             (lcr("DELETE", o, "par", 6, old={"ID": 1}), 2292, "kid_fk" if pg else "FOREIGN KEY"),
             (lcr("INSERT", o, "par", 6, new={"ID": 2}), 26714, "boom")]
    for bad, code, named in cases:
        with pytest.raises(ApplyError) as e:
            engine.apply(txn(lcr("INSERT", o, "ck", 6, new={"ID": 50, "D": 1}), bad))
        assert (e.value.error.code, e.value.index) == (code, 1) and named in str(e.value.error)
    assert engine.apply(txn(lcr("INSERT", o, "ck", 7, new={"ID": 3, "D": 3}, txn="1.1.7")))
    assert target.rows("ck") == [(1, 7, 1, 1), (3, 7, 1, 3)]


def test_a_null_into_a_primary_key_column_is_ora_01400(engine, target):
    """A primary key column is NOT NULL in Oracle: an LCR writing NULL into one fails with
    ORA-01400 (INSERT) / ORA-01407 (UPDATE) naming the column, on both targets.  SQLite
    took the NULL: an ``integer PRIMARY KEY`` (the rowid) the next rowid, any other
    PRIMARY KEY column the NULL itself (SQLite's legacy rule)."""
    o = target.owner
    target.sql(f"CREATE TABLE {target.table('rk')} (id integer PRIMARY KEY, name varchar(10))",
               f"CREATE TABLE {target.table('tk')} (code varchar(10) PRIMARY KEY, n integer)",
               f"INSERT INTO {target.table('rk')} VALUES (1, 'a')",
               f"INSERT INTO {target.table('tk')} VALUES ('a', 1)")
    cases = [(lcr("INSERT", o, "rk", 6, new={"ID": None, "NAME": "x"}), 1400, f'"{o}"."RK"."ID"'),
             (lcr("INSERT", o, "tk", 6, new={"CODE": None, "N": 2}), 1400, f'"{o}"."TK"."CODE"'),
             (lcr("UPDATE", o, "rk", 6, old={"ID": 1}, new={"ID": None}), 1407, f'"{o}"."RK"."ID"'),
             (lcr("UPDATE", o, "tk", 6, old={"CODE": "a"}, new={"CODE": None}), 1407, f'"{o}"."TK"."CODE"')]
    for bad, code, named in cases:
        with pytest.raises(ApplyError) as e:
            engine.apply(txn(lcr("INSERT", o, "rk", 6, new={"ID": 50, "NAME": "before"}), bad))
        assert (e.value.error.code, e.value.index) == (code, 1) and named in str(e.value.error), e.value.error
    assert target.rows("rk") == [(1, "a")] and target.rows("tk") == [("a", 1)]
    assert engine.apply(txn(lcr("INSERT", o, "tk", 7, new={"CODE": "b", "N": None}, txn="1.1.7")))
    assert target.rows("tk") == [("a", 1), ("b", None)]


def test_a_key_more_than_one_row_has(engine, target, conn):
    """A table without a key holding two identical rows (every old value is the key): an
    UPDATE or DELETE of one of them fails with ORA-01422, as Oracle's apply does, instead of
    changing both (an UPDATE, through the conflict path, did) or reporting ORA-26786 with
    no column; so does a SET_KEY_COLUMNS key the rows share.  The message names the table
    and the key with each value cut short (a key of 10 KB texts made a 10 KB message), as
    ORA-26787 does."""
    o = target.owner
    big = "x" * 10_000
    target.sql(f"CREATE TABLE {target.table('dup')} (a integer, b text)",
               f"INSERT INTO {target.table('dup')} VALUES (1, '{big}')",
               f"INSERT INTO {target.table('dup')} VALUES (1, '{big}')")
    for bad in (lcr("DELETE", o, "dup", 6, old={"A": 1, "B": big}),
                lcr("UPDATE", o, "dup", 6, old={"A": 1, "B": big}, new={"A": 2})):
        with pytest.raises(ApplyError) as e:
            engine.apply(txn(bad))
        assert e.value.error.code == 1422 and len(str(e.value.error)) < 300
        assert f'"{o}"."DUP"' in str(e.value.error) and "A=1, B='xxx" in str(e.value.error)
    assert [r[0] for r in target.rows("dup")] == [1, 1]
    with pytest.raises(ApplyError) as e:       # a missing row: its key cut short too
        engine.apply(txn(lcr("DELETE", o, "dup", 7, old={"A": 5, "B": big})))
    assert e.value.error.code == 26787 and len(str(e.value.error)) < 300
    procedures(conn).set_key_columns(f"{o}.DUP", "a", apply_database_link=target.link)
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(lcr("UPDATE", o, "dup", 8, old={"A": 1, "B": "other"}, new={"B": "y"})))
    assert e.value.error.code == 1422
    assert [r[0] for r in target.rows("dup")] == [1, 1]


@pytest.mark.parametrize("method, wins", [("OVERWRITE", True), ("DISCARD", False),
                                          ("MAXIMUM", True), ("MINIMUM", False)])
def test_update_conflict_handlers(engine, target, conn, method, wins):
    """SET_UPDATE_CONFLICT_HANDLER: a conflict in a column group is resolved by its method
    (MAXIMUM / MINIMUM on the resolution column); columns outside the group take the new
    values; DBA_APPLY_CONFLICT_COLUMNS lists the group."""
    make_emp(target)
    o = target.owner
    procedures(conn).set_update_conflict_handler(f"{o}.EMP", method, "VERSION", "name,sal,version",
                                                 apply_database_link=target.link)
    rows = conn.query("SELECT METHOD_NAME, RESOLUTION_COLUMN, COLUMN_NAME FROM DBA_APPLY_CONFLICT_COLUMNS "
                      "ORDER BY COLUMN_NAME", None)[1]
    assert rows == [(method, "VERSION", c) for c in ("NAME", "SAL", "VERSION")]
    engine.apply(txn(lcr("INSERT", o, "emp", 5, new={"ID": 1, "NAME": "King", "SAL": 10, "VERSION": 3})))
    # the source thought the row was at version 1 (another site moved it to 3 meanwhile)
    engine.apply(txn(lcr("UPDATE", o, "emp", 6, old={"ID": 1, "NAME": "King", "VERSION": 1},
                         new={"NAME": "Queen", "VERSION": 4})))
    name, version = target.rows("emp")[0][1], target.rows("emp")[0][3]
    assert (name, version) == (("Queen", 4) if wins else ("King", 3))


def test_unresolved_column_outside_every_group(engine, target, conn):
    make_emp(target)
    o = target.owner
    procedures(conn).set_update_conflict_handler(f"{o}.EMP", "OVERWRITE", "SAL", ["SAL"],
                                                 apply_database_link=target.link)
    engine.apply(txn(lcr("INSERT", o, "emp", 5, new={"ID": 1, "NAME": "King", "SAL": 10, "VERSION": 3})))
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(lcr("UPDATE", o, "emp", 6, old={"ID": 1, "NAME": "Kong"}, new={"NAME": "Q"})))
    assert e.value.error.code == 26786
    with pytest.raises(sluice.DatabaseError) as bad:
        procedures(conn).set_update_conflict_handler(f"{o}.EMP", "LATEST", "SAL", ["SAL"])
    assert bad.value.code == 26693


def test_resolved_update_the_target_refuses(engine, target, conn):
    """An update conflict resolved (OVERWRITE) whose UPDATE the target refuses (a CHECK
    constraint) is the transaction's error, ORA-02290, as the statement's own would be: a
    TargetError escaped the apply before (no error queue, the apply process stopped)."""
    o = target.owner
    target.sql(f"CREATE TABLE {target.table('res')} (id integer PRIMARY KEY, a integer CONSTRAINT res_a CHECK (a > 0), "
               f"v integer)", f"INSERT INTO {target.table('res')} VALUES (1, 5, 1)")
    procedures(conn).set_update_conflict_handler(f"{o}.RES", "OVERWRITE", "V", ["A", "V"],
                                                 apply_database_link=target.link)
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(lcr("UPDATE", o, "res", 6, old={"ID": 1, "A": 4}, new={"A": -1})))
    assert (e.value.error.code, e.value.index) == (2290, 0) and "res_a" in str(e.value.error)
    assert engine.apply(txn(lcr("UPDATE", o, "res", 7, old={"ID": 1, "A": 4}, new={"A": 9}, txn="1.1.7")))
    assert target.rows("res") == [(1, 9, 1)]


def test_dml_handler_and_lcr_execute(engine, target, conn):
    """SET_DML_HANDLER: a procedure registered by name gets the row LCR instead of the
    apply applying it; it may change it and apply it with LCR.EXECUTE(); an error handler
    is called only for an LCR that fails; DBA_APPLY_DML_HANDLERS shows both."""
    make_emp(target)
    o = target.owner
    seen = []

    def upper_name(row):
        seen.append(row.get_command_type())
        row.set_value("NEW", "NAME", row.get_value("NEW", "NAME").value.upper())
        row.execute(True)

    def ignore_missing(row, depth, numbers, messages):
        seen.append(("error", numbers[0]))

    sluice.register_function("apply_test.upper_name", upper_name)
    sluice.register_function("apply_test.ignore_missing", ignore_missing)
    p = procedures(conn)
    p.set_dml_handler(f"{o}.EMP", "TABLE", "INSERT", False, "apply_test.upper_name",
                      apply_database_link=target.link)
    p.set_dml_handler(f"{o}.EMP", "TABLE", "DELETE", True, "apply_test.ignore_missing",
                      apply_database_link=target.link)
    handlers = conn.query("SELECT OPERATION_NAME, USER_PROCEDURE, ERROR_HANDLER FROM DBA_APPLY_DML_HANDLERS "
                          "ORDER BY OPERATION_NAME", None)[1]
    assert handlers == [("DELETE", "apply_test.ignore_missing", "Y"), ("INSERT", "apply_test.upper_name", "N")]
    engine.apply(txn(lcr("INSERT", o, "emp", 5, new={"ID": 1, "NAME": "king"}),
                     lcr("DELETE", o, "emp", 5, old={"ID": 77})))
    assert [r[:2] for r in target.rows("emp")] == [(1, "KING")]
    assert seen == ["INSERT", ("error", 26787)]
    with pytest.raises(sluice.DatabaseError) as e:      # outside a handler there is no apply
        lcr("INSERT", o, "emp", 1, new={"ID": 1}).execute()
    assert e.value.code == 26714


def test_two_copies_apply_a_transaction_once(engine, target, conn):
    """Two copies of an apply process (a host whose lease was lost, for a moment) given the
    same transaction: the second waits for the first's watermark row lock, then finds the
    transaction applied; the changes are made once."""
    import threading
    import time
    make_emp(target)
    o = target.owner
    sluice.register_function("apply_test.slow_insert", lambda row: (time.sleep(0.5), row.execute())[1])
    procedures(conn).set_dml_handler(f"{o}.EMP", "TABLE", "INSERT", False, "apply_test.slow_insert",
                                     apply_database_link=target.link)
    other = engine_for(conn, "APP1", target.link, b"\x00")
    t = txn(lcr("INSERT", o, "emp", 40, new={"ID": 1, "NAME": "once"}))
    results = []
    first = threading.Thread(target=lambda: results.append(engine.apply(t)))
    first.start()
    time.sleep(0.2)
    try:
        results.append(other.apply(t))
    finally:
        first.join()
        other.target.close()
    assert sorted(results) == [False, True]
    assert target.rows("emp") == [(1, "once", None, None)]


def test_ddl_precommit_handlers_and_truncate(conn, target):
    """The DDL handler gets DDL LCRs instead of the apply running them; the precommit handler
    is called with each transaction's commit SCN before it commits (in it); without a DDL
    handler TRUNCATE TABLE empties the table on either database, and other DDL runs on
    PostgreSQL and, said in SQLite, on SQLite (what SQLite cannot express: ORA-26714)."""
    from sluice.streams import DDLLCR
    from sluice.streams.apply.definition import ApplyDefinition
    make_emp(target)
    o = target.owner
    procedures(conn).set_schema_instantiation_scn(o, SOURCE_DB, 0, apply_database_link=target.link)
    seen = []
    sluice.register_function("apply_test.on_ddl", lambda ddl: seen.append(("ddl", ddl.get_command_type())))
    sluice.register_function("apply_test.precommit", lambda scn: seen.append(("commit", scn)))
    d = ApplyDefinition("APP2", conn.username, "Q", ddl_handler="apply_test.on_ddl",
                        precommit_handler="apply_test.precommit")
    e = engine_for(conn, "APP2", target.link, b"\x00", d)

    def ddl(cmd, text, scn):
        return DDLLCR.construct(SOURCE_DB, cmd, o, "EMP", "TABLE", text, None, o, o, "EMP", None, f"d{scn}", scn,
                                commit_scn=scn)
    try:
        e.apply(txn(lcr("INSERT", o, "emp", 5, new={"ID": 1, "NAME": "a"})))
        e.apply(txn(ddl("ALTER TABLE", "ALTER TABLE emp ADD COLUMN note text", 6)))
        assert seen == [("commit", 5), ("ddl", "ALTER TABLE"), ("commit", 6)]
    finally:
        e.target.close()
    plain = engine_for(conn, "APP3", target.link, b"\x00")
    try:
        # on PostgreSQL the captured statement runs; on SQLite it is said in SQLite (.sqliteddl)
        plain.apply(txn(ddl("ALTER TABLE", f"ALTER TABLE {o.lower()}.emp ADD COLUMN note text", 7)))
        plain.apply(txn(lcr("INSERT", o, "emp", 8, new={"ID": 2, "NAME": "b", "NOTE": "new column"})))
        assert target.rows("emp")[-1] == (2, "b", None, None, "new column")
        if target.kind == "sqlite":      # what SQLite's ALTER TABLE cannot do fails the transaction
            with pytest.raises(ApplyError) as refused:
                plain.apply(txn(ddl("ALTER TABLE", f"ALTER TABLE {o.lower()}.emp ALTER COLUMN note TYPE int", 9)))
            assert refused.value.error.code == 26714 and "ALTER COLUMN" in str(refused.value.error)
        plain.apply(txn(ddl("TRUNCATE TABLE", f"TRUNCATE TABLE {target.table('emp')}", 10)))
        assert target.rows("emp") == []
    finally:
        plain.target.close()


def test_sqlite_table_named_like_synchronous_capture(conn, tmp_path):
    """On an SQLite target ``OWNER.OBJECT`` is the table ``"OWNER.OBJECT"`` when the file has
    one, else the table ``OBJECT`` (how synchronous capture names SQLite tables)."""
    import sqlite3
    path = tmp_path / "plain.db"
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE regions (region_id integer PRIMARY KEY, region_name text)")
    link = f"sqlite:///{path}"
    procedures(conn).set_schema_instantiation_scn("HR", SOURCE_DB, 0, apply_database_link=link)
    e = engine_for(conn, "APP1", link, b"\x00")
    try:
        e.apply(txn(lcr("INSERT", "HR", "regions", 5, new={"REGION_ID": 1, "REGION_NAME": "Europe"})))
    finally:
        e.target.close()
    with sqlite3.connect(path) as c:
        assert c.execute("SELECT * FROM regions").fetchall() == [(1, "Europe")]


def test_out_of_order_transactions_each_applied_once(engine, target):
    """Exactly once does not rest on commit order: a later source transaction applied first
    (parallel servers without commit serialization, a second copy of the process) leaves the
    earlier one to be applied still; each is applied once."""
    make_emp(target)
    o = target.owner
    late = txn(lcr("INSERT", o, "emp", 30, new={"ID": 3, "NAME": "late"}, txn="1.1.30"))
    early = txn(lcr("INSERT", o, "emp", 20, new={"ID": 2, "NAME": "early"}, txn="1.1.20"))
    assert engine.apply(late) and engine.apply(early)
    assert engine.apply(late) is False and engine.apply(early) is False
    assert [r[:2] for r in target.rows("emp")] == [(2, "early"), (3, "late")]
    assert engine.already_applied(early) and engine.applied == {SOURCE_DB: 30}


def test_source_transactions_grouped_into_one_target_transaction(engine, target):
    """apply_group: several plain source transactions in one target transaction, each with
    its SLUICE_APPLY_DONE record (a replay of any of them changes nothing); a group one of
    whose transactions conflicts or was applied before leaves nothing in the target and
    says so (False), and applying them one at a time then finds which."""
    make_emp(target)
    o = target.owner
    t1 = txn(lcr("INSERT", o, "emp", 40, new={"ID": 1, "NAME": "a", "VERSION": 1}, txn="1.1.40"),
             lcr("INSERT", o, "emp", 40, new={"ID": 2, "NAME": "b", "VERSION": 1}, txn="1.1.40"))
    t2 = txn(lcr("UPDATE", o, "emp", 41, old={"ID": 1, "NAME": "a"}, new={"NAME": "a2"}, txn="1.1.41"),
             lcr("INSERT", o, "emp", 41, new={"ID": 3, "NAME": "c"}, txn="1.1.41"),
             lcr("DELETE", o, "emp", 41, old={"ID": 2}, txn="1.1.41"))
    assert engine.groupable(t1) and engine.groupable(t2)
    assert engine.apply_group([t1, t2]) is True
    assert [r[:2] for r in target.rows("emp")] == [(1, "a2"), (3, "c")]
    assert engine.applied == {SOURCE_DB: 41}
    assert engine.apply(t1) is False and engine.apply(t2) is False        # each recorded as applied
    t3 = txn(lcr("INSERT", o, "emp", 42, new={"ID": 4, "NAME": "d"}, txn="1.1.42"))
    bad = txn(lcr("UPDATE", o, "emp", 43, old={"ID": 9, "NAME": "x"}, new={"NAME": "y"}, txn="1.1.43"))
    assert engine.apply_group([t3, bad]) is False                          # a conflict: nothing stays
    assert engine.apply_group([t2, t3]) is False                           # t2 applied before
    assert [r[0] for r in target.rows("emp")] == [1, 3]
    assert engine.apply(t3) is True
    with pytest.raises(ApplyError) as e:
        engine.apply(bad)
    assert e.value.error.code == 26787
    assert [r[0] for r in target.rows("emp")] == [1, 3, 4] and engine.applied == {SOURCE_DB: 42}


def test_large_transaction_through_the_pipeline_in_chunks(engine, target):
    """A transaction of more statements than one pipeline sync takes (PostgreSQL: libpq's
    pipeline, synced every 500) is applied whole; a conflict in its last chunk leaves
    nothing of it."""
    make_emp(target)
    o = target.owner
    rows = [lcr("INSERT", o, "emp", 50, new={"ID": i, "NAME": f"n{i}", "SAL": i, "VERSION": None},
                txn="1.1.50") for i in range(1, 1201)]
    assert engine.apply(txn(*rows)) is True
    assert len(target.rows("emp")) == 1200
    more = [lcr("UPDATE", o, "emp", 51, old={"ID": i}, new={"VERSION": 2}, txn="1.1.51") for i in range(1, 1100)]
    more.append(lcr("DELETE", o, "emp", 51, old={"ID": 5000}, txn="1.1.51"))
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(*more))
    assert e.value.error.code == 26787 and e.value.index == 1099
    assert all(r[3] is None for r in target.rows("emp"))


def test_commit_later(engine, target):
    """``apply(commit_later=True)``, as the apply process's serial path calls it: the target
    commit may still be on its way when it returns; ``settle`` reads its outcome.  A commit
    that fails there (a deferred constraint) raises a DatabaseError — from ``settle``, or
    from the next use of the target, even the rollback after another transaction's error —
    and nothing of that transaction stays; the engine applies on afterwards."""
    make_emp(target)
    o = target.owner
    assert engine.apply(txn(lcr("INSERT", o, "emp", 10, new={"ID": 1, "NAME": "King", "SAL": 1, "VERSION": 1})),
                        commit_later=True)
    assert engine.apply(txn(lcr("INSERT", o, "emp", 11, new={"ID": 2, "NAME": "Ford", "SAL": 1, "VERSION": 1},
                                txn="1.1.2")), commit_later=True)
    engine.settle()
    engine.settle()                  # nothing on its way: nothing to do
    assert [r[0] for r in target.rows("emp")] == [1, 2]
    if target.kind != "postgresql":  # SQLite commits at once (its commit is local)
        return
    target.sql(f"CREATE TABLE {target.table('bonus')} (id integer PRIMARY KEY, emp integer "
               f"REFERENCES {target.table('emp')} (id) DEFERRABLE INITIALLY DEFERRED)")
    bad = txn(lcr("INSERT", o, "bonus", 20, new={"ID": 1, "EMP": 99}, txn="1.1.3"))
    assert engine.apply(bad, commit_later=True)          # the COMMIT is what fails
    with pytest.raises(sluice.DatabaseError):
        engine.settle()
    assert target.rows("bonus") == []
    assert engine.apply(txn(lcr("INSERT", o, "bonus", 21, new={"ID": 2, "EMP": 1}, txn="1.1.4")),
                        commit_later=True)
    assert engine.apply(txn(lcr("INSERT", o, "bonus", 22, new={"ID": 3, "EMP": 98}, txn="1.1.5")),
                        commit_later=True)
    with pytest.raises(sluice.DatabaseError):          # found by the next transaction
        engine.apply(txn(lcr("INSERT", o, "emp", 23, new={"ID": 3, "NAME": "Ward", "SAL": 1, "VERSION": 1},
                             txn="1.1.6")), commit_later=True)
    assert engine.apply(txn(lcr("INSERT", o, "bonus", 24, new={"ID": 4, "EMP": 97}, txn="1.1.7")),
                        commit_later=True)
    with pytest.raises(sluice.DatabaseError):          # found by the rollback after an ApplyError
        engine.apply(txn(lcr("DELETE", o, "nosuch", 25, old={"ID": 1}, txn="1.1.8")), commit_later=True)
    assert engine.apply(txn(lcr("INSERT", o, "emp", 26, new={"ID": 3, "NAME": "Ward", "SAL": 1, "VERSION": 1},
                                txn="1.1.9")))
    assert [r[0] for r in target.rows("bonus")] == [2]
    assert [r[0] for r in target.rows("emp")] == [1, 2, 3]


def test_commit_later_next_transaction_behind_a_failing_commit(engine, target):
    """The next transaction's statements go to PostgreSQL behind the previous transaction's
    COMMIT, in one round trip.  When that COMMIT fails (a deferred constraint), the next
    transaction's statements are never executed — not even rolled back: a sequence its row
    would have drawn from is untouched — and its apply raises the COMMIT's DatabaseError
    (not a conflict of its own, not an ApplyError); applied again it goes through, once."""
    make_emp(target)
    o = target.owner
    if target.kind != "postgresql":  # SQLite commits at once: nothing rides behind a commit
        assert engine.apply(txn(lcr("INSERT", o, "emp", 10, new={"ID": 1})), commit_later=True)
        assert engine.apply(txn(lcr("INSERT", o, "emp", 11, new={"ID": 2}, txn="1.1.2")), commit_later=True)
        engine.settle()
        assert [r[0] for r in target.rows("emp")] == [1, 2]
        return
    seq = f"{target.owner.lower()}.drawn"
    target.sql(f"CREATE SEQUENCE {seq}",
               f"CREATE TABLE {target.table('counted')} (id integer PRIMARY KEY, n bigint DEFAULT nextval('{seq}'))",
               f"CREATE TABLE {target.table('bonus')} (id integer PRIMARY KEY, emp integer "
               f"REFERENCES {target.table('emp')} (id) DEFERRABLE INITIALLY DEFERRED)")
    assert engine.apply(txn(lcr("INSERT", o, "emp", 10, new={"ID": 1})), commit_later=True)
    bad = txn(lcr("INSERT", o, "bonus", 11, new={"ID": 1, "EMP": 99}, txn="1.1.2"))
    assert engine.apply(bad, commit_later=True)             # its COMMIT is what fails
    nxt = txn(lcr("INSERT", o, "counted", 12, new={"ID": 1}, txn="1.1.3"),
              lcr("INSERT", o, "emp", 12, new={"ID": 2}, txn="1.1.3"))
    with pytest.raises(sluice.DatabaseError) as e:          # found by the transaction behind it
        engine.apply(nxt, commit_later=True)
    assert not isinstance(e.value, ApplyError)
    assert "bonus" in str(e.value) or "foreign key" in str(e.value).lower()
    assert target.rows("bonus") == [] and target.rows("counted") == []
    assert [r[0] for r in target.rows("emp")] == [1]
    with pg_admin() as pg:                                  # never executed: nothing drawn
        assert pg.execute(f"SELECT is_called FROM {seq}").fetchone() == (False,)
    assert engine.apply(nxt, commit_later=True)              # sent again: applied, once
    engine.settle()
    assert target.rows("counted") == [(1, 1)]
    assert [r[0] for r in target.rows("emp")] == [1, 2]
    assert engine.apply(nxt) is False                        # and a replay changes nothing


def test_commit_later_then_a_conflict_behind_it(engine, target):
    """The COMMIT succeeds and the transaction sent behind it meets a conflict (a row that is
    not there): the committed one stays, the other goes statement by statement to its
    ORA-26787 and leaves nothing; the engine goes on."""
    make_emp(target)
    o = target.owner
    assert engine.apply(txn(lcr("INSERT", o, "emp", 10, new={"ID": 1}),
                            lcr("INSERT", o, "emp", 10, new={"ID": 2}),
                            lcr("INSERT", o, "emp", 10, new={"ID": 3})), commit_later=True)
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(lcr("INSERT", o, "emp", 11, new={"ID": 4}, txn="1.1.2"),
                         lcr("DELETE", o, "emp", 11, old={"ID": 42}, txn="1.1.2")), commit_later=True)
    assert e.value.error.code == 26787
    assert engine.apply(txn(lcr("INSERT", o, "emp", 12, new={"ID": 5}, txn="1.1.3")), commit_later=True)
    engine.settle()
    assert [r[0] for r in target.rows("emp")] == [1, 2, 3, 5]


def test_commit_later_one_round_trip_per_transaction(engine, target, tmp_path):
    """With one target transaction per source transaction, each costs PostgreSQL one round
    trip: its statements and the previous transaction's COMMIT travel together (libpq's
    protocol trace: one Sync per transaction, no Query of its own for the COMMIT), and one
    more Sync for the last COMMIT when it is settled."""
    make_emp(target)
    o = target.owner
    if target.kind != "postgresql":  # SQLite has no round trips
        return
    first = txn(lcr("INSERT", o, "emp", 9, new={"ID": 100}, txn="1.1.0"))
    assert engine.apply(first, commit_later=True)      # statements prepared, tag sent: then count
    engine.settle()
    pg = engine.target.conn.pgconn
    trace = tmp_path / "libpq.trace"
    with open(trace, "w") as f:
        pg.trace(f.fileno())
        try:
            for i in range(5):
                assert engine.apply(txn(lcr("INSERT", o, "emp", 10 + i, new={"ID": i}, txn=f"1.1.{i + 1}"),
                                        lcr("INSERT", o, "emp", 10 + i, new={"ID": 10 + i}, txn=f"1.1.{i + 1}")),
                                    commit_later=True)
            engine.settle()
        finally:
            pg.untrace()
    sent = [line.split("\t") for line in trace.read_text().splitlines()]
    sent = [parts[3].strip() for parts in sent if len(parts) > 3 and parts[1] == "F"]
    assert sent.count("Sync") == 5 + 1
    assert sent.count("Query") == 0
    assert [r[0] for r in target.rows("emp")] == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 100]


def test_upcoming_transaction_built_while_the_target_works(engine, target, conn):
    """``apply(txn, upcoming=next)``, as the apply process's serial path calls it: the next
    transaction's statements are built while the target runs this one's (PostgreSQL: they
    are built between sending the batch and reading its row counts), and give the same
    result as built in their own turn — also when this one meets a conflict, when the next
    one's table has no statement yet, when it is not instantiated (its own ORA-26687, in its
    own turn) and when SET_TABLE_INSTANTIATION_SCN changes in between (the new SCN holds)."""
    make_emp(target)
    target.sql(f"CREATE TABLE {target.table('dept')} (id integer PRIMARY KEY, name varchar(40))")
    o = target.owner
    seen = []
    if target.kind == "postgresql":
        finish = engine.target.finish_batch

        def watched():
            seen.append(engine._built[0] if engine._built is not None else None)
            return finish()
        engine.target.finish_batch = watched
    t1 = txn(lcr("INSERT", o, "emp", 10, new={"ID": 1, "NAME": "a"}),
             lcr("INSERT", o, "emp", 10, new={"ID": 2, "NAME": "b0"}),
             lcr("UPDATE", o, "emp", 10, old={"ID": 2}, new={"NAME": "b"}))
    t2 = txn(lcr("UPDATE", o, "emp", 11, old={"ID": 1}, new={"NAME": "a2"}, txn="1.1.2"),
             lcr("INSERT", o, "emp", 11, new={"ID": 3, "NAME": "c"}, txn="1.1.2"))
    t3 = txn(lcr("INSERT", o, "dept", 12, new={"ID": 1, "NAME": "d"}, txn="1.1.3"),     # dept: no statement yet
             lcr("INSERT", o, "emp", 12, new={"ID": 4, "NAME": "e"}, txn="1.1.3"),
             lcr("INSERT", o, "emp", 12, new={"ID": 40, "NAME": "x"}, txn="1.1.3"),
             lcr("DELETE", o, "emp", 12, old={"ID": 40}, txn="1.1.3"))
    t4 = txn(lcr("DELETE", o, "emp", 13, old={"ID": 42}, txn="1.1.4"),                  # a conflict
             lcr("INSERT", o, "emp", 13, new={"ID": 5, "NAME": "f"}, txn="1.1.4"))
    t5 = txn(lcr("INSERT", o, "emp", 14, new={"ID": 6, "NAME": "g"}, txn="1.1.5"),
             lcr("INSERT", o, "emp", 14, new={"ID": 7, "NAME": "h"}, txn="1.1.5"))
    assert engine.apply(t1, commit_later=True, upcoming=t2)
    assert engine.apply(t2, commit_later=True, upcoming=t3)
    assert engine.apply(t3, commit_later=True, upcoming=t4)
    with pytest.raises(ApplyError) as e:
        engine.apply(t4, commit_later=True, upcoming=t5)
    assert e.value.error.code == 26787
    assert engine.apply(t5, commit_later=True)
    engine.settle()
    assert target.rows("emp") == [(1, "a2", None, None), (2, "b", None, None), (3, "c", None, None),
                                  (4, "e", None, None), (6, "g", None, None), (7, "h", None, None)]
    assert target.rows("dept") == [(1, "d")]
    if target.kind == "postgresql":      # t2 and t4 built while t1's and t3's statements ran;
        assert seen[0] is t2 and seen[2] is t4      # t3 (dept's statement unknown) in its own turn
        assert seen[1] is None
    # the instantiation SCN moved between the two: the one built ahead is not applied
    t6 = txn(lcr("INSERT", o, "emp", 20, new={"ID": 8, "NAME": "i"}, txn="1.1.6"),
             lcr("INSERT", o, "emp", 20, new={"ID": 9, "NAME": "j"}, txn="1.1.6"))
    t7 = txn(lcr("INSERT", o, "emp", 21, new={"ID": 10, "NAME": "k"}, txn="1.1.7"),
             lcr("INSERT", o, "emp", 21, new={"ID": 11, "NAME": "l"}, txn="1.1.7"))
    assert engine.apply(t6, upcoming=t7)
    procedures(conn).set_table_instantiation_scn(f"{o}.EMP", SOURCE_DB, 21, apply_database_link=target.link)
    engine.apply(t7)
    assert [r[0] for r in target.rows("emp")] == [1, 2, 3, 4, 6, 7, 8, 9]
    # not instantiated: its own turn reports it
    t8 = txn(lcr("INSERT", o, "emp", 30, new={"ID": 12}, txn="1.1.8"),
             lcr("INSERT", o, "emp", 30, new={"ID": 13}, txn="1.1.8"))
    t9 = txn(lcr("INSERT", "NOSCHEMA", "emp", 31, new={"ID": 14}, txn="1.1.9"))
    assert engine.apply(t8, upcoming=t9)
    with pytest.raises(ApplyError) as e:
        engine.apply(t9)
    assert e.value.error.code == 26687
    assert [r[0] for r in target.rows("emp")] == [1, 2, 3, 4, 6, 7, 8, 9, 12, 13]


def test_a_value_the_target_cannot_hold_fails_its_transaction_only(engine, target, conn):
    """A text with a NUL character (Oracle's VARCHAR2 holds it, PostgreSQL's text cannot):
    its transaction fails as a whole with the reason (the apply process puts it in the error
    queue) -- not a connection failure retried forever -- and the next one applies."""
    make_emp(target)
    o = target.owner
    before = txn(lcr("INSERT", o, "emp", 5, new={"ID": 7, "NAME": "x", "SAL": 1, "VERSION": 1}, txn="1.1.0"))
    bad = txn(lcr("INSERT", o, "emp", 10, new={"ID": 8, "NAME": "y", "SAL": 1, "VERSION": 1}),
              lcr("INSERT", o, "emp", 10, new={"ID": 1, "NAME": "a\x00b", "SAL": 1, "VERSION": 1}))
    after = txn(lcr("INSERT", o, "emp", 20, new={"ID": 2, "NAME": "ok", "SAL": 1, "VERSION": 1}, txn="1.1.2"))
    assert engine.apply(before)
    if target.kind == "postgresql":
        with pytest.raises(ApplyError) as failed:
            engine.apply(bad)
        assert failed.value.error.code == 26714 and "NUL" in str(failed.value.error)
        assert engine.apply(after)
        assert [r[0] for r in target.rows("emp")] == [2, 7]        # none of the failed one's rows
    else:                                                          # SQLite's text holds it
        assert engine.apply(bad) and engine.apply(after)
        assert [r[:2] for r in target.rows("emp")] == [(1, "a\x00b"), (2, "ok"), (7, "x"), (8, "y")]


def test_generated_and_identity_columns_of_the_target(engine, target):
    """A source table with a generated column (PostgreSQL ``GENERATED ALWAYS AS (…) STORED``,
    SQLite also ``VIRTUAL``) and an identity key GENERATED ALWAYS is captured with their
    values; into a replica defined the same way the generated columns are not written nor
    compared (the target computes them; the LCR's value is ignored), the identity key gets
    the source's value (OVERRIDING SYSTEM VALUE) and an UPDATE / DELETE finds the row by
    it, alone or grouped (it was ORA-26714 "cannot insert a non-DEFAULT value", and
    ORA-26788 on SQLite).  An UPDATE changing the identity value cannot be applied to a
    GENERATED ALWAYS column: ORA-26714 saying so."""
    o = target.owner
    if target.kind == "postgresql":
        target.sql(f"CREATE TABLE {target.table('gen')} (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
                   f"a integer, b integer GENERATED ALWAYS AS (a * 2) STORED, "
                   f"n integer GENERATED BY DEFAULT AS IDENTITY)")
        extra, computed = {"N": 40}, (40,)
    else:
        target.sql(f"CREATE TABLE {target.table('gen')} (id integer PRIMARY KEY, a integer, "
                   f"b integer GENERATED ALWAYS AS (a * 2) STORED, c integer GENERATED ALWAYS AS (a * 3) VIRTUAL)")
        extra, computed = {"C": -1}, ()
    target.sql(f"CREATE TABLE {target.table('nokey')} (a integer, b integer GENERATED ALWAYS AS (a + 1) STORED)")

    def row(i, a):
        return (i, a, 2 * a, *computed) if target.kind == "postgresql" else (i, a, 2 * a, 3 * a)

    # the source's values of B (and C) are not the target's: the target computes its own
    t1 = txn(lcr("INSERT", o, "gen", 10, new={"ID": 7, "A": 5, "B": -1, **extra}),
             lcr("INSERT", o, "nokey", 10, new={"A": 1, "B": -1}))
    t2 = txn(lcr("UPDATE", o, "gen", 11, old={"ID": 7, "A": 5, "B": 10}, new={"ID": 7, "A": 6, "B": -1, **extra},
                 txn="1.1.11"),
             lcr("INSERT", o, "gen", 11, new={"ID": 8, "A": 1, "B": 2, **extra}, txn="1.1.11"))
    t3 = txn(lcr("DELETE", o, "gen", 12, old={"ID": 8, "A": 1, "B": -1, **extra}, txn="1.1.12"),
             lcr("DELETE", o, "nokey", 12, old={"A": 1, "B": -1}, txn="1.1.12"))
    assert engine.apply(t1)
    assert target.rows("gen") == [row(7, 5)] and target.rows("nokey") == [(1, 2)]
    assert engine.apply_group([t2, t3]) is True
    assert target.rows("gen") == [row(7, 6)] and target.rows("nokey") == []
    moved = txn(lcr("UPDATE", o, "gen", 13, old={"ID": 7}, new={"ID": 9, "A": 6}, txn="1.1.13"))
    if target.kind == "postgresql":
        with pytest.raises(ApplyError) as e:
            engine.apply(moved)
        assert e.value.error.code == 26714 and '"ID" is GENERATED ALWAYS AS IDENTITY' in str(e.value.error)
        assert target.rows("gen") == [row(7, 6)]
    else:
        assert engine.apply(moved) and target.rows("gen") == [row(9, 6)]


def test_a_target_table_altered_behind_the_apply(engine, target):
    """The apply describes a target table once and keeps what it learnt; a table altered in
    the target since (a column added, the table made again with a generated column, dropped)
    is described again when a statement made from the former description fails or an LCR
    names a column it lacks -- alone or grouped -- instead of failing every later
    transaction into it until the apply restarts (ORA-26788, ORA-26714)."""
    o = target.owner
    g = target.table("alt")
    target.sql(f"CREATE TABLE {g} (id integer PRIMARY KEY, a integer, b integer)")
    assert engine.apply(txn(lcr("INSERT", o, "alt", 10, new={"ID": 1, "A": 5, "B": 10})))
    target.sql(f"ALTER TABLE {g} ADD COLUMN c integer")
    assert engine.apply(txn(lcr("INSERT", o, "alt", 11, new={"ID": 2, "A": 5, "B": 10, "C": 1}, txn="1.1.11")))
    assert target.rows("alt") == [(1, 5, 10, None), (2, 5, 10, 1)]
    target.sql(f"DROP TABLE {g}",
               f"CREATE TABLE {g} (id integer PRIMARY KEY, a integer, b integer GENERATED ALWAYS AS (a * 2) STORED, "
               f"c integer)")
    assert engine.apply(txn(lcr("INSERT", o, "alt", 12, new={"ID": 3, "A": 6, "B": 10, "C": 1}, txn="1.1.12")))
    target.sql(f"ALTER TABLE {g} ADD COLUMN d integer")
    assert engine.apply_group([txn(lcr("INSERT", o, "alt", 13, new={"ID": 4, "A": 1, "B": 10, "C": 1, "D": 4},
                                       txn="1.1.13"))])
    assert target.rows("alt") == [(3, 6, 12, 1, None), (4, 1, 2, 1, 4)]
    with pytest.raises(ApplyError) as e:       # a column the table does not have: as before
        engine.apply(txn(lcr("INSERT", o, "alt", 14, new={"ID": 5, "Z": 1}, txn="1.1.14")))
    assert e.value.error.code == 26788
    target.sql(f"DROP TABLE {g}")
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(lcr("INSERT", o, "alt", 15, new={"ID": 6, "A": 1}, txn="1.1.15")))
    assert e.value.error.code == 942
