"""A PostgreSQL session's one-row enqueues sent without waiting for their answers.

An ON_COMMIT ``enqone`` is one INSERT into the queue table inside the session's open
transaction.  Sent and answered one at a time it waits a round trip per message, and
psycopg's cursor machinery costs about as much CPU again (bench/bench_aq_ab.py --pg).
:class:`InsertPipeline` sends such INSERTs through libpq's pipeline mode instead: the
statement prepared once per pipeline with its columns' types, parameters packed here in
binary, nothing read back until the session uses its connection for anything
else (a dequeue, a query, a savepoint, the commit): then one sync reads every answer.

Why no error an enqueue would raise is lost or raised by a later call (the session only
pipelines rows for which this holds — everything else takes the synchronous path):

* the row's values are checked here before anything is sent: exact Python types for the
  column types, BIGINT in range, text without NUL (PostgreSQL refuses it: ORA-06502 on
  the synchronous path) and in the connection's encoding (UTF-8);
* the queue table has no unique key a message could violate (SEQ is an identity, MSGID is
  not unique: sqlschema.MESSAGE_COLUMNS), and its NOT NULL columns are always given;
* only the second and later INSERT of a transaction into a queue table is pipelined: the
  first, answered synchronously, took the table's ROW EXCLUSIVE lock, which keeps a DROP,
  ALTER or TRUNCATE of it out until the transaction ends — the table the statement names
  exists and has the columns it was prepared for (a savepoint rollback releases locks
  taken after it: the session then forgets the table too, see PgSession.enqueue);
* what is left is the server or the connection failing (disk full, connection lost,
  administrator's kill): that ends the transaction, and the next call — at the latest
  the COMMIT — raises it (ORA-03113 …), as it would had it happened just after the
  enqueue returned.
"""

from __future__ import annotations

import select
import struct
from typing import Any, Iterator, Sequence

import psycopg
from psycopg import pq

from .pgconn import result_error

# a pipeline's statements before the session reads their answers: these answers must fit
# the socket buffers (the server stops reading while it cannot send)
MAX_PENDING = 500

_OIDS = {"BIGINT": 20, "DOUBLE PRECISION": 701, "BYTEA": 17, "TEXT": 25}
_INT8 = struct.Struct(">q").pack
_FLOAT8 = struct.Struct(">d").pack
_OK = (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK)


class _NotHere(Exception):
    """A value this path does not send: the synchronous path takes the row."""


def _bigint(v: Any) -> bytes:
    if type(v) is not int:
        raise _NotHere
    return _INT8(v)          # struct.error outside BIGINT's range


def _double(v: Any) -> bytes:
    if type(v) is not float and type(v) is not int:
        raise _NotHere
    return _FLOAT8(v)


def _bytea(v: Any) -> bytes:
    if type(v) is not bytes:
        raise _NotHere
    return v


def _text(v: Any) -> bytes:
    if type(v) is not str or "\x00" in v:
        raise _NotHere
    return v.encode()        # UnicodeEncodeError for a lone surrogate


_ENCODERS = {"BIGINT": _bigint, "DOUBLE PRECISION": _double, "BYTEA": _bytea, "TEXT": _text}


def encoded(types: Sequence[str], row: Sequence) -> list[bytes | None] | None:
    """``row``'s values in PostgreSQL's binary format for columns of the SQL ``types``, or
    None when one is not a value this path sends."""
    try:
        return [None if v is None else _ENCODERS[t](v) for t, v in zip(types, row)]
    except (_NotHere, struct.error, UnicodeEncodeError, OverflowError, KeyError):
        return None


def numbered(sql: str, n: int) -> bytes | None:
    """``sql``'s ``?`` placeholders as libpq's ``$1`` … ``$n`` (None: it has not ``n``)."""
    parts = sql.split("?")
    if len(parts) != n + 1:
        return None
    return "".join(part + (f"${i}" if i <= n else "") for i, part in enumerate(parts, 1)).encode()


