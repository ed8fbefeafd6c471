"""Datatype constants and the datatype parser for :mod:`sluice.objtypes`.

``parse_datatype("NUMBER(7,2)")`` turns the text of an attribute's datatype, as
written in ``CREATE TYPE … AS OBJECT (…)``, into an :class:`AttrType`;
:func:`parse_attribute_list` splits the whole attribute list.  The
``DB_TYPE_*`` constants are python-oracledb's.  The public names are re-exported
by :mod:`sluice.objtypes`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NoReturn

from ..errors import ora
from ..names import canonical


@dataclass(frozen=True, slots=True)
class DbType:
    """A database type constant, like ``oracledb.DB_TYPE_VARCHAR``."""

    name: str
    num: int

    def __repr__(self) -> str:
        return f"<DbType {self.name}>"


# python-oracledb's names and numbers (the numbers are ODPI-C's).
DB_TYPE_VARCHAR = DbType("DB_TYPE_VARCHAR", 2001)
DB_TYPE_NVARCHAR = DbType("DB_TYPE_NVARCHAR", 2002)
DB_TYPE_CHAR = DbType("DB_TYPE_CHAR", 2003)
DB_TYPE_NCHAR = DbType("DB_TYPE_NCHAR", 2004)
DB_TYPE_RAW = DbType("DB_TYPE_RAW", 2006)
DB_TYPE_BINARY_FLOAT = DbType("DB_TYPE_BINARY_FLOAT", 2007)
DB_TYPE_BINARY_DOUBLE = DbType("DB_TYPE_BINARY_DOUBLE", 2008)
DB_TYPE_NUMBER = DbType("DB_TYPE_NUMBER", 2010)
DB_TYPE_DATE = DbType("DB_TYPE_DATE", 2011)
DB_TYPE_TIMESTAMP = DbType("DB_TYPE_TIMESTAMP", 2012)
DB_TYPE_TIMESTAMP_TZ = DbType("DB_TYPE_TIMESTAMP_TZ", 2013)
DB_TYPE_TIMESTAMP_LTZ = DbType("DB_TYPE_TIMESTAMP_LTZ", 2014)
DB_TYPE_INTERVAL_DS = DbType("DB_TYPE_INTERVAL_DS", 2015)
DB_TYPE_CLOB = DbType("DB_TYPE_CLOB", 2017)
DB_TYPE_NCLOB = DbType("DB_TYPE_NCLOB", 2018)
DB_TYPE_BLOB = DbType("DB_TYPE_BLOB", 2019)
DB_TYPE_CURSOR = DbType("DB_TYPE_CURSOR", 2021)      # a REF CURSOR (sluice.refcursors)
DB_TYPE_BOOLEAN = DbType("DB_TYPE_BOOLEAN", 2022)
DB_TYPE_OBJECT = DbType("DB_TYPE_OBJECT", 2023)
# LONG / LONG RAW: no column or attribute of Sluice's has them; python-oracledb's idiom for
# fetching a CLOB as str (a BLOB as bytes) is an output type handler's var of them
DB_TYPE_LONG = DbType("DB_TYPE_LONG", 2024)
DB_TYPE_LONG_RAW = DbType("DB_TYPE_LONG_RAW", 2025)
DB_TYPE_LONG_NVARCHAR = DbType("DB_TYPE_LONG_NVARCHAR", 2031)
# Oracle 21c's JSON type (ODPI-C's DPI_ORACLE_TYPE_JSON): a user's table's JSON column, a JSON bind
DB_TYPE_JSON = DbType("DB_TYPE_JSON", 2027)

_KIND_DBTYPE: dict[str, DbType] = {
    "VARCHAR2": DB_TYPE_VARCHAR, "NVARCHAR2": DB_TYPE_NVARCHAR,
    "CHAR": DB_TYPE_CHAR, "NCHAR": DB_TYPE_NCHAR,
    "NUMBER": DB_TYPE_NUMBER, "FLOAT": DB_TYPE_NUMBER,
    "BINARY_FLOAT": DB_TYPE_BINARY_FLOAT, "BINARY_DOUBLE": DB_TYPE_BINARY_DOUBLE,
    "DATE": DB_TYPE_DATE, "TIMESTAMP": DB_TYPE_TIMESTAMP,
    "TIMESTAMP WITH TIME ZONE": DB_TYPE_TIMESTAMP_TZ,
    "TIMESTAMP WITH LOCAL TIME ZONE": DB_TYPE_TIMESTAMP_LTZ,
    "RAW": DB_TYPE_RAW, "CLOB": DB_TYPE_CLOB, "NCLOB": DB_TYPE_NCLOB, "BLOB": DB_TYPE_BLOB,
    "BOOLEAN": DB_TYPE_BOOLEAN, "OBJECT": DB_TYPE_OBJECT,
}
_STRING_KINDS = frozenset({"VARCHAR2", "NVARCHAR2", "CHAR", "NCHAR"})
_NUMBER_KINDS = frozenset({"NUMBER", "FLOAT"})
_DATETIME_KINDS = frozenset({"DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE",
                             "TIMESTAMP WITH LOCAL TIME ZONE"})

# Oracle's limits (MAX_STRING_SIZE = EXTENDED for VARCHAR2/NVARCHAR2/RAW).
_MAX_VARCHAR = 32767
_MAX_CHAR = 2000
_MAX_VARRAY = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AttrType:
    """One parsed datatype: ``VARCHAR2(10 CHAR)``, ``NUMBER(7,2)``, ``scott.address_t``.

    ``kind`` is the canonical base type (``'VARCHAR2'``, ``'NUMBER'``,
    ``'TIMESTAMP WITH TIME ZONE'``, ``'OBJECT'`` for a named type …).  A named
    type carries ``type_name`` and, when written qualified, ``type_schema``.
    """

    kind: str
    length: int | None = None          # VARCHAR2/CHAR/RAW maximum length
    char_semantics: bool = False       # VARCHAR2(n CHAR); always for N-types
    precision: int | None = None       # NUMBER(p) / FLOAT(b) binary precision
    scale: int | None = None           # NUMBER(p,s); INTEGER is scale 0
    fsp: int | None = None             # TIMESTAMP(n) fractional seconds
    type_schema: str | None = None
    type_name: str | None = None

    @property
    def dbtype(self) -> DbType:
        return _KIND_DBTYPE[self.kind]

    @property
    def text(self) -> str:
        """Canonical datatype text; ``parse_datatype(t.text) == t``."""
        k = self.kind
        if k in ("VARCHAR2", "CHAR"):
            return f"{k}({self.length}{' CHAR' if self.char_semantics else ''})"
        if k in ("NVARCHAR2", "NCHAR", "RAW"):
            return f"{k}({self.length})"
        if k == "NUMBER":
            p, s = self.precision, self.scale
            if p is None:
                return "NUMBER" if s is None else "INTEGER" if s == 0 else f"NUMBER(*,{s})"
            return f"NUMBER({p})" if s == 0 else f"NUMBER({p},{s})"
        if k == "FLOAT":
            return f"FLOAT({self.precision})"
        if k.startswith("TIMESTAMP"):
            head = "TIMESTAMP" if self.fsp == 6 else f"TIMESTAMP({self.fsp})"
            return head + k[len("TIMESTAMP"):]
        if k == "OBJECT":
            name = _quote(self.type_name or "")
            return f"{_quote(self.type_schema)}.{name}" if self.type_schema else name
        return k

    def __str__(self) -> str:
        return self.text


_TOKEN = re.compile(r'\s*(?:(?P<q>"[^"]*")|(?P<id>[A-Za-z][A-Za-z0-9_$#]*)'
                    r'|(?P<num>[+-]?\d+)|(?P<p>[(),.*]))')
# Words that start a built-in datatype; any other word names an object type.
_KEYWORDS = frozenset({
    "VARCHAR2", "VARCHAR", "NVARCHAR2", "CHAR", "NCHAR", "NUMBER", "DECIMAL", "DEC",
    "NUMERIC", "INTEGER", "INT", "SMALLINT", "FLOAT", "REAL", "DOUBLE", "BINARY_FLOAT",
    "BINARY_DOUBLE", "DATE", "TIMESTAMP", "RAW", "CLOB", "NCLOB", "BLOB", "BOOLEAN",
})
_PLAIN_NAME = re.compile(r"[A-Z][A-Z0-9_$#]*\Z")


def _quote(name: str) -> str:
    """An identifier as it must be written to parse back to ``name``."""
    return name if _PLAIN_NAME.match(name) and name not in _KEYWORDS else f'"{name}"'


class _Tokens:
    """A cursor over the tokens of one datatype text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []
        pos, end = 0, len(text.rstrip())
        while pos < end:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                self.fail(f"unexpected character {text[pos:].strip()[:1]!r}")
            kind = m.lastgroup or ""
            self.items.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def fail(self, why: str) -> NoReturn:
        raise ora(902, f"{self.text.strip()} ({why})")

    def peek(self) -> tuple[str, str]:
        return self.items[self.i] if self.i < len(self.items) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok[0] == "end":
            self.fail("incomplete datatype")
        self.i += 1
        return tok

    def accept(self, value: str) -> bool:
        kind, text = self.peek()
        if kind in ("p", "id") and text.upper() == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            self.fail(f"expected {value!r}")

    def integer(self, what: str, low: int, high: int) -> int:
        kind, text = self.take()
        if kind != "num" or not low <= int(text) <= high:
            self.fail(f"{what} must be an integer between {low} and {high}")
        return int(text)

    def length(self, kind: str, high: int, semantics: bool) -> tuple[int, bool]:
        """``(n [BYTE|CHAR])`` after a character or RAW type."""
        self.expect("(")
        n = self.integer(f"{kind} length", 1, high)
        char = False
        if semantics and self.accept("CHAR"):
            char = True
        elif semantics:
            self.accept("BYTE")
        self.expect(")")
        return n, char


