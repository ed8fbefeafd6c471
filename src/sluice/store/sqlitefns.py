"""SQLite user functions behind the SQLite rendering of rule conditions.

SQLite has no regular expressions, no Oracle number formatting and ASCII-only
``upper()``; rather than approximate them, the SQLite target
(:mod:`sluice.rules.compile.sql.sqlite`) calls back into the very implementations the
Python compiler uses (:mod:`sluice.sqlfunctions`), so the two cannot disagree.  The
store registers them on every connection it opens (:func:`register_sqlite_functions`).

Values cross the boundary in SQLite's storage classes: NUMBER is INTEGER or
REAL, text is TEXT, RAW is BLOB and DATE is INTEGER microseconds since
1970-01-01 00:00:00 (wall clock, no time zone).  Every function returns NULL
instead of raising: the conditions track Oracle's errors separately.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from datetime import datetime, timedelta
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Any, Callable

from ..errors import DatabaseError, ora
from . import oracledates
from ..numformat import format_number, is_number_model
from .oraclefns import register_oracle_functions
from .sessionnls import DEFAULT_NLS, SessionNls, number_written, numeric_text, written_model
from .sqlitecalls import oracle_call, session_call
from .sqlitedays import register_add_days
from .sqlhierarchy import register_hierarchy
from .listaggs import register_listagg
from ..sqlfunctions import (FUNCTIONS, hextoraw, like_regex, null_if_empty, number_text, to_date,
                            to_number)

__all__ = ["register_sqlite_functions", "divided_by_zero", "to_sqlite", "from_sqlite", "EPOCH"]

EPOCH = datetime(1970, 1, 1)
_MICRO = timedelta(microseconds=1)
_INT64 = (-(2**63), 2**63 - 1)


def to_sqlite(value: Any) -> Any:
    """An engine value as a SQLite parameter (DATE -> microseconds, Decimal -> int/float)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime):
        return (value - EPOCH) // _MICRO
    if isinstance(value, Decimal):
        if value == value.to_integral_value() and _INT64[0] <= value <= _INT64[1]:
            return int(value)
        return float(value)
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
        return float(value)  # SQLite's INTEGER is 64-bit; larger numbers are REAL, as in SQLite
    return value


def from_sqlite(value: Any, kind: str) -> Any:
    """A SQLite value of the given kind code (N C D R) as an engine value."""
    if value is None:
        return None
    if kind == "D":
        return EPOCH + value * _MICRO
    if kind == "R" and isinstance(value, memoryview):
        return bytes(value)
    return value


