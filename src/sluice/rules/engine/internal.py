"""The functions an evaluation context names, and where their code comes from.

An evaluation context refers to PL/SQL functions by name: a *variable value
function* per implicit variable, a *variable method function* per variable
(Oracle's "fast evaluation" functions) and one *evaluation function*.  Names in
``SYS.DBMS_STREAMS_INTERNAL`` are Oracle's own (seed 000, "Evaluation Contexts
Used in Streams") and are implemented here; any other name must be a Python
function registered with :func:`sluice.register_function`:

* value function ``fn(evaluation_context_schema, evaluation_context_name,
  variable_name, event_context)`` returns the value (or a ``RE$VARIABLE_VALUE``
  or ANYDATA holding it); NULL leaves the variable undefined;
* evaluation function ``fn(rule_set_name, evaluation_context, event_context,
  table_values, column_values, variable_values, attribute_values,
  stop_on_first_hit, simple_rules_only)`` returns ``EVALUATION_CONTINUE``,
  ``EVALUATION_FAILURE``, or ``(EVALUATION_SUCCESS, true_rules, maybe_rules)``.

Method functions only make member calls faster in Oracle (they must return
what the member returns), so Sluice checks that they exist and calls members
directly.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ...errors import ora
from .anydata import AnyData
from .ruleset import EvaluationContext, Variable, call_registered
from .types import NVList, VariableValue, type_name_of

__all__ = ["EVALUATION_SUCCESS", "EVALUATION_FAILURE", "EVALUATION_CONTINUE", "AQ_MESSAGE",
           "event_message", "value_function", "evaluation_function", "check_function"]

# DBMS_RULE_ADM's return codes for evaluation functions
EVALUATION_SUCCESS, EVALUATION_FAILURE, EVALUATION_CONTINUE = 0, 1, 2
AQ_MESSAGE = "AQ$_MESSAGE"  # the event context name Streams uses for the message
_INTERNAL = "SYS.DBMS_STREAMS_INTERNAL."


def unwrap(value: Any) -> Any:
    """The Python value inside a RE$VARIABLE_VALUE / ANYDATA."""
    if value.__class__ is VariableValue:
        value = value.variable_data
    if value.__class__ is AnyData:
        value = value.value
    return value


def event_message(event_context: Any) -> Any:
    """The ``AQ$_MESSAGE`` of an event context (an RE$NV_LIST or a mapping), else None."""
    if event_context is None:
        return None
    if event_context.__class__ is dict and AQ_MESSAGE in event_context:  # Streams' own
        return unwrap(event_context[AQ_MESSAGE])
    if isinstance(event_context, NVList):
        return unwrap(event_context.get_value(AQ_MESSAGE))
    if isinstance(event_context, Mapping):
        if AQ_MESSAGE in event_context:
            return unwrap(event_context[AQ_MESSAGE])
        for key, value in event_context.items():
            if str(key).upper() == AQ_MESSAGE:
                return unwrap(value)
    return None


def _typed(wanted: str) -> Callable[[Variable, Any], Any]:
    def value(variable: Variable, event_context: Any) -> Any:
        message = event_message(event_context)
        return message if type_name_of(message) == wanted else None
    return value


def _message_of_variable_type(variable: Variable, event_context: Any) -> Any:
    message = event_message(event_context)
    return message if type_name_of(message) == variable.type else None


_VALUE_FUNCTIONS: dict[str, Callable[[Variable, Any], Any]] = {
    _INTERNAL + "ROW_VARIABLE_VALUE_FUNCTION": _typed("SYS.LCR$_ROW_RECORD"),
    _INTERNAL + "DDL_VARIABLE_VALUE_FUNCTION": _typed("SYS.LCR$_DDL_RECORD"),
    _INTERNAL + "MSG_VARIABLE_VALUE_FUNCTION": _message_of_variable_type,
}
_METHOD_FUNCTIONS = frozenset({_INTERNAL + "ROW_FAST_EVALUATION_FUNCTION",
                               _INTERNAL + "DDL_FAST_EVALUATION_FUNCTION",
                               _INTERNAL + "ANYDATA_FAST_EVAL_FUNCTION"})
_EVALUATION_FUNCTIONS = frozenset({_INTERNAL + "EVALUATION_CONTEXT_FUNCTION"})


def check_function(name: str, role: str, schema: str) -> None:
    """ORA-00904 unless ``name`` is an Oracle-supplied function for ``role``
    ('value', 'method', 'evaluation') or a registered Python function."""
    builtin = {"value": _VALUE_FUNCTIONS, "method": _METHOD_FUNCTIONS,
               "evaluation": _EVALUATION_FUNCTIONS}[role]
    if name in builtin:
        return
    if name.startswith(_INTERNAL) or call_registered(name, schema) is None:
        raise ora(904, f'"{name}"')


def value_function(ctx: EvaluationContext, variable: Variable) -> Callable[[Any], Any] | None:
    """``event_context -> value`` for an implicit variable, None for an explicit one."""
    name = variable.value_function
    if name is None:
        return None
    builtin = _VALUE_FUNCTIONS.get(name)
    if builtin is not None:
        return lambda event_context: builtin(variable, event_context)
    fn = call_registered(name, ctx.owner)
    if fn is None:
        raise ora(904, f'"{name}"')
    return lambda event_context: unwrap(fn(ctx.owner, ctx.name, variable.name, event_context))


def evaluation_function(ctx: EvaluationContext) -> Callable[..., Any] | None:
    """The user's evaluation function, or None when evaluation is the engine's alone."""
    name = ctx.evaluation_function
    if name is None or name in _EVALUATION_FUNCTIONS:
        return None  # Streams' function only adds internal messages: evaluation continues
    fn = call_registered(name, ctx.owner)
    if fn is None:
        raise ora(904, f'"{name}"')
    return fn
