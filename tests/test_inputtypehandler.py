"""python-oracledb's input type handlers on both stores: ``handler(cursor, value,
arraysize)`` (the cursor's, else the connection's) is asked for each value bound that is
no ``cursor.var()``; the variable it returns binds the value through its
``inconverter``, None leaves the value as it is, anything else is DPY-2015."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import create_table
from tests.sqlhelpers import raised_code


class Point:
    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y


def points_as_text(cursor, value, arraysize):
    if isinstance(value, Point):
        return cursor.var(str, arraysize=arraysize, inconverter=lambda p: f"{p.x},{p.y}")
    return None


@pytest.fixture
def cur(conn, dsn):
    create_table(dsn, "CREATE TABLE shapes (id INTEGER, pos VARCHAR(20))")
    return conn.cursor()


def _rows(cur):
    cur.execute("SELECT id, pos FROM shapes ORDER BY id")
    return cur.fetchall()


def test_cursor_handler_converts_execute_binds(cur):
    seen = []

    def handler(cursor, value, arraysize):
        seen.append((cursor, value if not isinstance(value, Point) else "P", arraysize))
        return points_as_text(cursor, value, arraysize)
    cur.inputtypehandler = handler
    cur.execute("INSERT INTO shapes (id, pos) VALUES (:1, :2)", [1, Point(3, 4)])
    cur.execute("INSERT INTO shapes (id, pos) VALUES (:id, :pos)", id=2, pos=Point(5, 6))
    assert _rows(cur) == [(1, "3,4"), (2, "5,6")]
    assert seen[:2] == [(cur, 1, 1), (cur, "P", 1)]


def test_connection_handler_and_executemany(conn, cur):
    calls = []

    def handler(cursor, value, arraysize):
        calls.append(arraysize)
        return points_as_text(cursor, value, arraysize)
    conn.inputtypehandler = handler
    cur.executemany("INSERT INTO shapes (id, pos) VALUES (:1, :2)", [(1, Point(0, 1)), (2, Point(2, 3))])
    assert _rows(cur) == [(1, "0,1"), (2, "2,3")]
    assert calls == [2, 2]          # once per position, with the rows' count
    own = conn.cursor()
    own.inputtypehandler = lambda cursor, value, arraysize: None   # the cursor's first
    assert raised_code(lambda: own.execute("INSERT INTO shapes (id, pos) VALUES (:1, :2)", [3, Point(4, 5)])) \
        == "DPY-3002"
    conn.inputtypehandler = None


def test_handler_returning_no_variable_is_dpy_2015(cur):
    cur.inputtypehandler = lambda cursor, value, arraysize: "text"
    assert raised_code(lambda: cur.execute("INSERT INTO shapes (id, pos) VALUES (:1, :2)", [1, "a"])) == "DPY-2015"
    cur.inputtypehandler = None
    assert _rows(cur) == []


def test_variables_bound_are_not_handed_to_the_handler(cur):
    cur.inputtypehandler = lambda cursor, value, arraysize: pytest.fail("asked for a variable")
    v = cur.var(int)
    cur.execute("INSERT INTO shapes (id, pos) VALUES (7, 'a') RETURNING id INTO :1", [v])
    assert v.getvalue() == [7]
