"""Message SQL shared by the SQL backends: one function per store operation.

Every function takes an open DB-API connection already inside the right
transaction and uses ``?`` placeholders (a backend whose driver wants another
style converts them).  The semantics — which messages qualify, in which
order, what a failed attempt or an expiry does — live here once, so the
backends differ only in transaction and locking mechanics.
"""

from __future__ import annotations

import json
import operator
from typing import Callable, Iterable

from .. import constants as C
from .base import RECORD_COLUMNS, MessageRecord, QueueInfo, QueueTableInfo, Selector
from .sqlschema import table_name

_SELECT_LIST = ", ".join(RECORD_COLUMNS)

# Insert only what a batch uses.  Python's sqlite3 pays for every bound parameter of
# every row, and most of a message's 30 columns are NULL or default, so: the queue name
# and user are literals of the statement, six columns are bound for every row, and an
# optional column is bound only when some message of the batch has a value for it.
_ALWAYS = ("MSGID", "PRIORITY", "STATE", "ENQ_TIME", "ENQ_TID", "USER_DATA")
_DEFAULTS = {"RETRY_COUNT": 0, "DELIVERY_MODE": 1}
_OPTIONAL = tuple(c for c in RECORD_COLUMNS[1:] if c not in _ALWAYS + ("Q_NAME", "ENQ_UID"))
_ALWAYS_GET = operator.attrgetter(*(c.lower() for c in _ALWAYS))
_OPTIONAL_GET = operator.attrgetter(*(c.lower() for c in _OPTIONAL))
_OPTIONAL_DEFAULT = tuple(_DEFAULTS.get(c) for c in _OPTIONAL)
_INSERT_SQL_CACHE: dict[tuple, str] = {}

FindQueue = Callable[[str, str], "QueueInfo | None"]


def _literal(text: str | None) -> str:
    return "NULL" if text is None else "'" + text.replace("'", "''") + "'"


def insert_records(conn, qt: QueueTableInfo, records: list[MessageRecord], cscn: int | None) -> None:
    """Insert ``records`` into the queue table (commit-time tables get ``cscn``)."""
    if cscn is not None:
        for r in records:
            r.cscn = cscn
    groups: dict[tuple, list[MessageRecord]] = {}
    for r in records:
        groups.setdefault((r.q_name, r.enq_uid), []).append(r)
    t = table_name(qt)
    for (q_name, uid), recs in groups.items():
        optional = [_OPTIONAL_GET(r) for r in recs]
        used_set: set[int] = set()
        for o in optional:
            if o != _OPTIONAL_DEFAULT:  # the common case is one tuple comparison
                used_set.update(i for i, (v, d) in enumerate(zip(o, _OPTIONAL_DEFAULT)) if v != d)
        used = tuple(sorted(used_set))
        key = (t, q_name, uid, used)
        sql = _INSERT_SQL_CACHE.get(key)
        if sql is None:
            cols = ("Q_NAME", "ENQ_UID") + _ALWAYS + tuple(_OPTIONAL[i] for i in used)
            marks = ", ".join("?" * (len(cols) - 2))
            sql = (f"INSERT INTO {t} ({', '.join(cols)}) "
                   f"VALUES ({_literal(q_name)}, {_literal(uid)}, {marks})")
            _INSERT_SQL_CACHE[key] = sql
        if used:
            rows = [_ALWAYS_GET(r) + tuple(o[i] for i in used) for r, o in zip(recs, optional)]
        else:
            rows = [_ALWAYS_GET(r) for r in recs]
        if len(rows) == 1:
            conn.execute(sql, rows[0])
        else:
            conn.executemany(sql, rows)


def order_key(qt: QueueTableInfo, rec: MessageRecord) -> tuple:
    """The record's position in the queue's dequeue order."""
    return tuple(getattr(rec, c.lower()) for c in qt.order_columns)


_SELECT_SQL_CACHE: dict[tuple, str] = {}


def select_candidates(conn, queue: QueueInfo, sel: Selector, now: float, after: tuple | None,
                      limit: int) -> list[MessageRecord]:
    """Committed messages of ``queue`` matching the SQL part of ``sel``, in dequeue order,
    strictly after ``after``; READY messages past their expiration are left out."""
    qt = queue.table
    live = C.MSG_READY in sel.states or C.MSG_WAITING in sel.states
    shape = (qt.qt_id, qt.name, qt.owner, qt.sort_list, len(sel.states), live, sel.msgid is not None,
             sel.correlation is not None, sel.group is not None, after is not None, limit)
    sql = _SELECT_SQL_CACHE.get(shape)
    if sql is None:
        sql = _select_sql(qt, shape)
        _SELECT_SQL_CACHE[shape] = sql
    params: list = [queue.name, *sel.states]
    if live:
        params.append(now)
    if sel.msgid is not None:
        params.append(sel.msgid)
    if sel.correlation is not None:
        params.append(sel.correlation)
    if sel.group is not None:
        params.append(sel.group)
    if after is not None:
        params.extend(after)
    return [MessageRecord(*row) for row in conn.execute(sql, params)]


