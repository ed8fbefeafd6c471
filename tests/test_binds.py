"""cursor.execute binds values as python-oracledb does (its user guide's first example is
``cursor.execute("insert … values (:dept_id, :dept_name)", [280, "Facility"])``):
a list binds by position — every placeholder occurrence in SQL, each name once in
PL/SQL —, a dict or keywords by name.  A wrong count is DPY-4009, a name the statement
does not use DPY-4008, both a list and keywords DPY-2005; nothing runs then.  Before,
a list bound only placeholders named :1, :2 … (ORA-01008 for any other name) and extra
values were ignored."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import create_table


def _one(cur, sql, binds=None, **kw):
    cur.execute(sql, binds, **kw)
    return cur.fetchall()


def test_a_list_binds_by_position_whatever_the_names(conn):
    cur = conn.cursor()
    assert _one(cur, "SELECT :dept_id, :dept_name FROM DUAL", [280, "Facility"]) == [(280, "Facility")]
    assert _one(cur, "SELECT :b, :a FROM DUAL", (1, 2)) == [(1, 2)]
    # in SQL each occurrence is a position, a name used twice takes two values
    assert _one(cur, "SELECT :x, :x FROM DUAL", [5, 6]) == [(5, 6)]
    assert _one(cur, "SELECT :1, ':2', :3 FROM DUAL /* :4 */", ["a", "b"]) == [("a", ":2", "b")]
    # by name, a name used twice takes one value
    assert _one(cur, "SELECT :x, :X FROM DUAL", {"x": 7}) == [(7, 7)]
    assert _one(cur, "SELECT :x FROM DUAL", x=8) == [(8,)]


def test_a_list_binds_each_plsql_name_once(conn):
    cur = conn.cursor()
    cur.execute("BEGIN DBMS_OUTPUT.PUT_LINE(:msg || :n || :msg); END;", ["<", 1])
    assert cur.output == ["<1<"]
    cur.execute("BEGIN DBMS_OUTPUT.PUT_LINE(:a); END;", {":A": "x"})
    assert cur.output == ["x"]


def test_dml_binds_by_position(conn, dsn):
    create_table(dsn, "CREATE TABLE departments (department_id INTEGER, department_name TEXT)")
    cur = conn.cursor()
    cur.execute("INSERT INTO departments (department_id, department_name) VALUES (:dept_id, :dept_name)",
                [280, "Facility"])
    conn.commit()
    assert _one(cur, "SELECT department_id, department_name FROM departments") == [(280, "Facility")]


@pytest.mark.parametrize("sql, binds, kw, code", [
    ("SELECT :1 FROM DUAL", [1, 2], {}, "DPY-4009"),
    ("SELECT :x, :x FROM DUAL", [1], {}, "DPY-4009"),
    ("SELECT 1 FROM DUAL", [1], {}, "DPY-4009"),
    ("BEGIN DBMS_OUTPUT.PUT_LINE(:a || :a); END;", [1, 2], {}, "DPY-4009"),
    ("SELECT :a FROM DUAL", {"a": 1, "b": 2}, {}, "DPY-4008"),
    ("SELECT 1 FROM DUAL", None, {"a": 1}, "DPY-4008"),
    ("BEGIN DBMS_OUTPUT.PUT_LINE(:a); END;", {"a": 1, "b": 2}, {}, "DPY-4008"),
    ("SELECT :a FROM DUAL", [1], {"a": 1}, "DPY-2005"),
    ("SELECT :a FROM DUAL", {"a": 1}, {"a": 1}, "DPY-2005"),
    ("SELECT :a, :b FROM DUAL", {"a": 1}, {}, "ORA-01008"),
    ("SELECT :a FROM DUAL", [], {}, "ORA-01008"),
])
def test_binds_that_do_not_match_are_refused(conn, sql, binds, kw, code):
    with pytest.raises(sluice.Error) as e:
        conn.cursor().execute(sql, binds, **kw)
    assert e.value.full_code == code


def test_a_refused_bind_changes_nothing(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER)")
    cur = conn.cursor()
    for binds in ([1, 2], {"a": 1, "b": 2}):
        with pytest.raises(sluice.DatabaseError):
            cur.execute("INSERT INTO t (a) VALUES (:a)", binds)
    with pytest.raises(sluice.DatabaseError):
        cur.execute("BEGIN DBMS_AQADM.CREATE_QUEUE_TABLE(:qt, 'RAW'); END;", ["QT", "extra"])
    conn.commit()
    assert _one(cur, "SELECT COUNT(*) FROM t") == [(0,)]
    assert _one(cur, "SELECT COUNT(*) FROM USER_QUEUE_TABLES") == [(0,)]
