"""The statement interpreter: SQL*Plus scripts and anonymous PL/SQL blocks of
package calls, run verbatim — not a PL/SQL engine.

Public API::

    execute(conn, text, binds=None) -> StatementResult   # one statement
    split_script(text) -> list[str]                      # SQL*Plus statement splitting
    statement_bind_names(text) -> list[str]              # cursor.bindnames(): each name once
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
``conn.query(sql, binds) -> (columns, rows)``  for SELECT / WITH (a block's SELECT … INTO too;
    ``… FOR UPDATE`` locks the rows for the session's transaction)
``conn.execute_dml(sql, binds[, returned])``  (optional) INSERT / UPDATE / DELETE / MERGE, the
    rows changed; ``returned(rows)`` gets a RETURNING clause's rows (a block's RETURNING … INTO)
``conn.commit()``, ``conn.rollback()``, ``conn.sqlplus_connect(user, password)``
``conn.execute_sql_statement(kind_words, text)``  (optional) any other SQL; it may
    return a StatementResult, ``(columns, rows)`` or a row count
``conn.statement()``  (optional) a context manager each anonymous block (EXEC, a bare
    call) runs inside: Oracle's statement-level atomicity — a block that ends with an
    unhandled exception is rolled back to its start, the transaction's earlier work kept.
``conn.row_identity()``  (optional) the store's name of a row's identity in a user's table
    (``ROWID``, ``CTID``), for ``WHERE CURRENT OF`` a cursor declared FOR UPDATE.
``conn.procedure(name)``  (optional) a standalone procedure or function
    (``'PROC'`` or ``'SCHEMA.PROC'``) as a callable, or None / DatabaseError if unknown;
    a stored one is a ``subprograms.StoredUnit``, which the interpreter runs itself.
``conn.create_unit(kind, name, spec, or_replace)``, ``conn.drop_unit(kind, name)``
    (optional) CREATE [OR REPLACE] PROCEDURE / FUNCTION and DROP PROCEDURE / FUNCTION
    (``units.py``; ``spec``: the unit's source, parameters, status and compilation errors);
    without them those statements go to ``execute_sql_statement`` as other SQL.
"""

from __future__ import annotations

from ..routines import inout_params, out_params
from .script import StatementResult, execute, run_script, split_script, statement_bind_names

__all__ = ["StatementResult", "execute", "inout_params", "out_params", "run_script",
           "split_script", "statement_bind_names"]