def _select_sql(qt: QueueTableInfo, shape: tuple) -> str:
    _, _, _, _, n_states, live, by_msgid, by_corr, by_group, has_after, limit = shape
    where = ["Q_NAME = ?", "STATE = ?" if n_states == 1 else f"STATE IN ({', '.join('?' * n_states)})"]
    if live:
        where.append("(EXPIRE_AT IS NULL OR EXPIRE_AT > ? OR STATE = 3)")
    if by_msgid:
        where.append("MSGID = ?")
    if by_corr:
        where.append("CORRID LIKE ?")
    if by_group:
        where.append("ENQ_TID = ?")
    cols = qt.order_columns
    if has_after:
        where.append(f"({', '.join(cols)}) > ({', '.join('?' * len(cols))})")
    return (f"SELECT {_SELECT_LIST} FROM {table_name(qt)} WHERE {' AND '.join(where)} "
            f"ORDER BY {', '.join(cols)} LIMIT {int(limit)}")


def still_available(conn, queue: QueueInfo, seqs: list[int], states: Iterable[int]) -> set[int]:
    """Which of ``seqs`` are still in ``queue`` in one of ``states`` (after locking)."""
    if not seqs:
        return set()
    st = tuple(states)
    sql = (f"SELECT SEQ FROM {table_name(queue.table)} WHERE Q_NAME = ? "
           f"AND STATE IN ({', '.join('?' * len(st))}) AND SEQ IN ({', '.join('?' * len(seqs))})")
    return {r[0] for r in conn.execute(sql, [queue.name, *st, *seqs])}


def consume(conn, queue: QueueInfo, records: list[MessageRecord], user: str, agent: str | None,
            consumer: str | None, txn: str | None, now: float) -> None:
    """Finish REMOVE dequeues: delete, or keep as PROCESSED for the retention time."""
    t = table_name(queue.table)
    if queue.retention_time == 0:
        if len(records) == 1:
            conn.execute(f"DELETE FROM {t} WHERE SEQ = ? AND Q_NAME = ?", (records[0].seq, queue.name))
        else:  # one statement for the batch: the sequence numbers as a JSON array
            conn.execute(f"DELETE FROM {t} WHERE SEQ IN (SELECT value FROM json_each(?)) AND Q_NAME = ?",
                         (json.dumps([r.seq for r in records]), queue.name))
        return
    purge_at = None if queue.retention_time < 0 else now + queue.retention_time
    conn.executemany(
        f"UPDATE {t} SET STATE = 2, DEQ_TIME = ?, DEQ_UID = ?, DEQ_TID = ?, CONSUMER_NAME = ?, "
        f"DEQ_AGENT_NAME = ?, TIME_MANAGER_INFO = ? WHERE SEQ = ? AND Q_NAME = ?",
        [(now, user, txn, consumer, agent, purge_at, r.seq, queue.name) for r in records])


def failed_attempt(conn, queue: QueueInfo, seq: int, now: float, find_queue: FindQueue) -> None:
    """A REMOVE dequeue was rolled back: count the attempt, apply max_retries / retry_delay."""
    t = table_name(queue.table)
    row = conn.execute(f"SELECT RETRY_COUNT FROM {t} WHERE SEQ = ? AND Q_NAME = ?",
                       (seq, queue.name)).fetchone()
    if row is None:
        return
    count = row[0] + 1
    if count > queue.max_retries and not queue.is_exception_queue:
        conn.execute(f"UPDATE {t} SET RETRY_COUNT = ? WHERE SEQ = ?", (count, seq))
        move_to_exception_queue(conn, queue, [seq], "MAX_RETRY_EXCEEDED", find_queue)
    elif queue.retry_delay > 0:
        until = now + queue.retry_delay
        conn.execute(f"UPDATE {t} SET RETRY_COUNT = ?, STATE = 1, DELAY = ?, TIME_MANAGER_INFO = ? "
                     f"WHERE SEQ = ?", (count, until, until, seq))
    else:
        conn.execute(f"UPDATE {t} SET RETRY_COUNT = ? WHERE SEQ = ?", (count, seq))


