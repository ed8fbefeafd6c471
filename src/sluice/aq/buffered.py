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
import functools
import operator
import threading
import time
import weakref
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable

from .. import constants as C
from ..errors import ora
from ..rules.pycompile import like_regex
from ..store.base import DequeueInfo, MessageRecord, QueueInfo, QueueTableInfo, Selector

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


class _Entry:
    """One record in memory; entries are told apart by identity."""

    __slots__ = ("key", "record", "size", "sender", "locked_by", "gone")

    def __init__(self, key: tuple, record: MessageRecord, size: int, sender: str | None) -> None:
        self.key = key
        self.record = record
        self.size = size
        self.sender = sender
        self.locked_by: object | None = None
        self.gone = False


_order_keys: dict[tuple[str, ...], Callable[[MessageRecord], tuple]] = {}


def _order_key(table: QueueTableInfo) -> Callable[[MessageRecord], tuple]:
    """A record's position among buffered messages, without the sequence number: the
    values of the table's ``order_columns`` but the last (``SEQ``)."""
    get = _order_keys.get(table.sort_list)
    if get is None:
        columns = [c.lower() for c in table.order_columns[:-1]]
        values = operator.attrgetter(*columns)
        if len(columns) == 1:   # attrgetter of one name gives the value, not a tuple
            def get(r: MessageRecord, one=values) -> tuple:
                return (one(r),)
        else:
            get = values
        get = _order_keys.setdefault(table.sort_list, get)
    return get


