"""The Streams clients ADD_*_RULES attaches rule sets to, one class per ``streams_type``.

Each knows whether its client exists, creates it when it does not (as Oracle's
procedures do: a capture or apply process DISABLED, a messaging client subscribed to its
queue), reads and sets its positive and negative rule sets, and — when the call that
created it fails later — drops it again, so that a failed ADD_*_RULES leaves nothing.
Synchronous captures and propagations are created by their own packages
(:mod:`sluice.streams.capture.sync`, :mod:`sluice.streams.propagation.adm`).
"""

from __future__ import annotations

import abc
from typing import Any

from ...errors import ora
from ...model import Agent
from ..apply import spec as apply_specs
from ..apply.adm import apply_for_rules
from ..clientspec import streams_name as client_name
from ..capture import spec as capture_specs
from ..capture.adm import capture_for_rules
from ..capture import sync
from ..capture.context import CaptureContext
from ..clientchecks import client_queue
from ..propagation import spec as propagation_specs
from ..propagation.adm import propagation_for_rules
from ..securequeue import secure_queue_user

__all__ = ["Client", "client_for", "MessagingClient", "MESSAGE_CONSUMER"]

MESSAGE_CONSUMER = "MESSAGE_CONSUMER"
RuleSetKey = tuple[str, str] | None


def _key(owner: str | None, name: str | None) -> RuleSetKey:
    return None if name is None else (owner, name)


def _alter(alter: Any, client: str, negative: bool, rule_set: tuple[str, str]) -> None:
    """``alter(client, [negative_]rule_set_name=rule_set)``: a client's ALTER_ procedure."""
    side = "negative_rule_set_name" if negative else "rule_set_name"
    alter(f'"{client}"', **{side: f'"{rule_set[0]}"."{rule_set[1]}"'})


class Client(abc.ABC):
    """One Streams client of an ADD_*_RULES call."""

    streams_type = ""

    def __init__(self, conn: Any, name: str) -> None:
        self.conn = conn
        self.ctx = CaptureContext(conn)
        self.name = name
        self.created = False

    @abc.abstractmethod
    def exists(self) -> bool:
        """Does the client exist?"""

    def check(self, inclusion_rule: bool) -> None:
        """Refuse, before anything is made, what the client cannot take (ORA-26667: it
        exists on another queue …).  Every client checks its queue when it is created."""

    def ensure(self) -> None:
        """Create the client unless it exists (``created`` says which)."""
        if not self.exists():
            self._create()
            self.created = True

    @abc.abstractmethod
    def rule_sets(self) -> tuple[RuleSetKey, RuleSetKey]:
        """(positive, negative) rule set, each (owner, name) or None."""

    @abc.abstractmethod
    def attach(self, negative: bool, rule_set: tuple[str, str]) -> None:
        """Make ``rule_set`` the client's positive (negative) rule set."""

    def undo(self) -> None:
        """Drop the client if this call created it."""
        if self.created:
            self._drop()
            self.created = False

    @abc.abstractmethod
    def _create(self) -> None:
        """Create the client (its package's way, as Oracle's ADD_*_RULES does)."""

    @abc.abstractmethod
    def _drop(self) -> None:
        """Drop the client this call created."""

    def source_spec(self) -> Any:
        """The capture definition whose source database holds the tables (capture only)."""
        return None


