"""An apply process's PostgreSQL target: statements of a transaction pipelined, the apply tag
first, server errors as :class:`~.target.TargetError` / :class:`~.target.RolledBack`."""

from __future__ import annotations

from typing import Any, Iterable

import psycopg
from psycopg import errors as pgerr

from ...errors import DatabaseError, ora
from ...store.pgpipeline import exit_pipeline, pipeline_results
from ..capture.decode import pg_name
from ..capture.pgsource import TAG_PREFIX, emit_tag
from .target import PLAIN, VIOLATIONS, RolledBack, Special, Target, TargetError


class PgTarget(Target):
    """A PostgreSQL database (psycopg; statements of a transaction pipelined)."""

    dialect = "postgresql"
    placeholder = "%s"

    def __init__(self, conninfo: str, schema: str, display: str) -> None:
        super().__init__()
        self.conninfo = conninfo      # apply server processes open their own (servers.py)
        self.schema = schema
        self.display = display
        self._tag: bytes | None = None
        self._raw: Any = None
        self._raw_failed = True
        self._committing = False      # a COMMIT sent by commit_later, its outcome not read yet
        self._inflight: tuple | None = None   # a batch send_batch sent, its results not read yet
        try:
            self.conn = psycopg.connect(conninfo, autocommit=False, connect_timeout=10)
        except psycopg.Error as e:
            raise _pg_error(e) from None
        self._raw_init()

    def ensure_bookkeeping(self) -> None:
        self.execute(f"CREATE SCHEMA IF NOT EXISTS {self.quote(self.schema)}")
        super().ensure_bookkeeping()

    def table(self, owner: str, name: str) -> str:
        return f"{self.quote(pg_name(owner))}.{self.quote(pg_name(name))}"

    def column(self, name: str) -> str:
        return self.quote(pg_name(name))

    def _bookkeeping_name(self, name: str) -> str:
        return f"{self.quote(self.schema)}.{name}"

    def _progress_columns(self) -> list[str]:
        # (a catalog read: no rollback, the apply's target transaction may be open)
        rows = self.query("""SELECT upper(a.attname) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                             JOIN pg_namespace n ON n.oid = c.relnamespace
                             WHERE n.nspname = %s AND c.relname = 'sluice_apply_progress'
                               AND a.attnum > 0 AND NOT a.attisdropped""", (self.schema,))
        return [r[0] for r in rows]

    def done_table(self) -> str:
        return f"{self.quote(self.schema)}.SLUICE_APPLY_DONE"

    def _describe(self, owner: str, name: str) -> tuple[list[str], dict[str, str], list[str], Special]:
        from ..capture.decode import oracle_name
        # a column of a domain is described by the domain's base type (a domain over a
        # domain: the last one's), as capture gives its values: a boolean domain's NUMBER 1/0
        # made a boolean (converter), a set form's arrays cast to the base type (the
        # column's own assignment then checks the domain)
        rows = self.query("""WITH RECURSIVE dom(oid, base, typmod) AS (
                                 SELECT oid, typbasetype, typtypmod FROM pg_type WHERE typtype = 'd'
                                 UNION ALL SELECT d.oid, t.typbasetype,
                                                  CASE WHEN d.typmod >= 0 THEN d.typmod ELSE t.typtypmod END
                                 FROM dom d JOIN pg_type t ON t.oid = d.base AND t.typtype = 'd')
                             SELECT a.attname, CASE WHEN b.base IS NULL THEN format_type(a.atttypid, a.atttypmod)
                                                    ELSE format_type(b.base, b.typmod) END,
                                    COALESCE(a.attnum = ANY(i.indkey), false),
                                    a.attgenerated <> '', a.attidentity = 'a'
                             FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                             JOIN pg_namespace n ON n.oid = c.relnamespace
                             LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
                             LEFT JOIN (SELECT d.oid, d.base, d.typmod FROM dom d JOIN pg_type bt
                                        ON bt.oid = d.base AND bt.typtype <> 'd') b ON b.oid = a.atttypid
                             WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0
                               AND NOT a.attisdropped ORDER BY a.attnum""",
                          (pg_name(owner), pg_name(name)))
        # no rollback here: a handler's LCR.EXECUTE() describes a table inside the apply's
        # open target transaction, which must go on (the query reads the catalog only)
        columns = [oracle_name(r[0]) for r in rows]
        special = Special(frozenset(oracle_name(r[0]) for r in rows if r[3]),
                          frozenset(oracle_name(r[0]) for r in rows if r[4]))
        return (columns, {oracle_name(r[0]): r[1] for r in rows}, [oracle_name(r[0]) for r in rows if r[2]],
                special if special != PLAIN else PLAIN)

    def limit_lock_wait(self, seconds: float) -> None:
        self.settle()
        self.conn.execute(f"SET lock_timeout = '{int(seconds * 1000)}ms'")
        self.conn.commit()

    def converter(self, type_name: str) -> Any:
        if type_name == "boolean":      # capture gives booleans as NUMBER 1/0 (Oracle's habit)
            return lambda v: v if v is None or isinstance(v, bool) else bool(int(v))
        return None

    def begin(self, tag: bytes | None) -> None:
        # the tag message goes with the transaction's first statement (one round trip less)
        self._tag = tag

    def _emit_tag(self) -> None:
        tag, self._tag = self._tag, None
        if tag is not None:
            emit_tag(self.conn, tag)

    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        if self._committing:
            self.settle()
        try:
            if self._tag is not None:
                self._emit_tag()
            return self.conn.execute(sql, tuple(params)).rowcount
        except psycopg.Error as e:
            raise _target_error(e) from None

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        if self._committing:
            self.settle()
        try:
            return self.conn.execute(sql, tuple(params)).fetchall()
        except psycopg.Error as e:
            raise _target_error(e) from None

    def execute_batch(self, statements: list[tuple[str, tuple]]) -> list[int]:
        if len(statements) >= 3 and self._raw is not None and not self._raw_failed:
            return self._raw_batch(statements)    # behind a COMMIT still on its way, if any
        if self._committing:
            self.settle()
        if len(statements) < 3:
            return [self.execute(sql, params) for sql, params in statements]
        conn = self.conn
        try:
            with conn.pipeline():
                if self._tag is not None:
                    self._emit_tag()
                cursors = []
                for sql, params in statements:
                    cur = conn.cursor()
                    cur.execute(sql, params)
                    cursors.append(cur)
            return [c.rowcount for c in cursors]
        except psycopg.Error as e:
            raise _target_error(e) from None

    # -- the pipeline through libpq --------------------------------------------------------
    # psycopg's cursor costs ~2/3 of the apply's CPU per row (a cursor, an adapters map, a
    # query conversion and a wait per statement).  A batch goes through libpq's own
    # pipeline instead: each statement text prepared once per connection (and parameter
    # types), parameters dumped by psycopg's C Transformer, one sync per chunk.  Errors,
    # rollback and commit stay psycopg's (the transaction state is the server's).
    #
    # **A COMMIT and the next transaction in one round trip.**  :meth:`commit_later` sends the
    # COMMIT into a pipeline it leaves open (no sync): the server commits (writes and flushes
    # the commit record) while the apply builds the next transaction, whose BEGIN and
    # statements then go into that same pipeline behind the COMMIT, with one sync — the
    # COMMIT's outcome and the statements' row counts come back together.  If the COMMIT
    # failed (a deferred constraint), the server skips everything after it up to the sync:
    # the next transaction's statements are never executed, and the batch raises the
    # COMMIT's error (a DatabaseError, as :meth:`settle` does), never a TargetError of the
    # next transaction's.  :meth:`settle` (and any other use of the connection) syncs the
    # open pipeline and reads the COMMIT's outcome.
    _RAW_CHUNK = 500      # statements per sync: their replies fit the socket buffers

    def _raw_init(self) -> None:
        from psycopg import pq
        from psycopg.adapt import PyFormat, Transformer
        self._raw = (pq, Transformer(self.conn), PyFormat.AUTO)
        self._raw_failed = False
        self._prepared: dict[tuple, bytes] = {}
        self._texts: dict[str, tuple[bytes, int] | None] = {}
        self._formats: dict[int, list] = {}      # parameters' count -> their formats (AUTO)

    def _text(self, sql: str) -> tuple[bytes, int] | None:
        """``sql`` with $n placeholders, and their count (None: psycopg's path takes it)."""
        found = self._texts.get(sql, False)
        if found is False:
            parts = sql.split("%s")
            found = None if any("%" in part for part in parts) else \
                ("".join(f"{part}${i}" if i < len(parts) else part
                         for i, part in enumerate(parts, 1)).encode(), len(parts) - 1)
            self._texts[sql] = found
        return found

    def _raw_todo(self, statements: list[tuple[str, tuple]]) -> tuple[list[tuple[str, tuple]], int] | None:
        """The batch as the raw path sends it (the tag's statement first, if one is due) and
        how many statements lead it; None when a statement is not one this path knows
        (nothing taken: the tag stays due)."""
        todo = list(statements)
        for sql, params in todo:
            text = self._text(sql)
            if text is None or text[1] != len(params):
                return None
        if self._tag is None:
            return todo, 0
        tag, self._tag = self._tag, None
        lead = _TAG_SQL(tag)
        self._text(lead[0])
        return [lead, *todo], 1

    def _raw_batch(self, statements: list[tuple[str, tuple]]) -> list[int]:
        pq, tx, auto = self._raw
        pg = self.conn.pgconn
        ready = self._raw_todo(statements)
        if ready is None:
            self._raw_failed = True       # not a statement this path knows: psycopg's, from now on
            return self.execute_batch(statements)     # (settles a COMMIT on its way first)
        todo, head = ready
        counts: list[int] = []
        blocking = pg.nonblocking
        pg.nonblocking = 0         # libpq sends and waits itself (replies fit the buffers)
        try:
            for start in range(0, len(todo), self._RAW_CHUNK):
                chunk = todo[start:start + self._RAW_CHUNK]
                counts += self._raw_read(pg, pq, self._raw_send(pg, pq, tx, auto, chunk), len(chunk))
        except psycopg.Error as e:
            raise _target_error(e) from None
        finally:
            pg.nonblocking = blocking
            self._committing = False   # its outcome read (or the connection lost) in the first chunk
        return counts[head:]

    # -- a batch on its way while the caller builds the next one -----------------------------
    def send_batch(self, statements: list[tuple[str, tuple]]) -> bool:
        pq, tx, auto = self._raw if self._raw is not None else (None, None, None)
        if self._raw_failed or self._inflight is not None or not 3 <= len(statements) < self._RAW_CHUNK:
            return False
        ready = self._raw_todo(statements)
        if ready is None:
            return False               # execute_batch takes it (and finds out why)
        todo, head = ready
        pg = self.conn.pgconn
        blocking = pg.nonblocking
        pg.nonblocking = 0
        try:
            kinds = self._raw_send(pg, pq, tx, auto, todo)
        except psycopg.Error as e:
            self._committing = False
            raise _target_error(e) from None
        finally:
            pg.nonblocking = blocking
        self._inflight = (kinds, len(todo), head)
        return True

    def finish_batch(self) -> list[int]:
        inflight, self._inflight = self._inflight, None
        if inflight is None:
            raise RuntimeError("finish_batch without send_batch")
        kinds, n, head = inflight
        pq = self._raw[0]
        pg = self.conn.pgconn
        blocking = pg.nonblocking
        pg.nonblocking = 0
        try:
            return self._raw_read(pg, pq, kinds, n)[head:]
        except psycopg.Error as e:
            raise _target_error(e) from None
        finally:
            pg.nonblocking = blocking
            self._committing = False

    def _abandon(self) -> None:
        """A batch :meth:`send_batch` sent whose outcome nobody will read (an error in
        between): read it and forget it (the caller rolls the transaction back)."""
        if self._inflight is not None:
            try:
                self.finish_batch()
            except RolledBack:
                raise      # the COMMIT it rode behind failed: that is the error, as settle's
            except (TargetError, DatabaseError):
                pass

    def _raw_send(self, pg: Any, pq: Any, tx: Any, auto: Any, todo: list[tuple[str, tuple]]) -> list:
        """Send one chunk (behind a COMMIT on its way, if any) up to its sync; what each of
        its results will be (:meth:`_raw_read` reads them)."""
        kinds: list = [_COMMIT] if self._committing else []   # per result: see _raw_read
        if not kinds:
            pg.enter_pipeline_mode()
        try:
            if kinds or pg.transaction_status == pq.TransactionStatus.IDLE:
                pg.send_query_params(b"BEGIN", None)   # as psycopg begins a transaction
                kinds.append(b"")
            formats = self._formats
            for sql, params in todo:
                text, n = self._texts[sql]
                if n:
                    wanted = formats.get(n)
                    if wanted is None:
                        wanted = formats[n] = [auto] * n
                    values = tx.dump_sequence(params, wanted)
                else:
                    values = []
                key = (sql, tx.types if n else ())
                name = self._prepared.get(key)
                if name is None:
                    name = f"sluice_apply_{len(self._prepared)}".encode()
                    pg.send_prepare(name, text, param_types=tx.types if n else None)
                    kinds.append(name)
                    self._prepared[key] = name
                pg.send_query_prepared(name, values, param_formats=tx.formats if n else None)
                kinds.append(None)
            pg.pipeline_sync()           # (libpq sends it all now)
        except psycopg.Error:
            # a value psycopg cannot send (the statement-by-statement path reports it):
            # end the pipeline cleanly first, forgetting what it was to prepare
            self._prepared = {k: v for k, v in self._prepared.items() if v not in kinds}
            try:
                if not pg.status:       # CONNECTION_OK: what was sent is read back
                    pg.pipeline_sync()
                    drained = list(pipeline_results(pg))
                    if kinds and kinds[0] is _COMMIT:
                        self._committed(drained[0] if drained else None, pq)
            finally:
                self._committing = False
                exit_pipeline(pg)
            raise
        return kinds

    def _raw_read(self, pg: Any, pq: Any, kinds: list, n: int) -> list[int]:
        """The results of a chunk :meth:`_raw_send` sent: its statements' row counts.  Per
        result ``kinds`` says what it is: _COMMIT the COMMIT it went behind, b"" its BEGIN, a
        name a statement being prepared, None a statement.  :raises DatabaseError: that
        COMMIT failed (nothing after it ran: the pipeline was aborted); psycopg.Error: a
        statement failed."""
        try:
            results = list(pipeline_results(pg))
        finally:
            self._committing = False
            exit_pipeline(pg)
        if kinds and kinds[0] is _COMMIT:
            kinds = kinds[1:]
            self._committed(results.pop(0) if results else None, pq)
        counts, error = [], None
        for kind, res in zip(kinds, results):
            if res.status not in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
                if kind:                 # not prepared after all
                    self._prepared = {k: v for k, v in self._prepared.items() if v != kind}
                if error is None and res.status == pq.ExecStatus.FATAL_ERROR:
                    error = res
                continue
            if kind is None:
                counts.append(res.command_tuples or 0)
        if len(results) != len(kinds) and error is None:
            error = next((r for r in results if r.status == pq.ExecStatus.FATAL_ERROR), None)
        if error is not None or len(counts) != n:
            from psycopg import errors as pgerrors
            e = pgerrors.error_from_result(error) if error is not None else \
                psycopg.OperationalError("the pipeline ended early")
            raise e
        return counts

    def commit(self) -> None:
        if self._committing:
            self.settle()
        try:
            self.conn.commit()
        except psycopg.Error as e:
            raise _commit_error(e) from None

    def commit_later(self) -> None:
        """The COMMIT sent through libpq, not waited for: the server writes and flushes the
        commit record while the apply reads and builds the next transaction (with one target
        transaction per source transaction that wait was a fifth of the apply's time)."""
        if self._committing:
            self.settle()
        pq = self._raw[0] if self._raw is not None else None
        pg = self.conn.pgconn
        if pq is None or pg.transaction_status != pq.TransactionStatus.INTRANS:
            return self.commit()     # psycopg's own commit (nothing open, or a failed transaction)
        blocking = pg.nonblocking
        pg.nonblocking = 0           # libpq sends it all before returning
        try:
            # into a pipeline left open: the next transaction's statements follow it (see above)
            pg.enter_pipeline_mode()
            pg.send_query_params(b"COMMIT", None)
            pg.flush()               # on its way now (a pipeline holds what it sends until a sync)
        except psycopg.Error as e:
            if pg.pipeline_status != pq.PipelineStatus.OFF and not pg.status:
                try:
                    pg.pipeline_sync()
                    list(pipeline_results(pg))
                    pg.exit_pipeline_mode()
                except psycopg.Error:
                    pass
            raise _pg_error(e) from None
        finally:
            pg.nonblocking = blocking
        self._committing = True

    def settle(self) -> None:
        """The outcome of the COMMIT :meth:`commit_later` sent: read (waiting for it if need
        be); its error raised (a DatabaseError, as :meth:`commit` raises)."""
        if not self._committing:
            return
        self._committing = False
        pq = self._raw[0]
        pg = self.conn.pgconn
        blocking = pg.nonblocking
        pg.nonblocking = 0
        try:
            pg.pipeline_sync()
            results = list(pipeline_results(pg))
        except psycopg.Error as e:
            raise _pg_error(e) from None
        finally:
            pg.nonblocking = blocking
            if pg.pipeline_status != pq.PipelineStatus.OFF:
                try:
                    pg.exit_pipeline_mode()
                except psycopg.Error:
                    pass
        self._committed(results[0] if len(results) == 1 else None, pq)

    def _committed(self, res: Any, pq: Any) -> None:
        """Check the result of a COMMIT :meth:`commit_later` sent.  :raises DatabaseError: it
        failed (or did not answer)."""
        if res is not None and res.status == pq.ExecStatus.COMMAND_OK:
            return
        e = pgerr.error_from_result(res) if res is not None and res.status == pq.ExecStatus.FATAL_ERROR \
            else psycopg.OperationalError("the target's commit ended without an answer")
        raise _commit_error(e)

    def rollback(self) -> None:
        self._tag = None
        self._abandon()
        if self._committing:
            self.settle()      # the previous transaction's commit failed: that is the error
        if not self.conn.closed:
            try:
                self.conn.rollback()
            except psycopg.Error:
                pass      # a lost connection has no transaction left

    def close(self) -> None:
        try:
            self._abandon()
            if self._committing:
                self.settle()
        except DatabaseError:
            pass           # not acted on: whoever sent it did not commit its dequeue
        self.conn.close()




