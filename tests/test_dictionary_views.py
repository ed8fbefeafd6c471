"""The data dictionary's views of a user's schema objects (src/sluice/store/dictviews.py), on
both stores: USER_ / ALL_ / DBA_TABLES, _TAB_COLUMNS, _VIEWS, _OBJECTS with Oracle's column
names and upper-case object names (was: ORA-00942 for each); USER_SEQUENCES through the same
rewrite."""

from __future__ import annotations

import datetime as dt

import sluice
from tests.sqlhelpers import query_headed, query_names, query_rows

PASSWORD = "Pw-for-tests-1"


def _run(conn, *statements):
    cur = conn.cursor()
    for sql in statements:
        cur.execute(sql)


def test_user_tables_and_all_tables(conn, dsn):
    _run(conn, "create table emp (id number(10) primary key, name varchar2(40))",
         "create global temporary table scratch (a number) on commit preserve rows")
    conn.aqadm.create_queue_table(queue_table="ORDERS_QT", queue_payload_type="RAW")
    assert query_rows(conn, "select table_name, temporary, duration, num_rows from user_tables "
                            "order by table_name") == \
        [("EMP", "N", None, None), ("ORDERS_QT", "N", None, None), ("SCRATCH", "Y", "SYS$SESSION", None)]
    cur = conn.cursor()
    cur.execute(f'CREATE USER scott IDENTIFIED BY "{PASSWORD}"')
    cur.execute("GRANT CREATE SESSION, CREATE TABLE TO scott")
    with sluice.connect(dsn, user="scott", password=PASSWORD) as scott:
        _run(scott, "create table mine (a number)")
        assert query_rows(scott, "select table_name from user_tables") == [("MINE",)]
        assert query_rows(scott, "select owner, table_name from all_tables where table_name in ('MINE', 'EMP') "
                                 "order by 1") == [("SCOTT", "MINE"), ("SLUICE", "EMP")]
        assert query_rows(scott, "select count(*) from sys.dba_tables t where t.owner = 'SCOTT'") == [(1,)]
    assert "OWNER" not in query_names(conn, "select * from user_tables")
    assert query_names(conn, "select * from dba_tables")[:2] == ["OWNER", "TABLE_NAME"]


def test_user_tab_columns(conn):
    _run(conn, "create table typed (id number(10) not null, amount number(8,2) default 0, n number, "
               "name varchar2(40), code char(3), d date, ts timestamp(3), notes clob, bd binary_double)",
         "create view named as select id, name from typed")
    got = query_rows(conn, "select column_name, data_type, data_length, data_precision, data_scale, nullable, "
                           "column_id from user_tab_columns where table_name = 'TYPED' order by column_id")
    assert got == [("ID", "NUMBER", 22, 10, 0, "N", 1), ("AMOUNT", "NUMBER", 22, 8, 2, "Y", 2),
                   ("N", "NUMBER", 22, None, None, "Y", 3), ("NAME", "VARCHAR2", 40, None, None, "Y", 4),
                   ("CODE", "CHAR", 3, None, None, "Y", 5), ("D", "DATE", 7, None, None, "Y", 6),
                   ("TS", "TIMESTAMP(3)", 11, None, 3, "Y", 7), ("NOTES", "CLOB", 4000, None, None, "Y", 8),
                   ("BD", "BINARY_DOUBLE", 8, None, None, "Y", 9)]
    assert query_rows(conn, "select data_default from user_tab_columns where column_name = 'AMOUNT'")[0][0] \
        .startswith("0")
    assert query_rows(conn, "select table_name, column_name, data_type from all_tab_columns "
                            "where owner = 'SLUICE' and table_name = 'NAMED' order by column_id") == \
        [("NAMED", "ID", "NUMBER"), ("NAMED", "NAME", "VARCHAR2")]


def test_user_views(conn):
    text = "select id, 'it''s' quote from t1 where id > 1"
    _run(conn, "create table t1 (id number)", f"create view v1 as {text}",
         "create view v2 as select id from t1 with read only")
    headings, rows = query_headed(conn, "select view_name, text, text_length, read_only from user_views "
                                        "order by view_name")
    assert headings == ["VIEW_NAME", "TEXT", "TEXT_LENGTH", "READ_ONLY"]
    assert rows[0] == ("V1", text, len(text), "N")
    assert rows[1][0] == "V2" and rows[1][1].startswith("select id from t1") and rows[1][3] == "Y"
    assert query_rows(conn, "select owner, view_name from dba_views where view_name = 'V2'") == [("SLUICE", "V2")]


