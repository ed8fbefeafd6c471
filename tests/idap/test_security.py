"""Issue 7, acceptance 4 (first half): authentication and authorisation of HTTP agents
(seed 004 "Configuring the Web server to Authenticate Users", "Authorizing Users",
"Database Sessions")."""

from __future__ import annotations

import httpx
import pytest

import sluice
from sluice import plsql

from .compare import assert_matches
from .conftest import (SERVLET, basic, count, fault_of, msgids, receive, send_raw,
                       start_servlet, xml)

# the request and response printed in seed 004 "Using HTTP to Access the Oracle Streams
# AQ XML Servlet" (agent JOHN, queue OE.OE_NEW_ORDERS_QUE)
SEED_OE_SETUP = """
CREATE USER oe IDENTIFIED BY oe;
CREATE USER cbadm IDENTIFIED BY cbadm;
GRANT CONNECT, AQ_USER_ROLE TO oe, cbadm;
CREATE TYPE oe.customer_typ AS OBJECT (custno NUMBER, custid VARCHAR2(20), name VARCHAR2(100),
  street VARCHAR2(100), city VARCHAR2(30), state VARCHAR2(2), zip NUMBER, country VARCHAR2(20));
/
CREATE TYPE oe.book_typ AS OBJECT (title VARCHAR2(50), authors VARCHAR2(50), isbn VARCHAR2(20), price NUMBER);
/
CREATE TYPE oe.orderitem_typ AS OBJECT (quantity NUMBER, item oe.book_typ, subtotal NUMBER);
/
CREATE TYPE oe.orderitemlist_vartyp AS VARRAY(20) OF oe.orderitem_typ;
/
CREATE TYPE oe.order_typ AS OBJECT (orderno NUMBER, status VARCHAR2(30), ordertype VARCHAR2(30),
  orderregion VARCHAR2(30), customer oe.customer_typ, paymentmethod VARCHAR2(30),
  items oe.orderitemlist_vartyp, ccnumber VARCHAR2(20), order_date DATE);
/
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'oe.oe_orders_qt', queue_payload_type => 'oe.order_typ');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'oe.oe_new_orders_que', queue_table => 'oe.oe_orders_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'oe.oe_new_orders_que');
  DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'ANN', enable_http => true);
END;
"""
# Examples 17-24 to 17-26 as the seed prints them, the super-user AQADM of Example 17-22
SEED_17_24_TO_17_26 = """
CREATE USER aqadm IDENTIFIED BY aqadm;
GRANT CONNECT TO aqadm;
CREATE USER ann IDENTIFIED BY annpw;
DBMS_AQADM.ENABLE_DB_ACCESS(agent_name =>'JOHN', db_username => 'OE');
DBMS_AQADM.ENABLE_DB_ACCESS(agent_name =>'JOHN', db_username => 'CBADM');
alter user OE grant CONNECT THROUGH AQADM;
alter user CBADM grant CONNECT THROUGH AQADM;
grant FORCE ANY TRANSACTION to OE;
grant FORCE ANY TRANSACTION to CBADM;
"""


def _run(dsn: str, script: str) -> None:
    with sluice.connect(dsn) as admin:
        for stmt in plsql.split_script(script):
            plsql.execute(admin, stmt)
        admin.commit()


def _seed_request() -> str:
    from .conftest import SEED
    text = SEED.read_text()
    start = text.index("The client constructs the XML message")
    begin = text.index("<Envelope", start)
    return text[begin:text.index("</Envelope>", begin) + len("</Envelope>")]


def _seed_response() -> str:
    from .conftest import SEED
    text = SEED.read_text()
    start = text.index("the response for the preceding request")
    begin = text.index("<Envelope", start)
    return text[begin:text.index("</Envelope>", begin) + len("</Envelope>")]


def _post(url: str, doc: str, headers: dict | None = None) -> httpx.Response:
    return httpx.post(url, content=doc.encode(), headers={"Content-Type": "text/xml", **(headers or {})},
                      timeout=30)


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer x"}, {"Authorization": "Basic !!!"},
                                     {"Authorization": "Basic am9obg=="}])   # "john", no colon
def test_no_credentials_is_401(servlet, store, headers):
    r = _post(servlet.url, send_raw("AQUSER.RAW_MSGQ", commit=True), headers)
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Basic realm="AQ restricted stuff"'
    assert count(store, "AQUSER.RAW_MSGQ") == 0


@pytest.mark.parametrize("user, password", [("john", "wrong"), ("nobody", "welcome"), ("sys", "x"),
                                            ("sluice", "")])
def test_wrong_password_is_401(servlet, store, user, password):
    r = _post(servlet.url, send_raw("AQUSER.RAW_MSGQ", commit=True), basic(user, password))
    assert r.status_code == 401
    assert count(store, "AQUSER.RAW_MSGQ") == 0


def test_credentials_are_checked_again_after_a_password_change(servlet, store):
    assert _post(servlet.url, send_raw("AQUSER.RAW_MSGQ"), basic()).status_code == 200
    with sluice.connect(store) as admin:
        admin.cursor().execute("ALTER USER john IDENTIFIED BY changed")
    assert _post(servlet.url, send_raw("AQUSER.RAW_MSGQ"), basic()).status_code == 401
    assert _post(servlet.url, send_raw("AQUSER.RAW_MSGQ"), basic("john", "changed")).status_code == 200


KIM = "CREATE USER kim IDENTIFIED BY kimpw;\n"


