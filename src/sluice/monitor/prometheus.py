"""The monitoring snapshot as Prometheus metrics (``prometheus_client``).

:class:`SnapshotCollector` is a custom collector: every scrape turns one
:func:`~sluice.monitor.snapshot.take` (a fixed number of SQL statements; shared with the
dashboard and other scrapes while at most a second old, :mod:`.source`) into metric families, so nothing is computed between scrapes and the data path does not
pay for monitoring.  Counters are what the processes count (LCRs captured, messages
propagated …; per-queue enqueue/dequeue totals of the store, every process's), so ``rate()`` gives
throughput; gauges are depths, ages, lags and states.  :class:`Metrics` is one registry
(the collector and the IDAP request-latency histogram) and its text exposition.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily,
                                    StateSetMetricFamily)
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString as _go_float

from .snapshot import Snapshot
from .source import DEFAULT_MAX_AGE, SnapshotSource

CONTENT_TYPE = CONTENT_TYPE_LATEST
STATUSES = ("ENABLED", "DISABLED", "ABORTED")
# IDAP requests take ~0.1 ms on the event loop to seconds for a waiting receive
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0, 30.0)


def _age(v: float | None) -> float:
    return 0.0 if v is None else v


class SnapshotCollector(Collector):
    """Metric families of one snapshot per scrape (``source.take()``: the source's last
    snapshot while it is fresh — :mod:`sluice.monitor.source`)."""

    def __init__(self, source: SnapshotSource) -> None:
        self.source = source
        self._families: tuple[Snapshot | None, list] = (None, [])   # of the last snapshot

    def describe(self) -> list:
        return []      # families depend on the store: not checked at registration

    def collect(self) -> Iterator:
        s = self.source.take()
        shot, families = self._families
        if shot is not s:      # a scrape of a shared snapshot reuses its families (and text)
            families = [*queue_families(s), *process_families(s)]
            self._families = (s, families)
        yield from families
        yield GaugeMetricFamily("sluice_monitor_snapshot_seconds",
                                "Seconds the last snapshot of the store took", self.source.last_seconds)
        yield GaugeMetricFamily("sluice_errors", "Apply error-queue transactions, failing "
                                "propagations and aborted processes", s.errors)


class QueueFamily(Metric):
    """One per-queue family of a snapshot: a value of each queue.  A scrape of 1,000
    queues writes thousands of these samples, so :func:`text_format` takes the family's
    text straight from the snapshot (:meth:`text`: label sets rendered once per snapshot,
    shared by the families) without making a :class:`Sample` each; ``samples`` — what
    prometheus_client's own writers read — are made on first use."""

    def __init__(self, name: str, doc: str, typ: str, sample_name: str, attr: str,
                 queues: tuple, label_text: list[str]) -> None:
        super().__init__(name, doc, typ)
        self.sample_name, self.attr = sample_name, attr
        self._queues, self._label_text = queues, label_text
        self._text: str | None = None

    @property            # type: ignore[override]
    def samples(self) -> list:
        if self._samples is None:
            self._samples = [Sample(self.sample_name, {"queue": q.qualified, "queue_table": q.queue_table,
                                                       "queue_type": q.queue_type},
                                    getattr(q, self.attr) or 0, None) for q in self._queues]
        return self._samples

    @samples.setter
    def samples(self, value: list) -> None:     # Metric.__init__ sets [] : made on first use
        self._samples = None if value == [] else value

    def text(self) -> str:
        """The family's sample lines, as :func:`text_format` writes them."""
        if self._text is None:
            head, attr, fmt = self.sample_name + "{", self.attr, floatToGoString
            self._text = "".join([f"{head}{labels}}} {fmt(getattr(q, attr) or 0)}\n"
                                  for q, labels in zip(self._queues, self._label_text)])
        return self._text


