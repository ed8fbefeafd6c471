"""The rule conditions seed 000 prints for DBMS_STREAMS_ADM and user rules, created
directly with DBMS_RULE_ADM, behave as the seed's examples say.

(DBMS_STREAMS_ADM itself arrives with the Streams issues; its blocks only show
which conditions it generates.)
"""

from __future__ import annotations

import pytest

from sluice.rules import parse_condition
from sluice.rules.engine.index import is_simple
from sluice.rules.engine.types import NVList
from sluice.streams import DDLLCR, RowLCR, evaluate_rule_sets

from tests.rules.rules_corpus import SEED_RULES

EC = "SYS.STREAMS$_EVALUATION_CONTEXT"

SEED = dict(SEED_RULES)   # the conditions as seed 000 prints them, shared with the corpus
GLOBAL_DML, GLOBAL_DDL = SEED["global dml"], SEED["global ddl"]
GLOBAL_TAGGED_DML = SEED["global dml, tagged"]
SCHEMA_DML, SCHEMA_DDL = SEED["schema dml"], SEED["schema ddl"]
TABLE_LOCATIONS_DML, TABLE_COUNTRIES_DDL = SEED["table dml"], SEED["table ddl"]
SUBSET_INSERT, SUBSET_UPDATE, SUBSET_DELETE = (SEED[f"subset {c}"] for c in ("insert", "update", "delete"))
NEG_JOB_HISTORY = SEED["table dml, negative"]
TAG_02_DML, TAG_02_DDL = SEED["and_condition dml"], SEED["and_condition ddl"]
INSERT_ONLY, NOT_DELETE_1, NOT_DELETE_2 = SEED["insert only"], SEED["insert or update"], SEED["except delete"]
LIKE_DML, LIKE_DDL = SEED["like job dml"], SEED["like job ddl"]
CASE_SENSITIVE = SEED["mixed case name"]

SYSTEM_CREATED = [GLOBAL_DML, GLOBAL_DDL, GLOBAL_TAGGED_DML, SCHEMA_DML, SCHEMA_DDL,
                  TABLE_LOCATIONS_DML, TABLE_COUNTRIES_DDL, NEG_JOB_HISTORY, INSERT_ONLY,
                  NOT_DELETE_1, NOT_DELETE_2, TAG_02_DML, TAG_02_DDL]


def dml(owner, name, command="INSERT", tag=None, source="dbs1.net", old=None, new=None):
    return RowLCR.construct(source_database_name=source, command_type=command, object_owner=owner,
                            object_name=name, tag=tag, old_values=old, new_values=new)


def ddl(owner, name, command="ALTER TABLE", object_type="TABLE", base=(None, None), tag=None):
    return DDLLCR.construct(source_database_name="dbs1.net", command_type=command,
                            object_owner=owner, object_name=name, object_type=object_type,
                            ddl_text=command, base_table_owner=base[0], base_table_name=base[1],
                            tag=tag)


@pytest.fixture
def ruleset(conn):
    """``ruleset(*conditions)`` -> the name of a rule set holding them (Streams context)."""
    counter = iter(range(1000))

    def make(*conditions, action_contexts=()):
        name = f"rs{next(counter)}"
        conn.rule_adm.create_rule_set(name, EC)
        for i, condition in enumerate(conditions):
            actx = action_contexts[i] if i < len(action_contexts) else None
            conn.rule_adm.create_rule(f"{name}_r{i}", condition, action_context=actx)
            conn.rule_adm.add_rule(f"{name}_r{i}", name)
        return name
    return make


def applies(conn, positive, message, negative=None):
    return evaluate_rule_sets(conn, message, positive, negative).perform


def test_every_printed_condition_parses_and_system_rules_are_simple():
    for condition in SYSTEM_CREATED:
        assert is_simple(parse_condition(condition)), condition
    for complex_condition in (SUBSET_INSERT, SUBSET_UPDATE, SUBSET_DELETE, LIKE_DML, LIKE_DDL):
        assert not is_simple(parse_condition(complex_condition))


