"""The process host in-process (issue 13 §3, DESIGN §7 "Processes"): it runs the enabled
Streams processes of a store, obeys START_/STOP_ within a second, restarts a crashed worker
with back-off but leaves an ABORTED process alone (Oracle: it waits for START_ again), runs
each process exactly once among several hosts, and leaves no thread behind.

Capture needs a PostgreSQL source (the store's own database, or ``source_dsn`` for an
SQLite store: tests/streams/capturekit.py); the fault and lease tests use a process kind of
their own (tests/streams/hostkit.py) on both backends."""

from __future__ import annotations

import functools
import logging
import os
import threading
import time

import pytest

import sluice
from sluice.store.leases import open_leases
from sluice.streams.host import Host
from sluice.streams.hosting import kinds
from tests.streams.capturekit import env  # noqa: F401  (fixture)
from tests.streams.hostkit import TestKind, hosted, wait_for


def host_threads() -> list[threading.Thread]:
    """The threads hosts start: their supervisors and one per process run."""
    prefixes = ("sluice-host-", "sluice-testproc-", "sluice-goodproc-", "sluice-badproc-",
                *(f"sluice-{k.name.lower()}-" for k in kinds()))
    return [t for t in threading.enumerate() if t.name.startswith(prefixes)]


@pytest.fixture
def no_thread_left():
    yield
    wait_for(lambda: not host_threads(), 5)


def ids(env, table: str) -> list[int]:
    return [lcr.get_value("NEW", "id").access_number() for lcr in env.dequeue_all()
            if lcr.get_object_name() == table.upper()]


def test_capture_is_a_registered_kind():
    assert "CAPTURE" in [k.name for k in kinds()]
    capture = next(k for k in kinds() if k.name == "CAPTURE")
    assert capture.logger == "sluice.capture"


def test_host_runs_enabled_capture_and_changes_arrive(env, no_thread_left, caplog):
    """An enabled capture runs in the host (V$STREAMS_HOSTED names the host and its pid,
    V$STREAMS_CAPTURE shows it capturing); committed changes reach the queue; the process
    logs as sluice.capture.CAP."""
    caplog.set_level(logging.INFO, logger="sluice")
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    with Host(functools.partial(sluice.connect, env.dsn)) as host:
        wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 10)
        for i in range(5):
            env.sql(f"INSERT INTO {env.src}.t VALUES ({i})")
        got: list[int] = []
        wait_for(lambda: got.extend(ids(env, "t")) or len(got) >= 5, 20)
        assert got == [0, 1, 2, 3, 4]
        row, = hosted(env.conn)
        assert (row["PROCESS_TYPE"], row["PROCESS_NAME"], row["OS_PID"], row["HOST_ID"], row["STATE"]) == \
               ("CAPTURE", "CAP", os.getpid(), host.host_id, "RUNNING")
        assert env.view("SELECT STATE FROM V$STREAMS_CAPTURE")[0]["STATE"] in (
            "CAPTURING CHANGES", "WAITING FOR REDO")
    assert hosted(env.conn) == [] and env.view("SELECT * FROM V$STREAMS_CAPTURE") == []
    assert any(r.name == "sluice.capture.CAP" and "started" in r.getMessage() for r in caplog.records)


def test_stop_capture_obeyed_within_a_second_start_resumes_without_loss(env, no_thread_left):
    """STOP_CAPTURE only changes the catalog; the running host stops the capture within a
    second (its batch finished).  Changes committed while it is stopped stay in the slot:
    START_CAPTURE resumes with none lost and none twice."""
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    adm = env.conn.capture_adm
    adm.start_capture(capture_name="CAP")
    got: list[int] = []
    with Host(functools.partial(sluice.connect, env.dsn)) as host:
        wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 10)
        env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
        wait_for(lambda: got.extend(ids(env, "t")) or got, 20)
        adm.stop_capture(capture_name="CAP")
        took = wait_for(lambda: host.running() == [] and not env.view("SELECT * FROM V$STREAMS_CAPTURE"), 5)
        print(f"STOP_CAPTURE obeyed in {took:.3f} s")
        assert took < 2.0       # "within a second", with room for a machine shared by four
        wait_for(lambda: hosted(env.conn) == [], 2)      # the supervisor lets the lease go
        for i in range(2, 6):
            env.sql(f"INSERT INTO {env.src}.t VALUES ({i})")
        time.sleep(0.3)
        assert ids(env, "t") == []            # stopped: nothing captured meanwhile
        adm.start_capture(capture_name="CAP")
        took = wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 5)
        print(f"START_CAPTURE obeyed in {took:.3f} s")
        wait_for(lambda: got.extend(ids(env, "t")) or len(got) >= 5, 20)
        time.sleep(0.3)
        got += ids(env, "t")
    assert got == [1, 2, 3, 4, 5]


