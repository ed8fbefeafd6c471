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

Where a request runs.  Python runs one thread at a time, so a worker thread adds
nothing to a request that needs the interpreter throughout — only hand-offs
(futures, wake-ups, the interpreter lock passed back and forth between the event
loop and the workers), which cost more than the request: a RAW send with commit
takes ~130 µs of CPU once parsed and run in one thread, while handing it to two
workers made the server spend 450–700 µs per request.  So a short request that
cannot wait — a send, publish, commit, rollback, or receive with wait_time 0, whose
document is at most ``inline_max_bytes`` — is parsed, validated and run on the event
loop once its HTTP session holds a connection (the store's part of such a request
is tens of microseconds).  Receives that may wait run in threads of their own,
larger documents and a session's first request (which opens a database connection)
in worker threads.  The price: while a request runs on the event loop nothing else
does — a commit that waits for SQLite's write lock held by another process holds up
the whole server meanwhile, where before it held up one worker.

POST is served as plain ASGI (:class:`IdapApp`), past Starlette's middleware and
router, and uvicorn writes each response in one system call (:mod:`.httpserver`).

A receive whose client disconnects has no effect: its wait is cancelled and what it
took is given back (:class:`ops.ClientWatch`, docs/DESIGN-NOTES.md).

Shutdown is graceful (:class:`IdapServer`): uvicorn stops accepting and lets
running requests finish (long receives stop at their next one-second slice), then
every HTTP session's open transaction is rolled back and every connection closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookies
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, Sequence
from urllib.parse import parse_qs

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.requests import cookie_parser
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from ..errors import Error, NotSupportedError, OperationalError, not_supported, ora
from ..security.httpauth import basic_credentials
from ..monitor.access import OK as ACCESS_OK, MonitorAccess, refusal
from ..monitor.prometheus import CONTENT_TYPE as METRICS_TYPE, Metrics
from . import ops, serialise
from .agents import AgentPolicy
from .httpserver import http_protocol
from .propreceiver import LIMIT_HEADER, MAX_BATCH_BYTES, MEDIA_TYPE as PROPAGATED_BATCH, receive_batch
from .parse import EndTransaction, ReceiveRequest, Request, SendRequest, parse_request
from .schema import AQ_NS, SOAP_NS, Envelope, read_request, xsd_text
from .sessions import COOKIE, ConnectionPool, HttpSession, SessionManager
from .wsdl import wsdl

log = logging.getLogger("sluice.idap")
XML_TYPES = ("text/xml", "application/xml", "application/soap+xml")
FORM_TYPE = "application/x-www-form-urlencoded"
PROPAGATION_SERVLET = "AQPropServlet"
Answer = tuple[int, bytes, bool]       # HTTP status, document, whether the request was valid
GONE: Answer = (0, b"", True)          # a receive undone because its client went away
_WAIT_TIME = re.compile(rb"wait_time\s*>([^<]*)<")
_ENCODING_DECL = re.compile(r"""^(\s*<\?xml[^>]*?)\s+encoding\s*=\s*["'][^"']*["']""")


