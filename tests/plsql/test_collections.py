"""The collection and record types a block declares (``TYPE … IS TABLE OF / VARRAY /
INDEX BY / RECORD``), as Oracle's PL/SQL Language Reference ("PL/SQL Collections and
Records") describes them: constructors, the collection methods, element and field access,
assignment by copy, and the errors ORA-06531 / 06532 / 06533 / 01403 / 06502.  The block
semantics need no database (the fake connection); BULK COLLECT and python-oracledb's
``arrayvar`` run on both stores."""

from __future__ import annotations

import pytest

import sluice
from sluice.plsql import execute
from tests.sqlhelpers import block_output, filled_table, pls_code, raised_code


def _out(conn, block: str) -> list[str]:
    return execute(conn, block).output


def _code(conn, block: str) -> str:
    return raised_code(execute, conn, block)


def _pls(conn, block: str) -> str:
    return pls_code(execute, conn, block)


# ------------------------------------------------------------------ nested tables
def test_nested_table_constructor_methods_and_sparse_delete(conn):
    assert _out(conn, """
        declare
          type numlist is table of integer;
          n numlist := numlist(1, 3, 5, 7);
        begin
          dbms_output.put_line(n.count || ' ' || n.first || ' ' || n.last || ' ' || nvl(to_char(n.limit), 'null'));
          n.delete(2);
          if not n.exists(2) and n.exists(1) and not n.exists(99) then
            dbms_output.put_line('deleted ' || n.count || ' ' || n.last || ' ' || n.next(1) || ' ' || n.prior(3));
          end if;
          n(2) := 4;                                  -- the placeholder takes a value again
          dbms_output.put_line(n.count || ' ' || n(2));
          n.delete(1, 2);
          dbms_output.put_line(n.count || ' ' || n.first || ' ' || nvl(to_char(n.prior(n.first)), 'null'));
          n.extend(2, 4);                             -- two copies of element 4
          dbms_output.put_line(n.count || ' ' || n(5) || n(6));
          n.trim(3);
          dbms_output.put_line(n.count || ' ' || n.last);
          n.delete;
          dbms_output.put_line(n.count || ' ' || nvl(to_char(n.first), 'null'));
        end;""") == ["4 1 4 null", "deleted 3 4 3 1", "4 4", "2 3 null", "4 77", "1 3", "0 null"]


def test_an_uninitialized_nested_table_is_atomically_null(conn):
    assert _out(conn, """
        declare
          type t is table of varchar2(10);
          v t;
        begin
          if v is null and not v.exists(1) then dbms_output.put_line('null'); end if;
          v := t();
          if v is not null then dbms_output.put_line('empty ' || v.count); end if;
          v := null;
          if v is null then dbms_output.put_line('null again'); end if;
        end;""") == ["null", "empty 0", "null again"]
    null_table = "declare type t is table of number; v t; begin {} end;"
    for stmt in ("dbms_output.put_line(v.count);", "v.extend;", "v(1) := 1;",
                 "dbms_output.put_line(v(1));", "v.delete;"):
        assert _code(conn, null_table.format(stmt)) == "ORA-06531"
    assert _out(conn, null_table.format(
        "v.extend; exception when collection_is_null then dbms_output.put_line('caught');")) \
        == ["caught"]


def test_subscripts_beyond_count_outside_limit_null_and_deleted(conn):
    block = "declare type t is table of number; v t := t(1, 2); begin {} end;"
    assert _code(conn, block.format("v(3) := 3;")) == "ORA-06533"          # EXTEND first
    assert _code(conn, block.format("dbms_output.put_line(v(3));")) == "ORA-06533"
    assert _code(conn, block.format("v(0) := 3;")) == "ORA-06532"
    assert _code(conn, block.format("dbms_output.put_line(v(-1));")) == "ORA-06532"
    assert _code(conn, block.format("v(null) := 3;")) == "ORA-06502"
    assert _code(conn, block.format("v.delete(1); dbms_output.put_line(v(1));")) == "ORA-01403"
    assert _code(conn, block.format("v.trim(3);")) == "ORA-06533"
    assert _out(conn, block.format("""
        v(3) := 3;
      exception
        when subscript_beyond_count then dbms_output.put_line('beyond');""")) == ["beyond"]
    assert _out(conn, block.format("v(1.6) := 9; dbms_output.put_line(v(2));")) == ["9"]


def test_new_before_a_constructor(conn):
    assert _out(conn, """
        declare
          type t is table of varchar2(20);
          foo t := new t('Strawberry', 'Apple', 'Banana');
          new number := 1;                          -- (NEW alone stays a name)
        begin
          foo.delete(2);
          dbms_output.put_line(foo.count || foo(3) || new);
        end;""") == ["2Banana1"]


