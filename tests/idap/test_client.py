"""sluice.idap.Client and ``sluice idap send|receive`` against a running servlet."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.idap import Client

from .conftest import AGENT, AGENT_PASSWORD, SERVLET, count, example


@pytest.fixture
def client(servlet):
    c = Client(servlet.server.url, AGENT, AGENT_PASSWORD, servlet=SERVLET)
    yield c
    c.close()


def test_send_and_receive_raw_in_one_http_session(client, servlet, store):
    ids = client.send("AQUSER.RAW_MSGQ", [b"\x00\x01hello", b"second"], correlation="c1", priority=2,
                      sender_id="scott")
    assert len(ids) == 2 and all(len(i) == 32 for i in ids)
    assert count(store, "AQUSER.RAW_MSGQ") == 0            # the session's transaction is open
    got = client.receive("AQUSER.RAW_MSGQ", batch_size=5)  # its own uncommitted messages
    assert [m.raw for m in got] == [b"\x00\x01hello", b"second"]
    assert [m.message_id for m in got] == ids
    m = got[0]
    assert (m.correlation, m.priority, m.message_state, m.sender_id.name) == ("c1", 2, 0, "scott")
    client.rollback()                                       # enqueue and dequeue undone
    assert count(store, "AQUSER.RAW_MSGQ") == 0
    client.send("AQUSER.RAW_MSGQ", [b"kept"], commit=True)
    assert count(store, "AQUSER.RAW_MSGQ") == 1
    # a new selector in one database session starts over (ORA-25241 otherwise, seed 003)
    first = {"navigation_mode": "FIRST_MESSAGE"}
    assert client.receive("AQUSER.RAW_MSGQ", correlation="nomatch", **first) == []
    assert [m.raw for m in client.receive("AQUSER.RAW_MSGQ", commit=True, **first)] == [b"kept"]
    assert count(store, "AQUSER.RAW_MSGQ") == 0


def test_object_payload_as_xml_and_a_condition(client):
    emp = example(2)[example(2).index("<EMP_TYP>"):example(2).index("</EMP_TYP>") + 10]
    client.send("AQUSER.EMP_QUE", [emp, emp.replace("<DEPTNO>60</DEPTNO>", "<DEPTNO>20</DEPTNO>")],
                commit=True)
    got = client.receive("AQUSER.EMP_QUE", condition="tab.user_data.deptno = 20", commit=True)
    assert len(got) == 1
    payload = got[0].payload
    assert payload.tag.endswith("EMP_TYP") and payload.findtext("{*}DEPTNO") == "20"
    assert got[0].raw is None


def test_publish_and_register_through_the_client(client, store):
    with sluice.connect(store) as admin:
        admin.aqadm.add_subscriber(queue_name="AQUSER.EMP_TOPIC", subscriber=sluice.Agent("APP1"))
    emp = example(2)[example(2).index("<EMP_TYP>"):example(2).index("</EMP_TYP>") + 10]
    client.register("AQUSER.EMP_TOPIC", "mailto:app1@example.com", consumer_name="APP1")
    [msgid] = client.publish("AQUSER.EMP_TOPIC", [emp], recipients=["APP1"], commit=True)
    got = client.receive("AQUSER.EMP_TOPIC", consumer_name="APP1", message_id=msgid, commit=True)
    assert [m.message_id for m in got] == [msgid]


def test_faults_raise_the_ora_error(client, servlet):
    with pytest.raises(sluice.DatabaseError) as e:
        client.send("QS.NO_SUCH_QUE", [b"x"])
    assert e.value.full_code == "ORA-24010" and str(e.value).startswith("ORA-24010: ")
    with pytest.raises(sluice.DatabaseError) as e:
        Client(servlet.server.url, AGENT, "wrong", servlet=SERVLET).send("AQUSER.RAW_MSGQ", [b"x"])
    assert e.value.full_code == "ORA-01017"
    with pytest.raises(sluice.InterfaceError):
        client.send("AQUSER.RAW_MSGQ", [])



def test_the_client_refuses_what_it_cannot_send_before_sending(client, servlet, store):
    """Values of the wrong type (were TypeError/AttributeError from the request's building
    or httpx) are InterfaceError; text XML 1.0 cannot carry (was lxml's ValueError "All
    strings must be XML compatible") is ORA-31011, refused, not escaped: it is data the
    servlet would match; an address that is no http(s) URL is ORA-12154. Nothing is sent."""
    from sluice.model import Agent
    q, bad_text = "AQUSER.RAW_MSGQ", "ORA-31011"
    calls = [(lambda: client.send(q, [b"x"], correlation="a\x00b"), bad_text),
             (lambda: client.send("AQUSER.RAW\x01MSGQ", [b"x"]), bad_text),
             (lambda: client.send(q, [b"x"], sender_id="s\x04"), bad_text),
             (lambda: client.send(q, [b"x"], recipients=[Agent("A", "x\x05")]), bad_text),
             (lambda: client.send(q, [b"x"], correlation="\ud800"), bad_text),
             (lambda: client.receive(q, condition="priority = 1\x02"), bad_text),
             (lambda: client.register(q, "http://x\x03/"), bad_text),
             (lambda: client.send(q, 5), "payloads must be a list"),
             (lambda: client.send(q, b"x"), "payloads must be a list"),
             (lambda: client.send(q, [b"x"], recipients=5), "recipients must be a list"),
             (lambda: client.send(q, [b"x"], recipients="APP1"), "recipients must be a list"),
             (lambda: client.send(q, [b"x"], recipients=[5]), "a recipient must be an Agent"),
             (lambda: client.send(q, [b"x"], sender_id=5), "sender_id must be an Agent"),
             (lambda: client.send(q, [b"x"], method=5), "method must be 'AQXmlSend' or 'AQXmlPublish'"),
             (lambda: client.send(q, [b"x"], priority="1"), "priority must be an integer"),
             (lambda: client.send(q, [b"x"], correlation=5), "correlation must be a string"),
             (lambda: client.receive(q, wait_time="x"), "wait_time must be an integer"),
             (lambda: Client(5, AGENT, AGENT_PASSWORD), "url must be a string"),
             (lambda: Client(servlet.server.url, AGENT, AGENT_PASSWORD, servlet=5), "servlet must be a string"),
             (lambda: Client(servlet.server.url, None, None), "agent must be a string"),
             (lambda: Client(servlet.server.url, AGENT, AGENT_PASSWORD, timeout="x"), "timeout must be"),
             (lambda: Client(servlet.server.url, "a:b", AGENT_PASSWORD), "cannot hold ':'"),
             (lambda: Client("ftp://x", AGENT, AGENT_PASSWORD), "ORA-12154"),
             (lambda: Client(servlet.server.url, AGENT, AGENT_PASSWORD, servlet="/a b\n"), "ORA-12154")]
    for call, text in calls:
        with pytest.raises(sluice.Error) as e:
            call()
        assert text in str(e.value), (text, e.value)
        assert isinstance(e.value, sluice.InterfaceError) or e.value.full_code in ("ORA-31011", "ORA-12154")
    client.commit()
    assert count(store, q) == 0
    with sluice.connect(store) as c:
        assert c.query("SELECT COUNT(*) FROM dba_subscr_registrations", None)[1] == [(0,)]
    assert client.send(q, [b"x"], correlation="tab\tand\nnewline are XML", commit=True)
    assert [m.correlation for m in client.receive(q, commit=True)] == ["tab\tand\nnewline are XML"]

def test_cli_send_and_receive(servlet, store):
    runner = CliRunner()
    base = ["idap", "--url", servlet.server.url, "--servlet", SERVLET, "--agent", AGENT,
            "--agent-password", AGENT_PASSWORD]
    r = runner.invoke(main, base + ["send", "AQUSER.RAW_MSGQ", "hello", "world", "--correlation", "cli"])
    assert r.exit_code == 0, r.output
    ids = r.output.split()
    assert len(ids) == 2 and count(store, "AQUSER.RAW_MSGQ") == 2
    r = runner.invoke(main, base + ["receive", "AQUSER.RAW_MSGQ", "--count", "5"])
    assert r.exit_code == 0, r.output
    assert ids[0] in r.output and "hello" in r.output and "world" in r.output and "correlation=cli" in r.output
    assert count(store, "AQUSER.RAW_MSGQ") == 0
    r = runner.invoke(main, base + ["receive", "QS.NO_SUCH_QUE"])
    assert r.exit_code == 1 and "ORA-24010" in r.output
    r = runner.invoke(main, base + ["send", "AQUSER.RAW_MSGQ", "zz", "--format", "hex"])
    assert r.exit_code != 0 and "hexadecimal" in r.output
