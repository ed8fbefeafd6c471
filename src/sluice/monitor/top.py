"""``sluice top``: the monitoring snapshot as a live terminal view (``rich``), for servers
without a browser — queues, Streams processes with their rates, the topology.

Rates are differences of the processes' counters between two snapshots (LCRs captured,
messages propagated and applied: counted by the processes, whichever host runs them)
and of queue depths; the first screen has none.
"""

from __future__ import annotations

import time
from typing import Callable

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from .snapshot import Snapshot


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.1f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.1f}h"


def _rate(now: int, before: int | None, seconds: float | None) -> str:
    if before is None or not seconds:
        return "-"
    return f"{(now - before) / seconds:.1f}/s"


def _status(status: str) -> Text:
    style = {"ENABLED": "green", "DISABLED": "yellow", "ABORTED": "bold red"}.get(status, "")
    return Text(status, style=style)


def render(s: Snapshot, previous: Snapshot | None = None, all_queues: bool = False) -> Group:
    """The screen for ``s`` (rates against ``previous``).  Exception queues and empty
    queues of no process are left out unless ``all_queues``."""
    seconds = s.taken_at - previous.taken_at if previous else None
    title = Text.assemble(("sluice top", "bold"), f"  {s.site}  ",
                          time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s.taken_at)),
                          ("  errors: ", ""), (str(s.errors), "bold red" if s.errors else "green"))
    used = {k.source.split(":", 1)[1].rsplit("@", 1)[0] for k in s.links if k.source.startswith("queue:")}
    used |= {k.target.split(":", 1)[1].rsplit("@", 1)[0] for k in s.links if k.target.startswith("queue:")}
    queues = Table(title="Queues", expand=True, title_justify="left")
    for col in ("queue", "ready", "waiting", "expired", "oldest", "avg wait", "change"):
        queues.add_column(col, justify="left" if col == "queue" else "right")
    before = {q.qualified: q for q in previous.queues} if previous else {}
    for q in s.queues:
        shown = all_queues or q.ready or q.waiting or q.expired or q.qualified in used
        if not shown or (q.queue_type == "EXCEPTION_QUEUE" and not (all_queues or q.expired)):
            continue
        old = before.get(q.qualified)
        change = _rate(q.ready, old.ready if old else None, seconds)
        queues.add_row(Text(q.qualified), str(q.ready), str(q.waiting), str(q.expired),
                       _age(q.oldest_age), f"{q.average_wait:.1f}s", change)
    procs = Table(title="Streams processes", expand=True, title_justify="left")
    for col in ("kind", "name", "status", "state / host", "total", "rate", "backlog", "lag", "errors"):
        procs.add_column(col, justify="right" if col in ("total", "rate", "backlog", "lag", "errors")
                         else "left")
    prev_c = {c.name: c for c in previous.captures} if previous else {}
    prev_p = {p.name: p for p in previous.propagations} if previous else {}
    prev_a = {a.name: a for a in previous.applies} if previous else {}
    for c in s.captures:
        old = prev_c.get(c.name)
        procs.add_row("capture" if c.kind == "CAPTURE" else "sync capture", Text(c.name), _status(c.status),
                      Text(_where(c.state, c.hosting)), str(c.enqueued),
                      _rate(c.enqueued, old.enqueued if old else None, seconds), "-", _age(c.lag_seconds),
                      Text(c.error_message or "", style="red"))
    for p in s.propagations:
        old = prev_p.get(p.name)
        state = "back-off" if p.backing_off else ("schedule disabled" if p.schedule_disabled else None)
        procs.add_row("propagation", Text(f"{p.name} → {p.destination_queue}@{p.site}"), _status(p.status),
                      Text(_where(state, p.hosting)), str(p.propagated),
                      _rate(p.propagated, old.propagated if old else None, seconds), str(p.backlog),
                      _age(p.lag_seconds), Text(f"{p.failures} {p.last_error or ''}".strip() if p.failures
                                                 else "", style="red"))
    for a in s.applies:
        old = prev_a.get(a.name)
        procs.add_row("apply", Text(a.name), _status(a.status), Text(_where(a.state, a.hosting)),
                      str(a.applied), _rate(a.applied, old.applied if old else None, seconds),
                      str(a.backlog), _age(a.lag_seconds),
                      Text(str(a.error_queue) if a.error_queue else "", style="red"))
    links = Table(title="Topology", expand=True, title_justify="left")
    for col in ("from", "", "to", "by"):
        links.add_column(col)
    for k in s.links:
        links.add_row(Text(k.source), "→", Text(k.target), Text(f"{k.kind} {k.process}"))
    return Group(title, queues, procs, links)


def _where(state: str | None, hosting) -> str:
    host = f"@{hosting.host_name}" if hosting else ""
    return f"{state or '-'} {host}".strip()


def top(take: Callable[[], Snapshot], console: Console, interval: float = 2.0, once: bool = False,
        all_queues: bool = False, stop: Callable[[], bool] = lambda: False) -> None:
    """Show snapshots from ``take()`` every ``interval`` seconds until interrupted (or
    ``stop()``); ``once``: print one screen and return."""
    previous = take()
    if once:
        console.print(render(previous, None, all_queues))
        return
    with Live(render(previous, None, all_queues), console=console, auto_refresh=False,
              screen=False) as live:
        while not stop():
            time.sleep(interval)
            current = take()
            live.update(render(current, previous, all_queues), refresh=True)
            previous = current
