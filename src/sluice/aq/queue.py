"""``Queue``: enqueue and dequeue with python-oracledb's API and Oracle's semantics.

Seed 003 "Enqueue Features" and "Dequeue Features" are the spec.  The store
does the storing, locking and ordering; this module decides what an
operation means: validation, message properties, navigation position,
waiting, transformations.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .. import constants as C
from .. import objtypes as ot
from ..charset import checked
from ..errors import ArgumentError, DatabaseError, InterfaceError, dpy, not_supported, ora
from ..model import Agent, DeqOptions, EnqOptions, MessageProperties, checked_correlation
from ..names import canonical, split_qualified
from ..store.sqlops import order_key
from ..store.base import HELD_HERE, DequeueInfo, MessageRecord, QueueInfo, Selector, new_msgid, new_txn_id
from .conditions import compile_dequeue_condition, compile_sql_condition
from .notify.dispatcher import dispatcher_for
from .bufferedendpoint import Endpoint, check_lob_attributes
from .recipients import fan_out, recipient_list, recipients_of
from .payload import ANYDATA
from . import sharded

if TYPE_CHECKING:
    from ..connection import Connection


_READY, _EXPIRED = (C.MSG_READY,), (C.MSG_EXPIRED,)


@dataclass(slots=True)
class Navigation:
    """A session's dequeue position in one queue (seed 003 "Navigation of Messages")."""

    position: tuple | None = None
    buffered: tuple | None = None      # the position among this process's buffered messages
    group: str | None = None
    correlation: str | None = None
    consumer: str | None = None


# payload types whose stored form always reads back (no type to lose, no transformation)
_READ_WITHOUT_FAIL = frozenset({"RAW", "JSON", "XMLTYPE"})

# deqmany's largest batch: python-oracledb keeps max_num_messages in a uint32_t
MAX_DEQUEUE_BATCH = 2**32 - 1


