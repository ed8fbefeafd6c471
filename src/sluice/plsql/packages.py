"""Stored packages as blocks use them: ``pkg.proc(…)``, ``v := pkg.f(…)``, ``pkg.counter :=
pkg.counter + 1``, ``RAISE pkg.e`` / ``WHEN pkg.e`` (PL/SQL Language Reference, "PL/SQL
Packages").

The connection's ``package(name)`` hook hands the resolver a :class:`StoredPackage` for a
name that is no built-in DBMS_* package (those keep winning for their own names).  The
resolver asks it for its members (``plsql_member``, ``plsql_target``, ``plsql_exception``);
it compiles itself the first time, as a standalone unit does, with the caller's lookups:
the spec's declarations into the public scope, the body's into a scope inside it, each
subprogram of the body inside that, the BEGIN section last.  Inside the body, unqualified
names find the package's own items first, then the owner's schema (definer's rights).

A subprogram is a :class:`PackagedUnit` (a ``StoredUnit`` whose variables around it are its
package's); several of one name are overloads, told apart by their arguments
(:class:`Overloads`: PLS-00307 when more than one fits).  A body subprogram the spec does not
declare is private: PLS-00302 from outside.

**State**: each session has its own instance of a package (``states``, the session's),
made on first use -- the spec's and the body's declarations, then the body's BEGIN section
-- and kept for the session.  A package created again (spec or body) since the instance was
made has another ``stamp``: the instance is discarded, and a stateful one (variables or
cursors) raises ORA-04068 once, as Oracle does; the next use makes a new one.

Errors: a spec that does not compile is PLS-00905 at the caller's reference; a body that
does not compile is ORA-04063 when the package is used, a missing one ORA-04067 when one of
its subprograms is called (a spec without a body is a package of variables and constants).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import DatabaseError, add_error_line, ora
from .errs import semantic_error
from .interpreter import Env
from .nodes import CursorDecl, Subprogram, TypeDecl, VarDecl
from .packagetext import PackageText, parse_package
from .resolve import Head, Resolver, Scope, bind_args, wrong_args
from .subprograms import StoredUnit, compile_subprogram


def _no_component(seg) -> Exception:
    return semantic_error(seg.tok.line, seg.tok.col,
                          f"PLS-00302: component '{seg.name}' must be declared")


class PackageState:
    """A session's instance of a package: the spec's variables, the body's inside them."""

    def __init__(self, stamp: tuple, stateful: bool) -> None:
        self.stamp, self.stateful = stamp, stateful
        self.spec = Env()
        self.body = Env(self.spec)