def test_global_rules(conn, ruleset):
    rs = ruleset(GLOBAL_DML, GLOBAL_DDL)
    assert applies(conn, rs, dml("OE", "ORDERS")) and applies(conn, rs, ddl("SCOTT", "T"))
    assert not applies(conn, rs, dml("OE", "ORDERS", tag=b"\x01"))
    tagged = ruleset(GLOBAL_TAGGED_DML)    # include_tagged_lcr: every row LCR is TRUE
    assert applies(conn, tagged, dml("OE", "ORDERS", tag=b"\x01"))
    assert applies(conn, tagged, dml("OE", "ORDERS", source="x"))
    assert not applies(conn, tagged, ddl("SCOTT", "T"))


def test_schema_propagation_rules(conn, ruleset):
    rs = ruleset(SCHEMA_DML, SCHEMA_DDL)
    propagated = [dml("HR", "COUNTRIES"), ddl("HR", "LOC_CITY_IX", "ALTER INDEX", "INDEX"),
                  ddl("HR", "EMPLOYEES", "TRUNCATE TABLE"), ddl("HR", "COUNTRIES"),
                  ddl("HR", "UPDATE_JOB_HISTORY", "ALTER TRIGGER", "TRIGGER"),
                  ddl("HR", "CANDIDATES", "CREATE TABLE")] + [dml("HR", "CANDIDATES")] * 20
    assert all(applies(conn, rs, m) for m in propagated)
    # a DDL change by a user who does not own the object: GET_BASE_TABLE_OWNER matches
    assert applies(conn, rs, ddl(None, "X_IX", "CREATE INDEX", "INDEX", base=("HR", "JOBS")))
    assert not applies(conn, rs, dml("OE", "INVENTORIES"))
    assert not applies(conn, rs, dml("HR", "COUNTRIES", source="dbs2.net"))


def test_table_rules(conn, ruleset):
    rs = ruleset(TABLE_LOCATIONS_DML, TABLE_COUNTRIES_DDL)
    assert applies(conn, rs, dml("HR", "LOCATIONS"))
    assert applies(conn, rs, dml("HR", "LOCATIONS", "DELETE"))
    assert applies(conn, rs, ddl("HR", "COUNTRIES"))
    assert not applies(conn, rs, dml("HR", "EMPLOYEES"))
    assert not applies(conn, rs, dml("HR", "COUNTRIES", "UPDATE"))
    assert not applies(conn, rs, ddl("HR", "LOCATIONS"))


def region(command, old=None, new=None):
    return dml("HR", "REGIONS", command,
               old=None if old is ... else {"region_id": old, "region_name": "r"} if command != "INSERT" else None,
               new={"region_id": new, "region_name": "r"} if command != "DELETE" else None)


@pytest.fixture
def subset(conn, ruleset):
    migration = [NVList({"STREAMS$_ROW_SUBSET": "INSERT"}), None, NVList({"STREAMS$_ROW_SUBSET": "DELETE"})]
    rs = ruleset(SUBSET_INSERT, SUBSET_UPDATE, SUBSET_DELETE, action_contexts=migration)

    def fired(message):
        true_rules, maybe_rules = conn.rule.evaluate(rule_set_name=rs, evaluation_context=EC,
                                                     variable_values={"dml": message})
        assert maybe_rules == []
        return [h.rule_name.rsplit("_", 1)[1] for h in true_rules]
    fired.rs = rs
    return fired


