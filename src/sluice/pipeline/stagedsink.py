"""The Spark apply sink's staged path (a micro-batch into a PostgreSQL target with no
Python per LCR): which source transactions may take it is decided in the JVM, the rows
are shaped in the JVM (phase, shape, values as JSON) and COPYed into the target's staging
table by the executors through Arrow, then the driver applies each group of whole source
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

from typing import Any, Callable

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .staging import COLUMNS, FIELD_SEP, SIDE_SEP, StagedApplier, copy_batches

__all__ = ["apply_staged"]


def _table_key() -> Any:
    return F.concat_ws("\u0000", "object_owner", "object_name")


def _facts(rows: DataFrame, engine: Any, form: Any) -> tuple[dict, dict, set]:
    """(table -> (key columns, columns)) of the batch's tables the set form (``form``, a
    :class:`~.setapply.SetApplier`) takes, (source database, table) -> instantiation SCN,
    the rules whose action contexts act."""
    rule = F.col("rule") if "rule" in rows.columns else F.lit(None).cast("string")
    seen = rows.where(F.col("lcr_kind") == "ROW").select(
        "source_database_name", "object_owner", "object_name", rule.alias("rule")).distinct().collect()
    settings = engine.settings.current()
    tables: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    scns: dict[tuple[str, str, str], int] = {}
    for db, owner, name, _rule in seen:
        if owner is None or name is None:
            continue
        if (owner, name) not in tables:
            shape = form._shape(owner, name)
            handled = settings.dml_handlers and any(settings.dml_handler(owner, name, cmd, e)
                                                    for cmd in ("INSERT", "UPDATE", "DELETE") for e in (False, True))
            if shape is not None and not handled:
                tables[(owner, name)] = (list(shape.key), list(shape.types))
        scn = settings.instantiation_scn(db, owner, name)
        if scn is not None:
            scns[(db, owner, name)] = scn
    acting = {r for _d, _o, _n, r in seen if r is not None and form.has_actions(r)}
    return tables, scns, acting


def _eligible(rows: DataFrame, tables: dict, scns: dict, acting: set) -> Any:
    """The JVM's answer, per row, to :meth:`SetApplier.eligible` (and no key change)."""
    def literal_map(entries: dict, value: Callable[[Any], Any], empty: str) -> Any:
        if not entries:
            return F.create_map().cast(empty)
        return F.create_map(*[x for k, v in sorted(entries.items()) for x in (F.lit("\u0000".join(k)), value(v))])

    table = _table_key()
    keys = F.element_at(literal_map({k: v[0] for k, v in tables.items()},
                                    lambda cs: F.array(*[F.lit(c) for c in cs]), "map<string,array<string>>"), table)
    columns = F.element_at(literal_map({k: v[1] for k, v in tables.items()},
                                       lambda cs: F.array(*[F.lit(c) for c in cs]), "map<string,array<string>>"), table)
    scn = F.element_at(literal_map(scns, lambda v: F.lit(int(v)).cast("long"), "map<string,bigint>"),
                       F.concat_ws("\u0000", "source_database_name", "object_owner", "object_name"))
    old, new, cmd = F.col("old_values"), F.col("new_values"), F.col("command_type")
    rule = F.col("rule") if "rule" in rows.columns else F.lit(None).cast("string")
    types = F.concat(F.coalesce(F.map_values("old_types"), F.array().cast("array<string>")),
                     F.coalesce(F.map_values("new_types"), F.array().cast("array<string>")))
    names = F.concat(F.coalesce(F.map_keys(old), F.array().cast("array<string>")),
                     F.coalesce(F.map_keys(new), F.array().cast("array<string>")))
    ok = (F.col("error").isNull() & (F.col("lcr_kind") == "ROW") & F.col("commit_scn").isNotNull()
          & cmd.isin("INSERT", "UPDATE", "DELETE")
          & (rule.isNull() | ~rule.isin(*sorted(acting) or [""]))
          & keys.isNotNull()
          & scn.isNotNull() & (F.col("commit_scn").cast("long") > scn)
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
                 limit: int, engine_path: Callable[[DataFrame, int | None], None], counted: list) -> bool:
    """Apply the batch ``rows`` (decided, transformed, ``tx`` set; persisted) through the
    staged path where it can (``engine``: the apply's, on the driver); False when it takes
    nothing (the caller's own path then applies the whole batch)."""
    from ..streams.apply import errorqueue
    from ..streams.apply.target import PgTarget
    from .setapply import SetApplier

    if not isinstance(engine.target, PgTarget) or engine.handlers.precommit is not None or not d.apply_captured:
        return False
    form = SetApplier(engine, has_actions)
    tables, scns, acting = _facts(rows, engine, form)
    if not tables:
        return False
    ok, keys = _eligible(rows, tables, scns, acting)
    marked = rows.withColumn("ok", ok)
    txs = (marked.groupBy("tx").agg(
        F.min(F.coalesce(F.col("cscn"), F.lit(0))).alias("c"), F.min("seq").alias("s"), F.count(F.lit(1)).alias("n"),
        F.min(F.col("ok").cast("int")).alias("ok"), F.first("source_database_name").alias("db"),
        F.max(F.col("commit_scn").cast("long")).alias("scn"), F.first("transaction_id").alias("txn_id"))
        .orderBy("c", "s").collect())
    txs = [dict(t.asDict(), ok=bool(t["ok"]), ident=f"{t['db']}|{t['scn']}") for t in txs]
    if not any(t["ok"] for t in txs):
        return False
    applier = StagedApplier(engine, form._shape)
    segments = _segments(txs, limit, errorqueue.errored_transactions(ctx, d.name),
                         applier.done([t["ident"] for t in txs if t["ok"]]))
    spark = rows.sparkSession
    grouped = [(t["tx"], k) for k, (kind, ts) in enumerate(segments) for t in ts if kind == "staged"]
    staged: dict = {}
    if grouped:
        applier.prepare()
        where = spark.createDataFrame(grouped, "tx string, grp int")
        _stage(marked.join(F.broadcast(where), "tx"), keys, engine.target.conninfo, applier.table)
        staged = applier.staged()
    for k, (kind, ts) in enumerate(segments):
        if kind == "staged" and applier.apply_group(k, [(t["ident"], t["db"], t["scn"], t["txn_id"]) for t in ts],
                                                    staged.get(k, [])):
            continue
        these = spark.createDataFrame([(t["tx"],) for t in ts], "tx string")
        # a group handed back: a target transaction per source transaction, as the engine does
        engine_path(rows.join(F.broadcast(these), "tx"), None if kind == "engine" else 1)
    counted.append((applier.groups, applier.fallbacks, applier.statements, len(segments)))
    return True


