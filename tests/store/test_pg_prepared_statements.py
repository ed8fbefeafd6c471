"""A PostgreSQL session's other statements on its queue tables run as prepared statements of
its own too (store/pgprepared.py, ``PgConnection.query_table``): the commit's DELETE of the
dequeued messages, a multi-consumer commit's probe for records out of retries, the reads
of a dequeue tested in Python (a transactional group's lock, ``lock_records``) and a dequeue
whose condition is SQL.  These tests pin down that those statements take that path and that
what an application sees is what the cursor gave: errors raised by the commit with the
transaction rolled back, the statements there again after psycopg dropped them, groups kept
to one session, a condition's functions given the parameter types they were."""

from __future__ import annotations

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.store.sqlschema import table_name
from tests.conftest import make_queue, nowait, pg_admin, table_rows


def _enq(conn, q="Q", n=1, **props):
    queue = conn.queue(q)
    for i in range(n):
        queue.enqone(conn.msgproperties(payload=b"m%d" % i, **props))


def _statements(conn) -> list[str]:
    """The texts of the session connection's own prepared statements (the server's list)."""
    return [s for (s,) in conn.context.session._raw.execute(
        "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'sluice_r%'").fetchall()]


def _deletes(conn) -> list[str]:
    return sorted(s.split(" WHERE ")[1] for s in _statements(conn) if s.startswith("DELETE FROM"))


def test_the_commits_delete_runs_as_the_sessions_own_statement(pg_conn):
    make_queue(pg_conn)
    _enq(pg_conn, n=4)
    pg_conn.commit()
    q = nowait(pg_conn.queue("Q"))
    assert [q.deqone().payload for _ in range(3)] == [b"m0", b"m1", b"m2"]
    assert _deletes(pg_conn) == []
    pg_conn.commit()
    assert _deletes(pg_conn) == ["SEQ = ANY($1::BIGINT[])"]     # the three in one statement
    assert q.deqone().payload == b"m3"
    pg_conn.commit()
    assert _deletes(pg_conn) == ["SEQ = $1", "SEQ = ANY($1::BIGINT[])"]
    assert table_rows(pg_conn, "Q_QT") == []
    assert q.deqone() is None


def test_the_commits_delete_prepares_again_after_psycopg_dropped_the_statements(pg_conn):
    """A failed SQL query in the open transaction makes psycopg send DEALLOCATE ALL (it had
    statements of its own): the commit's DELETE, prepared by an earlier commit, went too."""
    make_queue(pg_conn)
    _enq(pg_conn, n=4)
    pg_conn.commit()
    q = nowait(pg_conn.queue("Q"))
    assert [q.deqone().payload for _ in range(2)] == [b"m0", b"m1"]
    pg_conn.commit()
    assert _deletes(pg_conn) == ["SEQ = ANY($1::BIGINT[])"]
    assert [q.deqone().payload for _ in range(2)] == [b"m2", b"m3"]
    cur = pg_conn.cursor()
    for _ in range(8):       # psycopg prepares what it ran five times
        cur.execute("SELECT 1 FROM DUAL")
    with pytest.raises(DatabaseError):
        cur.execute("SELECT * FROM NO_SUCH_TABLE")
    assert _statements(pg_conn) == []
    pg_conn.commit()
    assert _deletes(pg_conn) == ["SEQ = ANY($1::BIGINT[])"]
    assert table_rows(pg_conn, "Q_QT") == []


def test_a_delete_the_server_refuses_is_raised_by_the_commit_and_rolls_back(pg_conn, pg_schema):
    """The DELETE runs inside the commit as before: its error is the commit's, the messages
    are back as the server's rollback leaves them (the attempt not counted), and the session
    goes on with its statements."""
    make_queue(pg_conn)
    _enq(pg_conn, n=3)
    pg_conn.commit()
    t = f'"{pg_schema}".{table_name(pg_conn.queue("Q")._info().table)}'
    with pg_admin() as admin:
        admin.execute(f'CREATE FUNCTION "{pg_schema}".refuse() RETURNS trigger LANGUAGE plpgsql '
                      "AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$")
        admin.execute(f'CREATE TRIGGER refuse BEFORE DELETE ON {t} FOR EACH ROW '
                      f'EXECUTE FUNCTION "{pg_schema}".refuse()')
    q = nowait(pg_conn.queue("Q"))
    assert [q.deqone().payload for _ in range(2)] == [b"m0", b"m1"]
    with pytest.raises(DatabaseError, match="refused"):
        pg_conn.commit()
    assert not pg_conn.context.session.in_transaction
    with pg_admin() as admin:
        admin.execute(f"DROP TRIGGER refuse ON {t}")
    # a failed commit is a rollback: the dequeue position goes back to where the
    # transaction began (NEXT_MSG finds the messages it gave back), as after rollback()
    got = [q.deqone() for _ in range(3)]
    assert [(m.payload, m.attempts) for m in got] == [(b"m0", 0), (b"m1", 0), (b"m2", 0)]
    pg_conn.commit()
    assert table_rows(pg_conn, "Q_QT") == []
    assert _deletes(pg_conn) == ["SEQ = ANY($1::BIGINT[])"]


