"""Oracle's functions as SQLite user functions: the one wrapper that makes them answer as Oracle.

SQLite calls a Python function with its own values and knows nothing of Oracle's rules, so
every Oracle function a user's statement may call on SQLite (:mod:`.oraclefns`'
GREATEST … CHR, :mod:`.sqlitefns`' ``ORACLE_SUBSTR`` … ``ORACLE_TO_DATE``, the views'
``RAWTOHEX``) goes through :func:`oracle_call`:

* ``''`` (an empty text or RAW) in is NULL, as Oracle has no empty string;
* a *strict* function gives NULL for any NULL argument without running (most of Oracle's do);
* ``''`` out is NULL;
* an Oracle error is kept (:func:`keep_error`) before SQLite turns it into "user-defined
  function raised exception", so the session raises the ORA error itself (:func:`kept_error`); Python's
  ``ValueError`` / ``TypeError`` / ``OverflowError`` of a bad argument may be kept as ORA-01722.
"""

from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Callable

from ..errors import DatabaseError, ora
from ..sqlfunctions import null_if_empty
from .sessionnls import DEFAULT_NLS

__all__ = ["BAD_NUMBER", "keep_error", "kept_error", "oracle_call", "session_call"]

# the Python errors of an argument that is no number (int('x'), chr(-1), …): ORA-01722
BAD_NUMBER = (ValueError, TypeError, OverflowError)
_RAISED = threading.local()       # the error of this thread's statement, until read


def keep_error(error: DatabaseError) -> None:
    """Remember the Oracle error a function of a user's statement raises (SQLite reports
    only that it raised), for :func:`kept_error`."""
    _RAISED.error = error


def kept_error() -> DatabaseError | None:
    """The error a function :func:`keep_error` raised in this thread's statement that just
    failed (and forget it)."""
    error = getattr(_RAISED, "error", None)
    _RAISED.error = None
    return error


def _same(value: Any) -> Any:
    return value


def oracle_call(impl: Callable[..., Any], *, strict: bool = True, answer: Callable[[Any], Any] = _same,
                bad_number: tuple[type[Exception], ...] = ()) -> Callable[..., Any]:
    """``impl`` as a SQLite user function with Oracle's rules (see the module): ``answer`` turns
    its result into a SQLite value; the exceptions of ``bad_number`` are ORA-01722."""
    def call(*args: Any) -> Any:
        args = tuple(null_if_empty(a) for a in args)
        if strict and any(a is None for a in args):
            return None
        try:
            return null_if_empty(answer(impl(*args)))
        except DatabaseError as e:
            keep_error(e)
            raise
        except bad_number as e:
            keep_error(ora(1722, e))
            raise
    return call


def session_call(conn: Any, impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` given the NLS settings of ``conn``'s session (ALTER SESSION, :mod:`.sessionnls`:
    the connection's ``nls``; a plain sqlite3 connection has Oracle's defaults) before its
    arguments, as they are when it is called; a store's connection is held weakly (it holds
    the function)."""
    if not hasattr(conn, "nls"):
        return functools.partial(impl, DEFAULT_NLS)
    held = weakref.ref(conn)

    def call(*args: Any) -> Any:
        return impl(held().nls, *args)
    return call

