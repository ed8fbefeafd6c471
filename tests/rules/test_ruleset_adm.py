"""DBMS_RULE_ADM: rules, rule sets, evaluation contexts; errors at creation store nothing."""

from __future__ import annotations

import pytest

import sluice
from sluice.errors import DatabaseError, InterfaceError
from sluice.plsql import execute
from sluice.rules.engine.anydata import AnyData
from sluice.rules.engine.types import NVList, TableAlias, VariableType
from sluice.streams import RowLCR

EC = "SYS.STREAMS$_EVALUATION_CONTEXT"


def code_of(call) -> tuple[int, str]:
    with pytest.raises(DatabaseError) as e:
        call()
    return e.value.code, str(e.value)


def lcr(owner="HR", name="EMPLOYEES", **kw):
    return RowLCR.construct(source_database_name="dbs1.net", command_type="INSERT",
                            object_owner=owner, object_name=name, **kw)


def catalog(conn):
    return conn.rule_adm._catalog()


@pytest.mark.parametrize("condition, cause", [
    (":dml.get_object_owner( = 'HR'", "ORA-00936"),                  # malformed
    (":dml.get_object_owner() = 'HR' AND", "ORA-00936"),
    ("(:dml.is_null_tag() = 'Y'", "ORA-00907"),
    (":m = 5", 'ORA-00904: "M": invalid identifier'),                 # unknown variable
    (":dml.get_objekt_owner() = 'HR'", 'ORA-00904: "GET_OBJEKT_OWNER"'),  # unknown member
    (":dml.get_base_table_owner() = 'HR'", "ORA-00904"),             # a DDL LCR member on :dml
    (":ddl.get_value('NEW', 'X') IS NULL", "ORA-00904"),
    (":dml.owner = 'HR'", "ORA-00904"),                              # LCRs have no attributes
    (":dml.get_object_owner('x') = 'HR'", "ORA-00939"),              # argument counts
    (":dml.get_value('NEW') IS NULL", "ORA-00938"),
    (":dml.get_value('NEW', '\"X\"') = 5", "ORA-00932"),              # ANYDATA is no NUMBER
    (":dml.get_tag() = 5", "ORA-00932"),                             # RAW vs NUMBER
    (":dml.get_compatible() = 'abc'", "ORA-01722"),                  # literal cannot convert
    (":dml.get_tag() = HEXTORAW('0G')", "ORA-01465"),
    (":dml.get_scn() + :dml.get_tag() > 1", "ORA-00932"),
    ("UPPER(:dml) = 'X'", "ORA-00932"),
    ("my_function(:dml) = 'Y'", 'ORA-00904: "MY_FUNCTION"'),
    ("tab.col = 1", "ORA-00904"),                                    # no table aliases
])
def test_bad_conditions_are_refused_at_creation_and_nothing_is_stored(conn, condition, cause):
    code, message = code_of(lambda: conn.rule_adm.create_rule("r1", condition, EC))
    assert code == 25448 and message.startswith("ORA-25448: rule SLUICE.R1 has errors\n")
    assert cause in message
    assert catalog(conn).rules == {}
    conn.rule_adm.create_rule("r1", ":dml.get_object_owner() = 'HR'", EC)   # the name is free
    assert list(catalog(conn).rules) == ["SLUICE.R1"]


def test_null_condition(conn):
    assert code_of(lambda: conn.rule_adm.create_rule("r1", "  ", EC))[0] == 936
    assert code_of(lambda: conn.rule_adm.create_rule("r1", None))[0] == 936


def test_a_rule_without_context_is_checked_when_added(conn):
    adm = conn.rule_adm
    adm.create_rule("r_m", ":m IS NULL")                  # no context: only syntax is checked
    adm.create_rule_set("rs", EC)
    code, message = code_of(lambda: adm.add_rule("r_m", "rs"))
    assert code == 24172 and "ORA-24172: rule set SLUICE.RS has errors" in message and "ORA-00904" in message
    assert catalog(conn).members_of("SLUICE.RS") == []
    adm.create_rule_set("rs_none")
    assert code_of(lambda: adm.add_rule("r_m", "rs_none"))[0] == 24151


