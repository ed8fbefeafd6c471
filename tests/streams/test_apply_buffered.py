"""An apply process reads the captured LCRs a capture process of its process stages in the
buffered queue (seed 001 "Persistent Queues and Buffered Queues": "LCRs that were captured
by a capture process are always stored in a buffered queue … Apply processes can dequeue
and process captured LCRs in a buffered queue"; DBMS_CAPTURE_ADM.SET_PARAMETER 'STAGING' =
'BUFFERED').  Whole source transactions in commit order, memory and spilled alike; the
capture's slot (its restart position) and DBA_CAPTURE.APPLIED_SCN move only past what the
apply applied and committed; a failed batch or a crash loses nothing and applies nothing
twice.  Both store backends; the source is PostgreSQL, the apply target an SQLite file."""

from __future__ import annotations

import functools
import sqlite3
import threading
import time

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.streams.apply import ApplyProcess
from sluice.streams.capture.staging import BufferedStaging
from sluice.streams.host import Host
from sluice.aq.buffered import pool_for
from sluice.aq.queue import Queue
from tests.streams.applykit import procedures
from tests.streams.capturekit import CONSUMER, env  # noqa: F401  (fixture)
from tests.streams.hostkit import wait_for
from tests.streams.test_capture_staging import confirmed


@pytest.fixture
def world(env, tmp_path):
    """A BUFFERED capture of ``src.t`` and an apply process (apply_captured, created by
    CREATE_APPLY: its subscription is PERSISTENT) into an SQLite file, both started."""
    path = tmp_path / "target.db"
    with sqlite3.connect(path) as c:
        c.execute(f'CREATE TABLE "{env.owner}.T" (id integer PRIMARY KEY, v text)')
    link = f"sqlite:///{path}"
    env.conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.set_parameter(capture_name="CAP", parameter="STAGING", value="BUFFERED")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=CONSUMER, apply_captured=True,
                                    apply_database_link=link)
    procedures(env.conn).set_schema_instantiation_scn(env.owner, env.pg.info.dbname.upper(), 0,
                                                      apply_database_link=link)
    env.conn.apply_adm.start_apply(apply_name=CONSUMER)
    env.target = path
    return env


def apply_process(env, **kw) -> ApplyProcess:
    app = ApplyProcess.from_catalog(sluice.connect(env.dsn), CONSUMER, **kw)
    env.procs.append(app)
    return app


def rows(env) -> list[tuple]:
    with sqlite3.connect(env.target) as c:
        return c.execute(f'SELECT id, v FROM "{env.owner}.T" ORDER BY id').fetchall()


def applied_scn(env):
    return env.view("SELECT APPLIED_SCN FROM DBA_CAPTURE WHERE CAPTURE_NAME = 'CAP'")[0]["APPLIED_SCN"]


def errors(env) -> int:
    return env.view("SELECT COUNT(*) AS N FROM DBA_APPLY_ERROR")[0]["N"]


def test_the_apply_process_applies_the_buffered_lcrs_and_then_the_slot_moves(world):
    env = world
    for i in range(3):
        env.sql(f"INSERT INTO {env.src}.t VALUES ({i}, 'a')", f"UPDATE {env.src}.t SET v = 'b' WHERE id = {i}")
    env.sql(f"DELETE FROM {env.src}.t WHERE id = 1")
    cap = env.process()
    cap.catch_up()
    before = confirmed(env)
    assert env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT WHERE MSG_STATE <> 'IN-MEMORY'")[0]["N"] == 0
    app = apply_process(env)
    assert app.drain() == 7
    assert rows(env) == [(0, "b"), (2, "b")]
    cap.run_batch()
    assert confirmed(env) > before                # past what the apply committed
    last = env.view("SELECT LAST_ENQUEUED_SCN FROM DBA_CAPTURE")[0]["LAST_ENQUEUED_SCN"]
    assert applied_scn(env) >= last
    progress = env.view("SELECT APPLIED_MESSAGE_NUMBER FROM DBA_APPLY_PROGRESS")
    assert progress == [{"APPLIED_MESSAGE_NUMBER": last}]
    assert pool_for(app.conn.context.store).count(app.ctx.queue(env.conn.username, "STRM_Q")) == 0
    assert errors(env) == 0


