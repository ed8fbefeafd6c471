"""Compile a condition tree into nested Python closures, once.

``compile_python(tree, resolver)`` walks the tree a single time and returns a
function of the evaluation context; evaluating a rule then only calls closures
(no tree walking, no ``eval``).  The closures implement Oracle semantics:

* three-valued logic -- None is NULL / UNKNOWN; ``AND`` is FALSE as soon as one
  term is FALSE, ``OR`` TRUE as soon as one is TRUE, otherwise UNKNOWN wins;
* ``''`` is NULL: every value produced is passed through ``null_if_empty``;
* implicit conversion before comparing (``coerce_pair``): ``'10' > 9`` is TRUE,
  ``'abc' = 1`` raises ORA-01722;
* member access on a variable is resolved on the Python object at run time:
  ``:"VAR$_52".region`` reads ``REGION`` / ``region`` / a mapping key, and
  ``.AccessNumber()`` calls ``accessnumber`` or ``access_number``.  A member of
  NULL is NULL.

Names are resolved through ``resolver`` (``identifier(path)`` and ``bind(name)``,
each returning a function of the context), so the same tree can run against
LCRs, AQ message properties or a plain dict.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any, Callable, Protocol

from ...errors import DatabaseError, ora
from ...objtypes import contents
from ...sqlfunctions import (
    FUNCTIONS, NILADIC, NUMBER_CONTEXT, Builtin, coerce_pair, like_regex, null_if_empty, to_char,
    to_number,
)
from ..lang.ast import (
    And, Attribute, Between, Bind, Binary, Compare, Condition, Exists, Expr, FuncCall,
    Identifier, InList, IsNull, Like, Literal, MethodCall, Not, Or, Unary,
)

__all__ = ["Resolver", "compile_python", "compile_expression", "get_attribute", "call_method"]

Getter = Callable[[Any], Any]


class Resolver(Protocol):
    """How a compiler finds names; both methods run once, at compile time."""

    def identifier(self, path: tuple[str, ...]) -> Getter:
        """A getter for ``a.b.c``; raise ``ora(904, ...)`` for an unknown name."""

    def bind(self, name: str) -> Getter:
        """A getter for the variable ``:name`` (undefined variables read as NULL)."""


def compile_python(expr: Expr, resolver: Resolver) -> Callable[[Any], bool | None]:
    """TRUE / FALSE / None (UNKNOWN) for a condition; compile-time name errors raise here."""
    if not isinstance(expr, Condition):
        raise ora(920)
    return _condition(expr, resolver)


def compile_expression(expr: Expr, resolver: Resolver) -> Getter:
    """The value of an expression (None for NULL), e.g. for transformations."""
    if isinstance(expr, Condition):
        return _condition(expr, resolver)
    return _value(expr, resolver)


# --- values ---------------------------------------------------------------------


def _normalised(getter: Getter) -> Getter:
    return lambda ctx: null_if_empty(getter(ctx))


def _value(node: Expr, r: Resolver) -> Getter:
    match node:
        case Literal(value):
            return lambda ctx: value
        case Identifier((name,)) if name in NILADIC:
            return _function((name,), (), r)
        case Identifier(path):
            return _normalised(r.identifier(path))
        case Bind(name):
            return _normalised(r.bind(name))
        case Attribute(obj, name, spelled):
            of = _value(obj, r)

            def attribute(ctx: Any) -> Any:
                o = of(ctx)
                return None if o is None else null_if_empty(get_attribute(o, name, spelled))
            return attribute
        case MethodCall(obj, name, spelled, args):
            return _method(_value(obj, r), name, spelled, [_value(a, r) for a in args])
        case FuncCall(name, args):
            return _function(name, args, r)
        case Unary(op, operand):
            f = _value(operand, r)
            if op == "+":
                return f
            return lambda ctx: _negate(f(ctx))
        case Binary("||", left, right):
            lf, rf = _value(left, r), _value(right, r)
            return lambda ctx: _concat(lf(ctx), rf(ctx))
        case Binary(op, left, right):
            lf, rf = _value(left, r), _value(right, r)
            return lambda ctx: _arithmetic(op, lf(ctx), rf(ctx))
    raise ora(936)  # a condition where a value belongs: the parser never builds this


def _method(of: Getter, name: str, spelled: str, args: list[Getter]) -> Getter:
    def method(ctx: Any) -> Any:
        o = of(ctx)
        if o is None:
            return None  # a member of NULL is NULL, as for an undefined variable
        return null_if_empty(call_method(o, name, spelled, [a(ctx) for a in args]))
    return method


def _function(name: tuple[str, ...], args: tuple[Expr, ...], r: Resolver) -> Getter:
    qualified = ".".join(name)
    builtin = FUNCTIONS.get(qualified)
    if builtin is None:
        if len(name) == 1:
            raise ora(904, f'"{qualified}"')
        # pkg.fn(...) that is no built-in may be a member call on a column or
        # attribute path: tab.user_data.get_x()
        try:
            target = r.identifier(name[:-1])
        except DatabaseError as e:
            if e.code != 904:
                raise
            raise ora(904, f'"{qualified}"') from None
        return _method(_normalised(target), name[-1], name[-1], [_value(a, r) for a in args])
    if len(args) < builtin.min_args:
        raise ora(938)
    if builtin.max_args is not None and len(args) > builtin.max_args:
        raise ora(939)
    return _builtin(builtin, [_value(a, r) for a in args])


def _builtin(builtin: Builtin, fns: list[Getter]) -> Getter:
    impl = builtin.impl
    if builtin.kind == "lazy":
        return lambda ctx: null_if_empty(impl(ctx, fns))
    if builtin.kind == "lenient":
        return lambda ctx: null_if_empty(impl(*[f(ctx) for f in fns]))
    if len(fns) == 1:
        (f,) = fns

        def strict1(ctx: Any) -> Any:
            v = f(ctx)
            return None if v is None else null_if_empty(impl(v))
        return strict1

    def strict(ctx: Any) -> Any:
        values = [f(ctx) for f in fns]
        if any(v is None for v in values):
            return None  # Oracle's built-ins return NULL for a NULL argument
        return null_if_empty(impl(*values))
    return strict


def _negate(v: Any) -> Any:
    if v is None:
        return None
    n = to_number(v)
    return NUMBER_CONTEXT.minus(n) if isinstance(n, Decimal) else -n  # 38 digits, not Python's 28


def _concat(a: Any, b: Any) -> str | None:
    # '' || 'a' = 'a' and NULL || 'a' = 'a': concatenation ignores NULLs.
    return (to_char(a) or "") + (to_char(b) or "") or None


def _as_datetime(v: date) -> datetime:
    return v if isinstance(v, datetime) else datetime(v.year, v.month, v.day)


def _arithmetic(op: str, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if isinstance(a, date) or isinstance(b, date):
        return _date_arithmetic(op, a, b)
    a, b = to_number(a), to_number(b)
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)  # BINARY_DOUBLE wins over NUMBER, as in Oracle
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        # NUMBER keeps 38 digits; Python's default context rounds to 28 (1 - 1E-30 was 1)
        if op in "+-*":
            return {"+": NUMBER_CONTEXT.add, "-": NUMBER_CONTEXT.subtract, "*": NUMBER_CONTEXT.multiply}[op](a, b)
    elif op in "+-*":  # ints (exact) or doubles
        return a + b if op == "+" else a - b if op == "-" else a * b
    if b == 0:
        raise ora(1476)
    if isinstance(a, float):
        return a / b
    return NUMBER_CONTEXT.divide(Decimal(a), Decimal(b))  # 7 / 2 = 3.5, exactly


def _date_arithmetic(op: str, a: Any, b: Any) -> Any:
    """DATE + n days, DATE - n days, DATE - DATE = days (a NUMBER)."""
    if op == "-" and isinstance(a, date) and isinstance(b, date):
        delta = _as_datetime(a) - _as_datetime(b)
        seconds = Decimal(delta.days * 86400 + delta.seconds) + Decimal(delta.microseconds) / 10**6
        return NUMBER_CONTEXT.divide(seconds, Decimal(86400))
    if op == "+" and isinstance(b, date) and not isinstance(a, date):
        a, b = b, a
    if op in "+-" and isinstance(a, date) and not isinstance(b, date):
        try:
            days = timedelta(days=float(to_number(b)))
            return _as_datetime(a) + days if op == "+" else _as_datetime(a) - days
        except OverflowError:     # past 9999-12-31 or before 0001-01-01
            raise ora(1841) from None
    raise ora(932, "NUMBER", "DATE")


# --- members: resolved on the Python object ------------------------------------

_MISSING = object()
_METHODS: dict[tuple[type, str], str] = {}


def get_path(obj: Any, names: tuple[str, ...]) -> Any:
    """``obj.a.b…``: :func:`get_attribute` step by step; NULL once a step is NULL."""
    for name in names:
        if obj is None:
            return None
        obj = get_attribute(obj, name, name)
    return obj


def get_attribute(obj: Any, name: str, spelled: str) -> Any:
    """``obj.name``: attribute NAME, name, as spelled; for a mapping the key (else NULL)."""
    if isinstance(obj, Mapping):
        for key in (name, name.lower(), spelled):
            if key in obj:
                return obj[key]
        wanted = name.upper()
        for key, value in obj.items():
            if isinstance(key, str) and key.upper() == wanted:
                return value
        return None  # an attribute the client did not send is NULL (seed 000)
    for attr in (name, name.lower(), spelled):
        value = getattr(obj, attr, _MISSING)
        if value is not _MISSING:
            return contents(value)      # (a LOB attribute: its contents)
    raise ora(904, f'"{name}"')


def _snake(spelled: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", spelled).lower()


def _squash(name: str) -> str:
    return name.replace("_", "").lower()


def call_method(obj: Any, name: str, spelled: str, args: list[Any]) -> Any:
    """``obj.Name(args)``: the method ``name`` lower-cased, else its snake_case form.

    ``AccessNumber`` finds ``accessnumber`` or ``access_number``; as a last
    resort any method whose name matches ignoring case and underscores.
    """
    cls = type(obj)
    attr = _METHODS.get((cls, spelled))
    if attr is None:
        for candidate in (spelled.lower(), _snake(spelled), name.lower()):
            if callable(getattr(obj, candidate, None)):
                attr = candidate
                break
        else:
            squashed = _squash(spelled)
            attr = next((a for a in dir(obj) if not a.startswith("__") and _squash(a) == squashed
                         and callable(getattr(obj, a, None))), None)
            if attr is None:
                raise ora(904, f'"{name}"')
        if hasattr(cls, attr):  # cache only what every instance of the class has
            _METHODS[(cls, spelled)] = attr
    return getattr(obj, attr)(*args)


# --- conditions ----------------------------------------------------------------

_COMPARE = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


def compare3(op: Callable[[Any, Any], bool], a: Any, b: Any) -> bool | None:
    """``a op b`` with NULL -> UNKNOWN and Oracle's implicit conversion."""
    if a is None or b is None:
        return None
    if a.__class__ is not b.__class__:
        a, b = coerce_pair(a, b)
    try:
        return bool(op(a, b))
    except TypeError:
        raise ora(932, type(a).__name__.upper(), type(b).__name__.upper()) from None


