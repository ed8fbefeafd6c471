"""A user's SQL on the views, made runnable by the store's database.

``SELECT msg_state FROM aq$orders_qt`` becomes
``SELECT msg_state FROM "SCOTT.AQ$ORDERS_QT"`` for user SCOTT (:func:`rewrite`):
unquoted (and optionally schema-qualified) names of queue tables and their
``AQ$`` views are replaced; everything else is left to the database.
:func:`to_pyformat` turns Oracle binds into psycopg's placeholders and
:func:`json_value` is Oracle's ``JSON_VALUE`` for SQLite.
"""

from __future__ import annotations

import json
import re

# identifiers (optionally schema.name) outside string literals and quoted names
_TOKEN = re.compile(
    r"""('(?:[^']|'')*')"""             # string literal
    r"""|("(?:[^"]|"")*")"""            # quoted identifier
    r"""|(--[^\n]*|/\*.*?\*/)"""         # comments
    r"""|([A-Za-z][A-Za-z0-9_$#]*(?:\s*\.\s*[A-Za-z][A-Za-z0-9_$#]*)?)""",
    re.S,
)


def rewrite(sql: str, known: dict[tuple[str, str], str], user: str) -> str:
    """Replace ``[schema.]name`` tokens found in ``known`` ((SCHEMA, NAME) -> physical)."""

    def sub(m: re.Match) -> str:
        ident = m.group(4)
        if ident is None:
            return m.group(0)
        parts = [p.strip().upper() for p in ident.split(".")]
        key = (parts[0], parts[1]) if len(parts) == 2 else (user, parts[0])
        return known.get(key, m.group(0))

    return _TOKEN.sub(sub, sql)


def physical_names(queue_tables, user_tables: dict[tuple[str, str], str] | None = None) -> dict[tuple[str, str], str]:
    """``(SCHEMA, NAME) -> physical name`` of the queue tables and their ``AQ$`` views, and
    of the dictionary views users name with Oracle's schema (for :func:`rewrite`); and
    ``user_tables``, the tables made at a cursor (:func:`.tableddl.user_table_names`)."""
    from .sqlschema import subscriber_view_name, table_name, view_name
    known: dict[tuple[str, str], str] = {("SYSTEM", "AQ$INTERNET_USERS"): "AQ$INTERNET_USERS",
                                         ("SYS", "DBA_QUEUES"): "DBA_QUEUES"}
    for qt in queue_tables:
        known[(qt.owner, qt.name)] = table_name(qt)
        known[(qt.owner, "AQ$" + qt.name)] = view_name(qt)
        if qt.multiple_consumers:
            known[(qt.owner, f"AQ${qt.name}_S")] = subscriber_view_name(qt, "S")
            known[(qt.owner, f"AQ${qt.name}_R")] = subscriber_view_name(qt, "R")
    known.update(user_tables or ())
    return known


def to_pyformat(sql: str, positional: bool = False) -> str:
    """Oracle-style binds (``:name``, ``:1``) and ``?`` as psycopg placeholders
    (``%(name)s``, or ``%s`` in order when ``positional``), with every other ``%``
    doubled; literals, quoted names and comments are left alone (except their ``%``,
    which psycopg would read too)."""

    def sub(m: re.Match) -> str:
        if m.group(1) is not None:
            return m.group(1).replace("%", "%%")
        if m.group(2) is not None:
            return m.group(2).replace("%", "%%")
        if m.group(3) is not None:
            return m.group(3).replace("%", "%%")
        if m.group(4) is not None:
            return "%s" if positional else f"%({m.group(4)})s"
        if m.group(5) is not None:
            return "%s"
        return "%%"

    return _BINDS.sub(sub, sql)


def has_binds(sql: str) -> bool:
    """Whether ``sql`` names a bind variable (``:name``, ``:1``) outside literals and comments."""
    return any(m.group(4) is not None for m in _BINDS.finditer(sql))


def bind_names(sql: str) -> list[str]:
    """The bind variables ``sql`` names (``:name``, ``:1``), upper-cased, once per
    occurrence in order: the positions python-oracledb binds a list of values to in SQL."""
    return [m.group(4).upper() for m in _BINDS.finditer(sql) if m.group(4) is not None]


def number_binds(sql: str) -> str:
    """``sql`` with its n-th bind placeholder renamed ``:n`` (1-based), so values bound by
    position reach every occurrence, a name used twice included."""
    count = 0

    def sub(m: re.Match) -> str:
        nonlocal count
        if m.group(4) is None:
            return m.group(0)
        count += 1
        return f":{count}"

    return _BINDS.sub(sub, sql)


def renumbered_binds(sql: str, names: list[str]) -> str:
    """``sql`` with each placeholder ``:n`` that :func:`number_binds` made named ``:``
    ``names[n - 1]`` again (literals, quoted names and comments untouched)."""
    def sub(m: re.Match) -> str:
        n = m.group(4)
        if n is None or not n.isdigit() or not 0 < int(n) <= len(names):
            return m.group(0)
        return ":" + names[int(n) - 1]

    return _BINDS.sub(sub, sql)


_BINDS = re.compile(
    r"""('(?:[^']|'')*')"""            # string literal
    r"""|("(?:[^"]|"")*")"""           # quoted identifier
    r"""|(--[^\n]*|/\*.*?\*/)"""        # comments
    r"""|(?<![:\w]):([A-Za-z_][A-Za-z0-9_$#]*|\d+)"""   # :name or :1 (not :: casts)
    r"""|(\?)|%""",
    re.S,
)


def json_value(doc: str | None, path: str | None) -> str | None:
    """Oracle's ``JSON_VALUE(doc, '$.a.b[0]')``: the scalar at ``path`` as text; NULL for
    objects, arrays, missing members and documents that are not JSON (SQLite's version;
    PostgreSQL's is a SQL function of the same name)."""
    if doc is None or path is None:
        return None
    try:
        value = json.loads(doc)
    except (TypeError, ValueError):
        return None
    if not path.startswith("$"):
        return None
    for key, index in _PATH_STEP.findall(path[1:]):
        if key:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        else:
            if not isinstance(value, list) or int(index) >= len(value):
                return None
            value = value[int(index)]
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value)


_PATH_STEP = re.compile(r"\.([A-Za-z_$][\w$]*)|\[(\d+)\]")
