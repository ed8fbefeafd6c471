"""The pipeline on Spark, end to end, in one shared SparkSession (few Spark tests, large
batches: DESIGN.md section 5).

A commit-time ANYDATA queue (SET_UP_QUEUE) holds a few thousand row LCRs in a few
hundred transactions, DDL LCRs, user messages and one malformed LCR.  The streaming
source reads it in batches of whole transactions; rule sets (positive and negative)
decide with the Spark rule compiler; declarative transformations and a custom one run;
the warehouse sink writes Parquet by queue and day and the reports read it; another
pipeline enqueues into a second queue.  What reaches each sink must be exactly what the
Python path decides and transforms (evaluate_rule_sets, sluice.streams.transform) for
the same LCRs; every message is acknowledged once its batch is committed.
"""

from __future__ import annotations

import io
import random
from decimal import Decimal

import pytest

import sluice
from sluice import DDLLCR, RowLCR
from sluice.pipeline import queueio, restart
from sluice.pipeline.report import report
from sluice.pipeline.runner import PipelineRun, check_master
from sluice.pipeline.source import register
from sluice.pipeline.stages import PipelineSpec
from sluice.rules.compile.typed.lcrschema import LCR_COLUMNS, lcr_row
from sluice.rules.engine.ruleset import STREAMS_CONTEXT
from sluice.rules.engine.types import NVList
from sluice.streams import evaluate_rule_sets
from sluice.streams.rowmigration import ROW_SUBSET, migrate
from sluice.streams.transform import transform
from sluice.streams.transform.adm import declarative_transformations


def shout(lcr):
    """A custom rule-based transformation: the NAME column in capitals."""
    value = lcr.get_value("NEW", "NAME")
    if value is not None and value.value is not None:
        lcr.set_value("NEW", "NAME", value.value.upper())
    return lcr


def upper_note(lcr):
    """The STREAMS$_TRANSFORM_FUNCTION of the differential apply test: NAME in capitals;
    a row whose NAME ends in 7 is discarded (a transformation returning NULL)."""
    name = lcr.get_value("NEW", "NAME").value
    if name.endswith("7"):
        return None
    lcr.set_value("NEW", "NAME", name.upper())
    return lcr


def workload(n_txn: int) -> list[list]:
    rnd = random.Random(16)
    txns = []
    for t in range(n_txn):
        txn = []
        for i in range(rnd.randint(1, 12)):
            table = rnd.choice(["REGIONS", "JOBS", "EMP", "SECRET", "SUBS"])
            command = rnd.choice(["INSERT", "INSERT", "UPDATE", "DELETE"])
            key = {"ID": t * 100 + i}
            old = {**key, "NAME": f"o{i}", "NOTE": "x"} if command != "INSERT" else None
            new = {**key, "NAME": f"n{i}", "NOTE": "y", "AMOUNT": Decimal(i) / 4} if command != "DELETE" else None
            txn.append(RowLCR("DBS1.NET", command, rnd.choice(["HR", "OE"]), table, None, f"{t}.0.1", t * 100 + i,
                              old, new, commit_scn=t * 100 + 99))
        if t % 50 == 0:
            txn.append(DDLLCR("DBS1.NET", "CREATE TABLE", "HR", f"NEW{t}", "TABLE", "CREATE TABLE x (a NUMBER)",
                              transaction_id=f"{t}.0.1", scn=t * 100 + 98, commit_scn=t * 100 + 99))
        txns.append(txn)
    return txns


