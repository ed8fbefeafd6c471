"""A ``Queue``'s way into the buffered messages of its store (seed 003 "Buffered
Messaging"): the fast path for plain one-at-a-time traffic, and the full path that
handles every option — both over the process's :class:`~.buffered.BufferedPool`."""

from __future__ import annotations

import time
from dataclasses import replace
from time import perf_counter, thread_time
from typing import TYPE_CHECKING

from .. import constants as C
from ..errors import Error, ora
from ..model import MessageProperties, checked_correlation
from ..objtypes import DB_TYPE_BLOB, DB_TYPE_CLOB, DB_TYPE_NCLOB, DbObject
from ..store.base import DequeueInfo, MessageRecord, QueueInfo, Selector, new_msgid
from .buffered import _order_key, _plain_order_key, pool_for

if TYPE_CHECKING:
    from ..connection import Connection
    from .queue import Queue


# one full-path dequeue call in CPU_SAMPLE reads its CPU time (two system calls, about a tenth
# of a multi-consumer dequeue's CPU): DEQUEUE_CPU_TIME is estimated from those (BufferedPool.spent)
CPU_SAMPLE = 16


class Endpoint:
    """One ``Queue`` object's way into the buffered messages of its connection's store:
    the pool and the connection's spill and expiry paths, looked up once.

    It also holds the Queue's *fast path*: one buffered message in or out of a
    single-consumer queue with plain options, which is what most buffered traffic is.
    What the full path checks once per call — queue enabled, privileges, payload type,
    queue shape — holds until the catalog changes, so the fast path checks it once per
    catalog version; whatever else (a sender, a delay, a condition, a browse, a spilled
    backlog, an empty queue to wait on ...) goes down the full path, which raises the
    errors."""

    __slots__ = ("ctx", "pool", "_enq_version", "_enq_queue", "_enq_codec", "_enq_order",
                 "_deq_version", "_deq_queue", "_deq_codec", "_cpu_in")

    def __init__(self, conn: "Connection") -> None:
        self._bind(conn.context)

    @classmethod
    def of_session(cls, ctx) -> "Endpoint":
        """The endpoint of a session context without its connection (a propagation
        receiver enqueuing buffered messages)."""
        endpoint = cls.__new__(cls)
        endpoint._bind(ctx)
        return endpoint

    def _bind(self, ctx) -> None:
        self.ctx = ctx            # also the owner of what it locks in the pool: the session
        self.pool = pool_for(ctx.store)
        self._enq_version = self._deq_version = -1
        self._enq_queue = self._deq_queue = None
        self._enq_codec = self._deq_codec = self._enq_order = None
        self._cpu_in = 0      # full-path dequeue calls until the next whose CPU time is read

    # -- the fast path ------------------------------------------------------------
    def enqueue_fast(self, queue: "Queue", m) -> bool:
        """Enqueue ``m`` if the fast path applies (True), else leave it to the full path."""
        opts = queue.enqoptions
        if opts._visibility != C.ENQ_IMMEDIATE or opts.transformation is not None \
                or type(m) is not MessageProperties or m._delay != 0 or m._recipients \
                or m._sender_id is not None or m._exceptionq is not None or m._expiration < -1 \
                or m.payload is None:
            return False
        ctx = self.ctx
        version = ctx.store.catalog_version()
        if version != self._enq_version and not self._enq_check(queue, version):
            return False
        if ctx.closed:
            return False
        if isinstance(m.payload, DbObject):
            check_lob_attributes(m.payload)
        if m._correlation is not None:
            checked_correlation(m._correlation)
        q = self._enq_queue
        data = self._enq_codec.encode(m.payload)
        now = time.time()
        expiration = m._expiration
        if expiration >= 0:
            expire_at = now + expiration
        else:
            expiration = expire_at = None
        msgid = new_msgid()
        pool = self.pool
        pool.put_plain(q, (q.name, ctx.username, msgid, m._correlation, m._priority, expiration,
                           expire_at, now, m._original_msgid, data), self._enq_order, self.spill, ctx)
        if pool.watchers:
            ctx.store.wake_waiters()
        m._msgid, m._enqtime, m._state, m._deliverymode = msgid, now, C.MSG_READY, C.MSG_BUFFERED
        return True

    def _enq_check(self, queue: "Queue", version: int) -> bool:
        self._enq_version = -1
        try:
            q = queue._info()
            if q.is_exception_queue or not q.enqueue_enabled or q.table.multiple_consumers \
                    or q.table.message_grouping == "TRANSACTIONAL" or self.ctx.catalog.registrations(q):
                return False   # (registrations: the full path writes what they are owed)
            self.ctx.authz.check_enqueue(q, [None])
            queue._check_payload_type(q)
        except Error:
            return False
        self._enq_queue, self._enq_codec, self._enq_order = q, queue._codec, _plain_order_key(q.table)
        self._enq_version = version
        return True

    def dequeue_fast(self, queue: "Queue"):
        """The first buffered message as MessageProperties if the fast path applies, else
        None (the full path decides: it may still find one, wait, or raise)."""
        opts = queue.deqoptions
        if opts._mode != C.DEQ_REMOVE or opts._visibility != C.DEQ_IMMEDIATE \
                or opts.condition is not None or opts.msgid is not None or opts.correlation is not None \
                or opts.consumername is not None or opts.transformation is not None:
            return None
        ctx = self.ctx
        version = ctx.store.catalog_version()
        if version != self._deq_version and not self._deq_check(queue, version):
            return None
        q = self._deq_queue
        nav = ctx.nav.get(q.qualified)
        if ctx.closed or (nav is not None and (nav.buffered is not None or nav.correlation is not None
                                               or nav.consumer is not None)):
            return None
        pool = self.pool
        if pool.spilled and (q.qualified, None) in pool.spilled:
            return None
        e = pool.take_first(q)
        if e is None:
            return None
        plain = e.plain
        if plain is None:
            return queue._properties(e.record, self._deq_codec, None, True, False)
        m = MessageProperties.__new__(MessageProperties)
        _, _, msgid, corrid, priority, expiration, _, enq_time, original, data = plain
        m.payload = self._deq_codec.decode(data)
        m._priority, m._correlation, m._delay = priority, corrid, 0
        m._expiration = -1 if expiration is None else expiration
        m._exceptionq, m._recipients, m._sender_id, m._original_msgid = None, [], None, original
        m._msgid, m._enqtime, m._attempts, m._state = msgid, enq_time, 0, C.MSG_READY
        m._deliverymode, m._transaction_group, m._consumer_name = C.MSG_BUFFERED, None, None
        return m

    def _deq_check(self, queue: "Queue", version: int) -> bool:
        self._deq_version = -1
        try:
            q = queue._info()
            if not q.dequeue_enabled or q.table.multiple_consumers or q.queue_type == "EXCEPTION_QUEUE":
                return False
            self.ctx.authz.check_dequeue(q, None)
            queue._check_payload_type(q)
        except Error:
            return False
        self._deq_queue, self._deq_codec, self._deq_version = q, queue._codec, version
        return True

    # -- the full path --------------------------------------------------------------

    def enqueue(self, q: QueueInfo, records: list[MessageRecord]) -> None:
        """ENQ with deliverymode MSG_BUFFERED: ``records`` are one message's (a record per
        consumer), already built and checked by the Queue (IMMEDIATE visibility)."""
        for r in records:
            r.delivery_mode = C.MSG_BUFFERED
        self.pool.put(q, records, self.spill, self.ctx)
        if self.pool.watchers:
            self.ctx.store.wake_waiters()

    def spill(self, q: QueueInfo, records: list[MessageRecord]) -> None:
        for r in records:
            r.notices = None
        self.ctx.session.enqueue(q, records, immediate=True)

    def expire(self, q: QueueInfo, r: MessageRecord) -> None:
        """Seed 003: an expired buffered message goes to the exception queue, persistent."""
        catalog = self.ctx.catalog
        exc = catalog.find_queue(r.exception_qschema or q.owner, r.exception_queue) if r.exception_queue else None
        if exc is None and q.table.exception_queue_name is not None:
            exc = catalog.find_queue(q.owner, q.table.exception_queue_name)
        if exc is None:     # a sharded queue without an exception queue: purged
            return
        moved = replace(r, seq=None, q_name=exc.name, state=C.MSG_EXPIRED, delivery_mode=C.MSG_PERSISTENT,
                        consumer_name=None, address=None, expiration_reason="TIME_EXPIRATION",
                        original_queue_name=q.name, original_queue_owner=q.owner,
                        time_manager_info=None, notices=None)
        self.ctx.session.enqueue(exc, [moved], immediate=True)

    def take(self, q: QueueInfo, sel: Selector, mode: int, nav, check=None) -> MessageRecord | None:
        """One buffered message for ``sel``, in the queue's sort order across memory
        (``nav.buffered`` is the position there) and the messages this process spilled
        to the table (spilled oldest first, so usually ahead of memory's).  ``check``
        (see DequeueInfo) reads what a REMOVE took before it is gone for good: when it
        raises, the message stays (back in memory, or in the table).  The call's elapsed
        and CPU time count as its subscriber's (V$BUFFERED_SUBSCRIBERS' ELAPSED_DEQUEUE_TIME,
        DEQUEUE_CPU_TIME), found or not: time spent in dequeue, not waiting for a message."""
        start = perf_counter()
        if self._cpu_in:    # most calls: elapsed time only (reading CPU time is a system call)
            self._cpu_in -= 1
            try:
                return self._take(q, sel, mode, nav, check)
            finally:
                self.pool.spent((q.qualified, sel.consumer_name if sel.multi else None, None),
                                perf_counter() - start)
        self._cpu_in = CPU_SAMPLE - 1
        cpu = thread_time()
        try:
            return self._take(q, sel, mode, nav, check)
        finally:
            self.pool.spent((q.qualified, sel.consumer_name if sel.multi else None, None),
                            perf_counter() - start, thread_time() - cpu)

    def _take(self, q: QueueInfo, sel: Selector, mode: int, nav, check=None) -> MessageRecord | None:
        if mode == C.DEQ_BROWSE or mode == C.DEQ_LOCKED:
            return self._look(q, sel, mode, nav)
        pool = self.pool
        # a dequeue by msgid takes that message wherever the session's position is, and
        # leaves the position alone (as the table's dequeue by msgid does)
        by_id = sel.msgid is not None
        after = None if by_id else nav.buffered
        if pool.spilled and \
                (q.qualified, sel.consumer_name if sel.multi else None) in pool.spilled:
            got = self._take_spilled_if_first(q, sel, mode, after, check)
            if got is not None:
                return self._taken(q, got, mode)
        got = pool.take(q, sel, after, mode, self.ctx, self.expire)
        if got is not None:
            if check is not None and mode == C.DEQ_REMOVE:
                try:
                    check([got[0]])
                except BaseException:
                    pool.put_back(q, [got[0]], nums=got[2])
                    raise
            if not by_id:
                nav.buffered = None
            return self._taken(q, got[0], mode, got[2])
        if not by_id:
            nav.buffered = None
        got = self._dequeue_spilled(q, _spilled(sel), mode, check)
        return self._taken(q, got, mode)

    def _look(self, q: QueueInfo, sel: Selector, mode: int, nav) -> MessageRecord | None:
        """BROWSE or LOCKED: the next message in the queue's order of two streams, each
        with its own position that moves past what it showed — memory (``nav.buffered``)
        and the queue table (``sel.after``, the session's position there: spilled
        messages, of any process; with PERSISTENT_OR_BUFFERED the persistent ones too, or
        a spilled one shown first would move that position past them).  Where the
        streams end, the caller's end of the queue takes both positions back to the start."""
        by_id = sel.msgid is not None
        after = None if by_id else nav.buffered
        table = replace(sel, group=None, skip_groups=frozenset(),
                        delivery_mode=C.MSG_BUFFERED if q.table.message_grouping == "TRANSACTIONAL"
                        else sel.delivery_mode)   # (a group is the persistent path's business)
        head = self._dequeue_spilled(q, table, C.DEQ_BROWSE)
        if head is not None:
            first = self.pool.first_key(q, sel, after, self.ctx)
            if first is None or not _later(_order_key(q.table)(head), first[:-1]):
                if mode == C.DEQ_BROWSE:
                    self.pool.browsed(q, head)
                    return head
                got = self._dequeue_spilled(q, replace(table, msgid=head.msgid), mode)
                if got is not None:
                    self.pool.browsed(q, got)
                    return got      # (gone meanwhile, another session's: memory's turn)
        got = self.pool.take(q, sel, after, mode, self.ctx, self.expire)
        if got is None:
            return None
        if not by_id:
            nav.buffered = got[1]
        return got[0]

    def _taken(self, q: QueueInfo, record: MessageRecord | None, mode: int,
               nums: tuple[int, int] | None = None) -> MessageRecord | None:
        if record is not None and (mode == C.DEQ_REMOVE or mode == C.DEQ_REMOVE_NODATA):
            self.pool.taken(q, record, self.ctx, nums)     # (its consumer's dequeue, counted)
        return record

    def _take_spilled_if_first(self, q: QueueInfo, sel: Selector, mode: int,
                               after: tuple | None, check=None) -> MessageRecord | None:
        """The table's first spilled message for ``sel`` when it sorts before memory's
        first after position ``after`` (on equal keys the spilled one is the older); None
        otherwise."""
        spilled = _spilled(sel)
        head = self._dequeue_spilled(q, spilled, C.DEQ_BROWSE)
        if head is None:
            if sel.correlation is None and sel.predicate is None and sel.msgid is None:
                # drained (not merely nothing matching a selector): memory alone again
                self.pool.spilled.discard((q.qualified, sel.consumer_name if sel.multi else None))
            return None
        first = self.pool.first_key(q, sel, after, self.ctx)
        if first is not None and _later(_order_key(q.table)(head), first[:-1]):
            return None
        # taken by its id; gone meanwhile (another session) -> memory's turn
        return self._dequeue_spilled(q, replace(spilled, msgid=head.msgid), mode, check)

    def _dequeue_spilled(self, q: QueueInfo, sel: Selector, mode: int, check=None) -> MessageRecord | None:
        ctx = self.ctx
        got = ctx.session.dequeue(q, sel, mode, True, 1,
                                  DequeueInfo(user=ctx.username, consumer_name=sel.consumer_name,
                                              check=check))
        return got[0] if got else None


