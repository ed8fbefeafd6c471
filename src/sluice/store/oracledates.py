"""Oracle's datetime literals and format models, checked as Oracle checks them.

``DATE '2026-01-01'``, ``TIMESTAMP '2026-01-01 10:00:00[.ff]'`` and ``TO_DATE(text, fmt)``
are read here, in Python, for both stores: the SQL translation folds literal ones into
the statement (:mod:`.sqloracle`), SQLite calls back into :func:`to_date` and
:func:`to_char` for columns (:mod:`.sqlitefns`), and PostgreSQL's ``to_timestamp`` is
used only after :func:`check_format` accepted the model — it would read ``QQQQ`` or a
13th month without complaint.  The errors are Oracle's: ORA-01821 a format element it
does not know, ORA-01861 text not matching the model, ORA-01843 / 01847 / 01850 / 01851 /
01852 a month, day, hour, minute, second out of range.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import datetime

from ..errors import ora
from ..sqlfunctions import to_char as _to_char

__all__ = ["check_format", "datetime_literal", "to_char", "to_date"]

# the elements read (longest first), literal punctuation, and "quoted text"
_ELEMENT = re.compile(r'"[^"]*"|YYYY|RRRR|MONTH|MON|HH24|HH12|HH|MI|SS|FF[1-9]?|YY|RR|MM|DD|AM|PM'
                      r'|DDD|DAY|DY|D|Q|FM|[-/,.;: ]', re.I)
_FORMAT_ONLY = frozenset({"DDD", "DAY", "DY", "D", "Q"})        # printed by TO_CHAR, not read here
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
# a number element: (its most digits, the field it sets)
_NUMBER = {"YYYY": (4, "Y"), "RRRR": (4, "Y"), "YY": (2, "Y"), "RR": (2, "Y"), "MM": (2, "M"), "DD": (2, "D"),
           "HH24": (2, "H"), "HH12": (2, "H"), "HH": (2, "H"), "MI": (2, "N"), "SS": (2, "S")}
_LITERAL = {"DATE": (re.compile(r"\s*(\d{1,4})-(\d{1,2})-(\d{1,2})\s*"), "YYYY-MM-DD"),
            "TIMESTAMP": (re.compile(r"\s*(\d{1,4})-(\d{1,2})-(\d{1,2})\s+(\d{1,2}):(\d{1,2}):(\d{1,2})"
                                     r"(?:\.(\d{1,9}))?\s*"), "YYYY-MM-DD HH24:MI:SS")}


def check_format(fmt: str) -> list[str]:
    """The elements of the format model ``fmt`` (ORA-01821 for one Oracle does not know)."""
    elements, at = [], 0
    for m in _ELEMENT.finditer(fmt):
        if m.start() != at:
            break
        elements.append(m.group())
        at = m.end()
    if at != len(fmt) or not fmt:
        raise ora(1821)
    return elements


def to_date(text: str, fmt: str, fraction: bool = False) -> datetime:
    """Oracle's ``TO_DATE(text, fmt)``: a DATE (whole seconds, the time 00:00:00 where the
    model has none or the text ends before it; the year, month and day default to the current
    ones as in Oracle);
    with ``fraction``, ``TO_TIMESTAMP``'s (``FF``: the second's fraction, to microseconds)."""
    elements = check_format(fmt)
    now = datetime.now()
    got = {"Y": now.year, "M": now.month, "D": 1, "H": 0, "N": 0, "S": 0, "F": 0}
    pm, at, rest = None, 0, text.strip()
    for element in elements:
        key = element.upper()
        if key == "FM":
            continue
        if at >= len(rest):     # text shorter than the model: the elements left keep their defaults, as Oracle's
            break
        if key.startswith("FF") and fraction:
            digits = re.match(r"\d{1,%s}" % (key[2:] or "9"), rest[at:])
            if not digits:
                raise ora(1861)
            got["F"], at = int(digits.group()[:6].ljust(6, "0")), at + digits.end()
            continue
        if key in _FORMAT_ONLY or key.startswith("FF"):        # no part of a DATE Sluice reads
            raise ora(1821)
        if element.startswith('"'):
            word = element[1:-1]
            if rest[at:at + len(word)].upper() != word.upper():
                raise ora(1861)
            at += len(word)
        elif key in _NUMBER:
            most, field = _NUMBER[key]
            digits = re.match(r"\d{1,%d}" % most, rest[at:])
            if not digits:
                raise ora(1861)
            n, at = int(digits.group()), at + digits.end()
            got[field] = n + now.year // 100 * 100 if key in ("YY", "RR") else n
        elif key in ("MON", "MONTH"):
            name = re.match(r"[A-Za-z]+", rest[at:])
            word = name.group().upper() if name else ""
            if word[:3] not in _MONTHS or key == "MON" and len(word) != 3:
                raise ora(1843)
            got["M"], at = _MONTHS.index(word[:3]) + 1, at + len(word)
        elif key in ("AM", "PM"):
            word = rest[at:at + 2].upper()
            if word not in ("AM", "PM"):
                raise ora(1855)
            pm, at = word == "PM", at + 2
        else:                                   # punctuation matches any one punctuation
            if at < len(rest) and not rest[at].isalnum():
                at += 1
            elif at < len(rest):
                raise ora(1861)
    if at != len(rest):
        raise ora(1830)
    return _checked(got["Y"], got["M"], got["D"], got["H"] % 12 + 12 * pm if pm is not None else got["H"],
                    got["N"], got["S"], got["F"])


def datetime_literal(kind: str, text: str) -> tuple[datetime, int]:
    """``DATE 'text'`` / ``TIMESTAMP 'text'``: the value and its digits of second fraction."""
    pattern, _ = _LITERAL[kind]
    m = pattern.fullmatch(text)
    if not m:
        raise ora(1861)
    parts = [int(p) for p in m.groups()[:6] if p is not None]
    fraction = (m.group(7) or "") if kind == "TIMESTAMP" else ""
    micro = int(fraction[:6].ljust(6, "0")) if fraction else 0
    return _checked(*parts, *([0] * (6 - len(parts))), micro), min(len(fraction), 6)


def to_char(value, fmt: str | None = None) -> str | None:
    """Oracle's ``TO_CHAR``, its format model checked first (ORA-01821)."""
    if fmt is not None:
        check_format(fmt)
    return _to_char(value, fmt)


def _checked(year: int, month: int, day: int, hour: int, minute: int, second: int,
             micro: int) -> datetime:
    if not 1 <= month <= 12:
        raise ora(1843)
    if year == 0 or not 1 <= day <= monthrange(year, month)[1]:
        raise ora(1841 if year == 0 else 1847)
    if not 0 <= hour <= 23:
        raise ora(1850)
    if not 0 <= minute <= 59:
        raise ora(1851)
    if not 0 <= second <= 59:
        raise ora(1852)
    return datetime(year, month, day, hour, minute, second, micro)
