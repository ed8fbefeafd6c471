"""The Spark apply sink's staged path (a micro-batch into a PostgreSQL target with no
Python per LCR), in ONE Spark job per batch (no persisted batch, no second pass): the
rows are read, decided, judged (may the set form take this row?) and shaped in the JVM
(transaction, commit order, key values, shape, values as JSON) and COPYed into the target's
staging table by the executors through Arrow; the target aggregates the batch's
transactions (size, commit order, eligibility, tables, rules) for the driver and ranks the
rows into phases, then the driver applies each group of whole source
transactions from there in set form, in commit order (:mod:`.staging`).  Source
transactions the set form may not take -- and any group it hands back -- go, in their
place in the commit order, through the apply engine's path (``engine_path``: the sink's
one-task path over just those transactions).

Which transactions (every row of them): plain row LCRs (INSERT / UPDATE / DELETE, captured,
no bad input) of tables the set form takes (:class:`~.setapply.SetApplier` -- a primary
key the engine finds rows by, no converted columns, no DML handler), above their
instantiation SCN, whose TRUE rule's action context does nothing here, carrying every key
column's old value (UPDATE / DELETE), no RAW / BLOB value, no column the table lacks, and
no UPDATE changing its key; not in the error queue; an apply without a precommit handler
and APPLY_CAPTURED.  What the engine path would do with such a transaction is what the set
form does (the differential test: tests/pipeline/test_stagedapply.py).
"""

from __future__ import annotations

import time
from typing import Any, Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..rules.compile.spark.lookup import literal_lookup
from .staging import COLUMNS, FIELD_SEP, SIDE_SEP, StagedApplier, copy_batches

__all__ = ["apply_staged", "TableFacts", "with_staging", "without_staging", "STAGE_PREFIX"]

# the staging columns a stream computes itself (:func:`with_staging`): STAGE_PREFIX + k for
# COLUMNS[k], and the row's OK under STAGE_PREFIX + "ok"
STAGE_PREFIX = "sluice_stage_"


def _table_key() -> Any:
    return F.concat_ws("\u0000", "object_owner", "object_name")


class TableFacts:
    """What the set form knows of the target's tables (key columns, columns; None: it does
    not take the table), kept across batches until the apply's settings change; and the
    staging job's columns built from them (:func:`_shaped`), kept while they stay the same."""

    def __init__(self) -> None:
        self.version: Any = None
        self.tables: dict[str, tuple[list[str], list[str]] | None] = {}
        # whether the last batch met tables the set form takes that were not known yet: the
        # next may too, so its rows are persisted for a second staging (no second read)
        self.learning = True
        self.prelearnt = False   # the target's tables learnt before a batch is staged
        self._shaped: tuple[Any, tuple[Any, list[Any]]] | None = None   # (its facts, its columns)
        self.baked: Any = None   # the facts whose staging columns the stream computes (with_staging)

    def refresh(self, engine: Any) -> None:
        """Forget every table when the apply's settings changed (SET_KEY_COLUMNS, handlers)."""
        settings = engine.settings.current()
        if settings._version != self.version:
            self.version, self.tables, self.learning, self.prelearnt = settings._version, {}, True, False

    def learn(self, engine: Any, form: Any, names: set[str]) -> bool:
        """Describe the tables ``names`` (``OWNER\0NAME``) -- a batch's: ``form`` describes
        them for the batch anyway --; whether one is new to the set form or not as known (the
        batch's rows must then be looked at again).  A known table is described again: the
        facts outlive a batch, and a table made again since (another key, none, other
        columns) staged by its former facts failed the batch (an AttributeError or
        AssertionError out of the staged apply) until the stream restarted."""
        settings = engine.settings
        taken = False
        for table in names:
            owner, name = table.split("\u0000")
            shape = form._shape(owner, name)
            handled = settings.dml_handlers and any(settings.dml_handler(owner, name, cmd, e)
                                                    for cmd in ("INSERT", "UPDATE", "DELETE") for e in (False, True))
            found = None if shape is None or handled else (list(shape.key), list(shape.types))
            if table in self.tables and self.tables[table] == found:
                continue
            known = self.tables.get(table)
            self.tables[table] = found
            taken = taken or found is not None or known is not None
        self.learning = taken
        return taken

    def prelearn(self, engine: Any, form: Any, most: int = 1000) -> None:
        """Learn, before the first batch is staged, every table of the target the set form
        could take (a primary key; at most ``most`` of them), under the name an LCR gives it:
        a batch then meets a table not known only when one was created since (DDL), and is
        not staged twice nor persisted for it."""
        from ..streams.capture.decode import oracle_name, pg_name

        target = engine.target
        self.prelearnt = True
        rows = target.query(
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary WHERE c.relkind IN ('r', 'p') "
            "AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%' "
            "ORDER BY 1, 2 LIMIT %s", (most + 1,))
        target.rollback()
        if len(rows) > most:
            return   # learnt as batches meet them
        names = {f"{oracle_name(o)}\u0000{oracle_name(t)}" for o, t in rows
                 if pg_name(oracle_name(o)) == o and pg_name(oracle_name(t)) == t}
        self.learn(engine, form, names)
        target.rollback()
        self.learning = False

    def taken(self) -> dict[str, tuple[list[str], list[str]]]:
        return {k: v for k, v in self.tables.items() if v is not None}

    def key(self, rule: bool) -> tuple[bool, list]:
        return rule, sorted(self.taken().items())

    def shaped(self, rule: bool) -> tuple[Any, list[Any]]:
        """The staging job's columns (:func:`_shaped`) for the tables taken now; built again
        only when those change (building them is hundreds of calls into the JVM)."""
        facts = self.key(rule)
        if self._shaped is None or self._shaped[0] != facts:
            self._shaped = (facts, _shaped(dict(facts[1]), rule))
        return self._shaped[1]


