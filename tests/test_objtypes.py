"""Oracle object types: datatype parsing, DbObjectType/DbObject behaviour
(python-oracledb names), Oracle's validation errors, the JSON storage codec,
type specs, and the SYS AQ/JMS types."""

from __future__ import annotations

import copy
import datetime as dt
import json
import pickle
from decimal import Decimal

import pytest

from sluice import objtypes as O
from sluice.errors import DatabaseError
from sluice.model import Agent
from sluice.objtypes import (AttrType, DbObject, DbObjectType, SimpleTypeRegistry,
                             build_collection_type, build_object_type, parse_datatype)
from sluice.objtypes.storage import _encode_decimal


def ora_code(excinfo: pytest.ExceptionInfo) -> int:
    assert isinstance(excinfo.value, DatabaseError)
    assert str(excinfo.value).startswith(f"ORA-{excinfo.value.code:05d}: ")
    return excinfo.value.code


@pytest.fixture
def reg() -> SimpleTypeRegistry:
    r = SimpleTypeRegistry()
    r.create_object_type("scott", "address_t", [("street", "VARCHAR2(20)"), ("zip", "CHAR(5)")])
    r.create_collection_type("scott", "tags_t", "TABLE", "VARCHAR2(5)")
    r.create_collection_type("scott", "scores_t", "VARRAY", "NUMBER(3)", 3)
    r.create_collection_type("scott", "addrs_t", "VARRAY", "address_t", 2)
    r.create_object_type("scott", "book_t", [
        ("title", "VARCHAR2(10)"), ("price", "NUMBER(7,2)"), ("qty", "INTEGER"),
        ("ratio", "NUMBER"), ("code", "RAW(4)"), ("published", "DATE"),
        ("stamped", "TIMESTAMP(3) WITH TIME ZONE"), ("notes", "CLOB"), ("cover", "BLOB"),
        ("in_print", "BOOLEAN"), ("weight", "BINARY_DOUBLE"), ("approx", "BINARY_FLOAT"),
        ("addr", "address_t"), ("tags", "tags_t"), ("scores", "scott.scores_t"),
        ('"Mixed"', "NVARCHAR2(3)"), ("wide", "VARCHAR2(3 CHAR)"),
    ])
    return r


@pytest.fixture
def book_t(reg: SimpleTypeRegistry) -> DbObjectType:
    return reg.get_type("SCOTT.BOOK_T")


@pytest.fixture
def book(book_t: DbObjectType) -> DbObject:
    return book_t.newobject()


# -- 1. datatype parsing --------------------------------------------------------


@pytest.mark.parametrize("text, expected, canonical_text", [
    ("VARCHAR2(10)", AttrType("VARCHAR2", length=10), "VARCHAR2(10)"),
    ("varchar2( 10 byte )", AttrType("VARCHAR2", length=10), "VARCHAR2(10)"),
    ("VARCHAR2(10 CHAR)", AttrType("VARCHAR2", length=10, char_semantics=True), "VARCHAR2(10 CHAR)"),
    ("VARCHAR(7)", AttrType("VARCHAR2", length=7), "VARCHAR2(7)"),
    ("NVARCHAR2(5)", AttrType("NVARCHAR2", length=5, char_semantics=True), "NVARCHAR2(5)"),
    ("CHAR(3)", AttrType("CHAR", length=3), "CHAR(3)"),
    ("CHAR", AttrType("CHAR", length=1), "CHAR(1)"),
    ("NCHAR(2)", AttrType("NCHAR", length=2, char_semantics=True), "NCHAR(2)"),
    ("NUMBER", AttrType("NUMBER"), "NUMBER"),
    ("NUMBER(5)", AttrType("NUMBER", precision=5, scale=0), "NUMBER(5)"),
    ("number(7, 2)", AttrType("NUMBER", precision=7, scale=2), "NUMBER(7,2)"),
    ("NUMBER(5,-2)", AttrType("NUMBER", precision=5, scale=-2), "NUMBER(5,-2)"),
    ("NUMBER(*,2)", AttrType("NUMBER", scale=2), "NUMBER(*,2)"),
    ("INTEGER", AttrType("NUMBER", scale=0), "INTEGER"),
    ("INT", AttrType("NUMBER", scale=0), "INTEGER"),
    ("SMALLINT", AttrType("NUMBER", scale=0), "INTEGER"),
    ("DECIMAL(9,3)", AttrType("NUMBER", precision=9, scale=3), "NUMBER(9,3)"),
    ("FLOAT", AttrType("FLOAT", precision=126), "FLOAT(126)"),
    ("FLOAT(10)", AttrType("FLOAT", precision=10), "FLOAT(10)"),
    ("DOUBLE PRECISION", AttrType("FLOAT", precision=126), "FLOAT(126)"),
    ("BINARY_FLOAT", AttrType("BINARY_FLOAT"), "BINARY_FLOAT"),
    ("BINARY_DOUBLE", AttrType("BINARY_DOUBLE"), "BINARY_DOUBLE"),
    ("DATE", AttrType("DATE"), "DATE"),
    ("TIMESTAMP", AttrType("TIMESTAMP", fsp=6), "TIMESTAMP"),
    ("TIMESTAMP(3)", AttrType("TIMESTAMP", fsp=3), "TIMESTAMP(3)"),
    ("timestamp with time zone", AttrType("TIMESTAMP WITH TIME ZONE", fsp=6),
     "TIMESTAMP WITH TIME ZONE"),
    ("TIMESTAMP(0) WITH LOCAL TIME ZONE", AttrType("TIMESTAMP WITH LOCAL TIME ZONE", fsp=0),
     "TIMESTAMP(0) WITH LOCAL TIME ZONE"),
    ("RAW(16)", AttrType("RAW", length=16), "RAW(16)"),
    ("CLOB", AttrType("CLOB"), "CLOB"),
    ("NCLOB", AttrType("NCLOB"), "NCLOB"),
    ("BLOB", AttrType("BLOB"), "BLOB"),
    ("BOOLEAN", AttrType("BOOLEAN"), "BOOLEAN"),
    ("address_t", AttrType("OBJECT", type_name="ADDRESS_T"), "ADDRESS_T"),
    ("scott.address_t", AttrType("OBJECT", type_schema="SCOTT", type_name="ADDRESS_T"),
     "SCOTT.ADDRESS_T"),
    ("SYS.AQ$_AGENT", AttrType("OBJECT", type_schema="SYS", type_name="AQ$_AGENT"), "SYS.AQ$_AGENT"),
    ('"Scott"."Addr"', AttrType("OBJECT", type_schema="Scott", type_name="Addr"), '"Scott"."Addr"'),
    ('"DATE"', AttrType("OBJECT", type_name="DATE"), '"DATE"'),
])
def test_parse_datatype(text, expected, canonical_text):
    parsed = parse_datatype(text)
    assert parsed == expected
    assert parsed.text == canonical_text == str(parsed)
    assert parse_datatype(parsed.text) == parsed  # the text form round-trips


