"""The rule conditions DBMS_STREAMS_ADM generates, as seed 000 prints them.

Seed 000_c58e7ef949d95dc2.txt, "System-Created Rules" and its examples, gives the exact
texts; these functions reproduce them character for character (the seed wraps long
lines, which is whitespace):

* global rules (``ADD_GLOBAL_RULES``): ``(:dml.is_null_tag() = 'Y' )``, or with tagged
  LCRs and no source database the always-TRUE ``(( :dml.get_source_database_name()>=' '
  OR :dml.get_source_database_name()<=' ') )`` ("System-Created Global Rules Avoid Empty
  Rule Conditions Automatically");
* schema rules: ``((:dml.get_object_owner() = 'HR') and … )``, the DDL form also
  matching ``get_base_table_owner()``;
* table rules: ``(((:dml.get_object_owner() = 'HR' and :dml.get_object_name() =
  'LOCATIONS')) and … )``, the DDL form also matching the base table;
* subset rules: :mod:`.subset`;
* ``and_condition``: ``((system_condition) and (and_condition))`` with ``:lcr`` rewritten
  to ``:dml`` / ``:ddl`` ("System-Created Rules with Added User-Defined Conditions");
* message rules: the user's condition with ``:msg`` rewritten to the variable of the
  message type's evaluation context (``:"VAR$_52"``).

Names are the data dictionary's (upper case unless created quoted); a quote inside a
name or database name is doubled, as in any SQL literal.
"""

from __future__ import annotations

from ...errors import DatabaseError, ora
from ...rules.lang.lexer import tokenize

__all__ = ["global_condition", "schema_condition", "table_condition", "with_and_condition",
           "rewrite_bind", "literal", "DML", "DDL"]

DML, DDL = "dml", "ddl"


def literal(text: str) -> str:
    """An SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _tail(var: str, include_tagged_lcr: bool, source_database: str | None) -> list[str]:
    parts = []
    if not include_tagged_lcr:
        parts.append(f":{var}.is_null_tag() = 'Y'")
    if source_database is not None:
        parts.append(f":{var}.get_source_database_name() = {literal(source_database)}")
    return parts


def _wrap(parts: list[str]) -> str:
    return "(" + " and ".join(parts) + " )"


def global_condition(var: str, include_tagged_lcr: bool, source_database: str | None) -> str:
    """ADD_GLOBAL_RULES / ADD_GLOBAL_PROPAGATION_RULES: ``var`` is ``dml`` or ``ddl``."""
    parts = _tail(var, include_tagged_lcr, source_database)
    if not parts:     # NULL rule conditions are not supported: a condition TRUE for any LCR
        parts = [f"( :{var}.get_source_database_name()>=' ' OR "
                 f":{var}.get_source_database_name()<=' ')"]
    return _wrap(parts)


def schema_condition(var: str, schema: str, include_tagged_lcr: bool,
                     source_database: str | None) -> str:
    owner = literal(schema)
    if var == DML:
        match = f"(:dml.get_object_owner() = {owner})"
    else:   # GET_OBJECT_OWNER can be NULL when a user who does not own an object changes it
        match = f"(:ddl.get_object_owner() = {owner} or :ddl.get_base_table_owner() = {owner})"
    return _wrap([match, *_tail(var, include_tagged_lcr, source_database)])


def table_condition(var: str, owner: str, table: str, include_tagged_lcr: bool,
                    source_database: str | None) -> str:
    o, t = literal(owner), literal(table)
    if var == DML:
        match = f"((:dml.get_object_owner() = {o} and :dml.get_object_name() = {t}))"
    else:
        match = (f"((:ddl.get_object_owner() = {o} and :ddl.get_object_name() = {t}) "
                 f"or (:ddl.get_base_table_owner() = {o} and :ddl.get_base_table_name() = {t}))")
    return _wrap([match, *_tail(var, include_tagged_lcr, source_database)])


def rewrite_bind(text: str, old: str, new: str) -> str:
    """``text`` with every bind variable ``:old`` (any case) spelled ``:new``; strings,
    comments and other binds untouched.  :raises: the condition's syntax error."""
    starts = _line_starts(text)
    out, last = [], 0
    for tok in tokenize(text):
        if tok.kind == "BIND" and str(tok.value).upper() == old.upper():
            i = starts[tok.line - 1] + tok.col - 1
            end = text.index(":", i) + 1
            end = _bind_end(text, end)
            out.append(text[last:i] + ":" + new)
            last = end
    out.append(text[last:])
    return "".join(out)


def _bind_end(text: str, i: int) -> int:
    """Index after the bind name starting at ``i`` (plain or quoted)."""
    if i < len(text) and text[i] == '"':
        return text.index('"', i + 1) + 1
    while i < len(text) and (text[i].isalnum() or text[i] in "_$#"):
        i += 1
    return i


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def with_and_condition(condition: str, and_condition: str | None, var: str) -> str:
    """``((condition) and (and_condition))`` with ``:lcr`` in ``and_condition`` written
    ``:var``; the condition alone when ``and_condition`` is NULL or blank.
    :raises: ORA-25448-style syntax errors of ``and_condition`` (as ORA-00936 …)."""
    if and_condition is None or not str(and_condition).strip():
        return condition
    try:
        rewritten = rewrite_bind(str(and_condition).strip(), "lcr", var)
    except DatabaseError as e:
        raise ora(26667, f"and_condition: {e.message}") from None
    return f"(({condition}) and ({rewritten}))"
