"""Helpers of the monitoring tests."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

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
