"""Pipelined HTTP propagation (sites.HttpSite.post/answer, job._pipelined, three batches in
flight) when the connection fails at a chosen point — deterministically.

A proxy on loopback stands between the runner and ``sluice serve`` and does to the first
connection what a script says: keep answers the servlet gave (it committed those batches)
from the runner, cut an answer in the middle of its body, close the connection after an
answer (``Connection: close``, the requests behind it never reaching the servlet), answer
for the servlet with a gateway's 503, reset the connection, refuse new ones.  Where a
failure must come at the moment the runner writes a batch, the runner's first connection
is gated (:func:`_gate`): before its n-th request is written the test makes the proxy
reset the connection and waits until the runner's socket has seen the reset, so that
write fails — the path a loaded machine took now and then (STATUS, 2026-11-30 05:00).

Each test: every message arrives once, in the source's order; the schedule counts a
failure only when the run ends with one (a batch already marked a possible resend whose
outcome is unknown, or a destination that cannot be reached); a run that recovers goes on
in the same run, without waiting for the back-off."""

from __future__ import annotations

import fcntl
import socket
import struct
import termios
import threading
import time

import sluice
from sluice.streams.propagation import sites as site_module
from sluice.streams.propagation.runner import PropagationRunner
from sluice.streams.propagation.sites import HttpSite

from .propkit import drain, enqueue, multi_queue, rows
from .test_propagation_http import SERVLET, served_site, sites  # noqa: F401  (the fixture)
from .test_propagation_pipelined import _Reader

BOUND = 60.0      # how long anything waits for the other side (a hang bound, not a timing)
_PAGE = b"<html><body>503 Service Unavailable</body></html>"
GATEWAY_503 = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
               b"Connection: close\r\n\r\n%s" % (len(_PAGE), _PAGE))
TCP_CLOSE = 7     # tcpi_state of a socket that has received the peer's reset


def _close(sock: socket.socket, reset: bool = False) -> None:
    """Close ``sock``; ``reset``: with a TCP reset instead of a FIN (the peer's next write
    fails at once).  A thread blocked reading it wakes up."""
    try:
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.shutdown(socket.SHUT_RD)
        else:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def _message(reader: _Reader) -> tuple[bytes, bytes] | None:
    """The next HTTP message's header block and body (None: the connection ended)."""
    try:
        head = reader.head()
        body = None if head is None else reader.body(head)
    except OSError:
        return None
    return None if body is None else (head, body)


