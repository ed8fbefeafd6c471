"""A Streams client's user evaluates its rule sets and calls its rules' custom rule-based
transformations: Oracle asks EXECUTE on both of the capture user, the apply user and the
propagation's source queue owner (granted to the user, not through a role).  A client
whose user lacks it stops — ABORTED, with the error in DBA_CAPTURE / DBA_APPLY /
DBA_PROPAGATION — before it takes a message; after the grant it runs.  The owner of a rule
set, EXECUTE ANY RULE SET and a DBMS_RULE_ADM.GRANT_OBJECT_PRIVILEGE to the user or PUBLIC
count; a role does not.  Before, nothing was asked: every client evaluated any rule set."""

from __future__ import annotations

import pytest

import sluice
from sluice.rules.engine.types import NVList
from tests.security.conftest import create_user
from tests.streams.capturekit import env  # noqa: F401  (fixture)
from tests.streams.test_client_privileges import APPLY, aborted, applied, process, restarted, send  # noqa: F401  (fixtures)

STREAMS_CONTEXT = "SYS.STREAMS$_EVALUATION_CONTEXT"


def rule_set(conn, name: str, *rules: tuple[str, NVList | None]) -> str:
    """The administrator's rule set ``name`` with ``rules`` (condition, action context)."""
    adm = conn.rule_adm
    adm.create_rule_set(rule_set_name=name, evaluation_context=STREAMS_CONTEXT)
    for i, (condition, actx) in enumerate(rules):
        adm.create_rule(rule_name=f"{name}_R{i}", condition=condition, action_context=actx)
        adm.add_rule(rule_name=f"{name}_R{i}", rule_set_name=name)
    return f"{conn.username}.{name}"


def grant_execute(conn, how: str, rs: str, user: str) -> None:
    adm = conn.rule_adm
    if how == "object":
        adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, rs, user)
    elif how == "public":
        adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, rs, "PUBLIC")
    else:
        adm.grant_system_privilege(adm.EXECUTE_ANY_RULE_SET, user)


def status(conn, view: str, column: str, name: str) -> tuple:
    return conn.query(f"SELECT status, error_message FROM {view} WHERE {column} = :n", {"n": name})[1][0]


# -- the apply user ------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["object", "public", "any"])
@pytest.mark.parametrize("negative", [False, True], ids=["positive", "negative"])
def test_the_apply_user_needs_execute_on_its_rule_set(conn, applied, process, negative, how):
    """APUSER may not execute the administrator's rule set: the apply aborts with ORA-01031
    (DBA_APPLY), the message stays in the queue; EXECUTE granted (on it, to PUBLIC, or EXECUTE
    ANY RULE SET), START_APPLY applies it.  Through a role it does not count."""
    rs = rule_set(conn, "APPLY_RS", ("1 = 1", None)) if not negative else rule_set(conn, "APPLY_NRS")
    conn.apply_adm.alter_apply(apply_name=APPLY, **{"negative_rule_set_name" if negative else "rule_set_name": rs})
    cur = conn.cursor()
    cur.execute("CREATE ROLE rule_users")
    grant_execute(conn, how if how != "public" else "object", rs, "RULE_USERS")
    cur.execute("GRANT rule_users TO apuser")
    send(conn, 1)
    assert aborted(process()).code == 1031
    assert status(conn, "DBA_APPLY", "apply_name", APPLY)[0] == "ABORTED"
    assert "ORA-01031" in status(conn, "DBA_APPLY", "apply_name", APPLY)[1]
    assert applied == []
    grant_execute(conn, how, rs, "APUSER")
    restarted(conn, process)
    assert applied == [{"n": 1}]


def test_the_apply_user_needs_execute_on_the_custom_transformation(conn, applied, process):
    """The rule's STREAMS$_TRANSFORM_FUNCTION is another schema's: to APUSER it is a function
    that is not there (ORA-06550, PLS-00201, as a handler); the apply aborts before it takes
    the message; granted EXECUTE on it, the restarted apply transforms and applies it."""
    sluice.register_function("client_rs_test.tag", lambda m: {**m, "tagged": True})
    rs = rule_set(conn, "APPLY_RS", ("1 = 1", NVList({"STREAMS$_TRANSFORM_FUNCTION": "client_rs_test.tag"})))
    conn.apply_adm.alter_apply(apply_name=APPLY, rule_set_name=rs)
    grant_execute(conn, "object", rs, "APUSER")
    send(conn, 1)
    error = aborted(process())
    assert error.code == 6550 and "'CLIENT_RS_TEST.TAG' must be declared" in str(error)
    assert status(conn, "DBA_APPLY", "apply_name", APPLY)[0] == "ABORTED"
    assert applied == []
    conn.cursor().execute("GRANT EXECUTE ON client_rs_test.tag TO apuser")
    restarted(conn, process)
    assert applied == [{"n": 1, "tagged": True}]


