"""Built-in functions for the typed targets: argument conversions and error flags.

Each entry mirrors the Python implementation in :mod:`sluice.sqlfunctions`: which
arguments it converts to text or to a number (the conversions that can raise
ORA-01722), when it raises (INSTR's occurrence < 1 is ORA-01428), and how it
treats NULLs (strict, lenient or lazy -- see ``functions.Builtin``).  The
resulting ``fn`` op carries arguments already converted, so a target only has
to spell the function.
"""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from ....errors import DatabaseError, ora
from ....sqlfunctions import FUNCTIONS, NILADIC, to_char
from ...lang.ast import FuncCall, Identifier, MethodCall
from . import ir
from .ir import NULL, Const, Lowered, Node, _any, _when, and_, case, is_not_null, is_null

if TYPE_CHECKING:
    from .lower import _Lowering

__all__ = ["lower_function"]

_SPACE = Const("CHAR", " ")
_ZERO = Const("NUMBER", 0)


def lower_function(lw: _Lowering, node: FuncCall) -> Lowered:
    qualified = node.qualified
    builtin = FUNCTIONS.get(qualified)
    if builtin is None:
        if len(node.name) == 1:
            raise ora(904, f'"{qualified}"')
        # pkg.fn(...) that is no built-in is a member call on the path before it
        try:
            lw.resolver.reference(Identifier(node.name[:-1]))
        except DatabaseError as e:
            if e.code != 904:
                raise
            raise ora(904, f'"{qualified}"') from None
        call = MethodCall(Identifier(node.name[:-1]), node.name[-1], node.name[-1], node.args)
        return lw.reference(call)
    if len(node.args) < builtin.min_args:
        raise ora(938)
    if builtin.max_args is not None and len(node.args) > builtin.max_args:
        raise ora(939)
    if qualified in NILADIC:
        return Lowered(ir.op("now", "DATE", extra=(qualified,)), None)
    args = [lw.value(a) for a in node.args]
    special = _SPECIAL.get(qualified)
    if special is not None:
        return special(lw, args)
    if qualified not in _SIGNATURES:
        raise ir.NotCompilable(f"{qualified} has no typed equivalent")
    return _typed(lw, qualified, args)


def _fn(name: str, kind: str, *args: Node) -> Node:
    return ir.op("fn", kind, *args, extra=(name,))


# name -> (result kind, argument conversions: C text, N number, defaults for missing args)
_SIGNATURES: dict[str, tuple[str, str, tuple[Node, ...]]] = {
    "UPPER": ("CHAR", "C", ()), "LOWER": ("CHAR", "C", ()), "INITCAP": ("CHAR", "C", ()),
    "LENGTH": ("NUMBER", "C", ()), "TRIM": ("CHAR", "C", ()),
    "LTRIM": ("CHAR", "CC", (_SPACE,)), "RTRIM": ("CHAR", "CC", (_SPACE,)),
    "SUBSTR": ("CHAR", "CNN", ()), "INSTR": ("NUMBER", "CCNN", ()),
    "LPAD": ("CHAR", "CNC", (_SPACE,)), "RPAD": ("CHAR", "CNC", (_SPACE,)),
    "ABS": ("NUMBER", "N", ()), "FLOOR": ("NUMBER", "N", ()), "CEIL": ("NUMBER", "N", ()),
    "SIGN": ("NUMBER", "N", ()), "MOD": ("NUMBER", "NN", ()), "ROUND": ("NUMBER", "NN", (_ZERO,)),
    "TRUNC": ("NUMBER", "NN", (_ZERO,)),
}
# results that can be '' (Python passes every result through null_if_empty)
_MAY_BE_EMPTY = {"TRIM", "LTRIM", "RTRIM", "LPAD", "RPAD"}  # LPAD(s, 0) is NULL


def _typed(lw: _Lowering, name: str, args: list[Lowered]) -> Lowered:
    kind, codes, defaults = _SIGNATURES[name]
    if name == "TRUNC" and args[0].node.kind == "DATE":
        # TRUNC(date [, fmt]): midnight of that day (the format is ignored: sqlfunctions._trunc)
        return lw.strict(args, _fn("TRUNC", "DATE", args[0].node), None)
    given = [a.node for a in args]
    missing = len(codes) - len(given)
    if missing and len(defaults) >= missing:
        given += list(defaults[len(defaults) - missing:])
    nodes: list[Node] = []
    bads: list[Node | None] = []
    for code, n in zip(codes, given):
        if code == "C":
            nodes.append(lw.char(n))
        else:
            converted, bad = lw.num(n)
            nodes.append(converted)
            bads.append(bad)
    if name == "INSTR" and len(nodes) == 4:  # ORA-01428: occurrence must be at least 1
        occurrence = nodes[3]
        if isinstance(occurrence, Const):
            bads.append(ir.TRUE if occurrence.value is not None and int(occurrence.value) < 1 else None)
        else:
            bads.append(ir.is_true(ir.op("cmp", "BOOL", occurrence, Const("NUMBER", 1), extra=("<",))))
    result = _fn(name, kind, *nodes)
    if name in _MAY_BE_EMPTY:
        result = ir.op("nullif_empty", "CHAR", result)
    return lw.strict(args, result, _any(*bads))


