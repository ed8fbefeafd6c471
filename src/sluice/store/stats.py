"""How many messages were enqueued into and dequeued from each queue: the store's totals,
whatever process moved them (V$PERSISTENT_QUEUES' ENQUEUED_MSGS / DEQUEUED_MSGS, the
monitoring snapshot, /metrics, the dashboard's queue cards).

A session counts what its transaction enqueues and dequeues in memory
(:class:`QueueCounts`) and writes it in the same transaction as the messages: one
statement sent with the COMMIT (:meth:`QueueCounts.pg_sql`, :data:`SQLITE_UPSERT`), so a
rollback counts nothing and a commit counts everything it moved.  The counts go to
SLUICE_QUEUE_STATS rows keyed by queue **and writer** — on PostgreSQL the server process
(``pg_backend_pid()``): two sessions never write the same row, so no enqueue waits for
another's counter (a single row per queue would be a lock every committing enqueuer
queues on).  SQLite has one writer at a time anyway: one row per queue (SID 0).  The view
sums the rows.  Rows of server processes that have ended are folded into SID 0 when a
session closes (:data:`FOLD_SQL`), so their number stays that of the live writers.  A
synchronous capture's triggers, which enqueue without a session, count each LCR they
enqueue in the writer's transaction the same way (:func:`captured_sql`).

What is counted, as Oracle counts it: an enqueue is one message however many recipients
it has; a dequeue is one recipient's removing dequeue (REMOVE / REMOVE_NODATA; browsing
and locking take nothing).  Only persistent messages: a buffered one spilling to the
queue table, or dequeued from there, is none (V$BUFFERED_QUEUES counts those).  Oracle
documents DEQUEUED_MSGS of a multi-consumer message as counted once, after its last
recipient and the retention time — Sluice counts each recipient's dequeue when it
commits (what a dequeue rate wants; DESIGN-NOTES).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .base import MessageRecord, QueueInfo

STATS_TABLE = "SLUICE_QUEUE_STATS"
_BUFFERED = 2       # MessageRecord.delivery_mode of a spilled buffered message

_COLUMNS = ("QID, SID, ENQUEUED_MSGS, DEQUEUED_MSGS, FIRST_ACTIVITY_TIME, LAST_ENQUEUE_TIME, "
            "LAST_DEQUEUE_TIME")
_ADD = (f" ON CONFLICT (QID, SID) DO UPDATE SET "
        f"ENQUEUED_MSGS = {STATS_TABLE}.ENQUEUED_MSGS + excluded.ENQUEUED_MSGS, "
        f"DEQUEUED_MSGS = {STATS_TABLE}.DEQUEUED_MSGS + excluded.DEQUEUED_MSGS, "
        f"LAST_ENQUEUE_TIME = COALESCE(excluded.LAST_ENQUEUE_TIME, {STATS_TABLE}.LAST_ENQUEUE_TIME), "
        f"LAST_DEQUEUE_TIME = COALESCE(excluded.LAST_DEQUEUE_TIME, {STATS_TABLE}.LAST_DEQUEUE_TIME)")

# PostgreSQL: the rows of server processes no longer running, added into SID 0 (one
# statement; a process whose id the server gave again since is running: its row stays)
FOLD_SQL = (f"WITH gone AS (DELETE FROM {STATS_TABLE} WHERE SID <> 0 AND SID NOT IN "
            "(SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL) RETURNING *) "
            f"INSERT INTO {STATS_TABLE} ({_COLUMNS}) SELECT QID, 0, SUM(ENQUEUED_MSGS), "
            "SUM(DEQUEUED_MSGS), MIN(FIRST_ACTIVITY_TIME), MAX(LAST_ENQUEUE_TIME), "
            "MAX(LAST_DEQUEUE_TIME) FROM gone GROUP BY QID" + _ADD
            + f", FIRST_ACTIVITY_TIME = LEAST(excluded.FIRST_ACTIVITY_TIME, {STATS_TABLE}.FIRST_ACTIVITY_TIME)")


class QueueCounts:
    """What the open transaction of one session enqueued and dequeued, by queue id."""

    __slots__ = ("by_qid",)

    def __init__(self) -> None:
        self.by_qid: dict[int, list[int]] = {}

    def enqueued(self, queue: "QueueInfo", records: Sequence["MessageRecord"]) -> None:
        if records and records[0].delivery_mode == _BUFFERED:
            return      # buffered messages spilling: not persistent ones (one call, one mode)
        # a multi-consumer message is a record per recipient: one message all the same
        n = len({r.msgid for r in records}) if queue.table.multiple_consumers else len(records)
        c = self.by_qid.get(queue.qid)
        if c is None:
            self.by_qid[queue.qid] = [n, 0]
        else:
            c[0] += n

    def dequeued(self, queue: "QueueInfo", records: Sequence["MessageRecord"]) -> None:
        # (spilled buffered messages left out)
        n = len(records) - [r.delivery_mode for r in records].count(_BUFFERED)
        if n:
            c = self.by_qid.get(queue.qid)
            if c is None:
                self.by_qid[queue.qid] = [0, n]
            else:
                c[1] += n

    def saved(self) -> dict[int, list[int]]:
        """A copy for a savepoint (:meth:`restore`)."""
        return {k: list(v) for k, v in self.by_qid.items()}

    def restore(self, saved: dict[int, list[int]]) -> None:
        self.by_qid = {k: list(v) for k, v in saved.items()}

    def clear(self) -> None:
        if self.by_qid:
            self.by_qid = {}

    def pg_sql(self, now: float) -> str | None:
        """PostgreSQL: one UPSERT adding these counts to the server process's rows, values
        as literals (integers and a float: it travels with the COMMIT in one simple query);
        None: nothing to add."""
        if not self.by_qid:
            return None
        t = repr(float(now))
        rows = ", ".join(f"({int(qid)}, pg_backend_pid(), {int(e)}, {int(d)}, {t}, "
                         f"{t if e else 'NULL'}, {t if d else 'NULL'})"
                         for qid, (e, d) in sorted(self.by_qid.items()))
        return f"INSERT INTO {STATS_TABLE} ({_COLUMNS}) VALUES {rows}{_ADD}"

    def sqlite_rows(self, now: float) -> list[tuple]:
        """SQLite: the parameters of :data:`SQLITE_UPSERT` adding these counts (one
        statement text, prepared once per connection)."""
        return [(qid, e, d, now, now if e else None, now if d else None)
                for qid, (e, d) in sorted(self.by_qid.items())]


SQLITE_UPSERT = f"INSERT INTO {STATS_TABLE} ({_COLUMNS}) VALUES (?, 0, ?, ?, ?, ?, ?){_ADD}"


def captured_sql(stats: str, qid: str, sid: str, count: str, now: str, source: str = "") -> str:
    """The statement a synchronous capture's trigger adds ``count`` messages enqueued into
    the queue ``qid`` with, in the writer's transaction, so the count is exact as a
    session's is (all four SQL expressions).  ``stats``: SLUICE_QUEUE_STATS as the trigger
    names it (PostgreSQL: schema-qualified); ``sid``: the writer's row; ``now``: the
    trigger's clock (epoch seconds); ``source``: a ``FROM … WHERE …`` giving one row when
    there is something to add."""
    return (f"INSERT INTO {stats} ({_COLUMNS}) SELECT {qid}, {sid}, {count}, 0, {now}, {now}, NULL "
            f"{source}{_ADD}")


def counted(queue: "QueueInfo", records: Sequence["MessageRecord"], enqueued: bool) -> QueueCounts:
    """The counts of one IMMEDIATE enqueue (``enqueued``) or dequeue of ``records``, a
    transaction of its own."""
    counts = QueueCounts()
    (counts.enqueued if enqueued else counts.dequeued)(queue, records)
    return counts