def _and3(results: Iterable[bool | None]) -> bool | None:
    unknown = False
    for result in results:
        if result is False:
            return False
        if result is None:
            unknown = True
    return None if unknown else True


def _condition(node: Expr, r: Resolver) -> Callable[[Any], bool | None]:
    match node:
        case Compare(op, left, right):
            return _compare(_COMPARE[op], _value(left, r), _value(right, r))
        case And(terms):
            fns = [_condition(t, r) for t in terms]
            return lambda ctx: _and3(f(ctx) for f in fns)  # lazy: stops at FALSE
        case Or(terms):
            fns = [_condition(t, r) for t in terms]
            return lambda ctx: _or3(fns, ctx)
        case Not(operand):
            f = _condition(operand, r)
            return lambda ctx: _not3(f(ctx))
        case IsNull(operand, negated):
            f = _value(operand, r)
            if negated:
                return lambda ctx: f(ctx) is not None
            return lambda ctx: f(ctx) is None
        case Like():
            return _negated(_like(node, r), node.negated)
        case InList(operand, items, negated):
            return _negated(_in_list(_value(operand, r), [_value(i, r) for i in items]), negated)
        case Between(operand, low, high, negated):
            of, lf, hf = _value(operand, r), _value(low, r), _value(high, r)

            def between(ctx: Any) -> bool | None:
                v = of(ctx)
                return _and3((compare3(operator.ge, v, lf(ctx)), compare3(operator.le, v, hf(ctx))))
            return _negated(between, negated)
        case Exists(None):
            return lambda ctx: True
        case Exists(inner):
            f = _condition(inner, r)
            return lambda ctx: f(ctx) is True  # a row exists only when WHERE is TRUE
    raise ora(920)  # a value where a condition belongs


