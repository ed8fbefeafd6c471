"""The syntax tree of an anonymous block and of the type DDL the interpreter runs.

Every node keeps the token it started at, so run-time errors can name the line
and column the way Oracle does.  ``Name`` is the one node for every dotted
reference (``x``, ``v.attr``, ``DBMS_AQ.FOREVER``, ``SYS.AQ$_AGENT('a')``,
``:bind.attr``): what it means is decided later, by the resolver, because that
depends on the declared variables and on the connection's packages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .lexer import Token


# ---------------------------------------------------------------- expressions
@dataclass
class Arg:
    name: str | None            # lower-cased parameter name for ``name => value``
    value: "Expr"
    tok: Token


@dataclass
class Seg:
    """One dotted part of a name, with its argument list if it was followed by ``(…)``."""
    name: str                   # canonical: upper-case unless it was "quoted"
    text: str                   # as written
    args: list[Arg] | None
    tok: Token


@dataclass
class Name:
    segs: list[Seg]
    tok: Token
    bind: bool = False          # segs[0] is a bind variable (``:name``)
    resolved: Any = None        # filled in by the resolver before the block runs

    def dotted(self) -> str:
        return ".".join(s.name for s in self.segs)


@dataclass
class Literal:
    value: Any
    tok: Token


@dataclass
class Unary:
    op: str                     # '-', '+', 'NOT'
    operand: "Expr"
    tok: Token


@dataclass
class Binary:
    op: str                     # '||' '+' '-' '*' '/' '**' '=' '<>' '<' '<=' '>' '>=' 'AND' 'OR'
    left: "Expr"
    right: "Expr"
    tok: Token


@dataclass
class Predicate:
    """IS [NOT] NULL, [NOT] LIKE, [NOT] BETWEEN, [NOT] IN — ``operands`` after ``subject``."""
    kind: str                   # 'NULL' 'LIKE' 'BETWEEN' 'IN'
    subject: "Expr"
    operands: list["Expr"]
    negated: bool
    tok: Token


Expr = Name | Literal | Unary | Binary | Predicate


# ----------------------------------------------------------------- statements
@dataclass
class VarDecl:
    name: str
    type_name: str | None       # canonical type name; None for %TYPE / %ROWTYPE anchors
    constant: bool
    default: Expr | None
    tok: Token
    rowtype: bool = False       # ``name anchor%ROWTYPE``: a record (cursors.py)
    local: "TypeDecl | None" = None   # of a type the block declared (resolver; localtypes.py)
    anchor: str | None = None   # ``name v%TYPE``: the variable ``v``


@dataclass
class ExceptionDecl:
    name: str
    tok: Token
    code: int | None = None     # set by PRAGMA EXCEPTION_INIT (Oracle's negative number)


@dataclass
class PragmaInit:
    name: str
    code: int
    tok: Token


@dataclass
class Handler:
    names: list[str]            # ['OTHERS'] or exception names
    body: list["Stmt"]
    tok: Token
    resolved: list[Any] | None = None   # the exceptions the names stand for


@dataclass
class Block:
    decls: list[VarDecl | ExceptionDecl | PragmaInit]
    body: list["Stmt"]
    handlers: list[Handler]
    tok: Token
    label: str | None = None


@dataclass
class CallStmt:
    target: Name
    tok: Token


@dataclass
class Assign:
    target: Name
    value: Expr
    tok: Token


@dataclass
class Simple:
    """NULL; COMMIT; ROLLBACK; RETURN; RAISE; (re-raise) — nothing but a keyword."""
    word: str
    tok: Token


@dataclass
class Return:
    """``RETURN expr;`` — a function's value (a bare ``RETURN;`` is a ``Simple``)."""
    value: Expr
    tok: Token


@dataclass
class If:
    branches: list[tuple[Expr, list["Stmt"]]]
    otherwise: list["Stmt"] | None
    tok: Token


@dataclass
class Loop:
    """LOOP, WHILE … LOOP and FOR i IN [REVERSE] a..b LOOP."""
    body: list["Stmt"]
    tok: Token
    label: str | None = None
    while_cond: Expr | None = None
    var: str | None = None
    low: Expr | None = None
    high: Expr | None = None
    reverse: bool = False
    cursor: "CursorRef | None" = None     # FOR r IN (SELECT …) / c / c(args) LOOP (cursors.py)


@dataclass
class Exit:
    word: str                   # 'EXIT' or 'CONTINUE'
    label: str | None
    when: Expr | None
    tok: Token


@dataclass
class Raise:
    name: str
    tok: Token
    resolved: Any = None


@dataclass
class ExecImmediate:
    sql: Expr
    tok: Token


@dataclass
class SqlStmt:
    """Static SQL (``staticsql.py``): SELECT … INTO, INSERT / UPDATE / DELETE [RETURNING …
    INTO]; ``tokens`` are the statement's without its INTO clause and ``;``."""
    kind: str                   # 'SELECT' 'INSERT' 'UPDATE' 'DELETE'
    tokens: list[Token]
    into: list[Name]
    bulk: bool                  # BULK COLLECT INTO
    tok: Token
    tables: list[str] = field(default_factory=list)           # tables named, as written
    variables: dict[int, str] = field(default_factory=dict)   # token index -> variable (resolver)
    fields: dict[int, Token] = field(default_factory=dict)    # of those, ``v.field``: its field
    width: int | None = None    # SELECT's items / RETURNING's expressions (None: ``*``)
    current_of: tuple[int, str] | None = None   # WHERE CURRENT OF c: (CURRENT's index, c) (currentof.py)
    # a collection's element ``v(i)`` / ``v(i).f`` at a token index: (its Name, last token's index)
    elements: dict[int, tuple["Name", int]] = field(default_factory=dict)
    row_at: int | None = None   # ``INSERT … VALUES rec``: the record's token index (resolver)


