"""Seed 003 "Asynchronous Notifications": callback, HTTP, mail, PL/SQL procedure; payload,
purge on notification, timeout, grouping by time, reliability, the registrations view."""

import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import sluice
from sluice.errors import ArgumentError
from tests.conftest import make_queue, wait_until
from tests.pubsub.notify_sinks import HttpSink, SmtpSink


@pytest.fixture
def http():
    sink = HttpSink()
    yield sink
    sink.close()


def _enqueue(conn, n=1, queue="Q", **props):
    q = conn.queue(queue)
    msgs = [conn.msgproperties(payload=f"m{i}".encode(), **props) for i in range(n)]
    q.enqmany(msgs)
    conn.commit()
    return [m.msgid for m in msgs]


def test_callback_notification(conn):
    make_queue(conn)
    got = []
    sub = conn.subscribe(namespace=sluice.SUBSCR_NAMESPACE_AQ, name="Q", callback=got.append)
    ids = _enqueue(conn, 2)
    assert wait_until(lambda: len(got) == 2)
    assert [m.msgid for m in got] == ids
    assert got[0].type == sluice.EVENT_AQ and got[0].queue_name == '"SLUICE"."Q"' and got[0].subscription is sub
    conn.unsubscribe(sub)
    _enqueue(conn)
    time.sleep(0.5)
    assert len(got) == 2


def test_a_callback_that_raises_is_not_called_again_with_the_same_message(conn, caplog):
    """A callback that raises had its notification: python-oracledb reports the error and
    goes on (OCI has no way for a callback to refuse one).  The dispatcher took it for a
    failed delivery and called the callback again with the same message, once per
    back-off (up to 16 times)."""
    make_queue(conn)
    calls = []

    def failing(message):
        calls.append(message.msgid)
        raise RuntimeError("the application's own error")
    conn.subscribe(name="Q", callback=failing)
    ids = _enqueue(conn)
    assert wait_until(lambda: len(calls) == 1)
    time.sleep(2.5)              # past the first two back-offs (1 s, 2 s)
    assert calls == ids
    assert "the notification callback of SLUICE.Q raised" in caplog.text
    ids += _enqueue(conn)        # the registration goes on
    assert wait_until(lambda: len(calls) == 2) and calls == ids


def test_nothing_is_notified_for_a_rolled_back_enqueue(conn):
    make_queue(conn)
    got = []
    conn.subscribe(name="Q", callback=got.append)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"never"))
    conn.rollback()
    ids = _enqueue(conn)
    assert wait_until(lambda: len(got) == 1)
    time.sleep(0.3)
    assert [m.msgid for m in got] == ids


def test_consumer_registration_on_a_multi_consumer_queue(conn):
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT")
    conn.aqadm.start_queue(queue_name="T")
    got = []
    conn.subscribe(name="T:APP1", callback=got.append)
    conn.queue("T").enqone(conn.msgproperties(payload=b"for 2", recipients=["APP2"]))
    conn.queue("T").enqone(conn.msgproperties(payload=b"for 1", recipients=["APP1"]))
    conn.commit()
    assert wait_until(lambda: len(got) == 1)
    time.sleep(0.3)
    assert len(got) == 1 and got[0].consumer_name == "APP1"
    with pytest.raises(sluice.DatabaseError) as e:
        conn.subscribe(name="T", callback=got.append)     # which consumer?
    assert e.value.full_code == "ORA-25231"


def test_http_post_with_xml_presentation(conn, http):
    make_queue(conn)
    conn.subscribe(name="Q", protocol=sluice.SUBSCR_PROTO_HTTP, location=http.url)
    ids = _enqueue(conn)
    assert wait_until(lambda: len(http.bodies) == 1)
    body = http.bodies[0]
    assert "<AQXmlNotification" in body and "<destination>SLUICE.Q</destination>" in body
    assert ids[0].hex().upper() in body


def test_failed_http_delivery_is_retried_not_lost(conn, http):
    make_queue(conn)
    http.fail = 2
    conn.subscribe(name="Q", protocol=sluice.SUBSCR_PROTO_HTTP, location=http.url)
    _enqueue(conn)
    assert wait_until(lambda: len(http.bodies) == 1, timeout=10)
    time.sleep(0.5)
    assert len(http.bodies) == 1       # delivered once


