"""Oracle identifier rules: canonical case, schema qualification, length.

Unquoted identifiers are upper-cased (``orders_q`` is ``ORDERS_Q``); a name in
double quotes keeps its case (``"Mixed"``).  ``scott.orders_q`` is schema
``SCOTT``, object ``ORDERS_Q``; without a schema the current user's is used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .errors import ora

MAX_IDENTIFIER = 128


def canonical(part: str, what: str = "identifier") -> str:
    """One identifier in Oracle's canonical form."""
    if not isinstance(part, str):
        raise ora(6502, f"{what} must be a string, not {type(part).__name__}")
    part = part.strip()
    if len(part) >= 2 and part[0] == '"' and part[-1] == '"':
        name = part[1:-1]
    else:
        name = part.upper()
    if not name:
        raise ora(904, f'"{part}"')
    if len(name) > MAX_IDENTIFIER:
        raise ora(972, f"{name[:30]}... ({len(name)} characters, the limit is {MAX_IDENTIFIER})")
    return name


def split_qualified(name: str, default_schema: str, what: str = "identifier") -> tuple[str, str]:
    """``'scott.q'`` -> ``('SCOTT', 'Q')``; ``'q'`` -> ``(default_schema, 'Q')``."""
    if not isinstance(name, str):
        raise ora(6502, f"{what} must be a string, not {type(name).__name__}")
    parts = _split_dots(name.strip())
    if len(parts) == 1:
        return default_schema, canonical(parts[0], what)
    if len(parts) == 2:
        return canonical(parts[0], what), canonical(parts[1], what)
    raise ora(904, name)


def name_list(value: object, what: str = "names") -> list[str]:
    """The names of a list argument: Oracle's comma-delimited VARCHAR2 (``'a, b'``) or a
    Python sequence (any iterable) of strings; blanks around them and empty items dropped, case kept
    (the caller makes them identifiers).  :raises: ORA-06502 for anything else."""
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, Iterable) and not isinstance(value, (bytes, bytearray, Mapping)):
        items = list(value)
        for item in items:
            if not isinstance(item, str):
                raise ora(6502, f"{what} must be strings, not {type(item).__name__}")
    else:
        raise ora(6502, f"{what} must be a comma-separated string or a list of strings, "
                        f"not {type(value).__name__}")
    return [item.strip() for item in items if item.strip()]


def qualified(name: str, default_schema: str, what: str = "identifier") -> str:
    """``'q'`` -> ``'SCOTT.Q'``."""
    schema, obj = split_qualified(name, default_schema, what)
    return f"{schema}.{obj}"


def _split_dots(text: str) -> list[str]:
    parts, cur, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
            cur.append(ch)
        elif ch == "." and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts
