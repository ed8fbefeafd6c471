"""PL/SQL routines, as Python: what the packages and the statement interpreter share.

Sluice runs no PL/SQL.  Where Oracle calls a PL/SQL function or procedure by name --
a transformation (``scott.to_order_v2(source.user_data)``, seed 003 "Message Format
Transformation"), a rule evaluation context's variable value and evaluation functions
(seed 000 "Evaluation Contexts Used in Streams"), a ``plsql://`` notification procedure --
Sluice calls the Python callable registered under that name::

    sluice.register_function("scott.to_order_v2", lambda order: ...)

and a package procedure with OUT parameters tells the statement interpreter
(:mod:`sluice.plsql`) which they are with :func:`out_params`.  Both live here, below
every layer that uses them (docs/ARCHITECTURE.md): the AQ, rules and Streams packages
declare and look up; the interpreter reads the marks.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, TypeVar

from .errors import InterfaceError, ora
from .names import qualified

_FUNCTIONS: dict[str, Callable[[Any], Any]] = {}
_lock = threading.Lock()


def register_function(name: str, fn: Callable[[Any], Any], schema: str = "SLUICE") -> None:
    """Make ``fn`` callable as the PL/SQL function or procedure ``name`` (in ``schema``)."""
    if not callable(fn):
        raise InterfaceError("fn must be callable")
    with _lock:
        _FUNCTIONS[qualified(name, schema, "function name")] = fn


def registered_function(name: str, schema: str) -> Callable[[Any], Any]:
    """The callable registered as ``name`` (resolved in ``schema``); ORA-00904 if none."""
    key = qualified(name, schema, "function name")
    fn = _FUNCTIONS.get(key)
    if fn is None:
        raise ora(904, key)
    return fn


def registered_functions() -> dict[str, Callable[[Any], Any]]:
    """A copy of the registry, by qualified name (what a Spark driver ships to executors)."""
    with _lock:
        return dict(_FUNCTIONS)


def install_functions(functions: dict[str, Callable[[Any], Any]]) -> None:
    """Register ``functions`` (qualified name -> callable), replacing what was registered
    under those names (a registry shipped again by a Spark driver is the newer one)."""
    with _lock:
        _FUNCTIONS.update(functions)


# The session layer's finder of stored procedures (CREATE PROCEDURE), for callers outside
# any session: the notification dispatcher's plsql:// procedures (sluice.storedunits).
_stored_finder: list[Callable[[Any, str, str], Callable | None]] = []


def find_stored_procedures(finder: Callable[[Any, str, str], Callable | None]) -> None:
    """Install ``finder(store, name, schema)``: the stored procedure ``name`` (resolved in
    ``schema``) of ``store`` as a Python callable, or None when there is none."""
    _stored_finder[:] = [finder]


def stored_procedure(store: Any, name: str, schema: str) -> Callable | None:
    """The stored procedure ``name`` as a callable (see :func:`find_stored_procedures`)."""
    return _stored_finder[0](store, name, schema) if _stored_finder else None


F = TypeVar("F", bound=Callable)


def out_params(*names: str, inout: tuple[str, ...] = ()) -> Callable[[F], F]:
    """Mark a package method's OUT (and IN OUT) parameters, in Oracle's order.

    The interpreter calls the method without the pure OUT parameters and assigns
    its return value to the caller's variables: the value itself for one OUT
    parameter, a tuple in ``names`` order for several.  IN OUT parameters (also
    listed in ``inout``) are passed in as well.  An OUT parameter that sits
    between IN parameters in Oracle's order must also appear in the Python
    signature (with a default), so positional arguments line up; one missing
    from the signature is taken to come after all the others::

        @out_params("msgid")
        def enqueue(self, queue_name, enqueue_options, message_properties, payload): ...
    """
    every = tuple(n.lower() for n in names) + tuple(
        n.lower() for n in inout if n.lower() not in {m.lower() for m in names})

    def mark(fn: F) -> F:
        fn.__plsql_out__ = every                               # type: ignore[attr-defined]
        fn.__plsql_inout__ = tuple(n.lower() for n in inout)   # type: ignore[attr-defined]
        return fn
    return mark


def inout_params(*names: str) -> Callable[[F], F]:
    """Shorthand for ``out_params(*names, inout=names)``."""
    return out_params(*names, inout=names)


def is_function(routine: Callable) -> bool | None:
    """Whether a package routine is a PL/SQL function (True), a procedure (False), or not
    known (None).  A method says so by its return annotation: ``-> None`` is a procedure,
    as is one whose return value carries its OUT parameters (:func:`out_params`); any
    other annotation is a function's return type.  The interpreter refuses a procedure
    where a value is wanted (PLS-00222) and a function called as a statement (PLS-00221),
    as Oracle's compiler does.  A routine may say it outright: ``__plsql_function__`` (a stored
    subprogram, whose functions may have OUT parameters too)."""
    explicit = getattr(routine, "__plsql_function__", None)
    if explicit is not None:
        return explicit
    if getattr(routine, "__plsql_out__", None):
        return False
    try:
        returns = inspect.signature(routine).return_annotation
    except (TypeError, ValueError):       # C callables: nothing to go by
        return None
    if returns is inspect.Signature.empty:
        return None
    return returns not in (None, "None")
