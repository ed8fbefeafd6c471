"""Issue 5, acceptance 2 and 4: AQ agents, ENABLE_DB_ACCESS, SET_UP_QUEUE; bad input."""

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from tests.security.conftest import PASSWORD, create_user, login


def _sql(dsn, text, ok=True):
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", text], catch_exceptions=False)
    assert (r.exit_code == 0) == ok, r.output
    return r.output


SEED_004_EXAMPLES_17_24_TO_17_26 = """
DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', enable_http => true);

DBMS_AQADM.ENABLE_DB_ACCESS(agent_name =>'JOHN', db_username => 'OE');
DBMS_AQADM.ENABLE_DB_ACCESS(agent_name =>'JOHN', db_username => 'CBADM');

connect sys/change_on_install as sysdba
rem grant super-user AQADM privileges to create proxy sessions as OE
alter user OE grant CONNECT THROUGH AQADM;

rem grant super-user AQADM privileges to create proxy sessions as CBADM
alter user CBADM grant CONNECT THROUGH AQADM;

grant FORCE ANY TRANSACTION to OE; 
grant FORCE ANY TRANSACTION to CBADM; 
"""


def test_seed_004_agent_examples_run_verbatim(admin, dsn):
    for user in ("OE", "CBADM", "AQADM"):
        create_user(admin, user)
    _sql(dsn, SEED_004_EXAMPLES_17_24_TO_17_26)
    rows = admin.query("SELECT agent_name, db_username, http_enabled FROM SYSTEM.AQ$INTERNET_USERS "
                       "ORDER BY db_username", None)[1]
    assert rows == [("JOHN", "CBADM", "YES"), ("JOHN", "OE", "YES")]
    assert admin.query("SELECT agent_name, http_enabled, smtp_enabled FROM dba_aq_agents", None)[1] == [
        ("JOHN", "YES", "NO")]


def test_seed_004_http_propagation_agent_steps(admin, dsn):
    """Seed 004 "HTTP propagation", step 6 at the destination database: 6.1 runs; 6.2 is
    printed with a stray quote, which Oracle rejects too — the corrected call works."""
    create_user(admin, "CBADM")
    _sql(dsn, "DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'John', enable_http => true);")
    out = _sql(dsn, "DBMS_AQADM.ENABLE_DB_ACCESS(agent_name =>'John', db_username =>'CBADM')'", ok=False)
    assert "ORA-" in out
    _sql(dsn, "DBMS_AQADM.ENABLE_DB_ACCESS(agent_name =>'John', db_username =>'CBADM');")
    assert admin.query("SELECT agent_name, db_username FROM aq$internet_users", None)[1] == [("JOHN", "CBADM")]


def test_table_17_7_for_an_equivalent_setup(admin, dsn):
    for user in ("CBADMIN", "BUYER", "OE", "SELLER"):
        create_user(admin, user)
    _sql(dsn, """BEGIN
      DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'scott', enable_http => TRUE);
      DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'aqadmin', enable_http => TRUE);
      DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'bookstore');
      DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'scott', db_username => 'cbadmin');
      DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'scott', db_username => 'buyer');
      DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'aqadmin', db_username => 'OE');
      DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'aqadmin', db_username => 'seller');
    END;""")
    rows = admin.query("SELECT agent_name, db_username, http_enabled FROM aq$internet_users "
                       "ORDER BY agent_name DESC, db_username", None)[1]
    # Table 17-7: scott/cbadmin, scott/buyer, aqadmin/OE, aqadmin/seller (YES), bookstore/- (NO)
    assert sorted(rows, key=str) == sorted([("SCOTT", "CBADMIN", "YES"), ("SCOTT", "BUYER", "YES"),
                                            ("AQADMIN", "OE", "YES"), ("AQADMIN", "SELLER", "YES"),
                                            ("BOOKSTORE", None, "NO")], key=str)


