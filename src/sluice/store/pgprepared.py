"""A PostgreSQL session's dequeue query (and its other statements on its queue tables) sent
through libpq straight, as statements of its own.

A one-message dequeue is one ``SELECT … FOR UPDATE SKIP LOCKED`` in the session's open
transaction.  Through a psycopg cursor half of the client's CPU for it went to the cursor
machinery (query conversion, the prepared-statement cache, the adapters per parameter, the
generator that waits), about as much as the rest of Sluice's dequeue
(bench/bench_aq_ab.py --pg).  :class:`PreparedReads` sends it as a named prepared statement
of its own — parameters packed here in binary, the answer read in ``select`` (the process's
other threads run meanwhile) and its rows loaded by psycopg's own C loaders, so the values
are exactly those the cursor gave.

Why the statement is there when it is executed (a named statement is the connection's until
it is deallocated):

* the names are this module's (``sluice_r<n>``, never used twice on a connection) and the
  registry belongs to one connection: a new connection starts with none;
* psycopg sends ``DEALLOCATE ALL`` when a statement it ran on the connection ends in
  DROP / ALTER / ROLLBACK (… TO SAVEPOINT) while it has prepared statements of its own:
  the session's connections are :class:`SessionConnection`, which counts those, and the
  registry forgets everything once the count moved (psycopg's deallocation of one of its
  own names touches none of ours);
* an application's SQL cannot drop them: Sluice's SQL takes no ``DEALLOCATE`` or
  ``DISCARD`` (ORA-00900);
* a statement is keyed by its text and the queue table's id, which a queue table made again
  under the same name does not reuse — so no prepared plan meets a table whose columns
  changed type ("cached plan must not change result type": a RAW table made again for
  JSON).  (The old table's statement stays prepared, unused, among the connection's 64.)

The session's other statements on its queue tables take the same path
(``PgConnection.query_table`` / ``modify_table``): the commit's DELETE of what it dequeued,
a multi-consumer commit's probe for records out of retries, a dequeue tested in Python (the
unlocked read, a transactional group's advisory lock, ``lock_records``).  A list parameter
goes as the array it already is (:class:`.pgarrays.EncodedArray`).  A dequeue condition
compiled to SQL has its parameters dumped by psycopg's own dumpers instead (``rows(…,
psycopg_types=True)``): the types the cursor gave them — int2 for a small int, numeric for
a Decimal — so its functions resolve as they did.

A value this path does not pack (anything but int, float, str without NUL, bytes, None, an
encoded array; for a condition, one psycopg cannot dump) and a connection not in UTF-8 leave
the statement to the cursor, as before.
"""

from __future__ import annotations

import select
import struct
from typing import Any, Callable, Sequence

import psycopg
from psycopg import pq
from psycopg.adapt import PyFormat, Transformer

from .pgarrays import EncodedArray
from .pgconn import SessionConnection, result_error
from .pgpipeline import exit_pipeline, numbered, pipeline_results

# statements one connection keeps prepared here at most (shapes: queue table, selector,
# LIMIT); a query of a shape beyond them takes the cursor
MAX_STATEMENTS = 64

_INT8 = struct.Struct(">q").pack
_FLOAT8 = struct.Struct(">d").pack
_INT8_OID, _FLOAT8_OID, _TEXT_OID, _BYTEA_OID = 20, 701, 25, 17
_TUPLES_OK = pq.ExecStatus.TUPLES_OK
_COMMAND_OK = pq.ExecStatus.COMMAND_OK
_BINARY = pq.Format.BINARY
_AS_BINARY = [PyFormat.BINARY] * 64      # the cursor's %b: psycopg's binary dumpers


# SessionConnection's hook (pgconn) must meet psycopg's: without it this path is off
_HOOKED = callable(getattr(psycopg.Connection, "_deallocate", None))


def prepared_reads(raw: psycopg.Connection) -> "PreparedReads | None":
    """The prepared statements of the connection ``raw`` (None: not a session's connection,
    or one this path does not serve)."""
    if type(raw) is not SessionConnection:
        return None
    reads = raw.prepared_reads
    if reads is None:
        reads = raw.prepared_reads = PreparedReads(raw)
    return reads if reads.usable else None


def _packed(params: Sequence) -> tuple[tuple[int, ...], list[bytes | None]] | None:
    """``params`` as (their types' oids, their binary values), or None."""
    oids = []
    values: list[bytes | None] = []
    for v in params:
        t = type(v)
        if t is int:
            if not -0x8000000000000000 <= v <= 0x7FFFFFFFFFFFFFFF:
                return None
            oids.append(_INT8_OID)
            values.append(_INT8(v))
        elif t is float:
            oids.append(_FLOAT8_OID)
            values.append(_FLOAT8(v))
        elif t is str:
            if "\x00" in v:
                return None
            try:
                values.append(v.encode())
            except UnicodeEncodeError:
                return None
            oids.append(_TEXT_OID)
        elif t is bytes:
            oids.append(_BYTEA_OID)
            values.append(v)
        elif v is None:
            oids.append(0)      # the server infers it
            values.append(None)
        elif isinstance(v, EncodedArray):   # a list parameter (Dialect.list_param): its array type
            oids.append(v.oid)
            values.append(v)
        else:
            return None
    return tuple(oids), values


