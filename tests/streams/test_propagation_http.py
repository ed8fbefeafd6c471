"""Issue 14 §1 "HTTP" and §3: propagation between sites over HTTP, each destination a
``sluice serve`` process of its own on loopback (seed 004 "Using HTTP and HTTPS for
Oracle Streams AQ Propagation": the link's user is an AQ agent enabled for HTTP at the
destination, mapped to a database user who may enqueue)."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest

import sluice
from sluice.streams.propagation.links import description_url
from sluice.streams.propagation.runner import PropagationRunner
from sluice.streams.propagation.receiver import receive
from sluice.streams.propagation.wire import MEDIA_TYPE, Batch, Propagated, to_json

from ..idap.conftest import CliServer
from .propkit import Sites, drain, enqueue, multi_queue, rows

SERVLET = "/aqserv/servlet/AQPropServlet"
DESTINATION_SETUP = """
CREATE USER john IDENTIFIED BY welcome;
CREATE USER strm IDENTIFIED BY strm;
GRANT CONNECT, AQ_USER_ROLE TO strm;
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'strm.{q}_qt', queue_payload_type => 'RAW',
                                multiple_consumers => TRUE);
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'strm.{q}', queue_table => 'strm.{q}_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'strm.{q}');
  DBMS_AQADM.ADD_SUBSCRIBER(queue_name => 'strm.{q}', subscriber => SYS.AQ$_AGENT('APP', NULL, NULL));
  DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', enable_http => TRUE);
  DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'JOHN', db_username => 'STRM');
