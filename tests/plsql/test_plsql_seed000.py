"""Every PL/SQL block printed in seed 000 (Streams 10.2, ch. 6 "How Rules Are Used
in Streams") runs verbatim, making exactly the calls its text says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sluice.errors import DatabaseError
from sluice.plsql import execute, split_script

from tests.plsql.plsql_fakes import Constructed, FakeConn

SEED = Path(__file__).resolve().parents[3] / "shared" / "seeds" / "000_c58e7ef949d95dc2.txt"
if not SEED.exists():                                   # the repository may move
    SEED = Path("/work/shared/seeds/000_c58e7ef949d95dc2.txt")


def seed_blocks() -> dict[int, str]:
    """Blocks keyed by the seed line their first line is on; a block ends before a
    line holding only '/'."""
    blocks, lines, start = {}, SEED.read_text().splitlines(), None
    for number, line in enumerate(lines, 1):
        if start is None and re.match(r"(BEGIN|DECLARE)\b", line):
            start = number
        elif start is not None and line.strip() == "/":
            blocks[start] = "\n".join(lines[start - 1:number - 1])
            start = None
    return blocks


BLOCKS = seed_blocks()
TYPO_BLOCK = 1198          # stray ");" in the SYS.STREAMS$_EVALUATION_CONTEXT example

SA, RA = "DBMS_STREAMS_ADM", "DBMS_RULE_ADM"
EXPECTED = {
    461: [(SA, "add_global_rules", dict(
        streams_type="capture", streams_name="capture", queue_name="streams_queue",
        include_dml=True, include_ddl=True, include_tagged_lcr=False, source_database=None,
        inclusion_rule=True))],
    504: [(SA, "add_global_rules", dict(
        streams_type="capture", streams_name="capture_002", queue_name="streams_queue",
        include_dml=True, include_ddl=True, include_tagged_lcr=True, source_database=None,
        inclusion_rule=True))],
    556: [(SA, "add_schema_propagation_rules", dict(
        schema_name="hr", streams_name="dbs1_to_dbs2", source_queue_name="streams_queue",
        destination_queue_name="streams_queue@dbs2.net", include_dml=True, include_ddl=True,
        include_tagged_lcr=False, source_database="dbs1.net", inclusion_rule=True))],
    626: [(SA, "add_table_rules", dict(
        table_name="hr.locations", streams_type="apply", streams_name="apply",
        queue_name="streams_queue", include_dml=True, include_ddl=False,
        include_tagged_lcr=False, source_database="dbs1.net", inclusion_rule=True))],
    652: [(SA, "add_table_rules", dict(
        table_name="hr.countries", streams_type="apply", streams_name="apply",
        queue_name="streams_queue", include_dml=False, include_ddl=True,
        include_tagged_lcr=False, source_database="dbs1.net", inclusion_rule=True))],
    725: [(SA, "add_subset_rules", dict(
        table_name="hr.regions", dml_condition="region_id=2", streams_type="apply",
        streams_name="apply", queue_name="streams_queue", include_tagged_lcr=False,
        source_database="dbs1.net"))],
    971: [(SA, "add_message_rule", dict(
        message_type="strmadmin.region_pri_msg",
        rule_condition=":msg.region = 'EUROPE' AND  :msg.priority = '1' ",
        streams_type="dequeue", streams_name="msg_client", queue_name="streams_queue",
        inclusion_rule=True))],
    995: [(SA, "add_message_rule", dict(
        message_type="strmadmin.region_pri_msg",
        rule_condition=":msg.region = 'AMERICAS' AND  :msg.priority = '2' ",
        streams_type="apply", streams_name="apply_msg", queue_name="streams_queue",
        inclusion_rule=True))],
    1069: [(SA, "add_schema_rules", dict(
        schema_name="hr", streams_type="apply", streams_name="apply",
        queue_name="streams_queue", include_dml=True, include_ddl=False,
        include_tagged_lcr=False, source_database="dbs1.net", inclusion_rule=True))],
    1095: [(SA, "add_table_rules", dict(
        table_name="hr.job_history", streams_type="apply", streams_name="apply",
        queue_name="streams_queue", include_dml=True, include_ddl=False,
        include_tagged_lcr=True, source_database="dbs1.net", inclusion_rule=False))],
    1153: [(SA, "add_table_rules", dict(
        table_name="hr.departments", streams_type="apply", streams_name="apply_02",
        queue_name="streams_queue", include_dml=True, include_ddl=True,
        include_tagged_lcr=True, source_database="dbs1.net", inclusion_rule=True,
        and_condition=":lcr.get_tag() = HEXTORAW('02')"))],
    1303: [(RA, "create_evaluation_context", dict(
        evaluation_context_name="STRMADMIN.EVAL_CTX$_99",
        variable_types=Constructed("SYS.RE$VARIABLE_TYPE_LIST", (Constructed(
            "SYS.RE$VARIABLE_TYPE", ("VAR$_52", "STRMADMIN.REGION_PRI_MSG",
                                     "SYS.DBMS_STREAMS_INTERNAL.MSG_VARIABLE_VALUE_FUNCTION",
                                     None)),)),
        evaluation_function=None))],
    1450: [(RA, "create_rule", dict(
        rule_name="strmadmin.dml_compat_9_2",
        condition=":dml.GET_COMPATIBLE() > DBMS_STREAMS.COMPATIBLE_9_2()"))],
    1461: [(RA, "create_rule", dict(
        rule_name="strmadmin.dml_compat_9_2",
        condition=":dml.GET_COMPATIBLE() <= DBMS_STREAMS.COMPATIBLE_10_1()"))],
    1511: [
        (RA, "create_rule_set", dict(rule_set_name="strmadmin.complex_rules",
                                     evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")),
        (RA, "create_rule", dict(
            rule_name="strmadmin.hr_not_regions_dml",
            condition=" (:dml.get_object_owner() = 'HR' AND NOT  :dml.get_object_name() = "
                      "'REGIONS') AND  :dml.is_null_tag() = 'Y' ")),
        (RA, "create_rule", dict(
            rule_name="strmadmin.hr_not_regions_ddl",
            condition=" ((:ddl.get_object_owner() = 'HR' OR  :ddl.get_base_table_owner() =  "
                      "     'HR') AND NOT  :ddl.get_object_name() = 'REGIONS') AND  "
                      ":ddl.is_null_tag() = 'Y' ")),
        (RA, "add_rule", dict(rule_name="strmadmin.hr_not_regions_dml",
                              rule_set_name="strmadmin.complex_rules")),
        (RA, "add_rule", dict(rule_name="strmadmin.hr_not_regions_ddl",
                              rule_set_name="strmadmin.complex_rules")),
    ],
}


def test_every_block_of_the_seed_is_covered():
    assert sorted(BLOCKS) == sorted([*EXPECTED, TYPO_BLOCK])


@pytest.mark.parametrize("line", sorted(EXPECTED))
def test_seed_block_makes_the_calls_its_text_says(line: int):
    conn = FakeConn()
    result = execute(conn, BLOCKS[line])
    assert result.kind == "block"
    assert len(conn.calls) == len(EXPECTED[line])
    for (pkg, proc, kwargs), (want_pkg, want_proc, want) in zip(conn.calls, EXPECTED[line]):
        assert (pkg, proc) == (want_pkg, want_proc)
        assert {k: kwargs[k] for k in want} == want


def test_evaluation_context_block_constructs_inner_then_outer_value():
    conn = FakeConn()
    execute(conn, BLOCKS[1303])
    assert conn.declared == ["SYS.RE$VARIABLE_TYPE_LIST"]
    assert [name for name, _ in conn.constructed] == ["SYS.RE$VARIABLE_TYPE",
                                                      "SYS.RE$VARIABLE_TYPE_LIST"]


def test_typo_block_is_rejected_where_oracle_would_reject_it():
    """Seed 000 line 1207 closes the RE$VARIABLE_TYPE_LIST with "));" one element too
    early; the third element then stands alone and its own "));" leaves a stray ")".
    Oracle rejects the block at compile time, so nothing may have been called."""
    conn = FakeConn()
    with pytest.raises(DatabaseError) as info:
        execute(conn, BLOCKS[TYPO_BLOCK])
    message = str(info.value)
    assert message.startswith('ORA-06550: line 13, column 63:\nPLS-00103: Encountered the '
                              'symbol ")" when expecting one of the following:')
    line13 = BLOCKS[TYPO_BLOCK].splitlines()[12]
    assert line13[62] == ")" and line13.endswith("'));")
    assert conn.calls == [] and conn.constructed == []


def test_typo_block_runs_once_the_stray_characters_are_fixed():
    fixed = BLOCKS[TYPO_BLOCK].replace(
        "DDL_FAST_EVALUATION_FUNCTION'));", "DDL_FAST_EVALUATION_FUNCTION'),")
    conn = FakeConn()
    execute(conn, fixed)
    (pkg, proc, kwargs), = conn.calls
    assert proc == "create_evaluation_context"
    assert kwargs["evaluation_function"] == "SYS.DBMS_STREAMS_INTERNAL.EVALUATION_CONTEXT_FUNCTION"
    variables = kwargs["variable_types"].args
    assert [v.args[0] for v in variables] == ["DML", "DDL", None]
    assert variables[2].args == (None, "SYS.ANYDATA", None,
                                 "SYS.DBMS_STREAMS_INTERNAL.ANYDATA_FAST_EVAL_FUNCTION")


def test_seed_create_type_statement():
    text = SEED.read_text()
    start = text.index("CREATE TYPE strmadmin.region_pri_msg AS OBJECT(")
    stmt = text[start:text.index("\n/\n", start)]
    conn = FakeConn()
    assert execute(conn, stmt).kind == "ddl"
    assert conn.types == [("STRMADMIN.REGION_PRI_MSG", "OBJECT",
                           [("region", "VARCHAR2(100)"), ("priority", "NUMBER"),
                            ("message", "VARCHAR2(3000)")], None, None, False)]


def test_split_script_recovers_the_seed_blocks():
    ordered = [BLOCKS[k] for k in sorted(BLOCKS)]
    script = "SET SERVEROUTPUT ON\n" + "\n/\n\n".join(ordered) + "\n/\n"
    assert split_script(script) == ["SET SERVEROUTPUT ON"] + [b.rstrip() for b in ordered]