def define(conn) -> None:
    adm = conn.rule_adm
    adm.create_rule_set("POS", STREAMS_CONTEXT)
    adm.create_rule_set("NEG", STREAMS_CONTEXT)
    for name, condition, rule_set in [
            ("R_REGIONS", ":dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'REGIONS'", "POS"),
            ("R_JOBS", ":dml.get_object_name() = 'JOBS'", "POS"),
            ("R_EMP", ":dml.get_object_name() = 'EMP' and :dml.get_command_type() != 'DELETE'", "POS"),
            ("R_SECRET", ":dml.get_object_name() = 'SECRET'", "POS"),
            ("R_DDL", ":ddl.get_object_owner() = 'HR'", "POS"),
            ("N_OE_SECRET", ":dml.get_object_owner() = 'OE' and :dml.get_object_name() = 'SECRET'", "NEG")]:
        adm.create_rule(name, condition, STREAMS_CONTEXT)
        adm.add_rule(name, rule_set)
    # subset rules as ADD_SUBSET_RULES makes them: an UPDATE into the subset (NAME ending
    # in an even digit) migrates to an INSERT, one out of it to a DELETE
    subset = ":dml.get_object_name() = 'SUBS' and :dml.get_command_type() = 'UPDATE' and "
    for name, condition, operation in [
            ("R_SUB_IN", "(:dml.get_value('OLD', 'ID').AccessNumber() < 15000) and "
                         ":dml.get_value('NEW', 'NAME').AccessVarchar2() LIKE 'n%'", "INSERT"),
            ("R_SUB_OUT", ":dml.get_value('OLD', 'ID').AccessNumber() >= 15000", "DELETE")]:
        adm.create_rule(name, subset + condition, STREAMS_CONTEXT, NVList({ROW_SUBSET: operation}))
        adm.add_rule(name, "POS")
    s = conn.streams_adm
    s.rename_table("r_regions", "hr.regions", "hr.areas")
    s.delete_column("r_regions", "hr.regions", "note")
    s.rename_schema("r_jobs", "oe", "sales")
    s.rename_column("r_jobs", "hr.jobs", "name", "title")
    s.keep_columns("r_emp", "hr.emp", "id,name")
    s.add_column("r_emp", "oe.emp", "origin", "DBS1")


def expected(conn, lcrs: list, custom: dict) -> dict:
    """What the Python path makes of the LCRs: key -> the LCR's columns after it all."""
    by_rule = declarative_transformations(conn.context.store)
    out = {}
    for lcr in lcrs:
        verdict = evaluate_rule_sets(conn, lcr, "POS", "NEG")
        if not verdict.perform:
            continue
        rule = verdict.rule.rule_name
        lcr = migrate(lcr, verdict.rule)
        transform(lcr, by_rule.get(rule, ()))
        if rule in custom:
            lcr = custom[rule](lcr)
        out[(lcr.get_transaction_id(), int(lcr.get_scn()))] = _comparable(lcr_row(lcr))
    return out


LCR_NAMES = [c for c in LCR_COLUMNS if c not in ("scn", "commit_scn")]


def _comparable(row) -> tuple:
    return tuple(dict(row[c]) if isinstance(row[c], (dict, list)) and c.endswith(("values", "types")) and row[c]
                 is not None else row[c] for c in LCR_COLUMNS if c not in ("scn", "commit_scn"))


def sqlite_apply_site(tmp_path, apply_name: str) -> tuple[str, object, str]:
    """(store DSN, a connection, the target's path): an SQLite store with the commit-time
    queue STRM_Q and apply process ``apply_name`` of captured LCRs into the SQLite target's
    table TGT.T (id key, n), instantiated at SCN 0."""
    import sqlite3

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    target = str(tmp_path / "target.db")
    with sqlite3.connect(target) as t:
        t.execute('CREATE TABLE "TGT.T" (id integer PRIMARY KEY, n integer)')
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=apply_name, apply_database_link=f"sqlite:///{target}",
                                apply_captured=True)
    conn.apply_adm.set_schema_instantiation_scn("TGT", "DBS1.NET", 0, apply_database_link=f"sqlite:///{target}")
    return dsn, conn, target


def test_sqlite_store_with_a_cluster_master_is_refused(tmp_path):
    with pytest.raises(sluice.NotSupportedError, match="local database file"):
        check_master("spark://127.0.0.1:7077", f"sqlite:///{tmp_path}/s.db")
    check_master("local[2]", f"sqlite:///{tmp_path}/s.db")   # local: fine