class Queue:
    """A queue as python-oracledb's ``Connection.queue()`` returns it."""

    def __init__(self, connection: "Connection", name: str, payload_type: Any = None) -> None:
        if not isinstance(name, str):
            raise InterfaceError("queue name must be a string")
        if payload_type is not None and not isinstance(payload_type, (str, ot.DbObjectType)):
            # python-oracledb: a TypeError
            raise ArgumentError(f"payload_type must be an object type or a string, not {type(payload_type).__name__}")
        self.connection = connection
        self._session_ctx = connection.context
        self.name = name
        self.payload_type = payload_type
        self.enqoptions = EnqOptions()
        self.deqoptions = DeqOptions()
        self._key: tuple[str, str] | None = None
        # the catalog entry and payload codec, valid while the catalog version is _version
        self._version = -1
        self._queue_info: QueueInfo | None = None
        self._codec = None
        self._buffered: Endpoint | None = None
        # a capture process staging LCRs (seed 001: "LCRs that were captured by a capture
        # process are always stored in a buffered queue", also in SET_UP_QUEUE's
        # transactional queues): each buffered message is one LCR, in stream order
        self.stages_captured_lcrs = False
        # consumers given a copy of each buffered message whatever delivery mode they
        # subscribed for: the apply processes of a capture staging buffered LCRs (seed 001:
        # an apply process with apply_captured dequeues captured LCRs from the buffered queue)
        self.buffered_consumers: frozenset = frozenset()
        # python-oracledb's checks of a payload's kind before it sends it (DPY-2062): the
        # front doors that are not python-oracledb (CLI, IDAP, pipeline) turn them off and
        # enqueue any value the queue's type holds (JSON scalars too)
        self.driver_checks = True

    def _buffered_endpoint(self) -> Endpoint:
        if self._buffered is None:
            self._buffered = Endpoint(self.connection)
        return self._buffered

    def _info(self) -> QueueInfo:
        """The queue's catalog entry (name resolved once per Queue object, the entry and
        its codec looked up again whenever the catalog changes)."""
        ctx = self._session_ctx
        version = ctx.store.catalog_version()
        if version != self._version:
            if self._key is None:
                self._key = split_qualified(self.name, ctx.username, "queue name")
            q = ctx.catalog.queue_by_key(self._key)
            self._queue_info, self._codec = q, ctx.catalog.codec(q.table)
            self._version = version
        return self._queue_info

    # python-oracledb's deprecated camelCase spellings
    @property
    def enqOptions(self) -> EnqOptions:  # noqa: N802
        return self.enqoptions

    @property
    def deqOptions(self) -> DeqOptions:  # noqa: N802
        return self.deqoptions

    @property
    def payloadType(self) -> Any:  # noqa: N802
        return self.payload_type

    # -- enqueue --------------------------------------------------------------
    def enqone(self, message: MessageProperties) -> None:
        """Enqueue one message; its ``msgid`` and ``enqtime`` are set on return."""
        fast = self._buffered
        if fast is not None and self.enqoptions._deliverymode == C.MSG_BUFFERED \
                and fast.enqueue_fast(self, message):
            return
        self._enqueue([message], need_payload=True)

    def enqmany(self, messages: list[MessageProperties]) -> None:
        """Enqueue several messages at once: all of them or, on any error, none."""
        if isinstance(messages, (str, bytes, bytearray, dict)) or not hasattr(messages, "__iter__"):
            raise ArgumentError(f"messages must be a list of MessageProperties, not {type(messages).__name__}")
        self._enqueue(list(messages), need_payload=True, array=True)

    enqOne = enqone  # noqa: N815
    enqMany = enqmany  # noqa: N815

    def _enqueue(self, messages: list[MessageProperties], need_payload: bool = False,
                 array: bool = False) -> None:
        """Enqueue ``messages``; ``need_payload``: refuse one without a payload, as
        python-oracledb does before sending (DPY-2000) — DBMS_AQ.ENQUEUE takes NULL
        where the queue's type can hold it."""
        # one call at a time on a connection, as python-oracledb serialises a connection's
        # round trips: threads sharing it interleaved their transaction's bookkeeping
        with self._session_ctx.lock:
            self._enqueue_serialised(messages, need_payload, array)

    def _enqueue_serialised(self, messages: list[MessageProperties], need_payload: bool,
                            array: bool) -> None:
        ctx = self._session_ctx
        ctx.check_open()
        q = self._info()
        if q.is_exception_queue or not q.enqueue_enabled:
            raise ora(25207, q.qualified)
        ctx.authz.check_enqueue(q, [m.sender_id for m in messages
                                    if isinstance(m, MessageProperties)])
        if self.payload_type is not None:
            self._check_payload_type(q)
        opts = self.enqoptions
        table = q.table
        if table.sharded:
            sharded.check_enqueue(q, [getattr(m, "_recipients", None) for m in messages],
                                  opts.transformation, array)
        grouped = table.message_grouping == "TRANSACTIONAL"
        immediate = opts._visibility == C.ENQ_IMMEDIATE
        buffered_mode = opts._deliverymode == C.MSG_BUFFERED
        if buffered_mode:   # seed 003 "Buffered Messaging Restrictions"
            if len(messages) != 1 and not table.sharded:   # array enqueue: sharded queues only
                raise not_supported("array enqueue of buffered messages (the array size must be one)")
            if grouped and not self.stages_captured_lcrs:
                raise not_supported("transaction grouping of buffered messages")
            if not table.sharded and any(isinstance(m, MessageProperties) and m._delay > 0 for m in messages):
                # seed 003: message delay is "only supported for buffered messaging on
                # sharded queues"; elsewhere "You cannot specify delay" (Oracle: ORA-25297)
                raise ora(25297, "delay")
            if messages and isinstance(messages[0], MessageProperties):
                check_lob_attributes(messages[0].payload)
            if not immediate:
                raise ora(25236)
        codec = self._codec
        transform = ctx.transformer(opts.transformation) if opts.transformation else None
        now = time.time()
        txn = new_txn_id() if immediate else ctx.txn_id()
        group_first = None if immediate else ctx.group_first.get(q.qualified)
        records: list[MessageRecord] = []
        for m in messages:
            if not isinstance(m, MessageProperties):   # python-oracledb: a TypeError
                raise ArgumentError("expecting MessageProperties object (made by Connection.msgproperties())")
            if need_payload:   # python-oracledb's checks before it sends the message
                if m.payload is None:
                    raise dpy(2000)
                # (an enqueue transformation takes its own source type: Sluice's, not Thin's)
                if self.driver_checks and transform is None and not codec.driver_accepts(m.payload):
                    raise dpy(2062)
            records.append(self._record(q, m, codec, transform, now, txn))
        if grouped and records:
            # seed 003: a group's priority, delay and expiration are its first message's
            first = group_first or records[0]
            for r in records:
                r.priority, r.delay, r.expire_at = first.priority, first.delay, first.expire_at
                r.expiration, r.enq_time, r.state = first.expiration, first.enq_time, first.state
                r.time_manager_info = first.time_manager_info
            if not immediate and group_first is None:
                ctx.group_first[q.qualified] = first
        stored = fan_out_all(ctx, q, records, [m.recipients for m in messages], codec, buffered_mode,
                             self.buffered_consumers if buffered_mode else frozenset())
        if buffered_mode:
            endpoint = self._buffered_endpoint()
            for one in _per_message(stored):   # the pool takes one message's records at a time
                store_buffered(ctx, q, one, endpoint)
            for m, r in zip(messages, records):
                m._msgid, m._enqtime, m._state, m._deliverymode = r.msgid, now, r.state, C.MSG_BUFFERED
            return
        store_records(ctx, q, stored, immediate)
        for m, r in zip(messages, records):
            m._msgid = r.msgid
            m._enqtime = now
            m._state = r.state
            m._attempts = 0
            if grouped:
                m._transaction_group = r.enq_tid

    def _record(self, q: QueueInfo, m: MessageProperties, codec, transform, now: float,
                txn: str) -> MessageRecord:
        if m._expiration < -1:
            raise ora(25209, m._expiration)
        if m._delay < 0:
            raise ora(25208, m._delay)
        if m._recipients and not q.table.multiple_consumers:
            raise ora(24039, q.qualified)
        if m._correlation is not None:   # the queue table's CORRID: VARCHAR2(128)
            checked_correlation(m._correlation)
        payload = m.payload
        if transform is not None:
            payload = transform(payload)
        data = codec.encode(payload)
        exc_schema = exc_name = None
        if m.exceptionq:
            exc_schema, exc_name = split_qualified(m.exceptionq, q.owner, "exception queue")
            exc = self._session_ctx.catalog.find_queue(exc_schema, exc_name)
            # Oracle looks for it when it moves the message: one missing then sends it to
            # the queue table's default exception queue (store.sqlops.exception_queue_for)
            if exc is not None and exc.table.payload_type != q.table.payload_type:
                raise ora(25215, f"exception queue {exc.qualified} holds {exc.table.payload_type}")
        delay, expiration = m._delay, m._expiration
        ready_at = now + delay if delay > 0 else None
        expire_at = (ready_at or now) + expiration if expiration >= 0 else None
        sender = m._sender_id
        if sender is None:
            s_name = s_address = s_protocol = None
        else:
            if sender.name is not None:
                canonical(sender.name, "sender name")
            if sender.address is not None:
                checked(sender.address)
            s_name, s_address, s_protocol = sender.name, sender.address, sender.protocol
        # positional, in MessageRecord's field order: the keyword form costs a third of
        # the array path's enqueue
        return MessageRecord(
            None, q.name, new_msgid(), m._correlation, m._priority,
            C.MSG_WAITING if ready_at else C.MSG_READY, ready_at,
            None if expiration < 0 else expiration, expire_at, ready_at if ready_at else expire_at,
            None, now, self._session_ctx.username, txn, None, None, None, 0, exc_schema, exc_name,
            s_name, s_address, s_protocol, m._original_msgid, None, None, None, None, None,
            C.MSG_PERSISTENT, data)

    def _check_payload_type(self, q: QueueInfo) -> None:
        pt = self.payload_type
        if pt is None:
            return
        table_type = q.table.payload_type
        if table_type == ANYDATA:
            return
        want = pt if isinstance(pt, str) else getattr(pt, "qualified_name", None)
        if isinstance(want, str):
            want = want.upper()
            if want in ("XMLTYPE", "SYS.XMLTYPE"):
                want = "XMLTYPE"
        if want != table_type:
            raise ora(25215, f"queue {q.qualified} holds {table_type}, not {want}")

    # -- dequeue --------------------------------------------------------------
    def deqone(self) -> MessageProperties | None:
        """Dequeue one message, or None when none arrives within ``deqoptions.wait``."""
        fast = self._buffered
        if fast is not None and self.deqoptions._deliverymode == C.MSG_BUFFERED:
            m = fast.dequeue_fast(self)
            if m is not None:
                return m
        got = self._dequeue(1)
        return got[0] if got else None

    def deqmany(self, max_num_messages: int) -> list[MessageProperties]:
        """Dequeue up to ``max_num_messages`` (waits, like deqone, for the first)."""
        if isinstance(max_num_messages, bool) or not isinstance(max_num_messages, int):
            raise ArgumentError(f"max_num_messages must be an integer, not {type(max_num_messages).__name__}")
        if not 1 <= max_num_messages <= MAX_DEQUEUE_BATCH:
            raise InterfaceError(f"max_num_messages must be a positive integer (at most {MAX_DEQUEUE_BATCH})")
        return self._dequeue(max_num_messages, array=True)

    deqOne = deqone  # noqa: N815
    deqMany = deqmany  # noqa: N815

    def _dequeue(self, limit: int, array: bool = False) -> list[MessageProperties]:
        # (serialised as _enqueue is; a waiting dequeue holds the connection, as in python-oracledb)
        with self._session_ctx.lock:
            return self._dequeue_serialised(limit, array)

    def _dequeue_serialised(self, limit: int, array: bool = False) -> list[MessageProperties]:
        ctx = self._session_ctx
        ctx.check_open()
        opts = self.deqoptions      # (its text options read from their slots: no descriptor)
        q = self._info()
        if not q.dequeue_enabled:
            raise ora(25226, q.qualified)
        if self.payload_type is not None:
            self._check_payload_type(q)
        if q.table.sharded:
            sharded.check_dequeue(q, opts._transformation, array)
        consumer = canonical(opts._consumername, "consumer name") if opts._consumername else None
        ctx.authz.check_dequeue(q, consumer)
        table = q.table
        multi = table.multiple_consumers
        exception_queue = q.queue_type == "EXCEPTION_QUEUE"
        if multi and consumer is None and not exception_queue:
            raise ora(25231)
        mode_wanted = opts._deliverymode
        if mode_wanted != C.MSG_PERSISTENT:   # seed 003: buffered dequeues are IMMEDIATE, one at a time
            if opts._visibility != C.DEQ_IMMEDIATE:
                raise ora(25236)
            if limit > 1 and mode_wanted == C.MSG_BUFFERED and not table.sharded:   # sharded only
                raise not_supported("array dequeue of buffered messages (the array size must be one)")
        if type(opts._correlation) is str:   # dequeue_options_t.correlation: VARCHAR2(128)
            checked_correlation(opts._correlation)
        if type(opts.condition) is str and not opts.condition.isascii():   # reaches the store's SQL
            checked(opts.condition)
        codec = self._codec
        predicate = sql_condition = None
        if opts.condition:
            predicate = compile_dequeue_condition(opts.condition, q, codec, ctx.cond_cache)
            sql_condition = compile_sql_condition(opts.condition, q, codec, ctx.store.dialect,
                                                  ctx.cond_cache)
            if sql_condition is not None and not isinstance(sql_condition[1], list):
                sql_condition = (sql_condition[0], list(sql_condition[1].params))   # SYSDATE now
        nav = ctx.navigation(q.qualified)
        grouped = table.message_grouping == "TRANSACTIONAL"
        states = _EXPIRED if exception_queue else _READY
        navigation = opts._navigation
        if opts.msgid is not None:
            if not isinstance(opts.msgid, (bytes, bytearray)):
                raise InterfaceError("deqoptions.msgid must be bytes")
            sel = Selector(msgid=bytes(opts.msgid), predicate=predicate,
                           states=states if exception_queue else (C.MSG_READY, C.MSG_WAITING),
                           consumer_name=consumer, multi=multi)
        else:
            if nav.position is None and nav.buffered is None:   # no position yet: from the start
                navigation = C.DEQ_FIRST_MSG
            if navigation != C.DEQ_FIRST_MSG:
                if opts._correlation != nav.correlation:
                    raise ora(25241, nav.correlation, opts._correlation)
                if consumer != nav.consumer:
                    raise ora(25242, nav.consumer, consumer)
            sel = Selector(correlation=opts._correlation, predicate=predicate, states=states,
                           consumer_name=consumer, multi=multi)
            if navigation == C.DEQ_NEXT_MSG:
                sel.after = nav.position
                if grouped:
                    sel.group = nav.group
            elif navigation == C.DEQ_NEXT_TRANSACTION:
                sel.after = nav.position
                if nav.group is not None:
                    sel.skip_groups = frozenset((nav.group,))
        sel.sql_condition = sql_condition
        # persistent only, buffered only, or None: both
        sel.delivery_mode = mode_wanted if mode_wanted != C.MSG_PERSISTENT_OR_BUFFERED else None
        transform = None
        if opts._transformation:   # a dequeue transformation overrides the subscriber's (seed 003)
            transform = ctx.transformer(opts._transformation)
        elif multi and consumer is not None:
            sub = next((s for s in ctx.catalog.subscribers(q)
                        if s.name == consumer and s.address is None), None)
            if sub is not None and sub.transformation:
                transform = ctx.transformer(sub.transformation)
        with_payload = opts._mode != C.DEQ_REMOVE_NODATA
        # A dequeue whose payload may fail to read (an object type dropped since, a
        # transformation that raises) fails whole, as an Oracle call does: taken back to a
        # savepoint, the messages stay in the queue and the position where it was.  (RAW,
        # JSON and XML payloads read without fail: no savepoint, no round trip, for them.)
        # An IMMEDIATE REMOVE commits on its own, past any savepoint, and a buffered message
        # in memory has no transaction at all: those messages are read before they are gone
        # (``reading``, run by the store before its COMMIT, by the pool before it lets go).
        mark = reading = None
        if with_payload and (transform is not None or table.payload_type not in _READ_WITHOUT_FAIL):
            mark = ctx.session.savepoint(), dataclasses.replace(nav)
            if opts._mode == C.DEQ_REMOVE and opts._visibility == C.DEQ_IMMEDIATE:
                reading = _Reading(lambda rs: [self._properties(r, codec, transform, True, grouped)
                                               for r in rs])
        if navigation == C.DEQ_FIRST_MSG and opts.msgid is None:   # (by msgid: the position stays)
            nav.buffered = None
        recs = self._wait_and_take(q, sel, limit, navigation, grouped, nav, consumer, reading)
        if not recs:
            return []
        if mark is not None:
            try:
                return self._read(recs, opts, table, nav, consumer, codec, transform, with_payload, grouped,
                                  reading)
            except Exception:
                ctx.session.rollback_to_savepoint(mark[0])
                for f in dataclasses.fields(Navigation):
                    setattr(nav, f.name, getattr(mark[1], f.name))
                raise
        return self._read(recs, opts, table, nav, consumer, codec, transform, with_payload, grouped)

    def _read(self, recs: list[MessageRecord], opts: DeqOptions, table: Any, nav: Navigation,
              consumer: str | None, codec: Any, transform: Callable | None, with_payload: bool,
              grouped: bool, reading: "_Reading | None" = None) -> list[MessageProperties]:
        """The taken records as messages (those ``reading`` read already as it read them),
        the session's position moved past them."""
        done = reading.done if reading is not None else {}
        out = [done[id(r)] if id(r) in done else self._properties(r, codec, transform, with_payload, grouped)
               for r in recs]
        if opts.msgid is None:
            last = recs[-1]
            if (last.seq or 0) > 0:   # a table's message; an in-memory one's position is nav.buffered
                nav.position = order_key(table, last)
                # (a spilled buffered message is in no group: seed 003, no grouping of buffered)
                nav.group = last.enq_tid if grouped and last.delivery_mode != C.MSG_BUFFERED else None
            nav.correlation = opts._correlation
            nav.consumer = consumer
        return out

    def _wait_and_take(self, q: QueueInfo, sel: Selector, limit: int, navigation: int, grouped: bool,
                       nav: Navigation, consumer: str | None, reading: "_Reading | None") -> list[MessageRecord]:
        args = (q, sel, limit, navigation, grouped, nav, consumer, reading)
        if self.deqoptions._wait == C.DEQ_NO_WAIT:
            return self._wait_and_take_loop(*args)
        with self._session_ctx.waiting():     # Connection.cancel() ends the wait
            if sel.delivery_mode != C.MSG_PERSISTENT:
                with self._buffered_endpoint().pool.watching():   # a buffered enqueue wakes it
                    return self._wait_and_take_loop(*args)
            return self._wait_and_take_loop(*args)

    def _wait_and_take_loop(self, q: QueueInfo, sel: Selector, limit: int, navigation: int,
                            grouped: bool, nav: Navigation, consumer: str | None,
                            reading: "_Reading | None") -> list[MessageRecord]:
        ctx = self._session_ctx
        opts = self.deqoptions
        store, session = ctx.store, ctx.session
        immediate = opts._visibility == C.DEQ_IMMEDIATE
        mode = opts._mode
        info = None
        wait = opts._wait
        deadline = None if wait == C.DEQ_WAIT_FOREVER else time.monotonic() + wait
        while True:
            since = store.change_counter() if wait != C.DEQ_NO_WAIT else 0   # read before looking
            if sel.delivery_mode != C.MSG_PERSISTENT:   # this process's buffered messages first
                rec = self._buffered_endpoint().take(q, sel, mode, nav, reading)
                if rec is not None:
                    taken = [rec]
                    # an array dequeue of buffered messages (sharded queues: seed 003)
                    while sel.delivery_mode == C.MSG_BUFFERED and len(taken) < limit and sel.msgid is None:
                        rec = self._buffered_endpoint().take(q, sel, mode, nav, reading)
                        if rec is None:
                            break
                        taken.append(rec)
                    return taken
            if sel.delivery_mode == C.MSG_BUFFERED:
                recs = []
            else:
                if info is None:
                    info = DequeueInfo(user=ctx.username, consumer_name=consumer, check=reading)
                try:
                    recs = session.dequeue(q, sel, mode, immediate, limit, info)
                except DatabaseError as e:
                    raise ctx.catalog.dropped(q, e) or e
            if recs:
                return recs
            # a delayed buffered message in memory (sharded queues): nothing wakes a wait
            # when its delay ends, so the wait ends then, and by its msgid it is WAITING
            ready = self._buffered_endpoint().pool.next_ready(q, sel) \
                if sel.delivery_mode != C.MSG_PERSISTENT and q.table.sharded else None
            if sel.msgid is not None:
                status = None if ready is not None else \
                    session.message_status(q, sel.msgid, sel.consumer_name if sel.multi else None)
                if ready is None and (status is None or status[0] not in sel.states):
                    raise ora(25263, q.qualified, sel.msgid.hex().upper())
                if status is not None and status[1] == HELD_HERE and immediate and wait != C.DEQ_NO_WAIT:
                    # a transaction of its own waiting for this session's, which cannot
                    # end meanwhile: Oracle's self-deadlock of an autonomous transaction
                    raise ora(60)
            elif grouped and sel.group is not None and navigation == C.DEQ_NEXT_MSG:
                raise ora(25235, q.qualified)
            elif sel.after is not None or (nav.buffered is not None and sel.delivery_mode != C.MSG_PERSISTENT):
                # seed 003: at the end of the queue the session's position goes back to
                # the beginning — a waiting dequeue looks on from there, one that does not
                # wait reports the end.  Either way the position is the beginning now, not
                # the last message taken: a dequeue that waits in vain must not leave the
                # next one behind messages committed meanwhile ahead of that message (a
                # higher priority, or an earlier enqueue time from a longer transaction).
                # (Both positions: the table's and memory's.)
                nav.position = nav.buffered = None
                if wait != C.DEQ_NO_WAIT:
                    sel.after, sel.skip_groups = None, frozenset()
                    continue
            if wait == C.DEQ_NO_WAIT:
                return []
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return []
            if ready is not None:
                remaining = max(0.0, min(ready - time.time(), 3600.0 if remaining is None else remaining))
            ctx.wait_for_messages(since, 3600.0 if remaining is None else remaining)
            # the queue may have been stopped for dequeue (STOP_QUEUE) or dropped while
            # this call waited: it takes nothing from it then (ORA-25226, ORA-24010)
            if not self._info().dequeue_enabled:
                raise ora(25226, q.qualified)

    @staticmethod
    def _properties(r: MessageRecord, codec, transform: Callable | None, with_payload: bool,
                    grouped: bool) -> MessageProperties:
        m = MessageProperties.__new__(MessageProperties)
        if with_payload:
            payload = codec.decode(r.user_data)
            if transform is not None:
                payload = transform(payload)
        else:
            payload = codec.no_data()
        m.payload = payload
        m._priority = r.priority
        m._correlation = r.corrid
        m._delay = int(round(r.delay - r.enq_time)) if r.delay else 0
        m._expiration = -1 if r.expiration is None else r.expiration
        m._exceptionq = f"{r.exception_qschema}.{r.exception_queue}" if r.exception_queue else None
        m._recipients = recipient_list(r) if r.recipient_list else []
        m._sender_id = _sender(r.sender_name, r.sender_address, r.sender_protocol or 0) \
            if (r.sender_name or r.sender_address) else None
        m._original_msgid = r.original_msgid
        m._msgid = r.msgid
        m._enqtime = r.enq_time
        m._attempts = r.retry_count
        m._state = r.state
        m._deliverymode = r.delivery_mode
        m._transaction_group = r.enq_tid if grouped else None
        m._consumer_name = r.consumer_name
        return m


