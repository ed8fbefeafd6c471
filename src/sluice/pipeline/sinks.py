"""Where a pipeline's rows go.

* :func:`warehouse` -- the message warehouse: Parquet files partitioned by queue and day,
  written by Spark's file sink (exactly once through its own commit log), each row with
  the time it ``arrived`` so that :mod:`.report` can tell the end-to-end lag.
* :func:`enqueue` -- into another Sluice queue, on this store or another one reached by a
  database link's DSN (propagation on Spark): per micro-batch, on one executor, in position order, one destination
  transaction that also records the batch's last position under the pipeline's name in
  the destination store (``SLUICE_PIPELINE_PROGRESS``), so a batch replayed after a
  failure is recognised and changes nothing (ensured delivery, exactly once).

* :func:`apply` -- into tables through the apply engine of the Python apply process
  (:class:`sluice.streams.apply.ApplyEngine`, the one implementation): per micro-batch,
  spread over tasks (:mod:`.applyplan`: transactions changing the same rows on one task,
  in commit order), each source transaction one target transaction holding the apply's
  low-watermark and its SLUICE_APPLY_DONE record, so a replayed batch changes nothing (the
  records of the batches no replay can bring again are forgotten: :func:`forget_delivered`); a
  transaction that fails goes to the error queue (DBA_APPLY_ERROR) as the Python process
  puts it there.  The plan's keys are computed in the JVM (:func:`_keys_frame`), so the
  LCRs reach Python once, in the task that applies them; there, transactions of plain row
  LCRs into a PostgreSQL target take the set-form path (:mod:`.setapply`: a few statements
  per table and operation instead of one per LCR), everything else -- and any group that
  path hands back -- the engine's.

The destination is opened through ``connect`` (``sluice.connect`` passed down by the front
door: this layer is below the session, DESIGN.md section 7).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pyspark.accumulators import AccumulatorParam

from ..aq.payload import loads_json
from ..errors import ora
from ..streams.apply.engine import ApplyError
from . import rows, stagedsink

__all__ = ["warehouse", "warehouse_frame", "enqueue", "apply", "payload_of", "source_transactions"]


class BadInput(ApplyError):
    """A payload that is no LCR or user message (ORA-25215): into the error queue, and the
    stream goes on whatever DISABLE_ON_ERROR says."""


class _Waits(AccumulatorParam):
    """The cross-task waits of a micro-batch's tasks: (transaction, those it waited for,
    looks, seconds), gathered on the driver (an accumulator)."""

    def zero(self, value: list) -> list:
        return []

    def addInPlace(self, value1: list, value2: list) -> list:
        return value1 + value2


_MAPS = ("old_values", "new_values", "old_types", "new_types")


def _to_python(frame: DataFrame) -> DataFrame:
    """The frame as rows reach Python intact: a map would arrive as a dict in hash order
    (through a Java HashMap), its entries keep the LCR's column order."""
    return frame.withColumns({c: F.map_entries(c) for c in _MAPS})


def warehouse_frame(df: DataFrame) -> DataFrame:
    """The warehouse's columns: the rows, ``arrived`` (now) and ``day`` (of the enqueue)."""
    return df.withColumns({"arrived": F.current_timestamp(), "day": F.to_date("enq_time")})


def warehouse(df: DataFrame, path: str, checkpoint: str, trigger: dict | None = None) -> Any:
    """Start writing the stream ``df`` into the Parquet warehouse at ``path``."""
    writer = (warehouse_frame(df).writeStream.format("parquet").option("path", path)
              .option("checkpointLocation", checkpoint).partitionBy("queue", "day").outputMode("append"))
    return writer.trigger(**(trigger or {"processingTime": "1 second"})).start()


def payload_of(row: Any) -> Any:
    """The payload to enqueue for a row: its LCR, or the user message it carried."""
    if row["lcr_kind"] is not None:
        return rows.lcr_from_row(row)
    kind, text = row["payload_type"], row["user_data"]
    if text is None:
        return None
    if kind == "RAW":
        return bytes.fromhex(text)
    return loads_json(text)


def _enqueue_partition(connect: Callable[..., Any], dsn: str, queue: str, login: dict,
                       mark: str, it: Iterator[Any]) -> None:
    from . import queueio

    batch = list(it)
    if not batch:
        return
    last = max(r["position"] for r in batch)
    with queueio.open_raw(dsn) as raw:
        done = queueio.low_watermark(raw, mark)
    if done is not None and done >= last:
        return   # a replayed batch: already delivered
    conn = connect(dsn, **login)
    try:
        q = conn.queue(queue)
        q.driver_checks = False      # any value the queue's type holds (JSON scalars too)
        props = []
        for r in batch:
            if r["error"] is not None:
                continue   # bad input stays in the source's error record (the report shows it)
            props.append(conn.msgproperties(payload=payload_of(r), correlation=r["corrid"],
                                            priority=r["priority"] or 0))
        if props:
            q.enqmany(props)
        conn.context.session.add_commit_work(lambda c: queueio.set_position(c, mark, queue, last))
        conn.commit()
    finally:
        conn.close()


