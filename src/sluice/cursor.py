"""``Cursor``: statements through the interpreter, results as python-oracledb returns them.

``cursor.execute("BEGIN DBMS_AQADM.START_QUEUE('q'); END;")`` runs an anonymous
block; ``cursor.execute("SELECT msg_state FROM aq$qt")`` queries the views;
``cursor.callproc("dbms_aqadm.start_queue", ["q"])`` calls a package procedure.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from .errors import InterfaceError, dpy, ora

if TYPE_CHECKING:
    from .connection import Connection


class Cursor:
    """A python-oracledb-shaped cursor over Sluice's statement interpreter."""

    arraysize = 100

    def __init__(self, connection: "Connection") -> None:
        self.connection = connection
        self.description: list[tuple] | None = None
        self.rowcount = -1
        self.output: list[str] = []
        self._rows: list[tuple] = []
        self._pos = 0
        self._closed = False

    def execute(self, statement: str, parameters: dict | Sequence | None = None, **kw: Any) -> "Cursor | None":
        self._check()
        from . import plsql
        if not isinstance(statement, str):
            raise InterfaceError(f"statement must be a string, not {type(statement).__name__}")
        if parameters is not None and (isinstance(parameters, (str, bytes, bytearray))
                                       or not isinstance(parameters, (dict, Sequence))):
            raise dpy(2003)
        if kw:
            if parameters:
                raise dpy(2005)
            parameters = kw
        with self.connection._lock:      # the statement's calls are one call of the connection
            result = plsql.execute(self.connection, statement, parameters)
        self.output = list(result.output)
        if result.columns is not None:
            self.description = [(c, None, None, None, None, None, True) for c in result.columns]
            self._rows = list(result.rows)
            self._pos = 0
            self.rowcount = 0
            return self
        self.description = None
        self._rows, self._pos = [], 0
        self.rowcount = result.rowcount
        return None

    def executescript(self, script: str) -> list:
        """Run a SQL*Plus script (several statements; PL/SQL blocks end with ``/``)."""
        self._check()
        from . import plsql
        results = plsql.run_script(self.connection, script)
        self.output = [line for r in results for line in r.output]
        return results

    def callproc(self, name: str, parameters: Sequence | None = None,
                 keyword_parameters: dict | None = None) -> list:
        """Call ``PKG.PROC`` directly with positional and keyword arguments."""
        self._check()
        pkg_name, _, proc = name.rpartition(".")
        if not pkg_name:
            raise ora(6550, 1, 1, f"PLS-00201: identifier '{name.upper()}' must be declared")
        pkg = self.connection.package(pkg_name)
        fn = getattr(pkg, proc.lower(), None)
        if fn is None or not callable(fn):
            raise ora(6550, 1, 1, f"PLS-00302: component '{proc.upper()}' must be declared")
        kwargs = {k.lower(): v for k, v in (keyword_parameters or {}).items()}
        try:
            inspect.signature(fn).bind(*(parameters or []), **kwargs)
        except TypeError:
            raise ora(6550, 1, 1, "PLS-00306: wrong number or types of arguments in call to "
                                  f"'{proc.upper()}'") from None
        fn(*(parameters or []), **kwargs)
        return list(parameters or [])

    def fetchone(self) -> tuple | None:
        self._check()
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        self.rowcount += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        self._check()
        n = size or self.arraysize
        rows = self._rows[self._pos:self._pos + n]
        self._pos += len(rows)
        self.rowcount += len(rows)
        return rows

    def fetchall(self) -> list[tuple]:
        self._check()
        rows = self._rows[self._pos:]
        self._pos = len(self._rows)
        self.rowcount += len(rows)
        return rows

    def __iter__(self) -> Iterator[tuple]:
        while (row := self.fetchone()) is not None:
            yield row

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> "Cursor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check(self) -> None:
        if self._closed:
            raise InterfaceError("DPY-1006: cursor is not open", 1006, prefix="DPY")
        self.connection.context.check_open()
