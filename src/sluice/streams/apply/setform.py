"""The set form: the row LCRs of whole source transactions applied to a PostgreSQL target as
a few statements per table, operation and shape instead of one per LCR.

A statement takes its rows from arrays — ``INSERT … SELECT FROM unnest(arrays)``,
``UPDATE … FROM unnest(…)``, ``DELETE … USING unnest(…)`` — one array parameter per
column, a ``text[]`` literal cast to the column's type.  Statements may run in another
order than the LCRs only where that cannot change the outcome: LCRs are put in *phases* so
that a row (table and key) changed twice goes into two phases, applied one after the other;
within a phase no two LCRs touch the same row.

Every statement comes with the row count it must report (its LCRs: an UPDATE / DELETE finds
its row by the primary key and compares every other old value the LCR carries, NULL for
NULL).  Whoever runs them rolls back on any other count or an error and applies the
transactions LCR by LCR, which finds the conflict, resolves it or reports it: the set form
only ever applies what the per-LCR path would have applied without a conflict.

Two users: the apply engine (:func:`lcr_statements`, from LCR objects, :mod:`.engine`) and
the Spark apply sink (``sluice.pipeline.setapply``, from rows' text columns).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Callable, Iterable

__all__ = ["TableShape", "Ineligible", "base_type", "array_literal", "set_statements", "lcr_statements",
           "SET_FORM_MIN"]

# The fewest LCRs a transaction needs for the engine to apply it in the set form: below it
# the per-LCR statements cost the target less than unnest() does (bench/RESULTS.md, set15).
SET_FORM_MIN = 20

_TYPMOD = re.compile(r"\(\d+(,\d+)?\)")


class Ineligible(Exception):
    """A change the set form does not take: the per-LCR path applies (or refuses) it."""


def base_type(type_name: str) -> str:
    """A column's type without its length / precision: an explicit cast to varchar(20) or
    char(3) would cut a value the per-LCR INSERT refuses; the assignment to the column
    does what binding the value does."""
    return _TYPMOD.sub("", type_name)


def array_literal(values: Iterable[Any]) -> str:
    """A text[] literal of ``values`` (a value that is not text as its ``str``)."""
    return "{" + ",".join("NULL" if v is None else
                          '"' + (v if type(v) is str else str(v)).replace("\\", "\\\\").replace('"', '\\"') + '"'
                          for v in values) + "}"


class TableShape:
    """What a table looks like to the set form: its columns' types and its primary key."""

    __slots__ = ("table", "types", "key", "columns", "bases")

    def __init__(self, table: str, types: dict[str, str], key: list[str], column: Callable[[str], str]) -> None:
        self.table, self.types, self.key = table, types, key
        self.columns = {c: column(c) for c in types}
        self.bases = {c: base_type(t) for c, t in types.items()}


Change = tuple[str, str, str, dict, dict]     # owner, name, command, old values, new values
Check = Callable[[TableShape, str, list], None]


def set_statements(changes: Iterable[Change], shape_of: Callable[[str, str], TableShape],
                   check: Check | None = None) -> list[tuple[str, tuple, int]]:
    """The statements of ``changes`` (in source order; INSERT without old values, DELETE
    without new ones; every UPDATE / DELETE with its key's old values) with the row count
    each must report.  ``check(shape, column, values)`` raises :class:`Ineligible` for
    values its caller cannot send as text."""
    phase_of: dict[tuple, int] = {}
    groups: dict[tuple, list[tuple[dict, dict]]] = {}
    for owner, name, cmd, old, new in changes:
        key = shape_of(owner, name).key
        if cmd == "INSERT":
            keys = [(owner, name, tuple([new.get(c) for c in key]))]
        else:
            after = {**old, **new} if new else old
            keys = [(owner, name, tuple([old.get(c) for c in key])),
                    (owner, name, tuple([after.get(c) for c in key]))]
        phase = 1 + max([phase_of.get(k, -1) for k in keys])
        for k in keys:
            phase_of[k] = phase
        what = (phase, owner, name, cmd, tuple(new), tuple(old))
        members = groups.get(what)
        if members is None:
            members = groups[what] = []
        members.append((old, new))
    return [_statement(shape_of(owner, name), cmd, new_cols, old_cols, members, check)
            for (_phase, owner, name, cmd, new_cols, old_cols), members
            in sorted(groups.items(), key=lambda g: g[0][0])]


