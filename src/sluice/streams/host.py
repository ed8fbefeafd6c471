"""The process host: runs the enabled Streams processes of a store, each exactly once.

DESIGN.md section 7, "Processes": capture processes (and, as they are built, propagation
schedules and apply processes) are rows in the catalog plus code; one host runs the
enabled ones, each exactly once across hosts, restarts them on failure, and obeys the
DBMS_* procedures -- which only change catalog state -- within a second.  Oracle runs
them inside the instance (seed 003_2d8b77b6a147e3d3.txt "Queue Monitor Coordinator";
seed 001_0cd730aa595c4170.txt "Propagation Jobs"); Sluice runs them in ``sluice run``,
or in-process::

    with Host(lambda: sluice.connect(dsn)) as host:   # start() … stop()
        ...

**What runs.**  The kinds registered in :mod:`.hosting` (capture processes, propagation
schedules; apply to come); each kind lists its enabled processes.  The host re-lists them
whenever the store's catalog version moves (a number in memory on both backends: a shared
page on SQLite, NOTIFY on PostgreSQL, so polling it every ``poll`` seconds costs nothing)
and every ``takeover`` seconds anyway.

**Exactly once.**  Before running a process the host takes its lease
(:mod:`sluice.store.leases`: a PostgreSQL session-level advisory lock on a connection of
the host's own, or an OFD lock beside an SQLite file); a host that dies loses its leases
with its sessions, and the other hosts, which try to take the leases of enabled processes
nobody runs every ``takeover`` seconds, take them over.  A host whose lease session is lost
stops what it runs before taking anything again; until it has, its copy and the new one
may both run for a moment, and each process's position write is the fence (capture commits
a batch only if CAPTURED_SCN is still what it read).  ``sluice pipeline run`` takes the same
lease of the process it runs on Spark (:mod:`sluice.pipeline.lease`), so a host skips it
meanwhile as it skips another host's.

**Each process** runs in a thread of its own (``sluice-capture-CAP1``) on a connection of
its own, and logs as ``sluice.capture.CAP1``.  When the catalog stops wanting it (STOP_,
DROP_) the host asks it to stop: it finishes its batch and returns.  When it fails:

* a failure the process recorded as its state (capture ABORTED, ERROR_MESSAGE set) leaves
  it disabled -- the host does not restart it until START_ enables it again (Oracle's
  semantics);
* any other exception is a crash of the host's worker: while the catalog still wants the
  process, it is restarted after ``backoff[0]`` seconds, doubling up to ``backoff[1]``
  (the count starts again after a run that lasted ``backoff[1]``), each crash logged with
  its traceback and shown in V$STREAMS_HOSTED (STATE 'WAITING TO RESTART', RESTARTS,
  ERROR_MESSAGE).  The host keeps the lease meanwhile.  After ``max_crashes`` (16, as
  Oracle disables a propagation schedule after 16 failures) in a row the host records the
  process ABORTED with the last error (the kind's ``abort``), and it waits for START_.

**Stopping** (:meth:`Host.stop`; ``sluice run`` on SIGTERM or SIGINT) asks every process
to stop, waits up to ``stop_timeout`` seconds for each to finish its batch, then lets the
leases go.

**The heap** (``freeze_heap``, which ``sluice run`` sets: the host owns that process).  A
process's batch makes thousands of LCRs, changes and queue records that live until its
commit, so they outlive the cycle collector's young generations and set off full
collections, each walking every object of the process -- modules, catalog, sessions.
Measured on seed 001's bench (bench/RESULTS.md, issue 15, cap15): 5-9 us of the capture's
~50 us of CPU per row, and ~10 us of the apply's.  So a second after it launches processes
the host collects once and freezes what is alive (:func:`gc.freeze`: reference counting
still frees those objects; only the cycle collector stops walking them), and unfreezes at
its stop.  A library user's own process is left alone unless they ask.

The time manager (:mod:`sluice.store.timemgr`) and the notification dispatcher
(:mod:`sluice.aq.notify.dispatcher`) are not hosted: they start with every store in every
process and are safe to run in many at once (each item they handle is claimed with a row
lock or a lease of its own), so they need no exactly-once host.
"""

from __future__ import annotations

import gc
import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import DatabaseError
from ..store.leases import Leases, open_leases
from .hosting import ProcessKind, kinds as registered_kinds

if TYPE_CHECKING:
    from ..connection import Connection

__all__ = ["Host"]

log = logging.getLogger("sluice.host")

