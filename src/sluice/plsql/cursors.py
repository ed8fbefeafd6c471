"""Cursors in a block: the cursor FOR loop, explicit cursors (``CURSOR c [(params)] IS …``,
``OPEN`` / ``FETCH … INTO`` / ``CLOSE``) and their attributes ``c%FOUND`` / ``%NOTFOUND`` /
``%ROWCOUNT`` / ``%ISOPEN``.

As Oracle's PL/SQL does:

* ``FOR r IN (SELECT …) LOOP`` / ``FOR r IN c[(args)] LOOP``: ``r`` is a record whose fields
  are the query's columns by name or alias (upper case unless quoted, ``r.id`` reads ``ID``);
  a declared cursor is opened for the loop (ORA-06511 if it is open already) and closed when
  the loop ends, however it ends;
* the query's rows are those at OPEN (Oracle's read consistency): OPEN runs the query and
  keeps its rows, so DML on the same table inside the loop does not change what is fetched;
* ``FETCH c INTO v1, v2`` / ``INTO rec`` (``rec c%ROWTYPE``): past the last row nothing is
  assigned and ``%NOTFOUND`` turns TRUE; ``FETCH c BULK COLLECT INTO coll [LIMIT n]`` fills
  collections with at most ``n`` rows (``%NOTFOUND`` TRUE once fewer came);
* OPEN of an open cursor is ORA-06511 (CURSOR_ALREADY_OPEN), FETCH / CLOSE of one that is not
  open, and its ``%FOUND`` / ``%NOTFOUND`` / ``%ROWCOUNT``, ORA-01001 (INVALID_CURSOR);
  ``%ISOPEN`` is FALSE then;
* an undeclared cursor is PLS-00201, a variable named as a cursor PLS-00456, a wrong
  argument list PLS-00306, a FETCH with the wrong number of variables PLS-00394 — all when
  the block is compiled, before anything runs (ORA-06550).

* a cursor whose query is FOR UPDATE (declared, a cursor variable's, a FOR loop's) locks its
  rows at OPEN (``Connection.query``); a FETCH after the block's COMMIT or ROLLBACK is
  ORA-01002; one a ``WHERE CURRENT OF`` names keeps its rows' identities (``currentof.py``).

The query's block variables and cursor parameters are bound as static SQL binds them
(``staticsql.bound_statement``).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ..errors import ora
from .composites import record_elements
from .currentof import for_update_at, row_identity, with_row_ids
from .errs import semantic_error, unexpected
from .lexer import BIND, EOF, IDENT
from .nodes import CursorDecl, CursorRef, CursorStmt, SqlStmt
from .objects import Record
from .staticsql import (ATTRIBUTES, BULK_ATTRIBUTES, bound_statement, collection_for, into_targets,
                        plain_value, resolve_sql, select_items, tables_named)
from .values import to_number


# ------------------------------------------------------------------- parsing
def parse_query(parser: Any, closing: str) -> SqlStmt:
    """The query at ``parser``'s token, up to (not through) ``closing`` (``;`` or the ``)``
    that closes an implicit cursor's parenthesis) at its own depth."""
    first = parser.tok
    if not first.is_word("SELECT", "WITH"):
        raise unexpected(first, ("select", "with"))
    tokens, depth = [], 0
    while True:
        tok = parser.tok
        if tok.kind == EOF:
            raise unexpected(tok, (closing,))
        if depth == 0 and (tok.is_op(closing) or tok.is_op(";")):
            break
        depth += 1 if tok.is_op("(") else -1 if tok.is_op(")") else 0
        tokens.append(parser.advance())
    parser.expect_op(closing)
    return SqlStmt("SELECT", tokens, [], False, first, tables=tables_named(tokens))


def parse_cursor_decl(parser: Any) -> CursorDecl:
    """``CURSOR name [(p [IN] type [:= | DEFAULT expr], …)] IS query;`` (at ``CURSOR``)."""
    parser.advance()
    name = parser.ident()
    params: list[tuple[str, Any]] = []
    if parser.accept_op("("):
        while True:
            param = parser.ident().value
            parser.accept_word("IN")
            parser.datatype()
            default = parser.expr() if parser.accept_op(":=") or parser.accept_word("DEFAULT") \
                else None
            params.append((param, default))
            if not parser.accept_op(","):
                break
        parser.expect_op(")", ",")
    parser.expect_word("IS", "(")
    return CursorDecl(name.value, params, parse_query(parser, ";"), name)


