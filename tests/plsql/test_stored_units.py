"""Stored procedures and functions: CREATE [OR REPLACE] PROCEDURE / FUNCTION, DROP, and their
calls from blocks, ``callproc`` / ``callfunc`` and notifications (PL/SQL Language Reference,
"CREATE PROCEDURE Statement", "CREATE FUNCTION Statement").  Both stores."""

from __future__ import annotations

import re

import pytest

import sluice
from tests.conftest import make_queue, wait_until
from tests.security.conftest import create_user, login
from tests.sqlhelpers import create_table, query_rows, raised_code
from tests.sqlhelpers import error_text as error_of, executed as run


@pytest.fixture
def db(dsn):
    c = sluice.connect(dsn)
    yield c
    c.close()


@pytest.fixture
def mt(db, dsn):
    """``db`` with the empty table MT (ID NUMBER, NOTE VARCHAR2)."""
    create_table(dsn, "CREATE TABLE mt (id NUMERIC, note VARCHAR(100))")
    return db


P1 = "create or replace procedure p1(a number) as begin insert into mt (id) values (a); end;"


def test_create_procedure_and_callproc(mt):
    cur = run(mt, P1)
    assert cur.warning is None
    assert cur.callproc("p1", [1]) == [1]
    run(mt, "begin p1(2); end;", "begin P1(a => 3); end;")
    assert query_rows(mt, "select id from mt order by id") == [(1,), (2,), (3,)]


def test_named_positional_and_default_arguments(db):
    run(db, """create or replace procedure show(a varchar2, b varchar2 default 'dflt',
                                                  c in number := 7) is
               begin dbms_output.put_line(a || '/' || b || '/' || c); end show;""")
    cur = run(db, "begin show('x'); show('x', 'y'); show('x', c => 1); "
                  "show(c => 2, a => 'z'); end;")
    assert cur.output == ["x/dflt/7", "x/y/7", "x/dflt/1", "z/dflt/2"]
    assert "PLS-00306: wrong number or types of arguments in call to 'SHOW'" in \
        error_of(run, db, "begin show; end;")
    assert "PLS-00306" in error_of(run, db, "begin show('a', 'b', 3, 4); end;")
    assert "PLS-00306" in error_of(run, db, "begin show(d => 1, a => 'x'); end;")


def test_out_and_in_out_parameters(db):
    run(db, """create procedure split_name(full in varchar2, first out varchar2,
                                           n in out number) as
               begin
                 first := substr(full, 1, instr(full, ' ') - 1);
                 n := n + 1;
               end;""")
    cur = run(db, """declare f varchar2(20); k number := 41;
                     begin split_name('Ada Lovelace', f, k);
                           dbms_output.put_line(f || ' ' || k); end;""")
    assert cur.output == ["Ada 42"]
    first, n = cur.var(str), cur.var(int)
    n.setvalue(0, 1)
    assert cur.callproc("split_name", ["Alan Turing", first, n]) == ["Alan Turing", "Alan", 2]
    assert (first.getvalue(), n.getvalue()) == ("Alan", 2)
    out = cur.var(str)
    cur.execute("begin split_name('Grace Hopper', :f, :n); end;", f=out, n=n)
    assert (out.getvalue(), n.getvalue()) == ("Grace", 3)
    # an OUT argument must be given, and be something a value can be given to
    assert "PLS-00306" in error_of(run, db, "declare k number; begin split_name('a b', n => k); end;")
    assert "PLS-00363" in error_of(run, db, "declare k number; begin split_name('a b', 'x', k); end;")


def test_functions_in_expressions_and_callfunc(db):
    run(db, "create or replace function twice(n number) return number deterministic is "
            "begin return n * 2; end twice;",
            "create function answer return number authid definer as begin return 42; end;")
    cur = run(db, "declare v number; begin v := twice(2) + answer; "
                  "if twice(answer()) > 80 then dbms_output.put_line(v); end if; end;")
    assert cur.output == ["46"]
    assert cur.callfunc("twice", int, [21]) == 42
    assert cur.callfunc("answer", int) == 42
    run(db, "create procedure noop as begin null; end;")
    assert "PLS-00222: no function with name 'NOOP'" in error_of(
        run, db, "declare v number; begin v := noop; end;")
    assert "PLS-00221: 'TWICE' is not a procedure" in error_of(run, db, "begin twice(1); end;")


