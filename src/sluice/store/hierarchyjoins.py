"""A hierarchical query over a join: the join first, as Oracle evaluates it.

Oracle SQL Reference, "Hierarchical Queries": "If the FROM clause contains a join, Oracle first
performs the join, then the CONNECT BY".  :mod:`.sqlhierarchy` builds a hierarchy over one row
source, so a block whose FROM is tables joined by ``JOIN … ON`` / ``USING`` (inner or outer) is
first written over one: :func:`joined_block` makes the FROM ``(SELECT a.c AS A__C, … FROM <the
join>) sluice_j`` (every column of each table, looked up by :mod:`.usercolumns`) and each
reference to a column in the block's other clauses ``sluice_j.A__C`` — ``a.c`` by its alias
(or table name), a bare ``c`` by the one table that has it.  The block is then an ordinary
hierarchy over that subquery.  A table whose columns are not known (a subquery, a view Sluice
has not) or a name two tables have left bare stays SLU-00001 / the database's error; a comma
join (whose WHERE join predicates Oracle applies before the hierarchy and the rest after)
stays refused.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import not_supported
from .usercolumns import Lookup

__all__ = ["joined_block"]

_JOINS = frozenset({"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL"})
_CLAUSE_END = frozenset({"ON", "USING"}) | _JOINS
_LIST_START = frozenset({"SELECT", "DISTINCT", "UNIQUE", "ALL"})
# words after which a bare name is an alias, not a column (an expression ended before it)
_KEYWORDS = frozenset({"SELECT", "DISTINCT", "UNIQUE", "ALL", "WHERE", "AND", "OR", "NOT", "BY", "PRIOR", "WITH",
                       "ON", "WHEN", "THEN", "ELSE", "CASE", "IN", "IS", "LIKE", "BETWEEN", "HAVING", "NOCYCLE",
                       "CONNECT_BY_ROOT", "SIBLINGS", "START", "CONNECT", "ORDER", "GROUP", "ESCAPE", "END",
                       "ASC", "DESC", "NULLS", "FIRST", "LAST", "EXISTS", "ANY", "SOME"})


def joined_block(text: str, toks: list, depth: list[int], first: int, last: int, from_: tuple[int, int],
                 columns: Lookup | None) -> str | None:
    """``text`` with the hierarchical block at tokens ``first``..``last`` (its FROM clause
    ``from_``) over its ANSI join as one subquery (see the module); None when its FROM is no
    such join."""
    f, l = from_
    d = depth[first]
    words = [t.text.upper() if t.kind == "id" else "" for t in toks]
    if not any(depth[k] == d and words[k] == "JOIN" for k in range(f, l + 1)):
        return None
    if any(depth[k] == d and toks[k].text == "," for k in range(f, l + 1)):
        return None         # (a comma join too: refused by sqlhierarchy)
    if columns is None:
        raise not_supported("a hierarchical query over a join whose tables' columns are not known")
    tables: list[tuple[str, str]] = []      # (alias upper-cased, table name upper-cased)
    k = f
    while k <= l:
        if depth[k] == d and (k == f or words[k - 1] == "JOIN"):
            t = toks[k]
            if t.kind != "id" or words[k] in _JOINS or k + 1 <= l and toks[k + 1].text == "(":
                raise not_supported("a hierarchical query over a join of other than tables and views")
            name = t.text.rpartition(".")[2].strip().upper()
            n = k + 1 + (k + 1 <= l and words[k + 1] == "AS")
            alias = words[n] if n <= l and toks[n].kind == "id" and words[n] not in _CLAUSE_END else name
            tables.append((alias, name))
        k += 1
    known: dict[str, list[str]] = {}
    for alias, name in tables:
        names = [c.upper() for c in columns([name])]
        if not names:
            raise not_supported(f"a hierarchical query over a join of {name} (its columns are not known)")
        known[alias] = names
    owners: dict[str, list[str]] = {}
    for alias, names in known.items():
        for c in names:
            owners.setdefault(c, []).append(alias)
    items = ", ".join(f"{a}.{c} AS {a}__{c}" for a, names in known.items() for c in names)
    source = f"(SELECT {items} FROM {text[toks[f].start:toks[l].end]}) sluice_j"
    nested = _subqueries(toks, first, last)
    out, at, k = [], toks[first].start, first
    while k <= last:
        t = toks[k]
        if k == f:                  # the join: one subquery
            out += [text[at:t.start], source]
            at, k = toks[l].end, l + 1
            continue
        k += 1
        if k - 1 in nested or t.kind != "id" or k <= last and toks[k].text == "(":
            continue
        parts = [p.strip().upper() for p in t.text.split(".")]
        if len(parts) == 2 and parts[0] in known and parts[1] in known[parts[0]]:
            column = f"sluice_j.{parts[0]}__{parts[1]}"
        elif len(parts) == 1 and len(owners.get(parts[0], ())) == 1 and not _an_alias(toks, words, k - 1):
            column = f"sluice_j.{owners[parts[0]][0]}__{parts[0]}"
        else:
            continue
        if k - 1 < f and depth[k - 1] == d and (toks[k - 2].text == "," or words[k - 2] in _LIST_START) and (
                toks[k].text == "," or words[k] == "FROM"):
            column += f' AS "{parts[-1]}"'      # a column alone: Oracle's heading, not the rewrite's
        out += [text[at:t.start], column]
        at = t.end
    return text[:toks[first].start] + "".join(out) + text[at:]


def _an_alias(toks: Sequence, words: list[str], k: int) -> bool:
    """Whether the bare name at token ``k`` is an alias (an expression ends just before it, or
    AS)."""
    if k == 0:
        return False
    prev = toks[k - 1]
    if words[k - 1] == "AS":
        return True
    return prev.kind in ("qid", "num", "str") or prev.text == ")" or prev.kind == "id" and words[k - 1] not in _KEYWORDS


def _subqueries(toks: list, first: int, last: int) -> set[int]:
    """The tokens of the subqueries inside the block (their names are their own)."""
    inside: set[int] = set()
    stack: list[tuple[int, bool]] = []
    for k in range(first + 1, last + 1):
        t = toks[k]
        if t.text == "(":
            stack.append((k, k + 1 <= last and toks[k + 1].text.upper() in ("SELECT", "WITH")))
        elif t.text == ")" and stack:
            start, query = stack.pop()
            if query:
                inside.update(range(start, k + 1))
    return inside
