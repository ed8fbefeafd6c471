"""``DBMS_STREAMS_MESSAGING``: how a messaging client is invoked (seed 000 Table 6-2
"Dequeue with a messaging client"; seed 001 "Queues and Messaging Clients").

``conn.streams_messaging.dequeue(queue_name='streams_queue', streams_name='msg_client')``
is ``DBMS_STREAMS_MESSAGING.DEQUEUE(queue_name => …, streams_name => …, payload => p,
msgid => id)``: the messaging client — a subscriber of its queue created by
DBMS_STREAMS_ADM.ADD_*_RULES with ``streams_type => 'dequeue'`` — dequeues the next
message its rule sets accept (Table 6-1, :func:`sluice.streams.evaluate_rule_sets`),
migrated by a subset rule ("Row Migration During Dequeue by a Messaging Client"); the
messages it rejects on the way are discarded, in the same transaction.  A messaging
client dequeues from persistent queues only (seed 001).  ``ENQUEUE`` enqueues a payload
into an ANYDATA queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import DEQ_BROWSE, DEQ_FIRST_MSG, DEQ_NEXT_MSG, DEQ_NEXT_TRANSACTION, DEQ_REMOVE, \
    DEQ_WAIT_FOREVER
from ..errors import ora
from ..names import split_qualified
from ..routines import out_params
from .clientrights import check_session_rule_sets
from .clientspec import streams_name as client_name
from .rowmigration import migrate
from .rulegen.clients import MESSAGE_CONSUMER
from .rulesets import evaluate_rule_sets

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["DbmsStreamsMessaging"]

_MODES = {"REMOVE": DEQ_REMOVE, "BROWSE": DEQ_BROWSE}
_NAVIGATION = {"NEXT MESSAGE": DEQ_NEXT_MSG, "FIRST MESSAGE": DEQ_FIRST_MSG,
               "NEXT TRANSACTION": DEQ_NEXT_TRANSACTION}


class DbmsStreamsMessaging:
    """The DBMS_STREAMS_MESSAGING package for one connection."""

    FOREVER, NO_WAIT = -1, 0

    def __init__(self, conn: "Connection") -> None:
        self._conn = conn

    @out_params("msgid")
    def enqueue(self, queue_name: str, payload: Any) -> bytes:
        """Enqueue ``payload`` (an LCR, an object, ANYDATA) into an ANYDATA queue."""
        q = self._conn.queue(queue_name)
        m = self._conn.msgproperties(payload=payload)
        q.enqone(m)
        return m.msgid

    @out_params("payload", "msgid")
    def dequeue(self, queue_name: str, streams_name: str, payload: None = None,
                dequeue_mode: str = "REMOVE", navigation: str = "NEXT MESSAGE",
                wait: int = -1) -> tuple[Any, bytes]:
        """The next message the messaging client's rule sets accept, as the client must see
        it.  :raises: ORA-26701 (no such messaging client), ORA-26667 (another queue, a bad
        mode), ORA-25228 (none within ``wait`` seconds)."""
        conn = self._conn
        name = client_name(streams_name, "streams_name")
        spec = _client(conn, name)
        owner, qname = split_qualified(queue_name, conn.username, "queue name")
        if (owner, qname) != (spec["queue_owner"], spec["queue_name"]):
            raise ora(26667, f"queue_name {queue_name!r}: messaging client {name} dequeues from "
                             f"{spec['queue_owner']}.{spec['queue_name']}")
        mode = _MODES.get(str(dequeue_mode).upper())
        nav = _NAVIGATION.get(str(navigation).upper())
        if mode is None or nav is None:
            raise ora(26667, f"dequeue_mode {dequeue_mode!r} / navigation {navigation!r}")
        positive = _rule_set(spec, "rule_set")
        negative = _rule_set(spec, "negative_rule_set")
        check_session_rule_sets(conn, positive, negative)   # once per call, not per message
        q = conn.queue(f'"{owner}"."{qname}"')
        opts = q.deqoptions
        opts.consumername, opts.mode, opts.navigation = f'"{name}"', mode, nav
        opts.wait = DEQ_WAIT_FOREVER if wait is None or wait < 0 else wait
        while True:
            m = q.deqone()
            if m is None:
                raise ora(25228, qname)
            verdict = evaluate_rule_sets(conn, m.payload, positive, negative)
            if verdict.perform:
                return migrate(m.payload, verdict.rule), m.msgid
            opts.navigation = DEQ_NEXT_MSG     # rejected (and, removing, discarded): the next


def _client(conn: Any, name: str) -> dict:
    for owner, n, spec in conn.context.store.catalog_objects(MESSAGE_CONSUMER):
        if owner == "SYS" and n == name:
            return spec
    raise ora(26701, name)


def _rule_set(spec: dict, prefix: str) -> str | None:
    name = spec.get(f"{prefix}_name")
    return None if name is None else f'"{spec.get(prefix + "_owner")}"."{name}"'