def test_a_function_with_an_out_parameter_and_keyword_arguments(db):
    run(db, """create function take(prefix varchar2, n out number, step number default 1)
               return varchar2 as
               begin n := 10 * step; return prefix || n; end;""")
    cur = db.cursor()
    n = cur.var(int)
    assert cur.callfunc("take", str, ["id-", n]) == "id-10" and n.getvalue() == 10
    assert cur.callfunc("take", str, ["x", n], {"step": 3}) == "x30" and n.getvalue() == 30
    cur.execute("declare k number; v varchar2(10); begin v := take('a', k, step => 2); "
                "dbms_output.put_line(v || ' ' || k); end;")
    assert cur.output == ["a20 20"]


def test_the_call_statement(mt):
    run(mt, P1, "create function twice(n number) return number as begin return n * 2; end;")
    cur = mt.cursor()
    cur.execute("call p1(:1)", [5])
    cur.execute("CALL sluice.p1(a => 6);")
    result = cur.var(int)
    cur.execute("call twice(:n) into :r", n=21, r=result)
    assert result.getvalue() == 42
    assert query_rows(mt, "select id from mt order by id") == [(5,), (6,)]
    assert raised_code(cur.execute, "call p1") == "ORA-06576"


def test_nested_calls_recursion_and_return_in_a_procedure(db):
    run(db, """create function fact(n number) return number is
               begin if n <= 1 then return 1; end if; return n * fact(n - 1); end;""",
        """create procedure report(n number) is
           begin
             if n < 0 then dbms_output.put_line('negative'); return; end if;
             dbms_output.put_line(n || '! = ' || fact(n));
           end;""")
    cur = run(db, "begin report(5); report(-1); report(1); end;")
    assert cur.output == ["5! = 120", "negative", "1! = 1"]
    run(db, "create function forever(n number) return number is begin return forever(n + 1); end;")
    assert raised_code(run, db, "declare v number; begin v := forever(1); end;") == "ORA-06500"


def test_function_without_return_value_is_ora_06503(db):
    run(db, "create function nothing(n number) return number is "
            "begin if n > 0 then return n; end if; end;")
    cur = db.cursor()
    assert cur.callfunc("nothing", int, [3]) == 3
    message = error_of(cur.callfunc, "nothing", int, [0])
    assert message.startswith("ORA-06503: PL/SQL: Function returned without value")
    assert 'ORA-06512: at "SLUICE.NOTHING", line 1' in message


def test_exceptions_propagate_with_ora_06512_lines(db):
    run(db, """create procedure inner_p as
               begin
                 null;
                 raise_application_error(-20001, 'boom');
               end;""",
        """create procedure outer_p as
           begin
             inner_p;
           end;""")
    message = error_of(run, db, "begin\n  outer_p;\nend;")
    assert message.splitlines() == ["ORA-20001: boom", 'ORA-06512: at "SLUICE.INNER_P", line 4',
                                    'ORA-06512: at "SLUICE.OUTER_P", line 3', "ORA-06512: at line 2"]
    # a caller's handler catches it; SQLERRM is the error, without the stack's lines
    cur = run(db, """begin outer_p;
                     exception when others then dbms_output.put_line(sqlcode || ' ' || sqlerrm);
                     end;""")
    assert cur.output == ["-20001 ORA-20001: boom"]
    run(db, """create procedure raiser as e exception; pragma exception_init(e, -20002);
               begin raise e; end;""")
    cur = run(db, """declare e exception; pragma exception_init(e, -20002);
                     begin raiser; exception when e then dbms_output.put_line('caught'); end;""")
    assert cur.output == ["caught"]


