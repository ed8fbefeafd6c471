"""kill -9 of a propagation and of its destination server, with a checker.

Run as a script (or forked by tests/forkserver.py: :func:`main`), this file is the
propagating process of one site::

    python propcrash.py DSN BATCH_SIZE DEADLINE_EPOCH

It runs that site's schedules (``PropagationRunner.run``) until the file ``STOP`` appears
in its working directory or the deadline passes.  :class:`Controller`
starts it and ``sluice serve`` processes, kills them with SIGKILL and starts them again;
the test checks what arrived.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(os.path.dirname(HERE)), "src")


class Child:
    """A child process that can be killed with SIGKILL and started again, the same way."""

    def __init__(self, target: str, args: list[str], cwd: str, ready=None) -> None:
        self.target, self.args, self.cwd, self.ready = target, args, cwd, ready
        self.argv = [target, *args]
        self.proc = None                       # a tests/forkserver.py Child (Popen's poll/wait)
        self.kills = 0

    def start(self) -> "Child":
        """Fork it from the preloaded parent (tests/forkserver.py): a process of its own,
        without an interpreter start and the imports on every restart."""
        from tests import forkserver
        self.proc = forkserver.shared(*forkserver.FLEETS).spawn(
            self.target, self.args, os.path.join(self.cwd, "child.err"), cwd=self.cwd)
        if self.ready is not None:
            deadline = time.monotonic() + 120          # a slow machine: later, never too early
            while not self.ready():
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"{self.argv[:3]} did not start")
                time.sleep(0.05)
        return self

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            self.kills += 1

    def stop(self, timeout: float = 20) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()


def propagator(dsn: str, workdir: str, batch_size: int, deadline: float) -> Child:
    return Child(f"{__name__}:main", [dsn, str(batch_size), str(deadline)], workdir)


def server(dsn: str, port: int, workdir: str) -> Child:
    import httpx

    def up() -> bool:
        try:
            httpx.get(f"http://127.0.0.1:{port}/aqserv/servlet/AQPropServlet?wsdl", timeout=1)
            return True
        except httpx.TransportError:
            return False
    return Child("tests.forkserver:cli", ["--dsn", dsn, "serve", "--host", "127.0.0.1", "--port", str(port)],
                 workdir, up)


def chaos(children: list[Child], done: threading.Event, kills: int, seed: int = 7,
          moved=None) -> None:
    """Kill one of ``children`` every 0.3-1.2 s and start it again, ``kills`` times or
    until ``done``.  With ``moved`` (true when the stream moved since it last said so), a
    kill also waits for that: on a slow machine the children start slowly, and kills on a
    timer alone would only ever hit processes still starting (tests/killschedule.py)."""
    import random
    rng = random.Random(seed)
    for _ in range(kills):
        if done.wait(rng.uniform(0.3, 1.2)):
            return
        while moved is not None and not moved():
            if done.wait(0.2):
                return
        child = rng.choice(children)
        child.kill()
        time.sleep(rng.uniform(0.0, 0.3))
        child.start()


def main(dsn: str, batch_size: str, deadline: str) -> None:
    sys.path.insert(0, SRC)
    import sluice
    from sluice.streams.propagation.runner import PropagationRunner
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def watch() -> None:
        while not stop.wait(0.1):
            if os.path.exists("STOP") or time.time() > float(deadline):
                stop.set()
    threading.Thread(target=watch, daemon=True).start()
    conn = sluice.connect(dsn)
    # the back-off on a clock 60 times as fast: a destination down for a moment costs half
    # a second, not 30 s (the back-off's own rule is tested exactly with a clock of the test's)
    start = time.time()
    runner = PropagationRunner(conn, batch_size=int(batch_size), clock=lambda: start + (time.time() - start) * 60)
    try:
        runner.run(stop, idle=0.2)
    finally:
        runner.close()
        conn.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
