"""The Spark apply sink's set-form path: whole source transactions of plain row LCRs applied
to a PostgreSQL target as a few statements per table and operation (no Spark here).

The apply engine (:mod:`sluice.streams.apply.engine`) sends one statement per LCR.  Here the
rows of a *group* of source transactions -- one transaction by default; more only when the
apply's GROUPTRANSOPS parameter asks (whole source transactions, at most that many LCRs, in
one target transaction, as the Python apply process groups them) -- go as one
``INSERT … SELECT FROM unnest(arrays)``, ``UPDATE … FROM unnest(…)`` or ``DELETE … USING
unnest(…)`` per table, operation and shape, read straight from the rows' text columns
(no LCR objects are built).  Statements may run in another order than the LCRs only where
that cannot change the outcome: LCRs are put in *phases* so that a row (table and key)
changed twice goes into two phases, applied one after the other; within a phase no two
LCRs touch the same row.

What the engine guarantees holds because anything else leaves this path before it changes
a thing (:func:`eligible`), or makes it roll back and hand the group to the engine, one
source transaction per target transaction, as if this path did not exist:

* an UPDATE / DELETE finds its row by the table's primary key and compares every other
  old value the LCR carries (NULL for NULL): every statement must report exactly its rows,
  or the group is rolled back and the engine finds the conflict, resolves it with the
  update conflict handlers or puts the transaction in the error queue;
* any error (a duplicate key, a value that does not fit) does the same;
* each source transaction's SLUICE_APPLY_DONE record and the apply server's low-watermark
  (SLUICE_APPLY_PROGRESS) are written in the group's target transaction: a record that is
  already there (a replay) also sends the group to the engine, which skips what was applied;
* not taken here, the engine's per-LCR path instead: DML / error handlers on the table, a
  rule whose action context does something (custom transformation, enqueue destination,
  SET_EXECUTE), DDL, user messages, bad input, SET_KEY_COLUMNS or tables without a primary
  key, RAW / BLOB values, columns the engine converts (boolean), a precommit handler, an
  LCR at or below its instantiation SCN or without one, a transaction in the error queue.
"""

from __future__ import annotations

from typing import Any, Callable

from ..streams.apply.engine import ApplyEngine
from ..streams.apply.setform import Ineligible, TableShape, array_literal, set_statements
from ..streams.apply.pgtarget import PgTarget
from ..streams.apply.target import RolledBack, TargetError

__all__ = ["SetApplier", "rule_of"]

_BINARY = frozenset({"SYS.RAW", "SYS.BLOB"})


def rule_of(row: Any) -> str | None:
    """A row's TRUE positive rule (None: no rule set decided it, or no ``rule`` column)."""
    try:
        return row["rule"]
    except (KeyError, ValueError):   # a Spark Row without the field raises a ValueError
        return None


