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
from typing import Any, Callable

from ...routines import registered_function
from ..capture.context import CaptureContext
from ..clientrights import handler_rights
from . import spec as specs
from .engine import ApplyEngine, Handlers
from .settings import Settings
from .targetdsn import link_dsn, open_target

__all__ = ["ApplyDefinition", "engine_for", "PARAMETERS", "load", "find_definition", "find_spec", "handlers_for", "set_status", "enabled_applies",
           "KIND", "OWNER", "PARAMETER_KIND"]

# DBA_APPLY: an apply process is a SLUICE_CATALOG row of kind APPLY, owner SYS (DBMS_APPLY_ADM's
# CREATE_APPLY writes it, spec.py describes its fields); SET_PARAMETER's values are rows of
# kind APPLY_PARAMETER named "<apply>|<parameter>"
KIND, OWNER, PARAMETER_KIND = specs.KIND, specs.OWNER, "APPLY_PARAMETER"

# SET_PARAMETER's parameters with Oracle's defaults, and one of Sluice's own: GROUPTRANSOPS
# (after Oracle GoldenGate Replicat's parameter of that name) lets serial apply put several
# whole plain source transactions, at most that many row LCRs in all, into one target
# transaction; the default 1 keeps Oracle Streams' rule of a target transaction per source one
PARAMETERS = {"DISABLE_ON_ERROR": "Y", "COMMIT_SERIALIZATION": "FULL", "PARALLELISM": "1",
              "TXN_LCR_SPILL_THRESHOLD": "10000", "MAXIMUM_SCN": "INFINITE", "GROUPTRANSOPS": "1"}


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


def _handler(name: str | None, user: str, check: Callable[[str], None]) -> Any:
    """The handler registered as ``name``, resolved when it is called: a name nobody
    registered (here, or in the Python worker of a Spark executor) fails the transaction
    that needs it with ORA-00904, one the apply user may not execute with ORA-06550
    (``check``); either goes to the error queue."""
    if not name:
        return None

    def call(*args: Any) -> Any:
        fn = registered_function(name, user)
        check(name)
        return fn(*args)
    return call


def engine_for(conn: Any, apply_name: str, link: str | None, tag: bytes | None,
               definition: ApplyDefinition | None = None, server_id: int = 0) -> ApplyEngine:
    """An engine applying for ``apply_name`` into its target (``link``), with its handlers."""
    ctx = CaptureContext(conn)
    store = ctx.store
    dsn = link_dsn(store, ctx.username, link) if link else None
    target = open_target(dsn, store.dialect, ctx.pg_target(), getattr(store, "path", None))
    d = definition
    return ApplyEngine(target, Settings(ctx, apply_name, link), apply_name, tag=tag,
                       handlers=handlers_for(d, ctx),
                       require_instantiation=d.apply_captured if d else True, server_id=server_id)


def handlers_for(d: ApplyDefinition | None, ctx: CaptureContext) -> Handlers:
    """The definition's DDL, message and precommit handlers, and the resolver of DML and
    error handlers' names, as callables; names resolve in the session's schema, and each
    runs with the apply user's rights (:func:`~..clientrights.handler_rights`)."""
    user = ctx.username
    check = handler_rights(ctx, d.apply_user if d else None, user)

    def resolve(name: str) -> Callable[..., Any]:
        fn = registered_function(name, user)
        check(name)
        return fn
    return Handlers(
        ddl=_handler(d.ddl_handler, user, check) if d else None,
        message=_handler(d.message_handler, user, check) if d else None,
        precommit=_handler(d.precommit_handler, user, check) if d else None,
        resolve=resolve)


def find_spec(ctx: CaptureContext, name: str) -> dict | None:
    return ctx.get_object(KIND, OWNER, name)


def set_status(ctx: CaptureContext, name: str, status: str, error: Exception | None = None) -> None:
    """DBA_APPLY's STATUS (ENABLED, DISABLED, ABORTED) with the error that aborted it.
    :raises: ORA-26701 when there is no such apply process."""
    import dataclasses
    spec = specs.load(ctx, name).with_status(status)
    code = getattr(error, "code", None) if error is not None else None
    spec = dataclasses.replace(spec, error_number=code or (600 if error is not None else None),
                               error_message=str(error) if error is not None else None)
    ctx.ddl_commit()
    specs.save(ctx, spec)


def enabled_applies(ctx: CaptureContext) -> list[str]:
    return [s.name for s in specs.all_specs(ctx) if s.status == specs.ENABLED]


def parameters(ctx: CaptureContext, name: str) -> dict[str, str]:
    prefix = f"{name}|"
    return {n[len(prefix):]: s["value"] for o, n, s in ctx.objects(PARAMETER_KIND)
            if o == OWNER and n.startswith(prefix)}


def load(ctx: CaptureContext, name: str) -> ApplyDefinition:
    """The definition of the apply process ``name``.  :raises: ORA-26701 when there is none."""
    from ...errors import ora
    spec = find_spec(ctx, name)
    if spec is None:
        raise ora(26701, name)

    def rule_set(prefix: str) -> str | None:
        owner, rs = spec.get(f"{prefix}rule_set_owner"), spec.get(f"{prefix}rule_set_name")
        return None if rs is None else f'"{owner}"."{rs}"'
    tag = spec.get("apply_tag")
    return ApplyDefinition(
        name=name, queue_owner=spec["queue_owner"], queue_name=spec["queue_name"],
        rule_set=rule_set(""), negative_rule_set=rule_set("negative_"),
        apply_captured=bool(spec.get("apply_captured")),
        apply_database_link=spec.get("apply_database_link"),
        # Oracle's default apply tag is '00': what the apply process applies is tagged
        apply_tag=bytes.fromhex(tag) if tag else b"\x00",
        ddl_handler=spec.get("ddl_handler"), message_handler=spec.get("message_handler"),
        precommit_handler=spec.get("precommit_handler"), apply_user=spec.get("apply_user"),
        parameters=parameters(ctx, name))


def find_definition(ctx: CaptureContext, name: str) -> ApplyDefinition | None:
    return load(ctx, name) if find_spec(ctx, name) is not None else None