@pytest.mark.parametrize("text", [
    "", "   ", "VARCHAR2", "VARCHAR2()", "VARCHAR2(0)", "VARCHAR2(32768)", "VARCHAR2(10 BYTES)",
    "VARCHAR3(10)", "NUMBER(39)", "NUMBER(0)", "NUMBER(5,128)", "NUMBER(5,", "CHAR(2001)",
    "TIMESTAMP(10)", "TIMESTAMP WITH ZONE", "RAW", "DOUBLE", "NUMBER(5) NOT NULL",
    "REF address_t", "scott.", "a.b.c", "VARCHAR2(10", "NUMBER;", "FLOAT(127)", 42,
])
def test_parse_datatype_rejects_with_ora_00902(text):
    with pytest.raises(DatabaseError) as e:
        parse_datatype(text)
    assert ora_code(e) == 902
    assert "invalid datatype" in str(e.value)


def test_dbtype_attributes_of_parsed_types():
    assert parse_datatype("VARCHAR2(1)").dbtype is O.DB_TYPE_VARCHAR
    assert parse_datatype("INTEGER").dbtype is O.DB_TYPE_NUMBER
    assert parse_datatype("FLOAT").dbtype is O.DB_TYPE_NUMBER
    assert parse_datatype("TIMESTAMP WITH TIME ZONE").dbtype is O.DB_TYPE_TIMESTAMP_TZ
    assert parse_datatype("x_t").dbtype is O.DB_TYPE_OBJECT
    assert repr(O.DB_TYPE_CLOB) == "<DbType DB_TYPE_CLOB>"
    assert O.DB_TYPE_BINARY_DOUBLE.name == "DB_TYPE_BINARY_DOUBLE"


def test_parse_attribute_list():
    text = '(title VARCHAR2(100), price NUMBER(7, 2), "Odd, name" NUMBER, addr scott.address_t)'
    assert O.parse_attribute_list(text) == [
        ("title", "VARCHAR2(100)"), ("price", "NUMBER(7, 2)"), ('"Odd, name"', "NUMBER"),
        ("addr", "scott.address_t")]
    with pytest.raises(DatabaseError) as e:
        O.parse_attribute_list("(title)")
    assert ora_code(e) == 902


# -- 2. DbObjectType ------------------------------------------------------------


def test_object_type_metadata(book_t: DbObjectType, reg):
    assert (book_t.schema, book_t.name, book_t.package_name) == ("SCOTT", "BOOK_T", None)
    assert book_t.iscollection is False and book_t.element_type is None
    assert book_t.kind == "OBJECT" and book_t.max_elements is None
    names = [a.name for a in book_t.attributes]
    assert names[:3] == ["TITLE", "PRICE", "QTY"] and "Mixed" in names
    by = {a.name: a for a in book_t.attributes}
    assert by["TITLE"].type is O.DB_TYPE_VARCHAR and by["TITLE"].max_size == 10
    assert (by["PRICE"].precision, by["PRICE"].scale, by["PRICE"].max_size) == (7, 2, None)
    assert (by["RATIO"].precision, by["RATIO"].scale) == (None, None)
    assert (by["QTY"].precision, by["QTY"].scale) == (38, 0)
    assert by["CODE"].type is O.DB_TYPE_RAW and by["CODE"].max_size == 4
    assert by["PUBLISHED"].type is O.DB_TYPE_DATE
    assert by["NOTES"].type is O.DB_TYPE_CLOB and by["COVER"].type is O.DB_TYPE_BLOB
    assert by["IN_PRINT"].type is O.DB_TYPE_BOOLEAN
    assert by["WEIGHT"].type is O.DB_TYPE_BINARY_DOUBLE
    assert by["ADDR"].type == reg.get_type("SCOTT.ADDRESS_T")
    assert by["TAGS"].type.iscollection
    assert by["ADDR"].datatype.text == "SCOTT.ADDRESS_T"  # resolved and qualified
    assert repr(by["TITLE"]) == "<sluice.DbObjectAttr TITLE>"
    assert repr(book_t) == "<sluice.DbObjectType SCOTT.BOOK_T>"
    assert book_t._get_full_name() == book_t.qualified_name == "SCOTT.BOOK_T"
    book_t.attributes.clear()  # a copy: the type cannot be changed through it
    assert len(book_t.attributes) == 17


def test_collection_type_metadata(reg):
    tags, scores, addrs = (reg.get_type(f"SCOTT.{n}") for n in ("TAGS_T", "SCORES_T", "ADDRS_T"))
    assert tags.iscollection and tags.kind == "TABLE" and tags.max_elements is None
    assert tags.element_type is O.DB_TYPE_VARCHAR and tags.attributes == []
    assert scores.kind == "VARRAY" and scores.max_elements == 3
    assert addrs.element_type == reg.get_type("SCOTT.ADDRESS_T")


def test_type_equality_is_by_qualified_name(reg, book_t):
    again = build_object_type("SCOTT", "BOOK_T", [("x", "NUMBER")], reg)
    assert again == book_t and hash(again) == hash(book_t)
    assert book_t != reg.get_type("SCOTT.ADDRESS_T")
    assert book_t != "SCOTT.BOOK_T"


def test_newobject_and_call(book_t, reg):
    obj = book_t.newobject()
    assert isinstance(obj, DbObject) and obj.type is book_t
    assert all(getattr(obj, a.name) is None for a in book_t.attributes)
    assert book_t() == obj
    tags = reg.get_type("SCOTT.TAGS_T")
    assert tags(["a", "b"]).aslist() == ["a", "b"] == tags.newobject(["a", "b"]).aslist()
    with pytest.raises(DatabaseError) as e:  # only collections take a sequence
        book_t.newobject([1])
    assert ora_code(e) == 932


def test_build_errors(reg):
    with pytest.raises(DatabaseError) as e:
        build_object_type("scott", "t", [("a", "NUMBER"), ("A", "DATE")], reg)
    assert ora_code(e) == 957
    with pytest.raises(DatabaseError) as e:
        build_object_type("scott", "t", [("a", "no_such_t")], reg)
    assert ora_code(e) == 902 and "SCOTT.NO_SUCH_T" in str(e.value)
    with pytest.raises(DatabaseError) as e:
        build_object_type("scott", "address_t", [("a", "address_t")], reg)
    assert ora_code(e) == 902 and "itself" in str(e.value)
    with pytest.raises(DatabaseError) as e:
        build_object_type("scott", "t", [], reg)
    assert ora_code(e) == 902
    for kind, limit in [("LIST", None), ("VARRAY", 0), ("VARRAY", None), ("TABLE", 5)]:
        with pytest.raises(DatabaseError) as e:
            build_collection_type("scott", "c", kind, "NUMBER", limit, reg)
        assert ora_code(e) == 902
    assert build_collection_type("scott", "c", "varying array", "NUMBER", 2, reg).kind == "VARRAY"


