"""``UPDATE / DELETE … WHERE CURRENT OF c`` in a block: the row cursor ``c`` fetched last.

As Oracle's PL/SQL does: ``c`` must be an explicit cursor declared FOR UPDATE (PLS-00404
when the block is compiled); the statement changes the row ``c`` fetched last — ORA-01001
when ``c`` is not open, ORA-01410 before its first FETCH or after its last row, ORA-01002
once the transaction that locked the rows ended (``cursors.ExplicitCursor.check_fetch``).

The row is found by its identity in the store: the connection's ``row_identity`` hook names it
(SQLite's ``ROWID``, PostgreSQL's ``CTID``; stable while the transaction holds the row's lock).
The OPEN of a cursor a CURRENT OF names selects it as a last, hidden column
(:func:`with_row_ids`); the statement runs as ``… WHERE <identity> = :row``.  Left: a cursor
over more than one table, a RETURNING clause after CURRENT OF (PLS-00999).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ..errors import ora
from .errs import pls_error, semantic_error
from .lexer import IDENT, OP, Token
from .nodes import CursorDecl, SqlStmt
from .staticsql import run_sql, tables_named

# the cell a positioned statement's row identity is bound from (no PL/SQL name can be it)
_ROW = "SLUICE ROW"


def for_update_at(toks: list) -> int | None:
    """Where the query of ``toks`` has its own FOR UPDATE (not a subquery's), or None."""
    depth = 0
    for i, tok in enumerate(toks[:-1]):
        depth += 1 if tok.is_op("(") else -1 if tok.is_op(")") else 0
        if depth == 0 and tok.is_word("FOR") and toks[i + 1].is_word("UPDATE"):
            return i
    return None


def resolve_current_of(stmt: SqlStmt, named: Callable[[str, Any], CursorDecl]) -> None:
    """A CURRENT OF in ``stmt`` (UPDATE / DELETE): its cursor (``named(name, tok)``: the
    declared one, else the resolver's PLS- error) checked and marked to keep its rows'
    identities."""
    toks = stmt.tokens
    at = next((i for i in range(1, len(toks) - 2) if toks[i].is_word("CURRENT") and
               toks[i - 1].is_word("WHERE") and toks[i + 1].is_word("OF")), None)
    if at is None:
        return
    tok = toks[at + 2]
    decl = named(tok.value, tok)
    locking = for_update_at(decl.query.tokens)
    if locking is None:
        raise semantic_error(tok.line, tok.col, f"PLS-00404: cursor '{decl.name}' must be "
                             "declared with FOR UPDATE to use with CURRENT OF")
    if len(tables_named(decl.query.tokens[:locking])) != 1 or at + 3 != len(toks):
        raise pls_error(tok.line, tok.col, "PLS-00999: implementation restriction (may be "
                        "temporary) WHERE CURRENT OF a cursor over more than one table, or with "
                        "more after it, is not supported by the Sluice interpreter")
    decl.positioned = True
    stmt.current_of = (at, decl.name)


def row_identity(interp: Any) -> str:
    """The store's name of a row's identity (the connection's ``row_identity`` hook)."""
    hook = getattr(interp.conn, "row_identity", None)
    if hook is None:
        raise ora(6550, 1, 1, "PLS-00999: implementation restriction (may be temporary) "
                  "WHERE CURRENT OF is not supported by this connection")
    return hook()


def with_row_ids(query: SqlStmt, column: str) -> SqlStmt:
    """``query`` with ``column`` (the row's identity) added last to its select list."""
    depth, at = 0, 0
    for i, tok in enumerate(query.tokens):
        depth += 1 if tok.is_op("(") else -1 if tok.is_op(")") else 0
        if depth == 0 and tok.is_word("FROM"):
            at = i
            break
    first = query.tokens[at]
    extra = [Token(OP, ",", ",", first.line, first.col, first.start, first.start),
             Token(IDENT, column.upper(), column, first.line, first.col, first.start + 1,
                   first.start + 1)]

    def shifted(kept: dict) -> dict:
        return {i + 2 if i >= at else i: v for i, v in kept.items()}
    return dataclasses.replace(query, tokens=query.tokens[:at] + extra + query.tokens[at:],
                               variables=shifted(query.variables), fields=shifted(query.fields))


def run_positioned(interp: Any, stmt: SqlStmt, env: Any) -> None:
    """Run ``stmt`` on the row its cursor fetched last."""
    at, name = stmt.current_of
    state = env.get(name)                  # (cursors.ExplicitCursor)
    state.check_fetch(interp)
    if not state.found:
        raise ora(1410)
    toks, column = stmt.tokens, row_identity(interp)
    current, of = toks[at], toks[at + 1]          # CURRENT OF c -> <identity> = <c's row's>
    positioned = [dataclasses.replace(current, kind=IDENT, value=column.upper(), text=column),
                  dataclasses.replace(of, kind=OP, value="=", text="="), toks[at + 2]]
    scope = type(env)(env)
    scope.cells[_ROW] = state.row_ids[state.fetched - 1]
    run_sql(interp, dataclasses.replace(stmt, tokens=toks[:at] + positioned,
                                        variables={**stmt.variables, at + 2: _ROW}, current_of=None),
            scope)