def enqueue(df: DataFrame, connect: Callable[..., Any], dsn: str, queue: str, checkpoint: str,
            mark: str, user: str | None = None, trigger: dict | None = None, password: str | None = None) -> Any:
    """Start enqueuing the stream ``df`` into ``queue`` of the store at ``dsn`` (as ``user``
    / ``password``: a database link's login); ``mark`` names the destination's record of
    what was delivered."""
    login = {k: v for k, v in (("user", user), ("password", password)) if v is not None}
    position = F.when(F.col("cscn").isNotNull(), F.col("cscn")).otherwise(F.col("seq"))

    def batch(frame: DataFrame, _batch_id: int) -> None:
        ordered = _to_python(frame.withColumn("position", position)).coalesce(1).sortWithinPartitions("cscn", "seq")
        ordered.foreachPartition(lambda it: _enqueue_partition(connect, dsn, queue, login, mark, it))

    writer = df.writeStream.foreachBatch(batch).option("checkpointLocation", checkpoint)
    return writer.trigger(**(trigger or {"processingTime": "1 second"})).start()


def source_transactions(rows_in_order: list[Any], actions: Callable[[str, Any, Callable], Any] | None = None,
                        ) -> list[tuple[Any, Any, list[tuple[str, Any]]]]:
    """The batch's messages as the apply engine takes them: per transaction (its
    :class:`~sluice.streams.apply.SourceTxn`, None or the
    :class:`~sluice.streams.apply.ApplyError` that sends it to the error queue, the
    messages its rules enqueue elsewhere as (queue, message)).  A captured LCR's source
    transaction (source database, transaction id, commit SCN) is one transaction, and so is
    a user-enqueued message's queue transaction (its enqueuing transaction), in the order
    they come; an undecodable payload is a transaction of its own holding its stored text
    (ORA-25215 with the reason).  ``actions(rule, message, enqueue)`` -- what a row's TRUE
    rule's action context does (:func:`sluice.streams.apply.process.rule_actions`) --
    gives its Item (None: discarded); an error its enqueue raises fails the transaction;
    a custom transformation's failure (TransformationFailed) is raised: the apply stops."""
    from ..errors import DatabaseError
    from ..streams.apply import Item, SourceTxn

    out: list[tuple[Any, Any, list[tuple[str, Any]]]] = []
    key: Any = None
    fields = None
    for row in rows_in_order:
        if row["error"] is not None:
            out.append((SourceTxn([Item(row["user_data"])], "USER", ident=bytes(row["msgid"]).hex()),
                        BadInput(ora(25215, f"the payload is no LCR or user message: {row['error']}"), 0), []))
            key = None
            continue
        message = payload_of(row)
        captured = row["lcr_kind"] is not None and row["commit_scn"] is not None
        this = ("C", row["source_database_name"], row["transaction_id"], int(row["commit_scn"])) if captured \
            else ("U", row["enq_tid"])
        if this != key:
            out.append((SourceTxn([], "CAPTURED", this[1], this[3], this[2]) if captured
                        else SourceTxn([], "USER", ident=bytes(row["msgid"]).hex()), None, []))
            key = this
        txn, failure, enqueues = out[-1]
        if fields is None:
            fields = set(row.__fields__) if hasattr(row, "__fields__") else set(row)
        rule = row["rule"] if "rule" in fields else None
        if actions is None or rule is None or failure is not None:
            txn.items.append(Item(message))
            continue
        try:
            item = actions(rule, message, lambda queue, m, e=enqueues: e.append((queue, m)))
        except DatabaseError as e:   # the whole transaction goes to the error queue, as it came
            txn.items.append(Item(message))
            out[-1] = (txn, ApplyError(e, len(txn.items) - 1), [])
            continue
        if item is not None:
            txn.items.append(item)
    return [t for t in out if t[0].items or t[0].kind == "CAPTURED"]


def ship_functions() -> dict[str, bytes]:
    """The driver's registry of functions (handlers, transformations registered by name
    with :func:`sluice.register_function`), each pickled (cloudpickle: by reference when
    its module is importable, else by value) to travel with the plan to the executors,
    whose Python workers do not share the driver's memory.  One that cannot be pickled is
    left out (logged): on an executor its name then fails with ORA-00904."""
    import logging

    from pyspark import cloudpickle

    from ..routines import registered_functions

    out = {}
    for name, fn in registered_functions().items():
        try:
            out[name] = cloudpickle.dumps(fn)
        except Exception as e:   # noqa: BLE001 -- any pickling failure: the name is not shipped
            logging.getLogger("sluice.pipeline").warning("function %s cannot travel to executors: %s", name, e)
    return out


