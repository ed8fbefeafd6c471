"""Queue subscribers: ``DBMS_AQADM.ADD_SUBSCRIBER`` / ``ALTER_SUBSCRIBER`` / ``REMOVE_SUBSCRIBER``.

Seed 003 "Queue Subscribers": only multi-consumer queues (not exception queues)
have subscribers; no two subscribers share name, address and protocol; a
subscriber may carry a rule (a condition on message properties and content, in
the dequeue-condition language) and a transformation; it receives only messages
enqueued after it subscribed (recipients are fixed at enqueue).  Subscribers are
catalog facts: kind ``SUBSCRIBER``, owner ``OWNER.QUEUE``, name
``NAME|ADDRESS|PROTOCOL``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InterfaceError, ora
from ..model import Agent
from ..names import canonical, qualified, split_qualified
from ..store.base import QueueInfo
from . import sharded
from .conditions import compile_dequeue_condition

if TYPE_CHECKING:
    from ..context import SessionContext

PERSISTENT, BUFFERED, PERSISTENT_OR_BUFFERED = 1, 2, 3
_IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_$#]*$")


@dataclass(frozen=True)
class Subscriber:
    """One subscriber of a queue (a row of ``AQ$<queue_table>_S``)."""

    name: str | None
    address: str | None
    protocol: int
    rule: str | None = None
    transformation: str | None = None
    queue_to_queue: bool = False
    delivery_mode: int = PERSISTENT
    subscribed_at: float = 0.0

    @property
    def key(self) -> str:
        return subscriber_key(self.name, self.address, self.protocol)

    @property
    def agent(self) -> Agent:
        return Agent(self.name, self.address, self.protocol)

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "address": self.address, "protocol": self.protocol,
                "rule": self.rule, "transformation": self.transformation,
                "queue_to_queue": self.queue_to_queue, "delivery_mode": self.delivery_mode,
                "subscribed_at": self.subscribed_at}

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> "Subscriber":
        return cls(spec["name"], spec.get("address"), spec.get("protocol") or 0, spec.get("rule"),
                   spec.get("transformation"), bool(spec.get("queue_to_queue")),
                   spec.get("delivery_mode") or PERSISTENT, spec.get("subscribed_at") or 0.0)


def subscriber_key(name: str | None, address: str | None, protocol: int) -> str:
    return f"{name or ''}|{address or ''}|{protocol or 0}"


def normalise_agent(agent: Agent, default_schema: str) -> Agent:
    """Canonical agent: upper-case name; an address ``[schema.]queue[@dblink]`` qualified.
    :raises: ORA-24047 (bad name), ORA-25216 (neither name nor address)."""
    if not isinstance(agent, Agent):
        raise InterfaceError("subscriber must be a sluice.Agent (SYS.AQ$_AGENT)")
    if agent.name is None and agent.address is None:
        raise ora(25216)
    name = None
    if agent.name is not None:
        quoted = agent.name.strip().startswith('"')
        if not quoted and not _IDENTIFIER.match(agent.name.strip()):
            raise ora(24047, agent.name)
        try:
            name = canonical(agent.name, "agent name")
        except Exception:
            raise ora(24047, agent.name) from None
        if name.upper().startswith("AQ$_") and not name.upper().startswith("AQ$_P"):
            raise ora(24047, agent.name)
    address = agent.address
    if address is not None and (agent.protocol or 0) == 0:
        queue, _, link = address.partition("@")
        address = qualified(queue, default_schema, "address") + (f"@{link.upper()}" if link else "")
    return Agent(name, address, agent.protocol or 0)


class SubscriberAdm:
    """The subscriber procedures of DBMS_AQADM (mixed into AqAdm)."""

    _session_ctx: "SessionContext"
    PERSISTENT, BUFFERED, PERSISTENT_OR_BUFFERED = PERSISTENT, BUFFERED, PERSISTENT_OR_BUFFERED

    def _subscriber_queue(self, queue_name: str) -> QueueInfo:
        q = self._session_ctx.catalog.queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        if not q.table.multiple_consumers or q.is_exception_queue:
            raise ora(24039, q.qualified)
        return q

    def _check_rule(self, q: QueueInfo, rule: str | None) -> None:
        if rule:  # compile now: a bad rule is refused before anything is stored
            compile_dequeue_condition(rule, q, self._session_ctx.catalog.codec(q.table), {})

    def add_subscriber(self, queue_name: str, subscriber: Agent, rule: str | None = None,
                       transformation: str | None = None, queue_to_queue: bool = False,
                       delivery_mode: int = PERSISTENT) -> None:
        q = self._subscriber_queue(queue_name)
        agent = normalise_agent(subscriber, q.owner)
        if delivery_mode not in (PERSISTENT, BUFFERED, PERSISTENT_OR_BUFFERED):
            raise InterfaceError("delivery_mode must be PERSISTENT, BUFFERED or PERSISTENT_OR_BUFFERED")
        self._check_rule(q, rule)
        if transformation:
            if q.table.sharded:   # aq.rst: TxEventQ do not support transformations
                raise sharded.unsupported("transformation")
            self._session_ctx.catalog.transformation(transformation)
        if agent.address and not agent.protocol and "@" not in agent.address:   # a queue of this site
            owner, name = split_qualified(agent.address, q.owner, "subscriber address")
            sharded.check_propagation(q, self._session_ctx.catalog.find_queue(owner, name))
        sub = Subscriber(agent.name, agent.address, agent.protocol, rule or None, transformation,
                         bool(queue_to_queue), delivery_mode, time.time())
        if any(s.key == sub.key for s in self._session_ctx.catalog.subscribers(q)):
            raise ora(24034, agent.name or agent.address, q.qualified)
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object("SUBSCRIBER", q.qualified, sub.key, sub.spec(),
                                                   replace=False)
        self._session_ctx.catalog.refresh(force=True)

    def alter_subscriber(self, queue_name: str, subscriber: Agent, rule: str | None = None,
                         transformation: str | None = None) -> None:
        q = self._subscriber_queue(queue_name)
        agent = normalise_agent(subscriber, q.owner)
        key = subscriber_key(agent.name, agent.address, agent.protocol)
        current = next((s for s in self._session_ctx.catalog.subscribers(q) if s.key == key), None)
        if current is None:
            raise ora(24035, agent.name or agent.address, q.qualified)
        self._check_rule(q, rule)
        if transformation:
            self._session_ctx.catalog.transformation(transformation)
        spec = dict(current.spec(), rule=rule or None, transformation=transformation)
        self._session_ctx.ddl_commit()
        self._session_ctx.store.put_catalog_object("SUBSCRIBER", q.qualified, key, spec, replace=True)
        self._session_ctx.catalog.refresh(force=True)

    def remove_subscriber(self, queue_name: str, subscriber: Agent) -> None:
        """Remove the subscriber and every message still waiting for it (seed 003
        "Cleaning Up Message Queues")."""
        q = self._subscriber_queue(queue_name)
        agent = normalise_agent(subscriber, q.owner)
        key = subscriber_key(agent.name, agent.address, agent.protocol)
        if not any(s.key == key for s in self._session_ctx.catalog.subscribers(q)):
            raise ora(24035, agent.name or agent.address, q.qualified)
        self._session_ctx.ddl_commit()
        self._session_ctx.store.drop_catalog_object("SUBSCRIBER", q.qualified, key)
        self._session_ctx.store.drop_consumer_messages(q, agent.name, agent.address, agent.protocol)
        self._session_ctx.catalog.refresh(force=True)

    def queue_subscribers(self, queue_name: str) -> list[Agent]:
        """DBMS_AQADM.QUEUE_SUBSCRIBERS: the subscribers as agents."""
        q = self._session_ctx.catalog.queue(queue_name)
        return [s.agent for s in self._session_ctx.catalog.subscribers(q)]
