"""Buffered messaging (seed 003 "Buffered Messaging", "Flow Control"; seeds 001/002
"Buffered queues").

Buffered messages use the same queues as persistent ones, distinguished by the
delivery mode, but live in this process's memory (Oracle's streams pool): no
transactions (IMMEDIATE visibility only), no delay, no retention, no retry count, no
transaction grouping, one message per array operation.  A message moves to the queue
table (*spills*, still a buffered message: ``DELIVERY_MODE`` 2, shown SPILLED in
``AQ$<queue_table>``) when the memory in use passes the limit — oldest first, so a slow
subscriber's backlog spills and the fast ones go on — or when it has waited longer
than ``spill_after``.  A sender with ``flow_control_threshold`` messages still in memory
waits, then gets ORA-25307; other senders are not held up.  An expired buffered
message goes to the exception queue as a persistent message.

What a crash loses: the buffered messages of the process that had not spilled (seed
001: "some of the information in a buffered queue can be lost if the instance …
shuts down").
"""

from __future__ import annotations

import bisect
import collections
import threading
import time
import weakref
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable

from .. import constants as C
from ..errors import ora
from ..rules.pycompile import like_regex
from ..store.base import MessageRecord, QueueInfo, Selector

if TYPE_CHECKING:
    from ..connection import Connection

_pools: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_pools_lock = threading.Lock()


@dataclass
class BufferedLimits:
    memory_limit: int = 64 * 1024 * 1024     # bytes of buffered payload kept in memory
    spill_after: float = 300.0               # seconds a message may wait in memory
    flow_control_threshold: int = 10_000     # messages in memory per sender
    flow_control_timeout: float = 5.0        # seconds a held-up sender waits


@dataclass(eq=False)   # entries are told apart by identity
class _Entry:
    key: tuple
    record: MessageRecord
    size: int
    sender: str | None
    locked_by: object | None = None
    gone: bool = False


@dataclass
class _Queue:
    lists: dict = field(default_factory=dict)     # consumer -> sorted list of _Entry


def pool_for(store) -> "BufferedPool":
    with _pools_lock:
        p = _pools.get(store)
        if p is None:
            p = _pools[store] = BufferedPool(store)
        return p


class BufferedPool:
    """The buffered messages of one store in this process."""

    def __init__(self, store) -> None:
        self.store = store
        self.limits = BufferedLimits()
        self._cond = threading.Condition()
        self._queues: dict[str, _Queue] = {}
        self._fifo: dict[str, collections.deque] = {}   # queue -> entries in enqueue order
        self._memory = 0
        self._senders: dict[tuple[str, str | None], int] = {}
        self._seq = 0
        self._locked: dict[int, list[_Entry]] = {}    # id(session) -> entries it LOCKED
        self._spiller: Callable[[QueueInfo, list[MessageRecord]], None] | None = None

    # -- enqueue ------------------------------------------------------------
    def put(self, q: QueueInfo, records: list[MessageRecord], spill: Callable) -> None:
        """Keep ``records`` (one message, a record per consumer) in memory."""
        sender = records[0].sender_name
        key = (q.qualified, sender)
        deadline = time.monotonic() + self.limits.flow_control_timeout
        with self._cond:
            while self._senders.get(key, 0) >= self.limits.flow_control_threshold:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ora(25307)
                self._cond.wait(remaining)
            queue = self._queues.setdefault(q.qualified, _Queue())
            order = q.table.order_columns
            for r in records:
                self._seq += 1
                r.seq = -self._seq          # negative: never a table's SEQ
                size = (len(r.user_data) if r.user_data is not None else 0) + 200
                k = tuple(getattr(r, c.lower()) for c in order[:-1]) + (self._seq,)
                entry = _Entry(k, r, size, sender)
                entries = queue.lists.setdefault((r.consumer_name, r.address), [])
                if not entries or entries[-1].key < k:
                    entries.append(entry)          # the usual case: it goes last
                else:
                    bisect.insort(entries, entry, key=lambda e: e.key)
                self._fifo.setdefault(q.qualified, collections.deque()).append(entry)
                self._memory += size
                self._senders[key] = self._senders.get(key, 0) + 1
            self._cond.notify_all()
        self._spill_if_needed(q, spill)

    # -- dequeue ------------------------------------------------------------
    def take(self, q: QueueInfo, sel: Selector, after: tuple | None, mode: int, owner: object,
             expire: Callable[[QueueInfo, MessageRecord], None]) -> tuple[MessageRecord, tuple] | None:
        """The first buffered message ``sel`` wants after position ``after`` (REMOVE takes it
        out of memory).  The record returned is shared: callers only read it."""
        now = time.time()
        corr = like_regex(sel.correlation, None) if sel.correlation is not None else None
        expired: list[MessageRecord] = []
        found = None
        with self._cond:
            queue = self._queues.get(q.qualified)
            entries = queue.lists.get((sel.consumer_name if sel.multi else None, None), []) if queue else []
            for e in list(entries):
                r = e.record
                if r.expire_at is not None and r.expire_at <= now:
                    self._drop(q, entries, e)
                    expired.append(r)
                    continue
                if e.locked_by is not None and e.locked_by is not owner:
                    continue
                if after is not None and e.key <= after:
                    continue
                if sel.msgid is not None and r.msgid != sel.msgid:
                    continue
                if corr is not None and (r.corrid is None or not corr.fullmatch(r.corrid)):
                    continue
                if sel.predicate is not None and not sel.predicate(r):
                    continue
                found = e
                break
            if found is not None:
                if mode in (C.DEQ_REMOVE, C.DEQ_REMOVE_NODATA):
                    self._drop(q, entries, found)
                elif mode == C.DEQ_LOCKED:
                    found.locked_by = owner
                    self._locked.setdefault(id(owner), []).append(found)
        for r in expired:   # seed 003: to the exception queue, as a persistent message
            expire(q, r)
        if found is None:
            return None
        return found.record, found.key

    def position(self, q: QueueInfo, rec: MessageRecord) -> tuple:
        return tuple(getattr(rec, c.lower()) for c in q.table.order_columns[:-1])

    def release(self, owner: object) -> None:
        """LOCKED messages of a session come free when it commits or rolls back."""
        if not self._locked:
            return
        with self._cond:
            for e in self._locked.pop(id(owner), []):
                if e.locked_by is owner:
                    e.locked_by = None

    def _drop(self, q: QueueInfo, entries: list, e: _Entry) -> None:
        if entries and entries[0] is e:
            del entries[0]
        else:
            entries.remove(e)
        e.gone = True
        self._memory -= e.size
        key = (q.qualified, e.sender)
        self._senders[key] = self._senders.get(key, 1) - 1
        self._cond.notify_all()

    # -- spill ----------------------------------------------------------------
    def _spill_if_needed(self, q: QueueInfo, spill: Callable) -> None:
        """Oldest first past the memory limit, and whatever waited past ``spill_after``."""
        fifo = self._fifo.get(q.qualified)
        if not fifo:
            return
        now = time.time()
        victims: list[MessageRecord] = []
        with self._cond:
            queue = self._queues[q.qualified]
            while fifo and fifo[0].gone:
                fifo.popleft()
            for e in fifo:   # oldest first; the loop does not change the deque
                if self._memory <= self.limits.memory_limit and now - e.record.enq_time < self.limits.spill_after:
                    break
                if e.gone or e.locked_by is not None:
                    continue
                self._drop(q, queue.lists[(e.record.consumer_name, e.record.address)], e)
                victims.append(e.record)
            while fifo and fifo[0].gone:
                fifo.popleft()
        if victims:
            spill(q, [replace(r, seq=None) for r in victims])

    def spill_old(self, q: QueueInfo, spill: Callable) -> None:
        self._spill_if_needed(q, spill)

    def count(self, q: QueueInfo) -> int:
        with self._cond:
            queue = self._queues.get(q.qualified)
            return sum(len(v) for v in queue.lists.values()) if queue else 0