def test_nested_tables_in_conditions(conn):
    """SQL's multiset conditions on PL/SQL nested tables (SQL Reference: CARDINALITY, IS EMPTY,
    MEMBER OF; PL/SQL: "Comparing Nested Tables for Equality and Inequality")."""
    assert _out(conn, """
        declare
          type t is table of varchar2(10);
          a t := t('x', 'y', 'y');
          b t := t('y', 'x', 'y');
          c t := t('x', 'y');
          e t := t();
          n t;
        begin
          dbms_output.put_line(cardinality(a) || ' ' || nvl(to_char(cardinality(e)), 'null')
                               || ' ' || nvl(to_char(cardinality(n)), 'null'));
          if a = b and a <> c and not (a = c) then dbms_output.put_line('equal as multisets'); end if;
          if (a = n) is null then dbms_output.put_line('null compares null'); end if;
          if e is empty and a is not empty and (n is empty) is null then dbms_output.put_line('empty'); end if;
          if 'y' member of a and 'z' not member a and ('x' member of e) is null then
            dbms_output.put_line('member');
          end if;
        end;""") == ["3 null null", "equal as multisets", "null compares null", "empty", "member"]
    assert _pls(conn, "declare type v is varray(2) of number; x v := v(1); "
                      "begin if x is empty then null; end if; end;") == "PLS-00306"


def test_assignment_copies_collections(conn):
    assert _out(conn, """
        declare
          type t is table of number;
          v t := t(1, 2, 3);
          w v%type;                                 -- anchored: of v's type
        begin
          w := v;
          v(1) := 9;
          v.trim;
          dbms_output.put_line(w(1) || ' ' || w.count || ' ' || v(1) || ' ' || v.count);
          w := null;
          if w is null then dbms_output.put_line('null'); end if;
        end;""") == ["1 3 9 2", "null"]


def test_a_variable_anchored_to_a_declared_collection_is_of_its_type(conn):
    assert _out(conn, """
        declare
          type a is table of number index by pls_integer;
          x a;
          y x%type;
        begin
          y(5) := 1;                                -- an index-by table: any key
          dbms_output.put_line(y.first || y.count);
        end;""") == ["51"]


def test_not_null_elements(conn):
    block = "declare type t is table of number not null; v t := t(1); n number; begin {} end;"
    assert _code(conn, block.format("v(1) := n;")) == "ORA-06502"
    assert _code(conn, "declare type t is table of number not null; v t := t(1, null); "
                       "begin null; end;") == "ORA-06502"


# ----------------------------------------------------------------------- VARRAYs
def test_varray_limit_extend_and_constructor(conn):
    assert _out(conn, """
        declare
          type t is varray(3) of varchar2(5);
          v t := t('a', 'b');
        begin
          v.extend;
          v(3) := 'c';
          dbms_output.put_line(v.limit || ' ' || v.count || ' ' || v(1) || v(2) || v(3));
          v.trim;
          dbms_output.put_line(v.count);
        end;""") == ["3 3 abc", "2"]
    block = "declare type t is varray(2) of number; v t := t(1, 2); begin {} end;"
    assert _code(conn, block.format("v.extend;")) == "ORA-06532"
    assert _code(conn, block.format("v(3) := 3;")) == "ORA-06532"      # past the limit
    assert _code(conn, "declare type t is varray(2) of number; v t := t(1, 2, 3); "
                       "begin null; end;") == "ORA-06532"
    assert _out(conn, block.format("v.delete; dbms_output.put_line(v.count);")) == ["0"]
    assert _pls(conn, block.format("v.delete(1);")) == "PLS-00306"    # VARRAYs stay dense
    assert _out(conn, "declare type t is varying array(1) of number; v t := t(4); "
                      "begin dbms_output.put_line(v.limit || v(1)); end;") == ["14"]


# ------------------------------------------------------------ associative arrays
def test_associative_array_by_pls_integer(conn):
    assert _out(conn, """
        declare
          type t is table of varchar2(20) index by pls_integer;
          v t;
          i pls_integer;
        begin
          v(10) := 'ten'; v(-5) := 'minus five'; v(3) := 'three';
          i := v.first;
          while i is not null loop
            dbms_output.put_line(i || ' ' || v(i));
            i := v.next(i);
          end loop;
          dbms_output.put_line(v.count || ' ' || v.last || ' ' || v.prior(3) || ' '
                               || nvl(to_char(v.next(10)), 'null') || ' ' || nvl(to_char(v.limit), 'null'));
          v.delete(-5, 3);
          dbms_output.put_line(v.count || ' ' || v.first);
        end;""") == ["-5 minus five", "3 three", "10 ten", "3 10 -5 null null", "1 10"]
    block = "declare type t is table of number index by binary_integer; v t; begin {} end;"
    assert _code(conn, block.format("dbms_output.put_line(v(1));")) == "ORA-01403"
    assert _out(conn, block.format("""
        v(1) := v(2);
      exception
        when no_data_found then dbms_output.put_line('no element ' || v.count);""")) \
        == ["no element 0"]
    assert _code(conn, block.format("v(null) := 1;")) == "ORA-06502"
    assert _pls(conn, block.format("v.extend;")) == "PLS-00306"
    assert _pls(conn, block.format("v.trim;")) == "PLS-00306"
    assert _pls(conn, block.format("v := t(1);")) == "PLS-00222"        # no constructor