@dataclass
class IdapConfig:
    """What ``init()`` of Oracle's servlet sets: the data source (``dsn`` and the servlet
    super-user ``user``/``password``; default the bootstrap administrator SLUICE), the
    pool size (``setCacheSize``), the session timeout (``setSessionMaxInactiveTime``)
    and the style sheet of every response (``setStyleSheet(type, href)``).

    ``inline_max_bytes``: documents up to this size are read on the event loop, and run
    there too when they cannot wait (sends, commits, rollbacks, receives with wait_time
    0) and their session holds a connection — no thread hand-off, no contention for
    the interpreter lock (see the module docstring); 0 sends every request to a thread.
    ``workers``: threads for the other requests that do not wait (larger documents, a
    session's first request); Python runs one thread at a time, so more than a few only
    queue for the interpreter lock and starve the event loop.  Receives that may wait
    get threads of their own, up to ``pool_max``."""

    dsn: str
    user: str | None = None
    password: str | None = None
    pool_max: int = 50
    pool_min: int = 1
    session_timeout: float = 120.0
    max_request_bytes: int = 1 << 20
    max_batch_bytes: int = MAX_BATCH_BYTES      # a propagated batch posted to AQPropServlet
    max_sessions: int = 10_000
    workers: int = 2
    inline_max_bytes: int = 64 * 1024
    stylesheet: tuple[str, str] | None = None
    realm: str = "AQ restricted stuff"        # AuthName of seed 004 Example 17-23
    monitor_max_age: float = 1.0              # seconds /metrics and the dashboard share a snapshot

    def __post_init__(self) -> None:
        # refused here, not by the server's start-up (a traceback in its log, no server)
        bad = [f"{name} {value!r}" for name, value, ok in (
            ("pool_max", self.pool_max, self.pool_max >= 1),
            ("pool_min", self.pool_min, 0 <= self.pool_min <= self.pool_max),
            ("session_timeout", self.session_timeout, self.session_timeout > 0),
            ("max_request_bytes", self.max_request_bytes, self.max_request_bytes >= 1),
            ("max_batch_bytes", self.max_batch_bytes, self.max_batch_bytes >= 1),
            ("max_sessions", self.max_sessions, self.max_sessions >= 1),
            ("workers", self.workers, self.workers >= 1),
            ("inline_max_bytes", self.inline_max_bytes, self.inline_max_bytes >= 0),
            ("monitor_max_age", self.monitor_max_age, self.monitor_max_age >= 0)) if not ok]
        if bad:
            raise ValueError(f"invalid servlet settings: {', '.join(bad)} (pool_max and workers at least 1, "
                             f"0 <= pool_min <= pool_max, session_timeout above 0)")


def _connect(config: IdapConfig):
    import sluice
    return sluice.connect(config.dsn, user=config.user, password=config.password)


class Servlet:
    """The running servlet: its own connection, the agent policy, pool and sessions."""

    def __init__(self, config: IdapConfig, stopping: ops.Stopper | None = None) -> None:
        self.config = config
        self.control = _connect(config)
        self.policy = AgentPolicy(self.control)
        pool = ConnectionPool(config.dsn, self.control.username, config.pool_max, config.pool_min)
        self.sessions = SessionManager(pool, config.session_timeout, config.max_sessions)
        self.stopping = stopping or ops.Stopper()
        self.executor = ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="idap")
        self.waiters = ThreadPoolExecutor(max_workers=config.pool_max, thread_name_prefix="idap-wait")
        # the server's one source of monitoring snapshots (/metrics, the dashboard): set by
        # create_app (sluice.monitor.source.SnapshotSource)
        self.snapshots: Any = None

    def close(self) -> None:
        self.stopping.set()
        self.executor.shutdown(wait=True)
        self.waiters.shutdown(wait=True)      # waits end within a slice (ops.WAIT_SLICE)
        self.sessions.close_all()
        self.control.close()

    # -- one request ----------------------------------------------------------------
    def handle(self, session: HttpSession, agent_name: str, body: bytes, content_type: str,
               method_header: str | None, servlet_name: str,
               client: ops.ClientWatch | None = None) -> Answer:
        """Everything after HTTP: :meth:`read`, then :meth:`perform`."""
        answer, env, request = self.read(body, content_type, method_header)
        if answer is not None:
            return answer
        return self.perform(session, agent_name, env, request, servlet_name, client)

    def read(self, body: bytes, content_type: str, method_header: str | None
             ) -> tuple[Answer | None, Envelope | None, Request | None]:
        """Parse and validate a request document: (None, envelope, request), or (the Client
        Fault to answer with, None, None)."""
        envelope_ns = SOAP_NS
        try:
            env = read_request(_document(body, content_type))
            envelope_ns = env.namespace
            faultcode = _check_headers(method_header, env)
            if faultcode is not None:
                error = ora(19202, "a header entry marked mustUnderstand is not understood by this servlet")
                return (500, _fault_document(faultcode, error, envelope_ns), False), None, None
            return None, env, parse_request(env)
        except Error as e:
            return (500, _fault_document("Client", e, envelope_ns), False), None, None

    def perform(self, session: HttpSession, agent_name: str, env: Envelope, request: Request,
                servlet_name: str, client: ops.ClientWatch | None = None) -> Answer:
        """Run a valid request: the HTTP status (200, or 500 with a SOAP Fault), the
        document, and True (the request was valid: it reached an operation); :data:`GONE`
        for a receive undone because its ``client`` went away."""
        try:
            return 200, self.run(session, agent_name, request, env, servlet_name, client), True
        except ops.ClientLeft:
            return GONE
        except Error as e:
            return 500, _fault_document(_fault_kind(e), e, env.namespace), True
        except Exception as e:     # never a traceback, an empty 500 or a dropped connection
            log.exception("internal error in the IDAP servlet")
            return 500, _fault_document("Server", ora(600, type(e).__name__), env.namespace), True

    def run(self, session: HttpSession, agent_name: str, request: Request, env: Envelope,
            servlet_name: str, client: ops.ClientWatch | None = None) -> bytes:
        agent = self.policy.agent(agent_name)
        ctx = ops.Context(None, env.namespace, servlet_name == PROPAGATION_SERVLET,
                          self.config.stylesheet, self.stopping, client)
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


