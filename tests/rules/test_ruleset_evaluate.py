"""DBMS_RULE.EVALUATE: true and maybe rules, options, values, and bad values."""

from __future__ import annotations

import pytest

import sluice
from sluice.errors import DatabaseError
from sluice.plsql import execute
from sluice.rules.engine.types import (AttributeValue, ColumnValue, RuleHit, TableValue, VariableType,
                                       VariableValue)
from sluice.rules.engine.anydata import AnyData
from sluice.streams import RowLCR

EC = "SYS.STREAMS$_EVALUATION_CONTEXT"


def lcr(owner="HR", name="EMPLOYEES", tag=None):
    return RowLCR.construct(source_database_name="dbs1.net", command_type="INSERT",
                            object_owner=owner, object_name=name, tag=tag, new_values={"id": 1})


def names(hits):
    return [h.rule_name for h in hits]


@pytest.fixture
def ctx(conn):
    """``ctx_vars`` with :m NUMBER, :s VARCHAR2 and the Streams :dml."""
    execute(conn, """CREATE TYPE point_t AS OBJECT (x NUMBER, y NUMBER)""")
    conn.rule_adm.create_evaluation_context("ctx_vars", variable_types=[
        VariableType("DML", "SYS.LCR$_ROW_RECORD"), VariableType("M", "NUMBER"),
        VariableType("S", "VARCHAR2(30)"), VariableType("P", "POINT_T")])
    conn.rule_adm.create_rule_set("rs", "ctx_vars")

    def rules(*conditions):
        for i, condition in enumerate(conditions):
            conn.rule_adm.create_rule(f"r{i}", condition)
            conn.rule_adm.add_rule(f"r{i}", "rs")
    conn.rules = rules
    return conn


def evaluate(conn, **kw):
    return conn.rule.evaluate(rule_set_name="rs", evaluation_context="ctx_vars", **kw)


def test_results_come_back_in_rule_set_order(ctx):
    ctx.rules(":m > 1", ":m > 2", ":dml.get_object_owner() = 'HR'", ":m > 100", ":m = 3")
    assert names(evaluate(ctx, variable_values={"m": 3, "dml": lcr()})[0]) == \
        ["SLUICE.R0", "SLUICE.R1", "SLUICE.R2", "SLUICE.R4"]


def test_stop_on_first_hit(ctx):
    ctx.rules(":m > 100", ":s IS NULL", ":m > 1", ":m > 2")
    assert names(evaluate(ctx, variable_values={"m": 3, "s": "x"}, stop_on_first_hit=True)[0]) == \
        ["SLUICE.R2"]
    # no TRUE rule: the first maybe rule
    assert evaluate(ctx, variable_values={"m": 0}, stop_on_first_hit=True) == \
        ([], [RuleHit("SLUICE.R1")])


def test_simple_rules_only_turns_complex_rules_into_maybe_rules(ctx):
    ctx.rules(":m = 3", ":s LIKE 'a%'", "NOT :m = 4")
    hits, maybe = evaluate(ctx, variable_values={"m": 3, "s": "abc"}, simple_rules_only=True)
    assert names(hits) == ["SLUICE.R0"] and names(maybe) == ["SLUICE.R1", "SLUICE.R2"]
    hits, maybe = evaluate(ctx, variable_values={"m": 3, "s": "abc"})
    assert names(hits) == ["SLUICE.R0", "SLUICE.R1", "SLUICE.R2"] and maybe == []


def test_value_lists_in_oracles_types(ctx):
    ctx.rules(":m = 5 AND :s = 'x'")
    values = [VariableValue("M", AnyData.convert_number(5)), VariableValue("s", AnyData.of("x"))]
    assert names(evaluate(ctx, variable_values=values)[0]) == ["SLUICE.R0"]


