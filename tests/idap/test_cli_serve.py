"""``sluice serve``: the servlet as a process; SIGTERM shuts it down gracefully."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
from click.testing import CliRunner

from sluice.cli import main

from .conftest import SERVLET, basic, count, msgids, send_raw

SLUICE = Path(sys.executable).with_name("sluice")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_answers_and_shuts_down_gracefully(store):
    port = _free_port()
    proc = subprocess.Popen([str(SLUICE), "--dsn", store, "serve", "--host", "127.0.0.1", "--port",
                             str(port), "--log-level", "info"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}{SERVLET}"
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url + "?wsdl", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
                time.sleep(0.1)
        with httpx.Client(headers={**basic(), "Content-Type": "text/xml"}, timeout=30) as c:
            assert msgids(c.post(url, content=send_raw("AQUSER.RAW_MSGQ", commit=True)))
            assert msgids(c.post(url, content=send_raw("AQUSER.RAW_MSGQ")))       # left open
        proc.send_signal(signal.SIGTERM)
        # uvicorn re-raises the signal once it has shut down, so the status may say SIGTERM
        assert proc.wait(timeout=30) in (0, -signal.SIGTERM)
        output = proc.stdout.read().decode()
        assert "Application shutdown complete." in output, output
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
    assert count(store, "AQUSER.RAW_MSGQ") == 1          # the open transaction rolled back


def test_serve_refuses_to_start_with_a_wrong_super_user_password(store):
    r = CliRunner().invoke(main, ["--dsn", store, "--user", "aquser", "--password", "nope", "serve"])
    assert r.exit_code == 1 and "ORA-01017" in r.output


