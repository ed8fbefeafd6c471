"""Cursors inside PL/SQL blocks run through ``cursor.execute("begin … end;")``, on both
stores, as Oracle's PL/SQL runs them (plsql/cursors.py):

* the cursor FOR loop over a query written in place: ``FOR r IN (SELECT …) LOOP``, the
  record's fields by column name or alias, block variables in the query, EXIT / CONTINUE,
  nested loops, DML on the queried table inside the loop (the rows are those at OPEN);
* explicit cursors: ``CURSOR c [(params)] IS …``, ``FOR r IN c[(args)] LOOP``, OPEN /
  FETCH … INTO / CLOSE, ``%ROWTYPE`` records, ``%FOUND`` / ``%NOTFOUND`` / ``%ROWCOUNT`` /
  ``%ISOPEN``, ``FETCH … BULK COLLECT INTO … [LIMIT n]``;
* Oracle's errors: ORA-06511, ORA-01001, and PLS- errors (ORA-06550) before anything runs."""

from __future__ import annotations

import pytest

import sluice
from tests.sqlhelpers import create_table, filled_table, query_rows, raised_code


@pytest.fixture
def cur(conn, dsn):
    """A cursor of ``conn``, whose table T holds ann, bob and cy (ids 1 to 3)."""
    return filled_table(conn, dsn, "CREATE TABLE t (id INTEGER, name VARCHAR(20))",
                        "INSERT INTO t (id, name) VALUES (:1, :2)",
                        [(1, "ann"), (2, "bob"), (3, "cy")]).cursor()


def _rows(cur):
    return query_rows(cur.connection, "SELECT id, name FROM t ORDER BY id")


def _output(cur, block):
    cur.execute(block)
    return cur.output        # (the DBMS_OUTPUT lines the block wrote)


# ------------------------------------------------------ implicit cursor FOR loop
def test_cursor_for_loop_sums_into_an_out_bind_python_oracledb_style(conn, dsn):
    create_table(dsn, "CREATE TABLE orders (id INTEGER, amount INTEGER)")
    cur = conn.cursor()
    cur.executemany("insert into orders (id, amount) values (:1, :2)",
                    [(i, i * 10) for i in range(1, 21)])
    conn.commit()
    total = cur.var(int)
    cur.execute("""
        declare
          v_total integer := 0;
        begin
          for r in (select id, amount from orders where id > :low) loop
            v_total := v_total + r.amount;
          end loop;
          :total := v_total;
        end;""", low=10, total=total)
    assert total.getvalue() == sum(i * 10 for i in range(11, 21))


def test_record_fields_by_column_name_and_alias(cur):
    lines = _output(cur, """
        begin
          for r in (select id, name n, id * 10 as tens, upper(name) "Big" from t order by id) loop
            dbms_output.put_line(r.id || ' ' || r.N || ' ' || r.tens || ' ' || r."Big");
          end loop;
        end;""")
    assert lines == ["1 ann 10 ANN", "2 bob 20 BOB", "3 cy 30 CY"]


def test_block_variables_in_the_query_and_no_rows(cur):
    lines = _output(cur, """
        declare v_min integer := 2; n integer := 0;
        begin
          for r in (select name from t where id >= v_min order by id) loop
            dbms_output.put_line(r.name);
          end loop;
          for r in (select name from t where id > 99) loop
            n := n + 1;
          end loop;
          dbms_output.put_line('none ' || n);
        end;""")
    assert lines == ["bob", "cy", "none 0"]


def test_exit_exit_when_and_continue(cur):
    lines = _output(cur, """
        begin
          for r in (select id from t order by id) loop
            continue when r.id = 1;
            dbms_output.put_line('a' || r.id);
          end loop;
          for r in (select id from t order by id) loop
            exit when r.id = 2;
            dbms_output.put_line('b' || r.id);
          end loop;
          for r in (select id from t order by id) loop
            dbms_output.put_line('c' || r.id);
            exit;
          end loop;
        end;""")
    assert lines == ["a2", "a3", "b1", "c1"]


