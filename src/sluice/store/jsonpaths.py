"""Oracle's simple dot notation over a JSON column: ``c.json_data.location``.

Oracle reads ``alias.column.field[.field…]`` as the value at that path of the JSON column
``column`` of the table ``alias`` names (a table alias is required, as for object attribute
paths, :mod:`.objpaths`); the field names are case-sensitive as written.  Over a column of
the JSON type (:mod:`.tableddl`: SQLite's ``JSON``, PostgreSQL's ``jsonb``) the value is of
the JSON type: a top-level select item that is a path alone (maybe aliased) is the value's
JSON (SQLite's ``->``, PostgreSQL's ``#>``), described DB_TYPE_JSON (:mod:`.sqlheadings`
with :func:`json_path_column`; PostgreSQL's jsonb by its type) and fetched as python-oracledb
fetches the type — a str, Decimal, bool, dict, list, or NULL for a missing field — and headed
by its last field upper-cased.  Elsewhere (WHERE, ORDER BY, an operand, a subquery) it is the
value's text, as Oracle answers for textual JSON: a scalar's text, an object's or array's
compact JSON — SQLite's ``json_type`` / ``json_extract``, PostgreSQL's ``#>>``.  So too
``JSON_QUERY(json_column, 'path')`` as a top-level select item alone: of the JSON type (Oracle's
default RETURNING for a JSON document), the object or array there (NULL for a scalar, as
:mod:`.sqlsetops` answers it), where elsewhere it stays sqlsetops' compact text.  Array steps
(``c.doc.items[0]``) and item methods (``.number()``) are not read: such a name stays as it is
(ORA-00904, as any unknown name).
"""

from __future__ import annotations

import re
from typing import Callable

from .selectitems import item_headings, items_rewritten, select_items, table_aliases
from .sqlsetops import _PATH, _STEP
from .usercolumns import Lookup, table_names

__all__ = ["JSON_DECLARED", "json_path_column", "json_paths", "json_query_column"]

# a JSON column's declared type: SQLite's (tableddl keeps Oracle's name), PostgreSQL's
JSON_DECLARED = ("JSON", "JSONB")

# a name of three parts or more: a statement that may hold a path (told from its text)
_MAYBE = re.compile(r"[\w\"]\s*\.\s*[\w\"]+\s*\.\s*[\w\"]")
_FIELD = re.compile(r"[A-Za-z_$][\w$#]*")
_QUERY = re.compile(r"JSON_QUERY", re.I)
# PostgreSQL: JSON text without the white space outside its strings (jsonb's text has some)
_COMPACT = r"""regexp_replace({}, '("(?:[^"\\]|\\.)*")|\s+', '\1', 'g')"""


class _AnyTable:
    """What :func:`.selectitems.table_aliases` looks a FROM item's name up in: any table, as itself."""

    @staticmethod
    def get(key: tuple) -> tuple:
        return key


def json_paths(text: str, sqlite: bool, tokens: Callable[[str], list], columns: Lookup | None,
               aliased: Callable[[list, int, int], bool]) -> str:
    """``text`` with each dot-notation path of a JSON column as the store's expression (see
    the module); ``columns`` looks up the declared types of the statement's tables."""
    if columns is None or not (text.count(".") >= 2 and _MAYBE.search(text) or _QUERY.search(text)):
        return text
    toks = tokens(text)
    found: dict[int, str | tuple[int, str]] = {}
    aliases = None
    items = None
    for i, t in enumerate(toks):
        if t.kind == "id" and t.word == "JSON_QUERY":
            items = _alone(toks, aliased) if items is None else items
            typed = _typed_query(toks, i, items, columns, sqlite)
            if typed is not None:
                found[i] = typed
            continue
        if t.kind != "id" or t.text.count(".") < 2:
            continue
        if aliases is None:
            aliases = table_aliases(toks, "", _AnyTable())[0]
        parts = [p.strip() for p in t.text.split(".")]
        table = aliases.get(parts[0].upper())
        fields = parts[2:]
        if table is None or not all(_FIELD.fullmatch(f) for f in fields):
            continue
        decl = columns([table[1]]).get(parts[1].upper())
        if decl in JSON_DECLARED:
            items = _alone(toks, aliased) if items is None else items
            found[i] = _expression(f"{parts[0]}.{parts[1]}", fields, sqlite, typed=(i, i) in items)
    if not found:
        return text
    return items_rewritten(text, toks, found, item_headings(toks, set(found), aliased, _heading))


