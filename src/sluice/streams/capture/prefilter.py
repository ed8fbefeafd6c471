"""Prefiltering: a capture's rule verdicts remembered by an LCR's identity.

Oracle's capture process prefilters changes on what identifies them before it builds
full LCRs (V$STREAMS_CAPTURE's TOTAL_PREFILTER_* columns).  Sluice does the same when
every rule of the capture's rule sets reads nothing of an LCR but its owner, object name,
command type, tag, source database and compatibility — as the system-created rules of
seed 000 ("System-Created Rules": global, schema and table rules) do — and is evaluated
with the Streams evaluation context: then the verdict of :func:`sluice.streams.
evaluate_rule_sets` is a function of those few values, computed once per combination
and looked up for every other change.  Rules that read column values (subset rules,
``get_value``), user functions or another evaluation context turn it off.
"""

from __future__ import annotations

from typing import Any, Callable

from ...errors import Error
from ...rules import parse_condition, walk
from ..lcr import RowLCR

__all__ = ["Prefilter", "key_only"]

STREAMS_CONTEXT = "SYS.STREAMS$_EVALUATION_CONTEXT"
KEY_MEMBERS = frozenset({"GET_OBJECT_OWNER", "GET_OBJECT_NAME", "GET_COMMAND_TYPE", "IS_NULL_TAG",
                         "GET_TAG", "GET_SOURCE_DATABASE_NAME", "GET_COMPATIBLE"})
_PURE_FUNCTIONS = frozenset({"UPPER", "LOWER", "SUBSTR", "NVL", "LENGTH", "TRIM", "LTRIM", "RTRIM",
                             "HEXTORAW", "RAWTOHEX", "INSTR", "REPLACE", "CONCAT", "COALESCE"})
_LOGIC = frozenset({"Literal", "Compare", "And", "Or", "Not", "IsNull", "Like", "InList", "Between",
                    "Unary", "Binary"})
_LIMIT = 100_000          # remembered combinations before the memory starts again


def key_only(condition: str) -> bool:
    """Does ``condition`` read only an LCR's identifying members (and pure functions)?"""
    try:
        tree = parse_condition(condition)
    except Error:
        return False
    member_objects: set[int] = set()
    for node in walk(tree):
        kind = type(node).__name__
        if kind == "MethodCall":
            if type(node.obj).__name__ != "Bind" or node.name not in KEY_MEMBERS or node.args:
                return False
            member_objects.add(id(node.obj))
        elif kind == "Bind":
            if id(node) not in member_objects:
                return False
        elif kind in ("FuncCall", "Identifier"):   # DBMS_STREAMS.COMPATIBLE_10_2 is either
            name = ".".join(node.name if kind == "FuncCall" else node.path).upper()
            if not name.startswith("DBMS_STREAMS.COMPATIBLE_") and \
                    (kind == "Identifier" or name not in _PURE_FUNCTIONS):
                return False
        elif kind not in _LOGIC:
            return False
    return True


class Prefilter:
    """The verdicts of one capture's rule sets by (command, owner, object, tag, source
    database, compatibility) of row LCRs, when its rules allow (:attr:`usable`)."""

    def __init__(self, rules: list[tuple[str, str | None]], verdict: Callable[[Any], bool]) -> None:
        """``rules``: (condition, evaluation context) of every rule of the capture's rule
        sets; ``verdict``: the full evaluation."""
        self.usable = all(ctx == STREAMS_CONTEXT and key_only(cond) for cond, ctx in rules)
        # GET_COMPATIBLE depends on the column types: in the key only if a rule asks for it
        self._compatible = any("GET_COMPATIBLE" in cond.upper() for cond, _ in rules)
        self._verdict = verdict
        self._known: dict[tuple, bool] = {}
        self.kept = self.discarded = 0

    def __call__(self, lcr: Any) -> bool:
        if not self.usable or not isinstance(lcr, RowLCR):
            return self._verdict(lcr)
        key = (lcr._command_type, lcr._object_owner, lcr._object_name, lcr._tag,
               lcr._source_database_name, lcr.get_compatible() if self._compatible else None)
        known = self._known.get(key)
        if known is None:
            if len(self._known) >= _LIMIT:
                self._known.clear()
            known = self._known[key] = self._verdict(lcr)
        if known:
            self.kept += 1
        else:
            self.discarded += 1
        return known
