"""What differs between the SQL backends' SQL, in one small object per database.

The message SQL (:mod:`.sqlops`), the catalog SQL (:mod:`.sqlcatalog`) and the DDL
(:mod:`.sqlschema`) are written once, with ``?`` placeholders and unquoted
upper-case identifiers; a :class:`Dialect` supplies the few spellings that
differ: column types, a handful of functions, how a list travels as one
parameter, and how a dequeue locks the rows it selects.

Identifiers are left unquoted on purpose (except the physical queue table and
view names, which carry a dot): SQLite keeps them as written and PostgreSQL
folds them to lower case, so ``SELECT msg_state FROM aq$qt`` typed by a user
resolves on both, as it does on Oracle.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from .sessionzone import SQLITE_VIEW_DATE


@dataclass(frozen=True, slots=True)
class Dialect:
    """The SQL spellings of one database."""

    name: str
    int_type: str            # 64-bit integers (SEQ, CSCN, priorities)
    real_type: str           # POSIX seconds
    blob_type: str           # RAW payloads, message ids
    serial_key: str          # an integer primary key the database assigns
    create_view: str         # idempotent CREATE VIEW
    lock_rows: str           # suffix of a SELECT that locks what it returns, skipping locked rows
    like: str                # a LIKE with Oracle's semantics (case-sensitive, no default escape)
    bulk_arrays: bool        # insert a batch as one statement over arrays (one per column)
    bulk_copy: bool          # … or rather as binary COPY data (``conn.copy_rows``)
    seq_from_store: bool     # SEQ numbers come from ``conn.allocate_seqs(n)``, not the database
    _in_list: str            # ``{col}`` is in the list (of ``{array}``) bound as one parameter
    _list_param: Callable[[list], Any]
    _hex: str                # upper-case hex text of a blob ``{x}``
    _epoch: str              # timestamp of POSIX seconds ``{x}``: the session zone's wall clock
    _epoch_joined: str       # … the same, reading the zone from the row ``zone_join`` adds
    zone_join: str           # what a view's FROM joins: the session's zone, read once a statement
    _json_text: str          # text of member ``{key}`` of the JSON document ``{doc}``
    _json_length: str        # length of array member ``{key}`` of ``{doc}``

    def in_list(self, column: str, blob: bool = False) -> str:
        """``column`` is one of the values (integers, or blobs with ``blob``) bound with
        :meth:`list_param` as one placeholder."""
        return self._in_list.format(col=column, array=self.blob_type if blob else self.int_type)

    def list_param(self, values: list) -> Any:
        return self._list_param(values)

    def hex(self, expr: str) -> str:
        return self._hex.format(x=expr)

    def epoch_to_timestamp(self, expr: str, joined: bool = False) -> str:
        """The session zone's wall clock at POSIX seconds ``expr``; with ``joined``, in a view
        whose FROM ends with :attr:`zone_join` (its many rows then cost less: PostgreSQL reads
        the zone once a statement instead of once a date)."""
        return (self._epoch_joined if joined else self._epoch).format(x=expr)

    def json_text(self, doc: str, key: str) -> str:
        return self._json_text.format(doc=doc, key=key)

    def json_array_length(self, doc: str, key: str) -> str:
        return self._json_length.format(doc=doc, key=key)


SQLITE = Dialect(
    name="sqlite",
    int_type="INTEGER",
    real_type="REAL",
    blob_type="BLOB",
    serial_key="INTEGER PRIMARY KEY",   # its own numbering would reuse a deleted last row's SEQ
    create_view="CREATE VIEW IF NOT EXISTS",
    lock_rows="",            # SQLite has no row locks: the store locks messages itself
    like="LIKE ?",           # with PRAGMA case_sensitive_like=ON
    bulk_arrays=False,       # executemany runs in C: nothing to gain
    bulk_copy=False,
    seq_from_store=True,     # never reused (see MessageLocks.allocate_seqs)
    _in_list="{col} IN (SELECT value FROM json_each(?))",
    _list_param=json.dumps,
    _hex="upper(hex({x}))",
    _epoch=SQLITE_VIEW_DATE,     # in the session's time zone (sessionzone.ViewClock)
    _epoch_joined=SQLITE_VIEW_DATE,   # (its zone is a constant of the statement already)
    zone_join="",
    _json_text="json_extract({doc}, '$.{key}')",
    _json_length="json_array_length(json_extract({doc}, '$.{key}'))",
)

_pgarrays: Any = None     # the module, imported on first use (it imports psycopg)


def _pg_list(values: list) -> Any:
    """A list parameter of PostgreSQL (integers or blobs, see :meth:`Dialect.in_list`),
    already in the binary array format (:mod:`.pgarrays`): psycopg would dump it element
    by element in Python — for the 500 sequence numbers or message ids of a batch, more
    client time than the statement's own."""
    global _pgarrays
    pgarrays = _pgarrays
    if pgarrays is None:     # (an import statement per call cost more than the packing)
        from . import pgarrays
        _pgarrays = pgarrays
    first = next((v for v in values if v is not None), None)
    if isinstance(first, int) and not isinstance(first, bool):
        return pgarrays.int8_array(values)
    if isinstance(first, (bytes, bytearray, memoryview)):
        return pgarrays.bytea_array(values)
    return list(values)


