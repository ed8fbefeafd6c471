"""AQXmlRegister and the AQXmlNotification it brings (seed 004 "IDAP Client Requests for
Registration", "IDAP Notification"): registered through the servlet, delivered by the
AQ layer's notification dispatcher to an HTTP URL or a mail address, each document
valid against the IDAP schema."""

from __future__ import annotations

import email
import time

import pytest
from lxml import etree

import sluice
from sluice.idap import schema
from tests.conftest import wait_until
from tests.pubsub.notify_sinks import HttpSink, SmtpSink

from .conftest import AQ, SOAP, example, fault_of, msgids, q, xml


def _register(destination: str, url: str, consumer: str | None = "APP1") -> str:
    name = f"<consumer_name>{consumer}</consumer_name>" if consumer else ""
    return (f'<Envelope xmlns="{SOAP}"><Body><AQXmlRegister xmlns="{AQ}"><register_options>'
            f"<destination>{destination}</destination>{name}<notify_url>{url}</notify_url>"
            f"</register_options><AQXmlCommit/></AQXmlRegister></Body></Envelope>")


def _publish(servlet, recipients: tuple[str, ...] = ()) -> str:
    """Example 17-6 (publish and commit), to the subscribers or to ``recipients``."""
    doc = example(6)
    if recipients:
        listed = "".join(f"<recipient><agent_name>{r}</agent_name></recipient>" for r in recipients)
        doc = doc.replace("</sender_id>", f"</sender_id><recipient_list>{listed}</recipient_list>", 1)
    return msgids(servlet.post(doc))[0]


def _registrations(store: str) -> list[tuple]:
    with sluice.connect(store) as c:
        cur = c.cursor()
        cur.execute("SELECT subscription_name, location_name, protocol FROM DBA_SUBSCR_REGISTRATIONS")
        return sorted(cur.fetchall())


def _notification(body: str) -> etree._Element:
    """The AQXmlNotification element of ``body``, after checking the document against
    the SOAP and IDAP schemas."""
    root = etree.fromstring(body.encode())
    assert schema._schema().validate(root), schema._schema().error_log.last_error
    return root.find(f"{{{SOAP}}}Body/{q('AQXmlNotification')}")


@pytest.fixture
def subscribed(store):
    with sluice.connect(store) as admin:
        for name in ("APP1", "APP2"):
            admin.aqadm.add_subscriber(queue_name="AQUSER.EMP_TOPIC", subscriber=sluice.Agent(name))
    return store


def test_http_registration_gets_an_aqxmlnotification_per_message_for_its_consumer(servlet, subscribed):
    sink = HttpSink()
    try:
        r = servlet.post(_register("AQUSER.EMP_TOPIC", sink.url))
        assert r.status_code == 200 and xml(r).find(f"{{{SOAP}}}Body/{q('AQXmlRegisterResponse')}") is not None
        assert _registrations(subscribed) == [("AQUSER.EMP_TOPIC:APP1", sink.url, "HTTP")]
        _publish(servlet, recipients=("APP2",))      # not APP1's: no notification
        sent = _publish(servlet)
        assert wait_until(lambda: len(sink.bodies) >= 1)
        time.sleep(0.5)
        assert len(sink.bodies) == 1
        note = _notification(sink.bodies[0])
        options = note.find(q("notification_options"))
        assert options.findtext(q("destination")) == "AQUSER.EMP_TOPIC"
        assert options.findtext(q("consumer_name")) == "APP1"
        messages = note.find(q("message_set"))
        assert messages.findtext(q("message_count")) == "1"
        assert [m.text for m in messages.iter(q("message_id"))] == [sent]
    finally:
        sink.close()


def test_17_13_mailto_registration_mails_the_notification(servlet, subscribed):
    smtp = SmtpSink()
    try:
        with sluice.connect(subscribed) as admin:
            admin.aqelm.set_mailhost("127.0.0.1")
            admin.aqelm.set_mailport(smtp.port)
        assert servlet.post(example(13)).status_code == 200
        sent = _publish(servlet)
        assert wait_until(lambda: len(smtp.mails) == 1)
        _, rcpts, data = smtp.mails[0]
        assert rcpts == ["<app1@hotmail.com>"]
        text = email.message_from_string(data).get_payload(decode=True).decode()
        note = _notification(text)
        assert note.find(q("notification_options")).findtext(q("consumer_name")) == "APP1"
        assert [m.text for m in note.iter(q("message_id"))] == [sent]
    finally:
        smtp.close()


def test_registering_again_keeps_one_registration(servlet, subscribed):
    for _ in range(2):
        assert servlet.post(example(13)).status_code == 200
    assert _registrations(subscribed) == [("AQUSER.EMP_TOPIC:APP1", "app1@hotmail.com", "MAIL")]


@pytest.mark.parametrize("destination, consumer, url, code", [
    ("AQUSER.EMP_TOPIC", "APP1", "ftp://example/x", "24971"),      # not http, mailto or plsql
    ("AQUSER.EMP_TOPIC", "APP1", "", "24971"),                     # no location at all, as
    ("AQUSER.EMP_TOPIC", "APP1", "  ", "24971"),                   # DBMS_AQ.REGISTER's NULL
    ("AQUSER.EMP_TOPIC", None, "mailto:a@b.example", "25231"),      # which consumer?
    ("AQUSER.EMP_QUE", "APP1", "mailto:a@b.example", "24039"),      # single-consumer queue
    ("AQUSER.NO_SUCH_QUE", "APP1", "mailto:a@b.example", "24010"),
])
def test_bad_registrations_are_faults_and_store_nothing(servlet, subscribed, destination, consumer, url, code):
    f = fault_of(servlet.post(_register(destination, url, consumer)))
    assert f["error_code"] == code
    assert _registrations(subscribed) == []
