"""Oracle's views typed at a cursor (src/sluice/store/viewddl.py), on both stores: CREATE [OR
REPLACE] [FORCE | NOFORCE] VIEW … AS subquery [WITH READ ONLY | WITH CHECK OPTION], DROP VIEW;
the view queried and described as a table, DML through a simple one where the store updates
views (ORA-01732 where not), ORA-04063 for a view whose query no longer compiles, its name in
the schema's one namespace, the system privileges (was: ORA-00900 for each)."""

from __future__ import annotations

import datetime as dt

import pytest

import sluice
from tests.sqlhelpers import query_code, query_headed, query_rows

PASSWORD = "Pw-for-tests-1"
T = dt.datetime(2026, 1, 2, 3, 4, 5)


def _run(conn, *statements):
    cur = conn.cursor()
    for sql in statements:
        cur.execute(sql)
    return cur


@pytest.fixture
def emp(conn):
    _run(conn, "create table emp (id number(10) primary key, name varchar2(40) not null, hired date, "
               "sal number(10,2), dept number(4))")
    conn.cursor().executemany("insert into emp values (:1, :2, :3, :4, :5)",
                              [(1, "Ann", T, 1200.5, 10), (2, "Bob", None, 900, 20), (3, "Cy", T, 700, 10)])
    conn.commit()
    return conn


def test_a_view_is_queried_and_described_as_its_table(emp):
    _run(emp, "create view rich as select id, name, hired, sal from emp where sal > 800")
    cur = emp.cursor()
    cur.execute("select * from rich order by id")
    assert cur.fetchall() == [(1, "Ann", T, 1200.5), (2, "Bob", None, 900.0)]
    d = cur.description
    assert [x[0] for x in d] == ["ID", "NAME", "HIRED", "SAL"]
    assert d[2][1] is sluice.DB_TYPE_DATE and d[0][1] is sluice.DB_TYPE_NUMBER
    assert (d[3][4], d[3][5]) == (10, 2)
    # joined, filtered, with an alias and qualified by its owner, in a subquery
    assert query_rows(emp, "select r.name, e.dept from sluice.rich r join emp e on e.id = r.id "
                           "where r.sal < 1000") == [("Bob", 20)]
    assert query_rows(emp, "select count(*) from (select * from rich)") == [(2,)]
    # the view shows the table's rows as they are now
    _run(emp, "update emp set sal = 100 where id = 2")
    assert query_rows(emp, "select id from rich") == [(1,)]


def test_an_expression_of_a_view_is_fetched_and_described_by_its_type(emp):
    _run(emp, "create view nexts as select id, hired + 1 next_day, sal * 2 twice, upper(name) big from emp")
    cur = emp.cursor()
    cur.execute("select next_day, twice, big from nexts where id = 1")
    assert cur.fetchall() == [(T + dt.timedelta(days=1), 2401.0, "ANN")]
    assert cur.description[0][1] in (sluice.DB_TYPE_DATE, sluice.DB_TYPE_TIMESTAMP)
    assert query_rows(emp, "select data_type from user_tab_columns where table_name = 'NEXTS' "
                           "and column_name = 'NEXT_DAY'")[0][0] in ("DATE", "TIMESTAMP(6)")


def test_column_aliases_expressions_and_or_replace(emp):
    _run(emp, "create view by_dept (dept, total, staff) as select dept, sum(sal), count(*) from emp group by dept")
    assert query_headed(emp, "select * from by_dept order by dept") == \
        (["DEPT", "TOTAL", "STAFF"], [(10, 1900.5, 2), (20, 900, 1)])
    assert query_code(emp, "create view bad as select dept, sum(sal) from emp group by dept") == "ORA-00998"
    assert query_code(emp, "create view bad (a) as select dept, sal from emp") == "ORA-01730"
    assert query_code(emp, "create view by_dept as select id from emp") == "ORA-00955"
    _run(emp, "create or replace view by_dept as select dept, max(sal) top from emp group by dept")
    assert query_headed(emp, "select * from by_dept where dept = 20") == (["DEPT", "TOP"], [(20, 900)])
    assert query_code(emp, "select * from bad") == "ORA-00942"


