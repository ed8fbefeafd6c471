"""Runs a resolved anonymous block against a connection.

The connection is reached only through the hooks listed in ``plsql/__init__``:
``package``, ``construct``, ``declare``, ``commit``, ``rollback`` (and the
optional ``procedure``; static SQL also ``query``, ``execute_dml``, ``statement``).  Package procedures are plain Python methods; their
``DatabaseError``s travel through unchanged unless a handler catches them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable

from ..errors import DatabaseError, InterfaceError, add_error_line, ora
from .binds import BindVariable, block_value, bound
from .builtins import FUNCTIONS, session_clock, standard_packages
from .currentof import run_positioned
from .dbmsoutput import SessionOutput
from .cursors import ExplicitCursor, loop_records, run_cursor_stmt
from .errs import semantic_error
from .exceptions import UserException, sqlcode, sqlerrm, sqlerrm_of
from .composites import (Collection, assigned, equal_tables, is_empty, is_null, member_of,
                         python_value)
from .forall import bulk_attributes, run_forall
from .localtypes import runtime_type
from .objects import (COLLECTION_METHODS, Record, Subscripted, collection_method, element,
                      lookup, set_element, set_member)
from .nodes import (Assign, Binary, Block, CallStmt, CursorDecl, CursorStmt, ExecImmediate, Exit,
                    ForAll, If, Literal, Loop, Name, OpenFor, Predicate, Raise, Return, Simple,
                    SqlStmt, TypeDecl, Unary, VarDecl)
from .refcursors import DbmsSql, attribute, run_open_for
from .resolve import OTHERS, Binding, ExcInfo, Resolver, Scope, bind_args, wrong_args
from .staticsql import ImplicitCursor, run_sql
from .values import (arithmetic, compare, concat, like, logical_and, logical_not, logical_or,
                     to_number, to_text)

# Declared types whose variables start out NULL without asking the connection.
SCALAR_TYPES = frozenset("""VARCHAR2 VARCHAR NVARCHAR2 CHAR NCHAR STRING LONG RAW NUMBER
    INTEGER INT SMALLINT PLS_INTEGER BINARY_INTEGER SIMPLE_INTEGER NATURAL NATURALN POSITIVE
    POSITIVEN SIGNTYPE DECIMAL DEC NUMERIC FLOAT REAL DOUBLE BINARY_FLOAT BINARY_DOUBLE
    BOOLEAN DATE TIMESTAMP INTERVAL CLOB NCLOB BLOB BFILE ROWID UROWID CHARACTER
    SYS_REFCURSOR""".split())

# What a constructor's type lookup raises for a type the session cannot see (PLS-00201).
_UNKNOWN_TYPE = frozenset({4043, 902, 1031, 6550})


class _Exit(Exception):
    def __init__(self, word: str, label: str | None) -> None:
        self.word, self.label = word, label


class _Return(Exception):
    def __init__(self, value: Any = None) -> None:
        self.value = value                    # a function's (RETURN expr)


class Env:
    """One block's (or loop's) variables, chained to the enclosing ones."""

    def __init__(self, parent: "Env | None" = None) -> None:
        self.cells: dict[str, Any] = {}
        self.parent = parent

    def _owner(self, name: str) -> "Env":
        env = self
        while name not in env.cells:
            env = env.parent              # the resolver guaranteed the name exists
        return env

    def get(self, name: str) -> Any:
        return self._owner(name).cells[name]

    def set(self, name: str, value: Any) -> None:
        self._owner(name).cells[name] = value


class Interpreter:
    def __init__(self, conn: Any, binds: dict | None, output: list[str],
                 execute: Callable[[Any, str, dict], Any]) -> None:
        """``execute(conn, text, binds)`` runs one statement for EXECUTE IMMEDIATE and
        returns its result (``script.execute``, passed in: the script layer builds on this
        one)."""
        self.conn = conn
        self.execute = execute
        self.binds = binds if binds is not None else {}
        self.output = output
        buffer = getattr(conn, "session_output", None)     # the session's DBMS_OUTPUT buffer
        self.standard = standard_packages(output, buffer() if buffer else SessionOutput())
        self.returned: list = []        # DBMS_SQL.RETURN_RESULT's cursors (refcursors.py)
        self.standard["DBMS_SQL"] = DbmsSql(self.returned)
        self._packages: dict[str, Any] = {}
        self._handling: list[DatabaseError] = []     # exceptions whose handler is running
        self.implicit = ImplicitCursor(bulk=bulk_attributes({}, []))   # SQL%ROWCOUNT & co
        self.transactions = 0     # COMMITs and ROLLBACKs run: FOR UPDATE cursors' (cursors.py)
        self.sql_columns: dict[str, frozenset] = {}    # static SQL's tables' columns (staticsql)
        self._procedures: dict[tuple, Any] = {}        # conn.procedure's, once a statement
        self.depth = 0                                 # stored subprograms' calls (subprograms)
        self.line = 1                                  # of the statement running: ORA-06512's

    # -- hooks
    def package(self, name: str, definer: str | None = None) -> Any | None:
        """``conn.package(name)``; inside a stored unit of ``definer``, as that unit sees
        it (``conn.package(name, definer)``).  One object a statement for each stored
        package, however it was named (its exceptions are that object's)."""
        if name in self.standard:
            return self.standard[name]
        key = name if definer is None else (name, definer)
        if key not in self._packages:
            try:
                found = self.conn.package(name, definer) if definer else self.conn.package(name)
            except DatabaseError:            # unknown package: the resolver says PLS-00201
                found = None
            qualified = getattr(found, "qualified", None)       # a stored package's
            self._packages[key] = found if qualified is None else \
                self._packages.setdefault(("", qualified), found)
        return self._packages[key]

    def _functions(self) -> dict:
        """The built-in functions, CURRENT_DATE & co in the session's time zone (the
        connection's ``session_time_zone`` hook; without one, the host's)."""
        hook = getattr(self.conn, "session_time_zone", None)
        return FUNCTIONS if hook is None else {**FUNCTIONS, **session_clock(hook())}

    def procedure(self, name: str, definer: str | None = None) -> Any | None:
        """``conn.procedure(name)``; inside a stored unit of ``definer``, as that unit sees
        it (``conn.procedure(name, definer)``: its schema's, with its owner's privileges)."""
        key = (name, definer)
        if key not in self._procedures:
            hook = getattr(self.conn, "procedure", None)
            try:
                self._procedures[key] = None if hook is None else \
                    hook(name, definer) if definer else hook(name)
            except DatabaseError:
                self._procedures[key] = None
        return self._procedures[key]

    def nested(self) -> "Interpreter":
        """The interpreter of a stored subprogram this one calls (``subprograms.py``): its
        own variables and no binds; the caller's output, packages, subprograms and
        implicit cursor (SQL%ROWCOUNT is the last statement's, wherever it ran)."""
        inner = Interpreter(self.conn, {}, self.output, self.execute)
        inner.standard, inner._packages, inner._procedures = self.standard, self._packages, \
            self._procedures
        inner.implicit, inner.sql_columns, inner.depth = self.implicit, self.sql_columns, \
            self.depth + 1
        return inner

    def construct(self, type_name: str, args: list, tok) -> Any:
        hook = getattr(self.conn, "construct", None)
        if hook is None:
            raise semantic_error(tok.line, tok.col,
                                 f"PLS-00201: identifier '{type_name}' must be declared")
        try:
            return hook(type_name, args)
        except DatabaseError as exc:
            # a type this session cannot see is unknown; a value the constructor refuses
            # (ORA-01426 for a number out of range …) is the run-time error it is
            if exc.code == 6550 or exc.code not in _UNKNOWN_TYPE:
                raise
            raise semantic_error(tok.line, tok.col, f"PLS-00201: identifier '{type_name}' "
                                 "must be declared") from exc
        except (InterfaceError, TypeError, ValueError) as exc:
            # the type exists but refused these values: Oracle's wording for a bad call
            raise wrong_args(type_name.split(".")[-1], tok) from exc

    def initial(self, decl: VarDecl) -> Any:
        if decl.rowtype:
            return Record()                   # its fields NULL until a FETCH fills them
        if decl.type_name is None or decl.type_name.split()[0] in SCALAR_TYPES:
            return None
        hook = getattr(self.conn, "declare", None)
        if hook is None:
            return None
        try:
            return hook(decl.type_name)
        except DatabaseError as exc:
            tok = decl.tok
            raise semantic_error(tok.line, tok.col, f"PLS-00201: identifier "
                                 f"'{decl.type_name}' must be declared") from exc

    # -- blocks and statements
    def run(self, block: Block) -> None:
        Resolver(self.package, self.procedure, self._functions()).block(block, Scope())
        try:
            self.block(block, None)
        except _Return:
            pass
        except DatabaseError as exc:
            if '\nORA-06512: at "' in exc.message:   # it left a stored unit: this block's line
                add_error_line(exc, f"ORA-06512: at line {self.line}")
            raise

    def block(self, block: Block, outer: Env | None) -> None:
        env = Env(outer)
        self.declare(block.decls, env)   # errors here are not the block's own to handle
        try:
            self.stmts(block.body, env)
        except DatabaseError as exc:
            handler = next((h for h in block.handlers
                            if any(self._matches(info, exc) for info in h.resolved)), None)
            if handler is None:
                raise
            self._handling.append(exc)
            try:
                self.stmts(handler.body, env)
            finally:
                self._handling.pop()

    def declare(self, decls: list, env: Env) -> None:
        """A block's declarations (a package's too: ``packages.py``), into ``env``."""
        for decl in decls:
            if isinstance(decl, VarDecl) and decl.local is not None:    # of a declared type
                types = env if decl.local.package is None else decl.local.package.state(self).spec
                value = types.get(decl.local.name).initial()
                env.cells[decl.name] = value if decl.default is None else \
                    assigned(value, self.eval(decl.default, env), decl.tok)
            elif isinstance(decl, VarDecl):
                env.cells[decl.name] = (self.eval(decl.default, env) if decl.default is not None
                                        else self.initial(decl))
            elif isinstance(decl, TypeDecl):
                env.cells[decl.name] = runtime_type(decl, env.get, lambda e: self.eval(e, env))
            elif isinstance(decl, CursorDecl):
                env.cells[decl.name] = ExplicitCursor(decl, env)

    @staticmethod
    def _matches(info: ExcInfo, exc: DatabaseError) -> bool:
        if info is OTHERS:
            return True
        if isinstance(exc, UserException) and exc.info is info:
            return True
        return info.code is not None and exc.code == info.code

    def stmts(self, stmts: list, env: Env) -> None:
        for stmt in stmts:
            self.stmt(stmt, env)

    def stmt(self, stmt, env: Env) -> None:
        self.line = stmt.tok.line
        if isinstance(stmt, CallStmt):
            self.name(stmt.target, env)
        elif isinstance(stmt, Assign):
            self.assign(stmt.target, self.eval(stmt.value, env), env)
        elif isinstance(stmt, Simple):
            self._simple(stmt)
        elif isinstance(stmt, Return):
            raise _Return(self.eval(stmt.value, env))
        elif isinstance(stmt, If):
            for cond, body in stmt.branches:
                if self.truth(self.eval(cond, env), cond):
                    self.stmts(body, env)
                    return
            if stmt.otherwise:
                self.stmts(stmt.otherwise, env)
        elif isinstance(stmt, Loop):
            self._loop(stmt, env)
        elif isinstance(stmt, Exit):
            if stmt.when is None or self.truth(self.eval(stmt.when, env), stmt.when):
                raise _Exit(stmt.word, stmt.label)
        elif isinstance(stmt, Raise):
            raise UserException(stmt.resolved)
        elif isinstance(stmt, ExecImmediate):
            sql = to_text(self.eval(stmt.sql, env))
            result = self.execute(self.conn, sql or "", self.binds)
            self.output.extend(result.output)
            if result.kind == "dml":
                self.implicit.done(result.rowcount)
        elif isinstance(stmt, SqlStmt):
            (run_sql if stmt.current_of is None else run_positioned)(self, stmt, env)
        elif isinstance(stmt, CursorStmt):
            run_cursor_stmt(self, stmt, env)
        elif isinstance(stmt, OpenFor):
            run_open_for(self, stmt, env)
        elif isinstance(stmt, ForAll):
            run_forall(self, stmt, env)
        elif isinstance(stmt, Block):
            self.block(stmt, env)

    def _simple(self, stmt: Simple) -> None:
        if stmt.word in ("COMMIT", "ROLLBACK"):
            self.transactions += 1
        if stmt.word == "COMMIT":
            self.conn.commit()
        elif stmt.word == "ROLLBACK":
            self.conn.rollback()
        elif stmt.word == "RETURN":
            raise _Return()
        elif stmt.word == "RAISE":
            if not self._handling:
                raise semantic_error(stmt.tok.line, stmt.tok.col, "PLS-00367: a RAISE statement"
                                     " with no exception name must be inside an exception handler")
            raise self._handling[-1]

    def _loop(self, loop: Loop, env: Env) -> None:
        if loop.cursor is not None:            # a cursor FOR loop (cursors.py)
            with contextlib.closing(loop_records(self, loop.cursor, env)) as records:
                self._iterate(loop, env, records)
            return
        if loop.var is not None:
            low, high = (self.eval(loop.low, env), self.eval(loop.high, env))
            if low is None or high is None:
                raise ora(6502, "FOR loop bound is NULL")
            indexes = range(round(to_number(low)), round(to_number(high)) + 1)
            iterations = reversed(indexes) if loop.reverse else indexes
        else:
            iterations = iter(int, 1)             # endless; WHILE and EXIT end it
        self._iterate(loop, env, iterations)

    def _iterate(self, loop: Loop, env: Env, iterations) -> None:
        for i in iterations:
            inner = Env(env)
            if loop.var is not None:
                inner.cells[loop.var] = i
            if loop.while_cond is not None and not self.truth(self.eval(loop.while_cond, env),
                                                              loop.while_cond):
                return
            try:
                self.stmts(loop.body, inner)
            except _Exit as signal:
                if signal.label not in (None, loop.label):
                    raise
                if signal.word == "EXIT":
                    return

    @staticmethod
    def truth(value: Any, node) -> bool:
        """IF/WHILE/EXIT WHEN: NULL counts as false; only BOOLEANs are conditions."""
        if value is None or isinstance(value, bool):
            return bool(value)
        raise semantic_error(node.tok.line, node.tok.col,
                             "PLS-00382: expression is of wrong type (a condition must be BOOLEAN)")

    # -- expressions
    def eval(self, e, env: Env) -> Any:
        if isinstance(e, Literal):
            return e.value
        if isinstance(e, Name):
            return self.name(e, env)
        if isinstance(e, Unary):
            value = self.eval(e.operand, env)
            if e.op == "NOT":
                return logical_not(None if value is None else self.truth(value, e.operand))
            return arithmetic("-", 0, value) if e.op == "-" else to_number(value)
        if isinstance(e, Binary):
            return self._binary(e, env)
        if isinstance(e, Predicate):
            return self._predicate(e, env)
        raise TypeError(f"unknown expression {e!r}")   # pragma: no cover

    def _binary(self, e: Binary, env: Env) -> Any:
        left = self.eval(e.left, env)
        if e.op in ("AND", "OR"):
            left = None if left is None else self.truth(left, e.left)
            if left is (e.op == "OR"):              # short-circuit, as PL/SQL does
                return left
            right = self.eval(e.right, env)
            right = None if right is None else self.truth(right, e.right)
            return logical_and(left, right) if e.op == "AND" else logical_or(left, right)
        right = self.eval(e.right, env)
        if e.op == "||":
            return concat(left, right)
        if e.op in ("=", "<>") and (isinstance(left, Collection) or isinstance(right, Collection)):
            return logical_not(equal_tables(left, right, compare)) if e.op == "<>" else \
                equal_tables(left, right, compare)
        if e.op in ("=", "<>", "<", "<=", ">", ">="):
            return compare(e.op, left, right)
        return arithmetic(e.op, left, right)

    def _predicate(self, e: Predicate, env: Env) -> Any:
        value = self.eval(e.subject, env)
        ops = [self.eval(o, env) for o in e.operands]
        if e.kind == "NULL":
            result = is_null(value)
        elif e.kind == "EMPTY":
            result = is_empty(value)
        elif e.kind == "MEMBER":
            result = member_of(value, ops[0], compare)
        elif e.kind == "LIKE":
            result = like(value, *ops)
        elif e.kind == "BETWEEN":
            result = logical_and(compare(">=", value, ops[0]), compare("<=", value, ops[1]))
        else:
            result = False
            for item in ops:
                hit = compare("=", value, item)
                if hit:
                    result = True
                    break
                if hit is None:
                    result = None
        return logical_not(result) if e.negated else result

    def name(self, node: Name, env: Env) -> Any:
        head, first = node.resolved, node.segs[0]
        if head.kind == "pkgvar":                        # pkg.v (packages.py)
            return self.name(head.target.alias, head.target.view(self, env))
        if head.kind == "var":
            value = env.get(head.target)
            if first.args:
                value = element(value, self.eval(first.args[0].value, env))
        elif head.kind == "bind":
            value = block_value(self.binds[self.bind_key(head.target)])
            if first.args:                                # :t(i), an element of a bound table
                value = element(value, self.eval(first.args[0].value, env))
        elif head.kind == "function":
            value = head.target(*[self.eval(a.value, env) for a in first.args or []])
        elif head.kind == "sqlcode":
            value = self._sqlcode()
        elif head.kind == "sqlerrm":
            value = self._sqlerrm(first, env)
        elif head.kind == "sqlattr":
            value = self.implicit.attribute(head.target)
            if first.args:                                # SQL%BULK_ROWCOUNT(i)
                value = element(value, self.eval(first.args[0].value, env))
        elif head.kind == "cursorattr":
            value = attribute(env.get(head.target[0]), head.target[1])
        elif head.kind == "constant":
            value = head.target
        elif head.kind == "call":
            value = self.invoke(head.target, head.binding, env)
        elif head.kind == "localtype":                   # t(…): a declared collection type
            value = env.get(head.target).construct([self.eval(a.value, env)
                                                    for a in first.args or []])
        else:                                            # construct
            args = node.segs[head.consumed - 1].args or []
            value = self.construct(head.target, [self.eval(a.value, env) for a in args],
                                   node.segs[head.consumed - 1].tok)
        for seg in node.segs[head.consumed:]:
            value = self.member(value, seg, env)
        return value

    def invoke(self, method, binding: Binding, env: Env) -> Any:
        if hasattr(method, "plsql_call"):          # a stored subprogram (subprograms.py)
            # PL/SQL to PL/SQL: collections and records go in as they are
            result, outs = method.plsql_call(self, {k: self.eval(v, env) for k, v in binding.inputs})
            for target, value in zip(binding.outs, outs):
                if target is not None:
                    self.assign(target, value, env)
            return result
        positional = [python_value(self.eval(v, env)) for v in binding.positional]
        kwargs = {k: python_value(self.eval(v, env)) for k, v in binding.inputs}
        try:
            result = method(*positional, **kwargs)
        except InterfaceError as exc:           # a Python-side type check: PL/SQL's value error
            raise ora(6502, str(exc)) from exc
        if not binding.outs:
            return result
        values = (result,) if len(binding.outs) == 1 else tuple(result)
        if len(values) != len(binding.outs):
            raise TypeError(f"{method.__qualname__} returned {len(values)} values for "
                            f"{len(binding.outs)} OUT parameters")
        for target, value in zip(binding.outs, values):
            if target is not None:
                self.assign(target, value, env)
        return None

    # -- values: members, elements, binds, assignment
    def member(self, value: Any, seg, env: Env) -> Any:
        if isinstance(value, Subscripted) and seg.name in COLLECTION_METHODS:
            return value.method(seg.name, [self.eval(a.value, env) for a in seg.args or []],
                                seg.tok)
        if isinstance(value, (list, tuple, dict)) and seg.name in COLLECTION_METHODS:
            args = [self.eval(a.value, env) for a in seg.args or []]
            return collection_method(value, seg.name, args)
        if value is None:
            if seg.args is None:
                return None                  # an attribute of a NULL object reads as NULL
            raise ora(6530)
        found, attr = lookup(value, seg)
        if not found:
            raise semantic_error(seg.tok.line, seg.tok.col,
                                 f"PLS-00302: component '{seg.name}' must be declared")
        if callable(attr):
            return self.invoke(attr, bind_args(attr, seg.args or [], seg.name, seg.tok), env)
        if seg.args:
            return element(attr, self.eval(seg.args[0].value, env))
        return attr

    def assign(self, target: Name, value: Any, env: Env) -> None:
        head, segs = target.resolved, target.segs
        if head.kind == "pkgvar":                        # pkg.v := … (packages.py)
            return self.assign(head.target.alias, value, head.target.view(self, env))
        index = self.eval(segs[0].args[0].value, env) if segs[0].args else None
        if len(segs) == 1:
            if head.kind == "bind":
                key = self.bind_key(head.target)
                if segs[0].args:                          # :t(i) := value
                    value = set_element(bound(self.binds[key]), index, value)
                if isinstance(self.binds[key], BindVariable):   # cursor.var(): the value goes in it
                    self.binds[key].assign_out(value)
                else:
                    self.binds[key] = python_value(value)
            elif segs[0].args:                    # v(i) := value
                env.set(head.target, set_element(env.get(head.target), index, value))
            else:
                env.set(head.target, assigned(env.get(head.target), value, target.tok))
            return
        obj = env.get(head.target) if head.kind == "var" else \
            bound(self.binds[self.bind_key(head.target)])
        if segs[0].args:
            obj = obj.target(index) if isinstance(obj, Subscripted) else element(obj, index)
        for seg in segs[1:-1]:
            obj = self._target_part(obj, seg, env)
        last = segs[-1]
        if last.args:                              # r.f(i) := value: an element of a field
            field = self.member(obj, dataclasses.replace(last, args=None), env)
            changed = set_element(field, self.eval(last.args[0].value, env), value)
            if changed is not field:
                set_member(obj, last, changed)
            return
        set_member(obj, last, value if isinstance(obj, Record) else python_value(value))

    def _target_part(self, obj: Any, seg, env: Env) -> Any:
        """The value an assignment target's ``.seg`` (``.seg(i)``) leads to, to change in place."""
        if not seg.args:
            return self.member(obj, seg, env)
        part = self.member(obj, dataclasses.replace(seg, args=None), env)
        index = self.eval(seg.args[0].value, env)
        return part.target(index) if isinstance(part, Subscripted) else element(part, index)

    def bind_key(self, name: str) -> Any:
        """The caller's key for ``:name`` (bind names are case-insensitive), else ORA-01008."""
        for key in self.binds:
            if str(key).lstrip(":").upper() == name.upper():
                return key
        raise ora(1008)

    # -- SQLCODE / SQLERRM
    def _sqlcode(self) -> int:
        return sqlcode(self._handling[-1] if self._handling else None)

    def _sqlerrm(self, seg, env: Env) -> str:
        if seg.args:
            return sqlerrm_of(to_number(self.eval(seg.args[0].value, env)) or 0)
        return sqlerrm(self._handling[-1] if self._handling else None)
