"""Propagation schedules: windows, back-off, statistics, and the DBMS_AQADM procedures.

A schedule is a row of ``SLUICE_QUEUE_SCHEDULES`` keyed by (source queue, destination).
The destination is a database link (queue-to-dblink: every queue at that site, one
schedule shared by the propagations that use the link), ``AQ$_LOCAL`` (queues of this
site), or one queue ``"OWNER"."Q"@DBLINK`` (queue-to-queue: a schedule of its own) —
seed 003 "Propagation Scheduling", seed 001 "Queue-to-Queue Propagations".  The same row
carries what the running propagation writes, in the transaction of the batch it
propagated: the statistics of seed 003 "Propagation Statistics", the last run and the
failures of "Propagation Error Handling".

Windows: the first starts at ``start_time`` and lasts ``duration`` seconds (None:
forever); the next starts ``next_time`` after a window ends (``SYSDATE + 1/24``: one
hour after; None: at once).  Back-off: after the n-th consecutive failure the next try
is 30·2ⁿ⁻¹ s later — or at the start of the next window when that is later than the end
of the current one, and once a retry has slipped to a window start every later one does
(seed 003) — and the 16th consecutive failure disables the schedule.  A success resets
the count.  Every rule here is a pure function of the row and ``now``, so tests drive
them with a clock of their own (:class:`Clock`).
"""

from __future__ import annotations

import base64
import json
import math
import re
import time
from functools import lru_cache
from dataclasses import dataclass, fields
from typing import Any, Callable

from ...aq.admin import MAX_SECONDS
from ...aq.sharded import check_propagation
from ...errors import InterfaceError, ora
from ...names import split_qualified
from . import spec as specs
from .links import link_name
from .nexttime import Calendar, calendar_function, days_of

TABLE = "SLUICE_QUEUE_SCHEDULES"
LOCAL = "AQ$_LOCAL"
FIRST_RETRY = 30.0          # seconds (seed 003)
MAX_FAILURES = 16
DEFAULT_LATENCY = 60.0      # DBMS_AQADM.SCHEDULE_PROPAGATION's default
STREAMS_LATENCY = 3.0       # the default schedule of a Streams propagation (seed 001)

Clock = Callable[[], float]

# SYSDATE, then days as Oracle's examples write them: 'SYSDATE + 1/24', 'SYSDATE + 1/(24*60)',
# 'sysdate + 10/86400' -- numbers, + - * / and parentheses
_NEXT_TIME = re.compile(r"^\s*SYSDATE\s*(?:\+(?P<days>[\d\s.eE+\-*/()]+))?$", re.I)


def next_time_offset(next_time: str | None) -> float | None:
    """Seconds from the end of a window to the start of the next: ``'SYSDATE + 1/24'`` is
    3600, ``'SYSDATE + 1/(24*60)'`` 60.  :raises: ORA-23605 for a date function other than
    ``SYSDATE [+ days]`` (days: an arithmetic of numbers), a zero divisor, a negative or
    non-finite number of days.  (The calendar forms, TRUNC(SYSDATE) …, are no period:
    :mod:`.nexttime`.)"""
    if next_time is None:
        return None
    m = _NEXT_TIME.match(str(next_time))
    days = days_of(m.group("days")) if m and m.group("days") else (0.0 if m else None)
    # a zero divisor (Oracle: ORA-01476), days beyond any float (ORA-01841) or going back
    # in time: no window
    seconds = days * 86400.0 if days is not None else math.inf
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ora(23605, next_time, "NEXT_TIME (SYSDATE [+ days], days an arithmetic of numbers, or "
                                    "TRUNC / NEXT_DAY / ADD_MONTHS / LAST_DAY of SYSDATE [+ days])")
    return seconds


