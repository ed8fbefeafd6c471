"""What the catalog rows of Streams clients (capture processes, propagations, apply
processes) share: a name without a schema (Streams process names form one namespace per
database), a positive and a negative rule set, and a JSON spec in ``SLUICE_CATALOG``."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from ..errors import ora
from ..names import canonical

_T = TypeVar("_T", bound="CatalogRow")


def streams_name(value: Any, what: str) -> str:
    """A Streams client's name in canonical form.  :raises: ORA-26667 for a name that is
    empty or has a schema."""
    if not isinstance(value, str) or not value.strip():
        raise ora(26667, f"{what} {value!r}")
    stripped = value.strip()
    if "." in (stripped if not stripped.startswith('"') else ""):
        raise ora(26667, f"{what} {value!r}: a Streams process name has no schema")
    return canonical(stripped, what.replace("_", " "))


class CatalogRow:
    """Mixed into a dataclass kept as a ``SLUICE_CATALOG`` row: its ``name``, and the rest
    of its fields as the row's JSON spec."""

    name: str

    def to_spec(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)      # type: ignore[call-overload]
        d.pop("name")
        return d

    @classmethod
    def from_spec(cls: type[_T], name: str, spec: dict[str, Any]) -> _T:
        known = {f.name for f in dataclasses.fields(cls)}   # type: ignore[arg-type]
        return cls(name=name, **{k: v for k, v in spec.items() if k in known})  # type: ignore[call-arg]


class ClientSpec(CatalogRow):
    """Mixed into the dataclass of a Streams client's catalog row (its fields ``name``,
    ``rule_set_owner``, ``rule_set_name``, ``negative_rule_set_owner``,
    ``negative_rule_set_name``)."""

    rule_set_owner: str | None
    rule_set_name: str | None
    negative_rule_set_owner: str | None
    negative_rule_set_name: str | None

    @property
    def rule_set(self) -> str | None:
        return None if self.rule_set_name is None else f'"{self.rule_set_owner}"."{self.rule_set_name}"'

    @property
    def negative_rule_set(self) -> str | None:
        if self.negative_rule_set_name is None:
            return None
        return f'"{self.negative_rule_set_owner}"."{self.negative_rule_set_name}"'

    def alter_rule_sets(self, positive: tuple[str | None, str | None], given: bool, remove: bool,
                        negative: tuple[str | None, str | None], negative_given: bool,
                        remove_negative: bool) -> None:
        """ALTER_* for either rule set, as DBMS_CAPTURE_ADM / DBMS_APPLY_ADM do it: a new
        rule set replaces the old one; ``remove`` (without a new one) takes it away."""
        if given:
            self.rule_set_owner, self.rule_set_name = positive
        elif remove:
            self.rule_set_owner = self.rule_set_name = None
        if negative_given:
            self.negative_rule_set_owner, self.negative_rule_set_name = negative
        elif remove_negative:
            self.negative_rule_set_owner = self.negative_rule_set_name = None
