"""The AQ servlet as an ASGI application (Starlette), and ``sluice serve`` (uvicorn).

``POST /aqserv/servlet/<ServletName>`` takes an IDAP request — ``text/xml``, or
``application/x-www-form-urlencoded`` with the document in parameter ``aqxmldoc``
(seed 004 "Deploying the Oracle Streams AQ XML Servlet") — from an agent
authenticated with HTTP Basic (see :mod:`.agents`).  Any servlet name works;
``AQPropServlet`` is the receiving end of HTTP propagation (a message_id sent to it
becomes the message's original_msgid).  ``GET …?wsdl`` describes the operations
(:mod:`.wsdl`); ``GET /aqserv/servlet/aq_access.xsd`` and ``soap_env.xsd`` are the
schemas.

Answers: 200 with the IDAP response; 500 with a SOAP Fault for every error once the
agent is authenticated (SOAP 1.1 §6.2); 401 without valid credentials; 413 past the
request size limit; 415 for other content types; 405 for other methods.  Nothing
else escapes: an unexpected exception is logged and answered with an ORA-00600 Fault.

Requests are parsed, validated and run in worker threads; the event loop only speaks
HTTP.  Shutdown is graceful (:class:`IdapServer`): uvicorn stops accepting and lets
running requests finish (long receives stop at their next one-second slice), then
every HTTP session's open transaction is rolled back and every connection closed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ..errors import Error, NotSupportedError, OperationalError, not_supported, ora
from . import ops, serialise
from .agents import AgentPolicy
from .parse import EndTransaction, ReceiveRequest, Request, SendRequest, parse_request
from .schema import AQ_NS, SOAP_NS, Envelope, read_request, xsd_text
from .sessions import COOKIE, ConnectionPool, HttpSession, SessionManager
from .wsdl import wsdl

log = logging.getLogger("sluice.idap")
XML_TYPES = ("text/xml", "application/xml", "application/soap+xml")
FORM_TYPE = "application/x-www-form-urlencoded"
PROPAGATION_SERVLET = "AQPropServlet"
_WAIT_TIME = re.compile(rb"wait_time\s*>([^<]*)<")
_ENCODING_DECL = re.compile(r"""^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*["'][^"']*["']""")


@dataclass
class IdapConfig:
    """What ``init()`` of Oracle's servlet sets: the data source (``dsn`` and the servlet
    super-user ``user``/``password``; default the bootstrap administrator SLUICE), the
    pool size (``setCacheSize``), the session timeout (``setSessionMaxInactiveTime``)
    and the style sheet of every response (``setStyleSheet(type, href)``).

    ``workers``: threads for requests that do not wait (sends, commits, receives without
    wait_time).  Python runs one thread at a time: two overlap the store's I/O with
    parsing, more only queue for the interpreter lock and starve the event loop (16
    clients on 2 cores: 2,900 requests/s with 2 workers, 1,500 with 50).  Receives that
    may wait get threads of their own, up to ``pool_max``."""

    dsn: str
    user: str | None = None
    password: str | None = None
    pool_max: int = 50
    pool_min: int = 1
    session_timeout: float = 120.0
    max_request_bytes: int = 1 << 20
    max_sessions: int = 10_000
    workers: int = 2
    stylesheet: tuple[str, str] | None = None
    realm: str = "AQ restricted stuff"        # AuthName of seed 004 Example 17-23


class Servlet:
    """The running servlet: its own connection, the agent policy, pool and sessions."""

    def __init__(self, config: IdapConfig, stopping: ops.Stopper | None = None) -> None:
        import sluice
        self.config = config
        self.control = sluice.connect(config.dsn, user=config.user, password=config.password)
        self.policy = AgentPolicy(self.control)
        pool = ConnectionPool(config.dsn, self.control.username, config.pool_max, config.pool_min)
        self.sessions = SessionManager(pool, config.session_timeout, config.max_sessions)
        self.stopping = stopping or ops.Stopper()
        self.executor = ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="idap")
        self.waiters = ThreadPoolExecutor(max_workers=config.pool_max, thread_name_prefix="idap-wait")

    def close(self) -> None:
        self.stopping.set()
        self.executor.shutdown(wait=True)
        self.waiters.shutdown(wait=True)      # waits end within a slice (ops.WAIT_SLICE)
        self.sessions.close_all()
        self.control.close()

    # -- one request, in a worker thread --------------------------------------------
    def handle(self, session: HttpSession, agent_name: str, body: bytes, content_type: str,
               method_header: str | None, servlet_name: str) -> tuple[int, bytes, bool]:
        """Everything after HTTP, in a worker thread (lxml gives up the GIL while it parses:
        on the event loop's thread that would mean waiting for it back behind every worker).

        Returns the HTTP status (200, or 500 with a SOAP Fault), the document, and whether
        the request was valid (reached an operation).
        """
        envelope_ns = SOAP_NS
        try:
            env = read_request(_document(body, content_type))
            envelope_ns = env.namespace
            faultcode = _check_headers(method_header, env)
            if faultcode is not None:
                error = ora(19202, "a header entry marked mustUnderstand is not understood by this servlet")
                return 500, _fault_document(faultcode, error, envelope_ns), False
            request = parse_request(env)
        except Error as e:
            return 500, _fault_document("Client", e, envelope_ns), False
        try:
            return 200, self.run(session, agent_name, request, env, servlet_name), True
        except Error as e:
            return 500, _fault_document(_fault_kind(e), e, envelope_ns), True
        except Exception as e:     # never a traceback, an empty 500 or a dropped connection
            log.exception("internal error in the IDAP servlet")
            return 500, _fault_document("Server", ora(600, type(e).__name__), envelope_ns), True

    def run(self, session: HttpSession, agent_name: str, request: Request, env: Envelope,
            servlet_name: str) -> bytes:
        agent = self.policy.agent(agent_name)
        ctx = ops.Context(None, env.namespace, servlet_name == PROPAGATION_SERVLET,
                          self.config.stylesheet, self.stopping)
        conn = session.conn
        if isinstance(request, EndTransaction):
            return ops.execute(conn, request, ctx)
        if request.destination.lookup_type == "LDAP":
            raise not_supported("lookup_type LDAP (destinations resolved by a directory server)")
        senders, consumer, operation = [], None, "DEQUEUE"
        if isinstance(request, SendRequest):
            operation = "ENQUEUE"
            senders = [ops.agent_of(m.header.sender_id) for m in request.messages]
        elif isinstance(request, ReceiveRequest) or request.consumer_name:
            consumer = request.consumer_name
        in_txn = conn is not None and conn.transaction_in_progress
        user, ctx.queue = self.policy.choose(agent, request.destination.name, operation, senders,
                                             consumer, conn.username if conn else None, in_txn)
        return ops.execute(self.sessions.attach(session, user), request, ctx)


def _fault_document(faultcode: str, error: BaseException, envelope_ns: str = SOAP_NS) -> bytes:
    code, message = serialise.error_parts(error)
    return serialise.fault(faultcode, code, message, envelope_ns)


def _fault(faultcode: str, error: BaseException, envelope_ns: str = SOAP_NS) -> Response:
    return Response(_fault_document(faultcode, error, envelope_ns), status_code=500,
                    media_type="text/xml; charset=utf-8")


def _fault_kind(error: Error) -> str:
    """Server: the servlet cannot do it (not supported, unavailable); Client: the request."""
    return "Server" if isinstance(error, (NotSupportedError, OperationalError)) or error.code == 600 \
        else "Client"


def _unauthorized(realm: str) -> Response:
    return PlainTextResponse("401 Unauthorized: HTTP Basic credentials of an AQ agent required\n",
                             status_code=401, headers={"WWW-Authenticate": f'Basic realm="{realm}"'})


def _credentials(request: HttpRequest) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if header[:6].lower() != "basic ":
        return None
    try:
        decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    user, sep, password = decoded.partition(":")
    return (user, password) if sep and user else None


async def _body(request: HttpRequest, limit: int) -> bytes | None:
    """The request body, or None past ``limit`` bytes (declared or actual)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _document(body: bytes, content_type: str) -> bytes:
    """The IDAP document of a POST body.  :raises: ORA-19202 for a form without aqxmldoc."""
    if content_type != FORM_TYPE:
        return body
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=100, strict_parsing=False,
                          encoding="utf-8", errors="strict")
    except (UnicodeDecodeError, ValueError) as e:
        raise ora(19202, f"the form data cannot be decoded ({e})") from None
    values = fields.get("aqxmldoc")
    if not values:
        raise ora(19202, "application/x-www-form-urlencoded requests carry the document in aqxmldoc")
    # the text is Unicode already: an encoding declaration in it no longer applies
    return _ENCODING_DECL.sub(r"\1", values[0], count=1).encode("utf-8")


