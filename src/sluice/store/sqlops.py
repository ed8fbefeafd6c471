"""Message SQL shared by the SQL backends: one function per store operation.

Every function takes an open DB-API-like connection already inside the right
transaction: ``execute``/``executemany`` with ``?`` placeholders (a backend whose
driver wants another style converts them) and a ``dialect`` attribute (a
:class:`~.dialect.Dialect`) for the few spellings that differ.  The semantics —
which messages qualify, in which order, what a failed attempt or an expiry does
— live here once, so the backends differ only in transaction and locking
mechanics: SQLite locks messages outside the data (``lock=False`` here, see
:mod:`.locks`), PostgreSQL with ``FOR UPDATE SKIP LOCKED`` (``lock=True``).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Callable, Iterable, Sequence

from .. import constants as C
from .base import RECORD_COLUMNS, MessageRecord, QueueInfo, QueueTableInfo, Selector, TimeEvents
from . import sqlnotify
from .sqlschema import column_type, table_name

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

# _BY_KEY: statements that address messages by SEQ or MSGID name no other indexed column
# (the queue and state are checked on the row).  PostgreSQL plans prepared statements
# generically, and on a young queue table without statistics it may otherwise walk the
# (Q_NAME, STATE, …) order index — every message of the queue — for one key.


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
        optional = list(map(_OPTIONAL_GET, recs))
        # column by column, counted in C: a column is used unless all are its default (no
        # hashing of each record's optional values: a propagated batch's all differ, by
        # their ORIGINAL_MSGID)
        optional_columns = list(zip(*optional))
        n = len(recs)
        used: tuple[int, ...] = tuple(i for i, (col, dflt) in enumerate(zip(optional_columns, _OPTIONAL_DEFAULT))
                                      if col.count(dflt) != n)
        d = conn.dialect
        bulk = d.bulk_arrays and len(recs) > 1
        sql, types = _insert_statement(d, qt, t, q_name, uid, used, bulk)
        if bulk and not d.seq_from_store:   # one column each, transposed in C
            columns = list(zip(*map(_ALWAYS_GET, recs)))
            columns += [optional_columns[i] for i in used]
            if d.bulk_copy:     # the rows as binary COPY data (see PgConnection.copy_rows)
                conn.copy_rows(sql, (q_name, uid), types, columns)
            else:
                conn.execute(sql, conn.bulk_arrays(types, columns))
        else:
            _insert_rows(conn, sql, types, recs, optional, used, bulk)
        if any(r.notices for r in recs):
            sqlnotify.write(conn, f"{qt.owner}.{q_name}", recs)


def _insert_statement(d, qt: QueueTableInfo, t: str, q_name: str, uid: str | None,
                      used: tuple[int, ...], bulk: bool) -> tuple[str, tuple[str, ...]]:
    """The INSERT (or COPY) of rows using the optional columns ``used``, and the SQL type
    of each of its parameters."""
    # (the payload column's type is part of the statement's shape: a queue table dropped and
    # made again with another payload type, or one of another store in this process, has
    # the same name)
    key = (d.name, bulk, t, qt.payload_type == "RAW", q_name, uid, used)
    cached = _INSERT_SQL_CACHE.get(key)
    if cached is None:
        cols = (("SEQ",) if d.seq_from_store else ()) + _ALWAYS + tuple(_OPTIONAL[i] for i in used)
        cached = (_insert_sql(qt, q_name, uid, cols, bulk, d),
                  tuple(column_type(qt, c, d) for c in cols))
        _INSERT_SQL_CACHE[key] = cached
    return cached


def one_row_insert(d, qt: QueueTableInfo, r: MessageRecord) -> tuple[str, tuple[str, ...], tuple]:
    """:func:`insert_records` of the one record ``r`` (a dialect whose store numbers SEQ
    itself) as ``(statement, its parameters' SQL types, its parameters)``, to be sent
    some other way (see pgpipeline)."""
    optional = _OPTIONAL_GET(r)
    used = tuple(i for i, (v, dflt) in enumerate(zip(optional, _OPTIONAL_DEFAULT)) if v != dflt)
    sql, types = _insert_statement(d, qt, table_name(qt), r.q_name, r.enq_uid, used, False)
    return sql, types, _ALWAYS_GET(r) + tuple(optional[i] for i in used)


def _insert_rows(conn, sql: str, types: tuple, recs: list[MessageRecord], optional: list[tuple],
                 used: tuple[int, ...], bulk: bool) -> None:
    """:func:`insert_records` row by row (SEQ numbers from the store lead each row when the
    dialect says so)."""
    if used:
        rows = [_ALWAYS_GET(r) + tuple(o[i] for i in used) for r, o in zip(recs, optional)]
    else:
        rows = [_ALWAYS_GET(r) for r in recs]
    if conn.dialect.seq_from_store:   # SEQ leads the column list (see Dialect.seq_from_store)
        first = conn.allocate_seqs(len(recs))
        for i, r in enumerate(recs):
            r.seq = first + i
        rows = [(first + i, *row) for i, row in enumerate(rows)]
    if bulk:   # one array per column, encoded by the connection (see pgarrays)
        conn.execute(sql, conn.bulk_arrays(types, zip(*rows)))
    elif len(rows) == 1:
        conn.execute(sql, rows[0])
    else:
        conn.executemany(sql, rows)


def _insert_sql(qt: QueueTableInfo, q_name: str, uid: str | None, cols: tuple, bulk: bool, d) -> str:
    """One row per execution, or (``bulk``) every row at once from one array per column."""
    head = f"INSERT INTO {table_name(qt)} (Q_NAME, ENQ_UID, {', '.join(cols)}) "
    if bulk and d.bulk_copy:    # the queue name and user in every row (COPY has no literals)
        return f"COPY {table_name(qt)} (Q_NAME, ENQ_UID, {', '.join(cols)}) FROM STDIN (FORMAT BINARY)"
    if bulk:
        arrays = ", ".join(f"?::{column_type(qt, c, d)}[]" for c in cols)
        return head + f"SELECT {_literal(q_name)}, {_literal(uid)}, * FROM unnest({arrays})"
    return head + f"VALUES ({_literal(q_name)}, {_literal(uid)}, {', '.join('?' * len(cols))})"


def order_key(qt: QueueTableInfo, rec: MessageRecord) -> tuple:
    """The record's position in the queue's dequeue order."""
    cols = qt.order_columns
    get = _ORDER_GETTERS.get(cols)
    if get is None:   # (at least two columns: the getter gives a tuple)
        get = _ORDER_GETTERS[cols] = operator.attrgetter(*(c.lower() for c in cols))
    return get(rec)


_ORDER_GETTERS: dict[tuple[str, ...], Callable[[MessageRecord], tuple]] = {}


_SELECT_SQL_CACHE: dict[tuple, str] = {}


def select_candidates(conn, queue: QueueInfo, sel: Selector, now: float, after: tuple | None,
                      limit: int, lock: bool = False) -> list[MessageRecord]:
    """Committed messages of ``queue`` matching the SQL part of ``sel``, in dequeue order,
    strictly after ``after``; READY messages past their expiration are left out.  With
    ``lock`` (databases with row locks) the rows are locked for this transaction and rows
    other transactions hold are skipped, never waited for."""
    sql, params = candidates_query(conn.dialect, queue, sel, now, after, limit, lock)
    return [MessageRecord(*row) for row in conn.execute(sql, params).fetchall()]


def candidates_query(d, queue: QueueInfo, sel: Selector, now: float, after: tuple | None,
                     limit: int, lock: bool = False) -> tuple[str, list]:
    """:func:`select_candidates`'s query in the dialect ``d`` as ``(statement, parameters)``,
    its rows those of RECORD_COLUMNS (to be run some other way: see pgprepared)."""
    shape = _shape(d, queue, sel, after, limit, lock)
    sql = _SELECT_SQL_CACHE.get(shape)
    if sql is None:
        sql = _select_sql(queue.table, shape, d)
        _SELECT_SQL_CACHE[shape] = sql
    return sql, _params(d, queue, sel, now, after, shape)


def _shape(d, queue: QueueInfo, sel: Selector, after: tuple | None, limit: int, lock: bool) -> tuple:
    """What a candidates statement's text depends on (its cache key)."""
    qt = queue.table
    live = C.MSG_READY in sel.states or C.MSG_WAITING in sel.states
    skip = len(sel.skip_groups) if sel.group is None else 0
    consumer = 0 if not sel.multi else (
        3 + ("address", "link", "local").index(sel.remote[0]) if sel.remote is not None
        else 1 if sel.consumer_name is not None else 2)
    return (d.name, lock, qt.qt_id, qt.name, qt.owner, qt.sort_list, len(sel.states), live,
            sel.msgid is not None, sel.correlation is not None, sel.group is not None, skip,
            after is not None, limit, consumer, sel.delivery_mode is not None,
            sel.sql_condition[0] if sel.sql_condition else None)


def _params(d, queue: QueueInfo, sel: Selector, now: float, after: tuple | None, shape: tuple) -> list:
    """The parameters of :func:`_where`'s conditions for ``shape``, in their order."""
    qt = queue.table
    live, consumer, skip = shape[7], shape[14], shape[11]
    params: list = [queue.name]
    if consumer == 1:
        params.append(sel.consumer_name)
    elif consumer == 3:
        params.append(sel.remote[1])
    elif consumer == 4:    # LIKE '%@LINK', the link's own % and _ escaped
        link = sel.remote[1].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params.append(f"%@{link}")
    params.extend(sel.states)
    if live:
        params.append(now)
    if sel.msgid is not None:
        params.append(sel.msgid)
    if sel.correlation is not None:
        params.append(sel.correlation)
    if sel.group is not None:
        params.append(sel.group)
        if after is not None and _group_by_cscn(qt, d):
            params.append(after[qt.order_columns.index("CSCN")])   # see _group_by_cscn
    if skip:
        params.extend(sel.skip_groups)
    if sel.delivery_mode is not None:
        params.append(sel.delivery_mode)
    if after is not None:
        params.extend(after)
    if sel.sql_condition:
        params.extend(sel.sql_condition[1])
    return params


# a walk leaves out of what it reads next at most this many message groups whose lock it
# was refused (each count is a statement of its own, prepared per connection on PostgreSQL)
MOST_REFUSED_GROUPS = 16


def skipping_groups(sel: Selector, refused: set[str]) -> Selector:
    """``sel`` leaving out, besides its own ``skip_groups``, the message groups a locking
    walk was refused (another session consumes them: seed 003 "Message Grouping"), so that
    their messages are not read again one chunk after the other.  A selector of one group
    (``sel.group``) is kept as it is."""
    if not refused or sel.group is not None or refused <= sel.skip_groups:
        return sel
    room = MOST_REFUSED_GROUPS - len(sel.skip_groups)
    if room <= 0:
        return sel
    more = sorted(refused - sel.skip_groups)[:room]
    return dataclasses.replace(sel, skip_groups=sel.skip_groups | frozenset(more))


_FIRST_SQL_CACHE: dict[tuple, str] = {}


def first_of_a_group_query(d, queue: QueueInfo, sel: Selector, now: float, after: tuple | None,
                           excluded: object) -> tuple[str, list]:
    """PostgreSQL: one statement taking the first message, after ``after``, of a message
    group no other transaction holds (seed 003 "Message Grouping": a TRANSACTIONAL queue
    table's group goes to one session at a time), as ``(statement, parameters)``.  Its rows:
    none when no group is free; else one, the group (ENQ_TID) whose advisory lock it took
    for the transaction, then the message's RECORD_COLUMNS as locked ``FOR UPDATE SKIP
    LOCKED`` — all NULL when another transaction changed or took the row in between (the
    group stays this transaction's: read on as the Python walk does).  ``excluded``: the
    sequence numbers this transaction consumed already (its own row locks do not keep
    them out), as the connection's BIGINT array parameter.

    Why it takes no lock it does not keep: the candidates are walked one at a time by a
    recursive query, each step's row chosen by the WHERE clause, ORDER BY and LIMIT 1 of a
    subquery, and the group's lock is asked in the SELECT list above it — evaluated for
    the one row the step returns, never for a row a filter drops (the planner may order
    the conditions of one WHERE clause as it likes).  A refused group is carried in the
    step's REFUSED array and its other messages skipped by the next steps' index scan; the
    walk ends with the first group taken or the queue's end."""
    shape = _shape(d, queue, sel, after, 1, True)
    sql = _FIRST_SQL_CACHE.get(shape)
    if sql is None:
        sql = _FIRST_SQL_CACHE[shape] = _first_of_a_group_sql(queue.table, shape, d)
    return sql, [*_params(d, queue, sel, now, after, shape), excluded,
                 *_params(d, queue, sel, now, None, shape), excluded]


def _first_of_a_group_sql(qt: QueueTableInfo, shape: tuple, d) -> str:
    t, cols = table_name(qt), qt.order_columns
    order = ", ".join(cols)
    keys = [f"K{i}" for i in range(len(cols))]
    names = f"N({', '.join(keys)}, SEQ, TID)"
    not_taken = f"NOT ({d.in_list('SEQ')})"
    first = _where(qt, shape, d) + [not_taken]
    step = ["NOT W.GOT"] + _where(qt, shape[:12] + (True,) + shape[13:], d,
                                  ", ".join(f"W.{k}" for k in keys)) + \
        [not_taken, "(ENQ_TID IS NULL OR ENQ_TID <> ALL(W.REFUSED || W.TID))"]
    # (the key's int4 as _GROUP_LOCK in pgsession spells it: the same lock)
    lock = f"CASE WHEN N.TID IS NULL THEN TRUE ELSE pg_try_advisory_xact_lock({int(qt.qt_id)}, hashtext(N.TID)) END"

    def pick(where: list[str]) -> str:
        return f"(SELECT {order}, SEQ, ENQ_TID FROM {t} WHERE {' AND '.join(where)} ORDER BY {order} LIMIT 1) {names}"
    return (f"WITH RECURSIVE W({', '.join(keys)}, SEQ, TID, GOT, REFUSED) AS ("
            f"SELECT N.*, {lock}, ARRAY[]::TEXT[] FROM {pick(first)} "
            f"UNION ALL SELECT N.*, {lock}, W.REFUSED || W.TID FROM W CROSS JOIN LATERAL {pick(step)}) "
            f"SELECT F.TID, R.* FROM (SELECT SEQ, TID FROM W WHERE GOT LIMIT 1) F LEFT JOIN LATERAL "
            f"(SELECT {_SELECT_LIST} FROM {t} WHERE SEQ = F.SEQ{d.lock_rows}) R ON TRUE")


def _group_by_cscn(qt: QueueTableInfo, d) -> bool:
    """Whether the rest of a transaction group (``ENQ_TID``) is also found by the CSCN of
    the group's message just taken: in a commit-time queue of a PostgreSQL store every
    message of one enqueuing transaction has its commit's CSCN (a synchronous capture's
    trigger too: one per transaction), so the index scan in dequeue order stops at the
    group's end instead of reading the whole backlog behind it for more of the group (0.3-
    0.6 s per call at a 500k backlog; bench/RESULTS.md "lead, 23:2x").  Not on SQLite, whose
    synchronous capture gives each row change of a transaction its own CSCN."""
    return d.name == "postgresql" and "CSCN" in qt.order_columns


def _select_sql(qt: QueueTableInfo, shape: tuple, d) -> str:
    lock, limit = shape[1], shape[13]
    return (f"SELECT {_SELECT_LIST} FROM {table_name(qt)} WHERE {' AND '.join(_where(qt, shape, d))} "
            f"ORDER BY {', '.join(qt.order_columns)} LIMIT {int(limit)}{d.lock_rows if lock else ''}")


def _where(qt: QueueTableInfo, shape: tuple, d, position: str | None = None) -> list[str]:
    """The conditions of a candidates statement of ``shape`` (parameters: :func:`_params`).
    ``position``: what the dequeue order's columns are compared with for a position
    (``shape`` has one) instead of parameters."""
    _, _, _, _, _, _, n_states, live, by_msgid, by_corr, by_group, skip, has_after, _, \
        consumer, by_mode, condition = shape
    where = ["Q_NAME = ?"]
    if consumer == 1:   # a consumer's own records; remote recipients' wait for propagation
        where.append("CONSUMER_NAME = ? AND ADDRESS IS NULL")
    elif consumer == 2:  # the consumer-less copy of an expired or failed message
        where.append("CONSUMER_NAME IS NULL")
    elif consumer == 3:  # propagation: the records addressed to one queue
        where.append("ADDRESS = ?")
    elif consumer == 4:  # propagation: the records addressed to any queue at one link
        # (IS NOT NULL spelled out: SQLite uses the partial $REMOTE index, in dequeue
        # order, only when the query implies its WHERE — LIKE does not)
        where.append("ADDRESS IS NOT NULL AND ADDRESS LIKE ? ESCAPE '\\'")
    elif consumer == 5:  # propagation: the records addressed to a queue of this site
        where.append("ADDRESS IS NOT NULL AND ADDRESS NOT LIKE '%@%'")
    where.append("STATE = ?" if n_states == 1 else f"STATE IN ({', '.join('?' * n_states)})")
    if live:
        where.append("(EXPIRE_AT IS NULL OR EXPIRE_AT > ? OR STATE = 3)")
    if by_msgid:
        where.append("MSGID = ?")
    if by_corr:
        where.append(f"CORRID {d.like}")
    if by_group:
        where.append("ENQ_TID = ?")
        if has_after and _group_by_cscn(qt, d):
            where.append("CSCN = ?")
    if skip:  # NEXT_TRANSACTION: not the group just left
        where.append(f"(ENQ_TID IS NULL OR ENQ_TID NOT IN ({', '.join('?' * skip)}))")
    if by_mode:  # persistent messages only, or spilled buffered ones only
        where.append("DELIVERY_MODE = ?")
    cols = qt.order_columns
    if has_after:
        where.append(f"({', '.join(cols)}) > ({position or ', '.join('?' * len(cols))})")
    if condition:   # the dequeue condition, compiled by the rules engine
        where.append(f"({condition})")
    return where


_USER_DATA = RECORD_COLUMNS.index("USER_DATA")
# lock_records reads every column but the payload: the candidates have it already, and a
# message's payload never changes once it is enqueued (the payload was half the bytes the
# second read of each dequeued row brought back)
_LOCK_LIST = ", ".join(c for c in RECORD_COLUMNS if c != "USER_DATA")
# a record's values in _LOCK_LIST's order: a row locked as the candidate read it (the usual
# case) keeps the candidate's record instead of a new one of 34 fields
_LOCKED_VALUES = operator.attrgetter(*(c.lower() for c in RECORD_COLUMNS if c != "USER_DATA"))


def lock_records(conn, queue: QueueInfo, candidates: list[MessageRecord],
                 states: Iterable[int]) -> list[MessageRecord]:
    """Lock those of ``candidates`` (read without a lock) still in ``queue`` in one of
    ``states`` and not held by another transaction; returns them as they are now, in
    dequeue order, with the payload the candidate read (the message id is compared, so a
    SEQ given to another message could never pass for the candidate)."""
    if not candidates:
        return []
    d = conn.dialect
    sql = (f"SELECT {_LOCK_LIST} FROM {table_name(queue.table)} WHERE {d.in_list('SEQ')} "
           f"ORDER BY {', '.join(queue.table.order_columns)}{d.lock_rows}")
    # queue and state are checked here, not in SQL, so that the primary key is the only
    # index the planner can pick (see _BY_KEY)
    st = set(states)
    read = {r.seq: r for r in candidates}
    out = []
    for row in table_rows(conn, queue.table.qt_id, sql, [d.list_param(list(read))]):
        was = read.get(row[0])
        if was is None or row[2] != was.msgid:
            continue
        r = was if row == _LOCKED_VALUES(was) else \
            MessageRecord(*row[:_USER_DATA], was.user_data, *row[_USER_DATA:])
        if r.q_name == queue.name and r.state in st:
            out.append(r)
    return out


def table_rows(conn, qt_id: int, sql: str, params: Sequence) -> list:
    """The rows of ``sql``, a statement on the queue table ``qt_id`` — through the
    connection's ``query_table`` where it has one (a PostgreSQL session runs such statements
    as prepared statements of its own: ``PgConnection.query_table``), else its cursor."""
    query = getattr(conn, "query_table", None)
    return conn.execute(sql, params).fetchall() if query is None else query(qt_id, sql, params)


def table_command(conn, qt_id: int, sql: str, params: Sequence) -> None:
    """:func:`table_rows` for a statement that returns no rows (``modify_table``)."""
    modify = getattr(conn, "modify_table", None)
    if modify is None:
        conn.execute(sql, params)
    else:
        modify(qt_id, sql, params)


def still_available(conn, queue: QueueInfo, records: list[MessageRecord],
                    states: Iterable[int]) -> dict[int, MessageRecord]:
    """Those ``records`` still in ``queue`` in one of ``states`` (after locking), as they are
    now, by SEQ.  The message id is compared too, so a SEQ given to another message
    could never pass for the locked one."""
    if not records:
        return {}
    st = tuple(states)
    sql = (f"SELECT {_SELECT_LIST} FROM {table_name(queue.table)} WHERE Q_NAME = ? "
           f"AND STATE IN ({', '.join('?' * len(st))}) AND SEQ IN ({', '.join('?' * len(records))})")
    ids = {r.seq: r.msgid for r in records}
    fresh = (MessageRecord(*row) for row in conn.execute(sql, [queue.name, *st, *ids]))
    return {r.seq: r for r in fresh if ids.get(r.seq) == r.msgid}


def consume(conn, queue: QueueInfo, records: list[MessageRecord], user: str, agent: str | None,
            consumer: str | None, txn: str | None, now: float) -> None:
    """Finish REMOVE dequeues: delete, or keep as PROCESSED for the retention time."""
    if not records:     # all of them kept back (:func:`kept_back`)
        return
    t = table_name(queue.table)
    if queue.retention_time == 0:
        qt_id = queue.table.qt_id
        if len(records) == 1:
            table_command(conn, qt_id, f"DELETE FROM {t} WHERE SEQ = ?", (records[0].seq,))
        else:  # one statement for the batch: the sequence numbers as one list parameter
            d = conn.dialect
            table_command(conn, qt_id, f"DELETE FROM {t} WHERE {d.in_list('SEQ')}",
                          (d.list_param([r.seq for r in records]),))
        return
    purge_at = None if queue.retention_time < 0 else now + queue.retention_time
    conn.executemany(
        f"UPDATE {t} SET STATE = 2, DEQ_TIME = ?, DEQ_UID = ?, DEQ_TID = ?, CONSUMER_NAME = ?, "
        f"DEQ_AGENT_NAME = ?, TIME_MANAGER_INFO = ? WHERE SEQ = ?",
        [(now, user, txn, consumer, agent, purge_at, r.seq) for r in records])


def coalesced(removes: list) -> list:
    """A session's pending REMOVE dequeues (``(queue, records, info)``, one entry per dequeue
    call) with neighbours of the same queue and dequeuer joined: :func:`consume` and
    :func:`settle_failed` then run once per run of them, not once per message (a commit of 100
    single-message dequeues sent 100 DELETEs — on PostgreSQL 100 round trips)."""
    out: list = []
    for queue, recs, info in removes:
        if not recs:
            continue
        if out:
            q, joined, i = out[-1]
            if q is queue or (q.table.qt_id == queue.table.qt_id and q.name == queue.name
                              and q.retention_time == queue.retention_time):
                if (i.user, i.agent_name, i.consumer_name) == (info.user, info.agent_name, info.consumer_name):
                    joined.extend(recs)
                    continue
        out.append((queue, list(recs), info))
    return out


def kept_back(removes: list, queue: QueueInfo, records: list[MessageRecord]) -> list:
    """A session's pending REMOVE dequeues (``(queue, records, info)``) without ``records``
    of ``queue``: they are not consumed at commit.  Entries stay (maybe empty): savepoints
    count them."""
    qt_id, seqs = queue.table.qt_id, {r.seq for r in records}
    return [(q, [r for r in recs if r.seq not in seqs] if q.table.qt_id == qt_id else recs, info)
            for q, recs, info in removes]


def mark_undeliverable(conn, queue: QueueInfo, seqs: list[int], now: float) -> None:
    """Records a queue-to-dblink propagation could not deliver (seed 003 "Propagation
    failures"): UNDELIVERABLE, with a dequeue time and no dequeue transaction (as Oracle's
    dequeue history shows such a recipient), out of the time manager's reach (no
    expiration moves them: they stay until an administrator purges them)."""
    d = conn.dialect
    conn.execute(f"UPDATE {table_name(queue.table)} SET STATE = {C.STATE_UNDELIVERABLE}, DEQ_TIME = ?, "
                 f"DEQ_TID = NULL, TIME_MANAGER_INFO = NULL WHERE {d.in_list('SEQ')}", (now, d.list_param(seqs)))


def failed_attempt(conn, queue: QueueInfo, seq: int, now: float, find_queue: FindQueue) -> None:
    """A REMOVE dequeue was rolled back: count the attempt, apply max_retries / retry_delay."""
    t = table_name(queue.table)
    row = conn.execute(f"SELECT RETRY_COUNT, Q_NAME FROM {t} WHERE SEQ = ?", (seq,)).fetchone()
    if row is None or row[1] != queue.name:
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
                        find_queue: FindQueue) -> QueueInfo | None:
    """The message's own exception queue if it still exists, else the table's default;
    None for a sharded queue without one (the message is purged)."""
    if exc_name:
        q = find_queue(exc_schema or queue.owner, exc_name)
        if q is not None:
            return q
    default = queue.table.exception_queue_name
    if default is None:
        return None
    q = find_queue(queue.owner, default)
    if q is None:  # the default exception queue is dropped only with its table
        raise RuntimeError(f"default exception queue of {queue.table.qualified} is missing")
    return q