def test_associative_array_by_varchar2_keeps_key_order(conn):
    assert _out(conn, """
        declare
          type population is table of number index by varchar2(64);
          city population;
          k varchar2(64);
        begin
          city('Smallville') := 2000;
          city('Midland') := 750000;
          city('Megalopolis') := 1000000;
          city('Smallville') := 2001;
          k := city.first;
          while k is not null loop
            dbms_output.put_line(k || ' ' || city(k));
            k := city.next(k);
          end loop;
          if city.exists('Midland') and not city.exists('Gotham') then
            dbms_output.put_line('exists');
          end if;
        end;""") == ["Megalopolis 1000000", "Midland 750000", "Smallville 2001", "exists"]


# ----------------------------------------------------------------------- records
def test_record_type_defaults_fields_and_copies(conn):
    assert _out(conn, """
        declare
          type emp is record (id number := 7, name varchar2(10), active boolean default true);
          a emp;
          b emp;
        begin
          a.name := 'ann';
          b := a;
          a.name := 'bob';
          a.id := a.id + 1;
          dbms_output.put_line(b.id || b.name || ' ' || a.id || a.name);
          if b.active then dbms_output.put_line('active'); end if;
        end;""") == ["7ann 8bob", "active"]
    assert _pls(conn, "declare type r is record (a number); x r; begin x.b := 1; end;") \
        == "PLS-00302"
    assert _pls(conn, "declare type r is record (a number not null); begin null; end;") \
        == "PLS-00218"
    assert _pls(conn, "declare type r is record (a number, a date); begin null; end;") \
        == "PLS-00410"
    assert _pls(conn, "declare type r is record (a number); x r; begin x := r(1); end;") \
        == "PLS-00222"


def test_collections_of_records_and_of_collections(conn):
    assert _out(conn, """
        declare
          type emp is record (id number, name varchar2(10));
          type emps is table of emp;
          type by_id is table of emp index by pls_integer;
          type row is table of number;
          type grid is table of row;
          e emp;
          list emps := emps();
          m by_id;
          g grid := grid(row(1, 2), row(3));
        begin
          e.id := 1; e.name := 'ann';
          list.extend;
          list(1) := e;
          e.name := 'changed';                 -- the element is a copy
          list.extend;
          list(2).id := 2;                      -- EXTEND made a record with NULL fields
          list(2).name := 'bob';
          m(42).name := 'cy';                   -- a field of a new key makes the element
          dbms_output.put_line(list(1).id || list(1).name || ' ' || list(2).id || list(2).name
                               || ' ' || m.count || nvl(to_char(m(42).id), '-') || m(42).name);
          g.extend;
          dbms_output.put_line(g.count || ' ' || g(1).count || ' ' || g(2).count);
        end;""") == ["1ann 2bob 1-cy", "3 2 1"]
    assert _code(conn, """
        declare type row is table of number; type grid is table of row; g grid := grid();
        begin g.extend; dbms_output.put_line(g(1).count); end;""") == "ORA-06531"


def test_inner_blocks_see_the_types_of_the_blocks_around_them(conn):
    assert _out(conn, """
        declare
          type t is table of number;
          n number := 5;
          type r is record (a number := n * 2, b t := t(n));
          rec r;
        begin
          n := 6;
          declare
            v t := t(1, 2);
            inner r;                                  -- its defaults evaluated now
          begin
            dbms_output.put_line(v.count || ' ' || rec.a || rec.b(1) || ' ' || inner.a || inner.b(1));
            rec.b.extend;
            rec.b(2) := 7;
          end;
          dbms_output.put_line(rec.b.count || rec.b(2));
        end;""") == ["2 105 126", "27"]


def test_python_code_gets_lists_and_dicts(conn):
    """A package (Python) takes a declared collection as a list (an index-by table: a dict)."""
    execute(conn, """
        declare
          type agents is table of sys.aq$_agent;
          type props is table of varchar2(10) index by varchar2(10);
          r agents := agents();
          p props;
          eo dbms_aq.enqueue_options_t;
          mp dbms_aq.message_properties_t;
          h raw(16);
        begin
          r.extend(2);
          r(1) := sys.aq$_agent('A', null, null);
          r(2) := sys.aq$_agent('B', null, null);
          mp.recipient_list := r;
          p('z') := '1'; p('a') := '2';
          dbms_aq.enqueue('q', eo, mp, p, h);
        end;""")
    (_, _, args), = [c for c in conn.calls if c[1] == "enqueue"]
    assert [a.args[0] for a in args["message_properties"].recipient_list] == ["A", "B"]
    assert list(args["payload"].items()) == [("a", "2"), ("z", "1")]


