"""What only the server backend has: its schema, its connections, NOTIFY, several
processes' time managers on one database (issue 4)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.store import postgres
from sluice.store.pgconn import parse_dsn
from sluice.store.postgres import PgStore
from tests.conftest import PG_BASE, make_queue, nowait, pg_admin, wait_until
from tests.sqlhelpers import raised_code


def _python(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=60, capture_output=True, text=True)


# -- connecting ----------------------------------------------------------------------

def test_unreachable_server_is_12541_at_once():
    t0 = time.monotonic()
    assert raised_code(lambda: sluice.connect("postgresql://postgres@127.0.0.1:1/test")) == "ORA-12541"
    assert time.monotonic() - t0 < 5


def test_unknown_database_and_user_have_oracle_codes():
    host = PG_BASE.rsplit("/", 1)[0]
    assert raised_code(lambda: sluice.connect(f"{host}/no_such_database_here")) == "ORA-12514"
    bad_user = host.replace("postgres@", "no_such_role@")
    assert raised_code(lambda: sluice.connect(f"{bad_user}/test")) == "ORA-01017"


def test_bad_schema_name_in_the_dsn():
    # a bad DSN, like every other: ORA-12154 (was an InterfaceError without a code)
    assert raised_code(lambda: sluice.connect(f"{PG_BASE}?schema=bad-name;drop")) == "ORA-12154"
    assert parse_dsn("postgresql://u:secret@h:5/db").schema == "sluice"
    assert "secret" not in parse_dsn("postgresql://u:secret@h:5/db").display


def test_dsn_parameters_with_spaces_reach_the_server(pg_dsn):
    """A DSN's libpq parameters are passed on percent-encoded, as libpq reads a URI: a
    space was written as '+', which libpq keeps: ``application_name`` had '+' for its
    spaces, a capture source's ``options=-c%20…`` failed (``unrecognized configuration
    parameter "+…"``)."""
    c = sluice.connect(f"{pg_dsn}&application_name=a%2Bb%20c")
    try:
        assert c.query("SELECT current_setting('application_name') FROM DUAL", None)[1] == [("a+b c",)]
    finally:
        c.close()


def test_a_select_s_arithmetic_errors_have_oracle_codes(pg_conn):
    """PostgreSQL's division by zero and integer overflow were ORA-01722 (invalid number)."""
    cur = pg_conn.cursor()
    assert raised_code(lambda: cur.execute("SELECT 1/0 FROM DUAL")) == "ORA-01476"
    assert raised_code(lambda: cur.execute("SELECT CAST(99999999999 AS INTEGER) FROM DUAL")) == "ORA-01426"
    assert raised_code(lambda: cur.execute("SELECT CAST('x' AS INTEGER) FROM DUAL")) == "ORA-01722"


