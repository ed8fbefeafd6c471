"""The decoder alone (no database): wal2json format-2 rows -> transactions -> LCRs, the
type and name mappings (seed 001 "Staging and Propagation": row LCRs carry typed old and
new values), LCRs that keep wal2json's values until read, and their stored form."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

from sluice.aq.payload import PayloadCodec
from sluice.streams import COMPATIBLE_10_1, DDLLCR, RowLCR
from sluice.streams.capture.decode import (Decoder, Unsupported, column_type, oracle_name, pg_name,
                                           transactions)

COLUMNS = [
    {"name": "id", "type": "bigint", "value": 7},
    {"name": "Amount", "type": "numeric(12,2)", "value": 12.50},
    {"name": "big", "type": "numeric", "value": "<BIG>"},   # a JSON number wal2json writes
    {"name": "ratio", "type": "double precision", "value": 0.125},
    {"name": "flag", "type": "boolean", "value": True},
    {"name": "note", "type": "character varying(20)", "value": "héllo"},
    {"name": "code", "type": "character(3)", "value": "ab "},
    {"name": "doc", "type": "jsonb", "value": "{\"a\": 1}"},
    {"name": "blob", "type": "bytea", "value": "00ff"},
    {"name": "born", "type": "date", "value": "infinity"},
    {"name": "at", "type": "timestamp(3) with time zone", "value": "2026-01-02 03:04:05.678+00"},
    {"name": "gone", "type": "text", "value": None},
]


def rows(*changes, xid=42, tag=None):
    out = [json.dumps({"action": "B", "xid": xid})]
    if tag is not None:
        out.append(json.dumps({"action": "M", "xid": xid, "lsn": "0/100", "transactional": True,
                               "prefix": "sluice.tag", "content": tag}))
    for i, ch in enumerate(changes):
        out.append(json.dumps({"xid": xid, "lsn": f"0/{0x200 + i:X}", **ch}).replace("12.5,", "12.50,")
                   .replace('"<BIG>"', "123456789012345678901234567890.123456789"))
    out.append(json.dumps({"action": "C", "xid": xid, "lsn": "1/10", "nextlsn": "1/40",
                           "timestamp": "2026-11-25 14:58:02.911796+00"}))
    return out


def test_names_fold_across():
    assert (oracle_name("employees"), oracle_name("Orders"), oracle_name("EMP")) == ("EMPLOYEES", "Orders", "EMP")
    assert (pg_name("EMPLOYEES"), pg_name("Orders")) == ("employees", "Orders")
    # a name upper case would not give back keeps its spelling: folded, "straße" became
    # STRASSE, which names the table "strasse" (the apply's target, ADD_TABLE_RULES' lookup)
    for name in ("straße", "ﬁle", "ıd", "café", "ǆ", "emp"):
        assert pg_name(oracle_name(name)) == name
    assert (oracle_name("straße"), oracle_name("café")) == ("straße", "CAFÉ")


def test_types():
    assert column_type("integer[]") is None and column_type("interval") is None and column_type("point") is None
    assert column_type("timestamp(6) without time zone")[0] == "SYS.TIMESTAMP"
    assert column_type("character varying(30)")[0] == "SYS.VARCHAR2"
    # the one-byte "char": wal2json names it bare, format_type (synchronous capture) quoted
    assert column_type("char")[0] == column_type('"char"')[0] == column_type("character(3)")[0] == "SYS.CHAR"


def test_row_lcr_from_wal2json_and_its_stored_form():
    txn, = transactions(rows({"action": "I", "schema": "hr", "table": "Emp", "columns": COLUMNS},
                             {"action": "U", "schema": "hr", "table": "Emp", "columns": COLUMNS[:2],
                              "identity": COLUMNS[:1]}, tag="0a"))
    assert (txn.xid, txn.commit_scn, txn.end_lsn) == (42, (1 << 32) | 0x10, (1 << 32) | 0x40)
    ins, upd = Decoder("DB1.NET", "sluice").lcrs(txn)
    assert (ins.get_object_owner(), ins.get_object_name(), ins.get_command_type()) == ("HR", "Emp", "INSERT")
    assert (ins.get_tag(), ins.get_transaction_id(), ins.get_scn(), ins.get_commit_scn()) == \
        (b"\x0a", "42", 0x200, (1 << 32) | 0x10)
    assert ins.get_source_time() == datetime(2026, 11, 25, 14, 58, 2, 911796, tzinfo=timezone.utc)
    new = {u.column_name: (u.data.get_type_name(), u.data.value) for u in ins.get_values("NEW")}
    assert new == {
        "ID": ("SYS.NUMBER", 7), "Amount": ("SYS.NUMBER", Decimal("12.50")),
        "BIG": ("SYS.NUMBER", Decimal("123456789012345678901234567890.123456789")),
        "RATIO": ("SYS.BINARY_DOUBLE", 0.125), "FLAG": ("SYS.NUMBER", 1),
        "NOTE": ("SYS.VARCHAR2", "héllo"), "CODE": ("SYS.CHAR", "ab "), "DOC": ("SYS.CLOB", '{"a": 1}'),
        "BLOB": ("SYS.RAW", b"\x00\xff"), "BORN": ("SYS.DATE", datetime.max),
        "AT": ("SYS.TIMESTAMP", datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=timezone.utc)),
        "GONE": ("SYS.VARCHAR2", None)}
    assert ins.get_compatible() == COMPATIBLE_10_1            # a BINARY_DOUBLE column
    assert upd.get_value("OLD", "id").access_number() == 7
    assert upd.get_value("NEW", '"Amount"').access_number() == Decimal("12.50")
    # stored in an ANYDATA queue and read back: equal, and still lazy until read
    codec = PayloadCodec("SYS.ANYDATA", None, lambda name: None)
    fresh = next(Decoder("DB1.NET", "sluice").lcrs(txn))
    stored = codec.encode(fresh)
    assert '"pg":' in stored and fresh._form != fresh.VALUES       # never turned into AnyData
    back = codec.decode(stored)
    assert isinstance(back, RowLCR) and back._form == back.TEXT and back == ins
    assert back.get_value("NEW", "big").access_number() == Decimal("123456789012345678901234567890.123456789")
    # changed, it is stored from its AnyData values
    back.set_value("NEW", "note", "changed")
    back.set_tag(None)
    again = codec.decode(codec.encode(back))
    assert again.get_value("NEW", "note").access_varchar2() == "changed" and again.get_tag() is None
    assert again == back


def test_unsupported_columns_and_other_changes():
    txn, = transactions(rows(
        {"action": "D", "schema": "hr", "table": "t", "identity": [{"name": "id", "type": "integer", "value": 1}]},
        {"action": "I", "schema": "hr", "table": "odd", "columns": [
            {"name": "id", "type": "integer", "value": 1}, {"name": "tags", "type": "text[]", "value": "{a}"}]},
        {"action": "T", "schema": "hr", "table": "t"},
        {"action": "I", "schema": "sluice", "table": "SLUICE_CATALOG", "columns": []}))
    out = list(Decoder("DB1.NET", "sluice").lcrs(txn))
    assert len(out) == 3                                   # the store's own schema is not captured
    delete, odd, trunc = out
    assert delete.get_command_type() == "DELETE" and delete.get_values("NEW") == []
    assert isinstance(odd, Unsupported) and odd.reason == 'column "tags" of type text[]'
    assert [u.column_name for u in odd.lcr.get_values("NEW")] == ["ID"]
    assert isinstance(trunc, DDLLCR) and (trunc.get_command_type(), trunc.get_base_table_name()) == \
        ("TRUNCATE TABLE", "T")


def test_a_year_an_lcr_cannot_hold_is_an_oracle_error_when_read():
    """PostgreSQL dates run from 4713 BC to far past 9999, an LCR's DATE and TIMESTAMP from
    year 1 to 9999: such a value is captured (values are read only when needed) and reading
    it — as an apply process does — raises ORA-01841, never a ValueError; the other
    values of the LCR and its stored form are unaffected."""
    import pytest
    import sluice
    cols = [{"name": "id", "type": "integer", "value": 1},
            {"name": "bc", "type": "timestamp without time zone", "value": "0044-03-15 00:00:00 BC"},
            {"name": "far", "type": "date", "value": "12000-01-01"}]
    # the row as wal2json writes it with the capture's options (its keys in this order)
    text = json.dumps({"action": "I", "xid": 42, "timestamp": "2026-11-25 14:58:02.911796+00", "lsn": "0/200",
                       "schema": "hr", "table": "ev", "columns": cols}, separators=(",", ":"))
    txn_rows = [json.dumps({"action": "B", "xid": 42}), text,
                json.dumps({"action": "C", "xid": 42, "lsn": "1/10", "nextlsn": "1/40"})]
    decoder = Decoder("DB1.NET", "sluice")
    parsed, = transactions(txn_rows)                   # parsed whole (the types not known yet)
    list(decoder.lcrs(parsed))
    lazy, = transactions(txn_rows, decoder.kinds)      # (known now: kept as wal2json's text)
    assert "_lazy" in lazy.changes[0] and "_lazy" not in parsed.changes[0]
    for txn in (parsed, lazy):
        lcr, = decoder.lcrs(txn)
        codec = PayloadCodec("SYS.ANYDATA", None, lambda name: None)
        back = codec.decode(codec.encode(lcr))
        for one in (lcr, back):
            with pytest.raises(sluice.DatabaseError) as e:
                one.plain_values()
            assert e.value.code == 1841 and "0044-03-15 00:00:00 BC" in str(e.value)
        with pytest.raises(sluice.DatabaseError) as e:
            back.get_value("NEW", "far")
        assert e.value.code == 1841
