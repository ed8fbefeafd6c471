"""One recent snapshot of a store, shared by everything in a server that watches it.

``/metrics`` scrapes and the dashboard's sampler (issue 17) both want
:func:`~sluice.monitor.snapshot.take` of the same store.  :class:`SnapshotSource` takes
them on a connection of its own and keeps the last one:

- :meth:`SnapshotSource.get` returns the last snapshot when it is at most ``max_age``
  seconds old (counted from the moment its reading *started*, so every figure in it is at
  least that fresh) — a scrape never triggers a reading when a fresh one exists;
- at most one reading is in flight: callers arriving while one runs wait for it and all
  get its result (or its error) — N concurrent scrapes cost one reading, not N;
- a failed reading drops the connection (the next reading reconnects) and is not kept.

So whatever the number of scrapers and browsers, the store sees at most one reading per
``max_age`` seconds from a server, and no answer is older than ``max_age`` plus the time
of one reading.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from . import snapshot as snapshots
from .snapshot import Snapshot

DEFAULT_MAX_AGE = 1.0     # seconds: a Prometheus scrape every second still sees every second


class _Reading:
    """One reading: when it started, and (once ``done``) its snapshot or error."""

    __slots__ = ("started", "done", "snapshot", "error")

    def __init__(self, started: float) -> None:
        self.started = started
        self.done = threading.Event()
        self.snapshot: Snapshot | None = None
        self.error: BaseException | None = None


class SnapshotSource:
    """Snapshots of one store through a connection of its own (``connect()`` opens it,
    again after a failure), shared as the module docstring says.  ``max_age``: seconds a
    snapshot is served for (0: a new reading per call, unless one is in flight)."""

    def __init__(self, connect: Callable[[], Any], max_age: float = DEFAULT_MAX_AGE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_age < 0:
            raise ValueError("max_age is a number of seconds, 0 or more")
        self._connect = connect
        self._conn: Any = None
        self._conn_lock = threading.Lock()      # the connection: one user at a time
        self._state = threading.Lock()          # _latest / _inflight
        self._latest: _Reading | None = None
        self._inflight: _Reading | None = None
        self.max_age = max_age
        self.clock = clock
        self.readings = 0           # readings taken
        self.joined = 0             # calls that waited for a reading in flight instead of reading
        self.last_seconds = 0.0     # wall seconds the last reading took

    def connection(self) -> Any:
        """The source's connection (opened on first use)."""
        with self._conn_lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn

    def get(self, max_age: float | None = None) -> Snapshot:
        """A snapshot at most ``max_age`` (default: the source's) seconds old: the last one,
        the one in flight, or a new one read now."""
        limit = self.max_age if max_age is None else max_age
        with self._state:
            now = self.clock()
            latest = self._latest
            if latest is not None and now - latest.started <= limit:
                return latest.snapshot            # type: ignore[return-value]
            reading = self._inflight
            mine = reading is None
            if mine:
                reading = self._inflight = _Reading(now)
            else:
                self.joined += 1
        assert reading is not None
        if mine:
            self._read(reading)
        else:
            reading.done.wait()
        if reading.error is not None:
            raise reading.error
        return reading.snapshot                   # type: ignore[return-value]

    def take(self) -> Snapshot:
        """A snapshot no older than the source's ``max_age`` (:meth:`get`)."""
        return self.get()

    def _read(self, reading: _Reading) -> None:
        try:
            conn = self.connection()
            with self._conn_lock:
                started = time.perf_counter()
                try:
                    reading.snapshot = snapshots.take(conn)
                    conn.commit()          # no transaction left open between readings
                except BaseException:
                    self._drop()
                    raise
                self.last_seconds = time.perf_counter() - started
                self.readings += 1
        except BaseException as e:
            reading.error = e
        finally:
            with self._state:
                self._inflight = None
                if reading.error is None:
                    self._latest = reading
            reading.done.set()

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.close()
        except Exception:     # already broken: what matters is the next reading reconnects
            pass

    def close(self) -> None:
        with self._conn_lock:
            self._drop()
        with self._state:
            self._latest = None
