"""``Connection``: one session with its transaction, as python-oracledb shapes it.

``sluice.connect("sqlite:///app.db")`` returns one.  It hands out queues
(``conn.queue(...)``), message properties (``conn.msgproperties(...)``),
object types (``conn.gettype(...)``), cursors for statements, and the
administrative packages as attributes (``conn.aqadm``, ``conn.aq``,
``conn.transform``): ``DBMS_<PKG>.<PROC>(param => v)`` is
``conn.<pkg>.<proc>(param=v)``.  What those packages get from the session is
``conn.context`` (:class:`sluice.context.SessionContext`), nothing else.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
import weakref
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Callable, Iterator

from . import objtypes as ot
from . import storedpackages, storedunits
from .aq.catalog import Catalog
from .aq.dbms_aq import DbmsAq, plsql_record
from .aq.buffered import existing_pool
from .aq.dbms_aqelm import DbmsAqelm
from .aq.notify.dispatcher import dispatcher_for
from .aq.queue import Navigation, Queue
from .aq.transform import DbmsTransform, compile_transformation
from .charset import check_statement
from .context import SessionContext
from .defaults import defaults
from .errors import DatabaseError, InterfaceError, dpy, ora, uint32_setting
from .model import Agent, MessageProperties
from .names import MAX_IDENTIFIER, canonical, split_qualified
from .rules.adm import RuleAdm
from .rules.evaluate import DbmsRule
from .rules.engine.types import construct_rule_type, is_rule_type
from .security.authorize import Authorizer
from .security.catalog import SecurityCatalog
from .security.proxy import may_proxy
from .security.users import UserStatements, authenticate
from .store import namespace, open_store, reaper, release_store, sequences
from .store.forupdate import ROW_IDENTITY, for_update
from .store.instanceviews import Asker, instance_views
from .store.seqviews import sequence_views
from .store.seqwords import plain_names
from .store.sessionnls import SessionNls, alter_session
from .store.sqlmemory import InMemory
from .store.tableddl import is_table_ddl, table_ddl
from .store.dictviews import dictionary_views
from .store.temptables import committed, temporary_in_use
from .store.viewddl import is_view_ddl, view_ddl, views_in_use
from .streams.adm import StreamsAdm
from .streams.apply import ApplyAdm
from .streams.capture import CaptureAdm, DbmsStreams
from .streams.messaging import DbmsStreamsMessaging
from .streams.propagation import DbmsAqadm, PropagationAdm, create_link, drop_link
from .streams.schemadrop import SchemaDrop
from .version import __version__

if TYPE_CHECKING:
    from .connect_params import ConnectSpec

DEFAULT_USER = "SLUICE"
# Connection.version: the Oracle release whose AQ / Streams Sluice answers as (JSON payloads
# and Transactional Event Queues are 21c and later), not Sluice's own (sluice.__version__)
ORACLE_VERSION = "23.0.0.0.0"
MAX_OPEN_CURSORS = 300      # Oracle's default OPEN_CURSORS; Sluice sets no limit
AUTH_MODE_DEFAULT, AUTH_MODE_SYSDBA = 0, 2   # python-oracledb's values
_BARE_CALL = re.compile(r'^(?:SYS\.)?DBMS_\w+\.\w+\s*\(.*\)$', re.I | re.S)


def _weakly(method: Callable[[], Any]) -> Callable[[], Any]:
    """``method`` of a connection, called through a weak reference: the connection's
    context must not keep it alive (a dropped connection is finalised at once)."""
    ref = weakref.WeakMethod(method)

    def call() -> Any:
        bound = ref()
        if bound is None:
            raise InterfaceError("DPY-1001: not connected to database", 1001, prefix="DPY")
        return bound()
    return call


class _package:
    """A package attribute (``conn.aqadm``): a fresh, stateless package object per access.
    A closed connection has no packages (DPY-1001): checked here, once for every package,
    since not every package checks the session before it changes the catalog."""

    def __init__(self, cls: type) -> None:
        self.cls = cls

    def __get__(self, conn: "Connection | None", owner: type) -> Any:
        if conn is None:
            return self.cls
        conn.context.check_open()
        return self.cls(conn)


def _write_only(name: str) -> property:
    """python-oracledb's write-only session attribute ``name`` (``module``, ``action`` …,
    shown in Oracle's V$SESSION): reading it is AttributeError, setting it needs an open
    connection and a string or None (kept: the session's row of V$SESSION and SYS_CONTEXT
    show it, store/instanceviews.py)."""
    def get(self: "Connection") -> Any:
        raise AttributeError(f"{name} is not readable")

    def put(self: "Connection", value: Any) -> None:
        self.context.check_open()
        if value is not None and not isinstance(value, str):
            raise TypeError(f"expecting string, got {type(value).__name__}")
        self._settings()[name] = value or ""
    return property(get, put, doc=f"python-oracledb's write-only ``{name}``.")


def _kept(name: str) -> property:
    """A python-oracledb attribute Sluice keeps for the session and does not act on."""
    def get(self: "Connection") -> Any:
        self.context.check_open()
        return self._settings()[name]

    def put(self: "Connection", value: Any) -> None:
        self.context.check_open()
        self._settings()[name] = value
    return property(get, put)


def _fixed(value: Any, doc: str) -> property:
    """A read-only python-oracledb attribute whose answer in Sluice is always ``value``."""
    def get(self: "Connection") -> Any:
        self.context.check_open()
        return value
    return property(get, doc=doc)


class Connection:
    """A session on a Sluice store (python-oracledb ``Connection``)."""


    # python-oracledb's: called per column of a cursor's query (see sluice.fetchvars)
    outputtypehandler: Callable | None = None
    inputtypehandler: Callable | None = None      # (sluice.bindtypes)
    _exact_numbers = False      # a cursor's query with a handler: numbers as exact Decimals

    def __init__(self, dsn: str, user: str | None = None, password: str | None = None,
                 mode: int = 0) -> None:
        self.dsn = dsn
        reaper.run_posted()           # close what was dropped before opening more
        store = open_store(dsn)
        try:
            username = canonical(user, "user name") if user else DEFAULT_USER
            security = SecurityCatalog(store)
            if mode & AUTH_MODE_SYSDBA:   # operating-system authentication, as SYS
                username = "SYS"
            else:
                authenticate(security, username, password)
            session = store.session(username)
        except BaseException:
            release_store(store)
            raise
        authz = Authorizer(security, username)
        store.start_time_manager()
        # (a notification's stored procedure needs a session of its own)
        storedunits.opened(store, functools.partial(proxy_connect, dsn))
        # what the packages get from this session (sluice.context); open from here on
        self.context = ctx = SessionContext(store, session, username, security, authz, None,
                                            commit=_weakly(self.commit),
                                            compile_transformation=compile_transformation,
                                            new_navigation=Navigation)
        self._lock = ctx.lock
        # the implicit savepoints of the statements running (statement(): one cell each,
        # taken afresh when the transaction ends inside the statement)
        self._statement_marks: list[list] = []
        self.autocommit = False
        ctx.catalog = Catalog(store, username)
        self._immediate_txn: str | None = None
        if ctx.catalog.any_registrations():   # deliver what is owed (reliable notifications)
            dispatcher_for(store)

    @property
    def username(self) -> str:
        """The session's user (python-oracledb)."""
        return self.context.username

    # The packages hold the connection; made on each access rather than kept, so that a
    # connection and its packages form no reference cycle and a dropped connection is
    # finalised at once by reference counting (not at some later garbage collection).
    aqadm = _package(DbmsAqadm)
    aq = _package(DbmsAq)
    transform = _package(DbmsTransform)
    streams_adm = _package(StreamsAdm)
    capture_adm = _package(CaptureAdm)
    apply_adm = _package(ApplyAdm)
    streams_messaging = _package(DbmsStreamsMessaging)
    propagation_adm = _package(PropagationAdm)
    streams = _package(DbmsStreams)
    aqelm = _package(DbmsAqelm)
    rule_adm = _package(RuleAdm)
    rule = _package(DbmsRule)

    # -- python-oracledb API ------------------------------------------------
    def queue(self, name: str, payload_type: Any = None, *, payloadType: Any = None) -> Queue:  # noqa: N803
        """A queue object for ``name``: ``payload_type`` None/"RAW", "JSON", "XMLTYPE"
        or an object type from :meth:`gettype`."""
        self.context.check_open()
        if payloadType is not None:      # the deprecated name, alone (python-oracledb)
            if payload_type is not None:
                raise dpy(2014, "payloadType", "payload_type")
            payload_type = payloadType
        return Queue(self, name, payload_type)

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
                  *, ipAddress: str | None = None, groupingClass: int | None = None,  # noqa: N803
                  groupingValue: int | None = None, groupingType: int | None = None,  # noqa: N803
                  clientInitiated: bool | None = None, **sluice_extras: Any):  # noqa: N803
        """python-oracledb's ``subscribe`` for AQ (``namespace=SUBSCR_NAMESPACE_AQ``, ``name``
        the queue or ``queue:consumer``); Sluice adds ``location=`` for HTTP/mail/PL/SQL
        and ``grouping_start`` / ``grouping_repeat``.  python-oracledb's deprecated
        camelCase names are taken alone; with the new name too they are DPY-2014."""
        self.context.check_open()
        for old, deprecated, new, value, default in (
                ("ipAddress", ipAddress, "ip_address", ip_address, None),
                ("groupingClass", groupingClass, "grouping_class", grouping_class, 0),
                ("groupingValue", groupingValue, "grouping_value", grouping_value, 0),
                ("groupingType", groupingType, "grouping_type", grouping_type, 1),
                ("clientInitiated", clientInitiated, "client_initiated", client_initiated, False)):
            if deprecated is not None and value != default:
                raise dpy(2014, old, new)
        ip_address = ip_address if ipAddress is None else ipAddress
        grouping_class = grouping_class if groupingClass is None else groupingClass
        grouping_value = grouping_value if groupingValue is None else groupingValue
        grouping_type = grouping_type if groupingType is None else groupingType
        client_initiated = client_initiated if clientInitiated is None else clientInitiated
        from .aq.notify.register import subscribe
        return subscribe(self, namespace, protocol, callback, timeout, operations, port, qos,
                         ip_address, grouping_class, grouping_value, grouping_type, name,
                         client_initiated, **sluice_extras)

    def unsubscribe(self, subscription) -> None:
        self.context.check_open()
        from .aq.notify.register import unsubscribe
        unsubscribe(self, subscription)

    def gettype(self, name: str) -> "ot.DbObjectType":
        """The object type ``name`` (created by ``CREATE TYPE``, or a SYS type)."""
        self.context.check_open()
        return self.context.catalog.type_named(name)

    def createlob(self, lob_type: Any, data: str | bytes | None = None) -> Any:
        """python-oracledb's ``createlob``: a temporary CLOB, NCLOB or BLOB (:mod:`sluice.lobs`)."""
        self.context.check_open()
        from .lobs import create_lob
        return create_lob(lob_type, data)

    def cursor(self, scrollable: bool = False, handle: Any = None) -> "Cursor":
        """A cursor (python-oracledb's ``scrollable``; an OCI ``handle`` is Thick mode's only)."""
        self.context.check_open()
        if handle is not None:
            raise dpy(3001, "cursor(handle=…)", "an OCI statement handle is python-oracledb Thick mode's")
        from .cursor import Cursor
        return Cursor(self, bool(scrollable))

    def fetch_df_all(self, statement: str, parameters: Any = None, arraysize: int | None = None,
                     requested_schema: Any = None) -> Any:
        """python-oracledb's: the query's rows as one Arrow DataFrame (:mod:`sluice.dataframes`)."""
        from .dataframes import fetch_df_all
        return fetch_df_all(self, statement, parameters, arraysize, requested_schema)

    def fetch_df_batches(self, statement: str, parameters: Any = None, size: int | None = None,
                         requested_schema: Any = None) -> Iterator[Any]:
        """python-oracledb's: DataFrames of ``size`` rows each (:mod:`sluice.dataframes`)."""
        from .dataframes import fetch_df_batches
        return fetch_df_batches(self, statement, parameters, size, requested_schema)

    # -- python-oracledb's session attributes ----------------------------------
    # write-only, as python-oracledb's (Oracle shows them in V$SESSION)
    module, action, client_identifier, clientinfo, dbop, econtext_id = map(
        _write_only, ("module", "action", "client_identifier", "clientinfo", "dbop", "econtext_id"))

    def _settings(self) -> dict[str, Any]:
        """python-oracledb's session attributes that Sluice keeps and does not act on (a
        pooled connection's are its session's: PooledConnection)."""
        settings = self.__dict__.get("_client_settings")
        if settings is None:
            settings = self.__dict__["_client_settings"] = {
                "stmtcachesize": 20, "internal_name": None, "external_name": None}  # python-oracledb's
        return settings

    def ping(self) -> None:
        """A round trip to the store (python-oracledb ``ping()``): DPY-1001 when closed, the
        store's error (PostgreSQL: ORA-03113 for a connection lost in a transaction) when
        it cannot answer."""
        self.context.check_open()
        with self._lock:
            self.context.session.query("SELECT 1 FROM DUAL", None, oracle_sql=True)

    def is_healthy(self) -> bool:
        """Whether the connection looks usable, without a round trip (python-oracledb):
        False once closed, or when the store's session knows its connection is lost."""
        try:
            ctx = self.context
        except InterfaceError:       # a pooled connection given back
            return False
        return not ctx.closed and ctx.session.healthy()

    @property
    def current_schema(self) -> str:
        """The schema unqualified names resolve in: the session's user (Sluice has no ALTER
        SESSION SET CURRENT_SCHEMA)."""
        self.context.check_open()
        return self.context.username

    @current_schema.setter
    def current_schema(self, value: str) -> None:
        self.context.check_open()
        if not isinstance(value, str):
            raise TypeError(f"expecting string, got {type(value).__name__}")
        if canonical(value, "schema name") != self.context.username:
            raise dpy(3001, "setting current_schema to another user's schema",
                      "unqualified names always resolve in the session user's schema")

    @property
    def call_timeout(self) -> int:
        """python-oracledb's limit of one call, in milliseconds (0: none).  Sluice's calls
        that last are the waits for messages (a dequeue's ``wait``, DBMS_AQ.LISTEN): one
        waiting longer ends with DPY-4024 having taken nothing, and the connection goes on."""
        self.context.check_open()
        return self.context.call_timeout

    @call_timeout.setter
    def call_timeout(self, value: int) -> None:
        self.context.check_open()
        self.context.call_timeout = uint32_setting(value)

    callTimeout = call_timeout    # noqa: N815 (python-oracledb's deprecated name)

    @property
    def stmtcachesize(self) -> int:
        """python-oracledb's statement cache size (default 20): kept, not used (the stores
        keep their prepared statements themselves)."""
        self.context.check_open()
        return self._settings()["stmtcachesize"]

    @stmtcachesize.setter
    def stmtcachesize(self, value: int) -> None:
        self.context.check_open()
        self._settings()["stmtcachesize"] = uint32_setting(value)

    internal_name = _kept("internal_name")     # python-oracledb's names for logging
    external_name = _kept("external_name")     # distributed transactions
    edition = _fixed(None, "None: Sluice has no editions (``connect(edition=…)`` is refused).")
    ltxid = _fixed(b"", "Transaction Guard's logical transaction id: empty, Sluice has none.")
    max_open_cursors = _fixed(MAX_OPEN_CURSORS, "Oracle's default OPEN_CURSORS (Sluice sets no limit).")
    max_identifier_length = _fixed(MAX_IDENTIFIER, "128 bytes, as Oracle 12.2 and later.")
    thin = _fixed(True, "True: Sluice answers as python-oracledb's Thin mode (no Oracle Client).")
    version = _fixed(ORACLE_VERSION, "The Oracle release Sluice answers as (:data:`ORACLE_VERSION`), "
                                     "as python-oracledb gives the server's; Sluice's own is "
                                     "``sluice.__version__``.")

    warning = None      # python-oracledb's: a warning of connecting (none in Sluice)
    maxBytesPerCharacter = 4    # noqa: N815 (python-oracledb's deprecated constant)

    @property
    def session_id(self) -> int:
        """The session's SID, as V$SESSION shows it (python-oracledb Thin's ``session_id``)."""
        self.context.check_open()
        return self.context.session.sid

    def changepassword(self, old_password: str, new_password: str) -> None:
        """python-oracledb's ``changepassword``: the session user's password, the old one
        checked first (ORA-28008 when wrong)."""
        ctx = self.context
        ctx.check_open()
        try:
            authenticate(ctx.security, ctx.username, old_password)
        except DatabaseError as e:
            if e.code != 1017:
                raise
            raise ora(28008) from None
        self._user_statements().alter_password(ctx.username, new_password)

    def begin(self, format_id: int = -1, transaction_id: str = "", branch_id: str = "") -> None:
        """python-oracledb's ``begin()``: without arguments nothing to do (a transaction
        begins with its first change); a global transaction is DPY-3001."""
        self.context.check_open()
        if format_id != -1:
            self.tpc_begin(format_id)

    def _no_tpc(self, *args: Any, **kwargs: Any) -> Any:
        self.context.check_open()
        raise dpy(3001, "two-phase commit (tpc_*)", "Sluice has no distributed transactions")

    xid = tpc_begin = tpc_commit = tpc_end = tpc_forget = tpc_prepare = tpc_recover = \
        tpc_rollback = prepare = _no_tpc

    @property
    def transaction_in_progress(self) -> bool:
        """True while the session holds uncommitted work or locks (python-oracledb)."""
        self.context.check_open()
        return self.context.session.in_transaction

    def commit(self) -> None:
        ctx = self.context
        ctx.check_open()
        with self._lock:
            try:
                ctx.session.commit()
            except BaseException:
                if not ctx.session.in_transaction:   # the failed COMMIT rolled it back
                    self._transaction_rolled_back()
                raise
            committed(ctx.store, ctx.session)     # SQLite's ON COMMIT DELETE ROWS (store/temptables.py)
            ctx.group_first.clear()
            ctx.transaction_ended(rolled_back=False)
            self._release_buffered(committed=True)
            self._new_statement_marks()

    def rollback(self) -> None:
        ctx = self.context
        ctx.check_open()
        with self._lock:
            ctx.session.rollback()
            self._transaction_rolled_back()

    def _transaction_rolled_back(self) -> None:
        """What a rollback undoes outside the store: group positions, the dequeue
        positions (back to the transaction's start) and the buffered messages taken."""
        ctx = self.context
        ctx.group_first.clear()
        ctx.transaction_ended(rolled_back=True)
        self._release_buffered()
        self._new_statement_marks()

    @contextlib.contextmanager
    def statement(self) -> Iterator[None]:
        """Hook of the statement interpreter: a top-level statement (an anonymous block,
        EXEC, ``callproc``) runs inside it, atomic as Oracle's statements are.  A
        statement that fails (an exception its block did not handle) is rolled back to the
        implicit savepoint taken here — its enqueues discarded, its dequeues given back,
        dequeue positions and group locks as they were (:func:`rollback_to_savepoint`) —
        while the transaction's earlier work stays and the transaction stays open.  A
        COMMIT or ROLLBACK inside it (a DDL-like call's implicit commit included) moves
        the savepoint to that point: what was committed stays.  IMMEDIATE work and
        buffered messages are no part of the transaction: they stay, as after a rollback."""
        cell = [savepoint(self, pipelined=True)]
        self._statement_marks.append(cell)
        try:
            yield
        except Exception as exc:
            self._undo_statement(cell[0], exc)
            raise
        else:
            if not self.context.closed:
                self.context.session.release_savepoint(cell[0][0])
        finally:   # (by identity: two marks may be equal)
            self._statement_marks = [c for c in self._statement_marks if c is not cell]
        # python-oracledb's autocommit commits after each execute(): a top-level block is
        # one, so its work (DML, enqueues) is committed here, once, not statement by statement
        if self.autocommit and not self._statement_marks and not self.context.closed:
            self.commit()

    def _undo_statement(self, mark: tuple, exc: Exception) -> None:
        ctx = self.context
        if ctx.closed:
            return
        try:
            rollback_to_savepoint(self, mark)
        except DatabaseError as e:   # the transaction was lost with the error (ORA-01086 …)
            exc.add_note(f"the statement could not be rolled back to its start: {e}")
            return
        if not ctx.session.in_transaction:   # the statement had begun the transaction
            ctx.transaction_ended(rolled_back=True)

    def _new_statement_marks(self) -> None:
        """The transaction ended inside running statements: their savepoints start anew."""
        for cell in self._statement_marks:
            cell[0] = savepoint(self, pipelined=True)

    def cancel(self) -> None:
        """Break the call in progress (python-oracledb ``Connection.cancel()``), from any
        thread.  Sluice's calls block only where they wait for messages — a dequeue's
        ``wait``, ``DBMS_AQ.LISTEN`` — and such a wait ends at once with ORA-01013, having
        taken nothing.  Without a call waiting, it does nothing."""
        self.context.cancel()

    def _release_buffered(self, committed: bool = False) -> None:
        pool = existing_pool(self.context.store)
        if pool is not None:
            pool.release(self.context, committed)   # the session owns what it locked there

    def close(self) -> None:
        ctx = self.context
        if ctx.closed:
            return
        # closed before the lock is taken: a call of another thread waiting for messages
        # holds it, and ends (DPY-1001) only once it sees the session closed
        ctx.closed = True
        ctx.store.wake_waiters()
        with self._lock:
            try:
                ctx.session.close()
            finally:
                release_store(ctx.store)

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A forgotten connection must not keep its locks, but the collector may run this
        # in a thread holding the very locks close() takes: the reaper thread closes it.
        ctx = getattr(self, "context", None)   # None: __init__ failed before it was open
        if ctx is not None and not ctx.closed:
            reaper.post(self.close)

    # -- hooks of the statement interpreter ----------------------------------
    def package(self, name: str, definer: str | None = None) -> Any:
        """The package object for ``DBMS_<PKG>`` (``SYS.`` prefix allowed), else a stored
        package's (sluice.storedpackages; inside a stored unit of ``definer``, as it sees it)."""
        key = name.upper()
        if key.startswith("SYS."):
            key = key[4:]
        attr = {"DBMS_AQADM": "aqadm", "DBMS_AQ": "aq", "DBMS_TRANSFORM": "transform",
                "DBMS_AQELM": "aqelm"}.get(key)
        if attr is None and key.startswith("DBMS_"):
            attr = key[5:].lower()
        pkg = getattr(self, attr, None) if attr else None
        if pkg is None or attr.startswith("_"):     # a stored package, else seq.NEXTVAL's routines
            pkg = storedpackages.find_package(self, name, definer) or sequences.routines(self.context.store, self.context.username, name,
                                     lambda sql: self.query(sql, {}))
        if pkg is None:
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
        objtype = self.context.catalog.type_named(type_name)
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

    # stored procedures and functions (sluice.storedunits)
    def procedure(self, name: str, definer: str | None = None) -> Any:
        return storedunits.find_unit(self, name, definer)

    def create_unit(self, kind: str, name: str, spec: dict, or_replace: bool) -> None:
        storedunits.create_unit(self, kind, name, spec, or_replace)

    def drop_unit(self, kind: str, name: str) -> None:
        storedunits.drop_unit(self, kind, name)

    # stored packages (sluice.storedpackages)
    def create_package(self, kind: str, name: str, spec: dict, or_replace: bool) -> None:
        storedpackages.create_package(self, kind, name, spec, or_replace)

    def drop_package(self, kind: str, name: str) -> None:
        storedpackages.drop_package(self, kind, name)

    def create_type(self, name: str, kind: str, attributes: list[tuple[str, str]] | None,
                    element_type: str | None, max_size: int | None, or_replace: bool) -> None:
        ctx = self.context
        owner, tname = split_qualified(name, ctx.username, "type name")
        if kind == "OBJECT":
            t = ot.build_object_type(owner, tname, attributes or [], ctx.catalog)
        else:
            t = ot.build_collection_type(owner, tname, kind, element_type or "", max_size, ctx.catalog)
        if or_replace:
            self._check_type_unused(t.qualified_name)
        ctx.ddl_commit()
        namespace.check(ctx.store, owner, tname, (namespace.TYPE,))      # (a table, a sequence …)
        ctx.store.put_catalog_object("TYPE", owner, tname, ot.type_spec(t), replace=or_replace)
        ctx.catalog.refresh(force=True)

    def drop_type(self, name: str, force: bool = False) -> None:
        ctx = self.context
        owner, tname = split_qualified(name, ctx.username, "type name")
        self._check_type_unused(f"{owner}.{tname}")
        ctx.ddl_commit()
        if not ctx.store.drop_catalog_object("TYPE", owner, tname):
            raise ora(4043, f"{owner}.{tname}")
        ctx.catalog.refresh(force=True)

    def _check_type_unused(self, qualified_name: str) -> None:
        self.context.catalog.refresh(force=True)
        for qt in self.context.store.queue_tables():
            if qt.payload_type == qualified_name:
                raise ora(2303)

    def execute_dml(self, sql: str, binds: dict | None, returned: Callable[[list], None] | None = None) -> int:
        """INSERT / UPDATE / DELETE / MERGE on the store's database, in this session's
        transaction; the rows changed.  Changes a synchronous capture captures carry the
        session's DBMS_STREAMS tag.  ``returned`` is called with the rows of a ``RETURNING``
        clause (:mod:`sluice.dmlreturning`) before an autocommit commits them."""
        ctx = self.context
        ctx.check_open()
        check_statement(sql, binds)
        sql = plain_names(sql)                  # "S".NEXTVAL
        ctx.authz.statements.check(sql)         # other schemas' tables and sequences
        self._schema_objects(sql)
        rows: list | None = None if returned is None else []
        with self._lock:
            count = ctx.session.execute_dml(sql, binds, self.streams.get_tag(), rows)
        if returned is not None:
            returned(rows)
        if self.autocommit and not self._statement_marks:    # a block commits at its end
            self.commit()
        return count

    def query(self, sql: str, binds: dict | None) -> tuple[list[str], list[tuple]]:
        self.context.check_open()
        check_statement(sql, binds)
        ctx = self.context
        sql = plain_names(sql)                  # "S".NEXTVAL
        ctx.authz.statements.check(sql)         # other schemas' tables and sequences
        sql = sequence_views(ctx.store, ctx.username, sql, ctx.authz.sees)    # USER_SEQUENCES …
        sql = dictionary_views(ctx.store, ctx.session, ctx.username, sql)    # USER_TABLES, USER_OBJECTS …
        sql = instance_views(sql, self._asker)     # V$VERSION, V$SESSION, NLS_…, SYS_CONTEXT('USERENV', …)
        self._schema_objects(sql)
        locking = for_update(sql)     # SELECT … FOR UPDATE: the rows locked to the transaction's end
        if locking is None:
            return self._query(sql, binds)
        with self.context.session.row_locks(locking) as text:
            columns, rows = self._query(locking.plain if text is None else text, binds)
        return columns, rows if text is not None else []

    def row_identity(self) -> str:
        """Hook of the statement interpreter: the store's name of a row's identity in a user's
        table (WHERE CURRENT OF, :mod:`sluice.store.forupdate`)."""
        return ROW_IDENTITY[self.context.store.dialect]

    def _query(self, sql: str, binds: dict | None) -> tuple[list[str], list[tuple]]:
        return self.context.session.query(sql, binds, self._buffered_in_memory(sql), oracle_sql=True,
                                          decimals=defaults.fetch_decimals or self._exact_numbers)

    def _schema_objects(self, sql: str) -> None:
        """What the objects ``sql`` names need first: a view's compiled form
        (store/viewddl.py), the session's rows of a global temporary table (store/temptables.py)."""
        ctx = self.context
        views_in_use(ctx.store, ctx.session, ctx.username, sql, lambda text: self.query(text, None))
        temporary_in_use(ctx.store, ctx.session, sql)

    def _asker(self) -> Asker:
        """What the instance and session views show of this session (store/instanceviews.py)."""
        ctx = self.context
        return Asker(ctx.store, ctx.session.sid, ctx.username, ctx.session.time_zone, self._settings(),
                     lambda: {*ctx.security.users, "SYS", DEFAULT_USER}, ORACLE_VERSION, __version__,
                     ctx.session.nls)

    def _buffered_in_memory(self, sql: str) -> list:
        """(queue table, records) of this process's in-memory buffered messages, for a
        query that names an ``AQ$`` view (seed 003: they show there as IN-MEMORY)."""
        text = sql.upper()
        buffered_views = "V$BUFFERED_" in text   # they count the in-memory messages too
        if "AQ$" not in text and not buffered_views:
            return []
        pool = existing_pool(self.context.store)
        if pool is None:    # (V$BUFFERED_SUBSCRIBERS' OLDEST_MSGID: of spilled messages)
            return InMemory([], {}, None, always=True) if "V$BUFFERED_SUBSCRIBERS" in text else []
        by_table: dict[tuple[str, str], tuple] = {}
        for qname, records in pool.in_memory().items():
            q = self.context.catalog.find_queue(*qname.split(".", 1))
            if q is not None and (buffered_views or f"AQ${q.table.name}" in text):   # only the views it names
                key = (q.table.owner, q.table.name)
                by_table.setdefault(key, (q.table, []))[1].extend(records)
        if buffered_views:   # and the buffered views' cumulative counts of this process
            return InMemory(by_table.values(), pool.cumulative(), pool.started, pool.subscribers(),
                            always="V$BUFFERED_SUBSCRIBERS" in text)
        return list(by_table.values())

    def session_output(self) -> Any:
        """The session's DBMS_OUTPUT buffer (GET_LINE / GET_LINES read it; off until ENABLE)."""
        buffer = self.__dict__.get("_dbms_output")
        if buffer is None:
            from .plsql.dbmsoutput import SessionOutput     # as plsql.execute: loaded on first use
            buffer = self.__dict__["_dbms_output"] = SessionOutput()
        return buffer

    def session_time_zone(self) -> tzinfo:
        """The session's time zone (ALTER SESSION SET TIME_ZONE), for PL/SQL's CURRENT_DATE."""
        return self.context.session.time_zone.tz

    def session_nls(self) -> SessionNls:
        """The session's NLS settings (ALTER SESSION SET NLS_…), for PL/SQL's conversions."""
        return self.context.session.nls

    def sqlplus_connect(self, user: str | None, password: str | None, as_sysdba: bool = False) -> None:
        """SQL*Plus ``CONNECT user/password``: the session continues as another user
        (the open transaction is committed first, as SQL*Plus does).  ``AS SYSDBA`` is
        operating-system authentication: whoever can open the store's files (or holds
        the server DSN) is SYS, whatever password is typed."""
        name = canonical(user, "user name") if user else DEFAULT_USER
        if as_sysdba:
            name = "SYS"
        else:
            authenticate(self.context.security, name, password)
        self.commit()
        self._become(name)

    def _become(self, name: str) -> None:
        """Continue as user ``name``, whom the caller has authenticated (SQL*Plus
        CONNECT, or a proxy session: :func:`proxy_connect`)."""
        with self._lock:
            ctx = self.context
            ctx.session.close()
            ctx.username = name
            ctx.session = ctx.store.session(name)
            ctx.authz = Authorizer(ctx.security, name)
            ctx.catalog = Catalog(ctx.store, name)
            ctx.nav.clear()

    def _user_statements(self) -> UserStatements:
        """The user and grant SQL of this session; DROP USER … CASCADE drops the objects of
        a user's schema (:mod:`sluice.streams.schemadrop`)."""
        return UserStatements(self, lambda user: SchemaDrop(self, user))

    def execute_sql_statement(self, kind: str, text: str) -> Any:
        """SQL other than queries, blocks and types: users and grants, table DDL
        (:mod:`.store.tableddl`); a bare ``DBMS_PKG.PROC(...)`` line (as seed 004 prints
        them) runs as EXEC."""
        if kind in ("CREATE USER", "ALTER USER", "DROP USER", "CREATE ROLE", "DROP ROLE", "GRANT", "REVOKE"):
            return self._user_statements().execute(kind, text)
        if kind == "SET" and re.match(r"\s*SET\s+ROLE\b", text, re.I):
            return self._user_statements().execute("SET ROLE", text)
        if kind.endswith("DATABASE LINK"):
            (drop_link if kind.startswith("DROP") else create_link)(self.context, text)
            return 0
        if kind == "ALTER DATABASE":
            return self._alter_database(text)
        if kind in ("CREATE SEQUENCE", "ALTER SEQUENCE", "DROP SEQUENCE"):     # (store/sequences.py)
            return sequences.statement(self.context, kind, text)
        if kind == "ALTER SESSION":     # TIME_ZONE (the views' dates, CURRENT_DATE), NLS_… (.store.sessionnls)
            session = self.context.session
            zone, session.nls = alter_session(text, session.nls, session.local_zone)
            if zone is not None:
                session.set_time_zone(zone)
            return 0
        if is_table_ddl(kind):       # CREATE / ALTER / DROP / TRUNCATE TABLE, indexes, COMMENT
            ctx = self.context
            ctx.authz.statements.check(plain_names(text))     # DEFAULT scott.s.NEXTVAL
            return table_ddl(text, ctx.username, ctx.store, ctx.authz.has_system, ctx.ddl_commit,
                             lambda sql: self.query(sql, None))
        if is_view_ddl(kind):        # CREATE [OR REPLACE] [FORCE] VIEW, DROP VIEW
            ctx = self.context
            return view_ddl(kind, text, ctx.username, ctx.store, ctx.session, ctx.authz.has_system, ctx.ddl_commit,
                            lambda sql: self.query(sql, None))
        body = text.strip().rstrip(";").strip()
        if _BARE_CALL.match(body):
            from . import plsql
            return plsql.execute(self, f"BEGIN {body}; END;")
        raise ora(900)

    def _alter_database(self, text: str) -> int:
        """``ALTER DATABASE RENAME GLOBAL_NAME TO dbs1.net`` (DESIGN.md section 7: the
        site's name, which LCRs and propagation carry)."""
        m = re.match(r'^\s*ALTER\s+DATABASE\s+RENAME\s+GLOBAL_NAME\s+TO\s+("[^"]+"|[A-Za-z][\w$#.]*)\s*;?\s*$',
                     text, re.I)
        if not m:
            raise ora(900)
        ctx = self.context
        if not ctx.authz.is_superuser():
            raise ora(1031)
        name = m.group(1)
        ctx.ddl_commit()
        ctx.store.set_global_name(name[1:-1] if name.startswith('"') else name.upper())
        return 0


