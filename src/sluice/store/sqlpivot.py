"""Oracle's PIVOT and UNPIVOT in a user's SQL, as a derived table of CASE expressions.

A statement typed at a cursor, once :mod:`.sqloracle` has answered Oracle's words in it, is
read again here (first of the rewrites of :func:`.sqloracle._limited`: the derived table
is then a plain subquery to the others) and :func:`pivoted` rewrites each ``source PIVOT
(…) [alias]`` / ``source UNPIVOT (…) [alias]`` of its FROM clauses (``source`` a user's
table, its columns looked up, :mod:`.usercolumns`, or a subquery — or a WITH clause's
query — whose select list names its columns), as Oracle's SQL Language Reference (SELECT, pivot_clause / unpivot_clause)
has them:

* ``PIVOT (agg(expr) [[AS] a], … FOR col IN (v [[AS] n], …))`` and ``FOR (c1, c2) IN ((v1,
  v2) [[AS] n], …)``: ``(SELECT g…, agg(CASE WHEN col = v THEN expr END) AS name, … FROM
  source GROUP BY g…)``, the ``g`` the source's columns neither an aggregate nor the FOR
  clause names (Oracle's implicit GROUP BY; none: one row); ``COUNT(*)`` counts the rows
  matching.  The columns, in Oracle's order (each value's, its aggregates in theirs), are
  named as Oracle names them: the value's alias (upper-cased unless quoted) or its text
  (``'A'``, ``10``; several values' texts joined by ``_``), then ``_`` and the aggregate's
  alias when it has one (``'z' AS z`` with ``count(*) AS cnt`` is ``Z_CNT``).  Two columns
  of one name are ORA-00918.
* ``UNPIVOT [INCLUDE | EXCLUDE NULLS] (v FOR n IN (a [AS 'A'], …))`` (``(v1, v2)`` / ``(n1,
  n2)`` and ``(a1, a2) AS ('x', 'y')`` for several): each source row once per IN entry — the
  source's other columns, ``n`` the entry's literal (its columns' names when it has none,
  joined by ``_``), ``v`` the entry's values — in that order, a source row's entries
  together as Oracle gives them (the source crossed with the entries' numbers, the source
  first); EXCLUDE NULLS (the default) leaves out the rows whose values are all NULL.

Refused (SLU-00001): PIVOT XML, ANY or a subquery in the IN list, an aggregate of more than
one argument, a source whose columns are not known (``*`` over a join, an expression
without an alias in its select list).
"""

from __future__ import annotations

import re
from typing import Callable

from ..errors import not_supported, ora
from .usercolumns import Lookup

__all__ = ["pivoted"]

