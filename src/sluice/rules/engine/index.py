"""Fast evaluation: find the rules an event can satisfy without evaluating them all.

Oracle evaluates *simple* rules (seed 000, "Simple Rule Conditions") through
fast evaluation functions that read the LCR's owner, object name, command
type, source database and tag once per message.  This index does the same for
any rule set:

* A rule's condition implies equalities: ``:dml.get_object_name() = 'T1' AND …``
  can only be TRUE when that member returns ``'T1'``.  For every rule the index
  picks the most selective such *key term* (an ``OR`` whose branches all have
  one contributes all of them; ``IN`` contributes each item) and files the rule
  under ``(key expression, constant)``.  Selectivity is measured over the whole
  rule set, so 10,000 table rules are filed by table name, not by tag.
* Per event, each key expression is computed once and looked up: the cost is
  one dictionary probe per distinct key expression, whatever the number of
  rules.  Rules without key terms (``NOT``, ``LIKE``, ``EXISTS`` …) are always
  candidates and are evaluated after, in full.
* A *pure* rule — a conjunction of key terms only, like every table, schema
  and global rule DBMS_STREAMS_ADM generates — is decided by comparing the key
  values already computed; its compiled condition never runs.

The index never changes a result: when a value needs Oracle's implicit
conversion (``'5' = 5``), is not plain text or number, raised an error, or
depends on an undefined variable (maybe-rules), the rules concerned are
handed back for full evaluation.
"""

from __future__ import annotations

import sys
from decimal import Decimal
from typing import Any, Callable, Sequence

from ...sqlfunctions import FUNCTIONS, NILADIC
from ..lang.ast import (And, Attribute, Bind, Compare, Condition, Expr, FuncCall, Identifier, InList,
                        IsNull, Literal, MethodCall, Or, Unary, Value, walk)

__all__ = ["RuleIndex", "is_simple", "key_names"]

Getter = Callable[[Any], Any]
Pair = tuple[Value, Any]            # (key expression, constant)
_UNSET, _ERROR, _FULL = object(), object(), object()
_NUMBERS = (int, Decimal)


# -- simple rule conditions ---------------------------------------------------------


def _constant(node: Expr) -> bool:
    match node:
        case Literal():
            return True
        case Identifier((name,)) if name in NILADIC:
            return True
        case Unary(_, operand):
            return _constant(operand)
        case FuncCall(name, args):
            return ".".join(name) in FUNCTIONS and all(_constant(a) for a in args)
    return False


def _simple_expression(node: Expr, allow_method: bool = True) -> bool:
    match node:
        case Bind():
            return True
        case Identifier((name,)) if name in NILADIC:
            return False
        case Identifier():
            return True
        case Attribute(obj, _, _):
            return _simple_expression(obj, allow_method=False)
        case MethodCall(obj, _, _, args):
            # one member call on a variable or attribute: not on another call's result
            return allow_method and _simple_expression(obj, allow_method=False) and \
                all(_constant(a) for a in args)
    return False


def is_simple(node: Expr) -> bool:
    """Oracle's simple rule condition: ``expr op constant``, ``constant op expr``
    or ``expr IS [NOT] NULL`` (``expr`` a variable, attribute, column or one
    member call with constant arguments), combined with AND and OR only."""
    match node:
        case And(terms) | Or(terms):
            return all(is_simple(t) for t in terms)
        case Compare(_, left, right):
            return ((_simple_expression(left) or _constant(left)) and _constant(right)) or \
                (_constant(left) and _simple_expression(right))
        case IsNull(operand, _):
            return _simple_expression(operand)
    return False


# -- key terms -----------------------------------------------------------------------


def _key_expression(node: Expr) -> bool:
    match node:
        case Bind():
            return True
        case Identifier((name,)):
            return name not in NILADIC
        case Identifier():
            return True
        case Attribute(obj, _, _):
            return _key_expression(obj)
        case MethodCall(obj, _, _, args):
            return _key_expression(obj) and all(isinstance(a, Literal) for a in args)
    return False


def _constant_key(value: Any) -> Any:
    if isinstance(value, str):
        # interned: thousands of rules share 'HR', 'Y', 'DBS1.NET' -- one object each
        return sys.intern(value) if value else None
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value.normalize()
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


def _eq_term(node: Expr) -> Pair | None:
    if isinstance(node, Compare) and node.op == "=":
        for key, const in ((node.left, node.right), (node.right, node.left)):
            if _key_expression(key) and isinstance(const, Literal):
                value = _constant_key(const.value)
                if value is not None:
                    return key, value
    return None


def _alternatives(node: Expr) -> list[frozenset[Pair]]:
    """Sets of pairs of which at least one must hold for ``node`` to be TRUE."""
    term = _eq_term(node)
    if term is not None:
        return [frozenset([term])]
    match node:
        case InList(operand, items, False) if _key_expression(operand):
            consts = [_constant_key(i.value) if isinstance(i, Literal) else None for i in items]
            if consts and all(c is not None for c in consts):
                return [frozenset((operand, c) for c in consts)]
        case And(terms):
            return [alt for t in terms for alt in _alternatives(t)]
        case Or(terms):
            branches = [_alternatives(t) for t in terms]
            if all(branches):
                return [frozenset().union(*(min(b, key=len) for b in branches))]
    return []


