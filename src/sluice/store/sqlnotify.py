"""The notification outbox (``SLUICE_NOTIFICATIONS``), shared by the SQL backends.

An enqueue owes a notification to every registration on its queue (and consumer):
the rows are written by :func:`write` in the enqueuing transaction, so a message
that is rolled back is never announced and a committed one always is, even if the
process that would deliver it dies — another process's dispatcher takes over when
the claim's lease runs out (seed 003 "Reliable Notification").
"""

from __future__ import annotations

from .base import MessageRecord

_WRITE = ("INSERT INTO SLUICE_NOTIFICATIONS (REG_ID, MSGID, QUEUE, CONSUMER_NAME, DELIVERY_MODE, "
          "PAYLOAD, CREATED) VALUES (?, ?, ?, ?, ?, ?, ?)")


def write(conn, queue_qualified: str, records: list[MessageRecord]) -> None:
    """The outbox rows of ``records`` (their ``notices``)."""
    rows = [(reg_id, r.msgid, queue_qualified, r.consumer_name, r.delivery_mode, payload, r.enq_time)
            for r in records if r.notices for reg_id, payload in r.notices]
    if len(rows) == 1:
        conn.execute(_WRITE, rows[0])
    elif rows:
        conn.executemany(_WRITE, rows)


def forget(conn, msgids: list[bytes]) -> None:
    """A transaction undoing its own enqueues takes their notifications back."""
    if msgids:
        conn.execute(f"DELETE FROM SLUICE_NOTIFICATIONS WHERE MSGID IN ({', '.join('?' * len(msgids))})",
                     msgids)


def claim(conn, reg_ids: list[str], now: float, lease: float, limit: int) -> list[tuple]:
    """Take up to ``limit`` pending notifications of ``reg_ids`` for ``lease`` seconds:
    ``(ID, REG_ID, MSGID, QUEUE, CONSUMER_NAME, DELIVERY_MODE, PAYLOAD, CREATED, ATTEMPTS)``
    in order.  Called inside a write transaction (one claimer at a time per row)."""
    if not reg_ids:
        return []
    marks = ", ".join("?" * len(reg_ids))
    rows = conn.execute(
        f"SELECT ID, REG_ID, MSGID, QUEUE, CONSUMER_NAME, DELIVERY_MODE, PAYLOAD, CREATED, ATTEMPTS "
        f"FROM SLUICE_NOTIFICATIONS WHERE REG_ID IN ({marks}) AND (CLAIMED_UNTIL IS NULL OR CLAIMED_UNTIL < ?) "
        f"ORDER BY ID LIMIT {int(limit)}{conn.dialect.lock_rows}", [*reg_ids, now]).fetchall()
    if rows:
        d = conn.dialect
        conn.execute(f"UPDATE SLUICE_NOTIFICATIONS SET CLAIMED_UNTIL = ?, ATTEMPTS = ATTEMPTS + 1 "
                     f"WHERE {d.in_list('ID')}", (now + lease, d.list_param([r[0] for r in rows])))
    return rows


def finish(conn, ids: list[int]) -> None:
    """Delivered (or given up): the rows go."""
    if ids:
        d = conn.dialect
        conn.execute(f"DELETE FROM SLUICE_NOTIFICATIONS WHERE {d.in_list('ID')}", (d.list_param(ids),))


def release(conn, ids: list[int], at: float) -> None:
    """Not delivered yet: offer them again from ``at`` (a retry with back-off)."""
    if ids:
        d = conn.dialect
        conn.execute(f"UPDATE SLUICE_NOTIFICATIONS SET CLAIMED_UNTIL = ? WHERE {d.in_list('ID')}",
                     (at, d.list_param(ids)))


def drop_registration(conn, reg_id: str) -> None:
    conn.execute("DELETE FROM SLUICE_NOTIFICATIONS WHERE REG_ID = ?", (reg_id,))
