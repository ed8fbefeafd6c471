"""DBMS_STREAMS_ADM's declarative transformation procedures and their catalog.

Each transformation is a ``SLUICE_CATALOG`` row of kind :data:`KIND` owned by its rule's
owner; the view ``DBA_STREAMS_TRANSFORMATIONS`` shows them with Oracle's columns.
``operation => 'ADD'`` (the default) adds one -- the same transformation added twice is
one -- and ``'REMOVE'`` removes the one with the same parameters (ORA-01403 when there is
none).  The rule must exist (ORA-24147).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Iterable

from ...errors import ora
from ...names import canonical, name_list, split_qualified
from ...rules.engine.anydata import AnyData
from ...rules.engine.ruleset import rules_catalog
from . import Declarative

if TYPE_CHECKING:
    from ...store.base import Store

__all__ = ["KIND", "DeclarativeTransformations", "declarative_transformations"]

KIND = "STREAMS TRANSFORMATION"


def declarative_transformations(store: "Store") -> dict[str, list[Declarative]]:
    """Every declarative transformation, by its rule's qualified name."""
    out: dict[str, list[Declarative]] = {}
    for _owner, _name, spec in store.catalog_objects(KIND):
        t = Declarative.from_spec(spec)
        out.setdefault(t.rule, []).append(t)
    return out


class DeclarativeTransformations:
    """The declarative transformation procedures of DBMS_STREAMS_ADM (mixed into
    :class:`sluice.streams.adm.StreamsAdm`, which provides ``self._conn``)."""

    _conn: Any

    def rename_schema(self, rule_name: str, from_schema_name: str, to_schema_name: str,
                      step_number: int = 0, operation: str = "ADD") -> None:
        self._declare(rule_name, "RENAME SCHEMA", step_number, operation,
                      from_name=canonical(from_schema_name, "schema name"),
                      to_name=canonical(to_schema_name, "schema name"))

    def rename_table(self, rule_name: str, from_table_name: str, to_table_name: str,
                     step_number: int = 0, operation: str = "ADD") -> None:
        schema, table = self._table(from_table_name)
        to_schema, to_table = self._table(to_table_name)
        self._declare(rule_name, "RENAME TABLE", step_number, operation, schema=schema, table=table,
                      to_schema=to_schema, to_name=to_table)

    def add_column(self, rule_name: str, table_name: str, column_name: str, column_value: Any,
                   value_type: str = "NEW", step_number: int = 0, operation: str = "ADD") -> None:
        schema, table = self._table(table_name)
        self._declare(rule_name, "ADD COLUMN", step_number, operation, schema=schema, table=table,
                      column=canonical(column_name, "column name"), value=AnyData.of(column_value),
                      value_type=self._value_type(value_type, both=False))

    def delete_column(self, rule_name: str, table_name: str, column_name: str, value_type: str = "*",
                      step_number: int = 0, operation: str = "ADD") -> None:
        schema, table = self._table(table_name)
        self._declare(rule_name, "DELETE COLUMN", step_number, operation, schema=schema, table=table,
                      column=canonical(column_name, "column name"), value_type=self._value_type(value_type))

    def rename_column(self, rule_name: str, table_name: str, from_column_name: str, to_column_name: str,
                      value_type: str = "*", step_number: int = 0, operation: str = "ADD") -> None:
        schema, table = self._table(table_name)
        self._declare(rule_name, "RENAME COLUMN", step_number, operation, schema=schema, table=table,
                      from_name=canonical(from_column_name, "column name"),
                      to_name=canonical(to_column_name, "column name"), value_type=self._value_type(value_type))

    def keep_columns(self, rule_name: str, table_name: str, column_list: str | Iterable[str],
                     value_type: str = "*", step_number: int = 0, operation: str = "ADD") -> None:
        """``column_list``: a comma-separated list (Oracle's VARCHAR2 form) or the names."""
        schema, table = self._table(table_name)
        columns = tuple(canonical(c, "column name") for c in name_list(column_list, "column_list"))
        if not columns:
            raise ora(6502, "KEEP_COLUMNS needs at least one column")
        self._declare(rule_name, "KEEP COLUMNS", step_number, operation, schema=schema, table=table,
                      columns=columns, value_type=self._value_type(value_type))

    # -- the one way in ---------------------------------------------------------------
    def _table(self, name: str) -> tuple[str, str]:
        return split_qualified(name, self._conn.username, "table name")

    @staticmethod
    def _value_type(value_type: Any, both: bool = True) -> str:
        vt = str(value_type or "").strip().upper()
        if vt in ("OLD", "NEW") or (both and vt == "*"):
            return vt
        raise ora(6502, f"value_type must be 'OLD'{', ' if both else ' or '}'NEW'"
                        f"{' or *' if both else ''}, not {value_type!r}")

    def _declare(self, rule_name: str, kind: str, step_number: Any, operation: str, **fields: Any) -> None:
        conn = self._conn
        ctx = conn.context
        op = str(operation or "").strip().upper()
        if op not in ("ADD", "REMOVE"):
            raise ora(6502, f"operation must be 'ADD' or 'REMOVE', not {operation!r}")
        if not isinstance(step_number, int) or isinstance(step_number, bool) or step_number < 0:
            raise ora(6502, f"step_number must be a non-negative integer, not {step_number!r}")
        catalog = rules_catalog(ctx.store)
        rule = catalog.rule(catalog.key(rule_name, conn.username, "rule name"))   # ORA-24147
        t = Declarative(rule.qualified, kind, step_number, **fields)
        spec = t.to_spec()
        key = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
        owner, name = rule.owner, f"{rule.qualified}#{key}"
        ctx.ddl_commit()
        if op == "ADD":
            ctx.store.put_catalog_object(KIND, owner, name, spec, replace=True)
        elif not ctx.store.drop_catalog_object(KIND, owner, name):
            raise ora(1403, f"no {kind} transformation with these parameters on {rule.qualified}")
