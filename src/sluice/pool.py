"""python-oracledb's connection pool: ``sluice.create_pool(...)``, ``pool.acquire()``,
``pool.release(conn)``, ``with pool.acquire() as conn:``.

The pool keeps open connections (sessions on the store) and lends them out.  What
``acquire()`` returns is a :class:`PooledConnection`: a ``sluice.Connection`` that
works on one of the pool's sessions until it is released (``pool.release(conn)``,
``conn.close()``, the end of a ``with`` block, or being garbage-collected); after
that it is unusable (DPY-1001), as in python-oracledb, and the session goes back to
the pool with its open transaction rolled back.

Sizes and waiting follow python-oracledb: ``min`` sessions are opened at once, at
most ``max`` are open; when all are busy ``getmode`` decides — ``POOL_GETMODE_WAIT``
(the default) waits for a release, ``POOL_GETMODE_NOWAIT`` fails at once and
``POOL_GETMODE_TIMEDWAIT`` after ``wait_timeout`` milliseconds (DPY-4005),
``POOL_GETMODE_FORCEGET`` opens one more.  Idle sessions older than ``timeout``
seconds (beyond ``min``) or than ``max_lifetime_session`` seconds are closed when
the pool is next used.  ``homogeneous=False`` pools acquire as other users
(``acquire(user=…, password=…)``).  ``pool_alias`` names the pool for
``sluice.get_pool()`` and ``sluice.connect(pool_alias=…)``.

A pooled connection that is garbage-collected unreleased is handed back without
taking any lock (a finaliser must not wait on one): the pool tidies it up on its
next call.
"""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

from .connect_params import (CONNECT_KEYWORDS, POOL_KEYWORDS, ConnectSpec, PoolParams, check_names,
                             check_used_values)
from .connection import Connection, open_connection
from .errors import ArgumentError, dpy, not_supported
from .names import canonical
from .pool_settings import (DEFAULTS, POOL_GETMODE_FORCEGET, POOL_GETMODE_NOWAIT,  # noqa: F401
                            POOL_GETMODE_TIMEDWAIT, POOL_GETMODE_WAIT, check_pool_values)
from .security.users import authenticate

PURITY_DEFAULT, PURITY_NEW, PURITY_SELF = 0, 1, 2

_named: dict[str, "ConnectionPool"] = {}
_named_lock = threading.Lock()


class _Session:
    """One open connection of the pool; ``user`` None for the pool's own user."""

    __slots__ = ("conn", "user", "opened", "idle_since", "used")

    def __init__(self, conn: Connection, user: str | None) -> None:
        self.conn, self.user, self.used = conn, user, False
        self.opened = self.idle_since = time.monotonic()


class PooledConnection(Connection):
    """A connection lent by a :class:`ConnectionPool` (what ``pool.acquire()`` returns).

    It is a ``sluice.Connection`` whose state lives in the pool's session it was lent:
    every attribute is that session's, until the loan ends."""

    def __init__(self, pool: "ConnectionPool", session: _Session) -> None:   # noqa: D107
        object.__setattr__(self, "_loan", session)
        object.__setattr__(self, "_pool", pool)

    def __getattr__(self, name: str) -> Any:
        session = self.__dict__.get("_loan")
        if session is None:
            raise dpy(1001)
        return getattr(session.conn, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._session_conn(), name, value)

    def _session_conn(self) -> Connection:
        session = self.__dict__.get("_loan")
        if session is None:
            raise dpy(1001)
        return session.conn

    def _settings(self) -> dict[str, Any]:
        return self._session_conn()._settings()

    def close(self) -> None:
        """Give the session back to the pool (python-oracledb: closing a pooled
        connection releases it)."""
        self._pool.release(self)

    def __del__(self) -> None:
        session = self.__dict__.get("_loan")
        if session is not None:   # no lock here: the pool takes it back on its next call
            self.__dict__["_loan"] = None
            self._pool._abandoned.append(session)


