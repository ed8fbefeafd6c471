"""A receive whose HTTP client gives up (its timeout, a dropped connection) takes nothing
into the HTTP session's transaction: the server-side wait ends when the client goes, and
what the receive had already taken by then is given back, the session's earlier work kept.
Before, the abandoned wait went on and took the next message into the session's
transaction: the session's next receive missed it and its next commit consumed it unseen."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

import sluice

from sluice.idap import ops

from .conftest import (SERVLET, CliServer, basic, commit_doc, count, msgids, receive, received,
                       send_raw, start_servlet)

Q = "AQUSER.RAW_MSGQ"
XML = {"Content-Type": "text/xml"}


def forever(destination: str, extra: str = "") -> str:
    """An AQXmlReceive without wait_time: DBMS_AQ's default, wait forever."""
    return receive(destination, extra=extra).replace("<wait_time>0</wait_time>", "")


def give_up(client: httpx.Client, document: str, after: float = 1.0) -> None:
    """Post ``document`` and give up waiting for the answer after ``after`` seconds."""
    with pytest.raises(httpx.TimeoutException):
        client.post(SERVLET, content=document.encode(), headers=XML, timeout=after)


def ids(messages) -> list[str]:
    return [m.findtext(".//{*}message_id") for m in messages]


def post(client: httpx.Client, document: str, timeout: float = 20) -> httpx.Response:
    return client.post(SERVLET, content=document.encode(), headers=XML, timeout=timeout)


def _endless_receive_abandoned(a: httpx.Client, b: httpx.Client, store: str) -> None:
    assert received(post(b, receive(Q))) == []            # b's HTTP session (its cookie)
    give_up(b, forever(Q))
    sent = msgids(post(a, send_raw(Q, "0A", commit=True)))[0]
    time.sleep(0.5)                 # a server still waiting for b would take it now
    assert ids(received(post(b, receive(Q, wait=2)))) == [sent]
    assert post(b, commit_doc()).status_code == 200
    assert count(store, Q) == 0


def test_an_abandoned_endless_receive_takes_nothing_later(servlet, store):
    _endless_receive_abandoned(servlet.client(), servlet.client(), store)


def test_an_abandoned_endless_receive_through_sluice_serve(store):
    server = CliServer(store, "--log-level", "warning")
    try:
        with httpx.Client(base_url=server.url, headers=basic()) as a, \
                httpx.Client(base_url=server.url, headers=basic()) as b:
            _endless_receive_abandoned(a, b, store)
    finally:
        server.stop()


def test_a_commit_after_an_abandoned_receive_consumes_nothing(servlet, store):
    """The client disconnects while the server-side dequeue is blocked, then commits."""
    a, b = servlet.client(), servlet.client()
    assert received(post(b, receive(Q))) == []
    give_up(b, forever(Q))
    result = {}
    committer = threading.Thread(target=lambda: result.setdefault("r", post(b, commit_doc())))
    committer.start()
    time.sleep(0.3)
    msgids(post(a, send_raw(Q, "0B", commit=True)))
    committer.join(25)
    assert result["r"].status_code == 200
    assert count(store, Q) == 1                      # still there: b never saw it


def test_an_abandoned_receive_leaves_earlier_work_alone(servlet, store):
    a, b = servlet.client(), servlet.client()
    first = msgids(post(a, send_raw(Q, "01", commit=True)))[0]
    assert ids(received(post(b, receive(Q)))) == [first]     # locked by b's transaction
    give_up(b, forever(Q))
    second = msgids(post(a, send_raw(Q, "02", commit=True)))[0]
    time.sleep(0.3)
    assert ids(received(post(b, receive(Q, wait=2)))) == [second]
    assert post(b, commit_doc()).status_code == 200
    assert count(store, Q) == 0


@pytest.fixture
def slow_take(monkeypatch):
    """Receives that wait hold on to what they took for 2.5 s before answering: their
    client (timeout 1 s) is gone by then — the race of a message taken just as the
    client disconnects."""
    real = ops._take

    def take(q, req, ctx):
        got = real(q, req, ctx)
        if req.wait_time != 0:
            time.sleep(2.5)
        return got
    monkeypatch.setattr(ops, "_take", take)