def test_duplicates_and_unknown_names(conn):
    adm = conn.rule_adm
    adm.create_rule("r", ":dml.is_null_tag() = 'Y'", EC)
    adm.create_rule_set("rs", EC)
    adm.add_rule("r", "rs")
    cases = [
        (lambda: adm.create_rule("r", ":dml.is_null_tag() = 'Y'", EC), 24146),
        (lambda: adm.create_rule_set("RS"), 24153),
        (lambda: adm.create_evaluation_context(EC), 24145) if False else
        (lambda: adm.create_rule("r2", ":dml.is_null_tag() = 'Y'", "nope"), 24150),
        (lambda: adm.create_rule_set("rs2", "nope"), 24150),
        (lambda: adm.add_rule("r", "rs"), 24154),
        (lambda: adm.add_rule("nope", "rs"), 24147),
        (lambda: adm.add_rule("r", "nope"), 24141),
        (lambda: adm.remove_rule("r", "rs", EC), 24155),
        (lambda: adm.drop_rule("nope"), 24147),
        (lambda: adm.drop_rule_set("nope"), 24141),
        (lambda: adm.drop_evaluation_context("nope"), 24150),
        (lambda: adm.drop_evaluation_context(EC), 24150),   # built in: cannot be dropped
        (lambda: adm.alter_rule("nope", "1 = 1"), 24147),
        (lambda: adm.create_rule("r@dblink", "1 = 1"), 904),
    ]
    for call, code in cases:
        assert code_of(call)[0] == code


def test_a_rule_can_be_in_a_set_once_per_evaluation_context(conn):
    adm = conn.rule_adm
    adm.create_evaluation_context("ctx2", variable_types=[VariableType("DML", "SYS.LCR$_ROW_RECORD")])
    adm.create_rule("r", ":dml.is_null_tag() = 'Y'")
    adm.create_rule_set("rs", EC)
    adm.add_rule("r", "rs")
    adm.add_rule("r", "rs", "ctx2")
    assert [m.evaluation_context for m in catalog(conn).members_of("SLUICE.RS")] == [None, "SLUICE.CTX2"]
    adm.remove_rule("r", "rs", "ctx2")
    assert [m.evaluation_context for m in catalog(conn).members_of("SLUICE.RS")] == [None]
    adm.add_rule("r", "rs", "ctx2")
    adm.remove_rule("r", "rs", all_evaluation_contexts=True)
    assert catalog(conn).members_of("SLUICE.RS") == []


def test_drop_rule_with_dependents(conn):
    adm = conn.rule_adm
    adm.create_rule("r", ":dml.is_null_tag() = 'Y'", EC)
    adm.create_rule_set("rs", EC)
    adm.add_rule("r", "rs")
    assert code_of(lambda: adm.drop_rule("r"))[0] == 24148
    adm.drop_rule("r", force=True)
    assert catalog(conn).rules == {} and catalog(conn).members_of("SLUICE.RS") == []


def test_drop_rule_set_with_delete_rules_keeps_shared_rules(conn):
    adm = conn.rule_adm
    for r in ("only_here", "shared"):
        adm.create_rule(r, ":dml.is_null_tag() = 'Y'", EC)
    for s in ("a", "b"):
        adm.create_rule_set(s, EC)
    adm.add_rule("only_here", "a")
    adm.add_rule("shared", "a")
    adm.add_rule("shared", "b")
    adm.drop_rule_set("a", delete_rules=True)
    assert sorted(catalog(conn).rules) == ["SLUICE.SHARED"]
    assert "SLUICE.A" not in catalog(conn).rule_sets
    adm.drop_rule_set("b")
    assert sorted(catalog(conn).rules) == ["SLUICE.SHARED"]