def _greatest(name: str) -> Callable[[_Lowering, list[Lowered]], Lowered]:
    def lower(lw: _Lowering, args: list[Lowered]) -> Lowered:
        first = args[0].node
        if first.kind == "MIXED":  # the result's datatype is the first argument's, per row
            raise ir.NotCompilable(f"{name} of a value whose datatype depends on the row")
        if first.kind in ("CHAR", "NULL"):
            nodes, bads = [lw.char(a.node) for a in args], []
        else:  # every argument takes the first one's datatype (sqlfunctions._greatest)
            nodes, bads = [first], []
            for a in args[1:]:
                _, converted, bad = lw.coerce(first, a.node)
                nodes.append(converted)
                bads.append(bad)
        kind = "CHAR" if first.kind == "NULL" else nodes[0].kind
        # SQL's GREATEST skips NULLs; Oracle's is NULL when any argument is
        body = case([(ir.or_(*(is_null(n) for n in nodes)), Const(kind, None))], _fn(name, kind, *nodes), kind)
        return lw.strict(args, body, _any(*bads))
    return lower


def _format(node: Lowered, what: str) -> str:
    if not isinstance(node.node, Const):
        raise ir.NotCompilable(f"{what} format model must be a constant")
    return node.node.value


def _to_char(lw: _Lowering, args: list[Lowered]) -> Lowered:
    x = args[0].node
    if len(args) == 1 or x.kind in ("CHAR", "RAW", "NULL"):
        return lw.strict(args, lw.char(x), None)  # text stays text; RAW is hex, format or not
    fmt = _format(args[1], "TO_CHAR")
    bad = None
    if x.kind == "NUMBER":
        try:
            to_char(Decimal(0), fmt)
        except DatabaseError:
            bad = ir.TRUE  # ORA-01481 invalid number format model
    elif x.kind != "DATE":
        raise ir.NotCompilable(f"TO_CHAR of {x.kind}")
    return lw.strict(args, _fn("TO_CHAR", "CHAR", x, args[1].node), bad)


def _to_date(lw: _Lowering, args: list[Lowered]) -> Lowered:
    fmt = (_format(args[1], "TO_DATE"),) if len(args) > 1 else ()
    converted, bad = lw.date(args[0].node, fmt)
    return lw.strict(args, converted, bad)


def _to_number(lw: _Lowering, args: list[Lowered]) -> Lowered:
    x = args[0].node
    if len(args) > 1 and x.kind == "CHAR":
        # sqlfunctions._to_number_fmt: a format only lets group separators and '$' through
        for sign in (",", "$"):
            x = _fn("REPLACE", "CHAR", x, Const("CHAR", sign), Const("CHAR", ""))
    converted, bad = lw.num(x)
    return lw.strict(args, converted, bad)


def _hextoraw(lw: _Lowering, args: list[Lowered]) -> Lowered:
    converted, bad = lw.raw(lw.char(args[0].node))
    return lw.strict(args, converted, bad)


def _rawtohex(lw: _Lowering, args: list[Lowered]) -> Lowered:
    raw, bad = lw.raw(lw.char(args[0].node))
    return lw.strict(args, lw.char(raw) if raw.kind == "RAW" else NULL, bad)


def _replace(lw: _Lowering, args: list[Lowered]) -> Lowered:
    err = _any(*(a.err for a in args))  # lenient: every argument is evaluated
    s = lw.char(args[0].node)
    search = lw.char(args[1].node) if len(args) > 1 else NULL
    repl = lw.char(args[2].node) if len(args) > 2 else NULL
    if s.kind == "NULL" or search.kind == "NULL":
        return Lowered(s, err)
    replacement = Const("CHAR", "") if repl.kind == "NULL" else ir.op("coalesce", "CHAR", repl, Const("CHAR", ""))
    replaced = ir.op("nullif_empty", "CHAR", _fn("REPLACE", "CHAR", s, search, replacement))
    return Lowered(case([(is_null(search), s)], replaced, "CHAR"), err)


