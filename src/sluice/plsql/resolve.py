"""Name resolution and argument binding, done for the whole block before it runs.

Oracle compiles an anonymous block before executing any of it: an unknown
package, a misspelt procedure or a wrong argument list stops the block with
ORA-06550 and nothing has happened.  This pass gives the same guarantee.  It
decides, for every ``Name`` node, what its leading parts denote — a variable,
a bind, a built-in function, a package constant or subprogram, a type
constructor — and binds call arguments to the Python method's parameters.
Trailing parts (``.attr``, ``.method(…)``) are looked up on the value at run time.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from ..routines import is_function
from .builtins import FUNCTIONS, NO_PARENS
from .errs import semantic_error
from .currentof import resolve_current_of
from .cursors import attribute_of, check_fetch, cursor_named, resolve_query, resolve_ref
from .expressions import TokenStream
from .forall import check_forall
from .lexer import EOF, Token
from .localtypes import holds_records, resolve_type_decl, takes_rows
from .nodes import (Arg, Assign, Binary, Block, CallStmt, CursorDecl, CursorStmt, ExceptionDecl,
                    ExecImmediate, Exit, ForAll, If, Literal, Loop, Name, OpenFor, PragmaInit,
                    Predicate, Raise, RefCursorType, Return, Simple, SqlStmt, TypeDecl, Unary, VarDecl)
from .refcursors import SYS_REFCURSOR, variable_name
from .staticsql import resolve_sql

_P = inspect.Parameter


@dataclass(eq=False)
class ExcInfo:
    """A named exception: declared in a block, or one of Oracle's predefined ones."""
    name: str
    code: int | None = None     # the ORA number it stands for (positive), if any


OTHERS = ExcInfo("OTHERS")
PREDEFINED = {name: ExcInfo(name, code) for name, code in {
    "NO_DATA_FOUND": 1403, "TOO_MANY_ROWS": 1422, "ZERO_DIVIDE": 1476, "VALUE_ERROR": 6502,
    "INVALID_NUMBER": 1722, "DUP_VAL_ON_INDEX": 1, "TIMEOUT_ON_RESOURCE": 51,
    "PROGRAM_ERROR": 6501, "ACCESS_INTO_NULL": 6530, "COLLECTION_IS_NULL": 6531,
    "SUBSCRIPT_BEYOND_COUNT": 6533, "SUBSCRIPT_OUTSIDE_LIMIT": 6532, "LOGIN_DENIED": 1017,
    "NOT_LOGGED_ON": 1012, "CASE_NOT_FOUND": 6592, "INVALID_CURSOR": 1001,
    "CURSOR_ALREADY_OPEN": 6511, "ROWTYPE_MISMATCH": 6504,
}.items()}


@dataclass
class Binding:
    """A call's arguments, matched to the method's parameters."""
    inputs: list[tuple[str, Any]] = field(default_factory=list)   # keyword -> expression
    positional: list[Any] = field(default_factory=list)           # only for unintrospectable callables
    outs: list[Any] = field(default_factory=list)   # per OUT / IN OUT parameter: target Name or None


@dataclass
class Head:
    """What the first ``consumed`` parts of a Name denote."""
    kind: str          # var bind function sqlcode sqlerrm sqlattr constant call construct
    consumed: int
    target: Any = None
    binding: Binding | None = None


def wrong_args(name: str, tok) -> Exception:
    return semantic_error(tok.line, tok.col, "PLS-00306: wrong number or types of arguments "
                          f"in call to '{name}'")


def undeclared(name: str, tok) -> Exception:
    return semantic_error(tok.line, tok.col, f"PLS-00201: identifier '{name}' must be declared")


def not_target(tok) -> Exception:
    return semantic_error(tok.line, tok.col, f"PLS-00363: expression '{tok.shown()}' cannot be "
                          "used as an assignment target")


