"""Comparing a table with its replica, row by row (what Oracle's DBMS_COMPARISON does).

:func:`compare` reads the source table (optionally only the rows a ``where`` predicate
selects: the subset a subset rule replicates) and the target table, matches rows by key
(the source's primary key, or ``key_columns``) and reports every row that is missing on
one side or differs in a column both tables have.  Values are compared as column values
(:func:`~.engine.same`: a DATE read back as a date equals the midnight timestamp, a NUMBER
SQLite kept as REAL equals the decimal).  ``sluice compare`` runs it for users; the tests
use it as their convergence checker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...errors import ora
from .engine import same
from .target import Target, TargetError

__all__ = ["compare", "Comparison", "Difference"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One row that is not the same: ``source`` or ``target`` is None when it is missing there."""

    key: tuple
    source: dict[str, Any] | None
    target: dict[str, Any] | None

    @property
    def kind(self) -> str:
        return "MISSING IN TARGET" if self.target is None else (
            "MISSING IN SOURCE" if self.source is None else "DIFFERENT")

    def columns(self) -> list[str]:
        if self.source is None or self.target is None:
            return []
        return [c for c in self.source if not same(self.source[c], self.target.get(c))]


@dataclass(slots=True)
class Comparison:
    source_rows: int = 0
    target_rows: int = 0
    columns: list[str] = field(default_factory=list)
    key: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return not self.differences


def _read(t: Target, owner: str, name: str, columns: list[str], where: str | None) -> list[tuple]:
    sql = f"SELECT {', '.join(t.column(c) for c in columns)} FROM {t.table(owner, name)}"
    if where:
        sql += f" WHERE {where}"
    try:
        rows = t.query(sql)
    except TargetError as e:
        t.rollback()
        if where:     # the user's predicate, most likely: say so (it was ORA-00600)
            raise ora(900, f"comparing the rows WHERE {where}: {e}") from None
        raise
    t.rollback()
    return rows


def compare(source: Target, source_owner: str, source_table: str, target: Target,
            target_owner: str, target_table: str, *, where: str | None = None,
            key_columns: list[str] | None = None) -> Comparison:
    """Compare ``source_owner.source_table`` with ``target_owner.target_table``."""
    s_cols, _, s_pk = source.describe(source_owner, source_table)
    t_cols, _, _ = target.describe(target_owner, target_table)
    columns = [c for c in s_cols if c in t_cols]
    key = list(key_columns or s_pk)
    for k in key:     # a key column named that both tables do not have
        if k not in columns:
            raise ora(904, f'"{k}" (a key column {source_owner}.{source_table} and its replica do not both have)')
    if not key:
        raise ora(26688, f"no key to match rows of {source_owner}.{source_table} by (give key columns)")
    result = Comparison(columns=columns, key=key)
    at = [columns.index(k) for k in key]

    def by_key(rows: list[tuple]) -> dict[tuple, dict[str, Any]]:
        return {tuple(_norm(r[i]) for i in at): dict(zip(columns, r)) for r in rows}
    src = by_key(_read(source, source_owner, source_table, columns, where))
    dst = by_key(_read(target, target_owner, target_table, columns, None))
    result.source_rows, result.target_rows = len(src), len(dst)
    for k in sorted(set(src) | set(dst), key=lambda k: tuple(str(v) for v in k)):
        a, b = src.get(k), dst.get(k)
        if a is None or b is None or any(not same(a[c], b[c]) for c in columns):
            result.differences.append(Difference(k, a, b))
    return result


def _norm(v: Any) -> Any:
    """A key value as both databases give it (an integral NUMBER read back as int)."""
    try:
        if not isinstance(v, (str, bytes)) and v == int(v):
            return int(v)
    except (TypeError, ValueError, OverflowError):
        pass
    return v
