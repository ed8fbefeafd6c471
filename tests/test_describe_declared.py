"""``cursor.description`` of a user's table's columns from their declared types, and their values
fetched as python-oracledb fetches them (``store/coltypes.py``, applied by ``store/coldesc.py``):
a query without rows, TIMESTAMP(n) and its time zones, BINARY_DOUBLE / BINARY_FLOAT, CHAR(n) —
for a table made at a cursor and one made in the database itself, on both stores."""

from __future__ import annotations

import datetime as dt

import sluice
from tests.sqlhelpers import create_table, query_rows

T = sluice  # the DB_TYPE_* constants

ORACLE_DDL = ("create table t (id number(10) primary key, name varchar2(20) not null, sal number(8,2), "
              "n number, hired date, ts timestamp(3), ts0 timestamp(0), tz timestamp with time zone, "
              "bd binary_double, bf binary_float, code char(4), r raw(8), doc clob)")


def _pg(dsn: str) -> bool:
    return not dsn.startswith("sqlite")


def _description(conn, sql: str) -> list[tuple]:
    cur = conn.cursor()
    cur.execute(sql)
    return [tuple(d) for d in cur.description]


def test_a_query_without_rows_is_described_as_one_with_rows(conn):
    """``select * from t where 1 = 0`` (a common way to read a table's columns) gives the declared
    types — NUMBER(p, s), DATE, TIMESTAMP, RAW, CLOB —, as the same query with rows does."""
    conn.cursor().execute(ORACLE_DDL)
    empty = _description(conn, "select * from t where 1 = 0")
    assert empty[:5] == [
        ("ID", T.DB_TYPE_NUMBER, 11, None, 10, 0, False),
        ("NAME", T.DB_TYPE_VARCHAR, 20, 20, None, None, False),
        ("SAL", T.DB_TYPE_NUMBER, 12, None, 8, 2, True),
        ("N", T.DB_TYPE_NUMBER, 127, None, 0, -127, True),
        ("HIRED", T.DB_TYPE_DATE, 23, None, None, None, True),
    ]
    assert empty[12] == ("DOC", T.DB_TYPE_CLOB, None, None, None, None, True)
    conn.cursor().execute("insert into t values (1, 'a', 2.5, 7, sysdate, systimestamp, systimestamp, "
                          "systimestamp, 2, 1.5, 'ab', hextoraw('ab'), 'x')")
    assert _description(conn, "select * from t") == empty
    assert _description(conn, "select id, sal, hired from t where 1 = 0") == [empty[0], empty[2], empty[4]]


def test_a_column_of_nulls_is_described_as_declared(conn):
    """A column whose fetched values are all NULL has no value to read its type from: its
    declaration gives it."""
    conn.cursor().execute(ORACLE_DDL)
    conn.cursor().execute("insert into t (id, name) values (1, 'a')")
    d = _description(conn, "select sal, n, hired from t")
    assert [x[1:6] for x in d] == [(T.DB_TYPE_NUMBER, 12, None, 8, 2), (T.DB_TYPE_NUMBER, 127, None, 0, -127),
                                   (T.DB_TYPE_DATE, 23, None, None, None)]


def test_a_table_made_in_the_database_without_rows(conn, dsn):
    """A table made behind Sluice's back is described by its declared types too."""
    if _pg(dsn):
        create_table(dsn, "create table made (id numeric(5,0) primary key, amount numeric(9,2), "
                          "at timestamp(3), code char(3))")
    else:
        create_table(dsn, "create table made (id NUMBER(5) primary key, amount NUMBER(9,2), "
                          "at TIMESTAMP(3), code CHAR(3))")
    assert _description(conn, "select * from made where 1 = 0") == [
        ("ID", T.DB_TYPE_NUMBER, 6, None, 5, 0, False),
        ("AMOUNT", T.DB_TYPE_NUMBER, 13, None, 9, 2, True),
        ("AT", T.DB_TYPE_TIMESTAMP, 23, None, 0, 3, True),
        ("CODE", T.DB_TYPE_CHAR, 3, 3, None, None, True),
    ]


def test_timestamp_precision_is_its_scale(conn):
    """python-oracledb describes a TIMESTAMP(n) with precision 0 and scale n (both None for
    TIMESTAMP(0)), display size 23; its value keeps n fractional digits (rounded half up)."""
    conn.cursor().execute(ORACLE_DDL)
    conn.cursor().execute("insert into t (id, name, ts, ts0) values (1, 'a', timestamp '2020-01-01 00:00:00.123456', "
                          "timestamp '2020-01-01 00:00:01')")
    conn.cursor().execute("insert into t (id, name, ts) values (2, 'b', timestamp '2020-01-01 00:00:00.9999')")
    cur = conn.cursor()
    cur.execute("select ts, ts0 from t order by id")
    assert [tuple(d) for d in cur.description] == [("TS", T.DB_TYPE_TIMESTAMP, 23, None, 0, 3, True),
                                                   ("TS0", T.DB_TYPE_TIMESTAMP, 23, None, None, None, True)]
    assert cur.fetchall() == [(dt.datetime(2020, 1, 1, 0, 0, 0, 123000), dt.datetime(2020, 1, 1, 0, 0, 1)),
                              (dt.datetime(2020, 1, 1, 0, 0, 1), None)]


