"""``spark.readStream.format("sluice")`` / ``spark.read.format("sluice")``: a Sluice queue as
a DataFrame (PySpark's Python data source API).

::

    from sluice.pipeline.source import register
    register(spark)
    lcrs = (spark.readStream.format("sluice").option("dsn", dsn).option("queue", "STRMADMIN.STREAMS_QUEUE")
            .option("consumer", "APPLY_HR").option("pipeline", "apply_hr").load())
    history = spark.read.format("sluice").option("dsn", dsn).option("queue", "STRMADMIN.STREAMS_QUEUE").load()

Options: ``dsn`` (a ``sqlite:///file`` or ``postgresql://…`` store), ``queue``
(``OWNER.NAME``), ``consumer`` (a multi-consumer queue's subscriber the pipeline reads as),
``pipeline`` (the name its low-watermark is kept under; default the queue's name),
``user`` (whose schema a
queue name without owner is in), ``maxMessagesPerBatch`` (the default read limit; a batch always
ends on a whole transaction), ``partitions`` (ranges per batch, default 2), ``documents``
(``true``: plain row LCRs come as their stored text in the last column,
:data:`~.rows.DOCUMENT`, their LCR columns NULL, for the pipeline's plan to decode in the
JVM -- :func:`.documents.decode`; what the pipelines set).

Offsets are ``{"position": n}`` -- a commit SCN, or SEQ for queues not ordered by commit
time (:mod:`.queueio`).  A new query starts at the pipeline's low-watermark; Spark calls
``commit(end)`` once the batch up to ``end`` is committed by its sink, and only then are
its messages consumed and the low-watermark advanced (one store transaction).  Spark
calls ``commit`` only when it plans the next batch, so the runner (:mod:`.runner`) also
acknowledges each batch as soon as its progress is reported (idempotent: up to a position).  The batch
reader shows every record of the queue, in every state (its history).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Iterator, Sequence

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from . import capturedarrow, queueio, rows
from .queueio import QueueRef

__all__ = ["SluiceDataSource", "register"]


class _Range(InputPartition):
    def __init__(self, low: int, high: int) -> None:
        super().__init__((low, high))
        self.low, self.high = low, high


class SluiceDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "sluice"

    def _ref(self, browse: bool) -> QueueRef:
        o = self.options
        if "dsn" not in o or "queue" not in o:
            raise ValueError('the sluice data source needs the options "dsn" and "queue"')
        return QueueRef.resolve(o["dsn"], o["queue"], o.get("consumer"), o.get("user"), browse=browse)

    def _documents(self) -> bool:
        return str(self.options.get("documents", "false")).lower() == "true"

    def schema(self) -> Any:
        return rows.spark_schema(self._documents())

    def _positive(self, option: str, default: int | None) -> int | None:
        text = self.options.get(option)
        if text is None or text == "":
            return default
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise ValueError(f'the sluice data source option "{option}" must be a positive integer, not {text!r}')
        return value

    def reader(self, schema: Any) -> DataSourceReader:
        return _BrowseReader(self._ref(True), self._positive("partitions", 2), self._documents())

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        ref = self._ref(False)
        return QueueStreamReader(ref, self.options.get("pipeline") or ref.name,
                                 self._positive("maxMessagesPerBatch", None), self._positive("partitions", 2),
                                 self._documents())


def _read(ref: QueueRef, fetch: Any, documents: bool) -> Iterator[Any]:
    """Arrow record batches of the rows: built column by column here, Spark's per-cell
    converters of tuple rows cost more than decoding the LCRs (captured row LCRs by column
    in Arrow's C++, :mod:`.capturedarrow`)."""
    with queueio.open_raw(ref.dsn) as raw:
        yield from capturedarrow.record_batches(ref.qualified, ref.payload_type, fetch(raw), documents)


class _BrowseReader(DataSourceReader):
    def __init__(self, ref: QueueRef, parts: int, documents: bool = False) -> None:
        self.ref, self.parts, self.documents = ref, max(1, parts), documents

    def partitions(self) -> Sequence[InputPartition]:
        with queueio.open_raw(self.ref.dsn) as raw:
            low, high = queueio.seq_bounds(raw, self.ref)
        step = max(1, -(-(high - low) // self.parts))
        return [_Range(a, min(a + step, high)) for a in range(low, high, step)] or [_Range(0, 0)]

    def read(self, partition: _Range) -> Iterator[tuple]:
        return _read(self.ref, lambda raw: queueio.browse(raw, self.ref, partition.low, partition.high),
                     self.documents)


class QueueStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The queue's READY messages for the pipeline, in position order."""

    def __init__(self, ref: QueueRef, pipeline: str, max_rows: int | None, parts: int,
                 documents: bool = False) -> None:
        self.ref, self.pipeline, self.max_rows, self.parts = ref, pipeline, max_rows, max(1, parts)
        self.documents = documents
        self.target: int | None = None   # Trigger.AvailableNow: what was there when it began
        self._raw: queueio._Raw | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_raw": None}   # the executors' read() opens its own

    def _store(self, work: Callable[[queueio._Raw], Any]) -> Any:
        """``work`` over the reader's own store connection, kept across micro-batches (the
        reader lives as long as the query, in the driver's Python streaming source
        process: a new connection for every latestOffset / partitions / commit was a fixed
        cost of each batch); a connection that fails is closed and ``work`` runs once more
        over a new one (each of them may run again: reads, or an acknowledgement up to a
        position)."""
        try:
            return self._over_connection(work)
        except Exception:  # noqa: BLE001 -- once more over a new connection; its failure raises
            return self._over_connection(work)

    def _over_connection(self, work: Callable[[queueio._Raw], Any]) -> Any:
        """``work`` over the kept connection (opened when there is none), which a failure
        rolls back and closes."""
        if self._raw is None:
            self._raw = queueio.open_raw(self.ref.dsn)
        try:
            return work(self._raw)
        except Exception:
            raw, self._raw = self._raw, None
            raw.__exit__(*sys.exc_info())
            raise

    def prepareForTriggerAvailableNow(self) -> None:
        self.target = self._store(lambda raw: queueio.latest_position(raw, self.ref, 0))

    def initialOffset(self) -> dict:
        return {"position": self._store(lambda raw: queueio.low_watermark(raw, self.pipeline)) or 0}

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        return ReadMaxRows(self.max_rows) if self.max_rows else ReadAllAvailable()

    def latestOffset(self, start: dict, limit: Any) -> dict:
        max_rows = getattr(limit, "max_rows", None)
        end = self._store(lambda raw: queueio.latest_position(raw, self.ref, start["position"], max_rows))
        if self.target is not None:   # positions are transaction boundaries: the cap is one too
            end = max(start["position"], min(end, self.target))
        return {"position": end}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        return [_Range(a, b) for a, b in self._store(
            lambda raw: queueio.split_range(raw, self.ref, start["position"], end["position"], self.parts))]

    def read(self, partition: _Range) -> Iterator[tuple]:
        return _read(self.ref, lambda raw: queueio.records(raw, self.ref, partition.low, partition.high),
                     self.documents)

    def commit(self, end: dict) -> None:
        self._store(lambda raw: queueio.acknowledge(raw, self.ref, self.pipeline, end["position"]))


def register(spark: Any) -> None:
    """Make ``format("sluice")`` known to ``spark`` (once per session)."""
    spark.dataSource.register(SluiceDataSource)
