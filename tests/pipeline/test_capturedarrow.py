"""Captured row LCRs built by column in Arrow (issue 16: sluice.pipeline.capturedarrow),
differential against the row way it replaces (``rows.arrow_batches`` of
``rows.source_rows``, which test_captured.py holds equal to the LCR's way).

Over the same corpora as test_captured.py (real wal2json output, generated rows of every
supported type, hand-made and malformed stored documents, the capture's exact form with
odd heads and tails), in chunks of several sizes, mixed with plain LCRs, other payloads and
odd record columns, the record batches of both ways make equal tables, value for value
and type for type, rows in their order (a malformed document keeps its error row); and the
rows the column way is for are built by it.
"""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

from sluice import RowLCR
from sluice.pipeline import capturedarrow, rows
from tests.pipeline.test_captured import CODEC, COMPACT, HAND, TRAILING, stored, synthetic_changes
from tests.streams.test_capture_lazyrows import wal2json_rows  # noqa: F401  (the fixture)


def _records(payloads: list, epoch: object = 1795913843.822442) -> list[tuple]:
    return [(i + 1, "Q", bytes([i % 256]) * 16, None if i % 3 else f"c{i}", i % 5, 0, 100 + i // 7,
             epoch if not isinstance(epoch, list) else epoch[i % len(epoch)], f"t{i // 7}",
             "APS" if i % 4 else None, p) for i, p in enumerate(payloads)]


def _table(batches: list) -> pa.Table:
    return pa.Table.from_batches(batches)


def compare(payloads: list, monkeypatch, payload_type: str = "SYS.ANYDATA", sizes=(4096, 7),
            **kw: object) -> int:
    """Assert both ways give the same table (documents off and on, chunks of ``sizes``);
    the number of rows the column way built."""
    records = _records(payloads, **kw)
    built = []
    real = capturedarrow._captured

    def counted(*a: object) -> object:
        out = real(*a)
        built.append(0 if out is None else sum(out[0]))
        return out
    monkeypatch.setattr(capturedarrow, "_captured", counted)
    for documents in (False, True):
        old = _table(list(rows.arrow_batches(rows.source_rows("HR.Q", payload_type, records, documents),
                                             documents=documents)))
        for size in sizes:
            built.clear()
            new = _table(list(capturedarrow.record_batches("HR.Q", payload_type, records, documents, size)))
            assert new.schema == old.schema
            assert new.num_rows == old.num_rows == len(records)
            for i, (a, b) in enumerate(zip(old.to_pylist(), new.to_pylist())):
                assert a == b, (i, payloads[i])
            assert new.equals(old)
    return sum(built)


