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
columns it carries), its old / new values as JSON objects of the values' text forms, and its
*group* and *phase* (how many earlier LCRs of the group touch the same row), written there
after the COPY once the driver has cut the batch into groups: a row changed twice goes in two
phases, applied one after the other.  The batch's
transactions (size, commit order, eligibility, tables, rules) are aggregated there, not in
a second pass of Spark over the batch.  It is emptied before each
batch is staged, so a batch replayed after a crash between staging and the apply's commit
starts clean; a group whose records are already there (a replay after its commit) is
skipped, and one partly there goes to the engine, which skips what was applied.

Per group the statements are :mod:`.setapply`'s, reading the staging table instead of
``unnest()`` parameters, one statement per phase (a data-modifying CTE per table, command
and shape: within a phase no two LCRs touch the same row, so their order cannot matter),
each CTE's row count checked against the staged count.  A shortfall (a conflict: a row
missing or not as the LCR's old values say), any error, or a record already there rolls
the group back and returns False: the caller hands the group to the apply engine, one
source transaction per target transaction (conflict handlers, error queue), as if this
path did not exist.
"""

from __future__ import annotations

import re
import time
from typing import Any, Iterable, Iterator

from ..streams.apply.target import PgTarget, RolledBack, TargetError
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
        """The staging table, made if missing and emptied (a replayed batch starts clean)."""
        t = self.target
        t.execute(f"CREATE UNLOGGED TABLE IF NOT EXISTS {self.table} (TX TEXT NOT NULL, OK BOOLEAN NOT NULL, "
                  "KIND TEXT, DB TEXT, SCN BIGINT, TXN TEXT, RULE TEXT, GRP INTEGER, PHASE INTEGER NOT NULL DEFAULT 0, "
                  "CSCN BIGINT, SEQ BIGINT, ROWKEY TEXT, OWNER TEXT, NAME TEXT, CMD TEXT, SHAPE TEXT, "
                  "OLD JSONB, NEW JSONB)")
        t.execute(f"CREATE INDEX IF NOT EXISTS {self.table.rsplit('.', 1)[1]}_I ON {self.table} "
                  "(GRP, PHASE, OWNER, NAME, CMD, SHAPE)")
        t.execute(f"TRUNCATE {self.table}")
        t.commit()

    def transactions(self) -> list[dict]:
        """The staged batch's source transactions in commit order: size, commit order,
        whether every row may take the set form, source database, commit SCN, transaction
        id, tables (``OWNER\\0NAME``) and TRUE rules -- aggregated in the target (no
        second pass over the batch in Spark)."""
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

    def staged(self, groups: dict[str, int]) -> dict[int, list[tuple[int, str, str, str, str, int]]]:
        """Per group (``groups``: transaction -> group), (phase, owner, name, command,
        shape, LCRs) of what was staged, once each staged LCR has its group and its phase:
        its rank in commit order among the group's LCRs that touch the same row (one sort
        and one UPDATE in the database instead of a shuffle in Spark; the group written per
        row so that a group's statements read only its rows, through the index)."""
        txs = list(groups)
        self.target.execute(f"UPDATE {self.table} s SET GRP = x.g, PHASE = x.p FROM (SELECT t.ctid AS id, m.g, "
                            "row_number() OVER (PARTITION BY m.g, t.OWNER, t.NAME, t.ROWKEY ORDER BY t.CSCN, t.SEQ) "
                            f"- 1 AS p FROM {self.table} t JOIN unnest(%s::text[], %s::int[]) AS m(tx, g) "
                            "ON t.TX = m.tx WHERE t.SHAPE IS NOT NULL) x WHERE s.ctid = x.id",
                            (array_literal(txs), "{" + ",".join(str(groups[t]) for t in txs) + "}"))
        self.target.commit()
        rows = self.target.query(f"SELECT GRP, PHASE, OWNER, NAME, CMD, SHAPE, count(*) FROM {self.table} "
                                 "WHERE GRP IS NOT NULL GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2")
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
                    staged: list[tuple[int, str, str, str, str, int]]) -> bool:
        """Apply group ``grp`` -- its source transactions ``txns`` as (ident, source
        database, commit SCN, transaction id), its staged LCRs ``staged`` -- as one target
        transaction; False (nothing changed) when the engine must take it."""
        engine, target = self.engine, self.target
        claims = self._claims(txns)
        phases: dict[int, list] = {}
        for phase, owner, name, cmd, shape, n in staged:
            phases.setdefault(phase, []).append((owner, name, cmd, shape, n))
        target.begin(engine.tag)
        try:
            counts = target.execute_batch(claims)
            ok = counts[0] == len(txns)
            for phase in sorted(phases) if ok else ():
                sql, params, expected = self._phase(grp, phase, phases[phase])
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

    def _phase(self, grp: int, phase: int, members: Iterable[tuple[str, str, str, str, int]]
               ) -> tuple[str, tuple, list[int]]:
        """One phase's statement: a CTE per (table, command, shape), their row counts."""
        ctes, params, expected = [], [], []
        for i, (owner, name, cmd, shape, n) in enumerate(members):
            sql, p = self._change(self.shape(owner, name), cmd, shape)
            ctes.append(f"c{i} AS ({sql} RETURNING 1)")
            params += [grp, phase, owner, name, cmd, shape, *p]
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
        where = "s.GRP = %s AND s.PHASE = %s AND s.OWNER = %s AND s.NAME = %s AND s.CMD = %s AND s.SHAPE = %s"

        def value(side: str, c: str) -> str:
            return f"(s.{side} ->> {_literal(c)})::{base_type(shape.types[c])}"

        if cmd == "INSERT":
            cols = ", ".join(shape.columns[c] for c in new_cols)
            values = ", ".join(value("NEW", c) for c in new_cols)
            return f"INSERT INTO {shape.table} ({cols}) SELECT {values} FROM {staged} WHERE {where}", []
        conds = [f"t.{shape.columns[c]} {'=' if c in shape.key else 'IS NOT DISTINCT FROM'} {value('OLD', c)}"
                 for c in old_cols]
        if any(c not in old_cols for c in shape.key):
            raise AssertionError("the staged frame lets no LCR without its key's old values through")
        match = " AND ".join([where] + conds)
        if cmd == "DELETE":
            return f"DELETE FROM {shape.table} t USING {staged} WHERE {match}", []
        sets = ", ".join(f"{shape.columns[c]} = {value('NEW', c)}" for c in new_cols)
        return f"UPDATE {shape.table} t SET {sets} FROM {staged} WHERE {match}", []
