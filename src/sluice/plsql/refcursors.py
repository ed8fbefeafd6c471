"""Cursor variables: ``SYS_REFCURSOR`` and ``TYPE rc IS REF CURSOR [RETURN …]`` variables,
``OPEN cv FOR query`` / ``OPEN cv FOR 'text' [USING …]``, and ``DBMS_SQL.RETURN_RESULT``.

As Oracle's PL/SQL does:

* a cursor variable starts out unopened: FETCH / CLOSE of it and its ``%FOUND`` /
  ``%NOTFOUND`` / ``%ROWCOUNT`` are ORA-01001 (INVALID_CURSOR), ``%ISOPEN`` FALSE;
* ``OPEN cv FOR`` runs the query and keeps its rows (read consistency, as an explicit
  cursor's OPEN); OPEN of an open cursor variable closes it and opens it again for the new
  query (no ORA-06511, unlike an explicit cursor); the static query binds the block's
  variables as static SQL does, the dynamic one takes ``USING``'s values by position;
* ``cv2 := cv1`` makes both name the one cursor (a re-OPEN of either is seen by both), and
  a bind (``OPEN :rc FOR …``, ``:rc := cv``) hands the cursor to the caller: a
  python-oracledb cursor or ``cursor.var(DB_TYPE_CURSOR)`` (``sluice.refcursors``);
* FETCH … INTO / BULK COLLECT INTO [LIMIT] and CLOSE work as on an explicit cursor
  (``cursors.py``, which they share);
* ``DBMS_SQL.RETURN_RESULT(cv)`` returns the cursor's rows not fetched yet to the client
  (``cursor.getimplicitresults()``); the variable no longer holds them (it is closed).
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ora
from .cursors import ExplicitCursor, cursor_value, locks_rows, parse_query
from .lexer import BIND
from .nodes import Name, OpenFor, RefCursorType, Seg
from .staticsql import bound_statement
from .values import to_text

# the predefined weak REF CURSOR type; a declared REF CURSOR type's variables are read as it
SYS_REFCURSOR = "SYS_REFCURSOR"
_QUERY = re.compile(r"\s*\(*\s*(SELECT|WITH)\b", re.I)
_FOR_UPDATE = re.compile(r"\bFOR\s+UPDATE\b", re.I)


# ------------------------------------------------------------------- parsing
def at_ref_cursor_type(parser: Any) -> bool:
    """``TYPE name IS REF CURSOR`` at the parser's token (else another TYPE declaration)."""
    return parser.tok.is_word("TYPE") and parser.peek(2).is_word("IS") and \
        parser.peek(3).is_word("REF")


def parse_ref_cursor_type(parser: Any) -> RefCursorType:
    """``TYPE name IS REF CURSOR [RETURN type | rec%ROWTYPE];`` (a strong type's RETURN is
    read, not checked: every cursor variable here is as weak as SYS_REFCURSOR)."""
    parser.advance()
    name = parser.ident()
    parser.expect_word("IS")
    parser.expect_word("REF")
    parser.expect_word("CURSOR")
    if parser.accept_word("RETURN"):
        parser.datatype()
    parser.expect_op(";", "return")
    return RefCursorType(name.value, name)


def at_open_for(parser: Any) -> bool:
    """``OPEN :bind …`` / ``OPEN name FOR …`` at the parser's token (``OPEN``)."""
    return parser.peek().kind == BIND or parser.peek(2).is_word("FOR")


def parse_open_for(parser: Any) -> OpenFor:
    """``OPEN cv FOR select …;`` or ``OPEN cv FOR expr [USING [IN] arg, …];`` (at OPEN)."""
    word = parser.advance()
    target = parser.name(bind=parser.tok.kind == BIND)
    parser.expect_word("FOR")
    if parser.tok.is_word("SELECT", "WITH"):
        return OpenFor(target, parse_query(parser, ";"), None, [], word)
    dynamic = parser.expr()
    using = []
    if parser.accept_word("USING"):
        while True:
            parser.accept_word("IN")
            using.append(parser.expr())
            if not parser.accept_op(","):
                break
    parser.expect_op(";", "using")
    return OpenFor(target, None, dynamic, using, word)


def variable_name(ref_tok: Any, name: str) -> Name:
    """The Name node of cursor variable ``name`` (for the resolver to resolve)."""
    return Name([Seg(name, ref_tok.text, None, ref_tok)], ref_tok)


# ------------------------------------------------------------------- running
class CursorVariable(ExplicitCursor):
    """One cursor a cursor variable (or a bind) points at: the rows OPEN … FOR kept, and
    the description python-oracledb gives a REF CURSOR."""

    def __init__(self) -> None:
        super().__init__(None, None)
        self.description: list[tuple] | None = None

    def load(self, result: Any) -> None:
        self.columns = [str(c) for c in result.columns or ()]
        self.description = result.description
        self.rows, self.fetched, self.found = list(result.rows), 0, None

    def returned(self) -> "CursorVariable":
        """DBMS_SQL.RETURN_RESULT: a cursor of the rows not fetched yet; this one is closed."""
        if self.rows is None:
            raise ora(1001)
        copy = CursorVariable()
        copy.columns, copy.description = self.columns, self.description
        copy.rows, self.rows, self.found = self.rows[self.fetched:], None, None
        return copy


def run_open_for(interp: Any, stmt: OpenFor, env: Any) -> None:
    if stmt.query is not None:
        text, binds = bound_statement(interp, stmt.query, env)
        locking = locks_rows(stmt.query.tokens)
    else:
        text = to_text(interp.eval(stmt.dynamic, env)) or ""
        binds = [interp.eval(arg, env) for arg in stmt.using] or None
        if not _QUERY.match(text):        # (checked before it runs: a DML statement would)
            raise ora(900, "OPEN … FOR takes a query")
        locking = _FOR_UPDATE.search(text) is not None
    result = interp.execute(interp.conn, text, binds)
    current = interp.eval(stmt.target, env)
    state = current if isinstance(current, CursorVariable) else CursorVariable()
    state.load(result)
    state.opened(interp, locking)
    interp.assign(stmt.target, state, env)


def attribute(value: Any, name: str) -> Any:
    """``cv%ISOPEN`` & co of what a cursor variable (or an explicit cursor) holds."""
    if value is None and name == "ISOPEN":
        return False
    return cursor_value(value).attribute(name)


class DbmsSql:
    """``DBMS_SQL``'s implicit results: the cursors a block returns to its caller."""

    def __init__(self, returned: list) -> None:
        self._returned = returned

    def return_result(self, rc: Any, to_client: bool = True) -> None:
        self._returned.append(cursor_value(rc).returned())
