"""What DBMS_STREAMS_ADM records besides the rules themselves.

* ``STREAMS_RULE`` (owner, name = the rule's): which Streams client a system-created rule
  was made for and what it says — Oracle's ``streams$_rules``, behind DBA_STREAMS_RULES
  and its GLOBAL / SCHEMA / TABLE / MESSAGE views;
* ``STREAMS_SEQUENCE`` ``SYS.NAMES``: the last number given to a generated name (rule
  ``LOCATIONS12``, rule set ``RULESET$_13``, evaluation context ``EVAL_CTX$_14``, variable
  ``VAR$_15``); numbers are never reused, as Oracle's sequence is not.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..capture.context import CaptureContext

__all__ = ["StreamsRule", "KIND", "reserve_numbers", "save_rule", "rules_of", "drop_rule_record",
           "generated_name"]

KIND = "STREAMS_RULE"
_SEQ = ("STREAMS_SEQUENCE", "SYS", "NAMES")
MAX_NAME = 30     # Oracle's identifier length for these names


@dataclass
class StreamsRule:
    """What DBMS_STREAMS_ADM made a rule for; DBA_STREAMS_RULES joins it to the rules in
    the client's rule sets (the current condition is the rule's)."""

    rule_owner: str
    rule_name: str
    streams_type: str                  # CAPTURE, SYNC_CAPTURE, PROPAGATION, APPLY, DEQUEUE
    streams_name: str
    rule_set_owner: str
    rule_set_name: str
    rule_set_type: str                 # POSITIVE / NEGATIVE
    original_rule_condition: str
    streams_rule_type: str | None = None   # GLOBAL, SCHEMA, TABLE (None: a message rule)
    rule_type: str | None = None           # DML / DDL
    schema_name: str | None = None
    object_name: str | None = None
    subsetting_operation: str | None = None
    dml_condition: str | None = None
    include_tagged_lcr: str | None = None  # YES / NO
    source_database: str | None = None
    message_type_owner: str | None = None
    message_type_name: str | None = None
    message_rule_variable: str | None = None
    and_condition: str | None = None

    def to_spec(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d.pop("rule_owner")
        d.pop("rule_name")
        return d

    @classmethod
    def from_spec(cls, owner: str, name: str, spec: dict[str, Any]) -> "StreamsRule":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(rule_owner=owner, rule_name=name, **{k: v for k, v in spec.items() if k in known})


def reserve_numbers(ctx: CaptureContext, count: int) -> list[int]:
    """``count`` fresh numbers for generated names."""
    spec = ctx.get_object(*_SEQ) or {"last": 0}
    first = int(spec["last"]) + 1
    ctx.put_object(*_SEQ, {"last": first + count - 1}, replace=True)
    return list(range(first, first + count))


def generated_name(base: str, number: int) -> str:
    """``base`` followed by ``number``, ``base`` shortened to keep the name within 30
    characters (``EMPLOYEES12``, ``RULESET$_18``)."""
    digits = str(number)
    return base[:MAX_NAME - len(digits)] + digits


def save_rule(ctx: CaptureContext, rule: StreamsRule) -> None:
    ctx.put_object(KIND, rule.rule_owner, rule.rule_name, rule.to_spec(), replace=True)


def rules_of(ctx: CaptureContext, streams_type: str, streams_name: str) -> list[StreamsRule]:
    return [r for r in (StreamsRule.from_spec(o, n, s) for o, n, s in ctx.objects(KIND))
            if r.streams_type == streams_type and r.streams_name == streams_name]


def find_rule(ctx: CaptureContext, owner: str, name: str) -> StreamsRule | None:
    spec = ctx.get_object(KIND, owner, name)
    return None if spec is None else StreamsRule.from_spec(owner, name, spec)


def drop_rule_record(ctx: CaptureContext, owner: str, name: str) -> None:
    ctx.drop_object(KIND, owner, name)
