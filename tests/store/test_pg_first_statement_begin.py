"""A PostgreSQL transaction's BEGIN rides with its first statement: the first dequeue after a
commit is one round trip, the BEGIN and the dequeue's prepared statement in one libpq pipeline
(``PgConnection.begin``; it was two: a BEGIN of its own, then the statement) — and an error
or a lost connection there ends as it did (libpq trace as in test_pg_group_first.py)."""

from __future__ import annotations

import pytest
from psycopg.pq import TransactionStatus

import sluice
from sluice.store import sqlops
from tests.conftest import make_queue, nowait, pg_admin
from tests.store.conftest import round_trips


def _server_status(conn) -> TransactionStatus:
    return conn.context.session._raw.info.transaction_status


def _cycle(conn, a, b) -> list[list[str]]:
    """The requests of a deqone from ``a``, an enqone into ``b``, the commit."""
    m, deq = round_trips(conn, a.deqone)
    assert m is not None
    _, enq = round_trips(conn, lambda: b.enqone(conn.msgproperties(payload=b"y")))
    _, commit = round_trips(conn, conn.commit)
    return [deq, enq, commit]


def test_a_transactions_first_dequeue_is_one_round_trip(pg_conn):
    """deqone / enqone / commit, statements prepared: the deqone is one request — its
    statement with the BEGIN — the enqone one (pipelined), the commit two (the DELETE of
    what was dequeued, the COMMIT with the queue totals and its NOTIFY)."""
    make_queue(pg_conn, "A")
    make_queue(pg_conn, "B")
    a, b = nowait(pg_conn.queue("A")), pg_conn.queue("B")
    a.enqmany([pg_conn.msgproperties(payload=b"x%d" % i) for i in range(4)])
    pg_conn.commit()
    for _ in range(2):        # (the statements prepared)
        _cycle(pg_conn, a, b)
    deq, enq, commit = _cycle(pg_conn, a, b)
    assert len(deq) == 1 and deq[0].startswith("BEGIN+sluice_r"), deq
    assert [len(enq), len(commit)] == [1, 2], (enq, commit)
    # (the queue totals' UPSERT rides in the COMMIT's simple query: store-wide V$ counts)
    assert "COMMIT" in commit[-1].split("; "), commit[-1]
    assert _server_status(pg_conn) == TransactionStatus.IDLE
    assert [m.payload for m in a.deqmany(10)] == [b"x3"]
    assert len(b.deqmany(10)) == 3
    pg_conn.commit()


def test_a_first_dequeue_that_finds_nothing_leaves_no_transaction(pg_conn):
    """Nothing to take: the BEGIN went with the statement, the ROLLBACK follows (no empty
    transaction held while the caller waits) — two requests, not three."""
    make_queue(pg_conn)
    q = nowait(pg_conn.queue("Q"))
    assert q.deqone() is None                       # (prepared)
    m, trips = round_trips(pg_conn, q.deqone)
    assert m is None and len(trips) == 2 and trips[0].startswith("BEGIN+sluice_r") \
        and trips[1] == "ROLLBACK", trips
    assert not pg_conn.transaction_in_progress
    assert _server_status(pg_conn) == TransactionStatus.IDLE


def _dividing_by_zero(monkeypatch):
    """The dequeue's statement fails on the server as it reads a row (not as it is
    prepared): ORA-01476."""
    candidates_query = sqlops.candidates_query

    def query(*args, **kwargs):
        sql, params = candidates_query(*args, **kwargs)
        assert " WHERE " in sql
        return sql.replace(" WHERE ", " WHERE 1 / (SEQ - SEQ) = 1 AND ", 1), params
    monkeypatch.setattr(sqlops, "candidates_query", query)


