"""The pipeline's source below Spark (sluice.pipeline.queueio, rows) on both store backends.

Offsets are the queue's commit order: positions are commit SCNs of a commit-time queue
(SET_UP_QUEUE's), SEQ otherwise; a range never splits a transaction; a batch's records
are consumed and the low-watermark advanced in one store transaction, only when asked
(after the sink committed) and idempotently; a payload that is not an LCR or a malformed
LCR becomes a row with its reason.
"""

from __future__ import annotations

from decimal import Decimal
from datetime import datetime

import pytest

import sluice
from sluice import DDLLCR, RowLCR
from sluice.pipeline import queueio, rows
from sluice.pipeline.queueio import QueueRef
from sluice.rules.compile.typed.lcrschema import LCR_COLUMNS, lcr_row

from ..conftest import make_queue


def lcr(txn: int, i: int, table: str = "T1", command: str = "INSERT") -> RowLCR:
    old = {"ID": txn * 100 + i, "NAME": "old"} if command != "INSERT" else None
    new = {"ID": txn * 100 + i, "NAME": f"n{i}", "AMOUNT": Decimal("1.5"), "AT": datetime(2024, 1, 2, 3, 4, 5),
           "BIN": b"\x01\xff"} if command != "DELETE" else None
    lcr = RowLCR("DBS1.NET", command, "HR", table, b"\x07" if i == 1 else None, f"{txn}.1.1", txn * 100 + i,
                 old, new, commit_scn=txn * 100 + 99)
    if i == 2 and new:
        lcr.add_column("NEW", "F", 0.25)
        lcr.add_column("NEW", "EMPTY", None)
        lcr.set_extra_attribute("USERNAME", "SCOTT")
    return lcr


def streams_queue(conn, transactions: list[list]) -> None:
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY1"))
    q = conn.queue("STRM_Q")
    for txn in transactions:
        q.enqmany([conn.msgproperties(payload=p) for p in txn])
        conn.commit()


def test_positions_are_whole_commits_and_acknowledge_consumes(conn, dsn):
    txns = [[lcr(t, i) for i in range(1 + t % 3)] for t in range(6)]    # 1, 2, 3, 1, 2, 3 LCRs
    streams_queue(conn, txns)
    with pytest.raises(sluice.DatabaseError) as e:   # a multi-consumer queue needs a consumer
        QueueRef.resolve(dsn, "STRM_Q")
    assert e.value.full_code == "ORA-25231"
    ref = QueueRef.resolve(dsn, "STRM_Q", "apply1")
    assert (ref.order, ref.multi, ref.consumer) == ("CSCN", True, "APPLY1")
    with queueio.open_raw(dsn) as raw:
        latest = queueio.latest_position(raw, ref, 0)
        # max 2 messages: the 2nd record is in the 2nd transaction, which is taken whole
        first = queueio.latest_position(raw, ref, 0, 2)
        got = list(queueio.records(raw, ref, 0, first))
        assert [r[8] for r in got] == [got[0][8]] + [got[1][8]] * 2 and len({r[6] for r in got}) == 2
        parts = queueio.split_range(raw, ref, 0, latest, 3)
        assert parts[0][0] == 0 and parts[-1][1] == latest and len(parts) == 3
        by_part = [list(queueio.records(raw, ref, a, b)) for a, b in parts]
        assert sum(map(len, by_part)) == 12
        assert all(len({r[8] for r in p} & {r[8] for r in q}) == 0 for p in by_part for q in by_part if p is not q)
        assert queueio.acknowledge(raw, ref, "p1", first) == 3
        assert queueio.acknowledge(raw, ref, "p1", first) == 0     # a replayed commit changes nothing
        assert queueio.low_watermark(raw, "p1") == first
        assert queueio.latest_position(raw, ref, first) == latest
        assert queueio.acknowledge(raw, ref, "p1", first - 1) == 0 and queueio.low_watermark(raw, "p1") == first
    cols, progress = queueio.progress_rows(dsn, "p1")
    row = dict(zip(cols, progress[0]))
    assert (row["QUEUE"], row["CONSUMER_NAME"], row["BATCHES"], row["TOTAL_MESSAGES"]) == \
        ("SLUICE.STRM_Q", "APPLY1", 1, 3)   # acknowledged three times, one batch
    assert conn.query("SELECT COUNT(*) FROM AQ$STRM_QT", None)[1] == [(9,)]


