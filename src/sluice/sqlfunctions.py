"""Oracle's implicit conversions and the SQL built-in functions of rule conditions.

The language of :mod:`sluice.rules` calls them, and so do the SQLite store's user
functions (:mod:`sluice.store.sqlitefns`), LCR values and IDAP payloads: they sit below
every layer that needs them (docs/ARCHITECTURE.md).

Values are plain Python: NUMBER is ``int`` / ``Decimal`` (``float`` is accepted
and behaves like BINARY_DOUBLE in arithmetic), VARCHAR2 is ``str``, RAW is
``bytes``, DATE is ``datetime``.  NULL is ``None`` and, as in Oracle, a
zero-length string (or RAW) is NULL too: every value that leaves this module or
the compiler has been through :func:`null_if_empty`.

``FUNCTIONS`` maps an upper-case name to a :class:`Builtin`.  Most functions are
*strict* (any NULL argument gives NULL, as Oracle's are); NVL, NVL2, REPLACE and
CONCAT look at NULLs themselves; COALESCE and DECODE receive unevaluated
arguments because Oracle stops evaluating at the first match.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime
from decimal import ROUND_DOWN, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Callable, NamedTuple

from .errors import ora
from .numformat import format_number

__all__ = [
    "Builtin", "FUNCTIONS", "NILADIC", "null_if_empty", "to_number", "to_char", "to_date",
    "hextoraw", "kind_of", "coerce_pair", "NUMBER_CONTEXT", "like_regex", "VARCHAR2_MAX",
]

# Oracle SQL's longest VARCHAR2 (MAX_STRING_SIZE = STANDARD): a character function's result
# beyond it is cut there, without an error.  Oracle counts bytes; here characters.
VARCHAR2_MAX = 4000
# Oracle NUMBER keeps 38 significant digits; Python's default context keeps 28.
NUMBER_CONTEXT = Context(prec=38)
# MOD's remainder is exact for any two NUMBERs (exponents -130..125 and 38 digits) and
# BINARY_DOUBLEs (1.8E308 / 5E-324 is a quotient of 633 digits) here
_REMAINDER = Context(prec=700, Emax=999, Emin=-999)
_NUMBER_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", re.ASCII)
_HEX_TEXT = re.compile(r"[0-9A-Fa-f]*")


def null_if_empty(value: Any) -> Any:
    """Oracle's '' IS NULL rule, applied to every value the engine produces."""
    if isinstance(value, (str, bytes)) and not value:
        return None
    return value


def kind_of(value: Any) -> str:
    """The Oracle datatype family of a Python value (for conversions and ORA-00932)."""
    if isinstance(value, (int, float, Decimal)):
        return "NUMBER"
    if isinstance(value, str):
        return "CHAR"
    if isinstance(value, (date, datetime)):
        return "DATE"
    if isinstance(value, (bytes, bytearray)):
        return "BINARY"
    return type(value).__name__.upper()


def to_number(value: Any) -> int | float | Decimal | None:
    """TO_NUMBER: a string must spell a number (ORA-01722); ints stay ints."""
    if value is None or isinstance(value, (int, float, Decimal)):
        return value
    if isinstance(value, str):
        match = _NUMBER_TEXT.fullmatch(value)
        if not match:
            raise ora(1722, repr(value))
        text = value.strip()
        try:
            if "." in text or "e" in text or "E" in text:
                return Decimal(text)
            return int(text)
        except ValueError:  # more digits than int() reads (4300): the same number as a Decimal
            return Decimal(text)
        except InvalidOperation:  # an exponent past any Decimal ('1e99999999999999999999')
            raise ora(1722, repr(value)) from None
    raise ora(932, "NUMBER", kind_of(value))


def _decimal(n: int | float | Decimal) -> Decimal:
    return Decimal(repr(n)) if isinstance(n, float) else Decimal(n)


def number_text(n: int | float | Decimal) -> str:
    """Oracle's TO_CHAR(n): no exponent, no trailing zeros, '.5' not '0.5'."""
    if isinstance(n, int):
        return str(int(n))
    d = _decimal(n).normalize(NUMBER_CONTEXT)
    text = format(d, "f")
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "-" + text[2:]
    return "0" if text == "-0" else text


