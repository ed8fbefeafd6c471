"""PL/SQL value semantics on Python values: NULL propagation, three-valued
logic, implicit conversions, and Oracle's text form of numbers, RAW and dates.

Values are plain Python: ``None`` (NULL), ``bool``, ``int``/``float``/
``Decimal`` (NUMBER), ``str`` (VARCHAR2), ``bytes`` (RAW), ``datetime``.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from decimal import Decimal, InvalidOperation
from contextvars import ContextVar
from fractions import Fraction
from typing import Callable

from ..errors import ora
from ..store.sessionnls import DEFAULT_NLS, SessionNls, numeric_text, written_model

Number = (int, float, Decimal)


def is_number(v) -> bool:
    return isinstance(v, Number) and not isinstance(v, bool)


def number_text(n) -> str:
    """Oracle's TO_CHAR of a NUMBER: no trailing zeros, no leading zero (``.5``)."""
    if isinstance(n, int):
        return str(n)
    d = Decimal(str(n)).normalize()
    if d == d.to_integral_value():
        return str(d.quantize(Decimal(1)))
    text = format(d, "f")
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text


DEFAULT_DATE_FORMAT = "DD-MON-RR"
# the session's NLS settings (ALTER SESSION SET NLS_…), read as they are at each conversion: a
# block's EXECUTE IMMEDIATE 'ALTER SESSION …' changes them for its next statements
# (script.py sets it from the connection's ``session_nls`` hook for each block)
SESSION_NLS: ContextVar[Callable[[], SessionNls] | None] = ContextVar("sluice_plsql_nls", default=None)


def date_format() -> str:
    """The session's NLS_DATE_FORMAT: a DATE made text without a model (``TO_CHAR(d)``, ``||``)."""
    source = SESSION_NLS.get()
    return DEFAULT_DATE_FORMAT if source is None else written_model(source().date_format)


def session_nls() -> SessionNls:
    source = SESSION_NLS.get()
    return DEFAULT_NLS if source is None else source()
_FORMAT_TOKEN = re.compile(
    r'"[^"]*"|YYYY|SYYYY|RRRR|YY|RR|MONTH|MON|MM|DDD|DD|DY|DAY|D|HH24|HH12|HH|MI|SS'
    r"|FF[1-9]?|A\.M\.|P\.M\.|AM|PM|FM|FX|.", re.IGNORECASE | re.DOTALL)


def _cased(text: str, token: str) -> str:
    """MON -> JAN, Mon -> Jan, mon -> jan: Oracle copies the format's capitalisation."""
    if token.isupper():
        return text.upper()
    return text.capitalize() if token[0].isupper() else text.lower()


def _date_piece(d: _dt.datetime, tok: str, fill: bool) -> str:
    up = tok.upper()
    if up.startswith("FF"):
        digits = int(up[2:] or 6)
        return f"{d.microsecond:06d}"[:digits].ljust(digits, "0")
    simple = {"YYYY": f"{d.year:04d}", "SYYYY": f"{d.year:04d}", "RRRR": f"{d.year:04d}",
              "YY": f"{d.year % 100:02d}", "RR": f"{d.year % 100:02d}", "MM": f"{d.month:02d}",
              "DD": f"{d.day:02d}", "DDD": f"{d.timetuple().tm_yday:03d}",
              "D": str(d.isoweekday() % 7 + 1),
              "HH24": f"{d.hour:02d}" if isinstance(d, _dt.datetime) else "00",
              "MI": f"{getattr(d, 'minute', 0):02d}", "SS": f"{getattr(d, 'second', 0):02d}"}
    if up in simple:
        return simple[up]
    if up in ("HH", "HH12"):
        return f"{(getattr(d, 'hour', 0) % 12) or 12:02d}"
    if up in ("AM", "PM", "A.M.", "P.M."):
        meridian = "AM" if getattr(d, "hour", 0) < 12 else "PM"
        return _cased(meridian if "." not in up else f"{meridian[0]}.M.", tok)
    names = {"MON": calendar.month_abbr[d.month], "MONTH": calendar.month_name[d.month],
             "DY": calendar.day_abbr[d.weekday()], "DAY": calendar.day_name[d.weekday()]}
    if up in names:
        text = names[up]
        if fill and up in ("MONTH", "DAY"):
            text = text.ljust(9)         # Oracle pads names unless FM is given
        return _cased(text, tok)
    if tok.startswith('"'):
        return tok[1:-1]
    return tok


