"""Catalog SQL shared by the SQL backends: queue tables, queues, named objects.

Every function takes a connection-like object (``execute`` with ``?``
placeholders, a ``dialect`` attribute) already inside the backend's write
transaction; the backend commits, bumps its catalog version and tells other
processes.  Each check-then-write pair runs in that one transaction, so a
duplicate is refused with Oracle's error rather than a constraint violation.
"""

from __future__ import annotations

import json
import time
from typing import Callable

from ..errors import ora
from .base import SHARDED_KIND, QueueInfo, QueueTableInfo, sharded_from_spec
from .sqlschema import drop_queue_table_ddl, queue_depth_ddl, queue_table_ddl, table_name
from .stats import STATS_TABLE


def create_queue_table(c, table: QueueTableInfo, exception_queue: QueueInfo | None,
                       queues: tuple[QueueInfo, ...] = ()) -> QueueTableInfo:
    """Insert the catalog row, create storage and views, add the default exception queue
    and ``queues``; a sharded table's SHARDED_QUEUE row (its parameters: none yet).
    :raises IntegrityError: ORA-24001 when the queue table exists, ORA-24006 when a queue does."""
    if c.execute("SELECT 1 FROM AQ_QUEUE_TABLES WHERE OWNER = ? AND NAME = ?",
                 (table.owner, table.name)).fetchone():
        raise ora(24001, table.qualified)
    for q in queues:   # before anything is created (a classic queue may have the name)
        if c.execute("SELECT 1 FROM AQ_QUEUES WHERE OWNER = ? AND NAME = ?", (q.owner, q.name)).fetchone():
            raise ora(24006, q.qualified)
    table.qt_id = c.execute(
        "INSERT INTO AQ_QUEUE_TABLES (OWNER, NAME, PAYLOAD_TYPE, SORT_LIST, MULTIPLE_CONSUMERS,"
        " MESSAGE_GROUPING, USER_COMMENT, COMPATIBLE, SECURE, PRIMARY_INSTANCE,"
        " SECONDARY_INSTANCE, CREATED) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) RETURNING QT_ID",
        (table.owner, table.name, table.payload_type, ",".join(table.sort_list),
         int(table.multiple_consumers), table.message_grouping, table.comment,
         table.compatible, int(table.secure), table.primary_instance,
         table.secondary_instance, time.time())).fetchone()[0]
    for stmt in queue_table_ddl(table, c.dialect):
        c.execute(stmt)
    refresh_queue_depth(c)
    for q in (exception_queue, *queues) if exception_queue is not None else queues:
        q.table = table
        insert_queue(c, q)
    if table.sharded:
        put_object(c, SHARDED_KIND, table.owner, table.name,
                   {"parameters": {}, "exception_queue": table.sharded_exception_queue}, replace=True)
    return table


def drop_queue_table(c, qt: QueueTableInfo) -> None:
    refresh_queue_depth(c, without=qt.qt_id)   # PostgreSQL drops no table a view uses
    for stmt in drop_queue_table_ddl(qt):
        c.execute(stmt)
    # (a queue id SQLite gives again must not inherit the dropped queue's totals)
    c.execute(f"DELETE FROM {STATS_TABLE} WHERE QID IN (SELECT QID FROM AQ_QUEUES WHERE QT_ID = ?)",
              (qt.qt_id,))
    c.execute("DELETE FROM AQ_QUEUES WHERE QT_ID = ?", (qt.qt_id,))
    c.execute("DELETE FROM AQ_QUEUE_TABLES WHERE QT_ID = ?", (qt.qt_id,))
    drop_object(c, SHARDED_KIND, qt.owner, qt.name)


def refresh_queue_depth(c, without: int | None = None) -> None:
    """Rebuild SLUICE_QUEUE_DEPTH over the queue tables (but ``without``'s)."""
    for stmt in queue_depth_ddl([qt for qt in queue_tables(c) if qt.qt_id != without], c.dialect):
        c.execute(stmt)


def update_queue_table(c, table: QueueTableInfo) -> None:
    c.execute("UPDATE AQ_QUEUE_TABLES SET USER_COMMENT = ?, PRIMARY_INSTANCE = ?, "
              "SECONDARY_INSTANCE = ? WHERE QT_ID = ?",
              (table.comment, table.primary_instance, table.secondary_instance, table.qt_id))