# the rows of V$STREAMS_HOSTED; a pipeline running a process on Spark writes its own too
# (sluice.pipeline.lease: STATE 'RUNNING ON SPARK')
HOSTED_RECORD = """INSERT INTO SLUICE_STREAMS_HOSTED (PROCESS_TYPE, PROCESS_NAME, HOST_NAME, OS_PID,
    HOST_ID, STATE, STARTUP_TIME, RESTARTS, ERROR_MESSAGE) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (PROCESS_TYPE, PROCESS_NAME) DO UPDATE SET HOST_NAME = excluded.HOST_NAME,
    OS_PID = excluded.OS_PID, HOST_ID = excluded.HOST_ID, STATE = excluded.STATE,
    STARTUP_TIME = excluded.STARTUP_TIME, RESTARTS = excluded.RESTARTS,
    ERROR_MESSAGE = excluded.ERROR_MESSAGE"""
_FORGET = "DELETE FROM SLUICE_STREAMS_HOSTED WHERE PROCESS_TYPE = ? AND PROCESS_NAME = ?"
HOSTED_FORGET_MINE = _FORGET + " AND HOST_ID = ?"


@dataclass(eq=False)
class _Hosted:
    """A process whose lease this host holds."""

    kind: ProcessKind
    name: str
    log: logging.Logger
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    done: bool = False                   # the current run has ended (set by its thread)
    error: Exception | None = None       # how it ended
    disabled: bool = False               # stopped because the catalog no longer enables it
    started: float = 0.0                 # monotonic time of the current run
    restarts: int = 0                    # crashes in a row
    restart_at: float | None = None      # monotonic time of the next run, after a crash

    @property
    def key(self) -> tuple[str, str]:
        return self.kind.name, self.name


