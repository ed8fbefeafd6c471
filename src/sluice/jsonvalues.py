"""Python values as Oracle's JSON type holds them (python-oracledb's DB_TYPE_JSON), kept as JSON text.

python-oracledb sends a ``DB_TYPE_JSON`` bind as OSON, Oracle's binary JSON, and fetches a
JSON column's value back as Python objects: objects as ``dict``, arrays as ``list``, every
number as a ``decimal.Decimal`` (OSON keeps numbers as Oracle NUMBERs), strings, booleans,
None.  The stores keep JSON as text (SQLite's ``JSON`` column, PostgreSQL's ``jsonb``), so
:func:`json_text` writes a bound value as that text and :func:`json_object` reads it back.

OSON has scalars JSON text has not; their text is what Oracle's JSON_SERIALIZE writes for
them: a ``datetime`` / ``date`` is its ISO 8601 text (``2020-03-10T00:00:00``), ``bytes``
their hex, a ``timedelta`` an ISO 8601 duration (``P1DT2H0M0S``) — fetched back as those
strings, where python-oracledb gives the datetime, bytes or timedelta again (a gap).  A
``Decimal`` is written exact (``1.10`` stays ``1.10``, not a float's ``1.1``).  A value of
another type, a key that is no string, a NaN or an infinity is DPY-3003, as python-oracledb's
OSON encoder refuses what it cannot encode.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

from .errors import dpy

__all__ = ["json_object", "json_text"]

_STRING = json.encoder.encode_basestring     # (json.dumps' own quoting of a str)


def json_text(value: Any) -> str:
    """``value`` (a dict, list or scalar, as python-oracledb binds a DB_TYPE_JSON) as compact
    JSON text."""
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def _write(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, str):
        out.append(_STRING(value))
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, (float, Decimal)):
        if not (value.is_finite() if isinstance(value, Decimal) else math.isfinite(value)):
            raise dpy(3003, type(value).__name__)
        out.append(float.__repr__(value) if isinstance(value, float) else str(value))
    elif isinstance(value, dict):
        out.append("{")
        for n, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise dpy(3003, type(key).__name__)
            out.append("," if n else "")
            out.append(_STRING(key) + ":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for n, item in enumerate(value):
            out.append("," if n else "")
            _write(item, out)
        out.append("]")
    elif isinstance(value, (dt.datetime, dt.date)):
        out.append(_STRING(value.isoformat() if isinstance(value, dt.datetime)
                           else dt.datetime(value.year, value.month, value.day).isoformat()))
    elif isinstance(value, (bytes, bytearray)):
        out.append(_STRING(bytes(value).hex().upper()))
    elif isinstance(value, dt.timedelta):
        seconds = value.seconds + value.microseconds / 1e6
        out.append(_STRING(f"P{value.days}DT{value.seconds // 3600}H{value.seconds // 60 % 60}M"
                           f"{seconds % 60:g}S"))
    else:
        raise dpy(3003, type(value).__name__)


def json_object(text: Any) -> Any:
    """A JSON column's value (its text, as the store keeps it) as python-oracledb fetches the
    JSON type: dicts, lists, numbers as ``Decimal``."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode()
    if isinstance(text, str):
        return json.loads(text, parse_float=_number, parse_int=Decimal)
    return _decimals(text)


def _decimals(value: Any) -> Any:
    """A value a store read as JSON itself (psycopg's jsonb of a RETURNING clause; a bare number
    SQLite's JSON column took as one) with its numbers as ``Decimal`` (a float's shortest text)."""
    if isinstance(value, dict):
        return {k: _decimals(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decimals(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    return value


def _number(text: str) -> Decimal:
    """A JSON number with a fraction as Oracle's NUMBER holds it: without trailing zeros."""
    if "e" not in text and "E" not in text:
        text = text.rstrip("0").rstrip(".")
    return Decimal(text)
