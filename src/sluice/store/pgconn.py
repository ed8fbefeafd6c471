"""Connections of the PostgreSQL backend: the DSN, Oracle error codes for server
failures, the adapter the shared SQL runs on, and the process's pool.

* :func:`parse_dsn` — ``postgresql://user@host:port/db?schema=name``: everything
  Sluice keeps lives in one PostgreSQL schema (default ``sluice``); the other
  parameters go to libpq.
* :func:`translate` — a psycopg error as the ``ORA-`` error Sluice raises:
  unreachable server ORA-12541, lost connection ORA-03113, server starting or
  stopping ORA-01033, lock wait timeout ORA-00054, unknown table ORA-00942, …
* :class:`PgConnection` — a psycopg connection speaking the shared SQL's
  conventions (``?`` placeholders, a ``dialect``), see :mod:`.sqlops`.
* :class:`PgPool` — the pooled connections that run autonomous transactions
  (IMMEDIATE operations, DDL, the time manager).  A connection that the server
  dropped is replaced; a transaction that failed on a lost connection before its
  COMMIT was sent did nothing and is run again on a fresh one, so a server
  restart costs a short wait, not an error.
"""

from __future__ import annotations

import hashlib
import os
import re
from itertools import repeat
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, TypeVar
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import errors as pgerr
from psycopg.adapt import PyFormat
from psycopg.copy import Writer
from psycopg.pq import ConnStatus, DiagnosticField, ExecStatus, TransactionStatus
from psycopg_pool import ConnectionPool, PoolTimeout

from .pgarrays import ENCODERS, EncodedArray

from ..charset import CONVERSION_FAILED
from ..errors import DatabaseError, ProgrammingError, dpy, ora, raised_by_sluice_sql
from .dialect import POSTGRESQL
from .oraclefns import pg_regex_error
from .sessionzone import zone_option
from .seqspec import pg_error
from .sessions import PROGRAM, pg_session_key

T = TypeVar("T")

DEFAULT_SCHEMA = "sluice"
_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
# how long an operation waits for a pooled connection while the server is away
# (a restart takes a few seconds); after that it fails with ORA-12541
SERVER_WAIT = 10.0
CONNECT_TIMEOUT = 5


@dataclass(frozen=True, slots=True)
class PgTarget:
    """Where a PostgreSQL store lives."""

    conninfo: str     # for libpq, without Sluice's own parameters
    schema: str       # the PostgreSQL schema holding the store
    display: str      # the DSN without its password, for messages

    @property
    def channel(self) -> str:
        """The NOTIFY channel of this store (one per schema): catalog and time events."""
        return f"sluice_{self.schema}"

    def table_channel(self, qt_id: int) -> str:
        """The NOTIFY channel of one queue table: messages may be available."""
        name = f"sluice_{self.schema}_{qt_id}"
        return name if len(name) <= 63 else f"sluice_{hashlib.sha1(name.encode()).hexdigest()[:24]}_{qt_id}"

    def connect(self, user: str | None = None) -> psycopg.Connection:
        """A new autocommit connection with the store's schema first on the search path.
        With ``user``, a session's: ``sluice.user`` set for the USER_ views, and the session
        registered (:mod:`.sessions`), in one round trip.  :raises OperationalError: ORA-12541…"""
        try:
            raw = SessionConnection.connect(self.conninfo, autocommit=True,     # (the views' zone)
                                            options=search_path_option(self.schema) + zone_option())
            if user is not None:
                try:
                    key = pg_session_key(self.schema, user)
                    if self._names_program:
                        raw.execute(_SESSION_SETUP + _SET_PROGRAM, (user, key, PROGRAM))
                    else:
                        raw.execute(_SESSION_SETUP, (user, key))
                except BaseException:
                    raw.close()
                    raise
            return raw
        except psycopg.Error as e:
            raise translate(e, self) from None

    @property
    def _names_program(self) -> bool:
        """Whether a session sets its application name (V$SESSION.PROGRAM): unless the DSN
        or the environment named one."""
        return "application_name" not in self.conninfo and "PGAPPNAME" not in os.environ


