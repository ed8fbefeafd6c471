"""The apply's reading of captured LCRs (issue 15 §2): an LCR's ANYDATA envelope read by
json's scanner at the document's offset (``PayloadCodec._registered``) gives what
``json.loads`` of the whole envelope gave, for varied row values (numbers with many digits
and fractions, dates, NULLs, unicode, quotes, backslashes, bytes, booleans); and the row
statement the engine builds — text and bound parameters — is the one it built before the
change (positions picked from the values' tuple instead of a dict per LCR), for inserts,
updates and deletes with NULL old values, converters and every key order."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from sluice.aq.payload import ANYDATA_CODECS, PayloadCodec
from sluice.streams.apply.engine import ApplyEngine
from sluice.streams.apply.target import Target
from sluice.streams.capture import decode as D

COLUMNS = [("id", "bigint"), ("n", "numeric"), ("v", "text"), ("c", '"char"'), ("d", "date"),
           ("ts", "timestamp with time zone"), ("b", "bytea"), ("f", "boolean"),
           ("x", "double precision"), ("j", "jsonb")]
VALUES = [
    [1, "123456789012345678901234567890.123456789012345678901", "plain", "a", "2026-11-28",
     "2026-11-28 08:00:00.123456+00", "\\x00ff10", True, "1.5", '{"a": 1}'],
    [-9223372036854775808, "-0.000000000000000000000000000001", 'quo"te \\ back\\slash', "\"",
     "infinity", "1999-12-31 23:59:59+00", "\\x", False, "-1e-300", '{"k": "v\\"q"}'],
    [2, None, None, None, None, None, None, None, None, None],
    [3, "10.50", "unicode: žluťoučký kůň — 日本語 🐍 \u2028 tab\tnl\ncr\r", "é", "2000-02-29",
     "2026-01-01 00:00:00+00", "\\xdeadbeef", True, "0.1", "[]"],
    [4, "0", "", " ", "0001-01-01", "2026-06-30 12:00:00.5+00", "\\x00", False, "1e308", "null"],
]


def _wal2json(action: str, values: list, old: list | None, key_only: bool = False) -> str:
    cols = [{"name": n, "type": t, "value": v} for (n, t), v in zip(COLUMNS, values)]
    row: dict = {"action": action, "xid": 77, "lsn": "0/16B3748", "timestamp": "2026-11-28 08:00:00+00",
                 "schema": "src", "table": "t"}
    if action != "D":
        row["columns"] = cols
    if action != "I":
        row["identity"] = [{"name": n, "type": t, "value": v} for (n, t), v in zip(COLUMNS, old or values)]
        if key_only:         # REPLICA IDENTITY DEFAULT: the key's old value only
            row["identity"] = row["identity"][:1]
    # numbers as wal2json writes them: JSON numbers (a fraction's every digit), not strings
    text = json.dumps(row, ensure_ascii=False)
    for v in values + (old or []):
        if isinstance(v, str) and v and v[0] in "-0123456789" and v.count("-") < 2 and ":" not in v \
                and not v.startswith("0001"):
            text = text.replace(json.dumps(v), v)
    return text


def _lcrs() -> list:
    dec = D.Decoder("SRC.NET", None)
    txn = D.SourceTransaction(77, 1000, 1001, datetime(2026, 11, 28, 8, 0, tzinfo=timezone.utc), [])
    for i, values in enumerate(VALUES):
        for action, old, key_only in (("I", None, False), ("U", VALUES[(i + 1) % len(VALUES)], False),
                                      ("D", None, False), ("U", None, True), ("D", None, True)):
            text = _wal2json(action, values, old, key_only)
            row = D.parse_json(text)
            row["_text"] = text
            txn.changes.append(row)
    return list(dec.lcrs(txn))


CODEC = PayloadCodec("SYS.ANYDATA", None, lambda name: None)


def _by_json_loads(stored: str):
    """The envelope as ``PayloadCodec.decode`` read it before the change."""
    doc = json.loads(stored)
    return ANYDATA_CODECS[doc["$type"]][1](doc["value"])


def _seen(lcr) -> tuple:
    return (lcr.get_source_database_name(), lcr.get_command_type(), lcr.get_object_owner(),
            lcr.get_object_name(), lcr.get_tag(), lcr.get_transaction_id(), lcr.get_scn(),
            lcr.get_commit_scn(), lcr.get_source_time(), lcr.plain_values())


def test_envelope_read_by_the_scanner_as_by_json_loads():
    lcrs = _lcrs()
    assert len(lcrs) == 5 * len(VALUES)
    for lcr in lcrs:
        stored = CODEC.encode(lcr)
        assert stored.startswith('{"$type":"SYS.LCR$_ROW_RECORD","value":{')
        fast = CODEC._registered(stored)
        assert fast is not None
        assert _seen(fast) == _seen(_by_json_loads(stored)) == _seen(CODEC.decode(stored))
        # every digit of a NUMBER survives (digits and exponent as the source wrote them)
        for column, value in fast.plain_values()[0] + fast.plain_values()[1]:
            if column == "N" and value is not None:
                assert any(Decimal(value).as_tuple() == Decimal(v[1]).as_tuple() for v in VALUES if v[1] is not None)
        # and the values as AnyData (a handler's view) too
        a, b = CODEC.decode(stored), _by_json_loads(stored)
        for which in ("OLD", "NEW"):
            assert [(u.column_name, u.data.get_type_name(), u.data.value) for u in a.get_values(which, "N")] == \
                [(u.column_name, u.data.get_type_name(), u.data.value) for u in b.get_values(which, "N")]
    big = [lcr for lcr in lcrs if lcr.get_command_type() == "INSERT"][0]
    assert dict(CODEC.decode(CODEC.encode(big)).plain_values()[1])["N"] == \
        Decimal("123456789012345678901234567890.123456789012345678901")


@pytest.mark.parametrize("stored", [
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A"}} ',          # something after it
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A"},"x":1}',      # another key
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":',                  # cut short
    '{"$type":"NO.SUCH_TYPE","value":{}}',                            # not a registered type
    '{"$type":"SYS.LCR$_ROW_RECORD" ,"value":{}}',                    # another spelling
])
def test_other_envelopes_are_left_to_json_loads(stored):
    assert CODEC._registered(stored) is None


def test_other_anydata_values_unchanged():
    for value in (b"\x00\x01", {"a": [1, 2.5, None]}, "text", 12, None):
        assert CODEC.decode(CODEC.encode(value)) == value


# -- the statement --------------------------------------------------------------------------

class _Target(Target):
    dialect = "postgresql"
    placeholder = "%s"

    def __init__(self, tables: dict) -> None:
        super().__init__()
        self.tables = tables

    def table(self, owner: str, name: str) -> str:
        return f"{owner.lower()}.{name.lower()}"

    def _describe(self, owner, name):
        cols, key = self.tables[name]
        return list(cols), dict(cols), list(key)

    def converter(self, type_name):
        return (lambda v: v if v is None or isinstance(v, bool) else bool(int(v))) if type_name == "boolean" else None


class _Settings:
    def __init__(self, keys: dict) -> None:
        self.key_columns = keys


def _engine(tables: dict, keys: dict) -> ApplyEngine:
    e = ApplyEngine.__new__(ApplyEngine)
    e.target, e.settings, e._shapes = _Target(tables), _Settings(keys), {}
    return e


def _before(engine: ApplyEngine, lcr) -> tuple[str, tuple]:
    """The statement as ``ApplyEngine._statement`` built it at 619065e: its text (made as
    it still is) and its parameters looked up by (N/O, column) in a dict of the LCR's
    values, in the order of the placeholders: the new values set, then the key's old
    values and the other old values that are not NULL."""
    t = engine.target
    owner, name, cmd = lcr.get_object_owner(), lcr.get_object_name(), lcr.get_command_type()
    old, new = lcr.plain_values()
    old = () if cmd == "INSERT" else old
    new = () if cmd == "DELETE" else new
    values = {("N", c): v for c, v in new}
    values.update({("O", c): v for c, v in old})
    order = [("N", c) for c, _ in new] if cmd != "DELETE" else []
    if cmd != "INSERT":
        key = engine.settings.key_columns.get((owner, name)) or t.describe(owner, name)[2] or [c for c, _ in old]
        order += [("O", c) for c in (*key, *(c for c, _ in old if c not in key)) if values[("O", c)] is not None]
    conv = {c: t.converter(ty) for c, ty in t.describe(owner, name)[1].items()}
    params = tuple(values[k] if conv.get(k[1]) is None else conv[k[1]](values[k]) for k in order)
    nulls = tuple(i for i, (_, v) in enumerate(old) if v is None)
    sql = engine._shape(lcr, 0, tuple(c for c, _ in new), tuple(c for c, _ in old), nulls)[0]
    return sql, params


def test_statements_as_before():
    types = {"bigint": "bigint", "numeric": "numeric", "text": "text", '"char"': "char", "date": "date",
             "timestamp with time zone": "timestamptz", "bytea": "bytea", "boolean": "boolean",
             "double precision": "float8", "jsonb": "jsonb"}
    cols = [(n.upper(), types[t]) for n, t in COLUMNS]
    cases = [({"T": (cols, ["ID"])}, {}),                       # the primary key
             ({"T": (cols, [])}, {}),                             # no key: every old value
             ({"T": (cols, ["ID"])}, {("SRC", "T"): ["V", "ID"]})]   # SET_KEY_COLUMNS, another order
    lcrs = [CODEC.decode(CODEC.encode(x)) for x in _lcrs()]
    for tables, keys in cases:
        engine = _engine(tables, keys)
        for _ in range(2):                   # the shape made, then found in the cache
            for lcr in lcrs:
                if keys and len(lcr.plain_values()[0]) == 1:
                    continue        # the key's old value only: not the key columns set here
                assert engine._statement(lcr, 0) == _before(engine, lcr), lcr.get_command_type()
    engine = _engine({"T": (cols, ["ID"])}, {})
    one = [x for x in lcrs if x.get_command_type() == "DELETE"][-1]     # a single parameter
    assert engine._statement(one, 0) == ('DELETE FROM src.t WHERE "ID" = %s', (4,))


# -- the envelope's head read by a pattern (DecodedRowLCR.from_text) ------------------------

def _heads() -> list:
    """The LCRs of _lcrs() under heads of every kind the writer makes: tags, no SCN, no
    time, names and transaction ids that need escapes (the pattern leaves those to JSON)."""
    out = []
    when = datetime(2026, 11, 28, 8, 0, 0, 123456, tzinfo=timezone.utc)
    heads = [("SRC.NET", "OWN", "T", b"\x01\xab", "77.1.2", 1000, 1001, when),
             ("SRC.NET", "OWN", "T", None, "77", None, None, None),
             ("SRC.NET", "OWN", "T", b"", "0", 0, 0, datetime(2026, 1, 1)),
             ('Q"UOTE', "OWN", "T", None, "1", 5, 6, when),
             ("SRC.NET", "ŽLUŤ", "T\\B", None, "1", 5, 6, when),
             ("SRC.NET", "OWN", "T\n", None, "tab\t", 5, 6, when)]
    for lcr in _lcrs():
        for db, own, obj, tag, txn, scn, cscn, t in heads:
            copy = D.DecodedRowLCR._trusted(db, lcr.get_command_type(), own, obj, tag, txn, scn, cscn, t)
            copy._text, copy._raw_old, copy._raw_new = lcr._text, None, None
            copy._decoder, copy._form = lcr._decoder, D.DecodedRowLCR.TEXT
            out.append(copy)
    return out


def test_envelope_head_read_by_the_pattern_as_by_json_loads():
    taken = 0
    for lcr in _heads():
        stored = CODEC.encode(lcr)
        start = len('{"$type":"SYS.LCR$_ROW_RECORD","value":')
        fast = D.DecodedRowLCR.from_text(stored, start)
        plain = all(c not in stored[:stored.index('"pg":')] for c in "\\\n\t") and '"Q"' not in stored
        if fast is None:
            assert not plain, stored[:200]
        else:
            taken += 1
            assert _seen(fast) == _seen(_by_json_loads(stored))
            assert fast._text == _by_json_loads(stored)._text
        assert _seen(CODEC.decode(stored)) == _seen(_by_json_loads(stored))
    assert taken >= 3 * len(VALUES) * 5


@pytest.mark.parametrize("stored", [
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A","cmd":"INSERT","own":"O","obj":"T","tag":null,'
    '"txn":"1","scn":1,"cscn":2,"time":null,"pg":"{}"}} ',                         # after it
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A","cmd":"INSERT","own":"O","obj":"T","tag":null,'
    '"txn":"1","scn":1,"cscn":2,"time":null,"pg":"{}","x":1}}',                    # another key
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A","cmd":"INSERT","own":"O","obj":"T","tag":null,'
    '"txn":"1","scn":01,"cscn":2,"time":null,"pg":"{}"}}',                         # not JSON
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A","cmd":"INSERT","own":"O","obj":"T","tag":null,'
    '"txn":"1","scn":1.5,"cscn":2,"time":null,"pg":"{}"}}',                        # a fraction
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A","cmd":"INSERT","own":"O","obj":"T","tag":null,'
    '"txn":"1","scn":1,"cscn":2,"time":null,"pg":"{\x01}"}}',                      # control char
    '{"$type":"SYS.LCR$_ROW_RECORD","value":{"db":"A","cmd":"INSERT","own":"O","obj":"T","tag":null,'
    '"txn":"1","scn":1,"cscn":2,"time":null,"pg":"{}}}',                           # cut short
])
def test_other_heads_are_left_to_the_scanner(stored):
    assert D.DecodedRowLCR.from_text(stored, len('{"$type":"SYS.LCR$_ROW_RECORD","value":')) is None


@pytest.mark.parametrize("text", ['{"a": 1}', ' {"a": 1}', '{"a": 1} ', '{"a": 1.50, "b": [1, "x"]}'])
def test_parse_json_as_the_decoder(text):
    assert D.parse_json(text) == json.JSONDecoder(parse_float=str).decode(text)


@pytest.mark.parametrize("text", ['{"a": 1} x', '', '{"a": }', 'x'])
def test_parse_json_raises_as_the_decoder(text):
    with pytest.raises(json.JSONDecodeError) as got:
        D.parse_json(text)
    with pytest.raises(json.JSONDecodeError) as want:
        json.JSONDecoder(parse_float=str).decode(text)
    assert str(got.value) == str(want.value)
