"""Bad input gets a clear error and changes nothing (issue 2, acceptance 5)."""

import math

import pytest

import sluice
from tests.conftest import make_queue, nowait, table_rows
from tests.sqlhelpers import raised_code


@pytest.fixture
def queue_with_one(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqone(conn.msgproperties(payload=b"existing"))
    conn.commit()
    return q


def _unchanged(conn):
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, RETRY_COUNT") == [("Q", "READY", 0)]


def test_expiration_below_minus_one_is_25209(conn, queue_with_one):
    q = queue_with_one
    assert raised_code(lambda: q.enqmany([conn.msgproperties(payload=b"a"),
                                          conn.msgproperties(payload=b"b", expiration=-2)])) == "ORA-25209"
    conn.commit()
    _unchanged(conn)


def test_negative_delay_is_refused(conn, queue_with_one):
    assert raised_code(lambda: queue_with_one.enqone(conn.msgproperties(payload=b"a", delay=-1))) == "ORA-25208"
    conn.commit()
    _unchanged(conn)


def test_unknown_queue_is_24010(conn, queue_with_one):
    assert raised_code(lambda: conn.queue("NO_SUCH_QUEUE").enqone(conn.msgproperties(payload=b"a"))) \
        == "ORA-24010"
    assert raised_code(lambda: nowait(conn.queue("NO_SUCH_QUEUE")).deqone()) == "ORA-24010"
    conn.commit()
    _unchanged(conn)


def test_names_over_128_characters(conn, queue_with_one):
    long = "Q" * 129
    assert raised_code(lambda: conn.queue(long).enqone(conn.msgproperties(payload=b"a"))) == "ORA-00972"
    assert raised_code(lambda: conn.aqadm.create_queue_table(queue_table=long, queue_payload_type="RAW")) \
        == "ORA-00972"
    assert raised_code(lambda: conn.aqadm.create_queue(queue_name=long, queue_table="Q_QT")) == "ORA-00972"
    conn.commit()
    _unchanged(conn)
    assert conn.query("SELECT COUNT(*) FROM USER_QUEUE_TABLES", None)[1] == [(1,)]


def test_payload_of_wrong_type(conn, queue_with_one):
    # python-oracledb refuses it before sending (DPY-2062); DBMS_AQ.ENQUEUE would say ORA-25215
    assert raised_code(lambda: queue_with_one.enqone(conn.msgproperties(payload={"not": "raw"}))) == "DPY-2062"
    conn.commit()
    _unchanged(conn)


def test_wrong_python_types_in_properties(conn, queue_with_one):
    with pytest.raises(sluice.InterfaceError):
        conn.msgproperties(payload=b"x", priority="high")
    with pytest.raises(sluice.InterfaceError):
        queue_with_one.deqoptions.mode = 99
    with pytest.raises(TypeError) as e:     # as in python-oracledb; and a sluice.Error
        queue_with_one.enqone("not message properties")
    assert isinstance(e.value, sluice.Error)
    _unchanged(conn)


def _plsql_enqueue(set_property: str) -> str:
    """A PL/SQL block enqueuing to Q with one message property set by ``set_property``."""
    return f"""DECLARE
      eo DBMS_AQ.ENQUEUE_OPTIONS_T; mp DBMS_AQ.MESSAGE_PROPERTIES_T; h RAW(16);
    BEGIN
      {set_property}
      DBMS_AQ.ENQUEUE(queue_name => 'Q', enqueue_options => eo, message_properties => mp,
                      payload => HEXTORAW('01'), msgid => h);
    END;"""


@pytest.mark.parametrize("name,low,high", [("priority", -2**63, 2**63 - 1), ("delay", -2**31, 2**31 - 1),
                                           ("expiration", -2**31, 2**31 - 1)])
def test_properties_outside_their_range_overflow(conn, queue_with_one, name, low, high):
    """DELAY and EXPIRATION are BINARY_INTEGERs (python-oracledb: int32_t); PRIORITY is any
    integer (seed 004) the store's 64-bit column holds. Beyond them the value used to reach
    the store: SQLite refused 2**63 as ORA-00600, and a buffered message would only have
    failed when spilled."""
    for value in (high + 1, low - 1, 10**20):
        assert raised_code(lambda: conn.msgproperties(payload=b"a", **{name: value})) == "ORA-01426"
        m = conn.msgproperties(payload=b"a")
        assert raised_code(lambda: setattr(m, name, value)) == "ORA-01426"
        assert getattr(m, name) == {"priority": 0, "delay": 0, "expiration": -1}[name]
    with pytest.raises(sluice.Error, match=f"ORA-01426: numeric overflow: {name} {high + 1} is outside"):
        conn.msgproperties(payload=b"a", **{name: high + 1})
    q = queue_with_one
    q.enqoptions.deliverymode = sluice.MSG_BUFFERED
    assert raised_code(lambda: q.enqone(conn.msgproperties(payload=b"a", **{name: high + 1}))) == "ORA-01426"
    q.enqoptions.deliverymode = sluice.MSG_PERSISTENT
    assert raised_code(lambda: conn.cursor().execute(_plsql_enqueue(f"mp.{name} := {high + 1};"))) == "ORA-01426"
    conn.commit()
    _unchanged(conn)
    # the range's ends are kept
    q.enqone(conn.msgproperties(payload=b"edge", **{name: high}))
    if name == "priority":     # (a negative delay or expiration is ORA-25208 / ORA-25209)
        q.enqone(conn.msgproperties(payload=b"edge", **{name: low}))
    conn.rollback()


def test_an_agent_protocol_beyond_64_bits_overflows(conn, queue_with_one):
    """SYS.AQ$_AGENT's protocol is kept in a 64-bit column: beyond it the sender was taken
    and the commit failed (SQLite: ORA-00600 [OverflowError]), every later one too."""
    for value in (2**63, -2**63 - 1, 10**20):
        assert raised_code(lambda: sluice.Agent("S", None, value)) == "ORA-01426"
    block = _plsql_enqueue("mp.sender_id := SYS.AQ$_AGENT('S', NULL, 99999999999999999999);")
    assert raised_code(lambda: conn.cursor().execute(block)) == "ORA-01426"
    conn.commit()
    _unchanged(conn)
    q = queue_with_one      # the range's ends are kept
    for value in (2**63 - 1, -2**63):
        q.enqone(conn.msgproperties(payload=b"edge", sender_id=sluice.Agent("S", None, value)))
    conn.commit()
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert [m.sender_id.protocol for m in q.deqmany(10) if m.payload == b"edge"] == [2**63 - 1, -2**63]
    conn.rollback()


@pytest.mark.parametrize("wait", ["'abc'", "HEXTORAW('01')", "SYSDATE", "SYS.AQ$_AGENT('X', NULL, 0)"])
def test_a_plsql_dequeue_wait_that_is_no_number_is_06502(conn, queue_with_one, wait):
    """dequeue_options.wait is a BINARY_INTEGER: text there escaped as Python's TypeError."""
    block = f"""DECLARE d DBMS_AQ.DEQUEUE_OPTIONS_T; mp DBMS_AQ.MESSAGE_PROPERTIES_T; p RAW(100); h RAW(16);
    BEGIN
      d.wait := {wait};
      DBMS_AQ.DEQUEUE(queue_name => 'Q', dequeue_options => d, message_properties => mp, payload => p, msgid => h);
    END;"""
    assert raised_code(lambda: conn.cursor().execute(block)) == "ORA-06502"
    _unchanged(conn)


# message_properties_t.correlation and dequeue_options_t.correlation are VARCHAR2(128):
# "any string up to 128 bytes" (Oracle's AQ property docs); a longer one is PL/SQL's ORA-06502
LONG_CORRELATIONS = ["x" * 129, "\u00e9" * 65]      # 129 bytes; 65 characters of 2 bytes


@pytest.mark.parametrize("corr", LONG_CORRELATIONS, ids=["ascii-129", "utf8-130"])
def test_a_python_correlation_over_128_bytes_is_dpy_2075(conn, queue_with_one, corr):
    """Through python-oracledb's API the client refuses it first (DPY-2075, where the value is
    given: python-oracledb tests/aq/test_1400_raw.py 1432/1433); nothing reaches the queue, and
    a message property or dequeue option keeps its value."""
    q = queue_with_one
    assert raised_code(lambda: q.enqmany([conn.msgproperties(payload=b"a"),
                                          conn.msgproperties(payload=b"b", correlation=corr)])) == "DPY-2075"
    m = conn.msgproperties(payload=b"long")
    assert raised_code(lambda: setattr(m, "correlation", corr)) == "DPY-2075" and m.correlation is None
    q.deqoptions.correlation = "c"
    assert raised_code(lambda: setattr(q.deqoptions, "correlation", corr)) == "DPY-2075"
    assert q.deqoptions.correlation == "c"
    conn.commit()
    _unchanged(conn)
    q.enqone(conn.msgproperties(payload=b"d", correlation="x" * 128))   # the limit itself
    q.enqone(conn.msgproperties(payload=b"e", correlation="\u00e9" * 64))
    conn.commit()
    assert [r[0] for r in table_rows(conn, "Q_QT", "LENGTH(CORR_ID)")] == [None, 128, 64]


def test_a_plsql_correlation_over_128_bytes_is_06502(conn, queue_with_one):
    for block in ("""DECLARE e DBMS_AQ.ENQUEUE_OPTIONS_T; mp DBMS_AQ.MESSAGE_PROPERTIES_T; h RAW(16);
        BEGIN
          mp.correlation := RPAD('x', 129, 'x');
          DBMS_AQ.ENQUEUE(queue_name => 'Q', enqueue_options => e, message_properties => mp,
                          payload => HEXTORAW('01'), msgid => h);
        END;""", """DECLARE d DBMS_AQ.DEQUEUE_OPTIONS_T; mp DBMS_AQ.MESSAGE_PROPERTIES_T; p RAW(100); h RAW(16);
        BEGIN
          d.wait := DBMS_AQ.NO_WAIT; d.correlation := RPAD('x', 129, 'x');
          DBMS_AQ.DEQUEUE(queue_name => 'Q', dequeue_options => d, message_properties => mp,
                          payload => p, msgid => h);
        END;"""):
        assert raised_code(lambda: conn.cursor().execute(block)) == "ORA-06502"
    conn.commit()
    _unchanged(conn)


def test_bad_admin_values(conn, queue_with_one):
    assert raised_code(lambda: conn.aqadm.alter_queue(queue_name="Q", max_retries=-1)) == "ORA-24013"
    assert raised_code(lambda: conn.aqadm.alter_queue(queue_name="Q", retention_time=-5)) == "ORA-24014"
    assert raised_code(lambda: conn.aqadm.create_queue_table(queue_table="X", queue_payload_type="NO_SUCH_TYPE")) \
        == "ORA-04043"
    # a NaN passed '< 0' and failed in the store's NOT NULL column (sqlite3's IntegrityError);
    # an infinity or 1e300 has no date in the views (PostgreSQL: timestamp out of range);
    # max_retries 10**30 did not fit SQLite's integer (OverflowError)
    for v in (math.nan, math.inf, 1e300, 10**400, 2**31):
        assert raised_code(lambda: conn.aqadm.alter_queue(queue_name="Q", retry_delay=v)) == "ORA-24013"
        assert raised_code(lambda: conn.aqadm.alter_queue(queue_name="Q", retention_time=v)) == "ORA-24014"
        assert raised_code(lambda: conn.aqadm.create_queue(queue_name="Q2", queue_table="Q_QT", retry_delay=v)) \
            == "ORA-24013"
        if isinstance(v, int):
            assert raised_code(lambda: conn.aqadm.alter_queue(queue_name="Q", max_retries=v)) == "ORA-24013"
        with pytest.raises(sluice.InterfaceError):
            queue_with_one.deqoptions.wait = 2**32 if isinstance(v, int) else v
    assert conn.query("SELECT MAX_RETRIES, RETENTION FROM USER_QUEUES WHERE NAME='Q'", None)[1] == [(5, "0")]
    conn.aqadm.alter_queue(queue_name="Q", max_retries=2**31 - 1, retry_delay=2**31 - 1, retention_time=2**31 - 1)
    assert conn.query("SELECT MAX_RETRIES, RETRY_DELAY, RETENTION FROM USER_QUEUES WHERE NAME='Q'", None)[1] \
        == [(2**31 - 1, 2**31 - 1, str(2**31 - 1))]
    conn.aqadm.alter_queue(queue_name="Q", max_retries=5, retry_delay=0, retention_time=0)
    _unchanged(conn)


def test_a_refused_alter_changes_nothing_the_session_sees(conn, queue_with_one, monkeypatch):
    """ALTER_QUEUE / START_QUEUE / STOP_QUEUE / ALTER_QUEUE_TABLE changed the catalog's cached
    object before the store wrote it: a comment the store could not bind (sqlite3's own
    ProgrammingError) or a store failing the write left this session with max_retries 9 and
    a stopped queue the store never had."""
    a = conn.aqadm
    for call in (lambda: a.alter_queue(queue_name="Q", max_retries=9, comment=["a"]),
                 lambda: a.create_queue(queue_name="Q2", queue_table="Q_QT", comment=1),
                 lambda: a.alter_queue_table(queue_table="Q_QT", comment=b"x"),
                 lambda: a.create_queue_table(queue_table="T2", queue_payload_type="RAW", comment=2.5)):
        assert raised_code(call) == "ORA-06502"
    store = a._store

    def lost(*args):
        raise sluice.errors.ora(3113)
    monkeypatch.setattr(store, "update_queue", lost)
    monkeypatch.setattr(store, "update_queue_table", lost)
    assert raised_code(lambda: a.alter_queue(queue_name="Q", max_retries=9)) == "ORA-03113"
    assert raised_code(lambda: a.stop_queue(queue_name="Q")) == "ORA-03113"
    assert raised_code(lambda: a.alter_queue_table(queue_table="Q_QT", comment="new")) == "ORA-03113"
    monkeypatch.undo()
    q = a._catalog.queue("Q")
    assert (q.max_retries, q.enqueue_enabled, q.dequeue_enabled) == (5, True, True)
    assert a._catalog.queue_table("Q_QT").comment is None
    queue_with_one.enqone(conn.msgproperties(payload=b"still enabled"))   # no ORA-25207
    conn.rollback()
    _unchanged(conn)
    assert conn.query("SELECT COUNT(*) FROM USER_QUEUES WHERE NAME='Q2'", None)[1] == [(0,)]


def test_closed_connection(dsn):
    c = sluice.connect(dsn)
    c.close()
    with pytest.raises(sluice.InterfaceError):
        c.queue("Q")


def test_a_json_payload_nested_past_the_stack_is_25215(dsn, tmp_path):
    """A JSON payload (or its text, given to `sluice enqueue`) nested ~1,000 levels deep
    overflowed Python's stack: RecursionError out of enqone, ORA-00600 from the CLI."""
    from click.testing import CliRunner

    from sluice.cli import main

    def nested(n):
        value = 1
        for _ in range(n):
            value = {"a": [value]}
        return value
    conn = sluice.connect(dsn)
    try:
        make_queue(conn, "J", payload="JSON")
        q = conn.queue("J", "JSON")
        assert raised_code(lambda: q.enqone(conn.msgproperties(payload=nested(3000)))) == "ORA-25215"
        q.enqone(conn.msgproperties(payload=nested(50)))
        conn.commit()
        assert nowait(q).deqone().payload == nested(50)
        conn.commit()
        r = CliRunner().invoke(main, ["--dsn", dsn, "enqueue", "J", "[" * 5000 + "]" * 5000])
        assert r.exit_code == 1 and "ORA-25215" in r.output and "nested too deeply" in r.output, r.output
        assert nowait(q).deqone() is None
    finally:
        conn.close()
