"""One run of a propagation schedule (seed 001 "Propagation Jobs").

:func:`run_schedule` moves what is waiting for the schedule's destination, a batch at
a time, until the source has nothing more for it (or the window ends).  A batch is the
records of the source queue addressed to the destination — a Streams propagation's
subscriber, or a recipient ``Agent("S", "q@dbs2.net")`` given at enqueue (seed 003
"Propagation to Remote Subscribers") — taken in the queue's order and locked; from a
single-consumer sharded queue (seed 003: sharded queues propagate between single- and
multi-consumer ones) its messages, the propagation being their consumer and the
queue-to-queue schedule's destination queue where they all go.  For each
message: the propagation's rule sets decide whether it goes (Table 6-1; a message they
discard is consumed and not sent), a subset rule migrates the row (an UPDATE into or out
of the subset becomes an INSERT or a DELETE), the rule's declarative transformations
(DBMS_STREAMS_ADM.RENAME_SCHEMA …) and then its ``STREAMS$_TRANSFORM_FUNCTION``, or the
subscriber's transformation, change it (seed 003 "Message Format Transformation"),
its delay and expiration lose the time already spent, and its recipients there are the
named ones or else the destination queue's subscribers.  The destination commits the
batch; only then does the source commit the dequeue, with the schedule's statistics in
the same transaction (seed 001 "Ensured Message Delivery", DESIGN.md §7 "Exactly
once").  If anything fails the source takes back what it dequeued — as it was, without
counting a failed attempt — and the schedule records the failure and backs off.

Except, in a queue-to-dblink schedule, what a destination refuses for an application
error — its queue does not exist (ORA-24010), its payload type differs (ORA-25215) —
(seed 003 "Propagation failures"): the batch is sifted (:func:`_sift`), the messages the
destination takes are delivered, and the source's records of the refused ones are marked
UNDELIVERABLE, with an entry in the alert log, instead of blocking the schedule.  So is,
in either kind of schedule, a message larger than any request the destination's HTTP
servlet takes (ORA-12899, :func:`_oversized`): taken out of its batch before it is sent.

A source transaction is never split between batches (a batch that ends inside one takes
the rest of it), so a grouped destination receives each transaction whole (seed 003
"Message Grouping"; for LCR queues: source transaction boundaries).
"""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, replace
from typing import Any, Callable

from ... import constants as C
from ...aq.buffered import existing_pool
from ...aq.payload import SIMPLE_TYPES, PayloadCodec
from ...errors import DatabaseError, ora
from ...names import qualified
from ...rules.engine.anydata import AnyData
from ...routines import registered_function
from ...store.base import DequeueInfo, MessageRecord, QueueInfo, Selector, remote_match
from ..rowmigration import migrate
from ..transform import transform
from ..transform.adm import declarative_transformations
from ..rulesets import evaluate_rule_sets
from ..clientrights import check_rule_sets
from . import schedules as sched
from . import spec as specs
from .sites import Destination
from .wire import Batch, Propagated

TRANSFORM = "STREAMS$_TRANSFORM_FUNCTION"
_STATES = (C.MSG_READY, C.MSG_WAITING)
# Oracle's alert.log: where a propagation says which messages it marked UNDELIVERABLE
alert = logging.getLogger("sluice.alert")
# the destination's errors that say the message can never go there as it is (seed 003
# "Propagation failures": the remote queue does not exist, a type mismatch; a sharded queue
# behind a classic one or the reverse, ORA-24205: "You cannot propagate between sharded and
# non-sharded queues")
APPLICATION_ERRORS = frozenset({24010, 24205, 25215})
# a message larger than any request the destination's servlet takes (sites.HttpSite): it
# can never go as it is over that link, in either kind of schedule (DESIGN-NOTES "Large
# messages over HTTP")
TOO_LARGE = 12899


@dataclass
class RunResult:
    messages: int = 0
    nbytes: int = 0
    batches: int = 0
    error: BaseException | None = None


@dataclass
class _Route:
    """What the source knows about one destination address: the propagation that owns
    it (None: a plain AQ remote subscriber) and the subscriber's transformation."""

    spec: specs.PropagationSpec | None
    transformation: str | None = None
    enabled: bool = True
    queue_to_queue: bool = False      # moved by a schedule of its own, not the link's


