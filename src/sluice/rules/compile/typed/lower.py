"""Lower a condition tree to the typed IR (:mod:`ir`) with Oracle's semantics spelled out.

The Python compiler (:mod:`sluice.rules.compile.python`) is the reference; this module makes a
statically typed target compute *exactly* what it computes:

* every datatype is known at compile time (the resolver says what each name
  is), so Oracle's implicit conversions become explicit ops: comparing NUMBER
  with CHAR converts the CHAR side, ``||`` converts to text, and so on;
* ``''`` is NULL: text columns pass through ``nullif_empty``;
* constant sub-trees are evaluated here, by the Python compiler itself, so
  ``0.1 + 0.2 = 0.3`` or ``TO_DATE('2024-01-15', 'YYYY-MM-DD')`` cannot drift;
* **errors**: where Python raises during evaluation (ORA-01722 for
  ``'abc' = 1``, ORA-01476, ORA-00932 ...) a rule set treats the rule as NULL.
  SQL and Spark must never abort, so each lowered value carries an *error
  flag*: a two-valued condition that is TRUE exactly when the Python closures
  would raise, following their evaluation order (``AND`` stops at FALSE, ``=``
  does not evaluate its right side when the left is NULL, ...).  The finished
  condition is ``CASE WHEN error THEN NULL ELSE condition END``, so all targets
  return NULL where Python raises.  The flag is absent (no cost) for conditions
  that cannot fail, which is nearly all of them.

What cannot be matched exactly raises :class:`ir.NotCompilable`: a member call
the resolver does not map, a built-in whose result datatype Python decides at
run time (``NVL(a, b)`` with a and b of different datatypes), a run-time
format model.  Compile-time errors are the Python compiler's: ORA-00904 for an
unknown name, ORA-00938/00939 for argument counts, ORA-01424/01425 for a bad
constant LIKE pattern.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable, Protocol

from ....errors import DatabaseError, ora
from ....sqlfunctions import (FUNCTIONS, NILADIC, hextoraw, like_regex, null_if_empty, to_char,
                              to_date, to_number)
from ...lang.ast import (
    And, Attribute, Between, Bind, Binary, Compare, Condition, Exists, Expr, FuncCall,
    Identifier, InList, IsNull, Like, Literal, MethodCall, Not, Or, Unary, Value, children,
)
from ..python import compile_expression
from . import ir
from .ir import (NULL, Const, Lowered, Node, _any, _when, and_, case, is_not_null, is_null, not_,
                 or_)
from .lowerfns import lower_function

__all__ = ["TargetResolver", "lower_condition", "Lowered", "const_of", "NULL"]


class TargetResolver(Protocol):
    """How a non-Python target reads names."""

    def reference(self, node: Value) -> Node | tuple[Node, Node | None]:
        """IR for an ``Identifier``, ``Bind``, ``Attribute`` or ``MethodCall`` chain.

        A resolver whose reads can fail as the Python object's would (a typed
        ANYDATA access of the wrong type is ORA-22626) returns ``(node, error)``,
        the error a two-valued condition on the row.

        :raises DatabaseError: ORA-00904 for a name that does not exist.
        :raises ir.NotCompilable: for a name the target cannot read.
        """


def lower_condition(tree: Expr, resolver: TargetResolver) -> Node:
    """The IR of a condition, error flag folded in: NULL wherever Python raises."""
    if not isinstance(tree, Condition):
        raise ora(920)
    node, err = _Lowering(resolver).cond(tree)
    return node if err is None else case([(err, ir.UNKNOWN)], node, "BOOL")


def const_of(value: Any) -> Const:
    """An engine value as a typed constant ('' -> NULL, date -> datetime)."""
    value = null_if_empty(value)
    if value is None:
        return Const("NULL", None)
    if isinstance(value, bool):
        return Const("NUMBER", int(value))
    if isinstance(value, (int, float, Decimal)):
        return Const("NUMBER", value)
    if isinstance(value, str):
        return Const("CHAR", value)
    if isinstance(value, (date, datetime)):
        return Const("DATE", to_date(value))
    if isinstance(value, (bytes, bytearray)):
        return Const("RAW", bytes(value))
    raise ir.NotCompilable(f"a {type(value).__name__} constant")


_EMPTY = Const("CHAR", "")
# the DATE range of Python's datetime: DATE arithmetic outside it is ORA-01841
_FIRST_DATE, _LAST_DATE = Const("DATE", datetime.min), Const("DATE", datetime.max)


def _static(err: Node | None) -> bool:
    return isinstance(err, Const) and err.value is True


class _NoNames:
    """Constant folding never reads names; reaching here is a bug."""

    def identifier(self, path):  # pragma: no cover - guarded by _constant
        raise AssertionError(path)

    bind = identifier


class _Lowering:
    def __init__(self, resolver: TargetResolver) -> None:
        self.resolver = resolver
        self._constants: dict[int, bool] = {}

    # --- constant folding: the Python compiler evaluates what needs no row -------

    def _constant(self, node: Expr) -> bool:
        known = self._constants.get(id(node))
        if known is not None:
            return known
        if isinstance(node, (Identifier, Bind, Attribute, MethodCall)):
            result = False
        elif isinstance(node, FuncCall):
            result = (node.qualified in FUNCTIONS and node.qualified not in NILADIC
                      and all(self._constant(a) for a in node.args))
        else:
            result = all(self._constant(c) for c in children(node))
        self._constants[id(node)] = result
        return result

    def _fold(self, node: Expr) -> Lowered:
        evaluate = compile_expression(node, _NoNames())  # compile-time errors raise, as in Python
        try:
            value = evaluate(None)
        except DatabaseError:
            return Lowered(ir.UNKNOWN if isinstance(node, Condition) else NULL, ir.TRUE)
        if isinstance(node, Condition):
            return Lowered(Const("BOOL", value), None)
        return Lowered(const_of(value), None)

    # --- conversions: (node, bad) where bad is TRUE when Oracle raises ----------

    def num(self, n: Node) -> tuple[Node, Node | None]:
        if n.kind in ("NUMBER", "NULL"):
            return n, None
        if n.kind == "CHAR":
            if isinstance(n, Const):
                try:
                    return Const("NUMBER", to_number(n.value)), None
                except DatabaseError:
                    return NULL, ir.TRUE
            return ir.op("num_of_char", "NUMBER", n), ir.op("num_bad", "BOOL", n)
        if n.kind in ("DATE", "RAW"):
            return NULL, ir.TRUE  # ORA-00932
        raise ir.NotCompilable(f"{n.kind} used as a number")

    def char(self, n: Node) -> Node:
        if n.kind in ("CHAR", "NULL"):
            return n
        if isinstance(n, Const):
            return const_of(to_char(n.value))
        if n.kind == "NUMBER":
            return ir.op("char_of_num", "CHAR", n)
        if n.kind == "DATE":
            return ir.op("char_of_date", "CHAR", n)
        if n.kind == "RAW":
            return ir.op("char_of_raw", "CHAR", n)
        raise ir.NotCompilable(f"{n.kind} used as text")

    def _from_char(self, n: Node, kind: str, convert: Callable[[Any], Any], op: str,
                   bad: str, extra: tuple = ()) -> tuple[Node, Node | None]:
        if n.kind in (kind, "NULL"):
            return n, None
        if n.kind != "CHAR":
            return NULL, ir.TRUE  # ORA-00932
        if isinstance(n, Const):
            try:
                return const_of(convert(n.value, *extra)), None
            except DatabaseError:
                return NULL, ir.TRUE
        return (ir.op(op, kind, n, extra=extra), ir.op(bad, "BOOL", n, extra=extra))

    def date(self, n: Node, fmt: tuple = ()) -> tuple[Node, Node | None]:
        return self._from_char(n, "DATE", to_date, "date_of_char", "date_bad", fmt)

    def raw(self, n: Node) -> tuple[Node, Node | None]:
        return self._from_char(n, "RAW", hextoraw, "raw_of_char", "raw_bad")

    def coerce(self, a: Node, b: Node) -> tuple[Node, Node, Node | None]:
        """sqlfunctions.coerce_pair: the CHAR side converts to the other side's datatype."""
        if "MIXED" in (a.kind, b.kind):  # Python converts per row: DECODE(NVL(s, 5), 'abc', 1)
            raise ir.NotCompilable("a value whose datatype depends on the row")
        if a.kind == b.kind or "NULL" in (a.kind, b.kind):
            if a.kind in ("ANYDATA", "MAP", "BOOL"):
                raise ir.NotCompilable(f"comparing {a.kind} values")
            return a, b, None
        convert = {"NUMBER": self.num, "DATE": self.date, "RAW": self.raw}
        if b.kind == "CHAR" and a.kind in convert:
            b, bad = convert[a.kind](b)
            return a, b, bad
        if a.kind == "CHAR" and b.kind in convert:
            a, bad = convert[b.kind](a)
            return a, b, bad
        if {a.kind, b.kind} & {"ANYDATA", "MAP", "BOOL"}:
            raise ir.NotCompilable(f"comparing {a.kind} with {b.kind}")
        return a, b, ir.TRUE  # ORA-00932 inconsistent datatypes

    # --- values --------------------------------------------------------------------

    def value(self, node: Expr) -> Lowered:
        if self._constant(node):
            return self._fold(node)
        match node:
            case Identifier((name,)) if name in NILADIC:
                return Lowered(ir.op("now", "DATE", extra=(name,)), None)
            case Identifier() | Bind() | Attribute() | MethodCall():
                return self.reference(node)
            case FuncCall():
                return lower_function(self, node)
            case Unary("+", operand):
                return self.value(operand)  # Python's unary plus converts nothing
            case Unary(_, operand):
                v = self.value(operand)
                n, bad = self.num(v.node)
                return self.strict([v], ir.op("neg", "NUMBER", n), bad)
            case Binary("||", left, right):
                return self.concat(self.value(left), self.value(right))
            case Binary(op, left, right):
                return self.arithmetic(op, self.value(left), self.value(right))
        raise ora(936)

    def reference(self, node: Value) -> Lowered:
        found = self.resolver.reference(node)
        n, err = found if isinstance(found, tuple) else (found, None)
        if isinstance(n, Const):
            n = const_of(n.value) if n.kind != "BOOL" else n
        elif n.kind == "NULL":
            n = NULL
        elif n.kind in ("CHAR", "RAW") and not (isinstance(n, ir.Column) and n.clean) and not (
                isinstance(n, ir.Op) and n.op == "nullif_empty"):
            n = ir.op("nullif_empty", n.kind, n)  # Oracle: '' is NULL
        return Lowered(n, err)

    def strict(self, args: list[Lowered], node: Node, bad: Node | None) -> Lowered:
        """A NULL-propagating computation: it can fail only when no argument is NULL."""
        err = _any(*(a.err for a in args))
        # a typed NULL constant too: DECODE(d1, ' ', 1) is Const("NUMBER", None), which
        # renderers reading a constant argument (INSTR's occurrence, ROUND's places) cannot take
        if any(a.node.kind == "NULL" or (isinstance(a.node, Const) and a.node.value is None) for a in args):
            return Lowered(NULL, err)
        guard = and_(*(is_not_null(a.node) for a in args))
        return Lowered(NULL if _static(bad) else node, _any(err, _when(guard, bad)))

    def concat(self, left: Lowered, right: Lowered) -> Lowered:
        # NULL || 'a' = 'a': concatenation ignores NULLs and never fails
        parts = [_EMPTY if x.node.kind == "NULL" else ir.op("coalesce", "CHAR", self.char(x.node), _EMPTY)
                 for x in (left, right)]
        node = ir.op("nullif_empty", "CHAR", ir.op("concat", "CHAR", *parts))
        return Lowered(node, _any(left.err, right.err))

    def arithmetic(self, op: str, left: Lowered, right: Lowered) -> Lowered:
        a, b = left.node, right.node
        if "DATE" in (a.kind, b.kind):
            node, bad = self._date_arithmetic(op, a, b)
            return self.strict([left, right], node, bad)
        a2, bad_a = self.num(a)
        b2, bad_b = self.num(b)
        bad = _any(bad_a, bad_b)
        if op == "/" and not _static(bad):
            bad = _any(bad, ir.is_true(ir.op("cmp", "BOOL", b2, Const("NUMBER", 0), extra=("=",))))
        name = {"+": "add", "-": "sub", "*": "mul", "/": "div"}[op]
        return self.strict([left, right], ir.op(name, "NUMBER", a2, b2), bad)

    def _date_arithmetic(self, op: str, a: Node, b: Node) -> tuple[Node, Node | None]:
        """DATE + n, n + DATE, DATE - n (days), DATE - DATE (a NUMBER of days)."""
        if op == "-" and a.kind == b.kind == "DATE":
            return ir.op("date_diff", "NUMBER", a, b), None
        if op == "+" and b.kind == "DATE" and a.kind != "DATE":
            a, b = b, a
        if op in "+-" and a.kind == "DATE" and b.kind != "DATE":
            days, bad = self.num(b)
            if op == "-":
                days = ir.op("neg", "NUMBER", days)
            if days.kind == "NUMBER":
                # a date past 9999-12-31 (or before year 1) is ORA-01841 in Python; a target
                # must not compute one (PostgreSQL reaches year 294276) nor abort the query
                past = ir.op("cmp", "BOOL", days, ir.op("date_diff", "NUMBER", _LAST_DATE, a), extra=(">",))
                before = ir.op("cmp", "BOOL", days, ir.op("date_diff", "NUMBER", _FIRST_DATE, a), extra=("<",))
                bad = _any(bad, ir.is_true(or_(past, before)))
            return ir.op("date_add", "DATE", a, days), bad
        return NULL, ir.TRUE  # ORA-00932

    # --- conditions ------------------------------------------------------------------

    def cond(self, node: Expr) -> Lowered:
        if self._constant(node):
            return self._fold(node)
        match node:
            case Compare(op, left, right):
                return self.compare(op, self.value(left), self.value(right))
            case And(terms):
                return self._junction([self.cond(t) for t in terms], and_, stop=False)
            case Or(terms):
                return self._junction([self.cond(t) for t in terms], or_, stop=True)
            case Not(operand):
                inner = self.cond(operand)
                return Lowered(not_(inner.node), inner.err)
            case IsNull(operand, negated):
                v = self.value(operand)
                test = is_null(v.node)
                return Lowered(not_(test) if negated else test, v.err)
            case Like():
                result = self.like(node)
                return Lowered(not_(result.node), result.err) if node.negated else result
            case InList(operand, items, negated):
                result = self.in_list(self.value(operand), [self.value(i) for i in items])
                return Lowered(not_(result.node), result.err) if negated else result
            case Between(operand, low, high, negated):
                v, lo, hi = self.value(operand), self.value(low), self.value(high)
                ge = self.compare(">=", v, lo, eager=True)
                le = self.compare("<=", Lowered(v.node, None), hi, eager=True)  # v.err counted once
                result = Lowered(and_(ge.node, le.node), _any(ge.err, le.err))
                return Lowered(not_(result.node), result.err) if negated else result
            case Exists(inner):
                body = self.cond(inner)  # Exists(None) is constant, folded above
                return Lowered(ir.is_true(body.node), body.err)
        raise ora(920)

    def compare(self, op: str, left: Lowered, right: Lowered, eager: bool = False) -> Lowered:
        """``left op right``.  ``=`` etc. skip the right side when the left is NULL;
        BETWEEN and IN evaluate both sides first (``eager``), as pycompile does."""
        a, b = left.node, right.node
        if "MIXED" in (a.kind, b.kind):
            return self._split_compare(op, left, right, eager)
        a2, b2, bad = self.coerce(a, b)
        if "NULL" in (a2.kind, b2.kind) or _static(bad):
            node: Node = ir.UNKNOWN
        else:
            node = ir.op("cmp", "BOOL", a2, b2, extra=(op,))
        both = and_(is_not_null(a), is_not_null(b))
        if eager:
            err = _any(left.err, right.err, _when(both, bad))
        else:
            err = _any(left.err, _when(is_not_null(a), _any(right.err, _when(is_not_null(b), bad))))
        return Lowered(node, err)

    def _split_compare(self, op: str, left: Lowered, right: Lowered, eager: bool) -> Lowered:
        """Compare with a value whose datatype depends on the row (``NVL(text, 5)``): compare
        each possible value under the condition that picks it, as Python would."""
        mixed_left = left.node.kind == "MIXED"
        *whens, otherwise = (left if mixed_left else right).node.args
        branches = [(whens[i], whens[i + 1]) for i in range(0, len(whens), 2)] + [(ir.TRUE, otherwise)]
        nodes: list[tuple[Node, Node]] = []
        errs: list[Node | None] = []
        before: list[Node] = []  # a branch applies when no earlier one did
        for guard, value in branches:
            side = Lowered(value, (left if mixed_left else right).err)
            sub = self.compare(op, side, right, eager) if mixed_left else self.compare(op, left, side, eager)
            nodes.append((guard, sub.node))
            errs.append(_when(and_(guard, *(not_(g) for g in before)), sub.err))
            before.append(guard)
        return Lowered(case(nodes[:-1], nodes[-1][1], "BOOL"), _any(*errs))

    def _junction(self, terms: list[Lowered], combine: Callable[..., Node], stop: bool) -> Lowered:
        """AND / OR: Python stops at the first FALSE (AND) or TRUE (OR) term, so a later
        term's error only counts when every earlier term let evaluation go on."""
        err: Node | None = None
        for term in reversed(terms):
            if err is not None:  # AND goes on past TRUE or NULL, OR past FALSE or NULL
                go_on = not_(ir.is_true(term.node)) if stop else or_(is_null(term.node), ir.is_true(term.node))
                err = _when(go_on, err)
            err = _any(term.err, err)
        return Lowered(combine(*(t.node for t in terms)), err)

    def in_list(self, v: Lowered, items: list[Lowered]) -> Lowered:
        """x IN (a, b): x = a OR x = b; stops at the first TRUE, errors on the way count."""
        if v.node.kind == "NULL":
            return Lowered(ir.UNKNOWN, v.err)  # Python returns before evaluating the items
        results = [self.compare("=", Lowered(v.node, None), item, eager=True) for item in items]
        chain: Node | None = None
        for result in reversed(results):
            if chain is not None:
                chain = _when(not_(ir.is_true(result.node)), chain)
            chain = _any(result.err, chain)
        # the item errors are already guarded by "both sides not NULL"; v.err by nothing
        err = _any(v.err, _when(is_not_null(v.node), chain))
        return Lowered(or_(*(r.node for r in results)), err)

    def like(self, node: Like) -> Lowered:
        v = self.value(node.operand)
        text = self.char(v.node)
        if isinstance(node.pattern, Literal) and (node.escape is None or isinstance(node.escape, Literal)):
            pattern = node.pattern.value
            escape = node.escape.value if node.escape is not None else None
            if pattern is None or (node.escape is not None and escape is None):
                return Lowered(ir.UNKNOWN, None)  # Python never evaluates the operand here
            pattern, escape = to_char(pattern), to_char(escape)
            like_regex(pattern, escape)  # ORA-01424 / ORA-01425 now, as in Python
            if text.kind == "NULL":
                return Lowered(ir.UNKNOWN, v.err)
            return Lowered(ir.op("like", "BOOL", text, extra=(pattern, escape)), v.err)
        p = self.value(node.pattern)
        args = [v, p]
        pattern = self.char(p.node)
        nodes = [text, pattern]
        if node.escape is not None:
            e = self.value(node.escape)
            args.append(e)
            nodes.append(self.char(e.node))
        bad = None
        if node.escape is not None:
            escape = nodes[2]
            if isinstance(escape, Const) and escape.value is not None and len(escape.value) != 1:
                bad = ir.TRUE  # ORA-01425, whatever the pattern
            else:
                bad = ir.op("like_bad", "BOOL", pattern, escape)
        return self.strict(args, ir.op("like_dyn", "BOOL", *nodes), bad)
