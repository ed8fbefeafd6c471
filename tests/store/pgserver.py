"""A private PostgreSQL server for tests that stop or restart the server.

Restarting the machine's shared server would break whatever else uses it (other
test runs, other developers), so such tests get a throw-away cluster of their own:
``initdb`` in a temporary directory, on a free port, stopped and removed after.
Built from the same Debian packages as the shared server.  PostgreSQL refuses to
run as root, so when the tests run as root the server runs as user ``postgres``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile


def _bindir() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    if not found:
        raise AssertionError("no PostgreSQL server binaries under /usr/lib/postgresql (setup.sh)")
    return os.path.dirname(found[-1])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateServer:
    """``initdb`` + ``pg_ctl`` on a temporary directory; use as a context manager."""

    def __init__(self, settings: dict[str, str] | None = None) -> None:
        self.settings = settings or {}   # server settings (-c NAME=VALUE), e.g. wal_level
        self.bindir = _bindir()
        self.port = _free_port()
        self.dir = tempfile.mkdtemp(prefix="sluice-pg-", dir="/tmp")
        self.data = os.path.join(self.dir, "data")
        self._user = "postgres" if os.geteuid() == 0 else None
        if self._user:
            pw = pwd.getpwnam(self._user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 60) -> None:
        # the server's output goes to the log file (-l): a pipe would keep run() waiting
        subprocess.run([os.path.join(self.bindir, args[0]), *args[1:]], check=True, timeout=timeout,
                       user=self._user, capture_output=True, cwd=self.dir)

    def start(self) -> None:
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "start",
                  "-o", self._options())

    def _options(self) -> str:
        return " ".join([f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1",
                         *(f"-c {k}='{v}'" for k, v in self.settings.items())])

    def restart(self) -> None:
        """A fast shutdown (every session is disconnected) and a start."""
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "-m", "fast",
                  "restart", "-o", self._options())

    def shut_down(self) -> None:
        """A fast shutdown (every session is disconnected); :meth:`start_again` brings it back."""
        self._run("pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop")

    def start_again(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-w", "start",
                  "-o", self._options())

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", self.data, "-w", "-m", "immediate", "stop", timeout=30)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "PrivateServer":
        try:
            self.start()
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
