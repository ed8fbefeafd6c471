"""Captured row LCRs' columns read straight from their stored document (issue 16:
sluice.pipeline.captured), differential against the LCR's way it shortcuts
(``DecodedRowLCR.from_document`` then ``lcr_row``).

Over real wal2json output (the capture tests' corpus: numbers with many digits, NULLs,
unicode, quotes, control characters, bytea, dates, infinity, quoted names, REPLICA
IDENTITY FULL, tags), wal2json-shaped rows of every type the decoder supports through the
decoder and the queue's codec (INSERT / UPDATE / DELETE, '' and NULL, escapes in names and
values, a tag), and hand-made stored documents (a column named twice, unsupported types,
odd heads, malformed text), the row ``to_row`` gives with the shortcut equals the row it
gives without it, value for value and type for type (maps in their order), and the
shortcut is taken for the documents it is meant for.
"""

from __future__ import annotations

import json
import random
import re

import pytest

from sluice.aq.payload import PayloadCodec
from sluice.pipeline import captured, rows
from sluice.streams import DDLLCR, RowLCR
from sluice.streams.capture.decode import Decoder, transactions
from tests.streams.test_capture_lazyrows import wal2json_rows  # noqa: F401  (the fixture)

CODEC = PayloadCodec("SYS.ANYDATA", None, lambda name: None)

# every type the decoder supports (decode._SUPPORTED, with modifiers as wal2json names
# them), each with values as wal2json writes them (raw JSON text)
TYPED = {
    "smallint": ["-32768", "0", "7"], "integer": ["2147483647", "-1"],
    "bigint": ["9223372036854775807", "-9223372036854775808", "12"], "oid": ["4294967295"],
    "numeric": ["123456789012345678901234567890.123456789012", "0", "-0.000000000001", "100",
                '"NaN"', "1.10", "99999999999999999999999999999999999999.99"],
    "numeric(12,2)": ["12.50", "-3.00"],
    "real": ["1.5", "-0", "3.4e+38", '"NaN"', '"Infinity"'],
    "double precision": ["1e+300", "-1.25e-300", "0.1", '"-Infinity"'],
    "boolean": ["true", "false"],
    "text": ['""', '"a\\"b\\\\c"', '"tab\\there\\nnew line \\u00e9 \\u2603 \\ud83d\\ude00"', '"\\u0001 ctl"',
             '"\u00fc raw"'],
    "character varying(40)": ['"O\'Brien"', '""'], "character varying": ['"v"'],
    "name": ['"pg_name"'], "uuid": ['"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"'], "citext": ['"CiT"'],
    "character(3)": ['"ab "', '"\\u00e9  "'], '"char"': ['"c"'], "char": ['"d"'], "bpchar": ['"e  "'],
    "json": ['"{\\"a\\":1}"', '"null"'], "jsonb": ['"{\\"k\\": [1, 2.50, \\"x\\\\\\"y\\"]}"', '"[]"'],
    "xml": ['"<a>&amp;</a>"'],
    "bytea": ['"\\\\x00ff10"', '"\\\\x"', '"deadbeef"'],
    "date": ['"2020-02-29"', '"infinity"', '"-infinity"', '"0001-01-01"'],
    "timestamp without time zone": ['"2021-03-04 05:06:07.123456"', '"infinity"'],
    "timestamp(3) without time zone": ['"1999-12-31 23:59:59.999"'],
    "timestamp with time zone": ['"2021-03-04 05:06:07.5+02"', '"2000-01-01 00:00:00+00"', '"-infinity"'],
    "timestamp(6) with time zone": ['"2021-03-04 05:06:07.123456+05:30"'],
}
NAMES = ["id", "Mixed", 'we"ird', "back\\slash", "\u00dcn\u00ef", "UPPER", "a b"]


def _column(name: str, pg_type: str, value: str) -> str:
    return f'{{"name":{json.dumps(name)},"type":{json.dumps(pg_type)},"value":{value}}}'


