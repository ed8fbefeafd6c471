"""PostgreSQL's ON_COMMIT ``enqone`` after the first of a transaction into a queue table is
sent without waiting for its answer (store/pgpipeline.py); the session reads the answers
before any other use of its connection.  These tests pin down why that changes nothing an
application can see: the errors an INSERT could raise either cannot happen there or take
the synchronous path, and the ones that remain (the server or the connection failing)
are raised by the next call with the transaction rolled back."""

from __future__ import annotations

import psycopg
import pytest

import sluice
from sluice.connection import rollback_to_savepoint, savepoint
from sluice.store import pgpipeline
from sluice.store.sqlschema import table_name
from tests.conftest import make_queue, nowait, pg_admin, table_rows
from tests.test_block_atomicity import FAIL, _block as block, _enqueue as enqueue, _queued as _browse
from tests.sqlhelpers import raised_code


def _pending(conn) -> int:
    pipe = conn.context.session._pipe
    return 0 if pipe is None else pipe.pending


def _enq(conn, q="Q", n=1, **props):
    queue = conn.queue(q)
    for i in range(n):
        queue.enqone(conn.msgproperties(payload=b"m%d" % i, **props))


def _count(conn, table="Q_QT") -> int:
    return len(table_rows(conn, table))


def test_the_first_enqueue_of_a_transaction_into_a_table_is_answered_the_next_ones_are_sent(pg_conn):
    make_queue(pg_conn)
    _enq(pg_conn)
    assert _pending(pg_conn) == 0          # answered: the table's lock is held from here on
    _enq(pg_conn, n=3)
    assert _pending(pg_conn) == 3
    pg_conn.commit()
    assert _pending(pg_conn) == 0
    assert _count(pg_conn) == 4


@pytest.mark.parametrize("use", ["dequeue", "query", "savepoint", "browse"])
def test_any_other_use_of_the_session_reads_the_answers_first_and_sees_the_messages(pg_conn, use):
    make_queue(pg_conn)
    _enq(pg_conn, n=3)
    assert _pending(pg_conn) == 2
    if use == "dequeue":
        assert nowait(pg_conn.queue("Q")).deqone().payload == b"m0"
    elif use == "query":
        assert _count(pg_conn) == 3
    elif use == "savepoint":
        savepoint(pg_conn)
    else:
        got = nowait(pg_conn.queue("Q"), mode=sluice.DEQ_BROWSE).deqmany(10)
        assert [m.payload for m in got] == [b"m0", b"m1", b"m2"]
    assert _pending(pg_conn) == 0


def test_a_queue_table_has_no_unique_key_an_enqueue_could_violate(pg_conn):
    """MSGID is not unique (multi-consumer tables hold a record per consumer) and SEQ is an
    identity: no INSERT of a message can fail a unique check — even two records with one
    message id go in."""
    make_queue(pg_conn, "S")
    make_queue(pg_conn, "M", multiple_consumers=True)
    schema = pg_conn.context.store.target.schema
    with pg_admin() as admin:
        for q in ("S", "M"):
            t = table_name(pg_conn.queue(q)._info().table)
            unique = admin.execute(
                "SELECT a.attname, a.attidentity FROM pg_index i "
                "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) "
                "WHERE i.indrelid = %s::regclass AND i.indisunique", (f'"{schema}".{t}',)).fetchall()
            assert unique == [("seq", "d")]
            for _ in range(2):
                admin.execute(f'INSERT INTO "{schema}".{t} (Q_NAME, MSGID, PRIORITY, STATE, ENQ_TIME) '
                              f"VALUES (%s, '\\x01', 0, 0, 0)", (q,))
    assert len(table_rows(pg_conn, "S_QT")) == 2


def test_a_table_written_in_the_transaction_cannot_be_dropped_or_altered_under_it(pg_conn):
    make_queue(pg_conn)
    _enq(pg_conn, n=3)
    assert _pending(pg_conn) == 2
    t = table_name(pg_conn.queue("Q")._info().table)
    schema = pg_conn.context.store.target.schema
    with pg_admin() as admin:
        admin.execute("SET lock_timeout = '200ms'")
        for ddl in (f"DROP TABLE \"{schema}\".{t}", f"ALTER TABLE \"{schema}\".{t} ADD CHECK (PRIORITY < 0)",
                    f"TRUNCATE \"{schema}\".{t}"):
            with pytest.raises(psycopg.errors.LockNotAvailable):
                admin.execute(ddl)
    pg_conn.commit()
    assert _count(pg_conn) == 3


