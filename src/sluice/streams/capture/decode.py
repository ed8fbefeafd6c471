"""From decoded PostgreSQL changes to LCRs.

Seed 001 "Staging and Propagation": a capture process turns changes into logical
change records; a row LCR carries the command type, the owner and name of the
table, old and new column values with their types, the transaction id, the SCN,
and (seed 000, the rule conditions) the tag and source database.

**Names.**  PostgreSQL folds unquoted identifiers to lower case, Oracle to upper
case, so the same unquoted name maps across: schema ``hr`` / table ``employees``
/ column ``region_id`` are owner ``HR``, object ``EMPLOYEES``, column
``REGION_ID`` — what an Oracle data dictionary would show for an unquoted
``hr.employees``, so seed 000's ``:dml.get_object_owner() = 'HR'`` works.  A
name holding an upper-case letter (created quoted, ``"Orders"``) keeps its exact
spelling, as a quoted Oracle name does, and so does a lower-case name that upper
case would not give back (``straße``, whose upper case is ``STRASSE``).  (``"EMP"``
and ``emp`` in one schema would both be ``EMP``; such a pair is not captured apart.)
Rules compare owner and name exactly as this mapping gives them.

**Types** (PostgreSQL -> the ANYDATA type of the LCR's value): smallint, integer,
bigint, oid, numeric -> NUMBER (``int`` / ``Decimal``, every digit kept); real ->
BINARY_FLOAT, double precision -> BINARY_DOUBLE; boolean -> NUMBER 1/0 (Oracle's
convention before BOOLEAN); text, varchar, name, uuid, citext -> VARCHAR2 (an
empty string stays empty: the value is PostgreSQL's, not Oracle's NULL);
character -> CHAR; json, jsonb, xml -> CLOB (their text); bytea -> RAW; date ->
DATE; timestamp -> TIMESTAMP; timestamp with time zone -> TIMESTAMP in UTC (an
aware ``datetime``; a year outside 1 to 9999 is ORA-01841 when the value is read).  Domains count as their base type.  Anything else (arrays,
intervals, times, geometric, network, ranges, enums and other user-defined types)
is unsupported: a change to such a table is not captured and the table is listed
in DBA_STREAMS_UNSUPPORTED (see :mod:`.process`).

**Old and new values.**  INSERT: new values, every column.  UPDATE: new values as
PostgreSQL logged them (every column, except an unchanged TOASTed one), old values
the replica identity (the primary key, or the whole old row with REPLICA IDENTITY
FULL).  DELETE: old values = the replica identity.  ``get_value('NEW', c)`` of an
UPDATE falls back to the old value, as in Oracle.  TRUNCATE, which PostgreSQL logs
as a change, is a DDL LCR (``TRUNCATE TABLE``), as Oracle captures it.

**Partitioned tables.**  PostgreSQL logs a change to a partitioned table under the
partition holding the row; the LCR names the partitioned table (:attr:`Decoder.roots`),
as Oracle's does.  A row moving to another partition is logged, and captured, as its
DELETE and INSERT.  TRUNCATE of a partition is a ``TRUNCATE TABLE`` of the partition
whose base table is the partitioned table.
"""

from __future__ import annotations

import re
from json.decoder import scanstring as _scanstring
from json.encoder import encode_basestring_ascii
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Iterator

from ...aq.payload import ANYDATA_TEXT_READERS
from ...errors import ora
from .. import lcrcodec
from ..lcr import COMPATIBLE_9_2, COMPATIBLE_10_1, AnyData, DDLLCR, RowLCR, RowUnit
from .ddltext import statement_text
from .pgsource import DDL_PREFIX, TAG_PREFIX, lsn_to_int, parse_json

__all__ = ["SourceTransaction", "Unsupported", "Decoder", "DecodedRowLCR", "transactions",
           "oracle_name"]

_COMMANDS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE"}