@pytest.mark.parametrize("mode", ["REMOVE", "LOCKED", "REMOVE_NODATA"])
def test_what_an_abandoned_receive_took_is_given_back(servlet, store, slow_take, mode):
    a, b = servlet.client(), servlet.client()
    first = msgids(post(a, send_raw(Q, "01", commit=True)))[0]
    assert ids(received(post(b, receive(Q)))) == [first]     # earlier work of b
    second = msgids(post(a, send_raw(Q, "02", commit=True)))[0]
    give_up(b, receive(Q, wait=5, extra=f"<dequeue_mode>{mode}</dequeue_mode>"))
    time.sleep(2.5)                                  # the server notices, gives it back
    # another session can take it now: it is not in b's transaction …
    c = servlet.client()
    got = received(post(c, receive(Q)))
    assert ids(got) == [second] and got[0].findtext(".//{*}delivery_count") == "0"
    assert post(c, commit_doc("AQXmlRollback")).status_code == 200
    # … and b's position did not move past it: b's next receive gets it (no wait)
    got = received(post(b, receive(Q)))
    assert ids(got) == [second] and got[0].findtext(".//{*}delivery_count") == "1"
    assert post(b, commit_doc()).status_code == 200
    assert count(store, Q) == 0                      # b's first receive was kept


def test_an_abandoned_receive_with_commit_commits_nothing(servlet, store, slow_take):
    a, b = servlet.client(), servlet.client()
    sent = msgids(post(a, send_raw(Q, "03", commit=True)))[0]
    give_up(b, receive(Q, wait=5, commit=True))
    time.sleep(2.5)
    assert count(store, Q) == 1
    assert ids(received(post(b, receive(Q, commit=True)))) == [sent]
    assert count(store, Q) == 0


def test_an_abandoned_receive_run_in_a_worker_thread(store, slow_take):
    """Documents past inline_max_bytes are read and run in threads (Servlet.handle)."""
    s = start_servlet(store, inline_max_bytes=0)
    try:
        a, b = s.client(), s.client()
        sent = msgids(post(a, send_raw(Q, "04", commit=True)))[0]
        give_up(b, receive(Q, wait=5))
        time.sleep(2.5)
        assert ids(received(post(b, receive(Q, commit=True)))) == [sent]
        assert count(store, Q) == 0
    finally:
        s.server.stop()


def test_a_receive_whose_client_left_while_its_session_was_busy(servlet, store):
    """A receive that waits for its session's previous request and whose client gives up
    meanwhile takes nothing when its turn comes (it runs on the event loop: wait 0)."""
    a, b = servlet.client(), servlet.client()
    assert received(post(b, receive(Q))) == []
    busy = threading.Thread(target=lambda: post(b, receive("AQUSER.JMS_TEXTQ", wait=3)))
    busy.start()
    time.sleep(0.3)
    give_up(b, receive(Q), after=0.5)               # queued behind the busy request
    sent = msgids(post(a, send_raw(Q, "05", commit=True)))[0]
    busy.join(10)
    time.sleep(0.3)
    assert ids(received(post(b, receive(Q)))) == [sent]
    assert post(b, commit_doc()).status_code == 200
    assert count(store, Q) == 0


def test_a_disconnect_not_yet_handled_when_the_message_is_taken(servlet, store, monkeypatch):
    """The client leaves while the event loop is busy — a send committing on it, which
    wakes the waiting receive — so the receive takes the message before the loop has
    handled the disconnect: it lets the loop catch up before it answers, and gives the
    message back."""
    a, b = servlet.client(), servlet.client()
    assert received(post(a, receive("AQUSER.JMS_TEXTQ"))) == []   # a has a connection: its
    assert received(post(b, receive(Q))) == []                   # sends run on the loop
    real_send, real_commit = ops._send, sluice.Connection.commit

    def slow_send(conn, req, ctx):      # runs on the event loop: blocks it past b's timeout
        time.sleep(2)
        return real_send(conn, req, ctx)

    def slow_commit(conn):              # and on after the commit, while b's receive takes
        real_commit(conn)
        if threading.current_thread() is servlet.server.thread:
            time.sleep(1)
    abandoned = threading.Thread(target=give_up, args=(b, forever(Q)))
    abandoned.start()                   # b's client gives up at 1 s …
    time.sleep(0.3)
    monkeypatch.setattr(ops, "_send", slow_send)
    monkeypatch.setattr(sluice.Connection, "commit", slow_commit)
    sent = msgids(post(a, send_raw(Q, "06", commit=True)))[0]   # … while the loop is blocked
    monkeypatch.setattr(ops, "_send", real_send)
    monkeypatch.setattr(sluice.Connection, "commit", real_commit)
    abandoned.join(10)
    time.sleep(0.5)
    assert ids(received(post(b, receive(Q)))) == [sent]
    assert post(b, commit_doc()).status_code == 200
    assert count(store, Q) == 0
