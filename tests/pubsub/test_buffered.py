"""Seed 003 "Buffered Messaging", "Flow Control", buffered restrictions; seeds 001/002
buffered queues and spill (issue 6)."""

import threading
import time

import sluice
from sluice.aq import buffered
from tests.conftest import make_queue, table_rows, wait_until
from tests.sqlhelpers import raised_code

B = sluice.MSG_BUFFERED


def _bq(conn, name="Q"):
    q = conn.queue(name)
    q.enqoptions.deliverymode = B
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    q.deqoptions.deliverymode = B
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    return q


def test_buffered_round_trip_stays_in_memory(conn):
    make_queue(conn)
    q = _bq(conn)
    m = conn.msgproperties(payload=b"fast", correlation="C1", priority=2)
    q.enqone(m)
    assert m.msgid and m.deliverymode == B
    # not in the queue table; the AQ$ view shows it IN-MEMORY (seed 003)
    assert conn.query('SELECT COUNT(*) FROM Q_QT', None)[1] == [(0,)]
    assert table_rows(conn, "Q_QT", "MSG_ID, MSG_STATE, MSG_MEMORY_STATE, DELIVERY_MODE, CORR_ID, "
                      "MSG_PRIORITY") == [(m.msgid.hex().upper(), "IN-MEMORY", "IN-MEMORY", "BUFFERED", "C1", 2)]
    got = q.deqone()
    assert (got.payload, got.correlation, got.deliverymode, got.msgid) == (b"fast", "C1", B, m.msgid)
    assert q.deqone() is None


def test_buffered_and_persistent_are_separate_unless_asked_for_both(conn):
    make_queue(conn)
    conn.queue("Q").enqone(conn.msgproperties(payload=b"persistent"))
    conn.commit()
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"buffered"))
    assert [m.payload for m in [q.deqone()]] == [b"buffered"]
    assert q.deqone() is None                          # buffered only
    q.enqone(conn.msgproperties(payload=b"buffered 2"))
    p = conn.queue("Q")
    p.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert p.deqone().payload == b"persistent"           # persistent only (the default)
    p.deqoptions.deliverymode = sluice.MSG_PERSISTENT_OR_BUFFERED
    p.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert p.deqone().payload == b"buffered 2"
    conn.commit()


def test_restrictions(conn):
    make_queue(conn)
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL)
    q = _bq(conn)
    q.enqoptions.visibility = sluice.ENQ_ON_COMMIT
    assert raised_code(lambda: q.enqone(conn.msgproperties(payload=b"x"))) == "ORA-25236"
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    # Oracle: "with delay"
    assert raised_code(lambda: q.enqone(conn.msgproperties(payload=b"x", delay=5))) == "ORA-25297"
    assert raised_code(lambda: q.enqmany([conn.msgproperties(payload=b"x")] * 2)) == "SLU-00001"
    assert raised_code(lambda: _bq(conn, "G").enqone(conn.msgproperties(payload=b"x"))) == "SLU-00001"
    q.deqoptions.visibility = sluice.DEQ_ON_COMMIT
    assert raised_code(q.deqone) == "ORA-25236"
    q.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert raised_code(lambda: q.deqmany(5)) == "SLU-00001"
    assert buffered.pool_for(conn.context.store).count(conn.context.catalog.queue("Q")) == 0


def test_blocked_dequeue_wakes_on_a_buffered_enqueue(conn, conn2):
    make_queue(conn)
    waiter = _bq(conn2)
    waiter.deqoptions.wait = 5
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("m", waiter.deqone()))
    t.start()
    time.sleep(0.3)
    _bq(conn).enqone(conn.msgproperties(payload=b"ping"))
    t.join(5)
    assert got["m"].payload == b"ping"