def oracle_name(pg_name: str) -> str:
    """The Oracle spelling of a PostgreSQL identifier (see the module's docstring).  A
    lower-case name whose upper case does not lower back to it (``straße`` -> ``STRASSE``,
    ligatures, the dotless ``ı``) keeps its spelling, as a quoted name does: folded, it
    would name another table (``strasse``) wherever the name goes back to PostgreSQL."""
    if pg_name != pg_name.lower():
        return pg_name
    upper = pg_name.upper()
    return upper if upper.lower() == pg_name else pg_name


def pg_name(oracle: str) -> str:
    """The PostgreSQL spelling of an owner or object name as this mapping gives it."""
    return oracle.lower() if oracle == oracle.upper() else oracle


@dataclass(slots=True)
class SourceTransaction:
    """One committed source transaction, its changes in log order."""

    xid: int
    commit_scn: int              # LSN of the commit record
    end_lsn: int                 # LSN just past it: the slot's position after this transaction
    commit_time: datetime | None
    changes: list[dict] = field(default_factory=list)
    ddl: bool = False            # it holds a DDL message (partitions may have come or gone)
    # the Streams tag in force at the first change (a part after the first of a spilled
    # transaction: its earlier part's last); Decoder.lcrs leaves the last one here
    tag: bytes | None = None


@dataclass(slots=True)
class Unsupported:
    """A change capture cannot represent: the LCR without the unsupported columns (for
    the rules to decide whether it would have been captured) and why."""

    lcr: RowLCR
    reason: str


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


# The head of a wal2json format-2 row change, as wal2json writes it with the capture's
# options (pgsource.Source.options): action, xid, timestamp, lsn, schema, table, then the
# columns.  A name holding a quote or a backslash (escaped in JSON) does not match: such a
# row is parsed whole.  Inside a JSON string every '"' follows a backslash, so the
# pattern's unescaped quotes only ever match the row's own keys, and '"type":"' only the
# columns' (and old keys') type names, each taken up to its first quote: a name with an
# escape in it (an escaped quote ends it early) holds a backslash there, which no supported
# type's name does, so its row is parsed whole.
_ROW_HEAD = re.compile(r'\{"action":"([IUD])","xid":\d+,"timestamp":"[^"]*","lsn":"([^"]*)",'
                       r'"schema":"([^"\\]*)","table":"([^"\\]*)",')
_TYPE_NAME = re.compile(r'"type":"([^"]*)"')


def transactions(rows: list[str], known: dict[str, Any] | None = None,
                 part: bool = False) -> list[SourceTransaction]:
    """wal2json format-2 rows -> whole transactions in commit order (a transaction
    without its commit row is left out; with ``part`` — the rows are the first part of a
    large transaction, :attr:`.pgsource.Source.partial` — it is given, commit SCN 0).

    ``known``: a decoder's column kinds (:attr:`Decoder.kinds`).  A row change whose
    column types are all supported there is not parsed here: its change holds the head
    (action, lsn, schema, table) and wal2json's text (``_text``), and the decoder makes
    an LCR that parses the text only if something reads its values (rules on owner,
    object, command and tag, and the queue's stored form, never do).  Any other row is
    parsed whole, as every row is without ``known``."""
    out: list[SourceTransaction] = []
    changes: list[dict] | None = None
    messages = ddl = False
    xid = 0
    head, type_names = _ROW_HEAD.match, _TYPE_NAME.findall
    for text in rows:
        if known is not None and changes is not None:
            m = head(text)
            if m is not None:
                for t in type_names(text, m.end()):
                    if not known.get(t):
                        break
                else:
                    action, lsn, schema, table = m.groups()
                    changes.append({"action": action, "lsn": lsn, "schema": schema, "table": table,
                                    "_text": text, "_lazy": True})
                    continue
        row = parse_json(text)
        action = row["action"]
        if action == "B":
            changes = []
            xid = row["xid"]
        elif action == "C":
            if changes is not None:
                if messages:
                    changes = _in_log_order(changes)
                out.append(SourceTransaction(row["xid"], lsn_to_int(row["lsn"]),
                                             lsn_to_int(row["nextlsn"]), _time(row.get("timestamp")),
                                             changes, ddl))
            changes = None
            messages = ddl = False
        elif changes is not None:
            row["_text"] = text
            changes.append(row)
            if action == "M":
                messages = True
                ddl = ddl or row.get("prefix") == DDL_PREFIX
    if part and changes is not None:
        out.append(SourceTransaction(xid, 0, 0, None, _in_log_order(changes) if messages else changes, ddl))
    return out


