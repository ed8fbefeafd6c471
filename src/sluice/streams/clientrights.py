"""A Streams client acts with its user's rights, not the host session's.

Seed 001 "Secure Queues and Oracle Streams Clients": "the user specified as the
capture_user is the user who runs the capture process … the apply_user is the user who
runs the apply process", and it enqueues or dequeues as the AQ agent named like the
client.  Whatever runs the client — the Python apply or capture process on the host's
session, a Spark apply sink, a synchronous capture's enqueue, combined capture and apply
— asks here, so the rule is written once:

* :func:`check_apply_user` — the apply user may dequeue from the apply's queue
  (ORA-01031, ORA-24093 on a secure queue, ORA-01918 once the user is dropped);
* :func:`check_capture_user` — the capture user may enqueue into the capture's queue
  (a capture process); :func:`capture_user_refusals` is the same check as SQL, for a
  synchronous capture's triggers, and :func:`rule_set_refusals` its rule set's;
* :func:`handler_rights` — the apply user may execute each apply handler it calls (DML,
  error, DDL, message, precommit): a handler it may not execute fails the transaction as
  Oracle's call of an undeclared procedure does (ORA-06550 / PLS-00201), and the
  transaction goes to the error queue, nothing of it applied;
* :func:`check_rule_sets` — the client's user may execute its positive and negative rule
  sets (ORA-01031, as DBMS_RULE.EVALUATE) and every custom rule-based transformation its
  positive rule set's rules name (ORA-06550 / PLS-00201, as a handler): asked when the
  client starts and again when the catalog changes, never per message;
  :func:`check_session_rule_sets` — the same of a messaging client's rule sets for the
  session that invokes it (its own call: its roles count).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ..names import qualified
from ..rules.engine.ruleset import RULE_SET, rules_catalog
from ..rules.privileges import Checks, object_key
from ..security.authorize import Authorizer, client_refusals, rule_object_refusals
from ..store.dialect import POSTGRESQL, SQLITE

__all__ = ["check_apply_user", "check_capture_user", "handler_rights", "capture_user_refusals",
           "rule_set_refusals", "check_rule_sets", "check_session_rule_sets", "TRANSFORM_FUNCTION"]

TRANSFORM_FUNCTION = "STREAMS$_TRANSFORM_FUNCTION"   # DBMS_STREAMS_ADM.SET_RULE_TRANSFORM_FUNCTION


def check_apply_user(ctx: Any, apply_name: str, apply_user: str | None, queue_owner: str,
                     queue_name: str) -> None:
    """The apply process ``apply_name`` runs as ``apply_user`` (None: the caller, whose
    session rights already count) and dequeues as the agent named like it."""
    if apply_user is None:
        return
    queue = ctx.queue(queue_owner, queue_name)
    Authorizer(ctx.context.security, apply_user, roles=False).check_client_dequeue(queue, apply_name)


def check_capture_user(ctx: Any, capture_name: str, capture_user: str, queue_owner: str,
                       queue_name: str) -> None:
    """The capture (process or synchronous) ``capture_name`` runs as ``capture_user`` and
    enqueues as the agent named like it."""
    queue = ctx.queue(queue_owner, queue_name)
    Authorizer(ctx.context.security, capture_user, roles=False).check_client_enqueue(queue, capture_name)


def handler_rights(ctx: Any, apply_user: str | None, schema: str) -> Callable[[str], None]:
    """A check of one handler's name (resolved in ``schema``, as the registry resolves it):
    ``apply_user`` may execute it.  Asked when the handler is about to run, and answered
    once per name: the handlers are made again when the catalog changes (a GRANT, ALTER_APPLY)."""
    if apply_user is None:
        return lambda name: None
    authorizer = Authorizer(ctx.context.security, apply_user, roles=False)
    allowed: set[str] = set()

    def check(name: str) -> None:
        routine = qualified(name, schema, "function name")
        if routine not in allowed:
            authorizer.check_execute(routine)
            allowed.add(routine)
    return check


def capture_user_refusals(ctx: Any, capture_name: str, capture_user: str, queue_owner: str,
                          queue_name: str, catalog: str) -> list[tuple[str, str]]:
    """:func:`check_capture_user` as SQL for a synchronous capture's trigger, which enqueues
    in the writer's transaction, without Python: ``[(condition, error text)]``, the first
    condition that holds refusing the change (the writer's statement, or its COMMIT on
    PostgreSQL, fails with the error: nothing is enqueued, nothing of the change is kept).
    ``catalog``: the store's catalog table as the trigger names it."""
    queue = ctx.queue(queue_owner, queue_name)
    return client_refusals(_json_text(ctx), catalog, capture_user, queue, "ENQUEUE", capture_name)


