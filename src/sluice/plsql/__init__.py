"""The statement interpreter: SQL*Plus scripts and anonymous PL/SQL blocks of
package calls, run verbatim — not a PL/SQL engine.

Public API::

    execute(conn, text, binds=None) -> StatementResult   # one statement
    split_script(text) -> list[str]                      # SQL*Plus statement splitting
    run_script(conn, text) -> list[StatementResult]      # split + execute, stop at first error
    out_params(*names, inout=()) / inout_params(*names)  # mark OUT parameters of a procedure

The interpreter reaches the connection only through these hooks:

``conn.package(name)``
    Package object for ``'DBMS_AQADM'``, ``'DBMS_AQ'`` … (canonical upper case, no
    ``SYS.``; another schema's package is asked for as ``'SCHEMA.PKG'``).  Raise a
    DatabaseError for an unknown package.  Procedures and functions are methods named
    by the Oracle name in lower case, parameters lower case in Oracle's order;
    constants are UPPER-CASE non-callable attributes.
``conn.construct(type_name, args)``
    A value of a type: ``'SYS.AQ$_AGENT'``, ``'SYS.RE$VARIABLE_TYPE_LIST'``, ``'MY_TYPE'``.
``conn.declare(type_name)``
    Initial value of a variable of a non-scalar declared type (None for NULL).
``conn.create_type(name, kind, attributes, element_type, max_size, or_replace)``,
``conn.drop_type(name, force)``
``conn.query(sql, binds) -> (columns, rows)``  for SELECT / WITH
``conn.commit()``, ``conn.rollback()``, ``conn.sqlplus_connect(user, password)``
``conn.execute_sql_statement(kind_words, text)``  (optional) any other SQL; it may
    return a StatementResult, ``(columns, rows)`` or a row count
``conn.procedure(name)``  (optional) a standalone procedure or function
    (``'PROC'`` or ``'SCHEMA.PROC'``) as a callable, or None / DatabaseError if unknown.
"""

from __future__ import annotations

from typing import Callable, TypeVar

from .script import StatementResult, execute, run_script, split_script

__all__ = ["StatementResult", "execute", "inout_params", "out_params", "run_script",
           "split_script"]

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