END;
/
"""


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    servers: list[CliServer] = []
    s.servers = servers
    yield s
    for server in servers:
        server.kill()
    s.close()


def served_site(sites, name, queue="DST", *args):
    """A destination site with queue ``strm.<queue>`` behind its own ``sluice serve``
    (given ``args``)."""
    conn = sites.open(name)
    conn.cursor().executescript(DESTINATION_SETUP.format(q=queue.lower()))
    server = CliServer(sites.dsn_of(name), *args)
    sites.servers.append(server)
    return conn, server


def http_link(conn, name, server, password="welcome", public=""):
    conn.cursor().execute(f"CREATE {public} DATABASE LINK {name} CONNECT TO john IDENTIFIED BY {password} "
                          f"USING '{server.url}{SERVLET}'")


def test_a_to_b_over_http(sites):
    b, server = served_site(sites, "dbs2")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server)
    a.propagation_adm.create_propagation("p", "src", "strm.dst", "dbs2")
    sent = [b"h%03d" % i for i in range(30)]
    enqueue(a, "SRC", sent)
    assert PropagationRunner(a, batch_size=7).run_once(force=True) == 30
    assert sorted(m.payload for m in drain(b, "STRM.DST", "APP")) == sent
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(30, 0)]
    assert rows(b, "SELECT SRC_DBNAME, TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [("DBS1", 30)]


def test_a_missing_queue_behind_a_served_site_marks_its_messages_undeliverable(sites):
    """Seed 003 "Propagation failures" over HTTP (the servlet's SOAP Fault carries the
    ORA code): the messages for a queue the remote site does not have are marked
    UNDELIVERABLE, the others go once; the schedule does not fail."""
    b, server = served_site(sites, "dbs2")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server)
    a.aqadm.schedule_propagation(queue_name="src", destination="dbs2", latency=0)
    q = a.queue("SRC")
    for i in range(3):
        q.enqone(a.msgproperties(payload=b"good%d" % i, recipients=[sluice.Agent("APP", "strm.dst@dbs2")]))
        q.enqone(a.msgproperties(payload=b"bad%d" % i, recipients=[sluice.Agent("B", "strm.nosuch@dbs2")]))
    a.commit()
    assert PropagationRunner(a, batch_size=4).run_once(force=True) == 3
    assert sorted(m.payload for m in drain(b, "STRM.DST", "APP")) == [b"good0", b"good1", b"good2"]
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES, SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES") == [(3, 0, "N")]
    assert rows(a, "SELECT MSG_STATE, USER_DATA FROM AQ$SRC_QT ORDER BY USER_DATA") == [
        ("UNDELIVERABLE", b"bad%d" % i) for i in range(3)]
    assert PropagationRunner(a).run_once(force=True) == 0
    assert drain(b, "STRM.DST", "APP") == []


def test_a_to_b_to_c_over_http(sites):
    c, server_c = served_site(sites, "dbs3")
    b, server_b = served_site(sites, "dbs2", queue="MID")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server_b)
    # STRM owns B's queue and propagates from it: it must see the link (seed 001)
    http_link(b, "dbs3", server_c, public="PUBLIC")
    a.propagation_adm.create_propagation("a_b", "src", "strm.mid", "dbs2")
    b.propagation_adm.create_propagation("b_c", "strm.mid", "strm.dst", "dbs3")
    q = a.queue("SRC")
    m = a.msgproperties(payload=b"two hops")
    q.enqone(m)
    a.commit()
    assert PropagationRunner(a).run_once(force=True) == 1
    assert PropagationRunner(b).run_once(force=True) == 1
    got = drain(c, "STRM.DST", "APP")
    assert [g.payload for g in got] == [b"two hops"] and got[0].original_msgid == m.msgid
    assert drain(b, "STRM.MID", "APP") != []          # B's own consumer has its copy too


def test_fan_out_to_two_served_sites(sites):
    b, server_b = served_site(sites, "dbs2")
    c, server_c = served_site(sites, "dbs3")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server_b)
    http_link(a, "dbs3", server_c)
    a.propagation_adm.create_propagation("to_b", "src", "strm.dst", "dbs2")
    a.propagation_adm.create_propagation("to_c", "src", "strm.dst", "dbs3")
    enqueue(a, "SRC", [b"x", b"y", b"z"])
    assert PropagationRunner(a).run_once(force=True) == 6
    for conn in (b, c):
        assert sorted(m.payload for m in drain(conn, "STRM.DST", "APP")) == [b"x", b"y", b"z"]


def test_a_wrong_link_password_is_recorded(sites):
    b, server = served_site(sites, "dbs2")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server, password="nope")
    a.propagation_adm.create_propagation("p", "src", "strm.dst", "dbs2")
    enqueue(a, "SRC", [b"x"])
    PropagationRunner(a).run_once(force=True)
    [(failures, error)] = rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
    assert failures == 1 and error.startswith("ORA-01017")
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(1,)]


def _batch(*dests):
    return Batch("DBS9", "X.SRC", [Propagated(d, bytes([i]) * 16, bytes([i]) * 16, "RAW", b"p%d" % i)
                                   for i, d in enumerate(dests)])


def test_a_malformed_batch_is_a_soap_fault_and_nothing_is_committed(sites):
    b, server = served_site(sites, "dbs2")
    auth = ("john", "welcome")
    headers = {"Content-Type": MEDIA_TYPE}
    r = httpx.post(server.url + SERVLET, content=b'{"source_site": "X", "messages": [[1, 2]]}',
                   headers=headers, auth=auth)
    assert r.status_code == 500 and b"Fault" in r.content and b"ORA-00600" in r.content
    # a good message and one for a queue that does not exist: neither is committed
    r = httpx.post(server.url + SERVLET, content=to_json(_batch("STRM.DST", "STRM.NOPE")),
                   headers=headers, auth=auth)
    assert r.status_code == 500 and b"ORA-24010" in r.content
    assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT") == [(0,)]
    r = httpx.post(server.url + SERVLET, content=to_json(_batch("STRM.DST")), headers=headers, auth=auth)
    assert r.status_code == 200 and r.json() == {"received": 1}
    # the same batch again (its answer was lost): acknowledged, not enqueued twice
    r = httpx.post(server.url + SERVLET, content=to_json(_batch("STRM.DST")), headers=headers, auth=auth)
    assert r.status_code == 200 and r.json() == {"received": 0}
    assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT") == [(1,)]
    assert httpx.post(server.url + SERVLET, content=to_json(_batch("STRM.DST")), headers=headers,
                      auth=("john", "bad")).status_code == 401


def test_the_seed_004_connect_descriptor():
    assert description_url("(DESCRIPTION=(ADDRESS=(PROTOCOL=http)(HOST=webdest.oracle.com)(PORT=8081)))") == \
        "http://webdest.oracle.com:8081/aqserv/servlet/AQPropServlet"
    assert description_url("(DESCRIPTION=(ADDRESS=(PROTOCOL=tcp)(HOST=h)(PORT=1521)))") is None


def test_run_loop_propagates_within_the_latency(sites):
    """The runner as a process runs it: latency 0, a message enqueued by another session
    arrives without anyone calling run_once."""
    import threading
    b, server = served_site(sites, "dbs2")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server)
    a.aqadm.schedule_propagation(queue_name="src", destination="dbs2", latency=0)
    runner = PropagationRunner(sluice.connect(sites.dsn_of("dbs1")))
    stop = threading.Event()
    t = threading.Thread(target=runner.run, args=(stop,), daemon=True)
    t.start()
    try:
        q = a.queue("SRC")
        q.enqone(a.msgproperties(payload=b"soon", recipients=[sluice.Agent("APP", "strm.dst@dbs2")]))
        a.commit()
        deadline = time.monotonic() + 20
        got = []
        while not got and time.monotonic() < deadline:
            got = drain(b, "STRM.DST", "APP")
            time.sleep(0.05)
        assert [m.payload for m in got] == [b"soon"]
    finally:
        stop.set()
        t.join(10)
        runner.close()
        runner.conn.close()


def test_secure_destination_queue_behind_a_served_site(sites):
    """Seed 001 "Secure Queues" over HTTP: the link's agent maps to STRM, who may enqueue
    into JOHN's secure queue only as a sender agent mapped to STRM too; until the
    message's sender is, the schedule records the error and nothing is enqueued."""
    b, server = served_site(sites, "dbs2")
    b.cursor().executescript("""
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'john.sec_qt', queue_payload_type => 'RAW', secure => TRUE);
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'john.sec', queue_table => 'john.sec_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'john.sec');
  DBMS_AQADM.GRANT_QUEUE_PRIVILEGE(privilege => 'ENQUEUE', queue_name => 'john.sec', grantee => 'strm');
END;
/
""")
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    http_link(a, "dbs2", server)
    a.propagation_adm.create_propagation("p", "src", "john.sec", "dbs2")
    enqueue(a, "SRC", [b"s"], sender_id=sluice.Agent("ORDERS_APP"))
    assert PropagationRunner(a).run_once(force=True) == 0
    [(failures, error)] = rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
    assert failures == 1 and error.startswith("ORA-01031") and "ORA-24093" in error, error
    assert rows(b, "SELECT COUNT(*) FROM JOHN.AQ$SEC_QT") == [(0,)]
    b.aqadm.create_aq_agent(agent_name="orders_app")
    b.aqadm.enable_db_access(agent_name="orders_app", db_username="strm")
    assert PropagationRunner(a, clock=lambda: time.time() + 31).run_once() == 1
    assert [m.payload for m in drain(b, "JOHN.SEC")] == [b"s"]


