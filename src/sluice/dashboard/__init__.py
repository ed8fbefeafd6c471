"""The live browser dashboard of ``sluice serve`` (issue 17): ``/dashboard``.

A topology graph of capture → queues → propagations → queues at other sites → apply
processes, each edge coloured by health and labelled with its rate and lag; queue cards
with depth sparklines; throughput and lag over the last hour; the error queue with
retry (EXECUTE_ERROR) and delete (DELETE_ERROR).  Modules:

- :mod:`.view` — a monitoring snapshot made into what the page draws (a *reading*);
- :mod:`.history` — the sampler thread and the last hour's ring;
- :mod:`.errorqueue` — DBA_APPLY_ERROR and the two actions;
- :mod:`.access` — who may look (the servlet's MonitorAccess, as /metrics) and act, CSRF tokens;
- :mod:`.web` — the routes; ``static/`` — the page, its script (plain SVG, no
  library, no CDN) and style, shipped in the package.

:class:`Dashboard` is an :class:`sluice.idap.app.Extension`: the servlet serves it and
knows nothing of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .history import History, Sampler
from .web import PREFIX, Site, routes

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from ..idap.app import Servlet

__all__ = ["Dashboard", "PREFIX"]

# a reader factory: given the dashboard's own connection, what takes one reading
ReaderFactory = Callable[[Any], Callable[[], dict]]


class Dashboard:
    """``/dashboard`` beside the servlet.  ``interval``: seconds between readings (one
    thread, one connection of its own for the error queue and linked sites, however many
    browsers watch; this store's snapshot is the server's, shared with /metrics); ``poll``: how often
    an open page asks for them.  ``reader``: how readings are taken (default
    :func:`.view.reader`; tests give their own)."""

    def __init__(self, interval: float = 2.0, poll: float = 2.0,
                 reader: ReaderFactory | None = None) -> None:
        if interval <= 0 or poll <= 0:
            raise ValueError("interval and poll are positive numbers of seconds")
        self.history = History(interval)
        self.sampler = Sampler(lambda: {}, self.history)
        self.site = Site(self.history, self.sampler, poll)
        self._reader = reader
        self._conn: Any = None

    def routes(self) -> list["BaseRoute"]:
        return routes(self.site)

    def start(self, servlet: "Servlet") -> None:
        import sluice
        config = servlet.config
        self._conn = sluice.connect(config.dsn, user=config.user, password=config.password)
        if self._reader is None:
            from .view import reader
            shared = getattr(servlet, "snapshots", None)    # the server's, shared with /metrics
            local = None
            if shared is not None:
                # fresh enough for this interval's reading, and no reading of its own when a
                # scrape has just taken one (sluice.monitor.source)
                max_age = min(shared.max_age, self.history.interval / 2)
                local = lambda: shared.get(max_age)   # noqa: E731
            self.sampler.read = reader(self._conn, local=local)
        else:
            self.sampler.read = self._reader(self._conn)
        self.site.servlet = servlet
        self.sampler.start()

    def stop(self) -> None:
        self.sampler.stop()
        if self._conn is not None:
            self._conn.close()
            self._conn = None
