"""USER_SEQUENCES, ALL_SEQUENCES and DBA_SEQUENCES in a user's query: the sequences
(:mod:`.sequences`) live in no table of the store's SQL (SQLite: a file beside the store;
PostgreSQL: native sequences and their comments), so each name of these views in the
statement becomes a subquery of their rows, read when the statement is run — under the
view's name as its alias when the statement gave it none (:func:`.dictviews.as_subqueries`,
which the other dictionary views of a user's objects share).

Oracle's columns: SEQUENCE_OWNER (ALL_ / DBA_), SEQUENCE_NAME, MIN_VALUE, MAX_VALUE,
INCREMENT_BY, CYCLE_FLAG, ORDER_FLAG, CACHE_SIZE, LAST_NUMBER (the last number written to
disk: the next value no process holds in its cache), SCALE_FLAG, EXTEND_FLAG, SHARDED_FLAG,
SESSION_FLAG, KEEP_VALUE (always N).  On SQLite a bound beyond 64 bits (NOMAXVALUE's
10^28 - 1) is fetched as SQLite's REAL of it.
"""

from __future__ import annotations

from typing import Any, Callable

from .dictviews import NUMBER, TEXT, as_subqueries, literal_rows
from .sequences import listing

__all__ = ["sequence_views"]

_VIEWS = ("USER_SEQUENCES", "ALL_SEQUENCES", "DBA_SEQUENCES")
_FLAGS = ("SCALE_FLAG", "EXTEND_FLAG", "SHARDED_FLAG", "SESSION_FLAG", "KEEP_VALUE")
_COLUMNS = [("SEQUENCE_NAME", TEXT), ("MIN_VALUE", NUMBER), ("MAX_VALUE", NUMBER), ("INCREMENT_BY", NUMBER),
            ("CYCLE_FLAG", TEXT), ("ORDER_FLAG", TEXT), ("CACHE_SIZE", NUMBER), ("LAST_NUMBER", NUMBER),
            *((flag, TEXT) for flag in _FLAGS)]


def sequence_views(store: Any, user: str, sql: str,
                   sees: Callable[[str, str], bool] = lambda obj, kind: True) -> str:
    """``sql`` with each of the views above it names made a subquery of its rows: USER_SEQUENCES
    the user's, ALL_SEQUENCES those it ``sees`` (``(OWNER.NAME, "SEQUENCE")``: its own, those it
    holds a privilege on or an ANY SEQUENCE privilege), DBA_SEQUENCES all."""
    upper = sql.upper()
    if "_SEQUENCES" not in upper or not any(v in upper for v in _VIEWS):
        return sql
    rows: list = []

    def select(view: str) -> str:
        if not rows:
            rows.append(listing(store))
        owners = view != "USER_SEQUENCES"
        yn = {True: "Y", False: "N"}
        mine = [(owner,) * owners + (name, spec["min"], spec["max"], spec["increment"], yn[bool(spec["cycle"])],
                                     yn[bool(spec["order"])], spec["cache"], last) + ("N",) * len(_FLAGS)
                for owner, name, spec, last in rows[0]
                if owner == user or view == "DBA_SEQUENCES"
                or view == "ALL_SEQUENCES" and sees(f"{owner}.{name}", "SEQUENCE")]
        return literal_rows([("SEQUENCE_OWNER", TEXT)] * owners + _COLUMNS, mine)
    return as_subqueries(sql, _VIEWS, select)
