"""The instance and session views programs query first, and SYS_CONTEXT('USERENV', …), on
both stores (store/instanceviews.py): V$VERSION, PRODUCT_COMPONENT_VERSION, V$INSTANCE,
V$DATABASE, GLOBAL_NAME, V$SESSION (and their GV$), the NLS_*_PARAMETERS views and
V$NLS_PARAMETERS, as python-oracledb's samples and tools ask them."""

from __future__ import annotations

import datetime as dt

import sluice
from tests.sqlhelpers import query_code, query_headed, query_rows


def _types(conn, sql: str) -> dict[str, object]:
    cur = conn.cursor()
    cur.execute(sql)
    cur.fetchall()
    return {d[0]: d[1] for d in cur.description}


def test_v_version_says_it_is_sluice_answering_as_oracle(conn):
    (banner,), = query_rows(conn, "select banner from v$version")
    assert "Sluice" in banner and conn.version in banner
    names, rows = query_headed(conn, "SELECT * FROM V$VERSION")
    assert names == ["BANNER", "BANNER_FULL", "BANNER_LEGACY", "CON_ID"]
    assert rows == [(banner, f"{banner}\nVersion {conn.version}", banner, 0)]
    types = _types(conn, "select * from v$version")
    assert types["BANNER"] is sluice.DB_TYPE_VARCHAR and types["CON_ID"] is sluice.DB_TYPE_NUMBER
    (product, version, full, status), = query_rows(conn, "select * from product_component_version")
    assert "Sluice" in product and version == full == conn.version and status == f"Sluice {sluice.__version__}"


def test_v_instance_and_v_database_describe_the_site(conn):
    names, rows = query_headed(conn, "select instance_number, instance_name, version, status, database_status, "
                                     "thread#, startup_time from v$instance")
    assert names[-2:] == ["THREAD#", "STARTUP_TIME"]
    (number, instance, version, status, db_status, thread, started), = rows
    assert (number, version, status, db_status, thread) == (1, conn.version, "OPEN", "ACTIVE", 1)
    assert isinstance(started, dt.datetime) and started <= dt.datetime.now() + dt.timedelta(seconds=1)
    assert _types(conn, "select startup_time from v$instance")["STARTUP_TIME"] is sluice.DB_TYPE_DATE
    (site,), = query_rows(conn, "select * from global_name")
    (dbid, name, open_mode, log_mode, unique), = query_rows(
        conn, "select dbid, name, open_mode, log_mode, db_unique_name from v$database")
    assert name == unique == site.split(".")[0] and instance == name.lower()
    assert (open_mode, log_mode) == ("READ WRITE", "NOARCHIVELOG") and isinstance(dbid, int)
    # the site renamed: its names follow, its DBID stays
    conn.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO dbs1.example.com")
    assert query_rows(conn, "select global_name from global_name") == [("DBS1.EXAMPLE.COM",)]
    assert query_rows(conn, "select dbid, name from v$database") == [(dbid, "DBS1")]
    assert query_rows(conn, "select sys_context('userenv', 'db_name'), sys_context('userenv', 'db_domain'), "
                            "sys_context('userenv', 'instance_name') from dual") == [("DBS1", "EXAMPLE.COM", "dbs1")]


def test_v_session_lists_this_session_with_its_tracing_attributes(conn, conn2):
    assert query_rows(conn, "select sid from v$session where rownum = 1")      # was ORA-00900 on SQLite
    conn.module, conn.action, conn.client_identifier, conn.clientinfo = "billing", "close month", "alice", "v2"
    names, rows = query_headed(conn, "select sid, serial#, username, status, program, module, action, "
                                     "client_identifier, client_info, machine, logon_time from v$session "
                                     "where sid = :1", [conn.session_id])
    assert names == ["SID", "SERIAL#", "USERNAME", "STATUS", "PROGRAM", "MODULE", "ACTION", "CLIENT_IDENTIFIER",
                     "CLIENT_INFO", "MACHINE", "LOGON_TIME"]
    (sid, serial, user, status, program, module, action, client, info, machine, logon), = rows
    assert (sid, serial, user, status) == (conn.session_id, 1, "SLUICE", "ACTIVE")
    assert (module, action, client, info) == ("billing", "close month", "alice", "v2")
    assert program.endswith("@" + machine) and isinstance(logon, dt.datetime)
    # the other session: listed, its tracing attributes are its own connection's
    assert query_rows(conn, "select status, module, client_identifier from sys.v$session where sid = :1",
                      [conn2.session_id]) == [("INACTIVE", None, None)]
    assert query_rows(conn2, "select s.serial#, s.module from v$session s where s.sid = :1",
                      [conn2.session_id]) == [(1, None)]
    assert sorted(query_rows(conn, "select inst_id, sid from gv$session")) == sorted(
        [(1, conn.session_id), (1, conn2.session_id)])
    types = _types(conn, "select * from v$session")
    assert types["SID"] is types["SERIAL#"] is sluice.DB_TYPE_NUMBER and types["LOGON_TIME"] is sluice.DB_TYPE_DATE
    assert types["USERNAME"] is types["MODULE"] is sluice.DB_TYPE_VARCHAR