def test_pipeline_on_spark_matches_the_python_path(spark, tmp_path):
    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    for consumer in ("WH", "FWD"):
        conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(consumer))
    conn.streams_adm.set_up_queue(queue_table="DEST_QT", queue_name="DEST_Q")
    conn.aqadm.add_subscriber(queue_name="DEST_Q", subscriber=sluice.Agent("READER"))
    define(conn)
    txns = workload(300)
    q = conn.queue("STRM_Q")
    for txn in txns:
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
    q.enqmany([conn.msgproperties(payload={"order": 1}), conn.msgproperties(payload=b"\x01")])
    conn.commit()
    total = sum(map(len, txns)) + 2
    register(spark)
    history = spark.read.format("sluice").option("dsn", dsn).option("queue", "STRM_Q").load()
    assert history.count() == 2 * total   # a record per subscriber, every state

    custom = {"SLUICE.R_SECRET": shout}
    want = expected(conn, [lcr for txn in workload(300) for lcr in txn], custom)
    out = io.StringIO()
    spec = PipelineSpec("wh", dsn, "STRM_Q", "WH", "POS", "NEG", max_messages_per_batch=700,
                        custom_transformations=custom)
    run = PipelineRun(spark, spec, conn, conn.context.store, "warehouse", str(tmp_path / "ck"),
                      path=str(tmp_path / "wh"), out=out, trigger={"availableNow": True})
    run.start()
    run.wait(timeout=300)
    wh = spark.read.parquet(str(tmp_path / "wh"))
    got = {(r["transaction_id"], int(r["scn"])): _comparable(r.asDict()) for r in wh.where("lcr_kind IS NOT NULL").collect()}
    assert got == want and len(want) > 500
    # only the subset rules take SUBS rows, only UPDATEs: every one migrated, both ways
    subs = [v for v in want.values() if v[LCR_NAMES.index("object_name")] == "SUBS"]
    assert {v[LCR_NAMES.index("command_type")] for v in subs} == {"INSERT", "DELETE"}
    assert wh.where("lcr_kind IS NULL").count() == 2                       # the user messages too
    assert {r["queue"] for r in wh.select("queue").distinct().collect()} == {"SLUICE.STRM_Q"}
    assert "msgs/s" in out.getvalue() and "batch 1:" in out.getvalue()    # more than one batch

    cols, vol = report(spark, str(tmp_path / "wh"), "volume")
    assert sum(r[cols.index("messages")] for r in vol) == len(want) + 2
    cols, lag = report(spark, str(tmp_path / "wh"), "lag")
    assert lag[0][cols.index("messages")] == len(want) + 2 and lag[0][cols.index("p50_seconds")] >= 0
    cols, top = report(spark, str(tmp_path / "wh"), "tables", top=3)
    assert len(top) == 3 and top[0][cols.index("changes")] >= top[1][cols.index("changes")]
    # a warehouse made but not written yet (its sink's log only): the same columns, no rows
    (tmp_path / "empty" / "_spark_metadata").mkdir(parents=True)
    for name in ("volume", "lag", "tables"):
        assert report(spark, str(tmp_path / "empty"), name) == (report(spark, str(tmp_path / "wh"), name)[0], [])

    # acknowledged once committed: the WH records are consumed, the low-watermark is the last commit
    with queueio.open_raw(dsn) as raw:
        ref = queueio.QueueRef.resolve(dsn, "STRM_Q", "WH")
        assert queueio.latest_position(raw, ref, 0) == 0
        last = raw.execute(f"SELECT MAX(CSCN) FROM {ref.table}").fetchone()[0]
        assert queueio.low_watermark(raw, "wh") == last
    cols, status = queueio.progress_rows(dsn, "wh")
    assert dict(zip(cols, status[0]))["TOTAL_MESSAGES"] == total

    # propagation on Spark: into DEST_Q, in commit order, what the rules let through
    spec = PipelineSpec("fwd", dsn, "STRM_Q", "FWD", "POS", "NEG", custom_transformations=custom)
    run = PipelineRun(spark, spec, conn, conn.context.store, "enqueue", str(tmp_path / "ck"),
                      to_queue="DEST_Q", connect=sluice.connect, trigger={"availableNow": True})
    run.start()
    run.wait(timeout=300)
    dest = conn.queue("DEST_Q")
    dest.deqoptions.consumername = "READER"
    dest.deqoptions.wait = sluice.DEQ_NO_WAIT
    received = []
    while True:   # a transactional queue: one enqueuing transaction after the other
        dest.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION
        try:
            batch = dest.deqmany(100000)
        except sluice.DatabaseError:
            break   # ORA-25228: nothing left
        if not batch:
            break
        received += [m.payload for m in batch]
    conn.commit()
    lcrs = [p for p in received if hasattr(p, "get_scn")]
    assert {(p.get_transaction_id(), int(p.get_scn())): _comparable(lcr_row(p)) for p in lcrs} == want
    assert [int(p.get_commit_scn()) for p in lcrs] == sorted(int(p.get_commit_scn()) for p in lcrs)
    assert sorted(map(repr, (p for p in received if not hasattr(p, "get_scn")))) == sorted(map(repr, [{"order": 1}, b"\x01"]))
    conn.close()