def test_alter_capture_obeyed_by_the_running_capture(env, no_thread_left):
    """ALTER_CAPTURE (a new rule set) only changes the catalog; the capture running in the
    host applies it from its next batch, without a restart."""
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)", f"CREATE TABLE {env.src}.u (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.table_rule_set("RS2", "u")
    adm = env.conn.capture_adm
    adm.start_capture(capture_name="CAP")
    with Host(functools.partial(sluice.connect, env.dsn)) as host:
        wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 10)
        env.sql(f"INSERT INTO {env.src}.t VALUES (1)", f"INSERT INTO {env.src}.u VALUES (1)")
        got: list = []
        wait_for(lambda: got.extend(env.dequeue_all()) or got, 20)
        assert [x.get_object_name() for x in got] == ["T"]
        adm.alter_capture(capture_name="CAP", rule_set_name="RS2")
        env.sql(f"INSERT INTO {env.src}.t VALUES (2)", f"INSERT INTO {env.src}.u VALUES (2)")
        got = []
        wait_for(lambda: got.extend(env.dequeue_all()) or got, 20)
        assert [(x.get_object_name(), x.get_value("NEW", "id").access_number()) for x in got] == [("U", 2)]
        assert host.running() == [("CAPTURE", "CAP")] and hosted(env.conn)[0]["RESTARTS"] == 0


def test_capture_stopped_before_it_began_is_a_stop_not_a_failure(env, no_thread_left, caplog,
                                                                  monkeypatch):
    """STOP_CAPTURE between the host's listing and the capture's start (which then finds it
    DISABLED, ORA-26666): logged as stopped, no error, and START_CAPTURE runs it again."""
    from sluice.streams.capture import CaptureProcess
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    adm = env.conn.capture_adm
    real, gate = CaptureProcess.start, threading.Event()

    def slow_start(self):
        gate.wait(10)              # the host has launched it; STOP_CAPTURE comes now
        return real(self)
    monkeypatch.setattr(CaptureProcess, "start", slow_start)
    adm.start_capture(capture_name="CAP")
    with Host(functools.partial(sluice.connect, env.dsn)) as host:
        wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 10)
        adm.stop_capture(capture_name="CAP")
        gate.set()
        wait_for(lambda: host.running() == [] and hosted(env.conn) == [], 5)
        adm.start_capture(capture_name="CAP")
        wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 5)
        env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
        got: list[int] = []
        wait_for(lambda: got.extend(ids(env, "t")) or got, 20)
    assert got == [1]
    assert not [r for r in caplog.records if r.name == "sluice.capture.CAP" and r.levelno >= logging.WARNING]


def test_second_copy_of_a_capture_cannot_commit_a_batch(env):
    """The fence behind the leases: two copies of one capture (a host that lost its lease
    and has not stopped yet, beside the one that took over) — the copy whose idea of the
    position is stale has its batch rolled back (ORA-26666) and ends; the capture stays
    ENABLED and the other copy captures every change exactly once."""
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    one, two = env.process(), env.process()
    one.start()
    two.start()
    env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
    assert one.catch_up() >= 1
    env.sql(f"INSERT INTO {env.src}.t VALUES (2)")
    with pytest.raises(sluice.DatabaseError, match="ORA-26666.*another copy"):
        for _ in range(500):                   # other sessions' transactions may come first
            two.run_batch()
    two.stop()
    assert env.view("SELECT STATUS FROM DBA_CAPTURE")[0]["STATUS"] == "ENABLED"
    one.catch_up()
    assert ids(env, "t") == [1, 2]