_like = functools.lru_cache(maxsize=256)(like_regex)


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
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)     # held-up senders wait on it
        self._held = 0                                   # how many are waiting
        self._queues: dict[str, dict] = {}   # queue -> (consumer, address) -> sorted entries
        self._fifo: dict[str, collections.deque] = {}   # queue -> entries in enqueue order
        self._memory = 0
        self._senders: dict[tuple[str, str | None], int] = {}
        self._seq = 0
        self._locked: dict[int, list[_Entry]] = {}    # id(session) -> entries it LOCKED
        # (queue, consumer) this process spilled messages of that may still be in the
        # table: their dequeues compare the table's first with memory's (one sort order)
        self.spilled: set[tuple[str, str | None]] = set()

    # -- enqueue ------------------------------------------------------------
    def put(self, q: QueueInfo, records: list[MessageRecord], spill: Callable) -> None:
        """Keep ``records`` (one message, a record per consumer) in memory."""
        sender = records[0].sender_name
        qname = q.qualified
        key = (qname, sender)
        order = _order_key(q.table)
        with self._lock:
            if self._senders.get(key, 0) >= self.limits.flow_control_threshold:
                self._hold(key)
            queue = self._queues.get(qname)
            if queue is None:
                queue = self._queues[qname] = {}
                self._fifo[qname] = collections.deque()
            fifo = self._fifo[qname]
            for r in records:
                self._seq += 1
                r.seq = -self._seq          # negative: never a table's SEQ
                size = (len(r.user_data) if r.user_data is not None else 0) + 200
                k = order(r) + (self._seq,)
                entry = _Entry(k, r, size, sender)
                entries = queue.get((r.consumer_name, r.address))
                if entries is None:
                    entries = queue[(r.consumer_name, r.address)] = [entry]
                elif not entries or entries[-1].key < k:
                    entries.append(entry)          # the usual case: it goes last
                else:
                    bisect.insort(entries, entry, key=lambda e: e.key)
                fifo.append(entry)
                self._memory += size
            self._senders[key] = self._senders.get(key, 0) + len(records)
            victims = self._spill_victims(q, queue, fifo, time.time())
            self.spilled.update((qname, v.consumer_name) for v in victims)
        if victims:
            spill(q, victims)

    def _hold(self, key: tuple) -> None:
        """Flow control: wait (lock held) until the sender is under the threshold.
        :raises: ORA-25307 when it is not within the limit's timeout."""
        deadline = time.monotonic() + self.limits.flow_control_timeout
        self._held += 1
        try:
            while self._senders.get(key, 0) >= self.limits.flow_control_threshold:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ora(25307)
                self._cond.wait(remaining)
        finally:
            self._held -= 1

    # -- dequeue ------------------------------------------------------------
    def take(self, q: QueueInfo, sel: Selector, after: tuple | None, mode: int, owner: object,
             expire: Callable[[QueueInfo, MessageRecord], None]) -> tuple[MessageRecord, tuple] | None:
        """The first buffered message ``sel`` wants after position ``after`` (REMOVE takes it
        out of memory).  The record returned is shared: callers only read it."""
        expired: list[_Entry] = []
        with self._lock:
            found, entries = self._find(q, sel, after, owner, expired)
            if found is not None:
                if mode == C.DEQ_REMOVE or mode == C.DEQ_REMOVE_NODATA:
                    self._drop(q, entries, found)
                elif mode == C.DEQ_LOCKED:
                    found.locked_by = owner
                    self._locked.setdefault(id(owner), []).append(found)
        for e in expired:   # seed 003: to the exception queue, as a persistent message
            expire(q, e.record)
        if found is None:
            return None
        return found.record, found.key

    def first_key(self, q: QueueInfo, sel: Selector, after: tuple | None, owner: object) -> tuple | None:
        """The position of the message :meth:`take` would return, taking nothing."""
        with self._lock:
            found, _ = self._find(q, sel, after, owner, None)
            return None if found is None else found.key

    def _find(self, q: QueueInfo, sel: Selector, after: tuple | None, owner: object,
              expired: list | None) -> tuple["_Entry | None", list | None]:
        """(Lock held) the first entry for ``sel`` after ``after``; expired entries met on
        the way are dropped and collected in ``expired`` (left alone when it is None)."""
        queue = self._queues.get(q.qualified)
        entries = queue.get((sel.consumer_name if sel.multi else None, None)) if queue else None
        if not entries:
            return None, entries
        now = time.time()
        corr = _like(sel.correlation, None) if sel.correlation is not None else None
        found = None
        gone = []
        for e in entries:
            r = e.record
            if r.expire_at is not None and r.expire_at <= now:
                gone.append(e)
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
        if expired is not None:
            for e in gone:
                self._drop(q, entries, e)
            expired.extend(gone)
        return found, entries

    def release(self, owner: object) -> None:
        """LOCKED messages of a session come free when it commits or rolls back."""
        if not self._locked:
            return
        with self._lock:
            for e in self._locked.pop(id(owner), []):
                if e.locked_by is owner:
                    e.locked_by = None

    def _drop(self, q: QueueInfo, entries: list, e: _Entry) -> None:
        if entries[0] is e:
            del entries[0]
        else:
            entries.remove(e)
        e.gone = True
        self._memory -= e.size
        key = (q.qualified, e.sender)
        self._senders[key] = self._senders.get(key, 1) - 1
        if self._held:
            self._cond.notify_all()

    # -- spill ----------------------------------------------------------------
    def _spill_victims(self, q: QueueInfo, queue: dict, fifo: collections.deque,
                       now: float) -> list[MessageRecord]:
        """(Lock held) take out of memory, oldest first, what is past the memory limit and
        whatever waited past ``spill_after``; the caller spills them."""
        while fifo and fifo[0].gone:
            fifo.popleft()
        if not fifo:
            return []
        limits = self.limits
        if self._memory <= limits.memory_limit and now - fifo[0].record.enq_time < limits.spill_after:
            return []    # the usual case: nothing to spill
        victims: list[MessageRecord] = []
        for e in fifo:   # oldest first; the loop does not change the deque
            if self._memory <= limits.memory_limit and now - e.record.enq_time < limits.spill_after:
                break
            if e.gone or e.locked_by is not None:
                continue
            self._drop(q, queue[(e.record.consumer_name, e.record.address)], e)
            victims.append(replace(e.record, seq=None))
        while fifo and fifo[0].gone:
            fifo.popleft()
        return victims

    def spill_old(self, q: QueueInfo, spill: Callable) -> None:
        with self._lock:
            queue = self._queues.get(q.qualified)
            victims = self._spill_victims(q, queue, self._fifo[q.qualified], time.time()) if queue else []
            self.spilled.update((q.qualified, v.consumer_name) for v in victims)
        if victims:
            spill(q, victims)

    def in_memory(self) -> dict[str, list[MessageRecord]]:
        """Queue (``OWNER.NAME``) -> the records of its messages in memory now (for the
        ``AQ$`` views, state IN-MEMORY)."""
        with self._lock:
            return {qname: [e.record for entries in queue.values() for e in entries]
                    for qname, queue in self._queues.items() if any(queue.values())}

    def count(self, q: QueueInfo) -> int:
        with self._lock:
            queue = self._queues.get(q.qualified)
            return sum(len(v) for v in queue.values()) if queue else 0


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
class Endpoint:
    """One ``Queue`` object's way into the buffered messages of its connection's store:
    the pool and the connection's spill and expiry paths, looked up once."""

    __slots__ = ("conn", "pool")

    def __init__(self, conn: "Connection") -> None:
        self.conn = conn
        self.pool = pool_for(conn._store)

    def enqueue(self, q: QueueInfo, records: list[MessageRecord]) -> None:
        """ENQ with deliverymode MSG_BUFFERED: ``records`` are one message's (a record per
        consumer), already built and checked by the Queue (IMMEDIATE visibility)."""
        for r in records:
            r.delivery_mode = C.MSG_BUFFERED
        self.pool.put(q, records, self.spill)
        self.conn._store.wake_waiters()

    def spill(self, q: QueueInfo, records: list[MessageRecord]) -> None:
        for r in records:
            r.notices = None
        self.conn._session.enqueue(q, records, immediate=True)

    def expire(self, q: QueueInfo, r: MessageRecord) -> None:
        """Seed 003: an expired buffered message goes to the exception queue, persistent."""
        catalog = self.conn._catalog
        exc = catalog.find_queue(r.exception_qschema or q.owner, r.exception_queue or q.table.exception_queue_name)
        if exc is None:
            exc = catalog.find_queue(q.owner, q.table.exception_queue_name)
        moved = replace(r, seq=None, q_name=exc.name, state=C.MSG_EXPIRED, delivery_mode=C.MSG_PERSISTENT,
                        consumer_name=None, address=None, expiration_reason="TIME_EXPIRATION",
                        original_queue_name=q.name, original_queue_owner=q.owner,
                        time_manager_info=None, notices=None)
        self.conn._session.enqueue(exc, [moved], immediate=True)

    def take(self, q: QueueInfo, sel: Selector, mode: int, nav) -> MessageRecord | None:
        """One buffered message for ``sel``, in the queue's sort order across memory
        (``nav.buffered`` is the position there) and the messages this process spilled
        to the table (spilled oldest first, so usually ahead of memory's)."""
        conn = self.conn
        pool = self.pool
        if pool.spilled and mode != C.DEQ_BROWSE and \
                (q.qualified, sel.consumer_name if sel.multi else None) in pool.spilled:
            got = self._take_spilled_if_first(q, sel, mode, nav)
            if got is not None:
                return got
        got = pool.take(q, sel, nav.buffered, mode, conn, self.expire)
        if got is not None:
            nav.buffered = got[1] if mode == C.DEQ_BROWSE or mode == C.DEQ_LOCKED else None
            return got[0]
        nav.buffered = None
        got = self._dequeue_spilled(q, replace(sel, delivery_mode=C.MSG_BUFFERED, after=None), mode)
        return got

    def _take_spilled_if_first(self, q: QueueInfo, sel: Selector, mode: int, nav) -> MessageRecord | None:
        """The table's first spilled message for ``sel`` when it sorts before memory's
        first (on equal keys the spilled one is the older); None otherwise."""
        spilled = replace(sel, delivery_mode=C.MSG_BUFFERED, after=None)
        head = self._dequeue_spilled(q, spilled, C.DEQ_BROWSE)
        if head is None:
            if sel.correlation is None and sel.predicate is None and sel.msgid is None:
                # drained (not merely nothing matching a selector): memory alone again
                self.pool.spilled.discard((q.qualified, sel.consumer_name if sel.multi else None))
            return None
        first = self.pool.first_key(q, sel, nav.buffered, self.conn)
        if first is not None and _order_key(q.table)(head) > first[:-1]:
            return None
        # taken by its id; gone meanwhile (another session) -> memory's turn
        return self._dequeue_spilled(q, replace(spilled, msgid=head.msgid), mode)

    def _dequeue_spilled(self, q: QueueInfo, sel: Selector, mode: int) -> MessageRecord | None:
        conn = self.conn
        got = conn._session.dequeue(q, sel, mode, True, 1,
                                    DequeueInfo(user=conn.username, consumer_name=sel.consumer_name))
        return got[0] if got else None
