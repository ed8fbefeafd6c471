"""Payload types of a queue table: RAW, JSON, object types, XMLTYPE, JMS, ANYDATA."""

import datetime as dt
import decimal

import pytest

import sluice
from sluice import objtypes as ot
from tests.conftest import make_queue, nowait, table_rows


def _book_type(conn):
    conn.create_type("UDT_BOOK", "OBJECT", [("TITLE", "VARCHAR2(100)"), ("AUTHORS", "VARCHAR2(100)"),
                                            ("PRICE", "NUMBER(5,2)")], None, None, False)
    return conn.gettype("UDT_BOOK")


def test_json_queue(conn):
    make_queue(conn, payload="JSON")
    q = conn.queue("Q", "JSON")
    doc = {"id": 7, "items": [1, 2.5, "x", None, True], "when": dt.datetime(2026, 1, 2, 3, 4, 5)}
    q.enqone(conn.msgproperties(payload=doc))
    conn.commit()
    assert nowait(q).deqone().payload == doc


def test_object_type_queue_python_oracledb_style(conn):
    books_type = _book_type(conn)
    make_queue(conn, payload="UDT_BOOK")
    q = conn.queue("Q", books_type)
    book = books_type.newobject()
    book.TITLE = "Quick Brown Fox"
    book.AUTHORS = "The Dog"
    book.PRICE = 123
    q.enqone(conn.msgproperties(payload=book))
    conn.commit()
    got = nowait(q).deqone().payload
    assert isinstance(got, ot.DbObject) and got.type == books_type
    assert (got.TITLE, got.AUTHORS, got.PRICE) == ("Quick Brown Fox", "The Dog", 123)
    # the payload is queryable with SQL (message warehouse)
    rows = conn.query("SELECT JSON_VALUE(USER_DATA, '$.TITLE') FROM AQ$Q_QT", None)[1]
    assert rows == [("Quick Brown Fox",)]


def test_object_of_another_type_is_refused_and_nothing_is_stored(conn):
    _book_type(conn)
    conn.create_type("OTHER_T", "OBJECT", [("X", "NUMBER")], None, None, False)
    make_queue(conn, payload="UDT_BOOK")
    q = conn.queue("Q", conn.gettype("UDT_BOOK"))
    other = conn.gettype("OTHER_T").newobject()
    good = conn.gettype("UDT_BOOK").newobject()
    with pytest.raises(sluice.DatabaseError) as e:
        q.enqmany([conn.msgproperties(payload=good), conn.msgproperties(payload=other)])
    assert e.value.full_code == "DPY-2062"    # python-oracledb's check before it sends
    with pytest.raises(sluice.DatabaseError):
        q.enqone(conn.msgproperties(payload=b"raw bytes"))
    conn.commit()
    assert table_rows(conn, "Q_QT") == []


def test_attribute_values_are_checked_against_the_type(conn):
    books_type = _book_type(conn)
    book = books_type.newobject()
    with pytest.raises(sluice.DatabaseError) as e:
        book.TITLE = "x" * 101
    assert e.value.full_code == "ORA-12899"
    with pytest.raises(sluice.DatabaseError) as e:
        book.PRICE = 1234.5   # NUMBER(5,2)
    assert e.value.full_code == "ORA-01438"


def test_xmltype_queue(conn):
    make_queue(conn, payload="SYS.XMLTYPE")
    q = conn.queue("Q", "XMLTYPE")
    q.enqone(conn.msgproperties(payload="<order id='1'><item>pen</item></order>"))
    conn.commit()
    assert nowait(q).deqone().payload == "<order id='1'><item>pen</item></order>"
    with pytest.raises(sluice.DatabaseError) as e:
        q.enqone(conn.msgproperties(payload="<not-closed>"))
    assert e.value.full_code == "ORA-25215"


def test_jms_text_message_queue(conn):
    make_queue(conn, payload="SYS.AQ$_JMS_TEXT_MESSAGE")
    jms_type = conn.gettype("SYS.AQ$_JMS_TEXT_MESSAGE")
    msg = ot.jms_text_message(conn.context.catalog, "hello jms", type="greeting", appid="app1")
    q = conn.queue("Q", jms_type)
    q.enqone(conn.msgproperties(payload=msg))
    conn.commit()
    got = nowait(q).deqone().payload
    assert ot.jms_text_of(got) == "hello jms"
    assert got.HEADER.APPID == "app1"


def test_jms_map_message_queue(conn):
    make_queue(conn, payload="SYS.AQ$_JMS_MAP_MESSAGE")
    msg = ot.jms_map_message(conn.context.catalog, {"sku": "A-1", "qty": 3})
    q = conn.queue("Q", conn.gettype("SYS.AQ$_JMS_MAP_MESSAGE"))
    q.enqone(conn.msgproperties(payload=msg))
    conn.commit()
    assert ot.jms_map_of(nowait(q).deqone().payload) == {"sku": "A-1", "qty": 3}


def test_anydata_queue_holds_several_types(conn):
    _book_type(conn)
    make_queue(conn, payload="SYS.ANYDATA")
    q = conn.queue("Q")
    book = conn.gettype("UDT_BOOK").newobject()
    book.TITLE = "t"
    for p in (b"raw", {"k": decimal.Decimal("1.5")}, book):
        q.enqone(conn.msgproperties(payload=p))
    conn.commit()
    got = [m.payload for m in nowait(q).deqmany(10)]
    assert got[0] == b"raw" and got[1] == {"k": decimal.Decimal("1.5")}
    assert got[2].TITLE == "t"


def test_queue_payload_type_must_match_the_queue_table(conn):
    make_queue(conn, payload="RAW")
    with pytest.raises(sluice.DatabaseError) as e:
        conn.queue("Q", "JSON").enqone(conn.msgproperties(payload={"a": 1}))
    assert e.value.full_code == "ORA-25215"


def test_type_used_by_a_queue_table_cannot_be_dropped(conn):
    _book_type(conn)
    make_queue(conn, payload="UDT_BOOK")
    with pytest.raises(sluice.DatabaseError) as e:
        conn.drop_type("UDT_BOOK")
    assert e.value.full_code == "ORA-02303"
