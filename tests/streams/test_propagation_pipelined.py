"""Issue 14 §2: HTTP propagation with two batches in flight (sites.HttpSite.post/answer,
job._pipelined), watched by a proxy between the runner and ``sluice serve``.

The proxy forwards the bytes both ways as they come and parses the HTTP messages it
forwards.  Holding the first answer back until the next request has arrived shows the
sender does not wait for one batch's answer before sending the next; dropping answers
the servlet gave (after it committed those batches) shows that a batch failing in the
pipeline, first or later, loses and duplicates nothing."""

from __future__ import annotations

import socket
import threading
import time

from sluice.streams.propagation.links import DbLink
from sluice.streams.propagation.runner import PropagationRunner
from sluice.streams.propagation.sites import HttpSite
from sluice.streams.propagation.wire import Batch, Propagated

from .propkit import drain, enqueue, multi_queue, raises_ora, rows
from .test_propagation_http import SERVLET, served_site, sites  # noqa: F401  (the fixture)

BOUND = 60.0      # how long the proxy waits for what the sender should do (a hang bound, not a timing)


class _Reader:
    """HTTP/1.1 messages (each with a Content-Length) read off a socket, as raw bytes."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        self.buf += data
        return bool(data)

    def head(self) -> bytes | None:
        """The next message's header block (None: the connection ended)."""
        while b"\r\n\r\n" not in self.buf:
            if not self._fill():
                return None
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        return head + b"\r\n\r\n"

    def body(self, head: bytes) -> bytes | None:
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(self.buf) < length:
            if not self._fill():
                return None
        body, self.buf = self.buf[:length], self.buf[length:]
        return body


class PipelineProxy:
    """Between the runner and the servlet.  On the first connection: the first answer is
    held until the second request's head has arrived (``second_before_first_answer``),
    and after ``cut`` answers the rest are read from the servlet (it committed those
    batches) but never forwarded: the connection to the runner is closed instead.
    Later connections pass through."""

    def __init__(self, upstream_port: int, cut: int | None = None) -> None:
        self.upstream = upstream_port
        self.cut = cut
        self.second_before_first_answer: bool | None = None
        self.requests: list[int] = []          # per connection: the requests forwarded
        self.dropped = 0                       # answers the servlet gave that the runner never saw
        self._seen: list[threading.Event] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{SERVLET}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            index = len(self.requests)
            self.requests.append(0)
            server = socket.create_connection(("127.0.0.1", self.upstream))
            seen = [threading.Event() for _ in range(3)]
            threading.Thread(target=self._requests, args=(index, client, server, seen), daemon=True).start()
            threading.Thread(target=self._answers, args=(index, client, server, seen), daemon=True).start()

    def _requests(self, index: int, client: socket.socket, server: socket.socket, seen) -> None:
        reader = _Reader(client)
        try:
            while True:
                head = reader.head()
                if head is None:
                    break
                self.requests[index] += 1
                if self.requests[index] < len(seen):
                    seen[self.requests[index]].set()
                body = reader.body(head)
                if body is None:
                    break
                server.sendall(head + body)
        except OSError:
            pass
        finally:
            _close(server)

    def _answers(self, index: int, client: socket.socket, server: socket.socket, seen) -> None:
        reader = _Reader(server)
        answered = 0
        try:
            while True:
                head = reader.head()
                if head is None:
                    break
                body = reader.body(head)
                if body is None:
                    break
                if index == 0 and answered == 0:
                    self.second_before_first_answer = seen[2].wait(BOUND)
                if index == 0 and self.cut is not None and answered >= self.cut:
                    self.dropped += 1     # committed there; the runner never hears of it
                    _close(client)
                    continue
                client.sendall(head + body)
                answered += 1
        except OSError:
            pass
        finally:
            _close(client)

    def close(self) -> None:
        _close(self.listener)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def _setup(sites, cut=None):
    b, server = served_site(sites, "dbs2")
    proxy = PipelineProxy(int(server.url.rpartition(":")[2]), cut=cut)
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 CONNECT TO john IDENTIFIED BY welcome USING '{proxy.url()}'")
    a.propagation_adm.create_propagation("p", "src", "strm.dst", "dbs2")
    sent = [b"p%03d" % i for i in range(40)]
    enqueue(a, "SRC", sent)
    return a, b, proxy, sent


