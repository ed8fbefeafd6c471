"""The condition language of rules and of AQ dequeue / subscriber conditions.

One grammar (an Oracle SQL WHERE-clause subset, DESIGN.md section 4), one tree
(:mod:`sluice.rules.lang.ast`), one compiler per target; this package holds the
parser and the Python compiler::

    from sluice.rules import compile_condition, DictResolver

    rule = compile_condition(":msg.region = 'EUROPE' AND :msg.priority = '1'", DictResolver())
    rule({"msg": {"region": "EUROPE", "priority": 1}})   # -> True

Evaluation follows SQL three-valued logic: the compiled function returns True,
False or None (UNKNOWN); a rule "fires" only on True.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, NamedTuple

from ..errors import ora
from ..sqlfunctions import FUNCTIONS, NILADIC
from .compile.python import Resolver, compile_expression, compile_python, get_path
from .lang.ast import Bind, Condition, Expr, FuncCall, Identifier, to_text, walk
from .lang.parser import parse_condition, parse_expression

__all__ = [
    "parse_condition", "parse_expression", "compile_condition", "compile_python",
    "compile_expression", "referenced_names", "Names", "DictResolver", "Resolver", "to_text",
    "Condition",
]


def compile_condition(text: str, resolver: Resolver) -> Callable[[Any], bool | None]:
    """Parse and compile in one step: ``text`` -> function of the context."""
    return compile_python(parse_condition(text), resolver)


class Names(NamedTuple):
    """What a condition reads: identifier paths, variables, functions (canonical names)."""

    identifiers: frozenset[tuple[str, ...]]
    binds: frozenset[str]
    functions: frozenset[str]


def referenced_names(expr: Expr) -> Names:
    """The identifier paths and bind variables ``expr`` uses.

    The AQ layer uses it to see which message properties a dequeue condition
    needs (``priority``, ``tab.user_data.price``); rule sets use the binds to
    check conditions against their evaluation context.  ``pkg.fn()`` that is not
    a built-in counts as a member call on the identifier ``pkg``.
    """
    identifiers, binds, functions = set(), set(), set()
    for node in walk(expr):
        if isinstance(node, Identifier):
            if not (len(node.path) == 1 and node.path[0] in NILADIC):
                identifiers.add(node.path)
        elif isinstance(node, Bind):
            binds.add(node.name)
        elif isinstance(node, FuncCall):
            if node.qualified in FUNCTIONS or len(node.name) == 1:
                functions.add(node.qualified)
            else:
                identifiers.add(node.name[:-1])
    return Names(frozenset(identifiers), frozenset(binds), frozenset(functions))


def _lookup(ctx: Any, name: str) -> Any:
    """``ctx[name]`` ignoring case; KeyError when absent."""
    for key in (name, name.lower()):
        if key in ctx:
            return ctx[key]
    wanted = name.upper()
    for key in ctx:
        if isinstance(key, str) and key.lstrip(":").upper() == wanted:
            return ctx[key]
    raise KeyError(name)


class DictResolver:
    """Resolve identifiers and variables in a dict-like context, ignoring case.

    ``names`` (optional) lists the identifiers that exist, so that a typo is
    ORA-00904 at compile time; without it an unknown identifier is ORA-00904 at
    evaluation.  An absent variable is NULL, as for Streams clients (seed 000,
    "Rule Conditions with Undefined Variables that Evaluate to NULL").
    """

    def __init__(self, names: Iterable[str] | None = None) -> None:
        self.names = None if names is None else frozenset(n.upper() for n in names)

    def identifier(self, path: tuple[str, ...]) -> Callable[[Any], Any]:
        head, rest = path[0], path[1:]
        if self.names is not None and head.upper() not in self.names:
            raise ora(904, f'"{head}"')

        def get(ctx: Any) -> Any:
            try:
                value = _lookup(ctx, head)
            except KeyError:
                raise ora(904, f'"{head}"') from None
            return get_path(value, rest)
        return get

    def bind(self, name: str) -> Callable[[Any], Any]:
        def get(ctx: Any) -> Any:
            try:
                return _lookup(ctx, name)
            except KeyError:
                return None
        return get