def open_connection(spec: "ConnectSpec", conn_class: type | None = None,
                    callback: bool = True) -> Connection:
    """A new connection as ``spec`` (``sluice.connect``'s keywords, sorted) asks:
    authenticated, the password changed if ``newpassword`` says so, continued as the
    proxy's client, then (``callback``) handed to ``on_connect_callback``."""
    cls = Connection if conn_class is None else conn_class
    if not (isinstance(cls, type) and issubclass(cls, Connection)):
        raise dpy(2023)
    conn = cls(spec.dsn, user=spec.user, password=spec.password, mode=spec.mode)
    try:
        _prepare(spec, conn, callback)
    except BaseException:
        conn.close()
        raise
    return conn


def _prepare(spec: "ConnectSpec", conn: Connection, callback: bool = True) -> None:
    """The steps after logging on: new password, proxy client, callback."""
    if spec.newpassword is not None:
        conn._user_statements().alter_password(conn.username, spec.newpassword)
    if spec.proxy_user:
        client = canonical(spec.proxy_user, "user name")
        may_proxy(conn.context.security, conn.username, client)
        conn._become(client)
    if callback and spec.on_connect_callback is not None:
        spec.on_connect_callback(conn)


def proxy_connect(dsn: str, client_user: str, proxy_user: str) -> "Connection":
    """A new connection to ``dsn`` acting as ``client_user``, opened by ``proxy_user``.

    python-oracledb spells this ``connect(user="AQADM[OE]", …)``.  The proxy's own
    password is not asked for: the caller authenticated it when it started, and
    whoever holds the DSN is the operating-system-authenticated administrator
    (``AUTH_MODE_SYSDBA``) anyway; what is checked here is the client's consent.

    :raises DatabaseError: as :func:`may_proxy`.
    """
    client, proxy = canonical(client_user, "user name"), canonical(proxy_user, "user name")
    conn = Connection(dsn, mode=AUTH_MODE_SYSDBA)
    try:
        may_proxy(conn.context.security, proxy, client)
        conn._become(client)
    except BaseException:
        conn.close()
        raise
    return conn


