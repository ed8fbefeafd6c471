"""MINUS, the set operators' precedence, the CONNECT BY row generator and Oracle's RAW and
LOB calls in a user's SQL, as Oracle answers them.

A statement typed at a cursor, once :mod:`.sqloracle` has answered Oracle's words in it,
is read again here (before :mod:`.sqllimits`) and :func:`set_rewrites` rewrites:

* ``MINUS`` (Oracle's name of the set difference: distinct rows) as ``EXCEPT``.  Oracle
  evaluates UNION, INTERSECT and MINUS left to right, as SQLite does; PostgreSQL's
  INTERSECT binds tighter, so there the members before an INTERSECT that follows another
  operator are put in parentheses (``a UNION b INTERSECT c`` is ``(a UNION b) INTERSECT c``);
  an ORDER BY at the end stays the whole compound's.
* the row generator ``SELECT … FROM DUAL [alias] [WHERE …] CONNECT BY LEVEL <= n``
  (``<``, ``n >= LEVEL``, ``ROWNUM`` for ``LEVEL``; ``n`` any expression without LEVEL,
  ROWNUM or PRIOR: a literal, a bind, a subquery): DUAL becomes a recursive common table
  expression of the rows ``LEVEL`` 1, 2, … while the condition holds — and the first row
  always, as Oracle's root row is (``LEVEL <= 0`` and a NULL give one row) — with DUAL's
  ``DUMMY``.  A hierarchy (PRIOR in CONNECT BY) is :mod:`.sqlhierarchy`'s, rewritten before;
  any other CONNECT BY (START WITH without PRIOR, a generator over a table) is refused
  (SLU-00001), never answered otherwise.
* ``UTL_RAW.CAST_TO_VARCHAR2(r)`` / ``UTL_RAW.CAST_TO_RAW(t)`` (the bytes as UTF-8 text and
  back), ``UTL_RAW.LENGTH(r)`` (bytes), ``DBMS_LOB.GETLENGTH(lob)`` (characters of a CLOB,
  bytes of a BLOB), ``DBMS_LOB.SUBSTR(lob [, amount [, offset]])`` (Oracle's order: the
  amount first; 32767 from 1 by default; NULL for an amount or offset below 1) as the
  store's ``CAST`` / ``convert_from`` / ``length`` / ``substr``; ``DBMS_LOB.INSTR(clob,
  pattern [, offset [, nth]])`` as ``ORACLE_INSTR`` (:mod:`.oraclecalls`).  What monitoring
  scripts read a RAW queue's payloads with (``SELECT UTL_RAW.CAST_TO_VARCHAR2(USER_DATA)
  FROM AQ$QT``).
* of a JSON queue's payloads (USER_DATA: the JSON text; ``JSON_VALUE`` is the stores' own):
  ``JSON_QUERY(doc, 'path')`` (the object or array there as compact text, a scalar NULL) and
  ``JSON_EXISTS(doc, 'path')`` of a literal path of ``$``, ``.name`` and ``[n]`` steps: SQLite's
  ``json_type`` / ``json_extract``, PostgreSQL's ``json_extract_path`` (15 has no JSON_QUERY;
  the json type keeps the document's key order, jsonb's would not).  Other paths and clauses
  (WITH WRAPPER, filters, wildcards) are SLU-00001.  On PostgreSQL ``JSON_VALUE(doc, …)``
  reads ``doc`` as text, so that a JSON column (``jsonb``) is a document too.
  ``JSON_OBJECT('k' IS v, KEY 'k2' VALUE v2)`` is its compact text (Oracle's VARCHAR2 result):
  SQLite's ``json_object``, PostgreSQL's ``json_build_object``; its clauses (ABSENT ON NULL,
  RETURNING, FORMAT JSON, STRICT, WITH UNIQUE KEYS) are SLU-00001.

Literals, quoted names and comments are never touched; the headings stay Oracle's
(:mod:`.sqlheadings` reads the statement as typed).
"""

from __future__ import annotations

import re
from typing import Callable

from ..errors import not_supported, ora
from .oraclecalls import arguments