def move_to_exception_queue(conn, queue: QueueInfo, seqs: list[int], reason: str,
                            find_queue: FindQueue, try_lock: Callable[[int], bool] | None = None) -> int:
    """Move messages of ``queue`` to their exception queues with state EXPIRED.

    In a multi-consumer queue a message is one record per consumer, and it reaches the
    exception queue once, as a record without consumer (seed 003 "Message States":
    dequeued "exactly once by specifying a NULL consumer name"): an expired message
    takes its other live records with it (they are claimed first with ``try_lock`` or,
    on databases with row locks, by locking them; if one is held, nothing moves now); a
    record that ran out of retries waits, as EXPIRED, until no other consumer can still
    dequeue the message.  Returns how many messages moved."""
    t = table_name(queue.table)
    multi = queue.table.multiple_consumers and not queue.is_exception_queue
    moved = 0
    for seq in seqs:
        row = conn.execute(f"SELECT EXCEPTION_QSCHEMA, EXCEPTION_QUEUE, Q_NAME, STATE, MSGID FROM {t} "
                           f"WHERE SEQ = ?", (seq,)).fetchone()
        if row is None or row[2] != queue.name or row[3] not in (C.MSG_READY, C.MSG_WAITING):
            continue
        if multi:
            others = _siblings(conn, queue, row[4], seq)
            live = [s for s, state in others if state in (C.MSG_READY, C.MSG_WAITING)]
            if reason == "MAX_RETRY_EXCEEDED" and live:
                conn.execute(f"UPDATE {t} SET STATE = 3, EXPIRATION_REASON = ?, TIME_MANAGER_INFO = NULL "
                             f"WHERE SEQ = ?", (reason, seq))
                continue
            if live and not _claim(conn, queue, row[4], seq, live, try_lock):
                continue
            gone = [s for s, state in others if state != C.MSG_PROCESSED]
            if gone:
                d = conn.dialect
                conn.execute(f"DELETE FROM {t} WHERE {d.in_list('SEQ')}", (d.list_param(gone),))
        _move(conn, queue, seq, row[0], row[1], reason, find_queue)
        moved += 1
    return moved


