"""The apply sink's staged path (:mod:`sluice.pipeline.stagedsink`, :mod:`sluice.pipeline.staging`):
the same rows through it and through the engine path give identical target tables,
SLUICE_APPLY_DONE records, low-watermark and error queue (the differential contract);
conflicts and errors reach the error queue as the engine puts them there; a batch replayed
after a crash between staging and the apply's commit, or after the commit, changes nothing."""

from __future__ import annotations

from decimal import Decimal

import pytest

import sluice
from sluice.pipeline import setapply, sinks, stagedsink, staging
from sluice.pipeline.rows import spark_schema
from tests.pipeline.test_setapply import (APPLY, _reset, _rows, _run, _state, _workload, generated_table,  # noqa: F401
                                         generated_workload, site)
from tests.streams.applykit import lcr


def _more(owner: str, first_scn: int) -> list[list]:
    """Transactions the staged path takes whole: a row inserted, updated twice and deleted
    then inserted again in one transaction (four phases), a NULL old value matched."""
    scn = first_scn
    out = []
    for ms in ([("INSERT", "T2", None, {"ID": 500, "NAME": "a"}),
                ("UPDATE", "T2", {"ID": 500, "NAME": "a"}, {"NAME": "b"}),
                ("UPDATE", "T2", {"ID": 500, "NAME": "b"}, {"NAME": None}),
                ("DELETE", "T2", {"ID": 500, "NAME": None}, None),
                ("INSERT", "T2", None, {"ID": 500, "NAME": "c"})],
               [("UPDATE", "T2", {"ID": 500, "NAME": "c"}, {"NAME": "d"}),
                ("INSERT", "T1", None, {"ID": 501, "NAME": "e", "AMOUNT": 2.25})]):
        scn += 1
        out.append([lcr(cmd, owner, table, scn, old, new, txn=f"{scn}.0.1") for cmd, table, old, new in ms])
    return out


def _frame(spark, rows):
    types = spark_schema()
    schema = types.add("rule", "string").add("tx", "string")
    decimal = {f.name for f in types.fields if f.dataType.typeName() == "decimal"}
    data = [tuple(Decimal(r[f]) if f in decimal and r[f] is not None else r[f] for f in schema.names) for r in rows]
    return spark.createDataFrame(data, schema)


def _staged(dsn: str, frame, by_engine: list | None = None, crash_after_staging: bool = False,
            facts: stagedsink.TableFacts | None = None, may_decline: bool = False) -> tuple:
    """The staged path over ``frame``; the engine path (the sink's partition function) over
    the transactions it hands back, in their place."""
    from sluice.streams.apply.pgtarget import PgTarget

    counted: list = []

    def engine_path(part, limit):
        rows = sorted(part.collect(), key=lambda r: (r["cscn"], r["seq"]))   # a test: few rows
        if by_engine is not None:
            by_engine.append(len(rows))
        sinks._apply_partition(sluice.connect, dsn, {}, APPLY, {}, 0, iter(rows), group_transactions=limit)

    with sinks._apply_engine(sluice.connect, dsn, {}, APPLY) as (_conn, ctx, d, engine):
        assert isinstance(engine.target, PgTarget)
        if crash_after_staging:   # staged, then the apply's commit never comes
            def crash(*_a, **_k):
                raise RuntimeError("killed between staging and the apply's commit")
            original = stagedsink.StagedApplier.apply_group
            stagedsink.StagedApplier.apply_group = crash
            try:
                with pytest.raises(RuntimeError):
                    stagedsink.apply_staged(frame, engine, ctx, d, sinks._has_actions(ctx), stagedsink.TableFacts(),
                                            int(d.parameter("GROUPTRANSOPS")), engine_path, counted)
            finally:
                stagedsink.StagedApplier.apply_group = original
            return ()
        took = stagedsink.apply_staged(frame, engine, ctx, d, sinks._has_actions(ctx), facts or stagedsink.TableFacts(),
                                       int(d.parameter("GROUPTRANSOPS")), engine_path, counted)
    if not took and may_decline:     # the sink's own path then applies the whole batch
        engine_path(stagedsink.without_staging(frame), None)
        return ()
    assert took
    return counted[0][:4]