def test_attribute_values_define_the_variable(ctx):
    ctx.rules(":p.x = 1", ":p.y IS NULL", ":p IS NULL")
    hits, maybe = evaluate(ctx, attribute_values=[AttributeValue("p", "x", AnyData.of(1))])
    assert names(hits) == ["SLUICE.R0", "SLUICE.R1"] and maybe == []
    hits, maybe = evaluate(ctx, attribute_values={"p.x": 2})
    assert names(hits) == ["SLUICE.R1"]
    hits, maybe = evaluate(ctx)   # neither p nor an attribute: p is undefined
    assert hits == [] and names(maybe) == ["SLUICE.R0", "SLUICE.R1", "SLUICE.R2"]
    point = ctx.gettype("POINT_T").newobject()
    point.X = 1
    assert names(evaluate(ctx, variable_values={"p": point})[0]) == ["SLUICE.R0", "SLUICE.R1"]


def test_a_bad_value_makes_only_that_rule_null(ctx):
    ctx.rules(":s = 5", ":s IS NOT NULL", ":m / 0 > 1", ":m = 1")
    hits, maybe = evaluate(ctx, variable_values={"s": "not a number", "m": 1})
    assert names(hits) == ["SLUICE.R1", "SLUICE.R3"] and maybe == []


def test_an_lcr_that_fails_a_member_call_never_aborts(conn):
    class Broken(RowLCR):
        def get_object_owner(self):
            raise RuntimeError("corrupt")
    conn.rule_adm.create_rule_set("rs", EC)
    for i, condition in enumerate([":dml.get_object_owner() = 'HR'",
                                   ":dml.get_object_name() = 'EMPLOYEES'"]):
        conn.rule_adm.create_rule(f"r{i}", condition, EC)
        conn.rule_adm.add_rule(f"r{i}", "rs")
    broken = Broken("dbs1.net", "INSERT", "HR", "EMPLOYEES")
    hits, _ = conn.rule.evaluate("rs", EC, variable_values={"dml": broken})
    assert names(hits) == ["SLUICE.R1"]


def test_event_context_feeds_the_streams_variable_value_functions(conn):
    conn.rule_adm.create_rule_set("rs", EC)
    conn.rule_adm.create_rule("r", ":dml.get_object_owner() = 'HR'", EC)
    conn.rule_adm.add_rule("r", "rs")
    hits, maybe = conn.rule.evaluate("rs", EC, event_context={"AQ$_MESSAGE": lcr()})
    assert names(hits) == ["SLUICE.R"] and maybe == []
    hits, maybe = conn.rule.evaluate("rs", EC)  # no message: :dml is undefined
    assert hits == [] and names(maybe) == ["SLUICE.R"]


def test_user_variable_value_function(conn):
    sluice.register_function("sluice.region_of", lambda schema, ctx, var, event: (event or {}).get("region"))
    conn.rule_adm.create_evaluation_context("rctx", variable_types=[
        VariableType("REGION", "VARCHAR2(30)", "sluice.region_of")])
    conn.rule_adm.create_rule_set("rs", "rctx")
    conn.rule_adm.create_rule("r", ":region = 'EUROPE'")
    conn.rule_adm.add_rule("r", "rs")
    assert names(conn.rule.evaluate("rs", "rctx", event_context={"region": "EUROPE"})[0]) == ["SLUICE.R"]
    assert conn.rule.evaluate("rs", "rctx", event_context={"region": "ASIA"}) == ([], [])
    assert conn.rule.evaluate("rs", "rctx", event_context={}) == ([], [RuleHit("SLUICE.R")])


def test_user_evaluation_function(conn):
    outcome = {}
    sluice.register_function("sluice.my_eval", lambda *args: outcome["result"])
    adm = conn.rule_adm
    adm.create_evaluation_context("ectx", variable_types=[VariableType("M", "NUMBER")],
                                  evaluation_function="sluice.my_eval")
    adm.create_rule_set("rs", "ectx")
    adm.create_rule("r", ":m = 1")
    adm.add_rule("r", "rs")
    outcome["result"] = adm.EVALUATION_CONTINUE
    assert names(conn.rule.evaluate("rs", "ectx", variable_values={"m": 1})[0]) == ["SLUICE.R"]
    outcome["result"] = (adm.EVALUATION_SUCCESS, [RuleHit("SLUICE.OTHER")], [])
    assert conn.rule.evaluate("rs", "ectx", variable_values={"m": 1}) == ([RuleHit("SLUICE.OTHER")], [])
    outcome["result"] = adm.EVALUATION_FAILURE
    with pytest.raises(DatabaseError) as e:
        conn.rule.evaluate("rs", "ectx", variable_values={"m": 1})
    assert e.value.code == 25457


