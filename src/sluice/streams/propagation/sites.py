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
  Oracle Streams AQ Propagation").  An https link verifies the server's certificate
  against the system's CA store, or against ``SLUICE_SSL_CA_FILE`` (a PEM file of CA
  certificates, read when the propagation process opens the link) — Oracle's wallet of
  trusted certificates for the sending database; there is no way to skip verification.
"""

from __future__ import annotations

import os
import re
import ssl
from typing import Any, Callable

import httpx
from lxml import etree

from ...errors import DatabaseError, OperationalError, ora, remote_error
from .links import DbLink, basic_auth
from .receiver import receive
from .wire import MEDIA_TYPE, Batch, split, to_json

_ORA = re.compile(r"ORA-(\d{5})")
CA_FILE_ENV = "SLUICE_SSL_CA_FILE"
Connect = Callable[[str, "str | None", "str | None"], Any]


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
    """Destination queues of the source's own site: in the source transaction."""

    dedup = False     # the enqueue commits with the dequeue: nothing to de-duplicate

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def acknowledge(self, batch: Batch) -> None:
        """Nothing to tell: the batch was committed with its dequeue."""

    def deliver(self, batch: Batch) -> None:
        receive(self.ctx, batch, dedup=False)

    def close(self) -> None:
        """Nothing of its own to close: it is the propagating session."""


class StoreSite(Destination):
    """Another Sluice store, through a session as the link's user."""

    def __init__(self, link: DbLink, connect: Connect) -> None:
        super().__init__()
        self.link = link
        self._connect = connect
        self._conn: Any = None

    def _send(self, batch: Batch) -> None:
        if self._conn is None:
            self._conn = self._connect(self.link.endpoint, self.link.username, self.link.password)
        conn = self._conn
        try:
            receive(conn.context, batch)
            conn.commit()
        except BaseException:
            self.close()       # a failed session is not reused: the next try opens a new one
            raise

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.rollback()
                conn.close()
            except DatabaseError:
                pass     # a session that failed may fail to close: it is gone either way


class HttpSite(Destination):
    """A remote site's propagation servlet."""

    # what one request may carry: sluice serve takes 1 MB by default (--max-request-bytes)
    MAX_REQUEST = 900_000

    def __init__(self, link: DbLink, timeout: float = 60.0) -> None:
        super().__init__()
        self.link = link
        headers = {"Content-Type": MEDIA_TYPE}
        auth = basic_auth(link)
        if auth is not None:
            headers["Authorization"] = auth
        self._http = httpx.Client(headers=headers, timeout=timeout, verify=_trust())

    def _send(self, batch: Batch) -> None:
        """POST the batch — in parts when it is larger than a request may be; each part is
        committed there on its own, and one lost is sent again with the rest (resend)."""
        for part in split(batch, self.MAX_REQUEST):
            self._post(part)

    def _post(self, batch: Batch) -> None:
        try:
            r = self._http.post(self.link.endpoint, content=to_json(batch))
        except httpx.ConnectError as e:
            if isinstance(e.__context__, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(e):
                raise ora(29024, f"{self.link.endpoint}: {e}") from None
            raise ora(12541, f"{self.link.endpoint}: {e}") from None
        except httpx.HTTPError as e:
            raise ora(12541, f"{self.link.endpoint}: {e}") from None
        if r.status_code == 401:
            raise ora(1017)
        if r.status_code != 200:
            raise fault_error(r.content, r.status_code)

    def close(self) -> None:
        self._http.close()


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
