"""The typed intermediate form between a rule tree and the non-Python targets.

The Python compiler runs on Python values whose types are known only at run
time; SQL and Spark need every expression's datatype up front.  :mod:`lower`
turns a condition tree into this small form, once, with Oracle's conversions
made explicit; each target (:mod:`sluice.rules.compile.sql.compiler`,
:mod:`sluice.rules.compile.spark.compiler`) only *renders* it.  So the rules of Oracle
semantics live in one place and a target is a table of spellings.

Nodes carry a *kind* -- the Oracle datatype family:

``NUMBER CHAR DATE RAW``  values;  ``BOOL``  a condition (TRUE/FALSE/UNKNOWN);
``NULL``  a value that is always NULL and has no type (the literal NULL);
``ANYDATA``  an LCR column value before ``.AccessNumber()`` & co (an
``anydata`` op; only ``IS [NOT] NULL`` reads it);  ``MAP``  a column of
column-name -> text pairs (an LCR's old/new values);  ``MIXED``  an ``alt`` op,
a choice between values of different kinds (``NVL(text, number)``: Python's
result type depends on the row) that only comparisons and IS NULL consume.

A target renders ``Const`` as a bound parameter or literal, ``Column`` as a
column reference, ``Native`` as whatever a resolver handed in (pre-rendered in
that target's terms), and ``Op(op, ...)`` through its method ``op_<op>``.  An op
a target lacks raises :class:`NotCompilable`, and the caller falls back to the
Python compiler.  The op vocabulary and what each op means is documented in
:data:`OPS`; every op is NULL-propagating (strict) unless that entry says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = [
    "NotCompilable", "Node", "Const", "Column", "Native", "Op", "OPS", "KINDS",
    "TRUE", "FALSE", "UNKNOWN", "const", "op", "and_", "or_", "not_", "is_null", "is_not_null",
    "is_true", "case", "Renderer",
]

KINDS = ("NUMBER", "CHAR", "DATE", "RAW", "BOOL", "NULL", "ANYDATA", "MAP", "MIXED")


class NotCompilable(Exception):
    """A condition (or part of one) this target cannot express exactly.

    Not a :class:`sluice.Error`: it never reaches users.  Callers catch it and
    evaluate the condition with the Python compiler instead.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Node:
    kind: str


@dataclass(frozen=True, slots=True)
class Const(Node):
    """A constant; ``value`` is a Python value in the engine's conventions (None is NULL)."""

    value: Any


@dataclass(frozen=True, slots=True)
class Column(Node):
    """A column of the row being evaluated.

    ``clean`` says the column never holds '' (the writer normalised it), so the
    '' -> NULL rule needs no NULLIF around it.
    """

    name: str
    clean: bool = False


@dataclass(frozen=True, slots=True)
class Native(Node):
    """An expression a resolver built directly in the target's terms."""

    handle: Any


@dataclass(frozen=True, slots=True)
class Op(Node):
    op: str
    args: tuple[Node, ...] = ()
    extra: tuple[Any, ...] = ()  # compile-time parameters (a LIKE pattern, a JSON key...)


# op -> meaning.  A target implements ``op_<name>(node)``.
OPS = {
    # logic; never NULL where marked "two-valued"
    "and": "3-valued AND of args", "or": "3-valued OR of args", "not": "3-valued NOT",
    "is_null": "two-valued", "is_true": "two-valued: arg IS TRUE",
    "cmp": "extra=(operator,); both args of one kind (ordering of CHAR is by code point)",
    "case": "args = when1, then1, when2, then2, ..., else; NOT strict",
    "alt": "like case, values of several kinds; lowered away by comparisons, never rendered",
    "coalesce": "first non-NULL arg; NOT strict", "nullif_empty": "'' (CHAR) or empty RAW -> NULL",
    "like": "extra=(pattern, escape or None), already validated; arg is CHAR",
    "like_dyn": "args = value, pattern[, escape]: Oracle LIKE with run-time pattern",
    "like_bad": "args = pattern, escape: TRUE when Oracle raises ORA-01424/01425",
    # conversions; *_bad ops are two-valued for a non-NULL argument
    "num_of_char": "TO_NUMBER(text), NULL for text that is not a number",
    "num_bad": "the text is not a number (ORA-01722)",
    "char_of_num": "Oracle's TO_CHAR(n): no exponent, no trailing zeros, '.5'",
    "char_of_date": "TO_CHAR(d) with NLS_DATE_FORMAT DD-MON-RR",
    "char_of_raw": "RAWTOHEX(r), upper-case hex",
    "raw_of_char": "HEXTORAW(text), NULL for bad hex", "raw_bad": "not hex (ORA-01465)",
    "date_of_char": "TO_DATE(text[, fmt const]) as Python parses it", "date_bad": "ORA-01861",
    "date_of_iso": "a DATE from ISO text this system wrote (LCR values): never bad",
    "anydata": "an LCR column value: args = carried (BOOL), text; only IS NULL reads it",
    # arithmetic on NUMBER (div by zero gives NULL: the error is tracked separately)
    "add": "", "sub": "", "mul": "", "div": "", "neg": "",
    "date_add": "DATE + n days (n may be fractional)", "date_diff": "DATE - DATE in days",
    "concat": "text || text, args never NULL",
    "now": "extra=(SYSDATE or SYSTIMESTAMP,): the local wall clock; SYSDATE in whole seconds",
    # Oracle built-ins with arguments already converted to what Oracle converts them to;
    # extra = (NAME,).  Targets implement fn_<NAME>.
    "fn": "an Oracle built-in function",
    # LCR / payload access
    "map_get": "extra=(key,): the text stored under key, NULL when absent",
    "map_has": "extra=(key,): two-valued, key present (even with a NULL value)",
    "json_get": "extra=(path tuple,): a JSON document's scalar at path, as text",
}


