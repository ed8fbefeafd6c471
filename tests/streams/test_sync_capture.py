"""Synchronous capture (issue 13 section 2; seed 001 "Queues and Synchronous Capture",
"Commit-Time Queues": "A synchronous capture always enqueues into a commit-time queue"),
on both backends: changes by a writer that is not Sluice arrive as row LCRs in the
capture's queue, in the changing transaction, filtered by the capture's rules."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import pytest

import sluice
from sluice.streams.capture import sync_capture_for_rules
from tests.rules.rules_corpus import SEED_RULES
from tests.streams.synckit import CONSUMER, senv  # noqa: F401  (fixture)


def _create(senv, *tables, name="SC", **kw):
    for t in tables:
        senv.create_table(t)
    rs = senv.rule_set(f"{name}_RS", *tables, **kw)
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name=name, rule_set_name=rs)


def _values(lcr, which):
    return {u.column_name: (u.data.get_type_name(), u.data.value) for u in lcr.get_values(which, "N")}


def test_plain_writer_changes_arrive_as_row_lcrs(senv):
    _create(senv, "emp")
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'Ann', 10)", f"UPDATE {t} SET dept = 20 WHERE id = 1",
             f"DELETE FROM {t} WHERE id = 1")
    lcrs = senv.dequeue_all()
    assert [lcr.get_command_type() for lcr in lcrs] == ["INSERT", "UPDATE", "DELETE"]
    ins, upd, dele = lcrs
    for lcr in lcrs:
        assert (lcr.get_object_owner(), lcr.get_object_name()) == (senv.owner, "EMP")
        assert lcr.get_source_database_name() == senv.global_name
        assert lcr.get_tag() is None and lcr.is_null_tag() == "Y"
        assert isinstance(lcr.get_source_time(), datetime)
    assert len({lcr.get_transaction_id() for lcr in lcrs}) == (3 if senv.sqlite else 1)
    assert _values(ins, "NEW") == {"ID": ("SYS.NUMBER", 1), "NAME": ("SYS.VARCHAR2", "Ann"),
                                   "DEPT": ("SYS.NUMBER", 10)}
    assert _values(ins, "OLD") == {}
    assert _values(upd, "OLD")["DEPT"] == ("SYS.NUMBER", 10)
    assert _values(upd, "NEW")["DEPT"] == ("SYS.NUMBER", 20)
    assert _values(dele, "NEW") == {} and _values(dele, "OLD")["NAME"] == ("SYS.VARCHAR2", "Ann")


def test_one_transaction_is_one_message_group_in_commit_order(senv):
    """A writer session (SQLite: its SLUICE_SYNC_SESSION row) keeps its changes one
    transaction; transactions leave the commit-time queue in commit order."""
    _create(senv, "emp")
    t = senv.table("emp")
    for i in range(3):
        senv.sql(*(f"INSERT INTO {t} VALUES ({i * 10 + j}, 'x', 1)" for j in range(3)))
    with senv.transaction(session=True) as w:
        w.execute(f"INSERT INTO {t} VALUES (100, 'y', 1)")
        w.execute(f"INSERT INTO {t} VALUES (101, 'y', 1)")
    rows = senv.view("SELECT ENQ_TXN_ID, CSCN, LOCAL_ORDER_NO FROM AQ$STRM_QT ORDER BY CSCN, LOCAL_ORDER_NO")
    lcrs = senv.dequeue_all()
    assert [lcr.get_value("NEW", "ID").value for lcr in lcrs] == [0, 1, 2, 10, 11, 12, 20, 21, 22, 100, 101]
    assert [r["ENQ_TXN_ID"] for r in rows] == [lcr.get_transaction_id() for lcr in lcrs]
    assert lcrs[-1].get_transaction_id() == lcrs[-2].get_transaction_id() != lcrs[-3].get_transaction_id()
    assert [r["CSCN"] for r in rows] == sorted(r["CSCN"] for r in rows)
    assert len({r["LOCAL_ORDER_NO"] for r in rows}) == 11


def test_rolled_back_change_produces_nothing(senv):
    _create(senv, "emp")
    t = senv.table("emp")
    with pytest.raises(RuntimeError):
        with senv.transaction() as w:
            w.execute(f"INSERT INTO {t} VALUES (1, 'Ann', 10)")
            raise RuntimeError("the writer gives up")
    assert senv.dequeue_all() == []
    assert senv.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT")[0]["N"] == 0


def test_rules_filter_tables_and_rows(senv):
    """Only the tables the rules name are captured; a rule's extra condition on the
    row's values is evaluated in the trigger, so a rejected change never reaches the queue."""
    senv.create_table("other")
    _create(senv, "emp", condition_extra=" and :dml.get_value('NEW', 'DEPT').AccessNumber() = 10")
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 10)", f"INSERT INTO {t} VALUES (2, 'b', 20)",
             f"INSERT INTO {senv.table('other')} VALUES (3, 'c', 10)",
             f"UPDATE {t} SET dept = 10 WHERE id = 2", f"DELETE FROM {t} WHERE id = 1")
    got = [(lcr.get_command_type(), lcr.get_value("NEW", "ID").value) for lcr in senv.dequeue_all()]
    assert got == [("INSERT", 1), ("UPDATE", 2)]


def test_subset_rule_condition_as_seed_000_prints_it(senv):
    """A subset rule (seed 000 "Subset Rules") runs in the trigger, NOT EXISTS (SELECT 1 FROM
    SYS.DUAL …) included."""
    senv.create_table("regions", "id INTEGER PRIMARY KEY, region_id INTEGER, region_name TEXT")
    o = senv.owner
    adm = senv.conn.rule_adm
    adm.create_rule_set(rule_set_name="SUB_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="SUB_INS", condition=(
        f":dml.get_object_owner()='{o}' AND :dml.get_object_name()='REGIONS' AND :dml.is_null_tag()='Y' "
        f"AND :dml.get_command_type() IN ('UPDATE','INSERT') AND (:dml.get_value('NEW','\"REGION_ID\"') "
        f"IS NOT NULL) AND (:dml.get_value('NEW','\"REGION_ID\"').AccessNumber()=2) AND "
        f"(:dml.get_command_type()='INSERT' OR ((:dml.get_value('OLD','\"REGION_ID\"') IS NOT NULL) AND "
        f"NOT EXISTS (SELECT 1 FROM SYS.DUAL WHERE (:dml.get_value('OLD','\"REGION_ID\"').AccessNumber()=2))))"))
    adm.add_rule(rule_name="SUB_INS", rule_set_name="SUB_RS")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SUB", rule_set_name="SUB_RS")
    t = senv.table("regions")
    senv.sql(f"INSERT INTO {t} VALUES (1, 1, 'Europe')", f"INSERT INTO {t} VALUES (2, 2, 'Americas')",
             f"UPDATE {t} SET region_id = 3 WHERE id = 1", f"UPDATE {t} SET region_name = 'x' WHERE id = 2",
             f"UPDATE {t} SET region_id = 2 WHERE id = 1")
    got = [(lcr.get_command_type(), lcr.get_value("NEW", '"REGION_ID"').value) for lcr in senv.dequeue_all()]
    # INSERT of 2; the update that moves region 3 into the subset; not the one within it
    assert got == [("INSERT", 2), ("UPDATE", 2)]


