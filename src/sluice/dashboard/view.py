"""What the page draws — a *reading* — made from a store and the sites its links name.

A reading is plain JSON: ``site``; ``nodes`` (``id``, ``kind`` capture / queue /
propagation / apply, ``label``, ``site``, ``state``, ``health`` ok / warn / error / idle,
``detail``); ``edges`` (``from``, ``to``, ``health``, ``counter`` and ``lag``: keys of the
numbers labelling it); ``queues`` (the cards: depths, and the keys of their rates and
sparkline); ``errors`` (:func:`.errorqueue.read_errors`); ``counters`` (totals that only
grow: the history makes rates of them) and ``gauges`` (depths, lags).

Ids name the site: ``q:DBS1:SLUICE.SRC``, ``p:DBS1:P1``, ``a:DBS2:APPLY1``.  The sites:
this store, and each site a database link of it names by a Sluice DSN, read with the
servlet's own credentials (a site that cannot be read shows as a grey queue node
carrying the reason).  HTTP links are drawn to the remote queue, whose site is not read.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from ..errors import Error
from ..store.sqlschema import table_name
from . import errorqueue

DSN_SCHEMES = ("sqlite:", "postgresql:", "postgres:")


def _rows(conn: Any, sql: str) -> list[dict]:
    cols, rows = conn.query(sql, None)
    return [dict(zip(cols, r)) for r in rows]


def _process_health(status: str | None, state: str | None = None) -> str:
    if status == "ABORTED" or (state or "").startswith("ABORT"):
        return "error"
    if status != "ENABLED":
        return "idle"
    return "ok"


class Reading:
    """One reading being built."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.nodes: dict[str, dict] = {}
        self.edges: list[dict] = []
        self.queues: list[dict] = []
        self.counters: dict[str, float] = {}
        self.gauges: dict[str, float | None] = {}

    def node(self, node_id: str, kind: str, label: str, site: str, state: str | None = None,
             health: str = "ok", detail: str | None = None) -> str:
        if node_id not in self.nodes or self.nodes[node_id].get("placeholder"):
            self.nodes[node_id] = {"id": node_id, "kind": kind, "label": label, "site": site,
                                   "state": state, "health": health, "detail": detail}
        return node_id

    def placeholder(self, node_id: str, kind: str, label: str, site: str, detail: str | None) -> str:
        if node_id not in self.nodes:
            self.nodes[node_id] = {"id": node_id, "kind": kind, "label": label, "site": site, "state": None,
                                   "health": "idle", "detail": detail, "placeholder": True}
        return node_id

    def edge(self, a: str, b: str, health: str, counter: str | None = None, lag: str | None = None,
             note: str | None = None) -> None:
        self.edges.append({"from": a, "to": b, "health": health, "counter": counter, "lag": lag, "note": note})

    def as_json(self, errors: tuple[int, list[dict]]) -> dict:
        for n in self.nodes.values():
            n.pop("placeholder", None)
        total, entries = errors
        return {"site": self.site, "nodes": list(self.nodes.values()), "edges": self.edges,
                "queues": self.queues, "errors": {"total": total, "entries": entries},
                "counters": self.counters, "gauges": self.gauges}


def queue_id(site: str, qualified: str) -> str:
    return f"q:{site}:{qualified}"


