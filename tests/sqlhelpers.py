"""SQL typed at a cursor, for the tests: its rows, its headings, the error code of what fails, and
a user's own table made behind Sluice's back.

One home for the helpers many test modules share (they were defined in test_dual, test_rownum,
test_oracle_functions, test_connect, test_binds, tests/security/conftest, tests/pubsub and
tests/streams and imported from there or copied)."""

from __future__ import annotations

import sqlite3
from typing import Any, Callable

import psycopg
import pytest

import sluice


def query_rows(conn, sql: str, binds: Any = None) -> list[tuple]:
    """The rows ``sql`` fetches."""
    cur = conn.cursor()
    cur.execute(sql, binds) if binds is not None else cur.execute(sql)
    return cur.fetchall()


def block_output(conn, block: str, **binds: Any) -> list[str]:
    """The DBMS_OUTPUT lines of a PL/SQL block run through ``cursor.execute``."""
    cur = conn.cursor()
    cur.execute(block, binds)
    return cur.output


def query_headed(conn, sql: str, binds: Any = None) -> tuple[list[str], list[tuple]]:
    """The headings (``cursor.description``'s names) and the rows ``sql`` fetches."""
    cur = conn.cursor()
    cur.execute(sql, binds) if binds is not None else cur.execute(sql)
    return [d[0] for d in cur.description], cur.fetchall()


def query_names(conn, sql: str) -> list[str]:
    """The headings (``cursor.description``'s names) of ``sql``, executed, nothing fetched."""
    cur = conn.cursor()
    cur.execute(sql)
    return [d[0] for d in cur.description]


def raised_code(fn: Callable[..., Any], *args: Any, **kw: Any) -> str:
    """The ``full_code`` (``ORA-NNNNN`` / ``SLU-NNNNN``) of the sluice error ``fn(*args, **kw)``
    raises; it must raise."""
    with pytest.raises(sluice.Error) as e:
        fn(*args, **kw)
    return e.value.full_code


def pls_code(fn: Callable[..., Any], *args: Any, **kw: Any) -> str:
    """The PLS-NNNNN of the ORA-06550 ``fn(*args, **kw)`` raises (a block Oracle would not
    compile: the code is on the message's second line); it must raise."""
    with pytest.raises(sluice.DatabaseError) as e:
        fn(*args, **kw)
    assert e.value.full_code == "ORA-06550"
    return str(e.value).splitlines()[1].split(":")[0]


def query_code(conn, sql: str, binds: Any = None) -> str:
    """The ``full_code`` of the error ``sql`` raises (executed or fetched); it must raise."""
    return raised_code(lambda: query_rows(conn, sql, binds))


def run_committed(conn, *statements: str) -> None:
    """Each of ``statements`` executed in order at one cursor of ``conn``, then a commit."""
    cur = conn.cursor()
    for sql in statements:
        cur.execute(sql)
    conn.commit()


def create_table(dsn: str, ddl: str) -> None:
    """A table of the store's own database, made behind Sluice's back (Sluice runs DML, not DDL)."""
    if dsn.startswith("sqlite"):
        with sqlite3.connect(dsn.removeprefix("sqlite:///")) as db:
            db.execute(ddl)
        return
    schema = dsn.rsplit("schema=", 1)[1]
    with psycopg.connect(dsn.partition("?")[0], autocommit=True) as db:
        db.execute(f"SET search_path TO {schema}")
        db.execute(ddl)


def filled_table(conn, dsn: str, ddl: str, insert: str, rows) -> Any:
    """``conn`` once the table ``ddl`` creates holds ``rows`` (``insert``'s binds), committed."""
    create_table(dsn, ddl)
    conn.cursor().executemany(insert, rows)
    conn.commit()
    return conn


def executed(conn, *statements: str) -> Any:
    """Execute each statement at one cursor; the cursor (its output, its warning)."""
    cur = conn.cursor()
    for statement in statements:
        cur.execute(statement)
    return cur


def error_text(fn: Callable[..., Any], *args: Any) -> str:
    """The text of the sluice DatabaseError ``fn(*args)`` raises; it must raise."""
    with pytest.raises(sluice.DatabaseError) as e:
        fn(*args)
    return str(e.value)
