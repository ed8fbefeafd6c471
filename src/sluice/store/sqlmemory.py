"""This process's buffered messages in a user's query of ``AQ$<queue_table>``.

Buffered messages live in the process's memory (``sluice.aq.buffered``), not in the
queue table, yet seed 003 shows them in the ``AQ$`` view with state IN-MEMORY.  For a
query naming the view of a queue table that has such messages, the session copies them
into a temporary table of its own connection and points the query at a temporary
view: the permanent view's query over the queue table UNION ALL that copy.  Temporary
objects are the connection's alone, so concurrent sessions never see each other's.
The caller (the connection) hands the records down: the store never reaches into the
AQ layer.
"""

from __future__ import annotations

import operator
from typing import Callable, Iterable

from .base import RECORD_COLUMNS, MessageRecord, QueueTableInfo
from .sqlschema import (BUFFERED_SPILLED, BUFFERED_SUBSCRIBER_COUNTS, QUEUE_DEPTH_VIEW, aq_view_select,
                        buffered_subscriber_types, buffered_views, physical, quote, table_name)

_VALUES = operator.attrgetter(*(c.lower() for c in RECORD_COLUMNS))
_COLUMNS = ", ".join(RECORD_COLUMNS)


class InMemory(list):
    """``(queue table, records)`` of this process's buffered messages in memory, with its
    cumulative counts for V$BUFFERED_QUEUES: ``cumulative`` maps ``OWNER.NAME`` to
    (messages enqueued, messages spilled) since ``started`` (the process's buffered pool
    began: STARTUP_TIME), and for V$BUFFERED_SUBSCRIBERS ``subscribers`` maps
    (``OWNER.NAME``, consumer, address) to the pool's counts of it (``buffered._counts``'
    places).  True while it has any, and always with ``always`` (a query of
    V$BUFFERED_SUBSCRIBERS: its OLDEST_MSGID is looked up in the queue tables)."""

    def __init__(self, tables: Iterable[tuple[QueueTableInfo, list[MessageRecord]]],
                 cumulative: dict[str, tuple[int, int]], started: float | None,
                 subscribers: dict[tuple, tuple] | None = None, always: bool = False) -> None:
        super().__init__(tables)
        self.cumulative = cumulative
        self.started = started
        self.subscribers = subscribers or {}
        self.always = always

    def __bool__(self) -> bool:
        return self.always or bool(self.cumulative) or bool(self.subscribers) or len(self) > 0


def memory_views(execute: Callable[[str, tuple], object], executemany: Callable[[str, list], object],
                 d, in_memory: Iterable[tuple[QueueTableInfo, list[MessageRecord]]],
                 known: dict[tuple[str, str], str], sql: str = "", user: str = "") -> list[str]:
    """Create (or refresh) the temporary table and view of each queue table in
    ``in_memory`` whose ``AQ$`` view ``sql`` names and map that name to the temporary
    view in ``known`` (see :func:`sqlnames.rewrite`); when ``sql`` names V$BUFFERED_QUEUES
    or V$BUFFERED_SUBSCRIBERS, temporary ones of those that count the in-memory messages
    too (:func:`buffered_memory_views`).  ``execute``/``executemany`` run SQL with ``?``
    placeholders on the session's connection.  Returns the DROP statements of what it
    made over a queue table, for the caller to run once the query is read: PostgreSQL
    ties a view to its tables, and a temporary view left behind in any connection would
    refuse DROP_QUEUE_TABLE (ORA-00900 "other objects depend on it") until it closed."""
    cumulative = in_memory if isinstance(in_memory, InMemory) else None
    in_memory = list(in_memory)
    upper = sql.upper()
    if "V$BUFFERED_" in upper:
        buffered_memory_views(execute, executemany, d, in_memory, known, user, cumulative,
                              "V$BUFFERED_SUBSCRIBERS" in upper)
    temp = "temp" if d.name == "sqlite" else "pg_temp"
    drops: list[str] = []
    for qt, records in in_memory:
        if not records or (sql and f"AQ${qt.name}" not in upper):
            continue
        base = f"{qt.owner}.{qt.name}"
        copy = f"{temp}.{quote(physical(base + '$INMEMORY'))}"
        view = f"{temp}.{quote(physical(base + '$AQVIEW'))}"
        # made anew each time: the queue table may have been dropped, re-created or upgraded
        execute(f"DROP VIEW IF EXISTS {view}", ())
        execute(f"DROP TABLE IF EXISTS {copy}", ())
        execute(f"CREATE TEMPORARY TABLE {copy.split('.', 1)[1]} AS "
                f"SELECT * FROM {table_name(qt)} WHERE 1 = 0", ())
        executemany(f"INSERT INTO {copy} ({_COLUMNS}) VALUES ({', '.join('?' * len(RECORD_COLUMNS))})",
                    [_VALUES(r) for r in records])
        source = (f"(SELECT q.*, 0 AS IN_MEMORY FROM {table_name(qt)} q "
                  f"UNION ALL SELECT m.*, 1 AS IN_MEMORY FROM {copy} m) AS s")
        execute(f"CREATE TEMPORARY VIEW {view.split('.', 1)[1]} AS "
                f"{aq_view_select(qt, d, source, in_memory=True)}", ())
        known[(qt.owner, "AQ$" + qt.name)] = view
        drops += [f"DROP VIEW IF EXISTS {view}", f"DROP TABLE IF EXISTS {copy}"]
    return drops