def _change(action: str, schema: str, table: str, columns: list[str] | None, identity: list[str] | None,
            lsn: int) -> str:
    parts = [f'"action":"{action}","xid":42,"timestamp":"2026-11-25 14:58:02.5+00","lsn":"0/{lsn:X}"',
             f'"schema":{json.dumps(schema)},"table":{json.dumps(table)}']
    if columns is not None:
        parts.append(f'"columns":[{",".join(columns)}]')
    if identity is not None:
        parts.append(f'"identity":[{",".join(identity)}]')
    return "{" + ",".join(parts) + "}"


def synthetic_changes(seed: int = 16, count: int = 400) -> list[str]:
    """wal2json format-2 rows of random changes, several transactions, tags."""
    rng = random.Random(seed)
    out: list[str] = []
    typed = [(t, v) for t, vs in TYPED.items() for v in vs] + [(t, "null") for t in TYPED]
    lsn = 0x100
    for xid in range(count // 20):
        out.append(json.dumps({"action": "B", "xid": xid}))
        for i in range(20):
            lsn += 1
            if i % 7 == 0:
                tag = rng.choice(["0a0b", "", "ff"])
                out.append(json.dumps({"action": "M", "xid": xid, "lsn": f"0/{lsn:X}", "transactional": True,
                                       "prefix": "sluice.tag", "content": tag}))
                lsn += 1
            cols = [_column(f"c{j}" if rng.random() < .6 else rng.choice(NAMES) + str(j), *rng.choice(typed))
                    for j in range(rng.randint(0, 8))]
            key = [_column("id", "bigint", str(i))]
            if rng.random() < .2:
                key = [_column("id", "integer", str(i)), _column("id", "text", '"dup"')]  # one name twice
            full = rng.random() < .4            # REPLICA IDENTITY FULL: the whole old row
            action = rng.choice("IUD")
            table = rng.choice(["t", "Odd\"Name", "\u00fcml", "T2"])
            schema = rng.choice(["hr", "Sch\\ema"])
            new = key + cols
            old = (key + [_column(f"c{j}", *rng.choice(typed)) for j in range(len(cols))]) if full else key
            out.append(_change(action, schema, table, new if action != "D" else None,
                               old if action != "I" else None, lsn))
        out.append(json.dumps({"action": "C", "xid": xid, "lsn": f"1/{xid:X}", "nextlsn": f"1/{xid + 1:X}",
                               "timestamp": rng.choice(["2026-11-25 14:58:02.911796+00", "2026-01-02 03:04:05+05:30",
                                                        None])}))
    return out


def stored(changes: list[str]) -> list[str]:
    """The payloads the capture enqueues for ``changes``: its captured form."""
    decoder = Decoder("DB1.NET", "sluice_store")
    out = []
    for lcr in (x for t in transactions(changes) for x in decoder.lcrs(t)):
        if isinstance(lcr, (RowLCR, DDLLCR)):
            out.append(CODEC.encode(lcr))
    return out


def _envelope(pg: str | None = None, **head: object) -> str:
    h = {"db": "DB1.NET", "cmd": "INSERT", "own": "HR", "obj": "T", "tag": None, "txn": "42", "scn": 5,
         "cscn": 7, "time": "2026-11-25T14:58:02.911796+00:00", **head}
    if pg is not None:
        h["pg"] = pg
    return json.dumps({"$type": "SYS.LCR$_ROW_RECORD", "value": h})


_ROW = _change("I", "hr", "t", [_column("id", "integer", "1"), _column("v", "text", '"x"')], None, 1)
HAND = [
    _envelope(_ROW),
    _envelope(_ROW, own="", obj="", txn="", tag="", db=None, scn=None, cscn=None, time=None),   # empties
    _envelope(_ROW, tag="0A0b", scn=123456789012345678901234567890, cscn=2 ** 70, time="2024-01-02T03:04:05"),
    _envelope(_ROW, cmd="UPDATE"),            # an UPDATE without identity: old values none
    _envelope(_ROW, cmd="DELETE"),            # a DELETE reads only the identity: none here
    _envelope(_ROW, cmd="LOB WRITE"),         # not a DML command: both lists read
    _envelope(_change("U", "hr", "t", [_column("id", "integer", "1")], [_column("id", "integer", "1")], 1),
              cmd="UPDATE", scn="77", cscn=7.5, time=3),   # odd SCN / time types, as the LCR has them
    _envelope('{"action":"I","columns":null,"identity":[]}'),
    _envelope('{"action":"I"}'),
    _envelope(_change("I", "hr", "t", [_column("tags", "text[]", '"{a}"'), _column("id", "integer", "1")],
                      None, 1)),              # unsupported: the LCR drops the column
    _envelope(_change("I", "hr", "t", [_column("i", "interval", '"1 day"')], None, 1)),
    _envelope(_change("I", "hr", "t", [_column("id", "integer", "true")], None, 1)),    # bool in an integer
    _envelope(_change("I", "hr", "t", [_column("id", "integer", "1.5")], None, 1)),     # a fraction in one
    _envelope(_change("I", "hr", "t", [_column("id", "integer", '"12"')], None, 1)),    # text in one
    _envelope(_change("I", "hr", "t", [_column("v", "text", "12")], None, 1)),          # a number in text
    _envelope(_change("I", "hr", "t", [_column("v", "text", "[1]")], None, 1)),
    _envelope(_change("I", "hr", "t", [_column("b", "bytea", '"zz"')], None, 1)),       # not hex
    _envelope(_change("I", "hr", "t", [_column("d", "date", '"yesterday"')], None, 1)),
    _envelope(_change("I", "hr", "t", [_column("n", "numeric", '"abc"')], None, 1)),
    _envelope(_change("I", "hr", "t", ['{"name":"x","type":"text"}'], None, 1)),        # no value
    _envelope('{"action":"I","columns":[1]}'),
    _envelope('{"action":"I","columns":{"name":"x"}}'),
    _envelope("[]"), _envelope("not json"), _envelope(""), _envelope(_ROW + " "),
    _envelope(_ROW, time="not a time"), _envelope(_ROW, tag="xyz"), _envelope(_ROW, scn="x"),
    json.dumps({"$type": "SYS.LCR$_ROW_RECORD", "value": {"db": "D", "cmd": "INSERT", "own": "O", "obj": "T",
                                                          "txn": "1", "scn": 1, "cscn": 1, "pg": _ROW}}),  # no tag, time
    json.dumps({"$type": "SYS.LCR$_ROW_RECORD", "value": {"pg": _ROW}}),
    json.dumps({"$type": "SYS.LCR$_ROW_RECORD", "value": {"pg": 5, "db": "D", "cmd": "INSERT", "own": "O",
                                                          "obj": "T", "tag": None, "txn": "1", "scn": 1,
                                                          "cscn": 1, "time": None}}),
    json.dumps({"$type": "SYS.LCR$_ROW_RECORD", "value": {**json.loads(_envelope(_ROW))["value"],
                                                          "new": [], "old": []}}),   # both forms: pg read
    # an INSERT reads no identity, a DELETE no columns, whatever the row holds
    _envelope(_change("I", "hr", "t", [_column("id", "integer", "1")], [_column("id", "integer", "2")], 1)),
    _envelope(_change("D", "hr", "t", [_column("id", "integer", "1")], [_column("id", "integer", "2")], 1),
              cmd="DELETE"),
]


def _typed(value):
    """``value`` with the type of every part spelled out (1 == Decimal(1) == True in Python)."""
    if isinstance(value, dict):
        return ["dict", [(_typed(k), _typed(v)) for k, v in value.items()]]
    if isinstance(value, (tuple, list)):
        return [type(value).__name__, [_typed(v) for v in value]]
    return [type(value).__name__, repr(value)]


def compare(payloads: list[str], monkeypatch) -> list[int]:
    """Assert both ways give the same rows; per row whether the shortcut gave it: 2 from
    the stored text, 1 from the parsed document, 0 no (the LCR's way)."""
    records = [(i, "Q", bytes(16), None, 1, 0, 9, 1700000000.5, "t", "APS", p) for i, p in enumerate(payloads)]
    taken, fast = [], []
    for r in records:
        fast.append(rows.to_row("HR.Q", "SYS.ANYDATA", r))
        taken.append(2 if captured.captured_text(r[-1]) is not None else
                     0 if fast[-1][12] else int(captured.captured_row(json.loads(r[-1])["value"]) is not None))
    monkeypatch.setattr(rows, "_captured_row", lambda doc: None)    # the LCR's way
    monkeypatch.setattr(rows, "_captured_text", lambda text: None)
    slow = [rows.to_row("HR.Q", "SYS.ANYDATA", r) for r in records]
    for payload, f, s in zip(payloads, fast, slow):
        assert _typed(f) == _typed(s), payload
    return taken


def _compact(payload: str) -> str:
    """``payload`` as the capture writes it (no spaces): read from its text when it can."""
    return json.dumps(json.loads(payload), separators=(",", ":"))


COMPACT = [_compact(p) for p in HAND]
_TEXT = _compact(HAND[0])
TRAILING = [_TEXT + " ", " " + _TEXT, _TEXT[:-2] + ',"x":1}}', _TEXT[:-2] + "}}}", _TEXT[:-2] + "} }",
            _TEXT[:-2] + "}", _TEXT.replace('"time":"2026', '"time":" 2026'),
            _TEXT.replace('"scn":5', '"scn":-0'), _TEXT.replace('"scn":5', '"scn":05'),
            _TEXT.replace('"tag":null', '"tag":"0A"'), _TEXT.replace('"tag":null', '"tag":""'),
            _TEXT.replace('"time":"2026-11-25T14:58:02.911796+00:00"', '"time":""'),
            _TEXT.replace('"time":"2026-11-25T14:58:02.911796+00:00"', '"time":null'),
            _TEXT.replace('"own":"HR"', '"own":""'), _TEXT.replace('"own":"HR"', '"own":"H\\u0052"')]


def test_hand_made_documents(monkeypatch):
    taken = compare(HAND, monkeypatch)
    # the shortcut for what it reads as the LCR would: also a number where text is expected …
    assert len(taken) == len(HAND) and [i for i, t in enumerate(taken) if t] == [*range(9), 12, 13, 14, 15, 25, 32, 33, 34]
    # … from the text when written as the capture writes it (not with "tag" and "time"
    # missing, nor with "new" and "old" too)
    assert compare(COMPACT, monkeypatch) == [2 if t and i not in (1, 6, 32) else t for i, t in enumerate(taken)]
    assert compare(TRAILING, monkeypatch) == [1, 1, 1, 0, 1, 0, 0, 1, 0, 2, 2, 0, 2, 2, 1]
    rows_ = [rows.to_row("Q", "SYS.ANYDATA", (1, "Q", b"", None, 1, 0, 9, None, "t", None, p)) for p in HAND]
    assert all(r[12] is None for r in rows_[:9]) and any(r[12] for r in rows_)    # malformed: a reason


def test_synthetic_wal2json(monkeypatch):
    payloads = stored(synthetic_changes())
    assert len(payloads) > 350 and all('"pg":' in p for p in payloads)
    taken = compare(payloads, monkeypatch)
    # from the text but when a name has an escape (non-ASCII too: the envelope is then parsed)
    assert set(taken) == {1, 2} and taken.count(2) > len(taken) / 5


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_more_seeds(monkeypatch, seed):
    payloads = stored(synthetic_changes(seed, 200))
    assert len(payloads) > 150 and 0 not in compare(payloads, monkeypatch)


def test_real_wal2json(monkeypatch, wal2json_rows):  # noqa: F811
    _, changes = wal2json_rows
    payloads = stored(changes)
    captured_ = [p for p in payloads if '"pg":' in p]
    assert len(captured_) > 3000
    taken = compare(payloads, monkeypatch)
    assert len(taken) - taken.count(0) == len(captured_) and taken.count(2) > 3000


def test_shortcut_is_checked(monkeypatch):
    """The comparison fails when the shortcut is wrong in any column."""
    payload = stored(synthetic_changes(5, 20))[3]
    good = captured._row

    def wrong(*head):
        when, cols = good(*head)
        return when, cols[:-1] + ({**cols[-1], "EXTRA": "SYS.NUMBER"},)
    monkeypatch.setattr(captured, "_row", wrong)
    with pytest.raises(AssertionError, match=re.escape(payload[:40])):
        compare([payload], monkeypatch)
