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

It also tells which items are Oracle DATEs (``SYSDATE``, ``CURRENT_DATE`` and their
arithmetic) and TIMESTAMP WITH TIME ZONE (``SYSTIMESTAMP``, ``CURRENT_TIMESTAMP``),
which both databases return as timestamps.
"""

from __future__ import annotations

import re

from ..objtypes import DB_TYPE_DATE, DB_TYPE_TIMESTAMP_TZ, DbType
from .sqloracle import _LIST_END, Translated, _Tok, aliased, tokens

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
    toks = oracle.toks if oracle.toks is not None else tokens(sql)
    items = _top_items(toks)
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
        dbtype = _clock_type(toks, first, last)
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


def _clock_type(toks: list[_Tok], first: int, last: int) -> DbType | None:
    """DATE for an item of SYSDATE or CURRENT_DATE (and literal days or intervals), TIMESTAMP
    WITH TIME ZONE for SYSTIMESTAMP or CURRENT_TIMESTAMP; None for any other item."""
    words = [t.word for t in toks[first:last + 1] if t.kind == "id"]
    clocks = {_CLOCK_TYPES[w] for w in words if w in _CLOCK_TYPES}
    if len(clocks) != 1 or any(w not in _CLOCK_TYPES and w not in _UNITS for w in words):
        return None
    return clocks.pop()


def _top_items(toks: list[_Tok]) -> list[tuple[int, int]]:
    """(first, last) token of each item of the statement's top-level select list: the first
    SELECT outside parentheses (after a WITH clause), else the first SELECT."""
    depths, depth = [], 0
    for t in toks:
        depth += t.text == "("
        depths.append(depth)
        depth -= t.text == ")"
    selects = [i for i, t in enumerate(toks) if t.word == "SELECT"]
    if not selects:
        return []
    start = next((i for i in selects if depths[i] == 0), selects[0])
    level = depths[start]
    i = start + 1
    if i < len(toks) and toks[i].word in ("DISTINCT", "ALL", "UNIQUE"):
        i += 1
    items, first = [], i
    while i < len(toks):
        t, d = toks[i], depths[i]
        if d < level or d == level and t.text == ")":
            break
        if d == level and (t.word in _LIST_END or t.word in ("GROUP", "ORDER") and i + 1 < len(toks)
                           and toks[i + 1].word == "BY"):
            break
        if d == level and t.text == ",":
            items.append((first, i - 1))
            first = i + 1
        i += 1
    if first < i:
        items.append((first, i - 1))
    return items
