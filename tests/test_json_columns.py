"""Oracle 21c's JSON type in a table made at a cursor, as python-oracledb's JSON user guide and its
``json_direct.py`` sample use it: CREATE TABLE … (json_data json), a dict bound with
``setinputsizes(None, DB_TYPE_JSON)``, the column fetched as dicts / lists with Decimal numbers and
described DB_TYPE_JSON, JSON_VALUE / JSON_QUERY / JSON_EXISTS over it, ORA-40441 for text that is
no JSON — on both stores."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import sluice
from tests.sqlhelpers import query_code, query_rows, raised_code

DATA = [(1, dict(name="Rod", dept="Sales", location="Germany")),
        (2, dict(name="George", dept="Sales", location="United States",
                 CreditScore=[{"Year": 2019, "Value": 860}]))]


def _customers(conn) -> None:
    """json_direct.py's table and rows."""
    cur = conn.cursor()
    cur.execute("create table CustomersAsJson (id integer not null primary key, json_data json)")
    cur.setinputsizes(None, sluice.DB_TYPE_JSON)
    cur.executemany("insert into CustomersAsJson values (:1, :2)", DATA)
    conn.commit()


def test_the_json_type_constant():
    """python-oracledb's DB_TYPE_JSON (ODPI-C's DPI_ORACLE_TYPE_JSON, 2027)."""
    assert sluice.DB_TYPE_JSON.name == "DB_TYPE_JSON" and sluice.DB_TYPE_JSON.num == 2027
    assert "DB_TYPE_JSON" in sluice.__all__


def test_json_direct_sample_fetches_dicts(conn):
    """The sample's rows come back as dicts (numbers as Decimal, as python-oracledb's OSON
    decoder gives them), the column described DB_TYPE_JSON."""
    _customers(conn)
    cur = conn.cursor()
    rows = [j for (j,) in cur.execute("select c.json_data from CustomersAsJson c order by c.id")]
    assert rows == [DATA[0][1], DATA[1][1]]
    score = rows[1]["CreditScore"][0]
    assert type(score["Year"]) is Decimal and score == {"Year": Decimal(2019), "Value": Decimal(860)}
    assert tuple(cur.description[0]) == ("JSON_DATA", sluice.DB_TYPE_JSON, None, None, None, None, True)
    cur.execute("select * from CustomersAsJson where id = 1")
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_NUMBER, sluice.DB_TYPE_JSON]
    assert cur.fetchall() == [(1, DATA[0][1])]


def test_json_value_query_and_exists_of_a_json_column(conn):
    """The sample's JSON_VALUE (with its OFFSET / FETCH) and JSON_EXISTS read the JSON column as
    a document; JSON_QUERY of it as a select item is of the JSON type (Oracle's default RETURNING
    for a JSON document): a list / dict, described DB_TYPE_JSON; inside an expression its text."""
    _customers(conn)
    assert query_rows(conn, "select json_value(json_data, '$.location') from CustomersAsJson "
                            "order by id offset 0 rows fetch next 1 rows only") == [("Germany",)]
    assert query_rows(conn, "select json_value(json_data, '$.CreditScore[0].Value') from CustomersAsJson "
                            "where id = 2") == [("860",)]
    assert query_rows(conn, "select id from CustomersAsJson where json_exists(json_data, '$.CreditScore')") \
        == [(2,)]
    cur = conn.cursor()
    cur.execute("select json_query(json_data, '$.CreditScore'), json_query(c.json_data, '$.CreditScore[0]') q, "
                "json_query(json_data, '$.name') from CustomersAsJson c where id = 2")
    assert [tuple(d[:2]) for d in cur.description] == [
        ("JSON_QUERY(JSON_DATA,'$.CREDITSCORE')", sluice.DB_TYPE_JSON), ("Q", sluice.DB_TYPE_JSON),
        ("JSON_QUERY(JSON_DATA,'$.NAME')", sluice.DB_TYPE_JSON)]
    score = {"Year": Decimal(2019), "Value": Decimal(860)}
    assert cur.fetchall() == [([score], score, None)]
    assert query_rows(conn, "select length(json_query(json_data, '$.CreditScore')) from CustomersAsJson "
                            "where id = 2") == [(len('[{"Year":2019,"Value":860}]'),)]


