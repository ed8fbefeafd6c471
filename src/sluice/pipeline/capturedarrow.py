"""Captured row LCRs of a batch of queue records straight into Arrow columns.

The stream source's Python workers turned each record into a row tuple (:func:`.rows.to_row`,
:func:`.captured.captured_text` for a capture's row LCR: a pattern over the head, the row
text scanned, its columns looped over in Python) and the tuples into Arrow (~16 µs a row
together).  :func:`record_batches` does the captured row LCRs of a chunk of records by
column, in Arrow's C++: a pattern (RE2, ``match_substring_regex``) admits the stored texts
in exactly the form the capture writes, Arrow's JSON reader parses their envelopes, a
second pattern admits wal2json's row texts whose values are NULL, canonical integers or
strings, and the JSON reader parses those; names, types and values become the map
columns through ``pyarrow.compute``.  Per column it gives what :func:`.captured.captured_row`
gives (the decoder's name and type mapping; integers as their digits, character text as
itself, '' as NULL), and the few distinct type names, tags and times of a chunk are looked
up in Python once each.

Everything else keeps its old way, row by row and in its place in the chunk: another
payload, a plain LCR, a record whose stored text the patterns do not admit (escapes the
patterns leave out, numbers in other forms, other key orders, malformed text), and a row
whose columns need more than the shortcut (a type whose value is converted, an unsupported
type, a non-ASCII name, two columns of one name, a tag or time that does not read):
those go through :func:`.rows.source_rows` (so a malformed document still becomes a row
with its error).  tests/pipeline/test_capturedarrow.py holds the two ways equal.
"""

from __future__ import annotations

from datetime import datetime
from itertools import compress
from typing import Any, Iterable, Iterator

from ..streams import RowLCR
from ..streams.lcr import COMPATIBLE_9_2, COMPATIBLE_10_1
from . import captured, rows

__all__ = ["record_batches"]

# a JSON string whose escapes are the usual ones, \u escapes not lone surrogates (RE2: no
# look-ahead, so the non-surrogate \u escapes are spelled out)
_STR = (r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-cA-Ce-fE-F][0-9a-fA-F]{3}|\\u[dD][0-7][0-9a-fA-F]{2}'
        r'|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"')
_PLAIN = r'"[^"\\\x00-\x1f]*"'
_INT = r"(?:0|-?[1-9][0-9]*)"
# the head of the stored text as raw_text_document writes it (captured._STORED); the text
# must end with '"}}', and Arrow's JSON reader takes the rest (a malformed wal2json text, an
# extra key, a duplicate, a control character, a lone surrogate: the reader fails, and the
# chunk goes the old way)
_ENVELOPE = (rf'^\{{"\$type":"SYS\.LCR\$_ROW_RECORD","value":\{{"db":{_PLAIN},"cmd":{_PLAIN},"own":{_PLAIN},'
             rf'"obj":{_PLAIN},"tag":(?:null|"[0-9a-fA-F]*"),"txn":{_PLAIN},"scn":(?:null|{_INT}),'
             rf'"cscn":(?:null|{_INT}),"time":(?:null|"[0-9T:.+ -]*"),"pg":"')
# wal2json's row text (pgsource.WAL2JSON_OPTIONS), values NULL, integers or strings
_COLUMN = rf'\{{"name":{_STR},"type":{_STR},"value":(?:null|{_INT}|{_STR})\}}'
_LIST = rf"\[(?:{_COLUMN}(?:,{_COLUMN})*)?\]"
_ROW = (rf'^\{{"action":"[IUD]","xid":[0-9]+,"timestamp":{_STR},"lsn":{_STR},"schema":{_STR},'
        rf'"table":{_STR}(?:,"columns":{_LIST})?(?:,"identity":{_LIST})?\}}$')
# an integer value gets its own key, so that every value reads as a string
_INT_VALUE, _INT_KEY = rf'"value":({_INT})([,}}])', r'"ival":"\1"\2'

_ROW_TYPE = RowLCR.oracle_type


def _arrow() -> tuple[Any, Any, Any]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj
    return pa, pc, pj


_schemas: dict[str, Any] = {}