def test_unqualified_names_fall_back_to_sys(reg):
    t = build_object_type("scott", "msg_t", [("sender", "aq$_agent")], reg)
    assert t.attributes[0].type == reg.get_type("SYS.AQ$_AGENT")


def test_quoted_names_keep_case(reg):
    t = reg.create_object_type('"Scott"', '"Odd"', [('"lower"', "NUMBER"), ("upper", "NUMBER")])
    assert (t.schema, t.name) == ("Scott", "Odd")
    obj = t.newobject()
    obj.lower = 1
    obj.UPPER = 2
    assert obj.asdict() == {"lower": 1, "UPPER": 2}
    holder = reg.create_object_type("scott", "holder_t", [("o", '"Scott"."Odd"')])
    assert holder.attributes[0].type is t


def test_registry(reg, book_t):
    assert reg.get_type("SCOTT.BOOK_T") is book_t
    assert reg.get_type("scott.book_t") is book_t
    assert reg.get_type("SCOTT.NOPE") is None and reg.get_type("BOOK_T") is None
    assert "SCOTT.BOOK_T" in reg and book_t in list(reg)
    with pytest.raises(DatabaseError) as e:
        reg.add(book_t)
    assert ora_code(e) == 955
    reg.add(book_t, replace=True)
    reg.drop("SCOTT.BOOK_T")
    assert "SCOTT.BOOK_T" not in reg
    with pytest.raises(DatabaseError) as e:
        reg.drop("SCOTT.BOOK_T")
    assert ora_code(e) == 4043
    assert len(SimpleTypeRegistry(builtins=False)) == 0


def test_resolve_type(reg, book_t):
    assert O.resolve_type(reg, "book_t", "SCOTT") is book_t
    assert O.resolve_type(reg, "scott.book_t", "HR") is book_t
    assert O.resolve_type(reg, "AQ$_AGENT", "SCOTT").schema == "SYS"
    assert O.resolve_type(reg, book_t, "HR") is book_t
    with pytest.raises(DatabaseError) as e:
        O.resolve_type(reg, "book_t", "HR")
    assert ora_code(e) == 4043 and "HR.BOOK_T" in str(e.value)


# -- 3. DbObject: attributes and validation ------------------------------------------


def test_attribute_get_set(book, reg):
    book.TITLE = "Dune"
    book.PRICE = Decimal("9.99")
    book.QTY = 3
    book.RATIO = 0.25
    book.CODE = b"\x01\x02"
    book.PUBLISHED = dt.date(1965, 8, 1)
    book.NOTES = "long " * 2000
    book.IN_PRINT = True
    addr = reg.get_type("SCOTT.ADDRESS_T").newobject()
    addr.STREET = "Main"
    book.ADDR = addr
    assert (book.TITLE, book.PRICE, book.QTY, book.RATIO) == ("Dune", Decimal("9.99"), 3, 0.25)
    assert book.CODE == b"\x01\x02" and book.PUBLISHED == dt.date(1965, 8, 1)
    assert book.ADDR is addr and book.ADDR.STREET == "Main" and book.IN_PRINT is True
    book.TITLE = None
    assert book.TITLE is None


def test_unknown_attribute_is_attribute_error(book):
    with pytest.raises(AttributeError, match="NOPE"):
        _ = book.NOPE
    with pytest.raises(AttributeError, match="did you mean 'TITLE'"):
        book.title = "x"
    with pytest.raises(AttributeError, match="did you mean 'TITLE'"):
        _ = book.title
    with pytest.raises(AttributeError):
        del book.TITLE
    assert not hasattr(book, "nope") and hasattr(book, "TITLE")
    assert "TITLE" in dir(book)


def test_string_too_long_is_ora_12899(book):
    with pytest.raises(DatabaseError) as e:
        book.TITLE = "x" * 11
    assert ora_code(e) == 12899
    assert str(e.value) == ('ORA-12899: value too large for column "SCOTT"."BOOK_T"."TITLE" '
                            "(actual: 11, maximum: 10)")
    book.TITLE = "x" * 10
    with pytest.raises(DatabaseError) as e:  # BYTE semantics count UTF-8 bytes
        book.TITLE = "é" * 6
    assert ora_code(e) == 12899 and "(actual: 12, maximum: 10)" in str(e.value)
    book.WIDE = "ééé"  # CHAR semantics count characters
    with pytest.raises(DatabaseError) as e:
        book.WIDE = "éééé"
    assert ora_code(e) == 12899 and "(actual: 4, maximum: 3)" in str(e.value)
    book.Mixed = "äöü"  # NVARCHAR2 lengths are characters
    with pytest.raises(DatabaseError) as e:
        book.CODE = b"12345"
    assert ora_code(e) == 12899 and '"CODE"' in str(e.value)
    assert book.TITLE == "x" * 10  # a refused value leaves the old one


@pytest.mark.parametrize("attr, value, expected, got", [
    ("TITLE", 5, "VARCHAR2(10)", "NUMBER"),
    ("TITLE", dt.date(2020, 1, 1), "VARCHAR2(10)", "DATE"),
    ("PRICE", "12", "NUMBER(7,2)", "CHAR"),
    ("RATIO", [1], "NUMBER", "Python list"),
    ("PUBLISHED", "2020-01-01", "DATE", "CHAR"),
    ("STAMPED", 1.5, "TIMESTAMP(3) WITH TIME ZONE", "NUMBER"),
    ("CODE", 12, "RAW(4)", "NUMBER"),
    ("COVER", 1.0, "BLOB", "NUMBER"),
    ("NOTES", 7, "CLOB", "NUMBER"),
    ("IN_PRINT", "yes", "BOOLEAN", "CHAR"),
    ("WEIGHT", "1.5", "BINARY_DOUBLE", "CHAR"),
    ("ADDR", "Main St", "SCOTT.ADDRESS_T", "CHAR"),
    ("ADDR", {"STREET": "x"}, "SCOTT.ADDRESS_T", "Python dict"),
])
def test_wrong_python_type_is_ora_00932(book, attr, value, expected, got):
    with pytest.raises(DatabaseError) as e:
        setattr(book, attr, value)
    assert ora_code(e) == 932
    assert str(e.value) == f"ORA-00932: inconsistent datatypes: expected {expected} got {got}"


def test_wrong_object_type_is_ora_00932(book, book_t):
    with pytest.raises(DatabaseError) as e:
        book.ADDR = book_t.newobject()
    assert ora_code(e) == 932
    assert "expected SCOTT.ADDRESS_T got SCOTT.BOOK_T" in str(e.value)