def test_rule_sets_spark_cannot_compile_are_decided_in_python_with_the_same_answer(spark, tmp_path, caplog):
    from sluice.pipeline.stages import decide, rule_sets

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("WH"))
    define(conn)
    # get_extra_attribute is no LCR column: the rule set cannot be a Spark Column
    conn.rule_adm.create_rule("R_EXTRA", ":dml.get_extra_attribute('USERNAME') IS NULL AND "
                              ":dml.get_object_name() = 'EMP'", STREAMS_CONTEXT)
    conn.rule_adm.add_rule("R_EXTRA", "POS")
    q = conn.queue("STRM_Q")
    for txn in workload(60):
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()
    register(spark)
    df = spark.read.format("sluice").option("dsn", dsn).option("queue", "STRM_Q").load()
    spec = PipelineSpec("py", dsn, "STRM_Q", "WH", "POS", "NEG")
    with caplog.at_level("WARNING", logger="sluice.pipeline"):
        sets = rule_sets(conn, spec)
        out = decide(df, conn.context.store, sets)
    assert sets.python and "evaluated in Python" in caplog.text
    got = {(r["transaction_id"], int(r["scn"])): _comparable(r.asDict()) for r in out.collect()}
    assert got == expected(conn, [lcr for txn in workload(60) for lcr in txn], {}) and got
    conn.close()