def buffered_memory_views(execute, executemany, d, in_memory: list[tuple[QueueTableInfo, list[MessageRecord]]],
                          known: dict[tuple[str, str], str], user: str,
                          cumulative: InMemory | None = None, subscribers: bool = True) -> None:
    """V$BUFFERED_QUEUES / V$BUFFERED_SUBSCRIBERS for this session: what is spilled plus
    this process's in-memory messages, counted into a temporary table shaped like the
    views' source (sqlschema.buffered_views), and the process's cumulative counts
    (``cumulative``) in others; with ``subscribers`` (the query names
    V$BUFFERED_SUBSCRIBERS) each subscriber's oldest message's id too."""
    temp = "temp" if d.name == "sqlite" else "pg_temp"
    counts: dict[tuple, list] = {}
    firsts: set[tuple] = set()
    # (owner, queue, consumer, address) -> (enqueue time, msgid) of the oldest READY message
    oldest = _oldest_spilled(execute) if subscribers else {}
    for qt, records in in_memory:
        for r in records:
            c = counts.setdefault((qt.qt_id, qt.owner, r.q_name, r.consumer_name, r.address, r.state),
                                  [0, None, 0, 0.0])
            c[0] += 1
            c[1] = r.enq_time if c[1] is None else min(c[1], r.enq_time)
            c[3] += r.enq_time
            message = (qt.qt_id, r.q_name, r.msgid, r.state)
            if message not in firsts:   # a message once, in its first record's row (MESSAGES)
                firsts.add(message)
                c[2] += 1
            if r.state == 0:    # READY: OLDEST_MSGID, as OLDEST_MSG_ENQTM (a tie: the spilled one)
                key = (qt.owner, r.q_name, r.consumer_name, r.address)
                known_oldest = oldest.get(key)
                if known_oldest is None or r.enq_time < known_oldest[0]:
                    oldest[key] = (r.enq_time, r.msgid)
    table, totals, subs = "SLUICE_BUFFERED_MEMORY", "SLUICE_BUFFERED_CUMULATIVE", "SLUICE_BUFFERED_SUBSCRIBERS"
    views = [(name, body, quote(name + "$SESSION"))
             for name, body in buffered_views(d, "{source}", "{totals}", "{subscribers}")]
    for _, _, temp_name in views:    # made anew each time, the views first (they use the tables)
        execute(f"DROP VIEW IF EXISTS {temp}.{temp_name}", ())
    for name in (table, totals, subs):
        execute(f"DROP TABLE IF EXISTS {temp}.{name}", ())
    execute(f"CREATE TEMPORARY TABLE {table} (QT_ID {d.int_type}, OWNER TEXT, QUEUE_NAME TEXT, "
            f"CONSUMER_NAME TEXT, ADDRESS TEXT, STATE {d.int_type}, MSGS {d.int_type}, "
            f"OLDEST_ENQ_TIME {d.real_type}, MESSAGES {d.int_type}, SUM_ENQ_TIME {d.real_type}, "
            f"IN_MEMORY {d.int_type})", ())
    execute(f"CREATE TEMPORARY TABLE {totals} (OWNER TEXT, QUEUE_NAME TEXT, CNUM_MSGS {d.int_type}, "
            f"CSPILL_MSGS {d.int_type}, STARTUP_TIME {d.real_type})", ())
    types = buffered_subscriber_types(d)
    execute(f"CREATE TEMPORARY TABLE {subs} (OWNER TEXT, QUEUE_NAME TEXT, CONSUMER_NAME TEXT, ADDRESS TEXT, "
            f"{', '.join(f'{c} {t}' for c, t in types.items())})", ())
    if counts:
        executemany(f"INSERT INTO {temp}.{table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                    [k + tuple(v) for k, v in counts.items()])
    if cumulative is not None and cumulative.cumulative:
        executemany(f"INSERT INTO {temp}.{totals} VALUES (?, ?, ?, ?, ?)",
                    [(*qname.split(".", 1), enq, spilled, cumulative.started)
                     for qname, (enq, spilled) in cumulative.cumulative.items()])
    rows = _subscriber_rows(cumulative, oldest)
    if rows:
        executemany(f"INSERT INTO {temp}.{subs} VALUES ({', '.join('?' * (4 + len(types)))})", rows)
    source = (f"(SELECT * FROM {BUFFERED_SPILLED} S UNION ALL "
              f"SELECT QT_ID, OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, MSGS, OLDEST_ENQ_TIME, "
              f"MESSAGES, IN_MEMORY, SUM_ENQ_TIME FROM {temp}.{table})")
    for name, body, temp_name in views:
        body = body.replace("{source}", source).replace("{totals}", f"{temp}.{totals}")
        execute(f"CREATE TEMPORARY VIEW {temp_name} AS {body.replace('{subscribers}', f'{temp}.{subs}')}", ())
        known[(user, name)] = f"{temp}.{temp_name}"
        known[("SYS", name)] = f"{temp}.{temp_name}"


def _oldest_spilled(execute) -> dict[tuple, tuple[float, bytes]]:
    """(owner, queue, consumer, address) -> (enqueue time, msgid) of the subscriber's oldest
    READY buffered message in the queue tables (spilled, by any process): the depth view
    says which subscribers have one, their tables which message it is."""
    groups = execute(f"SELECT T.OWNER, T.NAME, D.QUEUE_NAME, D.CONSUMER_NAME, D.ADDRESS, D.OLDEST_ENQ_TIME "
                     f"FROM {QUEUE_DEPTH_VIEW} D JOIN AQ_QUEUE_TABLES T ON T.QT_ID = D.QT_ID "
                     f"WHERE D.DELIVERY_MODE = 2 AND D.STATE = 0", ()).fetchall()
    oldest = {}
    for owner, qt_name, q_name, consumer, address, enq_time in groups:
        table = quote(physical(f"{owner}.{qt_name}"))
        row = execute(f"SELECT MSGID FROM {table} WHERE Q_NAME = ? AND DELIVERY_MODE = 2 AND STATE = 0 "
                      f"AND COALESCE(CONSUMER_NAME, '') = ? AND COALESCE(ADDRESS, '') = ? "
                      f"ORDER BY ENQ_TIME, SEQ LIMIT 1", (q_name, consumer or "", address or "")).fetchone()
        if row is not None:
            oldest[(owner, q_name, consumer, address)] = (enq_time, bytes(row[0]))
    return oldest


def _subscriber_rows(cumulative: "InMemory | None", oldest: dict[tuple, tuple[float, bytes]]) -> list[tuple]:
    """The rows of the subscribers' counts (see sqlschema.buffered_views): the pool's (times
    in hundredths of a second, as Oracle shows them) and the oldest message's id."""
    rows = {}
    for (qname, consumer, address), c in (cumulative.subscribers.items() if cumulative is not None else ()):
        cnum, dequeued, last, elapsed, cpu, *nums = c
        owner, name = qname.split(".", 1)
        rows[(owner, name, consumer, address)] = [cnum, dequeued, last, round(elapsed * 100), round(cpu * 100),
                                                  *nums, cumulative.started, None]
    width = len(BUFFERED_SUBSCRIBER_COUNTS)
    for key, (_, msgid) in oldest.items():
        row = rows.get(key)
        if row is None:    # (another process's spilled messages: no counts of this one's)
            row = rows[key] = [None] * width
        row[-1] = msgid
    return [(*key, *row) for key, row in rows.items()]
