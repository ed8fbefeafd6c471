"""Seed 000's DBMS_STREAMS_ADM blocks, verbatim, through ``sluice sql -f`` and
``cursor.execute``, on both backends: the rules, rule sets and clients they create, the
views that show them, and how the generated rules judge real LCRs."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from sluice.cli import main
from sluice.streams import RowLCR, DDLLCR, evaluate_rule_sets
from sluice.streams.rowmigration import migrate
from tests.conftest import pg_create_shared
from tests.plsql.test_plsql_seed000 import BLOCKS, SEED
from tests.streams.capturekit import drop_env, make_env
from tests.streams.test_rulegen_conditions import norm, printed

TEXT = SEED.read_text()
STREAMS_BLOCKS = sorted(n for n, b in BLOCKS.items() if "DBMS_STREAMS_ADM" in b)
CAPTURE_BLOCKS = [461, 504]
CREATE_TYPE = TEXT[TEXT.index("CREATE TYPE strmadmin.region_pri_msg AS OBJECT("):]
CREATE_TYPE = CREATE_TYPE[:CREATE_TYPE.index("\n/\n")] + "\n/\n"


def test_the_seed_prints_eleven_streams_adm_blocks():
    assert STREAMS_BLOCKS == [461, 504, 556, 626, 652, 725, 971, 995, 1069, 1095, 1153]


def script(*numbers: int) -> str:
    return "".join(BLOCKS[n] + "\n/\n\n" for n in numbers)


def run_file(dsn: str, tmp_path, text: str):
    path = tmp_path / f"seed-{abs(hash(text)) % 10**8}.sql"
    path.write_text(text)
    return CliRunner().invoke(main, ["--dsn", dsn, "sql", "-f", str(path)], catch_exceptions=False)


def make_regions(env) -> None:
    """hr.regions, which the subset block needs ("the table must exist"): on PostgreSQL a
    table of schema hr in the store's database; in an SQLite store (no schemas) the file's
    table regions."""
    if env.dsn.startswith("postgresql"):
        pg_create_shared("CREATE SCHEMA IF NOT EXISTS hr",
                         "CREATE TABLE IF NOT EXISTS hr.regions (region_id numeric, region_name text)")
    else:
        import sqlite3
        raw = sqlite3.connect(env.dsn.removeprefix("sqlite:///"))
        raw.execute("CREATE TABLE regions (region_id NUMBER, region_name VARCHAR2(25))")
        raw.commit()
        raw.close()


@pytest.fixture
def world(dsn):
    env = make_env(dsn)
    env.conn.streams_adm.set_up_queue()                 # streams_queue, as the seed assumes
    make_regions(env)
    if env.source_dsn is not None:   # an SQLite store captures from a PostgreSQL source it is told
        for name in ("capture", "capture_002"):
            env.conn.capture_adm.create_capture(queue_name="streams_queue", capture_name=name,
                                                source_dsn=env.source_dsn)
    yield env
    drop_env(env)


def rows(conn, sql: str) -> list[dict]:
    cols, data = conn.query(sql, None)
    return [dict(zip(cols, r)) for r in data]


def seeded(world, tmp_path) -> None:
    r = run_file(world.dsn, tmp_path, CREATE_TYPE + "\n" + script(*STREAMS_BLOCKS))
    assert r.exit_code == 0, r.output
    assert r.output.count("PL/SQL procedure successfully completed.") == len(STREAMS_BLOCKS)


def test_every_streams_adm_block_runs_from_a_script(world, tmp_path):
    seeded(world, tmp_path)
    conn = world.conn
    by_client = {}
    for r in rows(conn, "SELECT * FROM dba_streams_rules ORDER BY rule_name"):
        by_client.setdefault((r["STREAMS_TYPE"], r["STREAMS_NAME"], r["RULE_SET_TYPE"]), []).append(r)
    # 461: DML + DDL, 504: DML + DDL (capture); 556: DML + DDL (propagation); apply: 626, 652,
    # 725 (3), 1069 positive, 1095 negative; 995 apply_msg; 971 msg_client; 1153: DML + DDL
    assert {k: len(v) for k, v in by_client.items()} == {
        ("CAPTURE", "CAPTURE", "POSITIVE"): 2, ("CAPTURE", "CAPTURE_002", "POSITIVE"): 2,
        ("PROPAGATION", "DBS1_TO_DBS2", "POSITIVE"): 2,
        ("APPLY", "APPLY", "POSITIVE"): 6, ("APPLY", "APPLY", "NEGATIVE"): 1,
        ("APPLY", "APPLY_MSG", "POSITIVE"): 1, ("DEQUEUE", "MSG_CLIENT", "POSITIVE"): 1,
        ("APPLY", "APPLY_02", "POSITIVE"): 2}
    # the conditions are the seed's
    cond = {(r["RULE_TYPE"], r["OBJECT_NAME"], r["SUBSETTING_OPERATION"]): r["RULE_CONDITION"]
            for r in by_client[("APPLY", "APPLY", "POSITIVE")]}
    assert norm(cond[("DML", "LOCATIONS", None)]) == norm(printed(
        "The ADD_TABLE_RULES procedure creates a rule with a rule condition similar to the following:", 1))
    assert norm(cond[("DML", "REGIONS", "UPDATE")]) == norm(printed(
        "Here is the rule condition used by the update rule:"))
    neg, = by_client[("APPLY", "APPLY", "NEGATIVE")]
    assert (neg["OBJECT_NAME"], neg["INCLUDE_TAGGED_LCR"], neg["SOURCE_DATABASE"]) == \
        ("JOB_HISTORY", "YES", "DBS1.NET")
    msg, = by_client[("DEQUEUE", "MSG_CLIENT", "POSITIVE")]
    assert re.fullmatch(r""":"VAR\$_\d+"\.region = 'EUROPE' AND  :"VAR\$_\d+"\.priority = '1' """,
                        msg["RULE_CONDITION"])
    # names: object name + number; rule sets RULESET$_n; both clients got a rule set each side
    assert re.fullmatch(r"LOCATIONS\d+", [r for r in by_client[("APPLY", "APPLY", "POSITIVE")]
                                          if r["OBJECT_NAME"] == "LOCATIONS"][0]["RULE_NAME"])
    apply_row, = rows(conn, "SELECT * FROM dba_apply WHERE apply_name = 'APPLY'")
    assert apply_row["STATUS"] == "DISABLED" and apply_row["QUEUE_NAME"] == "STREAMS_QUEUE"
    assert re.fullmatch(r"RULESET\$_\d+", apply_row["RULE_SET_NAME"])
    assert re.fullmatch(r"RULESET\$_\d+", apply_row["NEGATIVE_RULE_SET_NAME"])
    assert rows(conn, "SELECT apply_captured FROM dba_apply WHERE apply_name = 'APPLY_MSG'") == \
        [{"APPLY_CAPTURED": "NO"}]
    consumer, = rows(conn, "SELECT * FROM dba_streams_message_consumers")
    assert consumer["STREAMS_NAME"] == "MSG_CLIENT" and consumer["RULE_SET_NAME"] is not None
    capture = rows(conn, "SELECT capture_name, rule_set_name FROM dba_capture ORDER BY capture_name")
    assert [c["CAPTURE_NAME"] for c in capture] == ["CAPTURE", "CAPTURE_002"]
    assert all(re.fullmatch(r"RULESET\$_\d+", c["RULE_SET_NAME"]) for c in capture)
    # the level views
    assert len(rows(conn, "SELECT * FROM dba_streams_global_rules")) == 4
    assert sorted((r["STREAMS_TYPE"], r["SCHEMA_NAME"], r["RULE_TYPE"]) for r in rows(
        conn, "SELECT streams_type, schema_name, rule_type FROM dba_streams_schema_rules")) == [
        ("APPLY", "HR", "DML"), ("PROPAGATION", "HR", "DDL"), ("PROPAGATION", "HR", "DML")]
    subset = rows(conn, "SELECT subsetting_operation, dml_condition FROM dba_streams_table_rules "
                        "WHERE dml_condition IS NOT NULL ORDER BY subsetting_operation")
    assert subset == [{"SUBSETTING_OPERATION": op, "DML_CONDITION": "region_id=2"}
                      for op in ("DELETE", "INSERT", "UPDATE")]
    assert {r["STREAMS_NAME"] for r in rows(conn, "SELECT * FROM dba_streams_message_rules")} == \
        {"APPLY_MSG", "MSG_CLIENT"}
    # and DBA_RULES / DBA_RULE_SETS / DBA_RULE_SET_RULES agree
    every = rows(conn, "SELECT * FROM dba_streams_rules")
    listed = {(r["RULE_OWNER"], r["RULE_NAME"]) for r in rows(conn, "SELECT * FROM dba_rules")}
    assert {(r["RULE_OWNER"], r["RULE_NAME"]) for r in every} <= listed
    members = {(r["RULE_SET_NAME"], r["RULE_NAME"]) for r in rows(conn, "SELECT * FROM dba_rule_set_rules")}
    assert {(r["RULE_SET_NAME"], r["RULE_NAME"]) for r in every} <= members
    ctx = rows(conn, "SELECT rule_set_eval_context_owner, rule_set_eval_context_name FROM dba_rule_sets "
                     f"WHERE rule_set_name = '{apply_row['RULE_SET_NAME']}'")
    assert ctx == [{"RULE_SET_EVAL_CONTEXT_OWNER": "SYS",
                    "RULE_SET_EVAL_CONTEXT_NAME": "STREAMS$_EVALUATION_CONTEXT"}]


def test_the_propagation_block_creates_the_propagation_with_the_seeds_rules(world, tmp_path):
    """556: "Schema Rule Example" — a propagation from streams_queue to streams_queue@dbs2.net
    with a positive rule set holding the two rules the seed prints."""
    r = run_file(world.dsn, tmp_path, script(556))
    assert r.exit_code == 0, r.output
    conn = world.conn
    prop, = rows(conn, "SELECT propagation_name, destination_dblink, rule_set_name, negative_rule_set_name "
                       "FROM dba_propagation")
    assert prop["PROPAGATION_NAME"] == "DBS1_TO_DBS2" and prop["DESTINATION_DBLINK"] == "DBS2.NET"
    assert re.fullmatch(r"RULESET\$_\d+", prop["RULE_SET_NAME"]) and prop["NEGATIVE_RULE_SET_NAME"] is None
    cond = {r["RULE_TYPE"]: r["RULE_CONDITION"] for r in rows(
        conn, "SELECT rule_type, rule_condition FROM dba_streams_rules WHERE streams_type = 'PROPAGATION'")}
    assert norm(cond["DML"]) == norm(printed("Here is the rule condition used by the row LCR rule:", 2))
    assert norm(cond["DDL"]) == norm(printed("Here is the rule condition used by the DDL LCR rule:", 3))
    hr_row = RowLCR.construct("dbs1.net", "INSERT", "HR", "COUNTRIES", new_values={"c": 1})
    assert evaluate_rule_sets(conn, hr_row, prop["RULE_SET_NAME"]).perform
    oe_row = RowLCR.construct("dbs1.net", "INSERT", "OE", "INVENTORIES", new_values={"c": 1})
    assert not evaluate_rule_sets(conn, oe_row, prop["RULE_SET_NAME"]).perform


def lcr(name, command="INSERT", old=None, new=None, tag=None, source="dbs1.net", owner="HR"):
    return RowLCR.construct(source_database_name=source, command_type=command, object_owner=owner,
                            object_name=name, tag=tag, old_values=old, new_values=new)


def test_the_apply_rule_sets_judge_lcrs_as_the_seed_says(world, tmp_path):
    seeded(world, tmp_path)
    conn = world.conn
    a, = rows(conn, "SELECT rule_set_name, negative_rule_set_name FROM dba_apply WHERE apply_name = 'APPLY'")
    pos, neg = a["RULE_SET_NAME"], a["NEGATIVE_RULE_SET_NAME"]

    def verdict(message):
        return evaluate_rule_sets(conn, message, pos, neg)
    # "Negative Rule Set Example": hr applied except job_history (even tagged)
    assert verdict(lcr("DEPARTMENTS")).perform
    assert not verdict(lcr("JOB_HISTORY")).perform
    assert not verdict(lcr("JOB_HISTORY", tag=b"\x01")).perform
    assert not verdict(lcr("DEPARTMENTS", tag=b"\x01")).perform       # is_null_tag
    assert not verdict(lcr("DEPARTMENTS", source="dbs2.net")).perform
    # hr.countries: DDL yes (652), and rows too (1069's schema rule)
    ddl = DDLLCR.construct(source_database_name="dbs1.net", command_type="ALTER TABLE",
                           object_owner="HR", object_name="COUNTRIES", object_type="TABLE",
                           ddl_text="ALTER TABLE hr.countries ADD (x NUMBER)")
    assert verdict(ddl).perform
    # subset rules (725) with row migration, "Subset Rules Example"
    up = verdict(lcr("REGIONS", "UPDATE", old={"region_id": 4, "region_name": "x"}, new={"region_id": 2}))
    assert up.perform
    migrated = migrate(lcr("REGIONS", "UPDATE", old={"region_id": 4, "region_name": "x"},
                           new={"region_id": 2}), up.rule)
    assert migrated.get_command_type() == "INSERT"
    assert {u.column_name: u.data.value for u in migrated.get_values("NEW")} == \
        {"REGION_ID": 2, "REGION_NAME": "x"} and migrated.get_values("OLD") == []
    out = verdict(lcr("REGIONS", "UPDATE", old={"region_id": 2}, new={"region_id": 1}))
    assert migrate(lcr("REGIONS", "UPDATE", old={"region_id": 2}, new={"region_id": 1}),
                   out.rule).get_command_type() == "DELETE"
    stay = verdict(lcr("REGIONS", "UPDATE", old={"region_id": 2}, new={"region_id": 2}))
    assert migrate(lcr("REGIONS", "UPDATE", old={"region_id": 2}, new={"region_id": 2}),
                   stay.rule).get_command_type() == "UPDATE"
    # region_id NULL before: NOT EXISTS (SELECT 1 FROM SYS.DUAL …) makes it an insert
    null_old = verdict(lcr("REGIONS", "UPDATE", old={"region_id": None}, new={"region_id": 2}))
    assert migrate(lcr("REGIONS", "UPDATE", old={"region_id": None}, new={"region_id": 2}),
                   null_old.rule).get_command_type() == "INSERT"
    assert migrate(lcr("REGIONS", "DELETE", old={"region_id": 2}),
                   verdict(lcr("REGIONS", "DELETE", old={"region_id": 2})).rule).get_command_type() == "DELETE"
    # outside the subset, 1069's schema rule (hr DML) still applies the change, unmigrated
    plain = verdict(lcr("REGIONS", "UPDATE", old={"region_id": 1}, new={"region_id": 1}))
    assert plain.perform and re.fullmatch(r"SLUICE\.HR\d+", plain.rule.rule_name)


def test_the_blocks_run_through_cursor_execute(world):
    conn = world.conn
    cur = conn.cursor()
    cur.execute(CREATE_TYPE.rstrip().rstrip("/"))
    for n in STREAMS_BLOCKS:
        cur.execute(BLOCKS[n])
    assert len(rows(conn, "SELECT rule_name FROM dba_streams_rules")) == 17
    # OUT values: the generated names
    cur.execute("""DECLARE d VARCHAR2(100); l VARCHAR2(100);
      BEGIN DBMS_STREAMS_ADM.ADD_TABLE_RULES(table_name => 'hr.employees', streams_type => 'apply',
        streams_name => 'apply', queue_name => 'streams_queue', include_dml => TRUE,
        include_ddl => TRUE, include_tagged_lcr => FALSE, source_database => NULL,
        dml_rule_name => d, ddl_rule_name => l, inclusion_rule => TRUE);
        DBMS_OUTPUT.PUT_LINE(d || ' ' || l); END;""")
    dml, ddl = cur.output[0].split()
    assert re.fullmatch(r"SLUICE\.EMPLOYEES\d+", dml) and re.fullmatch(r"SLUICE\.EMPLOYEES\d+", ddl)
    assert dml != ddl
    assert {r["RULE_TYPE"] for r in rows(conn, "SELECT rule_type FROM dba_streams_table_rules "
                                               "WHERE table_name = 'EMPLOYEES'")} == {"DML", "DDL"}
    cur.execute(f"BEGIN DBMS_STREAMS_ADM.REMOVE_RULE(rule_name => '{dml}', streams_type => 'apply', "
                f"streams_name => 'apply'); END;")
    assert [r["RULE_TYPE"] for r in rows(conn, "SELECT rule_type FROM dba_streams_table_rules "
                                               "WHERE table_name = 'EMPLOYEES'")] == ["DDL"]


RULE_ADM_BLOCKS = sorted(n for n, b in BLOCKS.items() if "DBMS_RULE_ADM" in b)


def test_the_rule_adm_blocks_too_through_a_script_and_a_cursor(world, tmp_path):
    """Seed 000's DBMS_RULE_ADM blocks (also run by tests/rules/test_seed000_blocks.py through
    `sluice sql`): 1198 has a stray ")" and fails as Oracle fails it, 1461 reuses 1450's
    rule name (ORA-24146), the rest run."""
    assert RULE_ADM_BLOCKS == [1198, 1303, 1450, 1461, 1511]
    r = run_file(world.dsn, tmp_path, CREATE_TYPE + "\n" + script(1303, 1450, 1511))
    assert r.exit_code == 0 and r.output.count("PL/SQL procedure successfully completed.") == 3, r.output
    r = run_file(world.dsn, tmp_path, script(1461))
    assert r.exit_code == 1 and "ORA-24146" in r.output
    r = run_file(world.dsn, tmp_path, script(1198))
    assert r.exit_code == 1 and "ORA-06550" in r.output
    cur = world.conn.cursor()
    cur.execute("BEGIN DBMS_RULE_ADM.DROP_RULE('strmadmin.dml_compat_9_2'); END;")
    cur.execute(BLOCKS[1461])
    assert {r["RULE_NAME"] for r in rows(world.conn, "SELECT rule_name FROM dba_rules")} == \
        {"DML_COMPAT_9_2", "HR_NOT_REGIONS_DML", "HR_NOT_REGIONS_DDL"}
    assert rows(world.conn, "SELECT rule_set_name, rule_name FROM dba_rule_set_rules ORDER BY rule_name") == [
        {"RULE_SET_NAME": "COMPLEX_RULES", "RULE_NAME": "HR_NOT_REGIONS_DDL"},
        {"RULE_SET_NAME": "COMPLEX_RULES", "RULE_NAME": "HR_NOT_REGIONS_DML"}]
    assert rows(world.conn, "SELECT evaluation_context_owner, evaluation_context_name "
                            "FROM dba_evaluation_contexts") == [
        {"EVALUATION_CONTEXT_OWNER": "STRMADMIN", "EVALUATION_CONTEXT_NAME": "EVAL_CTX$_99"}]
    with pytest.raises(Exception, match="ORA-06550"):
        cur.execute(BLOCKS[1198])
