"""One consistent-enough picture of a store for monitoring: ``take(conn) -> Snapshot``.

Seed 003 ("Monitoring", "Propagation Statistics") and seed 001 (what capture, propagation
and apply report) say what an administrator watches; the monitoring views show it one
view at a time.  A snapshot gathers the same facts — queue depths, process states,
counters, lags, errors, back-off — and the topology they form (capture → queue →
propagation → queue@site → apply) for the Prometheus collector, ``sluice top`` and the
dashboard, with a fixed number of SQL statements (:data:`STATEMENTS`) whatever the number
of queues: depths come from SLUICE_QUEUE_DEPTH, one view over every queue table.

Numbers are read at ``taken_at``; the statements do not share one transaction (SQLite
reads outside a transaction, PostgreSQL in the session's), so two figures may be a few
milliseconds apart.  Enqueue/dequeue totals are the store's, every process's
(V$PERSISTENT_QUEUES, :mod:`sluice.store.stats`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from ..context import SessionContext
from ..errors import InterfaceError

# message states in a queue table (python-oracledb's MSG_* values)
_READY, _WAITING, _EXPIRED = 0, 1, 3


@dataclass(frozen=True)
class ConsumerDepth:
    """What waits in a multi-consumer queue for one consumer (a subscriber, an apply
    process) or remote address (a propagation's destination ``OWNER.Q[@DBLINK]``)."""

    name: str | None            # consumer name (None for a remote recipient given by address)
    address: str | None         # the destination of a propagation / remote subscriber
    ready: int                  # records READY for it
    waiting: int                # records WAITING (delayed) for it
    oldest_age: float | None    # seconds the oldest READY record has waited (None: none)


class QueueStat(NamedTuple):
    """One queue (DBA_QUEUES row) and what is in it (V$AQ).  A named tuple, not a frozen
    dataclass: a snapshot makes one per queue, and a frozen dataclass's ``__init__``
    (``object.__setattr__`` per field) is what a 1,000-queue snapshot spent most on."""

    owner: str
    name: str
    queue_table: str
    queue_type: str             # NORMAL_QUEUE | EXCEPTION_QUEUE
    multiple_consumers: bool
    enqueue_enabled: bool
    dequeue_enabled: bool
    ready: int                  # messages READY (V$AQ: a multi-consumer message once)
    waiting: int                # messages WAITING (delay not passed)
    expired: int                # messages EXPIRED (in an exception queue)
    spilled: int                # READY buffered messages spilled to the queue table
    oldest_age: float | None    # seconds the oldest READY message has waited (None: empty)
    average_wait: float         # V$AQ AVERAGE_WAIT: mean seconds READY messages have waited
    enqueued: int               # messages enqueued, by every process (V$PERSISTENT_QUEUES)
    dequeued: int               # removing dequeues, by every process (one per recipient)
    consumers: tuple[ConsumerDepth, ...]   # multi-consumer queues: per consumer / address

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}"


@dataclass(frozen=True)
class Hosting:
    """Which ``sluice run`` host runs a process (V$STREAMS_HOSTED)."""

    host_name: str
    os_pid: int
    state: str
    restarts: int               # crashes restarted since the host took it
    error_message: str | None   # the last crash


@dataclass(frozen=True)
class CaptureStat:
    """A capture process (DBA_CAPTURE + V$STREAMS_CAPTURE) or a synchronous capture
    (DBA_SYNC_CAPTURE; no process, so no state or counters: ``kind`` SYNC_CAPTURE)."""

    name: str
    kind: str                   # CAPTURE | SYNC_CAPTURE
    queue: str                  # OWNER.NAME of the queue it enqueues into
    source_database: str | None
    status: str                 # ENABLED | DISABLED | ABORTED (DBA_CAPTURE STATUS)
    state: str | None           # what the running process does (V$STREAMS_CAPTURE STATE)
    captured: int               # LCRs captured (TOTAL_MESSAGES_CAPTURED)
    enqueued: int               # LCRs enqueued after the rules (TOTAL_MESSAGES_ENQUEUED)
    transactions: int           # source transactions captured
    lag_seconds: float | None   # last enqueue time minus the change's commit time
    error_number: int | None
    error_message: str | None
    hosting: Hosting | None