class FaultProxy:
    """Between the runner and the servlet.  On the first connection, ``script`` says what
    becomes of the servlet's n-th answer (from 1; not named: forwarded):

    * ``"hold"`` — read (the servlet committed the batch), forwarded only by :meth:`release`;
    * ``"cut"`` — its head and half its body forwarded, then the connection closed;
    * ``"close"`` — forwarded with ``Connection: close``, then the connection closed (as a
      servlet that stops: with ``swallow`` the requests behind it never reach it);
    * ``"reset"`` — forwarded, then the connection reset;
    * bytes — sent instead of it (a gateway's answer), then the connection closed.

    ``swallow``: the requests after that many are read and never reach the servlet.
    ``refuse_at``: when that answer's action is taken, new connections are refused until
    :meth:`listen` (the servlet's port closed).  Later connections pass through."""

    def __init__(self, upstream_port: int, script: dict | None = None, swallow: int | None = None,
                 refuse_at: int | None = None) -> None:
        self.upstream = upstream_port
        self.script = script or {}
        self.swallow = swallow
        self.refuse_at = refuse_at
        self.requests: list[int] = []       # per connection: the requests the runner wrote
        self.forwarded: list[int] = []      # per connection: those that reached the servlet
        self.answered = 0                   # first connection: answers read from the servlet
        self.held: list[bytes] = []          # answers held back, as read
        self.ended = threading.Event()      # the first connection was ended by the script
        self._client0: socket.socket | None = None
        self.port = 0
        self.listen()

    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{SERVLET}"

    def listen(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def refuse(self) -> None:
        """Nothing listens on the port any more: a connection is refused."""
        try:
            self.listener.shutdown(socket.SHUT_RDWR)    # (a close alone leaves accept() listening)
        except OSError:
            pass
        self.listener.close()

    def release(self) -> int:
        """Forward the answers held back; their size."""
        data = b"".join(self.held)
        self._send(self._client0, data)
        return len(data)

    def reset(self) -> None:
        """Reset the first connection now."""
        self.ended.set()
        if self._client0 is not None:
            _close(self._client0, reset=True)

    def close(self) -> None:
        self.refuse()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            index = len(self.requests)
            self.requests.append(0)
            self.forwarded.append(0)
            server = socket.create_connection(("127.0.0.1", self.upstream))
            if index == 0:
                self._client0 = client
            threading.Thread(target=self._up, args=(index, client, server), daemon=True).start()
            threading.Thread(target=self._down, args=(index, client, server), daemon=True).start()

    def _up(self, index: int, client: socket.socket, server: socket.socket) -> None:
        reader = _Reader(client)
        while (message := _message(reader)) is not None:
            self.requests[index] += 1
            if index == 0 and self.swallow is not None and self.requests[index] > self.swallow:
                continue
            try:
                server.sendall(message[0] + message[1])
            except OSError:
                break
            self.forwarded[index] += 1
        _close(server)

    def _down(self, index: int, client: socket.socket, server: socket.socket) -> None:
        reader = _Reader(server)
        while True:
            if index == 0 and self.swallow is not None and self.answered >= self.swallow:
                # the servlet never had the next request: only a gateway's answer comes for it
                deadline = time.monotonic() + BOUND
                while self.requests[0] <= self.answered and not self.ended.is_set():
                    if time.monotonic() > deadline:
                        return
                    time.sleep(0.01)
                if self.ended.is_set():
                    break
                message = None
            elif (message := _message(reader)) is None:
                break
            if index != 0:
                if not self._send(client, message[0] + message[1]):
                    break
                continue
            self.answered += 1
            action = self.script.get(self.answered, "forward")
            assert message is not None or isinstance(action, bytes), "nothing to forward"
            if self.answered == self.refuse_at:
                self.refuse()
            if action == "hold":
                self.held.append(message[0] + message[1])
                continue
            head, body = message if message is not None else (b"", b"")
            if action == "forward":
                if not self._send(client, head + body):
                    break
                continue
            if action == "cut":
                self._send(client, head + body[: len(body) // 2])
            elif action == "close":
                self._send(client, head[:-2] + b"Connection: close\r\n\r\n" + body)
            elif action == "reset":
                self._send(client, head + body)
                self.reset()
                break
            else:
                self._send(client, action)
            self.ended.set()
            _close(client)
            break
        if index != 0:
            _close(client)
        _close(server)

    @staticmethod
    def _send(sock: socket.socket, data: bytes) -> bool:
        try:
            sock.sendall(data)
            return True
        except OSError:
            return False


def _wait_for(predicate) -> None:
    deadline = time.monotonic() + BOUND
    while not predicate():
        assert time.monotonic() < deadline, "the proxy never got there"
        time.sleep(0.01)


def _unread(sock: socket.socket) -> int:
    """Bytes received on ``sock`` and not read yet."""
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]


def _reset_seen(sock: socket.socket) -> bool:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0] == TCP_CLOSE


def _gate(monkeypatch, n: int, before) -> list:
    """Before the ``n``-th request is written on the runner's first pipelined connection:
    ``before()``, then wait until that connection has received a reset (the write fails).
    The list returned holds the socket once the gate was passed."""
    write = site_module._Pipe.write
    first: list = []
    count = [0]
    passed: list = []

    def gated(self, data: bytes) -> None:
        if not first:
            first.append(self)
        if self is first[0]:
            count[0] += 1
            if count[0] == n:
                before()
                _wait_for(lambda: _reset_seen(self.sock))
                passed.append(self.sock)
        return write(self, data)
    monkeypatch.setattr(site_module._Pipe, "write", gated)
    return passed


def _setup(sites, messages=60, **proxy):
    b, server = served_site(sites, "dbs2")
    proxy = FaultProxy(int(server.url.rpartition(":")[2]), **proxy)
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 CONNECT TO john IDENTIFIED BY welcome USING '{proxy.url()}'")
    a.propagation_adm.create_propagation("p", "src", "strm.dst", "dbs2")
    sent = [b"p%03d" % i for i in range(messages)]
    enqueue(a, "SRC", sent)
    return a, b, proxy, sent


def _runner(a):
    """A runner in batches of 10 on a clock that stands still: a back-off never ends by itself."""
    now = [time.time()]
    return PropagationRunner(a, batch_size=10, clock=lambda: now[0]), now


def _moved_in_one_run(a, proxy, messages=60) -> None:
    runner, _ = _runner(a)
    try:
        assert runner.run_once(force=True) == messages
    finally:
        runner.close()
        proxy.close()


def _each_once_in_order(a, b, sent) -> None:
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == sent
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert rows(b, "SELECT TOTAL_MSGS FROM V$PROPAGATION_RECEIVER") == [(len(sent),)]


def test_a_post_failing_behind_batches_in_flight_gives_its_batch_back_and_the_run_goes_on(sites, monkeypatch):
    """Six batches, three in flight.  The servlet committed the fourth and fifth, but their
    answers never come: the connection is reset just before the sixth is written, so that
    write fails behind them.  The sixth goes back to the source; the fourth (no answer: sent
    again as a resend, skipped there) and the fifth (given back, refused there by its
    de-duplication rows and sent again as a resend) go on in the same run; no failure is
    counted (before 8a07ec5 the failed write was the run's failure: 30 of 60 moved)."""
    a, b, proxy, sent = _setup(sites, script={4: "hold", 5: "hold"})

    def reset_once_both_are_committed():
        _wait_for(lambda: len(proxy.held) == 2)
        proxy.reset()
    passed = _gate(monkeypatch, 6, reset_once_both_are_committed)
    _moved_in_one_run(a, proxy)
    assert passed and proxy.requests[0] == 5        # the sixth was never written on it
    _each_once_in_order(a, b, sent)
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(60, 0)]