_COMMIT = object()       # in a chunk's result kinds: the COMMIT it was sent behind


def _TAG_SQL(tag: bytes | None) -> tuple[str, tuple]:
    """What :func:`~sluice.streams.capture.pgsource.emit_tag` runs, as a statement of a batch."""
    return "SELECT pg_logical_emit_message(true, %s, %s)", (TAG_PREFIX, tag.hex() if tag else "")


def _violation(e: psycopg.Error) -> TargetError | None:
    """A constraint violation as :class:`TargetError` names it (None: not one): the
    constraint as Oracle names it (OWNER.NAME), a column as ("OWNER"."TABLE"."COLUMN")."""
    from ..capture.decode import oracle_name

    diag = e.diag
    text = (diag.message_primary or str(e)).strip()
    name = ".".join(x for x in (diag.schema_name, diag.constraint_name) if x) or text
    if isinstance(e, (pgerr.UniqueViolation, pgerr.ExclusionViolation)):
        return TargetError("unique", name)
    if isinstance(e, pgerr.CheckViolation):
        return TargetError("check", name)
    if isinstance(e, pgerr.ForeignKeyViolation):
        # "update or delete on table … violates foreign key constraint": a child left behind
        return TargetError("child" if text.startswith("update or delete") else "parent", name)
    if isinstance(e, pgerr.NotNullViolation) and diag.column_name:
        return TargetError("notnull", ".".join(f'"{oracle_name(x)}"' for x in
                                               (diag.schema_name, diag.table_name, diag.column_name) if x))
    return None