def test_number_precision_and_rounding(book):
    book.PRICE = 99999.99
    with pytest.raises(DatabaseError) as e:
        book.PRICE = 100000
    assert ora_code(e) == 1438
    with pytest.raises(DatabaseError) as e:  # rounds to 100000.00 first
        book.PRICE = Decimal("99999.995")
    assert ora_code(e) == 1438
    book.PRICE = 1.234
    assert book.PRICE == 1.23 and isinstance(book.PRICE, float)
    book.PRICE = Decimal("1.235")
    assert book.PRICE == Decimal("1.24")  # half away from zero, as Oracle
    book.PRICE = -1.005
    assert book.PRICE == -1.01
    book.QTY = 2.5
    assert book.QTY == 3.0
    book.QTY = True  # python-oracledb turns bool into int for NUMBER
    assert book.QTY == 1 and type(book.QTY) is int
    book.QTY = 10**37
    with pytest.raises(DatabaseError) as e:  # INTEGER is NUMBER(38) at most
        book.QTY = 10**38
    assert ora_code(e) == 1438
    book.RATIO = 10**125
    with pytest.raises(DatabaseError) as e:
        book.RATIO = 10**126
    assert ora_code(e) == 1426
    for bad in (float("nan"), float("inf"), Decimal("NaN")):
        with pytest.raises(DatabaseError) as e:
            book.RATIO = bad
        assert ora_code(e) == 1722


def test_negative_scale_and_scale_above_precision(reg):
    t = reg.create_object_type("scott", "n_t", [("hundreds", "NUMBER(3,-2)"), ("tiny", "NUMBER(2,4)")])
    obj = t.newobject()
    obj.HUNDREDS = 12345
    assert obj.HUNDREDS == 12300
    with pytest.raises(DatabaseError) as e:
        obj.HUNDREDS = 99999
    assert ora_code(e) == 1438
    obj.TINY = Decimal("0.00994")
    assert obj.TINY == Decimal("0.0099")
    with pytest.raises(DatabaseError) as e:
        obj.TINY = 0.01
    assert ora_code(e) == 1438


def test_value_conversions_like_oracle(book):
    book.TITLE = b"bytes"  # python-oracledb decodes bytes for VARCHAR2
    assert book.TITLE == "bytes"
    with pytest.raises(DatabaseError) as e:
        book.TITLE = b"\xff\xfe"
    assert ora_code(e) == 6502
    book.TITLE = ""  # Oracle stores '' as NULL
    assert book.TITLE is None
    book.CODE = b""
    assert book.CODE is None
    book.CODE = "ab"  # python-oracledb encodes str for RAW
    assert book.CODE == b"ab"
    book.COVER = bytearray(b"\x00" * 10000)
    # (a BLOB attribute reads as a LOB, as python-oracledb's: its contents are bytes)
    assert book.COVER.read() == b"\x00" * 10000 and type(book.COVER.read()) is bytes
    book.WEIGHT = 1
    assert book.WEIGHT == 1.0 and type(book.WEIGHT) is float
    book.APPROX = 0.1  # BINARY_FLOAT keeps single precision
    assert book.APPROX != 0.1 and abs(book.APPROX - 0.1) < 1e-8
    with pytest.raises(DatabaseError) as e:
        book.APPROX = 1e39
    assert ora_code(e) == 1426
    book.WEIGHT = float("inf")  # BINARY_DOUBLE has infinities
    book.IN_PRINT = 0
    assert book.IN_PRINT is False
    book.PUBLISHED = dt.datetime(2020, 1, 2, 3, 4, 5)
    assert book.PUBLISHED == dt.datetime(2020, 1, 2, 3, 4, 5)


def test_char_is_blank_padded(reg):
    addr = reg.get_type("SCOTT.ADDRESS_T").newobject()
    addr.ZIP = "123"
    assert addr.ZIP == "123  "
    with pytest.raises(DatabaseError) as e:
        addr.ZIP = "123456"
    assert ora_code(e) == 12899


def test_copy_equality_repr_asdict(book, reg):
    book.TITLE = "Dune"
    book.PRICE = 5
    book.ADDR = reg.get_type("SCOTT.ADDRESS_T").newobject()
    book.ADDR.STREET = "Main"
    book.TAGS = reg.get_type("SCOTT.TAGS_T").newobject(["sf", "epic"])
    dup = book.copy()
    assert dup == book and dup is not book
    assert dup.ADDR is not book.ADDR and dup.TAGS is not book.TAGS  # deep
    dup.ADDR.STREET = "Side"
    assert book.ADDR.STREET == "Main" and dup != book
    assert copy.copy(book) == book and copy.deepcopy(book) == book
    assert book != book.ADDR and book != {"TITLE": "Dune"}
    d = book.asdict()
    assert d["TITLE"] == "Dune" and d["ADDR"] == {"STREET": "Main", "ZIP": None}
    assert d["TAGS"] == ["sf", "epic"] and d["SCORES"] is None
    text = repr(book)
    assert text.startswith("<sluice.DbObject SCOTT.BOOK_T(TITLE='Dune', PRICE=5,")
    assert "ADDR=<sluice.DbObject SCOTT.ADDRESS_T(STREET='Main', ZIP=None)>" in text
    book.NOTES = "n" * 500
    assert len(repr(book)) < 1500
    with pytest.raises(TypeError):
        hash(book)


def test_pickle_round_trip(book, reg):
    book.TITLE = "Dune"
    tags = reg.get_type("SCOTT.TAGS_T").newobject(["a", "b", "c"])
    tags.delete(1)
    book.TAGS = tags
    back = pickle.loads(pickle.dumps(book))
    assert back == book and back.TAGS.exists(1) is False and back.TAGS.aslist() == ["a", "c"]


# -- 3. DbObject: collections -------------------------------------------------------


def test_collection_methods(reg):
    tags = reg.get_type("SCOTT.TAGS_T").newobject()
    assert tags.size() == 0 and tags.first() is None and tags.last() is None
    assert tags.aslist() == [] and tags.asdict() == {}
    tags.append("a")
    tags.extend(["b", "c", "d"])
    assert tags.aslist() == ["a", "b", "c", "d"] and list(tags) == tags.aslist()
    assert tags.asdict() == {0: "a", 1: "b", 2: "c", 3: "d"}
    assert (tags.first(), tags.last(), tags.size()) == (0, 3, 4)
    assert tags.getelement(2) == "c" and tags.exists(3) and not tags.exists(4)
    tags.setelement(2, "C")
    tags.delete(1)
    assert tags.aslist() == ["a", "C", "d"] and tags.asdict() == {0: "a", 2: "C", 3: "d"}
    assert tags.size() == 3 and not tags.exists(1)
    assert (tags.next(0), tags.prev(2), tags.next(3), tags.prev(0)) == (2, 0, None, None)
    assert (tags.next(-5), tags.prev(99)) == (0, 3)
    tags.setelement(1, "B")  # refills the hole
    assert tags.aslist() == ["a", "B", "C", "d"]
    tags.trim(2)
    assert tags.aslist() == ["a", "B"] and tags.last() == 1
    tags.delete(1)
    tags.trim(1)  # trimming counts deleted elements
    assert tags.aslist() == ["a"]
    tags.append(None)
    assert tags.aslist() == ["a", None] and tags.exists(1)
    assert "SCOTT.TAGS_T(['a', None])" in repr(tags)