def test_the_apply_user_owning_its_rule_set_needs_no_grant(conn, applied, process):
    """The owner of a rule set executes it: APUSER's own (made by the administrator in
    APUSER's schema) needs nothing more."""
    conn.rule_adm.create_rule_set(rule_set_name="APUSER.OWN_RS", evaluation_context=STREAMS_CONTEXT)
    conn.rule_adm.create_rule(rule_name="APUSER.OWN_R", condition="1 = 1")
    conn.rule_adm.add_rule(rule_name="APUSER.OWN_R", rule_set_name="APUSER.OWN_RS")
    conn.apply_adm.alter_apply(apply_name=APPLY, rule_set_name="APUSER.OWN_RS")
    send(conn, 1)
    p = process()
    p.drain()
    assert p.state != "ABORTED", p.error
    assert applied == [{"n": 1}]


# -- the capture user ----------------------------------------------------------------------
@pytest.mark.parametrize("dsn", ["sqlite", "postgresql"], indirect=True)
def test_the_capture_user_needs_execute_on_its_rule_set(env):
    """CAPUSER may not execute the administrator's rule set: START fails with ORA-01031, the
    capture ABORTED with it in DBA_CAPTURE, nothing enqueued; granted EXECUTE, a restarted
    capture captures the change."""
    create_user(env.conn, "CAPUSER")
    s = env.src
    env.sql(f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"), capture_user="CAPUSER")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.t VALUES (1)")
    with pytest.raises(sluice.DatabaseError) as e:
        env.process().start()
    assert e.value.code == 1031
    [row] = env.view("SELECT STATUS, ERROR_NUMBER FROM DBA_CAPTURE")
    assert row == {"STATUS": "ABORTED", "ERROR_NUMBER": 1031}
    adm = env.conn.rule_adm
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, "RS", "CAPUSER")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    proc = env.process()
    proc.catch_up()
    assert [x.get_value("NEW", "ID").value for x in env.dequeue_all()] == [1]


# -- the propagation's source queue owner --------------------------------------------------
@pytest.fixture
def owned(tmp_path):
    """Site A's queue PQOWNER.SRC (its owner a user with CREATE SESSION only) propagating to
    DST at site B through the administrator's rule set POS (a rule with a custom
    transformation) and NEG; one row LCR of REGIONS waiting."""
    from sluice.streams import RowLCR
    from tests.streams.propkit import Sites
    from tests.streams.test_propagation import STREAMS_EC

    sites = Sites(f"sqlite:///{tmp_path / 'base.db'}", tmp_path)
    a, b = sites.open("dbs1"), sites.open("dbs2")
    create_user(a, "PQOWNER")
    a.streams_adm.set_up_queue(queue_table="pqowner.src_qt", queue_name="pqowner.src")
    b.streams_adm.set_up_queue(queue_table="dst_qt", queue_name="dst")
    b.aqadm.add_subscriber("dst", sluice.Agent("APPLY"))
    a.cursor().execute(f"CREATE PUBLIC DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")   # PQOWNER's too
    sluice.register_function("sluice.client_rs_rename", lambda lcr: (lcr.set_object_name("RENAMED"), lcr)[1])
    adm = a.rule_adm
    adm.create_rule("regions", ":dml.get_object_name() = 'REGIONS'", STREAMS_EC,
                    action_context=NVList({"STREAMS$_TRANSFORM_FUNCTION": "client_rs_rename"}))
    adm.create_rule_set("pos", STREAMS_EC)
    adm.create_rule_set("neg", STREAMS_EC)
    adm.add_rule("regions", "pos")
    a.propagation_adm.create_propagation("p", "pqowner.src", "dst", "dbs2", rule_set_name="pos",
                                         negative_rule_set_name="neg")
    a.queue("PQOWNER.SRC", "SYS.ANYDATA").enqone(a.msgproperties(payload=RowLCR.construct(
        source_database_name="dbs1", command_type="INSERT", object_owner="HR", object_name="REGIONS",
        transaction_id="1.2.3", new_values={"ID": 1})))
    a.commit()
    yield a, b
    sites.close()