_LOBS = ("CLOB", "NCLOB", "BLOB")


def check_lob_attributes(payload) -> None:
    """Seed 003 "Enqueuing Buffered Messages": "For ADT types with LOB attributes, only
    buffered messages with null LOB attributes can be enqueued" — also in an attribute's
    object or a collection's elements.  :raises: ORA-25293."""
    if not isinstance(payload, DbObject):
        return
    typ = payload.type
    if typ.iscollection:
        lob = typ.element_type in (DB_TYPE_CLOB, DB_TYPE_NCLOB, DB_TYPE_BLOB)
        for value in payload.aslist():
            if value is not None and (lob or isinstance(value, DbObject)):
                if lob:
                    raise ora(25293)
                check_lob_attributes(value)
        return
    for attr in typ.attributes:
        value = getattr(payload, attr.name)
        if value is None:
            continue
        if attr.datatype.kind in _LOBS:
            raise ora(25293)
        check_lob_attributes(value)


def _later(a: tuple, b: tuple) -> bool:
    """``a`` > ``b`` in queue order, where None (a commit SCN a message in memory does not
    have yet) comes after every value: it was not committed before anything spilled."""
    for x, y in zip(a, b):
        if x == y:
            continue
        if x is None or y is None:
            return x is None
        return x > y
    return False


def _spilled(sel: Selector) -> Selector:
    """``sel`` for the spilled messages: buffered ones, from the start of the queue order,
    and whatever group the session's last persistent message had — buffered messages have
    no transaction grouping (seed 003), each spilled one is a group of its own."""
    return replace(sel, delivery_mode=C.MSG_BUFFERED, after=None, group=None, skip_groups=frozenset())
