"""A queue goes only after the Streams clients that use it; REMOVE_QUEUE(cascade) drops them.

Seed 001 "Queues and Oracle Streams Clients": each capture process, apply process and
messaging client is associated with one queue.  DBMS_AQADM.DROP_QUEUE / DROP_QUEUE_TABLE
refused the queue of a propagation or a synchronous capture only; a capture process, an
apply process or a messaging client outlived its queue, and DBA_CAPTURE, DBA_APPLY,
DBA_STREAMS_MESSAGE_CONSUMERS named a queue that no longer existed.  Now every one of them
refuses it with Oracle's ORA-26668 ("STREAMS process … exists": "An attempt to remove the
component failed because it is associated with the STREAMS process.  Either remove the
process manually or specify the cascade option in dbms_streams_adm.remove_queue"), before
anything changes; DBMS_STREAMS_ADM.REMOVE_QUEUE(cascade => TRUE) drops the clients first.
"""

from __future__ import annotations

import pytest

import sluice
from tests.conftest import hold_message
from tests.streams.capturekit import env  # noqa: F401  (fixture)
from tests.sqlhelpers import raised_code

VIEWS = {
    "DBA_CAPTURE": "SELECT capture_name, queue_name FROM DBA_CAPTURE",
    "DBA_APPLY": "SELECT apply_name, queue_name FROM DBA_APPLY",
    "DBA_STREAMS_MESSAGE_CONSUMERS": "SELECT streams_name, queue_name FROM DBA_STREAMS_MESSAGE_CONSUMERS",
    "DBA_QUEUES": "SELECT name FROM DBA_QUEUES WHERE name = 'USED_Q'",
    "DBA_QUEUE_TABLES": "SELECT queue_table FROM DBA_QUEUE_TABLES WHERE queue_table = 'USED_QT'",
}


def _catalog(conn) -> dict[str, list]:
    return {view: sorted(conn.query(sql, None)[1]) for view, sql in VIEWS.items()}


def _used_queue(conn) -> None:
    conn.streams_adm.set_up_queue(queue_table="USED_QT", queue_name="USED_Q")


def _capture(env):
    env.create_capture(name="CAP", queue_name="USED_Q")
    return "CAP"


def _apply(env):
    env.conn.apply_adm.create_apply(queue_name="USED_Q", apply_name="AP", apply_captured=True)
    env.conn.apply_adm.start_apply(apply_name="AP")          # a running one too
    return "AP"


def _messaging_client(env):
    env.conn.cursor().execute("CREATE TYPE qdc_msg AS OBJECT (n NUMBER)")
    env.conn.streams_adm.add_message_rule(message_type="qdc_msg", rule_condition=":msg.n = 1",
                                          streams_type="dequeue", streams_name="MC", queue_name="USED_Q")
    return "MC"


@pytest.mark.parametrize("make", [_capture, _apply, _messaging_client])
def test_drop_queue_refuses_the_queue_of_a_streams_client(env, make):
    conn = env.conn
    _used_queue(conn)
    name = make(env)
    conn.aqadm.stop_queue(queue_name="USED_Q")
    before = _catalog(conn)
    assert ("USED_Q",) in before["DBA_QUEUES"]
    for refused in (lambda: conn.aqadm.drop_queue(queue_name="USED_Q"),
                    lambda: conn.aqadm.drop_queue_table(queue_table="USED_QT", force=True),
                    lambda: conn.streams_adm.remove_queue(queue_name="USED_Q")):
        with pytest.raises(sluice.DatabaseError) as e:
            refused()
        assert e.value.full_code == "ORA-26668" and f"STREAMS process {name} exists" in str(e.value)
        assert _catalog(conn) == before                     # nothing changed
    conn.streams_adm.remove_queue(queue_name="USED_Q", cascade=True)
    assert _catalog(conn) == {view: [] for view in VIEWS}


