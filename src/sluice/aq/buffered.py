"""Buffered messaging (seed 003 "Buffered Messaging", "Flow Control"; seeds 001/002
"Buffered queues").

Buffered messages use the same queues as persistent ones, distinguished by the
delivery mode, but live in this process's memory (Oracle's streams pool): no
transactions (IMMEDIATE visibility only), no retention, no retry count, no transaction
grouping; on classic queues no delay and one message per array operation (seed 003: a
delay and array operations are "only supported for buffered messaging on sharded
queues" — a delayed message waits in memory until its time, and keeps its delay when it
spills).  A message moves to the queue table (*spills*, still a buffered message:
``DELIVERY_MODE`` 2, shown SPILLED in ``AQ$<queue_table>``) when the memory in use passes
the limit — oldest first, so a slow subscriber's backlog spills and the fast ones go on —
or when it has waited longer than ``spill_after``.  A sender with ``flow_control_threshold`` messages still in memory
waits, then gets ORA-25307; other senders are not held up.  An expired buffered
message goes to the exception queue as a persistent message.

What a crash loses: the buffered messages of the process that had not spilled (seed
001: "some of the information in a buffered queue can be lost if the instance …
shuts down").

This module is the memory (:class:`BufferedPool`, one per store in a process);
:mod:`.bufferedendpoint` is how a ``Queue`` uses it.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import functools
import logging
import operator
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Iterator

from .. import constants as C
from ..errors import ora
from ..sqlfunctions import like_regex
from ..store.base import MessageRecord, QueueInfo, QueueTableInfo, Selector, new_txn_id

if TYPE_CHECKING:
    from ..connection import Connection

log = logging.getLogger(__name__)
_pools: dict = {}      # store -> its pool; forgotten when the store closes (not by a finaliser)
_pools_lock = threading.Lock()
_HELD_LOOK = 0.05     # how often a sender held by flow control looks for a cancel or a close


@dataclass
class BufferedLimits:
    memory_limit: int = 64 * 1024 * 1024     # bytes of buffered payload kept in memory
    spill_after: float = 300.0               # seconds a message may wait in memory
    flow_control_threshold: int = 10_000     # messages in memory per sender
    flow_control_timeout: float = 5.0        # seconds a held-up sender waits


class _Entry:
    """One record in memory; entries are told apart by identity.

    A message of the fast path (:class:`Endpoint`) keeps only what a plain buffered
    message has, ``plain`` = (queue name, user, msgid, correlation, priority,
    expiration, expire_at, enq_time, original msgid, payload); its MessageRecord is made
    when something asks for it (a spill, the AQ$ view, the full dequeue path)."""

    __slots__ = ("key", "_record", "plain", "size", "sender", "locked_by", "gone", "enq_time",
                 "expire_at", "ready_at", "nums")

    def __init__(self, key: tuple, record: MessageRecord | None, sender: str | None,
                 plain: tuple | None = None) -> None:
        self.key = key
        self._record = record
        self.plain = plain
        self.sender = sender
        self.locked_by: object | None = None
        self.gone = False
        # (its sequence number among its subscriber's messages, its message number in the
        # queue): what V$BUFFERED_SUBSCRIBERS' LAST_BROWSED_* / LAST_DEQUEUED_* show once it
        # is browsed or dequeued (:func:`_counts`); None: not numbered (the fast path's)
        self.nums: tuple[int, int] | None = None
        # when a delayed message (WAITING, sharded queues only) may be dequeued; None: now
        self.ready_at = None
        if record is not None:
            self.enq_time, self.expire_at, data = record.enq_time, record.expire_at, record.user_data
            if record.state == C.MSG_WAITING:
                self.ready_at = record.delay
        else:
            self.enq_time, self.expire_at, data = plain[7], plain[6], plain[9]
        self.size = (len(data) if data is not None else 0) + 200    # what it counts against the limit

    def waiting(self, now: float) -> bool:
        """Whether its delay has not yet passed; once it has, its record is READY (the time
        manager's change for a message in the queue table)."""
        if self.ready_at is None:
            return False
        if self.ready_at > now:
            return True
        self.ready_at = None
        r = self._record
        r.state, r.time_manager_info = C.MSG_READY, r.expire_at
        return False

    @property
    def record(self) -> MessageRecord:
        r = self._record
        if r is None:
            q_name, user, msgid, corrid, priority, expiration, expire_at, enq_time, original, data = self.plain
            # positional, in MessageRecord's field order (see Queue._record)
            r = self._record = MessageRecord(
                -self.key[-1], q_name, msgid, corrid, priority, C.MSG_READY, None, expiration,
                expire_at, expire_at, None, enq_time, user, new_txn_id(), None, None, None, 0, None,
                None, None, None, None, original, None, None, None, None, None, C.MSG_BUFFERED, data)
        return r


def _plain_order_key(table: QueueTableInfo) -> Callable[[int, float, int], tuple]:
    """An entry's key (see :func:`_order_key`) from a plain message's priority, enqueue
    time and pool sequence number."""
    columns = table.order_columns[:-1]
    if columns == ("ENQ_TIME",):
        return lambda priority, enq_time, seq: (enq_time, seq)
    if columns == ("PRIORITY", "ENQ_TIME"):
        return lambda priority, enq_time, seq: (priority, enq_time, seq)
    return lambda priority, enq_time, seq: tuple(
        {"PRIORITY": priority, "ENQ_TIME": enq_time}.get(c) for c in columns) + (seq,)


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

# V$BUFFERED_SUBSCRIBERS' counts of a subscriber, the places of a list (see _counts)
(CNUM, DEQUEUED, LAST_DEQUEUE, ELAPSED, CPU, BROWSED_SEQ, BROWSED_NUM, DEQUEUED_SEQ,
 DEQUEUED_NUM, SAMPLED_ELAPSED, SAMPLED_CPU) = range(11)
# how many spilled records the pool remembers the numbers of (BufferedPool._away)
AWAY_LIMIT = 100_000


def _cpu_estimate(c: list) -> float:
    """DEQUEUE_CPU_TIME's seconds: the elapsed time at the CPU share of the sampled calls."""
    sampled = c[SAMPLED_ELAPSED]
    return min(c[ELAPSED], c[ELAPSED] * c[SAMPLED_CPU] / sampled) if sampled > 0 else 0.0


def _counts() -> list:
    """A subscriber's counts since the pool began, by the places above: records enqueued for
    it (CNUM_MSGS, also the sequence number of the last: CURRENT_ENQ_SEQ), its removing
    dequeues (TOTAL_DEQUEUED_MSG) and the last one's time, seconds of elapsed and CPU time
    its dequeue calls spent (CPU: estimated, see :meth:`BufferedPool.spent`), the numbers
    (see ``_Entry.nums``) of the message it last browsed and last dequeued (0: none), and
    the elapsed and CPU seconds of the calls whose CPU time was read."""
    return [0, 0, None, 0.0, 0.0, 0, 0, 0, 0, 0.0, 0.0]


def pool_for(store) -> "BufferedPool":
    with _pools_lock:
        p = _pools.get(store)
        if p is None:
            p = _pools[store] = BufferedPool(store)
            store.on_close(functools.partial(_forget_pool, store))
        return p


def _forget_pool(store) -> None:
    with _pools_lock:
        _pools.pop(store, None)


def existing_pool(store) -> "BufferedPool | None":
    """The store's pool if this process has used buffered messaging on it (no pool made)."""
    return _pools.get(store)


class BufferedPool:
    """The buffered messages of one store in this process."""

    def __init__(self, store) -> None:
        self.store = store
        self.limits = BufferedLimits()
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)     # held-up senders wait on it
        self._held = 0                                   # how many are waiting
        # dequeues of this process that may wait for a buffered message: an enqueue wakes
        # the store's waiters only when there are some.  A dequeue counts itself before it
        # reads the change counter and looks at memory, so an enqueue that saw none has
        # already put its message where that look finds it.
        self.watchers = 0
        self._queues: dict[str, dict] = {}   # queue -> (consumer, address) -> sorted entries
        self._fifo: dict[str, collections.deque] = {}   # queue -> entries in enqueue order
        self._memory = 0
        self._senders: dict[tuple[str, str | None], int] = {}
        self._seq = 0
        self._locked: dict[int, list[_Entry]] = {}    # id(session) -> entries it LOCKED
        # (queue, consumer) this process spilled messages of that may still be in the
        # table: their dequeues compare the table's first with memory's (one sort order)
        self.spilled: set[tuple[str, str | None]] = set()
        # (queue, sender) -> a listener told of each message that sender puts into memory
        # (``staged(records)``) and of each REMOVE dequeue of one, from memory or spilled
        # (``taken(owner, record)``): how a capture process staging buffered LCRs learns
        # what its consumers took (sluice.streams.capture.staging)
        self.listeners: dict[tuple[str, str | None], object] = {}
        self._on_commit: dict[int, list[Callable[[bool], None]]] = {}   # id(session) -> callbacks
        # V$BUFFERED_QUEUES' STARTUP_TIME, CNUM_MSGS and CSPILL_MSGS of this "instance" (the
        # pool is the process's, as Oracle's buffered queues are the instance's): queue ->
        # [messages enqueued, messages spilled] since ``started``
        self.started = time.time()
        self._cumulative: dict[str, list[int]] = {}
        # V$BUFFERED_SUBSCRIBERS' counts since ``started`` too: (queue, consumer, address)
        # -> _counts()
        self._subscribers: dict[tuple[str, str | None, str | None], list] = {}
        # (queue, consumer, address, msgid) -> ``_Entry.nums`` of a record that left memory
        # without being dequeued (spilled, or taken by a propagation): its dequeue or browse
        # from the table still shows its numbers.  The oldest are forgotten past AWAY_LIMIT
        # (a record another process dequeued from the table is never asked for)
        self._away: dict[tuple, tuple[int, int]] = {}

    # -- enqueue ------------------------------------------------------------
    def put(self, q: QueueInfo, records: list[MessageRecord], spill: Callable, session=None) -> None:
        """Keep ``records`` (one message, a record per consumer) in memory; ``session``
        (the enqueuing SessionContext) can end a wait under flow control (:meth:`_hold`)."""
        sender = records[0].sender_name
        qname = q.qualified
        key = (qname, sender)
        order = _order_key(q.table)
        with self._lock:
            if self._senders.get(key, 0) >= self.limits.flow_control_threshold:
                self._hold(key, session)
            # once it is let in (a message ORA-25307 refused is in no book), before any
            # dequeue can see it (a listener never calls into the pool holding its own lock)
            listener = self.listeners.get(key)
            if listener is not None:
                listener.staged(records)
            queue, fifo = self._structures(qname)
            subscribers = self._subscribers
            enqueued = self._cumulative.get(qname)
            num = (enqueued[0] if enqueued else 0) + 1   # the message's number in the queue
            for r in records:
                self._seq += 1
                r.seq = -self._seq          # negative: never a table's SEQ
                entry = _Entry(order(r) + (self._seq,), r, sender)
                self._file(queue, (r.consumer_name, r.address), entry)
                fifo.append(entry)
                c = subscribers.get((qname, r.consumer_name, r.address))
                if c is None:
                    c = subscribers[(qname, r.consumer_name, r.address)] = _counts()
                c[CNUM] += 1
                entry.nums = (c[CNUM], num)
            self._senders[key] = self._senders.get(key, 0) + len(records)
            self._count(qname, 0, 1)     # one message, a record per consumer
            victims = self._spill_victims(q, queue, fifo, time.time())
            self.spilled.update((qname, v.consumer_name) for v in victims)
        if victims:
            self._spill(q, victims, spill)

    def _structures(self, qname: str) -> tuple[dict, collections.deque]:
        """(Lock held) the queue's entries by (consumer, address), and its FIFO."""
        queue = self._queues.get(qname)
        if queue is None:
            queue = self._queues[qname] = {}
            self._fifo[qname] = collections.deque()
        return queue, self._fifo[qname]

    def _file(self, queue: dict, slot: tuple, entry: _Entry) -> None:
        """(Lock held) ``entry`` into its consumer's list, in key order, and into memory."""
        entries = queue.get(slot)
        if entries is None:
            queue[slot] = [entry]
        elif not entries or entries[-1].key < entry.key:
            entries.append(entry)          # the usual case: it goes last
        else:
            bisect.insort(entries, entry, key=lambda e: e.key)
        self._memory += entry.size

    def _hold(self, key: tuple, session=None) -> None:
        """Flow control: wait (lock held) until the sender is under the threshold.
        The wait is the enqueuing call's (``session``, a SessionContext): it ends as a
        dequeue's wait does, at Connection.cancel() (ORA-01013) or Connection.close()
        from another thread (DPY-1001) — looked at every :data:`_HELD_LOOK` seconds —
        not at the timeout, and no message of a closed connection gets in after it.
        :raises: ORA-25307 when it is not within the limit's timeout."""
        deadline = time.monotonic() + self.limits.flow_control_timeout
        self._held += 1
        try:
            with session.waiting() if session is not None else contextlib.nullcontext():
                while self._senders.get(key, 0) >= self.limits.flow_control_threshold:
                    if session is not None:
                        session.check_waiting()
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise ora(25307)
                    self._cond.wait(remaining if session is None else min(remaining, _HELD_LOOK))
                if session is not None:
                    session.check_waiting()
        finally:
            self._held -= 1

    def put_plain(self, q: QueueInfo, plain: tuple, order: Callable, spill: Callable, session=None) -> None:
        """:meth:`put` for one plain message of a single-consumer queue (see :class:`_Entry`),
        the fast path's enqueue; ``order`` is :func:`_plain_order_key` of its table."""
        qname = q.qualified
        key = (qname, None)
        enq_time = plain[7]
        with self._lock:
            senders = self._senders
            held = senders.get(key, 0)
            if held >= self.limits.flow_control_threshold:
                self._hold(key, session)
                held = senders.get(key, 0)
            queue, fifo = self._structures(qname)
            self._seq = seq = self._seq + 1
            entry = _Entry(order(plain[4], enq_time, seq), None, None, plain)
            self._file(queue, (None, None), entry)
            fifo.append(entry)
            senders[key] = held + 1
            self._count(qname, 0, 1)
            while fifo[0].gone:   # what was dequeued since (the deque keeps entry as its last)
                fifo.popleft()
            limits = self.limits
            if self._memory <= limits.memory_limit and enq_time - fifo[0].enq_time < limits.spill_after:
                return   # the usual case: nothing to spill
            victims = self._spill_victims(q, queue, fifo, enq_time)
            if victims:
                self.spilled.update((qname, v.consumer_name) for v in victims)
        if victims:
            self._spill(q, victims, spill)

    def take_first(self, q: QueueInfo) -> "_Entry | None":
        """The fast path's dequeue: remove and return the first message of a single-consumer
        queue when it is plainly available (not locked, not expired, not delayed); None sends the
        caller down the full path, which handles everything else."""
        with self._lock:
            queue = self._queues.get(q.qualified)
            if not queue:
                return None
            entries = queue.get((None, None))
            if not entries:
                return None
            e = entries[0]
            now = time.time()
            if e.locked_by is not None or (e.expire_at is not None and e.expire_at <= now) \
                    or (e.ready_at is not None and e.waiting(now)):
                return None
            self._drop(q, entries, e)
            return e

    # -- dequeue ------------------------------------------------------------
    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """While a dequeue or LISTEN may wait for buffered messages: entered before it reads
        the store's change counter (see :attr:`watchers`)."""
        with self._lock:
            self.watchers += 1
        try:
            yield
        finally:
            with self._lock:
                self.watchers -= 1

    def take(self, q: QueueInfo, sel: Selector, after: tuple | None, mode: int, owner: object,
             expire: Callable[[QueueInfo, MessageRecord], None]
             ) -> tuple[MessageRecord, tuple, tuple[int, int] | None] | None:
        """The first buffered message ``sel`` wants after position ``after`` (REMOVE takes it
        out of memory; BROWSE and LOCKED count as its subscriber's browse), with its
        position and numbers (``_Entry.nums``: for :meth:`taken`).  The record returned is
        shared: callers only read it."""
        expired: list[_Entry] = []
        with self._lock:
            found, entries = self._find(q, sel, after, owner, expired)
            if found is not None:
                if mode == C.DEQ_REMOVE or mode == C.DEQ_REMOVE_NODATA:
                    self._drop(q, entries, found)
                else:
                    if mode == C.DEQ_LOCKED:
                        found.locked_by = owner
                        self._locked.setdefault(id(owner), []).append(found)
                    if found.nums is not None:
                        r = found.record
                        self._browsed((q.qualified, r.consumer_name, r.address), found.nums)
        for e in expired:   # seed 003: to the exception queue, as a persistent message
            try:
                expire(q, e.record)
            except Exception as exc:   # noqa: BLE001 — kept, and moved on a later dequeue
                log.warning("expired buffered message of %s kept in memory: moving it to the "
                            "exception queue failed: %s", q.qualified, exc)
                self._restore(q, [e.record])
        if found is None:
            return None
        return found.record, found.key, found.nums

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
            if e.ready_at is not None and e.waiting(now):    # (a delay: sharded queues only)
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

    def next_ready(self, q: QueueInfo, sel: Selector) -> float | None:
        """When the first of the delayed messages ``sel`` would take (its consumer's; the
        one of ``sel.msgid``) stops waiting: how long a dequeue waiting for it may sleep
        (nothing is enqueued to wake it).  None: no delayed message for it here."""
        with self._lock:
            queue = self._queues.get(q.qualified)
            entries = queue.get((sel.consumer_name if sel.multi else None, None)) if queue else None
            now = time.time()
            return min((e.ready_at for e in entries or () if e.waiting(now)
                        and (sel.msgid is None or e.record.msgid == sel.msgid)), default=None)

    def take_remote(self, q: QueueInfo, wanted: Callable[[str | None], bool], limit: int) -> list[MessageRecord]:
        """REMOVE up to ``limit`` messages in memory addressed to remote recipients whose
        address ``wanted`` takes — what a propagation moves (seed 003 "Propagating
        Buffered Messages") —, in the queue's order; locked and expired ones are left to
        the dequeue paths.  The caller puts them back (:meth:`put_back`) if it fails."""
        with self._lock:
            queue = self._queues.get(q.qualified)
            if not queue or limit <= 0:
                return []
            now = time.time()
            found = [(e, entries) for (_, address), entries in queue.items() if entries and wanted(address)
                     for e in entries if e.locked_by is None and (e.expire_at is None or e.expire_at > now)]
            if not found:
                return []
            found.sort(key=lambda pair: pair[0].key)
            taken = []
            for e, entries in found[:limit]:
                self._drop(q, entries, e)
                taken.append(e.record)
                self._park(q.qualified, e)    # (its numbers for taken())
            return taken

    def put_back(self, q: QueueInfo, records: list[MessageRecord], taken: bool = False,
                 nums: tuple[int, int] | None = None) -> None:
        """Records :meth:`take_remote` took, back into memory (their propagation failed);
        ``taken``: :meth:`taken` was told of them (their dequeues are counted back, not
        the numbers of the last one); ``nums``: one record's that :meth:`take` gave."""
        with self._lock:
            if taken:
                for r in records:
                    c = self._subscribers.get((q.qualified, r.consumer_name, r.address))
                    if c is not None and c[DEQUEUED] > 0:
                        c[DEQUEUED] -= 1
            if nums is not None:
                r = records[0]
                self._away[(q.qualified, r.consumer_name, r.address, r.msgid)] = nums
        self._restore(q, records)

    def taken(self, q: QueueInfo, record: MessageRecord, owner: object,
              nums: tuple[int, int] | None = None) -> None:
        """``owner`` (a session, a propagation) took ``record`` out for good (REMOVE), from
        memory (``nums``: what :meth:`take` gave) or spilled: counted as its consumer's
        dequeue (V$BUFFERED_SUBSCRIBERS); its sender's listener, if any, hears of it."""
        key = (q.qualified, record.consumer_name, record.address)
        now = time.time()
        with self._lock:
            if nums is None:
                nums = self._away.pop(key + (record.msgid,), None)
            c = self._subscribers.get(key)
            if c is None:
                c = self._subscribers[key] = _counts()
            c[DEQUEUED] += 1
            c[LAST_DEQUEUE] = now
            if nums is not None:
                c[DEQUEUED_SEQ], c[DEQUEUED_NUM] = nums
        listener = self.listeners.get((q.qualified, record.sender_name))
        if listener is not None:
            listener.taken(owner, record)

    def browsed(self, q: QueueInfo, record: MessageRecord) -> None:
        """A session browsed (or LOCKED) ``record`` in the queue table, a spilled one: its
        subscriber's last browsed message when this pool numbered it (it spilled it)."""
        key = (q.qualified, record.consumer_name, record.address)
        with self._lock:
            nums = self._away.get(key + (record.msgid,))
            if nums is not None:
                self._browsed(key, nums)

    def _browsed(self, key: tuple, nums: tuple[int, int]) -> None:
        """(Lock held) ``nums`` are the subscriber ``key``'s last browsed message's."""
        c = self._subscribers.get(key)
        if c is None:
            c = self._subscribers[key] = _counts()
        c[BROWSED_SEQ], c[BROWSED_NUM] = nums

    def spent(self, key: tuple, elapsed: float, cpu: float | None = None) -> None:
        """A dequeue call of the subscriber ``key`` (queue, consumer, address) took
        ``elapsed`` seconds (ELAPSED_DEQUEUE_TIME), ``cpu`` of them on the CPU when it was
        read (None: not read).  DEQUEUE_CPU_TIME is the elapsed time at the CPU share of
        the calls whose CPU time was read: the endpoint reads it on one call in a few."""
        with self._lock:
            c = self._subscribers.get(key)
            if c is None:
                c = self._subscribers[key] = _counts()
            c[ELAPSED] += elapsed
            if cpu is not None:
                c[SAMPLED_ELAPSED] += elapsed
                c[SAMPLED_CPU] += cpu

    def _park(self, qname: str, e: _Entry) -> None:
        """(Lock held) keep the numbers of ``e``, out of memory undequeued (see ``_away``)."""
        if e.nums is None:
            return
        away = self._away
        r = e.record
        away[(qname, r.consumer_name, r.address, r.msgid)] = e.nums
        if len(away) > AWAY_LIMIT:
            del away[next(iter(away))]

    def at_transaction_end(self, owner: object, callback: Callable[[bool], None]) -> None:
        """Run ``callback(committed)`` once ``owner``'s transaction commits or rolls back."""
        with self._lock:
            self._on_commit.setdefault(id(owner), []).append(callback)

    def release(self, owner: object, committed: bool = False) -> None:
        """LOCKED messages of a session come free when it commits or rolls back; what
        waited for the end of its transaction (:meth:`at_transaction_end`) runs."""
        if self._on_commit:
            with self._lock:
                callbacks = self._on_commit.pop(id(owner), ())
            for callback in callbacks:
                callback(committed)
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
        if self._memory <= limits.memory_limit and now - fifo[0].enq_time < limits.spill_after:
            return []    # the usual case: nothing to spill
        victims: list[MessageRecord] = []
        for e in fifo:   # oldest first; the loop does not change the deque
            if self._memory <= limits.memory_limit and now - e.enq_time < limits.spill_after:
                break
            if e.gone or e.locked_by is not None:
                continue
            self._drop(q, queue[(e.record.consumer_name, e.record.address)], e)
            self._park(q.qualified, e)
            e.waiting(now)     # (a delay that has passed: READY; one that has not stays WAITING)
            victims.append(replace(e.record, seq=None))
        while fifo and fifo[0].gone:
            fifo.popleft()
        return victims

    def _spill(self, q: QueueInfo, victims: list[MessageRecord], spill: Callable) -> None:
        """Write ``victims`` (already out of memory) to the queue table.  If that fails they
        come back into memory, over the limit until a later enqueue spills them: a failed
        spill must not lose messages, nor fail the enqueue that triggered it (its message is
        stored — failing it would invite a duplicate)."""
        try:
            spill(q, victims)
        except Exception as e:   # noqa: BLE001 — whatever the store raised, keep the messages
            log.warning("buffered messages of %s kept in memory: spilling them failed: %s", q.qualified, e)
            self._restore(q, victims)
            return
        with self._lock:
            self._count(q.qualified, 1, len({v.msgid for v in victims}))

    def _count(self, qname: str, which: int, n: int) -> None:
        """(Lock held) ``n`` more messages enqueued (``which`` 0) or spilled (1)."""
        c = self._cumulative.get(qname)
        if c is None:
            c = self._cumulative[qname] = [0, 0]
        c[which] += n

    def cumulative(self) -> dict[str, tuple[int, int]]:
        """Queue (``OWNER.NAME``) -> (messages enqueued, messages spilled) since
        :attr:`started`, by this process."""
        with self._lock:
            return {qname: (c[0], c[1]) for qname, c in self._cumulative.items()}

    def subscribers(self) -> dict[tuple[str, str | None, str | None], tuple]:
        """(queue ``OWNER.NAME``, consumer, address) -> its counts since :attr:`started` in
        this process (:func:`_counts`' places up to DEQUEUED_NUM)."""
        with self._lock:
            return {key: (*c[:CPU], _cpu_estimate(c), *c[CPU + 1:SAMPLED_ELAPSED])
                    for key, c in self._subscribers.items()}

    def _restore(self, q: QueueInfo, records: list[MessageRecord]) -> None:
        order = _order_key(q.table)
        with self._lock:
            queue, fifo = self._structures(q.qualified)
            restored = []
            for r in records:
                self._seq += 1
                r.seq = -self._seq
                entry = _Entry(order(r) + (self._seq,), r, r.sender_name)
                entry.nums = self._away.pop((q.qualified, r.consumer_name, r.address, r.msgid), None)
                self._file(queue, (r.consumer_name, r.address), entry)
                restored.append(entry)
                key = (q.qualified, r.sender_name)
                self._senders[key] = self._senders.get(key, 0) + 1
            fifo.extendleft(reversed(restored))    # the oldest again, first to spill next time

    def spill_old(self, q: QueueInfo, spill: Callable) -> None:
        with self._lock:
            queue = self._queues.get(q.qualified)
            victims = self._spill_victims(q, queue, self._fifo[q.qualified], time.time()) if queue else []
            self.spilled.update((q.qualified, v.consumer_name) for v in victims)
        if victims:
            self._spill(q, victims, spill)

    def in_memory(self) -> dict[str, list[MessageRecord]]:
        """Queue (``OWNER.NAME``) -> the records of its messages in memory now (for the
        ``AQ$`` views, state IN-MEMORY)."""
        with self._lock:
            return {qname: [e.record for entries in queue.values() for e in entries]
                    for qname, queue in self._queues.items() if any(queue.values())}

    def discard(self, q: QueueInfo, sender: str) -> int:
        """Drop from memory every message ``sender`` put there (a capture process that
        starts again stages its LCRs anew); returns how many records."""
        with self._lock:
            queue = self._queues.get(q.qualified)
            gone = [e for entries in (queue or {}).values() for e in entries if e.sender == sender]
            for e in gone:
                self._drop(q, queue[(e.record.consumer_name, e.record.address)], e)
            return len(gone)

    def forget_queue(self, q: QueueInfo) -> int:
        """DROP_QUEUE (or its queue table's drop) deletes the queue's messages: those in
        memory too, or a queue made again under the name would deliver them.  Returns how
        many records."""
        with self._lock:
            queue = self._queues.pop(q.qualified, None)
            self._fifo.pop(q.qualified, None)
            self._cumulative.pop(q.qualified, None)    # a queue made again starts from 0
            self._subscribers = {k: c for k, c in self._subscribers.items() if k[0] != q.qualified}
            self._away = {k: n for k, n in self._away.items() if k[0] != q.qualified}
            self.spilled = {key for key in self.spilled if key[0] != q.qualified}
            gone = [e for entries in (queue or {}).values() for e in entries]
            for e in gone:   # (their memory and their senders' flow-control counts)
                e.gone = True
                self._memory -= e.size
                key = (q.qualified, e.sender)
                self._senders[key] = self._senders.get(key, 1) - 1
            if gone and self._held:
                self._cond.notify_all()
            return len(gone)

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
    limits = pool_for(conn.context.store).limits
    for name, value in (("memory_limit", memory_limit), ("spill_after", spill_after),
                        ("flow_control_threshold", flow_control_threshold),
                        ("flow_control_timeout", flow_control_timeout)):
        if value is not None:
            setattr(limits, name, value)
    return limits
