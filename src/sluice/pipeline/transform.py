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

from types import SimpleNamespace
from typing import Any, Callable, Iterable, Iterator, Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..errors import DatabaseError, ora
from ..rules.compile.typed.lcrschema import lcr_row, value_text
from ..rules.engine.ruleset import rules_catalog
from ..streams.lcr import DDLLCR, RowLCR
from ..streams.rowmigration import subset_operation
from ..streams.transform import Declarative, ordered
from . import rows

__all__ = ["declarative", "custom", "transformed", "plain_record", "subset_operations", "migrate"]

_HAS = {"OLD": ("UPDATE", "DELETE"), "NEW": ("INSERT", "UPDATE")}
_SIDES = {"*": ("OLD", "NEW"), "OLD": ("OLD",), "NEW": ("NEW",)}


def _table_is(t: Declarative) -> Column:
    return (F.col("object_owner") == F.lit(t.schema)) & (F.col("object_name") == F.lit(t.table))


def _updates(t: Declarative, rule: Column) -> dict[str, tuple[Column, Column]]:
    """What transformation ``t`` of the rows whose TRUE rule ``rule`` holds does: per
    column it changes, (the rows it changes, the column's new value) -- both over the
    columns as they are before it."""
    on = rule & (F.col("lcr_kind") == F.lit("ROW"))
    if t.kind == "RENAME SCHEMA":
        return {"object_owner": (on & (F.col("object_owner") == F.lit(t.from_name)), F.lit(t.to_name))}
    on = on & _table_is(t)
    if t.kind == "RENAME TABLE":
        return {"object_owner": (on, F.lit(t.to_schema)), "object_name": (on, F.lit(t.to_name))}
    updates: dict[str, tuple[Column, Column]] = {}
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
        updates[values] = (hit, new_v)
        updates[types] = (hit, new_t)
    return updates


def subset_operations(store: Any, rule_names: Iterable[str]) -> dict[str, str]:
    """``{rule: 'INSERT' | 'DELETE'}`` for the rules among ``rule_names`` whose action
    context asks for row migration (decided by :func:`sluice.streams.rowmigration.subset_operation`)."""
    catalog = rules_catalog(store)
    out = {}
    for name in rule_names:
        rule = catalog.rule(name)
        operation = subset_operation(SimpleNamespace(rule_action_context=rule.action_context))
        if operation is not None:
            out[name] = operation
    return out


def migrate(df: DataFrame, operations: Mapping[str, str], rule_column: str = "rule") -> DataFrame:
    """Row migration (:func:`sluice.streams.rowmigration.migrate` as Columns): an UPDATE
    whose TRUE rule is a subset rule becomes an INSERT of the row after the update (old
    values overlaid with the new ones, no old values) or a DELETE of the row before it."""
    inserts = [r for r, op in operations.items() if op == "INSERT"]
    deletes = [r for r, op in operations.items() if op == "DELETE"]
    if not inserts and not deletes:
        return df
    update = (F.col("lcr_kind") == F.lit("ROW")) & (F.col("command_type") == F.lit("UPDATE"))
    to_insert = update & F.col(rule_column).isin(*inserts) if inserts else F.lit(False)
    to_delete = update & F.col(rule_column).isin(*deletes) if deletes else F.lit(False)
    empty = F.create_map().cast("map<string,string>")

    def overlaid(old: str, new: str) -> Column:   # {**old, **new}: new wins, old's other keys kept
        return F.map_concat(F.map_filter(F.col(old), lambda k, _: ~F.map_contains_key(F.col(new), k)), F.col(new))
    return df.withColumns({
        "command_type": F.when(to_insert, F.lit("INSERT")).when(to_delete, F.lit("DELETE"))
                         .otherwise(F.col("command_type")),
        "new_values": F.when(to_insert, overlaid("old_values", "new_values"))
                       .when(to_delete, empty).otherwise(F.col("new_values")),
        "new_types": F.when(to_insert, overlaid("old_types", "new_types"))
                      .when(to_delete, empty).otherwise(F.col("new_types")),
        "old_values": F.when(to_insert, empty).otherwise(F.col("old_values")),
        "old_types": F.when(to_insert, empty).otherwise(F.col("old_types")),
    })


def declarative(df: DataFrame, by_rule: Mapping[str, Iterable[Declarative]], rule_column: str = "rule") -> DataFrame:
    """``df`` with the declarative transformations of each row's TRUE rule performed, each
    rule's in their order.  A row has one TRUE rule, so the rules' transformations never
    meet on a row: the k-th transformation of every rule is ONE projection (a CASE per
    column it changes), not a projection per transformation copying the maps each time."""
    chains = [(F.col(rule_column) == F.lit(rule), ordered(ts)) for rule, ts in by_rule.items()]
    for k in range(max((len(ts) for _, ts in chains), default=0)):
        changes: dict[str, Column] = {}
        for is_rule, ts in chains:
            for column, (hit, value) in (_updates(ts[k], is_rule) if k < len(ts) else {}).items():
                changes[column] = (changes[column] if column in changes else F).when(hit, value)
        df = df.withColumns({c: when.otherwise(F.col(c)) for c, when in changes.items()})
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
                out = transformed(fn, row[rule_column], rows.lcr_from_row(plain_record(row)))
                if out is None:
                    continue
                for c, value in lcr_row(out).items():
                    pdf.at[pdf.index[i], c] = value
                keep.append(i)
            yield pdf.iloc[keep]
    return df.mapInPandas(run, schema)


def transformed(function: Callable[[Any], Any], rule: str, lcr: Any) -> Any:
    """``function(lcr)``, the custom transformation of TRUE rule ``rule``: an LCR, or None
    (the LCR is discarded).  A sluice error it raises is its own; any other exception, or
    a result that is no LCR (a row of the pipeline holds LCR columns: anything else would
    be written as an empty DDL LCR), is ORA-25229 naming the function and the cause, as
    a propagation's transformation error is (:mod:`sluice.streams.propagation.job`)."""
    owner, _, name = rule.rpartition(".")
    where = f"{getattr(function, '__module__', None) or '?'}:{getattr(function, '__qualname__', function)}"
    try:
        out = function(lcr)
    except DatabaseError:
        raise
    except Exception as e:      # noqa: BLE001 (the user's function: any failure is its error)
        raise ora(25229, owner, name, f"{where} failed: {type(e).__name__}: {e}") from None
    if out is not None and not isinstance(out, (RowLCR, DDLLCR)):
        raise ora(25229, owner, name, f"{where} returned a {type(out).__name__}, not a row or DDL LCR")
    return out


def plain_record(row: dict) -> dict:
    """A pandas record as :func:`~.rows.lcr_from_row` takes it: maps (lists of pairs
    from Arrow) as dicts, NaN as None."""
    out = {}
    for k, v in row.items():
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            v = dict(v)
        out[k] = None if isinstance(v, float) and v != v else v
    return out
