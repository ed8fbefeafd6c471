"""Message records as DataFrame rows, and back to LCRs (no Spark here; the schema is
built on demand).

A row holds the record's queue columns, then the payload: an LCR in an ANYDATA queue
becomes the columns the rule compiler reads (:data:`~sluice.rules.compile.typed.lcrschema.LCR_COLUMNS`,
made by :func:`~sluice.rules.compile.typed.lcrschema.lcr_row`, the one place that maps an
LCR onto columns) plus what a DDL LCR needs to be rebuilt; any other payload keeps its
stored form in ``user_data`` (JSON text; RAW as hexadecimal) with its type in
``payload_type``.  A payload that cannot be decoded -- a malformed LCR -- is a row with
``error`` set and no LCR columns: the stream goes on and the sink decides (the apply
sink puts it in the error queue).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Iterable, Iterator

from ..rules.compile.typed.lcrschema import LCR_COLUMNS, lcr_row, value_text
from ..streams import DDLLCR, RowLCR, RowUnit
from ..streams.lcr import AnyData, row_compatible
from ..streams.lcrcodec import CONVERTED_TYPES, document_values, plain_row_document
from ..streams.capture import decode as _decode  # noqa: F401  (captured LCRs' stored form)
from ..aq.payload import ANYDATA_CODECS
from .captured import captured_row, captured_text

__all__ = ["MESSAGE_FIELDS", "FIELDS", "spark_schema", "to_row", "to_rows", "lcr_from_row", "is_lcr_type",
           "arrow_batches", "DOCUMENT", "jvm_document", "source_rows"]

ANYDATA = "SYS.ANYDATA"
# (name, Spark type) of the record part of a row
MESSAGE_FIELDS = (
    ("queue", "string"), ("seq", "bigint"), ("msgid", "binary"), ("corrid", "string"),
    ("priority", "int"), ("state", "int"), ("cscn", "bigint"), ("enq_time", "timestamp"),
    ("enq_tid", "string"), ("consumer_name", "string"), ("payload_type", "string"),
    ("user_data", "string"), ("error", "string"), ("source_time", "timestamp"),
    ("ddl_text", "string"), ("logon_user", "string"), ("current_schema", "string"),
)
FIELDS = tuple(n for n, _ in MESSAGE_FIELDS) + tuple(LCR_COLUMNS)
_LCR_NONE = (None,) * len(LCR_COLUMNS)


def is_lcr_type(type_name: str | None) -> bool:
    return type_name in (RowLCR.oracle_type, DDLLCR.oracle_type)


def spark_schema(documents: bool = False) -> Any:
    """The ``StructType`` of a queue's rows: :data:`MESSAGE_FIELDS`, then the LCR columns
    (``documents``: then :data:`DOCUMENT`, the stored text of the row LCRs left to the JVM)."""
    from pyspark.sql import types as T
    from ..rules.compile.typed.lcrschema import spark_schema as lcr_schema

    types = {"string": T.StringType(), "bigint": T.LongType(), "binary": T.BinaryType(),
             "int": T.IntegerType(), "timestamp": T.TimestampType()}
    schema = T.StructType([T.StructField(n, types[t]) for n, t in MESSAGE_FIELDS])
    for f in lcr_schema().fields:
        schema.add(f)
    if documents:
        schema.add(T.StructField(DOCUMENT, T.StringType()))
    return schema


def _when(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, timezone.utc)


def _decode_payload(payload_type: str, stored: Any) -> tuple[str | None, str | None, Any]:
    """(payload type, user_data text, LCR or None); raises on a malformed payload.  The LCR
    may be its stored document (plain form) or already its columns (a captured one's,
    :func:`.captured.captured_row`)."""
    if stored is None:
        return payload_type, None, None
    if payload_type == "RAW":
        return "RAW", bytes(stored).hex().upper(), None
    if payload_type != ANYDATA:
        return payload_type, stored if isinstance(stored, str) else bytes(stored).decode(), None
    if type(stored) is str and '"pg"' in stored:
        ready = _captured_text(stored)      # a capture's row LCR in its own form: not parsed whole
        if ready is not None:
            return RowLCR.oracle_type, None, ready
    doc = json.loads(stored)
    kind, value = doc["$type"], doc["value"]
    if is_lcr_type(kind):
        if kind == RowLCR.oracle_type:
            if plain_row_document(value):
                return kind, None, value    # its columns come straight from the document
            if "pg" in value:           # a capture's (lcrcodec.ROW_FORMS["pg"]): likewise if it can
                ready = _captured_row(value)
                if ready is not None:
                    return kind, None, ready
        return kind, None, ANYDATA_CODECS[kind][1](value)
    return kind, value if isinstance(value, str) else json.dumps(value, separators=(",", ":")), None


# (tests put the LCR's way, None, in their place to compare the two)
_captured_row, _captured_text = captured_row, captured_text


def to_row(queue: str, payload_type: str, record: tuple) -> tuple:
    """One DataFrame row (:data:`FIELDS` order) of a record (``queueio.RECORD_FIELDS`` order)."""
    seq, _q, msgid, corrid, priority, state, cscn, enq_time, enq_tid, consumer, stored = record
    head = (queue, seq, bytes(msgid), corrid, priority, state, cscn, _when(enq_time), enq_tid, consumer)
    try:
        kind, text, lcr = _decode_payload(payload_type, stored)
        if lcr is None:
            return head + (kind, text, None, None, None, None, None) + _LCR_NONE
        if isinstance(lcr, dict):
            return head + (kind, None, None, _source_time(lcr.get("time")), None, None, None) + _document_row(lcr)
        if type(lcr) is tuple:      # (source time, LCR columns) of a captured document
            return head + (kind, None, None, lcr[0], None, None, None) + lcr[1]
        cols = lcr_row(lcr)
        ddl = (lcr.get_ddl_text(), lcr.get_logon_user(), lcr.get_current_schema()) \
            if isinstance(lcr, DDLLCR) else (None, None, None)
        when = lcr.get_source_time()
        return head + (kind, None, None, when if isinstance(when, datetime) else None, *ddl) + \
            tuple(cols[c] for c in LCR_COLUMNS)
    except Exception as e:  # noqa: BLE001  (bad input is data: it travels with its reason)
        raw = stored if isinstance(stored, str) else (bytes(stored).hex() if stored is not None else None)
        return head + (payload_type, raw, f"{type(e).__name__}: {e}", None, None, None, None) + _LCR_NONE


def _source_time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _document_row(doc: dict) -> tuple:
    """The LCR columns of a row LCR's stored document, as :func:`lcr_row` gives them for
    the LCR it describes (the test suite holds the two equal), without building the LCR."""
    sides = {}
    types_seen = []
    for side in ("old", "new"):
        values, types = {}, {}
        for item in doc[side]:
            name, t, v = item[0], item[1], item[2]
            types[name] = t
            kind = type(v)
            # the common values need no conversion: text of a character column, an integer
            if (kind is str and t not in CONVERTED_TYPES) or v is None:
                values[name] = v or None
            elif kind is int and t == "SYS.NUMBER":
                values[name] = str(v)
            else:
                values[name] = value_text(document_values([item])[0][2])
        sides[side] = (values, types)
        types_seen += types.values()
    tag = doc["tag"]
    scn, cscn = doc["scn"], doc["cscn"]
    return ("ROW", doc["db"], doc["cmd"], doc["own"] or None, doc["obj"] or None, None, None, None,
            bytes.fromhex(tag) or None if tag else None, doc["txn"] or None,
            None if scn is None else Decimal(scn), None if cscn is None else Decimal(cscn),
            row_compatible(bool(doc.get("extra")), types_seen),
            sides["old"][0], sides["new"][0], sides["old"][1], sides["new"][1])


def to_rows(queue: str, payload_type: str, records: Iterable[tuple]) -> Iterator[tuple]:
    for r in records:
        yield to_row(queue, payload_type, r)


# -- row LCR documents decoded in the JVM (:mod:`.documents`) ------------------------------
#
# A stored plain row LCR whose text is exactly one of the forms below is handed to Spark
# as its text (column DOCUMENT, LCR columns NULL) and decoded there by ``from_json``: the
# pattern admits only what the JVM gives the same answer for as :func:`_document_row` --
# the ANYDATA envelope and the document's keys as lcrcodec writes them, in that order, no
# extra attributes, no LOB information; a column value NULL, an integer (its text:
# ``str(int)`` both ways), a string of a type not converted when read (its own text), a
# NUMBER as decimal text of at most 38 digits (Oracle's TO_CHAR of it, ``number_text``),
# a DATE/TIMESTAMP as ``datetime.isoformat()`` writes it (checked here to be a date), RAW
# and BLOB as hexadecimal digits; JSON strings with any escape but lone surrogates.  Floats,
# exponents, longer numbers, other date forms go through Python, and so does anything else
# (other payloads, DDL LCRs, captured ``pg`` documents, malformed text), as before.

DOCUMENT = "lcr_document"
_STR = (r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u(?![dD][89abAB])[0-9a-fA-F]{4}'
        r'|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})*"')
_INT = r"(?:0|-?[1-9][0-9]{0,37})"
_HEX = r'"(?:[0-9a-fA-F]{2})*"'
_DECIMAL = r'"(?=-?[0-9.]{1,38}")-?[0-9]+(?:\.[0-9]+)?"'
# what isoformat() writes (no zero microseconds, no -00:00): the JVM only puts a space for the T
_ISO = (r'"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.(?!000000)[0-9]{6})?'
        r'(?:\+[0-9]{2}:[0-9]{2}|-(?!00:00)[0-9]{2}:[0-9]{2})?"')
_OTHER_TYPE = r'"(?!SYS\.(?:NUMBER|DATE|TIMESTAMP|RAW|BLOB)")[A-Za-z0-9_.$#]*"'
_ITEM = (rf'\[{_STR},(?:"SYS\.NUMBER",(?:null|{_INT}|{_DECIMAL})|"SYS\.(?:DATE|TIMESTAMP)",(?:null|{_ISO})'
         rf'|"SYS\.(?:RAW|BLOB)",(?:null|{_HEX})|(?:null|{_OTHER_TYPE}),(?:null|{_INT}|{_STR}))\]')
_LIST = rf"\[(?:{_ITEM}(?:,{_ITEM})*)?\]"
_OPT = rf"(?:null|{_STR})"
_PLAIN_ROW = re.compile(
    rf'\{{"\$type":"SYS\.LCR\$_ROW_RECORD","value":\{{"db":{_OPT},"cmd":{_OPT},"own":{_OPT},"obj":{_OPT},'
    rf'"tag":(?:null|{_HEX}),"txn":{_OPT},"scn":(?:null|{_INT}),"cscn":(?:null|{_INT}),'
    rf'"time":(?:null|"(?P<time>[0-9T:.+\- ]*)"),"old":{_LIST},"new":{_LIST}\}}\}}')
_DATE_VALUES = re.compile(r'"SYS\.(?:DATE|TIMESTAMP)","([^"]*)"')
_times: dict[str, datetime | None] = {}     # times and dates seen (a transaction's LCRs share theirs)


def _iso(text: str) -> datetime | None:
    """``datetime.fromisoformat(text)``, None when it is no date (cached)."""
    when = _times.get(text, _times)
    if when is _times:
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            when = None
        if len(_times) > 4096:
            _times.clear()
        _times[text] = when
    return when  # type: ignore[return-value]


def jvm_document(payload_type: str, stored: Any) -> tuple[bool, datetime | None]:
    """(may the JVM decode ``stored``, its source time): see the comment above."""
    if payload_type != ANYDATA or type(stored) is not str:
        return False, None
    m = _PLAIN_ROW.fullmatch(stored)
    if m is None:
        return False, None
    if '"SYS.DATE","' in stored or '"SYS.TIMESTAMP","' in stored:
        if any(_iso(d) is None for d in _DATE_VALUES.findall(stored)):
            return False, None      # not a date: Python's decode gives the row its error
    text = m.group("time")
    if text is None:
        return True, None
    when = _iso(text)
    return when is not None, when


_ROW_HEAD = (RowLCR.oracle_type, None, None)
_DDL_NONE = (None, None, None)


def source_rows(queue: str, payload_type: str, records: Iterable[tuple], documents: bool) -> Iterator[tuple]:
    """:func:`to_rows`; with ``documents``, each row ends with :data:`DOCUMENT`: the stored
    text of a row LCR the JVM decodes (its LCR columns NULL here), else NULL."""
    if not documents:
        yield from to_rows(queue, payload_type, records)
        return
    for r in records:
        stored = r[10]
        jvm, when = jvm_document(payload_type, stored)
        if jvm:
            yield (queue, r[0], bytes(r[2]), r[3], r[4], r[5], r[6], _when(r[7]), r[8], r[9]) + _ROW_HEAD + \
                (when,) + _DDL_NONE + _LCR_NONE + (stored,)
        else:
            yield to_row(queue, payload_type, r) + (None,)


_MAPS = frozenset(i for i, name in enumerate(FIELDS) if name.endswith(("_values", "_types")))


def arrow_batches(tuples: Iterable[tuple], size: int = 4096, documents: bool = False) -> Iterator[Any]:
    """``pyarrow.RecordBatch``es of :func:`spark_schema` (Arrow's form of it, as PySpark's
    data source reader expects it) from rows of :data:`FIELDS` (``documents``: and
    :data:`DOCUMENT`)."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(spark_schema(documents), timezone="UTC")
    chunk: list[tuple] = []
    for row in tuples:
        chunk.append(row)
        if len(chunk) == size:
            yield _batch(pa, schema, chunk)
            chunk = []
    if chunk:
        yield _batch(pa, schema, chunk)


