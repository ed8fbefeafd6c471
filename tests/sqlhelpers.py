"""SQL typed at a cursor, for the tests: its rows, its headings, the error code of what fails.

One home for the helpers many test modules share (they were defined in test_dual, test_rownum,
test_oracle_functions and test_connect and imported from there)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

import sluice


def query_rows(conn, sql: str, binds: Any = None) -> list[tuple]:
    """The rows ``sql`` fetches."""
    cur = conn.cursor()
    cur.execute(sql, binds) if binds is not None else cur.execute(sql)
    return cur.fetchall()


def query_headed(conn, sql: str, binds: Any = None) -> tuple[list[str], list[tuple]]:
    """The headings (``cursor.description``'s names) and the rows ``sql`` fetches."""
    cur = conn.cursor()
    cur.execute(sql, binds) if binds is not None else cur.execute(sql)
    return [d[0] for d in cur.description], cur.fetchall()


def raised_code(fn: Callable[[], Any]) -> str:
    """The ``full_code`` (``ORA-NNNNN`` / ``SLU-NNNNN``) of the sluice error ``fn()`` raises; it must raise."""
    with pytest.raises(sluice.Error) as e:
        fn()
    return e.value.full_code


def query_code(conn, sql: str, binds: Any = None) -> str:
    """The ``full_code`` of the error ``sql`` raises (executed or fetched); it must raise."""
    return raised_code(lambda: query_rows(conn, sql, binds))