def test_nested_cursor_for_loops_and_labels(cur):
    lines = _output(cur, """
        begin
          <<outer>>
          for a in (select id from t order by id) loop
            for b in (select id from t where id > a.id order by id) loop
              exit outer when a.id = 2;
              dbms_output.put_line(a.id || '-' || b.id);
            end loop;
          end loop;
        end;""")
    assert lines == ["1-2", "1-3"]


def test_dml_inside_the_loop_sees_the_rows_at_open(cur):
    lines = _output(cur, """
        declare n integer := 0;
        begin
          for r in (select id, name from t order by id) loop
            insert into t (id, name) values (r.id + 10, r.name || '2');
            delete from t where id = 3;
            n := n + 1;
            dbms_output.put_line(r.id || r.name);
          end loop;
          dbms_output.put_line(n);
        end;""")
    assert lines == ["1ann", "2bob", "3cy", "3"]
    assert _rows(cur) == [(1, "ann"), (2, "bob"), (11, "ann2"), (12, "bob2"), (13, "cy2")]


def test_an_exception_inside_the_loop_reaches_the_handler(cur):
    lines = _output(cur, """
        begin
          for r in (select id from t order by id) loop
            if r.id = 2 then raise no_data_found; end if;
            dbms_output.put_line(r.id);
          end loop;
        exception when no_data_found then
          dbms_output.put_line('caught');
        end;""")
    assert lines == ["1", "caught"]


# ------------------------------------------------------------- explicit cursors
def test_explicit_cursor_for_loop_with_and_without_parameters(cur):
    lines = _output(cur, """
        declare
          cursor c_all is select id, name from t order by id;
          cursor c_from (p_id number, p_max number := 99) is
            select name from t where id >= p_id and id <= p_max order by id;
        begin
          for r in c_all loop
            dbms_output.put_line(r.id || r.name || c_all%rowcount);
          end loop;
          for r in c_from(2) loop
            dbms_output.put_line(r.name);
          end loop;
          for r in c_from(1, 1) loop
            dbms_output.put_line(r.name);
          end loop;
          for r in c_from(p_max => 2, p_id => 2) loop
            dbms_output.put_line(r.name);
          end loop;
          if not c_all%isopen then dbms_output.put_line('closed'); end if;
        end;""")
    assert lines == ["1ann1", "2bob2", "3cy3", "bob", "cy", "ann", "bob", "closed"]


def test_open_fetch_close_with_attributes(cur):
    lines = _output(cur, """
        declare
          cursor c (p integer) is select id, name from t where id >= p order by id;
          v_id integer;
          v_name varchar2(20);
        begin
          if not c%isopen then dbms_output.put_line('not open'); end if;
          open c(2);
          if c%isopen and c%found is null and c%notfound is null then
            dbms_output.put_line('open ' || c%rowcount);
          end if;
          loop
            fetch c into v_id, v_name;
            exit when c%notfound;
            dbms_output.put_line(v_id || v_name || c%rowcount);
          end loop;
          if not c%found then dbms_output.put_line('done ' || c%rowcount || v_name); end if;
          close c;
          if not c%isopen then dbms_output.put_line('closed'); end if;
        end;""")
    assert lines == ["not open", "open 0", "2bob1", "3cy2", "done 2cy", "closed"]


def test_fetch_into_a_rowtype_record_and_reopen(cur):
    lines = _output(cur, """
        declare
          cursor c is select id, name from t order by id;
          rec c%rowtype;
        begin
          dbms_output.put_line(nvl(to_char(rec.id), 'null'));
          open c;
          fetch c into rec;
          dbms_output.put_line(rec.id || rec.name);
          fetch c into rec;
          close c;
          open c;
          fetch c into rec;
          dbms_output.put_line(rec.id || rec.name || c%rowcount);
          close c;
        end;""")
    assert lines == ["null", "1ann", "1ann1"]


