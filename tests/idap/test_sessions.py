"""Issue 7, acceptance 2: HTTP sessions carry one transaction across requests (seed 004
"User Sessions and Transactions"); idle sessions are rolled back; the pool's limits."""

from __future__ import annotations

import threading
import time

import pytest

import sluice

from .conftest import (COOKIE_NAME, commit_doc, count, fault_of, msgids, receive, received,
                       send_doc, send_raw, start_servlet)


def test_send_then_receive_in_one_session_before_commit(servlet, store):
    a, b = servlet.client(), servlet.client()
    sent = msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "CAFE"), a))[0]
    assert COOKIE_NAME in a.cookies
    # another session does not see the uncommitted message
    assert received(servlet.post(receive("AQUSER.RAW_MSGQ"), b)) == []
    # the same session (same cookie) does: its own transaction
    mine = received(servlet.post(receive("AQUSER.RAW_MSGQ"), a))
    assert [m.findtext(".//{*}message_id") for m in mine] == [sent]
    servlet.post(commit_doc(), a)
    assert count(store, "AQUSER.RAW_MSGQ") == 0      # enqueued and dequeued in one transaction


def test_commit_makes_it_visible_to_other_sessions(servlet, store):
    a, b = servlet.client(), servlet.client()
    sent = msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ"), a))[0]
    assert received(servlet.post(receive("AQUSER.RAW_MSGQ"), b)) == []
    assert servlet.post(commit_doc(), a).status_code == 200
    got = received(servlet.post(receive("AQUSER.RAW_MSGQ", commit=True), b))
    assert [m.findtext(".//{*}message_id") for m in got] == [sent]


def test_rollback_restores_a_received_message(servlet, store):
    a, b = servlet.client(), servlet.client()
    servlet.post(send_raw("AQUSER.RAW_MSGQ", commit=True), a)
    assert len(received(servlet.post(receive("AQUSER.RAW_MSGQ"), a))) == 1
    assert received(servlet.post(receive("AQUSER.RAW_MSGQ"), b)) == []      # locked by a
    assert servlet.post(commit_doc("AQXmlRollback"), a).status_code == 200
    got = received(servlet.post(receive("AQUSER.RAW_MSGQ"), b))
    assert len(got) == 1 and got[0].findtext(".//{*}delivery_count") == "1"   # one failed attempt


def test_immediate_visibility_is_not_part_of_the_transaction(servlet, store):
    a = servlet.client()
    servlet.post(send_raw("AQUSER.RAW_MSGQ", options="<visibility>IMMEDIATE</visibility>"), a)
    servlet.post(commit_doc("AQXmlRollback"), a)
    assert count(store, "AQUSER.RAW_MSGQ") == 1


def test_an_idle_session_is_rolled_back_after_the_timeout(store):
    s = start_servlet(store, session_timeout=0.4)
    try:
        a, b = s.client(), s.client()
        s.post(send_raw("AQUSER.RAW_MSGQ", "01", commit=True), a)
        assert len(received(s.post(receive("AQUSER.RAW_MSGQ"), a))) == 1     # locked by a
        s.post(send_raw("AQUSER.RAW_MSGQ", "02"), a)                        # uncommitted
        time.sleep(1.5)
        # the dequeue was rolled back (message 01 is back), the enqueue is gone
        got = received(s.post(receive("AQUSER.RAW_MSGQ", commit=True), b))
        assert [m.findtext(".//{*}raw") for m in got] == ["01"]
        # a's cookie names an ended session: its commit starts (and commits) a new, empty one
        assert s.post(commit_doc(), a).status_code == 200
        assert count(store, "AQUSER.RAW_MSGQ") == 0
    finally:
        s.server.stop()


def test_a_waiting_receive_gets_a_message_committed_meanwhile(servlet):
    a, b = servlet.client(), servlet.client()
    result = {}

    def waiter():
        result["r"] = servlet.post(receive("AQUSER.RAW_MSGQ", wait=10, commit=True), a)

    t = threading.Thread(target=waiter)
    t0 = time.monotonic()
    t.start()
    time.sleep(0.3)
    servlet.post(send_raw("AQUSER.RAW_MSGQ", "BEEF", commit=True), b)
    t.join(15)
    assert len(received(result["r"])) == 1
    assert time.monotonic() - t0 < 5


def test_a_wait_time_ends_with_an_empty_message_set(servlet):
    t0 = time.monotonic()
    r = servlet.post(receive("AQUSER.RAW_MSGQ", wait=1))
    assert 0.9 < time.monotonic() - t0 < 8
    assert received(r) == [] and "<message_count>0</message_count>" in r.text


def test_pool_full_of_open_transactions_refuses_with_ora_24418(store):
    s = start_servlet(store, pool_max=2)
    try:
        a, b, c = s.client(), s.client(), s.client()
        for client in (a, b):
            assert s.post(send_raw("AQUSER.RAW_MSGQ"), client).status_code == 200
        f = fault_of(s.post(send_raw("AQUSER.RAW_MSGQ"), c))
        assert f["faultcode"] == "SOAP-ENV:Server" and f["error_code"] == "24418"
        s.post(commit_doc(), a)          # a's connection has no transaction any more …
        assert s.post(send_raw("AQUSER.RAW_MSGQ", commit=True), c).status_code == 200   # … c takes it
        s.post(commit_doc(), b)
        assert count(store, "AQUSER.RAW_MSGQ") == 3
    finally:
        s.server.stop()