def exception_queue_for(queue: QueueInfo, exc_schema: str | None, exc_name: str | None,
                        find_queue: FindQueue) -> QueueInfo:
    """The message's own exception queue if it still exists, else the table's default."""
    if exc_name:
        q = find_queue(exc_schema or queue.owner, exc_name)
        if q is not None:
            return q
    q = find_queue(queue.owner, queue.table.exception_queue_name)
    if q is None:  # the default exception queue is dropped only with its table
        raise RuntimeError(f"default exception queue of {queue.table.qualified} is missing")
    return q


def move_to_exception_queue(conn, queue: QueueInfo, seqs: list[int], reason: str,
                            find_queue: FindQueue) -> int:
    """Move messages of ``queue`` to their exception queues with state EXPIRED."""
    t = table_name(queue.table)
    moved = 0
    for seq in seqs:
        row = conn.execute(f"SELECT EXCEPTION_QSCHEMA, EXCEPTION_QUEUE FROM {t} "
                           f"WHERE SEQ = ? AND Q_NAME = ? AND STATE IN (0, 1)",
                           (seq, queue.name)).fetchone()
        if row is None:
            continue
        target = exception_queue_for(queue, row[0], row[1], find_queue)
        sets = ("Q_NAME = ?, STATE = 3, EXPIRATION_REASON = ?, ORIGINAL_QUEUE_NAME = ?, "
                "ORIGINAL_QUEUE_OWNER = ?, TIME_MANAGER_INFO = NULL")
        args = [target.name, reason, queue.name, queue.owner]
        if target.table.qt_id == queue.table.qt_id:
            conn.execute(f"UPDATE {t} SET {sets} WHERE SEQ = ?", (*args, seq))
        else:  # an exception queue in another queue table of the same payload type
            rec = MessageRecord(*conn.execute(f"SELECT {_SELECT_LIST} FROM {t} WHERE SEQ = ?",
                                              (seq,)).fetchone())
            rec.q_name, rec.state, rec.expiration_reason = target.name, C.MSG_EXPIRED, reason
            rec.original_queue_name, rec.original_queue_owner = queue.name, queue.owner
            rec.time_manager_info = None
            insert_records(conn, target.table, [rec], rec.cscn)
            conn.execute(f"DELETE FROM {t} WHERE SEQ = ?", (seq,))
        moved += 1
    return moved


def due_records(conn, qt: QueueTableInfo, now: float, limit: int = 1000) -> list[tuple]:
    """``(SEQ, STATE, Q_NAME)`` of records whose time-manager event is due."""
    return list(conn.execute(
        f"SELECT SEQ, STATE, Q_NAME FROM {table_name(qt)} WHERE TIME_MANAGER_INFO <= ? "
        f"ORDER BY TIME_MANAGER_INFO LIMIT {int(limit)}", (now,)))


def promote(conn, qt: QueueTableInfo, seq: int) -> int:
    """WAITING -> READY; from now on the record's next event is its expiry."""
    cur = conn.execute(f"UPDATE {table_name(qt)} SET STATE = 0, TIME_MANAGER_INFO = EXPIRE_AT "
                       f"WHERE SEQ = ? AND STATE = 1", (seq,))
    return cur.rowcount


def purge(conn, qt: QueueTableInfo, seq: int, now: float) -> int:
    cur = conn.execute(f"DELETE FROM {table_name(qt)} WHERE SEQ = ? AND STATE = 2 "
                       f"AND TIME_MANAGER_INFO <= ?", (seq, now))
    return cur.rowcount


def next_due(conn, qt: QueueTableInfo) -> float | None:
    row = conn.execute(f"SELECT MIN(TIME_MANAGER_INFO) FROM {table_name(qt)} "
                       f"WHERE TIME_MANAGER_INFO IS NOT NULL").fetchone()
    return row[0] if row else None


def message_status(conn, queue: QueueInfo, msgid: bytes) -> tuple[int, int] | None:
    row = conn.execute(f"SELECT STATE, SEQ FROM {table_name(queue.table)} WHERE MSGID = ? AND Q_NAME = ?",
                       (msgid, queue.name)).fetchone()
    return (row[0], row[1]) if row else None


def count(conn, queue: QueueInfo, states: Iterable[int] | None) -> int:
    sql = f"SELECT COUNT(*) FROM {table_name(queue.table)} WHERE Q_NAME = ?"
    params: list = [queue.name]
    if states is not None:
        st = tuple(states)
        sql += f" AND STATE IN ({', '.join('?' * len(st))})"
        params.extend(st)
    return conn.execute(sql, params).fetchone()[0]
