"""Seed 000's printed rule conditions, extracted from the seed text and compared with what
Sluice generates for the same call (whitespace normalised; the seed wraps lines)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sluice.streams.rulegen import (global_condition, schema_condition, subset_conditions,
                                    table_condition, with_and_condition)
from sluice.streams.rulegen.conditions import rewrite_bind

SEED = Path("/work/shared/seeds/000_c58e7ef949d95dc2.txt")
TEXT = SEED.read_text()


def printed(anchor: str, occurrence: int = 1) -> str:
    """The condition printed after the ``occurrence``-th ``anchor``: its lines up to a
    blank line, or — for one that starts with "(" — until its parentheses close."""
    at = -1
    for _ in range(occurrence):
        at = TEXT.index(anchor, at + 1)
    lines = TEXT[at + len(anchor):].split("\n")[1:]
    while not lines[0].strip():
        lines.pop(0)
    out, depth = [], 0
    for line in lines:
        if not line.strip():
            break
        out.append(line)
        depth += line.count("(") - line.count(")")
        if out[0].lstrip().startswith("(") and depth == 0:
            break
    return " ".join(out)


def norm(text: str) -> str:
    """Whitespace is not significant: runs become one space, none next to parentheses."""
    text = re.sub(r"\s+", " ", text.strip())
    return re.sub(r"\s*([()])\s*", r"\1", text)


SUBSET = subset_conditions("HR", "REGIONS", "region_id=2", {"REGION_ID": "NUMBER"}, False, "DBS1.NET")
DEPT_DML = table_condition("dml", "HR", "DEPARTMENTS", True, "DBS1.NET")
DEPT_DDL = table_condition("ddl", "HR", "DEPARTMENTS", True, "DBS1.NET")
AND = rewrite_bind(":lcr.get_tag() = HEXTORAW('02')", "lcr", "lcr")   # as the block passes it

CASES = [
    # (anchor in the seed, occurrence, what Sluice generates for that example's call)
    ("Here is the rule condition used by the row LCR rule:", 1, global_condition("dml", False, None)),
    ("Here is the rule condition used by the DDL LCR rule:", 1, global_condition("ddl", False, None)),
    ("the rule condition used by the row LCR rule is the following:", 1,
     global_condition("dml", True, None)),
    ("Here is the rule condition used by the DDL LCR rule:", 2, global_condition("ddl", True, None)),
    ("Here is the rule condition used by the row LCR rule:", 2,
     schema_condition("dml", "HR", False, "DBS1.NET")),
    ("Here is the rule condition used by the DDL LCR rule:", 3,
     schema_condition("ddl", "HR", False, "DBS1.NET")),
    ("The ADD_TABLE_RULES procedure creates a rule with a rule condition similar to the following:", 1,
     table_condition("dml", "HR", "LOCATIONS", False, "DBS1.NET")),
    ("The ADD_TABLE_RULES procedure creates a rule with a rule condition similar to the following:", 2,
     table_condition("ddl", "HR", "COUNTRIES", False, "DBS1.NET")),
    ("Here is the rule condition used by the insert rule:", 1, SUBSET["INSERT"]),
    ("Here is the rule condition used by the update rule:", 1, SUBSET["UPDATE"]),
    ("Here is the rule condition used by the delete rule:", 1, SUBSET["DELETE"]),
    ("The ADD_SCHEMA_RULES procedure creates a rule with a rule condition similar to the following:", 1,
     schema_condition("dml", "HR", False, "DBS1.NET")),
    ("The ADD_TABLE_RULES procedure creates a rule with a rule condition similar to the following:", 3,
     table_condition("dml", "HR", "JOB_HISTORY", True, "DBS1.NET")),
    ("The ADD_TABLE_RULES procedure creates a DML rule with the following condition:", 1,
     with_and_condition(DEPT_DML, AND, "dml")),
    ("It creates a DDL rule with the following condition:", 1, with_and_condition(DEPT_DDL, AND, "ddl")),
    ("The ADD_MESSAGE_RULE procedure creates a rule with a rule condition similar to the following:", 1,
     rewrite_bind(":msg.region = 'EUROPE' AND  :msg.priority = '1' ", "msg", '"VAR$_52"')),
    ("The ADD_MESSAGE_RULE procedure creates a rule with a rule condition similar to the following:", 2,
     rewrite_bind(":msg.region = 'AMERICAS' AND  :msg.priority = '2' ", "msg", '"VAR$_56"')),
]


@pytest.mark.parametrize("anchor,occurrence,generated", CASES,
                         ids=[f"{a[:40]}#{n}" for a, n, _ in CASES])
def test_generated_condition_is_the_seeds(anchor, occurrence, generated):
    assert norm(generated) == norm(printed(anchor, occurrence))


def test_every_printed_system_condition_is_compared():
    """The seed prints 17 generated conditions after these phrases; all are above."""
    phrases = ["Here is the rule condition used by the", "the rule condition used by the row LCR rule is",
               "creates a rule with a rule condition similar to the following",
               "creates a DML rule with the following condition", "creates a DDL rule with the following"]
    assert sum(TEXT.count(p) for p in phrases) == len(CASES)


def test_and_condition_rewrites_lcr_only_as_a_bind_variable():
    text = with_and_condition("(x)", ":LCR.get_tag() = ':lcr' and :lcrx = 1", "ddl")
    assert text == "(((x)) and (:ddl.get_tag() = ':lcr' and :lcrx = 1))"


def test_subset_with_several_columns_and_strings():
    cols = {"SALARY": "NUMBER", "JOB_ID": "VARCHAR2"}
    texts = subset_conditions("HR", "EMPLOYEES", " salary > 4000 and job_id = 'SA_MAN' ", cols, True, None)
    assert ":dml.get_value('NEW','\"JOB_ID\"').AccessVarchar2() = 'SA_MAN'" in texts["UPDATE"]
    assert "is_null_tag" not in texts["INSERT"] and "get_source_database_name" not in texts["DELETE"]
    assert "(:dml.get_value('OLD','\"SALARY\"').AccessNumber() IS NULL OR " \
           ":dml.get_value('OLD','\"JOB_ID\"').AccessVarchar2() IS NULL)" in texts["INSERT"]