def _in_log_order(changes: list[dict]) -> list[dict]:
    """A transaction's changes in the order of the log.  The decoder merges the changes of
    subtransactions by LSN, and it files a message under the LSN just past it, which is
    the LSN of the next record: a DDL or tag message and the change right after it, in
    two subtransactions, tie and may come out swapped.  A message sorts before a change of
    the same LSN; otherwise the order is kept (several changes of one record share its
    LSN)."""
    return sorted(changes, key=lambda ch: (lsn_to_int(ch["lsn"]), ch["action"] != "M"))


# -- types ---------------------------------------------------------------------------
# Per PostgreSQL type: the ANYDATA type, wal2json's value -> the Python value of the
# LCR's AnyData, and -> the value as the LCR's stored document writes it (lcrcodec)


def _number(v: Any) -> Any:
    return Decimal(v) if isinstance(v, str) else v


def _number_doc(v: Any) -> Any:
    return v if type(v) is int else str(v)


def _float(v: Any) -> float:
    return float(v)


def _bool(v: Any) -> int:
    return 1 if v is True or v in ("t", "true") else 0


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


def _hex(v: str) -> str:
    return v[2:] if v.startswith("\\x") else v


def _bytes(v: str) -> bytes:
    return bytes.fromhex(_hex(v))


def _date(v: str) -> datetime:
    if v in ("infinity", "-infinity"):
        return datetime.max if v[0] == "i" else datetime.min
    try:
        return datetime.fromisoformat(v)
    except ValueError:
        raise _year_out_of_range(v) from None


def _year_out_of_range(v: str) -> Exception:
    """PostgreSQL's dates run from 4713 BC to far past 9999; an LCR's DATE and TIMESTAMP
    hold years 1 to 9999 (a Python ``datetime``).  A value outside is only found when it
    is read (values stay wal2json's text until then): the reader — an apply process, whose
    transaction goes to the error queue with it — gets Oracle's error for a year out of
    range, not a ValueError."""
    err = ora(1841)
    return type(err)(f"{err}: PostgreSQL's {v!r} is outside the years 1 to 9999 an LCR's "
                     f"DATE or TIMESTAMP holds", 1841)


def _date_doc(v: str) -> str:
    return v if v[:1].isdigit() else _date(v).isoformat()


_Kind = tuple[str, Callable[[Any], Any], Callable[[Any], Any]]
_SUPPORTED: dict[str, _Kind] = {
    **{t: ("SYS.NUMBER", _number, _number_doc)
       for t in ("smallint", "integer", "bigint", "oid", "numeric")},
    "real": ("SYS.BINARY_FLOAT", _float, _float), "double precision": ("SYS.BINARY_DOUBLE", _float, _float),
    "boolean": ("SYS.NUMBER", _bool, _bool),
    **{t: ("SYS.VARCHAR2", _text, _text) for t in ("text", "character varying", "name", "uuid", "citext")},
    # PostgreSQL's one-byte "char": format_type quotes it, wal2json names it bare
    **{t: ("SYS.CHAR", _text, _text) for t in ("character", '"char"', "char", "bpchar")},
    **{t: ("SYS.CLOB", _text, _text) for t in ("json", "jsonb", "xml")},
    "bytea": ("SYS.RAW", _bytes, _hex),
    **{t: (k, _date, _date_doc) for t, k in (("date", "SYS.DATE"), ("timestamp without time zone", "SYS.TIMESTAMP"),
                                             ("timestamp with time zone", "SYS.TIMESTAMP"))},
}
_TYPES_10_1 = frozenset({"SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE"})
_TYPMOD = re.compile(r"\([^)]*\)")


