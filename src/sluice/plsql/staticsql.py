"""Static SQL inside a block: ``SELECT … [BULK COLLECT] INTO``, ``INSERT`` / ``UPDATE`` /
``DELETE`` with an optional ``RETURNING … [BULK COLLECT] INTO``, ``MERGE`` (the store's
``execute_dml`` runs it: ``store/sqlmerge.py``), and the implicit cursor's
attributes ``SQL%ROWCOUNT`` / ``%FOUND`` / ``%NOTFOUND`` / ``%ISOPEN``.

As Oracle's PL/SQL does:

* a block's variables named in the statement are bound, as are its bind variables; a
  variable counts where an expression may stand (not a qualified name ``t.col``, not a
  function name, not the table after ``FROM`` / ``INTO`` / ``UPDATE`` / ``JOIN`` / ``USING``, not
  ``INSERT``'s column list nor ``UPDATE … SET``'s targets, MERGE's too), and not when a table the
  statement names has a column of that name: the column wins, as Oracle resolves it
  (``DELETE FROM t WHERE id = id`` deletes every row);
* ``SELECT … INTO`` takes exactly one row: none is ORA-01403 (NO_DATA_FOUND), more is
  ORA-01422 (TOO_MANY_ROWS, SQL%ROWCOUNT 1);
* ``RETURNING … INTO`` takes the row the statement changed: none leaves the variables
  NULL (no exception), more than one is ORA-01422 and the statement is undone (Oracle's
  statement-level rollback; the block's earlier work stays);
* ``BULK COLLECT INTO`` fills collections, one element per row (none: empty); one collection
  of records (a type the block declared, ``localtypes.py``) takes whole rows;
* an element ``v(i)`` / ``v(i).f`` of a collection the block declared is bound as its value,
  and ``INSERT … VALUES rec`` binds a record's fields in order (those of a ``%ROWTYPE``
  record assigned field by field name their columns);
* ``SQL%ROWCOUNT`` is the rows the last statement changed or fetched, NULL before any;
  ``SQL%FOUND`` / ``%NOTFOUND`` NULL before any; ``SQL%ISOPEN`` always FALSE.

The running is :func:`atomic_dml` (also ``sluice.dmlreturning``'s, one home) and the
``RETURNING … INTO`` scan :func:`returning_into` (both callers').
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import ora
from .binds import bound
from .errs import pls_error, unexpected
from .lexer import BIND, EOF, IDENT, Token
from .composites import COLLECTIONS, positional_records, record_elements, row_columns
from .nodes import Name, Seg, SqlStmt
from .objects import Record, lookup, record_values

KINDS = ("SELECT", "INSERT", "UPDATE", "DELETE", "MERGE")
ATTRIBUTES = ("ROWCOUNT", "FOUND", "NOTFOUND", "ISOPEN")
BULK_ATTRIBUTES = ("BULK_ROWCOUNT", "BULK_EXCEPTIONS")     # the SQL cursor's, after a FORALL
# a name right after one of these words is a table, not a value
_OBJECT_AFTER = frozenset({"FROM", "INTO", "UPDATE", "JOIN", "TABLE", "USING"})
# words that may follow a table name where an alias could stand
_CLAUSE_WORDS = frozenset("""WHERE SET VALUES GROUP ORDER HAVING CONNECT START UNION MINUS
    INTERSECT EXCEPT JOIN INNER LEFT RIGHT FULL CROSS NATURAL ON USING RETURNING RETURN FOR
    FETCH OFFSET SELECT WITH PARTITION""".split())
# INSERT's words after which a parenthesis is no column list
_NOT_COLUMNS = ("VALUES", "SELECT", "WITH")


# ------------------------------------------------------------ shared scanning
def returning_into(tokens: list[Token], start: int = 0) -> tuple[int, int, int | None] | None:
    """``(index of RETURNING, its expression count, index of INTO or None)`` of the DML
    statement in ``tokens[start:]`` (up to its end or a ``;``), or None without one."""
    depth, at, commas = 0, None, 0
    for i in range(start, len(tokens)):
        tok = tokens[i]
        if tok.kind == EOF or (depth == 0 and tok.is_op(";")):
            break
        if tok.is_op("("):
            depth += 1
        elif tok.is_op(")"):
            depth -= 1
        elif depth == 0 and at is None and tok.is_word("RETURNING", "RETURN"):
            at = i
        elif depth == 0 and at is not None and tok.is_op(","):
            commas += 1
        elif depth == 0 and at is not None and _into_start(tokens, i):
            return at, commas + 1, i
    return None if at is None else (at, commas + 1, None)


def _into_start(tokens: list[Token], i: int) -> bool:
    """``INTO`` or ``BULK COLLECT`` at ``tokens[i]``."""
    return tokens[i].is_word("INTO") or (tokens[i].is_word("BULK") and i + 1 < len(tokens)
                                         and tokens[i + 1].is_word("COLLECT"))


def atomic_dml(conn: Any, text: str, binds: dict, returned: Callable[[list], None]) -> int:
    """Run a DML statement with a ``RETURNING`` clause: ``returned(rows)`` is called with its
    rows; an exception it raises (a value a variable cannot take, too many rows) undoes the
    statement alone, as Oracle's statement fails (the connection's ``statement`` hook)."""
    hook = getattr(conn, "statement", None)
    with hook() if hook is not None else contextlib.nullcontext():
        return conn.execute_dml(text, binds, returned)


# ------------------------------------------------------------------- parsing
def parse_sql(parser: Any) -> SqlStmt:
    """The statement at ``parser``'s token (one of :data:`KINDS`), through its ``;``."""
    first = parser.tok
    kind = first.value
    kept: list[int] = []
    into: list[Name] = []
    bulk = False
    expressions = None
    clause = returning_into(parser.toks, parser.pos) if kind != "SELECT" else None
    if clause is not None:
        expressions = clause[1]
        if clause[2] is None:
            tok = parser.toks[clause[0]]
            raise pls_error(tok.line, tok.col, "PL/SQL: ORA-00925: missing INTO keyword")
    depth = 0
    while True:
        tok = parser.tok
        if tok.kind == EOF:
            raise unexpected(tok, (";",))
        if depth == 0 and tok.is_op(";"):
            break
        at_into = depth == 0 and not into and _into_start(parser.toks, parser.pos) and (
            parser.pos == clause[2] if clause is not None else kind == "SELECT")
        if at_into:
            if kind == "SELECT":
                expressions = select_items([parser.toks[i] for i in kept[1:]])
            bulk = bool(parser.accept_word("BULK"))
            if bulk:
                parser.expect_word("COLLECT")
            parser.expect_word("INTO")
            into = into_targets(parser)
            if clause is not None and not parser.tok.is_op(";"):
                raise unexpected(parser.tok, (";",))
            continue
        depth += 1 if tok.is_op("(") else -1 if tok.is_op(")") else 0
        kept.append(parser.pos)
        parser.advance()
    parser.expect_op(";")
    if kind == "SELECT" and not into:
        raise pls_error(first.line, first.col,
                        "PLS-00428: an INTO clause is expected in this SELECT statement")
    record = len(into) == 1                 # (a record or records? the resolver says)
    if expressions is not None and expressions != len(into) and not (record and expressions > 1):
        tok = into[0].tok
        code = "ORA-00947: not enough values" if len(into) < expressions else \
            "ORA-00913: too many values"
        raise pls_error(tok.line, tok.col, f"PL/SQL: {code}")
    tokens = [parser.toks[i] for i in kept]
    return SqlStmt(kind, tokens, into, bulk, first, tables=tables_named(tokens), width=expressions)


