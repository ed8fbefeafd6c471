"""The destination side: enqueue a propagated batch, exactly once.

:func:`receive` puts a :class:`~.wire.Batch` into the destination queues through the
session ``ctx`` (the database link's user at the destination, or the propagating
session itself when source and destination are one site) and records, in the same
transaction, which messages it received: per destination queue one
``SLUICE_PROPAGATION_INDOUBT`` row holding the ids of the batch's messages there (source
site, destination queue, the ids end to end — a row and a statement per batch, not per
message).  A message whose id is in a row already was committed by an earlier delivery
whose answer was lost — the sender's process died, or the HTTP response never arrived —
and is skipped: the rows are looked up for a batch the sender marks as a possible resend.
For the others they are checked inside the commit (:func:`_settle_received`): after the
statement that counts the batch in ``SLUICE_PROPAGATION_RECEIVERS`` — whose row lock
makes two deliveries of one sender and queue commit one after the other, so the second
reads what the first wrote —, the rows of that sender and queue are read and a message
found there refuses the commit (ORA-00001; the sender then resends).  A row lives while
its messages are in doubt: each batch names the messages of earlier ones the source has
since let go (``acked``, with their queue), and the rows holding only those go in the
same commit (a row with others left keeps those).  Few rows are ever in doubt (the last
batch of each sender, and those of senders that died): reading them all costs less than
an index entry per message.  The caller commits (seed 001 "Ensured Message Delivery": the
source lets go of a message only after this commit).

The destination checks what any enqueue checks (seed 003 "Propagation Features"): the
queue exists (ORA-24010) and takes enqueues (ORA-25207), the link's user (at the source's
own site: the source queue's owner) may enqueue into it — in a secure queue as the
message's sender agent (ORA-01031, ORA-25224, ORA-24093; seed 001 "Secure Queues") —, and
the payload types match, the stored form too (ORA-25215).
"""

from __future__ import annotations

import math
import time
from typing import Any

from ... import constants as C
from ...aq.bufferedendpoint import Endpoint
from ...aq.queue import fan_out_all, store_buffered, store_records
from ...aq.sharded import check_sharded_pair
from ...errors import ora
from ...model import Agent
from ...security.authorize import Authorizer
from ...store.base import MessageRecord, QueueInfo, new_msgid
from .wire import Batch, Propagated

INDOUBT = "SLUICE_PROPAGATION_INDOUBT"