def test_init_creates_the_schema_and_messages_are_plain_sql(pg_new_schema):
    pg_schema, pg_dsn = pg_new_schema, f"{PG_BASE}?schema={pg_new_schema}"
    with pg_admin() as admin:
        assert admin.execute("SELECT to_regnamespace(%s)", (pg_schema,)).fetchone()[0] is None
    r = CliRunner().invoke(main, ["--dsn", pg_dsn, "init"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    with sluice.connect(pg_dsn) as c:
        make_queue(c, retention_time=3600)
        q = c.queue("Q")
        q.enqone(c.msgproperties(payload=b"warehouse", correlation="W1"))
        c.commit()
        nowait(q).deqone()
        c.commit()
    with pg_admin() as admin:
        s = f'"{pg_schema}"'
        assert admin.execute(f'SELECT user_data, corrid, state FROM {s}."SLUICE.Q_QT"').fetchall() == [
            (b"warehouse", "W1", sluice.MSG_PROCESSED)]
        assert admin.execute(f'SELECT msg_state, deq_user_id FROM {s}."SLUICE.AQ$Q_QT"').fetchall() == [
            ("PROCESSED", "SLUICE")]
        assert ("Q",) in admin.execute(f"SELECT name FROM {s}.dba_queues").fetchall()


# -- catalog caches follow other processes without a query -------------------------------

def test_catalog_version_is_local_and_follows_other_processes(pg_conn, pg_dsn, monkeypatch):
    store = pg_conn.context.store
    before = store.catalog_version()
    with monkeypatch.context() as m:     # no round trip to the server
        m.setattr(store.pool, "run", lambda *a, **k: pytest.fail("catalog_version queried the server"))
        assert store.catalog_version() == before
    out = _python(f"""
import sluice
with sluice.connect({pg_dsn!r}) as c:
    c.aqadm.create_queue_table(queue_table="OTHER_QT", queue_payload_type="RAW")
    c.aqadm.create_queue(queue_name="OTHER", queue_table="OTHER_QT")
    c.aqadm.start_queue(queue_name="OTHER")
""")
    assert out.returncode == 0, out.stderr
    assert wait_until(lambda: store.catalog_version() != before)
    q = pg_conn.queue("OTHER")
    q.enqone(pg_conn.msgproperties(payload=b"x"))
    pg_conn.commit()


# -- the time manager of several processes ------------------------------------------------

def test_time_managers_of_two_processes_handle_each_message_once(pg_dsn):
    with sluice.connect(pg_dsn) as c:
        make_queue(c)
        q = c.queue("Q")
        q.enqmany([c.msgproperties(payload=str(i).encode(), expiration=1) for i in range(200)])
        c.commit()
    holder = sluice.connect(pg_dsn)        # a session holds one message: it is left alone
    held = nowait(holder.queue("Q")).deqone()
    stores = [PgStore(parse_dsn(pg_dsn)) for _ in range(2)]    # as two processes would
    try:
        holder.context.store._tm.stop()           # only the two stores under test run the monitor
        results = [None, None]
        later = time.time() + 2

        def run(i):
            results[i] = stores[i].run_time_manager(later)
        threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert results[0].expired + results[1].expired == 199
        counts = holder.query("SELECT queue, COUNT(*) FROM AQ$Q_QT GROUP BY queue ORDER BY queue", None)[1]
        assert counts == [("AQ$_Q_QT_E", 199), ("Q", 1)]
        holder.commit()
        assert held.payload is not None
    finally:
        for s in stores:
            s.close()
        holder.close()


# -- connections that the server drops ---------------------------------------------------

def _terminate(pid: int) -> None:
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


def test_pool_work_survives_every_idle_connection_dying(pg_conn):
    """After a server restart every idle connection of the pool is dead, not only the first
    one handed out: the pool's retry must get a live connection, not a second dead one
    (CI: ORA-03113 from the first connect after a PostgreSQL restart)."""
    pool = pg_conn.context.store.pool
    with pool._pool.connection() as a, pool._pool.connection() as b, pool._pool.connection() as c:
        pids = [x.execute("SELECT pg_backend_pid()").fetchone()[0] for x in (a, b, c)]
    for pid in pids:                                  # all three back in the pool, idle
        _terminate(pid)
    assert pool.run(lambda conn: conn.execute("SELECT 42").fetchone()[0], transaction=False) == 42
    assert pool.run(lambda conn: conn.execute("SELECT 43").fetchone()[0]) == 43


def test_listener_reconnects_and_waiters_still_wake(pg_conn, pg_dsn, monkeypatch):
    """A waiter blocked after the listener's backend was terminated is woken by another
    process's commit, through the listener's new connection. Each step waits for its event
    (bounded), not for a guessed time: under load (15-25 on 2 cores) the producer's interpreter
    took longer to start than the waiter's 10-s wait, which then timed out with nothing (20 of
    20 runs beside two busy loops). The waiters' periodic re-check is pushed out of the way,
    so only the notification can wake the waiter in time."""
    monkeypatch.setattr(postgres, "RELEASE_RECHECK", 120.0)
    make_queue(pg_conn)
    store = pg_conn.context.store
    listener = store.listener
    old_pid = listener._conn.info.backend_pid
    _terminate(old_pid)
    assert wait_until(lambda: listener._conn is not None and listener.connected.is_set()
                      and listener._conn.info.backend_pid != old_pid, timeout=60)
    producer = _producer(pg_dsn)          # started (interpreter, import, connect) before the wait
    try:
        assert _line(producer) == "ready\n", _output(producer)
        q = pg_conn.queue("Q")
        q.deqoptions.wait = 120
        got = {}
        t = threading.Thread(target=lambda: got.update(m=q.deqone(), at=time.monotonic()))
        t.start()
        channel = store.target.table_channel(q._info().table.qt_id)
        # the waiter is blocked, and the new connection listens to the queue table's channel
        assert wait_until(lambda: store._waiting and channel in listener._channels
                          and not listener._pending, timeout=60)
        producer.stdin.write("go\n")
        producer.stdin.flush()
        assert _line(producer) == "committed\n", _output(producer)
        committed = time.monotonic()
        t.join(60)
        assert got["m"].payload == b"after reconnect"
        assert got["at"] - committed < 30      # woken by NOTIFY: the re-check is 120 s away
    finally:
        producer.kill()
        producer.wait()


def _line(proc: subprocess.Popen, timeout: float = 120) -> str:
    """The next line ``proc`` prints ("" when it printed none within ``timeout`` seconds)."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline() if ready else ""


def _output(proc: subprocess.Popen) -> str:
    """What ``proc`` wrote to stderr (ended first: a message of a failed assertion)."""
    proc.kill()
    return proc.communicate(timeout=60)[1]


def _producer(dsn: str) -> subprocess.Popen:
    """Another process that connects, says ``ready``, and on a line of its stdin enqueues one
    message to Q, commits and says ``committed``."""
    code = f"""
import sys
import sluice
with sluice.connect({dsn!r}) as c:
    q = c.queue("Q")
    print("ready", flush=True)
    sys.stdin.readline()
    q.enqone(c.msgproperties(payload=b"after reconnect"))
    c.commit()
    print("committed", flush=True)
"""
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(__file__), "..", "..", "src")
    env["PYTHONPATH"] = os.path.abspath(src) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_lost_session_connection_is_03113_then_the_session_reconnects(pg_conn):
    make_queue(pg_conn)
    q = nowait(pg_conn.queue("Q"), navigation=sluice.DEQ_FIRST_MSG)
    q.enqone(pg_conn.msgproperties(payload=b"m"))
    pg_conn.commit()
    assert q.deqone().payload == b"m"                 # held in the open transaction
    _terminate(pg_conn.context.session._raw.info.backend_pid)
    assert raised_code(pg_conn.commit) == "ORA-03113"
    pg_conn.rollback()                                 # nothing left to undo
    m = q.deqone()                                     # a new connection
    assert m.payload == b"m" and m.attempts == 0       # the lost attempt is not counted
    pg_conn.commit()


def test_ddl_waiting_on_an_open_transaction_gives_up_with_00054(pg_conn, pg_dsn, monkeypatch):
    monkeypatch.setattr(postgres, "DDL_LOCK_TIMEOUT", "300ms")
    make_queue(pg_conn)
    pg_conn.queue("Q").enqone(pg_conn.msgproperties(payload=b"m"))
    pg_conn.commit()
    with sluice.connect(pg_dsn) as other:
        assert nowait(other.queue("Q")).deqone() is not None     # holds the table in its transaction
        pg_conn.aqadm.stop_queue(queue_name="Q")
        assert raised_code(lambda: pg_conn.aqadm.drop_queue_table(queue_table="Q_QT", force=True)) == "ORA-00054"
        other.rollback()
    pg_conn.aqadm.drop_queue_table(queue_table="Q_QT", force=True)