class PreparedReads:
    """One connection's queries run as named prepared statements through libpq (one per
    connection: :func:`prepared_reads`)."""

    __slots__ = ("raw", "_names", "_seen", "_count", "_tx", "usable")

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw
        self._names: dict[tuple, tuple[bytes, list]] = {}   # (table, sql, oids) -> (name, formats)
        self._seen = getattr(raw, "deallocations", 0)
        self._count = 0
        self._tx = Transformer(raw)
        self.usable = _HOOKED and raw.info.encoding == "utf-8"

    def rows(self, table: int, sql: str, params: Sequence, make_row: Callable[[list], Any],
             psycopg_types: bool = False, begin: bool = False) -> list | None:
        """The rows of the query ``sql`` (``?`` placeholders) for ``params``, each made by
        ``make_row`` from a list of its values; None when this path does not take it.
        ``table``: the id of the queue table it reads — part of the statement's key (see the
        module: the same text reads a table made again under that name).
        ``psycopg_types``: the parameters are dumped by psycopg's own dumpers, with the
        types the cursor gives them (int2 for a small int …: a dequeue condition's SQL may
        call functions that want them) — else packed here (int8, float8, text, bytea).
        ``begin``: a BEGIN goes first, in the same round trip (:meth:`_send`).
        :raises psycopg.Error: the query failed (the transaction is aborted)."""
        if not self._send(table, sql, params, psycopg_types, begin):
            return None
        raw = self.raw
        res = _result(raw, _flushed(raw.pgconn), _TUPLES_OK, begin)
        tx = self._tx
        tx.set_pgresult(res, set_loaders=True, format=_BINARY)
        rows = tx.load_rows(0, res.ntuples, make_row)
        tx.set_pgresult(None)      # (the payloads it holds are not kept until the next query)
        return rows

    def run(self, table: int, sql: str, params: Sequence, begin: bool = False) -> bool:
        """Run the statement ``sql`` that returns no rows (a DELETE of the queue table
        ``table``) and wait for its end, after a BEGIN with ``begin``; False when this path
        does not take it (nothing was sent).  :raises psycopg.Error: it failed (the
        transaction is aborted)."""
        if not self._send(table, sql, params, False, begin):
            return False
        raw = self.raw
        _result(raw, _flushed(raw.pgconn), _COMMAND_OK, begin)
        return True

    def _send(self, table: int, sql: str, params: Sequence, psycopg_types: bool = False,
              begin: bool = False) -> bool:
        """Send the execution of ``sql`` (prepared first if it is new here); False when
        this path does not take it (nothing sent).  With ``begin`` a BEGIN goes before it
        in one libpq pipeline, one Sync for both: the transaction's first statement does
        not wait a round trip for its BEGIN (the prepare, a connection's first use of the
        statement, is answered before: a prepared statement belongs to no transaction)."""
        formats = None
        if psycopg_types:
            tx = self._tx
            try:
                values = tx.dump_sequence(params, _AS_BINARY[:len(params)] if len(params) <= 64
                                          else [PyFormat.BINARY] * len(params))
            except Exception:    # a value psycopg cannot adapt: the cursor raises it, as before
                return False
            oids, formats = tuple(tx.types), tx.formats
        else:
            packed = _packed(params)
            if packed is None:
                return False
            oids, values = packed
        raw = self.raw
        if raw.deallocations != self._seen:    # psycopg's DEALLOCATE ALL took ours too
            self._seen = raw.deallocations
            self._names = {}
        key = (table, sql, oids)
        prepared = self._names.get(key)
        pg = raw.pgconn
        if prepared is None:
            if len(self._names) >= MAX_STATEMENTS:
                return False
            text = numbered(sql, len(oids))
            if text is None:
                return False
            self._count += 1
            name = f"sluice_r{self._count}".encode()
            pg.send_prepare(name, text, param_types=oids)
            _result(raw, _flushed(pg), _COMMAND_OK)
            prepared = self._names[key] = (name, [_BINARY] * len(values))
        if begin:
            pg.enter_pipeline_mode()
            pg.send_query_params(b"BEGIN", None)
        pg.send_query_prepared(prepared[0], values, param_formats=formats or prepared[1],
                               result_format=_BINARY)
        if begin:
            pg.pipeline_sync()
        return True


def _flushed(pg: Any) -> Any:
    """``pg`` once libpq sent all it holds (a nonblocking connection may keep some)."""
    while pg.flush():
        select.select([pg.socket], [pg.socket], [])
        pg.consume_input()
    return pg


def _result(raw: psycopg.Connection, pg: Any, ok: int, pipelined: bool = False) -> Any:
    """The one result of what was sent (waited for in ``select``), every result read;
    ``pipelined``: a BEGIN and the statement in one pipeline (see :meth:`PreparedReads._send`).
    :raises psycopg.Error: it is not ``ok`` (or the BEGIN failed: its error)."""
    if pipelined:
        return _after_begin(raw, pg, ok)
    res = None
    try:
        while True:
            while pg.is_busy():
                select.select([pg.socket], [], [])
                pg.consume_input()
            r = pg.get_result()
            if r is None:       # (one statement: its result, then the end)
                break
            if res is None:
                res = r
    except BaseException:
        # an interrupted wait leaves the answer unread: the connection cannot be used on
        raw.close()
        raise
    if res is None:
        raise psycopg.OperationalError("the connection to the server was lost")
    if res.status != ok:
        raise result_error(raw, res)
    return res


def _after_begin(raw: psycopg.Connection, pg: Any, ok: int) -> Any:
    """:func:`_result` of a BEGIN and a statement sent in one pipeline: the statement's
    result.  :raises psycopg.Error: the first of them that failed (the server skipped what
    followed it)."""
    try:
        results = list(pipeline_results(pg))
    except BaseException:
        exit_pipeline(pg)
        raw.close()     # answers left unread: the connection cannot be used on
        raise
    exit_pipeline(pg)
    for res, expected in zip(results, (_COMMAND_OK, ok)):
        if res.status != expected:
            raise result_error(raw, res)
    if len(results) != 2:
        raise psycopg.OperationalError("the connection to the server was lost")
    return results[1]