# a session's connection: its user for the USER_ views, the shared advisory lock that lists
# it as a session of that user, and its program
_SESSION_SETUP = "SELECT set_config('sluice.user', %s, false), pg_advisory_lock_shared(%s)"
_SET_PROGRAM = ", set_config('application_name', %s, false)"


class SessionConnection(psycopg.Connection):
    """A psycopg connection that counts psycopg's ``DEALLOCATE ALL`` on it and keeps the
    prepared statements of its own (see pgprepared)."""

    deallocations = 0
    prepared_reads: Any = None      # pgprepared.PreparedReads, made on first use

    def _deallocate(self, name: bytes | None) -> Any:
        if name is None:
            self.deallocations += 1
        return super()._deallocate(name)


def search_path_option(schema: str) -> str:
    return f'-c search_path="{schema}"'


def parse_dsn(dsn: str) -> PgTarget:
    """``postgresql://[user[:password]@]host[:port]/database[?schema=name&…]``."""
    try:
        parts = urlsplit(dsn)
        parts.port   # noqa: B018  (a port that is not a number raises here)
    except ValueError as e:
        raise ora(12154, f"{dsn.split('@')[-1]}: {e}") from None
    params = parse_qsl(parts.query, keep_blank_values=True)
    schema = DEFAULT_SCHEMA
    rest = []
    for key, value in params:
        if key == "schema":
            schema = value
        else:
            rest.append((key, value))
    netloc = parts.netloc.rsplit("@", 1)
    shown = netloc[-1] if len(netloc) == 1 else netloc[0].split(":", 1)[0] + "@" + netloc[-1]
    shown_dsn = urlunsplit((parts.scheme, shown, parts.path, "", ""))     # no password
    if not _SCHEMA_NAME.fullmatch(schema):
        raise ora(12154, f"{shown_dsn}?schema={schema}: invalid schema name {schema!r} (letters, "
                         f"digits and _, at most 63, not starting with a digit)")
    if not any(k == "connect_timeout" for k, _ in rest):
        rest.append(("connect_timeout", str(CONNECT_TIMEOUT)))
    # percent-encoded as libpq reads a URI (urlencode's default writes a space as '+', which
    # libpq keeps: options=-c%20x=y became "-c+x=y", refused by the server)
    conninfo = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest, quote_via=quote),
                           parts.fragment))
    return PgTarget(conninfo, schema, shown_dsn)


# -- errors -----------------------------------------------------------------------

def is_disconnect(e: BaseException) -> bool:
    """True when ``e`` means the connection to the server is gone (or never came)."""
    if isinstance(e, (pgerr.AdminShutdown, pgerr.CrashShutdown, pgerr.CannotConnectNow)):
        return True
    if isinstance(e, psycopg.OperationalError):
        state = e.sqlstate
        return state is None or state.startswith("08") or state.startswith("57P")
    return isinstance(e, psycopg.InterfaceError)


# an Oracle error a user's statement as Sluice rewrote it raises on PostgreSQL: its text cast to a number
_CAST_ORA = re.compile(r'^invalid input syntax for type integer: "(ORA-\d{5}: [^"]*)"$')