def test_collection_errors(reg):
    tags = reg.get_type("SCOTT.TAGS_T").newobject(["a", "b"])
    for call in (lambda: tags.getelement(5), lambda: tags.getelement(-1), lambda: tags.delete(9)):
        with pytest.raises(DatabaseError) as e:
            call()
        assert ora_code(e) == 22160
    tags.delete(0)
    with pytest.raises(DatabaseError) as e:
        tags.getelement(0)
    assert ora_code(e) == 22160 and "index [0]" in str(e.value)
    with pytest.raises(DatabaseError) as e:
        tags.setelement(2, "x")
    assert ora_code(e) == 22165 and "range of [0] to [1]" in str(e.value)
    with pytest.raises(DatabaseError) as e:
        tags.trim(3)
    assert ora_code(e) == 22167
    with pytest.raises(DatabaseError) as e:  # elements are checked like attributes
        tags.append("toolong")
    assert ora_code(e) == 12899 and '"SCOTT"."TAGS_T"."COLUMN_VALUE"' in str(e.value)
    with pytest.raises(DatabaseError) as e:
        tags.extend(["ok", 5])
    assert ora_code(e) == 932
    assert tags.aslist() == ["b"]  # extend is all-or-nothing
    with pytest.raises(TypeError):
        tags.getelement("0")


def test_varray_limit_is_ora_06532(reg):
    scores_t = reg.get_type("SCOTT.SCORES_T")
    scores = scores_t.newobject([1, 2])
    scores.append(3)
    with pytest.raises(DatabaseError) as e:
        scores.append(4)
    assert ora_code(e) == 6532 and str(e.value) == "ORA-06532: Subscript outside of limit"
    with pytest.raises(DatabaseError) as e:
        scores.setelement(3, 4)
    assert ora_code(e) == 6532
    with pytest.raises(DatabaseError) as e:
        scores_t.newobject([1, 2, 3, 4])
    assert ora_code(e) == 6532
    scores.trim(1)
    with pytest.raises(DatabaseError) as e:
        scores.extend([4, 5])
    assert ora_code(e) == 6532 and scores.aslist() == [1, 2]
    with pytest.raises(DatabaseError) as e:
        scores.delete(0)  # VARRAY elements cannot be deleted one by one
    assert ora_code(e) == 22164
    with pytest.raises(DatabaseError) as e:
        scores.append(1000)  # NUMBER(3)
    assert ora_code(e) == 1438


def test_collection_of_objects(reg):
    addr_t = reg.get_type("SCOTT.ADDRESS_T")
    addrs = reg.get_type("SCOTT.ADDRS_T").newobject([addr_t.newobject()])
    with pytest.raises(DatabaseError) as e:
        addrs.append(reg.get_type("SCOTT.BOOK_T").newobject())
    assert ora_code(e) == 932


def test_collection_methods_on_objects_are_refused(book):
    for call in (book.aslist, book.size, book.first, book.last, lambda: book.append(1),
                 lambda: book.getelement(0), lambda: book.trim(0), lambda: list(book),
                 lambda: book.exists(0), lambda: book.delete(0), lambda: book.next(0),
                 lambda: book.prev(0), lambda: book.setelement(0, 1)):
        with pytest.raises(DatabaseError) as e:
            call()
        assert ora_code(e) == 932 and "expected a collection got SCOTT.BOOK_T" in str(e.value)


def test_collections_have_no_attributes(reg):
    tags = reg.get_type("SCOTT.TAGS_T").newobject()
    with pytest.raises(AttributeError):
        tags.COLUMN_VALUE = "x"


# -- constructors -----------------------------------------------------------------


def test_construct_like_oracle(reg):
    addr_t = reg.get_type("SCOTT.ADDRESS_T")
    a = O.construct(addr_t, "Main", "12345")
    assert (a.STREET, a.ZIP) == ("Main", "12345")
    assert O.construct(addr_t, "Main", zip="1") == O.construct(addr_t, street="Main", ZIP="1")
    for args, kwargs in [(("Main",), {}), (("a", "b", "c"), {}), (("a",), {"street": "b"}),
                         ((), {"street": "a", "nope": 1})]:
        with pytest.raises(DatabaseError) as e:
            O.construct(addr_t, *args, **kwargs)
        assert ora_code(e) == 6550 and "PLS-00306" in str(e.value)
    tags = O.construct(reg.get_type("SCOTT.TAGS_T"), "a", "b")
    assert tags.aslist() == ["a", "b"]


def test_from_dict_inverts_asdict(book, reg):
    book.TITLE = "Dune"
    book.ADDR = O.construct(reg.get_type("SCOTT.ADDRESS_T"), "Main", "1")
    book.TAGS = reg.get_type("SCOTT.TAGS_T").newobject(["x"])
    book.PUBLISHED = dt.date(2000, 1, 1)
    assert O.from_dict(book.type, book.asdict()) == book
    assert O.from_dict(book.type, {"title": "Dune"}).TITLE == "Dune"  # case-insensitive keys
    addrs = O.from_dict(reg.get_type("SCOTT.ADDRS_T"), [{"STREET": "a"}, None])
    assert addrs.getelement(0).STREET == "a" and addrs.getelement(1) is None
    with pytest.raises(DatabaseError) as e:
        O.from_dict(book.type, {"NOPE": 1})
    assert ora_code(e) == 904
    with pytest.raises(DatabaseError) as e:
        O.from_dict(book.type, ["Dune"])
    assert ora_code(e) == 932
    with pytest.raises(DatabaseError) as e:
        O.from_dict(reg.get_type("SCOTT.TAGS_T"), "abc")
    assert ora_code(e) == 932
    with pytest.raises(DatabaseError) as e:
        O.from_dict(book.type, {"TITLE": "x" * 11})
    assert ora_code(e) == 12899


# -- 4. storage codec -----------------------------------------------------------------


def _full_book(book: DbObject, reg) -> DbObject:
    book.TITLE = "Dune ✓"
    book.PRICE = Decimal("12.5")
    book.QTY = 10**30
    book.RATIO = Decimal("0.1000000000000000000000000001")
    book.CODE = b"\x00\xff"
    book.PUBLISHED = dt.date(1965, 8, 1)
    book.STAMPED = dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    book.NOTES = "line\n" * 3
    book.COVER = bytes(range(256))
    book.IN_PRINT = False
    book.WEIGHT = float("-inf")
    book.APPROX = 0.5
    book.ADDR = O.construct(reg.get_type("SCOTT.ADDRESS_T"), "Main", None)
    book.TAGS = reg.get_type("SCOTT.TAGS_T").newobject(["a", None, "c"])
    book.SCORES = reg.get_type("SCOTT.SCORES_T").newobject([1, 2.0, Decimal("3")])
    book.Mixed = "ä"
    return book