def test_spill_past_the_memory_limit_keeps_every_message(conn):
    make_queue(conn)
    buffered.configure(conn, memory_limit=10 * 300)    # a dozen small messages fit
    q = _bq(conn)
    for i in range(25):
        q.enqone(conn.msgproperties(payload=f"m{i:02d}".encode()))
    rows = table_rows(conn, "Q_QT", "MSG_STATE, DELIVERY_MODE")
    assert set(rows) == {("SPILLED", "BUFFERED"), ("IN-MEMORY", "BUFFERED")} and len(rows) == 25
    in_memory = rows.count(("IN-MEMORY", "BUFFERED"))
    pool = buffered.pool_for(conn.context.store)
    assert 0 < in_memory == pool.count(conn.context.catalog.queue("Q")) < 25
    got = [q.deqone().payload for _ in range(25)]
    # spilled or not, they are one queue in one order (ENQ_TIME: as enqueued)
    assert got == [f"m{i:02d}".encode() for i in range(25)]
    assert q.deqone() is None and table_rows(conn, "Q_QT") == []
    buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_spilled_and_in_memory_messages_merge_in_the_priority_order(conn):
    make_queue(conn, sort_list="PRIORITY,ENQ_TIME")
    buffered.configure(conn, memory_limit=5 * 300)
    try:
        q = _bq(conn)
        sent = []
        for i in range(15):
            priority = (7 * i) % 4
            q.enqone(conn.msgproperties(payload=f"{i}".encode(), priority=priority))
            sent.append((priority, i))
        assert table_rows(conn, "Q_QT")            # some spilled
        got = [int(q.deqone().payload) for _ in range(15)]
        assert got == [i for _, i in sorted(sent)]
        assert q.deqone() is None
    finally:
        buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_spilled_and_in_memory_messages_merge_in_a_commit_time_queue(conn):
    """A commit-time queue orders by commit SCN: a spilled message has one, a message in
    memory none yet (it is later than anything spilled) — one order all the same."""
    make_queue(conn, sort_list="COMMIT_TIME")
    buffered.configure(conn, memory_limit=5 * 300)
    try:
        q = _bq(conn)
        for i in range(15):
            q.enqone(conn.msgproperties(payload=f"{i}".encode()))
        assert table_rows(conn, "Q_QT")            # some spilled
        assert [int(q.deqone().payload) for _ in range(15)] == list(range(15))
        assert q.deqone() is None
    finally:
        buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_slow_subscriber_backlog_spills_fast_one_goes_on(conn):
    conn.aqadm.create_queue_table(queue_table="T_QT", queue_payload_type="RAW", multiple_consumers=True)
    conn.aqadm.create_queue(queue_name="T", queue_table="T_QT")
    conn.aqadm.start_queue(queue_name="T")
    for name in ("FAST", "SLOW"):
        conn.aqadm.add_subscriber(queue_name="T", subscriber=sluice.Agent(name),
                                  delivery_mode=conn.aqadm.BUFFERED)
    buffered.configure(conn, memory_limit=20 * 300)
    q = _bq(conn, "T")
    fast = _bq(conn, "T")
    fast.deqoptions.consumername = "FAST"
    for i in range(40):
        q.enqone(conn.msgproperties(payload=f"{i}".encode()))
        assert fast.deqone().payload == f"{i}".encode()
    backlog = table_rows(conn, "T_QT", "CONSUMER_NAME, MSG_STATE")
    assert {r for r in backlog} == {("SLOW", "SPILLED"), ("SLOW", "IN-MEMORY")} and len(backlog) == 40
    slow = _bq(conn, "T")
    slow.deqoptions.consumername = "SLOW"
    assert [int(slow.deqone().payload) for _ in range(40)] == list(range(40))
    buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_flow_control_holds_one_sender_not_the_others(conn):
    make_queue(conn)
    buffered.configure(conn, flow_control_threshold=3, flow_control_timeout=0.5)
    q = _bq(conn)
    a, b = sluice.Agent("SENDER_A"), sluice.Agent("SENDER_B")
    for _ in range(3):
        q.enqone(conn.msgproperties(payload=b"a", sender_id=a))
    t0 = time.monotonic()
    assert raised_code(lambda: q.enqone(conn.msgproperties(payload=b"a", sender_id=a))) == "ORA-25307"
    assert time.monotonic() - t0 >= 0.4
    q.enqone(conn.msgproperties(payload=b"b", sender_id=b))     # another sender is not held
    q.deqone()                                                  # resolve: dequeue one of A's
    q.enqone(conn.msgproperties(payload=b"a", sender_id=a))
    buffered.configure(conn, flow_control_threshold=10_000, flow_control_timeout=5.0)


