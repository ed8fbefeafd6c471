"""Oracle's table DDL typed at a cursor (src/sluice/store/tableddl.py), on both stores: CREATE
TABLE (Oracle's types, constraints, identity, AS SELECT), DROP / TRUNCATE, ALTER TABLE ADD /
DROP COLUMN / MODIFY / RENAME COLUMN, CREATE / DROP INDEX, COMMENT; the table then used by
cursor SQL as one made in the database itself, described with its declared types; Oracle's
errors and its implicit commits; the system privileges (was: ORA-00900 for every one)."""

from __future__ import annotations

import datetime as dt
import time

import pytest

import sluice
from tests.sqlhelpers import create_table, query_code, query_headed, query_rows, raised_code

PASSWORD = "Pw-for-tests-1"
T = dt.datetime(2026, 1, 2, 3, 4, 5)
EMP = ("create table emp (id number(10) primary key, name varchar2(40) not null, hired date, "
       "sal number(10,2), notes clob)")


def _run(conn, *statements):
    cur = conn.cursor()
    for sql in statements:
        cur.execute(sql)
    return cur


def _text(v):
    return v if v is None or isinstance(v, str) else v.read()


def test_a_python_oracledb_script_end_to_end(conn):
    """create, executemany, select, describe, update / delete with binds, drop."""
    cur = conn.cursor()
    cur.execute(EMP)
    rows = [(1, "Ann", T, 1200.5, "first"), (2, "Bob", T + dt.timedelta(days=1), 900, None),
            (3, "Cy", None, None, "x" * 5000)]
    cur.executemany("insert into emp (id, name, hired, sal, notes) values (:1, :2, :3, :4, :5)", rows)
    conn.commit()
    cur.execute("select id, name, hired, sal, notes from emp order by id")
    got = [(*r[:4], _text(r[4])) for r in cur.fetchall()]
    assert got == [(1, "Ann", T, 1200.5, "first"), (2, "Bob", T + dt.timedelta(days=1), 900.0, None),
                   (3, "Cy", None, None, "x" * 5000)]
    assert type(got[0][0]) is int and type(got[1][3]) is float     # NUMBER(10) an int, NUMBER(10,2) a float
    d = cur.description
    assert [x[0] for x in d] == ["ID", "NAME", "HIRED", "SAL", "NOTES"]
    assert d[0][1] is sluice.DB_TYPE_NUMBER and (d[0][4], d[0][5]) == (10, 0)
    assert d[1][1] is sluice.DB_TYPE_VARCHAR
    assert d[2][1] is sluice.DB_TYPE_DATE
    assert d[3][1] is sluice.DB_TYPE_NUMBER and (d[3][4], d[3][5]) == (10, 2)
    cur.execute("update emp set sal = sal + :inc where id = :id", inc=100, id=2)
    assert cur.rowcount == 1
    cur.execute("delete from emp where name = :n", ["Cy"])
    conn.commit()
    assert query_rows(conn, "select id, sal from emp order by id") == [(1, 1200.5), (2, 1000.0)]
    # the same table through a qualified star and an alias, date arithmetic of its DATE column
    assert query_rows(conn, "select e.hired + 1, hired - hired from emp e where id = 1") == \
        [(T + dt.timedelta(days=1), 0)]
    cur.execute("drop table emp purge")
    assert query_code(conn, "select * from emp") == "ORA-00942"


def test_oracle_types_are_described_as_declared(conn):
    _run(conn, "create table typed (n number, i integer, f float, bd binary_double, v varchar2(10 char), "
               "nv nvarchar2(10), c char(3), d date, ts timestamp(6), tz timestamp with time zone, r raw(16), "
               "dec number(*, 2), small smallint)")
    cur = conn.cursor()
    cur.execute("insert into typed (n, i, f, bd, v, nv, c, d, ts, r, dec, small) values "
                "(:n, :i, :f, :bd, :v, :nv, :c, :d, :ts, :r, :dec, :small)",
                n=2.5, i=7, f=1.25, bd=0.5, v="vee", nv="nv", c="abc", d=T, ts=T,
                r=b"\x01\x02", dec=3, small=4)
    conn.commit()
    cur.execute("select n, i, f, bd, v, nv, c, d, ts, r, dec, small from typed")
    assert cur.fetchall() == [(2.5, 7, 1.25, 0.5, "vee", "nv", "abc", T, T,
                               b"\x01\x02", 3.0, 4)]
    types = [d[1] for d in cur.description]
    assert types[:2] == [sluice.DB_TYPE_NUMBER] * 2 and types[4] is sluice.DB_TYPE_VARCHAR
    assert (types[7], types[8]) == (sluice.DB_TYPE_DATE, sluice.DB_TYPE_TIMESTAMP)
    assert cur.description[1][4:6] == (38, 0) and cur.description[10][4:6] == (38, 2)


