"""DBMS_STREAMS_ADM through the Python API: clients created as Oracle creates them, rule
sets on the side inclusion_rule asks for, REMOVE_RULE, the messaging client's dequeue with
row migration, and bad input that leaves nothing behind."""

from __future__ import annotations

import re

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.rules.adm import RuleAdm
from sluice.streams import RowLCR
from tests.streams.capturekit import drop_env, make_env
from tests.streams.test_rulegen_seed import CREATE_TYPE, make_regions, rows


@pytest.fixture
def world(dsn):
    env = make_env(dsn)
    env.conn.streams_adm.set_up_queue()
    make_regions(env)
    yield env
    drop_env(env)


def lcr(name, command="INSERT", old=None, new=None, owner="HR", tag=None):
    return RowLCR.construct(source_database_name="DBS1.NET", command_type=command, object_owner=owner,
                            object_name=name, tag=tag, old_values=old, new_values=new)


def nothing_made(conn) -> None:
    for view in ("dba_rules", "dba_rule_sets", "dba_streams_rules", "dba_apply",
                 "dba_streams_message_consumers", "dba_capture"):
        assert rows(conn, f"SELECT * FROM {view}") == [], view


def test_rule_sets_on_the_side_inclusion_rule_asks_and_reused(world):
    adm = world.conn.streams_adm
    dml, ddl = adm.add_table_rules("hr.job_history", "apply", "apply", include_tagged_lcr=True,
                                   inclusion_rule=False)
    assert ddl is None and re.fullmatch(r"SLUICE\.JOB_HISTORY\d+", dml)
    a, = rows(world.conn, "SELECT rule_set_name, negative_rule_set_name FROM dba_apply")
    assert a["RULE_SET_NAME"] is None and re.fullmatch(r"RULESET\$_\d+", a["NEGATIVE_RULE_SET_NAME"])
    adm.add_schema_rules("hr", "apply", "apply")
    adm.add_schema_rules("oe", "apply", "apply", include_ddl=True)
    a2, = rows(world.conn, "SELECT rule_set_name, negative_rule_set_name FROM dba_apply")
    assert a2["NEGATIVE_RULE_SET_NAME"] == a["NEGATIVE_RULE_SET_NAME"]
    assert len(rows(world.conn, "SELECT * FROM dba_rule_set_rules WHERE rule_set_name = "
                                f"'{a2['RULE_SET_NAME']}'")) == 3      # one rule set, reused
    assert adm.add_table_rules("hr.x", "apply", "apply", include_dml=False) == (None, None)


def test_remove_rule(world):
    adm, conn = world.conn.streams_adm, world.conn
    dml, ddl = adm.add_table_rules("hr.locations", "apply", "apply", include_ddl=True)
    adm.remove_rule(dml, "apply", "apply")
    assert [r["RULE_TYPE"] for r in rows(conn, "SELECT rule_type FROM dba_streams_rules")] == ["DDL"]
    assert len(rows(conn, "SELECT * FROM dba_rules")) == 1                # dropped: no rule set has it
    adm.remove_rule(ddl, "apply", "apply", drop_unused_rule=False)
    assert rows(conn, "SELECT * FROM dba_streams_rules") == []
    assert len(rows(conn, "SELECT * FROM dba_rules")) == 1                # kept
    with pytest.raises(DatabaseError, match="ORA-26701"):
        adm.remove_rule(ddl, "apply", "no_such_apply")
    with pytest.raises(DatabaseError, match="ORA-23605"):
        adm.remove_rule(ddl, "replicate", "apply")
    adm.add_global_rules("apply", "apply", include_ddl=True)
    adm.remove_rule(None, "apply", "apply")                               # NULL: every rule
    assert rows(conn, "SELECT * FROM dba_streams_rules") == []