@dataclass
class JobEnv:
    """What a run needs from its runner: the propagating connection (the source site's
    session), the clock, this site's name, and the destination of a schedule."""

    conn: Any
    clock: Callable[[], float]
    site: str
    destination: Callable[[sched.Schedule], Any]
    batch_size: int = 500
    max_batches: int = 1000
    declared: dict | None = None       # the declarative transformations, by rule
    declared_version: int = -1         # as of this catalog version
    routes_version: int = -1           # the catalog version a run's routes were read at
    owners_version: int = -1           # ... and the propagations' owners' rights checked at
    # more sessions of the propagating user at the source (HTTP batches are pipelined: one
    # is dequeued while others are committed at the destination): ``spare(i)`` is the i-th
    # (from 0); None: one batch at a time
    spare: Callable[[int], Any] | None = None


def run_schedule(env: JobEnv, s: sched.Schedule) -> RunResult:
    """Propagate for ``s`` until its source has nothing more for it; record the outcome
    in the schedule (committed).  Never raises a propagation error: it is recorded."""
    ctx = env.conn.context
    result = RunResult()
    try:
        q = ctx.catalog.queue_by_key((s.qschema, s.qname))
        if not ctx.authz.has_queue_privilege(q, "DEQUEUE"):   # the propagating session's user
            raise ora(1031)
        dest = env.destination(s)
        if dest.dedup and not dest.restored(s.key):
            dest.restore(s.key, sched.load_untold(ctx.session, s.key))
        env.routes_version = ctx.store.catalog_version()
        routes = _routes(ctx, q)
        _check_owners(env, routes)
        pipelined = getattr(dest, "pipelined", False) and env.spare is not None and existing_pool(ctx.store) is None
        if pipelined:
            _pipelined(env, s, q, dest, routes, result)
        while not pipelined and result.batches < env.max_batches:
            start = env.clock()
            if result.batches and not _reread(env, s, q, routes, ctx.session):
                break
            if not s.due(start):
                break
            moved = _one_batch(env, s, q, dest, routes, start)
            if moved is None:
                break
            result.batches += 1
            result.messages += moved[0]
            result.nbytes += moved[1]
        if result.batches == 0 and s.failures:    # it ran without an error: the failures end
            _record(ctx, s, lambda: s.record_success(env.clock(), 0, 0, 0.0))
    except DatabaseError as e:
        result.error = e
        try:
            _fail(env, s, e)
        except DatabaseError:
            pass      # the source store itself fails: the next run finds the schedule as it was
    return result


@dataclass
class _Taken:
    """A batch dequeued in ``session`` (since ``mark``), not yet committed there."""

    session: Any
    mark: Any
    batch: Batch
    buffered: list[MessageRecord]
    records: list[MessageRecord]     # all it dequeued, buffered ones too
    start: float
    dequeued: float
    pickled: float
    # where the next batch may start reading while this one is in flight (_pipelined): the
    # order key of the last READY record it read, when it read a full batch of them; and
    # what the store's change counter and the routes' catalog version were before it read
    ready_last: tuple | None = None
    seen: tuple[int, int] | None = None


def _one_batch(env: JobEnv, s: sched.Schedule, q: QueueInfo, dest: Any, routes: dict[str, _Route],
               start: float) -> tuple[int, int] | None:
    """One batch, committed at both ends: ``(messages, bytes)``; None when nothing waits."""
    taken = _take(env, s, q, routes, env.conn.context.session, start)
    if taken is None:
        return None
    try:
        _oversized(s, q, dest, taken)
        _deliver(s, q, dest, taken)
        return _settle(env, s, dest, taken)
    except BaseException:
        _give_back(env, q, taken)
        raise


def _application_error(s: sched.Schedule, dest: Any, error: DatabaseError) -> bool:
    """Whether ``error`` of ``dest`` marks messages UNDELIVERABLE: an application error in
    a queue-to-dblink schedule.  A queue-to-queue schedule stops with it instead (seed
    003: "propagation stops and throws an error ... The message is not marked as
    UNDELIVERABLE"), and so does a propagation within this site (no database link).
    A message too large for the destination's servlet (ORA-12899) is marked in both kinds:
    no administrator's fix of the queues lets it go."""
    code = getattr(error, "code", None)
    return isinstance(dest, Destination) and (
        code == TOO_LARGE or s.destination_queue is None and code in APPLICATION_ERRORS)


