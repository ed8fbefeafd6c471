"""Where a schedule delivers: this site, another store, or a remote ``sluice serve``.

Each destination takes a :class:`~.wire.Batch` with :meth:`deliver`, which returns once
the destination has committed it (or, for this site, once it is in the propagating
session's transaction, committed together with the dequeue at the source) and raises
the destination's error otherwise — which the schedule then records and backs off from.

* :class:`ThisSite` — a destination queue in the source's own store: the enqueue joins
  the source transaction, so it is atomic with the dequeue and needs no de-duplication.
* :class:`StoreSite` — a database link whose USING string is a Sluice DSN: a session as
  the link's user on that store (ORA-01017 for a wrong password), the batch and its
  de-duplication rows committed there (:func:`.receiver.receive`).
* :class:`HttpSite` — a link to ``http(s)://…/aqserv/servlet/AQPropServlet``: the batch
  is POSTed with the link's credentials (Basic auth, TLS for https); the servlet commits
  it with its de-duplication rows before it answers (seed 004 "Using HTTP and HTTPS for
  Oracle Streams AQ Propagation").  Requests stay under the servlet's limit (``sluice serve
  --max-batch-bytes``, which every answer advertises and which the sender asks before a
  first batch over 1 MiB); a message larger than it is refused before it is sent (ORA-12899: the job
  marks it UNDELIVERABLE).  An https link verifies the server's certificate
  against the system's CA store, or against ``SLUICE_SSL_CA_FILE`` (a PEM file of CA
  certificates, read when the propagation process opens the link) — Oracle's wallet of
  trusted certificates for the sending database; there is no way to skip verification.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

import httpx
from lxml import etree

from ...errors import DatabaseError, OperationalError, ora, remote_error
from .links import DbLink, basic_auth
from .receiver import receive
from .wire import LIMIT_HEADER, MAX_BATCH_BYTES, MEDIA_TYPE, Batch, Propagated, alone_size, head_size, split, \
    to_wire, wire_size

_ORA = re.compile(r"ORA-(\d{5})")
_LIMIT = LIMIT_HEADER.lower().encode("latin-1")
CA_FILE_ENV = "SLUICE_SSL_CA_FILE"
Connect = Callable[[str, "str | None", "str | None"], Any]


@dataclass
class Posted:
    """A batch sent to a destination whose answer is still to be read (``post``): its
    requests, and the acknowledgements it carries."""

    batch: Batch
    parts: int
    acked: list[tuple[str, bytes]]
    sizes: list[int] = field(default_factory=list)      # HttpSite: the bytes of each request
    answered: bool = False                  # StoreSite: its outcome is known (``error``)
    error: DatabaseError | None = None


class Destination:
    """What every destination does around its own :meth:`_send`: mark a batch as a
    possible resend unless the previous one was acknowledged and committed at the source
    (``clean``, which :meth:`acknowledge` sets), pass on which messages the source has let
    go since (``acked``), and send a batch the destination refused once more,
    as a resend — a duplicate its de-duplication rows' primary key refused is then
    skipped; any other error comes back."""

    clean = False
    dedup = True      # the destination keeps de-duplication rows the source must let go of

    def __init__(self) -> None:
        self._acked: list[tuple[str, bytes]] = []
        self._restored: set[tuple[str, str, str]] = set()
        self._waiting: deque[Posted] = deque()      # posted, not answered yet (pipelined)

    def _posting(self, batch: Batch) -> Posted:
        """``batch`` about to be posted behind those in flight: marked and given the
        acknowledgements as :meth:`deliver` does."""
        batch.resend = not self.clean
        batch.acked, self._acked = self._acked, []
        self.clean = False
        posted = Posted(batch, 0, batch.acked)
        self._waiting.append(posted)
        return posted

    def _oldest(self, posted: Posted) -> None:
        if not self._waiting or self._waiting[0] is not posted:
            raise ora(600, "propagation pipeline: answers read out of order")

    def _forget_waiting(self) -> None:
        """The unanswered batches are given up: the acknowledgements they carried are told
        again (deleting a de-duplication row twice is harmless; leaking one is not), and
        the next batch is sent as a possible resend."""
        acked: list[tuple[str, bytes]] = []
        for posted in self._waiting:
            acked.extend(posted.acked)
        self._waiting.clear()
        if acked:
            self._acked = acked + self._acked
        self.clean = False

    def in_flight_acked(self) -> list[tuple[str, bytes]]:
        """The acknowledgements carried by batches posted and not yet answered, and those
        not sent yet: what the destination may not know the source let go."""
        out = [a for posted in self._waiting for a in posted.acked]
        return out + self._acked

    def acknowledge(self, batch: Batch) -> None:
        """The source has let ``batch`` go: the next delivery tells the destination."""
        self._acked.extend((m.dest_queue, m.source_msgid) for m in batch.messages if not m.buffered)
        self.clean = True

    def restore(self, key: tuple[str, str, str], untold: list[tuple[str, bytes]]) -> None:
        """Once per schedule ``key``: what an earlier sender of it let go and did not live
        to tell (its last batch), told with the next delivery."""
        if key not in self._restored:
            self._restored.add(key)
            self._acked.extend(untold)

    def restored(self, key: tuple[str, str, str]) -> bool:
        return key in self._restored

    def deliver(self, batch: Batch) -> None:
        batch.resend = not self.clean
        batch.acked = self._acked
        self.clean = False
        try:
            self._send(batch)
        except DatabaseError:
            if batch.resend:
                raise
            batch.resend = True
            self._send(batch)
        self._acked = []

    def _send(self, batch: Batch) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release what the destination holds (sessions, HTTP connections)."""