def _run_all(a, proxy) -> None:
    """One run, in batches of 10, moves all 40 messages."""
    runner = PropagationRunner(a, batch_size=10)
    try:
        assert runner.run_once(force=True) == 40
    finally:
        runner.close()
        proxy.close()


def _wait_for(predicate) -> None:
    deadline = time.monotonic() + BOUND
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_the_next_batch_is_sent_before_the_first_is_answered(sites):
    a, b, proxy, sent = _setup(sites)
    _run_all(a, proxy)
    assert proxy.second_before_first_answer is True
    assert proxy.requests[0] == 4           # the four batches, on one connection
    assert sorted(m.payload for m in drain(b, "STRM.DST", "APP")) == sent
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(40, 0)]
    assert rows(b, "SELECT TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [(40,)]


def test_a_later_batch_whose_answer_is_lost_is_sent_again_and_skipped(sites):
    """Batches 1 and 2 answered; the servlet committed 3 (and perhaps 4) but the runner
    hears nothing: 3 is sent again as a resend (its messages skipped there), 4 goes back
    to the source and comes again in the same run — each message once at the destination."""
    a, b, proxy, sent = _setup(sites, cut=2)
    _run_all(a, proxy)
    assert proxy.dropped >= 1 and len(proxy.requests) >= 2    # the resend came on a new connection
    assert sorted(m.payload for m in drain(b, "STRM.DST", "APP")) == sent
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert rows(a, "SELECT FAILURES FROM DBA_QUEUE_SCHEDULES") == [(0,)]
    assert rows(b, "SELECT TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [(40,)]


def test_a_first_batch_whose_answer_is_lost_fails_the_run_and_the_retry_duplicates_nothing(sites):
    """No answer reaches the runner, though the servlet committed the first batch (and
    perhaps the second): the run fails with nothing let go at the source; after the
    back-off the next run sends everything again and the destination skips what it had."""
    a, b, proxy, sent = _setup(sites, cut=0)
    now = [time.time()]
    runner = PropagationRunner(a, batch_size=10, clock=lambda: now[0])
    try:
        assert runner.run_once(force=True) == 0
        _wait_for(lambda: proxy.dropped >= 1)
        [(failures, error)] = rows(a, "SELECT FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
        assert failures == 1 and error.startswith("ORA-12541")
        assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(40,)]      # nothing let go
        assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT")[0][0] >= 10  # but committed there
        now[0] += 31                                                     # the back-off ends
        assert runner.run_once(force=True) == 40
    finally:
        runner.close()
        proxy.close()
    assert sorted(m.payload for m in drain(b, "STRM.DST", "APP")) == sent
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert rows(a, "SELECT FAILURES FROM DBA_QUEUE_SCHEDULES") == [(0,)]


def test_a_batch_posted_behind_a_refused_one_is_not_committed(sites):
    """The servlet closes the connection after a SOAP Fault: the batch written behind the
    refused one is never taken, so a destination never commits a later batch before an
    earlier one."""
    b, server = served_site(sites, "dbs2")
    link = DbLink("SLUICE", "DBS2", "john", "welcome", server.url + SERVLET, 0.0)
    site = HttpSite(link)
    try:
        refused = site.post(Batch("DBS9", "X.SRC", [Propagated("STRM.NOPE", b"\x01" * 16, b"\x01" * 16, "RAW", b"a")]))
        behind = site.post(Batch("DBS9", "X.SRC", [Propagated("STRM.DST", b"\x02" * 16, b"\x02" * 16, "RAW", b"b")]))
        raises_ora(24010, site.answer, refused)
        assert site.in_flight_acked() == [] and not site.clean
        assert behind.parts == 1
        assert rows(b, "SELECT COUNT(*) FROM STRM.AQ$DST_QT") == [(0,)]
        # the link goes on, on a new connection, with the next batch marked a resend; by
        # its answer the old connection's batch would long have been committed, had it been taken
        again = site.post(Batch("DBS9", "X.SRC", [Propagated("STRM.DST", b"\x03" * 16, b"\x03" * 16, "RAW", b"c")]))
        assert again.batch.resend
        site.answer(again)
    finally:
        site.close()
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == [b"c"]
