"""``SessionContext``: what the packages get from the session they work for.

A :class:`~sluice.connection.Connection` owns one and hands it to every package object
and queue it makes (``conn.context``).  It is the whole contract between a session and
the layers below it -- aq, rules, security, streams -- which never touch the
connection's private state.  The connection assigns the fields (a proxy or ``CONNECT``
changes the user, and with it ``session``, ``username``, ``catalog`` and ``authz``);
packages read them, and keep the context rather than copies of its fields.

Fields:

``store``        the :class:`~sluice.store.base.Store` (the backend; shared by the
                 process's sessions on one DSN)
``session``      this session's :class:`~sluice.store.base.StoreSession` (its transaction)
``username``     the current user (``SCOTT``)
``catalog``      the AQ catalog seen from the user's schema (``sluice.aq.catalog.Catalog``:
                 queues, queue tables, object types, transformations, subscribers)
``security``     the security catalog (``sluice.security.catalog.SecurityCatalog``)
``authz``        the user's authorizer (``sluice.security.authorize.Authorizer``), the one
                 enforcement point
``closed``       True once the connection is closed
``nav``          the session's dequeue positions by queue (see :meth:`navigation`)
``group_first``  per queue, the first message the open transaction enqueued into a
                 transactionally grouped queue
``cond_cache``   compiled dequeue conditions

Hooks (callbacks into the session, passed in by the connection):

``check_open()``         DPY-1001 once the connection is closed
``ddl_commit()``         Oracle's DDL commits the open transaction first
``txn_id()``             the open transaction's id
``navigation(queue)``    the session's dequeue position in ``queue``
``transformer(name)``    the callable of the stored transformation ``name``
``waiting()``            a call that may wait for messages runs inside it, and waits with
``wait_for_messages(since, timeout)``, which ``cancel()`` (``Connection.cancel()``, from
                         any thread) ends with ORA-01013
"""

from __future__ import annotations

import dataclasses

import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .errors import InterfaceError, dpy, ora

if TYPE_CHECKING:
    from .aq.catalog import Catalog
    from .aq.queue import Navigation
    from .security.authorize import Authorizer
    from .security.catalog import SecurityCatalog
    from .store.base import Store, StoreSession


class SessionContext:
    """What aq, rules, security and streams need from a session (see the module)."""

    __slots__ = ("store", "session", "username", "catalog", "security", "authz", "closed", "nav",
                 "nav_at_begin", "group_first", "cond_cache", "_commit", "_compile_transformation",
                 "_new_navigation", "_waits", "_cancelled", "_waits_lock", "lock", "call_timeout",
                 "_deadline")

    def __init__(self, store: Store, session: StoreSession, username: str,
                 security: SecurityCatalog, authz: Authorizer, catalog: Catalog | None, *,
                 commit: Callable[[], None],
                 compile_transformation: Callable[[dict], Callable[[Any], Any]],
                 new_navigation: Callable[[], Navigation]) -> None:
        """``commit`` commits the session's transaction (the connection's ``commit``);
        ``compile_transformation(spec)`` makes a stored transformation callable;
        ``new_navigation()`` a dequeue position at the start of a queue."""
        self.store = store
        self.session = session
        self.username = username
        self.security = security
        self.authz = authz
        self.catalog = catalog
        self.closed = False
        self.nav: dict[str, Navigation] = {}
        # the positions when the transaction began (copied at its first dequeue): a rollback
        # puts them back, as rolling back to a savepoint does (connection.rollback_to_savepoint)
        self.nav_at_begin: dict[str, Navigation] | None = None
        self.group_first: dict[str, Any] = {}
        self.cond_cache: dict = {}
        self._commit = commit
        self._compile_transformation = compile_transformation
        self._new_navigation = new_navigation
        self._waits = 0                 # calls of this session waiting for messages
        self._cancelled = False         # cancel() was called during such a wait
        self._waits_lock = threading.Lock()
        # python-oracledb's Connection.call_timeout (ms, 0 none): a call waiting for messages
        # longer ends with DPY-4024, having taken nothing; _deadline is the waiting call's
        self.call_timeout = 0
        self._deadline: float | None = None
        # held by each call that uses the session (the connection's calls, a queue's enqueue
        # and dequeue): threads sharing a connection take turns, as python-oracledb's do
        self.lock = threading.RLock()

    def check_open(self) -> None:
        if self.closed:
            raise InterfaceError("DPY-1001: not connected to database", 1001, prefix="DPY")

    def ddl_commit(self) -> None:
        """Oracle DDL commits the session's open transaction first."""
        if self.session.in_transaction:
            self._commit()

    def txn_id(self) -> str:
        return self.session.new_transaction_id()

    def navigation(self, queue: str) -> Navigation:
        """The session's dequeue position in ``queue`` (one per queue, whatever the consumer:
        changing consumer under NEXT_MESSAGE is ORA-25242, seed 003)."""
        if self.nav_at_begin is None:
            self.nav_at_begin = {k: dataclasses.replace(v) for k, v in self.nav.items()}
        nav = self.nav.get(queue)
        if nav is None:
            nav = self.nav[queue] = self._new_navigation()
        return nav

    def transaction_ended(self, rolled_back: bool) -> None:
        """The transaction committed or rolled back: a rollback puts the dequeue positions
        back where they were when it began (the messages it gave back come next again)."""
        if rolled_back and self.nav_at_begin is not None:
            self.nav.clear()
            self.nav.update(self.nav_at_begin)
        self.nav_at_begin = None

    def transformer(self, name: str) -> Callable[[Any], Any]:
        return self._compile_transformation(self.catalog.transformation(name))

    # -- waits that Connection.cancel() ends -----------------------------------------
    @contextmanager
    def waiting(self) -> Iterator[None]:
        """A call that may wait for messages (see :meth:`cancel`); it waits through
        :meth:`wait_for_messages`."""
        with self._waits_lock:
            if not self._waits and self.call_timeout:
                self._deadline = time.monotonic() + self.call_timeout / 1000
            self._waits += 1
        try:
            yield
        finally:
            with self._waits_lock:
                self._waits -= 1
                if not self._waits:
                    self._cancelled = False
                    self._deadline = None

    def wait_for_messages(self, since: int, timeout: float) -> None:
        """The store's wait, ended by :meth:`cancel`.  :raises: ORA-01013 once cancelled
        (checked before and after waiting: a cancel that came while the caller looked
        for messages is not missed)."""
        self.check_waiting()
        deadline = self._deadline
        if deadline is not None:
            timeout = min(timeout, max(deadline - time.monotonic(), 0.0))
        self.store.wait_for_messages(since, timeout)
        self.check_waiting()

    def check_waiting(self) -> None:
        """For a call that waits (inside :meth:`waiting`): :raises: ORA-01013 once
        :meth:`cancel` was called, DPY-1001 once another thread closed the connection,
        DPY-4024 once the call has taken longer than :attr:`call_timeout`."""
        if self._cancelled:
            raise ora(1013)
        deadline = self._deadline
        if deadline is not None and time.monotonic() >= deadline:
            raise dpy(4024, self.call_timeout)
        self.check_open()

    def cancel(self) -> None:
        """End the wait of the call in progress (ORA-01013); without one, nothing."""
        with self._waits_lock:
            if not self._waits:
                return
            self._cancelled = True
        self.store.wake_waiters()
