"""The LCR columns of a captured row LCR's stored document, without building the LCR.

A capture process stores a row LCR as its attributes plus wal2json's own text of the row
(``pg``, :meth:`~sluice.streams.capture.decode.DecodedRowLCR.raw_text_document`).  Read
back the usual way it becomes a ``DecodedRowLCR`` whose values turn into ``RowUnit``s of
``AnyData`` only for :func:`~sluice.rules.compile.typed.lcrschema.lcr_row` to turn them
into text again: about three times the cost of a plain document's row, on every row a
pipeline reads from a capture's queue.  :func:`captured_row` gives the same columns
straight from the parsed wal2json row, doing per column exactly what that path does
(the decoder's name and type mapping, its value conversion, ``value_text``), with the
common values -- integers, character text -- taken as they are.  It gives None, and the
caller goes the LCR's way, for anything else: a column type the decoder does not support
(the LCR drops such columns), or a document that path would reject or read differently
(it then says why).  :func:`captured_text` does the same from the stored text as the
capture writes it, reading the head by a pattern: of the envelope only wal2json's text is
then scanned as JSON (and once more, as the row).  tests/pipeline/test_captured.py holds
the two ways equal.
"""

from __future__ import annotations

import re
from datetime import datetime
from json.decoder import scanstring as _scanstring
from decimal import Decimal
from typing import Any, Callable

from ..rules.compile.typed.lcrschema import value_text
from ..streams.lcr import COMPATIBLE_9_2, COMPATIBLE_10_1
from ..streams.capture.decode import column_type, oracle_name
from ..streams.capture.pgsource import parse_json

__all__ = ["captured_row", "captured_text"]

_NUMBER, _VARCHAR = "SYS.NUMBER", "SYS.VARCHAR2"
_TEXT_TYPES = frozenset({"SYS.VARCHAR2", "SYS.CHAR", "SYS.CLOB"})    # decoded as the text itself
_TYPES_10_1 = frozenset({"SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE"})

# PostgreSQL type as wal2json names it -> (ANYDATA type, how a value becomes the decoder's
# Python value, which kind of shortcut its text allows: 1 integer, 2 text, 0 none); None
# when the decoder does not support the type
_Kind = tuple[str, Callable[[Any], Any], int]
_kinds: dict[str, _Kind | None] = {}
_names: dict[str, str] = {}


def _kind(pg_type: str) -> _Kind | None:
    kind = _kinds.get(pg_type, False)
    if kind is False:
        found = column_type(pg_type)
        if found is None:
            kind = None
        else:
            anydata, convert = found[0], found[1]
            short = 1 if anydata == _NUMBER and pg_type in _INTEGERS else 2 if anydata in _TEXT_TYPES else 0
            kind = (anydata, convert, short)
        if len(_kinds) > 4096:
            _kinds.clear()
        _kinds[pg_type] = kind
    return kind  # type: ignore[return-value]


# the integer types (no modifier): wal2json writes their values as JSON integers, which
# the decoder keeps as they are and number_text writes as str(int)
_INTEGERS = frozenset({"smallint", "integer", "bigint", "oid"})


def _columns(columns: Any) -> tuple[dict, dict, bool] | None:
    """(values as text, ANYDATA types, a 10.1 type among them) of a wal2json column list,
    as the decoder's LCR holds them (the last of two equal names wins); None when a column's
    type is not supported."""
    values: dict[str, str | None] = {}
    types: dict[str, str] = {}
    newer = False
    for col in columns or ():
        pg = col["name"]
        name = _names.get(pg)
        if name is None:
            if len(_names) > 4096:
                _names.clear()
            name = _names[pg] = oracle_name(pg)
        kind = _kind(col["type"])
        if kind is None:
            return None
        v = col["value"]
        if v is None:
            text = None
        elif kind[2] == 1 and type(v) is int:
            text = str(v)
        elif kind[2] == 2 and type(v) is str:
            text = v or None
        else:
            text = value_text(kind[1](v))
        values[name] = text
        types[name] = kind[0]
        newer = newer or kind[0] in _TYPES_10_1
    return values, types, newer


_NOTHING: tuple[dict, dict, bool] = ({}, {}, False)
_Ready = tuple[datetime | None, tuple]


def _row(db: Any, cmd: Any, own: Any, obj: Any, tag: Any, txn: Any, scn: Any, cscn: Any, when: Any,
         pg: Any) -> _Ready | None:
    row = parse_json(pg)
    # the LCR reads new values but for a DELETE, old values (the replica identity) but for
    # an INSERT
    new = _columns(row.get("columns")) if cmd != "DELETE" else _NOTHING
    old = _columns(row.get("identity")) if cmd != "INSERT" else _NOTHING
    if new is None or old is None:
        return None
    return (datetime.fromisoformat(when) if isinstance(when, str) else None,
            ("ROW", db, cmd, own, obj, None, None, None, bytes.fromhex(tag) if tag else None, txn,
             None if scn is None else Decimal(scn), None if cscn is None else Decimal(cscn),
             COMPATIBLE_10_1 if new[2] or old[2] else COMPATIBLE_9_2,
             old[0], new[0], old[1], new[1]))


def captured_row(doc: dict) -> _Ready | None:
    """(source time, the LCR columns in ``LCR_COLUMNS`` order) of a captured row LCR's
    stored document (the ``value`` of its ANYDATA envelope), as ``lcr_row`` gives them for
    ``DecodedRowLCR.from_document(doc)``; None when that LCR must be built (see the
    module's docstring)."""
    try:
        return _row(doc["db"], doc["cmd"], doc["own"], doc["obj"], doc["tag"], doc["txn"], doc["scn"],
                    doc["cscn"], doc["time"], doc["pg"])
    except Exception:  # noqa: BLE001  (the LCR's way says what is wrong with it)
        return None


# A stored captured row LCR as raw_text_document writes it (the ANYDATA envelope around
# it): read by a pattern up to wal2json's text, which is then the one JSON string scanned,
# instead of the whole envelope parsed.  Every string the pattern takes has no backslash,
# quote or control character, so its JSON text is its value; text in any other form (other
# key order, escapes, -0 …) is parsed as JSON and goes to captured_row.
_PLAIN = r'"([^"\\\x00-\x1f]*)"'
_STORED = re.compile(rf'\{{"\$type":"SYS\.LCR\$_ROW_RECORD","value":\{{"db":{_PLAIN},"cmd":{_PLAIN},'
                     rf'"own":{_PLAIN},"obj":{_PLAIN},"tag":(?:null|"([0-9a-fA-F]*)"),"txn":{_PLAIN},'
                     r'"scn":(null|-?[1-9][0-9]*|0),"cscn":(null|-?[1-9][0-9]*|0),'
                     r'"time":(?:null|"([0-9T:.+ -]*)"),"pg":"')
_match = _STORED.match


def captured_text(stored: str) -> _Ready | None:
    """:func:`captured_row` of the stored text of a captured row LCR (its ANYDATA envelope)
    in the form the capture writes; None for any other text."""
    m = _match(stored)
    if m is None:
        return None
    try:
        pg, end = _scanstring(stored, m.end())
        if end != len(stored) - 2 or not stored.endswith("}}"):
            return None
        db, cmd, own, obj, tag, txn, scn, cscn, when = m.groups()
        return _row(db, cmd, own, obj, tag, txn, None if scn == "null" else int(scn),
                    None if cscn == "null" else int(cscn), when, pg)
    except Exception:  # noqa: BLE001  (as in captured_row)
        return None
