"""Statement-level atomicity of anonymous blocks (``cursor.execute("BEGIN …; END;")``,
``callproc``, EXEC): a block that ends with an unhandled exception is rolled back to an
implicit savepoint taken at its start — its enqueues gone, its dequeues given back with no
attempt counted — while the transaction's earlier work stays and the transaction stays
open (Oracle Concepts, "Statement-Level Rollback"; an anonymous block is one statement).
A handled exception undoes nothing; a DDL-like call's implicit commit keeps what came
before it.  Plain DML typed at a cursor is atomic the same way.  Both backends."""

import pytest

import sluice
from tests.conftest import make_queue, nowait
from tests.sqlhelpers import create_table, raised_code

FAIL = "RAISE_APPLICATION_ERROR(-20001, 'boom');"


def _enqueue(payload):
    return f"""DBMS_AQ.ENQUEUE(queue_name => 'Q', enqueue_options => eo, message_properties => mp,
                    payload => UTL_RAW.CAST_TO_RAW('{payload}'), msgid => mid);"""


def _block(*stmts, handler=None):
    body = "\n  ".join(stmts)
    exc = f"\nEXCEPTION WHEN OTHERS THEN {handler}" if handler else ""
    return f"""DECLARE
  eo DBMS_AQ.ENQUEUE_OPTIONS_T;
  mp DBMS_AQ.MESSAGE_PROPERTIES_T;
  dq DBMS_AQ.DEQUEUE_OPTIONS_T;
  mid RAW(16);
  pl RAW(100);
BEGIN
  dq.wait := DBMS_AQ.NO_WAIT;
  {body}{exc}
END;"""


def _queued(conn, name="Q"):
    """The payloads in the queue, seen by a fresh session."""
    other = sluice.connect(conn.dsn)
    try:
        q = nowait(other.queue(name), navigation=sluice.DEQ_FIRST_MSG)
        q.deqoptions.mode = sluice.DEQ_BROWSE
        return [m.payload for m in q.deqmany(100)]
    finally:
        other.close()


def test_a_failed_block_leaves_nothing_but_the_earlier_work_stays(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"before"))     # same transaction
    cur = conn.cursor()
    assert raised_code(lambda: cur.execute(_block(_enqueue("in1"), _enqueue("in2"), FAIL))) == "ORA-20001"
    assert conn.transaction_in_progress                   # the earlier work's transaction
    conn.commit()
    assert _queued(conn) == [b"before"]


def test_a_failed_block_that_began_the_transaction_ends_it(conn):
    make_queue(conn)
    cur = conn.cursor()
    assert raised_code(lambda: cur.execute(_block(_enqueue("in"), "pl := 1 / 0;"))) == "ORA-01476"
    assert not conn.transaction_in_progress
    conn.commit()
    assert _queued(conn) == []
    cur.execute(_block(_enqueue("after")))                # the session goes on as usual
    conn.commit()
    assert _queued(conn) == [b"after"]


def test_a_successful_block_keeps_its_work(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"before"))
    cur = conn.cursor()
    for i in range(3):            # (each block's savepoint is released: none pile up)
        cur.execute(_block(_enqueue(f"in{i}")))
    conn.commit()
    assert _queued(conn) == [b"before", b"in0", b"in1", b"in2"]


def test_a_dequeue_in_a_failed_block_is_given_back(conn):
    make_queue(conn, max_retries=1)
    q = conn.queue("Q")
    for p in (b"m1", b"m2"):
        q.enqone(conn.msgproperties(payload=p))
    conn.commit()
    assert nowait(conn.queue("Q")).deqone().payload == b"m1"      # kept: before the block
    deq = """DBMS_AQ.DEQUEUE(queue_name => 'Q', dequeue_options => dq, message_properties => mp,
                    payload => pl, msgid => mid);"""
    cur = conn.cursor()
    assert raised_code(lambda: cur.execute(_block(deq, FAIL))) == "ORA-20001"
    assert conn.transaction_in_progress
    conn.commit()
    got = nowait(conn.queue("Q")).deqone()
    assert (got.payload, got.attempts) == (b"m2", 0)              # not consumed, no attempt
    conn.commit()
    assert _queued(conn) == []