@pytest.mark.parametrize("group", [1, 10_000])
def test_staged_path_equals_the_engine_path(site, spark, monkeypatch, group):
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", str(group))
    txns = _workload(schema.upper())
    txns += _more(schema.upper(), max(m.get_commit_scn() for t in txns for m in t))
    rows = _rows(txns)
    with monkeypatch.context() as m:
        m.setattr(setapply.SetApplier, "eligible", lambda self, rows: False)
        _run(dsn, rows)
    engine_path = _state(conn, schema)
    assert len(engine_path[3]) == 4 and engine_path[0][0]    # the errors and rows of the workload
    _reset(conn, schema)

    frame = _frame(spark, rows)
    by_engine: list = []
    groups, fallbacks, statements, segments = _staged(dsn, frame, by_engine)
    assert groups > 0 and statements > 0 and segments > groups
    # the four conflicting / failing transactions come back as groups (one each, or in groups
    # of 10,000 cut by the transactions that are the engine's from the start: the key change,
    # the table without a key)
    assert fallbacks == 4 if group == 1 else 1 <= fallbacks <= 4
    assert _state(conn, schema) == engine_path

    # a replay after the commit: every staged group is recorded, nothing changes
    _staged(dsn, frame)
    assert _state(conn, schema) == engine_path


def test_a_batch_replayed_after_a_crash_between_staging_and_commit_changes_nothing(site, spark):
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", "10000")
    txns = _more(schema.upper(), 10)
    rows = _rows(txns)
    frame = _frame(spark, rows)
    _staged(dsn, frame, crash_after_staging=True)
    assert _state(conn, schema)[0] == [[], [], []]          # staged only: the target is untouched
    by_engine: list = []
    groups, fallbacks, _statements, _segments = _staged(dsn, frame, by_engine)
    assert (groups, fallbacks, by_engine) == (1, 0, [])      # the replay starts clean, all in set form
    tables, done, progress, errors = _state(conn, schema)
    assert tables[1] == [(500, "d")] and tables[0] == [(501, "e", Decimal("2.25"))]
    assert [d[2] for d in done] == ["DBS1.NET|11", "DBS1.NET|12"] and progress == [("DBS1.NET", 12)]
    assert errors == []


def test_staging_columns_read_the_table_facts_as_data(spark):
    """The staging job's columns judge each row by the facts of its table -- a map literal
    however many tables, any character in their names --, and are built again only when the
    facts change (one list of Columns serves every batch)."""
    odd = "O'D\\X"   # a quote and a backslash in the owner's name
    facts = stagedsink.TableFacts()
    facts.tables = {f"{odd}\u0000T1": (["ID"], ["ID", "NAME"]), "U1\u0000T2": None}
    txns = [[lcr("INSERT", odd, "T1", 10, None, {"ID": 1, "NAME": "a"}, txn="10.0.1")],
            [lcr("INSERT", odd, "T1", 11, None, {"ID": 2, "NAME": "b", "AMOUNT": 3}, txn="11.0.1")],   # a column T1 lacks
            [lcr("INSERT", "U1", "T2", 12, None, {"ID": 3}, txn="12.0.1")],                            # not taken
            [lcr("UPDATE", odd, "T1", 13, {"NAME": "a"}, {"NAME": "c"}, txn="13.0.1")],                 # no old key
            [lcr("DELETE", odd, "T1", 14, {"ID": 1, "NAME": "c"}, None, txn="14.0.1")]]
    frame = _frame(spark, _rows(txns))
    ok, columns = facts.shaped(True)
    assert facts.shaped(True) == (ok, columns)   # the same Columns while the facts stay
    got = frame.withColumn("OK", ok).select(*columns)
    assert tuple(got.columns) == staging.COLUMNS
    rows = sorted(got.collect(), key=lambda r: r["SEQ"])
    assert [r["OK"] for r in rows] == [True, False, False, False, True]
    assert [(r["OWNER"], r["NAME"], r["CMD"], r["ROWKEY"]) for r in rows if r["OK"]] == [
        (odd, "T1", "INSERT", "1"), (odd, "T1", "DELETE", "1")]
    facts.tables["U1\u0000T2"] = (["ID"], ["ID"])   # learnt: the columns are built again
    ok2, columns2 = facts.shaped(True)
    assert ok2 is not ok
    rows = sorted(frame.withColumn("OK", ok2).select(*columns2).collect(), key=lambda r: r["SEQ"])
    assert [r["OK"] for r in rows] == [True, False, True, False, True]
    facts.tables = {}   # nothing taken: no row may take the set form
    ok3, columns3 = facts.shaped(False)
    rows = frame.withColumn("OK", ok3).select(*columns3).collect()
    assert not any(r["OK"] for r in rows) and all(r["RULE"] is None for r in rows)


