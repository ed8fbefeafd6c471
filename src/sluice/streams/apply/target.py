"""Where an apply process applies: a PostgreSQL database or an SQLite file.

**Which database.**  ``apply_database_link`` names it: a database link (CREATE DATABASE LINK
dbs2.net … USING 'postgresql://…'; DESIGN.md section 7: a link names another site by DSN), or
the DSN itself: ``postgresql://…[?schema=s]`` or ``sqlite:///path``.  Without
one, an apply process on a PostgreSQL store applies to the store's own database and an
apply process on an SQLite store to the store's own file.

**Names** (the mapping capture uses, :mod:`sluice.streams.capture.decode`):

* PostgreSQL: ``owner.object`` is the table ``schema.table`` where an all-upper-case Oracle
  name is the unquoted PostgreSQL name (``HR.EMPLOYEES`` -> ``hr.employees``) and any other
  keeps its exact spelling (``"Orders"``); columns likewise.
* SQLite has no schemas: ``owner.object`` is the table named ``"OWNER.OBJECT"`` (one
  identifier with a dot, the store's own convention for queue tables,
  :mod:`sluice.store.sqlschema`) if the file has one, else the table ``OBJECT`` — the
  mapping synchronous capture uses (:mod:`sluice.streams.capture.syncsqlite`).  SQLite
  compares names without regard to case; columns are named as capture names them (upper
  case for a lower-case name).

**Bookkeeping in the target.**  ``SLUICE_APPLY_DONE`` records each transaction applied —
a captured one by source database and commit SCN, a queue transaction of user-enqueued
messages by its first message id, an error transaction EXECUTE_ERROR applied by its local
id — in the same target transaction as its changes, so one delivered again after a crash is
recognised and skipped (exactly once; DESIGN.md sections 5 and 7); a record goes once the
dequeue of its messages has committed.  ``SLUICE_APPLY_PROGRESS`` holds, per apply process,
source database and apply server, the highest commit SCN applied.  On PostgreSQL both live
in the schema of the link's DSN (the store's schema by default).

**Tags.**  Every target transaction on PostgreSQL starts with the apply process's tag as a
``sluice.tag`` logical-decoding message (:func:`sluice.streams.capture.emit_tag`), so a
capture process reading that database gives the changes the tag and the default rules
(``:dml.is_null_tag() = 'Y'``) do not capture them again: no cycles.
"""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any, Iterable, NamedTuple

import psycopg
from psycopg import errors as pgerr

from ...errors import DatabaseError, IntegrityError, not_supported, ora
from ...store.pgconn import parse_dsn
from ...store.pgpipeline import exit_pipeline, pipeline_results
from ...store.sqlite import check_sqlite_file
from ..capture.decode import pg_name
from ..capture.pgsource import TAG_PREFIX, emit_tag
from ..propagation.links import link_name, resolve_link

__all__ = ["Target", "PgTarget", "SqliteTarget", "open_target", "check_link", "link_dsn", "TargetError",
           "RolledBack", "Special", "PLAIN", "VIOLATIONS"]


