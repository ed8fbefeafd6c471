"""``DBMS_AQADM``: queue tables and queues, with Oracle's procedure and parameter names.

``conn.aqadm.create_queue_table(queue_table="qt", queue_payload_type="RAW")`` is
``DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'qt', queue_payload_type => 'RAW')``.
Parameters are declared in Oracle's order so the statement interpreter can map
positional arguments.  Like Oracle's DDL, these calls commit the caller's open
transaction first and are committed on return.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..errors import InterfaceError, ora
from ..names import canonical, split_qualified
from ..security.admin import SecurityAdm
from .adminargs import MAX_SECONDS, parse_sort_list, comment_arg as _comment, flag as _flag, retries as _retries, seconds as _seconds
from .sharded import ShardedQueueAdm, unsupported
from .subscribers import SubscriberAdm
from ..store.base import QueueInfo, QueueTableInfo
from .buffered import existing_pool
from .payload import ANYDATA

if TYPE_CHECKING:
    from ..connection import Connection

_Info = TypeVar("_Info", QueueInfo, QueueTableInfo)

# Streams clients that write into queues from outside this package (a synchronous capture's
# triggers, sluice.streams.capture.sync) may refuse a queue's drop before anything changes:
# check(session context, [(owner, queue), ...]) raises
QUEUE_DROP_CHECKS: list[Callable[[Any, list[tuple[str, str]]], None]] = []


def _set_given(target: _Info, **values: object) -> _Info:
    """ALTER_* semantics: parameters left NULL keep their current value.  A copy: the
    catalog's cached object stays as the store has it if the store refuses the change."""
    return dataclasses.replace(target, **{name: value for name, value in values.items() if value is not None})