def install_shipped(shipped: dict[str, bytes]) -> None:
    """On an executor: register the functions the driver shipped.  One that cannot be
    loaded here (its module is not importable on this machine, …) is registered as a
    stand-in raising ORA-00904 with the reason, so the transaction that needs it goes to
    the error queue saying why."""
    import pickle

    from ..routines import install_functions

    loaded: dict[str, Any] = {}
    for name, data in shipped.items():
        try:
            loaded[name] = pickle.loads(data)
        except Exception as e:   # noqa: BLE001 -- whatever failed, the name is unusable here
            reason = f"{name}: registered on the Spark driver but not loadable on this executor " \
                     f"({type(e).__name__}: {e})"

            def missing(*_args: Any, _reason: str = reason) -> Any:
                raise ora(904, _reason)
            loaded[name] = missing
    install_functions(loaded)


def _actions(ctx: Any) -> Callable[[str, Any, Callable], Any]:
    """``actions`` for :func:`source_transactions`: the TRUE rule's action context (read
    from the store's rules catalog once per rule) performed by the Python apply's own
    :func:`~sluice.streams.apply.process.rule_actions`."""
    from ..rules.engine.ruleset import rules_catalog
    from ..streams.apply.process import rule_actions

    catalog = rules_catalog(ctx.store)
    contexts: dict[str, Any] = {}

    def act(rule: str, message: Any, enqueue: Callable) -> Any:
        if rule not in contexts:
            contexts[rule] = catalog.rule(rule).action_context
        return rule_actions(message, contexts[rule], ctx.username, enqueue)
    return act


@contextmanager
def _apply_engine(connect: Callable[..., Any], dsn: str, login: dict, apply_name: str,
                  server_id: int = 0) -> Iterator[tuple[Any, Any, Any, Any]]:
    """(the store's connection, its capture context, the apply's definition, an engine
    applying for it as apply server ``server_id``), closed afterwards.  The apply user may
    take the apply's messages and execute its rule sets and its rules' custom
    transformations (as the Python apply process checks them before each batch:
    :func:`~sluice.streams.clientrights.check_apply_user`,
    :func:`~sluice.streams.clientrights.check_rule_sets`), else the batch fails with that
    error, nothing applied, the apply ABORTED with it in DBA_APPLY (as the Python process
    records its refusal), and the query stops; its handlers run with that user's rights."""
    from ..errors import DatabaseError
    from ..names import qualified
    from ..streams.apply import engine_for
    from ..streams.apply.definition import load, set_status
    from ..streams.capture.context import CaptureContext
    from ..streams.clientrights import check_apply_user, check_rule_sets

    conn = connect(dsn, **login)
    try:
        ctx = CaptureContext(conn)
        d = load(ctx, apply_name)
        try:
            check_apply_user(ctx, d.name, d.apply_user, d.queue_owner, d.queue_name)
            # the transformations resolved as the sink's rule actions call them (_actions)
            check_rule_sets(conn, d.apply_user, d.rule_set, d.negative_rule_set,
                            lambda name: qualified(name, ctx.username, "function name"))
        except DatabaseError as refused:
            set_status(ctx, d.name, "ABORTED", refused)
            raise
        engine = engine_for(conn, d.name, d.apply_database_link, d.apply_tag, d, server_id=server_id)
        try:
            yield conn, ctx, d, engine
        finally:
            engine.target.close()
    finally:
        conn.close()


def _mine(batch: list[Any], d: Any) -> list[Any]:
    """DBA_APPLY.APPLY_CAPTURED: captured LCRs (a commit SCN) or user-enqueued messages, not
    both -- the other kind is let go, as the Python apply process does; bad input stays."""
    return [r for r in batch if r["error"] is not None or
            (r["lcr_kind"] is not None and r["commit_scn"] is not None) == d.apply_captured]


def _has_actions(ctx: Any) -> Callable[[str | None], bool]:
    """Whether a rule's action context does something to the message here (a custom
    transformation, an enqueue destination, SET_EXECUTE): read once per rule."""
    from ..rules.engine.ruleset import rules_catalog

    catalog = rules_catalog(ctx.store)
    found: dict[str | None, bool] = {None: False}

    def has(rule: str | None) -> bool:
        if rule not in found:
            actx = catalog.rule(rule).action_context
            found[rule] = actx is not None and any(
                (v := actx.get_value(n)) is not None and v.value
                for n in ("STREAMS$_TRANSFORM_FUNCTION", "APPLY$_ENQUEUE", "APPLY$_EXECUTE"))
        return found[rule]
    return has


def _key_columns(engine: Any) -> Callable[[str, str], list[str] | None]:
    """(owner, table) -> the key columns the engine finds its rows by (None: none known
    here, the table has no primary key or does not exist)."""
    def columns(owner: str, name: str) -> list[str] | None:
        chosen = engine.settings.key_columns.get((owner, name))
        if chosen is not None:
            return chosen
        try:
            return engine.target.describe(owner, name)[2] or None
        except Exception:   # noqa: BLE001 -- the engine reports it when it applies
            return None
    return columns