def test_sys_context_userenv_answers_what_the_session_is(conn):
    names, rows = query_headed(conn, "select sys_context('userenv', 'sid'), sys_context('USERENV', 'SESSIONID') "
                                     "sessionid from dual")
    assert names == ["SYS_CONTEXT('USERENV','SID')", "SESSIONID"]
    assert rows == [(str(conn.session_id), str(conn.session_id))]
    assert _types(conn, "select sys_context('userenv', 'sid') from dual") == {
        "SYS_CONTEXT('USERENV','SID')": sluice.DB_TYPE_VARCHAR}
    # compared with a number as Oracle converts it: this session's row
    assert query_rows(conn, "select username from v$session where sid = sys_context('userenv', 'sid')") \
        == [("SLUICE",)]
    assert query_rows(conn, "select sys_context('userenv', 'module') from dual") == [(None,)]
    conn.module = "etl"
    host, server, module, schema = query_rows(
        conn, "select sys_context('userenv', 'host'), sys_context('userenv', 'server_host'), "
              "sys_context('userenv', 'module'), sys_context('userenv', 'current_schema') from dual")[0]
    assert (module, schema) == ("etl", "SLUICE") and host and server
    assert query_rows(conn, "select instance_name, host_name from v$instance") \
        == query_rows(conn, "select sys_context('userenv', 'instance_name'), server_host from "
                            "(select sys_context('userenv', 'server_host') server_host from dual)")
    assert query_code(conn, "select sys_context('userenv', 'no_such_thing') from dual") == "ORA-02003"


def test_nls_parameters_are_the_ones_sluice_uses(conn):
    (fmt,), = query_rows(conn, "select value from nls_session_parameters where parameter = 'NLS_DATE_FORMAT'")
    assert fmt == "DD-MON-RR"
    assert query_rows(conn, "select to_char(date '2024-01-05') from dual") == [("05-JAN-24",)]   # what it says
    session = dict(query_rows(conn, "select parameter, value from nls_session_parameters"))
    assert session["NLS_NUMERIC_CHARACTERS"] == ".," and session["NLS_LANGUAGE"] == "AMERICAN"
    assert session["NLS_TERRITORY"] == "AMERICA" and "NLS_CHARACTERSET" not in session
    assert dict(query_rows(conn, "select parameter, value from nls_instance_parameters")) == session
    database = dict(query_rows(conn, "select * from nls_database_parameters"))
    assert database["NLS_CHARACTERSET"] == "AL32UTF8" and database["NLS_RDBMS_VERSION"] == conn.version
    names, rows = query_headed(conn, "select * from v$nls_parameters where parameter like 'NLS%CHARACTERSET' "
                                     "order by parameter")
    assert names == ["PARAMETER", "VALUE", "CON_ID"]
    assert rows == [("NLS_CHARACTERSET", "AL32UTF8", 0), ("NLS_NCHAR_CHARACTERSET", "AL16UTF16", 0)]


def test_the_views_join_and_sit_beside_the_statements_own_with_clause(conn):
    rows = query_rows(conn, "with mine as (select 7 n from dual) select mine.n, i.status, d.open_mode "
                            "from mine, v$instance i join v$database d on d.name = upper(i.instance_name)")
    assert rows == [(7, "OPEN", "READ WRITE")]
    assert query_rows(conn, "select count(*) from v$session where logon_time > sysdate - 1") == [(1,)]


def test_a_statement_naming_none_of_them_is_left_as_it_is():
    """Every query passes the hook: one naming no view asks the connection nothing."""
    from sluice.store.instanceviews import instance_views

    def asker():
        raise AssertionError("asked")
    for sql in ("select id, name from t where id = :1", "select order_id from orders where status = 'V$SESSION'",
                "select count(*) from v$aq", "select sys_context('userenv', 'session_user') from dual"):
        assert instance_views(sql, asker) is sql