# -- bad batches: a clear fault, nothing written, nothing in the server's log, and the
# sender's next good batch goes through

def _post(server, body):
    return httpx.post(server.url + SERVLET, content=body, headers={"Content-Type": MEDIA_TYPE},
                      auth=("john", "welcome"))


def _altered(field, value):
    """The JSON of ``_batch("STRM.DST")`` with ``field`` set to ``value``: a key of the batch,
    or a field of its message by number (wire.to_json's order: queue, id, original id,
    payload type, payload, priority, delay, expiration, correlation, sender, recipients,
    group, original queue, enqueue time)."""
    doc = json.loads(to_json(_batch("STRM.DST")))
    if isinstance(field, str):
        doc[field] = value
    else:
        doc["messages"][0][field] = value
    return json.dumps(doc).encode()


def _refused(b, server, body, code):
    r = _post(server, body)
    assert r.status_code == 500 and b"Fault" in r.content and f"ORA-{code:05d}".encode() in r.content, \
        (body[:200], r.content[:600])
    assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT") == [(0,)]
    assert rows(b, "SELECT COUNT(*) FROM SLUICE_PROPAGATION_INDOUBT") == [(0,)]


def _then_a_good_batch_goes_through(b, server):
    r = _post(server, to_json(_batch("STRM.DST")))
    assert r.status_code == 200 and r.json() == {"received": 1}, r.content
    assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT") == [(1,)]
    server.kill()
    log = server.proc.stdout.read()
    assert b"Traceback" not in log and b"internal error" not in log, log.decode()


