"""The notification dispatcher: one thread per store per process (Oracle's EMON).

It leases what the outbox owes the registrations it can serve (any registration but
another process's callbacks), delivers it, and deletes it; a failed delivery is
offered again with back-off, and given up (logged) after ``MAX_ATTEMPTS``.  It also
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
from ...routines import registered_function
from .channels import Event, deliver
from .registration import CALLBACKS, PROCESS, Registration, drop_registration

log = logging.getLogger("sluice.notify")

LEASE = 30.0
POLL = 1.0            # look at the outbox at least this often (other processes' commits)
MAX_ATTEMPTS = 16     # like a propagation schedule's retries (seed 003)

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
    if not token or token == PROCESS:
        return token == PROCESS
    host, pid, _ = (token.split(":") + ["", "", ""])[:3]
    if host != PROCESS.split(":")[0]:
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

    def wake(self) -> None:
        self._wake.set()
        self.store.wake_waiters()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        self.store.wake_waiters()
        if threading.current_thread() is not self:
            self.join(timeout=5)

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
            for reg in self._regs.values():
                watch = getattr(self.store, "watch_queue", None)
                if watch is not None:
                    watch(reg.queue)
        return self._regs

    def pass_once(self, now: float) -> float:
        """One round: purge, lease, deliver, flush windows.  Returns how long to sleep."""
        regs = self.registrations()
        for reg in list(regs.values()):
            if reg.expires_at is not None and now >= reg.expires_at:
                self._purge(reg, final=True)
            elif reg.protocol == "CALLBACK" and not _process_alive(reg.process):
                drop_registration(self.store, reg)   # its process is gone, and its callback
        regs = self.registrations()
        servable = [r for r in regs.values()
                    if r.protocol != "CALLBACK" or (r.process == PROCESS and r.id in CALLBACKS)]
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
                self._send(reg, [row])
        self._flush(now)
        deadlines = [POLL] + [end - now for end in self._windows.values()]
        deadlines += [r.expires_at - now for r in regs.values() if r.expires_at is not None]
        return 0 if len(rows) == 500 else max(0.0, min(deadlines))

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
            if reg is None or not rows:
                continue
            self._send(reg, rows)
            left = self._repeats.get(reg_id, reg.grouping_repeat)
            if left > 0:
                left -= 1
                self._repeats[reg_id] = left
                if left == 0:
                    self._purge(reg, final=False)

    # -- delivery ---------------------------------------------------------------
    def _send(self, reg: Registration, rows: list[tuple]) -> None:
        ids = [r[0] for r in rows]
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
                self.store.release_notifications(ids, time.time() + min(60.0, 0.5 * 2 ** attempts))
            return
        self.store.finish_notifications(ids)
        if reg.purge_on_notify:
            self._purge(reg, final=False)

    def _purge(self, reg: Registration, final: bool) -> None:
        """Remove a registration; a timed-out one gets a last notification (seed 003
        "Registration Timeout")."""
        if final:   # before the registration (and a callback's entry) goes
            try:
                deliver(Event(reg, C.EVENT_DEREG, [], reg.consumer, [], 0), self._mail(), self._procedure)
            except Exception as e:
                log.info("final notification of %s not delivered: %s", reg.name, e)
        drop_registration(self.store, reg)
        self._groups.pop(reg.id, None)
        self._windows.pop(reg.id, None)
        self._regs.pop(reg.id, None)

    def _mail(self) -> dict:
        return {name: spec.get("value") for owner, name, spec in self.store.catalog_objects("CONFIG")
                if owner == "SYS"}

    @staticmethod
    def _procedure(name: str):
        return registered_function(name, "SYS")
