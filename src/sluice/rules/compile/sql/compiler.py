"""Compile a rule condition to a SQL boolean expression, for SQLite and PostgreSQL.

::

    from sluice.rules import parse_condition
    from sluice.rules.compile.typed.resolvers import MappingResolver
    from sluice.rules.compile.sql.compiler import compile_sql, json_get

    resolver = MappingResolver({"PRIORITY": ("PRIORITY", "NUMBER"),
                                "TAB.USER_DATA.PRICE": json_get("USER_DATA", ("PRICE",), "NUMBER")})
    cond = compile_sql("priority > 2 AND tab.user_data.price > 30000", resolver, "postgresql")
    cur.execute(f"SELECT msgid FROM qt WHERE {cond.sql}", cond.params)

The result computes what the Python compiler computes -- TRUE, FALSE or NULL
(UNKNOWN) -- and is NULL where Python raises an evaluation error (see
:mod:`sluice.rules.compile.typed.lower`): a bad value never aborts the query.  Values
are always bound parameters; the only text pasted into SQL is the compiler's own.

Dialects:

* ``sqlite``: needs :func:`sluice.store.sqlitefns.register_sqlite_functions` on the
  connection.  NUMBER is INTEGER/REAL (64-bit integers exact, other numbers as
  IEEE doubles), DATE is INTEGER microseconds since 1970-01-01 (use
  :func:`sluice.store.sqlitefns.to_sqlite` for values you store), LIKE with a constant
  pattern becomes GLOB, which is case-sensitive whatever ``case_sensitive_like``
  says.  Built-in functions run the Python implementations.
* ``postgresql``: psycopg 3 placeholders (``%s``).  NUMBER is ``numeric``, DATE
  ``timestamp``, RAW ``bytea``; text ordering uses ``COLLATE "C"`` (code point
  order, as Python).  Division keeps PostgreSQL's numeric precision (at least
  16 significant digits; Python keeps 38).  No user functions are needed.

What a dialect cannot express exactly raises
:class:`sluice.rules.compile.typed.ir.NotCompilable` (run the condition in Python
instead): member calls without an LCR resolver
(:class:`sluice.rules.compile.typed.lcrschema.LcrResolver` maps the LCR ones onto an LCR
table), TO_DATE of a column and CHAR-to-DATE comparisons on PostgreSQL, number format models
and INSTR with a start before 1 or an occurrence on PostgreSQL, LIKE with a
run-time escape character on PostgreSQL.

Known differences that remain, all outside ordinary rule conditions: numbers
beyond the targets' precision (SQLite: 64-bit integers and doubles; both
dialects: text with an exponent of 5+ digits is no number); division (see
above); PostgreSQL's ``+ - *`` are exact where NUMBER keeps 38 digits
(``12345678901234567890 + 1E-30`` is ``12345678901234567890`` in Python, as
in Oracle); a BINARY_DOUBLE (a Python float) is a ``numeric`` on PostgreSQL,
so it neither overflows nor underflows; ``upper``/``lower`` of non-ASCII text
on PostgreSQL follow the database locale (SQLite runs Python's); text whose
length is huge enough to overflow a 32-bit position.

The modules behind it: :mod:`sluice.rules.compile.typed.lower` (Oracle semantics, once for every
target), :mod:`base` (fragments), :mod:`sqlite` + :mod:`sluice.store.sqlitefns` and
:mod:`postgres` (the two spellings).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ....store.sqlitefns import to_sqlite
from ...lang.ast import Expr
from ...lang.parser import parse_condition
from ..typed import ir
from ..typed.ir import Node, NotCompilable
from ..typed.lower import TargetResolver, lower_condition
from .base import NOW, SYSDATE
from .postgres import PostgresRenderer
from .sqlite import SqliteRenderer

__all__ = ["SqlCondition", "compile_sql", "json_get", "NotCompilable", "DIALECTS"]

DIALECTS = ("sqlite", "postgresql")


@dataclass(frozen=True)
class SqlCondition:
    """A compiled condition: ``sql`` to put in a WHERE clause, with ``params``."""

    sql: str
    raw_params: tuple
    dialect: str

    @property
    def params(self) -> tuple:
        """The parameters for one execution (SYSDATE and SYSTIMESTAMP are read now)."""
        if not any(p is NOW or p is SYSDATE for p in self.raw_params):
            return self.raw_params
        now = datetime.now()
        convert = to_sqlite if self.dialect == "sqlite" else (lambda v: v)
        return tuple(convert(p.at(now)) if p is NOW or p is SYSDATE else p for p in self.raw_params)


def compile_sql(condition: str | Expr, resolver: TargetResolver, dialect: str = "sqlite") -> SqlCondition:
    """Compile ``condition`` for ``dialect``.

    :raises DatabaseError: the Python compiler's compile-time errors (ORA-00904 ...).
    :raises NotCompilable: the condition needs the Python compiler.
    """
    tree = parse_condition(condition) if isinstance(condition, str) else condition
    renderer = {"sqlite": SqliteRenderer, "postgresql": PostgresRenderer}[dialect]()
    text, params = renderer.render(lower_condition(tree, resolver))
    return SqlCondition(text, params, dialect)


def json_get(column: str, path: tuple[str, ...], kind: str = "CHAR") -> Node:
    """IR for a scalar inside a JSON document column, for resolvers.

    ``kind="NUMBER"`` reads it as a number (NULL when it does not spell one).
    Keys are matched exactly: store payload keys upper-case to match Oracle's
    attribute names.
    """
    text = ir.op("json_get", "CHAR", ir.Column("CHAR", column), extra=(tuple(path),))
    return ir.op("num_of_char", "NUMBER", text) if kind == "NUMBER" else text
