"""LCR$_ROW_RECORD / LCR$_DDL_RECORD and SYS.ANYDATA: the members rule conditions call."""

from datetime import datetime
from decimal import Decimal

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.rules import compile_condition
from sluice.rules.engine.anydata import AnyData
from sluice.sqlfunctions import FUNCTIONS
from sluice.rules.lang.typecheck import MEMBERS
from sluice.streams import lcr as L
from sluice.streams.lcr import DDLLCR, RowLCR, RowUnit


def row(command="UPDATE", old=None, new=None, **kw):
    args = dict(source_database_name="dbs1.net", command_type=command, object_owner="HR",
                object_name="REGIONS", tag=None, transaction_id="1.2.3", scn=100,
                old_values=old, new_values=new)
    args.update(kw)
    return RowLCR.construct(**args)


def ddl(**kw):
    args = dict(source_database_name="dbs1.net", command_type="ALTER TABLE", object_owner="HR",
                object_name="COUNTRIES", object_type="table",
                ddl_text="ALTER TABLE hr.countries ADD (x NUMBER)", logon_user="HR",
                current_schema="HR", base_table_owner="HR", base_table_name="COUNTRIES")
    args.update(kw)
    return DDLLCR.construct(**args)


def test_public_names():
    assert sluice.RowLCR is RowLCR and sluice.DDLLCR is DDLLCR
    assert RowLCR.oracle_type == "SYS.LCR$_ROW_RECORD"
    assert DDLLCR.oracle_type == "SYS.LCR$_DDL_RECORD"


def test_row_lcr_common_members():
    lcr = row(tag=b"\x02", commit_scn=120)
    assert lcr.get_source_database_name() == "DBS1.NET"   # a global name
    assert (lcr.get_object_owner(), lcr.get_object_name()) == ("HR", "REGIONS")
    assert lcr.get_command_type() == "UPDATE"
    assert lcr.get_tag() == b"\x02" and lcr.is_null_tag() == "N"
    assert (lcr.get_transaction_id(), lcr.get_scn(), lcr.get_commit_scn()) == ("1.2.3", 100, 120)
    assert row().is_null_tag() == "Y" and row().get_tag() is None
    assert row(tag="02").get_tag() == b"\x02"          # hex text, as HEXTORAW reads it
    assert row(command="lob  write").get_command_type() == "LOB WRITE"


def test_object_names_keep_their_case():
    lcr = row(object_owner="hr", object_name="Regions")
    assert (lcr.get_object_owner(), lcr.get_object_name()) == ("hr", "Regions")


def test_setters():
    lcr = row()
    lcr.set_object_owner("OE")
    lcr.set_object_name("ORDERS")
    lcr.set_command_type("delete")
    lcr.set_source_database_name("dbs2.net")
    lcr.set_tag(b"\x01")
    assert (lcr.get_object_owner(), lcr.get_object_name(), lcr.get_command_type(),
            lcr.get_source_database_name(), lcr.is_null_tag()) == ("OE", "ORDERS", "DELETE", "DBS2.NET", "N")
    lcr.set_tag(None)
    assert lcr.is_null_tag() == "Y"


def test_row_command_types_are_checked():
    with pytest.raises(DatabaseError) as e:
        row(command="TRUNCATE")
    assert e.value.code == 6502
    with pytest.raises(DatabaseError):
        row().set_command_type("")


def test_get_value_returns_typed_anydata():
    lcr = row(command="INSERT", new={"region_id": 2, "region_name": "Americas",
                                     "created": datetime(2024, 1, 2), "code": b"\x0a",
                                     "note": None})
    v = lcr.get_value("NEW", '"REGION_ID"')
    assert isinstance(v, AnyData) and v.get_type_name() == "SYS.NUMBER" and v.access_number() == 2
    assert lcr.get_value("new", "region_name").access_varchar2() == "Americas"
    assert lcr.get_value("NEW", "CREATED").access_date() == datetime(2024, 1, 2)
    assert lcr.get_value("NEW", "CODE").access_raw() == b"\x0a"
    assert lcr.get_value("NEW", "NOTE").access_number() is None   # present, NULL
    assert lcr.get_value("NEW", "MISSING") is None                  # absent: NULL
    assert lcr.get_value("OLD", "REGION_ID") is None
    with pytest.raises(DatabaseError) as e:
        v.access_varchar2()
    assert e.value.code == 22626


def test_quoted_column_names_are_exact():
    lcr = row(command="INSERT", new={'"MixedCase"': 1})
    assert lcr.get_value("NEW", '"MixedCase"').access_number() == 1
    assert lcr.get_value("NEW", "MixedCase") is None               # unquoted means MIXEDCASE


def test_new_value_of_an_update_falls_back_to_old_with_use_old():
    lcr = row(old={"region_id": 2, "region_name": "A"}, new={"region_name": "B"})
    assert lcr.get_value("NEW", "REGION_ID").access_number() == 2
    assert lcr.get_value("NEW", "REGION_ID", "N") is None
    assert lcr.get_value("NEW", "REGION_NAME").access_varchar2() == "B"
    assert [u.column_name for u in lcr.get_values("NEW")] == ["REGION_ID", "REGION_NAME"]
    assert [u.column_name for u in lcr.get_values("NEW", "N")] == ["REGION_NAME"]
    # only UPDATEs fall back
    assert row(command="DELETE", old={"region_id": 2}).get_value("NEW", "REGION_ID") is None


