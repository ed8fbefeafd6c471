"""The servlet's HTTP and SOAP rules (seed 004 "SOAP Message Structure", "Deploying the
Oracle Streams AQ XML Servlet"), the tolerance Oracle's samples need, and every
argument of Tables 17-1 and 17-2."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

import sluice
from sluice.idap import OLD_ENVELOPE_NS

from .conftest import (AQ, SOAP, commit_doc, count, fault_of, msgids, q, receive, received,
                       send_raw, start_servlet, xml)
from .conftest import send_doc as _send


def _payload(message):
    return message.find(q("message_payload"))[0]


# -- transport ------------------------------------------------------------------------
def test_form_urlencoded_with_aqxmldoc(servlet, store):
    c = servlet.client()
    doc = "<?xml version='1.0' encoding='ISO-8859-1'?>" + send_raw("AQUSER.RAW_MSGQ", commit=True,
                                                                   correlation="caf\u00e9")
    r = c.post("/aqserv/servlet/AQTestServlet", content=urlencode({"aqxmldoc": doc}),
               headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200, r.text
    got = received(servlet.post(receive("AQUSER.RAW_MSGQ"), c))
    assert got[0].findtext(".//" + q("correlation")) == "caf\u00e9"
    f = fault_of(c.post("/aqserv/servlet/AQTestServlet", content="other=1",
                        headers={"Content-Type": "application/x-www-form-urlencoded"}))
    assert f["error_code"] == "19202" and "aqxmldoc" in f["error_message"]


def test_other_content_types_are_415(servlet):
    assert servlet.post(send_raw("AQUSER.RAW_MSGQ"), content_type="application/json").status_code == 415


def test_any_servlet_name_and_the_old_envelope_namespace(servlet):
    doc = send_raw("AQUSER.RAW_MSGQ").replace(SOAP, OLD_ENVELOPE_NS)
    r = servlet.post(doc, path="/aqserv/servlet/MyOwnServlet")
    assert r.status_code == 200
    assert xml(r).tag == f"{{{OLD_ENVELOPE_NS}}}Envelope"      # answered in the client's namespace


def test_element_name_case_whitespace_and_missing_namespaces(servlet):
    doc = (f'<soap:ENVELOPE xmlns:soap="{SOAP}">\n <soap:body>\n  <aqxmlsend>\n'
           f"   <Producer_Options> <DESTINATION>\n  AQUSER.RAW_MSGQ\n </DESTINATION> </Producer_Options>\n"
           f"   <MESSAGE_SET><Message_Count> 1 </Message_Count><MESSAGE><MESSAGE_HEADER>"
           f"<PRIORITY> 3 </PRIORITY><SENDER_ID><AGENT_NAME>scott</AGENT_NAME></SENDER_ID>"
           f"</MESSAGE_HEADER><MESSAGE_PAYLOAD><RAW>\n  0102\n  0304\n</RAW></MESSAGE_PAYLOAD>"
           f"</MESSAGE></MESSAGE_SET><aqxmlcommit/>\n  </aqxmlsend>\n </soap:body>\n</soap:ENVELOPE>")
    assert len(msgids(servlet.post(doc))) == 1
    m = received(servlet.post(receive("AQUSER.RAW_MSGQ")))[0]
    assert _payload(m).text == "01020304" and m.findtext(".//" + q("priority")) == "3"


def test_soap_header_rules(servlet):
    must = send_raw("AQUSER.RAW_MSGQ").replace(
        "<Body>", f'<Header><tx xmlns="urn:tx" xmlns:s="{SOAP}" s:mustUnderstand="1">1</tx></Header><Body>')
    assert fault_of(servlet.post(must))["faultcode"] == "SOAP-ENV:MustUnderstand"
    optional = must.replace('s:mustUnderstand="1"', 's:mustUnderstand="0"')
    assert servlet.post(optional).status_code == 200
    c = servlet.client()
    wrong = c.post("/aqserv/servlet/AQTestServlet", content=send_raw("AQUSER.RAW_MSGQ"),
                   headers={"Content-Type": "text/xml", "SOAPMethodName": f"{AQ}#AQXmlReceive"})
    assert "SOAPMethodName" in fault_of(wrong)["error_message"]
    right = c.post("/aqserv/servlet/AQTestServlet", content=send_raw("AQUSER.RAW_MSGQ"),
                   headers={"Content-Type": "text/xml", "SOAPMethodName": f"{AQ}#AQXmlSend"})
    assert right.status_code == 200


@pytest.mark.parametrize("doc, code", [
    ("<Envelope", "31011"),
    ('<Envelope xmlns="urn:x"><Body/></Envelope>', "19202"),
    (f'<Envelope xmlns="{SOAP}"><Body/></Envelope>', "19202"),
    (f'<Envelope xmlns="{SOAP}"><Body><AQXmlSend xmlns="{AQ}"/></Body></Envelope>', "31154"),
    (send_raw("AQUSER.RAW_MSGQ").replace("</message_count>", "</message_count><junk/>"), "31154"),
    (send_raw("AQUSER.RAW_MSGQ").replace("<message_count>1", "<message_count>3"), "19202"),
    (send_raw("AQUSER.RAW_MSGQ").replace("</destination>",
                                         "</destination><visibility>LATER</visibility>"), "31154"),
    (send_raw("AQUSER.RAW_MSGQ", "XYZ"), "1465"),
    # numbers beyond what the message properties hold (were stored, or a fault without a code)
    (send_raw("AQUSER.RAW_MSGQ", header="<priority>100000000000000000000</priority>"), "1426"),
    (send_raw("AQUSER.RAW_MSGQ", header="<delay>3000000000</delay>"), "1426"),
    # a sender's protocol beyond 64 bits was taken, then every commit of the session failed
    (send_raw("AQUSER.RAW_MSGQ", commit=True).replace(
        "</agent_name>", "</agent_name><protocol>99999999999999999999</protocol>"), "1426"),
    (receive("AQUSER.RAW_MSGQ", extra="<batch_size>100000000000000000000</batch_size>"), "19202"),
    # a correlation is VARCHAR2(128): "any string up to 128 bytes" (was stored whole)
    (send_raw("AQUSER.RAW_MSGQ", correlation="x" * 129), "6502"),
    (receive("AQUSER.RAW_MSGQ", extra=f"<selector><correlation>{'x' * 129}</correlation></selector>"), "6502"),
])
def test_bad_documents_are_client_faults_with_oracle_codes(servlet, store, doc, code):
    f = fault_of(servlet.post(doc))
    assert f["faultcode"] == "SOAP-ENV:Client" and f["error_code"] == code, f
    assert f["error_message"].startswith(f"ORA-{int(code):05d}: ")
    servlet.post(commit_doc())
    assert count(store, "AQUSER.RAW_MSGQ") == 0


@pytest.mark.parametrize("doc, what", [
    (send_raw("AQUSER.RAW_MSGQ").replace("<destination>", '<destination lookup_type="LDAP">'), "LDAP"),
    (send_raw("AQUSER.RAW_MSGQ").replace("<agent_name>scott</agent_name>",
                                         "<agent_alias>cn=scott</agent_alias>"), "agent_alias"),
    (_send("AQUSER.JMS_TEXTQ", "<jms_object_message><ser_object_data>AC</ser_object_data>"
                               "</jms_object_message>"), "JMS object"),
])
def test_features_sluice_lacks_are_server_faults(servlet, store, doc, what):
    f = fault_of(servlet.post(doc))
    assert f["faultcode"] == "SOAP-ENV:Server" and what in f["error_message"]
    assert f["error_message"].startswith("SLU-00001: not supported")


# -- Table 17-1: producer options and message headers ----------------------------------
def test_message_header_arguments(servlet, store):
    header = ("<correlation>H1</correlation><delay>0</delay><expiration>3600</expiration>"
              "<priority>-2</priority>")
    exception_queue = "<exception_queue>AQUSER.AQ$_RAW_QT_E</exception_queue>"
    doc = _send("AQUSER.RAW_MSGQ", "<raw>01</raw>", header).replace(
        "</sender_id>", "</sender_id>" + exception_queue)
    msgids(servlet.post(doc))
    h = received(servlet.post(receive("AQUSER.RAW_MSGQ")))[0].find(q("message_header"))
    assert [h.findtext(q(n)) for n in ("correlation", "delay", "expiration", "priority",
                                       "delivery_count", "message_state", "exception_queue")] == \
        ["H1", "0", "3600", "-2", "0", "0", "AQUSER.AQ$_RAW_QT_E"]
    assert h.find(q("sender_id")).findtext(q("agent_name")) == "scott"


def test_delay_makes_the_message_wait(servlet):
    servlet.post(_send("AQUSER.RAW_MSGQ", "<raw>01</raw>", "<delay>30</delay>"))
    assert received(servlet.post(receive("AQUSER.RAW_MSGQ"))) == []


def test_several_messages_in_one_send(servlet):
    doc = send_raw("AQUSER.RAW_MSGQ", "01").replace(
        "<message_count>1</message_count>", "<message_count>2</message_count>").replace(
        "</message></message_set>", "</message><message><message_number>2</message_number>"
        "<message_header><sender_id><agent_name>x</agent_name></sender_id></message_header>"
        "<message_payload><raw>02</raw></message_payload></message></message_set>")
    sent = msgids(servlet.post(doc))
    assert len(sent) == 2
    got = received(servlet.post(receive("AQUSER.RAW_MSGQ", extra="<batch_size>10</batch_size>")))
    assert [m.findtext(".//" + q("message_id")) for m in got] == sent
    assert [m.findtext(q("message_number")) for m in got] == ["1", "2"]


def test_transformation_on_send_and_receive(servlet, store):
    sluice.register_function("aquser.emp_name", lambda emp: emp.ENAME.encode(), schema="AQUSER")
    sluice.register_function("aquser.shout", lambda raw: raw.upper(), schema="AQUSER")
    with sluice.connect(store) as admin:
        admin.transform.create_transformation(schema="AQUSER", name="EMP_TO_RAW", from_schema="AQUSER",
                                              from_type="EMP_TYP", to_schema="SYS", to_type="RAW",
                                              transformation="aquser.emp_name(source.user_data)")
        admin.transform.create_transformation(schema="AQUSER", name="SHOUT", from_schema="SYS",
                                              from_type="RAW", to_schema="SYS", to_type="RAW",
                                              transformation="aquser.shout(source.user_data)")
    doc = _send("AQUSER.RAW_MSGQ", "<EMP_TYP><EMPNO>1</EMPNO><ENAME>Mary</ENAME></EMP_TYP>",
                options="<transformation>AQUSER.EMP_TO_RAW</transformation>")
    assert servlet.post(doc).status_code == 200
    m = received(servlet.post(receive("AQUSER.RAW_MSGQ",
                                      extra="<transformation>AQUSER.SHOUT</transformation>")))[0]
    assert _payload(m).text == b"MARY".hex().upper()


def test_payload_of_the_wrong_type_is_ora_25215(servlet):
    f = fault_of(servlet.post(_send("AQUSER.RAW_MSGQ", "<EMP_TYP><EMPNO>1</EMPNO></EMP_TYP>")))
    assert f["error_code"] == "25215"
    f = fault_of(servlet.post(_send("AQUSER.EMP_QUE", "<EMP_TYP><NOPE>1</NOPE></EMP_TYP>")))
    assert f["error_code"] == "904"
    long_name = "<EMP_TYP><ENAME>far too long a name</ENAME></EMP_TYP>"
    f = fault_of(servlet.post(_send("AQUSER.EMP_QUE", long_name)))
    assert f["error_code"] == "12899"


def test_recipients_on_a_single_consumer_queue_are_ora_24039(servlet):
    doc = send_raw("AQUSER.RAW_MSGQ").replace(
        "</sender_id>", "</sender_id><recipient_list><recipient><agent_name>a</agent_name>"
                        "</recipient></recipient_list>")
    assert fault_of(servlet.post(doc))["error_code"] == "24039"


# -- Table 17-2: consumer options -------------------------------------------------------
def test_selectors_message_id_and_condition(servlet):
    ids = [msgids(servlet.post(send_raw("AQUSER.RAW_MSGQ", h, commit=True)))[0] for h in ("01", "02")]
    by_id = received(servlet.post(receive("AQUSER.RAW_MSGQ", extra=f"<selector><message_id>{ids[1]}"
                                                                    f"</message_id></selector>")))
    assert [m.findtext(".//" + q("message_id")) for m in by_id] == [ids[1]]
    servlet.post(_send("AQUSER.EMP_QUE", "<EMP_TYP><EMPNO>1</EMPNO><DEPTNO>10</DEPTNO></EMP_TYP>"))
    servlet.post(_send("AQUSER.EMP_QUE", "<EMP_TYP><EMPNO>2</EMPNO><DEPTNO>60</DEPTNO></EMP_TYP>"))
    got = received(servlet.post(receive("AQUSER.EMP_QUE", extra="<selector><condition>"
                                                                "tab.user_data.deptno=60</condition></selector>")))
    assert [_payload(m).findtext(q("EMPNO")) for m in got] == ["2"]
    missing = "00" * 16
    f = fault_of(servlet.post(receive("AQUSER.RAW_MSGQ", extra=f"<selector><message_id>{missing}"
                                                                f"</message_id></selector>")))
    assert f["error_code"] == "25263"


def test_dequeue_modes_and_visibility(servlet, store):
    servlet.post(send_raw("AQUSER.RAW_MSGQ", "01", commit=True))
    nodata = received(servlet.post(receive("AQUSER.RAW_MSGQ", extra=(
        "<visibility>IMMEDIATE</visibility><dequeue_mode>REMOVE_NODATA</dequeue_mode>"))))
    assert len(nodata) == 1 and len(nodata[0].find(q("message_payload"))) == 0
    assert count(store, "AQUSER.RAW_MSGQ") == 0          # IMMEDIATE: committed at once
    servlet.post(send_raw("AQUSER.RAW_MSGQ", "02", commit=True))
    other = servlet.client()
    locked = received(servlet.post(receive("AQUSER.RAW_MSGQ", extra="<dequeue_mode>LOCKED</dequeue_mode>"),
                                   other))
    assert len(locked) == 1
    assert received(servlet.post(receive("AQUSER.RAW_MSGQ", extra=(
        "<navigation_mode>FIRST_MESSAGE</navigation_mode>")))) == []   # locked by the other session


# -- payload types ----------------------------------------------------------------------
def test_jms_map_and_bytes_messages_with_typed_properties(servlet):
    props = ("<oracle_jms_properties><type>t1</type><userid>me</userid><group_sequence>4"
             "</group_sequence></oracle_jms_properties><user_properties>"
             "<property><name>b</name><boolean_value>true</boolean_value></property>"
             "<property><name>s</name><short_value>7</short_value></property>"
             "<property><name>y</name><byte_value>-3</byte_value></property>"
             "<property><name>l</name><long_value>9000000000</long_value></property>"
             "<property><name>f</name><float_value>1.5</float_value></property>"
             "<property><name>d</name><double_value>2.25</double_value></property>"
             "</user_properties>")
    servlet.post(_send("AQUSER.JMS_MAPQ", f"<jms_map_message>{props}<map_data>"
                       "<item><name>Car</name><string_value>Toyota</string_value></item>"
                       "<item><name>Price</name><int_value>20000</int_value></item>"
                       "<item><name>Sold</name><boolean_value>false</boolean_value></item>"
                       "<item><name>Km</name><double_value>12.5</double_value></item>"
                       "</map_data></jms_map_message>"))
    m = _payload(received(servlet.post(receive("AQUSER.JMS_MAPQ")))[0])
    items = {i.findtext(q("name")): (i[1].tag.split("}")[1], i[1].text) for i in m.iter(q("item"))}
    assert items == {"Car": ("string_value", "Toyota"), "Price": ("int_value", "20000"),
                     "Sold": ("boolean_value", "false"), "Km": ("double_value", "12.5")}
    got = {p.findtext(q("name")): (p[1].tag.split("}")[1], p[1].text) for p in m.iter(q("property"))}
    assert got == {"b": ("boolean_value", "true"), "s": ("short_value", "7"), "y": ("byte_value", "-3"),
                   "l": ("long_value", "9000000000"), "f": ("float_value", "1.5"),
                   "d": ("double_value", "2.25")}
    jp = m.find(q("oracle_jms_properties"))
    assert [jp.findtext(q(n)) for n in ("type", "userid", "group_sequence")] == ["t1", "me", "4"]
    servlet.post(_send("AQUSER.JMS_BYTESQ", "<jms_bytes_message><bytes_data>00FF10</bytes_data>"
                                            "</jms_bytes_message>"))
    b = _payload(received(servlet.post(receive("AQUSER.JMS_BYTESQ")))[0])
    assert b.findtext(q("bytes_data")) == "00FF10"


def test_xml_and_json_payloads(servlet):
    servlet.post(_send("AQUSER.XML_Q", '<order id="7"><item>book</item><ns:x xmlns:ns="urn:n">1</ns:x>'
                                       "</order>"))
    m = _payload(received(servlet.post(receive("AQUSER.XML_Q")))[0])
    assert m.tag == "order" and m.get("id") == "7" and m.findtext("item") == "book"
    assert m.findtext("{urn:n}x") == "1"
    servlet.post(_send("AQUSER.JSON_Q", '<JSON>{"a": [1, 2.5, "x", null]}</JSON>'))
    j = _payload(received(servlet.post(receive("AQUSER.JSON_Q")))[0])
    assert j.tag == q("JSON") and j.text == '{"a":[1,2.5,"x",null]}'


def test_aqpropservlet_keeps_the_original_message_id(servlet, store):
    original = "AB" * 16
    doc = send_raw("AQUSER.RAW_MSGQ", commit=True).replace(
        "<message_header>", f"<message_header><message_id>{original}</message_id>")
    assert servlet.post(doc, path="/aqserv/servlet/AQPropServlet").status_code == 200
    with sluice.connect(store) as admin:
        rows = admin.query("SELECT original_msgid FROM aquser.aq$raw_qt", None)[1]
    assert [r[0].upper() if isinstance(r[0], str) else r[0].hex().upper() for r in rows] == [original]


def test_a_stylesheet_for_every_response(store):
    s = start_servlet(store, stylesheet=("text/xsl", "http://example.invalid/order.xsl"))
    try:
        r = s.post(commit_doc())
        assert b'<?xml-stylesheet type="text/xsl" href="http://example.invalid/order.xsl"?>' in r.content
    finally:
        s.server.stop()