# the per-queue families: name, type, the sample's name, QueueStat attribute, help
QUEUE_FAMILIES = (
    ("sluice_queue_ready_messages", "gauge", "ready", "Messages READY in the queue (V$AQ READY; a "
     "multi-consumer message once)"),
    ("sluice_queue_waiting_messages", "gauge", "waiting", "Messages WAITING for their delay (V$AQ WAITING)"),
    ("sluice_queue_expired_messages", "gauge", "expired", "Messages EXPIRED in the queue (V$AQ EXPIRED)"),
    ("sluice_queue_oldest_message_age_seconds", "gauge", "oldest_age", "Age of the oldest READY "
     "message (0: none)"),
    ("sluice_queue_enqueued_messages", "counter", "enqueued", "Messages enqueued into the queue, by "
     "every process (V$PERSISTENT_QUEUES ENQUEUED_MSGS)"),
    ("sluice_queue_dequeued_messages", "counter", "dequeued", "Messages dequeued from the queue, by "
     "every process: one per recipient (V$PERSISTENT_QUEUES DEQUEUED_MSGS)"),
)


def queue_families(s: Snapshot) -> list[Metric]:
    """Per-queue families (:class:`QueueFamily`) and the per-consumer depths."""
    label_text = [f'queue="{_label_value(q.qualified)}",queue_table="{_label_value(q.queue_table)}",'
                  f'queue_type="{_label_value(q.queue_type)}"' for q in s.queues]
    families: list[Metric] = [
        QueueFamily(name, doc, typ, name + "_total" if typ == "counter" else name, attr, s.queues, label_text)
        for name, typ, attr, doc in QUEUE_FAMILIES]
    consumer = GaugeMetricFamily("sluice_queue_consumer_ready_messages", "READY messages per "
                                 "consumer or remote address of a multi-consumer queue",
                                 labels=["queue", "consumer", "address"])
    for q in s.queues:
        for c in q.consumers:
            consumer.add_metric([q.qualified, c.name or "", c.address or ""], c.ready)
    families.append(consumer)
    return families