def test_explicit_cursor_sees_the_rows_at_open(cur):
    lines = _output(cur, """
        declare
          cursor c is select id from t order by id;
          v integer;
        begin
          open c;
          delete from t;
          loop
            fetch c into v;
            exit when c%notfound;
            dbms_output.put_line(v);
          end loop;
          close c;
        end;""")
    assert lines == ["1", "2", "3"]
    assert _rows(cur) == []


def test_cursor_query_uses_the_declaring_blocks_variables_at_open(cur):
    lines = _output(cur, """
        declare
          v_min integer := 3;
          cursor c is select name from t where id >= v_min order by id;
        begin
          v_min := 2;
          for r in c loop dbms_output.put_line(r.name); end loop;
        end;""")
    assert lines == ["bob", "cy"]


def test_fetch_bulk_collect_with_and_without_limit(cur):
    cur.execute("CREATE TYPE num_list AS TABLE OF NUMBER")
    lines = _output(cur, """
        declare
          cursor c is select id from t order by id;
          ids num_list;
        begin
          open c;
          loop
            fetch c bulk collect into ids limit 2;
            dbms_output.put_line(ids.count || ' ' || c%rowcount);
            exit when c%notfound;
          end loop;
          close c;
          open c;
          fetch c bulk collect into ids;
          dbms_output.put_line(ids.count || ' ' || ids(3));
          close c;
        end;""")
    assert lines == ["2 2", "1 3", "3 3"]
    block = ("declare cursor c is select id from t; ids num_list; "
             "begin open c; fetch c bulk collect into ids limit :n; end;")
    assert raised_code(cur.execute, block, n=0) == "ORA-06502"
    assert raised_code(cur.execute, block, n=None) == "ORA-06502"


# ------------------------------------------------------------------- errors
def test_open_of_an_open_cursor_is_ora_06511(cur):
    block = "declare cursor c is select id from t; begin open c; open c; end;"
    assert raised_code(cur.execute, block) == "ORA-06511"
    block = "declare cursor c is select id from t; begin open c; for r in c loop null; end loop; end;"
    assert raised_code(cur.execute, block) == "ORA-06511"


@pytest.mark.parametrize("body", [
    "fetch c into v;",
    "close c;",
    "open c; close c; close c;",
    "v := c%rowcount;",
    "if c%found then null; end if;",
    "for r in c loop null; end loop; fetch c into v;",
])
def test_an_unopened_cursor_is_ora_01001(cur, body):
    block = f"declare cursor c is select id from t; v integer; begin {body} end;"
    assert raised_code(cur.execute, block) == "ORA-01001"


@pytest.mark.parametrize("body, name", [("open c; open c;", "cursor_already_open"),
                                        ("close c;", "invalid_cursor")])
def test_cursor_errors_are_handled_by_their_predefined_names(cur, body, name):
    block = (f"declare cursor c is select id from t; begin {body} "
             f"exception when {name} then dbms_output.put_line('{name}'); end;")
    assert _output(cur, block) == [name]


