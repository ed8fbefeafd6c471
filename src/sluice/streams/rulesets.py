"""How a Streams client uses its rule sets (seed 000, Table 6-1).

Every Streams client — capture process, propagation, apply process, messaging
client — asks :func:`evaluate_rule_sets` whether to perform its task for a
message.  The function implements every row of Table 6-1:

========================  ========================  ==========================================
negative rule set         positive rule set         the client …
========================  ========================  ==========================================
none                      none                      performs its task for all messages
none                      with rules                performs it for messages TRUE in the positive set
with rules                none                      discards messages TRUE in the negative set,
                                                    performs it for all others
with rules                with rules                negative set first: discards what is TRUE there,
                                                    performs it for the rest that is TRUE in the
                                                    positive set
empty                     none                      performs its task for all messages
empty                     with rules                performs it for messages TRUE in the positive set
none / empty / w. rules   empty                     discards all messages
========================  ========================  ==========================================

which is: a negative rule TRUE discards (and the positive set is not evaluated);
otherwise a client with a positive rule set performs its task exactly when one
of its rules is TRUE, and a client without one always does.  Conflicting rules
need nothing special: one TRUE rule suffices in either set.

Streams clients see undefined variables as NULL (never maybe).  The message
reaches the rules through the event context (``AQ$_MESSAGE``) and the variable
value functions of each evaluation context the rule set's rules use, so row
LCRs bind ``:dml``, DDL LCRs ``:ddl`` and user messages the ``VAR$_n`` variable
of their type.  The TRUE positive rule is returned: its action context drives
subset row migration, transformations and apply directives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..rules.engine.ruleset import RulesCatalog, rules_catalog
from ..rules.engine.types import RuleHit
from ..rules.evaluate import message_event_context, run_evaluation

__all__ = ["Verdict", "evaluate_rule_sets"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision for one message.

    ``perform``: do the task (capture, propagate, apply, dequeue).
    ``rule``: the positive rule that was TRUE (None without a positive rule set).
    ``negative_rule``: the negative rule that discarded the message.
    """

    perform: bool
    rule: RuleHit | None = None
    negative_rule: RuleHit | None = None


def _resolved(catalog: RulesCatalog, name: str, user: str) -> tuple[str, tuple[str | None, ...]]:
    """The rule set's qualified name and the evaluation contexts its rules use
    (ORA-24141 when it does not exist); cached until the catalog changes."""
    key = ("streams rule set", name, user)
    found = catalog.cache.get(key)
    if found is None:
        qualified = catalog.rule_set(catalog.key(name, user, "rule set name")).qualified
        contexts = tuple(dict.fromkeys(catalog.effective_context(m)
                                       for m in catalog.members_of(qualified)))
        found = catalog.cache[key] = (qualified, contexts)
    return found


def _first_true(catalog: RulesCatalog, rule_set: str, user: str, event_context: dict) -> RuleHit | None:
    qualified, contexts = _resolved(catalog, rule_set, user)
    for context in contexts:
        if context is None:
            continue  # unreachable through DBMS_RULE_ADM, which refuses such rules (ORA-24151)
        true_rules, _ = run_evaluation(catalog, qualified, context, streams=True,
                                       event_context=event_context, stop_on_first_hit=True)
        if true_rules:
            return true_rules[0]
    return None


def evaluate_rule_sets(conn: Any, message: Any, positive_rule_set: str | None = None,
                       negative_rule_set: str | None = None) -> Verdict:
    """Should a Streams client with these rule sets perform its task for ``message``?

    ``message``: a row or DDL LCR, a user message (an object type instance), or
    an ANYDATA holding one.  Rule set names are resolved in ``conn``'s schema.

    :raises: ORA-24141 when a named rule set does not exist.
    """
    catalog = rules_catalog(conn.context.store)
    event_context = message_event_context(message)
    if negative_rule_set is not None:
        hit = _first_true(catalog, negative_rule_set, conn.username, event_context)
        if hit is not None:
            return Verdict(False, None, hit)
    if positive_rule_set is None:
        return Verdict(True)
    hit = _first_true(catalog, positive_rule_set, conn.username, event_context)
    return Verdict(hit is not None, hit)