@dataclass
class Schedule:
    """One row of SLUICE_QUEUE_SCHEDULES (times in POSIX seconds)."""

    qschema: str
    qname: str
    destination: str                 # LOCAL, a link name, or OWNER.Q[@LINK] (queue-to-queue)
    start_time: float
    duration: float | None = None
    next_time: str | None = None
    latency: float = DEFAULT_LATENCY
    disabled: int = 0
    destination_queue: str | None = None     # OWNER.Q of a queue-to-queue schedule
    dblink: str | None = None
    last_run: float | None = None
    current_start: float | None = None
    next_run: float | None = None
    window_start: float | None = None
    total_time: float = 0.0
    total_number: int = 0
    total_bytes: int = 0
    max_number: int = 0
    max_bytes: int = 0
    window_number: int = 0
    window_bytes: int = 0
    windows: int = 0
    failures: int = 0
    last_error_time: float | None = None
    last_error_msg: str | None = None
    slipped: int = 0                 # a retry slipped to a window start: later ones do too
    elapsed_dequeue_time: float = 0.0
    elapsed_pickle_time: float = 0.0
    message_delivery_mode: str = "PERSISTENT"
    process_name: str | None = None
    session_id: str | None = None
    version: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.qschema, self.qname, self.destination)

    @property
    def source_queue(self) -> str:
        return f"{self.qschema}.{self.qname}"

    @property
    def queue_to_queue(self) -> bool:
        return self.destination_queue is not None

    # -- windows ---------------------------------------------------------------------
    def window(self, now: float) -> tuple[float, float, float | None]:
        """``(start, end, next start)`` of the window ``now`` is in, or of the next one
        when ``now`` falls between windows (``end`` may be ``inf``)."""
        cal = _calendar(self.next_time)
        if cal is not None:
            return self._calendar_window(now, cal)
        if now < self.start_time or self.duration is None:
            end = math.inf if self.duration is None else self.start_time + self.duration
            nxt = None if self.duration is None else end + (next_time_offset(self.next_time) or 0.0)
            return self.start_time, end, nxt
        period = self.duration + (next_time_offset(self.next_time) or 0.0)
        if period <= 0:
            return now, math.inf, None
        k = math.floor((now - self.start_time) / period)
        start = self.start_time + k * period
        return start, start + self.duration, start + period

    def _calendar_window(self, now: float, cal: Calendar) -> tuple[float, float, float | None]:
        """:meth:`window` for a calendar NEXT_TIME: each window starts when the function
        says at the end of the one before, walked from the first (from where the last call
        got to: windows only go forward)."""
        d = self.duration
        if now < self.start_time or d is None:
            end = math.inf if d is None else self.start_time + d
            return self.start_time, end, None if d is None else _next_start(cal, end)
        key = (self.start_time, d, self.next_time)
        start = _WALKED.get(key)
        if start is None or start > now:
            start = self.start_time
        nxt = _next_start(cal, start + d)
        for _ in range(_MAX_STEPS):     # (the rest, if any, in the calls that follow)
            if nxt is None or nxt > now:
                break
            start, nxt = nxt, _next_start(cal, nxt + d)
        if len(_WALKED) > 4096:
            _WALKED.clear()
        _WALKED[key] = start
        return start, start + d, nxt

    def due(self, now: float) -> bool:
        """Whether the schedule may propagate at ``now``."""
        if self.disabled:
            return False
        start, end, _ = self.window(now)
        if not start <= now < end:
            return False
        return self.failures == 0 or self.next_run is None or now >= self.next_run

    def wake_at(self, now: float) -> float | None:
        """When a runner should look at this schedule again (None: not while disabled)."""
        if self.disabled:
            return None
        if self.failures and self.next_run is not None and self.next_run > now:
            return self.next_run
        start, end, nxt = self.window(now)
        if now < start:
            return start
        if now >= end:
            return nxt
        return now

    # -- what a run records ------------------------------------------------------------
    def _enter_window(self, now: float) -> None:
        start, _, _ = self.window(now)
        if self.window_start != start:
            self.window_start, self.window_number, self.window_bytes = start, 0, 0
            self.windows += 1

    def record_success(self, now: float, number: int, nbytes: int, elapsed: float,
                       dequeue_time: float = 0.0, pickle_time: float = 0.0) -> None:
        """A run propagated ``number`` messages of ``nbytes`` bytes in ``elapsed`` seconds."""
        self._enter_window(now)
        self.failures, self.slipped = 0, 0
        self.last_run = self.current_start = now
        self.next_run = now
        if number:
            self.total_number += number
            self.total_bytes += nbytes
            self.total_time += elapsed
            self.window_number += number
            self.window_bytes += nbytes
            self.max_number = max(self.max_number, self.window_number)
            self.max_bytes = max(self.max_bytes, self.window_bytes)
            self.elapsed_dequeue_time += dequeue_time
            self.elapsed_pickle_time += pickle_time

    def record_failure(self, now: float, error: BaseException | str) -> None:
        """A run failed: count it, say why, back off — 30 s, 60 s, 120 s … — and disable
        the schedule at the 16th consecutive failure."""
        self._enter_window(now)
        self.failures += 1
        self.last_error_time = now
        self.last_error_msg = str(error)[:4000]
        if self.failures >= MAX_FAILURES:
            self.disabled = 1
            self.next_run = None
            return
        retry = now + FIRST_RETRY * 2 ** (self.failures - 1)
        _, end, nxt = self.window(now)
        if self.slipped or retry >= end:
            if nxt is not None:
                self.slipped = 1
                retry = max(nxt, now)
        self.next_run = retry

    def enable(self, now: float) -> None:
        """ENABLE_PROPAGATION_SCHEDULE: the failures are forgotten (seed 003: the
        administrator fixed the cause)."""
        self.disabled, self.failures, self.slipped = 0, 0, 0
        self.next_run = max(now, self.start_time)

    def oracle_destination(self) -> str:
        """DBA_QUEUE_SCHEDULES.DESTINATION as Oracle shows it."""
        if self.destination_queue is None:
            return self.destination
        owner, name = self.destination_queue.split(".", 1)
        return f'"{owner}"."{name}"' + (f"@{self.dblink}" if self.dblink else "")


