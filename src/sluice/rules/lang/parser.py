"""Recursive-descent parser: condition text -> :mod:`sluice.rules.lang.ast` tree.

Precedence, loosest first, as in Oracle SQL::

    OR
    AND
    NOT
    = <> < <= > >=  IS [NOT] NULL  [NOT] LIKE  [NOT] IN  [NOT] BETWEEN  EXISTS
    + - ||          (binary; Oracle gives concatenation the same level)
    * /
    + -             (unary)
    . member access and calls, ( ) grouping

Parentheses are parsed once, whatever they hold: ``( ... )`` yields either a
condition or a value, and each operator then checks what it got, as Oracle does
(a bare value where a condition belongs is ORA-00920 "invalid relational
operator").  So there is no backtracking and errors point at the offending token.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Callable

from ...errors import DatabaseError, not_supported, ora
from .ast import (
    COMPARISON_OPS, And, Attribute, Between, Bind, Binary, Compare, Condition, Exists, Expr,
    FuncCall, Identifier, InList, IsNull, Like, Literal, MethodCall, Not, Or, Unary, Value, children,
)
from .lexer import Token, syntax_error, tokenize

__all__ = ["parse_condition", "parse_expression"]

_NAMES = ("IDENT", "QIDENT")
_TRIM_MODES = ("LEADING", "TRAILING", "BOTH")
_DUAL = (("DUAL",), ("SYS", "DUAL"))


# How deep a condition may nest.  The parser and every compiler walk the tree recursively:
# 100 nested parentheses (10 parser frames each) overflowed Python's stack and a chain of
# 1,000 '+' terms the compilers'; Oracle's own conditions (seed 000) nest a few levels.
MAX_NESTING = 50     # parentheses, NOT, signs, function arguments: the parser's recursion
MAX_DEPTH = 200      # the tree's depth (a chain a + b + ... nests one level per operator)


def parse_condition(text: str) -> Condition:
    """Parse a rule / dequeue condition; raise ORA-009xx with line and column, SLU-00001
    for a condition nested deeper than :data:`MAX_NESTING` / :data:`MAX_DEPTH`."""
    parser = _Parser(text)
    node = parser.condition()
    parser.finish(node, want_condition=True)
    return node  # type: ignore[return-value]


def parse_expression(text: str) -> Value:
    """Parse a value expression (``UPPER(:msg.region)``), for transformations and tests."""
    parser = _Parser(text)
    node = parser.operand()
    parser.finish(node, want_condition=False)
    return node  # type: ignore[return-value]


def _depth(node: Expr) -> int:
    """The tree's depth, walked without recursion."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        stack.extend((child, d + 1) for child in children(node))
    return deepest


