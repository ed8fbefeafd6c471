"""Taking a rule set apart for the Spark path: joins, classes, candidates, complex rules.

Pure Python, done once per rule set; :mod:`ruleset` turns the plan into a
query.  A rule's top-level AND terms of the form ``key = 'text'`` -- ``key`` an
LCR member that lowers to a CHAR value and never raises (owner, object name,
command type, source database, ``is_null_tag()`` ...) -- are its *key terms*;
the other terms are its *residue*.  As in :mod:`sluice.rules.engine.index`, selectivity is measured
over the whole rule set:

* a key expression with more than ``guard_limit`` distinct constants across the
  rules (object names) is a *join key*: rules are filed by its value in a small
  broadcast DataFrame, looked up once per LCR whatever the number of rules;
* a key with few distinct constants (owner, tag, source database, command type)
  is a *guard*: rules with the same guard values and the same residue form a
  *class*, and a class is one compiled Column on the joined row (``when(guard
  AND residue, the class's rules)``) -- so 800 ADD_TABLE_RULES rules and 200
  rules with a command type and ``tag IS NULL`` share one join and four classes;
* rules without a join key need no join: their classes' guards decide alone;
* classes beyond ``max_classes`` in a join become *candidates*: their guard
  terms and residue are templated -- string constants become parameters held
  in the rule's row -- and checked per candidate;
* rules without key terms (OR, NOT, LIKE ...), joins beyond ``max_joins`` or
  under ``min_join`` rules and their overflow classes are *complex*: compiled
  whole and evaluated in chunks.

Exactness: a rule is TRUE exactly when every term is TRUE and none raises.  A
key term never raises and is TRUE exactly when the key equals the constant --
the join matched, or the guard holds.  With every key term TRUE, the residue's
terms are evaluated as in the whole rule, so the rule is TRUE exactly when the
join matched, its guard holds and its residue is TRUE.  Constants are never
``''`` (:func:`sluice.rules.engine.index._eq_term`), so a key compares without its ``''``-to-NULL
wrapper: ``NULLIF(x, '') = 'HR'`` is ``x = 'HR'``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from ....errors import DatabaseError
from ...engine.index import _eq_term
from ...lang.ast import And, Bind, Compare, Condition, InList, Like, Literal, Not, Or
from ..typed import ir
from ..typed.lcrschema import LcrResolver
from ..typed.lower import _Lowering, lower_condition

__all__ = ["Plan", "Join", "Klass", "plan_rules", "PARAM"]

PARAM = "_sluice_p"               # parameter columns of a candidate: _sluice_p0, _sluice_p1 ...
_BIND = "SLUICE PARAM "           # a bind name no unquoted condition can spell


class _Params:
    """Resolves the parameters of a template: clean CHAR columns of the candidate."""

    def __init__(self) -> None:
        self.lcr = LcrResolver()

    def reference(self, node: Any) -> Any:
        if isinstance(node, Bind) and node.name.startswith(_BIND):
            return ir.Column("CHAR", PARAM + node.name[len(_BIND):], clean=True)
        return self.lcr.reference(node)


RESOLVER = LcrResolver(others=_Params())


def _template(term: Condition, params: list[str]) -> Condition:
    """``term`` with its string constants replaced by parameters (appended to ``params``)."""
    def param(v: Any) -> Any:
        if isinstance(v, Literal) and isinstance(v.value, str) and v.value:
            params.append(v.value)
            return Bind(_BIND + str(len(params) - 1))
        return v
    match term:
        case Compare(op, left, right) if not (isinstance(left, Literal) and isinstance(right, Literal)):
            return Compare(op, param(left), param(right))
        case Like(operand, pattern, escape, _) if not isinstance(operand, Literal) and (
                escape is None or isinstance(escape, Literal)):  # ESCAPE must stay a constant
            return replace(term, pattern=param(pattern))
        case InList(operand, items, negated) if not isinstance(operand, Literal):
            return InList(operand, tuple(param(i) for i in items), negated)
        case And(terms) | Or(terms):
            return type(term)(tuple(_template(t, params) for t in terms))
        case Not(operand):
            return Not(_template(operand, params))
    return term


def lower_rule(tree: Condition, name: str) -> ir.Node:
    try:
        return lower_condition(tree, RESOLVER)
    except ir.NotCompilable as e:
        raise ir.NotCompilable(f"rule {name}: {e.reason}") from None


def _conjuncts(tree: Condition) -> list[Condition]:
    if isinstance(tree, And):
        return [t for term in tree.terms for t in _conjuncts(term)]
    return [tree]


def _bare(node: ir.Node) -> ir.Node:
    """A key without its ''-to-NULL wrapper (it is only ever compared with non-empty text)."""
    return node.args[0] if isinstance(node, ir.Op) and node.op == "nullif_empty" else node


@dataclass
class _Rule:
    rid: int
    name: str
    tree: Condition
    keys: dict[int, tuple[str, Condition]] = field(default_factory=dict)  # key number -> (const, term)
    rest: list[Condition] = field(default_factory=list)                  # the residue, in order


class _Keys:
    """Key expressions, lowered once and numbered: 10,000 rules read the same four members,
    and the plan compares small numbers rather than deep IR trees."""

    def __init__(self) -> None:
        self.numbers: dict[Any, int | None] = {}   # key expression (AST) -> number
        self.nodes: list[ir.Node] = []             # number -> IR
        self._by_node: dict[ir.Node, int] = {}

    def number(self, expr: Any) -> int | None:
        """The key number of an expression, None when it is no key (not plain LCR text)."""
        if expr in self.numbers:
            return self.numbers[expr]
        try:
            key = _Lowering(RESOLVER).value(expr)
        except (ir.NotCompilable, DatabaseError):  # not an LCR value: the residue decides it
            key = None
        number = None
        if key is not None and key.err is None and key.node.kind == "CHAR" \
                and not isinstance(key.node, ir.Const):
            number = self._by_node.setdefault(_bare(key.node), len(self.nodes))
            if number == len(self.nodes):
                self.nodes.append(_bare(key.node))
        self.numbers[expr] = number
        return number


def _split(rid: int, name: str, tree: Condition, keys: _Keys) -> _Rule:
    rule = _Rule(rid, name, tree)
    for term in _conjuncts(tree):
        pair = _eq_term(term)
        if pair is not None and isinstance(pair[1], str):
            number = keys.number(pair[0])
            if number is not None and number not in rule.keys:
                rule.keys[number] = (pair[1], term)
                continue
        rule.rest.append(term)
    return rule


@dataclass(frozen=True)
class Klass:
    """Rules checked by one Column on the joined row: the same guards, the same residue."""

    guard: tuple[tuple[ir.Node, str], ...]    # (key, constant) pairs, all must hold
    residue: ir.Node | None                   # a condition, or None


@dataclass
class Join:
    """Rules filed under the values of ``keys`` (no keys: no join, the guards alone)."""

    keys: tuple[ir.Node, ...]
    classes: list[Klass] = field(default_factory=list)
    hits: dict[tuple[str, ...], dict[int, list[int]]] = field(default_factory=dict)  # values -> class -> ids
    templates: list[ir.Node] = field(default_factory=list)
    # values -> [(rule id, template number, parameters)], checked per candidate
    candidates: dict[tuple[str, ...], list[tuple[int, int, tuple[str, ...]]]] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(len(ids) for by_class in self.hits.values() for ids in by_class.values()) + \
            sum(len(c) for c in self.candidates.values())


@dataclass
class Plan:
    joins: list[Join]
    complex: list[tuple[int, ir.Node]]        # (rule id, its whole condition), ascending

    def describe(self) -> dict[str, Any]:
        return {"joins": [{"keys": len(j.keys), "rules": j.size, "classes": len(j.classes),
                           "templates": len(j.templates)} for j in self.joins],
                "complex": len(self.complex)}


def plan_rules(rules: Sequence[tuple[str, Condition | None]], *, guard_limit: int = 8,
               max_joins: int = 8, min_join: int = 4, max_classes: int = 16) -> Plan:
    """The plan for ``rules`` (``(name, parsed condition or None)``, ids are positions)."""
    keys = _Keys()
    split = [_split(rid, name, tree, keys) for rid, (name, tree) in enumerate(rules) if tree is not None]
    distinct: dict[int, set[str]] = {}
    for rule in split:
        for key, (value, _) in rule.keys.items():
            distinct.setdefault(key, set()).add(value)
    by_keys: dict[tuple[int, ...], list[_Rule]] = {}
    complex_rules = [rule for rule in split if not rule.keys]
    for rule in split:
        if rule.keys:
            joined = tuple(sorted(k for k in rule.keys if len(distinct[k]) > guard_limit))
            by_keys.setdefault(joined, []).append(rule)
    ranked = sorted((k for k in by_keys if k), key=lambda k: -len(by_keys[k]))
    kept = [k for k in ranked[:max_joins] if len(by_keys[k]) >= min_join]
    for joined in ranked:
        if joined not in kept:  # no join of their own: their join keys become guards
            by_keys.setdefault((), []).extend(by_keys.pop(joined))
    joins = []
    residues: dict[Condition, ir.Node] = {}  # lowered once per distinct residue
    for joined in kept + ([()] if () in by_keys else []):
        join, overflow = _join(joined, by_keys[joined], keys.nodes, residues, max_classes)
        joins.append(join)
        complex_rules += overflow
    return Plan(joins, sorted((r.rid, lower_rule(r.tree, r.name)) for r in complex_rules))


def _join(joined: tuple[int, ...], rules: list[_Rule], nodes: list[ir.Node], residues: dict[Condition, ir.Node],
          max_classes: int) -> tuple[Join, list[_Rule]]:
    """File ``rules`` under the keys numbered ``joined``; the rules left for the complex path."""
    join = Join(tuple(nodes[k] for k in joined))
    members: dict[tuple, list[_Rule]] = {}
    for rule in rules:
        guard = tuple(sorted((k, v) for k, (v, _) in rule.keys.items() if k not in joined))
        residue = None
        if rule.rest:
            tree = rule.rest[0] if len(rule.rest) == 1 else And(tuple(rule.rest))
            if tree not in residues:
                residues[tree] = lower_rule(tree, rule.name)
            residue = residues[tree]
        members.setdefault((guard, residue), []).append(rule)
    # the class of rules the join alone decides (nothing to check) is never a candidate
    ranked = sorted(members, key=lambda c: (bool(c[0]) or c[1] is not None, -len(members[c])))
    kept = ranked[:max(1, max_classes)]
    join.classes = [Klass(tuple((nodes[k], v) for k, v in guard), residue) for guard, residue in kept]
    for number, klass in enumerate(kept):
        for rule in members[klass]:
            values = tuple(rule.keys[k][0] for k in joined)
            join.hits.setdefault(values, {}).setdefault(number, []).append(rule.rid)
    overflow = [rule for klass in ranked[len(kept):] for rule in members[klass]]
    if not joined:
        return join, overflow  # without a join there is no row to hold candidates
    numbers: dict[ir.Node, int] = {}
    for rule in overflow:
        # the guard terms join the residue, and string constants become parameters
        terms = [term for k, (_, term) in rule.keys.items() if k not in joined] + rule.rest
        params: list[str] = []
        condition = terms[0] if len(terms) == 1 else And(tuple(terms))
        try:
            node = lower_condition(_template(condition, params), RESOLVER)
        except ir.NotCompilable:  # a constant the compiler needs as such: one template per rule
            params = []
            node = lower_rule(condition, rule.name)
        number = numbers.setdefault(node, len(numbers))
        if number == len(join.templates):
            join.templates.append(node)
        values = tuple(rule.keys[k][0] for k in joined)
        join.candidates.setdefault(values, []).append((rule.rid, number, tuple(params)))
    return join, []