class AqAdm(SecurityAdm, SubscriberAdm, ShardedQueueAdm):
    """The DBMS_AQADM package for one connection."""

    # package constants (DBMS_AQADM.<NAME>)
    INFINITE = -1
    NORMAL_QUEUE = 0
    EXCEPTION_QUEUE = 1
    NON_PERSISTENT_QUEUE = 2
    NONE = 0
    TRANSACTIONAL = 1
    NO_NETWORK_NAME = None

    def __init__(self, conn: "Connection") -> None:
        self._session_ctx = conn.context

    @property
    def _catalog(self):
        return self._session_ctx.catalog

    @property
    def _store(self):
        return self._session_ctx.store

    # -- queue tables ---------------------------------------------------------
    def create_queue_table(self, queue_table: str, queue_payload_type: str, storage_clause: str | None = None,
                           sort_list: str | None = None, multiple_consumers: bool = False,
                           message_grouping: int = 0, comment: str | None = None,
                           auto_commit: bool = True, primary_instance: int = 0,
                           secondary_instance: int = 0, compatible: str | None = None,
                           secure: bool = False, replication_mode: int = 0) -> None:
        owner, name = split_qualified(queue_table, self._session_ctx.username, "queue table name")
        self._session_ctx.authz.check_admin(owner)
        if len(name) > 122:  # room for the AQ$_..._E exception queue name
            raise ora(972, name)
        payload = self._payload_type(queue_payload_type)
        sorts = parse_sort_list(sort_list)
        if message_grouping not in (0, 1):
            raise InterfaceError("message_grouping must be DBMS_AQADM.NONE or DBMS_AQADM.TRANSACTIONAL")
        comment = _comment(comment)
        self._session_ctx.ddl_commit()
        table = QueueTableInfo(owner=owner, name=name, payload_type=payload, sort_list=sorts,
                               multiple_consumers=_flag("multiple_consumers", multiple_consumers),
                               message_grouping="TRANSACTIONAL" if message_grouping else "NONE",
                               comment=comment, compatible=compatible or "10.0.0",
                               secure=_flag("secure", secure), primary_instance=primary_instance or 0,
                               secondary_instance=secondary_instance or 0)
        exc = QueueInfo(owner=owner, name=table.exception_queue_name, table=table,
                        queue_type="EXCEPTION_QUEUE", max_retries=0, retry_delay=0.0,
                        retention_time=0.0, enqueue_enabled=False, dequeue_enabled=False,
                        comment="exception queue")
        self._store.create_queue_table(table, exc)
        self._catalog.refresh(force=True)

    def _payload_type(self, text: str) -> str:
        if not isinstance(text, str) or not text.strip():
            raise ora(902, text)
        t = text.strip().upper()
        if t in ("RAW", "JSON"):
            return t
        if t in ("XMLTYPE", "SYS.XMLTYPE"):
            return "XMLTYPE"
        if t in ("ANYDATA", "SYS.ANYDATA"):
            return ANYDATA
        objtype = self._catalog.type_named(text.strip())   # ORA-04043 when unknown
        return objtype.qualified_name

    def alter_queue_table(self, queue_table: str, comment: str | None = None,
                          primary_instance: int | None = None, secondary_instance: int | None = None,
                          replication_mode: int | None = None) -> None:
        table = self._catalog.queue_table(queue_table)
        self._session_ctx.authz.check_admin(table.owner)
        if table.sharded:
            raise unsupported("ALTER_QUEUE_TABLE (use ALTER_SHARDED_QUEUE)")
        comment = _comment(comment)
        self._session_ctx.ddl_commit()
        table = _set_given(table, comment=comment, primary_instance=primary_instance,
                           secondary_instance=secondary_instance)
        self._store.update_queue_table(table)
        self._catalog.refresh(force=True)

    def drop_queue_table(self, queue_table: str, force: bool = False, auto_commit: bool = True) -> None:
        table = self._catalog.queue_table(queue_table)
        self._session_ctx.authz.check_admin(table.owner)
        if table.sharded:
            raise unsupported("DROP_QUEUE_TABLE (use DROP_SHARDED_QUEUE)")
        user_queues = [q for q in self._catalog.queues_of(table) if q.name != table.exception_queue_name]
        if user_queues and not _flag("force", force):
            raise ora(24012, table.qualified)
        self._drop_table(table)

    def _drop_table(self, table: QueueTableInfo) -> None:
        """Drop ``table`` with its queues, their subscribers and buffered messages (the
        caller checked the arguments and the privilege)."""
        for check in QUEUE_DROP_CHECKS:
            check(self._session_ctx, [(q.owner, q.name) for q in self._catalog.queues_of(table)])
        self._session_ctx.ddl_commit()
        dropped = self._catalog.queues_of(table)
        subscribers = [(q, sub) for q in dropped for sub in self._catalog.subscribers(q)]
        # the table first: refused (ORA-00054, a session holds one of its messages), it
        # must leave the subscribers as they were
        self._store.drop_queue_table(table.owner, table.name)
        for q, sub in subscribers:
            self._store.drop_catalog_object("SUBSCRIBER", q.qualified, sub.key)
        self._drop_queue_grants(dropped)
        self._forget_buffered(dropped)
        self._catalog.refresh(force=True)

    def purge_queue_table(self, queue_table: str, purge_condition: str | None,
                          purge_options: object = None) -> None:
        """Remove the messages of the table that match ``purge_condition``, a SQL condition
        on the ``AQ$<queue_table>`` view aliased ``qtview`` (NULL purges everything)."""
        table = self._catalog.queue_table(queue_table)
        self._session_ctx.authz.check_admin(table.owner)
        if table.sharded and purge_condition is not None:
            raise ora(24228)
        self._session_ctx.ddl_commit()
        self._store.purge_messages(table, purge_condition)

    # -- queues ---------------------------------------------------------------
    def create_queue(self, queue_name: str, queue_table: str, queue_type: int = 0,
                     max_retries: int | None = None, retry_delay: float = 0, retention_time: float = 0,
                     dependency_tracking: bool = False, comment: str | None = None,
                     auto_commit: bool = True) -> None:
        owner, name = split_qualified(queue_name, self._session_ctx.username, "queue name")
        self._session_ctx.authz.check_admin(owner)
        table = self._catalog.queue_table(queue_table)
        if table.sharded:
            raise unsupported("CREATE_QUEUE (a sharded queue table holds its one queue)")
        if owner != table.owner:
            raise ora(24037, owner, table.owner)
        if queue_type not in (0, 1):
            raise InterfaceError("queue_type must be DBMS_AQADM.NORMAL_QUEUE or EXCEPTION_QUEUE")
        retries = 5 if max_retries is None else _retries(max_retries)
        delay = _seconds("retry_delay", retry_delay or 0, 24013, False)
        retention = _seconds("retention_time", retention_time or 0, 24014, True)
        comment = _comment(comment)
        self._session_ctx.ddl_commit()
        q = QueueInfo(owner=owner, name=name, table=table,
                      queue_type="EXCEPTION_QUEUE" if queue_type == 1 else "NORMAL_QUEUE",
                      max_retries=retries, retry_delay=delay, retention_time=retention,
                      comment=comment)
        self._store.create_queue(q)
        self._catalog.refresh(force=True)

    def alter_queue(self, queue_name: str, max_retries: int | None = None, retry_delay: float | None = None,
                    retention_time: float | None = None, auto_commit: bool = True,
                    comment: str | None = None) -> None:
        q = self._catalog.queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        if max_retries is not None:
            _retries(max_retries)
        new_delay = None if retry_delay is None else _seconds("retry_delay", retry_delay, 24013, False)
        new_ret = None if retention_time is None else _seconds("retention_time", retention_time, 24014, True)
        comment = _comment(comment)
        self._session_ctx.ddl_commit()
        q = _set_given(q, max_retries=max_retries, retry_delay=new_delay, retention_time=new_ret,
                       comment=comment)
        self._store.update_queue(q)
        self._catalog.refresh(force=True)

    def drop_queue(self, queue_name: str, auto_commit: bool = True) -> None:
        q = self._catalog.queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        if q.table.sharded:
            raise unsupported("DROP_QUEUE (use DROP_SHARDED_QUEUE)")
        if q.enqueue_enabled or q.dequeue_enabled:
            raise ora(24011, q.qualified)
        if q.name == q.table.exception_queue_name:
            raise ora(24011, q.qualified)  # dropped with its queue table only
        for check in QUEUE_DROP_CHECKS:
            check(self._session_ctx, [(q.owner, q.name)])
        self._session_ctx.ddl_commit()
        subscribers = self._catalog.subscribers(q)
        self._store.drop_queue(q.owner, q.name)   # first: see drop_queue_table
        for sub in subscribers:
            self._store.drop_catalog_object("SUBSCRIBER", q.qualified, sub.key)
        self._drop_queue_grants([q])
        self._forget_buffered([q])
        self._catalog.refresh(force=True)

    def _drop_queue_grants(self, queues: list[QueueInfo]) -> None:
        """The privileges granted on the dropped queues go with them, as an object's grants
        go with the object: a queue created again under one of the names (by a new user of
        the old name, after DROP USER … CASCADE) starts with none."""
        names = {q.qualified for q in queues}
        for grantee, queue, _ in self._store.catalog_objects("QUEUEPRIV"):
            if queue in names:
                self._store.drop_catalog_object("QUEUEPRIV", grantee, queue)

    def _forget_buffered(self, queues: list[QueueInfo]) -> None:
        """The dropped queues' buffered messages in this process's memory go with them."""
        pool = existing_pool(self._store)
        if pool is not None:
            for q in queues:
                pool.forget_queue(q)

    def start_queue(self, queue_name: str, enqueue: bool = True, dequeue: bool = True) -> None:
        q = self._catalog.queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        enq, deq = _flag("enqueue", enqueue), _flag("dequeue", dequeue)
        if q.is_exception_queue and enq:
            if not deq:
                raise ora(24017, q.qualified)
            enq = False  # an exception queue is only ever enabled for dequeue
        self._session_ctx.ddl_commit()
        q = dataclasses.replace(q, enqueue_enabled=q.enqueue_enabled or enq,       # a copy: see _set_given
                                dequeue_enabled=q.dequeue_enabled or deq)
        self._store.update_queue(q)
        self._catalog.refresh(force=True)

    def stop_queue(self, queue_name: str, enqueue: bool = True, dequeue: bool = True,
                   wait: bool = True) -> None:
        q = self._catalog.queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        self._session_ctx.ddl_commit()
        q = dataclasses.replace(q, enqueue_enabled=q.enqueue_enabled and not _flag("enqueue", enqueue),
                                dequeue_enabled=q.dequeue_enabled and not _flag("dequeue", dequeue))
        self._store.update_queue(q)
        self._catalog.refresh(force=True)

    def verify_queue_types(self, src_queue_name: str, dest_queue_name: str,
                           destination: str | None = None, transformation: str | None = None) -> int:
        """1 if messages of the source queue can be enqueued into the destination, else 0."""
        src = self._catalog.queue(src_queue_name)
        dst = self._catalog.queue(dest_queue_name)
        if transformation is not None:
            spec = self._catalog.transformation(transformation)
            return int(spec["to_type"] == dst.table.payload_type)
        return int(src.table.payload_type == dst.table.payload_type)


__all__ = ["AqAdm", "MAX_SECONDS", "QUEUE_DROP_CHECKS", "parse_sort_list", "canonical"]
