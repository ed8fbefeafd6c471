"""HTTP sessions and the connection pool behind them (seed 004 "User Sessions and
Transactions", "Setting the Connection Pool Size", "Setting the Session Timeout").

An HTTP session (cookie ``JSESSIONID``, as Tomcat names it in the seed) belongs to
one agent and holds at most one connection — one database user's session — with its
open transaction and its dequeue positions, from request to request until
AQXmlCommit/AQXmlRollback.  A session unused for ``timeout`` seconds (default 120,
``setSessionMaxInactiveTime``) is ended: its transaction rolled back, its connection
returned to the pool.

The pool opens connections as database users through the servlet super-user (proxy
sessions, :func:`~sluice.connection.proxy_connect`); at most ``max_size`` (default
50, ``setCacheSize``) are open at once, and idle ones are closed down to ``min_size``
(default 1) after ``timeout`` seconds.  When the pool is full it takes back the
connection of the least recently used session that is idle with no open transaction
(that session merely loses its dequeue position); when every connection carries an
open transaction, the request fails with ORA-24418.

Thread safety: sessions are looked up on the event loop; connections are used in
worker threads, one request of a session at a time (the session's asyncio lock), and
attached or detached under the manager's lock.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..connection import proxy_connect, renew_session
from ..errors import ora

if TYPE_CHECKING:
    from ..connection import Connection

COOKIE = "JSESSIONID"


class ConnectionPool:
    """Connections acting as database users, opened by ``proxy_user``."""

    def __init__(self, dsn: str, proxy_user: str, max_size: int = 50, min_size: int = 1) -> None:
        if max_size < 1 or min_size < 0 or min_size > max_size:
            raise ValueError("pool sizes: 0 <= min_size <= max_size, max_size >= 1")
        self.dsn, self.proxy_user = dsn, proxy_user
        self.max_size, self.min_size = max_size, min_size
        self._idle: dict[str, list[tuple[float, "Connection"]]] = defaultdict(list)
        self._open = 0
        self._lock = threading.Lock()
        self.reclaim: Callable[[], "Connection | None"] = lambda: None

    @property
    def open_count(self) -> int:
        return self._open

    def acquire(self, user: str) -> "Connection":
        """A connection acting as ``user``.  :raises: ORA-24418 when the pool is full of
        connections with open transactions; the proxy errors of proxy_connect."""
        victim = None
        with self._lock:
            idle = self._idle.get(user)
            if idle:
                return idle.pop()[1]
            full = self._open >= self.max_size
            if not full:
                self._open += 1
            else:
                victim = self._pop_oldest_idle()    # one closes, one opens: count unchanged
        if full and victim is None:
            # outside our lock: the session manager's lock is always taken first
            taken = self.reclaim()
            if taken is None:
                raise ora(24418)
            if taken.username == user and not taken.transaction_in_progress:
                _fresh(taken)
                return taken
            victim = taken
        if victim is not None:
            _close(victim)
        try:
            return proxy_connect(self.dsn, user, self.proxy_user)
        except BaseException:
            with self._lock:
                self._open -= 1
            raise

    def _pop_oldest_idle(self) -> "Connection | None":
        oldest = None
        for user, conns in self._idle.items():
            if conns and (oldest is None or conns[0][0] < oldest[0]):
                oldest = (conns[0][0], user)
        if oldest is None:
            return None
        return self._idle[oldest[1]].pop(0)[1]

    def release(self, conn: "Connection", renew: bool = True) -> None:
        """Take a connection back: its open transaction is rolled back first.  ``renew``
        False: what the caller did left nothing in the session a next holder could see —
        enqueues, committed, and no dequeue (AQPropServlet's batches) — so it is not given
        a new database session (a new SQLite connection and its views: 2-3 ms, a fifth of
        a propagated batch's work)."""
        try:
            if conn.transaction_in_progress:
                conn.rollback()
                renew = True
            if renew:
                _fresh(conn)
        except Exception:
            self.discard(conn)
            return
        with self._lock:
            self._idle[conn.username].append((time.monotonic(), conn))

    def discard(self, conn: "Connection") -> None:
        with self._lock:
            self._open -= 1
        _close(conn)

    def shrink(self, idle_for: float) -> None:
        """Close connections idle for ``idle_for`` seconds, keeping ``min_size`` open."""
        cutoff = time.monotonic() - idle_for
        doomed = []
        with self._lock:
            for conns in self._idle.values():
                while conns and conns[0][0] < cutoff and self._open - len(doomed) > self.min_size:
                    doomed.append(conns.pop(0)[1])
            self._open -= len(doomed)
        for conn in doomed:
            _close(conn)

    def close(self) -> None:
        with self._lock:
            conns = [c for lst in self._idle.values() for _, c in lst]
            self._idle.clear()
            self._open -= len(conns)
        for conn in conns:
            _close(conn)


def _fresh(conn: "Connection") -> None:
    """Forget what the last HTTP session left in the connection (dequeue positions,
    cached state): the next one starts a new database session, as a proxy session does."""
    renew_session(conn)


def _close(conn: "Connection") -> None:
    try:
        conn.close()
    except Exception:   # closing must not fail a request or a shutdown
        pass


@dataclass(eq=False)
class HttpSession:
    """One HTTP session: its agent, its connection, its lock."""

    id: str
    agent: str
    last_used: float = field(default_factory=time.monotonic)
    conn: "Connection | None" = None
    busy: bool = False
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class SessionManager:
    """The HTTP sessions of one server, their timeout, and the pool they draw on."""

    def __init__(self, pool: ConnectionPool, timeout: float = 120.0, max_sessions: int = 10_000) -> None:
        self.pool = pool
        self.timeout = timeout
        self.max_sessions = max_sessions
        # least recently used first: reclaiming and expiring look at the front only
        self._sessions: OrderedDict[str, HttpSession] = OrderedDict()
        self._lock = threading.Lock()
        pool.reclaim = self._reclaim

    def __len__(self) -> int:
        return len(self._sessions)

    def any_busy(self) -> bool:
        """True while some session runs a request."""
        with self._lock:
            return any(s.busy for s in self._sessions.values())

    def find(self, session_id: str | None, agent: str) -> HttpSession | None:
        """The live session of that cookie value, if it belongs to ``agent``."""
        s = self._sessions.get(session_id or "")
        return s if s is not None and s.agent == agent else None

    def create(self, agent: str) -> HttpSession:
        """A new session.  Past ``max_sessions``, idle sessions without an open transaction
        are ended first (least recently used first)."""
        freed: list["Connection"] = []
        with self._lock:
            if len(self._sessions) >= self.max_sessions:
                freed = self._evict_locked(len(self._sessions) - self.max_sessions + 1)
            s = HttpSession(secrets.token_urlsafe(24), agent)
            self._sessions[s.id] = s
        for conn in freed:      # no open transaction: nothing to roll back
            self.pool.release(conn)
        return s

    def begin(self, s: HttpSession) -> None:
        """A request of ``s`` starts.  A session the reaper ended meanwhile comes back as a
        new one under the same id (its transaction was rolled back, its connection freed),
        so no connection can be attached to a session nobody tracks."""
        with self._lock:
            s.busy = True
            if s.id not in self._sessions:
                self._sessions[s.id] = s

    def end(self, s: HttpSession) -> None:
        with self._lock:
            s.busy = False
            s.last_used = time.monotonic()
            if s.id in self._sessions:
                self._sessions.move_to_end(s.id)

    def discard(self, s: HttpSession) -> None:
        """Forget a session that never did anything (no connection, no cookie sent)."""
        with self._lock:
            if s.conn is None and not s.busy:
                self._sessions.pop(s.id, None)

    def attach(self, s: HttpSession, user: str) -> "Connection":
        """The session's connection as ``user`` (worker thread): its own if it is that
        user's, else a pooled one (the old one, with no open transaction, goes back)."""
        with self._lock:
            conn = s.conn
            if conn is not None and conn.username == user:
                return conn
            s.conn = None
        if conn is not None:
            self.pool.release(conn)
        new = self.pool.acquire(user)
        with self._lock:
            s.conn = new
        return new

    def _reclaim(self) -> "Connection | None":
        """Detach the connection of the least recently used idle session without an open
        transaction (called by the pool, under no lock of ours)."""
        with self._lock:
            for s in self._sessions.values():
                if s.conn is not None and not s.busy and not _in_txn(s.conn):
                    conn, s.conn = s.conn, None
                    return conn
            return None

    def _evict_locked(self, n: int) -> list["Connection"]:
        idle = []
        for s in self._sessions.values():
            if not s.busy and (s.conn is None or not _in_txn(s.conn)):
                idle.append(s)
                if len(idle) == n:
                    break
        if len(idle) < n:
            raise ora(24418)
        freed = []
        for s in idle:
            self._sessions.pop(s.id, None)
            if s.conn is not None:
                freed.append(s.conn)
                s.conn = None
        return freed

    def expire(self, now: float | None = None) -> int:
        """End the sessions idle past the timeout (their transactions roll back); returns
        how many.  Runs in a worker thread: a rollback may touch the store."""
        now = time.monotonic() if now is None else now
        with self._lock:
            stale = []
            for s in self._sessions.values():
                if now - s.last_used <= self.timeout:
                    break           # the rest were used more recently
                if not s.busy:
                    stale.append(s)
            for s in stale:
                self._sessions.pop(s.id, None)
            conns = [s.conn for s in stale if s.conn is not None]
            for s in stale:
                s.conn = None
        for conn in conns:
            self.pool.release(conn)
        self.pool.shrink(self.timeout)
        return len(stale)

    def close_all(self) -> None:
        """Shutdown: every session ends, every open transaction rolls back."""
        with self._lock:
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for s in sessions:
            if s.conn is not None:
                self.pool.release(s.conn)
                s.conn = None
        self.pool.close()


def _in_txn(conn: "Connection") -> bool:
    try:
        return conn.transaction_in_progress
    except Exception:
        return True     # a broken connection is not handed to anybody else
