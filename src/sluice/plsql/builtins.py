"""The SQL functions and small standard packages a block may use without a
connection: ``UPPER``, ``SUBSTR``, ``TO_CHAR``, ``TO_DATE``, ``HEXTORAW`` …,
``UTL_RAW``, ``DBMS_OUTPUT`` (:mod:`.dbmsoutput`), ``DBMS_LOCK.SLEEP``.

Functions take positional arguments only (PL/SQL's named notation is for
package subprograms).  Most return NULL when any argument is NULL, as in Oracle.
"""

from __future__ import annotations

import datetime as _dt
import time
import uuid
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from typing import Callable

from ..errors import DatabaseError, ora
from ..numformat import format_number
from .dbmsoutput import DbmsOutput, SessionOutput
from .composites import cardinality
from ..store.sessionnls import number_written
from .values import _FORMAT_TOKEN, date_format, format_date, is_number, session_nls, to_number, to_text

_STRPTIME = {"YYYY": "%Y", "SYYYY": "%Y", "RRRR": "%Y", "YY": "%y", "RR": "%y", "MONTH": "%B",
             "MON": "%b", "MM": "%m", "DDD": "%j", "DD": "%d", "DY": "%a", "DAY": "%A",
             "HH24": "%H", "HH12": "%I", "HH": "%I", "MI": "%M", "SS": "%S", "AM": "%p",
             "PM": "%p", "A.M.": "%p", "P.M.": "%p", "FM": "", "FX": ""}


def to_char(value, fmt: str | None = None):
    if value is None:
        return None
    if isinstance(value, (_dt.date, _dt.datetime)):
        return format_date(value, fmt or date_format())
    if is_number(value) and fmt:      # Oracle's number models, as SQL's (sluice.numformat); the session's D, G
        return number_written(format_number(value, fmt), fmt, session_nls())
    return to_text(value)


def to_date(text, fmt: str | None = None):
    if text is None:
        return None
    if isinstance(text, _dt.datetime):
        return text
    text = to_text(text).strip()
    formats = [fmt] if fmt else [date_format(), "YYYY-MM-DD HH24:MI:SS", "YYYY-MM-DD",
                                 "DD-MON-YYYY", "YYYY-MM-DD\"T\"HH24:MI:SS"]
    for oracle_fmt in formats:
        pattern = "".join(_STRPTIME.get(t.upper(), "%f" if t.upper().startswith("FF")
                                        else t[1:-1] if t.startswith('"')
                                        else t.replace("%", "%%"))
                          for t in _FORMAT_TOKEN.findall(oracle_fmt))
        try:
            return _dt.datetime.strptime(text, pattern)
        except ValueError:
            continue
    raise ora(1861)


def _null_in(fn):
    """Wrap a function so that any NULL argument gives NULL, like most SQL functions."""
    def wrapper(*args):
        return None if any(a is None for a in args) else fn(*args)
    wrapper.__wrapped__ = fn       # inspect.signature sees the real arity
    return wrapper


def _substr(s, pos, length=None):
    s, pos = to_text(s), int(to_number(pos))
    if pos == 0:
        pos = 1                       # Oracle treats position 0 as 1
    start = pos - 1 if pos > 0 else len(s) + pos
    if start < 0 or start >= len(s) or (length is not None and length < 1):
        return None
    end = len(s) if length is None else start + int(length)
    return s[start:end] or None


def _instr(s, sub, pos=1, nth=1):
    s, sub, i = to_text(s), to_text(sub), int(pos) - 1
    for _ in range(int(nth)):
        i = s.find(sub, i)
        if i < 0:
            return 0
        i += 1
    return i


def _quantize(n, places, rounding):
    d = Decimal(str(to_number(n))).quantize(Decimal(1).scaleb(-int(places)), rounding=rounding)
    return int(d) if d == d.to_integral_value() else float(d)


def _round(n, places=0):
    return _quantize(n, places, ROUND_HALF_UP)      # Oracle rounds halves away from zero


def _trunc(n, places=0):
    return _quantize(n, places, ROUND_DOWN)


def _mod(a, b):
    a, b = to_number(a), to_number(b)
    return a if b == 0 else a - b * int(a / b)       # MOD(a, 0) is a; sign follows a


def _nvl2(a, if_not_null, if_null):
    return if_null if a is None else if_not_null


