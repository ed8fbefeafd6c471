"""Issue 17 §1/§2: /metrics on ``sluice serve`` and ``sluice run`` — the Prometheus text
format (parsed with prometheus_client's parser), every metric moving when traffic flows,
nothing without authentication and the MONITOR privilege."""

from __future__ import annotations

import signal
import socket
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

import sluice
from sluice.idap.client import Client
from sluice.monitor import snapshot
from sluice.monitor.prometheus import SnapshotCollector
from sluice.streams.propagation.runner import PropagationRunner

from tests import forkserver

from ..idap.conftest import AGENT, AGENT_PASSWORD, start_servlet, setup_store
from ..security.conftest import PASSWORD, create_user
from ..streams.propkit import multi_queue
from .kit import two_sites

WATCHER = ("watcher", PASSWORD)


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted labels) -> value of a Prometheus text exposition."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(found: dict, metric: str, **labels) -> float:
    return found[(metric, tuple(sorted(labels.items())))]


@pytest.fixture
def served(dsn):
    setup_store(dsn)
    with sluice.connect(dsn) as admin:
        create_user(admin, "WATCHER", "MONITOR")
        create_user(admin, "CATALOG", "SELECT_CATALOG_ROLE")
        create_user(admin, "NOBODY")
        admin.aqadm.create_queue_table(queue_table="qs.raw_qt", queue_payload_type="RAW")
        admin.aqadm.create_queue(queue_name="qs.raw_q", queue_table="qs.raw_qt")
        admin.aqadm.start_queue("qs.raw_q")
    s = start_servlet(dsn, session_timeout=30)
    yield s
    s.server.stop()


def scrape(url: str, auth=WATCHER) -> httpx.Response:
    return httpx.get(url + "/metrics", auth=auth, timeout=30)


def scrape_until(url: str, moved, seconds: float = 30.0) -> dict:
    """The first scrape whose samples satisfy ``moved`` (within ``seconds``)."""
    deadline = time.monotonic() + seconds
    while True:
        found = samples(scrape(url).text)
        if moved(found) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_serve_metrics_need_a_user_with_monitor(served):
    url = served.server.url
    r = httpx.get(url + "/metrics", timeout=30)
    assert r.status_code == 401 and "Basic" in r.headers["www-authenticate"]
    assert "sluice_" not in r.text
    assert scrape(url, ("watcher", "wrong")).status_code == 401
    assert scrape(url, ("nobody", PASSWORD)).status_code == 403
    assert scrape(url, (AGENT, AGENT_PASSWORD)).status_code == 403      # an AQ agent is not enough
    for who in (WATCHER, ("catalog", PASSWORD)):
        r = scrape(url, who)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")


def test_serve_metrics_move_with_idap_traffic(served):
    url = served.server.url
    before = samples(scrape(url).text)
    q = {"queue": "QS.RAW_Q", "queue_table": "RAW_QT", "queue_type": "NORMAL_QUEUE"}
    assert value(before, "sluice_queue_ready_messages", **q) == 0
    assert value(before, "sluice_queue_enqueued_messages_total", **q) == 0
    client = Client(url, AGENT, AGENT_PASSWORD)
    client.send("QS.RAW_Q", [b"one", b"two", b"three"], commit=True)
    # scrapes share a snapshot for up to a second (sluice.monitor.source): the new figures
    # show once it has aged
    mid = scrape_until(url, lambda f: value(f, "sluice_queue_ready_messages", **q) == 3)
    assert value(mid, "sluice_queue_ready_messages", **q) == 3
    assert value(mid, "sluice_queue_enqueued_messages_total", **q) == 3
    assert value(mid, "sluice_queue_oldest_message_age_seconds", **q) > 0
    assert value(mid, "sluice_idap_request_duration_seconds_count", servlet="AQServlet") >= 1
    assert value(mid, "sluice_idap_request_duration_seconds_sum", servlet="AQServlet") > 0
    got = client.receive("QS.RAW_Q", batch_size=3, commit=True)
    assert len(got) == 3
    after = scrape_until(url, lambda f: value(f, "sluice_queue_ready_messages", **q) == 0)
    assert value(after, "sluice_queue_dequeued_messages_total", **q) == 3
    assert value(after, "sluice_idap_request_duration_seconds_count", servlet="AQServlet") > \
        value(mid, "sluice_idap_request_duration_seconds_count", servlet="AQServlet")
    client.close()


class _Fixed:
    """A snapshot source of the collector: the store ``conn`` now."""

    def __init__(self, conn) -> None:
        self.conn, self.last_seconds = conn, 0.0

    def take(self):
        return snapshot.take(self.conn)


def exposition(conn) -> dict:
    from prometheus_client import CollectorRegistry, generate_latest
    reg = CollectorRegistry(auto_describe=False)
    reg.register(SnapshotCollector(_Fixed(conn)))
    return samples(generate_latest(reg).decode())


