"""Issue 7, acceptance 3: a real SOAP client, zeep, driven by the WSDL the servlet serves,
enqueues and dequeues messages, keeps its HTTP session across calls, and reads Faults."""

from __future__ import annotations

import httpx
import pytest
import requests
import zeep
from lxml import etree
from zeep.transports import Transport

from .conftest import AGENT, AGENT_PASSWORD, AQ


@pytest.fixture
def soap(servlet):
    session = requests.Session()
    session.auth = (AGENT, AGENT_PASSWORD)
    client = zeep.Client(servlet.url + "?wsdl", transport=Transport(session=session, timeout=30))
    yield client
    session.close()


def _raw(hex_text: str) -> etree._Element:
    el = etree.Element(f"{{{AQ}}}raw")
    el.text = hex_text
    return el


def _message(correlation: str, payload: etree._Element, number: int = 1) -> dict:
    return {"message_number": number,
            "message_header": {"correlation": correlation, "sender_id": {"agent_name": "scott"}},
            "message_payload": {"_value_1": payload}}


def test_the_wsdl_and_schemas_are_served(servlet):
    wsdl = httpx.get(servlet.url + "?wsdl")
    assert wsdl.status_code == 200 and b"AQXmlReceive" in wsdl.content
    assert servlet.url.encode() in wsdl.content            # soap:address is this servlet
    for name in ("aq_access.xsd", "soap_env.xsd"):
        xsd = httpx.get(f"{servlet.server.url}/aqserv/servlet/{name}")
        assert xsd.status_code == 200 and etree.fromstring(xsd.content).tag.endswith("schema")


def test_zeep_enqueues_and_dequeues(soap):
    sent = soap.service.AQXmlSend(
        producer_options={"destination": "AQUSER.RAW_MSGQ"},
        message_set={"message_count": 2, "message": [_message("z1", _raw("48656C6C6F")),
                                                     _message("z2", _raw("576F726C64"), 2)]},
        AQXmlCommit={})
    assert sent.status_response.status_code == "0"
    ids = sent.send_result.message_id
    assert len(ids) == 2 and sent.send_result.destination._value_1 == "AQUSER.RAW_MSGQ"
    got = soap.service.AQXmlReceive(
        consumer_options={"destination": "AQUSER.RAW_MSGQ", "wait_time": 0, "batch_size": 5,
                          "navigation_mode": "FIRST_MESSAGE"}, AQXmlCommit={})
    (mset,) = got.receive_result.message_set
    assert mset.message_count == 2
    assert [m.message_header.message_id for m in mset.message] == ids
    assert [m.message_header.correlation for m in mset.message] == ["z1", "z2"]
    assert [m.message_payload._value_1 for m in mset.message] == ["48656C6C6F", "576F726C64"]


def test_zeep_keeps_its_session_until_commit(soap, servlet, store):
    soap.service.AQXmlSend(producer_options={"destination": "AQUSER.RAW_MSGQ"},
                           message_set={"message": [_message("t", _raw("01"))]})
    other = servlet.client()
    empty = other.post("/aqserv/servlet/AQTestServlet", headers={"Content-Type": "text/xml"},
                       content=(f'<Envelope xmlns="http://schemas.xmlsoap.org/soap/envelope/"><Body>'
                                f'<AQXmlReceive xmlns="{AQ}"><consumer_options><destination>'
                                f'AQUSER.RAW_MSGQ</destination><wait_time>0</wait_time>'
                                f'</consumer_options></AQXmlReceive></Body></Envelope>'))
    assert b"<message_count>0</message_count>" in empty.content
    assert soap.service.AQXmlCommit().status_code == "0"      # zeep unwraps one child
    got = soap.service.AQXmlReceive(consumer_options={"destination": "AQUSER.RAW_MSGQ", "wait_time": 0})
    assert got.receive_result.message_set[0].message_count == 1
    assert soap.service.AQXmlRollback().status_code == "0"


def test_zeep_reads_faults(soap):
    with pytest.raises(zeep.exceptions.Fault) as info:
        soap.service.AQXmlSend(producer_options={"destination": "AQUSER.NO_SUCH_QUEUE"},
                               message_set={"message": [_message("f", _raw("00"))]})
    fault = info.value
    assert fault.code == "SOAP-ENV:Client"
    assert fault.message == "Client Fault: ORA-24010: QUEUE AQUSER.NO_SUCH_QUEUE does not exist"
    assert fault.detail.find(f".//{{{AQ}}}error_code").text == "24010"
