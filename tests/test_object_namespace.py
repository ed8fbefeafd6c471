"""One schema's object namespace (store/namespace.py), on both stores: a table, a queue table
(a table), a sequence and an object type of one schema share their names — the second of a
name is ORA-00955 "name is already used by an existing object" whatever the first's kind
(each kind keeps its own code for itself: ORA-24001 for a second queue table) — and nothing
is made; another schema's objects and a queue (the queue namespace) do not clash."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import query_rows, raised_code

PASSWORD = "Tiger#2026"


def _table(conn, name):
    conn.cursor().execute(f"create table {name} (a number)")


def _sequence(conn, name):
    conn.cursor().execute(f"create sequence {name}")


def _type(conn, name):
    conn.cursor().execute(f"create type {name} as object (a number)")


def _queue_table(conn, name):
    conn.aqadm.create_queue_table(queue_table=name, queue_payload_type="RAW")


MAKERS = {"table": _table, "sequence": _sequence, "type": _type, "queue table": _queue_table}
SAME = {"table": "ORA-00955", "sequence": "ORA-00955", "type": "ORA-00955", "queue table": "ORA-24001"}


def _objects(conn, name):
    """Which kinds of object named ``name`` (upper case) the session's schema has."""
    found, me = set(), conn.context.username
    if query_rows(conn, f"SELECT COUNT(*) FROM USER_SEQUENCES WHERE SEQUENCE_NAME = '{name}'")[0][0]:
        found.add("sequence")
    if any((qt.owner, qt.name) == (me, name) for qt in conn.context.store.queue_tables()):
        found.add("queue table")
    elif _readable(conn, f"{me}.{name}"):
        found.add("table")
    if any((o, n) == (me, name) for o, n, _ in conn.context.store.catalog_objects("TYPE")):
        found.add("type")
    return found


def _readable(conn, name):
    try:
        query_rows(conn, f"SELECT COUNT(*) FROM {name}")
    except sluice.Error:
        return False
    return True


@pytest.mark.parametrize("first,second", [(a, b) for a in MAKERS for b in MAKERS if a != b])
def test_a_name_used_by_another_kind_is_ora_00955(conn, first, second):
    MAKERS[first](conn, "thing")
    assert raised_code(MAKERS[second], conn, "thing") == "ORA-00955"
    assert _objects(conn, "THING") == {first}          # the second not made (nor half made)


@pytest.mark.parametrize("kind", MAKERS)
def test_a_name_used_by_its_own_kind_keeps_its_code(conn, kind):
    MAKERS[kind](conn, "thing")
    assert raised_code(MAKERS[kind], conn, "thing") == SAME[kind]
    assert _objects(conn, "THING") == {kind}


@pytest.mark.parametrize("first,second", [(a, b) for a in MAKERS for b in MAKERS if a != b])
def test_another_schemas_names_do_not_clash(conn, dsn, first, second):
    """SCOTT's object does not take the name in SLUICE's schema (but does in SCOTT's)."""
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION, CREATE TABLE TO scott")
    cur.execute("GRANT EXECUTE ON DBMS_AQADM TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        MAKERS[first](scott, "thing")
        MAKERS[second](conn, "thing")
        assert _objects(conn, "THING") == {second}
        assert _objects(scott, "THING") == {first}
        MAKERS[first](scott, "other")                   # (in SCOTT's own schema they do)
        assert raised_code(MAKERS[second], scott, "other") == "ORA-00955"


def test_a_queue_is_in_a_namespace_of_its_own(conn):
    """AQ queues have their own namespace (ORA-24006 among queues only): a queue named as a
    table, a sequence or a type is made."""
    _table(conn, "t")
    _sequence(conn, "s")
    _type(conn, "o")
    _queue_table(conn, "qt")
    for name in ("t", "s", "o", "qt"):
        conn.aqadm.create_queue(queue_name=name, queue_table="qt")
    assert raised_code(conn.aqadm.create_queue, queue_name="t", queue_table="qt") == "ORA-24006"
    assert sorted(q.name for q in conn.context.store.queues() if q.table.name == "QT"
                  and not q.name.startswith("AQ$")) == ["O", "QT", "S", "T"]


def test_dropping_frees_the_name_for_another_kind(conn):
    _table(conn, "thing")
    conn.cursor().execute("drop table thing")
    _sequence(conn, "thing")
    conn.cursor().execute("drop sequence thing")
    _type(conn, "thing")
    conn.cursor().execute("drop type thing")
    _queue_table(conn, "thing")
    conn.aqadm.drop_queue_table(queue_table="thing")
    _table(conn, "thing")
    assert _objects(conn, "THING") == {"table"}


# -- cursor.description of a table made at a cursor ---------------------------------------

EMP = ("create table emp (id number(10) primary key, name varchar2(40) not null, sal number(8,2), "
       "n number, hired date, code char(3), notes varchar2(100), constraint emp_uk unique (notes))")


def test_description_of_a_table_made_at_a_cursor(conn):
    """As python-oracledb describes the columns: null_ok False for NOT NULL and PRIMARY KEY,
    VARCHAR2(n) / CHAR(n) display and internal size n, NUMBER(p, s) p and s, NUMBER
    unconstrained (0, -127), DATE without sizes — with rows and without."""
    cur = conn.cursor()
    cur.execute(EMP)
    cur.execute("insert into emp values (1, 'Ann', 10.5, 7, sysdate, 'abc', 'x')")
    expected = [
        ("ID", sluice.DB_TYPE_NUMBER, 11, None, 10, 0, False),
        ("NAME", sluice.DB_TYPE_VARCHAR, 40, 40, None, None, False),
        ("SAL", sluice.DB_TYPE_NUMBER, 12, None, 8, 2, True),
        ("N", sluice.DB_TYPE_NUMBER, 127, None, 0, -127, True),
        ("HIRED", sluice.DB_TYPE_DATE, 23, None, None, None, True),
        ("CODE", sluice.DB_TYPE_CHAR, 3, 3, None, None, True),
        ("NOTES", sluice.DB_TYPE_VARCHAR, 100, 100, None, None, True),
    ]
    cur.execute("select * from emp")
    assert cur.description == expected
    cur.execute("select e.name, e.id as key, code from emp e where id = 1")
    assert cur.description == [expected[1], ("KEY", *expected[0][1:]), expected[5]]


def test_description_of_an_expression_is_nullable(conn):
    """An expression of a NOT NULL column, or its MAX (none on no rows), may be NULL."""
    cur = conn.cursor()
    cur.execute(EMP)
    cur.execute("select name || 'x' as nx, id + 1 as nxt from emp")
    assert [d[6] for d in cur.description] == [True, True]
    cur.execute("select max(id) as top from emp")
    assert cur.description[0][6] is True
    cur.execute("select id from emp where 1 = 0")
    assert cur.description[0][6] is False


def test_description_of_a_not_null_clob(conn):
    """A CLOB column keeps its LOB type (fetched as a LOB) and says it is NOT NULL."""
    cur = conn.cursor()
    cur.execute("create table doc (id number primary key, body clob not null, note clob)")
    cur.execute("select body, note from doc")
    assert cur.description == [("BODY", sluice.DB_TYPE_CLOB, None, None, None, None, False),
                               ("NOTE", sluice.DB_TYPE_CLOB, None, None, None, None, True)]
