"""HTTP sessions under concurrency, and privileges that change while a session is open
(seed 004 "User Sessions and Transactions", "Database Sessions"; seeds 001/002 "Secure
Queues"): two requests of one session take turns; a receive that waits holds up only its
own session; concurrent sessions never see each other's uncommitted work and get each
message once; a REVOKE or DISABLE_DB_ACCESS counts from the next request, while what the
session did before can still be committed; on a secure queue the sender and the consumer
must be AQ agents mapped to the database user the servlet acts as."""

from __future__ import annotations

import threading
import time

import sluice

from .conftest import commit_doc, count, fault_of, msgids, receive, received, send_doc, send_raw


def _raw(response) -> list[str]:
    return [m.findtext(".//{*}raw") for m in received(response)]


def _run(*workers) -> None:
    """Run the workers in threads; an exception in one fails the test."""
    errors: list[BaseException] = []

    def guarded(fn):
        try:
            fn()
        except BaseException as e:      # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=guarded, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]


def test_two_requests_of_one_session_take_turns(servlet, store):
    """A send posted while a receive of the same session waits runs after it (one request
    of a session at a time), and both belong to the session's one transaction."""
    a = servlet.client()
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "00", commit=True), a))     # the cookie
    assert _raw(servlet.post(receive("AQUSER.RAW_MSGQ", commit=True), a)) == ["00"]
    out = {}
    waiting = threading.Thread(target=lambda: out.update(r=servlet.post(receive("AQUSER.JSON_Q", wait=2), a)))
    waiting.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "01"), a))
    assert time.monotonic() - t0 > 1.0           # it waited for the receive to end
    waiting.join(10)
    assert received(out["r"]) == []
    assert count(store, "AQUSER.RAW_MSGQ") == 0      # uncommitted
    servlet.post(commit_doc(), a)
    assert count(store, "AQUSER.RAW_MSGQ") == 1


def test_concurrent_sends_of_one_session_are_all_rolled_back(servlet, store):
    a = servlet.client()
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "00", commit=True), a))
    assert _raw(servlet.post(receive("AQUSER.RAW_MSGQ", commit=True), a)) == ["00"]

    def sends():
        for k in range(8):
            msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", f"{k:02X}"), a))
    _run(*[sends] * 3)
    assert count(store, "AQUSER.RAW_MSGQ") == 0
    assert servlet.post(commit_doc("AQXmlRollback"), a).status_code == 200
    assert count(store, "AQUSER.RAW_MSGQ") == 0


def test_a_waiting_receive_holds_up_only_its_own_session(servlet):
    """Session A has an open transaction and waits in a receive; B sends, commits and
    receives meanwhile without waiting for A."""
    a, b = servlet.client(), servlet.client()
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "AA"), a))
    waiting = threading.Thread(target=lambda: servlet.post(receive("AQUSER.JSON_Q", wait=6), a))
    waiting.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "BB", commit=True), b))
    assert _raw(servlet.post(receive("AQUSER.RAW_MSGQ", commit=True), b)) == ["BB"]    # not A's
    assert time.monotonic() - t0 < 4         # A's wait lasts 6 s
    waiting.join(15)


def test_concurrent_sessions_see_only_their_own_uncommitted_work(servlet, store):
    clients = [servlet.client() for _ in range(3)]

    def work(i):
        c = clients[i]
        for k in range(6):
            mine, theirs = f"c{i}k{k}", f"c{(i + 1) % 3}k{k}"
            msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", correlation=mine), c))
            first = "<navigation_mode>FIRST_MESSAGE</navigation_mode>"
            select = "<selector><correlation>{}</correlation></selector>" + first
            assert received(servlet.post(receive("AQUSER.RAW_MSGQ", extra=select.format(theirs)), c)) == []
            assert len(received(servlet.post(receive("AQUSER.RAW_MSGQ", extra=select.format(mine)), c))) == 1
            servlet.post(commit_doc("AQXmlRollback" if k % 2 else "AQXmlCommit"), c)
    _run(*[lambda i=i: work(i) for i in range(3)])
    assert count(store, "AQUSER.RAW_MSGQ") == 0


