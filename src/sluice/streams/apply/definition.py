"""An apply process's definition as running it needs it, and the engine built from it.

DBA_APPLY's columns a running apply process reads (queue, rule sets, apply_captured,
apply_database_link, apply_tag, the DDL, message and precommit handlers, apply_user) and
its SET_PARAMETER values, with Oracle's defaults.  :func:`engine_for` builds the
:class:`~.engine.ApplyEngine` for it: the target, the per-table settings, the handlers
resolved by name through :func:`sluice.register_function`'s registry (the one
transformations use).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...routines import registered_function
from ..capture.context import CaptureContext
from .engine import ApplyEngine, Handlers
from .settings import Settings
from .target import open_target

__all__ = ["ApplyDefinition", "engine_for", "PARAMETERS"]

# SET_PARAMETER's parameters with Oracle's defaults
PARAMETERS = {"DISABLE_ON_ERROR": "Y", "COMMIT_SERIALIZATION": "FULL", "PARALLELISM": "1",
              "TXN_LCR_SPILL_THRESHOLD": "10000", "MAXIMUM_SCN": "INFINITE"}


@dataclass
class ApplyDefinition:
    """What an apply process is (DBA_APPLY's columns that running it needs)."""

    name: str
    queue_owner: str
    queue_name: str
    rule_set: str | None = None
    negative_rule_set: str | None = None
    apply_captured: bool = True
    apply_database_link: str | None = None
    apply_tag: bytes | None = b"\x00"
    ddl_handler: str | None = None
    message_handler: str | None = None
    precommit_handler: str | None = None
    apply_user: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)

    def parameter(self, name: str) -> str:
        return str(self.parameters.get(name.upper(), PARAMETERS[name.upper()])).upper()


def _handler(name: str | None, user: str) -> Any:
    return None if not name else registered_function(name, user)


def engine_for(conn: Any, apply_name: str, link: str | None, tag: bytes | None,
               definition: ApplyDefinition | None = None) -> ApplyEngine:
    """An engine applying for ``apply_name`` into its target (``link``), with its handlers."""
    ctx = CaptureContext(conn)
    store = ctx.store
    target = open_target(link, store.dialect, ctx.pg_target(), getattr(store, "path", None))
    user = ctx.username
    d = definition
    handlers = Handlers(
        ddl=_handler(d.ddl_handler, user) if d else None,
        message=_handler(d.message_handler, user) if d else None,
        precommit=_handler(d.precommit_handler, user) if d else None,
        resolve=lambda name: registered_function(name, user))
    return ApplyEngine(target, Settings(ctx, apply_name, link), apply_name, tag=tag, handlers=handlers,
                       require_instantiation=d.apply_captured if d else True)
