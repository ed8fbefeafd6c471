"""A real Spark standalone cluster on loopback for tests: a master and two workers started
from the pip ``pyspark`` distribution's ``spark-class``, stopped (by their process ids)
when the test ends."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyspark

from .drivers import QUICK_JVM

SPARK_HOME = Path(pyspark.__file__).parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(work: Path) -> dict:
    # the master's and workers' JVMs with the quick options of the tests' drivers (drivers.py)
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(work / "worker"), SPARK_LOG_DIR=str(work / "logs"),
               PYSPARK_PYTHON=sys.executable, SPARK_NO_DAEMONIZE="1", SPARK_DAEMON_JAVA_OPTS=QUICK_JVM)
    return env


def _wait_for_port(port: int, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"a cluster process ended early:\n{log.read_text()[-3000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.3)
    raise AssertionError(f"port {port} did not open in {timeout} s:\n{log.read_text()[-3000:]}")


@contextmanager
def standalone_cluster(work: Path, workers: int = 2) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` of a running master with ``workers`` workers (1 core,
    768 MB each)."""
    work.mkdir(parents=True, exist_ok=True)
    env = _env(work)
    port, ui = _free_port(), _free_port()
    procs: list[subprocess.Popen] = []
    logs: list = []

    def start(args: list[str], name: str) -> subprocess.Popen:
        log = work / f"{name}.log"
        f = open(log, "w")
        logs.append(f)
        proc = subprocess.Popen([str(SPARK_CLASS), *args], env=env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)
        procs.append(proc)
        return proc

    try:
        master = start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                        "--webui-port", str(ui)], "master")
        _wait_for_port(port, 90, master, work / "master.log")
        url = f"spark://127.0.0.1:{port}"
        for i in range(workers):
            start(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1",
                   "--memory", "768m", "--webui-port", str(_free_port()), "--work-dir", str(work / f"w{i}")],
                  f"worker{i}")
        _wait_for_workers(ui, workers, 90)
        yield url
    finally:
        for proc in reversed(procs):   # our own processes, by id
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for f in logs:
            f.close()


def _wait_for_workers(ui_port: int, workers: int, timeout: float) -> None:
    import json
    import urllib.request

    end = time.monotonic() + timeout
    alive = 0
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
                alive = sum(w.get("state") == "ALIVE" for w in json.load(r).get("workers", []))
            if alive >= workers:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"{alive} of {workers} workers registered in {timeout} s")