def _oversized(s: sched.Schedule, q: QueueInfo, dest: Any, taken: _Taken) -> None:
    """The messages of ``taken`` that no request to ``dest`` can carry (an HTTP servlet's
    limit, :meth:`.sites.HttpSite.oversized`) leave the batch before it is sent: marked
    UNDELIVERABLE with their ORA-12899, as a refused message is (:func:`_deliver`)."""
    check = getattr(dest, "oversized", None)
    if check is None:
        return
    bad = check(taken.batch)
    if bad:
        drop = {id(m) for m, _ in bad}
        taken.batch.messages = [m for m in taken.batch.messages if id(m) not in drop]
        _mark_undeliverable(s, q, taken, bad)


def _deliver(s: sched.Schedule, q: QueueInfo, dest: Any, taken: _Taken,
             refused: DatabaseError | None = None) -> None:
    """Deliver ``taken.batch`` (``refused``: the destination refused it already, for an
    application error).  When the destination refuses it for an application error in a
    queue-to-dblink schedule, :func:`_sift` delivers what it takes; the batch becomes that,
    and the source records of the rest are marked UNDELIVERABLE in ``taken``'s
    transaction (committed with the dequeue of the delivered ones, by :func:`_settle`).

    Marked messages stay marked: neither a later successful run nor
    DBMS_AQADM.VERIFY_QUEUE_TYPES tries them again.  Seed 003's "When a new job queue
    process starts, it clears the mismatched type errors so the types can be reverified"
    is about the cache of verified types, not the marked messages, which Oracle leaves
    UNDELIVERABLE; an administrator who fixed the destination enqueues them again."""
    batch = taken.batch
    if refused is None:
        refused = _refusal(s, dest, batch)
        if refused is None:
            return
    groups: dict[tuple, list[Propagated]] = {}     # messages one check treats alike
    for m in batch.messages:
        key = (m.dest_queue, m.payload_type, isinstance(m.user_data, (bytes, bytearray, memoryview)))
        groups.setdefault(key, []).append(m)
    good: list[Propagated] = []
    bad: list[tuple[Propagated, DatabaseError]] = []
    for msgs in groups.values():
        _sift(s, dest, batch, msgs, good, bad, refused if len(groups) == 1 else None)
    batch.messages = good
    _mark_undeliverable(s, q, taken, bad)


def _sift(s: sched.Schedule, dest: Any, batch: Batch, msgs: list[Propagated], good: list[Propagated],
          bad: list[tuple[Propagated, DatabaseError]], refused: DatabaseError | None) -> None:
    """Deliver ``msgs`` (a part of ``batch``, as a batch of its own) and add them to
    ``good``; refused for an application error (``refused``: known to be), the part is
    halved until the refused messages are alone, and those go to ``bad``.  A missing
    queue refuses a whole part at once (each part holds one destination queue).  Each
    part delivered is committed at the destination with its de-duplication rows, so what
    a later failure gives back at the source is skipped when it is sent again: delivered
    once.  Any other error is the batch's (raised)."""
    if refused is None:
        refused = _refusal(s, dest, Batch(batch.source_site, batch.source_queue, msgs,
                                          source_sharded=batch.source_sharded))
        if refused is None:
            good.extend(msgs)
            return
    if len(msgs) == 1 or refused.code == 24010:
        bad.extend((m, refused) for m in msgs)
        return
    half = len(msgs) // 2
    _sift(s, dest, batch, msgs[:half], good, bad, None)
    _sift(s, dest, batch, msgs[half:], good, bad, None)


def _refusal(s: sched.Schedule, dest: Any, batch: Batch) -> DatabaseError | None:
    """Deliver ``batch``: None once delivered, the destination's error when it refuses
    the batch for an application error (:func:`_application_error`); any other raised."""
    try:
        dest.deliver(batch)
        return None
    except DatabaseError as e:
        if not _application_error(s, dest, e):
            raise
        return e


def _mark_undeliverable(s: sched.Schedule, q: QueueInfo, taken: _Taken,
                        bad: list[tuple[Propagated, DatabaseError]]) -> None:
    """The source records of ``bad`` are kept, UNDELIVERABLE, and the alert log says so.
    A buffered message has no record to keep (best effort): it is dropped, said too."""
    why = {(m.source_msgid, m.dest_queue): e for m, e in bad}
    kept: list[MessageRecord] = []
    for r in taken.records:
        error = why.get((r.msgid, r.address.partition("@")[0])) if r.address else None
        if error is None:
            continue
        buffered = r.delivery_mode == C.MSG_BUFFERED
        if not buffered:
            kept.append(r)
        alert.error("propagation from %s to %s: message %s (recipient %s) %s: %s",
                    q.qualified, s.destination, r.msgid.hex().upper(), r.consumer_name or r.address,
                    "buffered, dropped" if buffered else "marked UNDELIVERABLE", error)
    if kept:
        taken.session.undeliverable(q, kept)


