"""Propagation as a kind of Streams process of the host (DESIGN §7 "Processes"; seed 001
"Propagation Jobs": one job per schedule): the host runs each enabled schedule, delivers
what is enqueued, and lets a schedule go when it is disabled."""

from __future__ import annotations

import functools

import pytest

import sluice
from sluice.streams.host import Host
from sluice.streams.hosting import kinds

from .hostkit import wait_for
from .propkit import Sites, drain, enqueue, multi_queue


@pytest.fixture
def sites(dsn, tmp_path):
    s = Sites(dsn, tmp_path)
    yield s
    s.close()


def test_propagation_is_a_registered_kind():
    assert any(k.name == "PROPAGATION" and k.logger == "sluice.propagation" for k in kinds())


def test_the_host_runs_each_schedule_and_obeys_disable(sites):
    a, b = sites.open("dbs1"), sites.open("dbs2")
    multi_queue(a, "SRC")
    multi_queue(b, "DST")
    b.aqadm.add_subscriber("dst", sluice.Agent("APP"))
    a.cursor().execute(f"CREATE DATABASE LINK dbs2 USING '{sites.dsn_of('dbs2')}'")
    a.propagation_adm.create_propagation("p", "src", "dst", "dbs2")
    a.aqadm.alter_propagation_schedule(queue_name="src", destination="dbs2", latency=0)
    kind = [k for k in kinds() if k.name == "PROPAGATION"]
    with Host(functools.partial(sluice.connect, sites.dsn_of("dbs1")), kinds=kind) as host:
        wait_for(lambda: host.running() == [("PROPAGATION", "SLUICE.SRC=>DBS2")], 10)
        enqueue(a, "SRC", [b"one", b"two"])
        got: list = []
        wait_for(lambda: got.extend(drain(b, "DST", "APP")) or len(got) == 2, 20)
        assert sorted(m.payload for m in got) == [b"one", b"two"]
        a.aqadm.disable_propagation_schedule(queue_name="src", destination="dbs2")
        wait_for(lambda: host.running() == [], 10)
        enqueue(a, "SRC", [b"later"])
        a.aqadm.enable_propagation_schedule(queue_name="src", destination="dbs2")
        wait_for(lambda: got.extend(drain(b, "DST", "APP")) or len(got) == 3, 20)
    assert sorted(m.payload for m in got) == [b"later", b"one", b"two"]