def test_the_slot_stays_until_the_apply_commits(world):
    """The capture's restart position never passes what the apply has not committed: its
    store commit fails after the target's, and the slot (REQUIRED_CHECKPOINT_SCN) stays."""
    env = world
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    cap = env.process()
    cap.catch_up()
    before = confirmed(env)
    checkpoint = env.view("SELECT REQUIRED_CHECKPOINT_SCN FROM DBA_CAPTURE")[0]["REQUIRED_CHECKPOINT_SCN"]
    app = apply_process(env)
    real = app.conn.commit

    def lost():
        raise DatabaseError("ORA-03113: end-of-file on communication channel")
    app.conn.commit = lost
    with pytest.raises(DatabaseError):
        app.drain()
    app.conn.commit = real
    app.conn.rollback()
    assert rows(env) == [(1, "a")]                # the target committed first
    cap.run_batch()
    assert confirmed(env) == before
    assert env.view("SELECT REQUIRED_CHECKPOINT_SCN FROM DBA_CAPTURE")[0]["REQUIRED_CHECKPOINT_SCN"] == checkpoint
    # the capture stages the LCRs again (the apply rolled back what it took); the apply
    # process that follows gets them and skips what the target has (SLUICE_APPLY_DONE)
    again = apply_process(env)
    env.sql(f"INSERT INTO {env.src}.t VALUES (2, 'b')")
    cap.catch_up()
    again.drain()
    cap.run_batch()
    assert rows(env) == [(1, "a"), (2, "b")] and errors(env) == 0
    assert confirmed(env) > before


def test_whole_transactions_however_small_the_batch(world):
    """A batch of 2 LCRs ends only where a source transaction ends: each run_batch leaves
    the target at a source commit."""
    env = world
    env.sql(*(f"INSERT INTO {env.src}.t VALUES ({i}, 'a')" for i in range(5)))
    env.sql(f"UPDATE {env.src}.t SET v = 'b'")
    cap = env.process()
    cap.catch_up()
    app = apply_process(env, batch=2)
    assert app.run_batch(wait=0) == 5
    assert rows(env) == [(i, "a") for i in range(5)]
    assert app.run_batch(wait=0) == 5
    assert rows(env) == [(i, "b") for i in range(5)]
    assert app.run_batch(wait=0) == 0


def test_spilled_lcrs_come_first_in_order(world):
    """What spilled to the queue table (older) comes before what is in memory."""
    env = world
    cap = env.process()
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')", f"INSERT INTO {env.src}.t VALUES (2, 'a')")
    limits = sluice.aq.buffered.configure(cap.conn, spill_after=0.0)   # everything spills
    try:
        cap.catch_up()
    finally:
        limits.spill_after = 300.0
    env.sql(f"UPDATE {env.src}.t SET v = 'b' WHERE id = 2")
    cap.catch_up()
    modes = env.view("SELECT MSG_STATE FROM AQ$STRM_QT")
    assert {m["MSG_STATE"] for m in modes} >= {"SPILLED"}
    app = apply_process(env)
    assert app.drain() == 3
    assert rows(env) == [(1, "a"), (2, "b")]
    cap.run_batch()
    assert applied_scn(env) >= env.view("SELECT LAST_ENQUEUED_SCN FROM DBA_CAPTURE")[0]["LAST_ENQUEUED_SCN"]


