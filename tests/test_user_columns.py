"""A user's own table's DATE / TIMESTAMP / NUMBER(p, s) columns at a cursor answer as
python-oracledb and Oracle answer them, on both stores (the same expectations):

* a DATE or TIMESTAMP column is fetched as a naive ``datetime`` (SQLite holds it as text);
* ``CAST(x AS DATE | TIMESTAMP)`` of such a column, of arithmetic on the clock, of
  another CAST is a ``datetime`` (a DATE: whole seconds, typed DB_TYPE_DATE); of a
  number ORA-00932 (expected DATE got NUMBER), of text that is no date ORA-01861
  (SQLite answered the year: ``CAST('2026-01-02' AS DATE)`` was 2026);
* ``column ± n`` is the DATE n days later / earlier (rounded to the second), ``column -
  column`` the days between, ``column + column`` ORA-00975, ``column * n`` ORA-00932
  (SQLite added n to the year, PostgreSQL had no ``timestamp + integer``);
* a NUMBER(p, s) column with a scale is a float even when whole (``12`` is ``12.0``), as
  python-oracledb fetches it, and its description has its precision and scale."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.sqlhelpers import create_table, query_rows, raised_code

T = dt.datetime(2026, 1, 2, 3, 4, 5, 678901)
WHOLE = T.replace(microsecond=0)
DAY = dt.timedelta(days=1)


def _events(conn, dsn):
    """Table ``ev``: DATE columns (midnight values: PostgreSQL's DATE has no time of day),
    a TIMESTAMP, a NUMERIC(8,2), a NUMERIC(5), text; its rows written behind Sluice's back."""
    create_table(dsn, "CREATE TABLE ev (n INTEGER, d DATE, at TIMESTAMP, amt NUMERIC(8,2), "
                       "whole NUMERIC(5), label VARCHAR(20), due DATE)")
    create_table(dsn, "INSERT INTO ev VALUES (1, '2026-01-02 00:00:00', '2026-01-02 03:04:05.678901', 12, 7, "
                       "'2026-03-04 05:06:07', '2026-01-05 00:00:00'), (2, NULL, NULL, 2.5, NULL, 'x', NULL)")


def test_a_date_column_is_a_datetime(conn, dsn):
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT d, at, ev.at AS a2 FROM ev ORDER BY n")
    assert cur.fetchall() == [(dt.datetime(2026, 1, 2), T, T), (None, None, None)]
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_DATE] + [sluice.DB_TYPE_TIMESTAMP] * 2
    cur.execute("SELECT MAX(d), MIN(amt) AS low FROM ev")
    assert cur.fetchall() == [(dt.datetime(2026, 1, 2), 2.5)] and cur.description[0][1] is sluice.DB_TYPE_DATE
    cur.execute("SELECT * FROM ev WHERE n = 1")
    assert cur.fetchall() == [(1, dt.datetime(2026, 1, 2), T, 12.0, 7, "2026-03-04 05:06:07",
                               dt.datetime(2026, 1, 5))]


def test_nvl_of_a_date_column_is_a_date(conn, dsn):
    """NVL / COALESCE / CASE whose values are a user's date columns, date literals or the
    clock is a DATE (SQLite fetched the column's text)."""
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT NVL(d, DATE '2020-01-01'), NVL(d, ev.due), COALESCE(due, d, SYSDATE), "
                "CASE WHEN n = 1 THEN d END, NVL(d, due) AS x FROM ev ORDER BY n")
    first, second = cur.fetchall()
    assert first == (dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 5),
                     dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 2))
    assert second[:2] == (dt.datetime(2020, 1, 1), None) and type(second[2]) is dt.datetime
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_DATE] * 5


