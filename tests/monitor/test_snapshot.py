"""Issue 17: the monitoring snapshot (sluice.monitor.snapshot) on both backends — depths,
totals, processes and topology, read with a fixed number of statements."""

from __future__ import annotations

import pytest

import sluice
from sluice.monitor import snapshot
from sluice.streams.propagation.runner import PropagationRunner

from ..conftest import make_queue
from ..security.conftest import create_user, login
from ..streams.propkit import enqueue, multi_queue
from .kit import two_sites


def test_queue_depths_and_totals_move_with_traffic(conn):
    make_queue(conn, "Q")
    multi_queue(conn, "MQ")
    conn.aqadm.add_subscriber("MQ", sluice.Agent("S1"))
    conn.aqadm.add_subscriber("MQ", sluice.Agent("S2"))
    before = snapshot.take(conn)
    assert (before.queue("SLUICE.Q").ready, before.queue("SLUICE.Q").oldest_age) == (0, None)
    q = conn.queue("Q")
    q.enqmany([conn.msgproperties(payload=b"x") for _ in range(3)])
    q.enqone(conn.msgproperties(payload=b"later", delay=3600))
    conn.queue("MQ").enqone(conn.msgproperties(payload=b"y"))
    conn.commit()
    s = snapshot.take(conn)
    qs = s.queue("SLUICE.Q")
    assert (qs.ready, qs.waiting, qs.expired, qs.enqueued, qs.dequeued) == (3, 1, 0, 4, 0)
    assert qs.oldest_age is not None and qs.oldest_age >= 0 and qs.average_wait >= 0
    mq = s.queue("SLUICE.MQ")
    # V$AQ counts the message once, as Oracle does (a record per subscriber: once each)
    assert mq.multiple_consumers and (mq.ready, mq.enqueued) == (1, 1)
    assert [(c.name, c.ready) for c in mq.consumers] == [("S1", 1), ("S2", 1)]
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    assert len(q.deqmany(10)) == 3
    conn.commit()
    after = snapshot.take(conn).queue("SLUICE.Q")
    assert (after.ready, after.waiting, after.dequeued) == (0, 1, 3)
    assert after.oldest_age is None


def test_dropping_a_queue_table_leaves_the_depth_view_working(conn):
    make_queue(conn, "GONE")
    make_queue(conn, "KEPT")
    enqueue(conn, "KEPT", [b"k"])
    conn.aqadm.stop_queue("GONE")
    conn.aqadm.drop_queue("GONE")
    conn.aqadm.drop_queue_table("GONE_QT")
    s = snapshot.take(conn)
    assert s.queue("SLUICE.GONE") is None and s.queue("SLUICE.KEPT").ready == 1


def test_a_fixed_number_of_statements_whatever_the_queues(conn):
    seen = []
    real = conn.context.session.query

    def counting(sql, binds, *a, **kw):
        seen.append(sql)
        return real(sql, binds, *a, **kw)
    conn.context.session.query = counting
    make_queue(conn, "Q0")
    snapshot.take(conn)
    one = len(seen)
    for i in range(1, 12):
        make_queue(conn, f"Q{i}")
    seen.clear()
    s = snapshot.take(conn)
    assert len(seen) == one == len(snapshot.STATEMENTS)
    assert len([q for q in s.queues if q.queue_type == "NORMAL_QUEUE"]) == 12


def test_topology_and_streams_processes_of_two_sites(sites):
    a, b = two_sites(sites, multi_queue)
    b.apply_adm.create_apply(queue_name="dst", apply_name="app1")
    enqueue(a, "SRC", [b"m1", b"m2", b"m3"])
    s = snapshot.take(a)
    (p,) = s.propagations
    assert (p.name, p.source_queue, p.destination_queue, p.site) == ("P1", "SLUICE.SRC", "SLUICE.DST", "DBS2")
    assert (p.backlog, p.propagated, p.failures, p.backing_off) == (3, 0, 0, False)
    assert p.lag_seconds is not None
    assert ("propagation", "queue:SLUICE.SRC@DBS1", "queue:SLUICE.DST@DBS2", "P1") in {
        (k.kind, k.source, k.target, k.process) for k in s.links}
    assert PropagationRunner(a).run_once(force=True) == 3
    p = snapshot.take(a).propagations[0]
    assert (p.backlog, p.propagated, p.lag_seconds) == (0, 3, None)
    sb = snapshot.take(b)
    (ap,) = sb.applies
    assert (ap.name, ap.queue, ap.status, ap.backlog, ap.error_queue) == ("APP1", "SLUICE.DST", "DISABLED", 3, 0)
    assert ("apply", "queue:SLUICE.DST@DBS2", "apply:APP1", "APP1") in {
        (k.kind, k.source, k.target, k.process) for k in sb.links}
    assert sb.queue("SLUICE.DST").ready == 3


def test_monitor_privilege_and_select_catalog_role(dsn):
    admin = sluice.connect(dsn)
    try:
        create_user(admin, "WATCHER", "MONITOR")
        create_user(admin, "CATALOG", "SELECT_CATALOG_ROLE")
        create_user(admin, "NOBODY")
        for name in ("WATCHER", "CATALOG"):
            c = login(dsn, name)
            c.context.authz.check_monitor()
            c.close()
        c = login(dsn, "NOBODY")
        with pytest.raises(sluice.DatabaseError, match="ORA-01031"):
            c.context.authz.check_monitor()
        c.close()
        admin.cursor().execute("REVOKE MONITOR FROM WATCHER")
        c = login(dsn, "WATCHER")
        with pytest.raises(sluice.DatabaseError, match="ORA-01031"):
            c.context.authz.check_monitor()
        c.close()
    finally:
        admin.close()


def test_a_snapshot_needs_an_open_connection(dsn):
    """take(None), take(5) or take(pool) failed with AttributeError ('… has no attribute
    context'); now InterfaceError, as a closed connection's DPY-1001 is."""
    pool = sluice.create_pool(dsn, min=0, max=1)
    try:
        for wrong in (None, 5, pool, "sqlite:///x.db"):
            with pytest.raises(sluice.InterfaceError, match=r"taken through a sluice\.Connection, not "):
                snapshot.take(wrong)
        with pool.acquire() as lent:                   # a pool's connection is a connection
            assert snapshot.take(lent).site
    finally:
        pool.close()
    conn = sluice.connect(dsn)
    conn.close()
    with pytest.raises(sluice.InterfaceError, match="DPY-1001"):
        snapshot.take(conn)
