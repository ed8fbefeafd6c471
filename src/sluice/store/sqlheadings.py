"""A user's query's column names as Oracle gives them (python-oracledb's ``cursor.description``).

Oracle names a select item by its alias, upper-cased unless quoted (``AS n`` is ``N``,
``AS "Id"`` is ``Id``); a column by its name, so upper-cased unless quoted (``t.col`` is
``COL``); any other expression by its text, upper-cased without its white space
(``count(*)`` is ``COUNT(*)``, ``'x'`` is ``'X'``, ``2.5`` is ``2.5``).  The store's
databases do not: SQLite keeps the text as typed (``n``, ``count(*)``), PostgreSQL
lower-cases (``count``) and names literals ``?column?``.  :func:`oracle_headings` gives
Oracle's names from the statement's top-level select list; the columns of a ``*`` keep
the database's (upper-cased unless PostgreSQL has them quoted).  A statement of plain
column names (``SELECT a, t.b FROM …``) is recognised without tokens.

It also tells which items are Oracle DATEs (``SYSDATE``, ``CURRENT_DATE``, a datetime
bind and their arithmetic) and TIMESTAMP WITH TIME ZONE (``SYSTIMESTAMP``, ``CURRENT_TIMESTAMP``),
which both databases return as timestamps.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..objtypes import DB_TYPE_DATE, DB_TYPE_TIMESTAMP_TZ, DbType
from .sqloracle import _LIST_END, _TOKEN, Translated, _Tok, aliased

__all__ = ["oracle_headings"]

_NAME = r"""(?:[A-Za-z_][\w$#]*\s*\.\s*)?(?:[A-Za-z_][\w$#]*|\*)"""
_PLAIN = re.compile(rf"""\s*SELECT\s+(?:(?:DISTINCT|ALL|UNIQUE)\s+)?{_NAME}(?:\s*,\s*{_NAME})*\s+FROM\b""",
                    re.I | re.A)
_WS = re.compile(r"\s+")
_CLOCK_TYPES = {"SYSDATE": DB_TYPE_DATE, "CURRENT_DATE": DB_TYPE_DATE,
                "SYSTIMESTAMP": DB_TYPE_TIMESTAMP_TZ, "CURRENT_TIMESTAMP": DB_TYPE_TIMESTAMP_TZ}
# words of literal days and intervals beside a clock word
_UNITS = frozenset({"INTERVAL", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "TO"})


def oracle_headings(sql: str, oracle: Translated, names: list[str],
                    sqlite: bool) -> tuple[list[str], dict[int, DbType]]:
    """Oracle's names for the columns the database named ``names`` (see the module), and
    the columns whose timestamps Oracle types otherwise (index -> DB_TYPE_DATE or _TZ)."""
    if oracle.toks is None and _PLAIN.match(sql) and "?column?" not in names:
        return [_named(n, sqlite) for n in names], {}
    toks, items = _top_items(sql, oracle.toks)
    stars = [i for i, (first, last) in enumerate(items) if toks[last].text == "*"]
    extra = len(names) - (len(items) - len(stars))
    if len(stars) > 1 or (extra if stars else -extra) < 0 or not stars and extra:
        return [_named(n, sqlite) for n in names], {}
    out: list[str] = []
    types: dict[int, DbType] = {}
    for first, last in items:
        if toks[last].text == "*":
            out.extend(_named(n, sqlite) for n in names[len(out):len(out) + extra])
            continue
        if aliased(toks, first, last):
            heading = _name(toks[last])
            last -= 1 + (toks[last - 1].word == "AS")
        elif all(t.kind in ("id", "qid") or t.text == "." for t in toks[first:last + 1]):
            heading = _name(toks[last])         # a column, maybe qualified
        else:
            heading = "".join(t.text if t.kind == "qid" else t.text.upper() if t.kind == "str"
                              else _WS.sub("", t.text.upper()) for t in toks[first:last + 1])
        dbtype = _clock_type(toks, first, last, oracle.dated)
        if dbtype is not None:
            types[len(out)] = dbtype
        out.append(heading)
    return out, types


def _named(name: str, sqlite: bool) -> str:
    """A column the database named: upper-cased (PostgreSQL's mixed case was quoted)."""
    return name.upper() if sqlite or name == name.lower() else name


def _name(t: _Tok) -> str:
    if t.kind == "qid":
        return t.text[1:-1].replace('""', '"')
    return _WS.sub("", t.word).rpartition(".")[2]


def _clock_type(toks: list[_Tok], first: int, last: int, dated: frozenset[int]) -> DbType | None:
    """DATE for an item of SYSDATE, CURRENT_DATE or a datetime bind and literal days or
    intervals or a column of days (``dated``: the tokens of those binds and columns, see
    :attr:`.Translated.dated`), TIMESTAMP WITH TIME ZONE for SYSTIMESTAMP or
    CURRENT_TIMESTAMP; None for any other item."""
    words = [t.word for i, t in enumerate(toks[first:last + 1], first) if t.kind == "id" and i not in dated]
    clocks = {_CLOCK_TYPES[w] for w in words if w in _CLOCK_TYPES}
    if any(i in dated for i in range(first, last + 1)):
        clocks = {DB_TYPE_DATE}
    if len(clocks) != 1 or any(w not in _CLOCK_TYPES and w not in _UNITS for w in words):
        return None
    return clocks.pop()


def _top_items(sql: str, toks: list[_Tok] | None) -> tuple[list[_Tok], list[tuple[int, int]]]:
    """The tokens read and the (first, last) token of each item of the statement's top-level
    select list: the first SELECT outside parentheses (after a WITH clause), or the first
    SELECT of a statement in parentheses.  Without ``toks``, ``sql`` is read up to the list's end."""
    read: list[_Tok] = []
    items: list[tuple[int, int]] = []
    level = first = -1              # the list's depth and its item's first token
    depth = 0
    for t in (toks if toks is not None else _lazy(sql)):
        i = len(read)
        read.append(t)
        if t.text == "(":
            depth += 1
            continue
        if t.text == ")":
            if depth == level:
                break
            depth -= 1
            continue
        word = t.word
        if level < 0:
            if word == "SELECT" and (depth == 0 or read[0].text == "("):
                level, first = depth, i + 1
            continue
        if depth != level:
            continue
        if i == first and word in ("DISTINCT", "ALL", "UNIQUE"):
            first += 1
        elif t.text == ",":
            items.append((first, i - 1))
            first = i + 1
        elif word in _LIST_END or word == "BY" and read[i - 1].word in ("GROUP", "ORDER"):
            if word == "BY":
                i -= 1
            break
    else:
        i = len(read)
    if 0 <= first < i:
        items.append((first, i - 1))
    return read, items


def _lazy(sql: str) -> Iterator[_Tok]:
    for m in _TOKEN.finditer(sql):
        if m.lastgroup not in ("ws", "comment"):
            yield _Tok(m.lastgroup, m.group(), m.start(), m.end())