def test_column_editing():
    lcr = row(old={"a": 1, "b": 2}, new={"a": 3})
    lcr.add_column("NEW", "c", "x")
    lcr.set_value("NEW", "a", 4)
    assert lcr.get_value("NEW", "A").access_number() == 4
    lcr.rename_column("a", "z")
    assert [u.column_name for u in lcr.get_values("OLD")] == ["Z", "B"]
    assert lcr.get_value("NEW", "Z", "N").access_number() == 4
    lcr.delete_column("b", "OLD")
    assert lcr.get_value("OLD", "B") is None
    lcr.set_values("OLD", [RowUnit("q", AnyData.convert_number(1))])
    assert [u.column_name for u in lcr.get_values("OLD")] == ["Q"]
    for call, code in ((lambda: lcr.add_column("NEW", "c", 1), 957),
                       (lambda: lcr.set_value("NEW", "nope", 1), 904),
                       (lambda: lcr.delete_column("nope"), 904),
                       (lambda: lcr.rename_column("z", "c"), 957),
                       (lambda: lcr.get_value("MIDDLE", "a"), 6502)):
        with pytest.raises(DatabaseError) as e:
            call()
        assert e.value.code == code


def test_duplicate_columns_are_refused():
    with pytest.raises(DatabaseError) as e:
        row(new=[("a", 1), ("A", 2)])
    assert e.value.code == 957


def test_extra_attributes():
    lcr = row()
    assert lcr.get_extra_attribute("username") is None
    lcr.set_extra_attribute("username", "SCOTT")
    assert lcr.get_extra_attribute("USERNAME").access_varchar2() == "SCOTT"
    lcr.set_extra_attribute("username", None)
    assert lcr.get_extra_attribute("username") is None
    with pytest.raises(DatabaseError):
        lcr.set_extra_attribute("colour", 1)


def test_compatible_constants_agree_with_the_rule_functions():
    names = ("9_2", "10_1", "10_2", "11_1", "11_2", "12_1", "12_2")
    values = [getattr(L, f"COMPATIBLE_{n}") for n in names]
    assert values == [FUNCTIONS[f"DBMS_STREAMS.COMPATIBLE_{n}"].impl() for n in names]
    assert values == sorted(values)


def test_get_compatible():
    assert row().get_compatible() == L.COMPATIBLE_9_2
    assert ddl().get_compatible() == L.COMPATIBLE_9_2           # always, seed 000
    assert row(command="INSERT", new={"f": AnyData.convert_bdouble(1.5)}).get_compatible() == L.COMPATIBLE_10_1
    lcr = row()
    lcr.set_extra_attribute("tx_name", "t")
    assert lcr.get_compatible() == L.COMPATIBLE_10_2
    rule = compile_condition(":dml.GET_COMPATIBLE() > DBMS_STREAMS.COMPATIBLE_9_2()",
                             _Vars())
    assert rule({"DML": row()}) is False and rule({"DML": lcr}) is True


class _Vars:
    def bind(self, name):
        return lambda ctx: ctx.get(name)

    def identifier(self, path):
        raise AssertionError(path)


def test_ddl_lcr_members():
    lcr = ddl()
    assert (lcr.get_object_type(), lcr.get_ddl_text(), lcr.get_logon_user(),
            lcr.get_current_schema(), lcr.get_base_table_owner(), lcr.get_base_table_name()) == (
        "TABLE", "ALTER TABLE hr.countries ADD (x NUMBER)", "HR", "HR", "HR", "COUNTRIES")
    lcr.set_base_table_name("X")
    lcr.set_object_type("index")
    assert (lcr.get_base_table_name(), lcr.get_object_type()) == ("X", "INDEX")
    assert ddl(command_type="CREATE TABLE").get_command_type() == "CREATE TABLE"


def test_equality():
    assert row(old={"a": 1}) == row(old={"a": 1})
    assert row(old={"a": 1}) != row(old={"a": 2})
    assert ddl() == ddl() and ddl() != ddl(ddl_text="x")


@pytest.mark.parametrize("type_name", sorted(MEMBERS))
def test_every_member_a_condition_may_call_exists(type_name):
    """The rule checker's member table (what CREATE_RULE accepts) and the Python
    classes (what evaluation calls) must agree."""
    cls = {"SYS.LCR$_ROW_RECORD": RowLCR, "SYS.LCR$_DDL_RECORD": DDLLCR, "SYS.ANYDATA": AnyData}[type_name]
    snake = {"ACCESSNUMBER": "access_number", "ACCESSVARCHAR2": "access_varchar2",
             "ACCESSCHAR": "access_char", "ACCESSNVARCHAR2": "access_nvarchar2",
             "ACCESSNCHAR": "access_nchar", "ACCESSCLOB": "access_clob", "ACCESSDATE": "access_date",
             "ACCESSTIMESTAMP": "access_timestamp", "ACCESSRAW": "access_raw",
             "ACCESSBLOB": "access_blob", "ACCESSBFLOAT": "access_bfloat",
             "ACCESSBDOUBLE": "access_bdouble", "GETTYPENAME": "get_type_name"}
    for member in MEMBERS[type_name]:
        assert callable(getattr(cls, snake.get(member, member.lower()), None)), member


def test_anydata_conversions():
    assert AnyData.of(Decimal("1.5")).get_type_name() == "SYS.NUMBER"
    assert AnyData.of("").access_varchar2() is None
    assert AnyData.of(datetime(2024, 1, 1, 1, 2, 3, 5)).get_type_name() == "SYS.TIMESTAMP"
    assert AnyData.convert_timestamp(datetime(2024, 1, 1)).access_date() == datetime(2024, 1, 1)
    assert AnyData.convert_number(None).access_number() is None
    assert AnyData.of(row()).access_object() == row()
    with pytest.raises(DatabaseError):
        AnyData.convert_number("1")
    with pytest.raises(DatabaseError):
        AnyData.of(object())
    with pytest.raises(AttributeError):
        AnyData.of(1)._value = 2