def test_aborted_capture_is_not_restarted(env, no_thread_left, caplog):
    """A capture that fails on its own (its replication slot dropped: ORA-01291) goes
    ABORTED with ERROR_MESSAGE set; the host logs it and leaves it stopped — no restart
    loop — until START_CAPTURE."""
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    slot = env.view("SELECT REPLICATION_SLOT FROM DBA_CAPTURE")[0]["REPLICATION_SLOT"]
    with Host(functools.partial(sluice.connect, env.dsn), backoff=(0.05, 0.2)) as host:
        wait_for(lambda: host.running() == [("CAPTURE", "CAP")], 10)
        # the slot is busy while the capture peeks it: drop it between two peeks
        wait_for(lambda: _try_drop(env, slot), 10, step=0.005)
        env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
        wait_for(lambda: host.running() == [], 10)
        cap = env.view("SELECT STATUS, ERROR_NUMBER FROM DBA_CAPTURE")[0]
        assert (cap["STATUS"], cap["ERROR_NUMBER"]) == ("ABORTED", 1291)
        time.sleep(1.0)                      # several takeover scans: still not restarted
        assert host.running() == [] and hosted(env.conn) == []
    ended = [r for r in caplog.records if r.name == "sluice.capture.CAP" and "not restarted" in r.getMessage()]
    assert len(ended) == 1 and ended[0].levelno == logging.ERROR
    assert not any("crashed" in r.getMessage() for r in caplog.records if r.name == "sluice.capture.CAP")


def _try_drop(env, slot: str) -> bool:
    import psycopg
    try:
        env.pg.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        return True
    except psycopg.errors.ObjectInUse:
        return False


def test_worker_crash_restarts_with_doubling_back_off(dsn, no_thread_left, caplog):
    """An exception the process did not turn into its state is a crash of the host's worker:
    restarted while the process stays enabled, after 0.1 s, 0.2 s, 0.4 s …, each crash
    logged under the process's name and shown in V$STREAMS_HOSTED (RESTARTS)."""
    caplog.set_level(logging.INFO, logger="sluice")
    tk = TestKind(crashes=3)
    tk.enable("P1")
    conn = sluice.connect(dsn)
    with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], backoff=(0.1, 1.0)) as host:
        wait_for(lambda: tk.run_count("P1") == 4 and host.running() == [("TESTPROC", "P1")], 10)
        starts = [t for n, t, _ in tk.runs]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert len(gaps) == 3 and all(g >= d * 0.9 for g, d in zip(gaps, (0.1, 0.2, 0.4))), gaps
        row, = hosted(conn)
        assert (row["STATE"], row["RESTARTS"], row["ERROR_MESSAGE"]) == ("RUNNING", 3, None)
        time.sleep(0.5)
        assert tk.run_count("P1") == 4           # running now: no further restart
    crashes = [r for r in caplog.records if r.name == "sluice.test.P1" and "crashed" in r.getMessage()]
    assert len(crashes) == 3 and all(r.levelno == logging.ERROR and r.exc_info for r in crashes)
    assert "RuntimeError: injected failure of P1" in crashes[0].getMessage()
    conn.close()


def test_crash_waiting_to_restart_is_visible_and_stop_cancels_it(dsn, no_thread_left):
    """While it waits to restart the process shows STATE 'WAITING TO RESTART' with the
    error; disabled meanwhile, it is not restarted and its lease goes."""
    tk = TestKind(crashes=10)
    tk.enable("P1")
    conn = sluice.connect(dsn)
    with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], backoff=(5.0, 5.0),
              takeover=0.1) as host:
        wait_for(lambda: hosted(conn) and hosted(conn)[0]["STATE"] == "WAITING TO RESTART", 10)
        row = hosted(conn)[0]
        assert row["RESTARTS"] == 1 and row["ERROR_MESSAGE"] == "RuntimeError: injected failure of P1"
        tk.disable("P1")
        wait_for(lambda: hosted(conn) == [], 5)
        assert tk.run_count("P1") == 1 and host.running() == []
    conn.close()


