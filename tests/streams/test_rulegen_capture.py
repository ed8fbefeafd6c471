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


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)   # an SQLite store's ADD_*_RULES cannot create a capture
def test_a_failed_call_drops_the_capture_it_created(env, monkeypatch):  # noqa: F811
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


@pytest.fixture
def replication_role():
    """A uniquely named PostgreSQL role that may read the log (REPLICATION) and nothing
    more — no superuser: the ORA-01031 paths.  Dropped afterwards."""
    import uuid
    from tests.conftest import pg_admin
    role = "sluice_repl_" + uuid.uuid4().hex[:10]
    with pg_admin() as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN REPLICATION")
    yield role
    with pg_admin() as admin:      # (its captures' slots go with the test's env)
        admin.execute(f"DROP OWNED BY {role}")
        admin.execute(f"DROP ROLE {role}")


def test_subset_rules_need_the_table_owner_for_replica_identity_full(env, replication_role):  # noqa: F811
    """A capture reading the source as a role that does not own the table: ADD_SUBSET_RULES
    cannot set REPLICA IDENTITY FULL (seed 000 "Subset Rules and Supplemental Logging") —
    ORA-01031 naming the table and what to do, and nothing changed: no rule, the capture's
    rule set as it was, the table's replica identity as it was.  Once the owner set it,
    the same call succeeds."""
    from tests.conftest import PG_BASE
    role = replication_role
    env.sql(f"CREATE TABLE {env.src}.emp (id int PRIMARY KEY, dept int)",
            f"GRANT USAGE ON SCHEMA {env.src} TO {role}", f"GRANT SELECT ON {env.src}.emp TO {role}")
    env.create_capture("CAP", source_dsn=PG_BASE)          # a superuser's: the DDL triggers exist
    role_dsn = PG_BASE.replace("postgres@", f"{role}@", 1)
    env.conn.capture_adm.create_capture(queue_name="STRM_Q", capture_name="CAP2", source_dsn=role_dsn)
    conn = env.conn
    rules_before = rows(conn, "SELECT rule_owner, rule_name FROM dba_rules")
    with pytest.raises(DatabaseError) as e:
        conn.streams_adm.add_subset_rules(f"{env.owner}.emp", "dept = 50", "capture", "cap2",
                                          queue_name="STRM_Q")
    assert e.value.code == 1031
    assert f"{env.owner}.EMP" in str(e.value) and "REPLICA IDENTITY FULL" in str(e.value)
    assert rows(conn, "SELECT rule_owner, rule_name FROM dba_rules") == rules_before
    assert rows(conn, "SELECT rule_set_name FROM dba_capture WHERE capture_name = 'CAP2'") == [
        {"RULE_SET_NAME": None}]
    assert env.pg.execute(f"SELECT relreplident FROM pg_class WHERE oid = '{env.src}.emp'::regclass"
                          ).fetchone() == ("d",)
    env.sql(f"ALTER TABLE {env.src}.emp REPLICA IDENTITY FULL")      # the owner does it
    conn.streams_adm.add_subset_rules(f"{env.owner}.emp", "dept = 50", "capture", "cap2",
                                      queue_name="STRM_Q")
    assert len(rows(conn, "SELECT rule_name FROM dba_streams_table_rules WHERE streams_name = 'CAP2'")) == 3
    conn.capture_adm.drop_capture("CAP2")


