"""Exactly once across a kill -9 of the Spark driver (issue 16 §3), and a clean SIGTERM
stop.  A pipeline enqueuing from one queue into another (propagation on Spark), and an
apply process on Spark, are killed mid-run -- driver, JVM and Python workers, the whole
process group -- then restarted from their checkpoint; every source message must be in
the destination exactly once, in commit order per source transaction, and every source
transaction in the apply's target exactly once.  The convergence checkers compare what
arrived with what was sent."""

from __future__ import annotations

import signal
from collections import Counter

import sluice
from sluice import RowLCR
from sluice.pipeline import queueio
from sluice.pipeline.queueio import QueueRef

from . import drivers


def _arrived(dsn: str) -> int:
    ref = QueueRef.resolve(dsn, "DEST_Q", "READER")
    with queueio.open_raw(dsn) as raw:
        return raw.execute(f"SELECT COUNT(*) FROM {ref.table} WHERE CONSUMER_NAME = 'READER'").fetchone()[0]


def test_kill9_of_the_driver_then_restart_delivers_each_message_once(tmp_path):
    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("FWD"))
    conn.streams_adm.set_up_queue(queue_table="DEST_QT", queue_name="DEST_Q")
    conn.aqadm.add_subscriber(queue_name="DEST_Q", subscriber=sluice.Agent("READER"))
    q = conn.queue("STRM_Q")
    sent = []
    for t in range(300):
        txn = [RowLCR("DBS1.NET", "INSERT", "HR", "T", None, f"{t}.0.1", t * 10 + i, None, {"ID": t * 10 + i})
               for i in range(1 + t % 9)]
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
        sent += [(lcr.get_transaction_id(), lcr.get_scn()) for lcr in txn]
    args = drivers.command(dsn, "--queue", "STRM_Q", "--consumer", "FWD", "--name", "fwd", "--to-queue", "DEST_Q",
                           "--checkpoint-dir", str(tmp_path / "ck"), "--max-messages-per-batch", "500",
                           "--master", "local[2]")
    # one kill, chosen by progress: as soon as the first batch (~500 of ~1,500) has arrived,
    # before or while Spark records it done -- the restart replays it, or goes on after it
    first = drivers.Driver(args, tmp_path / "first.log")
    try:
        first.wait_for(lambda: _arrived(dsn) > 0, measure=lambda: _arrived(dsn))
        assert 0 < _arrived(dsn) < len(sent), first.tail()
    finally:
        first.kill()   # the driver's own process group: driver, JVM, workers
    killed_at = _arrived(dsn)
    second = drivers.run(args + ["--once"], tmp_path / "second.log")
    assert second.proc.returncode == 0, second.tail()

    dest = conn.queue("DEST_Q")
    dest.deqoptions.consumername = "READER"
    dest.deqoptions.wait = sluice.DEQ_NO_WAIT
    received = []
    while True:
        dest.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION
        try:
            batch = dest.deqmany(100000)
        except sluice.DatabaseError:
            break
        if not batch:
            break
        received += [(m.payload.get_transaction_id(), m.payload.get_scn()) for m in batch]
    conn.commit()
    counts = Counter(received)
    assert killed_at < len(sent)
    assert [k for k, n in counts.items() if n > 1] == []          # none twice
    assert set(counts) == set(sent)                                # none lost
    assert received == sorted(received, key=lambda k: (int(k[0].split(".")[0]), k[1]))   # commit order
    cols, rows = queueio.progress_rows(dsn, "fwd")
    assert dict(zip(cols, rows[0]))["TOTAL_MESSAGES"] == len(sent)
    conn.close()


def _applied(target: str) -> int:
    import sqlite3
    with sqlite3.connect(target, timeout=30) as t:
        return t.execute('SELECT COUNT(*) FROM "TGT.T"').fetchone()[0]


