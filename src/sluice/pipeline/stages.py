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

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..rules.compile.spark.ruleset import SparkRuleSet, streams_verdict
from ..streams.transform.adm import declarative_transformations
from . import transform

__all__ = ["PipelineSpec", "decide", "rule_sets"]


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
    custom_transformations: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)

    def source_options(self) -> dict[str, str]:
        options = {"dsn": self.dsn, "queue": self.queue, "pipeline": self.name, "partitions": str(self.partitions)}
        for key, value in (("consumer", self.consumer), ("user", self.user),
                           ("maxMessagesPerBatch", self.max_messages_per_batch)):
            if value is not None:
                options[key] = str(value)
        return options


def rule_sets(conn: Any, spec: PipelineSpec) -> tuple[SparkRuleSet | None, SparkRuleSet | None]:
    """The spec's rule sets compiled for Spark (names resolved in ``conn``'s schema)."""
    return tuple(SparkRuleSet.from_rule_set(conn, name) if name else None   # type: ignore[return-value]
                 for name in (spec.positive_rule_set, spec.negative_rule_set))


def decide(df: DataFrame, store: Any, positive: SparkRuleSet | None, negative: SparkRuleSet | None,
           custom: Mapping[str, Callable[[Any], Any]] | None = None) -> DataFrame:
    """The rows the client performs its task for, transformed; adds ``rule`` (the TRUE
    positive rule, NULL for rows the rule sets do not decide)."""
    decided = streams_verdict(df, positive, negative)
    undecided = F.col("lcr_kind").isNull()
    kept = decided.where(undecided | F.col("perform")).withColumn(
        "rule", F.when(undecided, F.lit(None).cast("string")).otherwise(F.col("rule")))
    kept = kept.drop("perform", "negative_rule")
    by_rule = declarative_transformations(store)
    if positive is not None:
        by_rule = {r: ts for r, ts in by_rule.items() if r in set(positive.names)}
    kept = transform.declarative(kept, by_rule)
    return transform.custom(kept, custom or {})