def test_storage_round_trip_is_exact(book, reg):
    _full_book(book, reg)
    stored = O.to_storage(book)
    text = json.dumps(stored)  # JSON-compatible
    back = O.from_storage(book.type, json.loads(text))
    assert back == book
    for attr in book.type.attributes:
        before, after = getattr(book, attr.name), getattr(back, attr.name)
        if isinstance(before, Decimal):  # a JSON number unless digits would be lost
            assert type(after) is (float if attr.name == "PRICE" else Decimal), attr.name
        else:
            assert type(after) is type(before), attr.name
    assert back.SCORES.aslist() == [1, 2.0, 3] and type(back.SCORES.getelement(1)) is float
    assert back.STAMPED.utcoffset() == dt.timedelta(hours=2)
    assert O.from_json(book.type, O.to_json(book)) == book


def test_storage_format_is_queryable_json(book, reg):
    _full_book(book, reg)
    s = O.to_storage(book)
    assert s["TITLE"] == "Dune ✓" and s["PRICE"] == 12.5 and s["QTY"] == 10**30
    assert s["RATIO"] == {"$num": "0.1000000000000000000000000001"}  # a float would lose digits
    assert s["CODE"] == {"$raw": "00FF"}
    assert s["PUBLISHED"] == "1965-08-01"
    assert s["STAMPED"] == "2024-05-06T07:08:09.123000+02:00"
    assert s["IN_PRINT"] is False and s["WEIGHT"] == {"$num": "-inf"}
    assert s["ADDR"] == {"STREET": "Main", "ZIP": None}
    assert s["TAGS"] == ["a", None, "c"] and s["SCORES"] == [1, 2.0, 3]
    assert list(s) == [a.name for a in book.type.attributes]


def test_storage_decimal_encoding():
    enc = _encode_decimal
    assert enc(Decimal("5")) == 5 and type(enc(Decimal("5"))) is int
    assert enc(Decimal("1E+2")) == 100 and enc(Decimal("-0.0")) == 0
    assert enc(Decimal("0.1")) == 0.1 and type(enc(Decimal("0.1"))) is float
    assert enc(Decimal("3.14159265358979323846")) == {"$num": "3.14159265358979323846"}


def test_storage_of_nulls_and_holes(book, reg):
    assert O.to_storage(None) is None and O.from_storage(book.type, None) is None
    empty = O.to_storage(book)
    assert set(empty.values()) == {None}
    assert O.from_storage(book.type, empty) == book
    assert O.from_storage(book.type, {}) == book  # missing attributes are NULL
    tags = reg.get_type("SCOTT.TAGS_T").newobject(["a", "b", "c"])
    tags.delete(1)
    assert O.to_storage(tags) == ["a", "c"]  # nested tables are stored densely
    with pytest.raises(DatabaseError) as e:
        O.to_storage("not an object")
    assert ora_code(e) == 932


@pytest.mark.parametrize("attr, data", [
    ("TITLE", 5), ("PRICE", "12"), ("PRICE", True), ("PRICE", {"$num": "x"}), ("CODE", "00FF"),
    ("CODE", {"$raw": "XYZ"}), ("PUBLISHED", 20200101), ("PUBLISHED", "not a date"),
    ("IN_PRINT", 1), ("WEIGHT", "1"), ("ADDR", "Main"), ("TAGS", {"0": "a"}),
])
def test_from_storage_rejects_wrong_shapes(book_t, attr, data):
    with pytest.raises(DatabaseError) as e:
        O.from_storage(book_t, {attr: data})
    assert ora_code(e) == 932


def test_from_storage_rejects_unknown_attributes_and_shapes(book_t, reg):
    with pytest.raises(DatabaseError) as e:
        O.from_storage(book_t, {"NOPE": 1})
    assert ora_code(e) == 904
    with pytest.raises(DatabaseError) as e:
        O.from_storage(book_t, [1])
    assert ora_code(e) == 932
    with pytest.raises(DatabaseError) as e:
        O.from_storage(reg.get_type("SCOTT.TAGS_T"), {"a": 1})
    assert ora_code(e) == 932


# -- 5. type specs ----------------------------------------------------------------------


def test_type_spec_round_trip(reg, book_t, book):
    specs = [O.type_spec(t) for t in reg if t.schema != "SYS"]
    text = json.dumps(specs)
    fresh = SimpleTypeRegistry()
    for spec in json.loads(text):  # registration order = dependency order
        assert all(dep in fresh for dep in spec["depends_on"])
        fresh.add(O.type_from_spec(spec, fresh))
    rebuilt = fresh.get_type("SCOTT.BOOK_T")
    assert rebuilt == book_t and rebuilt is not book_t
    assert [(a.name, a.datatype) for a in rebuilt.attributes] == \
        [(a.name, a.datatype) for a in book_t.attributes]
    assert fresh.get_type("SCOTT.SCORES_T").max_elements == 3
    _full_book(book, reg)
    assert O.from_storage(rebuilt, O.to_storage(book)) == book  # same type by name
    assert O.type_spec(rebuilt) == O.type_spec(book_t)


def test_type_spec_contents(reg, book_t):
    spec = O.type_spec(book_t)
    assert spec["schema"] == "SCOTT" and spec["kind"] == "OBJECT"
    assert ["PRICE", "NUMBER(7,2)"] in spec["attributes"] and ["Mixed", "NVARCHAR2(3)"] in spec["attributes"]
    assert spec["depends_on"] == ["SCOTT.ADDRESS_T", "SCOTT.TAGS_T", "SCOTT.SCORES_T"]
    assert O.type_spec(reg.get_type("SCOTT.ADDRS_T")) == {
        "schema": "SCOTT", "name": "ADDRS_T", "kind": "VARRAY", "element_type": "SCOTT.ADDRESS_T",
        "max_size": 2, "depends_on": ["SCOTT.ADDRESS_T"]}


def test_type_spec_with_quoted_names(reg):
    odd = reg.create_object_type('"Scott"', '"date"', [('"x y"', "NUMBER")])
    holder = reg.create_object_type("scott", "h_t", [("o", '"Scott"."date"')])
    fresh = SimpleTypeRegistry(builtins=False)
    fresh.add(O.type_from_spec(json.loads(json.dumps(O.type_spec(odd))), fresh))
    rebuilt = O.type_from_spec(O.type_spec(holder), fresh)
    assert rebuilt.attributes[0].type == odd
    assert rebuilt.attributes[0].type.attributes[0].name == "x y"


def test_type_from_spec_needs_dependencies(book_t):
    with pytest.raises(DatabaseError) as e:
        O.type_from_spec(O.type_spec(book_t), SimpleTypeRegistry(builtins=False))
    assert ora_code(e) == 902