def test_units_run_in_the_callers_transaction(mt, dsn):
    run(mt, P1, "create procedure fail_after(a number) as begin p1(a); "
                "raise_application_error(-20001, 'no'); end;")
    mt.cursor().callproc("p1", [1])
    other = sluice.connect(dsn)
    try:
        assert query_rows(other, "select id from mt") == []    # not committed by the call
        assert raised_code(mt.cursor().callproc, "fail_after", [2]) == "ORA-20001"
        assert query_rows(mt, "select id from mt") == [(1,)]   # the failed call's insert undone
        mt.rollback()
        assert query_rows(mt, "select id from mt") == []
        mt.cursor().callproc("p1", [3])
        mt.commit()
        assert query_rows(other, "select id from mt") == [(3,)]
    finally:
        other.close()


def test_create_or_replace_and_the_one_namespace(db, dsn):
    run(db, "create procedure pr as begin dbms_output.put_line('one'); end;")
    assert raised_code(run, db, "create procedure pr as begin null; end;") == "ORA-00955"
    run(db, "create or replace procedure pr as begin dbms_output.put_line('two'); end;")
    assert run(db, "begin pr; end;").output == ["two"]
    # a function, a table, a type: one namespace per schema, OR REPLACE or not
    assert raised_code(run, db, "create or replace function pr return number as begin "
                                "return 1; end;") == "ORA-00955"
    create_table(dsn, "CREATE TABLE tb (id NUMERIC)")
    assert raised_code(run, db, "create or replace procedure tb as begin null; end;") == "ORA-00955"
    assert raised_code(run, db, "create table pr (id number)") == "ORA-00955"
    assert raised_code(run, db, "create type pr as object (a number)") == "ORA-00955"


def test_drop_procedure_and_function(db):
    run(db, "create procedure pd as begin null; end;",
        "create function fd return number as begin return 1; end;")
    assert raised_code(run, db, "drop function pd") == "ORA-04043"
    run(db, "drop procedure pd", "drop function fd")
    assert raised_code(run, db, "drop procedure pd") == "ORA-04043"
    assert "PLS-00201: identifier 'PD' must be declared" in error_of(run, db, "begin pd; end;")
    run(db, "create function pd return number as begin return 2; end;")   # the name is free
    assert db.cursor().callfunc("pd", int) == 2


def test_a_unit_that_does_not_compile_is_created_invalid(db):
    cur = run(db, "create or replace procedure broken as begin this is not pl/sql; end;")
    assert cur.warning is not None and cur.warning.full_code == "DPY-7000"
    assert "PLS-00905: object SLUICE.BROKEN is invalid" in error_of(run, db, "begin broken; end;")
    assert raised_code(run, db, "create procedure broken as begin null; end;") == "ORA-00955"
    assert run(db, "create or replace procedure broken as begin null; end;").warning is None
    run(db, "begin broken; end;")
    # names that do not resolve yet: created with errors, callable once they do
    cur = run(db, "create procedure caller as begin later_p(1); end;")
    assert cur.warning.full_code == "DPY-7000"
    assert "PLS-00905: object SLUICE.CALLER is invalid" in error_of(run, db, "begin caller; end;")
    run(db, "create procedure later_p(n number) as begin dbms_output.put_line('later ' || n); end;")
    assert run(db, "begin caller; end;").output == ["later 1"]


@pytest.mark.parametrize("text, error", [
    ("create procedure r1 as begin return 1; end;", "PLS-00372"),
    ("create function r2 return number as begin return; end;", "PLS-00503"),
    ("create procedure r3(a number) as begin a := 1; end;", "PLS-00363"),
    ("create procedure r4 as begin dbms_output.put_line(:x); end;", "PLS-00049"),
    ("create procedure r5(a out number := 1) as begin null; end;", "PLS-00230"),
    ("create procedure r6(a number, a number) as begin null; end;", "PLS-00410"),
    ("create function r7 as begin null; end;", "PLS-00103"),
])
def test_compilation_errors(db, text, error):
    cur = run(db, text)
    assert cur.warning.full_code == "DPY-7000"
    kind, name = re.match(r"create (\w+) (\w+)", text).groups()
    (spec,) = [spec for _, n, spec in db.context.store.catalog_objects(kind.upper())
               if n == name.upper()]
    assert spec["status"] == "INVALID" and spec["errors"][0]["text"].startswith(error)
    assert spec["source"] == text[len("create "):]
    call = f"v := {name}" if kind == "function" else name
    assert f"PLS-00905: object SLUICE.{name.upper()} is invalid" in error_of(
        run, db, f"declare v number; begin {call}; end;")


