"""The Spark rule-set path (sparkindex) against the Python engine, in one Spark job.

A positive rule set of a few hundred rules of mixed shapes -- ADD_TABLE_RULES
style table rules, rules with a command type and ``get_tag() IS NULL``, schema
rules, DDL rules, LIKE and typed-value residues, rules with no selective key
(no join: guards alone), rules that raise on some LCRs, OR / IN / NOT rules --
a small negative rule set and an empty one, created through ``conn.rule_adm``.
A few thousand row and DDL LCRs go through ``SparkRuleSet.fired`` and
``streams_verdict`` in one action; each LCR's fired rules must be the Python
engine's TRUE rules (Streams semantics) -- with the default plan and with one
that pushes rules onto the candidate path -- and its verdict what
``evaluate_rule_sets`` decides.  How the rules are taken apart (joins,
classes, templates, complex rules) is checked without Spark.
"""

from __future__ import annotations

import random

import sluice
from sluice.rules.evaluate import message_event_context, run_evaluation
from sluice.rules.compile.typed.lcrschema import LCR_COLUMNS, lcr_row, spark_schema
from sluice.rules.engine.ruleset import STREAMS_CONTEXT, rules_catalog
from sluice.rules.compile.spark.ruleset import SparkRuleSet, streams_verdict
from sluice.streams import evaluate_rule_sets

from .world import build_lcr

OWNERS = ["HR", "OE", "SH"]


def table_rule(owner: str, table: str, dml: str = "dml") -> str:
    return (f"(((:{dml}.get_object_owner() = '{owner}' and :{dml}.get_object_name() = '{table}')) "
            f"and :{dml}.is_null_tag() = 'Y' and :{dml}.get_source_database_name() = 'DBS1.NET' )")


def positive_rules() -> list[str]:
    rules = [table_rule(OWNERS[i % 3], f"T{i % 60}") for i in range(150)]  # some duplicates
    rules += [f":dml.get_object_owner() = '{OWNERS[i % 3]}' and :dml.get_object_name() = 'T{i}' and "
              f":dml.get_command_type() = '{['INSERT', 'UPDATE', 'DELETE'][i % 3]}' and :dml.get_tag() IS NULL"
              for i in range(40)]
    rules += [f"((:dml.get_object_owner() = '{o}') and :dml.is_null_tag() = 'Y' and "
              f":dml.get_source_database_name() = 'DBS{n}.NET' )" for o in OWNERS for n in (1, 2)]
    rules += [table_rule(OWNERS[i % 3], f"T{i}", "ddl") for i in range(20)]
    rules += [f":dml.get_object_owner() = 'OE' and :dml.get_object_name() LIKE 'T{i}%'" for i in range(30)]
    rules += [f":dml.get_object_owner() = 'SH' and :dml.get_object_name() = 'T{i}' and "
              f":dml.get_value('NEW', '\"REGION_ID\"').AccessNumber() > {i % 3}" for i in range(20)]
    rules += [f":dml.get_object_owner() = 'HR' and :dml.get_command_type() = '{c}'" for c in ("DELETE", "UPDATE")]
    rules += [f":dml.get_object_name() = 'T{i}' and :dml.get_compatible() = 10" for i in range(3)]
    rules += [f":dml.get_object_name() = 'T{i}'" for i in (5, 50)]  # the join alone decides
    # every key the same constant: no join, a guard; residues of four templates / one
    rules += [f":dml.get_object_owner() = 'SH' and :dml.get_source_database_name() = 'DBS2.NET' and {r}"
              for r in (":dml.get_tag() IS NULL", ":dml.get_value('NEW', 'REGION_ID').AccessNumber() = 4",
                        ":dml.get_object_name() LIKE 'T1%'", ":dml.get_compatible() > 5")]
    rules += [f":dml.get_command_type() = 'UPDATE' and :dml.get_source_database_name() = 'DBS1.NET' and "
              f":dml.get_tag() IS NULL" for _ in range(4)]
    rules += [f":dml.get_object_owner() = 'HR' or :dml.get_object_name() = 'T{i}'" for i in range(5)]
    rules += [f":dml.get_object_owner() IN ('OE', 'SH') and NOT (:dml.get_object_name() LIKE 'T_{i}')"
              for i in range(5)]
    rules += [":ddl.get_command_type() = 'CREATE TABLE' and :ddl.get_object_owner() = 'HR'",
              ":dml.get_tag() = HEXTORAW('02')", ":dml.get_value('OLD', 'NAME') IS NOT NULL"]
    return rules


NEGATIVE = [":dml.get_object_name() = 'T7'", ":dml.get_source_database_name() = 'DBS3.NET'"]


def lcrs(n: int) -> list:
    rnd = random.Random(7)
    out = []
    for i in range(n):
        common = {"source_database_name": rnd.choice(["dbs1.net"] * 6 + ["dbs2.net", "dbs3.net"]),
                  "object_owner": rnd.choice(OWNERS), "object_name": f"T{rnd.randrange(70)}",
                  "tag": rnd.choice([None] * 5 + [b"\x01", b"\x02", b""]), "transaction_id": f"{i}.0.1",
                  "scn": i, "commit_scn": i}
        if rnd.random() < 0.1:
            out.append(build_lcr("DDL", {**common, "command_type": "CREATE TABLE", "object_type": "TABLE",
                                         "ddl_text": "CREATE TABLE t (x NUMBER)"}))
            continue
        command = rnd.choice(["INSERT", "UPDATE", "DELETE"])
        region = rnd.choice([None, 0, 1, 2, 3, "x"])
        old = None if command == "INSERT" else {"REGION_ID": region, "NAME": rnd.choice([None, "n"])}
        new = None if command == "DELETE" else {"REGION_ID": rnd.choice([region, 4])}
        out.append(build_lcr("ROW", {**common, "command_type": command, "old_values": old, "new_values": new}))
    return out