def test_tags(senv):
    """include_tagged_lcr FALSE rules (is_null_tag() = 'Y') skip changes made with a tag;
    a rule without it captures them, carrying the tag."""
    _create(senv, "emp")
    _create(senv, "tagged", name="ALL", tagged=True)
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)",
             f"INSERT INTO {senv.table('tagged')} VALUES (1, 'a', 1)", tag=b"\x02")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")
    got = [(lcr.get_object_name(), lcr.get_tag()) for lcr in senv.dequeue_all()]
    assert got == [("TAGGED", b"\x02"), ("EMP", None)]


def test_tag_of_a_sluice_session_reaches_the_writer(senv):
    """DBMS_STREAMS.SET_TAG of a Sluice session, put into a writer's transaction with
    tag_transaction (what an apply process does), tags the changes."""
    from sluice.streams.capture import tag_transaction
    from sluice.streams.capture.syncsqlite import close_session
    _create(senv, "emp", tagged=True)
    senv.conn.streams.set_tag(b"\x11")
    with senv.transaction() as w:
        tag_transaction(senv.conn, w)
        w.execute(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
        if senv.sqlite:
            close_session(w)
    assert [lcr.get_tag() for lcr in senv.dequeue_all()] == [b"\x11"]


def test_every_subscriber_gets_the_lcr(senv):
    senv.conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY2"))
    _create(senv, "emp")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
    rows = senv.view("SELECT CONSUMER_NAME, MSG_ID, MSG_STATE, SENDER_NAME, DELIVERY_MODE, ENQ_USER_ID "
                     "FROM AQ$STRM_QT ORDER BY CONSUMER_NAME")
    assert [r["CONSUMER_NAME"] for r in rows] == ["APPLY1", "APPLY2"]
    assert {(r["SENDER_NAME"], r["DELIVERY_MODE"], r["ENQ_USER_ID"]) for r in rows} == {("SC", "PERSISTENT", "SLUICE")}
    assert rows[0]["MSG_ID"] == rows[1]["MSG_ID"] and {r["MSG_STATE"] for r in rows} == {"READY"}
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")
    rows = senv.view("SELECT MSG_ID, LOCAL_ORDER_NO FROM AQ$STRM_QT")
    assert len({r["LOCAL_ORDER_NO"] for r in rows}) == 4 and len({r["MSG_ID"] for r in rows}) == 2
    assert len(senv.dequeue_all("APPLY2")) == 2 and len(senv.dequeue_all(CONSUMER)) == 2


def test_sluice_enqueues_and_trigger_rows_share_the_queue(senv):
    """Messages enqueued by Sluice sessions and LCRs written by triggers interleave in
    commit order, and their sequence numbers never collide — also after the store is
    opened again (SQLite: the SEQ counter is raised past existing rows then)."""
    _create(senv, "emp")
    q = senv.conn.queue("STRM_Q")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
    q.enqone(senv.conn.msgproperties(payload={"app": 1}))
    senv.conn.commit()
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")
    other = sluice.connect(senv.dsn)
    try:
        q2 = other.queue("STRM_Q")
        q2.enqone(other.msgproperties(payload={"app": 2}))
        other.commit()
    finally:
        other.close()
    got = senv.dequeue_all()
    assert [p if isinstance(p, dict) else p.get_value("NEW", "ID").value for p in got] == \
        [1, {"app": 1}, 2, {"app": 2}]


def test_rule_set_changes_move_the_captured_tables(senv):
    """Rules added or removed with DBMS_RULE_ADM change what is captured (Oracle captures
    the tables its rules name)."""
    senv.create_table("dept")
    _create(senv, "emp")
    senv.add_table_rule("SC_DEPT", "SC_RS", "dept")
    tables = {r["TABLE_NAME"] for r in senv.view("SELECT TABLE_NAME FROM DBA_SYNC_CAPTURE_TABLES")}
    assert tables == {"EMP", "DEPT"}
    senv.sql(f"INSERT INTO {senv.table('dept')} VALUES (1, 'd', 1)")
    senv.conn.rule_adm.remove_rule(rule_name="SC_RS_0", rule_set_name="SC_RS")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'e', 1)")
    assert [lcr.get_object_name() for lcr in senv.dequeue_all()] == ["DEPT"]
    assert [r["TABLE_NAME"] for r in senv.view("SELECT TABLE_NAME FROM DBA_SYNC_CAPTURE_TABLES")] == ["DEPT"]
    assert len(senv.triggers()) == (3 if senv.sqlite else 1)


def test_a_rule_naming_no_table_is_refused_and_changes_nothing(senv):
    _create(senv, "emp")
    adm = senv.conn.rule_adm
    adm.create_rule(rule_name="GLOBAL1", condition=":dml.is_null_tag() = 'Y'")
    with pytest.raises(sluice.DatabaseError, match="ORA-26667"):
        adm.add_rule(rule_name="GLOBAL1", rule_set_name="SC_RS")
    assert senv.rule_set_rules("SC_RS") == ["SLUICE.SC_RS_0"]
    adm.create_rule(rule_name="MISSING", condition=(
        f":dml.get_object_owner() = '{senv.owner}' and :dml.get_object_name() = 'NO_SUCH'"))
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        adm.add_rule(rule_name="MISSING", rule_set_name="SC_RS")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'e', 1)")
    assert len(senv.dequeue_all()) == 1


def test_drop_capture_removes_the_triggers(senv):
    _create(senv, "emp")
    assert len(senv.triggers()) == (3 if senv.sqlite else 1)
    senv.conn.capture_adm.drop_capture(capture_name="SC", drop_unused_rule_sets=True)
    assert senv.triggers() == []
    assert senv.view("SELECT * FROM DBA_SYNC_CAPTURE") == []
    assert not senv.rule_set_exists("SC_RS")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'e', 1)")
    assert senv.dequeue_all() == []


