"""Oracle's scalar functions a user types at a cursor answer on both stores as Oracle's:
GREATEST / LEAST (NULL when an argument is), REGEXP_LIKE / _SUBSTR / _INSTR / _COUNT /
_REPLACE (POSIX classes, match parameters, every match replaced), TO_NUMBER,
TO_TIMESTAMP, ADD_MONTHS (the last-day rule; of the clock with its arithmetic),
MONTHS_BETWEEN, LAST_DAY, NEXT_DAY, SYS_EXTRACT_UTC, LPAD / RPAD, INITCAP, ASCII, CHR, SYS_GUID,
RAWTOHEX of the views' MSG_ID — '' as NULL, Oracle's errors (store/oraclefns.py)."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.conftest import make_queue
from tests.sqlhelpers import query_code, query_rows

D = dt.datetime


@pytest.mark.parametrize("sql, row", [
    ("SELECT GREATEST(1, 2), LEAST(3, 4), GREATEST(5), GREATEST(1.5, 2, 0) FROM DUAL", (2, 3, 5, 2)),
    ("SELECT GREATEST(1, NULL, 3), LEAST(NULL, 1), GREATEST('a', '') FROM DUAL", (None, None, None)),
    ("SELECT GREATEST('apple', 'banana'), LEAST('apple', 'banana') FROM DUAL", ("banana", "apple")),
    ("SELECT COUNT(*) FROM DUAL WHERE REGEXP_LIKE('Abc', '^a', 'i')", (1,)),
    ("SELECT COUNT(*) FROM DUAL WHERE REGEXP_LIKE('Abc', '^a')", (0,)),
    ("SELECT COUNT(*) FROM DUAL WHERE REGEXP_LIKE('Abc', '^a', 'ic')", (0,)),
    ("SELECT REGEXP_SUBSTR('c1 c22 c333', '[0-9]+', 1, 2), REGEXP_SUBSTR('abc', 'x'), "
     "REGEXP_SUBSTR('key=val', '(\\w+)=(\\w+)', 1, 1, 'c', 2) FROM DUAL", ("22", None, "val")),
    ("SELECT REGEXP_INSTR('abcabc', 'c', 1, 2), REGEXP_INSTR('abc', 'b', 1, 1, 1), REGEXP_INSTR('abc', 'z') "
     "FROM DUAL", (6, 3, 0)),
    ("SELECT REGEXP_COUNT('banana', 'an'), REGEXP_COUNT('Banana', 'b', 1, 'i'), "
     "REGEXP_COUNT('a1b2', '[[:digit:]]'), REGEXP_COUNT('banana', 'a', 3) FROM DUAL", (2, 1, 2, 2)),
    ("SELECT REGEXP_REPLACE('a1b22', '[0-9]+', '#'), REGEXP_REPLACE('a1b2', '[0-9]'), "
     "REGEXP_REPLACE('a1b2c3', '[0-9]', 'x', 1, 2), REGEXP_REPLACE('123', '[0-9]') FROM DUAL",
     ("a#b#", "ab", "a1bxc3", None)),
    ("SELECT REGEXP_REPLACE('John Smith', '(\\w+) (\\w+)', '\\2, \\1'), REGEXP_REPLACE('aXa', 'x', '-', 1, 0, 'i'), "
     "REGEXP_REPLACE(NULL, 'a', 'b'), REGEXP_REPLACE('ab', 'a', NULL) FROM DUAL",
     ("Smith, John", "a-a", None, "b")),
    # Oracle's '.' matches no newline unless 'n'; '^' matches at a line only with 'm'
    ("SELECT REGEXP_COUNT('a' || CHR(10) || 'b', 'a.b'), REGEXP_COUNT('a' || CHR(10) || 'b', 'a.b', 1, 'n'), "
     "REGEXP_COUNT('a' || CHR(10) || 'b', '^b'), REGEXP_COUNT('a' || CHR(10) || 'b', '^b', 1, 'm') FROM DUAL",
     (0, 1, 0, 1)),
    ("SELECT TO_NUMBER('12.5') + 1, TO_NUMBER(' 42 '), TO_NUMBER(''), TO_NUMBER('-3') * 2 FROM DUAL",
     (13.5, 42, None, -6)),
    # a format model reads the text (Sluice refused one, SLU-00001)
    ("SELECT TO_NUMBER('1,234.50', '9G999D99'), TO_NUMBER('$1,234', '$9,999'), TO_NUMBER('-12.5', '99.99'), "
     "TO_NUMBER('1,5', '9,9'), TO_NUMBER('', '99') FROM DUAL", (1234.5, 1234, -12.5, 15, None)),
    ("SELECT TO_NUMBER(' 12,345.68', '99,999.99'), TO_NUMBER('12-', '99MI'), TO_NUMBER('<12>', '99PR'), "
     "TO_NUMBER('+5', 'S9'), TO_NUMBER('.5', '9.9') FROM DUAL", (12345.68, -12, -12, 5, 0.5)),
    ("SELECT TO_TIMESTAMP('2026-01-02 03:04:05.25', 'YYYY-MM-DD HH24:MI:SS.FF'), "
     "TO_TIMESTAMP('02-01-2026 03:04', 'DD-MM-YYYY HH24:MI') FROM DUAL",
     (D(2026, 1, 2, 3, 4, 5, 250000), D(2026, 1, 2, 3, 4))),
    ("SELECT ADD_MONTHS(DATE '2026-01-31', 1), ADD_MONTHS(DATE '2026-02-28', 1), ADD_MONTHS(DATE '2026-03-15', -2), "
     "ADD_MONTHS(DATE '2024-02-29', 12) FROM DUAL", (D(2026, 2, 28), D(2026, 3, 31), D(2026, 1, 15), D(2025, 2, 28))),
    ("SELECT ADD_MONTHS(d, 1), ADD_MONTHS(d, n) FROM (SELECT DATE '2026-01-31' d, 13 n FROM DUAL)",
     (D(2026, 2, 28), D(2027, 2, 28))),
    ("SELECT LAST_DAY(DATE '2026-02-03') + 1, NEXT_DAY(DATE '2026-11-30', 'FRI') - 1 FROM DUAL",
     (D(2026, 3, 1), D(2026, 12, 3))),
    ("SELECT ADD_MONTHS(DATE '2026-01-15', 1) + 1, ADD_MONTHS(DATE '2026-01-15', 1) - 0.5 FROM DUAL",
     (D(2026, 2, 16), D(2026, 2, 14, 12))),
    ("SELECT MONTHS_BETWEEN(DATE '2026-03-01', DATE '2026-01-01'), MONTHS_BETWEEN(DATE '2026-02-28', "
     "DATE '2026-01-31'), MONTHS_BETWEEN(DATE '2026-01-16', DATE '2026-01-01'), "
     "MONTHS_BETWEEN(NULL, DATE '2026-01-01') FROM DUAL", (2, 1, 15 / 31, None)),
    ("SELECT MONTHS_BETWEEN(d, e) FROM (SELECT DATE '2026-01-01' d, DATE '2026-03-01' e FROM DUAL)", (-2,)),
    ("SELECT LAST_DAY(DATE '2024-02-10'), LAST_DAY(TIMESTAMP '2026-04-03 10:11:12') FROM DUAL",
     (D(2024, 2, 29), D(2026, 4, 30, 10, 11, 12))),
    ("SELECT LAST_DAY(d) FROM (SELECT DATE '2026-12-05' d FROM DUAL)", (D(2026, 12, 31),)),
    ("SELECT LPAD('7', 3, '0'), RPAD('a', 3, '-'), LPAD('abc', 2), LPAD('x', 3), LPAD(7, 3, '0'), "
     "RPAD('ab', 5, 'xy') FROM DUAL", ("007", "a--", "ab", "  x", "007", "abxyx")),
    ("SELECT LPAD('x', 0), LPAD('', 3, '0'), LPAD('x', 3, ''), RPAD(NULL, 2) FROM DUAL", (None, None, None, None)),
    ("SELECT INITCAP('hello wORLD-foo'), INITCAP(''), ASCII('A'), ASCII(''), CHR(66) FROM DUAL",
     ("Hello World-Foo", None, 65, None, "B")),
    ("SELECT TRIM('x' FROM 'xxaxx'), TRIM(LEADING 'x' FROM 'xxa'), TRIM(TRAILING 'x' FROM 'axx'), "
     "TRIM(BOTH FROM '  a  '), TRIM('x' FROM 'xx'), LTRIM('xyxa', 'xy'), RTRIM('axyx', 'xy') FROM DUAL",
     ("a", "a", "a", "a", None, "a", "a")),
    ("SELECT RAWTOHEX(HEXTORAW('0a1b')), HEXTORAW('0a1b') FROM DUAL", ("0A1B", b"\n\x1b")),
    ("SELECT NEXT_DAY(DATE '2026-11-30', 'FRIDAY'), NEXT_DAY(TIMESTAMP '2026-12-04 10:00:00', 'fri'), "
     "NEXT_DAY(d, 'MON') FROM (SELECT DATE '2026-11-30' d FROM DUAL)",
     (D(2026, 12, 4), D(2026, 12, 11, 10), D(2026, 12, 7))),
])
def test_oracle_answers_on_both_stores(conn, sql, row):
    assert query_rows(conn, sql) == [row]


@pytest.mark.parametrize("sql, code", [
    ("SELECT TO_NUMBER('x') FROM DUAL", "ORA-01722"),
    ("SELECT COUNT(*) FROM DUAL WHERE REGEXP_LIKE('a', '(a')", "ORA-12725"),
    ("SELECT REGEXP_SUBSTR('a', '[a') FROM DUAL", "ORA-12726"),
    ("SELECT REGEXP_COUNT('a', 'a', 1, 'q') FROM DUAL", "ORA-01760"),
    ("SELECT SYS_EXTRACT_UTC(LOCALTIMESTAMP) FROM DUAL", "SLU-00001"),
    ("SELECT NEXT_DAY(DATE '2026-11-30', 'XX') FROM DUAL", "ORA-01846"),
    ("SELECT TRIM('xy' FROM 'xxaxx') FROM DUAL", "ORA-30001"),
    ("SELECT TO_NUMBER('12345', '9,999') FROM DUAL", "ORA-01722"),     # (more digits than the model's)
    ("SELECT TO_NUMBER('1.234', '9.99') FROM DUAL", "ORA-01722"),
    ("SELECT TO_NUMBER('1,234', '9999') FROM DUAL", "ORA-01722"),      # (no group separator in the model)
    ("SELECT TO_NUMBER('$12', '99') FROM DUAL", "ORA-01722"),
    ("SELECT TO_NUMBER('12', '99', 'NLS_NUMERIC_CHARACTERS = ''.,''') FROM DUAL", "SLU-00001"),
    ("SELECT DUMP('a') FROM DUAL", "SLU-00001"),
    # arithmetic on a computed date of a column: neither store counts it in days (SQLite said 0)
    ("SELECT ADD_MONTHS(d, 1) - d FROM (SELECT DATE '2026-01-15' d FROM DUAL)", "SLU-00001"),
])
def test_oracle_errors(conn, sql, code):
    assert query_code(conn, sql) == code


def test_the_clock_plus_months_and_its_arithmetic(conn):
    """ADD_MONTHS of SYSDATE (or a datetime bind) and a number is a DATE its arithmetic
    works on: ADD_MONTHS(SYSDATE, 1) - SYSDATE is the month's days."""
    (days, date), = query_rows(conn, "SELECT ADD_MONTHS(SYSDATE, 1) - SYSDATE, ADD_MONTHS(SYSDATE, 0) FROM DUAL")
    assert days in (28, 29, 30, 31) and type(days) is int
    assert type(date) is D and date.microsecond == 0 and abs(date - D.now()) < dt.timedelta(minutes=1)
    cur = conn.cursor()
    cur.execute("SELECT ADD_MONTHS(:d, :n) FROM DUAL", {"d": D(2026, 1, 31, 9, 30), "n": 1})
    assert cur.fetchall() == [(D(2026, 2, 28, 9, 30),)]


