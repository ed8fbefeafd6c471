"""The apply sink and the error queue, below Spark (issue 15's error queue, issue 16 §1
sinks).  With disable_on_error = Y the apply aborts at its first error and the micro-batch
is not committed, so a restart replays it with the failed transaction still in it (the
Python apply process takes it off the queue with its error row instead): whatever the user
does with the error before the restart -- nothing, EXECUTE_ERROR after fixing the cause,
DELETE_ERROR -- the replay applies nothing twice and nothing deleted, as the Python process
would (the sink records the failed transaction as delivered in the target).  With
disable_on_error = N a batch replayed after a crash meets EXECUTE_ERROR's own record of it.
SQLite and PostgreSQL stores and targets."""

from __future__ import annotations

import os

import pytest
from pyspark.sql import Row

import sluice
from sluice.pipeline import rows as rowmod
from sluice.pipeline import sinks
from sluice.rules.compile.typed.lcrschema import lcr_row
from tests.streams.applykit import lcr, target  # noqa: F401

APPLY = "APD"


@pytest.fixture
def site(dsn, target):  # noqa: F811
    """(store DSN, a connection to it, the target): apply APD, disable_on_error = Y, into
    emp (a key) and log (none: a second application would show as a second row); log's
    table does not exist yet -- the cause of the error the user fixes.  Both stores, both
    targets."""
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=APPLY, apply_database_link=target.link,
                                apply_captured=True)
    conn.apply_adm.set_schema_instantiation_scn(target.owner, "DBS1.NET", 0, apply_database_link=target.link)
    conn.apply_adm.set_parameter(APPLY, "disable_on_error", "Y")
    target.sql(f"CREATE TABLE {target.table('emp')} (id integer PRIMARY KEY, name varchar(20))")
    yield dsn, conn, target
    conn.close()


def _rows(txns: list[list], rules: dict[int, str] | None = None) -> list[Row]:
    """The rows the sink's task gets for these transactions (decided, in commit order);
    ``rules``: the TRUE rule of the transactions at these places (others: none)."""
    out = []
    for place, lcrs in enumerate(txns):
        for m in lcrs:
            d = dict.fromkeys(rowmod.FIELDS)
            d.update(lcr_row(m))
            d.update(msgid=os.urandom(16), seq=len(out) + 1, cscn=m.get_commit_scn(),
                     payload_type=m.oracle_type, queue="STRMADMIN.STRM_Q", rule=(rules or {}).get(place),
                     tx=f"C|{m.get_source_database_name()}|{m.get_transaction_id()}|{m.get_commit_scn()}")
            out.append(Row(**d))
    return out


def _batch(target) -> list[Row]:
    o = target.owner
    return _rows([[lcr("INSERT", o, "EMP", 11, None, {"ID": 1, "NAME": "a"}, txn="11.0.1")],
                  [lcr("INSERT", o, "LOG", 12, None, {"ID": 1, "NOTE": "once"}, txn="12.0.1")],   # fails
                  [lcr("INSERT", o, "EMP", 13, None, {"ID": 3, "NAME": "c"}, txn="13.0.1")]])


def _run(dsn: str, rows: list[Row]) -> None:
    sinks._apply_partition(sluice.connect, dsn, {}, APPLY, {}, 0, iter(rows))


def _status(conn) -> str:
    return conn.query("SELECT STATUS FROM DBA_APPLY WHERE APPLY_NAME = :a", {"a": APPLY})[1][0][0]


def _errors(conn) -> list[tuple]:
    return [tuple(r) for r in conn.query("SELECT LOCAL_TRANSACTION_ID, SOURCE_COMMIT_SCN FROM DBA_APPLY_ERROR",
                                         None)[1]]


def _aborted(dsn: str, conn, target) -> str:
    """The batch once: the apply ABORTED at transaction 12, 11 applied, 13 not; 12's id."""
    batch = _batch(target)
    with pytest.raises(sluice.DatabaseError):
        _run(dsn, batch)
    assert _status(conn) == "ABORTED"
    assert target.rows("emp") == [(1, "a")]
    (local, scn), = _errors(conn)
    assert scn == 12
    return local


