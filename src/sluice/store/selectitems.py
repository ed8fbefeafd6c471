"""The items of a statement's select lists, the heading Oracle gives an item, and the table
aliases of its FROM lists.

A rewrite that puts an expression of its own where a user wrote an item (an attribute path,
:mod:`.objpaths`; LEVEL of a hierarchy, :mod:`.sqlhierarchy`) names the item as Oracle
does with an alias, :func:`item_headings`: what the database would name it is the rewrite's.
"""

from __future__ import annotations

import re
from typing import Any, Callable

__all__ = ["item_headings", "items_rewritten", "select_items", "table_aliases"]

_BEFORE_TABLE = frozenset({"FROM", "JOIN"})
_ENDS_FROM = frozenset({"WHERE", "GROUP", "ORDER", "HAVING", "UNION", "INTERSECT", "MINUS", "EXCEPT", "CONNECT",
                        "START", "FETCH", "OFFSET", "SELECT", "SET", "ON"})
# words after a table's name that are no alias of it
_NOT_ALIAS = frozenset({"WHERE", "GROUP", "ORDER", "HAVING", "UNION", "INTERSECT", "MINUS", "EXCEPT", "JOIN",
                        "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "CONNECT", "START",
                        "FETCH", "OFFSET", "FOR", "PARTITION", "SAMPLE", "AS"})


def select_items(toks: list) -> list[tuple[int, int]]:
    """The (first, last) tokens (:func:`.sqloracle.tokens`) of every select list's items, at
    any depth."""
    depth = 0
    lists: dict[int, int] = {}      # depth -> the start of the select item being read there
    items: list[tuple[int, int]] = []
    for k, t in enumerate(toks):
        word = t.text.upper() if t.kind == "id" else t.text
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            lists.pop(depth, None)
            depth -= 1
        elif word == "SELECT":
            lists[depth] = k + 1 + (k + 1 < len(toks) and toks[k + 1].text.upper() in ("DISTINCT", "ALL", "UNIQUE"))
        elif depth in lists and word in (",", "FROM", "INTO"):
            items.append((lists[depth], k - 1))
            if word == ",":
                lists[depth] = k + 1
            else:
                del lists[depth]
    return items


def item_headings(toks: list, marked: set[int], aliased: Callable[[list, int, int], bool],
                  special: Callable[[list, int, int], str | None] = lambda toks, first, last: None
                  ) -> dict[int, str]:
    """Oracle's heading of each select item holding a ``marked`` token and no alias
    (``aliased``: :func:`.sqloracle.aliased`), by the item's last token: ``special``'s, or
    the item's text upper-cased without blanks (:mod:`.sqlheadings`), quotes doubled."""
    out: dict[int, str] = {}
    for first, last in select_items(toks):
        if first > last or not any(first <= m <= last for m in marked) or aliased(toks, first, last):
            continue
        heading = special(toks, first, last)
        if heading is None:
            heading = "".join(t.text if t.kind == "qid" else re.sub(r"\s+", "", t.text.upper())
                              for t in toks[first:last + 1])
        out[last] = heading.replace('"', '""')
    return out


def items_rewritten(text: str, toks: list, found: dict[int, "str | tuple[int, str]"],
                    headings: dict[int, str]) -> str:
    """``text`` with the tokens ``found`` names replaced by their expressions (a token
    through token ``end`` for ``(end, expression)``) and the items ``headings`` names (by
    their last token, :func:`item_headings`) given those headings."""
    out, at = [], 0
    for i, t in enumerate(toks):
        if i in found:
            end, expression = found[i] if isinstance(found[i], tuple) else (i, found[i])
            out += [text[at:t.start], expression]
            at = toks[end].end
        if i in headings:
            out += [text[at:max(at, t.end)], f' AS "{headings[i]}"']
            at = max(at, t.end)
    return "".join(out) + text[at:]


def table_aliases(toks: list, user: str, tables: Any) -> tuple[dict, list]:
    """The statement's table aliases -> what ``tables.get((owner, name))`` gives the table they
    name (None: another table; a subquery's alias the one table of ``tables`` the subquery
    reads), and the tables of ``tables`` it names (aliased or not); ``user`` the owner of a
    name without one.  (:mod:`.objpaths`: its queue tables; :mod:`.jsonpaths`: every table.)"""
    aliases: dict = {}
    named: list = []
    in_from: dict[int, bool] = {}
    opened: list[int] = []          # len(named) at each open parenthesis
    depth = 0
    prev = ""
    for k, t in enumerate(toks):
        word = t.text.upper() if t.kind == "id" else ""
        qt, table = None, False
        if t.text == "(":
            depth += 1
            opened.append(len(named))
        elif t.text == ")":
            depth -= 1
            inside = {id(q): q for q in named[opened.pop() if opened else 0:]}
            qt, table = (next(iter(inside.values())) if len(inside) == 1 else None), bool(in_from.get(depth))
        elif word == "FROM":
            in_from[depth] = True
        elif word in _ENDS_FROM:
            in_from[depth] = False
        if t.kind == "id" and (prev in _BEFORE_TABLE or prev == "," and in_from.get(depth)):
            parts = [p.strip().upper() for p in t.text.split(".")]
            qt, table = tables.get((parts[0], parts[1]) if len(parts) == 2 else (user, parts[-1])), True
            if qt is not None:
                named.append(qt)
        if table:
            following = toks[k + 1] if k + 1 < len(toks) else None
            if following is not None and following.word == "AS":
                following = toks[k + 2] if k + 2 < len(toks) else None
            if following is not None and following.kind == "id" and following.word not in _NOT_ALIAS \
                    and "." not in following.text:
                aliases[following.word] = qt
        prev = word if t.kind == "id" else t.text
    return aliases, named
