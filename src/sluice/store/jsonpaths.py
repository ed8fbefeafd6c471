"""Oracle's simple dot notation over a JSON column: ``c.json_data.location``.

Oracle reads ``alias.column.field[.field…]`` as the value at that path of the JSON column
``column`` of the table ``alias`` names (a table alias is required, as for object attribute
paths, :mod:`.objpaths`); the field names are case-sensitive as written.  Here the path of
a column its table declares JSON (:mod:`.tableddl`: SQLite's ``JSON``, PostgreSQL's
``jsonb``) is the value's text, as Oracle answers it for textual JSON (a VARCHAR2): a scalar
its text (``Germany``, ``860``, ``true``), an object or array its compact JSON text, a
missing field NULL — SQLite's ``json_type`` / ``json_extract``, PostgreSQL's ``#>>``.  (Over
Oracle's JSON type the result is of the JSON type, which python-oracledb fetches as a str,
Decimal, dict …: the same for a string, the text of the others — a gap.)  A select item that
is a path alone is headed by its last field upper-cased, as Oracle heads a column.
Array steps (``c.doc.items[0]``) and item methods (``.number()``) are not read: such a name
stays as it is (ORA-00904, as any unknown name).
"""

from __future__ import annotations

import re
from typing import Callable

from .selectitems import item_headings, items_rewritten, table_aliases
from .usercolumns import Lookup

__all__ = ["json_paths"]

# a name of three parts or more: a statement that may hold a path (told from its text)
_MAYBE = re.compile(r"[\w\"]\s*\.\s*[\w\"]+\s*\.\s*[\w\"]")
_FIELD = re.compile(r"[A-Za-z_$][\w$#]*")
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
    if columns is None or text.count(".") < 2 or not _MAYBE.search(text):
        return text
    toks = tokens(text)
    found: dict[int, str] = {}
    aliases = None
    for i, t in enumerate(toks):
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
        if decl in ("JSON", "JSONB"):
            found[i] = _expression(f"{parts[0]}.{parts[1]}", fields, sqlite)
    if not found:
        return text
    return items_rewritten(text, toks, found, item_headings(toks, set(found), aliased, _heading))


def _expression(column: str, fields: list[str], sqlite: bool) -> str:
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