def rule_set_refusals(ctx: Any, user: str, rule_set: str | None, catalog: str) -> list[tuple[str, str]]:
    """:func:`check_rule_sets` of a synchronous capture's rule set (``OWNER.NAME``; it has no
    negative one and calls no transformation) as SQL for its triggers, which evaluate it as
    ``user``: ``[(condition, error text)]`` as :func:`capture_user_refusals` gives them,
    ORA-01031 when ``user`` may not execute it (the grants read as the trigger fires)."""
    if rule_set is None:
        return []
    return rule_object_refusals(_json_text(ctx), catalog, user, object_key(RULE_SET, rule_set), "EXECUTE",
                                "EXECUTE_ANY_RULE_SET")


def _json_text(ctx: Any) -> Callable[[str, str], str]:
    return (POSTGRESQL if ctx.pg_target() is not None else SQLITE).json_text


def check_rule_sets(conn: Any, user: str | None, positive: str | None, negative: str | None,
                    transform: Callable[[str], str] | None = None) -> None:
    """The Streams client's ``user`` (None: the session's, whose rights already count) may
    evaluate its rule sets: EXECUTE on each (its owner, EXECUTE_ANY_RULE_SET — a Streams
    administrator holds it —, or DBMS_RULE_ADM.GRANT_OBJECT_PRIVILEGE's EXECUTE_ON_RULE_SET
    to the user or PUBLIC; no role), names resolved in ``conn``'s schema as
    :func:`~..rulesets.evaluate_rule_sets` resolves them; and EXECUTE on the custom
    rule-based transformation (``STREAMS$_TRANSFORM_FUNCTION`` in a rule's action context)
    of each rule of the positive set, ``transform(name)`` giving the ``OWNER.NAME`` the
    client calls (None: the client calls none).  A rule set that does not exist is left
    to the evaluation (ORA-24141).
    :raises: ORA-01031 for a rule set; ORA-06550 (PLS-00201) for a transformation."""
    if user is None:
        return
    catalog = rules_catalog(conn.context.store)
    checks = Checks(conn.context)
    authorizer = Authorizer(conn.context.security, user, roles=False)
    for rule_set, is_positive in _existing(catalog, conn.username, positive, negative):
        checks.require(checks.holds(RULE_SET, rule_set, "EXECUTE", user))
        if is_positive and transform is not None:
            for routine in dict.fromkeys(_transform_functions(catalog, rule_set)):
                authorizer.check_execute(transform(routine))


def check_session_rule_sets(conn: Any, positive: str | None, negative: str | None) -> None:
    """A messaging client is invoked by a session (DBMS_STREAMS_MESSAGING.DEQUEUE), which
    evaluates its rule sets as DBMS_RULE.EVALUATE would: EXECUTE on each, the session's own
    call (its enabled roles count).  :raises: ORA-01031."""
    catalog = rules_catalog(conn.context.store)
    checks = Checks(conn.context)
    for rule_set, _ in _existing(catalog, conn.username, positive, negative):
        checks.require(checks.holds(RULE_SET, rule_set, "EXECUTE"))


def _existing(catalog: Any, schema: str, positive: str | None,
              negative: str | None) -> Iterable[tuple[str, bool]]:
    """``(qualified name, positive?)`` of each rule set named that exists (one that does
    not is left to the evaluation: ORA-24141), negative first."""
    for name, is_positive in ((negative, False), (positive, True)):
        if name is not None:
            rule_set = catalog.key(name, schema, "rule set name")
            if rule_set in catalog.rule_sets:
                yield rule_set, is_positive


def _transform_functions(catalog: Any, rule_set: str) -> Iterable[str]:
    """The custom rule-based transformations the rules of ``rule_set`` name."""
    for member in catalog.members_of(rule_set):
        rule = catalog.rules.get(member.rule)
        actx = rule.action_context if rule is not None else None
        value = actx.get_value(TRANSFORM_FUNCTION) if actx is not None else None
        value = getattr(value, "value", value)
        if value:
            yield str(value)
