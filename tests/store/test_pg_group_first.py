"""A new message group's first message on PostgreSQL (seed 003 "Message Grouping"): one
statement finds the first message of a group no other session holds, takes the group's
advisory lock and locks the message's row — one round trip (``sqlops.first_of_a_group_query``;
it was three: the unlocked read, the group lock, ``lock_records``) — and takes no group lock
it does not keep.  The dequeue semantics themselves are tests/aq/test_grouping.py's, on both
stores."""

from __future__ import annotations

import pytest

import sluice
from sluice.store.sqlschema import table_name
from tests.conftest import make_queue, nowait, pg_admin
from tests.store.conftest import round_trips


def _groups(conn, *groups: tuple[str, int, int]) -> None:
    """A TRANSACTIONAL queue G with a group per (name, messages, priority), in that order:
    its messages' payloads are the name and their number, their correlation the name."""
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL, sort_list="PRIORITY,ENQ_TIME")
    q = conn.queue("G")
    for name, n, priority in groups:
        for i in range(n):
            q.enqone(conn.msgproperties(payload=b"%s%d" % (name.encode(), i), correlation=name,
                                        priority=priority))
        conn.commit()


@pytest.fixture
def conn(pg_conn):
    return pg_conn


@pytest.fixture
def conn2(pg_conn2):
    return pg_conn2


def test_a_new_groups_first_message_takes_one_round_trip(conn, conn2):
    """FIRST_MSG behind a group another session holds, and NEXT_TRANSACTION: one request
    each (the first with the transaction's BEGIN), as NEXT_MSG in the group (was: the read,
    the group lock, lock_records — and the refused group read again)."""
    _groups(conn, ("x", 2, 1), ("a", 2, 1), ("b", 1, 1))
    assert nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG).deqone().payload == b"x0"
    r = nowait(conn.queue("G"))

    def take(navigation):
        r.deqoptions.navigation = navigation
        try:
            return r.deqone().payload
        except sluice.DatabaseError as e:
            return e.full_code
    steps = [sluice.DEQ_FIRST_MSG, sluice.DEQ_NEXT_MSG, sluice.DEQ_NEXT_MSG, sluice.DEQ_NEXT_TRANSACTION]
    assert [take(n) for n in steps] == [b"a0", b"a1", "ORA-25235", b"b0"]   # (statements prepared)
    conn.rollback()
    got = [round_trips(conn, lambda: take(n)) for n in steps]
    conn.commit()
    assert [out for out, _ in got] == [b"a0", b"a1", "ORA-25235", b"b0"]
    trips = [t for _, t in got]
    assert [len(t) for t in trips] == [1, 1, 1, 1], trips
    assert trips[0][0].startswith("BEGIN+sluice_r") and "prepare" not in sum(trips, [])
    conn2.rollback()


def _group_locks(conn, groups: dict[str, str]) -> set[str]:
    """Which of ``groups`` (name: ENQ_TID) of queue G have their advisory lock held by the
    session's transaction (each group's key: the queue table's id, its ENQ_TID's hash)."""
    qt_id = conn.queue("G")._info().table.qt_id
    with pg_admin() as admin:
        held = {r[0] for r in admin.execute(
            "SELECT objid FROM pg_locks WHERE locktype = 'advisory' AND pid = %s AND classid = %s "
            "AND objsubid = 2 AND granted", (conn.context.session.sid, qt_id))}
        return {name for name, tid in groups.items()
                if admin.execute("SELECT hashtext(%s)::oid", (tid,)).fetchone()[0] in held}