def process_families(s: Snapshot) -> Iterator:
    status = StateSetMetricFamily("sluice_streams_process_status", "DBA_CAPTURE / DBA_PROPAGATION / "
                                  "DBA_APPLY STATUS of each Streams process", labels=["kind", "name"])
    state = InfoMetricFamily("sluice_streams_process", "What each Streams process is doing and "
                             "which host runs it", labels=["kind", "name"])
    restarts = GaugeMetricFamily("sluice_streams_process_restarts", "Crashes the host restarted "
                                 "the process after", labels=["kind", "name"])

    def process(kind: str, name: str, st: str, running: str | None, hosting) -> None:
        status.add_metric([kind, name], {v: st == v for v in STATUSES})
        state.add_metric([kind, name], {"state": running or "", "host": hosting.host_name if hosting else ""})
        restarts.add_metric([kind, name], hosting.restarts if hosting else 0)

    cl = ["capture", "queue"]
    captured = CounterMetricFamily("sluice_capture_lcrs_captured", "LCRs the capture process captured", labels=cl)
    enqueued = CounterMetricFamily("sluice_capture_lcrs_enqueued", "LCRs it enqueued (its rules "
                                   "said yes)", labels=cl)
    ctx = CounterMetricFamily("sluice_capture_transactions", "Source transactions captured", labels=cl)
    clag = GaugeMetricFamily("sluice_capture_lag_seconds", "Last enqueue time minus the change's "
                             "commit time", labels=cl)
    for c in s.captures:
        process(c.kind.lower(), c.name, c.status, c.state, c.hosting)
        if c.kind == "CAPTURE":
            v = [c.name, c.queue]
            captured.add_metric(v, c.captured)
            enqueued.add_metric(v, c.enqueued)
            ctx.add_metric(v, c.transactions)
            clag.add_metric(v, _age(c.lag_seconds))

    pl = ["propagation", "source_queue", "destination"]
    sent = CounterMetricFamily("sluice_propagation_messages", "Messages propagated (TOTAL_NUMBER)", labels=pl)
    sent_bytes = CounterMetricFamily("sluice_propagation_bytes", "Bytes propagated (TOTAL_BYTES)", labels=pl)
    failures = GaugeMetricFamily("sluice_propagation_failures", "Consecutive failures of the "
                                 "schedule (0 after a success; disabled at 16)", labels=pl)
    backoff = GaugeMetricFamily("sluice_propagation_backoff", "1 while the schedule waits to retry "
                                "after a failure", labels=pl)
    disabled = GaugeMetricFamily("sluice_propagation_schedule_disabled", "1 when the schedule is "
                                 "disabled", labels=pl)
    next_run = GaugeMetricFamily("sluice_propagation_next_run_timestamp_seconds", "When the "
                                 "schedule tries next (0: unknown)", labels=pl)
    backlog = GaugeMetricFamily("sluice_propagation_backlog_messages", "Messages waiting in the "
                                "source queue for the destination", labels=pl)
    plag = GaugeMetricFamily("sluice_propagation_lag_seconds", "Age of the oldest of them", labels=pl)
    for p in s.propagations:
        process("propagation", p.name, p.status, "BACK-OFF" if p.backing_off else None, p.hosting)
        v = [p.name, p.source_queue, f"{p.destination_queue}@{p.site}"]
        sent.add_metric(v, p.propagated)
        sent_bytes.add_metric(v, p.bytes)
        failures.add_metric(v, p.failures)
        backoff.add_metric(v, int(p.backing_off))
        disabled.add_metric(v, int(p.schedule_disabled))
        next_run.add_metric(v, p.next_run or 0)
        backlog.add_metric(v, p.backlog)
        plag.add_metric(v, _age(p.lag_seconds))

    al = ["apply", "queue"]
    dequeued = CounterMetricFamily("sluice_apply_messages_dequeued", "Messages the apply process "
                                   "dequeued", labels=al)
    applied = CounterMetricFamily("sluice_apply_lcrs_applied", "LCRs and messages applied", labels=al)
    txns = CounterMetricFamily("sluice_apply_transactions", "Transactions applied", labels=al)
    errors = CounterMetricFamily("sluice_apply_errors", "Transactions that failed", labels=al)
    error_queue = GaugeMetricFamily("sluice_apply_error_queue_transactions", "Transactions in the "
                                    "error queue (DBA_APPLY_ERROR)", labels=al)
    abacklog = GaugeMetricFamily("sluice_apply_backlog_messages", "Messages READY for the apply "
                                 "process", labels=al)
    alag = GaugeMetricFamily("sluice_apply_lag_seconds", "Age of the oldest of them", labels=al)
    latency = GaugeMetricFamily("sluice_apply_latency_seconds", "Apply time minus creation time of "
                                "the last message applied", labels=al)
    for a in s.applies:
        process("apply", a.name, a.status, a.state, a.hosting)
        v = [a.name, a.queue]
        dequeued.add_metric(v, a.dequeued)
        applied.add_metric(v, a.applied)
        txns.add_metric(v, a.transactions)
        errors.add_metric(v, a.errors)
        error_queue.add_metric(v, a.error_queue)
        abacklog.add_metric(v, a.backlog)
        alag.add_metric(v, _age(a.lag_seconds))
        latency.add_metric(v, _age(a.latency_seconds))

    links = InfoMetricFamily("sluice_streams_link", "The topology: capture -> queue, queue -> "
                             "queue@site (propagation), queue -> apply", labels=["kind", "process"])
    for k in s.links:
        links.add_metric([k.kind, k.process], {"source": k.source, "target": k.target})
    yield from (status, state, restarts, captured, enqueued, ctx, clag, sent, sent_bytes, failures,
                backoff, disabled, next_run, backlog, plag, dequeued, applied, txns, errors,
                error_queue, abacklog, alag, latency, links)