def column_type(pg_type: str) -> _Kind | None:
    """What a column of PostgreSQL type ``pg_type`` (as wal2json names it, with its
    modifier) becomes in an LCR, None when unsupported."""
    if pg_type.endswith("]"):
        return None
    return _SUPPORTED.get(" ".join(_TYPMOD.sub("", pg_type).split()))


class DecodedRowLCR(RowLCR):
    """A row LCR as the decoder made it: its column values stay wal2json's until something
    reads them.  Rules on owner, object, command and tag (the usual ones) never do, and
    the queue stores it as its attributes plus wal2json's own text of the row
    (:meth:`raw_text_document`), which a dequeued LCR keeps in turn until read;
    ``get_value``, ``set_value`` … turn the values into AnyData first."""

    __slots__ = ("_text", "_raw_old", "_raw_new", "_decoder", "_form")
    RAW, TEXT, VALUES = 0, 1, 2     # _form: raw lists; only the row's text; AnyData

    def __getattr__(self, name: str) -> Any:
        if name in ("_old", "_new"):
            self._parse()
            decoder = self._decoder
            self._old = decoder.units(self._raw_old)
            self._new = decoder.units(self._raw_new)
            self._raw_old = self._raw_new = self._text = None
            self._form = self.VALUES
            return object.__getattribute__(self, name)
        raise AttributeError(name)

    def _parse(self) -> None:
        if self._form == self.TEXT:
            row, bad = parse_json(self._text), []
            cmd = self._command_type
            self._raw_new = self._decoder.supported(row.get("columns"), bad) if cmd != "DELETE" else None
            self._raw_old = self._decoder.supported(row.get("identity"), bad) if cmd != "INSERT" else None
            self._form = self.RAW

    def plain_values(self) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
        if self._form == self.VALUES:
            return super().plain_values()
        self._parse()
        return self._decoder.pairs(self._raw_old), self._decoder.pairs(self._raw_new)

    def raw_document(self) -> tuple[list, list] | None:
        """``(old, new)`` in the stored document's form, None once the values are AnyData."""
        if self._form == self.VALUES:
            return None
        self._parse()
        return self._decoder.document(self._raw_old), self._decoder.document(self._raw_new)

    def raw_text_document(self) -> str | None:
        """The stored document as JSON text, wal2json's row text inside (``pg``); None once
        the values are AnyData (or when the row lost unsupported columns)."""
        if self._form == self.VALUES or self._text is None or self._extra:
            return None
        # written in three cached parts (the LCRs of a batch share a few tables, commands
        # and tags, and those of a transaction its id, commit SCN and time)
        key = (self._source_database_name, self._command_type, self._object_owner, self._object_name,
               self._tag)
        head = _HEADS.get(key)
        if head is None:
            head = _head(key)
        tail = _last_tail
        if tail[0] != self._commit_scn or tail[1] is not self._source_time:
            tail = _tail(self._commit_scn, self._source_time)
        scn = self._scn
        return (f'{head}{_json(self._transaction_id)},"scn":{"null" if scn is None else int(scn)}'
                f'{tail[2]}{_str(self._text)}}}')

    @classmethod
    def from_document(cls, doc: dict) -> "DecodedRowLCR":
        """A dequeued LCR stored by :meth:`raw_text_document` (values parsed when read)."""
        tag, when = doc.get("tag"), doc.get("time")
        lcr = cls._trusted(doc["db"], doc["cmd"], doc["own"], doc["obj"],
                           bytes.fromhex(tag) if tag else None, doc["txn"], doc["scn"], doc["cscn"],
                           _when(when) if isinstance(when, str) else when)
        lcr._text, lcr._raw_old, lcr._raw_new = doc["pg"], None, None
        lcr._decoder, lcr._form = _STORED, cls.TEXT
        return lcr

    @classmethod
    def from_text(cls, stored: str, start: int) -> "DecodedRowLCR | None":
        """:meth:`from_document` of the envelope's text ``stored`` whose document starts at
        ``start``, read by a pattern of what :meth:`raw_text_document` writes (no dict, no
        key strings made); None when the text is in another form (names with escapes,
        another key order, numbers not plain integers …): the envelope is then scanned
        as JSON.  Every string the pattern takes has no backslash and no quote, so its
        JSON text is its value."""
        m = _STORED_HEAD.match(stored, start)
        if m is None:
            return None
        try:
            text, end = _scanstring(stored, m.end())
        except ValueError:
            return None
        if end != len(stored) - 2 or not stored.endswith("}}"):
            return None
        db, cmd, own, obj, tag, txn, scn, cscn, when = m.groups()
        lcr = cls._trusted(db, cmd, own, obj, bytes.fromhex(tag) if tag else None, txn,
                           None if scn == "null" else int(scn), None if cscn == "null" else int(cscn),
                           None if when is None else _when(when))
        lcr._text, lcr._raw_old, lcr._raw_new = text, None, None
        lcr._decoder, lcr._form = _STORED, cls.TEXT
        return lcr

    def get_compatible(self) -> int:
        if self._form == self.VALUES:
            return super().get_compatible()
        self._parse()
        kinds = self._decoder.kinds
        return COMPATIBLE_10_1 if any(kinds[c["type"]][0] in _TYPES_10_1 for c in
                                      [*(self._raw_new or ()), *(self._raw_old or ())]) else COMPATIBLE_9_2


