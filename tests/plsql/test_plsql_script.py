"""SQL*Plus scripts: splitting, EXEC, type DDL, queries, TCL, SQL*Plus commands,
and the hand-off of other SQL to the connection."""

from __future__ import annotations

import pytest

from sluice.errors import DatabaseError
from sluice.plsql import StatementResult, execute, run_script, split_script

MIXED = """\
REM set up the queues
SET SERVEROUTPUT ON SIZE 1000000
-- a comment between statements
CONNECT strmadmin/strmadminpw@dbs1.net
CREATE TYPE addr_t AS OBJECT (street VARCHAR2(30), zip NUMBER(5));
/
CREATE OR REPLACE TYPE
  phones_t AS VARRAY(10) OF VARCHAR2(20)
/
BEGIN
  DBMS_OUTPUT.PUT_LINE('semi;colons; inside; strings');  -- and; comments
END;
/
SELECT 'a;b' AS x, q'[;]' FROM dual;
/
/* block comment; with semicolon */
GRANT EXECUTE ON DBMS_AQ TO strmadmin;
EXEC DBMS_AQADM.START_QUEUE( -
  queue_name => 'q')
DECLARE
  x NUMBER;
BEGIN
  x := 1;
END;
/
PROMPT done; really
commit;
"""


def test_split_script_on_a_mixed_script():
    assert split_script(MIXED) == [
        "REM set up the queues",
        "SET SERVEROUTPUT ON SIZE 1000000",
        "CONNECT strmadmin/strmadminpw@dbs1.net",
        "CREATE TYPE addr_t AS OBJECT (street VARCHAR2(30), zip NUMBER(5));",
        "CREATE OR REPLACE TYPE\n  phones_t AS VARRAY(10) OF VARCHAR2(20)",
        "BEGIN\n  DBMS_OUTPUT.PUT_LINE('semi;colons; inside; strings');  -- and; comments\nEND;",
        "SELECT 'a;b' AS x, q'[;]' FROM dual",
        "GRANT EXECUTE ON DBMS_AQ TO strmadmin",
        "EXEC DBMS_AQADM.START_QUEUE( -\n  queue_name => 'q')",
        "DECLARE\n  x NUMBER;\nBEGIN\n  x := 1;\nEND;",
        "PROMPT done; really",
        "commit",
    ]


def test_run_script_runs_everything_in_order(sql_conn):
    results = run_script(sql_conn, MIXED)
    assert [r.kind for r in results] == ["sqlplus", "sqlplus", "sqlplus", "ddl", "ddl", "block",
                                         "query", "ddl", "sqlplus", "block", "sqlplus", "tcl"]
    assert sql_conn.connects == [("strmadmin", "strmadminpw")]
    assert [t[:2] for t in sql_conn.types] == [("ADDR_T", "OBJECT"), ("PHONES_T", "VARRAY")]
    assert results[5].output == ["semi;colons; inside; strings"]
    assert results[6].columns == ["A", "B"] and results[6].rowcount == 2
    assert sql_conn.queries[0][0] == "SELECT 'a;b' AS x, q'[;]' FROM dual"
    assert sql_conn.sql == [("GRANT", "GRANT EXECUTE ON DBMS_AQ TO strmadmin")]
    assert sql_conn.calls == [("DBMS_AQADM", "start_queue",
                               {"queue_name": "q", "enqueue": True, "dequeue": True})]
    assert results[10].output == ["done; really"]
    assert sql_conn.tx == ["commit"]


def test_run_script_stops_at_the_first_error(conn):
    script = "BEGIN DBMS_AQADM.START_QUEUE('a'); END;\n/\nBEGIN nope; END;\n/\n" \
             "BEGIN DBMS_AQADM.START_QUEUE('c'); END;\n/\n"
    with pytest.raises(DatabaseError, match="PLS-00201: identifier 'NOPE'") as info:
        run_script(conn, script)
    assert [kw["queue_name"] for _, _, kw in conn.calls] == ["a"]
    assert "line 3 of the script" in info.value.__notes__[0]


def test_exit_ends_a_script(conn):
    results = run_script(conn, "PROMPT a\nEXIT\nPROMPT b\n")
    assert [r.output for r in results] == [["a"], []]