def test_too_many_crashes_in_a_row_abort_the_process(dsn, no_thread_left, caplog):
    """After ``max_crashes`` crashes in a row the host records the process ABORTED (the
    kind's abort) and stops restarting it."""
    tk = TestKind(crashes=100)
    tk.enable("P1")
    conn = sluice.connect(dsn)
    with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], backoff=(0.02, 2.0),
              max_crashes=3, takeover=0.1) as host:
        wait_for(lambda: tk.aborted and host.running() == [] and not hosted(conn), 10)
        time.sleep(0.5)
        assert tk.run_count("P1") == 3
        assert [(n, str(e)) for n, e in tk.aborted] == [("P1", "injected failure of P1")]
    conn.close()
    assert any("crashed 3 times in a row" in r.getMessage() for r in caplog.records
               if r.name == "sluice.test.P1")


def test_capture_worker_crash_restarted_then_aborted(env, no_thread_left, monkeypatch):
    """A capture whose worker crashes (an exception the capture did not turn into its state)
    is restarted with back-off, and after max_crashes in a row recorded ABORTED in
    DBA_CAPTURE with the error; START_CAPTURE runs it again and nothing is lost."""
    from sluice.streams.capture import CaptureProcess
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
    real = CaptureProcess.run_batch
    starts = []

    def broken(self, *a, **kw):
        starts.append(time.monotonic())
        raise RuntimeError("injected worker failure")
    monkeypatch.setattr(CaptureProcess, "run_batch", broken)
    with Host(functools.partial(sluice.connect, env.dsn), backoff=(0.1, 5.0), max_crashes=3) as host:
        wait_for(lambda: env.view("SELECT STATUS FROM DBA_CAPTURE")[0]["STATUS"] == "ABORTED", 20)
        cap = env.view("SELECT ERROR_NUMBER, ERROR_MESSAGE FROM DBA_CAPTURE")[0]
        assert cap["ERROR_NUMBER"] == 600 and "RuntimeError: injected worker failure" in cap["ERROR_MESSAGE"]
        assert len(starts) == 3 and starts[2] - starts[1] >= 0.18
        wait_for(lambda: host.running() == [], 5)
        monkeypatch.setattr(CaptureProcess, "run_batch", real)
        env.conn.capture_adm.start_capture(capture_name="CAP")
        got: list[int] = []
        wait_for(lambda: got.extend(ids(env, "t")) or got, 20)
    assert got == [1]


def test_process_that_aborts_itself_is_not_restarted(dsn, no_thread_left, caplog):
    """A failing run that first took its process out of the enabled ones (as capture does
    with ABORTED) is final: logged once, never restarted."""
    tk = TestKind(crashes=5, abort=True)
    tk.enable("P1")
    with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], backoff=(0.05, 0.1),
              takeover=0.1):
        wait_for(lambda: tk.run_count("P1") == 1, 10)
        time.sleep(0.6)
        assert tk.run_count("P1") == 1
        tk.enable("P1")                       # START_ again

        def ended():
            return [r.levelno for r in caplog.records
                    if r.name == "sluice.test.P1" and "not restarted" in r.getMessage()]
        wait_for(lambda: len(ended()) == 2, 5)
        time.sleep(0.3)
        assert tk.run_count("P1") == 2 and ended() == [logging.ERROR] * 2