def test_a_source_user_without_superuser_needs_the_ddl_triggers_installed(env, replication_role):  # noqa: F811
    """Only a superuser creates event triggers: a REPLICATION-only source user gets ORA-01031
    from CREATE_CAPTURE while they are missing (a database of this test's own, where no
    capture has installed them), and no capture or slot is left behind."""
    import uuid
    from tests.conftest import PG_BASE, pg_admin
    db = "sluice_t_" + uuid.uuid4().hex[:10]
    with pg_admin() as admin:
        admin.execute(f"CREATE DATABASE {db}")
    try:
        role_dsn = PG_BASE.replace("postgres@", f"{replication_role}@", 1).rsplit("/", 1)[0] + "/" + db
        with pytest.raises(DatabaseError) as e:
            env.conn.capture_adm.create_capture(queue_name="STRM_Q", capture_name="CAP2", source_dsn=role_dsn)
        assert e.value.code == 1031 and "superuser" in str(e.value)
        assert rows(env.conn, "SELECT capture_name FROM dba_capture") == []
        with pg_admin() as admin:
            assert admin.execute("SELECT count(*) FROM pg_replication_slots WHERE database = %s",
                                 (db,)).fetchone()[0] == 0
    finally:
        with pg_admin() as admin:
            admin.execute(f"DROP DATABASE {db} WITH (FORCE)")


