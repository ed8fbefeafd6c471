"""A synchronous capture's rules as SQL its triggers evaluate.

A synchronous capture evaluates its positive rule set when the change is made, in
the changing transaction (there is no negative rule set).  Sluice's triggers are
plain SQL / PL/pgSQL so that any writer — a plain ``sqlite3`` or ``psql`` session on
the same file or database — is captured; so the rules run as SQL too: each rule
condition is compiled by the rules engine's SQL compiler
(:mod:`sluice.rules.compile.sql`) over the LCR's columnar shape
(:mod:`sluice.rules.compile.typed.lcrschema`), whose columns the trigger supplies as
expressions: owner, object name, command type and source database are constants of
the trigger, the tag and transaction id read the writer's session, old and new values
are the row's columns.  The result is one predicate per table and command type with
every value written as a literal (a trigger has no bind parameters).

Which tables a rule captures: Oracle's synchronous capture uses table and subset
rules only (``DBMS_STREAMS_ADM.ADD_TABLE_RULES`` / ``ADD_SUBSET_RULES`` with
``streams_type => 'sync_capture'``); such a rule names its table with
``:dml.get_object_owner() = 'HR'`` and ``:dml.get_object_name() = 'EMPLOYEES'`` among
the terms it ANDs.  :func:`rule_table` finds them; a rule that names no table is
refused (ORA-26667), as is one the trigger cannot evaluate in plain SQL.
"""

from __future__ import annotations

import dataclasses
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable

from ...errors import ora
from ...rules.compile.sql.base import NOW, SYSDATE
from ...rules.compile.sql.compiler import NotCompilable
from ...rules.compile.sql.postgres import PostgresRenderer
from ...rules.compile.sql.sqlite import SqliteRenderer
from ...rules.compile.typed.ir import Column
from ...rules.compile.typed.lcrschema import LCR_COLUMNS, LcrResolver
from ...rules.compile.typed.lower import lower_condition
from ...rules.lang.ast import And, Bind, Compare, Condition, Literal, MethodCall
from ...rules.lang.parser import parse_condition
from ...store.sqlitefns import to_sqlite

__all__ = ["rule_table", "rule_variables", "TriggerColumns", "compile_rules", "Migration", "compile_update_rules"]


def _member(value: Any) -> str | None:
    """``GET_OBJECT_OWNER`` for ``:dml.get_object_owner()`` (the ``:dml`` / ``:lcr`` variable)."""
    if (isinstance(value, MethodCall) and not value.args and isinstance(value.obj, Bind)
            and value.obj.name.upper() in ("DML", "LCR")):
        return value.name.upper()
    return None


def _terms(cond: Condition) -> list[Condition]:
    if isinstance(cond, And):
        return [t for term in cond.terms for t in _terms(term)]
    return [cond]


def rule_table(condition: str) -> tuple[str, str] | None:
    """``(owner, object)`` the rule names with ``:dml.get_object_owner() = '…'`` and
    ``:dml.get_object_name() = '…'`` among the terms it ANDs; None when it names none."""
    found: dict[str, str] = {}
    for term in _terms(parse_condition(condition)):
        if not isinstance(term, Compare) or term.op != "=":
            continue
        for left, right in ((term.left, term.right), (term.right, term.left)):
            member = _member(left)
            if member in ("GET_OBJECT_OWNER", "GET_OBJECT_NAME") and isinstance(right, Literal) \
                    and isinstance(right.value, str):
                found.setdefault(member, right.value)
    if "GET_OBJECT_OWNER" in found and "GET_OBJECT_NAME" in found:
        return found["GET_OBJECT_OWNER"], found["GET_OBJECT_NAME"]
    return None


def rule_variables(condition: str) -> set[str]:
    """The variables (``DML``, ``DDL`` …) a rule condition reads."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Bind):
            found.add(node.name.upper())
        elif isinstance(node, (list, tuple)):
            for item in node:
                walk(item)
        elif dataclasses.is_dataclass(node):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name))
    walk(parse_condition(condition))
    return found


class TriggerColumns:
    """The LCR's columns (:data:`LCR_COLUMNS`) as SQL expressions inside one trigger.

    ``constants``: owner, object, command type, source database; ``expressions``: the
    tag, the transaction id and (built only when a rule reads them) the four value
    maps, each a callable returning SQL."""

    def __init__(self, constants: dict[str, str], expressions: dict[str, Callable[[], str]]) -> None:
        self.constants = constants
        self.expressions = expressions

    @classmethod
    def for_change(cls, owner: str, name: str, op: str, source_database: str, tag: str, txn: str,
                   value_map: Callable[[str | None, str], str]) -> "TriggerColumns":
        """The columns for a change ``op`` (INSERT / UPDATE / DELETE) of the table
        ``owner.name``; ``value_map(side, of)`` is the SQL of the JSON map of the row
        ``side`` (``NEW`` / ``OLD``, None when the change has none) holding its ``values``
        or ``types``."""
        new = None if op == "DELETE" else "NEW"
        old = None if op == "INSERT" else "OLD"
        return cls({"object_owner": owner, "object_name": name, "command_type": op,
                    "source_database_name": source_database},
                   {"tag": lambda: tag, "transaction_id": lambda: txn,
                    "new_values": lambda: value_map(new, "values"), "new_types": lambda: value_map(new, "types"),
                    "old_values": lambda: value_map(old, "values"), "old_types": lambda: value_map(old, "types")})

    def sql(self, name: str, literal: Callable[[Any], str]) -> str:
        if name == "lcr_kind":
            return literal("ROW")
        if name in self.constants:
            return literal(self.constants[name])
        if name in self.expressions:
            return "(" + self.expressions[name]() + ")"
        raise NotCompilable(f"a synchronous capture's trigger has no {name}")


def _sqlite_literal(value: Any) -> str:
    value = to_sqlite(value)
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return "X'" + bytes(value).hex() + "'"
    return "'" + str(value).replace("'", "''") + "'"


def _pg_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value) + "::double precision"
    if isinstance(value, (bytes, bytearray)):
        return "'\\x" + bytes(value).hex() + "'::bytea"
    if isinstance(value, datetime):
        return "'" + value.isoformat(sep=" ") + "'::timestamp"
    if isinstance(value, date):
        return "'" + value.isoformat() + "'::timestamp"
    return "'" + str(value).replace("'", "''") + "'"


def _renderer(base: type, literal: Callable[[Any], str], columns: TriggerColumns) -> Any:
    """A renderer of ``base`` that writes values as literals and LCR columns as the
    trigger's expressions."""

    class TriggerRenderer(base):    # type: ignore[misc, valid-type]
        def param(self, value: Any) -> tuple[str, tuple]:
            if value is NOW or value is SYSDATE:
                raise NotCompilable("SYSDATE in a synchronous capture rule")
            return literal(value), ()

        def const(self, node: Any) -> tuple[str, tuple]:
            return super().const(node)[0], ()     # its text holds the literal already

        def column(self, node: Column) -> tuple[str, tuple]:
            return columns.sql(node.name, literal), ()

    return TriggerRenderer()


