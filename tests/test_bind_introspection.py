"""python-oracledb's ``cursor.bindnames()`` and ``cursor.bindvars``: the prepared
statement's bind names (each once, in the order they first appear, upper-cased;
DPY-2002 before a statement is prepared) and the variables the last statement was
bound with (a list by position, a dict by name, the caller's own ``cursor.var()`` kept).
Both backends."""

import pytest

import sluice
from sluice.fetchvars import Var
from tests.sqlhelpers import create_table


def test_bindnames_of_sql_and_plsql(conn):
    cur = conn.cursor()
    with pytest.raises(sluice.Error) as e:
        cur.bindnames()
    assert e.value.full_code == "DPY-2002"
    cur.prepare("SELECT :b, :a, :B, :c1 FROM dual WHERE ':x' = :a -- :y")
    assert cur.bindnames() == ["B", "A", "C1"]
    cur.prepare("BEGIN :out := :In || :in; DBMS_OUTPUT.PUT_LINE(:x); END;")
    assert cur.bindnames() == ["OUT", "IN", "X"]
    cur.prepare("SELECT 1 FROM dual")
    assert cur.bindnames() == []
    cur.execute("SELECT :1, :2 FROM dual", [1, 2])
    assert cur.bindnames() == ["1", "2"]            # the statement executed last counts too


def test_bindvars_by_position_and_by_name(conn):
    cur = conn.cursor()
    assert cur.bindvars == []
    cur.execute("SELECT :a, :b FROM dual", [1, "x"])
    assert isinstance(cur.bindvars, list)
    assert [v.getvalue() for v in cur.bindvars] == [1, "x"]
    assert all(isinstance(v, Var) for v in cur.bindvars)
    out = cur.var(int)
    cur.execute("BEGIN :res := :val * 2; END;", val=21, res=out)
    assert set(cur.bindvars) == {"val", "res"}                   # the caller's names
    assert cur.bindvars["res"] is out and out.getvalue() == 42
    assert cur.bindvars["val"].getvalue() == 21


def test_bindvars_of_executemany_and_callfunc(conn, dsn):
    create_table(dsn, "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
    cur = conn.cursor()
    cur.executemany("INSERT INTO t (a, b) VALUES (:1, :2)", [(1, "a"), (2, "b")])
    n, s = cur.bindvars
    assert [n.getvalue(0), n.getvalue(1), s.getvalue(1)] == [1, 2, "b"]
    assert cur.callfunc("UTL_RAW.LENGTH", int, [b"abc"]) == 3
    ret, arg = cur.bindvars
    assert (ret.getvalue(), arg.getvalue()) == (3, b"abc")


def test_bindvars_hold_the_values_bound_not_later_changes(conn):
    """bindvars are made when first read (building a Var per value on every execute was a cost
    on the hot path): they still show the values the statement was bound with."""
    cur = conn.cursor()
    binds = {"a": 1}
    cur.execute("SELECT :a FROM dual", binds)
    binds["a"] = 99
    assert cur.bindvars["a"].getvalue() == 1
    rows = [[1], [2]]
    cur.executemany("SELECT :1 FROM dual", rows)
    rows.append([3])
    var = cur.bindvars[0]
    assert var.num_elements == 2 and [var.getvalue(i) for i in range(2)] == [1, 2]