def test_a_message_id_of_another_form_is_refused(sites):
    """A Sluice message id is 16 bytes (RAW(16)), 32 hex digits on the wire: an empty one
    was committed into a de-duplication row no later batch of the site could read."""
    b, server = served_site(sites, "dbs2")
    for msgid in ["", "aa" * 50_000, "aa" * 15, "aa" * 17, "a" * 31, "zz" * 16, " a" * 16, 7, None]:
        _refused(b, server, _altered(1, msgid), 600)
    doc = json.loads(to_json(_batch("STRM.DST")))
    doc["acked"] = [["STRM.DST", ""]]
    _refused(b, server, json.dumps(doc).encode(), 600)
    _then_a_good_batch_goes_through(b, server)


def test_a_row_an_empty_message_id_left_in_doubt_blocks_nothing(sites):
    """A store whose receiver took an empty message id before the ids were checked holds a
    de-duplication row of MSG_COUNT 1 and no bytes: it protects nothing, and the site's
    next batch (a resend, which reads the rows first) goes through and drops it."""
    b, server = served_site(sites, "dbs2")
    empty = Batch("DBS9", "X.SRC", [Propagated("STRM.DST", b"", b"", "RAW", b"old")])
    assert receive(b.context, empty) == 1
    b.commit()
    assert rows(b, "SELECT MSG_COUNT, LENGTH(MSGIDS) FROM SLUICE_PROPAGATION_INDOUBT") == [(1, 0)]
    r = _post(server, to_json(_batch("STRM.DST")))
    assert r.status_code == 200 and r.json() == {"received": 1}, r.content
    assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT") == [(2,)]
    assert rows(b, "SELECT MSG_COUNT, LENGTH(MSGIDS) FROM SLUICE_PROPAGATION_INDOUBT") == [(1, 16)]
    server.kill()
    assert b"Traceback" not in server.proc.stdout.read()


NAN, INF = float("nan"), float("inf")
MALFORMED = [(9, ["A", "B", 1, 2]), (9, "abcd"), (9, {"a": 1}), (9, [1, None, 0]), (9, ["A", None, "1"]),
             (12, ["a"]), (12, "SRC"), (8, [1]), (8, {}), (11, 5), (2, ""), (2, 5), (4, [1]), (4, {"s": 1}),
             (4, {"b": 1}), (5, "5"), (5, 1.5), (5, True), (5, None), (6, "1"), (7, [1]), (10, "APP"),
             (10, [1]), (13, NAN), (13, "x"), (0, 1), (3, None), ("source_site", {"a": 1}),
             ("messages", {}), ("acked", "x"),
             # a lone surrogate: no store can hold it
             (8, "\ud800"), (0, "STRM.DST\ud800"), (4, {"s": "\ud800"}), (10, ["\ud800"]), (11, "g\udfff"),
             (9, ["\ud800", None, 0]), (12, ["\ud800", "Q"]), ("source_site", "\ud800")]
OUT_OF_RANGE = [(5, 10**30), (5, -2**63 - 1), (9, ["A", None, 10**30]),
                (7, NAN), (7, INF), (7, 1e300), (7, 2**31), (6, NAN), (6, INF), (6, 1e300)]


