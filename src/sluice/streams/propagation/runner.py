"""The propagation process of a site: runs its schedules (seed 001 "Propagation Jobs").

``PropagationRunner(conn).run_once()`` runs every schedule that is due now, each until
its source has nothing more for its destination; ``run(stop)`` does so until ``stop``
is set, waking when a message is committed to the store (latency 0: at once), when a
schedule's latency has passed since its last run (a propagation sees what another
process enqueued within ``latency`` seconds), when a window opens or a back-off ends.
The process host (:mod:`sluice.streams.host`) runs it like this; tests run it in
process, with a clock of their own for windows and back-off.

The runner's connection is the propagating session: it dequeues from the sources, and
destination queues of its own site are enqueued in the same transaction.  Sessions on
other stores (as their link's user) are opened with ``connect(dsn, user, password)`` —
by default a new connection of the same class as ``conn``: this package sits below the
session layer and does not import it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any, Callable

from ...aq.buffered import existing_pool
from . import schedules as sched
from .job import JobEnv, RunResult, run_schedule
from .links import resolve_link
from .sites import Connect, HttpSite, StoreSite, ThisSite


class PropagationRunner:
    """Runs the propagation schedules of the site ``conn`` is a session of."""

    def __init__(self, conn: Any, clock: Callable[[], float] = time.time, connect: Connect | None = None,
                 batch_size: int = 500, process_name: str = "J000",
                 only: tuple[str, str, str] | None = None) -> None:
        """``only``: run that schedule alone (a host runs each schedule as a process of
        its own; ``(qschema, qname, destination)``)."""
        self.conn = conn
        self.only = only
        self.clock = clock
        self._connect = connect or (lambda dsn, user, password: type(conn)(dsn, user=user, password=password))
        self.batch_size = batch_size
        self.process_name = process_name
        self._sites: dict[tuple[str, str, str, str | None], Any] = {}
        self._last: dict[tuple[str, str, str], float] = {}
        self.last_results: dict[tuple[str, str, str], RunResult] = {}
        self._woken = False     # a commit woke run(): what is due runs now, within its latency
        self._spares: list[Any] = []    # more source sessions, for pipelined HTTP batches

    # -- destinations --------------------------------------------------------------
    def _destination(self, s: sched.Schedule) -> Any:
        """The destination of ``s``; its link is resolved as the source queue's owner
        sees it (seed 001: the owner propagates and must be able to use the link).
        :raises: ORA-02019 when there is no such link."""
        if s.dblink is None:
            return ThisSite(self.conn.context, s.qschema)
        link = resolve_link(self.conn.context.store, s.qschema, s.dblink)
        key = (s.qschema, link.name, link.using, link.username)
        site = self._sites.get(key)
        if site is None or getattr(site, "link", None) != link:
            if site is not None:
                site.close()
            site = HttpSite(link) if link.is_http else StoreSite(link, self._connect)
            self._sites[key] = site
        return site

    def _spare_session(self, i: int) -> Any:
        """The ``i``-th other session of the propagating user on the source store (each
        opened once)."""
        while len(self._spares) <= i:
            ctx = self.conn.context
            self._spares.append(ctx.store.session(ctx.username))
        return self._spares[i]

    def _env(self) -> JobEnv:
        return JobEnv(self.conn, self.clock, self.conn.context.store.global_name(), self._destination,
                      batch_size=self.batch_size, spare=self._spare_session)

    # -- running ------------------------------------------------------------------
    def schedules(self) -> list[sched.Schedule]:
        found = sched.load_all(self.conn.context.session)
        return found if self.only is None else [s for s in found if s.key == self.only]

    def run_once(self, force: bool = False) -> int:
        """Run each schedule that is due (``force``: also those whose latency has not
        passed since their last run); the number of messages propagated."""
        env = self._env()
        now = self.clock()
        total = 0
        for s in self.schedules():
            if not s.due(now):
                continue
            last = self._last.get(s.key)
            if not force and last is not None and s.failures == 0 and now - last < s.latency \
                    and not self._woken:
                continue
            self._last[s.key] = now
            s.process_name = self.process_name
            result = run_schedule(env, s)
            self.last_results[s.key] = result
            total += result.messages
        self._woken = False
        return total

    def next_wake(self) -> float | None:
        """When a schedule next needs a run (None: none will)."""
        now = self.clock()
        times = []
        for s in self.schedules():
            at = s.wake_at(now)
            if at is None:
                continue
            last = self._last.get(s.key)
            if at <= now and last is not None and s.failures == 0:
                at = last + s.latency
            times.append(at)
        return min(times) if times else None

    def run(self, stop: threading.Event, idle: float = 1.0) -> None:
        """Run until ``stop`` is set: after each pass, wait for a commit to the store, the
        next due schedule, or ``idle`` seconds (catalog changes are seen within that)."""
        store = self.conn.context.store
        while not stop.is_set():
            if self.only is not None and not any(not s.disabled for s in self.schedules()):
                return          # unscheduled or disabled: the host lets this process go
            pool = existing_pool(store)     # a buffered enqueue wakes only its watchers
            with pool.watching() if pool is not None else contextlib.nullcontext():
                seen = store.change_counter()
                moved = self.run_once()
                if moved:
                    continue
                wake = self.next_wake()
                timeout = idle if wake is None else max(0.0, min(idle, wake - self.clock()))
                if timeout > 0 and not stop.is_set():
                    store.wait_for_messages(seen, timeout)
                    self._woken = store.change_counter() != seen

    def close(self) -> None:
        for site in self._sites.values():
            site.close()
        self._sites.clear()
        spares, self._spares = self._spares, []
        for spare in spares:
            spare.rollback()
            spare.close()


# -- as a process of the host (sluice.streams.hosting) ----------------------------------------
def process_name(s: sched.Schedule) -> str:
    """A schedule's name as a hosted process: ``SCHEMA.QUEUE=>DESTINATION``."""
    return f"{s.qschema}.{s.qname}=>{s.destination}"


def hosted_schedules(conn: Any) -> list[str]:
    """The schedules a host should run: every one not disabled."""
    return [process_name(s) for s in sched.load_all(conn.context.session) if not s.disabled]


def run_hosted(conn: Any, name: str, stop: threading.Event) -> None:
    """Run the schedule ``name`` on ``conn`` until ``stop``, or until it is unscheduled or
    disabled (then the host lets it go)."""
    source, _, destination = name.partition("=>")
    qschema, _, qname = source.partition(".")
    runner = PropagationRunner(conn, only=(qschema, qname, destination), process_name=name)
    try:
        runner.run(stop)
    finally:
        runner.close()