__all__ = ["set_rewrites"]

_SET_OPS = frozenset({"UNION", "INTERSECT", "EXCEPT", "MINUS"})
_CALLS = frozenset({"UTL_RAW.CAST_TO_VARCHAR2", "UTL_RAW.CAST_TO_RAW", "UTL_RAW.LENGTH", "DBMS_LOB.GETLENGTH",
                    "DBMS_LOB.SUBSTR", "DBMS_LOB.INSTR", "JSON_QUERY", "JSON_EXISTS", "JSON_OBJECT"})
_ARITY = {"UTL_RAW.CAST_TO_VARCHAR2": (1, 1), "UTL_RAW.CAST_TO_RAW": (1, 1), "UTL_RAW.LENGTH": (1, 1),
          "DBMS_LOB.GETLENGTH": (1, 1), "DBMS_LOB.SUBSTR": (1, 3), "DBMS_LOB.INSTR": (2, 4),
          "JSON_QUERY": (2, 2), "JSON_EXISTS": (2, 2), "JSON_OBJECT": (0, 1000)}
# an Oracle JSON path both stores follow alike: $ then .name, ."name" or [n] steps
_PATH = re.compile(r'\$(?:\.[A-Za-z_][A-Za-z0-9_]*|\."[^"]*"|\[\d+\])*')
_STEP = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\."([^"]*)"|\[(\d+)\]')
# PostgreSQL: JSON text without the white space outside its strings (Oracle's JSON_QUERY is compact)
_COMPACT = r"""regexp_replace({}, '("(?:[^"\\]|\\.)*")|\s+', '\1', 'g')"""
# words that end a CONNECT BY clause at its block's depth
_AFTER_CONNECT = _SET_OPS | {"ORDER", "GROUP", "HAVING", "START", "FETCH", "OFFSET", "LIMIT", "FOR"}
_FLIP = {"<=": ">=", "<": ">", ">=": "<=", ">": "<"}
_MARKS = ("MINUS", "INTERSECT", "CONNECT", "UTL_RAW", "DBMS_LOB", "JSON_QUERY", "JSON_EXISTS", "JSON_VALUE",
          "JSON_OBJECT")
# JSON_OBJECT's clauses Sluice does not answer (NULL ON NULL, its default, is the stores' own)
_OBJECT_CLAUSES = frozenset({"ABSENT", "ON", "RETURNING", "FORMAT", "STRICT", "WITH", "WITHOUT"})
# PostgreSQL: the store's JSON_VALUE(text, text) also of a JSON column (jsonb has no implicit
# cast to text); its name quoted, which this module does not read again as the call it rewrites
_PG_CALLS = _CALLS | {"JSON_VALUE"}


def set_rewrites(text: str, sqlite: bool, tokens: Callable[[str], list]) -> str:
    """``text`` (a user's statement as :mod:`.sqloracle` translated it) with MINUS, the set
    operators' order, the CONNECT BY row generator and UTL_RAW / DBMS_LOB calls as the
    store's database answers them (see the module); ``tokens`` reads a statement's tokens
    (:func:`.sqloracle.tokens`)."""
    upper = text.upper()
    if not any(mark in upper for mark in _MARKS):
        return text
    if "UTL_RAW" in upper or "DBMS_LOB" in upper or "JSON_" in upper:       # the innermost calls first
        while True:
            done = _Rewrite(text, sqlite, tokens(text), calls=True).run()
            if done == text:
                break
            text = done
    return _Rewrite(text, sqlite, tokens(text)).run()