def test_cast_of_a_column_to_a_date(conn, dsn):
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT CAST(at AS DATE), CAST(at AS TIMESTAMP), CAST(d AS DATE), CAST(label AS DATE) "
                "FROM ev WHERE n = 1")
    assert cur.fetchall() == [(WHOLE, T, dt.datetime(2026, 1, 2), dt.datetime(2026, 3, 4, 5, 6, 7))]
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_DATE, sluice.DB_TYPE_TIMESTAMP,
                                               sluice.DB_TYPE_DATE, sluice.DB_TYPE_DATE]
    assert query_rows(conn, "SELECT CAST(at AS DATE) FROM ev WHERE n = 2") == [(None,)]
    assert query_rows(conn, "SELECT n FROM ev WHERE CAST(at AS DATE) = :t", {"t": T}) == [(1,)]


def test_cast_of_arithmetic_and_of_a_cast(conn, dsn):
    _events(conn, dsn)
    (sysdate, later, back, again, whole), = query_rows(
        conn, "SELECT SYSDATE, CAST(SYSDATE + 1 AS TIMESTAMP), CAST(CAST(SYSDATE AS TIMESTAMP) AS DATE), "
              "CAST(CAST(at AS DATE) AS TIMESTAMP), CAST(SYSDATE + whole AS DATE) FROM ev WHERE n = 1")
    assert later == sysdate + DAY and back == sysdate and again == WHOLE
    assert whole == sysdate + 7 * DAY
    cur = conn.cursor()
    cur.execute("SELECT CAST(CAST(at AS TIMESTAMP) AS DATE) FROM ev WHERE n = 1")
    assert cur.fetchall() == [(WHOLE,)] and cur.description[0][1] is sluice.DB_TYPE_DATE


def test_a_date_column_plus_or_minus_days(conn, dsn):
    _events(conn, dsn)
    cur = conn.cursor()
    assert query_rows(conn, "SELECT MAX(d) + 1, MIN(due) - MAX(d) FROM ev") == [(dt.datetime(2026, 1, 3), 3)]
    cur.execute("SELECT d + 1, at - 1/24, ev.at + :n AS later, d - 0.5 FROM ev ORDER BY n", {"n": 2})
    (plus, hour, later, half), nulls = cur.fetchall()
    assert (plus, half) == (dt.datetime(2026, 1, 3), dt.datetime(2026, 1, 1, 12)) and nulls == (None,) * 4
    # a DATE: the TIMESTAMP's fraction dropped first (Oracle: LOCALTIMESTAMP 07:08:49.847 + 1
    # is 07:08:49 the next day)
    assert (hour, later) == (WHOLE - dt.timedelta(hours=1), WHOLE + 2 * DAY)
    assert [d[:2] for d in cur.description] == [("D+1", sluice.DB_TYPE_DATE), ("AT-1/24", sluice.DB_TYPE_DATE),
                                                ("LATER", sluice.DB_TYPE_DATE), ("D-0.5", sluice.DB_TYPE_DATE)]
    assert query_rows(conn, "SELECT n FROM ev WHERE d + 1 > :t ORDER BY n", {"t": dt.datetime(2026, 1, 2, 12)}) \
        == [(1,)]
    cur.execute("UPDATE ev SET d = d + 2 WHERE n = 1")
    conn.commit()
    assert query_rows(conn, "SELECT d FROM ev WHERE n = 1") == [(dt.datetime(2026, 1, 4),)]


def test_trunc_of_a_date_column(conn, dsn):
    """TRUNC(date [, 'fmt']) is a DATE (SQLite answered NULL, PostgreSQL has no TRUNC of a date)."""
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT TRUNC(at), TRUNC(ev.at, 'MM'), TRUNC(whole) FROM ev ORDER BY n")
    assert cur.fetchall() == [(dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 1), 7), (None, None, None)]
    assert [d[1] for d in cur.description[:2]] == [sluice.DB_TYPE_DATE] * 2


def test_a_date_column_minus_a_date_column_is_days(conn, dsn):
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT due - d, ev.d - ev.due FROM ev ORDER BY n")
    assert cur.fetchall() == [(3, -3), (None, None)]
    assert cur.description[0][1] is sluice.DB_TYPE_NUMBER
    assert query_rows(conn, "SELECT n FROM ev WHERE due - d > 2") == [(1,)]