def receive(ctx: Any, batch: Batch, dedup: bool = True, foreign: bool = False,
            propagator: str | None = None) -> int:
    """Enqueue ``batch`` in ``ctx``'s transaction (uncommitted); the number of messages
    enqueued (those received before are not).  ``dedup`` False: source and destination
    share this transaction, so nothing can have been received twice.  ``foreign``: the
    batch came from outside this process (over HTTP), so each payload's stored form is
    read as its consumers will read it (ORA-25215); a batch this process's own sender
    encoded with the same codecs is not read twice.  ``propagator``: source and destination
    are one site, and this user — the source queue's owner — propagates: its rights count,
    not those of ``ctx``'s user (the session the propagation runs on)."""
    by_queue: dict[str, list[Propagated]] = {}
    for m in batch.messages:
        by_queue.setdefault(m.dest_queue, []).append(m)
    now = time.time()
    done = 0
    fresh: dict[str, list[bytes]] = {}     # destination queue: the ids of what was enqueued there
    for dest, msgs in by_queue.items():
        owner, _, name = dest.partition(".")
        q = ctx.catalog.queue_by_key((owner, name))        # ORA-24010
        if batch.source_sharded is not None:    # the source could not know this queue's kind
            check_sharded_pair(batch.source_sharded, q)
        if q.is_exception_queue or not q.enqueue_enabled:
            raise ora(25207, q.qualified)
        # the stored form as it is (nothing decoded): bytes in a RAW queue, text in the others
        stored = (bytes, bytearray, memoryview) if q.table.payload_type == "RAW" else str
        for m in msgs:
            if m.payload_type != q.table.payload_type:
                got = m.payload_type
            elif m.user_data is not None and not isinstance(m.user_data, stored):
                got = f"{m.payload_type} as {'bytes' if stored is str else 'text'}"
            else:
                continue
            raise ora(25215, f"queue {q.qualified} holds {q.table.payload_type}, the propagated message {got}")
        if foreign:
            codec = ctx.catalog.codec(q.table)
            for m in msgs:
                codec.check_stored(m.user_data)
        # each distinct sender once (a batch's messages mostly share one)
        senders = {None if s is None else Agent(*s) for s in {m.sender for m in msgs}}
        if propagator is None:
            ctx.authz.check_enqueue(q, senders)
        else:
            Authorizer(ctx.security, propagator, roles=False).check_propagated_enqueue(q, senders)
        buffered = [m for m in msgs if m.buffered]
        if buffered:
            msgs = [m for m in msgs if not m.buffered]
            _buffer(ctx, q, buffered, batch.source_site, now)
            done += len(buffered)
            if not msgs:
                continue
        if dedup and batch.resend:
            seen = _received(ctx, batch.source_site, dest)
            msgs = [m for m in msgs if m.source_msgid not in seen]
            if not msgs:
                continue
        tid = ctx.txn_id() if any(not m.group for m in msgs) else None
        records = _records(ctx, q, msgs, batch.source_site, now, tid)
        if q.table.multiple_consumers:      # one record per recipient there
            records = fan_out_all(ctx, q, records, [[Agent(r) for r in m.recipients] if m.recipients else []
                                                    for m in msgs], ctx.catalog.codec(q.table))
        store_records(ctx, q, records, immediate=False)
        fresh[dest] = [m.source_msgid for m in msgs]
        done += len(msgs)
    if fresh or (dedup and batch.acked):
        site, queue, acked = batch.source_site, batch.source_queue, list(batch.acked) if dedup else []
        ctx.session.add_commit_work(
            lambda c: _settle_received(c, site, queue, fresh, acked, now, dedup))
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
        store_buffered(ctx, q, fan_out_all(ctx, q, [record], [[Agent(r) for r in m.recipients] if m.recipients
                                                              else []], codec, buffered=True), endpoint)


def _received(ctx: Any, site: str, dest: str) -> set[bytes]:
    """The ids of the messages from ``site`` enqueued into ``dest`` and still in doubt."""
    _, rows = ctx.session.query(f"SELECT MSG_COUNT, MSGIDS FROM {INDOUBT} WHERE SOURCE_SITE = :s "
                                f"AND DEST_QUEUE = :d", {"s": site, "d": dest})
    return {m for count, ids in rows for m in _ids(count, bytes(ids))}


def _ids(count: int, packed: bytes) -> list[bytes]:
    """The ids of a row: ``count`` ids of one length, end to end; none for a row that
    holds no such ids — an empty id, which a receiver took before it checked the ids
    (:func:`.wire.from_json`), left ``MSG_COUNT`` 1 and ``MSGIDS`` empty."""
    if count <= 0 or not packed or len(packed) % count:
        return []
    size = len(packed) // count
    return [packed[i:i + size] for i in range(0, len(packed), size)]


def _rows(msgids: list[bytes]) -> list[tuple[bytes, int, bytes]]:
    """``(BATCH_ID, MSG_COUNT, MSGIDS)`` of the rows holding ``msgids``: one (Sluice's ids
    are all 16 bytes) or, for ids of several lengths, one per length."""
    by_size: dict[int, list[bytes]] = {}
    for m in msgids:
        by_size.setdefault(len(m), []).append(m)
    return [(ids[0], len(ids), b"".join(ids)) for ids in by_size.values()]


# V$PROPAGATION_RECEIVER's counts, in the receiving transaction
_COUNT = ("INSERT INTO SLUICE_PROPAGATION_RECEIVERS (SOURCE_SITE, SOURCE_QUEUE, DEST_QUEUE, TOTAL_MSGS, "
          "LAST_RECEIVED) VALUES (?, ?, ?, ?, ?) ON CONFLICT (SOURCE_SITE, SOURCE_QUEUE, DEST_QUEUE) DO UPDATE "
          "SET TOTAL_MSGS = SLUICE_PROPAGATION_RECEIVERS.TOTAL_MSGS + EXCLUDED.TOTAL_MSGS, "
          "LAST_RECEIVED = EXCLUDED.LAST_RECEIVED")
