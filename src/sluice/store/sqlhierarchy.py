"""Oracle's hierarchical queries in a user's SQL, as a recursive common table expression.

``SELECT … FROM t [alias] [WHERE w] [START WITH s] CONNECT BY [NOCYCLE] c [GROUP BY …]
[HAVING …] [ORDER [SIBLINGS] BY …]`` where ``c`` names the parent row's values with
``PRIOR`` (``PRIOR id = parent_id``): :func:`hierarchical` rewrites the query block as

* ``sluice_src``: the rows of ``t`` (a user's table or view, or a subquery with an alias),
  each numbered — in ORDER SIBLINGS BY's order when there is one — and materialised, so
  the numbers stay one row's;
* ``sluice_h``: the hierarchy, the START WITH rows (every row without one) at LEVEL 1 and
  the rows ``c`` connects to each row one LEVEL down, each with its path of numbers from
  the root (a child already on its path is not followed: a loop), the values ``PRIOR``
  reads of it, its root's CONNECT_BY_ROOT values and its SYS_CONNECT_BY_PATH texts;
* the block's own SELECT over them, WHERE applied after the hierarchy is built (as
  Oracle's non-join WHERE is), in Oracle's depth-first order — a row before its children,
  siblings in ORDER SIBLINGS BY's order — unless the block orders its rows itself.

``LEVEL``, ``CONNECT_BY_ROOT x``, ``SYS_CONNECT_BY_PATH(x, 'sep')``, ``CONNECT_BY_ISLEAF``
and (with NOCYCLE) ``CONNECT_BY_ISCYCLE`` are the hierarchy's.  A loop in the data is
ORA-01436 as in Oracle, or with NOCYCLE left out of the rows with CONNECT_BY_ISCYCLE 1 on
the row that would have led back; CONNECT_BY_ISCYCLE without NOCYCLE is ORA-30930.

``*`` is the table's columns (looked up, :mod:`.usercolumns`: ``sluice_src`` has its row
numbers more).  A hierarchy over a join is one over the join as a subquery
(:mod:`.hierarchyjoins`: Oracle joins first).  Refused (SLU-00001): ``PRIOR``
outside the CONNECT BY condition, ``*`` over a subquery (name the columns), FETCH / OFFSET in
the block.  The CONNECT BY LEVEL row generator over DUAL (no PRIOR, no
START WITH) is :mod:`.sqlsetops`'s.  Runs before it, on the statement as :mod:`.sqloracle`
translated it; the headings stay Oracle's (:mod:`.sqlheadings` reads the statement as typed).
"""

from __future__ import annotations

import re
import sqlite3
from typing import Callable

from ..errors import not_supported, ora, raised_by_sluice_sql
from .hierarchyjoins import joined_block
from .sqlitecalls import keep_error
from .oraclecalls import arguments
from .selectitems import item_headings
from .usercolumns import Lookup

__all__ = ["hierarchical", "register_hierarchy"]

_SET_OPS = frozenset({"UNION", "INTERSECT", "EXCEPT", "MINUS"})
# the clauses of a query block, by their first word (at the block's depth)
_CLAUSES = frozenset({"FROM", "WHERE", "START", "CONNECT", "GROUP", "HAVING", "ORDER", "FETCH", "OFFSET",
                      "LIMIT", "FOR"})
_NOT_ALIAS = _CLAUSES | _SET_OPS | {"JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON"}
_PSEUDO = frozenset({"LEVEL", "CONNECT_BY_ROOT", "SYS_CONNECT_BY_PATH", "CONNECT_BY_ISLEAF",
                     "CONNECT_BY_ISCYCLE", "PRIOR"})
_AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "LISTAGG", "STDDEV", "VARIANCE", "MEDIAN"})
_PLAIN_NAME = re.compile(r"^[A-Z][A-Z0-9_$#]*$")
# the rows of the hierarchy with children in it (CONNECT_BY_ISLEAF 0)
_KIDS = (" LEFT JOIN (SELECT DISTINCT sluice_up FROM sluice_h) sluice_kids "
         "ON sluice_kids.sluice_up = sluice_h.sluice_path")
_LOOP = "ORA-01436: CONNECT BY loop in user data"