def _take(env: JobEnv, s: sched.Schedule, q: QueueInfo, routes: dict[str, _Route], session: Any,
          start: float, after: tuple | None = None) -> _Taken | None:
    """Dequeue the next batch in ``session`` (uncommitted) and build it; None when
    nothing waits.  ``after``: read the READY messages from there on (:func:`_hint`)."""
    ctx = env.conn.context
    seen = (ctx.store.change_counter(), env.routes_version)
    ready_last = None
    # not now: a stopped propagation's records, and under a link's shared schedule those
    # of the queue-to-queue propagations over it (their own schedules move them)
    buffered: list[MessageRecord] = []
    disabled = {a.rpartition("|")[2] for a, r in routes.items()
                if not r.enabled or (r.queue_to_queue and s.destination_queue is None)}
    predicate = (lambda r: r.address not in disabled) if disabled else None
    mark = session.savepoint()
    try:
        # READY messages, then delayed ones (each state in dequeue order: one index walk)
        recs: list[MessageRecord] = []
        multi = q.table.multiple_consumers
        for state in _STATES:
            if len(recs) < env.batch_size:
                start_at = after if state == C.MSG_READY else None
                sel = Selector(states=(state,), multi=True, remote=_remote(s), predicate=predicate,
                               after=start_at) if multi else Selector(states=(state,), after=start_at)
                got = session.dequeue(q, sel, C.DEQ_REMOVE, False, env.batch_size - len(recs),
                                      DequeueInfo(user=ctx.username))
                if state == C.MSG_READY and len(got) == env.batch_size and (got[-1].seq or 0) > 0:
                    ready_last = tuple(getattr(got[-1], c.lower()) for c in q.table.order_columns)
                recs += got
        if recs and q.table.message_grouping == "TRANSACTIONAL":
            recs = _whole_transactions(session, q, sel, recs)
        buffered = _take_buffered(ctx, s, q, disabled, env.batch_size - len(recs))
        if multi:
            recs += buffered
        else:
            # a single-consumer (sharded) source: the propagation is its consumer, and each
            # message goes to the schedule's destination queue (schedule_propagation lets
            # only a queue-to-queue schedule have such a source); dequeued as any consumer
            # would, it is PROCESSED at the source once the destination has it (seed 003).
            # Its buffered messages are addressed so in copies: what goes back into memory
            # if the batch fails is the originals, filed under no address as before.
            for r in recs:
                r.address = s.destination
            recs += [replace(r, address=s.destination) for r in buffered]
        if not recs:
            session.rollback_to_savepoint(mark)
            return None
        dequeued = env.clock()
        batch = _batch(env, q, recs, routes, dequeued)
        return _Taken(session, mark, batch, buffered, recs, start, dequeued, env.clock(), ready_last, seen)
    except BaseException:
        _release(env, q, session, mark, buffered)
        raise


def _settle(env: JobEnv, s: sched.Schedule, dest: Any, taken: _Taken,
            untold: list[tuple[str, bytes]] | None = None) -> tuple[int, int]:
    """The destination committed ``taken``: commit its dequeue at the source with the
    schedule's statistics and what the destination has not been told the source let go
    (this batch, and ``untold``: acknowledgements not yet known to have reached it)."""
    batch, session = taken.batch, taken.session
    nbytes = sum(m.size for m in batch.messages)
    end = env.clock()
    s.record_success(end, len(batch.messages), nbytes, end - taken.start, taken.dequeued - taken.start,
                     taken.pickled - taken.dequeued)
    session.add_commit_work(sched.runtime_work(s))
    if dest.dedup:
        session.add_commit_work(sched.untold_work(s, [(m.dest_queue, m.source_msgid) for m in batch.messages
                                                      if not m.buffered] + (untold or [])))
    session.commit()
    dest.acknowledge(batch)    # let go: the next batch is all new, and says so
    return len(batch.messages), nbytes