# -- 6. builtin SYS types and JMS helpers ---------------------------------------------


def test_builtin_types():
    types = O.builtin_types()
    assert list(types) == ["SYS.AQ$_AGENT", "SYS.AQ$_JMS_USERPROPERTY", "SYS.AQ$_JMS_USERPROPARRAY",
                           "SYS.AQ$_JMS_HEADER", "SYS.AQ$_JMS_TEXT_MESSAGE",
                           "SYS.AQ$_JMS_BYTES_MESSAGE", "SYS.AQ$_JMS_MAP_MESSAGE",
                           "SYS.AQ$_JMS_MESSAGE"]

    def shape(name):
        return [(a.name, a.datatype.text) for a in types[name].attributes]

    assert shape("SYS.AQ$_AGENT") == [("NAME", "VARCHAR2(512)"), ("ADDRESS", "VARCHAR2(1024)"),
                                      ("PROTOCOL", "NUMBER")]
    assert shape("SYS.AQ$_JMS_USERPROPERTY") == [
        ("NAME", "VARCHAR2(100)"), ("TYPE", "INTEGER"), ("STR_VALUE", "VARCHAR2(2000)"),
        ("NUM_VALUE", "NUMBER"), ("JAVA_TYPE", "INTEGER")]
    arr = types["SYS.AQ$_JMS_USERPROPARRAY"]
    assert arr.kind == "VARRAY" and arr.max_elements == 100
    assert arr.element_type is types["SYS.AQ$_JMS_USERPROPERTY"]
    assert shape("SYS.AQ$_JMS_HEADER") == [
        ("REPLYTO", "SYS.AQ$_AGENT"), ("TYPE", "VARCHAR2(100)"), ("USERID", "VARCHAR2(100)"),
        ("APPID", "VARCHAR2(100)"), ("GROUPID", "VARCHAR2(100)"), ("GROUPSEQ", "INTEGER"),
        ("PROPERTIES", "SYS.AQ$_JMS_USERPROPARRAY")]
    assert shape("SYS.AQ$_JMS_TEXT_MESSAGE") == [
        ("HEADER", "SYS.AQ$_JMS_HEADER"), ("TEXT_LEN", "INTEGER"), ("TEXT_VC", "VARCHAR2(4000)"),
        ("TEXT_LOB", "CLOB")]
    assert shape("SYS.AQ$_JMS_MAP_MESSAGE") == [
        ("HEADER", "SYS.AQ$_JMS_HEADER"), ("BYTES_LEN", "INTEGER"), ("BYTES_RAW", "RAW(2000)"),
        ("BYTES_LOB", "BLOB")]
    # Oracle's "JMS Types" reference: the generic message, a sharded queue's default payload
    assert shape("SYS.AQ$_JMS_MESSAGE") == [
        ("HEADER", "SYS.AQ$_JMS_HEADER"), ("SENDERID", "VARCHAR2(100)"), ("MESSAGE_TYPE", "INTEGER"),
        ("TEXT_LEN", "INTEGER"), ("BYTES_LEN", "INTEGER"), ("TEXT_VC", "VARCHAR2(4000)"),
        ("BYTES_RAW", "RAW(2000)"), ("TEXT_LOB", "CLOB"), ("BYTES_LOB", "BLOB")]
    assert O.builtin_types()["SYS.AQ$_AGENT"] is types["SYS.AQ$_AGENT"]  # shared, immutable
    assert SimpleTypeRegistry().get_type("SYS.AQ$_AGENT") is types["SYS.AQ$_AGENT"]


def test_jms_text_message(reg):
    msg = O.jms_text_message(reg, "All things bright and beautiful", appid="AQProduct",
                             groupid="AQ", userid="AQUSER", type="t", groupseq=2,
                             replyto=Agent("oracle", "redwoodshores", 100),
                             properties={"Country": "USA", "n": 7, "big": 2**40, "ok": True,
                                         "pi": 3.5})
    assert msg.type.qualified_name == "SYS.AQ$_JMS_TEXT_MESSAGE"
    assert msg.TEXT_LEN == 31 and msg.TEXT_VC.startswith("All") and msg.TEXT_LOB is None
    h = msg.HEADER
    assert (h.APPID, h.GROUPID, h.USERID, h.TYPE, h.GROUPSEQ) == ("AQProduct", "AQ", "AQUSER", "t", 2)
    assert (h.REPLYTO.NAME, h.REPLYTO.ADDRESS, h.REPLYTO.PROTOCOL) == ("oracle", "redwoodshores", 100)
    props = {p.NAME: (p.TYPE, p.STR_VALUE, p.NUM_VALUE, p.JAVA_TYPE) for p in h.PROPERTIES}
    assert props == {"Country": (100, "USA", None, 27), "n": (200, None, 7, 23),
                     "big": (200, None, 2**40, 24), "ok": (200, None, 1, 20),
                     "pi": (200, None, 3.5, 26)}
    assert O.jms_properties_of(msg) == {"Country": "USA", "n": 7, "big": 2**40, "ok": True, "pi": 3.5}
    assert O.jms_properties_of(h) == O.jms_properties_of(msg)
    assert O.jms_text_of(msg) == "All things bright and beautiful"
    back = O.from_json(msg.type, O.to_json(msg))
    assert back == msg and O.jms_properties_of(back)["ok"] is True


def test_jms_text_message_long_and_empty(reg):
    long = "é" * 2001  # 4002 bytes: too long for TEXT_VC
    msg = O.jms_text_message(reg, long)
    # (TEXT_LOB, a CLOB attribute, reads as a LOB, as python-oracledb's)
    assert msg.TEXT_VC is None and msg.TEXT_LOB.read() == long and msg.TEXT_LEN == 2001
    assert O.jms_text_of(msg) == long
    empty = O.jms_text_message(reg, "")
    assert (empty.TEXT_LEN, empty.TEXT_VC, empty.TEXT_LOB) == (0, None, None)
    assert O.jms_properties_of(empty) == {} and empty.HEADER.PROPERTIES is None
    with pytest.raises(DatabaseError) as e:
        O.jms_text_message(reg, b"bytes")
    assert ora_code(e) == 932
    with pytest.raises(TypeError):
        O.jms_text_message(reg, "x", colour="red")


def test_jms_property_errors(reg):
    for props in ({"x": [1]}, {"": "a"}, {"x": 2**64}):
        with pytest.raises(DatabaseError) as e:
            O.jms_text_message(reg, "x", properties=props)
        assert ora_code(e) == 6502
    with pytest.raises(DatabaseError) as e:
        O.jms_text_message(reg, "x", properties={f"p{i}": i for i in range(101)})
    assert ora_code(e) == 6532  # the VARRAY holds 100 properties
    with pytest.raises(DatabaseError) as e:
        O.jms_text_message(reg, "x", properties={"long": "x" * 2001})
    assert ora_code(e) == 12899