def test_views_list_sync_captures_and_not_dba_capture(senv):
    _create(senv, "emp")
    assert senv.view("SELECT * FROM DBA_SYNC_CAPTURE") == [
        {"CAPTURE_NAME": "SC", "QUEUE_NAME": "STRM_Q", "QUEUE_OWNER": "SLUICE", "RULE_SET_NAME": "SC_RS",
         "RULE_SET_OWNER": "SLUICE", "CAPTURE_USER": "SLUICE"}]
    assert senv.view("SELECT * FROM DBA_SYNC_CAPTURE_TABLES") == [
        {"TABLE_OWNER": senv.owner, "TABLE_NAME": "EMP", "ENABLED": "YES"}]
    assert senv.view("SELECT * FROM DBA_CAPTURE") == []


def test_plsql_forms(senv):
    senv.create_table("emp")
    senv.rule_set("P_RS", "emp")
    senv.rule_set("P_RS2")
    cur = senv.conn.cursor()
    cur.execute("BEGIN DBMS_CAPTURE_ADM.CREATE_SYNC_CAPTURE(queue_name => 'strm_q', "
                "capture_name => 'sync_cap', rule_set_name => 'p_rs', capture_user => NULL); END;")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'e', 1)")
    cur.execute("BEGIN DBMS_CAPTURE_ADM.ALTER_SYNC_CAPTURE(capture_name => 'sync_cap', "
                "rule_set_name => 'p_rs2'); END;")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (2, 'e', 1)")
    assert [r["RULE_SET_NAME"] for r in senv.view("SELECT * FROM DBA_SYNC_CAPTURE")] == ["P_RS2"]
    cur.execute("BEGIN DBMS_CAPTURE_ADM.DROP_CAPTURE(capture_name => 'sync_cap'); END;")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1]
    assert senv.triggers() == []


def test_sync_capture_for_rules(senv):
    """What ADD_TABLE_RULES(streams_type => 'sync_capture') does: the capture is created
    when missing (no rule set yet), the rule set attached with ALTER_SYNC_CAPTURE."""
    senv.create_table("emp")
    spec = sync_capture_for_rules(senv.conn, "SYNC_CAPTURE", "STRM_Q", senv.owner, "EMP")
    assert (spec.name, spec.rule_set_name, spec.tables) == ("SYNC_CAPTURE", None, [])
    rs = senv.rule_set("ADD_RS", "emp")
    senv.conn.capture_adm.alter_sync_capture("SYNC_CAPTURE", rule_set_name=rs)
    again = sync_capture_for_rules(senv.conn, "SYNC_CAPTURE", "STRM_Q", senv.owner, "EMP")
    assert again.rule_set_name == "ADD_RS"
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'e', 1)")
    assert len(senv.dequeue_all()) == 1
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        sync_capture_for_rules(senv.conn, "OTHER", "STRM_Q", senv.owner, "NO_SUCH")
    with pytest.raises(sluice.DatabaseError, match="ORA-26667"):
        senv.conn.streams_adm.set_up_queue(queue_table="Q2_QT", queue_name="Q2")
        sync_capture_for_rules(senv.conn, "SYNC_CAPTURE", "Q2", senv.owner, "EMP")
    assert [r["CAPTURE_NAME"] for r in senv.view("SELECT * FROM DBA_SYNC_CAPTURE")] == ["SYNC_CAPTURE"]


def test_bad_input_changes_nothing(senv):
    senv.create_table("emp")
    rs = senv.rule_set("B_RS", "emp")
    adm = senv.conn.capture_adm
    with pytest.raises(sluice.DatabaseError, match="ORA-24010"):
        adm.create_sync_capture(queue_name="NO_Q", capture_name="B", rule_set_name=rs)
    with pytest.raises(sluice.DatabaseError, match="ORA-24141"):
        adm.create_sync_capture(queue_name="STRM_Q", capture_name="B", rule_set_name="NO_RS")
    senv.conn.aqadm.create_queue_table(queue_table="ENQ_QT", queue_payload_type="SYS.ANYDATA",
                                       multiple_consumers=True)
    senv.conn.aqadm.create_queue(queue_name="ENQ_Q", queue_table="ENQ_QT")
    with pytest.raises(sluice.DatabaseError, match="commit-time"):
        adm.create_sync_capture(queue_name="ENQ_Q", capture_name="B", rule_set_name=rs)
    senv.rule_set("BAD_RS", "no_such_table")
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        adm.create_sync_capture(queue_name="STRM_Q", capture_name="B", rule_set_name="BAD_RS")
    with pytest.raises(sluice.DatabaseError, match="ORA-26701"):
        adm.alter_sync_capture("NO_SUCH", rule_set_name=rs)
    assert senv.view("SELECT * FROM DBA_SYNC_CAPTURE") == [] and senv.triggers() == []
    adm.create_sync_capture(queue_name="STRM_Q", capture_name="B", rule_set_name=rs)
    with pytest.raises(sluice.DatabaseError, match="ORA-26665"):
        adm.create_sync_capture(queue_name="STRM_Q", capture_name="B", rule_set_name=rs)
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        adm.alter_sync_capture("B", rule_set_name="BAD_RS")
    assert [r["RULE_SET_NAME"] for r in senv.view("SELECT * FROM DBA_SYNC_CAPTURE")] == ["B_RS"]
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'e', 1)")
    assert len(senv.dequeue_all()) == 1


def test_column_types(senv):
    if senv.sqlite:
        senv.create_table("typed", "id INTEGER PRIMARY KEY, amount NUMBER, ratio REAL, hired DATE, "
                                   "stamp TIMESTAMP, pic BLOB, note CLOB")
        values = "(1, 12.5, 0.25, '2024-01-02', '2024-01-02 03:04:05.678', x'0102', 'long')"
    else:
        senv.create_table("typed", "id bigint PRIMARY KEY, amount numeric(10,2), ratio double precision, "
                                   "hired date, stamp timestamp, pic bytea, note jsonb")
        values = "(1, 12.5, 0.25, '2024-01-02', '2024-01-02 03:04:05.678', '\\x0102', '\"long\"')"
    rs = senv.rule_set("T_RS", "typed")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="T", rule_set_name=rs)
    senv.sql(f"INSERT INTO {senv.table('typed')} VALUES {values}")
    (lcr,) = senv.dequeue_all()
    new = _values(lcr, "NEW")
    assert new["ID"] == ("SYS.NUMBER", 1)
    assert new["AMOUNT"][0] == "SYS.NUMBER" and Decimal(str(new["AMOUNT"][1])) == Decimal("12.5")
    assert new["RATIO"] == ("SYS.BINARY_DOUBLE", 0.25)
    assert new["HIRED"] == ("SYS.DATE", datetime(2024, 1, 2))
    assert new["STAMP"] == ("SYS.TIMESTAMP", datetime(2024, 1, 2, 3, 4, 5, 678000))
    assert new["PIC"] == ("SYS.RAW", b"\x01\x02")
    assert new["NOTE"][0] == "SYS.CLOB" and "long" in new["NOTE"][1]


