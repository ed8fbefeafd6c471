"""``sluice run`` as real processes (issue 13 §3 and §5): SIGTERM stops it cleanly (exit
status 0, the batch under way finished, nothing lost); two hosts on one store run the
capture exactly once, and when the one running it is killed with ``kill -9`` the other
takes it over within seconds — a checker (tests/streams/capturecrash.py) then finds every
committed source transaction in the queue exactly once, whole, in commit order.

Both store backends; the source is PostgreSQL (capturekit.py).  Bounded: a few seconds of
writing, three kills, every wait with a deadline."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

from tests.conftest import PG_BASE
from tests.streams import capturecrash
from tests.streams.capturekit import env  # noqa: F401  (fixture)
from tests.streams.hostkit import hosted, spawn_host, wait_for

KILLS = int(os.environ.get("SLUICE_HOST_KILLS", "3"))


def start_capture(env) -> str:
    table = f"{env.src}.ledger"
    env.sql(f"CREATE TABLE {table} (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "ledger"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    return table


def runner(env) -> int | None:
    """The pid V$STREAMS_HOSTED names for the capture."""
    rows = [r for r in hosted(env.conn) if r["PROCESS_NAME"] == "CAP"]
    return rows[0]["OS_PID"] if rows and rows[0]["STATE"] == "RUNNING" else None


def log_of(path: str) -> str:
    with open(path, errors="replace") as f:
        return f.read()


def started(child: subprocess.Popen, log: str) -> None:
    """Wait until ``sluice run`` is up (its signal handlers installed)."""
    wait_for(lambda: f"pid {child.pid}) started" in log_of(log) or child.poll() is not None, 60, step=0.05)
    assert child.poll() is None, log_of(log)[-3000:]


def stop_all(children: list[subprocess.Popen], logs: list[str]) -> None:
    """SIGTERM each host; every one must exit with status 0 within a minute (a host that
    does not is killed, and the test fails after all are gone)."""
    failures = []
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child, log in zip(children, logs):
        try:
            code = child.wait(60)
        except subprocess.TimeoutExpired:
            child.kill()
            code = child.wait()
            failures.append(f"sluice run {child.pid} did not stop on SIGTERM")
        if code != 0:
            failures.append(f"sluice run {child.pid} exited with {code}: {log_of(log)[-2000:]}")
    assert not failures, failures


def check_queue(env, writer) -> capturecrash.Report:
    env.process().catch_up(timeout=120)          # what the last host left, if anything
    rep = capturecrash.check(writer.log, env.dequeue_all())
    assert rep.ok, (f"lost {rep.lost[:5]} duplicated {rep.duplicated[:5]} torn {rep.torn[:3]} "
                    f"out of order {rep.out_of_order[:5]} phantom {rep.phantom[:5]}")
    assert rep.captured == rep.committed > 20
    return rep


def test_sluice_run_on_a_store_it_cannot_open_is_one_line_and_status_1(tmp_path):
    child = spawn_host(f"sqlite:///{tmp_path}/no/such/dir/x.db", str(tmp_path / "host.log"))
    assert child.wait(60) == 1
    text = log_of(str(tmp_path / "host.log"))
    assert text.startswith("error: ORA-27041") and text.count("\n") == 1, text


def test_sigint_stops_an_idle_host_with_status_0(tmp_path):
    """``sluice --dsn DSN run`` (the DSN from the global option) with nothing to run; Ctrl-C."""
    log = str(tmp_path / "host.log")
    child = spawn_host(None, log, "--dsn", f"sqlite:///{tmp_path}/x.db")
    started(child, log)
    child.send_signal(signal.SIGINT)
    assert child.wait(60) == 0
    assert "SIGINT: stopping" in log_of(log) and "Traceback" not in log_of(log)


def test_stop_and_start_capture_obeyed_by_a_host_in_another_process(env, tmp_path):
    """STOP_CAPTURE / START_CAPTURE in this process; ``sluice run`` in another obeys within
    a second (SQLite: the shared catalog counter; PostgreSQL: NOTIFY)."""
    start_capture(env)
    log = str(tmp_path / "host.log")
    child = spawn_host(env.dsn, log)
    try:
        started(child, log)
        wait_for(lambda: runner(env) == child.pid, 30)
        env.conn.capture_adm.stop_capture(capture_name="CAP")
        stopped = wait_for(lambda: not hosted(env.conn), 5)
        env.conn.capture_adm.start_capture(capture_name="CAP")
        restarted = wait_for(lambda: runner(env) == child.pid, 5)
        print(f"obeyed in another process: STOP {stopped:.2f} s, START {restarted:.2f} s")
        assert stopped < 2.0 and restarted < 2.0    # "within a second", on a busy machine
    finally:
        stop_all([child], [log])
    text = log_of(log)      # the capture saw the catalog change itself, or the host told it
    assert text.count("sluice.capture.CAP: started") == 2 and text.count("sluice.capture.CAP: stopped") == 2, text


def test_sigterm_stops_sluice_run_cleanly_without_loss(env, tmp_path):
    table = start_capture(env)
    log = str(tmp_path / "host.log")
    child = spawn_host(env.dsn, log)
    writer = capturecrash.Writer(PG_BASE, table, random.Random(7))
    try:
        started(child, log)
        wait_for(lambda: runner(env) == child.pid, 30)
        writer.start()
        time.sleep(1.5)                          # capturing while the writer writes
    finally:
        stop_all([child], [log])                 # while the writer writes
        writer.done.set()
        if writer.ident is not None:
            writer.join(30)
    assert writer.error is None
    text = log_of(log)
    assert "SIGTERM: stopping" in text and "sluice.capture.CAP: stopped" in text, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert hosted(env.conn) == [] and env.view("SELECT * FROM V$STREAMS_CAPTURE") == []
    captured_by_host = env.view("SELECT CAPTURED_SCN FROM DBA_CAPTURE")[0]["CAPTURED_SCN"]
    assert captured_by_host                      # the host did capture before it stopped
    check_queue(env, writer)


def test_kill_9_of_the_running_host_the_other_takes_over_exactly_once(env, tmp_path):
    """Two ``sluice run`` on one store, a writer committing all along; three times the host
    running the capture is killed with SIGKILL: the other one takes over within seconds
    (then the killed one is started again, as the standby); in the end no change is lost
    or captured twice."""
    table = start_capture(env)
    logs = [str(tmp_path / f"host{i}.log") for i in range(2)]
    hosts = [spawn_host(env.dsn, logs[0]), spawn_host(env.dsn, logs[1])]
    for h, log in zip(hosts, logs):
        started(h, log)
    writer = capturecrash.Writer(PG_BASE, table, random.Random(11))
    takeovers = []
    try:
        wait_for(lambda: runner(env) in {h.pid for h in hosts}, 30)
        writer.start()
        for _ in range(KILLS):
            time.sleep(random.uniform(0.3, 1.0))
            i = [h.pid for h in hosts].index(runner(env))
            victim, survivor = hosts[i], hosts[1 - i]
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            killed = time.monotonic()
            wait_for(lambda: runner(env) == survivor.pid, 30, step=0.05)
            takeovers.append(time.monotonic() - killed)
            assert survivor.poll() is None, log_of(logs[1 - i])[-3000:]
            hosts[i] = spawn_host(env.dsn, logs[i])          # the new standby
            started(hosts[i], logs[i])
        time.sleep(0.5)
    finally:
        writer.done.set()
        if writer.ident is not None:
            writer.join(30)
        stop_all(hosts, logs)
    print(f"takeover after kill -9: {', '.join(f'{t:.2f} s' for t in takeovers)}")
    assert writer.error is None
    assert all(t < 15 for t in takeovers), takeovers       # "within seconds"
    rep = check_queue(env, writer)
    print(f"{rep.committed} transactions committed, {rep.captured} captured exactly once")
