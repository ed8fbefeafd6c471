"""The IDAP servlet under test: a real uvicorn server on 127.0.0.1 (ephemeral port) in a
thread, over a store set up as seed 004's examples assume (users, object types,
queues, the HTTP agent JOHN of Example 17-24 mapped as in Example 17-25)."""

from __future__ import annotations

import base64
import pathlib
import signal
import socket
import ssl
import sys
import threading
import time
from dataclasses import dataclass, field

import httpx
import pytest
import uvicorn
from lxml import etree

import sluice
from sluice import plsql
from sluice.idap import IdapConfig, create_app
from sluice.idap.app import IdapServer
from tests import forkserver

SEED = pathlib.Path(__file__).resolve().parents[3] / "shared" / "seeds" / "004_d2b4a38b1b332915.txt"
if not SEED.exists():
    SEED = pathlib.Path("/work/shared/seeds/004_d2b4a38b1b332915.txt")
SOAP = "http://schemas.xmlsoap.org/soap/envelope/"
AQ = "http://ns.oracle.com/AQ/schemas/access"
AGENT, AGENT_PASSWORD = "john", "welcome"      # seed 004 "HTTP propagation": john/welcome
SERVLET = "/aqserv/servlet/AQTestServlet"

# The seed's objects.  ORDER_TYP and its parts are those of Oracle's BooksOnline sample
# that Example 17-1 fills in (the seed prints no CREATE TYPE for them); EMP_TYP is the
# seed's own, with the comma its printed text lacks before DEPTNO.
SETUP = """
CREATE USER john IDENTIFIED BY welcome;
CREATE USER qs IDENTIFIED BY qs;
CREATE USER aquser IDENTIFIED BY aquser;
GRANT CONNECT, AQ_USER_ROLE, FORCE ANY TRANSACTION TO qs, aquser;
CREATE TYPE qs.customer_typ AS OBJECT (custno NUMBER, custid VARCHAR2(20), name VARCHAR2(100),
  street VARCHAR2(100), city VARCHAR2(30), state VARCHAR2(2), zip NUMBER, country VARCHAR2(20));
/
CREATE TYPE qs.book_typ AS OBJECT (title VARCHAR2(50), authors VARCHAR2(50), isbn VARCHAR2(20),
  price NUMBER);
/
CREATE TYPE qs.orderitem_typ AS OBJECT (quantity NUMBER, item qs.book_typ, subtotal NUMBER);
/
CREATE TYPE qs.orderitemlist_vartyp AS VARRAY(20) OF qs.orderitem_typ;
/
CREATE TYPE qs.order_typ AS OBJECT (orderno NUMBER, status VARCHAR2(30), ordertype VARCHAR2(30),
  orderregion VARCHAR2(30), customer qs.customer_typ, paymentmethod VARCHAR2(30),
  items qs.orderitemlist_vartyp, ccnumber VARCHAR2(20), order_date DATE);
/
CREATE OR REPLACE TYPE aquser.emp_typ AS object (
     empno NUMBER(4),
     ename VARCHAR2(10),
     job VARCHAR2(9),
     mgr NUMBER(4),
     hiredate DATE,
     sal   NUMBER(7,2),
     comm  NUMBER(7,2),
     deptno NUMBER(2));
/
BEGIN
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'qs.orders_qt', queue_payload_type => 'qs.order_typ');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'qs.new_orders_que', queue_table => 'qs.orders_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'qs.new_orders_que');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.emp_topic_qt', queue_payload_type => 'aquser.emp_typ',
                                multiple_consumers => TRUE);
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.emp_topic', queue_table => 'aquser.emp_topic_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.emp_topic');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.emp_qt', queue_payload_type => 'aquser.emp_typ');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.emp_que', queue_table => 'aquser.emp_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.emp_que');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.jms_text_qt',
                                queue_payload_type => 'SYS.AQ$_JMS_TEXT_MESSAGE');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.jms_textq', queue_table => 'aquser.jms_text_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.jms_textq');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.jms_map_topic_qt',
                                queue_payload_type => 'SYS.AQ$_JMS_MAP_MESSAGE', multiple_consumers => TRUE);
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.jms_map_topic', queue_table => 'aquser.jms_map_topic_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.jms_map_topic');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.jms_map_qt',
                                queue_payload_type => 'SYS.AQ$_JMS_MAP_MESSAGE');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.jms_mapq', queue_table => 'aquser.jms_map_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.jms_mapq');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.jms_bytes_qt',
                                queue_payload_type => 'SYS.AQ$_JMS_BYTES_MESSAGE');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.jms_bytesq', queue_table => 'aquser.jms_bytes_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.jms_bytesq');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.raw_qt', queue_payload_type => 'RAW');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.raw_msgq', queue_table => 'aquser.raw_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.raw_msgq');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.xml_qt', queue_payload_type => 'XMLTYPE');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.xml_q', queue_table => 'aquser.xml_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.xml_q');
  DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'aquser.json_qt', queue_payload_type => 'JSON');
  DBMS_AQADM.CREATE_QUEUE(queue_name => 'aquser.json_q', queue_table => 'aquser.json_qt');
  DBMS_AQADM.START_QUEUE(queue_name => 'aquser.json_q');
  DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', enable_http => true);
  DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'JOHN', db_username => 'QS');
  DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'JOHN', db_username => 'AQUSER');
END;
"""