@pytest.mark.parametrize("call,code", [
    (dict(streams_type="replicate"), "ORA-23605"),
    (dict(queue_name="no_such_queue"), "ORA-24010"),
    (dict(and_condition=":lcr.get_tag( = 1"), "ORA-"),
    (dict(and_condition=":lcr.no_such_member() = 1"), "ORA-00904"),
    (dict(streams_name="a.b"), "ORA-26667"),
])
def test_bad_input_leaves_nothing(world, call, code):
    args = {**dict(table_name="hr.locations", streams_type="apply", streams_name="apply",
                   queue_name="streams_queue"), **call}
    with pytest.raises(DatabaseError, match=code):
        world.conn.streams_adm.add_table_rules(**args)
    nothing_made(world.conn)


def test_subset_rules_need_the_table_and_a_column(world):
    adm = world.conn.streams_adm
    with pytest.raises(DatabaseError, match="ORA-00942"):
        adm.add_subset_rules("hr.no_such_table", "region_id = 2", "apply", "apply")
    with pytest.raises(DatabaseError, match="ORA-00904"):
        adm.add_subset_rules("hr.regions", "1 = 1", "apply", "apply")
    nothing_made(world.conn)


def test_a_failure_after_the_client_exists_undoes_everything(world, monkeypatch):
    calls = []
    real = RuleAdm.add_rule

    def flaky(self, *a, **k):
        calls.append(a)
        if len(calls) == 2:
            raise DatabaseError("ORA-00600: injected", 600)
        return real(self, *a, **k)
    monkeypatch.setattr(RuleAdm, "add_rule", flaky)
    with pytest.raises(DatabaseError, match="injected"):
        world.conn.streams_adm.add_subset_rules("hr.regions", "region_id = 2", "dequeue", "mc")
    nothing_made(world.conn)
    q = world.conn.context.catalog.queue("streams_queue")
    assert "MC" not in [s.name for s in world.conn.context.catalog.subscribers(q)]


def test_messaging_client_dequeues_what_its_rules_accept_migrated(world):
    conn = world.conn
    adm, msg = conn.streams_adm, conn.streams_messaging
    adm.add_table_rules("hr.employees", "dequeue", "mc")
    adm.add_subset_rules("hr.regions", "region_id = 2", "dequeue", "mc")
    consumer, = rows(conn, "SELECT * FROM dba_streams_message_consumers")
    assert consumer["STREAMS_NAME"] == "MC" and consumer["QUEUE_NAME"] == "STREAMS_QUEUE"
    for m in (lcr("OTHER"), lcr("EMPLOYEES", new={"id": 1}),
              lcr("REGIONS", "UPDATE", old={"region_id": 1, "region_name": "a"}, new={"region_id": 2}),
              lcr("REGIONS", "UPDATE", old={"region_id": 1}, new={"region_id": 3}),
              lcr("REGIONS", "UPDATE", old={"region_id": 2, "region_name": "b"}, new={"region_id": 5}),
              lcr("EMPLOYEES", tag=b"\x01")):
        msg.enqueue("streams_queue", m)
    conn.commit()
    got = []
    navigation = "NEXT MESSAGE"
    while True:      # as Oracle's examples: ORA-25235 ends a transaction, ORA-25228 the queue
        try:
            payload, msgid = msg.dequeue("streams_queue", "mc", navigation=navigation, wait=0)
        except DatabaseError as e:
            if e.code == 25235:
                navigation = "NEXT TRANSACTION"
                continue
            assert e.code == 25228
            break
        navigation = "NEXT MESSAGE"
        got.append((payload.get_object_name(), payload.get_command_type(),
                    {u.column_name: u.data.value for u in payload.get_values("NEW")},
                    {u.column_name: u.data.value for u in payload.get_values("OLD")}))
    conn.commit()
    assert got == [("EMPLOYEES", "INSERT", {"ID": 1}, {}),
                   ("REGIONS", "INSERT", {"REGION_ID": 2, "REGION_NAME": "a"}, {}),
                   ("REGIONS", "DELETE", {}, {"REGION_ID": 2, "REGION_NAME": "b"})]
    with pytest.raises(DatabaseError, match="ORA-26701"):
        msg.dequeue("streams_queue", "nobody", wait=0)
    # REMOVE_RULE with rule_name NULL removes its rules; with none left the client is dropped
    adm.remove_rule(None, "dequeue", "mc")
    assert rows(conn, "SELECT * FROM dba_streams_message_consumers") == []
    q = conn.context.catalog.queue("streams_queue")
    assert "MC" not in [s.name for s in conn.context.catalog.subscribers(q)]


