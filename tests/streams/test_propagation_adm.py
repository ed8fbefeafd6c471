"""Issue 14 §1 catalog and administration: database links (DBA_DB_LINKS, passwords
encrypted at rest), the site's global name, DBMS_PROPAGATION_ADM (DBA_PROPAGATION),
propagation_for_rules (what DBMS_STREAMS_ADM.ADD_*_PROPAGATION_RULES call)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import sluice
from sluice.cli import main
from sluice.streams.propagation import propagation_for_rules
from sluice.streams.propagation.links import resolve_link

from ..conftest import make_queue
from .propkit import multi_queue as _mq, raises_ora as _raises, rows as _rows


# -- database links --------------------------------------------------------------------
def test_create_database_link_through_a_cursor(conn, tmp_path):
    target = f"sqlite:///{tmp_path / 'dbs2.db'}"
    conn.cursor().execute(f"CREATE DATABASE LINK dbs2.net CONNECT TO scott IDENTIFIED BY tiger USING '{target}'")
    assert _rows(conn, "SELECT OWNER, DB_LINK, USERNAME, HOST FROM DBA_DB_LINKS") == [
        ("SLUICE", "DBS2.NET", "SCOTT", target)]
    link = resolve_link(conn.context.store, "SLUICE", "dbs2.net")
    assert (link.username, link.password, link.using) == ("SCOTT", "tiger", target)


def test_the_link_password_is_encrypted_at_rest(conn):
    conn.cursor().execute("CREATE DATABASE LINK l1 CONNECT TO u IDENTIFIED BY Secret123 "
                          "USING 'http://127.0.0.1:1/aqserv/servlet/AQPropServlet'")
    stored = _rows(conn, "SELECT SPEC FROM SLUICE_CATALOG WHERE KIND = 'DBLINK'")
    assert len(stored) == 1 and "Secret123" not in stored[0][0] and '"password"' in stored[0][0]
    assert "Secret123" not in str(_rows(conn, "SELECT * FROM DBA_DB_LINKS"))
    assert resolve_link(conn.context.store, "SLUICE", "L1").password == "Secret123"


def test_link_errors(conn):
    cur = conn.cursor()
    cur.execute("CREATE DATABASE LINK l1 USING 'sqlite:///x.db'")
    _raises(2011, cur.execute, "CREATE DATABASE LINK l1 USING 'sqlite:///y.db'")
    _raises(12154, cur.execute, "CREATE DATABASE LINK l2 USING 'dbs2_tns_alias'")
    _raises(2024, cur.execute, "DROP DATABASE LINK nowhere")
    _raises(2019, resolve_link, conn.context.store, "SLUICE", "nowhere")
    cur.execute("DROP DATABASE LINK l1")
    assert _rows(conn, "SELECT DB_LINK FROM DBA_DB_LINKS") == []


def test_private_link_first_then_public(conn):
    cur = conn.cursor()
    cur.execute("CREATE PUBLIC DATABASE LINK dbs2 USING 'sqlite:///public.db'")
    assert resolve_link(conn.context.store, "SLUICE", "dbs2").owner == "PUBLIC"
    cur.execute("CREATE DATABASE LINK dbs2 USING 'sqlite:///private.db'")
    assert resolve_link(conn.context.store, "SLUICE", "dbs2").using == "sqlite:///private.db"
    assert resolve_link(conn.context.store, "SCOTT", "dbs2").using == "sqlite:///public.db"
    cur.execute("DROP PUBLIC DATABASE LINK dbs2")
    assert sorted(_rows(conn, "SELECT OWNER FROM DBA_DB_LINKS")) == [("SLUICE",)]


def test_links_through_sluice_sql(dsn, tmp_path):
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", "CREATE DATABASE LINK dbs3.net CONNECT TO a "
                                  f"IDENTIFIED BY b USING 'sqlite:///{tmp_path / 'c.db'}'"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["--dsn", dsn, "sql", "SELECT db_link, username FROM dba_db_links"],
                           catch_exceptions=False)
    assert "DBS3.NET" in r.output and "A" in r.output


def test_global_name_default_and_rename(conn):
    default = conn.context.store.global_name()
    assert default == default.upper() and default
    conn.cursor().execute("ALTER DATABASE RENAME GLOBAL_NAME TO dbs1.net")
    assert conn.context.store.global_name() == "DBS1.NET"


# -- DBMS_PROPAGATION_ADM ----------------------------------------------------------------
def _schedules(conn):
    return _rows(conn, "SELECT QNAME, DESTINATION, LATENCY, SCHEDULE_DISABLED FROM DBA_QUEUE_SCHEDULES "
                       "ORDER BY DESTINATION")


def test_create_propagation_queue_to_queue(conn):
    _mq(conn, "SRC")
    conn.propagation_adm.create_propagation(propagation_name="p1", source_queue="src",
                                            destination_queue="strmadmin.dst", destination_dblink="dbs2.net",
                                            queue_to_queue=True)
    assert _rows(conn, "SELECT PROPAGATION_NAME, SOURCE_QUEUE_OWNER, SOURCE_QUEUE_NAME, DESTINATION_QUEUE_OWNER, "
                       "DESTINATION_QUEUE_NAME, DESTINATION_DBLINK, QUEUE_TO_QUEUE, STATUS FROM DBA_PROPAGATION") == [
        ("P1", "SLUICE", "SRC", "STRMADMIN", "DST", "DBS2.NET", "TRUE", "ENABLED")]
    # a Streams propagation's default schedule: latency 3 s (seed 001), its own
    assert _schedules(conn) == [("SRC", '"STRMADMIN"."DST"@DBS2.NET', 3.0, "N")]
    assert conn.aqadm.queue_subscribers("src") == [sluice.Agent(None, "STRMADMIN.DST@DBS2.NET", 0)]


def _statuses(conn):
    return _rows(conn, "SELECT PROPAGATION_NAME, STATUS FROM DBA_PROPAGATION ORDER BY 1")


def _shared(conn, q2q_too=False):
    """P1, P2: queue-to-dblink from SRC over DBS2 (one schedule); with ``q2q_too`` P3,
    queue-to-queue over the same link (a schedule of its own)."""
    _mq(conn, "SRC")
    for name, dq in (("p1", "a.q1"), ("p2", "a.q2")):
        conn.propagation_adm.create_propagation(propagation_name=name, source_queue="src",
                                                destination_queue=dq, destination_dblink="dbs2")
    if q2q_too:
        conn.propagation_adm.create_propagation(propagation_name="p3", source_queue="src",
                                                destination_queue="a.q3", destination_dblink="dbs2",
                                                queue_to_queue=True)


def test_queue_to_dblink_propagations_share_one_schedule(conn):
    """Seed 001 "Queue-to-Queue Propagations": queue-to-dblink propagations from one source
    queue over one link "share the same propagation schedule, and any change to the
    propagation schedule affects all" of them; DBMS_PROPAGATION_ADM.STOP_/START_PROPAGATION
    of one disable / enable that shared schedule, so DBA_PROPAGATION shows every propagation
    on it with the schedule's state (what the job really does)."""
    _shared(conn)
    assert _schedules(conn) == [("SRC", "DBS2", 3.0, "N")]
    conn.propagation_adm.stop_propagation("p1")        # the shared job stops: p2 with it
    assert _schedules(conn) == [("SRC", "DBS2", 3.0, "Y")]
    assert _statuses(conn) == [("P1", "DISABLED"), ("P2", "DISABLED")]
    conn.propagation_adm.start_propagation("p2")
    assert _schedules(conn) == [("SRC", "DBS2", 3.0, "N")]
    assert _statuses(conn) == [("P1", "ENABLED"), ("P2", "ENABLED")]
    conn.propagation_adm.drop_propagation("p1")
    assert _schedules(conn) == [("SRC", "DBS2", 3.0, "N")]
    conn.propagation_adm.drop_propagation("p2")
    assert _schedules(conn) == [] and conn.aqadm.queue_subscribers("src") == []