def example(n: int | str) -> str:
    """The XML document printed under "Example 17-<n>" in seed 004, verbatim (from
    ``<Envelope`` to ``</Envelope>``; the XML declarations the seed prints are
    dropped: some are indented, which XML does not allow before them)."""
    text = SEED.read_text()
    start = text.index(f"Example 17-{n} ")
    begin = text.index("<Envelope", start)
    end = text.index("</Envelope>", begin) + len("</Envelope>")
    return text[begin:end]


def setup_store(dsn: str) -> None:
    with sluice.connect(dsn) as admin:
        for stmt in plsql.split_script(SETUP):
            plsql.execute(admin, stmt)
        admin.commit()


class ServerThread:
    """uvicorn in a thread on an ephemeral port; stops on :meth:`stop` or, at the latest,
    after ``max_seconds``."""

    def __init__(self, app, max_seconds: float = 300.0) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=5)
        self.server = IdapServer(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True, name="idap-test-server")
        self._watchdog = threading.Timer(max_seconds, self.stop)
        self._watchdog.daemon = True

    def start(self) -> "ServerThread":
        self.thread.start()
        self._watchdog.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the IDAP test server did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def stop(self) -> None:
        self.server.handle_exit(signal.SIGTERM, None)      # as on SIGTERM
        if threading.current_thread() is not self.thread:
            self.thread.join(15)
        self._watchdog.cancel()


def basic(user: str = AGENT, password: str = AGENT_PASSWORD) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@dataclass
class Servlet:
    """A running servlet and an HTTP client of agent JOHN (one HTTP session: cookies)."""

    dsn: str
    server: ServerThread
    config: IdapConfig
    clients: list[httpx.Client] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url + SERVLET

    def client(self, user: str = AGENT, password: str = AGENT_PASSWORD) -> httpx.Client:
        """A new HTTP client (a new HTTP session once the servlet sets its cookie)."""
        c = httpx.Client(base_url=self.server.url, headers=basic(user, password), timeout=30)
        self.clients.append(c)
        return c

    def post(self, document: str | bytes, client: httpx.Client | None = None,
             content_type: str = "text/xml", path: str = SERVLET) -> httpx.Response:
        client = client or (self.clients[0] if self.clients else self.client())
        data = document.encode() if isinstance(document, str) else document
        return client.post(path, content=data, headers={"Content-Type": content_type})


def start_servlet(dsn: str, **config) -> Servlet:
    cfg = IdapConfig(dsn, **config)
    return Servlet(dsn, ServerThread(create_app(cfg)).start(), cfg)


SLUICE = pathlib.Path(sys.executable).with_name("sluice")


