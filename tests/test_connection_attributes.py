"""python-oracledb's Connection members that scripts and pool code touch: ping() (a round
trip), is_healthy() (none), version, thin, current_schema, stmtcachesize, the write-only
session attributes (module, action …), ltxid, edition, begin() and the tpc_* methods, on
both backends; a closed connection answers DPY-1001 as python-oracledb's does."""

import pytest

import sluice
from tests.conftest import make_queue, pg_admin
from tests.sqlhelpers import raised_code

WRITE_ONLY = ["module", "action", "client_identifier", "clientinfo", "dbop", "econtext_id"]


def test_ping_and_is_healthy(conn):
    assert conn.ping() is None
    assert conn.is_healthy() is True
    conn.close()
    assert conn.is_healthy() is False
    assert raised_code(conn.ping) == "DPY-1001"


def test_ping_is_a_round_trip(conn, monkeypatch):
    calls = []
    real = type(conn.context.session).query
    monkeypatch.setattr(type(conn.context.session), "query",
                        lambda self, *a, **k: calls.append(a[0]) or real(self, *a, **k))
    conn.ping()
    conn.is_healthy()
    assert len(calls) == 1


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)
def test_ping_sees_a_lost_postgresql_connection(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"x"))      # a transaction open on the server
    pid = conn.context.session.sid
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    assert raised_code(conn.ping) == "ORA-03113"
    assert conn.transaction_in_progress is False     # the transaction went with the connection
    conn.ping()                                      # the next call has a new connection
    assert conn.is_healthy() is True


def test_version_thin_and_names(conn):
    assert conn.version == "23.0.0.0.0"
    assert tuple(int(p) for p in conn.version.split(".")) >= (21,)   # JSON queues' release
    assert conn.thin is True
    assert conn.current_schema == conn.username == "SLUICE"
    assert conn.edition is None and conn.ltxid == b""
    assert conn.max_open_cursors == 300 and conn.max_identifier_length == 128


def test_current_schema_can_be_set_to_the_user_only(conn):
    conn.current_schema = "sluice"
    assert conn.current_schema == "SLUICE"
    with pytest.raises(sluice.NotSupportedError) as e:
        conn.current_schema = "SCOTT"
    assert e.value.full_code == "DPY-3001"
    assert conn.current_schema == "SLUICE"


def test_stmtcachesize(conn):
    assert conn.stmtcachesize == 20
    conn.stmtcachesize = 50
    assert conn.stmtcachesize == 50
    with pytest.raises(TypeError):
        conn.stmtcachesize = "5"
    with pytest.raises(OverflowError):
        conn.stmtcachesize = -1
    assert conn.stmtcachesize == 50


@pytest.mark.parametrize("name", WRITE_ONLY)
def test_write_only_attributes(conn, name):
    setattr(conn, name, "batch-7")
    setattr(conn, name, None)
    with pytest.raises(AttributeError, match=f"{name} is not readable"):
        getattr(conn, name)
    with pytest.raises(TypeError):
        setattr(conn, name, 5)
    conn.close()
    assert raised_code(lambda: setattr(conn, name, "x")) == "DPY-1001"


def test_internal_and_external_names(conn):
    assert conn.internal_name is None and conn.external_name is None
    conn.internal_name, conn.external_name = "in", "out"
    assert (conn.internal_name, conn.external_name) == ("in", "out")


def test_transactions_begin_and_tpc(conn):
    make_queue(conn)
    conn.begin()                                   # a local transaction: nothing to do
    assert conn.transaction_in_progress is False
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    assert conn.transaction_in_progress is True
    conn.commit()
    assert conn.transaction_in_progress is False
    assert raised_code(lambda: conn.begin(1, "txn", "branch")) == "DPY-3001"
    for name in ("xid", "tpc_begin", "tpc_commit", "tpc_prepare", "tpc_rollback", "tpc_recover"):
        assert raised_code(getattr(conn, name)) == "DPY-3001"


@pytest.mark.parametrize("name", ["version", "thin", "current_schema", "stmtcachesize", "ltxid",
                                  "edition", "internal_name", "max_open_cursors"])
def test_a_closed_connection_has_no_attributes(conn, name):
    conn.close()
    assert raised_code(lambda: getattr(conn, name)) == "DPY-1001"


def test_a_pooled_connection_has_them_too(dsn):
    with sluice.create_pool(dsn, min=1, max=1) as pool:
        c = pool.acquire()
        c.ping()
        c.module = "pooled"
        c.stmtcachesize = 7
        assert (c.version, c.thin, c.is_healthy(), c.stmtcachesize) == ("23.0.0.0.0", True, True, 7)
        pool.release(c)
        assert c.is_healthy() is False
        assert raised_code(c.ping) == "DPY-1001"


def test_an_async_connection_has_them_too(dsn):
    import asyncio

    async def main():
        connection = await sluice.connect_async(dsn)
        await connection.ping()
        connection.module, connection.stmtcachesize = "async", 9
        assert (connection.version, connection.thin, connection.stmtcachesize) == ("23.0.0.0.0", True, 9)
        assert connection.is_healthy() is True
        with pytest.raises(AttributeError):
            connection.module
        await connection.close()
        assert connection.is_healthy() is False
        with pytest.raises(sluice.InterfaceError):
            await connection.ping()
    asyncio.run(main())


def test_call_timeout_ends_a_wait_for_messages(conn):
    import time
    make_queue(conn)
    assert conn.call_timeout == 0
    conn.call_timeout = 300
    assert conn.call_timeout == conn.callTimeout == 300
    q = conn.queue("Q")
    q.deqoptions.wait = 30
    start = time.monotonic()
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert e.value.full_code == "DPY-4024" and str(e.value) == "DPY-4024: call timeout of 300 ms exceeded"
    assert 0.25 < time.monotonic() - start < 5
    q.enqone(conn.msgproperties(payload=b"after"))   # the connection goes on
    conn.commit()
    assert q.deqone().payload == b"after"            # a wait that finds a message is not cut
    with pytest.raises(OverflowError):
        conn.call_timeout = -1
    conn.call_timeout = 0
    q.deqoptions.wait = 1
    start = time.monotonic()
    assert q.deqone() is None and time.monotonic() - start >= 0.9