def test_callproc_whose_out_value_cannot_be_given_back_undoes_the_call(conn):
    """The dequeue is done, then its payload does not fit the variable (ORA-00932): the
    call statement fails, and the message is back in the queue, no attempt counted."""
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"m1"))
    conn.commit()
    cur = conn.cursor()
    code = raised_code(lambda: cur.callproc("dbms_aq.dequeue", ["Q", None, None, cur.var(int), cur.var(bytes)]))
    assert code == "ORA-00932"
    assert not conn.transaction_in_progress
    got = nowait(conn.queue("Q")).deqone()
    assert (got.payload, got.attempts) == (b"m1", 0)
    conn.rollback()


def test_callproc_failure_keeps_the_earlier_work(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"before"))
    cur = conn.cursor()
    assert raised_code(lambda: cur.callproc("raise_application_error", [-20002, "no"])) == "ORA-20002"
    assert conn.transaction_in_progress
    conn.commit()
    assert _queued(conn) == [b"before"]


def test_a_handled_exception_undoes_nothing(conn):
    make_queue(conn)
    cur = conn.cursor()
    cur.execute(_block(_enqueue("a"), f"BEGIN {FAIL} EXCEPTION WHEN OTHERS THEN NULL; END;",
                       _enqueue("b")))
    cur.execute(_block(_enqueue("c"), FAIL, handler="DBMS_OUTPUT.PUT_LINE(SQLCODE);"))
    assert cur.output == ["-20001"]
    conn.commit()
    assert _queued(conn) == [b"a", b"b", b"c"]


def test_a_reraised_exception_undoes_the_block(conn):
    make_queue(conn)
    cur = conn.cursor()
    assert raised_code(lambda: cur.execute(_block(_enqueue("a"), FAIL, handler="RAISE;"))) == "ORA-20001"
    conn.commit()
    assert _queued(conn) == []


def test_a_ddl_like_call_commits_what_came_before_it(conn):
    """DBMS_AQADM commits the open transaction first (as DDL does): the work before it —
    the block's and the transaction's — is committed and stays; only the work after it
    is undone."""
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"before"))
    cur = conn.cursor()
    code = raised_code(lambda: cur.execute(_block(
        _enqueue("a"),
        "DBMS_AQADM.CREATE_QUEUE(queue_name => 'Q2', queue_table => 'Q_QT');",
        _enqueue("b"), FAIL)))
    assert code == "ORA-20001"
    assert not conn.transaction_in_progress
    conn.rollback()
    assert _queued(conn) == [b"before", b"a"]
    cur.execute("SELECT name FROM user_queues WHERE name = 'Q2'")
    assert cur.fetchall() == [("Q2",)]


def test_a_commit_inside_the_block_keeps_what_it_committed(conn):
    make_queue(conn)
    cur = conn.cursor()
    code = raised_code(lambda: cur.execute(_block(_enqueue("a"), "COMMIT;", _enqueue("b"), FAIL)))
    assert code == "ORA-20001"
    conn.commit()
    assert _queued(conn) == [b"a"]


def test_a_buffered_enqueue_is_no_part_of_the_transaction(conn):
    """Buffered messages have no transaction (IMMEDIATE visibility only): a failed block
    leaves them, as a rollback does; its persistent enqueue goes."""
    make_queue(conn)
    cur = conn.cursor()
    buffered = ("eo.visibility := DBMS_AQ.IMMEDIATE; eo.delivery_mode := DBMS_AQ.BUFFERED; "
                + _enqueue("buf") + " eo.visibility := DBMS_AQ.ON_COMMIT; "
                "eo.delivery_mode := DBMS_AQ.PERSISTENT;")
    assert raised_code(lambda: cur.execute(_block(buffered, _enqueue("pers"), FAIL))) == "ORA-20001"
    conn.commit()
    assert _queued(conn) == []                            # the persistent one went
    q = nowait(conn.queue("Q"))
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert q.deqone().payload == b"buf"


def test_an_immediate_enqueue_stays(conn):
    make_queue(conn)
    cur = conn.cursor()
    immediate = "eo.visibility := DBMS_AQ.IMMEDIATE; " + _enqueue("imm")
    assert raised_code(lambda: cur.execute(_block(immediate, FAIL))) == "ORA-20001"
    conn.rollback()
    assert _queued(conn) == [b"imm"]