class CliServer:
    """``sluice serve`` as a process of its own, on a free port, ready once its WSDL
    answers; :meth:`stop` sends SIGTERM (SIGKILL when it does not end).  ``ca_file``:
    it serves HTTPS (``args`` give --ssl-certfile/--ssl-keyfile), checked against that CA.

    The process is forked from the test process's preloaded parent (tests/forkserver.py:
    the CLI's entry point with this argv, the test's environment and directory; its own
    pid, signals and exit status), not started from the ``sluice`` script: an interpreter
    start and the serve stack's imports (~1 CPU-s) per server were much of the IDAP and
    HTTP-propagation modules' CPU.  ``proc`` is the part of a ``Popen`` the tests use
    (``stdout.read()``: stdout and stderr, once it ended)."""

    def __init__(self, dsn: str, *args: str, ca_file: str | None = None) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"{'https' if ca_file else 'http'}://127.0.0.1:{port}"
        verify = ssl.create_default_context(cafile=ca_file) if ca_file else True
        self.proc = forkserver.shared(*forkserver.FLEETS).popen(
            "tests.forkserver:cli", ["--dsn", dsn, "serve", "--host", "127.0.0.1", "--port", str(port), *args])
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(self.url + SERVLET + "?wsdl", timeout=1, verify=verify)
                return
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.kill()
                    raise RuntimeError("sluice serve did not start: " + self.proc.stdout.read().decode())
                time.sleep(0.1)

    def died(self) -> str:
        """Why a request found nobody listening: the process's exit status and output (it
        failed once, under a CI run's full load, with nothing to say why)."""
        status = self.proc.poll()
        if status is None:
            return "sluice serve is still running"
        return f"sluice serve ended with {status}: " + self.proc.stdout.read().decode(errors="replace")

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, then the exit status (uvicorn re-raises the signal: it may say SIGTERM)."""
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def store(dsn) -> str:
    setup_store(dsn)
    return dsn


@pytest.fixture
def servlet(store):
    s = start_servlet(store, session_timeout=30)
    yield s
    for c in s.clients:
        c.close()
    s.server.stop()


# -- reading responses -------------------------------------------------------------
def xml(response: httpx.Response | str | bytes) -> etree._Element:
    body = response.content if isinstance(response, httpx.Response) else response
    if isinstance(body, str):
        body = body.encode()
    return etree.fromstring(body)


def q(name: str) -> str:
    return f"{{{AQ}}}{name}"


def fault_of(response: httpx.Response) -> dict[str, str]:
    """faultcode, faultstring, status_code, error_code, error_message of a Fault response."""
    assert response.status_code == 500, response.text
    assert response.headers["content-type"].startswith("text/xml")
    root = xml(response)
    fault = root.find(f"{{{SOAP}}}Body/{{{SOAP}}}Fault")
    assert fault is not None, response.text
    status = fault.find(f"detail/{q('status_response')}")
    out = {"faultcode": fault.findtext("faultcode"), "faultstring": fault.findtext("faultstring"),
           "status_code": status.findtext(q("status_code")),
           "error_code": status.findtext(q("error_code")),
           "error_message": status.findtext(q("error_message"))}
    return out


def msgids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [e.text for e in xml(response).iter(q("message_id"))]


def received(response: httpx.Response) -> list[etree._Element]:
    """The <message> elements of an AQXmlReceiveResponse."""
    assert response.status_code == 200, response.text
    return list(xml(response).iter(q("message")))


def receive(destination: str, wait: int = 0, extra: str = "", commit: bool = False,
            consumer: str | None = None) -> str:
    name = f"<consumer_name>{consumer}</consumer_name>" if consumer else ""
    return (f'<Envelope xmlns="{SOAP}"><Body><AQXmlReceive xmlns="{AQ}"><consumer_options>'
            f"<destination>{destination}</destination>{name}<wait_time>{wait}</wait_time>{extra}"
            f"</consumer_options>{'<AQXmlCommit/>' if commit else ''}</AQXmlReceive></Body></Envelope>")


def send_raw(destination: str, hex_payload: str = "414243", correlation: str = "c",
             commit: bool = False, options: str = "", header: str = "") -> str:
    return (f'<Envelope xmlns="{SOAP}"><Body><AQXmlSend xmlns="{AQ}"><producer_options>'
            f"<destination>{destination}</destination>{options}</producer_options><message_set>"
            f"<message_count>1</message_count><message><message_number>1</message_number>"
            f"<message_header><correlation>{correlation}</correlation>{header}<sender_id>"
            f"<agent_name>scott</agent_name></sender_id></message_header><message_payload>"
            f"<raw>{hex_payload}</raw></message_payload></message></message_set>"
            f"{'<AQXmlCommit/>' if commit else ''}</AQXmlSend></Body></Envelope>")


def send_doc(destination: str, payload: str | list[str], header: str = "", options: str = "",
             commit: bool = True, method: str = "AQXmlSend") -> str:
    """An AQXmlSend (or ``method``) of one message per payload element, all with ``header``."""
    messages = "".join(
        f"<message><message_header>{header}<sender_id><agent_name>scott</agent_name></sender_id>"
        f"</message_header><message_payload>{p}</message_payload></message>"
        for p in ([payload] if isinstance(payload, str) else payload))
    return (f'<Envelope xmlns="{SOAP}"><Body><{method} xmlns="{AQ}"><producer_options>'
            f"<destination>{destination}</destination>{options}</producer_options><message_set>"
            f"{messages}</message_set>{'<AQXmlCommit/>' if commit else ''}</{method}></Body></Envelope>")


def commit_doc(method: str = "AQXmlCommit") -> str:
    return f'<Envelope xmlns="{SOAP}"><Body><{method} xmlns="{AQ}"/></Body></Envelope>'


def count(dsn: str, queue: str) -> int:
    """READY messages of a queue, as another (committed) session sees them."""
    with sluice.connect(dsn) as c:
        qi = c.context.catalog.queue(queue)
        return c.context.store.count_messages(qi, [0, 1])


COOKIE_NAME = "JSESSIONID"