def test_message_rules_share_the_types_evaluation_context(world):
    conn = world.conn
    conn.cursor().execute(CREATE_TYPE.rstrip().rstrip("/"))
    adm = conn.streams_adm
    r1 = adm.add_message_rule("strmadmin.region_pri_msg", ":msg.region = 'EUROPE' AND :msg.priority = 1",
                              "dequeue", "msg_client")
    r2 = adm.add_message_rule("strmadmin.region_pri_msg", ":msg.region = 'ASIA'", "dequeue", "msg_client")
    rules = rows(conn, "SELECT rule_name, message_rule_variable, message_type_owner, message_type_name, "
                       "rule_condition FROM dba_streams_message_rules ORDER BY rule_name")
    assert {r["MESSAGE_RULE_VARIABLE"] for r in rules} == {rules[0]["MESSAGE_RULE_VARIABLE"]}
    var = rules[0]["MESSAGE_RULE_VARIABLE"]
    assert re.fullmatch(r"VAR\$_\d+", var) and rules[0]["MESSAGE_TYPE_NAME"] == "REGION_PRI_MSG"
    assert {r1, r2} == {f"SLUICE.{r['RULE_NAME']}" for r in rules}
    assert re.fullmatch(r"REGION_PRI_MSG\d+", rules[0]["RULE_NAME"])
    ctxs = rows(conn, "SELECT evaluation_context_name FROM dba_evaluation_contexts")
    assert len(ctxs) == 1 and re.fullmatch(r"EVAL_CTX\$_\d+", ctxs[0]["EVALUATION_CONTEXT_NAME"])
    # "Rule sets created by ADD_MESSAGE_RULE … do not have an evaluation context"
    assert rows(conn, "SELECT rule_set_eval_context_name FROM dba_rule_sets") == \
        [{"RULE_SET_EVAL_CONTEXT_NAME": None}]
    t = conn.gettype("strmadmin.region_pri_msg")
    for region, priority in (("EUROPE", 1), ("AMERICAS", 1), ("ASIA", 2), ("EUROPE", 2)):
        o = t.newobject()
        o.REGION, o.PRIORITY, o.MESSAGE = region, priority, "m"
        conn.streams_messaging.enqueue("streams_queue", o)
    conn.commit()
    got = []
    navigation = "NEXT MESSAGE"
    while True:
        try:
            payload, _ = conn.streams_messaging.dequeue("streams_queue", "msg_client",
                                                        navigation=navigation, wait=0)
        except DatabaseError as e:
            if e.code == 25235:
                navigation = "NEXT TRANSACTION"
                continue
            break
        navigation = "NEXT MESSAGE"
        obj = payload.access_object() if hasattr(payload, "access_object") else payload
        got.append((obj.REGION, obj.PRIORITY))
    assert got == [("EUROPE", 1), ("ASIA", 2)]
    with pytest.raises(DatabaseError, match="ORA-23605"):
        adm.add_message_rule("strmadmin.region_pri_msg", ":msg.region = 'X'", "capture", "c")


def test_an_apply_process_and_a_messaging_client_share_one_namespace(world):
    world.conn.streams_adm.add_global_rules("apply", "client_one")
    with pytest.raises(DatabaseError, match="ORA-26665"):
        world.conn.streams_adm.add_global_rules("dequeue", "client_one")