def test_block_without_slash_at_end_of_text():
    assert split_script("BEGIN NULL; END;") == ["BEGIN NULL; END;"]
    assert split_script("select 1 from dual") == ["select 1 from dual"]


def test_sql_statement_ended_by_a_slash_line():
    assert split_script("SELECT 1\nFROM dual\n/\nCOMMIT;") == ["SELECT 1\nFROM dual", "COMMIT"]


def test_statement_keeps_its_first_line_indentation():
    assert split_script("\n\n   BEGIN NULL; END;\n   /\n") == ["   BEGIN NULL; END;"]


def test_exec_shorthand(conn):
    result = execute(conn, "EXEC DBMS_AQADM.START_QUEUE(queue_name => 'q');")
    assert result.kind == "sqlplus"
    assert conn.calls[0][1:] == ("start_queue", {"queue_name": "q", "enqueue": True,
                                                 "dequeue": True})
    execute(conn, "execute dbms_output.put_line('x')")


def test_exec_errors_count_columns_like_sqlplus(conn):
    """SQL*Plus runs EXEC as "BEGIN <call>; END;", so columns are shifted by 6."""
    with pytest.raises(DatabaseError, match="line 1, column 7:\nPLS-00201: identifier 'NOPE.X'"):
        execute(conn, "EXEC nope.x")


@pytest.mark.parametrize("text, expected", [
    ("CREATE TYPE emp_t AS OBJECT (empno NUMBER(4), ename VARCHAR2(10 CHAR), "
     "sal NUMBER(7, 2), hired DATE, addr addr_t, ts TIMESTAMP(6) WITH TIME ZONE);",
     ("EMP_T", "OBJECT", [("empno", "NUMBER(4)"), ("ename", "VARCHAR2(10 CHAR)"),
                          ("sal", "NUMBER(7, 2)"), ("hired", "DATE"), ("addr", "addr_t"),
                          ("ts", "TIMESTAMP(6) WITH TIME ZONE")], None, None, False)),
    ("create or replace type scott.msg_t authid definer is object (\"Mixed\" raw(16)) "
     "not final;\n/",
     ("SCOTT.MSG_T", "OBJECT", [('"Mixed"', "raw(16)")], None, None, True)),
    ("CREATE TYPE nums AS VARRAY(5) OF NUMBER", ("NUMS", "VARRAY", None, "NUMBER", 5, False)),
    ("CREATE TYPE names_t IS VARYING ARRAY (3) OF VARCHAR2(30) NOT NULL;",
     ("NAMES_T", "VARRAY", None, "VARCHAR2(30)", 3, False)),
    ("CREATE OR REPLACE TYPE emps_t AS TABLE OF emp_t;",
     ("EMPS_T", "TABLE", None, "emp_t", None, True)),
])
def test_create_type_forms(conn, text, expected):
    assert execute(conn, text).kind == "ddl"
    assert conn.types == [expected]


def test_drop_type(conn):
    execute(conn, "DROP TYPE emp_t FORCE;")
    execute(conn, "drop type scott.addr_t")
    assert conn.dropped == [("EMP_T", True), ("SCOTT.ADDR_T", False)]


def test_query_with_binds(conn):
    # placeholders are numbered for the store, so :a and :A are one name as in Oracle
    result = execute(conn, "WITH x AS (SELECT 1 FROM dual) SELECT * FROM x WHERE a = :a OR b = :A;",
                     {"A": 1})
    assert conn.queries == [("WITH x AS (SELECT 1 FROM dual) SELECT * FROM x WHERE a = :1 OR b = :2",
                             {"1": 1, "2": 1})]
    assert result == StatementResult("query", ["A", "B"], [(1, "x"), (2, "y")], 2)


def test_commit_and_rollback_statements(conn):
    for text in ("COMMIT", "commit work;", "ROLLBACK;", "Rollback Work"):
        assert execute(conn, text).kind == "tcl"
    assert conn.tx == ["commit", "commit", "rollback", "rollback"]


