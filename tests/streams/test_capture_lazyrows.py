"""The decoder's two ways through wal2json's output, differential (issue 15 §2, the
capture's CPU per row): a row change whose column types the decoder knows is not parsed
when read from the slot (``transactions(rows, known)``: its head by a pattern, its values
when something reads them); every other row is parsed whole, as every row was.  Over real
wal2json output of varied rows — numbers with many digits, NULLs, unicode, quotes and
backslashes, control characters, bytea, dates and timestamps (infinity too), quoted and
mixed-case names, unsupported types, REPLICA IDENTITY FULL, a tag, TRUNCATE, a large
transaction — both ways give the same LCRs, and the same stored payload byte for byte
(what the apply reads), which is also the document as ``json.dumps`` writes it."""

from __future__ import annotations

import json
import uuid

import pytest

from sluice.aq.payload import PayloadCodec
from sluice.streams import RowLCR
from sluice.streams.capture.decode import Decoder, DecodedRowLCR, Unsupported, transactions
from sluice.streams.capture.pgsource import TAG_PREFIX, WAL2JSON_OPTIONS
from tests.conftest import pg_admin

CODEC = PayloadCodec("SYS.ANYDATA", None, lambda name: None)

COLS = ("id bigint PRIMARY KEY, n numeric, n2 numeric(38,12), i integer, s smallint, r real, "
        "d double precision, b boolean, v varchar(40), t text, c char(3), j jsonb, js json, "
        "by bytea, dt date, ts timestamp, tz timestamptz, u uuid")

VALUES = [
    "(1, 123456789012345678901234567890.123456789012, -0.000000000001, 2147483647, -32768, 1.5, "
    "1e300, true, 'plain', 'a\"b\\c', 'ab ', '{\"k\": [1, 2.50, \"x\\\"y\"]}', '{\"a\":1}', "
    "'\\x00ff10', '2020-02-29', '2021-03-04 05:06:07.123456', '2021-03-04 05:06:07.5+02', "
    "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')",
    "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL)",
    "(3, 0, 1e-12, 0, 0, -0, -1.25e-300, false, '', E'tab\\there\\nnew line \\u00e9 \\u2603 \\U0001F600', "
    "'é', '[]', 'null', '\\x', 'infinity', '-infinity', 'infinity', NULL)",
    "(4, 99999999999999999999999999999999999999.99, 12345678901234567890.123456789012, -1, 1, 3.4e38, "
    "0.1, true, 'O''Brien', E'back\\\\slash \"quoted\" \\x01 ctl', 'xyz', '\"s\"', '\"s\"', "
    "'\\xdeadbeef', '0001-01-01', '1999-12-31 23:59:59.999999', '2000-01-01 00:00:00+00', NULL)",
]


def envelope(lcr: DecodedRowLCR) -> str:
    """The stored document as the decoder wrote it before (json.dumps, same keys and order)."""
    tag, when = lcr.get_tag(), lcr.get_source_time()
    return json.dumps({"db": lcr.get_source_database_name(), "cmd": lcr.get_command_type(),
                       "own": lcr.get_object_owner(), "obj": lcr.get_object_name(),
                       "tag": tag.hex() if tag is not None else None, "txn": lcr.get_transaction_id(),
                       "scn": lcr.get_scn(), "cscn": lcr.get_commit_scn(),
                       "time": when.isoformat() if when is not None else None, "pg": lcr._text},
                      separators=(",", ":"))