@dataclass(frozen=True)
class PropagationStat:
    """A propagation (DBA_PROPAGATION) and its schedule's run (DBA_QUEUE_SCHEDULES,
    V$PROPAGATION_SENDER): seed 003 "Propagation Statistics" and "Error Handling"."""

    name: str
    source_queue: str           # OWNER.NAME here
    destination_queue: str      # OWNER.NAME at the destination
    destination_dblink: str | None   # None: this site
    site: str                   # the destination site (the link's name; this site's global name)
    status: str                 # ENABLED | DISABLED | ABORTED
    schedule_disabled: bool     # the schedule is disabled (after 16 failures, or by hand)
    propagated: int             # messages propagated (TOTAL_NUMBER)
    bytes: int                  # bytes propagated (TOTAL_BYTES)
    failures: int               # consecutive failures (0 after a success)
    backing_off: bool           # failed and waiting to retry (not yet disabled)
    next_run: float | None      # POSIX time of the next try
    last_run: float | None
    last_error: str | None
    backlog: int                # records in the source queue waiting for this destination
    lag_seconds: float | None   # age of the oldest of them (None: nothing waits)
    hosting: Hosting | None


@dataclass(frozen=True)
class ApplyStat:
    """An apply process (DBA_APPLY, V$STREAMS_APPLY_COORDINATOR / _READER, DBA_APPLY_ERROR,
    DBA_APPLY_PROGRESS)."""

    name: str
    queue: str                  # OWNER.NAME it dequeues from
    apply_database_link: str | None
    status: str                 # ENABLED | DISABLED | ABORTED
    state: str | None           # the running process's state (V$STREAMS_APPLY_COORDINATOR)
    dequeued: int               # messages dequeued (TOTAL_MESSAGES_DEQUEUED)
    applied: int                # LCRs / messages applied (TOTAL_MESSAGES_APPLIED)
    transactions: int           # transactions applied (TOTAL_APPLIED)
    errors: int                 # transactions that failed (TOTAL_ERRORS)
    error_queue: int            # transactions in the error queue now (DBA_APPLY_ERROR rows)
    backlog: int                # messages READY for it in its queue
    lag_seconds: float | None   # age of the oldest of them (None: nothing waits)
    latency_seconds: float | None   # apply time minus creation time of the last applied
    error_number: int | None
    error_message: str | None
    hosting: Hosting | None


@dataclass(frozen=True)
class Link:
    """An edge of the topology.  Nodes are ``capture:NAME``, ``queue:OWNER.NAME@SITE`` and
    ``apply:NAME``; ``process`` names the Streams process that moves messages along it."""

    kind: str                   # capture | propagation | apply
    source: str
    target: str
    process: str


@dataclass(frozen=True)
class Snapshot:
    """Everything above, for one store, at ``taken_at`` (POSIX seconds)."""

    site: str                   # this store's global name
    taken_at: float
    queues: tuple[QueueStat, ...]
    captures: tuple[CaptureStat, ...]
    propagations: tuple[PropagationStat, ...]
    applies: tuple[ApplyStat, ...]
    links: tuple[Link, ...]

    def queue(self, qualified: str) -> QueueStat | None:
        return next((q for q in self.queues if q.qualified == qualified), None)

    @property
    def errors(self) -> int:
        """Transactions in apply error queues plus failing propagations and aborted or
        erroring processes: what the dashboard's health turns on."""
        return (sum(a.error_queue for a in self.applies)
                + sum(1 for p in self.propagations if p.failures)
                + sum(1 for c in self.captures if c.status == "ABORTED")
                + sum(1 for a in self.applies if a.status == "ABORTED"))