def test_kill9_of_the_apply_sink_mid_batch_then_restart_applies_each_transaction_once(tmp_path):
    """``sluice pipeline run --apply``: 240 source transactions (1-6 inserted rows each, an
    UPDATE of one of ten counter rows from its previous value -- applied twice it would
    conflict, ORA-26786 --, every fifth one a row its rule keeps from being executed and
    enqueues into another queue: SET_EXECUTE / SET_ENQUEUE_DESTINATION).  The driver is
    killed while batches of 200 messages are being applied by two tasks, then restarted
    from its checkpoint: the target holds every row once and each counter its number of
    updates, the error queue is empty, the other queue holds each enqueued row once."""
    import sqlite3

    from sluice.rules.engine.ruleset import STREAMS_CONTEXT

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    target = str(tmp_path / "target.db")
    link = f"sqlite:///{target}"
    with sqlite3.connect(target) as t:
        t.execute('CREATE TABLE "TGT.T" (id integer PRIMARY KEY, txn integer)')
        t.execute('CREATE TABLE "TGT.C" (id integer PRIMARY KEY, n integer)')
        t.execute('CREATE TABLE "TGT.M" (id integer PRIMARY KEY)')
        t.executemany('INSERT INTO "TGT.C" VALUES (?, 0)', [(c,) for c in range(10)])
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.create_queue_table(queue_table="MOVED_QT", queue_payload_type="SYS.ANYDATA")
    conn.aqadm.create_queue(queue_name="MOVED_Q", queue_table="MOVED_QT")
    conn.aqadm.start_queue(queue_name="MOVED_Q")
    adm = conn.rule_adm
    adm.create_rule_set("APOS", STREAMS_CONTEXT)
    adm.create_rule("R_TC", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() != 'M'", STREAMS_CONTEXT)
    adm.create_rule("R_M", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'M'", STREAMS_CONTEXT)
    for r in ("R_TC", "R_M"):
        adm.add_rule(r, "APOS")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="APK", rule_set_name="APOS",
                                apply_database_link=link, apply_captured=True)
    conn.apply_adm.set_schema_instantiation_scn("TGT", "DBS1.NET", 0, apply_database_link=link)
    conn.apply_adm.set_parameter("APK", "disable_on_error", "N")   # an error is seen in the error queue
    conn.apply_adm.set_execute("R_M", False)
    conn.apply_adm.set_enqueue_destination("R_M", "MOVED_Q")
    q = conn.queue("STRM_Q")
    rows, moved = 0, []
    for t in range(240):
        c = t % 10
        txn = [RowLCR("DBS1.NET", "INSERT", "TGT", "T", None, f"{t}.0.1", t * 10 + i, None,
                      {"ID": t * 10 + i, "TXN": t}, commit_scn=t * 10 + 9) for i in range(1 + t % 6)]
        txn.append(RowLCR("DBS1.NET", "UPDATE", "TGT", "C", None, f"{t}.0.1", t * 10 + 7, {"ID": c, "N": t // 10},
                          {"N": t // 10 + 1}, commit_scn=t * 10 + 9))
        if t % 5 == 0:
            txn.append(RowLCR("DBS1.NET", "INSERT", "TGT", "M", None, f"{t}.0.1", t * 10 + 8, None, {"ID": t},
                              commit_scn=t * 10 + 9))
            moved.append(t)
        rows += 1 + t % 6
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
    args = drivers.command(dsn, "--apply", "APK", "--checkpoint-dir", str(tmp_path / "ck"),
                           "--max-messages-per-batch", "300", "--master", "local[2]")
    # one kill, chosen by progress: a quarter of the rows is in, inside the first batch (~64
    # transactions, ~220 rows), while its two tasks apply it
    first = drivers.Driver(args, tmp_path / "first.log")
    try:
        first.wait_for(lambda: _applied(target) >= rows // 4, measure=lambda: _applied(target), interval=0.1)
        assert 0 < _applied(target) < rows, first.tail()
    finally:
        first.kill()   # mid-batch: the tasks are applying its transactions
    killed_at = _applied(target)
    second = drivers.run(args + ["--once"], tmp_path / "second.log")
    assert second.proc.returncode == 0, second.tail()

    with sqlite3.connect(target) as t:
        got = t.execute('SELECT id, txn FROM "TGT.T" ORDER BY id').fetchall()
        counters = t.execute('SELECT id, n FROM "TGT.C" ORDER BY id').fetchall()
        not_executed = t.execute('SELECT COUNT(*) FROM "TGT.M"').fetchone()[0]
    assert killed_at < rows
    assert got == sorted((t * 10 + i, t) for t in range(240) for i in range(1 + t % 6))   # none lost, none twice
    assert counters == [(c, 24) for c in range(10)]                                        # each update once
    assert conn.query("SELECT COUNT(*) FROM SLUICE_APPLY_ERROR", None)[1][0][0] == 0
    assert not_executed == 0
    mq = conn.queue("MOVED_Q")
    mq.deqoptions.wait = sluice.DEQ_NO_WAIT
    enqueued = []
    while (m := mq.deqone()) is not None:
        enqueued.append(m.payload.get_value("NEW", "ID").value)
    conn.commit()
    assert sorted(enqueued) == moved                                                       # each once
    conn.close()


def test_sigterm_stops_the_pipeline_cleanly(tmp_path):
    """``sluice pipeline run`` ends on SIGTERM: the batch in flight is finished (or left to
    the checkpoint), the process exits 0, the status says STOPPED, nothing is lost."""
    import pyarrow.parquet as pq

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("WH"))
    q = conn.queue("STRM_Q")
    for t in range(100):
        q.enqmany([conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "HR", "T", None, f"{t}.0.1",
                                                      t * 10 + i, None, {"ID": t * 10 + i})) for i in range(5)])
        conn.commit()
    def total() -> int | None:
        cols, rows = queueio.progress_rows(dsn, "wh")
        return dict(zip(cols, rows[0]))["TOTAL_MESSAGES"] if rows else None

    proc = drivers.Driver(drivers.command(dsn, "--queue", "STRM_Q", "--consumer", "WH", "--name", "wh",
                                          "--warehouse", str(tmp_path / "wh"), "--checkpoint-dir", str(tmp_path / "ck"),
                                          "--master", "local[2]"), tmp_path / "driver.log")
    try:
        proc.wait_for(lambda: total() == 500, measure=total, interval=0.5)
        proc.signal(signal.SIGTERM)
        proc.finish()
    finally:
        proc.kill()
    assert proc.proc.returncode == 0, proc.tail()
    cols, rows = queueio.progress_rows(dsn, "wh")
    status = dict(zip(cols, rows[0]))
    assert (status["STATE"], status["TOTAL_MESSAGES"], status["LAST_ERROR"]) == ("STOPPED", 500, None)
    assert len(pq.read_table(str(tmp_path / "wh"))) == 500
    conn.close()
