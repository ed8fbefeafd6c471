"""The one wrapper of Oracle's functions on SQLite (:mod:`sluice.store.sqlitecalls`): '' in is NULL,
NULL in is NULL out (strict), '' out is NULL, an Oracle error is kept and raised as itself —
pinned on the wrapper and on each family it serves (oraclefns' functions, sqlitefns' ORACLE_*,
the views' RAWTOHEX)."""

from __future__ import annotations

import sqlite3

import pytest

import sluice
from sluice.errors import ora
from sluice.store.sqlitecalls import BAD_NUMBER, kept_error, oracle_call


def _echo(*args):
    if args[0] == "raise":
        raise ora(1465)
    if args[0] == "bad":
        return int("x")
    return "" if args[0] == "empty" else repr(args)


@pytest.fixture
def db():
    c = sqlite3.connect(":memory:")
    c.create_function("STRICT_F", -1, oracle_call(_echo, bad_number=BAD_NUMBER))
    c.create_function("LAX_F", -1, oracle_call(_echo, strict=False))
    yield c
    c.close()


def test_the_wrapper_reads_empty_as_null_and_answers_null(db):
    one = lambda sql: db.execute(sql).fetchone()[0]     # noqa: E731
    assert one("SELECT STRICT_F('a', NULL)") is None
    assert one("SELECT STRICT_F('a', '')") is None          # '' is NULL in
    assert one("SELECT STRICT_F('a', X'')") is None         # an empty RAW too
    assert one("SELECT STRICT_F('empty')") is None          # '' is NULL out
    assert one("SELECT LAX_F('a', '')") == "('a', None)"    # not strict: it sees the NULL


def test_the_wrapper_keeps_the_oracle_error(db):
    with pytest.raises(sqlite3.OperationalError, match="user-defined function raised exception"):
        db.execute("SELECT STRICT_F('raise')").fetchone()
    assert kept_error().full_code == "ORA-01465"        # kept for the session to raise
    with pytest.raises(sqlite3.OperationalError):
        db.execute("SELECT STRICT_F('bad')").fetchone()
    assert kept_error().full_code == "ORA-01722"        # a Python ValueError of a bad number
    with pytest.raises(sqlite3.OperationalError):
        db.execute("SELECT LAX_F('bad')").fetchone()
    assert kept_error() is None                          # not told it is one: not an ORA error


@pytest.fixture
def conn(tmp_path):
    c = sluice.connect(f"sqlite:///{tmp_path}/calls.db")
    yield c
    c.close()


def _one(conn, sql, binds=None):
    cur = conn.cursor()
    cur.execute(sql, binds or {})
    return cur.fetchone()


@pytest.mark.parametrize("sql", [
    "SELECT LPAD(:n, 3), ORACLE_SUBSTR(:n, 1), RAWTOHEX(:n) FROM DUAL",         # NULL in
    "SELECT LPAD(:e, 3), ORACLE_TO_CHAR(5, :e), RAWTOHEX(HEXTORAW(:e)) FROM DUAL",   # '' in
    "SELECT LPAD('a', 0), ORACLE_SUBSTR('abc', 5), RAWTOHEX(X'') FROM DUAL",      # '' out
])
def test_each_family_answers_null_as_oracle(conn, sql):
    binds = {k: v for k, v in (("n", None), ("e", "")) if f":{k}" in sql}
    assert _one(conn, sql, binds) == (None, None, None)


@pytest.mark.parametrize("sql, code", [
    ("SELECT CHR(-1) FROM DUAL", "ORA-01722"),                  # oraclefns, a Python error as ORA-01722
    ("SELECT ORACLE_TO_CHAR(5, '9Z') FROM DUAL", "ORA-01481"),  # sqlitefns
    ("SELECT RAWTOHEX('zz') FROM DUAL", "ORA-01465"),           # the views' RAWTOHEX
])
def test_each_family_raises_the_oracle_error(conn, sql, code):
    with pytest.raises(sluice.DatabaseError) as e:
        _one(conn, sql)
    assert e.value.full_code == code


# sqlitedays' functions (DATE ± column, EXTRACT, CAST AS DATE, TRUNC of a view's date) go
# through the wrapper too: a NULL argument is NULL without running, their ORA error is the statement's
_DAYS_NULL = ["sluice_add_days(NULL, 1)", "sluice_add_days('2026-01-01 00:00:00', NULL)",
              "sluice_date_minus(NULL, 1)", "sluice_date_minus('2026-01-01 00:00:00', NULL)",
              "sluice_interval(NULL, '2026-01-01 00:00:00')", "sluice_interval('2026-01-01 00:00:00', NULL)",
              "sluice_extract('YEAR', NULL)", "sluice_cast_date(NULL, 'DATE')", "sluice_trunc_date(NULL, 'DD')"]


@pytest.mark.parametrize("call", _DAYS_NULL)
def test_the_days_functions_answer_null_for_null(conn, call):
    assert _one(conn, f"SELECT {call} FROM DUAL") == (None,)


@pytest.mark.parametrize("call", [c.replace("NULL", "''") for c in _DAYS_NULL])
def test_the_days_functions_read_empty_as_null(conn, call):
    assert _one(conn, f"SELECT {call} FROM DUAL") == (None,)


@pytest.mark.parametrize("call, code", [
    ("sluice_add_days('2026-01-01 00:00:00', 'x')", "ORA-01722"),
    ("sluice_add_days('2026-01-01 00:00:00', '2026-01-01')", "ORA-00932"),
    ("sluice_date_minus(1, '2026-01-01 00:00:00')", "ORA-00932"),
    ("sluice_interval('2026-01-01 00:00:00', 1)", "ORA-00932"),
    ("sluice_extract('YEAR', 1.5)", "ORA-30076"),
    ("sluice_extract('DAY', 'x')", "ORA-01861"),
    ("sluice_cast_date('x', 'DATE')", "ORA-01861"),
    ("sluice_cast_date(1, 'DATE')", "ORA-00932"),
])
def test_the_days_functions_raise_the_oracle_error(conn, call, code):
    with pytest.raises(sluice.DatabaseError) as e:
        _one(conn, f"SELECT {call} FROM DUAL")
    assert e.value.full_code == code
