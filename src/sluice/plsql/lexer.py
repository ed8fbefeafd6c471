"""Tokens of one statement, each with the 1-based line and column Oracle reports.

The lexer knows just enough PL/SQL to keep the parser honest: identifiers
(plain, with ``$`` and ``#``, or "quoted"), string literals (doubled quotes,
``N'…'``, ``q'[…]'``), numbers, bind variables (``:name``, ``:1``,
``:"Name"``), the compound symbols (``:=`` ``=>`` ``||`` ``..`` ``<=`` …) and
comments.  Positions are character offsets into the statement text, so error
messages point at the very token that went wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errs import pls_error

IDENT, STRING, NUMBER, BIND, OP, EOF = "ident", "string", "number", "bind", "op", "eof"

# Longest first: the lexer takes the first symbol that matches.
_SYMBOLS = (
    ":=", "=>", "||", "..", "<=", ">=", "<>", "!=", "^=", "~=", "**", "<<", ">>",
    "(", ")", ",", ";", ".", "+", "-", "*", "/", "=", "<", ">", "%", "@",
)
_Q_CLOSERS = {"[": "]", "{": "}", "(": ")", "<": ">"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    value: str          # identifiers: canonical (upper unless quoted); strings: contents
    text: str           # the token exactly as written
    line: int
    col: int
    start: int          # offsets into the statement text, for "as written" slices
    end: int
    quoted: bool = False

    def is_word(self, *words: str) -> bool:
        """An unquoted identifier equal to one of ``words`` (keywords are not reserved here)."""
        return self.kind == IDENT and not self.quoted and self.value in words

    def is_op(self, *ops: str) -> bool:
        return self.kind == OP and self.value in ops

    def shown(self) -> str:
        """How PLS-00103 names the token."""
        if self.kind == EOF:
            return "end-of-file"
        return self.value if self.kind == IDENT and not self.quoted else self.text


def _is_ident_start(ch: str) -> bool:
    return ch.isalpha()


def _is_ident_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$#"


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def where(self, pos: int) -> tuple[int, int]:
        """(line, column) of an offset; only ever asked for offsets already scanned."""
        line = self.text.count("\n", 0, pos) + 1
        col = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return line, col

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        text, n = self.text, len(self.text)
        while True:
            self._skip_space_and_comments()
            if self.pos >= n:
                line, col = self.where(n)
                out.append(Token(EOF, "", "", line, col, n, n))
                return out
            start = self.pos
            ch = text[start]
            if ch in "nNqQ" and self._string_prefix_len(start):
                kind, value = STRING, self._string(start + self._string_prefix_len(start))
            elif ch == "'":
                kind, value = STRING, self._string(start)
            elif ch == '"':
                kind, value = IDENT, self._quoted_ident(start)
            elif _is_ident_start(ch):
                self.pos = start + 1
                while self.pos < n and _is_ident_char(text[self.pos]):
                    self.pos += 1
                kind, value = IDENT, text[start:self.pos].upper()
            elif ch.isdigit() or (ch == "." and start + 1 < n and text[start + 1].isdigit()):
                kind, value = NUMBER, self._number(start)
            elif ch == ":" and self._bind_follows(start + 1):
                kind, value = BIND, self._bind(start)
            else:
                sym = next((s for s in _SYMBOLS if text.startswith(s, start)), None)
                if sym is None:
                    line, col = self.where(start)
                    raise pls_error(line, col, f'PLS-00103: Encountered the symbol "{ch}" '
                                    "which is not a valid PL/SQL character")
                kind, value = OP, sym
                self.pos = start + len(sym)
            line, col = self.where(start)
            out.append(Token(kind, value, text[start:self.pos], line, col, start, self.pos,
                             quoted=kind == IDENT and ch == '"'
                             or kind == BIND and text[start + 1:start + 2] == '"'))

    def _skip_space_and_comments(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            if text[self.pos].isspace():
                self.pos += 1
            elif text.startswith("--", self.pos):
                nl = text.find("\n", self.pos)
                self.pos = n if nl < 0 else nl + 1
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    line, col = self.where(self.pos)
                    raise pls_error(line, col, "PLS-00111: end-of-file in comment "
                                    "(the /* comment starting here is never closed)")
                self.pos = close + 2
            else:
                return

    def _string_prefix_len(self, start: int) -> int:
        """Length of an ``N``, ``Q`` or ``NQ`` prefix directly before a quote, else 0."""
        for prefix in ("nq", "n", "q"):
            end = start + len(prefix)
            if self.text[start:end].lower() == prefix and self.text[end:end + 1] == "'":
                return len(prefix)
        return 0

    def _string(self, quote: int) -> str:
        """A literal starting at the quote ``quote`` (q-quoting when preceded by q)."""
        text = self.text
        if quote > 0 and text[quote - 1] in "qQ" and quote + 1 < len(text):
            opener = text[quote + 1]
            closer = _Q_CLOSERS.get(opener, opener)
            end = text.find(closer + "'", quote + 2)
            if end < 0:
                self._unterminated(quote)
            self.pos = end + 2
            return text[quote + 2:end]
        parts, i = [], quote + 1
        while True:
            j = text.find("'", i)
            if j < 0:
                self._unterminated(quote)
            parts.append(text[i:j])
            if text.startswith("''", j):      # doubled quote stands for one quote
                parts.append("'")
                i = j + 2
                continue
            self.pos = j + 1
            return "".join(parts)

    def _unterminated(self, quote: int) -> None:
        line, col = self.where(quote)
        raise pls_error(line, col, "ORA-01756: quoted string not properly terminated")

    def _quoted_ident(self, start: int) -> str:
        end = self.text.find('"', start + 1)
        nl = self.text.find("\n", start + 1)
        if end < 0 or (0 <= nl < end):
            line, col = self.where(start)
            raise pls_error(line, col, "PLS-00112: end-of-line in quoted identifier")
        self.pos = end + 1
        return self.text[start + 1:end]

    def _number(self, start: int) -> str:
        text, n, i = self.text, len(self.text), start
        while i < n and text[i].isdigit():
            i += 1
        # "1..10" is a range, not the number "1." followed by ".10"
        if i < n and text[i] == "." and not text.startswith("..", i):
            i += 1
            while i < n and text[i].isdigit():
                i += 1
        if i < n and text[i] in "eE":
            j = i + 1
            if j < n and text[j] in "+-":
                j += 1
            if j < n and text[j].isdigit():
                i = j
                while i < n and text[i].isdigit():
                    i += 1
        self.pos = i
        return text[start:i]

    def _bind_follows(self, pos: int) -> bool:
        nxt = self.text[pos:pos + 1]
        return bool(nxt) and (_is_ident_start(nxt) or nxt.isdigit() or nxt == '"')

    def _bind(self, start: int) -> str:
        text, i = self.text, start + 1
        if text[i] == '"':
            value = self._quoted_ident(i)
            return value
        while i < len(text) and _is_ident_char(text[i]):
            i += 1
        self.pos = i
        return text[start + 1:i]


def tokenize(text: str) -> list[Token]:
    """All tokens of ``text``, ending with one EOF token."""
    return _Scanner(text).tokens()
