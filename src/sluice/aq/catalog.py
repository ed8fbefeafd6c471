"""The AQ catalog as one connection sees it: queues, queue tables, object types,
transformations — cached, and refreshed whenever the store's catalog changes."""

from __future__ import annotations

from typing import Any

from .. import objtypes as ot
from ..errors import ora
from ..names import split_qualified
from ..store.base import QueueInfo, QueueTableInfo, Store
from .payload import SIMPLE_TYPES, PayloadCodec


class Catalog:
    """Name lookups for one connection (``default_schema`` = the connected user)."""

    def __init__(self, store: Store, default_schema: str) -> None:
        self.store = store
        self.default_schema = default_schema
        self._version = -1
        self._queues: dict[tuple[str, str], QueueInfo] = {}
        self._tables: dict[tuple[str, str], QueueTableInfo] = {}
        self._types: dict[str, ot.DbObjectType] = {}
        self._type_specs: dict[str, dict] = {}
        self._transformations: dict[str, dict] = {}
        self._codecs: dict[int, PayloadCodec] = {}
        self._subscribers: dict[str, list] = {}
        self._subscriber_objects: dict[str, list] = {}
        self._registrations: dict[str, list] = {}

    def refresh(self, force: bool = False) -> None:
        version = self.store.catalog_version()
        if version == self._version and not force:
            return
        self._queues = {(q.owner, q.name): q for q in self.store.queues()}
        self._tables = {(t.owner, t.name): t for t in self.store.queue_tables()}
        rows = self.store.catalog_objects_of(("TYPE", "TRANSFORMATION", "REGISTRATION", "SUBSCRIBER"))
        self._type_specs = {f"{o}.{n}": spec for o, n, spec in rows["TYPE"]}
        self._types = dict(ot.builtin_types())
        self._transformations = {f"{o}.{n}": spec for o, n, spec in rows["TRANSFORMATION"]}
        self._registrations: dict[str, list] = {}
        for owner, _, spec in rows["REGISTRATION"]:
            self._registrations.setdefault(owner, []).append(spec)
        self._subscribers: dict[str, list] = {}
        self._subscriber_objects: dict[str, list] = {}
        for owner, _, spec in rows["SUBSCRIBER"]:
            self._subscribers.setdefault(owner, []).append(spec)
        self._codecs = {}
        self._version = version

    def _reloaded(self) -> bool:
        """A name is not in the cache: before it is reported missing, the store's catalog
        version is brought up to what was committed (another process's DDL whose
        announcement is still on its way, PostgreSQL's NOTIFY); true when the cache was
        reloaded for a newer catalog.  Only on a miss: a query, where a hit costs none."""
        version = self._version
        self.store.sync_catalog()
        self.refresh()
        return self._version != version

    # -- queues -------------------------------------------------------------
    def queue(self, name: str) -> QueueInfo:
        """The queue called ``name`` ([schema.]queue).  :raises: ORA-24010."""
        owner, qname = split_qualified(name, self.default_schema, "queue name")
        self.refresh()
        q = self._queues.get((owner, qname))
        if q is None and self._reloaded():
            q = self._queues.get((owner, qname))
        if q is None:
            raise ora(24010, f"{owner}.{qname}")
        return q

    def queue_by_key(self, key: tuple[str, str]) -> QueueInfo:
        """Like :meth:`queue` for an already resolved ``(owner, name)``."""
        if self.store.catalog_version() != self._version:
            self.refresh()
        q = self._queues.get(key)
        if q is None and self._reloaded():
            q = self._queues.get(key)
        if q is None:
            raise ora(24010, f"{key[0]}.{key[1]}")
        return q

    def dropped(self, queue: QueueInfo, error: Exception) -> Exception | None:
        """ORA-24010 when ``error``, raised by a statement on ``queue``'s table, is its table
        unknown (ORA-00942) because another process dropped the queue and the announcement
        is still on its way (PostgreSQL's NOTIFY); else None.  Asked only on that failure:
        the statements that succeed cost nothing."""
        if getattr(error, "code", None) != 942:
            return None
        self.store.sync_catalog()
        self.refresh()
        if self._queues.get((queue.owner, queue.name)) is None:
            return ora(24010, queue.qualified)
        return None

    def find_queue(self, owner: str, name: str) -> QueueInfo | None:
        self.refresh()
        return self._queues.get((owner, name))

    def queue_table(self, name: str) -> QueueTableInfo:
        owner, tname = split_qualified(name, self.default_schema, "queue table name")
        self.refresh()
        t = self._tables.get((owner, tname))
        if t is None and self._reloaded():
            t = self._tables.get((owner, tname))
        if t is None:
            raise ora(24002, f"{owner}.{tname}")
        return t

    def find_queue_table(self, owner: str, name: str) -> QueueTableInfo | None:
        self.refresh()
        return self._tables.get((owner, name))

    def queues_of(self, table: QueueTableInfo) -> list[QueueInfo]:
        self.refresh()
        return [q for q in self._queues.values() if q.table.qt_id == table.qt_id]

    def all_queues(self) -> list[QueueInfo]:
        self.refresh()
        return list(self._queues.values())

    def registrations(self, queue: QueueInfo) -> list[dict]:
        """Notification registrations on ``queue`` (specs, see aq.notify.registration)."""
        if self.store.catalog_version() != self._version:
            self.refresh()
        return self._registrations.get(queue.qualified, [])

    def any_registrations(self) -> bool:
        self.refresh()
        return bool(self._registrations)

    def subscribers(self, queue: QueueInfo) -> list:
        """The subscribers of ``queue``, in subscription order."""
        self.refresh()
        found = self._subscriber_objects.get(queue.qualified)
        if found is None:   # built once per catalog version: every enqueue asks (recipients)
            from .subscribers import Subscriber
            found = self._subscriber_objects[queue.qualified] = [
                Subscriber.from_spec(s) for s in self._subscribers.get(queue.qualified, [])]
        return list(found)

    # -- object types (the objtypes.TypeRegistry protocol) ------------------
    def get_type(self, qualified_name: str) -> "ot.DbObjectType | None":
        self.refresh()
        if "." not in qualified_name:
            qualified_name = f"{self.default_schema}.{qualified_name}"
        t = self._types.get(qualified_name)
        if t is None and qualified_name in self._type_specs:
            t = ot.type_from_spec(self._type_specs[qualified_name], self)
            self._types[qualified_name] = t
        return t

    def type_named(self, name: str) -> "ot.DbObjectType":
        """The object type ``name`` ([schema.]type), or a DBMS_AQ record type
        ([SYS.]DBMS_AQ.record).  :raises: ORA-04043."""
        from .records import record_type
        record = record_type(name)
        if record is not None:
            return record
        # schema.package.type: a record of another package, none of which Sluice has
        if isinstance(name, str) and name.count(".") == 2 and '"' not in name:
            raise ora(4043, name.upper())
        owner, tname = split_qualified(name, self.default_schema, "type name")
        t = self.get_type(f"{owner}.{tname}")
        if t is None and owner == self.default_schema:
            t = self.get_type(f"SYS.{tname}")
        if t is None:
            raise ora(4043, f"{owner}.{tname}")
        return t

    def type_spec(self, qualified_name: str) -> dict | None:
        self.refresh()
        return self._type_specs.get(qualified_name)

    def codec(self, table: QueueTableInfo) -> PayloadCodec:
        codec = self._codecs.get(table.qt_id)
        if codec is None:
            objtype = None
            if table.payload_type not in SIMPLE_TYPES:
                objtype = self.get_type(table.payload_type)
                if objtype is None:
                    raise ora(24181, table.payload_type)
            codec = PayloadCodec(table.payload_type, objtype, self.get_type)
            self._codecs[table.qt_id] = codec
        return codec

    # -- transformations ----------------------------------------------------
    def transformation(self, name: str) -> dict[str, Any]:
        owner, tname = split_qualified(name, self.default_schema, "transformation name")
        self.refresh()
        spec = self._transformations.get(f"{owner}.{tname}")
        if spec is None:
            raise ora(24185, owner, tname)
        return spec