def test_the_latest_position_reads_one_record_of_a_large_backlog():
    """PostgreSQL, a fresh backlog (no statistics yet): the end of everything READY is read
    backwards along the order index, one record -- MAX() was planned as a read of every
    READY record (P5's last micro-batch spent 0.5-1.6 s in latestOffset)."""
    import re
    import uuid

    from tests.conftest import PG_BASE, drop_schema

    schema = "t_" + uuid.uuid4().hex[:12]
    dsn = f"{PG_BASE}?schema={schema}"
    conn = sluice.connect(dsn)
    try:
        conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
        conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY1"))
        q = conn.queue("STRM_Q")
        for t in range(40):
            q.enqmany([conn.msgproperties(payload=lcr(t, i)) for i in range(50)])
            conn.commit()
        ref = QueueRef.resolve(dsn, "STRM_Q", "APPLY1")
        with queueio.open_raw(dsn) as raw:
            last = raw.execute(f"SELECT MAX(CSCN) FROM {ref.table}").fetchone()[0]
            statements: list[tuple[str, list]] = []
            execute = raw.execute
            raw.execute = lambda sql, params=(): statements.append((sql, list(params))) or execute(sql, params)
            assert queueio.latest_position(raw, ref, 0) == last
            raw.execute = execute
            (sql, params), = statements
            plan = [r[0] for r in raw.execute("EXPLAIN (ANALYZE, FORMAT TEXT) " + sql, params).fetchall()]
        read = [int(n) for line in plan for n in re.findall(r"actual time=[\d.]+\.\.[\d.]+ rows=(\d+)", line)]
        assert read and max(read) <= 1, plan          # no node read the 2,000 READY records
    finally:
        conn.close()
        drop_schema(schema)


def test_acknowledge_looks_only_after_the_low_watermark(conn, dsn):
    """The records at or below a pipeline's low-watermark were consumed by the acknowledgement
    that set it: a later one consumes only the range after it (no scan of the queue's past)
    and one up to the low-watermark or below does not touch the queue at all."""
    streams_queue(conn, [[lcr(t, i) for i in range(1 + t % 3)] for t in range(6)])   # 12 LCRs
    ref = QueueRef.resolve(dsn, "STRM_Q", "APPLY1")
    with queueio.open_raw(dsn) as raw:
        first, latest = queueio.latest_position(raw, ref, 0, 2), queueio.latest_position(raw, ref, 0)
        queueio.set_position(raw, "p2", ref.qualified, first)   # a position set by other means
        statements: list[str] = []
        execute = raw.execute
        raw.execute = lambda sql, params=(): statements.append(sql) or execute(sql, params)
        assert queueio.acknowledge(raw, ref, "p2", first) == 0
        assert not [s for s in statements if s.startswith(("DELETE", "UPDATE"))]
        assert queueio.acknowledge(raw, ref, "p2", latest) == 9     # not the 3 at or below ``first``
        assert queueio.low_watermark(raw, "p2") == latest
    assert conn.query("SELECT COUNT(*) FROM AQ$STRM_QT", None)[1] == [(3,)]


def test_the_source_s_numeric_options_are_positive_integers():
    from sluice.pipeline.source import SluiceDataSource

    source = SluiceDataSource({"maxMessagesPerBatch": "500", "partitions": "3"})
    assert source._positive("maxMessagesPerBatch", None) == 500 and source._positive("partitions", 2) == 3
    assert SluiceDataSource({})._positive("maxMessagesPerBatch", None) is None
    for text in ("0", "-5", "abc", "1.5"):
        with pytest.raises(ValueError, match=f'"partitions" must be a positive integer, not {text!r}'):
            SluiceDataSource({"partitions": text})._positive("partitions", 2)