def translate(e: psycopg.Error, target: PgTarget | None = None) -> DatabaseError:
    """The Oracle error for a psycopg error."""
    where = target.display if target else "PostgreSQL"
    msg = (e.diag.message_primary if getattr(e, "diag", None) and e.diag.message_primary else str(e))
    msg = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
    raised = raised_by_sluice_sql(msg)
    if raised is not None:
        return raised
    if isinstance(e, pgerr.InvalidTextRepresentation):    # an error a statement casts out (sqlhierarchy)
        cast = _CAST_ORA.search(msg)
        if cast:
            return raised_by_sluice_sql(cast.group(1))
        if msg.startswith("invalid input syntax for type json"):     # text into a JSON column
            return ora(40441)
    if isinstance(e, pgerr.CannotConnectNow):
        return ora(1033)
    if e.sqlstate is None and _BAD_CONNINFO.search(msg):   # libpq refused the DSN itself
        return ora(12154, f"{where}: {msg}")
    if isinstance(e, (pgerr.InvalidPassword, pgerr.InvalidAuthorizationSpecification)):
        return ora(1017)
    if isinstance(e, pgerr.InvalidCatalogName):
        return ora(12514, where)
    if isinstance(e, pgerr.LockNotAvailable):
        return ora(54)
    sequence = pg_error(e.sqlstate, msg)     # a user's sequence (store/sequences.py)
    if sequence is not None:
        return sequence
    if isinstance(e, pgerr.UndefinedTable):
        return ora(942)
    if isinstance(e, pgerr.CardinalityViolation) and msg.startswith("MERGE command cannot affect row a second"):
        return ora(30926)       # (store/sqlmerge.py)
    if isinstance(e, pgerr.WithCheckOptionViolation):    # a view WITH CHECK OPTION (.viewddl)
        return ora(1402)
    if isinstance(e, pgerr.ObjectNotInPrerequisiteState) and _VIEW_DML.match(msg):
        return ora(1732)     # DML on a view PostgreSQL cannot update
    for violation, code in _VIOLATIONS:
        if isinstance(e, violation):
            if code == 2291 and msg.startswith("update or delete"):     # a parent's key with children
                code = 2292
            return ora(code, getattr(e.diag, "constraint_name", None) or getattr(e.diag, "column_name", None)
                       or msg)
    if isinstance(e, pgerr.UndefinedFunction):
        mismatch = _OPERATOR.match(msg)
        if mismatch:
            return _inconsistent(*mismatch.groups())
    if isinstance(e, (pgerr.UndefinedColumn, pgerr.UndefinedFunction)):
        name = re.search(r'(?:column|function) "?([^"\s(]+)', msg)
        return ora(904, (name.group(1) if name else msg).upper())
    if isinstance(e, pgerr.SyntaxError):
        return ProgrammingError(f"ORA-00900: invalid SQL statement: {msg}", 900)
    unsupported = _CANNOT_ADAPT.match(msg) if e.sqlstate is None else None
    if unsupported:     # a bind of a Python type psycopg cannot send: python-oracledb's answer
        return dpy(3002, unsupported.group(1))
    if is_disconnect(e):
        return _connection_error(str(e), e.sqlstate, where)
    if e.sqlstate is None and ("query parameter missing" in msg or "placeholders but" in msg):
        return ora(1008)     # psycopg's own check of the binds (see Cursor.execute)
    if isinstance(e, pgerr.DivisionByZero):
        return ora(1476)
    if isinstance(e, pgerr.NumericValueOutOfRange):
        # (a value past a numeric(p, s) column's precision: a NUMBER(p, s) of a user's table)
        return ora(1438) if msg.startswith("numeric field overflow") else ora(1426, msg)
    if isinstance(e, (pgerr.CharacterNotInRepertoire, pgerr.UntranslatableCharacter)) or \
            (e.sqlstate is None and "cannot contain NUL" in msg):
        # text PostgreSQL cannot hold (a NUL character, which Oracle's VARCHAR2 can): the
        # value does not convert to the store's character data, as a lone surrogate does not
        return ora(6502, f"{CONVERSION_FAILED} ({msg})")
    if isinstance(e, pgerr.CannotCoerce):       # CAST(timestamp AS DOUBLE PRECISION): DATE + a date column
        types = re.search(r"cannot cast type (.+?) to (.+)", msg)
        if types:
            return ora(932, _oracle_type(types.group(2)), _oracle_type(types.group(1)))
    if isinstance(e, pgerr.InvalidDatetimeFormat):     # CAST('x' AS DATE)
        return ora(1861)
    if isinstance(e, pgerr.InvalidRegularExpression):       # REGEXP_LIKE(x, '(a'): .oraclefns
        return pg_regex_error(msg)
    if isinstance(e, pgerr.GeneratedAlways):     # a GENERATED ALWAYS identity column given a value
        return ora(32796 if "updated" in msg else 32795)
    if isinstance(e, pgerr.StringDataRightTruncation):     # a VARCHAR2(n) / CHAR(n) of a user's table
        return ora(12899)
    if isinstance(e, (pgerr.DataError, pgerr.InvalidTextRepresentation)):
        return ProgrammingError(f"ORA-01722: invalid number: {msg}", 1722)
    return ProgrammingError(f"ORA-00900: invalid SQL statement: {msg}", 900)