def test_unsupported_column_types_are_reported(senv):
    if senv.sqlite:   # SQLite values are integers, reals, text or blobs: all are captured
        senv.create_table("odd", "id INTEGER PRIMARY KEY, anything")
        rs = senv.rule_set("U_RS", "odd")
        senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="U", rule_set_name=rs)
        senv.sql(f"INSERT INTO odd VALUES (1, x'ff')", "INSERT INTO odd VALUES (2, 'text')")
        assert [lcr.get_value("NEW", "ANYTHING").get_type_name() for lcr in senv.dequeue_all()] == \
            ["SYS.RAW", "SYS.VARCHAR2"]
        return
    senv.create_table("odd", "id integer PRIMARY KEY, tags text[]")
    rs = senv.rule_set("U_RS", "odd")
    with pytest.raises(sluice.DatabaseError, match=r"ORA-26667.*TAGS|ORA-26667.*tags"):
        senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="U", rule_set_name=rs)
    assert senv.view("SELECT * FROM DBA_SYNC_CAPTURE") == [] and senv.triggers() == []
    rows = senv.view(f"SELECT TABLE_NAME, REASON FROM DBA_STREAMS_UNSUPPORTED WHERE OWNER = '{senv.owner}'")
    assert rows and rows[0]["TABLE_NAME"] == "ODD" and "text[]" in rows[0]["REASON"]


# seed 000 "Subset Rules": the three rules ADD_SUBSET_RULES generates, verbatim
_SUBSET_RULES = {label.split()[1].upper(): text for label, text in SEED_RULES
                 if label in ("subset insert", "subset update", "subset delete")}


def test_subset_rules_migrate_rows(senv):
    """Seed 000 "Row Migration During Capture": with the three subset rules (action context
    STREAMS$_ROW_SUBSET), an UPDATE that moves a row into the subset is captured as an
    INSERT of the new row, one that moves it out as a DELETE of the old row."""
    senv.create_table("regions", "id INTEGER PRIMARY KEY, region_id INTEGER, region_name TEXT")
    adm = senv.conn.rule_adm
    adm.create_rule_set(rule_set_name="MIG_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    for op, text in _SUBSET_RULES.items():
        text = text.replace("'HR'", f"'{senv.owner}'").replace("'DBS1.NET'", f"'{senv.global_name}'")
        adm.create_rule(rule_name=f"REGIONS_{op}", condition=text,
                        action_context={"STREAMS$_ROW_SUBSET": op})
        adm.add_rule(rule_name=f"REGIONS_{op}", rule_set_name="MIG_RS")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="MIG", rule_set_name="MIG_RS")
    t = senv.table("regions")
    senv.sql(f"INSERT INTO {t} VALUES (1, 2, 'A')", f"INSERT INTO {t} VALUES (2, 5, 'B')",
             f"UPDATE {t} SET region_id = 2 WHERE id = 2", f"UPDATE {t} SET region_name = 'X' WHERE id = 1",
             f"UPDATE {t} SET region_id = 7 WHERE id = 1", f"DELETE FROM {t} WHERE id = 2",
             f"DELETE FROM {t} WHERE id = 1")
    got = [(lcr.get_command_type(), sorted(_values(lcr, "OLD")), sorted(_values(lcr, "NEW")),
            (lcr.get_value("OLD", "ID") or lcr.get_value("NEW", "ID")).value) for lcr in senv.dequeue_all()]
    cols = ["ID", "REGION_ID", "REGION_NAME"]
    assert got == [("INSERT", [], cols, 1), ("INSERT", [], cols, 2), ("UPDATE", cols, cols, 1),
                   ("DELETE", cols, [], 1), ("DELETE", cols, [], 2)]


def test_a_rule_the_trigger_cannot_evaluate_is_refused(senv):
    """A rule that needs Python (SYSDATE, run-time LIKE patterns …) cannot run in a plain-SQL
    trigger: ADD_RULE refuses it and stores nothing."""
    _create(senv, "emp")
    senv.conn.rule_adm.create_rule(rule_name="NOW1", condition=(
        f":dml.get_object_owner() = '{senv.owner}' and :dml.get_object_name() = 'EMP' "
        f"and SYSDATE > TO_DATE('2000-01-01', 'YYYY-MM-DD')"))
    with pytest.raises(sluice.DatabaseError, match="ORA-26667"):
        senv.conn.rule_adm.add_rule(rule_name="NOW1", rule_set_name="SC_RS")
    assert senv.rule_set_rules("SC_RS") == ["SLUICE.SC_RS_0"]


def test_lcrs_leave_in_commit_order_not_change_order(senv):
    """Seed 001 "Commit-Time Queues": a transaction that changed first but committed last is
    dequeued last (PostgreSQL, where writers overlap; an SQLite file has one writer at a time,
    so its change order is its commit order)."""
    _create(senv, "emp")
    t = senv.table("emp")
    if senv.sqlite:
        senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1)")
        senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    else:
        import psycopg
        from tests.conftest import PG_BASE
        with psycopg.connect(PG_BASE) as first, psycopg.connect(PG_BASE) as second:
            first.execute(f"INSERT INTO {t} VALUES (1, 'a', 1)")      # changes first …
            second.execute(f"INSERT INTO {t} VALUES (2, 'b', 1)")
            second.commit()
            first.commit()                                            # … commits last
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [2, 1]


def test_a_column_added_later_is_captured_after_alter_sync_capture(senv):
    """The triggers name the table's columns: a column added later is captured once
    ALTER_SYNC_CAPTURE (the same rule set) has re-created them; until then the change is
    captured without it."""
    _create(senv, "emp")
    t = senv.table("emp")
    senv.writer.execute(f"ALTER TABLE {t} ADD COLUMN bonus INTEGER")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1, 5)")
    senv.conn.capture_adm.alter_sync_capture("SC", rule_set_name="SC_RS")
    senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1, 7)")
    got = [_values(lcr, "NEW").get("BONUS") for lcr in senv.dequeue_all()]
    assert got == [None, ("SYS.NUMBER", 7)]


def test_the_queue_of_a_sync_capture_is_not_dropped_under_it(senv):
    _create(senv, "emp")
    aqadm = senv.conn.aqadm
    aqadm.stop_queue(queue_name="STRM_Q")
    with pytest.raises(sluice.DatabaseError, match="ORA-26668: STREAMS process SC exists"):
        aqadm.drop_queue(queue_name="STRM_Q")
    with pytest.raises(sluice.DatabaseError, match="ORA-26668: STREAMS process SC exists"):
        aqadm.drop_queue_table(queue_table="STRM_QT", force=True)
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")   # the writer still works
    senv.conn.capture_adm.drop_capture("SC")
    aqadm.drop_queue_table(queue_table="STRM_QT", force=True)
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")


