"""FORALL in anonymous blocks run through ``cursor.execute``, on both stores, as Oracle's
PL/SQL Language Reference ("FORALL Statement", "SQL%BULK_ROWCOUNT", "Handling FORALL
Exceptions") describes it: ranges, INDICES OF, VALUES OF, elements and whole records bound,
SQL%ROWCOUNT / SQL%BULK_ROWCOUNT, the first failure stopping the statement (the earlier
executions kept), SAVE EXCEPTIONS with ORA-24381 and SQL%BULK_EXCEPTIONS."""

from __future__ import annotations

import pytest

from tests.sqlhelpers import block_output, create_table, pls_code, query_rows, raised_code


@pytest.fixture
def db(store, dsn):
    """A session whose (empty) table MT has a primary key ID and a NAME."""
    create_table(dsn, "CREATE TABLE mt (id INTEGER PRIMARY KEY, name VARCHAR(20))")
    return store


def _rows(db) -> list[tuple]:
    return query_rows(db, "SELECT id, name FROM mt ORDER BY id")


def test_forall_inserts_a_nested_tables_elements(db):
    block_output(db, "declare type t is table of number; v t := t(5, 6); "
             "begin forall i in 1..v.count insert into mt (id) values (v(i)); end;")
    assert _rows(db) == [(5, None), (6, None)]


def test_rowcount_and_bulk_rowcount(db):
    assert block_output(db, """
        declare
          type ids is table of number index by pls_integer;
          type names is table of varchar2(20) index by pls_integer;
          i ids;
          n names;
          d ids;
        begin
          for k in 1 .. 4 loop i(k) := k; n(k) := 'n' || k; end loop;
          forall k in i.first .. i.last
            insert into mt (id, name) values (i(k), n(k));
          dbms_output.put_line('inserted ' || sql%rowcount);
          d(1) := 1; d(2) := 99; d(3) := 3;
          forall k in 1 .. 3
            update mt set name = name || 'x' where id <= d(k);
          dbms_output.put_line(sql%rowcount || ': ' || sql%bulk_rowcount(1) || ' '
                               || sql%bulk_rowcount(2) || ' ' || sql%bulk_rowcount(3));   -- 1 + 4 + 3
          forall k in 2 .. 1 delete from mt where id = i(k);       -- an empty range
          dbms_output.put_line('none ' || sql%rowcount);
        end;""") == ["inserted 4", "8: 1 4 3", "none 0"]
    assert _rows(db) == [(1, "n1xxx"), (2, "n2xx"), (3, "n3xx"), (4, "n4x")]


def test_indices_of_a_sparse_collection_and_values_of(db):
    assert block_output(db, """
        declare
          type ids is table of number;
          type picks is table of pls_integer index by pls_integer;
          v ids := ids(10, 20, 30, 40, 50);
          p picks;
        begin
          v.delete(2);
          forall i in indices of v
            insert into mt (id, name) values (v(i), 'all');
          dbms_output.put_line(sql%rowcount || ' ' || sql%bulk_rowcount(3));
          forall i in indices of v between 3 and 4
            update mt set name = 'between' where id = v(i);
          dbms_output.put_line(sql%rowcount);
          p(1) := 5; p(2) := 1; p(3) := 5;        -- VALUES OF: these subscripts, in this order
          forall i in values of p
            update mt set name = name || '!' where id = v(i);
          dbms_output.put_line(sql%rowcount || ' ' || sql%bulk_rowcount(5) || ' ' || sql%bulk_rowcount(1));
        end;""") == ["4 1", "2", "3 2 1"]
    assert _rows(db) == [(10, "all!"), (30, "between"), (40, "between"), (50, "all!!")]


def test_a_missing_element_in_the_range_is_ora_22160(db):
    assert raised_code(block_output, db, """
        declare type ids is table of number; v ids := ids(1, 2, 3);
        begin v.delete(2); forall i in v.first .. v.last insert into mt (id) values (v(i)); end;""") \
        == "ORA-22160"
    assert _rows(db) == []                 # unhandled: the block is undone
    assert raised_code(block_output, db, """
        declare type ids is table of number index by pls_integer; v ids;
        begin forall i in v.first .. v.last insert into mt (id) values (v(i)); end;""") \
        == "ORA-06502"                     # an empty collection's FIRST and LAST are NULL


def test_whole_records_and_fields_of_record_collections(db):
    assert block_output(db, """
        declare
          type rows_t is table of mt%rowtype;
          type emp is record (id number, name varchar2(20));
          type emps is table of emp index by pls_integer;
          r rows_t := rows_t();
          e emps;
        begin
          for k in 1 .. 3 loop
            r.extend;
            r(k).name := 'row' || k;          -- (fields set out of the columns' order)
            r(k).id := k;
          end loop;
          forall i in 1 .. r.count insert into mt values r(i);
          e(1).id := 2; e(1).name := 'two';
          e(2).id := 3; e(2).name := 'three';
          forall i in indices of e update mt set name = e(i).name where id = e(i).id;
          dbms_output.put_line(sql%rowcount);
        end;""") == ["2"]
    block_output(db, """
        declare
          one mt%rowtype;
        begin
          one.name := 'four';
          one.id := 4;
          insert into mt values one;             -- assigned field by field: by name
          for r in (select id + 10 a, name || '+' b from mt where id = 4) loop
            insert into mt values r;             -- a row: by position
          end loop;
        end;""")
    assert _rows(db) == [(1, "row1"), (2, "two"), (3, "three"), (4, "four"), (14, "four+")]


