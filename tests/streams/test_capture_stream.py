"""The capture reads its slot as one decoding session (issue 15 §2: the end-to-end lag).

Each ``pg_logical_slot_peek_changes`` / ``pg_replication_slot_advance`` call started a new
decoding session at the slot's restart position and decoded again all the WAL it had
already confirmed (PostgreSQL moves the restart position only every 15 s or so): the
cost of a read grew with the WAL behind it, and a capture that had drained a backlog read
the backlog again on every batch.  Since: one walsender session per capture process
(``capture/slotstream.py``), each record decoded once; and the tables of every Sluice
store in the source database left out by the decoder (a destination queue beside the
source: each LCR enqueued and dequeued there was decoded and parsed for nothing).
"""

from __future__ import annotations

import uuid

import sluice
from sluice.streams.capture.pgsource import lsn_to_int
from tests.conftest import PG_BASE, pg_admin
from tests.streams.capturekit import env  # noqa: F401  (fixture)


def slot_state(env) -> tuple[int | None, int]:
    """(the PID of the session reading the slot, or None; its confirmed position)."""
    slot = env.view("SELECT REPLICATION_SLOT FROM DBA_CAPTURE WHERE CAPTURE_NAME = 'CAP'")[0]["REPLICATION_SLOT"]
    with pg_admin() as admin:
        pid, confirmed = admin.execute("SELECT active_pid, confirmed_flush_lsn::text FROM pg_replication_slots "
                                       "WHERE slot_name = %s", (slot,)).fetchone()
    return pid, lsn_to_int(confirmed)


def test_batches_after_the_first_read_the_same_decoding_session(env):
    """Five source transactions, one per batch: every batch is read by the one session the
    first opened (a new session would decode the confirmed WAL again), and each batch's
    confirmation is in the slot when the batch returns; caught up, the slot is let go."""
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    proc = env.process(max_changes=3)          # B, the insert, C: one transaction a batch
    proc.start()
    for i in range(5):
        env.sql(f"INSERT INTO {env.src}.t VALUES ({i})")
    sessions, captured = set(), 0
    while captured < 5:
        n = proc.run_batch()
        if not n:
            continue
        pid, confirmed = slot_state(env)
        sessions.add(pid)
        assert confirmed == proc.confirmed      # advanced before run_batch returned
        captured += len([x for x in env.dequeue_all() if x.get_object_name() == "T"])
    assert len(sessions) == 1 and None not in sessions
    proc.catch_up()
    assert slot_state(env)[0] is None           # caught up: another process may read or drop it


def test_other_stores_in_the_source_database_are_not_decoded(env):
    """A second Sluice store in the source database (a destination queue, say) enqueues:
    its queue table's rows never reach the capture's reads, nor does a table of the
    capture's own store; a source table's do."""
    if not env.dsn.startswith("postgresql"):
        other_dsn = PG_BASE + ("&" if "?" in PG_BASE else "?") + "schema=st_" + uuid.uuid4().hex[:10]
    else:
        other_dsn = env.dsn.split("?")[0] + "?schema=st_" + uuid.uuid4().hex[:10]
    other_schema = other_dsn.rsplit("schema=", 1)[1]
    other = sluice.connect(other_dsn)
    try:
        other.streams_adm.set_up_queue(queue_table="DEST_QT", queue_name="DEST_Q")
        other.aqadm.add_subscriber(queue_name="DEST_Q", subscriber=sluice.Agent("APP"))
        env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
        env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
        env.conn.capture_adm.start_capture(capture_name="CAP")
        proc = env.process()
        proc.start()
        q = other.queue("DEST_Q")
        for i in range(3):
            q.enqone(other.msgproperties(payload=f"m{i}"))
        other.commit()
        env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
        rows, _ = proc.source.peek(proc.spec.slot, 100_000)
        schemas = {r.split('"schema":"', 1)[1].split('"', 1)[0] for r in rows if '"schema":"' in r}
        assert env.src in schemas
        assert other_schema not in schemas
    finally:
        other.close()
        with pg_admin() as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {other_schema} CASCADE")


def test_a_session_the_server_ended_is_started_again(env):
    """The server ends the capture's decoding session between two reads (its
    wal_sender_timeout while the capture did not read, pg_terminate_backend): the next read
    starts a new one at the confirmed position — the capture goes on, nothing lost or
    captured twice."""
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    proc = env.process()
    proc.start()
    env.sql(f"INSERT INTO {env.src}.t VALUES (1)")
    while not proc.run_batch():
        pass
    pid = slot_state(env)[0]
    assert pid is not None
    env.sql(f"INSERT INTO {env.src}.t VALUES (2)")
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        while admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone():
            pass
    env.sql(f"INSERT INTO {env.src}.t VALUES (3)")
    proc.catch_up()
    got = [x.get_values("NEW")[0].data.value for x in env.dequeue_all() if x.get_object_name() == "T"]
    assert got == [1, 2, 3]
    assert env.view("SELECT STATUS FROM DBA_CAPTURE")[0]["STATUS"] == "ENABLED"


def test_an_idle_stream_let_go_opens_no_session_until_wal_is_written(monkeypatch):
    """Idle, the stream lets the slot go after RELEASE_AFTER; its next reads used to open a
    new replication session each (a walsender and a decoding start: about one a second for
    an idle capture).  Now they open none while the server writes no WAL -- one cheap query
    each -- and the first change written opens one and is read.  A private server: no other
    writer moves its WAL."""
    import time

    import psycopg

    from sluice.streams.capture import slotstream
    from sluice.streams.capture.pgsource import Source
    from tests.store.pgserver import PrivateServer

    opened: list[float] = []
    real_open = slotstream.SlotStream._open

    def counted_open(self):
        if self._pg is None:
            opened.append(time.monotonic())
        return real_open(self)
    monkeypatch.setattr(slotstream.SlotStream, "_open", counted_open)
    settings = {"wal_level": "logical", "output_plugin_libraries": "pgoutput, test_decoding, wal2json"}
    with PrivateServer(settings) as server, psycopg.connect(server.dsn, autocommit=True) as admin:
        admin.execute("CREATE TABLE t (id int PRIMARY KEY)")
        source = Source(server.dsn, "private", None)
        try:
            source.create_slot("idle_slot")
            end = time.monotonic() + 30
            while (source.stream is None or source.stream.open) and time.monotonic() < end:
                assert source.peek("idle_slot", 1000) == ([], [])
                time.sleep(0.05)
            assert not source.stream.open and len(opened) == 1        # let go, after one session
            for _ in range(30):                                        # 1.5 s of an idle capture's reads
                assert source.peek("idle_slot", 1000) == ([], [])
                time.sleep(0.05)
            assert not source.stream.open and len(opened) == 1
            admin.execute("INSERT INTO t VALUES (7)")
            rows: list[str] = []
            while not rows and time.monotonic() < end:
                rows, _ = source.peek("idle_slot", 1000)
            assert len(opened) == 2 and any('"action":"I"' in r and "7" in r for r in rows), rows
        finally:
            source.release()
            source.close()
