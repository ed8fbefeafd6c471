"""Users and privileges of Streams clients (seed 001 "Secure Queues and Oracle Streams
Clients"): the apply_user is the user who runs the apply process; creating the process
makes it a secure queue user of the queue through an AQ agent named like the process;
what is revoked from it (DEQUEUE, the agent's DISABLE_DB_ACCESS) stops the running
process before it takes another message, what is granted back lets a restarted one go on;
a changed apply_user is the one whose rights count, the old one stays a secure queue user."""

from __future__ import annotations

import contextlib
import threading

import pytest

import sluice
from sluice.streams.apply import ApplyProcess
from tests.security.conftest import create_user
from tests.streams.applykit import SOURCE_DB, lcr, procedures, target  # noqa: F401  (fixture)
from tests.streams.capturekit import env  # noqa: F401  (fixture)

APPLY = "SEC_APPLY"


def agent_privs(conn) -> list[tuple]:
    return sorted(conn.query("SELECT agent_name, db_username FROM DBA_AQ_AGENT_PRIVS", None)[1])


@pytest.fixture
def applied(conn):
    """An apply process of the secure queue SQ (SET_UP_QUEUE) run by APUSER, a user with
    CREATE SESSION only; its message handler, APUSER's own, records what it gets."""
    got: list = []
    sluice.register_function("apuser.on_message", got.append)
    create_user(conn, "APUSER")
    conn.streams_adm.set_up_queue(queue_table="SQT", queue_name="SQ")
    conn.apply_adm.create_apply(queue_name="SQ", apply_name=APPLY, apply_user="APUSER",
                                message_handler="apuser.on_message")
    return got


def send(conn, n: int) -> None:
    conn.queue("SQ").enqone(conn.msgproperties(payload={"n": n}))
    conn.commit()


@pytest.fixture
def process(conn):
    """Start the apply process as DBA_APPLY defines it, on a session of its own."""
    with contextlib.ExitStack() as started:
        def start() -> ApplyProcess:
            p = ApplyProcess.from_catalog(sluice.connect(conn.dsn), APPLY)
            started.callback(p.conn.close)
            started.callback(p.stop)        # last in, first out: stopped, then closed
            return p
        yield start


def restarted(conn, process) -> ApplyProcess:
    """START_APPLY, then a new run of the process drained: it must not abort again."""
    conn.apply_adm.start_apply(apply_name=APPLY)
    again = process()
    again.drain()
    assert again.state != "ABORTED", again.error
    return again


def aborted(p: ApplyProcess) -> sluice.DatabaseError:
    """Run the apply process as the host does until it aborts: its error, raised (DBA_APPLY
    shows it ABORTED).  Stopped after 10 s should it not: without the check it would run on."""
    stop = threading.Event()
    deadline = threading.Timer(10, stop.set)
    deadline.start()
    try:
        with pytest.raises(sluice.DatabaseError) as e:
            p.run(stop)
    finally:
        deadline.cancel()
    return e.value


def test_create_apply_makes_the_apply_user_a_secure_queue_user(conn, applied, process):
    """"an apply process is configured to dequeue from its secure queue automatically …
    the Oracle Streams AQ agent has the same name as the Oracle Streams client": APUSER
    needs nothing more (no EXECUTE on DBMS_AQ: the process dequeues by itself)."""
    assert agent_privs(conn) == [(APPLY, "APUSER")]
    send(conn, 1)
    p = process()
    p.drain()
    assert p.state != "ABORTED", p.error
    assert applied == [{"n": 1}]


