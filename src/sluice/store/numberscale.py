"""SQLite: a value written into a NUMBER(p, s) column rounded to the column's scale, as
Oracle stores it (PostgreSQL's ``numeric(p, s)`` rounds by itself).

Oracle rounds a value to the column's scale when it stores it (1.235 into NUMBER(5, 2) is
1.24, half away from zero; NUMBER(p) and NUMBER(p, 0) are whole numbers; a negative scale
rounds left of the point: 12345 into NUMBER(5, -2) is 12300) and refuses one whose digits
left of the point exceed ``p - s`` after rounding (ORA-01438).  SQLite keeps what it is
given, and its triggers cannot change a row's values: the DML typed at a cursor is
rewritten instead, each value for such a column passed through ``sluice_number(value, p, s)``:

* ``INSERT INTO t [(cols)] VALUES (…) | SELECT …`` -> ``WITH sluice_rows (c1, …) AS (VALUES (…)
  | SELECT …) INSERT INTO t (cols) SELECT sluice_number(c1, p, s), … FROM sluice_rows``;
* ``UPDATE t SET col = expr, …`` -> ``SET col = sluice_number((expr), p, s), …``.

Only a statement on a table with such a column is touched (its declared types are the
session's lookup, kept per schema version).  Not rewritten (left as SQLite stores them):
a tuple assignment ``SET (a, b) = (SELECT …)``, MERGE, a column's DEFAULT.
"""

from __future__ import annotations

import sqlite3
from functools import lru_cache
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, Callable, Sequence

from ..errors import ora
from .sqlitecalls import keep_error
from .sqloracle import tokens
from .tabledefs import quoted
from .usercolumns import Columns, number_scale, sqlite_declarations

__all__ = ["ScaledDml", "register", "scaled_dml"]

_WIDE = Context(prec=200)       # (quantize's digits: any NUMBER's)
_INT64 = Decimal(2) ** 63       # (a whole number past SQLite's integers: a real)


def register(conn: sqlite3.Connection) -> None:
    conn.create_function("sluice_number", 3, _number, deterministic=True)


def _number(value: Any, precision: int | None, scale: int) -> Any:
    """``value`` as NUMBER(precision, scale) stores it; ORA-01438 past its precision (kept
    for the statement's error: :func:`.sqlitecalls.keep_error`)."""
    if type(value) is int and scale >= 0:      # (the common case, without Decimal)
        if precision is not None and abs(value) >= 10 ** (precision - scale):
            keep_error(ora(1438))
            raise ValueError("ORA-01438")
        return value
    if value is None or value == "" or isinstance(value, bytes):
        return None if value == "" else value
    try:
        d = Decimal(value) if isinstance(value, int) else Decimal(str(value).strip())
        rounded = d.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP, context=_WIDE)
    except (InvalidOperation, ValueError):
        return value            # (text that is no number, an infinity: SQLite's own answer)
    if precision is not None and rounded.copy_abs() >= Decimal(10) ** (precision - scale):
        keep_error(ora(1438))
        raise ValueError("ORA-01438")
    return int(rounded) if scale <= 0 and rounded.copy_abs() < _INT64 else float(rounded)


class ScaledDml:
    """A session's :func:`scaled_dml`, kept per statement text until the store's catalog
    version moves (table DDL typed at a cursor bumps it): a statement run again costs a
    dictionary lookup, not a read of SQLite's schema version and the table's types."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.kept: dict[str, tuple[int, str]] = {}

    def __call__(self, sql: str, columns: Callable[[Sequence[str]], Columns], version: int) -> str:
        found = self.kept.get(sql)
        if found is not None and found[0] == version:
            return found[1]
        if sql.lstrip()[:6].upper() not in ("INSERT", "UPDATE"):
            return sql
        if len(self.kept) > 512:
            self.kept.clear()
        out = scaled_dml(sql, columns, self.conn)
        self.kept[sql] = (version, out)
        return out


def scaled_dml(sql: str, columns: Callable[[Sequence[str]], Columns], conn: sqlite3.Connection) -> str:
    """``sql`` (an INSERT or UPDATE of a user's table, the store's names) with the values for
    its NUMBER(p, s) columns rounded; any other statement as it is.  The rewrite is kept per
    statement text and the table's scales (a statement typed at a cursor runs again)."""
    verb = sql.lstrip()[:6].upper()
    if verb not in ("INSERT", "UPDATE"):
        return sql
    toks = tokens(sql)
    if len(toks) < 3:
        return sql
    if verb == "INSERT" and toks[1].word == "INTO" and toks[2].kind in ("id", "qid"):
        table = _table(toks[2])
        scales = _scales(table, columns)
        if not scales:
            return sql
        listed = _column_list(toks) is not None
        names = () if listed else tuple(c for c, _, _ in sqlite_declarations(conn, [table]))
        return _insert(sql, tuple(sorted(scales.items())), names)
    if verb == "UPDATE" and toks[1].kind in ("id", "qid"):
        scales = _scales(_table(toks[1]), columns)
        return _update(sql, tuple(sorted(scales.items()))) if scales else sql
    return sql