class CaptureClient(Client):
    streams_type = "CAPTURE"

    def __init__(self, conn: Any, name: str, queue_name: str, source_database: str | None) -> None:
        super().__init__(conn, name)
        self.queue_name, self.source_database = queue_name, source_database

    def _spec(self) -> Any:
        return capture_specs.find(self.ctx, self.name)

    def exists(self) -> bool:
        return self._spec() is not None

    def _create(self) -> None:
        capture_for_rules(self.conn, f'"{self.name}"', self.queue_name, self.source_database)

    def check(self, inclusion_rule: bool) -> None:
        spec = self._spec()
        if spec is not None:   # an existing capture must use the queue named
            capture_for_rules(self.conn, f'"{self.name}"', self.queue_name, self.source_database)

    def rule_sets(self) -> tuple[RuleSetKey, RuleSetKey]:
        s = self._spec()
        return (_key(s.rule_set_owner, s.rule_set_name),
                _key(s.negative_rule_set_owner, s.negative_rule_set_name))

    def attach(self, negative: bool, rule_set: tuple[str, str]) -> None:
        _alter(self.conn.capture_adm.alter_capture, self.name, negative, rule_set)

    def _drop(self) -> None:
        self.conn.capture_adm.drop_capture(f'"{self.name}"')

    def source_spec(self) -> Any:
        return self._spec()


class ApplyClient(Client):
    streams_type = "APPLY"

    def __init__(self, conn: Any, name: str, queue_name: str, source_database: str | None,
                 apply_captured: bool) -> None:
        super().__init__(conn, name)
        self.queue_name, self.source_database = queue_name, source_database
        self.apply_captured = apply_captured

    def exists(self) -> bool:
        return apply_specs.find(self.ctx, self.name) is not None

    def check(self, inclusion_rule: bool) -> None:
        if self.exists():
            apply_for_rules(self.conn, f'"{self.name}"', self.queue_name, self.source_database)

    def _create(self) -> None:
        apply_for_rules(self.conn, f'"{self.name}"', self.queue_name, self.source_database,
                        apply_captured=self.apply_captured)

    def rule_sets(self) -> tuple[RuleSetKey, RuleSetKey]:
        s = apply_specs.load(self.ctx, self.name)
        return (_key(s.rule_set_owner, s.rule_set_name),
                _key(s.negative_rule_set_owner, s.negative_rule_set_name))

    def attach(self, negative: bool, rule_set: tuple[str, str]) -> None:
        _alter(self.conn.apply_adm.alter_apply, self.name, negative, rule_set)

    def _drop(self) -> None:
        self.conn.apply_adm.drop_apply(f'"{self.name}"')


class MessagingClient(Client):
    """A messaging client (seed 001 "Queues and Messaging Clients"): a subscriber of its
    queue, named like it, that dequeues what its rule sets accept; a ``MESSAGE_CONSUMER``
    catalog row (DBA_STREAMS_MESSAGE_CONSUMERS)."""

    streams_type = "DEQUEUE"

    def __init__(self, conn: Any, name: str, queue_name: str) -> None:
        super().__init__(conn, name)
        self.queue_name = queue_name

    def spec(self) -> dict | None:
        return self.ctx.get_object(MESSAGE_CONSUMER, "SYS", self.name)

    def exists(self) -> bool:
        return self.spec() is not None

    def _queue(self) -> tuple[str, str]:
        q = client_queue(self.ctx, self.queue_name)
        return q.owner, q.name

    def check(self, inclusion_rule: bool) -> None:
        spec = self.spec()
        queue = self._queue()
        if spec is not None and (spec["queue_owner"], spec["queue_name"]) != queue:
            raise ora(26667, f"queue_name {self.queue_name!r}: messaging client {self.name} uses "
                             f"{spec['queue_owner']}.{spec['queue_name']}")

    def _create(self) -> None:
        ctx = self.ctx
        if ctx.get_object("APPLY", "SYS", self.name) is not None:
            raise ora(26665, self.name)   # an apply process and a messaging client share names
        queue = self._queue()
        ctx.check_streams_administrator()
        ctx.ddl_commit()
        secure_queue_user(self.conn, self.name, ctx.username, queue, "DEQUEUE")
        q = ctx.queue(*queue)
        if not any(s.name == self.name and s.address is None for s in ctx.context.catalog.subscribers(q)):
            self.conn.aqadm.add_subscriber(queue_name=f'"{queue[0]}"."{queue[1]}"',
                                           subscriber=Agent(f'"{self.name}"'))
        ctx.put_object(MESSAGE_CONSUMER, "SYS", self.name,
                       {"queue_owner": queue[0], "queue_name": queue[1], "user": ctx.username,
                        "rule_set_owner": None, "rule_set_name": None,
                        "negative_rule_set_owner": None, "negative_rule_set_name": None}, replace=False)

    def rule_sets(self) -> tuple[RuleSetKey, RuleSetKey]:
        s = self.spec() or {}
        return (_key(s.get("rule_set_owner"), s.get("rule_set_name")),
                _key(s.get("negative_rule_set_owner"), s.get("negative_rule_set_name")))

    def attach(self, negative: bool, rule_set: tuple[str, str]) -> None:
        spec = dict(self.spec())
        prefix = "negative_rule_set" if negative else "rule_set"
        spec[f"{prefix}_owner"], spec[f"{prefix}_name"] = rule_set
        self.ctx.ddl_commit()
        self.ctx.put_object(MESSAGE_CONSUMER, "SYS", self.name, spec, replace=True)

    def _drop(self) -> None:
        drop_messaging_client(self.conn, self.name)