def test_sys_extract_utc_of_the_clock(conn):
    (utc,), = query_rows(conn, "SELECT SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM DUAL")
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    assert type(utc) is D and abs(utc - now) < dt.timedelta(minutes=1)


def test_sys_guid_is_sixteen_new_bytes(conn):
    (a, b), = query_rows(conn, "SELECT SYS_GUID(), SYS_GUID() FROM DUAL")
    assert type(a) is bytes and len(a) == 16 and len(b) == 16


def test_headings_as_oracle_gives_them(conn):
    cur = conn.cursor()
    cur.execute("SELECT GREATEST(1, 2), LPAD('7', 3, '0'), MONTHS_BETWEEN(DATE '2026-03-01', DATE '2026-01-01') "
                "FROM DUAL")
    assert [d[0] for d in cur.description] == [
        "GREATEST(1,2)", "LPAD('7',3,'0')", "MONTHS_BETWEEN(DATE'2026-03-01',DATE'2026-01-01')"]


def test_rawtohex_of_a_views_msg_id(conn):
    """The AQ$ view's MSG_ID: RAWTOHEX of it is the message id's hex (SQLite raised, and
    PostgreSQL had no RAWTOHEX of text); REGEXP_LIKE on a view's column."""
    make_queue(conn, "Q", "QT")
    props = conn.msgproperties(payload=b"hello", correlation="c1")
    conn.queue("Q").enqone(props)
    conn.commit()
    rows = query_rows(conn, "SELECT RAWTOHEX(MSG_ID), REGEXP_SUBSTR(CORR_ID, '[0-9]+') FROM AQ$QT "
                       "WHERE REGEXP_LIKE(CORR_ID, '^C', 'i')")
    assert rows == [(props.msgid.hex().upper(), "1")]


def test_regexp_like_as_a_select_item_is_a_boolean(conn):
    """Oracle 23ai answers a condition as a select item with a BOOLEAN, which python-oracledb
    fetches as True / False (before 23c Oracle refused it): SQLite gave 1 / 0."""
    cur = conn.cursor()
    cur.execute("SELECT REGEXP_LIKE('abc', 'b'), REGEXP_LIKE('abc', '^B'), REGEXP_LIKE(NULL, 'x'), "
                "JSON_EXISTS('{\"a\": 1}', '$.a') FROM DUAL")
    rows = cur.fetchall()
    assert rows == [(True, False, None, True)] and [type(v) for v in rows[0]] == [bool, bool, type(None), bool]
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_BOOLEAN] * 4
    assert query_rows(conn, "SELECT CASE WHEN REGEXP_LIKE('abc', 'b') THEN 1 ELSE 0 END FROM DUAL") == [(1,)]