def _stage(frame: DataFrame, keys: Any, conninfo: str, table: str) -> int:
    """COPY the staged transactions' rows into ``table`` (executors, through Arrow): each
    row's group, phase (its rank among the group's LCRs touching the same row), table,
    command, shape and values as JSON."""
    cmd = F.col("command_type")
    row_key = F.concat_ws("\u0000", "object_owner", "object_name", F.array_join(F.transform(
        keys, lambda c: F.coalesce(F.element_at(F.when(cmd == "INSERT", F.col("new_values"))
                                                .otherwise(F.col("old_values")), c), F.lit("\u0001"))), "\u0000"))
    phase = F.row_number().over(Window.partitionBy("grp", row_key).orderBy("cscn", "seq")) - 1

    def names(side: str) -> Any:
        return F.array_join(F.array_sort(F.map_keys(side)), FIELD_SEP)
    new_side = F.when(cmd != "DELETE", F.col("new_values"))
    old_side = F.when(cmd != "INSERT", F.col("old_values"))
    shaped = frame.select(
        F.col("grp").cast("int").alias("GRP"), phase.cast("int").alias("PHASE"), F.col("object_owner").alias("OWNER"),
        F.col("object_name").alias("NAME"), cmd.alias("CMD"),
        F.concat(F.coalesce(names(new_side), F.lit("")), F.lit(SIDE_SEP), F.coalesce(names(old_side), F.lit("")))
        .alias("SHAPE"),
        F.to_json(old_side).alias("OLD"), F.to_json(new_side).alias("NEW"))
    assert tuple(shaped.columns) == COLUMNS
    counts = shaped.mapInArrow(lambda it: copy_batches(conninfo, table, it), "n long").collect()
    return sum(r["n"] for r in counts)
