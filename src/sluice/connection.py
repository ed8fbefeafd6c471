"""``Connection``: one session with its transaction, as python-oracledb shapes it.

``sluice.connect("sqlite:///app.db")`` returns one.  It hands out queues
(``conn.queue(...)``), message properties (``conn.msgproperties(...)``),
object types (``conn.gettype(...)``), cursors for statements, and the
administrative packages as attributes (``conn.aqadm``, ``conn.aq``,
``conn.transform``): ``DBMS_<PKG>.<PROC>(param => v)`` is
``conn.<pkg>.<proc>(param=v)``.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from . import objtypes as ot
from .aq.admin import AqAdm
from .aq.catalog import Catalog
from .aq.dbms_aq import DbmsAq, plsql_record
from .aq.buffered import existing_pool
from .aq.dbms_aqelm import DbmsAqelm
from .aq.notify.dispatcher import dispatcher_for
from .aq.queue import Navigation, Queue
from .aq.transform import DbmsTransform, compile_transformation
from .errors import InterfaceError, ora
from .model import Agent, MessageProperties
from .names import canonical, split_qualified
from .rules.adm import RuleAdm
from .rules.evaluate import DbmsRule
from .rules.types import construct_rule_type, is_rule_type
from .security.authorize import Authorizer
from .security.catalog import SecurityCatalog
from .security.users import UserStatements, authenticate
from .store import open_store, reaper, release_store
from .streams.adm import StreamsAdm

DEFAULT_USER = "SLUICE"
AUTH_MODE_DEFAULT, AUTH_MODE_SYSDBA = 0, 2   # python-oracledb's values
_BARE_CALL = re.compile(r'^(?:SYS\.)?DBMS_\w+\.\w+\s*\(.*\)$', re.I | re.S)


class _package:
    """A package attribute (``conn.aqadm``): a fresh, stateless package object per access."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __get__(self, conn: "Connection | None", owner: type) -> Any:
        return self.cls if conn is None else self.cls(conn)


