"""What the apply tests share: a target database (a PostgreSQL schema of the test database,
or an SQLite file) with helpers to create tables and read them, and row LCRs built the way
capture builds them (commit SCN, source transaction id)."""

from __future__ import annotations

import sqlite3
import uuid
from dataclasses import dataclass

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