def parse_loop_cursor(parser: Any) -> CursorRef | None:
    """After ``FOR r IN``: the cursor a cursor FOR loop runs over, or None (a numeric range;
    the parser is left where it was)."""
    tok = parser.tok
    if tok.is_op("(") and parser.peek().is_word("SELECT", "WITH"):
        parser.advance()
        return CursorRef(None, [], parse_query(parser, ")"), tok)
    if tok.kind != IDENT:
        return None
    save = parser.pos
    name = parser.name()
    if len(name.segs) == 1 and parser.tok.is_word("LOOP"):
        return CursorRef(name.segs[0].name, name.segs[0].args or [], None, tok)
    parser.pos = save
    return None


def parse_cursor_stmt(parser: Any) -> CursorStmt:
    """``OPEN c[(args)];`` / ``FETCH c [BULK COLLECT] INTO … [LIMIT n];`` / ``CLOSE c;``."""
    word = parser.advance()
    name = parser.tok
    if name.kind == BIND and word.value != "OPEN":      # a cursor bound by the caller
        ref = CursorRef(name.value, [], None, name, var=parser.name(bind=True))
    elif name.kind != IDENT:
        raise unexpected(name, ("<an identifier>",))
    else:
        args = []
        if word.value == "OPEN":
            args = parser.name().segs[0].args or []
        else:
            parser.advance()
        ref = CursorRef(name.value, args, None, name)
    stmt = CursorStmt(word.value, ref, word)
    if word.value == "FETCH":
        stmt.bulk = bool(parser.accept_word("BULK"))
        if stmt.bulk:
            parser.expect_word("COLLECT")
        parser.expect_word("INTO", "bulk")
        stmt.into = into_targets(parser)
        if stmt.bulk and parser.accept_word("LIMIT"):
            stmt.limit = parser.expr()
    parser.expect_op(";")
    return stmt


# ----------------------------------------------------------------- resolving
def resolve_ref(ref: CursorRef, find: Callable[[str, str], Any],
                expr: Callable[[Any], None], element: Callable[[list], Any] = lambda toks: None
                ) -> None:
    """Which cursor ``ref`` names (``find(attr, name)`` looks in the block's scopes: the
    resolver's ``Scope.find``), its arguments checked and resolved (``expr``); a query in
    place has its variables resolved."""
    if ref.query is not None:
        resolve_query(ref.query, lambda name: find("vars", name) is not None, element)
        return
    ref.decl = cursor_named(ref.name, ref.tok, find)
    names = [param for param, _ in ref.decl.params]
    wrong = semantic_error(ref.tok.line, ref.tok.col, "PLS-00306: wrong number or types of "
                           f"arguments in call to '{ref.name}'")
    for i, arg in enumerate(ref.args):
        if arg.name is None and any(a.name is not None for a in ref.args[:i]):
            raise semantic_error(arg.tok.line, arg.tok.col, "PLS-00312: a positional parameter "
                                 "association may not follow a named association")
        param = names[i] if arg.name is None and i < len(names) else next(
            (n for n in names if arg.name in (n, n.lower())), None)
        if param is None or param in ref.given:
            raise wrong
        ref.given[param] = arg
        expr(arg.value)
    if any(default is None and param not in ref.given for param, default in ref.decl.params):
        raise wrong


def resolve_query(query: SqlStmt, is_variable: Callable[[str], bool],
                  element: Callable[[list], Any] = lambda toks: None) -> None:
    """A cursor's query: its variables, and (``element``, the resolver's) collections' elements."""
    resolve_sql(query, is_variable, lambda name: None, element=element)