def drop_messaging_client(conn: Any, name: str) -> None:
    """Remove the messaging client ``name``: its subscription and its catalog row."""
    ctx = CaptureContext(conn)
    spec = ctx.get_object(MESSAGE_CONSUMER, "SYS", name)
    if spec is None:
        raise ora(26701, name)
    ctx.ddl_commit()
    q = ctx.find_queue(spec["queue_owner"], spec["queue_name"])
    if q is not None and any(s.name == name and s.address is None for s in ctx.context.catalog.subscribers(q)):
        conn.aqadm.remove_subscriber(queue_name=f'"{q.owner}"."{q.name}"', subscriber=Agent(f'"{name}"'))
    ctx.drop_object(MESSAGE_CONSUMER, "SYS", name)


class SyncCaptureClient(Client):
    """A synchronous capture (:func:`sluice.streams.capture.sync.sync_capture_for_rules`
    creates it after checking the table; attaching the rule set installs the triggers).
    Table and subset rules only, in a positive rule set (seed 001 "Queues and Synchronous
    Capture")."""

    streams_type = "SYNC_CAPTURE"

    def __init__(self, conn: Any, name: str, queue_name: str, table: tuple[str, str] | None) -> None:
        super().__init__(conn, name)
        self.queue_name, self.table = queue_name, table

    def exists(self) -> bool:
        return sync.find(self.ctx, self.name) is not None

    def check(self, inclusion_rule: bool) -> None:
        if self.table is None:
            raise ora(26667, "streams_type 'sync_capture': a synchronous capture takes table and "
                             "subset rules only")
        if not inclusion_rule:
            raise ora(26667, "inclusion_rule => FALSE: a synchronous capture has no negative rule set")
        if self.exists():        # the table exists, the capture uses this queue
            self._create()

    def _create(self) -> None:
        sync.sync_capture_for_rules(self.conn, f'"{self.name}"', self.queue_name, *self.table)

    def rule_sets(self) -> tuple[RuleSetKey, RuleSetKey]:
        s = sync.load(self.ctx, self.name)
        return _key(s.rule_set_owner, s.rule_set_name), None

    def attach(self, negative: bool, rule_set: tuple[str, str]) -> None:
        _alter(self.conn.capture_adm.alter_sync_capture, self.name, negative, rule_set)

    def _drop(self) -> None:
        self.conn.capture_adm.drop_capture(f'"{self.name}"')


