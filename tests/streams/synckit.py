"""What the synchronous capture tests share: a store (either backend) with a Streams queue
and a subscriber, a plain writer on the store's database (``sqlite3`` on the file, psycopg
on the PostgreSQL database, in a schema of its own), table rules as ADD_TABLE_RULES makes
them, and reading the captured LCRs back."""

from __future__ import annotations

import sqlite3
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

import psycopg
import pytest

import sluice
from sluice.streams.capture import syncsqlite
from tests.conftest import PG_BASE, pg_admin
from tests.streams.capturekit import CONSUMER, dequeue_all


@dataclass
class SyncEnv:
    dsn: str
    conn: sluice.Connection
    writer: Any                 # sqlite3.Connection (autocommit) or psycopg.Connection (autocommit)
    schema: str | None          # PostgreSQL: the captured tables' schema

    @property
    def sqlite(self) -> bool:
        return self.schema is None

    @property
    def path(self) -> str:
        return self.dsn[len("sqlite:///"):]

    @property
    def owner(self) -> str:
        """The captured tables' owner as LCRs name it."""
        return "HR" if self.sqlite else self.schema.upper()

    @property
    def global_name(self) -> str:
        if self.sqlite:
            return self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0].upper()
        return PG_BASE.rsplit("/", 1)[-1].upper()

    def table(self, name: str) -> str:
        return name if self.sqlite else f"{self.schema}.{name}"

    def create_table(self, name: str, columns: str = "id INTEGER PRIMARY KEY, name TEXT, dept INTEGER") -> None:
        self.writer.execute(f"CREATE TABLE {self.table(name)} ({columns})")

    @contextmanager
    def transaction(self, tag: bytes | None = None, session: bool = False) -> Iterator[Any]:
        """One writer transaction (tagged with ``tag``, as DBMS_STREAMS.SET_TAG would; on
        SQLite ``session`` opens the writer's session row even without a tag)."""
        w = self.writer
        if self.sqlite:
            w.execute("BEGIN")
            try:
                if tag is not None or session:
                    syncsqlite.open_session(w, tag)
                yield w
                if tag is not None or session:
                    syncsqlite.close_session(w)
                w.execute("COMMIT")
            except BaseException:
                w.execute("ROLLBACK")
                raise
            return
        with w.transaction():
            if tag is not None:
                w.execute("SELECT set_config('sluice.tag', %s, true)", (tag.hex(),))
            yield w

    def sql(self, *statements: str, tag: bytes | None = None) -> None:
        with self.transaction(tag) as w:
            for s in statements:
                w.execute(s)

    def rule_set(self, name: str, *tables: str, condition_extra: str = "", tagged: bool = False) -> str:
        """A rule set with a table rule per table, as ADD_TABLE_RULES generates them."""
        adm = self.conn.rule_adm
        adm.create_rule_set(rule_set_name=name, evaluation_context="SYS.STREAMS$_EVALUATION_CONTEXT")
        for i, t in enumerate(tables):
            self.add_table_rule(f"{name}_{i}", name, t, condition_extra, tagged)
        return name

    def add_table_rule(self, rule: str, rule_set: str, table: str, condition_extra: str = "",
                       tagged: bool = False) -> None:
        tag = "" if tagged else " and :dml.is_null_tag() = 'Y'"
        self.conn.rule_adm.create_rule(rule_name=rule, condition=(
            f"(((:dml.get_object_owner() = '{self.owner}' and :dml.get_object_name() = "
            f"'{table.upper()}')){tag} and :dml.get_source_database_name() = '{self.global_name}' )"
            f"{condition_extra}"))
        self.conn.rule_adm.add_rule(rule_name=rule, rule_set_name=rule_set)

    def dequeue_all(self, consumer: str = CONSUMER) -> list:
        return dequeue_all(self.conn, consumer)

    def view(self, sql: str) -> list[dict]:
        cols, rows = self.conn.query(sql, None)
        return [dict(zip(cols, r)) for r in rows]

    def rule_set_rules(self, rule_set: str) -> list[str]:
        """The rules in the rule set (the catalog's rows: DBA_RULE_SET_RULES is issue 13 section 1's)."""
        return [spec["rule"] for _, _, spec in self.conn.context.store.catalog_objects("RULE_SET_RULE")
                if spec["rule_set"] == f"SLUICE.{rule_set}"]

    def rule_set_exists(self, rule_set: str) -> bool:
        return any(n == rule_set for _, n, _ in self.conn.context.store.catalog_objects("RULE_SET"))

    def triggers(self) -> list[str]:
        """The names of Sluice's synchronous capture triggers in the database."""
        if self.sqlite:
            return [r[0] for r in self.writer.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'SLUICE$SYNC%'")]
        return [r[0] for r in self.writer.execute(
            "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND t.tgname LIKE 'sluice$sync%%'",
            (self.schema,))]


def make_env(dsn: str) -> SyncEnv:
    conn = sluice.connect(dsn)
    conn.streams_adm.set_up_queue(queue_table="STRM_QT", queue_name="STRM_Q")
    conn.aqadm.add_subscriber(queue_name="STRM_Q", subscriber=sluice.Agent(CONSUMER))
    if dsn.startswith("sqlite"):
        writer = sqlite3.connect(dsn[len("sqlite:///"):], isolation_level=None, timeout=30,
                                 check_same_thread=False)
        return SyncEnv(dsn, conn, writer, None)
    schema = "hr_" + uuid.uuid4().hex[:10]
    writer = psycopg.connect(PG_BASE, autocommit=True)
    writer.execute(f"CREATE SCHEMA {schema}")
    return SyncEnv(dsn, conn, writer, schema)


def drop_env(env: SyncEnv) -> None:
    env.conn.close()
    env.writer.close()
    if env.schema is not None:
        with pg_admin() as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {env.schema} CASCADE")


@pytest.fixture
def senv(dsn):
    e = make_env(dsn)
    yield e
    drop_env(e)
