"""Oracle date format models (``TO_CHAR(d, 'DD-MON-YYYY')``) for the typed targets.

:func:`elements` splits a format model exactly as ``functions._format_date``
does; :func:`oracle_to_pg_format` spells it for PostgreSQL's ``to_char``, whose
elements are Oracle's but whose ``FM`` applies to one element instead of
toggling.  The Spark target builds its own pieces from :func:`elements`.
Anything whose output could differ raises :class:`ir.NotCompilable`.
"""

from __future__ import annotations

from typing import NamedTuple

from ....sqlfunctions import _DATE_ELEMENT
from .ir import NotCompilable

__all__ = ["Element", "elements", "oracle_to_pg_format", "NUMERIC", "NAMES", "casing"]

# element -> the Python output's width before FM strips padding
NUMERIC = {"YYYY": 4, "RRRR": 4, "YY": 2, "RR": 2, "MM": 2, "DD": 2, "DDD": 3, "D": 1,
           "HH24": 2, "HH": 2, "HH12": 2, "MI": 2, "SS": 2, "Q": 1}
NAMES = {"MONTH", "MON", "DAY", "DY", "AM", "PM"}


class Element(NamedTuple):
    key: str      # upper-case element, or "" for literal text
    text: str     # the element as written, or the literal text
    fm: bool      # FM mode in force


def elements(fmt: str) -> list[Element]:
    out, fm = [], False
    for match in _DATE_ELEMENT.finditer(fmt):
        element = match.group()
        key = element.upper()
        if element.startswith('"'):
            out.append(Element("", element[1:-1], fm))
        elif key == "FM":
            fm = not fm
        elif key in NUMERIC or key in NAMES or key.startswith("FF"):
            out.append(Element(key, element, fm))
        else:
            out.append(Element("", element, fm))
    return out


def casing(element: str) -> str:
    """How Python cases a name element: 'upper', 'capitalize' or 'lower' (sqlfunctions._cased)."""
    if element[:2].isupper():
        return "upper"
    return "capitalize" if element[0].isupper() else "lower"


def oracle_to_pg_format(fmt: str) -> str:
    out = []
    for e in elements(fmt):
        if not e.key:
            if '"' in e.text or "\\" in e.text:
                raise NotCompilable("a date format with quotes or backslashes")
            out.append('"' + e.text + '"' if any(c.isalnum() for c in e.text) else e.text)
        elif e.key.startswith("FF"):
            out.append("FF" + str(min(int(e.key[2:] or 6), 6)))  # Python keeps at most 6 digits
        elif e.key in NUMERIC:
            pg = {"RRRR": "YYYY", "RR": "YY"}.get(e.key, e.key)
            out.append(("FM" if e.fm else "") + pg)
        else:
            style = casing(e.text)
            if e.key in ("AM", "PM") and style == "capitalize":
                raise NotCompilable("a mixed-case AM/PM element")
            name = {"upper": e.key, "capitalize": e.key.capitalize(), "lower": e.key.lower()}[style]
            out.append(("FM" if e.fm and e.key in ("MONTH", "DAY") else "") + name)
    return "".join(out)
