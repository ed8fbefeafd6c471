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

__all__ = ["TableShape", "Ineligible", "Undescribed", "base_type", "array_literal", "set_statements", "lcr_statements",
           "SET_FORM_MIN", "SET_FORM_FEWEST", "SET_FORM_AVERAGE", "python_literal"]

# The fewest LCRs a transaction needs for the engine to apply it in the set form: below it
# the per-LCR statements cost the target less than unnest() does (bench/RESULTS.md, set15).
SET_FORM_MIN = 20
# The fewest LCRs of one table, operation and shape (in one phase) that go as one statement;
# fewer go as their per-LCR statements.
SET_FORM_FEWEST = 3
# The fewest LCRs per table and operation, on average over a transaction, for the set form:
# below it most sets are small and building them costs more Python than the target saves.
SET_FORM_AVERAGE = 16

_TYPMOD = re.compile(r"\(\d+(,\d+)?\)")


class Ineligible(Exception):
    """A change the set form does not take: the per-LCR path applies (or refuses) it."""


class Undescribed(Ineligible):
    """(``known_only``) a table the set form has not described yet: no answer now."""


def base_type(type_name: str) -> str:
    """A column's type without its length / precision: an explicit cast to varchar(20) or
    char(3) would cut a value the per-LCR INSERT refuses; the assignment to the column
    does what binding the value does."""
    return _TYPMOD.sub("", type_name)


def array_literal(values: Iterable[Any]) -> str:
    """A text[] literal of ``values`` (a value that is not text as its ``str``)."""
    return "{" + ",".join([_NULL if v is None else _element(v) for v in values]) + "}"


_NULL = "NULL"


def _element(v: Any) -> str:
    return '"' + (v if type(v) is str else str(v)).replace("\\", "\\\\").replace('"', '\\"') + '"'


class TableShape:
    """What a table looks like to the set form: its columns' types and its primary key,
    the columns the target computes (``generated``: never written, compared only as the
    key) and its identity columns GENERATED ALWAYS (``identity``: inserted OVERRIDING
    SYSTEM VALUE, never set by an UPDATE) -- :class:`~.target.Special` -- and the
    statements made for it: their text is the same for every transaction."""

    __slots__ = ("table", "types", "key", "columns", "bases", "made", "generated", "identity")

    def __init__(self, table: str, types: dict[str, str], key: list[str], column: Callable[[str], str],
                 special: Any = None) -> None:
        self.table, self.types, self.key = table, types, key
        self.columns = {c: column(c) for c in types}
        self.bases = {c: base_type(t) for c, t in types.items()}
        self.made: dict[tuple, tuple[str, list[tuple[int, str, int]]]] = {}
        self.generated: frozenset[str] = special.generated if special is not None else frozenset()
        self.identity: frozenset[str] = special.identity if special is not None else frozenset()

    def overriding(self, columns: Iterable[str]) -> str:
        """What an INSERT of ``columns`` says before its rows: OVERRIDING SYSTEM VALUE when
        one is an identity column GENERATED ALWAYS (the source's value kept)."""
        return " OVERRIDING SYSTEM VALUE" if self.identity.intersection(columns) else ""

    def settable(self, columns: Iterable[str]) -> list[str]:
        """Those of ``columns`` an UPDATE sets (not generated, not identity GENERATED ALWAYS)."""
        return [c for c in columns if c not in self.generated and c not in self.identity]

    def compared(self, column: str) -> bool:
        """Whether an old value of ``column`` is compared (a generated one only as the key)."""
        return column not in self.generated or column in self.key


# owner, name, command, old values, new values (INSERT: no old ones, DELETE: no new ones),
# and what the caller's ``single`` makes the change's own statement of (the LCR)
Change = tuple[str, str, str, dict, dict, Any]
Literal = Callable[[TableShape, str, list], str]
_OLD, _NEW = 3, 4


def _text_literal(shape: TableShape, column: str, values: list) -> str:
    return array_literal(values)


