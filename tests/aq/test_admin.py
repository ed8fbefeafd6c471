"""DBMS_AQADM: queue tables, queues, their views; DBMS_TRANSFORM."""

import pytest

import sluice
from tests.conftest import hold_message, make_queue, nowait, table_rows


def _rows(conn, sql):
    return conn.query(sql, None)[1]


def test_create_queue_table_makes_default_exception_queue(conn):
    conn.aqadm.create_queue_table(queue_table="orders_qt", queue_payload_type="RAW",
                                  sort_list="PRIORITY,ENQ_TIME", comment="orders",
                                  multiple_consumers=False)
    assert _rows(conn, "SELECT QUEUE_TABLE, TYPE, SORT_ORDER, RECIPIENTS, MESSAGE_GROUPING, USER_COMMENT "
                       "FROM USER_QUEUE_TABLES") == [("ORDERS_QT", "RAW", "PRIORITY,ENQ_TIME", "SINGLE",
                                                      "NONE", "orders")]
    assert _rows(conn, "SELECT NAME, QUEUE_TYPE, ENQUEUE_ENABLED, DEQUEUE_ENABLED FROM USER_QUEUES") == [
        ("AQ$_ORDERS_QT_E", "EXCEPTION_QUEUE", "NO", "NO")]


def test_create_queue_defaults_and_alter(conn):
    make_queue(conn, start=False)
    row = _rows(conn, "SELECT MAX_RETRIES, RETRY_DELAY, RETENTION, ENQUEUE_ENABLED FROM DBA_QUEUES "
                      "WHERE NAME = 'Q'")
    assert row == [(5, 0.0, "0", "NO")]
    conn.aqadm.alter_queue(queue_name="Q", max_retries=2, retry_delay=10, retention_time=60,
                           comment="altered")
    row = _rows(conn, "SELECT MAX_RETRIES, RETRY_DELAY, RETENTION, USER_COMMENT FROM DBA_QUEUES "
                      "WHERE NAME = 'Q'")
    assert row == [(2, 10.0, "60", "altered")]


def test_alter_queue_table_comment(conn):
    make_queue(conn)
    conn.aqadm.alter_queue_table(queue_table="Q_QT", comment="new comment")
    assert _rows(conn, "SELECT USER_COMMENT FROM USER_QUEUE_TABLES") == [("new comment",)]


def test_duplicate_objects_are_refused(conn):
    make_queue(conn)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.create_queue_table(queue_table="Q_QT", queue_payload_type="RAW")
    assert e.value.full_code == "ORA-24001"
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.create_queue(queue_name="Q", queue_table="Q_QT")
    assert e.value.full_code == "ORA-24006"


def test_drop_started_queue_needs_stop(conn):
    make_queue(conn)
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.drop_queue(queue_name="Q")
    assert e.value.full_code == "ORA-24011"
    conn.aqadm.stop_queue(queue_name="Q")
    conn.aqadm.drop_queue(queue_name="Q")
    with pytest.raises(sluice.DatabaseError) as e:
        conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    assert e.value.full_code == "ORA-24010"


