"""DBA_CAPTURE.APPLIED_SCN (Oracle's reference: "all changes below this SCN have been
dequeued by all apply processes that apply changes captured by this capture process").
With PERSISTENT staging it is what the apply processes of the capture's queue applied of
the capture's source database (DBA_APPLY_PROGRESS), their lowest; with BUFFERED staging
the capture's confirmed position (test_capture_staging.py).  Both store backends; the
source is PostgreSQL (capturekit's ``env``), the apply target an SQLite file."""

from __future__ import annotations

import sqlite3

import sluice
from sluice.streams.apply import ApplyProcess
from tests.streams.applykit import procedures
from tests.streams.capturekit import CONSUMER, env  # noqa: F401  (fixture)


def target(env, tmp_path) -> str:
    path = tmp_path / "target.db"
    with sqlite3.connect(path) as c:
        c.execute(f'CREATE TABLE "{env.owner}.T" (id integer PRIMARY KEY, v text)')
    return f"sqlite:///{path}"


def applied_scn(env):
    return env.view("SELECT APPLIED_SCN FROM DBA_CAPTURE WHERE CAPTURE_NAME = 'CAP'")[0]["APPLIED_SCN"]


def test_applied_scn_is_what_the_apply_processes_applied_with_persistent_staging(env, tmp_path):
    link = target(env, tmp_path)
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    adm = env.conn.apply_adm
    adm.create_apply(queue_name="STRM_Q", apply_name=CONSUMER, apply_captured=True,
                     apply_database_link=link)
    source_db = env.pg.info.dbname.upper()
    procedures(env.conn).set_schema_instantiation_scn(env.owner, source_db, 0, apply_database_link=link)
    assert applied_scn(env) == 0                   # an apply of its LCRs has applied nothing
    for i in range(3):
        env.sql(f"INSERT INTO {env.src}.t VALUES ({i}, 'x')")
    cap = env.process()
    cap.catch_up()
    captured = env.view("SELECT LAST_ENQUEUED_SCN FROM DBA_CAPTURE")[0]["LAST_ENQUEUED_SCN"]
    assert captured > 0 and applied_scn(env) == 0  # staged, not applied
    adm.start_apply(apply_name=CONSUMER)
    app = ApplyProcess.from_catalog(sluice.connect(env.dsn), CONSUMER)
    env.procs.append(app)
    app.drain()
    assert applied_scn(env) == captured
    # a second apply process of the capture's LCRs (the queue's other consumer) that has
    # applied nothing holds it back: APPLIED_SCN is what *all* of them applied
    adm.create_apply(queue_name="STRM_Q", apply_name="APPLY2", apply_captured=True,
                     apply_database_link=link)
    assert applied_scn(env) == 0
    # an apply of user messages, or of another source database's LCRs, is not one of them
    adm.drop_apply(apply_name="APPLY2")
    adm.create_apply(queue_name="STRM_Q", apply_name="USERMSGS", apply_captured=False,
                     apply_database_link=link)
    adm.create_apply(queue_name="STRM_Q", apply_name="ELSEWHERE", apply_captured=True,
                     apply_database_link=link, source_database="OTHER.DB")
    assert applied_scn(env) == captured


def test_applied_scn_without_apply_processes_is_null(env):
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'x')")
    env.process().catch_up()
    assert applied_scn(env) is None


def test_an_older_stores_dba_capture_shows_the_applied_scn_after_the_upgrade(env, tmp_path):
    """Schema 20's DBA_CAPTURE read APPLIED_SCN from the progress row only (NULL with
    PERSISTENT staging); the upgrade to 21 makes the view again (SQLite keeps an old view:
    DBA_CAPTURE is a reshaped one)."""
    from sluice.store.dialect import POSTGRESQL, SQLITE
    from sluice.store.sqlschema import SCHEMA_VERSION, dba_capture_ddl
    from tests.streams.test_propagation import _raw
    link = target(env, tmp_path)
    env.sql(f"CREATE TABLE {env.src}.t (id int PRIMARY KEY, v text)")
    env.create_capture(rule_set_name=env.table_rule_set("RS", "t"))
    env.conn.capture_adm.start_capture(capture_name="CAP")
    env.conn.apply_adm.create_apply(queue_name="STRM_Q", apply_name=CONSUMER, apply_captured=True,
                                    apply_database_link=link)
    procedures(env.conn).set_schema_instantiation_scn(env.owner, env.pg.info.dbname.upper(), 0,
                                                      apply_database_link=link)
    env.sql(f"INSERT INTO {env.src}.t VALUES (1, 'x')")
    env.process().catch_up()
    env.conn.apply_adm.start_apply(apply_name=CONSUMER)
    app = ApplyProcess.from_catalog(sluice.connect(env.dsn), CONSUMER)
    env.procs.append(app)
    app.drain()
    applied = applied_scn(env)
    assert applied > 0
    for proc in env.procs:          # the store closes: the next connection opens it again
        proc.stop()
        proc.conn.close()
    env.procs.clear()
    env.conn.close()
    sqlite = env.dsn.startswith("sqlite:")
    view, = dba_capture_ddl(SQLITE if sqlite else POSTGRESQL)
    start = view.index("CASE WHEN COALESCE(")
    old = view[:start] + "P.APPLIED_SCN" + view[view.index("END AS APPLIED_SCN") + len("END"):]
    _raw(env.dsn, ["DROP VIEW DBA_CAPTURE", old,
                   "UPDATE SLUICE_META SET VALUE = '20' WHERE KEY = 'schema_version'"])
    conn = sluice.connect(env.dsn)
    try:
        assert conn.query("SELECT VALUE FROM SLUICE_META WHERE KEY = 'schema_version'", None)[1] == [
            (str(SCHEMA_VERSION),)]
        assert conn.query("SELECT APPLIED_SCN FROM DBA_CAPTURE", None)[1] == [(applied,)]
    finally:
        conn.close()