def test_alter_rule(conn):
    adm = conn.rule_adm
    adm.create_rule("r", ":dml.get_object_owner() = 'HR'", EC, NVList({"k": "v"}), "first")
    adm.create_rule_set("rs", EC)
    adm.add_rule("r", "rs")
    code, message = code_of(lambda: adm.alter_rule("r", ":dml.nope() = 1"))
    assert code == 25448 and "ORA-00904" in message
    assert catalog(conn).rule("SLUICE.R").condition == ":dml.get_object_owner() = 'HR'"
    adm.alter_rule("r", ":dml.get_object_owner() = 'OE'", rule_comment="second")
    rule = catalog(conn).rule("SLUICE.R")
    assert (rule.condition, rule.comment, rule.action_context) == (
        ":dml.get_object_owner() = 'OE'", "second", NVList({"k": "v"}))
    adm.alter_rule("r", remove_action_context=True, remove_rule_comment=True)
    rule = catalog(conn).rule("SLUICE.R")
    assert rule.action_context is None and rule.comment is None
    adm.alter_rule("r", remove_evaluation_context=True)  # inherits the rule set's from now on
    assert catalog(conn).rule("SLUICE.R").evaluation_context is None
    hits, _ = conn.rule.evaluate("rs", EC, variable_values={"dml": lcr("OE")})
    assert [h.rule_name for h in hits] == ["SLUICE.R"]


def test_evaluation_context_definition_errors(conn):
    adm = conn.rule_adm
    dml = VariableType("DML", "SYS.LCR$_ROW_RECORD")
    cases = [
        (dict(variable_types=[dml, VariableType("dml", "NUMBER")]), 24157),
        (dict(table_aliases=[TableAlias("t", "a"), TableAlias("T", "b")]), 24156),
        (dict(variable_types=[VariableType("X", "NO_SUCH_TYPE")]), 902),
        (dict(variable_types=[VariableType("X", None)]), 902),
        (dict(variable_types=[VariableType("X", "NUMBER", "scott.no_fn")]), 904),
        (dict(variable_types=[VariableType("X", "NUMBER", None, "SYS.DBMS_STREAMS_INTERNAL.NOPE")]), 904),
        (dict(evaluation_function="nope"), 904),
    ]
    for kwargs, code in cases:
        assert code_of(lambda: adm.create_evaluation_context("ctx", **kwargs))[0] == code
    assert catalog(conn).stored_contexts == frozenset()
    with pytest.raises(InterfaceError):
        adm.create_evaluation_context("ctx", variable_types=["DML"])


def test_alter_and_drop_evaluation_context(conn):
    adm = conn.rule_adm
    adm.create_evaluation_context("ctx", variable_types=[VariableType("M", "NUMBER")],
                                  evaluation_context_comment="c")
    adm.create_rule("r", ":m = 1", "ctx")
    code, message = code_of(lambda: adm.alter_evaluation_context("ctx", remove_variable_types=True))
    assert code == 25448 and 'ORA-00904: "M"' in message
    adm.alter_evaluation_context("ctx", variable_types=[VariableType("M", "NUMBER"),
                                                        VariableType("N", "VARCHAR2(10)")],
                                 remove_eval_context_comment=True)
    ctx = catalog(conn).context("SLUICE.CTX")
    assert [v.name for v in ctx.variables] == ["M", "N"] and ctx.comment is None
    assert code_of(lambda: adm.drop_evaluation_context("ctx"))[0] == 24152
    adm.drop_evaluation_context("ctx", force=True)
    assert catalog(conn).rule("SLUICE.R").evaluation_context is None
    assert "SLUICE.CTX" not in catalog(conn).contexts


def test_rules_are_shared_by_every_connection(conn, conn2):
    conn.rule_adm.create_rule_set("rs", EC)
    conn.rule_adm.create_rule("r", ":dml.get_object_owner() = 'HR'", EC)
    assert conn2.rule.evaluate("rs", EC, variable_values={"dml": lcr()}) == ([], [])
    conn.rule_adm.add_rule("r", "rs")           # the compiled rule set of conn2 is refreshed
    hits, _ = conn2.rule.evaluate("rs", EC, variable_values={"dml": lcr()})
    assert [h.rule_name for h in hits] == ["SLUICE.R"]


