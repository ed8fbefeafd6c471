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
spelling, as a quoted Oracle name does.  (``"EMP"`` and ``emp`` in one schema
would both be ``EMP``; such a pair is not captured apart.)  Rules compare owner
and name exactly as this mapping gives them.

**Types** (PostgreSQL -> the ANYDATA type of the LCR's value): smallint, integer,
bigint, oid, numeric -> NUMBER (``int`` / ``Decimal``, every digit kept); real ->
BINARY_FLOAT, double precision -> BINARY_DOUBLE; boolean -> NUMBER 1/0 (Oracle's
convention before BOOLEAN); text, varchar, name, uuid, citext -> VARCHAR2 (an
empty string stays empty: the value is PostgreSQL's, not Oracle's NULL);
character -> CHAR; json, jsonb, xml -> CLOB (their text); bytea -> RAW; date ->
DATE; timestamp -> TIMESTAMP; timestamp with time zone -> TIMESTAMP in UTC (an
aware ``datetime``).  Domains count as their base type.  Anything else (arrays,
intervals, times, geometric, network, ranges, enums and other user-defined types)
is unsupported: a change to such a table is not captured and the table is listed
in DBA_STREAMS_UNSUPPORTED (see :mod:`.process`).

**Old and new values.**  INSERT: new values, every column.  UPDATE: new values as
PostgreSQL logged them (every column, except an unchanged TOASTed one), old values
the replica identity (the primary key, or the whole old row with REPLICA IDENTITY
FULL).  DELETE: old values = the replica identity.  ``get_value('NEW', c)`` of an
UPDATE falls back to the old value, as in Oracle.  TRUNCATE, which PostgreSQL logs
as a change, is a DDL LCR (``TRUNCATE TABLE``), as Oracle captures it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Callable, Iterator

from ..lcr import AnyData, DDLLCR, RowLCR, RowUnit
from .pgsource import DDL_PREFIX, TAG_PREFIX, lsn_to_int, parse_json

__all__ = ["SourceTransaction", "Unsupported", "Decoder", "transactions", "oracle_name"]

_COMMANDS = {"I": "INSERT", "U": "UPDATE", "D": "DELETE"}


def oracle_name(pg_name: str) -> str:
    """The Oracle spelling of a PostgreSQL identifier (see the module's docstring)."""
    return pg_name.upper() if pg_name == pg_name.lower() else pg_name


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


@dataclass(slots=True)
class Unsupported:
    """A change capture cannot represent: the LCR without the unsupported columns (for
    the rules to decide whether it would have been captured) and why."""

    lcr: RowLCR
    reason: str


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


def transactions(rows: list[str]) -> list[SourceTransaction]:
    """wal2json format-2 rows -> whole transactions in commit order (a transaction
    without its commit row — never the case for a peek — is left out)."""
    out: list[SourceTransaction] = []
    changes: list[dict] | None = None
    messages = False
    for text in rows:
        row = parse_json(text)
        action = row["action"]
        if action == "B":
            changes = []
        elif action == "C":
            if changes is not None:
                if messages:
                    changes = _in_log_order(changes)
                out.append(SourceTransaction(row["xid"], lsn_to_int(row["lsn"]),
                                             lsn_to_int(row["nextlsn"]), _time(row.get("timestamp")),
                                             changes))
            changes = None
            messages = False
        elif changes is not None:
            changes.append(row)
            messages = messages or action == "M"
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

def _number(v: Any) -> Any:
    return Decimal(v) if isinstance(v, str) else v


def _float(v: Any) -> float:
    return float(v)


def _bool(v: Any) -> int:
    return 1 if v is True or v in ("t", "true") else 0


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


def _bytes(v: str) -> bytes:
    return bytes.fromhex(v[2:] if v.startswith("\\x") else v)


def _date(v: str) -> datetime:
    if v in ("infinity", "-infinity"):
        return datetime.max if v[0] == "i" else datetime.min
    return datetime.fromisoformat(v)


_SUPPORTED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    **{t: ("SYS.NUMBER", _number) for t in ("smallint", "integer", "bigint", "oid", "numeric")},
    "real": ("SYS.BINARY_FLOAT", _float), "double precision": ("SYS.BINARY_DOUBLE", _float),
    "boolean": ("SYS.NUMBER", _bool),
    **{t: ("SYS.VARCHAR2", _text) for t in ("text", "character varying", "name", "uuid", "citext")},
    "character": ("SYS.CHAR", _text), '"char"': ("SYS.CHAR", _text), "bpchar": ("SYS.CHAR", _text),
    **{t: ("SYS.CLOB", _text) for t in ("json", "jsonb", "xml")},
    "bytea": ("SYS.RAW", _bytes),
    "date": ("SYS.DATE", _date),
    "timestamp without time zone": ("SYS.TIMESTAMP", _date),
    "timestamp with time zone": ("SYS.TIMESTAMP", _date),
}
_TYPMOD = re.compile(r"\([^)]*\)")


