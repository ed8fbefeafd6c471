"""Oracle's global temporary tables typed at a cursor (src/sluice/store/temptables.py,
read by src/sluice/store/tableddl.py), on both stores: the definition shared and permanent,
the rows each session's own, ended by a commit (ON COMMIT DELETE ROWS, the default) or by
the session's end (PRESERVE ROWS) (was: ORA-00900)."""

from __future__ import annotations

import datetime as dt

import sluice
from tests.sqlhelpers import query_code, query_rows

T = dt.datetime(2026, 1, 2, 3, 4, 5)


def _run(conn, *statements):
    cur = conn.cursor()
    for sql in statements:
        cur.execute(sql)


def test_on_commit_delete_rows(conn, conn2):
    _run(conn, "create global temporary table work_gt (id number(5) primary key, d date, note varchar2(10)) "
               "on commit delete rows")
    cur = conn.cursor()
    cur.executemany("insert into work_gt values (:1, :2, :3)", [(1, T, "a"), (2, None, "b")])
    cur.execute("select id, d, note from work_gt order by id")
    assert cur.fetchall() == [(1, T, "a"), (2, None, "b")]
    assert cur.description[1][1] is sluice.DB_TYPE_DATE
    assert query_rows(conn2, "select count(*) from work_gt") == [(0,)]     # the other session's: none
    conn.commit()
    assert query_rows(conn, "select count(*) from work_gt") == [(0,)]
    _run(conn2, "insert into work_gt values (1, null, 'other')")      # (its own key 1)
    assert query_rows(conn2, "select note from work_gt") == [("other",)]
    assert query_rows(conn, "select count(*) from work_gt") == [(0,)]
    conn2.commit()
    assert query_rows(conn2, "select count(*) from work_gt") == [(0,)]
    _run(conn, "insert into work_gt (id) values (3)")
    conn.rollback()
    assert query_rows(conn, "select count(*) from work_gt") == [(0,)]


def test_on_commit_preserve_rows_last_the_session(conn, dsn):
    _run(conn, "create global temporary table keep_gt (id number) on commit preserve rows")
    with sluice.connect(dsn) as other:
        _run(other, "insert into keep_gt values (7)")
        other.commit()
        assert query_rows(other, "select id from keep_gt") == [(7,)]
        _run(other, "update keep_gt set id = 8")
        other.commit()
        assert query_rows(other, "select id from keep_gt") == [(8,)]
        assert query_rows(conn, "select count(*) from keep_gt") == [(0,)]
    with sluice.connect(dsn) as later:
        assert query_rows(later, "select count(*) from keep_gt") == [(0,)]


def test_the_definition_is_a_table_of_the_namespace(conn):
    _run(conn, "create global temporary table g1 (a number)")
    assert query_rows(conn, "select temporary, duration from user_tables where table_name = 'G1'") == \
        [("Y", "SYS$TRANSACTION")]
    assert query_rows(conn, "select temporary from user_objects where object_name = 'G1'") == [("Y",)]
    assert query_code(conn, "create table g1 (b number)") == "ORA-00955"
    assert query_code(conn, "create global temporary table g2 (a number) on commit keep rows") == "ORA-00905"
    assert query_code(conn, "create global temporary table g2 as select 1 a from dual") == "SLU-00001"
    assert query_code(conn, "select * from g2") == "ORA-00942"
    _run(conn, "insert into g1 values (1)", "drop table g1")
    assert query_rows(conn, "select count(*) from user_tables") == [(0,)]
    assert query_code(conn, "select * from g1") == "ORA-00942"        # (the session's own went too)
    _run(conn, "create global temporary table g1 (b varchar2(3)) on commit preserve rows",
         "insert into g1 values ('x')")
    conn.commit()
    assert query_rows(conn, "select * from g1") == [("x",)]