class StoredPackage:
    """One package as a statement sees it: ``qualified`` is ``OWNER.NAME``; the spec's and
    the body's texts (parsed here, or given parsed: CREATE's compilation); ``stamp`` tells
    its versions apart; ``states`` the session's instances of packages, by name."""

    def __init__(self, qualified: str, spec: str | PackageText, body: str | PackageText | None,
                 stamp: tuple, states: dict) -> None:
        self.qualified, self.stamp, self.states = qualified, stamp, states
        self.owner = qualified.rpartition(".")[0] or None
        self._texts = [spec, body]
        self.spec: PackageText | None = None
        self.body: PackageText | None = None
        self.body_error: DatabaseError | None = None    # the body does not compile
        self.scope = Scope()                            # the spec's names
        self.units: dict[str, list[PackagedUnit]] = {}  # the spec's subprograms
        self.own: dict[str, list[PackagedUnit]] = {}    # every subprogram (the body's)
        self._compiled: bool | None = None              # None: not yet; False: under way

    # -- compilation
    def plsql_compile(self, resolver: Resolver, tok) -> None:
        """Compile the spec and the body with the caller's lookups, once; PLS-00905 at
        ``tok`` when the spec does not compile (the body's errors wait for its use)."""
        if self._compiled is not None:
            return
        self._compiled = False
        try:
            self.compile_spec(resolver)
        except DatabaseError as exc:
            self._compiled = None
            raise semantic_error(tok.line, tok.col,
                                 f"PLS-00905: object {self.qualified} is invalid") from exc
        try:
            self.compile_body(resolver)
        except DatabaseError as exc:
            self.body_error = exc
        self._compiled = True

    def _parsed(self, i: int) -> PackageText | None:
        text = self._texts[i]
        return parse_package(text) if isinstance(text, str) else text

    def _resolver(self, outer: Resolver) -> Resolver:
        """A resolver of the package's code: its own subprograms first, then the owner's
        schema, with the owner's privileges (definer's rights)."""
        def procedure(name: str, definer: str | None = None) -> Any:
            own = self.own.get(name)
            if own:
                return own[0] if len(own) == 1 else Overloads(own)
            return outer.procedure(name, definer)

        def packages(name: str, definer: str | None = None) -> Any:
            if name in (self.qualified, self.qualified.rpartition(".")[2]):
                return self                            # pkg.x inside pkg
            return outer.packages(name, definer) if definer else outer.packages(name)
        inner = Resolver(packages, procedure, outer.functions)
        inner.definer = self.owner
        return inner

    def compile_spec(self, outer: Resolver) -> None:
        self.spec = self._parsed(0)
        resolver, self.scope = self._resolver(outer), Scope()
        resolver.declare(self.spec.decls, self.scope)
        for decl in self.spec.decls:
            if isinstance(decl, TypeDecl):          # its values are made by the state's type
                decl.package = self
        for member in self.spec.members:
            for p in member.unit.params:
                if p.default is not None:
                    resolver.expr(p.default, self.scope)
            unit = PackagedUnit(self, member.unit)
            self.units.setdefault(member.unit.name, []).append(unit)
            self.own.setdefault(member.unit.name, []).append(unit)

    def compile_body(self, outer: Resolver) -> None:
        """Resolve the body; every subprogram of the spec must be defined in it (PLS-00323)."""
        self.body = self._parsed(1)
        if self.body is None:
            return
        resolver, scope = self._resolver(outer), Scope(self.scope)
        resolver.declare(self.body.decls, scope)
        headers = {id(u): u for units in self.units.values() for u in units}
        for member in self.body.members:
            unit = next((u for u in self.units.get(member.unit.name, ())
                         if u.unit is None and _conforms(u.header, member.unit)), None)
            if unit is None:                               # the body's own: private
                unit = PackagedUnit(self, member.unit)
                self.own.setdefault(member.unit.name, []).append(unit)
            unit.unit = member.unit
            headers.pop(id(unit), None)
        for member in self.spec.members:
            if any(u.header is member.unit for u in headers.values()):
                raise semantic_error(member.tok.line, member.tok.col, "PLS-00323: subprogram or "
                                     f"cursor '{member.unit.name}' is declared in a package "
                                     "specification and must be defined in the package body")
        for member in self.body.members:
            compile_subprogram(resolver, member.unit, self.owner, scope)
        if self.body.init is not None:
            resolver.block(self.body.init, scope)

    # -- the resolver's questions
    def plsql_member(self, resolver: Resolver, seg, consumed: int, node) -> Head:
        """``pkg.seg``: a call of one of its subprograms or one of its variables."""
        self.plsql_compile(resolver, seg.tok)
        units = self.units.get(seg.name)
        if units:
            unit = units[0] if len(units) == 1 else \
                Overloads(units).plsql_overload(seg.args or [], seg.name, node.tok)
            binding = bind_args(unit, seg.args or [], seg.name, node.tok)
            if any(out is None for out in binding.outs):
                raise wrong_args(seg.name, node.tok)    # its OUT arguments are not optional
            return Head("call", consumed, unit, binding)
        if seg.name in self.scope.vars:
            return Head("pkgvar", consumed, PackageVariable(self, seg.name, node, consumed))
        raise _no_component(seg)

    def plsql_target(self, resolver: Resolver, node, plen: int) -> Head:
        """``pkg.v := …`` (``pkg.v(i)``, ``pkg.v.f``; ``schema.pkg.v``: ``plen`` 2): a
        variable of the spec."""
        seg = node.segs[plen]
        self.plsql_compile(resolver, seg.tok)
        if seg.name not in self.scope.vars:
            raise _no_component(seg)
        if self.scope.vars[seg.name]:                  # a constant
            raise semantic_error(node.tok.line, node.tok.col, f"PLS-00363: expression "
                                 f"'{'.'.join(s.name for s in node.segs[:plen + 1])}' cannot "
                                 "be used as an assignment target")
        return Head("pkgvar", plen + 1, PackageVariable(self, seg.name, node, plen + 1))

    def plsql_type(self, resolver: Resolver, name: str, tok) -> TypeDecl | None:
        """``v pkg.t``: a record or collection type of the spec, None for no such type."""
        self.plsql_compile(resolver, tok)
        return self.scope.types.get(name)

    def plsql_exception(self, resolver: Resolver, name: str, tok) -> Any:
        """``pkg.e``: an exception of the spec (the same ``ExcInfo`` its body raises)."""
        self.plsql_compile(resolver, tok)
        info = self.scope.excs.get(name)
        if info is None:
            raise semantic_error(tok.line, tok.col, f"PLS-00302: component '{name}' must be declared")
        return info

    # -- run time
    def state(self, interp: Any) -> PackageState:
        """The session's instance, made now if it has none (or one of another version:
        ORA-04068 once for a stateful one)."""
        current = self.states.get(self.qualified)
        if current is not None and current.stamp != self.stamp:
            del self.states[self.qualified]
            if current.stateful:
                exc = add_error_line(ora(4068), f'ORA-04061: existing state of package '
                                     f'"{self.qualified}" has been invalidated')
                raise add_error_line(exc, f'ORA-04065: not executed, altered or dropped '
                                     f'package "{self.qualified}"')
            current = None
        if current is not None:
            return current
        if self.body_error is not None:
            raise ora(4063, f'package body "{self.qualified}"')
        decls = self.spec.decls + (self.body.decls if self.body is not None else [])
        current = self.states[self.qualified] = PackageState(
            self.stamp, any(isinstance(d, CursorDecl) or (isinstance(d, VarDecl) and not d.constant)
                            for d in decls))
        inner = interp.nested()
        try:
            inner.declare(self.spec.decls, current.spec)
            if self.body is not None:
                inner.declare(self.body.decls, current.body)
                if self.body.init is not None:
                    inner.block(self.body.init, current.body)
        except DatabaseError as exc:
            del self.states[self.qualified]          # not instantiated: the next use tries again
            raise add_error_line(exc, f'ORA-06512: at "{self.qualified}", line {inner.line}')
        return current


