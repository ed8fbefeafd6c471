"""The Spark apply sink's staged path, below Spark: a micro-batch's plain row LCRs reach the
PostgreSQL target in bulk (``COPY … (FORMAT csv)`` of Arrow batches written by
the executors, :func:`copy_batches`) into the apply's *staging table*, then each group of
whole source transactions is applied from there in set form (:class:`StagedApplier`) in
ONE target transaction that also writes its SLUICE_APPLY_DONE records and the apply's
low-watermark -- no Python per row anywhere.

The staging table (UNLOGGED, one per apply: ``SLUICE_APPLY_STAGING_B_<apply>`` beside the
target's SLUICE_APPLY_DONE) holds a row per row of the batch, staged in ONE Spark job that
reads, decides and COPYs: its source transaction (``TX``) and that transaction's facts
(source database, commit SCN, transaction id, TRUE rule), whether the set form may take the
row (``OK``), and for those rows commit order, key values, table, command, *shape* (which
columns it carries) and its old / new values as JSON objects of the values' text forms.  The
batch's transactions (size, commit order, eligibility, tables, rules) are aggregated there,
not in a second pass of Spark over the batch.  Once the driver has cut the batch into
groups, one query ranks each staged LCR into its *phase* (how many earlier LCRs of its group
touch the same row: a row changed twice goes in two phases, applied one after the other) and
hands the driver, per group, phase, table, command and shape, where those rows are in the
staging table (their ``ctid``): the rows are written once, by the COPY -- neither their
group nor their phase is written back, no index is kept -- and read by place.  The table is
emptied before each batch is staged, so a batch replayed after a crash between staging and
the apply's commit starts clean; a group whose records are already there (a replay after its
commit) is skipped, and one partly there goes to the engine, which skips what was applied.

Per group the statements are :mod:`.setapply`'s, reading the staging table (a TID scan of
the rows' places) instead of ``unnest()`` parameters, one statement per phase (a
data-modifying CTE per table, command and shape: within a phase no two LCRs touch the same
row, so their order cannot matter), each CTE's row count checked against the staged count.
A shortfall (a conflict: a row missing or not as the LCR's old values say), any error, or a
record already there rolls the group back and returns False: the caller hands the group to
the apply engine, one source transaction per target transaction (conflict handlers, error
queue), as if this path did not exist.
"""

from __future__ import annotations

import re
import time
from typing import Any, Iterable, Iterator

from ..streams.apply.pgtarget import PgTarget
from ..streams.apply.target import RolledBack, TargetError
from ..streams.apply.setform import TableShape, array_literal, base_type

__all__ = ["StagedApplier", "staging_table", "copy_batches", "COLUMNS", "FIELD_SEP", "SIDE_SEP", "TABLE_SEP"]

# the staging table's columns, in the order the executors COPY them: every row of the batch
# (its transaction's facts are aggregated there), the set form's columns only for rows it may take
COLUMNS = ("TX", "OK", "KIND", "DB", "SCN", "TXN", "RULE", "CSCN", "SEQ", "ROWKEY", "OWNER", "NAME", "CMD",
           "SHAPE", "OLD", "NEW")
TABLE_SEP = "\u0001"   # OWNER TABLE_SEP NAME in the transactions' table lists
FIELD_SEP, SIDE_SEP = "\u0001", "\u0002"   # a shape: new columns SIDE_SEP old columns


def staging_table(target: PgTarget, apply_name: str) -> str:
    """The apply's staging table in the target (a name of letters, digits and _)."""
    # _B: the batch-wide layout (every row, its transaction's facts); a table of the former
    # layout, if any, is left alone
    return f"{target.quote(target.schema)}.SLUICE_APPLY_STAGING_B_{re.sub(r'[^A-Za-z0-9_]', '_', apply_name)}"