def test_alter_and_drop_agent_and_disable_access(admin, dsn):
    create_user(admin, "OE")
    admin.aqadm.create_aq_agent(agent_name="A1", enable_http=True)
    admin.aqadm.enable_db_access(agent_name="A1", db_username="OE")
    admin.aqadm.alter_aq_agent(agent_name="A1", enable_smtp=True)
    assert admin.query("SELECT http_enabled, smtp_enabled FROM dba_aq_agents", None)[1] == [("NO", "YES")]
    admin.aqadm.disable_db_access(agent_name="A1", db_username="OE")
    assert admin.query("SELECT COUNT(*) FROM dba_aq_agent_privs", None)[1] == [(0,)]
    admin.aqadm.drop_aq_agent(agent_name="A1")
    assert admin.query("SELECT COUNT(*) FROM dba_aq_agents", None)[1] == [(0,)]


def test_set_up_queue_creates_a_secure_transactional_commit_time_anydata_queue(admin, dsn):
    create_user(admin, "STRMADMIN")
    create_user(admin, "HR", "EXECUTE ON DBMS_AQ")
    create_user(admin, "OE", "EXECUTE ON DBMS_AQ")
    _sql(dsn, """BEGIN
      DBMS_STREAMS_ADM.SET_UP_QUEUE(queue_table => 'strmadmin.streams_queue_table',
                                    queue_name => 'strmadmin.streams_queue', queue_user => 'hr');
    END;""")
    assert admin.query("SELECT object_type, sort_order, recipients, message_grouping, secure "
                       "FROM dba_queue_tables WHERE owner = 'STRMADMIN'", None)[1] == [
        ("SYS.ANYDATA", "COMMIT_TIME", "MULTIPLE", "TRANSACTIONAL", "YES")]
    assert admin.query("SELECT enqueue_enabled, dequeue_enabled FROM dba_queues "
                       "WHERE name = 'STREAMS_QUEUE'", None)[1] == [("YES", "YES")]
    assert admin.query("SELECT agent_name, db_username FROM aq$internet_users", None)[1] == [("HR", "HR")]
    with login(dsn, "HR") as hr:
        queue = hr.context.catalog.queue("STRMADMIN.STREAMS_QUEUE")
        hr.context.authz.check_enqueue(queue, [sluice.Agent("HR")])   # through its own agent: allowed
        with pytest.raises(sluice.DatabaseError) as e:
            hr.context.authz.check_enqueue(queue, [None])               # secure: an agent is required
        assert e.value.full_code == "ORA-25224"
    # re-running with another queue_user only adds that user
    _sql(dsn, "BEGIN DBMS_STREAMS_ADM.SET_UP_QUEUE(queue_table => 'strmadmin.streams_queue_table', "
              "queue_name => 'strmadmin.streams_queue', queue_user => 'OE'); END;")
    assert admin.query("SELECT COUNT(*) FROM dba_queue_tables", None)[1] == [(1,)]
    assert admin.query("SELECT agent_name, db_username FROM aq$internet_users ORDER BY 1", None)[1] == [
        ("HR", "HR"), ("OE", "OE")]
    with login(dsn, "OE") as oe:
        queue = oe.context.catalog.queue("STRMADMIN.STREAMS_QUEUE")
        assert oe.context.authz.has_queue_privilege(queue, "ENQUEUE")
        assert oe.context.authz.has_queue_privilege(queue, "DEQUEUE")


def _snapshot(admin):
    return [admin.query(f"SELECT * FROM {v} ORDER BY 1", None)[1]
            for v in ("dba_users", "dba_aq_agents", "aq$internet_users", "dba_queues")]


