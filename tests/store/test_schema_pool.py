"""The pool of reset PostgreSQL test schemas (tests/pgschemas.py): a schema handed to the next
test holds exactly what a freshly created store holds, and a schema that could be unsafe to
reuse is dropped instead.

Each test runs in a database of its own (no other backend there: the pool's first rule), so
it holds under xdist and in a serial run beside other suites alike."""

from __future__ import annotations

import gc
import threading
import time
import uuid

import psycopg
import pytest

import sluice
from tests.conftest import PG_BASE, TEST_TABLESPACE, make_queue
from sluice.store import reaper
from tests import pgschemas
from tests.pgschemas import SchemaPool, catalog_rows, describe, new_schema_name, objects

STREAMS_CONTEXT = "SYS.STREAMS$_EVALUATION_CONTEXT"


@pytest.fixture
def base():
    """A database of its own (dropped after the test, with any slot left in it)."""
    db = "sluice_pool_" + uuid.uuid4().hex[:10]
    server, _, query = PG_BASE.partition("?")
    with psycopg.connect(PG_BASE, autocommit=True) as admin:
        try:
            admin.execute(f"CREATE DATABASE {db} TABLESPACE {TEST_TABLESPACE}")
        except psycopg.Error:
            admin.execute(f"CREATE DATABASE {db}")
    yield server.rsplit("/", 1)[0] + "/" + db + (f"?{query}" if query else "")
    with psycopg.connect(PG_BASE, autocommit=True) as admin:
        for (slot,) in admin.execute("SELECT slot_name FROM pg_replication_slots WHERE database = %s", (db,)):
            admin.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


@pytest.fixture
def pool(base):
    p = SchemaPool(base)
    yield p
    p.close()


def dsn_of(base: str, schema: str) -> str:
    return f"{base}{'&' if '?' in base else '?'}schema={schema}"


def fresh_store(base: str) -> tuple[list[str], dict[str, list[tuple]]]:
    """A store made now in a new schema: its description and its catalog tables' rows."""
    schema = new_schema_name()
    sluice.connect(dsn_of(base, schema)).close()
    with psycopg.connect(base, autocommit=True) as admin:
        tables = sorted(t for what, t, kind in objects(admin, schema) if what == "class" and kind == "r")
        try:
            return describe(admin, schema), catalog_rows(admin, schema, tables)
        finally:
            admin.execute(f'DROP SCHEMA "{schema}" CASCADE')


def workload(dsn: str) -> None:
    """What tests do to a store: queue tables and queues, subscribers, rules and rule sets,
    users and grants, an apply and a capture (made and dropped), messages enqueued and
    dequeued, and objects of their own in the schema (a table, a view, a type, a function, a
    sequence, an index on a catalog table, a table whose name wants quoting)."""
    conn = sluice.connect(dsn)
    try:
        make_queue(conn, "Q", multiple_consumers=True)
        conn.aqadm.add_subscriber(queue_name="Q", subscriber=sluice.Agent("S1"))
        conn.aqadm.add_subscriber(queue_name="Q", subscriber=sluice.Agent("S2"), rule="priority > 1")
        make_queue(conn, "P")
        conn.rule_adm.create_rule_set("RS", STREAMS_CONTEXT)
        conn.rule_adm.create_rule("R1", ":dml.get_object_owner() = 'HR'", STREAMS_CONTEXT)
        conn.rule_adm.add_rule("R1", "RS")
        cur = conn.cursor()
        cur.execute("CREATE USER scott IDENTIFIED BY pw")
        cur.execute("GRANT CREATE SESSION TO scott")
        conn.aqadm.grant_queue_privilege(privilege="ALL", queue_name="Q", grantee="scott")
        conn.streams_adm.set_up_queue(queue_table="SQT", queue_name="SQ")
        conn.apply_adm.create_apply(queue_name="SQ", apply_name="AP", apply_captured=True)
        conn.capture_adm.create_capture(queue_name="SQ", capture_name="CAP", rule_set_name="RS")
        conn.capture_adm.drop_capture(capture_name="CAP")
        q = conn.queue("Q")
        for n in range(5):
            q.enqone(conn.msgproperties(payload=f"m{n}".encode(), priority=n))
        conn.queue("P").enqone(conn.msgproperties(payload=b"p"))
        conn.commit()
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        q.deqoptions.consumername = "S1"
        assert q.deqone() is not None
        conn.commit()
    finally:
        conn.close()
    schema = dsn.rsplit("schema=", 1)[1]
    with psycopg.connect(dsn.rsplit("?", 1)[0], autocommit=True) as raw:
        raw.execute(f'SET search_path = "{schema}"')
        raw.execute("CREATE TABLE mine (id int PRIMARY KEY, v text)")
        raw.execute("INSERT INTO mine VALUES (1, 'x')")
        raw.execute("CREATE VIEW mine_v AS SELECT * FROM mine")
        raw.execute('CREATE TABLE "Odd ""name""" (x int)')
        raw.execute("CREATE TYPE mood AS ENUM ('sad', 'ok')")
        raw.execute("CREATE TYPE pair AS (a int, b int)")
        raw.execute("CREATE FUNCTION twice(x int) RETURNS int LANGUAGE sql AS 'SELECT 2 * x'")
        raw.execute("CREATE SEQUENCE my_seq")
        raw.execute("SELECT nextval('my_seq')")
        raw.execute("CREATE INDEX mine_meta ON sluice_meta (value)")


