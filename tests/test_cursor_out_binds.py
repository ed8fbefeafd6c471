"""cursor.var() as python-oracledb's in PL/SQL: a variable bound to an OUT argument of a
package procedure (DBMS_AQ.ENQUEUE's msgid, DBMS_AQ.DEQUEUE's payload and msgid) or
assigned in the block gets the value as python-oracledb gives it; callproc returns the OUT
values, callfunc a function's value; arrayvar is a PL/SQL table; setinputsizes,
setoutputsize, scroll as python-oracledb's.  Both backends."""

import pytest

import sluice
from tests.conftest import make_queue
from tests.sqlhelpers import raised_code

ENQUEUE = """
DECLARE
  eo DBMS_AQ.ENQUEUE_OPTIONS_T;
  mp DBMS_AQ.MESSAGE_PROPERTIES_T;
BEGIN
  mp.priority := :prio;
  DBMS_AQ.ENQUEUE(queue_name => 'Q', enqueue_options => eo, message_properties => mp,
                  payload => :payload, msgid => :mid);
END;"""

DEQUEUE = """
DECLARE
  do DBMS_AQ.DEQUEUE_OPTIONS_T;
  mp DBMS_AQ.MESSAGE_PROPERTIES_T;
BEGIN
  do.wait := DBMS_AQ.NO_WAIT;
  DBMS_AQ.DEQUEUE(queue_name => 'Q', dequeue_options => do, message_properties => mp,
                  payload => :payload, msgid => :mid);
  :prio := mp.priority;
END;"""


def test_enqueue_and_dequeue_out_binds(conn):
    make_queue(conn)
    cur = conn.cursor()
    mid = cur.var(bytes)
    cur.execute(ENQUEUE, prio=3, payload=b"hello", mid=mid)
    msgid = mid.getvalue()
    assert isinstance(msgid, bytes) and len(msgid) == 16          # RAW(16)
    conn.commit()
    payload, got, prio = cur.var(bytes), cur.var(bytes), cur.var(int)
    cur.execute(DEQUEUE, [payload, got, prio])                   # by position: names in order
    assert (payload.getvalue(), got.getvalue(), prio.getvalue()) == (b"hello", msgid, 3)
    assert conn.queue("Q").deqoptions is not None
    conn.commit()


def test_out_bind_of_a_message_enqueued_by_the_queue_api(conn):
    make_queue(conn)
    props = conn.msgproperties(payload=b"via api")
    conn.queue("Q").enqone(props)
    conn.commit()
    cur = conn.cursor()
    payload, mid, prio = cur.var(bytes), cur.var(bytes), cur.var(int)
    cur.execute(DEQUEUE, payload=payload, mid=mid, prio=prio)
    assert (payload.getvalue(), mid.getvalue()) == (b"via api", props.msgid)


@pytest.mark.parametrize("typ, expected", [(int, 5), (float, 5.0), (str, "5"), (sluice.DB_TYPE_NUMBER, 5)])
def test_assignment_to_a_var(conn, typ, expected):
    v = conn.cursor().var(typ)
    conn.cursor().execute("begin :v := 5; end;", v=v)
    assert v.getvalue() == expected and type(v.getvalue()) is type(expected)
    assert v.values == [expected]


def test_a_var_is_read_as_its_value_and_converters_apply(conn):
    cur = conn.cursor()
    v = cur.var(int, outconverter=lambda n: n * 100)
    v.setvalue(0, 4)
    cur.execute("begin :v := :v + 1; end;", v=v)
    assert v.getvalue() == 500
    cur.execute("select :v from dual", v=v)                     # in SQL: the value bound
    assert cur.fetchall() == [(500,)]


def test_a_raw_out_value_in_a_str_var_is_its_hex(conn):
    cur = conn.cursor()
    v = cur.var(str)
    cur.execute("begin :v := hextoraw('1dff'); end;", v=v)
    assert v.getvalue() == "1DFF"


def test_callproc_returns_out_values(conn):
    make_queue(conn)
    cur = conn.cursor()
    mid = cur.var(bytes)
    result = cur.callproc("dbms_aq.enqueue", ["Q", None, None, b"by callproc", mid])
    assert result == ["Q", None, None, b"by callproc", mid.getvalue()]
    assert len(mid.getvalue()) == 16
    conn.commit()
    assert conn.queue("Q").deqone().msgid == mid.getvalue()