def _pure_terms(node: Condition) -> list[Pair] | None:
    terms = node.terms if isinstance(node, And) else (node,)
    pairs = [_eq_term(t) for t in terms]
    return None if any(p is None for p in pairs) else pairs  # type: ignore[return-value]


def key_names(node: Expr) -> frozenset[str]:
    """What a value depends on: variable names, and ``.ALIAS`` for table columns."""
    out = set()
    for n in walk(node):
        if isinstance(n, Bind):
            out.add(n.name)
        elif isinstance(n, Identifier):
            out.add("." + n.path[0])
        elif isinstance(n, FuncCall) and ".".join(n.name) not in FUNCTIONS and len(n.name) > 1:
            out.add("." + n.name[0])
    return frozenset(out)


# -- the index ----------------------------------------------------------------------


class RuleIndex:
    """Rules ``0 … n-1`` (their conditions) filed by key terms.

    ``key_getter(expr)`` compiles a key expression into a function of the
    event; it is called once per distinct key expression.  ``names_of(expr)``
    says which variables (and ``.ALIAS`` tables) a key expression reads.
    """

    def __init__(self, conditions: Sequence[Condition], key_getter: Callable[[Value], Getter],
                 names_of: Callable[[Value], frozenset[str]] = key_names) -> None:
        per_rule = [_alternatives(c) for c in conditions]
        counts: dict[Pair, int] = {}
        for alts in per_rule:
            for pair in set().union(*alts) if alts else ():
                counts[pair] = counts.get(pair, 0) + 1
        slots: dict[Value, int] = {}
        self._getters: list[Getter] = []
        self._names: list[frozenset[str]] = []

        def slot(expr: Value) -> int:
            if expr not in slots:
                slots[expr] = len(self._getters)
                self._getters.append(key_getter(expr))
                self._names.append(names_of(expr))
            return slots[expr]

        groups: dict[int, tuple[dict, dict, list, list, list]] = {}
        self._always: list[int] = []
        self._pure: list[tuple[tuple[int, Any], ...] | None] = []
        for rid, (condition, alts) in enumerate(zip(conditions, per_rule)):
            pure = _pure_terms(condition)
            self._pure.append(None if pure is None else tuple((slot(k), c) for k, c in pure))
            if not alts:
                self._always.append(rid)
                continue
            best = min(alts, key=lambda a: (sum(counts[p] for p in a), len(a)))
            for key, const in best:
                by_str, by_num, str_ids, num_ids, all_ids = groups.setdefault(
                    slot(key), ({}, {}, [], [], []))
                bucket, ids = (by_str, str_ids) if isinstance(const, str) else (by_num, num_ids)
                bucket.setdefault(const, []).append(rid)
                ids.append(rid)
                all_ids.append(rid)
        self._groups = [(s, *g, self._names[s]) for s, g in groups.items()]
        self._blank = [_UNSET] * len(self._getters)
        self.size = len(conditions)

    @property
    def unindexed(self) -> list[int]:
        """Rules evaluated in full for every event."""
        return list(self._always)

    def _decide(self, pairs: tuple[tuple[int, Any], ...], event: Any, values: list,
                undefined: frozenset[str]) -> Any:
        """True, False (not TRUE) or _FULL for a pure rule."""
        for s, const in pairs:
            if undefined and self._names[s] & undefined:
                return _FULL
            v = values[s]
            if v is _UNSET:  # computed once per event, shared by every rule that reads it
                try:
                    v = self._getters[s](event)
                except Exception:
                    v = _ERROR
                values[s] = v
            if v is None:
                return False          # NULL = c is UNKNOWN: the conjunction is not TRUE
            if v.__class__ is str and const.__class__ is str:
                if v != const:
                    return False
            elif v.__class__ in _NUMBERS and const.__class__ in _NUMBERS:
                if v != const:
                    return False
            else:
                return _FULL          # implicit conversion or an error: let the compiler decide
        return True

    def match(self, event: Any, undefined: frozenset[str] = frozenset()) -> tuple[list[int], list[int]]:
        """``(rules TRUE by the index alone, rules to evaluate in full)``, each ascending.

        ``undefined`` names the variables (and ``.ALIAS`` tables) the event leaves
        undefined when undefined must mean MAYBE rather than NULL.
        """
        values = self._blank[:]
        full = set(self._always)
        fast = []
        getters = self._getters
        for s, by_str, by_num, str_ids, num_ids, all_ids, names in self._groups:
            if undefined and names & undefined:
                full.update(all_ids)
                continue
            v = values[s]
            if v is _UNSET:
                try:
                    v = values[s] = getters[s](event)
                except Exception:  # a bad value: the rules that need it are evaluated in full
                    v = values[s] = _ERROR
            if v is None:
                continue
            cls = v.__class__
            if cls is str:
                ids = by_str.get(v)
                if num_ids:
                    full.update(num_ids)   # '5' may equal 5 after conversion
            elif cls in _NUMBERS:
                ids = by_num.get(v)
                if str_ids:
                    full.update(str_ids)
            else:
                full.update(all_ids)
                continue
            if ids:
                pure = self._pure
                for rid in ids:
                    pairs = pure[rid]
                    verdict = _FULL if pairs is None else self._decide(pairs, event, values, undefined)
                    if verdict is True:
                        fast.append(rid)
                    elif verdict is _FULL:
                        full.add(rid)
        if len(fast) > 1:
            fast = sorted(set(fast))
        return fast, sorted(full)
