"""``sluice serve``: the servlet as a process; SIGTERM shuts it down gracefully."""

from __future__ import annotations

import signal

import httpx
from click.testing import CliRunner

from sluice.cli import main

from .conftest import SERVLET, CliServer, basic, count, msgids, send_raw


def test_serve_answers_and_shuts_down_gracefully(store):
    server = CliServer(store, "--log-level", "info")
    try:
        url = server.url + SERVLET
        with httpx.Client(headers={**basic(), "Content-Type": "text/xml"}, timeout=30) as c:
            try:
                assert msgids(c.post(url, content=send_raw("AQUSER.RAW_MSGQ", commit=True)))
                assert msgids(c.post(url, content=send_raw("AQUSER.RAW_MSGQ")))       # left open
            except httpx.TransportError as e:
                raise AssertionError(f"{e}; {server.died()}") from e
        assert server.stop() in (0, -signal.SIGTERM)
        output = server.proc.stdout.read().decode()
        assert "Application shutdown complete." in output, output
    finally:
        server.kill()
    assert count(store, "AQUSER.RAW_MSGQ") == 1          # the open transaction rolled back


def test_serve_refuses_to_start_with_a_wrong_super_user_password(store):
    r = CliRunner().invoke(main, ["--dsn", store, "--user", "aquser", "--password", "nope", "serve"])
    assert r.exit_code == 1 and "ORA-01017" in r.output