def test_values_of_every_json_kind_round_trip(conn):
    """Arrays, scalars, nested objects, NULL: bound through a ``cursor.var(DB_TYPE_JSON)`` and by
    name through ``setinputsizes``; a Decimal exact (written as it is, read without trailing
    zeros, as Oracle's NUMBER), a datetime as its ISO 8601 text (JSON_SERIALIZE's)."""
    conn.cursor().execute("create table docs (id number primary key, doc json)")
    cur = conn.cursor()
    values = {1: [1, "two", None, True, {"x": [False]}], 2: "text", 3: [Decimal("12345678901234567890.10")],
              4: None, 5: {"when": dt.datetime(2020, 3, 10, 8, 30)}}
    for key, value in values.items():
        var = cur.var(sluice.DB_TYPE_JSON)
        var.setvalue(0, value)
        cur.execute("insert into docs values (:1, :2)", [key, var])
    cur.setinputsizes(doc=sluice.DB_TYPE_JSON)
    cur.execute("insert into docs values (:id, :doc)", id=6, doc={"k": 1.5})
    assert query_rows(conn, "select id, doc from docs order by id") == [
        (1, [Decimal(1), "two", None, True, {"x": [False]}]), (2, "text"),
        (3, [Decimal("12345678901234567890.1")]), (4, None), (5, {"when": "2020-03-10T08:30:00"}),
        (6, {"k": Decimal("1.5")})]


def test_json_text_into_a_json_column(conn):
    """A str of JSON text is a document (Oracle converts it); an UPDATE too."""
    conn.cursor().execute("create table docs (id number primary key, doc json)")
    cur = conn.cursor()
    cur.execute("insert into docs values (1, '{\"a\": [1, 2.50]}')")
    cur.execute("update docs set doc = :1 where id = 1", ['{"b": true}'])
    assert query_rows(conn, "select doc from docs") == [({"b": True},)]


def test_text_that_is_no_json_is_ora_40441_and_writes_nothing(conn):
    """Oracle's ORA-40441 "JSON syntax error"; the row is not written."""
    conn.cursor().execute("create table docs (id number primary key, doc json)")
    assert raised_code(conn.cursor().execute, "insert into docs values (1, 'not json')") == "ORA-40441"
    assert raised_code(conn.cursor().execute, "insert into docs values (2, :1)", ["{bad"]) == "ORA-40441"
    assert query_rows(conn, "select count(*) from docs") == [(0,)]


def test_a_dict_bound_without_a_json_type_is_dpy_3002(conn):
    """python-oracledb types an unsized bind from its value and has no type for a dict:
    DPY-3002 (``setinputsizes(…, DB_TYPE_JSON)`` or a ``DB_TYPE_JSON`` var is how it binds one)."""
    conn.cursor().execute("create table docs (id number primary key, doc json)")
    assert raised_code(conn.cursor().execute, "insert into docs values (1, :1)", [{"a": 1}]) == "DPY-3002"
    assert query_rows(conn, "select count(*) from docs") == [(0,)]


def test_a_value_json_cannot_hold_is_dpy_3003(conn):
    """A NaN, a set, a key that is no string: python-oracledb's encoder refuses them."""
    conn.cursor().execute("create table docs (id number primary key, doc json)")
    cur = conn.cursor()
    for bad in (float("nan"), {1, 2}, {1: "a"}):
        cur.setinputsizes(None, sluice.DB_TYPE_JSON)
        assert raised_code(cur.execute, "insert into docs values (1, :2)", [1, bad]) == "DPY-3003"
    assert query_rows(conn, "select count(*) from docs") == [(0,)]


