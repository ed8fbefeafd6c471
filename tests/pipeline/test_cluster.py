"""The same pipeline on a real Spark standalone cluster (a master and two workers on
loopback, from pip pyspark's spark-class) with the PostgreSQL store, run the way users
run it: ``sluice pipeline run --master spark://127.0.0.1:PORT --once`` in its own
process (a process has one SparkContext; this one's is the tests' local session).
Kept short: a few hundred transactions."""

from __future__ import annotations

import uuid

import pyarrow.parquet as pq

import sluice
from sluice import RowLCR
from sluice.pipeline import queueio
from sluice.rules.engine.ruleset import STREAMS_CONTEXT
from sluice.streams import evaluate_rule_sets

from ..conftest import PG_BASE, drop_schema, pg_admin
from . import drivers
from .cluster import standalone_cluster


def test_pipeline_on_a_standalone_cluster_with_the_postgresql_store(tmp_path):
    schema = "t_" + uuid.uuid4().hex[:12]
    pg_admin().close()
    dsn = f"{PG_BASE}?schema={schema}"
    conn = sluice.connect(dsn)
    try:
        conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
        conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("WH"))
        conn.rule_adm.create_rule_set("POS", STREAMS_CONTEXT)
        conn.rule_adm.create_rule("R_HR", ":dml.get_object_owner() = 'HR'", STREAMS_CONTEXT)
        conn.rule_adm.add_rule("R_HR", "POS")
        conn.streams_adm.rename_schema("r_hr", "hr", "hr2")
        q = conn.queue("STRM_Q")
        sent = []
        for t in range(300):
            txn = [RowLCR("DBS1.NET", "INSERT", ["HR", "OE"][(t + i) % 2], f"T{i % 4}", None, f"{t}.0.1",
                          t * 10 + i, None, {"ID": t * 10 + i}) for i in range(1 + t % 7)]
            q.enqmany([conn.msgproperties(payload=p) for p in txn])
            conn.commit()
            sent += txn
        kept = [lcr for lcr in sent if evaluate_rule_sets(conn, lcr, "POS").perform]
        with standalone_cluster(tmp_path / "cluster") as master:
            # with the UI, as a user's run: its address is printed
            args = drivers.command(dsn, "--queue", "STRM_Q", "--consumer", "WH", "--name", "wh",
                                   "--positive-rule-set", "POS", "--warehouse", str(tmp_path / "wh"),
                                   "--checkpoint-dir", str(tmp_path / "ck"), "--max-messages-per-batch", "600",
                                   "--once", "--master", master, "--conf", "spark.executor.memory=512m",
                                   "--conf", "spark.cores.max=2",
                                   "--conf", f"spark.executor.extraJavaOptions={drivers.QUICK_JVM}", ui=True)
            result = drivers.run(args, tmp_path / "driver.log")
        out = result.tail(100000)
        assert result.proc.returncode == 0, out[-3000:]
        assert f"-> warehouse; Spark UI http" in out and "msgs/s" in out
        table = pq.read_table(str(tmp_path / "wh")).to_pydict()
        got = sorted(zip(table["transaction_id"], map(int, table["scn"]), table["object_owner"]))
        assert got == sorted((lcr.get_transaction_id(), lcr.get_scn(), "HR2") for lcr in kept)
        cols, rows = queueio.progress_rows(dsn, "wh")
        status = dict(zip(cols, rows[0]))
        assert (status["STATE"], status["TOTAL_MESSAGES"]) == ("STOPPED", len(sent))
    finally:
        conn.close()
        drop_schema(schema)