def test_ddl_rules_are_left_out(senv):
    """ADD_TABLE_RULES(include_ddl => TRUE) adds a DDL rule too; a synchronous capture
    captures DML only and ignores it."""
    _create(senv, "emp")
    senv.conn.rule_adm.create_rule(rule_name="EMP_DDL", condition=(
        f"(((:ddl.get_object_owner() = '{senv.owner}' and :ddl.get_object_name() = 'EMP') "
        f"or (:ddl.get_base_table_owner() = '{senv.owner}' and :ddl.get_base_table_name() = 'EMP')) "
        f"and :ddl.is_null_tag() = 'Y' )"))
    senv.conn.rule_adm.add_rule(rule_name="EMP_DDL", rule_set_name="SC_RS")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
    assert [lcr.get_command_type() for lcr in senv.dequeue_all()] == ["INSERT"]


def test_a_waiting_dequeue_receives_the_lcr(senv):
    """A consumer waiting on the queue gets an LCR a trigger wrote: PostgreSQL's trigger
    NOTIFYs the queue table's channel; on SQLite the waiter's periodic re-check finds it."""
    import threading
    import time
    _create(senv, "emp")
    q = senv.conn.queue("STRM_Q")
    q.deqoptions.consumername = CONSUMER
    q.deqoptions.wait = 10
    timer = threading.Timer(0.5, senv.sql, (f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)",))
    t0 = time.monotonic()
    timer.start()
    try:
        msg = q.deqone()
    finally:
        timer.join()
    senv.conn.commit()
    assert msg is not None and msg.payload.get_value("NEW", "ID").value == 1
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("dsn", ["postgresql"], indirect=True)
def test_a_writer_without_privileges_on_the_store_is_captured(senv):
    """PostgreSQL: the trigger function runs as the store's owner (SECURITY DEFINER), so an
    application role that may write only its own table is captured all the same."""
    import uuid
    _create(senv, "emp")
    role = "app_" + uuid.uuid4().hex[:8]
    w = senv.writer
    w.execute(f"CREATE ROLE {role}")
    try:
        w.execute(f"GRANT USAGE ON SCHEMA {senv.schema} TO {role}")
        w.execute(f"GRANT INSERT ON {senv.table('emp')} TO {role}")
        with w.transaction():
            w.execute(f"SET LOCAL ROLE {role}")
            w.execute(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
        assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1]
    finally:
        w.execute(f"DROP OWNED BY {role}")
        w.execute(f"DROP ROLE {role}")


def test_sqlite_table_has_one_owner(senv):
    """SQLite: the file is one schema; a table captured as HR.EMP cannot also be SCOTT.EMP
    (PostgreSQL: another schema is another table, which must exist)."""
    _create(senv, "emp")
    adm = senv.conn.rule_adm
    adm.create_rule(rule_name="OTHER_OWNER", condition=(
        ":dml.get_object_owner() = 'SCOTT' and :dml.get_object_name() = 'EMP'"))
    with pytest.raises(sluice.DatabaseError, match="ORA-26667" if senv.sqlite else "ORA-00942"):
        adm.add_rule(rule_name="OTHER_OWNER", rule_set_name="SC_RS")
    senv.rule_set("SCOTT_RS")
    adm.add_rule(rule_name="OTHER_OWNER", rule_set_name="SCOTT_RS")
    with pytest.raises(sluice.DatabaseError, match="ORA-26667" if senv.sqlite else "ORA-00942"):
        senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC2",
                                                  rule_set_name="SCOTT_RS")
    assert [r["CAPTURE_NAME"] for r in senv.view("SELECT * FROM DBA_SYNC_CAPTURE")] == ["SC"]


def test_prepare_sync_instantiation(senv):
    """DBMS_CAPTURE_ADM.PREPARE_SYNC_INSTANTIATION: changes committed after it carry greater SCNs."""
    _create(senv, "emp")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
    cur = senv.conn.cursor()
    cur.execute(f"""DECLARE scn NUMBER; BEGIN
        scn := DBMS_CAPTURE_ADM.PREPARE_SYNC_INSTANTIATION(table_names => '{senv.owner}.emp');
        DBMS_OUTPUT.PUT_LINE(scn); END;""")
    scn = int(cur.output[0])
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")
    assert [lcr.get_scn() > scn for lcr in senv.dequeue_all()] == [False, True]
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        senv.conn.capture_adm.prepare_sync_instantiation(f"{senv.owner}.emp, {senv.owner}.nope")


def test_odd_names(senv):
    """Names that need quoting: a table and columns with blanks, quotes and $."""
    if senv.sqlite:
        senv.writer.execute('CREATE TABLE "odd tab" ("id" INTEGER PRIMARY KEY, "it\'s" TEXT, "a""b$" INTEGER)')
        owner, table = "HR", "ODD TAB"
    else:
        senv.writer.execute(f'CREATE TABLE {senv.schema}."odd tab" (id integer PRIMARY KEY, "it\'s" text, "a""b$" integer)')
        owner, table = senv.owner, "ODD TAB"     # (its Oracle name: lower case folds to upper)
    adm = senv.conn.rule_adm
    adm.create_rule_set(rule_set_name="ODD_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="ODD_R", condition=(
        f":dml.get_object_owner() = '{owner}' and :dml.get_object_name() = '{table}'"))
    adm.add_rule(rule_name="ODD_R", rule_set_name="ODD_RS")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="ODD", rule_set_name="ODD_RS")
    name = '"odd tab"' if senv.sqlite else f'{senv.schema}."odd tab"'
    senv.sql(f"INSERT INTO {name} VALUES (1, 'x', 2)")
    (lcr,) = senv.dequeue_all()
    assert lcr.get_object_name() == table
    assert {k: v[1] for k, v in _values(lcr, "NEW").items()} == {"ID": 1, "IT'S": "x", 'A"B$': 2}


