"""JSON payloads: a user's object whose keys look like the stored form's type tags
($timestamp, $date, $number, $raw) comes back exactly as enqueued, and stored JSON is
always readable (old stored forms included)."""

import datetime as dt
import decimal

import pytest

import sluice

from sluice.aq.payload import display_json, dumps_json, loads_json
from tests.conftest import make_queue, nowait

_TAG_SHAPED = [
    {"$date": "2020-01-01"}, {"$date": "bad"}, {"$date": 5},
    {"$timestamp": "2020-01-01T10:00:00"}, {"$timestamp": 5}, {"$timestamp": "x"},
    {"$number": "1.5"}, {"$number": "abc"}, {"$number": None},
    {"$raw": "AB"}, {"$raw": "zz"}, {"$raw": ["AB"]},
    {"$x": 1, "$$y": {"$raw": "AB"}, "z": "$w"},
    [{"$date": "bad"}, {"$raw": "zz"}, "$date", {"a": {"$number": "abc"}}],
    {"$date": dt.date(2020, 1, 1)}, {"k": {"$$$date": decimal.Decimal("1.50")}},
    {"$raw": b"\x01"}, {"$timestamp": dt.datetime(2020, 1, 1, 1, 2, 3)},
    {"$interval": "P1DT0.000000S"}, {"$interval": "bad"}, {"$interval": dt.timedelta(days=-1, seconds=5)},
    [dt.timedelta(days=8.5), dt.timedelta(microseconds=-1)],
    # "$" in values, in keys with escapes, in text that looks like JSON: only keys escape
    {'$a"b\\': 1, "x": '{"$y":1}', "p": "$5", "arr": ["$z", {"$w": "$v"}], "é$": {"$": ""}},
]


@pytest.mark.parametrize("doc", _TAG_SHAPED, ids=range(len(_TAG_SHAPED)))
def test_tag_shaped_values_round_trip_in_the_stored_form(doc):
    assert loads_json(dumps_json(doc)) == doc
    assert display_json(doc) == display_json(loads_json(dumps_json(doc)))


def test_user_dollar_keys_are_stored_escaped_and_tags_are_not():
    assert dumps_json({"$date": "2020-01-01"}) == '{"$$date":"2020-01-01"}'
    assert dumps_json({"d": dt.date(2020, 1, 1)}) == '{"d":{"$date":"2020-01-01"}}'
    assert dumps_json(["$date", {"a": "$b"}]) == '["$date",{"a":"$b"}]'
    # people and IDAP clients see the user's keys as they are
    assert display_json({"$date": "x"}) == '{"$date":"x"}'


def test_forms_stored_before_keys_were_escaped_still_read():
    # tags written by the encoder, in their exact form: the values they stood for
    assert loads_json('{"$date":"2020-01-01"}') == dt.date(2020, 1, 1)
    assert loads_json('{"$timestamp":"2020-01-01T10:00:00"}') == dt.datetime(2020, 1, 1, 10)
    assert loads_json('{"$number":"1.50"}') == decimal.Decimal("1.50")
    assert loads_json('{"$raw":"0AFF"}') == b"\x0a\xff"
    # a user's object stored as it was: comes back as it was (it used to raise)
    for text, doc in [('{"$date":"bad"}', {"$date": "bad"}), ('{"$raw":"zz"}', {"$raw": "zz"}),
                      ('{"$number":"abc"}', {"$number": "abc"}), ('{"$timestamp":5}', {"$timestamp": 5}),
                      ('{"$date":"20200101"}', {"$date": "20200101"}),   # not the form written
                      ('{"$raw":"0aff"}', {"$raw": "0aff"}), ('{"$x":1,"y":2}', {"$x": 1, "y": 2})]:
        assert loads_json(text) == doc


def test_json_queue_returns_tag_shaped_objects_as_enqueued(conn):
    make_queue(conn, payload="JSON")
    q = conn.queue("Q", "JSON")
    q.enqmany([conn.msgproperties(payload=d) for d in _TAG_SHAPED])
    conn.commit()
    got = nowait(q).deqmany(len(_TAG_SHAPED) + 1)
    assert [m.payload for m in got] == _TAG_SHAPED
    conn.commit()


def test_anydata_queue_returns_tag_shaped_objects_as_enqueued(conn):
    make_queue(conn, payload="SYS.ANYDATA")
    q = conn.queue("Q", "SYS.ANYDATA")
    for d in _TAG_SHAPED:
        q.enqone(conn.msgproperties(payload=d))
    conn.commit()
    assert [nowait(q).deqone().payload for _ in _TAG_SHAPED] == _TAG_SHAPED


def test_condition_on_a_json_attribute_beside_tag_shaped_objects(conn):
    make_queue(conn, payload="JSON")
    q = conn.queue("Q", "JSON")
    docs = [{"kind": "a", "$date": "bad"}, {"kind": "b", "$raw": "zz", "d": dt.date(2020, 1, 2)}]
    for doc in docs:
        q.enqone(conn.msgproperties(payload=doc))
    conn.commit()
    nowait(q).deqoptions.condition = "tab.user_data.d = TO_DATE('2020-01-02', 'YYYY-MM-DD')"
    assert q.deqone().payload == docs[1]
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG   # the condition changed: from the start
    q.deqoptions.condition = "tab.user_data.kind = 'a'"
    assert q.deqone().payload == docs[0]


def test_idap_shows_a_users_dollar_keys_as_enqueued():
    from lxml import etree
    from sluice.idap.payload import xml_from_value
    parent = etree.Element("message_payload")
    xml_from_value(parent, {"$date": "bad", "d": dt.date(2020, 1, 1)}, "JSON", None)
    assert parent[0].text == '{"$date":"bad","d":{"$date":"2020-01-01"}}'