def format_date(d, fmt: str) -> str:
    """A DATE in the format model ``fmt`` (``TO_CHAR(d, fmt)``; FM toggles padding)."""
    fill, out = True, []
    for tok in _FORMAT_TOKEN.findall(fmt):
        if tok.upper() == "FM":
            fill = not fill
        elif tok.upper() != "FX":
            out.append(_date_piece(d, tok, fill))
    return "".join(out)


def to_text(v) -> str | None:
    """Implicit conversion to VARCHAR2, as ``||`` and string parameters do it."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        raise ora(6502, "cannot convert BOOLEAN to a character string")
    if is_number(v):
        return number_text(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex().upper()    # RAW converts to its hex digits
    if isinstance(v, (_dt.date, _dt.datetime)):
        return format_date(v, date_format())
    return str(v)


def to_number(v):
    if v is None or is_number(v):
        return v
    if isinstance(v, str):
        text = numeric_text(v.strip(), session_nls())      # (the session's decimal character)
        try:
            return int(text)
        except ValueError:
            pass
        try:
            return _tidy(float(Decimal(text)))
        except InvalidOperation:
            raise ora(1722, repr(v)) from None
    raise ora(6502, f"cannot convert {type(v).__name__} to a number")


def _tidy(n):
    """Integral results stay ints, so ``10/2`` binds as 5, not 5.0."""
    if isinstance(n, Fraction):
        return int(n) if n.denominator == 1 else float(n)
    if isinstance(n, float) and n.is_integer() and abs(n) < 2**53:
        return int(n)
    return n


def arithmetic(op: str, a, b):
    if a is None or b is None:
        return None
    if isinstance(a, _dt.datetime) or isinstance(b, _dt.datetime):
        return _date_arithmetic(op, a, b)
    a, b = to_number(a), to_number(b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "**":
        return _tidy(a ** b)
    if b == 0:
        raise ora(1476)
    if op == "MOD":
        return a - b * int(a / b)           # Oracle's MOD keeps the dividend's sign
    exact = isinstance(a, int) and isinstance(b, int)
    return _tidy(Fraction(a, b) if exact else a / b)


def _date_arithmetic(op: str, a, b):
    if op == "+" and isinstance(a, _dt.datetime) and is_number(b):
        return a + _dt.timedelta(days=float(b))
    if op == "+" and isinstance(b, _dt.datetime) and is_number(a):
        return b + _dt.timedelta(days=float(a))
    if op == "-" and isinstance(a, _dt.datetime) and is_number(b):
        return a - _dt.timedelta(days=float(b))
    if op == "-" and isinstance(a, _dt.datetime) and isinstance(b, _dt.datetime):
        return _tidy((a - b).total_seconds() / 86400)
    raise ora(6502, f"invalid date arithmetic: {type(a).__name__} {op} {type(b).__name__}")


def concat(a, b) -> str | None:
    """``||``: NULL counts as the empty string, and '' is NULL again."""
    text = (to_text(a) or "") + (to_text(b) or "")
    return text or None


def _comparable(a, b):
    """Oracle compares a string with a number numerically (converting the string)."""
    if is_number(a) and isinstance(b, str):
        return a, to_number(b)
    if isinstance(a, str) and is_number(b):
        return to_number(a), b
    if isinstance(a, bool) != isinstance(b, bool):
        raise ora(6502, "cannot compare BOOLEAN with a non-BOOLEAN value")
    return a, b


def compare(op: str, a, b):
    if a is None or b is None:
        return None
    a, b = _comparable(a, b)
    try:
        if op == "=":
            return a == b
        if op == "<>":
            return a != b
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        return a >= b
    except TypeError:
        raise ora(6502, f"cannot compare {type(a).__name__} with {type(b).__name__}") from None


def logical_and(a, b):
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def logical_or(a, b):
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def logical_not(a):
    return None if a is None else not a


def like(value, pattern, escape=None):
    if value is None or pattern is None:
        return None
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if escape and ch == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.fullmatch("".join(out), to_text(value), re.DOTALL) is not None
