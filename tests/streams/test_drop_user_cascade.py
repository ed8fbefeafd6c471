"""DROP USER … CASCADE of a user whose queues Streams clients use.

SQL Reference, DROP USER: "Specify CASCADE to drop all objects in the user's schema" -- its
queue tables, as DBMS_AQADM.DROP_QUEUE_TABLE(force => TRUE) drops them.  A Streams client
is associated with one queue (seed 001 "Queues and Oracle Streams Clients"; a propagation's
job propagates from its source queue, "Propagation Jobs"), and DBMS_AQADM refuses to drop
such a queue under any of them (ORA-26668).  With CASCADE the
clients that use the dropped queues go first, as DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade =>
TRUE) drops them: nothing in DBA_PROPAGATION, DBA_SYNC_CAPTURE, DBA_CAPTURE, DBA_APPLY,
DBA_STREAMS_MESSAGE_CONSUMERS or DBA_QUEUE_SCHEDULES names a queue that no longer exists,
and a synchronous capture's triggers no longer write into a dropped queue table.  (It used
to drop the bare tables past the drop checks and leave all of them behind.)"""

from __future__ import annotations

import pytest

import sluice
from sluice.rules.engine.types import VariableType
from tests.conftest import hold_message, make_queue, pg_admin
from tests.security.conftest import create_user
from tests.streams.capturekit import env  # noqa: F401  (fixture)
from tests.streams.synckit import senv  # noqa: F401  (fixture)

VIEWS = {
    "DBA_PROPAGATION": "SELECT propagation_name FROM DBA_PROPAGATION",
    "DBA_SYNC_CAPTURE": "SELECT capture_name FROM DBA_SYNC_CAPTURE",
    "DBA_CAPTURE": "SELECT capture_name FROM DBA_CAPTURE",
    "DBA_APPLY": "SELECT apply_name FROM DBA_APPLY",
    "DBA_STREAMS_MESSAGE_CONSUMERS": "SELECT streams_name FROM DBA_STREAMS_MESSAGE_CONSUMERS",
    "DBA_QUEUE_SCHEDULES": "SELECT qname, destination FROM DBA_QUEUE_SCHEDULES",
    "DBA_QUEUES": "SELECT name FROM DBA_QUEUES WHERE owner = 'ALICE'",
    "DBA_QUEUE_TABLES": "SELECT queue_table FROM DBA_QUEUE_TABLES WHERE owner = 'ALICE'",
}


def _catalog(conn) -> dict[str, list]:
    return {view: sorted(conn.query(sql, None)[1]) for view, sql in VIEWS.items()}


def _alices_queue(conn) -> None:
    create_user(conn, "ALICE")
    conn.streams_adm.set_up_queue(queue_table="ALICE.STRM_QT", queue_name="ALICE.STRM_Q")


