"""An apply process's definition, as the catalog keeps it (DBA_APPLY's columns).

An apply process is a ``SLUICE_CATALOG`` row of kind ``APPLY`` (owner ``SYS``: Streams
process names form one namespace per database, like capture's), whose spec holds what
DBMS_APPLY_ADM (or an ADD_*_RULES call) set.  The apply engine that runs it is another
issue; this is its catalog entry.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from ...errors import ora
from ..capture.context import CaptureContext
from ..clientspec import ClientSpec

KIND = "APPLY"
OWNER = "SYS"
ENABLED, DISABLED, ABORTED = "ENABLED", "DISABLED", "ABORTED"


@dataclass
class ApplySpec(ClientSpec):
    name: str
    queue_owner: str
    queue_name: str
    apply_user: str
    apply_captured: bool = False
    rule_set_owner: str | None = None
    rule_set_name: str | None = None
    negative_rule_set_owner: str | None = None
    negative_rule_set_name: str | None = None
    message_handler: str | None = None
    ddl_handler: str | None = None
    precommit_handler: str | None = None
    apply_tag: str | None = None            # RAW, as hex
    apply_database_link: str | None = None
    source_database: str | None = None
    status: str = DISABLED
    status_change_time: float = 0.0
    error_number: int | None = None
    error_message: str | None = None

    def with_status(self, status: str) -> "ApplySpec":
        return dataclasses.replace(self, status=status, status_change_time=time.time())


def find(ctx: CaptureContext, name: str) -> ApplySpec | None:
    spec = ctx.get_object(KIND, OWNER, name)
    return None if spec is None else ApplySpec.from_spec(name, spec)


def load(ctx: CaptureContext, name: str) -> ApplySpec:
    """:raises: ORA-26701 when there is no such apply process."""
    found = find(ctx, name)
    if found is None:
        raise ora(26701, name)
    return found


def all_specs(ctx: CaptureContext) -> list[ApplySpec]:
    return [ApplySpec.from_spec(n, s) for o, n, s in ctx.objects(KIND) if o == OWNER]


def save(ctx: CaptureContext, spec: ApplySpec, replace: bool = True) -> None:
    ctx.put_object(KIND, OWNER, spec.name, spec.to_spec(), replace=replace)
