"""Fixtures of the rules tests: one PostgreSQL connection, the world (the one SparkSession
is tests/conftest.py's ``spark``, shared with tests/pipeline).

PostgreSQL must be running (127.0.0.1:5432, trust auth, database ``test``):
when it is not, these tests fail, they never skip.  Spark settings follow
DESIGN.md section 5; the JVM starts once per test session.
"""

from __future__ import annotations

import os

import pytest

PG_DSN = os.environ.get("SLUICE_TEST_PG", "host=127.0.0.1 port=5432 user=postgres dbname=test")


@pytest.fixture(scope="session")
def pg():
    import psycopg

    conn = psycopg.connect(PG_DSN, autocommit=True)  # raises when the server is down: a failure
    yield conn
    conn.close()


@pytest.fixture(scope="session")
def world():
    from .world import World

    return World()
