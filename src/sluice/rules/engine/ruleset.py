"""Rules, rule sets and evaluation contexts as catalog objects.

Each is one JSON spec in the store's generic catalog (``put_catalog_object``):

==================== ===================================================
kind                 spec
==================== ===================================================
EVALUATION_CONTEXT   table aliases, variables, evaluation function, comment
RULE                 condition text, evaluation context, action context, comment
RULE_SET             evaluation context, comment
RULE_SET_RULE        one membership: (rule set, rule, evaluation context)
==================== ===================================================

A membership is its own object so that ``ADD_RULE`` is a single insert: two
sessions adding rules to one rule set cannot lose each other's rule, and a
duplicate is the store's ORA-00955 (reported as ORA-24154).  Memberships keep
the order they were added in (a ``seq`` of the spec), which is the order rules
are evaluated and returned in.

:class:`RulesCatalog` is a read-only snapshot of all of it, rebuilt when the
store's catalog version moves; one is shared by every connection to a store.
``SYS.STREAMS$_EVALUATION_CONTEXT`` is built in (seed 000, "Evaluation Context
for Global, Schema, Table, and Subset Rules"): its definition is the seed's
installation statement, and running that statement stores it explicitly.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, NamedTuple

from ...errors import ora
from ...names import canonical, split_qualified
from ...routines import registered_function
from .anydata import AnyData
from .types import NVList

__all__ = [
    "Variable", "EvaluationContext", "Rule", "RuleSet", "Member", "RulesCatalog",
    "rules_catalog", "STREAMS_CONTEXT", "KINDS", "member_key", "function_name",
    "encode_action_context", "decode_action_context",
]

EVALUATION_CONTEXT, RULE, RULE_SET, MEMBER = "EVALUATION_CONTEXT", "RULE", "RULE_SET", "RULE_SET_RULE"
KINDS = (EVALUATION_CONTEXT, RULE, RULE_SET, MEMBER)
STREAMS_CONTEXT = "SYS.STREAMS$_EVALUATION_CONTEXT"
_INTERNAL = "SYS.DBMS_STREAMS_INTERNAL."


def function_name(text: str | None) -> str | None:
    """A PL/SQL function name in canonical form: ``'sys.pkg.fn'`` -> ``'SYS.PKG.FN'``."""
    if text is None or not str(text).strip():
        return None
    return ".".join(canonical(part, "function name") for part in str(text).strip().split("."))


class Variable(NamedTuple):
    """One variable of an evaluation context (``RE$VARIABLE_TYPE``), canonical."""

    name: str | None           # None: an anonymous variable (seed 000's SYS.ANYDATA entry)
    type: str                  # 'SYS.LCR$_ROW_RECORD', 'NUMBER', 'SCOTT.MSG_T', …
    value_function: str | None
    method_function: str | None


@dataclass(frozen=True)
class EvaluationContext:
    owner: str
    name: str
    table_aliases: tuple[tuple[str, str], ...] = ()   # (alias, table name)
    variables: tuple[Variable, ...] = ()
    evaluation_function: str | None = None
    comment: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"

    def variable(self, name: str) -> Variable | None:
        return next((v for v in self.variables if v.name == name), None)

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(alias for alias, _ in self.table_aliases)

    def to_spec(self) -> dict:
        return {"table_aliases": [list(a) for a in self.table_aliases],
                "variables": [list(v) for v in self.variables],
                "evaluation_function": self.evaluation_function, "comment": self.comment}

    @classmethod
    def from_spec(cls, owner: str, name: str, spec: dict) -> "EvaluationContext":
        return cls(owner, name, tuple(tuple(a) for a in spec.get("table_aliases", ())),
                   tuple(Variable(*v) for v in spec.get("variables", ())),
                   spec.get("evaluation_function"), spec.get("comment"))


@dataclass(frozen=True)
class Rule:
    owner: str
    name: str
    condition: str
    evaluation_context: str | None = None     # qualified name
    action_context: NVList | None = None
    comment: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"

    def to_spec(self) -> dict:
        return {"condition": self.condition, "evaluation_context": self.evaluation_context,
                "action_context": encode_action_context(self.action_context),
                "comment": self.comment}

    @classmethod
    def from_spec(cls, owner: str, name: str, spec: dict) -> "Rule":
        return cls(owner, name, spec["condition"], spec.get("evaluation_context"),
                   decode_action_context(spec.get("action_context")), spec.get("comment"))


@dataclass(frozen=True)
class RuleSet:
    owner: str
    name: str
    evaluation_context: str | None = None
    comment: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"

    def to_spec(self) -> dict:
        return {"evaluation_context": self.evaluation_context, "comment": self.comment}

    @classmethod
    def from_spec(cls, owner: str, name: str, spec: dict) -> "RuleSet":
        return cls(owner, name, spec.get("evaluation_context"), spec.get("comment"))


class Member(NamedTuple):
    """Rule ``rule`` in ``rule_set``, evaluated with ``evaluation_context`` when set."""

    rule_set: str
    rule: str
    evaluation_context: str | None
    comment: str | None


def member_key(rule_set: str, rule: str, evaluation_context: str | None) -> tuple[str, str]:
    """The (owner, name) a membership is stored under; unit separators cannot
    occur in the identifiers they join."""
    owner, name = rule_set.split(".", 1)
    return owner, "\x1f".join((name, rule, evaluation_context or ""))


# -- action contexts in JSON --------------------------------------------------------


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, bytes):
        return {"raw": value.hex()}
    if isinstance(value, datetime):
        return {"date": value.isoformat()}
    raise TypeError(type(value).__name__)


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "decimal" in value:
            return Decimal(value["decimal"])
        if "raw" in value:
            return bytes.fromhex(value["raw"])
        return datetime.fromisoformat(value["date"])
    return value


def encode_action_context(nv: NVList | None) -> list | None:
    """The pairs as JSON; ORA-25473 for a value Sluice cannot store (an object: Oracle
    stores objects of types that never evolved, Sluice scalars only)."""
    if nv is None:
        return None
    out = []
    for name, data in nv.items():
        try:
            out.append([name, data.get_type_name(), _encode(data.value)])
        except TypeError as e:
            raise ora(25473, data.get_type_name() or str(e)) from None
    return out


def decode_action_context(pairs: list | None) -> NVList | None:
    if pairs is None:
        return None
    out = NVList()
    for name, type_name, value in pairs:
        out.add_pair(name, AnyData(type_name, _decode(value)))
    return out


# -- the built-in Streams evaluation context -----------------------------------------

BUILTIN_CONTEXTS = {
    STREAMS_CONTEXT: EvaluationContext("SYS", "STREAMS$_EVALUATION_CONTEXT", (), (
        Variable("DML", "SYS.LCR$_ROW_RECORD", _INTERNAL + "ROW_VARIABLE_VALUE_FUNCTION",
                 _INTERNAL + "ROW_FAST_EVALUATION_FUNCTION"),
        Variable("DDL", "SYS.LCR$_DDL_RECORD", _INTERNAL + "DDL_VARIABLE_VALUE_FUNCTION",
                 _INTERNAL + "DDL_FAST_EVALUATION_FUNCTION"),
        Variable(None, "SYS.ANYDATA", None, _INTERNAL + "ANYDATA_FAST_EVAL_FUNCTION"),
    ), _INTERNAL + "EVALUATION_CONTEXT_FUNCTION", "Streams evaluation context"),
}


# -- the catalog snapshot ----------------------------------------------------------


class RulesCatalog:
    """Every rule object of one store, as of ``version``; lookups raise Oracle's errors."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._lock = threading.Lock()
        self.version = -1
        self.contexts: dict[str, EvaluationContext] = {}
        self.rules: dict[str, Rule] = {}
        self.rule_sets: dict[str, RuleSet] = {}
        self.members: dict[str, list[Member]] = {}
        self.stored_contexts: frozenset[str] = frozenset()
        self.cache: dict[Any, Any] = {}   # compiled evaluators of this version (engine.evaluator)

    def refresh(self) -> "RulesCatalog":
        """Reload when the store's catalog changed; returns self for chaining."""
        version = self._store.catalog_version()
        if version == self.version:
            return self
        with self._lock:
            if version == self.version:
                return self
            objects = {kind: self._store.catalog_objects(kind) for kind in KINDS}
            stored = {f"{o}.{n}": EvaluationContext.from_spec(o, n, s)
                      for o, n, s in objects[EVALUATION_CONTEXT]}
            members: dict[str, list[Member]] = {}
            # the store lists objects by name: "seq" restores the order rules were added in
            for _, _, spec in sorted(objects[MEMBER], key=lambda o: (o[2].get("seq", 0), o[1])):
                m = Member(spec["rule_set"], spec["rule"], spec.get("evaluation_context"),
                           spec.get("comment"))
                members.setdefault(m.rule_set, []).append(m)
            self.contexts = {**BUILTIN_CONTEXTS, **stored}
            self.stored_contexts = frozenset(stored)
            self.rules = {f"{o}.{n}": Rule.from_spec(o, n, s) for o, n, s in objects[RULE]}
            self.rule_sets = {f"{o}.{n}": RuleSet.from_spec(o, n, s) for o, n, s in objects[RULE_SET]}
            self.members = members
            self.cache = {}
            self.version = version
        return self

    def note(self, kind: str, owner: str, name: str, spec: dict | None) -> None:
        """Apply this process's own catalog write (``spec`` None: a drop) to the snapshot.

        DBMS_RULE_ADM calls this after each write so that a run of them (10,000
        CREATE_RULE + ADD_RULE) does not reload every rule after each one.  The
        version is left alone, so evaluation still reloads everything once.
        Copy-on-write: readers in other threads keep a consistent view.
        """
        qualified = f"{owner}.{name}"
        with self._lock:
            if kind == RULE:
                self.rules = _updated(self.rules, qualified, spec and Rule.from_spec(owner, name, spec))
            elif kind == RULE_SET:
                self.rule_sets = _updated(self.rule_sets, qualified,
                                          spec and RuleSet.from_spec(owner, name, spec))
            elif kind == EVALUATION_CONTEXT:
                stored = spec and EvaluationContext.from_spec(owner, name, spec)
                self.contexts = _updated(self.contexts, qualified, stored or BUILTIN_CONTEXTS.get(qualified))
                self.stored_contexts = (self.stored_contexts | {qualified} if spec
                                        else self.stored_contexts - {qualified})
            elif kind == MEMBER:
                set_name, rule, context = name.split("\x1f")
                rule_set = f"{owner}.{set_name}"
                if spec is not None and rule_set in self.members:
                    # the store refused duplicates: appending (atomic) suffices
                    self.members[rule_set].append(Member(rule_set, rule, context or None,
                                                         spec.get("comment")))
                else:
                    kept = [m for m in self.members.get(rule_set, ())
                            if (m.rule, m.evaluation_context) != (rule, context or None)]
                    if spec is not None:
                        kept.append(Member(rule_set, rule, context or None, spec.get("comment")))
                    self.members = {**self.members, rule_set: kept}
            self.cache = {}

    # -- lookups by [schema.]name --------------------------------------------------------
    @staticmethod
    def key(name: str, default_schema: str, what: str) -> str:
        owner, obj = split_qualified(name, default_schema, what)
        return f"{owner}.{obj}"

    def context(self, qualified: str) -> EvaluationContext:
        ctx = self.contexts.get(qualified)
        if ctx is None:
            raise ora(24150, *qualified.split(".", 1))
        return ctx

    def rule(self, qualified: str) -> Rule:
        rule = self.rules.get(qualified)
        if rule is None:
            raise ora(24147, *qualified.split(".", 1))
        return rule

    def rule_set(self, qualified: str) -> RuleSet:
        rs = self.rule_sets.get(qualified)
        if rs is None:
            raise ora(24141, *qualified.split(".", 1))
        return rs

    def members_of(self, rule_set: str) -> list[Member]:
        return list(self.members.get(rule_set, ()))

    def sets_of_rule(self, rule: str) -> list[Member]:
        return [m for ms in self.members.values() for m in ms if m.rule == rule]

    def effective_context(self, member: Member) -> str | None:
        """The context a rule is evaluated with inside a rule set: the one given to
        ADD_RULE, else the rule's own, else the rule set's."""
        if member.evaluation_context:
            return member.evaluation_context
        rule = self.rules.get(member.rule)
        if rule is not None and rule.evaluation_context:
            return rule.evaluation_context
        rs = self.rule_sets.get(member.rule_set)
        return rs.evaluation_context if rs is not None else None


def _updated(mapping: dict, key: str, value: Any) -> dict:
    out = dict(mapping)
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value
    return out


_CATALOGS: "weakref.WeakKeyDictionary[Any, RulesCatalog]" = weakref.WeakKeyDictionary()
_CATALOGS_LOCK = threading.Lock()


def rules_catalog(store: Any, fresh: bool = True) -> RulesCatalog:
    """The shared :class:`RulesCatalog` of ``store``: reloaded if the catalog changed
    when ``fresh``, else as last loaded and patched by this process's own writes."""
    catalog = _CATALOGS.get(store)
    if catalog is None:
        with _CATALOGS_LOCK:
            catalog = _CATALOGS.get(store)
            if catalog is None:
                catalog = _CATALOGS[store] = RulesCatalog(store)
    return catalog.refresh() if fresh or catalog.version < 0 else catalog


def call_registered(name: str, schema: str) -> Callable[..., Any] | None:
    """A Python function registered with :func:`sluice.register_function` under the
    PL/SQL name ``name`` (resolved in ``schema``), or None."""
    try:
        return registered_function(name, schema)
    except Exception:  # ORA-00904: not registered
        return None
