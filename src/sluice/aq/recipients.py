"""Who gets a message of a multi-consumer queue (seed 003 "Message Recipients",
"Queue Subscribers", "Third-Party Support").

A recipient list given at enqueue overrides the subscribers; otherwise every
subscriber whose rule holds for the message (rules are evaluated at enqueue, so a
subscriber sees only what is enqueued after it subscribed).  Each recipient gets its
own record of the message (same message id):

* a name alone: a local consumer, dequeuing with that consumer name;
* a name and an address with protocol 0: a remote recipient, kept for propagation;
* a protocol from 128 to 255: a third-party recipient, dequeued by the reserved
  consumer ``AQ$_P<protocol>``, whose record lists all of them (``recipient_list``).
"""

from __future__ import annotations

import dataclasses
import json
import operator
from typing import TYPE_CHECKING

from ..errors import ora
from ..model import Agent
from ..store.base import MessageRecord, QueueInfo
from .conditions import compile_dequeue_condition
from .subscribers import BUFFERED, normalise_agent

if TYPE_CHECKING:
    from ..context import SessionContext


def recipients_of(ctx: "SessionContext", q: QueueInfo, given: list, record: MessageRecord,
                  codec, buffered: bool = False, also: frozenset = frozenset()) -> list[Agent]:
    """The recipients of one message (``buffered``: a buffered one, for the subscribers
    that take buffered messages and those named in ``also``).  :raises: ORA-24033 (none),
    ORA-25232 (a recipient twice), ORA-24047 / ORA-25216 (a malformed recipient)."""
    if given:
        agents = [normalise_agent(a if isinstance(a, Agent) else Agent(str(a)), q.owner) for a in given]
        if len(set(agents)) != len(agents):
            raise ora(25232)
        return agents
    wanted = []
    for sub in ctx.catalog.subscribers(q):
        if buffered != (sub.delivery_mode == BUFFERED) and sub.delivery_mode != 3 \
                and not (buffered and sub.name in also):
            continue   # it asked for the other delivery mode only
        if sub.rule and not compile_dequeue_condition(sub.rule, q, codec, ctx.cond_cache)(record):
            continue
        wanted.append(sub.agent)
    if not wanted:
        raise ora(24033)
    return wanted


# a record's values in its constructor's order: a copy is MessageRecord(*_VALUES(r)), built
# in C (dataclasses.replace asked each of the 35 fields by name in Python: ~14 µs of a
# two-subscriber enqone's ~40)
_VALUES = operator.attrgetter(*(f.name for f in dataclasses.fields(MessageRecord) if f.init))


def fan_out(record: MessageRecord, agents: list[Agent]) -> list[MessageRecord]:
    """One record per consumer of ``record`` (a copy per recipient, same message id)."""
    if len(agents) == 1 and not 128 <= (agents[0].protocol or 0) <= 255:
        a = agents[0]      # the common case: the record itself is that consumer's
        record.consumer_name, record.address, record.protocol = a.name, a.address, a.protocol or None
        return [record]
    out: list[MessageRecord] = []
    third_party: dict[int, list[Agent]] = {}
    for a in agents:
        if 128 <= (a.protocol or 0) <= 255:
            third_party.setdefault(a.protocol, []).append(a)
        else:
            r = MessageRecord(*_VALUES(record))
            r.consumer_name, r.address, r.protocol = a.name, a.address, a.protocol or None
            out.append(r)
    for protocol, group in sorted(third_party.items()):
        listed = json.dumps([[a.name, a.address, a.protocol] for a in group])
        out.append(dataclasses.replace(record, consumer_name=f"AQ$_P{protocol}", address=None,
                                       protocol=protocol, recipient_list=listed))
    return out


def recipient_list(record: MessageRecord) -> list[Agent]:
    """The recipients a third-party consumer's record stands for."""
    if not record.recipient_list:
        return []
    return [Agent(n, a, p) for n, a, p in json.loads(record.recipient_list)]
