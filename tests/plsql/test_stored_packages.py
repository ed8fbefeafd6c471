"""Stored packages: CREATE [OR REPLACE] PACKAGE / PACKAGE BODY, DROP PACKAGE [BODY], calls of
their subprograms from blocks, units and ``callproc`` / ``callfunc``, their variables,
exceptions and per-session state (PL/SQL Language Reference, "PL/SQL Packages", "CREATE
PACKAGE Statement", "CREATE PACKAGE BODY Statement").  Both stores."""

from __future__ import annotations

import pytest

import sluice
from tests.security.conftest import create_user, login
from tests.sqlhelpers import create_table, raised_code
from tests.sqlhelpers import error_text as error_of, executed as run


@pytest.fixture
def db(dsn):
    c = sluice.connect(dsn)
    yield c
    c.close()


COUNTER_SPEC = """create or replace package counter as
  total number := 0;
  step constant number := 10;
  too_big exception;
  procedure bump(by_n number default 1);
  function current_total return number;
  procedure split(n in number, half out number, rest in out number);
end counter;"""

COUNTER_BODY = """create or replace package body counter as
  calls number;                              -- private state
  procedure check_limit is
  begin
    if total > 100 then raise too_big; end if;
  end;
  procedure bump(by_n number default 1) is
  begin
    total := total + by_n;
    calls := calls + 1;
    check_limit;
  end bump;
  function current_total return number is
  begin
    return total;
  end;
  procedure split(n in number, half out number, rest in out number) is
  begin
    half := trunc(n / 2);
    rest := rest + n - 2 * half;
  end;
begin
  calls := 0;
  dbms_output.put_line('counter initialised');
end counter;"""


@pytest.fixture
def counter(db):
    cur = run(db, COUNTER_SPEC, COUNTER_BODY)
    assert cur.warning is None
    return db


def test_calls_from_blocks_callproc_and_callfunc(counter):
    cur = run(counter, "begin counter.bump; counter.bump(by_n => 5); counter.bump(2); end;")
    assert cur.output == ["counter initialised"]
    assert counter.cursor().callfunc("counter.current_total", int) == 8
    assert counter.cursor().callproc("counter.bump", [4]) == [4]
    assert counter.cursor().callfunc("COUNTER.CURRENT_TOTAL", int) == 12
    cur = run(counter, """declare h number; r number := 100;
                          begin counter.split(7, h, r);
                                dbms_output.put_line(h || ' ' || r || ' ' || counter.current_total);
                          end;""")
    assert cur.output == ["3 101 12"]       # initialised once a session
    half, rest = counter.cursor().var(int), counter.cursor().var(int)
    rest.setvalue(0, 1)
    counter.cursor().callproc("counter.split", [9, half, rest])
    assert (half.getvalue(), rest.getvalue()) == (4, 2)
    assert "PLS-00306: wrong number or types of arguments in call to 'BUMP'" in error_of(
        run, counter, "begin counter.bump(1, 2); end;")
    assert "PLS-00221" in error_of(run, counter, "begin counter.current_total; end;")


def test_package_variables_and_constants_from_outside(counter):
    cur = run(counter, """begin
                            counter.total := counter.total + counter.step;
                            dbms_output.put_line(counter.total || ' ' || counter.current_total);
                          end;""")
    assert cur.output == ["counter initialised", "10 10"]
    assert "PLS-00363: expression 'COUNTER.STEP' cannot be used as an assignment target" in \
        error_of(run, counter, "begin counter.step := 1; end;")
    assert "PLS-00302: component 'NOPE' must be declared" in error_of(
        run, counter, "begin counter.nope := 1; end;")
    cur = run(counter, "begin sluice.counter.total := sluice.counter.total * 2; "
                       "dbms_output.put_line(sluice.counter.total); end;")
    assert cur.output == ["20"]


def test_state_is_per_session_and_kept(counter, dsn):
    run(counter, "begin counter.bump(3); end;")
    other = sluice.connect(dsn)
    try:
        assert run(other, "begin counter.bump(1); end;").output == ["counter initialised"]
        assert other.cursor().callfunc("counter.current_total", int) == 1
        assert counter.cursor().callfunc("counter.current_total", int) == 3
    finally:
        other.close()