def _facts(tables: dict[str, tuple[list[str], list[str]]], pick: Callable[[tuple], list[str]], table: Any) -> Any:
    """The row's table's facts (``pick``: its key columns or its columns) from ONE literal
    table of every table's (:func:`~sluice.rules.compile.spark.lookup.literal_lookup`: one
    call into the JVM however many tables, about one key comparison per row, and a literal
    of data: the generated code does not depend on it); NULL for a table the set form does
    not take."""
    return literal_lookup({k: pick(v) for k, v in tables.items()}, T.ArrayType(T.StringType()), table)


def _eligible(tables: dict[str, tuple[list[str], list[str]]]) -> tuple[Any, Any]:
    """The JVM's answer, per row, to :meth:`SetApplier.eligible` but for what is decided per
    transaction on the driver (rules that act, instantiation SCNs), and no key change; the
    row's table's key columns."""
    table = _table_key()
    keys = _facts(tables, lambda v: v[0], table)
    columns = _facts(tables, lambda v: v[1], table)
    old, new, cmd = F.col("old_values"), F.col("new_values"), F.col("command_type")
    none = F.array().cast("array<string>")
    types = F.concat(F.coalesce(F.map_values("old_types"), none), F.coalesce(F.map_values("new_types"), none))
    names = F.concat(F.coalesce(F.map_keys(old), none), F.coalesce(F.map_keys(new), none))
    ok = (F.col("error").isNull() & (F.col("lcr_kind") == "ROW") & F.col("commit_scn").isNotNull()
          & cmd.isin("INSERT", "UPDATE", "DELETE") & keys.isNotNull()
          & ((cmd == "INSERT") | ((F.size(old) > 0) & F.forall(keys, lambda c: F.element_at(old, c).isNotNull())))
          & ((cmd != "UPDATE") | ((F.size(new) > 0) & F.forall(
              keys, lambda c: ~F.map_contains_key(new, c) | F.element_at(new, c).eqNullSafe(F.element_at(old, c)))))
          & ~F.exists(types, lambda t: F.coalesce(t.isin("SYS.RAW", "SYS.BLOB"), F.lit(False)))
          & F.forall(names, lambda c: F.array_contains(columns, c)))
    return F.coalesce(ok, F.lit(False)), keys


def _segments(txs: list[Any], limit: int, errored: set, done: set[str]) -> list[tuple[str, list[Any]]]:
    """The batch's transactions in commit order cut into ("staged", group) -- whole
    transactions of at most ``limit`` LCRs -- and ("engine", run) segments."""
    out: list[tuple[str, list[Any]]] = []
    size = 0
    for t in txs:
        staged = t["ok"] and (t["db"], t["scn"]) not in errored
        if staged and t["ident"] in done:
            continue   # applied before (a replayed batch): its group committed
        kind = "staged" if staged else "engine"
        if out and out[-1][0] == kind and (kind == "engine" or size + t["n"] <= limit):
            out[-1][1].append(t)
            size += t["n"]
            continue
        out.append((kind, [t]))
        size = t["n"]
    return out