def _plain_rows(it: Iterator[Any]) -> list[dict]:
    """A partition's rows as dicts (a Spark Row finds a field by name with a list search)."""
    rows = []
    fields = None
    for row in it:
        if fields is None:
            fields = row.__fields__ if hasattr(row, "__fields__") else None
        rows.append(dict(zip(fields, row)) if fields is not None else row)
    return rows


def _keys_frame(rows: DataFrame, key_columns: dict[tuple[str, str], list[str]], acting_rules: set[str],
                apply_captured: bool) -> DataFrame:
    """Per source transaction of ``rows`` (the batch, decided and transformed, maps intact):
    ``tx``, commit order (``c``, ``s``), size ``n``, ``e`` (1: it depends on everything) and
    ``h``, the hashes of the rows it changes -- what :func:`.applyplan.plan` takes, computed
    in the JVM: the LCRs reach Python once, when they are applied.

    The keys are :func:`~sluice.streams.apply.parallel.transaction_keys`' -- (owner, table,
    key values; an UPDATE also its key after the change, a DELETE its old key) -- for the
    row LCRs of the tables in ``key_columns`` (the columns the engine finds their rows by)
    whose rule's action context does nothing here; any other message (DDL, user messages,
    a table with a handler or without a key, a rule in ``acting_rules`` that may change the
    message) depends on everything, as the Python parallel apply has it; bad input on nothing."""
    table = F.concat_ws("\u0000", "object_owner", "object_name")
    key_map = F.create_map(*[x for (o, n), cols in sorted(key_columns.items())
                             for x in (F.lit(f"{o}\u0000{n}"), F.array(*[F.lit(c) for c in cols]))]) \
        if key_columns else F.create_map().cast("map<string,array<string>>")
    cols = F.element_at(key_map, table)
    old, new = F.col("old_values"), F.col("new_values")
    old_key = F.transform(cols, lambda c: F.element_at(old, c))
    new_key = F.transform(cols, lambda c: F.element_at(new, c))
    after = F.transform(cols, lambda c: F.when(F.map_contains_key(new, c), F.element_at(new, c))
                        .otherwise(F.element_at(old, c)))
    cmd = F.col("command_type")
    sides = (F.when(cmd == "INSERT", F.array(new_key)).when(cmd == "UPDATE", F.array(old_key, after))
             .otherwise(F.array(old_key)))
    hashes = F.transform(F.filter(sides, lambda k: F.forall(k, lambda v: v.isNotNull())),
                         lambda k: F.xxhash64(table, F.array_join(k, "\u0000")))
    rule = F.col("rule") if "rule" in rows.columns else F.lit(None).cast("string")
    keyed = (F.col("lcr_kind") == "ROW") & F.col("commit_scn").isNotNull() & cmd.isin("INSERT", "UPDATE", "DELETE") \
        & cols.isNotNull() & (rule.isNull() | ~rule.isin(*sorted(acting_rules) or [""]))
    everything = F.when(F.col("error").isNotNull(), 0).when(keyed, 0).otherwise(1)
    captured = F.col("lcr_kind").isNotNull() & F.col("commit_scn").isNotNull()
    mine = F.col("error").isNotNull() | (captured == F.lit(apply_captured))
    ident = F.when(captured, F.concat_ws("|", "source_database_name",
                                         F.col("commit_scn").cast("long").cast("string")))
    return (rows.where(mine)
            .select("tx", "cscn", "seq", ident.alias("ident"), everything.alias("e"),
                    F.when(keyed, hashes).otherwise(F.array().cast("array<bigint>")).alias("h"))
            .groupBy("tx").agg(F.min(F.coalesce(F.col("cscn"), F.lit(0))).alias("c"), F.min("seq").alias("s"),
                               F.count(F.lit(1)).alias("n"), F.max("e").alias("e"), F.first("ident").alias("ident"),
                               F.array_distinct(F.flatten(F.collect_list("h"))).alias("h")))


def _batch_facts(rows: DataFrame, connect: Callable[..., Any], dsn: str, login: dict, apply_name: str,
                 known: dict[tuple[str, str], list[str] | None]) -> tuple[dict, set[str], bool]:
    """What :func:`_keys_frame` needs for a batch, read on the driver: the key columns of
    its tables (``known`` caches them; none for a table with a DML or error handler, or
    without a key), the rules among its rows whose action contexts act, APPLY_CAPTURED."""
    seen = rows.where(F.col("lcr_kind") == "ROW").select(
        "object_owner", "object_name", F.col("rule") if "rule" in rows.columns else F.lit(None).alias("rule")
    ).distinct().collect()
    with _apply_engine(connect, dsn, login, apply_name) as (_conn, ctx, d, engine):
        settings = engine.settings.current()
        if known.get(("", "")) != [str(settings._version)]:   # SET_KEY_COLUMNS, handlers: read again
            known.clear()
            known[("", "")] = [str(settings._version)]
        columns = _key_columns(engine)
        handled = {(o, n) for o, n, _op, _err in settings.dml_handlers}
        for o, n, _rule in seen:
            if (o, n) not in known:
                known[(o, n)] = None if (o, n) in handled else columns(o, n)
        has = _has_actions(ctx)
        acting = {r for _o, _n, r in seen if r is not None and has(r)}
        return {k: v for k, v in known.items() if v and k != ("", "")}, acting, d.apply_captured