def _give_back(env: JobEnv, q: QueueInfo, taken: _Taken) -> None:
    """Release what ``taken`` dequeued."""
    _release(env, q, taken.session, taken.mark, taken.buffered)


def _release(env: JobEnv, q: QueueInfo, session: Any, mark: Any, buffered: list[MessageRecord]) -> None:
    """Release what ``session`` dequeued since ``mark`` (see :func:`_take_back`); the
    buffered messages taken go back into memory (best effort, but none lost while the
    source lives)."""
    try:
        _take_back(session, mark)
    finally:
        if buffered:
            existing_pool(env.conn.context.store).put_back(q, buffered, taken=True)   # (_take_buffered)


def _pipelined(env: JobEnv, s: sched.Schedule, q: QueueInfo, dest: Any, routes: dict[str, _Route],
               result: RunResult) -> None:
    """Batches over HTTP with ``dest.depth`` in flight (two for a destination that does not
    say): while the destination commits one, the next is dequeued (in another source
    session: the rows the others hold are skipped, :func:`_hint`) and written behind it on
    the same connection (:meth:`.sites.HttpSite.post`), committed there in the order
    posted.  The answers are read in order and each source session commits in that order.
    With three, the destination has a batch to commit while the source commits one (its
    commit may wait on the disk: a WAL checkpoint) and dequeues the next.  When a batch
    fails, those posted after it go back to the source (the destination may have
    committed them: the next batch is a resend, and a later one holding some of them is
    refused by their de-duplication rows and sent again as a resend — either way skipped
    there), and the failed one is sent once more as a resend, as :func:`_one_batch`
    would; if that fails too it goes back and the error is the run's.  When the
    connection takes no more batches while some are in flight (a post fails: the servlet
    closed it), the batch being posted goes back and theirs are read first, each its own
    outcome, before the next is posted (on a new connection)."""
    depth = max(2, getattr(dest, "depth", 2))
    free = [env.conn.context.session] + [env.spare(i) for i in range(depth - 1)]
    flying: deque[tuple[_Taken, Any]] = deque()
    more = True
    draining = False     # the connection takes no more batches: those in flight are answered first
    try:
        while True:
            while more and not draining and len(flying) < depth and result.batches + len(flying) < env.max_batches:
                start = env.clock()
                if (result.batches or flying) and not _reread(env, s, q, routes, free[0]):
                    more = False
                    break
                if not s.due(start):
                    more = False
                    break
                taken = _take(env, s, q, routes, free[0], start, _hint(env, flying[-1][0]) if flying else None)
                if taken is None:
                    more = False
                    break
                free.pop(0)
                flying.append((taken, None))
                try:
                    _oversized(s, q, dest, taken)
                    flying[-1] = (taken, dest.post(taken.batch))
                except DatabaseError:
                    if len(flying) == 1:
                        raise
                    # the connection went behind batches in flight (the servlet closed it
                    # after an answer the source has not read yet): this batch goes back, and
                    # their answers are read -- each its own outcome, a refusal sifted, one
                    # that cannot be read failed as any unanswered batch -- not the whole run's
                    flying.pop()
                    free.insert(0, taken.session)
                    _give_back(env, q, taken)
                    draining = True
                    break
            if not flying:
                return
            taken, posted = flying[0]
            try:
                dest.answer(posted)
            except DatabaseError as e:
                while len(flying) > 1:          # the destination never answered for them
                    later, _ = flying.pop()
                    free.insert(0, later.session)
                    _give_back(env, q, later)
                    more = True                 # they are waiting at the source again
                application = _application_error(s, dest, e)
                if taken.batch.resend and not application and not getattr(e, "resized", False):
                    raise
                # sent again, as a resend (clean is off) -- in smaller parts after a 413 that
                # taught the servlet's limit (sites.HttpSite._send) --, or sifted
                _deliver(s, q, dest, taken, e if application else None)
            moved = _settle(env, s, dest, taken, dest.in_flight_acked())
            flying.popleft()
            free.append(taken.session)
            draining = draining and bool(flying)
            result.batches += 1
            result.messages += moved[0]
            result.nbytes += moved[1]
    except BaseException:
        if flying:
            dest.failed()       # what was posted and not answered: its answers are not read
        for taken, _ in flying:
            _give_back(env, q, taken)
        raise