def _move(conn, queue: QueueInfo, seq: int, exc_schema: str | None, exc_name: str | None,
          reason: str, find_queue: FindQueue) -> None:
    t = table_name(queue.table)
    target = exception_queue_for(queue, exc_schema, exc_name, find_queue)
    if target is None:   # a sharded queue without an exception queue: purged
        conn.execute(f"DELETE FROM {t} WHERE SEQ = ?", (seq,))
        return
    # a spilled buffered message too arrives persistent (seed 003 "Error Handling": "it is
    # moved into the exception queue as a persistent message"), for a default dequeue
    sets = ("Q_NAME = ?, STATE = 3, EXPIRATION_REASON = ?, ORIGINAL_QUEUE_NAME = ?, "
            "ORIGINAL_QUEUE_OWNER = ?, TIME_MANAGER_INFO = NULL, CONSUMER_NAME = NULL, "
            f"ADDRESS = NULL, PROTOCOL = NULL, DELIVERY_MODE = {C.MSG_PERSISTENT}")
    args = [target.name, reason, queue.name, queue.owner]
    if target.table.qt_id == queue.table.qt_id:
        conn.execute(f"UPDATE {t} SET {sets} WHERE SEQ = ?", (*args, seq))
        return
    # an exception queue in another queue table of the same payload type
    rec = MessageRecord(*conn.execute(f"SELECT {_SELECT_LIST} FROM {t} WHERE SEQ = ?", (seq,)).fetchone())
    rec.q_name, rec.state, rec.expiration_reason = target.name, C.MSG_EXPIRED, reason
    rec.original_queue_name, rec.original_queue_owner = queue.name, queue.owner
    rec.time_manager_info = rec.consumer_name = rec.address = rec.protocol = None
    rec.delivery_mode = C.MSG_PERSISTENT
    insert_records(conn, target.table, [rec], rec.cscn)
    conn.execute(f"DELETE FROM {t} WHERE SEQ = ?", (seq,))


