"""Fixtures for the PostgreSQL backend's own tests (the behavioural suite runs on every
backend through the ``dsn`` fixture; these test what only a server backend has)."""

from __future__ import annotations

import tempfile

import pytest
from psycopg import pq

import sluice
from tests.conftest import PG_BASE, new_pg_schema, pg_test_schema


@pytest.fixture
def pg_schema() -> str:
    """The test's schema, as the ``dsn`` fixture's: a reset store's from the pool, or new."""
    with pg_test_schema() as schema:
        yield schema


@pytest.fixture
def pg_new_schema() -> str:
    """A schema that does not exist yet (for what creates one); dropped after."""
    with new_pg_schema() as schema:
        yield schema


@pytest.fixture
def pg_dsn(pg_schema) -> str:
    return f"{PG_BASE}?schema={pg_schema}"


def _session(dsn: str):
    c = sluice.connect(dsn)
    yield c
    c.close()


@pytest.fixture
def pg_conn(pg_dsn):
    yield from _session(pg_dsn)


@pytest.fixture
def pg_conn2(pg_dsn, pg_conn):
    """A second session on the same store (another application)."""
    yield from _session(pg_dsn)


def round_trips(conn, call):
    """``call()``'s result and the requests it sent on the session's connection that wait for
    an answer — a simple query (its text) or an extended query's Sync (the statement it
    executed, ``prepare`` when it prepared one, ``BEGIN+`` before it when a BEGIN went in
    the same pipeline) — read from libpq's own trace."""
    pg = conn.context.session._raw.pgconn
    with tempfile.TemporaryFile("w+") as f:
        pg.trace(f.fileno())
        pg.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            out = call()
        finally:
            pg.untrace()
        f.seek(0)
        sent = [line.split("\t") for line in f.read().splitlines() if line.startswith("F\t")]
    trips, statement, begin, begins_bind = [], None, "", False
    for _, _, kind, *args in sent:      # F, length, message, its fields
        if kind == "Query":
            trips.append(args[0].strip(' "'))
        elif kind == "Parse" and args[0].split(" ")[2] == '"BEGIN"':     # (unnamed, its text)
            begin, begins_bind = "BEGIN+", True
        elif kind == "Parse":
            statement = "prepare"
        elif kind == "Bind" and begins_bind:      # (the BEGIN's, not the statement's)
            begins_bind = False
        elif kind == "Bind" and statement is None:
            statement = args[0].split(" ")[2].strip('"')
        elif kind == "Sync":
            trips.append(f"{begin}{statement}")
            statement, begin = None, ""
    return out, trips