def test_the_targets_tables_are_learnt_before_the_first_batch_is_staged(site):
    """Every table of the target with a primary key is known (as an LCR names it) before a
    batch is staged, so the first batches are neither persisted nor staged twice; a table
    created afterwards is learnt when a batch meets it."""
    from tests.conftest import pg_admin

    dsn, _conn, schema = site
    facts = stagedsink.TableFacts()
    with sinks._apply_engine(sluice.connect, dsn, {}, APPLY) as (_c, ctx, _d, engine):
        form = setapply.SetApplier(engine, sinks._has_actions(ctx))
        facts.refresh(engine)
        assert facts.learning and not facts.prelearnt
        facts.prelearn(engine, form)
        owner = schema.upper()
        assert facts.prelearnt and not facts.learning
        assert facts.tables[f"{owner}\u0000T1"] == (["ID"], ["ID", "NAME", "AMOUNT"])
        assert facts.tables[f"{owner}\u0000T2"] == (["ID"], ["ID", "NAME"])
        assert f"{owner}\u0000NOKEY" not in facts.tables   # no primary key: never the set form's
        with pg_admin() as c:
            c.execute(f"CREATE TABLE {schema}.t3 (id bigint PRIMARY KEY)")
        assert f"{owner}\u0000T3" not in facts.tables
        assert facts.learn(engine, form, {f"{owner}\u0000T3"})   # met later: a second staging
        assert facts.tables[f"{owner}\u0000T3"] == (["ID"], ["ID"])


def test_the_streams_own_staging_columns_serve_its_batches(site, spark, monkeypatch):
    """with_staging: the stream computes the staging columns for the target's tables known
    when it starts, so a batch stages them as they come (its frame is not analysed again)
    with the engine path's result; once the facts change (a table learnt) a batch makes its
    own columns again, over the rows without the stream's."""
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", "10000")
    txns = _more(schema.upper(), 10)
    owner = schema.upper()

    def prelearn(self, engine, form, most=1000):   # this test's tables only: the test database is shared
        self.prelearnt = True
        self.learn(engine, form, {f"{owner}\u0000T1", f"{owner}\u0000T2"})
        self.learning = False
    monkeypatch.setattr(stagedsink.TableFacts, "prelearn", prelearn)
    facts = stagedsink.TableFacts()
    refresh = stagedsink.TableFacts.refresh
    # once refreshed, the facts stay: a catalog version bump (the SQLite store's backstop
    # check bumps it on timing) would forget the table added below and re-learn the stream's
    monkeypatch.setattr(stagedsink.TableFacts, "refresh",
                        lambda self, engine: None if self.version is not None else refresh(self, engine))
    with sinks._apply_engine(sluice.connect, dsn, {}, APPLY) as (_c, ctx, d, engine):
        frame = stagedsink.with_staging(_frame(spark, _rows(txns)), engine, d, sinks._has_actions(ctx), facts)
    added = [c for c in frame.columns if c.startswith(stagedsink.STAGE_PREFIX)]
    assert len(added) == len(staging.COLUMNS) + 1 and facts.baked == facts.key(True)
    assert stagedsink.without_staging(frame).columns == _frame(spark, []).columns

    def run() -> tuple:
        counted: list = []

        def engine_path(part, limit):
            pytest.fail("the staged path takes these transactions whole")

        with sinks._apply_engine(sluice.connect, dsn, {}, APPLY) as (_c, ctx, d, engine):
            assert stagedsink.apply_staged(frame, engine, ctx, d, sinks._has_actions(ctx), facts,
                                           int(d.parameter("GROUPTRANSOPS")), engine_path, counted)
        return counted[0][:2]

    with monkeypatch.context() as m:
        m.setattr(stagedsink.TableFacts, "shaped", lambda self, rule: pytest.fail("staging columns made per batch"))
        assert run() == (1, 0)
    tables, done, progress, errors = _state(conn, schema)
    assert tables[1] == [(500, "d")] and tables[0] == [(501, "e", Decimal("2.25"))]
    assert [x[2] for x in done] == ["DBS1.NET|11", "DBS1.NET|12"] and progress == [("DBS1.NET", 12)] and errors == []

    facts.tables["NEW\u0000TABLE"] = (["ID"], ["ID"])   # the facts changed: the batch makes its own
    made: list = []
    shaped = stagedsink.TableFacts.shaped
    monkeypatch.setattr(stagedsink.TableFacts, "shaped", lambda self, rule: made.append(rule) or shaped(self, rule))
    _reset(conn, schema)
    assert run() == (1, 0) and made == [True]
    assert _state(conn, schema)[0][1] == [(500, "d")]