@pytest.mark.parametrize("setup, code", [
    (KIM, "24088"),                                                              # no AQ agent KIM
    (KIM + "BEGIN DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'KIM'); END;", "1031"),  # HTTP not enabled
    (KIM + "BEGIN DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'KIM', enable_http => TRUE); END;",
     "24093"),                                                                   # mapped to nobody
])
def test_agents_that_may_not_use_http_get_a_fault(servlet, store, setup, code):
    _run(store, setup)
    f = fault_of(_post(servlet.url, send_raw("AQUSER.RAW_MSGQ", commit=True), basic("kim", "kimpw")))
    assert f["faultcode"] == "SOAP-ENV:Client" and f["error_code"] == code
    if code == "1031":
        assert "not enabled for HTTP" in f["error_message"]
    assert count(store, "AQUSER.RAW_MSGQ") == 0


def test_mapped_user_without_privilege_gets_a_fault(servlet, store):
    _run(store, """
        CREATE USER kim IDENTIFIED BY kimpw;
        CREATE USER clerk IDENTIFIED BY clerk;
        GRANT CREATE SESSION, AQ_USER_ROLE TO clerk;
        BEGIN
          DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'KIM', enable_http => TRUE);
          DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'KIM', db_username => 'CLERK');
        END;
        """)
    f = fault_of(_post(servlet.url, send_raw("AQUSER.RAW_MSGQ", commit=True), basic("kim", "kimpw")))
    assert f["error_code"] == "1031"
    assert "CLERK: ORA-01031: insufficient privileges" in f["error_message"]
    assert count(store, "AQUSER.RAW_MSGQ") == 0
    # a grant on the queue is all it takes (the servlet asks the AQ layer's Authorizer)
    with sluice.connect(store) as admin:
        admin.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="AQUSER.RAW_MSGQ",
                                          grantee="CLERK")
    r = _post(servlet.url, send_raw("AQUSER.RAW_MSGQ", commit=True), basic("kim", "kimpw"))
    assert r.status_code == 200
    with sluice.connect(store) as admin:
        rows = admin.query("SELECT enq_user_id FROM aquser.aq$raw_qt", None)[1]
    assert rows == [("CLERK",)]


def test_the_seed_request_runs_as_the_queue_owner_through_the_super_user(store):
    """Seed 004 "Database Sessions": JOHN maps to OE and CBADM; OE.OE_NEW_ORDERS_QUE is
    in OE's schema, so the super-user AQADM creates the session as OE."""
    _run(store, SEED_OE_SETUP)
    _run(store, SEED_17_24_TO_17_26)
    s = start_servlet(store, user="aqadm", password="aqadm")
    try:
        c = s.client()
        r = s.post(_seed_request(), c)
        assert_matches(xml(_seed_response()), xml(r), variable=("message_id",))
        s.post('<Envelope xmlns="http://schemas.xmlsoap.org/soap/envelope/"><Body>'
               '<AQXmlCommit xmlns="http://ns.oracle.com/AQ/schemas/access"/></Body></Envelope>', c)
        with sluice.connect(store) as admin:
            rows = admin.query("SELECT enq_user_id, corr_id FROM oe.aq$oe_orders_qt", None)[1]
        assert rows == [("OE", "XML_ADT_SINGLE_ENQ")]
    finally:
        s.server.stop()


@pytest.mark.parametrize("missing, reason", [
    # without CONNECT THROUGH the super-user cannot act for OE (Example 17-26) …
    ("alter user OE grant CONNECT THROUGH AQADM;",
     "OE: ORA-28150: proxy not authorized to connect as client OE"),
    # … and an agent mapped to several users needs FORCE ANY TRANSACTION for each
    ("grant FORCE ANY TRANSACTION to OE;", "OE: lacks FORCE ANY TRANSACTION"),
])
def test_the_seed_setup_minus_one_step_is_refused(store, missing, reason):
    _run(store, SEED_OE_SETUP)
    _run(store, SEED_17_24_TO_17_26.replace(missing, ""))
    s = start_servlet(store, user="aqadm", password="aqadm")
    try:
        f = fault_of(s.post(_seed_request()))
        assert f["error_code"] == "1031" and reason in f["error_message"], f
    finally:
        s.server.stop()


def test_a_transaction_stays_with_its_database_user(servlet, store):
    """JOHN maps to QS and AQUSER: a session with AQUSER's open transaction cannot
    switch to QS's queue until it commits."""
    c = servlet.client()
    assert servlet.post(send_raw("AQUSER.RAW_MSGQ"), c).status_code == 200
    f = fault_of(servlet.post(receive("QS.NEW_ORDERS_QUE"), c))
    assert f["error_code"] == "1031" and "commit or roll back first" in f["error_message"]
    servlet.post('<Envelope xmlns="http://schemas.xmlsoap.org/soap/envelope/"><Body>'
                 '<AQXmlCommit xmlns="http://ns.oracle.com/AQ/schemas/access"/></Body></Envelope>', c)
    assert servlet.post(receive("QS.NEW_ORDERS_QUE"), c).status_code == 200
    assert count(store, "AQUSER.RAW_MSGQ") == 1


def test_get_needs_no_credentials_but_only_describes(servlet):
    r = httpx.get(servlet.server.url + SERVLET)
    assert r.status_code == 405 and r.headers["allow"] == "GET, POST"
    assert httpx.put(servlet.url, content=b"x").status_code == 405
    assert httpx.get(servlet.server.url + "/other").status_code == 404
    assert msgids(_post(servlet.url, send_raw("AQUSER.RAW_MSGQ"), basic()))