# calendar NEXT_TIMEs: how far each schedule's windows were walked, and a bound per call
_WALKED: dict[tuple[float, float, str | None], float] = {}
_MAX_STEPS = 100_000


@lru_cache(maxsize=256)
def _calendar(next_time: str | None) -> Calendar | None:
    """The calendar function of a stored NEXT_TIME (None: none, or a period)."""
    if next_time is None:
        return None
    try:
        return calendar_function(next_time)
    except ValueError:
        return None


def _next_start(cal: Calendar, end: float) -> float | None:
    """The next window's start after a window ending at ``end``: when the function says,
    at once if that is not later (TRUNC(SYSDATE) alone), never past the year 9999."""
    try:
        at = cal(end)
    except (OverflowError, ValueError, OSError):
        return None
    return max(at, end) if at < _YEAR_10000 else None


_COLUMNS = [f.name for f in fields(Schedule)]


def _row_to_schedule(cols: list[str], row: tuple) -> Schedule:
    values = dict(zip((c.lower() for c in cols), row))
    return Schedule(**{k: values[k] for k in _COLUMNS if k in values})


# -- the table -------------------------------------------------------------------------
def load_all(session: Any) -> list[Schedule]:
    cols, rows = session.query(f"SELECT {', '.join(c.upper() for c in _COLUMNS)} FROM {TABLE}", None)
    return [_row_to_schedule(cols, r) for r in rows]


def find(session: Any, key: tuple[str, str, str]) -> Schedule | None:
    cols, rows = session.query(
        f"SELECT {', '.join(c.upper() for c in _COLUMNS)} FROM {TABLE} "
        f"WHERE QSCHEMA = :s AND QNAME = :q AND DESTINATION = :d",
        {"s": key[0], "q": key[1], "d": key[2]})
    return _row_to_schedule(cols, rows[0]) if rows else None


def insert_work(s: Schedule) -> Callable[[Any], None]:
    values = [getattr(s, c) for c in _COLUMNS]
    sql = (f"INSERT INTO {TABLE} ({', '.join(c.upper() for c in _COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(_COLUMNS))})")
    return lambda c: c.execute(sql, values)


# what an administrator's procedure changes: the definition, and what ENABLE resets
DEFINITION = ("duration", "next_time", "latency")
ENABLE_RESETS = ("disabled", "failures", "slipped", "next_run")


def update_work(s: Schedule, columns: tuple[str, ...]) -> Callable[[Any], None]:
    """Write ``columns`` of the row (commit work): an administrator's change, in its own
    transaction.  Only those: the rest of the row was read before the change, and a
    runner may have recorded a run since (its statistics would go back)."""
    values = [getattr(s, c) for c in columns] + list(s.key)
    sql = (f"UPDATE {TABLE} SET {', '.join(c.upper() + ' = ?' for c in columns)}, VERSION = VERSION + 1 "
           f"WHERE QSCHEMA = ? AND QNAME = ? AND DESTINATION = ?")
    return lambda c: c.execute(sql, values)


_RUNTIME = ["last_run", "current_start", "next_run", "window_start", "total_time", "total_number",
            "total_bytes", "max_number", "max_bytes", "window_number", "window_bytes", "windows",
            "failures", "last_error_time", "last_error_msg", "slipped", "elapsed_dequeue_time",
            "elapsed_pickle_time", "process_name", "session_id"]