def make_rule_set(conn, name: str, conditions: list[str]) -> None:
    conn.rule_adm.create_rule_set(name, STREAMS_CONTEXT)
    for i, condition in enumerate(conditions):
        conn.rule_adm.create_rule(f"{name}_{i}", condition, STREAMS_CONTEXT)
        conn.rule_adm.add_rule(f"{name}_{i}", name)


def test_rules_are_taken_apart_into_joins_classes_and_complex_rules():
    texts = [(str(i), c) for i, c in enumerate(positive_rules())]
    assert SparkRuleSet(texts).describe() == {"joins": [
        # on :dml.get_object_name() (the only key with more than 8 distinct constants): table
        # rules (3 owners), command rules (3 owner/command pairs, tag IS NULL), AccessNumber()
        # > 0 / 1 / 2 (numbers stay constants), name and get_compatible() = 10, name alone
        {"keys": 1, "rules": 150 + 40 + 20 + 3 + 2, "classes": 3 + 3 + 3 + 1 + 1, "templates": 0},
        {"keys": 1, "rules": 20, "classes": 3, "templates": 0},  # on :ddl.get_object_name()
        # no join key: the 16 biggest classes (UPDATE/DBS1.NET of 4 rules, then one-rule
        # classes: schema rules, owner/command, SH/DBS2.NET, 3 LIKE rules) ...
        {"keys": 0, "rules": 4 + 6 + 2 + 4 + 3, "classes": 16, "templates": 0}],
        # ... the others are complex: 27 LIKE, a DDL rule; RAW, get_value, OR, IN/NOT
        "complex": 27 + 1 + 1 + 1 + 5 + 5}
    # more join keys, few classes: the rest are candidates, of two templates (table rules
    # with owner and tag constants as parameters) and five (LIKE patterns as parameters ...)
    assert SparkRuleSet(texts, **NARROW).describe()["joins"][0] == \
        {"keys": 2, "rules": 170, "classes": 2, "templates": 2}
    assert SparkRuleSet(texts, **NARROW).describe()["joins"][2] == \
        {"keys": 1, "rules": 40, "classes": 2, "templates": 5}


NARROW = {"max_classes": 2, "guard_limit": 2}


def test_spark_path_agrees_with_the_python_engine(spark, tmp_path):
    conn = sluice.connect(f"sqlite:///{tmp_path / 'rules.db'}")
    make_rule_set(conn, "pos", positive_rules())
    make_rule_set(conn, "neg", NEGATIVE)
    make_rule_set(conn, "empty", [])
    positive, negative = SparkRuleSet.from_rule_set(conn, "pos"), SparkRuleSet.from_rule_set(conn, "neg")
    narrow = SparkRuleSet.from_rule_set(conn, "pos", **NARROW)  # the candidate path, multi-key joins
    # the same plans through broadcast joins (by default their joins are literal map lookups)
    joined = SparkRuleSet.from_rule_set(conn, "pos", lookup_limit=0)
    narrow_joined = SparkRuleSet.from_rule_set(conn, "pos", lookup_limit=0, **NARROW)
    assert positive._lookup_entries(0) is not None and joined._lookup_entries(0) is None
    empty = SparkRuleSet.from_rule_set(conn, "empty")
    assert len(positive) == len(positive_rules()) and len(empty) == 0

    events = lcrs(3000)
    df = spark.createDataFrame([tuple(r[c] for c in LCR_COLUMNS) for r in map(lcr_row, events)],
                               spark_schema())
    df = narrow.fired(positive.fired(df), "narrow")
    df = narrow_joined.fired(joined.fired(df, "joined"), "narrow_joined")
    df = streams_verdict(df, positive, negative, columns=("p1", "r1", "n1"))
    df = streams_verdict(df, None, negative, columns=("p2", "r2", "n2"))
    df = streams_verdict(df, empty)
    rows = {r["transaction_id"]: r for r in df.collect()}

    catalog = rules_catalog(conn.context.store)
    fired_total = 0
    for lcr in events:
        row = rows[lcr.get_transaction_id()]
        true_rules, _ = run_evaluation(catalog, "SLUICE.POS", STREAMS_CONTEXT, streams=True,
                                       event_context=message_event_context(lcr))
        assert row["fired"] == row["narrow"] == row["joined"] == row["narrow_joined"] == \
            [h.rule_name for h in true_rules], lcr_row(lcr)
        fired_total += len(row["fired"])
        for (p, r, n), verdict in [
                (("p1", "r1", "n1"), evaluate_rule_sets(conn, lcr, "pos", "neg")),
                (("p2", "r2", "n2"), evaluate_rule_sets(conn, lcr, None, "neg")),
                (("perform", "rule", "negative_rule"), evaluate_rule_sets(conn, lcr, "empty"))]:
            assert (row[p], row[r], row[n]) == (
                verdict.perform, verdict.rule and verdict.rule.rule_name,
                verdict.negative_rule and verdict.negative_rule.rule_name), lcr_row(lcr)
    assert fired_total > 1000  # the sample exercises the rules, not only misses
    conn.close()