@pytest.mark.parametrize("force", [False, True], ids=["stop", "stop-force"])
def test_stop_and_start_one_queue_to_dblink_propagation_leave_the_catalog_consistent(conn, force):
    """Seed 001: "a queue-to-queue propagation always has its own exclusive propagation
    job … you can enable, disable, or set the propagation schedule for each queue-to-queue
    propagation separately", while queue-to-dblink propagations share one.  Every
    propagation's STATUS is its schedule's: STOP_PROPAGATION (force or not), START_
    PROPAGATION, DISABLE_/ENABLE_PROPAGATION_SCHEDULE of the link's schedule move P1 and P2
    together and never P3, whose own schedule is untouched."""
    _shared(conn, q2q_too=True)
    conn.propagation_adm.stop_propagation("p2", force=force)
    assert _statuses(conn) == [("P1", "DISABLED"), ("P2", "DISABLED"), ("P3", "ENABLED")]
    assert _schedules(conn) == [("SRC", '"A"."Q3"@DBS2', 3.0, "N"), ("SRC", "DBS2", 3.0, "Y")]
    conn.propagation_adm.start_propagation("p1")
    assert _statuses(conn) == [("P1", "ENABLED"), ("P2", "ENABLED"), ("P3", "ENABLED")]
    conn.aqadm.disable_propagation_schedule(queue_name="src", destination="dbs2")
    assert _statuses(conn) == [("P1", "DISABLED"), ("P2", "DISABLED"), ("P3", "ENABLED")]
    conn.propagation_adm.start_propagation("p2")
    assert _statuses(conn) == [("P1", "ENABLED"), ("P2", "ENABLED"), ("P3", "ENABLED")]
    conn.propagation_adm.stop_propagation("p3", force=force)   # its own job only
    assert _statuses(conn) == [("P1", "ENABLED"), ("P2", "ENABLED"), ("P3", "DISABLED")]
    assert _schedules(conn) == [("SRC", '"A"."Q3"@DBS2', 3.0, "Y"), ("SRC", "DBS2", 3.0, "N")]
    conn.aqadm.enable_propagation_schedule(queue_name="src", destination="dbs2",
                                           destination_queue="a.q3")
    assert _statuses(conn) == [("P1", "ENABLED"), ("P2", "ENABLED"), ("P3", "ENABLED")]