def runtime_work(s: Schedule) -> Callable[[Any], None]:
    """Write what a run records (commit work, in the run's transaction): its statistics
    and failures, and DISABLED only when the failures disable it — never the definition,
    which an administrator may be changing meanwhile."""
    values = [getattr(s, c) for c in _RUNTIME] + [s.disabled] + list(s.key)
    sql = (f"UPDATE {TABLE} SET {', '.join(c.upper() + ' = ?' for c in _RUNTIME)}, "
           f"DISABLED = CASE WHEN ? = 1 THEN 1 ELSE DISABLED END "
           f"WHERE QSCHEMA = ? AND QNAME = ? AND DESTINATION = ?")
    return lambda c: c.execute(sql, values)


UNTOLD = "SLUICE_PROPAGATION_UNTOLD"


def untold_work(s: Schedule, acked: list[tuple[str, bytes]]) -> Callable[[Any], None]:
    """Record (commit work, in the batch's source transaction) the (destination queue,
    message id)s the source lets go with this commit and has not told the destination
    of yet: the next delivery tells it, even from a sender started after this one died."""
    by_queue: dict[str, list[bytes]] = {}
    for dest, msgid in acked:
        by_queue.setdefault(dest, []).append(msgid)
    text = json.dumps({d: _packed(ids) for d, ids in by_queue.items()}, separators=(",", ":"))
    # not for a schedule unscheduled during the run: its row would outlive it
    sql = (f"INSERT INTO {UNTOLD} (QSCHEMA, QNAME, DESTINATION, ACKED) SELECT ?, ?, ?, ? "
           f"WHERE EXISTS (SELECT 1 FROM {TABLE} WHERE QSCHEMA = ? AND QNAME = ? AND DESTINATION = ?) "
           f"ON CONFLICT (QSCHEMA, QNAME, DESTINATION) DO UPDATE SET ACKED = EXCLUDED.ACKED")
    values = [*s.key, text, *s.key]
    return lambda c: c.execute(sql, values)


def load_untold(session: Any, key: tuple[str, str, str]) -> list[tuple[str, bytes]]:
    """What :func:`untold_work` last recorded for the schedule ``key``."""
    _, rows = session.query(f"SELECT ACKED FROM {UNTOLD} WHERE QSCHEMA = :s AND QNAME = :q AND DESTINATION = :d",
                            {"s": key[0], "q": key[1], "d": key[2]})
    if not rows:
        return []
    out = []
    for dest, packed in json.loads(rows[0][0]).items():
        out.extend((dest, i) for i in _unpacked(packed))
    return out


def _packed(ids: list[bytes]) -> str:
    """Message ids as text: ``*<length>:<base64 of them end to end>`` when they are all of
    one length (Sluice's are: one encoding per batch, not one per id), else each in base64,
    separated by commas."""
    size = len(ids[0]) if ids else 0
    if size and all(len(i) == size for i in ids):
        return f"*{size}:{base64.b64encode(b''.join(ids)).decode()}"
    return ",".join(base64.b64encode(i).decode() for i in ids)


def _unpacked(packed: str) -> list[bytes]:
    if packed.startswith("*"):
        size, _, data = packed[1:].partition(":")
        raw, n = base64.b64decode(data), int(size)
        return [raw[i:i + n] for i in range(0, len(raw), n)]
    return [base64.b64decode(i) for i in packed.split(",") if i]


def serves(s: Schedule, p: Any) -> bool:
    """Whether the schedule ``s`` moves the records of the propagation ``p``."""
    if s.destination_queue is not None:
        return s.destination == p.address
    # a queue-to-queue propagation over the link has its own job (seed 001)
    return not p.queue_to_queue and p.destination_dblink == s.dblink and \
        (s.dblink is not None or s.destination == LOCAL)


def propagations_follow(store: Any, s: Schedule, status: str) -> None:
    """The Streams propagations ``s`` serves take ``status``: Oracle's DBA_PROPAGATION
    shows a propagation's STATUS from its schedule's state (an ABORTED one stays
    ABORTED, with its error, when the schedule is disabled)."""
    for p in specs.all_specs(store):
        if p.status != status and (status == specs.ENABLED or p.status == specs.ENABLED) and \
                (p.source_queue_owner, p.source_queue_name) == (s.qschema, s.qname) and serves(s, p):
            specs.save(store, p.with_status(status))