def test_apply_on_spark_equals_the_python_apply_process(spark, tmp_path):
    """Differential (issue 16 §3): the same LCR stream through the Python apply process and
    through Spark (rules, row migration, a declarative transformation, the apply engine in
    foreachBatch) gives identical target tables and identical error queues (a missing row, a
    duplicate key); the rules' action contexts alike -- a custom rule-based transformation
    (STREAMS$_TRANSFORM_FUNCTION), SET_EXECUTE(FALSE) with SET_ENQUEUE_DESTINATION (the same
    messages reach the other queue, none is executed) -- and a DML handler registered by
    name on the driver only (a closure: its Python workers get it shipped with the plan).
    Then a transformation whose module the executors cannot import stops the apply as a
    missing function stops the Python apply process (ABORTED, ORA-00904 saying why, nothing
    in the error queue); registered again in a form that travels, START_APPLY and the run
    again apply what was left, once."""
    import sqlite3
    import sys
    from sluice.streams.apply import ApplyProcess

    def tagged(lcr):   # the DML handler: defined here, known only to the driver's registry
        lcr.set_value("NEW", "NAME", "h:" + lcr.get_value("NEW", "NAME").value)
        lcr.execute(True)
    sluice.register_function("diff.tagged", tagged)
    sluice.register_function("diff.upper_note", upper_note)

    dsn = f"sqlite:///{tmp_path / 'site.db'}"
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    adm = conn.rule_adm
    adm.create_rule_set("APOS", STREAMS_CONTEXT)
    adm.create_rule("A_EMP", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'EMP'", STREAMS_CONTEXT)
    adm.create_rule("A_SUB", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'SUB' and "
                             ":dml.get_command_type() = 'UPDATE'", STREAMS_CONTEXT, NVList({ROW_SUBSET: "INSERT"}))
    adm.create_rule("A_NOTE", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'NOTE'",
                    STREAMS_CONTEXT, NVList({"STREAMS$_TRANSFORM_FUNCTION": "diff.upper_note"}))
    adm.create_rule("A_LOG", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'LOG'", STREAMS_CONTEXT)
    adm.create_rule("A_HND", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'HND'", STREAMS_CONTEXT)
    adm.create_rule("A_GONE", ":dml.get_object_owner() = 'TGT' and :dml.get_object_name() = 'GONE'",
                    STREAMS_CONTEXT, NVList({"STREAMS$_TRANSFORM_FUNCTION": "diff.gone"}))
    for r in ("A_EMP", "A_SUB", "A_NOTE", "A_LOG", "A_HND", "A_GONE"):
        adm.add_rule(r, "APOS")
    conn.streams_adm.rename_column("a_emp", "tgt.emp", "name", "title")   # both engines perform it
    conn.aqadm.create_queue_table(queue_table="MOVED_QT", queue_payload_type="SYS.ANYDATA")
    conn.aqadm.create_queue(queue_name="MOVED_Q", queue_table="MOVED_QT")
    conn.aqadm.start_queue(queue_name="MOVED_Q")
    conn.apply_adm.set_execute("A_LOG", False)
    conn.apply_adm.set_enqueue_destination("A_LOG", "MOVED_Q")
    targets = {}
    for name in ("APY", "APS"):
        path = str(tmp_path / f"{name}.db")
        with sqlite3.connect(path) as t:
            t.execute('CREATE TABLE "TGT.EMP" (id integer PRIMARY KEY, title varchar(40))')
            t.execute('CREATE TABLE "TGT.SUB" (id integer PRIMARY KEY, name varchar(40))')
            for table in ("NOTE", "LOG", "HND", "GONE"):
                t.execute(f'CREATE TABLE "TGT.{table}" (id integer PRIMARY KEY, name varchar(40))')
        targets[name] = path
        conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=name, rule_set_name="APOS",
                                    apply_database_link=f"sqlite:///{path}", apply_captured=True)
        conn.apply_adm.set_schema_instantiation_scn("TGT", "DBS1.NET", 0, apply_database_link=f"sqlite:///{path}")
        conn.apply_adm.set_parameter(name, "disable_on_error", "N")   # both go on past errors
        try:
            conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(name))
        except sluice.DatabaseError:
            pass   # CREATE_APPLY made it a subscriber already
    rnd = random.Random(3)
    q = conn.queue("STRM_Q")
    live: set[int] = set()
    for t in range(150):
        txn = []
        for i in range(rnd.randint(1, 6)):
            scn = t * 10 + i
            pick = rnd.random()
            if pick < 0.5 or not live:
                key = rnd.randrange(400)           # sometimes a key that exists: ORA-00001
                txn.append(RowLCR("DBS1.NET", "INSERT", "TGT", "EMP", None, f"{t}.0.1", scn, None,
                                  {"ID": key, "NAME": f"n{scn}"}, commit_scn=t * 10 + 9))
                live.add(key)
            elif pick < 0.8:
                key = rnd.choice(sorted(live)) if rnd.random() < 0.9 else 10_000 + scn   # missing: ORA-26787
                txn.append(RowLCR("DBS1.NET", "UPDATE", "TGT", "EMP", None, f"{t}.0.1", scn,
                                  {"ID": key}, {"NAME": f"u{scn}"}, commit_scn=t * 10 + 9))
            elif pick < 0.85:
                txn.append(RowLCR("DBS1.NET", "UPDATE", "TGT", "SUB", None, f"{t}.0.1", scn,
                                  {"ID": scn, "NAME": "before"}, {"NAME": "after"}, commit_scn=t * 10 + 9))
            elif pick < 0.9:
                txn.append(RowLCR("DBS1.NET", "INSERT", "TGT", rnd.choice(["NOTE", "LOG", "HND"]), None,
                                  f"{t}.0.1", scn, None, {"ID": scn, "NAME": f"v{scn}"}, commit_scn=t * 10 + 9))
            else:
                txn.append(RowLCR("DBS1.NET", "INSERT", "OTHER", "EMP", None, f"{t}.0.1", scn, None,
                                  {"ID": scn}, commit_scn=t * 10 + 9))   # no rule: discarded
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()

    for name in ("APY", "APS"):
        conn.apply_adm.set_dml_handler("TGT.HND", operation_name="INSERT", user_procedure="diff.tagged",
                                       apply_name=name, apply_database_link=f"sqlite:///{targets[name]}")

    def moved():
        """The messages SET_ENQUEUE_DESTINATION put into MOVED_Q since last asked (taken)."""
        mq = conn.queue("MOVED_Q")
        mq.deqoptions.wait = sluice.DEQ_NO_WAIT
        got = []
        while (m := mq.deqone()) is not None:
            got.append((m.payload.get_object_name(), m.payload.get_scn(), m.payload.get_value("NEW", "NAME").value))
        conn.commit()
        return sorted(got)

    py = ApplyProcess.from_catalog(sluice.connect(dsn), "APY")
    try:
        py.drain(120)
    finally:
        py.stop()
        py.conn.close()
    moved_by_python = moved()
    register(spark)
    spec = PipelineSpec("aps", dsn, "STRM_Q", "APS", "APOS", max_messages_per_batch=200)
    run = PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                      connect=sluice.connect, apply_name="APS", trigger={"availableNow": True})
    run.start()
    run.wait(timeout=300)

    def table(path, name):
        with sqlite3.connect(path) as t:
            return t.execute(f'SELECT * FROM "TGT.{name}" ORDER BY 1').fetchall()
    for name in ("EMP", "SUB", "NOTE", "LOG", "HND"):
        assert table(targets["APY"], name) == table(targets["APS"], name)
    assert len(table(targets["APS"], "EMP")) > 50 and table(targets["APS"], "SUB")   # migrated UPDATEs inserted
    notes = table(targets["APS"], "NOTE")
    assert notes and all(n == n.upper() and not n.endswith("7") for _, n in notes)   # transformed, some discarded
    assert table(targets["APS"], "LOG") == []                                       # SET_EXECUTE(FALSE)
    assert moved() == moved_by_python and moved_by_python                           # SET_ENQUEUE_DESTINATION
    assert table(targets["APS"], "HND") and all(n.startswith("h:") for _, n in table(targets["APS"], "HND"))

    def errors(apply_name):
        return sorted(conn.query("SELECT SOURCE_TRANSACTION_ID, SOURCE_COMMIT_SCN, MESSAGE_NUMBER, ERROR_NUMBER, "
                                 "MESSAGE_COUNT, MESSAGES FROM SLUICE_APPLY_ERROR WHERE APPLY_NAME = :1",
                                 [apply_name])[1], key=repr)
    assert errors("APY") == errors("APS") and {e[3] for e in errors("APS")} == {1, 26787}

    # bad input: a malformed LCR goes to the error queue with its reason, the stream goes on
    q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", "EMP", None, "900.0.1", 9000, None,
                                               {"ID": 9000}, commit_scn=9009)))
    conn.commit()
    q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", "EMP", None, "901.0.1", 9010, None,
                                               {"ID": 9010, "NAME": "after the bad one"}, commit_scn=9019)))
    conn.commit()
    ref = queueio.QueueRef.resolve(dsn, "STRM_Q", "APS")
    with queueio.open_raw(dsn) as raw:
        raw.execute(f"UPDATE {ref.table} SET USER_DATA = ? WHERE CSCN = (SELECT MAX(CSCN) - 1 FROM {ref.table}) "
                    f"AND CONSUMER_NAME = 'APS'", ['{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"X","new":[]}}'])
    run = PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                      connect=sluice.connect, apply_name="APS", trigger={"availableNow": True})
    run.start()
    run.wait(timeout=300)
    bad = [e for e in errors("APS") if e[3] == 25215]
    assert len(bad) == 1 and "no LCR or user message" in conn.query(
        "SELECT ERROR_MESSAGE FROM SLUICE_APPLY_ERROR WHERE ERROR_NUMBER = 25215", None)[1][0][0]
    assert (9010, "after the bad one") in table(targets["APS"], "EMP")

    # a transformation registered on the driver from a module the executors cannot import:
    # the apply stops at its transaction, ABORTED with ORA-00904 and the reason
    (tmp_path / "driveronly").mkdir()
    (tmp_path / "driveronly" / "gone_mod.py").write_text("def gone(lcr):\n    return lcr\n")
    sys.path.insert(0, str(tmp_path / "driveronly"))
    try:
        import gone_mod
        sluice.register_function("diff.gone", gone_mod.gone)
        for t, table_name in ((950, "GONE"), (951, "NOTE")):
            q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", table_name, None, f"{t}.0.1",
                                                       t * 10, None, {"ID": t, "NAME": "late"},
                                                       commit_scn=t * 10 + 9)))
            conn.commit()
        run = PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                          connect=sluice.connect, apply_name="APS", trigger={"availableNow": True})
        run.start()
        with pytest.raises(Exception, match="ORA-00904"):   # the run ends with the apply's error
            run.wait(timeout=300)
    finally:
        sys.path.remove(str(tmp_path / "driveronly"))
    [(status, number, message)] = conn.query("SELECT STATUS, ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY "
                                             "WHERE APPLY_NAME = 'APS'", None)[1]
    assert (status, number) == ("ABORTED", 904) and "not loadable on this executor" in message
    assert conn.query("SELECT COUNT(*) FROM SLUICE_APPLY_ERROR WHERE APPLY_NAME = 'APS' AND ERROR_NUMBER = 904",
                      None)[1] == [(0,)]
    assert table(targets["APS"], "GONE") == [] and (951, "LATE") not in table(targets["APS"], "NOTE")

    def gone_mended(lcr):   # defined here: pickled by value, it travels
        return lcr
    sluice.register_function("diff.gone", gone_mended)
    conn.apply_adm.start_apply("APS")
    run = PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                      connect=sluice.connect, apply_name="APS", trigger={"availableNow": True})
    run.start()
    run.wait(timeout=300)
    assert table(targets["APS"], "GONE") == [(950, "late")]
    assert [r for r in table(targets["APS"], "NOTE") if r[0] == 951] == [(951, "LATE")]
    conn.close()