def _wait_for(engine: Any, ctx: Any, apply_name: str, idents: list[str], timeout: float = 120.0) -> int:
    """Wait until the transactions ``idents`` (applied by other tasks) are recorded as
    applied in the target or as failed in the error queue; how many times it looked."""
    import time

    from ..streams.apply import errorqueue

    pause, deadline = 0.002, time.monotonic() + timeout
    left = list(idents)
    looks = 0
    while True:
        looks += 1
        left = [i for i in left if not engine.target.done(apply_name, "CAPTURED", i)]
        if left:
            errored = errorqueue.errored_transactions(ctx, apply_name)
            left = [i for i in left if (i.rsplit("|", 1)[0], int(i.rsplit("|", 1)[1])) not in errored]
        engine.target.rollback()   # end the reads' transaction: the next one sees new commits
        if not left:
            return looks
        if time.monotonic() > deadline:   # a task that failed: the batch fails and is replayed
            raise ora(25228, f"timeout waiting for transactions {left[:3]} applied by another task")
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


_ENQUEUED = "SELECT 1 FROM SLUICE_PIPELINE_ENQUEUED WHERE APPLY_NAME = :a AND IDENT = :i"
_RECORD_ENQUEUED = "INSERT INTO SLUICE_PIPELINE_ENQUEUED (APPLY_NAME, IDENT, BATCH_ID) VALUES (?, ?, ?)"


def _enqueue_destinations(conn: Any, ctx: Any, apply_name: str, ident: str, batch_id: int,
                          enqueues: list[tuple[str, Any]]) -> None:
    """SET_ENQUEUE_DESTINATION on Spark: the transaction's messages enqueued into their
    queues in one store transaction that also records it (SLUICE_PIPELINE_ENQUEUED), so
    a replay of the micro-batch enqueues nothing twice."""
    if ctx.query(_ENQUEUED, {"a": apply_name, "i": ident}):
        return
    for queue, message in enqueues:
        conn.queue(queue).enqone(conn.msgproperties(payload=message))
    conn.context.session.add_commit_work(lambda c: c.execute(_RECORD_ENQUEUED, (apply_name, ident, batch_id)))
    conn.commit()


# How long after the start of the micro-batch before the previous one the apply sink keeps
# its delivery records (SLUICE_APPLY_DONE): the tasks' path writes them with the executors'
# clocks, which a cluster's driver does not share -- the margin covers their skew.
DELIVERY_RECORDS_KEPT = 60.0


def _replay_horizon(started: list[float]) -> float | None:
    """What no replay can need any more was written before this (epoch seconds), given the
    wall-clock starts of the micro-batches this query ran before the one now starting;
    None in a query's first two batches (a replay may follow a restart).

    Spark replays only the batch it was running (batch N+1 starts after batch N's commit
    log is written and the queue acknowledged up to it), and a transaction left in the
    error queue by an aborted batch comes again only in that batch's replay.  So at the
    start of batch N+1, a record older than the start of batch N-1 (less
    :data:`DELIVERY_RECORDS_KEPT`) guards nothing."""
    return started[-2] - DELIVERY_RECORDS_KEPT if len(started) >= 2 else None


def forget_in_store(dsn: str, apply_name: str, batch_id: int, started: list[float]) -> None:
    """The store's side of forgetting, in one transaction per micro-batch: the records of
    what the sink enqueued in micro-batches before ``batch_id`` (Spark replays none of them),
    and the notes DELETE_ERROR left before :func:`_replay_horizon` (one made before the start
    of batch N-1 is of a transaction of an earlier batch, committed by now)."""
    from ..streams.apply import errorqueue
    from . import queueio

    before = _replay_horizon(started)
    with queueio.open_raw(dsn) as raw:
        raw.begin()
        raw.execute("DELETE FROM SLUICE_PIPELINE_ENQUEUED WHERE APPLY_NAME = ? AND BATCH_ID < ?",
                    [apply_name, batch_id])
        if before is not None:
            raw.execute(errorqueue.FORGET_DELETED, [apply_name, before])
        raw.execute("COMMIT")


def forget_delivered(engine: Any, apply_name: str, started: list[float]) -> None:
    """Delete the apply's delivery records in the target that no replay can need any more
    (:func:`_replay_horizon`) -- without this the target's SLUICE_APPLY_DONE grew by a row
    per source transaction for ever (the Python apply process forgets its own once its
    dequeue has committed).  EXECUTE_ERROR's own records (kind ERROR) stay: they keep an
    error transaction applied once."""
    before = _replay_horizon(started)
    if before is None:
        return
    t = engine.target
    t.execute(*t.forget_delivered_statement(apply_name, before))
    t.commit()