def apply_staged(rows: DataFrame, engine: Any, ctx: Any, d: Any, has_actions: Callable[[str | None], bool],
                 facts: TableFacts, limit: int, engine_path: Callable[[DataFrame, int | None], None], counted: list) -> bool:
    """Apply the batch ``rows`` (decided, transformed, ``tx`` set; not persisted: read once
    unless tables are being learnt) through the staged path where it can (``engine``: the
    apply's, on the driver); False when it takes nothing (the caller's own path then
    applies the whole batch)."""
    from ..streams.apply.pgtarget import PgTarget
    from .setapply import SetApplier

    if not isinstance(engine.target, PgTarget) or engine.handlers.precommit is not None or not d.apply_captured:
        return False
    form = SetApplier(engine, has_actions)
    facts.refresh(engine)
    if not facts.prelearnt:   # the first batch, or the apply's settings changed
        facts.prelearn(engine, form)
    if facts.learning:   # tables may be new to the set form: a second staging reads the cache
        rows = rows.persist()
    try:
        return _apply(rows, engine, ctx, d, has_actions, facts, limit, engine_path, counted, form)
    finally:
        rows.unpersist()


def _apply(rows: DataFrame, engine: Any, ctx: Any, d: Any, has_actions: Callable[[str | None], bool],
           facts: TableFacts, limit: int, engine_path: Callable[[DataFrame, int | None], None], counted: list,
           form: Any) -> bool:
    from ..streams.apply import errorqueue

    laps: dict[str, float] = {}
    clock = [time.monotonic()]

    def lap(label: str) -> None:   # where a batch's time goes (the sink's log line)
        now = time.monotonic()
        laps[label] = round(laps.get(label, 0.0) + now - clock[0], 2)
        clock[0] = now

    applier = StagedApplier(engine, form._shape)
    spark = rows.sparkSession
    applier.prepare()
    lap("prepare")
    _stage(rows, facts, engine.target.conninfo, applier.table, lap)
    txs = applier.transactions()
    lap("transactions")
    if facts.learn(engine, form, {n for t in txs for n in t["tables"]}):   # new or altered tables: stage again
        applier.prepare()
        _stage(rows, facts, engine.target.conninfo, applier.table)
        txs = applier.transactions()
        lap("stage again")
    settings = engine.settings
    acting = {r for t in txs for r in t["rules"] if has_actions(r)}
    for t in txs:
        scns = [settings.instantiation_scn(t["db"], *n.split("\u0000")) for n in t["tables"]]
        t["ok"] = t["ok"] and not acting.intersection(t["rules"]) and all(s is not None and t["scn"] > s for s in scns)
    if not any(t["ok"] for t in txs):
        return False
    segments = _segments(txs, limit, errorqueue.errored_transactions(ctx, d.name),
                         applier.done([t["ident"] for t in txs if t["ok"]]))
    staged = applier.staged({t["tx"]: k for k, (kind, ts) in enumerate(segments) for t in ts if kind == "staged"})
    lap("phases")
    for k, (kind, ts) in enumerate(segments):
        if kind == "staged" and applier.apply_group(k,
                                                    [(t["ident"], t["db"], t["scn"], t["txn_id"]) for t in ts],
                                                    staged.get(k, [])):
            lap("apply")
            continue
        these = _table(spark, tx=[t["tx"] for t in ts])
        # a group handed back: a target transaction per source transaction, as the engine does
        # (the batch read again: rare, so the batch is not persisted for it)
        engine_path(without_staging(rows).join(F.broadcast(these), "tx"), None if kind == "engine" else 1)
        lap("engine path")
    counted.append((applier.groups, applier.fallbacks, applier.statements, len(segments), laps))
    return True


def _table(spark: Any, **columns: list) -> DataFrame:
    """A small driver-made frame through Arrow: the JVM reads it, no Python worker is
    started to unpickle its rows each time a batch's job runs (createDataFrame of a list)."""
    import pyarrow as pa

    return spark.createDataFrame(pa.table({k: pa.array(v, pa.int32() if k == "grp" else pa.string())
                                           for k, v in columns.items()}))