FUNCTIONS = {
    "UPPER": _null_in(lambda s: to_text(s).upper()),
    "LOWER": _null_in(lambda s: to_text(s).lower()),
    "INITCAP": _null_in(lambda s: to_text(s).title()),
    "LENGTH": _null_in(lambda s: len(s) if isinstance(s, bytes) else len(to_text(s))),
    "SUBSTR": _null_in(_substr),
    "INSTR": _null_in(_instr),
    "TRIM": _null_in(lambda s: to_text(s).strip(" ") or None),
    "LTRIM": _null_in(lambda s, chars=" ": to_text(s).lstrip(chars) or None),
    "RTRIM": _null_in(lambda s, chars=" ": to_text(s).rstrip(chars) or None),
    "REPLACE": lambda s, old, new=None: None if s is None else
    (to_text(s).replace(old, new or "") if old else s) or None,
    "LPAD": _null_in(lambda s, n, pad=" ": to_text(s).rjust(int(n), pad)[-int(n):] or None),
    "RPAD": _null_in(lambda s, n, pad=" ": to_text(s).ljust(int(n), pad)[:int(n)] or None),
    "CONCAT": lambda a, b: (to_text(a) or "") + (to_text(b) or "") or None,
    "CHR": _null_in(lambda n: chr(int(n))),
    "ASCII": _null_in(lambda s: ord(to_text(s)[0])),
    "NVL": lambda a, b: b if a is None else a,
    "CARDINALITY": cardinality,
    "NVL2": _nvl2,
    "COALESCE": lambda *args: next((a for a in args if a is not None), None),
    "TO_CHAR": lambda v, fmt=None: to_char(v, fmt),
    "TO_NUMBER": lambda v: to_number(v),
    "TO_DATE": to_date,
    "TO_TIMESTAMP": to_date,
    "HEXTORAW": _null_in(lambda s: bytes.fromhex(to_text(s)) if isinstance(s, str) else s),
    "RAWTOHEX": _null_in(lambda r: bytes(r).hex().upper() if isinstance(r, (bytes, bytearray))
                         else to_text(r)),
    "ABS": _null_in(lambda n: abs(to_number(n))),
    "ROUND": _null_in(_round),
    "TRUNC": _null_in(_trunc),
    "FLOOR": _null_in(lambda n: int(to_number(n) // 1)),
    "CEIL": _null_in(lambda n: -int(-to_number(n) // 1)),
    "MOD": _null_in(_mod),
    "POWER": _null_in(lambda a, b: to_number(a) ** to_number(b)),
    "GREATEST": _null_in(lambda *args: max(args)),
    "LEAST": _null_in(lambda *args: min(args)),
    "SYS_GUID": lambda: uuid.uuid4().bytes,
    "SYSDATE": lambda: _dt.datetime.now().replace(microsecond=0),
    "SYSTIMESTAMP": lambda: _dt.datetime.now().astimezone(),
    "CURRENT_DATE": lambda: _dt.datetime.now().replace(microsecond=0),
    "CURRENT_TIMESTAMP": lambda: _dt.datetime.now().astimezone(),
    "LOCALTIMESTAMP": lambda: _dt.datetime.now(),
}
# Functions Oracle calls without parentheses.
NO_PARENS = frozenset({"SYSDATE", "SYSTIMESTAMP", "CURRENT_DATE", "CURRENT_TIMESTAMP",
                       "LOCALTIMESTAMP"})


def session_clock(tz: _dt.tzinfo) -> dict[str, Callable]:
    """CURRENT_DATE, CURRENT_TIMESTAMP and LOCALTIMESTAMP of a session in the time zone
    ``tz`` (SYSDATE and SYSTIMESTAMP stay the host's: the database server's)."""
    return {"CURRENT_DATE": lambda: _dt.datetime.now(tz).replace(microsecond=0, tzinfo=None),
            "CURRENT_TIMESTAMP": lambda: _dt.datetime.now(tz),
            "LOCALTIMESTAMP": lambda: _dt.datetime.now(tz).replace(tzinfo=None)}


# ---------------------------------------------------------- standard packages
class UtlRaw:
    """``UTL_RAW``: RAW values are Python ``bytes``; text is UTF-8 (AL32UTF8)."""

    def cast_to_raw(self, c) -> bytes | None:
        return None if c is None else to_text(c).encode("utf-8")

    def cast_to_varchar2(self, r) -> str | None:
        return None if r is None else bytes(r).decode("utf-8", errors="replace")

    def length(self, r) -> int | None:
        return None if r is None else len(r)

    def concat(self, r1=None, r2=None, r3=None, r4=None, r5=None, r6=None) -> bytes | None:
        parts = [bytes(r) for r in (r1, r2, r3, r4, r5, r6) if r is not None]
        return b"".join(parts) or None

    def substr(self, r, pos, len=None) -> bytes | None:      # noqa: A002 - Oracle's parameter name
        if r is None:
            return None
        data = bytes(r)
        start = pos - 1 if pos > 0 else data.__len__() + pos   # ``len`` is the parameter
        return data[start:] if len is None else data[start:start + len]


class DbmsLock:
    """``DBMS_LOCK.SLEEP`` / ``DBMS_SESSION.SLEEP``: seconds, fractions allowed."""

    def sleep(self, seconds) -> None:
        time.sleep(float(to_number(seconds) or 0))


class DbmsStandard:
    """``DBMS_STANDARD``: its subprograms are callable without the package name."""

    def raise_application_error(self, num, msg=None, keeperrorstack=False) -> None:
        code = to_number(num)
        if not isinstance(code, int) or not -20999 <= code <= -20000:
            raise ora(21000, num)
        # User error numbers are not in the catalogue: they carry the caller's text.
        raise DatabaseError(f"ORA-{-code:05d}: {to_text(msg) or ''}", -code)


def standard_packages(output: list[str], session_output: SessionOutput) -> dict[str, object]:
    """Packages the interpreter provides itself, ahead of the connection's."""
    return {"UTL_RAW": UtlRaw(), "DBMS_OUTPUT": DbmsOutput(output, session_output), "DBMS_LOCK": DbmsLock(),
            "DBMS_SESSION": DbmsLock(), "DBMS_STANDARD": DbmsStandard()}