class ThisSite:
    """Destination queues of the source's own site: in the source transaction, with the
    rights of ``propagator``, the source queue's owner (seed 001: "The user who owns the
    source queue is the user who propagates messages") — not those of the session the
    propagation runs on."""

    dedup = False     # the enqueue commits with the dequeue: nothing to de-duplicate

    def __init__(self, ctx: Any, propagator: str) -> None:
        self.ctx = ctx
        self.propagator = propagator

    def acknowledge(self, batch: Batch) -> None:
        """Nothing to tell: the batch was committed with its dequeue."""

    def deliver(self, batch: Batch) -> None:
        receive(self.ctx, batch, dedup=False, propagator=self.propagator)

    def close(self) -> None:
        """Nothing of its own to close: it is the propagating session."""


class StoreSite(Destination):
    """Another Sluice store, through a session as the link's user.

    An SQLite store takes one batch at a time: committing batches in a thread of the
    link's own while the source dequeues the next measured at half the rate (SQLite →
    SQLite, 2026-11-26: each of the destination's statements gives up the GIL and waits to
    get it back from the busy source thread).  A PostgreSQL store is ``pipelined`` as an
    :class:`HttpSite` is, without a thread: :meth:`post` runs the batch's statements and
    sends its last message — the rows (binary COPY), the COMMIT — without waiting
    (``send_commit``), so the destination's server inserts and commits it while the
    source dequeues the next batch; :meth:`answer` reads the outcome.  The session takes
    one commit at a time: posting a batch first reads the outcome of the one before, and
    a batch posted after a failed one is not sent."""

    def __init__(self, link: DbLink, connect: Connect) -> None:
        super().__init__()
        self.link = link
        self._connect = connect
        self._conn: Any = None

    @property
    def pipelined(self) -> bool:
        return self.link.endpoint.startswith(("postgresql:", "postgres:"))

    def _session(self) -> Any:
        if self._conn is None:
            self._conn = self._connect(self.link.endpoint, self.link.username, self.link.password)
        return self._conn

    def _send(self, batch: Batch) -> None:
        conn = self._session()
        try:
            receive(conn.context, batch)
            conn.commit()
        except BaseException:
            self.close()       # a failed session is not reused: the next try opens a new one
            raise

    # -- pipelined ------------------------------------------------------------------
    def post(self, batch: Batch) -> Posted:
        """Enqueue ``batch`` at the destination and send its commit without waiting for
        it.  Never raises a destination's error: :meth:`answer` does (as it would over
        HTTP), so a refused batch can be sent again as a resend."""
        previous = self._waiting[-1] if self._waiting else None
        if previous is not None and not previous.answered:
            self._read(previous)
        posted = self._posting(batch)
        if previous is not None and previous.error is not None:
            posted.answered = True      # not sent: what follows a refused batch waits for it
            posted.error = ora(12541, f"{self.link.name}: not sent, the batch before it failed")
            return posted
        try:
            conn = self._session()
            session = conn.context.session
            session.defer_bulk_inserts()
            receive(conn.context, batch)
            session.send_commit()
        except DatabaseError as e:
            self.close()
            posted.answered, posted.error = True, e
        return posted

    def _read(self, posted: Posted) -> None:
        """The outcome of ``posted``'s commit (kept in it)."""
        posted.answered = True
        conn = self._conn
        if conn is None:
            posted.error = ora(3113)
            return
        try:
            conn.context.session.await_commit()
            conn.context.group_first.clear()
        except DatabaseError as e:
            self.close()
            posted.error = e

    def answer(self, posted: Posted) -> None:
        """Returns once the destination committed ``posted``, the oldest batch still
        unanswered.  :raises: the destination's error (then :meth:`failed` has been called)."""
        self._oldest(posted)
        if not posted.answered:
            self._read(posted)
        if posted.error is not None:
            self.failed()
            raise posted.error
        self._waiting.popleft()

    def failed(self) -> None:
        """A pipelined batch failed: a commit sent and not read goes with the session (its
        outcome unknown), the acknowledgements the unanswered batches carried are told
        again, and the next batch is sent as a possible resend."""
        if any(not p.answered for p in self._waiting):
            self.close()
        self._forget_waiting()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.rollback()
                conn.close()
            except DatabaseError:
                pass     # a session that failed may fail to close: it is gone either way