def _table(tok: Any) -> str:
    """A table token's name as the lookup takes it (upper-cased, without its schema)."""
    name = tok.text.split(".")[-1].strip()
    return name[1:-1].replace('""', '"').upper() if name.startswith('"') else name.upper()


def _scales(table: str, columns: Callable[[Sequence[str]], Columns]) -> dict[str, tuple[int | None, int]]:
    """``COLUMN -> (precision, scale)`` of the table's NUMBER(p, s) columns."""
    out = {}
    for name, decl in columns([table]).items():
        scale = _scale(decl)
        if scale is not None:
            out[name] = scale
    return out


_scale = lru_cache(maxsize=1024)(number_scale)     # (a declared type's, read once)


def _column_list(toks: list) -> tuple[int, int] | None:
    """Where an INSERT's column list is (its ``(`` and ``)`` tokens), after its table and alias."""
    i = 3
    if i < len(toks) and toks[i].kind in ("id", "qid") and toks[i].word not in ("VALUES", "SELECT", "WITH"):
        i += 1                     # an alias
    if i < len(toks) and toks[i].text == "(" and i + 1 < len(toks) and toks[i + 1].word not in ("SELECT", "WITH"):
        return i, _closing(toks, i)
    return None


def _call(expr: str, scale: tuple[int | None, int]) -> str:
    p, s = scale
    return f"sluice_number({expr}, {'NULL' if p is None else p}, {s})"


def _column_name(tok: Any) -> str:
    return tok.text[1:-1].replace('""', '"').upper() if tok.kind == "qid" else tok.text.split(".")[-1].upper()


@lru_cache(maxsize=256)
def _insert(sql: str, scale_items: tuple, declared: tuple[str, ...]) -> str:
    """The INSERT ``sql`` rewritten for the columns of ``scale_items`` (``declared``: the
    table's columns in order, for an INSERT without a column list)."""
    toks = tokens(sql)
    scales = dict(scale_items)
    span = _column_list(toks)
    if span is not None:
        names = [_column_name(t) for t in toks[span[0] + 1:span[1]] if t.kind in ("id", "qid")]
        i = span[1] + 1
    else:
        names, i = list(declared), 3
        if i < len(toks) and toks[i].kind in ("id", "qid") and toks[i].word not in ("VALUES", "SELECT", "WITH"):
            i += 1
    if not any(n in scales for n in names) or i >= len(toks):
        return sql
    end = _source_end(toks, i)
    source = sql[toks[i].start:toks[end - 1].end]
    rows = ", ".join(f"c{k}" for k in range(len(names)))
    picked = ", ".join(_call(f"c{k}", scales[n]) if n in scales else f"c{k}" for k, n in enumerate(names))
    into = f"{sql[toks[0].start:toks[2].end]} ({', '.join(quoted(n) for n in names)})"     # (an alias dropped)
    return (f"WITH sluice_rows ({rows}) AS ({source}) {into} SELECT {picked} FROM sluice_rows"
            + sql[toks[end - 1].end:])


def _source_end(toks: list, i: int) -> int:
    """The token after an INSERT's source (its RETURNING, or the end)."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j].text
        depth += (t == "(") - (t == ")")
        if depth == 0 and toks[j].word in ("RETURNING", "RETURN"):
            return j
    return len(toks)


def _closing(toks: list, i: int) -> int:
    depth = 0
    for j in range(i, len(toks)):
        depth += (toks[j].text == "(") - (toks[j].text == ")")
        if depth == 0:
            return j
    return len(toks) - 1


@lru_cache(maxsize=256)
def _update(sql: str, scale_items: tuple) -> str:
    """The UPDATE ``sql`` with each ``col = expr`` of ``scale_items``' columns rounded."""
    toks = tokens(sql)
    scales = dict(scale_items)
    i = 2
    while i < len(toks) and toks[i].word != "SET":
        i += 1
    edits: list[tuple[int, int, str]] = []
    j, depth = i + 1, 0
    while j < len(toks):          # each top-level ``col = expr`` of the SET list
        if toks[j].kind in ("id", "qid") and j + 1 < len(toks) and toks[j + 1].text == "=" and depth == 0:
            name, first = _column_name(toks[j]), j + 2
            k = first
            while k < len(toks):
                t = toks[k]
                if depth == 0 and (t.text == "," or t.word in ("WHERE", "RETURNING", "RETURN")):
                    break
                depth += (t.text == "(") - (t.text == ")")
                k += 1
            if name in scales and k > first:
                edits.append((toks[first].start, toks[k - 1].end,
                              _call("(" + sql[toks[first].start:toks[k - 1].end] + ")", scales[name])))
            if k >= len(toks) or toks[k].text != ",":
                break
            j = k + 1
            continue
        if toks[j].text == "(" and depth == 0:      # a tuple assignment: left as it is
            j = _closing(toks, j) + 1
            while j < len(toks) and toks[j].text != "," and toks[j].word not in ("WHERE", "RETURNING"):
                if toks[j].text == "(":
                    j = _closing(toks, j)
                j += 1
            if j >= len(toks) or toks[j].text != ",":
                break
            j += 1
            continue
        break
    for start, end, new in reversed(edits):
        sql = sql[:start] + new + sql[end:]
    return sql
