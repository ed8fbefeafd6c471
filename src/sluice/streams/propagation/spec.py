"""A Streams propagation's definition, as the catalog keeps it (DBA_PROPAGATION's columns).

A propagation is a ``SLUICE_CATALOG`` row of kind PROPAGATION, owner ``SYS`` (Streams
process names form one namespace per database).  It stands for a subscriber of its
source queue whose address is the destination queue (``OWNER.Q@DBLINK``, or ``OWNER.Q``
in the same site), so every message enqueued there afterwards gets a record for it —
Oracle's propagation is such a subscriber too — and for the schedule that moves those
records (:mod:`.schedules`).  Its rule sets decide, when the record is propagated,
whether the message goes or is discarded (seed 001 "Propagation Rules", Table 6-1).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

from ...errors import ora
from ..clientspec import ClientSpec

KIND = "PROPAGATION"
OWNER = "SYS"
ENABLED, DISABLED, ABORTED = "ENABLED", "DISABLED", "ABORTED"


@dataclass
class PropagationSpec(ClientSpec):
    name: str
    source_queue_owner: str
    source_queue_name: str
    destination_queue_owner: str
    destination_queue_name: str
    destination_dblink: str | None          # None: the destination queue is in this site
    queue_to_queue: bool
    rule_set_owner: str | None = None
    rule_set_name: str | None = None
    negative_rule_set_owner: str | None = None
    negative_rule_set_name: str | None = None
    status: str = ENABLED
    error_message: str | None = None
    error_date: float | None = None
    original_propagation_name: str | None = None
    source_database: str | None = None
    created_by: str | None = None
    created: float = 0.0

    @property
    def source_queue(self) -> str:
        return f"{self.source_queue_owner}.{self.source_queue_name}"

    @property
    def address(self) -> str:
        """The address of its subscriber on the source queue: ``OWNER.Q[@DBLINK]``."""
        local = f"{self.destination_queue_owner}.{self.destination_queue_name}"
        return local if self.destination_dblink is None else f"{local}@{self.destination_dblink}"

    def with_status(self, status: str, error: BaseException | None = None) -> "PropagationSpec":
        return dataclasses.replace(self, status=status,
                                   error_message=None if error is None else str(error),
                                   error_date=None if error is None else time.time())


def find(store: Any, name: str) -> PropagationSpec | None:
    for owner, n, spec in store.catalog_objects(KIND):
        if owner == OWNER and n == name:
            return PropagationSpec.from_spec(n, spec)
    return None


def load(store: Any, name: str) -> PropagationSpec:
    """:raises: ORA-23601 when there is no such propagation."""
    spec = find(store, name)
    if spec is None:
        raise ora(23601, name)
    return spec


def all_specs(store: Any) -> list[PropagationSpec]:
    return [PropagationSpec.from_spec(n, s) for o, n, s in store.catalog_objects(KIND) if o == OWNER]


def save(store: Any, spec: PropagationSpec, replace: bool = True) -> None:
    store.put_catalog_object(KIND, OWNER, spec.name, spec.to_spec(), replace=replace)


def drop(store: Any, name: str) -> bool:
    return store.drop_catalog_object(KIND, OWNER, name)