def column_type(pg_type: str) -> tuple[str, Callable[[Any], Any]] | None:
    """The ANYDATA type and converter of a column of PostgreSQL type ``pg_type`` (as
    wal2json names it, with its modifier), None when unsupported."""
    if pg_type.endswith("]"):
        return None
    return _SUPPORTED.get(" ".join(_TYPMOD.sub("", pg_type).split()))


class Decoder:
    """Turns one capture's source transactions into LCRs."""

    def __init__(self, source_database: str, exclude_schema: str | None) -> None:
        self.source_database = source_database
        self.exclude_schema = exclude_schema
        self._types: dict[str, tuple[str, Callable[[Any], Any]] | None] = {}
        self._names: dict[str, str] = {}
        self._columns: dict[str, str] = {}

    def _name(self, pg: str) -> str:
        name = self._names.get(pg)
        if name is None:
            name = self._names[pg] = oracle_name(pg)
        return name

    def _column(self, pg: str) -> str:
        """The column name as RowUnit reads it (quoted where the case must stay)."""
        name = self._columns.get(pg)
        if name is None:
            name = self._columns[pg] = pg if pg == pg.lower() else '"' + pg + '"'
        return name

    def _type(self, pg_type: str) -> tuple[str, Callable[[Any], Any]] | None:
        try:
            return self._types[pg_type]
        except KeyError:
            found = self._types[pg_type] = column_type(pg_type)
            return found

    def _units(self, columns: list[dict] | None, bad: list[str]) -> list[RowUnit]:
        units = []
        for col in columns or ():
            kind = self._type(col["type"])
            if kind is None:
                bad.append(f'column "{col["name"]}" of type {col["type"]}')
                continue
            value = col["value"]
            units.append(RowUnit(self._column(col["name"]),
                                 AnyData(kind[0], None if value is None else kind[1](value))))
        return units

    def lcrs(self, txn: SourceTransaction) -> Iterator[RowLCR | DDLLCR | Unsupported]:
        """The LCRs of ``txn`` in log order (changes to the excluded schema left out)."""
        tag: bytes | None = None
        txn_id = str(txn.xid)
        db, excluded = self.source_database, self.exclude_schema
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
            schema = ch["schema"]
            if schema == excluded:
                continue
            owner, name = self._name(schema), self._name(ch["table"])
            if action == "T":
                yield DDLLCR(db, "TRUNCATE TABLE", owner, name, "TABLE",
                             f'TRUNCATE TABLE "{schema}"."{ch["table"]}"', None, owner, owner, name,
                             tag, txn_id, lsn_to_int(ch["lsn"]), commit_scn=txn.commit_scn,
                             source_time=txn.commit_time)
                continue
            bad: list[str] = []
            new = self._units(ch.get("columns"), bad) if action != "D" else []
            old = self._units(ch.get("identity"), bad) if action != "I" else []
            lcr = RowLCR(db, _COMMANDS[action], owner, name, tag, txn_id, lsn_to_int(ch["lsn"]),
                         old, new, commit_scn=txn.commit_scn, source_time=txn.commit_time)
            yield Unsupported(lcr, "; ".join(dict.fromkeys(bad))) if bad else lcr

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
        return DDLLCR(self.source_database, d["tag"], name(schema), name(d.get("name")), otype,
                      d.get("ddl"), name(d.get("user")), name(d.get("cur")), name(d.get("bschema")),
                      name(d.get("bname")), tag, txn_id, lsn_to_int(msg["lsn"]) - 1,
                      commit_scn=txn.commit_scn, source_time=txn.commit_time)