def _compare(op: Callable[[Any, Any], bool], lf: Getter, rf: Getter) -> Callable[[Any], bool | None]:
    def compare(ctx: Any) -> bool | None:
        a = lf(ctx)
        if a is None:
            return None
        b = rf(ctx)
        if b is None:
            return None
        if a.__class__ is b.__class__ and a.__class__ in (str, int):
            return op(a, b)  # the common case: no conversion needed
        return compare3(op, a, b)
    return compare


def _or3(fns: list[Callable[[Any], bool | None]], ctx: Any) -> bool | None:
    unknown = False
    for f in fns:
        result = f(ctx)
        if result is True:
            return True
        if result is None:
            unknown = True
    return None if unknown else False


def _not3(result: bool | None) -> bool | None:
    return None if result is None else not result


def _negated(f: Callable[[Any], bool | None], negated: bool) -> Callable[[Any], bool | None]:
    return (lambda ctx: _not3(f(ctx))) if negated else f


def _in_list(of: Getter, items: list[Getter]) -> Callable[[Any], bool | None]:
    """``x IN (a, b)`` is ``x = a OR x = b``: no match and a NULL item gives UNKNOWN."""
    def in_list(ctx: Any) -> bool | None:
        v = of(ctx)
        if v is None:
            return None
        unknown = False
        for item in items:
            result = compare3(operator.eq, v, item(ctx))
            if result:
                return True
            if result is None:
                unknown = True
        return None if unknown else False
    return in_list


def _like(node: Like, r: Resolver) -> Callable[[Any], bool | None]:
    of = _value(node.operand, r)
    if isinstance(node.pattern, Literal) and (node.escape is None or isinstance(node.escape, Literal)):
        pattern, escape = node.pattern.value, node.escape.value if node.escape else None
        if pattern is None or (node.escape is not None and escape is None):
            return lambda ctx: None  # LIKE NULL is UNKNOWN
        regex = like_regex(to_char(pattern), to_char(escape))  # bad patterns fail now

        def like_constant(ctx: Any) -> bool | None:
            v = of(ctx)
            return None if v is None else regex.fullmatch(to_char(v)) is not None
        return like_constant
    pf = _value(node.pattern, r)
    ef = _value(node.escape, r) if node.escape is not None else (lambda ctx: None)

    def like(ctx: Any) -> bool | None:
        v, p = of(ctx), pf(ctx)
        e = ef(ctx)
        if v is None or p is None or (node.escape is not None and e is None):
            return None
        return like_regex(to_char(p), to_char(e)).fullmatch(to_char(v)) is not None
    return like