def test_a_failed_transaction_goes_to_the_error_queue_and_the_rest_comes_again(world):
    """disable_on_error: the apply stops at the failing transaction, which goes to the
    error queue; its batch's other LCRs, taken out of memory, are staged again by the
    capture, and the restarted apply applies them once — never the failed one."""
    env = world
    with sqlite3.connect(env.target) as c:
        c.execute(f'INSERT INTO "{env.owner}.T" VALUES (2, \'there\')')
    for i in range(1, 4):
        env.sql(f"INSERT INTO {env.src}.t VALUES ({i}, 'a')")
    cap = env.process()
    cap.catch_up()
    before = confirmed(env)
    app = apply_process(env)
    app.drain()
    assert app.state == "ABORTED" and errors(env) == 1
    cap.run_batch()                               # stages again what the apply gave back
    assert confirmed(env) == before
    env.conn.apply_adm.start_apply(apply_name=CONSUMER)
    again = apply_process(env)
    again.drain()
    assert rows(env) == [(1, "a"), (2, "there"), (3, "a")] and errors(env) == 1
    cap.run_batch()
    assert confirmed(env) > before
    assert env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT")[0]["N"] == 0


def test_capture_and_apply_running_side_by_side(world):
    """As a host runs them: the capture stages while the apply reads (small batches on both
    sides, so the apply often meets a transaction the capture is still staging)."""
    env = world
    cap = env.process(max_changes=7)
    app = apply_process(env, batch=3, wait=0.2)
    stop = threading.Event()
    failures: list = []

    def run(process) -> None:
        try:
            process.run(stop)
        except Exception as e:   # noqa: BLE001 (reported below)
            failures.append(e)
    threads = [threading.Thread(target=run, args=(p,)) for p in (cap, app)]
    for t in threads:
        t.start()
    try:
        for i in range(40):
            env.sql(f"INSERT INTO {env.src}.t VALUES ({2 * i}, 'a')",
                    f"INSERT INTO {env.src}.t VALUES ({2 * i + 1}, 'a')",
                    f"UPDATE {env.src}.t SET v = 'b' WHERE id = {2 * i}")
        want = sorted((2 * i, "b") for i in range(40)) + [(2 * i + 1, "a") for i in range(40)]
        deadline = time.monotonic() + 60
        while rows(env) != sorted(want) and time.monotonic() < deadline and not failures:
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join(30)
    assert not failures
    assert rows(env) == sorted(want) and errors(env) == 0


def test_the_apply_waits_for_the_rest_of_a_transaction_being_staged(world, monkeypatch):
    """The apply reads while the capture has staged only the first LCR of a transaction:
    it waits for the rest and applies the transaction whole."""
    env = world
    app, got, reader = read_while_staging(env, monkeypatch)
    env.process().catch_up()
    reader.join(30)
    assert got == [3] and rows(env) == [(0, "a"), (1, "a"), (2, "a")]


def read_while_staging(env, monkeypatch, then: Exception | None = None):
    """A transaction of three LCRs whose staging stops after the first for 0.3 s while an
    apply process runs a batch in a thread (and then raises ``then``, if given): the apply
    process, the batch's outcome (a list, once the thread ends) and the thread."""
    env.sql(*(f"INSERT INTO {env.src}.t VALUES ({i}, 'a')" for i in range(3)))
    app = apply_process(env)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(app.run_batch(wait=0)))
    real = Queue.enqone

    def enqone(self, m):
        out = real(self, m)
        if self.stages_captured_lcrs and not reader.is_alive() and not got:
            reader.start()          # the apply looks now: one LCR of three is staged
            time.sleep(0.3)
            if then is not None:
                raise then
        return out
    monkeypatch.setattr(Queue, "enqone", enqone)
    return app, got, reader


