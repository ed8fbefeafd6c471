"""A target COMMIT the target refuses (issue 15 §1 "Conflicts": an unresolved error moves the
whole transaction to the error queue, the apply goes on or stops with disable_on_error,
EXECUTE_ERROR re-applies it once the user has fixed the cause).

The error is a deferred constraint: a DEFERRABLE INITIALLY DEFERRED foreign key (both
targets; SQLite checks it at COMMIT, the apply's connection has foreign_keys on) or unique
constraint (PostgreSQL).  What an Oracle administrator sees, as Oracle reports a constraint
violated at COMMIT: DBA_APPLY_ERROR.ERROR_NUMBER 2091 and ERROR_MESSAGE Oracle's error
stack, "ORA-02091: transaction rolled back" then the cause ("ORA-02291: integrity
constraint (…) violated - parent key not found", ORA-02292 for a parent deleted under its
children, ORA-00001 for a unique constraint); MESSAGE_NUMBER the transaction's last message
(the commit follows it), MESSAGE_COUNT all of them.

Behaviours, each a test below (PostgreSQL and SQLite targets unless said):

* disable_on_error = N: the transaction goes to the error queue, the ones after it are
  applied exactly once — on PostgreSQL the next one's statements rode behind the refused
  COMMIT in one pipeline and never ran: it is sent again, not lost, not counted twice (a
  sequence its row draws from is drawn once); DBA_APPLY_ERROR and the counters say so;
  EXECUTE_ERROR fails again (ORA-02091) until the cause is fixed, then applies it;
* disable_on_error = Y: the apply is ABORTED with that error (DBA_APPLY), nothing after the
  transaction is applied, the rest stays in the queue and is applied once after a restart;
* GROUPTRANSOPS > 1: a grouped target transaction whose COMMIT is refused is split: only the
  guilty source transaction goes to the error queue;
* parallelism > 1 (PostgreSQL: apply server processes): the same;
* combined capture and apply (the capture hands LCRs to ``apply_handed``): the same, and
  with disable_on_error the transactions after it are handed back to be staged;
* the batch's store commit lost after the target's commits (a crash): the restarted apply
  records the error once and applies nothing twice;
* the engine: ``applied`` moves only once a COMMIT is known to have succeeded.
"""

from __future__ import annotations

import pytest

import sluice
from sluice.streams import RowLCR
from sluice.streams.apply.definition import engine_for
from sluice.streams.apply.engine import ApplyError, CommitFailed, Item, SourceTxn
from tests.conftest import pg_admin
from tests.streams.applykit import SOURCE_DB, procedures, target  # noqa: F401
from tests.streams.test_apply_process import APPLY, enqueue, errors, world  # noqa: F401


def tables(target):
    """emp; bonus with a deferred foreign key to emp; counted, whose N a sequence fills on
    PostgreSQL (drawn once per row ever inserted: a row inserted and rolled back draws too)."""
    o = target.owner
    fk = f"REFERENCES {target.table('emp')} (id) DEFERRABLE INITIALLY DEFERRED"
    if target.kind == "postgresql":
        target.sql(f"CREATE SEQUENCE {o.lower()}.drawn",
                   f"CREATE TABLE {target.table('bonus')} (id integer PRIMARY KEY, emp integer {fk})",
                   f"CREATE TABLE {target.table('counted')} (id integer PRIMARY KEY, "
                   f"n bigint DEFAULT nextval('{o.lower()}.drawn'))")
    else:
        target.sql(f"CREATE TABLE {target.table('bonus')} (id integer PRIMARY KEY, emp integer {fk})",
                   f"CREATE TABLE {target.table('counted')} (id integer PRIMARY KEY, n integer DEFAULT 1)")


def captured(owner, scn, table, rows, cmd="INSERT"):
    return [RowLCR.construct(SOURCE_DB, cmd, owner, table, None, f"1.{scn}.1", scn,
                             r if cmd == "DELETE" else None, None if cmd == "DELETE" else r, commit_scn=scn)
            for r in rows]


