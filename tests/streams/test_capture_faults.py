"""Bad input and faults of capture processes (issue 13 §5): ORA-coded refusals that change
nothing; a dropped replication slot, a source that goes away and comes back, a table
altered under capture — the capture ends ABORTED with its error in DBA_CAPTURE, never
loses a change silently, and resumes when started again; a process killed between its
commit and the slot's advance duplicates nothing."""

from __future__ import annotations

import pytest

import sluice
from sluice.streams import RowLCR
from sluice.streams.capture.pgsource import Source, check_wal_level
from tests.conftest import pg_admin
from tests.streams.capturekit import env  # noqa: F401  (fixture)


def ids(lcrs):
    return [(x.get_command_type(), x.get_value("NEW" if x.get_command_type() != "DELETE" else "OLD",
                                               "id").access_number())
            for x in lcrs if isinstance(x, RowLCR)]


def code_of(call) -> int:
    with pytest.raises(sluice.DatabaseError) as e:
        call()
    return e.value.code


def slots(env) -> list[str]:
    with pg_admin() as admin:
        return [r[0] for r in admin.execute("SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE %s",
                                            (env.slot_prefix.replace("_", r"\_") + "%",))]


def test_wal_level_must_be_logical():
    """A source whose wal_level is not logical: ORA-01325, naming the setting and setup.sh."""
    with pytest.raises(sluice.DatabaseError) as e:
        check_wal_level("replica")
    assert e.value.code == 1325
    assert "wal_level = replica" in str(e.value) and "wal_level = logical" in str(e.value)
    assert "setup.sh" in str(e.value)
    check_wal_level("logical")


def test_bad_input_changes_nothing(env):
    """Oracle's errors, and after each of them no capture, no slot, no agent."""
    adm = env.conn.capture_adm
    src = {"source_dsn": env.source_dsn} if env.source_dsn else {}
    env.conn.aqadm.create_queue_table(queue_table="RAW_QT", queue_payload_type="RAW", multiple_consumers=True)
    env.conn.aqadm.create_queue(queue_name="RAW_Q", queue_table="RAW_QT")
    env.conn.aqadm.create_queue_table(queue_table="ONE_QT", queue_payload_type="SYS.ANYDATA")
    env.conn.aqadm.create_queue(queue_name="ONE_Q", queue_table="ONE_QT")
    cases = [
        (dict(queue_name="NO_SUCH_Q"), 24010),
        (dict(queue_name="STRM_Q", rule_set_name="NO_SUCH_RS"), 24141),
        (dict(queue_name="STRM_Q", negative_rule_set_name="SYS.NO_SUCH_RS"), 24141),
        (dict(queue_name="RAW_Q"), 25215),
        (dict(queue_name="ONE_Q"), 24039),
        (dict(queue_name="STRM_Q", start_scn=-5), 26667),
        (dict(queue_name="STRM_Q", start_scn="0/16B3748"), 26667),
        (dict(queue_name="STRM_Q", start_scn=1), 1291),              # before the slot existed
        (dict(queue_name="STRM_Q", capture_user="NOBODY"), 1918),
        (dict(queue_name="STRM_Q", checkpoint_retention_time=-1), 26667),
    ]
    for kw, code in cases:
        assert code_of(lambda: adm.create_capture(capture_name="CAP", **src, **kw)) == code, kw
    assert code_of(lambda: adm.create_capture(capture_name="hr.cap", queue_name="STRM_Q", **src)) == 26667
    if env.source_dsn:
        assert code_of(lambda: adm.create_capture(capture_name="CAP", queue_name="STRM_Q",
                                                  source_dsn="mysql://x")) == 26667
    else:
        assert code_of(lambda: adm.create_capture(capture_name="CAP", queue_name="STRM_Q",
                                                  source_dsn="postgresql://postgres@127.0.0.1:1/test")) == 12541
    assert env.view("SELECT * FROM DBA_CAPTURE") == [] and slots(env) == []
    assert env.conn.query("SELECT COUNT(*) FROM DBA_AQ_AGENTS WHERE AGENT_NAME = 'CAP'", None)[1] == [(0,)]
    for call in (adm.start_capture, adm.stop_capture, adm.alter_capture, adm.drop_capture):
        assert code_of(lambda: call(capture_name="NOPE")) == 26701
    env.create_capture()
    assert code_of(env.create_capture) == 26665
    adm.start_capture(capture_name="CAP")
    assert code_of(lambda: adm.drop_capture(capture_name="CAP")) == 26666
    assert code_of(lambda: adm.alter_capture(capture_name="CAP", start_scn=10**12)) == 26666
    assert code_of(lambda: adm.alter_capture(capture_name="CAP", rule_set_name="NO_SUCH")) == 24141
    assert code_of(lambda: adm.alter_capture(capture_name="CAP", first_scn=0)) == 1291
    assert env.view("SELECT STATUS, RULE_SET_NAME FROM DBA_CAPTURE") == [{"STATUS": "ENABLED", "RULE_SET_NAME": None}]
    # a user without the privileges of a Streams administrator
    env.conn.cursor().execute("CREATE USER scott IDENTIFIED BY tiger")
    env.conn.cursor().execute("GRANT CREATE SESSION TO scott")
    with sluice.connect(env.dsn, user="scott", password="tiger") as scott:
        assert code_of(lambda: scott.capture_adm.stop_capture(capture_name="CAP")) == 1031
    adm.stop_capture(capture_name="CAP")
    adm.drop_capture(capture_name="CAP")
    assert slots(env) == [] and env.view("SELECT * FROM DBA_CAPTURE") == []


