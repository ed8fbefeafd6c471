"""python-oracledb's output type handlers at a cursor, on both stores: a handler on the
connection or the cursor (the cursor's first), of python-oracledb 2.x's ``(cursor,
metadata)`` or the older ``(cursor, name, default_type, size, precision, scale)``, returns
``cursor.var(...)`` to fetch a column as another type — numbers as strings (Oracle's text
of a NUMBER), as exact ``Decimal``s, ``DB_TYPE_*`` types, ``outconverter`` functions — or
None to leave it; and a NUMBER(p, s) with a scale is a float even when whole."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal


import sluice
from tests.sqlhelpers import create_table, raised_code


def _amounts(conn, dsn):
    create_table(dsn, "CREATE TABLE amounts (n INTEGER, amt NUMERIC(30,2), name VARCHAR(10))")
    cur = conn.cursor()
    for n, amt, name in ((1, "2.00", "Ab"), (2, "0.10", "Cd"), (3, "123456789012345678901234567.89", None)):
        cur.execute(f"INSERT INTO amounts VALUES ({n}, {amt}, :1)", [name])
    conn.commit()


def _fetch(conn, sql="SELECT n, amt, name, 7/2 FROM amounts ORDER BY n", cursor=None):
    cur = cursor or conn.cursor()
    cur.execute(sql)
    return cur.fetchall()


def numbers_as_strings(cursor, metadata):
    if metadata.type_code is sluice.DB_TYPE_NUMBER:
        return cursor.var(str, arraysize=cursor.arraysize)
    return None


def numbers_as_decimals(cursor, name, default_type, size, precision, scale):    # the older form
    if default_type == sluice.DB_TYPE_NUMBER:
        return cursor.var(Decimal, arraysize=cursor.arraysize)
    return None


def test_numbers_as_strings(conn, dsn):
    _amounts(conn, dsn)
    conn.outputtypehandler = numbers_as_strings
    rows = _fetch(conn)
    assert [r[0] for r in rows] == ["1", "2", "3"] and [r[3] for r in rows] == ["3.5"] * 3
    assert rows[0][1:3] == ("2", "Ab") and rows[1][1] == "0.1"
    if dsn.startswith("postgresql"):     # exact (SQLite keeps a REAL of so many digits)
        assert rows[2][1] == "123456789012345678901234567.89"
    conn.outputtypehandler = None
    assert _fetch(conn)[0][0] == 1


def test_decimals_by_the_older_handler_on_the_cursor(conn, dsn):
    _amounts(conn, dsn)
    cur = conn.cursor()
    cur.outputtypehandler = numbers_as_decimals
    rows = _fetch(conn, cursor=cur)
    assert rows[1] == (Decimal(2), Decimal("0.1"), "Cd", Decimal("3.5"))
    assert all(type(v) is Decimal for r in rows for v in (r[0], r[1], r[3]))
    if dsn.startswith("postgresql"):
        assert rows[2][1] == Decimal("123456789012345678901234567.89")
    # the cursor's own handler is the one used; another cursor has none
    conn.outputtypehandler = numbers_as_strings
    assert type(_fetch(conn, cursor=cur)[0][0]) is Decimal
    assert _fetch(conn)[0][0] == "1"


def test_db_types_outconverters_and_nulls(conn, dsn):
    _amounts(conn, dsn)
    seen = []

    def handler(cursor, metadata):
        seen.append((metadata.name, metadata.type_code, metadata.type))
        if metadata.type_code is sluice.DB_TYPE_VARCHAR:
            return cursor.var(sluice.DB_TYPE_VARCHAR, arraysize=cursor.arraysize, outconverter=str.lower)
        if metadata.name == "N":
            return cursor.var(sluice.DB_TYPE_BINARY_DOUBLE, arraysize=cursor.arraysize,
                              outconverter=lambda v: v * 10)
        if metadata.name == "AMT":
            return cursor.var(int, arraysize=cursor.arraysize, outconverter=lambda v: ("amt", v),
                              convert_nulls=True)
        return None

    conn.outputtypehandler = handler
    rows = _fetch(conn, "SELECT n, amt, name, 7/2, SYSDATE FROM amounts WHERE n < 3 ORDER BY n")
    assert [r[:4] for r in rows] == [(10.0, ("amt", 2), "ab", 3.5), (20.0, ("amt", 0.1), "cd", 3.5)]
    assert type(rows[0][0]) is float and type(rows[1][4]) is dt.datetime
    assert seen[:3] == [("N", sluice.DB_TYPE_NUMBER, sluice.DB_TYPE_NUMBER),
                        ("AMT", sluice.DB_TYPE_NUMBER, sluice.DB_TYPE_NUMBER),
                        ("NAME", sluice.DB_TYPE_VARCHAR, sluice.DB_TYPE_VARCHAR)]
    # a NULL goes to the outconverter only with convert_nulls
    (name, amt), = _fetch(conn, "SELECT name, amt FROM amounts WHERE n = 3")
    assert name is None and amt[0] == "amt"


def test_a_handler_returning_no_var_or_an_unknown_type_is_refused(conn, dsn):
    _amounts(conn, dsn)
    conn.outputtypehandler = lambda cursor, metadata: "str"
    assert raised_code(lambda: _fetch(conn)) == "DPY-2015"
    conn.outputtypehandler = lambda cursor, metadata: cursor.var(list)
    assert raised_code(lambda: _fetch(conn)) == "DPY-3003"
    conn.outputtypehandler = lambda cursor, metadata: cursor.var(int)
    assert raised_code(lambda: _fetch(conn, "SELECT name FROM amounts WHERE n = 1")) == "ORA-01722"   # 'Ab'


def test_dates_as_strings_in_oracles_default_format(conn):
    conn.outputtypehandler = lambda cursor, metadata: cursor.var(str, arraysize=cursor.arraysize)
    cur = conn.cursor()
    cur.execute("SELECT :t FROM dual", {"t": dt.datetime(2026, 3, 4, 5, 6, 7)})
    assert cur.fetchall() == [("04-MAR-26",)]


def test_a_number_with_a_scale_is_a_float_even_when_whole(conn, dsn):
    _amounts(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT n, amt, CAST(amt AS NUMERIC(10,0)) AS whole FROM amounts WHERE n = 1")
    assert cur.fetchall() == [(1, 2.0, 2)]
    cur.execute("SELECT n, amt, CAST(amt AS NUMERIC(10,0)) AS whole FROM amounts WHERE n = 1")
    assert [type(v) for v in cur.fetchone()] == [int, float, int]
    assert cur.description[1][4:6] == (30, 2)
    conn.outputtypehandler = lambda cursor, metadata: None      # the same through a handler
    assert [type(v) for v in _fetch(conn, "SELECT n, amt FROM amounts WHERE n = 1")[0]] == [int, float]


def test_an_async_connections_handler(dsn):
    import asyncio

    async def main():
        async with sluice.connect_async(dsn) as connection:
            connection.outputtypehandler = numbers_as_strings
            cursor = connection.cursor()
            await cursor.execute("SELECT 7/2, 'x' FROM dual")
            return await cursor.fetchall()

    assert asyncio.run(main()) == [("3.5", "x")]
