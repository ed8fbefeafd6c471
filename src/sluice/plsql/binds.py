"""Bind values matched to a statement's placeholders as python-oracledb matches them.

Values in a list bind by position: in SQL every placeholder occurrence is a position
(``:x, :x`` takes two values), in PL/SQL each name once, in the order names first
appear; DDL has no placeholders.  A count that does not match is DPY-4009.  Values in a
dict bind by name (case-insensitive, a leading ``:`` allowed); a name the statement
does not use is DPY-4008.  A placeholder left without a value is ORA-01008 when the
statement runs, as the database reports it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Sequence

from ..errors import dpy
from ..objtypes import DbObject, RecordType
from ..store.sqlnames import bind_names, number_binds, renumbered_binds
from .lexer import BIND, tokenize

# python-oracledb does not look for binds in DDL (a trigger body's :NEW is not one)
_DDL = frozenset({"CREATE", "ALTER", "DROP", "GRANT", "REVOKE", "ANALYZE", "AUDIT", "COMMENT",
                  "TRUNCATE"})
PLSQL = frozenset({"BEGIN", "DECLARE", "<<", "CALL", "EXEC", "EXECUTE"})


class BindVariable(ABC):
    """A value the caller binds to get a value back (python-oracledb's ``cursor.var()``,
    ``sluice.fetchvars.Var``).  A block reads :meth:`bind_value` where it reads the bind
    and hands an assignment or an OUT argument to :meth:`assign_out`; SQL gets the value."""

    @abstractmethod
    def bind_value(self) -> Any:
        """The value the bind stands for where the statement reads it."""

    @abstractmethod
    def assign_out(self, value: Any) -> None:
        """Take ``value``, assigned to the bind or given as an OUT argument."""


def bound(value: Any) -> Any:
    """The value a bind stands for: a :class:`BindVariable`'s, else itself."""
    return value.bind_value() if isinstance(value, BindVariable) else value


def block_value(value: Any) -> Any:
    """What a block reads for a bind of ``value``: :func:`bound`, with an object of a
    package's record type (``conn.gettype("DBMS_AQ.MESSAGE_PROPERTIES_T").newobject()``)
    as the record the package takes."""
    value = bound(value)
    if isinstance(value, DbObject) and isinstance(value.type, RecordType):
        return value.type.record_of(value)
    return value


def placeholders(text: str, first_word: str) -> list[str]:
    """The bind names of ``text`` (whose first word is ``first_word``) that values bound by
    position go to, upper-cased: in SQL every occurrence, in PL/SQL each name once, in DDL
    none (python-oracledb looks for none there)."""
    if first_word in _DDL:
        return []
    if first_word in PLSQL:
        return list(dict.fromkeys(t.value.upper() for t in tokenize(text) if t.kind == BIND))
    return bind_names(text)


def bind_values(text: str, first_word: str, binds: dict | Sequence | None) -> tuple[str, dict | None]:
    """``(text, binds by name)`` for running ``text`` (whose first word is ``first_word``)
    with ``binds``; SQL bound by position comes back with its placeholders numbered.  A
    block gets the caller's :class:`BindVariable` objects (it writes OUT values into them);
    SQL their values."""
    if binds is None:
        return text, None
    plsql = first_word in PLSQL
    if not plsql:
        binds = {k: bound(v) for k, v in binds.items()} if isinstance(binds, dict) else \
            [bound(v) for v in binds]
    names = placeholders(text, first_word)
    if isinstance(binds, dict):
        by_name = {}
        for key, value in binds.items():
            name = str(key)
            bare = (name[1:] if name.startswith(":") else name).upper()
            if bare not in names:
                raise dpy(4008, name)
            by_name[bare] = value
        if plsql:       # the interpreter matches names itself and writes OUT values back
            return text, binds
        # numbered, so that :x and :X are one name as in Oracle (SQLite and psycopg match case)
        return number_binds(text), {str(i): by_name[n] for i, n in enumerate(names, 1) if n in by_name}
    values = list(binds)
    if not values:      # nothing bound: a placeholder is ORA-01008 when the statement runs
        return text, None
    if len(values) != len(names):
        raise dpy(4009, len(names), len(values))
    if plsql:
        return text, dict(zip(names, values))
    return number_binds(text), {str(i): v for i, v in enumerate(values, 1)}


def bind_headings(original: str, numbered: str, headings: list[str]) -> list[str]:
    """``headings`` of the query ``numbered`` (:func:`bind_values` made it of ``original``)
    with its placeholders named as ``original`` names them, upper-cased: Oracle heads
    ``SELECT :t FROM dual`` ``:T``, not ``:1``."""
    if numbered == original:
        return headings
    names = bind_names(original)
    return [renumbered_binds(h, names) for h in headings]