def test_a_malformed_message_is_a_fault_and_nothing_is_written(sites):
    """Fields of the wrong shape or type, numbers out of range and strings no store can
    hold reached the store and came back as ORA-00600 [TypeError …] with a traceback in
    the server's log — or were committed (a list as the correlation on PostgreSQL)."""
    b, server = served_site(sites, "dbs2")
    for field, value in MALFORMED:
        _refused(b, server, _altered(field, value), 600)
    for field, value in OUT_OF_RANGE:
        _refused(b, server, _altered(field, value), 1426)
    _refused(b, server, _altered(6, -1), 25208)
    _refused(b, server, _altered(7, -1), 25209)
    for body in [b"[" * 100_000, b'{"source_site": "DBS9", "source_queue": "X.SRC", "messages": [' + b"[" * 100_000,
                 b"[]", b'"x"', b'{"source_site": "DBS9", "source_queue": "X.SRC", "messages": ["a" ]}',
                 _altered("messages", [["STRM.DST"] * 14])]:
        _refused(b, server, body, 600)
    _then_a_good_batch_goes_through(b, server)


def test_a_payload_in_another_stored_form_is_ora_25215(sites):
    """Text into a RAW queue was committed on SQLite (its consumer's dequeue then failed
    with ORA-00600 [TypeError]) and refused as ORA-00900 on PostgreSQL; bytes into a
    queue of text likewise: ORA-25215, as an enqueue of such a payload gives."""
    b, server = served_site(sites, "dbs2")
    b.cursor().executescript("""
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'strm.jq_qt', queue_payload_type => 'JSON');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'strm.jq', queue_table => 'strm.jq_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'strm.jq');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'strm.xq_qt', queue_payload_type => 'XMLTYPE');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'strm.xq', queue_table => 'strm.xq_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'strm.xq');
END;
/
""")
    _refused(b, server, _altered(4, {"s": "hello"}), 25215)
    xml = json.loads(_altered(0, "STRM.XQ"))
    xml["messages"][0][3:5] = ["XMLTYPE", {"s": "<a><b></a>"}]
    _refused(b, server, json.dumps(xml).encode(), 25215)
    doc = json.loads(_altered(0, "STRM.JQ"))
    doc["messages"][0][3] = "JSON"
    _refused(b, server, json.dumps(doc).encode(), 25215)
    # text the queue's type cannot read: committed, its consumer's every dequeue then failed
    for text in ("not json", '{"a":', "[1, 2", "\u0000"):
        doc["messages"][0][1], doc["messages"][0][4] = uuid.uuid4().hex, {"s": text}
        _refused(b, server, json.dumps(doc).encode(), 25215)
    assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$JQ_QT") == [(0,)]
    doc["messages"][0][4] = {"s": '{"a":1}'}
    r = _post(server, json.dumps(doc).encode())
    assert r.status_code == 200 and r.json() == {"received": 1}, r.content
    assert [m.payload for m in drain(b, "STRM.JQ")] == [{"a": 1}]
    _then_a_good_batch_goes_through(b, server)


def test_a_sender_without_a_protocol_is_protocol_0(sites):
    """A NULL protocol is SYS.AQ$_AGENT's default: a sender [name, NULL, NULL] was refused
    with an InterfaceError that carried no ORA code."""
    b, server = served_site(sites, "dbs2")
    r = _post(server, _altered(9, ["SCOTT", None, None]))
    assert r.status_code == 200 and r.json() == {"received": 1}, r.content
    assert [(m.sender_id.name, m.sender_id.protocol) for m in drain(b, "STRM.DST", "APP")] == [("SCOTT", 0)]


def test_an_error_quoting_characters_xml_cannot_carry_is_still_a_fault(sites):
    """A queue name, payload type or sender with a control character is valid JSON text;
    the error quoting it (ORA-24010, ORA-25215 …) made a Fault lxml refused to write: an
    ORA-00600 with a traceback in the server's log instead of the error."""
    b, server = served_site(sites, "dbs2")
    _refused(b, server, _altered(0, "STRM.\x00DST"), 24010)
    _refused(b, server, _altered(3, "RAW\x1b"), 25215)
    _then_a_good_batch_goes_through(b, server)