def _entries(value: Any) -> dict:
    """A map column as a dict (rows reach Python as their entries, in order)."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else dict(value)


class SetApplier:
    """The set-form path for one apply engine (its PostgreSQL target, its settings)."""

    def __init__(self, engine: ApplyEngine, has_actions: Callable[[str | None], bool]) -> None:
        self.engine = engine
        self.has_actions = has_actions
        self.usable = isinstance(engine.target, PgTarget)
        self._shapes: dict[tuple[str, str], TableShape | None] = {}
        self._version: Any = None
        self.groups = self.fallbacks = self.statements = 0

    # -- which transactions -------------------------------------------------------------
    def _shape(self, owner: str, name: str) -> TableShape | None:
        settings = self.engine.settings
        # (the apply's settings changed, or the target's tables were described again)
        version = (settings._version, self.engine.target.generation)
        if version != self._version:
            self._shapes.clear()
            self._version = version
        key = (owner, name)
        if key not in self._shapes:
            t = self.engine.target
            try:
                _cols, types, pk = t.describe(owner, name)
            except Exception:   # noqa: BLE001 -- the engine reports it (ORA-00942)
                self._shapes[key] = None
                return None
            chosen = settings.key_columns.get(key)
            converted = any(t.converter(ty) is not None for ty in types.values())
            ok = pk and (chosen is None or chosen == pk) and not converted
            self._shapes[key] = TableShape(t.table(owner, name), types, pk, t.column,
                                           t.special(owner, name)) if ok else None
        return self._shapes[key]

    def eligible(self, rows: list[Any]) -> bool:
        """Whether a source transaction's rows (decided, transformed) may take this path."""
        if not self.usable or self.engine.handlers.precommit is not None:
            return False
        settings = self.engine.settings
        for r in rows:
            if r["error"] is not None or r["lcr_kind"] != "ROW" or r["commit_scn"] is None:
                return False
            cmd, owner, name = r["command_type"], r["object_owner"], r["object_name"]
            if cmd not in ("INSERT", "UPDATE", "DELETE") or self.has_actions(rule_of(r)):
                return False
            if settings.dml_handlers and (settings.dml_handler(owner, name, cmd, False)
                                          or settings.dml_handler(owner, name, cmd, True)):
                return False
            scn = settings.instantiation_scn(r["source_database_name"], owner, name)
            if scn is None or int(r["commit_scn"]) <= scn:
                return False
            shape = self._shape(owner, name)
            if shape is None:
                return False
            old, new = _entries(r["old_values"]), _entries(r["new_values"])
            if cmd != "INSERT" and (not old or any(old.get(c) is None for c in shape.key)):
                return False
            if cmd == "UPDATE" and not new:
                return False
            types = {**_entries(r["old_types"]), **_entries(r["new_types"])}
            if any(t in _BINARY for t in types.values()):
                return False
            if any(c not in shape.types for c in (*old, *new)):
                return False
        return True

    # -- applying -------------------------------------------------------------------------
    def apply_group(self, txns: list[list[Any]]) -> bool:
        """Apply the source transactions ``txns`` (each its rows, all :meth:`eligible`) as
        one target transaction; False (nothing changed) when the engine must take them."""
        engine, target = self.engine, self.engine.target
        statements = self._claims(txns)
        expected = [len(txns)] + [None] * (len(statements) - 1)
        try:
            changes = self._changes(txns)
        except Ineligible:        # (a table's columns all computed by the target …)
            self.fallbacks += 1
            return False
        for sql, params, n in changes:
            statements.append((sql, params))
            expected.append(n)
        target.begin(engine.tag)
        try:
            counts = target.execute_batch(statements)
        except TargetError:
            target.rollback()
            self.fallbacks += 1
            return False
        if any(e is not None and c != e for c, e in zip(counts, expected)):
            target.rollback()
            self.fallbacks += 1
            return False
        try:
            target.commit()
        except RolledBack:       # a deferred constraint one of them breaks: the engine finds which
            self.fallbacks += 1
            return False
        for rows in txns:
            db, scn = rows[0]["source_database_name"], int(rows[0]["commit_scn"])
            engine.applied[db] = max(engine.applied.get(db, -1), scn)
        engine.transactions_applied += len(txns)
        engine.messages_applied += sum(len(r) for r in txns)
        self.groups += 1
        self.statements += len(statements)
        return True

    def _claims(self, txns: list[list[Any]]) -> list[tuple[str, tuple]]:
        """Each transaction's SLUICE_APPLY_DONE record (one statement: every record must be
        new), and the low-watermark per source database (the highest commit SCN)."""
        import time

        engine, t = self.engine, self.engine.target
        idents = [f"{rows[0]['source_database_name']}|{int(rows[0]['commit_scn'])}" for rows in txns]
        out = [(f"INSERT INTO {t.done_table()} (APPLY_NAME, KIND, ID, DONE) SELECT %s, 'CAPTURED', i, %s "
                f"FROM unnest(%s::text[]) AS i ON CONFLICT DO NOTHING",
                (engine.apply_name, time.time(), array_literal(idents)))]
        last: dict[str, tuple[int, Any]] = {}
        for rows in txns:
            db, scn = rows[0]["source_database_name"], int(rows[0]["commit_scn"])
            if scn >= last.get(db, (-1, None))[0]:
                last[db] = (scn, rows[0]["transaction_id"])
        for db, (scn, txn_id) in last.items():
            out.append(t.progress_statement(engine.apply_name, db, scn, txn_id, engine.server_id))
        return out

    def _changes(self, txns: list[list[Any]]) -> list[tuple[str, tuple, int]]:
        """The group's statements with the row count each must report."""
        return set_statements(((r["object_owner"], r["object_name"], r["command_type"],
                                _entries(r["old_values"]) if r["command_type"] != "INSERT" else {},
                                _entries(r["new_values"]) if r["command_type"] != "DELETE" else {})
                               for rows in txns for r in rows), self._shape)