def test_two_hosts_run_each_process_exactly_once_and_take_over(dsn, no_thread_left):
    """Two hosts on one store: every enabled process runs on exactly one of them, never on
    both at once; when that host stops, the other takes its processes over within seconds."""
    tk = TestKind()
    tk.enable("P1", "P2", "P3")
    connect = functools.partial(sluice.connect, dsn)
    a = Host(connect, kinds=[tk.kind], takeover=0.2).start()
    b = Host(connect, kinds=[tk.kind], takeover=0.2).start()
    try:
        wait_for(lambda: sorted(a.running() + b.running()) ==
                 [("TESTPROC", "P1"), ("TESTPROC", "P2"), ("TESTPROC", "P3")], 10)
        time.sleep(0.6)                     # both keep trying: still exactly once
        assert len(tk.runs) == 3 and max(tk.most.values()) == 1
        conn = sluice.connect(dsn)
        assert sorted((r["PROCESS_NAME"], r["HOST_ID"]) for r in hosted(conn)) == sorted(
            [(n, a.host_id) for _, n in a.running()] + [(n, b.host_id) for _, n in b.running()])
        first, other = (a, b) if a.running() else (b, a)
        moved = first.running()
        first.stop()
        took = wait_for(lambda: len(other.running()) == 3 and len(tk.runs) == 3 + len(moved), 10)
        print(f"{len(moved)} processes taken over in {took:.2f} s")
        assert max(tk.most.values()) == 1 and len(tk.runs) == 3 + len(moved)
        assert {r["HOST_ID"] for r in hosted(conn)} == {other.host_id}
        conn.close()
    finally:
        a.stop()
        b.stop()


def test_leases_are_exclusive_per_host_and_go_with_it(dsn):
    """Two hosts' leases on one store exclude each other, in one process as across
    processes; closing (or dying) frees them."""
    conn = sluice.connect(dsn)
    store = conn.context.store
    one, two = open_leases(store), open_leases(store)
    try:
        assert one.acquire("CAPTURE", "C1") and not two.acquire("CAPTURE", "C1")
        assert two.acquire("CAPTURE", "C2") and not one.acquire("CAPTURE", "C2")
        one.release("CAPTURE", "C1")
        assert two.acquire("CAPTURE", "C1")
        two.close()           # the server ends the session a moment after the client goes
        wait_for(lambda: one.acquire("CAPTURE", "C1"), 5)
        assert one.acquire("CAPTURE", "C2") and one.alive()
    finally:
        one.close()
        two.close()
        conn.close()


def test_pg_lease_session_lost_stops_everything_first(no_thread_left):
    """PostgreSQL: a host whose lease session is killed (its leases gone with it) stops
    every process it runs before taking any lease again, so no other host's copy ever runs
    beside one of its own."""
    from tests.conftest import PG_BASE, drop_schema, pg_admin
    import uuid
    schema = "t_" + uuid.uuid4().hex[:12]
    dsn = f"{PG_BASE}?schema={schema}"
    tk = TestKind()
    tk.enable("P1")
    try:
        with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], takeover=0.2) as host:
            wait_for(lambda: host.running() == [("TESTPROC", "P1")], 10)
            with pg_admin() as admin:
                pid = host._leases._conn.info.backend_pid   # noqa: SLF001  (the test kills it)
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            wait_for(lambda: tk.run_count("P1") == 2 and host.running() == [("TESTPROC", "P1")], 10)
            assert tk.most["P1"] == 1
            assert host._leases._conn.info.backend_pid != pid   # noqa: SLF001
    finally:
        drop_schema(schema)


def test_host_goes_on_after_its_store_server_restarts(no_thread_left):
    """PostgreSQL, a private server (tests/store/pgserver.py): the store's server goes down
    for a few seconds and comes back (a maintenance restart).  The host loses its sessions
    and its leases with them, stops its process, waits for the store, takes the lease again
    and runs the process again -- never two copies at once."""
    from tests.store.pgserver import PrivateServer

    tk = TestKind()
    tk.enable("P1")
    with PrivateServer() as server:
        dsn = server.dsn + "?schema=site"
        sluice.connect(dsn).close()
        with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], takeover=0.2) as host:
            wait_for(lambda: host.running() == [("TESTPROC", "P1")], 10)
            server.shut_down()
            time.sleep(3 * 0.2 + 1)          # several scans meet the store away
            server.start_again()
            wait_for(lambda: tk.run_count("P1") == 2 and host.running() == [("TESTPROC", "P1")], 30)
            assert tk.most["P1"] == 1
            with sluice.connect(dsn) as conn:     # V$STREAMS_HOSTED shows it run here again
                wait_for(lambda: [(r["PROCESS_NAME"], r["HOST_ID"]) for r in hosted(conn)] == [("P1", host.host_id)],
                         10)