def _siblings(conn, queue: QueueInfo, msgid: bytes, seq: int, lock: bool = False) -> list[tuple[int, int]]:
    """``(SEQ, STATE)`` of the message's other records in ``queue`` (other consumers')."""
    rows = conn.execute(f"SELECT SEQ, STATE, Q_NAME FROM {table_name(queue.table)} WHERE MSGID = ? "
                        f"ORDER BY SEQ{conn.dialect.lock_rows if lock else ''}", (msgid,)).fetchall()
    return [(s, state) for s, state, q in rows if q == queue.name and s != seq]


def _claim(conn, queue: QueueInfo, msgid: bytes, seq: int, live: list[int],
           try_lock: Callable[[int], bool] | None) -> bool:
    """Take the live records of other consumers before the message moves: False if a
    session holds one (the move waits for a later time-manager pass)."""
    if conn.dialect.lock_rows:
        locked = {s for s, _ in _siblings(conn, queue, msgid, seq, lock=True)}
        return set(live) <= locked
    return all(try_lock(s) for s in live) if try_lock is not None else True


def settle_failed(conn, queue: QueueInfo, records: list[MessageRecord], find_queue: FindQueue) -> None:
    """After consumers dequeued ``records`` of a multi-consumer queue: a message whose
    other records all ran out of retries, and that nobody else can dequeue now, goes to
    its exception queue (once)."""
    if not queue.table.multiple_consumers or queue.is_exception_queue or not records:
        return
    t = table_name(queue.table)
    d = conn.dialect
    # first only the messages that have a record out of retries here (almost always none:
    # a batch of 500 then costs index probes, not 500 messages' records sent back)
    msgids = sorted({r.msgid for r in records})
    where, params = _msgids_in(d, msgids)
    msgids = sorted({bytes(m) for m, q in table_rows(conn, queue.table.qt_id, expired_probe(t, where), params)
                     if q == queue.name})
    if not msgids:
        return
    where, params = _msgids_in(d, msgids)
    rows = conn.execute(f"SELECT SEQ, STATE, Q_NAME, MSGID FROM {t} WHERE {where}", params).fetchall()
    by_msg: dict[bytes, list[tuple[int, int]]] = {}
    for seq, state, q, msgid in rows:
        if q == queue.name:
            by_msg.setdefault(bytes(msgid), []).append((seq, state))
    for msgid, recs in by_msg.items():
        failed = [s for s, state in recs if state == C.MSG_EXPIRED]
        if failed and not any(state in (C.MSG_READY, C.MSG_WAITING) for _, state in recs):
            if failed[1:]:
                conn.execute(f"DELETE FROM {t} WHERE {d.in_list('SEQ')}", (d.list_param(failed[1:]),))
            row = conn.execute(f"SELECT EXCEPTION_QSCHEMA, EXCEPTION_QUEUE FROM {t} WHERE SEQ = ?",
                               (failed[0],)).fetchone()
            _move(conn, queue, failed[0], row[0], row[1], "MAX_RETRY_EXCEEDED", find_queue)


