"""The ``SYS.RE$…`` types of the rules engine, as Python values.

``DBMS_RULE_ADM`` and ``DBMS_RULE`` take and return these (Oracle "Rule
TYPEs"); the statement interpreter builds them through
``Connection.construct`` (:func:`construct_rule_type`), so a seed block such as
``vt := SYS.RE$VARIABLE_TYPE_LIST(SYS.RE$VARIABLE_TYPE('DML', …))`` yields a
list of :class:`VariableType`.  The ``…_LIST`` and ``…_ARRAY`` collection types
are plain Python lists.  Attribute names are Oracle's, lower case; the objects
are mutable because PL/SQL assigns to their attributes.

:class:`NVList` (``SYS.RE$NV_LIST``) is the action context of a rule and the
event context of an evaluation: name-value pairs whose values are
:class:`~sluice.rules.engine.anydata.AnyData`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ...errors import InterfaceError, ora
from .anydata import AnyData

__all__ = [
    "VariableType", "TableAlias", "NVNode", "NVList", "RuleHit", "TableValue", "ColumnValue",
    "VariableValue", "AttributeValue", "construct_rule_type", "is_rule_type", "type_name_of",
]


@dataclass(slots=True)
class VariableType:
    """``SYS.RE$VARIABLE_TYPE``: one variable of an evaluation context.

    A variable with a ``variable_value_function`` is *implicit*: the rules
    engine asks the function for its value.  ``variable_method_function`` is
    an optimisation hint in Oracle (it must return what the member would), so
    Sluice records it and calls the members themselves.
    """

    variable_name: str | None
    variable_type: str
    variable_value_function: str | None = None
    variable_method_function: str | None = None


@dataclass(slots=True)
class TableAlias:
    """``SYS.RE$TABLE_ALIAS``: ``tab`` in ``tab.col = 5`` stands for ``table_name``."""

    table_alias: str
    table_name: str


@dataclass(slots=True)
class NVNode:
    """``SYS.RE$NV_NODE``: one name-value pair."""

    nvn_name: str
    nvn_value: Any


class NVList:
    """``SYS.RE$NV_LIST``: an ordered list of uniquely named ANYDATA values."""

    __slots__ = ("_pairs",)

    def __init__(self, actx_list: Iterable[NVNode] | Mapping[str, Any] | None = None) -> None:
        self._pairs: dict[str, AnyData] = {}
        if isinstance(actx_list, Mapping):
            actx_list = [NVNode(k, v) for k, v in actx_list.items()]
        for node in actx_list or ():
            self.add_pair(node.nvn_name, node.nvn_value)

    def add_pair(self, name: str, value: Any) -> None:
        """Add ``name``; ORA-24160 when the list already has it."""
        if not isinstance(name, str) or not name:
            raise InterfaceError("a name-value pair needs a non-empty name")
        if name in self._pairs:
            raise ora(24160, name)
        self._pairs[name] = AnyData.of(value)

    def remove_pair(self, name: str) -> None:
        """Remove ``name``; ORA-24161 when the list does not have it (Oracle's message
        catalogue: "name … does not exist in the name value pair list", the partner of
        ADD_PAIR's ORA-24160)."""
        if self._pairs.pop(name, None) is None:
            raise ora(24161, name)

    def get_value(self, name: str) -> AnyData | None:
        """The ANYDATA stored under ``name``, NULL when there is none."""
        return self._pairs.get(name)

    def get_all_names(self) -> list[str]:
        """``SYS.RE$NAME_ARRAY`` of every name, in the order they were added."""
        return list(self._pairs)

    @property
    def actx_list(self) -> list[NVNode]:
        return [NVNode(n, v) for n, v in self._pairs.items()]

    def items(self) -> list[tuple[str, AnyData]]:
        return list(self._pairs.items())

    def __len__(self) -> int:
        return len(self._pairs)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, NVList):
            return self._pairs == other._pairs
        return NotImplemented

    def __repr__(self) -> str:
        return f"NVList({ {n: v for n, v in self._pairs.items()} !r})"