def test_a_reset_schema_is_a_fresh_store(pool, base):
    """After a test-like workload, the reset (and renamed) schema has the objects, definitions
    and catalog rows of a store made afresh (an independent one, not the pool's own), and
    again after a second round on the same schema."""
    want_description, want_rows = fresh_store(base)
    assert want_rows["sluice_meta"] and want_rows["sluice_scn"]     # the rows a first open writes
    schema = pool.take()
    for _ in range(2):
        dsn = dsn_of(base, schema)
        workload(dsn)
        with psycopg.connect(base, autocommit=True) as admin:
            assert describe(admin, schema) != want_description
        pool.give_back(schema)
        assert (pool.reused, pool.dropped) == (pool.reused, 0) and pool.why == {}
        renamed = pool.take()
        assert renamed != schema
        with psycopg.connect(base, autocommit=True) as admin:
            assert admin.execute("SELECT to_regnamespace(%s)", (schema,)).fetchone()[0] is None
            tables = sorted(want_rows)
            assert describe(admin, renamed) == want_description
            assert catalog_rows(admin, renamed, tables) == want_rows
        schema = renamed
    # and it works as a new store does: the first queue table's id, the first message's
    conn = sluice.connect(dsn_of(base, schema))
    try:
        make_queue(conn, "Q")
        assert conn.query("SELECT QT_ID FROM AQ_QUEUE_TABLES", None)[1] == [(1,)]
    finally:
        conn.close()


def _dropped(pool, base, schema, why: str) -> None:
    pool.give_back(schema)
    assert pool.reused == 0 and pool.dropped == 1 and why in pool.why, pool.why
    with psycopg.connect(base, autocommit=True) as admin:
        assert admin.execute("SELECT to_regnamespace(%s)", (schema,)).fetchone()[0] is None


def test_a_schema_with_a_connection_left_open_is_dropped(pool, base):
    schema = pool.take()
    conn = sluice.connect(dsn_of(base, schema))      # a leaked session: prepared statements …
    try:      # held by a live object: dropped without waiting for its backends
        _dropped(pool, base, schema, "a connection of the test is still open")
    finally:
        conn.close()


def test_a_schema_with_another_process_connected_is_dropped(pool, base):
    schema = pool.take()
    sluice.connect(dsn_of(base, schema)).close()
    with psycopg.connect(base, autocommit=True):     # (a served site, a process left running)
        _dropped(pool, base, schema, "another backend is connected")