def tables_named(toks: list[Token]) -> list[str]:
    """The tables (and views) the statement names: after FROM / INTO / UPDATE / JOIN, and
    FROM's comma list (``FROM a x, b y``), as written (``schema.table`` too)."""
    return [name for name, _ in _table_refs(toks)]


def _qualifiers(toks: list[Token]) -> frozenset[str]:
    """The names that may qualify a column in the statement: its tables' and their aliases."""
    return frozenset(word.upper() for name, alias in _table_refs(toks)
                     for word in (name.split(".")[-1].strip('"'), alias) if word)


def _table_refs(toks: list[Token]) -> list[tuple[str, str | None]]:
    """The statement's tables as written, each with its alias (or None)."""
    tables: list[tuple[str, str | None]] = []
    i, n = 0, len(toks)
    while i < n:
        if not (toks[i].is_word(*_OBJECT_AFTER) and i + 1 < n and toks[i + 1].kind == IDENT) \
                or (i and toks[i - 1].is_word("FOR")):          # (FOR UPDATE OF col: no table)
            i += 1
            continue
        listing = toks[i].is_word("FROM")
        while True:
            i += 1
            j = i + 1
            while j + 1 < n and toks[j].is_op(".") and toks[j + 1].kind == IDENT:
                j += 2
            name, alias = "".join(t.text for t in toks[i:j]), None
            i = j
            if i < n and toks[i].kind == IDENT and not toks[i].is_word(*_CLAUSE_WORDS):
                alias = toks[i].value                   # an alias
                i += 1
            tables.append((name, alias))
            if not (listing and i + 1 < n and toks[i].is_op(",") and toks[i + 1].kind == IDENT):
                break
    return tables