def _check_headers(method: str | None, env: Envelope) -> str | None:
    """SOAP 1.1 header rules (``method``: the SOAPMethodName HTTP header): the faultcode
    to answer with, or None.  :raises: ORA-19202 when SOAPMethodName names another method."""
    for entry in env.headers:
        if entry.get(f"{{{SOAP_NS}}}mustUnderstand", "0").strip() == "1":
            return "MustUnderstand"
    if method is not None:
        uri, _, name = method.strip().rpartition("#")
        if uri != AQ_NS or name != env.method:
            raise ora(19202, f"SOAPMethodName {method.strip()} does not name the body's {env.method}")
    return None


async def servlet_endpoint(request: HttpRequest) -> Response:
    servlet: Servlet = request.app.state.servlet
    name = request.path_params["name"]
    if request.method == "GET":
        return _get(request, name)
    try:
        return await _post(request, servlet, name)
    except Exception as e:     # never a traceback, an empty 500 or a dropped connection
        log.exception("internal error in the IDAP servlet")
        return _fault("Server", ora(600, type(e).__name__))


def _get(request: HttpRequest, name: str) -> Response:
    if name in ("aq_access.xsd", "soap_env.xsd"):
        return Response(xsd_text(name), media_type="text/xml; charset=utf-8")
    if any(k.lower() == "wsdl" for k in request.query_params):
        location = str(request.url.replace(query=""))
        return Response(wsdl(location, name), media_type="text/xml; charset=utf-8")
    return PlainTextResponse("405 Method Not Allowed: POST an IDAP document (GET ?wsdl for the WSDL)\n",
                             status_code=405, headers={"Allow": "GET, POST"})


