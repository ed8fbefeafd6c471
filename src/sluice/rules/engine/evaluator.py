"""The rules engine: a rule set, compiled once, evaluated per event.

:class:`RuleSetEvaluator` holds the rules of one rule set that use one
evaluation context, each compiled by :mod:`sluice.rules.compile.python` and filed in
a :class:`~sluice.rules.engine.index.RuleIndex`.  An :class:`Event` carries what the
client supplied: variable values (absent = undefined) and table rows.

Undefined variables (seed 000, "Rule Conditions with Undefined Variables"):

* for Streams clients (``streams=True``) an undefined variable is NULL, so
  ``:m IS NULL`` is TRUE and ``:m = 5`` is not;
* for other clients a rule whose outcome depends on an undefined variable is a
  *maybe* rule.  Its condition is evaluated over the set of outcomes each atom
  (comparison, IS NULL, LIKE …) can have: an atom reading an undefined
  variable can be TRUE, FALSE or NULL, any other atom has its one value.  TRUE
  in every case is TRUE; TRUE in some case is MAYBE; else not TRUE.  So
  ``:dml.get_object_owner() = 'SCOTT' AND :m = 5`` is FALSE for an HR row
  whatever ``m`` is, and ``:m IS NULL`` is MAYBE.

A bad value never aborts an evaluation: a rule that raises is NULL (never TRUE).
Results come back in rule-set order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from ...names import canonical
from ...sqlfunctions import FUNCTIONS, NILADIC, null_if_empty
from ..compile.python import call_method, compile_expression, compile_python, get_path
from ..lang.ast import And, Bind, Condition, Exists, Expr, FuncCall, Identifier, MethodCall, Not, Or, walk
from ..lang.parser import parse_condition
from .index import RuleIndex, is_simple
from .ruleset import EvaluationContext
from .types import NVList, RuleHit

__all__ = ["Event", "CompiledRule", "RuleSetEvaluator", "MAYBE", "ContextResolver", "parsed"]

MAYBE = "MAYBE"
_ALL = frozenset((True, False, None))


@dataclass(slots=True)
class Event:
    """One evaluation's input: ``variables`` by canonical name (absent = undefined),
    ``rows`` by table alias (``{COLUMN: value}``)."""

    variables: dict[str, Any] = field(default_factory=dict)
    rows: dict[str, Mapping[str, Any]] = field(default_factory=dict)


class ContextResolver:
    """Resolves names of a condition in an evaluation context (the compilers'
    ``Resolver`` protocol) and says what each value depends on."""

    def __init__(self, ctx: EvaluationContext) -> None:
        self.ctx = ctx
        self.aliases = ctx.aliases
        self._single = self.aliases[0] if len(self.aliases) == 1 else None

    def bind(self, name: str) -> Callable[[Event], Any]:
        return lambda ev: ev.variables.get(name)

    def _split(self, path: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        if path[0] in self.aliases:
            return path[0], path[1:]
        return self._single or path[0], path

    def identifier(self, path: tuple[str, ...]) -> Callable[[Event], Any]:
        alias, rest = self._split(path)
        column, attributes = rest[0], rest[1:]

        def get(ev: Event) -> Any:
            row = ev.rows.get(alias)
            return get_path(None if row is None else row.get(column), attributes)
        return get

    def names(self, node: Expr) -> frozenset[str]:
        """Variables a value depends on, and ``.ALIAS`` for every table it reads."""
        out = set()
        for n in walk(node):
            if isinstance(n, Bind):
                out.add(n.name)
            elif isinstance(n, Identifier) and not (len(n.path) == 1 and n.path[0] in NILADIC):
                out.add("." + self._split(n.path)[0])
            elif isinstance(n, FuncCall) and len(n.name) > 1 and ".".join(n.name) not in FUNCTIONS:
                out.add("." + self._split(n.name[:-1])[0])
        return frozenset(out)

    def key_getter(self, expr: Any) -> Callable[[Event], Any]:
        """A getter for an index key; ``:var.member()`` gets a per-class method cache."""
        if isinstance(expr, MethodCall) and isinstance(expr.obj, Bind) and not expr.args:
            return _member0(expr.obj.name, expr.name, expr.spelled)
        return compile_expression(expr, self)


def _member0(variable: str, name: str, spelled: str) -> Callable[[Event], Any]:
    """``:variable.member()``, the shape of every system-created rule term: the
    method is looked up once per class, then called directly."""
    methods: dict[type, Callable[[Any], Any]] = {}
    candidates = tuple(dict.fromkeys((spelled.lower(), name.lower())))

    def get(ev: Event) -> Any:
        obj = ev.variables.get(variable)
        if obj is None:
            return None
        method = methods.get(obj.__class__)
        if method is None:
            method = next((m for m in (getattr(obj.__class__, c, None) for c in candidates)
                           if callable(m)), None)
            if method is None:  # mappings, dynamic objects: the compiler's general lookup
                return null_if_empty(call_method(obj, name, spelled, []))
            methods[obj.__class__] = method
        value = method(obj)
        return (value or None) if value.__class__ is str else value
    return get


@dataclass(slots=True)
class CompiledRule:
    name: str                       # OWNER.NAME
    tree: Condition | None          # None: the rule no longer compiles (always NULL)
    fn: Callable[[Event], Any]
    names: frozenset[str]
    simple: bool
    action_context: NVList | None
    _possible: Callable[[Event, frozenset], frozenset] | None = None

    def hit(self) -> RuleHit:
        # a copy: the caller may change its action context, the compiled rule must not change
        actx = self.action_context
        return RuleHit(self.name, None if actx is None else NVList(actx.actx_list))


def _safe(fn: Callable[[Event], Any]) -> Callable[[Event], Any]:
    def run(ev: Event) -> Any:
        try:
            return fn(ev)
        except Exception:  # a bad value makes this rule NULL; the batch goes on
            return None
    return run


@lru_cache(maxsize=16384)
def parsed(condition: str) -> Condition:
    """``parse_condition``, remembered: trees are immutable, and rule DDL and
    rule-set compilation parse the same texts again and again."""
    return parse_condition(condition)


def compile_rule(name: str, condition: str, action_context: NVList | None,
                 resolver: ContextResolver) -> CompiledRule:
    """Compile a stored rule; one that fails now (its context changed) is always NULL."""
    try:
        tree = parsed(condition)
        fn = compile_python(tree, resolver)
    except Exception:
        return CompiledRule(name, None, lambda ev: None, frozenset(), False, action_context)
    return CompiledRule(name, tree, _safe(fn), resolver.names(tree), is_simple(tree), action_context)


# -- maybe rules: outcome sets ------------------------------------------------------


def _and_sets(a: frozenset, b: frozenset) -> frozenset:
    return frozenset(False if x is False or y is False else None if x is None or y is None else True
                     for x in a for y in b)


def _or_sets(a: frozenset, b: frozenset) -> frozenset:
    return frozenset(True if x is True or y is True else None if x is None or y is None else False
                     for x in a for y in b)


def _possible(node: Expr, resolver: ContextResolver) -> Callable[[Event, frozenset], frozenset]:
    """The outcomes ``node`` can have when the ``undefined`` names could be anything."""
    if isinstance(node, (And, Or)):
        parts = [_possible(t, resolver) for t in node.terms]
        combine = _and_sets if isinstance(node, And) else _or_sets

        def junction(ev: Event, undefined: frozenset) -> frozenset:
            result = parts[0](ev, undefined)
            for part in parts[1:]:
                result = combine(result, part(ev, undefined))
            return result
        return junction
    if isinstance(node, Not):
        inner = _possible(node.operand, resolver)
        return lambda ev, u: frozenset(None if x is None else not x for x in inner(ev, u))
    if isinstance(node, Exists) and node.condition is not None:
        inner = _possible(node.condition, resolver)
        return lambda ev, u: frozenset(x is True for x in inner(ev, u))
    names, fn = resolver.names(node), _safe(compile_python(node, resolver))  # type: ignore[arg-type]
    return lambda ev, undefined: _ALL if names & undefined else frozenset((fn(ev),))


# -- the evaluator ------------------------------------------------------------------


class RuleSetEvaluator:
    """The rules of one rule set for one evaluation context, ready to evaluate."""

    def __init__(self, ctx: EvaluationContext, rules: Sequence[tuple[str, str, NVList | None]],
                 implicit: Sequence[tuple[str, Callable[[Any], Any]]] = ()) -> None:
        """``rules``: ``(OWNER.NAME, condition, action context)`` in rule-set order;
        ``implicit``: ``(variable, value function of the event context)``."""
        self.ctx = ctx
        self.resolver = ContextResolver(ctx)
        self.rules = [compile_rule(n, c, a, self.resolver) for n, c, a in rules]
        self.index = RuleIndex([r.tree if r.tree is not None else _NEVER for r in self.rules],
                               self.resolver.key_getter, self.resolver.names)
        self.referenced = frozenset().union(*(r.names for r in self.rules)) if self.rules else frozenset()
        # only the implicit variables some rule reads are worth computing per event
        self.implicit = [(name, fn) for name, fn in implicit if name in self.referenced]

    def __len__(self) -> int:
        return len(self.rules)

    def undefined(self, ev: Event) -> frozenset[str]:
        """The names this rule set reads that ``ev`` does not define."""
        return frozenset(n for n in self.referenced
                         if ((n[1:] not in ev.rows) if n[0] == "." else (n not in ev.variables)))

    def evaluate(self, ev: Event, *, streams: bool = False, stop_on_first_hit: bool = False,
                 simple_rules_only: bool = False) -> tuple[list[RuleHit], list[RuleHit]]:
        """``(true_rules, maybe_rules)`` as ``RE$RULE_HIT`` lists, in rule-set order."""
        undefined = frozenset() if streams else self.undefined(ev)
        fast, full = self.index.match(ev, undefined)
        true_ids, maybe_ids = list(fast), []
        for rid in full:
            rule = self.rules[rid]
            if simple_rules_only and not rule.simple:
                maybe_ids.append(rid)  # would need more than fast evaluation
                continue
            if undefined and rule.names & undefined:
                outcome = self._with_undefined(rule, ev, undefined)
            else:
                outcome = rule.fn(ev)
            if outcome is True:
                true_ids.append(rid)
            elif outcome is MAYBE:
                maybe_ids.append(rid)
        if full and fast:
            true_ids.sort()
        if stop_on_first_hit:
            # the first TRUE rule or, when there is none, the first maybe rule
            return ([self.rules[true_ids[0]].hit()], []) if true_ids else \
                ([], [self.rules[maybe_ids[0]].hit()] if maybe_ids else [])
        return [self.rules[i].hit() for i in true_ids], [self.rules[i].hit() for i in maybe_ids]

    def _with_undefined(self, rule: CompiledRule, ev: Event, undefined: frozenset) -> Any:
        if rule.tree is None:
            return None
        if rule._possible is None:
            rule._possible = _possible(rule.tree, self.resolver)
        outcomes = rule._possible(ev, undefined)
        if outcomes == {True}:
            return True
        return MAYBE if True in outcomes else None


_NEVER = parse_condition("1 = 0")  # stands in for a rule that no longer compiles


def variable_name(name: str) -> str:
    """A variable name as the client wrote it (``'dml'``, ``':dml'``) -> ``'DML'``."""
    return canonical(str(name).lstrip(":"), "variable name")
