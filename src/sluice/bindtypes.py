"""python-oracledb's bind-side type hooks: ``setinputsizes`` variables and input type handlers.

``cursor.setinputsizes(None, ids)`` before ``cursor.executemany(sql, [[1], [2]])``: the
rows bind their values to the first positions and the variables given fill the others
(the DML RETURNING idiom of python-oracledb's documentation, :mod:`sluice.dmlreturning`);
by name, ``setinputsizes(ids=v)`` fills the names a row leaves out.  They hold for the
statements run after them until another statement is run, as python-oracledb keeps them
for the statement they were set for.

An ``inputtypehandler`` (on the cursor, else on the connection) is called as
python-oracledb calls it, ``handler(cursor, value, arraysize)``, for each value bound
that is no ``cursor.var()``: ``arraysize`` is 1 for ``execute`` and the number of rows
for ``executemany``, where it is called once per bind position (with the first row's
value) and the variable it returns serves every row.  It returns None (the value binds
as it is) or a ``cursor.var(type, inconverter=…)``; the value is set into it through
its ``inconverter`` and the variable is what binds (DPY-2015 for anything else).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .errors import dpy
from .fetchvars import Var
from .jsonvalues import json_text
from .objtypes import DB_TYPE_JSON
from .plsql.binds import PLSQL, BindVariable
from .store.sqlnames import bind_names

__all__ = ["execute_binds", "executemany_rows", "keep_inputsizes"]


def keep_inputsizes(cursor: Any, sizes: list | dict) -> None:
    """What ``setinputsizes`` returned: the variables the next statement binds."""
    cursor._inputsizes = (sizes, None)


def _inputsizes(cursor: Any, statement: str) -> list | dict | None:
    kept = getattr(cursor, "_inputsizes", None)
    if kept is None:
        return None
    sizes, used_by = kept
    if used_by is not None and used_by != statement:     # another statement: they are gone
        cursor._inputsizes = None
        return None
    cursor._inputsizes = (sizes, statement)
    return sizes


def _places(statement: str) -> list[str]:
    """The names of ``statement``'s bind positions, as python-oracledb counts them (every
    occurrence in SQL, each name once in PL/SQL)."""
    from .plsql.script import leading_words
    words, names = leading_words(statement, count=1)[0], bind_names(statement)
    return list(dict.fromkeys(names)) if words[:1] and words[0] in PLSQL else names


def _filled(binds: Any, sizes: list | dict | None, statement: str) -> Any:
    """``binds`` with the ``setinputsizes`` variables in the places of ``statement`` it
    leaves empty (a size for a place the statement has not is not bound)."""
    if not sizes:
        return binds
    places = _places(statement)
    if isinstance(sizes, dict):
        if binds is None or isinstance(binds, dict):
            by_name = {str(k).lstrip(":").upper(): v for k, v in sizes.items()}
            filled = {k: _json_sized(v, by_name.get(str(k).lstrip(":").upper())) for k, v in (binds or {}).items()}
            named = {str(k).lstrip(":").upper() for k in filled}
            filled.update({k: v for k, v in sizes.items() if v is not None
                           and str(k).lstrip(":").upper() in set(places) - named})
            return filled
        return binds
    if binds is None or (isinstance(binds, Sequence) and not isinstance(binds, (str, bytes))):
        values = [_json_sized(v, sizes[i] if i < len(sizes) else None) for i, v in enumerate(binds or [])]
        fill = list(sizes[len(values):len(places)])
        return values if None in fill else values + fill      # (a place without a variable: unfilled)
    return binds


def _json_sized(value: Any, size: Any) -> Any:
    """A value bound where ``setinputsizes`` gave a ``DB_TYPE_JSON`` variable: its JSON text
    (:mod:`sluice.jsonvalues`), as python-oracledb sends it as that variable's type (a dict
    without one is DPY-3002, as python-oracledb answers)."""
    if isinstance(size, Var) and size.type is DB_TYPE_JSON and value is not None \
            and not isinstance(value, BindVariable):
        return json_text(value)
    return value


def _handler(cursor: Any) -> Callable | None:
    return cursor.inputtypehandler or getattr(cursor.connection, "inputtypehandler", None)


def _made_var(cursor: Any, handler: Callable, value: Any, arraysize: int) -> Var | None:
    var = handler(cursor, value, arraysize)
    if var is not None and not isinstance(var, Var):
        raise dpy(2015, type(var).__name__)
    return var


def execute_binds(cursor: Any, statement: str, binds: Any) -> Any:
    """The binds ``execute`` runs ``statement`` with: ``setinputsizes``' variables in the
    empty places, each other value through the input type handler."""
    binds = _filled(binds, _inputsizes(cursor, statement), statement)
    handler = _handler(cursor)
    if handler is None or binds is None:
        return binds

    def through(value: Any) -> Any:
        if isinstance(value, BindVariable):
            return value
        var = _made_var(cursor, handler, value, 1)
        if var is None:
            return value
        var.setvalue(0, value)
        return var
    if isinstance(binds, dict):
        return {k: through(v) for k, v in binds.items()}
    return [through(v) for v in binds]


def executemany_rows(cursor: Any, statement: str, rows: Any) -> Any:
    """The rows ``executemany`` runs ``statement`` with, as :func:`execute_binds` makes
    ``execute``'s: the handler asked once per position, its variable's ``inconverter``
    applied to every row's value there (the value itself binds: a row's own place)."""
    sizes = _inputsizes(cursor, statement)
    handler = _handler(cursor)
    if not isinstance(rows, list) or (not sizes and handler is None):
        return rows
    rows = [_filled(row, sizes, statement) for row in rows]
    if handler is None or not rows:
        return rows
    keys = list(rows[0]) if isinstance(rows[0], dict) else range(len(rows[0]))
    converters: dict = {}
    for key in keys:
        value = rows[0][key]
        if not isinstance(value, BindVariable):
            var = _made_var(cursor, handler, value, len(rows))
            if var is not None:
                converters[key] = var
    if not converters:
        return rows
    out = []
    for row in rows:
        made = dict(row) if isinstance(row, dict) else list(row)
        for key, var in converters.items():
            present = key in made if isinstance(made, dict) else key < len(made)
            if present and not isinstance(made[key], BindVariable):
                if var.inconverter is not None:
                    made[key] = var.inconverter(made[key])
                made[key] = _json_sized(made[key], var)       # (a DB_TYPE_JSON var's: JSON text)
        out.append(made)
    return out
