"""The Python compiler: Oracle semantics over the shared corpus, and the seed-000
rules evaluated against fake LCRs."""

from __future__ import annotations

import importlib.util
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from sluice.errors import DatabaseError
from sluice.rules import (
    DictResolver, compile_condition, compile_expression, compile_python, parse_condition,
    parse_expression,
)


def _load_corpus():
    # Loaded by path so the corpus needs no package and other suites can reuse it.
    path = Path(__file__).with_name("rules_corpus.py")
    spec = importlib.util.spec_from_file_location("sluice_rules_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()


def _case_id(case) -> str:
    return case[0][:60]


@pytest.mark.parametrize("case", corpus.CASES, ids=_case_id)
def test_corpus(case):
    text, expected = case[0], case[1]
    ctx = {**corpus.CONTEXT, **(case[2] if len(case) > 2 else {})}
    if isinstance(expected, int) and not isinstance(expected, bool):
        with pytest.raises(DatabaseError) as err:
            compile_condition(text, DictResolver())(ctx)
        assert err.value.code == expected, str(err.value)
    else:
        assert compile_condition(text, DictResolver())(ctx) is expected


def test_corpus_is_large_enough():
    assert len(corpus.CASES) >= 150


# --- fake LCRs ------------------------------------------------------------------


class AnyData:
    """What LCR.GET_VALUE returns: a value with ANYDATA access methods."""

    def __init__(self, value):
        self.value = value

    def accessnumber(self):
        return self.value if isinstance(self.value, (int, Decimal)) else None

    def accessvarchar2(self):
        return self.value if isinstance(self.value, str) else None


class RowLCR:
    def __init__(self, owner="HR", name="REGIONS", command="INSERT", tag=None,
                 source="DBS1.NET", old=None, new=None, compatible=1):
        self.owner, self.name, self.command, self.tag = owner, name, command, tag
        self.source, self.old, self.new, self.compatible = source, old or {}, new or {}, compatible

    def get_object_owner(self):
        return self.owner

    def get_object_name(self):
        return self.name

    def get_command_type(self):
        return self.command

    def get_tag(self):
        return self.tag

    def is_null_tag(self):
        return "Y" if self.tag is None else "N"

    def get_source_database_name(self):
        return self.source

    def get_compatible(self):
        return self.compatible

    def get_value(self, kind, column):
        values = self.new if kind.upper() == "NEW" else self.old
        column = column[1:-1] if column.startswith('"') else column.upper()
        return AnyData(values[column]) if column in values else None


class DDLLCR(RowLCR):
    def __init__(self, base_owner=None, base_name=None, **kw):
        super().__init__(command=kw.pop("command", "CREATE TABLE"), **kw)
        self.base_owner, self.base_name = base_owner, base_name

    def get_base_table_owner(self):
        return self.base_owner

    def get_base_table_name(self):
        return self.base_name


class StreamsResolver:
    """The Streams evaluation context: :dml / :ddl are the LCR being evaluated."""

    def __init__(self):
        self.identifier_calls = 0

    def identifier(self, path):
        self.identifier_calls += 1
        raise DatabaseError(f'ORA-00904: "{path[0]}": invalid identifier', 904)

    def bind(self, name):
        return lambda ctx: ctx.get(name)


def fires(text, **variables):
    return compile_condition(text, StreamsResolver())({k.upper(): v for k, v in variables.items()})


def seed(label):
    return dict(corpus.SEED_RULES)[label]


def test_global_rules_need_a_null_tag():
    assert fires(seed("global dml"), dml=RowLCR()) is True
    assert fires(seed("global dml"), dml=RowLCR(tag=b"\x01")) is False
    assert fires(seed("global ddl"), ddl=DDLLCR()) is True


def test_global_tagged_rules_are_true_for_every_lcr():
    assert fires(seed("global dml, tagged"), dml=RowLCR(source="X")) is True
    assert fires(seed("global ddl, tagged"), ddl=DDLLCR(source="")) is None  # '' is NULL


def test_schema_rules():
    assert fires(seed("schema dml"), dml=RowLCR(owner="HR")) is True
    assert fires(seed("schema dml"), dml=RowLCR(owner="OE")) is False
    # GET_OBJECT_OWNER may be NULL for DDL; the base table owner rescues the rule
    assert fires(seed("schema ddl"), ddl=DDLLCR(owner=None, base_owner="HR")) is True
    assert fires(seed("schema ddl"), ddl=DDLLCR(owner=None, base_owner=None)) is None


def test_table_rules():
    assert fires(seed("table dml"), dml=RowLCR(name="LOCATIONS")) is True
    assert fires(seed("table dml"), dml=RowLCR(name="EMPLOYEES")) is False
    ddl = DDLLCR(owner=None, name=None, base_owner="HR", base_name="COUNTRIES")
    assert fires(seed("table ddl"), ddl=ddl) is True


@pytest.mark.parametrize("command, old, new, insert, update, delete", [
    ("INSERT", None, 2, True, False, False),
    ("INSERT", None, 3, False, False, False),
    ("UPDATE", 2, 2, False, True, False),
    ("UPDATE", 3, 2, True, False, False),      # row migration: update becomes insert
    ("UPDATE", None, 2, True, False, False),   # old value NULL: also an insert
    ("UPDATE", 2, 3, False, False, True),      # row migration: update becomes delete
    ("UPDATE", 2, None, False, False, True),
    ("DELETE", 2, None, False, False, True),
    ("DELETE", 5, None, False, False, False),
])
def test_subset_rules_and_row_migration(command, old, new, insert, update, delete):
    """Seed 000, "Subset Rules Example": region_id = 2, three rules, one fires."""
    lcr = RowLCR(command=command,
                 old={} if command == "INSERT" else {"REGION_ID": old},
                 new={} if command == "DELETE" else {"REGION_ID": new})
    assert bool(fires(seed("subset insert"), dml=lcr)) is insert
    assert bool(fires(seed("subset update"), dml=lcr)) is update
    assert bool(fires(seed("subset delete"), dml=lcr)) is delete


def test_message_rule_on_a_typed_variable():
    msg = SimpleNamespace(region="EUROPE", priority=1, message="hello")
    assert fires(seed("message rule"), **{"VAR$_52": msg}) is True
    assert fires(seed("message rule, unquoted"), **{"VAR$_52": msg}) is True
    assert fires(seed("message rule"), **{"VAR$_52": SimpleNamespace(region="ASIA", priority=1)}) is False
    assert fires(seed("message rule"), **{"VAR$_52": None}) is None


def test_and_condition_on_the_tag():
    assert fires(seed("and_condition dml"), dml=RowLCR(name="DEPARTMENTS", tag=b"\x02")) is True
    assert fires(seed("and_condition dml"), dml=RowLCR(name="DEPARTMENTS", tag=b"\x03")) is False
    assert fires(seed("and_condition dml"), dml=RowLCR(name="DEPARTMENTS")) is None
    ddl = DDLLCR(name="DEPARTMENTS", tag=b"\x02")
    assert fires(seed("and_condition ddl"), ddl=ddl) is True


def test_complex_rules_not_and_like():
    assert fires(seed("not regions dml"), dml=RowLCR(name="EMPLOYEES")) is True
    assert fires(seed("not regions dml"), dml=RowLCR(name="REGIONS")) is False
    assert fires(seed("like job dml"), dml=RowLCR(name="JOB_HISTORY")) is True
    assert fires(seed("like job dml"), dml=RowLCR(name="EMPLOYEES")) is False
    assert fires(seed("except delete"), dml=RowLCR(name="DEPARTMENTS", command="UPDATE")) is True
    assert fires(seed("except delete"), dml=RowLCR(name="DEPARTMENTS", command="DELETE")) is False


def test_undefined_variables_are_null():
    assert fires(seed("undefined m is null"), dml=RowLCR()) is True
    assert fires(seed("undefined m = 5"), dml=RowLCR()) is None
    assert fires(seed("undefined m = 5"), dml=RowLCR(), m=5) is True


def test_compatibility_rules():
    assert fires(seed("compatible > 9.2"), dml=RowLCR(compatible=1)) is False
    assert fires(seed("compatible > 9.2"), dml=RowLCR(compatible=2)) is True
    assert fires(seed("compatible <= 10.1"), dml=RowLCR(compatible=3)) is False


def test_user_function_is_an_invalid_identifier_at_compile_time():
    with pytest.raises(DatabaseError, match='ORA-00904: "MY_FUNCTION"') as err:
        compile_condition(seed("function of :dml"), StreamsResolver())
    assert err.value.code == 904


# --- compiler mechanics ----------------------------------------------------------


def test_names_are_resolved_once_at_compile_time():
    calls = []

    class Counting(DictResolver):
        def identifier(self, path):
            calls.append(path)
            return super().identifier(path)

    rule = compile_condition("a = 1 AND b.c > 2", Counting())
    for i in range(5):
        rule({"a": 1, "b": {"c": i}})
    assert calls == [("A",), ("B", "C")]


def test_member_names_map_to_python_methods():
    class Value:
        def access_number(self):
            return 7

        def get_value(self, kind, column):
            return self

    assert fires(":v.AccessNumber() = 7", v=Value()) is True
    assert fires(":v.ACCESSNUMBER() = 7", v=Value()) is True
    assert fires(":v.get_value('NEW', 'X').accessNumber() = 7", v=Value()) is True
    assert fires(":v.AccessNumber() IS NULL", v=None) is True  # a member of NULL is NULL
    with pytest.raises(DatabaseError, match="ORA-00904"):
        fires(":v.no_such_method() = 1", v=Value())


def test_attributes_upper_then_lower_then_mapping():
    assert fires(":v.region = 'X'", v=SimpleNamespace(REGION="X", region="y")) is True
    assert fires(":v.region = 'y'", v=SimpleNamespace(region="y")) is True
    assert fires(":v.region = 'z'", v={"REGION": "z"}) is True
    assert fires(":v.Region = 'z'", v={"rEgIoN": "z"}) is True
    assert fires(":v.a.b = 1", v={"a": SimpleNamespace(b=1)}) is True


def test_unknown_function_and_argument_counts():
    for text, code in [("NO_SUCH_FN(a) = 1", 904), ("SUBSTR(a) = 'x'", 938),
                       ("UPPER(a, b) = 'x'", 939), ("pkg.fn() = 1", 904)]:
        with pytest.raises(DatabaseError) as err:
            compile_condition(text, DictResolver(names=["a", "b"]))
        assert err.value.code == code


def test_dict_resolver_with_names_checks_at_compile_time():
    with pytest.raises(DatabaseError, match='ORA-00904: "PRICE"'):
        compile_condition("price > 1", DictResolver(names=["priority", "corrid"]))
    rule = compile_condition("priority > 1 AND corrid LIKE 'A%'", DictResolver(["priority", "corrid"]))
    assert rule({"PRIORITY": 2, "CORRID": "AB"}) is True


def test_dotted_function_falls_back_to_a_member_call():
    class Payload:
        def total(self):
            return 10

    rule = compile_condition("tab.user_data.total() = 10", DictResolver())
    assert rule({"tab": {"user_data": Payload()}}) is True


def test_compile_expression_values():
    resolver = DictResolver()
    assert compile_expression(parse_expression("UPPER(:r) || '-' || 1.50"), resolver)({"r": "eu"}) == "EU-1.5"
    assert compile_expression(parse_expression("7 / 2"), resolver)({}) == Decimal("3.5")
    assert compile_expression(parse_expression("''"), resolver)({}) is None
    assert compile_expression(parse_condition("1 = 1"), resolver)({}) is True


def test_compile_python_refuses_a_bare_value():
    with pytest.raises(DatabaseError) as err:
        compile_python(parse_expression("a"), DictResolver())
    assert err.value.code == 920


@pytest.mark.parametrize("text, n, expected", [
    # NUMBER's exponents reach 125: ROUND / TRUNC of such a number is the number itself
    # (quantizing it in 38 digits raised InvalidOperation: the rule was NULL, not TRUE)
    ("ROUND(:n) = :n", Decimal("9.99E125"), True),
    ("TRUNC(:n, 2) = :n", Decimal("-9.99E125"), True),
    ("ROUND(:n) = :n", 10**40, True),
    ("MOD(:n, 2) = 0", Decimal("9.99E125"), True),        # was DivisionImpossible
    ("MOD(:n, 7) = 4", Decimal("1E100"), True),
    ("MOD(:n, 2) = 1", Decimal("-1E100") - 1, False),     # the sign of m: -1
    ("ROUND(:n, 1) = 2.5", Decimal("2.45"), True),
    ("ROUND(:n) > 5", float("inf"), True),                # a BINARY_DOUBLE's Infinity rounds to itself
    ("FLOOR(:n) > 5", float("inf"), True), ("CEIL(:n) < 5", float("-inf"), True),  # was OverflowError
    ("TO_CHAR(:n, '999') = '####'", float("inf"), True),  # was InvalidOperation
    ("MOD(:n, 2) IS NULL", float("inf"), False),          # (NaN)
    ("TO_NUMBER(:n) > 1E100", "1" * 5000, True),          # more digits than int() reads: was ValueError
    ("MOD(-1, :n) = 0", 1e-300, True),                    # a BINARY_DOUBLE: was DivisionImpossible
    # NUMBER keeps 38 digits: + - * and unary minus rounded to Python's 28 (1 - 1E-30 was 1)
    ("CEIL(:n - 1) = 0", Decimal("1E-30"), True), ("1 - :n < 1", Decimal("1E-30"), True),
    ("(:n + 1) * 1 > 1", Decimal("1E-30"), True), ("ABS(:n - 1) < 1", Decimal("1E-30"), True),
    ("-(:n) = 0 - :n", Decimal("0.12345678901234567890123456789012345678"), True),
    ("-(:n) < -0.1234567890123456789012345678901234567", Decimal("0.12345678901234567890123456789012345678"), True),
    ("MOD(:n, 3e-300) < 3e-300", 1.7e308, True),
])
def test_number_functions_over_numbers_of_any_size(text, n, expected):
    assert compile_condition(text, DictResolver())({"N": n}) is expected


@pytest.mark.parametrize("text, n", [
    ("MOD(TO_NUMBER(:n), 7) IS NULL", "1e9999"),           # was decimal.DivisionImpossible
    ("SUBSTR('abc', 1, :n) IS NULL", float("inf")),       # was OverflowError
    ("LPAD('abc', :n) IS NULL", float("nan")),            # was ValueError
    ("ROUND(2.5, :n) IS NULL", float("-inf")),
])
def test_numbers_far_past_number_are_01426(text, n):
    with pytest.raises(DatabaseError) as err:
        compile_condition(text, DictResolver())({"N": n})
    assert err.value.full_code == "ORA-01426"


def test_date_arithmetic_past_the_calendar_is_01841():
    import datetime as dt
    for text, d in (("(:d + 1) > :d", dt.datetime(9999, 12, 31, 12)), ("(:d - 1) < :d", dt.datetime(1, 1, 1))):
        with pytest.raises(DatabaseError) as err:     # was Python's OverflowError
            compile_condition(text, DictResolver())({"D": d})
        assert err.value.full_code == "ORA-01841"