def _touched_again(owner: str, collide: tuple[int, int]) -> list[list]:
    """Transactions that change the same rows again and again, within a transaction and
    across transactions (so within and across groups, however GROUPTRANSOPS cuts them), and
    two rows ``collide`` whose keys hash alike (their LCRs share the ranking's partition)."""
    a, b = collide
    scn = 40
    out = []
    for ms in ([("INSERT", "T2", None, {"ID": i, "NAME": f"n{i}"}) for i in (1, 2, 3)],
               [("UPDATE", "T2", {"ID": 1, "NAME": "n1"}, {"NAME": "x1"}),
                ("UPDATE", "T2", {"ID": 1, "NAME": "x1"}, {"NAME": "y1"}),
                ("UPDATE", "T2", {"ID": 2, "NAME": "n2"}, {"NAME": "x2"})],
               [("DELETE", "T2", {"ID": 1, "NAME": "y1"}, None),
                ("INSERT", "T2", None, {"ID": 1, "NAME": "z1"}),
                ("UPDATE", "T2", {"ID": 3, "NAME": "n3"}, {"NAME": "x3"})],
               [("UPDATE", "T2", {"ID": 1, "NAME": "z1"}, {"NAME": "w1"}),
                ("UPDATE", "T2", {"ID": 2, "NAME": "x2"}, {"NAME": None})],
               [("INSERT", "T2", None, {"ID": a, "NAME": "a"}), ("INSERT", "T2", None, {"ID": b, "NAME": "b"}),
                ("UPDATE", "T2", {"ID": a, "NAME": "a"}, {"NAME": "a2"}),
                ("UPDATE", "T2", {"ID": b, "NAME": "b"}, {"NAME": "b2"})],
               [("DELETE", "T2", {"ID": 3, "NAME": "x3"}, None),
                ("UPDATE", "T2", {"ID": 2, "NAME": None}, {"NAME": "v2"})]):
        scn += 1
        out.append([lcr(cmd, owner, table, scn, old, new, txn=f"{scn}.0.1") for cmd, table, old, new in ms])
    return out


def _colliding(owner: str) -> tuple[int, int]:
    """Two keys of T2 whose rows the staged path's ranking hashes alike."""
    from tests.conftest import pg_admin

    with pg_admin() as c:
        return c.execute("SELECT min(i), max(i) FROM generate_series(1000, 400000) AS i GROUP BY "
                         "hashtext(%s || chr(1) || 'T2' || chr(2) || i::text) HAVING count(*) > 1 LIMIT 1",
                         (owner,)).fetchone()