def read_site(conn: Any, out: Reading, now: float) -> list[tuple[str, str]]:
    """Add one site's queues and processes to ``out``; the (link name, DSN) of the sites
    its database links name."""
    site = conn.context.store.global_name()
    store = conn.context.store
    # the cards: the queues that carry the flow first, exception queues after them
    for q in sorted(conn.context.catalog.all_queues(),
                    key=lambda q: (q.queue_type == "EXCEPTION_QUEUE", q.owner, q.name)):
        qid = queue_id(site, q.qualified)
        ready, waiting, expired = (store.count_messages(q, [s]) for s in (0, 1, 3))
        exception = q.queue_type == "EXCEPTION_QUEUE"    # dequeue-only by design: not a flow
        enabled = q.enqueue_enabled and q.dequeue_enabled
        health = "idle" if exception else "ok" if enabled else "warn"
        if not exception:
            out.node(qid, "queue", q.qualified, site, None if enabled else "DISABLED", health,
                     f"{ready} ready, {waiting} waiting, {expired} expired")
        out.gauges[f"depth:{qid}"] = ready + waiting
        out.queues.append({"id": qid, "name": q.qualified, "site": site,
                           "type": q.queue_type.replace("_QUEUE", "").lower(),
                           "ready": ready, "waiting": waiting, "expired": expired,
                           "oldest_age": _oldest_ready(conn, q.owner, q.name, now) if ready else None,
                           "health": health, "enq_key": f"enq:{qid}", "deq_key": f"deq:{qid}",
                           "depth_key": f"depth:{qid}"})
    captured = {r["CAPTURE_NAME"]: r for r in _rows(conn, "SELECT * FROM V$STREAMS_CAPTURE")}
    for c in _rows(conn, "SELECT * FROM DBA_CAPTURE"):
        cid = f"c:{site}:{c['CAPTURE_NAME']}"
        live = captured.get(c["CAPTURE_NAME"], {})
        out.node(cid, "capture", c["CAPTURE_NAME"], site, live.get("STATE") or c["STATUS"],
                 _process_health(c["STATUS"]), c["ERROR_MESSAGE"])
        out.counters[f"capture:{cid}"] = live.get("TOTAL_MESSAGES_ENQUEUED") or 0
        out.gauges[f"lag:{cid}"] = live.get("LATENCY_SECONDS")
        qid = out.placeholder(queue_id(site, f"{c['QUEUE_OWNER']}.{c['QUEUE_NAME']}"), "queue",
                              f"{c['QUEUE_OWNER']}.{c['QUEUE_NAME']}", site, None)
        out.edge(cid, qid, _process_health(c["STATUS"]), f"capture:{cid}", f"lag:{cid}")
    schedules = {(r["SCHEMA"], r["QNAME"], r["DESTINATION"]): r
                 for r in _rows(conn, "SELECT * FROM DBA_QUEUE_SCHEDULES")}
    for p in _rows(conn, "SELECT * FROM DBA_PROPAGATION"):
        pid = f"p:{site}:{p['PROPAGATION_NAME']}"
        link = p["DESTINATION_DBLINK"]
        dest_site = link.upper() if link else site
        dest = f"{p['DESTINATION_QUEUE_OWNER']}.{p['DESTINATION_QUEUE_NAME']}"
        sched = next((s for (o, qn, d), s in schedules.items()
                      if o == p["SOURCE_QUEUE_OWNER"] and qn == p["SOURCE_QUEUE_NAME"]
                      and _same_destination(d, link, p["DESTINATION_QUEUE_NAME"])), {})
        health = _process_health(p["STATUS"])
        if sched.get("SCHEDULE_DISABLED") == "Y":
            health = "error"
        elif health == "ok" and sched.get("FAILURES"):
            health = "warn"
        note = sched.get("LAST_ERROR_MSG") or p["ERROR_MESSAGE"]
        out.node(pid, "propagation", p["PROPAGATION_NAME"], site, p["STATUS"], health, note)
        out.counters[f"prop:{pid}"] = sched.get("TOTAL_NUMBER") or 0
        src = out.placeholder(queue_id(site, f"{p['SOURCE_QUEUE_OWNER']}.{p['SOURCE_QUEUE_NAME']}"), "queue",
                              f"{p['SOURCE_QUEUE_OWNER']}.{p['SOURCE_QUEUE_NAME']}", site, None)
        dst = out.placeholder(queue_id(dest_site, dest), "queue", dest, dest_site, None)
        out.edge(src, pid, health, f"prop:{pid}", f"lag:{pid}", note)
        out.edge(pid, dst, health, f"prop:{pid}", None, note)
        oldest = _oldest_ready(conn, p["SOURCE_QUEUE_OWNER"], p["SOURCE_QUEUE_NAME"], now)
        out.gauges[f"lag:{pid}"] = oldest
    coordinators = {r["APPLY_NAME"]: r for r in _rows(conn, "SELECT * FROM V$STREAMS_APPLY_COORDINATOR")}
    for a in _rows(conn, "SELECT * FROM DBA_APPLY"):
        aid = f"a:{site}:{a['APPLY_NAME']}"
        live = coordinators.get(a["APPLY_NAME"], {})
        health = _process_health(a["STATUS"], live.get("STATE"))
        if health == "ok" and live.get("TOTAL_ERRORS"):
            health = "warn"
        out.node(aid, "apply", a["APPLY_NAME"], site, live.get("STATE") or a["STATUS"], health,
                 a["ERROR_MESSAGE"])
        out.counters[f"apply:{aid}"] = live.get("TOTAL_APPLIED") or 0
        qid = out.placeholder(queue_id(site, f"{a['QUEUE_OWNER']}.{a['QUEUE_NAME']}"), "queue",
                              f"{a['QUEUE_OWNER']}.{a['QUEUE_NAME']}", site, None)
        out.gauges[f"lag:{aid}"] = _oldest_ready(conn, a["QUEUE_OWNER"], a["QUEUE_NAME"], now)
        out.edge(qid, aid, health, f"apply:{aid}", f"lag:{aid}")
    return [(r["DB_LINK"], r["HOST"]) for r in _rows(conn, "SELECT DB_LINK, HOST FROM DBA_DB_LINKS")]


def _same_destination(destination: str | None, link: str | None, queue: str) -> bool:
    """Whether a schedule's DESTINATION (``DBS2``, ``"SLUICE"."DST"@DBS2``, ``AQ$_LOCAL``)
    is the propagation's (its link, or this site)."""
    d = (destination or "").upper()
    if not link:
        return d == "AQ$_LOCAL" or ("@" not in d and queue.upper() in d)
    return d == link.upper() or d.endswith("@" + link.upper())


def _oldest_ready(conn: Any, owner: str, name: str, now: float) -> float:
    """Seconds the oldest READY message of the queue has waited (0 when none): how far
    the process reading it is behind."""
    try:
        queue = conn.context.catalog.queue_by_key((owner, name))
        _, rows = conn.query(f"SELECT MIN(ENQ_TIME) FROM {table_name(queue.table)} "
                             f"WHERE Q_NAME = :q AND STATE = 0", {"q": name})
    except Error:
        return 0.0
    oldest = rows[0][0] if rows else None
    return max(0.0, now - float(oldest)) if oldest is not None else 0.0


def reader(conn: Any, connect: Callable[[str], Any] | None = None) -> Callable[[], dict]:
    """What takes readings on ``conn`` (the dashboard's own connection); ``connect(dsn)``
    opens a linked site (default: as ``conn``'s user, without a password — the servlet's
    super-user on a store it administers)."""
    import sluice
    connect = connect or (lambda dsn: sluice.connect(dsn))
    remote: dict[str, Any] = {}

    def read() -> dict:
        now = time.time()
        out = Reading(conn.context.store.global_name())
        links = read_site(conn, out, now)
        for link, host in links:
            if not host or not host.lower().startswith(DSN_SCHEMES):
                continue
            try:
                if host not in remote:
                    remote[host] = connect(host)
                read_site(remote[host], out, now)
                remote[host].rollback()
            except Error as e:
                site = link.upper()
                out.placeholder(f"q:{site}:?", "queue", f"site {site} unreadable", site, str(e))
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
