"""Oracle's own words in a user's SQL, as the store's database can answer them.

A statement typed at a cursor (``SELECT USER FROM DUAL``) runs on the store's database,
which has no Oracle session: :func:`oracle_words` replaces

* ``USER`` and ``SYS_CONTEXT('USERENV', 'SESSION_USER' | 'CURRENT_USER' |
  'CURRENT_SCHEMA')`` by the session's Sluice user (a literal: the database's own
  ``user`` would be its server login);
* ``SYSDATE`` / ``CURRENT_DATE`` (a DATE: whole seconds) and ``SYSTIMESTAMP`` /
  ``CURRENT_TIMESTAMP`` / ``LOCALTIMESTAMP`` by the host's clock, read once per statement
  as Oracle reads it, and fetched as the naive ``datetime`` python-oracledb gives for
  DATE and TIMESTAMP [WITH TIME ZONE] (PostgreSQL: a ``TIMESTAMP`` literal; SQLite:
  text, the form its views' dates have, which :meth:`Translated.convert` turns back);
* on SQLite, each divisor ``a / b`` by ``a / sluice_divisor(b)``, which raises ORA-01476
  for zero where SQLite answers NULL (:mod:`.sqlitefns`; PostgreSQL raises by itself).

A select item so changed keeps the heading Oracle gives it (``USER``, ``1/0``) through an
alias.  Literals, quoted names and comments are never touched.  Date arithmetic on the
clock words (``SYSDATE - 1``) is refused (SLU-00001): neither database counts it in days.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from ..errors import not_supported

__all__ = ["Translated", "oracle_words"]

_TOKEN = re.compile(
    r"""(?P<str>'(?:[^']|'')*')"""
    r"""|(?P<qid>"(?:[^"]|"")*")"""
    r"""|(?P<comment>--[^\n]*|/\*.*?\*/)"""
    r"""|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"""
    r"""|(?P<id>[A-Za-z_][A-Za-z0-9_$#]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_$#]*)*)"""
    r"""|(?P<bind>:[A-Za-z0-9_]+|\?\d*)"""
    r"""|(?P<ws>\s+)"""
    r"""|(?P<op>\|\||<>|!=|<=|>=|::|.)""",
    re.S,
)
# only a statement naming one of these needs the tokens
_MAYBE = ("USER", "SYS", "CURRENT_", "LOCALTIMESTAMP", "/")

_DATES = frozenset({"SYSDATE", "CURRENT_DATE"})
_TIMESTAMPS = frozenset({"SYSTIMESTAMP", "CURRENT_TIMESTAMP", "LOCALTIMESTAMP"})
_USERENV = frozenset({"SESSION_USER", "CURRENT_USER", "CURRENT_SCHEMA"})
# words that end a select list at its own depth (GROUP and ORDER only before BY:
# LISTAGG(...) WITHIN GROUP (ORDER BY ...) stays in the item)
_LIST_END = frozenset({"FROM", "INTO", "WHERE", "HAVING", "UNION", "INTERSECT", "EXCEPT", "MINUS",
                       "LIMIT", "FETCH", "OFFSET", "WINDOW", "CONNECT", "START"})
# words that continue an expression: the name after one is not an alias
_CONTINUE = frozenset({"AND", "OR", "NOT", "IS", "IN", "LIKE", "BETWEEN", "ESCAPE", "COLLATE", "THEN",
                       "ELSE", "WHEN", "CASE"})
# … and words that end one (INTERVAL '1' DAY is not '1' aliased DAY)
_NOT_ALIAS = _CONTINUE | {"END", "NULL", "TRUE", "FALSE", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}


class _Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int

    @property
    def word(self) -> str:
        return self.text.upper() if self.kind == "id" else ""


@dataclass
class Translated:
    """A statement made runnable, and the clock values to give back as datetimes
    (SQLite's text of them -> the value)."""

    text: str
    dates: dict[str, datetime] = field(default_factory=dict)

    def convert(self, rows: list[tuple]) -> list[tuple]:
        """``rows`` with the text of this statement's clock values as datetimes (SQLite)."""
        dates = self.dates
        if not dates:
            return rows
        return [tuple(dates.get(v, v) if type(v) is str else v for v in row) for row in rows]