def test_names_unquoted_upper_cased_quoted_kept(conn):
    _run(conn, 'create table "Odd Table" ("Mixed" number, plain varchar2(5))',
         "insert into \"Odd Table\" (\"Mixed\", PLAIN) values (1, 'a')")
    assert query_rows(conn, 'select "Mixed", plain, Plain from "Odd Table"') == [(1, "a", "a")]
    _run(conn, "CREATE TABLE Lower_Case (X NUMBER)", "insert into lower_case values (5)")
    assert query_rows(conn, "select x from LOWER_CASE") == [(5,)]
    _run(conn, 'drop table "Odd Table"', "drop table lower_case")
    assert query_code(conn, "select * from lower_case") == "ORA-00942"


def test_constraints_inline_and_out_of_line_hold(conn):
    _run(conn, "create table dept (id number(4) constraint dept_pk primary key, dname varchar2(20) unique)",
         "create table staff (id number(6), dept_id number(4) references dept (id), "
         "sal number(8,2) default 100 check (sal > 0), code char(2) not null, "
         "constraint staff_pk primary key (id), constraint staff_code_uk unique (code, dept_id))",
         "insert into dept values (10, 'Sales')",
         "insert into staff (id, dept_id, code) values (1, 10, 'A1')")
    conn.commit()
    assert query_rows(conn, "select id, dept_id, sal, code from staff") == [(1, 10, 100.0, "A1")]
    assert query_code(conn, "insert into staff (id, dept_id, code) values (1, 10, 'B2')") == "ORA-00001"
    assert query_code(conn, "insert into staff (id, dept_id, sal, code) values (2, 10, -1, 'B2')") == "ORA-02290"
    assert query_code(conn, "insert into staff (id, dept_id) values (3, 10)") == "ORA-01400"
    assert query_code(conn, "insert into dept values (20, 'Sales')") == "ORA-00001"
    # the parent of a foreign key: ORA-02449 without CASCADE CONSTRAINTS, nothing dropped
    assert query_code(conn, "drop table dept") == "ORA-02449"
    assert query_code(conn, "truncate table dept") == "ORA-02266"
    assert query_rows(conn, "select count(*) from dept") == [(1,)]
    _run(conn, "drop table dept cascade constraints purge")
    assert query_rows(conn, "select count(*) from staff") == [(1,)]


def test_identity_columns_number_the_rows(conn):
    _run(conn, "create table ids (id number generated always as identity primary key, v varchar2(5))")
    conn.cursor().executemany("insert into ids (v) values (:1)", [("a",), ("b",)])
    conn.commit()
    assert query_rows(conn, "select id, v from ids order by id") == [(1, "a"), (2, "b")]
    assert query_code(conn, "insert into ids (id, v) values (7, 'c')") == "ORA-32795"
    assert query_code(conn, "update ids set id = 9 where id = 1") == "ORA-32796"
    _run(conn, "update ids set v = 'z' where id = 1", "alter table ids rename to ids2",
         "create table byd (id number generated by default as identity primary key, v varchar2(5))",
         "insert into byd (id, v) values (7, 'c')", "insert into byd (v) values ('d')")
    assert query_code(conn, "insert into ids2 (id, v) values (7, 'c')") == "ORA-32795"
    assert query_rows(conn, "select id, v from ids2 order by id") == [(1, "z"), (2, "b")]
    assert query_rows(conn, "select v from byd order by v") == [("c",), ("d",)]


