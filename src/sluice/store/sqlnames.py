"""Map Oracle object names in a user's SELECT to Sluice's physical names.

``SELECT msg_state FROM aq$orders_qt`` becomes
``SELECT msg_state FROM "SCOTT.AQ$ORDERS_QT"`` for user SCOTT: unquoted (and
optionally schema-qualified) names of queue tables and their ``AQ$`` views are
replaced; everything else is left to the database.
"""

from __future__ import annotations

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
