"""Issue 14 §3: kill -9 of the process running the propagation, and of the destination's
``sluice serve``, mid-stream, with a checker: every message enqueued at the source arrives
at the destination exactly once (0 lost, 0 duplicated), and the source keeps none.  Bounded
(a deadline), loopback only, stops by itself."""

from __future__ import annotations

import collections
import socket
import threading
import time

import pytest

import sluice

from . import propcrash
from .propkit import Sites, enqueue, multi_queue, rows

DEADLINE = 300.0                     # a bound for a slow machine; a quiet one takes far less
ROUNDS, PER_ROUND = 40, 50           # 2,000 messages enqueued while the kills happen


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _destination_counts(conn) -> collections.Counter:
    _, data = conn.query("SELECT USER_DATA FROM AQ$DST_QT", None)
    return collections.Counter(bytes(r[0]) for r in data)


def _run(sites, tmp_path, over_http: bool) -> None:
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    b.aqadm.create_queue_table(queue_table="dst_qt", queue_payload_type="RAW")
    b.aqadm.create_queue(queue_name="dst", queue_table="dst_qt")
    b.aqadm.start_queue(queue_name="dst")
    children = []
    if over_http:
        b.cursor().executescript("CREATE USER john IDENTIFIED BY welcome;\n"
                                 "BEGIN DBMS_AQADM.CREATE_AQ_AGENT(agent_name => 'JOHN', enable_http => TRUE);\n"
                                 "DBMS_AQADM.ENABLE_DB_ACCESS(agent_name => 'JOHN', db_username => 'SLUICE'); END;\n/\n")
        port = _free_port()
        children.append(propcrash.server(sites.dsn_of("dbs2"), port, str(tmp_path)).start())
        using = f"http://127.0.0.1:{port}/aqserv/servlet/AQPropServlet"
        a.cursor().execute(f"CREATE DATABASE LINK dbs2 CONNECT TO john IDENTIFIED BY welcome USING '{using}'")
    else:
        a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    a.aqadm.alter_propagation_schedule(queue_name="src", destination="dbs2", latency=0)
    deadline = time.time() + DEADLINE
    prop = propcrash.propagator(sites.dsn_of("dbs1"), str(tmp_path), 20, deadline).start()
    children.append(prop)
    done = threading.Event()
    arrived = [0]

    def moved() -> bool:
        """Messages arrived since the last kill (or all have: nothing left to cut into)."""
        try:
            with sluice.connect(sites.dsn_of("dbs2")) as watcher:    # the chaos thread's own
                n = sum(_destination_counts(watcher).values())
        except sluice.Error:        # the store busy (a server writing to it): look again later
            return False
        if n > arrived[0] or n >= ROUNDS * PER_ROUND:
            arrived[0] = n
            return True
        return False
    killer = threading.Thread(target=propcrash.chaos, args=(children, done, 8),
                              kwargs={"moved": moved}, daemon=True)
    killer.start()
    sent = []
    try:
        for r in range(ROUNDS):                       # the stream the kills cut into
            batch = [b"r%02d-%03d" % (r, i) for i in range(PER_ROUND)]
            enqueue(a, "SRC", batch)
            sent.extend(batch)
            time.sleep(0.05)
        killer.join(DEADLINE / 2)
        done.set()
        # every message at the destination, and released at the source: a sender killed
        # between the destination's commit and its source commit sends that batch again once
        # restarted (the destination de-duplicates it) -- STOP before that left it in SRC_QT
        while time.time() < deadline and (sum(_destination_counts(b).values()) < len(sent)
                                          or rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") != [(0,)]):
            time.sleep(0.2)
        (tmp_path / "STOP").write_text("")
    finally:
        done.set()
        killer.join(10)
        for child in children:
            child.stop()
    counts = _destination_counts(b)
    duplicated = {k: n for k, n in counts.items() if n > 1}
    lost = set(sent) - set(counts)
    assert not duplicated, f"{len(duplicated)} duplicated: {sorted(duplicated)[:5]}"
    assert len(counts) == len(sent) or time.time() < deadline, \
        f"the {DEADLINE:.0f} s deadline passed with {len(sent) - len(counts)} messages on the way"
    assert not lost, f"{len(lost)} lost: {sorted(lost)[:5]}"
    assert set(counts) == set(sent)
    assert rows(a, "SELECT COUNT(*) FROM AQ$SRC_QT") == [(0,)]
    assert sum(c.kills for c in children) >= 4, "the kills did not happen"


def test_kill_9_of_the_propagating_process(sites, tmp_path):
    _run(sites, tmp_path, over_http=False)


def test_kill_9_of_the_propagating_process_and_the_destination_server(sites, tmp_path):
    _run(sites, tmp_path, over_http=True)
