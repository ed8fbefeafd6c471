"""A DDL LCR's text: the one statement of a client's query string that made the change.

PostgreSQL's event trigger sees only the client's whole query string (``current_query()``),
and a client may send several statements in one (``CREATE TABLE a (…); CREATE TABLE b
(…)`` in one simple query).  Oracle's DDL LCR holds the statement that ran; with the whole
string in each, an apply process would run all of it for every LCR (the second ``CREATE
TABLE a`` fails, and into the error queue the transaction goes).

So the trigger numbers its messages per command tag within one query string (``n``: the
second ``CREATE TABLE`` event of that string is 2), and :func:`statement_text` picks the
n-th statement of the string that begins with that tag — only when that statement also
names the object (or its base table), the check that the count did not drift (DDL run
from inside a statement, a ``DO`` block's ``EXECUTE``, fires events the text does not
show).  Otherwise the LCR keeps the whole string, as before: never a wrong statement.
"""

from __future__ import annotations

import re

# words between CREATE and the object kind that are no part of PostgreSQL's command tag
_MODIFIERS = frozenset({"OR", "REPLACE", "GLOBAL", "LOCAL", "TEMP", "TEMPORARY", "UNLOGGED",
                        "UNIQUE", "TRUSTED", "PROCEDURAL", "DEFAULT", "CONSTRAINT", "RECURSIVE"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9$]*")
# a word, after white space and comments (the leading words of a statement)
_LEADING_WORD = re.compile(r"(?:\s|--[^\n]*(?:\n|$)|/\*.*?\*/)*([A-Za-z_]+)\b", re.S)
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z_0-9]*)?\$")


def split_statements(text: str) -> list[str]:
    """The statements of a PostgreSQL query string, split at ``;`` outside string
    constants (``'…'``, ``E'…'`` with backslash escapes, ``$tag$…$tag$``), quoted
    identifiers, comments (``--``, nested ``/* */``) and a ``BEGIN ATOMIC … END`` body;
    each stripped, empty ones left out."""
    out: list[str] = []
    start = 0
    depth = 0                       # BEGIN ATOMIC … END (and CASE … END inside it)
    previous = ""
    for kind, i, j in _tokens(text):
        if kind == "word":
            word = text[i:j].upper()
            if word == "ATOMIC" and previous == "BEGIN":
                depth += 1
            elif depth and word == "CASE":
                depth += 1
            elif depth and word == "END":
                depth -= 1
            previous = word
        elif kind == ";" and not depth:
            out.append(text[start:i].strip())
            start = j
    out.append(text[start:].strip())
    return [s for s in out if s]


def _tokens(text: str):
    """``(kind, start, end)`` of the lexical pieces of ``text`` that matter here: kinds
    ``comment``, ``string`` (any string constant), ``quoted`` (a quoted identifier),
    ``word``, ``;``; white space and other characters are left out."""
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        start = i
        if ch == "-" and text.startswith("--", i):
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
            yield "comment", start, i
        elif ch == "/" and text.startswith("/*", i):
            i = _comment_end(text, i)
            yield "comment", start, i
        elif ch == "'":
            i = _string_end(text, i, escapes=False)
            yield "string", start, i
        elif ch == '"':
            close = text.find('"', i + 1)
            while close >= 0 and text.startswith('""', close):
                close = text.find('"', close + 2)
            i = n if close < 0 else close + 1
            yield "quoted", start, i
        elif ch == "$" and (m := _DOLLAR.match(text, i)):
            close = text.find(m.group(0), m.end())
            i = n if close < 0 else close + len(m.group(0))
            yield "string", start, i
        elif ch == ";":
            i += 1
            yield ";", start, i
        elif ch.isalpha() or ch == "_":
            i = _WORD.match(text, i).end()
            if i < n and text[i] == "'" and text[start:i] in ("E", "e"):   # E'…': escapes
                i = _string_end(text, i, escapes=True)
                yield "string", start, i
            else:
                yield "word", start, i
        elif ch.isdigit():          # a number (and a word char after it is part of it)
            while i < n and (text[i].isalnum() or text[i] in "_$."):
                i += 1
        else:
            i += 1


def statement_text(query: str | None, tag: str, n: int | None, names: tuple[str | None, ...]) -> str | None:
    """The statement of ``query`` the ``n``-th ``tag`` event of it came from (see the
    module's docstring), or ``query`` itself when it holds one statement or none
    qualifies.  ``names``: the object's and its base table's names as the catalog spells
    them; the statement must name one of them."""
    if not query or not n or ";" not in query:
        return query
    statements = split_statements(query)
    if len(statements) < 2:
        return query
    want = tag.upper().split()
    matching = [s for s in statements if _tag_words(s, len(want)) == want]
    if n > len(matching):
        return query
    chosen = _without_leading_comments(matching[n - 1])
    spelled = _identifiers(chosen)
    return chosen if any(name and name in spelled for name in names) else query


def _tag_words(statement: str, count: int) -> list[str]:
    """The first ``count`` words of ``statement`` as a command tag has them (upper-cased,
    CREATE's modifiers such as ``OR REPLACE`` / ``TEMP`` / ``UNIQUE`` left out)."""
    words: list[str] = []
    i = 0
    while len(words) < count:
        m = _LEADING_WORD.match(statement, i)
        if m is None:
            break
        i = m.end()
        word = m.group(1).upper()
        if not (words and words[0] == "CREATE" and word in _MODIFIERS):
            words.append(word)
    return words


def _identifiers(statement: str) -> set[str]:
    """The names ``statement`` spells, as the catalog keeps them: unquoted ones folded to
    lower case, quoted ones as written (a doubled quote one quote)."""
    names: set[str] = set()
    for kind, i, j in _tokens(statement):
        if kind == "word":
            names.add(statement[i:j].lower())
        elif kind == "quoted":
            names.add(statement[i + 1:j - 1].replace('""', '"'))
    return names


def _without_leading_comments(statement: str) -> str:
    """``statement`` from its first word on (a comment before it belongs to the statement
    before, or to none)."""
    i = 0
    while True:
        i = len(statement) - len(statement[i:].lstrip())
        if statement.startswith("--", i):
            nl = statement.find("\n", i)
            i = len(statement) if nl < 0 else nl + 1
        elif statement.startswith("/*", i):
            i = _comment_end(statement, i)
        else:
            return statement[i:]


def _comment_end(text: str, i: int) -> int:
    level, i = 1, i + 2
    while i < len(text) and level:
        if text.startswith("/*", i):
            level, i = level + 1, i + 2
        elif text.startswith("*/", i):
            level, i = level - 1, i + 2
        else:
            i += 1
    return i


def _string_end(text: str, i: int, escapes: bool) -> int:
    i += 1
    while i < len(text):
        ch = text[i]
        if escapes and ch == "\\":
            i += 2
        elif ch == "'":
            if text.startswith("''", i):
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return i