def _json_schemas(pa: Any) -> tuple[Any, Any]:
    if not _schemas:
        s = pa.string()
        _schemas["envelope"] = pa.schema([("$type", s), ("value", pa.struct([
            ("db", s), ("cmd", s), ("own", s), ("obj", s), ("tag", s), ("txn", s), ("scn", pa.int64()),
            ("cscn", pa.int64()), ("time", s), ("pg", s)]))])
        column = pa.list_(pa.struct([("name", s), ("type", s), ("value", s), ("ival", s)]))
        _schemas["row"] = pa.schema([("columns", column), ("identity", column)])
    return _schemas["envelope"], _schemas["row"]


def _read_json(pa: Any, pj: Any, texts: list, schema: Any, unexpected: str) -> Any:
    """One table of ``texts`` (each one JSON object on one line) by ``schema``; ArrowInvalid
    unless it has a row per text."""
    data = "\n".join(texts).encode()
    table = pj.read_json(pa.BufferReader(data),
                         read_options=pj.ReadOptions(use_threads=False, block_size=max(1 << 20, len(data) + 1)),
                         parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior=unexpected))
    if table.num_rows != len(texts):
        raise pa.ArrowInvalid("a text held more than one JSON value")
    return table


def record_batches(queue: str, payload_type: str, records: Iterable[tuple], documents: bool = False,
                   size: int = 4096) -> Iterator[Any]:
    """:func:`.rows.arrow_batches` of :func:`.rows.source_rows` -- the same rows, the captured
    row LCRs among them built by column (see the module's docstring)."""
    pa, pc, pj = _arrow()
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(rows.spark_schema(documents), timezone="UTC")
    chunk: list[tuple] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield from _chunk(pa, pc, pj, schema, queue, payload_type, chunk, documents)
            chunk = []
    if chunk:
        yield from _chunk(pa, pc, pj, schema, queue, payload_type, chunk, documents)


def _slow(pa: Any, schema: Any, queue: str, payload_type: str, records: list, documents: bool) -> Any:
    return rows._batch(pa, schema, list(rows.source_rows(queue, payload_type, records, documents)))


def _chunk(pa: Any, pc: Any, pj: Any, schema: Any, queue: str, payload_type: str, chunk: list,
           documents: bool) -> Iterator[Any]:
    fast = None
    if payload_type == rows.ANYDATA:
        try:
            fast = _captured(pa, pc, pj, schema, queue, chunk, documents)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, UnicodeEncodeError):
            fast = None     # (text Arrow does not take, e.g. a lone surrogate): the old way
    if fast is None:
        yield _slow(pa, schema, queue, payload_type, chunk, documents)
        return
    good, batch = fast
    i, n, at = 0, len(chunk), 0    # at: the next row of ``batch`` (the good rows, in order)
    while i < n:
        j = i
        while j < n and good[j] == good[i]:
            j += 1
        if good[i]:
            yield batch.slice(at, j - i)
            at += j - i
        else:
            yield _slow(pa, schema, queue, payload_type, chunk[i:j], documents)
        i = j