def test_mail_through_a_configured_smtp_server(conn):
    smtp = SmtpSink()
    try:
        make_queue(conn)
        from sluice import plsql
        plsql.run_script(conn, f"""
BEGIN
  DBMS_AQELM.SET_MAILHOST('127.0.0.1');
  DBMS_AQELM.SET_MAILPORT({smtp.port});
  DBMS_AQELM.SET_SENDFROM('aq@sluice.example');
END;
/
DECLARE
  reginfo  SYS.AQ$_REG_INFO;
  reglist  SYS.AQ$_REG_INFO_LIST;
BEGIN
  reginfo := SYS.AQ$_REG_INFO('SLUICE.Q', DBMS_AQ.NAMESPACE_AQ, 'mailto://ops@sluice.example', HEXTORAW('FF'));
  reglist := SYS.AQ$_REG_INFO_LIST(reginfo);
  DBMS_AQ.REGISTER(reglist, 1);
END;
/""")
        _enqueue(conn)
        assert wait_until(lambda: len(smtp.mails) == 1)
        sender, rcpts, data = smtp.mails[0]
        assert "aq@sluice.example" in sender and rcpts == ["<ops@sluice.example>"]
        import email
        text = email.message_from_string(data).get_payload(decode=True).decode()
        assert "AQXmlNotification" in text and "<destination>SLUICE.Q</destination>" in text
    finally:
        smtp.close()


def test_plsql_procedure_gets_the_payload_of_a_raw_queue(conn):
    make_queue(conn)
    calls = []
    sluice.register_function("sluice.on_message",
                             lambda context, reginfo, descr, payload, payloadl: calls.append((descr, payload)))
    from sluice import plsql
    plsql.execute(conn, """BEGIN
      DBMS_AQ.REGISTER(SYS.AQ$_REG_INFO_LIST(
        SYS.AQ$_REG_INFO('Q', DBMS_AQ.NAMESPACE_AQ, 'plsql://sluice.on_message?PR=0', NULL,
                         DBMS_AQ.NTFN_QOS_PAYLOAD)), 1);
    END;""")
    ids = _enqueue(conn)
    assert wait_until(lambda: len(calls) == 1)
    descr, payload = calls[0]
    assert descr["msg_id"] == ids[0] and payload == b"m0"


def test_purge_on_notification(conn):
    make_queue(conn)
    got = []
    conn.subscribe(name="Q", callback=got.append, qos=sluice.SUBSCR_QOS_DEREG_NFY)
    _enqueue(conn)
    assert wait_until(lambda: len(got) == 1)
    assert wait_until(lambda: conn.query("SELECT COUNT(*) FROM dba_subscr_registrations", None)[1] == [(0,)])
    _enqueue(conn)
    time.sleep(0.5)
    assert len(got) == 1


def test_timeout_purges_and_sends_a_final_notification(conn):
    make_queue(conn)
    got = []
    conn.subscribe(name="Q", callback=got.append, timeout=1)
    assert conn.query("SELECT SUBSCRIPTION_NAME, PROTOCOL FROM dba_subscr_registrations", None)[1] == [
        ("SLUICE.Q", "CALLBACK")]
    assert wait_until(lambda: any(m.type == sluice.EVENT_DEREG for m in got), timeout=6)
    # the final notification goes out first, then the registration (the dispatcher's order)
    assert wait_until(lambda: conn.query("SELECT COUNT(*) FROM dba_subscr_registrations", None)[1] == [(0,)])


@pytest.mark.parametrize("grouping_type", [sluice.SUBSCR_GROUPING_TYPE_SUMMARY, sluice.SUBSCR_GROUPING_TYPE_LAST])
def test_grouping_by_time(conn, grouping_type):
    make_queue(conn)
    got = []
    conn.subscribe(name="Q", callback=got.append, grouping_class=sluice.SUBSCR_GROUPING_CLASS_TIME,
                   grouping_value=1, grouping_type=grouping_type)
    ids = _enqueue(conn, 3)
    assert wait_until(lambda: len(got) == 1, timeout=5)
    time.sleep(0.3)
    assert len(got) == 1
    n = got[0]
    assert n.count == 3
    if grouping_type == sluice.SUBSCR_GROUPING_TYPE_SUMMARY:
        assert n.msgids == ids
    else:
        assert n.msgids == ids[-1:] and n.msgid == ids[-1]


def test_grouping_repeat_count_then_purge(conn):
    make_queue(conn)
    got = []
    conn.subscribe(name="Q", callback=got.append, grouping_class=sluice.SUBSCR_GROUPING_CLASS_TIME,
                   grouping_value=1, grouping_repeat=1)
    _enqueue(conn, 2)
    assert wait_until(lambda: len(got) == 1, timeout=5)
    assert wait_until(lambda: conn.query("SELECT COUNT(*) FROM dba_subscr_registrations", None)[1] == [(0,)])


