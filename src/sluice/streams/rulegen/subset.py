"""Subset rules: the three conditions ADD_SUBSET_RULES generates from a ``dml_condition``.

Seed 000_c58e7ef949d95dc2.txt, "Subset Rules Example": for ``dml_condition =>
'region_id=2'`` on ``hr.regions`` the insert, update and delete rules read

* INSERT: an INSERT or UPDATE whose new row is in the subset and (for an UPDATE) whose
  old row was not — the UPDATE then migrates into an INSERT;
* UPDATE: an UPDATE whose old and new rows are both in the subset;
* DELETE: a DELETE or UPDATE whose old row was in the subset and (for an UPDATE) whose
  new row is not — it migrates into a DELETE.

"Not in the subset" is written as Oracle writes it: the condition is FALSE, or it is
NULL (``NOT EXISTS (SELECT 1 FROM SYS.DUAL WHERE (cond))``, TRUE exactly when ``cond``
is not TRUE).  Each column of the condition is read with the ``Access*`` member of its
datatype: ``region_id`` becomes ``:dml.get_value('NEW','"REGION_ID"').AccessNumber()``,
the rest of the user's text staying as written.  With several columns every column
must be present, and "the old row is NULL" means any of them is NULL.
"""

from __future__ import annotations

from ...errors import DatabaseError, ora
from ...rules.lang.lexer import tokenize
from .conditions import _line_starts, literal

__all__ = ["ACCESSORS", "subset_conditions", "subset_columns"]

# Oracle datatype -> ANYDATA member (LCR$_ROW_UNIT data); LOB, LONG and object columns
# cannot be subset (seed 000 "Restrictions for Subset Rules")
ACCESSORS = {
    "NUMBER": "AccessNumber", "VARCHAR2": "AccessVarchar2", "CHAR": "AccessChar",
    "NVARCHAR2": "AccessNVarchar2", "NCHAR": "AccessNChar", "DATE": "AccessDate",
    "TIMESTAMP": "AccessTimestamp", "RAW": "AccessRaw", "BINARY_FLOAT": "AccessBFloat",
    "BINARY_DOUBLE": "AccessBDouble",
}


def _rewrite(dml_condition: str, columns: dict[str, str], image: str) -> tuple[str, list[str]]:
    """The condition with each column read from the ``image`` ('NEW'/'OLD') values, and
    the columns in order of first use."""
    text = dml_condition
    starts = _line_starts(text)
    tokens = list(tokenize(text))
    out, last, used = [], 0, []
    for k, tok in enumerate(tokens):
        if tok.kind not in ("IDENT", "QIDENT"):
            continue
        follows_dot = k > 0 and tokens[k - 1].kind == "OP" and tokens[k - 1].value == "."
        calls = k + 1 < len(tokens) and tokens[k + 1].kind == "OP" and tokens[k + 1].value == "("
        name = str(tok.value)
        if follows_dot or calls or name not in columns:
            continue        # a function, a member, a keyword-like name: not a column
        i = starts[tok.line - 1] + tok.col - 1
        end = i + len(tok.spelled) + (2 if tok.kind == "QIDENT" else 0)
        quoted = '"' + name.replace('"', '""') + '"'
        out.append(text[last:i] + f":dml.get_value({literal(image)},{literal(quoted)})."
                                  f"{ACCESSORS[columns[name]]}()")
        last = end
        if name not in used:
            used.append(name)
    out.append(text[last:])
    return "".join(out), used


def subset_columns(dml_condition: str, columns: dict[str, str]) -> list[str]:
    """The table's columns the condition reads.  :raises: its syntax error; ORA-00904 when
    it reads no column of the table."""
    _, used = _rewrite(dml_condition, columns, "NEW")
    if not used:
        raise ora(904, f"dml_condition {dml_condition!r} names no column of the table")
    return used


def _value(image: str, column: str) -> str:
    quoted = '"' + column.replace('"', '""') + '"'
    return f":dml.get_value({literal(image)},{literal(quoted)})"


def _present(image: str, used: list[str]) -> str:
    return " AND ".join(f"({_value(image, c)} IS NOT NULL)" for c in used)


def _left_or_outside(image: str, cond: str, used: list[str], columns: dict[str, str]) -> str:
    """The ``image`` row is not in the subset: the condition is FALSE, or it is NULL."""
    access = [f"{_value(image, c)}.{ACCESSORS[columns[c]]}()" for c in used]
    not_null = "(" + " AND ".join(f"{a} IS NOT NULL" for a in access) + ")"
    is_null = "(" + " OR ".join(f"{a} IS NULL" for a in access) + ")"
    return (f"(({not_null} AND NOT ({cond})) "
            f"OR ({is_null} AND NOT EXISTS (SELECT 1 FROM SYS.DUAL WHERE ({cond}))))")


def subset_conditions(owner: str, table: str, dml_condition: str, columns: dict[str, str],
                      include_tagged_lcr: bool, source_database: str | None) -> dict[str, str]:
    """``{'INSERT': …, 'UPDATE': …, 'DELETE': …}`` for ``dml_condition`` on ``owner.table``
    whose columns are ``{name: Oracle datatype}``.

    :raises: ORA-00904 when the condition reads no column; ORA-00902 when a column it
        reads has a datatype subset rules do not support; its syntax error."""
    try:
        new_cond, used = _rewrite(dml_condition, columns, "NEW")
        old_cond, _ = _rewrite(dml_condition, columns, "OLD")
    except DatabaseError as e:
        raise ora(26667, f"dml_condition: {e.message}") from None
    if not used:
        raise ora(904, f"dml_condition {dml_condition!r} names no column of {owner}.{table}")
    for c in used:
        if columns[c] not in ACCESSORS:
            raise ora(902, f"{columns[c]} (column {c}): subset rules support no LOB, LONG or "
                           f"object columns")
    head = [f":dml.get_object_owner()={literal(owner)}", f":dml.get_object_name()={literal(table)}"]
    if not include_tagged_lcr:
        head.append(":dml.is_null_tag()='Y'")
    if source_database is not None:
        head.append(f":dml.get_source_database_name()={literal(source_database)}")
    head_text = " AND ".join(head)
    insert = (f"{head_text} AND :dml.get_command_type() IN ('UPDATE','INSERT') "
              f"AND {_present('NEW', used)} AND ({new_cond}) "
              f"AND (:dml.get_command_type()='INSERT' OR ({_present('OLD', used)} "
              f"AND {_left_or_outside('OLD', old_cond, used, columns)}))")
    update = (f"{head_text} AND :dml.get_command_type()='UPDATE' "
              f"AND {_present('NEW', used)} AND {_present('OLD', used)} "
              f"AND ({old_cond}) AND ({new_cond})")
    delete = (f"{head_text} AND :dml.get_command_type() IN ('UPDATE','DELETE') "
              f"AND {_present('OLD', used)} AND ({old_cond}) "
              f"AND (:dml.get_command_type()='DELETE' OR ({_present('NEW', used)} "
              f"AND {_left_or_outside('NEW', new_cond, used, columns)}))")
    return {"INSERT": insert, "UPDATE": update, "DELETE": delete}