def test_add_table_rules_and_add_subset_rules_with_sync_capture(senv):
    """DBMS_STREAMS_ADM.ADD_TABLE_RULES / ADD_SUBSET_RULES(streams_type => 'sync_capture'),
    as an administrator writes them: the capture is created, the rules generated, the
    tables captured; the subset rules migrate rows."""
    senv.create_table("emp")
    senv.create_table("regions", "id INTEGER PRIMARY KEY, region_id INTEGER, region_name TEXT")
    o = senv.owner
    cur = senv.conn.cursor()
    cur.execute(f"""BEGIN
      DBMS_STREAMS_ADM.ADD_TABLE_RULES(
        table_name   => '{o}.emp',
        streams_type => 'sync_capture',
        streams_name => 'sync_capture',
        queue_name   => 'strm_q');
      DBMS_STREAMS_ADM.ADD_SUBSET_RULES(
        table_name    => '{o}.regions',
        dml_condition => 'region_id=2',
        streams_type  => 'sync_capture',
        streams_name  => 'sync_capture',
        queue_name    => 'strm_q');
    END;""")
    assert {r["TABLE_NAME"] for r in senv.view("SELECT * FROM DBA_SYNC_CAPTURE_TABLES")} == {"EMP", "REGIONS"}
    t, r = senv.table("emp"), senv.table("regions")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)", f"INSERT INTO {r} VALUES (1, 5, 'x')",
             f"UPDATE {r} SET region_id = 2 WHERE id = 1", f"UPDATE {r} SET region_id = 3 WHERE id = 1")
    got = [(lcr.get_object_name(), lcr.get_command_type()) for lcr in senv.dequeue_all()]
    assert got == [("EMP", "INSERT"), ("REGIONS", "INSERT"), ("REGIONS", "DELETE")]


@pytest.mark.parametrize("dsn", ["sqlite"], indirect=True)
def test_sqlite_owner_qualified_table_names(senv):
    """SQLite: ``SCOTT.DEPT`` is the table named "SCOTT.DEPT" when the file has one (Sluice's
    own naming there); a queue table is never a captured table."""
    senv.writer.execute('CREATE TABLE "SCOTT.DEPT" (id INTEGER PRIMARY KEY, name TEXT, dept INTEGER)')
    adm = senv.conn.rule_adm
    adm.create_rule_set(rule_set_name="Q_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.create_rule(rule_name="Q_R", condition=(
        ":dml.get_object_owner() = 'SCOTT' and :dml.get_object_name() = 'DEPT'"))
    adm.add_rule(rule_name="Q_R", rule_set_name="Q_RS")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="Q", rule_set_name="Q_RS")
    senv.sql('INSERT INTO "SCOTT.DEPT" VALUES (1, \'d\', 1)')
    assert [(lcr.get_object_owner(), lcr.get_object_name()) for lcr in senv.dequeue_all()] == [("SCOTT", "DEPT")]
    adm.create_rule(rule_name="QT_R", condition=(
        ":dml.get_object_owner() = 'SLUICE' and :dml.get_object_name() = 'STRM_QT'"))
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        adm.add_rule(rule_name="QT_R", rule_set_name="Q_RS")


def test_registrations_are_notified(senv):
    """Seed 003 "Asynchronous Notifications": a consumer's registration hears of the LCRs
    a trigger enqueued for it (the trigger writes the notification outbox rows)."""
    from tests.conftest import wait_until
    senv.conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent("APPLY2"))
    got = []
    senv.conn.subscribe(name="STRM_Q:APPLY1", callback=got.append)
    _create(senv, "emp")
    senv.sql(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)", f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")
    assert wait_until(lambda: len(got) == 2, timeout=10)
    ids = [r["MSG_ID"] for r in senv.view("SELECT MSG_ID FROM AQ$STRM_QT WHERE CONSUMER_NAME = 'APPLY1' "
                                          "ORDER BY LOCAL_ORDER_NO")]
    assert [m.msgid.hex().upper() for m in got] == ids and {m.consumer_name for m in got} == {"APPLY1"}


def test_changes_made_by_sluice_are_captured(senv):
    """A Sluice session's INSERT / UPDATE / DELETE run in its transaction: committed with its
    enqueues, captured with its DBMS_STREAMS tag and transaction id; rolled back, nothing."""
    _create(senv, "emp", tagged=True)
    t = senv.table("emp")
    cur = senv.conn.cursor()
    cur.execute(f"INSERT INTO {t} VALUES (:1, :2, :3)", [1, "a", 1])
    assert cur.rowcount == 1
    cur.execute(f"INSERT INTO {t} VALUES (:id, 'b', 2)", {"id": 2})
    cur.execute(f"UPDATE {t} SET dept = 9")
    assert cur.rowcount == 2
    assert cur.execute(f"SELECT COUNT(*) FROM {t} WHERE dept = 9").fetchone() == (2,)   # its own changes
    senv.conn.queue("STRM_Q").enqone(senv.conn.msgproperties(payload={"app": 1}))
    senv.conn.commit()
    cur.execute(f"DELETE FROM {t} WHERE id = 2")
    senv.conn.rollback()                                      # nothing of it is captured
    senv.conn.streams.set_tag(b"\x05")
    cur.execute(f"DELETE FROM {t} WHERE id = 1")
    senv.conn.commit()
    got = senv.dequeue_all()
    lcrs = [p for p in got if not isinstance(p, dict)]
    assert [(lcr.get_command_type(), lcr.get_tag()) for lcr in lcrs] == \
        [("INSERT", None), ("INSERT", None), ("UPDATE", None), ("UPDATE", None), ("DELETE", b"\x05")]
    assert len({lcr.get_transaction_id() for lcr in lcrs[:4]}) == 1
    assert {"app": 1} in got
    assert senv.writer.execute(f"SELECT id FROM {t}").fetchall() == [(2,)]


def test_a_failed_sluice_statement_is_undone_alone(senv):
    _create(senv, "emp")
    t = senv.table("emp")
    cur = senv.conn.cursor()
    cur.execute(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    with pytest.raises(sluice.IntegrityError, match="ORA-00001"):
        cur.execute(f"INSERT INTO {t} VALUES (1, 'again', 1)")
    with pytest.raises(sluice.DatabaseError, match="ORA-00942"):
        cur.execute("INSERT INTO no_such_table VALUES (1)")
    cur.execute(f"INSERT INTO {t} VALUES (2, 'b', 1)")
    senv.conn.commit()
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1, 2]


def test_sluice_dml_and_savepoints(senv):
    """A savepoint (sluice.connection.savepoint) takes back the DML made since it, whether
    the transaction had DML before it or not."""
    from sluice.connection import rollback_to_savepoint, savepoint
    _create(senv, "emp")
    t = senv.table("emp")
    cur = senv.conn.cursor()
    before_any = savepoint(senv.conn)
    cur.execute(f"INSERT INTO {t} VALUES (1, 'gone', 1)")
    rollback_to_savepoint(senv.conn, before_any)
    cur.execute(f"INSERT INTO {t} VALUES (2, 'kept', 1)")
    mark = savepoint(senv.conn)
    cur.execute(f"INSERT INTO {t} VALUES (3, 'gone', 1)")
    rollback_to_savepoint(senv.conn, mark)
    senv.conn.commit()
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [2]
    assert senv.writer.execute(f"SELECT id FROM {t}").fetchall() == [(2,)]