# PostgreSQL's "operator does not exist: timestamp without time zone > integer" (or "- text")
_OPERATOR = re.compile(r"operator does not exist: (?:(.+) )?([-+*/<>=~!@#%^&|`?]+) (.+)$")
_ARITHMETIC = frozenset({"+", "-", "*", "/"})


def _inconsistent(left: str | None, operator: str, right: str) -> DatabaseError:
    """ORA-00932 for an operator PostgreSQL has not for these types (``msg_id + 1``,
    ``enq_time > 5``), as Oracle reports the mismatch: arithmetic expects NUMBERs (it
    names the operand that is none), a comparison the left operand's type."""
    types = [_oracle_type(t) for t in (left, right) if t is not None]
    if operator in _ARITHMETIC:
        got = [t for t in types if t != "NUMBER"]
        return ora(932, "NUMBER", got[0] if got else types[-1])
    return ora(932, types[0], types[-1])


def _oracle_type(pg_type: str) -> str:
    """A PostgreSQL type's name as Oracle's ORA-00932 names the type."""
    if pg_type.startswith(("timestamp", "date")):
        return "DATE"
    if pg_type in ("double precision", "numeric", "integer", "bigint", "smallint", "real"):
        return "NUMBER"
    if pg_type in ("text", "unknown") or pg_type.startswith(("character", "varchar")):
        return "CHAR"
    if pg_type == "bytea":
        return "BINARY"
    if pg_type == "interval":
        return "INTERVAL DAY TO SECOND"
    return pg_type.upper()


# constraint violations of DML (StoreSession.execute_dml) -> Oracle's codes
_VIOLATIONS = ((pgerr.UniqueViolation, 1), (pgerr.NotNullViolation, 1400), (pgerr.CheckViolation, 2290),
               (pgerr.ForeignKeyViolation, 2291))


_VIEW_DML = re.compile(r"cannot (?:insert into|update|delete from) view ")
# libpq reports failures to connect as text only (no SQLSTATE)
_BAD_CONNINFO = re.compile(r"invalid (?:integer value|URI|connection option|sslmode value|value for)|"
                           r"missing \"=\"|unterminated quoted string")
_CANNOT_ADAPT = re.compile(r"cannot adapt type '([^']+)'")
_CONNECT_FAILURES = [
    (re.compile(r"failed to resolve host|could not translate host name"), 12545),
    (re.compile(r'database "[^"]*" does not exist'), 12514),
    (re.compile(r'role "[^"]*" does not exist|password authentication failed|no pg_hba.conf entry'), 1017),
    (re.compile(r"starting up|shutting down|in recovery mode|not yet accepting connections"), 1033),
    (re.compile(r"too many clients|connection slots are reserved"), 20),
    (re.compile(r"refused|could not connect|No such file or directory|timeout expired|"
                r"Network is unreachable"), 12541),
]


def _connection_error(text: str, sqlstate: str | None, where: str) -> DatabaseError:
    if sqlstate is None:
        for pattern, code in _CONNECT_FAILURES:
            if pattern.search(text):
                return ora(code, where) if code in (12514, 12541, 12545) else \
                    ora(20, "the server's max_connections") if code == 20 else ora(code)
    return ora(3113)   # the connection was there and is gone


# -- the shared SQL's connection ------------------------------------------------------

