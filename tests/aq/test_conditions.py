"""Seed 003 "Dequeue Methods": dequeue conditions on message properties and payload."""

import pytest

import sluice
from tests.conftest import make_queue, nowait


def _orders(conn):
    conn.create_type("ORDER_T", "OBJECT", [("ID", "NUMBER"), ("PRICE", "NUMBER"),
                                           ("REGION", "VARCHAR2(20)")], None, None, False)
    make_queue(conn, payload="ORDER_T")
    t = conn.gettype("ORDER_T")
    q = conn.queue("Q", t)
    for i, (price, region, prio) in enumerate([(100, "EU", 1), (45000, "US", 9), (31000, None, 9),
                                              (50, "EU", 9)]):
        o = t.newobject()
        o.ID, o.PRICE, o.REGION = i, price, region
        q.enqone(conn.msgproperties(payload=o, priority=prio, correlation=f"C{i}"))
    conn.commit()
    return nowait(q, mode=sluice.DEQ_BROWSE, navigation=sluice.DEQ_FIRST_MSG)


def _ids(q, condition):
    q.deqoptions.condition = condition
    return [m.payload.ID for m in q.deqmany(10)]


def test_condition_on_message_properties(conn):
    q = _orders(conn)
    assert _ids(q, "priority = 9") == [1, 2, 3]
    assert _ids(q, "corrid IN ('C0', 'C3')") == [0, 3]
    assert _ids(q, "priority = 9 AND corrid LIKE 'C_'") == [1, 2, 3]


def test_condition_on_payload_attributes(conn):
    q = _orders(conn)
    assert _ids(q, "tab.user_data.PRICE > 30000") == [1, 2]
    assert _ids(q, "tab.user_data.price > 30000 and tab.user_data.region = 'US'") == [1]
    assert _ids(q, "tab.user_data.region IS NULL") == [2]
    assert _ids(q, "tab.user_data IS NOT NULL") == [0, 1, 2, 3]
    assert _ids(q, "NOT (tab.user_data.region = 'EU')") == [1]   # NULL region: unknown, not TRUE


def test_condition_with_remove_takes_only_matching(conn):
    q = _orders(conn)
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.condition = "tab.user_data.PRICE < 1000"
    assert [m.payload.ID for m in q.deqmany(10)] == [0, 3]
    conn.commit()
    q.deqoptions.condition = None
    assert [m.payload.ID for m in q.deqmany(10)] == [1, 2]


def test_unknown_identifier_in_condition_raises_904(conn):
    q = _orders(conn)
    for bad in ("no_such_column = 1", "tab.user_data.NOPE = 1"):
        q.deqoptions.condition = bad
        with pytest.raises(sluice.DatabaseError) as e:
            q.deqone()
        assert e.value.full_code == "ORA-00904"


def test_malformed_condition_reports_position(conn):
    q = _orders(conn)
    q.deqoptions.condition = "priority = "
    with pytest.raises(sluice.DatabaseError) as e:
        q.deqone()
    assert "column" in str(e.value)


def test_condition_on_json_payload(conn):
    make_queue(conn, payload="JSON")
    q = conn.queue("Q", "JSON")
    for doc in ({"kind": "a", "n": 1}, {"kind": "b", "n": 2}):
        q.enqone(conn.msgproperties(payload=doc))
    conn.commit()
    nowait(q).deqoptions.condition = "tab.user_data.kind = 'b'"
    assert q.deqone().payload == {"kind": "b", "n": 2}


def test_conditions_run_in_the_stores_sql_where_they_can(conn, monkeypatch):
    """Issue 3: conditions run inside the store's SQL where they can — the Python
    evaluator is not asked about committed messages then."""
    from sluice.aq import conditions
    q = _orders(conn)
    codec = conn.context.catalog.codec(conn.context.catalog.queue("Q").table)
    qi = conn.context.catalog.queue("Q")
    dialect = conn.context.store.dialect
    assert conditions.compile_sql_condition("tab.user_data.price > 30000 and priority = 9", qi, codec,
                                            dialect, {}) is not None
    assert conditions.compile_sql_condition("enq_time > SYSDATE - 1", qi, codec, dialect, {}) is None

    def refuse(*a, **k):
        raise AssertionError("evaluated in Python")
    monkeypatch.setattr(conditions._Row, "__init__", refuse)
    assert _ids(q, "tab.user_data.price > 30000 and tab.user_data.region LIKE 'U%'") == [1]