def _unify(nodes: list[Node]) -> str:
    """The one datatype of the results, NULL for none, MIXED when Python's would vary by row."""
    kinds = {n.kind for n in nodes} - {"NULL"}
    if len(kinds) > 1:
        return "MIXED"
    return kinds.pop() if kinds else "NULL"


def _choose(whens: list[tuple[Node, Node]], otherwise: Node, kind: str) -> Node:
    """CASE over results; over results of several datatypes an ``alt`` node, which only a
    comparison (lower.compare splits it per branch) and IS NULL can consume."""
    if kind == "NULL":
        return NULL
    if kind != "MIXED":
        fix = (lambda n: Const(kind, None) if n.kind == "NULL" else n)
        return case([(c, fix(v)) for c, v in whens], fix(otherwise), kind)
    args: list[Node] = []
    for cond, value in whens:
        args += [cond, value]
    return ir.Op("MIXED", "alt", tuple(args) + (otherwise,))


def _coalesce_nodes(nodes: list[Node], kind: str) -> Node:
    present = [n for n in nodes if n.kind != "NULL"]
    if not present:
        return NULL
    if len(present) == 1:
        return present[0]
    if kind == "MIXED":
        return _choose([(is_not_null(n), n) for n in present[:-1]], present[-1], kind)
    return ir.op("coalesce", kind, *present)


def _nvl(lw: _Lowering, args: list[Lowered]) -> Lowered:
    nodes = [a.node for a in args]
    return Lowered(_coalesce_nodes(nodes, _unify(nodes)), _any(*(a.err for a in args)))


def _nvl2(lw: _Lowering, args: list[Lowered]) -> Lowered:
    a, b, c = (x.node for x in args)
    body = _choose([(is_not_null(a), b)], c, _unify([b, c]))
    return Lowered(body, _any(*(x.err for x in args)))


def _coalesce(lw: _Lowering, args: list[Lowered]) -> Lowered:
    nodes = [a.node for a in args]
    kind = _unify(nodes)
    err: Node | None = None
    for a in reversed(args):  # lazy: later arguments are evaluated only after NULLs
        err = _any(a.err, _when(is_null(a.node), err))
    return Lowered(_coalesce_nodes(nodes, kind), err)


def _decode(lw: _Lowering, args: list[Lowered]) -> Lowered:
    value, rest = args[0], args[1:]
    pairs = [(rest[i], rest[i + 1]) for i in range(0, len(rest) - 1, 2)]
    default = rest[-1] if len(rest) % 2 else None
    results = [r.node for _, r in pairs] + ([default.node] if default else [])
    kind = _unify(results)
    v = value.node
    whens: list[tuple[Node, Node]] = []
    matches: list[tuple[Node, Lowered, Node | None, Lowered]] = []
    for search, result in pairs:
        s = search.node
        if "NULL" in (v.kind, s.kind):  # DECODE matches NULL with NULL
            matched, bad = and_(is_null(v), is_null(s)), None
        else:
            a, b, bad = lw.coerce(v, s)
            static = isinstance(bad, Const) and bad.value is True
            equal = ir.FALSE if static else ir.is_true(ir.op("cmp", "BOOL", a, b, extra=("=",)))
            matched = ir.or_(and_(is_null(v), is_null(s)), equal)
        whens.append((matched, result.node))
        matches.append((matched, search, bad, result))
    otherwise = default.node if default else NULL
    err = default.err if default else None
    for matched, search, bad, result in reversed(matches):
        step = _any(search.err, _when(and_(is_not_null(v), is_not_null(search.node)), bad))
        err = _any(step, _when(matched, result.err), _when(ir.not_(matched), err))
    return Lowered(_choose(whens, otherwise, kind), _any(value.err, err))


_SPECIAL: dict[str, Callable[[_Lowering, list[Lowered]], Lowered]] = {
    "GREATEST": _greatest("GREATEST"), "LEAST": _greatest("LEAST"),
    "TO_CHAR": _to_char, "TO_DATE": _to_date, "TO_NUMBER": _to_number,
    "HEXTORAW": _hextoraw, "RAWTOHEX": _rawtohex, "REPLACE": _replace,
    "CONCAT": lambda lw, args: lw.concat(args[0], args[1]),
    "NVL": _nvl, "NVL2": _nvl2, "COALESCE": _coalesce, "DECODE": _decode,
}