def oracle_words(sql: str, user: str, sqlite: bool, now: datetime | None = None) -> Translated:
    """``sql`` with Oracle's session words answered for ``user`` (see the module);
    ``sqlite`` for the SQLite store (clock as text, divisions checked), else PostgreSQL."""
    upper = sql.upper()
    if not any(word in upper for word in _MAYBE):
        return Translated(sql)
    return _Translation(sql, user, sqlite, now).run()


class _Translation:
    def __init__(self, sql: str, user: str, sqlite: bool, now: datetime | None) -> None:
        self.sql, self.user, self.sqlite = sql, user, sqlite
        self.now = now
        self.dates: dict[str, datetime] = {}
        self.toks = [_Tok(m.lastgroup, m.group(), m.start(), m.end()) for m in _TOKEN.finditer(sql)
                     if m.lastgroup not in ("ws", "comment")]
        self.replace: dict[int, tuple[int, str]] = {}     # start -> (end, text)
        self.opens: dict[int, int] = {}                  # "sluice_divisor(" before
        self.closes: dict[int, int] = {}                 # ")" at
        self.aliases: dict[int, str] = {}

    def run(self) -> Translated:
        toks = self.toks
        for i, t in enumerate(toks):
            if t.kind == "id":
                self._word(i, t)
            elif self.sqlite and t.text == "/":
                self._divisor(i + 1)
        if not (self.replace or self.opens):
            return Translated(self.sql)
        self._headings()
        return Translated(self._text(), self.dates)

    # -- the words ---------------------------------------------------------------------
    def _word(self, i: int, t: _Tok) -> None:
        word, toks = t.word, self.toks
        after = toks[i + 1].text if i + 1 < len(toks) else ""
        if word == "USER" and after != "(":
            self.replace[t.start] = (t.end, _literal(self.user))
        elif word == "SYS_CONTEXT":
            call = toks[i + 1:i + 6]
            if ([c.text for c in call[::2]] == ["(", ",", ")"] and call[1].kind == call[3].kind == "str"
                    and call[1].text.upper() == "'USERENV'" and call[3].text[1:-1].upper() in _USERENV):
                self.replace[t.start] = (call[-1].end, _literal(self.user))
        elif word in _DATES and after != "(":
            self._no_arithmetic(i, i, word)
            self._clock(t.start, t.end, self._now().replace(microsecond=0), 0)
        elif word in _TIMESTAMPS:
            call = toks[i + 1:i + 4]
            if after == "(" and [c.text for c in call[::2]] == ["(", ")"] and call[1].text.isdigit():
                self._no_arithmetic(i, i + 3, word)
                self._clock(t.start, call[-1].end, self._now(), int(call[1].text))
            elif after != "(":
                self._no_arithmetic(i, i, word)
                self._clock(t.start, t.end, self._now(), 6)

    def _no_arithmetic(self, first: int, last: int, word: str) -> None:
        """Oracle's ``SYSDATE - 1`` counts days; neither store's SQL does (PostgreSQL refuses
        a timestamp minus a number, SQLite would subtract from the text's year), so it is
        refused rather than answered wrongly.  ``… - INTERVAL '1' DAY`` is left to the
        database (PostgreSQL has it)."""
        toks = self.toks
        before = toks[first - 1].text if first > 0 else ""
        after = toks[last + 1].text if last + 1 < len(toks) else ""
        beyond = toks[last + 2].word if last + 2 < len(toks) else ""
        if before in ("+", "-") or after in ("+", "-") and beyond != "INTERVAL":
            raise not_supported(f"date arithmetic on {word} in SQL (PL/SQL blocks and rule "
                                "conditions have it; compare with it instead)")

    def _now(self) -> datetime:
        if self.now is None:
            self.now = datetime.now()
        return self.now

    def _clock(self, start: int, end: int, value: datetime, digits: int) -> None:
        if digits < 6:
            step = 10 ** (6 - digits)
            value = value.replace(microsecond=value.microsecond // step * step)
        text = value.isoformat(" ", "seconds" if digits == 0 else "microseconds")
        self.dates[text] = value
        self.replace[start] = (end, _literal(text) if self.sqlite else f"TIMESTAMP {_literal(text)}")

    # -- SQLite's divisions ------------------------------------------------------------
    def _divisor(self, i: int) -> None:
        end = self._operand_end(i)
        if end is not None:
            start, stop = self.toks[i].start, self.toks[end].end
            self.opens[start] = self.opens.get(start, 0) + 1
            self.closes[stop] = self.closes.get(stop, 0) + 1

    def _operand_end(self, i: int) -> int | None:
        """The last token of the operand starting at token ``i``: unary signs, then a
        literal, bind, name, call, parenthesis or CASE … END (None when it is none)."""
        toks = self.toks
        while i < len(toks) and toks[i].text in ("-", "+", "~"):
            i += 1
        if i >= len(toks):
            return None
        t = toks[i]
        if t.text == "(":
            return self._closing(i)
        if t.word == "CASE":
            depth = 0
            for j in range(i, len(toks)):
                depth += (toks[j].word == "CASE") - (toks[j].word == "END")
                if depth == 0:
                    return j
            return None
        if t.word in ("DATE", "TIMESTAMP") and i + 1 < len(toks) and toks[i + 1].kind == "str":
            return i + 1
        if t.kind in ("id", "qid") and i + 1 < len(toks) and toks[i + 1].text == "(":
            return self._closing(i + 1)
        if t.kind in ("id", "qid", "num", "str", "bind"):
            while i + 2 < len(toks) and toks[i + 1].text == "." and toks[i + 2].kind in ("id", "qid"):
                i += 2
            return i
        return None

    def _closing(self, i: int) -> int | None:
        depth = 0
        for j in range(i, len(self.toks)):
            depth += (self.toks[j].text == "(") - (self.toks[j].text == ")")
            if depth == 0:
                return j
        return None

    # -- headings ----------------------------------------------------------------------
    def _headings(self) -> None:
        """An unaliased select item that changed gets Oracle's heading for it."""
        for first, last in self._select_items():
            lo, hi = self.toks[first].start, self.toks[last].end
            if any(lo <= p < hi for p in (*self.replace, *self.opens)) and not self._aliased(first, last):
                heading = "".join(t.text if t.kind == "qid" else t.text.upper()
                                  for t in self.toks[first:last + 1])
                self.aliases[hi] = ' AS "' + heading.replace('"', '""') + '"'

    def _select_items(self) -> list[tuple[int, int]]:
        """(first, last) token of each item of each select list, at any depth."""
        toks, items = self.toks, []
        open_at: dict[int, int | None] = {}       # depth -> first token of the current item
        depth = 0

        def close(d: int, upto: int) -> None:
            start = open_at.get(d)
            if start is not None and start < upto:
                items.append((start, upto - 1))
            open_at[d] = None

        for i, t in enumerate(toks):
            nxt = toks[i + 1].word if i + 1 < len(toks) else ""
            if t.text == "(":
                depth += 1
                open_at[depth] = None
            elif t.text == ")":
                close(depth, i)
                depth -= 1
            elif t.word == "SELECT":
                open_at[depth] = i + 1 + (nxt in ("DISTINCT", "ALL", "UNIQUE"))
            elif open_at.get(depth) is not None and (
                    t.text == "," or t.word in _LIST_END or (t.word in ("GROUP", "ORDER") and nxt == "BY")):
                close(depth, i)
                if t.text == ",":
                    open_at[depth] = i + 1
        close(depth, len(toks))
        return items

    def _aliased(self, first: int, last: int) -> bool:
        if last == first:
            return False
        t, before = self.toks[last], self.toks[last - 1]
        if t.kind not in ("id", "qid") or "." in t.text or t.word in _NOT_ALIAS:
            return False
        return (before.word == "AS" or before.text == ")"
                or before.kind in ("id", "qid", "num", "str", "bind") and before.word not in _CONTINUE)

    # -- the text ----------------------------------------------------------------------
    def _text(self) -> str:
        sql, out, at = self.sql, [], 0
        for p in sorted({*self.replace, *self.opens, *self.closes, *self.aliases}):
            out.append(sql[at:p])
            at = p
            out.append(")" * self.closes.get(p, 0))
            out.append(self.aliases.get(p, ""))
            out.append("sluice_divisor(" * self.opens.get(p, 0))
            if p in self.replace:
                at, text = self.replace[p]
                out.append(text)
        out.append(sql[at:])
        return "".join(out)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