def parse_datatype(text: str) -> AttrType:
    """Parse a datatype as written in ``CREATE TYPE … AS OBJECT (…)``.

    Built-in types are recognised by keyword; any other (possibly
    schema-qualified, possibly quoted) name is a reference to an object or
    collection type, resolved later against a registry.

    :raises DatabaseError: ORA-00902 for anything malformed or unknown.
    """
    if not isinstance(text, str) or not text.strip():
        raise ora(902, repr(text))
    t = _Tokens(text)
    result = _parse_one(t)
    if t.peek()[0] != "end":
        t.fail(f"unexpected {t.peek()[1]!r}")
    return result


def _parse_one(t: _Tokens) -> AttrType:
    kind, word = t.take()
    if kind == "q" or (kind == "id" and word.upper() not in _KEYWORDS):
        return _parse_named(t, word)
    if kind != "id":
        t.fail(f"unexpected {word!r}")
    w = word.upper()
    if w in ("VARCHAR2", "VARCHAR"):
        n, char = t.length("VARCHAR2", _MAX_VARCHAR, semantics=True)
        return AttrType("VARCHAR2", length=n, char_semantics=char)
    if w == "NVARCHAR2":
        return AttrType("NVARCHAR2", length=t.length(w, _MAX_VARCHAR, False)[0], char_semantics=True)
    if w in ("CHAR", "NCHAR"):
        n, char = t.length(w, _MAX_CHAR, w == "CHAR") if t.peek()[1] == "(" else (1, False)
        return AttrType(w, length=n, char_semantics=char or w == "NCHAR")
    if w == "NUMBER":
        if not t.accept("("):
            return AttrType("NUMBER")
        p = None if t.accept("*") else t.integer("NUMBER precision", 1, 38)
        s = t.integer("NUMBER scale", -84, 127) if t.accept(",") else (0 if p else None)
        t.expect(")")
        return AttrType("NUMBER", precision=p, scale=s)
    if w in ("DECIMAL", "DEC", "NUMERIC"):
        p, s = 38, 0
        if t.accept("("):
            p = t.integer(f"{w} precision", 1, 38)
            s = t.integer(f"{w} scale", -84, 127) if t.accept(",") else 0
            t.expect(")")
        return AttrType("NUMBER", precision=p, scale=s)
    if w in ("INTEGER", "INT", "SMALLINT"):
        return AttrType("NUMBER", scale=0)
    if w == "FLOAT":
        b = 126
        if t.accept("("):
            b = t.integer("FLOAT precision", 1, 126)
            t.expect(")")
        return AttrType("FLOAT", precision=b)
    if w == "REAL":
        return AttrType("FLOAT", precision=63)
    if w == "DOUBLE":
        t.expect("PRECISION")
        return AttrType("FLOAT", precision=126)
    if w == "TIMESTAMP":
        fsp = 6
        if t.accept("("):
            fsp = t.integer("TIMESTAMP precision", 0, 9)
            t.expect(")")
        kind_name = "TIMESTAMP"
        if t.accept("WITH"):
            local = t.accept("LOCAL")
            t.expect("TIME")
            t.expect("ZONE")
            kind_name += " WITH LOCAL TIME ZONE" if local else " WITH TIME ZONE"
        return AttrType(kind_name, fsp=fsp)
    if w == "RAW":
        return AttrType("RAW", length=t.length("RAW", _MAX_VARCHAR, False)[0])
    return AttrType(w)  # BINARY_FLOAT, BINARY_DOUBLE, DATE, CLOB, NCLOB, BLOB, BOOLEAN