def test_timestamp_with_time_zone(conn, dsn):
    """TIMESTAMP WITH TIME ZONE is DB_TYPE_TIMESTAMP_TZ, fetched as python-oracledb fetches it: a
    datetime without its zone.  WITH LOCAL TIME ZONE is DB_TYPE_TIMESTAMP_LTZ (PostgreSQL keeps
    both as ``timestamp with time zone``: DB_TYPE_TIMESTAMP_TZ there)."""
    conn.cursor().execute("create table z (id number primary key, tz timestamp with time zone, "
                          "ltz timestamp with local time zone)")
    assert [d[1] for d in _description(conn, "select tz, ltz from z")] == [
        T.DB_TYPE_TIMESTAMP_TZ, T.DB_TYPE_TIMESTAMP_TZ if _pg(dsn) else T.DB_TYPE_TIMESTAMP_LTZ]
    assert _description(conn, "select tz from z")[0] == ("TZ", T.DB_TYPE_TIMESTAMP_TZ, 23, None, 0, 6, True)
    conn.cursor().execute("insert into z values (1, :1, null)", [dt.datetime(2020, 1, 1, 12, 0)])
    (value,), = query_rows(conn, "select tz from z")
    assert value == dt.datetime(2020, 1, 1, 12, 0) and value.tzinfo is None


def test_binary_double_and_float(conn, dsn, monkeypatch):
    """BINARY_DOUBLE / BINARY_FLOAT are described so (display size 127) and fetched as floats,
    whole ones too, and with ``defaults.fetch_decimals`` (a NUMBER's setting)."""
    conn.cursor().execute(ORACLE_DDL)
    conn.cursor().execute("insert into t (id, name, bd, bf) values (1, 'a', 2, 1.5)")
    assert _description(conn, "select bd, bf from t") == [("BD", T.DB_TYPE_BINARY_DOUBLE, 127, None, None, None, True),
                                                         ("BF", T.DB_TYPE_BINARY_FLOAT, 127, None, None, None, True)]
    rows = query_rows(conn, "select bd, bf from t")
    assert rows == [(2.0, 1.5)] and type(rows[0][0]) is float
    monkeypatch.setattr(sluice.defaults, "fetch_decimals", True)
    (bd, bf), = query_rows(conn, "select bd, bf from t")
    assert (type(bd), type(bf)) == (float, float)
    conn.commit()
    if _pg(dsn):
        create_table(dsn, "create table made (x double precision, y real)")
    else:
        create_table(dsn, "create table made (x BINARY_DOUBLE, y BINARY_FLOAT)")
    assert [d[1] for d in _description(conn, "select * from made where 1 = 0")] == [
        T.DB_TYPE_BINARY_DOUBLE, T.DB_TYPE_BINARY_FLOAT]


def test_char_is_blank_padded(conn, dsn):
    """A CHAR(n) value comes back blank-padded to n, as Oracle (and PostgreSQL) give it."""
    conn.cursor().execute(ORACLE_DDL)
    conn.cursor().execute("insert into t (id, name, code) values (1, 'a', 'ab')")
    assert query_rows(conn, "select code, name from t") == [("ab  ", "a")]
    assert query_rows(conn, "select t.code as c from t t") == [("ab  ",)]
    conn.commit()
    create_table(dsn, "create table made (code char(3))")
    conn.cursor().execute("insert into made values ('x')")
    assert query_rows(conn, "select code from made") == [("x  ",)]


def test_create_table_as_select_keeps_the_timestamps(conn, dsn):
    """CREATE TABLE … AS SELECT takes a TIMESTAMP's precision and time zone from the description."""
    cur = conn.cursor()
    cur.execute("create table z (a timestamp(3), b timestamp(0), c timestamp with local time zone)")
    cur.execute("create table z2 as select * from z")
    assert [d[1:6] for d in _description(conn, "select * from z2")] == [
        (T.DB_TYPE_TIMESTAMP, 23, None, 0, 3), (T.DB_TYPE_TIMESTAMP, 23, None, None, None),
        (T.DB_TYPE_TIMESTAMP_TZ if _pg(dsn) else T.DB_TYPE_TIMESTAMP_LTZ, 23, None, 0, 6)]


def test_an_empty_data_frame_has_the_declared_types(conn):
    """``fetch_df_all`` types its columns by ``cursor.description``: without rows too."""
    import pyarrow

    conn.cursor().execute(ORACLE_DDL)
    frame = pyarrow.table(conn.fetch_df_all("select id, hired, ts, bd from t where 1 = 0"))
    assert [str(f.type) for f in frame.schema] == ["int64", "timestamp[s]", "timestamp[ms]", "double"]