def bind_args(method: Callable, args: list[Arg], name: str, tok) -> Binding:
    """Match PL/SQL arguments to ``method``'s parameters (Oracle's order).

    OUT parameters (``__plsql_out__``) are not passed: the method returns them.
    One that is absent from the Python signature is taken to follow all the
    parameters that are present, in the order listed.
    """
    outs = list(getattr(method, "__plsql_out__", ()))
    inouts = set(getattr(method, "__plsql_inout__", ()))
    outs += [n for n in getattr(method, "__plsql_inout__", ()) if n not in outs]
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):       # C functions: pass everything through as written
        return Binding([(a.name, a.value) for a in args if a.name],
                       [a.value for a in args if not a.name])
    params = [p for p in sig.parameters.values() if p.kind not in (_P.VAR_POSITIONAL,
                                                                   _P.VAR_KEYWORD)]
    var_keyword = any(p.kind is _P.VAR_KEYWORD for p in sig.parameters.values())
    var_positional = any(p.kind is _P.VAR_POSITIONAL for p in sig.parameters.values())
    order = [p.name for p in params] + [o for o in outs if o not in sig.parameters]
    given: dict[str, Arg] = {}
    extra: list[Arg] = []   # a collection constructor's elements (``*args``)
    named = False
    for i, arg in enumerate(args):
        if arg.name is None:
            if named:
                raise semantic_error(arg.tok.line, arg.tok.col, "PLS-00312: a positional "
                                     "parameter association may not follow a named association")
            if i >= len(order) and var_positional:
                extra.append(arg)
                continue
            if i >= len(order):
                raise wrong_args(name, tok)
            pname = order[i]
        else:
            named = True
            # "from_" is how a Python signature spells a parameter named after a keyword
            pname = next((c for c in (arg.name, arg.name + "_") if c in order),
                         arg.name if var_keyword else None)
        if pname is None or pname in given:
            raise wrong_args(name, tok)
        given[pname] = arg
    for p in params:
        passed = p.name not in outs or p.name in inouts
        if passed and p.default is p.empty and p.name not in given:
            raise wrong_args(name, tok)
    return Binding(inputs=[(n, a.value) for n, a in given.items()
                           if n not in outs or n in inouts],
                   outs=[given[o].value if o in given else None for o in outs],
                   positional=[a.value for a in extra])


def _check_routine_kind(routine: Callable, node: Name, consumed: int, statement: bool) -> None:
    """A procedure called for a value is PLS-00222, a function called as a statement
    PLS-00221 (``cursor.callfunc`` / ``callproc`` on the wrong kind of routine)."""
    function = is_function(routine)
    seg = node.segs[consumed - 1]
    if function is False and not statement:
        raise semantic_error(node.tok.line, node.tok.col, f"PLS-00222: no function with name "
                             f"'{seg.name}' exists in this scope")
    if function and statement and len(node.segs) == consumed:
        raise semantic_error(seg.tok.line, seg.tok.col, f"PLS-00221: '{seg.name}' is not a "
                             "procedure or is undefined")


class Scope:
    def __init__(self, parent: "Scope | None" = None, loop_label: str | bool = False) -> None:
        self.parent = parent
        self.vars: dict[str, bool] = {}          # name -> is constant
        self.excs: dict[str, ExcInfo] = {}
        self.cursors: dict[str, CursorDecl] = {}  # explicit cursors (cursors.py)
        self.records: set[str] = set()            # of vars, the records (%ROWTYPE, RECORD types)
        self.types: dict[str, TypeDecl] = {}      # the types declared here (localtypes.py)
        self.typed: dict[str, TypeDecl] = {}      # of vars, those of a declared type: their type
        self.cursor_types: dict[str, RefCursorType] = {}   # TYPE … IS REF CURSOR (refcursors.py)
        self.cursor_vars: set[str] = set()        # of vars, the cursor variables
        self.loop_label = loop_label             # False: not a loop; None/str: a loop

    def find(self, attr: str, name: str):
        scope = self
        while scope is not None:
            if name in getattr(scope, attr):
                return getattr(scope, attr)[name]
            scope = scope.parent
        return None

    def is_record(self, name: str) -> bool:
        """Is variable ``name`` (where it is declared) a ``%ROWTYPE`` record?"""
        scope = self._declaring(name)
        return scope is not None and name in scope.records

    def is_cursor_var(self, name: str) -> bool:
        """Is variable ``name`` (where it is declared) a cursor variable?"""
        scope = self._declaring(name)
        return scope is not None and name in scope.cursor_vars

    def _declaring(self, name: str) -> "Scope | None":
        scope = self
        while scope is not None and name not in scope.vars:
            scope = scope.parent
        return scope

    def local_type(self, name: str) -> TypeDecl | None:
        """The declared type of variable ``name`` (where it is declared), if it has one."""
        scope = self
        while scope is not None and name not in scope.vars:
            scope = scope.parent
        return scope.typed.get(name) if scope is not None else None

    def in_loop(self, label: str | None = None) -> bool:
        """Inside a loop (one labelled ``label`` if given)?"""
        scope = self
        while scope is not None:
            if scope.loop_label is not False and label in (None, scope.loop_label):
                return True
            scope = scope.parent
        return False


