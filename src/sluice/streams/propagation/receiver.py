"""The destination side: enqueue a propagated batch, exactly once.

:func:`receive` puts a :class:`~.wire.Batch` into the destination queues through the
session ``ctx`` (the database link's user at the destination, or the propagating
session itself when source and destination are one site) and writes, in the same
transaction, one ``SLUICE_PROPAGATION_RECEIVED`` row per message: (source site, source
message id, destination queue).  A message whose row is there already was committed by
an earlier delivery whose answer was lost — the sender's process died, or the HTTP
response never arrived — and is skipped.  The rows are looked up for a batch the sender
marks as a possible resend; for the others they are only written, and their primary key
makes a duplicate fail the commit rather than enter the queue (the sender then resends).
A row lives while its message is in doubt: each batch names the messages of earlier ones
the source has since let go (``acked``, with their queue), and their rows go in the same
commit.  The caller commits (seed 001 "Ensured Message Delivery": the source lets go of a
message only after this commit).

The destination checks what any enqueue checks (seed 003 "Propagation Features"): the
queue exists (ORA-24010) and takes enqueues (ORA-25207), the link's user may enqueue
into it — in a secure queue as the message's sender agent (ORA-01031, ORA-25224,
ORA-24093; seed 001 "Secure Queues") —, and the payload types match (ORA-25215).
"""

from __future__ import annotations

import math
import time
from typing import Any

from ... import constants as C
from ...aq.bufferedendpoint import Endpoint
from ...aq.queue import fan_out_all, store_records
from ...errors import ora
from ...model import Agent
from ...store.base import MessageRecord, QueueInfo, new_msgid
from .wire import Batch, Propagated

RECEIVED = "SLUICE_PROPAGATION_RECEIVED"
_CHUNK = 400


def receive(ctx: Any, batch: Batch, dedup: bool = True) -> int:
    """Enqueue ``batch`` in ``ctx``'s transaction (uncommitted); the number of messages
    enqueued (those received before are not).  ``dedup`` False: source and destination
    share this transaction, so nothing can have been received twice."""
    by_queue: dict[str, list[Propagated]] = {}
    for m in batch.messages:
        by_queue.setdefault(m.dest_queue, []).append(m)
    now = time.time()
    done = 0
    for dest, msgs in by_queue.items():
        owner, _, name = dest.partition(".")
        q = ctx.catalog.queue_by_key((owner, name))        # ORA-24010
        if q.is_exception_queue or not q.enqueue_enabled:
            raise ora(25207, q.qualified)
        for m in msgs:
            if m.payload_type != q.table.payload_type:
                raise ora(25215, f"queue {q.qualified} holds {q.table.payload_type}, the propagated "
                                 f"message {m.payload_type}")
        ctx.authz.check_enqueue(q, {_sender(m) for m in msgs})
        buffered = [m for m in msgs if m.buffered]
        if buffered:
            msgs = [m for m in msgs if not m.buffered]
            _buffer(ctx, q, buffered, batch.source_site, now)
            done += len(buffered)
            if not msgs:
                continue
        if dedup and batch.resend:
            seen = _received(ctx, batch.source_site, dest, [m.source_msgid for m in msgs])
            msgs = [m for m in msgs if m.source_msgid not in seen]
            if not msgs:
                continue
        tid = ctx.txn_id() if any(not m.group for m in msgs) else None
        records = [_record(ctx, q, m, batch.source_site, now, tid) for m in msgs]
        codec = ctx.catalog.codec(q.table)
        stored = fan_out_all(ctx, q, records, [[Agent(r) for r in m.recipients] if m.recipients else []
                                               for m in msgs], codec)
        store_records(ctx, q, stored, immediate=False)
        if dedup:
            rows = [(batch.source_site, m.source_msgid, dest, batch.source_queue, now) for m in msgs]
            ctx.session.add_commit_work(lambda c, rows=rows: _insert_received(c, rows))
        counted = (batch.source_site, batch.source_queue, dest, len(msgs), now)
        ctx.session.add_commit_work(lambda c, counted=counted: c.execute(_COUNT, counted))
        done += len(msgs)
    if dedup and batch.acked:
        site, acked = batch.source_site, list(batch.acked)
        ctx.session.add_commit_work(lambda c: _forget(c, site, acked))
    return done


def _buffer(ctx: Any, q: QueueInfo, msgs: list[Propagated], site: str, now: float) -> None:
    """Buffered messages go into the destination queue's buffered part, in this process's
    memory, at once (seed 003 "Propagating Buffered Messages": best effort — no
    de-duplication rows; a crash of this process before they are dequeued or spilled
    loses them, and a batch sent again may bring one twice)."""
    endpoint = Endpoint.of_session(ctx)
    codec = ctx.catalog.codec(q.table)
    for m in msgs:
        record = _record(ctx, q, m, site, now)
        record.enq_tid = ctx.txn_id()     # no transaction grouping in buffered messaging
        endpoint.enqueue(q, fan_out_all(ctx, q, [record], [[Agent(r) for r in m.recipients] if m.recipients
                                                           else []], codec, buffered=True))


def _sender(m: Propagated) -> Agent | None:
    if m.sender is None:
        return None
    return Agent(*m.sender)


