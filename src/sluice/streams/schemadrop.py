"""``DROP USER … CASCADE``: every object of the user's schema, all checked before any goes.

SQL Reference, DROP USER: CASCADE drops "all objects in the user's schema" -- here its
queue tables (with their queues, messages, subscribers, buffered messages and propagation
schedules, as DBMS_AQADM.DROP_QUEUE_TABLE(force => TRUE) / DROP_SHARDED_QUEUE(force =>
TRUE) drop them), rule sets, rules and evaluation contexts (DBMS_RULE_ADM), transformations
(DBMS_TRANSFORM), sequences (CREATE SEQUENCE), object types, stored procedures, functions
and packages (CREATE PROCEDURE / FUNCTION / PACKAGE) and the tables made at a cursor; without
CASCADE a user owning any of them is ORA-01922.

What refuses the statement is asked first, so a refused DROP USER changes nothing (each
step below is a DDL of its own and commits):

* ORA-00054 -- a session holds a message of one of the queue tables (dequeued, not
  committed), which DROP_QUEUE_TABLE would meet halfway;
* ORA-02303 -- another user's queue table carries one of the user's types, or another
  user's type is built on one (as DROP TYPE refuses it).

Then, in an order that leaves no object naming a dropped one behind:

1. the Streams clients using the user's queues (:mod:`.queueclients`: propagations from
   them, synchronous captures, capture processes -- stopped first --, apply processes,
   messaging clients), as DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade => TRUE) drops them;
   DBMS_AQADM refuses to drop a queue under one (ORA-26668);
2. the queue tables (their payload types are the user's types, dropped last);
3. rule sets (their memberships go with them), rules (FORCE: out of every rule set,
   another user's too), evaluation contexts (FORCE: taken from the rules and rule sets
   that name them), transformations, procedures and functions, and types, each type after
   those built on it.

Objects of other users that merely name a dropped one stay, as Oracle invalidates
dependents in other schemas rather than dropping them: a Streams client of another queue
whose rule set was the user's keeps naming it (DBA_CAPTURE, DBA_APPLY …), as after
DBMS_RULE_ADM.DROP_RULE_SET -- evaluating it is ORA-24141, and a synchronous capture's
triggers, built from its rules, go (it captures nothing until ALTER_SYNC_CAPTURE gives it
a rule set again); a propagation into one of the user's queues
stays and its schedule reports ORA-24010 (queue-to-queue) or marks the messages
UNDELIVERABLE (queue-to-dblink) until the queue exists again (seed 003 "Propagation
Error Handling"), as after DBMS_AQADM.DROP_QUEUE of a destination queue.  The privileges
granted on her queues go with them (DBMS_AQADM's drops), so a queue made again under the
name by a new user of hers is not writable on the old grants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ora
from ..rules.engine.ruleset import EVALUATION_CONTEXT, RULE, RULE_SET
from ..store import sequences
from ..store.base import QueueTableInfo
from ..store.tableddl import USER_TABLE
from ..store.viewddl import VIEW
from .queueclients import QueueClient, clients_of, drop_clients

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["SchemaDrop"]

TRANSFORMATION, TYPE, SEQUENCE = "TRANSFORMATION", "TYPE", "SEQUENCE"
# (sluice.storedunits' and .storedpackages' catalog kinds; a package's body before its spec)
UNITS = ("PROCEDURE", "FUNCTION", "PACKAGE BODY", "PACKAGE")


def _quoted(owner: str, name: str) -> str:
    return f'"{owner}"."{name}"'


@dataclass
class SchemaDrop:
    """What DROP USER … CASCADE drops of ``owner``'s schema, read from the catalog."""

    conn: "Connection"
    owner: str
    queue_tables: list[QueueTableInfo] = field(default_factory=list)
    clients: list[QueueClient] = field(default_factory=list)
    named: dict[str, list[str]] = field(default_factory=dict)     # kind -> names, drop order
    _types: dict[str, dict] = field(default_factory=dict)

    def __post_init__(self) -> None:
        store = self.conn.context.store
        self.queue_tables = [qt for qt in store.queue_tables() if qt.owner == self.owner]
        catalog = self.conn.context.catalog
        queues = {(q.owner, q.name) for qt in self.queue_tables for q in catalog.queues_of(qt)}
        self.clients = clients_of(store, queues)
        for kind in (RULE_SET, RULE, EVALUATION_CONTEXT, TRANSFORMATION, USER_TABLE, VIEW, *UNITS):
            self.named[kind] = sorted(n for o, n, _ in store.catalog_objects(kind) if o == self.owner)
        self.named[SEQUENCE] = [n for o, n, _, _ in sequences.listing(store) if o == self.owner]
        self._types = {f"{o}.{n}": s for o, n, s in store.catalog_objects(TYPE)}
        self.named[TYPE] = _dependents_first({q: s for q, s in self._types.items()
                                              if q.split(".", 1)[0] == self.owner})

    @property
    def empty(self) -> bool:
        """The schema holds nothing (DROP USER needs no CASCADE)."""
        return not self.queue_tables and not any(self.named.values())

    def check(self) -> None:
        """Refuse, before anything is dropped.  :raises: ORA-00054, ORA-02303."""
        store = self.conn.context.store
        for qt in self.queue_tables:
            if store.queue_table_in_use(qt.owner, qt.name):
                raise ora(54)
        mine = {f"{self.owner}.{n}" for n in self.named[TYPE]}
        for qt in store.queue_tables():
            if qt.owner != self.owner and qt.payload_type in mine:
                raise ora(2303)
        for qualified, spec in self._types.items():
            if qualified not in mine and mine.intersection(spec.get("depends_on") or ()):
                raise ora(2303)

    def drop(self) -> None:
        """Drop it all (after :meth:`check`), each object through its own procedure."""
        conn = self.conn
        drop_clients(conn, self.clients)
        for name in self.named[VIEW]:       # the views made at a cursor (store.viewddl)
            conn.execute_sql_statement("DROP VIEW", f"DROP VIEW {_quoted(self.owner, name)}")
        for name in self.named[USER_TABLE]:       # the tables made at a cursor (store.tableddl)
            conn.execute_sql_statement("DROP TABLE", f"DROP TABLE {_quoted(self.owner, name)} CASCADE CONSTRAINTS")
        catalog = conn.context.catalog
        for qt in self.queue_tables:
            if qt.sharded:     # dropped through its one queue
                conn.aqadm.drop_sharded_queue(_quoted(self.owner, catalog.queues_of(qt)[0].name), force=True)
            else:
                conn.aqadm.drop_queue_table(_quoted(self.owner, qt.name), force=True)
        rule_adm = conn.rule_adm
        for name in self.named[RULE_SET]:
            rule_adm.drop_rule_set(_quoted(self.owner, name))
        for name in self.named[RULE]:
            rule_adm.drop_rule(_quoted(self.owner, name), force=True)
        for name in self.named[EVALUATION_CONTEXT]:
            rule_adm.drop_evaluation_context(_quoted(self.owner, name), force=True)
        for name in self.named[TRANSFORMATION]:
            conn.transform.drop_transformation(f'"{self.owner}"', f'"{name}"')
        for kind in UNITS:
            for name in self.named[kind]:
                conn.drop_unit(kind, f"{self.owner}.{name}")
        for name in self.named[SEQUENCE]:
            conn.context.ddl_commit()
            sequences.drop(conn.context.store, self.owner, name)
        for name in self.named[TYPE]:
            conn.drop_type(_quoted(self.owner, name))


def _dependents_first(types: dict[str, dict]) -> list[str]:
    """The names of ``types`` (qualified -> catalog spec) so that a type comes before every
    one of them it is built on (``depends_on``)."""
    order: list[str] = []
    done: set[str] = set()

    def visit(qualified: str) -> None:
        if qualified in done:
            return
        done.add(qualified)
        for other, spec in types.items():        # those built on it go first
            if qualified in (spec.get("depends_on") or ()):
                visit(other)
        order.append(qualified)

    for qualified in sorted(types):
        visit(qualified)
    return [q.split(".", 1)[1] for q in order]