def _p5(n: int) -> list[str]:
    """P5's captured documents (bench_pipeline._P5Capture's form), INSERTs and UPDATEs."""
    changes = []
    for t in range(n // 5):
        changes.append(json.dumps({"action": "B", "xid": 1000 + t}))
        for i in range(5):
            k = t * 5 + i
            cols = (f'"columns":[{{"name":"id","type":"bigint","value":{k}}},{{"name":"name","type":"text",'
                    f'"value":"n{k}"}},{{"name":"amount","type":"integer","value":{k % 1000}}}]')
            action = "U" if i == 3 else "I"
            ident = f',"identity":[{{"name":"id","type":"bigint","value":{k}}}]' if action == "U" else ""
            changes.append(f'{{"action":"{action}","xid":{1000 + t},"timestamp":"2026-11-29 01:00:00.1+00",'
                           f'"lsn":"0/{0x1000 + k:X}","schema":"u{k % 10}","table":"t{k % 3}",{cols}{ident}}}')
        changes.append(json.dumps({"action": "C", "xid": 1000 + t, "lsn": f"1/{t:X}", "nextlsn": f"1/{t + 1:X}",
                                   "timestamp": "2026-11-29 01:00:%02d.5+00" % (t % 60)}))
    return stored(changes)


def test_p5_documents_all_by_column(monkeypatch):
    payloads = _p5(200)
    assert len(payloads) == 200
    assert compare(payloads, monkeypatch) == 200


def test_synthetic_wal2json(monkeypatch):
    payloads = stored(synthetic_changes())
    built = compare(payloads, monkeypatch)
    # converted types, non-ASCII names, names twice go the row way; the rest by column
    assert 0 < built < len(payloads)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_more_seeds(monkeypatch, seed):
    compare(stored(synthetic_changes(seed, 200)), monkeypatch)


def test_real_wal2json(monkeypatch, wal2json_rows):  # noqa: F811
    _, changes = wal2json_rows
    payloads = stored(changes)
    assert compare(payloads, monkeypatch, sizes=(4096, 97)) > 0


def test_hand_made_and_malformed(monkeypatch):
    """Each odd document in its own chunk and among good ones: errors keep their reason."""
    good = _p5(10)
    # chunks of 3, each a good document, one odd one, a good one: every odd document in a
    # chunk of its own among good ones (one compare: the tables are built once, not per document)
    compare([p for odd in HAND + COMPACT + TRAILING for p in (good[3], odd, good[4])], monkeypatch, sizes=(3,))
    mixed = [p for odd in HAND + COMPACT + TRAILING for p in (odd, good[len(odd) % 10])]
    built = compare(mixed, monkeypatch, sizes=(4096, 5, 1))
    assert built >= len(HAND + COMPACT + TRAILING)
    errors = [r for r in rows.source_rows("Q", "SYS.ANYDATA", _records(mixed), False) if r[12]]
    assert errors      # malformed documents: rows with their reason, in both ways


def test_odd_texts_in_the_capture_form(monkeypatch):
    """Texts that pass the head's pattern but not the JSON reader, or hold more than one
    value: the chunk goes the row way, the same rows come out."""
    text = _p5(5)[0]
    body = text[:-2]
    odd = [body + "}}" + body + "}}", body + ',"x":"y"}}', body.replace('"pg":"', '"pg":"\x01'),
           body[:-1] + '\\ud800"}}', body[:-1] + '\\q"}}', body + '}\n{"$type":"x"}}',
           text.replace('\\"value\\":', '\\"value\\": '), text.replace('\\"bigint\\"', '\\"numeric\\"'),
           text.replace('\\"name\\":\\"id\\"', '\\"name\\":\\"\\u00fcid\\"'),
           text.replace('\\"name\\":\\"name\\"', '\\"name\\":\\"ID\\"'),        # one name twice
           text.replace('\\"name\\":\\"name\\"', '\\"name\\":\\"Name\\"'),      # kept as written
           text.replace('\\"value\\":\\"n0\\"', '\\"value\\":\\"\\"'),          # '' is NULL
           text.replace('\\"value\\":0}', '\\"value\\":null}'),
           text.replace('\\"value\\":0}', '\\"value\\":-0}'),
           text.replace('\\"value\\":0}', '\\"value\\":12345678901234567890123}')]
    for o in odd:
        compare([*_p5(5), o, *_p5(5)], monkeypatch, sizes=(4096, 4))


def test_other_payloads_and_records(monkeypatch):
    """Plain LCRs, DDL-less user payloads, NULL and bytes payloads, odd enqueue times."""
    plain = CODEC.encode(RowLCR("DB", "INSERT", "HR", "T", None, "1.2.3", 5, None, {"ID": 1, "N": "x"},
                                commit_scn=9))
    payloads = [*_p5(5), plain, None, '{"$type":"SYS.VARCHAR2","value":"hi"}', *_p5(5)]
    compare(payloads, monkeypatch)
    for epoch in (None, 0, 1700000000, -1.5, [1.0000005, 2.5e-6, 1795913843.9999995, 7.0000015]):
        compare(_p5(10), monkeypatch, epoch=epoch)
    compare(["x", "y"], monkeypatch, payload_type="RAW")
    rnd = random.Random(16)
    epochs = [rnd.uniform(0, 4e9) for _ in range(500)]
    compare(_p5(500), monkeypatch, epoch=epochs, sizes=(4096,))


def test_comparison_is_checked(monkeypatch):
    """The comparison fails when the column way is wrong in a value."""
    real = capturedarrow._side

    def wrong(pa, pc, lists, include, n):
        (values, types), bad, newer = real(pa, pc, lists, include, n)
        keys = values.keys
        return (pa.MapArray.from_arrays(values.offsets, keys, pc.utf8_upper(values.items)), types), bad, newer
    import pyarrow.compute as pc
    monkeypatch.setattr(capturedarrow, "_side", lambda pa, pc_, lists, include, n: wrong(pa, pc, lists, include, n))
    with pytest.raises(AssertionError):
        compare(_p5(5), monkeypatch)
