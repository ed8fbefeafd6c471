"""What the dashboard draws, made from monitoring snapshots of a store and of the sites
its links name (``sluice.dashboard.view``), on both backends: the topology with the other
site's queue, depths and the oldest message's age, the propagation's counter moving with
the flow, a failing schedule's edges turning to warn with the error as their note, and a
linked site that cannot be read shown as such."""

from __future__ import annotations

import time

import pytest

from sluice.dashboard.history import History
from sluice.dashboard.view import reader
from sluice.streams.propagation.runner import PropagationRunner
from tests.conftest import make_queue
from tests.monitor.kit import mover_process
from tests.streams.propkit import Sites, enqueue, multi_queue


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def edges(r):
    return {(e["from"], e["to"]): e for e in r["edges"]}


def test_two_sites_depths_and_flow(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    make_queue(b, "DST")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p1", "src", "dst", "dbs2")
    enqueue(a, "SRC", [b"one", b"two"])
    read = reader(a)
    time.sleep(0.05)
    r = read()
    assert r["site"] == "DBS1"
    ids = {n["id"]: n for n in r["nodes"]}
    assert {"queue:SLUICE.SRC@DBS1", "propagation:P1@DBS1", "queue:SLUICE.DST@DBS2"} <= set(ids)
    assert ids["queue:SLUICE.DST@DBS2"]["site"] == "DBS2" and ids["propagation:P1@DBS1"]["health"] == "ok"
    e = edges(r)
    assert e[("queue:SLUICE.SRC@DBS1", "propagation:P1@DBS1")]["counter"] == "prop:propagation:P1@DBS1"
    assert ("propagation:P1@DBS1", "queue:SLUICE.DST@DBS2") in e
    src = next(q for q in r["queues"] if q["id"] == "queue:SLUICE.SRC@DBS1")
    assert src["ready"] == 2 and src["oldest_age"] > 0
    assert r["gauges"]["depth:queue:SLUICE.SRC@DBS1"] == 2 and r["gauges"]["lag:propagation:P1@DBS1"] > 0
    assert r["counters"]["prop:propagation:P1@DBS1"] == 0
    assert r["counters"]["enq:queue:SLUICE.SRC@DBS1"] >= 2          # this process enqueued them
    assert PropagationRunner(a).run_once(force=True) == 2
    r = read()
    assert r["counters"]["prop:propagation:P1@DBS1"] == 2
    assert r["gauges"]["depth:queue:SLUICE.SRC@DBS1"] == 0
    assert r["gauges"]["depth:queue:SLUICE.DST@DBS2"] == 2


def test_failing_schedule_and_unreadable_site(sites, tmp_path):
    a = sites.open("dbs1")
    multi_queue(a, "SRC")
    sites.open("dbs2")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    # queue-to-queue: a missing queue stops it (queue-to-dblink would mark the message UNDELIVERABLE)
    a.propagation_adm.create_propagation("p1", "src", "no_such_queue", "dbs2", queue_to_queue=True)
    enqueue(a, "SRC", [b"x"])
    PropagationRunner(a).run_once(force=True)
    a.cursor().execute(f"CREATE DATABASE LINK gone USING 'sqlite:///{tmp_path}/no/such/dir/x.db'")
    r = reader(a)()
    e = edges(r)[("queue:SLUICE.SRC@DBS1", "propagation:P1@DBS1")]
    assert e["health"] == "warn" and "backing off" in e["note"] and "ORA-24010" in e["note"]
    unreadable = next(n for n in r["nodes"] if n["site"] == "GONE")
    assert unreadable["id"] == "site:GONE" and unreadable["health"] == "idle" and unreadable["detail"]


def test_queue_card_rates_are_the_store_s_another_process_s_included(conn, dsn):
    """The cards' in / out rates come from the store's totals (V$PERSISTENT_QUEUES), so what
    another process enqueued and dequeued shows, not only what the serving process moved."""
    make_queue(conn)
    conn.commit()
    read, h = reader(conn), History(interval=1.0)
    h.add(read(), now=100.0)
    other = mover_process(dsn, 6, 2)
    assert other.communicate(timeout=120)[0].strip() == "2" and other.returncode == 0
    h.add(read(), now=102.0)
    card = next(q for q in h.latest["queues"] if q["name"] == "SLUICE.Q")
    assert (h.latest["rates"][card["enq_key"]], h.latest["rates"][card["deq_key"]]) == (3.0, 1.0)
    assert (h.since(101.0)[0]["enq"], h.since(101.0)[0]["deq"]) == (3.0, 1.0)    # the charts' ring