def test_expired_buffered_message_becomes_a_persistent_exception(conn):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"old", expiration=0))
    assert q.deqone() is None
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, DELIVERY_MODE") == [
        ("AQ$_Q_QT_E", "EXPIRED", "PERSISTENT")]


def test_locked_buffered_message_is_skipped_by_others_until_commit(conn, conn2):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"1"))
    q.enqone(conn.msgproperties(payload=b"2"))
    q.deqoptions.mode = sluice.DEQ_LOCKED
    assert q.deqone().payload == b"1"
    other = _bq(conn2)
    assert other.deqone().payload == b"2"
    assert other.deqone() is None
    conn.commit()
    assert other.deqone().payload == b"1"


def test_buffered_messages_leave_in_the_queue_tables_sort_order(conn):
    make_queue(conn, sort_list="PRIORITY,ENQ_TIME")
    q = _bq(conn)
    for p in (3, 1, 2, 1):
        q.enqone(conn.msgproperties(payload=f"p{p}".encode(), priority=p))
    assert [q.deqone().payload for _ in range(4)] == [b"p1", b"p1", b"p2", b"p3"]
    assert q.deqone() is None


def test_browse_walks_buffered_messages_then_remove_takes_the_first(conn):
    make_queue(conn)
    q = _bq(conn)
    for i in range(3):
        q.enqone(conn.msgproperties(payload=f"{i}".encode()))
    q.deqoptions.mode = sluice.DEQ_BROWSE
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert [q.deqone().payload for _ in range(3)] == [b"0", b"1", b"2"]
    assert q.deqone() is None
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert q.deqone().payload == b"0"
    assert buffered.pool_for(conn.context.store).count(conn.context.catalog.queue("Q")) == 2


def test_messages_waiting_past_spill_after_spill_on_the_next_enqueue(conn):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"old"))
    buffered.configure(conn, spill_after=0.05)
    try:
        time.sleep(0.1)
        q.enqone(conn.msgproperties(payload=b"new"))
        assert sorted(table_rows(conn, "Q_QT", "MSG_STATE")) == [("IN-MEMORY",), ("SPILLED",)]
        assert [q.deqone().payload for _ in range(2)] == [b"old", b"new"]
        assert q.deqone() is None
    finally:
        buffered.configure(conn, spill_after=300.0)


def test_in_memory_messages_show_in_the_aq_view_of_this_process_only(conn, conn2):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"one", correlation="A"))
    q.enqone(conn.msgproperties(payload=b"two", correlation="B"))
    cur = conn.cursor()
    cur.execute("SELECT corr_id, msg_state FROM aq$q_qt WHERE corr_id = :c", {"c": "B"})
    assert cur.fetchall() == [("B", "IN-MEMORY")]
    # the other connection of this process sees them too (one pool per store and process)
    assert sorted(table_rows(conn2, "Q_QT", "CORR_ID, MSG_STATE")) == [("A", "IN-MEMORY"), ("B", "IN-MEMORY")]
    assert q.deqone().payload == b"one"
    assert table_rows(conn, "Q_QT", "CORR_ID, MSG_STATE") == [("B", "IN-MEMORY")]
    assert q.deqone().payload == b"two"
    assert table_rows(conn, "Q_QT") == []


