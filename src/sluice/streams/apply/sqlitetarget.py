"""An apply process's SQLite target: a file whose tables are ``"OWNER.OBJECT"`` (else
``OBJECT``), its foreign keys enforced, SQLite's errors as :class:`~.target.TargetError`."""

from __future__ import annotations

import os
import sqlite3
from typing import Any, Iterable

from ...errors import ora
from ...store.sqlite import check_sqlite_file
from .target import PLAIN, RolledBack, Special, Target, TargetError


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
            except sqlite3.IntegrityError:
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