@pytest.mark.parametrize("call,code", [
    (lambda c: c.aqadm.enable_db_access(agent_name="NO_AGENT", db_username="OE"), "ORA-24088"),
    (lambda c: c.aqadm.enable_db_access(agent_name="A1", db_username="NO_USER"), "ORA-01918"),
    (lambda c: c.aqadm.create_aq_agent(agent_name="A1"), "ORA-24089"),
    (lambda c: c.aqadm.drop_aq_agent(agent_name="NO_AGENT"), "ORA-24088"),
    (lambda c: c.aqadm.disable_db_access(agent_name="A1", db_username="OE"), "ORA-24095"),
    (lambda c: c.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="NO_Q", grantee="OE"),
     "ORA-24010"),
    (lambda c: c.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="Q", grantee="NO_USER"),
     "ORA-01917"),
    (lambda c: c.aqadm.grant_queue_privilege(privilege="PEEK", queue_name="Q", grantee="OE"), "ORA-00990"),
    (lambda c: c.aqadm.revoke_queue_privilege(privilege="DEQUEUE", queue_name="Q", grantee="OE"),
     "ORA-01927"),
    (lambda c: c.aqadm.revoke_system_privilege(privilege="MANAGE_ANY", grantee="OE"), "ORA-01952"),
    (lambda c: c.aqadm.grant_system_privilege(privilege="DROP_ANY", grantee="OE"), "ORA-00990"),
    (lambda c: c.cursor().execute("CREATE USER oe IDENTIFIED BY x"), "ORA-01920"),
    (lambda c: c.cursor().execute("DROP USER nobody"), "ORA-01918"),
    (lambda c: c.cursor().execute("REVOKE AQ_USER_ROLE FROM oe"), "ORA-01951"),
    (lambda c: c.cursor().execute("GRANT EXECUTE ON DBMS_AQ TO nobody"), "ORA-01917"),
])
def test_bad_input_changes_nothing(admin, dsn, call, code):
    create_user(admin, "OE")
    admin.aqadm.create_aq_agent(agent_name="A1")
    admin.aqadm.create_queue_table(queue_table="Q_QT", queue_payload_type="RAW")
    admin.aqadm.create_queue(queue_name="Q", queue_table="Q_QT")
    before = _snapshot(admin)
    with pytest.raises(sluice.DatabaseError) as e:
        call(admin)
    assert e.value.full_code == code
    assert _snapshot(admin) == before


@pytest.mark.parametrize("call", [
    lambda c: c.aqadm.grant_system_privilege(privilege="ENQUEUE_ANY", grantee="OE", admin_option="no"),
    lambda c: c.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="Q", grantee="OE", grant_option="x"),
    lambda c: c.aqadm.create_aq_agent(agent_name="A2", enable_http="false"),
    lambda c: c.aqadm.alter_aq_agent(agent_name="A1", enable_smtp=2),
], ids=["admin_option", "grant_option", "enable_http", "enable_smtp"])
def test_a_flag_that_is_no_boolean_is_refused(admin, call):
    """DBMS_AQADM's BOOLEAN arguments take TRUE, FALSE or NULL, as its other procedures' and
    DBMS_RULE_ADM.GRANT_SYSTEM_PRIVILEGE's do.  The security procedures took anything and
    stored its truth: admin_option => 'no' gave the ADMIN OPTION."""
    create_user(admin, "OE")
    admin.aqadm.create_aq_agent(agent_name="A1")
    admin.aqadm.create_queue_table(queue_table="Q_QT", queue_payload_type="RAW")
    admin.aqadm.create_queue(queue_name="Q", queue_table="Q_QT")
    def state():
        return _snapshot(admin) + [admin.query(f"SELECT * FROM {v} ORDER BY 1, 2, 3", None)[1]
                                   for v in ("dba_sys_privs", "dba_tab_privs")]
    before = state()
    with pytest.raises(sluice.InterfaceError, match="must be TRUE or FALSE"):
        call(admin)
    assert state() == before