def test_wrong_types_and_refused_type_declarations(conn):
    assert _pls(conn, """
        declare type a is table of number; type b is table of number; x a := a(1); y b;
        begin y := x; end;""") == "PLS-00382"
    assert _pls(conn, "declare type t is varray(0) of number; begin null; end;") == "PLS-00325"


# -------------------------------------------------- BULK COLLECT (both stores)
@pytest.fixture
def db(store, dsn):
    """A session whose table T holds ann, bob and cy (ids 1 to 3)."""
    return filled_table(store, dsn, "CREATE TABLE t (id INTEGER, name VARCHAR(20))",
                        "INSERT INTO t (id, name) VALUES (:1, :2)", [(1, "ann"), (2, "bob"), (3, "cy")])


def test_bulk_collect_into_declared_collections(db):
    assert block_output(db, """
        declare
          type ids is table of t.id%type;
          type names is table of varchar2(20) index by pls_integer;
          type few is varray(5) of varchar2(20);
          i ids;
          n names;
          f few;
        begin
          select id, name bulk collect into i, n from t order by id;
          select name bulk collect into f from t where id > 1 order by id;
          dbms_output.put_line(i.count || ' ' || i(3) || ' ' || n.first || n(2) || ' ' || f.limit || f(2));
          select name into n(9) from t where id = i(2) - 1;     -- elements in any static SQL
          dbms_output.put_line(n(9));
          select id bulk collect into i from t where id > 99;
          dbms_output.put_line(i.count);
        end;""") == ["3 3 1bob 5cy", "ann", "0"]
    assert raised_code(block_output, db, """
        declare type two is varray(2) of number; v two;
        begin select id bulk collect into v from t; end;""") == "ORA-06532"


def test_bulk_collect_into_collections_of_records(db):
    assert block_output(db, """
        declare
          type rows_t is table of t%rowtype;
          type pair is record (n varchar2(20), doubled number);
          type pairs is table of pair index by pls_integer;
          cursor c is select id, name from t order by id;
          type crows is table of c%rowtype;
          r rows_t;
          p pairs;
          cr crows;
          one pair;
        begin
          select * bulk collect into r from t order by id;
          select name, id * 2 bulk collect into p from t order by id desc;   -- by position
          select name, id * 2 into one from t where id = 2;
          dbms_output.put_line(r.count || ' ' || r(1).id || r(1).name || ' ' || p(1).n || p(1).doubled
                               || ' ' || one.n || one.doubled);
          open c;
          fetch c bulk collect into cr limit 2;
          dbms_output.put_line(cr.count || ' ' || cr(2).name);
          fetch c bulk collect into cr limit 2;
          dbms_output.put_line(cr.count || ' ' || cr(1).name);
          close c;
        end;""") == ["3 1ann cy6 bob4", "2 bob", "1 cy"]
    assert raised_code(block_output, db, """
        declare type pair is record (a number, b number, c number); type pairs is table of pair;
                p pairs;
        begin select id, name bulk collect into p from t; end;""") == "ORA-00947"


def test_elements_in_cursor_queries(db):
    assert block_output(db, """
        declare
          type ids is table of number;
          k ids := ids(3, 1);
          cursor c (p number) is select name from t where id = k(p);
          n varchar2(20);
        begin
          for r in (select name from t where id = k(1)) loop
            dbms_output.put_line(r.name);
          end loop;
          open c(2);
          fetch c into n;
          close c;
          dbms_output.put_line(n);
        end;""") == ["cy", "ann"]


def test_an_arrayvar_binds_to_an_index_by_table(db):
    """python-oracledb's documented way to pass a PL/SQL associative array: cursor.arrayvar."""
    cur = db.cursor()
    values = cur.arrayvar(sluice.DB_TYPE_NUMBER, [10, 20, 30])
    total, doubled = cur.var(int), cur.arrayvar(sluice.DB_TYPE_NUMBER, 5)
    cur.execute("""
        declare
          type numbers is table of number index by pls_integer;
          v numbers := :vals;
          s number := 0;
        begin
          for i in 1 .. v.count loop
            s := s + v(i);
            v(i) := v(i) * 2;
          end loop;
          :total := s;
          :doubled := v;
        end;""", vals=values, total=total, doubled=doubled)
    assert total.getvalue() == 60
    assert doubled.getvalue() == [20, 40, 60]