def test_many_cookieless_requests_do_not_exhaust_the_pool(store):
    s = start_servlet(store, pool_max=2)
    try:
        for _ in range(6):      # each request is a new session; idle connections are reused
            fresh = s.client()
            assert s.post(send_raw("AQUSER.RAW_MSGQ", commit=True), fresh).status_code == 200
        assert count(store, "AQUSER.RAW_MSGQ") == 6
    finally:
        s.server.stop()


def test_shutdown_rolls_back_open_transactions_and_stops_waits(store):
    s = start_servlet(store)
    a, b = s.client(), s.client()
    s.post(send_raw("AQUSER.RAW_MSGQ"), a)          # never committed
    result = {}

    def waiter():
        try:
            result["r"] = s.post(receive("AQUSER.RAW_MSGQ", wait=-1), b)   # wait forever
        except Exception as e:          # the server may close the connection: fine
            result["e"] = e

    t = threading.Thread(target=waiter)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    s.server.stop()
    t.join(15)
    assert not t.is_alive() and time.monotonic() - t0 < 10
    assert count(store, "AQUSER.RAW_MSGQ") == 0


@pytest.mark.parametrize("wait", [0, 2])
def test_sessions_do_not_cross_agents(servlet, store, wait):
    """A cookie is honoured only for the agent it was issued to."""
    with sluice.connect(store) as admin:
        admin.cursor().execute("CREATE USER mary IDENTIFIED BY lamb")
        admin.aqadm.create_aq_agent(agent_name="MARY", enable_http=True)
        admin.aqadm.enable_db_access(agent_name="MARY", db_username="AQUSER")
    john, mary = servlet.client(), servlet.client("mary", "lamb")
    servlet.post(send_raw("AQUSER.RAW_MSGQ"), john)
    mary.cookies.update(john.cookies)
    assert received(servlet.post(receive("AQUSER.RAW_MSGQ", wait=wait), mary)) == []


# -- issue 11, item 3: a session sees what is committed after its empty receive ----------
def _emp(empno: int) -> str:
    return f"<EMP_TYP><EMPNO>{empno}</EMPNO><ENAME>E{empno}</ENAME><DEPTNO>60</DEPTNO></EMP_TYP>"


# (queue, AQXmlSend or AQXmlPublish, payloads, consumer): the multi-consumer ADT
# queue with the rule-based subscriber S, a single-consumer ADT queue, a RAW queue
QUEUES = {
    "adt-topic-rule": ("AQUSER.EMP_TOPIC", "AQXmlPublish", [_emp(n) for n in (1, 2, 3, 4)], "S"),
    "adt-queue": ("AQUSER.EMP_QUE", "AQXmlSend", [_emp(n) for n in (1, 2, 3, 4)], None),
    "raw-queue": ("AQUSER.RAW_MSGQ", "AQXmlSend", [f"<raw>0{n}</raw>" for n in (1, 2, 3, 4)], None),
}


@pytest.fixture(params=list(QUEUES))
def queue(request, store):
    name, method, payloads, consumer = QUEUES[request.param]
    if consumer:
        with sluice.connect(store) as admin:
            admin.aqadm.add_subscriber(queue_name=name, subscriber=sluice.Agent(consumer),
                                       rule="tab.user_data.deptno = 60")
    return name, method, payloads, consumer


def _take(servlet, client, queue, wait: int, commit: bool = False) -> list[str]:
    name, _, _, consumer = queue
    got = received(servlet.post(receive(name, wait=wait, consumer=consumer, commit=commit,
                                        extra="<batch_size>10</batch_size>"), client))
    return [m.findtext(".//{*}message_id") for m in got]


def test_messages_committed_after_an_empty_receive_are_received(servlet, queue):
    """The issue's steps: A publishes three messages and leaves them uncommitted, B's
    receive finds nothing, A commits, B's next receive gets all three."""
    name, method, payloads, _ = queue
    a, b = servlet.client(), servlet.client()
    sent = msgids(servlet.post(send_doc(name, payloads[:3], commit=False, method=method), a))
    assert _take(servlet, b, queue, wait=0) == []
    assert _take(servlet, b, queue, wait=1) == []
    servlet.post(commit_doc(), a)
    assert _take(servlet, b, queue, wait=0) == sent


def test_an_empty_receive_that_waited_leaves_no_stale_position(servlet, queue):
    """B's position is past A's uncommitted messages (it took one enqueued after them and
    committed first); its receive that waits in vain reaches the end of the queue, which
    puts the position back at the beginning (seed 003), so once A commits, B's next
    receive — not waiting — gets A's messages.  It used to keep the old position and
    answer with nothing."""
    name, method, payloads, _ = queue
    a, b, c = servlet.client(), servlet.client(), servlet.client()
    sent = msgids(servlet.post(send_doc(name, payloads[:3], commit=False, method=method), a))
    later = msgids(servlet.post(send_doc(name, payloads[3], commit=True, method=method), c))
    assert _take(servlet, b, queue, wait=1, commit=True) == later
    assert _take(servlet, b, queue, wait=1) == []
    servlet.post(commit_doc(), a)
    assert _take(servlet, b, queue, wait=0, commit=True) == sent
    assert count(servlet.dsn, name) == 0