def test_concurrent_receivers_get_each_message_once(servlet):
    """Four sessions receive from one queue at once, some giving messages back
    (AQXmlRollback): every message is received and committed exactly once."""
    sender = servlet.client()
    sent = [f"{k:02X}" for k in range(12)]
    for payload in sent:
        msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", payload, commit=True), sender))
    got: list[str] = []
    lock = threading.Lock()

    def work(c):
        for k in range(8):
            give_back = k % 3 == 2
            taken = _raw(servlet.post(receive("AQUSER.RAW_MSGQ", commit=not give_back), c))
            if give_back:
                servlet.post(commit_doc("AQXmlRollback"), c)
            else:
                with lock:
                    got.extend(taken)
    _run(*[lambda c=servlet.client(): work(c) for _ in range(4)])
    while rest := _raw(servlet.post(receive("AQUSER.RAW_MSGQ", commit=True), sender)):
        got += rest
    assert sorted(got) == sent


def _clerk(store, grant: str | None = "ALL") -> None:
    """AQ agent KIM (HTTP), mapped to CLERK, who may use AQUSER.RAW_MSGQ."""
    with sluice.connect(store) as admin:
        cur = admin.cursor()
        cur.execute("CREATE USER kim IDENTIFIED BY kimpw")
        cur.execute("CREATE USER clerk IDENTIFIED BY clerk")
        cur.execute("GRANT CREATE SESSION, AQ_USER_ROLE TO clerk")
        admin.aqadm.create_aq_agent(agent_name="KIM", enable_http=True)
        admin.aqadm.enable_db_access(agent_name="KIM", db_username="CLERK")
        if grant:
            admin.aqadm.grant_queue_privilege(privilege=grant, queue_name="AQUSER.RAW_MSGQ", grantee="CLERK")


def test_a_revoke_counts_from_the_next_request_of_an_open_session(servlet, store):
    """Oracle checks privileges at each call: the send after the REVOKE fails, the receive
    too; the session's earlier send is still its to commit."""
    _clerk(store)
    k = servlet.client("kim", "kimpw")
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "01"), k))
    with sluice.connect(store) as admin:
        admin.aqadm.revoke_queue_privilege(privilege="ALL", queue_name="AQUSER.RAW_MSGQ", grantee="CLERK")
    assert fault_of(servlet.post(send_raw("AQUSER.RAW_MSGQ", "02"), k))["error_code"] == "1031"
    assert fault_of(servlet.post(receive("AQUSER.RAW_MSGQ"), k))["error_code"] == "1031"
    assert servlet.post(commit_doc(), k).status_code == 200
    assert count(store, "AQUSER.RAW_MSGQ") == 1


def test_disable_db_access_counts_from_the_next_request(servlet, store):
    a = servlet.client()
    msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", "01"), a))
    with sluice.connect(store) as admin:
        admin.aqadm.disable_db_access(agent_name="JOHN", db_username="AQUSER")
    f = fault_of(servlet.post(send_raw("AQUSER.RAW_MSGQ", "02"), a))
    assert f["error_code"] == "1031"
    assert servlet.post(commit_doc(), a).status_code == 200
    assert count(store, "AQUSER.RAW_MSGQ") == 1


def test_a_secure_queue_takes_only_agents_mapped_to_the_user(servlet, store):
    """Seed 001 "Secure Queues": SET_UP_QUEUE makes CLERK a secure queue user (agent CLERK);
    agent KIM is mapped to CLERK too.  A send's sender_id and a receive's consumer_name
    must be one of them (ORA-24093 for SCOTT)."""
    _clerk(store, grant=None)
    with sluice.connect(store) as admin:
        admin.cursor().execute("CREATE USER strm IDENTIFIED BY strm")
        admin.streams_adm.set_up_queue(queue_table="strm.sq_qt", queue_name="strm.sq", queue_user="CLERK")
        admin.aqadm.add_subscriber(queue_name="strm.sq", subscriber=sluice.Agent("CLERK"))
    k = servlet.client("kim", "kimpw")
    doc = send_doc("STRM.SQ", "<raw>0A</raw>", header="<correlation>c</correlation>")    # sender scott
    f = fault_of(servlet.post(doc, k))
    assert f["error_code"] == "1031" and "ORA-24093: AQ agent SCOTT" in f["error_message"]
    no_sender = doc.replace("<sender_id><agent_name>scott</agent_name></sender_id>", "")
    assert fault_of(servlet.post(no_sender, k))["error_code"] == "31154"   # the schema wants one
    for sender in ("KIM", "CLERK"):
        msgids(servlet.post(doc.replace("scott", sender), k))
    f = fault_of(servlet.post(receive("STRM.SQ", consumer="SCOTT"), k))
    assert "ORA-24093: AQ agent SCOTT" in f["error_message"]
    got = received(servlet.post(receive("STRM.SQ", consumer="CLERK", commit=True,
                                        extra="<batch_size>10</batch_size>"), k))
    assert len(got) == 2