def test_callproc_keyword_parameters(conn):
    make_queue(conn, start=False)
    cur = conn.cursor()
    assert cur.callproc("dbms_aqadm.start_queue", keyword_parameters={"queue_name": "Q"}) == []
    assert cur.callproc("dbms_aqadm.stop_queue", ["Q"], keywordParameters={"enqueue": True}) == ["Q"]
    assert raised_code(lambda: cur.callproc("dbms_aqadm.start_queue", None, {"queue_name": "Q"},
                                            keywordParameters={"queue_name": "Q"})) == "DPY-2014"


def test_callproc_unknown_names_are_oracles_errors(conn):
    cur = conn.cursor()
    with pytest.raises(sluice.DatabaseError, match="PLS-00201: identifier 'NOSUCH' must be declared"):
        cur.callproc("nosuch")
    with pytest.raises(sluice.DatabaseError, match="PLS-00302: component 'NOSUCH' must be declared"):
        cur.callproc("dbms_aqadm.nosuch", [1])
    with pytest.raises(sluice.DatabaseError, match="PLS-00306"):
        cur.callproc("dbms_aqadm.start_queue", [1, 2, 3, 4, 5])


def test_callfunc(conn):
    cur = conn.cursor()
    cur.callproc("dbms_streams.set_tag", [b"\x1d"])
    assert cur.callfunc("dbms_streams.get_tag", bytes) == b"\x1d"
    assert cur.callfunc("dbms_streams.get_tag", str) == "1D"
    assert cur.callfunc("dbms_streams.get_tag", sluice.DB_TYPE_RAW) == b"\x1d"
    with pytest.raises(sluice.DatabaseError, match="PLS-00201: identifier 'NOSUCH.FN' must be declared"):
        cur.callfunc("nosuch.fn", int)
    assert raised_code(lambda: cur.callfunc("dbms_streams.get_tag", object)) == "DPY-3003"


def test_arrayvar(conn):
    cur = conn.cursor()
    a = cur.arrayvar(int, [1, 2, 3])
    assert (a.getvalue(), a.actual_elements, a.num_elements) == ([1, 2, 3], 3, 3)
    n = cur.var(int)
    cur.execute("begin :a(2) := 7; :n := :a.count; end;", a=a, n=n)
    assert (a.getvalue(), n.getvalue()) == ([1, 7, 3], 3)
    assert raised_code(lambda: cur.execute("begin :a(4) := 1; end;", a=a)) == "ORA-06513"
    empty = cur.arrayvar(str, 2, 100)
    assert empty.getvalue() == [] and empty.num_elements == 2
    assert raised_code(lambda: empty.setvalue(0, "x")) == "DPY-2028"
    with pytest.raises(TypeError):
        cur.arrayvar(int, "3")


def test_setinputsizes_setoutputsize_scroll(conn):
    cur = conn.cursor()
    assert cur.setinputsizes() == []
    sizes = cur.setinputsizes(int, 100, None)
    assert sizes[0].type is int and sizes[1].size == 100 and sizes[2] is None
    assert set(cur.setinputsizes(a=int)) == {"a"}
    assert raised_code(lambda: cur.setinputsizes(int, a=int)) == "DPY-2005"
    assert cur.setoutputsize(100) is None
    cur.execute("select 1 from dual")
    assert raised_code(cur.scroll) == "DPY-2068"


TEN_ROWS = " UNION ALL ".join(f"SELECT {i} FROM DUAL" for i in range(1, 11))


def test_scrollable_cursor(conn):
    """python-oracledb's own scroll tests (test_4200_cursor_scrollable), retold."""
    cur = conn.cursor(scrollable=True)
    assert cur.scrollable is True
    cur.execute(TEN_ROWS)
    cur.scroll(6)
    assert cur.fetchone() == (6,) and cur.rowcount == 6
    cur.fetchmany(2)
    cur.scroll(2 - cur.rowcount)
    assert cur.fetchone() == (2,) and cur.rowcount == 2
    cur.scroll(1, "absolute")
    assert cur.fetchone() == (1,) and cur.rowcount == 1
    cur.scroll(mode="last")
    assert cur.fetchone() == (10,) and cur.rowcount == 10
    cur.scroll(mode="first")
    assert cur.fetchone() == (1,) and cur.rowcount == 1
    for value, mode in ((12, "absolute"), (-1, "absolute"), (15, "relative"), (-5, "relative")):
        assert raised_code(lambda: cur.scroll(value, mode)) == "DPY-2063"
    assert raised_code(lambda: cur.scroll(mode="middle")) == "DPY-2009"
    assert cur.fetchone() == (2,)
    assert raised_code(lambda: conn.cursor().scroll(1)) == "DPY-2068"