def test_answers_received_before_a_failed_post_settle_their_batches(sites, monkeypatch):
    """As above, but the fourth and fifth answers reached the runner before the reset (they
    wait, unread, on its connection): the write of the sixth fails, and those two answers are
    still read — the fourth and fifth settle as answered, nothing of them is sent again; the
    sixth goes on a new connection, alone.  (8a07ec5 took the failed write for the fourth's
    answer: the fourth was sent again and the fifth given back and sent again.)"""
    a, b, proxy, sent = _setup(sites, script={4: "hold", 5: "hold"})
    sockets = []

    def answered_then_reset():
        _wait_for(lambda: len(proxy.held) == 2)
        size = proxy.release()
        _wait_for(lambda: _unread(sockets[0]) == size)     # both wait on the runner's side
        proxy.reset()
    write = site_module._Pipe.write

    def seen(self, data):
        sockets.append(self.sock)
        return write(self, data)
    monkeypatch.setattr(site_module._Pipe, "write", seen)
    passed = _gate(monkeypatch, 6, answered_then_reset)
    _moved_in_one_run(a, proxy)
    assert passed and proxy.requests[0] == 5
    assert sum(proxy.forwarded[1:]) == 1              # the sixth, and nothing sent again
    _each_once_in_order(a, b, sent)
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(60, 0)]


def test_an_answer_closing_the_connection_with_batches_in_flight_loses_none_of_them(sites):
    """The servlet answers the third batch with ``Connection: close`` and takes nothing
    after it (a servlet shutting down): the fourth and fifth, in flight on that connection,
    were never committed.  The sixth is not written on a new connection while their answers
    are owed (before, it was, and its answer was read as the fourth's: the fourth's
    messages were let go at the source and lost); their answers fail, the fourth is sent
    again, the rest follows — in the same run, each message once and in order."""
    a, b, proxy, sent = _setup(sites, script={3: "close"}, swallow=3)
    _moved_in_one_run(a, proxy)
    assert proxy.forwarded[0] == 3
    _each_once_in_order(a, b, sent)
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(60, 0)]