def test_only_rules_of_the_given_evaluation_context_take_part(ctx):
    ctx.rules(":m = 1")
    ctx.rule_adm.create_rule("streams_rule", ":dml.is_null_tag() = 'Y'", EC)
    ctx.rule_adm.add_rule("streams_rule", "rs")
    assert names(evaluate(ctx, variable_values={"m": 1, "dml": lcr()})[0]) == ["SLUICE.R0"]
    hits, _ = ctx.rule.evaluate("rs", EC, variable_values={"dml": lcr()})
    assert names(hits) == ["SLUICE.STREAMS_RULE"]


def test_unknown_rule_set_or_context(ctx):
    for kw, code in ((dict(rule_set_name="nope", evaluation_context="ctx_vars"), 24141),
                     (dict(rule_set_name="rs", evaluation_context="nope"), 24150)):
        with pytest.raises(DatabaseError) as e:
            ctx.rule.evaluate(**kw)
        assert e.value.code == code


def test_table_values_by_rowid_are_not_supported(conn):
    from sluice.rules.engine.types import TableAlias
    conn.rule_adm.create_evaluation_context("t", table_aliases=[TableAlias("tab", "hr.t")])
    conn.rule_adm.create_rule_set("rs", "t")
    conn.rule_adm.create_rule("r", "tab.x = 1")
    conn.rule_adm.add_rule("r", "rs")
    with pytest.raises(DatabaseError) as e:
        conn.rule.evaluate("rs", "t", table_values=[TableValue("tab", "AAAR3sAAEAAAACXAAA")])
    assert e.value.full_code == "SLU-00001"
    hits, _ = conn.rule.evaluate("rs", "t", column_values=[ColumnValue("tab", "x", AnyData.of(1))])
    assert names(hits) == ["SLUICE.R"]


def test_evaluate_from_plsql_with_out_parameters(ctx):
    ctx.rules(":m = 5", ":m = 6", ":s IS NULL")
    result = execute(ctx, """
    DECLARE
      t SYS.RE$RULE_HIT_LIST;
      m SYS.RE$RULE_HIT_LIST;
    BEGIN
      DBMS_RULE.EVALUATE(
        rule_set_name      => 'rs',
        evaluation_context => 'ctx_vars',
        variable_values    => SYS.RE$VARIABLE_VALUE_LIST(
                                SYS.RE$VARIABLE_VALUE('m', ANYDATA.ConvertNumber(5))),
        true_rules         => t,
        maybe_rules        => m);
      DBMS_OUTPUT.PUT_LINE(t.COUNT || ' true: ' || t(1).rule_name);
      DBMS_OUTPUT.PUT_LINE(m.COUNT || ' maybe: ' || m(1).rule_name);
    END;""")
    assert result.output == ["1 true: SLUICE.R0", "1 maybe: SLUICE.R2"]


def test_an_object_of_another_type_leaves_its_variable_undefined(ctx):
    """A DDL LCR sent as :dml (a SYS.LCR$_ROW_RECORD variable) was read as one: the row rule
    was TRUE for it.  An object of another type leaves the variable undefined (the rule is
    a maybe rule), as the Streams value functions leave it for a message of another type."""
    from sluice.streams import DDLLCR
    ddl = DDLLCR.construct(source_database_name="dbs1.net", command_type="CREATE TABLE",
                           object_owner="HR", object_name="EMPLOYEES", object_type="TABLE",
                           ddl_text="CREATE TABLE hr.employees (id NUMBER)", logon_user="HR",
                           current_schema="HR", base_table_owner="HR", base_table_name="EMPLOYEES")
    ctx.rules(":dml.get_object_owner() = 'HR'")
    assert evaluate(ctx, variable_values={"dml": ddl}) == ([], [RuleHit("SLUICE.R0")])
    assert names(evaluate(ctx, variable_values={"dml": lcr()})[0]) == ["SLUICE.R0"]
    assert names(evaluate(ctx, variable_values={"dml": AnyData.convert_object(lcr())})[0]) == ["SLUICE.R0"]