class Connection:
    """A session on a Sluice store (python-oracledb ``Connection``)."""

    def __init__(self, dsn: str, user: str | None = None, password: str | None = None,
                 mode: int = 0) -> None:
        self.dsn = dsn
        reaper.run_posted()           # close what was dropped before opening more
        self._store = open_store(dsn)
        try:
            self.username = canonical(user, "user name") if user else DEFAULT_USER
            self._security = SecurityCatalog(self._store)
            if mode & AUTH_MODE_SYSDBA:   # operating-system authentication, as SYS
                self.username = "SYS"
            else:
                authenticate(self._security, self.username, password)
            self._session = self._store.session(self.username)
        except BaseException:
            release_store(self._store)
            raise
        self._authz = Authorizer(self._security, self.username)
        self._store.start_time_manager()
        self._closed = False
        self._lock = threading.RLock()
        self.autocommit = False
        self._catalog = Catalog(self._store, self.username)
        self._nav: dict[str, Navigation] = {}
        self._group_first: dict[str, Any] = {}
        self._cond_cache: dict = {}
        self._immediate_txn: str | None = None
        self._waits = 0                 # calls of this connection waiting for messages
        self._cancelled = False         # cancel() was called during such a wait
        self._waits_lock = threading.Lock()
        if self._catalog.any_registrations():   # deliver what is owed (reliable notifications)
            dispatcher_for(self._store)

    # The packages hold the connection; made on each access rather than kept, so that a
    # connection and its packages form no reference cycle and a dropped connection is
    # finalised at once by reference counting (not at some later garbage collection).
    aqadm = _package(AqAdm)
    aq = _package(DbmsAq)
    transform = _package(DbmsTransform)
    streams_adm = _package(StreamsAdm)
    aqelm = _package(DbmsAqelm)
    rule_adm = _package(RuleAdm)
    rule = _package(DbmsRule)

    # -- python-oracledb API ------------------------------------------------
    def queue(self, name: str, payload_type: Any = None, *, payloadType: Any = None) -> Queue:  # noqa: N803
        """A queue object for ``name``: ``payload_type`` None/"RAW", "JSON", "XMLTYPE"
        or an object type from :meth:`gettype`."""
        self._check_open()
        return Queue(self, name, payload_type if payload_type is not None else payloadType)

    def msgproperties(self, payload: Any = None, correlation: str | None = None, delay: int | None = None,
                      exceptionq: str | None = None, expiration: int | None = None,
                      priority: int | None = None, recipients: list | None = None,
                      sender_id: Agent | None = None, original_msgid: bytes | None = None
                      ) -> MessageProperties:
        # positional: once per message on the hot path, and keywords cost a fifth of it
        return MessageProperties(payload, correlation, delay or 0, exceptionq,
                                 -1 if expiration is None else expiration, priority or 0, recipients,
                                 sender_id, original_msgid)

    def subscribe(self, namespace: int = 1, protocol: int = 0, callback: Callable | None = None,
                  timeout: int = 0, operations: int = 0, port: int = 0, qos: int = 0,
                  ip_address: str | None = None, grouping_class: int = 0, grouping_value: int = 0,
                  grouping_type: int = 1, name: str | None = None, client_initiated: bool = False,
                  **sluice_extras: Any):
        """python-oracledb's ``subscribe`` for AQ (``namespace=SUBSCR_NAMESPACE_AQ``, ``name``
        the queue or ``queue:consumer``); Sluice adds ``location=`` for HTTP/mail/PL/SQL
        and ``grouping_start`` / ``grouping_repeat``."""
        self._check_open()
        from .aq.notify.registration import subscribe
        return subscribe(self, namespace, protocol, callback, timeout, operations, port, qos,
                         ip_address, grouping_class, grouping_value, grouping_type, name,
                         client_initiated, **sluice_extras)

    def unsubscribe(self, subscription) -> None:
        self._check_open()
        from .aq.notify.registration import unsubscribe
        unsubscribe(self, subscription)

    def gettype(self, name: str) -> "ot.DbObjectType":
        """The object type ``name`` (created by ``CREATE TYPE``, or a SYS type)."""
        self._check_open()
        return self._catalog.type_named(name)

    def cursor(self) -> "Cursor":
        self._check_open()
        from .cursor import Cursor
        return Cursor(self)

    @property
    def transaction_in_progress(self) -> bool:
        """True while the session holds uncommitted work or locks (python-oracledb)."""
        self._check_open()
        return self._session.in_transaction

    def commit(self) -> None:
        self._check_open()
        with self._lock:
            self._session.commit()
            self._group_first.clear()
            self._release_buffered()

    def rollback(self) -> None:
        self._check_open()
        with self._lock:
            self._session.rollback()
            self._group_first.clear()
            self._release_buffered()

    def cancel(self) -> None:
        """Break the call in progress (python-oracledb ``Connection.cancel()``), from any
        thread.  Sluice's calls block only where they wait for messages — a dequeue's
        ``wait``, ``DBMS_AQ.LISTEN`` — and such a wait ends at once with ORA-01013, having
        taken nothing.  Without a call waiting, it does nothing."""
        with self._waits_lock:
            if not self._waits:
                return
            self._cancelled = True
        self._store.wake_waiters()

    def _release_buffered(self) -> None:
        pool = existing_pool(self._store)
        if pool is not None:
            pool.release(self)

    def close(self) -> None:
        if self._closed:
            return
        with self._lock:
            self._closed = True
            try:
                self._session.close()
            finally:
                release_store(self._store)

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A forgotten connection must not keep its locks, but the collector may run this
        # in a thread holding the very locks close() takes: the reaper thread closes it.
        if not getattr(self, "_closed", True):
            reaper.post(self.close)

    # -- hooks of the statement interpreter ----------------------------------
    def package(self, name: str) -> Any:
        """The package object for ``DBMS_<PKG>`` (``SYS.`` prefix allowed)."""
        key = name.upper()
        if key.startswith("SYS."):
            key = key[4:]
        attr = {"DBMS_AQADM": "aqadm", "DBMS_AQ": "aq", "DBMS_TRANSFORM": "transform",
                "DBMS_AQELM": "aqelm"}.get(key)
        if attr is None and key.startswith("DBMS_"):
            attr = key[5:].lower()
        pkg = getattr(self, attr, None) if attr else None
        if pkg is None or attr.startswith("_"):
            raise ora(4043, name)
        return pkg

    def construct(self, type_name: str, args: list) -> Any:
        """Oracle type constructors: ``SYS.AQ$_AGENT(...)`` and object types."""
        key = type_name.upper()
        if key in ("SYS.AQ$_REG_INFO", "AQ$_REG_INFO"):
            from .aq.notify.registration import RegInfo
            return RegInfo(*args)
        if key in ("SYS.AQ$_REG_INFO_LIST", "AQ$_REG_INFO_LIST"):
            return list(args)
        if key in ("SYS.AQ$_AGENT", "AQ$_AGENT"):
            name, address, protocol = (list(args) + [None, None, 0])[:3]
            return Agent(name, address, protocol or 0)
        if key in ("SYS.AQ$_RECIPIENT_LIST_T", "AQ$_RECIPIENT_LIST_T", "DBMS_AQ.AQ$_RECIPIENT_LIST_T",
                   "DBMS_AQ.AQ$_AGENT_LIST_T", "SYS.AQ$_AGENT_LIST_T", "AQ$_AGENT_LIST_T"):
            return list(args)
        if is_rule_type(key):  # SYS.RE$… rule types and ANYDATA.Convert…
            return construct_rule_type(key, args)
        objtype = self._catalog.type_named(type_name)
        if objtype.iscollection:
            return objtype.newobject(list(args))
        obj = objtype.newobject()
        if len(args) > len(objtype.attributes):
            raise ora(6550, 1, 1, f"PLS-00306: wrong number or types of arguments in call to '{type_name}'")
        for attr, value in zip(objtype.attributes, args):
            setattr(obj, attr.name, value)
        return obj

    def declare(self, type_name: str) -> Any:
        """Initial value of a PL/SQL variable of ``type_name``."""
        return plsql_record(type_name)

    def create_type(self, name: str, kind: str, attributes: list[tuple[str, str]] | None,
                    element_type: str | None, max_size: int | None, or_replace: bool) -> None:
        owner, tname = split_qualified(name, self.username, "type name")
        if kind == "OBJECT":
            t = ot.build_object_type(owner, tname, attributes or [], self._catalog)
        else:
            t = ot.build_collection_type(owner, tname, kind, element_type or "", max_size, self._catalog)
        if or_replace:
            self._check_type_unused(t.qualified_name)
        self._ddl_commit()
        self._store.put_catalog_object("TYPE", owner, tname, ot.type_spec(t), replace=or_replace)
        self._catalog.refresh(force=True)

    def drop_type(self, name: str, force: bool = False) -> None:
        owner, tname = split_qualified(name, self.username, "type name")
        self._check_type_unused(f"{owner}.{tname}")
        self._ddl_commit()
        if not self._store.drop_catalog_object("TYPE", owner, tname):
            raise ora(4043, f"{owner}.{tname}")
        self._catalog.refresh(force=True)

    def _check_type_unused(self, qualified_name: str) -> None:
        self._catalog.refresh(force=True)
        for qt in self._store.queue_tables():
            if qt.payload_type == qualified_name:
                raise ora(2303)

    def query(self, sql: str, binds: dict | None) -> tuple[list[str], list[tuple]]:
        self._check_open()
        return self._session.query(sql, binds, self._buffered_in_memory(sql))

    def _buffered_in_memory(self, sql: str) -> list:
        """(queue table, records) of this process's in-memory buffered messages, for a
        query that names an ``AQ$`` view (seed 003: they show there as IN-MEMORY)."""
        text = sql.upper()
        if "AQ$" not in text:
            return []
        pool = existing_pool(self._store)
        if pool is None:
            return []
        by_table: dict[tuple[str, str], tuple] = {}
        for qname, records in pool.in_memory().items():
            q = self._catalog.find_queue(*qname.split(".", 1))
            if q is not None and f"AQ${q.table.name}" in text:   # only the views it names
                key = (q.table.owner, q.table.name)
                by_table.setdefault(key, (q.table, []))[1].extend(records)
        return list(by_table.values())

    def sqlplus_connect(self, user: str | None, password: str | None, as_sysdba: bool = False) -> None:
        """SQL*Plus ``CONNECT user/password``: the session continues as another user
        (the open transaction is committed first, as SQL*Plus does).  ``AS SYSDBA`` is
        operating-system authentication: whoever can open the store's files (or holds
        the server DSN) is SYS, whatever password is typed."""
        name = canonical(user, "user name") if user else DEFAULT_USER
        if as_sysdba:
            name = "SYS"
        else:
            authenticate(self._security, name, password)
        self.commit()
        self._become(name)

    def _become(self, name: str) -> None:
        """Continue as user ``name``, whom the caller has authenticated (SQL*Plus
        CONNECT, or a proxy session: :func:`sluice.security.proxy.proxy_connect`)."""
        with self._lock:
            self._session.close()
            self.username = name
            self._session = self._store.session(name)
            self._authz = Authorizer(self._security, name)
            self._catalog = Catalog(self._store, name)
            self._nav.clear()

    def execute_sql_statement(self, kind: str, text: str) -> Any:
        """SQL other than queries, blocks and types: users and grants; a bare
        ``DBMS_PKG.PROC(...)`` line (as seed 004 prints them) runs as EXEC."""
        if kind in ("CREATE USER", "ALTER USER", "DROP USER", "GRANT", "REVOKE"):
            return UserStatements(self).execute(kind, text)
        body = text.strip().rstrip(";").strip()
        if _BARE_CALL.match(body):
            from . import plsql
            return plsql.execute(self, f"BEGIN {body}; END;")
        raise ora(900)

    # -- internals used by the AQ layer -------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise InterfaceError("DPY-1001: not connected to database", 1001, prefix="DPY")

    def _ddl_commit(self) -> None:
        """Oracle DDL commits the session's open transaction first."""
        if self._session.in_transaction:
            self.commit()

    def _txn_id(self) -> str:
        return self._session.new_transaction_id()

    def _navigation(self, queue: str) -> Navigation:
        """The session's dequeue position in ``queue`` (one per queue, whatever the consumer:
        changing consumer under NEXT_MESSAGE is ORA-25242, seed 003)."""
        nav = self._nav.get(queue)
        if nav is None:
            nav = self._nav[queue] = Navigation()
        return nav

    @contextmanager
    def _waiting(self) -> Iterator[None]:
        """A call that may wait for messages (see :meth:`cancel`); it waits through
        :meth:`_wait_for_messages`."""
        with self._waits_lock:
            self._waits += 1
        try:
            yield
        finally:
            with self._waits_lock:
                self._waits -= 1
                if not self._waits:
                    self._cancelled = False

    def _wait_for_messages(self, since: int, timeout: float) -> None:
        """The store's wait, ended by :meth:`cancel`.  :raises: ORA-01013 once cancelled
        (checked before and after waiting: a cancel that came while the caller looked
        for messages is not missed)."""
        if self._cancelled:
            raise ora(1013)
        self._store.wait_for_messages(since, timeout)
        if self._cancelled:
            raise ora(1013)

    def _savepoint(self) -> tuple:
        """A mark of the transaction and of the dequeue positions, for
        :meth:`_rollback_to_savepoint` (the IDAP servlet gives back what a receive whose
        client has gone took)."""
        with self._lock:
            return (self._session.savepoint(), {k: dataclasses.replace(v) for k, v in self._nav.items()},
                    dict(self._group_first))

    def _rollback_to_savepoint(self, mark: tuple) -> None:
        """Undo the work since ``mark`` (see StoreSession.rollback_to_savepoint) and put the
        dequeue positions back where they were: the messages given back come next again."""
        self._check_open()
        session_mark, nav, group_first = mark
        with self._lock:
            self._session.rollback_to_savepoint(session_mark)
            self._nav.clear()
            self._nav.update((k, dataclasses.replace(v)) for k, v in nav.items())
            self._group_first.clear()
            self._group_first.update(group_first)

    def _transformer(self, name: str) -> Callable[[Any], Any]:
        spec = self._catalog.transformation(name)
        return compile_transformation(spec)


def connect(dsn: str | None = None, user: str | None = None, password: str | None = None,
            mode: int = AUTH_MODE_DEFAULT, *, pool: Any = None, pool_alias: str | None = None,
            conn_class: type | None = None, params: Any = None, **kwargs: Any) -> Connection:
    """Open a connection: ``sluice.connect("sqlite:///app.db", user="scott", password="…")``;
    ``mode=sluice.AUTH_MODE_SYSDBA`` connects as SYS by operating-system authentication.

    Every keyword of python-oracledb's ``oracledb.connect()`` is taken: see
    :mod:`sluice.connect_params` for which are used, ignored (with a warning) or refused;
    ``pool=`` / ``pool_alias=`` acquire from a :func:`sluice.create_pool` pool."""
    from .connect_params import ConnectSpec, resolve_positional
    dsn, user, password = resolve_positional(dsn, user, password)
    kwargs.update(user=user, password=password, mode=mode or None)
    if pool is not None or pool_alias is not None:
        from .pool import acquire_from
        kwargs.pop("mode")
        return acquire_from(pool, pool_alias, **kwargs)
    return ConnectSpec(dsn, params, kwargs).open(conn_class)