def test_the_host_runs_the_capture_and_its_apply_on_the_buffered_queue(world):
    """``sluice run``'s host runs both processes in its process: the changes reach the
    target through the buffered queue, and the capture's slot follows the apply."""
    env = world
    with Host(functools.partial(sluice.connect, env.dsn)) as host:
        wait_for(lambda: sorted(host.running()) == [("APPLY", CONSUMER), ("CAPTURE", "CAP")], 10)
        for i in range(5):
            env.sql(f"INSERT INTO {env.src}.t VALUES ({i}, 'h')")
        wait_for(lambda: len(rows(env)) == 5, 30)
        wait_for(lambda: env.view("SELECT APPLIED_MESSAGE_NUMBER FROM DBA_APPLY_PROGRESS"), 10)
        last = env.view("SELECT APPLIED_MESSAGE_NUMBER FROM DBA_APPLY_PROGRESS")[0]["APPLIED_MESSAGE_NUMBER"]
        wait_for(lambda: (applied_scn(env) or 0) >= last, 10)     # the slot moved past it
    assert rows(env) == [(i, "h") for i in range(5)] and errors(env) == 0
    assert env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT")[0]["N"] == 0


def test_a_transaction_whose_staging_failed_is_given_back_and_comes_again_whole(world, monkeypatch):
    """The capture fails while staging a transaction the apply has begun to read: the apply
    gives back what it took (applies none of it); the capture started again stages the
    transaction again and the apply applies it whole."""
    env = world
    real = Queue.enqone
    app, got, reader = read_while_staging(env, monkeypatch, DatabaseError("ORA-03113: end-of-file "
                                                                          "on communication channel"))
    close = BufferedStaging.close

    def slow_close(self):           # the apply looks again before the capture has left
        time.sleep(0.2)
        close(self)
    monkeypatch.setattr(BufferedStaging, "close", slow_close)
    with pytest.raises(DatabaseError):
        env.process().catch_up()
    reader.join(30)
    monkeypatch.setattr(Queue, "enqone", real)
    assert got == [0] and rows(env) == []
    env.conn.capture_adm.start_capture(capture_name="CAP")
    cap = env.process()
    cap.catch_up()
    assert app.drain() == 3 and rows(env) == [(0, "a"), (1, "a"), (2, "a")]
    cap.run_batch()
    assert applied_scn(env) >= env.view("SELECT LAST_ENQUEUED_SCN FROM DBA_CAPTURE")[0]["LAST_ENQUEUED_SCN"]


def test_the_rest_staged_between_a_look_and_the_capture_s_answer_is_read(world, monkeypatch):
    """The apply finds memory dry after the first LCR of a transaction; before it asks
    whether the capture has staged the whole transaction, the capture stages the other two
    and seals its batch.  The answer is yes — and the apply looks again before it ends the
    batch, so it applies the transaction whole (not its first LCR alone, the rest later as
    another transaction the target's record would then skip)."""
    env = world
    env.sql(*(f"INSERT INTO {env.src}.t VALUES ({i}, 'a')" for i in range(3)))
    app = apply_process(env)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(app.run_batch(wait=0)))
    asked, sealed = threading.Event(), threading.Event()
    enqone, stage, complete = Queue.enqone, BufferedStaging.stage, BufferedStaging.transaction_complete

    def first_then_wait(self, m):
        out = enqone(self, m)
        if self.stages_captured_lcrs and not reader.is_alive() and not got:
            reader.start()                  # one LCR of three staged: the apply reads …
            asked.wait(30)                  # … until it finds memory dry and is about to ask
        return out

    def staged_then_seal(self, *a, **k):
        out = stage(self, *a, **k)
        sealed.set()
        return out

    def answer_late(self, *a, **k):
        if not asked.is_set():
            asked.set()                     # the capture stages the rest now …
            sealed.wait(30)                 # … and seals its batch before the answer
        return complete(self, *a, **k)
    monkeypatch.setattr(Queue, "enqone", first_then_wait)
    monkeypatch.setattr(BufferedStaging, "stage", staged_then_seal)
    monkeypatch.setattr(BufferedStaging, "transaction_complete", answer_late)
    env.process().catch_up()
    reader.join(30)
    assert got == [3] and rows(env) == [(0, "a"), (1, "a"), (2, "a")]
