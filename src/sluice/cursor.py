"""``Cursor``: statements through the interpreter, results as python-oracledb returns them.

``cursor.execute("BEGIN DBMS_AQADM.START_QUEUE('q'); END;")`` runs an anonymous
block; ``cursor.execute("SELECT msg_state FROM aq$qt")`` queries the views;
``cursor.callproc("dbms_aqadm.start_queue", ["q"])`` calls a package procedure;
``cursor.executemany(sql, rows)`` runs one statement per row of binds.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from .bindtypes import execute_binds, executemany_rows, keep_inputsizes
from .bindvars import bind_variables, call_bind_variables, many_bind_variables
from .dmlreturning import returning_clause
from .errors import ArgumentError, Error, InterfaceError, dpy, ora, uint32_setting
from .defaults import defaults
from .fetchvars import Var, fetched
from .objtypes import DB_TYPE_CURSOR, DB_TYPE_OBJECT
from .plsql.binds import BindVariable
from .plsql.refcursors import CursorVariable
from .refcursors import CursorVar, check_cursor_binds, implicit_results, returned_value

if TYPE_CHECKING:
    from .connection import Connection

class Cursor(BindVariable):
    """A python-oracledb-shaped cursor over Sluice's statement interpreter; bound to a block,
    it takes the REF CURSOR the block opens into it (:mod:`sluice.refcursors`)."""

    def __init__(self, connection: "Connection", scrollable: bool = False) -> None:
        self.connection = connection
        self.scrollable = scrollable
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
        self.inputtypehandler: Any = None      # (the same, for binds: sluice.bindtypes)
        self._inputsizes: tuple | None = None  # setinputsizes' variables (sluice.bindtypes)
        # python-oracledb's: called on each row fetched; reset when another statement is prepared
        self.rowfactory: Any = None
        self.statement: str | None = None     # the statement prepared or executed last
        self.lastrowid = None                 # Sluice's tables have no ROWID
        self.warning = None
        self._prefetchrows = 2
        self._async_lobs = False      # an AsyncCursor's: LOBs fetched as AsyncLOBs (sluice.fetchvars)
        # python-oracledb's bindvars (sluice.bindvars), made when asked for: building a Var per
        # value on every execute cost ~8 µs for three binds, and a pass over every row of an
        # executemany; the binds are kept as given (a shallow copy) until then
        self._bindvars: list | dict | Callable[[], list | dict] = []
        self._unopened = False        # bound as a REF CURSOR the block did not open (DPY-4025)
        self._implicit: list | None = None      # the last block's DBMS_SQL.RETURN_RESULT cursors

    @property
    def prefetchrows(self) -> int:
        """python-oracledb's rows fetched with the execute (default 2): kept, not used
        (a query's rows are all here after execute)."""
        self._check()
        return self._prefetchrows

    @prefetchrows.setter
    def prefetchrows(self, value: int) -> None:
        self._check()
        self._prefetchrows = uint32_setting(value)

    def prepare(self, statement: str, tag: str | None = None, cache_statement: bool = True) -> None:
        """python-oracledb's ``prepare``: ``statement`` is what ``execute(None, …)`` and
        ``executemany(None, …)`` run."""
        self._check()
        self._prepared(statement)

    parse = prepare      # (python-oracledb's parse also checks the text at the server)

    def _prepared(self, statement: Any) -> str:
        """The statement to run: ``statement``, or the one prepared for None (DPY-2001); a
        new statement object resets :attr:`rowfactory`, as python-oracledb's prepare does."""
        if statement is None:
            if self.statement is None:
                raise dpy(2001)
            return self.statement
        _check_statement(statement)
        if statement is not self.statement:
            self.rowfactory = None
            self.statement = statement
        return statement

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

    def execute(self, statement: str | None, parameters: dict | Sequence | None = None, *,
                fetch_lobs: bool | None = None, **kw: Any) -> "Cursor | None":
        """python-oracledb's ``execute``; ``fetch_lobs`` (None: ``defaults.fetch_lobs``)
        fetches CLOB / BLOB columns as LOBs or as str / bytes (:mod:`sluice.fetchvars`)."""
        self._check()
        from . import plsql
        statement = self._prepared(statement)
        if parameters is not None and (isinstance(parameters, (str, bytes, bytearray))
                                       or not isinstance(parameters, (dict, Sequence))):
            raise dpy(2003)
        if kw:
            if parameters:
                raise dpy(2005)
            parameters = kw
        parameters = execute_binds(self, statement, parameters)
        if parameters:                 # a cursor among them: a REF CURSOR the block may open
            check_cursor_binds(self, parameters.values() if isinstance(parameters, dict) else parameters)
        self._reset()
        kept = dict(parameters) if isinstance(parameters, dict) else list(parameters or ())
        self._bindvars = lambda: bind_variables(kept)
        handler = self.outputtypehandler or self.connection.outputtypehandler
        exact = handler is not None and _is_query(statement)
        returning = returning_clause(statement)     # DML RETURNING INTO (sluice.dmlreturning)
        with self.connection._lock:      # the statement's calls are one call of the connection
            self.connection._exact_numbers = exact     # the handler converts exact numbers
            try:
                result = returning.execute(self.connection, parameters) if returning else \
                    plsql.execute(self.connection, statement, parameters)
            finally:
                self.connection._exact_numbers = False
        self.output = list(result.output)
        self._implicit = implicit_results(self, result.implicit) if result.implicit else None
        self.warning = getattr(result, "warning", None)   # a unit created with compilation errors
        if result.columns is not None:
            self.description = result.description or [(c, None, None, None, None, None, True)
                                                       for c in result.columns]
            self._rows = list(result.rows)
            lobs = defaults.fetch_lobs if fetch_lobs is None else fetch_lobs
            self.description, self._rows = fetched(self, handler if exact else None, self.description,
                                                   self._rows, lobs)
            self._pos = 0
            self.rowcount = 0
            return self
        self.description = None
        self._rows, self._pos = [], 0
        self.rowcount = result.rowcount
        return None

    def executemany(self, statement: str | None, parameters: list | int, *, batcherrors: bool = False,
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
        statement = self._prepared(statement)
        rows = executemany_rows(self, statement, _many_rows(parameters))
        words = leading_words(statement, count=1)[0]
        if (batcherrors or arraydmlrowcounts) and words[:1] not in (["INSERT"], ["UPDATE"], ["DELETE"], ["MERGE"]):
            raise dpy(2040)
        returning = returning_clause(statement)     # DML RETURNING INTO (sluice.dmlreturning)
        if returning:
            returning.check_rows(rows)
        self._reset()
        kept_rows = list(parameters) if isinstance(parameters, list) else parameters
        self._bindvars = lambda: many_bind_variables(kept_rows)
        counts: list[int] = []
        self.rowcount, self.output = 0, []
        with self.connection._lock:      # one call of the connection, as in python-oracledb
            for offset, binds in enumerate(rows):
                try:
                    result = returning.execute(self.connection, binds, offset) if returning else \
                        plsql.execute(self.connection, statement, binds)
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
        column fetched as ``typ`` (and through ``outconverter``), see :mod:`sluice.fetchvars`,
        or a bind a PL/SQL block gives a value back in.  ``DB_TYPE_OBJECT`` needs ``typename``
        (DPY-2037), the object type's name."""
        self._check()
        if typ is DB_TYPE_OBJECT:
            if typename is None:
                raise dpy(2037)
            typ = self.connection.gettype(typename)
        if typ is DB_TYPE_CURSOR:          # a REF CURSOR's (sluice.refcursors)
            return CursorVar(self.connection.cursor, size, arraysize, inconverter, outconverter, typename,
                             encoding_errors if encodingErrors is None else encodingErrors, bypass_decode,
                             convert_nulls)
        return Var(typ, size, arraysize, inconverter, outconverter, typename,
                   encoding_errors if encodingErrors is None else encodingErrors, bypass_decode, convert_nulls)

    @property
    def bindvars(self) -> list | dict:
        """python-oracledb's: the variables the last statement was bound with, a list (by
        position) or a dict (by name), see :mod:`sluice.bindvars`."""
        self._check()
        if callable(self._bindvars):
            self._bindvars = self._bindvars()
        return self._bindvars

    def bindnames(self) -> list[str]:
        """python-oracledb's: the prepared statement's bind names, each once in the order
        they first appear, upper-cased (DPY-2002 before a statement is prepared)."""
        self._check()
        if self.statement is None:
            raise dpy(2002)
        from .plsql import statement_bind_names
        return statement_bind_names(self.statement)

    def getbatcherrors(self) -> list:
        """The errors of the rows the last ``executemany(batcherrors=True)`` could not
        execute, each with ``code``, ``full_code``, ``message`` and the row's ``offset``."""
        self._check()
        return list(self._batcherrors)

    def getimplicitresults(self) -> list:
        """python-oracledb's: the cursors the last block returned with DBMS_SQL.RETURN_RESULT,
        in order (DPY-1004 when it returned none)."""
        self._check()
        if self._implicit is None:
            raise dpy(1004)
        return list(self._implicit)

    # -- as a bind of a block: a REF CURSOR (sluice.refcursors)
    def bound_as_ref_cursor(self) -> None:
        """Bound to a block: one without rows is DPY-4025 when fetched, unless the block opens
        a cursor into it."""
        self._check()
        self._unopened = self.description is None

    def bind_value(self) -> CursorVariable | None:
        """What a block reads for this cursor: a cursor of the rows not fetched yet."""
        if self.description is None:
            return None
        state = CursorVariable()
        state.columns, state.description = [d[0] for d in self.description], self.description
        state.rows = self._rows[self._pos:]
        return state

    def assign_out(self, value: Any) -> None:
        """The block's cursor ``value`` (a cursor variable; None: one never opened): its rows
        not fetched yet become this cursor's."""
        self._check()
        if value is not None and not isinstance(value, CursorVariable):
            raise ora(932, "CURSOR", type(value).__name__.upper())
        self._reset()
        self._unopened = value is None
        if value is None or value.rows is None:     # (a closed one: nothing to fetch)
            return
        description = value.description or [(c, None, None, None, None, None, True) for c in value.columns]
        self.description, self._rows = fetched(self, None, description, value.rows[value.fetched:],
                                               defaults.fetch_lobs)
        self.rowcount = 0

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
                 keyword_parameters: dict | None = None, *, keywordParameters: dict | None = None) -> list:  # noqa: N803
        """python-oracledb's ``callproc``: ``BEGIN name(:1, …, kw => :kw, …); END;`` run with
        the arguments bound; the result is ``parameters`` with each OUT and IN OUT
        argument's value after the call (a ``cursor.var()``'s value, as python-oracledb
        gives it)."""
        binds, positional = self._call_binds(name, parameters, keyword_parameters, keywordParameters)
        self._run_call(f"{name}({_call_args(binds, positional)})", binds)
        return [returned_value(binds[str(i)]) for i in range(1, positional + 1)]

    def callfunc(self, name: str, return_type: Any, parameters: Sequence | None = None,
                 keyword_parameters: dict | None = None, *, keywordParameters: dict | None = None) -> Any:  # noqa: N803
        """python-oracledb's ``callfunc``: ``BEGIN :0 := name(…); END;`` with ``:0`` a
        variable of ``return_type`` (a Python type, a ``DB_TYPE_*`` or an object type); its
        value.  OUT arguments are written into their ``cursor.var()`` as by :meth:`callproc`."""
        binds, positional = self._call_binds(name, parameters, keyword_parameters, keywordParameters)
        result = self.var(return_type)
        # :0, a name no argument has (positions count from 1, keywords are identifiers)
        self._run_call(f":0 := {name}({_call_args(binds, positional)})", {**binds, "0": result})
        return result.getvalue()

    def _call_binds(self, name: Any, parameters: Any, keyword_parameters: Any,
                    keywordParameters: Any) -> tuple[dict, int]:  # noqa: N803
        """The binds of a call (positional ``"1"…``, keywords by their own names) and the
        count of positional ones, the arguments checked as python-oracledb checks them."""
        self._check()
        if not isinstance(name, str):
            raise InterfaceError(f"name must be a string, not {type(name).__name__}")
        if keywordParameters is not None:      # the deprecated name, alone (python-oracledb)
            if keyword_parameters is not None:
                raise dpy(2014, "keywordParameters", "keyword_parameters")
            keyword_parameters = keywordParameters
        if parameters is not None and not isinstance(parameters, (list, tuple)):
            raise dpy(2012)
        if keyword_parameters is not None and not isinstance(keyword_parameters, dict):
            raise dpy(2013)
        # a keyword must be a parameter's name (the block's text would not parse otherwise)
        if not all(isinstance(k, str) and _IDENTIFIER.match(k) for k in keyword_parameters or {}):
            simple = name.rpartition(".")[2].upper()
            raise ora(6550, 1, 7, f"PLS-00306: wrong number or types of arguments in call to '{simple}'")
        binds = {str(i): v for i, v in enumerate(parameters or [], 1)}
        binds.update(keyword_parameters or {})
        return binds, len(parameters or [])

    def _run_call(self, call: str, binds: dict) -> None:
        from . import plsql
        self._reset()
        kept = dict(binds)
        self._bindvars = lambda: call_bind_variables(kept, returned="0")
        statement = self._prepared(f"BEGIN {call}; END;")
        check_cursor_binds(self, binds.values())
        with self.connection._lock:
            result = plsql.execute(self.connection, statement, binds)
        self.output = list(result.output)
        self._implicit = implicit_results(self, result.implicit) if result.implicit else None
        self.rowcount = 0

    def arrayvar(self, typ: Any, value: list | int, size: int = 0) -> Var:
        """python-oracledb's ``arrayvar``: a variable holding a PL/SQL table of ``typ``, of
        ``value`` elements (an int) or holding ``value`` (a list)."""
        self._check()
        if isinstance(value, list):
            count = len(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            count = value
        else:
            raise TypeError("expecting integer or list of values")
        var = Var(typ, size, count, is_array=True)
        if isinstance(value, list):
            var.setvalue(0, value)
        return var

    def setinputsizes(self, *args: Any, **kwargs: Any) -> list | dict:
        """python-oracledb's ``setinputsizes``: Sluice sizes nothing in advance; the types
        given come back as variables (DPY-2005 for positional and keyword sizes both)."""
        if args and kwargs:
            raise dpy(2005)
        if not (args or kwargs):
            return []
        self._check()

        def var(size: Any) -> Any:
            if size is None or isinstance(size, Var):      # (a variable is itself)
                return size
            return self.var(str, size) if isinstance(size, int) and not isinstance(size, bool) else self.var(size)
        sizes = {k: var(v) for k, v in kwargs.items()} if kwargs else [var(v) for v in args]
        keep_inputsizes(self, sizes)
        return sizes

    def setoutputsize(self, size: int, column: int = 0) -> None:
        """Does nothing (python-oracledb's keeps it for the DB API only)."""

    def scroll(self, value: int = 0, mode: str = "relative") -> None:
        """python-oracledb's ``scroll`` on a ``connection.cursor(scrollable=True)`` (DPY-2068
        on another): the next row fetched is row ``value`` (``absolute``), the one
        ``value`` rows after the last fetched (``relative``), the first or the last;
        DPY-2063 for a row outside the result, DPY-2009 for another mode."""
        self._check()
        if not self.scrollable:
            raise dpy(2068)
        if mode not in ("relative", "absolute", "first", "last"):
            raise dpy(2009)
        self._check_fetch()
        target = {"relative": self._pos + value, "absolute": value, "first": 1,
                  "last": len(self._rows)}[mode]
        if not 1 <= target <= len(self._rows):
            raise dpy(2063)
        self._pos = self.rowcount = target - 1

    def fetchone(self) -> tuple | None:
        self._check_fetch()
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        self.rowcount += 1
        return row if self.rowfactory is None else self.rowfactory(*row)

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
        return self._made(rows)

    def fetchall(self) -> list[tuple]:
        self._check_fetch()
        rows = self._rows[self._pos:]
        self._pos = len(self._rows)
        self.rowcount += len(rows)
        return self._made(rows)

    def _made(self, rows: list[tuple]) -> list:
        factory = self.rowfactory
        return rows if factory is None else [factory(*row) for row in rows]

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
        self._unopened, self._implicit = False, None

    def _check_fetch(self) -> None:
        self._check()
        if self._unopened:
            raise dpy(4025)
        if self.description is None:   # no statement yet, or one that returns no rows
            raise dpy(1003)


_IDENTIFIER = re.compile(r"^[A-Za-z][\w$#]*$")


def _call_args(binds: dict, positional: int) -> str:
    """The argument list of a call whose binds :meth:`Cursor._call_binds` made."""
    names = list(binds)
    return ", ".join([f":{n}" for n in names[:positional]] + [f"{n} => :{n}" for n in names[positional:]])


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