def test_an_apply_runs_on_one_engine_at_a_time(spark, tmp_path):
    """DESIGN §7, each process exactly once, on either engine: a Spark run of an apply a
    host runs is refused with ORA-26666 before its query starts; once the host lets it go,
    the run holds the apply's lease (another engine is refused, naming the pipeline) until
    it ends, and lets it go then (sluice.pipeline.lease; the store side on both stores:
    tests/streams/test_engine_lease.py)."""
    import functools
    import sqlite3

    from sluice.pipeline.lease import ProcessLease
    from sluice.streams.host import Host
    from tests.streams.hostkit import TestKind, wait_for

    dsn, conn, target = sqlite_apply_site(tmp_path, "APL")
    q = conn.queue("STRM_Q")
    for k in range(3):
        q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", "T", None, f"{k}.0.1", k * 10,
                                                   None, {"ID": k, "N": k}, commit_scn=k * 10 + 9)))
        conn.commit()
    register(spark)
    spec = PipelineSpec("apl", dsn, "STRM_Q", "APL", None)

    def run_of_apl():
        return PipelineRun(spark, spec, conn, conn.context.store, "apply", str(tmp_path / "ck"),
                           connect=sluice.connect, apply_name="APL", trigger={"availableNow": True})
    tk = TestKind("APPLY")            # the host's run of APL: the test's own, it reads nothing
    tk.enable("APL")
    with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind]) as host:
        wait_for(lambda: host.running() == [("APPLY", "APL")], 10)
        refused = run_of_apl()
        with pytest.raises(sluice.DatabaseError, match=f"ORA-26666.*APL.*process host {host.host_id[:8]}"):
            refused.start()
        assert refused.query is None and spark.streams.active == []
    run = run_of_apl()
    run.start()
    with pytest.raises(sluice.DatabaseError, match="ORA-26666.*APL.*runs on Spark as pipeline apl"):
        ProcessLease(conn.context.store, dsn, "other", ("APPLY", "APL")).acquire()
    run.wait(timeout=300)
    with sqlite3.connect(target) as t:
        assert t.execute('SELECT id, n FROM "TGT.T" ORDER BY id').fetchall() == [(0, 0), (1, 1), (2, 2)]
    ProcessLease(conn.context.store, dsn, "other", ("APPLY", "APL")).acquire().release()   # free again
    assert conn.query("SELECT COUNT(*) FROM V$STREAMS_HOSTED", None)[1] == [(0,)]
    conn.close()


