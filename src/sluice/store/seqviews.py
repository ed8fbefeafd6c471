"""USER_SEQUENCES, ALL_SEQUENCES and DBA_SEQUENCES in a user's query: the sequences
(:mod:`.sequences`) live in no table of the store's SQL (SQLite: a file beside the store;
PostgreSQL: native sequences and their comments), so each name of these views in the
statement becomes a subquery of their rows, read when the statement is run — under the
view's name as its alias when the statement gave it none.

Oracle's columns: SEQUENCE_OWNER (ALL_ / DBA_), SEQUENCE_NAME, MIN_VALUE, MAX_VALUE,
INCREMENT_BY, CYCLE_FLAG, ORDER_FLAG, CACHE_SIZE, LAST_NUMBER (the last number written to
disk: the next value no process holds in its cache), SCALE_FLAG, EXTEND_FLAG, SHARDED_FLAG,
SESSION_FLAG, KEEP_VALUE (always N).  On SQLite a bound beyond 64 bits (NOMAXVALUE's
10^28 - 1) is fetched as SQLite's REAL of it.
"""

from __future__ import annotations

from typing import Any, Callable

from .sequences import listing
from .sqloracle import tokens

__all__ = ["sequence_views"]

_VIEWS = ("USER_SEQUENCES", "ALL_SEQUENCES", "DBA_SEQUENCES")
# words after a FROM item that are no alias of it
_NOT_ALIAS = frozenset({"WHERE", "GROUP", "ORDER", "HAVING", "UNION", "INTERSECT", "MINUS", "EXCEPT", "JOIN",
                        "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "ON", "USING", "CONNECT", "START",
                        "FETCH", "OFFSET", "FOR", "WITH"})
_FLAGS = ("SCALE_FLAG", "EXTEND_FLAG", "SHARDED_FLAG", "SESSION_FLAG", "KEEP_VALUE")


def sequence_views(store: Any, user: str, sql: str,
                   sees: Callable[[str, str], bool] = lambda obj, kind: True) -> str:
    """``sql`` with each of the views above it names made a subquery of its rows: USER_SEQUENCES
    the user's, ALL_SEQUENCES those it ``sees`` (``(OWNER.NAME, "SEQUENCE")``: its own, those it
    holds a privilege on or an ANY SEQUENCE privilege), DBA_SEQUENCES all."""
    upper = sql.upper()
    if "_SEQUENCES" not in upper or not any(v in upper for v in _VIEWS):
        return sql
    toks = tokens(sql)
    hits = [i for i, t in enumerate(toks) if t.kind == "id" and _view(t.word)
            and not (i + 1 < len(toks) and toks[i + 1].text in ("(", "."))]
    if not hits:
        return sql
    rows = listing(store)
    for i in reversed(hits):
        t, view = toks[i], _view(toks[i].word)
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        aliased = nxt is not None and (nxt.kind == "qid" or nxt.kind == "id" and nxt.word not in _NOT_ALIAS)
        mine = [r for r in rows if r[0] == user or view == "DBA_SEQUENCES"
                or view == "ALL_SEQUENCES" and sees(f"{r[0]}.{r[1]}", "SEQUENCE")]
        sub = "(" + _select(mine, view != "USER_SEQUENCES") + ")" + ("" if aliased else f" {view}")
        sql = sql[:t.start] + sub + sql[t.end:]
    return sql


def _view(word: str) -> str:
    name = word.rpartition(".")[2].strip()
    owner = word.rpartition(".")[0].strip()
    return name if name in _VIEWS and owner in ("", "SYS", "PUBLIC") else ""


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _select(rows: list[tuple[str, str, dict, int]], owners: bool) -> str:
    def one(owner: str, name: str, spec: dict, last: int | None) -> str:
        cols = [f"{_literal(owner)} AS SEQUENCE_OWNER"] if owners else []
        yn = {True: "'Y'", False: "'N'"}
        cols += [f"{_literal(name)} AS SEQUENCE_NAME", f"{spec['min']} AS MIN_VALUE", f"{spec['max']} AS MAX_VALUE",
                 f"{spec['increment']} AS INCREMENT_BY", f"{yn[bool(spec['cycle'])]} AS CYCLE_FLAG",
                 f"{yn[bool(spec['order'])]} AS ORDER_FLAG", f"{spec['cache']} AS CACHE_SIZE",
                 f"{last} AS LAST_NUMBER"]
        cols += [f"'N' AS {flag}" for flag in _FLAGS]
        return "SELECT " + ", ".join(cols)
    if not rows:
        empty = ("SELECT CAST(NULL AS VARCHAR(128)) AS SEQUENCE_OWNER, " if owners else "SELECT ") + (
            "CAST(NULL AS VARCHAR(128)) AS SEQUENCE_NAME, CAST(NULL AS NUMERIC) AS MIN_VALUE, "
            "CAST(NULL AS NUMERIC) AS MAX_VALUE, CAST(NULL AS NUMERIC) AS INCREMENT_BY, "
            "CAST(NULL AS VARCHAR(1)) AS CYCLE_FLAG, CAST(NULL AS VARCHAR(1)) AS ORDER_FLAG, "
            "CAST(NULL AS NUMERIC) AS CACHE_SIZE, CAST(NULL AS NUMERIC) AS LAST_NUMBER, ")
        return empty + ", ".join(f"CAST(NULL AS VARCHAR(1)) AS {flag}" for flag in _FLAGS) + " WHERE 1 = 0"
    return " UNION ALL ".join(one(*r) for r in rows)
