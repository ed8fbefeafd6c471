"""The Oracle functions and literals an AQ user writes in queries on the views and on
their own tables answer alike on both stores, as Oracle answers them: NVL, NVL2, DECODE
(NULL matches NULL), DATE '…' / TIMESTAMP '…' literals, TO_CHAR / TO_DATE with the
common format models, SUBSTR / INSTR / LENGTH with Oracle's positions, '' as NULL in
them; a bad format model or text is the ORA error Oracle raises."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.sqlhelpers import create_table, query_code, query_rows


@pytest.mark.parametrize("sql, row", [
    ("SELECT NVL(NULL, 'x'), NVL('a', 'x'), NVL('', 'x'), NVL(NULL, 2) FROM DUAL", ("x", "a", "x", 2)),
    ("SELECT NVL2(NULL, 'a', 'b'), NVL2(1, 'a', 'b'), NVL2('', 'a', 'b') FROM DUAL", ("b", "a", "b")),
    ("SELECT DECODE(NULL, NULL, 'n', 'x'), DECODE('', NULL, 'n', 'x') FROM DUAL", ("n", "n")),
    ("SELECT DECODE(2, 1, 'one', 2, 'two', 'other'), DECODE(3, 1, 'one', 2, 'two'), "
     "DECODE(3, 1, 'one', 'other') FROM DUAL", ("two", None, "other")),
    ("SELECT DECODE(1, NULL, 'n', 1, 'one') FROM DUAL", ("one",)),
    ("SELECT DATE '2026-01-01', TIMESTAMP '2026-01-01 10:00:00' FROM DUAL",
     (dt.datetime(2026, 1, 1), dt.datetime(2026, 1, 1, 10))),
    ("SELECT TIMESTAMP '2026-01-01 10:00:00.25', DATE '2026-01-01' + 1 FROM DUAL",
     (dt.datetime(2026, 1, 1, 10, 0, 0, 250000), dt.datetime(2026, 1, 2))),
    ("SELECT 1 FROM DUAL WHERE DATE '2026-01-01' < TIMESTAMP '2026-01-01 00:00:01'", (1,)),
    ("SELECT TO_CHAR(DATE '2026-01-02', 'YYYY-MM-DD HH24:MI'), TO_CHAR(DATE '2026-01-02', 'DD-MON-YYYY') "
     "FROM DUAL", ("2026-01-02 00:00", "02-JAN-2026")),
    ("SELECT TO_CHAR(TIMESTAMP '2026-03-04 05:06:07', 'YYYYMMDD HH24MISS') FROM DUAL", ("20260304 050607",)),
    ("SELECT TO_CHAR(42), TO_CHAR(3.5), TO_CHAR(0.5), TO_CHAR('abc'), TO_CHAR(DATE '2026-01-02') FROM DUAL",
     ("42", "3.5", ".5", "abc", "02-JAN-26")),
    ("SELECT TO_DATE('02-JAN-2026', 'DD-MON-YYYY'), TO_DATE('2026-01-02 10:11:12', 'YYYY-MM-DD HH24:MI:SS') "
     "FROM DUAL", (dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 2, 10, 11, 12))),
    ("SELECT TO_CHAR(TO_DATE('2026-01-02 10:11:12', 'YYYY-MM-DD HH24:MI:SS'), 'HH24:MI') FROM DUAL", ("10:11",)),
    ("SELECT SUBSTR('hello', 2, 3), SUBSTR('hello', -3), SUBSTR('hello', 0, 2), SUBSTR('hello', -3, 2), "
     "SUBSTR('hello', 9), SUBSTR('hello', 2, 0) FROM DUAL", ("ell", "llo", "he", "ll", None, None)),
    ("SELECT INSTR('hello', 'l'), INSTR('hello', 'l', -1), INSTR('hello', 'l', 1, 2), INSTR('hello', 'z'), "
     "INSTR('hello', 'l', 4) FROM DUAL", (3, 4, 4, 0, 4)),
    ("SELECT LENGTH('hello'), LENGTH('') FROM DUAL", (5, None)),
    # an empty model is NULL (Oracle's empty string), not a date format model to refuse (ORA-01821)
    ("SELECT TO_CHAR(5, ''), TO_CHAR(DATE '2026-01-02', ''), TO_DATE('2026-01-02', ''), "
     "TO_DATE('', 'YYYY-MM-DD') FROM DUAL", (None, None, None, None)),
])
def test_the_same_answer_on_both_stores(conn, sql, row):
    assert query_rows(conn, sql) == [row]


def test_text_reading_like_a_date_of_the_statement_stays_text(conn):
    """A TO_CHAR, a concatenation, a string literal whose text is that of a date literal or
    the clock of the statement is text (SQLite turned any fetched text equal to a date
    literal's back into the datetime); the literal itself beside it is a datetime."""
    cur = conn.cursor()
    cur.execute("SELECT TO_CHAR(DATE '2024-01-02', 'YYYY-MM-DD HH24:MI:SS'), DATE '2024-01-02', "
                "'2024-01-02 ' || '00:00:00', '2024-01-02 00:00:00', "
                "TO_CHAR(SYSDATE, 'YYYY-MM-DD HH24:MI:SS') s, SYSDATE FROM DUAL")
    (text, date, joined, literal, now_text, now), = cur.fetchall()
    assert (text, date, joined, literal) == ("2024-01-02 00:00:00", dt.datetime(2024, 1, 2)) + (text,) * 2
    assert now_text == now.isoformat(" ")
    assert [c[1] for c in cur.description] == [sluice.DB_TYPE_VARCHAR, sluice.DB_TYPE_DATE] + \
        [sluice.DB_TYPE_VARCHAR] * 3 + [sluice.DB_TYPE_DATE]


def test_a_changed_item_keeps_oracles_heading(conn):
    cur = conn.cursor()
    cur.execute("SELECT NVL2(NULL, 'a', 'b'), DECODE(1, 1, 'x') d, DATE '2026-01-01' FROM DUAL")
    assert [c[0] for c in cur.description] == ["NVL2(NULL,'A','B')", "D", "DATE'2026-01-01'"]


def test_on_a_users_table(conn, dsn):
    create_table(dsn, "CREATE TABLE orders (id INTEGER, note TEXT, placed TIMESTAMP)")
    cur = conn.cursor()
    cur.execute("INSERT INTO orders VALUES (1, 'rush', TO_DATE('2026-01-02 10:00:00', 'YYYY-MM-DD HH24:MI:SS'))")
    cur.execute("INSERT INTO orders VALUES (2, NULL, DATE '2026-02-03')")
    rows = query_rows(conn, "SELECT id, NVL(note, '-'), NVL2(note, 'y', 'n'), DECODE(note, NULL, 'none', 'rush', 'R'), "
                      "SUBSTR(note, -2), INSTR(note, 'u'), TO_CHAR(placed, 'DD-MON-YYYY') FROM orders ORDER BY id")
    assert rows == [(1, "rush", "y", "R", "sh", 2, "02-JAN-2026"), (2, "-", "n", "none", None, None, "03-FEB-2026")]
    assert query_rows(conn, "SELECT id FROM orders WHERE placed >= DATE '2026-02-01'") == [(2,)]
    assert query_rows(conn, "SELECT id FROM orders WHERE placed < TIMESTAMP '2026-01-02 10:00:01'") == [(1,)]


def test_decode_matches_a_null_expression_to_a_null_search(conn, dsn):
    """DECODE of an expression with a NULL search matches a NULL value (was SLU-00001: the
    operand is written once per search, as translated, its binds too); one whose value may
    differ each time it is evaluated is still refused."""
    create_table(dsn, "CREATE TABLE labels (n INTEGER, label VARCHAR(20))")
    cur = conn.cursor()
    cur.execute("INSERT INTO labels VALUES (1, 'x')")
    cur.execute("INSERT INTO labels VALUES (2, NULL)")
    rows = query_rows(conn, "SELECT n, DECODE(UPPER(label), NULL, 'none', 'X', 'ex', 'other'), "
                      "DECODE(n + 1, NULL, 'none', 2, 'two', 'other'), "
                      "DECODE(SUBSTR(label, 1, 1), 'x', 'sub', NULL, DECODE(n / 2, NULL, 'half?', 1, 'one')) "
                      "FROM labels ORDER BY n")
    assert rows == [(1, "ex", "two", "sub"), (2, "none", "other", "one")]
    cur.execute("SELECT DECODE(NULLIF(label, :v), NULL, 'gone', label) FROM labels ORDER BY n", {"v": "y"})
    assert cur.fetchall() == [("x",), ("gone",)]
    cur.execute("SELECT DECODE(NULLIF(label, :1), NULL, :2, label), :3 FROM labels ORDER BY n", ["x", "gone", 3])
    assert cur.fetchall() == [("gone", 3), ("gone", 3)]
    assert query_code(conn, "SELECT DECODE(DBMS_RANDOM.VALUE(1, 2), NULL, 'n', 'v') FROM labels") == "SLU-00001"


def test_on_the_views(conn):
    conn.aqadm.create_queue_table(queue_table="fq_qt", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="fq", queue_table="fq_qt")
    rows = query_rows(conn, "SELECT DECODE(queue_type, 'NORMAL_QUEUE', 'N', 'E'), NVL(user_comment, 'none'), "
                      "SUBSTR(name, 1, 2), LENGTH(name) FROM user_queues WHERE name = 'FQ'")
    assert rows == [("N", "none", "FQ", 2)]


@pytest.mark.parametrize("sql, code", [
    ("SELECT TO_DATE('2026-01-01', 'QQQQ-MM-DD') FROM DUAL", "ORA-01821"),
    ("SELECT TO_CHAR(DATE '2026-01-01', 'YYYY-XX') FROM DUAL", "ORA-01821"),
    ("SELECT TO_DATE('x', 'YYYY-MM-DD') FROM DUAL", "ORA-01861"),
    ("SELECT TO_DATE('2026-13-01', 'YYYY-MM-DD') FROM DUAL", "ORA-01843"),
    ("SELECT TO_DATE('2026-01-32', 'YYYY-MM-DD') FROM DUAL", "ORA-01847"),
    ("SELECT TO_DATE('2026-01-01 25:00:00', 'YYYY-MM-DD HH24:MI:SS') FROM DUAL", "ORA-01850"),
    ("SELECT DATE '2026-1-1x' FROM DUAL", "ORA-01861"),
    ("SELECT DATE '2026-13-01' FROM DUAL", "ORA-01843"),
    ("SELECT TIMESTAMP '2026-01-01 10:61:00' FROM DUAL", "ORA-01851"),
    ("SELECT INSTR('hello', 'l', 1, 0) FROM DUAL", "ORA-01428"),
])
def test_bad_text_or_format_is_oracles_error(conn, sql, code):
    assert query_code(conn, sql) == code


def test_a_bad_date_in_a_column_is_oracles_error(conn, dsn):
    create_table(dsn, "CREATE TABLE texts (t TEXT)")
    cur = conn.cursor()
    cur.execute("INSERT INTO texts VALUES ('2026-13-01')")
    assert query_code(conn, "SELECT TO_DATE(t, 'YYYY-MM-DD') FROM texts") == "ORA-01843"
    cur.execute("UPDATE texts SET t = '2026-01-05'")
    assert query_rows(conn, "SELECT TO_DATE(t, 'YYYY-MM-DD') FROM texts") == [(dt.datetime(2026, 1, 5),)]


def test_a_store_of_schema_25_gets_the_functions(dsn):
    """Schema 26 added PostgreSQL's ORACLE_SUBSTR … (an older store has none): opening one
    makes them (SQLite registers its own per connection)."""
    conn = sluice.connect(dsn)
    conn.close()
    if dsn.startswith("postgresql"):
        create_table(dsn, "DROP FUNCTION ORACLE_SUBSTR(TEXT, NUMERIC, NUMERIC) CASCADE")
    create_table(dsn, "UPDATE SLUICE_META SET VALUE = '25' WHERE KEY = 'schema_version'")
    conn = sluice.connect(dsn)
    try:
        assert query_rows(conn, "SELECT SUBSTR('hello', -3, 2) FROM DUAL") == [("ll",)]
    finally:
        conn.close()
