"""``TABLE(sys.odcinumberlist(…))`` and ``TABLE(sys.odcivarchar2list(…))`` in a user's SQL: the
collection's elements as rows of one column, ``COLUMN_VALUE``.

Scripts pass a list of ids or names to a query with these two collection types of SYS
(``WHERE id IN (SELECT column_value FROM TABLE(sys.odcinumberlist(1, 2, 3)))``).  A
statement typed at a cursor, once :mod:`.sqloracle` has answered Oracle's words in it, is
read again here and :func:`odci_lists` rewrites each ``TABLE(sys.odci…list(e1, e2, …))``
(``SYS.`` may be left out: Oracle's public synonyms) as the derived table ``(SELECT e1 AS
column_value UNION ALL SELECT e2 …)`` — each element a row, in the list's order, NULLs kept;
an empty list no rows.  PostgreSQL is given the elements' type (NUMERIC, TEXT: a bind
alone would have none).  The table keeps an alias the user gave it.
"""

from __future__ import annotations

from typing import Callable

from ..errors import ora

__all__ = ["odci_lists"]

_TYPES = {"ODCINUMBERLIST": "NUMERIC", "ODCIVARCHAR2LIST": "TEXT"}


def odci_lists(text: str, sqlite: bool, tokens: Callable[[str], list]) -> str:
    """``text`` with each ``TABLE(sys.odcinumberlist(…))`` / ``TABLE(sys.odcivarchar2list(…))``
    as a derived table of its elements (see the module)."""
    if "ODCI" not in text.upper():
        return text
    toks = tokens(text)
    out, at = [], 0
    for i, t in enumerate(toks):
        kind = _TYPES.get(t.word.removeprefix("SYS.").replace(" ", ""))
        if (kind is None or i < 2 or toks[i - 1].text != "(" or toks[i - 2].word != "TABLE"
                or i + 1 >= len(toks) or toks[i + 1].text != "("):
            continue
        close = _closing(toks, i + 1)
        if close + 1 >= len(toks) or toks[close + 1].text != ")" or toks[i - 2].start < at:
            raise ora(907)
        elements = _elements(text, toks, i + 2, close)
        rows = " UNION ALL ".join(
            f"SELECT {e if sqlite else f'CAST({e} AS {kind})'}{' AS column_value' if n == 0 else ''}"
            for n, e in enumerate(elements)) or f"SELECT CAST(NULL AS {kind}) AS column_value WHERE 1 = 0"
        out.append(text[at:toks[i - 2].start])
        out.append(f"({rows})")
        at = toks[close + 1].end
    out.append(text[at:])
    return "".join(out)


def _closing(toks: list, open_: int) -> int:
    depth = 0
    for k in range(open_, len(toks)):
        depth += (toks[k].text == "(") - (toks[k].text == ")")
        if depth == 0:
            return k
    raise ora(907)


def _elements(text: str, toks: list, start: int, close: int) -> list[str]:
    """The texts of the comma-separated arguments at tokens ``start``..``close`` (exclusive)."""
    out, first, depth = [], start, 0
    for k in range(start, close):
        depth += (toks[k].text == "(") - (toks[k].text == ")")
        if toks[k].text == "," and depth == 0:
            out.append((first, k - 1))
            first = k + 1
    if first < close:
        out.append((first, close - 1))
    elif out:
        raise ora(936)
    if any(a > b for a, b in out):
        raise ora(936)
    return [text[toks[a].start:toks[b].end] for a, b in out]