class _Parser:
    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise ora(6502, f"condition must be a string, not {type(text).__name__}")
        self.tokens = tokenize(text)
        self.pos = 0
        self.nesting = 0

    # --- token helpers ----------------------------------------------------------

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.tokens[self.pos]
        if token.kind != "EOF":
            self.pos += 1
        return token

    def at_op(self, *ops: str) -> bool:
        return self.tok.kind == "OP" and self.tok.value in ops

    def at_kw(self, *words: str) -> bool:
        return self.tok.kind == "KEYWORD" and self.tok.value in words

    def error(self, code: int, token: Token | None = None, *args: object) -> DatabaseError:
        token = token or self.tok
        return syntax_error(code, token.line, token.col, *args)

    def unsupported(self, what: str, token: Token | None = None) -> DatabaseError:
        """SLU-00001 (Oracle has no code for it) with the position, like a syntax error."""
        token = token or self.tok
        err = not_supported(f"{what} at line {token.line}, column {token.col}")
        err.line, err.column = token.line, token.col  # type: ignore[attr-defined]
        return err

    def expect_op(self, op: str, code: int) -> Token:
        if not self.at_op(op):
            raise self.error(code)
        return self.take()

    def expect_kw(self, word: str, code: int) -> Token:
        if not self.at_kw(word):
            raise self.error(code)
        return self.take()

    def finish(self, node: Expr, want_condition: bool) -> None:
        if want_condition and not isinstance(node, Condition):
            raise self.error(920)  # a value where a condition belongs
        if self.tok.kind != "EOF":
            raise self.error(933)  # something follows a complete condition
        if _depth(node) > MAX_DEPTH:
            raise self.unsupported(f"a condition nested more than {MAX_DEPTH} levels deep",
                                   self.tokens[0])

    def nested(self, parse: Callable[[], Expr]) -> Expr:
        """``parse()`` one level deeper.  :raises: SLU-00001 past :data:`MAX_NESTING`."""
        if self.nesting >= MAX_NESTING:
            raise self.unsupported(f"a condition nested more than {MAX_NESTING} levels deep")
        self.nesting += 1
        try:
            return parse()
        finally:
            self.nesting -= 1

    def need_condition(self, node: Expr, at: Token) -> Condition:
        if not isinstance(node, Condition):
            raise self.error(920, at)
        return node

    # --- conditions -------------------------------------------------------------

    def condition(self) -> Expr:
        return self._junction("OR", Or, self._conjunction)

    def _conjunction(self) -> Expr:
        return self._junction("AND", And, self._negation)

    def _junction(self, word: str, cls: type[And] | type[Or], operand: Callable[[], Expr]) -> Expr:
        first = operand()
        if not self.at_kw(word):
            return first
        terms: list[Condition] = []
        node, at = first, self.tok
        while True:
            node = self.need_condition(node, at)
            # (a AND b) AND c is one conjunction: flat terms help rule indexing.
            terms.extend(node.terms if isinstance(node, cls) else (node,))
            if not self.at_kw(word):
                return cls(tuple(terms))
            self.take()
            node = operand()
            at = self.tok

    def _negation(self) -> Expr:
        if not self.at_kw("NOT"):
            return self._predicate()
        self.take()
        operand = self.nested(self._negation)
        return Not(self.need_condition(operand, self.tok))

    def _predicate(self) -> Expr:
        if self.at_kw("EXISTS"):
            return self._exists()
        left = self._additive()
        if isinstance(left, Condition):  # a parenthesised condition
            return left
        if self.at_op(*COMPARISON_OPS):
            op = self.take().value
            return Compare(op, left, self.operand())  # type: ignore[arg-type]
        negated = False
        if self.at_kw("NOT") and self.peek().kind == "KEYWORD" and self.peek().value in (
                "LIKE", "IN", "BETWEEN"):
            self.take()
            negated = True
        if self.at_kw("IS"):
            self.take()
            is_not = self.at_kw("NOT")
            if is_not:
                self.take()
            self.expect_kw("NULL", 908)
            return IsNull(left, is_not)
        if self.at_kw("LIKE"):
            self.take()
            pattern = self.operand()
            escape = None
            if self.at_kw("ESCAPE"):
                self.take()
                escape = self.operand()
            return Like(left, pattern, escape, negated)
        if self.at_kw("IN"):
            self.take()
            return InList(left, self._in_list(), negated)
        if self.at_kw("BETWEEN"):
            self.take()
            low = self.operand()
            self.expect_kw("AND", 905)
            return Between(left, low, self.operand(), negated)
        return left  # a bare value: the caller decides whether that is allowed

    def _in_list(self) -> tuple[Value, ...]:
        self.expect_op("(", 906)
        if self.at_kw("SELECT"):
            raise self.unsupported("IN (subquery) in a rule condition")
        items = [self.operand()]
        while self.at_op(","):
            self.take()
            items.append(self.operand())
        self.expect_op(")", 907)
        return tuple(items)

    def _exists(self) -> Exists:
        """``EXISTS (SELECT 1 FROM SYS.DUAL WHERE cond)`` -- the form subset rules use."""
        self.take()
        self.expect_op("(", 906)
        self.expect_kw("SELECT", 928)
        if self.at_op("*"):
            self.take()
        else:
            self.operand()  # the select list does not matter: only whether a row exists
        self.expect_kw("FROM", 923)
        table_tok = self.tok
        table = self._name_path() if self.tok.kind in _NAMES else ()
        if table not in _DUAL:
            raise self.unsupported("EXISTS over a table other than SYS.DUAL (only EXISTS "
                                   "(SELECT ... FROM SYS.DUAL WHERE ...) is)", table_tok)
        condition = None
        if self.at_kw("WHERE"):
            self.take()
            condition = self.need_condition(self.nested(self.condition), self.tok)
        self.expect_op(")", 907)
        return Exists(condition)

    # --- values -----------------------------------------------------------------

    def operand(self) -> Value:
        """A value, never a condition: ``a = (b = c)`` is refused here."""
        start = self.tok
        node = self._additive()
        if isinstance(node, Condition):
            raise self.error(936, start)
        return node  # type: ignore[return-value]

    def _additive(self) -> Expr:
        left = self._multiplicative()
        while self.at_op("+", "-", "||") and not isinstance(left, Condition):
            op = self.take().value
            left = Binary(op, left, self._value(self._multiplicative))  # type: ignore[arg-type]
        return left

    def _multiplicative(self) -> Expr:
        left = self._unary()
        while self.at_op("*", "/") and not isinstance(left, Condition):
            op = self.take().value
            left = Binary(op, left, self._value(self._unary))  # type: ignore[arg-type]
        return left

    def _value(self, parse: Callable[[], Expr]) -> Value:
        start = self.tok
        node = parse()
        if isinstance(node, Condition):
            raise self.error(936, start)
        return node

    def _unary(self) -> Expr:
        if not self.at_op("+", "-"):
            return self._primary()
        op = self.take().value
        operand = self._value(lambda: self.nested(self._unary))
        # Fold signed numeric literals so that "x = -1" compares with a constant.
        if isinstance(operand, Literal) and isinstance(operand.value, (int, Decimal)):
            v = operand.value  # copy_negate: exact (-Decimal rounds to Python's 28 digits)
            return Literal((-v if isinstance(v, int) else v.copy_negate()) if op == "-" else v)
        return Unary(op, operand)  # type: ignore[arg-type]

    def _primary(self) -> Expr:
        token = self.tok
        if token.kind == "STRING":
            self.take()
            # Oracle: a zero-length string *is* NULL, for every compiler downstream.
            return Literal(token.value or None)  # type: ignore[arg-type]
        if token.kind == "NUMBER":
            self.take()
            return Literal(token.value)  # type: ignore[arg-type]
        if token.kind == "KEYWORD" and token.value == "NULL":
            self.take()
            return Literal(None)
        if token.kind == "BIND":
            self.take()
            return self._members(Bind(token.value))  # type: ignore[arg-type]
        if token.kind in _NAMES:
            path = self._name_path()
            if not self.at_op("("):
                return Identifier(path)
            if path == ("TRIM",):
                return self._members(self.nested(self._trim))
            return self._members(FuncCall(path, self._call_args()))
        if token.kind == "OP" and token.value == "(":
            self.take()
            inner = self.nested(self.condition)
            self.expect_op(")", 907)
            return inner
        raise self.error(936)

    def _name_path(self) -> tuple[str, ...]:
        path = [self.take().value]
        while self.at_op(".") and self.peek().kind in _NAMES:
            self.take()
            path.append(self.take().value)
        if self.at_op("."):
            raise self.error(936, self.peek())
        return tuple(path)  # type: ignore[arg-type]

    def _members(self, node: Value) -> Value:
        """``.attr`` and ``.method(args)`` after a variable or a call result."""
        while self.at_op("."):
            self.take()
            name = self.tok
            if name.kind not in _NAMES:
                raise self.error(936)
            self.take()
            if self.at_op("("):
                node = MethodCall(node, name.value, name.spelled, self._call_args())  # type: ignore[arg-type]
            else:
                node = Attribute(node, name.value, name.spelled)  # type: ignore[arg-type]
        return node

    def _call_args(self) -> tuple[Value, ...]:
        self.expect_op("(", 906)
        if self.at_op(")"):
            self.take()
            return ()
        args = [self.nested(self.operand)]
        while self.at_op(","):
            self.take()
            args.append(self.nested(self.operand))
        self.expect_op(")", 907)
        return tuple(args)

    def _trim(self) -> Value:
        """``TRIM([LEADING|TRAILING|BOTH] [c] FROM s)``, desugared to LTRIM/RTRIM.

        The plain form ``TRIM(s)`` stays a TRIM call; the keyword form becomes
        LTRIM/RTRIM so that no compiler has to know about this one odd syntax.
        """
        self.expect_op("(", 906)
        mode = None
        if self.tok.kind == "IDENT" and self.tok.value in _TRIM_MODES and self.peek().kind != "OP":
            mode = self.take().value
        chars: Value | None = None
        if mode and self.at_kw("FROM"):
            self.take()
            source = self.operand()
        else:
            first = self.operand()
            if self.at_kw("FROM"):
                self.take()
                chars, source = first, self.operand()
            elif mode:
                raise self.error(905)
            else:
                source = first
        self.expect_op(")", 907)
        if mode is None and chars is None:
            return FuncCall(("TRIM",), (source,))
        chars = chars or Literal(" ")
        if mode == "LEADING":
            return FuncCall(("LTRIM",), (source, chars))
        if mode == "TRAILING":
            return FuncCall(("RTRIM",), (source, chars))
        return FuncCall(("RTRIM",), (FuncCall(("LTRIM",), (source, chars)), chars))
