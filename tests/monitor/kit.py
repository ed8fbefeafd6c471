"""Helpers of the monitoring tests."""

from __future__ import annotations

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