# The statements a snapshot runs, whatever the number of queues or processes.
STATEMENTS = {
    "queues": "SELECT OWNER, NAME, QUEUE_TABLE, QUEUE_TYPE, ENQUEUE_ENABLED, DEQUEUE_ENABLED, "
              "RECIPIENTS_MULTIPLE FROM DBA_QUEUES",
    "depth": "SELECT OWNER, QUEUE_NAME, CONSUMER_NAME, ADDRESS, STATE, DELIVERY_MODE, MSGS, "
             "OLDEST_ENQ_TIME, MESSAGES, MSG_SUM_ENQ_TIME FROM SLUICE_QUEUE_DEPTH",
    "totals": "SELECT QUEUE_SCHEMA, QUEUE_NAME, ENQUEUED_MSGS, DEQUEUED_MSGS FROM V$PERSISTENT_QUEUES",
    "captures": "SELECT C.CAPTURE_NAME, C.QUEUE_OWNER, C.QUEUE_NAME, C.SOURCE_DATABASE, C.STATUS, "
                "P.STATE, P.TOTAL_MESSAGES_CAPTURED, P.TOTAL_MESSAGES_ENQUEUED, P.TOTAL_TRANSACTIONS, "
                "P.ENQUEUE_TIME - P.ENQUEUE_MESSAGE_CREATE_TIME, C.ERROR_NUMBER, C.ERROR_MESSAGE "
                "FROM DBA_CAPTURE C LEFT JOIN SLUICE_CAPTURE_PROGRESS P ON P.NAME = C.CAPTURE_NAME",
    "sync_captures": "SELECT CAPTURE_NAME, QUEUE_OWNER, QUEUE_NAME FROM DBA_SYNC_CAPTURE",
    "propagations": "SELECT PROPAGATION_NAME, SOURCE_QUEUE_OWNER, SOURCE_QUEUE_NAME, "
                    "DESTINATION_QUEUE_OWNER, DESTINATION_QUEUE_NAME, DESTINATION_DBLINK, STATUS, "
                    "ERROR_MESSAGE FROM DBA_PROPAGATION",
    "schedules": "SELECT QSCHEMA, QNAME, DESTINATION, DESTINATION_QUEUE, DBLINK, DISABLED, "
                 "TOTAL_NUMBER, TOTAL_BYTES, FAILURES, NEXT_RUN, LAST_RUN, LAST_ERROR_MSG "
                 "FROM SLUICE_QUEUE_SCHEDULES",
    "applies": "SELECT A.APPLY_NAME, A.QUEUE_OWNER, A.QUEUE_NAME, A.APPLY_DATABASE_LINK, A.STATUS, "
               "S.STATE, S.TOTAL_MESSAGES_DEQUEUED, S.TOTAL_MESSAGES_APPLIED, S.TOTAL_APPLIED, "
               "S.TOTAL_ERRORS, A.ERROR_NUMBER, A.ERROR_MESSAGE "
               "FROM DBA_APPLY A LEFT JOIN SLUICE_APPLY_STATE S ON S.APPLY_NAME = A.APPLY_NAME",
    "apply_errors": "SELECT APPLY_NAME, COUNT(*) FROM SLUICE_APPLY_ERROR GROUP BY APPLY_NAME",
    "apply_progress": "SELECT APPLY_NAME, MAX(APPLY_TIME - APPLIED_MESSAGE_CREATE_TIME) "
                      "FROM SLUICE_APPLY_PROGRESS GROUP BY APPLY_NAME",
    "hosted": "SELECT PROCESS_TYPE, PROCESS_NAME, HOST_NAME, OS_PID, STATE, RESTARTS, ERROR_MESSAGE "
              "FROM SLUICE_STREAMS_HOSTED",
}


