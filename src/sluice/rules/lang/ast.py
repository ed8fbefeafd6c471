"""The one syntax tree of the rule condition language.

Oracle SQL keeps *expressions* (values: ``:dml.get_object_owner()``, ``1 + 2``)
apart from *conditions* (TRUE / FALSE / UNKNOWN: ``a = b``, ``x IS NULL``).  The
tree keeps them apart too: every condition node derives from :class:`Condition`,
every value node from :class:`Value`; both are :class:`Expr`.

Identifiers are stored in canonical form (unquoted names upper-cased, quoted
names as written).  Member names after a dot also keep their spelling
(``AccessNumber``) because the Python compiler derives a method name from it.

Every compiler (Python closures, SQL dialects, Spark Columns) walks this tree;
none of them re-parses text.  :func:`to_text` prints a tree back as a condition
that parses to the same tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any, Iterator

__all__ = [
    "Expr", "Value", "Condition",
    "Literal", "Identifier", "Bind", "Attribute", "MethodCall", "FuncCall", "Unary", "Binary",
    "Compare", "And", "Or", "Not", "IsNull", "Like", "InList", "Between", "Exists",
    "COMPARISON_OPS", "ARITHMETIC_OPS", "children", "walk", "to_text",
]

COMPARISON_OPS = ("=", "<>", "<", "<=", ">", ">=")
ARITHMETIC_OPS = ("+", "-", "*", "/", "||")


@dataclass(frozen=True, slots=True)
class Expr:
    """Any node."""


@dataclass(frozen=True, slots=True)
class Value(Expr):
    """A node that yields a value (NULL included)."""


@dataclass(frozen=True, slots=True)
class Condition(Expr):
    """A node that yields TRUE, FALSE or UNKNOWN (None)."""


# --- values -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Literal(Value):
    """A string (``str``), number (``int`` or ``Decimal``) or NULL (``None``)."""

    value: str | int | Decimal | None


@dataclass(frozen=True, slots=True)
class Identifier(Value):
    """A column or attribute path: ``priority``, ``tab.user_data.price``."""

    path: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Bind(Value):
    """A rule variable: ``:dml`` -> ``Bind('DML')``, ``:"VAR$_52"`` -> ``Bind('VAR$_52')``."""

    name: str


@dataclass(frozen=True, slots=True)
class Attribute(Value):
    """``obj.name`` where ``obj`` is a value (a variable, a call result)."""

    obj: Value
    name: str      # canonical: upper case unless it was quoted
    spelled: str = field(compare=False)  # as written; equal trees ignore spelling


@dataclass(frozen=True, slots=True)
class MethodCall(Value):
    """A member subprogram call: ``:dml.get_value('NEW', '"REGION_ID"')``."""

    obj: Value
    name: str
    spelled: str = field(compare=False)
    args: tuple[Value, ...] = ()


@dataclass(frozen=True, slots=True)
class FuncCall(Value):
    """A function: ``UPPER(x)``; ``DBMS_STREAMS.COMPATIBLE_9_2()`` has a dotted name."""

    name: tuple[str, ...]
    args: tuple[Value, ...]

    @property
    def qualified(self) -> str:
        return ".".join(self.name)


@dataclass(frozen=True, slots=True)
class Unary(Value):
    """Unary ``-`` or ``+``."""

    op: str
    operand: Value


@dataclass(frozen=True, slots=True)
class Binary(Value):
    """``+ - * /`` and ``||`` (concatenation)."""

    op: str
    left: Value
    right: Value


# --- conditions ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Compare(Condition):
    """``left op right``; ``!=`` and ``^=`` are stored as ``<>``."""

    op: str
    left: Value
    right: Value


@dataclass(frozen=True, slots=True)
class And(Condition):
    """A conjunction, flattened: ``a AND (b AND c)`` has three terms."""

    terms: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Or(Condition):
    """A disjunction, flattened."""

    terms: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Not(Condition):
    operand: Condition


@dataclass(frozen=True, slots=True)
class IsNull(Condition):
    operand: Value
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Like(Condition):
    operand: Value
    pattern: Value
    escape: Value | None = None
    negated: bool = False


@dataclass(frozen=True, slots=True)
class InList(Condition):
    operand: Value
    items: tuple[Value, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Between(Condition):
    operand: Value
    low: Value
    high: Value
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Exists(Condition):
    """``EXISTS (SELECT 1 FROM SYS.DUAL WHERE cond)``: TRUE exactly when ``cond`` is TRUE.

    Subset rules generate this form; it is never UNKNOWN.  ``condition`` is None
    when the subquery has no WHERE clause (always TRUE).
    """

    condition: Condition | None


# --- walking ------------------------------------------------------------------


def children(node: Expr) -> Iterator[Expr]:
    """The direct sub-nodes of ``node``, left to right."""
    for f in fields(node):
        value: Any = getattr(node, f.name)
        if isinstance(value, Expr):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, Expr))


def walk(node: Expr) -> Iterator[Expr]:
    """Every node of the tree, parents before children."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))


# --- printing -----------------------------------------------------------------


_PLAIN_NAME = re.compile(r"[A-Z][A-Z0-9_$#]*")


def _name(part: str) -> str:
    """An identifier part as it must be written to parse back to ``part``."""
    from .lexer import KEYWORDS  # late: the lexer is the authority on reserved words

    if _PLAIN_NAME.fullmatch(part) and part not in KEYWORDS:
        return part
    return '"' + part + '"'


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def to_text(node: Expr) -> str:
    """Print ``node`` as condition text, fully parenthesised where it matters."""
    t = to_text
    match node:
        case Literal(value):
            return _literal(value)
        case Identifier(path):
            return ".".join(_name(p) for p in path)
        case Bind(name):
            return ":" + _name(name)
        case Attribute(obj, name, _):
            return f"{t(obj)}.{_name(name)}"
        case MethodCall(obj, name, _, args):
            return f"{t(obj)}.{_name(name)}({', '.join(t(a) for a in args)})"
        case FuncCall(name, args):
            return f"{'.'.join(_name(p) for p in name)}({', '.join(t(a) for a in args)})"
        case Unary(op, operand):
            return f"{op}({t(operand)})"
        case Binary(op, left, right):
            return f"({t(left)} {op} {t(right)})"
        case Compare(op, left, right):
            return f"{t(left)} {op} {t(right)}"
        case And(terms):
            return "(" + " AND ".join(t(x) for x in terms) + ")"
        case Or(terms):
            return "(" + " OR ".join(t(x) for x in terms) + ")"
        case Not(operand):
            return f"NOT ({t(operand)})"
        case IsNull(operand, negated):
            return f"{t(operand)} IS {'NOT ' if negated else ''}NULL"
        case Like(operand, pattern, escape, negated):
            tail = f" ESCAPE {t(escape)}" if escape is not None else ""
            return f"{t(operand)} {'NOT ' if negated else ''}LIKE {t(pattern)}{tail}"
        case InList(operand, items, negated):
            return f"{t(operand)} {'NOT ' if negated else ''}IN ({', '.join(t(i) for i in items)})"
        case Between(operand, low, high, negated):
            return f"{t(operand)} {'NOT ' if negated else ''}BETWEEN {t(low)} AND {t(high)}"
        case Exists(condition):
            where = f" WHERE {t(condition)}" if condition is not None else ""
            return f"EXISTS (SELECT 1 FROM SYS.DUAL{where})"
    raise TypeError(f"not a condition node: {node!r}")
