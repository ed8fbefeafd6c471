"""uvicorn's HTTP/1.1 protocol (httptools), writing each response in one piece.

uvicorn writes a response's status line and headers as soon as the application
sends ``http.response.start`` and the body at ``http.response.body``: two writes,
so two ``send`` system calls, two TCP segments and two wake-ups of the client for
every response.  :class:`CorkedHttpToolsProtocol` gathers what is written during
one turn of the event loop and writes it at the end of that turn (or before the
connection closes) — the same bytes, in one system call.  It changes nothing else
of uvicorn's protocol: parsing, keep-alive, flow control and shutdown are uvicorn's.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:             # httptools missing: uvicorn's default (h11) is used as it is
    HttpToolsProtocol = None     # type: ignore[assignment,misc]


class CorkedTransport:
    """A transport whose writes wait for the end of the event loop's current turn."""

    __slots__ = ("_loop", "_pending", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        self._pending = []
        if not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()                # what was written goes out before the connection closes
        self._transport.close()

    def abort(self) -> None:
        self._pending = []
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:   # everything else is the transport's
        return getattr(self._transport, name)


if HttpToolsProtocol is not None:
    class CorkedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol on a :class:`CorkedTransport`."""

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(CorkedTransport(transport, self.loop))  # type: ignore[arg-type]
else:
    CorkedHttpToolsProtocol = None      # type: ignore[assignment,misc]


def http_protocol() -> Any:
    """What to pass as uvicorn's ``http`` setting."""
    return CorkedHttpToolsProtocol if CorkedHttpToolsProtocol is not None else "auto"
