"""The dashboard's HTTP side: ``/dashboard`` (the page), ``/dashboard/static/<file>``
(its script and style, shipped in this package: the machines are offline, so no CDN),
``/dashboard/api/state`` (what the page polls) and ``POST
/dashboard/api/errors/<id>/{execute,delete}``.

Every answer needs HTTP Basic credentials of a user with the monitoring privilege (the
servlet's :class:`~sluice.monitor.access.MonitorAccess`, as for /metrics); acting needs
the CSRF token and DBMS_APPLY_ADM's privilege too (:mod:`.access`).  Nothing from the store
is ever put into HTML: the page is static but for the user name and token (escaped), and
the script builds the DOM from JSON with ``textContent`` only.  The JSON itself escapes
``<``, ``>`` and ``&`` too, and a Content-Security-Policy allows only this origin's
script, so an injected ``<script>`` could not run even if it reached the DOM.
"""

from __future__ import annotations

import html
import json
import time
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from ..errors import DatabaseError, Error
from . import errorqueue
from ..monitor.access import OK, UNAUTHORIZED, MonitorAccess
from .access import CSRF_HEADER, CsrfTokens

if TYPE_CHECKING:
    from ..idap.app import Servlet
    from .history import History, Sampler

PREFIX = "/dashboard"
REALM = "Sluice dashboard"
_STATIC = resources.files(__package__) / "static"
_STATIC_FILES = frozenset(f.name for f in _STATIC.iterdir() if f.is_file() and not f.name.startswith("."))
_MEDIA = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
          ".html": "text/html; charset=utf-8", ".svg": "image/svg+xml"}
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
                               "base-uri 'none'; form-action 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
_STATUS = {1031: 403, 26673: 404}


def to_json(value: Any) -> bytes:
    """JSON that stays inert wherever it lands (``<``, ``>``, ``&`` as \\u escapes)."""
    text = json.dumps(value, default=str, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode("utf-8")


def _respond(body: bytes | str, status: int = 200, media: str = "application/json",
             headers: dict[str, str] | None = None) -> Response:
    all_headers = dict(SECURITY_HEADERS)
    if headers:
        all_headers.update(headers)
    return Response(body, status_code=status, media_type=media, headers=all_headers)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return _respond(to_json({"error": message}), status, headers=headers)


class Site:
    """What the routes share: the servlet (authentication, its DSN and super-user), the
    history the sampler fills, the CSRF tokens."""

    def __init__(self, history: "History", sampler: "Sampler", poll: float) -> None:
        self.history = history
        self.sampler = sampler
        self.poll = poll
        self.tokens = CsrfTokens()
        self.servlet: "Servlet | None" = None
        self._cached: tuple[int, bytes] = (-1, b"")

    def latest_json(self) -> bytes:
        """``"reading":…,"sparklines":…`` of the latest sample, encoded once per sample
        however many pages poll (with a thousand queues that is most of the answer)."""
        samples, body = self._cached
        if samples != self.history.samples:
            samples, reading, sparklines = self.history.snapshot()
            body = to_json({"reading": reading, "sparklines": sparklines})[1:-1]
            self._cached = (samples, body)
        return body

    async def user(self, request: Request) -> str | Response:
        """The authenticated user allowed to monitor, or the response refusing it."""
        if self.servlet is None:
            return _error(503, "the server is starting")
        access: MonitorAccess = request.app.state.monitor_access
        header = request.headers.get("authorization")
        status, name = access.check(header, cached_only=True)
        if status == UNAUTHORIZED:          # not verified before: scrypt, off the event loop
            status, name = await anyio.to_thread.run_sync(access.check, header)
        if status == UNAUTHORIZED:
            return _error(401, "HTTP Basic credentials of a Sluice user required",
                          {"www-authenticate": f'Basic realm="{REALM}", charset="UTF-8"'})
        if status != OK:
            return _error(403, f"ORA-01031: insufficient privileges: {name} needs the MONITOR "
                               f"privilege or SELECT_CATALOG_ROLE to see the dashboard")
        return name


def routes(site: Site) -> list[BaseRoute]:

    async def page(request: Request) -> Response:
        user = await site.user(request)
        if isinstance(user, Response):
            return user
        text = (_STATIC / "index.html").read_text("utf-8")
        text = text.replace("{{user}}", html.escape(user)).replace("{{csrf}}", site.tokens.token(user))
        text = text.replace("{{poll}}", str(int(site.poll * 1000)))
        return _respond(text, media=_MEDIA[".html"])

    async def static(request: Request) -> Response:
        user = await site.user(request)
        if isinstance(user, Response):
            return user
        name = request.path_params["name"]
        suffix = name[name.rfind("."):] if "." in name else ""
        # only the package's own files: a name is never a path the file system is asked
        # about (one too long for it was an OSError, a 500)
        if name not in _STATIC_FILES or suffix not in _MEDIA:
            return _error(404, "no such file")
        return _respond((_STATIC / name).read_bytes(), media=_MEDIA[suffix],
                        headers={"cache-control": "private, max-age=60"})

    async def state(request: Request) -> Response:
        user = await site.user(request)
        if isinstance(user, Response):
            return user
        try:
            since = float(request.query_params.get("since", "0"))
        except ValueError:
            return _error(400, "since: seconds since the epoch")
        sampler = site.sampler
        head = {"user": user, "now": time.time(), "interval": site.history.interval,
                "sampler_error": sampler.error, "points": site.history.since(since),
                "sampler": {"readings": sampler.readings, "cpu_seconds": round(sampler.cpu_seconds, 6)}}
        return _respond(to_json(head)[:-1] + b"," + site.latest_json() + b"}")

    async def error_action(request: Request) -> Response:
        user = await site.user(request)
        if isinstance(user, Response):
            return user
        if not site.tokens.valid(user, request.headers.get(CSRF_HEADER)):
            return _error(403, "missing or wrong CSRF token: reload the dashboard")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            return _error(403, "cross-origin request refused")
        action, local_id = request.path_params["action"], request.path_params["id"]
        if action not in errorqueue.ACTIONS:
            return _error(404, "no such action")
        servlet = site.servlet
        try:
            await anyio.to_thread.run_sync(errorqueue.act, servlet.config.dsn, servlet.control.username,
                                           user, action, local_id)
        except DatabaseError as e:
            return _error(_STATUS.get(e.code, 422), str(e))
        except Error as e:
            return _error(422, str(e))
        site.sampler.wake()
        return _respond(to_json({"done": action, "id": local_id}))

    return [Route(PREFIX, page, methods=["GET"]),
            Route(PREFIX + "/", page, methods=["GET"]),
            Route(PREFIX + "/static/{name}", static, methods=["GET"]),
            Route(PREFIX + "/api/state", state, methods=["GET"]),
            Route(PREFIX + "/api/errors/{id}/{action}", error_action, methods=["POST"])]

