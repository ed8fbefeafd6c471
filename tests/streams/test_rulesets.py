"""Seed 000 Table 6-1: how a Streams client uses its positive and negative rule
sets, and undefined variables for Streams clients (acceptance 2)."""

import pytest

from sluice.plsql import execute
from sluice.streams import DDLLCR, RowLCR, Verdict, evaluate_rule_sets
from sluice.streams import rulesets as R
from sluice.errors import DatabaseError

STREAMS_EC = "SYS.STREAMS$_EVALUATION_CONTEXT"


def dml(owner, table, command="INSERT", tag=None, source="dbs1.net"):
    return RowLCR.construct(source_database_name=source, command_type=command,
                            object_owner=owner, object_name=table, tag=tag,
                            new_values={"id": 1})


EMP, JOB_HISTORY, ORDERS = dml("HR", "EMPLOYEES"), dml("HR", "JOB_HISTORY"), dml("OE", "ORDERS")
MESSAGES = {"emp": EMP, "job_history": JOB_HISTORY, "orders": ORDERS}


def table_rule(owner, table):
    return (f"(((:dml.get_object_owner() = '{owner}' and :dml.get_object_name() = '{table}')) "
            "and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )")


@pytest.fixture
def rs(conn):
    """POS: hr.employees; POS_HR: the hr schema; NEG: hr.job_history; two empty sets."""
    adm = conn.rule_adm
    adm.create_rule("emp", table_rule("HR", "EMPLOYEES"), STREAMS_EC)
    adm.create_rule("job_history", table_rule("HR", "JOB_HISTORY"), STREAMS_EC)
    adm.create_rule("hr_schema", "((:dml.get_object_owner() = 'HR') and :dml.is_null_tag() = 'Y')",
                    STREAMS_EC)
    for name, rules in (("pos", ["emp"]), ("pos_hr", ["hr_schema"]), ("neg", ["job_history"]),
                        ("pos_empty", []), ("neg_empty", [])):
        adm.create_rule_set(name, STREAMS_EC)
        for r in rules:
            adm.add_rule(r, name)
    return conn


def performs(conn, positive, negative):
    return {k: evaluate_rule_sets(conn, m, positive, negative).perform for k, m in MESSAGES.items()}


ALL = {"emp": True, "job_history": True, "orders": True}
NONE = {"emp": False, "job_history": False, "orders": False}

TABLE_6_1 = [
    # (negative, positive, expected): one case per row of Table 6-1, in its order
    (None, None, ALL),
    (None, "pos", {"emp": True, "job_history": False, "orders": False}),
    ("neg", None, {"emp": True, "job_history": False, "orders": True}),
    ("neg", "pos_hr", {"emp": True, "job_history": False, "orders": False}),
    ("neg_empty", None, ALL),
    ("neg_empty", "pos", {"emp": True, "job_history": False, "orders": False}),
    (None, "pos_empty", NONE),
    ("neg_empty", "pos_empty", NONE),
    ("neg", "pos_empty", NONE),
]


@pytest.mark.parametrize("negative, positive, expected", TABLE_6_1,
                         ids=[f"neg={n}-pos={p}" for n, p, _ in TABLE_6_1])
def test_table_6_1(rs, negative, positive, expected):
    assert performs(rs, positive, negative) == expected


def test_the_verdict_names_the_rules(rs):
    v = evaluate_rule_sets(rs, EMP, "pos", "neg")
    assert v.rule.rule_name == "SLUICE.EMP" and v.negative_rule is None
    v = evaluate_rule_sets(rs, JOB_HISTORY, "pos_hr", "neg")
    assert not v.perform and v.negative_rule.rule_name == "SLUICE.JOB_HISTORY" and v.rule is None
    assert evaluate_rule_sets(rs, EMP) == Verdict(True)


def test_negative_rule_set_is_evaluated_first_and_stops_evaluation(rs, monkeypatch):
    calls = []
    real = R.run_evaluation

    def spy(catalog, rule_set, context, **kw):
        calls.append(rule_set)
        return real(catalog, rule_set, context, **kw)
    monkeypatch.setattr(R, "run_evaluation", spy)
    assert not evaluate_rule_sets(rs, JOB_HISTORY, "pos_hr", "neg").perform
    assert calls == ["SLUICE.NEG"]                  # the positive set was never evaluated
    calls.clear()
    assert evaluate_rule_sets(rs, EMP, "pos_hr", "neg").perform
    assert calls == ["SLUICE.NEG", "SLUICE.POS_HR"]