def test_private_subprograms_and_variables(counter):
    run(counter, "begin counter.bump; end;")           # CHECK_LIMIT runs inside the body
    assert "PLS-00302: component 'CHECK_LIMIT' must be declared" in error_of(
        run, counter, "begin counter.check_limit; end;")
    assert "PLS-00302: component 'CALLS' must be declared" in error_of(
        run, counter, "declare n number; begin n := counter.calls; end;")


def test_package_exceptions(counter):
    cur = run(counter, """begin
                            counter.bump(200);
                          exception when counter.too_big then
                            dbms_output.put_line('too big at ' || counter.total);
                          end;""")
    assert cur.output == ["counter initialised", "too big at 200"]
    cur = run(counter, """begin raise counter.too_big;
                          exception when counter.too_big then dbms_output.put_line('caught'); end;""")
    assert cur.output == ["caught"]
    message = error_of(run, counter, "begin counter.bump; end;")
    assert "ORA-06510: PL/SQL: unhandled user-defined exception" in message
    assert 'ORA-06512: at "SLUICE.COUNTER"' in message


def test_calls_from_a_stored_procedure_and_overloads(counter):
    run(counter, """create package shapes as
                      function area(side number) return number;
                      function area(w number, h number) return number;
                    end;""",
        """create package body shapes as
             function area(side number) return number is begin return side * side; end;
             function area(w number, h number) return number is begin return w * h; end;
           end;""",
        """create procedure show_areas as
           begin
             dbms_output.put_line(shapes.area(3) || ' ' || shapes.area(2, 5));
             counter.bump;
           end;""")
    assert run(counter, "begin show_areas; end;").output == ["9 10", "counter initialised"]
    assert counter.cursor().callfunc("shapes.area", int, [4, 6]) == 24
    run(counter, """create or replace package amb as
                      procedure p(a number);
                      procedure p(b varchar2);
                    end;""")
    assert "PLS-00307: too many declarations of 'P' match this call" in error_of(
        run, counter, "begin amb.p(1); end;")


def test_a_spec_without_a_body(db):
    run(db, """create package config as
                 max_items constant number := 50;
                 label varchar2(20) := 'items';
                 procedure reload;
               end;""")
    cur = run(db, "begin config.label := upper(config.label); "
                  "dbms_output.put_line(config.label || ' ' || config.max_items); end;")
    assert cur.output == ["ITEMS 50"]
    assert raised_code(run, db, "begin config.reload; end;") == "ORA-04067"
    assert 'not executed, package body "SLUICE.CONFIG" does not exist' in error_of(
        run, db, "begin config.reload; end;")


def test_compilation_errors_create_invalid_objects(db):
    cur = run(db, "create package body orphan as procedure p is begin null; end; end;")
    assert cur.warning.full_code == "DPY-7000"
    (spec,) = [s for _, n, s in db.context.store.catalog_objects("PACKAGE BODY") if n == "ORPHAN"]
    assert spec["status"] == "INVALID" and spec["errors"][0]["text"].startswith("PLS-00304")
    assert "PLS-00201: identifier 'ORPHAN.P' must be declared" in error_of(
        run, db, "begin orphan.p; end;")
    run(db, "create package pk as procedure p; procedure q; end;")
    cur = run(db, "create package body pk as procedure p is begin null; end; end;")
    assert cur.warning.full_code == "DPY-7000"      # Q is not defined: PLS-00323
    assert raised_code(run, db, "begin pk.p; end;") == "ORA-04063"
    cur = run(db, "create or replace package body pk as procedure p is begin nothing_here; end; "
                  "procedure q is begin null; end; end;")
    assert cur.warning.full_code == "DPY-7000"
    assert 'package body "SLUICE.PK" has errors' in error_of(run, db, "begin pk.q; end;")
    assert run(db, "create or replace package body pk as procedure p is begin null; end; "
                   "procedure q is begin dbms_output.put_line('q'); end; end;").warning is None
    assert run(db, "begin pk.q; end;").output == ["q"]
    cur = run(db, "create or replace package broken as procedure p(; end;")
    assert cur.warning.full_code == "DPY-7000"
    assert "PLS-00905: object SLUICE.BROKEN is invalid" in error_of(run, db, "begin broken.p; end;")


