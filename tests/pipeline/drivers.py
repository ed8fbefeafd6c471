"""``sluice pipeline run`` drivers that tests start as processes of their own (test_kill9,
test_restart's late worker, test_cluster): the Spark settings that keep a short driver's
JVM cheap, and waits that go by the driver's progress, not by a clock.

**The JVM's options.**  A driver of these tests lives a minute or two and runs a few
small micro-batches; most of its CPU is the JVM's own start-up -- the C2 compiler's
threads compiling Spark's classes for a peak speed the run never needs, and the parallel
collector's threads.  ``-XX:TieredStopAtLevel=1`` (the C1 compiler only) and
``-XX:+UseSerialGC`` halve the JVM's CPU of such a run (29.7 s -> 13.9 s on the 2-core
machine, a 500-message ``--once`` run); they change no answer, only how fast the JVM's
code runs.  They reach the JVM the way a user passes them: ``--conf
spark.driver.extraJavaOptions=...`` (read by spark-submit as it starts the driver's JVM,
client mode), ``spark.executor.extraJavaOptions`` for a cluster's executors and
``SPARK_DAEMON_JAVA_OPTS`` for its master and workers (Spark's spark-env variable).
Class data sharing halves it again (13.9 s -> 7.0 s): the first driver of a test process
that ends cleanly writes the classes it loaded to an archive (``-XX:ArchiveClassesAtExit``,
Java 13+), the later drivers map them (``-XX:SharedArchiveFile``) instead of loading and
verifying Spark's classes one by one.  The archive (~180 MB) lives in a directory of the
test process, removed as it exits; a dump is renamed into place only after its driver's
whole process group has ended, so no driver maps a half-written one (a JVM that finds an
archive unusable says so and runs without it: ``-Xshare:auto``).

**Waits.**  Under CI's load (10-15 on 2 cores) a driver's JVM start, its first
micro-batch, a restart from the checkpoint each take several times what they take on an
idle machine, and fixed timeouts failed runs that were only slow (``TimeoutExpired`` on
a ``sluice pipeline run`` that was still working).  A wait here fails only when the
driver ends early or shows no sign of life -- no line of output (its JVM's start-up
lines, Spark's stage progress, its own batch lines) and no change of what the test
watches -- for :data:`QUIET` seconds; a slow machine makes it slower, never wrong.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

SRC = str(Path(__file__).resolve().parents[2] / "src")
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
QUIET = 300.0      # seconds without output or progress: the driver is stuck, not slow
LONGEST = 3600.0   # a driver that keeps printing but never gets there
# the class-data archive of this test process's drivers (see the module's docstring)
_CDS = Path(tempfile.mkdtemp(prefix="sluice-test-cds-"))
atexit.register(shutil.rmtree, _CDS, True)
ARCHIVE = _CDS / "spark.jsa"


def env(**extra: str) -> dict:
    """The environment of a driver: this checkout's Sluice, loopback, the venv's Python."""
    return {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable, **extra}


def command(dsn: str, *args: str, ui: bool = False) -> list[str]:
    """``sluice --dsn DSN pipeline run ARGS``, without the Spark UI unless ``ui`` (the
    driver's JVM options: :class:`Driver`)."""
    return [sys.executable, "-m", "sluice.cli", "--dsn", dsn, "pipeline", "run", *args,
            "--conf", f"spark.ui.enabled={'true' if ui else 'false'}"]


class Driver:
    """One ``sluice pipeline run`` process (its own process group: driver, JVM, Python
    workers), its output in ``log``."""

    def __init__(self, args: list[str], log: Path, environ: dict | None = None) -> None:
        self.log = log
        self._out = open(log, "w")
        if ARCHIVE.exists():
            self.dump, cds = None, f"-XX:SharedArchiveFile={ARCHIVE}"
        else:   # written as the JVM exits cleanly; the archive once the whole group has ended
            self.dump = Path(tempfile.mkstemp(suffix=".jsa", dir=_CDS)[1])
            self.dump.unlink()
            cds = f"-XX:ArchiveClassesAtExit={self.dump}"
        args = [*args, "--conf", f"spark.driver.extraJavaOptions={QUICK_JVM} {cds}"]
        self.proc = subprocess.Popen(args, env=environ or env(), stdout=self._out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:]

    def wait_for(self, done: Callable[[], bool], measure: Callable[[], object] = lambda: None,
                 interval: float = 0.2, end_early: bool = False) -> None:
        """Until ``done()``; an AssertionError when the driver ended first (unless
        ``end_early``), or neither its output nor ``measure()`` changed for :data:`QUIET`
        seconds."""
        start = last = time.monotonic()
        seen = (-1, object())
        while not done():
            now = time.monotonic()
            signs = (self.log.stat().st_size, measure())
            if signs != seen:
                seen, last = signs, now
            if not end_early and self.proc.poll() is not None and not done():
                raise AssertionError(f"the driver ended (rc {self.proc.returncode}) first:\n{self.tail()}")
            if now - last > QUIET or now - start > LONGEST:
                raise AssertionError(f"the driver made no progress for {now - last:.0f} s "
                                     f"({now - start:.0f} s in all):\n{self.tail()}")
            time.sleep(interval)

    def finish(self) -> int:
        """Its exit code, once it ends by itself (a ``--once`` run) and so has its JVM."""
        self.wait_for(lambda: self.proc.poll() is not None and not self._group_alive(), interval=0.5, end_early=True)
        self._out.close()
        if self.proc.returncode == 0 and self.dump is not None and self.dump.exists() and not ARCHIVE.exists():
            os.replace(self.dump, ARCHIVE)
        return self.proc.returncode

    def _group_alive(self) -> bool:
        """A process of its group (its JVM ends after the driver's Python) still runs (a
        zombie, ended but not yet reaped by whoever inherited it, does not count)."""
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[2]) == self.proc.pid and fields[0] != "Z":
                return True
        return False

    def signal(self, sig: int) -> None:
        """``sig`` to the driver's Python process only (SIGTERM: its own clean stop)."""
        self.proc.send_signal(sig)

    def kill(self) -> None:
        """SIGKILL to its whole process group -- driver, JVM, workers -- and reap it."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._out.close()


def run(args: list[str], log: Path, environ: dict | None = None) -> Driver:
    """A driver run to its end (``--once``), killed if it got stuck."""
    driver = Driver(args, log, environ)
    try:
        driver.finish()
    finally:
        if driver.proc.poll() is None:
            driver.kill()
    return driver