def expired_probe(t: str, msgids_in: str) -> str:
    """:func:`settle_failed`'s probe: the records out of retries (and their queue) of these
    messages (``msgids_in``).  STATE is written out, not bound, so the planner matches the
    multi-consumer table's partial $EXPIRED index (``sqlschema.expired_index_ddl``) whatever
    plan it keeps for the statement; the queue is compared by the caller, because
    ``Q_NAME = ? AND STATE = 3`` looks to PostgreSQL like a narrow range of $ORDER (Q_NAME,
    CONSUMER_NAME, STATE, ...) when it is every consumer's backlog (80-230 ms per dequeue
    commit at a 500k backlog, bench/RESULTS.md 2026-11-29)."""
    return f"SELECT MSGID, Q_NAME FROM {t} WHERE {msgids_in} AND STATE = {C.MSG_EXPIRED}"


def _msgids_in(d, msgids: list[bytes]) -> tuple[str, list]:
    """``MSGID`` is one of ``msgids``: one array parameter where the dialect binds arrays,
    else a placeholder each."""
    if d.bulk_arrays:
        return d.in_list("MSGID", blob=True), [d.list_param(msgids)]
    return f"MSGID IN ({', '.join('?' * len(msgids))})", list(msgids)


def drop_consumer_messages(conn, queue: QueueInfo, name: str | None, address: str | None,
                           protocol: int) -> int:
    """REMOVE_SUBSCRIBER: delete what the subscriber has not dequeued yet."""
    t = table_name(queue.table)
    rows = conn.execute(f"SELECT SEQ, CONSUMER_NAME, ADDRESS, PROTOCOL FROM {t} WHERE Q_NAME = ? "
                        f"AND STATE IN (0, 1)", (queue.name,)).fetchall()
    gone = [seq for seq, c, a, p in rows if c == name and a == address and (p or 0) == (protocol or 0)]
    if gone:
        d = conn.dialect
        conn.execute(f"DELETE FROM {t} WHERE {d.in_list('SEQ')}", (d.list_param(gone),))
    return len(gone)