def test_local_propagation_and_errors(conn):
    _mq(conn, "SRC")
    _mq(conn, "DST")
    make_queue(conn, "SINGLE")
    adm = conn.propagation_adm
    _raises(24010, adm.create_propagation, "p1", "nosuch", "dst")
    _raises(24010, adm.create_propagation, "p1", "src", "nosuch")       # local: checked now
    _raises(24039, adm.create_propagation, "p1", "single", "dst")
    _raises(24141, adm.create_propagation, "p1", "src", "dst", rule_set_name="no_rs")
    adm.create_propagation("p1", "src", "dst")
    _raises(23600, adm.create_propagation, "p1", "src", "dst")
    _raises(24034, adm.create_propagation, "p2", "src", "dst")          # one per queue pair
    _raises(23601, adm.start_propagation, "p9")
    _raises(23601, adm.drop_propagation, "p9")
    assert _rows(conn, "SELECT PROPAGATION_NAME, DESTINATION_DBLINK FROM DBA_PROPAGATION") == [("P1", None)]
    assert _schedules(conn) == [("SRC", "AQ$_LOCAL", 3.0, "N")]


def test_alter_propagation_rule_sets(conn):
    _mq(conn, "SRC")
    conn.rule_adm.create_rule_set(rule_set_name="pos_rs")
    conn.rule_adm.create_rule_set(rule_set_name="neg_rs")
    adm = conn.propagation_adm
    adm.create_propagation("p1", "src", "q@dbs2")
    adm.alter_propagation("p1", rule_set_name="pos_rs", negative_rule_set_name="neg_rs")
    cols = "RULE_SET_OWNER, RULE_SET_NAME, NEGATIVE_RULE_SET_OWNER, NEGATIVE_RULE_SET_NAME"
    assert _rows(conn, f"SELECT {cols} FROM DBA_PROPAGATION") == [("SLUICE", "POS_RS", "SLUICE", "NEG_RS")]
    _raises(26667, adm.alter_propagation, "p1", rule_set_name="pos_rs", remove_rule_set=True)
    _raises(24141, adm.alter_propagation, "p1", rule_set_name="nope")
    adm.alter_propagation("p1", remove_rule_set=True)
    assert _rows(conn, f"SELECT {cols} FROM DBA_PROPAGATION") == [(None, None, "SLUICE", "NEG_RS")]
    adm.alter_propagation("p1", remove_negative_rule_set=True)
    assert _rows(conn, f"SELECT {cols} FROM DBA_PROPAGATION") == [(None, None, None, None)]
    adm.alter_propagation("p1", rule_set_name="pos_rs")
    adm.drop_propagation("p1", drop_unused_rule_sets=True)
    assert [n for _, n, _ in conn.context.store.catalog_objects("RULE_SET")] == ["NEG_RS"]


