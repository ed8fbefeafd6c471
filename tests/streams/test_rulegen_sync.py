"""ADD_TABLE_RULES / ADD_SUBSET_RULES with ``streams_type => 'sync_capture'`` (seed 001
"Queues and Synchronous Capture"): the synchronous capture created as Oracle creates it,
the generated rule set attached, and the table's changes in the queue in the changing
transaction — a subset rule's UPDATE migrated (seed 000 "Row Migration and Subset Rules")."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

import sluice
from sluice.errors import DatabaseError
from tests.conftest import pg_admin
from tests.streams.test_rulegen_seed import rows


@pytest.fixture
def store(dsn):
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue()
    conn.aqadm.add_subscriber(queue_name="streams_queue", subscriber=sluice.Agent("APP"))
    if dsn.startswith("postgresql"):
        schema = "rg_" + uuid.uuid4().hex[:10]
        admin = pg_admin()
        admin.execute(f"CREATE SCHEMA {schema}")
        run = admin.execute
    else:
        schema = "hr"
        raw = sqlite3.connect(dsn.removeprefix("sqlite:///"), isolation_level=None)
        run = raw.execute
    run(f"CREATE TABLE {schema + '.' if dsn.startswith('postgresql') else ''}emp "
        f"(id integer PRIMARY KEY, dept integer, name text)")
    table = f"{schema}.emp" if dsn.startswith("postgresql") else "emp"
    run(f"INSERT INTO {table} VALUES (1, 80, 'a'), (2, 50, 'b')")
    yield conn, schema.upper(), lambda sql: run(sql.replace("EMP", table))
    conn.close()
    if dsn.startswith("postgresql"):
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()
    else:
        raw.close()


def drain(conn) -> list:
    q = conn.queue("streams_queue")
    q.deqoptions.consumername, q.deqoptions.wait = "APP", sluice.DEQ_NO_WAIT
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    got = []
    while True:
        try:
            m = q.deqone()
        except DatabaseError as e:
            assert e.code == 25235
            q.deqoptions.navigation = sluice.DEQ_NEXT_TRANSACTION
            continue
        if m is None:
            break
        q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
        got.append(m.payload)
    conn.commit()
    return got


def test_table_and_subset_rules_for_synchronous_capture(store):
    conn, owner, run = store
    dml, ddl = conn.streams_adm.add_table_rules(f"{owner}.emp", "sync_capture", "sc")
    assert ddl is None
    cap, = rows(conn, "SELECT capture_name, rule_set_name FROM dba_sync_capture")
    assert cap["CAPTURE_NAME"] == "SC" and cap["RULE_SET_NAME"].startswith("RULESET$_")
    assert [(r["STREAMS_TYPE"], r["RULE_NAME"]) for r in rows(conn, "SELECT * FROM dba_streams_rules")] == \
        [("SYNC_CAPTURE", dml.split(".")[1])]
    run("INSERT INTO EMP VALUES (3, 50, 'c')")
    assert [(m.get_command_type(), m.get_object_name()) for m in drain(conn)] == [("INSERT", "EMP")]
    conn.capture_adm.drop_capture("sc")
    conn.streams_adm.add_subset_rules(f"{owner}.emp", "dept = 50", "sync_capture", "sc2")
    run("UPDATE EMP SET dept = 50 WHERE id = 1")       # into the subset: an INSERT
    run("UPDATE EMP SET dept = 20 WHERE id = 2")       # out of it: a DELETE
    run("UPDATE EMP SET dept = 30 WHERE id = 2")       # outside: nothing
    got = [(m.get_command_type(), {u.column_name: u.data.value for u in m.get_values("NEW", "N")},
            {u.column_name: u.data.value for u in m.get_values("OLD")}) for m in drain(conn)]
    assert got == [("INSERT", {"ID": 1, "DEPT": 50, "NAME": "a"}, {}),
                   ("DELETE", {}, {"ID": 2, "DEPT": 50, "NAME": "b"})]


def test_synchronous_capture_rules_refused_as_oracle_refuses_them(store):
    conn, owner, _ = store
    with pytest.raises(DatabaseError, match="ORA-00942"):
        conn.streams_adm.add_table_rules(f"{owner}.no_such", "sync_capture", "sc")
    with pytest.raises(DatabaseError, match="ORA-26667"):
        conn.streams_adm.add_schema_rules(owner, "sync_capture", "sc")
    with pytest.raises(DatabaseError, match="ORA-26667"):
        conn.streams_adm.add_table_rules(f"{owner}.emp", "sync_capture", "sc", inclusion_rule=False)
    assert rows(conn, "SELECT * FROM dba_sync_capture") == [] and rows(conn, "SELECT * FROM dba_rules") == []