_REGISTER_AND_DIE = textwrap.dedent("""
    import os, sys, sluice
    conn = sluice.connect(sys.argv[1])
    conn.subscribe(name="Q", protocol=sluice.SUBSCR_PROTO_HTTP, location=sys.argv[2])
    conn.queue("Q").enqone(conn.msgproperties(payload=b"while you were out"))
    conn.commit()
    os._exit(0)          # gone before its dispatcher could deliver
""")


def test_reliable_notifications_survive_the_process(conn, dsn, http):
    make_queue(conn)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath("src") + os.pathsep + env.get("PYTHONPATH", "")
    subprocess.run([sys.executable, "-c", _REGISTER_AND_DIE, dsn, http.url], env=env, check=True, timeout=60)
    # a process that opens the store delivers what is owed — at once, or, when the dying
    # process's dispatcher had already leased the notification, once that lease runs out
    from sluice.aq.notify.dispatcher import LEASE
    later = sluice.connect(dsn)
    try:
        assert wait_until(lambda: len(http.bodies) == 1, timeout=LEASE + 10)
    finally:
        later.close()


def test_bad_registrations(conn):
    make_queue(conn)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.subscribe(name="NO_SUCH_Q", callback=print)
    assert e.value.full_code == "ORA-24010"
    with pytest.raises(sluice.InterfaceError):
        conn.subscribe(name="Q", callback=None)
    from sluice import plsql
    with pytest.raises(sluice.DatabaseError) as e:
        plsql.execute(conn, "BEGIN DBMS_AQ.REGISTER(SYS.AQ$_REG_INFO_LIST(SYS.AQ$_REG_INFO("
                            "'Q', 0, 'ftp://x', NULL)), 1); END;")
    assert e.value.full_code == "ORA-24971"
    assert conn.query("SELECT COUNT(*) FROM dba_subscr_registrations", None)[1] == [(0,)]



def test_subscribe_checks_every_argument_and_registers_nothing_it_refuses(conn):
    """conn.subscribe took qos="x" (TypeError from `qos & …`), an unknown keyword (a plain
    TypeError), and silently kept a location on a callback, a location of no protocol
    (ftp://), of none at all (plsql://, mailto://), a port, ip_address, operations or
    grouping value/start/repeat of the wrong type: now InterfaceError for a wrong value,
    ArgumentError for an unknown keyword, ORA-24971 for a location that cannot be
    delivered to; nothing is registered."""
    make_queue(conn)
    http, mail, plsql_ = sluice.SUBSCR_PROTO_HTTP, sluice.SUBSCR_PROTO_MAIL, sluice.SUBSCR_PROTO_PLSQL
    bad = [({"qos": "x"}, sluice.InterfaceError, "qos must be an integer"),
           ({"bogus": 1}, ArgumentError, "unexpected keyword argument 'bogus'"),
           ({"location": 5}, sluice.InterfaceError, "location= is for"),
           ({"location": "ftp://x"}, sluice.InterfaceError, "location= is for"),
           ({"protocol": http, "location": "ftp://x"}, sluice.DatabaseError, "ORA-24971"),
           ({"protocol": http, "location": "http://"}, sluice.DatabaseError, "ORA-24971"),
           ({"protocol": http, "location": "http://h:99999/"}, sluice.DatabaseError, "ORA-24971"),
           ({"protocol": http, "location": "mailto:a@b.c"}, sluice.DatabaseError, "ORA-24971"),
           ({"protocol": http, "location": 5}, sluice.InterfaceError, "location must be a string"),
           ({"protocol": http}, sluice.InterfaceError, "needs location="),
           ({"protocol": plsql_, "location": "plsql://"}, sluice.DatabaseError, "ORA-24971"),
           ({"protocol": mail, "location": "mailto://"}, sluice.DatabaseError, "ORA-24971"),
           ({"protocol": mail, "location": "a@b.c\r\nBcc: x@y.z"}, sluice.DatabaseError, "ORA-24971"),
           ({"port": "x"}, sluice.InterfaceError, "port must be an integer"),
           ({"port": 70000}, sluice.InterfaceError, "port must be between 0 and 65535"),
           ({"ip_address": 5}, sluice.InterfaceError, "ip_address must be a string"),
           ({"operations": "x"}, sluice.InterfaceError, "operations must be an integer"),
           ({"grouping_value": "x"}, sluice.InterfaceError, "grouping_value must be an integer"),
           ({"grouping_start": "x"}, sluice.InterfaceError, "grouping_start must be"),
           # (infinity made the registration's JSON unreadable: DBA_SUBSCR_REGISTRATIONS
           # failed for every session, with a traceback on SQLite)
           ({"grouping_start": float("inf")}, sluice.InterfaceError, "grouping_start must be"),
           ({"grouping_start": 1e300}, sluice.InterfaceError, "grouping_start must be"),
           ({"timeout": 2 ** 32}, sluice.InterfaceError, "timeout must be between 0 and 4294967295"),
           ({"grouping_repeat": "x"}, sluice.InterfaceError, "grouping_repeat must be an integer"),
           ({"grouping_repeat": -2}, sluice.InterfaceError, "grouping_repeat must be between -1")]
    for kwargs, cls, text in bad:
        args = {"namespace": sluice.SUBSCR_NAMESPACE_AQ, "name": "Q", "callback": print, **kwargs}
        with pytest.raises(cls) as e:
            conn.subscribe(**args)
        assert text in str(e.value), (kwargs, e.value)
    assert isinstance(e.value, sluice.Error)
    from sluice import plsql
    for location in ("'plsql://'", "'mailto://'", "'http://'", "''", "NULL"):   # ('' is NULL)
        with pytest.raises(sluice.DatabaseError) as e:
            plsql.execute(conn, "BEGIN DBMS_AQ.REGISTER(SYS.AQ$_REG_INFO_LIST(SYS.AQ$_REG_INFO("
                                f"'Q', 1, {location}, NULL)), 1); END;")
        assert e.value.full_code == "ORA-24971"
    assert conn.query("SELECT COUNT(*) FROM dba_subscr_registrations", None)[1] == [(0,)]
    # the forms that are kept: a procedure with or without plsql://, an address with or without mailto:
    calls = []
    sluice.register_function("sluice.on_subscribed", lambda *args: calls.append(args[2]))
    conn.subscribe(name="Q", protocol=plsql_, location="plsql://sluice.on_subscribed?PR=0")
    conn.subscribe(name="Q", protocol=mail, location="mailto://ops@sluice.example")
    conn.subscribe(name="Q", protocol=mail, location="ops@sluice.example")
    assert sorted(conn.query("SELECT PROTOCOL FROM dba_subscr_registrations", None)[1]) == [
        ("MAIL",), ("MAIL",), ("PLSQL",)]
    ids = _enqueue(conn)
    assert wait_until(lambda: len(calls) == 1) and calls[0]["msg_id"] == ids[0]