async def _post(request: HttpRequest, servlet: Servlet, name: str) -> Response:
    config = servlet.config
    creds = _credentials(request)
    if creds is None:
        return _unauthorized(config.realm)
    agent = servlet.policy.authenticate_cached(*creds)
    if agent is None:
        agent = await anyio.to_thread.run_sync(servlet.policy.authenticate, *creds)
        if agent is None:
            return _unauthorized(config.realm)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type not in XML_TYPES and content_type != FORM_TYPE:
        return PlainTextResponse("415 Unsupported Media Type: text/xml or "
                                 "application/x-www-form-urlencoded (aqxmldoc)\n", status_code=415)
    body = await _body(request, config.max_request_bytes)
    if body is None:
        return PlainTextResponse(f"413 Request Entity Too Large: the limit is "
                                 f"{config.max_request_bytes} bytes\n", status_code=413)
    sessions = servlet.sessions
    session = sessions.find(request.cookies.get(COOKIE), agent)
    new = session is None
    try:
        if new:
            session = sessions.create(agent)
    except Error as e:
        return _fault(_fault_kind(e), e)
    async with session.lock:
        sessions.begin(session)
        try:
            pool = servlet.waiters if _may_wait(body) else servlet.executor
            status, document, valid = await asyncio.get_running_loop().run_in_executor(
                pool, servlet.handle, session, agent, body, content_type,
                request.headers.get("soapmethodname"), name)
        finally:
            sessions.end(session)
    response = Response(document, status_code=status, media_type="text/xml; charset=utf-8")
    if new:
        if valid:
            response.set_cookie(COOKIE, session.id, path="/aqserv", httponly=True, samesite="strict")
        else:      # a document that never reached an operation leaves no session behind
            sessions.discard(session)
    return response


def _may_wait(body: bytes) -> bool:
    """Whether a request may block in a dequeue wait: an AQXmlReceive whose wait_time is not
    0.  Decided on the raw bytes (before parsing, which the worker does): a wrong guess
    only picks the other thread pool."""
    lower = body.lower()
    if b"aqxmlreceive" not in lower:
        return False
    m = _WAIT_TIME.search(lower)
    return m is None or m.group(1).strip() != b"0"


async def _reaper(servlet: Servlet) -> None:
    """End idle sessions (their transactions roll back) about four times per timeout."""
    sweep = max(0.05, min(1.0, servlet.config.session_timeout / 4))
    while True:
        await asyncio.sleep(sweep)
        try:
            await anyio.to_thread.run_sync(servlet.sessions.expire)
        except Exception:
            log.exception("expiring IDAP sessions failed")


def create_app(config: IdapConfig) -> Starlette:
    """The servlet application.  Connecting (and authenticating the super-user) happens
    at start-up, in the application's lifespan."""

    stopping = ops.Stopper()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        servlet = await anyio.to_thread.run_sync(Servlet, config, stopping)
        app.state.servlet = servlet
        reaper = asyncio.create_task(_reaper(servlet))
        try:
            yield
        finally:
            servlet.stopping.set()
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            deadline = time.monotonic() + 5.0   # let running requests end their slice
            while servlet.sessions.any_busy() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await anyio.to_thread.run_sync(servlet.close)

    routes = [Route("/aqserv/servlet/{name}", servlet_endpoint, methods=["GET", "POST"])]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.stopping = stopping
    return app


class IdapServer(uvicorn.Server):
    """uvicorn's server, telling the servlet as soon as shutdown begins: uvicorn lets
    running requests finish before the application hears of it, and a receive waiting
    forever would never finish (it stops at its next wait slice instead)."""

    def handle_exit(self, sig: int, frame: Any) -> None:
        stopping = getattr(getattr(self.config.app, "state", None), "stopping", None)
        if stopping is not None:
            stopping.set()
        super().handle_exit(sig, frame)


def serve(config: IdapConfig, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info") -> None:
    """Run the servlet on uvicorn until SIGINT/SIGTERM (``sluice serve``)."""
    uv_config = uvicorn.Config(create_app(config), host=host, port=port, log_level=log_level,
                               timeout_graceful_shutdown=10, access_log=False)
    IdapServer(uv_config).run()
