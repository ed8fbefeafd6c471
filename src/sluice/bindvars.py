"""python-oracledb's ``cursor.bindvars``: the variables the last statement was bound with.

A list when the values were bound by position, a dict (keyed as the caller named them)
when by name; each value a :class:`~sluice.fetchvars.Var` — the caller's own
``cursor.var()`` where one was bound (so an OUT value shows there), else a variable made
for the value, of its type.  ``executemany`` binds a column of values per name or
position: its variables hold one value per row (``var.getvalue(row)``).  ``callproc`` /
``callfunc`` bind by position, the function's value first, as python-oracledb does.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from .fetchvars import Var
from .objtypes import DbObject
from .refcursors import CursorVar, is_cursor

# the Python types a Var is made of; a value of another type is kept in a str variable
_TYPES = (str, int, float, Decimal, bytes, bool, dt.datetime, dt.date, dt.timedelta)


def _var_type(value: Any) -> Any:
    if isinstance(value, DbObject):
        return value.type
    kind = type(value)
    return kind if kind in _TYPES else str


def _var_of(values: list) -> Var:
    """A variable holding ``values`` (one per row), typed by the first that is not NULL."""
    if len(values) == 1 and isinstance(values[0], Var):
        return values[0]
    if len(values) == 1 and is_cursor(values[0]):          # a REF CURSOR's
        return CursorVar.holding(values[0])
    first = next((v for v in values if v is not None), None)
    var = Var(_var_type(first), arraysize=len(values))
    for row, value in enumerate(values):
        var.setvalue(row, value.getvalue() if isinstance(value, Var) else value)
    return var


def bind_variables(parameters: Any) -> list | dict:
    """``cursor.bindvars`` after ``execute(statement, parameters)``."""
    if isinstance(parameters, dict):
        return {name: _var_of([value]) for name, value in parameters.items()}
    return [_var_of([value]) for value in parameters or []]


def many_bind_variables(rows: Any) -> list | dict:
    """``cursor.bindvars`` after ``executemany(statement, rows)`` (rows of sequences or of
    dicts, checked; an int's executions have no binds)."""
    rows = rows if isinstance(rows, list) else []
    if rows and isinstance(rows[0], dict):
        return {name: _var_of([row.get(name) for row in rows]) for name in rows[0]}
    width = len(rows[0]) if rows else 0
    return [_var_of([row[i] for row in rows]) for i in range(width)]


def call_bind_variables(binds: dict, returned: str | None = None) -> list:
    """``cursor.bindvars`` after ``callproc`` / ``callfunc``: by position, the bind named
    ``returned`` (the function's value) first."""
    order = ([returned] if returned in binds else []) + [k for k in binds if k != returned]
    return [_var_of([binds[k]]) for k in order]
