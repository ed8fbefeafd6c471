"""Oracle's multitable INSERT typed at a cursor, on either store (the door:
:mod:`.sqlmerge`'s ``compound_dml``).

``INSERT ALL INTO t1 [(cols)] [VALUES (…)] INTO t2 … subquery`` inserts, for each row of the
subquery, one row by each INTO clause (unconditional); ``INSERT ALL WHEN c1 THEN INTO …
[WHEN c2 THEN INTO …] [ELSE INTO …] subquery`` by the INTO clauses of each WHEN whose
condition holds for the row (ELSE: of none); ``INSERT FIRST`` by those of the first WHEN
that holds.  VALUES and the conditions name the subquery's columns; an INTO without VALUES
takes the subquery's row as it is.  The count is every row inserted into every table.  The
subquery is evaluated once, before any row is inserted — an INTO's table read by the
subquery gives its rows as they were — and the statement is atomic.

A clause's rows are those of ``SELECT <its values> FROM <the subquery's rows> WHERE <its
condition>``, the condition of the n-th WHEN of an INSERT FIRST (and ELSE's) being that
``CASE WHEN c1 THEN 1 WHEN c2 THEN 2 … ELSE 0 END`` is n (0) — NULL is not TRUE, as in
Oracle.  **PostgreSQL**: one statement of data-modifying common table expressions over the
subquery's rows ``MATERIALIZED`` once, its one value the rows inserted.  **SQLite** has no
data-modifying WITH: each clause's SELECT over the subquery runs first, then each clause's
rows are inserted (``executemany``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..errors import ora
from .dmlclauses import Clauses

__all__ = ["is_multitable", "multitable_postgres", "multitable_sqlite"]

_MULTITABLE = re.compile(r"\s*INSERT\s+(?:/\*.*?\*/\s*)?(?:ALL|FIRST)\b", re.I | re.S)
_AFTER_TABLE = ("VALUES", "INTO", "WHEN", "ELSE", "SELECT", "WITH")
_ELSE = -1


def is_multitable(text: str) -> bool:
    return _MULTITABLE.match(text) is not None


@dataclass
class _Into:
    table: str                  # as written
    columns: str                # ``(a, b)`` as written, or ''
    values: list[str] | None    # None: the subquery's row
    when: int | None            # the WHEN's index, _ELSE, or None (unconditional)


@dataclass
class _Multitable:
    first: bool                 # INSERT FIRST
    conditions: list[str]       # each WHEN's
    intos: list[_Into]
    subquery: str

    def condition(self, into: _Into) -> str | None:
        """What a subquery row must satisfy for ``into`` to insert it."""
        if into.when is None:
            return None
        if into.when != _ELSE and not self.first:
            return f"({self.conditions[into.when]})"
        branch = " ".join(f"WHEN ({c}) THEN {n}" for n, c in enumerate(self.conditions, 1))
        return f"CASE {branch} ELSE 0 END = {into.when + 1}"

    def select(self, into: _Into, rows: str) -> str:
        """``into``'s rows: a SELECT from ``rows`` (the subquery's rows)."""
        condition = self.condition(into)
        where = f" WHERE {condition}" if condition else ""
        return f"SELECT {', '.join(into.values) if into.values is not None else '*'} FROM {rows}{where}"


@lru_cache(maxsize=64)
def _read(text: str) -> _Multitable:
    """The multitable INSERT ``text`` read (ORA-009xx for a malformed one); kept per text."""
    r = Clauses(text)
    r.expect("INSERT", 900)
    first = r.take("FIRST")
    if not first:
        r.expect("ALL", 900)
    m = _Multitable(first, [], [], "")
    if r.at("INTO") and not first:
        m.intos = _intos(r, None)
    else:
        while r.take("WHEN"):
            m.conditions.append(r.span(*r.until(lambda r: r.at("THEN"))))
            r.expect("THEN", 905)
            m.intos += _intos(r, len(m.conditions) - 1)
        if not m.conditions:
            raise ora(905)
        if r.take("ELSE"):
            m.intos += _intos(r, _ELSE)
    if not r.at("SELECT", "WITH", "("):
        raise ora(928)
    m.subquery = r.span(r.i, len(r.toks) - 1)
    return m


def _intos(r: Clauses, when: int | None) -> list[_Into]:
    """One INTO clause or more, of the WHEN ``when``."""
    intos = [_into(r, when)]
    while r.at("INTO"):
        intos.append(_into(r, when))
    return intos


def _into(r: Clauses, when: int | None) -> _Into:
    r.expect("INTO", 925)
    table = r.table()
    r.alias(*_AFTER_TABLE)
    columns, count = "", None
    if r.at("(") and r.word(1) not in ("SELECT", "WITH"):
        first, last = r.inside()
        columns, count = r.span(first - 1, last + 1), len(r.items(first, last))
    values = r.items(*r.inside()) if r.take("VALUES") else None
    if values is not None and count is not None and count != len(values):
        raise ora(913 if len(values) > count else 947)
    return _Into(table, columns, values, when)


def multitable_postgres(text: str) -> str:
    """The multitable INSERT ``text`` as one PostgreSQL statement whose one value is the rows
    it inserted."""
    m = _read(text)
    ctes = [f"sluice_src AS MATERIALIZED ({m.subquery})"]
    for n, into in enumerate(m.intos):
        ctes.append(f"sluice_into{n} AS (INSERT INTO {into.table} {into.columns} "
                    f"{m.select(into, 'sluice_src')} RETURNING 1)")
    counts = " + ".join(f"(SELECT count(*) FROM sluice_into{n})" for n in range(len(m.intos)))
    return f"WITH {', '.join(ctes)} SELECT {counts}"


def multitable_sqlite(conn: Any, text: str, binds: dict | None) -> int:
    """Run the multitable INSERT ``text`` on the SQLite connection ``conn``; the rows inserted."""
    m = _read(text)
    rows = f"({m.subquery}) sluice_src"
    found = [conn.execute(m.select(into, rows), binds or ()).fetchall() for into in m.intos]
    for into, values in zip(m.intos, found):
        if values:
            conn.executemany(f"INSERT INTO {into.table} {into.columns} VALUES ({', '.join('?' for _ in values[0])})",
                             values)
    return sum(map(len, found))