def test_drop_queue_table_with_queues_needs_force(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.drop_queue_table(queue_table="Q_QT")
    assert e.value.full_code == "ORA-24012"
    conn.aqadm.drop_queue_table(queue_table="Q_QT", force=True)
    assert _rows(conn, "SELECT COUNT(*) FROM USER_QUEUE_TABLES") == [(0,)]
    with pytest.raises(sluice.DatabaseError) as e:
        conn.query("SELECT * FROM AQ$Q_QT", None)
    assert e.value.full_code == "ORA-00942"



def test_a_queue_table_holding_a_sessions_message_is_not_dropped(conn, conn2):
    """DROP_QUEUE_TABLE while another session holds one of its messages (dequeued, not
    committed): PostgreSQL's table lock refuses it (ORA-00054) — but the subscribers were
    already gone; SQLite dropped the table, and the other session could then neither
    commit, roll back nor close (sqlite3.OperationalError "no such table", for ever).
    Now ORA-00054 on both, nothing changed, and the other session carries on."""
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT")
    conn.aqadm.start_queue(queue_name="T")
    conn.aqadm.add_subscriber(queue_name="T", subscriber=sluice.Agent("S1"))
    conn.queue("T").enqone(conn.msgproperties(payload=b"held"))
    conn.commit()
    assert hold_message(conn2, "T") == b"held"            # not committed
    conn.aqadm.stop_queue(queue_name="T")
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.drop_queue_table(queue_table="T_QT", force=True)
    assert e.value.full_code == "ORA-00054"
    assert _rows(conn, "SELECT CONSUMER_NAME FROM dba_queue_subscribers") == [("S1",)]
    assert _rows(conn, "SELECT QUEUE_TABLE FROM user_queue_tables") == [("T_QT",)]
    conn2.rollback()
    conn2.close()
    conn.aqadm.drop_queue_table(queue_table="T_QT", force=True)   # nobody holds it now
    assert _rows(conn, "SELECT COUNT(*) FROM user_queue_tables") == [(0,)]
    assert _rows(conn, "SELECT COUNT(*) FROM dba_queue_subscribers") == [(0,)]

def test_a_queue_holding_a_sessions_message_is_not_dropped(conn, conn2, monkeypatch):
    """DROP_QUEUE while another session holds one of its messages: PostgreSQL's row locks
    refused the DELETE (ORA-00054), SQLite dropped the queue from under the session.  Now
    ORA-00054 on both, nothing changed; a message of another queue of the table held by
    the session does not stand in the way."""
    from sluice.store import postgres
    monkeypatch.setattr(postgres, "DDL_LOCK_TIMEOUT", "300ms")
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    for name in ("T", "OTHER"):
        conn.aqadm.create_queue(queue_name=name, queue_table="T_QT")
        conn.aqadm.start_queue(queue_name=name)
        conn.aqadm.add_subscriber(queue_name=name, subscriber=sluice.Agent("S1"))
        conn.queue(name).enqone(conn.msgproperties(payload=b"held"))
    conn.commit()
    assert hold_message(conn2, "T") == b"held"            # not committed
    conn.aqadm.stop_queue(queue_name="T")
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.drop_queue(queue_name="T")
    assert e.value.full_code == "ORA-00054"
    assert _rows(conn, "SELECT NAME FROM user_queues WHERE NAME = 'T'") == [("T",)]
    assert _rows(conn, "SELECT COUNT(*) FROM dba_queue_subscribers WHERE QUEUE_NAME = 'T'") == [(1,)]
    conn.aqadm.stop_queue(queue_name="OTHER")
    conn.aqadm.drop_queue(queue_name="OTHER")
    conn2.commit()                                        # the session carries on
    conn.aqadm.drop_queue(queue_name="T")                 # nobody holds it now
    assert _rows(conn, "SELECT COUNT(*) FROM user_queues WHERE NAME = 'T'") == [(0,)]


def test_unknown_queue_table_and_queue(conn):
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.create_queue(queue_name="Q", queue_table="NOPE")
    assert e.value.full_code == "ORA-24002"
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.start_queue(queue_name="NOPE")
    assert e.value.full_code == "ORA-24010"


def test_sort_lists(conn):
    for i, sl in enumerate(["ENQ_TIME", "PRIORITY", "COMMIT_TIME", "PRIORITY,ENQ_TIME",
                            "ENQ_TIME,PRIORITY", "PRIORITY,COMMIT_TIME", "priority , enq_time"]):
        conn.aqadm.create_queue_table(queue_table=f"T{i}", queue_payload_type="RAW", sort_list=sl)
    for bad in ("ENQ_TIME,COMMIT_TIME", "SIZE", "PRIORITY,PRIORITY", "A,B,C"):
        with pytest.raises(sluice.DatabaseError) as e:
            conn.aqadm.create_queue_table(queue_table="BAD", queue_payload_type="RAW", sort_list=bad)
        assert e.value.full_code == "ORA-24036"


def test_queue_names_are_canonical_and_schema_qualified(conn):
    conn.aqadm.create_queue_table(queue_table="sluice.lower_qt", queue_payload_type="RAW")
    conn.aqadm.create_queue(queue_name="lower_q", queue_table="lower_qt")
    conn.aqadm.start_queue(queue_name="SLUICE.LOWER_Q")
    q = conn.queue("Lower_Q")
    q.enqone(conn.msgproperties(payload=b"x"))
    conn.commit()
    assert nowait(conn.queue("sluice.lower_q")).deqone().payload == b"x"
    conn.aqadm.create_queue(queue_name='"MixedCase"', queue_table="LOWER_QT")
    assert ("MixedCase",) in _rows(conn, "SELECT NAME FROM USER_QUEUES")


def test_queue_in_other_schema_than_its_table_is_refused(conn):
    conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
    with pytest.raises(sluice.DatabaseError) as e:
        conn.aqadm.create_queue(queue_name="OTHER.Q", queue_table="QT")
    assert e.value.full_code == "ORA-24037"


def test_admin_ddl_commits_the_open_transaction(conn, conn2):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"x"))
    conn.aqadm.create_queue_table(queue_table="OTHER_QT", queue_payload_type="RAW")
    assert nowait(conn2.queue("Q")).deqone().payload == b"x"