def test_repeated_buffered_operations_still_see_queue_and_privilege_changes(conn, dsn):
    """After the first call, a Queue's plain buffered enqueue and dequeue skip the checks
    that hold until the catalog changes; a stopped queue or a revoked privilege must
    still be refused at once, with nothing kept in memory."""
    from tests.security.conftest import create_user, login
    make_queue(conn)
    create_user(conn, "BUF_U", "EXECUTE ON DBMS_AQ")
    conn.aqadm.grant_queue_privilege(privilege="ALL", queue_name="Q", grantee="BUF_U")
    with login(dsn, "BUF_U") as user:
        q = _bq(user, f"{conn.username}.Q")
        for i in range(3):
            q.enqone(user.msgproperties(payload=b"%d" % i))
        assert q.deqone().payload == b"0"
        assert q.deqone().payload == b"1"
        conn.aqadm.stop_queue(queue_name="Q", enqueue=True, dequeue=False)
        assert raised_code(lambda: q.enqone(user.msgproperties(payload=b"no"))) == "ORA-25207"
        assert q.deqone().payload == b"2"
        conn.aqadm.stop_queue(queue_name="Q", enqueue=False, dequeue=True)
        assert raised_code(lambda: q.deqone()) == "ORA-25226"
        conn.aqadm.start_queue(queue_name="Q")
        q.enqone(user.msgproperties(payload=b"3"))
        conn.aqadm.revoke_queue_privilege(privilege="ENQUEUE", queue_name="Q", grantee="BUF_U")
        assert raised_code(lambda: q.enqone(user.msgproperties(payload=b"no"))) == "ORA-01031"
        assert q.deqone().payload == b"3"
        conn.aqadm.revoke_queue_privilege(privilege="DEQUEUE", queue_name="Q", grantee="BUF_U")
        q.deqoptions.wait = sluice.DEQ_NO_WAIT
        assert raised_code(lambda: q.deqone()) == "ORA-01031"
        assert buffered.pool_for(user.context.store).count(user.queue(q.name)._info()) == 0
        user.close()
        assert raised_code(lambda: q.enqone(user.msgproperties(payload=b"closed"))) == "DPY-1001"


def test_a_sender_or_an_expiration_set_after_plain_messages_is_honoured(conn):
    """The fast path takes plain messages only; the next message's own properties still count."""
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"plain"))
    q.enqone(conn.msgproperties(payload=b"plain 2"))
    q.enqone(conn.msgproperties(payload=b"from A", sender_id=sluice.Agent("A")))
    q.enqone(conn.msgproperties(payload=b"gone", expiration=0))
    assert raised_code(lambda: q.enqone(conn.msgproperties(payload=b"late", delay=5))) == "ORA-25297"
    got = [q.deqone() for _ in range(4)]
    assert [m.payload if m else None for m in got] == [b"plain", b"plain 2", b"from A", None]
    assert got[2].sender_id.name == "A"
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE") == [("AQ$_Q_QT_E", "EXPIRED")]


def test_a_failed_spill_keeps_the_messages_in_memory(conn, monkeypatch, caplog):
    """Spilling writes to the queue table; when that fails (a full disk, a lost server) the
    messages it took out of memory go back, the enqueue that triggered it still succeeds,
    and the next enqueue spills them."""
    make_queue(conn)
    buffered.configure(conn, memory_limit=5 * 300)
    q = _bq(conn)
    session = conn.context.session
    real_enqueue = session.enqueue

    def failing(queue, records, immediate):
        raise sluice.DatabaseError("ORA-01653: unable to extend table", 1653)
    monkeypatch.setattr(session, "enqueue", failing)
    try:
        for i in range(12):
            q.enqone(conn.msgproperties(payload=f"m{i:02d}".encode()))
    finally:
        monkeypatch.setattr(session, "enqueue", real_enqueue)
    assert "spilling them failed" in caplog.text
    pool = buffered.pool_for(conn.context.store)
    assert pool.count(conn.context.catalog.queue("Q")) == 12 and table_rows(conn, "Q_QT", "MSG_STATE") == \
        [("IN-MEMORY",)] * 12
    q.enqone(conn.msgproperties(payload=b"m12"))       # the store works again: the backlog spills
    assert ("SPILLED",) in table_rows(conn, "Q_QT", "MSG_STATE")
    assert [q.deqone().payload for _ in range(13)] == [f"m{i:02d}".encode() for i in range(13)]
    assert q.deqone() is None
    buffered.configure(conn, memory_limit=64 * 1024 * 1024)


def test_an_expired_message_stays_until_the_exception_queue_takes_it(conn, monkeypatch):
    make_queue(conn)
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=b"old", expiration=0))
    session = conn.context.session
    real_enqueue = session.enqueue

    def failing(queue, records, immediate):
        raise sluice.DatabaseError("ORA-01653: unable to extend table", 1653)
    monkeypatch.setattr(session, "enqueue", failing)
    assert q.deqone() is None
    monkeypatch.setattr(session, "enqueue", real_enqueue)
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("IN-MEMORY",)]   # not lost
    assert q.deqone() is None
    assert table_rows(conn, "Q_QT", "QUEUE, MSG_STATE, DELIVERY_MODE") == [
        ("AQ$_Q_QT_E", "EXPIRED", "PERSISTENT")]