class HttpSite(Destination):
    """A remote site's propagation servlet.

    Besides :meth:`deliver` (one batch, answered before the next is sent), a batch may be
    written with :meth:`post` while earlier ones are still being committed there, their
    answers read in order with :meth:`answer` (HTTP/1.1 pipelining on one connection:
    the servlet, uvicorn's protocol, takes the requests of a connection one after
    the other, so the destination commits the batches in the order they were sent, and
    it closes the connection after a SOAP Fault, so a batch sent after a refused one is
    never committed)."""

    pipelined = True
    # batches in flight (job._pipelined): the servlet takes a connection's requests one after
    # the other, so a third keeps it busy while the source commits one and dequeues the next
    depth = 3
    # a cap of the sender's own on one request (None: the servlet's limit, ``limit``)
    MAX_REQUEST: int | None = None
    # what a sender takes any servlet to accept before it has said its limit (sluice serve's
    # request limit before --max-batch-bytes): a larger batch asks first (_probe)
    ASSUMED = 1 << 20
    # uvicorn closes a connection idle for 5 s: one idle longer than this is opened anew
    # before a pipeline starts on it
    IDLE_REOPEN = 2.0

    def __init__(self, link: DbLink, timeout: float = 60.0) -> None:
        super().__init__()
        self.link = link
        self.timeout = timeout
        headers = {"Content-Type": MEDIA_TYPE}
        auth = basic_auth(link)
        if auth is not None:
            headers["Authorization"] = auth
        self._trust = _trust()
        self._http = httpx.Client(headers=headers, timeout=timeout, verify=self._trust)
        url = urlsplit(link.endpoint)
        self._target = (url.hostname or "localhost", url.port or (443 if url.scheme == "https" else 80),
                        url.scheme == "https")
        head = [f"POST {url.path or '/'}{'?' + url.query if url.query else ''} HTTP/1.1",
                f"Host: {url.netloc.rpartition('@')[2]}", f"Content-Type: {MEDIA_TYPE}"]
        if auth is not None:
            head.append(f"Authorization: {auth}")
        self._head = ("\r\n".join(head) + "\r\nContent-Length: ").encode("latin-1")
        self._pipe: _Pipe | None = None
        # what one request may carry: the servlet's --max-batch-bytes, which every answer of
        # AQPropServlet carries (a 413 too); asked before a first batch above ASSUMED (:meth:`_probe`)
        self.limit = MAX_BATCH_BYTES
        self._learned = False

    # -- sizes ----------------------------------------------------------------------
    def oversized(self, batch: Batch) -> list[tuple[Propagated, DatabaseError]]:
        """The messages of ``batch`` that no request to the servlet can carry, each with
        its ORA-12899 (never sent: the job marks them UNDELIVERABLE).  The servlet's limit
        is asked first if this sender does not know it yet (:meth:`_probe`)."""
        self._probe(batch)
        room = self.limit - head_size(batch, acked=False)
        out = []
        for m in batch.messages:
            if wire_size(m) > room:
                size = alone_size(batch, m)
                if size > self.limit:
                    out.append((m, self._too_large(size)))
        return out

    def _too_large(self, size: int) -> DatabaseError:
        return ora(12899, f"AQPropServlet request of {self.link.endpoint} (sluice serve --max-batch-bytes)",
                   size, self.limit)

    def _part_bytes(self) -> int:
        return self.limit if self.MAX_REQUEST is None else min(self.limit, self.MAX_REQUEST)

    def _learn(self, advertised: str | bytes | None) -> None:
        """The limit an answer advertises (``LIMIT_HEADER``)."""
        try:
            value = int(advertised) if advertised is not None else 0
        except ValueError:
            value = 0
        if value > 0:
            self.limit = value
        self._learned = True

    def _probe(self, batch: Batch) -> None:
        """Before this sender's first batch larger than ``ASSUMED`` (until an answer said the
        limit): an empty batch (nothing committed there), whose answer says the servlet's
        limit — so such a batch is not refused 413 with others in flight behind it, and a
        message larger than the limit is known before it is sent.  Smaller batches are sent
        as they are: their answer says it (a servlet set below them answers 413, which says
        it too).  A servlet that does not say leaves the documented default.
        :raises: ORA-12541 / ORA-29024 / ORA-01017 as a batch would."""
        if not self._learned and head_size(batch) + sum(wire_size(m) for m in batch.messages) > self.ASSUMED:
            self._post(to_wire(Batch(batch.source_site, batch.source_queue, [], resend=True,
                                     source_sharded=batch.source_sharded)))

    def _refused_size(self, body: bytes, sent: int, advertised: str | bytes | None) -> DatabaseError:
        """A 413 for a request of ``sent`` bytes: the limit it advertises is learned (none,
        or not below what was sent: half of that), and its error is ``resized`` — the
        batch may be sent again in smaller parts."""
        self._learn(advertised)
        if self.limit >= sent:
            self.limit = sent // 2
        error = fault_error(body, 413)
        error.resized = True        # type: ignore[attr-defined]
        return error

    # -- pipelined ------------------------------------------------------------------
    def post(self, batch: Batch) -> Posted:
        """Write ``batch`` (in parts, as :meth:`_send` would) without waiting for the
        servlet's answer; :meth:`answer` reads it, in the order the batches were posted.
        Its ``resend`` and ``acked`` are set as :meth:`deliver` sets them.
        :raises: ORA-12541 / ORA-29024 when the servlet cannot be reached (nothing of the
        batch was sent), or when the connection takes no more requests while batches are in
        flight (the batch goes back; the connection is kept for their answers)."""
        if self._waiting and (self._pipe is None or not self._pipe.writable):
            # the connection takes no more requests (the servlet closed it after an answer,
            # or a write failed): those in flight are answered first, on it, and only then
            # does a new connection start -- posted on another one now, this batch's answer
            # would be read as theirs
            raise ora(12541, f"{self.link.endpoint}: the connection closed with batches in flight")
        if not self._waiting and self._pipe is not None and (
                not self._pipe.writable or self._pipe.idle() > self.IDLE_REOPEN):
            self._drop_pipe()
        self._probe(batch)
        if self._pipe is None:
            self._pipe = _Pipe(self._target, self.link.endpoint, self._trust, self.timeout)
        posted = self._posting(batch)
        try:
            for part in split(batch, self._part_bytes()):
                body = to_wire(part)
                self._pipe.write(self._head + str(len(body)).encode() + b"\r\n\r\n" + body)
                posted.parts += 1
                posted.sizes.append(len(body))
        except DatabaseError:
            if len(self._waiting) == 1:
                self.failed()
                raise
            # behind batches in flight: their answers may still be read (what the servlet
            # sent before it closed the connection stays readable), so the connection is kept
            # for them; this batch was not sent (wholly) and goes back, its acknowledgements
            # are told with a later one
            self._waiting.pop()
            self._acked = posted.acked + self._acked
            self._pipe.writable = False
            raise
        return posted

    def answer(self, posted: Posted) -> None:
        """Read the servlet's answers to ``posted``, the oldest batch still unanswered:
        it returns once the destination committed the batch.  :raises: the destination's
        error (then :meth:`failed` has been called: the batches posted after it may or
        may not have been committed there)."""
        self._oldest(posted)
        try:
            for _ in range(posted.parts):
                if self._pipe is None:      # the servlet closed the connection after an earlier answer
                    raise ora(12541, f"{self.link.endpoint}: the connection closed before the answer")
                status, body, closing = self._pipe.read()
                self._learn(self._pipe.advertised)
                if status == 401:
                    raise ora(1017)
                if status == 413:
                    raise self._refused_size(body, posted.sizes[_], self._pipe.advertised)
                if status != 200:
                    raise fault_error(body, status)
                if closing:
                    self._drop_pipe(keep_waiting=True)
                    if _ < posted.parts - 1:
                        raise ora(12541, f"{self.link.endpoint}: the connection closed within a batch")
        except DatabaseError:
            self.failed()
            raise
        self._waiting.popleft()

    def failed(self) -> None:
        """A pipelined batch failed: the connection goes (what was posted after it is
        never answered), the acknowledgements the unanswered batches carried are told
        again, and the next batch is sent as a possible resend."""
        self._drop_pipe()

    def _drop_pipe(self, keep_waiting: bool = False) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None:
            pipe.close()
        if not keep_waiting:
            self._forget_waiting()

    def _send(self, batch: Batch) -> None:
        """POST the batch — in parts when it is larger than a request may be; each part is
        committed there on its own, and one lost is sent again with the rest (resend).  A
        part the servlet finds too large (413: its limit is below what this sender knew)
        is sent again in smaller parts, with the rest; a message alone too large is
        refused with ORA-12899 (an application error: the job marks it UNDELIVERABLE).
        :raises: ORA-12899 before anything is sent when one is known too large."""
        self._probe(batch)
        refused = self.oversized(batch)
        if refused:
            raise refused[0][1]
        parts = deque(split(batch, self._part_bytes()))
        while parts:
            part = parts.popleft()
            body = to_wire(part)
            try:
                self._post(body)
            except DatabaseError as e:
                if not getattr(e, "resized", False):
                    raise
                if len(part.messages) + len(part.acked) <= 1:
                    if part.messages:
                        raise self._too_large(len(body)) from None
                    raise
                rest = [part, *parts]
                parts = deque(p for r in rest for p in split(r, self._part_bytes()))

    def _post(self, body: bytes) -> None:
        try:
            r = self._http.post(self.link.endpoint, content=body)
        except httpx.ConnectError as e:
            if isinstance(e.__context__, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(e):
                raise ora(29024, f"{self.link.endpoint}: {e}") from None
            raise ora(12541, f"{self.link.endpoint}: {e}") from None
        except httpx.HTTPError as e:
            raise ora(12541, f"{self.link.endpoint}: {e}") from None
        self._learn(r.headers.get(LIMIT_HEADER))
        if r.status_code == 401:
            raise ora(1017)
        if r.status_code == 413:
            raise self._refused_size(r.content, len(body), r.headers.get(LIMIT_HEADER))
        if r.status_code != 200:
            raise fault_error(r.content, r.status_code)

    def close(self) -> None:
        self._drop_pipe()
        self._http.close()


class _Pipe:
    """One HTTP/1.1 connection to the servlet on which requests are written before the
    answers to earlier ones are read (read back in order, Content-Length or chunked)."""

    def __init__(self, target: tuple[str, int, bool], endpoint: str, trust: ssl.SSLContext | bool,
                 timeout: float) -> None:
        host, port, tls = target
        self.endpoint = endpoint
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            raise ora(12541, f"{endpoint}: {e}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls:
            context = trust if isinstance(trust, ssl.SSLContext) else ssl.create_default_context()
            try:
                sock = context.wrap_socket(sock, server_hostname=host)
            except ssl.SSLCertVerificationError as e:
                sock.close()
                raise ora(29024, f"{endpoint}: {e}") from None
            except (ssl.SSLError, OSError) as e:
                sock.close()
                raise ora(12541, f"{endpoint}: {e}") from None
        self.sock = sock
        self.rfile = sock.makefile("rb")
        self.used = time.monotonic()
        self.writable = True        # False once a write failed: only answers are read from it
        self.advertised: bytes | None = None     # the limit the last answer read gave (LIMIT_HEADER)

    def idle(self) -> float:
        return time.monotonic() - self.used

    def write(self, data: bytes) -> None:
        try:
            self.sock.sendall(data)
        except OSError as e:
            raise ora(12541, f"{self.endpoint}: {e}") from None
        self.used = time.monotonic()

    def read(self) -> tuple[int, bytes, bool]:
        """The next answer: ``(status, body, whether the server closes the connection)``."""
        try:
            status_line = self.rfile.readline(65537)
            if not status_line:
                raise ora(12541, f"{self.endpoint}: the connection closed before the answer")
            parts = status_line.split(None, 2)
            if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
                raise ora(3113, f"{self.endpoint}: not an HTTP answer: {status_line[:80]!r}")
            status = int(parts[1])
            length, chunked, closing = None, False, parts[0] == b"HTTP/1.0"
            self.advertised = None
            while True:
                line = self.rfile.readline(65537)
                if line in (b"\r\n", b"\n", b""):
                    break
                name, _, value = line.partition(b":")
                name, value = name.strip().lower(), value.strip()
                if name == b"content-length":
                    length = int(value)
                elif name == b"transfer-encoding" and value.lower() == b"chunked":
                    chunked = True
                elif name == b"connection":
                    closing = b"close" in value.lower()
                elif name == _LIMIT:
                    self.advertised = value
            if chunked:
                body = bytearray()
                while True:
                    size = int(self.rfile.readline(65537).split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                            pass
                        break
                    body += self._exactly(size)
                    self.rfile.readline(65537)
                data = bytes(body)
            elif length is not None:
                data = self._exactly(length)
            else:        # no length: the body runs to the end of the connection
                data, closing = self.rfile.read(), True
        except (OSError, ValueError) as e:
            raise ora(12541, f"{self.endpoint}: {e}") from None
        self.used = time.monotonic()
        return status, data, closing

    def _exactly(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if len(data) != n:
            raise ora(12541, f"{self.endpoint}: the connection closed within an answer")
        return data

    def close(self) -> None:
        try:
            self.rfile.close()
            self.sock.close()
        except OSError:
            pass      # closing a broken connection: it is gone either way


def _trust() -> ssl.SSLContext | bool:
    """What an https link trusts: the CA file ``SLUICE_SSL_CA_FILE`` names, else the
    system's CA store.  :raises: ORA-29024 when that file cannot be loaded."""
    ca_file = os.environ.get(CA_FILE_ENV)
    if not ca_file:
        return True
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (ssl.SSLError, OSError) as e:
        raise ora(29024, f"{CA_FILE_ENV}={ca_file}: {e}") from None


def fault_error(body: bytes, status: int) -> DatabaseError:
    """The error a servlet's SOAP Fault (or a bare HTTP error) stands for: its ORA code
    and message."""
    try:
        text = " ".join(t.strip() for t in etree.fromstring(body).itertext() if t.strip())
    except etree.XMLSyntaxError:
        text = body.decode(errors="replace").strip()
    m = _ORA.search(text)
    if m is None:
        return OperationalError(f"ORA-03113: HTTP {status} from the propagation servlet: {text[:500]}", 3113)
    return remote_error(int(m.group(1)), text[m.start():])
