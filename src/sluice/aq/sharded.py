"""Sharded queues / Transactional Event Queues (TxEventQ): ``DBMS_AQADM.CREATE_SHARDED_QUEUE``
(12.2), ``CREATE_TRANSACTIONAL_EVENT_QUEUE`` (21c, the same procedure under its new name),
their DROP_ / ALTER_ procedures and the queue parameters (``SET_QUEUE_PARAMETER`` …).

Oracle creates a sharded queue together with a queue table of the queue's own name; python-
oracledb's AQ user guide: "TxEventQ use the same Python API calls as classic queues".  Sluice
keeps one: the queue table and its queue are ordinary ones (one store, the same enqueue,
dequeue, commit and rollback semantics, the default exception queue ``AQ$_<name>_E``), marked
sharded in the catalog (a SLUICE_CATALOG row of kind SHARDED_QUEUE holding the queue's
parameters; ``DBA_QUEUES.SHARDED`` reads it).  Shards themselves (RAC instances, partitions,
the message cache) have no meaning in one store: SHARD_NUM is kept and shown, not acted on.

What a sharded queue refuses (ORA-24205 "feature … not supported for sharded queues" unless
Oracle documents another code), checked before anything changes:
- seed 003: recipient lists at enqueue ("a list of recipients … into a non-sharded queue"),
  propagation between sharded and non-sharded queues, notifications other than PL/SQL
  ("Sharded queues only support PL/SQL notification");
- python-oracledb's AQ user guide: ``EnqOptions.transformation`` / ``DeqOptions.transformation``,
  array enqueue and dequeue of JSON payloads;
- Oracle's DBMS_AQADM: the classic procedures on the queue's table or queue (CREATE_QUEUE into
  it, ALTER_QUEUE_TABLE, DROP_QUEUE_TABLE, DROP_QUEUE), PURGE_QUEUE_TABLE by condition
  (ORA-24228), payload types other than RAW, JSON, object types and JMS types (ORA-24216).
"""

from __future__ import annotations

import dataclasses
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

# QUEUE_PROPS_T fields CREATE_SHARDED_QUEUE takes in queue_properties
_QUEUE_PROPS = ("queue_type", "retry_delay", "retention_time", "sort_list", "cache_hint")


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
    if dst is not None and src.table.sharded != dst.table.sharded:
        raise unsupported("propagation between sharded and non-sharded queues")


def check_notification(q: QueueInfo, protocol: str) -> None:
    """Seed 003: "Sharded queues only support PL/SQL notification" (``protocol``: PLSQL,
    CALLBACK, MAIL or HTTP, as the registration's)."""
    if q.table.sharded and protocol != "PLSQL":
        raise unsupported(f"{protocol} notification (only PL/SQL)")


def parameters_of(store: "Store", table: QueueTableInfo) -> dict[str, Any]:
    """The queue parameters set on a sharded queue's table."""
    for owner, name, spec in store.catalog_objects(SHARDED_KIND):
        if (owner, name) == (table.owner, table.name):
            return dict(spec.get("parameters", {}))
    return {}


class ShardedQueueAdm:
    """The sharded queue procedures of DBMS_AQADM (mixed into :class:`.admin.AqAdm`)."""

    JMS_TYPE = JMS_TYPE

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
        """A sharded queue and its queue table, both named ``queue_name``, with the default
        exception queue; not started (START_QUEUE, as for classic queues)."""
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
        exc = QueueInfo(owner=owner, name=table.exception_queue_name, table=table,
                        queue_type="EXCEPTION_QUEUE", max_retries=0, retry_delay=0.0,
                        retention_time=0.0, enqueue_enabled=False, dequeue_enabled=False,
                        comment="exception queue")
        queue = QueueInfo(owner=owner, name=name, table=table, max_retries=max_retries,
                          retry_delay=props.get("retry_delay", 0.0),
                          retention_time=props.get("retention_time", 0.0), comment=comment)
        self._store.create_queue_table(table, exc, (queue,))
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
        q = self._sharded_queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        if (q.enqueue_enabled or q.dequeue_enabled) and not flag("force", force):
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
    def _parameter(self, queue_name: str, param_name: Any) -> tuple[QueueInfo, str]:
        q = self._sharded_queue(queue_name)
        if not isinstance(param_name, str) or param_name.strip().upper() not in QUEUE_PARAMETERS:
            raise unsupported(f"queue parameter {param_name!r}")
        return q, param_name.strip().upper()

    def set_queue_parameter(self, queue_name: str, param_name: str, param_value: int) -> None:
        """Set a queue parameter (SHARD_NUM, STICKY_DEQUEUE, KEY_BASED_ENQUEUE) of a
        sharded queue.  :raises: ORA-24205 for another name, ORA-06502 for a bad value."""
        q, name = self._parameter(queue_name, param_name)
        self._session_ctx.authz.check_admin(q.owner)
        low, high = QUEUE_PARAMETERS[name]
        if isinstance(param_value, bool) or not isinstance(param_value, (int, float)) \
                or param_value != int(param_value) or not low <= param_value <= high:
            raise ora(6502, f"{name} takes an integer from {low} to {high}, not {param_value!r}")
        self._put_parameters(q.table, name, int(param_value))

    def unset_queue_parameter(self, queue_name: str, param_name: str) -> None:
        """Back to the default: GET_QUEUE_PARAMETER returns NULL again."""
        q, name = self._parameter(queue_name, param_name)
        self._session_ctx.authz.check_admin(q.owner)
        self._put_parameters(q.table, name, None)

    @out_params("param_value")
    def get_queue_parameter(self, queue_name: str, param_name: str) -> int | None:
        """The value SET_QUEUE_PARAMETER gave the parameter, else NULL (OUT ``param_value``)."""
        q, name = self._parameter(queue_name, param_name)
        return parameters_of(self._store, q.table).get(name)

    def _put_parameters(self, table: QueueTableInfo, name: str, value: int | None) -> None:
        self._session_ctx.ddl_commit()
        params = parameters_of(self._store, table)
        if value is None:
            params.pop(name, None)
        else:
            params[name] = value
        self._store.put_catalog_object(SHARDED_KIND, table.owner, table.name,
                                       {"parameters": params}, replace=True)
        self._catalog.refresh(force=True)


def _replication_mode(value: Any) -> None:
    # DBMS_AQADM.NONE (0) or REPLICATION_MODE (1): one store has no replicas to keep
    if isinstance(value, bool) or value not in (0, 1, None):
        raise InterfaceError("replication_mode must be DBMS_AQADM.NONE or DBMS_AQADM.REPLICATION_MODE")


def _queue_props(props: Any) -> dict[str, Any]:
    """``QUEUE_PROPS_T`` (a mapping or an object with its fields) as checked values: the
    retry delay and retention (ORA-24013 / ORA-24014), sort list (ORA-24036), queue type
    (NORMAL_QUEUE only) and cache hint (kept nowhere: there is no message cache)."""
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
    return out


__all__ = ["JMS_TYPE", "QUEUE_PARAMETERS", "ShardedQueueAdm", "check_dequeue", "check_enqueue",
           "check_notification", "check_propagation", "parameters_of", "unsupported"]
