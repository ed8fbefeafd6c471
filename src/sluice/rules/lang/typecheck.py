"""Check a rule condition against its evaluation context before anything is stored.

``DBMS_RULE_ADM.CREATE_RULE`` (and ``ADD_RULE``, ``ALTER_RULE``) must refuse a
condition that can never work: a variable the evaluation context does not
declare, a member the variable's type does not have, a member called with the
wrong number of arguments, or operands whose datatypes cannot meet.  The
check infers a static type for every value of the tree:

* ``'NUMBER'``, ``'CHAR'``, ``'DATE'``, ``'BINARY'`` — scalar families, as in
  :func:`sluice.sqlfunctions.kind_of`;
* ``'SYS.ANYDATA'``, ``'SYS.LCR$_ROW_RECORD'``, ``'SYS.LCR$_DDL_RECORD'`` — the
  Oracle-supplied types whose members are listed in :data:`MEMBERS`;
* a :class:`~sluice.objtypes.DbObjectType` — a user object type (attributes);
* ``None`` — not known statically (a table column, NVL, …): not checked.

Errors are Oracle's: ORA-00904 unknown name, ORA-00918 ambiguous column,
ORA-00932 inconsistent datatypes, ORA-00938/00939 argument count, and
ORA-01722 / ORA-01861 / ORA-01465 for a literal that cannot convert.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ...errors import ora
from ...sqlfunctions import FUNCTIONS, NILADIC, hextoraw, to_date, to_number
from .ast import (And, Attribute, Between, Bind, Binary, Compare, Exists, Expr, FuncCall,
                  Identifier, InList, IsNull, Like, Literal, MethodCall, Not, Or, Unary)

__all__ = ["MEMBERS", "SCALARS", "check_condition", "static_type_of_datatype"]

SCALARS = frozenset({"NUMBER", "CHAR", "DATE", "BINARY"})

_LCR_COMMON = {
    "GET_COMMAND_TYPE": (0, 0, "CHAR"), "GET_OBJECT_OWNER": (0, 0, "CHAR"),
    "GET_OBJECT_NAME": (0, 0, "CHAR"), "GET_SOURCE_DATABASE_NAME": (0, 0, "CHAR"),
    "GET_TAG": (0, 0, "BINARY"), "IS_NULL_TAG": (0, 0, "CHAR"),
    "GET_TRANSACTION_ID": (0, 0, "CHAR"), "GET_SCN": (0, 0, "NUMBER"),
    "GET_COMMIT_SCN": (0, 0, "NUMBER"), "GET_SOURCE_TIME": (0, 0, "DATE"),
    "GET_COMPATIBLE": (0, 0, "NUMBER"), "GET_EXTRA_ATTRIBUTE": (1, 1, "SYS.ANYDATA"),
}
# member -> (min args, max args, static result type): the members a condition may call
MEMBERS: dict[str, dict[str, tuple[int, int, str]]] = {
    "SYS.LCR$_ROW_RECORD": {
        **_LCR_COMMON, "GET_VALUE": (2, 3, "SYS.ANYDATA"), "GET_VALUES": (1, 2, "COLLECTION"),
        "GET_LOB_INFORMATION": (2, 3, "NUMBER"), "GET_LONG_INFORMATION": (2, 3, "NUMBER"),
    },
    "SYS.LCR$_DDL_RECORD": {
        **_LCR_COMMON, "GET_OBJECT_TYPE": (0, 0, "CHAR"), "GET_DDL_TEXT": (0, 0, "CHAR"),
        "GET_LOGON_USER": (0, 0, "CHAR"), "GET_CURRENT_SCHEMA": (0, 0, "CHAR"),
        "GET_BASE_TABLE_OWNER": (0, 0, "CHAR"), "GET_BASE_TABLE_NAME": (0, 0, "CHAR"),
    },
    "SYS.ANYDATA": {
        "ACCESSNUMBER": (0, 0, "NUMBER"), "ACCESSVARCHAR2": (0, 0, "CHAR"),
        "ACCESSCHAR": (0, 0, "CHAR"), "ACCESSNVARCHAR2": (0, 0, "CHAR"),
        "ACCESSNCHAR": (0, 0, "CHAR"), "ACCESSCLOB": (0, 0, "CHAR"),
        "ACCESSDATE": (0, 0, "DATE"), "ACCESSTIMESTAMP": (0, 0, "DATE"),
        "ACCESSRAW": (0, 0, "BINARY"), "ACCESSBLOB": (0, 0, "BINARY"),
        "ACCESSBFLOAT": (0, 0, "NUMBER"), "ACCESSBDOUBLE": (0, 0, "NUMBER"),
        "GETTYPENAME": (0, 0, "CHAR"),
    },
}

_RESULTS = {
    **dict.fromkeys("UPPER LOWER INITCAP SUBSTR TRIM LTRIM RTRIM LPAD RPAD REPLACE CONCAT "
                    "TO_CHAR RAWTOHEX".split(), "CHAR"),
    **dict.fromkeys("LENGTH INSTR ABS MOD ROUND FLOOR CEIL SIGN TO_NUMBER".split(), "NUMBER"),
    **dict.fromkeys("TO_DATE SYSDATE SYSTIMESTAMP".split(), "DATE"),
    "HEXTORAW": "BINARY",
    **{name: "NUMBER" for name in FUNCTIONS if name.startswith("DBMS_STREAMS.COMPATIBLE_")},
}
_DATATYPE_FAMILY = {
    **dict.fromkeys(("VARCHAR2", "NVARCHAR2", "CHAR", "NCHAR", "CLOB", "NCLOB"), "CHAR"),
    **dict.fromkeys(("NUMBER", "FLOAT", "BINARY_FLOAT", "BINARY_DOUBLE"), "NUMBER"),
    **dict.fromkeys(("DATE", "TIMESTAMP", "TIMESTAMP WITH TIME ZONE",
                     "TIMESTAMP WITH LOCAL TIME ZONE"), "DATE"),
    **dict.fromkeys(("RAW", "BLOB"), "BINARY"),
}


def static_type_of_datatype(kind: str) -> str | None:
    """The family of a parsed datatype kind (``AttrType.kind``), None if unknown."""
    return _DATATYPE_FAMILY.get(kind)


def _name(t: Any) -> str:
    return t if isinstance(t, str) else getattr(t, "qualified_name", "UNKNOWN")


class _Checker:
    def __init__(self, variables: Mapping[str, Any], aliases: Sequence[str]) -> None:
        self.variables = variables
        self.aliases = tuple(aliases)

    # -- conditions ------------------------------------------------------------------
    def condition(self, node: Expr) -> None:
        match node:
            case And(terms) | Or(terms):
                for term in terms:
                    self.condition(term)
            case Not(operand):
                self.condition(operand)
            case Compare(_, left, right):
                self.comparable(left, right)
            case IsNull(operand, _):
                self.value(operand)
            case Like(operand, pattern, escape, _):
                for part in (operand, pattern, escape):
                    if part is not None:
                        self.scalar(part)
            case InList(operand, items, _):
                for item in items:
                    self.comparable(operand, item)
            case Between(operand, low, high, _):
                self.comparable(operand, low)
                self.comparable(operand, high)
            case Exists(inner):
                if inner is not None:
                    self.condition(inner)

    def comparable(self, left: Expr, right: Expr) -> None:
        a, b = self.value(left), self.value(right)
        if a is None or b is None:
            return
        for t in (a, b):
            if t not in SCALARS:
                raise ora(932, _name(b if t is a else a), _name(t))
        if a == b:
            return
        if a == "CHAR" or b == "CHAR":
            text_node, other = (left, b) if a == "CHAR" else (right, a)
            if isinstance(text_node, Literal) and text_node.value is not None:
                _convert_literal(text_node.value, other)  # ORA-01722 & co. now, not per message
            return
        raise ora(932, a, b)

    # -- values --------------------------------------------------------------------------
    def scalar(self, node: Expr) -> Any:
        t = self.value(node)
        if t is not None and t not in SCALARS:
            raise ora(932, "CHAR", _name(t))
        return t

    def value(self, node: Expr) -> Any:
        match node:
            case Literal(value):
                if value is None:
                    return None
                return "CHAR" if isinstance(value, str) else "NUMBER"
            case Bind(name):
                if name not in self.variables:
                    raise ora(904, f'"{name}"')
                return self.variables[name]
            case Identifier((name,)) if name in NILADIC:
                return "DATE"
            case Identifier(path):
                return self.column(path)
            case Attribute(obj, name, _):
                return self.attribute(self.value(obj), name)
            case MethodCall(obj, name, _, args):
                owner = self.value(obj)
                arg_types = [self.scalar(a) for a in args]
                return self.member(owner, name, len(arg_types))
            case FuncCall(name, args):
                return self.function(name, args)
            case Unary(_, operand):
                self.arithmetic(operand)
                return "NUMBER"
            case Binary("||", left, right):
                self.scalar(left)
                self.scalar(right)
                return "CHAR"
            case Binary(op, left, right):
                a, b = self.arithmetic(left), self.arithmetic(right)
                if "DATE" in (a, b):
                    return "NUMBER" if (a, b, op) == ("DATE", "DATE", "-") else "DATE"
                return "NUMBER"
        raise ora(936)

    def arithmetic(self, node: Expr) -> Any:
        t = self.scalar(node)
        if t == "BINARY":
            raise ora(932, "NUMBER", "BINARY")
        if t == "CHAR" and isinstance(node, Literal):
            _convert_literal(node.value, "NUMBER")
        return t

    def column(self, path: tuple[str, ...]) -> Any:
        """``alias.column[.attr…]`` or, with one table alias, a bare ``column``."""
        if path[0] in self.aliases:
            if len(path) == 1:
                raise ora(904, f'"{path[0]}"')
            return None  # Sluice knows no table's columns: checked when evaluated
        if len(self.aliases) > 1:
            raise ora(918)
        if not self.aliases:
            raise ora(904, f'"{".".join(path)}"')
        return None

    def attribute(self, owner: Any, name: str) -> Any:
        if owner is None:
            return None
        attrs = getattr(owner, "attributes", None)
        if attrs is None:
            raise ora(904, f'"{name}"')  # scalars, LCRs and ANYDATA have no attributes
        for attr in attrs:
            if attr.name == name or attr.name.upper() == name.upper():
                if attr.type is not None and hasattr(attr.type, "attributes"):
                    return attr.type
                return static_type_of_datatype(attr.datatype.kind)
        raise ora(904, f'"{name}"')

    def member(self, owner: Any, name: str, nargs: int) -> Any:
        if owner is None:
            return None
        members = MEMBERS.get(owner) if isinstance(owner, str) else None
        signature = members.get(name.upper()) if members else None
        if signature is None:
            raise ora(904, f'"{name}"')
        low, high, result = signature
        if nargs < low:
            raise ora(938)
        if nargs > high:
            raise ora(939)
        return result

    def function(self, name: tuple[str, ...], args: tuple[Expr, ...]) -> Any:
        qualified = ".".join(name)
        builtin = FUNCTIONS.get(qualified)
        if builtin is None:
            if len(name) == 1:
                raise ora(904, f'"{qualified}"')
            # tab.col.method(): a member of a table column, whose type is not known
            self.column(name[:-1])
            for arg in args:
                self.scalar(arg)
            return None
        if len(args) < builtin.min_args:
            raise ora(938)
        if builtin.max_args is not None and len(args) > builtin.max_args:
            raise ora(939)
        for arg in args:
            self.scalar(arg)
        if builtin.kind == "strict" and args and all(
                isinstance(a, Literal) and a.value is not None for a in args):
            builtin.impl(*(a.value for a in args))  # HEXTORAW('0G'): ORA-01465 now, not per message
        return _RESULTS.get(qualified)


def _convert_literal(text: str, family: str) -> None:
    if family == "NUMBER":
        to_number(text)
    elif family == "DATE":
        to_date(text)
    elif family == "BINARY":
        hextoraw(text)


def check_condition(tree: Expr, variables: Mapping[str, Any], aliases: Sequence[str] = ()) -> None:
    """Raise the Oracle error for the first problem in ``tree``.

    ``variables`` maps each variable name of the evaluation context (canonical)
    to its static type; ``aliases`` are its table aliases.
    """
    _Checker(variables, aliases).condition(tree)