def test_remove_queue_cascade_drops_every_client_then_the_queue_and_its_unused_table(env):
    conn = env.conn
    _used_queue(conn)
    for make in (_capture, _apply, _messaging_client):
        make(env)
    conn.propagation_adm.create_propagation(propagation_name="P1", source_queue="USED_Q",
                                            destination_queue="A.Q1", destination_dblink="DBS2")
    conn.streams_adm.set_up_queue(queue_table="OTHER_QT", queue_name="OTHER_Q")
    conn.apply_adm.create_apply(queue_name="OTHER_Q", apply_name="KEEP", apply_captured=True)
    conn.streams_adm.remove_queue(queue_name="USED_Q", cascade=True)
    assert _catalog(conn) == {"DBA_CAPTURE": [], "DBA_APPLY": [("KEEP", "OTHER_Q")],
                              "DBA_STREAMS_MESSAGE_CONSUMERS": [], "DBA_QUEUES": [], "DBA_QUEUE_TABLES": []}
    assert conn.query("SELECT propagation_name FROM DBA_PROPAGATION", None)[1] == []
    assert raised_code(conn.streams_adm.remove_queue, queue_name="USED_Q") == "ORA-24010"
    # an exception queue goes with its table only (ORA-24011, as DROP_QUEUE says)
    before = _catalog(conn)
    assert raised_code(conn.streams_adm.remove_queue, queue_name="AQ$_OTHER_QT_E", cascade=True) == "ORA-24011"
    assert _catalog(conn) == before


def test_remove_queue_keeps_a_queue_table_still_in_use_or_when_told(env):
    """drop_unused_queue_table: the table goes only when no other queue is in it (and its
    exception queue is empty); FALSE keeps it anyway."""
    conn = env.conn
    _used_queue(conn)
    conn.aqadm.create_queue(queue_name="SIBLING_Q", queue_table="USED_QT")
    conn.streams_adm.remove_queue(queue_name="USED_Q")
    assert _catalog(conn)["DBA_QUEUE_TABLES"] == [("USED_QT",)] and _catalog(conn)["DBA_QUEUES"] == []
    conn.streams_adm.remove_queue(queue_name="SIBLING_Q", drop_unused_queue_table=False)
    assert _catalog(conn)["DBA_QUEUE_TABLES"] == [("USED_QT",)]
    _used_queue(conn)
    conn.streams_adm.remove_queue(queue_name="USED_Q")
    assert _catalog(conn)["DBA_QUEUE_TABLES"] == []


def test_remove_queue_cascade_refused_by_a_held_message_drops_no_client(env, monkeypatch):
    """A session holds a message of the queue: DROP_QUEUE would refuse it (ORA-00054) after
    REMOVE_QUEUE(cascade) had dropped the clients; it is asked first, so nothing changes."""
    from sluice.store import postgres
    monkeypatch.setattr(postgres, "DDL_LOCK_TIMEOUT", "300ms")
    conn = env.conn
    _used_queue(conn)
    _apply(env)
    conn.aqadm.add_subscriber("used_q", sluice.Agent("S1"))
    conn.queue("USED_Q").enqone(conn.msgproperties(payload=b"held"))
    conn.commit()
    with sluice.connect(env.dsn) as other:
        hold_message(other, "USED_Q")                      # not committed
        before = _catalog(conn)
        assert raised_code(conn.streams_adm.remove_queue, queue_name="USED_Q", cascade=True) == "ORA-00054"
        assert _catalog(conn) == before and before["DBA_APPLY"] == [("AP", "USED_Q")]
        other.rollback()
    conn.streams_adm.remove_queue(queue_name="USED_Q", cascade=True)
    assert _catalog(conn) == {view: [] for view in VIEWS}


def test_remove_queue_refused_by_a_held_message_leaves_the_queue_started(env, monkeypatch):
    """Without clients too: REMOVE_QUEUE stopped the queue before DROP_QUEUE refused it
    (ORA-00054), so the refused call left it stopped; it is asked before the stop now."""
    from sluice.store import postgres
    monkeypatch.setattr(postgres, "DDL_LOCK_TIMEOUT", "300ms")
    conn = env.conn
    _used_queue(conn)
    conn.aqadm.add_subscriber("used_q", sluice.Agent("S1"))
    conn.queue("USED_Q").enqone(conn.msgproperties(payload=b"held"))
    conn.commit()
    state = "SELECT enqueue_enabled, dequeue_enabled FROM DBA_QUEUES WHERE name = 'USED_Q'"
    with sluice.connect(env.dsn) as other:
        hold_message(other, "USED_Q")                      # not committed
        assert raised_code(conn.streams_adm.remove_queue, queue_name="USED_Q") == "ORA-00054"
        assert conn.query(state, None)[1] == [("YES", "YES")]
        other.rollback()
    conn.streams_adm.remove_queue(queue_name="USED_Q")
    assert _catalog(conn)["DBA_QUEUES"] == []
