"""What the capture tests share: a source schema on PostgreSQL, a store (either backend)
with a Streams queue and a subscriber, and the clean-up of the replication slots a test's
captures create (the server has few, and other sessions share it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import psycopg
import pytest

import sluice
from sluice.streams.capture import CaptureProcess
from sluice.streams.capture.context import CaptureContext
from sluice.streams.capture.pgsource import Source
from tests.conftest import PG_BASE, pg_admin

CONSUMER = "APPLY1"


@dataclass
class Env:
    """One capture test's world."""

    dsn: str                       # the store
    conn: sluice.Connection        # an administrator's session on it
    pg: psycopg.Connection         # an application on the source database (autocommit)
    src: str                       # the source schema (PostgreSQL name, lower case)
    source_dsn: str | None         # None: the store's own database is the source
    slot_prefix: str
    procs: list = field(default_factory=list)

    @property
    def owner(self) -> str:
        """The source schema as LCRs name it (upper case)."""
        return self.src.upper()

    def create_capture(self, name: str = "CAP", **kw) -> None:
        kw.setdefault("queue_name", "STRM_Q")
        if self.source_dsn is not None:
            kw.setdefault("source_dsn", self.source_dsn)
        self.conn.capture_adm.create_capture(capture_name=name, **kw)

    def table_rule_set(self, name: str, *tables: str, dml: bool = True, ddl: bool = False,
                       condition_extra: str = "") -> str:
        """A rule set with a table rule per table (seed 000's generated table rules)."""
        adm = self.conn.rule_adm
        adm.create_rule_set(rule_set_name=name, evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
        for i, t in enumerate(tables):
            if dml:
                adm.create_rule(rule_name=f"{name}_D{i}", condition=(
                    f"(((:dml.get_object_owner() = '{self.owner}' and :dml.get_object_name() = "
                    f"'{t.upper()}')) and :dml.is_null_tag() = 'Y' ){condition_extra}"))
                adm.add_rule(rule_name=f"{name}_D{i}", rule_set_name=name)
            if ddl:
                adm.create_rule(rule_name=f"{name}_L{i}", condition=(
                    f"(((:ddl.get_object_owner() = '{self.owner}' and :ddl.get_object_name() = "
                    f"'{t.upper()}') or (:ddl.get_base_table_owner() = '{self.owner}' and "
                    f":ddl.get_base_table_name() = '{t.upper()}')) and :ddl.is_null_tag() = 'Y' )"))
                adm.add_rule(rule_name=f"{name}_L{i}", rule_set_name=name)
        return name

    def process(self, name: str = "CAP", **kw) -> CaptureProcess:
        """A capture process on a session of its own."""
        proc = CaptureProcess(sluice.connect(self.dsn), name, **kw)
        self.procs.append(proc)
        return proc

    def sql(self, *statements: str) -> None:
        """Run statements as one source transaction."""
        with self.pg.transaction():
            for s in statements:
                self.pg.execute(s)

    def dequeue_all(self, consumer: str = CONSUMER) -> list:
        return dequeue_all(self.conn, consumer)

    def view(self, sql: str) -> list[dict]:
        cols, rows = self.conn.query(sql, None)
        return [dict(zip(cols, r)) for r in rows]


def dequeue_all(conn: sluice.Connection, consumer: str | None = CONSUMER, queue: str = "STRM_Q") -> list:
    """Everything in ``queue`` for ``consumer`` (None: a single-consumer queue), in queue
    order (STRM_Q is a transactional queue: one message group — one capture commit — after
    the other)."""
    q = conn.queue(queue)
    q.deqoptions.consumername = consumer
    q.deqoptions.wait = sluice.DEQ_NO_WAIT
    q.deqoptions.navigation = sluice.DEQ_FIRST_MSG
    got = []
    while msgs := q.deqmany(10_000):
        got += [m.payload for m in msgs]
        conn.commit()
    return got


def crash_at_commit(env: Env, cap: CaptureProcess) -> CaptureProcess:
    """``cap`` catches up and its store commit fails (the session lost) after whatever it did
    before that commit; it stops, and a new process of the capture starts (returned)."""
    from sluice.errors import DatabaseError
    real_commit = cap.conn.commit

    def failing_commit():
        raise DatabaseError("ORA-03113: end-of-file on communication channel")
    cap.conn.commit = failing_commit
    try:
        cap.catch_up()
    except DatabaseError:
        pass
    else:
        raise AssertionError("the capture committed nothing")
    cap.conn.commit = real_commit
    cap.conn.rollback()
    cap.stop()
    env.conn.capture_adm.start_capture(capture_name=cap.name)
    again = env.process(cap.name)
    again.start()
    return again


def make_env(dsn: str, subscriber: bool = True) -> Env:
    conn = sluice.connect(dsn)
    src = "src_" + uuid.uuid4().hex[:10]
    pg = pg_admin()
    pg.execute(f"CREATE SCHEMA {src}")
    source_dsn = None if dsn.startswith("postgresql") else PG_BASE
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    if subscriber:
        conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
    prefix = f"sluice_{CaptureContext(conn).store_key()}_"
    return Env(dsn, conn, pg, src, source_dsn, prefix)


def drop_env(env: Env) -> None:
    for proc in env.procs:
        try:
            proc.stop()
        except Exception:
            pass
        proc.conn.close()
    env.conn.close()
    with pg_admin() as admin:
        for (slot,) in admin.execute("SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE %s",
                                     (env.slot_prefix.replace("_", r"\_") + "%",)).fetchall():
            try:
                admin.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            except psycopg.Error:   # still held by a dying process: once more, after a moment
                import time
                time.sleep(1)
                admin.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
        admin.execute(f"DROP SCHEMA IF EXISTS {env.src} CASCADE")
    env.pg.close()
    with Source(PG_BASE, "test database", None) as source:   # the DDL triggers, once unused
        source.remove_ddl_trigger_if_unused()


@pytest.fixture
def env(dsn):
    e = make_env(dsn)
    yield e
    drop_env(e)
