"""``Cursor``: statements through the interpreter, results as python-oracledb returns them.

``cursor.execute("BEGIN DBMS_AQADM.START_QUEUE('q'); END;")`` runs an anonymous
block; ``cursor.execute("SELECT msg_state FROM aq$qt")`` queries the views;
``cursor.callproc("dbms_aqadm.start_queue", ["q"])`` calls a package procedure;
``cursor.executemany(sql, rows)`` runs one statement per row of binds.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from .errors import ArgumentError, Error, InterfaceError, dpy, not_supported, ora
from .fetchvars import Var, fetch_converters

if TYPE_CHECKING:
    from .connection import Connection

class Cursor:
    """A python-oracledb-shaped cursor over Sluice's statement interpreter."""

    def __init__(self, connection: "Connection") -> None:
        self.connection = connection
        self.description: list[tuple] | None = None
        self.rowcount = -1
        self.output: list[str] = []
        self._rows: list[tuple] = []
        self._pos = 0
        self._closed = False
        self._arraysize = 100
        self._batcherrors: list = []
        self._dmlrowcounts: list[int] | None = None
        # python-oracledb's: this cursor's own, else the connection's (sluice.fetchvars)
        self.outputtypehandler: Any = None

    @property
    def arraysize(self) -> int:
        """The rows :meth:`fetchmany` returns when not told (python-oracledb: 100)."""
        self._check()
        return self._arraysize

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        self._check()
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise dpy(2045)
        self._arraysize = value

    def execute(self, statement: str, parameters: dict | Sequence | None = None, **kw: Any) -> "Cursor | None":
        self._check()
        from . import plsql
        _check_statement(statement)
        if parameters is not None and (isinstance(parameters, (str, bytes, bytearray))
                                       or not isinstance(parameters, (dict, Sequence))):
            raise dpy(2003)
        if kw:
            if parameters:
                raise dpy(2005)
            parameters = kw
        if any(isinstance(v, Var) for v in (parameters.values() if isinstance(parameters, dict)
                                              else parameters or ())):
            raise not_supported("a variable from cursor.var() bound in a statement (Sluice's variables "
                                "serve output type handlers)")
        self._reset()
        handler = self.outputtypehandler or self.connection.outputtypehandler
        exact = handler is not None and _is_query(statement)
        with self.connection._lock:      # the statement's calls are one call of the connection
            self.connection._exact_numbers = exact     # the handler converts exact numbers
            try:
                result = plsql.execute(self.connection, statement, parameters)
            finally:
                self.connection._exact_numbers = False
        self.output = list(result.output)
        if result.columns is not None:
            self.description = result.description or [(c, None, None, None, None, None, True)
                                                       for c in result.columns]
            self._rows = list(result.rows)
            if exact:
                converters = fetch_converters(self, handler, self.description)
                self._rows = [tuple(f(v) for f, v in zip(converters, row)) for row in self._rows]
            self._pos = 0
            self.rowcount = 0
            return self
        self.description = None
        self._rows, self._pos = [], 0
        self.rowcount = result.rowcount
        return None

    def executemany(self, statement: str, parameters: list | int, *, batcherrors: bool = False,
                    arraydmlrowcounts: bool = False) -> None:
        """python-oracledb's ``executemany``: ``statement`` once per element of ``parameters``
        (sequences bind by position, dicts by name), or ``parameters`` times when it is an
        int (a statement without binds), all in the session's transaction.

        Without ``batcherrors`` the first failing row raises (its ``e.args[0].offset`` is
        the row's index) and, as in Oracle, the rows before it stay done in the open
        transaction.  With ``batcherrors=True`` every row is tried: a failing row is undone
        alone and its error kept for :meth:`getbatcherrors`.  ``arraydmlrowcounts=True``
        keeps each row's count for :meth:`getarraydmlrowcounts`.  Both only for DML."""
        self._check()
        from . import plsql
        from .plsql.script import leading_words
        _check_statement(statement)
        rows = _many_rows(parameters)
        words = leading_words(statement, count=1)[0]
        if (batcherrors or arraydmlrowcounts) and words[:1] not in (["INSERT"], ["UPDATE"], ["DELETE"], ["MERGE"]):
            raise dpy(2040)
        self._reset()
        counts: list[int] = []
        self.rowcount, self.output = 0, []
        with self.connection._lock:      # one call of the connection, as in python-oracledb
            for offset, binds in enumerate(rows):
                try:
                    result = plsql.execute(self.connection, statement, binds)
                except Error as e:
                    detail = dataclasses.replace(e.args[0], offset=offset)   # python-oracledb's _Error.offset
                    e.args = (detail,)
                    if not batcherrors:
                        raise
                    self._batcherrors.append(detail)
                    counts.append(0)
                    continue
                self.output.extend(result.output)
                counts.append(max(result.rowcount, 0))
                self.rowcount += counts[-1]
        if arraydmlrowcounts:
            self._dmlrowcounts = counts

    def var(self, typ: Any, size: int = 0, arraysize: int = 1, inconverter: Any = None, outconverter: Any = None,
            typename: str | None = None, encoding_errors: str | None = None, bypass_decode: bool = False,
            convert_nulls: bool = False, *, encodingErrors: str | None = None) -> Var:  # noqa: N803
        """python-oracledb's ``cursor.var()``: what an output type handler returns to have a
        column fetched as ``typ`` (and through ``outconverter``), see :mod:`sluice.fetchvars`."""
        self._check()
        return Var(typ, size, arraysize, inconverter, outconverter, typename,
                   encoding_errors if encodingErrors is None else encodingErrors, bypass_decode, convert_nulls)

    def getbatcherrors(self) -> list:
        """The errors of the rows the last ``executemany(batcherrors=True)`` could not
        execute, each with ``code``, ``full_code``, ``message`` and the row's ``offset``."""
        self._check()
        return list(self._batcherrors)

    def getarraydmlrowcounts(self) -> list[int]:
        """Each row's count of the last ``executemany(arraydmlrowcounts=True)`` (DPY-4006
        without it)."""
        self._check()
        if self._dmlrowcounts is None:
            raise dpy(4006)
        return list(self._dmlrowcounts)

    def executescript(self, script: str) -> list:
        """Run a SQL*Plus script (several statements; PL/SQL blocks end with ``/``)."""
        self._check()
        from . import plsql
        _check_statement(script)
        with self.connection._lock:
            results = plsql.run_script(self.connection, script)
        self.output = [line for r in results for line in r.output]
        return results

    def callproc(self, name: str, parameters: Sequence | None = None,
                 keyword_parameters: dict | None = None) -> list:
        """Call ``PKG.PROC`` directly with positional and keyword arguments."""
        self._check()
        if not isinstance(name, str):
            raise InterfaceError(f"name must be a string, not {type(name).__name__}")
        if parameters is not None and not isinstance(parameters, (list, tuple)):
            raise dpy(2012)
        if keyword_parameters is not None and not isinstance(keyword_parameters, dict):
            raise dpy(2013)
        pkg_name, _, proc = name.rpartition(".")
        if not pkg_name:
            raise ora(6550, 1, 1, f"PLS-00201: identifier '{name.upper()}' must be declared")
        pkg = self.connection.package(pkg_name)
        fn = getattr(pkg, proc.lower(), None)
        if fn is None or not callable(fn):
            raise ora(6550, 1, 1, f"PLS-00302: component '{proc.upper()}' must be declared")
        wrong = ora(6550, 1, 1, f"PLS-00306: wrong number or types of arguments in call to '{proc.upper()}'")
        if not all(isinstance(k, str) for k in keyword_parameters or {}):   # no parameter is so named
            raise wrong
        kwargs = {k.lower(): v for k, v in (keyword_parameters or {}).items()}
        try:
            inspect.signature(fn).bind(*(parameters or []), **kwargs)
        except TypeError:
            raise wrong from None
        fn(*(parameters or []), **kwargs)
        return list(parameters or [])

    def fetchone(self) -> tuple | None:
        self._check_fetch()
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        self.rowcount += 1
        return row

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        """The next ``size`` rows (``arraysize`` when None); none for 0 or fewer, as in
        python-oracledb."""
        self._check_fetch()
        if size is None:
            size = self._arraysize
        elif not isinstance(size, int) or isinstance(size, bool):
            raise ArgumentError(f"size must be an integer, not {type(size).__name__}")
        n = max(size, 0)
        rows = self._rows[self._pos:self._pos + n]
        self._pos += len(rows)
        self.rowcount += len(rows)
        return rows

    def fetchall(self) -> list[tuple]:
        self._check_fetch()
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

    def _reset(self) -> None:
        """Before a statement: what the last one left (rows, batch errors, counts) goes, so
        a failing statement leaves none of it behind."""
        self.description, self._rows, self._pos = None, [], 0
        self._batcherrors, self._dmlrowcounts = [], None

    def _check_fetch(self) -> None:
        self._check()
        if self.description is None:   # no statement yet, or one that returns no rows
            raise dpy(1003)


def _is_query(statement: str) -> bool:
    from .plsql.script import leading_words
    words = leading_words(statement, count=1)[0]
    return words[:1] in (["SELECT"], ["WITH"], ["("])


def _check_statement(statement: Any) -> None:
    if not isinstance(statement, str):
        raise InterfaceError(f"statement must be a string, not {type(statement).__name__}")


def _many_rows(parameters: Any) -> Any:
    """``executemany``'s rows, all checked before the first runs: a list of sequences or of
    dicts (not both: DPY-2006), or an int (that many executions without binds); DPY-2004
    for anything else, as in python-oracledb."""
    if isinstance(parameters, int) and not isinstance(parameters, bool):
        if parameters < 0:
            raise dpy(2004)
        return itertools.repeat(None, parameters)
    if not isinstance(parameters, list):
        raise dpy(2004)
    styles = set()
    for row in parameters:
        if isinstance(row, dict):
            styles.add(dict)
        elif isinstance(row, Sequence) and not isinstance(row, (str, bytes, bytearray)):
            styles.add(list)
        else:
            raise dpy(2004)
    if len(styles) > 1:
        raise dpy(2006)
    return parameters