def hierarchical(text: str, sqlite: bool, tokens: Callable[[str], list],
                 aliased: Callable[[list, int, int], bool], columns: Lookup | None = None) -> str:
    """``text`` with each hierarchical query block (PRIOR in its CONNECT BY) as a recursive
    common table expression (see the module); ``tokens`` reads a statement's tokens
    (:func:`.sqloracle.tokens`), ``aliased`` tells a select item with an alias
    (:func:`.sqloracle.aliased`), ``columns`` looks up a table's columns (:mod:`.usercolumns`:
    what ``SELECT *`` is)."""
    upper = text.upper()
    if "CONNECT" not in upper or "PRIOR" not in upper:
        return text
    while True:         # one block at a time, the innermost first
        toks = tokens(text)
        block = _next_block(toks)
        if block is None:
            return text
        text = _Block(text, toks, block, sqlite, columns).rewrite(aliased)


def _depths(toks: list) -> list[int]:
    out, depth = [], 0
    for t in toks:
        if t.text == ")":
            depth -= 1
        out.append(depth)
        if t.text == "(":
            depth += 1
    return out


def _next_block(toks: list) -> tuple[int, int, int] | None:
    """(its SELECT, its CONNECT, its end) of the innermost block that is a hierarchy: PRIOR in
    its CONNECT BY (without, nothing tells a loop: Oracle's row generator)."""
    depth = _depths(toks)
    words = [t.text.upper() if t.kind == "id" else "" for t in toks]
    found = None
    for i, w in enumerate(words):
        if w != "CONNECT" or i + 1 >= len(toks) or words[i + 1] != "BY":
            continue
        d = depth[i]
        start = next((k for k in range(i - 1, -1, -1) if depth[k] == d and words[k] == "SELECT"), None)
        if start is None or any(depth[k] < d for k in range(start, i)):
            continue
        end = i
        while end + 1 < len(toks) and depth[end + 1] >= d and not (depth[end + 1] == d and words[end + 1] in _SET_OPS):
            end += 1
        clause = i + 2
        while clause <= end and not (depth[clause] == d and words[clause] in _CLAUSES):
            clause += 1
        if "PRIOR" not in words[i + 2:clause]:
            continue        # the CONNECT BY LEVEL row generator (sqlsetops'), or refused there
        if found is None or depth[i] > depth[found[1]]:
            found = (start, i, end)
    return found


