"""The lexer and parser: every seed-000 condition, precedence, literals, names,
and syntax errors reported with Oracle's code, line and column."""

from __future__ import annotations

import importlib.util
from decimal import Decimal
from pathlib import Path

import pytest

from sluice.errors import DatabaseError, NotSupportedError, ProgrammingError
from sluice.rules import parse_condition, parse_expression, referenced_names, to_text
from sluice.rules.lang.ast import (
    And, Attribute, Between, Bind, Binary, Compare, Exists, FuncCall, Identifier, InList, IsNull,
    Like, Literal, MethodCall, Not, Or, Unary, walk,
)


def _load_corpus():
    path = Path(__file__).with_name("rules_corpus.py")
    spec = importlib.util.spec_from_file_location("sluice_rules_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
SEED = dict(corpus.SEED_RULES)


@pytest.mark.parametrize("label, text", corpus.SEED_RULES, ids=[s[0] for s in corpus.SEED_RULES])
def test_every_seed_condition_parses_and_prints_back(label, text):
    tree = parse_condition(text)
    assert parse_condition(to_text(tree)) == tree


def test_corpus_conditions_print_back_to_the_same_tree():
    for case in corpus.CASES:
        tree = parse_condition(case[0])
        assert parse_condition(to_text(tree)) == tree, case[0]


def test_seed_garbled_not_example_is_a_syntax_error():
    with pytest.raises(ProgrammingError) as err:
        parse_condition(corpus.SEED_GARBLED)
    assert str(err.value) == "ORA-00933: SQL command not properly ended at line 2, column 30"
    assert (err.value.line, err.value.column) == (2, 30)


def test_member_call_chain_of_a_subset_rule():
    tree = parse_condition(SEED["subset update"])
    assert isinstance(tree, And) and len(tree.terms) == 9  # parentheses do not nest ANDs
    call = tree.terms[-1].left
    assert call == MethodCall(
        MethodCall(Bind("DML"), "GET_VALUE", "get_value",
                   (Literal("NEW"), Literal('"REGION_ID"'))),
        "ACCESSNUMBER", "AccessNumber", ())
    assert call.spelled == "AccessNumber"


def test_not_exists_dual_of_a_subset_rule():
    tree = parse_condition(SEED["subset insert"])
    exists = [n for n in walk(tree) if isinstance(n, Exists)]
    assert len(exists) == 1
    assert isinstance(exists[0].condition, Compare)
    assert any(isinstance(n, Not) and n.operand is exists[0] for n in walk(tree))


def test_quoted_and_unquoted_variables_are_the_same_variable():
    assert parse_condition(SEED["message rule"]) == parse_condition(SEED["message rule, unquoted"])
    tree = parse_condition(SEED["message rule"])
    assert tree.terms[0].left == Attribute(Bind("VAR$_52"), "REGION", "region")


def test_hextoraw_and_package_functions():
    assert parse_condition(SEED["and_condition as given"]).right == FuncCall(("HEXTORAW",), (Literal("02"),))
    tree = parse_condition(SEED["compatible > 9.2"])
    assert tree.right == FuncCall(("DBMS_STREAMS", "COMPATIBLE_9_2"), ())


@pytest.mark.parametrize("text, expected", [
    ("a = 1 OR b = 2 AND c = 3",
     Or((Compare("=", Identifier(("A",)), Literal(1)),
         And((Compare("=", Identifier(("B",)), Literal(2)), Compare("=", Identifier(("C",)), Literal(3))))))),
    ("NOT a = 1 AND b = 2",
     And((Not(Compare("=", Identifier(("A",)), Literal(1))), Compare("=", Identifier(("B",)), Literal(2))))),
    ("1 + 2 * 3 = 7",
     Compare("=", Binary("+", Literal(1), Binary("*", Literal(2), Literal(3))), Literal(7))),
    ("'a' || 1 + 2 = 3",  # || and binary + share one level, left to right, as in Oracle
     Compare("=", Binary("+", Binary("||", Literal("a"), Literal(1)), Literal(2)), Literal(3))),
    ("a - b - c = 0",
     Compare("=", Binary("-", Binary("-", Identifier(("A",)), Identifier(("B",))), Identifier(("C",))), Literal(0))),
    ("-a * 2 = -4",
     Compare("=", Binary("*", Unary("-", Identifier(("A",))), Literal(2)), Literal(-4))),
    ("x BETWEEN 1 AND 2 AND y = 3",
     And((Between(Identifier(("X",)), Literal(1), Literal(2)), Compare("=", Identifier(("Y",)), Literal(3))))),
    ("x NOT IN (1, 2)", InList(Identifier(("X",)), (Literal(1), Literal(2)), True)),
    ("x NOT LIKE 'a%' ESCAPE '!'", Like(Identifier(("X",)), Literal("a%"), Literal("!"), True)),
    ("x IS NOT NULL", IsNull(Identifier(("X",)), True)),
    ("((a = 1))", Compare("=", Identifier(("A",)), Literal(1))),
    ("(a + 1) * 2 = 4",
     Compare("=", Binary("*", Binary("+", Identifier(("A",)), Literal(1)), Literal(2)), Literal(4))),
    ("(a = 1 OR b = 1) OR c = 1",
     Or(tuple(Compare("=", Identifier((n,)), Literal(1)) for n in "ABC"))),
    ("a != 1 AND a ^= 1 AND a <> 1",
     And((Compare("<>", Identifier(("A",)), Literal(1)),) * 3)),
])
def test_precedence(text, expected):
    assert parse_condition(text) == expected


@pytest.mark.parametrize("text, value", [
    ("'O''Brien'", "O'Brien"), ("''", None), ("NULL", None), ("42", 42), ("1.5", Decimal("1.5")),
    (".5", Decimal(".5")), ("1e3", Decimal("1e3")), ("2.5E-1", Decimal("0.25")), ("-7", -7),
    ("'a\nb'", "a\nb"), ("'--not a comment'", "--not a comment"),
])
def test_literals(text, value):
    assert parse_expression(text) == Literal(value)


def test_names_and_case():
    assert parse_expression("tab.user_data.price") == Identifier(("TAB", "USER_DATA", "PRICE"))
    assert parse_expression('"Mixed".col') == Identifier(("Mixed", "COL"))
    assert parse_expression("TRUE") == Identifier(("TRUE",))  # not a SQL literal
    assert parse_expression(":dml") == Bind("DML")
    assert parse_expression(':"lower"') == Bind("lower")
    assert parse_expression(":1") == Bind("1")
    assert parse_condition("a = 1 and B = 2") == parse_condition("A = 1 AND b = 2")
    assert parse_expression("upper(x)") == FuncCall(("UPPER",), (Identifier(("X",)),))


def test_comments_and_layout():
    text = "a = 1 -- trailing comment\n/* block\ncomment */ AND\n\tb = 2"
    assert parse_condition(text) == parse_condition("a = 1 AND b = 2")


def test_trim_keyword_forms_desugar():
    assert parse_expression("TRIM(LEADING 'x' FROM s)") == FuncCall(("LTRIM",), (Identifier(("S",)), Literal("x")))
    assert parse_expression("TRIM(s)") == FuncCall(("TRIM",), (Identifier(("S",)),))
    assert parse_expression("TRIM(both + 1)") == FuncCall(
        ("TRIM",), (Binary("+", Identifier(("BOTH",)), Literal(1)),))


@pytest.mark.parametrize("text, code, line, column", [
    ("a = ", 936, 1, 5),
    (":dml.get_object_owner() = 'HR' AND ", 936, 1, 36),
    ("(a = 1", 907, 1, 7),
    ("a = 1)", 933, 1, 6),
    ("a", 920, 1, 2),
    (":dml.is_null_tag()", 920, 1, 19),
    ("a AND b = 1", 920, 1, 3),
    ("a = 1 AND b", 920, 1, 12),
    ("NOT a", 920, 1, 6),
    ("a = 1 b", 933, 1, 7),
    ("a = 1 = 2", 933, 1, 7),
    ("'abc", 1756, 1, 1),
    ("a = 1 AND\n  b = 'x", 1756, 2, 7),
    ("a = 1\nAND b = \nOR c = 1", 936, 3, 1),
    ('"abc = 1', 1740, 1, 1),
    ('"" = 1', 1741, 1, 1),
    ("a @ b", 911, 1, 3),
    ("a = : b", 911, 1, 5),
    ("x IS 5", 908, 1, 6),
    ("x BETWEEN 1 OR 2", 905, 1, 13),
    ("x IN 1", 906, 1, 6),
    ("x IN (1, 2", 907, 1, 11),
    ("NVL(a = 1, 2) = 1", 907, 1, 7),
    ("a = (b = 1)", 936, 1, 5),
    ("UPPER(a", 907, 1, 8),
    ("a.b. = 1", 936, 1, 6),
    ("EXISTS (a = 1)", 928, 1, 9),
    ("EXISTS (SELECT 1 WHERE a = 1)", 923, 1, 18),
    ("EXISTS (SELECT 1 FROM DUAL WHERE a = 1", 907, 1, 39),
    ("a = 1 /* open", 1742, 1, 7),
    ("a IS NOT", 908, 1, 9),
    ("a = 1 AND AND b = 1", 936, 1, 11),
    # a NUMBER literal past 9.99E125: numeric overflow (int() and Decimal raised ValueError /
    # InvalidOperation; 1e99999 * 1e99999 made PostgreSQL abort the query)
    ("n1 < 1e126", 1426, 1, 6), ("n10 * 1e99999 * 1e99999 > 0", 1426, 1, 7),
    ("n1 < 1e99999999999999999999", 1426, 1, 6), ("9" * 127 + " = 1", 1426, 1, 1),
])
def test_syntax_errors_have_code_line_and_column(text, code, line, column):
    with pytest.raises(DatabaseError) as err:
        parse_condition(text)
    assert err.value.code == code
    assert str(err.value).startswith(f"ORA-{code:05d}: ")
    assert str(err.value).endswith(f" at line {line}, column {column}")


def test_the_brief_example_message():
    with pytest.raises(ProgrammingError, match=r"^ORA-00936: missing expression at line 1, column 14$"):
        parse_condition("a = 1 AND b =)")


def test_only_dual_subqueries_are_supported():
    with pytest.raises(NotSupportedError, match=r"^SLU-00001: .*SYS\.DUAL.* at line 1, column 23$"):
        parse_condition("EXISTS (SELECT 1 FROM emp WHERE a = 1)")
    with pytest.raises(NotSupportedError, match=r"^SLU-00001: .*IN \(subquery\).* at line 1, column 7$"):
        parse_condition("a IN (SELECT b FROM t)")


def test_referenced_names():
    names = referenced_names(parse_condition(
        "priority > 1 AND tab.user_data.price < 10 AND corrid LIKE 'A%' "
        "AND :dml.get_value('NEW', 'X') IS NULL AND UPPER(:\"VAR$_52\".region) = 'EU' "
        "AND enq_time < SYSDATE AND pkg.fn() = 1"))
    assert names.identifiers == {("PRIORITY",), ("TAB", "USER_DATA", "PRICE"), ("CORRID",),
                                 ("ENQ_TIME",), ("PKG",)}
    assert names.binds == {"DML", "VAR$_52"}
    assert names.functions == {"UPPER"}


def test_non_string_input_is_refused():
    with pytest.raises(DatabaseError, match="ORA-06502"):
        parse_condition(None)