@pytest.mark.parametrize("take_away, code", [
    (lambda c: c.aqadm.revoke_queue_privilege(privilege="DEQUEUE", queue_name="SQ", grantee="APUSER"), 1031),
    (lambda c: c.aqadm.disable_db_access(agent_name=APPLY, db_username="APUSER"), 24093),
], ids=["revoke-dequeue", "disable-db-access"])
def test_what_is_taken_from_the_apply_user_stops_the_running_process(conn, applied, process, take_away, code):
    """The running process stops (ABORTED in DBA_APPLY, with the error) before it takes the
    next message, which stays in the queue; granted back, a restarted process applies it.
    It used to go on applying as if nothing had changed (it runs on the host's session)."""
    send(conn, 1)
    p = process()
    p.drain()
    take_away(conn)
    send(conn, 2)
    assert aborted(p).code == code
    assert applied == [{"n": 1}]
    status, error = conn.query("SELECT status, error_number FROM DBA_APPLY WHERE apply_name = :n",
                               {"n": APPLY})[1][0]
    assert (status, error) == ("ABORTED", code)
    conn.aqadm.grant_queue_privilege(privilege="DEQUEUE", queue_name="SQ", grantee="APUSER")
    conn.aqadm.enable_db_access(agent_name=APPLY, db_username="APUSER")
    restarted(conn, process)
    assert applied == [{"n": 1}, {"n": 2}]


def test_a_new_apply_user_is_the_one_whose_rights_count(conn, applied, process):
    """"If you change … the apply_user …, then the specified … apply_user is configured as a
    secure queue user of the queue … However, the old … apply user remains configured as a
    secure queue user of the queue" — and the running process follows ALTER_APPLY."""
    create_user(conn, "APUSER2", "EXECUTE ON apuser.on_message")   # it runs APUSER's handler
    send(conn, 1)
    p = process()
    p.drain()
    conn.apply_adm.alter_apply(apply_name=APPLY, apply_user="APUSER2")
    assert agent_privs(conn) == [(APPLY, "APUSER"), (APPLY, "APUSER2")]
    conn.aqadm.revoke_queue_privilege(privilege="DEQUEUE", queue_name="SQ", grantee="APUSER")
    send(conn, 2)
    p.drain()
    assert p.state != "ABORTED", p.error
    assert applied == [{"n": 1}, {"n": 2}]
    conn.aqadm.disable_db_access(agent_name=APPLY, db_username="APUSER2")
    send(conn, 3)
    p.drain()
    assert p.state == "ABORTED" and p.error.code == 24093
    assert applied == [{"n": 1}, {"n": 2}]


def test_a_dropped_apply_user_stops_the_process(conn, applied, process):
    send(conn, 1)
    p = process()
    conn.cursor().execute("DROP USER APUSER CASCADE")
    p.drain()
    assert p.state == "ABORTED" and p.error.code == 1918
    assert applied == []


def refused_by_a_foreign_handler(conn, process) -> tuple[list, str]:
    """The apply's message handler made one of another schema, on which APUSER has no
    EXECUTE; a message sent and the process run: it aborts with ORA-06550.  (What the
    handler got, the error transaction's id.)"""
    got: list = []
    sluice.register_function("client_privileges_test.on_message", got.append)
    conn.apply_adm.alter_apply(apply_name=APPLY, message_handler="client_privileges_test.on_message")
    send(conn, 1)
    p = process()
    p.drain()
    assert p.state == "ABORTED" and p.error.code == 6550
    assert "PLS-00201: identifier 'CLIENT_PRIVILEGES_TEST.ON_MESSAGE' must be declared" in str(p.error)
    assert got == []
    return got, conn.query("SELECT local_transaction_id FROM DBA_APPLY_ERROR", None)[1][0][0]