class InsertPipeline:
    """One connection's INSERTs sent in libpq's pipeline mode, answers not read yet.

    Each pipeline prepares the unnamed statement when its text changes — PostgreSQL keeps
    that one until the next is prepared, so between two pipelines anything may replace it
    (psycopg uses it), and no named statement of ours can be dropped under us (psycopg
    sends DEALLOCATE ALL after a ROLLBACK TO SAVEPOINT, a DROP …)."""

    __slots__ = ("raw", "pending", "sending", "_current", "usable")

    def __init__(self, raw: psycopg.Connection) -> None:
        self.raw = raw
        self.pending = 0                              # statements sent, answers unread
        self.sending = False                          # libpq is in pipeline mode
        self._current: tuple | None = None            # (sql, types) prepared in this pipeline
        self.usable = raw.info.encoding == "utf-8"    # text is encoded here as UTF-8

    def send(self, sql: str, types: tuple[str, ...], row: Sequence, begin: bool = False) -> bool:
        """Send one INSERT (``?`` placeholders, a column of ``types`` each) of ``row``
        without waiting, after a BEGIN with ``begin``; False when this path does not take
        it (nothing sent)."""
        values = encoded(types, row) if self.usable else None
        if values is None:
            return False
        key = (sql, types)
        text = None
        if key != self._current:
            text = numbered(sql, len(types))
            if text is None:
                return False
        self._send(((key, text, values),), begin)
        return True

    def send_rows(self, inserts: Sequence[tuple[str, tuple[str, ...], Sequence]], begin: bool = False) -> bool:
        """:meth:`send` of several ``(sql, types, row)``: all of them, or — when this path
        does not take one of them — none (each is checked before anything is sent)."""
        if not self.usable:
            return False
        ready = []
        current = self._current
        for sql, types, row in inserts:
            values = encoded(types, row)
            if values is None:
                return False
            key = (sql, types)
            text = None
            if key != current:
                text = numbered(sql, len(types))
                if text is None:
                    return False
                current = key
            ready.append((key, text, values))
        self._send(ready, begin)
        return True

    def _send(self, ready: Sequence[tuple[tuple, bytes | None, list]], begin: bool) -> None:
        """Send checked INSERTs: ``(key, the statement to prepare first or None, values)``."""
        pg = self.raw.pgconn
        if not self.sending:
            pg.enter_pipeline_mode()
            self.sending = True
        if begin:
            pg.send_query_params(b"BEGIN", None)
        for key, text, values in ready:
            if text is not None:
                self._current = None
                pg.send_prepare(b"", text, param_types=[_OIDS[t] for t in key[1]])
                self._current = key
            pg.send_query_prepared(b"", values, param_formats=_binary(len(values)))
        self.pending += len(ready)
        if self.pending >= MAX_PENDING:
            self.drain()

    def send_commands(self, commands: Sequence[bytes]) -> None:
        """Send parameterless statements (SAVEPOINT, RELEASE SAVEPOINT) after the INSERTs,
        answers read with theirs: the session's transaction is open and the pipeline is
        sending, so only a failing server or connection makes one fail — raised then by
        :meth:`drain`, as for an INSERT.  (Each takes the unnamed statement: the next
        INSERT is prepared again.)"""
        pg = self.raw.pgconn
        for sql in commands:
            pg.send_query_params(sql, None)
        self._current = None
        self.pending += len(commands)
        if self.pending >= MAX_PENDING:
            self.drain()

    def drain(self) -> None:
        """Read every answer and leave pipeline mode.  :raises psycopg.Error: the first
        statement that failed (the server skipped the rest; the transaction is aborted)."""
        pg = self.raw.pgconn
        self.pending = 0
        self._current = None
        if not self.sending:
            return
        failed = None
        blocking = pg.nonblocking
        pg.nonblocking = 0           # libpq sends all that waits before reading
        try:
            pg.pipeline_sync()
            for res in pipeline_results(pg):
                if res.status not in _OK and failed is None:
                    failed = res
        finally:
            exit_pipeline(pg)
            self.sending = False
            pg.nonblocking = blocking
        if failed is not None:
            raise result_error(self.raw, failed)

    def discard(self) -> bool:
        """:meth:`drain` for a transaction being rolled back: True when every statement
        succeeded; a lost connection is closed."""
        try:
            self.drain()
            return True
        except psycopg.Error:
            if self.raw.pgconn.status != pq.ConnStatus.OK:
                self.raw.close()
            return False


_FORMATS: dict[int, list[int]] = {}


def _binary(n: int) -> list[int]:
    """``n`` parameters' formats: all binary."""
    formats = _FORMATS.get(n)
    if formats is None:
        formats = _FORMATS[n] = [1] * n
    return formats


def exit_pipeline(pg: Any) -> None:
    """Leave libpq's pipeline mode if in it (a broken connection may refuse: ignored)."""
    if pg.pipeline_status != pq.PipelineStatus.OFF:
        try:
            pg.exit_pipeline_mode()
        except psycopg.Error:
            pass


def pipeline_results(pg: Any) -> Iterator[Any]:
    """The results of a libpq pipeline up to its sync (sent already).  Waits for them in
    ``select`` (the process's other threads run meanwhile), not inside libpq."""
    idle = 0
    while True:
        while pg.is_busy():
            select.select([pg.socket], [], [])
            pg.consume_input()
        res = pg.get_result()
        if res is None:      # between two statements' results; twice running: nothing pending
            idle += 1
            if idle > 2 and (pg.status or pg.pipeline_status == pq.PipelineStatus.OFF or idle > 100_000):
                raise psycopg.OperationalError("the connection to the server was lost")
            continue
        idle = 0
        if res.status == pq.ExecStatus.PIPELINE_SYNC:
            return
        yield res
