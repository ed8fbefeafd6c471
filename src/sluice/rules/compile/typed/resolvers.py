"""Resolvers for the typed targets: names -> IR.

:class:`MappingResolver` serves plain tables (a queue table's columns, a JSON
payload); :class:`sluice.rules.compile.typed.lcrschema.LcrResolver` serves LCR member calls
and hands everything else to one of these.
"""

from __future__ import annotations

from ....errors import ora
from ...lang.ast import Attribute, Bind, Identifier, Value
from . import ir
from .ir import NULL, Node

__all__ = ["MappingResolver"]


class MappingResolver:
    """Names -> IR from a table, for SQL and Spark targets.

    ``names`` maps a dotted upper-case name to an IR node or a ``(column,
    kind)`` pair: ``"PRIORITY"``, ``"TAB.USER_DATA.PRICE"``, ``":MSG.REGION"``
    (binds start with ':').  An unknown identifier is ORA-00904.  A variable
    that is not in the table at all is NULL (seed 000, "Rule Conditions with
    Undefined Variables"); an unknown attribute of a known variable is
    ORA-00904, or NULL for the variables in ``open_binds`` (mapping / JSON
    payloads, where an attribute the client did not send is NULL).  Member
    calls are not compilable here.
    """

    def __init__(self, names: dict[str, Node | tuple[str, str]], open_binds: tuple[str, ...] = ()) -> None:
        self.names = {k.upper(): v if isinstance(v, Node) else ir.Column(v[1], v[0])
                      for k, v in names.items()}
        self.binds = {k.split(".")[0] for k in self.names if k.startswith(":")}
        self.open_binds = {":" + b.upper().lstrip(":") for b in open_binds}

    def reference(self, node: Value) -> Node:
        key = _dotted(node)
        found = self.names.get(key)
        if found is not None:
            return found
        if key.startswith(":"):
            head = key.split(".")[0]
            if head not in self.binds or head in self.open_binds:
                return NULL
        raise ora(904, ".".join(f'"{p}"' for p in key.lstrip(":").split(".")))


def _dotted(node: Value) -> str:
    match node:
        case Identifier(path):
            return ".".join(path).upper()
        case Bind(name):
            return ":" + name.upper()
        case Attribute(obj, name, _):
            return _dotted(obj) + "." + name.upper()
    raise ir.NotCompilable("member calls need the Python compiler")
