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
from .sqlschema import aq_view_select, physical, quote, table_name

_VALUES = operator.attrgetter(*(c.lower() for c in RECORD_COLUMNS))
_COLUMNS = ", ".join(RECORD_COLUMNS)


def memory_views(execute: Callable[[str, tuple], object], executemany: Callable[[str, list], object],
                 d, in_memory: Iterable[tuple[QueueTableInfo, list[MessageRecord]]],
                 known: dict[tuple[str, str], str]) -> None:
    """Create (or refresh) the temporary table and view of each queue table in
    ``in_memory`` and map its ``AQ$`` name to that view in ``known`` (see
    :func:`sqlnames.rewrite`).  ``execute``/``executemany`` run SQL with ``?``
    placeholders on the session's connection."""
    temp = "temp" if d.name == "sqlite" else "pg_temp"
    for qt, records in in_memory:
        if not records:
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
