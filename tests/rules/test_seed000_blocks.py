"""Seed 000's DBMS_RULE_ADM blocks run verbatim through ``sluice sql``, and the rule
sets they build evaluate as the seed says (acceptance 3)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.plsql import execute
from sluice.streams import DDLLCR, RowLCR, evaluate_rule_sets
from sluice.streams.lcr import COMPATIBLE_10_1, COMPATIBLE_10_2, COMPATIBLE_9_2

from tests.plsql.test_plsql_seed000 import BLOCKS, SEED, TYPO_BLOCK as TYPO  # one block splitter

TEXT = SEED.read_text()
RULE_ADM_BLOCKS = sorted(n for n, b in BLOCKS.items() if "DBMS_RULE_ADM" in b)
FIXED_1198 = BLOCKS[TYPO].replace("DDL_FAST_EVALUATION_FUNCTION'));", "DDL_FAST_EVALUATION_FUNCTION'),")
CREATE_TYPE = TEXT[TEXT.index("CREATE TYPE strmadmin.region_pri_msg AS OBJECT("):]
CREATE_TYPE = CREATE_TYPE[:CREATE_TYPE.index("\n/\n")] + "\n/\n"


def sql(dsn: str, text: str):
    return CliRunner().invoke(main, ["--dsn", dsn, "sql", text], catch_exceptions=False)


def lcr(owner, name, command="INSERT", tag=None, source="dbs1.net", old=None, new=None):
    return RowLCR.construct(source_database_name=source, command_type=command, object_owner=owner,
                            object_name=name, tag=tag, old_values=old, new_values=new)


def ddl(owner, name, object_type="TABLE", command="ALTER TABLE", base=(None, None), tag=None,
        source="dbs1.net"):
    return DDLLCR.construct(source_database_name=source, command_type=command, object_owner=owner,
                            object_name=name, object_type=object_type, ddl_text=f"{command} …",
                            base_table_owner=base[0], base_table_name=base[1], tag=tag)


def test_the_seed_prints_five_rule_adm_blocks():
    assert RULE_ADM_BLOCKS == [1198, 1303, 1450, 1461, 1511]


@pytest.fixture
def seeded(dsn):
    """Every DBMS_RULE_ADM block of the seed, run through `sluice sql` in seed order."""
    for text in (FIXED_1198, CREATE_TYPE, BLOCKS[1303], BLOCKS[1450]):
        r = sql(dsn, text)
        assert r.exit_code == 0 and "PL/SQL procedure successfully completed." in r.output \
            or "Type created." in r.output, r.output
    # 1461 creates a rule with 1450's name: Oracle says ORA-24146 until the first is dropped
    r = sql(dsn, BLOCKS[1461])
    assert r.exit_code == 1 and "ORA-24146: rule STRMADMIN.DML_COMPAT_9_2 already exists" in r.output
    r = sql(dsn, "BEGIN DBMS_RULE_ADM.DROP_RULE('strmadmin.dml_compat_9_2'); END;")
    assert r.exit_code == 0, r.output
    for n in (1461, 1511):
        r = sql(dsn, BLOCKS[n])
        assert r.exit_code == 0 and "PL/SQL procedure successfully completed." in r.output, r.output
    conn = sluice.connect(dsn)
    yield conn
    conn.close()


def test_typo_block_is_rejected_with_ora_06550_and_stores_nothing(dsn):
    r = sql(dsn, BLOCKS[TYPO])
    assert r.exit_code == 1
    assert "ORA-06550: line 13, column 63:" in r.output and "PLS-00103" in r.output
    with sluice.connect(dsn) as conn:
        assert conn.rule_adm._catalog().stored_contexts == frozenset()


def test_corrected_typo_block_installs_the_streams_evaluation_context(dsn):
    assert sql(dsn, FIXED_1198).exit_code == 0
    with sluice.connect(dsn) as conn:
        ctx = conn.rule_adm._catalog().context("SYS.STREAMS$_EVALUATION_CONTEXT")
        assert [(v.name, v.type) for v in ctx.variables] == [
            ("DML", "SYS.LCR$_ROW_RECORD"), ("DDL", "SYS.LCR$_DDL_RECORD"), (None, "SYS.ANYDATA")]
        assert ctx.evaluation_function == "SYS.DBMS_STREAMS_INTERNAL.EVALUATION_CONTEXT_FUNCTION"
        assert "SYS.STREAMS$_EVALUATION_CONTEXT" in conn.rule_adm._catalog().stored_contexts
    r = sql(dsn, FIXED_1198)    # installing it twice is ORA-24145, as in Oracle
    assert r.exit_code == 1 and "ORA-24145" in r.output


def test_hr_not_regions_rules(seeded):
    """Seed: TRUE for all DML and DDL changes to hr objects except the hr.regions table."""
    def hits(message, variable):
        true_rules, _ = seeded.rule.evaluate(
            rule_set_name="strmadmin.complex_rules",
            evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT",
            variable_values={variable: message})
        return [h.rule_name for h in true_rules]
    assert hits(lcr("HR", "EMPLOYEES"), "dml") == ["STRMADMIN.HR_NOT_REGIONS_DML"]
    assert hits(lcr("HR", "REGIONS"), "dml") == []
    assert hits(lcr("OE", "ORDERS"), "dml") == []
    assert hits(lcr("HR", "EMPLOYEES", tag=b"\x01"), "dml") == []
    assert hits(ddl("HR", "EMPLOYEES"), "ddl") == ["STRMADMIN.HR_NOT_REGIONS_DDL"]
    assert hits(ddl(None, "LOC_IX", "INDEX", "CREATE INDEX", base=("HR", "LOCATIONS")), "ddl") == \
        ["STRMADMIN.HR_NOT_REGIONS_DDL"]
    assert hits(ddl("HR", "REGIONS"), "ddl") == []
    # a Streams client gets the same answers from the one rule-set function
    assert evaluate_rule_sets(seeded, lcr("HR", "EMPLOYEES"), "strmadmin.complex_rules").perform
    assert not evaluate_rule_sets(seeded, lcr("HR", "REGIONS"), "strmadmin.complex_rules").perform


def test_rules_inherit_the_rule_sets_evaluation_context(seeded):
    catalog = seeded.rule_adm._catalog()
    assert catalog.rule("STRMADMIN.HR_NOT_REGIONS_DML").evaluation_context is None
    assert catalog.rule_set("STRMADMIN.COMPLEX_RULES").evaluation_context == \
        "SYS.STREAMS$_EVALUATION_CONTEXT"


def test_compatibility_rules(seeded):
    """1450's rule in a negative set discards LCRs a 9.2 database cannot take; 1461's in
    a positive set processes what 10.1 can take and discards the rest."""
    r = sql(seeded.dsn, "BEGIN DBMS_RULE_ADM.CREATE_RULE(rule_name => 'strmadmin.dml_compat_gt_9_2', "
                        "condition => ':dml.GET_COMPATIBLE() > DBMS_STREAMS.COMPATIBLE_9_2()'); END;")
    assert r.exit_code == 0, r.output
    adm = seeded.rule_adm
    for name, rule in (("strmadmin.neg", "strmadmin.dml_compat_gt_9_2"),
                       ("strmadmin.pos", "strmadmin.dml_compat_9_2")):
        adm.create_rule_set(name, "SYS.STREAMS$_EVALUATION_CONTEXT")
        adm.add_rule(rule, name)
    plain = lcr("HR", "T", new={"a": 1})
    binary_double = lcr("HR", "T", new={"a": sluice.streams.AnyData.convert_bdouble(1.0)})
    extra = lcr("HR", "T", new={"a": 1})
    extra.set_extra_attribute("username", "HR")
    assert [m.get_compatible() for m in (plain, binary_double, extra)] == \
        [COMPATIBLE_9_2, COMPATIBLE_10_1, COMPATIBLE_10_2]
    assert [evaluate_rule_sets(seeded, m, None, "strmadmin.neg").perform
            for m in (plain, binary_double, extra)] == [True, False, False]
    assert [evaluate_rule_sets(seeded, m, "strmadmin.pos").perform
            for m in (plain, binary_double, extra)] == [True, True, False]
    # DDL LCRs are always 9.2-compatible
    assert evaluate_rule_sets(seeded, ddl("HR", "T"), None, "strmadmin.neg").perform


def test_message_rule_evaluation_context(seeded):
    """1303 builds the context ADD_MESSAGE_RULE would; the seed's generated condition uses it."""
    seeded.rule_adm.create_rule(
        "strmadmin.rule_europe", ":\"VAR$_52\".region = 'EUROPE' AND  :\"VAR$_52\".priority = '1'",
        "STRMADMIN.EVAL_CTX$_99")
    seeded.rule_adm.create_rule_set("strmadmin.msg_client")
    seeded.rule_adm.add_rule("strmadmin.rule_europe", "strmadmin.msg_client")
    msg_type = seeded.gettype("strmadmin.region_pri_msg")
    europe = msg_type.newobject()
    europe.REGION, europe.PRIORITY = "EUROPE", 1
    true_rules, _ = seeded.rule.evaluate(rule_set_name="strmadmin.msg_client",
                                         evaluation_context="STRMADMIN.EVAL_CTX$_99",
                                         variable_values={"VAR$_52": europe})
    assert [h.rule_name for h in true_rules] == ["STRMADMIN.RULE_EUROPE"]
    europe.PRIORITY = 2
    assert not evaluate_rule_sets(seeded, europe, "strmadmin.msg_client").perform


def test_blocks_also_run_through_the_interpreter(conn):
    """The same blocks through sluice.plsql.execute on one connection."""
    for text in (FIXED_1198, CREATE_TYPE.rstrip().rstrip("/"), BLOCKS[1303], BLOCKS[1450],
                 "BEGIN DBMS_RULE_ADM.DROP_RULE('strmadmin.dml_compat_9_2'); END;",
                 BLOCKS[1461], BLOCKS[1511]):
        execute(conn, text)
    catalog = conn.rule_adm._catalog()
    assert [m.rule for m in catalog.members_of("STRMADMIN.COMPLEX_RULES")] == [
        "STRMADMIN.HR_NOT_REGIONS_DML", "STRMADMIN.HR_NOT_REGIONS_DDL"]
    assert catalog.rule("STRMADMIN.DML_COMPAT_9_2").condition == \
        ":dml.GET_COMPATIBLE() <= DBMS_STREAMS.COMPATIBLE_10_1()"