def test_a_message_handler_the_apply_user_may_not_execute_fails_the_transaction(conn, applied, process):
    """The message handler runs as the apply user: one of another schema, on which APUSER
    has no EXECUTE, is to it a procedure that is not there (ORA-06550, PLS-00201).  The
    transaction goes to the error queue, the handler never sees it, the process aborts;
    EXECUTE_ERROR fails the same way until EXECUTE is granted, then EXECUTE_ALL_ERRORS
    delivers it.  It used to run the handler with the host session's rights."""
    other, error = refused_by_a_foreign_handler(conn, process)
    assert applied == []
    assert conn.query("SELECT error_number FROM DBA_APPLY_ERROR WHERE apply_name = :n",
                      {"n": APPLY})[1] == [(6550,)]
    with pytest.raises(sluice.DatabaseError) as again:       # still the apply user's rights
        conn.apply_adm.execute_error(local_transaction_id=error)
    assert again.value.code == 6550 and other == []
    conn.cursor().execute("GRANT EXECUTE ON client_privileges_test.on_message TO apuser")
    assert conn.query("SELECT owner, table_name, privilege, type FROM DBA_TAB_PRIVS WHERE grantee = 'APUSER' "
                      "AND type = 'PROCEDURE'", None)[1] == [
        ("CLIENT_PRIVILEGES_TEST", "ON_MESSAGE", "EXECUTE", "PROCEDURE")]
    conn.apply_adm.execute_all_errors(apply_name=APPLY)
    assert other == [{"n": 1}]
    assert conn.query("SELECT count(*) FROM DBA_APPLY_ERROR", None)[1] == [(0,)]


def test_execute_error_as_the_current_user(conn, applied, process):
    """EXECUTE_ERROR(execute_as_user => TRUE) re-executes "in the security context of the
    current user": the administrator's rights, not APUSER's, run the handler."""
    other, error = refused_by_a_foreign_handler(conn, process)
    conn.apply_adm.execute_error(local_transaction_id=error, execute_as_user=True)
    assert other == [{"n": 1}]


def an_error_and_a_fix(conn, process) -> str:
    """An error transaction of the apply (its own message handler, APUSER's, back in place)
    and CLIENT_PRIVILEGES_TEST.FIX, a user procedure for EXECUTE_ERROR of another schema on
    which APUSER has no EXECUTE; the error's id."""
    _other, error = refused_by_a_foreign_handler(conn, process)
    conn.apply_adm.alter_apply(apply_name=APPLY, message_handler="apuser.on_message")
    sluice.register_function("client_privileges_test.fix", lambda m: {**m, "fixed": True})
    return error


ERROR_ROW = "SELECT * FROM DBA_APPLY_ERROR WHERE apply_name = :n"


def test_execute_errors_user_procedure_runs_with_the_apply_users_rights(conn, applied, process):
    """EXECUTE_ERROR's user_procedure runs as its handlers do: without execute_as_user "in
    the security context of the original receiver of the transaction", the apply user.
    APUSER may not execute FIX: to it FIX is not there (ORA-06550, PLS-00201), the error
    transaction stays as it was, nothing applied -- though the administrator calling it
    may execute FIX; EXECUTE granted to APUSER, it fixes and applies the transaction.  It
    used to run with the calling session's rights."""
    error = an_error_and_a_fix(conn, process)
    before = conn.query(ERROR_ROW, {"n": APPLY})[1]
    with pytest.raises(sluice.DatabaseError) as refused:
        conn.apply_adm.execute_error(local_transaction_id=error, user_procedure="client_privileges_test.fix")
    assert refused.value.code == 6550
    assert "PLS-00201: identifier 'CLIENT_PRIVILEGES_TEST.FIX' must be declared" in str(refused.value)
    conn.rollback()
    assert conn.query(ERROR_ROW, {"n": APPLY})[1] == before and applied == []
    conn.cursor().execute("GRANT EXECUTE ON client_privileges_test.fix TO apuser")
    conn.apply_adm.execute_error(local_transaction_id=error, user_procedure="client_privileges_test.fix")
    assert applied == [{"n": 1, "fixed": True}]
    assert conn.query(ERROR_ROW, {"n": APPLY})[1] == []