_CONVERTED: dict[str, str] = {}
_COMMAND_DONE = (ExecStatus.COMMAND_OK, ExecStatus.TUPLES_OK, ExecStatus.EMPTY_QUERY)
# COPY … (FORMAT BINARY): the PostgreSQL type of each SQL column type (see PgConnection.copy_rows)
_COPY_TYPES = {"BIGINT": "int8", "DOUBLE PRECISION": "float8", "BYTEA": "bytea", "TEXT": "text"}
_BYTES_DUMPER = psycopg.adapters.get_dumper(bytes, PyFormat.BINARY)
_INTS = frozenset((int, type(None)))


def _whole(values: Sequence) -> list:
    """A BIGINT column's values as ints (a float or bool given for one is converted as the
    arrays of :mod:`.pgarrays` convert it: the binary COPY takes only ints)."""
    return [None if v is None else int(v) for v in values]


def _pyformat(sql: str) -> str:
    """``?`` -> ``%b`` (a parameter in binary format) for the shared SQL, which has no
    ``?`` or ``%`` in literals."""
    out = _CONVERTED.get(sql)
    if out is None:
        out = _CONVERTED[sql] = sql.replace("%", "%%").replace("?", "%b")
    return out


class PgConnection:
    """A psycopg connection as :mod:`.sqlops` and :mod:`.sqlcatalog` use one.  Parameters
    and results travel in PostgreSQL's binary format: no text to format and parse for
    numbers, no hex for message ids and RAW payloads."""

    __slots__ = ("raw", "later", "reads", "begin")
    dialect = POSTGRESQL

    def __init__(self, raw: psycopg.Connection, later: "list[LaterCopy] | None" = None,
                 reads: Any = None) -> None:
        self.raw = raw
        # not None: a bulk insert's COPY is kept here, formatted, to be sent with the COMMIT
        # (PgSession.defer_bulk_inserts); the one kept before it is run first
        self.later = later
        # a session's connection: its statements of its own (pgprepared.PreparedReads)
        self.reads = reads
        # True: the transaction's BEGIN is not sent yet — it goes with the next statement,
        # in the same round trip where that statement's path allows (see PgSession._begin)
        self.begin = False

    def rows(self, qt_id: int, sql: str, params: Sequence, make_row: Any,
             psycopg_types: bool = False) -> list | None:
        """The rows of ``sql`` on the queue table ``qt_id`` as a prepared statement of the
        session's own, the pending BEGIN with it (pgprepared.PreparedReads.rows); None when
        that path does not take it (nothing sent)."""
        reads = self.reads
        if reads is None:
            return None
        begin, self.begin = self.begin, False
        rows = reads.rows(qt_id, sql, params, make_row, psycopg_types, begin)
        if rows is None:
            self.begin = begin
        return rows

    def query_table(self, qt_id: int, sql: str, params: Sequence) -> list[tuple]:
        """The rows of ``sql``, a statement on the queue table ``qt_id``: as a prepared
        statement of the session's own when it has them and takes these parameters
        (see pgprepared), else through a cursor — the same values either way."""
        rows = self.rows(qt_id, sql, params, tuple)
        if rows is not None:
            return rows
        return self.execute(sql, params).fetchall()

    def modify_table(self, qt_id: int, sql: str, params: Sequence) -> None:
        """:meth:`query_table` for a statement that returns no rows (a DELETE)."""
        reads = self.reads
        begin, self.begin = self.begin, False
        if reads is None or not reads.run(qt_id, sql, params, begin):
            self.begin = begin
            self.execute(sql, params)

    def send_begin(self) -> None:
        """Send the pending BEGIN on its own (the next statement's path cannot carry it)."""
        if self.begin:
            self.begin = False
            self.command("BEGIN")

    def execute(self, sql: str, params: Any = None) -> psycopg.Cursor:
        self.send_begin()
        if not params:
            return self.raw.execute(sql, binary=True)
        return self.raw.execute(_pyformat(sql), params, binary=True)

    @staticmethod
    def bulk_arrays(types: Sequence[str], columns: Iterable[Sequence]) -> list[EncodedArray]:
        """The parameters of a bulk insert: each column's values as an array of its SQL
        type (``BIGINT``, ``DOUBLE PRECISION``, ``BYTEA``, ``TEXT``), already encoded."""
        return [ENCODERS[t](values) for t, values in zip(types, columns)]

    def copy_rows(self, sql: str, lead: tuple[str | None, ...], types: Sequence[str],
                  columns: list[Sequence]) -> None:
        """A bulk insert as ``COPY … FROM STDIN (FORMAT BINARY)`` (``sql``): the texts
        ``lead`` in every row (the statement's first columns), then one value of each of
        ``columns`` (of the SQL ``types``), formatted in C (psycopg's ``write_row``).  The
        server parses no arrays and runs no ``unnest`` — less of its work for a batch of
        messages than ``INSERT … SELECT FROM unnest`` —; the rows join the open transaction
        like an INSERT's."""
        columns = [_whole(c) if t == "BIGINT" and not _INTS.issuperset(map(type, c)) else c
                   for t, c in zip(types, columns)]
        self.send_begin()
        cur = self.raw.cursor(binary=True)
        # bytea through psycopg's C dumper of bytes, not the DB-API Binary wrapper's Python
        # one that the type's name picks (a Python call per value)
        cur.adapters.register_dumper(bytes, _BYTES_DUMPER)
        later = self.later
        if later is not None:
            if later:      # only the last one rides with the COMMIT
                later.pop().run(self.raw)
            buffer = _Buffer()
            manager: Any = psycopg.Copy(cur, binary=True, writer=buffer)
        else:
            manager = cur.copy(sql)
        with manager as copy:
            copy.set_types([_COPY_TYPES[t] for t in ("TEXT",) * len(lead) + tuple(types)])
            write = copy.write_row
            for row in zip(*map(repeat, lead), *columns):
                write(row)
        if later is not None:
            later.append(LaterCopy(sql, b"".join(buffer.parts)))

    def executemany(self, sql: str, rows: list) -> psycopg.Cursor:
        self.send_begin()
        cur = self.raw.cursor(binary=True)
        cur.executemany(_pyformat(sql), rows)
        return cur

    def command(self, sql: str) -> None:
        """Statements without parameters (BEGIN, COMMIT, NOTIFY …, several separated by
        ``;`` in one round trip) straight through libpq: no cursor, no parameter handling
        — a fraction of the client's work for the statements every transaction has.  A
        pending BEGIN goes first in the same round trip."""
        raw = self.raw
        if self.begin:
            self.begin = False
            sql = "BEGIN; " + sql
        res = raw.pgconn.exec_(sql.encode())
        if res.status not in _COMMAND_DONE:
            raise result_error(raw, res)