def _batch(pa: Any, schema: Any, chunk: list[tuple]) -> Any:
    # Arrow converts Decimal objects and nested lists slowly: SCNs go as int64 and are cast,
    # maps as one offsets, one keys and one values array
    columns = list(zip(*chunk))
    arrays = []
    for i, (field, values) in enumerate(zip(schema, columns)):
        if i in _MAPS:
            arrays.append(_map_array(pa, values))
        elif pa.types.is_decimal(field.type):
            ints = [None if v is None else int(v) for v in values]
            if all(v is None or -_INT64 <= v < _INT64 for v in ints):
                arrays.append(pa.array(ints, pa.int64()).cast(field.type))
            else:   # an SCN past int64
                arrays.append(pa.array([None if v is None else Decimal(v) for v in ints], field.type))
        else:
            arrays.append(pa.array(values, type=field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


_INT64 = 1 << 63


def _map_array(pa: Any, values: tuple) -> Any:
    if all(v is None for v in values):     # no row LCR decoded here
        return pa.nulls(len(values), pa.map_(pa.string(), pa.string()))
    offsets, keys, items, nulls = [0], [], [], []
    for v in values:
        nulls.append(v is None)   # a NULL map: the row is no row LCR
        if v is not None:
            keys.extend(v)
            items.extend(v.values())
        offsets.append(len(keys))
    return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), pa.array(keys, pa.string()),
                                   pa.array(items, pa.string()), mask=pa.array(nulls, pa.bool_()))