@pytest.mark.parametrize("sql, code", [("create table docs (doc json(10))", "ORA-00907"),
                                       ("create table docs (doc jsonb)", "ORA-00902")])
def test_the_json_type_takes_no_size_and_jsonb_is_no_oracle_type(conn, sql, code):
    """Oracle's JSON has no size (ORA-00907 for one); PostgreSQL's name is not Oracle's (ORA-00902)."""
    conn.cursor().execute("create table plain (doc json not null)")
    assert query_code(conn, sql) == code


def test_json_object_of_relational_data(conn):
    """python-oracledb's "Accessing Relational Data as JSON": JSON_OBJECT('k' IS v) and
    KEY 'k' VALUE v give the object's compact text (NULL ON NULL: a NULL is null)."""
    assert query_rows(conn, "select json_object('key' is d.dummy) dummy from dual d") == [('{"key":"X"}',)]
    conn.cursor().execute("create table departments (department_id number, department_name varchar2(30))")
    conn.cursor().executemany("insert into departments values (:1, :2)",
                              [(10, "Administration"), (20, "Marketing"), (30, None)])
    assert query_rows(conn, "select json_object('deptId' is d.department_id, key 'name' value "
                            "d.department_name) department from departments d where department_id < :did "
                            "order by d.department_id", [30]) == [
        ('{"deptId":10,"name":"Administration"}',), ('{"deptId":20,"name":"Marketing"}',)]
    assert query_rows(conn, "select json_object('n' value department_name) from departments "
                            "where department_id = 30") == [('{"n":null}',)]


def test_json_object_clauses_are_refused(conn):
    """ABSENT ON NULL, RETURNING …: SLU-00001, never another answer."""
    assert query_code(conn, "select json_object('a' value 1 absent on null) from dual") == "SLU-00001"
    assert query_code(conn, "select json_object('a' value 1 returning json) from dual") == "SLU-00001"


def test_dot_notation_of_a_json_column(conn):
    """json_direct.py's ``c.json_data.location`` (the table alias Oracle requires).  A select
    item of it alone is of the JSON type, as Oracle gives it over a JSON column: described
    DB_TYPE_JSON and fetched as a str, Decimal, bool, dict or list (NULL for a missing field),
    headed by its last field; in WHERE and ORDER BY it is the value's text."""
    _customers(conn)
    cur = conn.cursor()
    cur.execute("select c.json_data.location from CustomersAsJson c offset 0 rows fetch next 1 rows only")
    assert [tuple(d) for d in cur.description] == [("LOCATION", sluice.DB_TYPE_JSON, None, None, None, None, True)]
    assert cur.fetchall() == [("Germany",)]
    assert query_rows(conn, "select c.json_data.CreditScore, c.json_data.nope from CustomersAsJson c "
                            "where c.json_data.location = 'United States'") == [
        ([{"Year": Decimal(2019), "Value": Decimal(860)}], None)]
    assert query_rows(conn, "select c.id from CustomersAsJson c order by c.json_data.location desc") == [(2,), (1,)]
    conn.cursor().execute("create table docs (id number, doc json)")
    conn.cursor().execute("""insert into docs values (1, '{"a": {"b": 2.5, "ok": true}}')""")
    assert query_rows(conn, "select d.doc.a.b, d.doc.a.ok x, d.doc.a, d.doc.A from docs d") == [
        (Decimal("2.5"), True, {"b": Decimal("2.5"), "ok": True}, None)]
    assert query_rows(conn, "select d.doc.a.b || '!' from docs d") == [("2.5!",)]


