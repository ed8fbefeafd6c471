"""The notification dispatcher: one thread per store per process (Oracle's EMON).

It leases what the outbox owes the registrations it can serve (any registration but
another process's callbacks) and hands it to the registration's delivery lane
(:mod:`.lanes`: in order per registration, registrations side by side on a few
threads), which delivers it and deletes it; a failed delivery is offered again with
back-off, and given up (logged) after ``MAX_ATTEMPTS``.  It also
enforces the registration options: purge on notification, the timeout (purge and a
final notification), grouping by time (one notification per window, SUMMARY or LAST,
at most ``repeat`` windows).  Several processes may run one each: the lease makes
every notification go out once.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections import defaultdict

from ... import constants as C
from ...errors import DatabaseError
from ...routines import registered_function, stored_procedure
from .channels import Event, deliver
from .lanes import Delivery, Lanes
from . import registration
from .registration import CALLBACKS, Registration, drop_registration

log = logging.getLogger("sluice.notify")

LEASE = 30.0
POLL = 1.0            # look at the outbox at least this often (other processes' commits)
MAX_ATTEMPTS = 16     # like a propagation schedule's retries (seed 003)
STOP_GRACE = 2.0      # how long closing waits for deliveries under way

_dispatchers: dict = {}   # store -> its dispatcher; forgotten when the store closes
_lock = threading.Lock()


def dispatcher_for(store) -> "Dispatcher":
    """The store's dispatcher in this process (started on first use)."""
    with _lock:
        d = _dispatchers.get(store)
        if d is None or not d.is_alive():
            d = Dispatcher(store)
            _dispatchers[store] = d
            store.on_close(functools.partial(_stop, store, d))
            d.start()
        return d


def _stop(store, d: "Dispatcher") -> None:
    d.stop()
    with _lock:
        if _dispatchers.get(store) is d:
            del _dispatchers[store]


def _process_alive(token: str | None) -> bool:
    """Is the process that owns a callback registration still there (same host only)?"""
    if not token or token == registration.PROCESS:
        return token == registration.PROCESS
    host, pid, _ = (token.split(":") + ["", "", ""])[:3]
    if host != registration.PROCESS.split(":")[0]:
        return True    # another machine's: not ours to judge
    try:
        os.kill(int(pid), 0)
    except (OSError, ValueError):
        return False
    return True