def test_drop_user_cascade_drops_the_streams_clients_of_its_queues(senv):
    conn = senv.conn
    _alices_queue(conn)
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp")
    conn.capture_adm.create_sync_capture(queue_name="ALICE.STRM_Q", capture_name="SC", rule_set_name=rs)
    conn.propagation_adm.create_propagation(propagation_name="P1", source_queue="ALICE.STRM_Q",
                                            destination_queue="A.Q1", destination_dblink="DBS2")
    conn.aqadm.schedule_propagation(queue_name="ALICE.STRM_Q", destination="DBS3")
    conn.apply_adm.create_apply(queue_name="ALICE.STRM_Q", apply_name="AP", apply_captured=True)
    conn.apply_adm.start_apply(apply_name="AP")
    conn.cursor().execute("CREATE TYPE duc_msg AS OBJECT (n NUMBER)")
    conn.streams_adm.add_message_rule(message_type="duc_msg", rule_condition=":msg.n = 1",
                                      streams_type="dequeue", streams_name="MC",
                                      queue_name="ALICE.STRM_Q")
    # an unrelated client on a queue of another user stays
    conn.propagation_adm.create_propagation(propagation_name="KEEP", source_queue="STRM_Q",
                                            destination_queue="A.Q1", destination_dblink="DBS2")
    before = _catalog(conn)
    assert before["DBA_PROPAGATION"] == [("KEEP",), ("P1",)] and before["DBA_SYNC_CAPTURE"] == [("SC",)]
    assert before["DBA_APPLY"] == [("AP",)] and before["DBA_STREAMS_MESSAGE_CONSUMERS"] == [("MC",)]
    assert ("STRM_Q", "DBS3") in before["DBA_QUEUE_SCHEDULES"]

    conn.cursor().execute("DROP USER alice CASCADE")

    after = _catalog(conn)
    assert after["DBA_PROPAGATION"] == [("KEEP",)]
    assert after["DBA_QUEUE_SCHEDULES"] == [("STRM_Q", "DBS2")]   # KEEP's, from SLUICE.STRM_Q
    assert {v: r for v, r in after.items() if v not in ("DBA_PROPAGATION", "DBA_QUEUE_SCHEDULES")} == {
        v: [] for v in VIEWS if v not in ("DBA_PROPAGATION", "DBA_QUEUE_SCHEDULES")}
    assert senv.triggers() == []
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'Ann', 10)")   # nothing writes into ALICE.STRM_Q
    # the user and the names are free again
    _alices_queue(conn)
    conn.capture_adm.create_sync_capture(queue_name="ALICE.STRM_Q", capture_name="SC", rule_set_name=rs)
    assert _catalog(conn)["DBA_SYNC_CAPTURE"] == [("SC",)]


def test_drop_user_cascade_drops_a_capture_process_into_its_queue(env):
    """A capture process (ENABLED: stopped first) whose queue goes with the user goes too,
    with its replication slot."""
    conn = env.conn
    _alices_queue(conn)
    env.create_capture(name="CAP", queue_name="ALICE.STRM_Q")
    conn.capture_adm.start_capture(capture_name="CAP")
    assert _slots(env) == 1
    conn.cursor().execute("DROP USER alice CASCADE")
    assert _catalog(conn)["DBA_CAPTURE"] == [] and _slots(env) == 0


def _slots(env) -> int:
    with pg_admin() as admin:
        return admin.execute("SELECT COUNT(*) FROM pg_replication_slots WHERE slot_name LIKE %s",
                             (env.slot_prefix.replace("_", r"\_") + "%",)).fetchone()[0]