_PLAIN = re.compile(r"^[A-Z][A-Z0-9_$#]*$")
# words after a PIVOT / UNPIVOT clause that are not its alias
_NOT_ALIAS = frozenset({"WHERE", "GROUP", "HAVING", "ORDER", "FETCH", "OFFSET", "LIMIT", "CONNECT", "START",
                        "FOR", "WINDOW", "UNION", "INTERSECT", "EXCEPT", "MINUS", "JOIN", "INNER", "LEFT",
                        "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "OUTER", "PIVOT", "UNPIVOT"})

# what follows the words of a clause (a column named PIVOT is none)
_AFTER = {"PIVOT": ("XML",), "UNPIVOT": ("INCLUDE", "EXCLUDE")}


def pivoted(text: str, sqlite: bool, tokens: Callable[[str], list], columns: Lookup | None) -> str:
    """``text`` with each PIVOT / UNPIVOT clause as a derived table the store answers (see the
    module); ``tokens`` reads a statement's tokens (:func:`.sqloracle.tokens`), ``columns``
    looks up a user's table's columns (:mod:`.usercolumns`)."""
    if "PIVOT" not in text.upper():
        return text
    n = 0
    while True:     # the first clause's source holds no other: one at a time, re-read
        toks = tokens(text)
        at = next((i for i, t in enumerate(toks) if t.word in _AFTER and i > 0
                   and i + 1 < len(toks) and (toks[i + 1].text == "(" or toks[i + 1].word in _AFTER[t.word])), None)
        if at is None:
            return text
        n += 1
        text = _Clause(text, toks, at, sqlite, columns, n).rewrite()


class _Clause:
    def __init__(self, text: str, toks: list, at: int, sqlite: bool, columns: Lookup | None, n: int) -> None:
        self.text, self.toks, self.at, self.sqlite, self.lookup, self.n = text, toks, at, sqlite, columns, n
        self.match: dict[int, int] = {}
        stack = []
        for i, t in enumerate(toks):
            if t.text == "(":
                stack.append(i)
            elif t.text == ")" and stack:
                self.match[stack.pop()] = i
        self.before = {close: open_ for open_, close in self.match.items()}

    def rewrite(self) -> str:
        toks, at = self.toks, self.at
        first, source = self._source()
        k = at + 1
        nulls = "EXCLUDE"
        if toks[at].word == "PIVOT" and toks[k].word == "XML":
            raise not_supported("PIVOT XML in SQL")
        if toks[at].word == "UNPIVOT" and toks[k].word in ("INCLUDE", "EXCLUDE"):
            if toks[k + 1].word != "NULLS":
                raise ora(933)
            nulls, k = toks[k].word, k + 2
        if toks[k].text != "(" or k not in self.match:
            raise ora(906)
        close = self.match[k]
        end, alias = close, f"sluice_pv{self.n}"
        if close + 1 < len(toks) and (toks[close + 1].kind == "qid" or toks[close + 1].kind == "id"
                                      and toks[close + 1].word not in _NOT_ALIAS and "." not in toks[close + 1].text):
            end, alias = close + 1, toks[close + 1].text
        names = self._source_columns()
        if toks[at].word == "PIVOT":
            body = self._pivot(k + 1, close, source, names)
        else:
            body = self._unpivot(k + 1, close, source, names, nulls == "INCLUDE")
        return f"{self.text[:toks[first].start]}({body}) {alias}{self.text[toks[end].end:]}"

    # -- the source ----------------------------------------------------------------------
    def _source(self) -> tuple[int, str]:
        """The first token of the clause's source and its text (with an alias it has)."""
        toks, k = self.toks, self.at - 1
        last = k
        if (toks[k].kind == "qid" or toks[k].kind == "id" and "." not in toks[k].text) and k > 0 and (
                toks[k - 1].text == ")" or toks[k - 1].kind in ("id", "qid") and toks[k - 2].word in ("FROM", "JOIN")
                or toks[k - 1].kind in ("id", "qid") and toks[k - 2].text == ","):
            k -= 1              # an alias of the source
        if toks[k].text == ")":
            k = self.before.get(k, -1)
            if k < 0 or toks[k + 1].word not in ("SELECT", "WITH"):
                raise not_supported("this PIVOT / UNPIVOT source in SQL")
        elif toks[k].kind not in ("id", "qid"):
            raise not_supported("this PIVOT / UNPIVOT source in SQL")
        return k, self.text[toks[k].start:toks[last].end]

    def _source_columns(self) -> list[str]:
        """The source's columns, upper-cased unless quoted, in its order."""
        toks, first = self.toks, self._source()[0]
        if toks[first].text != "(":
            first = self._with_query(toks[first])
            if first is None:
                return self._table_columns(self.toks[self._source()[0]])
        return self._query_columns(first)

    def _with_query(self, t) -> int | None:
        """The parenthesis opening the WITH clause's query named as the token ``t`` names
        (None: no such query)."""
        if t.kind != "id" or "." in t.text:
            return None
        toks = self.toks
        return next((k + 2 for k in range(1, len(toks) - 2)
                     if toks[k].word == t.word and toks[k + 1].word == "AS" and toks[k + 2].text == "("
                     and (toks[k - 1].word == "WITH" or toks[k - 1].text == ",")), None)

    def _query_columns(self, first: int) -> list[str]:
        """The columns of the subquery in the parentheses opening at token ``first``."""
        toks = self.toks
        close = self.match[first]
        if toks[first + 1].word != "SELECT":
            raise not_supported("a WITH subquery as a PIVOT / UNPIVOT source in SQL")
        k = first + 2 + (toks[first + 2].word in ("DISTINCT", "UNIQUE", "ALL"))
        names: list[str] = []
        start = k
        while k < close:
            t = toks[k]
            if t.text == "(":
                k = self.match[k] + 1
                continue
            if t.text == "," or t.word == "FROM":
                names.extend(self._item_names(start, k - 1, k, close))
                start = k + 1
                if t.word == "FROM":
                    break
            k += 1
        return names

    def _item_names(self, first: int, last: int, from_: int, close: int) -> list[str]:
        toks = self.toks
        if toks[last].text == "*":
            table = toks[from_ + 1]
            if toks[from_ + 2].text == "," or toks[from_ + 2].word in ("JOIN", "INNER", "LEFT", "CROSS", "FULL",
                                                                         "RIGHT", "NATURAL") or table.text == "(":
                raise not_supported("SELECT * over a join as a PIVOT / UNPIVOT source in SQL (name the columns)")
            return self._table_columns(table)
        t = toks[last]
        if t.kind == "qid":
            return [t.text[1:-1].replace('""', '"')]
        if t.kind == "id" and (first == last or toks[last - 1].word == "AS" or toks[last - 1].text == ")"
                               or toks[last - 1].kind in ("id", "qid", "num", "str")):
            return [t.word.rpartition(".")[2].strip()]
        raise not_supported("an expression without an alias in a PIVOT / UNPIVOT source in SQL (name it)")

    def _table_columns(self, t) -> list[str]:
        name = t.text[1:-1] if t.kind == "qid" else t.word.rpartition(".")[2].strip()
        found = list(self.lookup([name])) if self.lookup is not None else []
        if not found:
            raise ora(942)
        return found

    # -- PIVOT ---------------------------------------------------------------------------
    def _pivot(self, start: int, close: int, source: str, names: list[str]) -> str:
        toks = self.toks
        at_for = next((k for k in range(start, close) if toks[k].word == "FOR" and self._top(k, start)), None)
        if at_for is None:
            raise ora(905)
        aggregates = []         # (call's text with {} for the argument, alias or None)
        used: set[str] = set()
        for a, b in self._split(start, at_for):
            fn = toks[a]
            if fn.kind != "id" or toks[a + 1].text != "(" or self.match.get(a + 1, -1) not in (b, b - 1, b - 2):
                raise ora(56902)
            inner = self.match[a + 1]
            alias = self._name(toks[b]) if inner < b else None
            args = self._split(a + 2, inner)
            if len(args) != 1:
                raise not_supported("a PIVOT aggregate of more than one argument in SQL")
            x, y = args[0]
            prefix = ""
            if toks[x].word in ("DISTINCT", "ALL"):
                prefix, x = toks[x].word + " ", x + 1
            arg = "1" if x == y and toks[x].text == "*" else self._slice(x, y)
            used |= self._names_in(x, y)
            aggregates.append((f"{self._slice(a, a)}({prefix}CASE WHEN {{}} THEN {arg} END)", alias))
        k = at_for + 1
        if toks[k].text == "(":
            fors = [self._slice(x, y) for x, y in self._split(k + 1, self.match[k])]
            used |= self._names_in(k + 1, self.match[k] - 1)
            k = self.match[k] + 1
        else:
            fors = [self._slice(k, k)]
            used |= self._names_in(k, k)
            k += 1
        if toks[k].word != "IN" or toks[k + 1].text != "(":
            raise ora(905)
        if toks[k + 2].word in ("ANY", "SELECT"):
            raise not_supported("PIVOT … IN (ANY | subquery) in SQL")
        items, out = [], []
        for x, y in self._split(k + 2, self.match[k + 1]):
            name = None
            if toks[y].kind in ("id", "qid") and y > x:
                name, y = self._name(toks[y]), y - 1 - (toks[y - 1].word == "AS")
            if toks[x].text == "(" and self.match.get(x) == y:
                values = [self._slice(p, q) for p, q in self._split(x + 1, y)]
            else:
                values = [self._slice(x, y)]
            if len(values) != len(fors):
                raise ora(913 if len(values) > len(fors) else 947)
            if name is None:
                name = "_".join(v.upper() for v in values)
            items.append((name, " AND ".join(f"{c} = {v}" for c, v in zip(fors, values))))
        heads = []
        for name, condition in items:
            for call, alias in aggregates:
                head = f"{name}_{alias}" if alias else name
                heads.append(head)
                out.append(f"{call.format(condition)} AS {self._out(head)}")
        if len(set(heads)) != len(heads):
            raise ora(918)
        groups = [c for c in names if c not in used]
        keys = ", ".join(self._ref(c) for c in groups)
        items_sql = ", ".join(([keys] if keys else []) + out)
        return f"SELECT {items_sql} FROM {source}" + (f" GROUP BY {keys}" if keys else "")

    # -- UNPIVOT -------------------------------------------------------------------------
    def _unpivot(self, start: int, close: int, source: str, names: list[str], include: bool) -> str:
        toks = self.toks
        values, k = self._names_at(start)
        if toks[k].word != "FOR":
            raise ora(905)
        fors, k = self._names_at(k + 1)
        if toks[k].word != "IN" or toks[k + 1].text != "(" or self.match.get(k + 1) != close - 1:
            raise ora(905)
        entries, used = [], set()
        for x, y in self._split(k + 2, close - 1):
            literals = None
            as_ = next((p for p in range(x, y + 1) if toks[p].word == "AS" and self._top(p, x)), None)
            if as_ is not None:
                if toks[as_ + 1].text == "(":
                    literals = [self._slice(p, q) for p, q in self._split(as_ + 2, y)]
                else:
                    literals = [self._slice(as_ + 1, y)]
                y = as_ - 1
            if toks[x].text == "(":
                cols = [self._slice(p, q) for p, q in self._split(x + 1, y)]
            else:
                cols = [self._slice(x, y)]
            used |= self._names_in(x, y)
            if literals is None:
                if len(fors) != 1:
                    raise not_supported("UNPIVOT of several FOR columns without AS (…) in SQL")
                literals = ["'" + "_".join(c.upper().replace("'", "''") for c in cols) + "'"]
            if len(cols) != len(values) or len(literals) != len(fors):
                raise ora(913 if len(cols) > len(values) or len(literals) > len(fors) else 947)
            entries.append((cols, literals))
        kept = [self._ref(c) for c in names if c not in used]

        def case(pick) -> str:
            return "CASE sluice_k.n " + " ".join(f"WHEN {e + 1} THEN {pick(entry)}"
                                                 for e, entry in enumerate(entries)) + " END"
        outs = [f"{case(lambda entry, j=j: entry[1][j])} AS {self._out(name)}" for j, name in enumerate(fors)]
        outs += [f"{case(lambda entry, j=j: entry[0][j])} AS {self._out(name)}" for j, name in enumerate(values)]
        numbers = " UNION ALL ".join(f"SELECT {e + 1} AS n" for e in range(len(entries)))
        body = (f"SELECT {', '.join(kept + outs)} FROM {source} CROSS JOIN ({numbers}) sluice_k")
        if include:
            return body
        present = " OR ".join(f"{self._ref(v)} IS NOT NULL" for v in values)
        return f"SELECT * FROM ({body}) sluice_u WHERE {present}"

    def _names_at(self, k: int) -> tuple[list[str], int]:
        """The name or parenthesised names at token ``k``, and the token after them."""
        toks = self.toks
        if toks[k].text == "(":
            close = self.match[k]
            return [self._name(toks[p]) for p, _ in self._split(k + 1, close)], close + 1
        if toks[k].kind not in ("id", "qid"):
            raise ora(904)
        return [self._name(toks[k])], k + 1

    # -- pieces --------------------------------------------------------------------------
    def _top(self, k: int, start: int) -> bool:
        depth = 0
        for t in self.toks[start:k]:
            depth += (t.text == "(") - (t.text == ")")
        return depth == 0

    def _split(self, start: int, close: int) -> list[tuple[int, int]]:
        """The comma-separated parts of tokens ``start``..``close`` (exclusive)."""
        out, first, depth = [], start, 0
        for k in range(start, close):
            t = self.toks[k]
            depth += (t.text == "(") - (t.text == ")")
            if t.text == "," and depth == 0:
                out.append((first, k - 1))
                first = k + 1
        out.append((first, close - 1))
        if any(a > b for a, b in out):
            raise ora(936)
        return out

    def _names_in(self, first: int, last: int) -> set[str]:
        return {self._name(t) for t in self.toks[first:last + 1] if t.kind in ("id", "qid")}

    @staticmethod
    def _name(t) -> str:
        """A name as Oracle keeps it: upper-cased unless quoted, without a qualifier."""
        if t.kind == "qid":
            return t.text[1:-1].replace('""', '"')
        return t.word.rpartition(".")[2].strip()

    def _ref(self, name: str) -> str:
        """A source column named in the rewrite."""
        return name if _PLAIN.match(name) else '"' + name.replace('"', '""') + '"'

    def _out(self, name: str) -> str:
        """A column the rewrite names (PostgreSQL: an Oracle upper-case name folded, as an
        unquoted name referring to it is)."""
        if _PLAIN.match(name) and not self.sqlite:
            name = name.lower()
        return '"' + name.replace('"', '""') + '"'

    def _slice(self, first: int, last: int) -> str:
        return self.text[self.toks[first].start:self.toks[last].end]
