"""Static SQL inside PL/SQL blocks run through ``cursor.execute("begin … end;")``, on both
stores, as Oracle's PL/SQL runs it (plsql/staticsql.py):

* ``INSERT`` / ``UPDATE`` / ``DELETE … RETURNING … INTO`` local variables or bind variables
  (``cursor.var()``); more than one row is ORA-01422 (TOO_MANY_ROWS) and the statement is
  undone, none leaves the variables NULL; ``RETURNING … BULK COLLECT INTO`` a collection;
* ``SQL%ROWCOUNT`` / ``%FOUND`` / ``%NOTFOUND`` / ``%ISOPEN`` after DML and SELECT INTO;
* ``SELECT … INTO``: no row ORA-01403 (NO_DATA_FOUND), several ORA-01422;
* a block's variables in the statement are bound (a column of the same name wins, as in
  Oracle); bad statements are ORA-06550 at compile time with nothing run."""

from __future__ import annotations

import pytest

import sluice
from sluice.plsql.parser import parse_block
from tests.sqlhelpers import create_table, raised_code


@pytest.fixture
def cur(conn, dsn):
    create_table(dsn, "CREATE TABLE t (id INTEGER, name VARCHAR(20))")
    c = conn.cursor()
    c.executemany("INSERT INTO t (id, name) VALUES (:1, :2)", [(1, "ann"), (2, "bob"), (3, "cy")])
    conn.commit()
    return c


def _rows(cur):
    cur.execute("SELECT id, name FROM t ORDER BY id")
    return cur.fetchall()


def _output(cur, block, *args, **kw):
    """The DBMS_OUTPUT lines ``block`` writes."""
    cur.execute(block, *args, **kw)
    return cur.output


# -------------------------------------------------------- RETURNING … INTO
def test_insert_returning_into_a_bind_python_oracledb_style(cur):
    out = cur.var(int)
    cur.execute("begin insert into t (id, name) values (:1, :2) returning id into :3; end;",
                [5, "x", out])
    assert out.getvalue() == 5                      # a block's OUT bind: the value, not a list
    assert _rows(cur)[-1] == (5, "x")


def test_returning_two_columns_into_local_variables(cur):
    lines = _output(cur, """
        declare
          v_id integer;
          v_name varchar2(20);
        begin
          update t set name = upper(name) where id = 2 returning id, name into v_id, v_name;
          dbms_output.put_line(v_id || ':' || v_name || ':' || sql%rowcount);
        end;""")
    assert lines == ["2:BOB:1"]
    assert _rows(cur)[1] == (2, "BOB")


def test_delete_returning_into_binds_by_name(cur):
    out_name = cur.var(str)
    cur.execute("begin delete from t where id = :id returning name into :n; end;", id=3, n=out_name)
    assert out_name.getvalue() == "cy"
    assert [r[0] for r in _rows(cur)] == [1, 2]


def test_returning_no_row_leaves_the_variables_null_without_an_exception(cur):
    out = cur.var(int)
    out.setvalue(0, 42)
    lines = _output(cur, """
        declare v integer := 7;
        begin
          update t set name = 'z' where id = 99 returning id into v;
          update t set name = 'z' where id = 99 returning id into :o;
          dbms_output.put_line(nvl(to_char(v), 'null') || ' ' || sql%rowcount);
        end;""", o=out)
    assert lines == ["null 0"]
    assert out.getvalue() is None


def test_more_than_one_row_is_too_many_rows_and_the_statement_is_undone(cur):
    out = cur.var(int)
    block = ("begin insert into t (id, name) values (10, 'kept'); "
             "update t set name = 'gone' where id < 3 returning id into :o; end;")
    assert raised_code(cur.execute, block, o=out) == "ORA-01422"
    # the block failed unhandled: all of it is undone, the transaction's earlier work kept
    assert _rows(cur) == [(1, "ann"), (2, "bob"), (3, "cy")]
    lines = _output(cur, """
        declare v integer;
        begin
          insert into t (id, name) values (10, 'kept');
          begin
            update t set name = 'gone' where id < 3 returning id into v;
          exception when too_many_rows then
            dbms_output.put_line('too many: ' || nvl(to_char(v), 'null'));
          end;
        end;""")
    assert lines == ["too many: null"]
    # handled: only the UPDATE is undone (statement-level rollback), the INSERT stays
    assert _rows(cur) == [(1, "ann"), (2, "bob"), (3, "cy"), (10, "kept")]


