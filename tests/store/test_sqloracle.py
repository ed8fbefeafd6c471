"""The text :func:`sluice.store.sqloracle.oracle_words` makes of a user's statement: the
session words as literals, the clock's date arithmetic folded, divisors checked (SQLite)
and made exact, Oracle's heading kept by an alias only where an unaliased select item
changed, and nothing else touched."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
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
    # PostgreSQL raises for zero by itself; a numeric divisor makes 7/2 3.5
    ("SELECT 1/0 FROM dual", """SELECT 1/CAST(0 AS NUMERIC) AS "1/0" FROM dual"""),
    ("SELECT a / (b + 1) q FROM t", "SELECT a / CAST((b + 1) AS NUMERIC) q FROM t"),
    ("SELECT SYSDATE - INTERVAL '1' DAY FROM dual",
     """SELECT TIMESTAMP '2026-11-29 07:08:09' AS "SYSDATE-INTERVAL'1'DAY" FROM dual"""),
    ("SELECT x FROM t WHERE at > SYSDATE - 1/24", "SELECT x FROM t WHERE at > TIMESTAMP '2026-11-30 06:08:09'"),
    ("SELECT x FROM t WHERE at > SYSTIMESTAMP - INTERVAL '1-2' YEAR TO MONTH",
     "SELECT x FROM t WHERE at > TIMESTAMP '2025-09-30 07:08:09.123456'"),
    ("SELECT x FROM t WHERE at > SYSTIMESTAMP - INTERVAL '1 day'",     # PostgreSQL's own interval
     "SELECT x FROM t WHERE at > TIMESTAMP '2026-11-30 07:08:09.123456' - INTERVAL '1 day'"),
    ("SELECT x FROM t WHERE SYSDATE - t.at > 1",
     "SELECT x FROM t WHERE CAST(EXTRACT(EPOCH FROM ((TIMESTAMP '2026-11-30 07:08:09') - (t.at))) / 86400 "
     "AS DOUBLE PRECISION) > 1"),
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
     # (LISTAGG … WITHIN GROUP is SQLite's sluice_listagg: sqllimits)
     """SELECT sluice_listagg(a / sluice_divisor(b), ',', 'AL', a) AS "LISTAGG(A/B,',')WITHINGROUP(ORDERBYA)" FROM t"""),
    ("SELECT SYSDATE FROM dual", """SELECT '2026-11-30 07:08:09' AS "SYSDATE" FROM dual"""),
    # the days are read here, their division is not the database's
    ("SELECT x FROM t WHERE at > SYSDATE - 1/24", "SELECT x FROM t WHERE at > '2026-11-30 06:08:09'"),
    ("SELECT SYSDATE + 1/7 AS d FROM dual", "SELECT '2026-11-30 10:33:52' AS d FROM dual"),  # rounded
    ("SELECT SYSTIMESTAMP + 1 AS d FROM dual", "SELECT '2026-12-01 07:08:09' AS d FROM dual"),  # a DATE
    ("SELECT x FROM t WHERE (at - CURRENT_DATE) * 24 < 1",
     "SELECT x FROM t WHERE (sluice_date_minus(at, '2026-11-30 07:08:09')) * 24 < 1"),
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


@pytest.mark.parametrize("sql", ["SELECT SYSTIMESTAMP - INTERVAL '1 day' FROM dual",
                                 "SELECT SYSTIMESTAMP - at FROM t", "SELECT SYSDATE - f(at) FROM t"])
def test_sqlite_refuses_what_it_cannot_answer(sql):
    with pytest.raises(sluice.NotSupportedError):
        sqlite(sql)


def test_a_month_without_the_day_is_ora_01839():
    march = dt.datetime(2026, 3, 31, 12)
    with pytest.raises(sluice.DatabaseError, match="ORA-01839"):
        oracle_words("SELECT SYSDATE - INTERVAL '1' MONTH FROM dual", "SCOTT", sqlite=True, now=march)
    assert "'2026-01-31 12:00:00'" in oracle_words("SELECT SYSDATE - INTERVAL '2' MONTH FROM dual", "SCOTT",
                                                   sqlite=False, now=march).text


@pytest.mark.parametrize("sql, binds, text, left", [
    # by position: the value taken goes, the others keep their order
    ("SELECT x FROM t WHERE a = :1 AND at < SYSDATE - :2 AND b = :3", [7, 2, 9],
     "SELECT x FROM t WHERE a = :1 AND at < '2026-11-28 07:08:09' AND b = :3", [7, 9]),
    ("SELECT x FROM t WHERE at < SYSDATE - :d AND at > SYSDATE - :d - 1 AND b = :d", (1, 2, 3),
     "SELECT x FROM t WHERE at < '2026-11-29 07:08:09' AND at > '2026-11-27 07:08:09' AND b = :d", [3]),
    # by name: a name no longer used goes, one still used stays
    ("SELECT x FROM t WHERE a = :a AND at < SYSDATE - :days/24 AND b = :b", {"a": 7, ":Days": 36, "b": 9},
     "SELECT x FROM t WHERE a = :a AND at < '2026-11-28 19:08:09' AND b = :b", {"a": 7, "b": 9}),
    ("SELECT x FROM t WHERE at < SYSDATE - :n AND n > :n", {"n": 1},
     "SELECT x FROM t WHERE at < '2026-11-29 07:08:09' AND n > :n", {"n": 1}),
    ("SELECT :n + SYSDATE AS d, SYSTIMESTAMP - :n * 2 AS e FROM dual", {"n": "0.5"},
     "SELECT '2026-11-30 19:08:09' AS d, '2026-11-29 07:08:09' AS e FROM dual", {}),
    ("SELECT SYSDATE - :n AS d, SYSDATE - :n - at AS e FROM t", {"n": None},
     "SELECT NULL AS d, NULL AS e FROM t", {}),
    # a datetime bind is a DATE literal (whole seconds), a timedelta an interval, DATE - DATE days
    ("SELECT x FROM t WHERE a = :1 AND at > :2 + 1 AND b = :3", [7, dt.datetime(2026, 1, 2, 3, 4, 5, 6), 9],
     "SELECT x FROM t WHERE a = :1 AND at > '2026-01-03 03:04:05' AND b = :3", [7, 9]),
    ("SELECT SYSDATE - :d AS d, :t - :u AS n FROM dual",
     {"d": dt.timedelta(minutes=90), "t": dt.date(2026, 1, 3), "u": dt.datetime(2026, 1, 1, 12)},
     "SELECT '2026-11-30 05:38:09' AS d, (1.5) AS n FROM dual", {}),
    # no bind taken: the binds as given
    ("SELECT x FROM t WHERE at < SYSDATE - 1 AND a = :1", [5], "SELECT x FROM t WHERE at < '2026-11-29 07:08:09' AND a = :1",
     [5]),
])
def test_binds_as_days_are_folded_and_leave_the_statement(sql, binds, text, left):
    t = oracle_words(sql, "SCOTT", sqlite=True, now=NOW, binds=binds)
    assert (t.text, t.binds) == (text, left)


def test_a_null_bind_as_days_on_postgresql_keeps_the_types():
    t = oracle_words("SELECT SYSDATE - :n AS d, SYSDATE - :n - at AS e FROM t", "SCOTT", sqlite=False, now=NOW,
                     binds=[None, None])
    assert t.text == "SELECT CAST(NULL AS TIMESTAMP) AS d, CAST(NULL AS DOUBLE PRECISION) AS e FROM t"
    assert t.binds == []


@pytest.mark.parametrize("binds", [None, [], {"m": 1}])
def test_a_bind_as_days_without_a_value_is_ora_01008(binds):
    with pytest.raises(sluice.DatabaseError, match="ORA-01008"):
        oracle_words("SELECT SYSDATE - :n FROM dual", "SCOTT", sqlite=True, now=NOW, binds=binds)


def test_decode_of_an_expression_repeats_it_as_translated():
    """DECODE(e, NULL, …) of an expression writes ``e`` once per search with what the
    translation made of it (a divisor, the clock, a nested DECODE), and a statement
    ending with its changed item keeps its heading."""
    assert pg("SELECT DECODE(n / 2, NULL, 'a', 1, SYSDATE) FROM t") == (
        "SELECT CASE WHEN (n / CAST(2 AS NUMERIC)) IS NOT DISTINCT FROM  NULL THEN  'a' "
        "WHEN (n / CAST(2 AS NUMERIC)) IS NOT DISTINCT FROM  1 THEN  TIMESTAMP '2026-11-30 07:08:09' END "
        """AS "DECODE(N/2,NULL,'A',1,SYSDATE)" FROM t""")
    assert sqlite("SELECT DECODE(SUBSTR(a, 1), NULL, DECODE(b + 1, NULL, 0), 'x', 1)") == (
        "SELECT CASE WHEN (ORACLE_SUBSTR(a, 1)) IS  NULL THEN  CASE WHEN (b + 1) IS  NULL THEN  0 END "
        """WHEN (ORACLE_SUBSTR(a, 1)) IS  'x' THEN  1 END AS "DECODE(SUBSTR(A,1),NULL,DECODE(B+1,NULL,0),'X',1)\"""")
    assert sqlite("SELECT SYSDATE - 1") == """SELECT '2026-11-29 07:08:09' AS "SYSDATE-1\""""