def due_records(conn, qt: QueueTableInfo, now: float, limit: int = 1000,
                lock: bool = False) -> list[tuple]:
    """``(SEQ, STATE, Q_NAME)`` of records whose time-manager event is due (with ``lock``:
    locked, skipping records a session or another time manager holds)."""
    return list(conn.execute(
        f"SELECT SEQ, STATE, Q_NAME FROM {table_name(qt)} WHERE TIME_MANAGER_INFO <= ? "
        f"ORDER BY TIME_MANAGER_INFO LIMIT {int(limit)}{conn.dialect.lock_rows if lock else ''}",
        (now,)))


def apply_time_events(conn, qt: QueueTableInfo, due: list[tuple], queues: dict, now: float,
                      ev: TimeEvents, try_lock: Callable[[int], bool], find_queue: FindQueue) -> None:
    """One time-manager pass over ``due`` (from :func:`due_records`): WAITING -> READY,
    expired READY -> exception queue, PROCESSED past retention -> purged.  ``try_lock``
    claims a READY message before it moves (False: a session holds it; it is left for
    a later pass)."""
    for seq, state, q_name in due:
        q = queues.get((q_name, qt.qt_id))
        if state == C.MSG_WAITING:
            ev.promoted += promote(conn, qt, seq)
        elif state == C.MSG_PROCESSED:
            ev.purged += purge(conn, qt, seq, now)
        elif state == C.MSG_READY and q is not None:
            if not try_lock(seq):
                ev.next_due = min(ev.next_due or now + 0.5, now + 0.5)
                continue
            n = move_to_exception_queue(conn, q, [seq], "TIME_EXPIRATION", find_queue, try_lock)
            if not n and q.table.multiple_consumers:   # another consumer holds its record
                ev.next_due = min(ev.next_due or now + 0.5, now + 0.5)
            ev.expired += n
        else:  # a stale marker (e.g. on an EXPIRED message): clear it
            conn.execute(f"UPDATE {table_name(qt)} SET TIME_MANAGER_INFO = NULL WHERE SEQ = ?", (seq,))