def to_char(value: Any, fmt: str | None = None) -> str | None:
    """TO_CHAR / the implicit conversion to VARCHAR2 (for ||, LIKE, string functions)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, Decimal)):
        return number_text(value) if fmt is None else format_number(value, fmt)
    if isinstance(value, (date, datetime)):
        return _format_date(value, fmt or NLS_DATE_FORMAT)
    if isinstance(value, (bytes, bytearray)):
        return value.hex().upper()
    return str(value)


def to_date(value: Any, fmt: str | None = None) -> datetime | None:
    """TO_DATE; without a format, ISO text and Oracle's default DD-MON-RR are accepted."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    if not isinstance(value, str):
        raise ora(932, "DATE", kind_of(value))
    return _parse_date(value, fmt)


def hextoraw(text: Any) -> bytes | None:
    """HEXTORAW: an odd number of digits gets a leading zero; bad digits are ORA-01465."""
    if text is None or isinstance(text, bytes):
        return text
    text = to_char(text)
    if not _HEX_TEXT.fullmatch(text):
        raise ora(1465)
    return bytes.fromhex("0" + text if len(text) % 2 else text)


def coerce_pair(a: Any, b: Any) -> tuple[Any, Any]:
    """Bring two non-NULL values to one datatype before comparing them.

    Oracle converts the character side towards the other datatype: NUMBER vs
    CHAR compares numerically ('10' > 9), DATE vs CHAR as dates, RAW vs CHAR
    as RAW (via HEXTORAW).  Anything else mixed is ORA-00932.
    """
    ka, kb = kind_of(a), kind_of(b)
    if ka != kb:
        if kb == "CHAR":
            b = _convert_char(b, ka)
        elif ka == "CHAR":
            a = _convert_char(a, kb)
        else:
            raise ora(932, ka, kb)
    if ka == "DATE" or kb == "DATE":
        return to_date(a), to_date(b)  # a DATE is a datetime: date vs datetime must compare
    return a, b


def _convert_char(text: str, kind: str) -> Any:
    if kind == "NUMBER":
        return to_number(text)
    if kind == "DATE":
        return to_date(text)
    if kind == "BINARY":
        return hextoraw(text)
    raise ora(932, kind, "CHAR")


# --- numbers ------------------------------------------------------------------


def _integer(value: Any) -> int:
    """A position or length argument: Oracle truncates it to an integer."""
    n = to_number(value)
    if isinstance(n, float) and not math.isfinite(n):  # a BINARY_DOUBLE's Infinity or NaN
        raise ora(1426, "integer argument")  # int() raised OverflowError / ValueError
    return int(n)


def _round(n: Any, places: Any = 0, mode: str = ROUND_HALF_UP) -> Any:
    n = to_number(n)
    # rounding at 10**400 or above gives 0 for every NUMBER (< 10**126) and BINARY_DOUBLE
    # (< 10**309); a further place (-2147483649) would overflow Decimal's exponent
    places = max(_integer(places), -400)
    if isinstance(n, int) and places >= 0:
        return n
    d = _decimal(n)
    if not d.is_finite():       # a BINARY_DOUBLE's Infinity or NaN rounds to itself
        return n
    if d.as_tuple().exponent >= -places:
        result = d              # no digit below the place: already there (9.99E125 has 126 digits,
    else:                       # more than NUMBER_CONTEXT may quantize to)
        result = d.quantize(Decimal(1).scaleb(-places), rounding=mode, context=NUMBER_CONTEXT)
    return int(result) if places <= 0 else result


def _trunc(value: Any, places: Any = 0) -> Any:
    if isinstance(value, (date, datetime)):  # TRUNC(date): midnight of that day
        return datetime(value.year, value.month, value.day)
    return _round(value, places, ROUND_DOWN)


def _mod(m: Any, n: Any) -> Any:
    m, n = to_number(m), to_number(n)
    if n == 0:
        return m  # Oracle: MOD(m, 0) = m
    if isinstance(m, int) and isinstance(n, int):
        r = abs(m) % abs(n)
        return r if m >= 0 else -r  # the sign of m, unlike Python's %
    a, b = _decimal(m), _decimal(n)
    if not (a.is_finite() and b.is_finite()):
        return float("nan")     # MOD of a BINARY_DOUBLE's Infinity or NaN
    # exact, whatever the quotient's size (NUMBER's exponents reach 125: a default context's
    # 28 digits raised DivisionImpossible); Decimal's remainder keeps the sign of m
    try:
        return _REMAINDER.remainder(a, b)
    except InvalidOperation:  # a quotient of 700+ digits: m is far past any NUMBER
        raise ora(1426, "MOD") from None