def test_drop_user_cascade_drops_its_sharded_queues_and_their_schedules(conn):
    """A sharded queue (Transactional Event Queue) goes as DROP_SHARDED_QUEUE(force) drops
    it, started or not, with its propagation schedule; other users' queues stay."""
    create_user(conn, "ALICE")
    conn.aqadm.create_sharded_queue(queue_name="ALICE.SHQ", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.start_queue(queue_name="ALICE.SHQ")
    conn.aqadm.create_queue_table(queue_table="ALICE.PLAIN_QT", queue_payload_type="RAW")
    conn.aqadm.create_queue_table(queue_table="KEEP_QT", queue_payload_type="RAW")
    conn.aqadm.schedule_propagation(queue_name="ALICE.SHQ", destination="DBS2")
    conn.cursor().execute("DROP USER alice CASCADE")
    after = _catalog(conn)
    assert (after["DBA_QUEUES"], after["DBA_QUEUE_TABLES"], after["DBA_QUEUE_SCHEDULES"]) == ([], [], [])
    assert conn.query("SELECT queue_table FROM DBA_QUEUE_TABLES", None)[1] == [("KEEP_QT",)]


# -- every object of the schema (rule objects, transformations, types) --------------------
SCHEMA_VIEWS = {
    "DBA_RULE_SETS": "SELECT rule_set_owner, rule_set_name FROM DBA_RULE_SETS",
    "DBA_RULES": "SELECT rule_owner, rule_name, rule_evaluation_context_owner FROM DBA_RULES",
    "DBA_RULE_SET_RULES": "SELECT rule_set_name, rule_owner, rule_name FROM DBA_RULE_SET_RULES",
    "DBA_EVALUATION_CONTEXTS": "SELECT evaluation_context_owner, evaluation_context_name "
                               "FROM DBA_EVALUATION_CONTEXTS",
    "DBA_TRANSFORMATIONS": "SELECT owner, name FROM DBA_TRANSFORMATIONS",
    "DBA_TYPES": "SELECT owner, type_name FROM DBA_TYPES",
    "DBA_QUEUE_TABLES": "SELECT owner, queue_table FROM DBA_QUEUE_TABLES",
}


def _schema_catalog(conn) -> dict[str, list]:
    return {view: sorted(conn.query(sql, None)[1], key=repr) for view, sql in SCHEMA_VIEWS.items()}


def _alices_schema(conn) -> None:
    """ALICE's rule set (with her rule, evaluated in her evaluation context), a rule of hers
    in SLUICE's rule set, her context used by a rule of SLUICE's, two types (PERSON built on
    ADDR), a queue table of PERSON messages and a transformation between her types."""
    create_user(conn, "ALICE")
    adm = conn.rule_adm
    adm.create_evaluation_context("alice.ec", variable_types=[VariableType("n", "NUMBER")])
    adm.create_rule_set("alice.rs", evaluation_context="alice.ec")
    adm.create_rule("alice.r1", ":n = 1")
    adm.add_rule("alice.r1", "alice.rs")
    adm.create_rule("alice.r2", ":n = 2", evaluation_context="alice.ec")
    adm.create_rule_set("keep_rs", evaluation_context="alice.ec")
    adm.add_rule("alice.r2", "keep_rs")
    adm.create_rule("keep_r", ":n = 3", evaluation_context="alice.ec")
    adm.add_rule("keep_r", "keep_rs")
    conn.create_type("ALICE.ADDR", "OBJECT", [("CITY", "VARCHAR2(20)")], None, None, False)
    conn.create_type("ALICE.PERSON", "OBJECT", [("NAME", "VARCHAR2(20)"), ("HOME", "ALICE.ADDR")],
                     None, None, False)
    conn.aqadm.create_queue_table(queue_table="alice.people_qt", queue_payload_type="alice.person")
    conn.transform.create_transformation(schema="alice", name="home_of", from_schema="alice",
                                         from_type="person", to_schema="alice", to_type="addr")


def test_drop_user_cascade_drops_every_object_of_the_schema(conn):
    """SQL Reference, DROP USER: CASCADE drops "all objects in the user's schema" -- her rule
    sets, rules, evaluation contexts, transformations and types too (they used to stay,
    named by a user that no longer existed).  Her rule leaves SLUICE's rule set (DROP_RULE
    force), her evaluation context leaves SLUICE's rule and rule set (DROP_EVALUATION_CONTEXT
    force); PERSON goes before the ADDR it is built on; SLUICE's objects stay."""
    _alices_schema(conn)
    with pytest.raises(sluice.DatabaseError) as e:      # a schema with objects needs CASCADE
        conn.cursor().execute("DROP USER alice")
    assert e.value.full_code == "ORA-01922"
    before = _schema_catalog(conn)
    assert len(before["DBA_TYPES"]) == 2 and len(before["DBA_RULE_SET_RULES"]) == 3

    conn.cursor().execute("DROP USER alice CASCADE")

    after = _schema_catalog(conn)
    assert after == {
        "DBA_RULE_SETS": [("SLUICE", "KEEP_RS")],
        "DBA_RULES": [("SLUICE", "KEEP_R", None)],
        "DBA_RULE_SET_RULES": [("KEEP_RS", "SLUICE", "KEEP_R")],
        "DBA_EVALUATION_CONTEXTS": [],
        "DBA_TRANSFORMATIONS": [], "DBA_TYPES": [], "DBA_QUEUE_TABLES": []}
    assert conn.query("SELECT username FROM DBA_USERS WHERE username = 'ALICE'", None)[1] == []
    # the names are free again
    create_user(conn, "ALICE")
    conn.create_type("ALICE.ADDR", "OBJECT", [("CITY", "VARCHAR2(20)")], None, None, False)
    conn.rule_adm.create_rule_set("alice.rs")


def test_drop_user_cascade_refuses_a_type_another_users_queue_table_carries(conn):
    """Another user's queue table of one of her types: ORA-02303, as DROP TYPE refuses it
    -- checked before anything is dropped, so her schema is left whole."""
    _alices_schema(conn)
    conn.aqadm.create_queue_table(queue_table="keep_qt", queue_payload_type="alice.addr")
    before = _schema_catalog(conn)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.cursor().execute("DROP USER alice CASCADE")
    assert e.value.full_code == "ORA-02303"
    assert _schema_catalog(conn) == before
    conn.aqadm.drop_queue_table(queue_table="keep_qt")
    conn.cursor().execute("DROP USER alice CASCADE")
    assert _schema_catalog(conn)["DBA_TYPES"] == []


def test_another_users_streams_client_keeps_naming_her_dropped_rule_set(senv):
    """Decided (DESIGN-NOTES): her rule set goes even when a Streams client on another
    user's queue uses it -- Oracle invalidates dependents in other schemas rather than
    dropping them, and DBMS_RULE_ADM.DROP_RULE_SET drops such a rule set too.  The clients
    stay and keep naming it (DBA_SYNC_CAPTURE, DBA_APPLY); evaluating it is ORA-24141, and
    the synchronous capture's triggers, built from its rules, go: it captures nothing until
    it is given a rule set again."""
    from sluice.streams import evaluate_rule_sets
    conn = senv.conn
    create_user(conn, "ALICE")
    senv.create_table("emp")
    rs = senv.rule_set("ALICE.SC_RS", "emp")
    conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name=rs)
    conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name="AP", apply_captured=True, rule_set_name=rs)
    assert senv.triggers() != []
    conn.cursor().execute("DROP USER alice CASCADE")
    assert conn.query("SELECT rule_set_name FROM DBA_RULE_SETS WHERE rule_set_owner = 'ALICE'", None)[1] == []
    assert conn.query("SELECT capture_name, rule_set_owner, rule_set_name FROM DBA_SYNC_CAPTURE", None)[1] == [
        ("SC", "ALICE", "SC_RS")]
    assert conn.query("SELECT apply_name, rule_set_owner, rule_set_name FROM DBA_APPLY", None)[1] == [
        ("AP", "ALICE", "SC_RS")]
    with pytest.raises(sluice.DatabaseError) as e:
        evaluate_rule_sets(conn, b"x", positive_rule_set="ALICE.SC_RS")
    assert e.value.full_code == "ORA-24141"
    assert senv.triggers() == []
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'Ann', 10)")
    assert senv.dequeue_all() == []