def floatToGoString(v) -> str:  # noqa: N802 (prometheus_client's name)
    """prometheus_client's number formatting, with a fast path for the small whole numbers
    most samples are (Go writes 1e+06 and up with an exponent)."""
    if type(v) is int and 0 <= v < 1_000_000:
        return f"{v}.0"
    return _go_float(v)


def _label_value(v: str) -> str:
    if "\\" in v or "\n" in v or '"' in v:
        return v.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')
    return v


def text_format(registry: CollectorRegistry) -> bytes:
    """The Prometheus text format of ``registry``, as ``generate_latest`` writes it.
    prometheus_client 0.2x validates and escapes every label name of every sample (about
    10 µs a sample: 160 ms for 1,000 queues); Sluice's names are fixed and valid, so this
    checks each family's names once and formats samples with plain string operations.
    tests/monitor/test_prometheus.py compares the two outputs."""
    out: list[str] = []
    rendered: dict[int, tuple[dict, str]] = {}    # label dicts samples share, rendered once
    for metric in registry.collect():
        name, kind = metric.name, metric.type
        if kind == "counter":
            name += "_total"
        elif kind == "info":
            name, kind = name + "_info", "gauge"
        elif kind == "stateset":
            kind = "gauge"
        elif kind == "gaugehistogram":
            kind = "histogram"
        elif kind == "unknown":
            kind = "untyped"
        doc = metric.documentation.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {name} {doc}\n# TYPE {name} {kind}\n")
        if type(metric) is QueueFamily:
            out.append(metric.text())
            continue
        extra: dict[str, list[str]] = {}     # OpenMetrics samples: gauges of their own, after
        suffixes = {metric.name + x: x for x in ("_created", "_gsum", "_gcount")}
        for sample in metric.samples:
            if sample.labels:
                done = rendered.get(id(sample.labels))
                if done is None or done[0] is not sample.labels:
                    done = rendered[id(sample.labels)] = (sample.labels, ",".join(
                        f'{k}="{_label_value(v)}"' for k, v in sorted(sample.labels.items())))
                line = f"{sample.name}{{{done[1]}}} {floatToGoString(sample.value)}"
            else:
                line = f"{sample.name} {floatToGoString(sample.value)}"
            if sample.timestamp is not None:
                line += f" {int(float(sample.timestamp) * 1000):d}"
            suffix = suffixes.get(sample.name)
            (out if suffix is None else extra.setdefault(suffix, [])).append(line + "\n")
        for suffix, lines in sorted(extra.items()):
            out.append(f"# HELP {metric.name}{suffix} {doc}\n# TYPE {metric.name}{suffix} gauge\n")
            out.extend(lines)
    return "".join(out).encode("utf-8")


class Metrics:
    """A registry with the snapshot collector over ``connect`` (and, for the servlet, the
    IDAP request-latency histogram: :meth:`observe_request`)."""

    def __init__(self, connect: Callable[[], Any], idap: bool = False,
                 max_age: float = DEFAULT_MAX_AGE) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.source = SnapshotSource(connect, max_age)
        self.registry.register(SnapshotCollector(self.source))
        self._latency = Histogram("sluice_idap_request_duration_seconds", "IDAP requests (POST to "
                                  "/aqserv/servlet/<name>) from arrival to answer", ["servlet"],
                                  registry=self.registry, buckets=LATENCY_BUCKETS) if idap else None
        self._children: dict[str, Any] = {}

    def observe_request(self, servlet: str, seconds: float) -> None:
        child = self._children.get(servlet)
        if child is None:
            child = self._children.setdefault(servlet, self._latency.labels(servlet))
        child.observe(seconds)

    def exposition(self) -> bytes:
        """The text format of every metric, from the source's snapshot (blocking: a
        reading's SQL runs here when the last one is older than its max age): what
        ``generate_latest(self.registry)`` writes, byte for byte, ten times faster
        (:func:`text_format`)."""
        return text_format(self.registry)

    def close(self) -> None:
        self.source.close()