@pytest.mark.parametrize("key", ["", " PRIMARY KEY"])
def test_execute_error_before_the_restart_applies_once(site, key):
    """Fix the cause, EXECUTE_ERROR, restart (the batch replayed): 12 applied once (by
    EXECUTE_ERROR, the replay skips it), 11 and 13 once -- on PostgreSQL, with a key, 12
    replayed takes the set-form path, which meets its SLUICE_APPLY_DONE record."""
    dsn, conn, target = site
    local = _aborted(dsn, conn, target)
    target.sql(f"CREATE TABLE {target.table('log')} (id integer{key}, note varchar(20))")
    conn.apply_adm.execute_error(local)
    assert target.rows("log") == [(1, "once")] and _errors(conn) == []
    conn.apply_adm.start_apply(APPLY)
    _run(dsn, _batch(target))
    assert target.rows("log") == [(1, "once")]
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    assert _errors(conn) == [] and _status(conn) == "ENABLED"


def test_restart_before_execute_error_applies_once(site):
    """Restart first (the replay skips 12, still in the error queue, and applies 13), then
    fix the cause and EXECUTE_ERROR: each transaction once."""
    dsn, conn, target = site
    local = _aborted(dsn, conn, target)
    conn.apply_adm.start_apply(APPLY)
    _run(dsn, _batch(target))
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    target.sql(f"CREATE TABLE {target.table('log')} (id integer, note varchar(20))")
    conn.apply_adm.execute_error(local)
    _run(dsn, _batch(target))      # replayed once more (a crash before the batch's commit)
    assert target.rows("log") == [(1, "once")]
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    assert _errors(conn) == []


def test_delete_error_before_the_restart_drops_it(site):
    """DELETE_ERROR, restart (the batch replayed): 12 is never applied (its messages are
    dropped, as the Python process drops them), 11 and 13 once."""
    dsn, conn, target = site
    local = _aborted(dsn, conn, target)
    target.sql(f"CREATE TABLE {target.table('log')} (id integer, note varchar(20))")
    conn.apply_adm.delete_error(local)
    conn.apply_adm.start_apply(APPLY)
    _run(dsn, _batch(target))
    assert target.rows("log") == []
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    assert _errors(conn) == [] and _status(conn) == "ENABLED"


def _error_fixed_then_replayed(site, action: str) -> None:
    """disable_on_error = N: 12 to the error queue, 13 applied; its cause fixed (the log
    table created), DBMS_APPLY_ADM.<action> on the error, then the batch replayed (a crash
    before its commit)."""
    dsn, conn, target = site
    conn.apply_adm.set_parameter(APPLY, "disable_on_error", "N")
    _run(dsn, _batch(target))
    (local, _), = _errors(conn)
    target.sql(f"CREATE TABLE {target.table('log')} (id integer, note varchar(20))")
    getattr(conn.apply_adm, action)(local)
    _run(dsn, _batch(target))


def test_execute_error_then_a_crash_replay_applies_once(site):
    """disable_on_error = N: 12 to the error queue, 13 applied; fix the cause, EXECUTE_ERROR,
    then the batch replayed (a crash before its commit): EXECUTE_ERROR's own record of 12
    makes the replay skip it."""
    _error_fixed_then_replayed(site, "execute_error")
    _dsn, conn, target = site
    assert target.rows("log") == [(1, "once")]
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    assert _errors(conn) == []


def test_delete_error_then_a_crash_replay_drops_it(site):
    """disable_on_error = N: 12 to the error queue, 13 applied; DELETE_ERROR, then the batch
    replayed (a crash before its commit): 12 stays dropped, as the Python process (which
    took its messages off the queue with the error row) would have it."""
    _error_fixed_then_replayed(site, "delete_error")
    _dsn, conn, target = site
    assert target.rows("log") == []
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    assert _errors(conn) == []


class _Crash(Exception):
    """The sink's process dying at one point (raised there instead)."""


