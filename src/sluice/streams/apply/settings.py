"""What DBMS_APPLY_ADM sets per table for apply processes, as the catalog keeps it.

Each setting is a ``SLUICE_CATALOG`` row (so a running apply process sees a change at
its next transaction: the catalog version moves) whose name makes it unique and whose
spec holds Oracle's columns:

============================  ==========================  ========================================
kind                          owner / name                the view
============================  ==========================  ========================================
``APPLY_KEY_COLUMN``          object owner / object|col   DBA_APPLY_KEY_COLUMNS (SET_KEY_COLUMNS)
``APPLY_INSTANTIATION``       source database / owner     DBA_APPLY_INSTANTIATED_OBJECTS,
                              [.object]                   DBA_APPLY_INSTANTIATED_SCHEMAS
``APPLY_CONFLICT_COLUMN``     object owner / object|col   DBA_APPLY_CONFLICT_COLUMNS
``APPLY_DML_HANDLER``         object owner / object|op|   DBA_APPLY_DML_HANDLERS
                              error|apply
============================  ==========================  ========================================

:class:`Settings` reads them for one apply process, cached until the catalog changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..capture.context import CaptureContext

__all__ = ["Settings", "KEY_COLUMN", "INSTANTIATION", "CONFLICT_COLUMN", "DML_HANDLER",
           "ConflictGroup", "OPERATIONS"]

KEY_COLUMN = "APPLY_KEY_COLUMN"
INSTANTIATION = "APPLY_INSTANTIATION"
CONFLICT_COLUMN = "APPLY_CONFLICT_COLUMN"
DML_HANDLER = "APPLY_DML_HANDLER"
OPERATIONS = ("INSERT", "UPDATE", "DELETE", "LOB_UPDATE", "DEFAULT")
METHODS = ("OVERWRITE", "DISCARD", "MAXIMUM", "MINIMUM")


@dataclass(frozen=True, slots=True)
class ConflictGroup:
    """One SET_UPDATE_CONFLICT_HANDLER column list with its method and resolution column."""

    method: str
    resolution_column: str
    columns: frozenset[str]


def _link_matches(spec: dict, link: str | None) -> bool:
    return (spec.get("apply_database_link") or None) == (link or None)


class Settings:
    """The per-table settings that apply to one apply process (its target: ``link``)."""

    def __init__(self, ctx: CaptureContext, apply_name: str, link: str | None) -> None:
        self.ctx, self.apply_name, self.link = ctx, apply_name, link
        self._version = -1
        self._refresh()

    def _refresh(self) -> None:
        version = self.ctx.catalog_version()
        if version == self._version:
            return
        self._version = version
        ctx, link = self.ctx, self.link
        keys: dict[tuple[str, str], list[tuple[int, str]]] = {}
        for owner, _, spec in ctx.objects(KEY_COLUMN):
            if _link_matches(spec, link):
                keys.setdefault((owner, spec["object_name"]), []).append((spec["position"], spec["column_name"]))
        self.key_columns = {k: [c for _, c in sorted(v)] for k, v in keys.items()}
        self.instantiation: dict[tuple[str, str, str | None], int] = {}
        for source_db, _, spec in ctx.objects(INSTANTIATION):
            if _link_matches(spec, link):
                self.instantiation[(source_db, spec["source_object_owner"],
                                    spec.get("source_object_name"))] = spec["instantiation_scn"]
        groups: dict[tuple[str, str, str], list[str]] = {}
        methods: dict[tuple[str, str, str], str] = {}
        for owner, _, spec in ctx.objects(CONFLICT_COLUMN):
            if _link_matches(spec, link):
                key = (owner, spec["object_name"], spec["resolution_column"])
                groups.setdefault(key, []).append(spec["column_name"])
                methods[key] = spec["method_name"]
        self.conflict_groups: dict[tuple[str, str], list[ConflictGroup]] = {}
        for (owner, obj, res), cols in groups.items():
            self.conflict_groups.setdefault((owner, obj), []).append(
                ConflictGroup(methods[(owner, obj, res)], res, frozenset(cols)))
        self.dml_handlers: dict[tuple[str, str, str, bool], str] = {}
        for owner, _, spec in ctx.objects(DML_HANDLER):
            if _link_matches(spec, link) and spec.get("apply_name") in (None, self.apply_name):
                key = (owner, spec["object_name"], spec["operation_name"], bool(spec["error_handler"]))
                # a handler for this apply process wins over one for every apply process
                if key not in self.dml_handlers or spec.get("apply_name"):
                    self.dml_handlers[key] = spec["user_procedure"]

    def current(self) -> "Settings":
        self._refresh()
        return self

    def instantiation_scn(self, source_db: str, owner: str, name: str) -> int | None:
        """The table's instantiation SCN, else its schema's (None: none set)."""
        scn = self.instantiation.get((source_db, owner, name))
        if scn is None:
            scn = self.instantiation.get((source_db, owner, None))
        return scn

    def dml_handler(self, owner: str, name: str, operation: str, error: bool) -> str | None:
        found = self.dml_handlers.get((owner, name, operation, error))
        if found is None:
            found = self.dml_handlers.get((owner, name, "DEFAULT", error))
        return found


def put(ctx: CaptureContext, kind: str, owner: str, name: str, spec: dict[str, Any]) -> None:
    ctx.put_object(kind, owner, name, spec, replace=True)


def drop_where(ctx: CaptureContext, kind: str, owner: str, match: Any) -> int:
    n = 0
    for o, name, spec in ctx.objects(kind):
        if o == owner and match(name, spec):
            n += ctx.drop_object(kind, o, name)
    return n
