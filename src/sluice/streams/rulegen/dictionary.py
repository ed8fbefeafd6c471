"""The data dictionary DBMS_STREAMS_ADM consults: does a schema or table exist, what are
a table's columns and their Oracle datatypes, and (capture) PostgreSQL's counterpart of
supplemental logging.

Where the tables are: a capture process's source database (a PostgreSQL database: the
store's own, or the capture's ``source_dsn``); for the other clients the database the
store lives in — PostgreSQL (schema ``hr`` for owner ``HR``, names mapped as capture maps
them), or the SQLite file (a table ``TABLE`` in an attached database ``OWNER``, a
table named ``"OWNER.TABLE"``, as Sluice names its own tables there, or a table ``TABLE`` of
the file itself, as synchronous capture maps them: :mod:`sluice.streams.capture.syncsqlite`).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ...errors import DatabaseError, ora
from ..capture.context import CaptureContext
from ..capture.decode import pg_name
from ..capture.process import source_for

__all__ = ["Dictionary"]

# PostgreSQL type (format_type without modifiers) -> Oracle datatype, as capture's
# decoder turns values into ANYDATA (sluice.streams.capture.decode)
_PG_TYPES = {
    **{t: "NUMBER" for t in ("smallint", "integer", "bigint", "oid", "numeric", "boolean")},
    "real": "BINARY_FLOAT", "double precision": "BINARY_DOUBLE",
    **{t: "VARCHAR2" for t in ("text", "character varying", "name", "uuid", "citext")},
    **{t: "CHAR" for t in ("character", '"char"', "bpchar")},
    **{t: "CLOB" for t in ("json", "jsonb", "xml")},
    "bytea": "RAW", "date": "DATE", "timestamp without time zone": "TIMESTAMP",
    "timestamp with time zone": "TIMESTAMP",
}


def _sqlite_type(declared: str) -> str:
    """SQLite's type affinity rules, in Oracle's words."""
    t = (declared or "").upper()
    if "INT" in t or "NUM" in t or "DEC" in t or "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "NUMBER"
    if "TIMESTAMP" in t:
        return "TIMESTAMP"
    if "DATE" in t:
        return "DATE"
    if "CLOB" in t:
        return "CLOB"
    if "CHAR" in t or "TEXT" in t:
        return "VARCHAR2"
    if "BLOB" in t or "RAW" in t or not t:
        return "RAW"
    return "NUMBER"


class Dictionary:
    """Tables and schemas of one database, for one ADD_*_RULES call."""

    def __init__(self, conn: Any, capture_spec: Any = None, for_capture: bool = False) -> None:
        self.ctx = CaptureContext(conn)
        self.capture_spec = capture_spec
        self.pg = for_capture or self.ctx.pg_target() is not None

    def _source(self) -> Any:
        return source_for(self.ctx, self.capture_spec, process="DBMS_STREAMS_ADM")

    def check_schema(self, owner: str) -> None:
        """:raises: ORA-01435 when the schema does not exist."""
        if self.pg:
            with self._source().connect() as source:
                found = source.schema_exists(pg_name(owner))
        else:
            found = self._sqlite_schema(owner)
        if not found:
            raise ora(1435, owner)

    def columns(self, owner: str, table: str) -> dict[str, str]:
        """``{column: Oracle datatype}``.  :raises: ORA-00942 when there is no such table."""
        if self.pg:
            from ..capture.decode import oracle_name
            with self._source().connect() as source:
                found = source.table_columns(pg_name(owner), pg_name(table))
                # a partition is no table of its own: capture names its changes by the
                # partitioned table, so rules for the partition would never match
                root = source.partition_root(pg_name(owner), pg_name(table)) if found is not None else None
            if found is None:
                raise ora(942)
            if root is not None:
                err = ora(942)
                raise type(err)(f"{err}: {owner}.{table} is a partition of "
                                f"{oracle_name(root[0])}.{oracle_name(root[1])}, whose name its "
                                f"changes carry: name that table", 942)
            return {oracle_name(c): _PG_TYPES.get(t, t.upper()) for c, t in found}
        found = self._sqlite_columns(owner, table)
        if found is None:
            raise ora(942)
        return {c.upper() if c == c.lower() else c: _sqlite_type(t) for c, t in found}

    def log_old_values(self, owner: str, table: str) -> None:
        """A subset rule for capture needs every old value of an UPDATE (seed 000 "Subset
        Rules and Supplemental Logging"): PostgreSQL's REPLICA IDENTITY FULL.
        :raises: ORA-01031 when the table's owner has to do it."""
        if not self.pg:
            return           # SQLite tables are captured by triggers, which see whole rows
        with self._source().connect() as source:
            try:
                source.replica_identity_full(pg_name(owner), pg_name(table))
            except DatabaseError as e:
                if e.code != 1031:
                    raise
                raise type(e)(f"ORA-01031: insufficient privileges: a subset rule for capture needs "
                              f"every old value of {owner}.{table} (ALTER TABLE … REPLICA IDENTITY "
                              f"FULL, which only the table's owner may run): {e.message}", 1031) from None

    # -- SQLite ---------------------------------------------------------------------
    def _sqlite_query(self, sql: str, params: tuple) -> list[tuple] | None:
        try:
            return self.ctx.context.session.query(sql, params)[1]
        except (DatabaseError, sqlite3.Error):
            return None

    def _sqlite_schema(self, owner: str) -> bool:
        """A file has every schema (its tables belong to whoever names them), or the
        attached database ``owner``."""
        rows = self._sqlite_query("SELECT name FROM pragma_database_list", ()) or []
        return any(r[0].upper() in (owner.upper(), "MAIN") for r in rows)

    def _sqlite_columns(self, owner: str, table: str) -> list[tuple[str, str]] | None:
        """The attached database ``owner``'s table, else the table named ``"OWNER.TABLE"``,
        else the file's own ``TABLE`` -- synchronous capture's mapping
        (:func:`sluice.streams.capture.syncsqlite.find_table`)."""
        for sql, params in (("SELECT name, type FROM pragma_table_info(?, ?)", (table, owner)),
                            ("SELECT name, type FROM pragma_table_info(?)", (f"{owner}.{table}",)),
                            # the file's own schema: synchronous capture's mapping (its tables
                            # under the owner the rules name; sluice.streams.capture.syncsqlite)
                            ("SELECT name, type FROM pragma_table_info(?)", (table,))):
            rows = self._sqlite_query(sql, params)
            if rows:
                return [(r[0], r[1]) for r in rows]
        return None
