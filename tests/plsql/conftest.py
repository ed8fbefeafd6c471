"""Fixtures for the statement interpreter tests."""

from __future__ import annotations

import pytest

from tests.plsql.plsql_fakes import FakeConn, SqlConn


@pytest.fixture
def conn() -> FakeConn:
    return FakeConn()


@pytest.fixture
def sql_conn() -> SqlConn:
    return SqlConn()
