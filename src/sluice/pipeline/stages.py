"""What a pipeline does to a queue's rows between the source and the sink.

:class:`PipelineSpec` is a pipeline's definition; :func:`decide` evaluates the Streams
client's rule sets with the Spark rule compiler (seed 000 Table 6-1, Streams semantics
for undefined values: :func:`~sluice.rules.compile.spark.ruleset.streams_verdict`),
keeps the messages the client performs its task for and performs the declarative
transformations of each one's TRUE rule (:mod:`.transform`), then the custom ones.
User messages (no LCR columns) and undecodable payloads are never discarded here: the
rule sets of an LCR pipeline do not speak about them, and a bad payload must reach the
sink, which records it with its reason.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable, Iterator, Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..rules.compile.spark.ruleset import SparkRuleSet, streams_verdict
from ..rules.compile.typed.ir import NotCompilable
from ..rules.engine.ruleset import rules_catalog
from ..streams.transform.adm import declarative_transformations
from . import documents, transform

__all__ = ["PipelineSpec", "RuleSets", "decide", "rule_sets", "python_verdict"]

log = logging.getLogger("sluice.pipeline")


@dataclass
class PipelineSpec:
    """A pipeline: read ``queue`` (as ``consumer``) of the store at ``dsn``, decide with
    the rule sets, transform, and hand the rows to the sink."""

    name: str
    dsn: str
    queue: str
    consumer: str | None = None
    positive_rule_set: str | None = None
    negative_rule_set: str | None = None
    user: str | None = None
    max_messages_per_batch: int | None = None
    partitions: int = 2
    # the apply sink's tasks per micro-batch (None: Spark's default parallelism)
    apply_tasks: int | None = None
    custom_transformations: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    # plain row LCRs decoded in the JVM (:func:`.documents.decode`, first step of :func:`decide`)
    # instead of the source's Python: off until it measures faster (bench/RESULTS.md, jvm16)
    decode_in_jvm: bool = False

    def __post_init__(self) -> None:
        for name in ("max_messages_per_batch", "apply_tasks", "partitions"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer, not {value!r}")

    def source_options(self) -> dict[str, str]:
        options = {"dsn": self.dsn, "queue": self.queue, "pipeline": self.name, "partitions": str(self.partitions),
                   "documents": "true" if self.decode_in_jvm else "false"}
        for key, value in (("consumer", self.consumer), ("user", self.user),
                           ("maxMessagesPerBatch", self.max_messages_per_batch)):
            if value is not None:
                options[key] = str(value)
        return options


@dataclass
class RuleSets:
    """A client's rule sets for Spark: compiled (``positive`` / ``negative``), or -- when a
    rule cannot be a Column -- evaluated by the Python rules engine in a vectorized UDF
    (``python``: the names, with the store and user to resolve them on the executors)."""

    names: tuple[str | None, str | None] = (None, None)
    positive: SparkRuleSet | None = None
    negative: SparkRuleSet | None = None
    python: bool = False
    dsn: str = ""
    user: str | None = None


def rule_sets(conn: Any, spec: PipelineSpec) -> RuleSets:
    """The spec's rule sets compiled for Spark (names resolved in ``conn``'s schema); a
    rule set that cannot compile falls back to the Python path, with a warning."""
    names = (spec.positive_rule_set, spec.negative_rule_set)
    try:
        positive, negative = (SparkRuleSet.from_rule_set(conn, n) if n else None for n in names)
    except NotCompilable as e:
        log.warning("pipeline %s: rule sets %s evaluated in Python on the executors (%s)", spec.name,
                    [n for n in names if n], e)
        return RuleSets(names, python=True, dsn=spec.dsn, user=conn.username)
    return RuleSets(names, positive, negative, dsn=spec.dsn, user=conn.username)


class _Session:
    """What :func:`~sluice.streams.evaluate_rule_sets` reads of a connection: the store
    and the user (rule set names resolve in the user's schema)."""

    def __init__(self, store: Any, username: str) -> None:
        self.context = SimpleNamespace(store=store)
        self.username = username


def python_verdict(df: DataFrame, rule_set_names: tuple[str | None, str | None], dsn: str,
                   user: str | None) -> DataFrame:
    """``perform`` / ``rule`` / ``negative_rule`` decided by the Python rules engine, per
    Arrow batch on the executors (the path for rule sets Spark cannot compile)."""
    from pyspark.sql import types as T

    schema = T.StructType(list(df.schema.fields) + [T.StructField("perform", T.BooleanType()),
                                                   T.StructField("rule", T.StringType()),
                                                   T.StructField("negative_rule", T.StringType())])
    positive, negative = rule_set_names
    username = (user or "SLUICE").upper()

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        from ..store import open_store, release_store
        from ..streams import evaluate_rule_sets
        from .rows import lcr_from_row
        from .transform import plain_record

        store = open_store(dsn)
        try:
            session = _Session(store, username)
            for pdf in batches:
                decided = []
                for record in pdf.to_dict("records"):
                    if record.get("lcr_kind") is None:
                        decided.append((True, None, None))
                        continue
                    v = evaluate_rule_sets(session, lcr_from_row(plain_record(record)), positive, negative)
                    decided.append((v.perform, v.rule and v.rule.rule_name,
                                    v.negative_rule and v.negative_rule.rule_name))
                pdf = pdf.assign(perform=[d[0] for d in decided], rule=[d[1] for d in decided],
                                 negative_rule=[d[2] for d in decided])
                yield pdf
        finally:
            release_store(store)
    return df.mapInPandas(run, schema)


def _positive_rules(store: Any, sets: RuleSets) -> list[str]:
    if sets.positive is not None:
        return list(sets.positive.names)
    catalog = rules_catalog(store)
    qualified = catalog.key(sets.names[0], (sets.user or "SLUICE").upper(), "rule set name")
    return [m.rule for m in catalog.members_of(qualified)]


def decide(df: DataFrame, store: Any, sets: RuleSets,
           custom: Mapping[str, Callable[[Any], Any]] | None = None) -> DataFrame:
    """The rows the client performs its task for, transformed; adds ``rule`` (the TRUE
    positive rule, NULL for rows the rule sets do not decide).  Row LCRs the source left
    as their stored text (``documents``) are decoded first."""
    df = documents.decode(df)
    decided = None
    if not sets.python:
        try:
            decided = streams_verdict(df, sets.positive, sets.negative)
        except NotCompilable as e:   # a built-in that fails only when its Column is built
            log.warning("rule sets %s evaluated in Python on the executors (%s)", [n for n in sets.names if n], e)
            sets.python = True
    if decided is None:
        decided = python_verdict(df, sets.names, sets.dsn, sets.user)
    undecided = F.col("lcr_kind").isNull()
    kept = decided.where(undecided | F.col("perform")).withColumn(
        "rule", F.when(undecided, F.lit(None).cast("string")).otherwise(F.col("rule")))
    kept = kept.drop("perform", "negative_rule")
    # the action context's order (seed 000 "Purposes of Action Contexts in Streams"): subset
    # transformation, declarative transformations, custom transformation
    if sets.names[0] is not None:
        kept = transform.migrate(kept, transform.subset_operations(store, _positive_rules(store, sets)))
    kept = transform.declarative(kept, declarative_transformations(store))
    return transform.custom(kept, custom or {})
