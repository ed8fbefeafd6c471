"""A multi-consumer dequeue's commit asks, for every message it took, whether another
consumer's record of it ran out of retries (``sqlops.settle_failed``).  At a 500k backlog
PostgreSQL answered that by walking the $ORDER index through every consumer's records
(80-230 ms per commit, bench/RESULTS.md 2026-11-29); the partial $EXPIRED index holds just
the records out of retries, and the probe names their STATE so any plan can use it."""

from __future__ import annotations

import sluice
from sluice.store.sqlops import expired_probe
from sluice.store.sqlschema import SCHEMA_VERSION
from tests.streams.test_propagation import _raw, rows


def _indexes(dsn: str) -> set[str]:
    if dsn.startswith("sqlite:"):
        import sqlite3
        c = sqlite3.connect(dsn.removeprefix("sqlite:///"))
        try:
            return {n for (n,) in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        finally:
            c.close()
    import psycopg
    head, _, schema = dsn.partition("?schema=")
    with psycopg.connect(head) as c:
        return {n for (n,) in c.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,))}


def _multi_consumer_queue(conn) -> None:
    conn.aqadm.create_queue_table(queue_table="MQT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="MQ", queue_table="MQT")
    conn.aqadm.start_queue("MQ")
    for name in ("A", "B"):
        conn.aqadm.add_subscriber(queue_name="MQ", subscriber=sluice.Agent(name))


def test_an_older_stores_multi_consumer_tables_get_the_expired_index(dsn):
    conn = sluice.connect(dsn)
    _multi_consumer_queue(conn)
    conn.aqadm.create_queue_table(queue_table="SQT", queue_payload_type="RAW")
    conn.close()
    assert "SLUICE.MQT$EXPIRED" in _indexes(dsn)          # a new table has it
    assert "SLUICE.SQT$EXPIRED" not in _indexes(dsn)      # one consumer: no other records
    assert_index_made_again(dsn, "SLUICE.MQT$EXPIRED", 13)


def assert_index_made_again(dsn: str, index: str, version: int) -> None:
    """A store of schema ``version`` whose ``index`` is missing, as that version left it,
    has it once opened: the upgrade made it, and the store is of the current version."""
    _raw(dsn, [f'DROP INDEX "{index}"', f"UPDATE SLUICE_META SET VALUE = '{version}' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert index in _indexes(dsn)
        assert rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    finally:
        conn.close()


def test_the_probe_uses_the_expired_index_in_a_generic_plan(pg_conn, pg_schema):
    """psycopg prepares a statement run often; its generic plan cannot match a partial index
    to a bound STATE, so the probe writes STATE out (with it bound, the plan walks $ORDER)."""
    _multi_consumer_queue(pg_conn)
    pg_conn.queue("MQ").enqmany([pg_conn.msgproperties(payload=b"x") for _ in range(200)])
    pg_conn.commit()
    from psycopg import sql as psql

    from tests.conftest import pg_admin
    t = f'"{pg_schema}"."SLUICE.MQT"'
    with pg_admin() as admin:
        ids = [m for (m,) in admin.execute(f"SELECT MSGID FROM {t} LIMIT 20")]
        admin.execute(f"ANALYZE {t}")
        admin.execute("SET plan_cache_mode = force_generic_plan")
        admin.execute("SET enable_seqscan = off")   # a table this small would be read whole

        def plan(sql: str, *args) -> str:
            admin.execute("DEALLOCATE ALL")
            admin.execute(f"PREPARE probe AS {sql}")
            values = psql.SQL(", ").join([psql.Literal(ids), *map(psql.Literal, args)])   # no binds in EXPLAIN
            return "\n".join(r for (r,) in admin.execute(psql.SQL("EXPLAIN EXECUTE probe({})").format(values)))
        msgids_in = "MSGID = ANY($1::BYTEA[])"
        bound = f"SELECT DISTINCT MSGID FROM {t} WHERE {msgids_in} AND Q_NAME = $2 AND STATE = $3"
        assert "MQT$EXPIRED" not in plan(bound, "MQ", 3)                    # what the probe was
        assert "MQT$EXPIRED" in plan(expired_probe(t, msgids_in))


def test_an_older_stores_aq_views_show_undeliverable(dsn):
    """Schema 16: a record a queue-to-dblink propagation marked UNDELIVERABLE showed MSG_STATE
    NULL in the AQ$ view of a queue table made before the state existed; the upgrade makes
    every AQ$ view again (on PostgreSQL in place: a user's view reading it stays)."""
    from sluice.constants import STATE_UNDELIVERABLE
    from sluice.store.dialect import POSTGRESQL, SQLITE
    from sluice.store.sqlschema import aq_view_select, table_name, view_name
    conn = sluice.connect(dsn)
    _multi_consumer_queue(conn)
    conn.queue("MQ").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    qt = conn.context.catalog.queue_table("MQT")
    conn.close()
    d = SQLITE if dsn.startswith("sqlite:") else POSTGRESQL
    old = aq_view_select(qt, d, table_name(qt)).replace(
        f"WHEN STATE = {STATE_UNDELIVERABLE} THEN 'UNDELIVERABLE' ", "")
    view = view_name(qt)
    replace = [f"DROP VIEW {view}", f"CREATE VIEW {view} AS {old}"] if d is SQLITE else \
        [f"CREATE OR REPLACE VIEW {view} AS {old}", f"CREATE VIEW users_view AS SELECT * FROM {view}"]
    _raw(dsn, [*replace, f"UPDATE {table_name(qt)} SET STATE = {STATE_UNDELIVERABLE} WHERE CONSUMER_NAME = 'A'",
               "UPDATE SLUICE_META SET VALUE = '15' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(dsn)
    try:
        assert sorted(rows(conn, "SELECT CONSUMER_NAME, MSG_STATE FROM AQ$MQT")) == [
            ("A", "UNDELIVERABLE"), ("B", "READY")]
        assert rows(conn, "SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    finally:
        conn.close()