def _apply_partition(connect: Callable[..., Any], dsn: str, login: dict, apply_name: str,
                     shipped: dict[str, bytes], batch_id: int, it: Iterator[Any],
                     waits: dict[str, list[str]] | None = None, waited: Any = None,
                     group_transactions: int | None = None, counted: Any = None) -> None:
    """Apply a task's rows (in commit order): runs of source transactions the set-form
    path takes (:mod:`.setapply`) in groups of whole transactions of at most
    ``group_transactions`` LCRs (None: the apply's GROUPTRANSOPS parameter; 1, its default:
    one target transaction per source transaction), the others -- and any group that path
    hands back -- one by one through the apply engine."""
    import time
    from itertools import groupby

    from pyspark import TaskContext

    from ..streams.apply import errorqueue
    from ..streams.apply.definition import set_status
    from ..streams.apply.process import TransformationFailed
    from .setapply import SetApplier

    batch = _plain_rows(it)
    if not batch:
        return
    install_shipped(shipped)
    task = TaskContext.get()
    # one apply server per task: its own row of the low-watermark (SLUICE_APPLY_PROGRESS)
    with _apply_engine(connect, dsn, login, apply_name, task.partitionId() if task else 0) as (conn, ctx, d, engine):
        encode = errorqueue.codec_encoder(ctx, d.queue_owner, d.queue_name)
        errored = errorqueue.errored_transactions(ctx, d.name)
        actions = _actions(ctx)
        fast = SetApplier(engine, _has_actions(ctx))

        def wait(idents: list[str]) -> None:
            before = [i for ident in idents for i in (waits or {}).get(ident, ())]
            if before:
                began = time.monotonic()
                looks = _wait_for(engine, ctx, d.name, before)
                if waited is not None:
                    waited.add([(idents[0], tuple(before), looks, time.monotonic() - began)])

        def one_by_one(rows: list[Any]) -> None:
            try:
                txns = source_transactions(rows, actions)
            except TransformationFailed as disabled:
                # as the Python process: ABORTED, the transaction neither applied nor in the
                # error queue; the batch is not committed, so a restart (the function mended)
                # replays it from here -- those applied before it are recorded as done
                set_status(ctx, d.name, "ABORTED", disabled.error)
                raise disabled.error from None
            for txn, failure, enqueues in txns:
                if (txn.source_database, txn.commit_scn) in errored or ("IDENT", txn.ident) in errored:
                    continue   # already in the error queue (a replayed batch)
                ident = engine.ident(txn)
                if enqueues and failure is None:
                    _enqueue_destinations(conn, ctx, d.name, ident, batch_id, enqueues)
                wait([ident])
                try:
                    if failure is not None:
                        raise failure
                    engine.apply(txn)
                except ApplyError as failure:
                    errorqueue.record(ctx, d.name, (d.queue_owner, d.queue_name), txn, failure, encode,
                                      d.apply_database_link, d.apply_tag)
                    conn.commit()
                    # the batch may be replayed (a crash, an abort below): it must skip this
                    # transaction whatever the user does with its error meanwhile
                    _settled_by_error_queue(engine, d.name, txn)
                    if d.parameter("DISABLE_ON_ERROR") == "Y" and not isinstance(failure, BadInput):
                        # as the Python process does: the apply aborts at its first error; the
                        # batch is not committed, so a restart replays it past the recorded error
                        set_status(ctx, d.name, "ABORTED", failure.error)
                        raise failure.error from None

        group: list[list[Any]] = []
        limit = group_transactions if group_transactions is not None else int(d.parameter("GROUPTRANSOPS"))

        def flush() -> None:
            if not group:
                return
            idents = [f"{rows[0]['source_database_name']}|{int(rows[0]['commit_scn'])}" for rows in group]
            wait(idents)
            if not fast.apply_group(group):
                for rows in group:
                    one_by_one(rows)
            group.clear()

        engine.settings.current()
        for _tx, rows in groupby(_mine(batch, d), key=lambda r: r["tx"]):
            rows = list(rows)
            first = rows[0]
            if fast.eligible(rows) and (first["source_database_name"], int(first["commit_scn"])) not in errored:
                ident = f"{first['source_database_name']}|{int(first['commit_scn'])}"
                if group and ((waits or {}).get(ident) or sum(len(g) for g in group) + len(rows) > limit):
                    flush()   # a group never waits in its middle (a transaction that waits begins one)
                group.append(rows)
                continue
            flush()
            one_by_one(rows)
        flush()
        if counted is not None:
            counted.add([(fast.groups, fast.fallbacks, fast.statements)])