def _captured(pa: Any, pc: Any, pj: Any, schema: Any, queue: str, chunk: list,
              documents: bool) -> tuple[list[bool], Any] | None:
    """(per record: is it among the rows built here, the RecordBatch of those rows), or
    None when none is."""
    stored = [r[10] if type(r[10]) is str else None for r in chunk]
    if not any(s is not None and '"pg":"' in s for s in stored):
        return None     # (plain LCRs, other payloads: no capture's document among them)
    texts = pa.array(stored, pa.string())
    admitted = pc.fill_null(pc.and_(pc.match_substring_regex(texts, _ENVELOPE), pc.ends_with(texts, '"}}')), False)
    if not pc.any(admitted).as_py():
        return None
    ok = admitted.to_pylist()
    envelope_schema, row_schema = _json_schemas(pa)
    value = _read_json(pa, pj, list(compress(stored, ok)), envelope_schema, "error").column("value").combine_chunks()
    pg = value.field("pg")
    # wal2json's text: admitted by the row pattern, else the row goes the old way
    row_ok = pc.fill_null(pc.match_substring_regex(pg, _ROW), False)
    pg_rows = pc.replace_substring_regex(pc.if_else(row_ok, pg, '{"columns":[]}'), _INT_VALUE, _INT_KEY)
    parsed = _read_json(pa, pj, pg_rows.to_pylist(), row_schema, "ignore")
    n = len(value)
    cmd = value.field("cmd")
    bad = pc.invert(row_ok)
    sides = {}
    for side, column, skip in (("new", "columns", "DELETE"), ("old", "identity", "INSERT")):
        include = pc.fill_null(pc.not_equal(cmd, skip), True)
        maps, side_bad, newer = _side(pa, pc, parsed.column(column).combine_chunks(), include, n)
        sides[side] = maps
        bad = pc.or_(bad, side_bad)
        sides[side + "_newer"] = newer
    tags, tag_bad = _lookup(pa, pc, value.field("tag"), _tag, pa.binary())
    times, time_bad = _lookup(pa, pc, value.field("time"), _time, schema.field("source_time").type)
    bad = pc.or_(pc.or_(bad, tag_bad), time_bad)
    keep = pc.invert(bad)
    if not pc.any(keep).as_py():
        return None
    # the records' own columns
    index = pa.array([i for i, a in enumerate(ok) if a], pa.int64())
    records = pc.filter(index, keep).to_pylist()
    picked = [chunk[i] for i in records]
    good = [False] * len(chunk)
    for i in records:
        good[i] = True
    m = len(picked)
    columns = list(zip(*picked))
    out: dict[str, Any] = {
        "queue": pa.repeat(pa.scalar(queue, pa.string()), m),
        "seq": pa.array(columns[0], pa.int64()),
        "msgid": pa.array([bytes(v) for v in columns[2]], pa.binary()),
        "corrid": pa.array(columns[3], pa.string()),
        "priority": pa.array(columns[4], pa.int32()),
        "state": pa.array(columns[5], pa.int32()),
        "cscn": pa.array(columns[6], pa.int64()),
        "enq_time": _timestamps(pa, pc, columns[7], schema.field("enq_time").type),
        "enq_tid": pa.array(columns[8], pa.string()),
        "consumer_name": pa.array(columns[9], pa.string()),
        "payload_type": pa.repeat(pa.scalar(_ROW_TYPE, pa.string()), m),
    }
    value = value.filter(keep)
    newer = pc.or_(sides["new_newer"], sides["old_newer"]).filter(keep)
    lcr = {
        "lcr_kind": pa.repeat(pa.scalar("ROW", pa.string()), m),
        "source_database_name": value.field("db"), "command_type": value.field("cmd"),
        "object_owner": value.field("own"), "object_name": value.field("obj"),
        "tag": tags.filter(keep), "transaction_id": value.field("txn"),
        "scn": value.field("scn"), "commit_scn": value.field("cscn"),
        "compatible": pc.if_else(newer, COMPATIBLE_10_1, COMPATIBLE_9_2),
        "old_values": sides["old"][0].filter(keep), "new_values": sides["new"][0].filter(keep),
        "old_types": sides["old"][1].filter(keep), "new_types": sides["new"][1].filter(keep),
    }
    out["source_time"] = times.filter(keep)
    out.update(lcr)
    arrays = []
    for field in schema:
        a = out.get(field.name)
        arrays.append(pa.nulls(m, field.type) if a is None else a.cast(field.type))
    return good, pa.RecordBatch.from_arrays(arrays, schema=schema)


