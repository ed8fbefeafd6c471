"""tests/forkserver.py: the kill -9 fleets' workers are forked from a preloaded parent —
each a separate process that a SIGKILL ends like any, whose exit the harness sees."""

from __future__ import annotations

import os
import signal
import socket

from tests import forkserver


def sleeper(path: str) -> None:
    with open(path, "w") as f:
        f.write(f"{os.getpid()}|{os.environ.get('FORKSERVER_PROBE')}|{os.getcwd()}")
    signal.pause()


def exits(code: str) -> None:
    if code == "boom":
        raise RuntimeError("boom")
    raise SystemExit(int(code))


def test_a_forked_worker_is_a_process_of_its_own_killed_by_sigkill(tmp_path, monkeypatch):
    monkeypatch.setenv("FORKSERVER_PROBE", "set after the server started")
    server = forkserver.shared("tests.test_forkserver")
    probe = tmp_path / "probe"
    child = server.spawn("tests.test_forkserver:sleeper", [str(probe)], str(tmp_path / "out"))
    import time
    end = time.monotonic() + 30
    while not (probe.exists() and probe.read_text()) and time.monotonic() < end:
        time.sleep(0.02)
    pid, probe_env, cwd = probe.read_text().split("|")
    assert int(pid) == child.pid and child.pid not in (os.getpid(), server.proc.pid)
    assert probe_env == "set after the server started" and cwd == os.getcwd()
    assert child.poll() is None
    child.send_signal(signal.SIGKILL)
    assert child.wait(30) == -signal.SIGKILL and child.returncode == -signal.SIGKILL


def test_a_worker_s_exit_code_and_traceback_reach_the_harness(tmp_path):
    server = forkserver.shared("tests.test_forkserver")
    assert server.spawn("tests.test_forkserver:exits", ["0"], str(tmp_path / "a")).wait(30) == 0
    assert server.spawn("tests.test_forkserver:exits", ["7"], str(tmp_path / "b")).wait(30) == 7
    assert server.spawn("tests.test_forkserver:exits", ["boom"], str(tmp_path / "c")).wait(30) == 1
    assert "RuntimeError: boom" in (tmp_path / "c").read_text()


def test_the_cli_forked_is_the_sluice_script_with_its_argv_and_output(tmp_path):
    """``forkserver.cli`` (``sluice serve`` of tests/idap's CliServer, the fleets' ``sluice
    run``) runs as the ``sluice`` script would: its argv, its program name in V$SESSION;
    ``stdout.read()`` gives stdout and stderr once it ended, as a ``Popen``'s pipe."""
    server = forkserver.shared(*forkserver.FLEETS)
    dsn = f"sqlite:///{tmp_path / 's.db'}"
    child = server.popen("tests.forkserver:cli", ["--dsn", dsn, "sql", "SELECT PROGRAM FROM V$SESSION"])
    output = child.stdout.read().decode()
    assert child.returncode == 0 and f"sluice@{socket.gethostname()}" in output, output
    assert child.stdout.read() == b""
    child = server.popen("tests.forkserver:cli", ["--dsn", dsn, "no-such-command"])
    assert b"No such command 'no-such-command'" in child.stdout.read() and child.returncode == 2