class PropagationClient(Client):
    """A propagation (:func:`sluice.streams.propagation.adm.propagation_for_rules` creates
    it)."""

    streams_type = "PROPAGATION"

    def __init__(self, conn: Any, name: str, source_queue: str, destination_queue: str,
                 source_database: str | None, queue_to_queue: bool | None) -> None:
        super().__init__(conn, name)
        self.source_queue, self.destination_queue = source_queue, destination_queue
        self.source_database, self.queue_to_queue = source_database, queue_to_queue

    def exists(self) -> bool:
        return propagation_specs.find(self.ctx.store, self.name) is not None

    def check(self, inclusion_rule: bool) -> None:
        if self.exists():        # between these queues
            self._create()

    def _create(self) -> None:
        propagation_for_rules(self.conn, f'"{self.name}"', self.source_queue, self.destination_queue,
                              source_database=self.source_database, queue_to_queue=self.queue_to_queue)

    def rule_sets(self) -> tuple[RuleSetKey, RuleSetKey]:
        s = propagation_specs.load(self.ctx.store, self.name)
        return (_key(s.rule_set_owner, s.rule_set_name),
                _key(s.negative_rule_set_owner, s.negative_rule_set_name))

    def attach(self, negative: bool, rule_set: tuple[str, str]) -> None:
        _alter(self.conn.propagation_adm.alter_propagation, self.name, negative, rule_set)

    def _drop(self) -> None:
        self.conn.propagation_adm.drop_propagation(f'"{self.name}"')


STREAMS_TYPES = ("capture", "sync_capture", "propagation", "apply", "dequeue")


def client_for(conn: Any, streams_type: Any, streams_name: Any, queue_name: Any,
               source_database: str | None, table: tuple[str, str] | None = None,
               apply_captured: bool = True) -> Client:
    """The client of a (non-propagation) ADD_*_RULES call.  :raises: ORA-23605 for an
    unknown ``streams_type``, ORA-26667 for a bad name."""
    kind = str(streams_type).strip().lower() if isinstance(streams_type, str) else None
    if kind not in STREAMS_TYPES or kind == "propagation":
        raise ora(23605, streams_type, "STREAMS_TYPE")
    if streams_name is None:
        name = _relevant_client(conn, kind, queue_name, source_database)
    else:
        name = client_name(streams_name, "streams_name")
    if kind == "capture":
        return CaptureClient(conn, name, queue_name, source_database)
    if kind == "apply":
        return ApplyClient(conn, name, queue_name, source_database, apply_captured)
    if kind == "dequeue":
        return MessagingClient(conn, name, queue_name)
    return SyncCaptureClient(conn, name, queue_name, table)


_GENERATED = {"capture": "CAPTURE$_", "apply": "APPLY$_", "dequeue": "MSG_CLIENT$_"}


def _relevant_client(conn: Any, kind: str, queue_name: Any, source_database: str | None) -> str:
    """``streams_name => NULL``, as Oracle's DBMS_STREAMS_ADM reads it: the one client of
    this type on ``queue_name`` (for an apply process, the one for ``source_database`` when
    it is given), or a new one with a system-generated name when there is none.
    :raises: ORA-26667 when several are relevant."""
    if kind == "sync_capture":
        raise ora(26667, "streams_name: NULL (give the synchronous capture's name)")
    from .catalog import generated_name, reserve_numbers
    ctx = CaptureContext(conn)
    q = client_queue(ctx, queue_name)
    if kind == "capture":
        found = [c.name for c in capture_specs.all_specs(ctx)
                 if (c.queue_owner, c.queue_name) == (q.owner, q.name)]
    elif kind == "apply":
        source = source_database.upper() if source_database else None
        found = [a.name for a in apply_specs.all_specs(ctx)
                 if (a.queue_owner, a.queue_name) == (q.owner, q.name)
                 and (source is None or a.source_database == source)]
    else:
        found = [n for o, n, spec in ctx.objects(MESSAGE_CONSUMER)
                 if (spec["queue_owner"], spec["queue_name"]) == (q.owner, q.name)]
    if len(found) > 1:
        raise ora(26667, f"streams_name: NULL, and {len(found)} {kind} clients use {q.owner}.{q.name} "
                         f"({', '.join(sorted(found))})")
    if found:
        return found[0]
    return generated_name(_GENERATED[kind], reserve_numbers(ctx, 1)[0])
