"""The SQL compiler's contract beyond the differential corpus: bound parameters,
what is refused (and how), SYSDATE, JSON payloads, and bad values never aborting."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest
from psycopg.types.json import Jsonb

from sluice.errors import DatabaseError
from sluice.rules.compile.typed.ir import NotCompilable
from sluice.rules.compile.typed.lcrschema import LcrResolver, sql_columns
from sluice.rules.compile.typed.resolvers import MappingResolver
from sluice.rules.compile.sql.compiler import compile_sql, json_get
from sluice.rules.lang.parser import MAX_DEPTH, MAX_NESTING
from sluice.rules.compile.typed.dates import oracle_to_pg_format
from sluice.store.sqlitefns import from_sqlite, register_sqlite_functions

QUEUE = MappingResolver({
    "PRIORITY": ("PRIORITY", "NUMBER"), "CORRID": ("CORRID", "CHAR"), "TAB.PRIORITY": ("PRIORITY", "NUMBER"),
    "ENQ_TIME": ("ENQ_TIME", "DATE"),
    "TAB.USER_DATA.PRICE": json_get("USER_DATA", ("PRICE",), "NUMBER"),
    "TAB.USER_DATA.REGION": json_get("USER_DATA", ("REGION",)),
})
MESSAGES = [  # (msgid, priority, corrid, user_data)
    (1, 1, "ORDER-1", {"PRICE": 45000, "REGION": "EU"}),
    (2, 5, "order-2", {"PRICE": "29999.5", "REGION": "US"}),
    (3, 2, "ORDER-3", {"PRICE": "n/a", "REGION": ""}),
    (4, 3, "", {"REGION": "EU"}),
    (5, None, None, {"PRICE": 30001}),
]


@pytest.fixture
def lite():
    conn = sqlite3.connect(":memory:")
    register_sqlite_functions(conn)
    import json
    conn.execute("CREATE TABLE qt (msgid INTEGER, PRIORITY INTEGER, CORRID TEXT, USER_DATA TEXT, ENQ_TIME INTEGER)")
    conn.executemany("INSERT INTO qt VALUES (?, ?, ?, ?, 0)", [(m, p, c, json.dumps(u)) for m, p, c, u in MESSAGES])
    yield conn
    conn.close()


@pytest.fixture
def pgq(pg):
    with pg.cursor() as cur:
        cur.execute("DROP TABLE IF EXISTS pg_temp.qt")
        cur.execute('CREATE TEMP TABLE qt (msgid int, "PRIORITY" int, "CORRID" text, "USER_DATA" jsonb, '
                    '"ENQ_TIME" timestamp)')
        cur.executemany("INSERT INTO qt VALUES (%s, %s, %s, %s, '2024-01-01')",
                        [(m, p, c, Jsonb(u)) for m, p, c, u in MESSAGES])
    yield pg


def _select(conn, cond, dialect):
    rows = conn.execute(f"SELECT msgid FROM qt WHERE {cond.sql} ORDER BY msgid", cond.params).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize("text, expected", [
    ("priority > 2", [2, 4]),
    ("corrid LIKE 'ORDER%'", [1, 3]),          # case-sensitive, whatever the PRAGMA says
    ("corrid IS NULL", [4, 5]),                  # '' is NULL
    ("tab.user_data.price > 30000", [1, 5]),     # 'n/a' is no number: that message's rule is NULL
    ("tab.user_data.region = 'EU' AND tab.priority < 5", [1, 4]),
    ("tab.user_data.region IS NULL", [3, 5]),
    ("NOT (tab.user_data.price <= 30000)", [1, 5]),
    ("enq_time < SYSDATE", [1, 2, 3, 4, 5]),
])
def test_dequeue_conditions_run_in_the_store(text, expected, dialect, lite, pgq):
    conn = lite if dialect == "sqlite" else pgq
    assert _select(conn, compile_sql(text, QUEUE, dialect), dialect) == expected


def test_a_bad_value_makes_the_row_null_and_never_aborts(lite, pgq):
    # Python raises ORA-01722 for 'x1' = 1; SQL gives NULL for that row and goes on
    for dialect, conn in (("sqlite", lite), ("postgresql", pgq)):
        cond = compile_sql("corrid = 7 OR priority = 1 OR corrid / 0 = 1", QUEUE, dialect)
        assert _select(conn, cond, dialect) == []  # every non-NULL corrid is not a number
        cond = compile_sql("corrid IS NULL OR corrid = 7", QUEUE, dialect)
        assert _select(conn, cond, dialect) == [4, 5]


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_values_are_bound_never_pasted(dialect):
    evil = "x'); DROP TABLE qt; --"
    cond = compile_sql(f"corrid = '{evil.replace(chr(39), chr(39) * 2)}' AND priority IN (1, 2.5)", QUEUE, dialect)
    assert evil not in cond.sql and "DROP" not in cond.sql and "2.5" not in cond.sql
    assert evil in cond.params


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_sysdate_is_read_at_each_execution(dialect):
    cond = compile_sql("enq_time < SYSDATE", QUEUE, dialect)
    first = cond.params[0]
    later = cond.params[0]
    if dialect == "sqlite":
        first, later = from_sqlite(first, "D"), from_sqlite(later, "D")
    assert isinstance(first, datetime) and first <= later <= datetime.now()


@pytest.mark.parametrize("text, code", [
    ("nosuch = 1", 904), ("priority = 1 AND SUBSTR(corrid) = 'x'", 938),
    ("corrid LIKE 'a' ESCAPE 'xy'", 1425), (r"corrid LIKE 'a\b' ESCAPE '\'", 1424),
    ("NO_SUCH_FN(priority) = 1", 904), ("priority", 920),
])
def test_compile_time_errors_are_the_python_compilers(text, code):
    for dialect in ("sqlite", "postgresql"):
        with pytest.raises(DatabaseError) as err:
            compile_sql(text, QUEUE, dialect)
        assert err.value.code == code


@pytest.mark.parametrize("text, dialects", [
    (":msg.get_region() = 'EU'", ("sqlite", "postgresql")),           # a member call
    ("TO_DATE(corrid, 'YYYY-MM-DD') > enq_time", ("postgresql",)),    # Python's date parsing
    ("enq_time = corrid", ("postgresql",)),                            # CHAR -> DATE at run time
    ("TO_CHAR(priority, '999') = ' 5'", ("postgresql",)),              # number format models
    ("corrid LIKE 'A%' ESCAPE corrid", ("postgresql",)),               # run-time escape
    ("INSTR(corrid, 'R', -1) = 3", ("postgresql",)),
])
def test_what_is_not_compilable_says_so(text, dialects):
    for dialect in dialects:
        with pytest.raises(NotCompilable) as err:
            compile_sql(text, MappingResolver({**QUEUE.names, ":MSG": ("M", "CHAR")}), dialect)
        assert err.value.reason
    if "sqlite" not in dialects:  # SQLite runs the Python implementations instead
        compile_sql(text, QUEUE, "sqlite")


def test_sqlite_handles_dates_and_run_time_patterns_with_python_semantics(lite):
    lite.execute("UPDATE qt SET CORRID = '2024-01-02' WHERE msgid = 1")
    cond = compile_sql("TO_DATE(corrid, 'YYYY-MM-DD') > enq_time AND corrid LIKE corrid ESCAPE '!'",
                       QUEUE, "sqlite")
    assert _select(lite, cond, "sqlite") == [1]  # 'ORDER-3' is no date: NULL, not an abort


def test_lcr_rules_run_on_an_lcr_table(lite):
    lite.execute(f"CREATE TABLE lcrs (id INTEGER, {sql_columns('sqlite')})")
    lite.execute("INSERT INTO lcrs (id, lcr_kind, object_owner, object_name, new_values) VALUES "
                 "(1, 'ROW', 'HR', 'REGIONS', '{\"REGION_ID\": \"2\"}'), (2, 'DDL', 'HR', 'REGIONS', NULL)")
    cond = compile_sql(":dml.get_object_owner() = 'HR' AND :dml.is_null_tag() = 'Y' AND "
                       ":dml.get_value('NEW', 'region_id').AccessNumber() = 2", LcrResolver(), "sqlite")
    assert [r[0] for r in lite.execute(f"SELECT id FROM lcrs WHERE {cond.sql}", cond.params)] == [1]


@pytest.mark.parametrize("fmt, pg", [
    ("DD-MON-YYYY", "DD-MON-YYYY"), ("fmMonth DD", "FMMonth FMDD"), ("RR", "YY"),
    ('YYYY"T"HH24', 'YYYY"T"HH24'), ("HH:MI am", "HH:MI am"), ("FF", "FF6"), ("DDX", 'DD"X"'),
])
def test_oracle_date_formats_for_postgresql(fmt, pg):
    assert oracle_to_pg_format(fmt) == pg


def test_mixed_case_am_is_not_translated():
    with pytest.raises(NotCompilable):
        oracle_to_pg_format("HH Am")


def _deepest() -> list[tuple[str, str, list[int]]]:
    """(the deepest condition of a kind the parser takes, one level more, the messages it
    selects).  100 nested parentheses overflowed Python's stack in the parser (RecursionError
    out of a dequeue condition or CREATE_RULE), a chain of 1,000 '+' in the compilers."""
    n = MAX_NESTING
    chain = MAX_DEPTH - 1      # terms: Compare + (terms - 1) Binary nodes + a leaf
    return [
        ("(" * n + "priority = 1" + ")" * n, "(" * (n + 1) + "priority = 1" + ")" * (n + 1), [1]),
        ("NOT " * n + "priority = 2", "NOT " * (n + 1) + "priority = 2", [3]),
        ("corrid = " + "UPPER(" * n + "'order-1'" + ")" * n,
         "corrid = " + "UPPER(" * (n + 1) + "'order-1'" + ")" * (n + 1), [1]),
        ("priority = " + " + ".join(["0"] * (chain - 1) + ["1"]),
         "priority = " + " + ".join(["0"] * chain + ["1"]), [1]),
    ]


@pytest.mark.parametrize("deepest, deeper, expected", _deepest())
def test_the_deepest_conditions_compile_and_one_level_more_is_refused(lite, deepest, deeper, expected):
    from sluice.errors import NotSupportedError
    from sluice.rules import DictResolver, compile_condition

    assert _select(lite, compile_sql(deepest, QUEUE, "sqlite"), "sqlite") == expected
    python = compile_condition(deepest, DictResolver())
    assert [m for m, p, c, _ in MESSAGES if python({"PRIORITY": p, "CORRID": c or None})] == expected
    with pytest.raises(NotSupportedError, match=r"SLU-00001: not supported: a condition nested more than"):
        compile_sql(deeper, QUEUE, "sqlite")