def select_items(toks: list[Token]) -> int | None:
    """How many items a select list has, None if it has a ``*`` (known when it runs)."""
    depth, items = 0, 1
    for i, tok in enumerate(toks):
        depth += 1 if tok.is_op("(") else -1 if tok.is_op(")") else 0
        if depth == 0 and tok.is_op(","):
            items += 1
        elif depth == 0 and tok.is_op("*") and (i == 0 or toks[i - 1].is_op(",", ".")
                                               or toks[i - 1].is_word("DISTINCT", "ALL", "UNIQUE")):
            return None
    return items


def into_targets(parser: Any) -> list[Name]:
    targets = []
    while True:
        if parser.tok.kind not in (IDENT, BIND):
            raise unexpected(parser.tok, ("<an identifier>", "<a bind variable>"))
        targets.append(parser.name(bind=parser.tok.kind == BIND))
        if not parser.accept_op(","):
            return targets


def cursor_attribute(parser: Any) -> Name:
    """``SQL%ROWCOUNT`` & co, and an explicit cursor's ``c%NOTFOUND`` (the parser is at the
    cursor's name, followed by ``%``)."""
    sql = parser.advance()
    parser.advance()
    attr = parser.ident(*(a.lower() for a in ATTRIBUTES))
    bulk = attr.value in BULK_ATTRIBUTES and sql.is_word("SQL")
    if attr.value not in ATTRIBUTES and not bulk:
        raise pls_error(attr.line, attr.col, "PLS-00999: implementation restriction (may be "
                        f"temporary) {sql.value}%{attr.value} is not supported by the Sluice "
                        "interpreter")
    segs = [Seg(f"{sql.value}%{attr.value}", f"{sql.text}%{attr.text}",
                parser._args() if bulk else None, sql)]
    while bulk and parser.tok.is_op(".") and parser.peek().kind == IDENT:   # (j).ERROR_CODE
        parser.advance()
        part = parser.advance()
        segs.append(Seg(part.value, part.text, None, part))
    return Name(segs, sql)


