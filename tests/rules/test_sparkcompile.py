"""The Spark compiler at volume: hundreds of LCR rules over one DataFrame, in chunks.

One test, one Spark job: 360 rules (seed 000's table, schema, subset and
negative rules, generated system-style table rules) over 500 LCRs, evaluated
with ``fired_rules`` and ``rule_outcomes`` while whole-stage code generation
may not fall back (``spark.sql.codegen.fallback=false``), so a generated
method past 64 KB fails the test instead of silently running interpreted.
"""

from __future__ import annotations

import pytest

from sluice.errors import DatabaseError
from sluice.rules import DictResolver, compile_condition
from sluice.rules.compile.typed.ir import NotCompilable
from sluice.rules.compile.typed.lcrschema import LCR_COLUMNS, LcrResolver, lcr_row, spark_schema

from .world import build_lcr, corpus


def _lcrs(n: int) -> list:
    owners, commands = ["HR", "OE", "SH", None], ["INSERT", "UPDATE", "DELETE"]
    lcrs = []
    for i in range(n):
        region = None if i % 13 == 0 else (i % 5 if i % 7 else "x")
        common = {"source_database_name": "DBS1.NET" if i % 9 else "DBS2.NET",
                  "object_owner": owners[i % 4] or "HR", "object_name": f"T{i % 40}" if i % 6 else "REGIONS",
                  "tag": None if i % 5 else bytes([i % 3 + 1]), "transaction_id": f"{i}.0.1",
                  "scn": i, "commit_scn": i + 1}
        if i % 11 == 0:
            lcrs.append(build_lcr("DDL", {**common, "command_type": "CREATE TABLE", "object_type": "TABLE",
                                          "ddl_text": "CREATE TABLE t (x NUMBER)", "base_table_owner": owners[i % 4],
                                          "base_table_name": f"T{i % 40}"}))
            continue
        command = commands[i % 3]
        old = None if command == "INSERT" else {"REGION_ID": region, "NAME": f"o{i}"}
        new = None if command == "DELETE" else ({"NAME": f"n{i}"} if i % 4 == 0 else {"REGION_ID": region})
        lcrs.append(build_lcr("ROW", {**common, "command_type": command, "old_values": old, "new_values": new}))
    return lcrs


def _rules() -> dict[str, str]:
    rules = {f"seed {label}": text for label, text in corpus.SEED_RULES
             if "dml" in text.lower() or "ddl" in text.lower()}
    rules.pop("seed function of :dml")  # ORA-00904 in every compiler
    for i in range(300):
        owner = ["HR", "OE", "SH"][i % 3]
        rules[f"table {i}"] = (f"((:dml.get_object_owner() = '{owner}' and :dml.get_object_name() = "
                               f"'T{i % 40}')) and :dml.is_null_tag() = 'Y' and "
                               f":dml.get_source_database_name() = 'DBS1.NET'")
    for i, text in enumerate(corpus.LCR_CONDITIONS):
        rules[f"lcr {i}"] = text
    return rules


def test_schema_is_defined_in_one_place():
    schema = spark_schema()
    assert schema.fieldNames() == list(LCR_COLUMNS)
    assert schema["new_values"].dataType.simpleString() == "map<string,string>"
    assert schema["tag"].dataType.simpleString() == "binary"


def test_hundreds_of_rules_in_one_job_agree_with_python(spark):
    from sluice.rules.compile.spark.compiler import compile_spark_rules, fired_rules, rule_outcomes

    lcrs, texts = _lcrs(500), _rules()
    rows = [lcr_row(lcr) for lcr in lcrs]
    assert len(texts) >= 330
    columns, refused = compile_spark_rules(texts, LcrResolver())
    assert refused == {}
    df = spark.createDataFrame([tuple(r[c] for c in LCR_COLUMNS) for r in rows], spark_schema())
    spark.conf.set("spark.sql.codegen.fallback", "false")
    try:
        result = df.select("transaction_id", fired_rules(columns, chunk_size=40).alias("fired"),
                           rule_outcomes(list(columns.values())).alias("outcomes")).collect()
    finally:
        spark.conf.unset("spark.sql.codegen.fallback")
    by_txn = {r["transaction_id"]: r for r in result}
    compiled = {name: compile_condition(text, DictResolver()) for name, text in texts.items()}
    for lcr, row in zip(lcrs, rows):
        ctx = {"DML": lcr if row["lcr_kind"] == "ROW" else None,
               "DDL": lcr if row["lcr_kind"] == "DDL" else None, "LCR": lcr}
        expected = {name: _outcome(rule, ctx) for name, rule in compiled.items()}
        got = by_txn[row["transaction_id"]]
        assert dict(zip(texts, got["outcomes"])) == expected
        assert got["fired"] == [name for name, value in expected.items() if value is True]


def _outcome(rule, ctx):
    try:
        return rule(ctx)
    except DatabaseError:  # a rule set treats the rule as NULL; Spark's Column is NULL
        return None


def test_lcr_members_outside_the_schema_are_not_compilable(spark):
    from sluice.rules.compile.spark.compiler import compile_spark

    for text in [":dml.get_extra_attribute('ROW_ID') IS NULL", ":dml.get_value('NEW', :col) IS NULL",
                 ":dml.get_value('NEW', 'A').AccessObject() IS NULL", ":dml = 1",
                 "TO_DATE(:dml.get_object_name()) IS NULL", "ROUND(:dml.get_scn(), :dml.get_compatible()) = 1"]:
        with pytest.raises(NotCompilable):
            compile_spark(text, LcrResolver())