def test_register_and_unregister_lists_are_all_or_nothing(conn):
    """DBMS_AQ.REGISTER stored each entry as it went: one refused after the first left the
    first registered; UNREGISTER dropped the entries before one that was not registered."""
    from sluice import plsql
    make_queue(conn)

    def reg_list(*locations):
        return "SYS.AQ$_REG_INFO_LIST(" + ", ".join(
            f"SYS.AQ$_REG_INFO('Q', DBMS_AQ.NAMESPACE_AQ, '{loc}', NULL)" for loc in locations) + ")"

    def registered():
        return sorted(conn.query("SELECT LOCATION_NAME FROM dba_subscr_registrations", None)[1])

    with pytest.raises(sluice.DatabaseError) as e:
        plsql.execute(conn, f"BEGIN DBMS_AQ.REGISTER({reg_list('plsql://a.first', 'ftp://x')}, 2); END;")
    assert e.value.full_code == "ORA-24971" and registered() == []
    plsql.execute(conn, f"BEGIN DBMS_AQ.REGISTER({reg_list('plsql://a.first', 'plsql://a.second')}, 2); END;")
    assert len(registered()) == 2
    with pytest.raises(sluice.DatabaseError) as e:
        plsql.execute(conn, f"BEGIN DBMS_AQ.UNREGISTER({reg_list('plsql://a.first', 'plsql://a.none')}, 2); END;")
    assert e.value.full_code == "ORA-24950" and len(registered()) == 2
    plsql.execute(conn, f"BEGIN DBMS_AQ.UNREGISTER({reg_list('plsql://a.first', 'plsql://a.second')}, 2); END;")
    assert registered() == []