class Host:
    """Runs the enabled Streams processes of the store ``connect()`` opens sessions on.

    ``connect``: a function returning a new :class:`sluice.Connection` (one for the host,
    one per process run); ``kinds``: the process kinds to run (default: every kind
    registered in :mod:`.hosting`)."""

    def __init__(self, connect: Callable[[], "Connection"], *, kinds: Iterable[ProcessKind] | None = None,
                 poll: float = 0.1, takeover: float = 1.0, backoff: tuple[float, float] = (1.0, 60.0),
                 max_crashes: int = 16, stop_timeout: float = 60.0, freeze_heap: bool = False) -> None:
        self._connect = connect
        self.kinds = list(kinds) if kinds is not None else registered_kinds()
        self.poll, self.takeover, self.backoff, self.stop_timeout = poll, takeover, backoff, stop_timeout
        self.max_crashes = max_crashes
        self.freeze_heap = freeze_heap
        self._settle_at: float | None = None  # when to freeze the heap (after launches)
        self.host_name = socket.gethostname()
        self.pid = os.getpid()
        self.host_id = uuid.uuid4().hex
        self.clean = True                     # every process stopped within stop_timeout
        self._hosted: dict[tuple[str, str], _Hosted] = {}
        self._lock = threading.Lock()         # _hosted, read by running() from other threads
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Connection | None = None
        self._leases: Leases | None = None
        self._kind_errors: dict[str, str] = {}   # the kinds whose listing fails, logged once

    # -- life cycle ------------------------------------------------------------------------
    def start(self) -> "Host":
        """Open the host's session and leases (raising the store's error now) and start."""
        if self._thread is not None:
            return self
        self._conn = self._connect()
        try:
            self._leases = open_leases(self._conn.context.store)
        except BaseException:
            self._conn.close()
            raise
        self._thread = threading.Thread(target=self._supervise, name=f"sluice-host-{self.host_id[:8]}",
                                        daemon=True)
        self._thread.start()
        log.info("host %s (%s pid %d) started: %s", self.host_id[:8], self.host_name, self.pid,
                 ", ".join(k.name for k in self.kinds) or "no process kinds")
        return self

    def stop(self) -> bool:
        """Stop every process (each finishes its batch) and let the leases go; False when
        one did not stop within ``stop_timeout`` seconds."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        return self.clean

    def __enter__(self) -> "Host":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def running(self) -> list[tuple[str, str]]:
        """``(kind, name)`` of the processes running here now."""
        with self._lock:
            return sorted(h.key for h in self._hosted.values() if h.thread is not None and not h.done)

    # -- the supervisor thread ---------------------------------------------------------
    def _supervise(self) -> None:
        version: int | None = None
        next_scan = retry_at = 0.0
        last_error = None
        store = self._conn.context.store
        try:
            while not self._stopping.is_set():
                self._wake.clear()
                try:
                    self._reap()
                    now = time.monotonic()
                    current = store.catalog_version()
                    if (current != version or now >= next_scan) and now >= retry_at:
                        version, next_scan = current, now + self.takeover
                        self._reconcile()
                        last_error = None
                    self._restart_due()
                    self._settle_heap(now)
                except Exception as e:   # the store away for a while, a kind's listing failing:
                    #                      again at the next scan, logged once while it lasts
                    if repr(e) != last_error:
                        log.warning("host %s: %s (trying again every %.1f s)", self.host_id[:8], e,
                                    self.takeover, exc_info=not isinstance(e, DatabaseError))
                    last_error = repr(e)
                    next_scan = retry_at = time.monotonic() + self.takeover
                self._wake.wait(self.poll)
        finally:
            self._shutdown()

    def _wanted(self, kinds: Iterable[ProcessKind]) -> set[tuple[str, str]]:
        return {(k.name, name) for k in kinds for name in k.enabled(self._conn)}

    def _reconcile(self) -> None:
        """Obey the catalog: stop what it no longer wants, take the leases of what nobody runs."""
        if not self._leases.alive():
            self._lose_leases()
            return
        wanted, failed = set(), set()
        for kind in self.kinds:      # one kind's listing failing leaves the others running
            try:
                wanted |= self._wanted([kind])
                self._kind_errors.pop(kind.name, None)
            except Exception as e:
                failed.add(kind.name)
                if self._kind_errors.get(kind.name) != repr(e):
                    log.warning("host %s: listing the %s processes: %s (its processes keep "
                                "running; trying again every %.1f s)", self.host_id[:8], kind.name, e,
                                self.takeover, exc_info=not isinstance(e, DatabaseError))
                self._kind_errors[kind.name] = repr(e)
        for key, h in list(self._hosted.items()):
            if key not in wanted and key[0] not in failed and not h.stop.is_set():
                h.log.info("no longer enabled: stopping")
                h.disabled = True
                h.stop.set()
        by_name = {k.name: k for k in self.kinds}
        for kind_name, name in sorted(wanted - set(self._hosted)):
            if self._stopping.is_set():
                return
            if self._leases.acquire(kind_name, name):
                kind = by_name[kind_name]
                h = _Hosted(kind, name, logging.getLogger(f"{kind.logger}.{name}"))
                with self._lock:
                    self._hosted[h.key] = h
                self._launch(h)
        self._tidy(wanted)

    def _settle_heap(self, now: float) -> None:
        """Freeze the heap once the processes launched a second ago have started (module
        docstring, "The heap")."""
        if self._settle_at is not None and now >= self._settle_at:
            self._settle_at = None
            gc.collect()
            gc.freeze()
            log.debug("host %s: heap frozen (%d objects)", self.host_id[:8], gc.get_freeze_count())

    def _launch(self, h: _Hosted) -> None:
        h.done, h.error, h.restart_at, h.started = False, None, None, time.monotonic()
        if self.freeze_heap:
            self._settle_at = h.started + 1.0
        h.disabled = False
        self._record(h, "RUNNING")
        h.thread = threading.Thread(target=self._work, args=(h,), daemon=True,
                                    name=f"sluice-{h.kind.name.lower()}-{h.name}")
        h.log.info("started on %s (pid %d)%s", self.host_name, self.pid,
                   f", restart {h.restarts}" if h.restarts else "")
        h.thread.start()

    def _work(self, h: _Hosted) -> None:
        """One run of a process, in its own thread and session."""
        conn = None
        try:
            conn = self._connect()
            h.kind.run(conn, h.name, h.stop)
        except Exception as e:   # judged by the supervisor (_reap)
            h.error = e
        finally:
            if conn is not None:
                try:
                    conn.close()
                except Exception as e:   # noqa: BLE001  (the run's outcome matters, not this)
                    h.log.warning("closing its session: %s", e)
            h.done = True
            self._wake.set()

    def _reap(self) -> None:
        """Decide about the runs that ended: done, or a crash to restart."""
        for h in list(self._hosted.values()):
            if h.thread is None or not h.done:
                continue
            error = h.error
            # a run that failed and was disabled meanwhile (it recorded ABORTED itself, and the
            # catalog scan saw that before this reap) ended by its error, not by the stop
            asked = error is None or self._stopping.is_set() or (h.stop.is_set() and not h.disabled)
            enabled = not asked and h.key in self._wanted([h.kind])   # may raise: reaped next time
            crashes = 1 if time.monotonic() - h.started >= self.backoff[1] else h.restarts + 1
            give_up = enabled and h.kind.abort is not None and crashes >= self.max_crashes
            if give_up:                  # recorded first: if the store fails, reaped next time
                h.kind.abort(self._conn, h.name, error)
            h.thread.join()
            h.thread = None
            if asked:
                if error is not None:
                    h.log.warning("stopped: %s", error)
                else:
                    h.log.info("stopped")
                self._let_go(h)
            elif not enabled:
                # the process recorded its failure (ABORTED): it waits for START_ again
                h.log.error("ended: %s (not restarted: no longer enabled)", error)
                self._let_go(h)
            elif give_up:
                h.log.error("crashed %d times in a row (%s: %s): ABORTED, not restarted until "
                            "START_ again", crashes, type(error).__name__, error, exc_info=error)
                self._let_go(h)
            else:
                h.restarts = crashes    # a run that lasted backoff[1] began a new series
                delay = min(self.backoff[0] * 2 ** (h.restarts - 1), self.backoff[1])
                h.restart_at = time.monotonic() + delay
                h.log.error("crashed (%s: %s); restarting in %.1f s (crash %d in a row)",
                            type(error).__name__, error, delay, h.restarts, exc_info=error)
                self._record(h, "WAITING TO RESTART", f"{type(error).__name__}: {error}")

    def _restart_due(self) -> None:
        now = time.monotonic()
        for h in list(self._hosted.values()):
            if h.thread is None and h.restart_at is not None:
                if h.stop.is_set():             # disabled while waiting to restart
                    h.log.info("stopped")
                    self._let_go(h)
                elif now >= h.restart_at:
                    self._launch(h)

    def _let_go(self, h: _Hosted) -> None:
        """Forget the process: its V$STREAMS_HOSTED row first, then the lease."""
        with self._lock:
            self._hosted.pop(h.key, None)
        try:
            self._write(HOSTED_FORGET_MINE, (*h.key, self.host_id))
        except DatabaseError as e:     # only the view: the next holder overwrites the row
            h.log.warning("forgetting its V$STREAMS_HOSTED row: %s", e)
        finally:
            self._leases.release(*h.key)

    def _tidy(self, wanted: set[tuple[str, str]]) -> None:
        """Rows of V$STREAMS_HOSTED a killed host left for processes nobody wants running
        now: gone once their lease is free (a running host holds it while it stops them)."""
        known = {k.name for k in self.kinds}
        rows = self._read("SELECT PROCESS_TYPE, PROCESS_NAME FROM SLUICE_STREAMS_HOSTED")
        for kind_name, name in rows:
            key = (kind_name, name)
            if kind_name in known and key not in wanted and key not in self._hosted \
                    and self._leases.acquire(*key):
                try:
                    self._write(_FORGET, key)
                finally:
                    self._leases.release(*key)

    def _lose_leases(self) -> None:
        """The lease session is gone: others may take every process over now, so stop them
        all before taking any lease again."""
        log.error("host %s lost its lease session: stopping its processes", self.host_id[:8])
        self._stop_all()
        with self._lock:
            hosted, self._hosted = list(self._hosted.values()), {}
        for h in hosted:
            try:
                self._write(HOSTED_FORGET_MINE, (*h.key, self.host_id))
            except DatabaseError:
                pass   # the store may be what went away: the next holder overwrites the row
        self._leases.reopen()

    def _stop_all(self) -> None:
        for h in self._hosted.values():
            h.stop.set()
        end = time.monotonic() + self.stop_timeout
        for h in list(self._hosted.values()):
            if h.thread is not None:
                h.thread.join(max(0.0, end - time.monotonic()))
                if h.thread.is_alive():
                    self.clean = False
                    h.log.error("did not stop within %.0f s", self.stop_timeout)
                else:
                    h.thread = None
                    if h.error is not None:
                        h.log.warning("stopped: %s", h.error)
                    else:
                        h.log.info("stopped")

    def _shutdown(self) -> None:
        self._stop_all()
        if self.freeze_heap:
            gc.unfreeze()               # what was alive then may be garbage by now
        for h in list(self._hosted.values()):
            if h.thread is None:        # one still running keeps its lease until the leases close
                self._let_go(h)
        if self._leases is not None:
            self._leases.close()
        if self._conn is not None:
            try:
                self._conn.close()
            except DatabaseError as e:
                log.warning("host %s: closing its session: %s", self.host_id[:8], e)
        log.info("host %s stopped", self.host_id[:8])

    # -- V$STREAMS_HOSTED --------------------------------------------------------------------
    def _record(self, h: _Hosted, state: str, error: str | None = None) -> None:
        try:
            self._write(HOSTED_RECORD, (*h.key, self.host_name, self.pid, self.host_id, state, time.time(),
                                  h.restarts, error))
        except DatabaseError as e:     # only the view: the process runs all the same
            h.log.warning("recording it in V$STREAMS_HOSTED: %s", e)

    def _write(self, sql: str, params: tuple) -> None:
        self._conn.context.session.add_commit_work(lambda c: c.execute(sql, params))
        self._conn.commit()

    def _read(self, sql: str) -> list[tuple[Any, ...]]:
        rows = self._conn.context.session.query(sql, None)[1]
        self._conn.rollback()          # no transaction left open between scans
        return rows