def _hint(env: JobEnv, flying: _Taken) -> tuple | None:
    """Where the batch taken while ``flying`` is in flight starts reading its READY messages:
    behind ``flying``'s, rather than from the queue's start through ``flying``'s locked
    records (each read, built and refused its lock — half of a batch's dequeue).  Only when
    that skips nothing the batch would take: nothing made a message available since
    ``flying`` was read (no commit with enqueues, released lock or promotion in any process:
    a store whose change counter sees them all) and the routes are the same — so what lies
    before that point is ``flying``'s, or was unavailable then and is still.  Else (or
    on a PostgreSQL source, whose SKIP LOCKED passes the locked rows in the server) None:
    from the start, the queue's order for whatever came meanwhile."""
    store = env.conn.context.store
    if flying.ready_last is None or not store.changes_complete:
        return None
    if (store.change_counter(), env.routes_version) != flying.seen:
        return None
    return flying.ready_last


def _take_buffered(ctx: Any, s: sched.Schedule, q: QueueInfo, disabled: set[str], limit: int) -> list[MessageRecord]:
    """Buffered messages in this process's memory for the schedule's destination (seed 003
    "Propagating Buffered Messages": one schedule serves both kinds), taken out of memory
    as a REMOVE dequeue in the batch's transaction would be — from a single-consumer
    (sharded) source all of them: the propagation is its consumer.  Those of other
    processes are not here: they reach the queue table when they spill, and go from there."""
    pool = existing_pool(ctx.store)
    if pool is None:
        return []
    if q.table.multiple_consumers:
        remote = _remote(s)
        taken = pool.take_remote(q, lambda a: remote_match(remote, a) and a not in disabled, limit)
    else:
        taken = pool.take_remote(q, lambda a: a is None, limit)
    for r in taken:
        pool.taken(q, r, ctx)     # a capture staging buffered LCRs hears of it
    return taken


def _take_back(session: Any, mark: Any) -> None:
    """Release what the batch dequeued as it was (no failed attempt counted: the message
    did nothing wrong, its destination did) and end the transaction."""
    try:
        session.rollback_to_savepoint(mark)
    finally:
        session.rollback()


def _remote(s: sched.Schedule) -> tuple[str, str | None]:
    address, link = sched.address_pattern(s)
    if address is not None:
        return ("address", address)
    if link is not None:
        return ("link", link)
    return ("local", None)


def _whole_transactions(session: Any, q: QueueInfo, sel: Selector, recs: list[MessageRecord]) -> list[MessageRecord]:
    """``recs`` and the rest of the source transaction the last of them belongs to (a
    grouped queue: the destination must receive each transaction whole)."""
    last = recs[-1].enq_tid
    if last is None:
        return recs
    more = Selector(states=_STATES, multi=sel.multi, remote=sel.remote, predicate=sel.predicate, group=last)
    while True:
        extra = session.dequeue(q, more, C.DEQ_REMOVE, False, 500, DequeueInfo(user="SYS"))
        if not extra:
            return recs
        recs.extend(extra)


def _reread(env: JobEnv, s: sched.Schedule, q: QueueInfo, routes: dict[str, _Route], session: Any) -> bool:
    """Between two batches of a run, what an administrator changed since it began: the
    schedule disabled or altered (its window), a propagation stopped — it holds from the
    next batch, not once the backlog is gone (seed 003 "Propagation Scheduling": the
    calls are made while the schedule is active and take effect in seconds).  ``routes``
    is brought up to date in place.  False when the schedule was unscheduled."""
    fresh = sched.find(session, s.key)
    if fresh is None:
        return False
    for name in sched.DEFINITION + ("start_time", "disabled"):
        setattr(s, name, getattr(fresh, name))
    version = env.conn.context.store.catalog_version()
    if version != env.routes_version:
        env.routes_version = version
        routes.clear()
        routes.update(_routes(env.conn.context, q))
        _check_owners(env, routes)
    return True