def test_conflicting_rules_in_a_positive_rule_set_perform_the_task(rs):
    """One rule says capture hr.employees, another says not to: the client captures."""
    rs.rule_adm.create_rule("not_emp", ":dml.get_object_name() != 'EMPLOYEES'", STREAMS_EC)
    rs.rule_adm.create_rule_set("conflict", STREAMS_EC)
    rs.rule_adm.add_rule("emp", "conflict")
    rs.rule_adm.add_rule("not_emp", "conflict")
    assert evaluate_rule_sets(rs, EMP, "conflict").perform


def test_conflicting_rules_in_a_negative_rule_set_discard_the_message(rs):
    dept = dml("HR", "DEPARTMENTS")
    rs.rule_adm.create_rule("dept", table_rule("HR", "DEPARTMENTS"), STREAMS_EC)
    rs.rule_adm.create_rule("not_dept", ":dml.get_object_name() != 'DEPARTMENTS'", STREAMS_EC)
    rs.rule_adm.create_rule_set("neg_conflict", STREAMS_EC)
    rs.rule_adm.add_rule("dept", "neg_conflict")
    rs.rule_adm.add_rule("not_dept", "neg_conflict")
    assert not evaluate_rule_sets(rs, dept, None, "neg_conflict").perform


def test_ddl_lcrs_bind_the_ddl_variable(rs):
    rs.rule_adm.create_rule("countries_ddl", (
        "(((:ddl.get_object_owner() = 'HR' and :ddl.get_object_name() = 'COUNTRIES') "
        "or (:ddl.get_base_table_owner() = 'HR' and :ddl.get_base_table_name() = 'COUNTRIES')) "
        "and :ddl.is_null_tag() = 'Y' and :ddl.get_source_database_name() = 'DBS1.NET' )"),
        STREAMS_EC)
    rs.rule_adm.add_rule("countries_ddl", "pos")
    alter = DDLLCR.construct(source_database_name="dbs1.net", command_type="ALTER TABLE",
                             object_owner="HR", object_name="COUNTRIES", object_type="TABLE",
                             ddl_text="ALTER TABLE hr.countries ADD (x NUMBER)",
                             base_table_owner="HR", base_table_name="COUNTRIES")
    index = DDLLCR.construct(source_database_name="dbs1.net", command_type="CREATE INDEX",
                             object_owner="SCOTT", object_name="C_IX", object_type="INDEX",
                             ddl_text="CREATE INDEX …", base_table_owner="HR",
                             base_table_name="COUNTRIES")
    assert evaluate_rule_sets(rs, alter, "pos").rule.rule_name == "SLUICE.COUNTRIES_DDL"
    assert evaluate_rule_sets(rs, index, "pos").perform     # via the base table
    assert not evaluate_rule_sets(rs, dml("HR", "COUNTRIES"), "pos").perform


def test_unknown_rule_set(rs):
    with pytest.raises(DatabaseError) as e:
        evaluate_rule_sets(rs, EMP, "nope")
    assert e.value.code == 24141


# -- "Rule Conditions with Undefined Variables that Evaluate to NULL" -------------------

UNDEFINED = {
    "m_is_null": (":m IS NULL", True),
    "m_is_5": (":m = 5", False),
    "hr_and_m_is_null": (":dml.get_object_owner() = 'HR' AND :m IS NULL", True),
    "hr_and_m_is_5": (":dml.get_object_owner() = 'HR' AND :m = 5", False),
}


@pytest.fixture
def with_m(conn):
    """A user evaluation context with the Streams variables plus an explicit NUMBER :m."""
    execute(conn, """
    DECLARE
      vt SYS.RE$VARIABLE_TYPE_LIST;
    BEGIN
      vt := SYS.RE$VARIABLE_TYPE_LIST(
        SYS.RE$VARIABLE_TYPE('DML', 'SYS.LCR$_ROW_RECORD',
           'SYS.DBMS_STREAMS_INTERNAL.ROW_VARIABLE_VALUE_FUNCTION',
           'SYS.DBMS_STREAMS_INTERNAL.ROW_FAST_EVALUATION_FUNCTION'),
        SYS.RE$VARIABLE_TYPE('DDL', 'SYS.LCR$_DDL_RECORD',
           'SYS.DBMS_STREAMS_INTERNAL.DDL_VARIABLE_VALUE_FUNCTION',
           'SYS.DBMS_STREAMS_INTERNAL.DDL_FAST_EVALUATION_FUNCTION'),
        SYS.RE$VARIABLE_TYPE('M', 'NUMBER', NULL, NULL));
      DBMS_RULE_ADM.CREATE_EVALUATION_CONTEXT(
        evaluation_context_name => 'strmadmin.m_ctx',
        variable_types          => vt,
        evaluation_function     => 'SYS.DBMS_STREAMS_INTERNAL.EVALUATION_CONTEXT_FUNCTION');
    END;""")
    for name, (condition, _) in UNDEFINED.items():
        conn.rule_adm.create_rule(f"strmadmin.{name}", condition, "strmadmin.m_ctx")
        conn.rule_adm.create_rule_set(f"strmadmin.rs_{name}")
        conn.rule_adm.add_rule(f"strmadmin.{name}", f"strmadmin.rs_{name}")
    return conn


