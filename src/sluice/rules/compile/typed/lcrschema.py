"""The columnar shape of an LCR, and the resolver that maps LCR member calls onto it.

Rule conditions read LCRs through member functions (``:dml.get_object_owner()``,
``:dml.get_value('NEW', '"REGION_ID"').AccessNumber()``).  The Python compiler
calls them on LCR objects (:mod:`sluice.streams.lcr`); the Spark pipeline, and
SQL when LCRs are staged in a table, hold LCRs as rows of this one schema --
:func:`lcr_row` converts an LCR object to one -- and :class:`LcrResolver` turns
each supported call into a column expression::

    column                type (Spark / SQL)          member function
    lcr_kind              string / text   'ROW'|'DDL'  (which variable it binds: :dml or :ddl)
    source_database_name  string / text                get_source_database_name()
    command_type          string / text                get_command_type()
    object_owner          string / text                get_object_owner()
    object_name           string / text                get_object_name()
    object_type           string / text                get_object_type()      (DDL)
    base_table_owner      string / text                get_base_table_owner() (DDL)
    base_table_name       string / text                get_base_table_name()  (DDL)
    tag                   binary / BLOB|bytea          get_tag(), is_null_tag()
    transaction_id        string / text                get_transaction_id()
    scn                   decimal(38,0) / numeric      get_scn()
    commit_scn            decimal(38,0) / numeric      get_commit_scn()
    compatible            int / integer                get_compatible()
    old_values            map<string,string> / JSON    get_value('OLD', col)
    new_values            map<string,string> / JSON    get_value('NEW', col)
    old_types             map<string,string> / JSON    the ANYDATA type of each old value
    new_types             map<string,string> / JSON    ... and of each new value

``old_values`` / ``new_values`` map a column name (Oracle's spelling, normally
upper case) to its value *as text*: numbers in TO_CHAR form, dates in ISO form
(``2024-01-15 10:30:00[.ffffff]``), RAW as upper-case hex; NULL for a column
carried with a NULL value.  ``*_types`` give each column's ANYDATA type name
(``SYS.NUMBER``, ``SYS.VARCHAR2``, ``SYS.DATE``, ``SYS.RAW`` ...; NULL for an
untyped NULL).  In SQL the four maps are JSON objects of strings.

Member semantics follow :class:`sluice.streams.lcr.RowLCR`: ``get_value`` IS
NULL when the LCR does not carry the column; ``get_value('NEW', c)`` of an
UPDATE falls back to the old value of a column the update did not change;
``AccessNumber()`` / ``AccessVarchar2()`` (and the CHAR, NCHAR, NVARCHAR2 forms)
/ ``AccessDate()`` / ``AccessTimestamp()`` / ``AccessRaw()`` read the value
when its type is of that family and raise ORA-22626 otherwise (so the rule is
NULL); without a type (``*_types`` NULL) they read the text as that family.

A row LCR binds ``:dml``, a DDL LCR binds ``:ddl``; the other variable is NULL
(undefined variables are NULL for Streams clients, seed 000).  ``:lcr`` binds
either.  Any other variable goes to ``others`` (a resolver for user message
variables) or is NULL.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from ....errors import ora
from ...lang.ast import Bind, Literal, MethodCall, Value
from . import ir
from .ir import NULL, Column, Const, Node
from .lower import TargetResolver

__all__ = ["LCR_COLUMNS", "LcrResolver", "spark_schema", "sql_columns", "lcr_row", "value_text"]

# column -> (kind, Spark type, SQL type)
LCR_COLUMNS: dict[str, tuple[str, str, str]] = {
    "lcr_kind": ("CHAR", "string", "TEXT"),
    "source_database_name": ("CHAR", "string", "TEXT"),
    "command_type": ("CHAR", "string", "TEXT"),
    "object_owner": ("CHAR", "string", "TEXT"),
    "object_name": ("CHAR", "string", "TEXT"),
    "object_type": ("CHAR", "string", "TEXT"),
    "base_table_owner": ("CHAR", "string", "TEXT"),
    "base_table_name": ("CHAR", "string", "TEXT"),
    "tag": ("RAW", "binary", "BLOB"),
    "transaction_id": ("CHAR", "string", "TEXT"),
    "scn": ("NUMBER", "decimal(38,0)", "NUMERIC"),
    "commit_scn": ("NUMBER", "decimal(38,0)", "NUMERIC"),
    "compatible": ("NUMBER", "int", "INTEGER"),
    "old_values": ("MAP", "map<string,string>", "TEXT"),
    "new_values": ("MAP", "map<string,string>", "TEXT"),
    "old_types": ("MAP", "map<string,string>", "TEXT"),
    "new_types": ("MAP", "map<string,string>", "TEXT"),
}

_ACCESSORS = {
    "GET_SOURCE_DATABASE_NAME": "source_database_name", "GET_COMMAND_TYPE": "command_type",
    "GET_OBJECT_OWNER": "object_owner", "GET_OBJECT_NAME": "object_name",
    "GET_OBJECT_TYPE": "object_type", "GET_BASE_TABLE_OWNER": "base_table_owner",
    "GET_BASE_TABLE_NAME": "base_table_name", "GET_TAG": "tag",
    "GET_TRANSACTION_ID": "transaction_id", "GET_SCN": "scn", "GET_COMMIT_SCN": "commit_scn",
    "GET_COMPATIBLE": "compatible",
}
# member -> (ANYDATA family, types of that family, how the text becomes the value)
_FAMILIES = {
    "NUMBER": ("SYS.NUMBER", "SYS.BINARY_FLOAT", "SYS.BINARY_DOUBLE"),
    "CHAR": ("SYS.VARCHAR2", "SYS.CHAR", "SYS.NVARCHAR2", "SYS.NCHAR", "SYS.CLOB"),
    "DATE": ("SYS.DATE", "SYS.TIMESTAMP"), "RAW": ("SYS.RAW", "SYS.BLOB"),
}
_ACCESS = {"ACCESSNUMBER": "NUMBER", "ACCESSBFLOAT": "NUMBER", "ACCESSBDOUBLE": "NUMBER",
           "ACCESSVARCHAR2": "CHAR", "ACCESSCHAR": "CHAR", "ACCESSNVARCHAR2": "CHAR",
           "ACCESSNCHAR": "CHAR", "ACCESSCLOB": "CHAR", "ACCESSDATE": "DATE",
           "ACCESSTIMESTAMP": "DATE", "ACCESSRAW": "RAW", "ACCESSBLOB": "RAW"}
_VARIABLES = {"DML": "ROW", "DDL": "DDL", "LCR": None}


def spark_schema() -> Any:
    """The ``StructType`` of an LCR DataFrame."""
    from pyspark.sql import types as T

    # built here, not parsed from the strings: parsing needs a running JVM
    types = {"string": T.StringType(), "binary": T.BinaryType(), "int": T.IntegerType(),
             "decimal(38,0)": T.DecimalType(38, 0),
             "map<string,string>": T.MapType(T.StringType(), T.StringType())}
    schema = T.StructType()
    for name, (_, spark_type, _) in LCR_COLUMNS.items():
        schema.add(name, types[spark_type])
    return schema


def sql_columns(dialect: str = "sqlite") -> str:
    """Column definitions for an LCR staging table (``CREATE TABLE t (...)``)."""
    bytes_type = "BLOB" if dialect == "sqlite" else "BYTEA"
    return ", ".join(f"{name} {bytes_type if sql_type == 'BLOB' else sql_type}"
                     for name, (_, _, sql_type) in LCR_COLUMNS.items())


class LcrResolver:
    """LCR member calls -> columns of :data:`LCR_COLUMNS` (see the module docstring).

    ``guard=False`` drops the ``lcr_kind`` check when every row is known to be
    bound to the variable the rules use (a DataFrame of row LCRs only).
    ``prefix`` qualifies column names (``"t."``).
    """

    def __init__(self, others: TargetResolver | None = None, guard: bool = True, prefix: str = "") -> None:
        self.others = others
        self.guard = guard
        self.prefix = prefix

    def column(self, name: str) -> Node:
        return Column(LCR_COLUMNS[name][0], self.prefix + name)

    def _guarded(self, variable: str, node: Node) -> Node:
        kind = _VARIABLES[variable]
        if kind is None or not self.guard:
            return node
        is_kind = ir.op("cmp", "BOOL", self.column("lcr_kind"), Const("CHAR", kind), extra=("=",))
        return ir.case([(is_kind, node)], Const(node.kind, None), node.kind)

    def reference(self, node: Value) -> Node | tuple[Node, Node | None]:
        root = node
        while isinstance(root, MethodCall) or hasattr(root, "obj"):
            root = root.obj  # type: ignore[union-attr]
        if not (isinstance(root, Bind) and root.name.upper() in _VARIABLES):
            if self.others is not None:
                return self.others.reference(node)
            if isinstance(root, Bind):
                return NULL  # an undefined variable
            raise ora(904, '"' + ".".join(getattr(root, "path", ("?",))) + '"')
        variable = root.name.upper()
        if node is root:
            raise ir.NotCompilable("an LCR used as a value")
        if not isinstance(node, MethodCall):
            raise ir.NotCompilable("an attribute of an LCR")
        return self._member(variable, node)

    def _member(self, variable: str, call: MethodCall) -> Node | tuple[Node, Node | None]:
        name = call.name.upper()
        if isinstance(call.obj, Bind):
            if call.args:
                if name == "GET_VALUE":
                    present, text, _ = self._get_value(variable, call)
                    return ir.Op("ANYDATA", "anydata", (present, text))
                raise ir.NotCompilable(f"LCR member {call.spelled}")
            if name == "IS_NULL_TAG":
                tag = ir.op("nullif_empty", "RAW", self.column("tag"))  # an empty RAW is NULL
                return self._guarded(variable, ir.case([(ir.is_null(tag), Const("CHAR", "Y"))],
                                                       Const("CHAR", "N"), "CHAR"))
            if name in _ACCESSORS:
                return self._guarded(variable, self.column(_ACCESSORS[name]))
            raise ir.NotCompilable(f"LCR member {call.spelled}")
        inner = call.obj
        family = _ACCESS.get(name)
        if (family and not call.args and isinstance(inner, MethodCall) and isinstance(inner.obj, Bind)
                and inner.name.upper() == "GET_VALUE"):
            _, text, type_name = self._get_value(variable, inner)
            value = {"NUMBER": lambda: ir.op("num_of_char", "NUMBER", text),
                     "CHAR": lambda: text,
                     "DATE": lambda: ir.op("date_of_iso", "DATE", text),
                     "RAW": lambda: ir.op("raw_of_char", "RAW", ir.op("nullif_empty", "CHAR", text))}[family]()
            # ORA-22626 when the value is typed and of another family
            of_family = ir.or_(*(ir.op("cmp", "BOOL", type_name, Const("CHAR", t), extra=("=",))
                                 for t in _FAMILIES[family]))
            wrong = ir.and_(ir.is_not_null(type_name), ir.not_(ir.is_true(of_family)))
            return value, wrong
        raise ir.NotCompilable(f"member call {call.spelled} on an LCR value")

    def _get_value(self, variable: str, call: MethodCall) -> tuple[Node, Node, Node]:
        """(the column is carried, its text, its type name) for get_value(which, column)."""
        args = call.args
        if len(args) < 2 or not all(isinstance(a, Literal) and isinstance(a.value, str) for a in args[:2]):
            raise ir.NotCompilable("get_value with run-time arguments")
        which, column = args[0].value.upper(), args[1].value
        use_old = args[2].value.upper() if len(args) > 2 and isinstance(args[2], Literal) and args[2].value else "Y"
        if which not in ("OLD", "NEW") or len(args) > 3 or use_old not in ("Y", "N"):
            raise ir.NotCompilable(f"get_value({which!r}, ...)")
        # Oracle names: '"Region_Id"' is exact, 'region_id' means REGION_ID
        key = column[1:-1] if column.startswith('"') and column.endswith('"') else column.upper()

        def read(side: str) -> tuple[Node, Node, Node]:
            values = self._guarded(variable, self.column(side + "_values"))
            types = self._guarded(variable, self.column(side + "_types"))
            return (ir.op("map_has", "BOOL", values, extra=(key,)), ir.op("map_get", "CHAR", values, extra=(key,)),
                    ir.op("map_get", "CHAR", types, extra=(key,)))

        if which == "OLD" or use_old == "N":
            return read(which.lower())
        # NEW of an UPDATE: a column the update did not change has its old value (RowLCR._unit)
        new, old = read("new"), read("old")
        is_update = ir.is_true(ir.op("cmp", "BOOL", self.column("command_type"), Const("CHAR", "UPDATE"),
                                     extra=("=",)))
        fallback = ir.and_(ir.not_(new[0]), is_update)
        present = ir.or_(new[0], ir.and_(fallback, old[0]))
        text = ir.case([(fallback, old[1])], new[1], "CHAR")
        type_name = ir.case([(fallback, old[2])], new[2], "CHAR")
        return present, text, type_name


def value_text(value: Any) -> str | None:
    """An LCR column value as the schema's text (see the module docstring)."""
    from ....sqlfunctions import number_text

    if value is None or isinstance(value, str):
        return value or None
    if isinstance(value, bool):
        raise TypeError("BOOLEAN is no column type")
    if isinstance(value, (int, float, Decimal)):
        return number_text(value)
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day).isoformat(sep=" ")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex().upper() or None
    raise TypeError(f"an LCR column of {type(value).__name__} has no text form")


def lcr_row(lcr: Any) -> dict[str, Any]:
    """One row of :data:`LCR_COLUMNS` for an LCR object (:mod:`sluice.streams.lcr`'s or alike)."""
    is_row = hasattr(lcr, "get_values")
    member = (lambda name: getattr(lcr, name)() if hasattr(lcr, name) else None)
    row: dict[str, Any] = {"lcr_kind": "ROW" if is_row else "DDL"}
    for method, column in _ACCESSORS.items():
        row[column] = member(method.lower())
    for column in ("scn", "commit_scn"):
        row[column] = None if row[column] is None else Decimal(row[column])
    for side in ("old", "new"):
        units = lcr.get_values(side.upper(), "N") if is_row else []
        row[side + "_values"] = {u.column_name: value_text(u.data.value) for u in units} if is_row else None
        row[side + "_types"] = {u.column_name: u.data.get_type_name() for u in units} if is_row else None
    return row