def test_apply_tasks_wait_for_the_transactions_of_other_tasks_they_depend_on(spark, tmp_path):
    """Cross-task waits (the apply sink spread over two tasks): 200 transactions each insert
    a row and spread over both tasks; then 100 each update two rows inserted on different
    tasks.  Such a transaction goes to one task and must wait there until the other task's
    transaction is recorded in the target (SLUICE_APPLY_DONE): the waits are counted on the
    driver (an accumulator), and had one not waited, its UPDATE would have found no row
    (ORA-26787, the error queue).  All in one micro-batch."""
    import sqlite3

    from sluice.pipeline import sinks

    dsn, conn, target = sqlite_apply_site(tmp_path, "APW")
    conn.apply_adm.set_parameter("APW", "disable_on_error", "N")
    q = conn.queue("STRM_Q")
    for k in range(200):
        q.enqone(conn.msgproperties(payload=RowLCR("DBS1.NET", "INSERT", "TGT", "T", None, f"{k}.0.1", k * 10,
                                                   None, {"ID": k, "N": 0}, commit_scn=k * 10 + 9)))
        conn.commit()
    for i in range(100):
        t = 200 + i
        q.enqmany([conn.msgproperties(payload=RowLCR("DBS1.NET", "UPDATE", "TGT", "T", None, f"{t}.0.1",
                                                     t * 10 + j, {"ID": k, "N": 0}, {"N": t},
                                                     commit_scn=t * 10 + 9))
                   for j, k in enumerate((i, 199 - i))])
        conn.commit()
    register(spark)
    seen: list = []

    def start():
        df = spark.readStream.format("sluice").options(dsn=dsn, queue="STRM_Q", consumer="APW",
                                                        pipeline="apw").load()
        return sinks.apply(df, sluice.connect, dsn, "APW", str(tmp_path / "ck"), trigger={"availableNow": True},
                           tasks=2, waits_seen=seen)
    query = restart.to_the_end(start, timeout=300)
    assert query.exception() is None
    with sqlite3.connect(target) as t:
        rows = t.execute('SELECT id, n FROM "TGT.T" ORDER BY id').fetchall()
    assert rows == [(k, 200 + min(k, 199 - k)) for k in range(200)]
    assert conn.query("SELECT COUNT(*) FROM SLUICE_APPLY_ERROR", None)[1][0][0] == 0
    # waits happened, each for inserts committed before the waiting update
    assert seen, "no transaction waited for another task"
    for ident, before, looks, _seconds in seen:
        scn = int(ident.rsplit("|", 1)[1])
        assert scn >= 2009 and looks >= 1
        assert all(int(b.rsplit("|", 1)[1]) < scn for b in before)
    conn.close()