def _running(env, table="t", **kw):
    env.sql(f"CREATE TABLE {env.src}.{table} (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", table), **kw)
    env.conn.capture_adm.start_capture(capture_name="CAP")
    proc = env.process()
    proc.start()
    return proc


def _status(env) -> tuple:
    row = env.view("SELECT STATUS, ERROR_NUMBER, ERROR_MESSAGE FROM DBA_CAPTURE")[0]
    return row["STATUS"], row["ERROR_NUMBER"], row["ERROR_MESSAGE"]


def test_dropped_slot_aborts_and_never_starts_silently(env):
    """Someone drops the capture's replication slot: the capture is ABORTED with ORA-01291
    (the log it needs is gone) and START_CAPTURE refuses, rather than creating a new slot
    that would skip what happened in between."""
    proc = _running(env)
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    proc.catch_up()
    with pg_admin() as admin:
        admin.execute("SELECT pg_drop_replication_slot(%s)", (proc.spec.slot,))
    env.sql(f"INSERT INTO {env.src}.t VALUES (2, 'b')")
    assert code_of(proc.run_batch) == 1291
    status, number, message = _status(env)
    assert (status, number) == ("ABORTED", 1291) and "missing logfile" in message and proc.spec is None
    assert code_of(lambda: env.conn.capture_adm.start_capture(capture_name="CAP")) == 1291
    assert _status(env)[0] == "ABORTED" and slots(env) == []
    assert ids(env.dequeue_all()) == [("INSERT", 1)]
    env.conn.capture_adm.drop_capture(capture_name="CAP")     # the way out: start again from now


def test_source_goes_away_and_comes_back(env):
    """The capture's connection to its source is cut (the server restarting, the network):
    ABORTED with ORA-03113; started again it captures, exactly once, everything committed
    meanwhile."""
    proc = _running(env)
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    proc.catch_up()
    with pg_admin() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (proc.source.raw.info.backend_pid,))
    env.sql(f"INSERT INTO {env.src}.t VALUES (2, 'b')", f"UPDATE {env.src}.t SET v = 'c' WHERE id = 1")
    assert code_of(proc.run_batch) == 3113
    assert _status(env)[:2] == ("ABORTED", 3113)
    env.sql(f"DELETE FROM {env.src}.t WHERE id = 1")
    env.conn.capture_adm.start_capture(capture_name="CAP")
    assert _status(env) == ("ENABLED", None, None)
    env.process().catch_up()
    assert ids(env.dequeue_all()) == [("INSERT", 1), ("INSERT", 2), ("UPDATE", 1), ("DELETE", 1)]


