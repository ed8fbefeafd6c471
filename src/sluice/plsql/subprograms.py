"""Stored procedures and functions as a block calls them.

The connection's ``procedure(name)`` hook hands the resolver a :class:`StoredUnit`: a
callable whose signature is the unit's parameter list, so ``bind_args`` matches positional
and named arguments, defaults and OUT / IN OUT parameters as it does for a package's
Python methods.  Where those are called, a stored unit is run (``plsql_call``): its
body in an interpreter of its own (``Interpreter.nested``: the caller's output, packages and
implicit cursor, no binds), its parameters the first variables, in the caller's session
and transaction.

As Oracle compiles a block with everything it calls, the resolver compiles a unit where a
call names it (``plsql_compile``, once per statement; a unit calling itself is being
compiled and is not compiled again): one whose text or names do not compile is
PLS-00905 "object … is invalid" at the call, and the block does not run.  An exception
leaving a unit gets Oracle's ``ORA-06512: at "OWNER.NAME", line n`` line.  A function that
ends without RETURN is ORA-06503.
"""

from __future__ import annotations

import inspect
import keyword
import re
from typing import Any

from ..errors import DatabaseError, add_error_line, ora
from .errs import semantic_error
from .interpreter import Env, _Return
from .nodes import Subprogram
from .resolve import Resolver, Scope
from .units import parse_subprogram
from .values import is_number, to_number, to_text

# How deep subprograms may call one another.  Each level costs some 15 Python frames; past
# this Oracle would be out of PGA memory long before -- ORA-06500 "storage error" here too.
MAX_DEPTH = 30
_NUMERIC = frozenset("""NUMBER INTEGER INT SMALLINT PLS_INTEGER BINARY_INTEGER SIMPLE_INTEGER
    NATURAL NATURALN POSITIVE POSITIVEN SIGNTYPE DECIMAL DEC NUMERIC FLOAT REAL DOUBLE
    BINARY_FLOAT BINARY_DOUBLE""".split())
_TEXT = frozenset("VARCHAR2 VARCHAR NVARCHAR2 CHAR NCHAR STRING LONG CLOB NCLOB CHARACTER".split())
_GIVEN = object()            # the default of a parameter that has one: the unit evaluates it


def python_name(name: str) -> str:
    """A parameter's name as the callable's signature spells it (``bind_args`` lower-cases
    a named argument, and tries ``name_`` for a Python keyword)."""
    lowered = name.lower()
    if keyword.iskeyword(lowered):
        return lowered + "_"
    return lowered if lowered.isidentifier() else re.sub(r"\W", "_", lowered)


def converted(value: Any, type_name: str | None) -> Any:
    """``value`` as a parameter or return value of ``type_name`` takes it: text to a number
    for a numeric type (ORA-06502 when it is none), a number to text for a character type."""
    if value is None or type_name is None:
        return value
    base = type_name.split()[0]
    if base in _NUMERIC and isinstance(value, str):
        try:
            return to_number(value)
        except DatabaseError:
            raise ora(6502, "character to number conversion error") from None
    if base in _TEXT and is_number(value):
        return to_text(value)
    return value