def four(target):
    """Four source transactions: 101 fine, 102 breaks the deferred foreign key (fails at
    COMMIT), 103 (two rows) and 104 fine."""
    o = target.owner
    return [captured(o, 101, "EMP", [{"ID": 1, "NAME": "a"}]),
            captured(o, 102, "BONUS", [{"ID": 1, "EMP": 99}]),
            captured(o, 103, "COUNTED", [{"ID": 1}]) + captured(o, 103, "EMP", [{"ID": 3, "NAME": "c"}]),
            captured(o, 104, "EMP", [{"ID": 4, "NAME": "d"}])]


def setup(conn, target):
    tables(target)
    for lcrs in four(target):
        enqueue(conn, "APPLY_Q", *lcrs)
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0, apply_database_link=target.link)


def drawn(target) -> int | None:
    """How many values the sequence gave (PostgreSQL), None on SQLite."""
    if target.kind != "postgresql":
        return None
    with pg_admin() as pg:
        value, called = pg.execute(f"SELECT last_value, is_called FROM {target.owner.lower()}.drawn").fetchone()
    return value if called else 0


def ready(conn) -> int:
    return conn.query("SELECT COUNT(*) FROM AQ$APPLY_QT WHERE MSG_STATE = 'READY'", None)[1][0][0]


def check_refused(err, scn=102, count=1):
    """The error queue's row for a transaction whose COMMIT the deferred foreign key refused."""
    assert (err["SOURCE_COMMIT_SCN"], err["ERROR_NUMBER"], err["MESSAGE_COUNT"], err["MESSAGE_NUMBER"]) == \
        (scn, 2091, count, count)
    first, cause = err["ERROR_MESSAGE"].split("\n", 1)
    assert first == "ORA-02091: transaction rolled back"
    assert cause.startswith("ORA-02291: integrity constraint (") and "parent key not found" in cause


def test_refused_commit_goes_to_the_error_queue_and_apply_goes_on(conn, target, world):
    """disable_on_error = N: 102 in the error queue (ORA-02091 / ORA-02291), 101, 103 and 104
    applied once (103, behind 102's COMMIT, sent again: its sequence drawn once), the queue
    empty, the counters right; EXECUTE_ERROR fails again until the parent row is there."""
    setup(conn, target)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "N"})
    assert proc.drain() == 5
    assert proc.state != "ABORTED"
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")]
    assert target.rows("bonus") == [] and target.rows("counted") == [(1, 1)]
    assert drawn(target) in (None, 1)                                 # 103's row inserted once
    (err,) = errors(conn)
    check_refused(err)
    assert ready(conn) == 0
    assert conn.query("SELECT TOTAL_APPLIED, TOTAL_ERRORS FROM V$STREAMS_APPLY_COORDINATOR", None)[1] == [(3, 1)]
    assert proc.engine.applied == {SOURCE_DB: 104}
    proc.stop()
    with pytest.raises(sluice.DatabaseError) as e:                    # the cause not fixed yet
        procedures(conn).execute_error(err["LOCAL_TRANSACTION_ID"])
    assert e.value.code == 2091
    (again,) = errors(conn)
    assert again["ERROR_NUMBER"] == 2091 and target.rows("bonus") == []
    target.sql(f"INSERT INTO {target.table('emp')} VALUES (99, 'fixed')")
    procedures(conn).execute_error(err["LOCAL_TRANSACTION_ID"])
    assert target.rows("bonus") == [(1, 99)] and errors(conn) == []