def _settled_by_error_queue(engine: Any, apply_name: str, txn: Any) -> None:
    """Record ``txn`` -- in the error queue, its batch perhaps replayed (a crash before the
    batch's commit, or disable_on_error's abort) -- as delivered in the target
    (SLUICE_APPLY_DONE), so a replay skips it whatever the user did with its error
    meanwhile: the Python process takes it off the apply queue with its error row, and
    neither DELETE_ERROR nor EXECUTE_ERROR may let a replay apply it again.  Not
    recorded (the target lost): the replay still skips it while its error row exists."""
    from ..errors import DatabaseError

    ident = engine.ident(txn)
    if ident is None:
        return
    try:
        engine.target.execute(*engine.target.done_statement(apply_name, txn.kind, ident))
        engine.target.commit()
    except DatabaseError:
        engine.target.rollback()


def _transaction_id() -> Any:
    """The column naming a row's transaction as :func:`source_transactions` groups them."""
    return (F.when(F.col("error").isNotNull(), F.concat(F.lit("E"), F.hex("msgid")))
            .when(F.col("lcr_kind").isNotNull() & F.col("commit_scn").isNotNull(),
                  F.concat_ws("|", F.lit("C"), "source_database_name", "transaction_id",
                              F.col("commit_scn").cast("string")))
            .otherwise(F.concat(F.lit("U"), F.coalesce("enq_tid", F.hex("msgid")))))


def _clock(monotonic: float) -> str:
    """A ``time.monotonic()`` reading as the wall clock (HH:MM:SS.s), for the batch log."""
    import time

    wall = time.time() - (time.monotonic() - monotonic)
    return time.strftime("%H:%M:%S", time.localtime(wall)) + f".{int(wall * 10) % 10}"


def _bucket_values(spark: Any, tasks: int) -> list[int]:
    """For each task k, a value v with pmod(hash(v), tasks) = k: ``repartition(tasks, col)``
    hashes a column so (Murmur3, as F.hash), and a column of these values puts the rows of
    task k into partition k, whatever the engine's hash."""
    found: dict[int, int] = {}
    for row in spark.range(0, 64 * tasks).select("id", F.expr(f"pmod(hash(id), {tasks})").alias("k")).collect():
        found.setdefault(row["k"], row["id"])
    return [found[k] for k in range(tasks)]


# expressions the optimizer turns into a constant of the moment it runs (ComputeCurrentTime):
# a stream must see each micro-batch's own, so a plan holding one is left to Spark
_OF_THE_MOMENT = re.compile(r"current_(timestamp|date|time)|localtimestamp|\bnow\(|unix_timestamp\(\)", re.I)


def optimized_once(df: DataFrame) -> DataFrame:
    """The stream ``df`` with its plan optimized now, once: Spark optimizes a streaming
    query's plan again for every micro-batch, and the decide plan's optimization (constant
    folding, simplification, projections collapsed, several passes to a fixed point) was a
    batch's largest fixed cost after its job -- an optimized plan reaches its fixed point at
    once (bench/RESULTS.md, spark16).  ``df`` itself when its plan holds a time of the moment."""
    from pyspark.sql import DataFrame as Frame

    execution = df._jdf.queryExecution()
    if _OF_THE_MOMENT.search(execution.analyzed().toString()):
        return df
    spark = df.sparkSession
    check = "spark.sql.streaming.unsupportedOperationCheck"   # it refuses to optimize a stream outside a query
    before = spark.conf.get(check, "true")
    spark.conf.set(check, "false")
    try:
        optimized = execution.optimizedPlan()
    finally:
        spark.conf.set(check, before)
    return Frame(spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, optimized), spark)