def test_return_with_a_value_in_an_anonymous_block(db):
    assert "PLS-00372" in error_of(run, db, "begin return 1; end;")


def test_a_missing_name_is_ora_04050(db):
    assert raised_code(run, db, "create or replace procedure") == "ORA-04050"


def test_another_schema_and_the_execute_privilege(db, dsn):
    create_user(db, "SCOTT")
    create_user(db, "ADAMS")
    run(db, "create procedure scott.greet(who varchar2) as "
            "begin dbms_output.put_line('hello ' || who); end;",
        "create procedure scott.hello(who varchar2) as begin greet(who); end;")
    scott, adams = login(dsn, "SCOTT"), login(dsn, "ADAMS")
    try:
        assert run(scott, "begin hello('me'); end;").output == ["hello me"]
        assert "PLS-00201: identifier 'SCOTT.HELLO' must be declared" in error_of(
            run, adams, "begin scott.hello('you'); end;")
        assert raised_code(run, adams, "create procedure scott.p as begin null; end;") == "ORA-01031"
        run(scott, "grant execute on hello to adams")
        assert run(adams, "begin scott.hello('you'); end;").output == ["hello you"]
        assert adams.cursor().callproc("scott.hello", ["again"]) == ["again"]
        # HELLO calls SCOTT's GREET as SCOTT does: ADAMS may not call it himself
        assert "PLS-00201" in error_of(run, adams, "begin scott.greet('you'); end;")
        run(scott, "revoke execute on hello from adams")
        assert "PLS-00201" in error_of(run, adams, "begin scott.hello('you'); end;")
    finally:
        scott.close()
        adams.close()


def test_drop_user_cascade_drops_the_users_units(db):
    create_user(db, "SCOTT")
    run(db, "create procedure scott.p as begin null; end;",
        "create function scott.f return number as begin return 1; end;")
    assert raised_code(run, db, "drop user scott") == "ORA-01922"
    run(db, "drop user scott cascade")
    assert [n for kind in ("PROCEDURE", "FUNCTION")
            for _, n, _ in db.context.store.catalog_objects(kind)] == []


def test_a_script_creates_and_runs_units(db):
    results = db.cursor().executescript("""
create or replace function plus1(n in number) return number is
begin
  return n + 1;
end plus1;
/
create or replace procedure show_plus1(n number) is
begin
  dbms_output.put_line(plus1(n));
end;
/
exec show_plus1(41)
""")
    assert [r.kind for r in results] == ["ddl", "ddl", "sqlplus"]
    assert results[-1].output == ["42"]


def test_a_stored_procedure_is_a_notification_procedure(mt):
    make_queue(mt)
    run(mt, """create procedure p_notify(context raw, reginfo sys.aq$_reg_info,
                                         descr sys.aq$_descriptor, payload raw,
                                         payloadl number) as
                 txt varchar2(200) := descr.queue_name || ' ' || utl_raw.cast_to_varchar2(payload);
               begin
                 insert into mt (id, note) values (payloadl, txt);
               end;""",
        """begin
             dbms_aq.register(sys.aq$_reg_info_list(
               sys.aq$_reg_info('Q', dbms_aq.namespace_aq, 'PLSQL://p_notify?PR=0', null,
                                dbms_aq.ntfn_qos_payload)), 1);
           end;""")
    mt.queue("Q").enqone(mt.msgproperties(payload=b"hi"))
    mt.commit()
    assert wait_until(lambda: query_rows(mt, "select id, note from mt") == [(2, "SLUICE.Q hi")])