def _check_owners(env: JobEnv, routes: dict[str, _Route]) -> None:
    """Seed 001: "The user who owns the source queue is the user who propagates messages"
    — it evaluates each propagation's rule sets and calls their custom rule-based
    transformations, so it needs EXECUTE on them (:func:`..clientrights.check_rule_sets`).
    A propagation whose owner may not is ABORTED with the error (DBA_PROPAGATION), its
    messages left in the queue for START_PROPAGATION once granted; the schedule's other
    propagations go on.  Asked once per catalog version, not per message."""
    store = env.conn.context.store
    if env.owners_version == store.catalog_version():
        return
    for address, route in list(routes.items()):
        spec = route.spec
        if spec is None or not route.enabled:
            continue
        try:
            check_rule_sets(env.conn, spec.source_queue_owner, spec.rule_set, spec.negative_rule_set,
                            _routine_name)
        except DatabaseError as e:
            specs.save(store, spec.with_status(specs.ABORTED, e))
            routes[address] = replace(route, enabled=False)
    env.owners_version = env.routes_version = store.catalog_version()


def _routes(ctx: Any, q: QueueInfo) -> dict[str, _Route]:
    """The destination addresses of ``q``'s subscribers: their propagation, their
    transformation, whether they may go now."""
    props = {p.address: p for p in specs.all_specs(ctx.store)
             if (p.source_queue_owner, p.source_queue_name) == (q.owner, q.name)}
    routes: dict[str, _Route] = {}
    for sub in ctx.catalog.subscribers(q):
        if sub.address is None or sub.protocol:
            continue
        spec = props.get(sub.address) if sub.name is None else None
        routes[sub.address if sub.name is None else f"{sub.name}|{sub.address}"] = _Route(
            spec, sub.transformation, spec is None or spec.status == specs.ENABLED, sub.queue_to_queue)
    for address, spec in props.items():
        routes.setdefault(address, _Route(spec, None, spec.status == specs.ENABLED, spec.queue_to_queue))
    return routes


def _batch(env: JobEnv, q: QueueInfo, recs: list[MessageRecord], routes: dict[str, _Route],
           now: float) -> Batch:
    """The batch for ``recs``: one message per (message, destination queue), with the
    names of its recipients there; what the rule sets discard is left out."""
    ctx = env.conn.context
    codec = ctx.catalog.codec(q.table)
    batch = Batch(env.site, q.qualified, source_sharded=q.table.sharded)
    by_key: dict[tuple[bytes, str], Propagated] = {}
    # per (recipient, address): its route, whether the stored payload goes as it is, and
    # the destination queue — looked up once per batch, not once per message
    known: dict[tuple[str | None, str], tuple[_Route, bool, str]] = {}
    own_queue = (q.owner, q.name)
    append = batch.messages.append
    for r in recs:
        address = r.address
        key = (r.msgid, address)
        found = by_key.get(key)
        if found is not None:       # another recipient of the same message at that queue
            if found.recipients is not None and r.consumer_name is not None:
                found.recipients.append(r.consumer_name)
            else:
                found.recipients = None
            continue
        how = known.get((r.consumer_name, address))
        if how is None:
            route = routes.get(f"{r.consumer_name}|{address}") or routes.get(address) or _Route(None)
            spec = route.spec
            plain = route.transformation is None and (spec is None or (
                spec.rule_set_name is None and spec.negative_rule_set_name is None))
            how = known[(r.consumer_name, address)] = (route, plain, address.partition("@")[0])
        route, plain, dest_queue = how
        if plain:
            payload_type, data = q.table.payload_type, r.user_data
        else:
            payload_type, data = _payload(env, q, codec, r, route)
            if data is _DISCARD:
                continue
        timed = r.delay is not None or r.expire_at is not None
        m = Propagated(
            dest_queue, r.msgid, r.original_msgid or r.msgid, payload_type, data, r.priority,
            _delay_left(r, now) if timed else None, _expiration_left(r, now) if timed else None,
            r.corrid,
            (r.sender_name, r.sender_address, r.sender_protocol) if r.sender_name or r.sender_address else None,
            [r.consumer_name] if r.consumer_name is not None else None,
            r.enq_tid, (r.original_queue_owner, r.original_queue_name) if r.original_queue_name else own_queue,
            r.enq_time, r.delivery_mode == C.MSG_BUFFERED)
        by_key[key] = m
        append(m)
    return batch


def _delay_left(r: MessageRecord, now: float) -> float | None:
    return r.delay - now if r.delay is not None and r.delay > now else None


def _expiration_left(r: MessageRecord, now: float) -> float | None:
    """Seed 003: an hour's expiration propagated after 15 minutes is 45 minutes there.
    A message still waiting out its delay keeps all of it (it counts from READY)."""
    if r.expire_at is None:
        return None
    if _delay_left(r, now) is not None:
        return float(r.expiration) if r.expiration is not None else r.expire_at - r.delay
    return max(0.0, r.expire_at - now)


