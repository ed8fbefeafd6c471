"""LCRs as ANYDATA payloads: how a row or DDL LCR is stored in a queue table.

Seed 001 "ANYDATA Queues and Typed Queues": "In an Oracle Streams replication
environment, logical change records (LCRs) must be staged in ANYDATA queues."  A
captured LCR is enqueued into its capture process's ANYDATA queue, so the queue's
payload codec (:mod:`sluice.aq.payload`) must store and give back LCRs; this module
registers their form with it.  The document keeps every attribute of the LCR; a
column is ``[name, type name, value]`` where the ANYDATA type says how the value is
written (NUMBER: a JSON number, or a decimal string when it is a ``Decimal``;
DATE/TIMESTAMP: ISO text; RAW/BLOB: hexadecimal; character types: text).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from ..aq.payload import ANYDATA_CODECS
from ..rules.engine.anydata import stored_anydata
from .lcr import AnyData, DDLLCR, RowLCR, RowUnit

__all__ = ["lcr_to_document", "lcr_from_document", "plain_row_document", "document_values"]

_DATES = frozenset({"SYS.DATE", "SYS.TIMESTAMP"})
_BINARY = frozenset({"SYS.RAW", "SYS.BLOB"})
# the types whose stored value is converted when read (:func:`document_values`); any other
# type's stored text or integer is the value itself
CONVERTED_TYPES = frozenset({"SYS.NUMBER"}) | _DATES | _BINARY


def _value_out(type_name: str | None, value: Any) -> Any:
    if value is None:
        return None
    if type(value) is Decimal:
        return str(value)
    if type_name in _DATES:
        return value.isoformat()
    if type_name in _BINARY:
        return value.hex()
    return value


def _value_in(type_name: str | None, value: Any) -> Any:
    if value is None:
        return None
    if type_name == "SYS.NUMBER" and type(value) is str:
        return Decimal(value)
    if type_name in _DATES:
        return datetime.fromisoformat(value)
    if type_name in _BINARY:
        return bytes.fromhex(value)
    return value


def _units_out(units: dict[str, RowUnit]) -> list:
    out = []
    for name, unit in units.items():
        data = unit.data
        tn = data.get_type_name()
        item = [name, tn, _value_out(tn, data.value)]
        if unit.lob_information is not None or unit.long_information is not None or \
                unit.lob_offset is not None or unit.lob_operation_size is not None:
            item.append([unit.lob_information, unit.lob_offset, unit.lob_operation_size,
                         unit.long_information])
        out.append(item)
    return out


_PLAIN = frozenset({None, "SYS.VARCHAR2", "SYS.CHAR", "SYS.NVARCHAR2", "SYS.NCHAR", "SYS.CLOB",
                    "SYS.NCLOB", "SYS.BINARY_DOUBLE", "SYS.BINARY_FLOAT"})


def _units_in(items: list) -> dict[str, RowUnit]:
    """An ``LCR$_ROW_LIST`` as stored: its names were canonical when it was written, so the
    units are made as they are (no checking again: an apply process reads many; the
    immutable AnyData filled through its slots, a value kept as JSON gave it where its type
    needs no conversion)."""
    units = {}
    for item in items:
        name, tn, value = item[0], item[1], item[2]
        data = stored_anydata(tn, value if value is None or tn in _PLAIN
                              or (tn == "SYS.NUMBER" and type(value) is not str)
                              else _value_in(tn, value))
        unit = RowUnit(name, data)
        if len(item) > 3:
            unit.lob_information, unit.lob_offset, unit.lob_operation_size, \
                unit.long_information = item[3]
        units[name] = unit
    return units


_last_time: list = [None, None]   # the LCRs of a transaction share their source time


def _time_out(when: Any) -> Any:
    if when is _last_time[0]:
        return _last_time[1]
    text = when.isoformat() if isinstance(when, datetime) else when
    _last_time[:] = when, text
    return text


def _common_out(lcr: Any) -> dict:
    tag = lcr._tag
    doc = {"db": lcr._source_database_name, "cmd": lcr._command_type,
           "own": lcr._object_owner, "obj": lcr._object_name,
           "tag": tag.hex() if tag is not None else None, "txn": lcr._transaction_id,
           "scn": lcr._scn, "cscn": lcr._commit_scn, "time": _time_out(lcr._source_time)}
    extra = lcr._extra
    if extra:
        doc["extra"] = [[k, v.get_type_name(), _value_out(v.get_type_name(), v.value)]
                        for k, v in extra.items()]
    return doc


def _common_in(lcr: Any, doc: dict) -> None:
    for name, tn, value in doc.get("extra") or ():
        lcr.set_extra_attribute(name, AnyData(tn, _value_in(tn, value)))


def _time_in(value: Any) -> Any:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


# other stored forms of row LCRs: the document's key -> its reader (registered by the
# producer, e.g. "pg" for sluice.streams.capture.decode)
ROW_FORMS: dict[str, Any] = {}


def lcr_to_document(lcr: RowLCR | DDLLCR) -> dict | str:
    """The JSON-able document of an LCR (the ``value`` of its ANYDATA envelope), or its
    JSON text when the LCR can write itself (a captured row LCR not read yet)."""
    text = getattr(lcr, "raw_text_document", None)
    if text is not None:
        text = text()
        if text is not None:
            return text
    doc = _common_out(lcr)
    if isinstance(lcr, RowLCR):
        raw = getattr(lcr, "raw_document", None)    # straight from the capture's decoder
        lists = raw() if raw is not None else None
        if lists is not None:
            doc["old"], doc["new"] = lists
        else:
            doc["old"] = _units_out(lcr._old)
            doc["new"] = _units_out(lcr._new)
    else:
        doc.update(otype=lcr.get_object_type(), ddl=lcr.get_ddl_text(),
                   logon=lcr.get_logon_user(), cur=lcr.get_current_schema(),
                   bown=lcr.get_base_table_owner(), bname=lcr.get_base_table_name())
    return doc


def _row_from(doc: dict) -> RowLCR:
    for key, reader in ROW_FORMS.items():
        if key in doc:
            return reader(doc)
    tag = doc["tag"]
    lcr = RowLCR._trusted(doc["db"], doc["cmd"], doc["own"], doc["obj"], bytes.fromhex(tag) if tag else None,
                          doc["txn"], doc["scn"], doc["cscn"], _time_in(doc["time"]))
    lcr._old, lcr._new = _units_in(doc["old"]), _units_in(doc["new"])
    _common_in(lcr, doc)
    return lcr


def _ddl_from(doc: dict) -> DDLLCR:
    tag = doc["tag"]
    lcr = DDLLCR._trusted_ddl((doc["db"], doc["cmd"], doc["own"], doc["obj"], bytes.fromhex(tag) if tag else None,
                               doc["txn"], doc["scn"], doc["cscn"], _time_in(doc["time"])),
                              doc["otype"], doc["ddl"], doc["logon"], doc["cur"], doc["bown"], doc["bname"])
    _common_in(lcr, doc)
    return lcr


def plain_row_document(doc: dict) -> bool:
    """Is ``doc`` a row LCR in this module's own form (not a producer's, see ROW_FORMS)?"""
    return "new" in doc and not any(key in doc for key in ROW_FORMS)


def document_values(items: list) -> list[tuple[str, str | None, Any]]:
    """``(column, ANYDATA type name, value)`` of a stored column list, without building the
    LCR (readers that only want the values: the Spark engine's rows)."""
    return [(item[0], item[1], _value_in(item[1], item[2])) for item in items]


def lcr_from_document(doc: dict) -> RowLCR | DDLLCR:
    """The LCR a document of :func:`lcr_to_document` describes."""
    return _row_from(doc) if "new" in doc else _ddl_from(doc)


ANYDATA_CODECS[RowLCR.oracle_type] = (lcr_to_document, _row_from)
ANYDATA_CODECS[DDLLCR.oracle_type] = (lcr_to_document, _ddl_from)