def test_rows_carry_the_lcr_columns_and_give_the_lcr_back(conn, dsn):
    ddl = DDLLCR("DBS1.NET", "CREATE TABLE", "HR", "T9", "TABLE", "CREATE TABLE t9 (x NUMBER)", "HR", "HR",
                 tag=b"\x11", transaction_id="9.1.1", scn=900, commit_scn=999)
    sent = [lcr(1, 0), lcr(1, 1, command="UPDATE"), lcr(1, 2, command="DELETE"), ddl]
    streams_queue(conn, [sent])
    ref = QueueRef.resolve(dsn, "STRM_Q", "APPLY1")
    with queueio.open_raw(dsn) as raw:
        got = [dict(zip(rows.FIELDS, rows.to_row(ref.qualified, ref.payload_type, r)))
               for r in queueio.records(raw, ref, 0, queueio.latest_position(raw, ref, 0))]
    assert [g["lcr_kind"] for g in got] == ["ROW", "ROW", "ROW", "DDL"] and not any(g["error"] for g in got)
    assert got[0]["new_values"] == {"ID": "100", "NAME": "n0", "AMOUNT": "1.5", "AT": "2024-01-02 03:04:05",
                                    "BIN": "01FF"}
    assert got[0]["payload_type"] == "SYS.LCR$_ROW_RECORD" and got[3]["ddl_text"].startswith("CREATE TABLE")
    assert [rows.lcr_from_row(g) for g in got] == sent
    # row LCRs' columns are read straight from the stored document: what lcr_row makes of the LCR
    assert [{c: g[c] for c in LCR_COLUMNS} for g in got] == [lcr_row(lcr) for lcr in sent]


def test_user_messages_bad_payloads_and_seq_order(conn, dsn):
    make_queue(conn, "UQ", payload="SYS.ANYDATA")
    q = conn.queue("UQ")
    q.enqmany([conn.msgproperties(payload=p) for p in ({"k": 1}, b"\x00\x01")])
    conn.commit()
    q.enqone(conn.msgproperties(payload={"k": 2}))
    conn.commit()
    ref = QueueRef.resolve(dsn, "UQ")
    with queueio.open_raw(dsn) as raw:
        # a row LCR document missing its fields: bad input, carried with its reason
        raw.execute(f"UPDATE {ref.table} SET USER_DATA = ? WHERE SEQ = (SELECT MAX(SEQ) FROM {ref.table})",
                    ['{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"X","new":[]}}'])
        assert ref.order == "SEQ" and not ref.multi
        first = queueio.latest_position(raw, ref, 0, 1)   # widened to its enqueuing transaction
        got = [dict(zip(rows.FIELDS, rows.to_row(ref.qualified, ref.payload_type, r)))
               for r in queueio.records(raw, ref, 0, queueio.latest_position(raw, ref, 0))]
    assert len([g for g in got if g["seq"] <= first]) == 2
    assert [(g["payload_type"], g["user_data"]) for g in got[:2]] == [("JSON", '{"k":1}'), ("RAW", "0001")]
    assert got[2]["error"].startswith("KeyError") and got[2]["lcr_kind"] is None


def test_the_stream_reader_keeps_one_store_connection_and_replaces_a_broken_one(conn, dsn):
    """The streaming reader (driver side) reads positions and acknowledges over ONE store
    connection kept across micro-batches; a pickled reader (what executors get) carries
    none; a connection that broke is replaced and the call goes through."""
    import pickle

    from sluice.pipeline.source import QueueStreamReader

    streams_queue(conn, [[lcr(t, i) for i in range(2)] for t in range(3)])
    reader = QueueStreamReader(QueueRef.resolve(dsn, "STRM_Q", "apply1"), "p2", None, 2)
    start = reader.initialOffset()
    end = reader.latestOffset(start, None)
    kept = reader._raw
    assert kept is not None and end["position"] > start["position"]
    assert len(reader.partitions(start, end)) == 2 and reader._raw is kept
    assert pickle.loads(pickle.dumps(reader))._raw is None and reader._raw is kept
    kept.close()   # the store went away under it: a new connection, the same answer
    assert reader.latestOffset(start, None) == end and reader._raw is not kept
    reader.commit(end)
    with queueio.open_raw(dsn) as raw:
        assert queueio.low_watermark(raw, "p2") == end["position"]
        assert queueio.latest_position(raw, reader.ref, end["position"]) == end["position"]   # all consumed
