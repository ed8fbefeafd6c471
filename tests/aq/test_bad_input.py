"""Bad input gets a clear error and changes nothing (issue 2, acceptance 5)."""

import pytest

import sluice
from tests.conftest import make_queue, nowait, table_rows


@pytest.fixture
def queue_with_one(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"existing"))
    conn.commit()
    return q


def _unchanged(conn):
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, RETRY_COUNT") == [("Q", "READY", 0)]


def _code(fn):
    with pytest.raises(sluice.Error) as e:
        fn()
    return e.value.full_code


def test_expiration_below_minus_one_is_25209(conn, queue_with_one):
    q = queue_with_one
    assert _code(lambda: q.enqmany([conn.msgproperties(payload=b"a"),
                                    conn.msgproperties(payload=b"b", expiration=-2)])) == "ORA-25209"
    conn.commit()
    _unchanged(conn)


def test_negative_delay_is_refused(conn, queue_with_one):
    assert _code(lambda: queue_with_one.enqone(conn.msgproperties(payload=b"a", delay=-1))) == "ORA-25208"
    conn.commit()
    _unchanged(conn)


def test_unknown_queue_is_24010(conn, queue_with_one):
    assert _code(lambda: conn.queue("NO_SUCH_QUEUE").enqone(conn.msgproperties(payload=b"a"))) \
        == "ORA-24010"
    assert _code(lambda: nowait(conn.queue("NO_SUCH_QUEUE")).deqone()) == "ORA-24010"
    conn.commit()
    _unchanged(conn)


def test_names_over_128_characters(conn, queue_with_one):
    long = "Q" * 129
    assert _code(lambda: conn.queue(long).enqone(conn.msgproperties(payload=b"a"))) == "ORA-00972"
    assert _code(lambda: conn.aqadm.create_queue_table(queue_table=long, queue_payload_type="RAW")) \
        == "ORA-00972"
    assert _code(lambda: conn.aqadm.create_queue(queue_name=long, queue_table="Q_QT")) == "ORA-00972"
    conn.commit()
    _unchanged(conn)
    assert conn.query("SELECT COUNT(*) FROM USER_QUEUE_TABLES", None)[1] == [(1,)]


def test_payload_of_wrong_type(conn, queue_with_one):
    assert _code(lambda: queue_with_one.enqone(conn.msgproperties(payload={"not": "raw"}))) == "ORA-25215"
    conn.commit()
    _unchanged(conn)


def test_wrong_python_types_in_properties(conn, queue_with_one):
    with pytest.raises(sluice.InterfaceError):
        conn.msgproperties(payload=b"x", priority="high")
    with pytest.raises(sluice.InterfaceError):
        queue_with_one.deqoptions.mode = 99
    with pytest.raises(sluice.InterfaceError):
        queue_with_one.enqone("not message properties")
    _unchanged(conn)


def test_bad_admin_values(conn, queue_with_one):
    assert _code(lambda: conn.aqadm.alter_queue(queue_name="Q", max_retries=-1)) == "ORA-24013"
    assert _code(lambda: conn.aqadm.alter_queue(queue_name="Q", retention_time=-5)) == "ORA-24014"
    assert _code(lambda: conn.aqadm.create_queue_table(queue_table="X", queue_payload_type="NO_SUCH_TYPE")) \
        == "ORA-04043"
    assert conn.query("SELECT MAX_RETRIES, RETENTION FROM USER_QUEUES WHERE NAME='Q'", None)[1] == [(5, "0")]
    _unchanged(conn)


def test_closed_connection(dsn):
    c = sluice.connect(dsn)
    c.close()
    with pytest.raises(sluice.InterfaceError):
        c.queue("Q")
