"""REF CURSORs between a PL/SQL block and python-oracledb's API.

As python-oracledb gives them:

* a cursor bound to a block (``cursor.execute("begin open :rc for select …; end;",
  rc=conn.cursor())``, ``cursor.callproc(name, [ref_cursor])``) takes the cursor the block
  opens into it: its ``description``, its rows by ``fetchone`` / ``fetchmany`` / ``fetchall``
  or iteration (``cursor.bindvars`` shows it in a DB_TYPE_CURSOR variable); a fresh cursor
  bound but never opened by the block is DPY-4025 when fetched; a cursor with rows bound to
  a block is a cursor of its rows not fetched yet there (an IN argument);
  binding the executing cursor itself is DPY-3009, one of another connection DPY-3027, a
  closed one DPY-1006 (:func:`check_cursor_binds`);
* ``cursor.var(DB_TYPE_CURSOR)`` (:class:`CursorVar`; ``callfunc``'s return type too): its
  value is a cursor of the connection, the same one each time it is given a cursor;
* ``DBMS_SQL.RETURN_RESULT(cv)`` in a block: ``cursor.getimplicitresults()`` is the list of
  cursors returned, in order (DPY-1004 after a statement that returned none).

The rows are the ones the block had not fetched when it handed the cursor over (the
bind's assignment, RETURN_RESULT); the block's cursor is ``plsql.refcursors.CursorVariable``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .errors import dpy
from .fetchvars import Var
from .plsql.binds import bound
from .objtypes import DB_TYPE_CURSOR, DB_TYPE_VARCHAR

if TYPE_CHECKING:
    from .cursor import Cursor


class CursorVar(Var):
    """``cursor.var(DB_TYPE_CURSOR)``: a bind a block gives a REF CURSOR back in; its value
    is a cursor of the connection (``new_cursor`` makes it, once) holding that cursor's rows."""

    def __init__(self, new_cursor: Callable[[], "Cursor"], *args: Any, **kwargs: Any) -> None:
        super().__init__(DB_TYPE_VARCHAR, *args, **kwargs)    # (its checks, then its own type)
        self.type = DB_TYPE_CURSOR
        self._new_cursor = new_cursor
        self._cursor: "Cursor | None" = None

    @classmethod
    def holding(cls, cursor: "Cursor") -> "CursorVar":
        """The variable python-oracledb shows for ``cursor`` bound (``cursor.bindvars``)."""
        var = cls(lambda: cursor)
        var._cursor = var._values[0] = cursor
        return var

    def bind_value(self) -> Any:
        """What the block reads for the bind: the cursor it opened into it last, if any."""
        return None if self._cursor is None else self._cursor.bind_value()

    def _out(self, value: Any) -> Any:
        if value is not None:
            if self._cursor is None:
                self._cursor = self._new_cursor()
            self._cursor.assign_out(value)
            value = self._cursor
        if self.outconverter is not None and (value is not None or self.convert_nulls):
            value = self.outconverter(value)
        return value


def check_cursor_binds(cursor: "Cursor", values: Any) -> None:
    """The cursors among a block's bind ``values`` (a dict's values or a sequence), checked
    as python-oracledb checks them, and made ready to take what the block opens."""
    for value in values:
        if is_cursor(value):
            if value is cursor:
                raise dpy(3009)
            if value.connection is not cursor.connection:
                raise dpy(3027)
            value.bound_as_ref_cursor()


def returned_value(value: Any) -> Any:
    """An argument's value after ``callproc``: a cursor is itself (it holds what the block
    opened into it), a cursor variable's its cursor, any other bind as the block left it."""
    if isinstance(value, CursorVar):
        return value.getvalue()
    return value if is_cursor(value) else bound(value)


def is_cursor(value: Any) -> bool:
    """A :class:`sluice.cursor.Cursor` (which imports this module: known by what it does)."""
    return callable(getattr(value, "bound_as_ref_cursor", None))


def implicit_results(cursor: "Cursor", returned: list) -> list:
    """``getimplicitresults()``'s cursors for a block's RETURN_RESULT ones."""
    results = []
    for state in returned:
        result = cursor.connection.cursor()
        result.assign_out(state)
        results.append(result)
    return results