def _sign(n: Any) -> int:
    n = to_number(n)
    return (n > 0) - (n < 0)


# --- strings ------------------------------------------------------------------


def _substr(s: Any, pos: Any, length: Any = ...) -> str | None:
    s, pos = to_char(s), _integer(pos)
    start = pos - 1 if pos > 0 else (len(s) + pos if pos < 0 else 0)
    if start < 0 or start >= len(s):
        return None
    if length is ...:
        return s[start:]
    length = _integer(length)
    return s[start:start + length] if length >= 1 else None


def _instr(s: Any, sub: Any, pos: Any = 1, occurrence: Any = 1) -> int:
    s, sub, pos, occurrence = to_char(s), to_char(sub), _integer(pos), _integer(occurrence)
    if occurrence < 1:
        raise ora(1428, occurrence)
    if pos == 0:
        return 0
    index = pos - 2 if pos > 0 else len(s) + pos + 1
    for _ in range(occurrence):
        if pos > 0:
            index = s.find(sub, index + 1)
        else:  # search backwards from the end, matches start at or before index
            index = s.rfind(sub, 0, index - 1 + len(sub)) if index > 0 else -1
        if index < 0:
            return 0
    return index + 1


def _pad(s: Any, n: Any, fill: Any = " ", left: bool = True) -> str | None:
    """LPAD / RPAD.  Oracle cuts a VARCHAR2 function result at VARCHAR2_MAX without an error,
    so LPAD(s, 1e30) is 4000 characters of padding, never a string of 1e30."""
    s, n, fill = to_char(s), _integer(n), to_char(fill)
    if n < 1:
        return None
    # padding past the cut never shows: pad only as far as the cut (the typed targets do too)
    n = min(n, VARCHAR2_MAX + len(s)) if left else min(n, VARCHAR2_MAX)
    if len(s) >= n:
        return s[:n][:VARCHAR2_MAX]
    padding = (fill * ((n - len(s)) // len(fill) + 1))[: n - len(s)]
    return (padding + s)[:VARCHAR2_MAX] if left else s + padding


def _initcap(s: Any) -> str:
    # Words are runs of letters and digits; everything else separates them.
    return re.sub(r"[^\W_]+", lambda m: m.group().capitalize(), to_char(s))


def _replace(s: Any, search: Any = None, replacement: Any = None) -> str | None:
    if s is None:
        return None
    s = to_char(s)
    if search is None:
        return s
    return s.replace(to_char(search), to_char(replacement) or "")


def _concat(a: Any, b: Any) -> str | None:
    return (to_char(a) or "") + (to_char(b) or "")


def _greatest(*values: Any, least: bool = False) -> Any:
    """GREATEST / LEAST: every argument takes the datatype of the first one."""
    first = values[0]
    if kind_of(first) == "CHAR":
        converted = [to_char(v) for v in values]
    else:
        converted = [coerce_pair(first, v)[1] for v in values]
    return min(converted) if least else max(converted)


@lru_cache(maxsize=512)
def like_regex(pattern: str, escape: str | None) -> re.Pattern[str]:
    """Oracle LIKE as an anchored regex: % any run, _ one character, ESCAPE c."""
    if escape is not None and len(escape) != 1:
        raise ora(1425)
    out, chars = [], iter(pattern)
    for ch in chars:
        if ch == escape:
            nxt = next(chars, None)
            if nxt not in ("%", "_", escape):
                raise ora(1424)
            out.append(re.escape(nxt))
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out), re.DOTALL)


# --- format models ------------------------------------------------------------

NLS_DATE_FORMAT = "DD-MON-RR"  # Oracle's default, used when a DATE meets text
_DATE_ELEMENT = re.compile(
    r'"[^"]*"|FM|YYYY|RRRR|YY|RR|MONTH|MON|MM|DDD|DD|DAY|DY|D|HH24|HH12|HH|MI|SS|FF[1-9]?|AM|PM|Q|.',
    re.IGNORECASE | re.DOTALL)
_MONTHS = ("JANUARY FEBRUARY MARCH APRIL MAY JUNE JULY AUGUST SEPTEMBER OCTOBER "
           "NOVEMBER DECEMBER").split()