# -- rows back to LCRs (sinks that enqueue or apply) --------------------------------------

_NUMBERS = frozenset({"SYS.NUMBER", "SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE"})
_DATES = frozenset({"SYS.DATE", "SYS.TIMESTAMP"})
_BINARY = frozenset({"SYS.RAW", "SYS.BLOB"})


def value_of(type_name: str | None, text: str | None) -> Any:
    """A column value from the schema's text form (the inverse of ``lcrschema.value_text``)."""
    if text is None:
        return None
    if type_name in _NUMBERS:
        d = Decimal(text)
        return int(d) if d == d.to_integral_value() and "E" not in text.upper() and "." not in text else d
    if type_name in _DATES:
        return datetime.fromisoformat(text)
    if type_name in _BINARY:
        return bytes.fromhex(text)
    return text


def _units(values: dict | None, types: dict | None) -> list[RowUnit]:
    types = types or {}
    return [RowUnit('"' + name + '"', AnyData(types.get(name), value_of(types.get(name), text)))
            for name, text in (values or {}).items()]


def _mapping(value: Any) -> dict | None:
    """A map column as a dict: a dict, or its entries in order (``map_entries``)."""
    if value is None:
        return None
    return dict(value) if not isinstance(value, dict) else value


def lcr_from_row(row: Any) -> RowLCR | DDLLCR:
    """The LCR a row describes (``row``: a Spark ``Row`` or a mapping of :data:`FIELDS`)."""
    get = row.__getitem__
    tag = get("tag")
    tag = bytes(tag) if tag is not None else None
    scn = get("scn")
    cscn = get("commit_scn")
    common = dict(commit_scn=int(cscn) if cscn is not None else None, source_time=get("source_time"))
    if get("lcr_kind") == "DDL":
        return DDLLCR(get("source_database_name"), get("command_type"), get("object_owner"),
                      get("object_name"), get("object_type"), get("ddl_text"), get("logon_user"),
                      get("current_schema"), get("base_table_owner"), get("base_table_name"), tag,
                      get("transaction_id"), int(scn) if scn is not None else None, **common)
    return RowLCR(get("source_database_name"), get("command_type"), get("object_owner"), get("object_name"),
                  tag, get("transaction_id"), int(scn) if scn is not None else None,
                  _units(_mapping(get("old_values")), _mapping(get("old_types"))),
                  _units(_mapping(get("new_values")), _mapping(get("new_types"))), **common)