def test_pg_lease_session_gives_up_a_dead_peer_within_seconds():
    """PostgreSQL: the lease session is set so that the server ends it (and its leases)
    within seconds of its machine going silent, not after TCP's default hours."""
    from tests.conftest import PG_BASE
    from sluice.store.pgconn import parse_dsn
    from sluice.store.leases import PgLeases
    leases = PgLeases(parse_dsn(PG_BASE))
    try:
        conn = leases._conn                              # noqa: SLF001  (what the server was told)
        settings = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in (
            "tcp_keepalives_idle", "tcp_keepalives_interval", "tcp_keepalives_count", "tcp_user_timeout")}
        assert settings == {"tcp_keepalives_idle": "5", "tcp_keepalives_interval": "2",
                            "tcp_keepalives_count": "3", "tcp_user_timeout": "10000"}
        client = conn.info.get_parameters()              # and what the host's end does
        assert (client["keepalives_idle"], client["tcp_user_timeout"]) == ("5", "10000")
    finally:
        leases.close()


def test_row_left_by_a_dead_host_for_a_stopped_process_is_tidied(dsn, no_thread_left):
    """A host killed while running a process leaves its V$STREAMS_HOSTED row; when nobody
    takes the process over (it was stopped meanwhile) a live host removes the row once the
    lease is free — the row of a process another live host holds stays."""
    tk = TestKind()
    conn = sluice.connect(dsn)
    for name in ("GONE", "HELD"):
        conn.context.session.add_commit_work(lambda c, n=name: c.execute(
            "INSERT INTO SLUICE_STREAMS_HOSTED (PROCESS_TYPE, PROCESS_NAME, HOST_NAME, OS_PID, HOST_ID, "
            "STATE, STARTUP_TIME) VALUES ('TESTPROC', ?, 'elsewhere', 1, 'dead', 'RUNNING', 0)", (n,)))
    conn.commit()
    other = open_leases(conn.context.store)
    try:
        assert other.acquire("TESTPROC", "HELD")
        with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], takeover=0.1):
            wait_for(lambda: [r["PROCESS_NAME"] for r in hosted(conn)] == ["HELD"], 5)
    finally:
        other.close()
        conn.close()


def test_a_kind_whose_listing_fails_leaves_the_others_running(dsn, no_thread_left, caplog):
    """A bug or a missing table in one kind's listing is logged once and retried; the
    processes of the other kinds start and run."""
    good, bad = TestKind("GOODPROC"), TestKind("BADPROC")
    good.enable("P1")

    def broken(conn):
        raise KeyError("no such catalog")
    from sluice.streams.hosting import ProcessKind
    failing = ProcessKind("BADPROC", "sluice.test", broken, bad.kind.run)
    with Host(functools.partial(sluice.connect, dsn), kinds=[failing, good.kind], takeover=0.05) as host:
        wait_for(lambda: host.running() == [("GOODPROC", "P1")], 10)
        time.sleep(0.3)                      # several scans
        assert host.running() == [("GOODPROC", "P1")]
    warnings = [r for r in caplog.records if "listing the BADPROC processes" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].exc_info


def test_host_that_owns_its_process_freezes_the_heap_after_launching(dsn, no_thread_left):
    """``freeze_heap`` (what ``sluice run`` sets): a second after it launched processes the
    host collects once and freezes what is alive, so full collections during batches stop
    walking the whole process; at its stop it unfreezes.  Without it, nothing is frozen."""
    import gc
    frozen_by_the_suite = gc.get_freeze_count()   # tests/conftest.py freezes what collection made
    gc.unfreeze()
    try:
        tk = TestKind()
        tk.enable("P1")
        with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind]) as host:
            wait_for(lambda: host.running() == [("TESTPROC", "P1")], 10)
            time.sleep(1.5)
            assert gc.get_freeze_count() == 0              # a library host leaves the heap alone
        with Host(functools.partial(sluice.connect, dsn), kinds=[tk.kind], freeze_heap=True) as host:
            wait_for(lambda: host.running() == [("TESTPROC", "P1")], 10)
            wait_for(lambda: gc.get_freeze_count() > 0, 10)
        assert gc.get_freeze_count() == 0
    finally:
        if frozen_by_the_suite:
            gc.freeze()
