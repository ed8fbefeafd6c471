"""Plain row-LCR documents decoded in the JVM (sluice.pipeline.documents), differential
against the Python decode (rows.to_row) it replaces.

The source hands Spark the stored text of a row LCR whose form the JVM decodes exactly
(rows.jvm_document); every other payload -- captured ``pg`` documents, dates, fractional
numbers, DDL LCRs, user messages, malformed text -- is decoded in Python as before.  Over
a corpus of real captured LCRs (wal2json output: numbers with many digits, NULLs,
unicode, quotes, control characters, bytea, dates, infinity) in both stored forms, hand
made documents (huge SCNs, RAW, tags, empty strings, a column named twice, types NULL)
and malformed payloads, the rows with the JVM decode equal the rows of the Python decode,
column for column (maps in their order), and a malformed payload keeps its reason.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F

import sluice
from sluice import DDLLCR, RowLCR
from sluice.aq.payload import PayloadCodec
from sluice.pipeline import queueio, rows
from sluice.pipeline.documents import decode
from sluice.pipeline.queueio import QueueRef
from sluice.pipeline.source import register
from sluice.streams.capture.decode import Decoder, transactions
from tests.streams.test_capture_lazyrows import wal2json_rows  # noqa: F401  (the fixture)

from ..conftest import make_queue

CODEC = PayloadCodec("SYS.ANYDATA", None, lambda name: None)
ENV = '{"$type":"SYS.LCR$_ROW_RECORD","value":'


def doc(old: str = "[]", new: str = '[["ID","SYS.NUMBER",1]]', **head: str) -> str:
    h = {"db": '"DBS1.NET"', "cmd": '"INSERT"', "own": '"HR"', "obj": '"T"', "tag": "null", "txn": '"1.2.3"',
         "scn": "5", "cscn": "7", "time": "null", **head}
    return ENV + "{" + ",".join(f'"{k}":{v}' for k, v in h.items()) + f',"old":{old},"new":{new}}}}}'


JVM_DECODED = [
    # JVM: integers (huge too), strings with escapes and unicode, '' and NULL, RAW, tags, SCNs past int64
    doc(new='[["ID","SYS.NUMBER",12345678901234567890123456789012345678],["N","SYS.NUMBER",-42],'
            '["Z","SYS.NUMBER",0],["E","SYS.VARCHAR2",""],["Q","SYS.VARCHAR2","a\\"b\\\\c\\/d\\n\\t\\u0001"],'
            '["U","SYS.NVARCHAR2","\\u00e9\\u2603\\ud83d\\ude00 \u00fc"],["R","SYS.RAW","00ff1a"],'
            '["R0","SYS.RAW",""],["B","SYS.BLOB",null],["D","SYS.DATE",null],["X",null,"untyped"],'
            '["I","SYS.VARCHAR2",17],["F","SYS.BINARY_FLOAT",3]]',
        scn="123456789012345678901234567890", cscn="99999999999999999999999999999999999999",
        tag='"0A0b"', time='"2024-01-02T03:04:05.123456+02:00"'),
    doc(old='[["ID","SYS.NUMBER",1],["ID","SYS.NUMBER",2],["NAME","SYS.CHAR","x"],["ID","SYS.VARCHAR2","3"]]',
        new="[]", cmd='"DELETE"', own='""', obj='""', txn='""', tag='""', scn="null", cscn="null", db="null"),
    doc(old='[["ID","SYS.NUMBER",1]]', new='[["NAME","SYS.CLOB","n"],["D","SYS.BINARY_DOUBLE",null]]',
        cmd='"UPDATE"', time='"2024-01-02T03:04:05"'),
    # JVM: NUMBER as decimal text (TO_CHAR's form), dates as isoformat writes them
    doc(new='[["A","SYS.NUMBER","1.50"],["B","SYS.NUMBER","-0.50"],["C","SYS.NUMBER","007"],'
            '["D","SYS.NUMBER","-0"],["E","SYS.NUMBER","100.00"],["F","SYS.NUMBER","0.000123"],'
            '["G","SYS.NUMBER","12"],["H","SYS.NUMBER","-012.340"],["I","SYS.NUMBER","0.0"],'
            '["J","SYS.NUMBER","12345678901234567890123456789012.12345"]]'),
    doc(new='[["AT","SYS.DATE","2024-01-02T03:04:05"],["TS","SYS.TIMESTAMP","2024-02-29T03:04:05.000500+05:30"],'
            '["TZ","SYS.TIMESTAMP","0001-01-01T00:00:00-01:00"],["MX","SYS.TIMESTAMP","9999-12-31T23:59:59.999999"]]'),
]
PYTHON_DECODED = [
    # Python: floats, exponents, long decimals, other date forms, extra attributes, LOB information, whitespace
    doc(new='[["A","SYS.NUMBER","1.50"],["B","SYS.NUMBER",1.5e3]]'),
    doc(new='[["A","SYS.NUMBER","1E-12"]]'),
    doc(new='[["A","SYS.NUMBER","123456789012345678901234567890.123456789012"]]'),
    doc(new='[["AT","SYS.DATE","2024-01-02"],["TS","SYS.TIMESTAMP","2024-01-02 03:04:05.5+00:00"]]'),
    doc(new='[["TS","SYS.TIMESTAMP","2024-01-02T03:04:05.000000"]]'),
    doc(new='[["F","SYS.BINARY_DOUBLE",0.1],["G","SYS.VARCHAR2",1.0]]'),
    doc(new='[["L","SYS.CLOB","x",[null,null,null,null]]]'),
    doc().replace('"time":null', '"time":null,"extra":[["USERNAME","SYS.VARCHAR2","SCOTT"]]'),
    doc().replace(",", ", ", 1),
    doc() + " ",
]
MALFORMED = [
    doc(new='[["R","SYS.RAW","0 1"]]'),
    # malformed: to the error queue with their reason, whichever decode
    doc() + "}",
    doc()[:-2] + "]}",
    doc(new='[["B","SYS.VARCHAR2",true]]'),
    doc(new='[["T","SYS.DATE","2024-02-30T00:00:00"]]'),
    doc(time='"2024-13-01T00:00:00"'),
    doc(new='[["ID","SYS.NUMBER"]]'),
    doc(new='[["K","SYS.NUMBER",""]]'),
    doc()[:-10],
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"X","new":[]}}',
    "not json at all",
]
HAND = JVM_DECODED + PYTHON_DECODED + MALFORMED
# not decoded by the JVM either (the Python decode gives rows Arrow cannot carry)
ODD = [doc(new='[["S","SYS.VARCHAR2","\\ud800"]]'), doc(new='[[7,"SYS.NUMBER",1]]')]


def captured_payloads(wal2json) -> list[str]:
    """Every captured LCR twice: as the capture stores it (wal2json's row inside, ``pg``)
    and as a plain document (its values read first, then stored).  Of the large
    transaction's 3,500 rows of one form (2,500 INSERTs of id, n, v, tz, then 1,000
    UPDATEs of n), every 50th: the other LCRs of that form take the same path, and
    each row costs the Spark reads and the Python decode alike."""
    _, changes = wal2json
    decoder = Decoder("DB1", "sluice_store")
    out = []
    txns = [list(decoder.lcrs(t)) for t in transactions(changes)]
    for lcr in (x for t in txns for x in (t if len(t) < 100 else t[::50])):
        if not isinstance(lcr, (RowLCR, DDLLCR)):
            continue
        out.append(CODEC.encode(lcr))
        if isinstance(lcr, RowLCR):
            lcr.get_values("NEW")           # the values as AnyData: stored as a plain document
            out.append(CODEC.encode(lcr))
    return out


def test_what_the_jvm_decodes():
    jvm = [rows.jvm_document("SYS.ANYDATA", text)[0] for text in HAND + ODD]
    assert jvm == [True] * len(JVM_DECODED) + [False] * (len(HAND) + len(ODD) - len(JVM_DECODED))
    assert rows.jvm_document("SYS.ANYDATA", doc(time='"2024-01-02T03:04:05"')) == (True, datetime(2024, 1, 2, 3, 4, 5))
    assert rows.jvm_document("JSON", doc()) == (False, None)
    lcr = RowLCR("DBS1.NET", "INSERT", "HR", "T", None, "1.2.3", 5, None, {"ID": 1, "NAME": "x"}, commit_scn=7)
    assert rows.jvm_document("SYS.ANYDATA", CODEC.encode(lcr))[0]
    lcr.add_column("NEW", "AMOUNT", Decimal("1.5"))
    assert rows.jvm_document("SYS.ANYDATA", CODEC.encode(lcr))[0]
    lcr.add_column("NEW", "F", 0.25)                    # a float: Python's number_text
    assert not rows.jvm_document("SYS.ANYDATA", CODEC.encode(lcr))[0]
    # the record part of a row the JVM decodes is the Python decode's
    record = (3, "Q", b"\x01", None, 1, 0, 7, 1700000000.5, "1.2.3", None, HAND[0])
    fast = list(rows.source_rows("HR.Q", "SYS.ANYDATA", [record], True))[0]
    slow = rows.to_row("HR.Q", "SYS.ANYDATA", record)
    head = len(rows.MESSAGE_FIELDS)
    assert fast[:head] == slow[:head] and fast[-1] == HAND[0] and set(fast[head:-1]) == {None}


def _plain(value):
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def test_jvm_decode_equals_the_python_decode(spark, tmp_path, wal2json_rows):  # noqa: F811
    corpus = HAND + captured_payloads(wal2json_rows)
    corpus += [CODEC.encode(DDLLCR("DBS1.NET", "CREATE TABLE", "HR", "T9", "TABLE", "CREATE TABLE t9 (x NUMBER)",
                                   transaction_id="9.1.1", scn=900, commit_scn=999)),
               CODEC.encode({"k": 1}), CODEC.encode(b"\x00\x01")]
    dsn = f"sqlite:///{tmp_path / 'docs.db'}"
    conn = sluice.connect(dsn)
    make_queue(conn, "DQ", payload="SYS.ANYDATA")
    q = conn.queue("DQ")
    q.enqmany([conn.msgproperties(payload={"k": i}) for i in range(len(corpus))])
    conn.commit()
    ref = QueueRef.resolve(dsn, "DQ")
    with queueio.open_raw(dsn) as raw:
        seqs = [r[0] for r in raw.execute(f"SELECT SEQ FROM {ref.table} ORDER BY SEQ").fetchall()]
        raw.begin()
        for seq, text in zip(seqs, corpus):
            raw.execute(f"UPDATE {ref.table} SET USER_DATA = ? WHERE SEQ = ?", [text, seq])
        raw.execute("COMMIT")
        python = [rows.to_row(ref.qualified, ref.payload_type, r)
                  for r in queueio.browse(raw, ref, *queueio.seq_bounds(raw, ref))]
    conn.close()
    register(spark)
    reader = spark.read.format("sluice").option("dsn", dsn).option("queue", "DQ")
    by_source = reader.option("documents", "true").load()
    maps = [c for c in rows.FIELDS if c.endswith(("_values", "_types"))]
    in_order = [F.map_keys(c).alias("keys_" + c) for c in maps]     # collect() gives maps as dicts
    # which rows the source left to the JVM, in the same query (a Spark job less)
    flagged = by_source.withColumn("by_jvm", F.col(rows.DOCUMENT).isNotNull())
    decoded = decode(flagged).select(*[c for c in by_source.columns if c != rows.DOCUMENT], *in_order, "by_jvm")
    collected = decoded.orderBy("seq").collect()
    # the documents the JVM decodes: the hand-made ones meant for it and most captured ones
    jvm_documents = sum(rows.jvm_document("SYS.ANYDATA", text)[0] for text in corpus)
    assert sum(r["by_jvm"] for r in collected) == jvm_documents > len(JVM_DECODED) + 60
    shape = Row(*collected[0].__fields__[:-1])
    jvm = [shape(*r[:-1]) for r in collected]
    whole = reader.option("documents", "false").load().select("*", *in_order).orderBy("seq").collect()
    assert len(jvm) == len(whole) == len(python) == len(corpus)
    errors = [i for i, p in enumerate(python) if p[rows.FIELDS.index("error")] is not None]
    assert errors == list(range(len(HAND) - len(MALFORMED), len(HAND)))
    for j, w, p in zip(jvm, whole, python):
        assert [_plain(v) for v in j] == [_plain(v) for v in w]              # the Spark rows: all columns
        head = rows.FIELDS.index("payload_type")                             # the Python decode's values
        assert [_plain(v) for v in j[head:head + 3]] == [_plain(v) for v in p[head:head + 3]]
        assert [_plain(v) for v in j[len(rows.MESSAGE_FIELDS):len(rows.FIELDS)]] == \
            [_plain(v) for v in p[len(rows.MESSAGE_FIELDS):]]
        assert [j["keys_" + c] for c in maps] == [w["keys_" + c] for c in maps] == \
            [None if p[rows.FIELDS.index(c)] is None else list(p[rows.FIELDS.index(c)]) for c in maps]
    assert json.loads(HAND[0][len(ENV):-1])["scn"] == int(jvm[0]["scn"])