def _safe(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except (DatabaseError, ValueError, TypeError, OverflowError, ArithmeticError):
            return None
    return call


def _num(text: Any) -> Any:
    if text is None:
        return None
    return to_sqlite(to_number(text))


def _num_text(n: Any) -> str | None:
    return None if n is None else number_text(n)


def _hextoraw(text: Any) -> bytes | None:
    return None if text is None else hextoraw(text)


def _to_date(text: Any, fmt: Any = None) -> int | None:
    return None if text is None else to_sqlite(to_date(text, fmt))


def _date_add(micros: Any, days: Any) -> int | None:
    if micros is None or days is None:
        return None
    return to_sqlite(EPOCH + micros * _MICRO + timedelta(days=float(days)))


def _like(value: Any, pattern: Any, escape: Any = None) -> int | None:
    if value is None or pattern is None:
        return None
    return int(like_regex(pattern, escape).fullmatch(value) is not None)


def _like3(value: Any, pattern: Any, escape: Any) -> int | None:
    return None if escape is None else _like(value, pattern, escape)


def _like_bad(pattern: Any, escape: Any) -> int:
    try:
        like_regex(pattern, escape)
    except DatabaseError:
        return 1
    return 0


def _fn(name: str, kinds: str, *args: Any) -> Any:
    """``sluice_fn('SUBSTR', 'CN', s, 2)``: the Python built-in on decoded arguments."""
    if any(a is None for a in args):
        return None  # the typed targets only send strict calls here
    values = [from_sqlite(a, k) for a, k in zip(args, kinds)]
    return to_sqlite(null_if_empty(FUNCTIONS[name].impl(*values)))


# a DATE or TIMESTAMP of a user's statement on SQLite: the text it is held as (always with a time)
_DATE_TEXT = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?")


def _user_to_char(nls: SessionNls, value: Any, fmt: Any = None) -> str | None:
    # a number (SQLite's dates are text) or text read as one by a number model, with the
    # session's D and G (NLS_NUMERIC_CHARACTERS)
    if fmt is not None and (isinstance(value, (int, float)) or is_number_model(fmt) and isinstance(value, str)):
        if isinstance(value, str):
            try:
                value = Decimal(numeric_text(value.strip(), nls))
            except ArithmeticError:
                raise ora(1722) from None
        return number_written(format_number(value, fmt), fmt, nls)
    if isinstance(value, str) and _DATE_TEXT.fullmatch(value):
        value = datetime.fromisoformat(value)
        if fmt is None and nls is not DEFAULT_NLS:      # the session's NLS_DATE_FORMAT (a fraction: a TIMESTAMP's)
            fmt = written_model(nls.timestamp_format if value.microsecond else nls.date_format)
    return oracledates.to_char(value, fmt)


def _user_to_date(nls: SessionNls, text: Any, fmt: Any = None) -> str:
    if fmt is None and nls is not DEFAULT_NLS and not (isinstance(text, str) and _DATE_TEXT.fullmatch(text)):
        fmt = written_model(nls.date_format)        # text read by the session's NLS_DATE_FORMAT
    date = oracledates.to_date(str(text), fmt) if fmt is not None else to_date(str(text))
    return date.replace(microsecond=0).isoformat(" ")


# Oracle's functions of a user's statement (:mod:`.oraclecalls`: ``ORACLE_SUBSTR`` …) on SQLite's
# values, whose dates are text; :func:`.sqlitecalls.oracle_call` gives them Oracle's NULL and errors
_ORACLE: dict[str, Callable[..., Any]] = {"SUBSTR": FUNCTIONS["SUBSTR"].impl, "INSTR": FUNCTIONS["INSTR"].impl,
                                          "TO_CHAR": _user_to_char, "TO_DATE": _user_to_date}


_ZERO = threading.local()    # a divisor was zero in this thread's statement


def _divisor(value: Any) -> Any:
    """``a / sluice_divisor(b)`` (a user's division, :mod:`.sqloracle`): ``b`` as a REAL,
    so that the quotient of integers is exact as Oracle's NUMBER division (SQLite's
    ``7 / 2`` is 3), and a zero raises — SQLite's own ``a / 0`` is NULL, Oracle's
    ORA-01476.  SQLite reports only that the function raised: :func:`divided_by_zero`
    tells why."""
    number = value
    if isinstance(value, str):       # arithmetic reads text as a number, as Oracle converts it
        try:
            number = float(value)
        except ValueError:
            return value
    if isinstance(number, (int, float)) and not isinstance(number, bool):
        if number == 0:
            _ZERO.raised = True
            raise ZeroDivisionError("ORA-01476")
        return float(number)
    return value


def divided_by_zero() -> bool:
    """Whether the statement that just failed in this thread divided by zero (and forget it)."""
    raised = getattr(_ZERO, "raised", False)
    _ZERO.raised = False
    return raised


def _to_digits(rounding: str) -> Callable[..., Any]:
    """Oracle's ``TRUNC(n [, d])`` (``sluice_trunc``: ``rounding`` ROUND_DOWN, toward zero) or
    ``ROUND(n [, d])`` (``sluice_round``: ROUND_HALF_UP, half away from zero) of a number
    (:mod:`.sqloracle`), to ``d`` digits after the point (before it for a negative ``d``):
    SQLite has no TRUNC to digits, and its round takes a negative ``d`` for 0.  Text is
    read as a number, as Oracle converts it."""
    def to_digits(value: Any, digits: Any = 0) -> Any:
        if value is None or digits is None:
            return None
        number = Decimal(value.strip() if isinstance(value, str) else repr(value) if isinstance(value, float)
                         else value)
        cut = number.scaleb(int(digits)).to_integral_value(rounding=rounding).scaleb(-int(digits))
        return int(cut) if cut == cut.to_integral_value() else float(cut)
    return to_digits


def register_sqlite_functions(conn: sqlite3.Connection) -> None:
    """Make ``conn`` able to run SQL compiled for the ``sqlite`` dialect."""
    functions: list[tuple[str, int, Callable[..., Any]]] = [
        ("sluice_num", 1, _num), ("sluice_num_text", 1, _num_text),
        ("sluice_hextoraw", 1, _hextoraw),
        ("sluice_to_date", 1, _to_date), ("sluice_to_date", 2, _to_date),
        ("sluice_date_add", 2, _date_add),
        ("sluice_like", 2, _like), ("sluice_like", 3, _like3),
        ("sluice_fn", -1, _fn),
    ]
    for name, narg, fn in functions:
        conn.create_function(name, narg, _safe(fn), deterministic=True)
    conn.create_function("sluice_like_bad", 2, _like_bad, deterministic=True)
    conn.create_function("sluice_divisor", 1, _divisor, deterministic=True)
    for name, rounding in (("sluice_trunc", ROUND_DOWN), ("sluice_round", ROUND_HALF_UP)):
        for narg in (1, 2):
            conn.create_function(name, narg, _safe(_to_digits(rounding)), deterministic=True)
    # (ORACLE_, not sluice_: SQLite's names ignore case, and sluice_to_date is the rules' TO_DATE)
    for name, most in (("SUBSTR", 3), ("INSTR", 4), ("TO_CHAR", 2), ("TO_DATE", 2)):
        impl = session_call(conn, _ORACLE[name]) if name.startswith("TO_") else _ORACLE[name]     # (NLS_…)
        for narg in range(1 if name.startswith("TO_") else 2, most + 1):
            conn.create_function("ORACLE_" + name, narg, oracle_call(impl, answer=to_sqlite), deterministic=True)
    register_add_days(conn)
    register_listagg(conn)
    register_hierarchy(conn)
    register_oracle_functions(conn)