# ----------------------------------------------------------------- resolving
def resolve_sql(stmt: SqlStmt, is_variable: Callable[[str], bool],
                target: Callable[[Name], None],
                is_record: Callable[[str], bool] = lambda name: False, *,
                element: Callable[[list[Token]], Name | None] = lambda toks: None) -> None:
    """Which of the statement's words are the block's variables; INTO's targets resolved
    (``SELECT a, b INTO rec``: ``rec`` must be a record, else ORA-00947; with BULK COLLECT,
    ``is_record`` says whether a collection's elements are records).  ``element(tokens)``
    gives the resolved Name of ``v(i)`` / ``v(i).f`` written there when ``v`` is a
    collection the block declared (else None)."""
    toks = stmt.tokens
    columns = _column_positions(toks)
    qualifiers = _qualifiers(toks)
    inside = -1                           # the tokens of an element reference, up to here
    for i, tok in enumerate(toks):
        if i <= inside or tok.kind != IDENT or i in columns:
            continue
        before = toks[i - 1] if i else None
        if not is_variable(tok.value):
            # pkg.v / pkg.r.f: a stored package's variable, when ``element`` says it is one
            if tok.value not in qualifiers and (end := _dotted_end(toks, i)) > i and \
                    not (before is not None and (before.is_op(".") or before.is_word(*_OBJECT_AFTER))) \
                    and (node := element(toks[i:end + 1])) is not None:
                stmt.elements[i], inside = (node, end), end
            continue
        after = toks[i + 1] if i + 1 < len(toks) else None
        if before is not None and (before.is_op(".") or before.is_word(*_OBJECT_AFTER)):
            continue
        if before is not None and before.is_word("VALUES") and stmt.kind == "INSERT":
            stmt.row_at = i                # INSERT … VALUES rec (or VALUES v(i))
        if after is not None and after.is_op("(") and \
                (node := element(toks[i:(end := _element_end(toks, i)) + 1])) is not None:
            stmt.elements[i], inside = (node, end), end
            continue
        if _field_at(toks, i) and tok.value not in qualifiers:
            stmt.variables[i], stmt.fields[i] = tok.value, toks[i + 2]   # a record's field
            continue
        if after is not None and after.is_op(".", "("):
            continue
        stmt.variables[i] = tok.value
    for name in stmt.into:
        target(name)
    if len(stmt.into) == 1 and (stmt.width or 1) > 1 and not \
            (_plain(stmt.into[0]) and is_record(stmt.into[0].segs[0].name)):
        tok = stmt.into[0].tok
        raise pls_error(tok.line, tok.col, "PL/SQL: ORA-00947: not enough values")


def _plain(target: Name) -> bool:
    """A variable's name alone (not ``v.attr``, ``v(i)``, ``:bind``)."""
    return not target.bind and len(target.segs) == 1 and target.segs[0].args is None


def plain_value(target: Name, env: Any) -> Any:
    """The value a plain variable target holds (None for any other target)."""
    return env.get(target.resolved.target) if _plain(target) else None


def _dotted_end(toks: list[Token], i: int) -> int:
    """The last name of ``a.b[.c…]`` starting at ``toks[i]`` (``i`` itself when no dot
    follows, or when a parenthesis does: a call, no variable)."""
    j = i
    while j + 2 < len(toks) and toks[j + 1].is_op(".") and toks[j + 2].kind == IDENT:
        j += 2
    return i if j + 1 < len(toks) and toks[j + 1].is_op("(") else j


def _element_end(toks: list[Token], i: int) -> int:
    """The last token of ``v(…)`` or ``v(…).field`` starting at ``toks[i]``."""
    depth, j = 0, i + 1
    while j < len(toks):
        depth += 1 if toks[j].is_op("(") else -1 if toks[j].is_op(")") else 0
        if depth == 0:
            break
        j += 1
    if j + 2 < len(toks) and toks[j + 1].is_op(".") and toks[j + 2].kind == IDENT and not \
            (j + 3 < len(toks) and toks[j + 3].is_op(".", "(")):
        j += 2
    return j


def _field_at(toks: list[Token], i: int) -> bool:
    """``name.field`` at ``toks[i]``, not followed by a call or a further part."""
    return i + 2 < len(toks) and toks[i + 1].is_op(".") and toks[i + 2].kind == IDENT and \
        not (i + 3 < len(toks) and toks[i + 3].is_op(".", "("))