@pytest.mark.parametrize("text", ["SET ECHO ON", "SHOW ERRORS", "REM x", "REMARK y",
                                  "SPOOL out.log", "WHENEVER SQLERROR EXIT FAILURE",
                                  "set serveroutput on"])
def test_ignored_sqlplus_commands(conn, text):
    assert execute(conn, text) == StatementResult("sqlplus")


@pytest.mark.parametrize("text, expected", [
    ("CONNECT sys/change_on_install AS SYSDBA;", ("sys", "change_on_install", "SYSDBA")),
    ("connect strmadmin/pw@dbs2.net", ("strmadmin", "pw")),
    ("CONN scott", ("scott", None)),
])
def test_connect(conn, text, expected):
    execute(conn, text)
    assert conn.connects == [expected]


@pytest.mark.parametrize("text, kind_words", [
    ("GRANT CONNECT, RESOURCE to aqadm IDENTIFIED BY aqadm;", "GRANT"),
    ("CREATE USER strmadmin IDENTIFIED BY pw", "CREATE USER"),
    ("CREATE DATABASE LINK dbs2.net CONNECT TO u IDENTIFIED BY p USING 'dbs2';",
     "CREATE DATABASE LINK"),
    ("CREATE PUBLIC DATABASE LINK l USING 'x'", "CREATE PUBLIC DATABASE LINK"),
    ("create table t (a number);", "CREATE TABLE"),
    ("ALTER SESSION SET x = 1", "ALTER SESSION"),
    ("SET TRANSACTION READ ONLY", "SET"),
    ("INSERT INTO t VALUES (1);", "INSERT"),
])
def test_other_sql_goes_to_the_connection_hook(sql_conn, text, kind_words):
    result = execute(sql_conn, text)
    assert sql_conn.sql == [(kind_words, text.rstrip(";"))]
    assert result.rowcount == (3 if kind_words == "INSERT" else 0)


def test_plsql_unit_keeps_its_end_for_the_hook(sql_conn):
    text = "CREATE OR REPLACE PROCEDURE p IS\nBEGIN\n  NULL;\nEND;\n/"
    (stmt,) = split_script(text)
    execute(sql_conn, stmt)
    assert sql_conn.sql == [("CREATE PROCEDURE", "CREATE OR REPLACE PROCEDURE p IS\nBEGIN\n"
                                                 "  NULL;\nEND;")]


def test_other_sql_without_the_hook_is_invalid(conn):
    with pytest.raises(DatabaseError, match="^ORA-00900: invalid SQL statement"):
        execute(conn, "GRANT EXECUTE ON x TO y")
    with pytest.raises(DatabaseError, match="^ORA-00900"):
        execute(conn, "   ")


def test_stray_semicolons_run_nothing():
    assert split_script(";\nCOMMIT;;\n") == ["COMMIT"]


def test_seed_004_servlet_user_script(sql_conn):
    """Seed 004, Example 17-22, verbatim."""
    script = ("connect sys/change_on_install as sysdba;\n"
              "GRANT CONNECT, RESOURCE to aqadm IDENTIFIED BY aqadm;\n"
              "grant create session to aqadm;\n"
              "GRANT EXECUTE ON DBMS_AQJMS TO aqadm;\n")
    results = run_script(sql_conn, script)
    assert [r.kind for r in results] == ["sqlplus", "ddl", "ddl", "ddl"]
    assert sql_conn.connects == [("sys", "change_on_install", "SYSDBA")]
    assert [k for k, _ in sql_conn.sql] == ["GRANT", "GRANT", "GRANT"]


def test_bare_package_call_is_not_a_statement(conn):
    """Seed 004 prints "DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', ...);" without
    BEGIN/END or EXEC; SQL*Plus sends it to the server, which says ORA-00900."""
    with pytest.raises(DatabaseError, match="^ORA-00900"):
        run_script(conn, "DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', enable_http => true);")
    execute(conn, "EXEC DBMS_AQADM.START_QUEUE('q')")      # the SQL*Plus way to write it


def test_case_expression_is_an_implementation_restriction(conn):
    with pytest.raises(DatabaseError, match="PLS-00999.*CASE"):
        execute(conn, "DECLARE x NUMBER; BEGIN x := CASE WHEN 1 = 1 THEN 1 END; END;")