@pytest.mark.parametrize("dsn", ["sqlite"], indirect=True)
def test_sqlite_immediate_enqueue_under_dml_is_refused(senv):
    """SQLite has one writer: while a session's DML holds the write transaction, an
    IMMEDIATE enqueue (a transaction of its own) would wait for it forever; it is refused
    and the session's transaction goes on."""
    _create(senv, "emp")
    cur = senv.conn.cursor()
    cur.execute(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
    q = senv.conn.queue("STRM_Q")
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    with pytest.raises(sluice.NotSupportedError, match="IMMEDIATE"):
        q.enqone(senv.conn.msgproperties(payload={"now": 1}))
    senv.conn.commit()
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1]


@pytest.mark.parametrize("dsn", ["sqlite"], indirect=True)
def test_sqlite_dml_transaction_ends_in_another_thread(senv):
    """A connection shared by threads: its DML transaction may end in another thread (the
    write transaction is SQLite's, not a mutex of the thread that began it)."""
    import threading
    _create(senv, "emp")
    senv.conn.cursor().execute(f"INSERT INTO {senv.table('emp')} VALUES (1, 'a', 1)")
    done = threading.Thread(target=senv.conn.commit)
    done.start()
    done.join()
    other = sluice.connect(senv.dsn)            # the store is free for other writers
    try:
        other.cursor().execute(f"INSERT INTO {senv.table('emp')} VALUES (2, 'b', 1)")
        other.commit()
    finally:
        other.close()
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1, 2]


@pytest.mark.parametrize("take_away, code", [
    (lambda c: c.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="CAPUSER"), 1031),
    (lambda c: c.aqadm.disable_db_access(agent_name="SC", db_username="CAPUSER"), 24093),
], ids=["revoke-enqueue", "disable-db-access"])
def test_the_trigger_enqueues_with_the_capture_users_rights(senv, take_away, code):
    """Seed 001: "the synchronous capture can enqueue into its secure queue automatically"
    as its capture_user (the agent SC mapped to it, ENQUEUE granted).  Once that is taken
    away the trigger refuses the change with the error the capture user's enqueue would get
    -- the writer's statement (SQLite) or COMMIT (PostgreSQL) fails, nothing of the change
    kept, nothing enqueued -- for a plain writer and a Sluice session alike; given back, the
    changes are captured again.  The triggers used to enqueue whatever the user's rights."""
    _capture_as_capuser(senv)
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    take_away(senv.conn)
    with pytest.raises(Exception, match=f"ORA-{code:05d}"):
        senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1)")
    cur = senv.conn.cursor()
    with pytest.raises(sluice.DatabaseError) as refused:
        cur.execute(f"INSERT INTO {t} VALUES (3, 'c', 1)")
        senv.conn.commit()
    assert refused.value.code == code
    senv.conn.rollback()
    assert senv.writer.execute(f"SELECT id FROM {t}").fetchall() == [(1,)]
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1]
    senv.conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="CAPUSER")
    senv.conn.aqadm.enable_db_access(agent_name="SC", db_username="CAPUSER")
    senv.sql(f"INSERT INTO {t} VALUES (4, 'd', 1)")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [4]


def test_a_new_capture_user_is_the_one_whose_rights_count(senv):
    """ALTER_SYNC_CAPTURE(capture_user): the triggers enqueue as the new user from then on --
    what the old one loses no longer matters, what the new one loses refuses the change."""
    from tests.security.conftest import create_user
    create_user(senv.conn, "CAPUSER")
    create_user(senv.conn, "CAPUSER2")
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp")
    _grant_execute(senv, "object", rs, "CAPUSER2")
    adm = senv.conn.capture_adm
    adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name=rs, capture_user="CAPUSER")
    adm.alter_sync_capture(capture_name="SC", capture_user="CAPUSER2")
    senv.conn.aqadm.disable_db_access(agent_name="SC", db_username="CAPUSER")
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    senv.conn.aqadm.disable_db_access(agent_name="SC", db_username="CAPUSER2")
    with pytest.raises(Exception, match="ORA-24093: AQ agent SC not granted privileges of database user CAPUSER2"):
        senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1)")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1]


def _grant_execute(senv, how: str, rule_set: str, user: str, revoke: bool = False) -> None:
    """EXECUTE on ``rule_set`` for ``user`` (taken away with ``revoke``): granted on it
    (``object``) or to PUBLIC, EXECUTE ANY RULE SET, or a Streams administrator's privileges
    (EXECUTE on DBMS_AQADM, MANAGE ANY QUEUE), which give every rules privilege."""
    adm = senv.conn.rule_adm
    if how == "administrator":
        senv.conn.cursor().execute(f"REVOKE MANAGE ANY QUEUE FROM {user}" if revoke else
                                   f"GRANT EXECUTE ON DBMS_AQADM, MANAGE ANY QUEUE TO {user}")
    elif how == "any":
        (adm.revoke_system_privilege if revoke else adm.grant_system_privilege)(adm.EXECUTE_ANY_RULE_SET, user)
    else:
        (adm.revoke_object_privilege if revoke else adm.grant_object_privilege)(
            adm.EXECUTE_ON_RULE_SET, rule_set, "PUBLIC" if how == "public" else user)


def _capture_as_capuser(senv, execute: bool = True, **rules) -> None:
    """A synchronous capture SC of ``emp`` (its rule set the administrator's SC_RS, with
    ``rules`` as :meth:`SyncEnv.rule_set` takes them) run by CAPUSER, a user with CREATE
    SESSION only: CREATE_SYNC_CAPTURE lets it enqueue; with ``execute`` it is granted EXECUTE
    on SC_RS too, as Oracle asks of a capture user."""
    from tests.security.conftest import create_user
    create_user(senv.conn, "CAPUSER")
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp", **rules)
    if execute:
        _grant_execute(senv, "object", rs, "CAPUSER")
    senv.conn.capture_adm.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name=rs,
                                              capture_user="CAPUSER")


def _capture_as_capuser_without_enqueue(senv) -> None:
    """A synchronous capture SC of ``emp`` whose capture user CAPUSER lacks a grant of its own
    of ENQUEUE on STRM_Q (CREATE_SYNC_CAPTURE grants it: revoked)."""
    _capture_as_capuser(senv)
    senv.conn.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="CAPUSER")