def test_drop_view_and_the_one_namespace(emp):
    _run(emp, "create view v1 as select id from emp", "create sequence s1")
    for sql in ("create table v1 (a number)", "create view emp as select 1 a from dual",
                "create view s1 as select id from emp", "create sequence v1",
                "create or replace view emp as select 1 a from dual"):
        assert query_code(emp, sql) == "ORA-00955", sql
    assert query_code(emp, "drop table v1") == "ORA-00942"
    assert query_code(emp, "drop view emp") == "ORA-00942"
    assert query_code(emp, "drop view nothing_here") == "ORA-00942"
    _run(emp, "drop view v1")
    assert query_code(emp, "select * from v1") == "ORA-00942"
    _run(emp, "create table v1 (a number)", "insert into v1 values (5)")
    assert query_rows(emp, "select a from v1") == [(5,)]
    assert query_rows(emp, "select count(*) from emp") == [(3,)]


def test_ddl_commits_and_a_bad_view_changes_nothing(emp, conn2):
    _run(emp, "insert into emp values (4, 'Di', null, 1, 30)")
    assert query_code(emp, "create view v as select * from missing_table") == "ORA-00942"
    assert query_rows(conn2, "select count(*) from emp") == [(4,)]    # the DDL committed first
    assert query_code(emp, "select * from v") == "ORA-00942"
    assert query_code(emp, "create view v as select id from emp with check") == "ORA-00905"
    assert query_code(emp, "create view v as delete from emp") == "ORA-00928"


def test_force_view_over_a_missing_table_has_errors_until_it_compiles(conn):
    _run(conn, "create force view later as select a, b from later_t")
    assert query_code(conn, "select * from later") == "ORA-04063"
    assert query_rows(conn, "select status from user_objects where object_name = 'LATER'") == [("INVALID",)]
    assert query_code(conn, "create view later as select 1 x from dual") == "ORA-00955"
    _run(conn, "create table later_t (a number, b varchar2(5))", "insert into later_t values (1, 'x')")
    assert query_headed(conn, "select * from later") == (["A", "B"], [(1, "x")])
    assert query_rows(conn, "select status from user_objects where object_name = 'LATER'") == [("VALID",)]


def test_dropping_or_altering_its_table_invalidates_the_view(emp, conn2):
    _run(emp, "create view names as select id, name from emp", "create view names2 as select name from names")
    assert query_rows(conn2, "select min(name) from names2") == [("Ann",)]
    _run(emp, "alter table emp drop column sal")
    assert query_rows(conn2, "select name from names2 order by name") == [("Ann",), ("Bob",), ("Cy",)]
    _run(emp, "drop table emp")
    assert query_code(conn2, "select * from names") == "ORA-04063"
    assert query_code(emp, "select * from names2") == "ORA-04063"
    _run(emp, "create table emp (id number, name varchar2(9))", "insert into emp values (7, 'Ed')")
    emp.commit()     # (SQLite: a compilation writes the file, whose one writer the insert was)
    assert query_rows(conn2, "select * from names2") == [("Ed",)]
    assert query_rows(emp, "select id, name from names") == [(7, "Ed")]


def test_dml_through_a_simple_view(emp, dsn):
    _run(emp, "create view tens as select id, name, sal from emp where dept = 10")
    if dsn.startswith("sqlite"):     # SQLite updates no view
        assert query_code(emp, "update tens set sal = 1 where id = 1") == "ORA-01732"
        assert query_code(emp, "insert into tens (id, name) values (9, 'Z')") == "ORA-01732"
        return
    cur = _run(emp, "update tens set sal = sal + 1 where id in (1, 2)")
    assert cur.rowcount == 1
    _run(emp, "delete from tens where id = 3", "insert into tens (id, name, sal) values (9, 'Zed', 5)")
    emp.commit()
    assert query_rows(emp, "select id, sal, dept from emp order by id") == \
        [(1, 1201.5, 10), (2, 900.0, 20), (9, 5.0, None)]
    _run(emp, "create view totals as select dept, count(*) n from emp group by dept")
    assert query_code(emp, "delete from totals") == "ORA-01732"