def result_error(raw: psycopg.Connection, res: Any) -> psycopg.Error:
    """The psycopg error of a failed libpq result."""
    if raw.pgconn.status == ConnStatus.BAD or res.error_field(DiagnosticField.SQLSTATE) is None:
        # libpq's own report of a lost connection carries no SQLSTATE
        message = res.error_message.decode(errors="replace").strip()
        return psycopg.OperationalError(message or "the connection to the server was lost")
    return pgerr.error_from_result(res, encoding=raw.info.encoding)


class _Buffer(Writer):
    """Where a deferred COPY's formatted rows go (psycopg's public Writer interface)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: Any) -> None:
        self.parts.append(bytes(data))


@dataclass(slots=True)
class LaterCopy:
    """A bulk insert not sent yet: its ``COPY … FROM STDIN (FORMAT BINARY)`` and its data."""

    sql: str
    data: bytes

    def run(self, raw: psycopg.Connection) -> None:
        """Send it now and wait for the server to have inserted the rows."""
        with raw.cursor().copy(self.sql) as copy:
            copy.write(self.data)

    def send(self, raw: psycopg.Connection, then: str) -> None:
        """Send it and the statements ``then`` in one message (the simple query protocol
        goes on with the statements after a COPY once its data ended), without waiting
        for the server: the results are read later (:func:`read_results`)."""
        pg = raw.pgconn
        pg.nonblocking = 0      # the writes below wait until libpq sent it all
        try:
            pg.send_query(f"{self.sql}; {then}".encode())
            res = pg.get_result()
            if res is None or res.status != ExecStatus.COPY_IN:
                err = result_error(raw, res) if res is not None else \
                    psycopg.OperationalError("no COPY started")
                read_results(raw)
                raise err
            pg.put_copy_data(self.data)
            pg.put_copy_end()
            pg.flush()
        finally:
            pg.nonblocking = 1


def send_command(raw: psycopg.Connection, sql: str) -> None:
    """:meth:`PgConnection.command` without waiting for the results (:func:`read_results`)."""
    pg = raw.pgconn
    pg.nonblocking = 0
    try:
        pg.send_query(sql.encode())
        pg.flush()
    finally:
        pg.nonblocking = 1


def read_results(raw: psycopg.Connection) -> None:
    """Read the results of what :meth:`LaterCopy.send` / :func:`send_command` sent.
    :raises: the first statement's error (the server ran none after it)."""
    if raw.closed or raw.pgconn.status == ConnStatus.BAD:    # libpq would answer "no more results"
        raise psycopg.OperationalError("the connection was lost before the outcome was read")
    pg = raw.pgconn
    error: psycopg.Error | None = None
    while (res := pg.get_result()) is not None:
        if res.status not in _COMMAND_DONE and error is None:
            error = result_error(raw, res)
        if pg.status == ConnStatus.BAD:
            break
    if error is not None:
        raise error