@pytest.mark.parametrize("group", [1, 4, 10_000])
def test_rows_changed_again_within_and_across_groups_apply_in_commit_order(site, spark, monkeypatch, group):
    """Every change of a row in its place in the commit order, whether the earlier change
    is in the same group (an earlier phase) or an earlier group, and two rows whose hashes
    meet in the ranking (more phases, the same result) -- the engine path's target."""
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", str(group))
    collide = _colliding(schema.upper())
    rows = _rows(_touched_again(schema.upper(), collide))
    with monkeypatch.context() as m:
        m.setattr(setapply.SetApplier, "eligible", lambda self, rows: False)
        _run(dsn, rows)
    engine_path = _state(conn, schema)
    assert (collide[0], "a2") in engine_path[0][1] and engine_path[3] == []
    _reset(conn, schema)
    by_engine: list = []
    groups, fallbacks, statements, _segments = _staged(dsn, _frame(spark, rows), by_engine)
    assert (fallbacks, by_engine) == (0, [])     # all in set form
    assert _state(conn, schema) == engine_path
    # a statement per phase (and two claims per group): row 1's six changes in one group,
    # six phases; a transaction per group, 1 + 2 + 2 + 1 + 4 + 1 phases -- the colliding
    # rows' four LCRs in four phases, not two
    assert statements - 2 * groups == {1: 11, 4: 11, 10_000: 6}[group]


def test_the_staged_rows_are_written_once(site, spark, monkeypatch):
    """The COPY writes the staging table's rows and nothing rewrites them (no group or
    phase written back per row, no index maintained): the rows the statements read by place
    are where the COPY put them."""
    from tests.conftest import pg_admin

    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", "4")
    rows = _rows(_touched_again(schema.upper(), _colliding(schema.upper())))
    places: list = []
    transactions = staging.StagedApplier.transactions

    def after_copy(self):   # the rows as the COPY left them
        places.append(self.target.query(f"SELECT ctid::text, xmin::text FROM {self.table} ORDER BY 1"))
        return transactions(self)
    monkeypatch.setattr(staging.StagedApplier, "transactions", after_copy)
    groups, fallbacks, _statements, _segments = _staged(dsn, _frame(spark, rows))
    assert groups > 1 and fallbacks == 0
    with pg_admin() as c:
        table = f"{schema}.sluice_apply_staging_b_{APPLY.lower()}"
        assert c.execute(f"SELECT ctid::text, xmin::text FROM {table} ORDER BY 1").fetchall() == places[0]
        assert c.execute("SELECT count(*) FROM pg_index WHERE indrelid = %s::regclass", (table,)).fetchone() == (0,)


def test_a_batch_replayed_after_some_groups_committed_applies_the_rest(site, spark, monkeypatch):
    """A crash after the first groups' commits: the replay skips them (their records are
    there) and applies the others from the staging table staged again -- the engine path's
    target, nothing twice."""
    dsn, conn, schema = site
    conn.apply_adm.set_parameter(APPLY, "grouptransops", "1")   # a group per transaction
    rows = _rows(_touched_again(schema.upper(), _colliding(schema.upper())))
    with monkeypatch.context() as m:
        m.setattr(setapply.SetApplier, "eligible", lambda self, rows: False)
        _run(dsn, rows)
    engine_path = _state(conn, schema)
    _reset(conn, schema)
    frame = _frame(spark, rows)
    original = staging.StagedApplier.apply_group
    calls: list = []

    def crash_at_the_third(self, *a):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("killed after two groups committed")
        return original(self, *a)
    with monkeypatch.context() as m:
        m.setattr(staging.StagedApplier, "apply_group", crash_at_the_third)
        with pytest.raises(RuntimeError):
            _staged(dsn, frame)
    assert len(_state(conn, schema)[1]) == 2     # two transactions recorded
    by_engine: list = []
    groups, fallbacks, _statements, _segments = _staged(dsn, frame, by_engine)
    assert (groups, fallbacks, by_engine) == (4, 0, [])
    assert _state(conn, schema) == engine_path