def test_buffered_messages_are_notified_with_their_delivery_mode(conn, http):
    """Seed 003 "Buffered Message Notification": registrations apply to buffered and
    persistent messages alike and tell which one it was; PL/SQL notification of buffered
    messages is for sharded queues only ("Buffered Messaging Restrictions"), so a PL/SQL
    procedure hears of the persistent message alone."""
    make_queue(conn)
    got, calls = [], []
    conn.subscribe(name="Q", callback=got.append)
    conn.subscribe(name="Q", protocol=sluice.SUBSCR_PROTO_HTTP, location=http.url)
    sluice.register_function("sluice.on_buffered_test", lambda *args: calls.append(args[2]))
    from sluice import plsql
    plsql.execute(conn, """BEGIN
      DBMS_AQ.REGISTER(SYS.AQ$_REG_INFO_LIST(
        SYS.AQ$_REG_INFO('Q', DBMS_AQ.NAMESPACE_AQ, 'plsql://sluice.on_buffered_test', NULL)), 1);
    END;""")
    q = conn.queue("Q")
    q.enqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    buffered_ids = []
    for i in range(2):    # the second one would take the fast path without registrations
        m = conn.msgproperties(payload=b"b%d" % i)
        q.enqone(m)
        buffered_ids.append(m.msgid)
    persistent = _enqueue(conn)
    assert wait_until(lambda: len(got) == 3 and len(http.bodies) == 3 and len(calls) == 1)
    assert sorted((m.msgid, m.deliverymode) for m in got) == sorted(
        [(i, sluice.MSG_BUFFERED) for i in buffered_ids] + [(persistent[0], sluice.MSG_PERSISTENT)])
    assert calls[0]["msg_id"] == persistent[0] and calls[0]["delivery_mode"] == sluice.MSG_PERSISTENT
    assert all(i.hex().upper() in "".join(http.bodies) for i in buffered_ids)
    # the buffered messages are still there to dequeue: the notification took nothing
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert [q.deqone().msgid for _ in range(2)] == buffered_ids


REGISTRATION_NUMBERS = ("QOSFLAGS, TIMEOUT, NTFN_GROUPING_CLASS, NTFN_GROUPING_VALUE, NTFN_GROUPING_TYPE, "
                        "NTFN_GROUPING_REPEAT_COUNT")


def test_the_registrations_view_shows_its_numbers_as_numbers(conn):
    """DBA_SUBSCR_REGISTRATIONS' quality of service, timeout and grouping columns are
    numbers on both backends (PostgreSQL showed the catalog's JSON text: '600', not 600)."""
    make_queue(conn)
    sub = conn.subscribe(name="Q", callback=print, timeout=600, qos=sluice.SUBSCR_QOS_RELIABLE,
                         grouping_class=sluice.SUBSCR_GROUPING_CLASS_TIME, grouping_value=30,
                         grouping_type=sluice.SUBSCR_GROUPING_TYPE_LAST, grouping_repeat=5)
    try:
        assert conn.query(f"SELECT {REGISTRATION_NUMBERS} FROM DBA_SUBSCR_REGISTRATIONS", None)[1] == [
            (sluice.SUBSCR_QOS_RELIABLE, 600, 1, 30, 2, 5)]
    finally:
        conn.unsubscribe(sub)


def test_an_older_stores_registrations_view_gets_numbers(dsn):
    """Schema version 16 made the view with text columns on PostgreSQL; a view's column
    types cannot be replaced, so the upgrade drops it and makes it again."""
    from tests.streams.test_propagation import reopen_as_older
    conn = sluice.connect(dsn)
    make_queue(conn)
    sub = conn.subscribe(name="Q", callback=print, timeout=60)
    conn = reopen_as_older(conn, dsn, 16, [
        "DROP VIEW DBA_SUBSCR_REGISTRATIONS",
        "CREATE VIEW DBA_SUBSCR_REGISTRATIONS AS SELECT NAME AS REG_ID, SPEC::json ->> 'timeout' AS TIMEOUT "
        "FROM SLUICE_CATALOG WHERE KIND = 'REGISTRATION'"])
    try:
        assert conn.query("SELECT TIMEOUT FROM DBA_SUBSCR_REGISTRATIONS", None)[1] == [(60,)]
    finally:
        conn.unsubscribe(sub)
        conn.close()


def test_a_forked_child_stamps_its_callback_registrations_as_its_own():
    """The token CALLBACK registrations carry (host:pid:random) is drawn again in a forked
    child (tests/forkserver.py forks ``sluice serve`` and the fleets' workers): with its
    parent's, the parent's liveness would answer for the child's registrations."""
    from sluice.aq.notify import dispatcher, registration
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # pragma: no cover — the child
        try:
            os.write(w, f"{registration.PROCESS}|{dispatcher._process_alive(registration.PROCESS)}".encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        token, alive = f.read().decode().split("|")
    os.waitpid(pid, 0)
    assert token != registration.PROCESS and token.split(":")[1] == str(pid) and alive == "True"
    assert not dispatcher._process_alive(token)     # the child is gone
