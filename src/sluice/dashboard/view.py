"""What the page draws — a *reading* — made from monitoring snapshots
(:func:`sluice.monitor.snapshot.take`) of this store and of the sites its links name.

A reading is plain JSON: ``site``; ``nodes`` (``id``, ``kind`` capture / queue /
propagation / apply, ``label``, ``site``, ``state``, ``health`` ok / warn / error / idle,
``detail``); ``edges`` (``from``, ``to``, ``health``, ``counter`` and ``lag``: keys of the
numbers labelling it, ``note``); ``queues`` (the cards: depths, and the keys of their
rates and sparkline); ``errors`` (:func:`.errorqueue.read_errors`); ``counters`` (totals
that only grow: the history makes rates of them) and ``gauges`` (depths, lags).

Node ids are the snapshot's topology names with the site: ``queue:SLUICE.SRC@DBS1``,
``capture:CAP@DBS1``, ``propagation:P1@DBS1``, ``apply:APPLY1@DBS2`` — a propagation is
a node of its own between its two queues, so that its state and back-off show.  The
sites: this store, and each site a database link of it names by a Sluice DSN, read with
the servlet's own credentials (a site that cannot be read shows as a grey node carrying
the reason).  HTTP links are drawn to the remote queue, whose site is not read.

Enqueue and dequeue totals are the store's (:mod:`sluice.store.stats`): the rates on the
queue cards are what every process moved, as the processes' counters (captured,
propagated, applied) are the store's, whoever runs them.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import Error
from ..monitor.snapshot import Snapshot, take
from . import errorqueue

DSN_SCHEMES = ("sqlite:", "postgresql:", "postgres:")


def _health(status: str | None, failing: bool = False) -> str:
    """ABORTED → error; not ENABLED → idle; failing (errors waiting, a schedule backing
    off) → warn; else ok."""
    if status == "ABORTED":
        return "error"
    if status != "ENABLED":
        return "idle"
    return "warn" if failing else "ok"


def _hosted(hosting: Any) -> str | None:
    if hosting is None:
        return "not running in any sluice run host"
    text = f"run by {hosting.host_name} (pid {hosting.os_pid}), {hosting.state}"
    if hosting.restarts:
        text += f", {hosting.restarts} restarts; last crash: {hosting.error_message}"
    return text


class Reading:
    """One reading being built from the snapshots of one or more sites."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.nodes: dict[str, dict] = {}
        self.edges: list[dict] = []
        self.queues: list[dict] = []
        self.counters: dict[str, float] = {}
        self.gauges: dict[str, float | None] = {}

    def node(self, node_id: str, kind: str, label: str, site: str, state: str | None = None,
             health: str = "ok", detail: str | None = None, placeholder: bool = False) -> str:
        """Add a node; a placeholder (a queue known only as a destination) gives way to the
        real one when its site is read."""
        if placeholder and node_id in self.nodes:
            return node_id
        if node_id not in self.nodes or self.nodes[node_id].get("placeholder") or not placeholder:
            self.nodes[node_id] = {"id": node_id, "kind": kind, "label": label, "site": site,
                                   "state": state, "health": health, "detail": detail,
                                   "placeholder": placeholder}
        return node_id

    def edge(self, a: str, b: str, health: str, counter: str | None = None, lag: str | None = None,
             note: str | None = None) -> None:
        self.edges.append({"from": a, "to": b, "health": health, "counter": counter, "lag": lag, "note": note})

    def add(self, snap: Snapshot) -> None:
        """One site's queues and processes."""
        site = snap.site

        def queue(qualified: str, at: str = site) -> str:
            qid = f"queue:{qualified}@{at}"
            return self.node(qid, "queue", qualified, at, None, "idle", None, placeholder=True)

        # the cards: queues that carry the flow first, exception queues after them
        for q in sorted(snap.queues, key=lambda q: (q.queue_type == "EXCEPTION_QUEUE", q.owner, q.name)):
            qid = f"queue:{q.qualified}@{site}"
            exception = q.queue_type == "EXCEPTION_QUEUE"    # dequeue-only by design: not a flow
            enabled = q.enqueue_enabled and q.dequeue_enabled
            health = "idle" if exception else "ok" if enabled else "warn"
            if not exception:
                self.node(qid, "queue", q.qualified, site, None if enabled else "DISABLED", health,
                          f"{q.ready} ready, {q.waiting} waiting, {q.expired} expired")
            self.counters[f"enq:{qid}"] = q.enqueued
            self.counters[f"deq:{qid}"] = q.dequeued
            self.gauges[f"depth:{qid}"] = q.ready + q.waiting
            self.queues.append({"id": qid, "name": q.qualified, "site": site,
                                "type": q.queue_type.replace("_QUEUE", "").lower(),
                                "ready": q.ready, "waiting": q.waiting, "expired": q.expired,
                                "oldest_age": q.oldest_age, "health": health, "enq_key": f"enq:{qid}",
                                "deq_key": f"deq:{qid}", "depth_key": f"depth:{qid}"})
        for c in snap.captures:
            cid = f"capture:{c.name}@{site}"
            health = _health(c.status, c.error_number is not None)
            self.node(cid, "capture", c.name, site, c.state or c.status, health,
                      c.error_message or (_hosted(c.hosting) if c.kind == "CAPTURE" else "synchronous"))
            self.counters[f"capture:{cid}"] = c.enqueued
            self.gauges[f"lag:{cid}"] = c.lag_seconds
            self.edge(cid, queue(c.queue), health, f"capture:{cid}", f"lag:{cid}", c.error_message)
        for p in snap.propagations:
            pid = f"propagation:{p.name}@{site}"
            health = "error" if p.schedule_disabled else _health(p.status, p.failures > 0)
            note = p.last_error
            if p.backing_off:
                note = f"{p.failures} failures, backing off: {p.last_error}"
            elif p.schedule_disabled:
                note = f"schedule disabled after {p.failures} failures: {p.last_error}"
            self.node(pid, "propagation", p.name, site, p.status, health, note or _hosted(p.hosting))
            self.counters[f"prop:{pid}"] = p.propagated
            self.gauges[f"lag:{pid}"] = p.lag_seconds
            self.edge(queue(p.source_queue), pid, health, f"prop:{pid}", f"lag:{pid}", note)
            self.edge(pid, queue(p.destination_queue, p.site.upper()), health, f"prop:{pid}", None, note)
        for a in snap.applies:
            aid = f"apply:{a.name}@{site}"
            health = _health(a.status, a.error_queue > 0)
            detail = a.error_message or (f"{a.error_queue} transactions in the error queue"
                                         if a.error_queue else _hosted(a.hosting))
            self.node(aid, "apply", a.name, site, a.state or a.status, health, detail)
            self.counters[f"apply:{aid}"] = a.applied
            self.gauges[f"lag:{aid}"] = a.lag_seconds
            self.edge(queue(a.queue), aid, health, f"apply:{aid}", f"lag:{aid}", detail)

    def unreadable(self, site: str, reason: str) -> None:
        self.node(f"site:{site}", "site", f"site {site} unreadable", site, None, "idle", reason,
                  placeholder=True)

    def as_json(self, errors: tuple[int, list[dict]]) -> dict:
        for n in self.nodes.values():
            n.pop("placeholder", None)
        total, entries = errors
        return {"site": self.site, "nodes": list(self.nodes.values()), "edges": self.edges,
                "queues": self.queues, "errors": {"total": total, "entries": entries},
                "counters": self.counters, "gauges": self.gauges}