class TargetError(Exception):
    """A statement failed in the target; ``kind`` says how: a constraint violated --
    'unique' (or exclusion), 'check', 'notnull', 'parent' (no parent row), 'child' (child
    rows left), 'foreign' (one of those two: SQLite does not say which), the message then
    naming the constraint or column -- or 'other' (the message: the target's)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class RolledBack(IntegrityError):
    """ORA-02091: the target refused a COMMIT for the transaction's own sake — a deferred
    constraint (PostgreSQL: a DEFERRABLE INITIALLY DEFERRED foreign key, unique or exclusion
    constraint or constraint trigger; SQLite: a deferred foreign key) — and rolled it back.
    The message is Oracle's error stack: ORA-02091, then the cause on the next line
    (``cause``: ORA-02291 / ORA-02292 for a foreign key, ORA-00001 for a unique or exclusion
    constraint, ORA-26714 with the target's own text otherwise).  A COMMIT lost with the
    connection is not this: its outcome is unknown, it raises the connection's error."""

    def __init__(self, cause: DatabaseError) -> None:
        super().__init__(f"{ora(2091).message}\n{cause.message}", 2091)
        self.cause = cause


def _progress_name(columns: list[str]) -> str:
    """The target's applied low-watermark table: SLUICE_APPLY_PROGRESS, unless that name is
    taken by a Sluice store's own progress table (APPLIED_MESSAGE_NUMBER …, no APPLIED_SCN):
    the target is then the store's own database (an apply process without a database link),
    and its low-watermark lives beside it in SLUICE_APPLY_TARGET_PROGRESS.  (Such an apply
    crashed at every start on the store's table before.)"""
    return "SLUICE_APPLY_TARGET_PROGRESS" if columns and "APPLIED_SCN" not in columns \
        else "SLUICE_APPLY_PROGRESS"


class Special(NamedTuple):
    """A target table's columns the apply does not write as it writes the others.

    ``generated``: columns the target computes (PostgreSQL ``GENERATED ALWAYS AS (…)
    STORED``, SQLite ``… STORED`` / ``VIRTUAL``): never written -- the LCR may carry their
    source values (capture reads them from the WAL), the target computes its own, as
    PostgreSQL's logical replication leaves them out and Oracle's LCRs carry no virtual
    column.  Nor compared as old values, but where they are the key (the row is found by
    them).  ``identity``: PostgreSQL identity columns ``GENERATED ALWAYS``: an INSERT gives
    them the source's value (``OVERRIDING SYSTEM VALUE``: the replica's keys are the
    source's); an UPDATE cannot set them (PostgreSQL: "can only be updated to DEFAULT"), so
    it leaves out a value that does not change them.  (``GENERATED BY DEFAULT`` takes the
    values given, as any column.)"""

    generated: frozenset[str] = frozenset()
    identity: frozenset[str] = frozenset()


PLAIN = Special()


class Target:
    """One connection to the target database; one target transaction at a time."""

    dialect = ""
    placeholder = "?"

    def __init__(self) -> None:
        self._tables: dict[tuple[str, str], tuple[tuple[list[str], dict[str, str], list[str]], Special]] = {}
        self.generation = 0     # moves whenever a description may have changed (forget, redescribe)

    # -- names -----------------------------------------------------------------------
    @staticmethod
    def quote(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def column(self, name: str) -> str:
        return self.quote(name)

    def table(self, owner: str, name: str) -> str:
        raise NotImplementedError

    # -- dictionary --------------------------------------------------------------------
    def describe(self, owner: str, name: str) -> tuple[list[str], dict[str, str], list[str]]:
        """``(columns, {column: type}, primary key columns)`` in Oracle spelling, cached;
        ORA-00942 when the table does not exist."""
        return self._described(owner, name)[0]

    def special(self, owner: str, name: str) -> Special:
        """The table's columns the apply writes differently (:class:`Special`), described
        (and forgotten) with :meth:`describe`."""
        return self._described(owner, name)[1]

    def _described(self, owner: str, name: str) -> tuple[tuple[list[str], dict[str, str], list[str]], Special]:
        key = (owner, name)
        found = self._tables.get(key)
        if found is None:
            described = self._describe(owner, name)
            if not described[0]:
                raise ora(942)
            # (a _describe of three: no special columns)
            found = self._tables[key] = (tuple(described[:3]), described[3] if len(described) > 3 else PLAIN)
        return found

    def forget(self) -> None:
        """DDL ran: describe tables again."""
        self._tables.clear()
        self.generation += 1

    def redescribe(self, owner: str, name: str) -> bool:
        """Describe the table again, not from the cache: whether that changed anything (it
        was altered in the target behind the apply's back -- a column added or made
        generated, the table dropped or made again).  Oracle's apply works with a table as
        it is; a description kept for the apply's life failed every later change to it."""
        key = (owner, name)
        before = self._tables.pop(key, None)
        self._forget_name(key)
        try:
            after = self._described(owner, name)
        except DatabaseError:
            after = None
        if after == before:
            return False
        self.generation += 1
        return True

    def _forget_name(self, key: tuple[str, str]) -> None:
        """Forget what the table ``key`` was found as (:meth:`table`), if that is cached."""

    def _describe(self, owner: str, name: str) -> tuple[list[str], dict[str, str], list[str], Special]:
        raise NotImplementedError

    # -- transactions ----------------------------------------------------------------------
    def begin(self, tag: bytes | None) -> None:
        raise NotImplementedError

    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        """Run one statement; its row count.  :raises TargetError: it failed."""
        raise NotImplementedError

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        raise NotImplementedError

    def execute_batch(self, statements: list[tuple[str, tuple]]) -> list[int]:
        """Run statements in order (pipelined where the database can); their row counts.
        :raises TargetError: one failed (the transaction is then to be rolled back)."""
        return [self.execute(sql, params) for sql, params in statements]

    def savepoint(self, name: str) -> None:
        self.execute(f"SAVEPOINT {name}")

    def rollback_to(self, name: str) -> None:
        self.execute(f"ROLLBACK TO SAVEPOINT {name}")

    def commit(self) -> None:
        raise NotImplementedError

    def commit_later(self) -> None:
        """Commit; where the database allows, send the COMMIT and return before it is done:
        its outcome is read by the next use of the connection or :meth:`settle` (which
        raises its error).  The caller must :meth:`settle` before it acts on the commit
        (the apply process: before its own commit of the dequeue)."""
        self.commit()

    def settle(self) -> None:
        """Read the outcome of a :meth:`commit_later` still on its way (raises its error)."""

    def send_batch(self, statements: list[tuple[str, tuple]]) -> bool:
        """Send statements as :meth:`execute_batch` runs them, without waiting for them
        (False: this target cannot, or not these; nothing was sent).  The caller may build
        its next work meanwhile — without using this target — and then must call
        :meth:`finish_batch` (or :meth:`rollback`)."""
        return False

    def finish_batch(self) -> list[int]:
        """The row counts of what :meth:`send_batch` sent (as :meth:`execute_batch`
        returns and raises them)."""
        raise RuntimeError("finish_batch without send_batch")

    def rollback(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- the apply's bookkeeping -------------------------------------------------------------
    def progress_table(self) -> str:
        name = getattr(self, "_progress", None)
        if name is None:
            name = self._progress = self._bookkeeping_name(_progress_name(self._progress_columns()))
        return name

    def _progress_columns(self) -> list[str]:
        """The upper-cased columns of this database's SLUICE_APPLY_PROGRESS ([]: none)."""
        raise NotImplementedError

    def _bookkeeping_name(self, name: str) -> str:
        return name

    def done_table(self) -> str:
        return "SLUICE_APPLY_DONE"

    def ensure_bookkeeping(self) -> None:
        p, d = self.progress_table(), self.done_table()
        # a row per apply server (parallel apply commits in source order, so the highest
        # SCN over the servers' rows is the applied low-watermark)
        for sql in (f"""CREATE TABLE IF NOT EXISTS {p} (APPLY_NAME TEXT NOT NULL,
                        SOURCE_DATABASE TEXT NOT NULL, SERVER_ID INTEGER NOT NULL DEFAULT 0,
                        APPLIED_SCN BIGINT NOT NULL, SOURCE_TRANSACTION_ID TEXT, APPLY_TIME DOUBLE PRECISION,
                        PRIMARY KEY (APPLY_NAME, SOURCE_DATABASE, SERVER_ID))""",
                    f"""CREATE TABLE IF NOT EXISTS {d} (APPLY_NAME TEXT NOT NULL, KIND TEXT NOT NULL,
                        ID TEXT NOT NULL, DONE DOUBLE PRECISION, PRIMARY KEY (APPLY_NAME, KIND, ID))"""):
            self.execute(sql)
        self.commit()

    def applied_scns(self, apply_name: str) -> dict[str, int]:
        p = self.placeholder
        rows = self.query(f"SELECT SOURCE_DATABASE, MAX(APPLIED_SCN) FROM {self.progress_table()} "
                          f"WHERE APPLY_NAME = {p} GROUP BY SOURCE_DATABASE", (apply_name,))
        self.rollback()
        return {db: int(scn) for db, scn in rows}

    def progress_statement(self, apply_name: str, source_database: str, scn: int,
                           txn_id: str | None, server_id: int = 0) -> tuple[str, tuple]:
        """The upsert of the low-watermark (never backwards), for the current transaction."""
        p, t = self.placeholder, self.progress_table()
        return (f"""INSERT INTO {t} (APPLY_NAME, SOURCE_DATABASE, SERVER_ID, APPLIED_SCN,
                    SOURCE_TRANSACTION_ID, APPLY_TIME) VALUES ({p}, {p}, {p}, {p}, {p}, {p})
                    ON CONFLICT (APPLY_NAME, SOURCE_DATABASE, SERVER_ID) DO UPDATE SET
                    APPLIED_SCN = excluded.APPLIED_SCN, SOURCE_TRANSACTION_ID = excluded.SOURCE_TRANSACTION_ID,
                    APPLY_TIME = excluded.APPLY_TIME WHERE excluded.APPLIED_SCN > {t}.APPLIED_SCN""",
                (apply_name, source_database, server_id, scn, txn_id, time.time()))

    def done(self, apply_name: str, kind: str, ident: str) -> bool:
        p = self.placeholder
        return bool(self.query(f"SELECT 1 FROM {self.done_table()} WHERE APPLY_NAME = {p} AND KIND = {p} "
                               f"AND ID = {p}", (apply_name, kind, ident)))

    def done_statement(self, apply_name: str, kind: str, ident: str) -> tuple[str, tuple]:
        p = self.placeholder
        return (f"INSERT INTO {self.done_table()} (APPLY_NAME, KIND, ID, DONE) VALUES ({p}, {p}, {p}, {p}) "
                f"ON CONFLICT DO NOTHING",
                (apply_name, kind, ident, time.time()))

    def forget_done_statement(self, apply_name: str, idents: list[str]) -> tuple[str, tuple]:
        p = self.placeholder
        marks = ", ".join([p] * len(idents))
        return (f"DELETE FROM {self.done_table()} WHERE APPLY_NAME = {p} AND ID IN ({marks})",
                (apply_name, *idents))

    def forget_delivered_statement(self, apply_name: str, before: float) -> tuple[str, tuple]:
        """The delete of the apply's delivery records (captured and user-message
        transactions; not EXECUTE_ERROR's, which keep an error transaction applied once)
        written before ``before`` (epoch seconds): what the Spark apply sink no longer needs
        (:func:`sluice.pipeline.sinks.forget_delivered`)."""
        p = self.placeholder
        return (f"DELETE FROM {self.done_table()} WHERE APPLY_NAME = {p} AND KIND IN ('CAPTURED', 'USER') "
                f"AND DONE < {p}", (apply_name, before))

    # -- values ----------------------------------------------------------------------------
    def converter(self, type_name: str) -> Any:
        """A function making an LCR value fit a column of ``type_name`` (None: as it is)."""
        return None

    def limit_lock_wait(self, seconds: float) -> None:
        """Fail a statement that waits longer than ``seconds`` for a lock."""


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


class SqliteTarget(Target):
    """An SQLite file (tables ``"OWNER.OBJECT"``)."""

    dialect = "sqlite"

    def __init__(self, path: str, create: bool = True) -> None:
        super().__init__()
        self.path = path
        self._open = False
        self._names: dict[tuple[str, str], str] = {}
        check_sqlite_file(path)      # the store's refusals: ORA-27041, ORA-01157
        if not create and not os.path.exists(path):   # only read (compare): an empty file made here would hide the typo
            raise ora(27041, path, "No such file or directory")
        try:
            self.conn = sqlite3.connect(path, isolation_level=None, timeout=30.0, check_same_thread=False)
            self.conn.execute("PRAGMA journal_mode=WAL")
            # the target's foreign keys hold for the apply as in Oracle (SQLite checks them
            # only on a connection that asks; a deferred one at COMMIT: RolledBack)
            self.conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as e:
            if "not a database" in str(e):
                raise ora(1157, path, f"not an SQLite database ({e})") from None
            raise ora(27041, path, str(e)) from None

    def table(self, owner: str, name: str) -> str:
        """``"OWNER.NAME"`` if the file has such a table, else the table ``NAME`` — how
        synchronous capture names the tables of an SQLite file (:mod:`..capture.syncsqlite`);
        Sluice's own tables are never a target."""
        key = (owner, name)
        found = self._names.get(key)
        if found is None:
            found = self.quote(f"{owner}.{name}")
            for candidate in (f"{owner}.{name}", name):
                rows = self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND "
                                         "upper(name) = upper(?)", (candidate,)).fetchall()
                if len(rows) == 1 and not rows[0][0].upper().startswith(("SLUICE_", "AQ_")) and \
                        not ("." in rows[0][0] and candidate == name):
                    found = self.quote(rows[0][0])
                    break
            self._names[key] = found
        return found

    def forget(self) -> None:
        super().forget()
        self._names.clear()

    def _forget_name(self, key: tuple[str, str]) -> None:
        self._names.pop(key, None)

    def _progress_columns(self) -> list[str]:
        return [r[1].upper() for r in self.conn.execute("PRAGMA table_info(SLUICE_APPLY_PROGRESS)")]

    def _describe(self, owner: str, name: str) -> tuple[list[str], dict[str, str], list[str], Special]:
        from ..capture.decode import oracle_name   # SQLite ignores case: name columns as capture does
        # table_xinfo, not table_info: that leaves generated columns out (an LCR carrying one
        # was ORA-26788); its ``hidden`` is 2 (VIRTUAL) or 3 (STORED) for them, 1 for a
        # virtual table's hidden column (never an LCR's)
        rows = [r for r in self.conn.execute(f"PRAGMA table_xinfo({self.table(owner, name)})").fetchall()
                if r[6] != 1]
        pk = sorted((r for r in rows if r[5]), key=lambda r: r[5])
        generated = frozenset(oracle_name(r[1]) for r in rows if r[6] in (2, 3))
        return ([oracle_name(r[1]) for r in rows], {oracle_name(r[1]): (r[2] or "").lower() for r in rows},
                [oracle_name(r[1]) for r in pk], Special(generated) if generated else PLAIN)

    def converter(self, type_name: str) -> Any:
        from datetime import datetime
        from decimal import Decimal

        def to_sqlite(v: Any) -> Any:  # SQLite binds neither Decimal nor datetime
            if isinstance(v, Decimal):
                return int(v) if v == v.to_integral_value() and abs(v) < 2 ** 63 else float(v)
            if isinstance(v, datetime):
                return v.isoformat(sep=" ")
            return v
        return to_sqlite

    def limit_lock_wait(self, seconds: float) -> None:
        self.conn.execute(f"PRAGMA busy_timeout = {int(seconds * 1000)}")

    def begin(self, tag: bytes | None) -> None:
        if not self._open:
            self.conn.execute("BEGIN IMMEDIATE")
            self._open = True

    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        if not self._open and not sql.lstrip().upper().startswith(("CREATE", "SELECT")):
            self.begin(None)
        try:
            return self.conn.execute(sql, tuple(params)).rowcount
        except (sqlite3.Error, OverflowError) as e:
            raise _sqlite_error(e) from None

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        try:
            return self.conn.execute(sql, tuple(params)).fetchall()
        except (sqlite3.Error, OverflowError) as e:
            raise _sqlite_error(e) from None

    def commit(self) -> None:
        if self._open:
            try:
                self.conn.execute("COMMIT")
            except sqlite3.IntegrityError as e:
                # a deferred foreign key (PRAGMA foreign_keys): SQLite keeps the transaction
                # open; it is rolled back, as PostgreSQL does (SQLite names no constraint and
                # does not say whether a parent is missing or a child left: ORA-02291)
                self.rollback()
                raise RolledBack(ora(2291, "FOREIGN KEY")) from None
            self._open = False

    def rollback(self) -> None:
        if self._open:
            self.conn.execute("ROLLBACK")
            self._open = False

    def close(self) -> None:
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


# a constraint violation's kind (TargetError) -> the Oracle error
VIOLATIONS = {"unique": 1, "check": 2290, "notnull": 1400, "parent": 2291, "child": 2292}

# SQLite's "<KIND> constraint failed: <what>" -> TargetError's kind
_SQLITE_VIOLATIONS = {"UNIQUE": "unique", "PRIMARY KEY": "unique", "CHECK": "check", "NOT NULL": "notnull",
                      "FOREIGN KEY": "foreign"}


def _sqlite_error(e: sqlite3.Error | OverflowError) -> Exception:
    text = str(e)
    if isinstance(e, OverflowError):    # an integer beyond SQLite's 64 bits: the LCR's value, not the apply
        return TargetError("other", f"value larger than an SQLite INTEGER holds ({text})")
    if isinstance(e, sqlite3.IntegrityError):
        kind, _, what = text.partition(" constraint failed")
        if kind.upper() in _SQLITE_VIOLATIONS:
            return TargetError(_SQLITE_VIOLATIONS[kind.upper()], what.lstrip(": ") or kind.upper())
    if isinstance(e, sqlite3.OperationalError) and "locked" in text:
        return ora(54)
    return TargetError("other", text)


def is_dsn(link: str) -> bool:
    return link.startswith(("sqlite:///", "postgresql://", "postgres://"))


def check_link(link: str) -> str:
    """``apply_database_link`` as the catalog keeps it: a DSN as it is, a database link's
    name (CREATE DATABASE LINK) canonical.  :raises: ORA-12154 for neither."""
    if isinstance(link, str) and is_dsn(link):
        return link
    try:
        return link_name(link)
    except Exception:
        raise ora(12154, f"{str(link).split('@')[-1]} (an apply database link is a database link's name "
                         f"or a DSN: sqlite:///file.db or postgresql://…)") from None


def link_dsn(store: Any, user: str, link: str) -> str:
    """The DSN an apply database link leads to.  :raises: ORA-02019 (no such database link),
    SLU-00001 (a link to an HTTP servlet: an apply process needs the database itself)."""
    if is_dsn(link):
        return link
    found = resolve_link(store, user, link)
    if found.is_http or not is_dsn(found.endpoint):
        raise not_supported(f"applying through database link {found.name} to {found.endpoint} "
                            f"(an apply process writes to the database itself: the link's USING "
                            f"must be a sqlite:/// or postgresql:// DSN)")
    return found.endpoint


def open_target(link: str | None, store_dialect: str, store_pg: tuple[str, str] | None,
                store_path: str | None, create: bool = True) -> Target:
    """The target named by ``apply_database_link`` (see the module's docstring);
    ``create=False``: an SQLite file that is not there is ORA-27041, not made."""
    if link:
        if link.startswith("sqlite:///"):
            return SqliteTarget(link[len("sqlite:///"):], create)
        if link.startswith(("postgresql://", "postgres://")):
            t = parse_dsn(link)
            return PgTarget(t.conninfo, t.schema, t.display)
        raise ora(12154, f"{link.split('@')[-1]} (a DSN: sqlite:///file.db or postgresql://…)")
    if store_pg is not None:
        return PgTarget(store_pg[0], store_pg[1], "the store's database")
    if store_path:
        return SqliteTarget(store_path)
    raise not_supported("an apply process without a target database")