def test_refused_commit_with_disable_on_error_aborts(conn, target, world):
    """disable_on_error = Y: ABORTED with ORA-02091 (DBA_APPLY too), nothing after 102 applied
    (103 never ran: nothing drawn); 102 has left the queue for the error queue, the rest is
    still in the queue.  Oracle's way out — fix the cause, EXECUTE_ERROR, start the apply
    again — applies every transaction once (102 is not met again in the queue)."""
    setup(conn, target)
    conn.apply_adm.create_apply(queue_name="APPLY_Q", apply_name=APPLY, apply_captured=True,
                                apply_database_link=target.link)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "Y"})
    proc.drain()
    assert proc.state == "ABORTED" and proc.error.code == 2091
    proc._record_abort()                     # what run() does when it aborts (the host's path)
    status = conn.query("SELECT STATUS, ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY", None)[1]
    assert status[0][0] == "ABORTED" and int(status[0][1]) == 2091 and "ORA-02291" in status[0][2]
    assert target.rows("emp") == [(1, "a")] and target.rows("counted") == [] and target.rows("bonus") == []
    assert drawn(target) in (None, 0)
    (err,) = errors(conn)
    check_refused(err)
    # the batch's dequeue rolled back but for 102: 101 comes again (SLUICE_APPLY_DONE skips
    # it), 103 and 104 are applied
    assert ready(conn) == 4
    target.sql(f"INSERT INTO {target.table('emp')} VALUES (99, 'fixed')")
    procedures(conn).execute_error(err["LOCAL_TRANSACTION_ID"])
    assert target.rows("bonus") == [(1, 99)]
    again = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "Y"})
    assert again.drain() == 4 and again.state != "ABORTED"
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d"), (99, "fixed")]
    assert target.rows("bonus") == [(1, 99)] and target.rows("counted") == [(1, 1)]
    assert drawn(target) in (None, 1)
    assert errors(conn) == [] and ready(conn) == 0


def test_refused_grouped_commit_is_split(conn, target, world):
    """GROUPTRANSOPS > 1: the four share one target transaction; its COMMIT refused, they are
    applied one at a time and only 102 goes to the error queue."""
    setup(conn, target)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "N", "GROUPTRANSOPS": "100"})
    groups = []
    original = proc.engine.apply_group
    proc.engine.apply_group = lambda txns: groups.append(len(txns)) or original(txns)
    assert proc.drain() == 5
    assert groups == [4]                     # the group was tried, and turned down
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")]
    # (the group's statements ran before its COMMIT was refused: the sequence was drawn then)
    assert [r[0] for r in target.rows("counted")] == [1] and target.rows("bonus") == []
    (err,) = errors(conn)
    check_refused(err)
    assert ready(conn) == 0


def test_refused_commit_with_apply_servers(conn, target, world):
    """parallelism 2 (apply server processes; PostgreSQL only: an SQLite target is applied
    serially): 102 in the error queue, the others applied once."""
    if target.kind != "postgresql":
        return
    setup(conn, target)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "N", "PARALLELISM": "2"})
    assert proc.parallel is not None
    assert proc.drain() == 5
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")]
    assert target.rows("counted") == [(1, 1)] and target.rows("bonus") == []
    (err,) = errors(conn)
    check_refused(err)
    assert ready(conn) == 0


def test_refused_commit_with_apply_servers_stops(conn, target, world):
    """parallelism 2 with disable_on_error = Y (commit_serialization FULL): 103 and 104, handed
    to the servers before 102's COMMIT was refused, are rolled back at their turn to commit —
    nothing after 102 is applied, as serially; a restart applies them once."""
    if target.kind != "postgresql":
        return
    setup(conn, target)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "Y", "PARALLELISM": "2"})
    proc.drain()
    assert proc.state == "ABORTED" and proc.error.code == 2091
    assert target.rows("emp") == [(1, "a")] and target.rows("counted") == [] and target.rows("bonus") == []
    (err,) = errors(conn)
    check_refused(err)
    proc.stop()
    again = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "Y", "PARALLELISM": "2"})
    assert again.drain() == 4 and again.state != "ABORTED"
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")] and [r[0] for r in target.rows("counted")] == [1]


def test_refused_commit_with_apply_server_threads_stops(conn, target):
    """The in-process servers (threads: an apply process with a precommit handler) alike:
    102's COMMIT refused, 103 and 104 not committed (None: not attempted)."""
    if target.kind != "postgresql":
        return
    from sluice.streams.apply.parallel import ParallelApply
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40))")
    tables(target)
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0, apply_database_link=target.link)
    servers = ParallelApply(lambda i: engine_for(conn, "APP1", target.link, b"\x00", server_id=i), 2)
    try:
        t101, t102, t103, t104 = (txn(x) for x in four(target))
        outcome = servers.apply_all([t101, t102, t103, t104], stop_on_error=True)
        assert outcome[0] is True and outcome[1].error.code == 2091 and outcome[2:] == [None, None]
        assert target.rows("emp") == [(1, "a")] and target.rows("counted") == []
        outcome = servers.apply_all([t101, t103, t104], stop_on_error=True)
        assert outcome == [False, True, True]
        assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")]
    finally:
        servers.close()