_str = encode_basestring_ascii
# what raw_text_document writes up to wal2json's row text (the value of "pg"), each string
# without escapes or control characters, so that its JSON text is its value (anything else:
# from_text leaves the envelope to the JSON scanner)
_PLAIN = r'"([^"\\\x00-\x1f]*)"'
_STORED_HEAD = re.compile(rf'\{{"db":{_PLAIN},"cmd":"([A-Z ]+)","own":{_PLAIN},"obj":{_PLAIN},'
                          r'"tag":(?:null|"([0-9a-f]*)"),'
                          rf'"txn":{_PLAIN},"scn":(null|-?[1-9][0-9]*|0),"cscn":(null|-?[1-9][0-9]*|0),'
                          r'"time":(?:null|"([0-9T:.+ -]*)"),"pg":"')
_last_when: tuple = (None, None)


def _when(text: str) -> datetime:
    """``datetime.fromisoformat(text)``, kept for the next call: the LCRs of a transaction
    share their commit time (one tuple, read once: apply servers may be threads)."""
    global _last_when
    last = _last_when
    if text != last[0]:
        last = _last_when = (text, datetime.fromisoformat(text))
    return last[1]


_last_iso: list = [None, ""]
_JSON: dict[str, str] = {}    # names, commands, transaction ids, times: each written often


def _json(value: str) -> str:
    text = _JSON.get(value)
    if text is None:
        if len(_JSON) > 10_000:
            _JSON.clear()
        text = _JSON[value] = _str(value)
    return text


def _num(v: Any) -> str:
    return "null" if v is None else str(int(v))


_HEADS: dict[tuple, str] = {}
_last_tail: list = [None, None, ""]


def _head(key: tuple) -> str:
    """The stored document's text up to the transaction id, for (source database, command,
    owner, object, tag)."""
    db, cmd, own, obj, tag = key
    if len(_HEADS) > 10_000:
        _HEADS.clear()
    text = _HEADS[key] = (f'{{"db":{_json(db)},"cmd":{_json(cmd)},"own":{_json(own)},"obj":{_json(obj)},'
                          f'"tag":{_json(tag.hex()) if tag is not None else "null"},"txn":')
    return text


def _tail(commit_scn: Any, when: Any) -> list:
    """From the commit SCN to wal2json's row text: ``[commit SCN, time, text]``."""
    global _last_tail
    _last_tail = [commit_scn, when, f',"cscn":{_num(commit_scn)},'
                                    f'"time":{_json(_iso(when)) if when is not None else "null"},"pg":']
    return _last_tail


def _iso(when: Any) -> str:
    if when is _last_iso[0]:    # the LCRs of a transaction share their commit time
        return _last_iso[1]
    text = when.isoformat() if isinstance(when, datetime) else str(when)
    _last_iso[:] = when, text
    return text