def test_an_error_of_the_first_statement_ends_the_transaction_and_the_session_goes_on(pg_conn, monkeypatch):
    """The dequeue's statement fails after its BEGIN in the same pipeline: raised by that
    deqone, nothing left open (client or server), a savepoint taken before it is gone with
    the transaction (ORA-01086), and the next dequeue takes the message."""
    make_queue(pg_conn)
    q = nowait(pg_conn.queue("Q"))
    q.enqone(pg_conn.msgproperties(payload=b"m"))
    pg_conn.commit()
    _dividing_by_zero(monkeypatch)
    for prepared in (False, True):
        mark = pg_conn.context.session.savepoint()
        with pytest.raises(sluice.DatabaseError) as e:
            q.deqone()
        assert e.value.full_code == "ORA-01476"
        assert not pg_conn.transaction_in_progress
        assert _server_status(pg_conn) == TransactionStatus.IDLE
        with pytest.raises(sluice.DatabaseError) as e:
            pg_conn.context.session.rollback_to_savepoint(mark)
        assert e.value.full_code == "ORA-01086"
    monkeypatch.undo()
    m, trips = round_trips(pg_conn, q.deqone)
    assert m.payload == b"m" and m.attempts == 0 and trips[-1].startswith("BEGIN+"), trips
    pg_conn.commit()
    assert q.deqone() is None


def test_a_connection_lost_before_the_first_dequeue_is_03113_then_the_session_reconnects(pg_conn):
    make_queue(pg_conn)
    q = nowait(pg_conn.queue("Q"))
    q.enqone(pg_conn.msgproperties(payload=b"m"))
    pg_conn.commit()
    assert q.deqone().payload == b"m"
    pg_conn.rollback()
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pg_conn.context.session._raw.info.backend_pid,))
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert e.value.full_code == "ORA-03113"
    assert not pg_conn.transaction_in_progress
    m = q.deqone()                                  # a new connection
    assert m.payload == b"m" and m.attempts == 1    # (the rollback above counted one)
    pg_conn.commit()


def test_an_error_before_the_first_statement_leaves_no_transaction_pending(pg_conn, monkeypatch):
    """The dequeue fails in Python before it sent anything (its BEGIN still pending): the
    session does not count a transaction the server has not, so the enqueue after it opens
    one — a rollback takes its message back (a pending BEGIN taken for sent would have let
    the INSERT commit on its own)."""
    make_queue(pg_conn)
    q = nowait(pg_conn.queue("Q"))

    def refused(*args, **kwargs):
        raise sluice.DatabaseError("ORA-00600: internal error code, arguments: [test]")
    monkeypatch.setattr(sqlops, "candidates_query", refused)
    with pytest.raises(sluice.DatabaseError):
        q.deqone()
    monkeypatch.undo()
    assert (_server_status(pg_conn) != TransactionStatus.IDLE) == pg_conn.context.session._open
    q.enqone(pg_conn.msgproperties(payload=b"m"))
    pg_conn.rollback()
    assert q.deqone() is None


def test_a_transactions_first_dml_sends_its_begin_with_its_savepoint(pg_conn, pg_dsn):
    """A cursor's INSERT opening the transaction: the BEGIN goes with the statement's
    SAVEPOINT (one request, was two); a failing one is undone alone, the transaction goes
    on; the rollback takes the rest back."""
    with pg_admin() as admin:
        admin.execute(f'CREATE TABLE "{pg_dsn.rsplit("schema=", 1)[1]}".t (a INTEGER PRIMARY KEY)')
    cur = pg_conn.cursor()
    cur.execute("INSERT INTO t (a) VALUES (1)")
    pg_conn.commit()
    _, trips = round_trips(pg_conn, lambda: cur.execute("INSERT INTO t (a) VALUES (2)"))
    assert trips[0] == "BEGIN; SAVEPOINT sluice_dml" and "BEGIN" not in trips[1:], trips
    with pytest.raises(sluice.DatabaseError) as e:
        cur.execute("INSERT INTO t (a) VALUES (1)")
    assert e.value.full_code == "ORA-00001"
    cur.execute("INSERT INTO t (a) VALUES (3)")
    assert pg_conn.transaction_in_progress
    pg_conn.rollback()
    assert _server_status(pg_conn) == TransactionStatus.IDLE
    assert pg_conn.query("SELECT a FROM t ORDER BY a", None)[1] == [(1,)]
