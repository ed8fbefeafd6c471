"""Oracle's empty string in a user's SQL: there is none — ``''`` is NULL — and ``||`` skips NULLs.

Oracle SQL Reference, "Concatenation Operator": "Although Oracle treats zero-length character
strings as nulls, concatenating a zero-length character string with another operand always
results in the other operand, so null can result only from the concatenation of two null
strings."  Neither SQLite nor PostgreSQL does either, so a statement typed at a cursor is
rewritten here, after :mod:`.sqloracle` answered Oracle's words in it (which wrote each ``''``
of the statement as ``NULL``) and before :mod:`.sqlhierarchy`:

* a chain ``a || b || c`` as ``NULLIF(COALESCE(a, '') || COALESCE(b, '') || …, '')`` (PostgreSQL:
  each operand ``CAST(… AS TEXT)`` first — its own text of a number or date, as its ``||``
  writes them, so what the store showed of them is kept); ``CONCAT(a, b)`` likewise.  The
  operands are Oracle's: ``||``, ``+`` and ``-`` bind alike from the left, ``*`` and ``/``
  tighter (``2 * 3 || 'a'`` is ``'6a'``, ``n + 1 || 'x'`` is ``(n + 1) || 'x'``) — SQLite's
  ``||`` binds tightest of all;
* ``REPLACE(c, s [, r])`` as Oracle answers it: a NULL (or absent) ``r`` removes ``s``, a NULL
  ``s`` leaves ``c`` (``REPLACE(x, 'b', '')`` is the common idiom: the stores' REPLACE of a
  NULL is NULL); ``LTRIM`` / ``RTRIM`` / ``TRANSLATE`` as NULL where they leave nothing.
  (SUBSTR, TRIM, LPAD, RPAD and the REGEXP_ functions already are: :mod:`.oraclefns`.)

A string in arithmetic is a number, as Oracle converts it (SQL Reference, "Implicit Data
Conversion"), where the stores would add its text's leading digits (SQLite: ``'x' + 1`` is 1)
or refuse a literal with a fraction (PostgreSQL: ``'1.5' + 1``): a literal operand of ``+ - *
/`` that is a number is written as that number, one that is none is converted when the
statement runs (ORA-01722: SQLite's ``TO_NUMBER``, PostgreSQL's NUMERIC cast), and so is a
concatenation that is an operand of ``+`` / ``-`` (``'a' || 1 + 2`` is ``('a' || 1) + 2``:
ORA-01722; ``'1' || 2 + 3`` is 15).  A literal written as a datetime (the translation's
SQLite clock) is left alone.

A chain whose extent is not plain (an operand this reader does not know) is left as it was.
An unaliased select item so rewritten is named as Oracle names it (:mod:`.selectitems`).
Each text is rewritten once (kept per text): a statement typed at a cursor runs again with
other binds.  :func:`empty_binds_null` makes a bound ``''`` (or ``b''``) NULL, as
python-oracledb sends it.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Callable, Sequence

from .selectitems import item_headings

__all__ = ["EMPTY", "empty_binds_null", "oracle_strings"]

EMPTY = "''"      # the token of Oracle's zero-length string literal: NULL
_MARKS = ("||", "CONCAT", "REPLACE", "TRIM", "TRANSLATE")
_ADDITIVE = frozenset({"||", "+", "-"})
_MULTIPLICATIVE = frozenset({"*", "/"})
_COMPARE = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
# words after which an operand starts
_STARTERS = frozenset({"SELECT", "DISTINCT", "ALL", "UNIQUE", "WHERE", "AND", "OR", "NOT", "WHEN", "THEN",
                       "ELSE", "CASE", "BY", "ON", "SET", "VALUES", "RETURN", "RETURNING", "HAVING", "IN",
                       "LIKE", "BETWEEN", "ESCAPE", "USING"})
# words that may follow an operand's end (else the chain is not plain)
_FOLLOWERS = _STARTERS | frozenset({
    "AS", "IS", "END", "FROM", "INTO", "GROUP", "ORDER", "UNION", "INTERSECT", "EXCEPT", "MINUS",
    "LIMIT", "FETCH", "OFFSET", "CONNECT", "START", "ASC", "DESC", "NULLS", "FOR", "WINDOW", "JOIN",
    "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "WITHIN", "OVER", "ROWS", "RANGE"})
# words that are no operand
_NOT_OPERANDS = (_FOLLOWERS - {"CASE", "NOT"}) | {"PRIOR", "CONNECT_BY_ROOT", "EXISTS", "ANY", "SOME"}
_UNITS = frozenset({"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "TO"})
_EMPTY_AS_NULL = frozenset({"LTRIM", "RTRIM", "TRANSLATE"})
# a string literal beside an arithmetic operator: maybe a number Oracle converts
_QUOTED_ARITHMETIC = re.compile(r"'\s*[-+*/]|[-+*/]\s*'")
# Oracle's text of a number (TO_NUMBER without a model), and the text of a datetime
_NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*")
_DATETIME = re.compile(r"\d{4}-\d\d-\d\d")


def empty_binds_null(binds: dict | Sequence | None) -> dict | Sequence | None:
    """``binds`` with each ``''`` / ``b''`` as None (the same object when there is none)."""
    if not binds:
        return binds
    if isinstance(binds, dict):
        if any(type(v) in (str, bytes) and not v for v in binds.values()):
            return {k: None if type(v) in (str, bytes) and not v else v for k, v in binds.items()}
        return binds
    if any(type(v) in (str, bytes) and not v for v in binds):
        return [None if type(v) in (str, bytes) and not v else v for v in binds]
    return binds


def oracle_strings(text: str, sqlite: bool, tokens: Callable[[str], list],
                   aliased: Callable[[list, int, int], bool]) -> str:
    """``text`` with its concatenations, CONCAT, REPLACE, LTRIM, RTRIM and TRANSLATE as Oracle
    answers them (see the module); ``tokens`` reads its tokens, ``aliased`` tells an aliased
    select item (:func:`.sqloracle.tokens`, :func:`.sqloracle.aliased`)."""
    upper = text.upper()
    if not any(mark in upper for mark in _MARKS) and not ("'" in text and _QUOTED_ARITHMETIC.search(text)):
        return text
    return _rewritten(text, sqlite, tokens, aliased)


@lru_cache(maxsize=256)
def _rewritten(text: str, sqlite: bool, tokens: Callable[[str], list],
               aliased: Callable[[list, int, int], bool]) -> str:
    return _Strings(text, sqlite, tokens(text), aliased).run()


class _Strings:
    def __init__(self, text: str, sqlite: bool, toks: list, aliased: Callable[[list, int, int], bool]) -> None:
        self.text, self.toks, self.aliased = text, toks, aliased
        self.marked: set[int] = set()               # the tokens starting what is rewritten
        # COALESCE(x, '') of an operand: PostgreSQL's text of it first, as its || writes it
        self.open_, self.close_ = ("COALESCE(", ", '')") if sqlite else ("COALESCE(CAST(", " AS TEXT), '')")
        # a text taken for a number: ORA-01722 when it is none
        self.number_ = ("TO_NUMBER(", ")") if sqlite else ("CAST(", " AS NUMERIC)")
        self.strings: list[tuple[int, bool]] = []      # a term's string literals: (token, in * / or signed)
        self.opens: dict[int, list[str]] = {}       # position -> what starts there, outermost first
        self.closes: dict[int, list[str]] = {}      # position -> what ends there, innermost first
        self.replace: dict[int, tuple[int, str]] = {}   # start -> (end, text)
        self.match: dict[int, int] = {}             # "(" -> its ")", CASE -> its END
        stack: list[int] = []
        for i, t in enumerate(toks):
            if t.text == "(" or t.word == "CASE":
                stack.append(i)
            elif (t.text == ")" or t.word == "END") and stack:
                self.match[stack.pop()] = i

    def run(self) -> str:
        toks = self.toks
        for i, t in enumerate(toks):
            prev = toks[i - 1] if i else None
            if prev is None or prev.text in ("(", ",") or prev.text in _COMPARE or prev.word in _STARTERS:
                self._chain(i)
            if t.kind == "id" and i + 1 < len(toks) and toks[i + 1].text == "(":
                self._call(i)
        if not (self.opens or self.closes or self.replace):
            return self.text
        # an item rewritten keeps Oracle's heading (a subquery's, read by an outer *)
        for last, heading in item_headings(toks, self.marked, self.aliased).items():
            self.closes.setdefault(toks[last].end, []).append(f' AS "{heading}"')
        out, at = [], 0
        for p in sorted({*self.opens, *self.closes, *self.replace}):
            out.append(self.text[at:p])
            out.extend(self.closes.get(p, ()))
            out.extend(self.opens.get(p, ()))
            at = p
            if p in self.replace:
                at, text = self.replace[p]
                out.append(text)
        out.append(self.text[at:])
        return "".join(out)

    # -- the edits: a construct read later is inside (or apart from) one read before ----------
    def _open(self, pos: int, text: str) -> None:
        self.opens.setdefault(pos, []).append(text)

    def _close(self, pos: int, text: str) -> None:
        self.closes.setdefault(pos, []).insert(0, text)

    # -- a || chain ------------------------------------------------------------------------
    def _chain(self, i: int) -> None:
        """The additive expression starting at token ``i``, rewritten when it concatenates."""
        toks = self.toks
        terms: list[tuple[int, int]] = []
        ops: list[str] = []
        strings: list[tuple[int, int, bool]] = []       # (term, token, in * / or signed): maybe numbers
        k = i
        while True:
            self.strings = []
            end = self._term(k)
            if end is None:
                return
            strings.extend((len(terms), at, times) for at, times in self.strings)
            terms.append((k, end))
            if end + 1 < len(toks) and toks[end + 1].text in _ADDITIVE:
                ops.append(toks[end + 1].text)
                k = end + 2
                continue
            break
        if not self._ends(terms[-1][1] + 1):
            return
        numbers = [at for term, at, times in strings
                   if times or self._arithmetic(ops, term)]
        numbers += [first for term, (first, last) in enumerate(terms)
                    if self._concatenated(first, last) and self._arithmetic(ops, term)]
        if "||" in ops:
            self._concatenation(i, terms, ops)
        if numbers:                 # (inside the concatenation's operands: read after them)
            self._numbers(i, numbers)

    def _concatenation(self, i: int, terms: list[tuple[int, int]], ops: list[str]) -> None:
        """The chain at token ``i`` (its ``terms`` joined by ``ops``) as Oracle's ``||``."""
        toks = self.toks
        start = toks[i].start
        opens: list[str] = []      # at the chain's start, outermost first
        closes: dict[int, list[str]] = {}
        a = 0
        while a < len(ops):
            if ops[a] != "||":
                a += 1
                continue
            b = a
            while b < len(ops) and ops[b] == "||":
                b += 1
            # terms a .. b: NULLIF(COALESCE(<everything up to term a>) || COALESCE(term) …, '')
            opens.insert(0, "NULLIF(" + self.open_)
            closes.setdefault(toks[terms[a][1]].end, []).append(self.close_)
            for first, last in terms[a + 1:b + 1]:
                self._open(toks[first].start, self.open_)
                closes.setdefault(toks[last].end, []).append(self.close_)
            closes[toks[terms[b][1]].end].append(", '')")
            if b < len(ops):        # (a || b) + c: a number
                opens[0] = self.number_[0] + opens[0]
                closes[toks[terms[b][1]].end].append(self.number_[1])
            a = b
        self.marked.add(i)
        self.opens.setdefault(start, []).extend(opens)
        for pos, texts in closes.items():
            self.closes[pos] = texts + self.closes.get(pos, [])

    @staticmethod
    def _arithmetic(ops: list[str], term: int) -> bool:
        """Whether the term ``term`` of a chain joined by ``ops`` is an operand of ``+`` / ``-``
        (``'a' || 'b' + 1``: the concatenation is)."""
        before = ops[term - 1] if term else None
        after = ops[term] if term < len(ops) else None
        return before in ("+", "-") or after in ("+", "-") and before != "||"

    def _concatenated(self, first: int, last: int) -> bool:
        """Whether tokens ``first`` .. ``last`` are a parenthesised concatenation (not a query)."""
        toks = self.toks
        if toks[first].text != "(" or self.match.get(first) != last or toks[first + 1].word in ("SELECT", "WITH"):
            return False
        depth = 0
        for t in toks[first + 1:last]:
            depth += (t.text == "(" or t.word == "CASE") - (t.text == ")" or t.word == "END")
            if depth == 0 and t.text == "||":
                return True
        return False

    def _numbers(self, i: int, numbers: list[int]) -> None:
        """The string literals (or parenthesised concatenations) at ``numbers`` as numbers (see
        the module)."""
        toks = self.toks
        for at in numbers:
            if toks[at].text == "(":
                self._open(toks[at].start, self.number_[0])
                self._close(toks[self.match[at]].end, self.number_[1])
                self.marked.add(i)
                continue
            text = toks[at].text[1:-1].replace("''", "'")
            if _DATETIME.match(text.strip()):
                continue
            m = _NUMBER.fullmatch(text)
            if m:
                number = str(Decimal(m.group(1)))
                self.replace[toks[at].start] = (toks[at].end, f"({number})" if number[0] == "-" else number)
            else:
                self._open(toks[at].start, self.number_[0])
                self._close(toks[at].end, self.number_[1])
            self.marked.add(i)

    def _term(self, i: int) -> int | None:
        """The last token of the operand of ``||`` / ``+`` / ``-`` starting at token ``i``:
        factors joined by ``*`` / ``/`` (None: not one this reader knows); its string literal
        factors in :attr:`strings`."""
        toks = self.toks
        times = False
        while True:
            signed = False
            while i < len(toks) and toks[i].text in ("+", "-"):
                i, signed = i + 1, True
            end = self._factor(i)
            if end is None:
                return None
            nxt = toks[end + 1].text if end + 1 < len(toks) else ""
            if end == i and toks[i].kind == "str" and nxt != "::":
                self.strings.append((i, times or signed or nxt in _MULTIPLICATIVE))
            while end + 2 < len(toks) and toks[end + 1].text == "::" and toks[end + 2].kind == "id":
                end += 2        # PostgreSQL's cast, as the translation wrote it
                if end + 1 < len(toks) and toks[end + 1].text == "(":
                    end = self.match.get(end + 1, len(toks))
            if end + 1 < len(toks) and toks[end + 1].text in _MULTIPLICATIVE:
                i, times = end + 2, True
                continue
            return end if end < len(toks) else None

    def _factor(self, i: int) -> int | None:
        toks = self.toks
        if i >= len(toks):
            return None
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.text == "(" or t.word == "CASE":
            return self.match.get(i)
        if t.kind in ("str", "num", "bind"):
            return i
        if t.kind not in ("id", "qid") or t.word in _NOT_OPERANDS:
            return None
        if nxt is not None and nxt.kind == "str" and (t.word in ("DATE", "TIMESTAMP") or nxt.start == t.end):
            # DATE '…', TIMESTAMP '…', X'…'
            return i + 1
        if t.word == "INTERVAL" and nxt is not None and nxt.kind == "str":
            i += 1
            while i + 1 < len(toks) and (toks[i + 1].word in _UNITS or toks[i + 1].text == "("):
                i = self.match.get(i + 1, len(toks)) if toks[i + 1].text == "(" else i + 1
            return i
        while i + 2 < len(toks) and toks[i + 1].text == "." and toks[i + 2].kind in ("id", "qid"):
            i += 2
        if i + 1 < len(toks) and toks[i + 1].text == "(":
            i = self.match.get(i + 1, len(toks))
            # LISTAGG(…) WITHIN GROUP (ORDER BY …), an analytic call's OVER (…)
            while i + 2 < len(toks) and toks[i + 1].word in ("WITHIN", "OVER", "KEEP"):
                k = i + 2 + (toks[i + 1].word == "WITHIN")
                if k >= len(toks) or toks[k].text != "(":
                    return None
                i = self.match.get(k, len(toks))
        return i

    def _ends(self, i: int) -> bool:
        """Whether an expression may end before token ``i``."""
        toks = self.toks
        if i >= len(toks):
            return True
        t = toks[i]
        if t.text in (")", ",", ";") or t.text in _COMPARE or t.word in _FOLLOWERS:
            return True
        if t.kind in ("id", "qid"):        # an alias: then the item's end
            return i + 1 >= len(toks) or toks[i + 1].text in (")", ",", ";") or toks[i + 1].word in _FOLLOWERS
        return False

    # -- calls -------------------------------------------------------------------------
    def _call(self, i: int) -> None:
        word = self.toks[i].word
        if word not in ("CONCAT", "REPLACE") and word not in _EMPTY_AS_NULL:
            return
        close = self.match.get(i + 1)
        if close is None:
            return
        toks = self.toks
        args, depth, first = [], 0, i + 2
        for k in range(i + 2, close):
            depth += (toks[k].text == "(" or toks[k].word == "CASE") - (toks[k].text == ")" or toks[k].word == "END")
            if depth == 0 and toks[k].text == ",":
                args.append((first, k - 1))
                first = k + 1
        args.append((first, close - 1))
        if any(a > b for a, b in args):
            return
        if word == "CONCAT":
            if len(args) != 2:
                return      # (ORA-00909 from the store: it has no such CONCAT)
            wrapped = args
        elif word == "REPLACE":
            if len(args) not in (2, 3):
                return
            wrapped = args[1:]
        else:
            wrapped = []
        self.marked.add(i)
        if word == "CONCAT":        # CONCAT(a, b) as a || b
            self.replace[toks[i].start] = (toks[i + 1].end, "NULLIF(")
            comma = toks[args[0][1] + 1]
            self.replace[comma.start] = (comma.end, " ||")
            self.replace[toks[close].start] = (toks[close].end, ", '')")
        else:
            self._open(toks[i].start, "NULLIF(")
            self._close(toks[close].end, ", '')")
        for a, b in wrapped:
            self._open(toks[a].start, self.open_)
            self._close(toks[b].end, self.close_)
        if word == "REPLACE" and len(args) == 2:        # no replacement: the matches removed
            self._open(toks[close].start, ", ''")