@dataclass(slots=True)
class RuleHit:
    """``SYS.RE$RULE_HIT``: a rule that evaluated TRUE (or MAYBE), with its action context."""

    rule_name: str
    rule_action_context: NVList | None = None


@dataclass(slots=True)
class TableValue:
    """``SYS.RE$TABLE_VALUE``.  Sluice has no tables outside its queues, so
    ``table_rowid`` must be the row itself: a mapping of column name to value."""

    table_alias: str
    table_rowid: Any


@dataclass(slots=True)
class ColumnValue:
    """``SYS.RE$COLUMN_VALUE``: the value of one column of an aliased table."""

    table_alias: str
    column_name: str
    column_data: Any


@dataclass(slots=True)
class VariableValue:
    """``SYS.RE$VARIABLE_VALUE``: the value of an explicit variable."""

    variable_name: str
    variable_data: Any


@dataclass(slots=True)
class AttributeValue:
    """``SYS.RE$ATTRIBUTE_VALUE``: one attribute of a variable (``x.a``) whose
    whole value the client does not send."""

    variable_name: str
    attribute_name: str
    attribute_data: Any


_OBJECTS: dict[str, type] = {
    "RE$VARIABLE_TYPE": VariableType, "RE$TABLE_ALIAS": TableAlias, "RE$NV_NODE": NVNode,
    "RE$NV_LIST": NVList, "RE$RULE_HIT": RuleHit, "RE$TABLE_VALUE": TableValue,
    "RE$COLUMN_VALUE": ColumnValue, "RE$VARIABLE_VALUE": VariableValue,
    "RE$ATTRIBUTE_VALUE": AttributeValue,
}
_COLLECTIONS = frozenset({
    "RE$VARIABLE_TYPE_LIST", "RE$TABLE_ALIAS_LIST", "RE$NV_ARRAY", "RE$NAME_ARRAY",
    "RE$RULE_HIT_LIST", "RE$TABLE_VALUE_LIST", "RE$COLUMN_VALUE_LIST",
    "RE$VARIABLE_VALUE_LIST", "RE$ATTRIBUTE_VALUE_LIST",
})
_CONVERT = {
    "CONVERTNUMBER": AnyData.convert_number, "CONVERTVARCHAR2": AnyData.convert_varchar2,
    "CONVERTCHAR": AnyData.convert_char, "CONVERTDATE": AnyData.convert_date,
    "CONVERTTIMESTAMP": AnyData.convert_timestamp, "CONVERTRAW": AnyData.convert_raw,
    "CONVERTBFLOAT": AnyData.convert_bfloat, "CONVERTBDOUBLE": AnyData.convert_bdouble,
    "CONVERTOBJECT": AnyData.convert_object,
}


def _short(type_name: str) -> str:
    return type_name.upper().removeprefix("SYS.")


def is_rule_type(type_name: str) -> bool:
    """True for ``SYS.RE$…`` types and the ``ANYDATA.Convert…`` constructors."""
    short = _short(type_name)
    return short in _OBJECTS or short in _COLLECTIONS or short.startswith("ANYDATA.")


def construct_rule_type(type_name: str, args: list) -> Any:
    """``SYS.RE$VARIABLE_TYPE('DML', …)`` and friends; TypeError on a wrong argument
    count (the interpreter reports it as PLS-00306)."""
    short = _short(type_name)
    if short in _COLLECTIONS:
        return list(args)
    if short.startswith("ANYDATA."):
        convert = _CONVERT.get(short[len("ANYDATA."):])
        if convert is None:
            raise ora(904, f'"{type_name}"')
        return convert(*args)
    cls = _OBJECTS.get(short)
    if cls is None:
        raise ora(4043, type_name)
    return cls(*args)


def type_name_of(value: Any) -> str | None:
    """The Oracle type of an object value: ``SYS.LCR$_ROW_RECORD``, ``'SCOTT.T'``, …"""
    oracle_type = getattr(value, "oracle_type", None)
    if isinstance(oracle_type, str):
        return oracle_type
    objtype = getattr(value, "type", None)
    return getattr(objtype, "qualified_name", None)