def test_rules_survive_reconnecting(dsn):
    with sluice.connect(dsn) as c:
        c.rule_adm.create_rule_set("rs", EC)
        c.rule_adm.create_rule("r", ":dml.get_object_owner() = 'HR'", EC,
                               NVList({"APPLY$_ENQUEUE": "strmadmin.q", "n": 5, "raw": b"\x01"}))
        c.rule_adm.add_rule("r", "rs")
    with sluice.connect(dsn) as c:
        (hit,), _ = c.rule.evaluate("rs", EC, variable_values={"dml": lcr()})
        ac = hit.rule_action_context
        assert ac.get_all_names() == ["APPLY$_ENQUEUE", "n", "raw"]
        assert ac.get_value("APPLY$_ENQUEUE") == AnyData("SYS.VARCHAR2", "strmadmin.q")
        assert ac.get_value("n").access_number() == 5 and ac.get_value("raw").access_raw() == b"\x01"


def test_nv_list():
    nv = NVList()
    nv.add_pair("a", 1)
    nv.add_pair("b", AnyData.convert_varchar2("x"))
    with pytest.raises(DatabaseError) as e:
        nv.add_pair("a", 2)
    assert e.value.code == 24160
    assert nv.get_value("a").access_number() == 1 and nv.get_value("zz") is None
    nv.remove_pair("a")
    assert nv.get_all_names() == ["b"] and len(nv) == 1
    # removing a name the list does not have: ORA-24161 (Oracle's message catalogue, the
    # partner of ADD_PAIR's ORA-24160); was silently nothing.  The list is unchanged.
    for absent in ("zz", "a", "B"):
        with pytest.raises(DatabaseError) as e:
            nv.remove_pair(absent)
        assert str(e.value) == f"ORA-24161: name {absent} does not exist in the name value pair list"
    assert nv.get_all_names() == ["b"]


def test_action_context_built_in_plsql(conn):
    execute(conn, """
    DECLARE
      ac SYS.RE$NV_LIST;
    BEGIN
      ac := SYS.RE$NV_LIST(NULL);
      ac.ADD_PAIR('APPLY$_ENQUEUE', ANYDATA.ConvertVarchar2('strmadmin.dest_q'));
      ac.ADD_PAIR('PRIORITY', ANYDATA.ConvertNumber(3));
      DBMS_RULE_ADM.CREATE_RULE(
        rule_name      => 'strmadmin.with_ac',
        condition      => ':dml.get_object_owner() = ''HR''',
        evaluation_context => 'SYS.STREAMS$_EVALUATION_CONTEXT',
        action_context => ac,
        rule_comment   => 'enqueue elsewhere');
    END;""")
    rule = catalog(conn).rule("STRMADMIN.WITH_AC")
    assert rule.action_context.get_value("APPLY$_ENQUEUE").access_varchar2() == "strmadmin.dest_q"
    assert rule.action_context.get_value("PRIORITY").access_number() == 3
    assert rule.comment == "enqueue elsewhere"


