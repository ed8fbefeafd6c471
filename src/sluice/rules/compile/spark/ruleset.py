"""Rule sets over LCR DataFrames: simple rules through broadcast joins, the rest in chunks.

::

    from sluice.rules.compile.spark.ruleset import SparkRuleSet, streams_verdict

    positive = SparkRuleSet.from_rule_set(conn, "strmadmin.apply_rules")
    fired = positive.fired(lcrs)                  # + "fired": array<string>, rule-set order
    decided = streams_verdict(lcrs, positive)     # + perform, rule, negative_rule (Table 6-1)

A compiled Column per rule (:mod:`compiler`) costs every LCR every rule,
and past ~100 rules it must be evaluated in chunks (the 64 KB method limit).
The Python path files simple rules under their equality terms (:mod:`sluice.rules.engine.index`);
here the same idea is a join, which Spark does at hash-table speed whatever
the number of rules (DESIGN.md sections 4 and 5).  :mod:`plan` takes the
rule set apart (joins, classes, candidates, complex rules; why it is exact is
explained there); this module builds the query.  Rules are ids (positions in
rule-set order), ints all the way: the first TRUE rule is a ``least`` of ints,
the TRUE rules a sorted ``array<int>``; names are looked up once, at the end.

* Guards: every distinct ``key = 'constant'`` guard of every class is one bit
  of a ``bigint`` mask column computed once per LCR, *before* the joins --
  measured, a class condition re-evaluating its guards on the joined row cost
  as much as the join itself;
* each join is a small DataFrame, one row per tuple of join-key values, with
  per class the first id (``int``) and all ids (``array<int>``) of its rules
  filed there, broadcast and left-joined to the LCRs on the key expressions --
  or, up to ``lookup_limit`` rows, the same rows as a literal table looked up per
  LCR (:func:`.lookup.literal_lookup`, hashed: about one key comparison): a broadcast
  is a Spark job and an exchange planned again every micro-batch of a stream, a
  literal is folded once per plan;
* a class holds when the join matched, its mask bits are set and its residue
  (compiled) is TRUE -- evaluated only as far as the LCR matched;
* candidates (classes beyond the limit) are filtered one by one with a lambda,
  their parameters read from the candidate's struct;
* complex rules are Columns in chunks of ``chunk_size``: per chunk a CASE gives
  the first TRUE id, an array the TRUE ids.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import reduce
from typing import Any, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...lang.ast import Condition
from ...lang.parser import parse_condition
from ..typed import ir
from .compiler import SparkRenderer
from .lookup import literal_lookup
from .plan import PARAM, Join, plan_rules

__all__ = ["SparkRuleSet", "streams_verdict"]

_IDS = T.ArrayType(T.IntegerType())
# joins of at most this many rows are a literal map lookup (SparkRuleSet._lookup), not a broadcast join
_LOOKUP_LIMIT = 256
_BITS = 62  # guard bits per mask word: a positive bigint literal whatever the bit
_uids = itertools.count()


@dataclass
class _Hits:
    """The TRUE rules of a rule set on a DataFrame: ``first`` (int, NULL when none) and
    ``ids`` (array<int>, unordered), built lazily from per-part Columns."""

    df: DataFrame
    firsts: list[Column] = field(default_factory=list)
    arrays: list[Column] = field(default_factory=list)
    drop: list[str] = field(default_factory=list)

    @property
    def first(self) -> Column:
        if not self.firsts:
            return F.lit(None).cast("int")
        return self.firsts[0] if len(self.firsts) == 1 else F.least(*self.firsts)

    @property
    def ids(self) -> Column:
        """Ascending: a sort only when more than one part can hold a rule."""
        if not self.arrays:
            return F.array().cast(_IDS)
        return self.arrays[0] if len(self.arrays) == 1 else F.sort_array(F.concat(*self.arrays))


class SparkRuleSet:
    """A rule set, taken apart for Spark; rule ids are positions in :attr:`names`.

    ``rules``: ``(name, condition)`` in rule-set order, the condition a text or
    a parsed tree; a condition of None (a stored rule that no longer compiles)
    is never TRUE.  Variables are those of the Streams evaluation context over
    :mod:`sluice.rules.compile.typed.lcrschema` columns: ``:dml`` (row LCRs),
    ``:ddl``, ``:lcr``; any other variable is NULL, as for Streams clients.  ``options`` tune
    :func:`plan.plan_rules` (``guard_limit``, ``max_joins``, ``min_join``,
    ``max_classes``).

    :raises NotCompilable: a rule cannot be expressed as a Spark Column (raised
        here, or for a few built-ins when the Columns are first built).
    """

    def __init__(self, rules: Sequence[tuple[str, str | Condition | None]], *, chunk_size: int = 50,
                 lookup_limit: int = _LOOKUP_LIMIT, **options: Any) -> None:
        self.names = [name for name, _ in rules]
        self.chunk_size = chunk_size
        self.lookup_limit = lookup_limit
        self.plan = plan_rules([(name, parse_condition(c) if isinstance(c, str) else c) for name, c in rules],
                               **options)
        self._frames: dict[tuple[int, int], DataFrame] = {}
        self._lookups: dict[int, dict[str, Any] | None] = {}
        self._bits: dict[tuple[ir.Node, str], int] = {}
        for join in self.plan.joins:
            for klass in join.classes:
                for guard in klass.guard:
                    self._bits.setdefault(guard, len(self._bits))

    def __len__(self) -> int:
        return len(self.names)

    @classmethod
    def from_rule_set(cls, conn: Any, rule_set: str, **options: Any) -> "SparkRuleSet":
        """The rules of a stored rule set (resolved in ``conn``'s schema), in rule-set order.

        :raises NotCompilable: a rule of the set uses another evaluation context than
            ``SYS.STREAMS$_EVALUATION_CONTEXT`` (its variables are not LCR columns).
        """
        from ...evaluate import evaluator_for
        from ...engine.ruleset import STREAMS_CONTEXT, rules_catalog

        catalog = rules_catalog(conn.context.store)
        qualified = catalog.rule_set(catalog.key(rule_set, conn.username, "rule set name")).qualified
        others = {catalog.effective_context(m) for m in catalog.members_of(qualified)} - {STREAMS_CONTEXT}
        if others:
            raise ir.NotCompilable(f"rules of {qualified} in evaluation context {sorted(map(str, others))}")
        evaluator = evaluator_for(catalog, qualified, STREAMS_CONTEXT)
        return cls([(r.name, r.tree) for r in evaluator.rules], **options)

    def describe(self) -> dict[str, Any]:
        """How the rules were filed: per join its key count, rules, classes, templates."""
        return self.plan.describe()

    # -- Spark ---------------------------------------------------------------------------

    def name_of(self, rid: Column) -> Column:
        """A rule's name from its id (NULL stays NULL).  One literal string, split: Spark
        folds it into a constant array once, where 10,000 literals would be 10,000 JVM calls."""
        names = F.split(F.lit("\0".join(self.names)), "\0") if self.names else F.array().cast("array<string>")
        # get, not element_at: PySpark 4.3's element_at of a constant array at a NULL index
        # returns the last element instead of NULL
        return F.get(names, rid)

    def _frame(self, spark: Any, j: int) -> DataFrame:
        """The broadcast side of join ``j``: a row per tuple of join-key values (columns
        ``k<i>``, per class ``f<c>`` and ``a<c>``, ``cands``), built once per session."""
        key = (id(spark), j)
        if key in self._frames:
            return self._frames[key]
        join = self.plan.joins[j]
        width = max((len(p) for c in join.candidates.values() for *_, p in c), default=0)
        cand = T.StructType([T.StructField("id", T.IntegerType()), T.StructField("t", T.IntegerType())]
                            + [T.StructField(f"{PARAM}{i}", T.StringType()) for i in range(width)])
        fields = [T.StructField(f"k{i}", T.StringType()) for i in range(len(join.keys))]
        for c in range(len(join.classes)):
            fields += [T.StructField(f"f{c}", T.IntegerType()), T.StructField(f"a{c}", _IDS)]
        rows = []
        for values in join.hits.keys() | join.candidates.keys():
            by_class = join.hits.get(values, {})
            row: list[Any] = list(values)
            for c in range(len(join.classes)):
                ids = sorted(by_class.get(c, ()))
                row += [ids[0], ids] if ids else [None, None]
            if join.templates:
                row.append([(rid, t, *p, *[None] * (width - len(p)))
                            for rid, t, p in join.candidates.get(values, ())] or None)
            rows.append(tuple(row))
        if join.templates:
            fields.append(T.StructField("cands", T.ArrayType(cand)))
        self._frames[key] = frame = spark.createDataFrame(rows, T.StructType(fields))
        return frame

    def _lookup_entries(self, j: int) -> dict[str, Any] | None:
        """Join ``j``'s frame as constants (:meth:`_lookup`): per tuple of join-key values
        (joined by NUL) the frame's other columns; None when it has more than
        ``lookup_limit`` rows (the literal is parsed and held in every plan: past a few
        hundred rows a broadcast join is the smaller plan) or a constant holds a NUL."""
        if j in self._lookups:
            return self._lookups[j]
        join = self.plan.joins[j]
        keys = join.hits.keys() | join.candidates.keys()
        entries: dict[str, Any] | None = None
        if len(keys) <= self.lookup_limit and not any("\0" in v for values in keys for v in values):
            width = max((len(p) for c in join.candidates.values() for *_, p in c), default=0)
            entries = {}
            for values in keys:
                by_class = join.hits.get(values, {})
                entry: dict[str, Any] = {}
                for c in range(len(join.classes)):
                    ids = sorted(by_class.get(c, ()))
                    entry[f"f{c}"], entry[f"a{c}"] = (ids[0], ids) if ids else (None, None)
                if join.templates:
                    entry["cands"] = [{"id": rid, "t": t, **{f"{PARAM}{i}": v for i, v in enumerate(p)},
                                       **{f"{PARAM}{i}": None for i in range(len(p), width)}}
                                      for rid, t, p in join.candidates.get(values, ())] or None
                entries["\0".join(values)] = entry
        self._lookups[j] = entries
        return entries

    def _lookup(self, j: int, entries: dict[str, Any], renderer: SparkRenderer) -> tuple[Column, list[str]]:
        """Join ``j`` as a lookup in a literal table (the struct of the frame's columns, NULL
        where the join would miss): no broadcast, so no Spark job and no exchange planned per
        micro-batch.  Exact as the join: the key is the key values joined by NUL, NULL when
        one is NULL; the constants hold no NUL, so an LCR value holding one never matches."""
        join = self.plan.joins[j]
        width = max((len(p) for c in join.candidates.values() for *_, p in c), default=0)
        fields = []
        for c in range(len(join.classes)):
            fields += [T.StructField(f"f{c}", T.IntegerType()), T.StructField(f"a{c}", _IDS)]
        if join.templates:
            cand = T.StructType([T.StructField("id", T.IntegerType()), T.StructField("t", T.IntegerType())]
                                + [T.StructField(f"{PARAM}{i}", T.StringType()) for i in range(width)])
            fields.append(T.StructField("cands", T.ArrayType(cand)))
        keys = [renderer.render(node) for node in join.keys]
        key = keys[0] if len(keys) == 1 else F.when(reduce(lambda a, b: a & b, [k.isNotNull() for k in keys]),
                                                    F.concat_ws("\0", *keys))
        return literal_lookup(entries, T.StructType(fields), key), [f.name for f in fields]

    def _mask(self, renderer: SparkRenderer, prefix: str) -> dict[str, Column]:
        """The guard mask columns: bit ``b`` of word ``b // _BITS`` is set when guard ``b`` is TRUE."""
        words: dict[str, Column] = {}
        for (node, value), b in self._bits.items():
            bit = F.when(renderer.render(node) == F.lit(value), _long(1 << (b % _BITS))).otherwise(_long(0))
            name = f"{prefix}m{b // _BITS}"
            words[name] = bit if name not in words else words[name].bitwiseOR(bit)
        return words

    def _guarded(self, guard: Sequence[tuple[ir.Node, str]], prefix: str) -> list[Column]:
        need: dict[int, int] = {}
        for g in guard:
            b = self._bits[g]
            need[b // _BITS] = need.get(b // _BITS, 0) | 1 << (b % _BITS)
        return [F.col(f"{prefix}m{w}").bitwiseAND(_long(m)) == _long(m) for w, m in need.items()]

    def _hits(self, lcrs: DataFrame) -> _Hits:
        """``lcrs`` joined as the plan says, and the Columns of its TRUE rules."""
        # Helper columns get names of their own per call: the same frame joined twice into one
        # plan (a rule set used twice, streams_verdict after fired) would otherwise be a
        # self-join, where Spark may bind a column to the wrong side.
        prefix = f"_sluice_{next(_uids)}_"
        renderer = SparkRenderer()  # one for all: a key or residue used by many classes is one Column
        masks = self._mask(renderer, prefix)
        out = _Hits(lcrs.withColumns(masks) if masks else lcrs, drop=list(masks))
        for j, join in enumerate(self.plan.joins):
            at = f"{prefix}j{j}"
            entries = self._lookup_entries(j) if join.keys else None
            if entries is not None:
                found, names = self._lookup(j, entries, renderer)
                out.df = out.df.withColumn(at, found)
                out.df = out.df.withColumns({at + n: F.col(at)[n] for n in names})
                out.drop += [at] + [at + n for n in names]
            elif join.keys:
                frame = self._frame(lcrs.sparkSession, j)
                frame = frame.toDF(*[at + c for c in frame.columns])
                on = [renderer.render(node) == F.col(f"{at}k{i}") for i, node in enumerate(join.keys)]
                out.df = out.df.join(F.broadcast(frame), on, "left")
                out.drop += frame.columns
            for c, klass in enumerate(join.classes):
                tests = self._guarded(klass.guard, prefix)
                if klass.residue is not None:
                    tests.append(renderer.render(klass.residue))
                if join.keys:
                    first, ids = F.col(f"{at}f{c}"), F.col(f"{at}a{c}")
                    tests.insert(0, first.isNotNull())  # the join missed: nothing else is evaluated
                else:  # no join: the class's guards decide alone
                    members = sorted(join.hits[()][c])
                    first, ids = F.lit(members[0]), F.array(*map(F.lit, members)).cast(_IDS)
                holds = reduce(lambda a, b: a & b, tests) if tests else F.lit(True)
                out.firsts.append(F.when(holds, first))
                out.arrays.append(F.when(holds, ids).otherwise(F.array().cast(_IDS)))
            if join.templates:
                ids = F.coalesce(_candidates(join, F.col(f"{at}cands")), F.array().cast(_IDS))
                out.firsts.append(F.array_min(ids))
                out.arrays.append(ids)
        for i in range(0, len(self.plan.complex), self.chunk_size):
            chunk = [(renderer.render(node), F.lit(rid)) for rid, node in self.plan.complex[i:i + self.chunk_size]]
            first = F.when(*chunk[0])
            for test, rid in chunk[1:]:
                first = first.when(test, rid)  # ids ascend: the first TRUE branch is the least id
            out.firsts.append(first)
            out.arrays.append(F.array_compact(F.array(*[F.when(test, rid) for test, rid in chunk])))
        return out

    def fired_ids(self, lcrs: DataFrame, name: str = "fired_ids") -> DataFrame:
        """``lcrs`` plus ``name``: array<int> of the TRUE rules' ids, ascending (rule-set order)."""
        hits = self._hits(lcrs)
        return hits.df.withColumn(name, hits.ids).drop(*hits.drop)

    def fired(self, lcrs: DataFrame, name: str = "fired") -> DataFrame:
        """``lcrs`` plus ``name``: array<string> of the TRUE rules' names, in rule-set order."""
        hits = self._hits(lcrs)
        return hits.df.withColumn(name, F.transform(hits.ids, self.name_of)).drop(*hits.drop)

    def first_hit(self, lcrs: DataFrame, name: str = "rule") -> DataFrame:
        """``lcrs`` plus ``name``: the first TRUE rule's name (stop on first hit), else NULL."""
        hits = self._hits(lcrs)
        return hits.df.withColumn(name, self.name_of(hits.first)).drop(*hits.drop)


def _long(value: int) -> Column:
    return F.lit(value).cast("bigint")


def _candidates(join: Join, cands: Column) -> Column:
    """The ids of the candidates whose template is TRUE.  Spark interprets this lambda per
    candidate: the path for rule sets whose rules differ in more than ``max_classes`` ways."""
    def holds(c: Column) -> Column:
        renderer = _ElementRenderer(c)  # parameters are fields of this candidate
        test = None
        for number, node in enumerate(join.templates):
            outcome = renderer.render(node)
            test = F.when(c["t"] == number, outcome) if test is None else test.when(c["t"] == number, outcome)
        return F.coalesce(test, F.lit(False))
    return F.transform(F.filter(cands, holds), lambda c: c["id"])


class _ElementRenderer(SparkRenderer):
    """Renders a template inside a lambda: parameters read the candidate's fields."""

    def __init__(self, element: Column) -> None:
        super().__init__()
        self.element = element

    def column(self, node: ir.Column) -> Column:
        return self.element[node.name] if node.name.startswith(PARAM) else F.col(node.name)


def streams_verdict(lcrs: DataFrame, positive: SparkRuleSet | None = None,
                    negative: SparkRuleSet | None = None,
                    columns: tuple[str, str, str] = ("perform", "rule", "negative_rule")) -> DataFrame:
    """Seed 000 Table 6-1 per LCR, as :func:`sluice.streams.evaluate_rule_sets` decides it.

    Adds ``perform`` (boolean), ``rule`` (the first TRUE positive rule, NULL
    without a positive rule set or when discarded) and ``negative_rule`` (the
    first TRUE negative rule that discarded the LCR), under the names ``columns``.
    A negative rule TRUE discards; otherwise a client with a positive rule set
    performs its task exactly when one of its rules is TRUE (an empty set
    discards everything), and one without always does.
    """
    df, drop = lcrs, []
    neg = pos = None
    if negative is not None:
        hits = negative._hits(df)
        df, neg, drop = hits.df, hits.first, drop + hits.drop
    if positive is not None:
        hits = positive._hits(df)
        df, pos, drop = hits.df, hits.first, drop + hits.drop
    discarded = F.lit(False) if neg is None else neg.isNotNull()
    perform = ~discarded if pos is None else ~discarded & pos.isNotNull()
    rule = F.lit(None).cast("string") if pos is None else F.when(~discarded, positive.name_of(pos))
    negative_rule = F.lit(None).cast("string") if neg is None else negative.name_of(neg)
    return df.withColumns(dict(zip(columns, (perform, rule, negative_rule)))).drop(*drop)