def test_dbms_apply_adm_catalog(world):
    conn = world.conn
    conn.rule_adm.create_rule_set("my_rs", "SYS.STREAMS$_EVALUATION_CONTEXT")
    conn.apply_adm.create_apply(queue_name="streams_queue", apply_name="ap", rule_set_name="my_rs",
                                apply_captured=True, apply_tag=b"\x02")
    a, = rows(conn, "SELECT * FROM dba_apply")
    assert (a["APPLY_NAME"], a["STATUS"], a["RULE_SET_NAME"], a["APPLY_CAPTURED"], a["APPLY_TAG"]) == \
        ("AP", "DISABLED", "MY_RS", "YES", "02")
    with pytest.raises(DatabaseError, match="ORA-26665"):
        conn.apply_adm.create_apply(queue_name="streams_queue", apply_name="ap")
    with pytest.raises(DatabaseError, match="ORA-24141"):
        conn.apply_adm.alter_apply("ap", negative_rule_set_name="nope")
    conn.apply_adm.alter_apply("ap", remove_rule_set=True, negative_rule_set_name="my_rs")
    a, = rows(conn, "SELECT rule_set_name, negative_rule_set_name FROM dba_apply")
    assert (a["RULE_SET_NAME"], a["NEGATIVE_RULE_SET_NAME"]) == (None, "MY_RS")
    conn.apply_adm.drop_apply("ap", drop_unused_rule_sets=True)
    assert rows(conn, "SELECT * FROM dba_apply") == [] and rows(conn, "SELECT * FROM dba_rule_sets") == []
    with pytest.raises(DatabaseError, match="ORA-26701"):
        conn.apply_adm.drop_apply("ap")
    r = sluice.connect(world.dsn)
    r.cursor().execute("BEGIN DBMS_APPLY_ADM.CREATE_APPLY(queue_name => 'streams_queue', "
                       "apply_name => 'ap2', apply_captured => TRUE); END;")
    assert rows(r, "SELECT apply_name FROM dba_apply") == [{"APPLY_NAME": "AP2"}]
    r.close()


def test_streams_name_null_finds_or_names_the_client(world):
    adm, conn = world.conn.streams_adm, world.conn
    adm.add_table_rules("hr.a", "dequeue", None)                    # none yet: a generated name
    name, = [r["STREAMS_NAME"] for r in rows(conn, "SELECT streams_name FROM dba_streams_message_consumers")]
    assert re.fullmatch(r"MSG_CLIENT\$_\d+", name)
    adm.add_table_rules("hr.b", "dequeue", None)                    # the one there is
    assert {r["STREAMS_NAME"] for r in rows(conn, "SELECT streams_name FROM dba_streams_rules")} == {name}
    adm.add_table_rules("hr.c", "dequeue", "second")
    with pytest.raises(DatabaseError, match="ORA-26667"):
        adm.add_table_rules("hr.d", "dequeue", None)                # two: which?
    adm.add_table_rules("hr.a", "apply", None, source_database="dbs1.net")
    adm.add_table_rules("hr.b", "apply", None, source_database="dbs1.net")
    adm.add_table_rules("hr.c", "apply", None, source_database="dbs2.net")
    applies = rows(conn, "SELECT apply_name, source_database FROM dba_apply ORDER BY source_database")
    assert [a["SOURCE_DATABASE"] for a in applies] == ["DBS1.NET", "DBS2.NET"]
    assert all(re.fullmatch(r"APPLY\$_\d+", a["APPLY_NAME"]) for a in applies)


