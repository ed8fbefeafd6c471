"""Fixtures for the PostgreSQL backend's own tests (the behavioural suite runs on every
backend through the ``dsn`` fixture; these test what only a server backend has)."""

from __future__ import annotations

import uuid

import pytest

import sluice
from tests.conftest import PG_BASE, drop_schema, pg_admin


@pytest.fixture
def pg_schema() -> str:
    schema = "t_" + uuid.uuid4().hex[:12]
    pg_admin().close()
    yield schema
    drop_schema(schema)


@pytest.fixture
def pg_dsn(pg_schema) -> str:
    return f"{PG_BASE}?schema={pg_schema}"


@pytest.fixture
def pg_conn(pg_dsn):
    c = sluice.connect(pg_dsn)
    yield c
    c.close()