_DAYS = "MONDAY TUESDAY WEDNESDAY THURSDAY FRIDAY SATURDAY SUNDAY".split()
_STRPTIME = {"YYYY": "%Y", "RRRR": "%Y", "YY": "%y", "RR": "%y", "MM": "%m", "MON": "%b",
             "MONTH": "%B", "DD": "%d", "HH24": "%H", "HH": "%I", "HH12": "%I", "MI": "%M",
             "SS": "%S", "AM": "%p", "PM": "%p", "FM": ""}


def _cased(text: str, element: str) -> str:
    """Names follow the case of the format element: MON -> JAN, Mon -> Jan, mon -> jan."""
    if element[:2].isupper():
        return text.upper()
    return text.capitalize() if element[0].isupper() else text.lower()


def _date_element(d: datetime, key: str, element: str, fm: bool) -> str:
    numbers = {
        "YYYY": f"{d.year:04d}", "RRRR": f"{d.year:04d}", "YY": f"{d.year % 100:02d}",
        "RR": f"{d.year % 100:02d}", "MM": f"{d.month:02d}", "DD": f"{d.day:02d}",
        "DDD": f"{d.timetuple().tm_yday:03d}", "D": str(d.isoweekday() % 7 + 1),
        "HH24": f"{d.hour:02d}", "HH": f"{d.hour % 12 or 12:02d}",
        "HH12": f"{d.hour % 12 or 12:02d}", "MI": f"{d.minute:02d}", "SS": f"{d.second:02d}",
        "Q": str((d.month - 1) // 3 + 1),
    }
    if key in numbers:
        text = numbers[key]
        return (text.lstrip("0") or "0") if fm else text  # FM drops the padding
    if key.startswith("FF"):
        return f"{d.microsecond:06d}"[: int(key[2:] or 6)]
    names = {"MONTH": _MONTHS[d.month - 1], "MON": _MONTHS[d.month - 1][:3],
             "DAY": _DAYS[d.weekday()], "DY": _DAYS[d.weekday()][:3],
             "AM": "AM" if d.hour < 12 else "PM", "PM": "AM" if d.hour < 12 else "PM"}
    if key in names:
        text = names[key]
        if key in ("MONTH", "DAY") and not fm:
            text = text.ljust(9)  # Oracle pads month and day names to the longest
        return _cased(text, element)
    return element


def _format_date(value: date, fmt: str) -> str:
    d = value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)
    out, fm = [], False
    for match in _DATE_ELEMENT.finditer(fmt):
        element = match.group()
        key = element.upper()
        if element.startswith('"'):
            out.append(element[1:-1])
        elif key == "FM":
            fm = not fm
        else:
            out.append(_date_element(d, key, element, fm))
    return "".join(out)


def _parse_date(text: str, fmt: str | None) -> datetime:
    text = text.strip()
    if fmt is None:
        try:
            return datetime.fromisoformat(text)
        except ValueError:
            candidates = ["%d-%b-%y", "%d-%b-%Y"]  # NLS_DATE_FORMAT, with a 4-digit year too
    else:
        candidates = ["".join(
            m.group()[1:-1].replace("%", "%%") if m.group().startswith('"')
            else _STRPTIME.get(m.group().upper(), m.group().replace("%", "%%"))
            for m in _DATE_ELEMENT.finditer(fmt))]
    for candidate in candidates:
        try:
            return datetime.strptime(text, candidate)
        except ValueError:
            continue
    raise ora(1861)


def _to_number_fmt(text: Any, fmt: Any = None) -> Any:
    """TO_NUMBER(s [, fmt]): a format only lets group separators and '$' through."""
    if fmt is not None and isinstance(text, str):
        text = text.replace(",", "").replace("$", "")
    return to_number(text)


# --- lazy functions: args are callables of ctx --------------------------------


def _coalesce(ctx: Any, args: list[Callable]) -> Any:
    for arg in args:
        value = arg(ctx)
        if value is not None:
            return value
    return None


def _decode(ctx: Any, args: list[Callable]) -> Any:
    """DECODE(expr, search, result, ..., default): NULL matches NULL here."""
    value = args[0](ctx)
    pairs, default = args[1:], None
    if len(pairs) % 2:
        pairs, default = pairs[:-1], pairs[-1]
    for i in range(0, len(pairs), 2):
        search = pairs[i](ctx)
        if value is None or search is None:
            matched = value is None and search is None
        else:
            x, y = coerce_pair(value, search)
            matched = x == y
        if matched:
            return pairs[i + 1](ctx)
    return default(ctx) if default else None