def _shaped(tables: dict[str, tuple[list[str], list[str]]], rule: bool, ok_name: str = "OK") -> tuple[Any, list[Any]]:
    """``OK`` and the staging table's columns (:data:`COLUMNS`) over the decided rows with
    ``OK`` added (``ok_name``; computed once per row, then read): every row's
    transaction and its facts, whether the set form may take it (``OK``), and for those rows
    commit order, key values (its phase is computed there), table, command, shape and values
    as JSON.  Column expressions by name, so one list serves every batch."""
    ok, keys = _eligible(tables)
    cmd = F.col("command_type")
    row_key = F.array_join(F.transform(keys, lambda c: F.coalesce(F.element_at(
        F.when(cmd == "INSERT", F.col("new_values")).otherwise(F.col("old_values")), c), F.lit("\u0001"))), "\u0002")

    def names(side: str) -> Any:
        return F.array_join(F.array_sort(F.map_keys(side)), FIELD_SEP)

    def when_ok(column: Any) -> Any:
        return F.when(F.col(ok_name), column)
    new_side = F.when(cmd != "DELETE", F.col("new_values"))
    old_side = F.when(cmd != "INSERT", F.col("old_values"))
    is_row = F.col("lcr_kind") == "ROW"
    return ok, [
        F.col("tx").alias("TX"), F.col(ok_name).alias("OK"), F.col("lcr_kind").alias("KIND"),
        F.col("source_database_name").alias("DB"), F.col("commit_scn").cast("long").alias("SCN"),
        F.col("transaction_id").alias("TXN"), (F.col("rule") if rule else F.lit(None).cast("string")).alias("RULE"),
        F.col("cscn").alias("CSCN"), F.col("seq").alias("SEQ"), when_ok(row_key).alias("ROWKEY"),
        F.when(is_row, F.col("object_owner")).alias("OWNER"), F.when(is_row, F.col("object_name")).alias("NAME"),
        when_ok(cmd).alias("CMD"),
        when_ok(F.concat(F.coalesce(names(new_side), F.lit("")), F.lit(SIDE_SEP),
                         F.coalesce(names(old_side), F.lit("")))).alias("SHAPE"),
        when_ok(F.to_json(old_side)).alias("OLD"), when_ok(F.to_json(new_side)).alias("NEW")]


def with_staging(df: DataFrame, engine: Any, d: Any, has_actions: Callable[[str | None], bool],
                 facts: TableFacts) -> DataFrame:
    """The stream ``df`` (decided, ``tx`` set) with the staging job's columns computed in
    it, for the target's tables learnt now (``facts``, :meth:`TableFacts.prelearn`) --
    ``df`` itself when the staged path does not apply to this apply.  Part of the stream's
    plan, they are analysed and optimized once with it (:func:`~.sinks.optimized_once`) and
    computed in the decide plan's generated code, not analysed again over each
    micro-batch's frame (0.2-0.8 s per batch, bench/RESULTS.md lag16); a batch whose facts
    changed since (a table created, the apply's settings changed) makes its own."""
    from ..streams.apply.pgtarget import PgTarget
    from .setapply import SetApplier

    if not isinstance(engine.target, PgTarget) or engine.handlers.precommit is not None or not d.apply_captured:
        return df
    facts.refresh(engine)
    facts.prelearn(engine, SetApplier(engine, has_actions))
    rule = "rule" in df.columns
    ok, columns = _shaped(facts.taken(), rule, f"{STAGE_PREFIX}ok")
    facts.baked = facts.key(rule)
    return df.withColumn(f"{STAGE_PREFIX}ok", ok).select(
        "*", *[c.alias(f"{STAGE_PREFIX}{k}") for k, c in enumerate(columns)])


def without_staging(df: DataFrame) -> DataFrame:
    """``df`` without the staging columns :func:`with_staging` added (the other paths'
    rows)."""
    names = [c for c in df.columns if c.startswith(STAGE_PREFIX)]
    return df.drop(*names) if names else df


def _stage(rows: DataFrame, facts: TableFacts, conninfo: str, table: str,
           lap: Callable[[str], None] = lambda _label: None) -> int:
    """COPY the batch into ``table`` (executors, through Arrow; the one Spark job of a
    batch): the columns :func:`_shaped` of every row -- the stream's own
    (:func:`with_staging`) while the facts are those it was built with, else made here."""
    rule = "rule" in rows.columns
    names = [f"{STAGE_PREFIX}{k}" for k in range(len(COLUMNS))]
    if facts.baked is not None and facts.baked == facts.key(rule) and set(names) <= set(rows.columns):
        shaped = rows.select(*names)
    else:
        ok, columns = facts.shaped(rule)
        shaped = without_staging(rows).withColumn("OK", ok).select(*columns)
    copied = shaped.mapInArrow(lambda it: copy_batches(conninfo, table, it), "n long")
    lap("plan")
    counts = copied.collect()
    lap("read+decide+stage job")
    return sum(r["n"] for r in counts)
