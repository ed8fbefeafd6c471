"""Cursor variables (REF CURSOR) in blocks and between blocks and python-oracledb's API, on both
stores, as Oracle and python-oracledb run them (plsql/refcursors.py, sluice/refcursors.py):

* ``SYS_REFCURSOR`` and ``TYPE rc IS REF CURSOR [RETURN …]`` variables; ``OPEN cv FOR
  select …`` and ``OPEN cv FOR 'text' USING …``; FETCH INTO variables / a record / BULK
  COLLECT [LIMIT]; CLOSE; the attributes; re-OPEN; ORA-01001 for one never opened;
* a cursor or ``cursor.var(DB_TYPE_CURSOR)`` bound to a block takes the cursor it opens;
  DPY-3009 / DPY-3027 / DPY-1006 / DPY-4025 as python-oracledb raises them;
* ``DBMS_SQL.RETURN_RESULT`` and ``cursor.getimplicitresults()`` (DPY-1004 without);
* cursors FOR UPDATE in a block: ORA-01002 after the transaction ends, ``WHERE CURRENT OF``
  (PLS-00404, ORA-01410, ORA-01001)."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import filled_table, query_rows, raised_code


T = ("CREATE TABLE t (id INTEGER, name VARCHAR(20))", "INSERT INTO t (id, name) VALUES (:1, :2)",
     [(1, "ann"), (2, "bob"), (3, "cy")])
ALL_ROWS = "SELECT id, name FROM t ORDER BY id"


@pytest.fixture
def cur(conn, dsn):
    """A cursor of ``conn``, whose table T holds ann, bob and cy (ids 1 to 3)."""
    return filled_table(conn, dsn, *T).cursor()


def _output(cur, block, **binds):
    """The DBMS_OUTPUT lines ``block`` wrote."""
    return cur.execute(block, **binds) or cur.output


# ---------------------------------------------------------------- in a block
def test_open_for_fetch_into_variables_and_a_record_then_close(cur):
    lines = _output(cur, """
        declare
          c sys_refcursor;
          r t%rowtype;
          n integer;
          s varchar2(20);
        begin
          open c for select id, name from t where id >= :low order by id;
          fetch c into n, s;
          dbms_output.put_line(n || s || ' ' || c%rowcount);
          fetch c into r;
          dbms_output.put_line(r.id || r.name || ' ' || c%rowcount);
          fetch c into r;
          fetch c into r;
          if c%notfound and not c%found then dbms_output.put_line('done ' || c%rowcount); end if;
          close c;
          if not c%isopen then dbms_output.put_line('closed'); end if;
        end;""", low=1)
    assert lines == ["1ann 1", "2bob 2", "done 3", "closed"]


def test_dynamic_open_for_using_binds_by_position(cur):
    lines = _output(cur, """
        declare
          c sys_refcursor;
          lo integer := 1;
          n integer;
        begin
          open c for 'select id from t where id > :a and name <> :b order by id' using lo, 'cy';
          loop
            fetch c into n;
            exit when c%notfound;
            dbms_output.put_line(n);
          end loop;
          close c;
        end;""")
    assert lines == ["2"]


def test_a_declared_ref_cursor_type_bulk_collect_with_limit(cur):
    cur.execute("CREATE TYPE num_list AS TABLE OF NUMBER")
    cur.execute("CREATE TYPE name_list AS TABLE OF VARCHAR2(20)")
    lines = _output(cur, """
        declare
          type rc is ref cursor return t%rowtype;
          c rc;
          ids num_list;
          names name_list;
        begin
          open c for select id, name from t order by id;
          fetch c bulk collect into ids, names limit 2;
          dbms_output.put_line(ids.count || ' ' || names(2) || ' ' || c%rowcount);
          fetch c bulk collect into ids, names limit 2;
          dbms_output.put_line(ids.count || ' ' || names(1) || ' ' || c%rowcount);
          if c%notfound then dbms_output.put_line('notfound'); end if;
          close c;
        end;""")
    assert lines == ["2 bob 2", "1 cy 3", "notfound"]


def test_reopen_and_assignment_share_the_cursor(cur):
    lines = _output(cur, """
        declare c1 sys_refcursor; c2 sys_refcursor; n integer;
        begin
          open c1 for select id from t order by id;
          c2 := c1;
          fetch c2 into n;
          dbms_output.put_line(n || ' ' || c1%rowcount);
          open c1 for select id from t order by id desc;     -- open: closed and opened again
          fetch c2 into n;
          dbms_output.put_line(n || ' ' || c2%rowcount);
        end;""")
    assert lines == ["1 1", "3 1"]


@pytest.mark.parametrize("statement", ["fetch c into n", "close c",
                                       "dbms_output.put_line(c%rowcount)",
                                       "if c%found then null; end if"])
def test_a_cursor_variable_never_opened_is_invalid_cursor(cur, statement):
    assert raised_code(cur.execute, f"declare c sys_refcursor; n integer; begin {statement}; end;") \
        == "ORA-01001"
    lines = _output(cur, """
        declare c sys_refcursor;
        begin
          if not c%isopen then dbms_output.put_line('not open'); end if;
          open c for select id from t;
          close c;
          begin
            close c;
          exception when invalid_cursor then dbms_output.put_line('invalid cursor');
          end;
        end;""")
    assert lines == ["not open", "invalid cursor"]


def test_open_for_refuses_what_is_no_cursor_variable_or_no_query(cur):
    with pytest.raises(sluice.DatabaseError, match="PLS-00382") as e:
        cur.execute("declare n integer; begin delete from t; open n for select id from t; end;")
    assert e.value.full_code == "ORA-06550"
    assert raised_code(cur.execute, "declare c sys_refcursor; begin "
                       "open c for 'delete from t'; end;") == "ORA-00900"
    assert len(query_rows(cur.connection, ALL_ROWS)) == 3                  # nothing was deleted


# ------------------------------------------------------ python-oracledb's side
def test_db_type_cursor_is_python_oracledbs():
    assert sluice.CURSOR is sluice.DB_TYPE_CURSOR
    assert sluice.DB_TYPE_CURSOR.num == 2021 and sluice.DB_TYPE_CURSOR.name == "DB_TYPE_CURSOR"


def test_a_bound_cursor_takes_the_cursor_the_block_opens(cur):
    ref_cursor = cur.connection.cursor()
    assert ref_cursor.description is None
    cur.execute("""
        begin
          open :rc for select id, name from t where id between :lo and :hi order by id;
        end;""", rc=ref_cursor, lo=2, hi=3)
    assert cur.bindvars["rc"].type is sluice.DB_TYPE_CURSOR and cur.bindvars["rc"].getvalue() is ref_cursor
    assert [d[0] for d in ref_cursor.description] == ["ID", "NAME"]
    assert ref_cursor.description[0][1] is sluice.DB_TYPE_NUMBER
    assert ref_cursor.fetchone() == (2, "bob")
    assert list(ref_cursor) == [(3, "cy")]
    ref_cursor.close()
    again = cur.connection.cursor()
    again.arraysize = 2
    cur.execute("begin open :rc for select id from t order by id; end;", [again])
    assert again.fetchmany() == [(1,), (2,)] and again.fetchall() == [(3,)]


def test_a_cursor_var_gets_the_cursor_the_block_assigns(cur):
    var = cur.var(sluice.DB_TYPE_CURSOR)
    skipped = cur.var(str)
    cur.execute("""
        declare c sys_refcursor;
        begin
          open c for select name from t where id >= :lo order by id;
          fetch c into :skipped;         -- the first row stays with the block
          :rc := c;
        end;""", lo=1, rc=var, skipped=skipped)
    assert skipped.getvalue() == "ann"
    ref_cursor = var.getvalue()
    assert ref_cursor.fetchall() == [("bob",), ("cy",)]
    assert var.getvalue() is ref_cursor
    cur.execute("begin open :rc for select 'x' from dual where 1 = 0; end;", rc=var)
    assert var.getvalue() is ref_cursor and ref_cursor.fetchall() == []


def test_a_cursor_bound_but_never_opened_is_dpy_4025(cur):
    ref_cursor = cur.connection.cursor()
    cur.execute("begin if 1 = 0 then open :rc for select id from t; end if; end;", rc=ref_cursor)
    assert raised_code(ref_cursor.fetchall) == "DPY-4025"


def test_cursor_binds_python_oracledb_refuses(cur, dsn):
    block = "begin open :rc for select 1 from dual; end;"
    assert raised_code(cur.execute, block, rc=cur) == "DPY-3009"
    closed = cur.connection.cursor()
    closed.close()
    assert raised_code(cur.execute, block, rc=closed) == "DPY-1006"
    with sluice.connect(dsn) as other:
        assert raised_code(cur.execute, block, rc=other.cursor()) == "DPY-3027"


def test_callproc_takes_a_cursor_and_gives_it_back(cur):
    rows = cur.connection.cursor()
    rows.execute("select id from t order by id")
    assert rows.fetchone() == (1,)
    assert cur.callproc("dbms_sql.return_result", [rows]) == [rows]    # (an IN cursor)
    (returned,) = cur.getimplicitresults()
    assert returned.fetchall() == [(2,), (3,)]


def test_implicit_results_of_dbms_sql_return_result(cur):
    cur.execute("""
        declare
          c1 sys_refcursor; c2 sys_refcursor; n integer;
        begin
          open c1 for select id from t order by id;
          fetch c1 into n;                 -- returned: the rows not fetched yet
          dbms_sql.return_result(c1);
          open c2 for select name, id from t where id = 3;
          dbms_sql.return_result(c2);
          open c1 for select 'again' from dual;   -- a new cursor for the variable
          dbms_sql.return_result(c1, true);
        end;""")
    first, second, third = cur.getimplicitresults()
    assert [n for n, in first] == [2, 3]
    assert [d[0] for d in second.description] == ["NAME", "ID"] and second.fetchall() == [("cy", 3)]
    assert third.fetchall() == [("again",)]
    cur.execute("begin null; end;")
    assert raised_code(cur.getimplicitresults) == "DPY-1004"
    assert raised_code(cur.connection.cursor().getimplicitresults) == "DPY-1004"
    assert raised_code(cur.execute, "declare c sys_refcursor; begin dbms_sql.return_result(c); end;") \
        == "ORA-01001"


# ---------------------------------------------------------- FOR UPDATE cursors
@pytest.mark.parametrize("block", [
    "declare cursor c is select id from t for update; n integer;"
    " begin open c; fetch c into n; commit; fetch c into n; end;",
    "declare c sys_refcursor; n integer;"
    " begin open c for select id from t for update; fetch c into n; rollback; fetch c into n; end;",
    "begin for r in (select id from t for update) loop commit; end loop; end;",
])
def test_fetch_across_the_end_of_the_transaction_is_ora_01002(cur, block):
    assert raised_code(cur.execute, block) == "ORA-01002"


def test_update_and_delete_where_current_of(cur):
    cur.execute("""
        declare
          cursor c is select id, name from t where id >= 2 order by id for update of name;
          r t%rowtype;
        begin
          open c;
          loop
            fetch c into r;
            exit when c%notfound;
            update t set name = upper(name) where current of c;
          end loop;
          close c;
          for r in c loop
            if r.id = 3 then
              delete from t where current of c;
            end if;
          end loop;
        end;""")
    assert query_rows(cur.connection, ALL_ROWS) == [(1, "ann"), (2, "BOB")]


@pytest.mark.parametrize("block, code", [
    ("declare cursor c is select id from t; n integer;"
     " begin open c; fetch c into n; delete from t where current of c; end;", "ORA-06550"),
    ("declare cursor c is select id from t for update; n integer;"
     " begin open c; delete from t where current of c; end;", "ORA-01410"),
    ("declare cursor c is select id from t for update; n integer;"
     " begin open c; fetch c into n; fetch c into n; fetch c into n; fetch c into n;"
     " delete from t where current of c; end;", "ORA-01410"),
    ("declare cursor c is select id from t for update;"
     " begin delete from t where current of c; end;", "ORA-01001"),
])
def test_where_current_of_errors_change_nothing(cur, block, code):
    with pytest.raises(sluice.DatabaseError) as e:
        cur.execute(block.replace(" begin ", " begin delete from t where id = 1; ", 1))
    assert e.value.full_code == code
    if code == "ORA-06550":
        assert "PLS-00404" in str(e.value)
    assert len(query_rows(cur.connection, ALL_ROWS)) == 3