def test_execute_errors_user_procedure_as_the_current_user(conn, dsn, applied, process):
    """With execute_as_user => TRUE the user_procedure runs "in the security context of the
    current user", as the handlers then do: STRMADM, a Streams administrator who is no
    superuser, may not execute FIX though APUSER may -- ORA-06550, the error transaction
    as it was; EXECUTE granted to STRMADM, the call fixes and applies it."""
    from tests.security.conftest import login

    error = an_error_and_a_fix(conn, process)
    create_user(conn, "STRMADM", "EXECUTE ON DBMS_AQADM", "MANAGE ANY QUEUE", "EXECUTE ON apuser.on_message")
    conn.cursor().execute("GRANT EXECUTE ON client_privileges_test.fix TO apuser")
    before = conn.query(ERROR_ROW, {"n": APPLY})[1]
    admin = login(dsn, "STRMADM")
    try:
        with pytest.raises(sluice.DatabaseError) as refused:
            admin.apply_adm.execute_error(local_transaction_id=error, execute_as_user=True,
                                          user_procedure="client_privileges_test.fix")
        assert refused.value.code == 6550 and "'CLIENT_PRIVILEGES_TEST.FIX'" in str(refused.value)
        admin.rollback()
        assert conn.query(ERROR_ROW, {"n": APPLY})[1] == before and applied == []
        conn.cursor().execute("GRANT EXECUTE ON client_privileges_test.fix TO strmadm")
        admin.apply_adm.execute_error(local_transaction_id=error, execute_as_user=True,
                                      user_procedure="client_privileges_test.fix")
        assert applied == [{"n": 1, "fixed": True}]
        assert conn.query(ERROR_ROW, {"n": APPLY})[1] == []
    finally:
        admin.close()


def test_dropping_the_apply_keeps_its_secure_queue_users(conn, applied):
    """"If you drop … an apply process …, then the users who were configured as secure queue
    users for these Oracle Streams clients remain secure queue users of the queue"."""
    conn.apply_adm.drop_apply(apply_name=APPLY)
    assert agent_privs(conn) == [(APPLY, "APUSER")]


# -- the capture_user ------------------------------------------------------------------
TAKE_ENQUEUE = [
    (lambda c: c.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="CAPUSER"), 1031),
    (lambda c: c.aqadm.disable_db_access(agent_name="CAP", db_username="CAPUSER"), 24093),
]


@pytest.mark.parametrize("take_away, code", TAKE_ENQUEUE, ids=["revoke-enqueue", "disable-db-access"])
def test_what_is_taken_from_the_capture_user_stops_the_running_capture(env, take_away, code):
    """"a capture process is configured to enqueue into its secure queue automatically" (the
    agent CAP mapped to the capture_user, ENQUEUE granted); once that is taken away the
    running capture aborts (ABORTED in DBA_CAPTURE) before it enqueues the next change, and
    a restarted one refuses to start.  It used to go on enqueuing."""
    create_user(env.conn, "CAPUSER")
    s = env.src
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"), capture_user="CAPUSER")
    adm = env.conn.rule_adm           # it evaluates the administrator's rule set
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "RS", "CAPUSER")
    assert ("CAP", "CAPUSER") in agent_privs(env.conn)
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.t VALUES (1)")
    proc = env.process()
    proc.catch_up()
    take_away(env.conn)
    env.sql(f"INSERT INTO {s}.t VALUES (2)")
    with pytest.raises(sluice.DatabaseError) as e:
        proc.catch_up()
    assert e.value.code == code
    assert env.view("SELECT STATUS, ERROR_NUMBER FROM DBA_CAPTURE") == [{"STATUS": "ABORTED", "ERROR_NUMBER": code}]
    assert [x.get_value("NEW", "ID").value for x in env.dequeue_all()] == [1]
    env.conn.capture_adm.start_capture(capture_name="CAP")
    with pytest.raises(sluice.DatabaseError) as again:
        env.process().start()
    assert again.value.code == code