def test_the_one_namespace_and_drop(counter, dsn):
    create_table(dsn, "CREATE TABLE tb (id NUMERIC)")
    assert raised_code(run, counter, "create package tb as x number; end;") == "ORA-00955"
    assert raised_code(run, counter, "create procedure counter as begin null; end;") == "ORA-00955"
    assert raised_code(run, counter, "create table counter (id number)") == "ORA-00955"
    assert raised_code(run, counter, "create package counter as x number; end;") == "ORA-00955"
    run(counter, "drop package body counter")
    assert raised_code(run, counter, "begin counter.bump; end;") == "ORA-04067"
    assert raised_code(run, counter, "drop package body counter") == "ORA-04043"
    run(counter, COUNTER_BODY, "drop package counter")
    assert "PLS-00201: identifier 'COUNTER.BUMP' must be declared" in error_of(
        run, counter, "begin counter.bump; end;")
    assert [n for kind in ("PACKAGE", "PACKAGE BODY")
            for _, n, _ in counter.context.store.catalog_objects(kind)] == []
    assert raised_code(run, counter, "drop package counter") == "ORA-04043"


def test_state_discarded_when_the_package_is_created_again(counter, dsn):
    run(counter, "begin counter.bump(7); end;")
    other = sluice.connect(dsn)
    try:
        run(other, COUNTER_BODY.replace("'counter initialised'", "'counter again'"))
    finally:
        other.close()
    message = error_of(run, counter, "begin counter.bump; end;")
    assert message.startswith("ORA-04068: existing state of packages has been discarded")
    cur = run(counter, "begin counter.bump; dbms_output.put_line(counter.total); end;")
    assert cur.output == ["counter again", "1"]


def test_the_execute_privilege_and_definers_rights(db, dsn):
    create_user(db, "SCOTT")
    create_user(db, "ADAMS")
    cur = run(db, "create procedure scott.log_it(m varchar2) as begin dbms_output.put_line('log ' || m); end;",
              "create package scott.util as function fmt(s varchar2) return varchar2; end;",
              "create package body scott.util as function fmt(s varchar2) return varchar2 is "
              "begin return 'hello ' || s; end; end;",
              "create package scott.api as procedure hello(who varchar2); end;",
              "create package body scott.api as procedure hello(who varchar2) is "
              "begin log_it(util.fmt(who)); end; end;")
    assert cur.warning is None
    scott, adams = login(dsn, "SCOTT"), login(dsn, "ADAMS")
    try:
        assert run(scott, "begin api.hello('me'); end;").output == ["log hello me"]
        assert "PLS-00201: identifier 'SCOTT.API.HELLO' must be declared" in error_of(
            run, adams, "begin scott.api.hello('you'); end;")
        assert raised_code(run, adams, "create package scott.p2 as x number; end;") == "ORA-01031"
        run(scott, "grant execute on api to adams")
        assert run(adams, "begin scott.api.hello('you'); end;").output == ["log hello you"]
        # API calls SCOTT's LOG_IT and UTIL as SCOTT does: ADAMS may not call them himself
        assert "PLS-00201" in error_of(run, adams, "begin scott.log_it('x'); end;")
        assert "PLS-00201" in error_of(run, adams, "begin dbms_output.put_line(scott.util.fmt('x')); end;")
    finally:
        scott.close()
        adams.close()
    run(db, "drop user scott cascade")
    assert [n for kind in ("PACKAGE", "PACKAGE BODY")
            for _, n, _ in db.context.store.catalog_objects(kind)] == []


def test_built_in_packages_keep_their_names(db):
    run(db, "create package dbms_output as procedure put_line(s varchar2); end;")
    assert run(db, "begin dbms_output.put_line('built-in'); end;").output == ["built-in"]


def test_a_script_creates_packages(db):
    results = db.cursor().executescript("""
create or replace package greet is
  function hello(n varchar2) return varchar2;
end greet;
/
create or replace package body greet is
  function hello(n varchar2) return varchar2 is
  begin
    return 'hello ' || n;
  end hello;
end greet;
/
exec dbms_output.put_line(greet.hello('script'))
""")
    assert [r.kind for r in results] == ["ddl", "ddl", "sqlplus"]
    assert results[-1].output == ["hello script"]