def test_create_table_as_select(conn):
    _run(conn, EMP, "insert into emp (id, name, hired, sal) values (1, 'Ann', DATE '2026-01-02', 10.5)",
         "insert into emp (id, name, hired, sal) values (2, 'Bob', NULL, 7)")
    conn.commit()
    _run(conn, "create table emp2 as select id, name, hired, sal from emp where id > 1")
    names, rows = query_headed(conn, "select * from emp2")
    assert (names, rows) == (["ID", "NAME", "HIRED", "SAL"], [(2, "Bob", None, 7.0)])
    _run(conn, "create table emp3 (ident, who) as select id, name from emp order by id")
    assert query_rows(conn, "select ident, who from emp3 order by ident") == [(1, "Ann"), (2, "Bob")]
    cur = _run(conn, "create table emp4 as select id, hired from emp where id = 1")
    cur.execute("select hired, hired + 1 from emp4")
    assert cur.fetchall() == [(dt.datetime(2026, 1, 2), dt.datetime(2026, 1, 3))]
    assert cur.description[0][1] is sluice.DB_TYPE_DATE
    assert query_code(conn, "create table emp5 as select count(*) from emp") == "ORA-00998"
    assert query_code(conn, "create table emp5 (a, b) as select id from emp") == "ORA-01730"
    assert query_code(conn, "select * from emp5") == "ORA-00942"


def test_truncate_empties_the_table(conn):
    _run(conn, "create table t (a number)", "insert into t values (1)", "insert into t values (2)")
    conn.commit()
    _run(conn, "truncate table t")
    assert query_rows(conn, "select count(*) from t") == [(0,)]
    assert query_code(conn, "truncate table nope") == "ORA-00942"


def test_alter_table_add_drop_modify_rename(conn):
    _run(conn, "create table t (id number(5), name varchar2(10))", "insert into t values (1, 'a')")
    conn.commit()
    _run(conn, "alter table t add (x number(5) default 7, y date)")
    assert query_rows(conn, "select id, name, x, y from t") == [(1, "a", 7, None)]
    assert query_code(conn, "alter table t add (x number)") == "ORA-01430"
    assert query_code(conn, "alter table t add w number not null") == "ORA-01758"
    _run(conn, "alter table t drop column y")
    assert query_code(conn, "select y from t") == "ORA-00904"
    assert query_code(conn, "alter table t drop column nope") == "ORA-00904"
    _run(conn, "alter table t modify (name varchar2(80))")
    conn.cursor().execute("insert into t (id, name) values (2, :n)", n="b" * 60)
    conn.commit()
    assert query_code(conn, "alter table t modify (name number)") == "ORA-01439"
    _run(conn, "alter table t modify x not null")
    assert query_code(conn, "alter table t modify x not null") == "ORA-01442"
    assert query_code(conn, "insert into t (id, x) values (3, NULL)") == "ORA-01400"
    _run(conn, "alter table t modify (x null)")
    assert query_code(conn, "alter table t modify (x null)") == "ORA-01451"
    _run(conn, "alter table t rename column x to z")
    assert query_rows(conn, "select id, z from t order by id") == [(1, 7), (2, 7)]
    assert query_code(conn, "alter table t rename column nope to q") == "ORA-00904"
    assert query_code(conn, "alter table nope add (a number)") == "ORA-00942"
    _run(conn, "delete from t")
    conn.commit()
    _run(conn, "alter table t add (w number not null)", "insert into t (id, w) values (5, 1)")
    assert query_code(conn, "insert into t (id) values (6)") == "ORA-01400"


def test_indexes(conn):
    _run(conn, EMP, "insert into emp (id, name) values (1, 'Ann')", "insert into emp (id, name) values (2, 'Ann')")
    conn.commit()
    _run(conn, "create index emp_name_ix on emp (name desc, hired)")
    assert query_code(conn, "create index emp_name_ix on emp (hired)") == "ORA-00955"
    assert query_code(conn, "create index emp_x on emp (nope)") == "ORA-00904"
    assert query_code(conn, "create index emp_x on nope (a)") == "ORA-00942"
    assert query_code(conn, "create unique index emp_name_uk on emp (name)") == "ORA-01452"
    _run(conn, "create unique index emp_hired_uk on emp (hired, sal)")      # all-NULL keys are no duplicates
    _run(conn, "drop index emp_name_ix", "drop index emp_hired_uk")
    assert query_code(conn, "drop index emp_name_ix") == "ORA-01418"
    _run(conn, "delete from emp where id = 2", "create unique index emp_name_uk on emp (name)")
    assert query_code(conn, "insert into emp (id, name) values (3, 'Ann')") == "ORA-00001"


def test_comments_are_accepted(conn):
    _run(conn, EMP, "comment on table emp is 'people'", "comment on column emp.name is 'their name'")
    assert query_code(conn, "comment on column emp.nope is 'x'") == "ORA-00904"
    assert query_code(conn, "comment on table nope is 'x'") == "ORA-00942"