def configure(conn: "Connection", memory_limit: int | None = None, spill_after: float | None = None,
              flow_control_threshold: int | None = None,
              flow_control_timeout: float | None = None) -> BufferedLimits:
    """Sluice's knobs for buffered messaging in this process (Oracle sizes the streams
    pool instead): memory limit in bytes, spill age in seconds, flow-control threshold
    (messages in memory per sender) and how long a held-up sender waits."""
    limits = pool_for(conn._store).limits
    for name, value in (("memory_limit", memory_limit), ("spill_after", spill_after),
                        ("flow_control_threshold", flow_control_threshold),
                        ("flow_control_timeout", flow_control_timeout)):
        if value is not None:
            setattr(limits, name, value)
    return limits


# -- the Queue's buffered operations ------------------------------------------------
def enqueue(queue_obj, q: QueueInfo, records: list[MessageRecord]) -> None:
    """ENQ with deliverymode MSG_BUFFERED: ``records`` are one message's (a record per
    consumer), already built and checked by the Queue."""
    conn = queue_obj.connection
    opts = queue_obj.enqoptions
    if opts.visibility != C.ENQ_IMMEDIATE:
        raise ora(25236)
    for r in records:
        r.delivery_mode = C.MSG_BUFFERED
    pool_for(conn._store).put(q, records, _spiller(conn))
    conn._store.wake_waiters()


def _spiller(conn: "Connection") -> Callable[[QueueInfo, list[MessageRecord]], None]:
    def spill(q: QueueInfo, records: list[MessageRecord]) -> None:
        for r in records:
            r.notices = None
        conn._session.enqueue(q, records, immediate=True)
    return spill


def _expirer(conn: "Connection") -> Callable[[QueueInfo, MessageRecord], None]:
    def expire(q: QueueInfo, r: MessageRecord) -> None:
        exc = conn._catalog.find_queue(r.exception_qschema or q.owner,
                                       r.exception_queue or q.table.exception_queue_name)
        if exc is None:
            exc = conn._catalog.find_queue(q.owner, q.table.exception_queue_name)
        moved = replace(r, seq=None, q_name=exc.name, state=C.MSG_EXPIRED, delivery_mode=C.MSG_PERSISTENT,
                        consumer_name=None, address=None, expiration_reason="TIME_EXPIRATION",
                        original_queue_name=q.name, original_queue_owner=q.owner,
                        time_manager_info=None, notices=None)
        conn._session.enqueue(exc, [moved], immediate=True)
    return expire


def take(queue_obj, q: QueueInfo, sel: Selector, mode: int,
         nav) -> MessageRecord | None:
    """One buffered message for ``sel``: from memory (``nav.buffered`` is the position
    there), else a spilled one from the table."""
    conn = queue_obj.connection
    pool = pool_for(conn._store)
    got = pool.take(q, sel, nav.buffered, mode, conn, _expirer(conn))
    if got is not None:
        nav.buffered = got[1] if mode in (C.DEQ_BROWSE, C.DEQ_LOCKED) else None
        return got[0]
    nav.buffered = None
    spilled = replace(sel, delivery_mode=C.MSG_BUFFERED, after=None)
    from ..store.base import DequeueInfo
    got = conn._session.dequeue(q, spilled, mode, True, 1, DequeueInfo(user=conn.username,
                                                                       consumer_name=sel.consumer_name))
    return got[0] if got else None