class _Rewrite:
    def __init__(self, text: str, sqlite: bool, toks: list, calls: bool = False) -> None:
        self.text, self.sqlite, self.toks, self.calls = text, sqlite, toks, calls
        self.edits: list[tuple[int, int, str]] = []
        self.depth: list[int] = []
        self.opener: list[int] = []        # the "(" each token is inside of (-1: none)
        depth, stack = 0, []
        for i, t in enumerate(toks):
            if t.text == ")":
                depth -= 1
                if stack:
                    stack.pop()
            self.depth.append(depth)
            self.opener.append(stack[-1] if stack else -1)
            if t.text == "(":
                depth += 1
                stack.append(i)
        self.words = [t.word for t in toks]
        self.names = _CALLS if sqlite else _PG_CALLS

    def run(self) -> str:
        toks, words = self.toks, self.words
        groups: dict[int, list[int]] = {}       # opener -> its set operators
        for i, word in enumerate(words):
            if self.calls:
                if word in self.names and i + 1 < len(toks) and toks[i + 1].text == "(":
                    self._call(i)
                continue
            if word in _SET_OPS and "." not in word:
                groups.setdefault(self.opener[i], []).append(i)
                if word == "MINUS":
                    self.edits.append((toks[i].start, toks[i].end, "EXCEPT"))
            elif word == "CONNECT" and i + 1 < len(toks) and words[i + 1] == "BY":
                self._connect_by(i)
            elif word == "START" and i + 1 < len(toks) and words[i + 1] == "WITH" and "CONNECT" in words:
                raise _refused()        # (a hierarchical query's; CREATE SEQUENCE … START WITH is not one)
        if not self.sqlite and not self.calls:
            for opener, ops in groups.items():
                self._precedence(opener, ops)
        return self._text()

    # -- set operators -----------------------------------------------------------------
    def _precedence(self, opener: int, ops: list[int]) -> None:
        """PostgreSQL: the members before an INTERSECT that follows another set operator in
        parentheses (Oracle reads them left to right)."""
        words = self.words
        for k in range(1, len(ops)):
            if words[ops[k]] != "INTERSECT" or words[ops[k - 1]] == "INTERSECT":
                continue
            first = self._first_member(opener, ops[0])
            if first is None:
                raise not_supported("INTERSECT after UNION or MINUS here in SQL (write parentheses)")
            self.edits.append((self.toks[first].start, self.toks[first].start, "("))
            self.edits.append((self.toks[ops[k]].start, self.toks[ops[k]].start, ") "))

    def _first_member(self, opener: int, op: int) -> int | None:
        """The first token of the first member of the compound whose first operator is ``op``."""
        toks, words, d = self.toks, self.words, self.depth[op]
        for k in range(opener + 1, op):
            if self.depth[k] != d:
                continue
            if words[k] == "SELECT" or toks[k].text == "(" and (
                    k == opener + 1 or words[k - 1] in _SET_OPS or toks[k - 1].text == "("):
                return k
        return None

    # -- CONNECT BY ----------------------------------------------------------------------
    def _connect_by(self, i: int) -> None:
        """``CONNECT BY LEVEL <= n`` over DUAL: DUAL as the rows 1..n (see the module)."""
        toks, words, d = self.toks, self.words, self.depth[i]
        end = i + 2
        while end < len(toks) and self.depth[end] >= d and not (self.depth[end] == d and words[end] in _AFTER_CONNECT):
            end += 1
        cond = list(range(i + 2, end))
        if cond and words[cond[0]] == "NOCYCLE":
            cond = cond[1:]
        if len(cond) < 3:
            raise _refused()
        first, second = words[cond[0]], words[cond[-1]]
        if first in ("LEVEL", "ROWNUM") and toks[cond[1]].text in ("<=", "<"):
            op, operand = toks[cond[1]].text, (cond[2], cond[-1])
        elif second in ("LEVEL", "ROWNUM") and toks[cond[-2]].text in (">=", ">"):
            op, operand = _FLIP[toks[cond[-2]].text], (cond[0], cond[-3])
        else:
            raise _refused()
        if any(words[k] in ("LEVEL", "ROWNUM", "PRIOR") for k in range(operand[0], operand[1] + 1)):
            raise _refused()
        dual = self._dual(i)
        if dual is None:
            raise _refused()
        n = self.text[toks[operand[0]].start:toks[operand[1]].end]
        rows = (f"(WITH RECURSIVE sluice_levels (LEVEL) AS (SELECT 1 UNION ALL SELECT LEVEL + 1 FROM "
                f"sluice_levels WHERE LEVEL + 1 {op} ({n})) SELECT 'X' AS DUMMY, LEVEL FROM sluice_levels)")
        alias = "" if dual + 1 < len(toks) and toks[dual + 1].kind in ("id", "qid") and \
            words[dual + 1] not in ("WHERE", "CONNECT", "START") else " DUAL"
        self.edits.append((toks[dual].start, toks[dual].end, rows + alias))
        self.edits.append((toks[i].start, toks[end - 1].end, ""))

    def _dual(self, connect: int) -> int | None:
        """The DUAL token of the block whose CONNECT BY is token ``connect``, when the
        block's FROM is DUAL alone (None: something else)."""
        toks, words, d = self.toks, self.words, self.depth[connect]
        k = connect - 1
        while k >= 0 and not (self.depth[k] == d and words[k] == "FROM") and self.depth[k] >= d:
            k -= 1
        if k < 0 or words[k] != "FROM" or k + 1 >= connect or words[k + 1] not in ("DUAL", "SYS.DUAL"):
            return None
        j = k + 2
        if j < connect and toks[j].kind in ("id", "qid") and words[j] != "WHERE":
            j += 1
        if j < connect and words[j] != "WHERE":
            return None
        return k + 1

    # -- UTL_RAW and DBMS_LOB ----------------------------------------------------------
    def _call(self, i: int) -> None:
        toks, name = self.toks, self.words[i]
        args, close = arguments(toks, i + 1)
        if close < 0 or any(self.words[k] in self.names for k in range(i + 1, close)):
            return          # (an inner call first)
        if name == "JSON_VALUE":      # (PostgreSQL's: see _PG_CALLS)
            inner = self.text[toks[i + 1].end:toks[close].start]
            first = self.text[toks[args[0][0]].start:toks[args[0][1]].end] if args else ""
            rest = self.text[toks[args[0][1]].end:toks[close].start] if args else inner
            self.edits.append((toks[i].start, toks[close].end, f'"json_value"(CAST({first} AS TEXT){rest})'))
            return
        lo, hi = _ARITY[name]
        if not lo <= len(args) <= hi:
            raise ora(909)
        texts = [self.text[toks[a].start:toks[b].end] for a, b in args]
        texts = ["NULL" if t.strip() == "''" else t for t in texts]
        sqlite = self.sqlite
        if name == "UTL_RAW.CAST_TO_VARCHAR2":
            out = f"CAST({texts[0]} AS TEXT)" if sqlite else f"convert_from({texts[0]}, 'UTF8')"
        elif name == "UTL_RAW.CAST_TO_RAW":
            out = f"CAST({texts[0]} AS BLOB)" if sqlite else f"convert_to({texts[0]}, 'UTF8')"
        elif name in ("UTL_RAW.LENGTH", "DBMS_LOB.GETLENGTH"):
            out = f"length({texts[0]})"
        elif name == "DBMS_LOB.SUBSTR":
            amount = texts[1] if len(texts) > 1 else "32767"
            offset = texts[2] if len(texts) > 2 else "1"
            out = (f"(CASE WHEN ({amount}) >= 1 AND ({offset}) >= 1 THEN "
                   f"substr({texts[0]}, CAST(({offset}) AS INTEGER), CAST(({amount}) AS INTEGER)) END)")
        elif name == "DBMS_LOB.INSTR":
            out = f"ORACLE_INSTR({', '.join(texts)})"
        elif name == "JSON_OBJECT":
            out = self._json_object(args)
        else:
            out = self._json(name, texts[0], args[1])
        self.edits.append((toks[i].start, toks[close].end, out))

    def _json_object(self, args: list[tuple[int, int]]) -> str:
        """``JSON_OBJECT('k' IS v, KEY 'k2' VALUE v2, …)`` (NULL ON NULL: a NULL value is
        ``null``) as its compact text: SQLite's ``json_object``, PostgreSQL's
        ``json_build_object`` without its white space."""
        toks, words, parts = self.toks, self.words, []
        for a, b in args:
            k = a + 1 if words[a] == "KEY" else a
            sep = next((j for j in range(k + 1, b) if self.depth[j] == self.depth[a]
                        and words[j] in ("IS", "VALUE")), None)
            if sep is None or any(self.depth[j] == self.depth[a] and words[j] in _OBJECT_CLAUSES
                                  for j in range(sep + 1, b + 1)):
                raise not_supported("JSON_OBJECT without KEY … VALUE / IS pairs, or with its clauses, in SQL")
            parts += [self.text[toks[k].start:toks[sep - 1].end], self.text[toks[sep + 1].start:toks[b].end]]
        if self.sqlite:      # (quoted: the name this module does not read again as Oracle's call)
            return f'"json_object"({", ".join(parts)})'
        return _COMPACT.format(f"CAST(json_build_object({', '.join(parts)}) AS TEXT)")

    def _json(self, name: str, doc: str, path: tuple[int, int]) -> str:
        """``JSON_QUERY(doc, 'path')`` (the object or array there as compact text, else NULL)
        or ``JSON_EXISTS(doc, 'path')`` of a literal simple path: SQLite's ``json_extract`` /
        ``json_type`` (NULL for a document that is no JSON, as Oracle's NULL ON ERROR),
        PostgreSQL's ``json_extract_path`` (the json type: the document's key order kept), of
        a document that is JSON (else NULL / false as on SQLite)."""
        t = self.toks[path[0]]
        text = t.text[1:-1].replace("''", "'") if path[0] == path[1] and t.kind == "str" else None
        if text is None or not _PATH.fullmatch(text.strip()):
            raise not_supported(f"{name} with this path or clause in SQL (Sluice answers a literal path of "
                                "$, .name and [n] steps)")
        text = text.strip()
        if self.sqlite:
            lit = "'" + text.replace("'", "''") + "'"
            if name == "JSON_EXISTS":
                return f"(json_valid({doc}) AND json_type({doc}, {lit}) IS NOT NULL)"
            return (f"(CASE WHEN json_valid({doc}) AND json_type({doc}, {lit}) IN ('object', 'array') "
                    f"THEN json_extract({doc}, {lit}) END)")
        keys = ["'" + (m.group(1) or m.group(2) or m.group(3) or "").replace("'", "''") + "'"
                for m in _STEP.finditer(text[1:])]
        text = f"CAST({doc} AS TEXT)"
        # a document that is no JSON is NULL / false (Oracle's NULL ON ERROR) where the cast
        # would raise: PostgreSQL 15 has no IS JSON, and '[doc]' is an array of one value
        # exactly when doc is a JSON value (the store's JSON_VALUE answers NULL for bad JSON)
        valid = f"JSON_VALUE('[' || {text} || ']', '$.size()') = '1'"
        value = f"CAST({text} AS JSON)"          # ('$': the document; json_extract_path needs a key)
        value = f"json_extract_path({value}{''.join(', ' + k for k in keys)})" if keys else value
        if name == "JSON_EXISTS":
            return f"(CASE WHEN {valid} THEN {value} IS NOT NULL ELSE FALSE END)"
        # (CASE in CASE, not AND: PostgreSQL would cast a literal's document as it plans the
        # statement, whatever the other operand of AND; a WHEN it finds false it skips)
        return (f"(CASE WHEN {valid} THEN CASE WHEN json_typeof({value}) IN ('object', 'array') THEN "
                f"{_COMPACT.format(f'CAST({value} AS TEXT)')} END END)")

    def _text(self) -> str:
        edits = sorted(enumerate(self.edits), key=lambda e: (e[1][0], e[1][1] > e[1][0], e[0]))
        out, at = [], 0
        for _, (start, end, text) in edits:
            if start < at:
                continue        # (inside a piece already rewritten: a call in a call's argument)
            out.append(self.text[at:start])
            out.append(text)
            at = end
        out.append(self.text[at:])
        return "".join(out)


def _refused():
    return not_supported("CONNECT BY without PRIOR in SQL other than the row generator SELECT … FROM DUAL "
                         "CONNECT BY LEVEL <= n")