def test_dba_streams_rules_lists_every_rule_of_a_clients_rule_sets(world):
    """A rule added with DBMS_RULE_ADM to a client's rule set shows too (without what only
    system-created rules have); a rule set two clients share shows for both."""
    conn = world.conn
    conn.streams_adm.add_table_rules("hr.a", "apply", "ap1")
    rs, = [r["RULE_SET_NAME"] for r in rows(conn, "SELECT rule_set_name FROM dba_apply")]
    conn.rule_adm.create_rule("mine", ":dml.get_object_owner() = 'OE'")
    conn.rule_adm.add_rule("mine", rs)
    conn.apply_adm.create_apply(queue_name="streams_queue", apply_name="ap2", rule_set_name=rs)
    table_rule, = [r["RULE_NAME"] for r in rows(conn, "SELECT rule_name FROM dba_streams_table_rules")]
    got = sorted((r["STREAMS_NAME"], r["RULE_NAME"], r["STREAMS_RULE_TYPE"], r["SAME_RULE_CONDITION"])
                 for r in rows(conn, "SELECT * FROM dba_streams_rules"))
    assert got == [("AP1", table_rule, "TABLE", "YES"), ("AP1", "MINE", None, None),
                   ("AP2", table_rule, None, None), ("AP2", "MINE", None, None)]
    conn.rule_adm.alter_rule(table_rule, condition=":dml.get_object_owner() = 'HR'")
    changed, = rows(conn, "SELECT * FROM dba_streams_rules WHERE streams_name = 'AP1' "
                          "AND streams_rule_type = 'TABLE'")
    assert changed["SAME_RULE_CONDITION"] == "NO"
    assert changed["RULE_CONDITION"] == ":dml.get_object_owner() = 'HR'"


def test_a_generated_name_already_taken_is_skipped(world):
    conn = world.conn
    for n in range(1, 4):      # the numbers the next call would take
        conn.rule_adm.create_rule(f"locations{n}", ":dml.get_object_name() = 'X'")
    dml, _ = conn.streams_adm.add_table_rules("hr.locations", "apply", "apply")
    assert re.fullmatch(r"SLUICE\.LOCATIONS\d+", dml) and int(dml.split("LOCATIONS")[1]) > 3


def test_global_rules_are_named_after_the_database(world):
    conn = world.conn
    conn.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO site1.example.com")
    dml, _ = conn.streams_adm.add_global_rules("apply", "apply")
    assert re.fullmatch(r"SLUICE\.SITE1\d+", dml)
    dml, _ = conn.streams_adm.add_global_rules("apply", "apply", source_database="dbs2.net")
    assert re.fullmatch(r"SLUICE\.DBS2\d+", dml)


def test_messaging_client_through_plsql(world):
    conn = world.conn
    conn.streams_adm.add_table_rules("hr.emp", "dequeue", "mc")
    cur = conn.cursor()
    for name in ("X", "EMP"):
        conn.streams_messaging.enqueue("streams_queue", lcr(name, new={"id": 1}))
    conn.commit()
    cur.execute("""DECLARE payload ANYDATA; msgid RAW(16);
      BEGIN
        DBMS_STREAMS_MESSAGING.DEQUEUE(queue_name => 'streams_queue', streams_name => 'mc',
          payload => payload, navigation => 'FIRST MESSAGE', wait => DBMS_STREAMS_MESSAGING.NO_WAIT,
          msgid => msgid);
        DBMS_OUTPUT.PUT_LINE(payload.GET_OBJECT_NAME() || ' ' || payload.GET_COMMAND_TYPE());
        COMMIT;
      END;""")
    assert cur.output == ["EMP INSERT"]


def test_user_and_all_views(world):
    conn = world.conn
    conn.streams_adm.add_table_rules("hr.a", "apply", "ap", include_ddl=True)
    assert len(rows(conn, "SELECT rule_name, rule_condition FROM user_rules")) == 2
    assert len(rows(conn, "SELECT rule_set_name FROM user_rule_sets")) == 1
    assert len(rows(conn, "SELECT rule_name FROM user_rule_set_rules")) == 2
    assert rows(conn, "SELECT * FROM all_streams_table_rules") == rows(conn, "SELECT * FROM dba_streams_table_rules")
    assert rows(conn, "SELECT apply_name FROM all_apply") == [{"APPLY_NAME": "AP"}]
