"""Helpers of the monitoring tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import sluice

from ..conftest import make_queue
from ..streams.propkit import multi_queue


def two_sites(sites, destination=make_queue):
    """DBS1 with multi-consumer queue SRC propagating (P1, queue to queue) to DST at DBS2
    (made by ``destination``: a single-consumer queue by default)."""
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    destination(b, "DST")
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p1", "src", "dst", "dbs2", queue_to_queue=True)
    return a, b


def buffered_queue(conn):
    """Multi-consumer queue BQ with buffered subscribers B1 and B2; its Queue, enqueuing
    buffered messages."""
    multi_queue(conn, "BQ")
    for name in ("B1", "B2"):
        conn.aqadm.add_subscriber("BQ", sluice.Agent(name), delivery_mode=sluice.MSG_BUFFERED)
    q = conn.queue("BQ")
    q.enqoptions.deliverymode = sluice.MSG_BUFFERED
    q.enqoptions.visibility = sluice.ENQ_IMMEDIATE
    return q


def spill_all(conn, queue: str = "BQ") -> None:
    """Spill every buffered message of ``queue`` in this process's memory to its table now."""
    from sluice.aq import buffered
    limits = buffered.configure(conn)
    before = limits.spill_after
    buffered.configure(conn, spill_after=0)
    try:
        pool = buffered.existing_pool(conn.context.store)
        pool.spill_old(conn.context.catalog.find_queue("SLUICE", queue),
                       conn.queue(queue)._buffered_endpoint().spill)
    finally:
        buffered.configure(conn, spill_after=before)


_CHILD = textwrap.dedent("""
    import sys, sluice
    conn = sluice.connect(sys.argv[1])
    q = conn.queue("Q")
    for i in range(int(sys.argv[2])):
        q.enqone(conn.msgproperties(payload=b"m"))
    conn.commit()
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    got = len(q.deqmany(int(sys.argv[3])))
    conn.commit()
    conn.close()
    print(got)
""")


def mover_process(dsn: str, enqueue: int, dequeue: int) -> subprocess.Popen:
    """Another process on the store ``dsn``: it enqueues ``enqueue`` messages into Q, commits,
    dequeues up to ``dequeue`` of them, commits and prints how many it took."""
    env = dict(os.environ)
    src = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, "-c", _CHILD, dsn, str(enqueue), str(dequeue)],
                            stdout=subprocess.PIPE, text=True, env=env)
