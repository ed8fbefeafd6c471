"""Fixtures for the statement interpreter tests."""

from __future__ import annotations

import pytest

import sluice
from tests.plsql.plsql_fakes import FakeConn, SqlConn


@pytest.fixture
def conn() -> FakeConn:
    return FakeConn()


@pytest.fixture
def sql_conn() -> SqlConn:
    return SqlConn()


@pytest.fixture
def store(dsn):
    """A real session on each store (``dsn``), for blocks whose static SQL must run."""
    c = sluice.connect(dsn)
    yield c
    c.close()