def test_exec_and_executescript_are_atomic_too(conn):
    make_queue(conn)
    cur = conn.cursor()
    with pytest.raises(sluice.DatabaseError):
        cur.executescript(_block(_enqueue("s"), FAIL) + "\n/\n")
    with pytest.raises(sluice.DatabaseError):
        cur.executescript("EXEC RAISE_APPLICATION_ERROR(-20001, 'x')\n")
    conn.commit()
    assert _queued(conn) == []


def test_dml_in_a_failed_block_is_undone(conn, dsn):
    create_table(dsn, "CREATE TABLE t (n INTEGER)")
    cur = conn.cursor()
    cur.execute("INSERT INTO t (n) VALUES (1)")
    code = raised_code(lambda: cur.execute(
        "BEGIN EXECUTE IMMEDIATE 'INSERT INTO t (n) VALUES (2)'; " + FAIL + " END;"))
    assert code == "ORA-20001"
    conn.commit()
    cur.execute("SELECT n FROM t ORDER BY n")
    assert cur.fetchall() == [(1,)]


def test_a_failing_multi_row_update_changes_nothing(conn, dsn):
    """Plain DML at a cursor: the failing UPDATE (its second row breaks the CHECK) is undone
    whole, the INSERT before it stays, and the transaction goes on (PostgreSQL too)."""
    create_table(dsn, "CREATE TABLE t (n INTEGER CHECK (n < 3))")
    create_table(dsn, "INSERT INTO t (n) VALUES (1)")
    create_table(dsn, "INSERT INTO t (n) VALUES (2)")
    cur = conn.cursor()
    cur.execute("INSERT INTO t (n) VALUES (0)")
    with pytest.raises(sluice.DatabaseError):
        cur.execute("UPDATE t SET n = n + 1")
    assert conn.transaction_in_progress
    cur.execute("UPDATE t SET n = n - 1 WHERE n = 0")     # the transaction is usable
    conn.commit()
    cur.execute("SELECT n FROM t ORDER BY n")
    assert cur.fetchall() == [(-1,), (1,), (2,)]



def test_a_dynamic_block_that_fails_is_undone_alone(conn):
    """EXECUTE IMMEDIATE of a block is a statement of its own: its failure undoes its work
    only, and the outer block, handling the error, keeps its own."""
    make_queue(conn)
    inner = _block(_enqueue("inner"), FAIL).replace("'", "''")
    cur = conn.cursor()
    cur.execute(_block(_enqueue("outer"),
                       f"BEGIN EXECUTE IMMEDIATE '{inner}'; EXCEPTION WHEN OTHERS THEN NULL; END;",
                       _enqueue("outer2")))
    conn.commit()
    assert _queued(conn) == [b"outer", b"outer2"]


def _committed_rows(dsn):
    """The table's rows as a fresh session sees them (what was committed)."""
    other = sluice.connect(dsn)
    try:
        cur = other.cursor()
        cur.execute("SELECT n FROM t ORDER BY n")
        return cur.fetchall()
    finally:
        other.close()


def test_autocommit_commits_a_block_once_at_its_end(conn, dsn):
    """python-oracledb's autocommit commits after each execute(): a block is one statement,
    so its DML is committed when the block ends, not statement by statement inside it —
    a block that fails unhandled leaves nothing committed."""
    create_table(dsn, "CREATE TABLE t (n INTEGER)")
    conn.autocommit = True
    cur = conn.cursor()
    code = raised_code(lambda: cur.execute(
        "BEGIN INSERT INTO t (n) VALUES (1); EXECUTE IMMEDIATE 'INSERT INTO t (n) VALUES (2)'; "
        + FAIL + " END;"))
    assert code == "ORA-20001"
    assert _committed_rows(dsn) == []
    assert not conn.transaction_in_progress
    cur.execute("BEGIN INSERT INTO t (n) VALUES (3); INSERT INTO t (n) VALUES (4); END;")
    assert _committed_rows(dsn) == [(3,), (4,)]
    assert not conn.transaction_in_progress


def test_autocommit_commits_a_blocks_enqueue(conn):
    make_queue(conn)
    conn.autocommit = True
    conn.cursor().execute(_block(_enqueue("auto")))
    assert _queued(conn) == [b"auto"]
