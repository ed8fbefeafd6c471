"""Object attribute paths in a user's SQL: ``q.user_data.title`` of an object payload.

A queue table whose payload is an object type (``CREATE TYPE book AS OBJECT (title
VARCHAR2(40), pages NUMBER)``) keeps each payload as the JSON text of its attributes
(:func:`sluice.objtypes.to_storage`: upper-case keys, a nested object a nested JSON object,
a NUMBER a JSON number or ``{"$num": "…"}`` when a float would lose digits, a DATE its ISO
text).  Oracle lets a statement read the attributes through a table alias of the queue table
or of its ``AQ$`` view, anywhere an expression goes (select list, WHERE, GROUP BY, ORDER
BY), nested objects included (``q.user_data.author.name``).  :func:`object_paths` turns each
such path into an expression on the stored text with the attribute's Oracle type — a NUMBER
a number, a VARCHAR2 text, a DATE / TIMESTAMP a ``CAST(… AS DATE | TIMESTAMP)`` that the
translation of Oracle's words (:mod:`.sqloracle`) then answers as it answers any — SQLite's
``json_extract``, PostgreSQL's ``#>>``.  A select item that is a path alone gets Oracle's
heading for it, the path without its alias (``USER_DATA.TITLE``).

As Oracle: an attribute the type does not have is ORA-00904, and so is a path without a
table alias (``user_data.title``, or the table's name instead of an alias): "Oracle
Database requires you to use a table alias to qualify any dot-notational reference to
subprograms or attributes of objects" (Object-Relational Developer's Guide, "When Table
Aliases Are Required").  A RAW, LOB or collection attribute is SLU-00001.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping

from ..errors import not_supported, ora
from ..objtypes import parse_datatype
from .selectitems import item_headings, items_rewritten, table_aliases

__all__ = ["object_paths", "store_object_paths"]

# a statement that may hold a path (told from its text, before reading its tokens)
_MAYBE = re.compile(r"USER_DATA\s*\.", re.I)
_NUMBERS = frozenset({"NUMBER", "FLOAT", "BINARY_FLOAT", "BINARY_DOUBLE"})
_TEXTS = frozenset({"VARCHAR2", "NVARCHAR2", "CHAR", "NCHAR", "VARCHAR", "CLOB", "NCLOB", "LONG"})
_DATES = {"DATE": "DATE", "TIMESTAMP": "TIMESTAMP", "TIMESTAMP WITH TIME ZONE": "TIMESTAMP",
          "TIMESTAMP WITH LOCAL TIME ZONE": "TIMESTAMP"}

# a type's attributes: name -> declared type text (of the catalog's TYPE specs)
Specs = Mapping[str, dict]


def store_object_paths(sql: str, user: str, sqlite: bool, store) -> str:
    """:func:`object_paths` of a user's statement on ``store`` (its catalog read only for a
    statement naming ``USER_DATA.``)."""
    if not _MAYBE.search(sql):
        return sql
    from .sqloracle import tokens
    return object_paths(sql, user, sqlite, tokens, store.queue_tables,
                        lambda: {f"{o}.{n}": spec for o, n, spec in store.catalog_objects("TYPE")})


def object_paths(sql: str, user: str, sqlite: bool, tokens: Callable[[str], list],
                 queue_tables: Callable[[], Iterable], type_specs: Callable[[], Specs]) -> str:
    """``sql`` with each attribute path of an object payload as an expression on its stored
    form (see the module); ``queue_tables()`` the store's queue tables, ``type_specs()``
    ``{"OWNER.NAME": spec}`` of its object types (both read only for a statement naming
    ``USER_DATA.``); ``user`` the schema of names without one."""
    if not _MAYBE.search(sql):
        return sql
    toks = tokens(sql)
    aliases, named = table_aliases(toks, user, {(qt.owner, n): qt for qt in queue_tables()
                                           for n in (qt.name, "AQ$" + qt.name)})
    named = [qt for qt in named if qt.payload_type not in ("RAW", "JSON")]
    if not named:
        return sql
    specs = type_specs()
    if not any(_spec(qt.payload_type, specs) for qt in named):
        return sql
    found: dict[int, str] = {}     # token -> its expression
    for i, t in enumerate(toks):
        if t.kind != "id" or "." not in t.text:
            continue
        parts = [p.strip().upper() for p in t.text.split(".")]
        if "USER_DATA" not in parts[:2] or parts[-1] == "USER_DATA":
            continue
        qt = aliases.get(parts[0])
        if parts[1] != "USER_DATA" or qt is None:
            if parts[0] in aliases:
                continue            # another table's column (or a table aliased USER_DATA)
            raise ora(904, ".".join(f'"{p}"' for p in parts))   # no alias: Oracle requires one
        spec = _spec(qt.payload_type, specs)
        if spec is None:
            raise ora(904, ".".join(f'"{p}"' for p in parts))   # a payload without attributes
        found[i] = _expression(f"{parts[0]}.USER_DATA", parts[2:], spec, specs, sqlite, parts)
    if not found:
        return sql
    from .sqloracle import aliased
    return items_rewritten(sql, toks, found, item_headings(toks, set(found), aliased, _path_heading))


def _spec(payload_type: str, specs: Specs) -> dict | None:
    """The catalog's spec of an object payload type (None: the payload is none)."""
    spec = specs.get(payload_type) if "." in payload_type else next(
        (s for k, s in specs.items() if k.rpartition(".")[2] == payload_type), None)
    return spec if spec is not None and spec.get("kind") == "OBJECT" else None


def _expression(doc: str, attrs: list[str], spec: dict, specs: Specs, sqlite: bool,
                parts: list[str]) -> str:
    """The SQL of attribute path ``attrs`` in the JSON text ``doc`` of an object of ``spec``."""
    kind = None
    for n, a in enumerate(attrs):
        declared = dict((name.upper(), text) for name, text in spec.get("attributes", []))
        if a not in declared:
            raise ora(904, ".".join(f'"{p}"' for p in parts))
        datatype = parse_datatype(declared[a])
        kind = datatype.kind
        if kind == "OBJECT":
            spec = specs.get(datatype.text.upper())
            if spec is None or spec.get("kind") != "OBJECT":
                raise not_supported(f"attribute paths into {datatype.text}")
        elif n < len(attrs) - 1:      # an attribute of a scalar
            raise ora(904, ".".join(f'"{p}"' for p in parts))
    return _typed(doc, attrs, kind, sqlite)


def _typed(doc: str, attrs: list[str], kind: str | None, sqlite: bool) -> str:
    def at(path: list[str]) -> str:
        if sqlite:
            return f"json_extract({doc}, '$" + "".join(f'."{p}"' for p in path) + "')"
        return f"(CAST({doc} AS jsonb) #>> '{{" + ",".join(path) + "}')"
    if kind in _NUMBERS:     # a number that would lose digits as a float is {"$num": "…"}
        return f"CAST(COALESCE({at(attrs + ['$num'])}, {at(attrs)}) AS NUMERIC)"
    if kind in _DATES:
        return f"CAST({at(attrs)} AS {_DATES[kind]})"
    if kind in _TEXTS or kind == "OBJECT":    # an object: its JSON text, as USER_DATA is shown
        return at(attrs)
    raise not_supported(f"a {kind} attribute in a statement")


def _path_heading(toks: list, first: int, last: int) -> str | None:
    """Oracle's heading of a path alone: the path less its alias (``USER_DATA.TITLE``)."""
    if first != last:
        return None
    return ".".join(p.strip().upper() for p in toks[first].text.split(".")[1:])