class _SqliteTrigger(SqliteRenderer):
    """SQLite without Sluice's user functions: a plain ``sqlite3`` writer fires the
    trigger too.  The value maps hold numbers as SQLite prints them, so reading one as
    a number is a CAST (the rules' ORA-22626 check has already tested its type)."""

    def op_num_of_char(self, n: Any) -> tuple[str, tuple]:
        text, params = self.r(n.args[0])
        return f"CAST({text} AS NUMERIC)", params

    def op_num_bad(self, n: Any) -> tuple[str, tuple]:
        text, params = self.r(n.args[0])
        return f"(CAST({text} AS TEXT) IS NULL)", params


def compile_rules(conditions: list[tuple[str, str]], dialect: str, columns: TriggerColumns) -> str:
    """One SQL predicate, TRUE when one of ``conditions`` (``(rule name, condition)``)
    is TRUE for the change.  :raises: ORA-26667 naming the rule the trigger cannot
    evaluate in plain SQL."""
    if dialect == "sqlite":
        renderer = _renderer(_SqliteTrigger, _sqlite_literal, columns)
    else:
        renderer = _renderer(PostgresRenderer, _pg_literal, columns)
    parts = []
    for name, condition in conditions:
        try:
            text, params = renderer.render(lower_condition(parse_condition(condition), LcrResolver()))
        except NotCompilable as e:
            raise ora(26667, f"rule {name} cannot be evaluated by a synchronous capture's trigger: {e}") \
                from None
        assert not params, "values are literals"
        if dialect == "sqlite" and "sluice_" in text:
            raise ora(26667, f"rule {name} needs Sluice's own SQL functions, which a plain SQLite "
                             f"writer does not have; a synchronous capture cannot evaluate it")
        parts.append(f"({text}) IS TRUE")
    return " OR ".join(parts) if parts else ("0" if dialect == "sqlite" else "FALSE")


assert {"object_owner", "object_name", "command_type", "source_database_name", "tag",
        "transaction_id", "old_values", "new_values", "old_types", "new_types"} <= set(LCR_COLUMNS)


class Migration:
    """The rules of an UPDATE trigger in three groups (seed 000 "Row Migration and Subset
    Rules"): ``keep`` (the change stays an UPDATE), ``to_insert`` (subset rules whose action
    context says ``STREAMS$_ROW_SUBSET = 'INSERT'``: the row moved into the subset, the LCR
    becomes an INSERT of the new row) and ``to_delete`` (… 'DELETE': it moved out, a DELETE
    of the old row); each an SQL predicate, or None when no rule is in the group."""

    def __init__(self, keep: str | None, to_insert: str | None, to_delete: str | None) -> None:
        self.keep, self.to_insert, self.to_delete = keep, to_insert, to_delete

    @property
    def migrates(self) -> bool:
        return self.to_insert is not None or self.to_delete is not None

    def any(self, false: str) -> str:
        """TRUE when some rule captures the change."""
        parts = [p for p in (self.keep, self.to_insert, self.to_delete) if p is not None]
        return " OR ".join(f"({p})" for p in parts) if parts else false


def compile_update_rules(rules: list[tuple[str, str, str | None]], dialect: str,
                         columns: TriggerColumns) -> Migration:
    """``rules``: ``(name, condition, STREAMS$_ROW_SUBSET or None)``."""
    groups: dict[str | None, list[tuple[str, str]]] = {}
    for name, condition, subset in rules:
        groups.setdefault(subset if subset in ("INSERT", "DELETE") else None, []).append((name, condition))
    compiled = {k: compile_rules(v, dialect, columns) for k, v in groups.items()}
    return Migration(compiled.get(None), compiled.get("INSERT"), compiled.get("DELETE"))
