"""ROWNUM, row limits, subqueries without an alias and LISTAGG in a user's SQL, as Oracle answers them.

A statement typed at a cursor, once :mod:`.sqloracle` has answered Oracle's words in it,
is read again by query block (a ``SELECT`` up to the parenthesis closing it, or a
UNION / INTERSECT / MINUS) and :func:`limited` rewrites:

* ``ROWNUM`` in a block's WHERE, a conjunct ``ROWNUM <op> n`` (``n <op> ROWNUM``,
  ``ROWNUM BETWEEN a AND b``; ``n`` a number or a bind, whose value is taken out of the
  statement's binds, :class:`.clockbinds.ClockBinds`).  Oracle numbers a row as it passes
  the WHERE clause, before GROUP BY and ORDER BY, and a row failing the condition gives
  its number to the next one: the rows kept are those before the first number failing
  it (``ROWNUM <= 5`` five, ``ROWNUM = 1`` one, ``ROWNUM > 1`` / ``ROWNUM = 2`` none,
  ``ROWNUM > 0`` all).  The conjunct becomes ``1 = 1`` and the limit a ``LIMIT`` taken
  before the rest of the block: on a single table (or subquery) its FROM and WHERE become
  a derived table ``(SELECT * FROM t WHERE … LIMIT n) t`` under the same name, so the
  block's GROUP BY, aggregates and ORDER BY see only those rows (``WHERE ROWNUM <= 5
  ORDER BY x`` sorts five arbitrary rows, as Oracle does); on a join without ORDER BY,
  grouping or DISTINCT the ``LIMIT`` ends the block.  Anything else (ROWNUM under OR or
  NOT, compared with an expression, a join sorted or grouped or in a UNION's member) is
  refused (SLU-00001), never answered otherwise.
* ``ROWNUM`` as a value (a select item, in ORDER BY): ``ROW_NUMBER() OVER ()``, the rows
  numbered as they come, before the block's ORDER BY; an item ``ROWNUM`` keeps its
  name through ``AS "ROWNUM"`` (a ``SELECT *`` over it names it so).  Not in a grouped block.
* ``[OFFSET m ROWS] FETCH FIRST|NEXT [n] ROW|ROWS ONLY`` (a syntax error on SQLite;
  PostgreSQL rounds a fraction, reads NULL as no limit and refuses a negative):
  ``LIMIT n OFFSET m``, the numbers (literals or binds, taken) as Oracle reads them:
  fractions truncated, a negative one 0, a NULL no rows; WITH TIES PostgreSQL's own; ``n
  PERCENT`` and WITH TIES on SQLite counted by :mod:`.fetchrows` (refused in a compound query,
  with ROWNUM or LISTAGG in the block, and WITH TIES on SQLite ordered by an alias or a position).
* on PostgreSQL, a subquery in FROM without an alias (Oracle needs none) gets one.
* ``LISTAGG([DISTINCT] x [, delimiter] [ON OVERFLOW …]) [WITHIN GROUP (ORDER BY …)] [OVER
  ([PARTITION BY …])]``: each store's LISTAGG (:mod:`.listaggs`: PostgreSQL's ``string_agg``,
  SQLite's ``sluice_listagg``); an ORDER BY or a window frame in its OVER is ORA-30487, as
  Oracle has it.

Literals, quoted names and comments are never touched; the headings stay Oracle's
(:mod:`.sqlheadings` reads the statement as typed).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Callable, Sequence

from ..errors import not_supported, ora
from .clockbinds import ClockBinds
from .listaggs import pg_listagg, sqlite_spec
from .fetchrows import percent_rows, tied_rows
from .sqlclock import NULL

__all__ = ["limited"]

_SET_OPS = frozenset({"UNION", "INTERSECT", "EXCEPT", "MINUS"})
# words that end a block's FROM / WHERE clause at its depth
_CLAUSES = frozenset({"WHERE", "GROUP", "HAVING", "ORDER", "FETCH", "OFFSET", "LIMIT", "CONNECT", "START",
                      "FOR", "WINDOW", "MODEL"})
# words after a table reference that are not its alias
_NO_ALIAS = _CLAUSES | _SET_OPS | frozenset({"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL",
                                             "ON", "USING", "PIVOT", "UNPIVOT", "OUTER"})
_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "LISTAGG", "STRING_AGG", "GROUP_CONCAT",
                         "STDDEV", "VARIANCE", "MEDIAN", "ARRAY_AGG", "BOOL_AND", "BOOL_OR", "EVERY",
                         "SLUICE_LISTAGG", "TOTAL"})
# a subquery in FROM (maybe without an alias)
_SUBQUERY = re.compile(r"(?:\bFROM|\bJOIN|,)\s*\(\s*(?:SELECT\b|WITH\b|\()", re.I)
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "<>": "<>", "!=": "!="}


def limited(text: str, binds: dict | Sequence | None, sqlite: bool,
            tokens: Callable[[str], list]) -> tuple[str, dict | Sequence | None]:
    """``text`` (a user's statement as :mod:`.sqloracle` translated it, run with ``binds``)
    with ROWNUM, FETCH FIRST, unaliased subqueries and LISTAGG as the store's database
    answers them (see the module), and the binds it is then run with; ``tokens`` reads a
    statement's tokens (:func:`.sqloracle.tokens`)."""
    upper = text.upper()
    if not ("ROWNUM" in upper or "LISTAGG" in upper or "FETCH" in upper or "OFFSET" in upper
            or not sqlite and upper.count("SELECT") > 1 and _SUBQUERY.search(text)):
        return text, binds
    key = (text, sqlite)
    done = _DONE.get(key)
    if done is not None:
        return done, binds
    limits = _Limits(text, binds, sqlite, tokens(text))
    out, left = limits.run()
    if not limits.binds.used:     # (the same for any binds: kept for the statement run again)
        if len(_DONE) >= 512:
            _DONE.clear()
        _DONE[key] = out
    return out, left


# (statement, sqlite) -> the statement translated, when no bind's value went into it
_DONE: dict[tuple[str, bool], str] = {}


class _Block:
    """One query block: its SELECT token, the token after its end, its depth and the
    first token of each of its clauses at that depth (FROM, WHERE, GROUP, …)."""

    def __init__(self, select: int, end: int, depth: int) -> None:
        self.select, self.end, self.depth = select, end, depth
        self.clauses: dict[str, int] = {}
        self.compound = False

    def clause_end(self, start: int) -> int:
        """The token after the clause starting at token ``start``."""
        later = [k for k in self.clauses.values() if k > start]
        return min(later, default=self.end)


class _Shape:
    """A statement's tokens' words, depths, matching parentheses and query blocks (kept
    per statement: they do not depend on its binds)."""

    def __init__(self, toks: list) -> None:
        self.toks = toks
        self.depth: list[int] = []
        self.match: dict[int, int] = {}
        depth, stack = 0, []
        for i, t in enumerate(toks):
            if t.text == "(":
                self.depth.append(depth)
                stack.append(i)
                depth += 1
            elif t.text == ")":
                depth -= 1
                self.depth.append(depth)
                if stack:
                    self.match[stack.pop()] = i
            else:
                self.depth.append(depth)
        self.words = [t.word for t in toks]
        self.blocks = self._blocks()

    def _blocks(self) -> list[_Block]:
        toks, words, blocks = self.toks, self.words, []
        for s, word in enumerate(words):
            if word != "SELECT":
                continue
            d, end = self.depth[s], len(toks)
            block = _Block(s, end, d)
            for k in range(s + 1, len(toks)):
                if self.depth[k] < d:
                    end = k
                    break
                if self.depth[k] != d:
                    continue
                w = words[k]
                if w in _SET_OPS:
                    block.compound = True
                    end = k
                    break
                nxt = words[k + 1] if k + 1 < len(toks) else ""
                if w in ("GROUP", "ORDER", "CONNECT") and nxt != "BY" or w == "START" and nxt != "WITH":
                    continue        # (LISTAGG … WITHIN GROUP (…) is no GROUP BY)
                if w in _CLAUSES or w == "FROM":
                    block.clauses.setdefault(w, k)
            block.end = end
            # a member of a compound that is not its first: the set operator before it
            if s > 0 and self.words[s - 1] in _SET_OPS | {"ALL", "DISTINCT"}:
                block.compound = True
            blocks.append(block)
        return blocks


def _shape(text: str, toks: list) -> _Shape:
    shape = _SHAPES.get(text)
    if shape is None:
        if len(_SHAPES) >= 512:
            _SHAPES.clear()
        shape = _SHAPES[text] = _Shape(toks)
    return shape


_SHAPES: dict[str, _Shape] = {}


class _Limits:
    def __init__(self, text: str, binds, sqlite: bool, toks: list) -> None:
        self.text, self.sqlite, self.toks = text, sqlite, toks
        self.binds = ClockBinds(toks, binds)
        self.edits: list[tuple[int, int, str]] = []     # (start, end, text) in ``text``
        self.aliases = 0
        shape = _shape(text, toks)
        self.depth, self.match, self.words, self.blocks = shape.depth, shape.match, shape.words, shape.blocks

    def run(self) -> tuple[str, dict | Sequence | None]:
        toks = self.toks
        values: dict[int, list[int]] = {}       # block -> its ROWNUM values
        conditions: dict[int, list[int]] = {}   # block -> its ROWNUM conditions
        changes: list[int] = []                 # ROWNUM in the WHERE of a DELETE / UPDATE
        for i, (t, word) in enumerate(zip(toks, self.words)):
            if word == "ROWNUM":
                b = self._owner(i)
                if b is None and self.words[0] in ("DELETE", "UPDATE") and self.depth[i] == 0:
                    changes.append(i)
                    continue
                if b is None:
                    raise _refused("ROWNUM outside a query")
                block = self.blocks[b]
                where = block.clauses.get("WHERE")
                if where is not None and where < i < block.clause_end(where):
                    conditions.setdefault(b, []).append(i)
                else:
                    values.setdefault(b, []).append(i)
            elif word == "LISTAGG" and i + 1 < len(toks) and toks[i + 1].text == "(":
                self._listagg(i)
        for b, block in enumerate(self.blocks):
            if b in values:
                self._values(block, values[b])
            if b in conditions:
                self._conditions(block, conditions[b], b in values)
            self._fetch(block)
            if not self.sqlite:
                self._subquery_aliases(block)
        if changes:
            self._changed_rows(changes)
        return self._text(), self.binds.remaining()

    # -- the blocks --------------------------------------------------------------------
    def _owner(self, i: int) -> int | None:
        best = None
        for b, block in enumerate(self.blocks):
            if block.select < i < block.end and (best is None or block.depth >= self.blocks[best].depth):
                best = b
        return best

    def _features(self, block: _Block) -> tuple[bool, bool]:
        """(grouped: GROUP BY, HAVING or an aggregate in its select list; DISTINCT)."""
        toks = self.toks
        grouped = "GROUP" in block.clauses or "HAVING" in block.clauses
        stop = block.clauses.get("FROM", block.end)
        for k in range(block.select + 1, stop):
            if (self.words[k] in _AGGREGATES and k + 1 < stop and toks[k + 1].text == "("
                    and not self._windowed(k + 1)):
                grouped = True
        distinct = block.select + 1 < len(toks) and self.words[block.select + 1] in ("DISTINCT", "UNIQUE")
        return grouped, distinct

    def _windowed(self, open_: int) -> bool:
        close = self.match.get(open_, -1)
        return 0 <= close < len(self.toks) - 1 and self.words[close + 1] == "OVER"

    def _has_window(self, block: _Block) -> bool:
        stop = block.clauses.get("FROM", block.end)
        return any(t.word == "OVER" for t in self.toks[block.select + 1:stop])

    # -- ROWNUM as a value -------------------------------------------------------------
    def _values(self, block: _Block, at: list[int]) -> None:
        toks = self.toks
        if self._features(block)[0]:
            raise _refused("ROWNUM as a value in a query with GROUP BY or aggregates")
        for i in at:
            where = next((w for w, k in block.clauses.items() if k < i < block.clause_end(k)), None)
            if where not in (None, "ORDER"):
                raise _refused(f"ROWNUM in {where}")
            text = "ROW_NUMBER() OVER ()"
            if where is None and self._whole_item(block, i):
                text += ' AS "ROWNUM"'
            self.edits.append((toks[i].start, toks[i].end, text))

    def _whole_item(self, block: _Block, i: int) -> bool:
        """Whether token ``i`` is a select item of its own, without an alias."""
        toks = self.toks
        before = toks[i - 1]
        after = toks[i + 1] if i + 1 < len(toks) else None
        starts = before.word in ("SELECT", "DISTINCT", "ALL", "UNIQUE") or before.text == "," and \
            self.depth[i - 1] == block.depth
        ends = after is None or after.word == "FROM" or after.text == "," and self.depth[i + 1] == block.depth \
            or i + 1 == block.end
        return starts and ends

    # -- ROWNUM in WHERE ---------------------------------------------------------------
    def _conditions(self, block: _Block, at: list[int], numbered: bool) -> None:
        toks = self.toks
        if "CONNECT" in block.clauses or "START" in block.clauses:
            raise _refused("ROWNUM with CONNECT BY")
        where = block.clauses["WHERE"]
        end = block.clause_end(where)
        d = block.depth
        if any(self.words[k] == "OR" and self.depth[k] == d for k in range(where + 1, end)):
            raise _refused("ROWNUM in a WHERE clause with OR (Sluice answers ROWNUM ANDed with the rest)")
        limit = self._where_limit(at, where, end, d)
        if limit is None:
            return
        grouped, distinct = self._features(block)
        ref = self._single_table(block)
        if ref is None:
            if block.compound:      # (a LIMIT at a member's end would be the compound's)
                raise _refused("ROWNUM in the WHERE clause of a join in UNION, INTERSECT or MINUS")
            if grouped or distinct or "ORDER" in block.clauses or numbered or self._has_window(block) or any(
                    w in block.clauses for w in ("FETCH", "OFFSET", "LIMIT", "FOR")):
                raise _refused("ROWNUM in the WHERE clause of a join with ORDER BY, GROUP BY, DISTINCT, "
                               "aggregates or ROWNUM values (Sluice answers it on one table or subquery)")
            self.edits.append((toks[end - 1].end, toks[end - 1].end, f" LIMIT {limit}"))
            return
        first, alias = ref
        # (SQLite flattens a derived table with a LIMIT into a query with ORDER BY, taking
        # the rows after sorting them and dropping the ORDER BY of a subquery under it; it
        # does not flatten one with an OFFSET)
        offset = " OFFSET 0" if self.sqlite else ""
        self.edits.append((toks[first].start, toks[first].start, "(SELECT * FROM "))
        self.edits.append((toks[end - 1].end, toks[end - 1].end, f" LIMIT {limit}{offset}) {alias}"))

    def _where_limit(self, at: list[int], where: int, end: int, d: int) -> int | None:
        """The rows the ROWNUM conditions at tokens ``at`` of the WHERE clause at ``where``
        (up to ``end``, at depth ``d``) keep (None: all), each condition become ``1 = 1``."""
        toks, limit = self.toks, None
        for first, last in self._conjuncts(where + 1, end, d):
            rownums = [k for k in at if first <= k <= last]
            if not rownums:
                continue
            if len(rownums) > 1 or any(self.depth[k] != d for k in range(first, last + 1)):
                raise _refused("this condition on ROWNUM (Sluice answers ROWNUM compared with a number or "
                               "a bind, or BETWEEN two)")
            n = self._first_failing(first, last, rownums[0])
            if n is not None:
                limit = n if limit is None else min(limit, n)
            self.edits.append((toks[first].start, toks[last].end, "1 = 1"))
        return limit

    def _changed_rows(self, at: list[int]) -> None:
        """ROWNUM in the WHERE of ``DELETE [FROM] t [alias] WHERE …`` / ``UPDATE t [alias] SET …
        WHERE …``: Oracle changes the first rows that meet the other conditions, so the
        WHERE becomes ``rowid IN (SELECT rowid FROM t [alias] WHERE … LIMIT n)`` (PostgreSQL's
        ``ctid``)."""
        toks, words = self.toks, self.words
        where = next((k for k in range(len(toks)) if words[k] == "WHERE" and self.depth[k] == 0), None)
        table = 1 + (words[0] == "DELETE" and words[1] == "FROM")
        if where is None or any(k < where for k in at):
            raise _refused("ROWNUM outside the WHERE clause of a DELETE or UPDATE")
        end = next((k for k in range(where + 1, len(toks)) if words[k] in ("RETURNING", "RETURN", "LOG")
                    and self.depth[k] == 0), len(toks))
        if any(words[k] == "OR" and self.depth[k] == 0 for k in range(where + 1, end)):
            raise _refused("ROWNUM in a WHERE clause with OR (Sluice answers ROWNUM ANDed with the rest)")
        limit = self._where_limit(at, where, end, 0)
        if limit is None:
            return
        stop = next(k for k in range(table, where + 1) if words[k] in ("SET", "WHERE"))
        reference = self._slice(table, stop - 1)
        key = "rowid" if self.sqlite else "ctid"
        if stop - 1 > table:        # an alias
            key = f"{toks[stop - 1].text}.{key}"
        self.edits.append((toks[where].end, toks[where].end, f" {key} IN (SELECT {key} FROM {reference} WHERE"))
        self.edits.append((toks[end - 1].end, toks[end - 1].end, f" LIMIT {limit})"))

    def _conjuncts(self, start: int, end: int, d: int) -> list[tuple[int, int]]:
        toks, out, first, between = self.toks, [], start, False
        for k in range(start, end):
            if self.depth[k] != d:
                continue
            if self.words[k] == "BETWEEN":
                between = True
            elif self.words[k] == "AND":
                if between:
                    between = False
                    continue
                out.append((first, k - 1))
                first = k + 1
        out.append((first, end - 1))
        return out

    def _first_failing(self, first: int, last: int, r: int) -> int | None:
        """The rows ``ROWNUM`` condition at tokens ``first``..``last`` keeps (None: all)."""
        toks = self.toks
        if r == first and r + 1 <= last and self.words[r + 1] == "BETWEEN":
            a, and_ = self._number(r + 2, last)
            if and_ > last or self.words[and_] != "AND":
                raise _refused("this ROWNUM BETWEEN")
            b, stop = self._number(and_ + 1, last)
            if stop != last + 1:
                raise _refused("this ROWNUM BETWEEN")
            return _kept([(">=", a), ("<=", b)])
        if r == first and r + 1 <= last and toks[r + 1].text in _FLIP:
            value, stop = self._number(r + 2, last)
            if stop == last + 1:
                return _kept([(toks[r + 1].text, value)])
        elif r == last and r - 1 > first and toks[r - 1].text in _FLIP:
            value, stop = self._number(first, r - 2)
            if stop == r - 1:
                return _kept([(_FLIP[toks[r - 1].text], value)])
        raise _refused("this condition on ROWNUM (Sluice answers ROWNUM compared with a number or a bind)")

    def _number(self, k: int, last: int, what: str = "ROWNUM") -> tuple[Fraction | object, int]:
        """The number (a literal, maybe signed, or a bind: taken) at token ``k`` of a
        ROWNUM condition or an OFFSET / FETCH (``what``), and the token after it."""
        toks, sign = self.toks, 1
        if k <= last and toks[k].text in ("-", "+"):
            sign = -1 if toks[k].text == "-" else 1
            k += 1
        if k > last:
            raise _refused(f"this {what}")
        t = toks[k]
        if t.kind == "num":
            return sign * Fraction(t.text), k + 1
        if t.kind == "bind":
            value = self.binds.days(k)
            return (NULL if value is NULL else sign * value), k + 1
        if t.word == "NULL":
            return NULL, k + 1
        raise _refused(f"{what} with an expression (Sluice answers a number or a bind)")

    def _single_table(self, block: _Block) -> tuple[int, str] | None:
        """The first token of the block's one table reference and the name the block knows
        it by (its alias, or the table's name, or one made for it); None for a join."""
        toks = self.toks
        f = block.clauses.get("FROM")
        if f is None:
            return None
        end = block.clause_end(f)
        k = f + 1
        if k >= end:
            return None
        if toks[k].text == "(":
            close = self.match.get(k, -1)
            if close < 0:
                return None
            name, k = None, close + 1
        elif toks[k].kind in ("id", "qid") and self.words[k] not in _NO_ALIAS:
            name, k = toks[k].text, k + 1
            if toks[k - 1].kind == "id":
                name = "".join(name.split()).rpartition(".")[2]
        else:
            return None
        if k < end and self.words[k] == "AS":
            k += 1
        if k < end and (toks[k].kind == "qid" or toks[k].kind == "id" and self.words[k] not in _NO_ALIAS):
            name, k = toks[k].text, k + 1
        if k != end:
            return None
        if name is None:
            name = self._alias()
        return f + 1, name

    def _alias(self) -> str:
        self.aliases += 1
        return f"sluice_q{self.aliases}"

    # -- OFFSET / FETCH FIRST ------------------------------------------------------------
    def _fetch(self, block: _Block) -> None:
        """``[OFFSET m ROW[S]] [FETCH FIRST|NEXT [n] ROW[S] ONLY | WITH TIES]`` with its numbers
        read as Oracle reads them: ``LIMIT n OFFSET m`` (PostgreSQL's own FETCH … WITH TIES)."""
        toks = self.toks
        starts = [block.clauses[w] for w in ("OFFSET", "FETCH") if w in block.clauses]
        if not starts or "LIMIT" in block.clauses:
            return
        k, end = min(starts), block.end
        offset, count, ties, percent = Fraction(0), None, False, False
        first = k
        if self.words[k] == "OFFSET":
            offset, k = self._number(k + 1, end - 1, "OFFSET")
            if k < end and self.words[k] in ("ROW", "ROWS"):
                k += 1
        if k < end and self.words[k] == "FETCH":
            if k + 1 >= end or self.words[k + 1] not in ("FIRST", "NEXT"):
                raise _refused("this FETCH clause")
            k += 2
            count = Fraction(1)
            if k < end and self.words[k] not in ("ROW", "ROWS"):
                count, k = self._number(k, end - 1, "FETCH")
            if k < end and self.words[k] == "PERCENT":
                percent, k = True, k + 1
            if k < end and self.words[k] in ("ROW", "ROWS"):
                k += 1
            if k + 1 < end and self.words[k] == "WITH" and self.words[k + 1] == "TIES":
                ties, k = True, k + 2
            elif k < end and self.words[k] == "ONLY":
                k += 1
            else:
                raise _refused("this FETCH clause")
        if k != end:
            raise _refused("this OFFSET / FETCH clause")
        skip = _rows(offset)
        rows = None if count is None else _rows(count)
        if offset is NULL:
            rows = 0
        if percent or ties and self.sqlite:
            share = (0 if offset is NULL or count is NULL else count) if percent else rows
            text = self._counted(block, first, skip, share, percent, ties)
        elif ties:
            text = f"OFFSET {skip} ROWS FETCH FIRST {rows} ROWS WITH TIES"
        else:
            text = f"LIMIT {('-1' if self.sqlite else 'ALL') if rows is None else rows} OFFSET {skip}"
        self.edits.append((toks[first].start, toks[end - 1].end, text))

    def _counted(self, block: _Block, first: int, skip: int, count: Fraction | int, percent: bool,
                 ties: bool) -> str:
        """The row limit of ``FETCH FIRST count [PERCENT] ROWS …`` (token ``first`` its
        first word) when the store's LIMIT does not say it (:mod:`.fetchrows`)."""
        order = block.clauses.get("ORDER")
        if order is not None and order > first:
            order = None
        stop = order if order is not None else first
        if block.compound or any(w in ("ROWNUM", "LISTAGG") for w in self.words[block.select:stop]):
            raise _refused("FETCH … PERCENT / WITH TIES in a compound query or with ROWNUM or LISTAGG")
        rows = percent_rows(self._slice(block.select, stop - 1), Fraction(count)) if percent else str(count)
        if not ties or order is None:       # (WITH TIES without ORDER BY is ONLY)
            return f"LIMIT {rows} OFFSET {skip}"
        if not self.sqlite:
            return f"OFFSET {skip} ROWS FETCH FIRST {rows} ROWS WITH TIES"
        from_ = block.clauses.get("FROM")
        keys = self._split(order + 2, first)
        aliases = self._aliases(block)
        if from_ is None or self.words[block.select + 1] in ("DISTINCT", "UNIQUE") or any(
                a == b and (self.toks[a].kind == "num" or self.words[a] in aliases) for a, b in keys):
            raise _refused("FETCH … WITH TIES on SQLite ordered by a select item's alias or position, "
                           "or of a DISTINCT query")
        source = self._slice(from_, order - 1)
        return f"LIMIT {tied_rows(source, self._slice(order + 2, first - 1), f'{skip} + {rows}', skip)} OFFSET {skip}"

    def _aliases(self, block: _Block) -> set[str]:
        """The aliases of the block's select items (upper-cased)."""
        stop = block.clauses.get("FROM", block.end)
        return {self.words[b] for a, b in self._split(block.select + 1, stop)
                if b > a and self.toks[b].kind == "id" and "." not in self.toks[b].text
                and self.toks[b - 1].text != "."}

    # -- subqueries without an alias on PostgreSQL ---------------------------------------
    def _subquery_aliases(self, block: _Block) -> None:
        toks = self.toks
        f = block.clauses.get("FROM")
        if f is None:
            return
        end = block.clause_end(f)
        for k in range(f + 1, end):
            if (toks[k].text != "(" or self.depth[k] != block.depth
                    or self.words[k - 1] not in ("FROM", "JOIN") and toks[k - 1].text != ","):
                continue
            if k + 1 >= len(toks) or self.words[k + 1] not in ("SELECT", "WITH") and toks[k + 1].text != "(":
                continue
            close = self.match.get(k, -1)
            if close < 0:
                continue
            nxt = toks[close + 1] if close + 1 < len(toks) else None
            if nxt is not None and (nxt.word == "AS" or nxt.kind == "qid"
                                    or nxt.kind == "id" and nxt.word not in _NO_ALIAS):
                continue
            self.edits.append((toks[close].end, toks[close].end, " " + self._alias()))

    # -- LISTAGG -----------------------------------------------------------------------
    def _listagg(self, i: int) -> None:
        toks = self.toks
        close = self.match.get(i + 1, -1)
        if close < 0:
            return
        distinct = self.words[i + 2] == "DISTINCT"
        start = i + 2 + (self.words[i + 2] in ("DISTINCT", "ALL"))
        on = next((k for k in range(start, close) if self.words[k] == "ON" and self.depth[k] == self.depth[i + 2]),
                  close)
        truncate = self._overflow(on, close) if on < close else None
        args = self._split(start, on)
        if not 1 <= len(args) <= 2:
            raise _refused("this LISTAGG (Sluice answers LISTAGG(x [, delimiter]) [WITHIN GROUP (ORDER BY …)])")
        end, order = close, []
        if (close + 3 < len(toks) and self.words[close + 1] == "WITHIN" and self.words[close + 2] == "GROUP"
                and toks[close + 3].text == "("):
            inner = close + 3
            end = self.match.get(inner, -1)
            if end < 0 or self.words[inner + 1] != "ORDER" or self.words[inner + 2] != "BY":
                raise _refused("this LISTAGG … WITHIN GROUP")
            order = self._split(inner + 3, end)
        over = None
        if end + 2 < len(toks) and self.words[end + 1] == "OVER" and toks[end + 2].text == "(":
            shut = self.match[end + 2]
            if any(self.words[k] in ("ORDER", "ROWS", "RANGE") for k in range(end + 3, shut)):
                raise ora(30487)
            over, end = self._slice(end + 3, shut - 1) if shut > end + 3 else "", shut
            if not self.sqlite and (distinct or truncate is not None):
                raise _refused("LISTAGG(DISTINCT …) or ON OVERFLOW TRUNCATE with OVER on PostgreSQL")
        value = self._slice(*args[0])
        delimiter = self._slice(*args[1]) if len(args) == 2 else "NULL"
        keys = []
        for a, b in order:
            nulls = None
            if b - 1 >= a and self.words[b - 1] == "NULLS" and self.words[b] in ("FIRST", "LAST"):
                nulls, b = self.words[b], b - 2
            desc = self.words[b] == "DESC"
            if self.words[b] in ("ASC", "DESC"):
                b -= 1
            if nulls is None:
                nulls = "FIRST" if desc else "LAST"
            keys.append((self._slice(a, b), desc, nulls))
        if self.sqlite:
            spec = sqlite_spec([(desc, nulls) for _, desc, nulls in keys], distinct, truncate)
            text = f"sluice_listagg({value}, {delimiter}, {spec}" + "".join(", " + k for k, _, _ in keys) + ")"
            if over is not None:
                text += f" OVER ({over})"
        else:
            by = ", ".join(f"{k} {'DESC' if desc else 'ASC'} NULLS {nulls}" for k, desc, nulls in keys)
            text = pg_listagg(value, delimiter, by, distinct, truncate, over)
        self.edits.append((toks[i].start, toks[end].end, text))

    def _overflow(self, on: int, close: int) -> tuple[str, bool] | None:
        """``ON OVERFLOW ERROR`` (None) or ``ON OVERFLOW TRUNCATE ['indicator'] [WITH |
        WITHOUT COUNT]`` (the indicator as SQL, whether with the count) at tokens ``on``..``close``."""
        words = self.words
        if words[on + 1] != "OVERFLOW" or words[on + 2] not in ("ERROR", "TRUNCATE"):
            raise ora(905)
        if words[on + 2] == "ERROR":
            if on + 3 != close:
                raise ora(907)
            return None
        k, indicator, counted = on + 3, "'...'", True
        if k < close and self.toks[k].kind == "str":
            indicator, k = self.toks[k].text, k + 1
        if k + 1 < close and words[k] in ("WITH", "WITHOUT") and words[k + 1] == "COUNT":
            counted, k = words[k] == "WITH", k + 2
        if k != close:
            raise ora(907)
        return indicator, counted

    def _split(self, start: int, close: int) -> list[tuple[int, int]]:
        """The comma-separated parts of tokens ``start``..``close`` (exclusive), by first
        and last token."""
        out, first, d = [], start, self.depth[start] if start < close else 0
        for k in range(start, close):
            if self.toks[k].text == "," and self.depth[k] == d:
                out.append((first, k - 1))
                first = k + 1
        if first < close:
            out.append((first, close - 1))
        if any(a > b for a, b in out):
            raise _refused("an empty argument")
        return out

    def _slice(self, first: int, last: int) -> str:
        return self.text[self.toks[first].start:self.toks[last].end]

    # -- the text ----------------------------------------------------------------------
    def _text(self) -> str:
        edits = sorted(enumerate(self.edits), key=lambda e: (e[1][0], e[1][1] > e[1][0], e[0]))
        out, at = [], 0
        for _, (start, end, text) in edits:
            if start < at:
                raise _refused("this combination of ROWNUM, FETCH and LISTAGG")
            out.append(self.text[at:start])
            out.append(text)
            at = end
        out.append(self.text[at:])
        return "".join(out)


def _kept(conditions: list[tuple[str, object]]) -> int | None:
    """How many rows Oracle keeps under the ROWNUM ``conditions`` (op, value) ANDed (None:
    all): a row numbered k that fails one gives k to the next, so they stop at the first
    number failing."""
    limit: int | None = None
    for op, value in conditions:
        if value is NULL:
            n: int | None = 0
        elif op == "<=":
            n = max(math.floor(value), 0)
        elif op == "<":
            n = max(math.ceil(value) - 1, 0)
        elif op == "=":
            n = 1 if value == 1 else 0
        elif op == ">=":
            n = None if value <= 1 else 0
        elif op == ">":
            n = None if value < 1 else 0
        else:       # <>, !=
            n = int(value) - 1 if value >= 1 and value.denominator == 1 else None
        if n is not None:
            limit = n if limit is None else min(limit, n)
    return limit


def _rows(value) -> int:
    """An OFFSET's or FETCH's count as Oracle reads it: a fraction truncated, a negative 0, NULL 0."""
    if value is NULL:
        return 0
    return max(math.trunc(value), 0)


def _refused(what: str):
    return not_supported(f"{what} in SQL")