def set_statements(changes: Iterable[Change], shape_of: Callable[[str, str], TableShape],
                   literal: Literal = _text_literal, single: Callable[[Any], tuple[str, tuple]] | None = None,
                   fewest: int = 1) -> list[tuple[str, tuple, int]]:
    """The statements of ``changes`` (in source order; every UPDATE / DELETE with its key's
    old values) with the row count each must report.  ``literal(shape, column, values)``:
    the text[] literal of a column's values (:func:`array_literal`), raising
    :class:`Ineligible` for values its caller cannot send as text.  A set of fewer than
    ``fewest`` changes goes as their own statements, ``single(change[5])`` each (fewer rows
    than that cost the target more in unnest() than in one statement each)."""
    phase_of: dict[tuple, int] = {}
    groups: dict[tuple, list[Change]] = {}
    keys: dict[tuple[str, str], tuple[TableShape, str | None, list[str]]] = {}
    for change in changes:
        owner, name, cmd, old, new = change[:5]
        table = (owner, name)
        known = keys.get(table)
        if known is None:
            shape = shape_of(owner, name)
            known = keys[table] = (shape, shape.key[0] if len(shape.key) == 1 else None, shape.key)
        _shape, one, key = known
        # the rows it touches: its key's values (one column: the value), before and after
        if cmd == "INSERT":
            before = after = (table, new.get(one) if one is not None else tuple([new.get(c) for c in key]))
        elif one is not None:
            before = (table, old.get(one))
            after = (table, new[one]) if one in new else before
        else:
            before = (table, tuple([old.get(c) for c in key]))
            after = (table, tuple([new[c] if c in new else old.get(c) for c in key]))
        phase = phase_of.get(before, -1)
        if after != before:
            phase = max(phase, phase_of.get(after, -1))
            phase_of[after] = phase + 1
        phase_of[before] = phase = phase + 1
        what = (phase, table, cmd, tuple(new), tuple(old))
        members = groups.get(what)
        if members is None:
            members = groups[what] = []
        members.append(change)
    out: list[tuple[str, tuple, int]] = []
    joins = False
    for (_phase, table, cmd, new_cols, old_cols), members in sorted(groups.items(), key=lambda g: g[0][0]):
        if single is not None and len(members) < fewest:
            out += [(*single(m[5]), 1) for m in members]
            continue
        shape = keys[table][0]
        made = shape.made.get((cmd, new_cols, old_cols))
        if made is None:
            made = shape.made[(cmd, new_cols, old_cols)] = _statement(shape, cmd, new_cols, old_cols)
        sql, columns = made
        # a set's changes have the same columns in the same order: their values, by column
        olds = list(zip(*[m[_OLD].values() for m in members])) if old_cols else []
        news = list(zip(*[m[_NEW].values() for m in members])) if new_cols else []
        params = [literal(shape, c, olds[i] if side == _OLD else news[i]) for side, c, i in columns]
        if cmd != "INSERT" and not joins:
            joins = True
            out.insert(0, _BY_KEY)
        out.append((sql, tuple(params), len(members)))
    return out


# An UPDATE / DELETE of a set finds its rows by key, like the per-LCR statements: the
# planner, left alone, joins a small or unanalysed table by hash over a sequential scan
# (0.3 ms for 20 rows of a 1,200-row table instead of 20 index probes).  For the rest of
# the target transaction only (set_config's is_local): what it runs is the apply's.
_BY_KEY = ("SELECT set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)",
           (), 1)


def _arrays(shape: TableShape, columns: list[tuple[int, str, int]]) -> str:
    """The statement's arrays: one ``text[]`` parameter per column cast to the column's
    type.  A column that is an array itself is not the set form's: its values' text in a
    ``text[]`` cast to ``integer[][]`` is refused (every transaction into the table failed
    its set form first, then went LCR by LCR)."""
    if any(shape.bases[c].endswith("]") for _, c, _i in columns):
        raise Ineligible("an array column")
    return ", ".join(f"%s::text[]::{shape.bases[c]}[]" for _, c, _i in columns)


def _statement(shape: TableShape, cmd: str, new_cols: tuple,
               old_cols: tuple) -> tuple[str, list[tuple[int, str, int]]]:
    """A set of ``cmd`` changes' statement, and the (side, column, its position among the
    side's columns) of each of its arrays.  The target's generated columns are neither
    written nor compared (but as the key); an identity column GENERATED ALWAYS is inserted
    with its value, and an UPDATE leaves it as it is -- a row whose value would change
    falls short of the count: the per-LCR path then refuses it."""
    if cmd == "INSERT":
        written = [c for c in new_cols if c not in shape.generated]
        if not written:
            raise Ineligible("nothing to insert but what the target computes")
        columns = [(_NEW, c, new_cols.index(c)) for c in written]
        arrays = _arrays(shape, columns)
        cols = ", ".join(shape.columns[c] for c in written)
        return (f"INSERT INTO {shape.table} ({cols}){shape.overriding(written)} SELECT * FROM unnest({arrays})",
                columns)
    if any(c not in old_cols for c in shape.key) or (cmd == "UPDATE" and not new_cols):
        raise Ineligible(cmd)
    sets = shape.settable(new_cols) if cmd == "UPDATE" else []
    fixed = [c for c in new_cols if c in shape.identity] if cmd == "UPDATE" else []
    if cmd == "UPDATE" and not sets:
        raise Ineligible("nothing to set but what the target computes")
    columns = [(_OLD, c, i) for i, c in enumerate(old_cols) if shape.compared(c)] + \
        [(_NEW, c, new_cols.index(c)) for c in (*sets, *fixed)]
    arrays = _arrays(shape, columns)
    names = [f"{'o' if side == _OLD else 'n'}{i}" for side, _c, i in columns]
    source = f"unnest({arrays}) AS v({', '.join(names)})"
    where = " AND ".join([f"t.{shape.columns[c]} {'=' if c in shape.key else 'IS NOT DISTINCT FROM'} v.o{i}"
                          for side, c, i in columns if side == _OLD] +
                         [f"t.{shape.columns[c]} IS NOT DISTINCT FROM v.n{new_cols.index(c)}" for c in fixed])
    if cmd == "DELETE":
        return f"DELETE FROM {shape.table} t USING {source} WHERE {where}", columns
    assignments = ", ".join(f"{shape.columns[c]} = v.n{new_cols.index(c)}" for c in sets)
    return f"UPDATE {shape.table} t SET {assignments} FROM {source} WHERE {where}", columns


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


