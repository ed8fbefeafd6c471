"""DROP USER … CASCADE of a user whose queues Streams clients use.

SQL Reference, DROP USER: "Specify CASCADE to drop all objects in the user's schema" -- its
queue tables, as DBMS_AQADM.DROP_QUEUE_TABLE(force => TRUE) drops them.  A Streams client
is associated with one queue (seed 001 "Queues and Oracle Streams Clients"; a propagation's
job propagates from its source queue, "Propagation Jobs"), and DBMS_AQADM refuses to drop
such a queue under a propagation or a synchronous capture (ORA-26667).  With CASCADE the
clients that use the dropped queues go first, as DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade =>
TRUE) drops them: nothing in DBA_PROPAGATION, DBA_SYNC_CAPTURE, DBA_CAPTURE, DBA_APPLY,
DBA_STREAMS_MESSAGE_CONSUMERS or DBA_QUEUE_SCHEDULES names a queue that no longer exists,
and a synchronous capture's triggers no longer write into a dropped queue table.  (It used
to drop the bare tables past the drop checks and leave all of them behind.)"""

from __future__ import annotations

from tests.conftest import pg_admin
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