def _column_positions(toks: list[Token]) -> set[int]:
    """Indexes of INSERT's column list and UPDATE … SET's targets (MERGE's too)."""
    out: set[int] = set()
    kind = toks[0].value
    if kind in ("INSERT", "MERGE"):
        # (MERGE: the list after its WHEN NOT MATCHED's INSERT)
        start = 0 if kind == "INSERT" else next((j + 1 for j, t in enumerate(toks) if t.is_word("INSERT")), len(toks))
        i = next((j for j in range(start, len(toks)) if toks[j].is_op("(") or toks[j].is_word(*_NOT_COLUMNS)), None)
        if i is not None and toks[i].is_op("(") and not toks[i + 1].is_word("SELECT", "WITH"):
            depth = 0
            for j in range(i, len(toks)):
                depth += 1 if toks[j].is_op("(") else -1 if toks[j].is_op(")") else 0
                out.add(j)
                if depth == 0:
                    break
    if kind in ("UPDATE", "MERGE"):
        depth, in_set = 0, False
        for j, t in enumerate(toks):
            depth += 1 if t.is_op("(") else -1 if t.is_op(")") else 0
            if depth == 0 and t.is_word("SET"):
                in_set = True
            elif depth == 0 and t.is_word("WHERE", "RETURNING", "RETURN", "WHEN"):
                in_set = False
            elif in_set and depth == 0 and j + 1 < len(toks) and toks[j + 1].is_op("=") \
                    and (toks[j - 1].is_word("SET") or toks[j - 1].is_op(",")):
                out.add(j)
    return out


# ------------------------------------------------------------------- running
@dataclass
class ImplicitCursor:
    """The ``SQL`` cursor's attributes: the last statement's rows (None before any)."""
    rowcount: int | None = None
    bulk: dict[str, Any] = field(default_factory=dict)    # BULK_ROWCOUNT & co (forall.py)

    def done(self, rowcount: int) -> None:
        self.rowcount = rowcount

    def attribute(self, name: str) -> Any:
        if name in BULK_ATTRIBUTES:
            return self.bulk[name]
        if name == "ISOPEN":
            return False
        if name == "ROWCOUNT" or self.rowcount is None:
            return self.rowcount
        return (self.rowcount > 0) == (name == "FOUND")


def run_sql(interp: Any, stmt: SqlStmt, env: Any) -> None:
    """Run ``stmt`` in ``interp`` (the block's Interpreter) with the variables of ``env``."""
    text, binds = bound_statement(interp, stmt, env)
    conn, cursor = interp.conn, interp.implicit
    if stmt.kind == "SELECT":
        result = interp.execute(conn, text, binds)
        rows = result.rows
        target = plain_value(stmt.into[0], env) if len(stmt.into) == 1 else None
        record = isinstance(target, Record) if not stmt.bulk else record_elements(target)
        if not record:
            check_width(len(result.columns or ()), len(stmt.into))
        if not stmt.bulk:
            cursor.done(min(len(rows), 1))
            if not rows:
                raise ora(1403)
            if len(rows) > 1:
                raise ora(1422)
        else:
            cursor.done(len(rows))
        if record:                          # SELECT … INTO rec, … BULK COLLECT INTO recs
            names = [str(c) for c in result.columns]
            interp.assign(stmt.into[0], collection_for(interp, stmt.into[0], env, [
                Record(names, row) for row in rows]) if stmt.bulk else Record(names, rows[0]), env)
            return
        assign_rows(interp, stmt, env, rows)
        return
    if not stmt.into:
        cursor.done(interp.execute(conn, text, binds).rowcount)
        return
    if not hasattr(conn, "execute_dml"):
        raise ora(6550, stmt.tok.line, stmt.tok.col, "PLS-00999: implementation restriction "
                  "(may be temporary) RETURNING INTO is not supported by this connection")

    def returned(rows: list) -> None:
        if len(rows) > 1 and not stmt.bulk:
            raise ora(1422)
        assign_rows(interp, stmt, env, rows)  # inside the statement: a refused value undoes it

    cursor.done(atomic_dml(conn, text, binds, returned))


def check_width(columns: int, targets: int) -> None:
    """``SELECT *``'s items against INTO's variables (a list written out was checked when
    the block was parsed)."""
    if columns < targets:
        raise ora(913)          # (more INTO variables than select items)
    if columns > targets:
        raise ora(947)          # (not enough INTO variables)


def assign_rows(interp: Any, stmt: SqlStmt, env: Any, rows: list) -> None:
    """INTO's variables take the ``rows``' columns (BULK COLLECT: all the rows); one record
    of a declared RECORD type (a collection of them) takes whole rows, by position."""
    target = plain_value(stmt.into[0], env) if len(stmt.into) == 1 else None
    if positional_records(target, stmt.bulk):
        if stmt.bulk or rows:               # (RETURNING no row: the record stays as it was)
            interp.assign(stmt.into[0], target.ctype.filled([tuple(r) for r in rows])
                          if stmt.bulk else tuple(rows[0]), env)
        return
    for i, target in enumerate(stmt.into):
        values = [row[i] for row in rows]
        if stmt.bulk:
            interp.assign(target, collection_for(interp, target, env, values), env)
        else:
            interp.assign(target, values[0] if values else None, env)