def test_returning_bulk_collect_into_a_collection(cur, conn):
    cur.execute("CREATE TYPE num_list AS TABLE OF NUMBER")
    lines = _output(cur, """
        declare ids num_list;
        begin
          update t set name = lower(name) where id >= 2 returning id bulk collect into ids;
          dbms_output.put_line(ids.count || ' ' || sql%rowcount);
          dbms_output.put_line(least(ids(1), ids(2)) || ' ' || greatest(ids(1), ids(2)));
          delete from t where id = 99 returning id bulk collect into ids;
          dbms_output.put_line(ids.count);
        end;""")
    assert lines == ["2 2", "2 3", "0"]


def test_local_variables_are_bound_in_the_statement(cur):
    lines = _output(cur, """
        declare
          v_id integer := 7;
          v_name varchar2(20) := 'seven';
          v_out integer;
        begin
          insert into t (id, name) values (v_id, v_name) returning id * 2 into v_out;
          dbms_output.put_line(v_out);
          update t set name = v_name || '!' where id = v_id;
          delete from t where name = v_name;
          dbms_output.put_line(sql%rowcount);
        end;""")
    assert lines == ["14", "0"]
    assert _rows(cur)[-1] == (7, "seven!")


# ------------------------------------------------------------ SQL% attributes
def test_sql_cursor_attributes_after_dml(cur):
    lines = _output(cur, """
        begin
          dbms_output.put_line(nvl(to_char(sql%rowcount), 'null'));
          if sql%found is null and sql%notfound is null and not sql%isopen then
            dbms_output.put_line('none yet');
          end if;
          update t set name = 'x' where id <= 2;
          dbms_output.put_line(sql%rowcount);
          if sql%found and not sql%notfound then dbms_output.put_line('found'); end if;
          delete from t where id = 99;
          if sql%notfound then dbms_output.put_line('not found ' || sql%rowcount); end if;
          execute immediate 'delete from t where id = 3';
          dbms_output.put_line(sql%rowcount);
        end;""")
    assert lines == ["null", "none yet", "2", "found", "not found 0", "1"]


# ---------------------------------------------------------------- SELECT INTO
def test_select_into(cur):
    name = cur.var(str)
    lines = _output(cur, """
        declare v_name varchar2(20); v_id integer := 2; n integer;
        begin
          select name into v_name from t where id = v_id;
          select count(*) into n from t;
          select name into :name from t where id = 1;
          dbms_output.put_line(v_name || ' ' || n || ' ' || sql%rowcount);
        end;""", name=name)
    assert lines == ["bob 3 1"]
    assert name.getvalue() == "ann"


def test_select_into_no_row_and_too_many_rows(cur):
    assert raised_code(cur.execute, "declare v integer; begin select id into v from t where id > 5; end;") \
        == "ORA-01403"
    assert raised_code(cur.execute, "declare v integer; begin select id into v from t; end;") == "ORA-01422"
    lines = _output(cur, """
        declare v integer;
        begin
          begin
            select id into v from t where id > 5;
          exception when no_data_found then
            dbms_output.put_line('none ' || sql%rowcount);
          end;
          begin
            select id into v from t;
          exception when too_many_rows then
            dbms_output.put_line('many ' || sql%rowcount);
          end;
        end;""")
    assert lines == ["none 0", "many 1"]


def test_select_bulk_collect_into(cur):
    cur.execute("CREATE TYPE name_list AS TABLE OF VARCHAR2(20)")
    lines = _output(cur, """
        declare names name_list;
        begin
          select name bulk collect into names from t order by id;
          dbms_output.put_line(names.count || ' ' || names(3) || ' ' || sql%rowcount);
        end;""")
    assert lines == ["3 cy 3"]