def test_propagation_adm_as_plsql(conn):
    _mq(conn, "SRC")
    conn.cursor().execute("""
        BEGIN
          DBMS_PROPAGATION_ADM.CREATE_PROPAGATION(
            propagation_name => 'dbs1_to_dbs2', source_queue => 'src',
            destination_queue => 'strmadmin.streams_queue', destination_dblink => 'dbs2.net',
            queue_to_queue => TRUE);
          DBMS_PROPAGATION_ADM.STOP_PROPAGATION('dbs1_to_dbs2');
        END;""")
    assert _rows(conn, "SELECT STATUS FROM DBA_PROPAGATION") == [("DISABLED",)]
    conn.cursor().execute("BEGIN DBMS_PROPAGATION_ADM.START_PROPAGATION(propagation_name => 'dbs1_to_dbs2'); "
                          "DBMS_PROPAGATION_ADM.DROP_PROPAGATION('dbs1_to_dbs2'); END;")
    assert _rows(conn, "SELECT * FROM DBA_PROPAGATION") == []


def test_propagation_for_rules_creates_then_returns(conn):
    _mq(conn, "SRC")
    spec = propagation_for_rules(conn, "dbs1_to_dbs2", "src", "strmadmin.q@dbs2.net")
    assert (spec.name, spec.destination_dblink, spec.queue_to_queue, spec.rule_set_name) == \
        ("DBS1_TO_DBS2", "DBS2.NET", True, None)
    conn.rule_adm.create_rule_set(rule_set_name="rs")
    conn.propagation_adm.alter_propagation("dbs1_to_dbs2", rule_set_name="rs")
    again = propagation_for_rules(conn, "dbs1_to_dbs2", "src", "strmadmin.q@dbs2.net",
                                  source_database="DBS1.NET")
    assert (again.rule_set_owner, again.rule_set_name) == ("SLUICE", "RS")
    _raises(26667, propagation_for_rules, conn, "dbs1_to_dbs2", "src", "strmadmin.other@dbs2.net")


@pytest.mark.parametrize("drop", ["drop_queue", "drop_queue_table"])
def test_a_propagations_source_queue_is_dropped_only_after_the_propagation(conn, drop):
    """A Streams propagation needs its source queue (seed 001 "Propagation Jobs": the job
    propagates from it), so DBMS_AQADM does not drop the queue (nor, with force, its queue
    table) under it — ORA-26668 (STREAMS process … exists), nothing changed, as for the
    queue of any other Streams client (tests/streams/test_queue_drop_clients.py);
    DBMS_PROPAGATION_ADM.DROP_PROPAGATION first, then the drop leaves no propagation, no
    schedule behind (DBA_PROPAGATION, DBA_QUEUE_SCHEDULES)."""
    _mq(conn, "SRC")
    conn.propagation_adm.create_propagation(propagation_name="p1", source_queue="src",
                                            destination_queue="a.q1", destination_dblink="dbs2")
    conn.aqadm.stop_queue("src")

    def go():
        if drop == "drop_queue":
            conn.aqadm.drop_queue("src")
        else:
            conn.aqadm.drop_queue_table("src_qt", force=True)
    _raises(26668, go)
    assert _statuses(conn) == [("P1", "ENABLED")] and _schedules(conn) == [("SRC", "DBS2", 3.0, "N")]
    assert _rows(conn, "SELECT NAME FROM DBA_QUEUES WHERE NAME = 'SRC'") == [("SRC",)]
    conn.propagation_adm.drop_propagation("p1")
    go()
    assert _statuses(conn) == [] and _schedules(conn) == []