def const(value: Any, kind: str) -> Const:
    return Const(kind, value)


TRUE = Const("BOOL", True)
FALSE = Const("BOOL", False)
UNKNOWN = Const("BOOL", None)


def op(name: str, kind: str, *args: Node, extra: tuple[Any, ...] = ()) -> Op:
    return Op(kind, name, tuple(args), extra)


def _is(node: Node | None, value: Any) -> bool:
    return isinstance(node, Const) and node.value is value


def and_(*terms: Node) -> Node:
    """3-valued AND, folding constants (TRUE terms vanish, one FALSE decides)."""
    out: list[Node] = []
    for t in terms:
        if _is(t, True):
            continue
        if _is(t, False):
            return FALSE
        out.extend(x for x in (t.args if isinstance(t, Op) and t.op == "and" else (t,)) if x not in out)
    if not out:
        return TRUE
    return out[0] if len(out) == 1 else Op("BOOL", "and", tuple(out))


def or_(*terms: Node) -> Node:
    out: list[Node] = []
    for t in terms:
        if _is(t, False):
            continue
        if _is(t, True):
            return TRUE
        out.extend(x for x in (t.args if isinstance(t, Op) and t.op == "or" else (t,)) if x not in out)
    if not out:
        return FALSE
    return out[0] if len(out) == 1 else Op("BOOL", "or", tuple(out))


def not_(term: Node) -> Node:
    if isinstance(term, Const):
        return term if term.value is None else Const("BOOL", not term.value)
    if isinstance(term, Op) and term.op == "not":
        return term.args[0]
    return Op("BOOL", "not", (term,))


def is_null(value: Node) -> Node:
    """Two-valued ``value IS NULL``."""
    if isinstance(value, Const):
        return Const("BOOL", value.value is None)
    if isinstance(value, Op) and value.op == "alt":  # results of several datatypes
        *whens, otherwise = value.args
        pairs = [(whens[i], is_null(whens[i + 1])) for i in range(0, len(whens), 2)]
        return case(pairs, is_null(otherwise), "BOOL")
    if isinstance(value, Op) and value.op == "anydata":
        # an LCR column value (args: carried?, text) is NULL when the LCR does not carry it
        return not_(value.args[0])
    return Op("BOOL", "is_null", (value,))


def is_not_null(value: Node) -> Node:
    return not_(is_null(value))


def is_true(cond: Node) -> Node:
    """Two-valued ``cond IS TRUE``."""
    if isinstance(cond, Const):
        return Const("BOOL", cond.value is True)
    if isinstance(cond, Op) and cond.op in ("is_null", "is_true", "map_has"):
        return cond  # already two-valued
    return Op("BOOL", "is_true", (cond,))


def case(whens: list[tuple[Node, Node]], otherwise: Node, kind: str) -> Node:
    """CASE WHEN c1 THEN v1 ... ELSE otherwise END, dropping constant-FALSE branches."""
    args: list[Node] = []
    for cond, value in whens:
        if _is(cond, True):
            if not args:
                return value
            otherwise = value
            break
        if isinstance(cond, Const):  # FALSE or NULL: the branch never runs
            continue
        args += [cond, value]
    if not args:
        return otherwise
    return Op(kind, "case", tuple(args) + (otherwise,))


# -- what lowering produces (:mod:`lower`, :mod:`lowerfns`) ---------------------

NULL = Const("NULL", None)


class Lowered(NamedTuple):
    node: Node
    err: Node | None  # two-valued: TRUE when Python would raise evaluating this


def _any(*errs: Node | None) -> Node | None:
    """The error flag of a node that fails when any of ``errs`` does."""
    present = [e for e in errs if e is not None]
    return or_(*present) if present else None


def _when(guard: Node, err: Node | None) -> Node | None:
    """The error flag ``err``, raised only where ``guard`` holds."""
    return None if err is None else and_(guard, err)


class Renderer:
    """Base of every target: dispatch on node type and op name."""

    target = "?"

    def render(self, node: Node) -> Any:
        if isinstance(node, Const):
            return self.const(node)
        if isinstance(node, Column):
            return self.column(node)
        if isinstance(node, Native):
            return node.handle
        assert isinstance(node, Op)
        if node.op == "fn":  # a target spells each built-in, or handles them all in op_fn
            method = getattr(self, "fn_" + node.extra[0], None) or getattr(self, "op_fn", None)
        else:
            method = getattr(self, "op_" + node.op, None)
        if method is None:
            what = node.extra[0] if node.op == "fn" else node.op
            raise NotCompilable(f"{what} has no {self.target} equivalent")
        return method(node)

    def const(self, node: Const) -> Any:
        raise NotImplementedError

    def column(self, node: Column) -> Any:
        raise NotImplementedError
