"""A TRANSACTIONAL queue table's $GROUP index (``sqlschema.group_index_ddl``): a dequeue in
the group a session is in (NEXT_MSG) reads the group's next message — or that there is none,
ORA-25235 — from the group's own entries.  Through $ORDER the group's end walked the whole
backlog behind the group (19 ms CPU per group on SQLite, 57 ms on PostgreSQL at a 50k
backlog)."""

from __future__ import annotations

import pytest

import sluice
from sluice.store import sqlops
from tests.conftest import make_queue, nowait
from tests.store.test_expired_index import _indexes, assert_index_made_again


def test_an_older_stores_grouped_tables_get_the_group_index(dsn):
    conn = sluice.connect(dsn)
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    make_queue(conn, "Q")
    conn.close()
    assert "SLUICE.G_QT$GROUP" in _indexes(dsn)           # a new grouped table has it
    assert "SLUICE.Q_QT$GROUP" not in _indexes(dsn)       # no grouping: no groups to find
    assert_index_made_again(dsn, "SLUICE.G_QT$GROUP", 22)


@pytest.mark.parametrize("multi", [False, True])
def test_the_rest_of_a_group_is_read_through_the_group_index(dsn, multi):
    """The statement of a NEXT_MSG dequeue in a group — the one that, at the group's end,
    finds nothing — is planned over $GROUP (PostgreSQL: the generic plan of the session's
    prepared statement), a single-consumer or a multi-consumer table alike."""
    conn = sluice.connect(dsn)
    try:
        make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL, multiple_consumers=multi)
        if multi:
            conn.aqadm.add_subscriber(queue_name="G", subscriber=sluice.Agent("A"))
        q = conn.queue("G")
        for g in range(20):
            q.enqmany([conn.msgproperties(payload=b"%d" % i) for i in range(10)])
            conn.commit()
        r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
        if multi:
            r.deqoptions.consumername = "A"
        r.deqone()
        r.deqoptions.navigation = sluice.DEQ_NEXT_MSG
        assert len(r.deqmany(100)) == 9
        with pytest.raises(sluice.DatabaseError) as e:
            r.deqone()
        assert e.value.full_code == "ORA-25235"
        conn.rollback()
    finally:
        conn.close()
    pg = dsn.startswith("postgresql")
    group_sql = {sql for shape, sql in sqlops._SELECT_SQL_CACHE.items()   # by group, after a position
                 if shape[0] == ("postgresql" if pg else "sqlite") and shape[3] == "G_QT"
                 and shape[10] and shape[12] and shape[14] == (1 if multi else 0)}
    assert group_sql
    for sql in group_sql:
        assert "G_QT$GROUP" in (_pg_plan(dsn, sql) if pg else _sqlite_plan(dsn, sql)), sql


def _sqlite_plan(dsn: str, sql: str) -> str:
    import sqlite3
    c = sqlite3.connect(dsn.removeprefix("sqlite:///"))
    try:
        return str(c.execute(f"EXPLAIN QUERY PLAN {sql}", [None] * sql.count("?")).fetchall())
    finally:
        c.close()


def _pg_plan(dsn: str, sql: str) -> str:
    import psycopg
    head, _, schema = dsn.partition("?schema=")
    with psycopg.connect(head, autocommit=True, options=f'-c search_path="{schema}"') as c:
        c.execute('ANALYZE "SLUICE.G_QT"')
        c.execute("SET plan_cache_mode = force_generic_plan")
        c.execute("SET enable_seqscan = off")   # a table this small would be read whole
        parts = sql.replace(" FOR UPDATE SKIP LOCKED", "").split("?")
        numbered = "".join(p + (f"${i + 1}" if i < len(parts) - 1 else "") for i, p in enumerate(parts))
        c.execute(f"PREPARE probe AS {numbered}")
        nulls = ", ".join(["NULL"] * (len(parts) - 1))    # (a generic plan: no values looked at)
        return "\n".join(r for (r,) in c.execute(f"EXPLAIN EXECUTE probe({nulls})"))