def test_a_savepoint_rollback_forgets_the_tables_written_since(pg_conn):
    """A rollback to a savepoint releases the locks taken since it: the next enqueue into
    a table first written after the savepoint is answered again."""
    make_queue(pg_conn)
    make_queue(pg_conn, "R")
    _enq(pg_conn, n=2)
    mark = savepoint(pg_conn)
    _enq(pg_conn, "R", n=2)
    _enq(pg_conn, n=2)
    assert _pending(pg_conn) == 3
    rollback_to_savepoint(pg_conn, mark)
    _enq(pg_conn, "R")
    assert _pending(pg_conn) == 0          # R's lock went with the savepoint: answered
    _enq(pg_conn, n=1)
    assert _pending(pg_conn) == 1          # Q's was taken before it
    pg_conn.commit()
    assert (_count(pg_conn), _count(pg_conn, "R_QT")) == (3, 1)


def test_text_with_nul_takes_the_synchronous_path_and_its_error_is_that_enqueues(pg_conn):
    make_queue(pg_conn)
    _enq(pg_conn)
    with pytest.raises(sluice.DatabaseError) as e:
        _enq(pg_conn, correlation="a\x00b")
    assert e.value.full_code == "ORA-06502"
    pg_conn.rollback()
    assert _count(pg_conn) == 0


def _broken_statements(monkeypatch):
    """Pipelined INSERTs that fail on the server (a table that does not exist)."""
    numbered = pgpipeline.numbered
    monkeypatch.setattr(pgpipeline, "numbered",
                        lambda sql, n: numbered(sql.replace('INSERT INTO "', 'INSERT INTO "no_such_'), n))


@pytest.mark.parametrize("next_call", ["commit", "deqone", "enqmany"])
def test_an_error_of_a_pipelined_enqueue_is_raised_by_the_next_call_and_nothing_stays(pg_conn, monkeypatch,
                                                                                     next_call):
    make_queue(pg_conn)
    _enq(pg_conn)
    _broken_statements(monkeypatch)
    _enq(pg_conn, n=2)
    assert _pending(pg_conn) == 2
    q = nowait(pg_conn.queue("Q"))
    with pytest.raises(sluice.DatabaseError) as e:
        if next_call == "commit":
            pg_conn.commit()
        elif next_call == "deqone":
            q.deqone()
        else:
            q.enqmany([pg_conn.msgproperties(payload=b"x"), pg_conn.msgproperties(payload=b"y")])
    assert e.value.full_code == "ORA-00942"
    assert not pg_conn.transaction_in_progress      # rolled back, the first enqueue too
    monkeypatch.undo()
    pg_conn.commit()
    assert _count(pg_conn) == 0
    _enq(pg_conn, n=3)                              # the session goes on
    pg_conn.commit()
    assert [m.payload for m in q.deqmany(10)] == [b"m0", b"m1", b"m2"]


@pytest.mark.parametrize("began", [False, True])
def test_an_error_of_the_first_enqueue_into_a_table_is_raised_by_that_enqueue(pg_conn, monkeypatch, began):
    """The first row of a transaction into a table is sent with the BEGIN (when the
    transaction is not open yet) and answered before the enqueue returns."""
    make_queue(pg_conn)
    make_queue(pg_conn, "R")
    if began:
        _enq(pg_conn, "R")
    _broken_statements(monkeypatch)
    with pytest.raises(sluice.DatabaseError) as e:
        _enq(pg_conn)
    assert e.value.full_code == "ORA-00942"
    assert not pg_conn.transaction_in_progress
    monkeypatch.undo()
    assert (_count(pg_conn), _count(pg_conn, "R_QT")) == (0, 0)
    _enq(pg_conn, n=2)
    pg_conn.commit()
    assert _count(pg_conn) == 2


def test_rollback_drops_a_failed_pipeline_without_raising(pg_conn, monkeypatch):
    make_queue(pg_conn)
    _enq(pg_conn)
    _broken_statements(monkeypatch)
    _enq(pg_conn, n=2)
    pg_conn.rollback()
    monkeypatch.undo()
    assert _count(pg_conn) == 0
    _enq(pg_conn, n=2)
    pg_conn.commit()
    assert _count(pg_conn) == 2


def test_a_connection_lost_with_enqueues_on_their_way_fails_the_commit_with_ora_03113(pg_conn):
    make_queue(pg_conn)
    _enq(pg_conn, n=3)
    assert _pending(pg_conn) == 2
    pid = pg_conn.context.session._raw.info.backend_pid
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    with pytest.raises(sluice.DatabaseError) as e:
        pg_conn.commit()
    assert e.value.full_code == "ORA-03113"
    assert _count(pg_conn) == 0                     # a new connection: nothing was committed
    _enq(pg_conn, n=2)
    pg_conn.commit()
    assert _count(pg_conn) == 2


