"""Seed 001's replication, end to end, across sites (issue 15: "capture at dbs1 → propagate
→ apply at dbs2 runs end to end"): a capture process at site DBS1 captures a PostgreSQL
source into its queue, a propagation carries the LCRs over a database link to the queue of
site DBS2 (another store), and DBS2's apply process applies them, through a database link of
its own, to the replica (a second PostgreSQL database, or an SQLite file).  The convergence
checker finds the replica equal to the source row by row; the LCRs keep their source
database name and source transactions across the hop.  Both store backends."""

from __future__ import annotations

import random

import sluice
from sluice.streams.apply import ApplyProcess
from sluice.streams.apply.compare import compare
from sluice.streams.apply.targetdsn import open_target
from sluice.streams.propagation.runner import PropagationRunner
from tests.conftest import PG_BASE
from tests.streams.applykit import replica  # noqa: F401  (fixture)
from tests.streams.capturekit import env  # noqa: F401  (fixture)
from tests.streams.propkit import Sites


def test_capture_propagate_apply(env, replica, tmp_path):
    s, owner = env.src, env.owner
    env.sql(f"CREATE TABLE {s}.orders (id int PRIMARY KEY, customer text, amount numeric(12,2), placed date)")
    if replica.kind == "postgresql":
        replica.sql(f"CREATE SCHEMA {s}")
    replica.sql(f"CREATE TABLE {replica.table(owner, 'ORDERS')} (id int PRIMARY KEY, customer text, "
                f"amount numeric(12,2), placed date)")
    sites = Sites(env.dsn, tmp_path)
    try:
        dbs1 = env.conn
        dbs2 = sites.open("dbs2")
        # DBS2: its queue and its apply process (applying to the replica through a database link)
        dbs2.streams_adm.set_up_queue(queue_table="STREAMS_QUEUE_TABLE", queue_name="STREAMS_QUEUE")
        dbs2.cursor().execute(f"CREATE DATABASE LINK replica.net USING '{replica.link}'")
        dbs2.apply_adm.create_apply(queue_name="STREAMS_QUEUE", apply_name="APPLY_DBS2",
                                    apply_database_link="replica.net", apply_captured=True)
        source_db = env.pg.info.dbname.upper()
        dbs2.apply_adm.set_schema_instantiation_scn(owner, source_db, 0, apply_database_link="replica.net")
        # DBS1: capture, and the propagation to DBS2
        env.create_capture(rule_set_name=env.table_rule_set("CAP_RS", "orders"))
        dbs1.capture_adm.start_capture(capture_name="CAP")
        dbs1.cursor().execute(f"CREATE DATABASE LINK dbs2.net USING '{sites.dsn_of('dbs2')}'")
        dbs1.propagation_adm.create_propagation(propagation_name="DBS1_TO_DBS2", source_queue="STRM_Q",
                                                destination_queue="STREAMS_QUEUE",
                                                destination_dblink="dbs2.net")
        rng = random.Random(1)
        live: list[int] = []
        for t in range(60):
            stmts = []
            for _ in range(rng.randint(1, 6)):
                if not live or rng.random() < 0.6:
                    i = t * 10 + len(stmts)
                    live.append(i)
                    stmts.append(f"INSERT INTO {s}.orders VALUES ({i}, 'c{i}', {rng.randint(1, 99999)}.{rng.randint(0, 99)}, "
                                 f"'2026-11-{rng.randint(1, 25):02d}')")
                elif rng.random() < 0.7:
                    stmts.append(f"UPDATE {s}.orders SET amount = amount + 1, customer = 'u{t}' "
                                 f"WHERE id = {rng.choice(live)}")
                else:
                    stmts.append(f"DELETE FROM {s}.orders WHERE id = {live.pop(rng.randrange(len(live)))}")
            env.sql(*stmts)
        cap = env.process()
        cap.catch_up()
        # the capture queue has a second consumer (the env's APPLY1): no combined capture and apply
        assert cap.combined is None
        assert dbs1.query("SELECT OPTIMIZATION FROM V$STREAMS_CAPTURE", None)[1] == [(0,)]
        runner = PropagationRunner(dbs1)
        try:
            while runner.run_once(force=True):
                pass
        finally:
            runner.close()
        apply = ApplyProcess.from_catalog(sluice.connect(sites.dsn_of("dbs2")), "APPLY_DBS2")
        env.procs.append(apply)
        assert apply.drain() > 0
        assert dbs2.query("SELECT COUNT(*) FROM DBA_APPLY_ERROR", None)[1] == [(0,)]
        progress = dbs2.query("SELECT SOURCE_DATABASE FROM DBA_APPLY_PROGRESS", None)[1]
        assert progress == [(source_db,)]
        src, dst = open_target(PG_BASE, "", None, None), open_target(replica.link, "", None, None)
        try:
            result = compare(src, owner, "ORDERS", dst, owner, "ORDERS")
        finally:
            src.close()
            dst.close()
        assert result.consistent, result.differences[:5]
        assert result.source_rows == len(live) > 0
    finally:
        sites.close()