# -- apply handlers run with the apply user's rights -------------------------------------
@pytest.mark.parametrize("kind", ["dml", "error", "ddl", "precommit"])
def test_apply_handlers_run_with_the_apply_users_rights(conn, target, kind):
    """A DML handler, a DML error handler, the DDL handler and the precommit handler are
    procedures the apply user runs (DBMS_APPLY_ADM: the apply user needs EXECUTE on them):
    one of another schema that APUSER may not execute fails the whole transaction with
    ORA-06550 (PLS-00201) before it runs, nothing of the transaction applied; granted
    EXECUTE, the same transaction applies.  They used to run with the host session's rights."""
    from sluice.streams import DDLLCR
    from sluice.streams.apply.definition import ApplyDefinition, engine_for
    from sluice.streams.apply.engine import ApplyError, Item, SourceTxn

    create_user(conn, "APUSER")
    o = target.owner
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(40))")
    p = procedures(conn)
    p.set_schema_instantiation_scn(o, SOURCE_DB, 0, apply_database_link=target.link)
    seen: list = []

    def handler(*args):
        seen.append(kind)
        if kind == "dml":
            args[0].execute(True)
    sluice.register_function("client_rights_test.handler", handler)
    name = "client_rights_test.handler"
    if kind in ("dml", "error"):
        p.set_dml_handler(f"{o}.EMP", "TABLE", "INSERT" if kind == "dml" else "DELETE", kind == "error",
                          name, apply_database_link=target.link)
    d = ApplyDefinition("APPR", conn.username, "Q", apply_user="APUSER",
                        ddl_handler=name if kind == "ddl" else None,
                        precommit_handler=name if kind == "precommit" else None)
    changes = [lcr("INSERT", o, "emp", 5, new={"ID": 1, "NAME": "a"})]
    if kind == "error":       # a DELETE of a row that is not there: the error handler's
        changes.append(lcr("DELETE", o, "emp", 5, old={"ID": 77}))
    if kind == "ddl":
        changes.append(DDLLCR.construct(SOURCE_DB, "ALTER TABLE", o, "EMP", "TABLE", "ALTER TABLE emp ADD x int",
                                        None, o, o, "EMP", None, "1.1.1", 5, commit_scn=5))
    txn = SourceTxn([Item(x) for x in changes], "CAPTURED", SOURCE_DB, 5, "1.1.1")

    def apply() -> None:
        engine = engine_for(conn, "APPR", target.link, b"\x00", d)
        try:
            engine.apply(txn)
        finally:
            engine.target.close()
    with pytest.raises(ApplyError) as refused:
        apply()
    assert refused.value.error.code == 6550
    assert "'CLIENT_RIGHTS_TEST.HANDLER' must be declared" in str(refused.value.error)
    assert seen == [] and target.rows("emp") == []
    conn.cursor().execute("GRANT EXECUTE ON client_rights_test.handler TO apuser")
    apply()
    assert seen == [kind] and [r[:2] for r in target.rows("emp")] == [(1, "a")]


@pytest.mark.parametrize("handler, routine", [
    ("client_rights_own", ("SLUICE", "CLIENT_RIGHTS_OWN")),          # the grantor's schema
    ('"RightsTest"."onMessage"', ("RightsTest", "onMessage")),        # quoted: the case kept
], ids=["unqualified", "quoted"])
def test_execute_granted_on_the_handler_as_it_is_named(conn, applied, process, handler, routine):
    """GRANT EXECUTE ON names a routine as Oracle resolves it: unqualified, in the grantor's
    schema; quoted, with its case.  An unqualified name was taken for a SYS package
    (DBA_TAB_PRIVS owner SYS), so the apply user still could not run SLUICE's handler; a
    quoted one was ORA-00990."""
    got: list = []
    sluice.register_function(handler, got.append)
    conn.apply_adm.alter_apply(apply_name=APPLY, message_handler=handler)
    conn.cursor().execute(f"GRANT EXECUTE ON {handler} TO apuser")
    assert conn.query("SELECT owner, table_name FROM DBA_TAB_PRIVS WHERE grantee = 'APUSER' "
                      "AND type = 'PROCEDURE'", None)[1] == [routine]
    send(conn, 1)
    p = process()
    p.drain()
    assert p.state != "ABORTED", p.error
    assert got == [{"n": 1}]