def cursor_named(name: str, tok: Any, find: Callable[[str, str], Any],
                 attribute: bool = False) -> CursorDecl:
    """The cursor declared as ``name``: else PLS-00201, or for a variable PLS-00456 (PLS-00324
    for an ``%attribute`` of it)."""
    decl = find("cursors", name)
    if decl is None:
        if find("vars", name) is not None and attribute:
            raise semantic_error(tok.line, tok.col, "PLS-00324: cursor attribute may not be "
                                 f"applied to non-cursor '{name}'")
        if find("vars", name) is not None:
            raise semantic_error(tok.line, tok.col, f"PLS-00456: item '{name}' is not a cursor")
        raise semantic_error(tok.line, tok.col, f"PLS-00201: identifier '{name}' must be declared")
    return decl


def check_fetch(stmt: CursorStmt, is_record: Callable[[str], bool]) -> None:
    """A FETCH's variables against the cursor's written-out select list: PLS-00394 (one
    record takes the whole row; with BULK COLLECT, ``is_record`` says whether a collection's
    elements are records)."""
    first = stmt.into[0]
    if len(stmt.into) == 1 and not first.bind and len(first.segs) == 1 \
            and is_record(first.segs[0].name):
        return
    items = select_items(stmt.cursor.decl.query.tokens[1:])
    if items is not None and items != len(stmt.into):
        tok = stmt.into[0].tok
        raise semantic_error(tok.line, tok.col, "PLS-00394: wrong number of values in the INTO "
                             "list of a FETCH statement")


def locks_rows(toks: list) -> bool:
    """Does the query of ``toks`` end in FOR UPDATE (its own, not a subquery's)?"""
    return for_update_at(toks) is not None


def attribute_of(name: str) -> tuple[str, str] | None:
    """``("C", "FOUND")`` for a name ``C%FOUND`` (``expressions`` makes it), else None."""
    cursor, sep, attr = name.partition("%")
    known = attr in ATTRIBUTES or (cursor == "SQL" and attr in BULK_ATTRIBUTES)
    return (cursor, attr) if sep and known else None


# ------------------------------------------------------------------- running
class ExplicitCursor:
    """One declared cursor's state in a block run: its rows once OPEN ran the query."""

    def __init__(self, decl: CursorDecl, env: Any) -> None:
        self.decl, self.env = decl, env        # (its query sees the declaring block's variables)
        self.rows: list[tuple] | None = None   # None: closed
        self.columns: list[str] = []
        self.fetched = 0
        self.found: bool | None = None
        # a query FOR UPDATE: the transaction it was opened in (a FETCH after the COMMIT or
        # ROLLBACK that ended it is ORA-01002), else None
        self.locked_in: int | None = None
        self.row_ids: list | None = None       # the rows' identities, for WHERE CURRENT OF

    def opened(self, interp: Any, locking: bool) -> None:
        self.locked_in = interp.transactions if locking else None

    def check_fetch(self, interp: Any) -> None:
        """ORA-01001 when closed; ORA-01002 (fetch out of sequence) for a FOR UPDATE cursor
        whose transaction ended since OPEN: its row locks are gone."""
        if self.rows is None:
            raise ora(1001)
        if self.locked_in is not None and self.locked_in != interp.transactions:
            raise ora(1002)

    def attribute(self, name: str) -> Any:
        if name == "ISOPEN":
            return self.rows is not None
        if self.rows is None:
            raise ora(1001)
        if name == "ROWCOUNT":
            return self.fetched
        return None if self.found is None else self.found == (name == "FOUND")

    def close(self) -> None:
        if self.rows is None:
            raise ora(1001)
        self.rows, self.found = None, None


def _run_query(interp: Any, query: SqlStmt, env: Any) -> tuple[list[str], list[tuple]]:
    text, binds = bound_statement(interp, query, env)
    result = interp.execute(interp.conn, text, binds)
    return [str(c) for c in result.columns or ()], list(result.rows)