def _statement(shape: TableShape, cmd: str, new_cols: tuple, old_cols: tuple,
               members: list[tuple[dict, dict]], check: Check | None) -> tuple[str, tuple, int]:
    arrays, params, names = [], [], []

    def column(side: int, c: str, alias: str) -> None:
        values = [m[side].get(c) for m in members]
        if check is not None:
            check(shape, c, values)
        arrays.append(f"%s::text[]::{shape.bases[c]}[]")
        params.append(array_literal(values))
        names.append(alias)

    if cmd == "INSERT":
        for i, c in enumerate(new_cols):
            column(1, c, f"n{i}")
        cols = ", ".join(shape.columns[c] for c in new_cols)
        sql = f"INSERT INTO {shape.table} ({cols}) SELECT * FROM unnest({', '.join(arrays)})"
        return sql, tuple(params), len(members)
    if any(c not in old_cols for c in shape.key) or (cmd == "UPDATE" and not new_cols):
        raise Ineligible(cmd)
    conds = []
    for i, c in enumerate(old_cols):
        column(0, c, f"o{i}")
        op = "=" if c in shape.key else "IS NOT DISTINCT FROM"
        conds.append(f"t.{shape.columns[c]} {op} v.o{i}")
    for i, c in enumerate(new_cols):
        column(1, c, f"n{i}")
    source = f"unnest({', '.join(arrays)}) AS v({', '.join(names)})"
    where = " AND ".join(conds)
    if cmd == "DELETE":
        sql = f"DELETE FROM {shape.table} t USING {source} WHERE {where}"
    else:
        sets = ", ".join(f"{shape.columns[c]} = v.n{i}" for i, c in enumerate(new_cols))
        sql = f"UPDATE {shape.table} t SET {sets} FROM {source} WHERE {where}"
    return sql, tuple(params), len(members)


# -- the engine's side: LCR objects' Python values -----------------------------------------
# Which Python values go as text into which column types (their base types).  The per-LCR
# path binds them (psycopg: str as an untyped literal, int as int2..8 / numeric, Decimal as
# numeric, float as float8, date / datetime as date / timestamp[tz]) and the server converts
# them to the column's type; the text of the value cast to the column's type must give the
# same value, or fail (the per-LCR path then does what it does).  A float into a numeric
# column would not (float8 -> numeric keeps 15 digits, the text all of them): not taken.
_INTEGERS = frozenset({"smallint", "integer", "bigint"})
_TIMESTAMPS = frozenset({"timestamp without time zone", "timestamp with time zone"})
_VALUES: dict[type, frozenset[str] | None] = {
    str: None,                   # any: the untyped literal is the column type's input too
    int: _INTEGERS | {"numeric", "double precision"},
    Decimal: _INTEGERS | {"numeric", "double precision"},
    float: frozenset({"double precision"}),
    date: _TIMESTAMPS | {"date"},
    datetime: _TIMESTAMPS | {"date"},     # (an Oracle DATE: the time cut off both ways)
}
# A key column's values also decide phases (Python equality): only kinds whose Python
# equality is the column type's ('05' and '5' are one bigint, two str).
_KEYS: dict[type, frozenset[str]] = {
    str: frozenset({"text", "character varying"}),
    int: _INTEGERS | {"numeric"},
    Decimal: frozenset({"numeric"}),
    date: frozenset({"date"}),
    datetime: frozenset({"timestamp without time zone"}),
}
_NONE = type(None)


def python_values(shape: TableShape, column: str, values: list) -> None:
    """:data:`Check` for Python values (:func:`lcr_statements`)."""
    base = shape.bases[column]
    kinds = set(map(type, values))
    kinds.discard(_NONE)
    table = _KEYS if column in shape.key else _VALUES
    for kind in kinds:
        if kind not in table:
            raise Ineligible(kind.__name__)
        takes = table[kind]
        if takes is not None and base not in takes:
            raise Ineligible(f"{kind.__name__} into {base}")
        if kind is datetime and base != "timestamp with time zone" \
                and any(v is not None and v.tzinfo is not None for v in values):
            raise Ineligible(f"an aware datetime into {base}")     # (the text's offset ignored)


def lcr_statements(engine: Any, txns: Iterable[Any]) -> list[tuple[str, tuple, int]]:
    """The set-form statements of the row LCRs of ``txns`` (the engine's SourceTxn, items
    in memory, each already found plain: row LCRs, no DML handler), LCRs at or below their
    instantiation SCN left out as the per-LCR path leaves them.  :raises Ineligible: (or the
    per-LCR path's ApplyError) the per-LCR path must take them."""
    settings, target, cache = engine.settings, engine.target, engine._shapes
    if target.dialect != "postgresql":
        raise Ineligible(target.dialect)

    def shape_of(owner: str, name: str) -> TableShape:
        found = cache.get(("set", owner, name), False)
        if found is False:
            found = None
            _cols, types, pk = target.describe(owner, name)
            chosen = settings.key_columns.get((owner, name))
            if pk and (chosen is None or chosen == pk) \
                    and all(target.converter(ty) is None for ty in types.values()):
                found = TableShape(target.table(owner, name), types, pk, target.column)
            cache[("set", owner, name)] = found
        if found is None:
            raise Ineligible(f"{owner}.{name}")
        return found

    changes: list[Change] = []
    skipped = engine._skipped
    for txn in txns:
        for i, item in enumerate(txn.items):
            lcr = item.message
            if skipped(lcr, i):
                continue
            owner, name, cmd = lcr.get_object_owner(), lcr.get_object_name(), lcr.get_command_type()
            shape = shape_of(owner, name)
            old, new = lcr.plain_values()
            old = dict(old) if cmd != "INSERT" else {}
            new = dict(new) if cmd != "DELETE" else {}
            if cmd not in ("INSERT", "UPDATE", "DELETE"):
                raise Ineligible(cmd)
            types = shape.types
            for c in old:
                if c not in types:
                    raise Ineligible(c)
            for c in new:
                if c not in types:
                    raise Ineligible(c)
            changes.append((owner, name, cmd, old, new))
    return set_statements(changes, shape_of, python_values)