def test_the_trigger_counts_no_role_of_the_capture_user(senv):
    """The trigger enqueues on the capture user's behalf: Oracle counts no role there (its
    Streams documentation: a capture user's privileges are granted to it explicitly, not
    through a role; definer's rights disable roles).  ENQUEUE on the queue or ENQUEUE ANY
    QUEUE granted to a role CAPUSER holds -- directly or through another role -- and the
    predefined AQ_ADMINISTRATOR_ROLE and DBA refuse the change (ORA-01031); the same
    privilege granted to CAPUSER itself lets the trigger enqueue.  The trigger's SQL used to
    count every role."""
    _capture_as_capuser_without_enqueue(senv)
    cur = senv.conn.cursor()
    for statement in ("CREATE ROLE CAP_INNER", "CREATE ROLE CAP_OUTER",
                      "GRANT CAP_INNER TO CAP_OUTER", "GRANT CAP_OUTER TO CAPUSER",
                      "GRANT ENQUEUE ANY QUEUE TO CAP_OUTER", "GRANT AQ_ADMINISTRATOR_ROLE, DBA TO CAPUSER"):
        cur.execute(statement)
    senv.conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="CAP_INNER")
    t = senv.table("emp")
    with pytest.raises(Exception, match="ORA-01031"):
        senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    cur.execute("GRANT ENQUEUE ANY QUEUE TO CAPUSER")          # its own grant
    senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1)")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [2]


def test_the_trigger_counts_a_queue_privilege_granted_to_public(senv):
    """DBMS_AQADM.GRANT_QUEUE_PRIVILEGE(grantee => 'PUBLIC') is every user's, the capture
    user's too: the trigger enqueues with it, and refuses the change once it is revoked
    (ORA-01031), as the Python checks do."""
    _capture_as_capuser_without_enqueue(senv)
    senv.conn.aqadm.grant_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="PUBLIC")
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    senv.conn.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="STRM_Q", grantee="PUBLIC")
    with pytest.raises(Exception, match="ORA-01031"):
        senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1)")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1]


@pytest.mark.parametrize("how", ["object", "public", "any", "administrator"])
def test_the_trigger_evaluates_the_rule_set_with_the_capture_users_rights(senv, how):
    """The capture user evaluates the synchronous capture's rule set (as a capture process's
    does: ORA-01031, DBMS_RULE.EVALUATE's refusal).  CAPUSER may enqueue but not execute the
    administrator's rule set: every change of the captured table is refused with ORA-01031 --
    one the rules would capture and one they would not (dept 20) alike, since the rules
    cannot be evaluated at all -- the writer's statement (SQLite) or COMMIT (PostgreSQL)
    fails, nothing kept, nothing enqueued; EXECUTE granted to a role CAPUSER holds does not
    count.  Granted (on the rule set, to PUBLIC, EXECUTE ANY RULE SET, or a Streams
    administrator's privileges), the changes are
    captured; revoked, refused again -- the triggers read the grants as they fire.  A
    table the rule set does not name is not the capture's: written freely.  The triggers
    used to evaluate the rule set whatever the capture user's rights.  At each step the
    capture process's check of the same user and rule set says the same."""
    from sluice.streams.clientrights import check_rule_sets

    def process_refuses() -> bool:
        try:
            check_rule_sets(senv.conn, "CAPUSER", "SC_RS", None)
        except sluice.DatabaseError as e:
            return e.code == 1031
        return False
    _capture_as_capuser(senv, execute=False,
                        condition_extra=" and :dml.get_value('NEW', 'DEPT').AccessNumber() = 10")
    senv.create_table("other")
    t = senv.table("emp")
    cur = senv.conn.cursor()
    cur.execute("CREATE ROLE rule_users")
    _grant_execute(senv, how if how != "public" else "object", "SC_RS", "RULE_USERS")
    cur.execute("GRANT rule_users TO capuser")
    for dept in (10, 20):
        with pytest.raises(Exception, match="ORA-01031"):
            senv.sql(f"INSERT INTO {t} VALUES ({dept}, 'a', {dept})")
    with pytest.raises(sluice.DatabaseError) as refused:
        cur.execute(f"INSERT INTO {t} VALUES (3, 'c', 10)")
        senv.conn.commit()
    assert refused.value.code == 1031 and process_refuses()
    senv.conn.rollback()
    senv.sql(f"INSERT INTO {senv.table('other')} VALUES (4, 'd', 10)")
    assert senv.writer.execute(f"SELECT id FROM {t}").fetchall() == []
    assert senv.dequeue_all() == []
    _grant_execute(senv, how, "SC_RS", "CAPUSER")
    senv.sql(f"INSERT INTO {t} VALUES (5, 'e', 10)", f"INSERT INTO {t} VALUES (6, 'f', 20)")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [5]
    assert not process_refuses()
    _grant_execute(senv, how, "SC_RS", "CAPUSER", revoke=True)
    with pytest.raises(Exception, match="ORA-01031"):
        senv.sql(f"INSERT INTO {t} VALUES (7, 'g', 20)")
    assert process_refuses()
    assert senv.writer.execute(f"SELECT id FROM {t} ORDER BY id").fetchall() == [(5,), (6,)]


def test_the_capture_users_own_rule_set_needs_no_grant(senv):
    """A capture user that owns the rule set executes it (Oracle: the owner, no grant);
    ALTER_SYNC_CAPTURE to the administrator's rule set, which it may not execute, refuses its
    changes from then on (ORA-01031); to its own again, captured.  The administrator (a
    superuser) as the capture user executes CAPUSER's rule set without a grant."""
    from tests.security.conftest import create_user
    create_user(senv.conn, "CAPUSER")
    senv.create_table("emp")
    rs = senv.rule_set("SC_RS", "emp")
    adm = senv.conn.rule_adm
    adm.create_rule_set(rule_set_name="CAPUSER.OWN_RS", evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
    adm.grant_object_privilege(adm.EXECUTE_ON_RULE, "SC_RS_0", "CAPUSER")    # its rule set's owner's
    adm.add_rule(rule_name="SC_RS_0", rule_set_name="CAPUSER.OWN_RS")
    capture = senv.conn.capture_adm
    capture.create_sync_capture(queue_name="STRM_Q", capture_name="SC", rule_set_name="CAPUSER.OWN_RS",
                                capture_user="CAPUSER")
    t = senv.table("emp")
    senv.sql(f"INSERT INTO {t} VALUES (1, 'a', 1)")
    capture.alter_sync_capture(capture_name="SC", rule_set_name=rs)
    with pytest.raises(Exception, match="ORA-01031"):
        senv.sql(f"INSERT INTO {t} VALUES (2, 'b', 1)")
    capture.alter_sync_capture(capture_name="SC", rule_set_name="CAPUSER.OWN_RS")
    senv.sql(f"INSERT INTO {t} VALUES (3, 'c', 1)")
    capture.alter_sync_capture(capture_name="SC", capture_user=senv.conn.username)
    senv.sql(f"INSERT INTO {t} VALUES (4, 'd', 1)")
    assert [lcr.get_value("NEW", "ID").value for lcr in senv.dequeue_all()] == [1, 3, 4]
