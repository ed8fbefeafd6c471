"""Oracle's CREATE / ALTER / DROP SEQUENCE: the statement read, its options checked as Oracle
checks them, the sequence's attributes (a spec) made or changed.

A spec is a dict: ``increment``, ``min``, ``max``, ``start`` (integers, Oracle's defaults
filled in: NOMAXVALUE is 10^28 - 1 ascending and -1 descending, NOMINVALUE 1 ascending and
-(10^27 - 1) descending, START WITH MINVALUE ascending and MAXVALUE descending), ``cycle``,
``order`` (bools), ``cache`` (0 for NOCACHE; 20 when not said).  :mod:`.sequences` keeps it.

Oracle's errors: ORA-04001 a parameter that is no integer, ORA-04002 INCREMENT 0, ORA-04003
more than 28 digits, ORA-04004 MINVALUE not below MAXVALUE, ORA-04005 INCREMENT not below
MAXVALUE - MINVALUE, ORA-04006 / ORA-04008 START WITH outside them, ORA-04010 CACHE 1,
ORA-04013 CACHE of a cycle or more, ORA-04014 / ORA-04015 CYCLE without the bound it wraps at;
ALTER: ORA-02283 START WITH (but after RESTART), ORA-02286 no option, ORA-04007 / ORA-04009
a bound moved past the current value; ORA-00922 an option Oracle has not (or said twice).
:func:`pg_error` is Oracle's error of PostgreSQL's about a sequence (ORA-08002, 08004, 02289, 00955).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..errors import DatabaseError, not_supported, ora

__all__ = ["Statement", "alter_options", "altered", "created", "parse", "pg_error"]

NO_MAX = 10**28 - 1          # NOMAXVALUE of an ascending sequence
NO_MIN = -(10**27 - 1)       # NOMINVALUE of a descending one
DEFAULT_CACHE = 20
_PG_NAME = re.compile(r'"SEQ\$[^".]*\.([^"]*)"')     # a sequence's name on PostgreSQL (.sequences)

_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z][A-Za-z0-9_$#]*)'
_WORD = re.compile(rf'\s*({_NAME}(?:\s*\.\s*{_NAME})*|[-+]?\s*(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\S)')
# options Oracle has that change nothing Sluice keeps (single instance, no sharding, no replay)
_IGNORED = frozenset({"NOKEEP", "KEEP", "NOSCALE", "GLOBAL", "NOSHARD", "NOPARTITION"})
_REFUSED = {"SCALE": "CREATE SEQUENCE … SCALE", "SESSION": "session sequences (CREATE SEQUENCE … SESSION)",
            "SHARD": "CREATE SEQUENCE … SHARD", "PARTITION": "CREATE SEQUENCE … PARTITION"}


class Statement(NamedTuple):
    verb: str                  # CREATE, ALTER or DROP
    name: str                  # as written ([schema.]name)
    options: dict[str, Any]    # the options said (parse)


def parse(verb: str, text: str) -> Statement:
    """``CREATE | ALTER | DROP SEQUENCE [schema.]name [options]`` (``verb`` the first word) read;
    its options: ``increment``, ``start``, ``min`` / ``max`` (None for NOMINVALUE /
    NOMAXVALUE), ``cycle``, ``cache`` (0 for NOCACHE), ``order``, ``restart`` (True)."""
    words = [w.strip() for w in _WORD.findall(text.strip().rstrip(";"))]
    if len(words) < 3 or words[0].upper() != verb or words[1].upper() != "SEQUENCE":
        raise ora(900, text.strip()[:40])
    name, rest = words[2], words[3:]
    if not (name[0].isalpha() or name[0] == '"'):
        raise ora(2277)
    if verb == "DROP":
        if rest:
            raise ora(933)
        return Statement(verb, name, {})
    options: dict[str, Any] = {}

    def put(key: str, value: Any, said: str) -> None:
        if key in options:
            raise ora(922, f"duplicate or conflicting {said} specifications")
        options[key] = value

    i = 0
    while i < len(rest):
        w = rest[i].upper()
        i += 1
        if w in ("INCREMENT", "START") or (w == "RESTART" and i < len(rest) and rest[i].upper() == "START"):
            if w == "RESTART":
                put("restart", True, "RESTART")
                i += 1
                w = "START"
            after = "BY" if w == "INCREMENT" else "WITH"
            if i >= len(rest) or rest[i].upper() != after:
                raise ora(922, f"{w} must be followed by {after}")
            put(w.lower(), _number(rest, i + 1, w), w)
            i += 2
        elif w in ("MAXVALUE", "MINVALUE"):
            put(w[:3].lower(), _number(rest, i, w), f"{w}/NO{w}")
            i += 1
        elif w in ("NOMAXVALUE", "NOMINVALUE"):
            put(w[2:5].lower(), None, f"{w[2:]}/{w}")
        elif w in ("CYCLE", "NOCYCLE"):
            put("cycle", w == "CYCLE", "CYCLE/NOCYCLE")
        elif w in ("ORDER", "NOORDER"):
            put("order", w == "ORDER", "ORDER/NOORDER")
        elif w == "NOCACHE":
            put("cache", 0, "CACHE/NOCACHE")
        elif w == "CACHE":
            put("cache", _number(rest, i, w), "CACHE/NOCACHE")
            i += 1
        elif w == "RESTART":
            put("restart", True, "RESTART")
        elif w in _IGNORED:
            continue
        elif w in _REFUSED:
            raise not_supported(_REFUSED[w])
        else:
            raise ora(922, rest[i - 1])
    return Statement(verb, name, options)


def _number(words: list[str], i: int, what: str) -> int:
    """The integer option value at ``words[i]`` (ORA-04001 for none, ORA-04003 for more than
    28 digits)."""
    if i >= len(words):
        raise ora(4001, what)
    text = words[i].replace(" ", "")
    if not re.fullmatch(r"[-+]?\d+", text):
        if re.fullmatch(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text):
            raise ora(4001, what)
        raise ora(922, words[i])
    value = int(text)
    if len(str(abs(value))) > 28:
        raise ora(4003, what, 28)
    return value


def created(options: dict[str, Any]) -> dict[str, Any]:
    """The spec of CREATE SEQUENCE with ``options`` (:func:`parse`), checked."""
    if "restart" in options:
        raise ora(922, "RESTART")
    increment = options.get("increment", 1)
    if increment == 0:
        raise ora(4002)
    ascending = increment > 0
    lo, hi = options.get("min"), options.get("max")
    if options.get("cycle"):
        if ascending and hi is None:
            raise ora(4015)
        if not ascending and lo is None:
            raise ora(4014)
    lo = (1 if ascending else NO_MIN) if lo is None else lo
    hi = (NO_MAX if ascending else -1) if hi is None else hi
    start = options.get("start", lo if ascending else hi)
    spec = {"increment": increment, "min": lo, "max": hi, "start": start,
            "cycle": bool(options.get("cycle", False)), "cache": options.get("cache", DEFAULT_CACHE),
            "order": bool(options.get("order", False))}
    _check(spec)
    if start < lo:
        raise ora(4006)
    if start > hi:
        raise ora(4008)
    return spec


def _check(spec: dict[str, Any]) -> None:
    lo, hi, increment, cache = spec["min"], spec["max"], spec["increment"], spec["cache"]
    if lo >= hi:
        raise ora(4004)
    if abs(increment) >= hi - lo:
        raise ora(4005)
    if cache == 1:
        raise ora(4010)
    if cache and cache >= -(-(hi - lo) // abs(increment)):      # CEIL(MAXVALUE - MINVALUE) / ABS(INCREMENT)
        raise ora(4013)


def alter_options(options: dict[str, Any]) -> None:
    """ALTER SEQUENCE's options as said: ORA-02286 for none, ORA-02283 for START WITH (but after
    RESTART)."""
    if not options:
        raise ora(2286)
    if "start" in options and "restart" not in options:
        raise ora(2283)


def altered(spec: dict[str, Any], options: dict[str, Any], current: int | None) -> dict[str, Any]:
    """The spec of ``spec`` changed by ALTER SEQUENCE ``options``, checked; ``current`` is the
    last value the sequence gave (None: none yet)."""
    alter_options(options)
    new = dict(spec)
    increment = options.get("increment", spec["increment"])
    if increment == 0:
        raise ora(4002)
    ascending = increment > 0
    new["increment"] = increment
    if "min" in options:
        new["min"] = (1 if ascending else NO_MIN) if options["min"] is None else options["min"]
    if "max" in options:
        new["max"] = (NO_MAX if ascending else -1) if options["max"] is None else options["max"]
    for key in ("cycle", "cache", "order"):
        if key in options:
            new[key] = options[key]
    _check(new)
    if "restart" in options:
        new["start"] = options.get("start", new["min"] if ascending else new["max"])
        if new["start"] < new["min"]:
            raise ora(4006)
        if new["start"] > new["max"]:
            raise ora(4008)
    elif current is not None:
        if new["min"] > current:
            raise ora(4007)
        if new["max"] < current:
            raise ora(4009)
    return new


def pg_error(sqlstate: str | None, msg: str) -> DatabaseError | None:
    """The Oracle error of PostgreSQL's complaint about a sequence (of :mod:`.sequences`' calls
    or DDL), or None."""
    m = _PG_NAME.search(msg) if "SEQ$" in msg else None
    if m is None:
        return None
    if sqlstate == "55000" and msg.startswith("currval"):
        return ora(8002, m.group(1))
    if sqlstate == "2200H":
        return ora(8004, m.group(1), "goes below MINVALUE" if "minimum" in msg else "exceeds MAXVALUE")
    if sqlstate == "42P01":
        return ora(2289)
    if sqlstate == "42P07":
        return ora(955)
    return None
