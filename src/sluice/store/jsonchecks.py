"""``CHECK (column IS JSON)``: the pre-21c way to keep JSON in a VARCHAR2, CLOB or BLOB column
(python-oracledb's ``json_blob.py``), as each store can check it.

Oracle's condition ``expr IS [NOT] JSON`` is true when the text (a BLOB's bytes as UTF-8) is
JSON, unknown for a NULL — a check constraint then holds, as for any condition.  Neither
store has the condition (PostgreSQL 15 has no IS JSON): :func:`json_checked` writes it as
SQLite's ``json_valid`` and, on PostgreSQL, as the store's ``JSON_VALUE`` of the text as an
array of one value (NULL for text that is no JSON; ``convert_from`` for a BLOB's ``bytea``).
A row that breaks it is ORA-02290, as any check constraint.  Only a column name is read as
the operand; its clauses (STRICT / LAX, WITH UNIQUE KEYS, FORMAT …) are SLU-00001.  A
column so checked is fetched as its type says (str, a LOB), where python-oracledb 2.x gives
the parsed JSON (a gap).
"""

from __future__ import annotations

import dataclasses
import re

from ..errors import not_supported
from .tabledefs import Column, Constraint

__all__ = ["json_checked"]

_IS_JSON = re.compile(r"\bIS\s+(NOT\s+)?JSON\b", re.I)
# an operand and the condition: a name (maybe quoted), IS [NOT] JSON, then no clause of its own
_CONDITION = re.compile(r"""("(?:[^"]|"")+"|[A-Za-z_][\w$#]*)\s+IS\s+(NOT\s+)?JSON\b(?!\s*(?:STRICT|LAX|WITH|"""
                        r"""WITHOUT|FORMAT|\())""", re.I)


def json_checked(k: Constraint, columns: list[Column], pg: bool) -> Constraint:
    """``k`` with each ``column IS [NOT] JSON`` of its CHECK as the store's condition."""
    if k.kind != "CHECK" or not k.check or not _IS_JSON.search(k.check):
        return k
    types = {c.name: c.type.base if c.type is not None else "" for c in columns}
    found = list(_CONDITION.finditer(k.check))
    if len(found) != len(_IS_JSON.findall(k.check)):
        raise not_supported("IS JSON of an expression or with its clauses (Sluice reads column IS [NOT] JSON)")
    out, at = [], 0
    for m in found:
        name = m.group(1)
        key = name[1:-1].replace('""', '"') if name.startswith('"') else name.upper()
        out += [k.check[at:m.start()], _condition(name, types.get(key, ""), bool(m.group(2)), pg)]
        at = m.end()
    return dataclasses.replace(k, check="".join(out) + k.check[at:])


def _condition(name: str, base: str, negated: bool, pg: bool) -> str:
    blob = base in ("BLOB", "RAW", "LONG RAW")
    if pg:      # (the store's JSON_VALUE is NULL for text that is no JSON)
        text = f"convert_from({name}, 'UTF8')" if blob else f"CAST({name} AS TEXT)"
        valid = f"COALESCE(JSON_VALUE('[' || {text} || ']', '$.size()'), '0') = '1'"
    else:
        valid = f"json_valid({f'CAST({name} AS TEXT)' if blob else name})"
    # NULL is unknown, as in Oracle ("NOT NULL" in the text SQLite reports would read as ORA-01400)
    return f"(CASE WHEN {name} IS NULL THEN NULL ELSE {'NOT ' if negated else ''}{valid} END)"