def _with_a_missing_queue(sites, **proxy):
    """40 messages in batches of 10 for one link; the second batch's for a queue the
    destination does not have (seed 003 "Propagation failures": marked UNDELIVERABLE)."""
    b, server = served_site(sites, "dbs2")
    proxy = FaultProxy(int(server.url.rpartition(":")[2]), **proxy)
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 CONNECT TO john IDENTIFIED BY welcome USING '{proxy.url()}'")
    a.aqadm.schedule_propagation(queue_name="src", destination="dbs2", latency=0)
    q = a.queue("SRC")
    good, bad = [], []
    for i in range(40):
        missing = 10 <= i < 20
        payload = b"%s%02d" % (b"bad" if missing else b"good", i)
        (bad if missing else good).append(payload)
        address = "strm.nosuch@dbs2" if missing else "strm.dst@dbs2"
        q.enqone(a.msgproperties(payload=payload, recipients=[sluice.Agent("APP", address)]))
    a.commit()
    return a, b, proxy, good, bad


def _refused_ones_marked(a, b, good, bad) -> None:
    assert [m.payload for m in drain(b, "STRM.DST", "APP")] == good
    assert rows(a, "SELECT MSG_STATE, USER_DATA FROM AQ$SRC_QT ORDER BY USER_DATA") == [
        ("UNDELIVERABLE", p) for p in bad]
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES, SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES") == [(30, 0, "N")]


def test_a_refusal_in_flight_behind_a_failed_post_is_read_and_sifted(sites, monkeypatch):
    """The servlet refuses the second batch (ORA-24010) and closes the connection; the
    runner writes the fourth only after that (it reset): the write fails.  The refusal is
    still on the connection and is read: the second batch's messages are marked
    UNDELIVERABLE and the run goes on.  Before, the failed write stood for the second
    batch's answer — a possible resend (posted before the first answer), so the run ended
    with ORA-12541 and a failure counted, and the same race in every run would have
    disabled the schedule without the messages ever being marked."""
    a, b, proxy, good, bad = _with_a_missing_queue(sites, script={2: "reset"})
    passed = _gate(monkeypatch, 4, lambda: _wait_for(proxy.ended.is_set))
    _moved_in_one_run(a, proxy, 30)
    assert passed
    _refused_ones_marked(a, b, good, bad)


def test_a_refusal_of_the_middle_batch_in_flight_is_sifted(sites):
    """The same over the servlet's own connection, however the race between its close and
    the runner's writes goes."""
    a, b, proxy, good, bad = _with_a_missing_queue(sites)
    _moved_in_one_run(a, proxy, 30)
    _refused_ones_marked(a, b, good, bad)


def test_an_answer_cut_in_its_body_is_sent_again_in_the_same_run(sites):
    """The fourth answer stops in the middle of its body (the servlet committed the fourth,
    and those behind it that reached it): the fourth is sent again as a resend, the fifth
    and sixth go back and are skipped there if they were committed — one run, no failure."""
    a, b, proxy, sent = _setup(sites, script={4: "cut"})
    _moved_in_one_run(a, proxy)
    assert len(proxy.requests) >= 2       # the rest went on new connections
    _each_once_in_order(a, b, sent)
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(60, 0)]


