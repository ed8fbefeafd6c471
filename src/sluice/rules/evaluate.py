"""``DBMS_RULE``: evaluate a rule set for an event.

``DBMS_RULE.EVALUATE(rule_set_name, evaluation_context, event_context,
table_values, column_values, variable_values, attribute_values,
stop_on_first_hit, simple_rules_only, true_rules OUT, maybe_rules OUT)`` is::

    true_rules, maybe_rules = conn.rule.evaluate(
        rule_set_name="strmadmin.complex_rules",
        evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT",
        variable_values={"dml": lcr})

Only the rules of the set whose evaluation context is ``evaluation_context``
take part (a rule's context is the one given to ``ADD_RULE``, else its own,
else the rule set's).  ``DBMS_RULE`` is the interface of non-Streams clients:
a rule that depends on an undefined variable comes back in ``maybe_rules``.
Streams clients go through :mod:`sluice.streams.rulesets` instead.

Values may be passed as Oracle's ``RE$…_VALUE`` lists or, from Python, as
mappings: ``variable_values={"m": 5}``, ``attribute_values={"x.a": 1}``,
``column_values={"tab": {"price": 10}}``, ``table_values={"tab": row}``.
Compiled rule sets are cached per store until the catalog changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..errors import DatabaseError, InterfaceError, not_supported, ora
from ..names import canonical
from ..routines import out_params
from .engine.anydata import AnyData
from .engine.evaluator import Event, RuleSetEvaluator, variable_name
from .engine.internal import (EVALUATION_CONTINUE, EVALUATION_FAILURE, EVALUATION_SUCCESS, AQ_MESSAGE,
                              evaluation_function, unwrap, value_function)
from .engine.ruleset import EvaluationContext, RulesCatalog, rules_catalog
from .engine.types import AttributeValue, ColumnValue, RuleHit, TableValue, VariableValue, type_name_of
from .privileges import check_evaluate

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["DbmsRule", "evaluator_for", "build_event", "run_evaluation"]

_UNKNOWN = object()


def evaluator_for(catalog: RulesCatalog, rule_set: str, context: str) -> RuleSetEvaluator:
    """The compiled rules of ``rule_set`` that use ``context`` (qualified names)."""
    key = ("evaluator", rule_set, context)
    evaluator = catalog.cache.get(key)
    if evaluator is None:
        ctx = catalog.context(context)
        rules, seen = [], set()
        for member in catalog.members_of(rule_set):
            rule = catalog.rules.get(member.rule)
            if rule is None or member.rule in seen or catalog.effective_context(member) != context:
                continue
            seen.add(member.rule)
            rules.append((rule.qualified, rule.condition, rule.action_context))
        implicit = [(v.name, value_function(ctx, v)) for v in ctx.variables
                    if v.name is not None and v.value_function is not None]
        evaluator = catalog.cache[key] = RuleSetEvaluator(ctx, rules, implicit)
    return evaluator


def _items(values: Any, cls: type, fields: tuple[str, ...]) -> list[tuple]:
    """A ``RE$…_VALUE_LIST`` as tuples of ``fields``."""
    if values is not None and not isinstance(values, (list, tuple)):
        raise InterfaceError(f"expected a list of {cls.__name__} items, not {type(values).__name__}")
    out = []
    for item in values or ():
        if not isinstance(item, cls):
            raise InterfaceError(f"expected {cls.__name__} items, not {type(item).__name__}")
        out.append(tuple(getattr(item, f) for f in fields))
    return out


def _variables(values: Any) -> list[tuple[str, Any]]:
    if isinstance(values, Mapping):            # {"dml": lcr}
        return list(values.items())
    return _items(values, VariableValue, ("variable_name", "variable_data"))


def _attributes(values: Any) -> list[tuple[str, str, Any]]:
    if isinstance(values, Mapping):            # {"x.a": 1} or {("x", "a"): 1}
        out = []
        for k, v in values.items():
            key = tuple(k) if isinstance(k, tuple) else tuple(str(k).split(".", 1))
            if len(key) != 2:
                raise InterfaceError(f"attribute_values key {k!r}: 'variable.attribute' or (variable, attribute)")
            out.append((*key, v))
        return out
    return _items(values, AttributeValue, ("variable_name", "attribute_name", "attribute_data"))


def _columns(values: Any) -> list[tuple[str, str, Any]]:
    if isinstance(values, Mapping):            # {"tab": {"price": 10}}
        for alias, row in values.items():
            if not isinstance(row, Mapping):
                raise InterfaceError(f"column_values[{alias!r}] must map column names to values, "
                                     f"not be a {type(row).__name__}")
        return [(alias, col, v) for alias, row in values.items() for col, v in row.items()]
    return _items(values, ColumnValue, ("table_alias", "column_name", "column_data"))


def _tables(values: Any) -> list[tuple[str, Any]]:
    if isinstance(values, Mapping):            # {"tab": row}
        return list(values.items())
    return _items(values, TableValue, ("table_alias", "table_rowid"))


def _sent_aliases(table_values: Any) -> list[str]:
    """The table aliases ``table_values`` sends rows for (one it cannot name is left to
    :func:`build_event`'s errors)."""
    out = []
    for alias, _ in _tables(table_values):
        if alias is not None and str(alias).strip():
            try:
                out.append(canonical(str(alias), "table alias"))
            except DatabaseError:
                pass
    return out


def _row(row: Any) -> dict[str, Any]:
    if not isinstance(row, Mapping):
        raise not_supported("table values by ROWID (pass the row as a mapping of columns)")
    return {canonical(k, "column name") if isinstance(k, str) else k: unwrap(v) for k, v in row.items()}


def build_event(ctx: EvaluationContext, evaluator: RuleSetEvaluator, event_context: Any = None,
                table_values: Any = None, column_values: Any = None, variable_values: Any = None,
                attribute_values: Any = None) -> Event:
    """What the client sent, keyed as the compiled rules read it.

    Values must fit the context, as Oracle's EVALUATE checks them: a variable
    it does not declare is ORA-25438 (ORA-25449 for an attribute value's), one
    sent twice ORA-25439, no name ORA-25465; a table alias it does not declare
    is ORA-25436 (ORA-25440 for a column value's), a table sent twice ORA-25437,
    no alias ORA-25463 / ORA-25467, no row ORA-25464.  Attribute values of a
    variable the client did not send whole make it a mapping of those
    attributes (the others read as NULL).  An implicit variable (one with a
    value function) the client did not send is asked of its function; NULL
    leaves it undefined.
    """
    ev = Event()
    if variable_values is None and attribute_values is None and table_values is None \
            and column_values is None:
        _implicit(evaluator, ev, event_context)   # the Streams clients' case: nothing explicit
        return ev
    named: set[str] = set()
    for name, value in _variables(variable_values):
        var = _declared(ctx, name, 25438)
        if var.name in named:
            raise ora(25439, var.name)
        named.add(var.name)
        if var.type == "SYS.ANYDATA":
            ev.variables[var.name] = value
            continue
        value = unwrap(value)
        sent = type_name_of(value)
        if sent is not None and sent != var.type:
            # an object of another type cannot be read as the variable's (a DDL LCR as :dml
            # made the row rules TRUE): the variable stays undefined, as the value functions
            # leave it for a message of another type
            continue
        ev.variables[var.name] = value
    sent_whole = set(ev.variables)
    for name, attribute, value in _attributes(attribute_values):
        var = _declared(ctx, name, 25449)
        if var.name not in sent_whole:
            ev.variables.setdefault(var.name, {})[canonical(attribute, "attribute name")] = unwrap(value)
    for alias, row in _tables(table_values):
        alias = _alias(ctx, alias, 25463, 25436)
        if alias in ev.rows:
            raise ora(25437, alias)
        if row is None:
            raise ora(25464, alias)
        ev.rows[alias] = _row(row)
    for alias, column, value in _columns(column_values):
        row = ev.rows.setdefault(_alias(ctx, alias, 25467, 25440), {})
        row[canonical(column, "column name")] = unwrap(value)  # type: ignore[index]
    _implicit(evaluator, ev, event_context)
    return ev


def _declared(ctx: EvaluationContext, name: Any, unknown: int) -> Any:
    """The context's variable ``name`` (``'m'``, ``':m'``); ORA-25465 without a name,
    ORA-``unknown`` when the context does not declare it."""
    if name is None or not str(name).strip():
        raise ora(25465)
    var = ctx.variable(variable_name(name))
    if var is None:
        raise ora(unknown, name)
    return var


def _alias(ctx: EvaluationContext, alias: Any, missing: int, unknown: int) -> str:
    """The context's table alias ``alias``; ORA-``missing`` without one, ORA-``unknown``
    when the context does not declare it."""
    if alias is None or not str(alias).strip():
        raise ora(missing)
    canon = canonical(str(alias), "table alias")
    if canon not in ctx.aliases:
        raise ora(unknown, alias)
    return canon


def _implicit(evaluator: RuleSetEvaluator, ev: Event, event_context: Any) -> None:
    """Ask the value functions of the implicit variables the client did not send."""
    for name, fn in evaluator.implicit:
        if name not in ev.variables:
            try:
                value = fn(event_context)
            except Exception:  # a failing value function leaves the variable undefined
                value = None
            if value is not None:
                ev.variables[name] = value


def run_evaluation(catalog: RulesCatalog, rule_set: str, context: str, *, streams: bool,
                   event_context: Any = None, table_values: Any = None, column_values: Any = None,
                   variable_values: Any = None, attribute_values: Any = None,
                   stop_on_first_hit: bool = False,
                   simple_rules_only: bool = False) -> tuple[list[RuleHit], list[RuleHit]]:
    """Evaluate with the context's evaluation function first, as Oracle does."""
    ctx = catalog.context(context)
    fn = catalog.cache.get(("evaluation function", context), _UNKNOWN)
    if fn is _UNKNOWN:
        fn = catalog.cache[("evaluation function", context)] = evaluation_function(ctx)
    if fn is not None:
        result = fn(rule_set, context, event_context, table_values, column_values,
                    variable_values, attribute_values, stop_on_first_hit, simple_rules_only)
        status, true_rules, maybe_rules = result if isinstance(result, tuple) else (result, None, None)
        if status == EVALUATION_SUCCESS:
            return _hits(true_rules), _hits(maybe_rules)
        if status == EVALUATION_FAILURE:
            raise ora(25457, ctx.evaluation_function)
        if status != EVALUATION_CONTINUE:
            raise ora(25457, ctx.evaluation_function)
    evaluator = evaluator_for(catalog, rule_set, context)
    ev = build_event(ctx, evaluator, event_context, table_values, column_values, variable_values,
                     attribute_values)
    return evaluator.evaluate(ev, streams=streams, stop_on_first_hit=stop_on_first_hit,
                              simple_rules_only=simple_rules_only)


def _hits(items: Any) -> list[RuleHit]:
    return [i if isinstance(i, RuleHit) else RuleHit(str(i)) for i in items or ()]


class DbmsRule:
    """The DBMS_RULE package for one connection."""

    def __init__(self, conn: "Connection") -> None:
        self._session_ctx = conn.context

    def _catalog(self) -> RulesCatalog:
        return rules_catalog(self._session_ctx.store)

    @out_params("true_rules", "maybe_rules")
    def evaluate(self, rule_set_name: str, evaluation_context: str, event_context: Any = None,
                 table_values: Any = None, column_values: Any = None, variable_values: Any = None,
                 attribute_values: Any = None, stop_on_first_hit: bool = False,
                 simple_rules_only: bool = False) -> tuple[list[RuleHit], list[RuleHit]]:
        """``(true_rules, maybe_rules)``: the ``RE$RULE_HIT`` lists of Oracle's OUT parameters.

        :raises: ORA-24141 unknown rule set, ORA-24150 unknown evaluation context,
            ORA-01031 neither the rule set's owner nor EXECUTE on it (EXECUTE_ON_RULE_SET,
            EXECUTE_ANY_RULE_SET), or a row in ``table_values`` of a table the caller
            may not SELECT,
            ORA-25457 when the context's evaluation function reports failure.
        """
        self._session_ctx.check_open()
        catalog = self._catalog()
        user = self._session_ctx.username
        rule_set = catalog.key(rule_set_name, user, "rule set name")
        context = catalog.key(evaluation_context, user, "evaluation context name")
        catalog.rule_set(rule_set)
        check_evaluate(self._session_ctx, rule_set, catalog.context(context), _sent_aliases(table_values))
        return run_evaluation(catalog, rule_set, context, streams=False,
                              event_context=event_context, table_values=table_values,
                              column_values=column_values, variable_values=variable_values,
                              attribute_values=attribute_values,
                              stop_on_first_hit=bool(stop_on_first_hit),
                              simple_rules_only=bool(simple_rules_only))


def message_event_context(message: Any) -> dict[str, Any]:
    """The event context Streams passes: ``AQ$_MESSAGE`` -> the message (seed 000,
    "Streams and Event Contexts")."""
    return {AQ_MESSAGE: message.value if isinstance(message, AnyData) else message}