def test_a_timestamp_column_minus_a_date_is_an_interval(conn, dsn):
    """Oracle's TIMESTAMP minus a DATE or a TIMESTAMP (either way round) is an INTERVAL DAY
    TO SECOND, python-oracledb's ``timedelta`` (SQLite refused it: SLU-00001; PostgreSQL
    answered the days between of a literal, the clock or a bind); a DATE minus a DATE stays
    a number of days."""
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT at - d, d - at, at - DATE '2026-01-01', at - TIMESTAMP '2026-01-02 03:04:05.5', "
                "DATE '2026-01-03' - at, at - :t, ev.at - ev.at, SYSDATE - at FROM ev ORDER BY n",
                {"t": dt.datetime(2026, 1, 1)})
    (*known, since), nulls = cur.fetchall()
    hours = T - dt.datetime(2026, 1, 2)
    assert known == [hours, -hours, DAY + hours, dt.timedelta(microseconds=178901),
                     dt.datetime(2026, 1, 3) - T, DAY + hours, dt.timedelta(0)]
    assert type(since) is dt.timedelta and nulls == (None,) * 8
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_INTERVAL_DS] * 8
    cur.execute("SELECT d - DATE '2026-01-01', due - d FROM ev WHERE n = 1")
    assert cur.fetchall() == [(1, 3)] and cur.description[0][1] is sluice.DB_TYPE_NUMBER
    assert query_rows(conn, "SELECT n FROM ev WHERE at - d IS NOT NULL ORDER BY at - d") == [(1,)]


def test_a_date_column_plus_a_column_of_days(conn, dsn):
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT d + whole, due - whole, 1 + d, whole + d, :n + ev.d FROM ev ORDER BY n", {"n": 0.5})
    assert cur.fetchall() == [(dt.datetime(2026, 1, 9), dt.datetime(2025, 12, 29), dt.datetime(2026, 1, 3),
                               dt.datetime(2026, 1, 9), dt.datetime(2026, 1, 2, 12)), (None,) * 5]
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_DATE] * 5
    cur.execute("SELECT SYSDATE, SYSDATE - whole, :t - ev.whole FROM ev WHERE n = 1", {"t": T})
    (sysdate, back, t_back), = cur.fetchall()
    assert (back, t_back) == (sysdate - 7 * DAY, WHOLE - 7 * DAY)      # (PostgreSQL: ORA-00932)
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_DATE] * 3


# what Oracle refuses, with Oracle's error
REFUSED = {
    "SELECT CAST(n AS DATE) FROM ev": "ORA-00932",              # expected DATE got NUMBER
    "SELECT CAST(amt AS TIMESTAMP) FROM ev": "ORA-00932",
    "SELECT CAST(label AS DATE) FROM ev WHERE n = 2": "ORA-01861",   # 'x': literal does not match format
    "SELECT d + due FROM ev": "ORA-00975",                      # date + date not allowed
    "SELECT at * 2 FROM ev": "ORA-00932",                       # expected NUMBER got DATE
    "SELECT d / 2 FROM ev": "ORA-00932",
    "SELECT 2 * d FROM ev": "ORA-00932",
}


def test_what_oracle_refuses_is_refused_so(conn, dsn):
    _events(conn, dsn)
    assert {sql: raised_code(lambda: query_rows(conn, sql)) for sql in REFUSED} == REFUSED


def test_a_number_with_a_scale_is_a_float_even_when_whole(conn, dsn):
    _events(conn, dsn)
    cur = conn.cursor()
    cur.execute("SELECT n, amt, whole, amt + 1, CAST(whole AS NUMERIC(6,1)) FROM ev ORDER BY n")
    rows = cur.fetchall()
    assert rows == [(1, 12.0, 7, 13, 7.0), (2, 2.5, None, 3.5, None)]
    assert [type(v) for v in rows[0]] == [int, float, int, int, float]
    assert [d[4:6] for d in cur.description[1:3]] == [(8, 2), (5, 0)]
    assert cur.description[4][4:6] == (6, 1)