def test_plsql_reads_the_action_context_of_a_true_rule(conn):
    """The action context comes back with each TRUE rule (RE$RULE_HIT.rule_action_context,
    an RE$NV_LIST whose values are ANYDATA).  A PL/SQL client reads a value with ANYDATA's
    member functions (AccessVarchar2, AccessNumber, GetTypeName): PLS-00302 "component
    'ACCESSVARCHAR2' must be declared" before; Oracle's names are case-insensitive."""
    conn.rule_adm.create_rule_set("rs", EC)
    conn.rule_adm.create_rule("r", ":dml.get_object_owner() = 'HR'", action_context=NVList(
        {"APPLY$_ENQUEUE": AnyData.convert_varchar2("strmadmin.dest_q"), "PRIORITY": 3}))
    conn.rule_adm.add_rule("r", "rs")
    result = execute(conn, """
    DECLARE
      t SYS.RE$RULE_HIT_LIST;
      m SYS.RE$RULE_HIT_LIST;
      v ANYDATA;
    BEGIN
      DBMS_RULE.EVALUATE(rule_set_name => 'rs', evaluation_context => 'SYS.STREAMS$_EVALUATION_CONTEXT',
                         event_context => SYS.RE$NV_LIST(NULL), true_rules => t, maybe_rules => m);
      DBMS_OUTPUT.PUT_LINE(t.COUNT || ' ' || m.COUNT);
      DBMS_RULE.EVALUATE(rule_set_name => 'rs', evaluation_context => 'SYS.STREAMS$_EVALUATION_CONTEXT',
                         variable_values => SYS.RE$VARIABLE_VALUE_LIST(SYS.RE$VARIABLE_VALUE('DML', :lcr)),
                         true_rules => t, maybe_rules => m);
      v := t(1).rule_action_context.GET_VALUE('APPLY$_ENQUEUE');
      DBMS_OUTPUT.PUT_LINE(v.GetTypeName() || ' ' || v.AccessVarchar2());
      DBMS_OUTPUT.PUT_LINE(t(1).rule_action_context.get_value('PRIORITY').ACCESSNUMBER() + 1);
    END;""", {"lcr": lcr()})
    assert result.output == ["0 1", "SYS.VARCHAR2 strmadmin.dest_q", "4"]


def test_an_action_context_value_sluice_cannot_store_is_ora_25473(conn):
    """ORA-25473 "cannot store string in rule action context" (Oracle: LOBs, evolved
    ADTs; Sluice stores scalars only): an LCR in an action context was an InterfaceError
    with no code.  Nothing is created."""
    code, message = code_of(lambda: conn.rule_adm.create_rule(
        "r", ":dml.get_object_owner() = 'HR'", action_context=NVList({"A": 1, "B": lcr()})))
    assert (code, message) == (25473, "ORA-25473: cannot store SYS.LCR$_ROW_RECORD in rule action context")
    assert "SLUICE.R" not in catalog(conn).rules
    conn.rule_adm.create_rule("r", ":dml.get_object_owner() = 'HR'", action_context=NVList({"A": 1}))
    code, _ = code_of(lambda: conn.rule_adm.alter_rule("r", action_context=NVList({"B": lcr()})))
    assert code == 25473 and catalog(conn).rule("SLUICE.R").action_context == NVList({"A": 1})


def test_table_aliases(conn):
    adm = conn.rule_adm
    adm.create_evaluation_context("emp_ctx", table_aliases=[TableAlias("emp", "hr.employees")])
    adm.create_rule("rich", "emp.salary > 10000", "emp_ctx")
    adm.create_rule("bare", "salary > 10000 AND department_id = 50", "emp_ctx")
    adm.create_rule_set("rs", "emp_ctx")
    adm.add_rule("rich", "rs")
    adm.add_rule("bare", "rs")
    hits, maybe = conn.rule.evaluate("rs", "emp_ctx",
                                     column_values={"emp": {"salary": 20000, "department_id": 50}})
    assert [h.rule_name for h in hits] == ["SLUICE.RICH", "SLUICE.BARE"] and maybe == []
    hits, maybe = conn.rule.evaluate("rs", "emp_ctx", table_values={"emp": {"SALARY": 5}})
    assert hits == [] and maybe == []
    # no row at all: the table is undefined, so both rules might be TRUE
    hits, maybe = conn.rule.evaluate("rs", "emp_ctx")
    assert hits == [] and [h.rule_name for h in maybe] == ["SLUICE.RICH", "SLUICE.BARE"]
    adm.create_evaluation_context("two", table_aliases=[TableAlias("a", "t1"), TableAlias("b", "t2")])
    code, message = code_of(lambda: adm.create_rule("amb", "x = 1", "two"))
    assert code == 25448 and "ORA-00918" in message


def test_ddl_commits_the_open_transaction(conn):
    from tests.conftest import make_queue
    make_queue(conn, "RQ")
    conn.queue("RQ").enqone(conn.msgproperties(payload=b"x"))
    assert conn.transaction_in_progress
    conn.rule_adm.create_rule_set("rs", EC)
    assert not conn.transaction_in_progress
