"""DML ``RETURNING … INTO`` on the user's own tables, on both stores, as python-oracledb
gives it: each ``INTO`` variable's value is the list of its column's values, one per
row changed (``[]`` for none); under ``executemany`` ``var.getvalue(i)`` is row ``i``'s;
binds by position, by name and through ``setinputsizes``.  A malformed clause or bad
binds get Oracle's / python-oracledb's errors and change nothing."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.sqlhelpers import create_table
from tests.sqlhelpers import raised_code


@pytest.fixture
def cur(conn, dsn):
    create_table(dsn, "CREATE TABLE emp (id INTEGER, name VARCHAR(20), sal NUMERIC(10,2))")
    c = conn.cursor()
    c.executemany("INSERT INTO emp (id, name, sal) VALUES (:1, :2, :3)",
                  [(1, "ann", 10), (2, "bob", 20), (3, "cy", 30)])
    return c


def _rows(cur):
    cur.execute("SELECT id, name FROM emp ORDER BY id")
    return cur.fetchall()


def test_insert_returning_into_by_position(cur):
    v = cur.var(int)
    cur.execute("INSERT INTO emp (id, name) VALUES (:1, :2) RETURNING id INTO :3", [4, "dee", v])
    assert v.getvalue() == [4] and cur.rowcount == 1
    assert _rows(cur)[-1] == (4, "dee")


def test_update_returning_two_columns_of_several_rows_by_name(cur):
    ids, names = cur.var(int), cur.var(str)
    cur.execute("UPDATE emp SET name = UPPER(name) WHERE id >= :lo RETURNING id, name INTO :ids, :names",
                lo=2, ids=ids, names=names)
    assert cur.rowcount == 2
    assert sorted(zip(ids.getvalue(), names.getvalue())) == [(2, "BOB"), (3, "CY")]


def test_delete_returning_no_rows_is_an_empty_list(cur):
    v = cur.var(int)
    cur.execute("DELETE FROM emp WHERE id = :id RETURNING id INTO :v", {"id": 99, ":V": v})
    assert v.getvalue() == [] and cur.rowcount == 0


def test_returning_an_expression_into_a_var_of_another_type(cur):
    total, text = cur.var(float), cur.var(str)
    cur.execute("UPDATE emp SET sal = sal * 2 WHERE id = 1 RETURNING sal + 1, id INTO :1, :2", [total, text])
    assert total.getvalue() == [21.0] and text.getvalue() == ["1"]


def test_executemany_returning_each_rows_list(cur):
    v = cur.var(int, arraysize=3)
    cur.executemany("DELETE FROM emp WHERE id = :1 RETURNING id INTO :2", [(1, v), (7, v), (3, v)])
    assert [v.getvalue(i) for i in range(3)] == [[1], [], [3]]
    assert _rows(cur) == [(2, "bob")]


def test_executemany_returning_through_setinputsizes(cur):
    # python-oracledb's documented idiom: the variable bound by setinputsizes, rows without it
    ids = cur.var(int, arraysize=2)
    cur.setinputsizes(None, ids)
    cur.executemany("DELETE FROM emp WHERE id <= :1 RETURNING id INTO :2", [[1], [2]])
    assert ids.getvalue(0) == [1] and ids.getvalue(1) == [2]


@pytest.mark.parametrize("sql, code", [
    ("DELETE FROM emp WHERE id = 1 RETURNING id", "ORA-00925"),
    ("DELETE FROM emp WHERE id = 1 RETURNING id, name INTO :1", "ORA-00947"),
    ("DELETE FROM emp WHERE id = 1 RETURNING id INTO :1, :2", "ORA-00913"),
    ("DELETE FROM emp WHERE id = 1 RETURNING id INTO :1 + 1", "ORA-00933"),
    ("DELETE FROM emp WHERE id = :x RETURNING id INTO :x", "DPY-2048"),
])
def test_malformed_clause_changes_nothing(cur, sql, code):
    assert raised_code(lambda: cur.execute(sql, [cur.var(int)] * sql.count(":"))) == code
    assert len(_rows(cur)) == 3


def test_bad_binds(cur):
    v = cur.var(int)
    # positions: two placeholders, one value
    assert raised_code(lambda: cur.execute("DELETE FROM emp WHERE id = :1 RETURNING id INTO :2", [v])) == "DPY-4009"
    # the INTO name not bound
    assert raised_code(lambda: cur.execute("DELETE FROM emp WHERE id = :id RETURNING id INTO :v", {"id": 1})) \
        == "ORA-01008"
    small = cur.var(int)                                    # arraysize 1 for three rows
    assert raised_code(lambda: cur.executemany("DELETE FROM emp WHERE id = :1 RETURNING id INTO :2",
                                         [(1, small), (2, small), (3, small)])) == "DPY-2016"
    assert len(_rows(cur)) == 3


def test_a_value_the_variable_cannot_take_undoes_the_statement(cur):
    v = cur.var(int)
    assert raised_code(lambda: cur.execute("UPDATE emp SET name = 'x' || name RETURNING name INTO :1", [v])) \
        == "ORA-01722"
    assert [r[1] for r in _rows(cur)] == ["ann", "bob", "cy"]


def test_setinputsizes_by_name(cur):
    v = cur.var(str)
    cur.setinputsizes(v=v, unused=int)       # (a name the statement has not: not bound)
    cur.execute("UPDATE emp SET name = 'z' WHERE id = :id RETURNING name INTO :v", {"id": 2})
    assert v.getvalue() == ["z"]


def test_returning_a_date_column(conn, dsn):
    # SQLite keeps a DATE as text: it comes back a datetime, as a query fetches it
    create_table(dsn, "CREATE TABLE ev (id INTEGER, at DATE)" if dsn.startswith("sqlite")
                  else "CREATE TABLE ev (id INTEGER, at TIMESTAMP(0))")
    cur = conn.cursor()
    when = dt.datetime(2026, 1, 2, 3, 4, 5)
    cur.execute("INSERT INTO ev (id, at) VALUES (1, :1)", [when])
    conn.commit()
    at, text = cur.var(dt.datetime), cur.var(sluice.DB_TYPE_DATE)
    cur.execute("UPDATE ev SET id = 2 RETURNING at, at INTO :1, :2", [at, text])
    assert at.getvalue() == [when] and text.getvalue() == [when]