def test_date_arithmetic_sluice_does_not_answer_is_refused(conn, dsn):
    """What Sluice cannot write as Oracle's date arithmetic is refused (PostgreSQL's
    ORA-00932, SQLite's SLU-00001), never answered on the year of SQLite's text."""
    _events(conn, dsn)
    for sql in ("SELECT d + whole * 2 FROM ev", "SELECT d - 1 + 2 * whole FROM ev", "SELECT (at) + 1 FROM ev",
                "SELECT ((at - 1)) + 1 FROM ev", "SELECT CASE WHEN n = 1 THEN at END + 1 FROM ev",
                "SELECT COALESCE(at, SYSTIMESTAMP) - 1 FROM ev"):
        with pytest.raises(sluice.Error):
            query_rows(conn, sql)


def test_the_tables_a_statement_names():
    from sluice.store.sqloracle import tokens
    from sluice.store.usercolumns import table_names

    assert table_names(tokens("SELECT a FROM hr.ev e JOIN t2 ON e.n = t2.n, t3 x WHERE n IN "
                              "(SELECT n FROM t4) AND n = ANY (SELECT n FROM aq$q_qt, dual)")) == \
        ["EV", "T2", "T3", "T4"]
    assert table_names(tokens("UPDATE ev SET d = d + 1")) == ["EV"]
    assert table_names(tokens('INSERT INTO "Ev" (n) SELECT n FROM sluice_x')) == ["EV"]
    assert table_names(tokens("SELECT SYSDATE + 1 FROM dual")) == []


def _catalog_reads(conn, dsn, call):
    """``call()``'s result and the requests it sent to the store beyond its own statement
    (PostgreSQL: the round trips after the first; SQLite: its reads of a table's columns)."""
    if dsn.startswith("sqlite"):
        seen = []
        db = conn.context.session.conn
        db.set_trace_callback(seen.append)
        try:
            out = call()
        finally:
            db.set_trace_callback(None)
        return out, [s for s in seen if "pragma_table_info" in s]
    from tests.store.conftest import round_trips
    out, trips = round_trips(conn, call)
    return out, trips[1:]


def test_the_types_of_a_users_columns_are_kept_until_its_ddl_changes_them(conn, dsn):
    """A statement with ± on a user's column looks the column's type up once, not each time
    it runs (PostgreSQL: one catalog query more each time); a change of the table's DDL
    behind Sluice's back is still seen at the statement's next run, a query's or DML's."""
    create_table(dsn, "CREATE TABLE k (n INTEGER, x NUMERIC(5))")
    create_table(dsn, "INSERT INTO k VALUES (1, 7)")
    sql = "SELECT x + 1 FROM k"
    assert query_rows(conn, sql) == [(8,)]
    assert _catalog_reads(conn, dsn, lambda: query_rows(conn, sql)) == ([(8,)], [])
    for ddl in ("DROP TABLE k", "CREATE TABLE k (n INTEGER, x TIMESTAMP)",
                "INSERT INTO k VALUES (1, '2026-01-02 03:04:05')"):
        create_table(dsn, ddl)
    assert query_rows(conn, sql) == [(WHOLE + DAY,)]          # a date now: the day after
    assert _catalog_reads(conn, dsn, lambda: query_rows(conn, sql))[1] == []
    for ddl in ("DROP TABLE k", "CREATE TABLE k (n INTEGER, x NUMERIC(5))", "INSERT INTO k VALUES (1, 2)"):
        create_table(dsn, ddl)
    cur = conn.cursor()
    cur.execute("UPDATE k SET x = x + 1 WHERE n = 1")     # a number again: DML sees it too
    conn.commit()
    assert query_rows(conn, "SELECT x FROM k") == [(3,)]