class ConnectionPool:
    """python-oracledb's ``ConnectionPool`` over one Sluice store."""

    def __init__(self, dsn: str | None = None, *, params: PoolParams | None = None,
                 cache_name: str | None = None, **kwargs: Any) -> None:
        if params is not None and not isinstance(params, PoolParams):
            raise dpy(2027)
        check_names(kwargs, CONNECT_KEYWORDS | POOL_KEYWORDS)
        merged = dict(params._values) if params is not None else {}
        merged.update({k: v for k, v in kwargs.items() if v is not None})
        pool_values = {k: merged.pop(k) for k in list(merged) if k in POOL_KEYWORDS}
        if params is not None and dsn is None:
            dsn = params.get_connect_string()
        self._spec = ConnectSpec(dsn, None, merged)
        ConnectSpec._check_unused(pool_values, dsn_given=True)   # warns of the ignored ones
        self._settings = check_pool_values(DEFAULTS, pool_values)
        if cache_name is not None and not isinstance(cache_name, str):
            raise dpy(2027, f"pool_alias must be a string, not {type(cache_name).__name__}",
                      cls=ArgumentError)
        self.name = cache_name
        self._cond = threading.Condition(threading.Lock())
        self._idle: list[_Session] = []
        self._lent: dict[int, _Session] = {}     # id(session) -> session
        self._opening = 0
        self._abandoned: collections.deque[_Session] = collections.deque()
        self._open = True
        try:
            for _ in range(self.min):
                self._idle.append(self._new_session(None, None))
        except BaseException:
            self._close_all(self._idle)
            raise
        if cache_name is not None:
            with _named_lock:
                if cache_name in _named:
                    self._close_all(self._idle)
                    raise dpy(2055, cache_name)
                _named[cache_name] = self

    # -- python-oracledb's attributes -----------------------------------------
    def _setting(name: str, settable: bool = False) -> property:   # noqa: N805 (class body helper)
        def get(self: "ConnectionPool") -> Any:
            return self._settings[name]

        def put(self: "ConnectionPool", value: Any) -> None:   # checked as reconfigure() checks
            self.reconfigure(**{name: value})
        return property(get, put if settable else None)

    min = _setting("min")
    max = _setting("max")
    increment = _setting("increment")
    homogeneous = _setting("homogeneous")
    session_callback = _setting("session_callback")
    _conn_class = _setting("connectiontype")
    getmode = _setting("getmode", settable=True)
    timeout = _setting("timeout", settable=True)
    wait_timeout = _setting("wait_timeout", settable=True)
    max_lifetime_session = _setting("max_lifetime_session", settable=True)
    del _setting

    @property
    def dsn(self) -> str:
        return self._spec.dsn

    tnsentry = dsn

    @property
    def username(self) -> str | None:
        return self._spec.user

    @property
    def thin(self) -> bool:
        return True

    @property
    def busy(self) -> int:
        return len(self._lent)

    @property
    def opened(self) -> int:
        return len(self._lent) + len(self._idle) + self._opening

    # -- lending ----------------------------------------------------------------
    def acquire(self, user: str | None = None, password: str | None = None, cclass: str | None = None,
                purity: int = PURITY_DEFAULT, tag: str | None = None, matchanytag: bool = False,
                shardingkey: list | None = None, supershardingkey: list | None = None) -> PooledConnection:
        """Lend a connection (as ``user`` in a heterogeneous pool); see the module's
        docstring for what happens when every session is busy."""
        if shardingkey or supershardingkey:
            raise dpy(3001, "connect parameter shardingkey", "sharded databases")
        check_used_values({"user": user, "password": password})
        key = None
        if user is not None:
            if self.homogeneous:
                raise not_supported("acquire(user=…) from a homogeneous pool: create the pool with "
                                    "homogeneous=False")
            key = canonical(user, "user name")
        session = self._wait_for_session(key)
        fresh = session is None
        try:
            if fresh:
                session = self._new_session(key, password)
            elif key is not None:   # another user's idle session: that user's password still
                authenticate(session.conn.context.security, key, password)
        except BaseException:
            with self._cond:
                if fresh:
                    self._opening -= 1
                else:
                    self._idle.append(session)
                self._cond.notify()
            raise
        with self._cond:
            if fresh:
                self._opening -= 1
            self._lent[id(session)] = session
        handle = PooledConnection(self, session)
        try:
            if not session.used and self.session_callback is not None:
                self.session_callback(handle, tag)
            session.used = True
            if self._spec.on_connect_callback is not None:
                self._spec.on_connect_callback(handle)
        except BaseException:
            self.release(handle)
            raise
        return handle

    def _wait_for_session(self, key: str | None) -> _Session | None:
        """An idle session of ``key``'s, or None with a place reserved to open one."""
        deadline = time.monotonic() + self.wait_timeout / 1000
        with self._cond:
            while True:
                self._check_open()
                self._tidy()
                for i in range(len(self._idle) - 1, -1, -1):
                    if self._idle[i].user == key:
                        return self._idle.pop(i)
                if self.opened < self.max or self.getmode == POOL_GETMODE_FORCEGET:
                    self._opening += 1
                    return None
                if self.getmode == POOL_GETMODE_NOWAIT:
                    raise dpy(4005)
                left = deadline - time.monotonic() if self.getmode == POOL_GETMODE_TIMEDWAIT else 0.5
                if left <= 0:
                    raise dpy(4005)
                # bounded: a loan ended by the garbage collector cannot notify
                self._cond.wait(min(left, 0.5))

    def release(self, connection: Connection, tag: str | None = None) -> None:
        """Take a lent connection back: its transaction is rolled back and the handle
        becomes unusable."""
        with self._cond:
            self._check_open()
        self._loan_of(connection)
        try:
            connection.rollback()   # through the handle: what it did is undone
            failed = False
        except Exception:
            failed = True
        session = self._end_loan(connection)
        if failed:
            self._discard(session)
            return
        with self._cond:
            self._lent.pop(id(session), None)
            session.idle_since = time.monotonic()
            self._idle.append(session)
            self._cond.notify()

    def drop(self, connection: Connection) -> None:
        """Close a lent connection's session instead of keeping it."""
        self._discard(self._end_loan(connection))

    def close(self, force: bool = False) -> None:
        """Close the pool and its sessions; with connections still lent, DPY-1005
        unless ``force``."""
        with self._cond:
            self._check_open()
            self._tidy()
            if self._lent and not force:
                raise dpy(1005)
            self._open = False
            sessions = self._idle + list(self._lent.values())
            self._idle, self._lent = [], {}
            self._cond.notify_all()
        self._close_all(sessions)
        if self.name is not None:
            with _named_lock:
                if _named.get(self.name) is self:
                    del _named[self.name]

    def reconfigure(self, min: int | None = None, max: int | None = None,  # noqa: A002
                    increment: int | None = None, getmode: int | None = None,
                    timeout: int | None = None, wait_timeout: int | None = None,
                    max_lifetime_session: int | None = None, **ignored: Any) -> None:
        check_names(ignored, frozenset(("max_sessions_per_shard", "soda_metadata_cache",
                                        "stmtcachesize", "ping_interval")))
        settings = check_pool_values(self._settings, {
            "min": min, "max": max, "increment": increment, "getmode": getmode, "timeout": timeout,
            "wait_timeout": wait_timeout, "max_lifetime_session": max_lifetime_session})
        with self._cond:
            self._settings = settings
            self._tidy()
            self._cond.notify_all()

    def __enter__(self) -> "ConnectionPool":
        return self

    def __exit__(self, *exc: object) -> None:
        if self._open:
            self.close(force=True)

    def __del__(self) -> None:   # no lock: sessions close with their own finalisers
        self.__dict__["_open"] = False

    # -- internals ---------------------------------------------------------------
    def _check_open(self) -> None:
        if not self._open:
            raise dpy(1002)

    def _new_session(self, user: str | None, password: str | None) -> _Session:
        """Open a session: the pool's user (``user`` None) as the pool's keywords say, or
        another user's (heterogeneous pools)."""
        spec = self._spec
        if user is None:
            conn = open_connection(spec, self._conn_class, callback=False)
        else:
            conn = (self._conn_class or Connection)(spec.dsn, user=user, password=password, mode=spec.mode)
        return _Session(conn, user)

    def _loan_of(self, connection: Connection) -> _Session:
        if not isinstance(connection, PooledConnection) or connection._pool is not self:
            raise ArgumentError("connection must be a connection this pool lent")
        session = connection.__dict__.get("_loan")
        if session is None:
            raise dpy(1001)
        return session

    def _end_loan(self, connection: Connection) -> _Session:
        session = self._loan_of(connection)
        connection.__dict__["_loan"] = None
        return session

    def _discard(self, session: _Session) -> None:
        with self._cond:
            self._lent.pop(id(session), None)
            self._cond.notify()
        try:
            session.conn.close()
        except Exception:
            pass

    def _tidy(self) -> None:
        """(lock held) Take back abandoned loans; close sessions idle or alive too long."""
        while self._abandoned:
            session = self._abandoned.popleft()
            self._lent.pop(id(session), None)
            try:
                session.conn.rollback()
                session.idle_since = time.monotonic()
                self._idle.append(session)
            except Exception:
                session.conn.close()
        now = time.monotonic()
        keep = []
        for session in self._idle:
            too_old = self.max_lifetime_session and now - session.opened > self.max_lifetime_session
            too_idle = self.timeout and now - session.idle_since > self.timeout and len(keep) >= self.min
            if too_old or too_idle or len(keep) >= self.max:
                session.conn.close()
            else:
                keep.append(session)
        self._idle = keep

    @staticmethod
    def _close_all(sessions: list[_Session]) -> None:
        for session in sessions:
            try:
                session.conn.close()
            except Exception:
                pass