_IN_DOUBT = f"SELECT BATCH_ID, MSG_COUNT, MSGIDS FROM {INDOUBT} WHERE SOURCE_SITE = ? AND DEST_QUEUE = ?"
_INSERT = (f"INSERT INTO {INDOUBT} (SOURCE_SITE, DEST_QUEUE, BATCH_ID, SOURCE_QUEUE, RECEIVED, MSG_COUNT, "
           f"MSGIDS) VALUES (?, ?, ?, ?, ?, ?, ?)")
_DROP = f"DELETE FROM {INDOUBT} WHERE SOURCE_SITE = ? AND DEST_QUEUE = ? AND BATCH_ID = ?"
_KEEP = f"UPDATE {INDOUBT} SET MSG_COUNT = ?, MSGIDS = ? WHERE SOURCE_SITE = ? AND DEST_QUEUE = ? AND BATCH_ID = ?"


def _settle_received(c: Any, site: str, source_queue: str, fresh: dict[str, list[bytes]],
                     acked: list[tuple[str, bytes]], now: float, dedup: bool) -> None:
    """Commit work: count what was enqueued (``fresh``) and, with ``dedup``, record it as in
    doubt and drop what the sender let go (``acked``).  Queue by queue in name order (two
    deliveries lock their counters in one order).  :raises: ORA-00001 when a message of
    ``fresh`` is in doubt already: the commit is refused, nothing of the batch stays."""
    let_go: dict[str, set[bytes]] = {}
    for dest, msgid in acked:
        let_go.setdefault(dest, set()).add(msgid)
    for dest in sorted(set(fresh) | set(let_go)):
        ids = fresh.get(dest)
        if ids:     # first: the counter row stays locked to the commit (see the module's doc)
            c.execute(_COUNT, (site, source_queue, dest, len(ids), now))
        if not dedup:
            continue
        gone = let_go.get(dest, set())
        new = set(ids or ())
        for batch_id, count, packed in c.execute(_IN_DOUBT, (site, dest)).fetchall():
            held = _ids(count, bytes(packed))
            if not held:        # it keeps nothing from coming twice: it goes
                c.execute(_DROP, (site, dest, batch_id))
                continue
            if new and not new.isdisjoint(held):
                raise ora(1, f"SYS.{INDOUBT}: {len(new.intersection(held))} of the batch's messages "
                             f"were received before")
            if gone and not gone.isdisjoint(held):
                left = [m for m in held if m not in gone]
                if left:
                    c.execute(_KEEP, (len(left), b"".join(left), site, dest, batch_id))
                else:
                    c.execute(_DROP, (site, dest, batch_id))
        for batch_id, count, packed in _rows(ids or []):
            c.execute(_INSERT, (site, dest, batch_id, source_queue, now, count, packed))


def _records(ctx: Any, q: QueueInfo, msgs: list[Propagated], site: str, now: float,
             tid: str | None) -> list[MessageRecord]:
    """:func:`_record` of each of ``msgs``; a message READY at once that never expires
    (a captured LCR's, most propagated ones) built inline, its group's name made once per
    run of messages of one group."""
    out = []
    append, new_id, user, name = out.append, new_msgid, ctx.username, q.name
    ready, persistent = C.MSG_READY, C.MSG_PERSISTENT
    group, group_tid = None, None
    for m in msgs:
        if m.delay or m.expiration is not None:
            append(_record(ctx, q, m, site, now, tid))
            continue
        if m.group != group:
            group = m.group
            group_tid = f"{site}:{group}" if group else None
        sender = m.sender or (None, None, None)
        original_queue = m.original_queue or (None, None)
        # positional, in MessageRecord's field order, as _record writes it
        append(MessageRecord(
            None, name, new_id(), m.correlation, m.priority, ready, None, None, None, None, None, now, user,
            group_tid or tid or ctx.txn_id(), None, None, None, 0, None, None, sender[0], sender[1], sender[2],
            m.original_msgid, original_queue[1], original_queue[0], None, None, None, persistent, m.user_data))
    return out


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
