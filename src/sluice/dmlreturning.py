"""DML ``RETURNING … INTO``, as python-oracledb binds it.

``cur.execute("INSERT INTO t (id) VALUES (:1) RETURNING id INTO :2", [1, v])`` with
``v = cur.var(int)``: the statement runs with its ``RETURNING`` clause (SQLite ≥ 3.35 and
PostgreSQL have one) and ``INTO``'s placeholders are not sent — they are the variables
each returned column goes into.  As python-oracledb (since cx_Oracle 7), a variable's
value is the *list* of the column's values, one per row changed (``[]`` for none):
``v.getvalue()`` → ``[1]``; under ``executemany`` ``v.getvalue(i)`` is row ``i``'s list.

Values bound by position: ``INTO``'s placeholders are the last positions (they end the
statement); by name: the names ``INTO`` lists.  A value that is no ``cursor.var()``
there is bound and its returned values dropped, as python-oracledb's thin driver does.
A placeholder both before ``RETURNING`` and in ``INTO`` is python-oracledb's DPY-2048;
Oracle's answers to a malformed clause: ORA-00925 (``RETURNING`` without ``INTO``),
ORA-00947 / ORA-00913 (fewer / more variables than expressions), ORA-00933 (anything
after the variables).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from .errors import dpy, ora
from .fetchvars import Var
from .plsql.binds import bind_values
from .plsql.lexer import BIND, EOF, tokenize
from .plsql.script import StatementResult
from .plsql.staticsql import atomic_dml, returning_into
from .store.sqlnames import bind_names

__all__ = ["Returning", "returning_clause"]

_DML = ("INSERT", "UPDATE", "DELETE")


@dataclass(frozen=True)
class Returning:
    """A DML statement's ``RETURNING … INTO`` clause: ``dml`` is the statement without
    ``INTO``'s variables, ``into`` their names (upper-cased) in order."""

    dml: str
    into: tuple[str, ...]
    first_word: str

    def execute(self, conn: Any, binds: dict | Sequence | None, pos: int = 0) -> StatementResult:
        """Run the statement with ``binds`` (all of its placeholders', ``INTO``'s included);
        each ``INTO`` variable gets its column's values at ``pos`` (an ``executemany`` row).
        A value a variable cannot take (ORA-01722, ORA-00932) undoes the statement, as
        Oracle's statement fails."""
        values, targets = self._split(binds)
        text, values = bind_values(self.dml, self.first_word, values)
        outs = [(i, var) for i, var in enumerate(targets) if isinstance(var, Var)]
        for _, var in outs:
            var.check_returned(pos)

        def returned(rows: list) -> None:
            converted = [var.returned_values([row[i] for row in rows]) for i, var in outs]
            for (_, var), values in zip(outs, converted):     # all or none
                var.set_returned(pos, values)
        count = atomic_dml(conn, text, values or {}, returned)
        return StatementResult("dml", rowcount=count)

    def check_rows(self, rows: Any) -> None:
        """Before ``executemany`` runs a row: every row's variables have a place for it
        (DPY-2016), as python-oracledb checks the whole batch before sending it."""
        if isinstance(rows, list):
            for pos, binds in enumerate(rows):
                for var in self._split(binds)[1]:
                    if isinstance(var, Var):
                        var.check_returned(pos)

    def _split(self, binds: dict | Sequence | None) -> tuple[Any, list]:
        """(the DML's own binds, the ``INTO`` variables in order)."""
        n = len(self.into)
        if binds is None:
            raise ora(1008)
        if isinstance(binds, dict):
            by_name = {(k[1:] if str(k).startswith(":") else str(k)).upper(): k for k in binds}
            missing = [name for name in self.into if name not in by_name]
            if missing:
                raise ora(1008)
            targets = [binds[by_name[name]] for name in self.into]
            into_keys = {by_name[name] for name in self.into}
            return {k: v for k, v in binds.items() if k not in into_keys}, targets
        values = list(binds)
        expected = len(bind_names(self.dml)) + n
        if not values:
            raise ora(1008)
        if len(values) != expected:
            raise dpy(4009, expected, len(values))
        return values[:-n], values[-n:]


def returning_clause(statement: str) -> Returning | None:
    """The ``RETURNING … INTO`` clause of an INSERT / UPDATE / DELETE, or None when it
    has none (or is no such statement)."""
    if "RETURN" not in statement.upper():
        return None
    try:
        tokens = tokenize(statement)
    except Exception:      # (a statement the lexer refuses: the database words its error)
        return None
    if not tokens or not tokens[0].is_word(*_DML):
        return None
    clause = returning_into(tokens)
    if clause is None:
        return None
    _, expressions, into = clause
    if into is None or not tokens[into].is_word("INTO"):     # (BULK COLLECT is PL/SQL's)
        raise ora(925)
    names, i = [], into + 1
    while tokens[i].kind == BIND:
        names.append(tokens[i].value.upper())
        if not tokens[i + 1].is_op(","):
            i += 1
            break
        i += 2
    if tokens[i].kind != EOF or not names:
        raise ora(933 if names else 936)
    if len(names) < expressions:
        raise ora(947)
    if len(names) > expressions:
        raise ora(913)
    dml = statement[:tokens[into].start].rstrip()
    used = set(bind_names(dml))
    for name in names:
        if name in used:
            raise dpy(2048, name)
    return Returning(dml, tuple(names), tokens[0].value)
