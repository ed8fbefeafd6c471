"""Token stream helpers and the expression grammar, shared by blocks and type DDL.

Precedence, loosest first, as in PL/SQL::

    OR < AND < NOT < comparison / IS NULL / LIKE / BETWEEN / IN
       < + - || < * / MOD < ** < unary + -
"""

from __future__ import annotations

from .errs import pls_error, unexpected
from .lexer import BIND, EOF, IDENT, NUMBER, STRING, Token
from .nodes import Arg, Binary, Literal, Name, Predicate, Seg, Unary
from .staticsql import cursor_attribute

# Words that end an expression or start a statement; they never begin an operand.
RESERVED = frozenset("""
    AND OR NOT IS IN LIKE BETWEEN ESCAPE THEN ELSE ELSIF END LOOP WHEN BEGIN DECLARE
    EXCEPTION IF FOR WHILE DEFAULT CONSTANT REVERSE OF AS USING INTO
""".split())

EXPR_START = ("(", "-", "+", "case", "mod", "new", "not", "null", "<an identifier>",
              "<a double-quoted delimited-identifier>", "<a bind variable>", "<a number>",
              "<a single-quoted SQL string>")
_COMPARE = ("=", "<>", "!=", "^=", "~=", "<", "<=", ">", ">=")
# Extra words a datatype may carry after its name: TIMESTAMP WITH LOCAL TIME ZONE,
# INTERVAL DAY TO SECOND, LONG RAW, DOUBLE PRECISION, CHARACTER VARYING.
_TYPE_WORDS = frozenset("WITH LOCAL TIME ZONE TO DAY SECOND YEAR MONTH RAW PRECISION VARYING".split())