class _Block:
    def __init__(self, text: str, toks: list, block: tuple[int, int, int], sqlite: bool,
                 columns: Lookup | None) -> None:
        self.text, self.toks, self.sqlite, self.columns = text, toks, sqlite, columns
        self.first, self.connect, self.last = block
        self.depth = _depths(toks)
        self.words = [t.text.upper() if t.kind == "id" else "" for t in toks]
        self.priors: list[str] = []           # PRIOR operands: sluice_prior_<n>
        self.roots: list[str] = []            # CONNECT_BY_ROOT operands
        self.paths: list[tuple[str, str]] = []    # SYS_CONNECT_BY_PATH (value, separator)
        self.leaf = self.cycle = False

    def _span(self, a: int, b: int) -> str:
        return self.text[self.toks[a].start:self.toks[b].end] if a <= b else ""

    def _clauses(self) -> dict[str, tuple[int, int]]:
        """Each clause's first and last token (past its keywords), by its first word."""
        d, words = self.depth[self.first], self.words
        marks = [(self.first, "SELECT")]
        for k in range(self.first + 1, self.last + 1):
            if self.depth[k] == d and words[k] in _CLAUSES:
                if words[k] in ("START", "CONNECT", "GROUP", "ORDER") and k + 1 <= self.last and \
                        words[k + 1] not in ("WITH", "BY", "SIBLINGS"):
                    continue
                marks.append((k, words[k]))
        out: dict[str, tuple[int, int]] = {}
        for n, (k, word) in enumerate(marks):
            end = marks[n + 1][0] - 1 if n + 1 < len(marks) else self.last
            skip = {"START": 2, "CONNECT": 2, "GROUP": 2, "ORDER": 2}.get(word, 1)
            if word == "ORDER" and words[k + 1] == "SIBLINGS":
                word, skip = "SIBLINGS", 3
            if word in out:
                raise not_supported(f"two {word} clauses in a hierarchical query")
            out[word] = (k + skip, end)
        return out

    def rewrite(self, aliased: Callable[[list, int, int], bool]) -> str:
        c = self._clauses()
        for word in ("FETCH", "OFFSET", "LIMIT", "FOR"):
            if word in c:
                raise not_supported(f"{word} in a hierarchical query")
        if "FROM" not in c or "CONNECT" not in c:
            raise not_supported("START WITH without CONNECT BY")
        joined = joined_block(self.text, self.toks, self.depth, self.first, self.last, c, self.columns)
        if joined is not None:
            return joined       # (over its join as one subquery: read again, .hierarchyjoins)
        source, alias = self._source(*c["FROM"])
        self.alias = alias
        first, last = c["CONNECT"]
        nocycle = first <= last and self.words[first] == "NOCYCLE"
        self.nocycle = nocycle
        cond = self._condition(first + nocycle, last)
        start = self._plain(*c["START"], "START WITH") if "START" in c else ""
        sel_first, sel_last = c["SELECT"]
        distinct = ""
        if self.words[sel_first] in ("DISTINCT", "UNIQUE", "ALL"):
            distinct, sel_first = self.words[sel_first].replace("UNIQUE", "DISTINCT") + " ", sel_first + 1
        pseudo = {k for k in range(sel_first, sel_last + 1) if self.words[k] in _PSEUDO or self.words[k] == "ROWNUM"}
        headings = {last: h for last, h in item_headings(self.toks, pseudo, aliased).items()
                    if sel_first <= last <= sel_last}     # LEVEL is named LEVEL, not as rewritten
        items = self._final(sel_first, sel_last, cond, headings, self._star(c["FROM"]))
        where = self._final(*c["WHERE"], cond) if "WHERE" in c else ""
        group = self._final(*c["GROUP"], cond) if "GROUP" in c else ""
        having = self._final(*c["HAVING"], cond) if "HAVING" in c else ""
        order = self._final(*c["ORDER"], cond) if "ORDER" in c else ""
        siblings = self._plain(*c["SIBLINGS"], "ORDER SIBLINGS BY") if "SIBLINGS" in c else ""
        if self.cycle and not nocycle:
            raise ora(30930)
        a, pad = alias, self._pad
        extra_names = "".join(f", sluice_prior_{n}" for n in range(len(self.priors))) + \
            "".join(f", sluice_root_{n}" for n in range(len(self.roots))) + \
            "".join(f", sluice_path_{n}" for n in range(len(self.paths)))
        base = "".join(f", {p}" for p in self.priors) + "".join(f", {r}" for r in self.roots) + \
            "".join(f", {sep} || {self._text(v)}" for v, sep in self.paths)
        step = "".join(f", {p}" for p in self.priors) + \
            "".join(f", sluice_h.sluice_root_{n}" for n in range(len(self.roots))) + \
            "".join(f", sluice_h.sluice_path_{n} || {sep} || {self._text(v)}" for n, (v, sep) in enumerate(self.paths))
        # the loop check first: a loop is ORA-01436 whatever the block's WHERE keeps
        checks = [] if nocycle else [self._loop_check(cond)]
        if where:
            checks.append(f"({where})")
        aggregate = any(self.words[k] in _AGGREGATES and self.toks[k + 1].text == "("
                        for k in range(sel_first, sel_last))       # (one row: nothing to order)
        ordered = order or ("" if distinct.startswith("DISTINCT") or group or aggregate else "sluice_h.sluice_path")
        sql = (f"WITH RECURSIVE sluice_src AS MATERIALIZED (SELECT {a}.*, row_number() OVER ("
               f"{'ORDER BY ' + siblings if siblings else ''}) AS sluice_rn FROM {source}), "
               f"sluice_h (sluice_rn, sluice_level, sluice_path, sluice_up{extra_names}) AS ("
               f"SELECT {a}.sluice_rn, 1, '/' || {pad(a)}, ''{base} FROM sluice_src {a}"
               f"{' WHERE ' + start if start else ''} UNION ALL "
               f"SELECT {a}.sluice_rn, sluice_h.sluice_level + 1, sluice_h.sluice_path || '/' || {pad(a)}, "
               f"sluice_h.sluice_path{step} "
               f"FROM sluice_h JOIN sluice_src {a} ON ({cond}) AND {self._on_path(a)} = 0) "
               f"SELECT {distinct}{items} FROM sluice_h JOIN sluice_src {a} ON {a}.sluice_rn = sluice_h.sluice_rn"
               f"{_KIDS if self.leaf else ''}"
               f"{' WHERE ' + ' AND '.join(checks) if checks else ''}"
               f"{' GROUP BY ' + group if group else ''}{' HAVING ' + having if having else ''}"
               f"{' ORDER BY ' + ordered if ordered else ''}")
        toks = self.toks
        if self.first > 0 and toks[self.first - 1].text != "(" or \
                self.last + 1 < len(toks) and toks[self.last + 1].text != ")":
            # after the statement's own WITH, an INSERT's …, a member of UNION …: a subquery
            sql = f"SELECT * FROM ({sql}) sluice_q"
        return self.text[:toks[self.first].start] + sql + self.text[toks[self.last].end:]

    # -- pieces ------------------------------------------------------------------------
    def _star(self, from_: tuple[int, int]) -> str:
        """What ``*`` is over the block's table: its columns, or "" when they are not known
        (a subquery; ``sluice_src`` has its row numbers more, so ``*`` itself will not do)."""
        first, last = from_
        toks = self.toks
        if self.columns is None or toks[first].kind != "id" or not (first == last or first + 1 == last):
            return ""
        names = list(self.columns([toks[first].text.rpartition(".")[2].strip().upper()]))
        if not names or not all(_PLAIN_NAME.match(n) for n in names):
            return ""
        return ", ".join(f"{self.alias}.{n}" for n in names)

    def _source(self, first: int, last: int) -> tuple[str, str]:
        """The FROM clause's text and the alias its rows go by."""
        toks, words, d = self.toks, self.words, self.depth[self.first]
        if any(self.depth[k] == d and (toks[k].text == "," or words[k] in _NOT_ALIAS)
               for k in range(first, last + 1)):
            raise not_supported("a hierarchical query over a join (join in a subquery first)")
        if first == last and toks[first].kind == "id":
            return self._span(first, last), toks[first].text.rpartition(".")[2].strip()
        if last > first and toks[last].kind in ("id", "qid") and words[last] not in _NOT_ALIAS:
            return self._span(first, last), toks[last].text
        raise not_supported("this FROM in a hierarchical query (a table or view, or a subquery with an alias)")

    def _plain(self, first: int, last: int, where: str) -> str:
        if any(self.words[k] in _PSEUDO for k in range(first, last + 1)):
            raise not_supported(f"LEVEL, PRIOR or CONNECT_BY_* in {where}")
        return self._span(first, last)

    def _operand(self, k: int) -> int:
        """The last token of the operand starting at token ``k`` (a name, a call, a parenthesis)."""
        toks = self.toks
        if k > self.last:
            raise ora(936)
        if toks[k].text == "(":
            _, close = arguments(toks, k)
            return close
        if toks[k].kind == "id" and k + 1 <= self.last and toks[k + 1].text == "(":
            _, close = arguments(toks, k + 1)     # a call (an attribute path as objpaths wrote it)
            return close
        if toks[k].kind in ("id", "qid"):
            return k
        raise not_supported("PRIOR or CONNECT_BY_ROOT of this operand (a column, a call or a parenthesis)")

    def _condition(self, first: int, last: int) -> str:
        """CONNECT BY's condition over the new row (its alias) and ``sluice_h`` (the parent:
        PRIOR's values, its LEVEL)."""
        out, at, k = [], self.toks[first].start, first
        while k <= last:
            word, t = self.words[k], self.toks[k]
            if word == "PRIOR":
                end = self._operand(k + 1)
                operand = self._span(k + 1, end)
                if operand not in self.priors:
                    self.priors.append(operand)
                out += [self.text[at:t.start], f"sluice_h.sluice_prior_{self.priors.index(operand)}"]
                at, k = self.toks[end].end, end + 1
                continue
            if word == "LEVEL":
                out += [self.text[at:t.start], "(sluice_h.sluice_level + 1)"]
                at = t.end
            elif word in _PSEUDO:
                raise not_supported(f"{word} in CONNECT BY")
            k += 1
        return "".join(out) + self.text[at:self.toks[last].end]

    def _final(self, first: int, last: int, cond: str, headings: dict[int, str] | None = None,
               star: str = "") -> str:
        """A clause of the block's own SELECT, the hierarchy's pseudo-columns read from ``sluice_h``."""
        out, at, k = [], self.toks[first].start, first
        toks, words = self.toks, self.words
        while k <= last:
            word, t = words[k], toks[k]
            if word == "PRIOR":
                raise not_supported("PRIOR outside CONNECT BY")
            replaced, end = None, k
            if t.text == "*" and (k == first or toks[k - 1].text in (",", ".")):
                if not star:
                    raise not_supported("SELECT * in a hierarchical query over this FROM (name the columns)")
                start = k - 2 if k - 2 >= first and toks[k - 1].text == "." else k     # (alias . *)
                out += [self.text[at:toks[start].start], star]
                at = t.end
            elif word == "LEVEL":
                replaced = "sluice_h.sluice_level"
            elif word == "ROWNUM" and headings is not None:     # (the select list's) numbered depth first
                replaced = "row_number() OVER (ORDER BY sluice_h.sluice_path)"
            elif word == "CONNECT_BY_ROOT":
                end = self._operand(k + 1)
                operand = self._span(k + 1, end)
                if operand not in self.roots:
                    self.roots.append(operand)
                replaced = f"sluice_h.sluice_root_{self.roots.index(operand)}"
            elif word == "SYS_CONNECT_BY_PATH" and k + 1 <= last and toks[k + 1].text == "(":
                args, end = arguments(toks, k + 1)
                if len(args) != 2:
                    raise ora(909)
                path = (self._span(*args[0]), self._span(*args[1]))
                if path not in self.paths:
                    self.paths.append(path)
                replaced = f"sluice_h.sluice_path_{self.paths.index(path)}"
            elif word == "CONNECT_BY_ISLEAF":     # (a join: an EXISTS per row scanned every row)
                self.leaf = True
                replaced = "CASE WHEN sluice_kids.sluice_up IS NULL THEN 1 ELSE 0 END"
            elif word == "CONNECT_BY_ISCYCLE":
                self.cycle = True
                replaced = f"CASE WHEN EXISTS ({self._looping(cond)}) THEN 1 ELSE 0 END"
            if replaced is not None:
                out += [self.text[at:t.start], replaced]
                at = toks[end].end
            if headings and end in headings:
                out += [self.text[at:toks[end].end], f' AS "{headings[end]}"']
                at = toks[end].end
            k = end + 1
        return "".join(out) + self.text[at:toks[last].end]

    def _looping(self, cond: str) -> str:
        """The rows CONNECT BY connects to ``sluice_h``'s row that are on its path (a loop)."""
        a = self.alias
        return f"SELECT 1 FROM sluice_src {a} WHERE ({cond}) AND {self._on_path(a)} > 0"

    def _loop_check(self, cond: str) -> str:
        """A condition true unless a row of the hierarchy has a child on its own path: ORA-01436."""
        a = self.alias
        loop = f"EXISTS (SELECT 1 FROM sluice_h, sluice_src {a} WHERE ({cond}) AND {self._on_path(a)} > 0)"
        if self.sqlite:
            return f"sluice_raise(CASE WHEN {loop} THEN '{_LOOP}' END) = 1"
        # (PostgreSQL: the cast of the message fails; translate() reads the ORA error out of it)
        return f"CAST(CASE WHEN {loop} THEN '{_LOOP}' ELSE '1' END AS INTEGER) = 1"

    def _pad(self, a: str) -> str:
        """A row's number as text that sorts as the number (the paths sort depth first)."""
        if self.sqlite:
            return f"printf('%010d', {a}.sluice_rn)"
        return f"lpad(CAST({a}.sluice_rn AS TEXT), 10, '0')"

    def _on_path(self, a: str) -> str:
        """Where row ``a`` is on ``sluice_h``'s path (0: not on it)."""
        find = "instr" if self.sqlite else "strpos"
        return f"{find}(sluice_h.sluice_path || '/', '/' || {self._pad(a)} || '/')"

    def _text(self, value: str) -> str:
        return f"COALESCE(CAST({value} AS TEXT), '')"


def _raise(message: str | None) -> int:
    """SQLite's ``sluice_raise``: 1, or the Oracle error ``message`` names (kept for the
    session to raise: SQLite reports only that a function raised)."""
    if message is None:
        return 1
    error = raised_by_sluice_sql(message)
    keep_error(error)
    raise error


def register_hierarchy(conn: sqlite3.Connection) -> None:
    conn.create_function("sluice_raise", 1, _raise)