def test_delete_error_after_a_crash_before_the_target_record_drops_it(site, monkeypatch):
    """disable_on_error = N: 12 fails and its error row commits, then the sink dies before
    it records 12 as delivered in the target (a crash, or the target lost, between the two
    commits); DELETE_ERROR, then the batch replayed: 12 stays dropped -- DELETE_ERROR leaves
    a note of the transaction in the store that the replay reads as it reads an error row
    -- and 11 and 13 are applied once."""
    dsn, conn, target = site
    conn.apply_adm.set_parameter(APPLY, "disable_on_error", "N")

    def crash(*_args):
        raise _Crash
    monkeypatch.setattr(sinks, "_settled_by_error_queue", crash)
    with pytest.raises(_Crash):
        _run(dsn, _batch(target))
    monkeypatch.undo()
    (local, scn), = _errors(conn)
    assert scn == 12 and target.rows("emp") == [(1, "a")]
    target.sql(f"CREATE TABLE {target.table('log')} (id integer, note varchar(20))")
    conn.apply_adm.delete_error(local)
    _run(dsn, _batch(target))
    assert target.rows("log") == []
    assert target.rows("emp") == [(1, "a"), (3, "c")]
    assert _errors(conn) == []


def test_delete_error_leaves_a_note_the_replay_reads(site):
    """What DELETE_ERROR leaves: the error row gone (DBA_APPLY_ERROR), and a note of the
    transaction that ``errored_transactions`` -- what an apply and a replay skip -- reads."""
    from sluice.streams.apply import errorqueue
    from sluice.streams.capture.context import CaptureContext

    dsn, conn, target = site
    conn.apply_adm.set_parameter(APPLY, "disable_on_error", "N")
    _run(dsn, _batch(target))
    (local, _), = _errors(conn)
    ctx = CaptureContext(conn)
    assert errorqueue.errored_transactions(ctx, APPLY) == {("DBS1.NET", 12)}
    conn.apply_adm.delete_error(local)
    assert _errors(conn) == []
    assert errorqueue.errored_transactions(ctx, APPLY) == {("DBS1.NET", 12)}
    assert errorqueue.errored_transactions(ctx, "OTHER") == set()


