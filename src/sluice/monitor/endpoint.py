"""``/metrics`` as a small HTTP server of its own, for processes without a web server
(``sluice run --metrics-port``): a thread serving GET /metrics to users with MONITOR."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from .access import OK, MonitorAccess, refusal
from .prometheus import CONTENT_TYPE, Metrics


class MetricsServer:
    """Serves ``metrics`` on ``host:port`` (port 0: any free one, see :attr:`port`) in a
    daemon thread until :meth:`close` (which closes ``metrics`` too); ``access`` decides
    who may read them."""

    def __init__(self, metrics: Metrics, access: MonitorAccess, host: str = "127.0.0.1",
                 port: int = 0, log: Callable[[str], None] | None = None) -> None:
        self.metrics, self.access = metrics, access

        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:     # noqa: N802 (http.server's name)
                outer._get(self)

            def log_message(self, fmt: str, *args: Any) -> None:
                if log is not None:
                    log(fmt % args)
        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="sluice-metrics",
                                       daemon=True)
        self.thread.start()

    def _get(self, h: BaseHTTPRequestHandler) -> None:
        if h.path.split("?", 1)[0] != "/metrics":
            return self._answer(h, 404, "404 Not Found: GET /metrics\n")
        status, _ = self.access.check(h.headers.get("Authorization"))
        if status != OK:
            text, headers = refusal(status)
            return self._answer(h, status, text, headers)
        try:
            body = self.metrics.exposition()
        except Exception as e:      # the store is away: say so, do not kill the thread
            return self._answer(h, 503, f"503 Service Unavailable: {' '.join(str(e).split())}\n")
        h.send_response(200)
        h.send_header("Content-Type", CONTENT_TYPE)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    @staticmethod
    def _answer(h: BaseHTTPRequestHandler, status: int, text: str,
                headers: list[tuple[str, str]] = ()) -> None:
        body = text.encode()
        h.send_response(status)
        h.send_header("Content-Type", "text/plain; charset=utf-8")
        h.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(body)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
        self.metrics.close()
