"""The differential test's world: every corpus context and every test LCR as rows of one table.

Each condition runs against every row, in Python (the reference: the corpus
dicts and sluice.streams.lcr objects through ``DictResolver``) and in SQLite,
PostgreSQL and Spark (the same data as typed columns).  A row that lacks a
value has NULL there, in Python too, so the rows differ only in data.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from sluice.errors import DatabaseError
from sluice.rules import DictResolver, compile_condition
from sluice.rules.compile.typed.lcrschema import LCR_COLUMNS, LcrResolver, lcr_row
from sluice.rules.compile.typed.resolvers import MappingResolver
from sluice.rules.compile.typed.ir import Column


def load_corpus():
    path = Path(__file__).with_name("rules_corpus.py")
    spec = importlib.util.spec_from_file_location("sluice_rules_corpus", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


corpus = load_corpus()


def build_lcr(kind: str, args: dict):
    """A sluice.streams.lcr object: what the Python compiler evaluates."""
    from sluice.streams.lcr import DDLLCR, RowLCR

    return (RowLCR if kind == "ROW" else DDLLCR).construct(**args)


def _kind(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (bool, int, float, Decimal)):
        return "NUMBER"
    if isinstance(value, str):
        return "CHAR"
    if isinstance(value, (date, datetime)):
        return "DATE"
    if isinstance(value, bytes):
        return "RAW"
    raise TypeError(value)


@dataclass
class Spec:
    """One context column: the path it answers to, its column name, kind and values."""

    path: tuple[str, ...]
    column: str
    kind: str
    values: list[Any]  # per row

    @property
    def spark_type(self) -> str:
        if self.kind == "NUMBER":
            present = [v for v in self.values if v is not None]
            if any(isinstance(v, float) for v in present):
                return "double"
            if any(isinstance(v, Decimal) or abs(v) >= 2**63 for v in present):
                return "decimal(38,10)"
            return "bigint"
        return {"CHAR": "string", "DATE": "timestamp_ntz", "RAW": "binary"}[self.kind]


def _member(value: Any, name: str) -> Any:
    if value is None:
        return None
    return value.get(name) if isinstance(value, dict) else getattr(value, name)


class World:
    def __init__(self) -> None:
        overrides = []
        for case in corpus.CASES:
            if len(case) > 2 and case[2] not in overrides:
                overrides.append(case[2])
        contexts = [dict(corpus.CONTEXT)] + [{**corpus.CONTEXT, **o} for o in overrides]
        contexts.append({**corpus.CONTEXT, **corpus.MESSAGE_VARIABLES})
        self.case_row = {repr(o): i + 1 for i, o in enumerate(overrides)}
        keys = list(dict.fromkeys(k for c in contexts for k in c))
        self.lcrs = [build_lcr(kind, args) for kind, args in corpus.LCR_ROWS]
        self.lcr_rows = [lcr_row(lcr) for lcr in self.lcrs]
        n = len(contexts) + len(self.lcr_rows)
        self.ctx_rows = [{k: c.get(k) for k in keys} for c in contexts]
        self.ctx_rows += [{k: None for k in keys} for _ in self.lcr_rows]
        self.lcr_data = [None] * len(contexts) + list(self.lcr_rows)
        objects = [None] * len(contexts) + self.lcrs
        self.specs: list[Spec] = []
        self.open_binds: list[str] = []
        for key in keys:
            sample = next((r[key] for r in self.ctx_rows if r[key] is not None), None)
            if isinstance(sample, (dict, SimpleNamespace)):
                members = list(dict.fromkeys(m for r in self.ctx_rows if r[key] is not None
                                             for m in (r[key] if isinstance(r[key], dict) else vars(r[key]))))
                if isinstance(sample, dict):
                    self.open_binds.append(key)
                for m in members:
                    self._add((key, m), [_member(r[key], m) for r in self.ctx_rows])
            else:
                self._add((key,), [r[key] for r in self.ctx_rows])
        for i, row in enumerate(self.ctx_rows):
            lcr, obj = self.lcr_data[i], objects[i]
            row["DML"] = obj if lcr and lcr["lcr_kind"] == "ROW" else None
            row["DDL"] = obj if lcr and lcr["lcr_kind"] == "DDL" else None
            row["LCR"] = obj
        self.size = n

    def _add(self, path: tuple[str, ...], values: list[Any]) -> None:
        kind = next((_kind(v) for v in values if v is not None), None)
        kind = kind or corpus.NULL_KINDS.get(".".join(path), "CHAR")
        self.specs.append(Spec(path, f"k{len(self.specs)}", kind, values))

    def resolver(self) -> LcrResolver:
        names: dict[str, Any] = {}
        for spec in self.specs:
            dotted = ".".join(spec.path).upper()
            names[dotted] = names[":" + dotted] = Column(spec.kind, spec.column)
        return LcrResolver(others=MappingResolver(names, open_binds=tuple(self.open_binds)))

    def row_of_case(self, case: tuple) -> int:
        return self.case_row[repr(case[2])] if len(case) > 2 else 0

    # --- the Python reference ---------------------------------------------------------

    def python(self, text: str) -> Outcome:
        try:
            rule = compile_condition(text, DictResolver())
        except DatabaseError as e:
            return Outcome(compile_error=e.code)
        values = []
        for row in self.ctx_rows:
            try:
                values.append(rule(row))
            except DatabaseError as e:
                values.append(Raised(e.code))
        return Outcome(values=values)

    # --- table contents per target ----------------------------------------------------

    def columns(self) -> list[tuple[str, str]]:
        """(column, kind) of every world column, context columns then LCR columns."""
        return [(s.column, s.kind) for s in self.specs] + [(c, k) for c, (k, _, _) in LCR_COLUMNS.items()]

    def rows(self, convert) -> list[tuple]:
        """Every row as a tuple, each value passed through ``convert(value, kind)``."""
        out = []
        for i in range(self.size):
            values = [convert(s.values[i], s.kind) for s in self.specs]
            lcr = self.lcr_data[i] or {}
            values += [convert(lcr.get(c), k) for c, (k, _, _) in LCR_COLUMNS.items()]
            out.append((i, *values))
        return out


@dataclass(frozen=True)
class Raised:
    code: int


@dataclass
class Outcome:
    values: list[Any] | None = None  # per row: True / False / None / Raised
    compile_error: int | None = None
    not_compilable: str | None = None


def as_json(value: Any, kind: str) -> Any:
    return json.dumps(value) if kind == "MAP" and value is not None else value


def agree(python: Outcome, target: Outcome) -> str | None:
    """None when ``target`` matches the reference, else what differs."""
    if target.not_compilable:
        return f"not compilable: {target.not_compilable}"
    if python.compile_error is not None:
        if target.compile_error != python.compile_error:
            return f"Python refuses at compile time (ORA-{python.compile_error:05d}), target: {target}"
        return None
    if target.compile_error is not None:
        if Raised(target.compile_error) not in python.values:
            return f"target refuses at compile time (ORA-{target.compile_error:05d}), Python: {python.values}"
        return None
    wrong = []
    for i, (want, got) in enumerate(zip(python.values, target.values)):
        expected = None if isinstance(want, Raised) else want
        if got is not expected:
            wrong.append(f"row {i}: Python {want!r}, target {got!r}")
    return "; ".join(wrong) or None
