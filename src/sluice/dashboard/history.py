"""The last hour, sampled server-side: one reading every ``interval`` seconds into a ring.

A reading (what :mod:`.view` makes of a monitoring snapshot) carries ``counters`` —
totals that only grow, keyed ``"<series>:<object>"`` (``enq:DBS1.SLUICE.SRC``,
``prop:DBS1.P1``) — and ``gauges`` — values of the moment (``depth:…``, ``lag:…``).
The sampler turns counters into rates (per second, averaged over the last
:data:`RATE_WINDOW` seconds) and keeps,
per sample, the sum of each series' rates and the largest lag: the charts over time.
Queue depths (the cards' sparklines) are kept for the last :data:`SPARK_POINTS`
samples only, so a store with a thousand queues costs kilobytes, not megabytes.

One sampler per server, whatever the number of dashboards open: a browser's poll reads
what the sampler last took and never touches the store (the data path's throughput
must not depend on how many people are watching).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any, Callable

log = logging.getLogger("sluice.dashboard")
HORIZON = 3600.0          # seconds of history kept
SPARK_POINTS = 60         # samples of each queue's depth kept for its sparkline
RATE_SERIES = ("enq", "deq", "capture", "prop", "apply")
RATE_WINDOW = 10.0        # seconds a rate is averaged over (at least two readings)


def series_of(key: str) -> str:
    return key.partition(":")[0]


class History:
    """The ring of samples and the latest reading (thread-safe: one writer, many readers)."""

    def __init__(self, interval: float, horizon: float = HORIZON) -> None:
        self.interval = interval
        self.points: deque[dict] = deque(maxlen=max(2, int(horizon / interval)))
        self.depths: dict[str, deque[int]] = {}
        self.latest: dict[str, Any] | None = None
        self.samples = 0          # readings taken: what a cache of the latest one is keyed by
        # rates are averaged over the readings of the last `window` seconds: a label that
        # shows a two-second spike and then 0 says less than a ten-second average
        self.window = max(RATE_WINDOW, 2 * interval)
        self._previous: deque[tuple[float, dict[str, float]]] = deque()
        self._lock = threading.Lock()

    def add(self, reading: dict[str, Any], now: float) -> None:
        """Record ``reading`` taken at ``now``: its rates (against the reading before), a
        point of the charts, the depths for the sparklines."""
        counters: dict[str, float] = reading.get("counters", {})
        gauges: dict[str, float] = reading.get("gauges", {})
        rates: dict[str, float] = {}
        while len(self._previous) > 1 and self._previous[1][0] <= now - self.window:
            self._previous.popleft()
        if self._previous:
            then, before = self._previous[0]
            elapsed = max(now - then, 1e-6)
            for key, value in counters.items():
                # a counter that went down was reset (a process restarted): no rate for now
                rates[key] = max(0.0, value - before.get(key, value)) / elapsed
        self._previous.append((now, dict(counters)))
        point: dict[str, Any] = {"t": now}
        for series in RATE_SERIES:
            point[series] = round(sum(r for k, r in rates.items() if series_of(k) == series), 3)
        lags = [v for k, v in gauges.items() if series_of(k) == "lag" and v is not None]
        point["lag"] = round(max(lags), 3) if lags else 0.0
        reading = dict(reading, rates={k: round(v, 3) for k, v in rates.items()}, time=now)
        with self._lock:
            self.points.append(point)
            for key, value in gauges.items():
                if series_of(key) == "depth":
                    self.depths.setdefault(key, deque(maxlen=SPARK_POINTS)).append(value)
            for key in [k for k in self.depths if k not in gauges]:   # dropped queues
                del self.depths[key]
            self.latest = reading
            self.samples += 1

    def since(self, t: float) -> list[dict]:
        """The chart points taken after ``t``."""
        with self._lock:
            return [p for p in self.points if p["t"] > t]

    def sparklines(self) -> dict[str, list[int]]:
        with self._lock:
            return {k: list(v) for k, v in self.depths.items()}

    def snapshot(self) -> tuple[int, dict[str, Any] | None, dict[str, list[int]]]:
        """(samples, the latest reading, the sparklines), taken together."""
        with self._lock:
            return self.samples, self.latest, {k: list(v) for k, v in self.depths.items()}


class Sampler:
    """A daemon thread calling ``read()`` every ``interval`` seconds into ``history``;
    a failing reading is logged and the next one tried (the dashboard shows its age)."""

    def __init__(self, read: Callable[[], dict], history: History,
                 clock: Callable[[], float] = time.time) -> None:
        self.read = read
        self.history = history
        self.clock = clock
        self.error: str | None = None
        self.cpu_seconds = 0.0    # CPU time the readings took (this thread's, SQLite's work included)
        self.readings = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sluice-dashboard-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Take the next reading now (after an action changed what is shown)."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def sample(self) -> None:
        """One reading, now."""
        cpu = time.thread_time()
        try:
            reading = self.read()
        except Exception as e:          # never let the thread die: the next reading may work
            log.exception("dashboard reading failed")
            self.error = f"{type(e).__name__}: {e}"
            return
        finally:
            self.cpu_seconds += time.thread_time() - cpu
            self.readings += 1
        self.error = None
        self.history.add(reading, self.clock())

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.sample()
            self._wake.wait(max(0.0, self.history.interval - (time.monotonic() - started)))
            self._wake.clear()
