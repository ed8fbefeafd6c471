"""``FORALL`` (PL/SQL Language Reference, "FORALL Statement") and the implicit cursor's
bulk attributes ``SQL%BULK_ROWCOUNT`` / ``SQL%BULK_EXCEPTIONS``::

    FORALL i IN lower .. upper              [SAVE EXCEPTIONS] dml;
    FORALL i IN INDICES OF c [BETWEEN a AND b] [SAVE EXCEPTIONS] dml;
    FORALL i IN VALUES OF c                 [SAVE EXCEPTIONS] dml;

As Oracle's PL/SQL does:

* the DML statement (INSERT / UPDATE / DELETE, ``staticsql.py``) runs once per index, with
  the collections' elements ``v(i)`` / ``r(i).f`` (and ``INSERT … VALUES v(i)``, a whole
  record) bound; ``i`` may stand only as a subscript (PLS-00430) and the statement must
  bind a collection element (PLS-00435);
* the range's bounds are evaluated once (NULL is ORA-06502; lower above upper runs
  nothing); a missing element in the range is ORA-22160; INDICES OF takes the existing
  indexes in order (sparse collections), VALUES OF the index collection's values;
* ``SQL%ROWCOUNT`` is the rows all executions changed, ``SQL%BULK_ROWCOUNT(i)`` those of the
  execution for index ``i`` (summed when VALUES OF repeats an index);
* without SAVE EXCEPTIONS the first failing execution stops the FORALL: its own changes are
  undone (statement-level rollback), the earlier executions' stay (the block's handler
  decides; unhandled, the whole block is rolled back);
* with SAVE EXCEPTIONS every execution is tried; the failures are kept in
  ``SQL%BULK_EXCEPTIONS`` (``.COUNT``, ``(j).ERROR_INDEX`` -- the iteration's number, 1 for
  the first execution -- and ``(j).ERROR_CODE``, the positive ORA number) and ORA-24381
  is raised at the end;
* ``RETURNING … BULK COLLECT INTO`` gathers the rows of all executions.

Each execution is a statement of its own through the connection, as python-oracledb's
``executemany`` is (``cursor.executemany`` runs one statement per row too): the
store's statement-level rollback gives the semantics above.
"""

from __future__ import annotations

from typing import Any

from ..errors import DatabaseError, ora
from .composites import (COLLECTIONS, AssocArray, CollectionType, RecordType, ScalarType,
                         integer, is_null)
from .errs import semantic_error, unexpected
from .nodes import ForAll
from .staticsql import KINDS, assign_rows, atomic_dml, bound_statement, parse_sql
from .values import to_number

_ROWCOUNTS = CollectionType("SQL%BULK_ROWCOUNT", "ASSOC", ScalarType())
_ERROR = RecordType("SQL%BULK_EXCEPTIONS", [("ERROR_INDEX", ScalarType(), None),
                                            ("ERROR_CODE", ScalarType(), None)])
_ERRORS = CollectionType("SQL%BULK_EXCEPTIONS", "ASSOC", _ERROR)


# ------------------------------------------------------------------- parsing
def parse_forall(parser: Any) -> ForAll:
    """The FORALL statement at ``parser``'s token, through its DML's ``;``."""
    tok = parser.advance()
    var = parser.ident()
    parser.expect_word("IN")
    node = ForAll(var.value, None, tok)      # (its statement follows)
    if parser.accept_word("INDICES"):
        parser.expect_word("OF")
        node.indices_of = parser.name()
        if parser.accept_word("BETWEEN"):
            node.low = parser._additive()
            parser.expect_word("AND")
            node.high = parser._additive()
    elif parser.accept_word("VALUES"):
        parser.expect_word("OF")
        node.values_of = parser.name()
    else:
        node.low = parser.expr()
        parser.expect_op("..")
        node.high = parser.expr()
    if parser.accept_word("SAVE"):
        parser.expect_word("EXCEPTIONS")
        node.save_exceptions = True
    if not parser.tok.is_word(*KINDS) or parser.tok.is_word("SELECT"):
        raise unexpected(parser.tok, ("delete", "insert", "merge", "update", "execute", "save"))
    node.sql = parse_sql(parser)
    return node


