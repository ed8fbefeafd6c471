"""Where a pipeline's rows go.

* :func:`warehouse` -- the message warehouse: Parquet files partitioned by queue and day,
  written by Spark's file sink (exactly once through its own commit log), each row with
  the time it ``arrived`` so that :mod:`.report` can tell the end-to-end lag.
* :func:`enqueue` -- into another Sluice queue, on this store or another one reached by a
  database link's DSN (propagation on Spark): per micro-batch, on one executor, in position order, one destination
  transaction that also records the batch's last position under the pipeline's name in
  the destination store (``SLUICE_PIPELINE_PROGRESS``), so a batch replayed after a
  failure is recognised and changes nothing (ensured delivery, exactly once).

Apply into tables (sink a) calls the Python apply engine per source transaction once
that engine exists (``sluice.streams.apply``); it is not built yet.

The destination is opened through ``connect`` (``sluice.connect`` passed down by the front
door: this layer is below the session, DESIGN.md section 7).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..aq.payload import loads_json
from . import rows

__all__ = ["warehouse", "warehouse_frame", "enqueue", "payload_of"]


def warehouse_frame(df: DataFrame) -> DataFrame:
    """The warehouse's columns: the rows, ``arrived`` (now) and ``day`` (of the enqueue)."""
    return df.withColumns({"arrived": F.current_timestamp(), "day": F.to_date("enq_time")})


def warehouse(df: DataFrame, path: str, checkpoint: str, trigger: dict | None = None) -> Any:
    """Start writing the stream ``df`` into the Parquet warehouse at ``path``."""
    writer = (warehouse_frame(df).writeStream.format("parquet").option("path", path)
              .option("checkpointLocation", checkpoint).partitionBy("queue", "day").outputMode("append"))
    return writer.trigger(**(trigger or {"processingTime": "1 second"})).start()


def payload_of(row: Any) -> Any:
    """The payload to enqueue for a row: its LCR, or the user message it carried."""
    if row["lcr_kind"] is not None:
        return rows.lcr_from_row(row)
    kind, text = row["payload_type"], row["user_data"]
    if text is None:
        return None
    if kind == "RAW":
        return bytes.fromhex(text)
    return loads_json(text)


def _enqueue_partition(connect: Callable[..., Any], dsn: str, queue: str, login: dict,
                       mark: str, it: Iterator[Any]) -> None:
    from . import queueio

    batch = list(it)
    if not batch:
        return
    last = max(r["position"] for r in batch)
    with queueio.open_raw(dsn) as raw:
        done = queueio.low_watermark(raw, mark)
    if done is not None and done >= last:
        return   # a replayed batch: already delivered
    conn = connect(dsn, **login)
    try:
        q = conn.queue(queue)
        props = []
        for r in batch:
            if r["error"] is not None:
                continue   # bad input stays in the source's error record (the report shows it)
            props.append(conn.msgproperties(payload=payload_of(r), correlation=r["corrid"],
                                            priority=r["priority"] or 0))
        if props:
            q.enqmany(props)
        conn.context.session.add_commit_work(lambda c: queueio.set_position(c, mark, queue, last))
        conn.commit()
    finally:
        conn.close()


def enqueue(df: DataFrame, connect: Callable[..., Any], dsn: str, queue: str, checkpoint: str,
            mark: str, user: str | None = None, trigger: dict | None = None, password: str | None = None) -> Any:
    """Start enqueuing the stream ``df`` into ``queue`` of the store at ``dsn`` (as ``user``
    / ``password``: a database link's login); ``mark`` names the destination's record of
    what was delivered."""
    login = {k: v for k, v in (("user", user), ("password", password)) if v is not None}
    position = F.when(F.col("cscn").isNotNull(), F.col("cscn")).otherwise(F.col("seq"))

    def batch(frame: DataFrame, _batch_id: int) -> None:
        ordered = frame.withColumn("position", position).coalesce(1).sortWithinPartitions("cscn", "seq")
        ordered.foreachPartition(lambda it: _enqueue_partition(connect, dsn, queue, login, mark, it))

    writer = df.writeStream.foreachBatch(batch).option("checkpointLocation", checkpoint)
    return writer.trigger(**(trigger or {"processingTime": "1 second"})).start()
