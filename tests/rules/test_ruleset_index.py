"""The fast-evaluation index never changes a result, and keeps the work per event flat."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from sluice.rules import parse_condition
from sluice.rules.engine.evaluator import ContextResolver, Event, RuleSetEvaluator
from sluice.rules.engine.index import RuleIndex, is_simple
from sluice.rules.compile.python import compile_python
from sluice.rules.engine.ruleset import EvaluationContext, Variable
from sluice.streams import RowLCR

CTX = EvaluationContext("T", "CTX", (), (
    Variable("DML", "SYS.LCR$_ROW_RECORD", None, None), Variable("M", "NUMBER", None, None),
    Variable("S", "VARCHAR2(10)", None, None)))
OWNERS, TABLES, SOURCES = ["HR", "OE", "SCOTT"], [f"T{i}" for i in range(8)], ["DBS1.NET", "DBS2.NET"]
COMMANDS = ["INSERT", "UPDATE", "DELETE"]


def random_condition(rnd: random.Random) -> str:
    o, t, src, cmd = rnd.choice(OWNERS), rnd.choice(TABLES), rnd.choice(SOURCES), rnd.choice(COMMANDS)
    tag = rnd.choice(["Y", "N"])
    shapes = [
        f"(((:dml.get_object_owner() = '{o}' and :dml.get_object_name() = '{t}')) and "
        f":dml.is_null_tag() = '{tag}' and :dml.get_source_database_name() = '{src}' )",
        f"((:dml.get_object_owner() = '{o}') and :dml.is_null_tag() = '{tag}')",
        f"(:dml.get_object_owner() = '{o}' or :dml.get_object_name() = '{t}') and :dml.is_null_tag() = 'Y'",
        f":dml.get_command_type() IN ('{cmd}', 'INSERT') AND :dml.get_object_name() = '{t}'",
        f":dml.get_object_owner() = '{o}' AND NOT :dml.get_object_name() = '{t}'",
        f":dml.get_object_name() LIKE '{t[:1]}%' AND :dml.get_object_owner() = '{o}'",
        f"'{o}' = :dml.get_object_owner() AND :dml.get_command_type() != '{cmd}'",
        ":m = 5", ":m = '5'", ":s = 5", ":s = '5'", ":m = 5.0", ":m IS NULL",
        f":m = 5 AND :dml.get_object_owner() = '{o}'",
        f":s = 'x' OR :dml.get_object_name() = '{t}'",
        ":dml.get_scn() = 7", f":dml.get_object_name() = '{t}' AND :m > 4",
    ]
    return rnd.choice(shapes)


def random_event(rnd: random.Random) -> Event:
    lcr = RowLCR.construct(source_database_name=rnd.choice(SOURCES), command_type=rnd.choice(COMMANDS),
                           object_owner=rnd.choice(OWNERS), object_name=rnd.choice(TABLES),
                           tag=rnd.choice([None, b"\x01"]), scn=rnd.choice([7, Decimal("7"), 7.0, "7", None]))
    return Event({"DML": lcr, "M": rnd.choice([None, 5, "5", 6, Decimal("5.0"), 5.0, "x"]),
                  "S": rnd.choice([None, "5", "x", "05", 5])})


def brute_force(conditions: list[str]):
    resolver = ContextResolver(CTX)
    fns = [compile_python(parse_condition(c), resolver) for c in conditions]

    def true_rules(ev: Event) -> list[str]:
        out = []
        for i, fn in enumerate(fns):
            try:
                if fn(ev) is True:
                    out.append(f"T.R{i}")
            except Exception:
                pass
        return out
    return true_rules


@pytest.mark.parametrize("seed", range(6))
def test_index_agrees_with_evaluating_every_rule(seed):
    rnd = random.Random(seed)
    conditions = [random_condition(rnd) for _ in range(150)]
    evaluator = RuleSetEvaluator(CTX, [(f"T.R{i}", c, None) for i, c in enumerate(conditions)])
    expected = brute_force(conditions)
    for _ in range(300):
        ev = random_event(rnd)
        want = expected(ev)
        got, maybe = evaluator.evaluate(ev, streams=True)
        assert [h.rule_name for h in got] == want and maybe == []
        got, maybe = evaluator.evaluate(ev)      # every variable sent: no maybe rules either
        assert [h.rule_name for h in got] == want and maybe == []


def table_rule(i: int) -> str:
    return (f"(((:dml.get_object_owner() = 'HR' and :dml.get_object_name() = 'T{i}')) "
            "and :dml.is_null_tag() = 'Y' and :dml.get_source_database_name() = 'DBS1.NET' )")


def test_ten_thousand_table_rules_cost_one_probe():
    conditions = [parse_condition(table_rule(i)) for i in range(10_000)]
    conditions.append(parse_condition(":dml.get_object_name() LIKE 'T99%'"))   # one complex rule
    resolver = ContextResolver(CTX)
    index = RuleIndex(conditions, resolver.key_getter, resolver.names)
    assert index.unindexed == [10_000]
    hit = Event({"DML": RowLCR("dbs1.net", "INSERT", "HR", "T4242")})
    assert index.match(hit) == ([4242], [10_000])       # decided without running a condition
    miss = Event({"DML": RowLCR("dbs1.net", "INSERT", "HR", "NOPE")})
    assert index.match(miss) == ([], [10_000])
    tagged = Event({"DML": RowLCR("dbs1.net", "INSERT", "HR", "T7", tag=b"\x01")})
    assert index.match(tagged) == ([], [10_000])


def test_rules_are_filed_under_their_most_selective_term():
    """Filed by table name (10 distinct values), not by owner or tag (one value each)."""
    conditions = [parse_condition(table_rule(i)) for i in range(10)]
    resolver = ContextResolver(CTX)
    index = RuleIndex(conditions, resolver.key_getter, resolver.names)
    (group,) = index._groups
    assert sorted(group[1]) == [f"T{i}" for i in range(10)]


def test_implicit_conversion_is_left_to_the_compiler():
    evaluator = RuleSetEvaluator(CTX, [("T.NUM", ":m = 5", None), ("T.TEXT", ":s = '5'", None),
                                       ("T.MIXED", ":s = 5", None), ("T.DEC", ":m = 5.0", None)])
    hits = lambda **v: [h.rule_name for h in evaluator.evaluate(Event(v), streams=True)[0]]  # noqa: E731
    assert hits(M="5") == ["T.NUM", "T.DEC"]             # '5' = 5 after conversion
    assert hits(M=5.0) == ["T.NUM", "T.DEC"]             # BINARY_DOUBLE meets NUMBER
    assert hits(M=Decimal("5.00")) == ["T.NUM", "T.DEC"]
    assert hits(S="05") == ["T.MIXED"]                   # TO_NUMBER('05') = 5, but '05' <> '5'
    assert hits(S="x") == []                             # ORA-01722 inside: that rule is NULL


def test_undefined_variables_send_indexed_rules_to_maybe():
    evaluator = RuleSetEvaluator(CTX, [("T.A", ":m = 5 AND :dml.get_object_owner() = 'HR'", None),
                                       ("T.B", ":m = 5 AND :dml.get_object_owner() = 'OE'", None)])
    ev = Event({"DML": RowLCR("dbs1.net", "INSERT", "HR", "X")})
    assert [h.rule_name for h in evaluator.evaluate(ev)[1]] == ["T.A"]
    assert evaluator.evaluate(ev, streams=True) == ([], [])


@pytest.mark.parametrize("condition, simple", [
    (":dml.get_object_owner() = 'HR'", True),
    ("tab.col = 5", True),
    (":v1 > 'aaa'", True),
    (":v2.a1 < 10.01", True),
    (":v3.m() = 10", True),
    (":v4 IS NOT NULL", True),
    ("1 = 1", True),
    ("'abc' > 'AB'", True),
    (":date_var < TO_DATE('04-01-2004, 14:20:17', 'mm-dd-yyyy, hh24:mi:ss')", True),
    (":v5.m(1) < 3", True),
    (":dml.GET_COMPATIBLE() > DBMS_STREAMS.COMPATIBLE_9_2()", True),
    (":a = 1 AND (:b = 2 OR :c IS NULL)", True),
    ("NOT :a = 1", False),
    (":a LIKE 'x%'", False),
    (":a IN (1, 2)", False),
    (":a + 1 = 2", False),
    ("UPPER(:a) = 'X'", False),
    (":dml.get_value('NEW', 'X').AccessNumber() = 2", False),
    (":a = :b", False),
])
def test_simple_rule_conditions(condition, simple):
    assert is_simple(parse_condition(condition)) is simple