def test_a_browsed_message_is_removed_by_its_msgid_and_the_browse_goes_on(conn):
    """Seed 003 lists "Message identifier" among the dequeue options of buffered messages:
    a dequeue by msgid takes that message wherever the session's browse position is, and
    leaves the position alone — the browse goes on after the message it last showed."""
    make_queue(conn)
    q = _bq(conn)
    sent = [conn.msgproperties(payload=b"%d" % i) for i in range(4)]
    for m in sent:
        q.enqone(m)
    q.deqoptions.mode = sluice.DEQ_BROWSE
    q.deqoptions.navigation = sluice.DEQ_NEXT_MSG
    assert [q.deqone().payload for _ in range(2)] == [b"0", b"1"]
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.msgid = sent[1].msgid             # behind the position: still found
    assert q.deqone().payload == b"1"
    q.deqoptions.msgid = sent[3].msgid             # ahead of it: taken, the position stays
    assert q.deqone().payload == b"3"
    q.deqoptions.msgid = None
    q.deqoptions.mode = sluice.DEQ_BROWSE
    assert q.deqone().payload == b"2"               # the browse goes on after "1"
    assert q.deqone() is None
    q.deqoptions.mode = sluice.DEQ_REMOVE
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert [q.deqone().payload, q.deqone().payload] == [b"0", b"2"] and q.deqone() is None


def test_a_buffered_dequeue_that_cannot_read_its_message_takes_nothing(conn):
    """A buffered message has no transaction to undo its dequeue: a dequeue transformation
    that raised lost it, in memory or spilled.  It is read before it is gone now; the
    message stays where it was, for the next dequeue."""
    make_queue(conn)
    sluice.register_function("sluice.failing_buffered", lambda payload: 1 / 0)
    conn.transform.create_transformation(schema="sluice", name="failing", from_schema="sys",
                                         from_type="RAW", to_schema="sys", to_type="RAW",
                                         transformation="sluice.failing_buffered(source.user_data)")
    q = _bq(conn)
    buffered.configure(conn, memory_limit=1)         # these two spill
    try:
        for i in range(2):
            q.enqone(conn.msgproperties(payload=b"spilled %d" % i))
    finally:
        buffered.configure(conn, memory_limit=64 * 1024 * 1024)
    q.enqone(conn.msgproperties(payload=b"in memory"))
    assert sorted(table_rows(conn, "Q_QT", "MSG_STATE")) == [("IN-MEMORY",), ("SPILLED",), ("SPILLED",)]
    q.deqoptions.transformation = "failing"
    for _ in range(2):
        assert raised_code(q.deqone) == "ORA-25229"
    q.deqoptions.transformation = None
    assert q.deqone().payload == b"spilled 0"        # the spilled one stayed in the table
    q.deqoptions.transformation = "failing"
    assert raised_code(q.deqone) == "ORA-25229"
    q.deqoptions.transformation = None
    assert q.deqone().payload == b"spilled 1"
    q.deqoptions.transformation = "failing"
    assert raised_code(q.deqone) == "ORA-25229"            # the one in memory stays in memory
    q.deqoptions.transformation = None
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("IN-MEMORY",)]
    assert q.deqone().payload == b"in memory" and q.deqone() is None


def test_reading_the_aq_view_of_buffered_messages_does_not_hold_the_queue_table(conn, conn2):
    """The AQ$ view shows the messages in memory through a temporary view of the session's
    connection; on PostgreSQL that view depended on the queue table and outlived the
    query, so DROP_QUEUE_TABLE failed ("other objects depend on it") until the session
    that had read the view closed."""
    make_queue(conn)
    _bq(conn).enqone(conn.msgproperties(payload=b"in memory", correlation="M"))
    for _ in range(2):       # (read twice: the second read makes its objects anew)
        assert table_rows(conn2, "Q_QT", "CORR_ID, MSG_STATE") == [("M", "IN-MEMORY")]
    assert conn2.cursor().execute("SELECT corr_id FROM aq$q_qt").fetchall() == [("M",)]
    conn.aqadm.drop_queue_table(queue_table="Q_QT", force=True)
    assert conn.query("SELECT COUNT(*) FROM user_queue_tables WHERE queue_table = 'Q_QT'", None)[1] == [(0,)]