def delete_work(key: tuple[str, str, str]) -> Callable[[Any], None]:
    def work(c: Any) -> None:
        for table in (TABLE, UNTOLD):
            c.execute(f"DELETE FROM {table} WHERE QSCHEMA = ? AND QNAME = ? AND DESTINATION = ?", list(key))
    return work


# -- destinations ------------------------------------------------------------------------
def schedule_key(qschema: str, qname: str, destination: str | None, destination_queue: str | None,
                 default_schema: str) -> tuple[tuple[str, str, str], str | None, str | None]:
    """``(key, destination queue OWNER.Q or None, link or None)`` of the schedule from
    ``qschema.qname`` to ``destination`` (a link, or None: this site) and, for a
    queue-to-queue schedule, ``destination_queue``."""
    link = link_name(destination) if destination else None
    if destination_queue is None:
        return (qschema, qname, link or LOCAL), None, link
    owner, name = split_qualified(destination_queue, default_schema, "destination queue name")
    dq = f"{owner}.{name}"
    return (qschema, qname, dq + (f"@{link}" if link else "")), dq, link


def address_pattern(s: Schedule) -> tuple[str | None, str | None]:
    """Which records of the source queue the schedule moves: ``(exact address, link)``.
    A queue-to-queue schedule takes the records addressed to its queue; a queue-to-dblink
    one those addressed to any queue at its link; the local one those with no link."""
    if s.destination_queue is not None:
        return s.destination, None
    return None, s.dblink


class ScheduleAdm:
    """The propagation schedule procedures of DBMS_AQADM (mixed into the package)."""

    _session_ctx: Any
    clock: Clock = staticmethod(time.time)

    def _source(self, queue_name: str) -> Any:
        q = self._session_ctx.catalog.queue(queue_name)
        self._session_ctx.authz.check_admin(q.owner)
        return q

    def _schedule(self, queue_name: str, destination: str | None,
                  destination_queue: str | None) -> tuple[Any, Schedule]:
        q = self._source(queue_name)
        key, _, _ = schedule_key(q.owner, q.name, destination, destination_queue, self._session_ctx.username)
        found = find(self._session_ctx.session, key)
        if found is None:
            raise ora(24042, q.qualified, destination or LOCAL)
        return q, found

    def _write(self, work: Callable[[Any], None]) -> None:
        ctx = self._session_ctx
        ctx.ddl_commit()
        ctx.session.add_commit_work(work)
        ctx.session.commit()

    def schedule_propagation(self, queue_name: str, destination: str | None = None,
                             start_time: Any = None, duration: float | None = None,
                             next_time: str | None = None, latency: float = DEFAULT_LATENCY,
                             destination_queue: str | None = None) -> None:
        """Schedule propagation from ``queue_name`` to ``destination`` (a database link;
        None: queues of this site), or with ``destination_queue`` to that queue alone.
        The link is checked when the schedule runs, not now (seed 003).
        A single-consumer sharded queue propagates too (seed 003: "For sharded queues, you
        can propagate between single-consumer and multi-consumer sharded queues"), queue to
        queue: its messages have no recipients to say where they go, so the schedule's
        destination queue takes them all.
        :raises: ORA-24039 (a classic single-consumer source, or a sharded one without
        ``destination_queue``), ORA-24041 (scheduled already)."""
        q = self._source(queue_name)
        key, dq, link = schedule_key(q.owner, q.name, destination, destination_queue,
                                     self._session_ctx.username)
        if q.is_exception_queue or not (q.table.multiple_consumers or (q.table.sharded and dq is not None)):
            raise ora(24039, q.qualified)
        if find(self._session_ctx.session, key) is not None:
            raise ora(24041, q.qualified, destination or LOCAL)
        if dq is not None and link is None:   # a queue of this site: sharded on both ends or neither
            check_propagation(q, self._session_ctx.catalog.find_queue(*split_qualified(dq, q.owner, "queue")))
        s = Schedule(q.owner, q.name, key[2], _time("start_time", start_time, self.clock()),
                     _duration(duration), _next_time(next_time, self.clock()), _latency(latency),
                     destination_queue=dq, dblink=link)
        s.next_run = s.start_time
        self._write(insert_work(s))

    def unschedule_propagation(self, queue_name: str, destination: str | None = None,
                               destination_queue: str | None = None) -> None:
        """:raises: ORA-24042 when there is no such schedule."""
        _, s = self._schedule(queue_name, destination, destination_queue)
        self._write(delete_work(s.key))

    def _unschedule_queues(self, queues: list[tuple[str, str]]) -> None:
        """The schedules whose source is one of the dropped ``queues`` (owner, name) go
        with them, in one commit, as UNSCHEDULE_PROPAGATION would remove each."""
        ctx = self._session_ctx
        dropped = set(queues)
        keys = [s.key for s in load_all(ctx.session) if (s.qschema, s.qname) in dropped]
        if keys:
            for key in keys:
                ctx.session.add_commit_work(delete_work(key))
            ctx.session.commit()

    def alter_propagation_schedule(self, queue_name: str, destination: str | None = None,
                                   duration: float | None = None, next_time: str | None = None,
                                   latency: float | None = None,
                                   destination_queue: str | None = None) -> None:
        """New duration, next_time and latency (Oracle: NULLs set them to NULL, and a NULL
        latency to its default of 60 s)."""
        _, s = self._schedule(queue_name, destination, destination_queue)
        s.duration, s.next_time = _duration(duration), _next_time(next_time, self.clock())
        s.latency = DEFAULT_LATENCY if latency is None else _latency(latency)
        self._write(update_work(s, DEFINITION))

    def enable_propagation_schedule(self, queue_name: str, destination: str | None = None,
                                    destination_queue: str | None = None) -> None:
        """Enable the schedule with its failures forgotten, and the Streams propagations
        it serves (stopped, or ABORTED by its 16th failure).  :raises: ORA-24064 when it is
        enabled already."""
        q, s = self._schedule(queue_name, destination, destination_queue)
        if not s.disabled:
            raise ora(24064, q.qualified, s.oracle_destination())
        s.enable(self.clock())
        self._write(update_work(s, ENABLE_RESETS))
        self._propagations_follow(s, specs.ENABLED)

    def disable_propagation_schedule(self, queue_name: str, destination: str | None = None,
                                     destination_queue: str | None = None) -> None:
        """Disable the schedule, and the Streams propagations it serves.  :raises:
        ORA-24065 when it is disabled already."""
        q, s = self._schedule(queue_name, destination, destination_queue)
        if s.disabled:
            raise ora(24065, q.qualified, s.oracle_destination())
        s.disabled = 1
        self._write(update_work(s, ("disabled",)))
        self._propagations_follow(s, specs.DISABLED)

    def _propagations_follow(self, s: Schedule, status: str) -> None:
        propagations_follow(self._session_ctx.store, s, status)