class StoredUnit:
    """One stored procedure or function: ``qualified`` is ``OWNER.NAME``, ``unit`` its
    parsed text (None when it does not parse: it is invalid)."""

    def __init__(self, qualified: str, kind: str, unit: Subprogram | None) -> None:
        self.qualified, self.kind, self.unit = qualified, kind, unit
        params = unit.params if unit is not None else []
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(python_name(p.name), inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               default=_GIVEN if p.default is not None else inspect.Parameter.empty)
             for p in params],
            # (Oracle lets a parameter without a default follow one with a default)
            __validate_parameters__=False)
        self.__plsql_out__ = tuple(python_name(p.name) for p in params if p.mode != "IN")
        self.__plsql_inout__ = tuple(python_name(p.name) for p in params if p.mode == "IN OUT")
        self.__plsql_function__ = kind == "FUNCTION"     # (routines.is_function)
        self._compiled: bool | None = None               # None: not yet; False: under way

    @classmethod
    def from_source(cls, qualified: str, kind: str, source: str) -> "StoredUnit":
        try:
            unit = parse_subprogram(source)
        except DatabaseError:
            unit = None
        return cls(qualified, kind, unit)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # only blocks call a stored unit (plsql_call); the signature is for bind_args
        raise TypeError(f"{self.qualified} is a stored {self.kind.lower()}: call it in a block")

    def plsql_compile(self, resolver: Resolver, tok) -> None:
        """Resolve the unit's body with the caller's lookups, once; PLS-00905 at ``tok``
        when it does not compile."""
        if self._compiled is not None:
            return
        self._compiled = False
        try:
            if self.unit is None:
                raise ora(6550, 1, 1, "the unit's text does not parse")
            compile_subprogram(resolver, self.unit, self.qualified.rpartition(".")[0] or None)
        except DatabaseError as exc:
            self._compiled = None
            raise semantic_error(tok.line, tok.col,
                                 f"PLS-00905: object {self.qualified} is invalid") from exc
        self._compiled = True

    def outer_env(self, interp: Any) -> Env | None:
        """The variables around the unit's own: none (a package's subprogram: its package's
        state, ``packages.py``)."""
        return None

    def plsql_call(self, caller: Any, kwargs: dict) -> tuple[Any, tuple]:
        """Run the unit for ``caller`` (an Interpreter) with the IN and IN OUT values
        ``kwargs``: its value (a function's, else None) and its OUT / IN OUT values."""
        if caller.depth >= MAX_DEPTH:
            raise ora(6500)
        unit, interp = self.unit, caller.nested()
        env = Env(self.outer_env(interp))
        try:
            for p in unit.params:
                key = python_name(p.name)
                value = kwargs[key] if key in kwargs else \
                    interp.eval(p.default, env) if p.default is not None else None
                env.cells[p.name] = converted(value, p.type_name)
            try:
                interp.block(unit.block, env)
            except _Return as signal:
                value = converted(signal.value, unit.returns)
            else:
                if unit.kind == "FUNCTION":
                    raise ora(6503)
                value = None
        except DatabaseError as exc:
            raise add_error_line(exc, f'ORA-06512: at "{self.qualified}", line {interp.line}')
        return value, tuple(env.cells[p.name] for p in unit.params if p.mode != "IN")


def compile_subprogram(resolver: Resolver, unit: Subprogram, owner: str | None,
                       outer: Scope | None = None) -> None:
    """Resolve ``unit`` (of ``owner``'s schema; None: the session's) as ``resolver`` resolves
    a block: its IN parameters constants, OUT and IN OUT ones variables; RETURN with a value
    only in a function; the units it calls as its owner sees them (definer's rights).
    ``outer``: the names around it (a package's, ``packages.py``)."""
    inner = Resolver(resolver.packages, resolver.procedure, resolver.functions)
    inner.returns, inner.definer = unit.kind == "FUNCTION", owner
    scope = Scope(outer)
    for p in unit.params:
        if p.default is not None:
            inner.expr(p.default, scope)
    for p in unit.params:
        scope.vars[p.name] = p.mode == "IN"
    inner.block(unit.block, scope)


def compile_created(interp: Any, kind: str, name: str, unit: Subprogram) -> None:
    """Compile the unit CREATE stores with ``interp``'s lookups, raising what does not
    resolve (its USER_ERRORS); its own name stands for it (a unit calling itself)."""
    stored = StoredUnit(name, kind, unit)
    stored._compiled = True                  # its calls of itself: not compiled again
    owner, _, short = name.rpartition(".")
    for key in ((name, owner or None), (short, owner or None)):
        interp._procedures[key] = stored
    compile_subprogram(Resolver(interp.package, interp.procedure, interp._functions()), unit,
                       owner or None)
