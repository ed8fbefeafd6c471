"""Tokens of the rule condition language (an Oracle SQL WHERE-clause subset).

Positions are 1-based line and column, as Oracle reports them, so that a syntax
error reads ``ORA-00936: missing expression at line 1, column 14``.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import NamedTuple

from ...errors import DatabaseError, ora

__all__ = ["Token", "tokenize", "syntax_error", "KEYWORDS"]

# Reserved words of the subset.  TRUE and FALSE are deliberately absent: they are
# not SQL literals in Oracle, so they lex as identifiers (and fail to resolve).
KEYWORDS = frozenset(
    "AND OR NOT IN LIKE ESCAPE BETWEEN IS NULL EXISTS SELECT FROM WHERE".split()
)

# Longest first, so that "<=" wins over "<".
_OPERATORS = ("||", "<>", "!=", "^=", "<=", ">=", "=", "<", ">", "+", "-", "*", "/",
              "(", ")", ",", ".")

_NAME_CHARS = frozenset("_$#")


class Token(NamedTuple):
    """``kind`` is one of STRING NUMBER IDENT QIDENT BIND KEYWORD OP EOF.

    ``value`` is canonical (an unquoted name upper-cased, a string literal with
    its doubled quotes collapsed, a number as int or Decimal); ``spelled`` is the
    name as written (without quotes), which member-call resolution uses.
    """

    kind: str
    value: object
    spelled: str
    line: int
    col: int


def syntax_error(code: int, line: int, col: int, *args: object) -> DatabaseError:
    """ORA-``code`` with the position appended, and kept as ``.line``/``.column``."""
    base = ora(code, *args)
    err = type(base)(f"{base.message} at line {line}, column {col}", code)
    err.line, err.column = line, col  # type: ignore[attr-defined]
    return err


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in _NAME_CHARS


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 1
        self.line_start = 0  # index of the first character of the current line

    def col(self, index: int | None = None) -> int:
        return (self.i if index is None else index) - self.line_start + 1

    def advance_to(self, j: int) -> None:
        """Move to index ``j``, counting the newlines crossed (strings, comments)."""
        while True:
            nl = self.text.find("\n", self.i, j)
            if nl < 0:
                break
            self.line += 1
            self.line_start = nl + 1
            self.i = nl + 1
        self.i = j

    def skip_blanks(self) -> None:
        text = self.text
        while self.i < len(text):
            ch = text[self.i]
            if ch.isspace():
                self.advance_to(self.i + 1)
            elif text.startswith("--", self.i):
                end = text.find("\n", self.i)
                self.advance_to(len(text) if end < 0 else end)
            elif text.startswith("/*", self.i):
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise syntax_error(1742, self.line, self.col())
                self.advance_to(end + 2)
            else:
                return

    def quoted(self, quote: str) -> tuple[str, int] | None:
        """The body of a quoted item starting at ``self.i`` and the index after it.

        A doubled quote inside the body stands for one quote (``'O''Brien'``).
        """
        text, j, parts = self.text, self.i + 1, []
        while True:
            k = text.find(quote, j)
            if k < 0:
                return None
            parts.append(text[j:k])
            if text.startswith(quote * 2, k):
                parts.append(quote)
                j = k + 2
            else:
                return "".join(parts), k + 1

    def number(self) -> tuple[int | Decimal, int]:
        text, j = self.text, self.i
        while j < len(text) and text[j].isdigit():
            j += 1
        exact = True
        if j < len(text) and text[j] == ".":
            exact = False
            j += 1
            while j < len(text) and text[j].isdigit():
                j += 1
        if j < len(text) and text[j] in "eE":
            k = j + 1
            if k < len(text) and text[k] in "+-":
                k += 1
            if k < len(text) and text[k].isdigit():
                exact = False
                while k < len(text) and text[k].isdigit():
                    k += 1
                j = k
        literal = text[self.i:j]
        # Integers stay int; anything with a point or exponent is an exact
        # Decimal, like Oracle NUMBER (0.1 + 0.2 = 0.3).  NUMBER ends below 1E126: a literal
        # past it is ORA-01426 (int() and Decimal refused the longest ones with a traceback).
        try:
            value = Decimal(literal)
        except InvalidOperation:  # an exponent past any Decimal
            value = None
        if value is None or (value and value.adjusted() > 125):
            raise syntax_error(1426, self.line, self.col(), literal[:40])
        return (int(value) if exact else value), j

    def name(self) -> tuple[str, int]:
        text, j = self.text, self.i
        while j < len(text) and _is_name_char(text[j]):
            j += 1
        return text[self.i:j], j


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens, ending with an EOF token."""
    s = _Scanner(text)
    tokens: list[Token] = []
    while True:
        s.skip_blanks()
        line, col = s.line, s.col()
        if s.i >= len(text):
            tokens.append(Token("EOF", None, "", line, col))
            return tokens
        ch = text[s.i]
        if ch == "'":
            found = s.quoted("'")
            if found is None:
                raise syntax_error(1756, line, col)
            body, end = found
            tokens.append(Token("STRING", body, body, line, col))
            s.advance_to(end)
        elif ch == '"':
            tokens.append(_quoted_name(s, "QIDENT", line, col, 0))
        elif ch.isdigit() or (ch == "." and text[s.i + 1:s.i + 2].isdigit()):
            value, end = s.number()
            tokens.append(Token("NUMBER", value, text[s.i:end], line, col))
            s.advance_to(end)
        elif ch == ":":
            tokens.append(_bind(s, line, col))
        elif ch.isalpha():
            word, end = s.name()
            upper = word.upper()
            kind = "KEYWORD" if upper in KEYWORDS else "IDENT"
            tokens.append(Token(kind, upper, word, line, col))
            s.advance_to(end)
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, s.i)), None)
            if op is None:
                raise syntax_error(911, line, col)
            tokens.append(Token("OP", "<>" if op in ("!=", "^=") else op, op, line, col))
            s.advance_to(s.i + len(op))


def _quoted_name(s: _Scanner, kind: str, line: int, col: int, skip: int) -> Token:
    """A "quoted identifier" starting ``skip`` characters after ``s.i``: case kept."""
    start = s.i
    s.i += skip
    found = s.quoted('"')
    if found is None:
        raise syntax_error(1740, line, col)
    body, end = found
    if not body:
        raise syntax_error(1741, line, col)
    s.i = start
    s.advance_to(end)
    return Token(kind, body, body, line, col)


def _bind(s: _Scanner, line: int, col: int) -> Token:
    """``:name``, ``:"Quoted"`` or ``:1`` -- a rule variable."""
    nxt = s.text[s.i + 1:s.i + 2]
    if nxt == '"':
        return _quoted_name(s, "BIND", line, col, 1)
    if nxt and _is_name_char(nxt):
        s.i += 1
        word, end = s.name()
        s.advance_to(end)
        return Token("BIND", word.upper(), word, line, col)
    raise syntax_error(911, line, col)