@pytest.mark.parametrize("ddl, code", [
    ("create table bad (a numbr)", "ORA-00902"),
    ("create table bad (a varchar2)", "ORA-00906"),
    ("create table bad (date date)", "ORA-00904"),
    ("create table bad (a number, a date)", "ORA-00957"),
    ("create table bad (a number, constraint pk primary key (b))", "ORA-00904"),
    ("create table bad (a number(39))", "ORA-01727"),
    ("create table bad (a number primary key, b number primary key)", "ORA-02260"),
    ("create table bad (a varchar2(10) generated always as identity)", "ORA-30675"),
    ("create table table (a number)", "ORA-00903"),
    ("create table bad (a number) frobnicate", "ORA-00922"),
    ("create table bad (a number references nope (x))", "ORA-00942"),
])
def test_bad_ddl_is_refused_and_changes_nothing(conn, ddl, code):
    assert query_code(conn, ddl) == code
    assert query_code(conn, "select * from bad") == "ORA-00942"


def test_existing_and_missing_names(conn):
    _run(conn, "create table t (a number)")
    assert query_code(conn, "create table t (b number)") == "ORA-00955"
    assert query_code(conn, "create table T (b date)") == "ORA-00955"
    assert query_rows(conn, "select count(*) from t") == [(0,)]
    for sql in ("drop table nope", "alter table nope drop column a", "truncate table nope",
                "drop table sluice_meta", "alter table aq_queues add (x number)"):
        assert query_code(conn, sql) == "ORA-00942", sql
    assert query_code(conn, "create table sluice_meta (a number)") == "ORA-00955"


def test_queue_tables_are_not_the_users(conn):
    conn.aqadm.create_queue_table(queue_table="q_qt", queue_payload_type="RAW")
    assert query_code(conn, "drop table q_qt") == "ORA-24005"
    assert query_code(conn, "truncate table q_qt") == "ORA-24005"
    assert query_code(conn, "create table q_qt (a number)") == "ORA-00955"


def test_ddl_commits_before_and_only_once_read(conn, conn2):
    """A statement Oracle cannot read commits nothing; one it reads commits first, even when
    it then fails (ORA-00955)."""
    _run(conn, "create table t (a number)", "insert into t values (1)")
    assert query_code(conn, "create table u (a numbr)") == "ORA-00902"
    assert query_rows(conn2, "select count(*) from t") == [(0,)]
    conn.rollback()
    assert query_rows(conn, "select count(*) from t") == [(0,)]
    _run(conn, "insert into t values (2)")
    assert query_code(conn, "create table t (a number)") == "ORA-00955"
    conn.rollback()
    assert query_rows(conn2, "select a from t") == [(2,)]
    _run(conn, "insert into t values (3)", "create table u (a number)")
    conn.rollback()
    assert query_rows(conn2, "select a from t order by a") == [(2,), (3,)]


def test_the_system_privileges(conn, dsn):
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        assert query_code(scott, "create table mine (a number)") == "ORA-01031"
        cur.execute("GRANT CREATE TABLE TO scott")
        assert query_rows(conn, "SELECT PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE = 'SCOTT' "
                                "ORDER BY 1") == [("CREATE SESSION",), ("CREATE TABLE",)]
        _run(scott, "create table mine (a number)", "insert into mine values (1)",
             "alter table mine add (b number)", "create index mine_ix on mine (b)",
             "comment on table mine is 'ok'")
        assert query_code(scott, "create table other.t (a number)") == "ORA-01031"
        _run(conn, "create table theirs (a number)")
        for sql in ("drop table sluice.theirs", "drop table theirs", "alter table sluice.theirs add (b number)",
                    "truncate table sluice.theirs", "create index t_ix on sluice.theirs (a)",
                    "comment on table sluice.theirs is 'x'"):
            assert query_code(scott, sql) == "ORA-01031", sql
        cur.execute("GRANT DROP ANY TABLE TO scott")
        _run(scott, "drop table sluice.theirs", "truncate table mine", "drop table mine")
    assert query_code(conn, "select * from theirs") == "ORA-00942"