# Statements whose row count matters say RETURNING and count the rows: the same on every
# driver (a cursor's rowcount is not, e.g. psycopg's in pipeline mode).

def promote(conn, qt: QueueTableInfo, seq: int) -> int:
    """WAITING -> READY; from now on the record's next event is its expiry."""
    return len(conn.execute(f"UPDATE {table_name(qt)} SET STATE = 0, TIME_MANAGER_INFO = EXPIRE_AT "
                            f"WHERE SEQ = ? AND STATE = 1 RETURNING SEQ", (seq,)).fetchall())


def purge(conn, qt: QueueTableInfo, seq: int, now: float) -> int:
    return len(conn.execute(f"DELETE FROM {table_name(qt)} WHERE SEQ = ? AND STATE = 2 "
                            f"AND TIME_MANAGER_INFO <= ? RETURNING SEQ", (seq, now)).fetchall())


def next_due(conn, qt: QueueTableInfo) -> float | None:
    row = conn.execute(f"SELECT MIN(TIME_MANAGER_INFO) FROM {table_name(qt)} "
                       f"WHERE TIME_MANAGER_INFO IS NOT NULL").fetchone()
    return row[0] if row else None


def next_scn(conn) -> int:
    """The next approximate commit SCN.  Taken inside the committing write transaction:
    the counter row stays locked until it commits, so numbers follow commit order."""
    return conn.execute("UPDATE SLUICE_SCN SET SCN = SCN + 1 WHERE ID = 1 RETURNING SCN").fetchone()[0]