class Builtin(NamedTuple):
    impl: Callable[..., Any]
    min_args: int
    max_args: int | None  # None: no upper limit
    kind: str = "strict"  # strict | lenient | lazy


def _strict(impl: Callable[..., Any], lo: int, hi: int | None) -> Builtin:
    return Builtin(impl, lo, hi, "strict")


def _whole(fn: Callable[[Any], Any], n: Any) -> Any:
    """FLOOR / CEIL: a BINARY_DOUBLE's Infinity or NaN stays itself (math.floor raised)."""
    return n if isinstance(n, float) and not math.isfinite(n) else fn(n)


def _num1(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda n: fn(to_number(n))


FUNCTIONS: dict[str, Builtin] = {
    "UPPER": _strict(lambda s: to_char(s).upper(), 1, 1),
    "LOWER": _strict(lambda s: to_char(s).lower(), 1, 1),
    "INITCAP": _strict(_initcap, 1, 1),
    "SUBSTR": _strict(_substr, 2, 3),
    "LENGTH": _strict(lambda s: len(to_char(s)), 1, 1),
    "INSTR": _strict(_instr, 2, 4),
    "TRIM": _strict(lambda s: to_char(s).strip(" "), 1, 1),
    "LTRIM": _strict(lambda s, chars=" ": to_char(s).lstrip(to_char(chars)), 1, 2),
    "RTRIM": _strict(lambda s, chars=" ": to_char(s).rstrip(to_char(chars)), 1, 2),
    "LPAD": _strict(lambda s, n, fill=" ": _pad(s, n, fill, True), 2, 3),
    "RPAD": _strict(lambda s, n, fill=" ": _pad(s, n, fill, False), 2, 3),
    "REPLACE": Builtin(_replace, 2, 3, "lenient"),
    "CONCAT": Builtin(_concat, 2, 2, "lenient"),
    "NVL": Builtin(lambda a, b: b if a is None else a, 2, 2, "lenient"),
    "NVL2": Builtin(lambda a, b, c: c if a is None else b, 3, 3, "lenient"),
    "COALESCE": Builtin(_coalesce, 2, None, "lazy"),
    "DECODE": Builtin(_decode, 3, None, "lazy"),
    "ABS": _strict(_num1(lambda n: NUMBER_CONTEXT.abs(n) if isinstance(n, Decimal) else abs(n)), 1, 1),
    "MOD": _strict(_mod, 2, 2),
    "ROUND": _strict(_round, 1, 2),
    "TRUNC": _strict(_trunc, 1, 2),
    "FLOOR": _strict(_num1(lambda n: _whole(math.floor, n)), 1, 1),
    "CEIL": _strict(_num1(lambda n: _whole(math.ceil, n)), 1, 1),
    "SIGN": _strict(_sign, 1, 1),
    "GREATEST": _strict(_greatest, 1, None),
    "LEAST": _strict(lambda *v: _greatest(*v, least=True), 1, None),
    "TO_NUMBER": _strict(_to_number_fmt, 1, 2),
    "TO_CHAR": _strict(to_char, 1, 2),
    "TO_DATE": _strict(to_date, 1, 2),
    "HEXTORAW": _strict(hextoraw, 1, 1),
    "RAWTOHEX": _strict(lambda r: hextoraw(r).hex().upper(), 1, 1),
    "SYSDATE": Builtin(lambda: datetime.now().replace(microsecond=0), 0, 0, "lenient"),
    "SYSTIMESTAMP": Builtin(datetime.now, 0, 0, "lenient"),
    # DBMS_STREAMS compatibility constants, compared with LCR.GET_COMPATIBLE()
    # (seed 000, "Rule Conditions that Instruct Streams Clients to Discard
    # Unsupported LCRs").  Only their order matters to rule conditions.
    **{f"DBMS_STREAMS.COMPATIBLE_{v}": Builtin((lambda n: lambda: n)(i), 0, 0, "lenient")
       for i, v in enumerate(("9_2", "10_1", "10_2", "11_1", "11_2", "12_1", "12_2"), 1)},
}

# Functions Oracle writes without parentheses: SYSDATE is not a column name.
NILADIC = frozenset({"SYSDATE", "SYSTIMESTAMP"})
