"""PostgreSQL's dequeue query runs as a prepared statement of the session's own, sent
through libpq (store/pgprepared.py).  These tests pin down that the statement is there
whenever a dequeue runs it — whatever else dropped the connection's prepared statements
— and that the rows are those the cursor gave."""

from __future__ import annotations

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.store import pgprepared
from tests.conftest import make_queue, nowait


def _enq(conn, q="Q", n=1, **props):
    queue = conn.queue(q)
    for i in range(n):
        queue.enqone(conn.msgproperties(payload=b"m%d" % i, **props))


def _statements(conn) -> int:
    """The session connection's prepared statements, as the server knows them."""
    return conn.context.session._raw.execute("SELECT count(*) FROM pg_prepared_statements "
                                             "WHERE name LIKE 'sluice_r%'").fetchone()[0]


def test_the_dequeue_runs_its_own_prepared_statement_and_gives_the_cursors_rows(pg_conn):
    make_queue(pg_conn)
    _enq(pg_conn, n=3, correlation="c", priority=2)
    pg_conn.commit()
    q = nowait(pg_conn.queue("Q"))
    got = [q.deqone() for _ in range(3)]
    assert [m.payload for m in got] == [b"m0", b"m1", b"m2"]
    assert [(m.correlation, m.priority, m.attempts, m.delay) for m in got] == [("c", 2, 0, 0)] * 3
    assert _statements(pg_conn) == 2       # the first one's shape, and the next ones' (a position)
    assert q.deqone() is None
    pg_conn.commit()


def test_a_failed_query_in_the_transaction_drops_psycopgs_statements_and_the_dequeue_prepares_again(pg_conn):
    """A failed SQL query in the open transaction is rolled back to its savepoint through
    psycopg, which then sends DEALLOCATE ALL (it had prepared statements of its own): the
    dequeue's statement went with them, and the next dequeue must not run it."""
    make_queue(pg_conn)
    _enq(pg_conn, n=4)
    pg_conn.commit()
    q = nowait(pg_conn.queue("Q"))
    assert [q.deqone().payload for _ in range(2)] == [b"m0", b"m1"]   # both shapes prepared
    cur = pg_conn.cursor()
    for _ in range(8):       # psycopg prepares what it ran five times
        cur.execute("SELECT 1 FROM DUAL")
    with pytest.raises(DatabaseError):
        cur.execute("SELECT * FROM NO_SUCH_TABLE")
    assert _statements(pg_conn) == 0
    assert q.deqone().payload == b"m2"     # the transaction goes on
    pg_conn.commit()
    assert q.deqone().payload == b"m3"
    pg_conn.commit()


def test_an_applications_sql_cannot_drop_the_dequeues_statement(pg_conn):
    """DEALLOCATE / DISCARD are no SQL an application can run through Sluice."""
    make_queue(pg_conn)
    _enq(pg_conn, n=2)
    pg_conn.commit()
    q = nowait(pg_conn.queue("Q"))
    assert q.deqone().payload == b"m0"
    for sql in ("DEALLOCATE ALL", "DISCARD ALL"):
        with pytest.raises(DatabaseError, match="ORA-00900"):
            pg_conn.cursor().execute(sql)
    assert q.deqone().payload == b"m1"
    pg_conn.commit()


def test_immediate_dequeues_on_pooled_connections_between_the_sessions_own(pg_conn):
    """An IMMEDIATE REMOVE runs the query on a pooled connection (the cursor's path): the
    session's statements stay its own, and the two kinds of dequeue alternate."""
    make_queue(pg_conn)
    _enq(pg_conn, n=6)
    pg_conn.commit()
    q = nowait(pg_conn.queue("Q"))
    got = []
    for i in range(6):
        q.deqoptions.visibility = sluice.DEQ_IMMEDIATE if i % 2 else sluice.DEQ_ON_COMMIT
        got.append(q.deqone().payload)
    pg_conn.commit()
    assert got == [b"m%d" % i for i in range(6)]
    assert _statements(pg_conn) == 3       # the two shapes, and the commit's DELETE


def test_a_parameter_the_statement_does_not_take_leaves_the_query_to_the_cursor(pg_conn):
    """Values are packed only for the types the statement declares (int8, float8, text,
    bytea): anything else goes as before."""
    assert pgprepared._packed([1, 1.5, "a", b"b", None]) is not None
    assert pgprepared._packed([True]) is None
    assert pgprepared._packed([2**63]) is None
    assert pgprepared._packed(["a\x00b"]) is None
    assert pgprepared._packed(["\ud800"]) is None


def test_a_message_another_session_holds_is_skipped(pg_conn, pg_dsn):
    make_queue(pg_conn)
    _enq(pg_conn, n=2)
    pg_conn.commit()
    other = sluice.connect(pg_dsn)
    try:
        assert nowait(other.queue("Q")).deqone().payload == b"m0"     # held, not committed
        q = nowait(pg_conn.queue("Q"))
        assert q.deqone().payload == b"m1"
        assert q.deqone() is None
        other.rollback()
        assert q.deqone().payload == b"m0"
        pg_conn.commit()
    finally:
        other.close()
