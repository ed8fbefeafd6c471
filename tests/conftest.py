"""Fixtures shared by the whole suite.

``dsn`` is parametrised over every backend: each behavioural test runs on each.
A backend that is listed here but unavailable makes its tests FAIL, never skip.
"""

from __future__ import annotations

import os
import uuid

import pytest

import sluice

BACKENDS = ["sqlite"]


@pytest.fixture(params=BACKENDS)
def dsn(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / ('t-' + uuid.uuid4().hex[:8] + '.db')}"
    raise AssertionError(f"unknown backend {request.param}")


@pytest.fixture
def conn(dsn):
    c = sluice.connect(dsn)
    yield c
    c.close()


@pytest.fixture
def conn2(dsn, conn):
    """A second session on the same store (another application)."""
    c = sluice.connect(dsn)
    yield c
    c.close()


def make_queue(conn, name="Q", table=None, payload="RAW", start=True, **qt_kwargs):
    """Create queue table + queue (Oracle's names), start it, return the queue name."""
    qkw = {k: qt_kwargs.pop(k) for k in ("max_retries", "retry_delay", "retention_time")
           if k in qt_kwargs}
    table = table or f"{name}_QT"
    conn.aqadm.create_queue_table(queue_table=table, queue_payload_type=payload, **qt_kwargs)
    conn.aqadm.create_queue(queue_name=name, queue_table=table, **qkw)
    if start:
        conn.aqadm.start_queue(queue_name=name)
    return name


def nowait(q, mode=None, navigation=None):
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    if mode is not None:
        q.deqoptions.mode = mode
    if navigation is not None:
        q.deqoptions.navigation = navigation
    return q


def table_rows(conn, table, cols="QUEUE, MSG_STATE, CORR_ID"):
    return conn.query(f"SELECT {cols} FROM AQ${table} ORDER BY LOCAL_ORDER_NO", None)[1]
