"""The items of a statement's select lists, and the heading Oracle gives an item.

A rewrite that puts an expression of its own where a user wrote an item (an attribute path,
:mod:`.objpaths`; LEVEL of a hierarchy, :mod:`.sqlhierarchy`) names the item as Oracle
does with an alias, :func:`item_headings`: what the database would name it is the rewrite's.
"""

from __future__ import annotations

import re
from typing import Callable

__all__ = ["item_headings", "select_items"]


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