def test_the_first_failure_stops_the_forall_and_the_earlier_rows_stay(db):
    assert block_output(db, """
        declare
          type ids is table of number;
          v ids := ids(1, 2, 2, 3);
        begin
          forall i in 1 .. v.count insert into mt (id, name) values (v(i), 'r' || v(i));
        exception
          when dup_val_on_index then
            dbms_output.put_line('failed after ' || sql%rowcount || ' ' || sql%bulk_rowcount(2));
        end;""") == ["failed after 2 1"]
    assert _rows(db) == [(1, "r1"), (2, "r2")]        # the third's own change undone, no fourth
    db.rollback()
    assert raised_code(block_output, db, """
        declare type ids is table of number; v ids := ids(7, 8, 8);
        begin forall i in 1 .. v.count insert into mt (id) values (v(i)); end;""") == "ORA-00001"
    assert _rows(db) == []                              # unhandled: the whole block is undone


def test_save_exceptions(db):
    assert block_output(db, """
        declare
          type ids is table of number;
          v ids := ids(1, 2, 1, 3, 2);
          bulk_errors exception;
          pragma exception_init(bulk_errors, -24381);
        begin
          forall i in 1 .. v.count save exceptions
            insert into mt (id, name) values (v(i), 'r' || v(i));
        exception
          when bulk_errors then
            dbms_output.put_line(sql%rowcount || ' rows, ' || sql%bulk_exceptions.count || ' errors');
            for j in 1 .. sql%bulk_exceptions.count loop
              dbms_output.put_line(sql%bulk_exceptions(j).error_index || ' ORA-'
                                   || sql%bulk_exceptions(j).error_code || ' '
                                   || sqlerrm(-sql%bulk_exceptions(j).error_code));
            end loop;
            dbms_output.put_line(sqlcode);
        end;""") == ["3 rows, 2 errors", "3 ORA-1 ORA-00001: unique constraint (%s) violated",
                     "5 ORA-1 ORA-00001: unique constraint (%s) violated", "-24381"]
    assert _rows(db) == [(1, "r1"), (2, "r2"), (3, "r3")]
    assert raised_code(block_output, db, """
        declare type ids is table of number; v ids := ids(9, 1);
        begin forall i in 1 .. 2 save exceptions insert into mt (id) values (v(i)); end;""") \
        == "ORA-24381"


def test_error_index_counts_iterations_of_a_sparse_collection(db):
    assert block_output(db, """
        declare
          type ids is table of number index by pls_integer;
          v ids;
        begin
          v(10) := 1; v(20) := 1; v(30) := 2;
          forall i in indices of v save exceptions insert into mt (id) values (v(i));
        exception
          when others then
            dbms_output.put_line(sqlcode || ' ' || sql%bulk_exceptions(1).error_index || ' '
                                 || sql%bulk_rowcount(10) || sql%bulk_rowcount(20) || sql%bulk_rowcount(30));
        end;""") == ["-24381 2 101"]


def test_returning_bulk_collect_gathers_every_execution(db):
    db.cursor().executemany("INSERT INTO mt (id, name) VALUES (:1, :2)",
                            [(1, "a"), (2, "b"), (3, "c"), (4, "d")])
    assert block_output(db, """
        declare
          type ids is table of number;
          type names is table of varchar2(20);
          v ids := ids(4, 2, 9);
          gone names;
        begin
          forall i in 1 .. v.count
            delete from mt where id = v(i) returning name bulk collect into gone;
          dbms_output.put_line(gone.count || ' ' || gone(1) || gone(2) || ' ' || sql%rowcount);
        end;""") == ["2 db 2"]
    assert _rows(db) == [(1, "a"), (3, "c")]
    assert block_output(db, """
        declare
          type pair is record (id number, name varchar2(20));
          type pairs is table of pair;
          v pairs := pairs();
          gone pairs;
          one pair;
        begin
          update mt set name = 'x' || name where id = 1 returning id, name into one;
          v.extend(2);
          v(1).id := 1;
          v(2).id := 3;
          forall i in 1 .. v.count
            delete from mt where id = v(i).id returning id * 10, upper(name) bulk collect into gone;
          dbms_output.put_line(one.id || one.name || ' ' || gone.count || ' ' || gone(1).id
                               || gone(1).name || ' ' || gone(2).id || gone(2).name);
        end;""") == ["1xa 2 10XA 30C"]
    assert _rows(db) == []


def test_forall_errors_before_anything_runs(db):
    def pls(block: str) -> str:
        return pls_code(block_output, db, block)
    assert pls("declare type t is table of number; v t := t(1); "
               "begin forall i in 1..1 insert into mt (id) values (5); end;") == "PLS-00435"
    assert pls("declare type t is table of number; v t := t(1); "
               "begin forall i in 1..1 insert into mt (id, name) values (v(i), i); end;") \
        == "PLS-00430"
    assert pls("declare type t is table of number; v t := t(1); "
               "begin forall i in 1..1 select 1 into v from dual; end;") == "PLS-00103"
    assert _rows(db) == []