def test_a_connection_dropped_but_not_yet_reaped_is_closed_and_the_schema_reused(pool, base):
    """tests/aq's never-close group drops its connections; the reaper thread closes them some
    time later — under load after the backends' wait (BACKENDS_GONE_WAIT). The pool has the
    reaper's work done before it waits: here the reaper thread is busy for longer than that
    wait, and the dropped connection's close is queued behind."""
    schema = pool.take()
    conn = sluice.connect(dsn_of(base, schema))
    make_queue(conn)
    busy = threading.Event()
    reaper.post(lambda: (busy.set(), time.sleep(pgschemas.BACKENDS_GONE_WAIT + 1.0)))
    assert busy.wait(10)
    del conn
    gc.collect()             # its close is posted, behind the reaper thread's sleep
    assert pgschemas.open_here(schema)
    pool.give_back(schema)
    assert pool.reused == 1 and pool.dropped == 0, pool.why
    assert not pgschemas.open_here(schema)


def test_a_schema_of_a_test_that_left_a_slot_is_dropped(pool, base):
    schema = pool.take()
    conn = sluice.connect(dsn_of(base, schema))
    try:
        conn.streams_adm.set_up_queue(queue_table="SQT", queue_name="SQ")
        conn.rule_adm.create_rule_set("RS", STREAMS_CONTEXT)
        conn.capture_adm.create_capture(queue_name="SQ", capture_name="CAP", rule_set_name="RS")
    finally:
        conn.close()
    _dropped(pool, base, schema, "replication slots or publications changed")


def test_a_schema_of_another_version_is_dropped(pool, base):
    schema = pool.take()
    sluice.connect(dsn_of(base, schema)).close()
    with psycopg.connect(base, autocommit=True) as raw:
        raw.execute(f"UPDATE \"{schema}\".sluice_meta SET value = '1' WHERE key = 'schema_version'")
    _dropped(pool, base, schema, "another schema version")


def test_a_schema_whose_catalog_was_altered_is_dropped(pool, base):
    """A change to one of the store's own objects (a column added to a catalog table) is not
    something the reset undoes: the schema goes."""
    schema = pool.take()
    sluice.connect(dsn_of(base, schema)).close()
    pool.give_back(schema)                 # kept (its state recorded)
    schema = pool.take()
    sluice.connect(dsn_of(base, schema)).close()
    with psycopg.connect(base, autocommit=True) as raw:
        raw.execute(f'ALTER TABLE "{schema}".sluice_meta ADD COLUMN extra int')
    pool.give_back(schema)
    assert pool.dropped == 1 and pool.why == {"its objects changed": 1}, pool.why


def test_the_admin_connection_comes_back_after_its_backend_is_terminated(pool, base):
    schema = pool.take()
    sluice.connect(dsn_of(base, schema)).close()
    with psycopg.connect(base, autocommit=True) as raw:
        # only this database's: the suite's own pools (other xdist workers) use the same
        # application name, and killing theirs made their give_back drop a schema mid-test
        raw.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE application_name = %s AND datname = current_database()",
                    ("sluice-test-admin",))
    pool.give_back(schema)
    assert pool.reused == 1, pool.why
    assert pool.take() != schema


def test_a_schema_that_an_object_outside_depends_on_is_dropped(pool, base):
    """A view of another schema over a catalog table would go on reading the next test's
    store (a DROP SCHEMA … CASCADE dropped it): the schema goes, and the view with it."""
    schema = pool.take()
    sluice.connect(dsn_of(base, schema)).close()
    with psycopg.connect(base, autocommit=True) as raw:
        raw.execute("CREATE SCHEMA IF NOT EXISTS elsewhere")
        raw.execute(f'CREATE VIEW elsewhere.meta AS SELECT * FROM "{schema}".sluice_meta')
        assert "outside rule _RETURN on view elsewhere.meta" in describe(raw, schema), [
            line for line in describe(raw, schema) if line.startswith("outside")]
    _dropped(pool, base, schema, "not like a fresh store after the reset")