def open_cursor(interp: Any, ref: CursorRef, env: Any) -> ExplicitCursor:
    """OPEN: the cursor's parameters take the arguments (or their defaults), the query runs
    and its rows are kept."""
    state: ExplicitCursor = env.get(ref.name)
    if state.rows is not None:
        raise ora(6511)
    decl = state.decl
    values = {param: interp.eval(arg.value, env) for param, arg in ref.given.items()}
    scope = type(env)(state.env)
    for param, default in decl.params:
        scope.cells[param] = values[param] if param in values else interp.eval(default, scope)
    if decl.positioned:             # each row with its identity, last (WHERE CURRENT OF)
        state.columns, rows = _run_query(interp, with_row_ids(decl.query, row_identity(interp)), scope)
        state.columns.pop()
        state.rows, state.row_ids = [r[:-1] for r in rows], [r[-1] for r in rows]
    else:
        state.columns, state.rows = _run_query(interp, decl.query, scope)
    state.fetched, state.found = 0, None
    state.opened(interp, locks_rows(decl.query.tokens))
    return state


def loop_records(interp: Any, ref: CursorRef, env: Any) -> Iterator[Record]:
    """A cursor FOR loop's records; a declared cursor is closed when the loop ends (the
    caller closes this generator, as ``for`` over it inside ``contextlib.closing`` does)."""
    if ref.query is not None:                  # FOR r IN (SELECT …): a cursor of its own
        state = ExplicitCursor(None, env)
        state.columns, state.rows = _run_query(interp, ref.query, env)
        state.opened(interp, locks_rows(ref.query.tokens))
    else:
        state = open_cursor(interp, ref, env)
    try:
        while True:
            state.check_fetch(interp)
            if state.fetched >= len(state.rows):
                break
            row = state.rows[state.fetched]
            state.fetched, state.found = state.fetched + 1, True
            yield Record(state.columns, row)
        state.found = False
    finally:
        state.close()


def run_cursor_stmt(interp: Any, stmt: CursorStmt, env: Any) -> None:
    if stmt.word == "OPEN":
        open_cursor(interp, stmt.cursor, env)
        return
    state = cursor_state(interp, stmt.cursor, env)
    if stmt.word == "CLOSE":
        state.close()
        return
    state.check_fetch(interp)
    if stmt.bulk:
        limit = None if stmt.limit is None else _limit(interp.eval(stmt.limit, env))
        end = len(state.rows) if limit is None else min(len(state.rows), state.fetched + limit)
        rows = state.rows[state.fetched:end]
        records = len(stmt.into) == 1 and record_elements(plain_value(stmt.into[0], env))
        if len(state.columns) != len(stmt.into) and not records:
            raise ora(6504)
        state.fetched = end
        state.found = limit is not None and len(rows) == limit
        if records:                             # FETCH c BULK COLLECT INTO recs
            interp.assign(stmt.into[0], collection_for(interp, stmt.into[0], env, [
                Record(state.columns, row) for row in rows]), env)
            return
        for i, target in enumerate(stmt.into):
            interp.assign(target, collection_for(interp, target, env, [r[i] for r in rows]), env)
        return
    if state.fetched >= len(state.rows):
        state.found = False
        return
    row = state.rows[state.fetched]
    record = len(stmt.into) == 1 and isinstance(plain_value(stmt.into[0], env), Record)
    if not record and len(row) != len(stmt.into):
        raise ora(6504)                        # (the cursor stays where it was)
    state.fetched, state.found = state.fetched + 1, True
    if record:
        interp.assign(stmt.into[0], Record(state.columns, row), env)
        return
    for target, value in zip(stmt.into, row):
        interp.assign(target, value, env)


def cursor_state(interp: Any, ref: CursorRef, env: Any) -> "ExplicitCursor":
    """The cursor FETCH / CLOSE name: a declared cursor's state, or the one a cursor variable
    (or bind) holds — ORA-01001 when it holds none (never opened)."""
    return env.get(ref.name) if ref.var is None else cursor_value(interp.eval(ref.var, env))


def cursor_value(value: Any) -> "ExplicitCursor":
    """The cursor a cursor variable holds; ORA-01001 when it holds none (never opened)."""
    if not isinstance(value, ExplicitCursor):
        raise ora(1001)
    return value


def _limit(value: Any) -> int:
    """LIMIT's value: a positive whole number of rows (else ORA-06502)."""
    number = to_number(value)
    if number is None or number < 1:
        raise ora(6502, "LIMIT must be a positive number")
    return int(number)