@pytest.mark.parametrize("block, message", [
    ("begin open nope; end;", "PLS-00201: identifier 'NOPE' must be declared"),
    ("declare v integer; begin fetch nope into v; end;", "PLS-00201"),
    ("begin for r in nope loop null; end loop; end;", "PLS-00201"),
    ("begin if nope%found then null; end if; end;", "PLS-00201"),
    ("declare v integer; begin open v; end;", "PLS-00456: item 'V' is not a cursor"),
    ("declare v integer; begin if v%notfound then null; end if; end;",
     "PLS-00324: cursor attribute may not be applied to non-cursor 'V'"),
    ("declare cursor c (p number) is select id from t; begin open c(q => 1); end;",
     "PLS-00306"),
    ("declare cursor c (p number, q number) is select id from t; begin open c(p => 1, 2); end;",
     "PLS-00312"),
    ("declare cursor c (p number) is select id from t; begin open c; end;", "PLS-00306"),
    ("declare cursor c is select id from t; begin for r in c(1) loop null; end loop; end;",
     "PLS-00306"),
    ("declare cursor c is select id, name from t; a integer; b integer; c2 integer;"
     " begin open c; fetch c into a, b, c2; end;", "PLS-00394"),
    ("declare cursor c is select id, name from t; a integer;"
     " begin open c; fetch c into a; end;", "PLS-00394"),
    ("declare cursor c is select id from t; begin for r in c loop r.id := 1; end loop; end;",
     "PLS-00363"),
])
def test_compile_errors_change_nothing(cur, block, message):
    with pytest.raises(sluice.DatabaseError, match=message) as e:
        cur.execute("begin insert into t (id, name) values (9, 'x'); end;")
        cur.execute(block.replace("begin", "begin delete from t;", 1))
    assert e.value.full_code == "ORA-06550"
    assert len(_rows(cur)) == 4                  # the DELETE before the error never ran


def test_select_star_cursor_rows_into_a_record_or_ora_06504(cur):
    lines = _output(cur, """
        declare
          cursor c is select * from t where id = 2;
          rec c%rowtype;
        begin
          open c;
          fetch c into rec;
          dbms_output.put_line(rec.id || rec.name);
          close c;
        end;""")
    assert lines == ["2bob"]
    block = ("declare cursor c is select * from t; v integer; "
             "begin open c; fetch c into v; end;")
    assert raised_code(cur.execute, block) == "ORA-06504"
    block = ("declare cursor c is select * from t; v integer; "
             "begin open c; fetch c into v; exception when rowtype_mismatch then "
             "dbms_output.put_line('mismatch'); end;")
    assert _output(cur, block) == ["mismatch"]


def test_a_variable_without_the_field_leaves_the_dotted_name_to_sql(cur):
    cur.execute("CREATE SEQUENCE s1 START WITH 7")
    lines = _output(cur, """
        declare s1 integer := 100; v integer;
        begin
          select s1.nextval into v from dual;
          dbms_output.put_line(v);
          for r in (select id, s1.nextval nv from t where id = 1) loop
            dbms_output.put_line(r.nv);
          end loop;
        end;""")
    assert lines == ["7", "8"]


def test_a_cursor_for_loop_closes_its_cursor_however_it_ends(cur):
    lines = _output(cur, """
        declare cursor c is select id from t order by id;
        begin
          begin
            for r in c loop raise no_data_found; end loop;
          exception when no_data_found then
            if not c%isopen then dbms_output.put_line('closed after an exception'); end if;
          end;
          for r in c loop exit; end loop;
          if not c%isopen then dbms_output.put_line('closed after exit'); end if;
          for r in c loop
            dbms_output.put_line(r.id);
            return;
          end loop;
        end;""")
    assert lines == ["closed after an exception", "closed after exit", "1"]


def test_select_into_a_rowtype_record(cur):
    lines = _output(cur, """
        declare
          rec t%rowtype;
          cursor c is select id, name from t;
          crec c%rowtype;
        begin
          select * into rec from t where id = 2;
          dbms_output.put_line(rec.id || rec.name);
          select id, upper(name) name into crec from t where id = 3;
          dbms_output.put_line(crec.id || crec.name);
          update t set name = rec.name || '!' where id = rec.id;
        end;""")
    assert lines == ["2bob", "3CY"]
    assert _rows(cur)[1] == (2, "bob!")
    block = "declare v integer; begin select id, name into v from t where id = 1; end;"
    with pytest.raises(sluice.DatabaseError, match="ORA-00947") as e:
        cur.execute(block)
    assert e.value.full_code == "ORA-06550"