def test_async_cursor_out_binds_callfunc_scroll(dsn):
    import asyncio

    async def main():
        async with sluice.connect_async(dsn) as connection:
            cursor = connection.cursor(scrollable=True)
            v = cursor.var(int)
            await cursor.execute("begin :v := 41 + 1; end;", v=v)
            assert v.getvalue() == 42
            await cursor.callproc("dbms_streams.set_tag", [b"\x07"])
            assert await cursor.callfunc("dbms_streams.get_tag", bytes) == b"\x07"
            await cursor.execute(TEN_ROWS)
            await cursor.scroll(mode="last")
            assert await cursor.fetchone() == (10,)
    asyncio.run(main())


def test_an_object_payload_out_bind(conn):
    cur = conn.cursor()
    cur.execute("CREATE TYPE msg_t AS OBJECT (id NUMBER, txt VARCHAR2(30))")
    make_queue(conn, payload="MSG_T")
    msg_t = conn.gettype("MSG_T")
    obj = msg_t.newobject()
    obj.ID, obj.TXT = 7, "seven"
    mid = cur.var(bytes)
    cur.callproc("dbms_aq.enqueue", ["Q", None, None, obj, mid])
    conn.commit()
    payload, got = cur.var(sluice.DB_TYPE_OBJECT, typename="MSG_T"), cur.var(bytes)
    dequeue = DEQUEUE.replace(":prio := mp.priority;", "")
    cur.execute(dequeue, payload=payload, mid=got)
    assert (payload.getvalue().ID, payload.getvalue().TXT) == (7, "seven")
    assert payload.type is msg_t or payload.type.name == "MSG_T"
    assert got.getvalue() == mid.getvalue()
    assert raised_code(lambda: cur.var(sluice.DB_TYPE_OBJECT)) == "DPY-2037"
    cur.callproc("dbms_aq.enqueue", ["Q", None, None, obj, mid])
    conn.commit()
    wrong = cur.var(msg_t)
    assert raised_code(lambda: cur.execute(dequeue, payload=wrong, mid=cur.var(msg_t))) == "ORA-00932"


def test_rowfactory_prepare_statement_prefetchrows(conn):
    cur = conn.cursor()
    sql = "SELECT 1 AS a, 'x' AS b FROM DUAL UNION ALL SELECT 2, 'y' FROM DUAL"
    cur.execute(sql)
    cur.rowfactory = lambda a, b: {"A": a, "B": b}
    assert cur.fetchone() == {"A": 1, "B": "x"}
    assert cur.fetchall() == [{"A": 2, "B": "y"}]
    cur.execute(sql)                                   # the same statement: the factory stays
    assert cur.fetchmany(1) == [{"A": 1, "B": "x"}]
    cur.execute(None)                                  # None: the statement prepared
    assert cur.statement is sql and cur.fetchone() == {"A": 1, "B": "x"}
    cur.prepare("SELECT 3 FROM DUAL")                  # another statement: the factory goes
    assert cur.rowfactory is None
    cur.execute(None)
    assert cur.fetchall() == [(3,)]
    assert raised_code(lambda: conn.cursor().execute(None)) == "DPY-2001"
    assert cur.prefetchrows == 2
    cur.prefetchrows = 0
    assert cur.prefetchrows == 0
    assert cur.lastrowid is None and cur.warning is None
    cur.callproc("dbms_streams.set_tag", [b"\x01"])
    assert cur.statement == "BEGIN dbms_streams.set_tag(:1); END;"


def test_changepassword_and_session_id(dsn):
    with sluice.connect(dsn) as admin:
        admin.cursor().execute('CREATE USER scott IDENTIFIED BY "Old-pw-1"')
        admin.cursor().execute("GRANT CREATE SESSION TO scott")
    with sluice.connect(dsn, user="scott", password="Old-pw-1") as conn:
        assert conn.session_id > 0 and conn.warning is None
        assert raised_code(lambda: conn.changepassword("wrong", "New-pw-2")) == "ORA-28008"
        conn.changepassword("Old-pw-1", "New-pw-2")
    assert raised_code(lambda: sluice.connect(dsn, user="scott", password="Old-pw-1")) == "ORA-01017"
    sluice.connect(dsn, user="scott", password="New-pw-2").close()