def collection_for(interp: Any, target: Name, env: Any, values: list) -> Any:
    """``values`` as the collection ``target`` holds: an object type's collection keeps its
    type, a collection the block declared its own; a NULL (or Python list) variable or a
    bind takes a list."""
    if _plain(target):
        current = env.get(target.resolved.target)
        if isinstance(current, COLLECTIONS):
            return current.ctype.filled(values)
        kind = getattr(current, "type", None)
        if getattr(kind, "iscollection", False):
            return kind.newobject(values)
    return values


def bound_statement(interp: Any, stmt: SqlStmt, env: Any) -> tuple[str, dict]:
    """The statement's text with its variables and binds as numbered placeholders, and
    their values."""
    parts: list[str] = []
    binds: dict[str, Any] = {}
    prev_end = None
    columns = _columns(interp, stmt.tables) if stmt.variables else frozenset()
    skip = 0
    for i, tok in enumerate(stmt.tokens):
        if skip:                                   # a record field's ``.`` and name, …
            skip -= 1
            continue
        if prev_end is not None:
            parts.append(" " if prev_end != tok.start else "")
        if tok.kind == BIND:
            value = bound(interp.binds[interp.bind_key(tok.value)])   # (ORA-01008 if unbound)
        elif i in stmt.elements:                   # v(i), v(i).f: the element's value
            node, end = stmt.elements[i]
            value, skip, tok = interp.eval(node, env), end - i, stmt.tokens[end]
        elif i in stmt.fields and (found := _field(env.get(stmt.variables[i]), stmt.fields[i])):
            value, skip, tok = found[0], 2, stmt.fields[i]
        elif i in stmt.variables and i not in stmt.fields and stmt.variables[i] not in columns:
            value = env.get(stmt.variables[i])
        else:
            if i + 1 == stmt.row_at:
                values_at = len(parts)             # (where VALUES rec's column list goes)
            parts.append(tok.text)
            prev_end = tok.end
            continue
        items = record_values(value) if i == stmt.row_at else None
        if items is None:
            binds[str(len(binds) + 1)] = value
            parts.append(f":{len(binds)}")
        else:                                      # INSERT … VALUES rec: its fields in order
            first = len(binds) + 1
            binds.update((str(n), item) for n, item in enumerate(items, first))
            parts.append("(" + ", ".join(f":{n}" for n in range(first, len(binds) + 1)) + ")")
            names = row_columns(value)             # (fields assigned one by one: by name)
            if names:
                parts.insert(values_at, "(" + ", ".join(names) + ") ")
        prev_end = tok.end
    return "".join(parts), binds


def _field(value: Any, part: Token) -> tuple[Any] | None:
    """``(value of the field)`` when ``value`` (a record, an object) has the field ``part``
    names; None leaves ``v.part`` to the SQL (a sequence's ``NEXTVAL``, a column)."""
    if value is None or isinstance(value, (str, bytes, int, float, list, tuple, dict)):
        return None
    found, attr = lookup(value, Seg(part.value, part.text, None, part))
    return (attr,) if found and not callable(attr) else None


def _columns(interp: Any, tables: list[str]) -> frozenset[str]:
    """The column names of ``tables`` (upper case), each table read once per block run
    (``interp.sql_columns``); one the session cannot read has none here — the statement
    itself says what is wrong with it."""
    found: set[str] = set()
    cache = interp.sql_columns
    for table in tables:
        key = table.upper()
        if key not in cache:
            try:
                columns, _ = interp.conn.query(f"SELECT * FROM {table} WHERE 1 = 0", {})
                cache[key] = frozenset(str(c).upper() for c in columns)
            except Exception:             # (no such table, no query hook: no columns)
                cache[key] = frozenset()
        found |= cache[key]
    return frozenset(found)