_DISCARD = DISCARD = object()   # DISCARD: what combined capture and apply compares with


def _payload(env: JobEnv, q: QueueInfo, codec: PayloadCodec, r: MessageRecord, route: _Route) -> tuple[str, Any]:
    """``(payload type, stored form)`` of the message as the destination gets it, or
    ``_DISCARD`` when the propagation's rule sets discard it.  Untouched messages keep
    their stored form (nothing decoded)."""
    spec = route.spec
    rules = spec is not None and (spec.rule_set_name is not None or spec.negative_rule_set_name is not None)
    if not rules and route.transformation is None:
        return q.table.payload_type, r.user_data
    ctx = env.conn.context
    message = codec.decode(r.user_data)
    if rules:
        message = ruled(env, spec, message)
        if message is _DISCARD:
            return q.table.payload_type, _DISCARD
    if route.transformation is None:
        return q.table.payload_type, codec.encode(message)
    target = ctx.catalog.transformation(route.transformation)["to_type"]
    message = ctx.transformer(route.transformation)(message)
    objtype = ctx.catalog.type_named(target) if target not in SIMPLE_TYPES else None
    return target, PayloadCodec(target, objtype, ctx.catalog.get_type).encode(message)


def ruled(env: JobEnv, spec: specs.PropagationSpec, message: Any) -> Any:
    """``message`` as the propagation's rule sets leave it, or ``_DISCARD``."""
    verdict = evaluate_rule_sets(env.conn, message, spec.rule_set, spec.negative_rule_set)
    if not verdict.perform:
        return _DISCARD
    # seed 000 "Row Migration and Subset Rules": a subset rule's UPDATE becomes the
    # INSERT or DELETE the destination's subset needs, before any transformation
    message = migrate(message, verdict.rule)
    if verdict.rule is not None:      # declarative transformations, then a custom one
        declared = _declared(env).get(verdict.rule.rule_name)
        if declared:
            message = transform(message, declared)
    function = _transform_function(verdict.rule)
    if function is not None:
        message = _apply(function, message)
    return message


def _declared(env: JobEnv) -> dict:
    """DBMS_STREAMS_ADM.RENAME_SCHEMA & co. by rule name, read again when the catalog changes."""
    store = env.conn.context.store
    version = store.catalog_version()
    if env.declared is None or env.declared_version != version:
        env.declared, env.declared_version = declarative_transformations(store), version
    return env.declared


def _transform_function(hit: Any) -> str | None:
    """The rule-based transformation named in the TRUE rule's action context."""
    actx = getattr(hit, "rule_action_context", None)
    if actx is None:
        return None
    value = actx.get_value(TRANSFORM)
    if value is None:
        return None
    return value.value if isinstance(value, AnyData) else str(value)


def _routine(function: str) -> tuple[str, str]:
    """``(schema, name)`` of a rule's transformation function as the propagation calls it."""
    schema, _, name = function.rpartition(".")
    return schema.strip('"').upper() or "SLUICE", name


def _routine_name(function: str) -> str:
    schema, name = _routine(function)
    return qualified(name, schema, "function name")


def _apply(function: str, message: Any) -> Any:
    schema, name = _routine(function)
    fn = registered_function(name, schema)
    try:
        return fn(message)
    except DatabaseError:
        raise
    except Exception as e:        # the application's function failed
        raise ora(25229, schema or "SLUICE", name, e) from e


def _record(ctx: Any, s: sched.Schedule, change: Callable[[], None]) -> None:
    change()
    ctx.session.add_commit_work(sched.runtime_work(s))
    ctx.session.commit()


def _fail(env: JobEnv, s: sched.Schedule, error: BaseException) -> None:
    """Record the failure in the schedule (and, once it disables the schedule, in the
    Streams propagations that use it: ABORTED with the error, as DBA_PROPAGATION shows)."""
    ctx = env.conn.context
    if ctx.session.in_transaction:
        ctx.session.rollback()
    _record(ctx, s, lambda: s.record_failure(env.clock(), error))
    if s.disabled:
        for p in specs.all_specs(ctx.store):
            if (p.source_queue_owner, p.source_queue_name) == (s.qschema, s.qname) and \
                    sched.serves(s, p) and p.status == specs.ENABLED:
                specs.save(ctx.store, p.with_status(specs.ABORTED, error))