class Dispatcher(threading.Thread):
    def __init__(self, store) -> None:
        super().__init__(name="sluice-notifications", daemon=True)
        self.store = store
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._groups: dict[str, list[tuple]] = defaultdict(list)   # reg id -> leased rows
        self._windows: dict[str, float] = {}                        # reg id -> window end
        self._repeats: dict[str, int] = {}
        self._version = -1
        self._regs: dict[str, Registration] = {}
        self._lanes = Lanes("sluice-notifications", on_idle=self._lane_dry)
        # touched by the lanes' threads too (single set operations, atomic):
        self._skipped: set[str] = set()         # busy when a pass looked: wake it when dry
        self._held: dict[str, float] = {}       # a delivery failed: the lane's rest waits too
        self._gone: set[str] = set()            # purged by its lane; the catalog may lag

    def wake(self) -> None:
        self._wake.set()
        self.store.wake_waiters()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        self.store.wake_waiters()
        if threading.current_thread() is not self:
            self.join(timeout=5)
        # what never started goes back to the outbox at once (another process, or the
        # next to open the store, delivers it); a callback still running keeps its thread
        # until it returns
        left = [i for d in self._lanes.stop(STOP_GRACE) for i in d.ids]
        if left:
            try:
                self.store.release_notifications(left, time.time())
            except Exception as e:   # noqa: BLE001 — their lease runs out instead
                log.info("could not hand back %d notifications: %s", len(left), e)

    def _lane_dry(self, reg_id: str) -> None:
        self._held.pop(reg_id, None)
        if reg_id in self._skipped:   # the dispatcher passed it over: claim its rest now
            self._skipped.discard(reg_id)
            self.wake()

    # -- the loop -------------------------------------------------------------
    def run(self) -> None:
        while not self._stopping.is_set():
            since = self.store.change_counter()
            try:
                wait = self.pass_once(time.time())
            except Exception:   # a store hiccup must not kill the dispatcher
                log.exception("notification dispatch failed; retrying")
                wait = POLL
            if self._wake.wait(0) or self._stopping.is_set():
                self._wake.clear()
                continue
            if wait > 0:
                self.store.wait_for_messages(since, min(wait, POLL))

    def registrations(self) -> dict[str, Registration]:
        version = self.store.catalog_version()
        if version != self._version:
            self._regs = {spec["id"]: Registration(**spec)
                          for _, _, spec in self.store.catalog_objects("REGISTRATION")}
            self._version = version
            self._gone.intersection_update(self._regs)
            for reg in self._regs.values():
                watch = getattr(self.store, "watch_queue", None)
                if watch is not None:
                    watch(reg.queue)
        return self._regs

    def pass_once(self, now: float) -> float:
        """One round: purge, lease, deliver, flush windows.  Returns how long to sleep."""
        regs = self.registrations()
        for reg in list(regs.values()):
            # busy first: a lane that ran dry after its purge has marked the registration gone
            if self._lanes.busy(reg.id) or reg.id in self._gone:
                continue   # its lane's deliveries (maybe its purge) come first
            if reg.expires_at is not None and now >= reg.expires_at:
                self._forget(reg.id)
                self._lanes.submit(reg.id, Delivery(functools.partial(self._purge, reg, True), []))
            elif reg.protocol == "CALLBACK" and not _process_alive(reg.process):
                drop_registration(self.store, reg)   # its process is gone, and its callback
        regs = self.registrations()
        servable = [r for r in regs.values() if self._idle(r.id) and r.id not in self._gone
                    and (r.protocol != "CALLBACK" or (r.process == registration.PROCESS and r.id in CALLBACKS))]
        grouped = [r for r in servable if r.grouping_class]
        lease = max([LEASE] + [2 * r.grouping_value + LEASE for r in grouped])
        rows = self.store.claim_notifications([r.id for r in servable], lease, 500) if servable else []
        for row in rows:
            reg = regs.get(row[1])
            if reg is None:
                self.store.finish_notifications([row[0]])
            elif reg.grouping_class:
                self._groups[reg.id].append(row)
                self._windows.setdefault(reg.id, self._window_end(reg, now))
            else:
                self._submit(reg, [row])
        self._flush(now)
        deadlines = [POLL] + [end - now for end in self._windows.values()]
        deadlines += [r.expires_at - now for r in regs.values() if r.expires_at is not None]
        return 0 if len(rows) == 500 else max(0.0, min(deadlines))

    def _idle(self, reg_id: str) -> bool:
        """A registration with deliveries queued or under way is not claimed for: its next
        notifications come after those (in order), and are not leased while they wait."""
        self._skipped.add(reg_id)    # first, so that a lane running dry meanwhile wakes us
        if self._lanes.busy(reg_id):
            return False
        self._skipped.discard(reg_id)
        return True

    def _forget(self, reg_id: str) -> None:
        self._groups.pop(reg_id, None)
        self._windows.pop(reg_id, None)

    @staticmethod
    def _window_end(reg: Registration, now: float) -> float:
        start = reg.grouping_start or reg.created
        if now < start:
            return start + reg.grouping_value
        windows = int((now - start) // reg.grouping_value) + 1
        return start + windows * reg.grouping_value

    def _flush(self, now: float) -> None:
        for reg_id, end in list(self._windows.items()):
            if now < end:
                continue
            rows = self._groups.pop(reg_id, [])
            del self._windows[reg_id]
            reg = self._regs.get(reg_id)
            if reg is None or not rows or reg_id in self._gone:
                continue
            self._submit(reg, rows)
            left = self._repeats.get(reg_id, reg.grouping_repeat)
            if left > 0:
                left -= 1
                self._repeats[reg_id] = left
                if left == 0:   # after that notification, in its lane
                    self._forget(reg_id)
                    self._lanes.submit(reg_id, Delivery(functools.partial(self._purge, reg, False), []))

    # -- delivery (on the lanes' threads) ---------------------------------------------
    def _submit(self, reg: Registration, rows: list[tuple]) -> None:
        ids = [r[0] for r in rows]
        if not self._lanes.submit(reg.id, Delivery(functools.partial(self._send, reg, rows), ids)):
            self.store.release_notifications(ids, time.time())   # stopping: for whoever is next

    def _send(self, reg: Registration, rows: list[tuple]) -> None:
        ids = [r[0] for r in rows]
        if reg.id in self._gone:     # purged on an earlier notification: owed nothing more
            return
        held = self._held.get(reg.id)
        if held is not None:   # an earlier one failed: this one goes after it, not before
            self.store.release_notifications(ids, held)
            return
        if reg.grouping_class and reg.grouping_type == C.SUBSCR_GROUPING_TYPE_LAST:
            chosen = rows[-1:]
        else:
            chosen = rows
        event = Event(reg, C.EVENT_AQ, [bytes(r[2]) for r in chosen], rows[-1][4],
                      [bytes(r[6]) if r[6] is not None else None for r in chosen], len(rows),
                      rows[-1][5] or C.MSG_PERSISTENT)
        try:
            deliver(event, self._mail(), self._procedure)
        except Exception as e:   # retried with back-off; a dead end is logged, never fatal
            attempts = max(r[8] for r in rows) + 1
            if attempts >= MAX_ATTEMPTS:
                log.warning("notification for %s given up after %d attempts: %s", reg.name, attempts, e)
                self.store.finish_notifications(ids)
            else:
                log.info("notification for %s failed (%s); retrying", reg.name, e)
                at = time.time() + min(60.0, 0.5 * 2 ** attempts)
                self._held[reg.id] = at
                self.store.release_notifications(ids, at)
            return
        self.store.finish_notifications(ids)
        if reg.purge_on_notify:
            self._purge(reg, final=False)

    def _purge(self, reg: Registration, final: bool) -> None:
        """Remove a registration; a timed-out one gets a last notification (seed 003
        "Registration Timeout").  On its lane; the dispatcher passes it over from here."""
        self._gone.add(reg.id)
        if final:   # before the registration (and a callback's entry) goes
            try:
                deliver(Event(reg, C.EVENT_DEREG, [], reg.consumer, [], 0), self._mail(), self._procedure)
            except Exception as e:
                log.info("final notification of %s not delivered: %s", reg.name, e)
        drop_registration(self.store, reg)

    def _mail(self) -> dict:
        return {name: spec.get("value") for owner, name, spec in self.store.catalog_objects("CONFIG")
                if owner == "SYS"}

    def _procedure(self, name: str, user: str | None):
        """What a ``plsql://name`` registration calls: the Python function registered under
        the name (:func:`sluice.register_function`; unqualified, SYS's) wins, as it always
        did; else the stored procedure (CREATE PROCEDURE; unqualified, of the schema of the
        user who registered), called in a session of that user of its own, committed."""
        try:
            return registered_function(name, "SYS")
        except DatabaseError:
            fn = stored_procedure(self.store, name, user or "SYS")
            if fn is None:
                raise
            return fn