def propagate(a, b) -> list:
    """One pass of site A's propagation process; what DST at B then holds (its object names)."""
    from sluice.streams.propagation.runner import PropagationRunner
    from tests.streams.propkit import drain

    PropagationRunner(a).run_once(force=True)
    return [m.payload.get_object_name() for m in drain(b, "DST", "APPLY", "SYS.ANYDATA")]


def test_the_source_queue_owner_needs_execute_on_the_rule_sets(owned):
    """PQOWNER propagates (seed 001): without EXECUTE on NEG (then POS) the propagation is
    ABORTED with ORA-01031 in DBA_PROPAGATION and the message stays in PQOWNER.SRC; the
    rule sets granted, the custom transformation (SLUICE's) refuses it the same way with
    ORA-06550; everything granted, START_PROPAGATION sends it, transformed."""
    a, b = owned
    adm = a.rule_adm
    queued = "SELECT COUNT(*) FROM AQ$SRC_QT"
    for granted, code in ((None, "ORA-01031"), ("NEG", "ORA-01031"), ("POS", "ORA-06550")):
        if granted is not None:
            adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, granted, "PQOWNER")
            a.propagation_adm.start_propagation("p")
        assert propagate(a, b) == []
        state, error = status(a, "DBA_PROPAGATION", "propagation_name", "P")
        assert state == "ABORTED" and code in error, (granted, error)
        assert a.query(queued.replace("AQ$", "PQOWNER.AQ$"), None)[1] == [(1,)]
    assert "'SLUICE.CLIENT_RS_RENAME' must be declared" in error
    a.cursor().execute("GRANT EXECUTE ON sluice.client_rs_rename TO pqowner")
    a.propagation_adm.start_propagation("p")
    assert propagate(a, b) == ["RENAMED"]
    assert status(a, "DBA_PROPAGATION", "propagation_name", "P") == ("ENABLED", None)


# -- a messaging client: the session that invokes it --------------------------------------
@pytest.mark.parametrize("dsn", ["sqlite"], indirect=True)
def test_the_session_invoking_a_messaging_client_needs_execute_on_its_rule_set(conn, dsn):
    """MCUSER dequeues through the messaging client MC (DBMS_STREAMS_MESSAGING.DEQUEUE),
    whose rule set the administrator made: without EXECUTE on it the call fails with
    ORA-01031 and the message stays; a role holding it counts here (the session's own
    call, as DBMS_RULE.EVALUATE); then MCUSER dequeues it."""
    from sluice.streams import RowLCR
    from tests.security.conftest import login

    create_user(conn, "MCUSER", "EXECUTE ON DBMS_STREAMS_MESSAGING", "EXECUTE ON DBMS_AQ")
    conn.streams_adm.set_up_queue(queue_table="MQT", queue_name="MQ", queue_user="MCUSER")
    conn.streams_adm.add_table_rules("hr.t", "dequeue", "mc", queue_name="MQ")
    conn.aqadm.enable_db_access(agent_name="MC", db_username="MCUSER")
    conn.streams_messaging.enqueue("MQ", RowLCR.construct(
        source_database_name="DBS1", command_type="INSERT", object_owner="HR", object_name="T",
        new_values={"ID": 1}))
    conn.commit()
    [rs] = conn.query("SELECT rule_set_owner || '.' || rule_set_name FROM DBA_STREAMS_MESSAGE_CONSUMERS",
                      None)[1][0]
    mc = login(dsn, "MCUSER")
    try:
        with pytest.raises(sluice.DatabaseError) as e:
            mc.streams_messaging.dequeue("SLUICE.MQ", "MC", wait=0)
        assert e.value.code == 1031
        mc.rollback()
        conn.cursor().execute("CREATE ROLE mc_rules")
        adm = conn.rule_adm
        adm.grant_object_privilege(adm.EXECUTE_ON_RULE_SET, rs, "MC_RULES")
        conn.cursor().execute("GRANT mc_rules TO mcuser")
        payload, _ = mc.streams_messaging.dequeue("SLUICE.MQ", "MC", wait=0)
        assert payload.get_object_name() == "T"
        mc.commit()
    finally:
        mc.close()