def test_a_long_transaction_reads_the_answers_every_max_pending(pg_conn, monkeypatch):
    monkeypatch.setattr(pgpipeline, "MAX_PENDING", 3)
    make_queue(pg_conn)
    _enq(pg_conn, n=8)                              # 1 answered, then 3 + 3 read, 1 left
    assert _pending(pg_conn) == 1
    pg_conn.rollback()
    assert _count(pg_conn) == 0
    _enq(pg_conn, n=8)
    pg_conn.commit()
    assert [m.payload for m in nowait(pg_conn.queue("Q")).deqmany(20)] == [b"m%d" % i for i in range(8)]


def test_queues_and_properties_changing_within_one_pipeline(pg_conn):
    """Each change of statement (another queue, another table, other optional columns)
    prepares the next one in the same pipeline."""
    make_queue(pg_conn, "A", table="T1")
    pg_conn.aqadm.create_queue(queue_name="B", queue_table="T1")
    pg_conn.aqadm.start_queue("B")
    make_queue(pg_conn, "C", table="T2")
    qs = {n: pg_conn.queue(n) for n in "ABC"}
    for n in "ABC":
        qs[n].enqone(pg_conn.msgproperties(payload=b"first"))
    sent = []
    for i in range(12):
        n = "ABC"[i % 3]
        props = dict(payload=b"%d" % i)
        if i % 2:
            props.update(correlation=f"c{i}", delay=0, expiration=60 + i)
        qs[n].enqone(pg_conn.msgproperties(**props))
        sent.append((n, props))
    assert _pending(pg_conn) == 12
    pg_conn.commit()
    for n in "ABC":
        got = nowait(qs[n]).deqmany(20)
        want = [b"first"] + [p["payload"] for m, p in sent if m == n]
        assert [m.payload for m in got] == want
        assert [m.correlation for m in got][1:] == [p.get("correlation") for m, p in sent if m == n]
        assert [m.expiration for m in got][1:] == [p.get("expiration", -1) for m, p in sent if m == n]


def test_psycopg_dropping_its_prepared_statements_in_between_changes_nothing(pg_conn):
    """psycopg sends DEALLOCATE ALL after a ROLLBACK TO SAVEPOINT (a failed query in the
    transaction rolls back to one): the pipeline prepares its statement per pipeline."""
    make_queue(pg_conn)
    _enq(pg_conn, n=3)
    cur = pg_conn.cursor()
    for _ in range(7):                     # prepared by psycopg from the fifth on
        cur.execute("SELECT 1 FROM dual").fetchall()
    with pytest.raises(sluice.DatabaseError):
        cur.execute("SELECT no_such_column FROM dual")
    _enq(pg_conn, n=3)
    assert _pending(pg_conn) == 3
    pg_conn.commit()
    assert _count(pg_conn) == 6


def test_values_the_pipeline_does_not_send_take_the_synchronous_path():
    types = ("BYTEA", "BIGINT", "DOUBLE PRECISION", "TEXT")
    assert pgpipeline.encoded(types, (b"x", 1, 2, "é")) == [b"x", (1).to_bytes(8, "big"),
                                                            b"@\x00\x00\x00\x00\x00\x00\x00", "é".encode()]
    assert pgpipeline.encoded(types, (None, None, None, None)) == [None] * 4
    for row in ((b"x", 1, 2.0, "a\x00"), (b"x", 1, 2.0, "\ud800"), (b"x", 2**63, 2.0, "t"),
                (b"x", True, 2.0, "t"), (bytearray(b"x"), 1, 2.0, "t"), (b"x", 1, "2", "t")):
        assert pgpipeline.encoded(types, row) is None, row
    assert pgpipeline.numbered("INSERT INTO t VALUES ('a', ?, ?)", 2) == b"INSERT INTO t VALUES ('a', $1, $2)"
    assert pgpipeline.numbered("INSERT INTO t VALUES ('?', ?, ?)", 2) is None


# -- a multi-consumer queue's enqone: a row per subscriber, sent the same way ------------

def _two_subscribers(conn, name="T", **qt):
    make_queue(conn, name, multiple_consumers=True, **qt)
    for s in ("A", "B"):
        conn.aqadm.add_subscriber(queue_name=name, subscriber=sluice.Agent(s))