def test_package_collections_records_and_cursors(db, dsn):
    create_table(dsn, "CREATE TABLE mt (id NUMERIC, note VARCHAR(100))")
    run(db, """create package store_pkg as
                 type num_t is table of number index by pls_integer;
                 type rec_t is record (a number, b varchar2(10));
                 nums num_t;
                 r rec_t;
                 cursor c_mt is select id from mt order by id;
                 procedure fill(n number);
                 function first_id return number;
               end;""",
        """create package body store_pkg as
             procedure fill(n number) is
             begin
               for i in 1..n loop nums(i) := i * 10; insert into mt (id) values (i); end loop;
               r.a := n; r.b := 'x';
             end;
             function first_id return number is v number;
             begin open c_mt; fetch c_mt into v; close c_mt; return v; end;
           end;""",
        "create procedure set_out(x out number) as begin x := 5; end;")
    cur = run(db, """declare i number := 3;
                     begin
                       store_pkg.fill(3);
                       store_pkg.nums(i) := 99;
                       store_pkg.r.b := 'yy';
                       set_out(store_pkg.r.a);
                       dbms_output.put_line(store_pkg.nums(2) || ' ' || store_pkg.nums(i) || ' ' ||
                                            store_pkg.nums.count || ' ' || store_pkg.r.b || ' ' ||
                                            store_pkg.r.a || ' ' || store_pkg.first_id);
                     end;""")
    assert cur.output == ["20 99 3 yy 5 1"]


def test_a_failing_initialisation_leaves_no_state(db):
    run(db, "create package bad_init as x number := 1 / 0; end;")
    for _ in range(2):                       # each use tries again
        message = error_of(run, db, "begin dbms_output.put_line(bad_init.x); end;")
        assert message.startswith("ORA-01476") and 'ORA-06512: at "SLUICE.BAD_INIT", line 1' in message


def test_package_variables_in_static_sql(db, dsn):
    create_table(dsn, "CREATE TABLE mt (id NUMERIC, note VARCHAR(100))")
    run(db, "insert into mt (id, note) values (1, 'a')", "insert into mt (id, note) values (2, 'b')",
        "insert into mt (id, note) values (3, 'c')",
        "create package k as lim constant number := 2; type r_t is record (a number); r r_t; end;")
    cur = run(db, """declare v number; cursor c is select note from mt where id > k.lim;
                     begin
                       k.r.a := 3;
                       select count(*) into v from mt where id <= k.lim;
                       dbms_output.put_line(v);
                       select count(*) into v from mt t where t.id < k.r.a;
                       dbms_output.put_line(v);
                       for x in (select note from mt where id = k.lim) loop
                         dbms_output.put_line(x.note);
                       end loop;
                       update mt set note = 'z' where id = k.lim;
                       dbms_output.put_line(sql%rowcount);
                       for x in c loop dbms_output.put_line(x.note); end loop;
                     end;""")
    assert cur.output == ["2", "2", "b", "1", "c"]
    assert "PLS-00302: component 'NOPE' must be declared" in error_of(
        run, db, "declare v number; begin select count(*) into v from mt where id = k.nope; end;")


def test_a_stateless_package_created_again_raises_nothing(db, dsn):
    run(db, "create package pure as function twice(n number) return number; end;",
        "create package body pure as function twice(n number) return number is "
        "begin return 2 * n; end; end;")
    assert db.cursor().callfunc("pure.twice", int, [2]) == 4
    other = sluice.connect(dsn)
    try:
        run(other, "create or replace package body pure as function twice(n number) return number "
                   "is begin return n + n + 1; end; end;")
    finally:
        other.close()
    assert db.cursor().callfunc("pure.twice", int, [2]) == 5


def test_package_types_declare_callers_variables(db):
    run(db, """create package shelf as
                 type rec_t is record (a number, b varchar2(10));
                 type tab_t is table of rec_t index by pls_integer;
                 last rec_t;
                 function make(a number) return rec_t;
                 procedure keep(r rec_t);
                 function all_kept return tab_t;
               end;""",
        """create package body shelf as
             kept tab_t;
             function make(a number) return rec_t is r rec_t;
             begin r.a := a; r.b := 'b' || a; return r; end;
             procedure keep(r rec_t) is begin kept(kept.count + 1) := r; last := r; end;
             function all_kept return tab_t is begin return kept; end;
           end;""")
    cur = run(db, """declare v shelf.rec_t; w shelf.tab_t;
                     begin
                       v := shelf.make(4);
                       shelf.keep(v);
                       v.a := 5;
                       shelf.keep(v);
                       w := shelf.all_kept;
                       dbms_output.put_line(w.count || ' ' || w(2).a || ' ' || w(1).b || ' ' || shelf.last.a);
                     end;""")
    assert cur.output == ["2 5 b4 5"]