def test_purge_queue_table(conn):
    make_queue(conn)
    q = conn.queue("Q")
    for c in ("keep", "drop", "drop"):
        q.enqone(conn.msgproperties(payload=b"x", correlation=c))
    conn.commit()
    conn.aqadm.purge_queue_table(queue_table="Q_QT", purge_condition="qtview.corr_id = 'drop'")
    assert [r[2] for r in table_rows(conn, "Q_QT")] == ["keep"]
    conn.aqadm.purge_queue_table(queue_table="Q_QT", purge_condition=None)
    assert table_rows(conn, "Q_QT") == []


def test_transformations_at_enqueue_and_dequeue(conn):
    conn.create_type("ORDER_V1", "OBJECT", [("ID", "NUMBER"), ("NAME", "VARCHAR2(40)")], None, None, False)
    conn.create_type("ORDER_V2", "OBJECT", [("ID", "NUMBER"), ("NAME", "VARCHAR2(40)"),
                                            ("SOURCE", "VARCHAR2(10)")], None, None, False)
    v1, v2 = conn.gettype("ORDER_V1"), conn.gettype("ORDER_V2")

    def upgrade(order):
        new = v2.newobject()
        new.ID, new.NAME, new.SOURCE = order.ID, order.NAME.upper(), "v1"
        return new
    sluice.register_function("sluice.upgrade_order", upgrade)
    conn.transform.create_transformation(schema="sluice", name="v1_to_v2", from_schema="sluice",
                                         from_type="order_v1", to_schema="sluice", to_type="order_v2",
                                         transformation="sluice.upgrade_order(source.user_data)")
    make_queue(conn, payload="ORDER_V2")
    q = conn.queue("Q", v2)
    q.enqoptions.transformation = "v1_to_v2"
    old = v1.newobject()
    old.ID, old.NAME = 1, "pen"
    q.enqone(conn.msgproperties(payload=old))
    conn.commit()
    got = nowait(q).deqone().payload
    assert (got.ID, got.NAME, got.SOURCE) == (1, "PEN", "v1")
    assert _rows(conn, "SELECT NAME, FROM_TYPE, TO_TYPE FROM USER_TRANSFORMATIONS") == [
        ("V1_TO_V2", "SLUICE.ORDER_V1", "SLUICE.ORDER_V2")]
    # at dequeue
    sluice.register_function("sluice.name_of", lambda o: o.NAME.encode())
    conn.transform.create_transformation(schema="sluice", name="to_raw", from_schema="sluice",
                                         from_type="order_v2", to_schema="sys", to_type="RAW",
                                         transformation="sluice.name_of(source.user_data)")
    q.enqoptions.transformation = None
    new = v2.newobject()
    new.ID, new.NAME = 2, "ink"
    q.enqone(conn.msgproperties(payload=new))
    conn.commit()
    q.deqoptions.transformation = "to_raw"
    assert q.deqone().payload == b"ink"


def test_unknown_transformation_raises(conn):
    make_queue(conn)
    q = conn.queue("Q")
    q.enqoptions.transformation = "nope"
    with pytest.raises(sluice.DatabaseError) as e:
        q.enqone(conn.msgproperties(payload=b"x"))
    assert e.value.full_code == "ORA-24185"


def test_queries_on_the_views_take_binds_and_name_bad_columns(conn):
    make_queue(conn)
    q = conn.queue("Q")
    for c in ("A", "B"):
        q.enqone(conn.msgproperties(payload=b"x", correlation=c))
    conn.commit()
    cols, rows = conn.query("SELECT corr_id, msg_state FROM aq$q_qt WHERE corr_id = :c", {"c": "B"})
    assert [c.upper() for c in cols] == ["CORR_ID", "MSG_STATE"] and rows == [("B", "READY")]
    assert conn.query("SELECT COUNT(*) FROM aq$q_qt WHERE corr_id LIKE 'A%'", None)[1] == [(1,)]
    with pytest.raises(sluice.DatabaseError) as e:
        conn.query("SELECT no_such_column FROM aq$q_qt", None)
    assert e.value.full_code == "ORA-00904" and "NO_SUCH_COLUMN" in str(e.value)
    # a bad query inside an open transaction does not end the transaction
    q.enqone(conn.msgproperties(payload=b"pending", correlation="C"))
    with pytest.raises(sluice.DatabaseError):
        conn.query("SELECT * FROM no_such_view", None)
    conn.commit()
    assert conn.query("SELECT COUNT(*) FROM aq$q_qt", None)[1] == [(3,)]