@pytest.mark.parametrize("message, rules", [
    (region("INSERT", new=2), ["R0"]),                  # insert of region 2: applied
    (region("INSERT", new=3), []),                       # not 2: filtered out
    (region("INSERT", new=None), []),                    # NULL: filtered out
    (region("UPDATE", old=4, new=2), ["R0"]),            # 4 -> 2: becomes an insert
    (region("UPDATE", old=None, new=2), ["R0"]),         # NULL -> 2: becomes an insert
    (region("UPDATE", old=2, new=2), ["R1"]),            # stays 2: an update
    (region("UPDATE", old=2, new=1), ["R2"]),            # 2 -> 1: becomes a delete
    (region("UPDATE", old=2, new=None), ["R2"]),         # 2 -> NULL: becomes a delete
    (region("UPDATE", old=1, new=1), []),                # never 2: ignored
    (region("DELETE", old=2), ["R2"]),
    (region("DELETE", old=5), []),
    (dml("HR", "EMPLOYEES", new={"region_id": 2}), []),
])
def test_subset_rules(subset, message, rules):
    assert subset(message) == rules


def test_subset_update_of_other_columns_reads_the_unchanged_region_id(subset):
    """New values of an update hold changed columns only; get_value('NEW', …) falls back."""
    message = dml("HR", "REGIONS", "UPDATE", old={"region_id": 2, "region_name": "a"},
                  new={"region_name": "b"})
    assert subset(message) == ["R1"]


def test_subset_rule_action_context_drives_row_migration(conn, subset):
    verdict = evaluate_rule_sets(conn, region("UPDATE", old=4, new=2), subset.rs)
    assert verdict.rule.rule_action_context.get_value("STREAMS$_ROW_SUBSET").access_varchar2() == "INSERT"


def test_negative_rule_set_example(conn, ruleset):
    positive, negative = ruleset(SCHEMA_DML), ruleset(NEG_JOB_HISTORY)
    for applied in (dml("HR", "DEPARTMENTS"), dml("HR", "EMPLOYEES", "UPDATE"),
                    dml("HR", "COUNTRIES", "DELETE")):
        assert applies(conn, positive, applied, negative)
    for command in ("INSERT", "UPDATE", "DELETE"):
        assert not applies(conn, positive, dml("HR", "JOB_HISTORY", command), negative)
    # include_tagged_lcr => TRUE: tagged job_history changes are discarded as well
    assert evaluate_rule_sets(conn, dml("HR", "JOB_HISTORY", tag=b"\x02"), None, negative).perform is False


def test_and_condition_on_the_tag(conn, ruleset):
    rs = ruleset(TAG_02_DML, TAG_02_DDL)
    assert applies(conn, rs, dml("HR", "DEPARTMENTS", tag=b"\x02"))
    assert not applies(conn, rs, dml("HR", "DEPARTMENTS", tag=b"\x03"))
    assert not applies(conn, rs, dml("HR", "DEPARTMENTS"))
    assert applies(conn, rs, ddl(None, "D_IX", "CREATE INDEX", "INDEX", base=("HR", "DEPARTMENTS"),
                                 tag=b"\x02"))


def test_rules_for_specific_operations(conn, ruleset):
    inserts = ruleset(INSERT_ONLY)
    assert applies(conn, inserts, dml("HR", "EMPLOYEES"))
    assert not applies(conn, inserts, dml("HR", "EMPLOYEES", "UPDATE"))
    for condition in (NOT_DELETE_1, NOT_DELETE_2):
        rs = ruleset(condition)
        assert [applies(conn, rs, dml("HR", "DEPARTMENTS", c)) for c in ("INSERT", "UPDATE", "DELETE")] \
            == [True, True, False]


def test_like_rules(conn, ruleset):
    rs = ruleset(LIKE_DML, LIKE_DDL)
    assert applies(conn, rs, dml("HR", "JOBS")) and applies(conn, rs, dml("HR", "JOB_HISTORY"))
    assert not applies(conn, rs, dml("HR", "EMPLOYEES"))
    assert applies(conn, rs, ddl("HR", "JOBS"))
    assert not applies(conn, rs, ddl("SCOTT", "JOBS"))


def test_object_names_are_case_sensitive(conn, ruleset):
    rs = ruleset(CASE_SENSITIVE)
    assert applies(conn, rs, dml("HR", "Regions")) and not applies(conn, rs, dml("HR", "REGIONS"))