def renew_session(conn: Connection) -> None:
    """Give ``conn`` a new database session as the same user: dequeue positions and
    cached state start afresh, as in a new proxy session (the IDAP servlet does this
    between HTTP sessions)."""
    conn._become(conn.username)


def savepoint(conn: Connection, pipelined: bool = False) -> tuple:
    """A mark of ``conn``'s transaction and of its dequeue positions, for
    :func:`rollback_to_savepoint` (the IDAP servlet gives back what a receive whose client
    has gone took)."""
    ctx = conn.context
    with conn._lock:
        return (ctx.session.savepoint(pipelined), {k: dataclasses.replace(v) for k, v in ctx.nav.items()},
                dict(ctx.group_first))


def rollback_to_savepoint(conn: Connection, mark: tuple) -> None:
    """Undo the work since ``mark`` (see StoreSession.rollback_to_savepoint) and put the
    dequeue positions back where they were: the messages given back come next again."""
    ctx = conn.context
    ctx.check_open()
    session_mark, nav, group_first = mark
    with conn._lock:
        ctx.session.rollback_to_savepoint(session_mark)
        ctx.nav.clear()
        ctx.nav.update((k, dataclasses.replace(v)) for k, v in nav.items())
        ctx.group_first.clear()
        ctx.group_first.update(group_first)