def _fault_kind(error: Error) -> str:
    """Server: the servlet cannot do it (not supported, unavailable); Client: the request."""
    return "Server" if isinstance(error, (NotSupportedError, OperationalError)) or error.code == 600 \
        else "Client"


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


# -- HTTP ---------------------------------------------------------------------------
# POST is the hot path (one per enqueue): it speaks ASGI directly — headers read once
# from the scope, the response written as two messages — rather than through
# Starlette's middleware, router, Request and Response objects; GET (the WSDL, the
# schemas) goes through Starlette.
SERVLET_PATH = "/aqserv/servlet/"
_XML_MEDIA = b"text/xml; charset=utf-8"
_TEXT_MEDIA = b"text/plain; charset=utf-8"


class _Disconnected(Exception):
    """The client went away before its request was read."""


async def _respond(send: Any, status: int, body: bytes, media: bytes = _XML_MEDIA,
                   headers: list[tuple[bytes, bytes]] | None = None) -> None:
    raw = [(b"content-length", b"%d" % len(body)), (b"content-type", media)]
    if headers:
        raw += headers
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _respond_text(send: Any, status: int, text: str,
                        headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await _respond(send, status, text.encode("utf-8"), _TEXT_MEDIA, headers)


async def _unauthorized(send: Any, realm: str) -> None:
    await _respond_text(send, 401, "401 Unauthorized: HTTP Basic credentials of an AQ agent required\n",
                        [(b"www-authenticate", f'Basic realm="{realm}"'.encode("latin-1"))])


async def _body(receive: Any, declared: str | None, limit: int) -> bytes | None:
    """The request body, or None past ``limit`` bytes (declared or actual).
    :raises _Disconnected: when the client goes away first."""
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        return None
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _Disconnected
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _session_cookie(session_id: str) -> tuple[bytes, bytes]:
    """The Set-Cookie header of a new session (as Starlette's set_cookie writes it)."""
    cookie: http.cookies.SimpleCookie = http.cookies.SimpleCookie()
    cookie[COOKIE] = session_id
    cookie[COOKIE]["path"] = "/aqserv"
    cookie[COOKIE]["httponly"] = True
    cookie[COOKIE]["samesite"] = "strict"
    return b"set-cookie", cookie.output(header="").strip().encode("latin-1")


class ServletEndpoint:
    """``/aqserv/servlet/{name}`` as a plain ASGI application (a Starlette route's
    endpoint, and what :class:`IdapApp` calls directly for POST)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        name = scope["path_params"]["name"]
        if scope["method"] != "POST":
            await _get(HttpRequest(scope, receive), name)(scope, receive, send)
            return
        try:
            await _post(scope, receive, send, scope["app"].state.servlet, name)
        except _Disconnected:
            pass            # nobody left to answer
        except Exception as e:     # never a traceback, an empty 500 or a dropped connection
            log.exception("internal error in the IDAP servlet")
            await _respond(send, 500, _fault_document("Server", ora(600, type(e).__name__)))


servlet_endpoint = ServletEndpoint()


def _get(request: HttpRequest, name: str) -> Response:
    if name in ("aq_access.xsd", "soap_env.xsd"):
        return Response(xsd_text(name), media_type="text/xml; charset=utf-8")
    if any(k.lower() == "wsdl" for k in request.query_params):
        location = str(request.url.replace(query=""))
        return Response(wsdl(location, name), media_type="text/xml; charset=utf-8")
    return PlainTextResponse("405 Method Not Allowed: POST an IDAP document (GET ?wsdl for the WSDL)\n",
                             status_code=405, headers={"Allow": "GET, POST"})


async def _post(scope: Any, receive: Any, send: Any, servlet: Servlet, name: str) -> None:
    config = servlet.config
    headers: dict[bytes, bytes] = {}
    for key, value in scope["headers"]:      # the first of each, as Starlette's Headers.get
        if key not in headers:
            headers[key] = value
    creds = basic_credentials(headers.get(b"authorization", b"").decode("latin-1"))
    if creds is None:
        return await _unauthorized(send, config.realm)
    agent = servlet.policy.authenticate_cached(*creds)
    if agent is None:
        agent = await anyio.to_thread.run_sync(servlet.policy.authenticate, *creds)
        if agent is None:
            return await _unauthorized(send, config.realm)
    content_type = headers.get(b"content-type", b"").decode("latin-1").split(";")[0].strip().lower()
    if content_type == PROPAGATED_BATCH and name == PROPAGATION_SERVLET:
        return await _propagated(send, servlet, agent, headers, receive)
    if content_type not in XML_TYPES and content_type != FORM_TYPE:
        return await _respond_text(send, 415, "415 Unsupported Media Type: text/xml or "
                                              "application/x-www-form-urlencoded (aqxmldoc)\n")
    declared = headers.get(b"content-length")
    body = await _body(receive, None if declared is None else declared.decode("latin-1"),
                       config.max_request_bytes)
    if body is None:
        return await _respond_text(send, 413, f"413 Request Entity Too Large: the limit is "
                                              f"{config.max_request_bytes} bytes\n")
    cookie = headers.get(b"cookie")
    session_id = cookie_parser(cookie.decode("latin-1")).get(COOKIE) if cookie is not None else None
    method = headers.get(b"soapmethodname")
    method_header = None if method is None else method.decode("latin-1")
    sessions = servlet.sessions
    session = sessions.find(session_id, agent)
    new = session is None
    if new:
        try:
            session = sessions.create(agent)
        except Error as e:
            return await _respond(send, 500, _fault_document(_fault_kind(e), e))
    contended = session.lock.locked()
    async with session.lock:
        sessions.begin(session)
        try:
            answer = await _dispatch(servlet, session, agent, body, content_type, method_header,
                                     name, receive, contended)
        finally:
            sessions.end(session)
    if answer is GONE:
        return          # nobody left to answer
    status, document, valid = answer
    extra = None
    if new:
        if valid:
            extra = [_session_cookie(session.id)]
        else:      # a document that never reached an operation leaves no session behind
            sessions.discard(session)
    await _respond(send, status, document, _XML_MEDIA, extra)


async def _propagated(send: Any, servlet: Servlet, agent: str, headers: dict, receive: Any) -> None:
    """A batch another Sluice site propagates (:mod:`.propreceiver`): committed in a worker
    thread, then answered — 200, or a SOAP Fault with nothing committed.  Its size limit is
    ``max_batch_bytes`` (``sluice serve --max-batch-bytes``), which every answer advertises
    (``LIMIT_HEADER``): the sender sizes its requests by it (a 413 teaches it too)."""
    limit = servlet.config.max_batch_bytes
    advertised = (LIMIT_HEADER.lower().encode("latin-1"), b"%d" % limit)
    declared = headers.get(b"content-length")
    body = await _body(receive, None if declared is None else declared.decode("latin-1"), limit)
    # a refused batch closes the connection: a sender pipelining its batches (sites.HttpSite)
    # must not have a later one committed before the refused one is
    close = [(b"connection", b"close"), advertised]
    if body is None:
        return await _respond_text(send, 413, f"413 Request Entity Too Large: the limit is {limit} bytes\n", close)
    try:
        answer = await anyio.to_thread.run_sync(receive_batch, servlet, agent, body)
    except Error as e:
        return await _respond(send, 500, _fault_document(_fault_kind(e), e), headers=close)
    await _respond(send, 200, answer, b"application/json", [advertised])


async def _dispatch(servlet: Servlet, session: HttpSession, agent: str, body: bytes,
                    content_type: str, method_header: str | None, name: str, receive: Any,
                    contended: bool) -> Answer:
    """Run a request where it costs least (see the module docstring): a document up to
    ``inline_max_bytes`` is read on the event loop; then a request that may wait goes to
    a thread of its own, one of a session without a connection yet (opening one takes
    a while) to a worker thread, and the rest — sends, commits, rollbacks, receives with
    wait_time 0 — runs on the event loop.  Larger documents are read and run in threads.

    A receive has no effect once its client has gone (:class:`ops.ClientWatch`): in a
    thread it is watched throughout; on the event loop it runs and is answered in one
    turn of the loop, so only a client that left while the request waited for its
    session (``contended``) needs looking at, before."""
    loop = asyncio.get_running_loop()
    if len(body) > servlet.config.inline_max_bytes:
        pool = servlet.waiters if _may_wait(body) else servlet.executor
        return await _watched(loop, pool, receive, servlet.handle, session, agent, body, content_type,
                              method_header, name)
    answer, env, request = servlet.read(body, content_type, method_header)
    if answer is not None:
        return answer
    if isinstance(request, ReceiveRequest) and request.wait_time != 0:
        pool = servlet.waiters
    elif session.conn is None:
        pool = servlet.executor
    elif contended and isinstance(request, ReceiveRequest) and await _client_gone(receive):
        return GONE
    else:
        return servlet.perform(session, agent, env, request, name)
    return await _watched(loop, pool, receive, servlet.perform, session, agent, env, request, name)


async def _watched(loop: asyncio.AbstractEventLoop, pool: ThreadPoolExecutor, receive: Any,
                   fn: Any, *args: Any) -> Answer:
    """``fn(*args, client)`` in a thread of ``pool`` while the client is watched: when it
    disconnects, the client watch says so (and cancels a receive's wait)."""
    def catch_up() -> None:     # in the thread
        try:
            asyncio.run_coroutine_threadsafe(_loop_turns(), loop).result(5)
        except Exception:       # a loop stuck or gone: what it knows is all there is
            pass

    client = ops.ClientWatch(catch_up)
    watcher = asyncio.ensure_future(_watch_disconnect(receive, client))
    try:
        return await loop.run_in_executor(pool, fn, *args, client)
    finally:
        watcher.cancel()


async def _watch_disconnect(receive: Any, client: ops.ClientWatch) -> None:
    """Tell ``client`` when the HTTP client disconnects (the request body is read: what
    ``receive`` has left to say is ``http.disconnect``)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    client.left()


async def _loop_turns(n: int = 5) -> None:
    """Let the event loop go round ``n`` times: each turn polls the network, so a client's
    disconnect that has reached this host reaches the client watch (the socket's end of
    file, then uvicorn's connection_lost, then the watcher task: three turns)."""
    for _ in range(n):
        await asyncio.sleep(0)


async def _client_gone(receive: Any) -> bool:
    """Whether the client has disconnected already (as Starlette's
    ``Request.is_disconnected``: a receive that would wait is cancelled at once)."""
    with anyio.CancelScope() as scope:
        scope.cancel()
        return (await receive())["type"] == "http.disconnect"
    return False


def _may_wait(body: bytes) -> bool:
    """Whether a large document (read in a thread) may block in a dequeue wait: an
    AQXmlReceive whose wait_time is not 0.  Decided on the raw bytes, before parsing: a
    wrong guess only picks the other thread pool."""
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


def _route_path(scope: Any) -> str:
    """The path the router matches (the path below ``root_path``), as Starlette takes it."""
    path: str = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        if path == root:
            return ""
        if path[len(root)] == "/":
            return path[len(root):]
    return path


class IdapApp(Starlette):
    """The servlet's Starlette application, with its hot path — POST to a servlet — taken
    straight to :data:`servlet_endpoint`, past Starlette's middleware and router (which
    would reach the same endpoint; they serve everything else: GET, other paths and
    methods, the lifespan)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            path = _route_path(scope)
            if path.startswith(SERVLET_PATH):
                name = path[len(SERVLET_PATH):]
                if name and "/" not in name:       # the route's {name}: [^/]+
                    scope["app"] = self
                    scope["path_params"] = {"name": name}
                    started = time.perf_counter()
                    await servlet_endpoint(scope, receive, send)
                    metrics = getattr(self.state, "metrics", None)
                    if metrics is not None:
                        metrics.observe_request(name, time.perf_counter() - started)
                    return
        await super().__call__(scope, receive, send)


class Extension(Protocol):
    """Something served beside the servlet by the same server (the dashboard): its routes,
    and what it starts once the servlet runs and stops before the servlet closes.  The
    servlet knows no more of it — the arrow goes from the extension to the servlet."""

    def routes(self) -> list[BaseRoute]: ...

    def start(self, servlet: Servlet) -> None: ...

    def stop(self) -> None: ...


async def metrics_endpoint(request: HttpRequest) -> Response:
    """GET /metrics: the Prometheus text format (sluice.monitor.prometheus), for a user
    with MONITOR (Basic auth, as the servlet's agents); the snapshot's SQL and a first
    password check (scrypt) run in a worker thread."""
    app = request.app
    header = request.headers.get("authorization")
    access: MonitorAccess = app.state.monitor_access
    status, _ = access.check(header, cached_only=True)
    if status != ACCESS_OK:
        status, _ = await anyio.to_thread.run_sync(access.check, header)
    if status != ACCESS_OK:
        text, headers = refusal(status)
        return PlainTextResponse(text, status_code=status, headers=dict(headers))
    try:
        body = await anyio.to_thread.run_sync(app.state.metrics.exposition)
    except Error as e:
        return PlainTextResponse(f"503 Service Unavailable: {' '.join(str(e).split())}\n", status_code=503)
    return Response(body, media_type=METRICS_TYPE)


def create_app(config: IdapConfig, extensions: Sequence[Extension] = ()) -> Starlette:
    """The servlet application.  Connecting (and authenticating the super-user) happens
    at start-up, in the application's lifespan."""

    stopping = ops.Stopper()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        servlet = await anyio.to_thread.run_sync(Servlet, config, stopping)
        app.state.servlet = servlet
        app.state.monitor_access = MonitorAccess(servlet.control)
        app.state.metrics = Metrics(lambda: _connect(config), idap=True, max_age=config.monitor_max_age)
        servlet.snapshots = app.state.metrics.source
        reaper = asyncio.create_task(_reaper(servlet))
        for extension in extensions:
            await anyio.to_thread.run_sync(extension.start, servlet)
        try:
            yield
        finally:
            for extension in extensions:
                await anyio.to_thread.run_sync(extension.stop)
            servlet.stopping.set()
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
            deadline = time.monotonic() + 5.0   # let running requests end their slice
            while servlet.sessions.any_busy() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await anyio.to_thread.run_sync(app.state.metrics.close)
            await anyio.to_thread.run_sync(servlet.close)

    routes: list[BaseRoute] = [Route(SERVLET_PATH + "{name}", servlet_endpoint, methods=["GET", "POST"]),
                               Route("/metrics", metrics_endpoint, methods=["GET"])]
    for extension in extensions:
        routes += extension.routes()
    app = IdapApp(routes=routes, lifespan=lifespan)
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


def serve(config: IdapConfig, host: str = "127.0.0.1", port: int = 8080, log_level: str = "info",
          extensions: Sequence[Extension] = (), ssl_certfile: str | None = None,
          ssl_keyfile: str | None = None) -> None:
    """Run the servlet (and ``extensions``) on uvicorn until SIGINT/SIGTERM (``sluice serve``);
    HTTPS when given a certificate (PEM, with its chain) and its private key (seed 004:
    propagation and IDAP over HTTPS)."""
    uv_config = uvicorn.Config(create_app(config, extensions), host=host, port=port, log_level=log_level,
                               timeout_graceful_shutdown=10, access_log=False,
                               http=http_protocol(), ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile)
    IdapServer(uv_config).run()