def test_user_objects_of_every_kind(conn):
    before = dt.datetime.now().replace(microsecond=0) - dt.timedelta(seconds=1)
    _run(conn, "create table t1 (id number)", "create index t1_ix on t1 (id)", "create view v1 as select id from t1",
         "create force view broken as select x from nowhere", "create sequence s1",
         "create type point_t as object (x number, y number)")
    conn.aqadm.create_queue_table(queue_table="Q_QT", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="Q1", queue_table="Q_QT")
    rows = query_rows(conn, "select object_name, object_type, status, temporary from user_objects "
                            "where object_name not like 'AQ$%' order by object_type, object_name")
    assert rows == [("T1_IX", "INDEX", "VALID", "N"), ("Q1", "QUEUE", "VALID", "N"), ("S1", "SEQUENCE", "VALID", "N"),
                    ("Q_QT", "TABLE", "VALID", "N"), ("T1", "TABLE", "VALID", "N"),
                    ("POINT_T", "TYPE", "VALID", "N"), ("BROKEN", "VIEW", "INVALID", "N"),
                    ("V1", "VIEW", "VALID", "N")]
    created = query_rows(conn, "select created from user_objects where object_name = 'V1'")[0][0]
    assert isinstance(created, dt.datetime) and before <= created <= dt.datetime.now()
    assert query_rows(conn, "select object_type, count(*) from all_objects where owner = 'SLUICE' "
                            "and object_type in ('VIEW', 'TABLE') group by object_type order by 1") == \
        [("TABLE", 2), ("VIEW", 2)]


def test_no_objects_and_user_sequences(conn):
    assert query_rows(conn, "select * from user_tables") == []
    assert query_rows(conn, "select count(*) from all_objects") == [(0,)]
    _run(conn, "create sequence s1 start with 5")
    assert query_rows(conn, "select sequence_name, last_number from user_sequences") == [("S1", 5)]


def test_user_constraints_and_cons_columns(conn):
    _run(conn, "create table dept (id number primary key, name varchar2(10) unique)",
         "create table emp (id number, dept number references dept, sal number check (sal > 0), "
         "constraint emp_pk primary key (id))")
    assert query_rows(conn, "select constraint_name, constraint_type, table_name, r_owner, r_constraint_name, "
                            "delete_rule, status from user_constraints where constraint_type <> 'C' "
                            "order by table_name, constraint_type") == \
        [("DEPT_PKEY", "P", "DEPT", None, None, None, "ENABLED"), ("DEPT_NAME_KEY", "U", "DEPT", None, None, None,
                                                                   "ENABLED"),
         ("EMP_PK", "P", "EMP", None, None, None, "ENABLED"),
         ("EMP_DEPT_FKEY", "R", "EMP", "SLUICE", "DEPT_PKEY", "NO ACTION", "ENABLED")]
    [(name, condition)] = query_rows(conn, "select constraint_name, search_condition from user_constraints "
                                           "where constraint_type = 'C'")
    assert name == "EMP_SAL_CHECK" and "sal" in condition.lower()
    assert query_rows(conn, "select constraint_name, column_name, position from user_cons_columns "
                            "where table_name = 'EMP' order by constraint_name") == \
        [("EMP_DEPT_FKEY", "DEPT", 1), ("EMP_PK", "ID", 1), ("EMP_SAL_CHECK", "SAL", None)]
    assert query_rows(conn, "select owner, count(*) from all_constraints group by owner") == [("SLUICE", 5)]


def test_user_indexes_and_ind_columns(conn):
    _run(conn, "create table t (id number primary key, a number, b varchar2(5))", "create index t_ab on t (a, b desc)",
         "create unique index t_b on t (b)")
    assert query_rows(conn, "select index_name, uniqueness, table_name, table_type from user_indexes "
                            "order by index_name") == \
        [("T_AB", "NONUNIQUE", "T", "TABLE"), ("T_B", "UNIQUE", "T", "TABLE"), ("T_PKEY", "UNIQUE", "T", "TABLE")]
    assert query_rows(conn, "select index_name, column_name, column_position, descend from user_ind_columns "
                            "order by index_name, column_position") == \
        [("T_AB", "A", 1, "ASC"), ("T_AB", "B", 2, "DESC"), ("T_B", "B", 1, "ASC"), ("T_PKEY", "ID", 1, "ASC")]
    assert query_rows(conn, "select distinct index_owner from all_ind_columns") == [("SLUICE",)]