def take(conn: Any) -> Snapshot:
    """A snapshot of the store ``conn`` (a :class:`sluice.Connection`) is connected to, read
    with the :data:`STATEMENTS` through its session (as its user: the caller checks the
    MONITOR privilege).  :raises: InterfaceError for anything but a connection (a pool
    lends them: ``pool.acquire()``), DPY-1001 for a closed one."""
    # a connection is known by its session context (this layer does not import connections)
    ctx = getattr(conn, "context", None) if not isinstance(conn, type) else None
    if not isinstance(ctx, SessionContext):
        raise InterfaceError(f"a snapshot is taken through a sluice.Connection, not {type(conn).__name__}")
    ctx.check_open()
    query: Callable[..., tuple[list[str], list[tuple]]] = ctx.session.query
    rows = {key: query(sql, None, oracle_names=False)[1] for key, sql in STATEMENTS.items()}
    now = time.time()
    totals = {f"{owner}.{name}": (_int(enq), _int(deq)) for owner, name, enq, deq in rows["totals"]}
    return build(ctx.store.global_name(), now, rows, totals)


def _age(now: float, oldest: float | None) -> float | None:
    return None if oldest is None else max(0.0, now - oldest)


def _int(v: Any) -> int:
    return int(v or 0)


def build(site: str, now: float, rows: dict[str, list[tuple]],
          totals: dict[str, tuple[int, int]]) -> Snapshot:
    """The snapshot from the rows of :data:`STATEMENTS` (pure: tests feed it rows)."""
    per_queue: dict[str, dict] = {}
    per_consumer: dict[tuple[str, str | None, str | None], list] = {}
    for owner, queue, consumer, address, state, mode, msgs, oldest, messages, sum_enq in rows["depth"]:
        q = per_queue.setdefault(f"{owner}.{queue}", {"r": 0, "w": 0, "e": 0, "s": 0, "old": None,
                                                      "sum": 0.0})
        # a queue's depth counts messages (a multi-consumer one once, as V$AQ); a
        # consumer's, its records
        msgs, messages = _int(msgs), _int(messages)
        if state == _READY:
            q["r"] += messages
            q["sum"] += float(sum_enq or 0)
            if mode == 2:
                q["s"] += messages
            q["old"] = oldest if q["old"] is None else min(q["old"], oldest)
        elif state == _WAITING:
            q["w"] += messages
        elif state == _EXPIRED:
            q["e"] += messages
        if consumer is not None or address is not None:
            c = per_consumer.setdefault((f"{owner}.{queue}", consumer, address), [0, 0, None])
            if state == _READY:
                c[0] += msgs
                c[2] = oldest if c[2] is None else min(c[2], oldest)
            elif state == _WAITING:
                c[1] += msgs
    consumers_of: dict[str, list[ConsumerDepth]] = {}
    for (qname, consumer, address), (ready, waiting, oldest) in sorted(
            per_consumer.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2] or "")):
        consumers_of.setdefault(qname, []).append(
            ConsumerDepth(consumer, address, ready, waiting, _age(now, oldest)))

    queues = []
    for owner, name, qt, qtype, enq, deq, multi in rows["queues"]:
        key = f"{owner}.{name}"
        d = per_queue.get(key, {"r": 0, "w": 0, "e": 0, "s": 0, "old": None, "sum": 0.0})
        enqueued, dequeued = totals.get(key, (0, 0))
        queues.append(QueueStat(
            owner, name, qt, qtype, bool(multi), enq == "YES", deq == "YES", d["r"], d["w"], d["e"],
            d["s"], _age(now, d["old"]), max(0.0, now - d["sum"] / d["r"]) if d["r"] else 0.0,
            enqueued, dequeued, tuple(consumers_of.get(key, ()))))
    queues.sort(key=lambda q: (q.owner, q.name))

    hosted = {(kind, name): Hosting(host, _int(pid), state, _int(restarts), err)
              for kind, name, host, pid, state, restarts, err in rows["hosted"]}
    captures = [CaptureStat(name, "CAPTURE", f"{qo}.{qn}", src, status or "DISABLED", state,
                            _int(captured), _int(enqueued), _int(txns),
                            None if lag is None else max(0.0, float(lag)),
                            None if errno is None else int(errno), errmsg,
                            hosted.get(("CAPTURE", name)))
                for name, qo, qn, src, status, state, captured, enqueued, txns, lag, errno, errmsg
                in rows["captures"]]
    captures += [CaptureStat(name, "SYNC_CAPTURE", f"{qo}.{qn}", site, "ENABLED", None, 0, 0, 0,
                             None, None, None, None) for name, qo, qn in rows["sync_captures"]]
    captures.sort(key=lambda c: c.name)

    schedules = rows["schedules"]
    propagations = []
    for name, so, sn, do, dn, dblink, status, errmsg in rows["propagations"]:
        source, dest = f"{so}.{sn}", f"{do}.{dn}"
        s = _schedule_of(schedules, so, sn, dest, dblink)
        address = dest if dblink is None else f"{dest}@{dblink}"
        waiting = [c for c in consumers_of.get(source, ()) if c.name is None and c.address == address]
        backlog = sum(c.ready for c in waiting)
        ages = [c.oldest_age for c in waiting if c.oldest_age is not None]
        disabled = bool(s and s[5])
        failures = _int(s[8]) if s else 0
        process = f"{s[0]}.{s[1]}=>{s[2]}" if s else None
        propagations.append(PropagationStat(
            name, source, dest, dblink, dblink or site, status or "DISABLED", disabled,
            _int(s[6]) if s else 0, _int(s[7]) if s else 0, failures, failures > 0 and not disabled,
            s[9] if s else None, s[10] if s else None, (s[11] if s else None) or errmsg,
            backlog, max(ages) if ages else None, hosted.get(("PROPAGATION", process))))
    propagations.sort(key=lambda p: p.name)

    error_counts = {name: _int(n) for name, n in rows["apply_errors"]}
    latencies = {name: lat for name, lat in rows["apply_progress"]}
    applies = []
    for name, qo, qn, link, status, state, deq, applied, txns, errors, errno, errmsg in rows["applies"]:
        queue = f"{qo}.{qn}"
        mine = [c for c in consumers_of.get(queue, ()) if c.name == name]
        if not mine and (q := next((x for x in queues if x.qualified == queue), None)) \
                and not q.multiple_consumers:
            mine = [ConsumerDepth(name, None, q.ready, q.waiting, q.oldest_age)]
        ages = [c.oldest_age for c in mine if c.oldest_age is not None]
        lat = latencies.get(name)
        applies.append(ApplyStat(
            name, queue, link, status or "DISABLED", state, _int(deq), _int(applied), _int(txns),
            _int(errors), error_counts.get(name, 0), sum(c.ready for c in mine),
            max(ages) if ages else None, None if lat is None else max(0.0, float(lat)),
            None if errno is None else int(errno), errmsg, hosted.get(("APPLY", name))))
    applies.sort(key=lambda a: a.name)

    def here(queue: str) -> str:
        return f"queue:{queue}@{site}"
    links = [Link("capture", f"capture:{c.name}", here(c.queue), c.name) for c in captures]
    links += [Link("propagation", here(p.source_queue), f"queue:{p.destination_queue}@{p.site}", p.name)
              for p in propagations]
    links += [Link("apply", here(a.queue), f"apply:{a.name}", a.name) for a in applies]
    return Snapshot(site, now, tuple(queues), tuple(captures), tuple(propagations), tuple(applies),
                    tuple(links))


def _schedule_of(schedules: list[tuple], owner: str, name: str, dest: str, dblink: str | None):
    """The schedule row serving a propagation: its own queue-to-queue schedule, else the
    one of its database link (``AQ$_LOCAL`` for this site)."""
    mine = [s for s in schedules if (s[0], s[1]) == (owner, name)]
    for s in mine:
        if s[3] == dest and (s[4] or None) == dblink:
            return s
    for s in mine:
        if s[3] is None and s[2] == (dblink or "AQ$_LOCAL"):
            return s
    return None