def _target_error(e: psycopg.Error) -> Exception:
    violated = _violation(e) if isinstance(e, psycopg.IntegrityError) else None
    if violated is not None:
        return violated
    if isinstance(e, psycopg.DataError) and e.sqlstate is None:
        # a value psycopg cannot send (a text with a NUL character): this transaction's
        # fault, not the connection's -- the error queue, not a retry
        return TargetError("other", f"22021: {e}")
    if isinstance(e, (pgerr.OperationalError, pgerr.AdminShutdown)) or e.sqlstate is None:
        return _pg_error(e)
    return TargetError("other", f"{e.sqlstate}: {(e.diag.message_primary or str(e)).strip()}")


def _commit_error(e: psycopg.Error) -> DatabaseError:
    """What a failed COMMIT raises: :class:`RolledBack` when the server refused it (an error a
    statement would fail its transaction with), the connection's error when it was lost."""
    refused = _target_error(e)
    if not isinstance(refused, TargetError):
        return refused
    if refused.kind in ("unique", "parent", "child"):      # (deferrable: these only)
        return RolledBack(ora(VIOLATIONS[refused.kind], str(refused)))
    return RolledBack(ora(26714, f"{e.sqlstate}: {(e.diag.message_primary or str(e)).strip()}"))


def _pg_error(e: psycopg.Error) -> DatabaseError:
    from ...store.pgconn import translate
    return translate(e, None)

