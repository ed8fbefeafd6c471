"""Reading the clauses of Oracle's compound DML — MERGE (:mod:`.sqlmerge`) and the multitable
INSERT ALL / INSERT FIRST (:mod:`.multiinsert`) — from a statement's tokens.

The statement is the user's, once :mod:`.sqloracle` has answered Oracle's words in it
(its expressions are the store's already): what is read here is its shape — the tables,
the conditions, the column lists and the expressions, each as its text — for the two
modules to put together as the store's statements.  A parenthesis and a ``CASE … END``
nest: a clause word inside either is not the statement's.
"""

from __future__ import annotations

import re
from typing import Callable

from ..errors import ora
from .sqloracle import tokens

__all__ = ["Clauses"]

_NAME_KINDS = ("id", "qid")


class Clauses:
    """A statement's tokens with a reading position; each method reads at the position
    and moves past what it read, or raises the ORA error Oracle's parser gives."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = tokens(text)
        self.i = 0

    # -- looking -------------------------------------------------------------------------
    def word(self, ahead: int = 0) -> str:
        """The word (upper case) or operator at the position (+ ``ahead``); '' past the end."""
        j = self.i + ahead
        if j >= len(self.toks):
            return ""
        t = self.toks[j]
        return t.word or t.text if t.kind in ("id", "op") else ""

    def at(self, *words: str) -> bool:
        return self.word() in words

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def take(self, word: str) -> bool:
        """Move past ``word`` if it is at the position."""
        if self.word() == word:
            self.i += 1
            return True
        return False

    def expect(self, word: str, code: int) -> None:
        if not self.take(word):
            raise ora(code)

    def span(self, first: int, last: int) -> str:
        """The statement's text from token ``first`` to token ``last`` (inclusive)."""
        return self.text[self.toks[first].start:self.toks[last].end]

    # -- reading -------------------------------------------------------------------------
    def group(self) -> tuple[int, int]:
        """The parenthesis at the position: the indexes of its ``(`` and its ``)``."""
        if not self.at("("):
            raise ora(906)
        first, depth = self.i, 0
        for j in range(first, len(self.toks)):
            depth += _nesting(self.toks[j])
            if depth == 0:
                self.i = j + 1
                return first, j
        raise ora(907)

    def inside(self) -> tuple[int, int]:
        """The parenthesis at the position: the indexes of the first and last tokens inside it."""
        first, last = self.group()
        if last == first + 1:
            raise ora(936)
        return first + 1, last - 1

    def until(self, stop: Callable[["Clauses"], bool]) -> tuple[int, int]:
        """The tokens from the position up to (not including) the first one outside any
        parenthesis or CASE where ``stop(self)`` holds, or to the end: their first and last
        indexes (ORA-00936 for none)."""
        first, depth = self.i, 0
        while self.i < len(self.toks):
            if depth == 0 and stop(self):
                break
            depth += _nesting(self.toks[self.i])
            if depth < 0:
                break
            self.i += 1
        if self.i == first:
            raise ora(936)
        return first, self.i - 1

    def table(self) -> str:
        """A table's name as written (``t``, ``hr.emp``, ``"t"``, ``"hr"."t"``)."""
        first = self.i
        if self.done() or self.toks[self.i].kind not in _NAME_KINDS:
            raise ora(903)
        self.i += 1
        while self.at(".") and self.i + 1 < len(self.toks) and self.toks[self.i + 1].kind in _NAME_KINDS:
            self.i += 2
        return self.span(first, self.i - 1)

    def alias(self, *not_alias: str) -> str | None:
        """The alias at the position (a name that is none of the words ``not_alias``)."""
        if self.done() or self.toks[self.i].kind not in _NAME_KINDS or self.word() in not_alias:
            return None
        if self.toks[self.i].kind == "id" and "." in self.toks[self.i].text:
            return None
        self.i += 1
        return self.toks[self.i - 1].text

    def items(self, first: int, last: int) -> list[str]:
        """The texts of the comma-separated items of tokens ``first`` .. ``last``."""
        out, depth, start = [], 0, first
        for j in range(first, last + 1):
            t = self.toks[j]
            if depth == 0 and t.text == ",":
                if j == start:
                    raise ora(936)
                out.append(self.span(start, j - 1))
                start = j + 1
            depth += _nesting(t)
        if start > last:
            raise ora(936)
        out.append(self.span(start, last))
        return out


def column_name(written: str) -> str:
    """A column as a store statement names it: without the table's qualifier (``t.v``,
    ``"T"."V"``) — a SET's or an INSERT list's column names the target's own."""
    return re.split(r"""\s*\.\s*(?=(?:"[^"]*"|[^."])*$)""", written.strip())[-1]


def _nesting(t) -> int:
    if t.kind == "op":
        return 1 if t.text == "(" else -1 if t.text == ")" else 0
    if t.kind == "id":
        return 1 if t.word == "CASE" else -1 if t.word == "END" else 0
    return 0