class _Reading:
    """Reads the messages an IMMEDIATE REMOVE took before they are gone for good (the
    store's ``DequeueInfo.check``): raising there takes nothing.  Keeps what it read,
    by record, for the dequeue to hand back without reading (transforming) twice."""

    __slots__ = ("read", "done")

    def __init__(self, read: Callable[[list[MessageRecord]], list[MessageProperties]]) -> None:
        self.read = read
        self.done: dict[int, MessageProperties] = {}

    def __call__(self, recs: list[MessageRecord]) -> None:
        self.done = {id(r): m for r, m in zip(recs, self.read(recs))}


_SENDERS: dict[tuple, Agent] = {}


def _sender(name: str | None, address: str | None, protocol: int) -> Agent:
    """The sender's Agent (immutable: one per sender, not one per message dequeued)."""
    key = (name, address, protocol)
    agent = _SENDERS.get(key)
    if agent is None:
        if len(_SENDERS) > 1000:
            _SENDERS.clear()
        agent = _SENDERS[key] = Agent(name, address, protocol)
    return agent


def fan_out_all(ctx: Any, q: QueueInfo, records: list[MessageRecord], recipients: list,
                codec: Any, buffered: bool = False, also: frozenset = frozenset()) -> list[MessageRecord]:
    """The records to store for ``records``: in a multi-consumer queue one per recipient
    (the given list of each, or else the subscribers whose rules hold; seed 003; ``also``:
    see :func:`~.recipients.recipients_of`)."""
    if not q.table.multiple_consumers or not records:
        return records
    if not any(recipients) and not any(s.rule for s in ctx.catalog.subscribers(q)):
        # no recipient lists and no subscriber rules: every message goes to the same
        # subscribers, looked up once for the batch (a propagated or captured batch)
        agents = recipients_of(ctx, q, [], records[0], codec, buffered=buffered, also=also)
        return [copy for r in records for copy in fan_out(r, agents)]
    return [copy for given, r in zip(recipients, records)
            for copy in fan_out(r, recipients_of(ctx, q, given, r, codec, buffered=buffered, also=also))]


