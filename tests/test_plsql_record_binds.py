"""PL/SQL records as binds, as python-oracledb binds them: ``conn.gettype`` of DBMS_AQ's
record types (``MESSAGE_PROPERTIES_T``, ``ENQUEUE_OPTIONS_T``, ``DEQUEUE_OPTIONS_T``, with
or without ``SYS.``) is a DbObjectType with ``package_name`` DBMS_AQ and the record's
fields as upper-case attributes; its objects bind to DBMS_AQ.ENQUEUE / DEQUEUE, and a
``cursor.var()`` of the type gets DEQUEUE's message properties back.  An unknown record
type is ORA-04043.  Both backends."""

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue

ENQUEUE = ("BEGIN DBMS_AQ.ENQUEUE(queue_name => :q, enqueue_options => :eo, message_properties => :mp, "
           "payload => :p, msgid => :m); END;")
DEQUEUE = ("BEGIN DBMS_AQ.DEQUEUE(queue_name => :q, dequeue_options => :do, message_properties => :mp, "
           "payload => :p, msgid => :m); END;")


def test_gettype_of_the_records(conn):
    mp = conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T")
    assert (mp.schema, mp.package_name, mp.name, mp.iscollection) == \
        ("SYS", "DBMS_AQ", "MESSAGE_PROPERTIES_T", False)
    assert [a.name for a in mp.attributes][:5] == ["PRIORITY", "DELAY", "EXPIRATION", "CORRELATION",
                                                   "ATTEMPTS"]
    assert {"ENQUEUE_TIME", "STATE", "SENDER_ID", "ORIGINAL_MSGID", "DELIVERY_MODE"} <= \
        {a.name for a in mp.attributes}
    assert conn.gettype("sys.dbms_aq.message_properties_t") == mp
    eo = conn.gettype("SYS.DBMS_AQ.ENQUEUE_OPTIONS_T")
    assert eo.package_name == "DBMS_AQ" and "VISIBILITY" in [a.name for a in eo.attributes]
    do = conn.gettype("DBMS_AQ.DEQUEUE_OPTIONS_T")
    assert {"CONSUMER_NAME", "WAIT", "CORRELATION", "DEQ_CONDITION"} <= {a.name for a in do.attributes}
    obj = mp.newobject()
    assert obj.PRIORITY is None                 # all NULL, as python-oracledb's newobject()
    obj.PRIORITY, obj.CORRELATION = 3, "c"
    assert (obj.PRIORITY, obj.CORRELATION) == (3, "c")


@pytest.mark.parametrize("name", ["DBMS_AQ.NO_SUCH_T", "SYS.DBMS_AQ.NO_SUCH_T", "SYS.DBMS_NOPE.X_T"])
def test_an_unknown_record_type_is_ora_04043(conn, name):
    with pytest.raises(sluice.DatabaseError) as e:
        conn.gettype(name)
    assert e.value.full_code == "ORA-04043"


def test_enqueue_and_dequeue_with_record_binds(conn):
    make_queue(conn)
    cur = conn.cursor()
    mp_type = conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T")
    mp, eo = mp_type.newobject(), conn.gettype("DBMS_AQ.ENQUEUE_OPTIONS_T").newobject()
    mp.PRIORITY, mp.CORRELATION = 3, "c"
    eo.VISIBILITY = sluice.ENQ_IMMEDIATE            # no commit needed to see it
    msgid = cur.var(bytes)
    cur.execute(ENQUEUE, q="Q", eo=eo, mp=mp, p=b"hello", m=msgid)
    do = conn.gettype("DBMS_AQ.DEQUEUE_OPTIONS_T").newobject()
    do.WAIT, do.CORRELATION = 0, "c"
    props, payload, got = cur.var(mp_type), cur.var(bytes), cur.var(bytes)
    conn.rollback()                                 # IMMEDIATE: the enqueue was committed itself
    cur.execute(DEQUEUE, q="Q", do=do, mp=props, p=payload, m=got)
    out = props.getvalue()
    assert out.type == mp_type
    assert (out.PRIORITY, out.CORRELATION, out.ATTEMPTS, out.STATE) == (3, "c", 0, sluice.MSG_READY)
    assert isinstance(out.ENQUEUE_TIME, dt.datetime)
    assert (payload.getvalue(), got.getvalue()) == (b"hello", msgid.getvalue())


def test_a_null_field_takes_the_records_default(conn):
    make_queue(conn)
    cur = conn.cursor()
    mp_type = conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T")
    cur.execute(ENQUEUE, q="Q", eo=None, mp=mp_type.newobject(), p=b"x", m=cur.var(bytes))
    conn.commit()
    m = conn.queue("Q").deqone()
    assert (m.priority, m.delay, m.expiration) == (1, 0, -1)


def test_a_record_in_a_declared_variable_comes_back_in_a_var(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"p", priority=5, correlation="k"))
    conn.commit()
    cur = conn.cursor()
    props = cur.var(conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T"))
    cur.execute("""
        DECLARE
          do DBMS_AQ.DEQUEUE_OPTIONS_T; mp DBMS_AQ.MESSAGE_PROPERTIES_T; p RAW(100); m RAW(16);
        BEGIN
          do.wait := DBMS_AQ.NO_WAIT;
          DBMS_AQ.DEQUEUE('Q', do, mp, p, m);
          :mp := mp;
        END;""", mp=props)
    assert (props.getvalue().PRIORITY, props.getvalue().CORRELATION) == (5, "k")


def test_callproc_takes_record_objects(conn):
    make_queue(conn)
    cur = conn.cursor()
    mp = conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T").newobject()
    mp.PRIORITY = 7
    msgid = cur.var(bytes)
    cur.callproc("DBMS_AQ.ENQUEUE", ["Q", None, mp, b"x", msgid])
    conn.commit()
    m = conn.queue("Q").deqone()
    assert (m.priority, m.msgid) == (7, msgid.getvalue())


def test_recipients_and_sender_as_agent_objects(conn):
    make_queue(conn, multiple_consumers=True)
    cur = conn.cursor()
    agent, recipients = conn.gettype("SYS.AQ$_AGENT"), conn.gettype("DBMS_AQ.AQ$_RECIPIENT_LIST_T")
    r1, sender = agent.newobject(), agent.newobject()
    r1.NAME, sender.NAME = "R1", "SND"
    mp = conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T").newobject()
    mp.RECIPIENT_LIST, mp.SENDER_ID = recipients.newobject([r1]), sender
    cur.execute(ENQUEUE, q="Q", eo=None, mp=mp, p=b"to r1", m=cur.var(bytes))
    conn.commit()
    q = conn.queue("Q")
    q.deqoptions.consumername, q.deqoptions.wait = "R1", sluice.DEQ_NO_WAIT
    m = q.deqone()
    assert (m.payload, m.sender_id.name) == (b"to r1", "SND")


def test_a_record_bind_field_assigned_in_the_block(conn):
    cur = conn.cursor()
    mp = conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T").newobject()
    prio = cur.var(int)
    cur.execute("BEGIN :mp.priority := 9; :prio := :mp.priority; END;", mp=mp, prio=prio)
    assert mp.PRIORITY == 9 and prio.getvalue() == 9
