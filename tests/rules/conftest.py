"""Fixtures of the rules tests: one SparkSession, one PostgreSQL connection, the world.

PostgreSQL must be running (127.0.0.1:5432, trust auth, database ``test``):
when it is not, these tests fail, they never skip.  Spark settings follow
DESIGN.md section 5; the JVM starts once per test session.
"""

from __future__ import annotations

import os
import sys

import pytest

PG_DSN = os.environ.get("SLUICE_TEST_PG", "host=127.0.0.1 port=5432 user=postgres dbname=test")


@pytest.fixture(scope="session")
def spark():
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("sluice-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.ansi.enabled", "true")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


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