def _time(what: str, value: Any, now: float) -> float:
    """SYSDATE (None) or a datetime / POSIX seconds."""
    if value is None:
        return now
    if hasattr(value, "timestamp"):
        return float(value.timestamp())
    if isinstance(value, (int, float)) and not isinstance(value, bool) and _finite(value) \
            and 0 <= value < _YEAR_10000:
        return float(value)
    raise InterfaceError(f"{what} must be a datetime or POSIX seconds (before the year 10000)")


# the POSIX seconds of 10000-01-01: beyond it a time has no DATE (the views show DATEs)
_YEAR_10000 = 253402300800


def _finite(value: Any) -> bool:
    """A NaN passes every comparison's ``<= 0`` test; an infinity or an int beyond floats
    has no date and no duration."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False



def _duration(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) \
            or not 0 < value <= MAX_SECONDS:
        raise ora(23605, value, "DURATION (seconds, positive)")
    return float(value)


def _latency(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) \
            or not 0 <= value <= MAX_SECONDS:
        raise ora(23605, value, "LATENCY (seconds, non-negative)")
    return float(value)


def _next_time(value: Any, now: float) -> str | None:
    """Refuse what cannot be evaluated, before storing it — and a next window after the
    year 9999 (Oracle: SYSDATE + days beyond it is ORA-01841)."""
    if value is not None:
        try:
            cal = calendar_function(str(value))
        except ValueError as e:
            raise ora(23605, value, f"NEXT_TIME ({e})") from None
        if cal is not None:
            if _next_start(cal, now) is None:
                raise ora(23605, value, "NEXT_TIME (a date before the year 10000)")
            return str(value)
    offset = next_time_offset(value)
    if offset is not None and now + offset >= _YEAR_10000:
        raise ora(23605, value, "NEXT_TIME (SYSDATE + days must be a date before the year 10000)")
    return None if value is None else str(value)


__all__ = ["Clock", "LOCAL", "MAX_FAILURES", "STREAMS_LATENCY", "Schedule", "ScheduleAdm",
           "address_pattern", "load_all", "propagations_follow", "schedule_key"]