@pytest.mark.parametrize("kind", ["varchar2(200)", "clob", "blob"])
def test_an_is_json_check_keeps_json_in_a_text_or_blob_column(conn, kind):
    """json_blob.py's ``json_data blob check (json_data is json)`` (and VARCHAR2 / CLOB): JSON
    text is taken, NULL too, text that is no JSON is ORA-02290 (a check constraint), nothing
    written; JSON_VALUE reads the column."""
    conn.cursor().execute(f"create table CustomersAsBlob (id integer not null primary key, "
                          f"json_data {kind} check (json_data is json))")
    doc = '{"name": "Rod", "dept": "Sales", "location": "Germany"}'
    value = doc.encode() if kind == "blob" else doc
    cur = conn.cursor()
    cur.execute("insert into CustomersAsBlob values (:1, :2)", [1, value])
    cur.execute("insert into CustomersAsBlob values (2, null)")
    bad = b"not json" if kind == "blob" else "not json"
    assert raised_code(cur.execute, "insert into CustomersAsBlob values (3, :1)", [bad]) == "ORA-02290"
    assert query_rows(conn, "select id from CustomersAsBlob order by id") == [(1,), (2,)]
    if kind != "blob":
        assert query_rows(conn, "select json_value(json_data, '$.location') from CustomersAsBlob "
                                "where id = 1") == [("Germany",)]


def test_is_not_json_and_a_named_table_check(conn):
    """``IS NOT JSON`` and a table constraint naming the column; an expression operand or a
    clause of IS JSON (STRICT, WITH UNIQUE KEYS) is SLU-00001."""
    conn.cursor().execute("create table notes (a varchar2(20), b varchar2(20), "
                          "constraint notes_json check (a is not json and b IS JSON))")
    conn.cursor().execute("""insert into notes values ('plain', '[1]')""")
    assert raised_code(conn.cursor().execute, "insert into notes values ('[2]', '[3]')") == "ORA-02290"
    assert query_code(conn, "create table n2 (a varchar2(9) check (upper(a) is json))") == "SLU-00001"
    assert query_code(conn, "create table n3 (a varchar2(9) check (a is json strict))") == "SLU-00001"


def test_an_input_type_handler_s_json_var_and_returning_into_one(conn):
    """An inputtypehandler returning ``cursor.var(DB_TYPE_JSON)`` for dicts and lists binds them
    (execute and executemany); ``RETURNING doc INTO`` a DB_TYPE_JSON var gives the dict back."""
    conn.cursor().execute("create table docs (id number primary key, doc json)")
    cur = conn.cursor()

    def handler(cursor, value, arraysize):
        if isinstance(value, (dict, list)):
            return cursor.var(sluice.DB_TYPE_JSON, arraysize=arraysize)
    cur.inputtypehandler = handler
    cur.execute("insert into docs values (:1, :2)", [1, {"a": [1]}])
    cur.executemany("insert into docs values (:1, :2)", [[2, [1, 2]], [3, {"b": None}]])
    assert query_rows(conn, "select * from docs order by id") == [
        (1, {"a": [Decimal(1)]}), (2, [Decimal(1), Decimal(2)]), (3, {"b": None})]
    out = cur.var(sluice.DB_TYPE_JSON)
    cur.execute("update docs set doc = :1 where id = 1 returning doc into :2", [{"z": 1.5}, out])
    assert out.getvalue() == [{"z": Decimal("1.5")}]


def test_create_table_as_select_and_add_column_keep_the_json_type(conn):
    """CTAS of a JSON column makes a JSON column (its rows fetched back as dicts); ALTER TABLE
    ADD of a JSON column checks its text as CREATE TABLE's does."""
    _customers(conn)
    cur = conn.cursor()
    cur.execute("create table copies as select * from CustomersAsJson")
    cur.execute("select json_data from copies order by id")
    assert cur.description[0][1] is sluice.DB_TYPE_JSON and [j for (j,) in cur] == [DATA[0][1], DATA[1][1]]
    cur.execute("alter table copies add (extra json)")
    assert raised_code(cur.execute, "update copies set extra = 'bad' where id = 1") == "ORA-40441"
    cur.execute("""update copies set extra = '[true]' where id = 1""")
    assert query_rows(conn, "select extra from copies where id = 1") == [([True],)]