def queue_tables(c) -> list[QueueTableInfo]:
    rows = c.execute(
        "SELECT T.OWNER, T.NAME, T.PAYLOAD_TYPE, T.SORT_LIST, T.MULTIPLE_CONSUMERS, T.MESSAGE_GROUPING,"
        " T.USER_COMMENT, T.COMPATIBLE, T.SECURE, T.PRIMARY_INSTANCE, T.SECONDARY_INSTANCE, T.QT_ID,"
        " SQ.SPEC FROM AQ_QUEUE_TABLES T LEFT JOIN SLUICE_CATALOG SQ"
        f" ON SQ.KIND = '{SHARDED_KIND}' AND SQ.OWNER = T.OWNER AND SQ.NAME = T.NAME"
        " ORDER BY T.QT_ID").fetchall()
    return [QueueTableInfo(r[0], r[1], r[2], tuple(r[3].split(",")), bool(r[4]), r[5], r[6], r[7],
                           bool(r[8]), r[9] or 0, r[10] or 0, r[11],
                           *sharded_from_spec(r[1], None if r[12] is None else json.loads(r[12])))
            for r in rows]


def insert_queue(c, q: QueueInfo) -> None:
    """:raises IntegrityError: ORA-24006 when the queue exists."""
    if c.execute("SELECT 1 FROM AQ_QUEUES WHERE OWNER = ? AND NAME = ?", (q.owner, q.name)).fetchone():
        raise ora(24006, q.qualified)
    q.qid = c.execute(
        "INSERT INTO AQ_QUEUES (OWNER, NAME, QT_ID, QUEUE_TYPE, MAX_RETRIES, RETRY_DELAY,"
        " RETENTION_TIME, ENQUEUE_ENABLED, DEQUEUE_ENABLED, USER_COMMENT, CREATED)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING QID",
        (q.owner, q.name, q.table.qt_id, q.queue_type, q.max_retries, q.retry_delay,
         q.retention_time, int(q.enqueue_enabled), int(q.dequeue_enabled), q.comment,
         time.time())).fetchone()[0]


def insert_queue_noting(c, q: QueueInfo, kind: str, owner: str, name: str, entries: dict) -> None:
    """:func:`insert_queue` and, in the same transaction, ``entries`` merged into the
    catalog row (``kind``, ``owner``, ``name``) as it is now (a sharded queue's row names
    its exception queue: the queue and the row's entry are made together or not at all)."""
    insert_queue(c, q)
    merge_object(c, kind, owner, name, lambda spec: {**spec, **entries}, create=True)


def merge_object(c, kind: str, owner: str, name: str, change: Callable[[dict], dict],
                 create: bool) -> dict | None:
    """Inside a DDL transaction: the catalog row's spec replaced by ``change(spec)``, read
    and written in this one transaction with the row locked, so two changes of one row at
    once (SET_QUEUE_PARAMETER, CREATE_EXCEPTION_QUEUE) each see the other's and neither is
    lost.  SQLite's write transaction (BEGIN IMMEDIATE) already excludes every other
    writer; PostgreSQL locks the row (``FOR UPDATE``; a missing row is first inserted
    empty, so there is a row to lock and a second inserter waits for it).  Returns the
    new spec; None, writing nothing, when there is no row and ``create`` is false (its
    object was dropped meanwhile)."""
    where = "WHERE KIND = ? AND OWNER = ? AND NAME = ?"
    postgres = c.dialect.name == "postgresql"
    if postgres and create:
        c.execute("INSERT INTO SLUICE_CATALOG (KIND, OWNER, NAME, SPEC) VALUES (?,?,?,?) "
                  "ON CONFLICT (KIND, OWNER, NAME) DO NOTHING", (kind, owner, name, "{}"))
    row = c.execute(f"SELECT SPEC FROM SLUICE_CATALOG {where}{' FOR UPDATE' if postgres else ''}",
                    (kind, owner, name)).fetchone()
    if row is None and not create:
        return None
    spec = change(json.loads(row[0]) if row else {})
    put_object(c, kind, owner, name, spec, True)
    return spec