def test_a_table_made_here_is_a_synchronous_capture_source(conn, dsn):
    """Capture reads the database's own catalog: the table and its columns as one made there."""
    _run(conn, EMP)
    if dsn.startswith("sqlite"):
        from sluice.streams.capture import syncsqlite
        import sqlite3
        with sqlite3.connect(dsn.removeprefix("sqlite:///")) as db:
            table = syncsqlite.find_table(db, "HR", "EMP")
        assert [c[0] for c in table.columns] == ["ID", "NAME", "HIRED", "SAL", "NOTES"]
        return
    import psycopg
    from sluice.streams.capture import syncpg
    schema = dsn.rsplit("schema=", 1)[1]
    with psycopg.connect(dsn.partition("?")[0]) as db:
        table = syncpg.find_table(db, schema.upper(), "EMP")
    assert [c[0] for c in table.columns] == ["id", "name", "hired", "sal", "notes"] and not table.unsupported


def test_statements_other_than_table_ddl_are_still_refused(conn):
    assert raised_code(lambda: conn.cursor().execute("create synonym s for dual")) == "ORA-00900"   # (views: test_views)


def test_a_table_made_here_is_an_apply_target(conn, dsn):
    """An apply process's target reads the database's catalog: the columns, their types and
    the primary key of a table made at the cursor, and applies a row to it."""
    from sluice.streams.apply.targetdsn import open_target
    _run(conn, "create table emp (id number(10), name varchar2(40) not null, hired date, "
               "constraint emp_pk primary key (id))")
    target = open_target(dsn, "", None, None)
    try:
        owner = "HR" if dsn.startswith("sqlite") else dsn.rsplit("schema=", 1)[1].upper()
        columns, types, key = target.describe(owner, "EMP")
        assert (columns, key) == (["ID", "NAME", "HIRED"], ["ID"])
        assert "timestamp" in types["HIRED"] or types["HIRED"] == "date"
        table = target.table(owner, "EMP")
        mark = "?" if dsn.startswith("sqlite") else "%s"
        target.execute(f"INSERT INTO {table} (id, name, hired) VALUES ({mark}, {mark}, {mark})",
                       (1, "Ann", (target.converter(types["HIRED"]) or (lambda v: v))(T)))
        target.commit()
    finally:
        target.close()
    assert query_rows(conn, "select id, name, hired from emp") == [(1, "Ann", T)]


def test_the_drop_if_it_exists_idioms(conn):
    """python-oracledb's samples drop a table in a block that ignores ORA-00942; Oracle 23
    (the release Sluice answers as) says DROP TABLE IF EXISTS / CREATE TABLE IF NOT EXISTS."""
    block = ("begin execute immediate '{}'; exception when others then "
             "if sqlcode <> -942 then raise; end if; end;")
    cur = conn.cursor()
    cur.execute(block.format("drop table emp purge"))
    cur.execute(block.format("create table emp (id number(10) primary key, name varchar2(20))"))
    cur.execute("insert into emp values (1, 'a')")
    cur.execute(block.format("drop table emp purge"))
    assert query_code(conn, "select * from emp") == "ORA-00942"
    _run(conn, "drop table if exists emp", "create table if not exists emp (id number)",
         "create table if not exists emp (other date)", "create index if not exists emp_ix on emp (id)",
         "create index if not exists emp_ix on emp (id)", "drop index if exists emp_ix",
         "drop index if exists emp_ix", "alter table if exists nope add (a number)")
    assert query_headed(conn, "select * from emp") == (["ID"], [])
    _run(conn, "drop table if exists emp", "drop table if exists emp")
    assert query_code(conn, "drop table emp") == "ORA-00942"


def test_ddl_on_a_table_another_session_is_changing_is_ora_00054(conn, conn2):
    """As Oracle's DDL that finds the table locked (after a wait, PostgreSQL's 5 s: SQLite
    locks the whole file, so any open DML transaction counts there)."""
    _run(conn, "create table t (a number)", "insert into t values (1)")
    start = time.monotonic()
    assert query_code(conn2, "alter table t add (b number)") == "ORA-00054"
    assert time.monotonic() - start < 30          # (SQLite's busy wait was the store's 60 s)
    conn.commit()
    _run(conn2, "alter table t add (b number)")
    assert query_rows(conn, "select a, b from t") == [(1, None)]