def test_a_gateways_503_for_a_batch_in_flight_is_sent_again_in_the_same_run(sites):
    """A gateway answers 503 for the fourth batch and closes the connection; it never reached
    the servlet, nor did the fifth and sixth: the fourth is sent again (ORA-03113 was its
    answer), the others follow — one run, no failure."""
    a, b, proxy, sent = _setup(sites, script={4: GATEWAY_503}, swallow=3)
    _moved_in_one_run(a, proxy)
    assert proxy.forwarded[0] == 3
    _each_once_in_order(a, b, sent)
    [(total, failures, error)] = rows(a, "SELECT TOTAL_NUMBER, FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
    assert (total, failures, error) == (60, 0, None)


def test_a_503_for_a_possible_resend_fails_the_run_and_the_next_duplicates_nothing(sites):
    """The 503 comes for the second batch, posted before any answer (so already a possible
    resend: sent once, as Destination.deliver would): the run ends with ORA-03113 after the
    first batch and counts a failure; what was in flight is back at the source.  After the
    back-off the next run moves the rest, each message once and in order."""
    a, b, proxy, sent = _setup(sites, script={2: GATEWAY_503}, swallow=1)
    _fails_then_recovers(a, b, proxy, sent, 10, "ORA-03113")


def test_a_servlet_gone_in_the_middle_of_a_run_fails_it_and_the_next_duplicates_nothing(sites):
    """The fourth answer is cut and the servlet's port then refuses connections: the fourth
    cannot be sent again (ORA-12541), the run ends having moved three batches and counts a
    failure, the fourth to sixth (committed there, answers lost) are back at the source.
    Once the servlet listens again and the back-off ends, the next run moves them — skipped
    there, each message once and in order."""
    a, b, proxy, sent = _setup(sites, script={4: "cut"}, refuse_at=4)
    _fails_then_recovers(a, b, proxy, sent, 30, "ORA-12541", proxy.listen)


def _fails_then_recovers(a, b, proxy, sent, moved: int, error: str, meanwhile=None) -> None:
    """The first run moves ``moved`` messages and ends with ``error``, a failure counted and
    the rest back at the source; after ``meanwhile()`` and the back-off the next run moves
    the rest: each message once and in order, the failures over."""
    runner, now = _runner(a)
    try:
        assert runner.run_once(force=True) == moved
        [(total, failures, last)] = rows(a, "SELECT TOTAL_NUMBER, FAILURES, LAST_ERROR_MSG FROM DBA_QUEUE_SCHEDULES")
        assert (total, failures) == (moved, 1) and last.startswith(error), last
        assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(len(sent) - moved,)]
        if meanwhile is not None:
            meanwhile()
        now[0] += 31                                 # the back-off ends
        assert runner.run_once(force=True) == len(sent) - moved
    finally:
        runner.close()
        proxy.close()
    _each_once_in_order(a, b, sent)
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(len(sent), 0)]


def test_a_batch_in_parts_whose_middle_part_is_cut_is_sent_again_in_the_same_run(sites, monkeypatch):
    """Each message a request of its own (a batch larger than the servlet's request limit
    goes in parts, each committed there on its own): the answer to the fourth batch's fifth
    part is cut.  Its first parts, and what was behind it, were committed there: the fourth
    is sent again as a resend (those parts skipped), the rest follows — one run, each message
    once and in order."""
    monkeypatch.setattr(HttpSite, "MAX_REQUEST", 1)
    a, b, proxy, sent = _setup(sites, script={35: "cut"})
    _moved_in_one_run(a, proxy)
    assert proxy.requests[0] >= 35
    _each_once_in_order(a, b, sent)
    assert rows(a, "SELECT TOTAL_NUMBER, FAILURES FROM DBA_QUEUE_SCHEDULES") == [(60, 0)]


def test_a_503_for_a_middle_part_of_a_possible_resend_fails_the_run_and_its_parts_go_once(sites, monkeypatch):
    """The second batch's fifth part is answered by a gateway's 503 (it and what follows never
    reached the servlet; its first four parts were committed there): the second batch was a
    possible resend, so the run ends after the first batch with a failure; the next run
    sends it again and its first parts are skipped there."""
    monkeypatch.setattr(HttpSite, "MAX_REQUEST", 1)
    a, b, proxy, sent = _setup(sites, script={15: GATEWAY_503}, swallow=14)
    _fails_then_recovers(a, b, proxy, sent, 10, "ORA-03113")