def test_unreachable_source(env):
    """A source that does not answer (here: its address changed under the capture):
    START_CAPTURE refuses with ORA-12541 and changes nothing; a process that starts
    anyway is ABORTED with it."""
    from sluice.streams.capture import spec as specs
    from sluice.streams.capture.context import CaptureContext
    proc = _running(env)
    proc.stop()
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    ctx = CaptureContext(env.conn)
    moved = specs.load(ctx, "CAP")
    moved.source_dsn = "postgresql://postgres@127.0.0.1:1/test"
    specs.save(ctx, moved)
    assert code_of(lambda: env.conn.capture_adm.start_capture(capture_name="CAP")) == 12541
    assert _status(env)[0] == "DISABLED"
    moved.status = specs.ENABLED
    specs.save(ctx, moved)
    assert code_of(env.process().start) == 12541
    assert _status(env)[:2] == ("ABORTED", 12541)


def test_table_altered_under_capture(env):
    """Columns added, retyped and dropped under capture: each LCR has the row as it was
    when changed.  A table that loses its replica identity (no primary key, no REPLICA
    IDENTITY FULL): PostgreSQL logs its UPDATE without the old key and the decoder cannot
    give it — the capture is ABORTED with ORA-26744 naming the table and the transaction
    (the changes before it are captured, none after), DBA_STREAMS_UNSUPPORTED says why;
    ALTER_CAPTURE(start_scn) past it, the administrator's decision, resumes."""
    s = env.src
    proc = _running(env)
    env.sql(f"INSERT INTO {s}.t VALUES (1, 'a')")
    env.sql(f"ALTER TABLE {s}.t ADD COLUMN n int", f"INSERT INTO {s}.t VALUES (2, 'b', 5)")
    env.sql(f"ALTER TABLE {s}.t ALTER COLUMN n TYPE text", f"UPDATE {s}.t SET n = 'x' WHERE id = 2")
    env.sql(f"ALTER TABLE {s}.t DROP COLUMN v", f"INSERT INTO {s}.t VALUES (3, 'y')")
    proc.catch_up()
    got = [{u.column_name: u.data.value for u in x.get_values("NEW", "N")} for x in env.dequeue_all()]
    assert got == [{"ID": 1, "V": "a"}, {"ID": 2, "V": "b", "N": 5}, {"ID": 2, "V": "b", "N": "x"},
                   {"ID": 3, "N": "y"}]
    env.sql(f"ALTER TABLE {s}.t DROP CONSTRAINT t_pkey")
    env.sql(f"INSERT INTO {s}.t VALUES (4, 'z')")
    env.sql(f"UPDATE {s}.t SET n = 'lost' WHERE id = 4")
    env.sql(f"INSERT INTO {s}.t VALUES (5, 'w')")
    with pytest.raises(sluice.DatabaseError) as e:
        for _ in range(500):   # other sessions' transactions in the shared database come too
            proc.run_batch()
    assert e.value.code == 26744
    status, number, message = _status(env)
    assert (status, number) == ("ABORTED", 26744)
    assert f'"{env.owner}"."T"' in message and "UPDATE" in message and "start_scn =>" in message
    assert ids(env.dequeue_all()) == [("INSERT", 4)]          # before it: captured; after: not yet
    assert env.view("SELECT TABLE_NAME, AUTO_FILTERED FROM DBA_STREAMS_UNSUPPORTED") == \
        [{"TABLE_NAME": "T", "AUTO_FILTERED": "NO"}]
    start = int(message.split("start_scn => ")[1].split(")")[0])
    # started again without a decision, it stops at the same place
    env.conn.capture_adm.start_capture(capture_name="CAP")
    assert code_of(env.process().catch_up) == 26744
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    env.conn.capture_adm.alter_capture(capture_name="CAP", start_scn=start)
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.process().catch_up()
    assert ids(env.dequeue_all()) == [("INSERT", 5)]