def update_queue(c, q: QueueInfo) -> None:
    c.execute("UPDATE AQ_QUEUES SET MAX_RETRIES = ?, RETRY_DELAY = ?, RETENTION_TIME = ?,"
              " ENQUEUE_ENABLED = ?, DEQUEUE_ENABLED = ?, USER_COMMENT = ? WHERE QID = ?",
              (q.max_retries, q.retry_delay, q.retention_time, int(q.enqueue_enabled),
               int(q.dequeue_enabled), q.comment, q.qid))


def drop_queue(c, q: QueueInfo) -> None:
    """Remove the queue and every message in it."""
    c.execute(f"DELETE FROM {table_name(q.table)} WHERE Q_NAME = ?", (q.name,))
    c.execute(f"DELETE FROM {STATS_TABLE} WHERE QID = ?", (q.qid,))
    c.execute("DELETE FROM AQ_QUEUES WHERE QID = ?", (q.qid,))


def queues(c, tables: dict[int, QueueTableInfo]) -> list[QueueInfo]:
    rows = c.execute(
        "SELECT OWNER, NAME, QT_ID, QUEUE_TYPE, MAX_RETRIES, RETRY_DELAY, RETENTION_TIME,"
        " ENQUEUE_ENABLED, DEQUEUE_ENABLED, USER_COMMENT, QID FROM AQ_QUEUES ORDER BY QID").fetchall()
    return [QueueInfo(r[0], r[1], tables[r[2]], r[3], r[4], r[5], r[6], bool(r[7]), bool(r[8]),
                      r[9], r[10]) for r in rows if r[2] in tables]


def put_object(c, kind: str, owner: str, name: str, spec: dict, replace: bool) -> None:
    """:raises IntegrityError: ORA-00955 when it exists and ``replace`` is false."""
    exists = c.execute("SELECT 1 FROM SLUICE_CATALOG WHERE KIND = ? AND OWNER = ? AND NAME = ?",
                       (kind, owner, name)).fetchone()
    if exists and not replace:
        raise ora(955)
    c.execute("INSERT INTO SLUICE_CATALOG (KIND, OWNER, NAME, SPEC) VALUES (?,?,?,?) "
              "ON CONFLICT (KIND, OWNER, NAME) DO UPDATE SET SPEC = excluded.SPEC",
              (kind, owner, name, json.dumps(spec)))


def drop_object(c, kind: str, owner: str, name: str) -> bool:
    return bool(c.execute("DELETE FROM SLUICE_CATALOG WHERE KIND = ? AND OWNER = ? AND NAME = ? "
                          "RETURNING KIND", (kind, owner, name)).fetchall())


def drop_grants(c, obj: str) -> None:
    """The object privileges granted on the table ``obj`` (``OWNER.NAME``: TABPRIV rows, see
    :mod:`sluice.security.catalog`) go with it, as Oracle's: one made again under the name
    is nobody else's to use."""
    c.execute("DELETE FROM SLUICE_CATALOG WHERE KIND = 'TABPRIV' AND NAME = ?", (obj,))


def objects(c, kind: str) -> list[tuple[str, str, dict]]:
    return objects_of(c, (kind,))[kind]


def objects_of(c, kinds: tuple[str, ...]) -> dict[str, list[tuple[str, str, dict]]]:
    """:func:`objects` of each of ``kinds`` in one statement (each kind's rows in its order)."""
    found: dict[str, list[tuple[str, str, dict]]] = {kind: [] for kind in kinds}
    rows = c.execute(f"SELECT KIND, OWNER, NAME, SPEC FROM SLUICE_CATALOG WHERE KIND IN "
                     f"({', '.join('?' * len(kinds))}) ORDER BY KIND, OWNER, NAME", tuple(kinds)).fetchall()
    for kind, owner, name, spec in rows:
        found[kind].append((owner, name, json.loads(spec)))
    return found


def bump_version(c) -> None:
    """Inside a DDL transaction: the catalog changed (every process's caches must reload)."""
    c.execute("UPDATE SLUICE_META SET VALUE = CAST(CAST(VALUE AS INTEGER) + 1 AS TEXT) "
              "WHERE KEY = 'catalog_version'")


def version(c) -> int:
    return int(c.execute("SELECT VALUE FROM SLUICE_META WHERE KEY = 'catalog_version'").fetchone()[0])