@dataclass
class CursorDecl:
    """``CURSOR name [(param type [:= default], …)] IS query;`` (``cursors.py``)."""
    name: str
    params: list[tuple[str, Expr | None]]       # name, default
    query: SqlStmt
    tok: Token
    positioned: bool = False    # a DML statement's WHERE CURRENT OF names it (currentof.py)


@dataclass
class CursorRef:
    """What a cursor FOR loop or OPEN names: a declared cursor with its arguments, or a
    query written in place (``FOR r IN (SELECT …)``)."""
    name: str | None
    args: list[Arg]
    query: SqlStmt | None
    tok: Token
    decl: CursorDecl | None = None              # the declared cursor (resolver)
    var: "Name | None" = None   # a cursor variable or bind instead (refcursors.py; resolver)
    given: dict[str, Arg] = field(default_factory=dict)   # parameter -> its argument (resolver)


@dataclass
class CursorStmt:
    """``OPEN c[(args)];``, ``FETCH c [BULK COLLECT] INTO … [LIMIT n];``, ``CLOSE c;``."""
    word: str                   # 'OPEN' 'FETCH' 'CLOSE'
    cursor: CursorRef
    tok: Token
    into: list[Name] = field(default_factory=list)
    bulk: bool = False
    limit: Expr | None = None


@dataclass
class RefCursorType:
    """``TYPE name IS REF CURSOR [RETURN type];`` (``refcursors.py``)."""
    name: str
    tok: Token


@dataclass
class ElementRef:
    """The datatype of a collection's elements or a record's fields (``localtypes.py``):
    a scalar, a type declared before it (the resolver links it), ``x%ROWTYPE``, ``x%TYPE``."""
    type_name: str | None       # canonical; None when anchored (%TYPE / %ROWTYPE)
    rowtype: bool
    not_null: bool
    tok: Token
    local: "TypeDecl | None" = None


@dataclass
class FieldDecl:
    name: str
    element: ElementRef
    default: Expr | None
    tok: Token


@dataclass
class OpenFor:
    """``OPEN cv FOR query;`` (static) / ``OPEN cv FOR expr [USING arg, …];`` (dynamic) of a
    cursor variable or bind (``refcursors.py``)."""
    target: Name
    query: SqlStmt | None
    dynamic: Expr | None
    using: list[Expr]
    tok: Token


@dataclass
class TypeDecl:
    """``TYPE name IS TABLE OF … [INDEX BY …] | VARRAY(n) OF … | RECORD (…);``"""
    name: str
    kind: str                   # 'TABLE' 'VARRAY' 'ASSOC' 'RECORD'
    tok: Token
    element: ElementRef | None = None
    limit: int | None = None                    # VARRAY
    numeric_keys: bool = True                   # ASSOC: INDEX BY PLS_INTEGER & co
    fields: list[FieldDecl] = field(default_factory=list)     # RECORD
    package: Any = None         # a stored package's type: the package (its state holds it)


@dataclass
class ForAll:
    """``FORALL i IN a..b | INDICES OF c [BETWEEN a AND b] | VALUES OF c [SAVE EXCEPTIONS]
    dml;`` (``forall.py``)."""
    var: str
    sql: SqlStmt
    tok: Token
    low: Expr | None = None
    high: Expr | None = None
    indices_of: Name | None = None
    values_of: Name | None = None
    save_exceptions: bool = False


Stmt = (Block | CallStmt | Assign | Simple | Return | If | Loop | Exit | Raise | ExecImmediate
        | SqlStmt | CursorStmt | OpenFor | ForAll)


# ------------------------------------------------------ stored subprograms
@dataclass
class Param:
    """A formal parameter of a stored procedure or function (``subprograms.py``)."""
    name: str                   # canonical
    mode: str                   # 'IN' 'OUT' 'IN OUT'
    type_name: str | None       # canonical datatype; None when %TYPE-anchored
    default: Expr | None
    tok: Token


@dataclass
class Subprogram:
    """``[CREATE [OR REPLACE]] PROCEDURE | FUNCTION name [(params)] [RETURN type] IS … END;``"""
    kind: str                   # 'PROCEDURE' 'FUNCTION'
    name: str                   # as written, canonical parts: 'P1' or 'SCOTT.P1'
    params: list[Param]
    returns: str | None         # a function's return type
    block: Block                # its declarations, body and handlers
    or_replace: bool = False


# ------------------------------------------------------------------ type DDL
@dataclass
class CreateType:
    name: str
    kind: str                   # 'OBJECT' | 'VARRAY' | 'TABLE'
    attributes: list[tuple[str, str]] | None
    element_type: str | None
    max_size: int | None
    or_replace: bool


@dataclass
class DropType:
    name: str
    force: bool