def _parse_named(t: _Tokens, first: str) -> AttrType:
    schema, name = None, canonical(first, "type name")
    if t.accept("."):
        kind, second = t.take()
        if kind not in ("id", "q"):
            t.fail(f"unexpected {second!r}")
        schema, name = name, canonical(second, "type name")
    if t.peek()[1] == "(":
        t.fail(f"unknown datatype {name}")
    return AttrType("OBJECT", type_schema=schema, type_name=name)


def parse_attribute_list(text: str) -> list[tuple[str, str]]:
    """``"(title VARCHAR2(100), price NUMBER(7,2))"`` → ``[("title", "VARCHAR2(100)"), …]``.

    Splits the body of ``CREATE TYPE … AS OBJECT (…)`` into (name as written,
    datatype text) pairs for :func:`build_object_type`.
    """
    body = text.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1]
    parts, depth, quoted, cur = [], 0, False, []
    for ch in body:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "()":
            depth += 1 if ch == "(" else -1
        if ch == "," and depth == 0 and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    result = []
    for part in parts:
        m = re.match(r'\s*("[^"]+"|[A-Za-z][A-Za-z0-9_$#]*)\s+(\S.*?)\s*\Z', part, re.S)
        if not m:
            raise ora(902, f"{part.strip() or '(empty attribute)'} (expected: name datatype)")
        result.append((m.group(1), m.group(2)))
    return result
