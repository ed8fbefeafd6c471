"""What the capture package needs from a session, over ``conn.context``.

Everything in :mod:`sluice.streams.capture` talks to a :class:`CaptureContext`, which
reads the session's :class:`sluice.context.SessionContext` (the store, the session's
transaction, the user, the catalogs, the authorizer) and nothing else of the
connection.  It keeps the context, never copies of its fields: a ``CONNECT`` or a proxy
session reassigns them.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import TYPE_CHECKING, Any, Callable

from ...store.base import QueueInfo

if TYPE_CHECKING:
    from ...connection import Connection
    from ...context import SessionContext

# DBMS_STREAMS.SET_TAG: the tag of each session (keyed by the store session, which a
# SQL*Plus CONNECT replaces and a pool loan shares), gone with it
_TAGS: "weakref.WeakKeyDictionary[Any, bytes]" = weakref.WeakKeyDictionary()


class CaptureContext:
    """What capture needs from a connection: its user, its store, its catalogs, its
    transaction."""

    __slots__ = ("context",)

    def __init__(self, conn: "Connection") -> None:
        self.context: SessionContext = conn.context
        self.context.check_open()

    # -- who and where ---------------------------------------------------------------
    @property
    def username(self) -> str:
        return self.context.username

    @property
    def store(self) -> Any:
        return self.context.store

    @property
    def dialect(self) -> str:
        return self.context.store.dialect

    def pg_target(self) -> tuple[str, str] | None:
        """``(libpq conninfo, schema)`` of a PostgreSQL store, None for SQLite."""
        target = getattr(self.context.store, "target", None)
        return None if target is None else (target.conninfo, target.schema)

    def store_key(self) -> str:
        """A short name of this store, unique on the machine: prefixes the replication
        slots its captures own (so a test can drop what its store left behind)."""
        pg = self.pg_target()
        if pg is not None:
            return pg[1].lower()
        return "f" + hashlib.sha1(self.context.store.path.encode()).hexdigest()[:12]

    # -- privileges ----------------------------------------------------------------
    def check_streams_administrator(self) -> None:
        """Creating and managing Streams processes is a Streams administrator's work (a
        queue administrator's privileges: EXECUTE on DBMS_AQADM and MANAGE_ANY)."""
        self.context.authz.check_aq_administrator()

    def user_exists(self, name: str) -> bool:
        return self.context.security.user(name) is not None

    def agent_users(self, agent: str) -> list[str] | None:
        """The database users an AQ agent is mapped to (None: no such agent)."""
        info = self.context.security.agent(agent)
        return None if info is None else list(info.db_users)

    # -- catalog ---------------------------------------------------------------------
    def ddl_commit(self) -> None:
        self.context.ddl_commit()

    def catalog_version(self) -> int:
        return self.context.store.catalog_version()

    def get_object(self, kind: str, owner: str, name: str) -> dict | None:
        for o, n, spec in self.context.store.catalog_objects(kind):
            if o == owner and n == name:
                return spec
        return None

    def objects(self, kind: str) -> list[tuple[str, str, dict]]:
        return self.context.store.catalog_objects(kind)

    def put_object(self, kind: str, owner: str, name: str, spec: dict, replace: bool) -> None:
        self.context.store.put_catalog_object(kind, owner, name, spec, replace=replace)

    def drop_object(self, kind: str, owner: str, name: str) -> bool:
        return self.context.store.drop_catalog_object(kind, owner, name)

    def find_queue(self, owner: str, name: str) -> QueueInfo | None:
        return self.context.catalog.find_queue(owner, name)

    def queue(self, owner: str, name: str) -> QueueInfo:
        """The catalog entry of the queue ``owner.name``.  :raises: ORA-24010."""
        return self.context.catalog.queue_by_key((owner, name))

    def has_subscribers(self, queue: QueueInfo) -> bool:
        return bool(self.context.catalog.subscribers(queue))

    def rule_set_exists(self, owner: str, name: str) -> bool:
        return self.get_object("RULE_SET", owner, name) is not None   # DBMS_RULE_ADM's kinds

    def rule_set_rules(self, owner: str, name: str) -> list[tuple[str, str | None]]:
        """``(condition, evaluation context)`` of every rule of the rule set, the context
        being the one it is evaluated with there (its membership's, its own, the set's)."""
        rule_set = self.get_object("RULE_SET", owner, name) or {}
        rules = {f"{o}.{n}": spec for o, n, spec in self.objects("RULE")}
        out = []
        for _, _, member in self.objects("RULE_SET_RULE"):
            if member.get("rule_set") != f"{owner}.{name}":
                continue
            rule = rules.get(member.get("rule"), {})
            out.append((rule.get("condition", ""), member.get("evaluation_context")
                        or rule.get("evaluation_context") or rule_set.get("evaluation_context")))
        return out

    # -- the session's transaction -----------------------------------------------------
    def add_commit_work(self, work: Callable[[Any], None]) -> None:
        """``work(c)`` runs in this session's next commit (see StoreSession.add_commit_work)."""
        self.context.session.add_commit_work(work)

    def write_commit_time_enqueues(self) -> None:
        """The session's enqueues so far into commit-time queues go to their tables now,
        numbered with the transaction's commit SCN (StoreSession.write_commit_time_enqueues)."""
        self.context.session.write_commit_time_enqueues()

    def query(self, sql: str, binds: dict | None = None) -> list[tuple]:
        """The rows of a SELECT on the catalog views (as the connection's ``query``;
        capture's views hold no buffered messages)."""
        ctx = self.context
        ctx.check_open()
        return ctx.session.query(sql, binds)[1]

    # -- DBMS_STREAMS.SET_TAG ----------------------------------------------------------
    def session_tag(self) -> bytes | None:
        return _TAGS.get(self.context.session)

    def set_session_tag(self, tag: bytes | None) -> None:
        if tag is None:
            _TAGS.pop(self.context.session, None)
        else:
            _TAGS[self.context.session] = tag