def store_records(ctx: Any, q: QueueInfo, stored: list[MessageRecord], immediate: bool) -> None:
    """Hand persistent records to the session, with what they owe registrations (in the
    same transaction), and wake the notification dispatcher."""
    regs = ctx.catalog.registrations(q)
    if regs:
        owe_notifications(stored, regs, q.table.payload_type == "RAW")
    try:
        ctx.session.enqueue(q, stored, immediate)
    except DatabaseError as e:
        raise ctx.catalog.dropped(q, e) or e
    if regs:
        dispatcher_for(ctx.store)


def store_buffered(ctx: Any, q: QueueInfo, stored: list[MessageRecord], endpoint: Endpoint) -> None:
    """Hand buffered records to the process's pool through ``endpoint`` (an application's
    enqueue, a propagation receiver's), with what they owe registrations: seed 003, they
    hear of buffered messages too — PL/SQL procedures only on sharded queues (seed 003
    "Buffered Messaging Restrictions": buffered PL/SQL notification is for sharded queues)."""
    regs = [reg for reg in ctx.catalog.registrations(q) if reg["protocol"] != "PLSQL" or q.table.sharded]
    if regs:
        owe_notifications(stored, regs, q.table.payload_type == "RAW")
    endpoint.enqueue(q, stored)
    if regs:   # no transaction to ride on: the outbox rows commit on their own
        ctx.store.write_notifications(q.qualified, [r for r in stored if r.notices])
        dispatcher_for(ctx.store)


def _per_message(records: list[MessageRecord]) -> list[list[MessageRecord]]:
    """``records`` (a multi-consumer message's copies next to each other) by message."""
    out: list[list[MessageRecord]] = []
    for r in records:
        if out and out[-1][0].msgid == r.msgid:
            out[-1].append(r)
        else:
            out.append([r])
    return out


def owe_notifications(records: list[MessageRecord], regs: list[dict], raw: bool) -> None:
    """Attach to each record the notifications its registrations are owed: a queue's
    registration hears of every message, a consumer's only of that consumer's."""
    for r in records:
        owed = [(reg["id"], r.user_data if raw and reg.get("payload") else None) for reg in regs
                if reg.get("consumer") is None or (reg["consumer"] == r.consumer_name and r.address is None)]
        r.notices = owed or None