_UNQUOTED = frozenset({int, Decimal, float})     # their text has no space, comma, quote or brace


def python_literal(shape: TableShape, column: str, values: list) -> str:
    """:data:`Literal` for Python values (:func:`lcr_statements`)."""
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
    if kinds <= _UNQUOTED:
        return "{" + ",".join([_NULL if v is None else str(v) for v in values]) + "}"
    return array_literal(values)


def lcr_statements(engine: Any, txns: list[Any], fewest: int = 1, known_only: bool = False,
                   average: int = 1) -> list[tuple[str, tuple, int]]:
    """The set-form statements of the row LCRs of ``txns`` (the engine's SourceTxn, items
    in memory, each already found plain: row LCRs, no DML handler), LCRs at or below their
    instantiation SCN left out as the per-LCR path leaves them; sets of fewer than ``fewest``
    LCRs as their per-LCR statements.  :raises Ineligible: (or the per-LCR path's
    ApplyError) the per-LCR path must take them (also when there are fewer than ``average``
    LCRs per table and operation).  ``known_only``: as :meth:`ApplyEngine._statement`'s."""
    settings, target, cache = engine.settings, engine.target, engine._shapes
    if target.dialect != "postgresql":
        raise Ineligible(target.dialect)

    def shape_of(owner: str, name: str) -> TableShape:
        found = cache.get(("set", owner, name), False)
        if found is False:
            if known_only:      # (the target is busy: no dictionary query now)
                raise Undescribed(f"{owner}.{name}")
            found = None
            _cols, types, pk = target.describe(owner, name)
            chosen = settings.key_columns.get((owner, name))
            if pk and (chosen is None or chosen == pk) \
                    and all(target.converter(ty) is None for ty in types.values()):
                found = TableShape(target.table(owner, name), types, pk, target.column,
                                   target.special(owner, name))
            cache[("set", owner, name)] = found
        if found is None:
            raise Ineligible(f"{owner}.{name}")
        return found

    if average > 1:
        sets = {(item.message.get_object_name(), item.message.get_command_type())
                for txn in txns for item in txn.items}
        if sum(len(txn.items) for txn in txns) < average * len(sets):
            raise Ineligible("small sets")
    changes: list[Change] = []
    skipped = engine._skipped
    for txn in txns:
        passed: set[tuple] = set()     # (table, commit SCN) found above its instantiation SCN
        for i, item in enumerate(txn.items):
            lcr = item.message
            owner, name, cmd = lcr.get_object_owner(), lcr.get_object_name(), lcr.get_command_type()
            seen = (owner, name, lcr.get_source_database_name(), lcr.get_commit_scn())
            if seen not in passed:
                if skipped(lcr, i):
                    continue
                if seen[3] is not None:
                    passed.add(seen)
            types = shape_of(owner, name).types.keys()
            old, new = lcr.plain_values()
            if cmd == "INSERT":
                old, new = {}, dict(new)
            elif cmd == "UPDATE":
                old, new = dict(old), dict(new)
            elif cmd == "DELETE":
                old, new = dict(old), {}
            else:
                raise Ineligible(cmd)
            if not (old.keys() <= types and new.keys() <= types):
                raise Ineligible(f"{owner}.{name}: a column it does not have")
            changes.append((owner, name, cmd, old, new, (lcr, i)))
    return set_statements(changes, shape_of, python_literal,
                          lambda ref: engine._statement(*ref, known_only=known_only), fewest)