def test_dropping_a_queue_drops_its_buffered_messages(conn):
    """DROP_QUEUE and DROP_QUEUE_TABLE delete the queue's messages: its buffered ones in
    memory stayed, so a queue made again under the name delivered them."""
    make_queue(conn)
    buffered.configure(conn, flow_control_threshold=3, flow_control_timeout=0.2)
    try:
        q = _bq(conn)
        for i in range(3):
            q.enqone(conn.msgproperties(payload=b"old %d" % i))
        conn.aqadm.stop_queue(queue_name="Q")
        conn.aqadm.drop_queue(queue_name="Q")
        conn.aqadm.create_queue(queue_name="Q", queue_table="Q_QT")
        conn.aqadm.start_queue(queue_name="Q")
        q = _bq(conn)
        assert q.deqone() is None and table_rows(conn, "Q_QT") == []
        for i in range(3):         # the dropped messages no longer count against flow control
            q.enqone(conn.msgproperties(payload=b"new %d" % i))
        conn.aqadm.drop_queue_table(queue_table="Q_QT", force=True)
        make_queue(conn)
        q = _bq(conn)
        assert q.deqone() is None and table_rows(conn, "Q_QT") == []
        assert buffered.pool_for(conn.context.store).count(conn.context.catalog.queue("Q")) == 0
    finally:
        buffered.configure(conn, flow_control_threshold=10_000, flow_control_timeout=5.0)


def test_an_expired_spilled_message_reaches_the_exception_queue_as_persistent(conn):
    """Seed 003 "Error Handling": an expired buffered message "is moved into the exception
    queue as a persistent message" — a spilled one kept its BUFFERED mode there when the
    time manager moved it, and a default (persistent) dequeue of the exception queue did
    not find it."""
    make_queue(conn)
    buffered.configure(conn, memory_limit=1)
    try:
        _bq(conn).enqone(conn.msgproperties(payload=b"late", expiration=1))
    finally:
        buffered.configure(conn, memory_limit=64 * 1024 * 1024)
    assert table_rows(conn, "Q_QT", "MSG_STATE") == [("SPILLED",)]
    assert wait_until(lambda: table_rows(conn, "Q_QT", "QUEUE")[0] == ("AQ$_Q_QT_E",), timeout=10)
    assert table_rows(conn, "Q_QT", "MSG_STATE, DELIVERY_MODE, EXPIRATION_REASON") == [
        ("EXPIRED", "PERSISTENT", "TIME_EXPIRATION")]
    conn.aqadm.start_queue(queue_name="AQ$_Q_QT_E", enqueue=False, dequeue=True)
    e = conn.queue("AQ$_Q_QT_E")
    e.deqoptions.wait = sluice.DEQ_NO_WAIT
    got = e.deqone()
    assert (got.payload, got.deliverymode, got.state) == (b"late", sluice.MSG_PERSISTENT, sluice.MSG_EXPIRED)
    conn.commit()


def test_a_sender_held_by_flow_control_stops_at_cancel_and_at_close(conn, dsn):
    """A sender held by flow control waits as a dequeue does: Connection.cancel() ends the
    wait with ORA-01013 and Connection.close() from another thread with DPY-1001.  Both
    were ignored: the sender stayed held until the flow-control timeout (ORA-25307)."""
    make_queue(conn)
    buffered.configure(conn, flow_control_threshold=1, flow_control_timeout=5.0)
    sender = sluice.connect(dsn)
    try:
        q = _bq(sender)
        q.enqone(sender.msgproperties(payload=b"first"))
        for stop, code in ((sender.cancel, "ORA-01013"), (sender.close, "DPY-1001")):
            result = {}

            def held():
                t0 = time.monotonic()
                result["code"] = raised_code(lambda: q.enqone(sender.msgproperties(payload=b"held")))
                result["waited"] = time.monotonic() - t0
            t = threading.Thread(target=held)
            t.start()
            time.sleep(0.3)
            stop()
            t.join(5)
            assert not t.is_alive() and result["code"] == code and result["waited"] < 2, result
        assert [m.payload for m in iter(_bq(conn).deqone, None)] == [b"first"]
    finally:
        sender.close()
        buffered.configure(conn, flow_control_threshold=10_000, flow_control_timeout=5.0)