def test_with_read_only_and_with_check_option(emp, dsn):
    _run(emp, "create view ro as select id, name from emp with read only",
         "create view checked as select id, name, dept from emp where dept = 10 with check option")
    assert query_rows(emp, "select name from ro where id = 2") == [("Bob",)]
    for sql in ("insert into ro (id, name) values (8, 'x')", "update ro set name = 'y'", "delete from ro"):
        assert query_code(emp, sql) == "ORA-42399", sql
    assert query_rows(emp, "select read_only from user_views where view_name = 'RO'") == [("Y",)]
    if dsn.startswith("sqlite"):
        assert query_code(emp, "insert into checked values (8, 'x', 10)") == "ORA-01732"
        return
    assert query_code(emp, "insert into checked values (8, 'x', 20)") == "ORA-01402"
    _run(emp, "insert into checked values (8, 'x', 10)")
    assert query_rows(emp, "select name from emp where id = 8") == [("x",)]


def test_what_a_view_cannot_keep_is_refused(emp):
    for sql in ("create view v as select id, sysdate d from emp", "create view v as select user u from dual",
                "create view v as select table_name from user_tables"):
        assert query_code(emp, sql) == "SLU-00001", sql
    assert query_code(emp, "select * from v") == "ORA-00942"


def test_the_system_privileges(emp, dsn):
    cur = emp.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION TO scott")
    _run(emp, "create view theirs as select id from emp")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        assert query_code(scott, "create view mine as select 1 a from dual") == "ORA-01031"
        cur.execute("GRANT CREATE VIEW TO scott")
        assert query_rows(emp, "SELECT PRIVILEGE FROM DBA_SYS_PRIVS WHERE GRANTEE = 'SCOTT' ORDER BY 1") == \
            [("CREATE SESSION",), ("CREATE VIEW",)]
        _run(scott, "create view mine as select 1 a from dual")
        assert query_rows(scott, "select a from mine") == [(1,)]
        assert query_rows(emp, "select a from scott.mine") == [(1,)]
        assert query_code(scott, "create view sluice.other as select 1 a from dual") == "ORA-01031"
        assert query_code(scott, "drop view sluice.theirs") == "ORA-01031"
        cur.execute("GRANT DROP ANY VIEW TO scott")
        _run(scott, "drop view sluice.theirs", "drop view mine")
    assert query_code(emp, "select * from theirs") == "ORA-00942"


def test_drop_user_cascade_drops_the_users_views(conn, dsn):
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION, CREATE TABLE, CREATE VIEW TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        _run(scott, "create table st (a number)", "create view sv as select a from st",
             "create force view broken as select b from nowhere")
    assert query_rows(conn, "select owner, view_name from dba_views order by 2") == \
        [("SCOTT", "BROKEN"), ("SCOTT", "SV")]
    cur.execute("DROP USER scott CASCADE")
    assert query_rows(conn, "select count(*) from dba_views") == [(0,)]
    assert query_code(conn, "select * from scott.sv") == "ORA-00942"
    _run(conn, "create view sv as select 1 one from dual")      # (the name is free again)


def test_a_quoted_name_is_kept_through_recompilation(conn):
    _run(conn, 'create table "Mixed" (id number)', 'insert into "Mixed" values (1)',
         'create view "MyView" as select id from "Mixed"', 'alter table "Mixed" add (w number)')
    assert query_rows(conn, 'select id from "MyView"') == [(1,)]
    assert query_rows(conn, "select v.view_name, o.status from user_views v join user_objects o "
                            "on o.object_name = v.view_name") == [("MyView", "VALID")]