@pytest.fixture
def wal2json_rows():
    schema = f"lazy_{uuid.uuid4().hex[:8]}"
    slot = f"sluice_test_lazy_{uuid.uuid4().hex[:8]}"
    with pg_admin() as pg:
        pg.execute(f"CREATE SCHEMA {schema}")
        pg.execute(f"CREATE TABLE {schema}.wide ({COLS})")
        pg.execute(f'CREATE TABLE {schema}."Odd""Name" (id int PRIMARY KEY, "we""ird" text, "Ünï" text)')
        pg.execute(f'CREATE TABLE {schema}."Mixed" (id int PRIMARY KEY, v text)')
        pg.execute(f"CREATE TABLE {schema}.unsup (id int PRIMARY KEY, span interval, tags int[])")
        pg.execute(f'CREATE TYPE {schema}."Odd""Enum" AS ENUM (\'a\')')     # a type name with an escape
        pg.execute(f'CREATE TABLE {schema}.odd_type (id int PRIMARY KEY, e {schema}."Odd""Enum")')
        pg.execute(f"CREATE TABLE {schema}.full_id (id int, v text, n numeric)")
        pg.execute(f"ALTER TABLE {schema}.full_id REPLICA IDENTITY FULL")
        pg.execute("SELECT pg_create_logical_replication_slot(%s, 'wal2json')", (slot,))
        try:
            with pg.transaction():
                for v in VALUES:
                    pg.execute(f"INSERT INTO {schema}.wide VALUES {v}")
            with pg.transaction():
                pg.execute("SELECT pg_logical_emit_message(true, %s, '0a0b')", (TAG_PREFIX,))
                pg.execute(f"UPDATE {schema}.wide SET t = t || ' é', n = n * 3 WHERE id IN (1, 3)")
                pg.execute("SELECT pg_logical_emit_message(true, %s, '')", (TAG_PREFIX,))
                pg.execute(f"DELETE FROM {schema}.wide WHERE id = 4")
            with pg.transaction():
                pg.execute(f'INSERT INTO {schema}."Odd""Name" VALUES (1, \'x"y\', \'ü\')')
                pg.execute(f'INSERT INTO {schema}."Mixed" VALUES (1, \'m\')')
                pg.execute(f"INSERT INTO {schema}.unsup VALUES (1, '1 day', '{{1,2}}')")
                pg.execute(f"INSERT INTO {schema}.odd_type VALUES (1, 'a')")
                pg.execute(f"INSERT INTO {schema}.full_id VALUES (1, 'a', 1.10), (2, NULL, NULL)")
                pg.execute(f"UPDATE {schema}.full_id SET v = 'b' WHERE id = 1")
                pg.execute(f"DELETE FROM {schema}.full_id WHERE id = 2")
            with pg.transaction():       # a large transaction
                pg.execute(f"INSERT INTO {schema}.wide (id, n, v, tz) SELECT g, g * 1.000001, md5(g::text), "
                           f"now() FROM generate_series(100, 2599) g")
                pg.execute(f"UPDATE {schema}.wide SET n = n + 0.5 WHERE id BETWEEN 100 AND 1099")
            pg.execute(f"TRUNCATE {schema}.\"Mixed\"")
            opts = ", ".join(["%s"] * len(WAL2JSON_OPTIONS))
            rows = [r[0] for r in pg.execute(f"SELECT data FROM pg_logical_slot_peek_changes(%s, NULL, NULL, "
                                             f"{opts})", (slot, *WAL2JSON_OPTIONS)).fetchall()]
        finally:
            pg.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            pg.execute(f"DROP SCHEMA {schema} CASCADE")
    return schema, rows


def lcrs(decoder: Decoder, txns) -> list:
    return [lcr for t in txns for lcr in decoder.lcrs(t)]


def test_lazy_rows_give_the_same_lcrs_and_payloads(wal2json_rows):
    schema, rows = wal2json_rows
    whole = Decoder("DB1", "sluice_store")
    old = lcrs(whole, transactions(rows))                # every row parsed whole
    lazy = Decoder("DB1", "sluice_store")
    lcrs(lazy, transactions(rows))                       # the column types known from here on
    txns = transactions(rows, lazy.kinds)
    skipped = sum("_lazy" in ch for t in txns for ch in t.changes)
    new = lcrs(lazy, txns)
    assert skipped > 2500 and len(new) == len(old) > 3000
    # rows parsed whole all the same: quoted names, unsupported types, messages, TRUNCATE
    assert not any("_lazy" in ch for t in txns for ch in t.changes
                   if ch.get("table") in ('Odd"Name', "unsup", "odd_type") or ch["action"] not in "IUD")
    assert sum(isinstance(x, Unsupported) for x in new) == 2
    for a, b in zip(old, new):
        assert type(a) is type(b)
        if isinstance(a, Unsupported):
            assert (a.reason, a.lcr.get_object_name()) == (b.reason, b.lcr.get_object_name())
            continue
        stored = CODEC.encode(b)
        assert stored == CODEC.encode(a)                 # what the apply reads: byte for byte
        if isinstance(a, RowLCR):
            assert isinstance(b, DecodedRowLCR) and b._text is not None
            assert stored == f'{{"$type":"SYS.LCR$_ROW_RECORD","value":{envelope(a)}}}'
            assert a.get_compatible() == b.get_compatible()
            assert a.plain_values() == b.plain_values()
            for which in ("OLD", "NEW"):
                assert ([(u.column_name, u.data.get_type_name(), u.data.value) for u in a.get_values(which)]
                        == [(u.column_name, u.data.get_type_name(), u.data.value) for u in b.get_values(which)])
            back = CODEC.decode(stored)
            assert back.plain_values() == a.plain_values()
        else:
            assert (a.get_command_type(), a.get_object_name(), a.get_scn()) == \
                   (b.get_command_type(), b.get_object_name(), b.get_scn())
    tags = {x.get_tag() for x in new if isinstance(x, RowLCR)}
    assert tags == {None, b"\x0a\x0b"}
    owners = {(x.get_object_owner(), x.get_object_name()) for x in new if isinstance(x, RowLCR)}
    assert (schema.upper(), "Mixed") in owners and (schema.upper(), 'Odd"Name') in owners