@pytest.mark.parametrize("stop", ["N", "Y"])
def test_refused_commit_handed_over_by_the_capture(conn, target, world, stop):
    """Combined capture and apply at one database: the capture hands the LCRs to the apply
    (``apply_handed``) and commits the apply's store work.  102 goes to the error queue; with
    disable_on_error the transactions after it are handed back (the capture stages them)."""
    tables(target)
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0, apply_database_link=target.link)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": stop})
    held, done = proc.apply_handed([x for lcrs in four(target) for x in lcrs])
    proc.conn.commit()                       # the capture's commit
    (err,) = errors(conn)
    check_refused(err)
    if stop == "N":
        assert held == [] and sorted(done) == [f"{SOURCE_DB}|101", f"{SOURCE_DB}|103", f"{SOURCE_DB}|104"]
        assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")] and target.rows("counted") == [(1, 1)]
    else:
        assert proc.state == "ABORTED"
        assert [h[2] for h in held] == [103, 104]
        assert target.rows("emp") == [(1, "a")] and target.rows("counted") == []
    assert drawn(target) in (None, 1 if stop == "N" else 0)


def test_refused_commit_then_the_store_commit_lost(conn, target, world):
    """Killed after the target's commits, before the batch's store commit (here: that commit
    fails): nothing of the batch is kept in the store — the error row neither — and the
    restarted apply records 102 once and applies nothing twice (SLUICE_APPLY_DONE)."""
    setup(conn, target)
    proc = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "N"})

    def crash():
        raise sluice.DatabaseError("ORA-03113: end-of-file on communication channel", 3113)
    proc.conn.commit = crash
    with pytest.raises(sluice.DatabaseError):
        proc.run_batch(wait=0)
    proc.conn.rollback()
    assert errors(conn) == [] and ready(conn) == 5
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")]
    again = world(apply_captured=True, parameters={"DISABLE_ON_ERROR": "N"})
    assert again.drain() == 5
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")] and target.rows("counted") == [(1, 1)]
    (err,) = errors(conn)
    check_refused(err)
    assert ready(conn) == 0


# -- the engine ------------------------------------------------------------------------------------
@pytest.fixture
def engine(conn, target):
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40))")
    tables(target)
    procedures(conn).set_schema_instantiation_scn(target.owner, SOURCE_DB, 0, apply_database_link=target.link)
    e = engine_for(conn, "APP1", target.link, b"\x00")
    yield e
    e.target.close()


def txn(lcrs):
    first = lcrs[0]
    return SourceTxn([Item(x) for x in lcrs], "CAPTURED", SOURCE_DB, first.get_commit_scn(),
                     first.get_transaction_id())


