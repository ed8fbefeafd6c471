"""A sequence's NEXTVAL and CURRVAL in a user's statement (:mod:`.sequences` keeps the
sequences): what :mod:`.sqloracle` writes for ``[schema.]seq.NEXTVAL`` — ``nextval('"SEQ$OWNER.NAME"')``
on PostgreSQL, ``sluice_nextval('OWNER.NAME')`` on SQLite — the first reference of a row its
NEXTVAL, the others its CURRVAL (Oracle's one increment per row), ORA-02287 where Oracle takes
none.  Apart from :mod:`.sequences`, which reaches the stores: :mod:`.oraclecalls` needs these words.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from ..errors import ora
from .sqlschema import physical, quote

__all__ = ["again", "is_sequence_word", "named", "pg_name", "pieces", "plain_names"]

_WORD = re.compile(r"^(?:([A-Z_][A-Z0-9_$#]*)\s*\.\s*)?([A-Z_][A-Z0-9_$#]*)\s*\.\s*(NEXTVAL|CURRVAL)$")
# ``"S".NEXTVAL``, ``scott."S".nextval``, ``"SCOTT".s.CURRVAL``: a sequence word with a quoted part
# (string literals and comments matched first, to be left alone)
_PART = r'(?:"[A-Z_][A-Z0-9_$#]*"|[A-Za-z_][A-Za-z0-9_$#]*)'
_QUOTED = re.compile(rf"""'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/"""
                     rf"""|((?:{_PART}\s*\.\s*)?{_PART}\s*\.\s*(?:NEXTVAL|CURRVAL)\b)""", re.I | re.S)


def is_sequence_word(word: str) -> bool:
    """Whether an identifier token (upper case) is ``[schema.]seq.NEXTVAL`` or ``.CURRVAL``."""
    return word.endswith(("NEXTVAL", "CURRVAL")) and _WORD.match(word) is not None


def plain_names(sql: str) -> str:
    """``sql`` with the quoted parts of its sequence words unquoted where Oracle's name is
    the same unquoted (``"S".NEXTVAL`` is ``S.NEXTVAL``: an upper-case name), so that they
    are sequence words; a quoted name of another case (``"s"``) stays as it is."""
    if '".' not in sql or ("NEXTVAL" not in sql.upper() and "CURRVAL" not in sql.upper()):
        return sql
    return _QUOTED.sub(lambda m: m.group(0) if m.group(1) is None else m.group(1).replace('"', ""), sql)


def named(word: str, user: str) -> tuple[str, str, str]:
    """(owner, name, NEXTVAL | CURRVAL) of a sequence word (unqualified: ``user``'s)."""
    m = _WORD.match(word)
    assert m is not None
    return m.group(1) or user, m.group(2), m.group(3)


def pieces(toks: Sequence, i: int, user: str, sqlite: bool) -> dict[int, tuple[int, str]]:
    """What replaces the sequence word at token ``i`` of a user's statement: the first reference
    of the statement to a sequence whose NEXTVAL it names is its NEXTVAL, the others its CURRVAL
    (Oracle's one increment per row).  (Kept per statement: an executemany runs one text per row.)"""
    return dict(_pieces(tuple(toks), i, user, sqlite))


@lru_cache(maxsize=256)
def _pieces(toks: tuple, i: int, user: str, sqlite: bool) -> tuple[tuple[int, tuple[int, str]], ...]:
    owner, name, _ = named(toks[i].word, user)
    _check_place(toks, i)
    refs = [j for j, t in enumerate(toks) if t.kind == "id" and is_sequence_word(t.word)
            and named(t.word, user)[:2] == (owner, name)]
    which = "NEXTVAL" if refs[0] == i and any(named(toks[j].word, user)[2] == "NEXTVAL" for j in refs) \
        else "CURRVAL"
    key = f"{owner}.{name}"
    if sqlite:
        text = f"sluice_{which.lower()}('{key}')"
    else:
        text = f"{which.lower()}('{pg_name(owner, name)}')"
    return ((toks[i].start, (toks[i].end, text)),)


# where a clause starts in which Oracle takes no sequence number (ORA-02287)
_NOT_HERE = frozenset({"WHERE", "HAVING", "ON", "CONNECT", "START", "BY", "FROM", "JOIN", "DISTINCT", "UNIQUE",
                       "USING"})
_SELECT_ONLY = frozenset({"UNION", "INTERSECT", "MINUS", "EXCEPT", "GROUP", "ORDER"})


def _check_place(toks: Sequence, i: int) -> None:
    """ORA-02287 for a sequence word where Oracle takes none: in a WHERE, HAVING, ON, CONNECT BY
    or FROM clause, an ORDER / GROUP BY, after DISTINCT, in a subquery, in a query with GROUP
    BY, ORDER BY or a set operator; its select list, VALUES and SET (and an INSERT's query) take it."""
    j = i - 1
    while j >= 0:
        t = toks[j]
        if t.text == ")":           # a parenthesis closed before it: skipped
            depth = 0
            while j >= 0:
                depth += (toks[j].text == ")") - (toks[j].text == "(")
                if depth == 0:
                    break
                j -= 1
        elif t.word in _NOT_HERE:
            raise ora(2287)
        elif t.word == "SELECT":
            if j > 0 and toks[j - 1].text == "(":
                raise ora(2287)          # a subquery
            break
        elif t.word in ("SET", "VALUES", "RETURNING"):
            break
        j -= 1
    if toks and toks[0].word in ("SELECT", "WITH"):
        depth = 0
        for k, t in enumerate(toks):
            depth += (t.text == "(") - (t.text == ")")
            if depth == 0 and t.word in _SELECT_ONLY and (
                    t.word not in ("GROUP", "ORDER") or k + 1 < len(toks) and toks[k + 1].word == "BY"):
                raise ora(2287)


def again(text: str) -> str:
    """A replacement's text as a rewrite writing its operand a second time writes it (DECODE's
    searches, TO_CHAR's overflow check: :mod:`.oraclecalls`' ``Copy``): a NEXTVAL piece is its
    CURRVAL there, the row's value drawn once."""
    if text.startswith(("nextval('", "sluice_nextval('")):
        return text.replace("nextval(", "currval(", 1)
    return text


def pg_name(owner: str, name: str) -> str:
    """The PostgreSQL sequence of Oracle's ``owner.name`` (quoted)."""
    return quote(physical(f"SEQ${owner}.{name}"))