def apply(df: DataFrame, connect: Callable[..., Any], dsn: str, apply_name: str, checkpoint: str,
          user: str | None = None, trigger: dict | None = None, tasks: int | None = None,
          waits_seen: list | None = None, group_transactions: int | None = None) -> Any:
    """Start applying the stream ``df`` as apply process ``apply_name`` of the store at
    ``dsn``, each micro-batch by ``tasks`` tasks (default: Spark's default parallelism)
    in parallel, a transaction after those it depends on (:mod:`.applyplan`).
    ``group_transactions``: by default the apply's GROUPTRANSOPS parameter (SET_PARAMETER;
    1, its default, applies each source transaction as one target transaction, as Streams
    does); N > 1 lets the set-form path (:mod:`.setapply`) put consecutive whole source
    transactions of one task into one target transaction of at most N LCRs (each source
    transaction still records its own SLUICE_APPLY_DONE row in it, and a group that meets a
    conflict or an error is rolled back and applied again one source transaction at a time)
    -- what the Python apply process does with the same parameter.
    ``waits_seen``: a list that gets, per transaction that waited for transactions of
    other tasks, (its record, theirs, how many times it looked, seconds waited); each
    batch's phases and waits are logged (``sluice.pipeline``, INFO)."""
    import logging
    import time

    from .applyplan import plan

    login = {"user": user} if user else {}
    log = logging.getLogger("sluice.pipeline")

    prepared: list[bool] = []
    buckets: dict[int, list[int]] = {}
    known: dict[tuple[str, str], list[str] | None] = {}   # tables' key columns, kept across batches
    facts = stagedsink.TableFacts()                        # the staged path's, likewise
    started: list[float] = []   # wall-clock starts of the batches this query ran (forget_delivered)

    def batch(frame: DataFrame, batch_id: int) -> None:
        entered, began = time.monotonic(), time.time()
        spark = frame.sparkSession
        n = tasks or spark.sparkContext.defaultParallelism
        if not prepared:   # the target's bookkeeping tables, made once before tasks race to make them
            with _apply_engine(connect, dsn, login, apply_name):
                prepared.append(True)
        forget_in_store(dsn, apply_name, batch_id, started)
        shipped = ship_functions()
        counted = spark.sparkContext.accumulator([], _Waits())

        def one_task(part: DataFrame, limit: int | None) -> None:
            # repartition, not coalesce: reading and deciding stay spread over the source's partitions
            ordered = _to_python(part).repartition(1).sortWithinPartitions("cscn", "seq")
            ordered.foreachPartition(lambda it: _apply_partition(connect, dsn, login, apply_name, shipped,
                                                                 batch_id, it, None, None, limit, counted))

        # not persisted: the staged path reads the batch once (one Spark job); the tasks' path persists it.
        # ``tx`` (and the staging columns, with_staging) come with the stream's rows
        rows = stagedsink.without_staging(frame)
        try:
            staged: list = []
            with _apply_engine(connect, dsn, login, apply_name) as (_conn, ctx, d, engine):
                forget_delivered(engine, apply_name, started)
                started[:] = [*started[-1:], began]
                limit = group_transactions if group_transactions is not None else int(d.parameter("GROUPTRANSOPS"))
                set_up = time.monotonic() - entered
                took = stagedsink.apply_staged(frame, engine, ctx, d, _has_actions(ctx), facts, limit,
                                               lambda part, one: one_task(part, one or group_transactions), staged)
            if took or n <= 1:
                if not took:
                    one_task(rows, group_transactions)
                log.info("apply %s batch %s: entered %s, left %s: %.1f s (set up %.2f s; %s; set-form groups, fallbacks, "
                         "statements: %s; staged groups, fallbacks, statements, segments, seconds: %s)", apply_name, batch_id,
                         _clock(entered), _clock(time.monotonic()), time.monotonic() - entered, set_up,
                         "staged" if took else "1 task", counted.value, staged)
                return
            rows = rows.persist()   # the decide plan runs once for the passes below
            began = time.monotonic()
            key_columns, acting, captured = _batch_facts(rows, connect, dsn, login, apply_name, known)
            keyed = _keys_frame(rows, key_columns, acting, captured).collect()
            if any(r["e"] for r in keyed):   # DDL may change keys: describe the tables again next time
                known.clear()
            keys_done = time.monotonic()
            assigned, waits = plan([(r["tx"], r["ident"], (r["c"], r["s"]), r["n"], None if r["e"] else r["h"])
                                    for r in keyed], n)
            if n not in buckets:   # a Spark job of its own: once per number of tasks
                buckets[n] = _bucket_values(spark, n)
            values = buckets[n]
            where = spark.createDataFrame([(tx, values[k]) for tx, k in assigned.items()], "tx string, bucket long")
            ordered = _to_python(rows.join(F.broadcast(where), "tx")).repartition(n, "bucket") \
                .sortWithinPartitions("cscn", "seq")
            waited = spark.sparkContext.accumulator([], _Waits())
            planned = time.monotonic()
            ordered.foreachPartition(lambda it: _apply_partition(connect, dsn, login, apply_name, shipped,
                                                                 batch_id, it, waits, waited, group_transactions,
                                                                 counted))
            log.info("apply %s batch %s: entered %s, left %s; %d transactions; prepare %.1f s, read, decide and "
                     "key them (in the JVM) %.1f s, plan %.1f s, apply %.1f s (%d waited for other tasks, %.1f s "
                     "in all; set-form groups, fallbacks, statements per task: %s)", apply_name, batch_id,
                     _clock(entered), _clock(time.monotonic()),
                     len(keyed), began - entered, keys_done - began, planned - keys_done,
                     time.monotonic() - planned, len(waited.value), sum(w[3] for w in waited.value), counted.value)
            if waits_seen is not None:
                waits_seen.extend(waited.value)
        finally:
            rows.unpersist()

    df = df.withColumn("tx", _transaction_id())
    try:   # the staging columns in the stream's plan, for the target's tables known now
        with _apply_engine(connect, dsn, login, apply_name) as (_conn, ctx, d, engine):
            prepared.append(True)
            df = stagedsink.with_staging(df, engine, d, _has_actions(ctx), facts)
    except Exception as e:   # noqa: BLE001 -- the batches open the apply again and report what fails
        log.warning("apply %s: the staging columns are made per micro-batch (%s: %s)", apply_name,
                    type(e).__name__, e)
    writer = optimized_once(df).writeStream.foreachBatch(batch).option("checkpointLocation", checkpoint)
    return writer.trigger(**(trigger or {"processingTime": "1 second"})).start()