def test_engine_refused_commit(engine, target):
    """apply(): a refused COMMIT is the transaction's ApplyError (ORA-02091, at its last
    message).  With commit_later it is found by the next apply — CommitFailed naming the
    earlier transaction, the next one not applied — or by settle; ``applied`` and the
    counters move only for COMMITs known to have succeeded."""
    t101, t102, t103, t104 = (txn(x) for x in four(target))
    with pytest.raises(ApplyError) as e:
        engine.apply(t102)
    assert e.value.error.code == 2091 and e.value.index == 0
    if target.kind != "postgresql":      # SQLite commits at once: its apply finds it
        assert engine.apply(t101, commit_later=True)
        with pytest.raises(ApplyError) as e:
            engine.apply(t102, commit_later=True)
        assert e.value.error.code == 2091
        assert engine.apply(t103, commit_later=True) and engine.apply(t104, commit_later=True)
        engine.settle()
        assert engine.applied == {SOURCE_DB: 104} and engine.transactions_applied == 3
        assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")] and target.rows("bonus") == []
        return
    assert engine.apply(t101, commit_later=True)
    assert engine.applied.get(SOURCE_DB) is None           # not known yet
    assert engine.apply(t102, commit_later=True)
    assert engine.applied == {SOURCE_DB: 101} and engine.transactions_applied == 1
    with pytest.raises(CommitFailed) as e:
        engine.apply(t103, commit_later=True)
    assert e.value.txn is t102 and e.value.failure.error.code == 2091
    assert "ORA-02291" in str(e.value.failure.error)
    assert engine.applied == {SOURCE_DB: 101}
    assert target.rows("counted") == [] and drawn(target) in (None, 0)
    assert engine.apply(t103, commit_later=True)           # sent again
    assert engine.apply(t102, commit_later=True)
    with pytest.raises(CommitFailed) as e:
        engine.settle()
    assert e.value.txn is t102
    assert engine.applied == {SOURCE_DB: 103} and engine.transactions_applied == 2
    assert engine.apply(t104, commit_later=True)
    engine.settle()
    assert engine.applied == {SOURCE_DB: 104} and engine.transactions_applied == 3
    assert target.rows("emp") == [(1, "a"), (3, "c"), (4, "d")] and target.rows("counted") == [(1, 1)]
    assert drawn(target) in (None, 1)


def test_engine_refused_commit_causes(engine, target):
    """PostgreSQL's deferred constraints and Oracle's cause under ORA-02091: a parent deleted
    under its children (ORA-02292), a deferred unique constraint (ORA-00001)."""
    if target.kind != "postgresql":      # SQLite defers foreign keys only, and names no cause
        return
    o = target.owner
    target.sql(f"INSERT INTO {target.table('emp')} VALUES (5, 'parent')",
               f"INSERT INTO {target.table('bonus')} VALUES (5, 5)",
               f"CREATE TABLE {target.table('uniq')} (id integer PRIMARY KEY, code integer "
               f"CONSTRAINT uniq_code UNIQUE DEFERRABLE INITIALLY DEFERRED)",
               f"INSERT INTO {target.table('uniq')} VALUES (1, 7)")
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(captured(o, 201, "EMP", [{"ID": 5, "NAME": "parent"}], cmd="DELETE")))
    first, cause = str(e.value.error).split("\n")
    assert first.startswith("ORA-02091") and cause.startswith("ORA-02292:") and "child record found" in cause
    with pytest.raises(ApplyError) as e:
        engine.apply(txn(captured(o, 202, "UNIQ", [{"ID": 2, "CODE": 7}])))
    assert e.value.error.code == 2091
    assert str(e.value.error).split("\n")[1] == f"ORA-00001: unique constraint ({o.lower()}.uniq_code) violated"
    assert target.rows("emp") == [(5, "parent")] and target.rows("uniq") == [(1, 7)]


def test_execute_error_before_the_restart_applies_once(conn, target, world):
    """Any error with disable_on_error = Y (here ORA-00001 on a queue transaction of user
    messages): the failed transaction leaves the apply queue with its error row, so fixing
    the cause, EXECUTE_ERROR and then starting the apply again applies it once (it was
    applied again by the restart, whose queue still held it)."""
    o = target.owner

    def user(new):
        return RowLCR.construct(SOURCE_DB, "INSERT", o, "EMP", None, None, None, None, new)
    for row in ({"ID": 1, "NAME": "a"}, {"ID": 1, "NAME": "dup"}, {"ID": 2, "NAME": "b"}):
        enqueue(conn, "APPLY_Q", user(row))
    proc = world()
    proc.drain()
    assert proc.state == "ABORTED" and proc.error.code == 1
    (err,) = errors(conn)
    target.sql(f"DELETE FROM {target.table('emp')} WHERE id = 1")
    procedures(conn).execute_error(err["LOCAL_TRANSACTION_ID"])
    again = world()
    again.drain()
    assert again.state != "ABORTED" and errors(conn) == []
    assert target.rows("emp") == [(1, "dup"), (2, "b")] and ready(conn) == 0