# -- propagations INTO the user's queues ----------------------------------------------------
def test_a_propagation_into_a_dropped_users_queue_stays_and_reports_ora_24010(conn):
    """DROP USER … CASCADE drops the propagations FROM her queues; one of BOB's INTO her
    queue (same store) is not hers and stays, as after DBMS_AQADM.DROP_QUEUE of a
    destination queue: its schedule reports ORA-24010 and keeps the messages (seed 003
    "Propagation Error Handling"; 16 failures disable it), and it delivers again once the
    queue exists -- and BOB may enqueue into it again (seed 001: the source queue's
    owner propagates).  The ENQUEUE privilege on her old queue went with it (it used to
    stay in DBA_TAB_PRIVS, so a new user of her name re-creating the queue found BOB
    already allowed to write into it): ORA-01031 until granted again."""
    import time
    from sluice.streams.propagation.runner import PropagationRunner
    create_user(conn, "ALICE")
    create_user(conn, "BOB")
    make_queue(conn, "BOB.SRC", multiple_consumers=True)
    make_queue(conn, "ALICE.INBOX", multiple_consumers=True)
    conn.aqadm.add_subscriber("alice.inbox", sluice.Agent("READER"))
    conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="alice.inbox", grantee="BOB")
    conn.propagation_adm.create_propagation("into_alice", "bob.src", "alice.inbox")
    conn.cursor().execute("DROP USER alice CASCADE")
    assert conn.query("SELECT propagation_name, destination_queue_owner, destination_queue_name "
                      "FROM DBA_PROPAGATION", None)[1] == [("INTO_ALICE", "ALICE", "INBOX")]
    conn.queue("BOB.SRC").enqone(conn.msgproperties(payload=b"kept"))
    conn.commit()
    assert PropagationRunner(conn).run_once(force=True) == 0
    [(failures, error)] = conn.query("SELECT failures, last_error_msg FROM DBA_QUEUE_SCHEDULES "
                                     "WHERE qname = 'SRC'", None)[1]
    assert failures == 1 and error.startswith("ORA-24010")
    assert conn.context.store.count_messages(conn.context.catalog.queue("BOB.SRC")) == 1
    assert conn.query("SELECT grantee FROM DBA_TAB_PRIVS WHERE owner = 'ALICE'", None)[1] == []
    create_user(conn, "ALICE")                       # the queue again
    make_queue(conn, "ALICE.INBOX", multiple_consumers=True)
    conn.aqadm.add_subscriber("alice.inbox", sluice.Agent("READER"))
    now = time.time()
    assert PropagationRunner(conn, clock=lambda: now + 60).run_once(force=True) == 0
    assert conn.query("SELECT failures, last_error_msg FROM DBA_QUEUE_SCHEDULES WHERE qname = 'SRC'",
                      None)[1] == [(2, "ORA-01031: insufficient privileges")]
    conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="alice.inbox", grantee="BOB")
    assert PropagationRunner(conn, clock=lambda: now + 600).run_once(force=True) == 1


