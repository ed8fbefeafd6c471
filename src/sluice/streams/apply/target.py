"""Where an apply process applies: the target database's contract (:class:`Target`), its
errors and bookkeeping; :mod:`.pgtarget` and :mod:`.sqlitetarget` are the two databases,
:mod:`.targetdsn` finds the one ``apply_database_link`` names.

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

import time
from typing import Any, Iterable, NamedTuple

from ...errors import DatabaseError, IntegrityError, ora

__all__ = ["Target", "TargetError", "RolledBack", "Special", "PLAIN", "VIOLATIONS"]


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




# a constraint violation's kind (TargetError) -> the Oracle error
VIOLATIONS = {"unique": 1, "check": 2290, "notnull": 1400, "parent": 2291, "child": 2292}
