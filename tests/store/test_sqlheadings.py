"""Oracle's column names from a statement's top-level select list (store/sqlheadings.py),
without a database: the select list of a WITH statement's main query, of a compound
query's first branch (also in parentheses), up to GROUP/ORDER BY but through WITHIN
GROUP (ORDER BY …); a * keeps the database's names (PostgreSQL's quoted mixed case too);
names that cannot be matched to the items fall back to the database's, upper-cased."""

from __future__ import annotations

import pytest

from sluice.objtypes import DB_TYPE_DATE, DB_TYPE_TIMESTAMP_TZ
from sluice.store.sqlheadings import oracle_headings
from sluice.store.sqloracle import oracle_words


def _headings(sql, names, sqlite=False):
    return oracle_headings(sql, oracle_words(sql, "SCOTT", sqlite=sqlite), names, sqlite)


@pytest.mark.parametrize("sql, names, expected", [
    ("SELECT msgid, t.q_name FROM aq$q_qt t", ["msgid", "q_name"], ["MSGID", "Q_NAME"]),
    ('SELECT t."Mixed", "lower" FROM t', ["Mixed", "lower"], ["Mixed", "lower"]),
    ("WITH x AS (SELECT 1 AS a FROM dual) SELECT a, a + 1 FROM x", ["a", "?column?"], ["A", "A+1"]),
    ("(SELECT 1 AS a FROM dual) UNION (SELECT 2 FROM dual)", ["a"], ["A"]),
    ("SELECT DISTINCT owner, COUNT(*) FROM t GROUP BY owner ORDER BY 2", ["owner", "count"],
     ["OWNER", "COUNT(*)"]),
    ("SELECT LISTAGG(x, ',') WITHIN GROUP (ORDER BY x) AS l FROM t", ["l"], ["L"]),
    ("SELECT a.*, 1 FROM t a", ["x", "Y", "?column?"], ["X", "Y", "1"]),
    ("SELECT *, * FROM t", ["x", "y"], ["X", "Y"]),             # which * has which: not known
    ("SELECT :b /* a bind */ FROM dual", ["?column?"], [":B"]),
    ("SELECT USER, 7/2 FROM dual", ["USER", "7/2"], ["USER", "7/2"]),
])
def test_headings(sql, names, expected):
    assert _headings(sql, names)[0] == expected


def test_sqlite_names_of_a_star_are_upper_cased():
    assert _headings("SELECT * FROM t", ["id", "Name"], sqlite=True)[0] == ["ID", "NAME"]


def test_clock_items_are_typed_as_oracle_types_them():
    sql = ("SELECT SYSDATE, SYSDATE + 1 d, CURRENT_TIMESTAMP - INTERVAL '1' HOUR, LOCALTIMESTAMP, "
           "SYSDATE - enq_time FROM aq$q_qt")
    assert _headings(sql, ["a", "b", "c", "d", "e"])[1] == {0: DB_TYPE_DATE, 1: DB_TYPE_DATE,
                                                           2: DB_TYPE_TIMESTAMP_TZ}
