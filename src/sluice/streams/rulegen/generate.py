"""Creating system-created rules for a Streams client, all or nothing.

:func:`add_rules` is what every ADD_*_RULES procedure ends in: it checks every condition
it will create before it creates anything, creates the client when it does not exist,
the rule set when the client has none on the side ``inclusion_rule`` asks for (positive
or negative; seed 000 "System-Created Rules and Negative Rule Sets"), then the rules —
ordinary DBMS_RULE_ADM rules with the Streams evaluation context (or, for message rules,
the message type's own) — adds them to the rule set, records what they are for
(DBA_STREAMS_RULES) and attaches a new rule set to the client.  DBMS_RULE_ADM's
procedures commit as they go (DDL), so a failure part way is undone by dropping what
this call made, in reverse order: a failed ADD_*_RULES leaves no rule, rule set or
client behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ...errors import DatabaseError, ora
from ...rules.engine.ruleset import STREAMS_CONTEXT
from ...rules.engine.types import NVList
from .catalog import StreamsRule, drop_rule_record, generated_name, reserve_numbers, save_rule
from .clients import Client

__all__ = ["Plan", "add_rules", "quoted"]


def quoted(owner: str, name: str) -> str:
    return f'"{owner}"."{name}"'


@dataclass
class Plan:
    """One rule to create: its name's base (``LOCATIONS`` for ``LOCATIONS12``), its
    condition, what DBA_STREAMS_RULES says of it, its action context and evaluation
    context."""

    base: str
    condition: str
    record: dict[str, Any] = field(default_factory=dict)
    action_context: NVList | None = None
    evaluation_context: str | None = STREAMS_CONTEXT
    checked: bool = False        # the caller has checked the condition already


_EXISTS = (24146, 24153)    # rule, rule set exists


def _create_named(ctx: Any, base: str, create: Callable[[str], None]) -> str:
    """Create an object named ``base`` + a fresh number; returns the name.  Two sessions
    can take the same number (the counter is read, then written): the one that finds the
    name taken takes the next."""
    for _ in range(10):
        name = generated_name(base, reserve_numbers(ctx, 1)[0])
        try:
            create(name)
            return name
        except DatabaseError as e:
            if e.code not in _EXISTS:
                raise
    raise ora(26667, f"no free name {base}n after 10 tries")


def add_rules(conn: Any, client: Client, plans: list[Plan], inclusion_rule: bool,
              rule_set_context: str | None = STREAMS_CONTEXT,
              prepare: Callable[[Callable[[Callable[[], None]], None]], None] | None = None) -> list[str]:
    """Create ``plans`` for ``client``; returns the rules' qualified names (``"OWNER"."NAME"``
    form without quotes: ``STRMADMIN.LOCATIONS12``).  ``prepare(on_undo)`` runs after the
    client exists and before the rules are made (a message rule's evaluation context),
    registering its own undo with ``on_undo``."""
    rule_adm = conn.rule_adm
    for plan in plans:           # nothing is created unless every condition is right
        if not plan.checked:
            rule_adm.validate_condition(plan.condition, plan.evaluation_context)
    owner = conn.username
    undo: list[Callable[[], None]] = []
    names: list[str] = []
    try:
        client.ensure()
        undo.append(client.undo)
        if prepare is not None:
            prepare(undo.append)
        positive, negative = client.rule_sets()
        current = positive if inclusion_rule else negative
        new_set = current is None
        if new_set:
            current = (owner, _create_named(client.ctx, "RULESET$_", lambda n: rule_adm.create_rule_set(
                quoted(owner, n), evaluation_context=rule_set_context)))
            undo.append(lambda rs=current: rule_adm.drop_rule_set(quoted(*rs)))
        for plan in plans:
            name = _create_named(client.ctx, plan.base, lambda n, p=plan: rule_adm.create_rule(
                quoted(owner, n), p.condition, evaluation_context=p.evaluation_context,
                action_context=p.action_context))
            undo.append(lambda n=name: rule_adm.drop_rule(quoted(owner, n), force=True))
            rule_adm.add_rule(quoted(owner, name), quoted(*current))
            record = StreamsRule(
                rule_owner=owner, rule_name=name, streams_type=client.streams_type,
                streams_name=client.name, rule_set_owner=current[0], rule_set_name=current[1],
                rule_set_type="POSITIVE" if inclusion_rule else "NEGATIVE",
                original_rule_condition=plan.condition, **plan.record)
            save_rule(client.ctx, record)
            undo.append(lambda n=name: drop_rule_record(client.ctx, owner, n))
            names.append(f"{owner}.{name}")
        if new_set:
            client.attach(not inclusion_rule, current)
    except BaseException:
        for step in reversed(undo):
            try:
                step()
            except DatabaseError:
                pass       # undoing as much as can be undone; the first error is the one to see
        raise
    return names
