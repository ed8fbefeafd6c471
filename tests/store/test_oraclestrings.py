"""The rewrite of Oracle's empty-string rules (store/oraclestrings.py) as text: what it writes,
what it leaves, that a text is read once (tests/test_oracle_strings.py runs them on both stores)."""

from __future__ import annotations

from sluice.store.oraclestrings import empty_binds_null, oracle_strings
from sluice.store.sqloracle import aliased, tokens


def test_a_chain_as_coalesced_operands():
    assert oracle_strings("SELECT a || b x FROM t", True, tokens, aliased) == \
        "SELECT NULLIF(COALESCE(a, '') || COALESCE(b, ''), '') x FROM t"
    assert oracle_strings("SELECT a || b FROM t", False, tokens, aliased) == \
        "SELECT NULLIF(COALESCE(CAST(a AS TEXT), '') || COALESCE(CAST(b AS TEXT), ''), '') AS \"A||B\" FROM t"
    # Oracle's precedence: n + 1 is one operand, 2 * c another; the sum of a chain (a number,
    # ORA-01722 when its text is none) and d
    assert oracle_strings("SELECT n + 1 || 2 * c + d x FROM t", True, tokens, aliased) == \
        "SELECT TO_NUMBER(NULLIF(COALESCE(n + 1, '') || COALESCE(2 * c, ''), '')) + d x FROM t"
    assert oracle_strings("SELECT 'a' || 1 - '2' x FROM t", False, tokens, aliased) == \
        "SELECT CAST(NULLIF(COALESCE(CAST('a' AS TEXT), '') || COALESCE(CAST(1 AS TEXT), ''), '') AS NUMERIC) - 2 x FROM t"


def test_nested_chains_and_calls():
    assert oracle_strings("SELECT NVL(a || b, c) || d FROM t", True, tokens, aliased) == (
        "SELECT NULLIF(COALESCE(NVL(NULLIF(COALESCE(a, '') || COALESCE(b, ''), ''), c), '') "
        "|| COALESCE(d, ''), '') AS \"NVL(A||B,C)||D\" FROM t")
    assert oracle_strings("SELECT CONCAT(a, b) c FROM t", True, tokens, aliased) == \
        "SELECT NULLIF(COALESCE(a, '') || COALESCE(b, ''), '') c FROM t"
    assert oracle_strings("SELECT 1 FROM t WHERE REPLACE(a, 'b') = c", True, tokens, aliased) == \
        "SELECT 1 FROM t WHERE NULLIF(REPLACE(a, COALESCE('b', ''), ''), '') = c"


def test_what_is_not_plain_is_left():
    for sql in ("SELECT a || b AT TIME ZONE 'UTC' FROM t", "SELECT PRIOR a || b FROM t", "SELECT a FROM t",
                "SELECT '2026-01-02 00:00:00' - d FROM t", "SELECT '1'::int + 1 FROM t"):
        assert oracle_strings(sql, True, tokens, aliased) == sql


def test_a_text_is_read_once():
    sql = "SELECT x || 'once' FROM t"
    assert oracle_strings(sql, True, tokens, aliased) is oracle_strings(sql, True, tokens, aliased)


def test_empty_binds():
    binds = {"a": 1, "b": "x"}
    assert empty_binds_null(binds) is binds
    assert empty_binds_null({"a": "", "b": b"", "c": " "}) == {"a": None, "b": None, "c": " "}
    assert empty_binds_null(["", 0]) == [None, 0]