def test_generated_and_identity_columns(site, spark, monkeypatch):
    """Into a table with an identity key GENERATED ALWAYS and a generated column (captured
    with their values) the staged path applies what the engine applies: the key's value
    inserted, the generated column computed by the target (neither written nor compared),
    rows found by the key; an UPDATE changing the identity value (a key change: the
    engine's from the start) in the error queue (ORA-26714)."""
    from tests.conftest import pg_admin

    dsn, conn, schema = site
    rows = _rows(generated_workload(schema.upper()))

    def state():
        with pg_admin() as c:
            table = c.execute(f"SELECT * FROM {schema}.gen ORDER BY 1").fetchall()
        return table, _state(conn, schema)[1:]

    generated_table(schema)
    with monkeypatch.context() as m:
        m.setattr(setapply.SetApplier, "eligible", lambda self, rows: False)
        _run(dsn, rows)
    engine_path = state()
    assert engine_path[0] == [(103, 13, 26), (104, 14, 28)] + [(100 + i, i, 2 * i) for i in range(5, 10)]
    assert [e[2:4] for e in engine_path[1][2]] == [(14, 26714)]
    _reset(conn, schema)
    generated_table(schema)
    by_engine: list = []
    groups, fallbacks, _statements, _segments = _staged(dsn, _frame(spark, rows), by_engine)
    assert (groups, fallbacks, by_engine) == (3, 0, [1])
    assert state() == engine_path


@pytest.mark.parametrize("remade", ["no key", "another key"])
def test_a_table_altered_between_batches(site, spark, monkeypatch, remade):
    """The stream's facts of the target's tables (key, columns) outlive a batch; a table made
    again since (without a key, or with another key) is learnt again when a batch meets it
    and that batch's rows staged as it is now -- the engine applies what the set form does
    not take -- instead of the batch failing (an AttributeError or AssertionError out of the
    staged apply) until the stream restarts."""
    from tests.conftest import pg_admin

    dsn, conn, schema = site
    owner = schema.upper()
    facts = stagedsink.TableFacts()
    refresh = stagedsink.TableFacts.refresh    # once refreshed, the facts stay (see above)
    monkeypatch.setattr(stagedsink.TableFacts, "refresh",
                        lambda self, engine: None if self.version is not None else refresh(self, engine))
    first = [[lcr("INSERT", owner, "T2", 11, None, {"ID": i, "NAME": f"n{i}"}, txn="11.0.1") for i in range(3)]]
    _staged(dsn, _frame(spark, _rows(first)), facts=facts)
    assert facts.tables[f"{owner}\u0000T2"] == (["ID"], ["ID", "NAME"])
    with pg_admin() as c:
        c.execute(f"DROP TABLE {schema}.t2")
        key = "" if remade == "no key" else " PRIMARY KEY"
        c.execute(f"CREATE TABLE {schema}.t2 (id bigint, name text{key})")
        c.execute(f"INSERT INTO {schema}.t2 VALUES (0, 'n0'), (1, 'n1')")
    # (under the former key ID the UPDATE changes the key: the engine's; under NAME it does not)
    second = [[lcr("UPDATE", owner, "T2", 12, {"ID": 0, "NAME": "n0"}, {"ID": 5}, txn="12.0.1")],
              [lcr("DELETE", owner, "T2", 13, {"ID": 1, "NAME": "n1"}, None, txn="13.0.1")]]
    by_engine: list = []
    got = _staged(dsn, _frame(spark, _rows(second)), by_engine, facts=facts, may_decline=True)
    # no key: the engine applies the batch; another key: the staged path takes both
    if remade == "no key":
        assert (got, by_engine) == ((), [2])
    else:
        assert got[:2] == (2, 0) and by_engine == []
    with pg_admin() as c:
        assert c.execute(f"SELECT id, name FROM {schema}.t2 ORDER BY 1").fetchall() == [(5, "n0")]
    assert facts.tables[f"{owner}\u0000T2"] == (None if remade == "no key" else (["NAME"], ["ID", "NAME"]))
    assert _state(conn, schema)[3] == []
