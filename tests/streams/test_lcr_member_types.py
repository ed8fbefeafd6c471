"""LCR members have LCR$_ROW_RECORD's / LCR$_DDL_RECORD's types (VARCHAR2, NUMBER SCNs, a
DATE source time): a value of another type is ORA-06502 when it is given -- construct
or a setter -- and the LCR is unchanged, instead of failing later when it is enqueued."""

import datetime as dt
import decimal
import json

import pytest

import sluice
from sluice.streams.lcr import DDLLCR, RowLCR
from sluice.streams.lcrcodec import lcr_from_document, lcr_to_document
from tests.conftest import make_queue, nowait, table_rows


def _row(**kw):
    args = dict(source_database_name="D", command_type="INSERT", object_owner="A",
                object_name="B", new_values=[("C", 1)])
    args.update(kw)
    return RowLCR.construct(**args)


def _ddl(**kw):
    args = dict(source_database_name="D", command_type="CREATE TABLE", object_owner="A",
                object_name="B", object_type="TABLE", ddl_text="CREATE TABLE B (C NUMBER)")
    args.update(kw)
    return DDLLCR.construct(**args)


def _refused(fn):
    with pytest.raises(sluice.DatabaseError) as e:
        fn()
    assert e.value.full_code == "ORA-06502"


_TEXT_SETTERS = ["set_object_owner", "set_object_name", "set_source_database_name"]
_DDL_SETTERS = ["set_object_type", "set_ddl_text", "set_logon_user", "set_current_schema",
                "set_base_table_owner", "set_base_table_name"]


def _id(value) -> str:
    """A test id the same in every xdist worker (an object()'s repr holds its address)."""
    return repr(value).split(" at 0x")[0]


@pytest.mark.parametrize("bad", [object(), 5, [1], b"A", "A\ud800"], ids=_id)
def test_setters_refuse_a_value_of_another_type_and_change_nothing(bad):
    for lcr, setters in ((_row(), _TEXT_SETTERS), (_ddl(), _TEXT_SETTERS + _DDL_SETTERS)):
        before = lcr_to_document(lcr)
        for name in setters:
            _refused(lambda: getattr(lcr, name)(bad))
        assert lcr_to_document(lcr) == before


@pytest.mark.parametrize("kw", [dict(object_owner=5), dict(object_name=object()),
                                dict(source_database_name=5), dict(transaction_id=7),
                                dict(scn="x"), dict(scn=True), dict(scn=1.5),
                                dict(scn=float("nan")), dict(commit_scn="1.5"),
                                dict(source_time="x"), dict(source_time=5)], ids=_id)
def test_construct_refuses_a_value_of_another_type(kw):
    _refused(lambda: _row(**kw))
    _refused(lambda: _ddl(**kw))


def test_ddl_construct_refuses_non_text_ddl_members():
    for name in ("object_type", "ddl_text", "logon_user", "current_schema",
                 "base_table_owner", "base_table_name"):
        _refused(lambda: _ddl(**{name: 5}))


def test_members_of_the_right_type_are_taken():
    lcr = _row(scn=decimal.Decimal("7"), commit_scn=8.0, source_time=dt.date(2020, 1, 2),
               object_owner="")
    assert (lcr.get_scn(), lcr.get_commit_scn()) == (7, 8)
    assert _row(scn=" 12 ", commit_scn="13").get_scn() == 12     # text naming a whole number, as PL/SQL converts it
    assert lcr.get_source_time() == dt.datetime(2020, 1, 2)
    assert lcr.get_object_owner() is None      # '' is NULL
    lcr.set_object_owner("hr")
    assert lcr.get_object_owner() == "hr"


def test_ddl_lcr_stored_before_the_checks_is_still_read():
    doc = lcr_to_document(_ddl())
    doc.update(ddl=5, own=5, scn="x")    # what an unchecked setter let through
    got = lcr_from_document(json.loads(json.dumps(doc)))
    assert (got.get_ddl_text(), got.get_object_owner(), got.get_scn()) == (5, 5, "x")


def test_refused_member_leaves_the_lcr_enqueueable(conn):
    make_queue(conn, payload="SYS.ANYDATA")
    q = conn.queue("Q", "SYS.ANYDATA")
    lcr = _row()
    _refused(lambda: lcr.set_object_owner(object()))
    q.enqone(conn.msgproperties(payload=lcr))
    conn.commit()
    assert nowait(q).deqone().payload == _row()
    conn.commit()
    assert table_rows(conn, "Q_QT") == []
