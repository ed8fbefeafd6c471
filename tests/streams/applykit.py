"""What the apply tests share: a target database (a PostgreSQL schema of the test database,
or an SQLite file) with helpers to create tables and read them, and row LCRs built the way
capture builds them (commit SCN, source transaction id)."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass

import psycopg
import pytest

from sluice.streams import RowLCR
from sluice.streams.apply.procedures import ApplyProcedures
from tests.conftest import PG_BASE, drop_schema, pg_admin

SOURCE_DB = "DBS1.NET"


@dataclass
class TargetDb:
    kind: str              # 'postgresql' or 'sqlite'
    link: str              # the apply_database_link naming it
    owner: str             # the owner LCRs name (upper case)
    path: str | None = None

    def table(self, name: str) -> str:
        if self.kind == "postgresql":
            return f"{self.owner.lower()}.{name.lower()}"
        return f'"{self.owner}.{name.upper()}"'

    def sql(self, *statements: str) -> None:
        if self.kind == "postgresql":
            with pg_admin() as c:
                for s in statements:
                    c.execute(s)
        else:
            with sqlite3.connect(self.path) as c:
                for s in statements:
                    c.execute(s)

    def rows(self, name: str, order: str = "1") -> list[tuple]:
        if self.kind == "postgresql":
            with pg_admin() as c:
                return [tuple(r) for r in c.execute(f"SELECT * FROM {self.table(name)} ORDER BY {order}")]
        with sqlite3.connect(self.path) as c:
            return c.execute(f"SELECT * FROM {self.table(name)} ORDER BY {order}").fetchall()


@dataclass
class Replica:
    """Another site: a PostgreSQL database of its own, or an SQLite file; ``link`` names it
    (an apply_database_link, and what the convergence checker opens)."""

    kind: str
    link: str
    database: str | None = None

    def pg(self) -> psycopg.Connection:
        return psycopg.connect(PG_BASE.rsplit("/", 1)[0] + "/" + self.database, autocommit=True)

    def table(self, owner: str, name: str) -> str:
        """How the site names ``owner.name`` (owner in upper case, as LCRs give it)."""
        if self.kind == "postgresql":
            return f"{owner.lower()}.{name.lower()}"
        return f'"{owner}.{name.upper()}"'

    def sql(self, *statements: str) -> None:
        if self.kind == "postgresql":
            with self.pg() as c:
                for s in statements:
                    c.execute(s)
        else:
            with sqlite3.connect(self.link[len("sqlite:///"):]) as c:
                for s in statements:
                    c.execute(s)

    def scalar(self, sql: str):
        if self.kind == "postgresql":
            with self.pg() as c:
                return c.execute(sql).fetchone()[0]
        with sqlite3.connect(self.link[len("sqlite:///"):]) as c:
            return c.execute(sql).fetchone()[0]


@pytest.fixture(params=["postgresql", "sqlite"])
def replica(request, tmp_path):
    if request.param == "sqlite":
        path = tmp_path / "replica.db"
        yield Replica("sqlite", f"sqlite:///{path}")
        return
    db = "sluice_r_" + uuid.uuid4().hex[:10]
    with pg_admin() as admin:
        admin.execute(f"CREATE DATABASE {db}")
    base = PG_BASE.rsplit("/", 1)[0] + "/" + db
    r = Replica("postgresql", f"{base}?schema=sluice_apply", db)
    yield r
    with r.pg() as c:      # its slots (a capture at the replica) die with it
        for (slot,) in c.execute("SELECT slot_name FROM pg_replication_slots WHERE database = %s", (db,)):
            c.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
    with pg_admin() as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


@pytest.fixture(params=["postgresql", "sqlite"])
def target(request, tmp_path):
    if request.param == "postgresql":
        schema = "tgt_" + uuid.uuid4().hex[:10]
        pg_admin().execute(f"CREATE SCHEMA {schema}")
        yield TargetDb("postgresql", f"{PG_BASE}?schema={schema}", schema.upper())
        drop_schema(schema)
    else:
        path = str(tmp_path / "target.db")
        yield TargetDb("sqlite", f"sqlite:///{path}", "TGT", path)


def lcr(cmd: str, owner: str, table: str, scn: int, old=None, new=None, txn: str = "1.1.1",
        commit_scn: int | None = None, tag=None) -> RowLCR:
    return RowLCR.construct(SOURCE_DB, cmd, owner, table.upper(), tag, txn, scn, old, new,
                            commit_scn=commit_scn if commit_scn is not None else scn)


def procedures(conn) -> ApplyProcedures:
    return ApplyProcedures(conn)
