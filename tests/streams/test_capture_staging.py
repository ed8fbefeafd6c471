"""Buffered staging of captured LCRs (issue 13 §2 "Staging"; seed 001 "Persistent Queues and
Buffered Queues": a capture process stages LCRs in the buffered queue and recovers them by
re-reading the log from its checkpoint).  DBMS_CAPTURE_ADM.SET_PARAMETER(capture,
'STAGING', 'BUFFERED'): the LCRs go into the queue's buffered part, the slot is confirmed
only past what consumers took *and committed*; a capture that starts again stages the rest
again, leaving out what each consumer had committed.  The kill -9 test is in
test_capture_crash.py."""

from __future__ import annotations

import pytest

import sluice
from sluice.streams.capture.pgsource import Source
from tests.conftest import PG_BASE
from tests.streams.capturekit import CONSUMER, env  # noqa: F401  (fixture)


def buffered_subscriber(env, name: str) -> None:
    """A consumer of buffered messages (AQ: a subscriber's delivery mode says which it gets)."""
    env.conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(name),
                                  delivery_mode=env.conn.aqadm.PERSISTENT_OR_BUFFERED)


def buffered_capture(env, table: str = "t") -> None:
    env.conn.aqadm.remove_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
    buffered_subscriber(env, CONSUMER)
    env.sql(f"CREATE TABLE {env.src}.{table} (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", table))
    env.conn.capture_adm.set_parameter(capture_name="CAP", parameter="STAGING", value="buffered")
    env.conn.capture_adm.start_capture(capture_name="CAP")


def consumer(env, name: str = CONSUMER):
    """A session of the capture's process dequeuing the buffered LCRs as ``name``."""
    conn = sluice.connect(env.dsn)
    q = conn.queue("STRM_Q")
    q.deqoptions.consumername = name
    q.deqoptions.deliverymode = sluice.MSG_BUFFERED
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    return conn, q


def take(q, n: int | None = None) -> list:
    got = []
    while n is None or len(got) < n:
        m = q.deqone()
        if m is None:
            break
        got.append(m.payload)
    return got


def ids(lcrs) -> list[tuple[str, int]]:
    return [(x.get_command_type(), x.get_value("OLD" if x.get_command_type() == "DELETE" else "NEW",
                                               "id").access_number()) for x in lcrs]


def confirmed(env) -> int:
    spec_slot = env.view("SELECT REPLICATION_SLOT FROM DBA_CAPTURE WHERE CAPTURE_NAME = 'CAP'")[0]
    with Source(PG_BASE, "test database", None) as source:
        return source.slot(spec_slot["REPLICATION_SLOT"])[1]


def test_buffered_lcrs_reach_consumers_and_the_slot_moves_after_their_commit(env):
    buffered_capture(env)
    for i in range(3):
        env.sql(f"INSERT INTO {env.src}.t VALUES ({i}, 'x')")
    env.sql(f"UPDATE {env.src}.t SET v = 'y' WHERE id = 1", f"DELETE FROM {env.src}.t WHERE id = 2")
    proc = env.process()
    assert proc.catch_up() >= 4
    before = confirmed(env)                   # staged, nobody consumed: the slot keeps it all
    assert env.dequeue_all() == []            # nothing persistent
    conn, q = consumer(env)
    view = env.view("SELECT MSG_STATE, DELIVERY_MODE FROM AQ$STRM_QT")
    assert view == [] or {r["DELIVERY_MODE"] for r in view} == {"BUFFERED"}
    got = take(q)
    assert ids(got) == [("INSERT", 0), ("INSERT", 1), ("INSERT", 2), ("UPDATE", 1), ("DELETE", 2)]
    assert len({x.get_commit_scn() for x in got}) == 4
    assert before < got[0].get_commit_scn()
    proc.run_batch()
    assert confirmed(env) == before           # taken, not committed: the slot stays
    conn.commit()
    proc.run_batch()
    assert confirmed(env) > got[-1].get_commit_scn()
    cap = env.view("SELECT CAPTURED_SCN, APPLIED_SCN FROM DBA_CAPTURE WHERE CAPTURE_NAME = 'CAP'")[0]
    assert cap["APPLIED_SCN"] == cap["CAPTURED_SCN"] >= got[-1].get_commit_scn()
    consumed = env.view("SELECT CONSUMER, COMMIT_SCN, SCN FROM SLUICE_CAPTURE_CONSUMED")
    assert consumed == [{"CONSUMER": CONSUMER, "COMMIT_SCN": got[-1].get_commit_scn(),
                         "SCN": got[-1].get_scn()}]
    conn.close()


def test_restart_stages_again_what_was_not_committed_without_duplicates(env):
    """A consumer commits the first transaction, takes half of the second and rolls back;
    the capture starts again (its memory gone): the consumer gets the second transaction
    whole and the third, in order, and never the first again."""
    buffered_capture(env)
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')", f"INSERT INTO {env.src}.t VALUES (2, 'a')")
    env.sql(f"INSERT INTO {env.src}.t VALUES (3, 'b')", f"INSERT INTO {env.src}.t VALUES (4, 'b')")
    env.sql(f"INSERT INTO {env.src}.t VALUES (5, 'c')")
    proc = env.process()
    proc.catch_up()
    conn, q = consumer(env)
    assert ids(take(q, 2)) == [("INSERT", 1), ("INSERT", 2)]
    conn.commit()
    assert ids(take(q, 1)) == [("INSERT", 3)]
    conn.rollback()
    proc.run_batch()
    proc.stop()                                # gone, as after a crash: its memory goes too
    again = env.process()
    again.catch_up()
    got = take(q)
    assert ids(got) == [("INSERT", 3), ("INSERT", 4), ("INSERT", 5)]
    conn.commit()
    again.run_batch()
    env.sql(f"INSERT INTO {env.src}.t VALUES (6, 'd')")
    again.catch_up()
    assert ids(take(q)) == [("INSERT", 6)]
    conn.close()


