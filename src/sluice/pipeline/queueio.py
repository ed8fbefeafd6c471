"""A Sluice queue as a pipeline reads it: positions, ranges, records, acknowledgement.

No Spark here: the data source (:mod:`.source`) calls these functions from Spark's
Python workers, each opening its own plain DB-API connection to the store (a SQLite
file, a PostgreSQL schema) -- a worker may run on another machine, so nothing of a
driver-side :class:`~sluice.Connection` travels.

**Position.**  A queue ordered by commit time (``DBMS_STREAMS_ADM.SET_UP_QUEUE``'s, every
capture's) is read in commit SCN order: a message's ``CSCN`` is taken while the
committing transaction holds the store's SCN counter (:func:`sluice.store.sqlops.next_scn`),
so a commit with a smaller SCN can never become visible after a larger one -- no gaps --
and every message a store transaction enqueued shares its SCN, so a range that ends on an
SCN never splits a transaction.  A capture enqueues each source transaction in one store
transaction, hence never splits one either.  Other queues are read in ``SEQ`` order, a
range ending at the last message of its enqueuing transaction (``ENQ_TID``).
Two limits: on PostgreSQL, two sessions enqueuing into a queue *not* ordered by commit time
can commit in the other order than their SEQs, and a message committed behind the position
is then never read; a delayed message (WAITING) that becomes READY behind the position is
not read either.  Streams queues (SET_UP_QUEUE, capture) are ordered by commit time and have
neither.
**Acknowledgement** (:func:`acknowledge`) consumes the READY records up to a position --
deleted, or PROCESSED while the queue retains messages -- and advances the pipeline's
low-watermark row in the same store transaction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterator

from .. import constants as C
from ..errors import ora
from ..names import split_qualified
from ..store import open_store, release_store, sqlite_file
from ..store.pgconn import parse_dsn, search_path_option
from ..store.sqlschema import table_name

__all__ = ["QueueRef", "RECORD_FIELDS", "open_raw", "latest_position", "split_range", "records",
           "browse", "acknowledge", "low_watermark", "record_figures", "progress_rows", "set_position"]

# what a pipeline reads of a message record, in this order
RECORD_FIELDS = ("SEQ", "Q_NAME", "MSGID", "CORRID", "PRIORITY", "STATE", "CSCN", "ENQ_TIME",
                 "ENQ_TID", "CONSUMER_NAME", "USER_DATA")


@dataclass(frozen=True)
class QueueRef:
    """Everything a worker needs to read one queue (picklable, no connection)."""

    dsn: str
    owner: str
    name: str
    table: str          # the physical (quoted) name of its queue table
    payload_type: str
    order: str          # 'CSCN' (commit-time queue) or 'SEQ'
    multi: bool
    consumer: str | None
    retention: float

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"

    @classmethod
    def resolve(cls, dsn: str, queue: str, consumer: str | None = None, user: str | None = None,
                browse: bool = False) -> "QueueRef":
        """The queue ``queue`` (``OWNER.NAME``, or NAME in ``user``'s schema, default SLUICE)
        of the store at ``dsn``, from the store's catalog.  A pipeline reading a
        multi-consumer queue reads as one of its consumers (ORA-25231 without one);
        browsing reads every record.

        :raises: ORA-24010 when the queue does not exist."""
        store = open_store(dsn)
        try:
            owner, name = split_qualified(queue, (user or "SLUICE").upper(), "queue name")
            info = next((q for q in store.queues() if (q.owner, q.name) == (owner, name)), None)
        finally:
            release_store(store)
        if info is None:
            raise ora(24010, f"{owner}.{name}")
        qt = info.table
        if qt.multiple_consumers and consumer is None and not browse:
            raise ora(25231, f"{owner}.{name}: a pipeline reads a multi-consumer queue as a consumer "
                             "(option consumer)")
        return cls(dsn, owner, name, table_name(qt), qt.payload_type, "CSCN" if qt.commit_time else "SEQ",
                   qt.multiple_consumers, consumer.upper() if consumer and qt.multiple_consumers else None,
                   info.retention_time)


class _Raw:
    """A plain DB-API connection to a store with ``?`` placeholders on both backends."""

    def __init__(self, dsn: str) -> None:
        if dsn.startswith("sqlite:"):
            from ..store.sqlite import connect_plain

            path = sqlite_file(dsn)
            if path is None:
                raise ora(12154, "a pipeline needs a store file (sqlite:///file.db), not a temporary store")
            self.conn = connect_plain(path, timeout=30)   # (its catalog views call Sluice's functions)
            self.conn.execute("PRAGMA busy_timeout = 30000")
            self.pg = False
        else:
            import psycopg

            target = parse_dsn(dsn)
            self.conn = psycopg.connect(target.conninfo, autocommit=True,
                                        options=search_path_option(target.schema))
            self.pg = True

    def execute(self, sql: str, params: tuple | list = ()) -> Any:
        return self.conn.execute(sql.replace("?", "%s") if self.pg else sql, params)

    def begin(self) -> None:
        self.execute("BEGIN IMMEDIATE" if not self.pg else "BEGIN")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "_Raw":
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is not None:
            try:
                self.execute("ROLLBACK")
            except Exception:  # noqa: BLE001  (no transaction was open)
                pass
        self.close()


def open_raw(dsn: str) -> _Raw:
    return _Raw(dsn)


def _where(ref: QueueRef) -> tuple[str, list]:
    """The pipeline's READY records of the queue."""
    sql, params = "Q_NAME = ?", [ref.name]
    if ref.multi:
        sql += " AND CONSUMER_NAME = ?"
        params.append(ref.consumer)
    return sql + f" AND STATE = {C.MSG_READY}", params


def latest_position(raw: _Raw, ref: QueueRef, start: int, max_rows: int | None = None) -> int:
    """The end of the next range after ``start``: everything READY, or (``max_rows``) the
    position of the ``max_rows``-th record widened to its whole transaction."""
    where, params = _where(ref)
    col = ref.order
    if max_rows is None:
        # the last READY record, read backwards along the order index: MAX() over a queue table
        # without statistics (a fresh backlog) was planned as a read of every READY record --
        # 0.2 s per 200k on PostgreSQL, P5's last micro-batch (bench/RESULTS.md)
        row = raw.execute(f"SELECT {col} FROM {ref.table} WHERE {where} AND {col} IS NOT NULL "
                          f"ORDER BY {col} DESC LIMIT 1", params).fetchone()
        return max(start, row[0]) if row else start
    row = raw.execute(f"SELECT {col}, ENQ_TID FROM {ref.table} WHERE {where} AND {col} > ? "
                      f"ORDER BY {col}, SEQ LIMIT 1 OFFSET ?", [*params, start, max_rows - 1]).fetchone()
    if row is None:
        return latest_position(raw, ref, start)
    if col == "CSCN":
        return row[0]   # an SCN is one whole transaction already
    end = raw.execute(f"SELECT MAX(SEQ) FROM {ref.table} WHERE {where} AND ENQ_TID = ?",
                      [*params, row[1]]).fetchone()[0]
    return max(row[0], end or row[0])


def split_range(raw: _Raw, ref: QueueRef, start: int, end: int, parts: int) -> list[tuple[int, int]]:
    """``(start, end]`` cut into at most ``parts`` ranges of about equal record counts, each
    cut between two positions (so between transactions)."""
    if end <= start:
        return []
    where, params = _where(ref)
    col = ref.order
    count = raw.execute(f"SELECT COUNT(*) FROM {ref.table} WHERE {where} AND {col} > ? AND {col} <= ?",
                        [*params, start, end]).fetchone()[0]
    cuts = [start]
    for k in range(1, parts):
        row = raw.execute(f"SELECT {col} FROM {ref.table} WHERE {where} AND {col} > ? AND {col} <= ? "
                          f"ORDER BY {col}, SEQ LIMIT 1 OFFSET ?",
                          [*params, start, end, k * count // parts]).fetchone()
        if row is not None and cuts[-1] < row[0] < end:
            cuts.append(row[0])
    cuts.append(end)
    return list(zip(cuts, cuts[1:]))


def records(raw: _Raw, ref: QueueRef, low: int, high: int, fetch: int = 5000) -> Iterator[tuple]:
    """The READY records in ``(low, high]``, in position order (:data:`RECORD_FIELDS`)."""
    where, params = _where(ref)
    col = ref.order
    cur = raw.execute(f"SELECT {', '.join(RECORD_FIELDS)} FROM {ref.table} WHERE {where} "
                      f"AND {col} > ? AND {col} <= ? ORDER BY {col}, SEQ", [*params, low, high])
    while True:
        batch = cur.fetchmany(fetch)
        if not batch:
            return
        yield from batch


def browse(raw: _Raw, ref: QueueRef, low: int, high: int, fetch: int = 5000) -> Iterator[tuple]:
    """Every record of the queue (any state, any consumer) with ``low < SEQ <= high``."""
    cur = raw.execute(f"SELECT {', '.join(RECORD_FIELDS)} FROM {ref.table} WHERE Q_NAME = ? "
                      f"AND SEQ > ? AND SEQ <= ? ORDER BY SEQ", [ref.name, low, high])
    while True:
        batch = cur.fetchmany(fetch)
        if not batch:
            return
        yield from batch


def seq_bounds(raw: _Raw, ref: QueueRef) -> tuple[int, int]:
    row = raw.execute(f"SELECT MIN(SEQ), MAX(SEQ) FROM {ref.table} WHERE Q_NAME = ?", [ref.name]).fetchone()
    return (row[0] - 1, row[1]) if row and row[0] is not None else (0, 0)


def low_watermark(raw: _Raw, pipeline: str, lock: bool = False) -> int | None:
    """The pipeline's position (``lock``: its row locked until the transaction ends; SQLite's
    BEGIN IMMEDIATE has locked the store already)."""
    row = raw.execute("SELECT POSITION FROM SLUICE_PIPELINE_PROGRESS WHERE NAME = ?"
                      + (" FOR UPDATE" if lock and raw.pg else ""), [pipeline]).fetchone()
    return None if row is None else row[0]


def acknowledge(raw: _Raw, ref: QueueRef, pipeline: str, end: int) -> int:
    """Consume the pipeline's READY records up to ``end`` and set its low-watermark to
    ``end``, in one store transaction; returns how many records were consumed.  Called once
    the batch that read them has been committed by its sink, so a batch replayed after a
    failure still finds its records.

    Only the records after the low-watermark are looked at: those at or below it were
    consumed by the acknowledgement that set it (the same transaction), and a range without
    a lower bound walks every consumed record's index entry that VACUUM has not removed yet
    -- at 5,000 records a second, the queue's whole recent past, once per batch (twice: the
    runner acknowledges each batch when its progress is reported, Spark's commit of the
    source again when the next batch starts).  An acknowledgement up to the low-watermark or
    below changes nothing; the pipeline's progress row is locked first, so of two
    acknowledging at once the second sees the first's position."""
    where, params = _where(ref)
    now = time.time()
    raw.begin()
    try:
        current = low_watermark(raw, pipeline, lock=True)
        if current is not None and end <= current:     # a batch counts once, however often acknowledged
            raw.execute("COMMIT")
            return 0
        if current is not None:
            where, params = f"{where} AND {ref.order} > ?", [*params, current]
        if ref.retention == 0:
            n = raw.execute(f"DELETE FROM {ref.table} WHERE {where} AND {ref.order} <= ?", [*params, end]).rowcount
        else:
            purge_at = None if ref.retention < 0 else now + ref.retention
            n = raw.execute(f"UPDATE {ref.table} SET STATE = {C.MSG_PROCESSED}, DEQ_TIME = ?, DEQ_UID = ?, "
                            f"DEQ_AGENT_NAME = ?, TIME_MANAGER_INFO = ? WHERE {where} AND {ref.order} <= ?",
                            [now, "SLUICE_PIPELINE", pipeline, purge_at, *params, end]).rowcount
        _upsert(raw, pipeline, ref, {"POSITION": end})
        raw.execute("UPDATE SLUICE_PIPELINE_PROGRESS SET BATCHES = BATCHES + 1, "
                    "TOTAL_MESSAGES = TOTAL_MESSAGES + ? WHERE NAME = ?", [n, pipeline])
        raw.execute("COMMIT")
    except BaseException:
        raw.execute("ROLLBACK")
        raise
    return n


_FIGURES = ("LAST_BATCH_MESSAGES", "LAST_BATCH_TIME", "LAST_BATCH_SECONDS", "LAG_SECONDS",
            "MESSAGES_PER_SECOND", "STATE", "LAST_ERROR", "UI_URL", "CHECKPOINT", "STARTED", "POSITION")


def _upsert(raw: _Raw, pipeline: str, ref: QueueRef | None, values: dict[str, Any]) -> None:
    bad = set(values) - set(_FIGURES)
    if bad:
        raise ValueError(f"not a pipeline figure: {sorted(bad)}")
    cols = list(values)
    sets = ", ".join(f"{c} = ?" for c in cols)
    if raw.execute(f"UPDATE SLUICE_PIPELINE_PROGRESS SET {sets} WHERE NAME = ?",
                   [*values.values(), pipeline]).rowcount == 0:
        raw.execute(f"INSERT INTO SLUICE_PIPELINE_PROGRESS (NAME, QUEUE, CONSUMER_NAME"
                    f"{''.join(', ' + c for c in cols)}) VALUES (?, ?, ?{', ?' * len(cols)})",
                    [pipeline, ref.qualified if ref else "", ref.consumer if ref else None, *values.values()])


def record_figures(dsn: str, pipeline: str, ref: QueueRef | None, **values: Any) -> None:
    """Write the runner's figures for ``sluice pipeline status`` (its own transaction)."""
    with open_raw(dsn) as raw:
        raw.begin()
        _upsert(raw, pipeline, ref, {k.upper(): v for k, v in values.items()})
        raw.execute("COMMIT")


def progress_rows(dsn: str, pipeline: str | None = None) -> tuple[list[str], list[tuple]]:
    """``SLUICE_PIPELINE_PROGRESS`` rows (one pipeline's, or all)."""
    with open_raw(dsn) as raw:
        sql = "SELECT * FROM SLUICE_PIPELINE_PROGRESS"
        cur = raw.execute(sql + " WHERE NAME = ?", [pipeline]) if pipeline else raw.execute(sql + " ORDER BY NAME")
        rows = cur.fetchall()
        return [d[0].upper() for d in cur.description], rows


def set_position(c: Any, pipeline: str, queue: str, position: int) -> None:
    """Record ``position`` as ``pipeline``'s in the store ``c`` writes to (a destination's
    record of what it received; ``c``: any connection speaking the store's ``?`` SQL, such
    as the one ``StoreSession.add_commit_work`` hands out, so it commits with the effect)."""
    c.execute("INSERT INTO SLUICE_PIPELINE_PROGRESS (NAME, QUEUE, POSITION) VALUES (?, ?, ?) "
              "ON CONFLICT (NAME) DO UPDATE SET POSITION = excluded.POSITION", (pipeline, queue, position))
