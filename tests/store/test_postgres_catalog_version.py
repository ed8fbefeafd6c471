"""The PostgreSQL store's catalog version (kept in each process, bumped when its caches
must reload): each catalog change is announced once — by this process's DDL at once, by
another process's DDL through its NOTIFY — and the idle listener's backstop
(``PgStore._check_catalog``) announces only a database catalog version no announcement
covered (a change whose notification never reached this process).

The backstop used to announce again every change made since its previous call, and this
process's own NOTIFY came back as a second announcement of its own DDL: up to three bumps
for one change, each making every cache reload (as on SQLite,
tests/store/test_sqlite_catalog_version.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sluice.store.sqlschema import quote
from tests.conftest import make_queue, pg_admin, wait_until


@pytest.fixture
def site(pg_conn, monkeypatch):
    """``(connection, its PostgreSQL store, the notifications its listener got)``: a queue
    made, every change announced."""
    store = pg_conn.context.store
    seen: list[str] = []
    on_notify = store.listener.on_notify

    def recording(payload: str) -> None:
        on_notify(payload)
        seen.append(payload)
    monkeypatch.setattr(store.listener, "on_notify", recording)
    make_queue(pg_conn)
    _heard_all(store, seen)
    store._check_catalog()
    return pg_conn, store, seen


def _heard_all(store, seen: list[str]) -> None:
    """Wait until the listener got every notification committed so far: PostgreSQL delivers
    them in commit order, so once a marker sent now arrived (a kind the store ignores but
    for waking its waiters)."""
    marker = f"x{len(seen)}"
    with pg_admin() as raw:
        raw.execute(f"NOTIFY {quote(store.target.channel)}, '{marker}'")
    assert wait_until(lambda: marker in seen, timeout=30)


def test_a_catalog_change_is_announced_once(site):
    conn, store, seen = site
    before = store.catalog_version()
    conn.aqadm.create_queue_table(queue_table="QT", queue_payload_type="RAW")
    assert store.catalog_version() == before + 1
    _heard_all(store, seen)                 # its own NOTIFY came back
    assert store.catalog_version() == before + 1
    store._check_catalog()                  # the idle listener's backstop
    assert store.catalog_version() == before + 1


def test_a_change_another_process_announced_is_not_announced_again(site, pg_dsn):
    _, store, seen = site
    before = store.catalog_version()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "src"))
    out = subprocess.run([sys.executable, "-c", f"""
import sluice
with sluice.connect({pg_dsn!r}) as c:
    c.aqadm.create_queue_table(queue_table="OTHER_QT", queue_payload_type="RAW")
"""], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    _heard_all(store, seen)
    assert store.catalog_version() == before + 1      # the other process's announcement
    store._check_catalog()
    assert store.catalog_version() == before + 1


def test_a_change_no_notification_announced_is_announced_by_the_backstop(site, pg_schema):
    """The catalog version moved in the database and no NOTIFY came (its process killed,
    a notification lost): the next check announces it, once."""
    _, store, _ = site
    before = store.catalog_version()
    with pg_admin() as raw:
        raw.execute(f'UPDATE "{pg_schema}".SLUICE_META SET VALUE = CAST(CAST(VALUE AS INTEGER) + 1 AS TEXT) '
                    "WHERE KEY = 'catalog_version'")
    store._check_catalog()               # (or the idle listener's, if it came first)
    assert store.catalog_version() == before + 1
    store._check_catalog()               # once
    assert store.catalog_version() == before + 1


def test_another_process_committed_change_is_seen_by_the_next_statement(site, pg_dsn, monkeypatch):
    """Oracle: a committed DDL is seen by the next statement of any session. The other
    process's NOTIFY may still be on its way (under load it was: ORA-24002 for a queue table
    another store had just created, tests/store/test_store_open.py); a name missing from the
    caches is looked up again at the database's catalog version before it is reported missing.
    Here no notification, and no idle backstop, reaches this process at all."""
    import sluice
    conn, store, _ = site
    monkeypatch.setattr(store.listener, "on_notify", lambda payload: None)
    monkeypatch.setattr(store.listener, "on_idle", lambda: None)
    conn.queue("Q")                      # the caches are filled, at the current version
    # another store on the schema (another process's, but for its process)
    with sluice.connect(pg_dsn + "&application_name=other") as other:
        assert other.context.store is not store
        other.aqadm.create_queue_table(queue_table="QT2", queue_payload_type="RAW")
        other.aqadm.create_queue(queue_name="Q3", queue_table="QT2")
        other.aqadm.start_queue(queue_name="Q3")
    conn.aqadm.create_queue(queue_name="Q2", queue_table="QT2")          # not ORA-24002
    conn.queue("Q3").enqone(conn.msgproperties(payload=b"seen"))         # not ORA-24010
    conn.commit()
    with pytest.raises(sluice.DatabaseError, match="ORA-24010"):         # still missing
        conn.queue("NO_SUCH_QUEUE").enqone(conn.msgproperties(payload=b"x"))