class Resolver:
    """Walks a block; ``packages(name)`` gives a package object or None."""

    def __init__(self, packages: Callable[[str], Any], procedure: Callable[[str], Any],
                 functions: dict[str, Callable] = FUNCTIONS) -> None:
        self.packages = packages
        self.procedure = procedure
        self.functions = functions      # FUNCTIONS, the session's clock words in its zone
        self.returns = False            # resolving a stored function: RETURN takes a value
        self.definer: str | None = None  # resolving a stored unit: its owner (subprograms.py)

    def package(self, name: str) -> Any:
        """``packages(name)``; inside a stored unit, as its owner sees it (a stored
        package: its schema's, with its owner's privileges)."""
        return self.packages(name, self.definer) if self.definer else self.packages(name)

    # -- statements
    def block(self, block: Block, outer: Scope | None) -> None:
        scope = Scope(outer)
        self.declare(block.decls, scope)
        self.stmts(block.body, scope)
        for handler in block.handlers:
            handler.resolved = [OTHERS if n == "OTHERS" else self._exception(n, scope, handler.tok)
                                for n in handler.names]
            self.stmts(handler.body, scope)

    def declare(self, decls: list, scope: Scope) -> None:
        """A block's declarations (a package's too: ``packages.py``), into ``scope``."""
        for decl in decls:
            if isinstance(decl, VarDecl):
                if decl.default is not None:
                    self.expr(decl.default, scope)
                scope.vars[decl.name] = decl.constant
                decl.local = scope.find("types", decl.type_name) if decl.type_name else \
                    scope.local_type(decl.anchor) if decl.anchor else None
                if decl.local is None and decl.type_name and "." in decl.type_name:
                    pkg = self.package(decl.type_name.rpartition(".")[0])   # pkg.t (packages.py)
                    if hasattr(pkg, "plsql_type"):
                        decl.local = pkg.plsql_type(self, decl.type_name.rpartition(".")[2], decl.tok)
                if decl.local is not None:
                    scope.typed[decl.name] = decl.local
                if decl.rowtype or (decl.local is not None and decl.local.kind == "RECORD"):
                    scope.records.add(decl.name)
                if decl.type_name == SYS_REFCURSOR or scope.find("cursor_types", decl.type_name):
                    decl.type_name = SYS_REFCURSOR        # (every cursor variable is one)
                    scope.cursor_vars.add(decl.name)
            elif isinstance(decl, RefCursorType):
                scope.cursor_types[decl.name] = decl
            elif isinstance(decl, TypeDecl):
                resolve_type_decl(decl, lambda name: scope.find("types", name),
                                  lambda e: self.expr(e, scope))
                scope.types[decl.name] = decl
            elif isinstance(decl, ExceptionDecl):
                scope.excs[decl.name] = ExcInfo(decl.name)
            elif isinstance(decl, PragmaInit):
                info = scope.excs.get(decl.name)
                if info is None:
                    raise semantic_error(decl.tok.line, decl.tok.col, "PLS-00109: unknown "
                                         f"exception name '{decl.name}' in PRAGMA EXCEPTION_INIT")
                info.code = abs(decl.code) if decl.code != 100 else 1403
            elif isinstance(decl, CursorDecl):
                params = Scope(scope)
                for param, default in decl.params:
                    if default is not None:
                        self.expr(default, scope)
                    params.vars[param] = True
                resolve_query(decl.query, lambda name: params.find("vars", name) is not None,
                              lambda toks, params=params: self._element(toks, params))
                scope.cursors[decl.name] = decl

    def _return(self, stmt: Return | Simple, scope: Scope) -> None:
        """A function returns a value, a procedure or an anonymous block none."""
        tok = stmt.tok
        if isinstance(stmt, Simple) and self.returns:
            raise semantic_error(tok.line, tok.col, "PLS-00503: RETURN <value> statement "
                                 "required for this return from function")
        if isinstance(stmt, Return):
            if not self.returns:
                raise semantic_error(tok.line, tok.col, "PLS-00372: In a procedure, RETURN "
                                     "statement cannot contain an expression")
            self.expr(stmt.value, scope)

    def _exception(self, name: str, scope: Scope, tok) -> ExcInfo:
        info = scope.find("excs", name) or PREDEFINED.get(name)
        pkg = self.package(name.rpartition(".")[0]) if info is None and "." in name else None
        if hasattr(pkg, "plsql_exception"):              # pkg.e (packages.py)
            info = pkg.plsql_exception(self, name.rpartition(".")[2], tok)
        if info is None:
            raise undeclared(name, tok)
        return info

    def stmts(self, stmts: list, scope: Scope) -> None:
        for stmt in stmts:
            self.stmt(stmt, scope)

    def stmt(self, stmt, scope: Scope) -> None:
        if isinstance(stmt, Block):
            self.block(stmt, scope)
        elif isinstance(stmt, CallStmt):
            self.name(stmt.target, scope, statement=True)
        elif isinstance(stmt, Assign):
            self.expr(stmt.value, scope)
            self.target(stmt.target, scope)
        elif isinstance(stmt, If):
            for cond, body in stmt.branches:
                self.expr(cond, scope)
                self.stmts(body, scope)
            if stmt.otherwise:
                self.stmts(stmt.otherwise, scope)
        elif isinstance(stmt, Loop):
            for e in (stmt.low, stmt.high, stmt.while_cond):
                if e is not None:
                    self.expr(e, scope)
            if stmt.cursor is not None:
                resolve_ref(stmt.cursor, scope.find, lambda e: self.expr(e, scope),
                            lambda toks: self._element(toks, scope))
            inner = Scope(scope, loop_label=stmt.label)
            if stmt.var:
                inner.vars[stmt.var] = True      # the loop index cannot be assigned
            self.stmts(stmt.body, inner)
        elif isinstance(stmt, Exit):
            if not scope.in_loop():
                raise semantic_error(stmt.tok.line, stmt.tok.col, "PLS-00376: illegal "
                                     "EXIT/CONTINUE statement; it must appear inside a loop")
            if stmt.label and not scope.in_loop(stmt.label):
                raise semantic_error(stmt.tok.line, stmt.tok.col, f"PLS-00373: EXIT label "
                                     f"'{stmt.label}' must label a LOOP statement")
            if stmt.when is not None:
                self.expr(stmt.when, scope)
        elif isinstance(stmt, Raise):
            stmt.resolved = self._exception(stmt.name, scope, stmt.tok)
        elif isinstance(stmt, Return) or (isinstance(stmt, Simple) and stmt.word == "RETURN"):
            self._return(stmt, scope)
        elif isinstance(stmt, ExecImmediate):
            self.expr(stmt.sql, scope)
        elif isinstance(stmt, SqlStmt):
            resolve_sql(stmt, lambda name: scope.find("vars", name) is not None,
                        lambda name: self.target(name, scope), self._row_target(stmt, scope),
                        element=lambda toks: self._element(toks, scope))
            if stmt.kind in ("UPDATE", "DELETE"):
                resolve_current_of(stmt, lambda name, tok: cursor_named(name, tok, scope.find))
        elif isinstance(stmt, ForAll):
            for e in (stmt.low, stmt.high, stmt.indices_of, stmt.values_of):
                if e is not None:
                    self.expr(e, scope)
            inner = Scope(scope)
            inner.vars[stmt.var] = True          # the index cannot be assigned
            self.stmt(stmt.sql, inner)
            check_forall(stmt)
        elif isinstance(stmt, CursorStmt):
            if stmt.word == "OPEN":
                resolve_ref(stmt.cursor, scope.find, lambda e: self.expr(e, scope),
                            lambda toks: self._element(toks, scope))
            else:
                ref = stmt.cursor
                if ref.var is None and scope.is_cursor_var(ref.name):
                    ref.var = variable_name(ref.tok, ref.name)
                if ref.var is not None:             # a cursor variable or bind (refcursors.py)
                    self.expr(ref.var, scope)
                else:
                    ref.decl = cursor_named(ref.name, ref.tok, scope.find)
            for target in stmt.into:
                self.target(target, scope)
            if stmt.limit is not None:
                self.expr(stmt.limit, scope)
            if stmt.word == "FETCH" and stmt.cursor.decl is not None:
                check_fetch(stmt, (lambda name: holds_records(scope.local_type(name)))
                            if stmt.bulk else scope.is_record)
        elif isinstance(stmt, OpenFor):
            self._open_for(stmt, scope)
        elif not isinstance(stmt, Simple):           # pragma: no cover - parser makes no others
            raise TypeError(f"unknown statement {stmt!r}")

    def _open_for(self, stmt: OpenFor, scope: Scope) -> None:
        """``OPEN cv FOR …``: ``cv`` a cursor variable (PLS-00382 for another variable) or a
        bind; the query's variables, or the dynamic text and its USING arguments."""
        target = stmt.target
        name = target.segs[0].name
        if not target.bind and scope.find("vars", name) is not None and \
                not (len(target.segs) == 1 and scope.is_cursor_var(name)):
            raise semantic_error(target.tok.line, target.tok.col, "PLS-00382: expression is of "
                                 "wrong type")
        self.target(target, scope)
        if stmt.query is not None:
            resolve_query(stmt.query, lambda n: scope.find("vars", n) is not None)
        for e in (stmt.dynamic, *stmt.using):
            if e is not None:
                self.expr(e, scope)

    @staticmethod
    def _row_target(stmt: SqlStmt, scope: Scope) -> Callable[[str], bool]:
        """Whether INTO's one variable takes whole rows: a record (a collection of records for
        BULK COLLECT); a RETURNING clause's rows only by position (a RECORD type's)."""
        if stmt.kind != "SELECT":
            return lambda name: takes_rows(scope.local_type(name), stmt.bulk)
        if stmt.bulk:
            return lambda name: holds_records(scope.local_type(name))
        return scope.is_record

    def _element(self, toks: list[Token], scope: Scope) -> Name | None:
        """``v(i)`` / ``v(i).f`` written in static SQL, resolved, when ``v`` is a collection
        the block declared (the SQL gets the element's value); else None."""
        if scope.find("vars", toks[0].value) is None:      # pkg.v (packages.py), else none
            return self._package_item(toks, scope)
        kind = scope.local_type(toks[0].value)
        if kind is None or kind.kind == "RECORD":
            return None
        end = toks[-1]
        stream = TokenStream(list(toks) + [Token(EOF, "", "", end.line, end.col, end.end, end.end)])
        node = stream.name()
        self.name(node, scope)
        return node

    def _package_item(self, toks: list[Token], scope: Scope) -> Name | None:
        """``pkg.v`` / ``pkg.r.f`` written in static SQL, resolved, when ``pkg`` is a stored
        package and ``v`` one of its variables (the SQL gets the value); else None."""
        if not hasattr(self.package(toks[0].value), "plsql_member"):
            return None
        end = toks[-1]
        node = TokenStream(list(toks) + [Token(EOF, "", "", end.line, end.col, end.end, end.end)]).name()
        self.name(node, scope)
        return node if node.resolved.kind == "pkgvar" else None

    # -- expressions
    def expr(self, e, scope: Scope) -> None:
        if isinstance(e, Name):
            self.name(e, scope)
        elif isinstance(e, Unary):
            self.expr(e.operand, scope)
        elif isinstance(e, Binary):
            self.expr(e.left, scope)
            self.expr(e.right, scope)
        elif isinstance(e, Predicate):
            for sub in (e.subject, *e.operands):
                self.expr(sub, scope)
        elif not isinstance(e, Literal):             # pragma: no cover
            raise TypeError(f"unknown expression {e!r}")

    def target(self, node: Name, scope: Scope) -> None:
        """An assignment target (or OUT argument): a variable, ``var.attr…`` or a bind."""
        first = node.segs[0]
        if node.bind:
            node.resolved = Head("bind", 1, first.name)
            return
        # v, v.attr, v(i), v(i).attr and v.attr(i) are targets; anything called is not
        if any(seg.args is not None and [a.name for a in seg.args] != [None]
               for seg in node.segs):
            raise not_target(node.tok)
        constant = scope.find("vars", first.name)
        pkg, plen = None, 0
        for n in (1, 2) if constant is None else ():    # pkg.v, schema.pkg.v := … (packages.py)
            found = self.package(".".join(s.name for s in node.segs[:n])) if len(node.segs) > n else None
            if hasattr(found, "plsql_target"):
                pkg, plen = found, n
                break
        if pkg is not None:
            head = pkg.plsql_target(self, node, plen)
        elif constant is None:
            raise undeclared(first.name, node.tok)
        elif constant:
            raise not_target(node.tok)
        else:
            head = Head("var", 1, first.name)
        for seg in node.segs:
            if seg.args:
                self.expr(seg.args[0].value, scope)
        node.resolved = head

    def name(self, node: Name, scope: Scope, statement: bool = False) -> None:
        head = node.resolved = self._head(node, scope, statement)
        if head.kind == "call":
            _check_routine_kind(head.target, node, head.consumed, statement)
        for i, seg in enumerate(node.segs):
            if seg.args is None or (head.kind == "call" and i == head.consumed - 1):
                continue                      # a call's arguments were handled by its binding
            for arg in seg.args:
                self.expr(arg.value, scope)
        if head.binding is not None:
            for _, value in head.binding.inputs:
                self.expr(value, scope)
            for value in head.binding.positional:
                self.expr(value, scope)
            for value in head.binding.outs:
                if value is not None:
                    if not isinstance(value, Name):
                        raise not_target(getattr(value, "tok", node.tok))
                    self.target(value, scope)
        if statement and head.kind not in ("call", "construct") and \
                len(node.segs) == head.consumed:
            tok = node.segs[-1].tok
            raise semantic_error(tok.line, tok.col, f"PLS-00221: '{node.segs[-1].name}' "
                                 "is not a procedure or is undefined")

    def _head(self, node: Name, scope: Scope, statement: bool) -> Head:
        segs = node.segs
        first, names = segs[0], [s.name for s in segs]
        if node.bind:
            return Head("bind", 1, first.name)
        attribute = attribute_of(first.name)                 # SQL%ROWCOUNT, c%FOUND & co
        if attribute is not None and attribute[0] == "SQL":
            return Head("sqlattr", 1, attribute[1])
        if attribute is not None:
            if not scope.is_cursor_var(attribute[0]):
                cursor_named(attribute[0], first.tok, scope.find, attribute=True)
            return Head("cursorattr", 1, attribute)
        if scope.find("vars", first.name) is not None:
            if first.args is not None and len(first.args) != 1:
                raise wrong_args(first.name, first.tok)
            return Head("var", 1, first.name)
        declared = scope.find("types", first.name)
        if declared is not None and first.args is not None:      # t(…): a collection's constructor
            if declared.kind not in ("TABLE", "VARRAY") or any(a.name for a in first.args):
                raise semantic_error(first.tok.line, first.tok.col, "PLS-00222: no function "
                                     f"with name '{first.name}' exists in this scope")
            return Head("localtype", 1, first.name)
        if len(segs) == 1 or first.args is not None:
            if first.name in ("SQLCODE", "SQLERRM"):
                return Head(first.name.lower(), 1)
            fn = self.functions.get(first.name)
            if fn is not None and (first.args is not None or first.name in NO_PARENS):
                args = first.args or []
                try:
                    if any(a.name for a in args):
                        raise TypeError
                    inspect.signature(fn).bind(*args)
                except TypeError:
                    raise wrong_args(first.name, first.tok) from None
                return Head("function", 1, fn)
            standard = self.packages("DBMS_STANDARD")   # RAISE_APPLICATION_ERROR & co
            if standard is not None and callable(getattr(standard, first.name.lower(), None)):
                return self._member(standard, first, 1, statement, node)
        # pkg.member, sys.pkg.member, schema.pkg.member
        for plen in (2, 1):
            if len(segs) > plen and all(s.args is None for s in segs[:plen]) \
                    and names[:plen] != ["SYS"]:          # SYS alone is a schema, not a package
                pkg_name = names[1] if plen == 2 and names[0] == "SYS" else ".".join(names[:plen])
                pkg = self.package(pkg_name)
                if pkg is not None:
                    return self._member(pkg, segs[plen], plen + 1, statement, node)
        # a standalone subprogram (conn.procedure), else a type constructor: NAME(…), SCHEMA.NAME(…)
        for n in (1, 2):
            if len(segs) < n or (n == 2 and first.args is not None):
                continue
            last, dotted = segs[n - 1], ".".join(names[:n])
            # (a function without arguments is called without parentheses too)
            if len(segs) == n or (not statement and last.args is not None):
                proc = self.procedure(dotted, self.definer)
                if hasattr(proc, "plsql_overload"):     # a package's subprograms (packages.py)
                    proc = proc.plsql_overload(last.args or [], last.name, node.tok)
                if proc is not None:
                    stored = hasattr(proc, "plsql_compile")     # (subprograms.py)
                    if stored:
                        proc.plsql_compile(self, last.tok)
                    binding = bind_args(proc, last.args or [], last.name, node.tok)
                    if stored and any(out is None for out in binding.outs):
                        raise wrong_args(last.name, node.tok)   # its OUT arguments are not optional
                    return Head("call", n, proc, binding)
            if not statement and last.args is not None:
                if any(a.name for a in last.args):
                    raise wrong_args(last.name, last.tok)
                return Head("construct", n, dotted)
        upto = next((i + 1 for i, s in enumerate(segs) if s.args is not None), len(segs))
        raise undeclared(".".join(names[:upto]), node.tok)

    def _member(self, pkg: Any, seg, consumed: int, statement: bool, node: Name) -> Head:
        if hasattr(pkg, "plsql_member"):                 # a stored package (packages.py)
            return pkg.plsql_member(self, seg, consumed, node)
        method = next((m for m in (getattr(pkg, a, None) for a in (seg.name.lower(),
                                                                 seg.name.lower() + "_"))
                       if callable(m)), None)
        constant = getattr(pkg, seg.name, None) if seg.name.isupper() else None
        if not statement and seg.args is None and constant is not None and not callable(constant):
            return Head("constant", consumed, constant)
        if method is not None:
            return Head("call", consumed, method, bind_args(method, seg.args or [], seg.name,
                                                            node.tok))
        if statement and constant is not None:
            raise semantic_error(seg.tok.line, seg.tok.col, f"PLS-00221: '{seg.name}' is not "
                                 "a procedure or is undefined")
        raise semantic_error(seg.tok.line, seg.tok.col,
                             f"PLS-00302: component '{seg.name}' must be declared")
