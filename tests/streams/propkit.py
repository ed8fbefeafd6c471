"""Helpers of the propagation tests."""

from __future__ import annotations

import pytest

import sluice

from ..conftest import make_queue


def rows(conn, sql, binds=None):
    return conn.query(sql, binds)[1]


def raises_ora(code, fn, *args, **kw):
    """``fn(*args, **kw)`` raises ORA-``code``; the error."""
    with pytest.raises(sluice.DatabaseError) as e:
        fn(*args, **kw)
    assert str(e.value).startswith(f"ORA-{code:05d}"), str(e.value)
    return e.value


def multi_queue(conn, name, payload="RAW", **kw):
    """A started multi-consumer queue ``name`` in its own queue table."""
    return make_queue(conn, name, payload=payload, multiple_consumers=True, **kw)


class Sites:
    """Sites of the test's backend: ``open("dbs2")`` is a connection to a new store (another
    SQLite file, or another schema of the PostgreSQL database) whose global name is
    ``DBS2``, and ``dsn["dbs2"]`` its DSN; everything is closed and dropped afterwards."""

    def __init__(self, base_dsn: str, tmp_path) -> None:
        self.base = base_dsn
        self.tmp = tmp_path
        self.dsn: dict[str, str] = {}
        self.conns: list = []
        self.schemas: list[str] = []
        self.named: set[str] = set()

    def dsn_of(self, name: str) -> str:
        if name not in self.dsn:
            if self.base.startswith("sqlite:"):
                self.dsn[name] = f"sqlite:///{self.tmp / (name + '.db')}"
            else:
                head, _, query = self.base.partition("?schema=")
                schema = f"{query}_{name}"
                self.schemas.append(schema)
                self.dsn[name] = f"{head}?schema={schema}"
        return self.dsn[name]

    def open(self, name: str, user: str | None = None, password: str | None = None):
        conn = sluice.connect(self.dsn_of(name), user=user, password=password)
        self.conns.append(conn)
        if name not in self.named:      # the site's name, as propagation reports it
            conn.cursor().execute(f"ALTER DATABASE RENAME GLOBAL_NAME TO {name}")
            self.named.add(name)
        return conn

    def close(self) -> None:
        from ..conftest import drop_schema
        for c in self.conns:
            try:
                c.close()
            except sluice.Error:
                pass
        for schema in self.schemas:
            drop_schema(schema)


@pytest.fixture
def sites(dsn, tmp_path):
    """:class:`Sites` of the test's backend (import it into a test module to use it)."""
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def enqueue(conn, queue, payloads, **props):
    q = conn.queue(queue)
    q.enqmany([conn.msgproperties(payload=p, **props) for p in payloads])
    conn.commit()


def drain(conn, queue, consumer=None, payload_type=None):
    """Every message ``consumer`` can dequeue from ``queue`` now (committed)."""
    q = conn.queue(queue, payload_type) if payload_type else conn.queue(queue)
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    if consumer:
        q.deqoptions.consumername = consumer
    out = []
    while True:
        got = q.deqmany(1000)
        if not got:
            break
        out.extend(got)
    conn.commit()
    return out


def lose_first_commit(monkeypatch, session):
    """The next commit of ``session`` fails (ORA-03113: the answer lost, or the process dead
    between the destination's commit and the source's); later ones work.  Returns the
    function that puts the real commit back."""
    real_commit = type(session).commit
    failed = []

    def lost(self):
        if self is session and not failed:
            failed.append(1)
            raise sluice.OperationalError("ORA-03113: end-of-file on communication channel", 3113)
        return real_commit(self)
    monkeypatch.setattr(type(session), "commit", lost)
    return lambda: monkeypatch.setattr(type(session), "commit", real_commit)