def test_two_consumers_each_get_every_lcr_once_after_a_restart(env):
    """Consumers at different positions: the replay goes to the one that had not committed."""
    buffered_capture(env)
    buffered_subscriber(env, "APPLY2")
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    env.sql(f"INSERT INTO {env.src}.t VALUES (2, 'b')")
    proc = env.process()
    proc.catch_up()
    c1, q1 = consumer(env)
    c2, q2 = consumer(env, "APPLY2")
    assert ids(take(q1)) == [("INSERT", 1), ("INSERT", 2)]
    c1.commit()
    assert ids(take(q2, 1)) == [("INSERT", 1)]
    c2.commit()
    proc.run_batch()
    proc.stop()
    again = env.process()
    again.catch_up()
    assert take(q1) == []
    assert ids(take(q2)) == [("INSERT", 2)]
    c2.commit()
    again.run_batch()
    assert env.view("SELECT APPLIED_SCN FROM DBA_CAPTURE")[0]["APPLIED_SCN"] is not None
    c1.close()
    c2.close()


def test_set_parameter_staging_checks(env):
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    adm = env.conn.capture_adm
    with pytest.raises(sluice.DatabaseError, match="ORA-26667"):
        adm.set_parameter(capture_name="CAP", parameter="parallelism_x", value="1")
    with pytest.raises(sluice.DatabaseError, match="ORA-23605"):
        adm.set_parameter(capture_name="CAP", parameter="STAGING", value="SOMETIMES")
    with pytest.raises(sluice.DatabaseError, match="ORA-26701"):
        adm.set_parameter(capture_name="NOPE", parameter="STAGING", value="BUFFERED")
    env.conn.cursor().execute("BEGIN DBMS_CAPTURE_ADM.SET_PARAMETER(capture_name => 'CAP', "
                              "parameter => 'staging', value => 'BUFFERED'); END;")
    assert env.view("SELECT STAGING FROM DBA_CAPTURE")[0]["STAGING"] == "BUFFERED"
    adm.start_capture(capture_name="CAP")
    with pytest.raises(sluice.DatabaseError, match="ORA-26666"):
        adm.set_parameter(capture_name="CAP", parameter="STAGING", value=None)
    assert env.view("SELECT STAGING FROM DBA_CAPTURE")[0]["STAGING"] == "BUFFERED"
    adm.stop_capture(capture_name="CAP")
    adm.set_parameter(capture_name="CAP", parameter="STAGING", value=None)
    assert env.view("SELECT STAGING FROM DBA_CAPTURE")[0]["STAGING"] == "PERSISTENT"


def test_restart_in_the_same_process_waits_for_takes_under_way(env):
    """The host restarts a crashed capture in its process while a consumer has taken LCRs
    and not committed yet: the new run waits for that commit before it reads the
    consumers' positions, so what the consumer committed is not replayed to it."""
    import threading
    buffered_capture(env)
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    env.sql(f"INSERT INTO {env.src}.t VALUES (2, 'b')")
    proc = env.process()
    proc.catch_up()
    conn, q = consumer(env)
    assert ids(take(q, 1)) == [("INSERT", 1)]
    proc.stop()
    threading.Timer(0.3, conn.commit).start()     # commits while the new run starts
    again = env.process()
    again.catch_up()
    assert ids(take(q)) == [("INSERT", 2)]
    conn.commit()
    conn.close()


def test_spilled_lcrs_keep_their_order_and_are_staged_again_after_a_restart(env):
    """LCRs past the memory limit spill to the queue table (still buffered); a consumer gets
    spilled and in-memory ones in stream order; a capture that starts again drops its spilled
    leftovers and stages them anew from the slot — nothing twice, nothing lost."""
    from sluice.aq import buffered
    buffered_capture(env)
    for i in range(12):
        env.sql(f"INSERT INTO {env.src}.t VALUES ({i}, 'x')")
    buffered.configure(env.conn, memory_limit=4 * 1200)
    try:
        proc = env.process()
        proc.catch_up()
        spilled = env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT WHERE MSG_STATE = 'SPILLED'")[0]["N"]
        assert 0 < spilled < 12
        conn, q = consumer(env)
        assert ids(take(q, 3)) == [("INSERT", i) for i in range(3)]
        conn.commit()
        proc.stop()
        again = env.process()
        again.catch_up()
        assert ids(take(q)) == [("INSERT", i) for i in range(3, 12)]
        conn.commit()
        assert env.view("SELECT COUNT(*) AS N FROM AQ$STRM_QT WHERE MSG_STATE = 'SPILLED'")[0]["N"] == 0
        conn.close()
    finally:
        buffered.configure(env.conn, memory_limit=64 * 1024 * 1024)