# ------------------------------------------------------------- bad statements
@pytest.mark.parametrize("block, message", [
    ("begin select 1 from dual; end;", "PLS-00428"),
    ("declare v integer; begin update t set id = 1 returning id, name into v; end;",
     "ORA-00947"),
    ("declare v integer; w integer; begin delete from t returning id into v, w; end;",
     "ORA-00913"),
    ("declare v integer; begin delete from t returning id; end;", "ORA-00925"),
    ("declare v integer; begin select id, name into v from t; end;", "ORA-00947"),
    ("declare v integer; w integer; begin select count(*) into v, w from t; end;", "ORA-00913"),
    ("begin delete from t returning id into nope; end;", "PLS-00201"),
])
def test_malformed_static_sql_changes_nothing(cur, block, message):
    with pytest.raises(sluice.DatabaseError, match=message) as e:
        cur.execute(block)
    assert e.value.full_code == "ORA-06550"
    assert _rows(cur) == [(1, "ann"), (2, "bob"), (3, "cy")]


def test_select_star_into(cur):
    lines = _output(cur, """
        declare v_id integer; v_name varchar2(20);
        begin
          select * into v_id, v_name from t where id = 3;
          dbms_output.put_line(v_id || v_name);
        end;""")
    assert lines == ["3cy"]
    block = "declare v integer; begin select * into v from t where id = 1; end;"
    assert raised_code(cur.execute, block) == "ORA-00947"       # known only when it runs
    block = "declare v integer; w integer; x integer; begin select * into v, w, x from t where id = 1; end;"
    assert raised_code(cur.execute, block) == "ORA-00913"


def test_loop_index_and_nested_block_variables_are_bound(cur):
    lines = _output(cur, """
        declare total integer := 0;
        begin
          for i in 1 .. 3 loop
            insert into t (id, name) values (10 + i, 'n' || i);
            total := total + sql%rowcount;
          end loop;
          declare v_low integer := 12;
          begin
            delete from t where id >= v_low;
            dbms_output.put_line(total || ' ' || sql%rowcount);
          end;
        end;""")
    assert lines == ["3 2"]
    assert _rows(cur)[-1] == (11, "n1")


def test_top_level_returning_bulk_collect_is_missing_into(cur):
    v = cur.var(int)
    assert raised_code(cur.execute, "UPDATE t SET name = 'x' RETURNING id BULK COLLECT INTO :v", v=v) \
        == "ORA-00925"
    assert _rows(cur) == [(1, "ann"), (2, "bob"), (3, "cy")]


def test_a_column_wins_over_a_variable_of_its_name(cur):
    # Oracle resolves a name that is both a column and a variable to the column
    lines = _output(cur, """
        declare id integer := 2; name varchar2(20) := 'zed'; v_id integer := 2;
        begin
          update t set name = name where id = v_id;
          select count(*) into v_id from t where id = id;
          dbms_output.put_line(v_id);
          delete from t where id = id;
          dbms_output.put_line(sql%rowcount);
        end;""")
    assert lines == ["3", "3"]
    assert _rows(cur) == []


@pytest.mark.parametrize("statement, tables", [
    ("select a into v from t1 x, hr.t2 y, t3 where x.a = y.a", ["t1", "hr.t2", "t3"]),
    ("select a into v from t1 join t2 on t1.a = t2.a left join t3 z on z.b = 1", ["t1", "t2", "t3"]),
    ("insert into t (a) select b from s", ["t", "s"]),
    ("update t set a = (select max(b) from s where s.c = t.c) returning a into v", ["t", "s"]),
    ("delete from t where a in (select b from dual)", ["t", "dual"]),
])
def test_the_tables_a_statement_names(statement, tables):
    block = parse_block(f"declare v integer; begin {statement}; end;")
    assert block.body[0].tables == tables


def test_select_into_from_dual_with_variables(cur):
    lines = _output(cur, """
        declare v_id integer := 4; v_name varchar2(20) := 'dee'; a integer; b varchar2(20);
        begin
          select v_id * 2, v_name || '!' into a, b from dual;
          dbms_output.put_line(a || ' ' || b);
          insert into t (id, name) select v_id, upper(v_name) from dual;
          dbms_output.put_line(sql%rowcount);
        end;""")
    assert lines == ["8 dee!", "1"]
    assert _rows(cur)[-1] == (4, "DEE")