def test_subset_rules_for_a_partitioned_table(env):  # noqa: F811
    """ADD_SUBSET_RULES for a partitioned table: PostgreSQL logs its rows in its partitions,
    whose REPLICA IDENTITY the table's does not set, so every partition logs whole old
    rows too; the LCRs name the table (the partition before: the rules matched nothing)
    and rows migrate in and out of the subset (seed 000 "Row Migration During Capture").
    Rules for a partition are refused (ORA-00942 naming its table): they would match
    nothing."""
    env.sql(f"CREATE TABLE {env.src}.emp (id int, dept int, name text, PRIMARY KEY (id, dept)) "
            f"PARTITION BY RANGE (dept)",
            f"CREATE TABLE {env.src}.emp_low PARTITION OF {env.src}.emp FOR VALUES FROM (0) TO (50)",
            f"CREATE TABLE {env.src}.emp_high PARTITION OF {env.src}.emp FOR VALUES FROM (50) TO (100)",
            f"INSERT INTO {env.src}.emp VALUES (1, 80, 'a'), (2, 50, 'b'), (3, 50, 'c')")
    _capture(env)
    conn = env.conn
    before = rows(conn, "SELECT capture_name, rule_set_name FROM dba_capture"), rows(conn, "SELECT * FROM dba_rules")
    with pytest.raises(DatabaseError) as e:      # a partition: its changes carry the table's name
        conn.streams_adm.add_table_rules(f"{env.owner}.emp_low", "capture", "cap", queue_name="STRM_Q")
    assert e.value.code == 942 and f"partition of {env.owner}.EMP" in str(e.value)
    assert (rows(conn, "SELECT capture_name, rule_set_name FROM dba_capture"),
            rows(conn, "SELECT * FROM dba_rules")) == before
    conn.streams_adm.add_subset_rules(f"{env.owner}.emp", "name <> 'x'", "capture", "cap", queue_name="STRM_Q")
    got = {r[0]: r[1] for r in env.pg.execute(
        f"SELECT c.relname, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        f"WHERE n.nspname = '{env.src}' AND c.relkind IN ('r', 'p')").fetchall()}
    assert got == {"emp": "f", "emp_low": "f", "emp_high": "f"}
    conn.capture_adm.start_capture("cap")
    proc = env.process("CAP")
    proc.start()
    env.sql(f"UPDATE {env.src}.emp SET name = 'x' WHERE id = 2")           # out: DELETE
    env.sql(f"UPDATE {env.src}.emp SET name = 'z' WHERE id = 3")           # within: UPDATE
    env.sql(f"INSERT INTO {env.src}.emp VALUES (4, 10, 'd')")              # INSERT
    proc.catch_up()
    got = [(m.get_command_type(), m.get_object_name(),
            {u.column_name: u.data.value for u in m.get_values("NEW", "N")},
            {u.column_name: u.data.value for u in m.get_values("OLD")}) for m in env.dequeue_all()]
    assert got == [
        ("DELETE", "EMP", {}, {"ID": 2, "DEPT": 50, "NAME": "b"}),
        ("UPDATE", "EMP", {"ID": 3, "DEPT": 50, "NAME": "z"}, {"ID": 3, "DEPT": 50, "NAME": "c"}),
        ("INSERT", "EMP", {"ID": 4, "DEPT": 10, "NAME": "d"}, {}),
    ]


def test_a_partition_added_later_logs_whole_old_rows(env):  # noqa: F811
    """A partition created in (PARTITION OF) or attached to (ATTACH PARTITION) a table with
    subset rules after ADD_SUBSET_RULES logs whole old rows too, as Oracle's table-level
    supplemental logging covers every partition: the DDL trigger gives it REPLICA IDENTITY
    FULL (before, it was the owner's to set, and an UPDATE there could not be captured).
    The trigger's own ALTER is no DDL LCR: a DDL rule on the partition sees one CREATE
    TABLE and nothing else."""
    env.sql(f"CREATE TABLE {env.src}.emp (id int, dept int, name text, PRIMARY KEY (id, dept)) "
            f"PARTITION BY RANGE (dept)",
            f"CREATE TABLE {env.src}.emp_low PARTITION OF {env.src}.emp FOR VALUES FROM (0) TO (50)")
    _capture(env)
    conn = env.conn
    conn.streams_adm.add_subset_rules(f"{env.owner}.emp", "name <> 'x'", "capture", "cap", queue_name="STRM_Q")
    adm = conn.rule_adm               # a DDL rule for the partition created below
    adm.create_rule(rule_name="MID_DDL", condition=(
        f":ddl.get_object_owner() = '{env.owner}' and :ddl.get_object_name() = 'EMP_MID'"))
    rule_set = rows(conn, "SELECT rule_set_name FROM dba_capture")[0]["RULE_SET_NAME"]
    adm.add_rule(rule_name="MID_DDL", rule_set_name=rule_set)
    conn.capture_adm.start_capture("cap")
    proc = env.process("CAP")
    proc.start()
    env.sql(f"CREATE TABLE {env.src}.emp_mid PARTITION OF {env.src}.emp FOR VALUES FROM (50) TO (80) "
            f"PARTITION BY RANGE (id)",                                      # a sub-partitioned one
            f"CREATE TABLE {env.src}.emp_mid_a PARTITION OF {env.src}.emp_mid FOR VALUES FROM (0) TO (1000)",
            f"CREATE TABLE {env.src}.emp_high (id int NOT NULL, dept int NOT NULL, name text)",
            f"ALTER TABLE {env.src}.emp ATTACH PARTITION {env.src}.emp_high FOR VALUES FROM (80) TO (100)",
            f"INSERT INTO {env.src}.emp VALUES (1, 80, 'a'), (2, 50, 'b'), (3, 60, 'c')")
    got = {r[0]: r[1] for r in env.pg.execute(
        f"SELECT c.relname, c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        f"WHERE n.nspname = '{env.src}' AND c.relkind IN ('r', 'p')").fetchall()}
    assert got == {"emp": "f", "emp_low": "f", "emp_mid": "f", "emp_mid_a": "f", "emp_high": "f"}
    env.sql(f"UPDATE {env.src}.emp SET name = 'x' WHERE id = 1")           # out: DELETE
    env.sql(f"UPDATE {env.src}.emp SET name = 'z' WHERE id = 2")           # within: UPDATE
    proc.catch_up()
    got = [(m.get_command_type(), m.get_object_name(),
            {u.column_name: u.data.value for u in m.get_values("OLD")} if hasattr(m, "get_values")
            else m.get_ddl_text()) for m in env.dequeue_all()]
    assert got == [
        ("CREATE TABLE", "EMP_MID", f"CREATE TABLE {env.src}.emp_mid PARTITION OF {env.src}.emp "
                                    f"FOR VALUES FROM (50) TO (80) PARTITION BY RANGE (id)"),
        ("INSERT", "EMP", {}), ("INSERT", "EMP", {}), ("INSERT", "EMP", {}),
        ("DELETE", "EMP", {"ID": 1, "DEPT": 80, "NAME": "a"}),
        ("UPDATE", "EMP", {"ID": 2, "DEPT": 50, "NAME": "b"}),
    ]