# -- the pool -------------------------------------------------------------------------

class PgPool:
    """This process's pooled connections to one store."""

    def __init__(self, target: PgTarget, max_size: int = 8) -> None:
        self.target = target
        self._pool = ConnectionPool(
            target.conninfo, min_size=1, max_size=max_size, open=False, timeout=SERVER_WAIT,
            num_workers=1, name=f"sluice-{target.schema}", reconnect_timeout=SERVER_WAIT * 6,
            kwargs={"autocommit": True, "options": search_path_option(target.schema) + zone_option()})
        self._pool.open(wait=False)

    def close(self) -> None:
        self._pool.close(timeout=2.0)

    def run(self, work: Callable[[PgConnection], T], *, transaction: bool = True,
            then: list[str] | None = None, last: list[str] | None = None) -> T:
        """``work`` on a pooled connection: inside BEGIN … COMMIT (``transaction``) or as
        autocommit statements.  The statements in ``last`` (``work`` may add to them) run
        inside the transaction just before the COMMIT, those in ``then`` right after it, all
        in the COMMIT's round trip — the NOTIFYs announcing it.  A lost
        connection before the COMMIT was sent means nothing happened: ``work`` runs once
        more on a live connection (the pool's idle ones are checked first).  A lost
        connection during the COMMIT leaves the outcome unknown: ORA-03113."""
        for attempt in (1, 2):
            committing = False
            try:
                with self._pool.connection() as raw:
                    c = PgConnection(raw)
                    try:
                        if not transaction:
                            return work(c)
                        c.command("BEGIN")
                        result = work(c)
                        committing = True
                        c.command("; ".join((last or []) + ["COMMIT"] + (then or [])))
                    except BaseException:
                        if transaction and not raw.closed and \
                                raw.info.transaction_status != TransactionStatus.IDLE:
                            try:
                                c.command("ROLLBACK")
                            except psycopg.Error:
                                pass  # the pool discards a broken connection
                        raise
                    return result
            except PoolTimeout:
                raise ora(12541, self.target.display) from None
            except psycopg.Error as e:
                if attempt == 1 and not committing and is_disconnect(e):
                    # After a server restart every idle connection in the pool is dead,
                    # not only the one just tried: test them all (dead ones are replaced)
                    # so the second attempt gets a live connection.
                    self._pool.check()
                    continue
                raise translate(e, self.target) from None
        raise AssertionError("unreachable")
