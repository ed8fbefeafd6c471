"""A hierarchical query over a join: the join first, as Oracle evaluates it.

Oracle SQL Reference, "Hierarchical Queries": "If the FROM clause contains a join, Oracle first
performs the join, then the CONNECT BY"; "If the WHERE clause contains a join, Oracle first
applies any join predicates, then CONNECT BY, then the remaining WHERE predicates".
:mod:`.sqlhierarchy` builds a hierarchy over one row source, so a block whose FROM is tables
joined by ``JOIN … ON`` / ``USING`` (inner or outer) or by commas is first written over one:
:func:`joined_block` makes the FROM ``(SELECT a.c AS A__C, … FROM <the join> [WHERE <the
join predicates>]) sluice_j`` (every column of each table, looked up by :mod:`.usercolumns`)
and each reference to a column in the block's other clauses ``sluice_j.A__C`` — ``a.c`` by its
alias (or table name), a bare ``c`` by the one table that has it.  For a comma join the WHERE's
ANDed terms naming two tables' columns (and no pseudo-column) are its join predicates, moved
into the subquery; the rest stay after the hierarchy (a WHERE with a top-level OR is all
after).  The block is then an ordinary hierarchy over that subquery.  A table whose columns are
not known (a subquery, a view Sluice has not) is SLU-00001; a bare name two tables have is the
database's error.
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


def joined_block(text: str, toks: list, depth: list[int], first: int, last: int,
                 clauses: dict[str, tuple[int, int]], columns: Lookup | None) -> str | None:
    """``text`` with the hierarchical block at tokens ``first``..``last`` (its clauses'
    tokens ``clauses``, by first word) over its join as one subquery (see the module); None
    when its FROM is no join."""
    f, l = clauses["FROM"]
    d = depth[first]
    words = [t.text.upper() if t.kind == "id" else "" for t in toks]
    joins = any(depth[k] == d and words[k] == "JOIN" for k in range(f, l + 1))
    commas = any(depth[k] == d and toks[k].text == "," for k in range(f, l + 1))
    if not (joins or commas):
        return None
    if joins and commas:
        raise not_supported("a hierarchical query over a comma join and JOIN together (write one of them)")
    if columns is None:
        raise not_supported("a hierarchical query over a join whose tables' columns are not known")
    tables: list[tuple[str, str]] = []      # (alias upper-cased, table name upper-cased)
    for k in range(f, l + 1):
        if depth[k] == d and (k == f or words[k - 1] == "JOIN" or toks[k - 1].text == ","):
            t = toks[k]
            if t.kind != "id" or words[k] in _JOINS or k + 1 <= l and toks[k + 1].text == "(":
                raise not_supported("a hierarchical query over a join of other than tables and views")
            name = t.text.rpartition(".")[2].strip().upper()
            n = k + 1 + (k + 1 <= l and words[k + 1] == "AS")
            alias = words[n] if n <= l and toks[n].kind == "id" and words[n] not in _CLAUSE_END else name
            tables.append((alias, name))
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
    drop: set[int] = set()          # tokens of the WHERE's join predicates (and their AND), gone
    where = ""
    if commas and "WHERE" in clauses:
        joined = _join_terms(toks, words, depth, d, *clauses["WHERE"], known, owners)
        where = " WHERE " + " AND ".join(text[toks[a].start:toks[b].end] for a, b in joined) if joined else ""
        drop = _dropped(words, *clauses["WHERE"], joined)
    items = ", ".join(f"{a}.{c} AS {a}__{c}" for a, names in known.items() for c in names)
    source = f"(SELECT {items} FROM {text[toks[f].start:toks[l].end]}{where}) sluice_j"
    nested = _subqueries(toks, first, last)
    out, at, k = [], toks[first].start, first
    while k <= last:
        t = toks[k]
        if k == f:                  # the join: one subquery
            out += [text[at:t.start], source]
            at, k = toks[l].end, l + 1
            continue
        k += 1
        if k - 1 in drop:
            out.append(text[at:t.start])
            at = t.end
            continue
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


_PSEUDO = frozenset({"LEVEL", "PRIOR", "ROWNUM", "CONNECT_BY_ROOT", "CONNECT_BY_ISLEAF", "CONNECT_BY_ISCYCLE",
                     "SYS_CONNECT_BY_PATH"})


def _join_terms(toks: list, words: list[str], depth: list[int], d: int, wf: int, wl: int, known: dict,
                owners: dict) -> list[tuple[int, int]]:
    """The terms of the WHERE clause (tokens ``wf``..``wl``, ANDed at depth ``d``; the whole
    clause when it has an OR there) that are join predicates: they name two tables' columns and
    no pseudo-column of the hierarchy."""
    terms, start, between = [], wf, 0
    for k in range(wf, wl + 1):
        if depth[k] != d:
            continue
        if words[k] == "OR":
            return []
        if words[k] == "BETWEEN":
            between += 1
        elif words[k] == "AND" and between:
            between -= 1
        elif words[k] == "AND":
            terms.append((start, k - 1))
            start = k + 1
    terms.append((start, wl))
    joined = []
    for a, b in terms:
        tables: set[str] = set()
        for k in range(a, b + 1):
            if words[k] in _PSEUDO:
                break
            parts = [p.strip().upper() for p in toks[k].text.split(".")] if toks[k].kind == "id" else []
            if len(parts) == 2 and parts[0] in known:
                tables.add(parts[0])
            elif len(parts) == 1 and len(owners.get(parts[0], ())) == 1:
                tables.add(owners[parts[0]][0])
        else:
            if len(tables) > 1:
                joined.append((a, b))
    return joined


def _dropped(words: list[str], wf: int, wl: int, joined: list[tuple[int, int]]) -> set[int]:
    """The tokens to take out of a WHERE clause (tokens ``wf``..``wl``) with its ``joined``
    terms: each term and an AND beside it, the WHERE itself when nothing is left."""
    drop: set[int] = set()
    for a, b in joined:
        drop.update(range(a, b + 1))
        if a > wf and words[a - 1] == "AND" and a - 1 not in drop:
            drop.add(a - 1)
        elif b < wl and words[b + 1] == "AND":
            drop.add(b + 1)
    if all(k in drop for k in range(wf, wl + 1)):
        drop.add(wf - 1)
    return drop


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