POSTGRESQL = Dialect(
    name="postgresql",
    int_type="BIGINT",
    real_type="DOUBLE PRECISION",
    blob_type="BYTEA",
    serial_key="BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    create_view="CREATE OR REPLACE VIEW",
    lock_rows=" FOR UPDATE SKIP LOCKED",
    like="LIKE ? ESCAPE ''",  # PostgreSQL's LIKE escapes with a backslash unless told not to
    bulk_arrays=True,        # INSERT … SELECT FROM unnest(arrays): a third of the client's work
    bulk_copy=True,          # COPY … FROM STDIN (FORMAT BINARY): ~25 % less server work than unnest
    seq_from_store=False,    # an identity column: numbers are never reused
    _in_list="{col} = ANY(?::{array}[])",   # typed: an untyped array would not use the index
    _list_param=_pg_list,
    _hex="upper(encode({x}, 'hex'))",
    # in the session's time zone (sessionzone); a connection not Sluice's: its own TimeZone
    _epoch="(to_timestamp({x}) AT TIME ZONE COALESCE(NULLIF(current_setting('sluice.time_zone', true), ''), "
           "current_setting('TimeZone')))",
    # the same from SLUICE_SESSION_ZONE() (sqlschema.PG_ZONE_FUNCTION), called once a statement:
    # an offset zone as an interval (a plain shift; a zone's name is parsed and looked up
    # in the tz database per date), a region by its name.  Joined as an aggregate of its one
    # row: PostgreSQL drops a LEFT JOIN to at most one row whose columns a statement does not
    # read, so a statement reading no date (COUNT(*), MSG_STATE …) does not call it
    _epoch_joined="(CASE WHEN SLUICE_SZ.SLUICE_OFFSET IS NULL THEN to_timestamp({x}) AT TIME ZONE SLUICE_SZ.SLUICE_ZONE "
                  "ELSE to_timestamp({x}) AT TIME ZONE SLUICE_SZ.SLUICE_OFFSET END)",
    zone_join=(" LEFT JOIN (SELECT MAX(SLUICE_ZONE) AS SLUICE_ZONE, MAX(SLUICE_OFFSET) AS SLUICE_OFFSET "
               "FROM SLUICE_SESSION_ZONE()) AS SLUICE_SZ ON TRUE"),
    _json_text="(({doc})::jsonb ->> '{key}')",
    _json_length="(CASE WHEN jsonb_typeof(({doc})::jsonb -> '{key}') = 'array' "
                 "THEN jsonb_array_length(({doc})::jsonb -> '{key}') END)",
)
