"""Row migration (seed 000_c58e7ef949d95dc2.txt "Row Migration and Subset Rules",
figures 6-2 to 6-5; "Internal LCR Transformations in Subset Rules").

A subset rule's action context names the internal transformation: ``STREAMS$_ROW_SUBSET``
= ``INSERT`` or ``DELETE``.  When such a rule in a client's *positive* rule set is the
one that evaluated to TRUE for an UPDATE row LCR, the update moved the row into the
subset (it becomes an INSERT) or out of it (a DELETE).  Every client — capture,
propagation, apply, messaging client — calls :func:`migrate` with the rule
:func:`sluice.streams.evaluate_rule_sets` returned, before it performs its task; a
negative rule set's rules never migrate (seed: "row migration is not performed on LCRs
discarded because they evaluate to TRUE against a negative rule set").

The columns, as an insert or a delete of the whole row needs them:

* into the subset → INSERT: the new values are the row after the update — every old value
  (the source logs them all: "Subset Rules and Supplemental Logging") overlaid with the
  new ones; no old values;
* out of the subset → DELETE: the old values are the row before the update; no new values.
"""

from __future__ import annotations

from typing import Any

from .lcr import RowLCR

__all__ = ["ROW_SUBSET", "migrate", "subset_operation"]

ROW_SUBSET = "STREAMS$_ROW_SUBSET"


def subset_operation(rule: Any) -> str | None:
    """``'INSERT'`` / ``'DELETE'`` when ``rule`` (an ``RE$RULE_HIT``) is a subset rule's
    that migrates rows, else None."""
    action = getattr(rule, "rule_action_context", None)
    if action is None:
        return None
    value = action.get_value(ROW_SUBSET)
    if value is None or value.value is None:
        return None
    operation = str(value.value).upper()
    return operation if operation in ("INSERT", "DELETE") else None


def migrate(message: Any, rule: Any) -> Any:
    """``message`` as the client must process it after ``rule`` (the positive rule that
    was TRUE, or None) accepted it: an UPDATE row LCR migrated per the rule's action
    context — changed in place and returned — anything else returned as it is."""
    operation = subset_operation(rule)
    if operation is None or not isinstance(message, RowLCR) or message.get_command_type() != "UPDATE":
        return message
    # read both lists first: a captured LCR decodes its values on first reading them
    before, after = message.get_values("OLD"), message.get_values("NEW", "Y")   # old overlaid with new
    if operation == "INSERT":
        message.set_values("OLD", None)
        message.set_values("NEW", after)
    else:
        message.set_values("OLD", before)
        message.set_values("NEW", None)
    message.set_command_type(operation)
    return message