def test_logon(admin, dsn):
    create_user(admin, "OE")
    with pytest.raises(sluice.DatabaseError) as e:
        sluice.connect(dsn, user="oe", password="wrong")
    assert e.value.full_code == "ORA-01017"
    with pytest.raises(sluice.DatabaseError) as e:
        sluice.connect(dsn, user="nobody", password=PASSWORD)
    assert e.value.full_code == "ORA-01017"
    admin.cursor().execute("CREATE USER nosession IDENTIFIED BY pw")
    with pytest.raises(sluice.DatabaseError) as e:
        sluice.connect(dsn, user="nosession", password="pw")
    assert e.value.full_code == "ORA-01045"
    with pytest.raises(sluice.DatabaseError) as e:
        sluice.connect(dsn, user="sys", password="anything")
    assert e.value.full_code == "ORA-28009"
    with sluice.connect(dsn, user="sys", mode=sluice.AUTH_MODE_SYSDBA) as sys_conn:
        assert sys_conn.username == "SYS"
    login(dsn, "OE").close()


def test_connect_inside_a_script_switches_user(admin, dsn):
    create_user(admin, "OE", "EXECUTE ON DBMS_AQADM")
    out = _sql(dsn, f"""CONNECT oe/{PASSWORD}
BEGIN DBMS_AQADM.CREATE_QUEUE_TABLE(queue_table => 'mine_qt', queue_payload_type => 'RAW'); END;
/""")
    assert "PL/SQL procedure successfully completed." in out
    assert admin.query("SELECT owner FROM dba_queue_tables", None)[1] == [("OE",)]


def test_init_gives_the_administrator_a_password(tmp_path):
    dsn = f"sqlite:///{tmp_path / 'i.db'}"
    r = CliRunner().invoke(main, ["--dsn", dsn, "init", "--admin-password", "adm-pw"], catch_exceptions=False)
    assert "administrator SLUICE created" in r.output
    with pytest.raises(sluice.DatabaseError) as e:
        sluice.connect(dsn)
    assert e.value.full_code == "ORA-01017"
    sluice.connect(dsn, user="sluice", password="adm-pw").close()
    r = CliRunner().invoke(main, ["--dsn", dsn, "--password", "adm-pw", "queues"], catch_exceptions=False)
    assert r.exit_code == 0


def test_set_up_queue_leaves_an_agent_other_users_act_through_alone(admin, dsn):
    """Seed 001 "Secure Queues and the SET_UP_QUEUE Procedure": the queue user is configured
    as a secure queue user "if possible" — "If an agent with this name already exists and is
    associated with the queue user only, then the existing agent is used".  An agent HR that
    OE's sessions act through is not mapped to HR as well (that would hand OE's clients HR's
    rights); HR still gets ENQUEUE and DEQUEUE.  It used to be mapped."""
    create_user(admin, "HR")
    create_user(admin, "OE")
    admin.aqadm.create_aq_agent(agent_name="HR")
    admin.aqadm.enable_db_access(agent_name="HR", db_username="OE")
    admin.streams_adm.set_up_queue(queue_table="sq_qt", queue_name="sq", queue_user="HR")
    assert admin.query("SELECT agent_name, db_username FROM dba_aq_agent_privs", None)[1] == [("HR", "OE")]
    with login(dsn, "HR") as hr:
        queue = hr.context.catalog.queue(f"{admin.username}.SQ")
        assert hr.context.authz.has_queue_privilege(queue, "ENQUEUE")
        assert hr.context.authz.has_queue_privilege(queue, "DEQUEUE")
    # an agent HR of nobody, or of HR only, is used
    admin.aqadm.disable_db_access(agent_name="HR", db_username="OE")
    admin.streams_adm.set_up_queue(queue_table="sq_qt", queue_name="sq", queue_user="HR")
    admin.streams_adm.set_up_queue(queue_table="sq_qt", queue_name="sq", queue_user="HR")
    assert admin.query("SELECT agent_name, db_username FROM dba_aq_agent_privs", None)[1] == [("HR", "HR")]
