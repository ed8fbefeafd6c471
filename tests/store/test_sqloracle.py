"""The text :func:`sluice.store.sqloracle.oracle_words` makes of a user's statement: the
session words as literals, SQLite's divisors checked, Oracle's heading kept by an alias
only where an unaliased select item changed, and nothing else touched."""

from __future__ import annotations

import datetime as dt

import pytest

from sluice.store.sqloracle import oracle_words

NOW = dt.datetime(2026, 11, 30, 7, 8, 9, 123456)


def sqlite(sql):
    return oracle_words(sql, "SCOTT", sqlite=True, now=NOW).text


def pg(sql):
    return oracle_words(sql, "SCOTT", sqlite=False, now=NOW).text


@pytest.mark.parametrize("sql, text", [
    ("SELECT USER FROM DUAL", """SELECT 'SCOTT' AS "USER" FROM DUAL"""),
    ("select user u from dual", "select 'SCOTT' u from dual"),
    ("SELECT x FROM t WHERE owner = USER", "SELECT x FROM t WHERE owner = 'SCOTT'"),
    ("SELECT sys_context('userenv', 'current_schema') FROM dual",
     """SELECT 'SCOTT' AS "SYS_CONTEXT('USERENV','CURRENT_SCHEMA')" FROM dual"""),
    ("SELECT SYS_CONTEXT('USERENV', 'SESSIONID') FROM dual",     # not one Sluice answers
     "SELECT SYS_CONTEXT('USERENV', 'SESSIONID') FROM dual"),
    ("SELECT SYSDATE, SYSTIMESTAMP(3) AS t FROM dual",
     """SELECT TIMESTAMP '2026-11-30 07:08:09' AS "SYSDATE", TIMESTAMP '2026-11-30 07:08:09.123000' AS t FROM dual"""),
    ("SELECT 'USER', \"USER\", t.user, user_name, USER_F(1) FROM t -- USER",
     "SELECT 'USER', \"USER\", t.user, user_name, USER_F(1) FROM t -- USER"),
    ("SELECT 1/0 FROM dual", "SELECT 1/0 FROM dual"),            # PostgreSQL raises by itself
    ("SELECT SYSDATE - INTERVAL '1' DAY FROM dual",
     """SELECT TIMESTAMP '2026-11-30 07:08:09' - INTERVAL '1' DAY AS "SYSDATE-INTERVAL'1'DAY" FROM dual"""),
])
def test_postgresql_text(sql, text):
    assert pg(sql) == text


@pytest.mark.parametrize("sql, text", [
    ("SELECT 1/0 FROM DUAL", """SELECT 1/sluice_divisor(0) AS "1/0" FROM DUAL"""),
    ("SELECT a / -b x FROM t", "SELECT a / sluice_divisor(-b) x FROM t"),
    ("SELECT a / b / c AS q FROM t", "SELECT a / sluice_divisor(b) / sluice_divisor(c) AS q FROM t"),
    ("SELECT a / (b / c) q FROM t", "SELECT a / sluice_divisor((b / sluice_divisor(c))) q FROM t"),
    ("SELECT a / f(b, c) q, a / t.c r, a / :d s FROM t",
     "SELECT a / sluice_divisor(f(b, c)) q, a / sluice_divisor(t.c) r, a / sluice_divisor(:d) s FROM t"),
    ("SELECT a / CASE WHEN b > 0 THEN b END q FROM t",
     "SELECT a / sluice_divisor(CASE WHEN b > 0 THEN b END) q FROM t"),
    ("SELECT COUNT(*) FROM t WHERE a / b > 1", "SELECT COUNT(*) FROM t WHERE a / sluice_divisor(b) > 1"),
    ("SELECT '1/0' /* 1/0 */ FROM t", "SELECT '1/0' /* 1/0 */ FROM t"),
    ("SELECT LISTAGG(a / b, ',') WITHIN GROUP (ORDER BY a) FROM t",
     """SELECT LISTAGG(a / sluice_divisor(b), ',') WITHIN GROUP (ORDER BY a) AS "LISTAGG(A/B,',')WITHINGROUP(ORDERBYA)" FROM t"""),
    ("SELECT SYSDATE FROM dual", """SELECT '2026-11-30 07:08:09' AS "SYSDATE" FROM dual"""),
    ("SELECT * FROM (SELECT USER FROM dual) t", """SELECT * FROM (SELECT 'SCOTT' AS "USER" FROM dual) t"""),
    ("SELECT DISTINCT USER, 1 FROM dual UNION ALL SELECT USER, 2 FROM dual",
     """SELECT DISTINCT 'SCOTT' AS "USER", 1 FROM dual UNION ALL SELECT 'SCOTT' AS "USER", 2 FROM dual"""),
])
def test_sqlite_text(sql, text):
    assert sqlite(sql) == text


def test_sqlite_clock_values_come_back_as_datetimes():
    t = oracle_words("SELECT SYSDATE, SYSTIMESTAMP, 'x' FROM dual", "SCOTT", sqlite=True, now=NOW)
    assert t.convert([("2026-11-30 07:08:09", "2026-11-30 07:08:09.123456", "x")]) \
        == [(NOW.replace(microsecond=0), NOW, "x")]


def test_a_statement_without_the_words_is_not_tokenised():
    assert oracle_words("SELECT a FROM t", "SCOTT", sqlite=True).dates == {}