class Decoder:
    """Turns one capture's source transactions into LCRs."""

    def __init__(self, source_database: str, exclude_schema: str | None) -> None:
        self.source_database = source_database
        self.exclude_schema = exclude_schema
        self.kinds: dict[str, _Kind | None] = {}
        self._names: dict[str, str] = {}
        # (schema, partition) -> (schema, partitioned table): the source's partitions, kept
        # by the capture process (pgsource.Source.partition_roots); a row LCR names the table
        self.roots: dict[tuple[str, str], tuple[str, str]] = {}

    def _name(self, pg: str) -> str:
        name = self._names.get(pg)
        if name is None:
            name = self._names[pg] = oracle_name(pg)
        return name

    def units(self, columns: list[dict] | None) -> dict[str, RowUnit]:
        """Column values as the LCR's ``LCR$_ROW_LIST`` (name -> RowUnit of AnyData)."""
        out: dict[str, RowUnit] = {}
        names, kinds = self._names, self.kinds
        for col in columns or ():
            name = names.get(col["name"]) or self._name(col["name"])
            kind = kinds[col["type"]]
            value = col["value"]
            out[name] = RowUnit(name, AnyData(kind[0], None if value is None else kind[1](value)))
        return out

    def pairs(self, columns: list[dict] | None) -> list[tuple[str, Any]]:
        """Column values as (name, Python value) pairs, as :meth:`units` would hold them."""
        names, kinds = self._names, self.kinds
        out = []
        for col in columns or ():
            value = col["value"]
            out.append((names.get(col["name"]) or self._name(col["name"]),
                        None if value is None else kinds[col["type"]][1](value)))
        return out

    def document(self, columns: list[dict] | None) -> list:
        """Column values as :mod:`sluice.streams.lcrcodec` stores them."""
        names, kinds = self._names, self.kinds
        out = []
        for col in columns or ():
            kind = kinds[col["type"]]
            value = col["value"]
            out.append([names.get(col["name"]) or self._name(col["name"]), kind[0],
                        None if value is None else kind[2](value)])
        return out

    def supported(self, columns: list[dict] | None, bad: list[str]) -> list[dict] | None:
        """``columns`` (their types now known), without those of unsupported types (named
        in ``bad``)."""
        if not columns:
            return columns
        kinds = self.kinds
        for col in columns:     # the usual case: every type known and supported
            if not kinds.get(col["type"]):
                break
        else:
            return columns
        keep = None
        for i, col in enumerate(columns):
            t = col["type"]
            kind = kinds.get(t, False)
            if kind is False:
                kind = kinds[t] = column_type(t)
            if kind is None:
                bad.append(f'column "{col["name"]}" of type {t}')
                if keep is None:
                    keep = columns[:i]
            elif keep is not None:
                keep.append(col)
        return columns if keep is None else keep

    def lcrs(self, txn: SourceTransaction) -> Iterator[RowLCR | DDLLCR | Unsupported]:
        """The LCRs of ``txn`` in log order (changes to the excluded schema left out)."""
        tag = txn.tag
        txn_id = str(txn.xid)
        db, excluded = self.source_database, self.exclude_schema
        commit_scn, commit_time = txn.commit_scn, txn.commit_time
        names, roots = self._names, self.roots
        for ch in txn.changes:
            action = ch["action"]
            if action == "M":
                if ch.get("prefix") == TAG_PREFIX:
                    content = ch.get("content") or ""
                    tag = bytes.fromhex(content) if content else None
                elif ch.get("prefix") == DDL_PREFIX:
                    lcr = self._ddl(ch, tag, txn_id, txn)
                    if lcr is not None:
                        yield lcr
                continue
            schema, table = ch["schema"], ch["table"]
            if schema == excluded:
                continue
            if action == "T":
                lcr = self._truncate(ch, txn, tag, txn_id)
                if lcr is not None:
                    yield lcr
                continue
            if roots:
                root = roots.get((schema, table))
                if root is not None:
                    schema, table = root
            owner = names.get(schema) or self._name(schema)
            name = names.get(table) or self._name(table)
            lcr = DecodedRowLCR._trusted(db, _COMMANDS[action], owner, name, tag, txn_id,
                                         lsn_to_int(ch["lsn"]), commit_scn, commit_time)
            if "_lazy" in ch:       # every column type supported (transactions()): parsed if read
                lcr._decoder, lcr._form = self, DecodedRowLCR.TEXT
                lcr._text, lcr._raw_old, lcr._raw_new = ch["_text"], None, None
                yield lcr
                continue
            bad: list[str] = []
            lcr._decoder, lcr._form = self, DecodedRowLCR.RAW
            lcr._raw_new = self.supported(ch.get("columns"), bad) if action != "D" else None
            lcr._raw_old = self.supported(ch.get("identity"), bad) if action != "I" else None
            lcr._text = None if bad else ch["_text"]
            yield Unsupported(lcr, "; ".join(dict.fromkeys(bad))) if bad else lcr
        txn.tag = tag       # the next part of a spilled transaction goes on with it

    def _truncate(self, ch: dict, txn: SourceTransaction, tag: bytes | None, txn_id: str) -> DDLLCR | None:
        """The ``TRUNCATE TABLE`` DDL LCR of a table PostgreSQL logged as truncated.  A
        partition's names its partitioned table as the base table (a table DDL rule of the
        table selects it); None for a partition whose partitioned table is truncated by the
        same statement (PostgreSQL logs the table and each of its partitions: one LCR
        says it)."""
        schema, table = ch["schema"], ch["table"]
        base_schema, base_table = self.roots.get((schema, table), (schema, table))
        if (base_schema, base_table) != (schema, table) and any(
                c["action"] == "T" and c["lsn"] == ch["lsn"] and c["schema"] == base_schema
                and c["table"] == base_table for c in txn.changes):
            return None
        owner, name = self._name(schema), self._name(table)
        return DDLLCR(self.source_database, "TRUNCATE TABLE", owner, name, "TABLE",
                      f"TRUNCATE TABLE {_quoted(schema)}.{_quoted(table)}", None, owner,
                      self._name(base_schema), self._name(base_table), tag, txn_id, lsn_to_int(ch["lsn"]),
                      commit_scn=txn.commit_scn, source_time=txn.commit_time)

    def root(self, schema: str, table: str) -> tuple[str, str]:
        """The table a change to ``schema.table`` is captured as (a partition's partitioned
        table; any other table itself), PostgreSQL's spelling."""
        return self.roots.get((schema, table), (schema, table))

    def _ddl(self, msg: dict, tag: bytes | None, txn_id: str, txn: SourceTransaction) -> DDLLCR | None:
        """The DDL LCR of a ``sluice.ddl`` message.  Its SCN is one less than the LSN the
        decoder files the message under (the LSN just past it, which the next record
        starts at): SCNs then follow the log within the transaction."""
        d = parse_json(msg["content"])
        schema = d.get("schema")
        if schema is not None and schema == self.exclude_schema:
            return None   # the store's own DDL (queue tables …)

        def name(v: str | None) -> str | None:
            return self._name(v) if v else None
        otype = (d.get("otype") or "").replace("_", " ") or None
        text = statement_text(d.get("ddl"), d["tag"], d.get("n"), (d.get("name"), d.get("bname")))
        return DDLLCR(self.source_database, d["tag"], name(schema), name(d.get("name")), otype,
                      text, name(d.get("user")), name(d.get("cur")), name(d.get("bschema")),
                      name(d.get("bname")), tag, txn_id, lsn_to_int(msg["lsn"]) - 1,
                      commit_scn=txn.commit_scn, source_time=txn.commit_time)


def _quoted(name: str) -> str:
    """A PostgreSQL identifier quoted for the DDL text an apply process runs: a quote in
    the name doubled (a name is text anyone with CREATE may choose)."""
    return '"' + name.replace('"', '""') + '"'


_STORED = Decoder("", None)      # names and types of the LCRs read back from queues
lcrcodec.ROW_FORMS["pg"] = DecodedRowLCR.from_document
ANYDATA_TEXT_READERS[RowLCR.oracle_type] = DecodedRowLCR.from_text
