"""Issue 17 §3: one recent snapshot shared by /metrics scrapes and the dashboard
(sluice.monitor.source) — concurrent scrapes cause one reading, a fresh snapshot is
served without a reading, and the metrics still move when traffic flows."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

import sluice
from sluice.errors import Error, ora
from sluice.monitor import snapshot as snapshots
from sluice.monitor import source as sources
from sluice.monitor.prometheus import Metrics
from sluice.monitor.source import SnapshotSource

from ..conftest import make_queue
from ..dashboard.kit import basic, open_store, serve
from .test_prometheus import samples, value

N = 8
REAL_TAKE = snapshots.take


def _wait_for(predicate, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.01)


def test_concurrent_gets_share_the_one_reading_in_flight(dsn, monkeypatch):
    """N callers at once (max age 0, so nothing cached counts): the first reads, the
    other N-1 join its reading; one reading, one snapshot object for all."""
    sluice.connect(dsn).close()
    source = SnapshotSource(lambda: sluice.connect(dsn), max_age=0.0)
    def slow_take(conn):
        # hold the reading until every other caller has joined it
        _wait_for(lambda: source.joined == N - 1, f"{N - 1} callers to join the reading")
        return REAL_TAKE(conn)
    monkeypatch.setattr(sources.snapshots, "take", slow_take)
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(source.get())) for _ in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(got) == N and all(s is got[0] for s in got)
    assert (source.readings, source.joined) == (1, N - 1)
    # the reading is over: max age 0 means the next call reads again
    monkeypatch.setattr(sources.snapshots, "take", REAL_TAKE)
    assert source.get() is not got[0] and source.readings == 2
    source.close()


def test_a_fresh_snapshot_is_served_without_a_reading(dsn):
    now = [100.0]
    source = SnapshotSource(lambda: sluice.connect(dsn), max_age=1.0, clock=lambda: now[0])
    first = source.get()
    now[0] += 0.9
    assert source.get() is first and source.readings == 1
    assert source.get(max_age=0.5) is not first and source.readings == 2   # the caller's own limit
    now[0] += 1.01
    third = source.get()
    assert third.taken_at >= first.taken_at and source.readings == 3
    source.close()


def test_a_failed_reading_reaches_every_waiter_and_is_not_kept(dsn, monkeypatch):
    source = SnapshotSource(lambda: sluice.connect(dsn), max_age=60.0)

    def failing(conn):
        _wait_for(lambda: source.joined == 2, "2 callers to join the reading")
        raise ora(3113)
    monkeypatch.setattr(sources.snapshots, "take", failing)
    errors: list = []

    def call() -> None:
        try:
            source.get()
        except Error as e:
            errors.append(e)
    threads = [threading.Thread(target=call) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(errors) == 3 and all(e.code == 3113 for e in errors)
    assert source.readings == 0
    monkeypatch.setattr(sources.snapshots, "take", REAL_TAKE)
    assert source.get().site and source.readings == 1      # reconnected, read again
    source.close()


def test_metrics_still_move_when_traffic_flows(dsn):
    with sluice.connect(dsn) as admin:
        make_queue(admin, "MQ")
    metrics = Metrics(lambda: sluice.connect(dsn), max_age=0.2)
    q = {"queue": "SLUICE.MQ", "queue_table": "MQ_QT", "queue_type": "NORMAL_QUEUE"}
    assert value(samples(metrics.exposition().decode()), "sluice_queue_ready_messages", **q) == 0
    with sluice.connect(dsn) as producer:
        producer.queue("MQ").enqmany([producer.msgproperties(payload=b"m") for _ in range(3)])
        producer.commit()
        # within the max age the scrape may show the snapshot before; after it, the new depth
        _wait_for(lambda: value(samples(metrics.exposition().decode()), "sluice_queue_ready_messages",
                                **q) == 3, "the depth to reach 3")
        producer.queue("MQ").deqmany(3)
        producer.commit()
        _wait_for(lambda: value(samples(metrics.exposition().decode()), "sluice_queue_ready_messages",
                                **q) == 0, "the depth to fall to 0")
    assert metrics.source.readings >= 3
    metrics.close()


@pytest.fixture
def served(dsn):
    open_store(dsn).close()
    s = serve(dsn, interval=60.0)         # the sampler reads at start, then not for a minute
    yield s
    s.stop()


def test_the_dashboard_and_metrics_share_the_servers_snapshot(served):
    """The dashboard's sampler takes this store's snapshot from the server's source: a
    scrape within the max age of a sample reads nothing, nor a sample after a scrape."""
    servlet = served.dashboard.site.servlet
    shared = servlet.snapshots
    assert shared is not None and shared.max_age == 1.0
    _wait_for(lambda: served.dashboard.sampler.readings >= 1, "the sampler's first reading")
    now = [time.monotonic()]
    shared.clock = lambda: now[0]            # time moves when the test says
    served.dashboard.sampler.sample()
    assert served.dashboard.sampler.error is None
    taken = shared.readings
    assert taken in (1, 2)                   # the first reading, or a new one if it aged
    with httpx.Client(base_url=served.url, headers=basic("watcher"), timeout=30) as c:
        assert c.get("/metrics").status_code == 200
        assert shared.readings == taken          # the sampler's snapshot is fresh
        now[0] += 1.5
        r = c.get("/metrics")
        assert r.status_code == 200 and shared.readings == taken + 1
        assert value(samples(r.text), "sluice_monitor_snapshot_seconds") > 0
        served.dashboard.sampler.sample()        # the scrape's snapshot is fresh: no reading
        assert shared.readings == taken + 1 and served.dashboard.sampler.readings >= 3