def _received(ctx: Any, site: str, dest: str, msgids: list[bytes]) -> set[bytes]:
    """Which of ``msgids`` from ``site`` were enqueued into ``dest`` already (one index
    probe each, by the table's primary key)."""
    sql = (f"SELECT SOURCE_MSGID FROM {RECEIVED} WHERE SOURCE_SITE = :s AND DEST_QUEUE = :d "
           f"AND SOURCE_MSGID")
    if ctx.store.dialect == "postgresql":      # the ids as one array parameter
        _, rows = ctx.session.query(f"{sql} = ANY(:ids)", {"s": site, "d": dest, "ids": msgids})
        return {bytes(r[0]) for r in rows}
    seen: set[bytes] = set()
    for i in range(0, len(msgids), _CHUNK):
        chunk = msgids[i:i + _CHUNK]
        binds = {f"m{k}": v for k, v in enumerate(chunk)}
        binds.update(s=site, d=dest)
        _, rows = ctx.session.query(f"{sql} IN ({', '.join(':m' + str(k) for k in range(len(chunk)))})", binds)
        seen.update(bytes(r[0]) for r in rows)
    return seen


_COLUMNS = "SOURCE_SITE, SOURCE_MSGID, DEST_QUEUE, SOURCE_QUEUE, RECEIVED"
# V$PROPAGATION_RECEIVER's counts, in the receiving transaction
_COUNT = ("INSERT INTO SLUICE_PROPAGATION_RECEIVERS (SOURCE_SITE, SOURCE_QUEUE, DEST_QUEUE, TOTAL_MSGS, "
          "LAST_RECEIVED) VALUES (?, ?, ?, ?, ?) ON CONFLICT (SOURCE_SITE, SOURCE_QUEUE, DEST_QUEUE) DO UPDATE "
          "SET TOTAL_MSGS = SLUICE_PROPAGATION_RECEIVERS.TOTAL_MSGS + EXCLUDED.TOTAL_MSGS, "
          "LAST_RECEIVED = EXCLUDED.LAST_RECEIVED")


def _insert_received(c: Any, rows: list[tuple]) -> None:
    """Write the batch's de-duplication rows (commit work).  :raises: ORA-00001 when one
    was there already: the commit is refused, nothing of the batch stays."""
    if c.dialect.bulk_arrays:       # PostgreSQL: one statement over arrays, one per column
        inserted = c.execute(f"INSERT INTO {RECEIVED} ({_COLUMNS}) SELECT * FROM "
                             f"unnest(?::text[], ?::bytea[], ?::text[], ?::text[], ?::double precision[]) "
                             f"ON CONFLICT DO NOTHING", [list(col) for col in zip(*rows)]).rowcount
    else:
        inserted = 0
        for i in range(0, len(rows), _CHUNK):
            chunk = rows[i:i + _CHUNK]
            inserted += c.execute(f"INSERT INTO {RECEIVED} ({_COLUMNS}) VALUES "
                                  f"{', '.join(['(?, ?, ?, ?, ?)'] * len(chunk))} ON CONFLICT DO NOTHING",
                                  [v for row in chunk for v in row]).rowcount
    if inserted != len(rows):
        raise ora(1, f"SYS.{RECEIVED}: {len(rows) - inserted} of the batch's messages were received before")


def _forget(c: Any, site: str, acked: list[tuple[str, bytes]]) -> None:
    """Drop the rows of messages the sender has let go: they cannot come again."""
    by_queue: dict[str, list[bytes]] = {}
    for dest, msgid in acked:
        by_queue.setdefault(dest, []).append(msgid)
    for dest, msgids in by_queue.items():
        if c.dialect.bulk_arrays:
            c.execute(f"DELETE FROM {RECEIVED} WHERE SOURCE_SITE = ? AND DEST_QUEUE = ? "
                      f"AND SOURCE_MSGID = ANY(?::bytea[])", [site, dest, msgids])
            continue
        for i in range(0, len(msgids), _CHUNK):
            chunk = msgids[i:i + _CHUNK]
            c.execute(f"DELETE FROM {RECEIVED} WHERE SOURCE_SITE = ? AND DEST_QUEUE = ? AND SOURCE_MSGID IN "
                      f"({', '.join('?' * len(chunk))})", [site, dest, *chunk])


def _record(ctx: Any, q: QueueInfo, m: Propagated, site: str, now: float, tid: str | None = None) -> MessageRecord:
    """``tid``: the receiving transaction's id (for a message without a source
    transaction), when the caller has it already."""
    ready_at = now + m.delay if m.delay else None
    expire_at = (ready_at or now) + m.expiration if m.expiration is not None else None
    sender = m.sender or (None, None, None)
    original_queue = m.original_queue or (None, None)
    # positional, in MessageRecord's field order (one record per message of every batch)
    return MessageRecord(
        None, q.name, new_msgid(), m.correlation, m.priority,
        C.MSG_WAITING if ready_at else C.MSG_READY, ready_at,
        None if m.expiration is None else int(math.ceil(m.expiration)),
        expire_at, ready_at if ready_at else expire_at, None, now, ctx.username,
        # one group per source transaction (seed 003: grouping is kept across propagation)
        f"{site}:{m.group}" if m.group else tid or ctx.txn_id(),
        None, None, None, 0, None, None, sender[0], sender[1], sender[2],
        m.original_msgid, original_queue[1], original_queue[0], None, None, None,
        C.MSG_PERSISTENT, m.user_data)