@pytest.mark.parametrize("table", ['od"d', 'a"."b'], ids=["quote", "quote-dot-quote"])
def test_no_replica_identity_names_a_quoted_table_whole(env, table):
    """wal2json's warning about an UPDATE without the old key names the table as it is
    (a quote in the name not doubled): the capture whose rule wants the table still stops
    with ORA-26744 naming it, and DBA_STREAMS_UNSUPPORTED lists it.  Before, the name was
    cut at its first quote: the rule did not match the cut name and the UPDATE was lost
    without a word."""
    s, ident = env.src, '"' + table.replace('"', '""') + '"'
    env.sql(f"CREATE TABLE {s}.{ident} (id int, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", table))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {s}.{ident} VALUES (1, 'a')")
    env.sql(f"UPDATE {s}.{ident} SET v = 'b'")
    assert code_of(env.process().catch_up) == 26744
    status, number, message = _status(env)
    assert (status, number) == ("ABORTED", 26744) and f'"{env.owner}"."{table.upper()}"' in message
    assert "an UPDATE" in message
    assert env.view("SELECT OWNER, TABLE_NAME FROM DBA_STREAMS_UNSUPPORTED") == \
        [{"OWNER": env.owner, "TABLE_NAME": table.upper()}]
    assert ids(env.dequeue_all()) == [("INSERT", 1)]


def test_killed_between_commit_and_slot_advance(env, monkeypatch):
    """The process dies after its batch committed, before the slot advanced: the next one
    reads those transactions again and skips them (their commit SCN is at or below the
    stored position) — no duplicate.  Killed before its commit: nothing was enqueued, and
    the next one captures them once."""
    s = env.src
    proc = _running(env)
    env.sql(f"INSERT INTO {s}.t VALUES (1, 'a')", f"INSERT INTO {s}.t VALUES (2, 'b')")
    env.sql(f"UPDATE {s}.t SET v = 'c'")
    monkeypatch.setattr(Source, "advance", lambda self, slot, lsn: None)   # "killed" after COMMIT
    queued = "SELECT COUNT(*) FROM AQ$STRM_QT"
    for _ in range(100):
        proc.run_batch()
        if env.conn.query(queued, None)[1][0][0] == 4:
            break
    assert env.conn.query(queued, None)[1][0][0] == 4
    monkeypatch.undo()
    proc.source.release()      # dead: its decoding session ends with its connection
    env.sql(f"DELETE FROM {s}.t WHERE id = 1")
    again = env.process()

    def die(*a, **k):
        raise KeyboardInterrupt("killed before COMMIT")
    monkeypatch.setattr(again.conn, "commit", die)
    with pytest.raises(KeyboardInterrupt):
        again.catch_up()
    monkeypatch.undo()
    again.conn.rollback()
    env.process().catch_up()
    assert ids(env.dequeue_all()) == [("INSERT", 1), ("INSERT", 2), ("UPDATE", 1), ("UPDATE", 2),
                                      ("DELETE", 1)]


def test_disabled_while_running(env):
    """STOP_CAPTURE from another session: the running process stops at its next batch
    (hosts obey catalog state)."""
    proc = _running(env)
    env.conn.capture_adm.stop_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'a')")
    assert proc.run_batch() == 0 and proc.spec is None
    assert env.view("SELECT * FROM V$STREAMS_CAPTURE") == []
    assert code_of(env.process().start) == 26666
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.process().catch_up()
    assert ids(env.dequeue_all()) == [("INSERT", 1)]