def test_generic_jms_message(reg):
    """SYS.AQ$_JMS_MESSAGE holds any of the five JMS message kinds (MESSAGE_TYPE: DBMS_AQ's
    JMS_TEXT_MESSAGE, JMS_BYTES_MESSAGE, JMS_STREAM_MESSAGE, JMS_MAP_MESSAGE,
    JMS_OBJECT_MESSAGE); the text / bytes / map readers read the matching kind."""
    text = O.jms_message(reg, O.JMS_TEXT_MESSAGE, "hi", appid="app", properties={"n": 1})
    assert (text.type.qualified_name, text.MESSAGE_TYPE, text.TEXT_LEN) == ("SYS.AQ$_JMS_MESSAGE", 0, 2)
    assert O.jms_text_of(text) == "hi" and O.jms_properties_of(text) == {"n": 1}
    assert text.HEADER.APPID == "app" and text.BYTES_RAW is None
    long = O.jms_message(reg, O.JMS_TEXT_MESSAGE, "x" * 5000)
    assert long.TEXT_VC is None and O.jms_text_of(long) == "x" * 5000
    mapped = O.jms_message(reg, O.JMS_MAP_MESSAGE, {"a": [1, 2]})
    assert O.jms_map_of(mapped) == {"a": [1, 2]} and mapped.MESSAGE_TYPE == 3
    for kind in (O.JMS_BYTES_MESSAGE, O.JMS_STREAM_MESSAGE, O.JMS_OBJECT_MESSAGE):
        body = O.jms_message(reg, kind, b"\x00\x01" * 1500)
        assert body.MESSAGE_TYPE == kind and O.jms_bytes_of(body) == b"\x00\x01" * 1500
    assert O.from_storage(text.type, O.to_storage(mapped)) == mapped
    for wrong in (lambda: O.jms_text_of(mapped), lambda: O.jms_map_of(text),
                  lambda: O.jms_bytes_of(text)):
        with pytest.raises(DatabaseError) as e:
            wrong()
        assert ora_code(e) == 932
    for bad in (5, -1, True, "0"):
        with pytest.raises(DatabaseError) as e:
            O.jms_message(reg, bad, None)
        assert ora_code(e) == 6502


def test_jms_map_message(reg):
    mapping = {"Car": "Toyota", "Color": "Blue", "Price": 20000, "ok": True, "none": None}
    msg = O.jms_map_message(reg, mapping, replyto="oracle", groupid="AQ")
    assert msg.type.qualified_name == "SYS.AQ$_JMS_MAP_MESSAGE"
    assert msg.BYTES_RAW is not None and msg.BYTES_LOB is None
    assert msg.BYTES_LEN == len(msg.BYTES_RAW)
    assert json.loads(msg.BYTES_RAW) == mapping
    assert O.jms_map_of(msg) == mapping
    assert msg.HEADER.REPLYTO.NAME == "oracle" and msg.HEADER.REPLYTO.PROTOCOL == 0
    big = {"k": "v" * 3000}
    big_msg = O.jms_map_message(reg, big)
    assert big_msg.BYTES_RAW is None and big_msg.BYTES_LOB is not None
    assert O.jms_map_of(big_msg) == big
    assert O.from_storage(msg.type, O.to_storage(big_msg)) == big_msg
    assert O.jms_map_of(O.jms_map_message(reg, {})) == {}
    for bad in ({"x": b"bytes"}, {1: "a"}, ["a"], {"x": float("nan")}):
        with pytest.raises(DatabaseError) as e:
            O.jms_map_message(reg, bad)
        assert ora_code(e) == 6502
    with pytest.raises(DatabaseError) as e:
        O.jms_map_of(O.jms_text_message(reg, "x"))
    assert ora_code(e) == 932
    broken = msg.copy()
    broken.BYTES_RAW = b"\x01not json"
    with pytest.raises(DatabaseError) as e:
        O.jms_map_of(broken)
    assert ora_code(e) == 6502


def test_jms_bytes_message(reg):
    msg = O.jms_bytes_message(reg, b"\x00\x01")
    assert msg.BYTES_LEN == 2 and O.jms_bytes_of(msg) == b"\x00\x01"
    assert O.jms_bytes_of(O.jms_bytes_message(reg, b"x" * 2001)) == b"x" * 2001
    with pytest.raises(DatabaseError) as e:
        O.jms_bytes_message(reg, "text")
    assert ora_code(e) == 932


def test_agents(reg):
    agent = O.agent_to_object(reg, Agent("bob", "q@db", 1))
    assert (agent.NAME, agent.ADDRESS, agent.PROTOCOL) == ("bob", "q@db", 1)
    assert O.agent_from_object(agent) == Agent("bob", "q@db", 1)
    assert O.agent_to_object(reg, agent) is agent and O.agent_to_object(reg, None) is None
    assert O.agent_from_object(O.construct(agent.type, "x", None, None)) == Agent("x", None, 0)
    with pytest.raises(DatabaseError) as e:
        O.jms_text_message(reg, "x", replyto=reg.get_type("SCOTT.ADDRESS_T").newobject())
    assert ora_code(e) == 932
    with pytest.raises(DatabaseError) as e:
        O.agent_from_object(reg.get_type("SCOTT.ADDRESS_T").newobject())
    assert ora_code(e) == 932


def test_jms_helpers_need_the_sys_types():
    bare = SimpleTypeRegistry(builtins=False)
    with pytest.raises(DatabaseError) as e:
        O.jms_text_message(bare, "x")
    assert ora_code(e) == 4043


def test_module_exports():
    with pytest.raises(AttributeError):
        O.no_such_name  # noqa: B018


@pytest.mark.parametrize("call", [
    lambda c: c.getelement("0"), lambda c: c.setelement("0", "x"), lambda c: c.delete("x"),
    lambda c: c.exists("x"), lambda c: c.trim(None), lambda c: c.next("x"), lambda c: c.prev(1.0),
    lambda c: c.exists(True), lambda c: c.extend(5), lambda c: c.extend(None),
], ids=["getelement", "setelement", "delete", "exists", "trim", "next", "prev", "bool", "extend5",
        "extendNone"])
def test_collection_argument_of_the_wrong_type_is_argument_error(reg, call):
    """python-oracledb raises TypeError here: ArgumentError is one, and a sluice.Error;
    the collection is unchanged."""
    from sluice.errors import ArgumentError, Error
    tags = reg.get_type("SCOTT.TAGS_T").newobject(["a", "b"])
    with pytest.raises(ArgumentError) as e:
        call(tags)
    assert isinstance(e.value, TypeError) and isinstance(e.value, Error)
    assert tags.aslist() == ["a", "b"]


def test_newobject_of_a_non_iterable_is_argument_error(reg):
    from sluice.errors import ArgumentError
    with pytest.raises(ArgumentError):
        reg.get_type("SCOTT.TAGS_T").newobject(5)
