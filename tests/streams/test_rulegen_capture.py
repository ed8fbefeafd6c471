"""ADD_*_RULES with ``streams_type => 'capture'`` against a real PostgreSQL source: the
capture process created (or extended) with the generated rule set, the source's tables
checked, REPLICA IDENTITY FULL for subset rules, and row migration during capture
(seed 000 "Row Migration During Capture", figure 6-2)."""

from __future__ import annotations

import pytest

from sluice.errors import DatabaseError
from sluice.rules.adm import RuleAdm
from tests.streams.capturekit import env  # noqa: F401  (the fixture)
from tests.streams.test_rulegen_seed import rows


def _capture(env, name="CAP"):   # noqa: F811
    """An SQLite store captures from the PostgreSQL source it is told about: create the
    capture first, ADD_*_RULES then extends it; a PostgreSQL store's ADD_*_RULES creates it."""
    if env.source_dsn is not None:
        env.create_capture(name)


def test_subset_rules_for_capture_migrate_rows(env):  # noqa: F811
    env.sql(f"CREATE TABLE {env.src}.emp (id int PRIMARY KEY, dept int, name text)",
            f"INSERT INTO {env.src}.emp VALUES (1, 80, 'a'), (2, 50, 'b'), (3, 50, 'c')")
    _capture(env)
    conn = env.conn
    ins, upd, dele = conn.streams_adm.add_subset_rules(f"{env.owner}.emp", "dept = 50", "capture", "cap",
                                                       queue_name="STRM_Q")
    assert env.pg.execute(f"SELECT relreplident FROM pg_class WHERE oid = '{env.src}.emp'::regclass"
                          ).fetchone() == ("f",)
    cap, = rows(conn, "SELECT capture_name, rule_set_name, status FROM dba_capture")
    assert cap["CAPTURE_NAME"] == "CAP" and cap["RULE_SET_NAME"].startswith("RULESET$_")
    ops = {r["RULE_NAME"]: r["SUBSETTING_OPERATION"] for r in rows(
        conn, "SELECT rule_name, subsetting_operation FROM dba_streams_table_rules")}
    assert {f"SLUICE.{k}": v for k, v in ops.items()} == {ins: "INSERT", upd: "UPDATE", dele: "DELETE"}
    conn.capture_adm.start_capture("cap")
    proc = env.process("CAP")
    proc.start()
    env.sql(f"UPDATE {env.src}.emp SET dept = 50 WHERE id = 1")            # in: INSERT
    env.sql(f"UPDATE {env.src}.emp SET dept = 20 WHERE id = 2")            # out: DELETE
    env.sql(f"UPDATE {env.src}.emp SET name = 'z' WHERE id = 3")           # within: UPDATE
    env.sql(f"INSERT INTO {env.src}.emp VALUES (4, 10, 'd')")              # outside: nothing
    env.sql(f"INSERT INTO {env.src}.emp VALUES (5, 50, 'e')")              # INSERT
    proc.catch_up()
    got = [(m.get_command_type(), {u.column_name: u.data.value for u in m.get_values("NEW", "N")},
            {u.column_name: u.data.value for u in m.get_values("OLD")}) for m in env.dequeue_all()]
    assert got == [
        ("INSERT", {"ID": 1, "DEPT": 50, "NAME": "a"}, {}),
        ("DELETE", {}, {"ID": 2, "DEPT": 50, "NAME": "b"}),
        ("UPDATE", {"ID": 3, "DEPT": 50, "NAME": "z"}, {"ID": 3, "DEPT": 50, "NAME": "c"}),
        ("INSERT", {"ID": 5, "DEPT": 50, "NAME": "e"}, {}),
    ]


def test_table_and_schema_rules_for_capture(env):  # noqa: F811
    env.sql(f"CREATE TABLE {env.src}.t1 (id int PRIMARY KEY)", f"CREATE TABLE {env.src}.t2 (id int PRIMARY KEY)")
    _capture(env)
    conn = env.conn
    conn.streams_adm.add_table_rules(f"{env.owner}.t1", "capture", "cap", queue_name="STRM_Q")
    conn.streams_adm.add_table_rules(f"{env.owner}.t2", "capture", "cap", queue_name="STRM_Q",
                                     inclusion_rule=False)
    conn.capture_adm.start_capture("cap")
    proc = env.process("CAP")
    proc.start()
    env.sql(f"INSERT INTO {env.src}.t1 VALUES (1)", f"INSERT INTO {env.src}.t2 VALUES (1)")
    proc.catch_up()
    assert [m.get_object_name() for m in env.dequeue_all()] == ["T1"]
    with pytest.raises(DatabaseError, match="ORA-00942"):
        conn.streams_adm.add_table_rules(f"{env.owner}.no_such", "capture", "cap", queue_name="STRM_Q")
    with pytest.raises(DatabaseError, match="ORA-01435"):
        conn.streams_adm.add_schema_rules("no_such_schema_x", "capture", "cap", queue_name="STRM_Q")
    with pytest.raises(DatabaseError, match="ORA-26667"):
        conn.streams_adm.add_table_rules(f"{env.owner}.t1", "capture", "cap", queue_name="streams_queue")
    assert len(rows(conn, "SELECT * FROM dba_streams_rules")) == 2


def test_a_failed_call_drops_the_capture_it_created(env, monkeypatch):  # noqa: F811
    if env.source_dsn is not None:
        pytest.skip("an SQLite store's ADD_*_RULES cannot create a capture (no source to name)")
    conn = env.conn
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    with pytest.raises(DatabaseError, match="ORA-00942"):
        conn.streams_adm.add_subset_rules(f"{env.owner}.no_such", "x = 1", "capture", "cap",
                                          queue_name="STRM_Q")
    with pytest.raises(DatabaseError, match="ORA-00904"):
        conn.streams_adm.add_table_rules(f"{env.owner}.t", "capture", "cap", queue_name="STRM_Q",
                                         and_condition=":lcr.nothing() = 1")

    def broken(self, *a, **k):
        raise DatabaseError("ORA-00600: injected after the capture was created", 600)
    monkeypatch.setattr(RuleAdm, "add_rule", broken)
    with pytest.raises(DatabaseError, match="injected"):
        conn.streams_adm.add_table_rules(f"{env.owner}.t", "capture", "cap", queue_name="STRM_Q")
    assert rows(conn, "SELECT * FROM dba_capture") == [] and rows(conn, "SELECT * FROM dba_rules") == []
    assert rows(conn, "SELECT * FROM dba_rule_sets") == []
    assert env.pg.execute("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE %s",
                          (env.slot_prefix + "%",)).fetchone() == (0,)