def _records(conn, table="T_QT"):
    return sorted(table_rows(conn, table, "CONSUMER_NAME, USER_DATA"))


def test_a_multi_consumer_enqone_sends_its_row_per_subscriber_the_first_answered(pg_conn):
    _two_subscribers(pg_conn)
    _enq(pg_conn, "T")
    assert _pending(pg_conn) == 0          # the table's first rows: answered
    _enq(pg_conn, "T", n=2)
    assert _pending(pg_conn) == 4          # two messages, a row per subscriber each
    pg_conn.commit()
    assert _records(pg_conn) == sorted((c, p) for c in "AB" for p in (b"m0", b"m0", b"m1"))


def test_an_error_of_the_first_multi_consumer_enqone_into_a_table_is_raised_by_it(pg_conn, monkeypatch):
    _two_subscribers(pg_conn)
    _broken_statements(monkeypatch)
    with pytest.raises(sluice.DatabaseError) as e:
        _enq(pg_conn, "T")
    assert e.value.full_code == "ORA-00942"
    assert not pg_conn.transaction_in_progress
    monkeypatch.undo()
    assert _records(pg_conn) == []


def test_an_error_of_a_later_multi_consumer_enqone_is_raised_by_the_next_call(pg_conn, monkeypatch):
    _two_subscribers(pg_conn)
    _enq(pg_conn, "T")
    _broken_statements(monkeypatch)
    _enq(pg_conn, "T")
    assert _pending(pg_conn) == 2
    with pytest.raises(sluice.DatabaseError) as e:
        pg_conn.commit()
    assert e.value.full_code == "ORA-00942"
    monkeypatch.undo()
    assert _records(pg_conn) == []         # the first message went with it


def test_a_value_one_record_cannot_send_keeps_the_whole_message_synchronous(pg_conn, monkeypatch):
    """Every row of the message is checked before any is sent: none goes ahead alone."""
    _two_subscribers(pg_conn)
    _enq(pg_conn, "T")
    encoded = pgpipeline.encoded
    monkeypatch.setattr(pgpipeline, "encoded",
                        lambda types, row: None if "B" in row else encoded(types, row))
    _enq(pg_conn, "T")
    assert _pending(pg_conn) == 0
    pg_conn.commit()
    assert _records(pg_conn) == sorted((c, b"m0") for c in "AABB")


def test_more_recipients_than_pipelined_rows_go_by_copy(pg_conn, monkeypatch):
    from sluice.store import pgsession
    monkeypatch.setattr(pgsession, "PIPELINED_RECIPIENTS", 2)
    _two_subscribers(pg_conn)
    q = pg_conn.queue("T")
    q.enqone(pg_conn.msgproperties(payload=b"x"))
    q.enqone(pg_conn.msgproperties(payload=b"y", recipients=[sluice.Agent(n) for n in "CDE"]))
    assert _pending(pg_conn) == 0
    q.enqone(pg_conn.msgproperties(payload=b"z"))
    assert _pending(pg_conn) == 2
    pg_conn.commit()
    assert len(_records(pg_conn)) == 7


def test_a_registered_multi_consumer_queue_enqueues_synchronously(pg_conn):
    """A message owing a registration its notification row takes the synchronous path
    (sqlnotify writes that row with it)."""
    _two_subscribers(pg_conn)
    pg_conn.subscribe(name="T:A", callback=lambda m: None)
    _enq(pg_conn, "T", n=3)
    assert _pending(pg_conn) == 0
    pg_conn.commit()
    assert len(_records(pg_conn)) == 6


def test_on_postgresql_a_blocks_savepoint_goes_with_the_pipelined_enqueues(pg_conn):
    """The implicit savepoint (and the RELEASE of the last one) rides the enqueues sent
    without waiting: a block costs no round trip more; rolling back to it still works."""
    make_queue(pg_conn)
    q = pg_conn.queue("Q")
    for p in (b"m0", b"m1", b"m2"):
        q.enqone(pg_conn.msgproperties(payload=p))
    pipe = pg_conn.context.session._pipe
    assert pipe.sending and pipe.pending == 2
    cur = pg_conn.cursor()
    cur.execute(block(enqueue("ok")))
    assert pipe.sending and pipe.pending > 3            # nothing was read back
    assert raised_code(lambda: cur.execute(block(enqueue("gone1"), enqueue("gone2"), FAIL))) == "ORA-20001"
    cur.execute(block(enqueue("after")))
    pg_conn.commit()
    assert _browse(pg_conn) == [b"m0", b"m1", b"m2", b"ok", b"after"]