def delete_by_msgid(conn, qt: QueueTableInfo, msgids: list[bytes]) -> None:
    """Remove messages by id: a PostgreSQL transaction undoing its own enqueues while it
    keeps its row locks (see :mod:`.pgsession`)."""
    if msgids:
        d = conn.dialect
        conn.execute(f"DELETE FROM {table_name(qt)} WHERE {d.in_list('MSGID', blob=True)}",
                     (d.list_param(msgids),))
        sqlnotify.forget(conn, msgids)


def message_status(conn, queue: QueueInfo, msgid: bytes,
                   consumer: str | None = None) -> tuple[int, int] | None:
    """``(STATE, SEQ)`` of the message's record in ``queue`` (in a multi-consumer queue,
    ``consumer``'s record; None: the consumer-less one), or None."""
    multi = queue.table.multiple_consumers
    for state, seq, q_name, cons, address in conn.execute(
            f"SELECT STATE, SEQ, Q_NAME, CONSUMER_NAME, ADDRESS FROM {table_name(queue.table)} "
            f"WHERE MSGID = ?", (msgid,)).fetchall():
        if q_name == queue.name and (not multi or (cons == consumer and address is None)):
            return state, seq
    return None


def count(conn, queue: QueueInfo, states: Iterable[int] | None) -> int:
    sql = f"SELECT COUNT(*) FROM {table_name(queue.table)} WHERE Q_NAME = ?"
    params: list = [queue.name]
    if states is not None:
        st = tuple(states)
        sql += f" AND STATE IN ({', '.join('?' * len(st))})"
        params.extend(st)
    return conn.execute(sql, params).fetchone()[0]