def create_pool(dsn: str | None = None, *, pool_class: type = ConnectionPool, pool_alias: str | None = None,
                params: PoolParams | None = None, **kwargs: Any) -> ConnectionPool:
    """python-oracledb's ``create_pool()``: every connect keyword, plus ``min``, ``max``,
    ``increment``, ``getmode``, ``homogeneous``, ``timeout``, ``wait_timeout``,
    ``max_lifetime_session``, ``session_callback``, ``connectiontype``."""
    if not (isinstance(pool_class, type) and issubclass(pool_class, ConnectionPool)):
        raise dpy(2026)
    return pool_class(dsn, params=params, cache_name=pool_alias, **kwargs)


def get_pool(pool_alias: str) -> ConnectionPool | None:
    """The pool created with ``pool_alias``, or None (always for an alias that is not a
    string: no pool is named so)."""
    if not isinstance(pool_alias, str):
        return None
    with _named_lock:
        return _named.get(pool_alias)


def acquire_from(pool: ConnectionPool | None, pool_alias: str | None, **kwargs: Any) -> PooledConnection:
    """``connect(pool=…)`` / ``connect(pool_alias=…)``: the same as ``pool.acquire(…)``."""
    if pool is not None and pool_alias is not None:
        raise dpy(2014, "pool", "pool_alias")
    if pool_alias is not None:
        pool = get_pool(pool_alias)
        if pool is None:
            raise dpy(2054, pool_alias)
    if not isinstance(pool, ConnectionPool):
        raise ArgumentError("pool must be a sluice.ConnectionPool")
    check_names(kwargs, frozenset(("user", "password", "cclass", "purity", "tag", "matchanytag",
                                   "shardingkey", "supershardingkey")))
    return pool.acquire(**{k: v for k, v in kwargs.items() if v is not None})