def _conforms(header: Subprogram, unit: Subprogram) -> bool:
    """Does the body's ``unit`` define the spec's ``header`` (same kind and parameters)?"""
    return header.kind == unit.kind and \
        [(p.name, p.mode) for p in header.params] == [(p.name, p.mode) for p in unit.params]


class PackagedUnit(StoredUnit):
    """A package's subprogram: its spec's header (or its body's, for a private one) makes
    the signature; ``unit`` is its definition in the body, None without one."""

    def __init__(self, package: StoredPackage, header: Subprogram) -> None:
        super().__init__(package.qualified, header.kind, header)
        self.package, self.header = package, header
        self.unit = header if header.block is not None else None
        self._compiled = True                   # with its package

    def plsql_compile(self, resolver: Resolver, tok) -> None:
        self.package.plsql_compile(resolver, tok)

    def outer_env(self, interp: Any) -> Env:
        return self.package.state(interp).body

    def plsql_call(self, caller: Any, kwargs: dict) -> tuple[Any, tuple]:
        if self.package.body_error is not None:
            raise ora(4063, f'package body "{self.qualified}"')
        if self.unit is None:
            raise ora(4067, f'package body "{self.qualified}"')
        return super().plsql_call(caller, kwargs)


class Overloads:
    """Subprograms of one name in one package: the call's arguments choose."""

    def __init__(self, units: list[PackagedUnit]) -> None:
        self.units = units

    def plsql_overload(self, args: list, name: str, tok) -> PackagedUnit:
        fits = []
        for unit in self.units:
            try:
                bind_args(unit, args, name, tok)
            except DatabaseError:
                continue
            fits.append(unit)
        if not fits:
            raise wrong_args(name, tok)
        if len(fits) > 1:
            raise semantic_error(tok.line, tok.col, f"PLS-00307: too many declarations of "
                                 f"'{name}' match this call")
        return fits[0]


class _Cell:
    """The cells of an ``Env`` holding one package variable under ``key``."""

    def __init__(self, key: str, cells: dict, name: str) -> None:
        self.key, self.cells, self.name = key, cells, name

    def __contains__(self, key: str) -> bool:
        return key == self.key

    def __getitem__(self, key: str) -> Any:
        return self.cells[self.name]

    def __setitem__(self, key: str, value: Any) -> None:
        self.cells[self.name] = value


class PackageVariable:
    """``pkg.v…`` read or assigned from outside the package: ``alias`` is the name from
    ``v`` on, a variable ``key`` no block declares, which ``view`` puts over the caller's
    variables (so ``pkg.t(i)`` finds the caller's ``i``)."""

    def __init__(self, package: StoredPackage, name: str, node, consumed: int) -> None:
        self.package, self.name = package, name
        self.key = f"{package.qualified}.{name}"
        self.alias = dataclasses.replace(node, segs=node.segs[consumed - 1:],
                                         resolved=Head("var", 1, self.key))

    def view(self, interp: Any, env: Env | None) -> Env:
        view = Env(env)
        view.cells = _Cell(self.key, self.package.state(interp).spec.cells, self.name)  # type: ignore[assignment]
        return view


def compile_created(interp: Any, kind: str, name: str, text: PackageText) -> None:
    """Compile the spec or body CREATE stores with ``interp``'s lookups, raising what does
    not resolve (its USER_ERRORS).  A body compiles with its spec (``existing``'s: without
    one PLS-00304); the package stands for itself while it compiles (``pkg.x`` inside)."""
    resolver = Resolver(interp.package, interp.procedure, interp._functions())
    if kind == "PACKAGE":
        StoredPackage(name, text, None, (), {}).compile_spec(resolver)
        return
    existing = interp.package(name)
    if not isinstance(existing, StoredPackage):
        tok = text.tok
        raise semantic_error(tok.line, tok.col, "PLS-00304: cannot compile body of "
                             f"'{name.rpartition('.')[2]}' without its specification")
    package = StoredPackage(existing.qualified, existing._texts[0], text, (), {})
    package._compiled = False
    try:
        package.compile_spec(resolver)
    except DatabaseError as exc:
        tok = text.tok
        raise semantic_error(tok.line, tok.col,
                             f"PLS-00905: object {package.qualified} is invalid") from exc
    package.compile_body(resolver)