def test_drop_user_cascade_drops_the_users_tables(conn, dsn):
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION, CREATE TABLE TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        _run(scott, "create table mine (a number primary key)", "create table kids (a number references mine)")
    assert raised_code(lambda: cur.execute("DROP USER scott")) == "ORA-01922"
    assert query_rows(conn, "select count(*) from mine") == [(0,)]
    cur.execute("DROP USER scott CASCADE")
    assert query_code(conn, "select * from mine") == "ORA-00942"
    assert query_code(conn, "select * from kids") == "ORA-00942"
    _run(conn, "create table mine (b date)")       # the name is free, and the session user's
    _run(conn, "drop table mine")


def test_a_value_longer_than_its_column_is_ora_12899(conn):
    _run(conn, "create table t (v varchar2(5), c char(2), r raw(2), n number)",
         "insert into t (v, c, n) values ('abcde', 'ab', 1)")
    for sql in ("insert into t (v) values ('abcdef')", "insert into t (c) values ('abc')",
                "update t set v = v || 'x'"):
        assert query_code(conn, sql) == "ORA-12899", sql
    _run(conn, "alter table t modify (v varchar2(6))", "update t set v = v || 'x'",
         "alter table t rename column v to w", "alter table t add (x varchar2(1))", "alter table t drop column c")
    assert query_code(conn, "insert into t (x) values ('xy')") == "ORA-12899"
    assert query_code(conn, "insert into t (w) values ('abcdefg')") == "ORA-12899"
    assert query_rows(conn, "select w, n from t") == [("abcdex", 1)]


def test_a_number_past_its_precision_is_ora_01438(conn):
    _run(conn, "create table t (a number(5,2), b number(3), c integer, d number)")
    _run(conn, "insert into t values (999.99, 999, 12345678901234567890, 1e100)")
    for sql in ("insert into t (a) values (1000)", "insert into t (a) values (999.996)",
                "insert into t (b) values (1000)", "update t set b = b + 1"):
        assert query_code(conn, sql) == "ORA-01438", sql
    assert query_rows(conn, "select a, b from t") == [(999.99, 999)]


def test_a_table_is_named_with_its_owners_schema(conn, dsn):
    """SCOTT's table is SCOTT.MINE for everyone (SQLite has no schema SCOTT, PostgreSQL's
    schema scott is not the store's: cursor SQL reads the owner the table was made by)."""
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION, CREATE TABLE TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        _run(scott, "create table mine (a number, d date)", "insert into scott.mine (a, d) values (1, NULL)")
        scott.commit()
        assert query_rows(scott, "select a, d from scott.mine") == [(1, None)]
    _run(conn, "insert into scott.mine (a) values (2)", "update scott.mine set a = a + 10 where a = 2")
    assert query_rows(conn, "select s.a from scott.mine s order by 1") == [(1,), (12,)]
    assert query_code(conn, "select * from other.mine") == "ORA-00942"
    _run(conn, "drop table scott.mine")
    assert query_code(conn, "select * from scott.mine") == "ORA-00942"


def test_a_table_dropped_behind_sluices_back_leaves_no_owner(conn, dsn):
    """The record of a table made at a cursor and dropped in the database itself does not
    make a new table of that name its old owner's."""
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION, CREATE TABLE TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        _run(scott, "create table gone (a number)")
        create_table(dsn, "DROP TABLE gone")
        _run(conn, "create table gone (b number)")             # SLUICE's now
        assert query_code(scott, "drop table gone") == "ORA-01031"
        assert query_code(conn, "select * from scott.gone") == "ORA-00942"
    _run(conn, "drop table gone")


def test_a_lob_column_of_a_table_made_at_a_cursor_fetches_as_a_lob(conn):
    """CREATE TABLE … CLOB / BLOB at the cursor, then python-oracledb's default fetch: LOB
    objects (the PostgreSQL domains tableddl makes are what the LOB describe reads)."""
    _run(conn, "CREATE TABLE docs (id NUMBER(10) PRIMARY KEY, body CLOB, pic BLOB)")
    cur = conn.cursor()
    cur.execute("INSERT INTO docs VALUES (:1, :2, :3)", [1, "héllo wörld", b"\x00\x01"])
    cur.execute("SELECT body, pic FROM docs")
    body, pic = cur.fetchone()
    assert [d[1] for d in cur.description] == [sluice.DB_TYPE_CLOB, sluice.DB_TYPE_BLOB]
    assert (body.read(), body.size(), pic.read()) == ("héllo wörld", 11, b"\x00\x01")
    cur.execute("SELECT body FROM docs", fetch_lobs=False)
    assert cur.fetchone() == ("héllo wörld",)