def test_a_multi_consumer_commit_asks_for_records_out_of_retries_through_its_own_statement(pg_conn):
    """B ran out of retries on the message; A's commit finds it (the probe) and moves the
    message to the exception queue, as before."""
    make_queue(pg_conn, multiple_consumers=True, max_retries=0)
    for name in ("A", "B"):
        pg_conn.aqadm.add_subscriber(queue_name="Q", subscriber=sluice.Agent(name))
    _enq(pg_conn)
    pg_conn.commit()
    b = nowait(pg_conn.queue("Q"))
    b.deqoptions.consumername = "B"
    assert b.deqone().payload == b"m0"
    pg_conn.rollback()                      # B's one attempt: out of retries
    assert b.deqone() is None
    a = nowait(pg_conn.queue("Q"))
    a.deqoptions.consumername = "A"
    assert a.deqone().payload == b"m0"
    pg_conn.commit()
    assert any(s.startswith("SELECT MSGID, Q_NAME FROM") for s in _statements(pg_conn))   # the probe
    assert table_rows(pg_conn, "Q_QT", "QUEUE, MSG_STATE, EXPIRATION_REASON") == \
        [("AQ$_Q_QT_E", "EXPIRED", "MAX_RETRY_EXCEEDED")]


def test_a_transactional_groups_reads_run_as_the_sessions_own_statements(pg_conn, pg_dsn):
    """A grouped queue's single-message dequeue of a new group is one statement of the
    session's own (the first message, its group's advisory lock, its row lock:
    sqlops.first_of_a_group_query); an array dequeue tests candidates in Python, the group's
    advisory lock and the locking read of the ones taken (``lock_records``) its statements
    too; and a group stays one session's while it holds it."""
    make_queue(pg_conn, message_grouping=pg_conn.aqadm.TRANSACTIONAL)
    _enq(pg_conn, n=2)
    pg_conn.commit()
    other = sluice.connect(pg_dsn)
    try:
        _enq(other, n=1)
        other.commit()
        q = nowait(pg_conn.queue("Q"), navigation=sluice.DEQ_FIRST_MSG)
        mine = q.deqone()
        assert mine.payload == b"m0"
        texts = _statements(pg_conn)
        assert any(s.startswith("WITH RECURSIVE") and "pg_try_advisory_xact_lock" in s
                   and "FOR UPDATE SKIP LOCKED" in s for s in texts)
        o = nowait(other.queue("Q"), navigation=sluice.DEQ_FIRST_MSG)
        theirs = o.deqone()                     # not the group the session holds: the other
        assert theirs.payload == b"m0" and theirs.transaction_group != mine.transaction_group
        other.rollback()
        q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
        assert q.deqone().payload == b"m1"
        pg_conn.commit()
        q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        assert [m.payload for m in q.deqmany(5)] == [b"m0"]    # the other's group
        texts = _statements(pg_conn)
        assert any(s.startswith("SELECT pg_try_advisory_xact_lock") for s in texts)
        assert any(s.startswith("SELECT SEQ,") and "FOR UPDATE SKIP LOCKED" in s for s in texts)
        pg_conn.commit()
    finally:
        other.close()


CONDITIONS = [("SUBSTR(corrid, 2, 1) = '3'", ["C3x"]), ("MOD(priority, 2) = 1", ["C1x", "C3x"]),
              ("ROUND(priority / 3, 1) = 0.3", ["C1x"]), ("LPAD(corrid, 5, '*') = '**C1x'", ["C1x"]),
              ("priority + 1 = 3", ["C2x"]), ("priority IN (1, 3)", ["C1x", "C3x"]),
              ("SUBSTR(corrid, 1, 2) || 'z' = 'C2z'", ["C2x"]), ("LENGTH(corrid) = 3", ["C0x", "C1x", "C2x", "C3x"])]


def test_a_dequeue_condition_in_sql_runs_as_the_sessions_own_statement_with_psycopgs_types(pg_conn):
    """A condition's parameters go with the types psycopg's dumpers give them (the cursor's:
    int2 for a small int, numeric for a Decimal …) — the functions of the condition's SQL
    resolve as they did — in a statement of the session's own."""
    make_queue(pg_conn)
    q = pg_conn.queue("Q")
    for i in range(4):
        q.enqone(pg_conn.msgproperties(payload=b"p", priority=i, correlation=f"C{i}x"))
    pg_conn.commit()
    nowait(q, mode=sluice.DEQ_BROWSE)
    for condition, expected in CONDITIONS:
        q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
        q.deqoptions.condition = condition
        assert [m.correlation for m in q.deqmany(10)] == expected, condition
    texts = _statements(pg_conn)
    assert any("mod(CAST(" in s for s in texts) and any("lpad(" in s for s in texts)
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    q.deqoptions.condition = "priority IN (1, 3)"
    assert [q.deqone().correlation for _ in range(2)] == ["C1x", "C3x"]
    assert q.deqone() is None
    pg_conn.commit()
    assert [r[2] for r in table_rows(pg_conn, "Q_QT")] == ["C0x", "C2x"]