# -- a refused DROP USER changes nothing ----------------------------------------------------
def test_a_refused_drop_user_cascade_changes_nothing(senv, monkeypatch):
    """A session holds one of her queue table's messages (dequeued, not committed): DROP
    USER … CASCADE is ORA-00054 -- and, checked before anything is dropped, her Streams
    clients, rule objects, types and queues are all still there (they used to be dropped
    one DDL at a time until the queue table refused).  Once the session lets go it drops."""
    from sluice.store import postgres
    monkeypatch.setattr(postgres, "DDL_LOCK_TIMEOUT", "300ms")
    conn = senv.conn
    _alices_schema(conn)
    conn.streams_adm.set_up_queue(queue_table="ALICE.STRM_QT", queue_name="ALICE.STRM_Q")
    conn.aqadm.add_subscriber("alice.strm_q", sluice.Agent("S1"))
    conn.apply_adm.create_apply(queue_name="ALICE.STRM_Q", apply_name="AP", apply_captured=True)
    conn.propagation_adm.create_propagation(propagation_name="P1", source_queue="ALICE.STRM_Q",
                                            destination_queue="A.Q1", destination_dblink="DBS2")
    q = conn.queue("ALICE.STRM_Q")
    q.enqone(conn.msgproperties(payload=b"held"))
    conn.commit()
    with sluice.connect(senv.dsn) as other:
        hold_message(other, "ALICE.STRM_Q")              # not committed
        before = (_catalog(conn), _schema_catalog(conn))
        with pytest.raises(sluice.DatabaseError) as e:
            conn.cursor().execute("DROP USER alice CASCADE")
        assert e.value.full_code == "ORA-00054"
        assert (_catalog(conn), _schema_catalog(conn)) == before
        assert ("AP",) in before[0]["DBA_APPLY"] and ("P1",) in before[0]["DBA_PROPAGATION"]
        other.rollback()
    conn.cursor().execute("DROP USER alice CASCADE")
    after = _catalog(conn)
    assert (after["DBA_APPLY"], after["DBA_QUEUES"], _schema_catalog(conn)["DBA_TYPES"]) == ([], [], [])
