"""Seed 003 "Waiting for Messages": LISTEN on several queues."""

import threading
import time

import pytest

import sluice
from tests.conftest import make_queue

A = sluice.Agent


@pytest.fixture
def queues(conn):
    make_queue(conn, "Q1")
    make_queue(conn, "Q2")
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT")
    conn.aqadm.start_queue(queue_name="T")
    return conn


def test_listen_returns_the_first_agent_with_a_message(queues):
    conn = queues
    conn.queue("Q2").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    agent, mode = conn.aq.listen(agent_list=[A(None, "Q1"), A(None, "Q2")], wait=0)
    assert agent == A(None, "SLUICE.Q2") and mode == sluice.MSG_PERSISTENT
    # LISTEN does not dequeue: the message is still there
    q = conn.queue("Q2")
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert q.deqone().payload == b"x"


def test_listen_is_fair_when_the_list_is_rotated(queues):
    conn = queues
    for name in ("Q1", "Q2"):
        conn.queue(name).enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    agents = [A(None, "Q1"), A(None, "Q2")]
    assert conn.aq.listen(agents, 0)[0].address == "SLUICE.Q1"
    assert conn.aq.listen(agents[1:] + agents[:1], 0)[0].address == "SLUICE.Q2"


def test_listen_for_a_consumer_of_a_multi_consumer_queue(queues):
    conn = queues
    conn.queue("T").enqone(conn.msgproperties(payload=b"x", recipients=["APP2"]))
    conn.commit()
    agents = [A("APP1", "T"), A("APP2", "T")]
    assert conn.aq.listen(agents, 0)[0] == A("APP2", "SLUICE.T")


def test_listen_waits_and_times_out(queues, dsn):
    conn = queues
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aq.listen([A(None, "Q1")], 0)
    assert e.value.full_code == "ORA-25254"
    other = sluice.connect(dsn)
    try:
        def later():
            time.sleep(0.3)
            other.queue("Q1").enqone(other.msgproperties(payload=b"late"))
            other.commit()
        t = threading.Thread(target=later)
        t.start()
        t0 = time.monotonic()
        agent, _ = conn.aq.listen([A(None, "Q1"), A(None, "Q2")], 10)
        assert agent.address == "SLUICE.Q1" and time.monotonic() - t0 < 5
        t.join()
    finally:
        other.close()
    t0 = time.monotonic()
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aq.listen([A(None, "Q2")], 1)
    assert e.value.full_code == "ORA-25254" and 0.9 < time.monotonic() - t0 < 3


def test_listen_through_plsql(queues):
    from click.testing import CliRunner
    conn = queues
    conn.queue("Q2").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    out = []
    from sluice import plsql
    r = plsql.execute(conn, """DECLARE
      agent_list  DBMS_AQ.AQ$_AGENT_LIST_T;
      agent       SYS.AQ$_AGENT;
      mode        PLS_INTEGER;
    BEGIN
      agent_list := DBMS_AQ.AQ$_AGENT_LIST_T(SYS.AQ$_AGENT(NULL, 'Q1', NULL), SYS.AQ$_AGENT(NULL, 'Q2', NULL));
      DBMS_AQ.LISTEN(agent_list => agent_list, wait => 0, listen_delivery_mode => DBMS_AQ.PERSISTENT,
                     agent => agent, message_delivery_mode => mode);
      DBMS_OUTPUT.PUT_LINE('message on ' || agent.address);
    END;""")
    assert r.output == ["message on SLUICE.Q2"]


def _buffered(conn, name):
    q = conn.queue(name)
    q.enqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    return q


def test_listen_delivery_mode_chooses_which_messages_count(queues):
    """listen_delivery_mode: persistent messages (the default), buffered ones, or both; the
    message's own delivery mode comes back with the agent."""
    conn = queues
    _buffered(conn, "Q1").enqone(conn.msgproperties(payload=b"in memory"))
    conn.queue("Q2").enqone(conn.msgproperties(payload=b"persistent"))
    conn.commit()
    agents = [A(None, "Q1"), A(None, "Q2")]
    assert conn.aq.listen(agents, 0) == (A(None, "SLUICE.Q2"), sluice.MSG_PERSISTENT)
    assert conn.aq.listen(agents, 0, sluice.MSG_BUFFERED) == (A(None, "SLUICE.Q1"), sluice.MSG_BUFFERED)
    assert conn.aq.listen(agents, 0, sluice.MSG_PERSISTENT_OR_BUFFERED) == (A(None, "SLUICE.Q1"),
                                                                           sluice.MSG_BUFFERED)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aq.listen([A(None, "Q2")], 0, sluice.MSG_BUFFERED)
    assert e.value.full_code == "ORA-25254"
    with pytest.raises(sluice.InterfaceError):
        conn.aq.listen(agents, 0, 7)


def test_listen_for_buffered_messages_wakes_on_a_buffered_enqueue(queues):
    conn = queues
    q = _buffered(conn, "Q2")

    def later():
        time.sleep(0.1)
        q.enqone(conn.msgproperties(payload=b"late"))
    t = threading.Thread(target=later)
    t.start()
    t0 = time.monotonic()
    agent, mode = conn.aq.listen([A(None, "Q1"), A(None, "Q2")], 10, sluice.MSG_BUFFERED)
    elapsed = time.monotonic() - t0
    t.join()
    assert (agent.address, mode) == ("SLUICE.Q2", sluice.MSG_BUFFERED)
    assert elapsed < 0.9     # woken by the enqueue, not by a periodic re-check
