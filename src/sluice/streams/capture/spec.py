"""A capture process's definition, as the catalog keeps it (DBA_CAPTURE's columns).

A capture process is a ``SLUICE_CATALOG`` row of kind ``CAPTURE`` (owner ``SYS``:
Oracle's Streams process names form one namespace per database, without a schema)
whose spec holds what DBMS_CAPTURE_ADM set; what the running process writes with
every batch — its position, counters, state — is its ``SLUICE_CAPTURE_PROGRESS``
row, written in the batch's own transaction.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from ...errors import ora
from ..clientspec import ClientSpec
from .context import CaptureContext

KIND = "CAPTURE"
OWNER = "SYS"
ENABLED, DISABLED, ABORTED = "ENABLED", "DISABLED", "ABORTED"


@dataclass
class CaptureSpec(ClientSpec):
    name: str
    queue_owner: str
    queue_name: str
    capture_user: str
    slot: str
    source_database: str
    first_scn: int
    start_scn: int
    rule_set_owner: str | None = None
    rule_set_name: str | None = None
    negative_rule_set_owner: str | None = None
    negative_rule_set_name: str | None = None
    source_dsn: str | None = None          # None: the database the store lives in
    status: str = DISABLED
    status_change_time: float = 0.0
    error_number: int | None = None
    error_message: str | None = None
    checkpoint_retention_time: float = 60.0
    version: str = "11.1.0"
    capture_type: str = "LOCAL"
    staging: str = "PERSISTENT"            # SET_PARAMETER 'STAGING': PERSISTENT or BUFFERED
    txn_lcr_spill_threshold: str = "10000"  # SET_PARAMETER: a count or INFINITE (spill.py)
    created: float = 0.0

    @property
    def queue(self) -> str:
        return f'"{self.queue_owner}"."{self.queue_name}"'

    def with_status(self, status: str, error: Exception | None = None) -> "CaptureSpec":
        code = getattr(error, "code", None) if error is not None else None
        return dataclasses.replace(self, status=status, status_change_time=time.time(),
                                   error_number=code or (600 if error is not None else None),
                                   error_message=str(error) if error is not None else None)


def load(ctx: CaptureContext, name: str) -> CaptureSpec:
    """:raises: ORA-26701 when there is no such capture process."""
    spec = ctx.get_object(KIND, OWNER, name)
    if spec is None:
        raise ora(26701, name)
    return CaptureSpec.from_spec(name, spec)


def find(ctx: CaptureContext, name: str) -> CaptureSpec | None:
    spec = ctx.get_object(KIND, OWNER, name)
    return None if spec is None else CaptureSpec.from_spec(name, spec)


def all_specs(ctx: CaptureContext) -> list[CaptureSpec]:
    return [CaptureSpec.from_spec(n, s) for o, n, s in ctx.objects(KIND) if o == OWNER]


def save(ctx: CaptureContext, spec: CaptureSpec, replace: bool = True) -> None:
    ctx.put_object(KIND, OWNER, spec.name, spec.to_spec(), replace=replace)