def test_browse_and_locked_walk_spilled_and_in_memory_messages_once_each(conn, conn2):
    """Seed 003 lists BROWSE and LOCKED with NEXT_MESSAGE among the dequeue options of
    buffered messages.  Over spilled messages they went wrong: BROWSE showed memory's
    messages, then the first spilled one, then memory's again — for ever, never the other
    spilled ones — and LOCKED returned the first spilled message again and again.  Now
    one walk in the queue's order across the table and memory, each message once, and
    the walk starts over after the end (as a persistent browse does)."""
    make_queue(conn)
    q = _bq(conn)
    buffered.configure(conn, memory_limit=2 * 300)     # the oldest three spill
    try:
        for i in range(5):
            q.enqone(conn.msgproperties(payload=b"%d" % i))
    finally:
        buffered.configure(conn, memory_limit=64 * 1024 * 1024)
    assert sorted(table_rows(conn, "Q_QT", "MSG_STATE")) == [("IN-MEMORY",)] * 2 + [("SPILLED",)] * 3
    everything = [b"%d" % i for i in range(5)]

    def walk(queue):
        out = []
        for _ in range(12):      # (bounded: the bug never ended)
            m = queue.deqone()
            if m is None:
                return out
            out.append(m.payload)
        return out
    q.deqoptions.mode, q.deqoptions.navigation = sluice.DEQ_BROWSE, sluice.DEQ_NEXT_MSG
    assert walk(q) == everything
    assert walk(q) == everything                      # from the start again
    q.deqoptions.mode = sluice.DEQ_LOCKED
    assert walk(q) == everything
    assert _bq(conn2).deqone() is None                # all five locked by the walker
    conn.rollback()
    q.deqoptions.mode, q.deqoptions.navigation = sluice.DEQ_REMOVE, sluice.DEQ_FIRST_MSG
    assert walk(_bq(conn2)) == everything
    assert table_rows(conn, "Q_QT") == []


def test_buffered_messages_of_an_object_type_must_leave_its_lob_attributes_null(conn):
    """Seed 003 "Enqueuing Buffered Messages": "For ADT types with LOB attributes, only
    buffered messages with null LOB attributes can be enqueued" (ORA-25293) — they were
    taken, LOBs and all."""
    conn.cursor().execute("CREATE TYPE doc_t AS OBJECT (id NUMBER, body CLOB, pic BLOB)")
    conn.cursor().execute("CREATE TYPE wrapper_t AS OBJECT (doc doc_t)")
    make_queue(conn, payload="DOC_T")
    make_queue(conn, "W", payload="WRAPPER_T")
    doc_t = conn.gettype("DOC_T")

    def doc(i, **lobs):
        d = doc_t.newobject()
        d.ID = i
        for name, value in lobs.items():
            setattr(d, name, value)
        return d
    q = _bq(conn)
    q.enqone(conn.msgproperties(payload=doc(1)))            # null LOBs: taken
    for lobs in ({"BODY": "text"}, {"PIC": b"\x00"}):
        for queue in (q, _bq(conn)):                        # (a used Queue and a new one)
            assert raised_code(lambda: queue.enqone(conn.msgproperties(payload=doc(2, **lobs)))) == "ORA-25293"
    w = conn.gettype("WRAPPER_T").newobject()
    w.DOC = doc(3, BODY="nested")
    assert raised_code(lambda: _bq(conn, "W").enqone(conn.msgproperties(payload=w))) == "ORA-25293"
    got = q.deqone()
    assert got.payload.ID == 1 and q.deqone() is None
    p = conn.queue("Q")                                     # persistent ones may carry LOBs
    p.enqone(conn.msgproperties(payload=doc(4, BODY="text")))
    conn.commit()
