"""Sharded queues / Transactional Event Queues (TxEventQ): ``DBMS_AQADM.CREATE_SHARDED_QUEUE``
(12.2), ``CREATE_TRANSACTIONAL_EVENT_QUEUE`` (21c, the same procedure under its new name),
their DROP_ / ALTER_ procedures and the queue parameters (``SET_QUEUE_PARAMETER`` …).

Oracle creates a sharded queue together with a queue table of the queue's own name; python-
oracledb's AQ user guide: "TxEventQ use the same Python API calls as classic queues".  Sluice
keeps one: the queue table and its queue are ordinary ones (one store, the same enqueue,
dequeue, commit and rollback semantics), marked sharded in the catalog (a SLUICE_CATALOG row of
kind SHARDED_QUEUE holding the queue's parameters and its exception queue; ``DBA_QUEUES.SHARDED``
reads it).  Unlike a classic queue table, a sharded queue has no exception queue until
CREATE_EXCEPTION_QUEUE (18c) makes one; without one a message past max_retries or its
expiration is purged (CREATE_SHARDED_QUEUE, 12.2: "After the retry limit has been exceeded,
the message will be purged from the queue").  Shards themselves (RAC instances, partitions,
the message cache) have no meaning in one store: SHARD_NUM is kept and shown, not acted on.

What a sharded queue refuses (ORA-24205 "feature … not supported for sharded queues" unless
Oracle documents another code), checked before anything changes:
- seed 003: recipient lists at enqueue ("a list of recipients … into a non-sharded queue"),
  propagation between sharded and non-sharded queues (a queue at another site: by that
  site, when the propagation first delivers there — a queue-to-queue schedule then fails, a
  queue-to-dblink one marks those messages UNDELIVERABLE), notifications
  other than PL/SQL ("Sharded queues only support PL/SQL notification");
- python-oracledb's AQ user guide: ``EnqOptions.transformation`` / ``DeqOptions.transformation``,
  array enqueue and dequeue of JSON payloads;
- Oracle's DBMS_AQADM: the classic procedures on the queue's table or queue (CREATE_QUEUE into
  it, ALTER_QUEUE_TABLE, DROP_QUEUE_TABLE, DROP_QUEUE), PURGE_QUEUE_TABLE by condition
  (ORA-24228), payload types other than RAW, JSON, object types and JMS types (ORA-24216).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InterfaceError, ora
from ..names import split_qualified
from ..routines import out_params
from ..store.base import SHARDED_KIND, QueueInfo, QueueTableInfo
from .adminargs import comment_arg, flag, parse_sort_list, retries, seconds
from .payload import ANYDATA

if TYPE_CHECKING:
    from ..store.base import Store

# DBMS_AQADM.JMS_TYPE: the default payload, the generic JMS message
JMS_TYPE = "SYS.AQ$_JMS_MESSAGE"

# queue parameters (SET_QUEUE_PARAMETER): name -> the values it takes
QUEUE_PARAMETERS: dict[str, tuple[int, int]] = {
    "SHARD_NUM": (1, 2**31 - 1),          # number of shards (kept; one store has one)
    "STICKY_DEQUEUE": (0, 1),             # a dequeuer keeps to its shard
    "KEY_BASED_ENQUEUE": (0, 1),          # enqueue by key to a shard
}


@dataclasses.dataclass
class QueuePropsT:
    """``DBMS_AQADM.QUEUE_PROPS_T``, the ``queue_properties`` of CREATE_ / ALTER_SHARDED_QUEUE
    (and their TRANSACTIONAL_EVENT_QUEUE names), with its fields' defaults: NORMAL_QUEUE,
    no retry delay, no retention, the default sort list, the AUTO cache hint (NULL here).
    A PL/SQL block declares one (``qp DBMS_AQADM.QUEUE_PROPS_T``) and sets its fields;
    Python passes ``conn.aqadm.QUEUE_PROPS_T(retention_time=60)`` or a dict."""

    queue_type: int = 0
    retry_delay: float = 0
    retention_time: float = 0
    sort_list: str | None = None
    cache_hint: int | None = None


# QUEUE_PROPS_T fields CREATE_SHARDED_QUEUE takes in queue_properties
_QUEUE_PROPS = tuple(f.name for f in dataclasses.fields(QueuePropsT))


def unsupported(feature: str):
    """ORA-24205 for ``feature``."""
    return ora(24205, feature)


def check_enqueue(q: QueueInfo, recipients: list, transformation: str | None, array: bool) -> None:
    """What an enqueue into a sharded queue may not use (see the module docstring)."""
    if not q.table.sharded:
        return
    if any(recipients):
        raise unsupported("recipient list")
    if transformation:
        raise unsupported("transformation")
    if array and q.table.payload_type == "JSON":
        raise unsupported("array enqueue of JSON payloads")


def check_dequeue(q: QueueInfo, transformation: str | None, array: bool) -> None:
    if not q.table.sharded:
        return
    if transformation:
        raise unsupported("transformation")
    if array and q.table.payload_type == "JSON":
        raise unsupported("array dequeue of JSON payloads")


def check_propagation(src: QueueInfo, dst: QueueInfo | None) -> None:
    """Seed 003: "You cannot propagate between sharded and non-sharded queues" (sharded to
    sharded works between single- and multi-consumer queues both ways)."""
    if dst is not None:
        check_sharded_pair(src.table.sharded, dst)


def check_sharded_pair(source_sharded: bool, dst: QueueInfo) -> None:
    """:func:`check_propagation` where only the source's kind is known: at a destination
    (the source cannot know a queue's kind at another site before it delivers there)."""
    if source_sharded != dst.table.sharded:
        raise unsupported("propagation between sharded and non-sharded queues")


def check_notification(q: QueueInfo, protocol: str) -> None:
    """Seed 003: "Sharded queues only support PL/SQL notification" (``protocol``: PLSQL,
    CALLBACK, MAIL or HTTP, as the registration's)."""
    if q.table.sharded and protocol != "PLSQL":
        raise unsupported(f"{protocol} notification (only PL/SQL)")


# where SET_QUEUE_PARAMETER keeps the database level's values: (kind, owner, name)
_DATABASE_PARAMETERS = ("AQ_PARAMETERS", "SYS", "DATABASE")


def _spec_of(store: "Store", table: QueueTableInfo | None) -> dict[str, Any]:
    """The catalog row of a sharded queue's table (None: the database's parameters)."""
    kind, owner, key = _DATABASE_PARAMETERS if table is None else (SHARDED_KIND, table.owner, table.name)
    for o, name, spec in store.catalog_objects(kind):
        if (o, name) == (owner, key):
            return dict(spec)
    return {}


def parameters_of(store: "Store", table: QueueTableInfo | None) -> dict[str, Any]:
    """The queue parameters set on a sharded queue's table (None: on the database)."""
    return dict(_spec_of(store, table).get("parameters", {}))


class ShardedQueueAdm:
    """The sharded queue procedures of DBMS_AQADM (mixed into :class:`.admin.AqAdm`)."""

    JMS_TYPE = JMS_TYPE
    QUEUE_PROPS_T = QueuePropsT

    # provided by AqAdm
    _session_ctx: Any
    _catalog: Any
    _store: Any

    def _payload_type(self, text: str) -> str:   # pragma: no cover - AqAdm's
        raise NotImplementedError

    def _drop_table(self, table: QueueTableInfo) -> None:   # pragma: no cover - AqAdm's
        raise NotImplementedError

    # -- create ---------------------------------------------------------------
    def create_sharded_queue(self, queue_name: str, storage_clause: str | None = None,
                             multiple_consumers: bool = False, max_retries: int | None = None,
                             comment: str | None = None, queue_payload_type: str = JMS_TYPE,
                             queue_properties: Any = None, replication_mode: int = 0) -> None:
        """A sharded queue and its queue table, both named ``queue_name``, without an exception
        queue (CREATE_EXCEPTION_QUEUE); not started (START_QUEUE, as for classic queues)."""
        ctx = self._session_ctx
        owner, name = split_qualified(queue_name, ctx.username, "queue name")
        ctx.authz.check_admin(owner)
        if len(name) > 122:  # room for the AQ$_..._E exception queue name
            raise ora(972, name)
        if storage_clause is not None and not isinstance(storage_clause, str):
            raise ora(6502, f"storage_clause must be a string, not {type(storage_clause).__name__}")
        payload = self._sharded_payload_type(JMS_TYPE if queue_payload_type is None else queue_payload_type)
        multi = flag("multiple_consumers", multiple_consumers)
        max_retries = 5 if max_retries is None else retries(max_retries)
        comment = comment_arg(comment)
        props = _queue_props(queue_properties)
        _replication_mode(replication_mode)
        if self._catalog.find_queue(owner, name) is not None:
            raise ora(24006, f"{owner}.{name}")
        ctx.ddl_commit()
        table = QueueTableInfo(owner=owner, name=name, payload_type=payload,
                               sort_list=props.get("sort_list", ("ENQ_TIME",)), multiple_consumers=multi,
                               comment=comment, compatible="12.2", sharded=True)
        queue = QueueInfo(owner=owner, name=name, table=table, max_retries=max_retries,
                          retry_delay=props.get("retry_delay", 0.0),
                          retention_time=props.get("retention_time", 0.0), comment=comment)
        # no exception queue until CREATE_EXCEPTION_QUEUE makes one (until then a message
        # past its retries or expiry is purged)
        self._store.create_queue_table(table, None, (queue,))
        self._catalog.refresh(force=True)

    def create_transactional_event_queue(self, queue_name: str, storage_clause: str | None = None,
                                         multiple_consumers: bool = False, max_retries: int | None = None,
                                         comment: str | None = None, queue_payload_type: str = JMS_TYPE,
                                         queue_properties: Any = None, replication_mode: int = 0) -> None:
        """Oracle 21c's name for :meth:`create_sharded_queue` (same parameters)."""
        self.create_sharded_queue(queue_name, storage_clause, multiple_consumers, max_retries, comment,
                                  queue_payload_type, queue_properties, replication_mode)

    def _sharded_payload_type(self, text: Any) -> str:
        payload = self._payload_type(text)         # ORA-00902 / ORA-04043 as for a queue table
        if payload in ("XMLTYPE", ANYDATA):
            raise ora(24216, payload)
        return payload

    # -- exception queue ------------------------------------------------------
    def create_exception_queue(self, sharded_queue_name: str, exception_queue_name: str | None = None,
                               multiple_consumers: bool = False, storage_clause: str | None = None,
                               sort_list: str | None = None, comment: str | None = None) -> None:
        """DBMS_AQADM.CREATE_EXCEPTION_QUEUE (18c; the 21c parameters): the exception queue of
        a sharded queue, ``AQ$_<queue>_E`` unless named, where its messages past max_retries
        or their expiration go from now on (without one they are purged).  It lives in the
        sharded queue's own table, so it shows in DBA_QUEUES as an EXCEPTION_QUEUE that is
        SHARDED, is started for dequeue only (START_QUEUE) and goes with DROP_SHARDED_QUEUE;
        its consumers and order are the sharded queue's (``multiple_consumers``,
        ``storage_clause`` and ``sort_list`` are checked, not kept apart).
        :raises: ORA-24010 (no such sharded queue), ORA-24006 (the sharded queue has an
        exception queue already, or the name is taken), ORA-24037 (another schema),
        ORA-24036 (a sort list a sharded queue cannot have)."""
        q = self._sharded_queue(sharded_queue_name)
        ctx = self._session_ctx
        ctx.authz.check_admin(q.owner)
        if exception_queue_name is None:
            owner, name = q.owner, f"AQ$_{q.name}_E"
        else:
            owner, name = split_qualified(exception_queue_name, q.owner, "exception queue name")
        if owner != q.owner:
            raise ora(24037, owner, q.owner)
        if len(name) > 128:
            raise ora(972, name)
        flag("multiple_consumers", multiple_consumers)
        if storage_clause is not None and not isinstance(storage_clause, str):
            raise ora(6502, f"storage_clause must be a string, not {type(storage_clause).__name__}")
        if sort_list is not None and parse_sort_list(sort_list) not in (("ENQ_TIME",), ("PRIORITY", "ENQ_TIME")):
            raise ora(24036, sort_list)
        comment = comment_arg(comment)
        if q.table.sharded_exception_queue is not None:
            raise ora(24006, f"{q.owner}.{q.table.sharded_exception_queue}")
        if self._catalog.find_queue(owner, name) is not None:
            raise ora(24006, f"{owner}.{name}")
        ctx.ddl_commit()
        # the queue and the catalog row's entry naming it in one transaction: a queue
        # without the entry would be an exception queue nothing moves messages to
        self._store.create_queue(QueueInfo(owner=owner, name=name, table=q.table, queue_type="EXCEPTION_QUEUE",
                                           max_retries=0, retry_delay=0.0, retention_time=0.0,
                                           comment=comment if comment is not None else "exception queue"),
                                 noting=(SHARDED_KIND, q.table.owner, q.table.name, {"exception_queue": name}))
        self._catalog.refresh(force=True)

    # -- drop / alter ---------------------------------------------------------
    def _sharded_queue(self, queue_name: str) -> QueueInfo:
        """The sharded queue ``queue_name`` (not its exception queue).  :raises: ORA-24010
        for any other queue: there is no sharded queue of that name."""
        q = self._catalog.queue(queue_name)
        if not q.table.sharded or q.is_exception_queue:
            raise ora(24010, f"{q.qualified} (not a sharded queue)")
        return q

    def drop_sharded_queue(self, queue_name: str, force: bool = False) -> None:
        """Drop the sharded queue with its queue table and messages; without ``force`` the
        queue must be stopped first (ORA-24011, as DROP_QUEUE)."""
        force = flag("force", force)
        q = self._sharded_queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        if (q.enqueue_enabled or q.dequeue_enabled) and not force:
            raise ora(24011, q.qualified)
        self._drop_table(q.table)

    def drop_transactional_event_queue(self, queue_name: str, force: bool = False) -> None:
        """Oracle 21c's name for :meth:`drop_sharded_queue`."""
        self.drop_sharded_queue(queue_name, force)

    def alter_sharded_queue(self, queue_name: str, max_retries: int | None = None,
                            comment: str | None = None, queue_properties: Any = None,
                            replication_mode: int | None = None) -> None:
        """Change MAX_RETRIES, the comment (queue and queue table) and the retry delay and
        retention of ``queue_properties``; NULL leaves a value as it is."""
        q = self._sharded_queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        if max_retries is not None:
            retries(max_retries)
        comment = comment_arg(comment)
        props = _queue_props(queue_properties)
        if "sort_list" in props or "queue_type" in props:
            raise unsupported("changing the sort list or queue type of a sharded queue")
        if replication_mode is not None:
            _replication_mode(replication_mode)
        self._session_ctx.ddl_commit()
        changes = {k: v for k, v in (("max_retries", max_retries), ("comment", comment),
                                     ("retry_delay", props.get("retry_delay")),
                                     ("retention_time", props.get("retention_time"))) if v is not None}
        if comment is not None:
            self._store.update_queue_table(dataclasses.replace(q.table, comment=comment))
        self._store.update_queue(dataclasses.replace(q, **changes))
        self._catalog.refresh(force=True)

    def alter_transactional_event_queue(self, queue_name: str, max_retries: int | None = None,
                                        comment: str | None = None, queue_properties: Any = None,
                                        replication_mode: int | None = None) -> None:
        """Oracle 21c's name for :meth:`alter_sharded_queue`."""
        self.alter_sharded_queue(queue_name, max_retries, comment, queue_properties, replication_mode)

    # -- queue parameters -----------------------------------------------------
    # Oracle: "For database level the queue_name should be NULL. Note that queue overrides
    # database level parameter values."  The database's are a SLUICE_CATALOG row of their own.
    def _parameter(self, queue_name: str | None, param_name: Any) -> tuple[QueueTableInfo | None, str]:
        """(the sharded queue's table, or None for the database level; the parameter's name)."""
        table = None if queue_name is None else self._sharded_queue(queue_name).table
        if not isinstance(param_name, str) or param_name.strip().upper() not in QUEUE_PARAMETERS:
            raise unsupported(f"queue parameter {param_name!r}")
        return table, param_name.strip().upper()

    def set_queue_parameter(self, queue_name: str | None, param_name: str, param_value: int) -> None:
        """Set a parameter (SHARD_NUM, STICKY_DEQUEUE, KEY_BASED_ENQUEUE) of a sharded queue,
        or with ``queue_name`` NULL of the database.  :raises: ORA-24205 for another name,
        ORA-06502 for a value out of its range."""
        table, name = self._parameter(queue_name, param_name)
        low, high = QUEUE_PARAMETERS[name]
        if isinstance(param_value, bool) or not isinstance(param_value, (int, float)) \
                or not low <= param_value <= high or param_value != int(param_value):   # NaN, ±inf: out of range
            raise ora(6502, f"{name} takes an integer from {low} to {high}, not {param_value!r}")
        self._put_parameter(table, name, int(param_value))

    def unset_queue_parameter(self, queue_name: str | None, param_name: str) -> None:
        """Back to the default (the database's value for a queue, else NULL)."""
        table, name = self._parameter(queue_name, param_name)
        self._put_parameter(table, name, None)

    @out_params("param_value")
    def get_queue_parameter(self, queue_name: str | None, param_name: str) -> int | None:
        """The queue's value of the parameter, else the database's, else NULL (OUT
        ``param_value``)."""
        table, name = self._parameter(queue_name, param_name)
        own = {} if table is None else parameters_of(self._store, table)
        return own[name] if name in own else parameters_of(self._store, None).get(name)

    def _put_parameter(self, table: QueueTableInfo | None, name: str, value: int | None) -> None:
        kind, owner, key = (_DATABASE_PARAMETERS if table is None
                            else (SHARDED_KIND, table.owner, table.name))
        self._session_ctx.authz.check_admin(owner)
        self._session_ctx.ddl_commit()
        # read, change and write the row in one store transaction that holds it: read
        # before, a CREATE_EXCEPTION_QUEUE or another SET_QUEUE_PARAMETER committed meanwhile
        # was overwritten (the database level's row is made by its first parameter)
        change = functools.partial(_with_parameter, name=name, value=value)
        if self._store.merge_catalog_object(kind, owner, key, change, create=table is None) is None:
            raise ora(24010, f"{owner}.{key} (dropped)")
        self._catalog.refresh(force=True)


def _with_parameter(spec: Mapping[str, Any], name: str, value: int | None) -> dict[str, Any]:
    """A catalog row's ``spec`` with queue parameter ``name`` set to ``value`` (None: unset);
    the rest of the row (a sharded queue's exception queue) stays as it is."""
    params = dict(spec.get("parameters", {}))
    if value is None:
        params.pop(name, None)
    else:
        params[name] = value
    return {**spec, "parameters": params}


def _replication_mode(value: Any) -> None:
    # DBMS_AQADM.NONE (0) or REPLICATION_MODE (1): one store has no replicas to keep
    if isinstance(value, bool) or value not in (0, 1, None):
        raise InterfaceError("replication_mode must be DBMS_AQADM.NONE or DBMS_AQADM.REPLICATION_MODE")


def _queue_props(props: Any) -> dict[str, Any]:
    """``QUEUE_PROPS_T`` (a mapping or a dataclass with its fields) as checked values: the
    retry delay and retention (ORA-24013 / ORA-24014), sort list (ENQ_TIME or PRIORITY,
    ENQ_TIME: ORA-24036), queue type (NORMAL_QUEUE only) and cache hint (checked, kept
    nowhere: there is no message cache)."""
    if props is None:
        return {}
    if isinstance(props, Mapping):
        given = {str(k).lower(): v for k, v in props.items()}
    elif dataclasses.is_dataclass(props) and not isinstance(props, type):
        given = {f.name: getattr(props, f.name) for f in dataclasses.fields(props)}
    else:
        raise InterfaceError(f"queue_properties must be a DBMS_AQADM.QUEUE_PROPS_T, not {type(props).__name__}")
    unknown = set(given) - set(_QUEUE_PROPS)
    if unknown:
        raise InterfaceError(f"QUEUE_PROPS_T has no field {sorted(unknown)[0]}")
    out: dict[str, Any] = {}
    if given.get("queue_type") not in (None, 0):
        raise unsupported("queue_type other than NORMAL_QUEUE")
    if given.get("retry_delay") is not None:
        out["retry_delay"] = seconds("retry_delay", given["retry_delay"], 24013, False)
    if given.get("retention_time") is not None:
        out["retention_time"] = seconds("retention_time", given["retention_time"], 24014, True)
    if given.get("sort_list") is not None:
        out["sort_list"] = parse_sort_list(given["sort_list"])
        if out["sort_list"] not in (("ENQ_TIME",), ("PRIORITY", "ENQ_TIME")):
            # QUEUE_PROPS_T: "Sharded queues can be sorted by ENQ_TIME or PRIORITY, ENQ_TIME"
            raise ora(24036, given["sort_list"])
    if given.get("cache_hint") is not None and (isinstance(given["cache_hint"], bool)
                                                or not isinstance(given["cache_hint"], int)):
        raise InterfaceError("cache_hint must be DBMS_AQADM.AUTO, CACHED or UNCACHED")
    return out


__all__ = ["JMS_TYPE", "QUEUE_PARAMETERS", "QueuePropsT", "ShardedQueueAdm", "check_dequeue", "check_enqueue",
           "check_notification", "check_propagation", "check_sharded_pair", "parameters_of", "unsupported"]