def test_values_that_do_not_fit_the_evaluation_context_are_oracles_errors(ctx):
    """DBMS_RULE.EVALUATE checks what the client sends against the evaluation context
    (Oracle's messages: ORA-25438 "invalid variable name" -- one of the variable values
    had an invalid name; ORA-25439 "duplicate variable value for variable"; ORA-25465
    "variable name not specified"; ORA-25449 for an attribute value's variable; ORA-25436 /
    ORA-25440 "invalid table alias" for a table / column value; ORA-25437 "duplicate table
    value for table alias"; ORA-25463 / ORA-25467 "table alias not specified"; ORA-25464
    "ROWID not specified").  Sluice ignored unknown variables and aliases (a typo made every
    rule reading the variable a maybe rule), kept the last of two values, and let a
    non-list argument out as a TypeError."""
    from sluice.errors import InterfaceError
    from sluice.rules.engine.types import TableAlias
    ctx.rule_adm.create_evaluation_context("t", table_aliases=[TableAlias("tab", "hr.t")],
                                           variable_types=[VariableType("M", "NUMBER")])
    ctx.rule_adm.create_rule_set("trs", "t")
    ctx.rule_adm.create_rule("tr", "tab.x = 1 AND :m = 1")
    ctx.rule_adm.add_rule("tr", "trs")
    ctx.rules(":m = 5")

    def code(rule_set="rs", context="ctx_vars", **kw):
        with pytest.raises(DatabaseError) as e:
            ctx.rule.evaluate(rule_set, context, **kw)
        return e.value.code, str(e.value)

    assert code(variable_values={"mm": 5}) == (25438, "ORA-25438: invalid variable name: mm")
    assert code(variable_values=[VariableValue("M", AnyData.of(5)), VariableValue(":m", AnyData.of(6))]) == \
        (25439, "ORA-25439: duplicate variable value for variable: M")
    assert code(variable_values=[VariableValue(None, AnyData.of(5))])[0] == 25465
    assert code(attribute_values={"q.x": 1}) == (25449, "ORA-25449: invalid variable name: q")
    assert code("trs", "t", table_values={"tub": {"x": 1}}) == (25436, "ORA-25436: invalid table alias: tub")
    assert code("trs", "t", table_values=[TableValue("tab", {"x": 1}), TableValue("TAB", {"x": 2})]) == \
        (25437, "ORA-25437: duplicate table value for table alias: TAB")
    assert code("trs", "t", table_values=[TableValue(None, {"x": 1})])[0] == 25463
    assert code("trs", "t", table_values=[TableValue("tab", None)]) == \
        (25464, "ORA-25464: ROWID not specified for table alias: TAB")
    assert code("trs", "t", column_values={"tub": {"x": 1}}) == (25440, "ORA-25440: invalid table alias: tub")
    assert code("trs", "t", column_values=[ColumnValue(None, "x", AnyData.of(1))])[0] == 25467
    # Python's mapping forms: a misuse is an InterfaceError (was TypeError / ValueError /
    # AttributeError from inside the engine)
    for kw in (dict(variable_values=5), dict(attribute_values={"p": 1}), dict(attribute_values={("p",): 1})):
        with pytest.raises(InterfaceError):
            ctx.rule.evaluate("rs", "ctx_vars", **kw)
    with pytest.raises(InterfaceError):
        ctx.rule.evaluate("trs", "t", column_values={"tab": 5})
    # what fits still evaluates
    assert names(evaluate(ctx, variable_values=[VariableValue(":m", AnyData.of(5))])[0]) == ["SLUICE.R0"]
    assert names(ctx.rule.evaluate("trs", "t", variable_values={"m": 1},
                                   column_values=[ColumnValue("TAB", "x", AnyData.of(1))])[0]) == ["SLUICE.TR"]