def test_a_new_group_is_taken_with_no_lock_it_does_not_keep(conn, conn2):
    """Groups a correlation or a dequeue condition leaves out, and one another session holds,
    are passed over without their lock: the transaction holds the lock of the group it took
    and no other — in one round trip, a condition (SQL, its parameters psycopg's types)
    included."""
    _groups(conn, ("h", 1, 1), ("p", 1, 1), ("a", 2, 1), ("c", 1, 2))
    mine = {}
    for m in nowait(conn.queue("G"), mode=sluice.DEQ_BROWSE).deqmany(10):
        mine[m.payload[:1].decode()] = m.transaction_group
    held = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    held.deqoptions.correlation = "h"
    assert held.deqone().payload == b"h0"
    r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    for attempt in range(2):          # (the second time with the statements prepared)
        r.deqoptions.correlation = "%a%"
        m, trips = round_trips(conn, r.deqone)
        assert m.payload == b"a0" and _group_locks(conn, mine) == {"a"}
        conn.rollback()
        r.deqoptions.correlation = None
        r.deqoptions.condition = "priority = 2"
        m, trips2 = round_trips(conn, r.deqone)
        assert m.payload == b"c0" and _group_locks(conn, mine) == {"c"}
        conn.rollback()
        r.deqoptions.condition = None
    assert [len(trips), len(trips2)] == [1, 1] and trips[0].startswith("BEGIN+sluice_r") \
        and trips2[0].startswith("BEGIN+sluice_r")      # the statement, its BEGIN with it
    assert _group_locks(conn, mine) == set()
    conn2.rollback()


def test_a_multi_consumer_queues_new_group_takes_one_round_trip(conn, conn2):
    """A consumer's records of a new group: one request, the group another consumer's
    session holds skipped (groups are the queue table's: seed 003)."""
    make_queue(conn, "G", message_grouping=conn.aqadm.TRANSACTIONAL, multiple_consumers=True)
    for name in ("S1", "S2"):
        conn.aqadm.add_subscriber(queue_name="G", subscriber=sluice.Agent(name))
    q = conn.queue("G")
    for name in ("x", "a"):
        q.enqmany([conn.msgproperties(payload=b"%s%d" % (name.encode(), i)) for i in range(2)])
        conn.commit()
    other = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    other.deqoptions.consumername = "S2"
    assert other.deqone().payload == b"x0"
    r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    r.deqoptions.consumername = "S1"
    for _ in range(2):          # (the second time with the statement prepared)
        m, trips = round_trips(conn, r.deqone)
        assert m.payload == b"a0"
        conn.rollback()
    assert len(trips) == 1 and trips[0].startswith("BEGIN+sluice_r"), trips
    conn2.rollback()
    assert r.deqone().payload == b"x0"         # S1's own: the group is free
    conn.commit()


def test_a_group_whose_first_row_went_in_between_is_read_on(conn, conn2, pg_schema):
    """The statement takes a group whose row it then cannot lock (another transaction holds
    that row, or changed it since the statement's snapshot): the group is the session's,
    and the dequeue reads on in it — the next message — as the walk it replaces did; nobody
    else takes the group meanwhile."""
    _groups(conn, ("a", 2, 1), ("b", 1, 1))
    t = f'"{pg_schema}".{table_name(conn.queue("G")._info().table)}'
    with pg_admin() as outsider:
        outsider.execute("BEGIN")
        outsider.execute(f"SELECT SEQ FROM {t} WHERE USER_DATA = %s FOR UPDATE", (b"a0",))
        r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
        assert r.deqone().payload == b"a1"
        other = nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
        assert other.deqone().payload == b"b0"        # not group a: the session holds it
        outsider.execute("ROLLBACK")
    r.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    assert r.deqone().payload == b"a0"
    conn.commit()
    conn2.commit()
    assert nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG).deqone() is None


def test_an_immediate_dequeue_takes_a_new_group_in_its_own_transaction(conn, conn2):
    """An IMMEDIATE REMOVE (a transaction of its own on a pooled connection, the statement
    through psycopg's cursor) takes the first message of a free group, passing over the one
    another session holds, and leaves the rest of its group to the next dequeue."""
    _groups(conn, ("x", 1, 1), ("a", 2, 1))
    assert nowait(conn2.queue("G"), navigation=sluice.DEQ_FIRST_MSG).deqone().payload == b"x0"
    r = nowait(conn.queue("G"), navigation=sluice.DEQ_FIRST_MSG)
    r.deqoptions.visibility = sluice.DEQ_IMMEDIATE
    assert r.deqone().payload == b"a0"
    assert not conn.context.session.in_transaction
    assert r.deqone().payload == b"a1"
    assert r.deqone() is None
    conn2.rollback()
    assert r.deqone().payload == b"x0"