def test_propagation_metrics_move(sites):
    a, b = two_sites(sites)
    p = {"propagation": "P1", "source_queue": "SLUICE.SRC", "destination": "SLUICE.DST@DBS2"}
    before = exposition(a)
    assert value(before, "sluice_propagation_messages_total", **p) == 0
    assert value(before, "sluice_streams_process_status", kind="propagation", name="P1",
                 sluice_streams_process_status="ENABLED") == 1
    assert value(before, "sluice_streams_link_info", kind="propagation", process="P1",
                 source="queue:SLUICE.SRC@DBS1", target="queue:SLUICE.DST@DBS2") == 1
    q = a.queue("SRC")
    q.enqmany([a.msgproperties(payload=b"x") for _ in range(5)])
    a.commit()
    mid = exposition(a)
    assert value(mid, "sluice_propagation_backlog_messages", **p) == 5
    assert value(mid, "sluice_propagation_lag_seconds", **p) > 0
    assert value(mid, "sluice_queue_consumer_ready_messages", queue="SLUICE.SRC", consumer="",
                 address="SLUICE.DST@DBS2") == 5
    assert PropagationRunner(a).run_once(force=True) == 5
    after = exposition(a)
    assert value(after, "sluice_propagation_messages_total", **p) == 5
    assert value(after, "sluice_propagation_bytes_total", **p) > 0
    assert value(after, "sluice_propagation_backlog_messages", **p) == 0
    assert (value(after, "sluice_propagation_failures", **p), value(after, "sluice_propagation_backoff", **p)) == (0, 0)
    # the destination goes away: the schedule fails and backs off
    b.aqadm.stop_queue("DST")
    q.enqone(a.msgproperties(payload=b"y"))
    a.commit()
    PropagationRunner(a).run_once(force=True)
    failed = exposition(a)
    assert value(failed, "sluice_propagation_failures", **p) == 1
    assert value(failed, "sluice_propagation_backoff", **p) == 1
    assert value(failed, "sluice_propagation_next_run_timestamp_seconds", **p) > time.time()
    assert value(failed, "sluice_errors") >= 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sluice_run_serves_metrics(dsn):
    with sluice.connect(dsn) as admin:
        create_user(admin, "WATCHER", "MONITOR")
        create_user(admin, "NOBODY")
        multi_queue(admin, "RQ")
        admin.aqadm.add_subscriber("RQ", sluice.Agent("S1"))
        q = admin.queue("RQ")
        q.enqmany([admin.msgproperties(payload=b"r") for _ in range(4)])
        admin.commit()
    port = _free_port()
    # `sluice run` as a process of its own, forked from the preloaded parent (tests/forkserver.py)
    proc = forkserver.shared(*forkserver.FLEETS).popen(
        "tests.forkserver:cli", ["--dsn", dsn, "run", "--metrics-port", str(port), "--log-level", "warning"])
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                r = scrape(url)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()
                time.sleep(0.1)
        assert r.status_code == 200, r.text
        found = samples(r.text)
        assert value(found, "sluice_queue_ready_messages", queue="SLUICE.RQ", queue_table="RQ_QT",
                     queue_type="NORMAL_QUEUE") == 4
        assert value(found, "sluice_queue_consumer_ready_messages", queue="SLUICE.RQ", consumer="S1",
                     address="") == 4
        assert httpx.get(url + "/metrics", timeout=10).status_code == 401
        assert scrape(url, ("nobody", PASSWORD)).status_code == 403
        assert httpx.get(url + "/other", timeout=10).status_code == 404
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, proc.stdout.read().decode()


def test_fast_text_format_is_generate_latest_byte_for_byte(sites):
    """Metrics.exposition writes the registry itself (prometheus_client's writer costs
    ~10 µs a sample): the same bytes, escapes included."""
    from prometheus_client import CollectorRegistry, Histogram, generate_latest
    from sluice.monitor.prometheus import text_format
    a, _ = two_sites(sites)
    a.aqadm.add_subscriber("SRC", sluice.Agent('"Mixed case"'))
    q = a.queue("SRC")
    q.enqmany([a.msgproperties(payload=b"x") for _ in range(3)])
    a.commit()
    reg = CollectorRegistry(auto_describe=False)
    reg.register(SnapshotCollector(_Fixed(a)))
    h = Histogram("sluice_idap_request_duration_seconds", "IDAP requests", ["servlet"], registry=reg)
    h.labels('a"b\\c').observe(0.003)
    h.labels("AQServlet").observe(12345678.5)

    class Frozen:        # one snapshot for both writers
        def __init__(self, inner):
            self.shot = inner.take()
            self.last_seconds = 0.25

        def take(self):
            return self.shot
    frozen = CollectorRegistry(auto_describe=False)
    frozen.register(SnapshotCollector(Frozen(_Fixed(a))))
    frozen.register(h)
    assert text_format(frozen) == generate_latest(frozen)
    assert b'consumer="Mixed case"' in text_format(frozen) and b'servlet="a\\"b\\\\c"' in text_format(frozen)


def test_sluice_run_says_why_its_metrics_address_is_refused(tmp_path):
    """A busy port or a host that does not resolve was ORA-12541 'no listener'; they are
    ORA-12542 and ORA-12545, as `sluice serve` says them, before any process starts."""
    from click.testing import CliRunner

    from sluice.cli import main
    dsn = f"sqlite:///{tmp_path / 'm.db'}"
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = CliRunner().invoke(main, ["--dsn", dsn, "run", "--metrics-port", str(port)])
    assert r.exit_code == 1 and "ORA-12542" in r.output, r.output
    r = CliRunner().invoke(main, ["--dsn", dsn, "run", "--metrics-port", str(_free_port()),
                                  "--metrics-host", "nosuch.invalid"])
    assert r.exit_code == 1 and "ORA-12545" in r.output, r.output