class TokenStream:
    def __init__(self, tokens: list[Token]) -> None:
        self.toks = tokens
        self.pos = 0

    # -- navigation
    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.toks[min(self.pos + ahead, len(self.toks) - 1)]

    def advance(self) -> Token:
        tok = self.toks[self.pos]
        if tok.kind != EOF:
            self.pos += 1
        return tok

    def accept_op(self, *ops: str) -> Token | None:
        return self.advance() if self.tok.is_op(*ops) else None

    def accept_word(self, *words: str) -> Token | None:
        return self.advance() if self.tok.is_word(*words) else None

    def expect_op(self, op: str, *also: str) -> Token:
        if not self.tok.is_op(op):
            raise unexpected(self.tok, (op, *also))
        return self.advance()

    def expect_word(self, word: str, *also: str) -> Token:
        if not self.tok.is_word(word):
            raise unexpected(self.tok, (word.lower(), *also))
        return self.advance()

    def ident(self, *expected: str) -> Token:
        if self.tok.kind != IDENT:
            raise unexpected(self.tok, expected or ("<an identifier>",
                                                    "<a double-quoted delimited-identifier>"))
        return self.advance()

    # -- expressions
    def expr(self):
        left = self._and()
        while (op := self.accept_word("OR")):
            left = Binary("OR", left, self._and(), op)
        return left

    def _and(self):
        left = self._not()
        while (op := self.accept_word("AND")):
            left = Binary("AND", left, self._not(), op)
        return left

    def _not(self):
        if (op := self.accept_word("NOT")):
            return Unary("NOT", self._not(), op)
        return self._comparison()

    def _comparison(self):
        left = self._additive()
        tok = self.tok
        if tok.is_op(*_COMPARE):
            self.advance()
            op = "<>" if tok.value in ("!=", "^=", "~=") else tok.value
            return Binary(op, left, self._additive(), tok)
        if self.accept_word("IS"):
            negated = bool(self.accept_word("NOT"))
            if self.accept_word("EMPTY"):             # a nested table's (composites.py)
                return Predicate("EMPTY", left, [], negated, tok)
            self.expect_word("NULL", "not")
            return Predicate("NULL", left, [], negated, tok)
        negated = False
        if tok.is_word("NOT") and self.peek().is_word("LIKE", "BETWEEN", "IN", "MEMBER"):
            self.advance()
            negated = True
        if self.accept_word("MEMBER"):                # x [NOT] MEMBER [OF] nested_table
            self.accept_word("OF")
            return Predicate("MEMBER", left, [self._additive()], negated, tok)
        if self.accept_word("LIKE"):
            operands = [self._additive()]
            if self.accept_word("ESCAPE"):
                operands.append(self._additive())
            return Predicate("LIKE", left, operands, negated, tok)
        if self.accept_word("BETWEEN"):
            low = self._additive()
            self.expect_word("AND")
            return Predicate("BETWEEN", left, [low, self._additive()], negated, tok)
        if self.accept_word("IN"):
            self.expect_op("(")
            items = [self.expr()]
            while self.accept_op(","):
                items.append(self.expr())
            self.expect_op(")", ",")
            return Predicate("IN", left, items, negated, tok)
        return left

    def _additive(self):
        left = self._multiplicative()
        while (op := self.accept_op("+", "-", "||")):
            left = Binary(op.value, left, self._multiplicative(), op)
        return left

    def _multiplicative(self):
        left = self._power()
        while (op := self.accept_op("*", "/") or self.accept_word("MOD")):
            left = Binary(op.value, left, self._power(), op)
        return left

    def _power(self):
        base = self._unary()
        if (op := self.accept_op("**")):
            return Binary("**", base, self._unary(), op)
        return base

    def _unary(self):
        if (op := self.accept_op("-", "+")):
            return Unary(op.value, self._unary(), op)
        return self._primary()

    def _primary(self):
        tok = self.tok
        if tok.kind == NUMBER:
            self.advance()
            is_int = not any(c in tok.value for c in ".eE")
            return Literal(int(tok.value) if is_int else float(tok.value), tok)
        if tok.kind == STRING:
            self.advance()
            return Literal(tok.value if tok.value != "" else None, tok)   # '' is NULL
        if tok.is_word("NULL", "TRUE", "FALSE"):
            self.advance()
            return Literal({"NULL": None, "TRUE": True, "FALSE": False}[tok.value], tok)
        if tok.is_op("("):
            self.advance()
            inner = self.expr()
            self.expect_op(")", ".", "(", "*", "%", "&", "-", "+", "/", "<", ">", "||")
            return inner
        if tok.kind == BIND:
            return self.name(bind=True)
        if tok.is_word("CASE"):
            raise pls_error(tok.line, tok.col, "PLS-00999: implementation restriction (may be "
                            "temporary) a CASE expression is not supported by the Sluice "
                            "interpreter")
        if tok.kind == IDENT and self.peek().is_op("%"):
            return cursor_attribute(self)            # SQL%ROWCOUNT, c%NOTFOUND & co
        if tok.is_word("NEW") and self.peek().kind == IDENT and self.peek(2).is_op("(", "."):
            self.advance()                           # NEW t(…): a constructor, NEW optional
            return self.name()
        if tok.kind == IDENT and not (tok.is_word(*RESERVED)):
            return self.name()
        raise unexpected(tok, EXPR_START)

    def name(self, bind: bool = False) -> Name:
        """``a[(args)] { . b[(args)] }`` — or the same after a bind variable."""
        first = self.advance()
        segs = [Seg(first.value, first.text, self._args(), first)]
        while self.tok.is_op(".") and self.peek().kind == IDENT:
            self.advance()
            part = self.advance()
            segs.append(Seg(part.value, part.text, self._args(), part))
        return Name(segs, first, bind=bind)

    def _args(self) -> list[Arg] | None:
        if not self.accept_op("("):
            return None
        args: list[Arg] = []
        if self.accept_op(")"):
            return args
        while True:
            tok = self.tok
            if tok.kind == IDENT and self.peek().is_op("=>"):
                self.advance()
                self.advance()
                args.append(Arg(tok.value.lower() if not tok.quoted else tok.value,
                                self.expr(), tok))
            else:
                args.append(Arg(None, self.expr(), tok))
            if self.accept_op(","):
                continue
            self.expect_op(")", ",", "=>", ".", "(", "*", "%", "&", "-", "+", "/", "||")
            return args

    # -- datatypes
    def datatype(self) -> tuple[str | None, Token, Token]:
        """A datatype reference: (canonical name or None when %TYPE-anchored, first, last token)."""
        first = self.ident("<an identifier>", "<a double-quoted delimited-identifier>")
        parts, last = [first.value], first
        while self.tok.is_op(".") and self.peek().kind == IDENT:
            self.advance()
            last = self.advance()
            parts.append(last.value)
        name: str | None = ".".join(parts)
        if self.accept_op("%"):
            last = self.ident("type", "rowtype")
            name = None        # anchored declarations take no initial value of their own
        words = [name] if name else []
        while True:
            if self.tok.is_op("("):
                last = self._skip_parens()
            elif self.tok.is_word(*_TYPE_WORDS):
                last = self.advance()
                words.append(last.value)
            else:
                break
        return (" ".join(words) if name else None), first, last

    def _skip_parens(self) -> Token:
        """Skip a balanced ``( … )`` (a size or precision), returning the closing token."""
        depth = 0
        while True:
            tok = self.advance()
            if tok.kind == EOF:
                raise unexpected(tok, (")",))
            if tok.is_op("("):
                depth += 1
            elif tok.is_op(")"):
                depth -= 1
                if depth == 0:
                    return tok
