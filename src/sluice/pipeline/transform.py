"""Rule-based transformations on a DataFrame of LCR rows.

Declarative ones (:mod:`sluice.streams.transform`, the one statement of what they do)
compile to Column expressions over the LCR columns, guarded by the row's TRUE positive
rule (the ``rule`` column :func:`~sluice.rules.compile.spark.ruleset.streams_verdict`
adds): names are plain column updates, column lists are ``map_filter`` /
``transform_keys`` / ``map_concat`` of ``*_values`` and ``*_types`` together.
Custom rule-based transformations -- Python functions registered by name, called with
an LCR and returning one -- run as a vectorized UDF (``mapInPandas``) over the rows
whose rule names one, in the Python of the executors.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..rules.compile.typed.lcrschema import lcr_row, value_text
from ..streams.transform import Declarative, ordered
from . import rows

__all__ = ["declarative", "custom", "plain_record"]

_HAS = {"OLD": ("UPDATE", "DELETE"), "NEW": ("INSERT", "UPDATE")}
_SIDES = {"*": ("OLD", "NEW"), "OLD": ("OLD",), "NEW": ("NEW",)}


def _table_is(t: Declarative) -> Column:
    return (F.col("object_owner") == F.lit(t.schema)) & (F.col("object_name") == F.lit(t.table))


def _one(df: DataFrame, t: Declarative, rule: Column) -> DataFrame:
    on = rule & (F.col("lcr_kind") == F.lit("ROW"))
    if t.kind == "RENAME SCHEMA":
        hit = on & (F.col("object_owner") == F.lit(t.from_name))
        return df.withColumn("object_owner", F.when(hit, F.lit(t.to_name)).otherwise(F.col("object_owner")))
    on = on & _table_is(t)
    if t.kind == "RENAME TABLE":
        return df.withColumns({"object_owner": F.when(on, F.lit(t.to_schema)).otherwise(F.col("object_owner")),
                               "object_name": F.when(on, F.lit(t.to_name)).otherwise(F.col("object_name"))})
    updates: dict[str, Column] = {}
    for side in _SIDES[t.value_type]:
        values, types = f"{side.lower()}_values", f"{side.lower()}_types"
        v, ty = F.col(values), F.col(types)
        hit = on & F.col("command_type").isin(*_HAS[side])
        if t.kind == "KEEP COLUMNS":
            keep = F.array(*map(F.lit, t.columns))
            new_v = F.map_filter(v, lambda k, _: F.array_contains(keep, k))
            new_t = F.map_filter(ty, lambda k, _: F.array_contains(keep, k))
        elif t.kind == "DELETE COLUMN":
            new_v = F.map_filter(v, lambda k, _: k != F.lit(t.column))
            new_t = F.map_filter(ty, lambda k, _: k != F.lit(t.column))
            hit = hit & F.map_contains_key(v, F.lit(t.column))
        elif t.kind == "RENAME COLUMN":
            def renamed(k: Column, _: Column) -> Column:
                return F.when(k == F.lit(t.from_name), F.lit(t.to_name)).otherwise(k)
            new_v, new_t = F.transform_keys(v, renamed), F.transform_keys(ty, renamed)
            hit = hit & F.map_contains_key(v, F.lit(t.from_name)) & ~F.map_contains_key(v, F.lit(t.to_name))
        else:   # ADD COLUMN
            text = value_text(t.value.value)
            new_v = F.map_concat(v, F.create_map(F.lit(t.column), F.lit(text).cast("string")))
            new_t = F.map_concat(ty, F.create_map(F.lit(t.column), F.lit(t.value.get_type_name()).cast("string")))
            hit = hit & ~F.map_contains_key(v, F.lit(t.column))
        updates[values] = F.when(hit, new_v).otherwise(v)
        updates[types] = F.when(hit, new_t).otherwise(ty)
    return df.withColumns(updates)


def declarative(df: DataFrame, by_rule: Mapping[str, Iterable[Declarative]], rule_column: str = "rule") -> DataFrame:
    """``df`` with the declarative transformations of each row's TRUE rule performed.
    Rules are handled one after another; each rule's transformations in their order."""
    for rule, transformations in by_rule.items():
        is_rule = F.col(rule_column) == F.lit(rule)
        for t in ordered(transformations):
            df = _one(df, t, is_rule)
    return df


def custom(df: DataFrame, functions: Mapping[str, Callable[[Any], Any]], rule_column: str = "rule") -> DataFrame:
    """Custom rule-based transformations: for a row whose TRUE rule is a key of
    ``functions`` the function gets the row's LCR and its result replaces the row's LCR
    columns (None: the LCR is discarded, as a transformation returning NULL does).  The
    functions travel to the executors by pickling; they run per Arrow batch."""
    names = dict(functions)
    if not names:
        return df
    schema = df.schema

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for pdf in batches:
            keep = []
            for i, row in enumerate(pdf.to_dict("records")):
                fn = names.get(row.get(rule_column))
                if fn is None:
                    keep.append(i)
                    continue
                out = fn(rows.lcr_from_row(plain_record(row)))
                if out is None:
                    continue
                for c, value in lcr_row(out).items():
                    pdf.at[pdf.index[i], c] = value
                keep.append(i)
            yield pdf.iloc[keep]
    return df.mapInPandas(run, schema)


def plain_record(row: dict) -> dict:
    """A pandas record as :func:`~.rows.lcr_from_row` takes it: maps (lists of pairs
    from Arrow) as dicts, NaN as None."""
    out = {}
    for k, v in row.items():
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            v = dict(v)
        out[k] = None if isinstance(v, float) and v != v else v
    return out
