"""The SQLite store's catalog version (the shared counter in ``<db>.lck`` that tells every
process's caches to reload): each catalog change is announced once, by the process that
committed it — or, when that process died between its COMMIT and its announcement, by
the backstop every time manager pass runs (``SqliteStore.check_catalog``).

The backstop used to announce again every change made since its previous pass, though
its process had announced it: a spurious bump a second after each DDL, which made a
pipelined propagation run in that second read its next batch from the queue's start
(job._hint: a catalog change may change the routes)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

import sluice

from ..conftest import make_queue


@pytest.fixture
def site(tmp_path):
    """``(connection, its SQLite store, the file)``: a queue made, every change announced."""
    path = tmp_path / "cat.db"
    conn = sluice.connect(f"sqlite:///{path}")
    make_queue(conn)
    conn.context.store.check_catalog()
    yield conn, conn.context.store, path
    conn.close()


def test_a_catalog_change_is_announced_once(site):
    conn, store, _ = site
    before = store.catalog_version()
    conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
    assert store.catalog_version() == before + 1
    store.run_time_manager(time.time())     # a time manager pass (it checks the catalog first)
    assert store.catalog_version() == before + 1


def test_a_change_another_process_announced_is_not_announced_again(site):
    _, store, path = site
    before = store.catalog_version()
    out = subprocess.run([sys.executable, "-c", f"""
import sluice
with sluice.connect({f"sqlite:///{path}"!r}) as c:
    c.aqadm.create_queue_table(queue_table="OTHER_QT", queue_payload_type="RAW")
"""], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert store.catalog_version() == before + 1      # the other process's announcement
    store.check_catalog()
    assert store.catalog_version() == before + 1


def test_a_change_its_process_died_before_announcing_is_announced_by_the_backstop(site):
    """The DDL committed, its process was killed before its bump: the next check announces it."""
    _, store, path = site
    before = store.catalog_version()
    raw = sqlite3.connect(str(path), isolation_level=None)
    try:
        raw.execute("UPDATE SLUICE_META SET VALUE = CAST(CAST(VALUE AS INTEGER) + 1 AS TEXT) "
                    "WHERE KEY = 'catalog_version'")
    finally:
        raw.close()
    store.check_catalog()                 # (or the time manager's pass, if it came first)
    assert store.catalog_version() == before + 1
    store.check_catalog()                 # once
    assert store.catalog_version() == before + 1
