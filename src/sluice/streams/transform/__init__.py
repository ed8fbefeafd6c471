"""Declarative rule-based transformations: what they are and what they do to a row LCR.

``DBMS_STREAMS_ADM.RENAME_SCHEMA / RENAME_TABLE / ADD_COLUMN / DELETE_COLUMN /
RENAME_COLUMN / KEEP_COLUMNS`` (:mod:`.adm`) attach a transformation to a rule; when that
rule is the TRUE rule of a Streams client's positive rule set, the client performs it on
the row LCR (seed 000 "Information About Declarative Rule-Based Transformations": an
internal modification of a row LCR, performed before any custom rule-based
transformation of the same action context).  A rule's transformations run in order of
``step_number``, and within a step in the default order KEEP_COLUMNS, DELETE_COLUMN,
RENAME_COLUMN, ADD_COLUMN, RENAME_TABLE, RENAME_SCHEMA (:data:`PRECEDENCE`).

This module is the one statement of their semantics: :func:`transform` performs them on
a :class:`~sluice.streams.lcr.RowLCR` (the Python engine), and the Spark engine compiles
the same :class:`Declarative` records to Columns (:mod:`sluice.pipeline.transform`); a
test holds the two equal.  A column transformation names its table: it touches only row
LCRs of that table, and a column it would delete, rename or keep that the LCR does not
carry is no error (the LCR passes unchanged); ADD_COLUMN adds only a column the LCR does
not carry yet, to the value lists its command has (NEW: INSERT and UPDATE, OLD: UPDATE
and DELETE); RENAME_COLUMN leaves the LCR alone when the new name is taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from ...aq.payload import dumps_json, loads_json
from ...rules.engine.anydata import AnyData

__all__ = ["Declarative", "PRECEDENCE", "KINDS", "transform", "ordered", "sides"]

# the default order within a step (DBA_STREAMS_TRANSFORMATIONS.PRECEDENCE)
PRECEDENCE = {"KEEP COLUMNS": 1, "DELETE COLUMN": 2, "RENAME COLUMN": 3, "ADD COLUMN": 4,
              "RENAME TABLE": 5, "RENAME SCHEMA": 6}
KINDS = tuple(PRECEDENCE)
_SIDES = {"*": ("OLD", "NEW"), "OLD": ("OLD",), "NEW": ("NEW",)}
# which value lists a command carries
_HAS = {"INSERT": ("NEW",), "UPDATE": ("OLD", "NEW"), "DELETE": ("OLD",)}


@dataclass(frozen=True)
class Declarative:
    """One declarative transformation of rule ``rule`` (``OWNER.NAME``).

    ``schema``/``table``: the table it concerns (column kinds, RENAME_TABLE's from);
    ``from_name``/``to_name``: RENAME_SCHEMA's schemas, RENAME_TABLE's target
    ``(owner, table)`` as ``to_schema``/``to_name``, RENAME_COLUMN's columns;
    ``column``: ADD_COLUMN / DELETE_COLUMN's column; ``columns``: KEEP_COLUMNS';
    ``value``: ADD_COLUMN's value (an AnyData); ``value_type``: '*', 'OLD' or 'NEW'.
    """

    rule: str
    kind: str
    step_number: int = 0
    schema: str | None = None
    table: str | None = None
    from_name: str | None = None
    to_name: str | None = None
    to_schema: str | None = None
    column: str | None = None
    columns: tuple[str, ...] = ()
    value: AnyData = field(default_factory=lambda: AnyData(None, None))
    value_type: str = "*"

    @property
    def precedence(self) -> int:
        return PRECEDENCE[self.kind]

    def to_spec(self) -> dict:
        value = self.value
        return {"rule": self.rule, "kind": self.kind, "step_number": self.step_number,
                "schema": self.schema, "table": self.table, "from_name": self.from_name,
                "to_name": self.to_name, "to_schema": self.to_schema, "column": self.column,
                "columns": list(self.columns), "value_type": self.value_type,
                "value": [value.get_type_name(), _stored(value.value)]}

    @classmethod
    def from_spec(cls, spec: dict) -> "Declarative":
        type_name, stored = spec["value"]
        return cls(spec["rule"], spec["kind"], spec["step_number"], spec["schema"], spec["table"],
                   spec["from_name"], spec["to_name"], spec["to_schema"], spec["column"],
                   tuple(spec["columns"]), AnyData(type_name, _loaded(type_name, stored)), spec["value_type"])

    def concerns(self, owner: str | None, name: str | None) -> bool:
        """Is a column transformation's table (or RENAME_TABLE's source) this one?"""
        return (owner, name) == (self.schema, self.table)


def _stored(value: Any) -> Any:
    return None if value is None else dumps_json(value)


def _loaded(type_name: str | None, stored: Any) -> Any:
    return None if stored is None else loads_json(stored)


def ordered(transformations: Iterable[Declarative]) -> list[Declarative]:
    """In the order they are performed: by step number, then the default order."""
    return sorted(transformations, key=lambda t: (t.step_number, t.precedence))


def sides(t: Declarative, command: str | None) -> tuple[str, ...]:
    """The value lists (OLD / NEW) of an LCR with ``command`` that ``t`` touches."""
    has = _HAS.get(command or "", ())
    return tuple(s for s in _SIDES[t.value_type] if s in has)


def transform(lcr: Any, transformations: Iterable[Declarative]) -> Any:
    """Perform ``transformations`` (those of the LCR's TRUE rule) on a row LCR, in place;
    returns it.  DDL LCRs and user messages pass unchanged."""
    if not hasattr(lcr, "get_values"):
        return lcr
    for t in ordered(transformations):
        _one(lcr, t)
    return lcr


def _one(lcr: Any, t: Declarative) -> None:
    owner, name = lcr.get_object_owner(), lcr.get_object_name()
    if t.kind == "RENAME SCHEMA":
        if owner == t.from_name:
            lcr.set_object_owner(t.to_name)
        return
    if not t.concerns(owner, name):
        return
    if t.kind == "RENAME TABLE":
        lcr.set_object_owner(t.to_schema)
        lcr.set_object_name(t.to_name)
        return
    for side in sides(t, lcr.get_command_type()):
        present = {u.column_name for u in lcr.get_values(side, "N")}
        if t.kind == "KEEP COLUMNS":
            for column in present - set(t.columns):
                lcr.delete_column('"' + column + '"', side)
        elif t.kind == "DELETE COLUMN":
            if t.column in present:
                lcr.delete_column('"' + t.column + '"', side)
        elif t.kind == "RENAME COLUMN":
            if t.from_name in present and t.to_name not in present:
                lcr.rename_column('"' + t.from_name + '"', '"' + t.to_name + '"', side)
        elif t.kind == "ADD COLUMN":
            if t.column not in present:
                lcr.add_column(side, '"' + t.column + '"', t.value)