def copy_batches(conninfo: str, table: str, batches: Iterator[Any]) -> Iterator[Any]:
    """On an executor (``mapInArrow``): COPY the Arrow batches (columns :data:`COLUMNS`)
    into ``table`` in one transaction; yields one batch holding how many rows it wrote."""
    import io

    import psycopg
    import pyarrow as pa
    from pyarrow import csv

    written = 0
    options = csv.WriteOptions(include_header=False)
    with psycopg.connect(conninfo) as conn:
        with conn.cursor().copy(f"COPY {table} ({', '.join(COLUMNS)}) FROM STDIN (FORMAT csv)") as cp:
            for batch in batches:
                if batch.num_rows:
                    out = io.BytesIO()
                    csv.write_csv(batch, out, options)   # Arrow's C writer: no Python per row
                    cp.write(out.getbuffer())
                    written += batch.num_rows
    yield pa.RecordBatch.from_pydict({"n": pa.array([written], pa.int64())})


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class StagedApplier:
    """Applies the staged groups of one batch through ``engine``'s PostgreSQL target;
    ``shape(owner, name)`` is the set-form path's view of a table (:class:`~sluice.streams.apply.setform.TableShape`)."""

    def __init__(self, engine: Any, shape: Any) -> None:
        self.engine, self.target, self.shape = engine, engine.target, shape
        self.table = staging_table(self.target, engine.apply_name)
        self.groups = self.fallbacks = self.statements = self.skipped = 0

    def prepare(self) -> None:
        """The staging table, made if missing and emptied (a replayed batch starts clean).
        No index: the COPY would maintain it for every row, and a group's statements read
        their rows by place (:meth:`staged`)."""
        t = self.target
        t.execute(f"CREATE UNLOGGED TABLE IF NOT EXISTS {self.table} (TX TEXT NOT NULL, OK BOOLEAN NOT NULL, "
                  "KIND TEXT, DB TEXT, SCN BIGINT, TXN TEXT, RULE TEXT, CSCN BIGINT, SEQ BIGINT, ROWKEY TEXT, "
                  "OWNER TEXT, NAME TEXT, CMD TEXT, SHAPE TEXT, OLD JSONB, NEW JSONB)")
        t.execute(f"TRUNCATE {self.table}")
        # the former layout's index (by group and phase, written per row after the COPY)
        t.execute(f"DROP INDEX IF EXISTS {self.table}_I")
        t.commit()

    def _tuned(self) -> None:
        """This transaction's planner settings: a batch's sorts in memory (the default
        work_mem spills a 50k-row batch to disk) and no JIT (the staging table has no
        statistics: the planner's guesses would compile code for statements of
        milliseconds)."""
        self.target.execute("SET LOCAL work_mem = '64MB'")
        self.target.execute("SET LOCAL jit = off")

    def transactions(self) -> list[dict]:
        """The staged batch's source transactions in commit order: size, commit order,
        whether every row may take the set form, source database, commit SCN, transaction
        id, tables (``OWNER\\0NAME``) and TRUE rules -- aggregated in the target (no
        second pass over the batch in Spark)."""
        self._tuned()
        rows = self.target.query(
            f"SELECT TX, min(coalesce(CSCN, 0)), min(SEQ), count(*), bool_and(OK), min(DB), max(SCN), min(TXN), "
            f"array_agg(DISTINCT OWNER || '{TABLE_SEP}' || NAME) FILTER (WHERE KIND = 'ROW' AND OWNER IS NOT NULL "
            f"AND NAME IS NOT NULL), array_agg(DISTINCT RULE) FILTER (WHERE RULE IS NOT NULL) FROM {self.table} "
            "GROUP BY TX")
        self.target.rollback()
        txs = [{"tx": tx, "c": c, "s": s, "n": n, "ok": bool(ok), "db": db, "scn": scn, "txn_id": txn,
                "ident": f"{db}|{scn}", "tables": [x.replace(TABLE_SEP, "\u0000") for x in tables or ()],
                "rules": list(rules or ())}
               for tx, c, s, n, ok, db, scn, txn, tables, rules in rows]
        return sorted(txs, key=lambda t: (t["c"], t["s"]))

    def staged(self, groups: dict[str, int]) -> dict[int, list[tuple[int, str, str, str, str, int, str]]]:
        """Per group (``groups``: transaction -> group), (phase, owner, name, command,
        shape, LCRs, their places) of what was staged: an LCR's phase is its rank in
        commit order among the group's LCRs that touch the same row, its place its ``ctid``
        (a ``tid[]`` literal per tuple).  One sort and one read in the database
        instead of a shuffle in Spark; nothing written: the places stay valid until the
        next batch empties the table."""
        txs = list(groups)
        self._tuned()
        rows = self.target.query(
            "SELECT g, p, OWNER, NAME, CMD, SHAPE, count(*), array_agg(id)::text FROM (SELECT t.ctid AS id, "
            "m.g, t.OWNER, t.NAME, t.CMD, t.SHAPE, row_number() OVER (PARTITION BY m.g, "
            # the row's hash, not its text, sorts fast: two rows whose hashes meet go in
            # two phases, which changes no result
            "hashtext(t.OWNER || chr(1) || t.NAME || chr(2) || t.ROWKEY) ORDER BY t.CSCN, t.SEQ) - 1 AS p "
            f"FROM {self.table} t JOIN unnest(%s::text[], %s::int[]) AS m(tx, g) ON t.TX = m.tx "
            "WHERE t.SHAPE IS NOT NULL) x GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2",
            (array_literal(txs), "{" + ",".join(str(groups[t]) for t in txs) + "}"))
        self.target.rollback()
        out: dict[int, list] = {}
        for grp, *rest in rows:
            out.setdefault(grp, []).append(tuple(rest))
        return out

    def done(self, idents: list[str]) -> set[str]:
        """Which of ``idents`` the target records as applied (a replayed batch)."""
        if not idents:
            return set()
        rows = self.target.query(f"SELECT ID FROM {self.target.done_table()} WHERE APPLY_NAME = %s "
                                 "AND KIND = 'CAPTURED' AND ID = ANY(%s::text[])",
                                 (self.engine.apply_name, array_literal(idents)))
        self.target.rollback()
        return {r[0] for r in rows}

    def apply_group(self, grp: int, txns: list[tuple[str, str, int, str | None]],
                    staged: list[tuple[int, str, str, str, str, int, str]]) -> bool:
        """Apply group ``grp`` -- its source transactions ``txns`` as (ident, source
        database, commit SCN, transaction id), its staged LCRs ``staged`` -- as one target
        transaction; False (nothing changed) when the engine must take it."""
        engine, target = self.engine, self.target
        claims = self._claims(txns)
        phases: dict[int, list] = {}
        for phase, owner, name, cmd, shape, n, places in staged:
            phases.setdefault(phase, []).append((owner, name, cmd, shape, n, places))
        target.begin(engine.tag)
        try:
            # no JIT (see _tuned), and the claims: one round trip
            counts = target.execute_batch([("SET LOCAL jit = off", ())] + claims)[1:]
            ok = counts[0] == len(txns)
            for phase in sorted(phases) if ok else ():
                sql, params, expected = self._phase(phases[phase])
                got = target.query(sql, params)[0]
                self.statements += 1
                if list(got) != expected:
                    ok = False
                    break
        except TargetError:
            ok = False
        if not ok:
            target.rollback()
            self.fallbacks += 1
            return False
        try:
            target.commit()
        except RolledBack:       # a deferred constraint one of them breaks: the engine finds which
            self.fallbacks += 1
            return False
        self.groups += 1
        self.statements += len(claims)
        return True

    def _claims(self, txns: list[tuple[str, str, int, str | None]]) -> list[tuple[str, tuple]]:
        """The group's SLUICE_APPLY_DONE records (one statement: every one must be new) and
        the low-watermark per source database (its highest commit SCN)."""
        engine, t = self.engine, self.target
        out = [(f"INSERT INTO {t.done_table()} (APPLY_NAME, KIND, ID, DONE) SELECT %s, 'CAPTURED', i, %s "
                f"FROM unnest(%s::text[]) AS i ON CONFLICT DO NOTHING",
                (engine.apply_name, time.time(), array_literal([i for i, _db, _scn, _tx in txns])))]
        last: dict[str, tuple[int, str | None]] = {}
        for _ident, db, scn, txn_id in txns:
            if scn >= last.get(db, (-1, None))[0]:
                last[db] = (scn, txn_id)
        for db, (scn, txn_id) in last.items():
            out.append(t.progress_statement(engine.apply_name, db, scn, txn_id, engine.server_id))
        return out

    def _phase(self, members: Iterable[tuple[str, str, str, str, int, str]]) -> tuple[str, tuple, list[int]]:
        """One phase's statement: a CTE per (table, command, shape) reading its staged rows
        by place (``places``), their row counts."""
        ctes, params, expected = [], [], []
        for i, (owner, name, cmd, shape, n, places) in enumerate(members):
            table = self.shape(owner, name)
            if table is None:    # (altered since it was staged: the set form no longer takes it)
                raise TargetError("other", f"{owner}.{name} is no longer the set form's")
            sql, p = self._change(table, cmd, shape)
            ctes.append(f"c{i} AS ({sql} RETURNING 1)")
            params += [places, *p]
            expected.append(n)
        counts = ", ".join(f"(SELECT count(*) FROM c{i})" for i in range(len(ctes)))
        return f"WITH {', '.join(ctes)} SELECT {counts}", tuple(params), expected

    def _change(self, shape: TableShape, cmd: str, shape_text: str) -> tuple[str, list]:
        """A table's INSERT / UPDATE / DELETE of the staged LCRs of one command and shape
        (their filter's parameters come first, then ``params``)."""
        new_part, old_part = shape_text.split(SIDE_SEP)
        new_cols = new_part.split(FIELD_SEP) if new_part else []
        old_cols = old_part.split(FIELD_SEP) if old_part else []
        staged = f"{self.table} s"
        where = "s.ctid = ANY(%s::tid[])"

        def value(side: str, c: str) -> str:
            return f"(s.{side} ->> {_literal(c)})::{base_type(shape.types[c])}"

        # (the target's generated columns neither written nor compared but as the key; an
        # identity GENERATED ALWAYS inserted with its value, never set: a row whose value
        # would change falls short of the count -- the engine refuses it; setform._statement)
        if cmd == "INSERT":
            written = [c for c in new_cols if c not in shape.generated]
            if not written:
                raise TargetError("other", "nothing to insert but what the target computes")
            cols = ", ".join(shape.columns[c] for c in written)
            values = ", ".join(value("NEW", c) for c in written)
            return (f"INSERT INTO {shape.table} ({cols}){shape.overriding(written)} SELECT {values} "
                    f"FROM {staged} WHERE {where}", [])
        conds = [f"t.{shape.columns[c]} {'=' if c in shape.key else 'IS NOT DISTINCT FROM'} {value('OLD', c)}"
                 for c in old_cols if shape.compared(c)]
        if any(c not in old_cols for c in shape.key):   # (a key changed since the rows were staged)
            raise TargetError("other", "an LCR staged without its key's old values")
        if cmd == "DELETE":
            return f"DELETE FROM {shape.table} t USING {staged} WHERE {' AND '.join([where] + conds)}", []
        settable = shape.settable(new_cols)
        if not settable:
            raise TargetError("other", "nothing to set but what the target computes")
        conds += [f"t.{shape.columns[c]} IS NOT DISTINCT FROM {value('NEW', c)}"
                  for c in new_cols if c in shape.identity]
        sets = ", ".join(f"{shape.columns[c]} = {value('NEW', c)}" for c in settable)
        return f"UPDATE {shape.table} t SET {sets} FROM {staged} WHERE {' AND '.join([where] + conds)}", []
