"""What opening a store costs (fast-open, 2026-11-30): a store already at this Sluice's
schema version is not sent its catalog's DDL again."""

from __future__ import annotations

import sqlite3

import pytest

import sluice
from sluice.store import sqlite as sqlite_store
from sluice.store.dialect import SQLITE
from sluice.store.sqlschema import SCHEMA_VERSION, catalog_ddl
from tests.conftest import wait_until


@pytest.fixture
def traced(monkeypatch):
    """The statements every SQLite connection of a store runs, in order."""
    statements: list[str] = []
    connect = sqlite_store.SqliteStore.connect

    def tracing(self):
        conn = connect(self)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite_store.SqliteStore, "connect", tracing)
    return statements


def _ddl(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith(("CREATE", "DROP", "ALTER"))]


def test_a_new_sqlite_store_gets_the_catalog_and_an_existing_one_is_not_sent_it_again(tmp_path, traced):
    dsn = f"sqlite:///{tmp_path / 'open.db'}"
    with sluice.connect(dsn) as conn:
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name="Q", queue_table="QT")
        conn.aqadm.start_queue(queue_name="Q")
        assert conn.query("SELECT COUNT(*) FROM DBA_QUEUE_TABLES WHERE QUEUE_TABLE = 'QT'", None)[1][0][0] == 1
    # the whole catalog, written from its image (store/sqliteimage.py): not a statement of
    # it sent to the file; then the queue table's DDL
    catalog = set(catalog_ddl(SQLITE))
    assert len(catalog) > 90 and not catalog & set(traced)
    assert _ddl(traced)
    traced.clear()
    with sluice.connect(dsn) as conn:        # opened again: the same catalog, nothing created
        assert _ddl([s for s in traced if "TEMP" not in s.upper()]) == []
        q = conn.queue("Q")
        q.enqone(conn.msgproperties(payload=b"x"))
        conn.commit()
        assert q.deqone().payload == b"x"
        conn.commit()
        assert conn.query("SELECT COUNT(*) FROM DBA_QUEUES WHERE NAME = 'Q'", None)[1][0][0] == 1


def test_a_sqlite_store_of_another_schema_version_is_still_sent_the_catalog(tmp_path, traced):
    path = tmp_path / "old.db"
    with sluice.connect(f"sqlite:///{path}"):
        pass
    raw = sqlite3.connect(path)
    raw.execute("DROP VIEW DBA_QUEUES")      # what an older Sluice did not have yet
    raw.execute("UPDATE SLUICE_META SET VALUE = ? WHERE KEY = 'schema_version'", (str(SCHEMA_VERSION - 1),))
    raw.commit()
    raw.close()
    traced.clear()
    with sluice.connect(f"sqlite:///{path}") as conn:
        assert len(_ddl(traced)) > 90
        assert conn.query("SELECT COUNT(*) FROM DBA_QUEUES", None)[1][0][0] == 0
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    raw.close()


@pytest.fixture
def catalog_reads(monkeypatch):
    """The statements reading SLUICE_CATALOG sent on any of a store's connections (SQLite's
    service connection or PostgreSQL's pooled ones)."""
    from sluice.store import pgconn
    reads: list[str] = []
    pg_execute = pgconn.PgConnection.execute

    def counting(self, sql, params=None):
        if "FROM SLUICE_CATALOG" in sql:
            reads.append(sql)
        return pg_execute(self, sql, params)

    monkeypatch.setattr(pgconn.PgConnection, "execute", counting)
    return reads


def test_connecting_reads_the_catalog_caches_in_a_statement_each(pg_dsn, catalog_reads):
    # The users, roles, grants, agents and proxies (SecurityCatalog) in one statement, the
    # types, transformations, registrations and subscribers (the AQ catalog) in another:
    # on a server, one round trip each instead of one per kind (15 on every connect).
    with sluice.connect(pg_dsn) as conn:
        conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
        conn.aqadm.create_queue(queue_name="Q", queue_table="QT")
    catalog_reads.clear()
    with sluice.connect(pg_dsn) as conn:
        assert len(catalog_reads) <= 2, catalog_reads
        conn.aqadm.start_queue(queue_name="Q")
        q = conn.queue("Q")
        q.enqone(conn.msgproperties(payload=b"x"))
        conn.commit()
        assert q.deqone().payload == b"x"
        conn.commit()


def test_opening_a_postgresql_store_connects_once_for_the_schema_and_the_listener(pg_dsn, monkeypatch):
    # The connection that creates or checks the schema is the listener's afterwards: a
    # store opened is two server connections of PgTarget.connect's (that one and the
    # session's) besides the pool's, not three.
    from sluice.store import pgconn
    made: list[str | None] = []
    connect = pgconn.PgTarget.connect

    def counting(self, user=None):
        made.append(user)
        return connect(self, user)

    monkeypatch.setattr(pgconn.PgTarget, "connect", counting)
    with sluice.connect(pg_dsn) as conn:
        assert len(made) == 2, made
        store = conn.context.store
        assert store.listener.connected.is_set() and store.listener.is_alive()
        # what the listener is for: another process's commit is noticed — its NOTIFY
        # arrives (waited for: under load it came after the next statement, which once
        # reported QT2 missing; a missing name is now checked with the database first)
        version = store.catalog_version()
        with sluice.connect(pg_dsn + "&application_name=other") as other:
            other.aqadm.create_queue_table(queue_table="QT2", queue_payload_type="RAW")
        assert wait_until(lambda: store.catalog_version() != version, timeout=60)
        conn.aqadm.create_queue(queue_name="Q2", queue_table="QT2")
    assert not store.listener.is_alive()


# The catalog's DDL at each SCHEMA_VERSION. A store already at the current version is not sent
# the DDL again (PostgreSQL always; SQLite since 2026-11-30, fast-open), so a change to
# catalog_ddl without a new version would never reach an existing store. Changed the DDL? Bump
# SCHEMA_VERSION (store/sqlschema.py, with its upgrade) and record the new digests here.
CATALOG_DIGESTS = {30: {"sqlite": "5fc6b53eb7bd1b36", "postgresql": "f44c0aa1e9c4b977"}}


def test_a_change_to_the_catalog_ddl_comes_with_a_new_schema_version():
    import hashlib

    from sluice.store.dialect import POSTGRESQL, SQLITE
    from sluice.store.sqlschema import catalog_ddl

    digests = {name: hashlib.sha256("\n".join(catalog_ddl(dialect)).encode()).hexdigest()[:16]
               for name, dialect in (("sqlite", SQLITE), ("postgresql", POSTGRESQL))}
    assert CATALOG_DIGESTS.get(SCHEMA_VERSION) == digests, (
        f"catalog_ddl is {digests} at SCHEMA_VERSION {SCHEMA_VERSION}: a changed catalog needs a new "
        f"SCHEMA_VERSION (existing stores at this one are not sent the DDL again); record its digests")