def json_path_column(text: str) -> str | None:
    """The column (upper-cased) a name of dot notation (``c.json_data.location``) reads, if
    it is one; whether that column is JSON is the caller's lookup (:mod:`.sqlheadings`: the
    select item is then described DB_TYPE_JSON)."""
    parts = [p.strip() for p in text.split(".")]
    return parts[1].upper() if len(parts) > 2 and all(_FIELD.fullmatch(f) for f in parts[2:]) else None


def json_query_column(toks: list, first: int, last: int) -> str | None:
    """The column (upper-cased, its last name) ``JSON_QUERY(column, '…')`` at tokens
    ``first``..``last`` reads, if the item is that call; whether the column is JSON is the
    caller's lookup (:mod:`.sqlheadings`: the item is then described DB_TYPE_JSON)."""
    if last - first != 5 or toks[first].word != "JSON_QUERY" or toks[first + 1].text != "(" \
            or toks[first + 2].kind != "id" or toks[first + 3].text != "," or toks[first + 4].kind != "str" \
            or toks[last].text != ")":
        return None
    return toks[first + 2].text.rpartition(".")[2].strip().upper()


def _typed_query(toks: list, i: int, items: set[tuple[int, int]], columns: Lookup, sqlite: bool
                 ) -> tuple[int, str] | None:
    """``JSON_QUERY(json_column, 'path')`` as a top-level select item alone: the object or array
    at the path as the JSON type (Oracle's default RETURNING for a JSON document), else None
    (the call is :mod:`.sqlsetops`' text)."""
    last = i + 5
    if (i, last) not in items or json_query_column(toks, i, last) is None:
        return None
    if columns(table_names(toks)).get(json_query_column(toks, i, last)) not in JSON_DECLARED:
        return None
    path = toks[i + 4].text[1:-1].replace("''", "'").strip()
    if not _PATH.fullmatch(path):
        return None
    doc = toks[i + 2].text
    if sqlite:
        at = "'" + path.replace("'", "''") + "'"
        return last, f"(CASE WHEN json_type({doc}, {at}) IN ('object', 'array') THEN {doc} -> {at} END)"
    keys = ",".join(m.group(1) or m.group(2) or m.group(3) for m in _STEP.finditer(path[1:]))
    at = "'{" + keys.replace("'", "''") + "}'"
    return last, f"(CASE WHEN jsonb_typeof({doc} #> {at}) IN ('object', 'array') THEN {doc} #> {at} END)"


def _alone(toks: list, aliased: Callable[[list, int, int], bool]) -> set[tuple[int, int]]:
    """The (first, last) tokens of each top-level select item (its alias left out)."""
    depth, depths = 0, []
    for t in toks:
        depth += (t.text == "(") - (t.text == ")")
        depths.append(depth)
    out = set()
    for first, last in select_items(toks):
        if aliased(toks, first, last):
            last -= 1 + (toks[last - 1].word == "AS")
        if depths[first] == 0 and toks[first].text != "(":
            out.add((first, last))
    return out


def _expression(column: str, fields: list[str], sqlite: bool, typed: bool) -> str:
    """The value at ``fields`` of JSON ``column``: of the JSON type (a select item alone,
    ``typed``: its JSON text, described DB_TYPE_JSON) or as text (elsewhere: compared,
    sorted as Oracle's textual dot notation)."""
    if typed:
        return (f"({column} -> '$" + "".join(f'."{f}"' for f in fields) + "')" if sqlite
                else f"({column} #> '{{" + ",".join(fields) + "}')")
    if sqlite:
        path = "'$" + "".join(f'."{f}"' for f in fields) + "'"
        return (f"(CASE json_type({column}, {path}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
                f"WHEN 'null' THEN NULL ELSE CAST(json_extract({column}, {path}) AS TEXT) END)")
    path = "'{" + ",".join(fields) + "}'"
    text = f"({column} #>> {path})"
    return (f"(CASE WHEN jsonb_typeof({column} #> {path}) IN ('object', 'array') THEN {_COMPACT.format(text)} "
            f"ELSE {text} END)")


def _heading(toks: list, first: int, last: int) -> str | None:
    """A path alone is headed by its last field, upper-cased."""
    if first != last:
        return None
    return toks[first].text.rpartition(".")[2].strip().upper()
