"""AQPropServlet's propagated batches (idap/propreceiver.py) and its pooled sessions."""

from __future__ import annotations

import os

import sluice
from sluice.store.postgres import PgStore
from sluice.store.sqlite import SqliteStore
from sluice.streams.propagation.wire import MEDIA_TYPE, Batch, Propagated, to_wire


def _batch(first: int, n: int) -> bytes:
    msgs = []
    for i in range(first, first + n):
        msgid = i.to_bytes(16, "big")
        msgs.append(Propagated("AQUSER.RAW_MSGQ", msgid, msgid, "RAW", b"m%03d" % i))
    return to_wire(Batch("DBS9.NET", "X.SRC", msgs, resend=False))


def test_batches_reuse_the_pooled_session(servlet, monkeypatch):
    """A propagated batch only enqueues and commits: the servlet's pooled connection goes
    back as it is, not given a new database session for each batch (a new SQLite
    connection and its views, or a PostgreSQL session: a fifth of a batch's work)."""
    opened = []
    for cls in (SqliteStore, PgStore):
        real = cls.session

        def counted(self, user, _real=real):
            opened.append(user)
            return _real(self, user)
        monkeypatch.setattr(cls, "session", counted)
    path = "/aqserv/servlet/AQPropServlet"
    first = servlet.post(_batch(0, 5), content_type=MEDIA_TYPE, path=path)
    assert first.status_code == 200 and first.json() == {"received": 5}
    opened.clear()
    for k in range(1, 4):
        r = servlet.post(_batch(5 * k, 5), content_type=MEDIA_TYPE, path=path)
        assert r.status_code == 200 and r.json() == {"received": 5}
    assert opened == []
    with sluice.connect(servlet.dsn) as admin:
        got = admin.query("SELECT USER_DATA FROM AQUSER.AQ$RAW_QT ORDER BY ENQ_TIME", None)[1]
    assert sorted(bytes(r[0]) for r in got) == [b"m%03d" % i for i in range(20)]


def test_a_refused_batch_leaves_the_pool_a_clean_session(servlet):
    """After a batch the servlet refused (its session discarded, nothing committed), the
    next one commits alone."""
    path = "/aqserv/servlet/AQPropServlet"
    bad = to_wire(Batch("DBS9.NET", "X.SRC", [Propagated("AQUSER.NOPE", os.urandom(16), os.urandom(16), "RAW",
                                                          b"x")], resend=False))
    assert servlet.post(bad, content_type=MEDIA_TYPE, path=path).status_code == 500
    assert servlet.post(_batch(0, 3), content_type=MEDIA_TYPE, path=path).json() == {"received": 3}
    with sluice.connect(servlet.dsn) as admin:
        got = admin.query("SELECT USER_DATA FROM AQUSER.AQ$RAW_QT", None)[1]
    assert sorted(bytes(r[0]) for r in got) == [b"m000", b"m001", b"m002"]


def test_every_answer_advertises_the_batch_limit_and_a_larger_batch_is_413(store):
    """AQPropServlet takes batches up to ``max_batch_bytes`` (``sluice serve
    --max-batch-bytes``), not the IDAP documents' ``max_request_bytes``, and says so in
    every answer — 200, a Fault, a 413 — for the sender to size its requests by."""
    from sluice.streams.propagation.wire import LIMIT_HEADER

    from .conftest import start_servlet
    s = start_servlet(store, max_request_bytes=1000, max_batch_bytes=50_000)
    try:
        path = "/aqserv/servlet/AQPropServlet"
        ok = s.post(_batch(0, 50), content_type=MEDIA_TYPE, path=path)        # over 1000 bytes
        assert ok.status_code == 200 and ok.json() == {"received": 50}
        assert ok.headers[LIMIT_HEADER] == "50000"
        bad = to_wire(Batch("DBS9.NET", "X.SRC", [Propagated("AQUSER.NOPE", os.urandom(16), os.urandom(16),
                                                              "RAW", b"x")], resend=False))
        fault = s.post(bad, content_type=MEDIA_TYPE, path=path)
        assert fault.status_code == 500 and fault.headers[LIMIT_HEADER] == "50000"
        big = to_wire(Batch("DBS9.NET", "X.SRC", [Propagated("AQUSER.RAW_MSGQ", os.urandom(16), os.urandom(16),
                                                              "RAW", b"x" * 50_000)], resend=False))
        refused = s.post(big, content_type=MEDIA_TYPE, path=path)
        assert refused.status_code == 413 and refused.headers[LIMIT_HEADER] == "50000"
        assert "the limit is 50000 bytes" in refused.text
        with sluice.connect(s.dsn) as admin:
            assert admin.query("SELECT COUNT(*) FROM AQUSER.AQ$RAW_QT", None)[1] == [(50,)]
    finally:
        for c in s.clients:
            c.close()
        s.server.stop()


def test_the_servlet_and_its_senders_agree_on_the_default_batch_limit():
    """``sluice serve --max-batch-bytes``, the servlet's setting and the limit a sender takes
    before a servlet has said its own are one documented default (32 MiB)."""
    from sluice.cli import serve
    from sluice.idap import IdapConfig
    from sluice.streams.propagation.wire import MAX_BATCH_BYTES

    [option] = [p for p in serve.params if p.name == "max_batch_bytes"]
    assert option.default == IdapConfig("sqlite://").max_batch_bytes == MAX_BATCH_BYTES == 32 << 20