@pytest.mark.parametrize("name", sorted(UNDEFINED))
def test_undefined_variables_are_null_for_streams_clients(with_m, name):
    expected = UNDEFINED[name][1]
    assert evaluate_rule_sets(with_m, EMP, f"strmadmin.rs_{name}").perform is expected


@pytest.mark.parametrize("name", sorted(UNDEFINED))
def test_undefined_variables_give_maybe_rules_to_other_clients(with_m, name):
    true_rules, maybe_rules = with_m.rule.evaluate(
        rule_set_name=f"strmadmin.rs_{name}", evaluation_context="strmadmin.m_ctx",
        variable_values={"dml": EMP})
    assert true_rules == [] and [h.rule_name for h in maybe_rules] == [f"STRMADMIN.{name.upper()}"]


def test_a_known_false_term_decides_even_with_an_undefined_variable(with_m):
    """For an OE row, ``owner = 'HR' AND :m = 5`` is FALSE whatever m is: not a maybe rule."""
    for name in ("hr_and_m_is_5", "hr_and_m_is_null"):
        assert with_m.rule.evaluate(rule_set_name=f"strmadmin.rs_{name}",
                                    evaluation_context="strmadmin.m_ctx",
                                    variable_values={"dml": ORDERS}) == ([], [])


def test_defined_variables_decide(with_m):
    for m, expected in ((5, ["STRMADMIN.M_IS_5"]), (6, [])):
        true_rules, maybe_rules = with_m.rule.evaluate(
            rule_set_name="strmadmin.rs_m_is_5", evaluation_context="strmadmin.m_ctx",
            variable_values={"dml": EMP, "m": m})
        assert [h.rule_name for h in true_rules] == expected and maybe_rules == []


# -- message rules (seed 000 "Message Rule Example") ---------------------------------


def test_user_messages_bind_the_variable_of_their_type(conn):
    seed_type = """CREATE TYPE strmadmin.region_pri_msg AS OBJECT(
      region         VARCHAR2(100),
      priority       NUMBER,
      message        VARCHAR2(3000))"""
    execute(conn, seed_type)
    execute(conn, """
    DECLARE
      vt  SYS.RE$VARIABLE_TYPE_LIST;
    BEGIN
      vt := SYS.RE$VARIABLE_TYPE_LIST(
        SYS.RE$VARIABLE_TYPE('VAR$_52', 'STRMADMIN.REGION_PRI_MSG',
           'SYS.DBMS_STREAMS_INTERNAL.MSG_VARIABLE_VALUE_FUNCTION', NULL));
      DBMS_RULE_ADM.CREATE_EVALUATION_CONTEXT(
        evaluation_context_name => 'STRMADMIN.EVAL_CTX$_99',
        variable_types          => vt,
        evaluation_function     => NULL);
    END;""")
    adm = conn.rule_adm
    adm.create_rule("strmadmin.europe_1", """:"VAR$_52".region = 'EUROPE' AND  :"VAR$_52".priority = '1'""",
                    "STRMADMIN.EVAL_CTX$_99")
    adm.create_rule_set("strmadmin.msg_client_rs")    # message rule sets have no context
    adm.add_rule("strmadmin.europe_1", "strmadmin.msg_client_rs")
    t = conn.gettype("STRMADMIN.REGION_PRI_MSG")

    def msg(region, priority):
        m = t.newobject()
        m.REGION, m.PRIORITY, m.MESSAGE = region, priority, "hello"
        return m
    assert evaluate_rule_sets(conn, msg("EUROPE", 1), "strmadmin.msg_client_rs").perform
    assert not evaluate_rule_sets(conn, msg("EUROPE", 2), "strmadmin.msg_client_rs").perform
    assert not evaluate_rule_sets(conn, msg("AMERICAS", 1), "strmadmin.msg_client_rs").perform
    assert not evaluate_rule_sets(conn, EMP, "strmadmin.msg_client_rs").perform