def test_an_older_store_gets_the_table_of_deleted_errors(dsn):
    from tests.streams.test_propagation import _raw, rows

    sluice.connect(dsn).close()
    _raw(dsn, ["DROP TABLE SLUICE_APPLY_ERROR_DELETED", "UPDATE SLUICE_META SET VALUE = '14' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert rows(conn, "SELECT COUNT(*) FROM SLUICE_APPLY_ERROR_DELETED") == [(0,)]
    finally:
        conn.close()


@pytest.mark.parametrize("registered, code, reason", [
    (lambda lcr: 1 / 0, 26714, "ZeroDivisionError"),
    (None, 904, "SINK_TEST.F"),   # not registered (on an executor: not loadable there)
], ids=["raises", "missing"])
def test_a_failing_custom_transformation_aborts_like_the_python_apply(site, registered, code, reason):
    """A custom rule-based transformation that fails stops the apply as the Python apply
    process does (ABORTED with the error, nothing in the error queue: EXECUTE_ERROR would
    apply the LCR untransformed); the sink sent its transaction to the error queue and went
    on.  Mended, START_APPLY and the batch replayed: each transaction once, transformed."""
    from sluice.rules.engine.ruleset import STREAMS_CONTEXT
    from sluice.rules.engine.types import NVList

    dsn, conn, target = site
    name = f"sink_test.f{os.urandom(4).hex()}"    # the registry is the process's: a name per test
    if registered is not None:
        sluice.register_function(name, registered)
    conn.rule_adm.create_rule("T_EMP", "1 = 1", STREAMS_CONTEXT,
                              NVList({"STREAMS$_TRANSFORM_FUNCTION": name}))
    o = target.owner

    def batch() -> list[Row]:
        return _rows([[lcr("INSERT", o, "EMP", 11, None, {"ID": 1, "NAME": "a"}, txn="11.0.1")],
                      [lcr("INSERT", o, "EMP", 12, None, {"ID": 2, "NAME": "b"}, txn="12.0.1")],
                      [lcr("INSERT", o, "EMP", 13, None, {"ID": 3, "NAME": "c"}, txn="13.0.1")]], {1: f"{conn.username}.T_EMP"})
    with pytest.raises(sluice.DatabaseError, match=f"ORA-{code:05d}.*{reason}"):
        _run(dsn, batch())
    assert _status(conn) == "ABORTED" and _errors(conn) == []
    assert conn.query("SELECT ERROR_NUMBER FROM DBA_APPLY WHERE APPLY_NAME = :a", {"a": APPLY})[1] == [(code,)]
    assert target.rows("emp") == [(1, "a")]

    def upper(m):
        m.set_value("NEW", "NAME", m.get_value("NEW", "NAME").value.upper())
        return m
    sluice.register_function(name, upper)     # mended
    conn.apply_adm.start_apply(APPLY)
    _run(dsn, batch())
    assert target.rows("emp") == [(1, "a"), (2, "B"), (3, "c")]
    assert _errors(conn) == [] and _status(conn) == "ENABLED"


def test_the_sink_applies_with_the_apply_users_rights(site):
    """The Spark apply sink checks the apply_user as the Python apply process does before a
    batch (one check, sluice.streams.clientrights): an apply user whose agent lost its
    database access (DISABLE_DB_ACCESS) on the secure queue fails the batch with ORA-24093,
    the Python process's error, before anything is applied -- the query stops and the batch
    stays unacknowledged in the queue.  It used to apply as the pipeline's session."""
    from sluice.streams.apply import ApplyProcess
    from tests.security.conftest import create_user
    dsn, conn, target = site
    create_user(conn, "APUSER")
    conn.apply_adm.alter_apply(apply_name=APPLY, apply_user="APUSER")
    conn.aqadm.disable_db_access(agent_name=APPLY, db_username="APUSER")
    rows = _batch(target)
    with pytest.raises(sluice.DatabaseError) as refused:
        _run(dsn, rows)
    assert refused.value.code == 24093
    assert target.rows("emp") == [] and _errors(conn) == []
    conn.apply_adm.start_apply(apply_name=APPLY)
    process = ApplyProcess.from_catalog(sluice.connect(dsn), APPLY)
    try:
        process.run_batch(wait=0)
        assert process.state == "ABORTED"
        assert (refused.value.code, str(refused.value)) == (24093, str(process.error))
    finally:
        process.stop()
        process.conn.close()


def test_the_sinks_handlers_run_with_the_apply_users_rights(site):
    """A DML handler the apply user may not execute (another schema's, no EXECUTE granted)
    fails its transaction in the sink as in the Python apply process: ORA-06550 in the error
    queue, the apply ABORTED, nothing of that transaction applied."""
    from tests.security.conftest import create_user
    dsn, conn, target = site
    create_user(conn, "APUSER")
    conn.apply_adm.alter_apply(apply_name=APPLY, apply_user="APUSER")
    called: list = []
    sluice.register_function("sink_rights_test.on_emp", lambda row: (called.append(1), row.execute(True)))
    conn.apply_adm.set_dml_handler(f"{target.owner}.EMP", "TABLE", "INSERT", False, "sink_rights_test.on_emp",
                                   apply_database_link=target.link)
    with pytest.raises(sluice.DatabaseError) as refused:
        _run(dsn, _batch(target))
    assert refused.value.code == 6550
    assert _status(conn) == "ABORTED" and target.rows("emp") == [] and called == []
    assert conn.query("SELECT SOURCE_COMMIT_SCN, ERROR_NUMBER FROM DBA_APPLY_ERROR", None)[1] == [(11, 6550)]


def test_the_sinks_apply_user_needs_execute_on_its_rule_set_and_transformation(site):
    """The sink evaluates the apply's rule set and calls its rules' custom transformations
    as the apply user, which the Python apply process checks before a batch (one check,
    clientrights.check_rule_sets): without EXECUTE on the administrator's rule set the batch
    fails with ORA-01031, then (the rule set granted) without EXECUTE on the transformation
    of another schema with ORA-06550 -- before anything is applied or put in the error
    queue, as the sink's refusal of the apply user's queue rights.  Both granted, the batch
    applies, transformed.  It used to apply with the pipeline session's rights."""
    from sluice.rules.engine.ruleset import STREAMS_CONTEXT
    from sluice.rules.engine.types import NVList
    from tests.security.conftest import create_user

    dsn, conn, target = site
    create_user(conn, "APUSER")
    conn.apply_adm.alter_apply(apply_name=APPLY, apply_user="APUSER")
    name = f"sink_rights_test.f{os.urandom(4).hex()}"    # the registry is the process's: a name per test

    def upper(m):
        m.set_value("NEW", "NAME", m.get_value("NEW", "NAME").value.upper())
        return m
    sluice.register_function(name, upper)
    adm = conn.rule_adm
    adm.create_rule("T_EMP", "1 = 1", STREAMS_CONTEXT, NVList({"STREAMS$_TRANSFORM_FUNCTION": name}))
    adm.create_rule_set("RS", STREAMS_CONTEXT)
    adm.add_rule("T_EMP", "RS")
    conn.apply_adm.alter_apply(apply_name=APPLY, rule_set_name="RS")
    o = target.owner

    def batch() -> list[Row]:
        return _rows([[lcr("INSERT", o, "EMP", 11, None, {"ID": 1, "NAME": "a"}, txn="11.0.1")]],
                     {0: f"{conn.username}.T_EMP"})
    with pytest.raises(sluice.DatabaseError) as refused:
        _run(dsn, batch())
    assert refused.value.code == 1031
    assert target.rows("emp") == [] and _errors(conn) == []
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "RS", "APUSER")
    with pytest.raises(sluice.DatabaseError) as refused:
        _run(dsn, batch())
    assert refused.value.code == 6550 and f"'{name.upper()}' must be declared" in str(refused.value)
    assert target.rows("emp") == [] and _errors(conn) == []
    conn.cursor().execute(f"GRANT EXECUTE ON {name} TO apuser")
    _run(dsn, batch())
    assert target.rows("emp") == [(1, "A")] and _errors(conn) == []


def _apply_row(conn) -> tuple:
    return tuple(conn.query("SELECT STATUS, ERROR_NUMBER, ERROR_MESSAGE FROM DBA_APPLY WHERE APPLY_NAME = :a",
                            {"a": APPLY})[1][0])


@pytest.mark.parametrize("refusal", ["queue", "rule set"])
def test_a_refused_apply_user_aborts_the_sink_as_the_python_apply(site, refusal):
    """The apply user may not take the apply's messages (its agent's DISABLE_DB_ACCESS:
    ORA-24093) or execute its rule set (ORA-01031; its rules' custom transformations are
    asked by the same check, ORA-06550): the sink's batch fails before anything is
    applied and DBA_APPLY shows the apply ABORTED with the error -- the very row the Python
    apply process leaves after the same refusal (START_APPLY, then run as a host runs it).
    The sink used to stop its query and leave DBA_APPLY as it was, without the error."""
    from sluice.rules.engine.ruleset import STREAMS_CONTEXT
    from sluice.streams.apply import ApplyProcess
    from tests.security.conftest import create_user
    from tests.streams.test_client_privileges import aborted

    dsn, conn, target = site
    create_user(conn, "APUSER")
    conn.apply_adm.alter_apply(apply_name=APPLY, apply_user="APUSER")
    adm = conn.rule_adm
    adm.create_rule("T_EMP", "1 = 1", STREAMS_CONTEXT)
    adm.create_rule_set("RS", STREAMS_CONTEXT)
    adm.add_rule("T_EMP", "RS")
    conn.apply_adm.alter_apply(apply_name=APPLY, rule_set_name="RS")
    if refusal == "queue":
        adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "RS", "APUSER")
        conn.aqadm.disable_db_access(agent_name=APPLY, db_username="APUSER")
    code = {"queue": 24093, "rule set": 1031}[refusal]
    with pytest.raises(sluice.DatabaseError) as refused:
        _run(dsn, _batch(target))
    assert refused.value.code == code
    assert target.rows("emp") == [] and _errors(conn) == []
    by_sink = _apply_row(conn)
    assert by_sink == ("ABORTED", code, str(refused.value))
    conn.apply_adm.start_apply(apply_name=APPLY)
    assert _apply_row(conn) == ("ENABLED", None, None)
    process = ApplyProcess.from_catalog(sluice.connect(dsn), APPLY)
    try:
        assert aborted(process).code == code
    finally:
        process.stop()
        process.conn.close()
    assert _apply_row(conn) == by_sink