# ----------------------------------------------------------------- resolving
def check_forall(node: ForAll) -> None:
    """After the statement is resolved: the index only as a subscript, a collection bound."""
    sql = node.sql
    if node.var in sql.variables.values():
        at = next(sql.tokens[i] for i, name in sql.variables.items() if name == node.var)
        raise semantic_error(at.line, at.col, f"PLS-00430: FORALL iteration variable "
                             f"{node.var} is not allowed in this context")
    if not sql.elements:
        raise semantic_error(node.tok.line, node.tok.col, "PLS-00435: DML statement without "
                             "BULK In-BIND cannot be used inside FORALL")


# ------------------------------------------------------------------- running
def bulk_attributes(rowcounts: dict, errors: list[tuple[int, int]]) -> dict[str, Any]:
    """The values of ``SQL%BULK_ROWCOUNT`` and ``SQL%BULK_EXCEPTIONS`` after a FORALL."""
    return {"BULK_ROWCOUNT": AssocArray(_ROWCOUNTS, rowcounts),
            "BULK_EXCEPTIONS": AssocArray(_ERRORS, {j: _ERROR.from_row(error)
                                                    for j, error in enumerate(errors, 1)})}


def run_forall(interp: Any, node: ForAll, env: Any) -> None:
    """Run ``node`` in ``interp`` (the block's Interpreter) with the variables of ``env``."""
    cursor, conn, sql = interp.implicit, interp.conn, node.sql
    rowcounts: dict = {}
    errors: list[tuple[int, int]] = []
    returned: list = []
    total = 0
    direct = hasattr(conn, "execute_dml")     # (the text is bound already: no script pass)
    try:
        for iteration, index in enumerate(_indexes(interp, node, env), 1):
            scope = type(env)(env)
            scope.cells[node.var] = index
            try:
                text, binds = bound_statement(interp, sql, scope)
            except DatabaseError as exc:
                if exc.code == 1403:              # (a deleted or missing element)
                    raise ora(22160, index) from None
                raise
            rowcounts.setdefault(index, 0)
            try:
                count = atomic_dml(conn, text, binds, returned.extend) if sql.into else \
                    conn.execute_dml(text, binds) if direct else \
                    interp.execute(conn, text, binds).rowcount
            except DatabaseError as exc:
                if not node.save_exceptions:
                    raise
                errors.append((iteration, exc.code))
                continue
            rowcounts[index] += count
            total += count
    finally:
        cursor.done(total)
        cursor.bulk = bulk_attributes(rowcounts, errors)
    if sql.into:
        assign_rows(interp, sql, env, returned)
    if errors:
        raise ora(24381)


def _indexes(interp: Any, node: ForAll, env: Any) -> list:
    if node.indices_of is None and node.values_of is None:
        low, high = interp.eval(node.low, env), interp.eval(node.high, env)
        if low is None or high is None:
            raise ora(6502, "FORALL bound is NULL")
        return list(range(integer(low), integer(high) + 1))
    collection = interp.eval(node.indices_of or node.values_of, env)
    if is_null(collection):
        return []
    if isinstance(collection, COLLECTIONS):
        indexes = collection.indexes()
    elif isinstance(collection, dict):
        indexes = sorted(collection)
    else:
        indexes = list(range(1, len(collection) + 1))
    if node.values_of is not None:
        values = [collection.get(i) if isinstance(collection, COLLECTIONS) else
                  collection[i] if isinstance(collection, dict) else collection[i - 1]
                  for i in indexes]
        if any(v is None for v in values):
            raise ora(22160, "NULL")
        return [integer(v) for v in values]
    if node.low is not None:
        low, high = interp.eval(node.low, env), interp.eval(node.high, env)
        if low is None or high is None:
            return []
        indexes = [i for i in indexes if to_number(low) <= i <= to_number(high)]
    return indexes