def reader(conn: Any, connect: Callable[[str], Any] | None = None,
           local: Callable[[], Snapshot] | None = None) -> Callable[[], dict]:
    """What takes readings on ``conn`` (the dashboard's own connection: links, the error
    queue); ``local()`` gives this store's snapshot (default ``take(conn)``; in a server,
    the snapshot it shares with /metrics: :class:`sluice.monitor.source.SnapshotSource`);
    ``connect(dsn)`` opens a linked site (default: the bootstrap administrator, without a
    password — the servlet's super-user on stores it administers)."""
    import sluice
    connect = connect or (lambda dsn: sluice.connect(dsn))
    local = local or (lambda: take(conn))
    remote: dict[str, Any] = {}

    def read() -> dict:
        snap = local()
        out = Reading(snap.site)
        out.add(snap)
        _, links = conn.query("SELECT DB_LINK, HOST FROM DBA_DB_LINKS", None)
        for link, host in links:
            if not host or not host.lower().startswith(DSN_SCHEMES):
                continue
            try:
                if host not in remote:
                    remote[host] = connect(host)
                out.add(take(remote[host]))
                remote[host].rollback()
            except Error as e:
                out.unreadable(link.upper(), str(e))
                stale = remote.pop(host, None)
                if stale is not None:
                    _close(stale)
        errors = errorqueue.read_errors(conn)
        conn.rollback()
        return out.as_json(errors)
    return read


def _close(conn: Any) -> None:
    try:
        conn.close()
    except Error:
        pass