def _side(pa: Any, pc: Any, lists: Any, include: Any, n: int) -> tuple[tuple[Any, Any], Any, Any]:
    """((values map, types map) of one side, per row: must it go the old way, has it a
    10.1 type); ``include``: rows whose LCR reads this side (others get empty maps)."""
    lengths = pc.if_else(include, pc.fill_null(pc.list_value_length(lists), 0), 0)
    parents = pc.list_parent_indices(lists)
    flat = lists.flatten()
    taken = pc.array_take(include, parents)
    flat, parents = flat.filter(taken), parents.filter(taken)
    names, types = flat.field("name"), flat.field("type")
    value, ival = flat.field("value"), flat.field("ival")
    # the type's kind (captured._kind), looked up once per distinct name
    distinct = pc.unique(types).to_pylist()
    kinds = [None if t is None else captured._kind(t) for t in distinct]
    where = pc.index_in(types, value_set=pa.array(distinct, pa.string()))
    anydata = pc.array_take(pa.array([k and k[0] for k in kinds], pa.string()), where)
    short = pc.array_take(pa.array([k[2] if k else -1 for k in kinds], pa.int8()), where)
    has_int, has_text = pc.is_valid(ival), pc.is_valid(value)
    fine = pc.and_(
        pc.is_valid(anydata),
        pc.and_(pc.or_(pc.invert(has_int), pc.equal(short, 1)), pc.or_(pc.invert(has_text), pc.equal(short, 2))))
    # names: the decoder's oracle_name, for ASCII names without a NUL (one name twice in
    # a row is found below)
    fine = pc.and_(fine, pc.and_(pc.string_is_ascii(names), pc.invert(pc.match_substring(names, "\x00"))))
    fine = pc.and_(fine, pc.greater(pc.utf8_length(names), 0))
    keys = pc.if_else(pc.equal(pc.ascii_lower(names), names), pc.ascii_upper(names), names)
    text = pc.coalesce(ival, pc.if_else(pc.equal(value, ""), pa.scalar(None, pa.string()), value))
    offsets = pa.array([0], pa.int32())
    offsets = pa.concat_arrays([offsets, pc.cumulative_sum(lengths.cast(pa.int32()))])
    bad_rows = pc.unique(parents.filter(pc.invert(pc.fill_null(fine, False))))
    of_10_1 = pc.is_in(anydata, value_set=pa.array(sorted(captured._TYPES_10_1)))   # needs compatibility 10.1
    newer_rows = pc.unique(parents.filter(pc.fill_null(of_10_1, False)))
    # a name twice in one row: the keys of each row joined, per distinct list looked at once
    listed = pa.ListArray.from_arrays(offsets, keys)
    joined = pc.binary_join(listed, "\x00").dictionary_encode()
    twice = [i for i, s in enumerate(joined.dictionary.to_pylist()) if s and len(set(p := s.split("\x00"))) < len(p)]
    rows_all = pa.array(range(n), pa.int64())
    bad = pc.is_in(rows_all, value_set=bad_rows.cast(pa.int64()))
    if twice:
        bad = pc.or_(bad, pc.fill_null(pc.is_in(joined.indices, value_set=pa.array(twice, joined.indices.type)),
                                       False))
    newer = pc.is_in(rows_all, value_set=newer_rows.cast(pa.int64()))
    values_map = pa.MapArray.from_arrays(offsets, keys, text)
    types_map = pa.MapArray.from_arrays(offsets, keys, anydata)
    return (values_map, types_map), bad, newer


def _tag(text: str) -> bytes | None:
    return bytes.fromhex(text) if text else None


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _lookup(pa: Any, pc: Any, texts: Any, convert: Any, arrow_type: Any) -> tuple[Any, Any]:
    """(``convert`` of each text, NULL for NULL; per row: did it raise), converted once per
    distinct text."""
    encoded = texts.dictionary_encode()
    out, failed = [], []
    for i, t in enumerate(encoded.dictionary.to_pylist()):
        try:
            out.append(convert(t))
        except Exception:  # noqa: BLE001  (the old way says why)
            out.append(None)
            failed.append(i)
    converted = pc.array_take(pa.array(out, arrow_type), encoded.indices)
    bad = pc.is_in(encoded.indices, value_set=pa.array(failed, encoded.indices.type))
    return converted, pc.fill_null(bad, False)


def _timestamps(pa: Any, pc: Any, epochs: tuple, arrow_type: Any) -> Any:
    """``rows._when`` of each epoch (datetime.fromtimestamp's rounding: the fraction's
    microseconds half to even), by column when none is negative."""
    if any(e is not None and (type(e) not in (float, int) or e < 0) for e in epochs):
        return pa.array([rows._when(e) for e in epochs], arrow_type)
    seconds = pa.array(epochs, pa.float64())
    whole = pc.floor(seconds)
    micro = pc.round(pc.multiply(pc.subtract(seconds, whole), 1e6), round_mode="half_to_even")
    total = pc.add(pc.multiply(whole.cast(pa.int64()), 1_000_000), micro.cast(pa.int64()))
    return total.cast(arrow_type)
