"""The apply sink forgets the delivery records (SLUICE_APPLY_DONE) no replay can need.

Each source transaction the Spark apply sink applies leaves a record in the target that
makes a replayed micro-batch skip it.  Spark replays only the batch it was running, so the
records of the batches before the previous one guard nothing: the sink deletes them at the
start of each batch (less a margin for executors' clocks), and the table stays the size of
a few batches instead of growing by a row per source transaction for ever.  EXECUTE_ERROR's
own records (kind ERROR) stay: they keep an error transaction applied once.
SQLite and PostgreSQL targets below Spark; one stream on Spark."""

from __future__ import annotations

import sqlite3
import time

import pytest

import sluice
from sluice import RowLCR
from sluice.pipeline import sinks
from sluice.pipeline.source import register
from tests.pipeline.test_spark_pipeline import sqlite_apply_site
from tests.streams.applykit import target  # noqa: F401

APPLY = "APF"


@pytest.fixture
def engine(tmp_path, target):  # noqa: F811
    dsn = f"sqlite:///{tmp_path / 'store.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=APPLY, apply_database_link=target.link,
                                apply_captured=True)
    with sinks._apply_engine(sluice.connect, dsn, {}, APPLY) as (store, ctx, _d, engine):
        engine.target.ensure_bookkeeping()
        engine.store = (store, ctx, dsn)   # the sink's store session and DSN, for forget_in_store
        yield engine
    conn.close()


def _records(engine) -> set[tuple[str, str, str]]:
    t = engine.target
    rows = {(a, k, i) for a, k, i in t.query(f"SELECT APPLY_NAME, KIND, ID FROM {t.done_table()}")}
    t.rollback()
    return rows


def _deleted_notes(engine) -> set[tuple[str, int]]:
    """What DELETE_ERROR left (errorqueue.delete): (apply, commit SCN)."""
    _store, ctx, _dsn = engine.store
    return {(a, s) for a, s in ctx.query("SELECT APPLY_NAME, SOURCE_COMMIT_SCN FROM SLUICE_APPLY_ERROR_DELETED")}


def test_records_older_than_the_batch_before_the_previous_are_forgotten(engine):
    t, now = engine.target, time.time()
    store, ctx, dsn = engine.store
    for apply_name, scn, when in [(APPLY, 10, now - sinks.DELIVERY_RECORDS_KEPT - 200),
                                  (APPLY, 20, now - 5), ("OTHER", 10, now - sinks.DELIVERY_RECORDS_KEPT - 200)]:
        ctx.add_commit_work(lambda c, row=(apply_name, "DBS1.NET", scn, when): c.execute(
            "INSERT INTO SLUICE_APPLY_ERROR_DELETED (APPLY_NAME, SOURCE_DATABASE, SOURCE_COMMIT_SCN, "
            "DELETED_TIME) VALUES (?, ?, ?, ?)", row))
    store.commit()
    old, recent = now - sinks.DELIVERY_RECORDS_KEPT - 200, now - 5
    p = t.placeholder
    for row in [(APPLY, "CAPTURED", "DBS1.NET|10", old), (APPLY, "USER", "0a0b", old),
                (APPLY, "ERROR", "1.2.3", old),              # EXECUTE_ERROR's own: kept
                (APPLY, "CAPTURED", "DBS1.NET|20", recent),  # the batches a replay may need
                ("OTHER", "CAPTURED", "DBS1.NET|10", old)]:  # another apply's
        t.execute(f"INSERT INTO {t.done_table()} (APPLY_NAME, KIND, ID, DONE) VALUES ({p}, {p}, {p}, {p})", row)
    t.commit()
    everything, notes = _records(engine), _deleted_notes(engine)
    sinks.forget_delivered(engine, APPLY, [now - 100])           # the query's first batch ran: a
    sinks.forget_in_store(dsn, APPLY, 1, [now - 100])            # replay may follow a restart
    assert _records(engine) == everything
    assert _deleted_notes(engine) == notes
    sinks.forget_delivered(engine, APPLY, [now - 100, now - 1])
    sinks.forget_in_store(dsn, APPLY, 2, [now - 100, now - 1])
    assert _records(engine) == {(APPLY, "ERROR", "1.2.3"), (APPLY, "CAPTURED", "DBS1.NET|20"),
                                ("OTHER", "CAPTURED", "DBS1.NET|10")}
    # DELETE_ERROR's notes in the store go by the same rule
    assert _deleted_notes(engine) == {(APPLY, 20), ("OTHER", 10)}


def test_a_long_stream_keeps_the_records_of_its_last_batches_only(spark, tmp_path, monkeypatch):
    """40 transactions in micro-batches of 10: every row applied once, and the
    records left are those of the last batches (a suffix of the commit order), not one per
    transaction.  Then the stream restarted from its checkpoint with more: still once."""
    monkeypatch.setattr(sinks, "DELIVERY_RECORDS_KEPT", 0.0)     # no executors' clocks here
    dsn, conn, target_path = sqlite_apply_site(tmp_path, APPLY)
    q = conn.queue("STRM_Q")

    def enqueue(first: int, count: int) -> None:
        for k in range(first, first + count):
            q.enqmany([conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", "T", None, f"{k}.0.1",
                                                         k * 10 + j, None, {"ID": k * 2 + j, "N": k},
                                                         commit_scn=k * 10 + 9)) for j in range(2)])
            conn.commit()

    def run(batches: int) -> None:
        df = spark.readStream.format("sluice").options(dsn=dsn, queue="STRM_Q", consumer=APPLY, pipeline="apf",
                                                        maxMessagesPerBatch="20").load()
        query = sinks.apply(df, sluice.connect, dsn, APPLY, str(tmp_path / "ck"), trigger={"availableNow": True},
                            tasks=1)
        query.awaitTermination(300)
        assert query.exception() is None
        assert len([p for p in query.recentProgress if p.numInputRows]) >= batches

    def scns() -> list[int]:
        with sqlite3.connect(target_path) as tg:
            return sorted(int(i.rsplit("|", 1)[1]) for (i,) in tg.execute(
                "SELECT ID FROM SLUICE_APPLY_DONE WHERE APPLY_NAME = ? AND KIND = 'CAPTURED'", (APPLY,)))

    def rows() -> list[tuple]:
        with sqlite3.connect(target_path) as tg:
            return tg.execute('SELECT id, n FROM "TGT.T" ORDER BY id').fetchall()

    register(spark)
    enqueue(0, 40)
    run(4)
    assert rows() == [(k * 2 + j, k) for k in range(40) for j in range(2)]
    kept = scns()
    assert kept and len(kept) < 40, kept
    assert kept == [k * 10 + 9 for k in range(40 - len(kept), 40)]   # the last batches' transactions
    enqueue(40, 30)
    run(3)
    assert rows() == [(k * 2 + j, k) for k in range(70) for j in range(2)]
    assert scns() == [k * 10 + 9 for k in range(40, 70)]   # the first run's forgotten by the third batch
    conn.close()
